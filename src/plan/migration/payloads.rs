//! The payloads of a verified migration plan, made again under the store lock from the
//! capture the store compared at C5 (spec/migration.md §12.5 rule 2): each document of the
//! locked capture is read again and transformed by the same pure functions as the plan
//! ([`document::migrate_document`], [`document::migrate_root`]); the store checks every
//! payload against the planned digest. Documents in path order, then the computation
//! assets, then the root `index.md` (§6.1 rule 3), as the planner stages them.

use crate::envelope::ToolError;
use crate::okf::capture::{Capture, CapturedFile};
use crate::okf::grammar::{classify, DocClass};
use crate::plan::migration::citations::{CitationMapping, DocKind};
use crate::plan::migration::document;
use crate::plan::migration::request::{Asset, Computation, MigrationRequest};
use crate::plan::stream::{Emit, Fault, Payloads};
use std::collections::BTreeMap;

/// Reads a file of the locked capture again (the store's `capture::Rereader`, checked
/// against the captured size and digest).
pub type Read<'r> = dyn Fn(&CapturedFile) -> Result<Vec<u8>, ToolError> + 'r;

/// The payload producer of a migration apply: `req` as the plan was built from it, `read`
/// for the locked capture's files. A file that cannot be read again as captured is
/// [`Fault::Changed`].
pub struct Producer<'a> {
    req: &'a MigrationRequest,
    read: Box<Read<'a>>,
}

impl<'a> Producer<'a> {
    /// The producer of `req`'s payloads, reading files with `read`.
    #[must_use]
    pub fn new(req: &'a MigrationRequest, read: Box<Read<'a>>) -> Self {
        Producer { req, read }
    }
}

impl<E: From<Fault>> Payloads<E> for Producer<'_> {
    fn produce(&self, locked: &Capture, emit: &mut Emit<'_, E>) -> Result<(), E> {
        let req = self.req;
        let mappings: BTreeMap<&str, &CitationMapping> = req
            .citation_mappings
            .iter()
            .map(|m| (m.path.as_str(), m))
            .collect();
        let explicit: BTreeMap<&str, &str> = req
            .generated_at
            .iter()
            .map(|g| (g.path.as_str(), g.at.as_str()))
            .collect();
        let computations: BTreeMap<&str, &Computation> = req
            .computations
            .iter()
            .map(|c| (c.path.as_str(), c))
            .collect();
        let assets: BTreeMap<&str, &Asset> = req
            .computations
            .iter()
            .filter_map(|c| c.asset.as_ref())
            .map(|a| (a.path.as_str(), a))
            .collect();
        let read = |f: &CapturedFile| (self.read)(f).map_err(|_| E::from(Fault::Changed));
        let mut root_file: Option<&CapturedFile> = None;
        for f in &locked.files {
            let kind = match classify(&f.path) {
                DocClass::Concept(_) => DocKind::Concept,
                DocClass::Reserved => DocKind::Reserved,
                _ => continue,
            };
            if f.path == "index.md" {
                root_file = Some(f);
                continue;
            }
            let bytes = read(f)?;
            let path = f.path.as_str();
            let o = document::migrate_document(
                kind,
                &bytes,
                req,
                mappings.get(path).copied(),
                explicit.get(path).copied(),
                computations.get(path).copied(),
            );
            if let Some(text) = o.text {
                emit(path, text.as_bytes())?;
            }
        }
        // The assets after the documents, before the root index (§6.1 rule 3).
        for (path, a) in &assets {
            if document::asset_outcome(locked, a) == document::AssetOutcome::Write {
                emit(path, a.content.as_bytes())?;
            }
        }
        if let Some(f) = root_file {
            let bytes = read(f)?;
            if let Some(text) =
                document::migrate_root(&bytes, mappings.get("index.md").copied()).text
            {
                emit("index.md", text.as_bytes())?;
            }
        }
        Ok(())
    }
}
