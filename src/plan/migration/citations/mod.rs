//! Legacy `# Citations` sections of OKF 0.1 bodies and their rewrite into OKF 0.2 footnotes
//! (spec/migration.md §3.3, §6.2–§6.4, §6.7 rules 1 and 6, §12.1, §12.2, §12.4, §12.6).
//!
//! Pure: a document body and the caller's mapping in; blockers, or the rewritten body and the
//! `sources` items to insert, out. The frontmatter side (`sources` insertion, the
//! `sources_citations_conflict` check) belongs to the caller (`super`).
//!
//! Byte offsets in every [`Blocker`] are offsets into the **whole document** (the caller
//! passes `body_offset`, the body's offset in the document), `start` inclusive, `end`
//! exclusive.
//!
//! One line scanner ([`crate::okf::markdown::scan`]) classifies the body; on top of it this module
//! recognises the citations section and its entries (§6.2, §12.1), claim markers `[N]`
//! (§6.2 rule 5), inline notes `^[text]` (§12.2) and footnote definitions. The transition,
//! its post-check, the target replay and the proposals all use these same recognisers, so a
//! body the transition produced replays clean by construction.
//!
//! # Invariants
//! - Every byte outside the rewritten spans (the owned part of the section, rewritten markers
//!   and inline notes) is kept unchanged; generated lines use the caller's newline.
//! - Every offset is a char boundary: spans start and end at ASCII syntax or line ends.
//! - No input panics; a mapping that failed [`validate_mapping`] yields blockers or a
//!   well-formed (if meaningless) rewrite, never a panic.
//!
//! # Limitations
//! - Numbers beyond `u64` in `[N]` are not numbers (such a line is ordinary text).
//! - Inline code spans are recognised per line, as in `markdown`; a code span across lines
//!   is not.
//! - Link reference definitions and reference links (`[text][ref]`) are not resolved: an
//!   entry whose only destination is a reference link projects no resource.

use crate::okf::markdown::mentions_citations;

mod entries;
mod inline;
mod lines;
mod model;
mod proposals;
mod prose;
mod replay;
mod transition;
mod validate;

use entries::*;
use lines::*;
pub use model::{
    Blocker, BodyOutcome, CitationMapping, ClaimMarkers, DocKind, MappingEntry, Notice,
    ProjectedSource, SectionProbe, StaticError, TrailingContent,
};
use proposals::*;
use replay::*;
use transition::*;
use validate::*;

/// The legacy probe of one body (§4.2 rule 4, `citations` candidates).
#[must_use]
pub fn probe(body: &str, body_offset: usize) -> SectionProbe {
    if !mentions_citations(body) {
        return SectionProbe::None;
    }
    let lines = lines(body);
    let heads = sections(&lines);
    let at = |(s, e): (usize, usize)| (s + body_offset, e + body_offset);
    match heads.as_slice() {
        [] => SectionProbe::None,
        [h] if !h.anchored => {
            let (start, end) = at(h.span(&lines));
            SectionProbe::One { start, end }
        }
        [h] => {
            let (start, end) = at(h.heading_span(&lines));
            SectionProbe::Unparseable { start, end }
        }
        [_, second, ..] => {
            let (start, end) = at(second.heading_span(&lines));
            SectionProbe::Unparseable { start, end }
        }
    }
}

/// Migrates one body. `nl` is the document's newline (`"\n"` or `"\r\n"`) for generated
/// lines. `mapping` is the caller's item for this document, if any. Without a mapping and
/// with a section: blocker `missing_explicit_citation_mapping` (action
/// `provide_citation_mapping`); with a mapping and no section: `missing_citations_section`.
///
/// The section's syntax blockers are reported with or without a mapping (without one, with
/// the default `trailing_content: block`). With any blocker, `body` is `None` and `sources`
/// is empty. On success the owned part of the section (the heading line, the entry lines and
/// the blank lines among them) is replaced by the definitions block; when content follows the
/// block in the body (kept trailing content or the next heading), one `nl` is appended so the
/// last definition is not continued by it.
#[must_use]
pub fn migrate_body(
    body: &str,
    body_offset: usize,
    nl: &str,
    kind: DocKind,
    mapping: Option<&CitationMapping>,
) -> BodyOutcome {
    let mut out = BodyOutcome::default();
    let no_section = |out: &mut BodyOutcome| {
        if mapping.is_some() {
            out.blockers.push(
                Spot::new(
                    "missing_citations_section",
                    (0, 0),
                    "a citation mapping names a document without a `# Citations` section",
                )
                .into_blocker(body_offset),
            );
        }
    };
    if !mentions_citations(body) {
        no_section(&mut out);
        return out;
    }
    let lines = lines(body);
    out.notices.extend(code_notice(&lines));
    let heads = sections(&lines);
    let Some(head) = heads.first() else {
        no_section(&mut out);
        return out;
    };
    out.has_section = true;
    let mut blockers = Vec::new();
    for h in &heads {
        if h.anchored {
            blockers.push(Spot::new(
                "heading_source_anchor",
                h.heading_span(&lines),
                "the `# Citations` heading has a closing `#` sequence or an attribute block; \
                 write it exactly as `# Citations`",
            ));
        }
    }
    for h in &heads[1..] {
        blockers.push(Spot::new(
            "multiple_citations_sections",
            h.heading_span(&lines),
            "a second `# Citations` section: a document may have only one",
        ));
    }
    let mode = mapping.map_or(TrailingContent::Block, |m| m.trailing_content);
    let parsed = parse_section(&lines, head, mode);
    blockers.extend(parsed.blockers.iter().cloned());
    if parsed.kept {
        out.notices.push(Notice {
            code: "citations_trailing_content_kept",
            message: "content after the citation entries is kept byte for byte \
                      (trailing_content: keep)"
                .to_owned(),
        });
    }
    match mapping {
        None => blockers.push(Spot::new(
            "missing_explicit_citation_mapping",
            head.span(&lines),
            "the document has a `# Citations` section and no citation_mappings item",
        )),
        Some(m) => {
            let doc = Doc {
                body,
                lines: &lines,
                head,
                parsed: &parsed,
            };
            if let Some((new, sources)) = migrate(&doc, nl, kind, m, &mut blockers) {
                if blockers.is_empty() {
                    out.body = Some(new);
                    out.sources = sources;
                }
            }
        }
    }
    out.blockers = blockers
        .into_iter()
        .map(|b| b.into_blocker(body_offset))
        .collect();
    out
}

/// Target replay of one body (§6.7 rules 1 and 6, §12.2 rule 3, §12.6): the blockers that
/// show the body is not exactly what the transition with `mapping` would have produced.
/// `sources` are the document's frontmatter `sources` items as `(id, title, resource)`
/// (empty strings for absent members; ignored for reserved documents).
#[must_use]
pub fn replay_check(
    body: &str,
    body_offset: usize,
    kind: DocKind,
    mapping: Option<&CitationMapping>,
    sources: &[ProjectedSource],
) -> Vec<Blocker> {
    let sources = match kind {
        DocKind::Concept => sources,
        DocKind::Reserved => &[],
    };
    replay(body, kind, mapping, sources)
        .into_iter()
        .map(|b| b.into_blocker(body_offset))
        .collect()
}

/// The static validation of one canonical (sorted) mapping item (§3.3 rules 3–10, §12.2
/// rule 2); `index` is the item's position in the request, for messages. `Ok(true)` when two
/// different source ids have the same normalised label (rule 11: recorded, not raised).
///
/// # Errors
/// [`StaticError`].
pub fn validate_mapping(item: &CitationMapping, index: usize) -> Result<bool, StaticError> {
    validate(item, index)
}

/// The proposal of §12.4 for one body without a mapping: `None` when it has no section, or
/// when the section cannot be proposed (rule 1).
///
/// The entries are in section order (the caller sorts them canonically when the proposal
/// is passed back); the item passes [`validate_mapping`] without a label collision.
#[must_use]
pub fn propose(path: &str, body: &str, kind: DocKind) -> Option<CitationMapping> {
    proposal(path, body, kind)
}

#[cfg(test)]
#[path = "../citations_tests.rs"]
mod tests;
