//! The one write loop of the migration's transition (spec/migration.md §8 step 5, §6.1
//! rule 3): the documents in path order, then the computation assets, then the root
//! `index.md`. Each document is read, migrated ([`document::migrate_document`],
//! [`document::migrate_root`]) and, unless the mixed-state tolerance settles it (§8 step 5.2,
//! [`document::settled`]), handed to a `Sink` with its outcome; each asset is handed over
//! with its §6.6 rule 4 decision ([`document::asset_outcome`]).
//!
//! The planner ([`super::plan`]) runs it with a sink that records the findings and
//! proposals and stages, validates and diffs the writes; the apply's payload producer
//! ([`super::payloads::Producer`]) runs it under the store lock on the locked capture with a
//! sink that hands each write to the store's [`crate::plan::stream::Emit`]. Both therefore
//! make each write from the same bytes by the same steps, in the same order.
//!
//! Memory (§12.5 rule 1): the pure part of each document runs on up to two threads
//! ([`crate::okf::par::stream`]), at most a few documents ahead of the sink, which always
//! runs on the calling thread in path order.

use crate::okf::capture::{Capture, CapturedFile};
use crate::okf::grammar::{classify, DocClass};
use crate::plan::migration::citations::{CitationMapping, DocKind};
use crate::plan::migration::document::{self, AssetOutcome, DocOutcome};
use crate::plan::migration::request::{Asset, Computation, MigrationRequest};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The request's citation mappings, explicit instants, computations and assets by path.
pub(super) struct Targets<'r> {
    pub(super) mappings: BTreeMap<&'r str, &'r CitationMapping>,
    pub(super) explicit: BTreeMap<&'r str, &'r str>,
    pub(super) computations: BTreeMap<&'r str, &'r Computation>,
    /// The distinct assets by path (request validation: one content per path).
    pub(super) assets: BTreeMap<&'r str, &'r Asset>,
}

impl<'r> Targets<'r> {
    /// The targets of `req` by path.
    pub(super) fn of(req: &'r MigrationRequest) -> Self {
        Targets {
            mappings: req
                .citation_mappings
                .iter()
                .map(|m| (m.path.as_str(), m))
                .collect(),
            explicit: req
                .generated_at
                .iter()
                .map(|g| (g.path.as_str(), g.at.as_str()))
                .collect(),
            computations: req
                .computations
                .iter()
                .map(|c| (c.path.as_str(), c))
                .collect(),
            assets: req
                .computations
                .iter()
                .filter_map(|c| c.asset.as_ref())
                .map(|a| (a.path.as_str(), a))
                .collect(),
        }
    }
}

/// What the loop computed of one written-or-blocked document: its bytes, its outcome and,
/// when asked for, its proposal (§12.4 rule 1).
pub(super) struct Worked<'b> {
    pub bytes: Cow<'b, [u8]>,
    pub outcome: DocOutcome,
    pub proposal: Option<CitationMapping>,
}

/// Where [`walk`] sends what it finds: the planner's findings and stage, or the store's
/// emitter.
pub(super) trait Sink<E> {
    /// Runs before document `i` of the capture's concept and reserved documents (progress,
    /// cancellation).
    ///
    /// # Errors
    /// The sink's own error, which ends the walk.
    fn next(&mut self, i: usize) -> Result<(), E>;
    /// One document that the mixed-state tolerance does not settle, the root `index.md` last
    /// (after the assets): its outcome, whose `text` is its write.
    ///
    /// # Errors
    /// The sink's own error, which ends the walk.
    fn document(&mut self, path: &str, w: Worked<'_>) -> Result<(), E>;
    /// One computation asset, in path order after the documents, with its decision
    /// ([`AssetOutcome::Write`]: `content` is written at `path`).
    ///
    /// # Errors
    /// The sink's own error, which ends the walk.
    fn asset(&mut self, path: &str, content: &str, outcome: AssetOutcome) -> Result<(), E>;
}

/// The document kind of a captured path: concept and reserved documents only.
fn kind(path: &str) -> Option<DocKind> {
    match classify(path) {
        DocClass::Concept(_) => Some(DocKind::Concept),
        DocClass::Reserved => Some(DocKind::Reserved),
        _ => None,
    }
}

/// Walks the transition of `capture` under `req` (`t`: its targets by path), reading each
/// document with `read` and handing every outcome and write to `sink` in the order above.
/// `propose` computes the proposal of each unmapped document with a citations section.
///
/// # Errors
/// `read`'s and `sink`'s errors (the first in path order).
pub(super) fn walk<'c, E: Send>(
    capture: &'c Capture,
    req: &MigrationRequest,
    t: &Targets<'_>,
    read: &(dyn Fn(&'c CapturedFile) -> Result<Cow<'c, [u8]>, E> + Sync),
    propose: bool,
    sink: &mut dyn Sink<E>,
) -> Result<(), E> {
    let docs: Vec<(&CapturedFile, DocKind)> = capture
        .files
        .iter()
        .filter_map(|f| kind(&f.path).map(|k| (f, k)))
        .collect();
    let mut root: Option<&CapturedFile> = None;
    let work = |&(file, kind): &(&'c CapturedFile, DocKind)| -> Result<Option<Worked<'c>>, E> {
        let path = file.path.as_str();
        if path == "index.md" {
            return Ok(None);
        }
        let bytes = read(file)?;
        let mapping = t.mappings.get(path).copied();
        let explicit = t.explicit.get(path).copied();
        let computation = t.computations.get(path).copied();
        let o = document::migrate_document(kind, &bytes, req, mapping, explicit, computation);
        // Mixed-state tolerance (§8 step 5.2): a document the transition cannot take, but
        // whose target replay with the same input passes, is already exactly what the
        // transition would make of it (e.g. migrated by an earlier, partial run): it is
        // done, not blocked, and nothing of it is written.
        if document::settled(&o, kind, &bytes, req, mapping, explicit, computation) {
            return Ok(None);
        }
        let proposal = if propose && mapping.is_none() && o.has_section {
            document::propose(path, kind, &bytes)
        } else {
            None
        };
        Ok(Some(Worked {
            bytes,
            outcome: o,
            proposal,
        }))
    };
    crate::okf::par::stream(&docs, work, |i, &(file, _), worked| {
        sink.next(i)?;
        if file.path == "index.md" {
            root = Some(file);
            return Ok(());
        }
        match worked? {
            Some(w) => sink.document(&file.path, w),
            None => Ok(()),
        }
    })?;
    // Then the computation assets (§6.1 rule 3, §6.6 rule 4).
    for (path, a) in &t.assets {
        sink.asset(path, &a.content, document::asset_outcome(capture, a))?;
    }
    // The root index last (§6.1 rule 3, §6.4 rule 4).
    if let Some(file) = root {
        let bytes = read(file)?;
        let mapping = t.mappings.get("index.md").copied();
        let outcome = document::migrate_root(&bytes, mapping);
        let proposal = if propose && mapping.is_none() && outcome.has_section {
            document::propose("index.md", DocKind::Reserved, &bytes)
        } else {
            None
        };
        sink.document(
            "index.md",
            Worked {
                bytes,
                outcome,
                proposal,
            },
        )?;
    }
    Ok(())
}
