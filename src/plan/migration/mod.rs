//! The OKF 0.1 → 0.2 migration planner (spec/migration.md). Pure: a parsed bundle and the
//! canonical request in, the migration plan out.
//!
//! - [`request`]: decoding and the canonical input (§3, §9 A).
//! - [`source`]: source resolution and its digest (§4).
//! - [`citations`]: legacy citations sections, claim markers, inline notes, proposals
//!   (§6.2–§6.4, §12).
//! - [`frontmatter`]: `timestamp` → `generated`, `sources`, the root declaration (§6.5).
//! - [`identity`]: operation bytes, change set, proof and plan digest (§7).
//! - [`plan`] (this module): the transition (§8 step 5) and the target replay (§6.7).
//!
//! # Limitations
//! - `computations` (§3.4, §6.6) are not supported yet (refused by [`request`]).
//! - The plan holds every written document in memory (the spine's [`Plan`] shape); the
//!   streaming of §12.5 rule 1 is not built yet.
//! - The mixed-state tolerance of §8 step 5.2 is not built: a bundle that is partly migrated
//!   is planned as a transition.

pub mod citations;
pub mod frontmatter;
pub mod identity;
pub mod request;
pub mod source;

use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::okf::bundle::{Bundle, Doc, ParseFault};
use crate::okf::grammar::DocClass;
use crate::okf::temporal::Profile;
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::Target;
use crate::plan::diff::Diff;
use crate::plan::edit::Frontmatter;
use crate::plan::stage;
use citations::{Blocker, CitationMapping, DocKind};
use request::{MigrationRequest, Proof};
use source::SourceResolution;
use std::collections::{BTreeMap, BTreeSet};

/// Maximum blockers and manual actions returned (§8 step 6, beyond reference: the rest is
/// cut with `blockers_truncated`).
pub const MAX_BLOCKERS: usize = 10_000;
/// Maximum proposed entries (§12.4 rule 4).
pub const MAX_PROPOSED_ENTRIES: usize = 100_000;

/// A wire blocker `{code, path, location: {start, end}, message}` (§5.1).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WireBlocker {
    pub path: String,
    pub code: String,
    pub start: usize,
    pub end: usize,
    pub message: String,
}

/// A wire manual action `{code, path, message}` (§5.1).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ManualAction {
    pub path: String,
    pub code: String,
    pub message: String,
}

/// What a migration plan says (§5.1 states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationStatus {
    Applicable,
    /// Zero writes in a transition: proof and digest present.
    TransitionNoop,
    /// The bundle is already the target: no proof, `plan_digest: ""`.
    TargetNoop,
    Blocked,
}

/// A built migration plan.
#[derive(Debug, Clone)]
pub struct MigrationPlan {
    pub status: MigrationStatus,
    pub source: SourceResolution,
    pub base_revision: String,
    pub result_revision: Option<String>,
    pub proof: Option<Proof>,
    /// `""` unless applicable or a transition noop.
    pub plan_digest: String,
    pub change_set_id: String,
    pub request_digest: String,
    /// `(path, bytes)`, ascending; empty unless applicable.
    pub writes: Vec<(String, Vec<u8>)>,
    pub changed_refs: Vec<String>,
    pub diff: Diff,
    pub blockers: Vec<WireBlocker>,
    pub blockers_truncated: bool,
    pub manual_actions: Vec<ManualAction>,
    pub diagnostics: Vec<Diagnostic>,
    pub proposals: Vec<CitationMapping>,
    pub proposals_truncated: bool,
}

/// The validator options of the target preflight (§6.4 rule 5): strict, OKF 0.2, date
/// profile. The capture of both migration tools is parsed under them.
#[must_use]
pub fn validation_options() -> ValidationOptions {
    ValidationOptions {
        strict: true,
        check_links: false,
        check_orphans: false,
        spec_version: Some(Target::V02),
        temporal_profile: Profile::Date,
        as_of: None,
    }
}

fn kind_of(doc: &Doc<'_>) -> Option<DocKind> {
    match doc.class {
        DocClass::Concept(_) => Some(DocKind::Concept),
        DocClass::Reserved => Some(DocKind::Reserved),
        _ => None,
    }
}

/// Collects blockers and manual actions of one plan.
#[derive(Default)]
struct Findings {
    blockers: BTreeSet<WireBlocker>,
    actions: BTreeSet<ManualAction>,
}

impl Findings {
    fn add(&mut self, path: &str, b: &Blocker) {
        self.blockers.insert(WireBlocker {
            path: path.to_owned(),
            code: b.code.to_owned(),
            start: b.start,
            end: b.end,
            message: b.message.clone(),
        });
        if let Some(a) = b.action {
            self.actions.insert(ManualAction {
                path: path.to_owned(),
                code: a.to_owned(),
                message: action_message(a).to_owned(),
            });
        }
    }
    fn simple(
        &mut self,
        path: &str,
        code: &'static str,
        message: &str,
        action: Option<&'static str>,
    ) {
        self.add(
            path,
            &Blocker {
                code,
                start: 0,
                end: 0,
                message: message.to_owned(),
                action,
            },
        );
    }
}

fn action_message(code: &str) -> &'static str {
    match code {
        "provide_citation_mapping" => "pass a citation_mappings item for this document (the preview's proposed_citation_mappings are a reviewed starting point)",
        "disambiguate_citation_entry" => "give the colliding entries distinct source ids or select them by legacy_entry",
        "disambiguate_citation_destination" => "pass the intended resource for this entry explicitly",
        "normalize_citations_section" => "rewrite the citations section by hand into the supported entry forms, or pass trailing_content: \"keep\"",
        "reconcile_sources_and_citations" => "remove either the frontmatter sources or the # Citations section by hand",
        "repair_invalid_utf8" => "re-encode the document as UTF-8",
        "provide_generated_at" => "pass generated_at for this concept",
        "provide_generated_by" => "pass generated_by (an actor such as agent/1.0)",
        _ => "see the blocker",
    }
}

/// The document text with a new frontmatter text and body.
fn assemble(
    doc_text: &str,
    split: &crate::okf::document::Split<'_>,
    fm: Option<&str>,
    body: &str,
) -> String {
    match (&split.frontmatter, fm) {
        (Some(r), Some(fm)) => {
            let mut s = String::with_capacity(doc_text.len() + 256);
            s.push_str(&doc_text[..r.start]);
            s.push_str(fm);
            s.push_str(&doc_text[r.end..split.body.start]);
            s.push_str(body);
            s
        }
        _ => {
            let mut s = String::with_capacity(doc_text.len());
            s.push_str(&doc_text[..split.body.start]);
            s.push_str(body);
            s
        }
    }
}

/// Plans the migration of `bundle` (parsed under [`validation_options`]) for `req`, with the
/// change set on `change_set_base` (the preview: the captured revision). `field` names the
/// input the recovery step of an unreadable root declaration points at.
///
/// # Errors
/// The resolution errors of [`source::resolve`]; `resource_limit` past the output caps;
/// `operation_cancelled`.
pub fn plan(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    source: SourceResolution,
    change_set_base: &str,
    cancel: &crate::cancel::Cancel,
) -> Result<MigrationPlan, ToolError> {
    let capture = bundle.capture;
    let resolution_digest = source.digest();
    let cs = identity::change_set(req, &resolution_digest, change_set_base);
    let mut out = MigrationPlan {
        status: MigrationStatus::Blocked,
        base_revision: capture.revision.clone(),
        result_revision: None,
        proof: None,
        plan_digest: String::new(),
        change_set_id: cs.id.clone(),
        request_digest: cs.request_digest(),
        writes: Vec::new(),
        changed_refs: Vec::new(),
        diff: Diff::default(),
        blockers: Vec::new(),
        blockers_truncated: false,
        manual_actions: Vec::new(),
        diagnostics: Vec::new(),
        proposals: Vec::new(),
        proposals_truncated: false,
        source,
    };
    if !out.source.blockers.is_empty() {
        out.blockers = out
            .source
            .blockers
            .iter()
            .map(|b| WireBlocker {
                path: b.path.clone(),
                code: b.code.clone(),
                start: b.start as usize,
                end: b.end as usize,
                message: b.message.clone(),
            })
            .collect();
        return Ok(out);
    }
    if out.source.is_target_noop() {
        let findings = target_replay(bundle, req);
        if findings.blockers.is_empty() && findings.actions.is_empty() {
            out.status = MigrationStatus::TargetNoop;
            out.result_revision = Some(capture.revision.clone());
        } else {
            finish_findings(&mut out, findings);
        }
        return Ok(out);
    }
    transition(bundle, req, &mut out, &cs, &resolution_digest, cancel)?;
    Ok(out)
}

fn finish_findings(out: &mut MigrationPlan, f: Findings) {
    let total = f.blockers.len().max(f.actions.len());
    out.blockers = f.blockers.into_iter().take(MAX_BLOCKERS).collect();
    out.manual_actions = f.actions.into_iter().take(MAX_BLOCKERS).collect();
    out.blockers_truncated = total > MAX_BLOCKERS;
}

/// The target replay of §6.7 over the live documents: its blockers and manual actions.
fn target_replay(bundle: &Bundle<'_>, req: &MigrationRequest) -> Findings {
    let mut f = Findings::default();
    let progress = crate::progress::current();
    let files = bundle.capture.files.len() as u64;
    let total = Some(files + 1);
    progress.finish(files, total, "planning");
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
    for path in mappings.keys().chain(explicit.keys()) {
        if bundle.doc(path).and_then(kind_of).is_none() {
            f.simple(
                path,
                "migration_document_missing",
                "the mapped document does not exist",
                None,
            );
        }
    }
    for doc in &bundle.docs {
        let Some(kind) = kind_of(doc) else { continue };
        let path = doc.file.path.as_str();
        let parsed = doc.parsed_transient();
        let parsed = match &*parsed {
            Ok(p) => p,
            Err(fault) => {
                parse_blocker(&mut f, path, *fault);
                continue;
            }
        };
        let body_offset = parsed.split.body.start;
        let fm_offset = parsed.split.frontmatter.as_ref().map_or(0, |r| r.start);
        let root = parsed.root();
        let sources = if kind == DocKind::Concept {
            frontmatter::sources_of(root)
        } else {
            Vec::new()
        };
        for b in citations::replay_check(
            parsed.split.body_text(),
            body_offset,
            kind,
            mappings.get(path).copied(),
            &sources,
        ) {
            f.add(path, &b);
        }
        if kind == DocKind::Concept {
            for b in
                frontmatter::replay_generated(root, fm_offset, req, explicit.get(path).copied())
            {
                f.add(path, &b);
            }
        }
    }
    progress.finish(files + 1, total, "planning");
    f
}

fn parse_blocker(f: &mut Findings, path: &str, fault: ParseFault) {
    match fault {
        ParseFault::InvalidEncoding => f.simple(
            path,
            "invalid_utf8",
            "the document is not valid UTF-8",
            Some("repair_invalid_utf8"),
        ),
        ParseFault::UnterminatedFrontmatter => f.simple(
            path,
            "frontmatter_boundary",
            "the frontmatter is not terminated",
            None,
        ),
        ParseFault::InvalidFrontmatter => f.simple(
            path,
            "migration_document_invalid",
            "the frontmatter cannot be parsed",
            None,
        ),
    }
}

/// The transition (§8 step 5) into `out`.
fn transition(
    bundle: &Bundle<'_>,
    req: &MigrationRequest,
    out: &mut MigrationPlan,
    cs: &crate::plan::identity::ChangeSet,
    resolution_digest: &str,
    cancel: &crate::cancel::Cancel,
) -> Result<(), ToolError> {
    let capture = bundle.capture;
    let mut f = Findings::default();
    let mut notices: Vec<Diagnostic> = Vec::new();
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
    for path in mappings.keys().chain(explicit.keys()) {
        if bundle.doc(path).and_then(kind_of).is_none() {
            f.simple(
                path,
                "migration_document_missing",
                "the mapped document does not exist",
                None,
            );
        }
    }
    if req.label_collision {
        for m in &req.citation_mappings {
            let mut seen: BTreeMap<String, &str> = BTreeMap::new();
            for e in &m.entries {
                let label = crate::okf::markdown::normalise_label(&e.source_id);
                if seen.get(&label).is_some_and(|id| *id != e.source_id) {
                    f.simple(
                        &m.path,
                        "normalized_footnote_label_collision",
                        "two source ids of this document have the same normalised footnote label",
                        Some("disambiguate_citation_entry"),
                    );
                }
                seen.entry(label).or_insert(&e.source_id);
            }
        }
    }
    let mut overlay: BTreeMap<String, String> = BTreeMap::new();
    let mut proposals: Vec<CitationMapping> = Vec::new();
    let mut proposed_entries = 0usize;
    let mut root_doc: Option<&Doc<'_>> = None;
    // Progress (spec/migration.md §12.5 rule 4): one report at the start and one at the end,
    // throttled in between; counted after the captured files so it keeps increasing.
    let progress = crate::progress::current();
    let files = capture.files.len() as u64;
    let total = Some(files + bundle.docs.len() as u64);
    progress.finish(files, total, "planning");
    for (i, doc) in bundle.docs.iter().enumerate() {
        cancel.check()?;
        progress.report(files + i as u64, total, "planning");
        let Some(kind) = kind_of(doc) else { continue };
        let path = doc.file.path.as_str();
        if path == "index.md" {
            root_doc = Some(doc);
            continue;
        }
        let parsed = doc.parsed_transient();
        let parsed = match &*parsed {
            Ok(p) => p,
            Err(fault) => {
                parse_blocker(&mut f, path, *fault);
                continue;
            }
        };
        let split = &parsed.split;
        let mapping = mappings.get(path).copied();
        let body = citations::migrate_body(
            split.body_text(),
            split.body.start,
            split.newline(),
            kind,
            mapping,
        );
        for n in &body.notices {
            notices
                .push(Diagnostic::new(n.code, Severity::Warn, n.message.clone()).with_file(path));
        }
        if mapping.is_none() && body.has_section && proposed_entries < MAX_PROPOSED_ENTRIES {
            if let Some(p) = citations::propose(path, split.body_text(), kind) {
                proposed_entries += p.entries.len();
                if proposed_entries > MAX_PROPOSED_ENTRIES {
                    out.proposals_truncated = true;
                } else {
                    proposals.push(p);
                }
            }
        } else if mapping.is_none() && body.has_section {
            out.proposals_truncated = true;
        }
        let mut blocked = !body.blockers.is_empty();
        for b in &body.blockers {
            f.add(path, b);
        }
        let new_body = body.body.clone();
        let mut new_fm: Option<String> = None;
        if kind == DocKind::Concept {
            let root = parsed.root();
            if body.has_section && root.and_then(|r| r.get("sources")).is_some() {
                f.simple(
                    path,
                    "sources_citations_conflict",
                    "the concept has both frontmatter sources and a # Citations section",
                    Some("reconcile_sources_and_citations"),
                );
                blocked = true;
            }
            // A blocked body still gets its frontmatter checked, so that one preview names
            // every blocker of the document (nothing of it is written).
            match split.frontmatter.clone() {
                Some(r) => {
                    let mut fm = match Frontmatter::parse(&split.text[r.clone()], split.crlf) {
                        Ok(fm) => fm,
                        Err(_) => {
                            f.simple(
                                path,
                                "migration_document_invalid",
                                "the frontmatter cannot be edited",
                                None,
                            );
                            continue;
                        }
                    };
                    let before = fm.text().to_owned();
                    let res = frontmatter::migrate_generated(
                        &mut fm,
                        r.start,
                        req,
                        explicit.get(path).copied(),
                    )
                    .and_then(|()| frontmatter::insert_sources(&mut fm, r.start, &body.sources));
                    if let Err(bs) = res {
                        for b in &bs {
                            f.add(path, b);
                        }
                        continue;
                    }
                    if fm.text() != before {
                        new_fm = Some(fm.text().to_owned());
                    }
                }
                None => {
                    if explicit.contains_key(path) || !body.sources.is_empty() {
                        f.simple(
                            path,
                            "migration_document_invalid",
                            "the concept has no frontmatter to migrate",
                            None,
                        );
                        continue;
                    }
                }
            }
        }
        if blocked {
            continue;
        }
        if new_fm.is_some() || new_body.is_some() {
            let text = assemble(
                split.text,
                split,
                new_fm.as_deref(),
                new_body.as_deref().unwrap_or(split.body_text()),
            );
            overlay.insert(path.to_owned(), text);
        }
    }
    // The root index last (§6.1 rule 3, §6.4 rule 4).
    if let Some(doc) = root_doc {
        let parsed = doc.parsed_transient();
        match &*parsed {
            Err(fault) => parse_blocker(&mut f, "index.md", *fault),
            Ok(parsed) => {
                let split = &parsed.split;
                let mapping = mappings.get("index.md").copied();
                let body = citations::migrate_body(
                    split.body_text(),
                    split.body.start,
                    split.newline(),
                    DocKind::Reserved,
                    mapping,
                );
                for n in &body.notices {
                    notices.push(
                        Diagnostic::new(n.code, Severity::Warn, n.message.clone())
                            .with_file("index.md"),
                    );
                }
                if mapping.is_none() && body.has_section {
                    if let Some(p) =
                        citations::propose("index.md", split.body_text(), DocKind::Reserved)
                    {
                        proposals.push(p);
                    }
                }
                for b in &body.blockers {
                    f.add("index.md", b);
                }
                let new_body = body.body.unwrap_or_else(|| split.body_text().to_owned());
                let text = match split.frontmatter.clone() {
                    Some(r) => match Frontmatter::parse(&split.text[r.clone()], split.crlf) {
                        Ok(mut fm) => match frontmatter::declare_02(&mut fm, r.start) {
                            Ok(()) => Some(assemble(split.text, split, Some(fm.text()), &new_body)),
                            Err(bs) => {
                                for b in &bs {
                                    f.add("index.md", b);
                                }
                                None
                            }
                        },
                        Err(_) => {
                            f.simple(
                                "index.md",
                                "migration_document_invalid",
                                "the root frontmatter cannot be edited",
                                None,
                            );
                            None
                        }
                    },
                    None => {
                        let nl = split.newline();
                        let head = &split.text[..split.body.start];
                        Some(format!(
                            "{head}---{nl}okf_version: \"0.2\"{nl}---{nl}{new_body}"
                        ))
                    }
                };
                if let Some(t) = text {
                    overlay.insert("index.md".to_owned(), t);
                }
            }
        }
    }
    progress.finish(files + bundle.docs.len() as u64, total, "planning");
    out.proposals = proposals;
    let writes = stage::changed_writes(capture, overlay);
    // The target preflight (§6.4 rule 5, §12.3).
    if f.blockers.is_empty() && !writes.is_empty() {
        let opts = validation_options();
        let base_report = validate::validate_bundle(bundle, &opts);
        let (_, verdict) = stage::validate_staged(bundle, &base_report, &writes, &opts)?;
        for d in &verdict.blocking {
            f.add(
                &d.file,
                &Blocker {
                    code: "migration_target_preflight_failed",
                    start: 0,
                    end: 0,
                    message: format!("the migrated bundle fails validation: {}", d.code),
                    action: None,
                },
            );
        }
        notices.extend(verdict.projected);
    }
    if !f.blockers.is_empty() {
        finish_findings(out, f);
        out.diagnostics = stage::finish_diagnostics(notices);
        return Ok(());
    }
    let result_revision = stage::result_revision(capture, &writes);
    let changed_refs = stage::changed_refs(&writes);
    let proof = identity::build_proof(
        &out.request_digest,
        resolution_digest,
        &capture.revision,
        &result_revision,
        capture.files.iter().map(|f| f.path.clone()).collect(),
        writes
            .iter()
            .map(|(p, b)| (p.clone(), crate::plan::identity::content_hex(b)))
            .collect(),
        changed_refs.clone(),
    );
    let _ = cs;
    out.plan_digest = identity::plan_digest(&proof);
    out.result_revision = Some(result_revision);
    out.proof = Some(proof);
    if writes.is_empty() {
        out.status = MigrationStatus::TransitionNoop;
        return Ok(());
    }
    out.status = MigrationStatus::Applicable;
    out.diff = stage::render_diff(capture, &writes);
    out.changed_refs = changed_refs;
    out.writes = writes;
    out.diagnostics = stage::finish_diagnostics(notices);
    Ok(())
}
