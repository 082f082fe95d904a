//! `list_concepts` (spec/surface.md §12.3, README R37, R40).
//!
//! Pure checks first (temporal profile, `as_of`), then `bundle_path`, one capture, and the
//! projection of every concept. A document that cannot be parsed never fails the tool: its
//! entry carries `parse_error`.

use crate::envelope::{codes, Diagnostic, ToolError};
use crate::okf::bundle::parse_bundle;
use crate::okf::project;
use crate::okf::version;
use crate::tools::common::{as_of_arg, capture_bundle, profile_arg, str_arg};
use crate::tools::Ctx;
use crate::tools::Success;
use serde_json::{json, Map, Value};

/// Most concepts one listing may return (spec/surface.md §11).
pub const MAX_CONCEPTS: usize = 10_000;

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (temporal profile, `as_of`, `bundle_path`, symlinks), capture and YAML
/// limits (`resource_limit`, `invalid_yaml_graph`), `operation_cancelled`.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let profile = profile_arg(&args)?;
    let as_of = as_of_arg(&args, profile)?;
    let bundle_path = str_arg(&args, "bundle_path").to_owned();
    let capture = capture_bundle(&bundle_path, ctx)?;
    let bundle = parse_bundle(&capture).map_err(|f| f.to_tool_error())?;
    let decl = version::declaration(&bundle);
    let ver = version::resolve(&decl, None);
    let mut concepts: Vec<(&str, Value)> = Vec::new();
    for (id, doc) in bundle.concepts() {
        if concepts.len() >= MAX_CONCEPTS {
            return Err(ToolError::new(
                codes::RESOURCE_LIMIT,
                "the bundle holds more than 10,000 concepts",
            )
            .with_diagnostic(Diagnostic::recovery("bundle_path", "Use a smaller bundle.")));
        }
        ctx.cancel.check()?;
        concepts.push((id, project::list_entry(id, doc, profile, as_of.as_deref())));
    }
    concepts.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let legacy: Vec<Value> = concepts
        .iter()
        .map(|(_, c)| json!({"id": c["id"], "type": c["type"], "title": c["title"], "path": c["path"]}))
        .collect();
    let mut m = Map::new();
    m.insert("version".into(), ver.to_json());
    m.insert("version_declaration".into(), decl.to_json());
    m.insert("temporal_profile".into(), json!(profile.id()));
    m.insert("as_of".into(), json!(as_of));
    m.insert(
        "concepts".into(),
        Value::Array(concepts.into_iter().map(|(_, v)| v).collect()),
    );
    Ok(Success::with_text(
        Value::Object(m),
        json!({ "concepts": legacy }).to_string(),
    ))
}
