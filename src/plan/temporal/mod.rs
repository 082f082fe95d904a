//! The date → instant temporal upgrade planner (spec/temporal.md §3–§5, §9, §10). Pure: a
//! parsed bundle and the decoded request in, the upgrade plan out.
//!
//! - [`request`]: decoding and the pure checks (§5 step 2, §6 step 1).
//! - [`fields`]: classification of the temporal fields of one concept (§3) and the rewrite of
//!   their scalar tokens (§9).
//! - [`identity`]: operation bytes, change set, namespace (§10).
//! - [`writes`]: the one write loop over the concepts (§5 steps 4–7), run by the planner and
//!   by the apply's payload producer ([`payloads`]), each with its own sink.
//! - [`plan`] (this module): the preview algorithm of §5 steps 4–8 over the bundle.
//!
//! Memory (as the migration, spec/migration.md §12.5 rule 1): one concept at a time. A
//! document whose bytes the capture spilled is read again through the caller's [`Reread`];
//! a rewritten document is hashed and validated in small batches
//! ([`crate::plan::stream::BatchStage`]), then dropped. The plan keeps paths, digests and the
//! `unresolved` list; the apply produces the payloads again under the store lock by the same
//! write loop ([`writes::walk`]) on the same bytes.

pub mod fields;
pub mod identity;
pub mod payloads;
pub mod request;
pub mod writes;

use crate::cancel::Cancel;
use crate::envelope::ToolError;
use crate::okf::bundle::{Bundle, Doc};
use crate::okf::capture::CapturedFile;
use crate::okf::temporal::Profile;
use crate::okf::validate::ValidationOptions;
use crate::okf::version::{self, Target};
use crate::plan::identity::{plan_digest_hashed, PlanInputs, Ref};
use crate::plan::stage;
use crate::plan::stream::{bytes_of, BatchStage, Pace, Reread};
use request::{failure, TemporalRequest};
use std::collections::BTreeSet;
use writes::Unresolved;

/// The validator options of the staged validation (§5 step 8): strict, OKF 0.2, instant
/// profile. The capture of both temporal tools is parsed under them.
#[must_use]
pub fn validation_options() -> ValidationOptions {
    ValidationOptions {
        strict: true,
        check_links: false,
        check_orphans: false,
        spec_version: Some(Target::V02),
        temporal_profile: Profile::Instant,
        as_of: None,
    }
}

/// The status of a preview (§5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeStatus {
    /// Every legacy date has a mapping and the plan validates: the digest may be applied.
    Ready,
    /// Some legacy dates have no mapping (`unresolved`).
    Incomplete,
    /// No legacy dates at all.
    Noop,
}

impl UpgradeStatus {
    /// Wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            UpgradeStatus::Ready => "ready",
            UpgradeStatus::Incomplete => "incomplete",
            UpgradeStatus::Noop => "noop",
        }
    }
}

/// A built upgrade plan.
#[derive(Debug, Clone)]
pub struct UpgradePlan {
    pub status: UpgradeStatus,
    /// The captured revision.
    pub base_revision: String,
    /// The planned revision for `ready`; the base revision otherwise.
    pub result_revision: String,
    /// Observation order (§3); empty unless `incomplete`.
    pub unresolved: Vec<Unresolved>,
    /// `Some` only for `ready`.
    pub plan_digest: Option<String>,
    pub request_digest: String,
    pub change_set_id: String,
    /// `(path, size, H(new bytes))`, ascending by path; empty unless `ready`.
    pub writes: Vec<(String, u64, [u8; 32])>,
    /// The upgraded concept ids, ascending.
    pub changed_refs: Vec<String>,
    /// The unified diff of the rewrites for the readable text (spec/surface.md §18.2 rule 2),
    /// cut by whole file sections at [`crate::plan::diff::DIFF_CAP`]; empty unless `ready`.
    pub diff: crate::plan::diff::Diff,
}

/// §5 step 4: the effective version is 0.2 and a declared version, if any, is 0.2.
fn check_version(bundle: &Bundle<'_>, apply: bool) -> Result<(), ToolError> {
    let decl = version::declaration(bundle);
    let v = version::resolve(&decl, None);
    let declared_ok = v.declared.as_deref().is_none_or(|d| d == "0.2");
    if v.effective == Some("0.2") && declared_ok {
        return Ok(());
    }
    Err(failure(
        apply,
        "temporal_version_unsupported",
        "the temporal upgrade needs an OKF 0.2 bundle (declared okf_version \"0.2\" or no declaration); migrate a 0.1 bundle with preview_v02_migration first",
        "index.md",
    ))
}

/// The concept documents in ascending byte order of concept id (§3).
fn concepts<'b, 'c>(bundle: &'b Bundle<'c>) -> Vec<(&'b str, &'b Doc<'c>)> {
    let mut v: Vec<(&str, &Doc<'_>)> = bundle.concepts().collect();
    v.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    v
}

/// The planner's [`writes::Sink`]: stages and validates each rewrite
/// ([`BatchStage`]) and keeps its diff section while the sections fit twice the cap (then the
/// diff is cut anyway), so memory stays bounded on a large upgrade.
struct PlanSink<'s, 'b, 'c> {
    staged: BatchStage<'b, 'c>,
    sections: Vec<String>,
    sections_bytes: usize,
    changed_refs: Vec<String>,
    /// Whether the diff is wanted (a preview).
    diff: bool,
    pace: &'s Pace<'s>,
}

impl writes::Sink<ToolError> for PlanSink<'_, '_, '_> {
    fn next(&mut self, i: usize) -> Result<(), ToolError> {
        self.pace.next(i)
    }

    fn fail(&self, e: ToolError) -> ToolError {
        e
    }

    fn write(&mut self, id: &str, path: &str, old: &[u8], new: Vec<u8>) -> Result<(), ToolError> {
        if self.diff && self.sections_bytes <= 2 * crate::plan::diff::DIFF_CAP {
            let section = crate::plan::diff::file_section(&crate::plan::diff::FileChange {
                path,
                old: std::str::from_utf8(old).ok(),
                new: &String::from_utf8_lossy(&new),
            });
            self.sections_bytes += section.len();
            self.sections.push(section);
        }
        self.staged.push(path, new)?;
        self.changed_refs.push(id.to_owned());
        Ok(())
    }
}

/// Plans the upgrade of `bundle` (parsed under [`validation_options`]) for `req`, with the
/// change set on `change_set_base` (the preview: the captured revision). `apply` selects the
/// failure message (§5 step 9, §7). `reread` supplies the bytes of spilled documents.
///
/// Order of the checks (§5): the version; then each concept in id order, each value in
/// observation order (malformed field, unsupported value, `from` ≠ observed); then mappings
/// that matched no legacy date (stray); then `incomplete`; then the rewrites' presentation;
/// `noop`; the staged validation; `ready`.
///
/// # Errors
/// `operation_rejected` (`temporal upgrade preview failed` / `… apply failed`) with one
/// `temporal_*` `ERROR` diagnostic naming the cause (the staged-validation failure adds the
/// validator's blocking diagnostics and `staged_validation_failed`); `operation_cancelled`;
/// `reread`'s errors.
pub fn plan<'b>(
    bundle: &Bundle<'b>,
    req: &TemporalRequest,
    change_set_base: &str,
    reread: &Reread<'_>,
    cancel: &Cancel,
    apply: bool,
) -> Result<UpgradePlan, ToolError> {
    let capture = bundle.capture;
    let cs = identity::change_set(req, change_set_base);
    let mut out = UpgradePlan {
        status: UpgradeStatus::Noop,
        base_revision: capture.revision.clone(),
        result_revision: capture.revision.clone(),
        unresolved: Vec::new(),
        plan_digest: None,
        request_digest: cs.request_digest(),
        change_set_id: cs.id.clone(),
        writes: Vec::new(),
        changed_refs: Vec::new(),
        diff: crate::plan::diff::Diff::default(),
    };
    check_version(bundle, apply)?;
    let staged = BatchStage::new(bundle, validation_options());
    let docs: Vec<(&str, &CapturedFile)> = concepts(bundle)
        .into_iter()
        .map(|(id, doc)| (id, doc.file))
        .collect();
    let pace = Pace::start(cancel, capture.files.len(), docs.len());
    let mut sink = PlanSink {
        staged,
        sections: Vec::new(),
        sections_bytes: 0,
        changed_refs: Vec::new(),
        diff: !apply,
        pace: &pace,
    };
    let read = |f: &'b CapturedFile| bytes_of(f, reread);
    let walked = writes::walk(&docs, req, apply, &read, &mut sink)?;
    let PlanSink {
        staged,
        sections,
        mut changed_refs,
        ..
    } = sink;
    out.unresolved = walked.unresolved;
    let consumed = walked.consumed;
    let deferred = walked.deferred;
    pace.finish();
    if let Some(m) = req
        .mappings
        .iter()
        .find(|m| !consumed.contains(&(m.concept.as_str(), m.path.as_str())))
    {
        return Err(failure(
            apply,
            "temporal_mapping_stray",
            format!(
                "the mapping of {} names no legacy date: the concept does not exist or does not parse, or the field is absent or already an instant",
                m.path
            ),
            &format!("{}.md", m.concept),
        ));
    }
    if !out.unresolved.is_empty() {
        out.status = UpgradeStatus::Incomplete;
        return Ok(out);
    }
    if let Some(e) = deferred {
        return Err(e);
    }
    if staged.is_empty() {
        return Ok(out);
    }
    let (base_report, staged_report, writes) = staged.finish()?;
    let written: BTreeSet<&str> = writes.iter().map(|(p, _, _)| p.as_str()).collect();
    let verdict = stage::judge(&base_report, &staged_report, &written);
    if !verdict.blocking.is_empty() {
        let mut e = failure(
            apply,
            "staged_validation_failed",
            "the upgraded bundle fails strict OKF 0.2 validation under instant-0b87c52; fix the mappings (e.g. a usage_window whose from is after its to) and preview again",
            "",
        );
        e.diagnostics
            .extend(stage::finish_diagnostics(verdict.blocking));
        return Err(e);
    }
    let result_revision = crate::digest::revision(
        capture
            .files
            .iter()
            .filter(|x| !written.contains(x.path.as_str()))
            .map(|x| (x.path.as_str(), &x.digest))
            .chain(writes.iter().map(|(p, _, d)| (p.as_str(), d))),
    );
    let hexes: Vec<(String, String)> = writes
        .iter()
        .map(|(p, _, d)| (p.clone(), crate::digest::hex(d)))
        .collect();
    let hashed: Vec<(&str, &str)> = hexes
        .iter()
        .map(|(p, h)| (p.as_str(), h.as_str()))
        .collect();
    let digest = plan_digest_hashed(
        &PlanInputs {
            request_digest: &out.request_digest,
            change_set_base,
            base_revision: &capture.revision,
            result_revision: &result_revision,
            reads: capture.files.iter().map(|f| f.path.as_str()).collect(),
            writes: Vec::new(),
            affected_refs: changed_refs.iter().map(|c| Ref::concept(c)).collect(),
        },
        &hashed,
    )
    .map_err(|e| failure(apply, "plan_mismatch", e.to_string(), ""))?;
    changed_refs.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    out.status = UpgradeStatus::Ready;
    out.result_revision = result_revision;
    out.plan_digest = Some(digest);
    out.writes = writes;
    out.changed_refs = changed_refs;
    out.diff = crate::plan::diff::assemble(&sections);
    Ok(out)
}
