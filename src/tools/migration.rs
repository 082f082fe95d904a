//! The 0.1 → 0.2 migration on the spine (spec/migration.md §8–§9): what
//! `preview_v02_migration` and `apply_v02_migration` supply to [`crate::tools::spine`], the
//! target-noop branch of the apply (§9 C), the rendering of both outputs and the parts of
//! their schemas they share.

use crate::cancel::Cancel;
use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::bundle::Bundle;
use crate::okf::capture::{Capture, CapturedFile};
use crate::okf::validate::{self, ValidationOptions};
use crate::plan::identity::{Authorisation, ChangeSet};
use crate::plan::migration::citations::CitationMapping;
use crate::plan::migration::identity::{self, proof_json};
use crate::plan::migration::payloads::Producer;
use crate::plan::migration::request::{
    authorisation_mismatch, mapping_json, AnswerView, IncludeProof, MigrationRequest,
    AUTO_PROOF_BYTES,
};
use crate::plan::migration::source::{self, Selector, SourceResolution};
use crate::plan::migration::{self as planner, MigrationPlan, MigrationStatus};
use crate::plan::stage::{Plan, PlanStatus};
use crate::plan::stream::{Payloads, Writes};
use crate::store::capture;
use crate::store::error::StoreError;
use crate::store::root::{self, Root};
use crate::tools::def::SharedSchema;
use crate::tools::outcome::Flavor;
use crate::tools::schema_parts::{
    boolean, closed, closed_with, count, diagnostics_array, input_root, paths_array, r,
    string_1_max, string_max, with, EXAMPLE_BUNDLE_PATH,
};
use crate::tools::spine::{ApplyAnswer, Workflow};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// How the migration apply's store errors read (spec/migration.md §9).
pub const FLAVOR: Flavor = Flavor {
    tool: "apply_v02_migration",
    revision_field: "proof.base_revision",
    digest_field: "expected_plan_digest",
    conflict_step: crate::tools::outcome::PREVIEW_CONFLICT_STEP,
    wrap: None,
};

/// The migration (spec/migration.md).
#[derive(Debug, Clone, Copy)]
pub struct Migration;

fn expected_source(req: &MigrationRequest) -> Option<&SourceResolution> {
    req.apply.as_ref().map(|a| &a.expected_source)
}

/// `source_conflict` (§10.1, retryable).
fn source_conflict() -> ToolError {
    ToolError::new(
        "source_conflict",
        "the bundle's source resolution differs from expected_source",
    )
    .with_diagnostic(Diagnostic::recovery(
        "expected_source",
        "Run preview_v02_migration again and pass its source, proof and plan_digest unchanged.",
    ))
}

fn unsupported(message: &str) -> ToolError {
    ToolError::new("unsupported_migration_source", message).with_diagnostic(Diagnostic::recovery(
        "expected_source",
        "Run preview_v02_migration again and follow its status.",
    ))
}

/// The live resolution of the apply with the §9 B exception: a transition apply with
/// `from: "0.1"` on a root that now declares exactly `"0.2"` resolves as the declared
/// target-noop tuple.
fn live_resolution(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    root: &Root,
) -> Result<(SourceResolution, bool), ToolError> {
    match source::resolve(bundle, req.from, "expected_source", &reader(root)) {
        Ok(s) => Ok((s, false)),
        Err(e) if e.code == codes::INVALID_REQUEST && req.from == Selector::V01 => {
            let declared =
                source::resolve(bundle, Selector::Auto, "expected_source", &reader(root))?;
            if declared.declared_version.as_deref() == Some("0.2") {
                Ok((declared, true))
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
    }
}

/// The first sorted blocker's code as an error (§9 step 8 and 10).
fn blocker_error(plan: &MigrationPlan) -> ToolError {
    match plan.blockers.first() {
        Some(b) => ToolError::new(&b.code, format!("{}: {}", b.path, b.message)),
        None => ToolError::new(
            "migration_blocked",
            "the target replay produced manual actions only",
        ),
    }
}

impl Workflow for Migration {
    type Request = MigrationRequest;
    type Plan = MigrationPlan;
    const NAMESPACE: &'static str = identity::NAMESPACE;
    const FLAVOR: Flavor = FLAVOR;

    fn authorise(req: &MigrationRequest) -> Result<(), ToolError> {
        authorise(req)
    }

    fn bundle_path(req: &MigrationRequest) -> &str {
        &req.bundle_path
    }

    fn authorisation(req: &MigrationRequest) -> Option<&Authorisation> {
        req.apply.as_ref().and_then(|a| a.auth.as_ref())
    }

    fn change_set(req: &MigrationRequest, base_revision: &str) -> ChangeSet {
        let digest = expected_source(req)
            .map(SourceResolution::digest)
            .unwrap_or_default();
        // §12.7 rule 4a: a caller-bound apply is bound to its explicit arguments, known
        // before any I/O; the proof and plan digest still cover the full request.
        if req.apply.as_ref().is_some_and(|a| a.caller_bound) {
            identity::caller_change_set(req, &digest, base_revision)
        } else {
            identity::change_set(req, &digest, base_revision)
        }
    }

    fn resolve(
        req: &MigrationRequest,
        capture: &Capture,
        root: &Root,
        replay: bool,
        cancel: &Cancel,
    ) -> Result<Option<MigrationRequest>, ToolError> {
        // Branch B answers from the receipt through the caller binding; it computes no
        // proposal (§12.7 rule 4a).
        if replay || req.accept_proposals.is_none() {
            return Ok(None);
        }
        let bundle = validate::parse_for_validation(capture, &planner::validation_options())
            .map_err(|f| f.to_tool_error())?;
        // A resolution fault or a moved source is answered by `plan` (source_conflict).
        let Ok((live, _)) = live_resolution(&bundle, req, root) else {
            return Ok(None);
        };
        if !live.is_transition() {
            return Ok(None);
        }
        let merged = accept(&bundle, req, root, cancel)?;
        if merged.apply.as_ref().is_some_and(|a| a.proof.is_some()) {
            // A passed proof is still validated (§12.7 rule 4), against the full request.
            check_proof(&merged)?;
        }
        Ok(Some(merged))
    }

    fn validation_options(_req: &MigrationRequest) -> ValidationOptions {
        planner::validation_options()
    }

    fn documents_read(_req: &MigrationRequest) -> BTreeSet<String> {
        // Only the root declaration stays resident; every other document is read again one
        // at a time (spec/migration.md §12.5 rule 1).
        BTreeSet::from(["index.md".to_owned()])
    }

    /// The preview (no `apply` fields) resolves the source under `from`; the apply checks
    /// the live resolution against `expected_source` (§9 B) and plans only a transition.
    fn plan(
        bundle: &Bundle<'_>,
        req: &MigrationRequest,
        change_set_base: &str,
        root: &Root,
        cancel: &Cancel,
    ) -> Result<MigrationPlan, ToolError> {
        let live = match expected_source(req) {
            None => source::resolve(bundle, req.from, "from", &reader(root))?,
            Some(expected) => {
                let (live, exception) = live_resolution(bundle, req, root)?;
                if exception || &live != expected {
                    return Err(source_conflict());
                }
                if !live.is_transition() {
                    return Err(unsupported("the bundle is no longer a v0.1 source"));
                }
                live
            }
        };
        planner::plan(bundle, req, live, change_set_base, &reader(root), cancel)
    }

    fn to_stage(plan: MigrationPlan) -> Result<Plan, ToolError> {
        Ok(to_stage_plan(plan))
    }

    fn is_target_noop(req: &MigrationRequest) -> bool {
        expected_source(req).is_some_and(SourceResolution::is_target_noop)
    }

    /// §9 C: the live resolution is the expected target-noop tuple and the target replay
    /// finds nothing to do.
    fn check_target_noop(
        bundle: &Bundle<'_>,
        req: &MigrationRequest,
        root: &Root,
        cancel: &Cancel,
    ) -> Result<(), ToolError> {
        let expected =
            expected_source(req).ok_or_else(|| authorisation_mismatch("not an apply"))?;
        let live = source::resolve(bundle, req.from, "expected_source", &reader(root))?;
        if &live != expected {
            return Err(source_conflict());
        }
        if !live.is_target_noop() {
            return Err(unsupported("the bundle is not in the v0.2 target form"));
        }
        match target_replay(bundle, req, live, root, cancel)? {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn payloads<'a>(
        req: &'a MigrationRequest,
        root: &'a Root,
    ) -> Option<Box<dyn Payloads<StoreError> + 'a>> {
        let rereader = capture::Rereader::new(root);
        Some(Box::new(Producer::new(
            req,
            Box::new(move |f| rereader.read(f)),
        )))
    }

    fn before_replay(
        bundle: &Bundle<'_>,
        req: &MigrationRequest,
        root: &Root,
    ) -> Result<(), ToolError> {
        let (live, _) = live_resolution(bundle, req, root)?;
        // A caller-bound replay is answered by the receipt of its binding alone (§12.7
        // rule 4a): the tree it sees may be the committed result, whose proposals and target
        // replay no longer describe the explicit arguments.
        let caller_bound = req.apply.as_ref().is_some_and(|a| a.caller_bound);
        if live.is_target_noop() && !caller_bound {
            if let Some(e) = target_replay(bundle, req, live, root, &Cancel::default())? {
                if !own_journal_pending(req, root) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn mismatch(message: &str) -> ToolError {
        authorisation_mismatch(message)
    }

    fn check_apply_state(out: &Value) -> Result<(), ToolError> {
        crate::tools::concept_patch::check_apply_state(out)
    }

    fn render_apply(answer: &ApplyAnswer<'_>, req: &MigrationRequest) -> Value {
        render_apply(answer, expected_source(req), req.view.limit)
    }
}

/// The target replay (§6.7) of `bundle` under the target-noop resolution `live`: `None` when
/// the bundle is exactly in the target form, otherwise the error of its first blocker (§9 C,
/// §9 step 10).
///
/// # Errors
/// The planner's errors (rereading, cancellation).
fn target_replay(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    live: SourceResolution,
    root: &Root,
    cancel: &Cancel,
) -> Result<Option<ToolError>, ToolError> {
    let plan = planner::plan(
        bundle,
        req,
        live,
        &bundle.capture.revision,
        &reader(root),
        cancel,
    )?;
    Ok((plan.status != MigrationStatus::TargetNoop).then(|| blocker_error(&plan)))
}

/// Whether the journal of this very transaction (the change set on `proof.base_revision`
/// and the derived key) is pending in `.okf/transactions/`: the bundle is then part-way
/// through publishing its migrated result after a crash, and the visible tree may hold
/// migrated documents beside an unpublished asset or document that carries no v0.1
/// evidence, so it can resolve as a target noop that the target replay rejects. The
/// replay-only commit recovers that journal first (rolling it forward or back) and answers
/// from its receipt, so the target-replay check of §9 step 10 is left to it. A stat of one
/// name, no store open.
fn own_journal_pending(req: &MigrationRequest, root: &Root) -> bool {
    let Some(auth) = req.apply.as_ref().and_then(|a| a.auth.as_ref()) else {
        return false;
    };
    let Ok(key) = crate::digest::idempotency_key(identity::NAMESPACE, &auth.plan_digest) else {
        return false;
    };
    let request_digest = Migration::change_set(req, &auth.revision).request_digest();
    root::journal_pending(root, &crate::digest::txn_id(&request_digest, &key))
}

/// Reads spilled documents of `root` again for a planning pass over a capture of this call,
/// in path order on up to two threads ([`crate::store::capture::Rereader::within_call`]: a
/// file whose trusted stat tuple is unchanged is not hashed again). The payloads of C8 are
/// read by [`Producer`], which compares bytes.
fn reader(root: &Root) -> impl Fn(&CapturedFile) -> Result<Vec<u8>, ToolError> + Sync + '_ {
    let r = capture::Rereader::within_call(root);
    move |f| r.read(f)
}

/// The apply's wire object (§5.2, §12.7 rule 1): `{status, source, base_revision,
/// result_revision, plan_digest, changed_paths, diagnostics, totals, diagnostic_counts}`, each
/// list cut to `limit` in its order, `totals` and `diagnostic_counts` with the full counts.
fn render_apply(
    answer: &ApplyAnswer<'_>,
    source: Option<&SourceResolution>,
    limit: usize,
) -> Value {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for d in &answer.diagnostics {
        *counts
            .entry(format!(
                "{}/{}",
                d["severity"].as_str().unwrap_or_default(),
                d["code"].as_str().unwrap_or_default()
            ))
            .or_default() += 1;
    }
    json!({
        "status": answer.status.as_str(),
        "source": source.map(SourceResolution::to_json),
        "base_revision": answer.base_revision,
        "result_revision": answer.result_revision,
        "plan_digest": answer.plan_digest,
        "changed_paths": answer.changed_paths.iter().take(limit).collect::<Vec<_>>(),
        "diagnostics": answer.diagnostics.iter().take(limit).collect::<Vec<_>>(),
        "totals": {
            "changed_paths": answer.changed_paths.len(),
            "diagnostics": answer.diagnostics.len(),
        },
        "diagnostic_counts": counts,
    })
}

/// The spine's view of a rebuilt transition plan: blocked → `rejected` with one `ERROR` per
/// blocker (`code` = blocker code, `file` = path) plus the preview diagnostics (§5.2).
fn to_stage_plan(p: MigrationPlan) -> Plan {
    let status = match p.status {
        MigrationStatus::Applicable => PlanStatus::Applicable,
        MigrationStatus::TransitionNoop | MigrationStatus::TargetNoop => PlanStatus::Noop,
        MigrationStatus::Blocked => PlanStatus::Rejected,
    };
    let mut diagnostics: Vec<Diagnostic> = p
        .blockers
        .iter()
        .map(|b| Diagnostic::new(&b.code, Severity::Error, b.message.clone()).with_file(&b.path))
        .collect();
    diagnostics.extend(p.diagnostics);
    Plan {
        status,
        base_revision: p.base_revision,
        result_revision: p.result_revision,
        request_digest: p.request_digest,
        change_set_id: p.change_set_id,
        plan_digest: p.plan_digest,
        writes: Writes::streamed(p.writes),
        changed_refs: p.changed_refs,
        diff: p.diff,
        diagnostics: crate::plan::stage::finish_diagnostics(diagnostics),
        effects: Vec::new(),
    }
}

/// The proposals of `bundle` accepted by `req.accept_proposals` (§12.7 rules 3 and 8): the
/// request with every proposed item added as an explicit item
/// ([`crate::plan::migration::request::with_accepted`]) and the paths of the accepted items
/// that need review recorded in `accepted_needing_review`.
///
/// # Errors
/// `invalid_request` when the proposals of this capture have another digest ("the proposals
/// changed since they were shown") or hold an entry that needs review without
/// `accept_needs_review: true`; the rereading and decoding errors.
fn accept(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    root: &Root,
    cancel: &Cancel,
) -> Result<MigrationRequest, ToolError> {
    let all = planner::proposals(bundle, req, &reader(root), cancel)?;
    if req.accept_proposals.as_deref() != Some(identity::proposals_digest(&all).as_str()) {
        return Err(ToolError::invalid_request(
            "the proposals changed since they were shown",
        )
        .with_diagnostic(Diagnostic::recovery(
            "accept_proposals",
            "preview with the same citation_mappings and without accept_proposals, review the new proposals, then pass the new proposals_digest",
        )));
    }
    let review: Vec<String> = all
        .iter()
        .filter(|m| planner::needs_review(m))
        .map(|m| m.path.clone())
        .collect();
    if !review.is_empty() && !req.accept_needs_review {
        return Err(ToolError::invalid_request(format!(
            "{} of the accepted proposals have entries marked needs_review (the first: {}): they are unreviewed suggestions whose resource looks like prose",
            review.len(),
            review[0]
        ))
        .with_diagnostic(Diagnostic::recovery(
            "accept_needs_review",
            "look at the proposals marked needs_review; pass a citation_mappings item of your own for each document you correct, or accept_needs_review: true to accept them as shown",
        )));
    }
    let mut merged = crate::plan::migration::request::with_accepted(req, &all)?;
    merged.accepted_needing_review = review;
    Ok(merged)
}

/// The authorisation preflight of §9 A step 5 (zero I/O): the proof against the change set
/// on `proof.base_revision` and `expected_source`, and its digest against
/// `expected_plan_digest`.
///
/// # Errors
/// `plan_mismatch`.
pub fn authorise(req: &MigrationRequest) -> Result<(), ToolError> {
    let Some(a) = &req.apply else {
        return Err(authorisation_mismatch("not an apply"));
    };
    // A preview of a computation whose path does not resolve to its asset is blocked, so no
    // proof can authorise it (§3.4 last rule).
    if req.computations.iter().any(|c| c.path_mismatch) {
        return Err(authorisation_mismatch(
            "a computation_path does not resolve to its asset.path: the preview of these arguments is blocked (migration_computation_asset_path_mismatch)",
        ));
    }
    if a.expected_plan_digest.is_none() {
        return Err(authorisation_mismatch("expected_plan_digest is required"));
    }
    // Proof by digest (§12.7 rule 4): without a proof the rebuilt proof's digest is compared
    // with expected_plan_digest under the capture. With accept_proposals the request digest
    // is known only once the proposals are computed: a passed proof is validated then
    // ([`Migration::resolve`]).
    if a.proof.is_none() || req.accept_proposals.is_some() {
        return Ok(());
    }
    check_proof(req)
}

/// The proof of `req` against the change set on `proof.base_revision` and
/// `expected_source`, and its digest against `expected_plan_digest` (§9 A step 5, §7.2).
///
/// # Errors
/// `plan_mismatch`.
fn check_proof(req: &MigrationRequest) -> Result<(), ToolError> {
    let Some(a) = &req.apply else {
        return Err(authorisation_mismatch("not an apply"));
    };
    let (Some(proof), Some(digest)) = (&a.proof, &a.expected_plan_digest) else {
        return Err(authorisation_mismatch(
            "proof and expected_plan_digest are required",
        ));
    };
    let resolution = a.expected_source.digest();
    let cs = identity::change_set(req, &resolution, &proof.base_revision);
    let assets: Vec<&str> = req
        .computations
        .iter()
        .filter_map(|c| c.asset.as_ref().map(|x| x.path.as_str()))
        .collect();
    identity::validate_proof(proof, &cs.request_digest(), &resolution, &assets)
        .map_err(authorisation_mismatch)?;
    if identity::plan_digest(proof) != *digest {
        return Err(authorisation_mismatch(
            "the proof does not match expected_plan_digest",
        ));
    }
    Ok(())
}

/// The readable preview text (spec/surface.md §18.2 rule 2, spec/migration.md §12.7 rules 1,
/// 6 and 8): the status, the totals, then the count of each `severity/code`, then the shown
/// items of `out` (the preview's wire object, already cut by `limit`): one line per migrated
/// document (`<path>: changed`), per blocked document (`<path>: rejected: <code>`, each code
/// once per path) and per manual action (`<path>: manual action: <code>`); then the ERROR
/// diagnostics and the plain diff. Documents not listed are left as they are.
#[must_use]
pub fn preview_summary(p: &MigrationPlan, out: &Value, view: &AnswerView) -> String {
    use std::fmt::Write as _;
    let mut head = String::new();
    let t = &out["totals"];
    let _ = writeln!(
        head,
        "totals: {} affected paths, {} blockers, {} manual actions, {} diagnostics, {} proposed citation mappings ({} need review)",
        t["affected_paths"], t["blockers"], t["manual_actions"], t["diagnostics"],
        t["proposed_citation_mappings"], t["proposals_needing_review"]
    );
    if let Some(counts) = out["diagnostic_counts"].as_object() {
        for (k, n) in counts {
            let _ = writeln!(head, "count {k}: {n}");
        }
    }
    if p.proposals_total > 0 {
        let _ = writeln!(
            head,
            "proposed_citation_mappings are unreviewed suggestions, a starting point to review: accept exactly this set with accept_proposals: {} (entries marked needs_review: true also need accept_needs_review: true), or pass your own citation_mappings items",
            p.proposals_digest
        );
    }
    if !p.accepted_needing_review.is_empty() {
        let first: Vec<&str> = p
            .accepted_needing_review
            .iter()
            .take(view.limit.min(10))
            .map(String::as_str)
            .collect();
        let _ = writeln!(
            head,
            "accepted: {} proposals with entries marked needs_review, e.g. {}",
            p.accepted_needing_review.len(),
            first.join(", ")
        );
    }
    if p.source.resolution_source == "legacy-probe" && p.source.candidates.len() > view.limit {
        let _ = writeln!(
            head,
            "the source lists {} legacy candidates: pass from: \"0.1\" to resolve the source without them",
            p.source.candidates.len()
        );
    }
    if out["proof_omitted"] == true {
        head.push_str("proof omitted (include_proof): apply with base_revision and expected_plan_digest instead of proof\n");
    }
    let mut lines: Vec<(String, String)> = Vec::new();
    if let Some(paths) = out["affected_paths"].as_array() {
        lines.extend(
            paths
                .iter()
                .filter_map(Value::as_str)
                .map(|x| (x.to_owned(), "changed".to_owned())),
        );
    }
    let mut seen = BTreeSet::new();
    for b in out["blockers"].as_array().map_or(&[][..], Vec::as_slice) {
        let (path, code) = (
            b["path"].as_str().unwrap_or_default(),
            b["code"].as_str().unwrap_or_default(),
        );
        if seen.insert((path, code)) {
            lines.push((path.to_owned(), format!("rejected: {code}")));
        }
    }
    for a in out["manual_actions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
    {
        lines.push((
            a["path"].as_str().unwrap_or_default().to_owned(),
            format!("manual action: {}", a["code"].as_str().unwrap_or_default()),
        ));
    }
    let body = crate::tools::text::preview_text(
        out["status"].as_str().unwrap_or_default(),
        &lines,
        out["diagnostics"].as_array().map_or(&[][..], Vec::as_slice),
        out["diff"].as_str().unwrap_or_default(),
        out["diff_truncated"] == true,
    );
    // The status line first, then the totals and counts, then the shown items.
    match body.split_once('\n') {
        Some((status, rest)) => format!("{status}\n{head}{rest}"),
        None => format!("{body}{head}"),
    }
}

/// `diagnostic_counts` (§12.7 rule 1): `severity/code` → full count, sorted by key.
fn diagnostic_counts<'a>(d: impl Iterator<Item = &'a Diagnostic>) -> Value {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for x in d {
        *counts
            .entry(format!("{}/{}", x.severity.as_str(), x.code))
            .or_default() += 1;
    }
    let mut o = Map::new();
    for (k, n) in counts {
        o.insert(k, json!(n));
    }
    Value::Object(o)
}

/// The preview's wire object (§5.1, §12.7): every list cut to `view.limit` in its sort order
/// (blockers and manual actions of documents without a proposal first; proposals that need
/// review first, then by path), with `totals` and `diagnostic_counts` giving the full counts;
/// the proof included by `view.include_proof`.
///
/// # Errors
/// `resource_limit` past 10,000 written paths (§8 step 6; no other list raises it).
pub fn render_preview(p: &MigrationPlan, view: &AnswerView) -> Result<Value, ToolError> {
    let applicable = p.status == MigrationStatus::Applicable;
    if p.writes.len() > 10_000 {
        return Err(ToolError::resource_limit(
            "the migration writes more than 10,000 paths",
        ));
    }
    let limit = view.limit;
    let status = match p.status {
        MigrationStatus::Applicable => "applicable",
        MigrationStatus::TransitionNoop | MigrationStatus::TargetNoop => "noop",
        MigrationStatus::Blocked => "blocked",
    };
    let mut o = Map::new();
    o.insert("status".into(), json!(status));
    o.insert("source".into(), p.source.to_json());
    let mut proof_omitted = false;
    if let Some(proof) = &p.proof {
        let proof = proof_json(proof);
        let include = match view.include_proof {
            IncludeProof::Always => true,
            IncludeProof::Never => false,
            IncludeProof::Auto => {
                serde_json::to_vec(&proof).map_or(usize::MAX, |v| v.len()) <= AUTO_PROOF_BYTES
            }
        };
        if include {
            o.insert("proof".into(), proof);
        } else {
            proof_omitted = true;
        }
    }
    o.insert("proof_omitted".into(), json!(proof_omitted));
    o.insert("base_revision".into(), json!(p.base_revision));
    o.insert("result_revision".into(), json!(p.result_revision));
    o.insert("plan_digest".into(), json!(p.plan_digest));
    let affected: Vec<&str> = if applicable {
        p.writes.iter().map(|(x, _, _)| x.as_str()).collect()
    } else {
        Vec::new()
    };
    let noop =
        p.status == MigrationStatus::TargetNoop || p.status == MigrationStatus::TransitionNoop;
    let diagnostics: &[Diagnostic] = if noop { &[] } else { &p.diagnostics };
    let mut proposals: Vec<&CitationMapping> = p.proposals.iter().collect();
    proposals.sort_by_key(|m| !planner::needs_review(m));
    o.insert(
        "totals".into(),
        json!({
            "affected_paths": affected.len(),
            "blockers": p.blockers_total.max(p.blockers.len()),
            "manual_actions": p.manual_actions_total.max(p.manual_actions.len()),
            "diagnostics": diagnostics.len(),
            "proposed_citation_mappings": p.proposals_total,
            "proposals_needing_review": p.proposals_needing_review,
        }),
    );
    o.insert(
        "diagnostic_counts".into(),
        diagnostic_counts(diagnostics.iter()),
    );
    o.insert(
        "affected_paths".into(),
        json!(affected.iter().take(limit).collect::<Vec<_>>()),
    );
    o.insert(
        "diff".into(),
        json!(if applicable { p.diff.text.as_str() } else { "" }),
    );
    o.insert(
        "diff_truncated".into(),
        json!(applicable && p.diff.truncated),
    );
    o.insert(
        "blockers".into(),
        json!(p
            .blockers
            .iter()
            .take(limit)
            .map(|b| json!({"code": b.code, "path": b.path, "location": {"start": b.start, "end": b.end}, "message": b.message}))
            .collect::<Vec<_>>()),
    );
    o.insert(
        "manual_actions".into(),
        json!(p
            .manual_actions
            .iter()
            .take(limit)
            .map(|a| json!({"code": a.code, "path": a.path, "message": a.message}))
            .collect::<Vec<_>>()),
    );
    o.insert(
        "diagnostics".into(),
        json!(diagnostics
            .iter()
            .take(limit)
            .map(Diagnostic::to_wire)
            .collect::<Vec<_>>()),
    );
    o.insert(
        "blockers_truncated".into(),
        json!(p.blockers_truncated || p.blockers.len() > limit || p.manual_actions.len() > limit),
    );
    o.insert(
        "proposed_citation_mappings".into(),
        json!(proposals
            .iter()
            .take(limit)
            .map(|m| mapping_json(m))
            .collect::<Vec<_>>()),
    );
    o.insert(
        "proposals_truncated".into(),
        json!(p.proposals_truncated || p.proposals.len() > limit),
    );
    o.insert("proposals_digest".into(), json!(p.proposals_digest));
    Ok(Value::Object(o))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/migration.md §3, §4.1, §5, §7.2)
// ---------------------------------------------------------------------------------------------

fn location() -> Value {
    closed(vec![("start", count()), ("end", count())])
}

/// The `source` object (§4.1), closed, every member required.
#[must_use]
pub fn source_def() -> Value {
    let text = string_max(4096);
    let def = with(
        closed(vec![
            (
                "requested_selector",
                json!({"enum": ["auto", "0.1", "0.2"]}),
            ),
            ("declaration_present", boolean()),
            ("declaration_valid", boolean()),
            ("declaration_raw", text.clone()),
            (
                "declared_version",
                json!({"anyOf": [string_max(4096), {"type": "null"}]}),
            ),
            ("resolved_source", text.clone()),
            (
                "resolution_source",
                json!({"enum": ["explicit", "declared", "legacy-probe", "default", "future"]}),
            ),
            ("from_version", text.clone()),
            ("to_version", text.clone()),
            (
                "transition",
                json!({"enum": ["v0.1-to-v0.2", "target-noop", "blocked"]}),
            ),
            (
                "candidates",
                json!({"type": "array", "maxItems": 10000, "items": closed(vec![
                    ("kind", json!({"enum": ["timestamp", "citations"]})),
                    ("path", r("bundle_relative_path")),
                    ("location", location()),
                ])}),
            ),
            (
                "blockers",
                json!({"type": "array", "maxItems": 1, "items": closed(vec![
                    ("code", string_1_max(128)),
                    ("path", r("bundle_relative_path")),
                    ("location", location()),
                    ("message", string_max(4096)),
                ])}),
            ),
        ]),
        "description",
        json!(
            "The source resolution (spec/migration.md §4.1); echo it unchanged as expected_source."
        ),
    );
    with(def, "examples", json!([target_noop_example()]))
}

/// An applicable source tuple (§4.3): the source object constrained to the 8 tuples.
#[must_use]
pub fn applicable_source_def() -> Value {
    let t = |sel: &str, present: bool, rs: &str, transition: &str, v: &str| {
        let (raw, declared) = if present {
            (json!({"const": v}), json!({"const": v}))
        } else {
            (json!({"const": ""}), json!({"type": "null"}))
        };
        let (from, cands) = if transition == "v0.1-to-v0.2" {
            (
                "0.1",
                if rs == "legacy-probe" {
                    json!({"minItems": 1})
                } else {
                    json!({"maxItems": 0})
                },
            )
        } else {
            ("0.2", json!({"maxItems": 0}))
        };
        json!({"properties": {
            "requested_selector": {"const": sel},
            "declaration_present": {"const": present},
            "declaration_valid": {"const": true},
            "declaration_raw": raw,
            "declared_version": declared,
            "resolved_source": {"const": from},
            "resolution_source": {"const": rs},
            "from_version": {"const": from},
            "to_version": {"const": "0.2"},
            "transition": {"const": transition},
            "candidates": cands,
            "blockers": {"maxItems": 0}
        }, "additionalProperties": true})
    };
    let tr = "v0.1-to-v0.2";
    let tn = "target-noop";
    json!({"$ref": "#/$defs/migration_source", "oneOf": [
        t("0.1", false, "explicit", tr, "0.1"),
        t("0.1", true, "explicit", tr, "0.1"),
        t("auto", true, "declared", tr, "0.1"),
        t("auto", false, "legacy-probe", tr, "0.1"),
        t("0.2", false, "explicit", tn, "0.2"),
        t("0.2", true, "explicit", tn, "0.2"),
        t("auto", true, "declared", tn, "0.2"),
        t("auto", false, "default", tn, "0.2"),
    ]})
}

/// The proof object (§7.2), closed.
#[must_use]
pub fn proof_def() -> Value {
    let paths = json!({"type": "array", "maxItems": 10000, "items": string_1_max(4096)});
    let hex = json!({"type": "string", "pattern": "^[0-9a-f]{64}$"});
    closed(vec![
        ("format_version", json!({"const": 2})),
        ("request_digest", r("digest")),
        ("resolution_digest", r("digest")),
        ("base_revision", json!({"type": "string", "maxLength": 71})),
        (
            "result_revision",
            json!({"type": "string", "maxLength": 71}),
        ),
        ("reads", paths.clone()),
        (
            "writes",
            json!({"type": "array", "maxItems": 10000, "items": closed(vec![("path", string_1_max(4096)), ("digest", hex)])}),
        ),
        ("deletes", json!({"type": "array", "maxItems": 0})),
        ("renames", json!({"type": "array", "maxItems": 0})),
        ("affected_refs", paths.clone()),
        ("reverse_impact", json!({"type": "array", "maxItems": 0})),
        (
            "changed_files",
            json!({"type": "array", "maxItems": 10000, "items": closed(vec![
                ("kind", json!({"const": "write"})),
                ("path", string_1_max(4096)),
                ("from", json!({"const": ""})),
            ])}),
        ),
        ("changed_refs", paths),
    ])
}

fn mapping_item_def() -> Value {
    let text = string_1_max(4096);
    closed_with(
        &["path", "entries"],
        vec![
            ("path", string_1_max(4096)),
            (
                "entries",
                json!({"type": "array", "minItems": 1, "maxItems": 10000, "items": {
                    "type": "object",
                    "properties": {
                        "legacy_number": {"type": "integer", "minimum": 1, "maximum": 1000000},
                        "legacy_entry": text,
                        "source_id": text,
                        "title": string_max(4096),
                        "resource": string_max(4096),
                        "inline_note": text,
                        "needs_review": {"type": "boolean", "description": "Output only: review this entry."},
                    },
                    "required": ["source_id"],
                    "anyOf": [{"required": ["legacy_number"]}, {"required": ["legacy_entry"]}],
                    "additionalProperties": false
                }}),
            ),
            ("claim_markers", json!({"enum": ["rewrite", "ignore"]})),
            ("trailing_content", json!({"enum": ["block", "keep"]})),
        ],
    )
}

/// A `computations` item (§3.4), closed; mode/asset parity in the schema: `file` requires
/// `computation_path` and `asset` and forbids `inline_*`; `inline` requires
/// `inline_computation` and forbids `computation_path` and `asset`.
fn computation_item_def() -> Value {
    let text = string_1_max(4096);
    let contract = json!({
        "type": "object",
        "properties": {
            "mode": {"enum": ["inline", "file"]},
            "runtime": text,
            "parameters": {"type": "array", "maxItems": 256, "items": closed(vec![
                ("name", text.clone()),
                ("type", text.clone()),
                ("required", boolean()),
            ])},
            "computation_path": text,
            "inline_computation": {"type": "string", "maxLength": 1_048_576},
            "inline_language": text,
            "executor": closed(vec![
                ("resource", text.clone()),
                ("receipt", json!({"type": "array", "minItems": 1, "maxItems": 256, "items": string_1_max(4096)})),
            ]),
            "attester": closed(vec![("resource", text.clone())]),
        },
        "required": ["mode", "runtime", "parameters", "executor", "attester"],
        "additionalProperties": false
    });
    let asset = closed(vec![
        ("path", text.clone()),
        ("content", json!({"type": "string", "maxLength": 8_388_608})),
    ]);
    json!({
        "type": "object",
        "properties": {
            "concept_id": r("concept_id"),
            "contract": contract,
            "asset": asset,
        },
        "required": ["concept_id", "contract"],
        "additionalProperties": false,
        "oneOf": [
            {
                "properties": {"contract": {"properties": {"mode": {"const": "file"}}, "required": ["computation_path"], "not": {"anyOf": [{"required": ["inline_computation"]}, {"required": ["inline_language"]}]}, "additionalProperties": true}},
                "required": ["asset"],
                "additionalProperties": true
            },
            {
                "properties": {"contract": {"properties": {"mode": {"const": "inline"}}, "required": ["inline_computation"], "not": {"required": ["computation_path"]}, "additionalProperties": true}},
                "not": {"required": ["asset"]},
                "additionalProperties": true
            }
        ]
    })
}

/// The source a preview returns for a rootless bundle already in v0.2 form (the example of
/// `expected_source`).
/// The guidance of a missing or mistyped `expected_source` (spec/surface.md §6.3): it is the
/// preview's `source`, passed back unchanged.
pub const EXPECTED_SOURCE_EXAMPLE: crate::tools::def::ArgumentExample =
    crate::tools::def::ArgumentExample {
        name: "expected_source",
        shape: "the JSON object preview_v02_migration returned as source, passed back unchanged",
        item: "source",
        example: target_noop_example,
    };

fn target_noop_example() -> Value {
    json!({
        "requested_selector": "auto", "declaration_present": false,
        "declaration_valid": true, "declaration_raw": "", "declared_version": null,
        "resolved_source": "0.2", "resolution_source": "default",
        "from_version": "0.2", "to_version": "0.2", "transition": "target-noop",
        "candidates": [], "blockers": []
    })
}

/// The common input members of both tools (§3.1) and the apply's (§3.2).
#[must_use]
pub fn input_members(tool: &str, description: &str, apply: bool) -> Map<String, Value> {
    let mut props = vec![
        ("bundle_path", r("bundle_path")),
        (
            "from",
            json!({"enum": ["auto", "0.1", "0.2"], "default": "auto"}),
        ),
        (
            "generated_by",
            json!({
                "type": "string",
                "maxLength": 256,
                "pattern": format!("^$|{}", crate::tools::schema_parts::DOCUMENT_ACTOR_PATTERN),
                "description": format!("Who produced the migrated content, written as generated.by (human:<name>, process:<name> or producer/version). Empty or absent when not given; otherwise {}.", crate::tools::schema_parts::DOCUMENT_ACTOR_TEXT),
                "examples": ["agent/1.0"]
            }),
        ),
        (
            "generated_at",
            json!({"type": "array", "maxItems": 10000, "items": closed(vec![
                ("concept_id", r("concept_id")),
                ("at", json!({"type": "string", "minLength": 1, "maxLength": 64})),
            ])}),
        ),
        (
            "timestamp_conflict_policy",
            json!({"enum": ["reject", "use_generated", "use_timestamp"], "default": "reject"}),
        ),
        (
            "timestamp_policy",
            json!({"enum": ["preserve", "remove_after_copy"]}),
        ),
        (
            "citation_mappings",
            json!({"type": "array", "maxItems": 10000, "items": mapping_item_def()}),
        ),
        (
            "computations",
            json!({"type": "array", "maxItems": 256, "items": computation_item_def()}),
        ),
    ];
    props.push((
        "limit",
        json!({"type": "integer", "minimum": 1, "maximum": 10000, "default": 200,
            "description": "Items per list; see totals."}),
    ));
    props.push((
        "diff_bytes",
        json!({"type": "integer", "minimum": 1, "maximum": 1_048_576, "default": 65536}),
    ));
    props.push((
        "accept_proposals",
        with(
            r("digest"),
            "description",
            json!("A preview's proposals_digest: accept exactly those suggestions."),
        ),
    ));
    props.push(("accept_needs_review", json!({"type": "boolean"})));
    {
        // The apply takes the preview's arguments unchanged: there it is accepted and
        // ignored (it has no proof to include).
        props.push((
            "include_proof",
            json!({"anyOf": [{"type": "boolean"}, {"const": "auto"}], "default": "auto",
                "description": "auto: if at most 64 KiB."}),
        ));
    }
    let mut required = vec!["bundle_path", "timestamp_policy", "citation_mappings"];
    if apply {
        props.push((
            "expected_source",
            with(
                r("applicable_migration_source"),
                "examples",
                json!([target_noop_example()]),
            ),
        ));
        props.push(("proof", r("migration_proof")));
        props.push(("expected_plan_digest", r("digest")));
        props.push((
            "base_revision",
            with(
                r("revision"),
                "description",
                json!("The preview's base_revision; stands for an omitted proof."),
            ),
        ));
        required.push("expected_source");
    }
    let mut m = input_root(tool, description, &required, props);
    if apply {
        // Proof and digest iff the expected source is the transition (§3.2).
        m.insert(
            "allOf".into(),
            json!([{
                "if": {"properties": {"expected_source": {"properties": {"transition": {"const": "v0.1-to-v0.2"}}, "required": ["transition"], "additionalProperties": true}}, "required": ["expected_source"], "additionalProperties": true},
                "then": {"required": ["expected_plan_digest"], "anyOf": [{"required": ["proof"]}, {"required": ["base_revision"]}]},
                "else": {"not": {"anyOf": [{"required": ["proof"]}, {"required": ["expected_plan_digest"]}]}}
            }]),
        );
    }
    let mut example = Map::new();
    example.insert("bundle_path".into(), json!(EXAMPLE_BUNDLE_PATH));
    example.insert("generated_by".into(), json!("agent/1.0"));
    example.insert("timestamp_policy".into(), json!("remove_after_copy"));
    example.insert("citation_mappings".into(), json!([]));
    if apply {
        // A target-noop apply: the preview's source of a rootless bundle already in v0.2 form.
        example.insert("expected_source".into(), target_noop_example());
    }
    m.insert("examples".into(), json!([example]));
    m
}

/// The shared migration schema file of both migration tools (spec/migration.md §4.1, §4.3,
/// §7.2).
pub static SHARED_SCHEMA: SharedSchema = SharedSchema {
    file: "migration_v02.shared.schema.json",
    title: "okf-mcp migration definitions",
    description: "The source resolution, the applicable source tuples and the content-free proof shared by preview_v02_migration and apply_v02_migration (spec/migration.md §4.1, §4.3, §7.2).",
    defs: shared_defs,
};

/// The definitions of the shared migration schema file (`wire::schema_gen`); tool files
/// get copies of those they reference.
#[must_use]
pub fn shared_defs() -> Vec<(&'static str, Value)> {
    vec![
        ("applicable_migration_source", applicable_source_def()),
        ("migration_proof", proof_def()),
        ("migration_source", source_def()),
    ]
}

/// The preview's success object (§5.1).
#[must_use]
pub fn preview_success() -> Value {
    let blocker = closed(vec![
        ("code", string_1_max(128)),
        ("path", string_max(4096)),
        ("location", location()),
        ("message", string_max(4096)),
    ]);
    let action = closed(vec![
        ("code", string_1_max(128)),
        ("path", string_max(4096)),
        ("message", string_max(4096)),
    ]);
    closed_with(
        &[
            "status",
            "source",
            "base_revision",
            "result_revision",
            "plan_digest",
            "affected_paths",
            "diff",
            "diff_truncated",
            "blockers",
            "manual_actions",
            "diagnostics",
            "blockers_truncated",
            "proposed_citation_mappings",
            "proposals_truncated",
            "proof_omitted",
            "totals",
            "diagnostic_counts",
            "proposals_digest",
        ],
        vec![
            ("status", json!({"enum": ["applicable", "noop", "blocked"]})),
            ("source", r("migration_source")),
            ("proof", r("migration_proof")),
            ("proof_omitted", boolean()),
            (
                "totals",
                closed(vec![
                    ("affected_paths", count()),
                    ("blockers", count()),
                    ("manual_actions", count()),
                    ("diagnostics", count()),
                    ("proposed_citation_mappings", count()),
                    ("proposals_needing_review", count()),
                ]),
            ),
            ("diagnostic_counts", counts_def()),
            (
                "proposals_digest",
                json!({"anyOf": [r("digest"), {"const": ""}]}),
            ),
            ("base_revision", r("revision")),
            (
                "result_revision",
                json!({"anyOf": [r("revision"), {"type": "null"}]}),
            ),
            (
                "plan_digest",
                json!({"anyOf": [r("digest"), {"const": ""}]}),
            ),
            ("affected_paths", paths_array()),
            ("diff", json!({"type": "string", "maxLength": 1_048_576})),
            ("diff_truncated", boolean()),
            (
                "blockers",
                json!({"type": "array", "maxItems": 10000, "items": blocker}),
            ),
            (
                "manual_actions",
                json!({"type": "array", "maxItems": 10000, "items": action}),
            ),
            ("diagnostics", diagnostics_array()),
            ("blockers_truncated", boolean()),
            (
                "proposed_citation_mappings",
                json!({"type": "array", "items": mapping_item_def()}),
            ),
            ("proposals_truncated", boolean()),
        ],
    )
}

/// The apply's success object (§5.2).
#[must_use]
pub fn apply_success() -> Value {
    closed(vec![
        ("status", json!({"enum": ["applied", "noop", "rejected"]})),
        ("source", r("migration_source")),
        ("base_revision", r("revision")),
        ("result_revision", r("revision")),
        (
            "plan_digest",
            json!({"anyOf": [r("digest"), {"const": ""}]}),
        ),
        ("changed_paths", paths_array()),
        ("diagnostics", diagnostics_array()),
        (
            "totals",
            closed(vec![("changed_paths", count()), ("diagnostics", count())]),
        ),
        ("diagnostic_counts", counts_def()),
    ])
}

/// `diagnostic_counts` (§12.7 rule 1): `SEVERITY/code` → full count.
fn counts_def() -> Value {
    json!({"type": "object", "additionalProperties": count(),
        "propertyNames": {"pattern": "^(ERROR|WARN|INFO)/.+$"}})
}
