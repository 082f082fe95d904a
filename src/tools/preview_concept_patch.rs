//! `preview_concept_patch` (spec/concept-patch.md §5.1, §6.1). Read-only: never writes,
//! never creates `.okf/`.

use crate::envelope::{Diagnostic, ToolError};
use crate::plan::patch::ops::parse_patch_request;
use crate::plan::stage::PlanStatus;
use crate::tools::concept_patch::ConceptPatch;
use crate::tools::spine::{self, has_severity, state_violation, strictly_ascending};
use crate::tools::{Ctx, Success};
use serde_json::{json, Value};

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The pure-check errors of spec/concept-patch.md §2.5, then `bundle_path` and capture errors,
/// `resource_limit` for more than 10,000 affected paths. Rejections are successes
/// (`status: "rejected"`).
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_patch_request(&args, false)?;
    let plan = spine::preview::<ConceptPatch>(&req, ctx)?;
    let applicable = plan.status == PlanStatus::Applicable;
    let affected: Vec<&str> = if applicable {
        plan.writes.iter().map(|(p, _)| p.as_str()).collect()
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
    check_state(&out)?;
    Ok(Success::json(out))
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
