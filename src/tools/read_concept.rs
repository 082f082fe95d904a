//! `read_concept` (spec/surface.md §12.4, §12.6, README R37).
//!
//! Pure checks first (temporal profile, canonical `concept_id`), then `bundle_path`, one
//! capture, and the projection of the one requested concept. Only a parse failure of that
//! concept's own document fails the call.

use crate::envelope::{codes, Diagnostic, ToolError};
use crate::okf::bundle::parse_bundle;
use crate::okf::grammar::DocClass;
use crate::okf::project;
use crate::okf::version;
use crate::tools::common::{capture_bundle, concept_id_arg, parse_failure, profile_arg, str_arg};
use crate::tools::Ctx;
use crate::tools::Success;
use serde_json::{json, Map, Value};

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` / `resource_limit` for a non-canonical id, `concept_not_found`,
/// `operation_rejected` for a parse failure of the requested document, capture errors.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let profile = profile_arg(&args)?;
    let id = str_arg(&args, "concept_id").to_owned();
    concept_id_arg(&id)?;
    let bundle_path = str_arg(&args, "bundle_path").to_owned();
    let capture = capture_bundle(&bundle_path, ctx)?;
    let bundle = parse_bundle(&capture).map_err(|f| f.to_tool_error())?;
    let path = format!("{id}.md");
    let Some(doc) = bundle
        .doc(&path)
        .filter(|d| matches!(&d.class, DocClass::Concept(c) if *c == id))
    else {
        return Err(
            ToolError::new(codes::CONCEPT_NOT_FOUND, "no concept with that id exists")
                .with_diagnostic(Diagnostic::recovery(
                    "concept_id",
                    "Find a current id with list_concepts or search_concepts.",
                )),
        );
    };
    let parsed = match doc.parsed() {
        Ok(p) => p,
        Err(f) => return Err(parse_failure(&[(path.as_str(), f.code())])),
    };
    let Some((projection, legacy)) = project::read_projection(doc, profile) else {
        return Err(parse_failure(&[(path.as_str(), "operation_rejected")]));
    };
    let decl = version::declaration(&bundle);
    let ver = version::resolve(&decl, None);
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("path".into(), json!(path));
    m.insert("version".into(), ver.to_json());
    m.insert("version_declaration".into(), decl.to_json());
    m.insert("temporal_profile".into(), json!(profile.id()));
    m.insert(
        "frontmatter_yaml".into(),
        json!(parsed.split.frontmatter_text().unwrap_or_default()),
    );
    m.insert("body".into(), json!(parsed.split.body_text()));
    m.insert("projection".into(), projection);
    m.insert("legacy_fallback".into(), legacy);
    Ok(Success::with_text(
        Value::Object(m),
        parsed.split.text.to_owned(),
    ))
}
