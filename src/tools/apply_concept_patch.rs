//! `apply_concept_patch` (spec/concept-patch.md §5.2, §6.2; spec/store.md §10–§13).
//!
//! Gating before any I/O (pure checks, canonical expectations, the idempotency key), then one
//! capture. Branch A (the bundle is still at `expected_revision`) rebuilds the plan, requires
//! the same digest and commits through the store; branch B (the bundle moved) can only succeed
//! through an exact replay answered from a stored receipt.
//!
//! Lock-first (`docs/store.md` §3.1): when `.okf/` already exists, the store is reserved
//! (lock taken without waiting, no journal pending; nothing created or written) before that
//! one capture, so the capture is the fresh capture under the lock of C5 and also the §12
//! step 6 replay basis; the tree is captured once per call (twice only when the spilled
//! capture of `with_patch_capture` missed, docs/store.md §3.2), and the probe and recovery run
//! only when the store is needed. Otherwise (no `.okf/`, lock busy, journal pending) the
//! capture comes first as in spec/store.md §10.1 and `.okf/` is created only by a fresh
//! commit (rule S-2). A reservation error other than cancellation is reported only where the
//! store is needed, so noop, rejected and plan-mismatch answers stay as §13 rows 2 and 6 say.

use crate::okf::validate;
use crate::plan::digest;
use crate::plan::patch::identity::ChangeSet;
use crate::plan::patch::ops::{parse_patch_request, plan_mismatch};
use crate::plan::patch::planner::{plan_patch_parsed, validation_options, Status};
use crate::store::commit::{self, manifest, CommitRequest, Mode, Session};
use crate::store::error::{Flavor, StoreError};
use crate::store::outcome::{self, Expected};
use crate::store::root;
use crate::tools::common::{bundle_fault, with_patch_capture};
use crate::tools::preview_concept_patch::{has_severity, state_violation, strictly_ascending};
use crate::wire::dispatch::{Ctx, MAY_HAVE_COMMITTED};
use crate::wire::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::wire::registry::Success;
use serde_json::{json, Value};

/// Idempotency namespace of this tool (spec/store.md §6.1).
pub const NAMESPACE: &str = "mcp:concept-patch";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The envelope errors of spec/concept-patch.md §8. Rejections are successes.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    // A cancellation after the input checks carries the recovery step of spec/surface.md §6.2
    // (only a request cancelled at dispatch has no diagnostics).
    run_checked(args, ctx).map_err(|e| {
        if e.code == codes::OPERATION_CANCELLED {
            StoreError::Cancelled.to_tool_error(Flavor::ConceptPatch)
        } else {
            e
        }
    })
}

fn run_checked(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_patch_request(&args, true)?;
    let Some(exp) = req.expected.clone() else {
        return Err(plan_mismatch("expected_plan_digest is not canonical"));
    };
    let key = digest::idempotency_key(NAMESPACE, &exp.plan_digest)
        .map_err(|()| plan_mismatch("cannot derive transaction identity"))?;
    let change_set = ChangeSet::concept_patch(&req.actor, &exp.revision, &req.operations);
    let request_digest = change_set.request_digest();
    let expected = Expected {
        change_set_id: change_set.id.clone(),
        idempotency_key: key.clone(),
        request_digest: request_digest.clone(),
        base_revision: Some(exp.revision.clone()),
        ..Expected::default()
    };

    ctx.cancel.check()?;
    let root = root::open(&req.bundle_path)?;
    // Lock-first reservation when the store already exists (docs/store.md §3.1): no wait,
    // nothing created or written; `None` keeps the spec's capture-first order. An unreadable
    // `.okf` is reported only where the store is needed (branch B or the commit).
    let (session, deferred): (Option<Session<'_>>, Option<StoreError>) =
        if root::has_private_state(&root).unwrap_or(false) {
            match commit::open_locked(&root, &key, &request_digest, &ctx.cancel) {
                Ok(s) => (s, None),
                Err(StoreError::Cancelled) => {
                    return Err(StoreError::Cancelled.to_tool_error(Flavor::ConceptPatch))
                }
                Err(e) => (None, Some(e)),
            }
        } else {
            (None, None)
        };
    // With a session this is the capture under the lock (C5); planning runs under the lock.
    // YAML limits and graph faults fail the capture of every tool (spec/store.md §3.4):
    // parsed once, under the options the plan validates with, also in branch B.
    let (capture, planned) = with_patch_capture(&root, &req, &ctx.cancel, |capture| {
        let bundle = validate::parse_for_validation(capture, &validation_options(&req))
            .map_err(|f| bundle_fault(&f))?;
        if capture.revision != exp.revision {
            // Branch B: no rebuild, no digest comparison.
            return Ok(Planned::ReplayOnly);
        }
        // Branch A.
        let plan = plan_patch_parsed(&bundle, &req, &exp.revision, &ctx.cancel)?;
        if plan.status == Status::Rejected {
            return Ok(Planned::Answer(json!({
                "status": "rejected",
                "base_revision": capture.revision,
                "result_revision": capture.revision,
                "plan_digest": exp.plan_digest,
                "changed_paths": [],
                "diagnostics": plan.diagnostics.iter().map(Diagnostic::to_wire).collect::<Vec<_>>(),
            })));
        }
        if plan.plan_digest != exp.plan_digest {
            return Err(plan_mismatch(
                "the rebuilt plan differs from expected_plan_digest",
            ));
        }
        if plan.status == Status::Noop {
            return Ok(Planned::Answer(json!({
                "status": "noop",
                "base_revision": capture.revision,
                "result_revision": capture.revision,
                "plan_digest": exp.plan_digest,
                "changed_paths": [],
                "diagnostics": [],
            })));
        }
        Ok(Planned::Fresh {
            result_revision: plan.result_revision.clone().unwrap_or_default(),
            writes: plan.writes,
            changed_refs: plan.changed_refs,
        })
    })?;

    let mut request = CommitRequest {
        change_set_id: change_set.id.clone(),
        idempotency_key: key,
        request_digest,
        base_revision: exp.revision.clone(),
        result_revision: exp.revision.clone(),
        base: manifest(&capture),
        writes: Vec::new(),
        changed_refs: Vec::new(),
        replay: None,
    };
    let mode = match planned {
        Planned::Answer(out) => return answer(out),
        Planned::Fresh {
            result_revision,
            writes,
            changed_refs,
        } => {
            request.result_revision = result_revision;
            request.writes = writes;
            request.changed_refs = changed_refs;
            Mode::Fresh
        }
        Planned::ReplayOnly => {
            if session.is_none() && deferred.is_none() && !root::has_private_state(&root)? {
                return Err(
                    StoreError::Conflict { retryable: true }.to_tool_error(Flavor::ConceptPatch)
                );
            }
            Mode::ReplayOnly
        }
    };
    let result = match (session, deferred) {
        (Some(s), _) => match mode {
            Mode::Fresh => s.commit(&request, &capture, &ctx.cancel),
            Mode::ReplayOnly => s
                .lookup(
                    &request.idempotency_key,
                    &request.request_digest,
                    &capture,
                    &ctx.cancel,
                )
                .and_then(|hit| hit.ok_or(StoreError::Conflict { retryable: true })),
        },
        // The lock-first open failed: the open of `Commit` would report the same error.
        (None, Some(e)) => Err(e),
        (None, None) => commit::commit(&root, &request, mode, &ctx.cancel),
    };
    // The store reads paths, sizes and digests of the (possibly spilled) capture, never bytes.
    debug_assert!(!capture.missed(), "the store read a spilled file");
    let ok = outcome::classify(result, &expected, Flavor::ConceptPatch)?;
    let diagnostics: Vec<Value> = ok
        .replayed
        .map(|basis| Diagnostic::new("receipt_replayed", Severity::Info, basis.message()).to_wire())
        .into_iter()
        .collect();
    let r = &ok.receipt.receipt;
    let out = json!({
        "status": if ok.noop { "noop" } else { "applied" },
        "base_revision": r.base_revision,
        "result_revision": r.result_revision,
        "plan_digest": exp.plan_digest,
        "changed_paths": ok.changed_paths(),
        "diagnostics": diagnostics,
    });
    if let Err(mut e) = check_state(&out) {
        e.message = MAY_HAVE_COMMITTED.to_owned();
        return Err(e);
    }
    let mut s = Success::json(out);
    s.committed = true;
    Ok(s)
}

/// What the planning step under the capture decided.
enum Planned {
    /// A pre-commit answer (`rejected`, `noop`).
    Answer(Value),
    /// Branch A with writes: commit them.
    Fresh {
        result_revision: String,
        writes: Vec<(String, Vec<u8>)>,
        changed_refs: Vec<String>,
    },
    /// Branch B: only a stored receipt can answer.
    ReplayOnly,
}

/// A pre-commit answer, after its state check.
fn answer(out: Value) -> Result<Success, ToolError> {
    check_state(&out)?;
    Ok(Success::json(out))
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
