//! `read_concept` (spec/surface.md §12.4, §12.6, README R37).
//!
//! Pure checks first (temporal profile, canonical `concept_id`), then `bundle_path`, one
//! capture, and the projection of the one requested concept. Only a parse failure of that
//! concept's own document fails the call.

use crate::envelope::{codes, Diagnostic, ToolError};
use crate::okf::grammar::DocClass;
use crate::okf::project;
use crate::tools::common::{concept_id_arg, insert_profile, parse_failure, str_arg, ReadProfile};
use crate::tools::def::checked_in;
use crate::tools::read;
use crate::tools::schema_parts::{
    boolean, closed, concept_id_prop, input_root, nullable_string, output_root, r, status_enum,
    string_array, temporal_profile_prop, trust_enum, SchemaRoot, EXAMPLE_BUNDLE_PATH,
    EXAMPLE_CONCEPT_ID,
};
use crate::tools::Ctx;
use crate::tools::Success;
use crate::tools::ToolSpec;
use serde_json::{json, Map, Value};

/// `read_concept` as registered (spec/surface.md §2, §12.4; annotations spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "read_concept",
    title: "Read a concept",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("read_concept", "input"),
    output_schema: checked_in!("read_concept", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to inspect one concept: the exact file bytes (second text item) and its verbatim frontmatter_yaml and body with a typed projection (sources, generated, verified, trust, status, stale_after, computation). concept_not_found: find the id with list_concepts. Next: preview_concept_patch for a metadata change.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` / `resource_limit` for a non-canonical id, `concept_not_found`,
/// `operation_rejected` for a parse failure of the requested document, capture errors.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let temporal = ReadProfile::from_args(&args)?;
    let id = str_arg(&args, "concept_id").to_owned();
    concept_id_arg(&id)?;
    let bundle_path = str_arg(&args, "bundle_path").to_owned();
    let capture = read::open(&bundle_path, ctx)?;
    let bundle = read::parse(&capture, None)?;
    let (resolution, _) = temporal.resolve(&capture)?;
    let profile = resolution.profile;
    let path = format!("{id}.md");
    let Some(doc) = bundle
        .doc(&path)
        .filter(|d| matches!(&d.class, DocClass::Concept(c) if *c == id))
    else {
        return Err(
            ToolError::new(codes::CONCEPT_NOT_FOUND, "no concept with that id exists")
                .with_diagnostic(Diagnostic::recovery(
                    "concept_id",
                    "Find a current id with list_concepts (its type, tag and status filters narrow the list).",
                )),
        );
    };
    let parsed = match doc.parsed() {
        Ok(p) => p,
        Err(f) => {
            let mut e = parse_failure(&[(path.as_str(), f.code())]);
            // spec/surface.md §18.3 rule 3: where the YAML goes wrong, when the bytes are at
            // hand (a spilled capture file is never read here).
            if doc.file.is_resident() {
                let at = crate::okf::validate::parse_position(doc.file.bytes());
                if let Some(d) = e.diagnostics.first_mut() {
                    d.message.push_str(&at);
                }
            }
            return Err(e);
        }
    };
    let Some((projection, legacy)) = project::read_projection(doc, profile) else {
        return Err(parse_failure(&[(path.as_str(), "operation_rejected")]));
    };
    let (decl, ver) = read::version(&bundle);
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("path".into(), json!(path));
    read::insert_version(&mut m, &decl, &ver);
    insert_profile(&mut m, &resolution);
    m.insert(
        "frontmatter_yaml".into(),
        json!(parsed.split.frontmatter_text().unwrap_or_default()),
    );
    m.insert("body".into(), json!(parsed.split.body_text()));
    m.insert("projection".into(), projection);
    m.insert("legacy_fallback".into(), legacy);
    Ok(Success::with_second_text(
        Value::Object(m),
        parsed.split.text.to_owned(),
    ))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/surface.md §2, §12.4).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "read_concept",
        "Arguments of read_concept (spec/surface.md §2, §12.4).",
        &["bundle_path", "concept_id"],
        vec![
            ("bundle_path", r("bundle_path")),
            ("concept_id", concept_id_prop()),
            ("temporal_profile", temporal_profile_prop()),
        ],
    );
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "concept_id": EXAMPLE_CONCEPT_ID}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §12.4).
fn output_schema() -> SchemaRoot {
    output_root(
        "read_concept",
        "Result of read_concept (spec/surface.md §12.4).",
        read_success(),
    )
}

fn window_or_null() -> Value {
    let mut w = closed(vec![
        ("from", json!({"type": "string"})),
        ("to", json!({"type": "string"})),
    ]);
    if let Value::Object(m) = &mut w {
        m.insert("type".into(), json!(["object", "null"]));
    }
    w
}

fn read_success() -> Value {
    let source = closed(vec![
        ("id", nullable_string()),
        ("resource", json!({"type": "string"})),
        ("title", nullable_string()),
        ("author", nullable_string()),
        (
            "usage_count",
            json!({"type": ["integer", "null"], "minimum": 0}),
        ),
        ("last_modified", nullable_string()),
        ("usage_window", window_or_null()),
    ]);
    let attribution = closed(vec![
        ("label", json!({"type": "string"})),
        ("source_id", nullable_string()),
        ("count", json!({"type": "integer", "minimum": 1})),
    ]);
    let mut generated = closed(vec![
        ("by", json!({"type": "string"})),
        ("at", nullable_string()),
    ]);
    if let Value::Object(m) = &mut generated {
        m.insert("type".into(), json!(["object", "null"]));
    }
    let verified_event = closed(vec![
        ("by", json!({"type": "string"})),
        ("at", json!({"type": "string"})),
    ]);
    let parameter = closed(vec![
        ("name", json!({"type": "string"})),
        ("type", json!({"type": "string"})),
        ("required", boolean()),
    ]);
    let mut executor = closed(vec![
        ("resource", json!({"type": "string"})),
        ("receipt", string_array(10000)),
    ]);
    if let Value::Object(m) = &mut executor {
        m.insert("type".into(), json!(["object", "null"]));
    }
    let mut attester = closed(vec![("resource", json!({"type": "string"}))]);
    if let Value::Object(m) = &mut attester {
        m.insert("type".into(), json!(["object", "null"]));
    }
    let computation = closed(vec![
        ("present", boolean()),
        ("runtime", nullable_string()),
        (
            "parameters",
            json!({"type": "array", "maxItems": 10000, "items": parameter}),
        ),
        ("computation_path", nullable_string()),
        ("inline", boolean()),
        ("executor", executor),
        ("attester", attester),
    ]);
    let projection = closed(vec![
        ("type", nullable_string()),
        ("title", nullable_string()),
        ("description", nullable_string()),
        ("resource", nullable_string()),
        ("tags", string_array(10000)),
        (
            "sources",
            json!({"type": "array", "maxItems": 10000, "items": source}),
        ),
        (
            "attributions",
            json!({"type": "array", "maxItems": 10000, "items": attribution}),
        ),
        ("usage_window", window_or_null()),
        ("generated", generated),
        (
            "verified",
            json!({"type": "array", "maxItems": 10000, "items": verified_event}),
        ),
        ("trust", trust_enum()),
        ("status", status_enum()),
        ("status_state", r("status_state")),
        ("stale_after", nullable_string()),
        ("computation", computation),
    ]);
    closed(vec![
        ("id", json!({"type": "string"})),
        ("path", r("bundle_relative_path")),
        ("version", r("version")),
        ("version_declaration", r("version_declaration")),
        ("temporal_profile", r("temporal_profile_id")),
        ("temporal_profile_source", r("temporal_profile_source")),
        ("frontmatter_yaml", json!({"type": "string"})),
        ("body", json!({"type": "string"})),
        ("projection", projection),
        (
            "legacy_fallback",
            closed(vec![
                ("generated_from_timestamp", boolean()),
                ("sources_from_citations", boolean()),
            ]),
        ),
    ])
}
