//! `preview_concept_patch` (spec/concept-patch.md §5.1, §6.1). Read-only: never writes,
//! never creates `.okf/`.

use crate::plan::patch::ops::parse_patch_request;
use crate::plan::patch::planner::{plan_patch, Status};
use crate::tools::common::capture_bundle;
use crate::wire::dispatch::Ctx;
use crate::wire::envelope::{Diagnostic, ToolError};
use crate::wire::registry::Success;
use serde_json::{json, Value};

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The pure-check errors of spec/concept-patch.md §2.5, then `bundle_path` and capture errors,
/// `resource_limit` for more than 10,000 affected paths. Rejections are successes
/// (`status: "rejected"`).
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_patch_request(&args, false)?;
    let capture = capture_bundle(&req.bundle_path, ctx)?;
    let plan = plan_patch(&capture, &req, &capture.revision, &ctx.cancel)?;
    let applicable = plan.status == Status::Applicable;
    let affected: Vec<&str> = if applicable {
        plan.writes.iter().map(|(p, _)| p.as_str()).collect()
    } else {
        Vec::new()
    };
    Ok(Success::json(json!({
        "status": plan.status.as_str(),
        "base_revision": plan.base_revision,
        "result_revision": plan.result_revision,
        "plan_digest": plan.plan_digest,
        "diff": if applicable { plan.diff.text.as_str() } else { "" },
        "diff_truncated": applicable && plan.diff.truncated,
        "affected_paths": affected,
        "diagnostics": plan.diagnostics.iter().map(Diagnostic::to_wire).collect::<Vec<_>>(),
        "unknown_preserved": plan.status != Status::Rejected,
    })))
}
