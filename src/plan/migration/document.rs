//! One document of the migration (spec/migration.md §6): its transition and its target
//! replay, as pure functions of its path, bytes and the request. The planner
//! ([`super::plan`]) and the payload producer of the apply (the tools layer) both call them,
//! so a payload produced again under the store lock is byte-identical to the planned one.

use super::citations::{self, Blocker, CitationMapping, DocKind, Notice};
use super::frontmatter;
use super::request::MigrationRequest;
use crate::okf::bundle::{parse_document, ParseFault, Parsed};
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

/// The transition of one concept or non-root reserved document (§6.1–§6.5): citations of the
/// body, and for concepts `generated` and `sources`. `explicit_at` is the request's
/// `generated_at` of this document.
#[must_use]
pub fn migrate_document(
    kind: DocKind,
    bytes: &[u8],
    req: &MigrationRequest,
    mapping: Option<&CitationMapping>,
    explicit_at: Option<&str>,
) -> DocOutcome {
    let (parsed, body, mut out) = match start(bytes, kind, mapping) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let split = &parsed.split;
    let mut new_fm: Option<String> = None;
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
                    let before = fm.text().to_owned();
                    let res = frontmatter::migrate_generated(&mut fm, r.start, req, explicit_at)
                        .and_then(|()| {
                            frontmatter::insert_sources(&mut fm, r.start, &body.sources)
                        });
                    match res {
                        Ok(()) if fm.text() != before => new_fm = Some(fm.text().to_owned()),
                        Ok(()) => {}
                        Err(bs) => out.blockers.extend(bs),
                    }
                }
                Err(_) => out.blockers.push(simple(
                    "migration_document_invalid",
                    "the frontmatter cannot be edited",
                    None,
                )),
            },
            None if explicit_at.is_some() || !body.sources.is_empty() => {
                out.blockers.push(simple(
                    "migration_document_invalid",
                    "the concept has no frontmatter to migrate",
                    None,
                ));
            }
            None => {}
        }
    }
    if out.blockers.is_empty() && (new_fm.is_some() || body.body.is_some()) {
        out.text = Some(assemble(
            split,
            new_fm.as_deref(),
            body.body.as_deref().unwrap_or(split.body_text()),
        ));
    }
    out
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

/// The target replay of one concept or reserved document (§6.7): its blockers.
#[must_use]
pub fn replay_document(
    kind: DocKind,
    bytes: &[u8],
    req: &MigrationRequest,
    mapping: Option<&CitationMapping>,
    explicit_at: Option<&str>,
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
    out
}

/// The §12.4 proposal of a document without a mapping, when it has a section.
#[must_use]
pub fn propose(path: &str, kind: DocKind, bytes: &[u8]) -> Option<CitationMapping> {
    let parsed = parse(bytes).ok()?;
    citations::propose(path, parsed.split.body_text(), kind)
}
