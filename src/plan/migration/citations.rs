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
use crate::okf::markdown::{self, LineKind};

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

// ---------------------------------------------------------------------------------------------
// Lines and sections (§6.2 rules 1–2)
// ---------------------------------------------------------------------------------------------

/// One scanned body line with its byte positions in the body.
#[derive(Debug, Clone, Copy)]
struct Ln<'a> {
    /// The line text without its line ending (and without a leading byte order mark).
    text: &'a str,
    /// Offset of `text` in the body.
    start: usize,
    /// Offset of the next line (just after this line's ending), or the body length.
    next: usize,
    kind: LineKind,
}

impl Ln<'_> {
    fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

/// The lines of `body` ([`markdown::scan`]) with their byte positions.
fn lines(body: &str) -> Vec<Ln<'_>> {
    let scanned = markdown::scan(body);
    let mut out = Vec::with_capacity(scanned.len());
    for (i, l) in scanned.iter().enumerate() {
        // The scanner strips a leading U+FEFF from the first line's text only.
        let bom = if l.start == 0 && body.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        let next = scanned.get(i + 1).map_or(body.len(), |n| n.start);
        out.push(Ln {
            text: l.text,
            start: l.start + bom,
            next,
            kind: l.kind,
        });
    }
    out
}

use markdown::{citations_heading, fence_close, fence_open, indent, mentions_citations};

/// One `# Citations` section: its heading line and the line that ends it.
#[derive(Debug, Clone, Copy)]
struct Head {
    /// Index of the heading line.
    line: usize,
    /// Index of the first line after the section (the next level-1 heading, or `lines.len()`).
    end_line: usize,
    anchored: bool,
}

impl Head {
    /// The section's byte span in the body: heading text start to section end.
    fn span(&self, lines: &[Ln<'_>]) -> (usize, usize) {
        let start = lines[self.line].start;
        let end = lines[self.end_line - 1].next;
        (start, end)
    }
    fn heading_span(&self, lines: &[Ln<'_>]) -> (usize, usize) {
        let l = &lines[self.line];
        (l.start, l.end())
    }
}

/// Every active `# Citations` section (§6.2 rule 1), as the validator sees them
/// ([`markdown::citations_sections_of`]).
fn sections(lines: &[Ln<'_>]) -> Vec<Head> {
    markdown::citations_sections_of(lines.iter().map(|l| (l.kind, l.text)))
        .into_iter()
        .map(|c| Head {
            line: c.heading_line,
            end_line: c.end_line,
            anchored: c.anchored,
        })
        .collect()
}

/// `WARN` `legacy_citations_in_code` (§6.2 rule 1): a `# Citations` heading line inside a
/// fenced code block that is never closed.
fn code_notice(lines: &[Ln<'_>]) -> Option<Notice> {
    // (fence char, fence length, whether a `# Citations` line is inside)
    let mut open: Option<(u8, usize, bool)> = None;
    for l in lines {
        if l.kind != LineKind::Fenced {
            // A fenced block ends with its closing line; any other kind means none is open.
            open = None;
            continue;
        }
        match open {
            None => open = fence_open(l.text).map(|(c, n)| (c, n, false)),
            Some((c, n, seen)) => {
                if fence_close(l.text, c, n) {
                    open = None;
                } else if !seen && citations_heading(l.text).is_some() {
                    open = Some((c, n, true));
                }
            }
        }
    }
    match open {
        Some((_, _, true)) => Some(Notice {
            code: "legacy_citations_in_code",
            message: "a `# Citations` heading lies inside a fenced code block that is never \
                      closed: it is code, not a citations section"
                .to_owned(),
        }),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Section entries (§6.2 rules 3–4, §12.1, §12.6 rule 2)
// ---------------------------------------------------------------------------------------------

/// A legacy citation entry owned by the parser.
#[derive(Debug, Clone)]
struct Entry<'a> {
    /// Byte span of the line text in the body.
    start: usize,
    end: usize,
    /// Its number (§6.2 rule 3, §12.1 rule 2), if it has one.
    number: Option<u64>,
    /// Spot content (§6.2 rule 3, §12.1 rule 3).
    raw: &'a str,
}

/// The list-marker form of an entry line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `-`, `*` or `+`.
    Bullet,
    /// A paragraph line starting `[N]`.
    Bracket,
    /// `N.` or `N)`: the delimiter.
    Ordered(u8),
}

/// What one line of a section is.
#[derive(Debug, Clone, Copy)]
enum Cls<'a> {
    Blank,
    /// An entry line: its form, the number it carries (`[N]`, or an ordered item's digits), its
    /// raw content.
    Entry {
        form: Form,
        digits: Option<u64>,
        raw: &'a str,
    },
    /// An entry form the grammar does not support (`[0]`, `0.`, `01.`, an indented item).
    Unsupported(&'static str),
    /// A line continuing a list item (which is then a multi-line item).
    Continuation,
    /// Fenced code, indented code, HTML or a comment.
    Opaque,
    /// Any other non-blank line; `text` when it is a paragraph-like text line.
    Unowned {
        text: bool,
    },
}

/// `[N]` followed by space or tab at the start of `s`: `Ok(Some((N, rest)))`; `Err(())` for a
/// zero or zero-led number (`[0]`, `[01]`); `Ok(None)` otherwise (also for numbers beyond
/// `u64`).
fn bracket_prefix(s: &str) -> Result<Option<(u64, &str)>, ()> {
    let Some(r) = s.strip_prefix('[') else {
        return Ok(None);
    };
    let d = r.bytes().take_while(u8::is_ascii_digit).count();
    if d == 0 || !r[d..].starts_with(']') || !matches!(r.as_bytes().get(d + 1), Some(b' ' | b'\t'))
    {
        return Ok(None);
    }
    if r.starts_with('0') {
        return Err(());
    }
    let Ok(n) = r[..d].parse::<u64>() else {
        return Ok(None);
    };
    Ok(Some((n, skip_ws(&r[d + 1..]))))
}

fn skip_ws(s: &str) -> &str {
    s.trim_start_matches([' ', '\t'])
}

/// A thematic break line (CommonMark §4.1): not a list item.
fn thematic_break(text: &str) -> bool {
    let (col, i) = indent(text);
    if col > 3 {
        return false;
    }
    let rest = &text[i..];
    let Some(c) = rest.bytes().next() else {
        return false;
    };
    matches!(c, b'-' | b'*' | b'_')
        && rest.bytes().all(|b| b == c || b == b' ' || b == b'\t')
        && rest.bytes().filter(|&b| b == c).count() >= 3
}

/// A list-item marker at the start of `s` (no indentation): the form and the content after
/// the marker and its whitespace; for an ordered marker also its digits (`Err` when zero or
/// zero-led).
fn list_marker(s: &str) -> Option<(Form, Result<u64, ()>, &str)> {
    let b = s.as_bytes();
    if matches!(b.first(), Some(b'-' | b'*' | b'+')) && matches!(b.get(1), Some(b' ' | b'\t')) {
        return Some((Form::Bullet, Ok(0), skip_ws(&s[1..])));
    }
    let d = s.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=9).contains(&d) {
        return None;
    }
    let delim = *b.get(d)?;
    if !matches!(delim, b'.' | b')') || !matches!(b.get(d + 1), Some(b' ' | b'\t')) {
        return None;
    }
    let n = if s.starts_with('0') {
        Err(())
    } else {
        s[..d].parse::<u64>().map_err(|_| ())
    };
    Some((Form::Ordered(delim), n, skip_ws(&s[d + 1..])))
}

/// The class of one section line (before continuations and run numbering).
fn classify<'a>(l: &Ln<'a>) -> Cls<'a> {
    match l.kind {
        LineKind::Blank => return Cls::Blank,
        LineKind::Fenced | LineKind::IndentedCode | LineKind::Html => return Cls::Opaque,
        LineKind::Heading(_) => return Cls::Unowned { text: false },
        LineKind::Text => {}
    }
    let t = l.text;
    if thematic_break(t) {
        return Cls::Unowned { text: true };
    }
    let (col, i) = indent(t);
    if let Some((form, n, content)) = list_marker(&t[i..]) {
        if col > 0 {
            return Cls::Unsupported("an indented list item");
        }
        return match form {
            Form::Ordered(_) => match n {
                Ok(n) => Cls::Entry {
                    form,
                    digits: Some(n),
                    raw: content,
                },
                Err(()) => Cls::Unsupported("an ordered item numbered 0 or with a leading zero"),
            },
            _ => match bracket_prefix(content) {
                Ok(Some((n, raw))) => Cls::Entry {
                    form,
                    digits: Some(n),
                    raw,
                },
                Ok(None) => Cls::Entry {
                    form,
                    digits: None,
                    raw: content,
                },
                Err(()) => Cls::Unsupported("a `[0]` or zero-led citation number"),
            },
        };
    }
    if col == 0 {
        match bracket_prefix(t) {
            Ok(Some((n, raw))) => {
                return Cls::Entry {
                    form: Form::Bracket,
                    digits: Some(n),
                    raw,
                }
            }
            Err(()) => return Cls::Unsupported("a `[0]` or zero-led citation number"),
            Ok(None) => {}
        }
    }
    Cls::Unowned { text: true }
}

/// Whether a class is a list-item entry (a continuation can follow it).
fn is_list_entry(c: &Cls<'_>) -> bool {
    matches!(
        c,
        Cls::Entry {
            form: Form::Bullet | Form::Ordered(_),
            ..
        }
    )
}

/// The parsed citations section of a body.
#[derive(Debug)]
struct Parsed<'a> {
    entries: Vec<Entry<'a>>,
    /// Syntax blockers (body offsets; shifted by the caller).
    blockers: Vec<Spot>,
    /// Line index range of the owned region: the heading line and the owned entry and blank
    /// lines after it.
    owned: (usize, usize),
    /// Byte span of the owned region in the body (line endings included).
    owned_span: (usize, usize),
    /// Whether content after the entries is kept (`trailing_content: keep`, §12.6 rule 2).
    kept: bool,
    /// Whether a kept line is an entry-like line holding a link or autolink: a real citation
    /// after the break, which `keep` would turn into prose (§12.8; no proposal then).
    trailing_links: bool,
}

/// A blocker as found: located in the body (before its shift to document offsets), or at the
/// frontmatter (`frontmatter`: the span `0..body_offset` of the document).
#[derive(Debug, Clone)]
struct Spot {
    code: &'static str,
    start: usize,
    end: usize,
    frontmatter: bool,
    message: String,
    action: Option<&'static str>,
}

impl Spot {
    fn new(code: &'static str, (start, end): (usize, usize), message: impl Into<String>) -> Self {
        Spot {
            code,
            start,
            end,
            frontmatter: false,
            message: message.into(),
            action: action_for(code),
        }
    }
    fn frontmatter(code: &'static str, message: impl Into<String>) -> Self {
        Spot {
            code,
            start: 0,
            end: 0,
            frontmatter: true,
            message: message.into(),
            action: action_for(code),
        }
    }
    fn with_action(self, action: &'static str) -> Self {
        Spot {
            action: Some(action),
            ..self
        }
    }
    fn into_blocker(self, offset: usize) -> Blocker {
        let (start, end) = if self.frontmatter {
            (0, offset)
        } else {
            (self.start + offset, self.end + offset)
        };
        Blocker {
            action: self.action,
            code: self.code,
            start,
            end,
            message: self.message,
        }
    }
}

/// The manual action a blocker code triggers (§10.3), if any.
fn action_for(code: &str) -> Option<&'static str> {
    Some(match code {
        "missing_explicit_citation_mapping"
        | "incomplete_citation_mapping"
        | "unresolved_citation_entry"
        | "unresolved_claim_marker"
        | "migration_citation_replay_evidence_missing"
        | "unresolved_inline_note" => "provide_citation_mapping",
        "ambiguous_citation_mapping"
        | "duplicate_citation_number"
        | "normalized_footnote_label_collision" => "disambiguate_citation_entry",
        "ambiguous_citation_destination" => "disambiguate_citation_destination",
        "unowned_citations_content"
        | "opaque_citations_content"
        | "unsupported_citation_entry"
        | "heading_source_anchor"
        | "multiple_citations_sections" => "normalize_citations_section",
        _ => return None,
    })
}

/// Parses the section `head` (§6.2 rules 3–4, §12.1, §12.6 rule 2).
fn parse_section<'a>(lines: &[Ln<'a>], head: &Head, mode: TrailingContent) -> Parsed<'a> {
    let body_lines = &lines[head.line + 1..head.end_line];
    let mut cls: Vec<Cls<'a>> = body_lines.iter().map(classify).collect();

    // Continuations: a text line right after a list item, or an indented one after blank
    // lines, belongs to that item (CommonMark), which is then a multi-line item.
    let mut item: Option<usize> = None;
    let mut after_blank = false;
    let mut multi: Vec<Option<usize>> = vec![None; cls.len()];
    for i in 0..cls.len() {
        let c = cls[i];
        match c {
            Cls::Blank => {
                after_blank = true;
                continue;
            }
            Cls::Entry { .. } if is_list_entry(&c) => item = Some(i),
            Cls::Unowned { text: true } | Cls::Unsupported(_) => {
                let indented = indent(body_lines[i].text).0 > 0;
                match item {
                    Some(k) if !after_blank || indented => {
                        cls[i] = Cls::Continuation;
                        multi[k] = Some(i);
                    }
                    _ => item = None,
                }
            }
            _ => item = None,
        }
        after_blank = false;
    }

    // Under `keep` (§12.6 rule 2, §12.8) the owned run is the unbroken run of entry and blank
    // lines right after the heading: the first other non-blank line and every line after it,
    // entry-like or not, is trailing content, kept byte for byte and never a blocker.
    let first_other = cls
        .iter()
        .position(|c| matches!(c, Cls::Opaque | Cls::Unowned { .. }));
    let keep = mode == TrailingContent::Keep && first_other.is_some();
    let owned_lines = match (keep, first_other) {
        (true, Some(t)) => t,
        _ => cls.len(),
    };
    let trailing_links = cls[owned_lines..]
        .iter()
        .zip(&body_lines[owned_lines..])
        .any(|(c, l)| match *c {
            Cls::Entry { raw, .. } => !Legacy::parse(raw).links.is_empty(),
            Cls::Unsupported(_) => !Legacy::parse(l.text).links.is_empty(),
            _ => false,
        });

    let mut blockers = Vec::new();
    let mut entries = Vec::new();
    // Ordered runs (§12.1 rule 2): (delimiter, start, count).
    let mut run: Option<(u8, u64, u64)> = None;
    let mut numbers: HashMap<u64, usize> = HashMap::new();
    for (i, c) in cls.iter().enumerate().take(owned_lines) {
        let l = &body_lines[i];
        let number = match *c {
            Cls::Blank => continue,
            Cls::Entry {
                form: Form::Ordered(d),
                digits,
                ..
            } => match run {
                Some((rd, s, k)) if rd == d => {
                    run = Some((rd, s, k + 1));
                    s.checked_add(k)
                }
                _ => {
                    run = Some((d, digits.unwrap_or(0), 1));
                    digits
                }
            },
            Cls::Entry { digits, .. } => {
                run = None;
                digits
            }
            _ => {
                run = None;
                None
            }
        };
        match *c {
            Cls::Entry { raw, .. } => {
                if let Some(last) = multi[i] {
                    let end = body_lines[last].end();
                    blockers.push(Spot::new(
                        "unsupported_citation_entry",
                        (l.start, end),
                        "a citation entry spans more than one line; write each entry on a \
                         single line",
                    ));
                }
                if let Some(n) = number {
                    if numbers.insert(n, entries.len()).is_some() {
                        blockers.push(Spot::new(
                            "duplicate_citation_number",
                            (l.start, l.end()),
                            format!("citation number {n} is used by more than one entry"),
                        ));
                    }
                }
                entries.push(Entry {
                    start: l.start,
                    end: l.end(),
                    number,
                    raw,
                });
            }
            Cls::Unsupported(why) => blockers.push(Spot::new(
                "unsupported_citation_entry",
                (l.start, l.end()),
                format!("unsupported citation entry: {why}"),
            )),
            _ => {}
        }
    }

    // Content that is neither an entry nor blank, outside a kept tail: a blocker.
    if !keep {
        let mut i = 0;
        while i < cls.len() {
            let code = match cls[i] {
                Cls::Opaque => "opaque_citations_content",
                Cls::Unowned { .. } => "unowned_citations_content",
                _ => {
                    i += 1;
                    continue;
                }
            };
            // One blocker per run of adjacent lines of the same kind.
            let start = body_lines[i].start;
            let mut j = i;
            while j + 1 < cls.len()
                && matches!(
                    (code, cls[j + 1]),
                    ("opaque_citations_content", Cls::Opaque)
                        | ("unowned_citations_content", Cls::Unowned { .. })
                )
            {
                j += 1;
            }
            let message = if code == "opaque_citations_content" {
                "fenced code, indented code, HTML or a comment inside the citations section"
            } else {
                "content inside the citations section that is not a citation entry"
            };
            blockers.push(Spot::new(code, (start, body_lines[j].end()), message));
            i = j + 1;
        }
    }
    let owned_end_line = head.line + 1 + owned_lines;
    let owned_span = (lines[head.line].start, lines[owned_end_line - 1].next);
    Parsed {
        entries,
        blockers,
        owned: (head.line, owned_end_line),
        owned_span,
        kept: keep,
        trailing_links,
    }
}

// ---------------------------------------------------------------------------------------------
// Inline syntax: code spans, escapes, links (projection, §3.3)
// ---------------------------------------------------------------------------------------------

/// Bytes of `b` inside inline code spans ([`markdown::code_span_mask`]).
fn code_mask(b: &[u8]) -> Vec<bool> {
    // Only a backtick opens a code span: without one (most lines) the mask is all false.
    if memchr::memchr(b'`', b).is_none() {
        return vec![false; b.len()];
    }
    markdown::code_span_mask(b)
}

/// Whether the byte at `p` is backslash-escaped (an odd run of backslashes before it).
fn escaped(b: &[u8], p: usize) -> bool {
    b[..p].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1
}

/// `s` with backslash escapes of ASCII punctuation resolved (CommonMark §2.4).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&n) = chars.peek() {
                if n.is_ascii_punctuation() {
                    out.push(n);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

/// An inline link `[text](destination "title")` or an autolink `<scheme:…>` of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Link<'a> {
    /// The link text (raw bytes between the brackets); empty for an autolink.
    text: &'a str,
    /// The destination, escapes resolved.
    dest: String,
    /// The title attribute, escapes resolved.
    title: Option<String>,
}

/// The inline link starting at the `[` at `p`: the link and the offset after it.
fn inline_link<'a>(s: &'a str, mask: &[bool], p: usize) -> Option<(Link<'a>, usize)> {
    let b = s.as_bytes();
    // The link text: balanced brackets, escapes and code spans skipped.
    let mut depth = 0usize;
    let mut j = p + 1;
    let close = loop {
        let c = *b.get(j)?;
        if mask[j] {
            j += 1;
            continue;
        }
        match c {
            b'\\' => {
                j += 2;
                continue;
            }
            b'[' => depth += 1,
            b']' if depth == 0 => break j,
            b']' => depth -= 1,
            _ => {}
        }
        j += 1;
    };
    let mut k = close + 1;
    if b.get(k) != Some(&b'(') {
        return None;
    }
    k += 1;
    let ws = |k: &mut usize| {
        let from = *k;
        while matches!(b.get(*k), Some(b' ' | b'\t')) {
            *k += 1;
        }
        *k > from
    };
    ws(&mut k);
    let dest = if b.get(k) == Some(&b'<') {
        let from = k + 1;
        let mut e = from;
        loop {
            match *b.get(e)? {
                b'\\' => e += 2,
                b'>' => break,
                b'<' => return None,
                _ => e += 1,
            }
        }
        let d = unescape(s.get(from..e)?);
        k = e + 1;
        d
    } else {
        let from = k;
        let mut parens = 0usize;
        while let Some(&c) = b.get(k) {
            if c == b'\\' && b.get(k + 1).is_some_and(u8::is_ascii_punctuation) {
                k += 2;
                continue;
            }
            if c == b' ' || c == b'\t' || c.is_ascii_control() {
                break;
            }
            if c == b'(' {
                parens += 1;
            } else if c == b')' {
                if parens == 0 {
                    break;
                }
                parens -= 1;
            }
            k += 1;
        }
        if parens != 0 {
            return None;
        }
        unescape(s.get(from..k)?)
    };
    let spaced = ws(&mut k);
    let mut title = None;
    if let Some(&open) = b.get(k) {
        let closing = match open {
            b'"' => Some(b'"'),
            b'\'' => Some(b'\''),
            b'(' => Some(b')'),
            _ => None,
        };
        if let Some(closing) = closing {
            if !spaced && !dest.is_empty() {
                return None;
            }
            let from = k + 1;
            let mut e = from;
            loop {
                let c = *b.get(e)?;
                if c == b'\\' {
                    e += 2;
                    continue;
                }
                if c == closing {
                    break;
                }
                e += 1;
            }
            title = Some(unescape(s.get(from..e)?));
            k = e + 1;
            ws(&mut k);
        }
    }
    if b.get(k) != Some(&b')') {
        return None;
    }
    let link = Link {
        text: s.get(p + 1..close)?,
        dest,
        title,
    };
    Some((link, k + 1))
}

/// The autolink `<scheme:…>` starting at the `<` at `p` (CommonMark §6.5, URI autolinks).
fn autolink(s: &str, p: usize) -> Option<(Link<'_>, usize)> {
    let b = s.as_bytes();
    let from = p + 1;
    let scheme = b[from..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
        .count();
    if !(2..=32).contains(&scheme)
        || !b[from].is_ascii_alphabetic()
        || b.get(from + scheme) != Some(&b':')
    {
        return None;
    }
    let mut e = from + scheme + 1;
    loop {
        match *b.get(e)? {
            b'>' => break,
            c if c == b'<' || c == b' ' || c.is_ascii_control() => return None,
            _ => e += 1,
        }
    }
    let link = Link {
        text: "",
        dest: s.get(from..e)?.to_owned(),
        title: None,
    };
    Some((link, e + 1))
}

/// What the legacy entry itself says (§3.3 projection).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Legacy<'a> {
    /// Every inline link and autolink, in order (code spans excluded).
    links: Vec<Link<'a>>,
    /// The bare entry text (trimmed) when there is no link and it has no whitespace and none
    /// of `[]()<>`.
    bare: Option<&'a str>,
}

impl<'a> Legacy<'a> {
    fn parse(raw: &'a str) -> Self {
        let b = raw.as_bytes();
        let mask = code_mask(b);
        let mut links = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if mask[i] {
                i += 1;
                continue;
            }
            let found = match b[i] {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'[' => inline_link(raw, &mask, i),
                b'<' => autolink(raw, i),
                _ => None,
            };
            match found {
                Some((link, next)) => {
                    links.push(link);
                    i = next;
                }
                None => i += 1,
            }
        }
        let trimmed = raw.trim_matches([' ', '\t']);
        let bare = (links.is_empty()
            && !trimmed.is_empty()
            && !trimmed
                .chars()
                .any(|c| c.is_whitespace() || "[]()<>".contains(c)))
        .then_some(trimmed);
        Legacy { links, bare }
    }

    /// The legacy title: the (first) link's text.
    fn title(&self) -> &'a str {
        self.links.first().map_or("", |l| l.text)
    }

    /// The legacy resource: the (first) link's destination, else the bare text.
    fn resource(&self) -> &str {
        match self.links.first() {
            Some(l) => &l.dest,
            None => self.bare.unwrap_or(""),
        }
    }

    fn link_title(&self) -> Option<&str> {
        self.links.first().and_then(|l| l.title.as_deref())
    }
}

/// A projected source plus the link title attribute the rendering keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Projected {
    title: String,
    resource: String,
    link_title: Option<String>,
}

impl Projected {
    /// The footnote definition content (§6.3 rule 5): the text after `[^ID]: `.
    fn content(&self) -> String {
        if self.title.is_empty() && self.link_title.is_none() {
            return self.resource.clone();
        }
        let mut s = String::with_capacity(self.title.len() + self.resource.len() + 8);
        s.push('[');
        s.push_str(&self.title);
        s.push_str("](");
        for c in self.resource.chars() {
            match c {
                ' ' => s.push_str("%20"),
                '(' => s.push_str("%28"),
                ')' => s.push_str("%29"),
                '<' => s.push_str("%3C"),
                '>' => s.push_str("%3E"),
                c => s.push(c),
            }
        }
        if let Some(t) = &self.link_title {
            s.push_str(" \"");
            for c in t.chars() {
                if c == '\\' || c == '"' {
                    s.push('\\');
                }
                s.push(c);
            }
            s.push('"');
        }
        s.push(')');
        s
    }
}

/// The projection of one entry with its mapping entry (§3.3): the source, or the blocker
/// codes with their messages.
fn project(
    legacy: &Legacy<'_>,
    m: &MappingEntry,
) -> Result<Projected, Vec<(&'static str, String)>> {
    if legacy.links.len() > 1 {
        return Err(vec![(
            "ambiguous_citation_destination",
            format!(
                "the citation entry has {} links or autolinks; keep one destination per entry",
                legacy.links.len()
            ),
        )]);
    }
    let mut errs = Vec::new();
    let (lt, lr) = (legacy.title(), legacy.resource());
    if let Some(t) = &m.title {
        if !lt.is_empty() && t != lt {
            errs.push((
                "citation_title_mismatch",
                format!(
                    "the mapping title of source id {:?} differs from the entry's link text",
                    m.source_id
                ),
            ));
        }
    }
    if let Some(r) = &m.resource {
        if !lr.is_empty() && r != lr {
            errs.push((
                "citation_resource_mismatch",
                format!(
                    "the mapping resource of source id {:?} differs from the entry's destination",
                    m.source_id
                ),
            ));
        }
    }
    let title = m.title.clone().unwrap_or_else(|| lt.to_owned());
    let resource = m.resource.clone().unwrap_or_else(|| lr.to_owned());
    if resource.is_empty() {
        errs.push((
            "missing_citation_resource",
            format!(
                "the citation entry mapped to source id {:?} has no link destination and no \
                 bare resource; give the mapping entry a resource",
                m.source_id
            ),
        ));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Projected {
        title,
        resource,
        link_title: legacy.link_title().map(str::to_owned),
    })
}

// ---------------------------------------------------------------------------------------------
// Prose: claim markers (§6.2 rule 5), inline notes (§12.2 rule 1), footnote definitions
// ---------------------------------------------------------------------------------------------

/// A claim marker `[N]` (`number` 0 for the invalid `[0]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Marker {
    start: usize,
    end: usize,
    number: u64,
}

/// An inline note `^[text]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Note<'a> {
    start: usize,
    end: usize,
    text: &'a str,
}

/// Claim markers and inline notes on the interpretable lines of `lines` for which `skip` is
/// false, in body order.
fn prose<'a>(lines: &[Ln<'a>], skip: impl Fn(usize) -> bool) -> (Vec<Marker>, Vec<Note<'a>>) {
    let mut markers = Vec::new();
    let mut notes = Vec::new();
    for (idx, l) in lines.iter().enumerate() {
        if !matches!(l.kind, LineKind::Text | LineKind::Heading(_))
            || !l.text.contains('[')
            || skip(idx)
        {
            continue;
        }
        let t = l.text;
        let b = t.as_bytes();
        let mask = code_mask(b);
        let definition = markdown::is_footnote_definition(t);
        for p in memchr::memchr2_iter(b'[', b'^', b) {
            if mask[p] || escaped(b, p) {
                continue;
            }
            if b[p] == b'^' {
                if let Some((end, text)) = inline_note_at(t, &mask, p) {
                    notes.push(Note {
                        start: l.start + p,
                        end: l.start + end,
                        text,
                    });
                }
            } else if !definition {
                if let Some((end, number)) = marker_at(b, p) {
                    markers.push(Marker {
                        start: l.start + p,
                        end: l.start + end,
                        number,
                    });
                }
            }
        }
    }
    (markers, notes)
}

/// The claim marker at the `[` at `p` (§6.2 rule 5): its end and number.
fn marker_at(b: &[u8], p: usize) -> Option<(usize, u64)> {
    let d = b[p + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if d == 0 || b.get(p + 1 + d) != Some(&b']') {
        return None;
    }
    if p > 0 && matches!(b[p - 1], b'!' | b'^') {
        return None;
    }
    let end = p + d + 2;
    if matches!(b.get(end), Some(b'(' | b'[' | b':')) {
        return None;
    }
    let digits = std::str::from_utf8(&b[p + 1..p + 1 + d]).ok()?;
    if digits == "0" {
        return Some((end, 0));
    }
    if digits.starts_with('0') {
        return None;
    }
    digits.parse::<u64>().ok().map(|n| (end, n))
}

/// The inline note at the `^` at `p` (§12.2 rule 1): its end and text.
fn inline_note_at<'a>(t: &'a str, mask: &[bool], p: usize) -> Option<(usize, &'a str)> {
    let b = t.as_bytes();
    if b.get(p + 1) != Some(&b'[') || mask.get(p + 1) != Some(&false) {
        return None;
    }
    let from = p + 2;
    let close = from + b[from..].iter().position(|&c| c == b'[' || c == b']')?;
    if b[close] != b']' || mask[close] || close == from {
        return None;
    }
    if matches!(b.get(close + 1), Some(b'(' | b'[' | b':')) {
        return None;
    }
    Some((close + 1, t.get(from..close)?))
}

/// A footnote definition line: `(label, content)` with the content trimmed.
fn definition(text: &str) -> Option<(&str, &str)> {
    if !markdown::is_footnote_definition(text) {
        return None;
    }
    let rest = text.trim_start_matches(' ').strip_prefix("[^")?;
    let end = rest.find(']')?;
    let content = rest[end + 1..].strip_prefix(':')?;
    Some((&rest[..end], content.trim_matches([' ', '\t'])))
}

/// Whether an existing definition's (trimmed) content is the rendered `content`.
fn same_content(existing: &str, content: &str) -> bool {
    existing == content.trim_matches([' ', '\t'])
}

/// A footnote definition of the body.
#[derive(Debug, Clone)]
struct Def<'a> {
    /// Normalised label (§6.3 rule 6).
    label: String,
    content: &'a str,
    start: usize,
    end: usize,
}

/// The footnote definitions on interpretable lines for which `skip` is false.
fn definitions<'a>(lines: &[Ln<'a>], skip: impl Fn(usize) -> bool) -> Vec<Def<'a>> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.kind != LineKind::Text || skip(i) {
            continue;
        }
        if let Some((label, content)) = definition(l.text) {
            out.push(Def {
                label: markdown::normalise_label(label),
                content,
                start: l.start,
                end: l.end(),
            });
        }
    }
    out
}

/// The mapped inline notes of a mapping: note text → source id (§12.2 rule 2).
fn note_map(mapping: &CitationMapping) -> HashMap<&str, &str> {
    let mut map = HashMap::new();
    for m in &mapping.entries {
        if let Some(n) = &m.inline_note {
            map.entry(n.as_str()).or_insert(m.source_id.as_str());
        }
    }
    map
}

/// The rewrite of one inline note (§12.2 rules 2 and 2a): the footnote references and the
/// mapped note texts used, or `None` when it stays as it is.
fn note_rewrite<'a>(text: &'a str, map: &HashMap<&str, &str>) -> Option<(String, Vec<&'a str>)> {
    if let Some(id) = map.get(text) {
        return Some((format!("[^{id}]"), vec![text]));
    }
    let parts: Vec<&str> = text.split(", ").collect();
    if parts.len() < 2 || !parts.iter().all(|p| map.contains_key(p)) {
        return None;
    }
    let mut refs = String::new();
    for p in &parts {
        refs.push_str("[^");
        refs.push_str(map.get(p).copied().unwrap_or_default());
        refs.push(']');
    }
    Some((refs, parts))
}

// ---------------------------------------------------------------------------------------------
// The transition of one body
// ---------------------------------------------------------------------------------------------

/// The mapping entries that select `e` (§3.3 selectors), via the two indexes.
fn selecting(
    e: &Entry<'_>,
    mapping: &CitationMapping,
    by_number: &HashMap<u64, Vec<usize>>,
    by_entry: &HashMap<&str, Vec<usize>>,
) -> Vec<usize> {
    let mut out = Vec::new();
    if let Some(n) = e.number {
        for &j in by_number.get(&n).into_iter().flatten() {
            let m = &mapping.entries[j];
            if m.legacy_entry.as_deref().is_none_or(|s| s == e.raw) {
                out.push(j);
            }
        }
    }
    out.extend(by_entry.get(e.raw).into_iter().flatten().copied());
    out.sort_unstable();
    out
}

/// Matches the section entries with the mapping entries (§3.3 selectors): for each entry its
/// unique mapping entry, and the blockers.
fn match_entries(
    entries: &[Entry<'_>],
    mapping: &CitationMapping,
    heading: (usize, usize),
    blockers: &mut Vec<Spot>,
) -> Vec<Option<usize>> {
    let mut by_number: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut by_entry: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, m) in mapping.entries.iter().enumerate() {
        match (m.legacy_number, &m.legacy_entry) {
            (Some(n), _) => by_number.entry(u64::from(n)).or_default().push(j),
            (None, Some(s)) => by_entry.entry(s.as_str()).or_default().push(j),
            (None, None) => {}
        }
    }
    let mut hits: Vec<Vec<usize>> = vec![Vec::new(); mapping.entries.len()];
    let mut assigned = Vec::with_capacity(entries.len());
    for (k, e) in entries.iter().enumerate() {
        let sel = selecting(e, mapping, &by_number, &by_entry);
        for &j in &sel {
            hits[j].push(k);
        }
        let which = match e.number {
            Some(n) => format!("citation entry {} (number {n})", k + 1),
            None => format!("citation entry {} (no number)", k + 1),
        };
        match sel.as_slice() {
            [] => {
                blockers.push(Spot::new(
                    "unresolved_citation_entry",
                    (e.start, e.end),
                    format!("{which} is selected by no mapping entry"),
                ));
                assigned.push(None);
            }
            [j] => assigned.push(Some(*j)),
            many => {
                let list: Vec<String> = many.iter().map(|j| format!("entries[{j}]")).collect();
                blockers.push(Spot::new(
                    "ambiguous_citation_mapping",
                    (e.start, e.end),
                    format!("{which} is selected by mapping {}", list.join(", ")),
                ));
                assigned.push(None);
            }
        }
    }
    for (j, h) in hits.iter().enumerate() {
        match h.as_slice() {
            [] => blockers.push(Spot::new(
                "incomplete_citation_mapping",
                heading,
                format!("mapping entries[{j}] selects no citation entry of the section"),
            )),
            [_] => {}
            [_, rest @ ..] => {
                for &k in rest {
                    blockers.push(Spot::new(
                        "incomplete_citation_mapping",
                        (entries[k].start, entries[k].end),
                        format!(
                            "mapping entries[{j}] selects more than one citation entry (also \
                             entry {}); map each entry with its own mapping entry",
                            k + 1
                        ),
                    ));
                }
            }
        }
    }
    assigned
}

/// One rendered footnote definition of the block: per distinct normalised source id.
#[derive(Debug, Clone)]
struct Group {
    id: String,
    content: String,
    source: ProjectedSource,
    /// Index of its first entry.
    entry: usize,
    /// Whether an identical definition already exists (skipped).
    skip: bool,
}

/// Whether a line index lies in `range`.
fn within(range: (usize, usize)) -> impl Fn(usize) -> bool {
    move |i| i >= range.0 && i < range.1
}

/// A body with its scanned lines and parsed section.
struct Doc<'a, 'l> {
    body: &'a str,
    lines: &'l [Ln<'a>],
    head: &'l Head,
    parsed: &'l Parsed<'a>,
}

/// The rewrite with `mapping` (§6.3 rule 4, §12.2, §12.6): the new body and the sources, or
/// `None` with the reasons in `blockers`.
fn migrate(
    doc: &Doc<'_, '_>,
    nl: &str,
    kind: DocKind,
    mapping: &CitationMapping,
    blockers: &mut Vec<Spot>,
) -> Option<(String, Vec<ProjectedSource>)> {
    let Doc {
        body,
        lines,
        head,
        parsed,
    } = *doc;
    let entries = &parsed.entries;
    let heading = head.heading_span(lines);
    let assigned = match_entries(entries, mapping, heading, blockers);

    // Projection and replay sufficiency, per entry.
    let mut projected: Vec<Option<Projected>> = Vec::with_capacity(entries.len());
    for (e, a) in entries.iter().zip(&assigned) {
        let Some(j) = *a else {
            projected.push(None);
            continue;
        };
        let m = &mapping.entries[j];
        let legacy = Legacy::parse(e.raw);
        let p = match project(&legacy, m) {
            Ok(p) => Some(p),
            Err(errs) => {
                for (code, message) in errs {
                    blockers.push(Spot::new(code, (e.start, e.end), message));
                }
                None
            }
        };
        if m.legacy_entry.is_none() {
            let why = if legacy.link_title().is_some() {
                Some("its link has a title attribute, which only a legacy_entry selector keeps")
            } else if kind == DocKind::Reserved
                && (m.resource.is_none() || (m.title.is_none() && !legacy.title().is_empty()))
            {
                Some(
                    "a reserved document keeps no sources: give the mapping entry a resource \
                     (and a title when the link has text), or select it by legacy_entry",
                )
            } else {
                None
            };
            if let Some(why) = why {
                blockers.push(Spot::new(
                    "migration_citation_replay_evidence_missing",
                    (e.start, e.end),
                    format!(
                        "mapping entries[{j}] selects its entry by legacy_number only, but {why}"
                    ),
                ));
            }
        }
        projected.push(p);
    }

    // The definitions block: one per distinct normalised source id, in entry order.
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for (k, (a, p)) in assigned.iter().zip(&projected).enumerate() {
        let (Some(j), Some(p)) = (a, p) else {
            continue;
        };
        let m = &mapping.entries[*j];
        let label = markdown::normalise_label(&m.source_id);
        let content = p.content();
        match group_of.get(&label) {
            Some(&g) => {
                let g = &groups[g];
                // Different ids with one normalised label are rule 11's collision, raised by
                // the caller (`validate_mapping` returns `Ok(true)`).
                if g.id == m.source_id && g.content != content {
                    blockers.push(Spot::new(
                        "reused_source_metadata_conflict",
                        (entries[k].start, entries[k].end),
                        format!(
                            "source id {:?} is rendered with different content for entries {} \
                             and {}",
                            m.source_id,
                            g.entry + 1,
                            k + 1
                        ),
                    ));
                }
            }
            None => {
                group_of.insert(label, groups.len());
                groups.push(Group {
                    id: m.source_id.clone(),
                    content,
                    source: ProjectedSource {
                        id: m.source_id.clone(),
                        title: p.title.clone(),
                        resource: p.resource.clone(),
                    },
                    entry: k,
                    skip: false,
                });
            }
        }
    }
    let owned = within(parsed.owned);
    for d in definitions(lines, &owned) {
        let Some(&g) = group_of.get(&d.label) else {
            continue;
        };
        let g = &mut groups[g];
        if same_content(d.content, &g.content) {
            g.skip = true;
        } else {
            blockers.push(Spot::new(
                "conflicting_footnote_definition",
                (d.start, d.end),
                format!(
                    "an existing footnote definition has the label of source id {:?} with \
                     different content",
                    g.id
                ),
            ));
        }
    }

    // Claim markers and inline notes outside the owned region.
    let (markers, notes) = prose(lines, &owned);
    let mut patches: Vec<(usize, usize, String)> = Vec::new();
    if mapping.claim_markers == ClaimMarkers::Rewrite {
        let mut by_number: HashMap<u64, Option<&str>> = HashMap::new();
        for (e, a) in entries.iter().zip(&assigned) {
            if let Some(n) = e.number {
                by_number.insert(n, a.map(|j| mapping.entries[j].source_id.as_str()));
            }
        }
        for mk in &markers {
            match by_number.get(&mk.number) {
                _ if mk.number == 0 => blockers.push(Spot::new(
                    "invalid_claim_marker",
                    (mk.start, mk.end),
                    "claim marker [0]: citation numbers start at 1",
                )),
                Some(Some(id)) => patches.push((mk.start, mk.end, format!("[^{id}]"))),
                // The entry itself is unresolved or ambiguous: blocked there.
                Some(None) => {}
                None => blockers.push(Spot::new(
                    "unresolved_claim_marker",
                    (mk.start, mk.end),
                    format!(
                        "claim marker [{}] has no citation entry {}",
                        mk.number, mk.number
                    ),
                )),
            }
        }
    }
    let map = note_map(mapping);
    let mut used: HashSet<&str> = HashSet::new();
    for n in &notes {
        if let Some((refs, parts)) = note_rewrite(n.text, &map) {
            patches.push((n.start, n.end, refs));
            used.extend(parts);
        }
    }
    for (k, (e, a)) in entries.iter().zip(&assigned).enumerate() {
        let Some(j) = *a else {
            continue;
        };
        if let Some(t) = &mapping.entries[j].inline_note {
            if !used.contains(t.as_str()) {
                blockers.push(Spot::new(
                    "unresolved_inline_note",
                    (e.start, e.end),
                    format!(
                        "the inline_note of mapping entries[{j}] (citation entry {}) occurs \
                         nowhere in the body",
                        k + 1
                    ),
                ));
            }
        }
    }
    if !blockers.is_empty() {
        return None;
    }

    // The rewrite: the owned region becomes the definitions block.
    let mut block = String::new();
    for g in groups.iter().filter(|g| !g.skip) {
        block.push_str("[^");
        block.push_str(&g.id);
        block.push_str("]: ");
        block.push_str(&g.content);
        block.push_str(nl);
    }
    let (os, oe) = parsed.owned_span;
    if !block.is_empty() && oe < body.len() {
        // Content follows: keep it out of the last definition (it would continue it).
        block.push_str(nl);
    }
    patches.push((os, oe, block));
    patches.sort_by_key(|p| p.0);
    let mut out = String::with_capacity(body.len() + 64);
    let mut pos = 0;
    for (s, e, text) in &patches {
        out.push_str(&body[pos..*s]);
        out.push_str(text);
        pos = *e;
    }
    out.push_str(&body[pos..]);

    // Post-check (§6.3 rule 4, §12.2 rule 4).
    if let Some(why) = post_check(&out, mapping, &map) {
        blockers.push(Spot::new(
            "citation_semantic_mismatch",
            head.span(lines),
            format!("the rewritten body still has {why}"),
        ));
        return None;
    }
    let sources = match kind {
        DocKind::Concept => groups.into_iter().map(|g| g.source).collect(),
        DocKind::Reserved => Vec::new(),
    };
    Some((out, sources))
}

/// What of the legacy syntax remains in a rewritten body, if anything.
fn post_check(
    body: &str,
    mapping: &CitationMapping,
    map: &HashMap<&str, &str>,
) -> Option<&'static str> {
    let lines = lines(body);
    if !sections(&lines).is_empty() {
        return Some("a `# Citations` section");
    }
    let (markers, notes) = prose(&lines, |_| false);
    if mapping.claim_markers == ClaimMarkers::Rewrite && !markers.is_empty() {
        return Some("a claim marker");
    }
    if notes.iter().any(|n| note_rewrite(n.text, map).is_some()) {
        return Some("a mapped inline note");
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Target replay (§6.7 rules 1 and 6, §12.2 rule 3)
// ---------------------------------------------------------------------------------------------

/// The expected source of one mapping entry in an already-migrated body, or why it cannot
/// be known (as a blocker at the end of the body, or at the frontmatter).
fn expected(
    m: &MappingEntry,
    kind: DocKind,
    sources: &[ProjectedSource],
    eof: usize,
) -> Result<Projected, Spot> {
    if let Some(raw) = &m.legacy_entry {
        return project(&Legacy::parse(raw), m).map_err(|errs| {
            let codes: Vec<&str> = errs.iter().map(|e| e.0).collect();
            Spot::new(
                "migration_replay_mismatch",
                (eof, eof),
                format!(
                    "the legacy_entry of source id {:?} does not project ({}): the transition \
                     would have been blocked",
                    m.source_id,
                    codes.join(", ")
                ),
            )
        });
    }
    match kind {
        DocKind::Concept => {
            let Some(s) = sources.iter().find(|s| s.id == m.source_id) else {
                return Err(Spot::frontmatter(
                    "migration_replay_mismatch",
                    format!("no sources item has the id {:?}", m.source_id),
                ));
            };
            Ok(Projected {
                title: m.title.clone().unwrap_or_else(|| s.title.clone()),
                resource: m.resource.clone().unwrap_or_else(|| s.resource.clone()),
                link_title: None,
            })
        }
        DocKind::Reserved => match &m.resource {
            Some(r) => Ok(Projected {
                title: m.title.clone().unwrap_or_default(),
                resource: r.clone(),
                link_title: None,
            }),
            None => Err(Spot::new(
                "migration_citation_replay_evidence_missing",
                (eof, eof),
                format!(
                    "source id {:?} of a reserved document is selected by legacy_number only \
                     and has no resource: its footnote definition cannot be checked",
                    m.source_id
                ),
            )),
        },
    }
}

fn replay(
    body: &str,
    kind: DocKind,
    mapping: Option<&CitationMapping>,
    sources: &[ProjectedSource],
) -> Vec<Spot> {
    let mut out = Vec::new();
    let lines = lines(body);
    let heads = if mentions_citations(body) {
        sections(&lines)
    } else {
        Vec::new()
    };
    for h in &heads {
        out.push(
            Spot::new(
                "migration_replay_mismatch",
                h.span(&lines),
                "an active `# Citations` section remains in a v0.2 document",
            )
            .with_action("normalize_citations_section"),
        );
    }
    let Some(mapping) = mapping else {
        return out;
    };
    let in_section = |i: usize| heads.iter().any(|h| i >= h.line && i < h.end_line);
    let eof = (body.len(), body.len());
    let defs = definitions(&lines, in_section);

    // Definitions and sources, per distinct normalised source id.
    let mut seen: HashMap<String, (usize, Option<String>)> = HashMap::new();
    for (j, m) in mapping.entries.iter().enumerate() {
        let label = markdown::normalise_label(&m.source_id);
        let exp = match expected(m, kind, sources, body.len()) {
            Ok(p) => p,
            Err(raw) => {
                out.push(raw);
                seen.entry(label).or_insert((j, None));
                continue;
            }
        };
        if kind == DocKind::Concept {
            let ok = sources
                .iter()
                .find(|s| s.id == m.source_id)
                .is_some_and(|s| s.title == exp.title && s.resource == exp.resource);
            if !ok {
                out.push(Spot::frontmatter(
                    "migration_replay_mismatch",
                    format!(
                        "the sources item {:?} is missing or differs from the mapping's \
                         projection",
                        m.source_id
                    ),
                ));
            }
        }
        let content = exp.content();
        if let Some((first, prev)) = seen.get(&label) {
            if prev.as_ref().is_some_and(|p| *p != content) {
                out.push(Spot::new(
                    "migration_replay_mismatch",
                    eof,
                    format!(
                        "mapping entries[{first}] and entries[{j}] give one footnote label \
                         different content"
                    ),
                ));
            }
            continue;
        }
        let mut found = false;
        for d in defs.iter().filter(|d| d.label == label) {
            found = true;
            if !same_content(d.content, &content) {
                out.push(Spot::new(
                    "migration_replay_mismatch",
                    (d.start, d.end),
                    format!(
                        "the footnote definition of source id {:?} differs from the mapping's \
                         rendering",
                        m.source_id
                    ),
                ));
            }
        }
        if !found {
            out.push(Spot::new(
                "migration_replay_mismatch",
                eof,
                format!("no footnote definition for source id {:?}", m.source_id),
            ));
        }
        seen.insert(label, (j, Some(content)));
    }

    // No claim marker of a number-selected entry, no mapped inline note remains.
    let (markers, notes) = prose(&lines, in_section);
    if mapping.claim_markers == ClaimMarkers::Rewrite {
        let numbers: HashSet<u64> = mapping
            .entries
            .iter()
            .filter_map(|m| m.legacy_number.map(u64::from))
            .collect();
        for mk in markers.iter().filter(|mk| numbers.contains(&mk.number)) {
            out.push(Spot::new(
                "migration_replay_mismatch",
                (mk.start, mk.end),
                format!("claim marker [{}] of a mapped entry remains", mk.number),
            ));
        }
    }
    let map = note_map(mapping);
    for n in notes
        .iter()
        .filter(|n| note_rewrite(n.text, &map).is_some())
    {
        out.push(Spot::new(
            "migration_replay_mismatch",
            (n.start, n.end),
            "an inline note with a mapped text remains",
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Static validation (§3.3 rules 3–11, §12.2 rule 2)
// ---------------------------------------------------------------------------------------------

/// The largest text field, in bytes (§3.3 rule 8, §12.2 rule 2).
const FIELD_MAX: usize = 4096;

/// The largest `legacy_number` (§3.3 entry schema).
const NUMBER_MAX: u32 = 1_000_000;

fn invalid(message: String) -> StaticError {
    StaticError {
        code: "invalid_request",
        message,
    }
}

fn is_c0_or_del(c: char) -> bool {
    c < ' ' || c == '\u{7f}'
}

/// Whether `raw` is a valid `legacy_entry` (§3.3 rule 4, without the size).
fn entry_text_ok(raw: &str) -> bool {
    !raw.trim().is_empty()
        && !raw
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\r' | '\n'))
}

/// Whether `note` is a valid `inline_note` (§12.2 rule 2, without the size).
fn note_text_ok(note: &str) -> bool {
    !note.is_empty()
        && !note
            .chars()
            .any(|c| is_c0_or_del(c) || c == '[' || c == ']')
}

fn validate(item: &CitationMapping, index: usize) -> Result<bool, StaticError> {
    let field = |j: usize, name: &str| format!("citation_mappings[{index}].entries[{j}].{name}");
    // Sizes first: `resource_limit` (rule 8, §12.2 rule 2).
    for (j, m) in item.entries.iter().enumerate() {
        let sized = [
            ("source_id", Some(&m.source_id)),
            ("title", m.title.as_ref()),
            ("resource", m.resource.as_ref()),
            ("inline_note", m.inline_note.as_ref()),
        ];
        for (name, value) in sized {
            if value.is_some_and(|v| v.len() > FIELD_MAX) {
                return Err(StaticError {
                    code: "resource_limit",
                    message: format!("{} is longer than {FIELD_MAX} bytes", field(j, name)),
                });
            }
        }
    }
    for (j, m) in item.entries.iter().enumerate() {
        if m.legacy_number.is_none() && m.legacy_entry.is_none() {
            return Err(invalid(format!(
                "citation_mappings[{index}].entries[{j}] needs legacy_number or legacy_entry"
            )));
        }
        if let Some(n) = m.legacy_number {
            if !(1..=NUMBER_MAX).contains(&n) {
                return Err(invalid(format!(
                    "{} must be between 1 and {NUMBER_MAX}",
                    field(j, "legacy_number")
                )));
            }
        }
        if let Some(e) = &m.legacy_entry {
            if e.len() > FIELD_MAX {
                return Err(invalid(format!(
                    "{} is longer than {FIELD_MAX} bytes",
                    field(j, "legacy_entry")
                )));
            }
            if !entry_text_ok(e) {
                return Err(invalid(format!(
                    "{} is blank or has control characters other than TAB, CR and LF",
                    field(j, "legacy_entry")
                )));
            }
        }
        let id = &m.source_id;
        if id.chars().any(is_c0_or_del) {
            return Err(invalid(format!(
                "{} has a control character (invalid_source_id)",
                field(j, "source_id")
            )));
        }
        if id.trim().is_empty()
            || id.contains(['[', ']'])
            || id.starts_with(char::is_whitespace)
            || id.ends_with(char::is_whitespace)
        {
            return Err(invalid(format!(
                "{} is not a valid footnote label: blank, with `[` or `]`, or with leading or \
                 trailing whitespace (invalid_source_id)",
                field(j, "source_id")
            )));
        }
        for (name, value) in [("title", &m.title), ("resource", &m.resource)] {
            let Some(v) = value else {
                continue;
            };
            if v.trim().is_empty() {
                return Err(invalid(format!("{} is blank", field(j, name))));
            }
            if v.chars().any(is_c0_or_del) {
                return Err(invalid(format!(
                    "{} has a control character",
                    field(j, name)
                )));
            }
        }
        if m.title.as_ref().is_some_and(|t| t.contains(['[', ']'])) {
            return Err(invalid(format!(
                "{} cannot be rendered in a footnote definition: it has `[` or `]` \
                 (unsupported_footnote_definition)",
                field(j, "title")
            )));
        }
        if let Some(n) = &m.inline_note {
            if !note_text_ok(n) {
                return Err(invalid(format!(
                    "{} is empty or has `[`, `]` or a control character",
                    field(j, "inline_note")
                )));
            }
        }
    }
    // Cross-entry rules: selectors (rule 3), inline notes (§12.2 rule 2), reuse (rule 9).
    let mut numbers: HashMap<u32, usize> = HashMap::new();
    let mut texts: HashMap<&str, (usize, bool)> = HashMap::new();
    let mut notes: HashMap<&str, usize> = HashMap::new();
    let mut ids: HashMap<&str, (usize, Option<&str>, Option<&str>)> = HashMap::new();
    for (j, m) in item.entries.iter().enumerate() {
        if let Some(n) = m.legacy_number {
            if let Some(k) = numbers.insert(n, j) {
                return Err(invalid(format!(
                    "{} repeats legacy number {n} of entries[{k}] (ambiguous_citation_mapping)",
                    field(j, "legacy_number")
                )));
            }
        }
        if let Some(e) = &m.legacy_entry {
            let entry_only = m.legacy_number.is_none();
            if let Some(&(k, other_only)) = texts.get(e.as_str()) {
                if entry_only || other_only {
                    return Err(invalid(format!(
                        "{} overlaps the selector of entries[{k}] (ambiguous_citation_mapping)",
                        field(j, "legacy_entry")
                    )));
                }
            }
            let slot = texts.entry(e.as_str()).or_insert((j, entry_only));
            slot.1 |= entry_only;
        }
        if let Some(n) = &m.inline_note {
            if let Some(k) = notes.insert(n.as_str(), j) {
                return Err(invalid(format!(
                    "{} repeats the inline_note of entries[{k}] (ambiguous_citation_mapping)",
                    field(j, "inline_note")
                )));
            }
        }
        let (t, r) = (m.title.as_deref(), m.resource.as_deref());
        match ids.get_mut(m.source_id.as_str()) {
            None => {
                ids.insert(&m.source_id, (j, t, r));
            }
            Some((k, pt, pr)) => {
                let clash = |a: Option<&str>, b: Option<&str>| matches!((a, b), (Some(a), Some(b)) if a != b);
                if clash(*pt, t) || clash(*pr, r) {
                    return Err(invalid(format!(
                        "{} reuses source id of entries[{k}] with a different title or resource \
                         (reused_source_metadata_conflict)",
                        field(j, "source_id")
                    )));
                }
                if pt.is_none() {
                    *pt = t;
                }
                if pr.is_none() {
                    *pr = r;
                }
            }
        }
    }
    // Rule 11: recorded, not raised.
    let mut labels: HashMap<String, &str> = HashMap::new();
    let mut collision = false;
    for m in &item.entries {
        let label = markdown::normalise_label(&m.source_id);
        match labels.get(&label) {
            Some(id) if *id != m.source_id => collision = true,
            Some(_) => {}
            None => {
                labels.insert(label, &m.source_id);
            }
        }
    }
    Ok(collision)
}

// ---------------------------------------------------------------------------------------------
// Proposals (§12.4)
// ---------------------------------------------------------------------------------------------

/// The longest proposed slug before the uniqueness suffix (§12.4 rule 2.6).
const SLUG_MAX: usize = 56;
/// The prefix a long slug is cut to before its hash.
const SLUG_CUT: usize = 48;
/// The longest final id (§12.4 rule 2.7).
const ID_MAX: usize = 64;

/// `scheme://…` without whitespace: its host followed by its path (§12.4 rule 2.2).
fn url_host_path(t: &str) -> Option<String> {
    let (scheme, rest) = t.split_once("://")?;
    let mut sc = scheme.chars();
    if !sc.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !sc.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
        || t.chars().any(char::is_whitespace)
    {
        return None;
    }
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let auth = &rest[..auth_end];
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let host = match host.rsplit_once(':') {
        Some((h, port)) if !host.ends_with(']') && port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    };
    let after = &rest[auth_end..];
    let path = &after[..after.find(['?', '#']).unwrap_or(after.len())];
    Some(format!("{host}{path}"))
}

/// `t` without a trailing line range (`:31`, `:31-33`) or fragment (`#L11-L24`, `#anchor`)
/// (§12.4 rule 2.3).
fn drop_location(t: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, tail)) = t.rsplit_once(':') {
        let range = match tail.split_once('-') {
            Some((a, b)) => digits(a) && digits(b),
            None => digits(tail),
        };
        if range && !head.is_empty() {
            return head;
        }
    }
    for (i, _) in t.match_indices('#') {
        let (head, frag) = (&t[..i], &t[i + 1..]);
        if !head.is_empty()
            && !head.ends_with(char::is_whitespace)
            && !frag.is_empty()
            && !frag.contains(char::is_whitespace)
        {
            return head;
        }
    }
    t
}

/// The slug of a text, before uniqueness (§12.4 rule 2, steps 2–6).
fn slug_base(text: &str) -> String {
    let url = url_host_path(text);
    let t = drop_location(url.as_deref().unwrap_or(text));
    let t = t
        .strip_suffix(".md")
        .or_else(|| t.strip_suffix(".html"))
        .unwrap_or(t);
    let lower = t.to_lowercase();
    let mut s = String::with_capacity(lower.len());
    let mut dash = false;
    for c in lower.chars() {
        if c.is_alphanumeric() {
            s.push(c);
            dash = false;
        } else if !dash {
            s.push('-');
            dash = true;
        }
    }
    let s = s.trim_matches('-');
    if s.is_empty() {
        return "source".to_owned();
    }
    if s.len() <= SLUG_MAX {
        return s.to_owned();
    }
    let b = s.as_bytes();
    let cut = (1..=SLUG_CUT)
        .rev()
        .find(|&i| b[i] == b'-')
        .unwrap_or_else(|| floor_boundary(s, SLUG_CUT));
    let hash = digest::hex(&digest::sha256(s.as_bytes()));
    format!("{}-{}", &s[..cut], &hash[..7])
}

/// The largest char boundary of `s` at or below `i`.
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A unique id for `base` (§12.4 rule 2.7): `base`, `base-2`, `base-3`, … whose normalised
/// label is not taken; at most [`ID_MAX`] bytes. Records the label as taken.
fn unique_id(base: &str, taken: &mut HashSet<String>) -> String {
    let mut id = base.to_owned();
    let mut k = 2u64;
    while taken.contains(&markdown::normalise_label(&id)) {
        let suffix = format!("-{k}");
        let keep = floor_boundary(base, ID_MAX.saturating_sub(suffix.len()));
        id = format!("{}{suffix}", &base[..keep]);
        k += 1;
    }
    taken.insert(markdown::normalise_label(&id));
    id
}

fn proposal(path: &str, body: &str, kind: DocKind) -> Option<CitationMapping> {
    if !mentions_citations(body) {
        return None;
    }
    let lines = lines(body);
    let heads = sections(&lines);
    let [head] = heads.as_slice() else {
        return None;
    };
    if head.anchored {
        return None;
    }
    let parsed = parse_section(&lines, head, TrailingContent::Keep);
    if !parsed.blockers.is_empty() || parsed.entries.is_empty() || parsed.trailing_links {
        return None;
    }
    let owned = within(parsed.owned);
    let mut taken: HashSet<String> = definitions(&lines, &owned)
        .into_iter()
        .map(|d| d.label)
        .collect();
    let (markers, notes) = prose(&lines, &owned);
    let mut note_texts: HashSet<String> = notes.iter().map(|n| n.text.to_owned()).collect();
    // A note list `^[a.md, b.md]` (§12.2 rule 2a) counts as an occurrence of each part when
    // every part is the note text an entry would be given, so that the list is rewritten.
    let candidates: HashSet<String> = parsed
        .entries
        .iter()
        .map(|e| {
            let legacy = Legacy::parse(e.raw);
            let lt = legacy.title();
            if lt.is_empty() {
                legacy.resource().to_owned()
            } else {
                lt.to_owned()
            }
        })
        .filter(|n| !n.is_empty())
        .collect();
    for n in &notes {
        let parts: Vec<&str> = n.text.split(", ").collect();
        if parts.len() >= 2 && parts.iter().all(|p| candidates.contains(*p)) {
            note_texts.extend(parts.into_iter().map(str::to_owned));
        }
    }
    let numbers: HashSet<u64> = parsed.entries.iter().filter_map(|e| e.number).collect();
    let stray = markers
        .iter()
        .any(|m| m.number != 0 && !numbers.contains(&m.number));
    let mut raw_count: HashMap<&str, usize> = HashMap::new();
    for e in &parsed.entries {
        *raw_count.entry(e.raw).or_default() += 1;
    }

    let mut entries = Vec::with_capacity(parsed.entries.len());
    let mut notes_given: HashSet<String> = HashSet::new();
    for e in &parsed.entries {
        let legacy = Legacy::parse(e.raw);
        let by_number = e
            .number
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=NUMBER_MAX).contains(n) && legacy.link_title().is_none());
        if by_number.is_none() && raw_count.get(e.raw).copied().unwrap_or(0) > 1 {
            // An entry-only selector would select more than one entry.
            return None;
        }
        let (lt, lr) = (legacy.title(), legacy.resource());
        let resource_less = lr.is_empty() && legacy.links.len() <= 1;
        let text = if !lt.is_empty() {
            lt
        } else if !lr.is_empty() {
            lr
        } else {
            e.raw
        };
        let source_id = unique_id(&slug_base(text), &mut taken);
        let note = if lt.is_empty() { lr } else { lt };
        let inline_note = (!note.is_empty()
            && note.len() <= FIELD_MAX
            && note_text_ok(note)
            && note_texts.contains(note)
            && notes_given.insert(note.to_owned()))
        .then(|| note.to_owned());
        let (mut title, mut resource) = (None, None);
        if kind == DocKind::Reserved && by_number.is_some() {
            title = (!lt.is_empty()).then(|| lt.to_owned());
            resource = Some(if lr.is_empty() { e.raw } else { lr }.to_owned());
        } else if resource_less {
            resource = Some(e.raw.to_owned());
        }
        let needs_review = !resource_like(resource.as_deref().unwrap_or(lr));
        entries.push(MappingEntry {
            legacy_number: by_number,
            legacy_entry: by_number.is_none().then(|| e.raw.to_owned()),
            source_id,
            title,
            resource,
            inline_note,
            needs_review,
        });
    }
    let item = CitationMapping {
        path: path.to_owned(),
        entries,
        claim_markers: if stray {
            ClaimMarkers::Ignore
        } else {
            ClaimMarkers::Rewrite
        },
        trailing_content: if parsed.kept {
            TrailingContent::Keep
        } else {
            TrailingContent::Block
        },
    };
    // A proposal must pass the static validation it will meet when passed back.
    let mut sorted = item.clone();
    sort_entries(&mut sorted.entries);
    match validate(&sorted, 0) {
        Ok(false) => Some(item),
        _ => None,
    }
}

/// Whether a projected resource looks like one (§12.7 rule 8): `scheme://…`, or no whitespace,
/// none of `<>[]()` and a `.` in its last `/`-separated segment. Anything else (e.g.
/// `**Continuous mode**: Runs the pipeline continuously`) came from prose: the proposed entry
/// gets `needs_review: true`.
fn resource_like(r: &str) -> bool {
    let scheme = r.split_once("://").is_some_and(|(s, rest)| {
        !rest.is_empty()
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    scheme
        || (!r.chars().any(|c| c.is_whitespace() || "<>[]()".contains(c))
            && r.rsplit('/').next().is_some_and(|seg| seg.contains('.')))
}

/// Sorts entries canonically (§3.5 step 5): by `(legacy_number, legacy_entry, source_id,
/// inline_note)`, absent number as 0, absent strings as `""`.
fn sort_entries(entries: &mut [MappingEntry]) {
    fn key(m: &MappingEntry) -> (u32, &str, &str, &str) {
        (
            m.legacy_number.unwrap_or(0),
            m.legacy_entry.as_deref().unwrap_or(""),
            &m.source_id,
            m.inline_note.as_deref().unwrap_or(""),
        )
    }
    entries.sort_by(|a, b| key(a).cmp(&key(b)));
}

#[cfg(test)]
#[path = "citations_tests.rs"]
mod tests;
