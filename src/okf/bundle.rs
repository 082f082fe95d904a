//! A capture parsed into OKF documents (spec/store.md §3.4).
//!
//! Every concept and reserved document is split and its frontmatter parsed. YAML resource
//! limits and graph faults fail the whole bundle; ordinary parse problems are recorded per
//! document for each tool to handle.

use crate::okf::document::{self, Split};
use crate::okf::grammar::{classify, DocClass};
use crate::okf::yaml::{self, Node, Yaml, YamlError};
use crate::store::capture::{Capture, CapturedFile};

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
#[derive(Debug, Clone)]
pub struct Doc<'a> {
    pub file: &'a CapturedFile,
    pub class: DocClass,
    pub parsed: Result<Parsed<'a>, ParseFault>,
}

/// A fault that fails every tool (spec/store.md §3.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleFault {
    /// A YAML resource limit in `path` → `resource_limit`.
    Limit { path: String },
    /// A YAML graph fault in `path` → `invalid_yaml_graph`.
    Graph { path: String },
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

/// Parses every concept and reserved document of `capture`.
///
/// # Errors
/// [`BundleFault`] for the first (in path order) document with a YAML limit or graph fault.
pub fn parse_bundle(capture: &Capture) -> Result<Bundle<'_>, BundleFault> {
    let mut docs = Vec::new();
    for file in &capture.files {
        let class = classify(&file.path);
        if !matches!(class, DocClass::Concept(_) | DocClass::Reserved) {
            continue;
        }
        let parsed = match parse_document(&file.bytes) {
            Ok(p) => p,
            Err(YamlError::Limit(_)) => {
                return Err(BundleFault::Limit {
                    path: file.path.clone(),
                })
            }
            Err(_) => {
                return Err(BundleFault::Graph {
                    path: file.path.clone(),
                })
            }
        };
        docs.push(Doc {
            file,
            class,
            parsed,
        });
    }
    Ok(Bundle { capture, docs })
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
        self.docs.iter().find(|d| d.file.path == path)
    }
}
