//! Shared staging of every workflow's plan: what happens between "the workflow's edits are
//! known" and "the plan can be shown or authorised". Pure: a capture and the edited bytes in,
//! the plan's parts out.
//!
//! - [`changed_writes`]: the edited documents whose bytes differ from the capture
//!   (spec/concept-patch.md §3 rule 4: unchanged writes are dropped).
//! - [`validate_staged`]: the incremental validation of the staged bundle and the
//!   "do no harm" [`judge`] of spec/concept-patch.md §3 rule 3 (README R32).
//! - [`finish_diagnostics`]: the wire order of diagnostics (§5.3).
//! - [`seal`]: result revision (spec/store.md §5 rule 3), changed refs (§5 rule 4), plan digest
//!   (§5) and the unified diff (spec/concept-patch.md §5.4).
//! - [`Plan`] / [`PlanStatus`]: the plan every workflow returns to the spine
//!   (`crate::tools::spine`).

use crate::digest;
use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::okf::bundle::Bundle;
use crate::okf::capture::Capture;
use crate::okf::finding::Finding;
use crate::okf::grammar::{classify, DocClass};
use crate::okf::validate::{self, Report, ValidationOptions};
use crate::okf::version::Declaration;
use crate::plan::diff::{self, Diff, FileChange};
use crate::plan::identity::{self, PlanInputs, PlanWrite, Ref};
use crate::plan::stream::Writes;
use std::collections::{BTreeMap, BTreeSet};

/// Maximum `preexisting_error` warnings before `preexisting_errors_truncated`.
pub const MAX_PREEXISTING: usize = 100;

/// The outcome status of a plan (spec/concept-patch.md §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStatus {
    /// At least one file changes; the plan digest may be applied.
    Applicable,
    /// Zero writes: result revision = base revision.
    Noop,
    /// An operation or the staged validation refused the change; no committable result.
    Rejected,
}

impl PlanStatus {
    /// Wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Applicable => "applicable",
            PlanStatus::Noop => "noop",
            PlanStatus::Rejected => "rejected",
        }
    }
}

/// What one operation of a concept patch did to the bytes of the document it edits, in the
/// staged order (spec/surface.md §18.2 rule 2: the preview's per-operation lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpEffect {
    /// The operation changed its document's bytes (compared with the state before it).
    Changed,
    /// The operation left its document's bytes as they were.
    NoChange,
    /// The operation was refused with this rejection code; later operations did not run.
    Rejected(String),
    /// An earlier operation was refused, so this one did not run.
    NotRun,
}

impl OpEffect {
    /// The line text: `changed`, `no change`, `rejected: <code>`, `not run`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            OpEffect::Changed => "changed".to_owned(),
            OpEffect::NoChange => "no change".to_owned(),
            OpEffect::Rejected(code) => format!("rejected: {code}"),
            OpEffect::NotRun => "not run (an earlier operation was rejected)".to_owned(),
        }
    }
}

/// A built plan of any workflow.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The outcome (§5.1).
    pub status: PlanStatus,
    /// The captured revision.
    pub base_revision: String,
    /// `None` only when rejected.
    pub result_revision: Option<String>,
    /// The change set's request digest (spec/store.md §4).
    pub request_digest: String,
    /// The change-set id (spec/concept-patch.md §7.2).
    pub change_set_id: String,
    /// The plan digest for applicable/noop; the request digest when rejected.
    pub plan_digest: String,
    /// Written files, ascending by path; empty unless applicable: their bytes
    /// ([`Writes::Resident`], the concept patch) or, for a streamed plan, only their paths,
    /// sizes and digests ([`Writes::Streamed`]: the bytes are produced again at commit time,
    /// spec/migration.md §12.5 rule 2).
    pub writes: Writes,
    /// Concept ids of written concept files, sorted.
    pub changed_refs: Vec<String>,
    /// The unified diff of the writes, cut by whole file sections past 1 MiB (§5.4).
    pub diff: Diff,
    /// Wire diagnostics, sorted (§5.3).
    pub diagnostics: Vec<Diagnostic>,
    /// One entry per request operation for a concept patch ([`OpEffect`]); empty for the
    /// workflows without operations (migration, temporal upgrade).
    pub effects: Vec<OpEffect>,
}

/// The edited documents of `overlay` (path → new text) whose bytes differ from the file of
/// the same path in `capture` (or that are new), ascending by path (spec/concept-patch.md
/// §3 rule 4).
#[must_use]
pub fn changed_writes(
    capture: &Capture,
    overlay: BTreeMap<String, String>,
) -> Vec<(String, Vec<u8>)> {
    overlay
        .into_iter()
        .filter(|(p, t)| capture.get(p).is_none_or(|f| f.bytes() != t.as_bytes()))
        .map(|(p, t)| (p, t.into_bytes()))
        .collect()
}

/// The staged-validation verdict of spec/concept-patch.md §3 rule 3 (README R32).
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// Non-blocking findings: staged `WARN`/`INFO` plus one `preexisting_error` `WARN` per
    /// untouched document whose `ERROR`s already existed in the base.
    pub projected: Vec<Diagnostic>,
    /// Blocking `ERROR`s: in written documents, bundle-level, or caused by the change.
    pub blocking: Vec<Diagnostic>,
}

/// Validates `bundle` + `writes` incrementally under `opts` ([`validate::validate_staged`];
/// `base_report` is `validate_bundle(bundle, opts)`) and judges it against the base
/// ([`judge`]). Returns the staged report and the verdict.
///
/// # Errors
/// `resource_limit` / `invalid_yaml_graph` when a written document has a YAML limit or graph
/// fault (spec/store.md §3.4).
pub fn validate_staged(
    bundle: &Bundle<'_>,
    base_report: &Report,
    writes: &[(String, Vec<u8>)],
    opts: &ValidationOptions,
) -> Result<(Report, Verdict), ToolError> {
    let staged = validate::validate_staged(bundle, base_report, writes, opts)
        .map_err(|f| f.to_tool_error())?;
    let written: BTreeSet<&str> = writes.iter().map(|(p, _)| p.as_str()).collect();
    let verdict = judge(base_report, &staged, &written);
    Ok((staged, verdict))
}

/// Compares the base and staged validation reports ("do no harm", §3 rule 3): an `ERROR`
/// blocks when it is in a written document, bundle-level (`version_declaration_invalid`,
/// `version_assertion_failed`) or absent from the base by (`file`, `code`).
#[must_use]
pub fn judge(base: &Report, staged: &Report, written: &BTreeSet<&str>) -> Verdict {
    let base_errors: BTreeSet<(&str, &str)> = base
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.file.as_str(), f.code))
        .collect();
    let declared_01 = matches!(&base.declaration, Declaration::Valid(v) if v == "0.1");
    let mut projected: Vec<Diagnostic> = Vec::new();
    let mut blocking: Vec<Diagnostic> = Vec::new();
    let mut preexisting: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for f in &staged.findings {
        if f.severity != Severity::Error {
            projected.push(finding_diag(f, declared_01));
            continue;
        }
        let bundle_level = matches!(
            f.code,
            "version_declaration_invalid" | "version_assertion_failed"
        );
        let caused = !base_errors.contains(&(f.file.as_str(), f.code));
        if written.contains(f.file.as_str()) || bundle_level || caused {
            blocking.push(finding_diag(f, declared_01));
        } else {
            preexisting
                .entry(f.file.as_str())
                .or_default()
                .insert(f.code);
        }
    }
    for (i, (file, codes)) in preexisting.iter().enumerate() {
        if i == MAX_PREEXISTING {
            projected.push(Diagnostic::new(
                "preexisting_errors_truncated",
                Severity::Warn,
                "more documents hold errors that existed before this change",
            ));
            break;
        }
        let names: Vec<&str> = codes.iter().copied().collect();
        projected.push(
            Diagnostic::new(
                "preexisting_error",
                Severity::Warn,
                format!(
                    "this document already had errors before the change: {}",
                    names.join(", ")
                ),
            )
            .with_file(*file),
        );
    }
    Verdict {
        projected,
        blocking,
    }
}

fn finding_diag(f: &Finding, declared_01: bool) -> Diagnostic {
    let message = if f.code == "version_assertion_failed" && declared_01 {
        "the bundle declares 0.1; migrate it with preview_v02_migration first".to_owned()
    } else {
        f.message.clone().into_owned()
    };
    Diagnostic::new(f.code, f.severity, message).with_file(f.file.clone())
}

/// Sorts by (severity, file, code, message) and removes exact duplicates (§5.3).
#[must_use]
pub fn finish_diagnostics(mut d: Vec<Diagnostic>) -> Vec<Diagnostic> {
    d.sort_by(|a, b| {
        (
            a.severity,
            a.file.as_bytes(),
            a.code.as_bytes(),
            a.message.as_bytes(),
        )
            .cmp(&(
                b.severity,
                b.file.as_bytes(),
                b.code.as_bytes(),
                b.message.as_bytes(),
            ))
    });
    d.dedup();
    d
}

/// The result revision of `capture` with `writes` applied (spec/store.md §5 rule 3, §3.6).
#[must_use]
pub fn result_revision(capture: &Capture, writes: &[(String, Vec<u8>)]) -> String {
    digest::revision_with(
        capture.files.iter().map(|f| (f.path.as_str(), &f.digest)),
        writes,
    )
}

/// The concept ids of the written concept files (spec/store.md §5 rule 4), in write order.
#[must_use]
pub fn changed_refs(writes: &[(String, Vec<u8>)]) -> Vec<String> {
    writes
        .iter()
        .filter_map(|(p, _)| match classify(p) {
            DocClass::Concept(id) => Some(id),
            _ => None,
        })
        .collect()
}

/// The parts of a plan that follow from its writes (see [`seal`]).
#[derive(Debug, Clone)]
pub struct Sealed {
    /// [`result_revision`].
    pub result_revision: String,
    /// [`changed_refs`].
    pub changed_refs: Vec<String>,
    /// The plan digest of spec/store.md §5.
    pub plan_digest: String,
    /// The unified diff of the writes (spec/concept-patch.md §5.4).
    pub diff: Diff,
}

/// Seals a plan: its result revision, changed refs, plan digest (reads = every captured
/// path; refs = the changed concept refs without fragment) and diff. `request_digest` and
/// `change_set_base` are the change set's (§5 rule 6: the base must be the captured
/// revision).
///
/// # Errors
/// `invalid_request` (`cannot compute the plan digest`) when a rule-6 check fails.
pub fn seal(
    capture: &Capture,
    request_digest: &str,
    change_set_base: &str,
    writes: &[(String, Vec<u8>)],
) -> Result<Sealed, ToolError> {
    let result_revision = result_revision(capture, writes);
    let changed_refs = changed_refs(writes);
    let hexes: Vec<String> = writes
        .iter()
        .map(|(_, b)| identity::content_hex(b))
        .collect();
    let plan_digest = identity::plan_digest(&PlanInputs {
        request_digest,
        change_set_base,
        base_revision: &capture.revision,
        result_revision: &result_revision,
        reads: capture.files.iter().map(|f| f.path.as_str()).collect(),
        writes: writes
            .iter()
            .zip(&hexes)
            .map(|((p, b), h)| PlanWrite {
                path: p,
                content: b,
                digest_hex: h,
            })
            .collect(),
        affected_refs: changed_refs
            .iter()
            .map(|id| Ref {
                concept_id: id.clone(),
                fragment: None,
            })
            .collect(),
    })
    .map_err(|_| ToolError::invalid_request("cannot compute the plan digest"))?;
    let diff = render_diff(capture, writes);
    Ok(Sealed {
        result_revision,
        changed_refs,
        plan_digest,
        diff,
    })
}

/// The unified diff of `writes` against `capture` (spec/concept-patch.md §5.4).
#[must_use]
pub fn render_diff(capture: &Capture, writes: &[(String, Vec<u8>)]) -> Diff {
    let changes: Vec<FileChange<'_>> = writes
        .iter()
        .map(|(p, b)| FileChange {
            path: p,
            old: capture
                .get(p)
                .map(|f| std::str::from_utf8(f.bytes()).unwrap_or_default()),
            new: std::str::from_utf8(b).unwrap_or_default(),
        })
        .collect();
    diff::render(&changes)
}
