//! `apply_concept_patch` (spec/concept-patch.md §5.2, §6.2; spec/store.md §10–§13): the
//! request is decoded here, the pipeline (gating, capture, branch A/B, commit, outcome) is
//! [`crate::tools::spine::apply`] with the [`ConceptPatch`] workflow.

use crate::envelope::ToolError;
use crate::plan::patch::ops::parse_patch_request;
use crate::tools::concept_patch::ConceptPatch;
use crate::tools::spine::{self, has_severity, state_violation, strictly_ascending};
use crate::tools::{Ctx, Success};
use serde_json::Value;

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The envelope errors of spec/concept-patch.md §8. Rejections are successes.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_patch_request(&args, true)?;
    spine::apply::<ConceptPatch>(&req, ctx)
}

/// The cross-field state invariants of an apply result that the JSON Schema cannot express
/// (spec/concept-patch.md §5.2): `applied` has result ≠ base, ≥ 1 changed path and `INFO`
/// diagnostics only; `noop` has result = base, no paths, `INFO` only; `rejected` has
/// result = base, no paths and ≥ 1 `ERROR`; paths strictly ascending; codes non-empty.
///
/// # Errors
/// `schema_validation` (`tool output violates its advertised state invariants`).
pub fn check_state(out: &Value) -> Result<(), ToolError> {
    let base = &out["base_revision"];
    let result = &out["result_revision"];
    let paths_empty = out["changed_paths"].as_array().is_some_and(Vec::is_empty);
    let info_only = !has_severity(out, "ERROR") && !has_severity(out, "WARN");
    let empty_code = out["diagnostics"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x["code"] == ""));
    let revisions = base.is_string() && result.is_string();
    let ok = match out["status"].as_str() {
        Some("applied") => result != base && !paths_empty && info_only,
        Some("noop") => result == base && paths_empty && info_only,
        Some("rejected") => result == base && paths_empty && has_severity(out, "ERROR"),
        _ => false,
    };
    if ok && revisions && !empty_code && strictly_ascending(&out["changed_paths"]) {
        Ok(())
    } else {
        Err(state_violation())
    }
}
