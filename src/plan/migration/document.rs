//! One document of the migration (spec/migration.md §6): its transition and its target
//! replay, as pure functions of its path, bytes and the request. The planner
//! ([`super::plan`]) and the payload producer of the apply (the tools layer) both call them,
//! so a payload produced again under the store lock is byte-identical to the planned one.

use super::citations::{self, Blocker, CitationMapping, DocKind, Notice};
use super::frontmatter;
use super::request::{Asset, Computation, MigrationRequest};
use crate::okf::bundle::{parse_document, ParseFault, Parsed};
use crate::okf::capture::Capture;
use crate::okf::computation::{self as section, ComputationBody, Section};
use crate::okf::document::Split;
use crate::plan::edit::Frontmatter;

/// What the transition does to one document.
#[derive(Debug, Clone, Default)]
pub struct DocOutcome {
    /// The new text; `None` when the document is not written (unchanged or blocked).
    pub text: Option<String>,
    /// Its blockers (any blocker: nothing of the document is written).
    pub blockers: Vec<Blocker>,
    /// Its non-blocking notices.
    pub notices: Vec<Notice>,
    /// Whether it has an active `# Citations` section.
    pub has_section: bool,
}

fn simple(code: &'static str, message: &str, action: Option<&'static str>) -> Blocker {
    Blocker {
        code,
        start: 0,
        end: 0,
        message: message.to_owned(),
        action,
    }
}

/// The blocker of a document that cannot be parsed (§8 step 5.2).
#[must_use]
pub fn parse_blocker(fault: ParseFault) -> Blocker {
    match fault {
        ParseFault::InvalidEncoding => simple(
            "invalid_utf8",
            "the document is not valid UTF-8",
            Some("repair_invalid_utf8"),
        ),
        ParseFault::UnterminatedFrontmatter => simple(
            "frontmatter_boundary",
            "the frontmatter is not terminated",
            None,
        ),
        ParseFault::InvalidFrontmatter => simple(
            "migration_document_invalid",
            "the frontmatter cannot be parsed",
            None,
        ),
    }
}

/// Parses `bytes`, or the blocker that stops the document.
fn parse(bytes: &[u8]) -> Result<Parsed<'_>, Blocker> {
    match parse_document(bytes) {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(fault)) => Err(parse_blocker(fault)),
        Err(_) => Err(simple(
            "migration_document_invalid",
            "the frontmatter exceeds the YAML limits or has a broken graph",
            None,
        )),
    }
}

/// Parses a document and migrates its body: the parse, the body outcome (its blockers and
/// notices already moved into the returned [`DocOutcome`]), or the outcome of a document
/// that cannot be parsed.
fn start<'b>(
    bytes: &'b [u8],
    kind: DocKind,
    mapping: Option<&CitationMapping>,
) -> Result<(Parsed<'b>, citations::BodyOutcome, DocOutcome), DocOutcome> {
    let parsed = parse(bytes).map_err(|b| DocOutcome {
        blockers: vec![b],
        ..DocOutcome::default()
    })?;
    let split = &parsed.split;
    let mut body = citations::migrate_body(
        split.body_text(),
        split.body.start,
        split.newline(),
        kind,
        mapping,
    );
    let out = DocOutcome {
        text: None,
        blockers: std::mem::take(&mut body.blockers),
        notices: std::mem::take(&mut body.notices),
        has_section: body.has_section,
    };
    Ok((parsed, body, out))
}

/// The document text with a new frontmatter text and body.
fn assemble(split: &Split<'_>, fm: Option<&str>, body: &str) -> String {
    let text = split.text;
    let mut s = String::with_capacity(text.len() + 256);
    match (&split.frontmatter, fm) {
        (Some(r), Some(fm)) => {
            s.push_str(&text[..r.start]);
            s.push_str(fm);
            s.push_str(&text[r.end..split.body.start]);
        }
        _ => s.push_str(&text[..split.body.start]),
    }
    s.push_str(body);
    s
}

/// The transition of one concept or non-root reserved document (§6.1–§6.6): citations of the
/// body, and for concepts `generated`, `sources` and the computation. `explicit_at` is the
/// request's `generated_at` of this document, `computation` its `computations` item.
#[must_use]
pub fn migrate_document(
    kind: DocKind,
    bytes: &[u8],
    req: &MigrationRequest,
    mapping: Option<&CitationMapping>,
    explicit_at: Option<&str>,
    computation: Option<&Computation>,
) -> DocOutcome {
    let (parsed, body, mut out) = match start(bytes, kind, mapping) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let split = &parsed.split;
    let mut new_fm: Option<String> = None;
    let mut new_body = body.body;
    if kind == DocKind::Concept {
        if body.has_section && parsed.root().and_then(|r| r.get("sources")).is_some() {
            out.blockers.push(simple(
                "sources_citations_conflict",
                "the concept has both frontmatter sources and a # Citations section",
                Some("reconcile_sources_and_citations"),
            ));
        }
        // A blocked body still gets its frontmatter checked, so that one preview names every
        // blocker of the document (nothing of it is written).
        match split.frontmatter.clone() {
            Some(r) => match Frontmatter::parse(&split.text[r.clone()], split.crlf) {
                Ok(mut fm) => {
                    let cx = FrontmatterEdit {
                        split,
                        at: r.start,
                        req,
                        explicit_at,
                        sources: &body.sources,
                        computation,
                    };
                    // One full post-check for all edits of the document; should it fail, the
                    // edits are made again with a full post-check after each (whose result,
                    // and first refusal, then stand).
                    fm.defer_full_check();
                    let edited = cx.run(fm, new_body.clone()).or_else(|()| {
                        Frontmatter::parse(&split.text[r.clone()], split.crlf)
                            .map_err(|_| ())
                            .and_then(|fm| cx.run(fm, new_body.clone()))
                    });
                    match edited {
                        Ok(e) => {
                            new_fm = e.frontmatter;
                            new_body = e.body;
                            out.blockers.extend(e.blockers);
                        }
                        Err(()) => out.blockers.push(simple(
                            "migration_document_invalid",
                            "the frontmatter cannot be edited",
                            None,
                        )),
                    }
                }
                Err(_) => out.blockers.push(simple(
                    "migration_document_invalid",
                    "the frontmatter cannot be edited",
                    None,
                )),
            },
            None if explicit_at.is_some() || !body.sources.is_empty() || computation.is_some() => {
                out.blockers.push(simple(
                    "migration_document_invalid",
                    "the concept has no frontmatter to migrate",
                    None,
                ));
            }
            None => {}
        }
    }
    if out.blockers.is_empty() && (new_fm.is_some() || new_body.is_some()) {
        out.text = Some(assemble(
            split,
            new_fm.as_deref(),
            new_body.as_deref().unwrap_or(split.body_text()),
        ));
    }
    out
}

/// The frontmatter steps of a concept's transition (§6.5, §6.3 rule 3, §6.6): `generated`,
/// `timestamp`, `sources`, then the computation.
struct FrontmatterEdit<'x> {
    split: &'x Split<'x>,
    /// The frontmatter's offset in the document (blocker spans).
    at: usize,
    req: &'x MigrationRequest,
    explicit_at: Option<&'x str>,
    sources: &'x [citations::ProjectedSource],
    computation: Option<&'x Computation>,
}

/// What [`FrontmatterEdit::run`] made: the new frontmatter text (`None`: unchanged), the
/// body (the one it was given, or the computation's), and the blockers.
struct Edited {
    frontmatter: Option<String>,
    body: Option<String>,
    blockers: Vec<Blocker>,
}

impl FrontmatterEdit<'_> {
    /// Runs the steps on `fm` with the body so far `body` (`None`: the document's own).
    /// `Err(())` only when `fm` defers its full post-check and that check fails on the final
    /// text (the caller then runs the steps again without deferring).
    fn run(&self, mut fm: Frontmatter, mut body: Option<String>) -> Result<Edited, ()> {
        let split = self.split;
        let before = fm.text().to_owned();
        let mut blockers = Vec::new();
        let mut frontmatter = None;
        let res = frontmatter::migrate_generated(&mut fm, self.at, self.req, self.explicit_at)
            .and_then(|()| frontmatter::insert_sources(&mut fm, self.at, self.sources));
        match res {
            Ok(()) => {
                if let Some(c) = self.computation {
                    let current = body.as_deref().unwrap_or(split.body_text());
                    let at = body.is_none().then_some(split.body.start);
                    match computation_step(fm.clone(), split.crlf, current, at, c) {
                        Ok((f, b)) => {
                            fm = f;
                            if b.is_some() {
                                body = b;
                            }
                        }
                        Err(bs) => blockers.extend(bs),
                    }
                }
                if fm.text() != before {
                    fm.check().map_err(|_| ())?;
                    frontmatter = Some(fm.text().to_owned());
                }
            }
            Err(bs) => blockers.extend(bs),
        }
        Ok(Edited {
            frontmatter,
            body,
            blockers,
        })
    }
}

fn at_span(code: &'static str, span: (usize, usize), message: &str) -> Blocker {
    Blocker {
        code,
        start: span.0,
        end: span.1,
        message: message.to_owned(),
        action: None,
    }
}

/// The computation steps of §6.6 rules 1–3 on a concept: the frontmatter reconcile of
/// `put_attested_computation` on `fm`, then the body rule of the contract's mode on `body`,
/// then the post-check. `body_at` is the body's offset in the document when `body` is the
/// document's own body (blocker spans; otherwise they are `{0, 0}`). Returns the frontmatter
/// and the new body (`None`: unchanged).
fn computation_step(
    fm: Frontmatter,
    crlf: bool,
    body: &str,
    body_at: Option<usize>,
    c: &Computation,
) -> Result<(Frontmatter, Option<String>), Vec<Blocker>> {
    let span = |r: &std::ops::Range<usize>| body_at.map_or((0, 0), |o| (o + r.start, o + r.end));
    let whole = body_at.map_or((0, 0), |o| (o, o + body.len()));
    let fm = crate::plan::computation::reconcile_computation_frontmatter(fm, crlf, &c.contract)
        .map_err(|(code, message)| {
            vec![at_span(
                "migration_document_invalid",
                (0, 0),
                &format!(
                    "the Attested Computation frontmatter cannot be reconciled losslessly ({code}: {message})"
                ),
            )]
        })?;
    let ambiguous = |s: (usize, usize)| {
        vec![at_span(
            "ambiguous_computation_boundary",
            s,
            "the # Computation section is not one fenced code block (several sections or fences, prose before the fence, an indented or unclosed block)",
        )]
    };
    let missing = |s: (usize, usize)| {
        vec![at_span(
            "missing_computation_boundary",
            s,
            "the # Computation section holds no fenced code block",
        )]
    };
    let sanctioned =
        |s: (usize, usize), m: &str| vec![at_span("sanctioned_computation_mismatch", s, m)];
    let sec = section::classify(body).map_err(|_| ambiguous(whole))?;
    let new_body: Option<String> = match (&c.contract.body, sec) {
        (ComputationBody::Inline { .. }, Section::Absent) => {
            section::body_edit(body, crlf, &c.contract.body)
                .map_err(|_| ambiguous(whole))?
                .map(|e| e.apply(body))
        }
        (_, Section::Empty { heading }) => return Err(missing(span(&heading))),
        (_, Section::ProseOnly { heading }) => return Err(ambiguous(span(&heading))),
        (ComputationBody::Inline { .. }, Section::Direct { fence, .. }) => {
            if section::post_check(body, None, &c.contract.body).is_err() {
                return Err(sanctioned(
                    span(&fence.range),
                    "the fence under # Computation differs from the contract's inline_computation or inline_language",
                ));
            }
            None
        }
        (ComputationBody::File { .. }, Section::Absent) => None,
        (ComputationBody::File { .. }, Section::Direct { heading, fence }) => {
            let content = c.asset.as_ref().map_or("", |a| a.content.as_str());
            let as_inline = ComputationBody::Inline {
                code: content.to_owned(),
                language: (!fence.info.is_empty()).then(|| fence.info.clone()),
            };
            if section::post_check(body, None, &as_inline).is_err() {
                return Err(sanctioned(
                    span(&fence.range),
                    "the fence under # Computation differs from the asset's content",
                ));
            }
            // The heading line, the blank lines up to the fence, the fence and one blank line
            // after it are removed; any prose of the section stays.
            let mut end = fence.range.end;
            let rest = &body[end..];
            let line_len = rest.find('\n').map_or(rest.len(), |i| i + 1);
            if rest[..line_len]
                .trim_matches([' ', '\t', '\r', '\n'])
                .is_empty()
            {
                end += line_len;
            }
            let mut s = String::with_capacity(body.len());
            s.push_str(&body[..heading.start]);
            s.push_str(&body[end..]);
            Some(s)
        }
    };
    let result = new_body.as_deref().unwrap_or(body);
    let key = fm
        .yaml()
        .root
        .as_ref()
        .and_then(|r| r.get("computation"))
        .and_then(crate::okf::yaml::Node::scalar_text)
        .map(str::to_owned);
    section::post_check(result, key.as_deref(), &c.contract.body).map_err(|e| match e {
        section::PostCheckError::ModeMismatch => vec![at_span(
            "computation_mode_mismatch",
            whole,
            "after the migration the concept does not have the contract's mode",
        )],
        _ => sanctioned(
            whole,
            "after the migration the computation differs from the contract",
        ),
    })?;
    Ok((fm, new_body))
}

/// What happens to one asset (§6.6 rule 4) on `capture`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetOutcome {
    /// The path is free: the file is created.
    Write,
    /// A file with identical bytes exists: no write.
    Identical,
    /// A file with other bytes exists, or the path collides with a file or directory.
    Conflict(Blocker),
}

/// The §6.6 rule 4 decision for `asset` on `capture`: a pure function of the capture, so the
/// planner and the payload producer of the apply agree.
#[must_use]
pub fn asset_outcome(capture: &Capture, asset: &Asset) -> AssetOutcome {
    let conflict = |m: &str| AssetOutcome::Conflict(at_span("migration_asset_conflict", (0, 0), m));
    if let Some(f) = capture.get(&asset.path) {
        let same = f.size == asset.content.len() as u64
            && f.digest == crate::digest::sha256(asset.content.as_bytes());
        return if same {
            AssetOutcome::Identical
        } else {
            conflict("a file with other bytes exists at the asset path")
        };
    }
    let comps: Vec<&str> = asset.path.split('/').collect();
    for n in 1..comps.len() {
        if capture.get(&comps[..n].join("/")).is_some() {
            return conflict("a parent of the asset path is a file");
        }
    }
    let dir = format!("{}/", asset.path);
    let i = capture
        .files
        .partition_point(|f| f.path.as_bytes() < dir.as_bytes());
    if capture
        .files
        .get(i)
        .is_some_and(|f| f.path.starts_with(&dir))
    {
        return conflict("the asset path is a directory of the bundle");
    }
    AssetOutcome::Write
}

/// The transition of the root `index.md` (§6.4 rules 2 and 4): its body's citations, then
/// `okf_version: "0.2"` (the frontmatter prepended when there is none).
#[must_use]
pub fn migrate_root(bytes: &[u8], mapping: Option<&CitationMapping>) -> DocOutcome {
    let (parsed, body, mut out) = match start(bytes, DocKind::Reserved, mapping) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let split = &parsed.split;
    let new_body = body.body.as_deref().unwrap_or(split.body_text());
    let text = match split.frontmatter.clone() {
        Some(r) => match Frontmatter::parse(&split.text[r.clone()], split.crlf) {
            Ok(mut fm) => match frontmatter::declare_02(&mut fm, r.start) {
                Ok(()) => Some(assemble(split, Some(fm.text()), new_body)),
                Err(bs) => {
                    out.blockers.extend(bs);
                    None
                }
            },
            Err(_) => {
                out.blockers.push(simple(
                    "migration_document_invalid",
                    "the root frontmatter cannot be edited",
                    None,
                ));
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
    if out.blockers.is_empty() {
        out.text = text.filter(|t| t.as_bytes() != bytes);
    }
    out
}

/// The mixed-state tolerance of §8 step 5.2: whether a document whose transition outcome `o`
/// has blockers is already exactly what the transition would make of it (its target replay
/// with the same input passes), so that it is done, not blocked.
///
/// A document with an active `# Citations` section never is: the target replay reports each
/// active section (`migration_replay_mismatch`, [`citations::replay_check`]) from the same
/// body lines the transition found it in, so the replay is not run for it.
#[must_use]
pub fn settled(
    o: &DocOutcome,
    kind: DocKind,
    bytes: &[u8],
    req: &MigrationRequest,
    mapping: Option<&CitationMapping>,
    explicit_at: Option<&str>,
    computation: Option<&Computation>,
) -> bool {
    !o.blockers.is_empty()
        && !o.has_section
        && replay_document(kind, bytes, req, mapping, explicit_at, computation).is_empty()
}

/// The target replay of one concept or reserved document (§6.7): its blockers.
#[must_use]
pub fn replay_document(
    kind: DocKind,
    bytes: &[u8],
    req: &MigrationRequest,
    mapping: Option<&CitationMapping>,
    explicit_at: Option<&str>,
    computation: Option<&Computation>,
) -> Vec<Blocker> {
    let parsed = match parse(bytes) {
        Ok(p) => p,
        Err(b) => return vec![b],
    };
    let body_offset = parsed.split.body.start;
    let fm_offset = parsed.split.frontmatter.as_ref().map_or(0, |r| r.start);
    let root = parsed.root();
    let sources = if kind == DocKind::Concept {
        frontmatter::sources_of(root)
    } else {
        Vec::new()
    };
    let mut out = citations::replay_check(
        parsed.split.body_text(),
        body_offset,
        kind,
        mapping,
        &sources,
    );
    if kind == DocKind::Concept {
        out.extend(frontmatter::replay_generated(
            root,
            fm_offset,
            req,
            explicit_at,
        ));
    }
    if let (Some(c), DocKind::Concept) = (computation, kind) {
        out.extend(replay_computation(&parsed.split, c));
    }
    out
}

/// §6.7 rule 5: re-applying the computation reconcile and boundary steps leaves the bytes
/// unchanged.
fn replay_computation(split: &Split<'_>, c: &Computation) -> Vec<Blocker> {
    let Some(r) = split.frontmatter.clone() else {
        return vec![at_span(
            "migration_replay_mismatch",
            (0, 0),
            "the computation concept has no frontmatter",
        )];
    };
    let Ok(fm) = Frontmatter::parse(&split.text[r.clone()], split.crlf) else {
        return vec![at_span(
            "migration_document_invalid",
            (r.start, r.end),
            "the frontmatter cannot be edited",
        )];
    };
    let before = fm.text().to_owned();
    match computation_step(fm, split.crlf, split.body_text(), Some(split.body.start), c) {
        Err(bs) => bs,
        Ok((fm, _)) if fm.text() != before => vec![at_span(
            "migration_replay_mismatch",
            (r.start, r.end),
            "the frontmatter differs from the computation contract",
        )],
        Ok((_, Some(_))) => vec![at_span(
            "migration_replay_mismatch",
            (split.body.start, split.text.len()),
            "the body differs from the computation contract",
        )],
        Ok(_) => Vec::new(),
    }
}

/// The §12.4 proposal of a document without a mapping, when it has a section.
///
/// `Some` only for a document with exactly one active `# Citations` section, so such a
/// document is never [`settled`]: the proposal of an unmapped document is this function's
/// result whatever its transition outcome.
#[must_use]
pub fn propose(path: &str, kind: DocKind, bytes: &[u8]) -> Option<CitationMapping> {
    let parsed = parse(bytes).ok()?;
    citations::propose(path, parsed.split.body_text(), kind)
}

#[cfg(test)]
#[path = "computation_tests.rs"]
mod computation_tests;
