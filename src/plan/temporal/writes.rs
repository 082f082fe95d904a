//! The one write loop of the temporal upgrade (spec/temporal.md §5 steps 4–7, §6 step 3):
//! each concept in id order is read, its temporal values are classified against the
//! request's mappings (§3), and while the plan can still be ready its rewrite (§9) is handed
//! to a [`Sink`]. The planner ([`super::plan`]) runs it over every concept of the capture
//! with a sink that stages, validates and diffs the writes; the apply's payload producer
//! ([`super::payloads::Producer`]) runs it under the store lock over the mapped concepts of
//! the locked capture with a sink that hands each write to the store's
//! [`crate::plan::stream::Emit`]. Both therefore make each write from the same bytes by the
//! same steps.

use crate::envelope::ToolError;
use crate::okf::bundle::parse_document;
use crate::okf::capture::CapturedFile;
use crate::plan::temporal::fields::{occurrences, rewrite_document, Rewrite, ValueClass};
use crate::plan::temporal::request::{failure, Mapping, TemporalRequest};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// One legacy date without a mapping: `{concept, path, from}` (§5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub concept: String,
    pub path: String,
    pub from: String,
}

/// The rewrites of one concept from its mappings (`to` of each), for [`rewrite_document`].
#[must_use]
pub fn rewrites_of<'m>(mappings: &[&'m Mapping]) -> Vec<Rewrite<'m>> {
    mappings
        .iter()
        .map(|m| Rewrite {
            path: &m.path,
            from: &m.from,
            to: &m.to,
        })
        .collect()
}

/// Where [`walk`] sends what it finds: the planner's stage or the store's emitter.
pub trait Sink<E> {
    /// Runs before concept `i` of the walk (progress, cancellation).
    ///
    /// # Errors
    /// The sink's own error (e.g. `operation_cancelled`), which ends the walk.
    fn next(&mut self, i: usize) -> Result<(), E>;
    /// The sink's form of a failure of the request against a concept (§5 step 9).
    fn fail(&self, e: ToolError) -> E;
    /// The rewrite of concept `id`, stored at `path`: its old and its new bytes.
    ///
    /// # Errors
    /// The sink's own error, which ends the walk.
    fn write(&mut self, id: &str, path: &str, old: &[u8], new: Vec<u8>) -> Result<(), E>;
}

/// What [`walk`] observed besides the writes.
#[derive(Debug, Default)]
pub struct Walked<'r> {
    /// The legacy dates without a mapping, in observation order (§3).
    pub unresolved: Vec<Unresolved>,
    /// `(concept, path)` of every mapping that matched a legacy date.
    pub consumed: BTreeSet<(&'r str, &'r str)>,
    /// The first rewrite that failed (concept order); no write follows it.
    pub deferred: Option<ToolError>,
}

/// Walks `concepts` (`(id, captured file)`, ascending by id) for `req`: reads each with
/// `read`, classifies its temporal values and, while no legacy date is unresolved and no
/// rewrite failed, hands the rewrite of its mapped legacy dates to `sink`. A concept that
/// does not parse holds no observable temporal value (its `invalid_frontmatter` is the
/// validator's) and is passed over. `apply` selects the failure message (§5 step 9, §7).
///
/// # Errors
/// `read`'s and `sink`'s errors; through [`Sink::fail`], `temporal_field_malformed` or
/// another `temporal_*` failure of a malformed value, and `temporal_source_changed` when an
/// observed date differs from its mapping's `from`.
pub fn walk<'r, 'f, E>(
    concepts: &[(&str, &'f CapturedFile)],
    req: &'r TemporalRequest,
    apply: bool,
    read: &dyn Fn(&'f CapturedFile) -> Result<Cow<'f, [u8]>, E>,
    sink: &mut dyn Sink<E>,
) -> Result<Walked<'r>, E> {
    let by_concept: BTreeMap<&str, Vec<&Mapping>> = req.by_concept().into_iter().collect();
    let mut out = Walked::default();
    for (i, (id, captured)) in concepts.iter().enumerate() {
        sink.next(i)?;
        let file = format!("{id}.md");
        let bytes = read(captured)?;
        let Ok(Ok(parsed)) = parse_document(&bytes) else {
            continue;
        };
        let occ = occurrences(parsed.root())
            .map_err(|e| sink.fail(failure(apply, e.code, e.message, &file)))?;
        let mapped = by_concept.get(id).map_or(&[][..], Vec::as_slice);
        let mut mine: Vec<&Mapping> = Vec::new();
        for o in occ.iter().filter(|o| o.class == ValueClass::Legacy) {
            match mapped.iter().find(|m| m.path == o.path) {
                Some(m) => {
                    if m.from != o.text {
                        return Err(sink.fail(failure(
                            apply,
                            "temporal_source_changed",
                            format!(
                                "{}: the observed date differs from the mapping's from; preview again and map the observed value",
                                o.path
                            ),
                            &file,
                        )));
                    }
                    out.consumed.insert((m.concept.as_str(), m.path.as_str()));
                    mine.push(m);
                }
                None => out.unresolved.push(Unresolved {
                    concept: (*id).to_owned(),
                    path: o.path.clone(),
                    from: o.text.clone(),
                }),
            }
        }
        // Rewrite while the plan can still be ready; the first failure waits until the
        // stray and incomplete checks have had their say (§5 steps 5–8).
        if mine.is_empty() || !out.unresolved.is_empty() || out.deferred.is_some() {
            continue;
        }
        match rewrite_document(&bytes, &rewrites_of(&mine)) {
            Ok(new) => sink.write(id, &file, &bytes, new)?,
            Err(e) => out.deferred = Some(failure(apply, e.code, e.message, &file)),
        }
    }
    Ok(out)
}
