//! The payloads of a verified migration plan, made again under the store lock from the
//! capture the store compared at C5 (spec/migration.md §12.5 rule 2): the planner's own
//! write loop (`writes::walk`) runs on the locked capture, each document read again, and
//! hands each write to the store's emitter; the store checks every payload against the
//! planned digest.

use crate::envelope::ToolError;
use crate::okf::capture::{Capture, CapturedFile};
use crate::plan::migration::document::AssetOutcome;
use crate::plan::migration::request::MigrationRequest;
use crate::plan::migration::writes::{self, Sink, Targets, Worked};
use crate::plan::stream::{Emit, Fault, Payloads};
use std::borrow::Cow;

/// Reads a file of the locked capture again (the store's `capture::Rereader`, checked
/// against the captured size and digest); the write loop may call it from two threads at
/// once.
pub type Read<'r> = dyn Fn(&CapturedFile) -> Result<Vec<u8>, ToolError> + Sync + 'r;

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

/// The store's [`Sink`]: every write goes to `emit`.
struct Emitter<'e, 'x, E> {
    emit: &'e mut Emit<'x, E>,
}

impl<E> Sink<E> for Emitter<'_, '_, E> {
    fn next(&mut self, _i: usize) -> Result<(), E> {
        Ok(())
    }

    fn document(&mut self, path: &str, w: Worked<'_>) -> Result<(), E> {
        match w.outcome.text {
            Some(text) => (self.emit)(path, text.as_bytes()),
            None => Ok(()),
        }
    }

    fn asset(&mut self, path: &str, content: &str, outcome: AssetOutcome) -> Result<(), E> {
        match outcome {
            AssetOutcome::Write => (self.emit)(path, content.as_bytes()),
            AssetOutcome::Identical | AssetOutcome::Conflict(_) => Ok(()),
        }
    }
}

impl<E: From<Fault> + Send> Payloads<E> for Producer<'_> {
    fn produce(&self, locked: &Capture, emit: &mut Emit<'_, E>) -> Result<(), E> {
        let read = |f: &CapturedFile| {
            (self.read)(f)
                .map(Cow::Owned)
                .map_err(|_| E::from(Fault::Changed))
        };
        writes::walk(
            locked,
            self.req,
            &Targets::of(self.req),
            &read,
            false,
            &mut Emitter { emit },
        )
    }
}
