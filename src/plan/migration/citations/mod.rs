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
//! One line scanner ([`markdown::scan`]) classifies the body; on top of it this module
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

use std::collections::{HashMap, HashSet};

use crate::digest;
use crate::okf::markdown::{
    self, citations_heading, fence_close, fence_open, indent, mentions_citations, LineKind,
};

mod entries;
mod inline;
mod lines;
mod proposals;
mod prose;
mod replay;
mod transition;
mod validate;

use entries::*;
use inline::*;
use lines::*;
use proposals::*;
use prose::*;
use replay::*;
use transition::*;
use validate::*;

/// Whether a document is a concept or a reserved document (spec/migration.md §6.1 rule 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// A concept: gets `sources` items; replay evidence is always sufficient.
    Concept,
    /// Root `index.md`, nested `*/index.md`, `log.md` at any level: body rewritten, no
    /// `sources` (§6.4 rule 2).
    Reserved,
}

/// `claim_markers` of a mapping item (§12.6 rule 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClaimMarkers {
    #[default]
    Rewrite,
    Ignore,
}

impl ClaimMarkers {
    /// Wire spelling (also the canonical encoding of §7.1).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimMarkers::Rewrite => "rewrite",
            ClaimMarkers::Ignore => "ignore",
        }
    }
}

/// `trailing_content` of a mapping item (§12.6 rule 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrailingContent {
    #[default]
    Block,
    Keep,
}

impl TrailingContent {
    /// Wire spelling (also the canonical encoding of §7.1).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TrailingContent::Block => "block",
            TrailingContent::Keep => "keep",
        }
    }
}

/// One `citation_mappings[].entries[]` item (§3.3), as decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MappingEntry {
    pub legacy_number: Option<u32>,
    pub legacy_entry: Option<String>,
    pub source_id: String,
    pub title: Option<String>,
    pub resource: Option<String>,
    pub inline_note: Option<String>,
    /// Output only (spec/migration.md §12.7 rule 8): a proposed entry whose projected
    /// resource looks like prose, not a link or a path. Never encoded (§7.1), never part of a
    /// digest; `false` in every decoded input (the input member is accepted and ignored).
    pub needs_review: bool,
}

/// One `citation_mappings[]` item (§3.3): the caller's mapping of one document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CitationMapping {
    /// Bundle-relative path (validated by the caller: a revision path ending in `.md`).
    pub path: String,
    /// The entries, canonically sorted by the caller (§3.5 step 5).
    pub entries: Vec<MappingEntry>,
    pub claim_markers: ClaimMarkers,
    pub trailing_content: TrailingContent,
}

/// A blocker of §4.1/§10.2 found in one document, with the manual action it triggers
/// (§10.3), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocker {
    /// A blocker code of §10.2 (e.g. `unresolved_citation_entry`).
    pub code: &'static str,
    /// Byte span in the whole document.
    pub start: usize,
    pub end: usize,
    /// A message without document text beyond what the code needs (no absolute paths).
    pub message: String,
    /// A manual action of §10.3 (e.g. `provide_citation_mapping`).
    pub action: Option<&'static str>,
}

/// A non-blocking notice: `WARN` `legacy_citations_in_code` (§6.2 rule 1) or
/// `citations_trailing_content_kept` (§12.6 rule 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub code: &'static str,
    pub message: String,
}

/// A projected OKF 0.2 source (§3.3 projection): `id`, and `title` / `resource` (empty when
/// absent: an empty value is not written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectedSource {
    pub id: String,
    pub title: String,
    pub resource: String,
}

/// What the legacy probe (§4.2 rule 4) sees in one body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionProbe {
    /// No active `# Citations` section.
    None,
    /// Exactly one section; its byte span in the whole document (non-empty).
    One { start: usize, end: usize },
    /// The section(s) cannot be owned (e.g. more than one): a candidate located at the error.
    Unparseable { start: usize, end: usize },
}

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

/// The transition of one body (§6.2–§6.4, §12.1, §12.2, §12.6).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BodyOutcome {
    /// The rewritten body; `None` when nothing changes (no section and no mapping), and
    /// whenever `blockers` is not empty.
    pub body: Option<String>,
    /// For concepts with a mapping: the `sources` items to insert, one per distinct
    /// normalised source id in legacy-entry order (§6.3 rule 3). Empty for reserved documents.
    pub sources: Vec<ProjectedSource>,
    /// Blockers (any blocker means the document cannot be migrated).
    pub blockers: Vec<Blocker>,
    /// Non-blocking notices.
    pub notices: Vec<Notice>,
    /// Whether the body has an active `# Citations` section (for `sources_citations_conflict`
    /// and `missing_explicit_citation_mapping`, decided here when `mapping` is `None`).
    pub has_section: bool,
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

/// A failure of the static validation of one mapping item (§3.3 rules 3–10, §12.2 rule 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticError {
    /// `invalid_request` or `resource_limit`.
    pub code: &'static str,
    /// Names the field at fault (e.g. `citation_mappings[2].entries[0].source_id`), and the
    /// §3.3 code in words where the spec names one (e.g. `ambiguous_citation_mapping`).
    pub message: String,
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
