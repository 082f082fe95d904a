//! Staged validation of a streamed plan (spec/migration.md §12.5 rule 1, spec/temporal.md
//! §5 step 8): written documents arrive one at a time, are hashed, validated in small
//! batches against the base bundle ([`validate::validate_staged`]) and dropped; what stays is
//! `(path, size, H(bytes))` per write and the findings of the written documents. At the end
//! [`BatchStage::finish`] returns the base report and the staged report of the whole
//! candidate bundle, ready for the "do no harm" judgement ([`crate::plan::stage::judge`]).
//!
//! Memory: at most [`BATCH_FILES`] documents or [`BATCH_BYTES`] bytes of written documents at
//! a time, plus one digest and the findings per written document.
//!
//! Used by the migration planner (`plan::migration`, which adds the diff and the assets) and
//! the temporal upgrade planner (`plan::temporal`).

use crate::envelope::ToolError;
use crate::okf::bundle::Bundle;
use crate::okf::finding::Finding;
use crate::okf::validate::{self, Report, ValidationOptions};
use std::collections::BTreeSet;

/// Written documents validated together by one [`validate::validate_staged`] call.
pub const BATCH_FILES: usize = 64;
/// Bytes of written documents held at most before a batch is validated.
pub const BATCH_BYTES: usize = 1024 * 1024;

/// The written documents of a streamed plan while they go by.
#[derive(Debug)]
pub struct BatchStage<'b, 'c> {
    bundle: &'b Bundle<'c>,
    opts: ValidationOptions,
    base_report: Report,
    /// What each batch is validated against: `base_report` without its findings when the
    /// options fix the target version (the staged validation then never falls back to a full
    /// validation, so a batch's report is the base findings of every other file plus the
    /// batch's own, and only the batch's are kept: copying and sorting the base findings for
    /// every batch would be wasted); the full `base_report` otherwise.
    batch_base: Report,
    batch: Vec<(String, Vec<u8>)>,
    batch_bytes: usize,
    /// Findings of the written documents, from the staged validation of their batch.
    findings: Vec<Finding>,
    written: BTreeSet<String>,
    digests: Vec<(String, u64, [u8; 32])>,
    /// The last batch's report against `batch_base`, and the paths of that batch.
    last_report: Option<(Report, BTreeSet<String>)>,
}

/// What [`BatchStage::finish`] returns: the base report, the staged report of the whole
/// candidate bundle (findings sorted by file, code, message) and the writes
/// `(path, size, H(bytes))` ascending by path.
pub type Finished = (Report, Report, Vec<(String, u64, [u8; 32])>);

impl<'b, 'c> BatchStage<'b, 'c> {
    /// A stage over `bundle` (parsed under `opts`); validates the base bundle once.
    #[must_use]
    pub fn new(bundle: &'b Bundle<'c>, opts: ValidationOptions) -> Self {
        let base_report = validate::validate_bundle(bundle, &opts);
        let batch_base = if opts.spec_version.is_some() {
            Report {
                declaration: base_report.declaration.clone(),
                version: base_report.version.clone(),
                scanned_files: base_report.scanned_files,
                findings: Vec::new(),
            }
        } else {
            base_report.clone()
        };
        Self {
            bundle,
            opts,
            base_report,
            batch_base,
            batch: Vec::new(),
            batch_bytes: 0,
            findings: Vec::new(),
            written: BTreeSet::new(),
            digests: Vec::new(),
            last_report: None,
        }
    }

    /// Whether nothing was pushed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// Adds the new bytes of the document at `path` (each path once).
    ///
    /// # Errors
    /// `resource_limit` / `invalid_yaml_graph` when a written document has a YAML limit or
    /// graph fault (spec/store.md §3.4).
    pub fn push(&mut self, path: &str, bytes: Vec<u8>) -> Result<(), ToolError> {
        self.push_unvalidated(path, &bytes);
        self.batch_bytes += bytes.len();
        self.batch.push((path.to_owned(), bytes));
        if self.batch.len() >= BATCH_FILES || self.batch_bytes >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Adds a write that is not a document (a computation asset, spec/migration.md §6.1
    /// rule 1): its digest only; it is not validated.
    pub fn push_unvalidated(&mut self, path: &str, bytes: &[u8]) {
        self.digests.push((
            path.to_owned(),
            bytes.len() as u64,
            crate::digest::sha256(bytes),
        ));
        self.written.insert(path.to_owned());
    }

    fn flush(&mut self) -> Result<(), ToolError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let report =
            validate::validate_staged(self.bundle, &self.batch_base, &self.batch, &self.opts)
                .map_err(|f| f.to_tool_error())?;
        let in_batch: BTreeSet<String> = self.batch.drain(..).map(|(p, _)| p).collect();
        self.findings.extend(
            report
                .findings
                .iter()
                .filter(|f| in_batch.contains(&f.file))
                .cloned(),
        );
        self.batch_bytes = 0;
        self.last_report = Some((report, in_batch));
        Ok(())
    }

    /// The report `validate_staged` gives for the last batch against the full base report:
    /// the base's findings of the files outside the batch and the batch's report,
    /// deduplicated and in report order.
    fn full_last(&self, last: Report, in_batch: &BTreeSet<String>) -> Report {
        let set: BTreeSet<Finding> = self
            .base_report
            .findings
            .iter()
            .filter(|f| !in_batch.contains(&f.file))
            .cloned()
            .chain(last.findings)
            .collect();
        let mut findings: Vec<Finding> = set.into_iter().collect();
        sort_findings(&mut findings);
        Report { findings, ..last }
    }

    /// Validates the last batch and returns the reports and the writes ([`Finished`]).
    ///
    /// # Errors
    /// As [`BatchStage::push`].
    pub fn finish(mut self) -> Result<Finished, ToolError> {
        self.flush()?;
        let mut staged = match self.last_report.take() {
            Some((last, in_batch)) => self.full_last(last, &in_batch),
            None => self.base_report.clone(),
        };
        let written = &self.written;
        // The last report holds the base findings of documents written in earlier batches:
        // replace every written document's findings by those of its own batch.
        staged.findings.retain(|f| !written.contains(&f.file));
        staged.findings.extend(self.findings);
        sort_findings(&mut staged.findings);
        self.digests
            .sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        Ok((self.base_report, staged, self.digests))
    }
}

/// Report order of findings: by (file bytes, code, message), stable.
fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        a.file
            .as_bytes()
            .cmp(b.file.as_bytes())
            .then(a.code.cmp(b.code))
            .then(a.message.cmp(&b.message))
    });
}
