//! The data of the citations rewrite (spec/migration.md §3.3, §6.2–§6.4, §12): the caller's
//! mapping items, the document kind, blockers, notices, projected sources and the outcomes of
//! the probe, the transition and the static validation. Every file of the folder uses them.

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

/// A failure of the static validation of one mapping item (§3.3 rules 3–10, §12.2 rule 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticError {
    /// `invalid_request` or `resource_limit`.
    pub code: &'static str,
    /// Names the field at fault (e.g. `citation_mappings[2].entries[0].source_id`), and the
    /// §3.3 code in words where the spec names one (e.g. `ambiguous_citation_mapping`).
    pub message: String,
}
