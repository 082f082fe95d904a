//! The payloads of a verified temporal upgrade plan, made again under the store lock from the
//! capture the store compared at C5 (spec/temporal.md §6 step 3, as the migration's
//! spec/migration.md §12.5 rule 2): the planner's own write loop ([`writes::walk`]) runs
//! over the mapped concepts of the locked capture and hands each rewrite to the store's
//! emitter; the store checks every payload against the planned digest.

use crate::envelope::ToolError;
use crate::okf::capture::{Capture, CapturedFile};
use crate::plan::stream::{Emit, Fault, Payloads, Reread};
use crate::plan::temporal::request::TemporalRequest;
use crate::plan::temporal::writes::{self, Sink};
use std::borrow::Cow;

/// The payload producer of a temporal apply: `req` as the plan was built from it, `read` for
/// the locked capture's files. A mapped concept missing from the locked capture or not
/// readable as captured is [`Fault::Changed`]; one whose mappings no longer rewrite exactly
/// as planned is [`Fault::Unreproducible`].
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

/// The store's [`Sink`]: every rewrite goes to `emit`.
struct Emitter<'e, 'x, E> {
    emit: &'e mut Emit<'x, E>,
}

impl<E: From<Fault>> Sink<E> for Emitter<'_, '_, E> {
    fn next(&mut self, _i: usize) -> Result<(), E> {
        Ok(())
    }

    fn fail(&self, _e: ToolError) -> E {
        Fault::Unreproducible.into()
    }

    fn write(&mut self, _id: &str, path: &str, _old: &[u8], new: Vec<u8>) -> Result<(), E> {
        (self.emit)(path, &new)
    }
}

impl<E: From<Fault>> Payloads<E> for Producer<'_> {
    fn produce(&self, locked: &Capture, emit: &mut Emit<'_, E>) -> Result<(), E> {
        let req = self.req;
        let mut concepts: Vec<(&str, &CapturedFile)> = Vec::new();
        for (concept, _) in req.by_concept() {
            let file = locked.get(&format!("{concept}.md")).ok_or(Fault::Changed)?;
            concepts.push((concept, file));
        }
        let read = |f: &CapturedFile| {
            (self.read)(f)
                .map(Cow::Owned)
                .map_err(|_| E::from(Fault::Changed))
        };
        let walked = writes::walk(&concepts, req, true, &read, &mut Emitter { emit })?;
        // The plan was ready on these bytes: every mapping matched and rewrote.
        if !walked.unresolved.is_empty()
            || walked.deferred.is_some()
            || walked.consumed.len() != req.mappings.len()
        {
            return Err(Fault::Unreproducible.into());
        }
        Ok(())
    }
}
