//! The migration request: decoding and the canonical input of spec/migration.md §3.5, and
//! the apply-only authorisation fields of §3.2 with their zero-I/O checks (§9 A steps 2–4).
//! Pure.

use super::citations::{self, CitationMapping, ClaimMarkers, MappingEntry, TrailingContent};
use super::source::{Selector, SourceResolution};
use crate::digest::is_canonical_digest;
use crate::envelope::{codes, Diagnostic, ToolError};
use crate::okf::actor;
use crate::okf::computation::{AttestedComputation, ComputationBody, Executor, Parameter};
use crate::okf::grammar::{check_concept_id, ConceptIdError};
use crate::okf::temporal::parse_offset_datetime;
use crate::plan::args::{serialised_len, MAX_SERIALISED_ARGS};
use crate::plan::identity::Authorisation;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// `timestamp_policy` (§3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampPolicy {
    Preserve,
    RemoveAfterCopy,
}

impl TimestampPolicy {
    /// Wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TimestampPolicy::Preserve => "preserve",
            TimestampPolicy::RemoveAfterCopy => "remove_after_copy",
        }
    }
}

/// `timestamp_conflict_policy` (§3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConflictPolicy {
    #[default]
    Reject,
    UseGenerated,
    UseTimestamp,
}

impl ConflictPolicy {
    /// Wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictPolicy::Reject => "reject",
            ConflictPolicy::UseGenerated => "use_generated",
            ConflictPolicy::UseTimestamp => "use_timestamp",
        }
    }
}

/// One `generated_at` item: the concept's path (`<concept_id>.md`) and the instant text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedAt {
    pub path: String,
    pub at: String,
}

/// The file of a file-mode computation (§3.4): a writable non-`.md` revision path and the
/// UTF-8 bytes of the `content` string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asset {
    pub path: String,
    pub content: String,
}

/// One `computations` item (§3.4): the concept's path (`<concept_id>.md`), its contract and,
/// in file mode, its asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computation {
    pub path: String,
    pub contract: AttestedComputation,
    pub asset: Option<Asset>,
    /// `computation_path` does not resolve to `asset.path` (§3.4 last rule): recorded, a
    /// preview blocker (`migration_computation_asset_path_mismatch`), `plan_mismatch` for a
    /// transition apply.
    pub path_mismatch: bool,
}

/// The proof of §7.2 (format version 2, content-free).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Proof {
    pub format_version: u64,
    pub request_digest: String,
    pub resolution_digest: String,
    pub base_revision: String,
    pub result_revision: String,
    pub reads: Vec<String>,
    /// `(path, digest hex)`.
    pub writes: Vec<(String, String)>,
    pub deletes: Vec<String>,
    pub renames: Vec<(String, String)>,
    pub affected_refs: Vec<String>,
    pub reverse_impact: Vec<String>,
    /// `(kind, path, from)`.
    pub changed_files: Vec<(String, String, String)>,
    pub changed_refs: Vec<String>,
}

/// The apply-only fields (§3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyFields {
    pub expected_source: SourceResolution,
    /// Present iff the expected source is the transition.
    pub proof: Option<Proof>,
    pub expected_plan_digest: Option<String>,
    /// `{proof.base_revision or base_revision, expected_plan_digest}` of a transition apply
    /// (the spine's authorisation, `crate::tools::spine`).
    pub auth: Option<Authorisation>,
    /// The receipt is bound to the caller's explicit arguments, not to the request digest
    /// (§12.7 rule 4a): with `accept_proposals`, or without `proof`.
    pub caller_bound: bool,
}

/// A decoded, canonical migration request (§3.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationRequest {
    pub bundle_path: String,
    pub from: Selector,
    pub generated_by: String,
    /// Sorted by path, unique.
    pub generated_at: Vec<GeneratedAt>,
    pub conflict_policy: ConflictPolicy,
    pub timestamp_policy: TimestampPolicy,
    /// Sorted by path; entries sorted (§3.5 step 5).
    pub citation_mappings: Vec<CitationMapping>,
    /// A normalised-label collision was found (§3.3 rule 11): recorded, answered after the
    /// capture (preview `blocked`, apply error).
    pub label_collision: bool,
    /// Sorted by path, unique (§3.5 step 5).
    pub computations: Vec<Computation>,
    /// The apply's fields; `None` for a preview.
    pub apply: Option<ApplyFields>,
    /// How much of each answer list is shown (§12.7 rule 1); not encoded.
    pub view: AnswerView,
    /// `accept_proposals` (§12.7 rule 3): the `proposals_digest` of the proposal set the caller
    /// accepts exactly; not encoded (the accepted items are, once added).
    pub accept_proposals: Option<String>,
    /// `accept_needs_review` (§12.7 rule 8); not encoded.
    pub accept_needs_review: bool,
    /// The paths of the accepted proposals that need review (§12.7 rule 8), recorded when
    /// the proposals are accepted; empty otherwise. Not encoded; the plan reports them.
    pub accepted_needing_review: Vec<String>,
}

/// `include_proof` of the preview (§12.7 rule 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeProof {
    /// Always include the proof.
    Always,
    /// Never include it (`proof_omitted: true`).
    Never,
    /// Include it when it serialises to at most [`AUTO_PROOF_BYTES`] (the default).
    #[default]
    Auto,
}

/// The largest proof `include_proof: "auto"` includes: 64 KiB of compact JSON (§12.7 rule 5).
pub const AUTO_PROOF_BYTES: usize = 65_536;

/// The members that shape an answer without changing any status, proof, digest, blocker or
/// proposal (§12.7 rules 1 and 5): none of them is part of the canonical input (§3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerView {
    /// `limit`: at most this many items in each list member (1..=10,000, default 200).
    pub limit: usize,
    /// `diff_bytes`: the diff is cut by whole file sections at this many bytes
    /// (1..=1,048,576, default 65,536).
    pub diff_bytes: usize,
    /// `include_proof` (preview only).
    pub include_proof: IncludeProof,
}

/// Default `limit` (§12.7 rule 1).
pub const DEFAULT_LIMIT: usize = 200;
/// Largest `limit` (§12.7 rule 1, surface.md §11).
pub const MAX_LIMIT: usize = 10_000;
/// Default `diff_bytes` (§12.7 rule 1).
pub const DEFAULT_DIFF_BYTES: usize = 65_536;

impl Default for AnswerView {
    fn default() -> Self {
        AnswerView {
            limit: DEFAULT_LIMIT,
            diff_bytes: DEFAULT_DIFF_BYTES,
            include_proof: IncludeProof::Auto,
        }
    }
}

/// Maximum `generated_at` items and `citation_mappings` items (§3.1).
pub const MAX_ITEMS: usize = 10_000;
/// Maximum entries of one mapping item (§3.3).
pub const MAX_ENTRIES_PER_ITEM: usize = 10_000;
/// Maximum entries over all mapping items (§3.1, beyond reference).
pub const MAX_TOTAL_ENTRIES: usize = 100_000;
/// Maximum bytes of `generated_by` (§3.1).
pub const MAX_GENERATED_BY: usize = 256;

fn shape(field: &str) -> ToolError {
    ToolError::invalid_request(format!("{field} does not match its schema"))
}

fn get_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ToolError> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(shape(key)),
    }
}

fn get_array<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], ToolError> {
    match obj.get(key) {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(shape(key)),
    }
}

/// Decodes the schema-valid arguments of `preview_v02_migration` (`apply == false`) or
/// `apply_v02_migration` into the canonical request (§3.5), then, for the apply, runs the
/// zero-I/O checks of §9 A steps 2–4.
///
/// # Errors
/// `resource_limit` (argument size, caps, text fields over 4096 bytes), `invalid_request`
/// (actor, concept ids, datetimes, mapping rules), `plan_mismatch` / `invalid_revision` /
/// `unsupported_migration_source` for the apply fields.
pub fn parse_request(args: &Value, apply: bool) -> Result<MigrationRequest, ToolError> {
    if serialised_len(args) > MAX_SERIALISED_ARGS {
        return Err(ToolError::resource_limit(
            "migration input exceeds the MCP limit",
        ));
    }
    let obj = args
        .as_object()
        .ok_or_else(|| ToolError::invalid_request("MCP arguments must be a JSON object"))?;
    let bundle_path = get_str(obj, "bundle_path")?
        .ok_or_else(|| shape("bundle_path"))?
        .to_owned();
    let from = match get_str(obj, "from")? {
        None => Selector::Auto,
        Some(s) => Selector::parse(s).ok_or_else(|| shape("from"))?,
    };
    let generated_by = get_str(obj, "generated_by")?.unwrap_or("").to_owned();
    if generated_by.len() > MAX_GENERATED_BY {
        return Err(ToolError::resource_limit("generated_by exceeds 256 bytes"));
    }
    if !generated_by.is_empty() && !actor::is_document_actor(&generated_by) {
        return Err(ToolError::invalid_request(
            "generated_by is not a valid document actor (e.g. agent/1.0, human:alice, process:etl)",
        ));
    }
    let conflict_policy = match get_str(obj, "timestamp_conflict_policy")? {
        None | Some("reject") => ConflictPolicy::Reject,
        Some("use_generated") => ConflictPolicy::UseGenerated,
        Some("use_timestamp") => ConflictPolicy::UseTimestamp,
        Some(_) => return Err(shape("timestamp_conflict_policy")),
    };
    let timestamp_policy = match get_str(obj, "timestamp_policy")? {
        Some("preserve") => TimestampPolicy::Preserve,
        Some("remove_after_copy") => TimestampPolicy::RemoveAfterCopy,
        _ => return Err(shape("timestamp_policy")),
    };
    let generated_at = parse_generated_at(get_array(obj, "generated_at")?)?;
    let (citation_mappings, label_collision) =
        parse_mappings(get_array(obj, "citation_mappings")?)?;
    let computations = parse_computations(get_array(obj, "computations")?)?;
    let view = parse_view(obj)?;
    let accept_proposals = match obj.get("accept_proposals") {
        None => None,
        Some(Value::String(d)) if is_canonical_digest(d) => Some(d.clone()),
        Some(_) => return Err(ToolError::invalid_request(
            "accept_proposals is not a digest: pass the proposals_digest of the preview, unchanged",
        )),
    };
    let accept_needs_review = match obj.get("accept_needs_review") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(shape("accept_needs_review")),
    };
    let apply = if apply {
        Some(parse_apply_fields(
            obj,
            from,
            label_collision,
            accept_proposals.is_some(),
        )?)
    } else {
        None
    };
    Ok(MigrationRequest {
        bundle_path,
        from,
        generated_by,
        generated_at,
        conflict_policy,
        timestamp_policy,
        citation_mappings,
        label_collision,
        computations,
        apply,
        view,
        accept_proposals,
        accept_needs_review,
        accepted_needing_review: Vec::new(),
    })
}

/// An optional integer member within `1..=max`.
fn get_bounded(
    obj: &Map<String, Value>,
    key: &str,
    max: usize,
    default: usize,
) -> Result<usize, ToolError> {
    match obj.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| {
                ToolError::invalid_request(format!("{key} must be an integer from 1 to {max}"))
            }),
    }
}

/// `limit`, `diff_bytes` and `include_proof` (§12.7 rules 1 and 5).
fn parse_view(obj: &Map<String, Value>) -> Result<AnswerView, ToolError> {
    let include_proof = match obj.get("include_proof") {
        None => IncludeProof::Auto,
        Some(Value::Bool(true)) => IncludeProof::Always,
        Some(Value::Bool(false)) => IncludeProof::Never,
        Some(Value::String(s)) if s == "auto" => IncludeProof::Auto,
        Some(_) => return Err(shape("include_proof")),
    };
    Ok(AnswerView {
        limit: get_bounded(obj, "limit", MAX_LIMIT, DEFAULT_LIMIT)?,
        diff_bytes: get_bounded(
            obj,
            "diff_bytes",
            crate::plan::diff::DIFF_CAP,
            DEFAULT_DIFF_BYTES,
        )?,
        include_proof,
    })
}

/// The request with the accepted `proposals` added to its `citation_mappings`, exactly as if
/// the caller had passed them (spec/migration.md §12.7 rule 3): each proposal goes through
/// its wire form ([`mapping_json`]) and the same decoding and canonical ordering as an
/// explicit item, so the canonical input, the request digest, the proof and the plan digest
/// are those of the explicit request. An explicit item for a document wins over its
/// proposal. `accept_proposals` stays on the request (it is not encoded) for the receipt's
/// caller binding (§12.7 rule 4a).
///
/// # Errors
/// The decoding errors of `citation_mappings` (`resource_limit` past 10,000 items or 100,000
/// entries).
pub fn with_accepted(
    req: &MigrationRequest,
    proposals: &[CitationMapping],
) -> Result<MigrationRequest, ToolError> {
    let explicit: BTreeSet<&str> = req
        .citation_mappings
        .iter()
        .map(|m| m.path.as_str())
        .collect();
    let items: Vec<Value> = req
        .citation_mappings
        .iter()
        .chain(
            proposals
                .iter()
                .filter(|p| !explicit.contains(p.path.as_str())),
        )
        .map(mapping_json)
        .collect();
    let (citation_mappings, label_collision) = parse_mappings(&items)?;
    let mut out = req.clone();
    out.citation_mappings = citation_mappings;
    out.label_collision |= label_collision;
    Ok(out)
}

/// The wire form of a mapping item (§3.3; the proposals of §12.4). `needs_review` is written
/// only when `true` (§12.7 rule 8).
#[must_use]
pub fn mapping_json(m: &CitationMapping) -> Value {
    let mut o = Map::new();
    o.insert("path".into(), Value::from(m.path.as_str()));
    let entries: Vec<Value> = m
        .entries
        .iter()
        .map(|e| {
            let mut x = Map::new();
            if let Some(n) = e.legacy_number {
                x.insert("legacy_number".into(), Value::from(n));
            }
            if let Some(t) = &e.legacy_entry {
                x.insert("legacy_entry".into(), Value::from(t.as_str()));
            }
            x.insert("source_id".into(), Value::from(e.source_id.as_str()));
            if let Some(t) = &e.title {
                x.insert("title".into(), Value::from(t.as_str()));
            }
            if let Some(t) = &e.resource {
                x.insert("resource".into(), Value::from(t.as_str()));
            }
            if let Some(t) = &e.inline_note {
                x.insert("inline_note".into(), Value::from(t.as_str()));
            }
            if e.needs_review {
                x.insert("needs_review".into(), Value::Bool(true));
            }
            Value::Object(x)
        })
        .collect();
    o.insert("entries".into(), Value::Array(entries));
    if m.claim_markers != ClaimMarkers::default() {
        o.insert(
            "claim_markers".into(),
            Value::from(m.claim_markers.as_str()),
        );
    }
    if m.trailing_content != TrailingContent::default() {
        o.insert(
            "trailing_content".into(),
            Value::from(m.trailing_content.as_str()),
        );
    }
    Value::Object(o)
}

/// A concept id → its path `<id>.md` (§3.5 step 4).
fn concept_path(id: &str, field: &str) -> Result<String, ToolError> {
    match check_concept_id(id) {
        Ok(()) => Ok(format!("{id}.md")),
        Err(ConceptIdError::TooLong) => Err(ToolError::resource_limit(format!(
            "{field} exceeds 4096 bytes"
        ))),
        Err(ConceptIdError::Reserved) => Err(ToolError::invalid_request(format!(
            "{field}: reserved migration document cannot own generated or computation metadata"
        ))),
        Err(ConceptIdError::NotCanonical) => Err(ToolError::invalid_request(format!(
            "{field} is not a canonical concept_id"
        ))),
    }
}

fn parse_generated_at(items: &[Value]) -> Result<Vec<GeneratedAt>, ToolError> {
    if items.len() > MAX_ITEMS {
        return Err(ToolError::resource_limit(
            "generated_at has more than 10,000 items",
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("generated_at[{i}]");
        let o = item.as_object().ok_or_else(|| shape(&field))?;
        let id = get_str(o, "concept_id")?.ok_or_else(|| shape(&field))?;
        let at = get_str(o, "at")?.ok_or_else(|| shape(&field))?;
        let path = concept_path(id, &format!("{field}.concept_id"))?;
        if parse_offset_datetime(at).is_none() {
            return Err(ToolError::invalid_request(format!(
                "{field}.at is not a datetime with an explicit offset"
            )));
        }
        out.push(GeneratedAt {
            path,
            at: at.to_owned(),
        });
    }
    out.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    if out.windows(2).any(|w| w[0].path == w[1].path) {
        return Err(ToolError::invalid_request(
            "generated_at names one concept twice",
        ));
    }
    Ok(out)
}

/// Whether `p` is a revision path of a document (spec/store.md §3.2, §3.3 rule 1).
fn is_document_path(p: &str) -> bool {
    let first = p.split('/').next().unwrap_or_default().to_ascii_lowercase();
    crate::envelope::is_bundle_relative_path(p)
        && p.ends_with(".md")
        && first != ".okf"
        && first != ".git"
}

fn parse_mappings(items: &[Value]) -> Result<(Vec<CitationMapping>, bool), ToolError> {
    if items.len() > MAX_ITEMS {
        return Err(ToolError::resource_limit(
            "citation_mappings has more than 10,000 items",
        ));
    }
    let mut total = 0usize;
    let mut out: Vec<(usize, CitationMapping)> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("citation_mappings[{i}]");
        let o = item.as_object().ok_or_else(|| shape(&field))?;
        let path = get_str(o, "path")?.ok_or_else(|| shape(&field))?;
        if path.len() > 4096 {
            return Err(ToolError::resource_limit(format!(
                "{field}.path exceeds 4096 bytes"
            )));
        }
        if !is_document_path(path) {
            return Err(ToolError::invalid_request(format!(
                "{field}.path is not a bundle-relative .md path"
            )));
        }
        let claim_markers = match get_str(o, "claim_markers")? {
            None | Some("rewrite") => ClaimMarkers::Rewrite,
            Some("ignore") => ClaimMarkers::Ignore,
            Some(_) => return Err(shape(&format!("{field}.claim_markers"))),
        };
        let trailing_content = match get_str(o, "trailing_content")? {
            None | Some("block") => TrailingContent::Block,
            Some("keep") => TrailingContent::Keep,
            Some(_) => return Err(shape(&format!("{field}.trailing_content"))),
        };
        let raw_entries = get_array(o, "entries")?;
        if raw_entries.is_empty() {
            return Err(ToolError::invalid_request(format!(
                "{field}.entries must not be empty"
            )));
        }
        if raw_entries.len() > MAX_ENTRIES_PER_ITEM {
            return Err(ToolError::resource_limit(format!(
                "{field}.entries has more than 10,000 entries"
            )));
        }
        total += raw_entries.len();
        if total > MAX_TOTAL_ENTRIES {
            return Err(ToolError::resource_limit(
                "citation_mappings hold more than 100,000 entries",
            ));
        }
        let mut entries = Vec::with_capacity(raw_entries.len());
        for (j, e) in raw_entries.iter().enumerate() {
            let ef = format!("{field}.entries[{j}]");
            let eo = e.as_object().ok_or_else(|| shape(&ef))?;
            let opt = |k: &str| -> Result<Option<String>, ToolError> {
                Ok(get_str(eo, k)?.map(str::to_owned))
            };
            let legacy_number = match eo.get("legacy_number") {
                None => None,
                Some(v) => match v.as_u64() {
                    Some(n @ 1..=1_000_000) => Some(n as u32),
                    _ => return Err(shape(&format!("{ef}.legacy_number"))),
                },
            };
            let legacy_entry = opt("legacy_entry")?;
            if legacy_number.is_none() && legacy_entry.is_none() {
                return Err(ToolError::invalid_request(format!(
                    "{ef} needs legacy_number or legacy_entry"
                )));
            }
            entries.push(MappingEntry {
                legacy_number,
                legacy_entry,
                source_id: opt("source_id")?.ok_or_else(|| shape(&format!("{ef}.source_id")))?,
                title: opt("title")?,
                resource: opt("resource")?,
                inline_note: opt("inline_note")?,
                // Output only (§12.7 rule 8): accepted and ignored.
                needs_review: false,
            });
        }
        entries.sort_by(|a, b| {
            (
                a.legacy_number.unwrap_or(0),
                a.legacy_entry.as_deref().unwrap_or("").as_bytes(),
                a.source_id.as_bytes(),
                a.inline_note.as_deref().unwrap_or("").as_bytes(),
            )
                .cmp(&(
                    b.legacy_number.unwrap_or(0),
                    b.legacy_entry.as_deref().unwrap_or("").as_bytes(),
                    b.source_id.as_bytes(),
                    b.inline_note.as_deref().unwrap_or("").as_bytes(),
                ))
        });
        out.push((
            i,
            CitationMapping {
                path: path.to_owned(),
                entries,
                claim_markers,
                trailing_content,
            },
        ));
    }
    out.sort_by(|a, b| a.1.path.as_bytes().cmp(b.1.path.as_bytes()));
    if out.windows(2).any(|w| w[0].1.path == w[1].1.path) {
        return Err(ToolError::invalid_request(
            "citation_mappings name one document twice",
        ));
    }
    let mut collision = false;
    for (i, m) in &out {
        collision |=
            citations::validate_mapping(m, *i).map_err(|e| ToolError::new(e.code, e.message))?;
    }
    Ok((out.into_iter().map(|(_, m)| m).collect(), collision))
}

/// Maximum `computations` items (§3.1).
pub const MAX_COMPUTATIONS: usize = 256;
/// Maximum bytes of an asset's content (§3.4).
pub const MAX_ASSET_BYTES: usize = 8 * 1024 * 1024;

fn has_control(s: &str) -> bool {
    s.chars().any(|c| c < '\u{20}' || c == '\u{7f}')
}

/// Whether `p` is a valid `asset.path` (§3.4): a writable revision path (spec/store.md §3.2;
/// not under `.okf` or `.git`, case-insensitively), not ending in `.md`, without `?` or `#`.
#[must_use]
pub fn is_asset_path(p: &str) -> bool {
    let first = p.split('/').next().unwrap_or_default().to_ascii_lowercase();
    crate::envelope::is_bundle_relative_path(p)
        && first != ".okf"
        && first != ".git"
        && !p.to_ascii_lowercase().ends_with(".md")
        && !p.contains(['?', '#'])
}

/// The local bundle path `computation_path` names from the concept at `doc_path` (§3.4):
/// relative to the concept's directory or `/`-rooted bundle-relative; query and fragment
/// stripped; `.` and `..` normalised. `None` for an external URL, a Windows path, an escape
/// from the bundle, an empty or fragment-only value.
#[must_use]
pub fn resolve_computation_path(doc_path: &str, computation_path: &str) -> Option<String> {
    let end = computation_path
        .find(['?', '#'])
        .unwrap_or(computation_path.len());
    let p = &computation_path[..end];
    if p.is_empty() || p.contains('\\') || has_control(p) {
        return None;
    }
    // A scheme (`https:`, `file:`, `C:`) before the first `/`: an URL or a Windows path.
    let first = p.split('/').next().unwrap_or_default();
    if first.contains(':') {
        return None;
    }
    let (mut stack, rest): (Vec<&str>, &str) = match p.strip_prefix('/') {
        Some(r) => (Vec::new(), r),
        None => {
            let mut dir: Vec<&str> = doc_path.split('/').collect();
            dir.pop();
            (dir, p)
        }
    };
    for c in rest.split('/') {
        match c {
            "" => return None,
            "." => {}
            ".." => {
                stack.pop()?;
            }
            c => stack.push(c),
        }
    }
    let out = stack.join("/");
    crate::envelope::is_bundle_relative_path(&out).then_some(out)
}

fn parse_computations(items: &[Value]) -> Result<Vec<Computation>, ToolError> {
    if items.len() > MAX_COMPUTATIONS {
        return Err(ToolError::resource_limit(
            "computations has more than 256 items",
        ));
    }
    let mut out: Vec<Computation> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("computations[{i}]");
        let o = item.as_object().ok_or_else(|| shape(&field))?;
        let id = get_str(o, "concept_id")?.ok_or_else(|| shape(&field))?;
        let path = concept_path(id, &format!("{field}.concept_id"))?;
        let c = o
            .get("contract")
            .and_then(Value::as_object)
            .ok_or_else(|| shape(&format!("{field}.contract")))?;
        let text = |obj: &Map<String, Value>, k: &str, name: &str| -> Result<String, ToolError> {
            let s = get_str(obj, k)?.ok_or_else(|| shape(&format!("{field}.{name}")))?;
            check_text(s, &format!("{field}.{name}"))?;
            Ok(s.to_owned())
        };
        let runtime = text(c, "runtime", "contract.runtime")?;
        let mut parameters = Vec::new();
        for (j, p) in get_array(c, "parameters")?.iter().enumerate() {
            let pf = format!("contract.parameters[{j}]");
            let po = p
                .as_object()
                .ok_or_else(|| shape(&format!("{field}.{pf}")))?;
            let required = po
                .get("required")
                .and_then(Value::as_bool)
                .ok_or_else(|| shape(&format!("{field}.{pf}.required")))?;
            parameters.push(Parameter {
                name: text(po, "name", &format!("{pf}.name"))?,
                type_: text(po, "type", &format!("{pf}.type"))?,
                required,
            });
        }
        if parameters.len() > 256 {
            return Err(ToolError::resource_limit(format!(
                "{field}.contract has more than 256 parameters"
            )));
        }
        let mut names = BTreeSet::new();
        if !parameters.iter().all(|p| names.insert(p.name.as_str())) {
            return Err(ToolError::invalid_request(format!(
                "{field}.contract.parameters names are not unique"
            )));
        }
        let eo = c
            .get("executor")
            .and_then(Value::as_object)
            .ok_or_else(|| shape(&format!("{field}.contract.executor")))?;
        let resource = text(eo, "resource", "contract.executor.resource")?;
        let mut receipt = Vec::new();
        for (j, r) in get_array(eo, "receipt")?.iter().enumerate() {
            let rf = format!("{field}.contract.executor.receipt[{j}]");
            let r = r.as_str().ok_or_else(|| shape(&rf))?;
            check_text(r, &rf)?;
            receipt.push(r.to_owned());
        }
        if receipt.is_empty() || receipt.len() > 256 {
            return Err(shape(&format!("{field}.contract.executor.receipt")));
        }
        let mut seen = BTreeSet::new();
        if !receipt.iter().all(|r| seen.insert(r.as_str())) {
            return Err(ToolError::invalid_request(format!(
                "{field}.contract.executor.receipt fields are not unique"
            )));
        }
        let ao = c
            .get("attester")
            .and_then(Value::as_object)
            .ok_or_else(|| shape(&format!("{field}.contract.attester")))?;
        let attester_resource = text(ao, "resource", "contract.attester.resource")?;
        let asset = match o.get("asset") {
            None => None,
            Some(a) => {
                let ao = a
                    .as_object()
                    .ok_or_else(|| shape(&format!("{field}.asset")))?;
                let p = get_str(ao, "path")?.ok_or_else(|| shape(&format!("{field}.asset")))?;
                let content =
                    get_str(ao, "content")?.ok_or_else(|| shape(&format!("{field}.asset")))?;
                if p.len() > 4096 {
                    return Err(ToolError::resource_limit(format!(
                        "{field}.asset.path exceeds 4096 bytes"
                    )));
                }
                if content.len() > MAX_ASSET_BYTES {
                    return Err(ToolError::resource_limit(format!(
                        "{field}.asset.content exceeds 8 MiB"
                    )));
                }
                if !is_asset_path(p) {
                    return Err(ToolError::invalid_request(format!(
                        "{field}.asset.path is not a writable bundle-relative path outside .okf and .git, not ending in .md, without ? or #"
                    )));
                }
                Some(Asset {
                    path: p.to_owned(),
                    content: content.to_owned(),
                })
            }
        };
        let mode = get_str(c, "mode")?;
        let body = match (mode, &asset) {
            (Some("inline"), None) if !c.contains_key("computation_path") => {
                let code = get_str(c, "inline_computation")?
                    .ok_or_else(|| shape(&format!("{field}.contract.inline_computation")))?;
                if code.len() > crate::okf::computation::MAX_INLINE_COMPUTATION {
                    return Err(ToolError::resource_limit(format!(
                        "{field}.contract.inline_computation exceeds 1 MiB"
                    )));
                }
                if code.contains('\0') {
                    return Err(ToolError::invalid_request(format!(
                        "{field}.contract.inline_computation contains a NUL character"
                    )));
                }
                let language = match get_str(c, "inline_language")? {
                    None => None,
                    Some(l) => {
                        check_text(l, &format!("{field}.contract.inline_language"))?;
                        Some(l.to_owned())
                    }
                };
                ComputationBody::Inline {
                    code: code.to_owned(),
                    language,
                }
            }
            (Some("file"), Some(_))
                if !c.contains_key("inline_computation") && !c.contains_key("inline_language") =>
            {
                ComputationBody::File {
                    path: text(c, "computation_path", "contract.computation_path")?,
                }
            }
            _ => return Err(shape(&format!("{field}.contract.mode"))),
        };
        let path_mismatch = match (&body, &asset) {
            (ComputationBody::File { path: cp }, Some(a)) => {
                resolve_computation_path(&path, cp).as_deref() != Some(a.path.as_str())
            }
            _ => false,
        };
        out.push(Computation {
            path,
            contract: AttestedComputation {
                runtime,
                parameters,
                executor: Executor { resource, receipt },
                attester_resource,
                body,
            },
            asset,
            path_mismatch,
        });
    }
    out.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    if out.windows(2).any(|w| w[0].path == w[1].path) {
        return Err(ToolError::invalid_request(
            "computations name one concept twice",
        ));
    }
    let mut assets: BTreeMap<&str, &str> = BTreeMap::new();
    for a in out.iter().filter_map(|c| c.asset.as_ref()) {
        if assets
            .insert(&a.path, &a.content)
            .is_some_and(|prev| prev != a.content)
        {
            return Err(ToolError::invalid_request(
                "two computations name one asset path with different contents",
            ));
        }
    }
    Ok(out)
}

/// A contract text field (§3.4): ≤ 4096 bytes (`resource_limit`), non-blank and free of
/// control characters (`invalid_request`).
fn check_text(s: &str, field: &str) -> Result<(), ToolError> {
    if s.len() > 4096 {
        return Err(ToolError::resource_limit(format!(
            "{field} exceeds 4096 bytes"
        )));
    }
    if s.trim().is_empty() {
        return Err(ToolError::invalid_request(format!("{field} is blank")));
    }
    if has_control(s) {
        return Err(ToolError::invalid_request(format!(
            "{field} contains a control character"
        )));
    }
    Ok(())
}

fn mismatch(message: &str) -> ToolError {
    ToolError::new(codes::PLAN_MISMATCH, message).with_diagnostic(Diagnostic::recovery(
        "expected_plan_digest",
        "Run preview_v02_migration again with the same arguments and pass its source, proof and plan_digest unchanged.",
    ))
}

/// The authorisation-mismatch error of the migration apply (`plan_mismatch`).
#[must_use]
pub fn authorisation_mismatch(message: &str) -> ToolError {
    mismatch(message)
}

fn parse_apply_fields(
    obj: &Map<String, Value>,
    from: Selector,
    label_collision: bool,
    accepting: bool,
) -> Result<ApplyFields, ToolError> {
    let src = obj
        .get("expected_source")
        .ok_or_else(|| shape("expected_source"))?;
    let expected_source =
        SourceResolution::from_json(src).ok_or_else(|| shape("expected_source"))?;
    if expected_source.requested_selector != from {
        return Err(mismatch(
            "expected_source.requested_selector differs from from",
        ));
    }
    if expected_source.transition == super::source::BLOCKED {
        return Err(ToolError::new(
            "unsupported_migration_source",
            "expected_source is a blocked resolution: nothing can be applied",
        ));
    }
    if !expected_source.is_applicable_tuple() {
        return Err(ToolError::invalid_request(
            "expected_source is not a canonical applicable source resolution",
        ));
    }
    let has_proof = obj.contains_key("proof");
    let has_digest = obj.contains_key("expected_plan_digest");
    if expected_source.is_target_noop() {
        if has_proof || has_digest {
            return Err(mismatch(
                "a target-noop apply takes neither proof nor expected_plan_digest",
            ));
        }
        return Ok(ApplyFields {
            expected_source,
            proof: None,
            expected_plan_digest: None,
            auth: None,
            caller_bound: false,
        });
    }
    // §12.7 rule 4: `base_revision` (the preview's, unchanged) stands for
    // `proof.base_revision` when no proof is passed.
    let base_revision =
        match obj.get("base_revision") {
            None => None,
            Some(Value::String(r)) if is_canonical_digest(r) => Some(r.clone()),
            Some(_) => return Err(ToolError::new(
                codes::INVALID_REVISION,
                "base_revision is not canonical: pass the base_revision of the preview, unchanged",
            )),
        };
    let proof = match obj.get("proof") {
        Some(v) => Some(parse_proof(v)?),
        None if base_revision.is_some() => None,
        None => {
            return Err(ToolError::invalid_request(
                "a v0.1-to-v0.2 apply needs base_revision (or proof) and expected_plan_digest from the preview",
            ))
        }
    };
    if let Some(proof) = &proof {
        if proof.format_version != 2 {
            return Err(mismatch("unsupported proof format_version"));
        }
        if !is_canonical_digest(&proof.resolution_digest) {
            return Err(mismatch("proof.resolution_digest is not canonical"));
        }
        if !is_canonical_digest(&proof.base_revision)
            || !is_canonical_digest(&proof.result_revision)
        {
            return Err(ToolError::new(
                codes::INVALID_REVISION,
                "proof revision is not canonical",
            ));
        }
        for r in proof.affected_refs.iter().chain(&proof.changed_refs) {
            if !is_ref(r) {
                return Err(ToolError::invalid_request(
                    "proof holds a ref that does not parse",
                ));
            }
        }
        if base_revision
            .as_ref()
            .is_some_and(|b| *b != proof.base_revision)
        {
            return Err(mismatch("base_revision differs from proof.base_revision"));
        }
    }
    let digest = match obj.get("expected_plan_digest") {
        Some(Value::String(d)) if is_canonical_digest(d) => d.clone(),
        _ => return Err(mismatch("expected_plan_digest is not canonical")),
    };
    if label_collision {
        return Err(ToolError::new(
            "normalized_footnote_label_collision",
            "two source ids of one document have the same normalised footnote label",
        ));
    }
    let revision = match (&proof, base_revision) {
        (Some(p), _) => p.base_revision.clone(),
        (None, Some(b)) => b,
        (None, None) => return Err(mismatch("base_revision is required")),
    };
    let caller_bound = accepting || proof.is_none();
    Ok(ApplyFields {
        expected_source,
        proof,
        expected_plan_digest: Some(digest.clone()),
        auth: Some(Authorisation {
            revision,
            plan_digest: digest,
        }),
        caller_bound,
    })
}

/// A ref of spec/store.md §5 rule 4: a canonical concept id, optionally `#fragment`.
fn is_ref(r: &str) -> bool {
    let (id, frag_ok) = match r.split_once('#') {
        Some((id, f)) => (id, !f.is_empty()),
        None => (r, true),
    };
    frag_ok && check_concept_id(id).is_ok()
}

fn parse_proof(v: &Value) -> Result<Proof, ToolError> {
    let bad = || shape("proof");
    let o = v.as_object().ok_or_else(bad)?;
    let s = |k: &str| -> Result<String, ToolError> {
        o.get(k)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(bad)
    };
    let strings = |k: &str| -> Result<Vec<String>, ToolError> {
        o.get(k)
            .and_then(Value::as_array)
            .ok_or_else(bad)?
            .iter()
            .map(|x| x.as_str().map(str::to_owned).ok_or_else(bad))
            .collect()
    };
    let objects = |k: &str| -> Result<&Vec<Value>, ToolError> {
        o.get(k).and_then(Value::as_array).ok_or_else(bad)
    };
    let field = |x: &Value, k: &str| -> Result<String, ToolError> {
        x.get(k)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(bad)
    };
    let mut writes = Vec::new();
    for w in objects("writes")? {
        writes.push((field(w, "path")?, field(w, "digest")?));
    }
    let mut renames = Vec::new();
    for w in objects("renames")? {
        renames.push((field(w, "from")?, field(w, "to")?));
    }
    let mut changed_files = Vec::new();
    for w in objects("changed_files")? {
        changed_files.push((field(w, "kind")?, field(w, "path")?, field(w, "from")?));
    }
    Ok(Proof {
        format_version: o
            .get("format_version")
            .and_then(Value::as_u64)
            .ok_or_else(bad)?,
        request_digest: s("request_digest")?,
        resolution_digest: s("resolution_digest")?,
        base_revision: s("base_revision")?,
        result_revision: s("result_revision")?,
        reads: strings("reads")?,
        writes,
        deletes: strings("deletes")?,
        renames,
        affected_refs: strings("affected_refs")?,
        reverse_impact: strings("reverse_impact")?,
        changed_files,
        changed_refs: strings("changed_refs")?,
    })
}
