//! `list_concepts` (spec/surface.md §12.3, README R37, R40).
//!
//! Pure checks first (temporal profile, `as_of`), then `bundle_path`, one capture, and the
//! projection of every concept. A document that cannot be parsed never fails the tool: its
//! entry carries `parse_error`.

use crate::envelope::{codes, Diagnostic, ToolError};
use crate::okf::bundle::parse_bundle;
use crate::okf::project;
use crate::okf::temporal::DATE_PROFILE;
use crate::okf::version;
use crate::tools::common::{as_of_arg, capture_bundle, profile_arg, str_arg};
use crate::tools::def::checked_in;
use crate::tools::describe::{input_errors, retryable_note};
use crate::tools::schema_parts::{
    as_of_prop, boolean, card_props, closed, count, input_root, nullable_string, output_root,
    profile_branches, r, temporal_profile_prop, SchemaRoot, EXAMPLE_BUNDLE_PATH,
};
use crate::tools::Ctx;
use crate::tools::Success;
use crate::tools::ToolSpec;
use serde_json::{json, Map, Value};

/// `list_concepts` as registered (spec/surface.md §2, §12.3; annotations spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "list_concepts",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("list_concepts", "input"),
    output_schema: checked_in!("list_concepts", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    run,
};

/// Most concepts one listing may return (spec/surface.md §11).
pub const MAX_CONCEPTS: usize = 10_000;

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = concat!(
    "Use first to discover what an OKF bundle contains: lists every concept (a non-reserved .md file with a canonical id) with its card: id, path, type, title, description, tags, status, trust tier, staleness, generated_at, source count, computation summary and legacy fallbacks, plus the bundle's version resolution. Read-only; never writes, never opens .okf/. ",
    "Use read_concept instead for one concept's bytes and full projection, validate_bundle for conformance findings. ",
    "Inputs: bundle_path (absolute path of the bundle root), optional temporal_profile (\"date-3fcbb9f\" default or \"instant-0b87c52\") and as_of (YYYY-MM-DD under the date profile, an offset datetime under the instant profile; without it staleness is null, the wall clock is never used). ",
    "Limits: at most 10,000 concepts (more gives resource_limit; use a smaller bundle). ",
    "A concept whose document cannot be parsed never makes this tool fail: its entry has parse_error set (invalid_encoding, unterminated_frontmatter or invalid_frontmatter) and every other member null, empty or false; repair it with write_concept. ",
    "Errors:",
    input_errors!(),
    retryable_note!(),
    " Next step after success: read_concept on the concepts of interest, or preview_concept_patch to change metadata."
);

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

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/surface.md §2, §12.3).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "list_concepts",
        "Arguments of list_concepts (spec/surface.md §2, §12.3).",
        &["bundle_path"],
        vec![
            ("bundle_path", r("bundle_path")),
            ("temporal_profile", temporal_profile_prop()),
            ("as_of", as_of_prop()),
        ],
    );
    profile_branches(&mut m, true, false);
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "temporal_profile": DATE_PROFILE, "as_of": "2026-01-02"}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §12.3).
fn output_schema() -> SchemaRoot {
    output_root(
        "list_concepts",
        "Result of list_concepts (spec/surface.md §12.3).",
        list_success(),
    )
}

fn list_success() -> Value {
    let mut entry_props = card_props();
    entry_props.extend([
        ("generated_at", nullable_string()),
        ("source_count", count()),
        (
            "computation",
            closed(vec![
                ("present", boolean()),
                ("runtime", nullable_string()),
                ("executor", nullable_string()),
                ("attester", nullable_string()),
            ]),
        ),
        (
            "legacy_derived",
            closed(vec![("generated", boolean()), ("citations", boolean())]),
        ),
        (
            "parse_error",
            json!({
                "description": "Set when the concept's document cannot be parsed (spec/surface.md §13.1): the entry then has only id, path and parse_error set, every other member null, empty or false. list_concepts never fails for such a document; repair it with write_concept.",
                "type": ["string", "null"],
                "enum": ["invalid_encoding", "unterminated_frontmatter", "invalid_frontmatter", null]
            }),
        ),
    ]);
    // status_state is null only in the entry of an unparseable concept (spec/surface.md §12.3).
    let mut entry = closed(entry_props);
    if let Value::Object(m) = &mut entry {
        if let Some(Value::Object(p)) = m.get_mut("properties") {
            p.insert(
                "status_state".into(),
                json!({"anyOf": [r("status_state"), {"type": "null"}]}),
            );
        }
        m.insert(
            "if".into(),
            json!({"properties": {"parse_error": {"type": "null"}}, "additionalProperties": true}),
        );
        m.insert(
            "then".into(),
            json!({"properties": {"status_state": {"type": "object"}}, "additionalProperties": true}),
        );
        m.insert(
            "else".into(),
            json!({
                "properties": {
                    "type": {"type": "null"},
                    "title": {"type": "null"},
                    "description": {"type": "null"},
                    "tags": {"const": []},
                    "status": {"type": "null"},
                    "trust": {"const": "unverified"},
                    "stale": {"type": "null"},
                    "stale_after": {"type": "null"},
                    "status_state": {"type": "null"},
                    "generated_at": {"type": "null"},
                    "source_count": {"const": 0},
                    "computation": {"const": {"present": false, "runtime": null, "executor": null, "attester": null}},
                    "legacy_derived": {"const": {"generated": false, "citations": false}}
                },
                "additionalProperties": true
            }),
        );
    }
    closed(vec![
        ("version", r("version")),
        ("version_declaration", r("version_declaration")),
        ("temporal_profile", r("temporal_profile_id")),
        ("as_of", nullable_string()),
        (
            "concepts",
            json!({"type": "array", "maxItems": 10000, "items": entry}),
        ),
    ])
}
