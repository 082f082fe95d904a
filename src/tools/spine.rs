//! The one preview/apply pipeline of every workflow (spec/store.md §10–§13,
//! spec/concept-patch.md §6, spec/migration.md §9): capture → plan → authorise → commit →
//! classify.
//!
//! A workflow (the concept patch, the 0.1 → 0.2 migration, the temporal upgrade) implements
//! [`Workflow`]: its pure request, its planner and its own plan type with the conversion to
//! the stage plan the store commits, its zero-I/O authorisation, its idempotency namespace and
//! outcome flavour, its validator options, the documents its planner reads, a target-noop
//! hook and a hook that runs before a replay-only commit. Everything else is written once,
//! here:
//!
//! - [`preview`]: open `bundle_path`, capture (spilled: only the documents the plan reads stay
//!   in memory), parse once under the workflow's validator options, plan. Writes nothing and
//!   returns the workflow's own plan.
//! - [`apply`]: the target-noop branch when the request is one ([`Workflow::is_target_noop`]:
//!   capture, check, answer `noop`; never the store); otherwise [`Workflow::authorise`], the
//!   authorised identity (change set, idempotency key, request digest) before any I/O; the
//!   lock-first reservation when `.okf/` exists (`docs/store.md` §3.1); one capture; on the
//!   authorised base revision (branch A) rebuild the plan and compare its digest, then commit;
//!   off it (branch B) the workflow's replay hook and a replay-only commit; then the outcome
//!   classification of spec/store.md §12, the `receipt_replayed` diagnostic (§12 step 6) and
//!   the may-have-committed flag of spec/surface.md §3.
//!
//! A tool module shrinks to: decode its arguments into the request, call [`preview`] or
//! [`apply`], render.

use crate::cancel::Cancel;
use crate::digest;
use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::bundle::Bundle;
use crate::okf::capture::Capture;
use crate::okf::temporal::Profile;
use crate::okf::validate::{self, ValidationOptions};
use crate::plan::identity::{Authorisation, ChangeSet};
use crate::plan::stage::{Plan, PlanStatus};
use crate::plan::stream::{Payloads, Writes};
use crate::store::capture::{self, Spill};
use crate::store::commit::{manifest, CommitRequest, Reserve, Txn};
use crate::store::error::StoreError;
use crate::store::handle::StoreOptions;
use crate::store::outcome::ReceiptMatch;
use crate::store::root::{self, Root};
use crate::store::wait::{self, WaitFor};
use crate::tools::outcome;
use crate::tools::outcome::Flavor;
use crate::tools::{Ctx, Success, MAY_HAVE_COMMITTED};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// What a workflow supplies to the spine. Every method is pure (no I/O).
pub trait Workflow {
    /// The validated request (spec/surface.md §9.1 step 5). A preview request carries no
    /// [`Workflow::authorisation`]; an apply request does.
    type Request;
    /// The workflow's own plan: what its preview renders, and what [`Workflow::to_stage`]
    /// turns into the stage plan an apply commits.
    type Plan;
    /// The idempotency namespace of the apply tool (spec/store.md §6.1).
    const NAMESPACE: &'static str;
    /// The outcome flavour: which field names and codes the store errors carry (§12.1).
    const FLAVOR: Flavor;

    /// The zero-I/O checks of an apply request that run before anything is opened (e.g. the
    /// migration's proof preflight, spec/migration.md §9 A step 5). By default none.
    ///
    /// # Errors
    /// The workflow's authorisation error (a plan mismatch, with its recovery step).
    fn authorise(req: &Self::Request) -> Result<(), ToolError> {
        let _ = req;
        Ok(())
    }
    /// The request's `bundle_path` (validated by [`root::open`]).
    fn bundle_path(req: &Self::Request) -> &str;
    /// The apply request's authorisation: the previewed base revision and plan digest.
    /// `None` (a preview request) makes [`apply`] answer plan mismatch.
    fn authorisation(req: &Self::Request) -> Option<&Authorisation>;
    /// The change set of `req` on `base_revision` (spec/store.md §4).
    fn change_set(req: &Self::Request, base_revision: &str) -> ChangeSet;
    /// The validator options of the base and staged validations; the capture is parsed once
    /// under them ([`validate::parse_for_validation`]).
    fn validation_options(req: &Self::Request) -> ValidationOptions;
    /// The temporal profiles whose per-document findings a spilled capture remembers
    /// ([`validate::spill_visitor`]): by default the one of [`Workflow::validation_options`];
    /// both while the request's profile is `auto` and so not yet resolved
    /// (spec/temporal.md §11).
    fn spill_profiles(req: &Self::Request) -> Vec<Profile> {
        vec![Self::validation_options(req).temporal_profile]
    }
    /// The request as it runs on `capture` (spec/temporal.md §11 rule 1: `auto` resolves once
    /// per request from the base capture; spec/migration.md §12.7 rule 3: accepted proposals
    /// become explicit items; `root` is the bundle of `capture`, for a workflow that reads
    /// spilled documents again). `Ok(None)` (the default): `req` as it is. `replay`
    /// is true in branch B of [`apply`] (the bundle moved; only a stored receipt can answer),
    /// where checks of the request against the bundle must not stand in the replay's way.
    ///
    /// # Errors
    /// A request that does not fit the capture (e.g. a temporal value invalid under the
    /// resolved profile).
    fn resolve(
        req: &Self::Request,
        capture: &Capture,
        root: &Root,
        replay: bool,
        cancel: &Cancel,
    ) -> Result<Option<Self::Request>, ToolError> {
        let _ = (req, capture, root, replay, cancel);
        Ok(None)
    }
    /// The bundle-relative paths whose bytes the planner reads; every other document is
    /// spilled by the capture (docs/store.md §3.2).
    fn documents_read(req: &Self::Request) -> BTreeSet<String>;
    /// The planner: `bundle` (parsed under [`Workflow::validation_options`]) and `req` in,
    /// the workflow's plan out, with the change set on `change_set_base` (preview: the
    /// captured revision; apply: the authorised one, equal to it in branch A). The same
    /// planner serves the preview and the apply; a difference between the two is decided by
    /// `req` (whether it carries an [`Workflow::authorisation`]). `root` is the bundle the
    /// capture was taken of, for a planner that reads spilled documents again
    /// ([`crate::store::capture::reread`]).
    ///
    /// # Errors
    /// The workflow's planning errors (cancellation, limits, bundle faults).
    fn plan(
        bundle: &Bundle<'_>,
        req: &Self::Request,
        change_set_base: &str,
        root: &Root,
        cancel: &Cancel,
    ) -> Result<Self::Plan, ToolError>;
    /// The stage plan of a rebuilt apply plan (branch A of [`apply`]): its status, digests,
    /// writes and diagnostics as the store and the outcome rules read them.
    ///
    /// # Errors
    /// A plan the apply must not commit and that is no `rejected` answer (e.g. a temporal
    /// plan that is not `ready`, spec/temporal.md §6 step 3).
    fn to_stage(plan: Self::Plan) -> Result<Plan, ToolError>;
    /// The target-noop hook (spec/migration.md §9 C): whether the apply request authorises a
    /// bundle already in the target form, decided without I/O. Such an apply captures, runs
    /// [`Workflow::check_target_noop`] and answers `noop`; it never opens the store. By
    /// default no request is one.
    fn is_target_noop(req: &Self::Request) -> bool {
        let _ = req;
        false
    }
    /// The check of a target-noop apply on its capture ([`Workflow::is_target_noop`]).
    ///
    /// # Errors
    /// The error to answer instead of `noop` (the bundle is no longer in the target form).
    fn check_target_noop(
        bundle: &Bundle<'_>,
        req: &Self::Request,
        root: &Root,
        cancel: &Cancel,
    ) -> Result<(), ToolError> {
        let _ = (bundle, req, root, cancel);
        Ok(())
    }
    /// The producer of a streamed plan's payloads ([`Writes::Streamed`]), run by the store
    /// under its lock at C8 (spec/migration.md §12.5 rule 2): the workflow's own producer in
    /// `plan/<workflow>/payloads.rs`, given a reader of `root`'s files. `None` (the default):
    /// the workflow's plans hold their writes in memory.
    fn payloads<'a>(
        req: &'a Self::Request,
        root: &'a Root,
    ) -> Option<Box<dyn Payloads<StoreError> + 'a>> {
        let _ = (req, root);
        None
    }
    /// Runs in branch B (the bundle moved since the preview), on the capture the replay is
    /// answered from, before the replay-only commit (spec/migration.md §9 step 10).
    ///
    /// # Errors
    /// The error to answer instead of the replay.
    fn before_replay(
        bundle: &Bundle<'_>,
        req: &Self::Request,
        root: &Root,
    ) -> Result<(), ToolError> {
        let _ = (bundle, req, root);
        Ok(())
    }
    /// The error for an authorisation that does not hold (plan mismatch, with the workflow's
    /// recovery step).
    fn mismatch(message: &str) -> ToolError;
    /// The cross-field state invariants of an apply result (spec/concept-patch.md §5.2).
    ///
    /// # Errors
    /// `schema_validation` when `out` violates them.
    fn check_apply_state(out: &Value) -> Result<(), ToolError>;
    /// The apply tool's success object of `answer`; by default [`ApplyAnswer::to_json`].
    fn render_apply(answer: &ApplyAnswer<'_>, req: &Self::Request) -> Value {
        let _ = req;
        answer.to_json()
    }
}

/// The status of an apply answer (spec/concept-patch.md §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyStatus {
    /// Committed now or replayed from the stored receipt.
    Applied,
    /// Nothing to write.
    Noop,
    /// The rebuilt plan was rejected.
    Rejected,
}

impl ApplyStatus {
    /// Wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyStatus::Applied => "applied",
            ApplyStatus::Noop => "noop",
            ApplyStatus::Rejected => "rejected",
        }
    }
}

/// An apply answer before rendering.
#[derive(Debug, Clone)]
pub struct ApplyAnswer<'a> {
    /// The status.
    pub status: ApplyStatus,
    /// The receipt's (or the capture's) base revision.
    pub base_revision: String,
    /// The receipt's result revision; the base revision unless applied.
    pub result_revision: String,
    /// The authorised plan digest, echoed.
    pub plan_digest: &'a str,
    /// `changed_paths`, ascending.
    pub changed_paths: Vec<String>,
    /// Wire diagnostics: the rejection's, or the `receipt_replayed` `INFO` of a replay.
    pub diagnostics: Vec<Value>,
}

impl ApplyAnswer<'_> {
    /// `{status, base_revision, result_revision, plan_digest, changed_paths, diagnostics}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "status": self.status.as_str(),
            "base_revision": self.base_revision,
            "result_revision": self.result_revision,
            "plan_digest": self.plan_digest,
            "changed_paths": self.changed_paths,
            "diagnostics": self.diagnostics,
        })
    }
}

/// Builds the preview plan of `req`: opens `bundle_path`, captures ([`with_capture`], as a
/// reader: spec/store.md §16 rule 2), resolves the request on the capture
/// ([`Workflow::resolve`]) and plans on the captured revision. Returns the workflow's own
/// plan and the request as resolved (`None`: `req` itself). Writes nothing and never creates
/// `.okf/`.
///
/// # Errors
/// `bundle_path` and capture errors, [`Workflow::resolve`]'s errors, then the workflow's
/// planning errors.
pub fn preview<W: Workflow>(
    req: &W::Request,
    ctx: &Ctx,
) -> Result<(W::Plan, Option<W::Request>), ToolError> {
    ctx.cancel.check()?;
    let root = root::open(W::bundle_path(req))?;
    // A preview is a reader (spec/store.md §16 rule 2).
    let (_, out) =
        with_capture::<W, _>(WaitFor::Publication, &root, req, &ctx.cancel, |capture| {
            let resolved = W::resolve(req, capture, &root, false, &ctx.cancel)?;
            let q = resolved.as_ref().unwrap_or(req);
            let plan = plan_capture::<W>(capture, q, &capture.revision, &root, &ctx.cancel)?;
            Ok((plan, resolved))
        })?;
    Ok(out)
}

/// Parses `capture` under the workflow's validator options and plans on it.
///
/// # Errors
/// `operation_cancelled`; bundle-wide YAML faults (spec/store.md §3.4); the planner's errors.
pub fn plan_capture<W: Workflow>(
    capture: &Capture,
    req: &W::Request,
    change_set_base: &str,
    root: &Root,
    cancel: &Cancel,
) -> Result<W::Plan, ToolError> {
    cancel.check()?;
    let bundle = validate::parse_for_validation(capture, &W::validation_options(req))
        .map_err(|f| f.to_tool_error())?;
    W::plan(&bundle, req, change_set_base, root, cancel)
}

/// Captures `root`, waiting for `wait` ([`WaitFor::Publication`] for previews, [`WaitFor::Nothing`] for applies;
/// spec/store.md §16 rule 2) for a plan of `req` and runs `plan` on the capture; returns the
/// capture and what `plan` returned.
///
/// Memory (docs/store.md §3.2): the capture keeps in memory only the documents the plan reads
/// ([`Workflow::documents_read`]); every other document is parsed and checked while it is
/// read ([`validate::spill_visitor`]) and then only its path, size and digest stay. If `plan`
/// nevertheless read a spilled file ([`Capture::missed`], e.g. because the parse memo was
/// cleared in between), its result is discarded and the tree is captured again with every
/// file resident and `plan` run on that: the answer is always the one of a resident capture.
///
/// # Errors
/// The capture errors, and `plan`'s error on the capture whose result stands.
pub fn with_capture<W: Workflow, T>(
    wait: WaitFor,
    root: &Root,
    req: &W::Request,
    cancel: &Cancel,
    mut plan: impl FnMut(&Capture) -> Result<T, ToolError>,
) -> Result<(Capture, T), ToolError> {
    let read = W::documents_read(req);
    let keep = |p: &str| read.contains(p);
    let profiles = W::spill_profiles(req);
    if let Some(visit) = validate::spill_visitor(&W::validation_options(req), &profiles, &keep) {
        let spilled = wait::capture_after(wait, root, cancel, Some(&Spill { visit: &visit }))?;
        #[cfg(feature = "fault-injection")]
        if crate::store::hooks::current().forget_memo_after_spill {
            crate::okf::memo::clear();
        }
        let out = plan(&spilled);
        if !spilled.missed() {
            return out.map(|t| (spilled, t));
        }
    }
    let capture = wait::capture_after(wait, root, cancel, None)?;
    let out = plan(&capture)?;
    Ok((capture, out))
}

/// Runs the apply of `req`: plan, authorise, commit, classify; renders the answer with
/// [`Workflow::render_apply`] and checks it with [`Workflow::check_apply_state`].
///
/// Gating before any I/O: the authorisation, the idempotency key and the change set. Then
/// one capture (lock-first when `.okf/` exists). Branch A (the bundle is still at the
/// authorised revision) rebuilds the plan: `rejected` is answered as is, a different digest
/// is a plan mismatch, `noop` is answered without the store; otherwise the writes are
/// committed. Branch B (the bundle moved) runs [`Workflow::before_replay`] and can only
/// succeed through an exact replay answered from a stored receipt.
///
/// Lock-first (`docs/store.md` §3.1): when `.okf/` already exists, the store is reserved
/// (lock taken without waiting, no journal pending; nothing created or written) before that
/// one capture, so the capture is the fresh capture under the lock of C5 and also the §12
/// step 6 replay basis; the tree is captured once per call (twice only when the spilled
/// capture of [`with_capture`] missed), and the probe and recovery run only when the store is
/// needed. Otherwise (no `.okf/`, lock busy, journal pending) the capture comes first as in
/// spec/store.md §10.1 and `.okf/` is created only by a fresh commit (rule S-2). A
/// reservation error other than cancellation is reported only where the store is needed, so
/// noop, rejected and plan-mismatch answers stay as §13 rows 2 and 6 say.
///
/// # Errors
/// The envelope errors of the workflow's apply tool; a cancellation after the input checks
/// carries the recovery step of spec/surface.md §6.2. Rejections are successes.
pub fn apply<W: Workflow>(req: &W::Request, ctx: &Ctx) -> Result<Success, ToolError> {
    if W::is_target_noop(req) {
        return apply_target_noop::<W>(req, ctx);
    }
    W::authorise(req)?;
    apply_checked::<W>(req, ctx).map_err(|e| {
        // A lock timeout keeps its own message (spec/store.md §16 rule 4).
        if e.code == codes::OPERATION_CANCELLED && e.message != crate::tools::outcome::MSG_LOCKED {
            StoreError::Cancelled.to_tool_error(W::FLAVOR)
        } else if capture::is_kept_changing(&e) {
            // A capture that never got a stable snapshot: the workflow's conflict
            // (spec/store.md §16 rule 3).
            StoreError::Conflict { retryable: true }.to_tool_error(W::FLAVOR)
        } else {
            e
        }
    })
}

/// The target-noop branch of [`apply`] (spec/migration.md §9 C): capture (no wait, as an
/// apply), parse, [`Workflow::check_target_noop`], then `noop` on the captured revision with
/// an empty plan digest; never opens the store.
///
/// # Errors
/// `bundle_path` and capture errors; the check's error.
fn apply_target_noop<W: Workflow>(req: &W::Request, ctx: &Ctx) -> Result<Success, ToolError> {
    ctx.cancel.check()?;
    let root = root::open(W::bundle_path(req))?;
    let (capture, ()) =
        with_capture::<W, _>(WaitFor::Nothing, &root, req, &ctx.cancel, |capture| {
            let bundle = validate::parse_for_validation(capture, &W::validation_options(req))
                .map_err(|f| f.to_tool_error())?;
            W::check_target_noop(&bundle, req, &root, &ctx.cancel)
        })?;
    let answer = ApplyAnswer {
        status: ApplyStatus::Noop,
        base_revision: capture.revision.clone(),
        result_revision: capture.revision.clone(),
        plan_digest: "",
        changed_paths: Vec::new(),
        diagnostics: Vec::new(),
    };
    let out = W::render_apply(&answer, req);
    W::check_apply_state(&out)?;
    Ok(Success::json(out))
}

/// What the planning step under the capture decided.
enum Planned {
    /// A pre-commit answer (`rejected` with its diagnostics, or `noop`).
    Answer(ApplyStatus, Vec<Value>),
    /// Branch A with writes: commit them.
    Fresh {
        result_revision: String,
        writes: Writes,
        changed_refs: Vec<String>,
    },
    /// Branch B: only a stored receipt can answer.
    ReplayOnly,
}

fn apply_checked<W: Workflow>(req: &W::Request, ctx: &Ctx) -> Result<Success, ToolError> {
    let Some(auth) = W::authorisation(req) else {
        return Err(W::mismatch("expected_plan_digest is not canonical"));
    };
    let key = digest::idempotency_key(W::NAMESPACE, &auth.plan_digest)
        .map_err(|()| W::mismatch("cannot derive transaction identity"))?;
    let change_set = W::change_set(req, &auth.revision);
    let request_digest = change_set.request_digest();
    let expected = ReceiptMatch {
        change_set_id: change_set.id.clone(),
        idempotency_key: key.clone(),
        request_digest: request_digest.clone(),
        base_revision: Some(auth.revision.clone()),
    };

    ctx.cancel.check()?;
    let root = root::open(W::bundle_path(req))?;
    // Lock-first reservation when the store already exists (docs/store.md §3.1): no wait,
    // nothing created or written; otherwise the spec's capture-first order. An unreadable
    // `.okf` is reported only where the store is needed (branch B or the commit).
    let txn = Txn::begin(
        &root,
        &key,
        &request_digest,
        Reserve::LockFirst,
        &ctx.cancel,
        &StoreOptions::from_env(),
    )
    .map_err(|e| e.to_tool_error(W::FLAVOR))?;
    // With a reservation this is the capture under the lock (C5); planning runs under it.
    // YAML limits and graph faults fail the capture of every tool (spec/store.md §3.4):
    // parsed once, under the options the plan validates with, also in branch B.
    let (capture, (planned, resolved)) = with_capture::<W, _>(
        WaitFor::Nothing,
        &root,
        req,
        &ctx.cancel,
        |capture| {
            let branch_b = capture.revision != auth.revision;
            let resolved = W::resolve(req, capture, &root, branch_b, &ctx.cancel)?;
            let q = resolved.as_ref().unwrap_or(req);
            let bundle = validate::parse_for_validation(capture, &W::validation_options(q))
                .map_err(|f| f.to_tool_error())?;
            if branch_b {
                // Branch B: no rebuild, no digest comparison.
                W::before_replay(&bundle, q, &root)?;
                return Ok((Planned::ReplayOnly, resolved));
            }
            // Branch A.
            let plan = W::to_stage(W::plan(&bundle, q, &auth.revision, &root, &ctx.cancel)?)?;
            if plan.status == PlanStatus::Rejected {
                let diagnostics = plan.diagnostics.iter().map(Diagnostic::to_wire).collect();
                return Ok((
                    Planned::Answer(ApplyStatus::Rejected, diagnostics),
                    resolved,
                ));
            }
            if plan.plan_digest != auth.plan_digest {
                // spec/surface.md §18.3 rule 2: on an unchanged bundle a foreign digest is a plan
                // mismatch; the schema's all-zero example says so.
                return Err(W::mismatch(if is_placeholder(&auth.plan_digest) {
                    "the plan digest passed is all zeros, the schema's example value: pass the plan_digest your preview returned, unchanged"
                } else {
                    "the rebuilt plan differs from expected_plan_digest"
                }));
            }
            if plan.status == PlanStatus::Noop {
                return Ok((Planned::Answer(ApplyStatus::Noop, Vec::new()), resolved));
            }
            Ok((
                Planned::Fresh {
                    result_revision: plan.result_revision.clone().unwrap_or_default(),
                    writes: plan.writes,
                    changed_refs: plan.changed_refs,
                },
                resolved,
            ))
        },
    )?;
    // The request as resolved on the capture; the unresolved `req` still carries the identity
    // (the change set never encodes the profile, spec/temporal.md §11 rule 3).
    let resolved_req = resolved.as_ref().unwrap_or(req);

    let (writes, result_revision, changed_refs) = match planned {
        Planned::Answer(status, diagnostics) => {
            let answer = ApplyAnswer {
                status,
                base_revision: capture.revision.clone(),
                result_revision: capture.revision.clone(),
                plan_digest: &auth.plan_digest,
                changed_paths: Vec::new(),
                diagnostics,
            };
            let out = W::render_apply(&answer, resolved_req);
            W::check_apply_state(&out)?;
            return Ok(Success::json(out));
        }
        Planned::Fresh {
            result_revision,
            writes,
            changed_refs,
        } => (Some(writes), result_revision, changed_refs),
        Planned::ReplayOnly => {
            if txn.is_deferred() && !root::has_private_state(&root)? {
                let e = StoreError::Conflict { retryable: true }.to_tool_error(W::FLAVOR);
                return Err(with_revision_hint::<W>(e, &root, req, auth, &ctx.cancel));
            }
            (None, auth.revision.clone(), Vec::new())
        }
    };
    let replay_only = writes.is_none();
    let result = match writes {
        None => txn
            .replay(Some(&capture), &ctx.cancel)
            .and_then(|hit| hit.ok_or(StoreError::Conflict { retryable: true })),
        Some(writes) => {
            // A streamed plan: the workflow's producer makes the bytes again under the lock
            // (spec/migration.md §12.5 rule 2).
            let producer = match &writes {
                Writes::Streamed(_) => W::payloads(resolved_req, &root),
                Writes::Resident(_) => None,
            };
            if writes.is_empty() || matches!(writes, Writes::Streamed(_)) && producer.is_none() {
                // A streamed plan without a producer, or a plan without writes: never
                // commit it.
                return Err(W::mismatch("the plan has no payloads to commit"));
            }
            let request = CommitRequest {
                change_set_id: change_set.id.clone(),
                idempotency_key: key,
                request_digest,
                base_revision: auth.revision.clone(),
                result_revision,
                base: manifest(&capture),
                writes,
                changed_refs,
                replay: None,
            };
            txn.commit(&request, producer.as_deref(), Some(&capture), &ctx.cancel)
        }
    };
    outcome::notice_store_created(&result);
    // The store reads paths, sizes and digests of the (possibly spilled) capture, never bytes.
    debug_assert!(!capture.missed(), "the store read a spilled file");
    let ok = match outcome::classify(result, &expected, W::FLAVOR) {
        Ok(ok) => ok,
        Err(e) if replay_only && e.code != codes::OPERATION_CANCELLED => {
            return Err(with_revision_hint::<W>(e, &root, req, auth, &ctx.cancel));
        }
        Err(e) => return Err(e),
    };
    let diagnostics: Vec<Value> = ok
        .replayed
        .map(|basis| Diagnostic::new("receipt_replayed", Severity::Info, basis.message()).to_wire())
        .into_iter()
        .collect();
    let r = &ok.receipt.receipt;
    let answer = ApplyAnswer {
        status: if ok.noop {
            ApplyStatus::Noop
        } else {
            ApplyStatus::Applied
        },
        base_revision: r.base_revision.clone(),
        result_revision: r.result_revision.clone(),
        plan_digest: &auth.plan_digest,
        changed_paths: ok.changed_paths(),
        diagnostics,
    };
    let out = W::render_apply(&answer, resolved_req);
    committed(out, W::check_apply_state)
}

/// Whether `d` is the all-zero digest the schemas give as their example.
fn is_placeholder(d: &str) -> bool {
    d.strip_prefix("sha256:")
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b == b'0'))
}

/// Code of the diagnostic of spec/surface.md §18.3 rules 1–2 on a branch-B answer.
pub const REVISION_HINT: &str = "revision_hint";

/// spec/surface.md §18.3 rules 1–2, on the error path of branch B only (the bundle is not at
/// the authorised revision and no receipt answered): `e` plus an `INFO` diagnostic on the
/// workflow's revision field when that revision is the schemas' all-zero example, or when it
/// equals the `result_revision` of the plan rebuilt on the current bundle (the preview's
/// `result_revision` passed where its `base_revision` belongs). The rebuild captures the
/// bundle again; any failure of it just leaves `e` as it is.
fn with_revision_hint<W: Workflow>(
    mut e: ToolError,
    root: &Root,
    req: &W::Request,
    auth: &Authorisation,
    cancel: &Cancel,
) -> ToolError {
    let field = W::FLAVOR.revision_field;
    let mut swapped = false;
    let hint = if is_placeholder(&auth.revision) {
        Some(format!(
            "{field} is all zeros, the schema's example value: pass the base_revision your preview returned"
        ))
    } else {
        with_capture::<W, _>(WaitFor::Nothing, root, req, cancel, |capture| {
            let resolved = W::resolve(req, capture, root, false, cancel)?;
            let q = resolved.as_ref().unwrap_or(req);
            let bundle = validate::parse_for_validation(capture, &W::validation_options(q))
                .map_err(|f| f.to_tool_error())?;
            W::to_stage(W::plan(&bundle, q, &capture.revision, root, cancel)?)
        })
        .ok()
        .filter(|(_, plan)| plan.result_revision.as_deref() == Some(auth.revision.as_str()))
        .map(|_| {
            swapped = true;
            format!(
                "{field} equals the result_revision this plan has on the current bundle: the preview's result_revision was passed where its base_revision belongs; pass base_revision"
            )
        })
    };
    if swapped && W::FLAVOR.wrap.is_none() {
        // The bundle did not move: the headline and the next step say what happened (the code
        // stays `revision_conflict`).
        e.message = format!(
            "{field} is this plan's result_revision, not its base_revision: pass the base_revision the preview returned"
        );
        for d in e
            .diagnostics
            .iter_mut()
            .filter(|d| d.code == "recovery_step")
        {
            d.message = format!(
                "Pass the preview's base_revision as {field}, unchanged, with the same plan digest; preview again only if the bundle changed since."
            );
        }
    }
    if let Some(message) = hint {
        e.diagnostics
            .push(Diagnostic::new(REVISION_HINT, Severity::Info, message).with_field(field));
    }
    e
}

/// The success of a call whose store `Commit` ran: a state violation then says the change
/// may have been committed (spec/surface.md §3).
///
/// # Errors
/// `check`'s error, with the [`MAY_HAVE_COMMITTED`] message.
pub fn committed(
    out: Value,
    check: impl Fn(&Value) -> Result<(), ToolError>,
) -> Result<Success, ToolError> {
    if let Err(mut e) = check(&out) {
        e.message = MAY_HAVE_COMMITTED.to_owned();
        return Err(e);
    }
    let mut s = Success::json(out);
    s.committed = true;
    Ok(s)
}

/// `schema_validation` (`tool output violates its advertised state invariants`).
#[must_use]
pub fn state_violation() -> ToolError {
    ToolError::new(
        codes::SCHEMA_VALIDATION,
        "tool output violates its advertised state invariants",
    )
}

/// Whether `paths` (a JSON array of strings) is strictly ascending (sorted and unique).
#[must_use]
pub fn strictly_ascending(paths: &Value) -> bool {
    paths.as_array().is_some_and(|a| {
        a.iter().all(Value::is_string)
            && a.windows(2)
                .all(|w| w[0].as_str().unwrap_or("") < w[1].as_str().unwrap_or(""))
    })
}

/// Whether any diagnostic of `out` has `severity` equal to `sev`.
#[must_use]
pub fn has_severity(out: &Value, sev: &str) -> bool {
    out["diagnostics"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x["severity"] == sev))
}

#[cfg(test)]
#[path = "spine_capture_tests.rs"]
mod spine_capture_tests;
