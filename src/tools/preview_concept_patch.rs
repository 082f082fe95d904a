//! `preview_concept_patch` (spec/concept-patch.md §5.1, §6.1). Read-only: never writes,
//! never creates `.okf/`.

use crate::envelope::{Diagnostic, ToolError};
use crate::plan::patch::ops::parse_patch_request;
use crate::plan::stage::PlanStatus;
use crate::tools::concept_patch::patch_input_root;
use crate::tools::concept_patch::{insert_profile, ConceptPatch};
use crate::tools::def::checked_in;
use crate::tools::schema_parts::{
    boolean, closed, diagnostics_array, has_error, no_error, output_root, paths_array, r,
    status_branch, with, SchemaRoot,
};
use crate::tools::spine::{self, has_severity, state_violation, strictly_ascending};
use crate::tools::{text, Ctx, Success, ToolSpec};
use serde_json::{json, Value};

/// `preview_concept_patch` as registered (spec/concept-patch.md §5.1, §6.1; annotations
/// spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "preview_concept_patch",
    title: "Preview a concept patch",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("preview_concept_patch", "input"),
    output_schema: checked_in!("preview_concept_patch", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[crate::tools::concept_patch::OPERATIONS_EXAMPLE],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to rehearse a bounded metadata change; writes nothing. Operations run in order; kinds: set_generated, ensure_verification, remove_verification, put_source, remove_source, set_usage_window, set_lifecycle (an absent status or stale_after is kept, null removes it), put_attested_computation, set_bundle_version, set_metadata (type, title, description, tags). Returns status (applicable, noop, rejected), base_revision, plan_digest and the diff. Next, once approved: apply_concept_patch with the same arguments plus expected_revision = base_revision and expected_plan_digest = plan_digest.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The pure-check errors of spec/concept-patch.md §2.5, then `bundle_path` and capture errors,
/// `resource_limit` for more than 10,000 affected paths. Rejections are successes
/// (`status: "rejected"`).
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_patch_request(&args, false)?;
    let (plan, resolved) = spine::preview::<ConceptPatch>(&req, ctx)?;
    let req = resolved.unwrap_or(req);
    let applicable = plan.status == PlanStatus::Applicable;
    let affected: Vec<&str> = if applicable {
        plan.writes.paths().collect()
    } else {
        Vec::new()
    };
    let out = json!({
        "status": plan.status.as_str(),
        "base_revision": plan.base_revision,
        "result_revision": plan.result_revision,
        "plan_digest": plan.plan_digest,
        "diff": if applicable { plan.diff.text.as_str() } else { "" },
        "diff_truncated": applicable && plan.diff.truncated,
        "affected_paths": affected,
        "diagnostics": plan.diagnostics.iter().map(Diagnostic::to_wire).collect::<Vec<_>>(),
        "unknown_preserved": plan.status != PlanStatus::Rejected,
    });
    let mut out = out;
    if let Value::Object(m) = &mut out {
        insert_profile(m, &req);
    }
    check_state(&out)?;
    // spec/surface.md §18.2 rule 2: one line per operation, then the plain diff.
    let lines: Vec<(String, String)> = req
        .operations
        .iter()
        .zip(&plan.effects)
        .enumerate()
        .map(|(i, (op, effect))| {
            let target = op.concept_id().unwrap_or("index.md");
            (
                format!("operations[{i}] {} {target}", op.kind()),
                effect.describe(),
            )
        })
        .collect();
    let text = text::preview_text(
        plan.status.as_str(),
        &lines,
        out["diagnostics"].as_array().map_or(&[][..], Vec::as_slice),
        out["diff"].as_str().unwrap_or_default(),
        out["diff_truncated"] == true,
    );
    Ok(Success::with_second_text(out, text))
}

/// The cross-field state invariants of a preview result that the JSON Schema cannot express
/// (spec/concept-patch.md §5.1): `result_revision` vs `base_revision` per status, the diff,
/// the paths (strictly ascending, empty unless `applicable`), `ERROR` presence and
/// `unknown_preserved`; every diagnostic `code` non-empty.
///
/// # Errors
/// `schema_validation` (`tool output violates its advertised state invariants`).
pub fn check_state(out: &Value) -> Result<(), ToolError> {
    let base = &out["base_revision"];
    let result = &out["result_revision"];
    let paths_empty = out["affected_paths"].as_array().is_some_and(Vec::is_empty);
    let error = has_severity(out, "ERROR");
    let empty_code = out["diagnostics"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x["code"] == ""));
    let ok = match out["status"].as_str() {
        Some("applicable") => {
            result.is_string()
                && result != base
                && (out["diff"] != "" || out["diff_truncated"] == true)
                && !paths_empty
                && !error
                && out["unknown_preserved"] == true
        }
        Some("noop") => {
            result == base
                && out["diff"] == ""
                && out["diff_truncated"] == false
                && paths_empty
                && !error
                && out["unknown_preserved"] == true
        }
        Some("rejected") => {
            result.is_null()
                && out["diff"] == ""
                && out["diff_truncated"] == false
                && paths_empty
                && error
                && out["unknown_preserved"] == false
        }
        _ => false,
    };
    if ok && !empty_code && strictly_ascending(&out["affected_paths"]) {
        Ok(())
    } else {
        Err(state_violation())
    }
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/concept-patch.md §2).
fn input_schema() -> SchemaRoot {
    SchemaRoot::new(patch_input_root(
        "preview_concept_patch",
        "Arguments of preview_concept_patch (spec/concept-patch.md §2).",
        Vec::new(),
        Vec::new(),
    ))
}

/// The output schema root (spec/concept-patch.md §5.1).
fn output_schema() -> SchemaRoot {
    output_root(
        "preview_concept_patch",
        "Result of preview_concept_patch (spec/concept-patch.md §5.1).",
        preview_success(),
    )
}

fn preview_success() -> Value {
    let base = closed(vec![
        (
            "status",
            json!({"type": "string", "enum": ["applicable", "noop", "rejected"]}),
        ),
        ("base_revision", r("revision")),
        (
            "result_revision",
            json!({"anyOf": [r("revision"), {"type": "null"}]}),
        ),
        ("plan_digest", r("digest")),
        ("diff", json!({"type": "string", "maxLength": 1_048_576})),
        ("diff_truncated", boolean()),
        ("affected_paths", paths_array()),
        ("diagnostics", diagnostics_array()),
        ("unknown_preserved", boolean()),
        ("temporal_profile", r("temporal_profile_id")),
        ("temporal_profile_source", r("temporal_profile_source")),
    ]);
    // The state invariants of spec/concept-patch.md §5.1 that JSON Schema can express.
    with(
        base,
        "allOf",
        json!([
            status_branch("applicable", json!({
                "result_revision": {"type": "string"},
                "affected_paths": {"minItems": 1},
                "diagnostics": no_error(),
                "unknown_preserved": {"const": true}
            })),
            {
                "if": {"properties": {"status": {"const": "applicable"}, "diff": {"const": ""}}, "required": ["status", "diff"], "additionalProperties": true},
                "then": {"properties": {"diff_truncated": {"const": true}}, "additionalProperties": true}
            },
            status_branch("noop", json!({
                "result_revision": {"type": "string"},
                "diff": {"const": ""},
                "diff_truncated": {"const": false},
                "affected_paths": {"const": []},
                "diagnostics": no_error(),
                "unknown_preserved": {"const": true}
            })),
            status_branch("rejected", json!({
                "result_revision": {"type": "null"},
                "diff": {"const": ""},
                "diff_truncated": {"const": false},
                "affected_paths": {"const": []},
                "diagnostics": has_error(),
                "unknown_preserved": {"const": false}
            }))
        ]),
    )
}
