//! A capture parsed into OKF documents (spec/store.md §3.4).
//!
//! Every concept and reserved document is split and its frontmatter parsed. YAML resource
//! limits and graph faults fail the whole bundle; ordinary parse problems are recorded per
//! document for each tool to handle.

use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::capture::{Capture, CapturedFile};
use crate::okf::document::{self, Split};
use crate::okf::grammar::{classify, DocClass};
use crate::okf::memo;
use crate::okf::yaml::{self, Node, Yaml, YamlError};
use std::sync::OnceLock;

/// Why a concept or reserved document cannot be parsed (spec/surface.md §13.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseFault {
    InvalidEncoding,
    UnterminatedFrontmatter,
    /// YAML syntax, duplicate key or non-mapping root.
    InvalidFrontmatter,
}

impl ParseFault {
    /// The §13.1 code.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            ParseFault::InvalidEncoding => "invalid_encoding",
            ParseFault::UnterminatedFrontmatter => "unterminated_frontmatter",
            ParseFault::InvalidFrontmatter => "invalid_frontmatter",
        }
    }
}

/// A document that parsed.
#[derive(Debug, Clone)]
pub struct Parsed<'a> {
    pub split: Split<'a>,
    /// `None` when the document has no frontmatter.
    pub yaml: Option<Yaml>,
    /// Whether the frontmatter holds a duplicate key (recorded as a parse fault, but patch
    /// planning reports it as `ambiguous_presentation`).
    pub duplicate_key: bool,
}

impl Parsed<'_> {
    /// The frontmatter root mapping, if any.
    #[must_use]
    pub fn root(&self) -> Option<&Node> {
        self.yaml.as_ref().and_then(|y| y.root.as_ref())
    }
    /// Whether the document has frontmatter (possibly empty).
    #[must_use]
    pub fn has_frontmatter(&self) -> bool {
        self.split.frontmatter.is_some()
    }
}

/// One visible `.md` document of interest.
///
/// Its parse is lazy: a document whose digest the memo knows to be free of YAML limit and
/// graph faults (spec/store.md §3.4, [`crate::okf::memo`]) is parsed only when a tool looks
/// at it through [`Doc::parsed`]; the result is kept for the rest of the request.
#[derive(Debug, Clone)]
pub struct Doc<'a> {
    pub file: &'a CapturedFile,
    pub class: DocClass,
    /// Boxed: most documents of a request are never parsed, and an empty cell stays one
    /// pointer wide instead of a whole parse.
    parsed: OnceLock<Box<Result<Parsed<'a>, ParseFault>>>,
}

impl<'a> Doc<'a> {
    /// A document whose parse is already known.
    #[must_use]
    pub fn new(
        file: &'a CapturedFile,
        class: DocClass,
        parsed: Result<Parsed<'a>, ParseFault>,
    ) -> Self {
        Self {
            file,
            class,
            parsed: OnceLock::from(Box::new(parsed)),
        }
    }

    /// A document known to parse without a limit or graph fault, parsed on first use.
    fn lazy(file: &'a CapturedFile, class: DocClass) -> Self {
        Self {
            file,
            class,
            parsed: OnceLock::new(),
        }
    }

    /// The document's parse: split, frontmatter tree, or the ordinary parse fault
    /// (spec/surface.md §13.1). Parses on first use and keeps the result.
    pub fn parsed(&self) -> &Result<Parsed<'a>, ParseFault> {
        self.parsed
            .get_or_init(|| Box::new(parse_known_clean(self.file.bytes())))
    }

    /// The parse if it is already at hand, else a fresh one that is not kept (callers that
    /// visit every document once use this to bound memory).
    #[must_use]
    pub fn parsed_transient(&self) -> std::borrow::Cow<'_, Result<Parsed<'a>, ParseFault>> {
        match self.parsed.get() {
            Some(p) => std::borrow::Cow::Borrowed(&**p),
            None => std::borrow::Cow::Owned(parse_known_clean(self.file.bytes())),
        }
    }
}

/// Parses a document already proven free of limit and graph faults. Parsing is deterministic,
/// so the fault branch cannot happen; it is still mapped (to `invalid_frontmatter`) rather than
/// trusted, so that no input can make this panic.
fn parse_known_clean(bytes: &[u8]) -> Result<Parsed<'_>, ParseFault> {
    parse_document(bytes).unwrap_or(Err(ParseFault::InvalidFrontmatter))
}

/// A fault that fails every tool (spec/store.md §3.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleFault {
    /// A YAML resource limit in `path` → `resource_limit`.
    Limit { path: String },
    /// A YAML graph fault in `path` → `invalid_yaml_graph`.
    Graph { path: String },
}

impl BundleFault {
    /// The tool error every tool answers with (spec/store.md §3.4): `resource_limit` or
    /// `invalid_yaml_graph`, with one diagnostic naming the document.
    #[must_use]
    pub fn to_tool_error(&self) -> ToolError {
        match self {
            BundleFault::Limit { path } => {
                ToolError::resource_limit("a document exceeds the YAML resource limits")
                    .with_diagnostic(
                        Diagnostic::new(
                            codes::RESOURCE_LIMIT,
                            Severity::Error,
                            "frontmatter exceeds the YAML resource limits",
                        )
                        .with_file(path.clone()),
                    )
            }
            BundleFault::Graph { path } => ToolError::new(
                codes::INVALID_YAML_GRAPH,
                "a document has a broken YAML graph",
            )
            .with_diagnostic(
                Diagnostic::new(
                    codes::INVALID_YAML_GRAPH,
                    Severity::Error,
                    "frontmatter has a broken YAML graph",
                )
                .with_file(path.clone()),
            ),
        }
    }
}

/// The parsed bundle: every concept and reserved document, in path order.
#[derive(Debug, Clone)]
pub struct Bundle<'a> {
    pub capture: &'a Capture,
    pub docs: Vec<Doc<'a>>,
}

/// Parses one document's bytes.
///
/// # Errors
/// `Err(Err(fault))` for an ordinary parse problem recorded on the document;
/// `Err(Ok(yaml_error))` never; limits and graph faults come back as `Ok(Err(..))` of the
/// outer result in [`parse_bundle`].
pub fn parse_document(bytes: &[u8]) -> Result<Result<Parsed<'_>, ParseFault>, YamlError> {
    let split = match document::split(bytes) {
        Ok(s) => s,
        Err(document::SplitError::InvalidEncoding) => return Ok(Err(ParseFault::InvalidEncoding)),
        Err(document::SplitError::Unterminated) => {
            return Ok(Err(ParseFault::UnterminatedFrontmatter))
        }
    };
    let Some(fm) = split.frontmatter_text() else {
        return Ok(Ok(Parsed {
            split,
            yaml: None,
            duplicate_key: false,
        }));
    };
    match yaml::parse(fm) {
        Ok(y) => Ok(Ok(Parsed {
            split,
            yaml: Some(y),
            duplicate_key: false,
        })),
        Err(e @ (YamlError::Limit(_) | YamlError::Graph(_))) => Err(e),
        Err(YamlError::DuplicateKey | YamlError::Invalid(_)) => {
            Ok(Err(ParseFault::InvalidFrontmatter))
        }
    }
}

/// Parses every concept and reserved document of `capture` (spec/store.md §3.4).
///
/// A document whose digest [`crate::okf::memo`] knows to be fault-free is not parsed now
/// (its [`Doc::parsed`] parses on first use). The others are parsed here, on up to two
/// threads, kept, and their digests remembered as clean when no document of the bundle faults.
///
/// # Errors
/// [`BundleFault`] for the first (in path order) document with a YAML limit or graph fault.
pub fn parse_bundle(capture: &Capture) -> Result<Bundle<'_>, BundleFault> {
    parse_bundle_visiting::<()>(capture, None).map(|(b, _)| b)
}

/// What happened to one document parsed during the capture.
enum Cold<'a, T> {
    Fault(YamlError),
    Kept(Result<Parsed<'a>, ParseFault>),
    Visited(T),
}

/// Like [`parse_bundle`], but with `visit`, each document parsed now is handed to `visit`
/// while its parse is at hand and the parse is then dropped (the document stays lazy), so a
/// caller that needs one pass over every document holds at most two parses at a time. Returns
/// the bundle and `(index in bundle.docs, visit result)` for every visited document.
///
/// # Errors
/// As [`parse_bundle`].
#[allow(clippy::type_complexity)]
pub fn parse_bundle_visiting<'a, T: Send>(
    capture: &'a Capture,
    visit: Option<&(dyn Fn(&Doc<'a>) -> T + Sync)>,
) -> Result<(Bundle<'a>, Vec<(usize, T)>), BundleFault> {
    let docs_files: Vec<(&CapturedFile, DocClass)> = capture
        .files
        .iter()
        .filter_map(|file| {
            let class = classify(&file.path);
            matches!(class, DocClass::Concept(_) | DocClass::Reserved).then_some((file, class))
        })
        .collect();
    let digests: Vec<&[u8; 32]> = docs_files.iter().map(|(f, _)| &f.digest).collect();
    let known = memo::clean_flags(&digests);
    let todo: Vec<&(&CapturedFile, DocClass)> = docs_files
        .iter()
        .zip(&known)
        .filter(|(_, k)| !**k)
        .map(|(d, _)| d)
        .collect();
    let fresh = crate::okf::par::map(&todo, |(file, class)| match parse_document(file.bytes()) {
        Err(e) => Cold::Fault(e),
        Ok(p) => match visit {
            None => Cold::Kept(p),
            Some(v) => Cold::Visited(v(&Doc::new(file, class.clone(), p))),
        },
    });
    let mut fresh = fresh.into_iter();
    let mut docs = Vec::with_capacity(docs_files.len());
    let mut visited = Vec::new();
    let mut clean = Vec::new();
    for ((file, class), known) in docs_files.into_iter().zip(known) {
        if known {
            docs.push(Doc::lazy(file, class));
            continue;
        }
        match fresh.next() {
            Some(Cold::Fault(YamlError::Limit(_))) => {
                return Err(BundleFault::Limit {
                    path: file.path.clone(),
                })
            }
            Some(Cold::Fault(_)) => {
                return Err(BundleFault::Graph {
                    path: file.path.clone(),
                })
            }
            Some(Cold::Kept(parsed)) => docs.push(Doc::new(file, class, parsed)),
            Some(Cold::Visited(t)) => {
                visited.push((docs.len(), t));
                docs.push(Doc::lazy(file, class));
            }
            None => docs.push(Doc::lazy(file, class)),
        }
        // Facts parsed from a spilled file's (absent) bytes are wrong: never remembered (the
        // capture is missed and the caller starts over, docs/store.md §3.2).
        if file.is_resident() {
            clean.push(file.digest);
        }
    }
    memo::mark_clean(&clean);
    Ok((Bundle { capture, docs }, visited))
}

impl<'a> Bundle<'a> {
    /// Concept documents in ID order (path order equals ID order for concepts).
    pub fn concepts(&self) -> impl Iterator<Item = (&str, &Doc<'a>)> {
        self.docs.iter().filter_map(|d| match &d.class {
            DocClass::Concept(id) => Some((id.as_str(), d)),
            _ => None,
        })
    }

    /// The document at `path`, if it is a concept or reserved document.
    #[must_use]
    pub fn doc(&self, path: &str) -> Option<&Doc<'a>> {
        self.docs
            .binary_search_by(|d| d.file.path.as_bytes().cmp(path.as_bytes()))
            .ok()
            .map(|i| &self.docs[i])
    }
}
