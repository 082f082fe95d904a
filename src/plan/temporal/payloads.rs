//! The payloads of a verified temporal upgrade plan, made again under the store lock from the
//! capture the store compared at C5 (spec/temporal.md §6 step 3, as the migration's
//! spec/migration.md §12.5 rule 2): each upgraded concept is read again and rewritten by the
//! same pure function as the plan ([`rewrite_document`]); the store checks every payload
//! against the planned digest.

use crate::okf::capture::Capture;
use crate::plan::stream::{Emit, Fault, Payloads};
use crate::plan::temporal::fields::rewrite_document;
use crate::plan::temporal::request::TemporalRequest;
use crate::plan::temporal::{rewrites_of, Reread};

/// The payload producer of a temporal apply: `req` as the plan was built from it, `read` for
/// the locked capture's files. A mapped concept missing from the locked capture or not
/// readable as captured is [`Fault::Changed`]; one that no longer rewrites is
/// [`Fault::Unreproducible`].
pub struct Producer<'a> {
    req: &'a TemporalRequest,
    read: Box<Reread<'a>>,
}

impl<'a> Producer<'a> {
    /// The producer of `req`'s payloads, reading files with `read`.
    #[must_use]
    pub fn new(req: &'a TemporalRequest, read: Box<Reread<'a>>) -> Self {
        Producer { req, read }
    }
}

impl<E: From<Fault>> Payloads<E> for Producer<'_> {
    fn produce(&self, locked: &Capture, emit: &mut Emit<'_, E>) -> Result<(), E> {
        for (concept, mappings) in self.req.by_concept() {
            let path = format!("{concept}.md");
            let file = locked.get(&path).ok_or(Fault::Changed)?;
            let bytes = (self.read)(file).map_err(|_| Fault::Changed)?;
            let new = rewrite_document(&bytes, &rewrites_of(&mappings))
                .map_err(|_| Fault::Unreproducible)?;
            emit(&path, &new)?;
        }
        Ok(())
    }
}
