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

use crate::cancel::Cancel;
use crate::envelope::ToolError;
use crate::okf::bundle::Bundle;
use crate::okf::capture::CapturedFile;
use crate::okf::finding::Finding;
use crate::okf::validate::{self, Report, ValidationOptions};
use crate::progress::Progress;
use std::borrow::Cow;
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

/// Reads the bytes of a spilled file again (the store's `capture::Rereader` or
/// `capture::reread`), checked against its captured size and digest; a planner may call it
/// from two threads at once.
pub type Reread<'r> = dyn Fn(&CapturedFile) -> Result<Vec<u8>, ToolError> + Sync + 'r;

/// The bytes of `file`: resident, or read again with `reread`.
///
/// # Errors
/// `reread`'s error.
pub fn bytes_of<'a>(
    file: &'a CapturedFile,
    reread: &Reread<'_>,
) -> Result<Cow<'a, [u8]>, ToolError> {
    if file.is_resident() {
        Ok(Cow::Borrowed(file.bytes()))
    } else {
        reread(file).map(Cow::Owned)
    }
}

/// The cancellation checks and `planning` progress reports of a planner's loop over
/// `items` documents (spec/migration.md §12.5 rule 4, spec/temporal.md §5): one final report
/// at the start and one at the end, throttled reports in between, counted after the captured
/// files so the progress keeps increasing from the capture's.
#[derive(Debug)]
pub struct Pace<'c> {
    cancel: &'c Cancel,
    progress: Progress,
    files: u64,
    total: Option<u64>,
}

impl<'c> Pace<'c> {
    /// Starts the loop over `items` documents of a capture of `files` files: reports
    /// `files` of `files + items`.
    #[must_use]
    pub fn start(cancel: &'c Cancel, files: usize, items: usize) -> Self {
        let progress = crate::progress::current();
        let files = files as u64;
        let total = Some(files + items as u64);
        progress.finish(files, total, "planning");
        Pace {
            cancel,
            progress,
            files,
            total,
        }
    }

    /// Before item `i`: the cancellation check, then a (throttled) report.
    ///
    /// # Errors
    /// `operation_cancelled`.
    pub fn next(&self, i: usize) -> Result<(), ToolError> {
        self.cancel.check()?;
        self.progress
            .report(self.files + i as u64, self.total, "planning");
        Ok(())
    }

    /// After the last item: reports the total.
    pub fn finish(&self) {
        let total = self.total.unwrap_or(self.files);
        self.progress.finish(total, self.total, "planning");
    }
}

/// One write of a streamed plan: the bundle-relative path and the size and SHA-256 of the
/// bytes the plan authorised (spec/migration.md §12.5 rule 2). Only this stays in memory
/// while the store stages the payloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWrite {
    /// Bundle-relative target path.
    pub path: String,
    /// Size of the new bytes.
    pub size: u64,
    /// `H(new bytes)`, raw SHA-256.
    pub digest: [u8; 32],
}

impl PlannedWrite {
    /// The planned write of `bytes` at `path`.
    #[must_use]
    pub fn of(path: &str, bytes: &[u8]) -> Self {
        Self {
            path: path.to_owned(),
            size: bytes.len() as u64,
            digest: crate::digest::sha256(bytes),
        }
    }
}

/// The writes of a plan (spec/store.md §9, §10.1 C8): their bytes in memory, or only their
/// [`PlannedWrite`]s, whose bytes a [`Payloads`] producer makes again under the store lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writes {
    /// `(path, new bytes)` (the concept patch, `write_concept`).
    Resident(Vec<(String, Vec<u8>)>),
    /// Paths, sizes and digests only (the migration, the temporal upgrade).
    Streamed(Vec<PlannedWrite>),
}

impl Default for Writes {
    fn default() -> Self {
        Writes::Resident(Vec::new())
    }
}

impl Writes {
    /// Whether there is nothing to write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        match self {
            Writes::Resident(w) => w.is_empty(),
            Writes::Streamed(w) => w.is_empty(),
        }
    }

    /// Streamed writes from `(path, size, H(bytes))` triples.
    #[must_use]
    pub fn streamed(writes: Vec<(String, u64, [u8; 32])>) -> Self {
        Writes::Streamed(
            writes
                .into_iter()
                .map(|(path, size, digest)| PlannedWrite { path, size, digest })
                .collect(),
        )
    }

    /// The bundle-relative paths written, in order.
    pub fn paths(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match self {
            Writes::Resident(w) => Box::new(w.iter().map(|(p, _)| p.as_str())),
            Writes::Streamed(w) => Box::new(w.iter().map(|w| w.path.as_str())),
        }
    }

    /// The bytes of resident writes; `None` for streamed ones.
    #[must_use]
    pub fn resident(&self) -> Option<&[(String, Vec<u8>)]> {
        match self {
            Writes::Resident(w) => Some(w),
            Writes::Streamed(_) => None,
        }
    }

    /// The planned writes (computed for resident bytes).
    #[must_use]
    pub fn planned(&self) -> std::borrow::Cow<'_, [PlannedWrite]> {
        match self {
            Writes::Resident(w) => w.iter().map(|(p, b)| PlannedWrite::of(p, b)).collect(),
            Writes::Streamed(w) => std::borrow::Cow::Borrowed(w),
        }
    }
}

/// What a producer's own failure is ([`Payloads::produce`]); the store maps it to its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A document the payload is made from changed or vanished since the locked capture: a
    /// retryable conflict.
    Changed,
    /// The payload cannot be made again from the locked bytes: a payload mismatch.
    Unreproducible,
}

/// The sink [`Payloads::produce`] hands each payload to: bundle-relative path and bytes. `E`
/// is the consumer's error (the store's).
pub type Emit<'e, E> = dyn FnMut(&str, &[u8]) -> Result<(), E> + 'e;

/// Produces the payloads of a streamed commit at C8 (spec/migration.md §12.5 rule 2):
/// called once, under the store lock and after the C5 compare-and-swap, with the capture that
/// C5 compared. It hands every planned write's bytes to `emit`, one at a time, in any order;
/// the store stages each payload as it comes and keeps only its path and digest. A payload
/// whose size or digest differs from its [`PlannedWrite`] abandons the attempt before the
/// boundary; a path that is not planned, or emitted twice, or a planned path never emitted,
/// abandons it as an internal inconsistency.
pub trait Payloads<E> {
    /// Emits every payload.
    ///
    /// # Errors
    /// The producer's own [`Fault`] (as `E`), or the first error `emit` returned (passed on
    /// unchanged).
    fn produce(
        &self,
        locked: &crate::okf::capture::Capture,
        emit: &mut Emit<'_, E>,
    ) -> Result<(), E>;
}
