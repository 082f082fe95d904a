//! The temporal fields of one concept (spec/temporal.md §3) and the rewrite of their scalar
//! tokens by the presentation rules of §9. Pure functions of one frontmatter text.

use crate::okf::temporal::{parse_date, parse_offset_datetime};
use crate::okf::yaml::{self, Node, NodeKind, ScalarKind, Style, Value, Yaml};
use crate::plan::edit::{apply_edits, double_quote, verify, Edit};
use std::ops::Range;

/// The class of a present temporal value (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueClass {
    /// An exact calendar date (§2.3): needs a mapping.
    Legacy,
    /// An offset datetime (§2.1): already upgraded, ignored.
    Instant,
}

/// One present temporal value of a concept, in observation order.
#[derive(Debug, Clone)]
pub struct Occurrence<'y> {
    /// The §3 path (`stale_after`, `sources[0].usage_window.to`, …).
    pub path: String,
    /// The decoded scalar text.
    pub text: String,
    pub class: ValueClass,
    /// The value node as written (an alias is not followed).
    pub node: &'y Node,
    /// Whether a collection on the way to the value is an alias (`usage_window: *w`).
    pub via_alias: bool,
}

/// Why the fields of a concept cannot be classified (§3, §7): the whole preview fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// `temporal_field_malformed` or `temporal_value_unsupported`.
    pub code: &'static str,
    /// Names the §3 path; never the document text.
    pub message: String,
}

fn malformed(what: &str) -> FieldError {
    FieldError {
        code: "temporal_field_malformed",
        message: format!("{what} has an unsupported shape"),
    }
}

/// The raw value of `key` in mapping `map` (aliases of `map` followed, the value's not).
fn entry<'y>(map: &'y Node, key: &str) -> Option<&'y Node> {
    map.entries()?
        .iter()
        .find(|(k, _)| k.scalar_text() == Some(key))
        .map(|(_, v)| v)
}

/// A present (non-null) value.
fn present<'y>(map: &'y Node, key: &str) -> Option<&'y Node> {
    entry(map, key).filter(|v| !v.is_null())
}

fn scalar<'y>(
    node: &'y Node,
    path: String,
    via_alias: bool,
    out: &mut Vec<Occurrence<'y>>,
) -> Result<(), FieldError> {
    let Some(text) = node.deref_alias().scalar_text() else {
        return Err(malformed(&path));
    };
    let class = if parse_date(text).is_some() {
        ValueClass::Legacy
    } else if parse_offset_datetime(text).is_some() {
        ValueClass::Instant
    } else {
        return Err(FieldError {
            code: "temporal_value_unsupported",
            message: format!("{path} is neither a calendar date nor an offset datetime"),
        });
    };
    out.push(Occurrence {
        path,
        text: text.to_owned(),
        class,
        node,
        via_alias,
    });
    Ok(())
}

fn window<'y>(
    node: &'y Node,
    prefix: &str,
    via_alias: bool,
    out: &mut Vec<Occurrence<'y>>,
) -> Result<(), FieldError> {
    let via_alias = via_alias || matches!(node.kind, NodeKind::Alias { .. });
    if node.entries().is_none() {
        return Err(malformed(prefix));
    }
    for end in ["from", "to"] {
        if let Some(v) = present(node, end) {
            scalar(v, format!("{prefix}.{end}"), via_alias, out)?;
        }
    }
    Ok(())
}

/// Every present temporal value of the frontmatter `root`, in observation order (§3:
/// `stale_after`, `usage_window.from`, `usage_window.to`, then per source `last_modified`,
/// `usage_window.from`, `usage_window.to`). YAML null counts as absent.
///
/// # Errors
/// [`FieldError`] for a malformed field or an unsupported value.
pub fn occurrences(root: Option<&Node>) -> Result<Vec<Occurrence<'_>>, FieldError> {
    let mut out = Vec::new();
    let Some(root) = root else {
        return Ok(out);
    };
    if let Some(v) = present(root, "stale_after") {
        scalar(v, "stale_after".to_owned(), false, &mut out)?;
    }
    if let Some(w) = present(root, "usage_window") {
        window(w, "usage_window", false, &mut out)?;
    }
    if let Some(s) = present(root, "sources") {
        let via = matches!(s.kind, NodeKind::Alias { .. });
        let Some(items) = s.items() else {
            return Err(malformed("sources"));
        };
        for (i, item) in items.iter().enumerate() {
            let via = via || matches!(item.kind, NodeKind::Alias { .. });
            if item.entries().is_none() {
                return Err(malformed(&format!("sources[{i}]")));
            }
            if let Some(v) = present(item, "last_modified") {
                scalar(v, format!("sources[{i}].last_modified"), via, &mut out)?;
            }
            if let Some(w) = present(item, "usage_window") {
                window(w, &format!("sources[{i}].usage_window"), via, &mut out)?;
            }
        }
    }
    Ok(out)
}

/// Why a rewrite failed closed (§4 rule 4, §9 rule 4): the file stays untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteError {
    /// `temporal_presentation_unsupported`, `temporal_source_changed`,
    /// `temporal_mapping_stray`, `temporal_field_malformed` or `temporal_value_unsupported`.
    pub code: &'static str,
    /// Names the §3 path; never the document text.
    pub message: String,
}

impl From<FieldError> for RewriteError {
    fn from(e: FieldError) -> Self {
        Self {
            code: e.code,
            message: e.message,
        }
    }
}

fn unsupported(path: &str, what: &str) -> RewriteError {
    RewriteError {
        code: "temporal_presentation_unsupported",
        message: format!("{path}: {what}; rewrite this value by hand"),
    }
}

/// One planned rewrite: the field path, the observed legacy date and the instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rewrite<'r> {
    pub path: &'r str,
    pub from: &'r str,
    pub to: &'r str,
}

/// The token edit of one occurrence by the presentation rules (§9).
fn token_edit(text: &str, o: &Occurrence<'_>, to: &str) -> Result<Edit, RewriteError> {
    let n = o.node;
    if o.via_alias || matches!(n.kind, NodeKind::Alias { .. }) {
        return Err(unsupported(
            &o.path,
            "the value is reached through an alias",
        ));
    }
    if n.anchor.is_some() {
        return Err(unsupported(&o.path, "the value carries an anchor"));
    }
    let NodeKind::Scalar { style, .. } = &n.kind else {
        return Err(unsupported(&o.path, "the value is not a scalar"));
    };
    let span: &str = text
        .get(n.span.clone())
        .ok_or_else(|| unsupported(&o.path, "the value's span is not readable"))?;
    match (style, n.tag.as_deref()) {
        (Style::Plain, None) => {
            if span != o.text {
                return Err(unsupported(
                    &o.path,
                    "the plain scalar spans several tokens",
                ));
            }
            Ok(Edit {
                range: n.span.clone(),
                replacement: to.to_owned(),
            })
        }
        (Style::Plain, Some(tag @ ("!!timestamp" | "!!str"))) => {
            let rest = span.strip_prefix(tag).ok_or_else(|| {
                unsupported(&o.path, "the tag is not spelled !!timestamp or !!str")
            })?;
            let value = rest.trim_start_matches([' ', '\t']);
            if value.len() == rest.len() || value != o.text {
                return Err(unsupported(
                    &o.path,
                    "the tagged value is not one plain token",
                ));
            }
            let start = n.span.end - value.len();
            Ok(Edit {
                range: start..n.span.end,
                replacement: to.to_owned(),
            })
        }
        (Style::SingleQuoted, None) if span.len() >= 2 && span.starts_with('\'') => Ok(Edit {
            range: n.span.clone(),
            replacement: format!("'{}'", to.replace('\'', "''")),
        }),
        (Style::DoubleQuoted, None) if span.len() >= 2 && span.starts_with('"') => Ok(Edit {
            range: n.span.clone(),
            replacement: double_quote(to),
        }),
        (Style::SingleQuoted | Style::DoubleQuoted, Some(_)) => Err(unsupported(
            &o.path,
            "a tagged and quoted value is not rewritten",
        )),
        (Style::Literal | Style::Folded, _) => {
            Err(unsupported(&o.path, "a block scalar is not rewritten"))
        }
        _ => Err(unsupported(&o.path, "this tag or style is not rewritten")),
    }
}

/// The segments of a §3 path in the value model: keys and source indices.
enum Seg<'p> {
    Key(&'p str),
    Index(usize),
}

fn segments(path: &str) -> Option<Vec<Seg<'_>>> {
    if let Some(rest) = path.strip_prefix("sources[") {
        let (digits, field) = rest.split_once("].")?;
        let mut v = vec![Seg::Key("sources"), Seg::Index(digits.parse().ok()?)];
        v.extend(field.split('.').map(Seg::Key));
        return Some(v);
    }
    Some(path.split('.').map(Seg::Key).collect())
}

fn model_set(root: &mut Value, path: &str, to: &str) -> Option<()> {
    let mut v = root;
    for seg in segments(path)? {
        v = match (seg, v) {
            (Seg::Key(k), m @ Value::Map(_)) => m.get_mut(k)?,
            (Seg::Index(i), Value::Seq(items)) => items.get_mut(i)?,
            _ => return None,
        };
    }
    *v = Value::Scalar {
        text: to.to_owned(),
        kind: ScalarKind::Str,
    };
    Some(())
}

/// Rewrites the frontmatter `text` (between the fences): each rewrite's scalar token is
/// replaced by its instant under the presentation rules (§9), everything else stays
/// byte-identical. Then the post-check: the edits touch only the token ranges, the result
/// re-parses (event parser) to the old value with exactly these values replaced, and every
/// rewritten value keeps its style and tag and reads back as its instant.
///
/// # Errors
/// [`RewriteError`]: `temporal_source_changed` when a value no longer equals `from` (or is
/// no longer a legacy date), `temporal_mapping_stray` for a path that holds no value,
/// `temporal_presentation_unsupported` for a presentation of §9 rule 4 or a failed
/// post-check, the classification errors of [`occurrences`].
pub fn rewrite_frontmatter(text: &str, rewrites: &[Rewrite<'_>]) -> Result<String, RewriteError> {
    let parsed: Yaml = yaml::parse(text).map_err(|_| RewriteError {
        code: "temporal_field_malformed",
        message: "the frontmatter does not parse".to_owned(),
    })?;
    let occ = occurrences(parsed.root.as_ref())?;
    let mut edits: Vec<Edit> = Vec::with_capacity(rewrites.len());
    let mut expected = parsed.value();
    for r in rewrites {
        let Some(o) = occ.iter().find(|o| o.path == r.path) else {
            return Err(RewriteError {
                code: "temporal_mapping_stray",
                message: format!("{}: the field holds no legacy date", r.path),
            });
        };
        if o.class != ValueClass::Legacy {
            return Err(RewriteError {
                code: "temporal_mapping_stray",
                message: format!("{}: the field already holds an instant", r.path),
            });
        }
        if o.text != r.from {
            return Err(RewriteError {
                code: "temporal_source_changed",
                message: format!(
                    "{}: the observed date differs from the mapping's from",
                    r.path
                ),
            });
        }
        edits.push(token_edit(text, o, r.to)?);
        model_set(&mut expected, r.path, r.to)
            .ok_or_else(|| unsupported(r.path, "the value model has no such field"))?;
    }
    let out =
        apply_edits(text, &edits).map_err(|_| unsupported("frontmatter", "the edits overlap"))?;
    let post = verify(text, &edits, &out, &expected)
        .map_err(|_| unsupported("frontmatter", "the rewritten frontmatter failed its check"))?;
    // Presentation kept: same style and tag, and the value now reads as the instant.
    let after = occurrences(post.root.as_ref())
        .map_err(|_| unsupported("frontmatter", "the rewritten fields do not classify"))?;
    for r in rewrites {
        let (Some(a), Some(b)) = (
            occ.iter().find(|o| o.path == r.path),
            after.iter().find(|o| o.path == r.path),
        ) else {
            return Err(unsupported(r.path, "the rewritten field is gone"));
        };
        let style = |n: &Node| match &n.kind {
            NodeKind::Scalar { style, .. } => Some(*style),
            _ => None,
        };
        if b.class != ValueClass::Instant
            || b.text != r.to
            || style(a.node) != style(b.node)
            || a.node.tag != b.node.tag
        {
            return Err(unsupported(r.path, "the rewrite changed the presentation"));
        }
    }
    Ok(out)
}

/// [`rewrite_frontmatter`] on a whole document's bytes: only the frontmatter range changes;
/// the fences, the body and every other byte (CRLF, BOM) stay as they are.
///
/// # Errors
/// As [`rewrite_frontmatter`]; `temporal_field_malformed` for a document without a readable
/// frontmatter.
pub fn rewrite_document(bytes: &[u8], rewrites: &[Rewrite<'_>]) -> Result<Vec<u8>, RewriteError> {
    let no_fm = || RewriteError {
        code: "temporal_field_malformed",
        message: "the document has no readable frontmatter".to_owned(),
    };
    let split = crate::okf::document::split(bytes).map_err(|_| no_fm())?;
    let range: Range<usize> = split.frontmatter.clone().ok_or_else(no_fm)?;
    let fm = rewrite_frontmatter(&split.text[range.clone()], rewrites)?;
    let mut out = Vec::with_capacity(bytes.len() + 32 * rewrites.len());
    out.extend_from_slice(&bytes[..range.start]);
    out.extend_from_slice(fm.as_bytes());
    out.extend_from_slice(&bytes[range.end..]);
    Ok(out)
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
