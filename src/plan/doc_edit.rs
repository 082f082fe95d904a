//! A document opened for editing with the lossless editor ([`crate::plan::edit`]) and the
//! fail-closed edit helpers every frontmatter-editing workflow shares (spec/concept-patch.md
//! §4.5): the concept patch edits whole documents with them, the migration reconciles a
//! computation's frontmatter with them ([`crate::plan::computation`]), so both produce the
//! same bytes. Pure.

use crate::okf::document;
use crate::okf::yaml::{Node, NodeKind, Style};
use crate::plan::edit::{self, EditError, Frontmatter, NewValue, Scalar, Seg};

/// A rejection raised by one operation: code and the document it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reject {
    /// The rejection code.
    pub(crate) code: &'static str,
    /// The bundle-relative path of the document.
    pub(crate) file: String,
    /// One sentence.
    pub(crate) message: String,
}

impl Reject {
    pub(crate) fn new(code: &'static str, file: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            file: file.to_owned(),
            message: message.into(),
        }
    }
    pub(crate) fn edit(e: &EditError, file: &str) -> Self {
        Self::new(e.code(), file, e.to_string())
    }
}

pub(crate) type OpResult<T> = Result<T, Reject>;

/// A document split for editing: prefix (BOM + opening fence), frontmatter, suffix (closing
/// fence + body).
pub(crate) struct DocEdit {
    /// Bundle-relative path.
    pub(crate) path: String,
    /// The bytes before the frontmatter: BOM and opening fence.
    pub(crate) prefix: String,
    /// The frontmatter under edit.
    pub(crate) fm: Frontmatter,
    /// The closing fence.
    pub(crate) closing: String,
    /// The body after the closing fence.
    pub(crate) body: String,
    /// Whether the document uses CRLF line breaks.
    pub(crate) crlf: bool,
}

impl DocEdit {
    /// The document's text: prefix, frontmatter, closing fence, body.
    pub(crate) fn text(&self) -> String {
        format!(
            "{}{}{}{}",
            self.prefix,
            self.fm.text(),
            self.closing,
            self.body
        )
    }
}

/// Splits `text` (the document at `path`) for editing; `None` without a frontmatter.
///
/// # Errors
/// `invalid_presentation` when the document cannot be split, an editor code when its
/// frontmatter cannot be parsed for editing.
pub(crate) fn open_doc(text: &str, path: &str) -> OpResult<Option<DocEdit>> {
    let split = document::split(text.as_bytes()).map_err(|_| {
        Reject::new(
            "invalid_presentation",
            path,
            "the document cannot be parsed",
        )
    })?;
    let Some(fm_range) = split.frontmatter.clone() else {
        return Ok(None);
    };
    let fm = Frontmatter::parse(&text[fm_range.clone()], split.crlf)
        .map_err(|e| Reject::edit(&e, path))?;
    Ok(Some(DocEdit {
        path: path.to_owned(),
        prefix: text[..fm_range.start].to_owned(),
        fm,
        closing: text[fm_range.end..split.body.start].to_owned(),
        body: text[split.body.clone()].to_owned(),
        crlf: split.crlf,
    }))
}

/// The root mapping of a document under edit must be a plain block or flow mapping without a
/// merge key and without properties on itself (§4.5).
pub(crate) fn check_root(doc: &DocEdit) -> OpResult<()> {
    if let Some(root) = doc.fm.yaml().root.as_ref() {
        if !matches!(root.kind, NodeKind::Mapping { .. }) {
            return Err(Reject::new(
                "invalid_presentation",
                &doc.path,
                "the frontmatter is not a mapping",
            ));
        }
        if root.has_merge_key() || root.anchor.is_some() || root.tag.is_some() {
            return Err(Reject::new(
                "ambiguous_presentation",
                &doc.path,
                "the frontmatter uses a merge key, anchor or tag on its root mapping",
            ));
        }
    }
    Ok(())
}

/// The raw (alias not followed) value of `key` in the mapping `map`.
pub(crate) fn raw_get<'n>(map: &'n Node, key: &str) -> Option<&'n Node> {
    match &map.kind {
        NodeKind::Mapping { entries, .. } => entries
            .iter()
            .find(|(k, _)| k.scalar_text() == Some(key))
            .map(|(_, v)| v),
        _ => None,
    }
}

pub(crate) fn root_get<'d>(doc: &'d DocEdit, key: &str) -> Option<&'d Node> {
    doc.fm.yaml().root.as_ref().and_then(|r| raw_get(r, key))
}

/// Fail closed on anchors, aliases, tags and merge keys on or inside a touched node (§4.5).
pub(crate) fn check_touched(node: &Node, file: &str) -> OpResult<()> {
    if node.has_props_inside() || has_merge_anywhere(node) {
        return Err(Reject::new(
            "ambiguous_presentation",
            file,
            "an anchor, alias, tag or merge key on a node the patch must edit",
        ));
    }
    Ok(())
}

/// [`check_touched`], then `invalid_presentation` (`what`) unless `node` is a mapping
/// (spec/concept-patch.md §4.5: a collection of the wrong kind).
pub(crate) fn require_mapping(node: &Node, file: &str, what: &'static str) -> OpResult<()> {
    check_touched(node, file)?;
    if matches!(node.kind, NodeKind::Mapping { .. }) {
        Ok(())
    } else {
        Err(Reject::new("invalid_presentation", file, what))
    }
}

pub(crate) fn has_merge_anywhere(node: &Node) -> bool {
    if node.has_merge_key() {
        return true;
    }
    match &node.kind {
        NodeKind::Mapping { entries, .. } => entries.iter().any(|(_, v)| has_merge_anywhere(v)),
        NodeKind::Sequence { items, .. } => items.iter().any(has_merge_anywhere),
        _ => false,
    }
}

pub(crate) fn is_null_node(node: &Node) -> bool {
    matches!(
        &node.kind,
        NodeKind::Scalar {
            style: Style::Plain,
            ..
        }
    ) && node.is_null()
}

/// Sets a scalar unless the existing scalar already holds exactly that value.
pub(crate) fn set_scalar(
    doc: &mut DocEdit,
    path: &[Seg<'_>],
    key: &str,
    value: Scalar,
) -> OpResult<()> {
    let existing = node_at(doc, path).and_then(|m| raw_get(m, key));
    if let Some(node) = existing {
        check_touched(node, &doc.path)?;
        let same = match (&value, &node.kind) {
            (Scalar::Str(s), NodeKind::Scalar { .. }) => node.as_str() == Some(s.as_str()),
            (Scalar::Plain(s), NodeKind::Scalar { text, style }) => {
                *style == Style::Plain && text == s
                    || node.as_str() == Some(s.as_str()) && edit::is_plain_safe(s, false)
            }
            (Scalar::Quoted(s), NodeKind::Scalar { text, style }) => {
                *style == Style::DoubleQuoted && text == s
            }
            _ => false,
        };
        if same {
            return Ok(());
        }
    }
    doc.fm
        .set(path, key, &NewValue::Scalar(value))
        .map(|_| ())
        .map_err(|e| Reject::edit(&e, &doc.path))
}

pub(crate) fn set_value(
    doc: &mut DocEdit,
    path: &[Seg<'_>],
    key: &str,
    value: &NewValue,
) -> OpResult<()> {
    doc.fm
        .set(path, key, value)
        .map(|_| ())
        .map_err(|e| Reject::edit(&e, &doc.path))
}

pub(crate) fn remove_key(doc: &mut DocEdit, path: &[Seg<'_>], key: &str) -> OpResult<()> {
    if node_at(doc, path).and_then(|m| raw_get(m, key)).is_none() {
        return Ok(());
    }
    doc.fm
        .remove(path, key)
        .map(|_| ())
        .map_err(|e| Reject::edit(&e, &doc.path))
}

/// The raw node at `path` from the root mapping.
pub(crate) fn node_at<'d>(doc: &'d DocEdit, path: &[Seg<'_>]) -> Option<&'d Node> {
    let mut node = doc.fm.yaml().root.as_ref()?;
    for seg in path {
        node = match seg {
            Seg::Key(k) => raw_get(node, k)?,
            Seg::Index(i) => match &node.kind {
                NodeKind::Sequence { items, .. } => items.get(*i)?,
                _ => return None,
            },
        };
    }
    Some(node)
}
