//! The OKF 0.1 → 0.2 migration planner (spec/migration.md). Pure: a parsed bundle and the
//! canonical request in, the migration plan out.
//!
//! - [`request`]: decoding and the canonical input (§3, §9 A).
//! - [`source`]: source resolution and its digest (§4).
//! - [`citations`]: legacy citations sections, claim markers, inline notes, proposals
//!   (§6.2–§6.4, §12).
//! - [`frontmatter`]: `timestamp` → `generated`, `sources`, the root declaration (§6.5).
//! - [`identity`]: operation bytes, change set, proof and plan digest (§7).
//! - [`document`]: one document's transition and target replay, pure functions of its bytes.
//! - [`writes`]: the one write loop of the transition, run by the planner and by the apply's
//!   payload producer ([`payloads`]), each with its own sink.
//! - [`plan`] (this module): the transition (§8 step 5) and the target replay (§6.7) over the
//!   bundle.
//!
//! Memory (§12.5 rule 1): the planner holds one document at a time. Documents whose bytes the
//! capture spilled are read again through the caller's [`Reread`]; each written document is
//! hashed, validated in small batches and added to the diff while the 1 MiB budget lasts,
//! then dropped. The plan keeps paths, digests and findings; the apply produces the payloads
//! again under the store lock by the same write loop (`writes::walk`) from the same bytes.
//!
//! A partly migrated bundle is planned as a transition with the mixed-state tolerance of §8
//! step 5.2: a document whose transition is blocked but whose target replay is clean is
//! already migrated and is left as it is ([`document::settled`]).

pub mod citations;
pub mod document;
pub mod frontmatter;
pub mod identity;
pub mod payloads;
pub mod request;
pub mod source;
pub mod writes;

use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::okf::bundle::{Bundle, Doc};
use crate::okf::capture::CapturedFile;
use crate::okf::grammar::DocClass;
use crate::okf::temporal::Profile;
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::Target;
use crate::plan::diff::Diff;
use crate::plan::stage;
use crate::plan::stream::{bytes_of, BatchStage, Pace, Reread};
use citations::{Blocker, CitationMapping, DocKind};
use request::{MigrationRequest, Proof};
use source::SourceResolution;
use std::collections::{BTreeMap, BTreeSet};
use writes::Targets;

/// Maximum blockers and manual actions returned (§8 step 6, beyond reference: the rest is
/// cut with `blockers_truncated`).
pub const MAX_BLOCKERS: usize = 10_000;
/// Maximum proposed entries (§12.4 rule 4).
pub const MAX_PROPOSED_ENTRIES: usize = 100_000;
/// Maximum bytes of serialised proposals (§12.4 rule 4): 8 MiB.
pub const MAX_PROPOSAL_BYTES: usize = 8 * 1_048_576;

/// A wire blocker `{code, path, location: {start, end}, message}` (§5.1).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WireBlocker {
    pub path: String,
    pub code: String,
    pub start: usize,
    pub end: usize,
    pub message: String,
}

/// A wire manual action `{code, path, message}` (§5.1).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ManualAction {
    pub path: String,
    pub code: String,
    pub message: String,
}

/// What a migration plan says (§5.1 states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationStatus {
    Applicable,
    /// Zero writes in a transition: proof and digest present.
    TransitionNoop,
    /// The bundle is already the target: no proof, `plan_digest: ""`.
    TargetNoop,
    Blocked,
}

/// A built migration plan.
#[derive(Debug, Clone)]
pub struct MigrationPlan {
    pub status: MigrationStatus,
    pub source: SourceResolution,
    pub base_revision: String,
    pub result_revision: Option<String>,
    pub proof: Option<Proof>,
    /// `""` unless applicable or a transition noop.
    pub plan_digest: String,
    pub change_set_id: String,
    pub request_digest: String,
    /// `(path, size, H(new bytes))` of every write, ascending by path; empty unless
    /// applicable. The bytes are not kept: the apply produces them again.
    pub writes: Vec<(String, u64, [u8; 32])>,
    pub changed_refs: Vec<String>,
    pub diff: Diff,
    pub blockers: Vec<WireBlocker>,
    pub blockers_truncated: bool,
    pub manual_actions: Vec<ManualAction>,
    pub diagnostics: Vec<Diagnostic>,
    /// The proposed items within the caps of §12.4 rule 4, in path order.
    pub proposals: Vec<CitationMapping>,
    pub proposals_truncated: bool,
    /// `proposals_digest` over **every** proposed item, the ones the caps left out included
    /// (§12.7 rule 2); `""` without proposals.
    pub proposals_digest: String,
    /// Every proposed item, counted before the caps.
    pub proposals_total: usize,
    /// Proposed items with a `needs_review` entry, counted before the caps (§12.7 rule 8).
    pub proposals_needing_review: usize,
    /// The full counts of `blockers` and `manual_actions` before [`MAX_BLOCKERS`].
    pub blockers_total: usize,
    pub manual_actions_total: usize,
    /// The paths of every proposed item.
    pub proposal_paths: BTreeSet<String>,
    /// The documents whose accepted proposal (`accept_proposals`) holds a `needs_review`
    /// entry, in path order (§12.7 rule 8; set by the caller of [`plan`]).
    pub accepted_needing_review: Vec<String>,
}

impl MigrationPlan {
    /// Whether `path` has a proposal (§12.7 rule 7 sorts the blockers of the others first).
    #[must_use]
    pub fn has_proposal(&self, path: &str) -> bool {
        self.proposal_paths.contains(path)
    }
}

/// The validator options of the target preflight (§6.4 rule 5): strict, OKF 0.2, date
/// profile. The capture of both migration tools is parsed under them.
#[must_use]
pub fn validation_options() -> ValidationOptions {
    ValidationOptions {
        strict: true,
        check_links: false,
        check_orphans: false,
        spec_version: Some(Target::V02),
        temporal_profile: Profile::Date,
        as_of: None,
    }
}

fn kind_of(doc: &Doc<'_>) -> Option<DocKind> {
    match doc.class {
        DocClass::Concept(_) => Some(DocKind::Concept),
        DocClass::Reserved => Some(DocKind::Reserved),
        _ => None,
    }
}

/// Collects blockers and manual actions of one plan.
#[derive(Default)]
struct Findings {
    blockers: BTreeSet<WireBlocker>,
    actions: BTreeSet<ManualAction>,
}

impl Findings {
    fn add(&mut self, path: &str, b: &Blocker) {
        self.blockers.insert(WireBlocker {
            path: path.to_owned(),
            code: b.code.to_owned(),
            start: b.start,
            end: b.end,
            message: b.message.clone(),
        });
        if let Some(a) = b.action {
            self.actions.insert(ManualAction {
                path: path.to_owned(),
                code: a.to_owned(),
                message: action_message(a).to_owned(),
            });
        }
    }
    fn simple(
        &mut self,
        path: &str,
        code: &'static str,
        message: &str,
        action: Option<&'static str>,
    ) {
        self.add(
            path,
            &Blocker {
                code,
                start: 0,
                end: 0,
                message: message.to_owned(),
                action,
            },
        );
    }
}

fn action_message(code: &str) -> &'static str {
    match code {
        "provide_citation_mapping" => "pass a citation_mappings item for this document (the preview's proposed_citation_mappings are unreviewed suggestions, a starting point to review; accept them with accept_proposals)",
        "disambiguate_citation_entry" => "give the colliding entries distinct source ids or select them by legacy_entry",
        "disambiguate_citation_destination" => "pass the intended resource for this entry explicitly",
        "normalize_citations_section" => "rewrite the citations section by hand into the supported entry forms, or pass trailing_content: \"keep\"",
        "reconcile_sources_and_citations" => "remove either the frontmatter sources or the # Citations section by hand",
        "repair_invalid_utf8" => "re-encode the document as UTF-8",
        "provide_generated_at" => "pass generated_at for this concept",
        "provide_generated_by" => "pass generated_by (an actor such as agent/1.0)",
        _ => "see the blocker",
    }
}

/// Plans the migration of `bundle` (parsed under [`validation_options`]) for `req` under the
/// resolution `source`, with the change set on `change_set_base` (the preview: the captured
/// revision). `reread` supplies the bytes of spilled documents.
///
/// # Errors
/// `reread`'s errors; `resource_limit` past the output caps; `operation_cancelled`.
pub fn plan(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    source: SourceResolution,
    change_set_base: &str,
    reread: &Reread<'_>,
    cancel: &crate::cancel::Cancel,
) -> Result<MigrationPlan, ToolError> {
    let capture = bundle.capture;
    let resolution_digest = source.digest();
    let cs = identity::change_set(req, &resolution_digest, change_set_base);
    let mut out = MigrationPlan {
        status: MigrationStatus::Blocked,
        base_revision: capture.revision.clone(),
        result_revision: None,
        proof: None,
        plan_digest: String::new(),
        change_set_id: cs.id.clone(),
        request_digest: cs.request_digest(),
        writes: Vec::new(),
        changed_refs: Vec::new(),
        diff: Diff::default(),
        blockers: Vec::new(),
        blockers_truncated: false,
        manual_actions: Vec::new(),
        diagnostics: Vec::new(),
        proposals: Vec::new(),
        proposals_truncated: false,
        proposals_digest: String::new(),
        proposals_total: 0,
        proposals_needing_review: 0,
        blockers_total: 0,
        manual_actions_total: 0,
        proposal_paths: BTreeSet::new(),
        accepted_needing_review: req.accepted_needing_review.clone(),
        source,
    };
    if !out.source.blockers.is_empty() {
        out.blockers = out
            .source
            .blockers
            .iter()
            .map(|b| WireBlocker {
                path: b.path.clone(),
                code: b.code.clone(),
                start: b.start as usize,
                end: b.end as usize,
                message: b.message.clone(),
            })
            .collect();
        out.blockers_total = out.blockers.len();
        return Ok(out);
    }
    if out.source.is_target_noop() {
        let findings = target_replay(bundle, req, reread, cancel)?;
        if findings.blockers.is_empty() && findings.actions.is_empty() {
            out.status = MigrationStatus::TargetNoop;
            out.result_revision = Some(capture.revision.clone());
        } else {
            finish_findings(&mut out, findings);
        }
        return Ok(out);
    }
    transition(bundle, req, &mut out, &resolution_digest, reread, cancel)?;
    Ok(out)
}

fn finish_findings(out: &mut MigrationPlan, f: Findings) {
    out.blockers_total = f.blockers.len();
    out.manual_actions_total = f.actions.len();
    let total = f.blockers.len().max(f.actions.len());
    // §12.7 rule 7: the findings of documents without a proposal first, each group in the
    // §5.1 order; the cut at MAX_BLOCKERS keeps that order.
    let (mut blockers, rest): (Vec<WireBlocker>, Vec<WireBlocker>) = f
        .blockers
        .into_iter()
        .partition(|b| !out.proposal_paths.contains(&b.path));
    blockers.extend(rest);
    blockers.truncate(MAX_BLOCKERS);
    let (mut actions, rest): (Vec<ManualAction>, Vec<ManualAction>) = f
        .actions
        .into_iter()
        .partition(|a| !out.proposal_paths.contains(&a.path));
    actions.extend(rest);
    actions.truncate(MAX_BLOCKERS);
    out.blockers = blockers;
    out.manual_actions = actions;
    out.blockers_truncated = total > MAX_BLOCKERS;
}

impl<'r> Targets<'r> {
    /// The targets of `req` by path, with the blockers of the computations and mapped paths
    /// that `bundle` lacks added to `f`.
    fn new(req: &'r MigrationRequest, bundle: &Bundle<'_>, f: &mut Findings) -> Self {
        let t = Targets::of(req);
        for c in &req.computations {
            if c.path_mismatch {
                f.simple(
                    &c.path,
                    "migration_computation_asset_path_mismatch",
                    "computation_path does not resolve to asset.path (relative to the concept's directory or /-rooted, query and fragment stripped)",
                    None,
                );
            }
            if bundle.doc(&c.path).and_then(kind_of) != Some(DocKind::Concept) {
                f.simple(
                    &c.path,
                    "migration_document_missing",
                    "the concept of the computation does not exist",
                    None,
                );
            }
        }
        for path in t.mappings.keys().chain(t.explicit.keys()) {
            if bundle.doc(path).and_then(kind_of).is_none() {
                f.simple(
                    path,
                    "migration_document_missing",
                    "the mapped document does not exist",
                    None,
                );
            }
        }
        t
    }
}

/// The target replay of §6.7 over the live documents: its blockers and manual actions.
fn target_replay(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    reread: &Reread<'_>,
    cancel: &crate::cancel::Cancel,
) -> Result<Findings, ToolError> {
    let mut f = Findings::default();
    let pace = Pace::start(cancel, bundle.capture.files.len(), bundle.docs.len());
    let t = Targets::new(req, bundle, &mut f);
    for (i, doc) in bundle.docs.iter().enumerate() {
        pace.next(i)?;
        let Some(kind) = kind_of(doc) else { continue };
        let path = doc.file.path.as_str();
        let bytes = bytes_of(doc.file, reread)?;
        for b in document::replay_document(
            kind,
            &bytes,
            req,
            t.mappings.get(path).copied(),
            t.explicit.get(path).copied(),
            t.computations.get(path).copied(),
        ) {
            f.add(path, &b);
        }
    }
    // §6.7 rule 7: every asset exists with equal bytes.
    for (path, a) in &t.assets {
        match document::asset_outcome(bundle.capture, a) {
            document::AssetOutcome::Identical => {}
            document::AssetOutcome::Write => f.simple(
                path,
                "migration_replay_mismatch",
                "the computation asset does not exist",
                None,
            ),
            document::AssetOutcome::Conflict(_) => f.simple(
                path,
                "migration_replay_mismatch",
                "the computation asset's bytes differ from asset.content",
                None,
            ),
        }
    }
    pace.finish();
    Ok(f)
}

/// What [`StagedWrites::finish`] returns: the base report, the staged report, the writes
/// `(path, size, digest)` ascending, and the diff.
type StagedResult = (
    validate::Report,
    validate::Report,
    Vec<(String, u64, [u8; 32])>,
    Diff,
);

/// The migration's staged writes: the shared batched validation
/// ([`crate::plan::stream::BatchStage`]) plus the diff sections of the preview.
struct StagedWrites<'b, 'c> {
    stage: BatchStage<'b, 'c>,
    /// Diff sections in path order while their total stays within the cap (plus one), with
    /// the total of every section seen.
    sections: Vec<(String, String)>,
    sections_bytes: usize,
    diff_complete: bool,
    /// The diff's byte budget (`diff_bytes`, §12.7 rule 1).
    diff_cap: usize,
}

impl<'b, 'c> StagedWrites<'b, 'c> {
    fn new(bundle: &'b Bundle<'c>, diff_cap: usize) -> Self {
        StagedWrites {
            stage: BatchStage::new(bundle, validation_options()),
            sections: Vec::new(),
            sections_bytes: 0,
            diff_complete: true,
            diff_cap,
        }
    }

    fn section(&mut self, path: &str, old: Option<&str>, new: &str) {
        if self.diff_complete {
            let section =
                crate::plan::diff::file_section(&crate::plan::diff::FileChange { path, old, new });
            self.sections_bytes += section.len();
            self.sections.push((path.to_owned(), section));
            if self.sections_bytes > 2 * self.diff_cap {
                self.diff_complete = false;
            }
        }
    }

    /// A created asset (§6.1 rule 1): digest and diff; it is not a document, so it is not
    /// validated.
    fn push_asset(&mut self, path: &str, content: &str) {
        self.stage.push_unvalidated(path, content.as_bytes());
        self.section(path, None, content);
    }

    fn push(&mut self, path: &str, old: &[u8], new: String) -> Result<(), ToolError> {
        self.section(path, std::str::from_utf8(old).ok(), &new);
        self.stage.push(path, new.into_bytes())
    }

    /// The base and staged reports of the whole candidate bundle, the writes and the diff.
    fn finish(mut self) -> Result<StagedResult, ToolError> {
        let (base, staged, digests) = self.stage.finish()?;
        self.sections
            .sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let texts: Vec<String> = self.sections.into_iter().map(|(_, t)| t).collect();
        let mut diff = crate::plan::diff::assemble_within(&texts, self.diff_cap);
        diff.truncated |= !self.diff_complete;
        Ok((base, staged, digests, diff))
    }
}

/// The planner's [`writes::Sink`]: records each document's blockers, notices and proposal,
/// and stages, validates and diffs its write ([`StagedWrites`]).
struct PlanSink<'s, 'b, 'c> {
    findings: Findings,
    notices: Vec<Diagnostic>,
    proposals: Vec<CitationMapping>,
    staged: StagedWrites<'b, 'c>,
    pace: &'s Pace<'s>,
}

impl writes::Sink<ToolError> for PlanSink<'_, '_, '_> {
    fn next(&mut self, i: usize) -> Result<(), ToolError> {
        self.pace.next(i)
    }

    fn document(&mut self, path: &str, w: writes::Worked<'_>) -> Result<(), ToolError> {
        absorb(&mut self.findings, &mut self.notices, path, &w.outcome);
        self.proposals.extend(w.proposal);
        if let Some(text) = w.outcome.text {
            self.staged.push(path, &w.bytes, text)?;
        }
        Ok(())
    }

    fn asset(
        &mut self,
        path: &str,
        content: &str,
        outcome: document::AssetOutcome,
    ) -> Result<(), ToolError> {
        match outcome {
            document::AssetOutcome::Write => self.staged.push_asset(path, content),
            document::AssetOutcome::Identical => {}
            document::AssetOutcome::Conflict(b) => self.findings.add(path, &b),
        }
        Ok(())
    }
}

/// The transition (§8 step 5) into `out`.
fn transition<'b, 'c>(
    bundle: &'b Bundle<'c>,
    req: &MigrationRequest,
    out: &mut MigrationPlan,
    resolution_digest: &str,
    reread: &Reread<'_>,
    cancel: &crate::cancel::Cancel,
) -> Result<(), ToolError> {
    let capture = bundle.capture;
    let mut f = Findings::default();
    let notices: Vec<Diagnostic> = Vec::new();
    let t = Targets::new(req, bundle, &mut f);
    if req.label_collision {
        for m in &req.citation_mappings {
            let mut seen: BTreeMap<String, &str> = BTreeMap::new();
            for e in &m.entries {
                let label = crate::okf::markdown::normalise_label(&e.source_id);
                if seen.get(&label).is_some_and(|id| *id != e.source_id) {
                    f.simple(
                        &m.path,
                        "normalized_footnote_label_collision",
                        "two source ids of this document have the same normalised footnote label",
                        Some("disambiguate_citation_entry"),
                    );
                }
                seen.entry(label).or_insert(&e.source_id);
            }
        }
    }
    let staged = StagedWrites::new(bundle, req.view.diff_bytes);
    let pace = Pace::start(cancel, capture.files.len(), bundle.docs.len());
    let mut sink = PlanSink {
        findings: f,
        notices,
        proposals: Vec::new(),
        staged,
        pace: &pace,
    };
    let read = |file: &'c CapturedFile| bytes_of(file, reread);
    writes::walk(capture, req, &t, &read, true, &mut sink)?;
    let PlanSink {
        findings: mut f,
        mut notices,
        proposals,
        staged,
        ..
    } = sink;
    pace.finish();
    set_proposals(out, proposals);
    let (base_report, staged_report, writes, diff) = staged.finish()?;
    // The target preflight (§6.4 rule 5, §12.3): pre-existing errors of documents the
    // migration does not write become `preexisting_error` warnings.
    if !writes.is_empty() {
        let written: BTreeSet<&str> = writes.iter().map(|(p, _, _)| p.as_str()).collect();
        let verdict = stage::judge(&base_report, &staged_report, &written);
        for d in &verdict.blocking {
            f.add(
                &d.file,
                &Blocker {
                    code: "migration_target_preflight_failed",
                    start: 0,
                    end: 0,
                    message: format!("the migrated bundle fails validation: {}", d.code),
                    action: None,
                },
            );
        }
        notices.extend(verdict.projected);
    }
    if !f.blockers.is_empty() {
        finish_findings(out, f);
        out.diagnostics = stage::finish_diagnostics(notices);
        return Ok(());
    }
    let result_revision = crate::digest::revision(
        capture
            .files
            .iter()
            .filter(|x| {
                writes
                    .binary_search_by(|w| w.0.as_bytes().cmp(x.path.as_bytes()))
                    .is_err()
            })
            .map(|x| (x.path.as_str(), &x.digest))
            .chain(writes.iter().map(|(p, _, d)| (p.as_str(), d))),
    );
    let changed_refs: Vec<String> = writes
        .iter()
        .filter_map(|(p, _, _)| match crate::okf::grammar::classify(p) {
            DocClass::Concept(id) => Some(id),
            _ => None,
        })
        .collect();
    let proof = identity::build_proof(
        &out.request_digest,
        resolution_digest,
        &capture.revision,
        &result_revision,
        capture.files.iter().map(|x| x.path.clone()).collect(),
        writes
            .iter()
            .map(|(p, _, d)| (p.clone(), crate::digest::hex(d)))
            .collect(),
        changed_refs.clone(),
    );
    out.plan_digest = identity::plan_digest(&proof);
    out.result_revision = Some(result_revision);
    out.proof = Some(proof);
    if writes.is_empty() {
        out.status = MigrationStatus::TransitionNoop;
        return Ok(());
    }
    out.status = MigrationStatus::Applicable;
    out.diff = diff;
    out.changed_refs = changed_refs;
    out.writes = writes;
    out.diagnostics = stage::finish_diagnostics(notices);
    Ok(())
}

/// Records every proposed item of a transition (§12.4, §12.7 rules 2 and 8): sorted by path,
/// digested and counted whole, then kept within the caps of §12.4 rule 4 (whole documents in
/// path order; `proposals_truncated` when an item is left out).
fn set_proposals(out: &mut MigrationPlan, mut all: Vec<CitationMapping>) {
    all.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    out.proposals_digest = identity::proposals_digest(&all);
    out.proposals_total = all.len();
    out.proposals_needing_review = all.iter().filter(|m| needs_review(m)).count();
    out.proposal_paths = all.iter().map(|m| m.path.clone()).collect();
    let (kept, truncated) = within_caps(all);
    out.proposals = kept;
    out.proposals_truncated |= truncated;
}

/// The leading items of `all` within [`MAX_PROPOSED_ENTRIES`] entries and
/// [`MAX_PROPOSAL_BYTES`] of serialised items (§12.4 rule 4), and whether any was left out.
fn within_caps(all: Vec<CitationMapping>) -> (Vec<CitationMapping>, bool) {
    let mut entries = 0usize;
    let mut bytes = 0usize;
    let mut kept = Vec::with_capacity(all.len());
    for m in all {
        entries += m.entries.len();
        bytes += serde_json::to_vec(&request::mapping_json(&m)).map_or(usize::MAX, |v| v.len());
        if entries > MAX_PROPOSED_ENTRIES || bytes > MAX_PROPOSAL_BYTES {
            return (kept, true);
        }
        kept.push(m);
    }
    (kept, false)
}

/// Whether a proposed item has an entry that needs a human look (§12.7 rule 8).
#[must_use]
pub fn needs_review(m: &CitationMapping) -> bool {
    m.entries.iter().any(|e| e.needs_review)
}

/// Every proposed item of a transition of `bundle` under `req`, in path order: exactly the
/// items [`plan`] proposes for the documents `req` does not map (§12.4 rule 1), without
/// staging anything (the `accept_proposals` check of §12.7 rule 3).
///
/// # Errors
/// `reread`'s errors; `operation_cancelled`.
pub fn proposals(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    reread: &Reread<'_>,
    cancel: &crate::cancel::Cancel,
) -> Result<Vec<CitationMapping>, ToolError> {
    let mut ignored = Findings::default();
    let t = Targets::new(req, bundle, &mut ignored);
    let mut all = Vec::new();
    let work = |doc: &Doc<'_>| -> Result<Option<CitationMapping>, ToolError> {
        let Some(kind) = kind_of(doc) else {
            return Ok(None);
        };
        let path = doc.file.path.as_str();
        if t.mappings.contains_key(path) {
            return Ok(None);
        }
        let bytes = bytes_of(doc.file, reread)?;
        // The transition proposes for exactly the unmapped documents with one proposable
        // section, none of which is settled ([`document::propose`]); the root index is
        // proposed as a reserved document.
        let kind = if path == "index.md" {
            DocKind::Reserved
        } else {
            kind
        };
        Ok(document::propose(path, kind, &bytes))
    };
    crate::okf::par::stream(&bundle.docs, work, |_, _, item| {
        cancel.check()?;
        all.extend(item?);
        Ok(())
    })?;
    all.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Ok(all)
}

/// Adds one document's blockers and notices.
fn absorb(f: &mut Findings, notices: &mut Vec<Diagnostic>, path: &str, o: &document::DocOutcome) {
    for b in &o.blockers {
        f.add(path, b);
    }
    for n in &o.notices {
        notices.push(Diagnostic::new(n.code, Severity::Warn, n.message.clone()).with_file(path));
    }
}

#[cfg(test)]
mod staged_tests {
    use super::*;
    use crate::okf::capture::Capture;

    /// MIG-42: items the 8 MiB cap leaves out of the answer are still covered by
    /// `proposals_digest`, which is computed over the whole set before the cut.
    #[test]
    fn mig_42_the_caps_cut_whole_items_and_the_digest_covers_the_rest() {
        let item = |i: usize| CitationMapping {
            path: format!("c/d{i}.md"),
            entries: (1..=1000)
                .map(|n| citations::MappingEntry {
                    legacy_number: Some(n),
                    source_id: format!("s{n}"),
                    resource: Some("r".repeat(4000)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let all: Vec<CitationMapping> = (0..3).map(item).collect();
        let (kept, truncated) = within_caps(all.clone());
        assert!(truncated);
        assert_eq!(
            kept.len(),
            2,
            "two items of about 4 MB fit in 8 MiB, not three"
        );
        assert_eq!(kept[..], all[..2]);
        assert_ne!(
            identity::proposals_digest(&all),
            identity::proposals_digest(&kept)
        );
        let (small, cut) = within_caps(all[..1].to_vec());
        assert!(!cut);
        assert_eq!(small.len(), 1);
        assert_eq!(identity::proposals_digest(&[]), "");
    }

    /// A concept of the base (v0.1 `timestamp`; every fifth without `title`, a finding of
    /// the strict 0.2 validation) and its written form (every seventh without `type`).
    fn concept(i: usize, written: bool) -> Vec<u8> {
        let ty = if written && i.is_multiple_of(7) {
            ""
        } else {
            "type: note\n"
        };
        let title = if i.is_multiple_of(5) {
            String::new()
        } else {
            format!("title: C{i}\n")
        };
        let stamp = if written {
            "generated: 2026-05-28\n"
        } else {
            "timestamp: '2026-05-28T22:43:59+00:00'\n"
        };
        format!("---\n{ty}{title}description: d\n{stamp}---\n# C{i}\n").into_bytes()
    }

    /// The staged report of writes pushed in several batches equals the one
    /// `validate_staged` returns for all of them at once against the full base report.
    #[test]
    fn batches_against_a_findingless_base_give_the_staged_report_of_all_writes() {
        let n = 3 * crate::plan::stream::BATCH_FILES + 5;
        let mut files: Vec<(String, Vec<u8>)> = (0..n)
            .map(|i| (format!("c/d{i:04}.md"), concept(i, false)))
            .collect();
        files.push(("r/untyped.md".into(), b"---\ntitle: R\n---\n# R\n".to_vec()));
        files.push(("index.md".into(), b"# Root\n".to_vec()));
        let capture = Capture::from_files(files);
        let bundle =
            validate::parse_for_validation(&capture, &validation_options()).expect("bundle");
        let writes: Vec<(String, Vec<u8>)> = (0..n)
            .filter(|i| i % 3 != 1)
            .map(|i| (format!("c/d{i:04}.md"), concept(i, true)))
            .chain([(
                "index.md".to_owned(),
                b"---\nokf_version: \"0.2\"\n---\n# Root\n".to_vec(),
            )])
            .collect();
        let mut staged = StagedWrites::new(&bundle, crate::plan::diff::DIFF_CAP);
        for (p, b) in &writes {
            let old = capture
                .get(p)
                .map(|f| f.bytes().to_vec())
                .unwrap_or_default();
            staged
                .push(p, &old, String::from_utf8(b.clone()).expect("utf8"))
                .expect("push");
        }
        let (base, got, digests, _) = staged.finish().expect("finish");
        let opts = validation_options();
        assert_eq!(base, validate::validate_bundle(&bundle, &opts));
        let want = validate::validate_staged(&bundle, &base, &writes, &opts).expect("staged");
        assert!(want.findings.iter().any(|f| f.file == "r/untyped.md"));
        assert!(want.findings.iter().any(|f| f.file == "c/d0007.md"));
        assert!(want.findings.iter().any(|f| f.file == "c/d0001.md"));
        assert_eq!(got, want);
        assert_eq!(digests.len(), writes.len());
    }
}
