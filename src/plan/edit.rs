//! The lossless YAML span editor (spec/concept-patch.md §4, spec/rust-notes.md §4.5).
//!
//! Pure functions over a frontmatter text and its parsed node tree ([`crate::okf::yaml`]). An
//! operation never re-serialises the block: it produces non-overlapping [`Edit`]s — byte
//! ranges of the frontmatter text and their replacement text — that replace a scalar token, the
//! lines of one entry or item, or one whole single-line flow collection, or insert new lines
//! rendered with the fixed templates of §4.3.
//!
//! Two layers:
//! - `plan_*` functions compute the edits of one primitive against a [`EditSource`] and fail closed
//!   (§4.5) without touching anything;
//! - [`Frontmatter`] owns a text and applies primitives one at a time. Each step applies the
//!   edits, re-parses, and runs the mandatory post-check of §4.1 rule 3 ([`verify`]): the new
//!   semantic projection must equal the old one with the operation applied to the value model,
//!   and every byte outside the edited ranges must be unchanged. On any error the
//!   [`Frontmatter`] is left exactly as it was.
//!
//! Errors map to the presentation diagnostics of §4.5 through [`EditError::code`].
//!
//! # Limitations
//! - Removing the only entry of a nested block mapping, or the only item of a block sequence,
//!   is refused (the collection would turn into a null); replace the parent value instead
//!   (e.g. [`Frontmatter::set`] with an empty flow collection).
//! - Removing the first entry of a mapping that starts on a sequence dash line (`- id: a`) is
//!   refused: the dash would go with it.
//! - Replacing a value that is (or becomes) a block collection rewrites the lines of its entry;
//!   a comment inside those lines is refused rather than dropped.

use crate::okf::yaml::{
    self, resolve_plain, Node, NodeKind, Resolved, Style, Value, Yaml, YamlError,
};
use std::ops::Range;

/// One splice: replace `range` (bytes of the frontmatter text) with `replacement`. An empty
/// range is an insertion. Edits of one operation never overlap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub replacement: String,
}

/// Why an edit was refused (spec/concept-patch.md §4.5). Messages name no document text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// An anchor, alias, merge key, explicit tag or duplicate key on or inside a touched node
    /// → `ambiguous_presentation`.
    #[error("{0}")]
    Ambiguous(&'static str),
    /// A presentation the editor cannot change losslessly (multi-line or opaque flow
    /// collection, literal/folded scalar to replace, wrong collection kind, failed post-check)
    /// → `invalid_presentation`.
    #[error("{0}")]
    Invalid(&'static str),
}

impl EditError {
    /// The diagnostic code of spec/concept-patch.md §4.5.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            EditError::Ambiguous(_) => "ambiguous_presentation",
            EditError::Invalid(_) => "invalid_presentation",
        }
    }
}

/// One step of a path from the root mapping to the collection an operation edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'a> {
    /// The value of a string key in a mapping.
    Key(&'a str),
    /// The item at a 0-based index of a sequence.
    Index(usize),
}

/// A new scalar and how it is written (spec/concept-patch.md §4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    /// A string: plain when plain-safe ([`is_plain_safe`]), else double-quoted.
    Str(String),
    /// Written plain, verbatim (dates, datetimes, integers, booleans). Its value is its
    /// core-schema resolution. Refused (`invalid_presentation`) when the text is not a single
    /// plain token.
    Plain(String),
    /// A string always double-quoted (`okf_version`).
    Quoted(String),
    /// A string written single-quoted (`'` doubled), to keep an existing single-quoted
    /// scalar's style (spec/concept-patch.md §11.2 rule 2). Refused (`invalid_presentation`)
    /// when the text holds a character single quotes cannot carry (a line break or another
    /// control character, U+2028, U+2029, U+FEFF).
    SingleQuoted(String),
}

/// A new value (spec/concept-patch.md §4.3 templates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewValue {
    Scalar(Scalar),
    /// `{ k: v, … }` on one line; `{}` when empty.
    FlowMap(Vec<(String, NewValue)>),
    /// `[a, b]` on one line; `[]` when empty.
    FlowSeq(Vec<NewValue>),
    /// A block mapping, keys indented 2 columns further than the owning key.
    BlockMap(Vec<(String, NewValue)>),
    /// A block sequence, dashes 2 columns further than the owning key; mapping items use the
    /// dash-alone form (`-` alone on its line, keys 2 columns further).
    BlockSeq(Vec<NewValue>),
}

impl NewValue {
    /// A string scalar (plain when plain-safe).
    #[must_use]
    pub fn str(s: &str) -> NewValue {
        NewValue::Scalar(Scalar::Str(s.to_owned()))
    }

    /// A verbatim plain scalar (dates, numbers, booleans).
    #[must_use]
    pub fn plain(s: &str) -> NewValue {
        NewValue::Scalar(Scalar::Plain(s.to_owned()))
    }

    /// The same value with every block collection turned into its flow form, for items
    /// written inside a flow collection (spec/concept-patch.md §4.4 rule 2).
    #[must_use]
    pub fn to_flow(&self) -> NewValue {
        match self {
            NewValue::Scalar(s) => NewValue::Scalar(s.clone()),
            NewValue::FlowMap(e) | NewValue::BlockMap(e) => {
                NewValue::FlowMap(e.iter().map(|(k, v)| (k.clone(), v.to_flow())).collect())
            }
            NewValue::FlowSeq(i) | NewValue::BlockSeq(i) => {
                NewValue::FlowSeq(i.iter().map(NewValue::to_flow).collect())
            }
        }
    }

    /// The value this renders to, for the post-check's value model.
    #[must_use]
    pub fn to_value(&self) -> Value {
        match self {
            NewValue::Scalar(Scalar::Str(s) | Scalar::Quoted(s) | Scalar::SingleQuoted(s)) => {
                Value::str(s)
            }
            NewValue::Scalar(Scalar::Plain(s)) => Value::plain(s),
            NewValue::FlowMap(e) | NewValue::BlockMap(e) => Value::Map(
                e.iter()
                    .map(|(k, v)| (Value::str(k), v.to_value()))
                    .collect(),
            ),
            NewValue::FlowSeq(i) | NewValue::BlockSeq(i) => {
                Value::Seq(i.iter().map(NewValue::to_value).collect())
            }
        }
    }
}

/// A frontmatter text with its tree and newline style, the input of every `plan_*` function.
#[derive(Debug, Clone, Copy)]
pub struct EditSource<'a> {
    pub text: &'a str,
    pub yaml: &'a Yaml,
    /// `"\r\n"` for a CRLF document (spec/surface.md §13.1 rule 4), else `"\n"`.
    pub nl: &'static str,
}

// ---------------------------------------------------------------------------------------------
// Scalar rendering (§4.3)
// ---------------------------------------------------------------------------------------------

/// Whether `s` may be written as a plain scalar (spec/concept-patch.md §4.3): non-empty; no
/// leading/trailing whitespace; no indicator first character; no `: `, ` #`, control
/// character or line break; no trailing `:`; and not read back as a non-string under YAML 1.2
/// or 1.1 (null, booleans incl. `yes`/`on`/`y`, integers incl. `0012`/`0x1F`/`1_000`/`1:30`,
/// floats incl. `1.10`/`.inf`/`.nan`, dates and timestamps, `<<`, `=`). In a flow collection
/// (`flow`), `,` `[` `]` `{` `}` anywhere also force quoting. Stricter than required
/// where cheap: quoting is always correct.
#[must_use]
pub fn is_plain_safe(s: &str, flow: bool) -> bool {
    is_plain_token(s, flow) && !reads_as_non_string(s)
}

/// The syntactic half of [`is_plain_safe`]: `s` reads back as exactly this plain text.
fn is_plain_token(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let last = s.chars().next_back().unwrap_or(first);
    if first.is_whitespace() || last.is_whitespace() || last == ':' {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) || s.starts_with("...") {
        return false;
    }
    if s.contains(": ") || s.contains(" #") {
        return false;
    }
    if s.chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{85}'))
    {
        return false;
    }
    if flow && s.contains([',', '[', ']', '{', '}']) {
        return false;
    }
    true
}

fn reads_as_non_string(s: &str) -> bool {
    if !matches!(resolve_plain(s), Resolved::Str(_)) {
        return true;
    }
    const YAML11: [&str; 11] = [
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "nan",
    ];
    let lower = s.to_ascii_lowercase();
    if YAML11.contains(&lower.as_str()) || s == "<<" || s == "=" {
        return true;
    }
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    if body.starts_with(".inf") || body.starts_with(".Inf") || body.starts_with(".INF") {
        return true;
    }
    // Numbers in any YAML 1.1 / 1.2 spelling (binary, octal, hex, `_` separators,
    // sexagesimal), version-like numbers included.
    let mut chars = body.chars();
    if let Some(c0) = chars.next() {
        if (c0.is_ascii_digit() || c0 == '.')
            && body
                .chars()
                .all(|c| c.is_ascii_hexdigit() || "_:.xXoObB+-".contains(c))
            && body.chars().any(|c| c.is_ascii_digit())
        {
            return true;
        }
    }
    // Dates and timestamps: `YYYY-M-D…`.
    let b = s.as_bytes();
    b.len() >= 6 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5].is_ascii_digit()
}

/// `s` single-quoted (`'` doubled); `None` when `s` holds a control character, U+2028,
/// U+2029 or U+FEFF, which a single-quoted scalar cannot carry unchanged.
#[must_use]
pub fn single_quote(s: &str) -> Option<String> {
    if s.chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}'))
    {
        return None;
    }
    Some(format!("'{}'", s.replace('\'', "''")))
}

/// `s` as a double-quoted scalar: escapes `\\`, `\"`, `\n`, `\t`, `\r`, and `\uXXXX` for other
/// control characters and U+2028, U+2029, U+FEFF (spec/concept-patch.md §4.3).
#[must_use]
pub fn double_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                out.push_str(&format!("\\u{:04X}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key or string scalar: plain when plain-safe, else double-quoted.
fn render_str(s: &str, flow: bool) -> String {
    if is_plain_safe(s, flow) {
        s.to_owned()
    } else {
        double_quote(s)
    }
}

fn render_scalar(s: &Scalar, flow: bool) -> Result<String, EditError> {
    match s {
        Scalar::Str(t) => Ok(render_str(t, flow)),
        Scalar::Quoted(t) => Ok(double_quote(t)),
        Scalar::SingleQuoted(t) => single_quote(t).ok_or(EditError::Invalid(
            "a value single quotes cannot carry replaces a single-quoted scalar",
        )),
        Scalar::Plain(t) => {
            if is_plain_token(t, flow) {
                Ok(t.clone())
            } else {
                Err(EditError::Invalid(
                    "a value meant to be written plain is not a plain scalar",
                ))
            }
        }
    }
}

/// The one-line rendering of a scalar or flow value.
fn render_inline(v: &NewValue, flow: bool) -> Result<String, EditError> {
    match v {
        NewValue::Scalar(s) => render_scalar(s, flow),
        NewValue::FlowMap(entries) => {
            let parts = entries
                .iter()
                .map(|(k, v)| {
                    Ok(format!(
                        "{}: {}",
                        render_str(k, true),
                        render_inline(v, true)?
                    ))
                })
                .collect::<Result<Vec<_>, EditError>>()?;
            Ok(flow_map_text(&parts))
        }
        NewValue::FlowSeq(items) => {
            let parts = items
                .iter()
                .map(|v| render_inline(v, true))
                .collect::<Result<Vec<_>, EditError>>()?;
            Ok(flow_seq_text(&parts))
        }
        NewValue::BlockMap(_) | NewValue::BlockSeq(_) => Err(EditError::Invalid(
            "a block collection cannot be written inside a flow collection",
        )),
    }
}

fn flow_map_text(parts: &[String]) -> String {
    if parts.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{ {} }}", parts.join(", "))
    }
}

fn flow_seq_text(parts: &[String]) -> String {
    format!("[{}]", parts.join(", "))
}

/// Renders `key: value` at column `col`, every line ending in `nl`; `key` is already rendered.
fn render_entry(
    out: &mut String,
    col: usize,
    key: &str,
    v: &NewValue,
    nl: &str,
) -> Result<(), EditError> {
    out.push_str(&" ".repeat(col));
    out.push_str(key);
    out.push(':');
    render_value_after_key(out, col, v, nl)
}

fn render_value_after_key(
    out: &mut String,
    col: usize,
    v: &NewValue,
    nl: &str,
) -> Result<(), EditError> {
    match v {
        NewValue::BlockMap(entries) if !entries.is_empty() => {
            out.push_str(nl);
            for (k, v) in entries {
                render_entry(out, col + 2, &render_str(k, false), v, nl)?;
            }
        }
        NewValue::BlockSeq(items) if !items.is_empty() => {
            out.push_str(nl);
            for item in items {
                render_item(out, col + 2, None, item, nl)?;
            }
        }
        NewValue::BlockMap(_) => {
            out.push_str(" {}");
            out.push_str(nl);
        }
        NewValue::BlockSeq(_) => {
            out.push_str(" []");
            out.push_str(nl);
        }
        v => {
            out.push(' ');
            out.push_str(&render_inline(v, false)?);
            out.push_str(nl);
        }
    }
    Ok(())
}

/// Renders one block-sequence item with its dash at `dash_col`. A mapping item uses the
/// dash-alone form unless `inline_key_col` is given: then its first key sits on the dash line
/// at that column and the other keys align with it (§4.3).
fn render_item(
    out: &mut String,
    dash_col: usize,
    inline_key_col: Option<usize>,
    v: &NewValue,
    nl: &str,
) -> Result<(), EditError> {
    match v {
        NewValue::BlockMap(entries) if !entries.is_empty() => {
            if let Some(kc) = inline_key_col.filter(|kc| *kc > dash_col) {
                let mut body = String::new();
                for (k, v) in entries {
                    render_entry(&mut body, kc, &render_str(k, false), v, nl)?;
                }
                out.push_str(&" ".repeat(dash_col));
                out.push('-');
                out.push_str(&" ".repeat(kc - dash_col - 1));
                out.push_str(&body[kc..]);
            } else {
                out.push_str(&" ".repeat(dash_col));
                out.push('-');
                out.push_str(nl);
                for (k, v) in entries {
                    render_entry(out, dash_col + 2, &render_str(k, false), v, nl)?;
                }
            }
        }
        NewValue::BlockSeq(items) if !items.is_empty() => {
            out.push_str(&" ".repeat(dash_col));
            out.push('-');
            out.push_str(nl);
            for item in items {
                render_item(out, dash_col + 2, None, item, nl)?;
            }
        }
        NewValue::BlockMap(_) => {
            out.push_str(&" ".repeat(dash_col));
            out.push_str("- {}");
            out.push_str(nl);
        }
        NewValue::BlockSeq(_) => {
            out.push_str(&" ".repeat(dash_col));
            out.push_str("- []");
            out.push_str(nl);
        }
        v => {
            out.push_str(&" ".repeat(dash_col));
            out.push_str("- ");
            out.push_str(&render_inline(v, false)?);
            out.push_str(nl);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Text geometry
// ---------------------------------------------------------------------------------------------

fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The offset just after the line break of the line holding `pos` (or the text end).
fn line_after(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1)
}

fn column(text: &str, pos: usize) -> usize {
    pos - line_start(text, pos)
}

/// Whether only spaces precede `pos` on its line.
fn first_on_line(text: &str, pos: usize) -> bool {
    text[line_start(text, pos)..pos].bytes().all(|c| c == b' ')
}

/// An insertion at `pos` (a line start or the text end) of complete lines `lines`.
fn insert_lines(text: &str, pos: usize, lines: String, nl: &str) -> Edit {
    let needs_break = pos == text.len() && !text.is_empty() && !text.ends_with('\n');
    Edit {
        range: pos..pos,
        replacement: if needs_break {
            format!("{nl}{lines}")
        } else {
            lines
        },
    }
}

/// The `-` of a block-sequence item: the first non-blank byte before the item.
fn dash_of(text: &str, item: &Node) -> Result<usize, EditError> {
    let before = text[..item.span.start].trim_end_matches([' ', '\t', '\r', '\n']);
    if before.ends_with('-') {
        Ok(before.len() - 1)
    } else {
        Err(EditError::Invalid(
            "a sequence item has an unexpected layout",
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Checks (§4.4, §4.5)
// ---------------------------------------------------------------------------------------------

const PROPS_ON_PATH: &str = "an anchor, alias or tag on an edited collection";
const PROPS_ON_NODE: &str = "an anchor, alias or tag on or inside an edited node";
const MERGE: &str = "a merge key in an edited mapping";
const WRONG_KIND: &str = "a collection on the edit path is missing or of the wrong kind";
const OPAQUE_FLOW: &str = "partial edit of a flow collection with opaque content";

fn check_container(n: &Node) -> Result<(), EditError> {
    if n.anchor.is_some() || n.tag.is_some() || matches!(n.kind, NodeKind::Alias { .. }) {
        return Err(EditError::Ambiguous(PROPS_ON_PATH));
    }
    if n.has_merge_key() {
        return Err(EditError::Ambiguous(MERGE));
    }
    Ok(())
}

fn check_touched(n: &Node) -> Result<(), EditError> {
    if n.has_props_inside() {
        return Err(EditError::Ambiguous(PROPS_ON_NODE));
    }
    Ok(())
}

/// §4.4 rule 3: a flow collection may be re-rendered only when it lies on one line and holds no
/// comment, anchor, alias or tag.
fn check_flow(src: &EditSource<'_>, n: &Node) -> Result<(), EditError> {
    if src.text[n.span.clone()].contains(['\n', '\r'])
        || src.yaml.has_comment_in(&n.span)
        || n.has_props_inside()
    {
        return Err(EditError::Invalid(OPAQUE_FLOW));
    }
    Ok(())
}

/// Resolves `path` to the collection it names, checking every collection on the way.
/// `Ok(None)`: empty path on an empty document.
fn resolve<'y>(src: &EditSource<'y>, path: &[Seg<'_>]) -> Result<Option<&'y Node>, EditError> {
    let Some(mut node) = src.yaml.root.as_ref() else {
        return if path.is_empty() {
            Ok(None)
        } else {
            Err(EditError::Invalid(WRONG_KIND))
        };
    };
    check_container(node)?;
    for seg in path {
        node = match (seg, &node.kind) {
            (Seg::Key(k), NodeKind::Mapping { entries, .. }) => entries
                .iter()
                .find(|(key, _)| key.scalar_text() == Some(k))
                .map(|(_, v)| v)
                .ok_or(EditError::Invalid(WRONG_KIND))?,
            (Seg::Index(i), NodeKind::Sequence { items, .. }) => {
                items.get(*i).ok_or(EditError::Invalid(WRONG_KIND))?
            }
            _ => return Err(EditError::Invalid(WRONG_KIND)),
        };
        check_container(node)?;
    }
    Ok(Some(node))
}

fn find_entry<'y>(entries: &'y [(Node, Node)], key: &str) -> Option<(usize, &'y Node, &'y Node)> {
    entries
        .iter()
        .enumerate()
        .find(|(_, (k, _))| k.scalar_text() == Some(key))
        .map(|(i, (k, v))| (i, k, v))
}

// ---------------------------------------------------------------------------------------------
// Planning primitives
// ---------------------------------------------------------------------------------------------

/// Sets `key` of the mapping at `path` to `value` (spec/concept-patch.md §4.2 rules 1–2, §4.4).
///
/// - Existing scalar (or flow) value, new scalar or flow value, block mapping: only the value
///   token is replaced; key, spacing and a trailing comment stay.
/// - Existing or new block collection: the entry's lines are re-rendered (key bytes copied).
/// - Absent key in a block mapping: a new entry after the last content line of the mapping, at
///   the column of its keys (comment and blank lines after the last entry stay after it).
/// - Flow mapping: re-rendered on one line, untouched entries copied verbatim, new keys last.
///
/// # Errors
/// [`EditError`] per §4.5: props/merge keys on the path or touched value → `Ambiguous`;
/// literal/folded value, opaque flow mapping, wrong kind → `Invalid`.
pub fn plan_set(
    src: &EditSource<'_>,
    path: &[Seg<'_>],
    key: &str,
    value: &NewValue,
) -> Result<Vec<Edit>, EditError> {
    let text = src.text;
    let Some(map) = resolve(src, path)? else {
        let mut lines = String::new();
        render_entry(&mut lines, 0, &render_str(key, false), value, src.nl)?;
        return Ok(vec![insert_lines(text, text.len(), lines, src.nl)]);
    };
    let NodeKind::Mapping { flow, entries } = &map.kind else {
        return Err(EditError::Invalid(WRONG_KIND));
    };
    let existing = find_entry(entries, key);
    if let Some((_, k, v)) = existing {
        check_touched(k)?;
        check_touched(v)?;
        if let NodeKind::Scalar {
            style: Style::Literal | Style::Folded,
            ..
        } = v.kind
        {
            return Err(EditError::Invalid(
                "a literal or folded block scalar must be replaced",
            ));
        }
    }
    if *flow {
        check_flow(src, map)?;
        let mut parts = Vec::new();
        for (k, v) in entries {
            if k.scalar_text() == Some(key) {
                parts.push(format!(
                    "{}: {}",
                    &text[k.span.clone()],
                    render_inline(value, true)?
                ));
            } else {
                parts.push(verbatim_flow_entry(text, k, v));
            }
        }
        if existing.is_none() {
            parts.push(format!(
                "{}: {}",
                render_str(key, true),
                render_inline(value, true)?
            ));
        }
        return Ok(vec![Edit {
            range: map.span.clone(),
            replacement: flow_map_text(&parts),
        }]);
    }
    let new_is_block = matches!(value, NewValue::BlockMap(e) if !e.is_empty())
        || matches!(value, NewValue::BlockSeq(i) if !i.is_empty());
    match existing {
        Some((_, k, v)) => {
            let old_is_block = !v.is_flow() && !matches!(v.kind, NodeKind::Scalar { .. });
            if !new_is_block && !old_is_block {
                let inline = match value {
                    NewValue::BlockMap(_) | NewValue::BlockSeq(_) => {
                        let mut s = String::new();
                        render_value_after_key(&mut s, 0, value, "")?;
                        s.trim_start().to_owned()
                    }
                    v => render_inline(v, false)?,
                };
                if src.yaml.has_comment_in(&v.span) {
                    return Err(EditError::Invalid("a comment inside a replaced value"));
                }
                let replacement = if v.span.is_empty() {
                    format!(" {inline}")
                } else {
                    inline
                };
                return Ok(vec![Edit {
                    range: v.span.clone(),
                    replacement,
                }]);
            }
            if !first_on_line(text, k.span.start) {
                return Err(EditError::Invalid(
                    "an entry to rewrite shares its line with another token",
                ));
            }
            let start = line_start(text, k.span.start);
            let end = line_after(text, k.span.end.max(v.span.end));
            if src.yaml.has_comment_in(&(start..end)) {
                return Err(EditError::Invalid("a comment inside a replaced value"));
            }
            let mut lines = String::new();
            let key_col = column(text, k.span.start);
            match (&v.kind, value) {
                // A block sequence replaced by a block sequence keeps its dash column
                // (spec/concept-patch.md §11.2 rule 3: "at the existing indentation").
                (NodeKind::Sequence { flow: false, .. }, NewValue::BlockSeq(items))
                    if !items.is_empty() && text[v.span.start..].starts_with('-') =>
                {
                    lines.push_str(&" ".repeat(key_col));
                    lines.push_str(&text[k.span.clone()]);
                    lines.push(':');
                    lines.push_str(src.nl);
                    for item in items {
                        render_item(&mut lines, column(text, v.span.start), None, item, src.nl)?;
                    }
                }
                _ => render_entry(&mut lines, key_col, &text[k.span.clone()], value, src.nl)?,
            }
            // The last line of the old entry may lack a line break (end of text).
            if end == text.len() && !text.ends_with('\n') {
                lines.truncate(lines.len() - src.nl.len());
            }
            Ok(vec![Edit {
                range: start..end,
                replacement: lines,
            }])
        }
        None => {
            let first_key = entries.first().map(|(k, _)| k);
            let col = first_key.map_or(0, |k| column(text, k.span.start));
            let mut lines = String::new();
            render_entry(&mut lines, col, &render_str(key, false), value, src.nl)?;
            let pos = line_after(text, map.span.end);
            Ok(vec![insert_lines(text, pos, lines, src.nl)])
        }
    }
}

fn verbatim_flow_entry(text: &str, k: &Node, v: &Node) -> String {
    if v.span.is_empty() {
        text[k.span.clone()].to_owned()
    } else {
        format!("{}: {}", &text[k.span.clone()], &text[v.span.clone()])
    }
}

/// Removes `key` from the mapping at `path` (§4.2 rule 3): the lines of the entry (key line and
/// value lines, a comment on those lines included); comment lines between entries stay. A flow
/// mapping is re-rendered without it. An absent key yields no edits.
///
/// # Errors
/// As [`plan_set`]; also `Invalid` for the only entry of a nested block mapping and for a key
/// sharing its line with a sequence dash.
pub fn plan_remove(
    src: &EditSource<'_>,
    path: &[Seg<'_>],
    key: &str,
) -> Result<Vec<Edit>, EditError> {
    let text = src.text;
    let Some(map) = resolve(src, path)? else {
        return Ok(Vec::new());
    };
    let NodeKind::Mapping { flow, entries } = &map.kind else {
        return Err(EditError::Invalid(WRONG_KIND));
    };
    let Some((idx, k, v)) = find_entry(entries, key) else {
        return Ok(Vec::new());
    };
    check_touched(k)?;
    check_touched(v)?;
    if *flow {
        check_flow(src, map)?;
        let parts: Vec<String> = entries
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != idx)
            .map(|(_, (k, v))| verbatim_flow_entry(text, k, v))
            .collect();
        return Ok(vec![Edit {
            range: map.span.clone(),
            replacement: flow_map_text(&parts),
        }]);
    }
    if entries.len() == 1 && !path.is_empty() {
        return Err(EditError::Invalid(
            "removing the only entry of a nested block mapping",
        ));
    }
    if !first_on_line(text, k.span.start) {
        return Err(EditError::Invalid(
            "an entry to remove shares its line with another token",
        ));
    }
    let start = line_start(text, k.span.start);
    let end = line_after(text, k.span.end.max(v.span.end));
    Ok(vec![Edit {
        range: start..end,
        replacement: String::new(),
    }])
}

/// Removes item `index` of the sequence at `path` (§4.2 rule 4): the lines of that item. A flow
/// sequence is re-rendered without it.
///
/// # Errors
/// As [`plan_set`]; `Invalid` for an index out of range, the only item of a block sequence, or
/// an item not starting its own line.
pub fn plan_remove_item(
    src: &EditSource<'_>,
    path: &[Seg<'_>],
    index: usize,
) -> Result<Vec<Edit>, EditError> {
    let text = src.text;
    let seq = resolve(src, path)?.ok_or(EditError::Invalid(WRONG_KIND))?;
    let NodeKind::Sequence { flow, items } = &seq.kind else {
        return Err(EditError::Invalid(WRONG_KIND));
    };
    let item = items.get(index).ok_or(EditError::Invalid(WRONG_KIND))?;
    check_touched(item)?;
    if *flow {
        check_flow(src, seq)?;
        let parts: Vec<String> = items
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, n)| text[n.span.clone()].to_owned())
            .collect();
        return Ok(vec![Edit {
            range: seq.span.clone(),
            replacement: flow_seq_text(&parts),
        }]);
    }
    if items.len() == 1 {
        return Err(EditError::Invalid(
            "removing the only item of a block sequence",
        ));
    }
    let dash = dash_of(text, item)?;
    if !first_on_line(text, dash) {
        return Err(EditError::Invalid(
            "an item to remove shares its line with another token",
        ));
    }
    let start = line_start(text, dash);
    let end = line_after(text, item.span.end.max(dash + 1));
    Ok(vec![Edit {
        range: start..end,
        replacement: String::new(),
    }])
}

/// Appends `value` to the sequence at `path` (§4.3 "item appended to an existing block
/// sequence"): dash at the column of the existing dashes, after the last item's last content
/// line; when the last item starts its mapping on the dash line (`- id: a`) a mapping item does
/// too, keys aligned with that item's first key; when the last item is a flow collection
/// (`- { by: a }`) a collection item is written in flow style too (it follows its siblings);
/// otherwise the dash-alone form. A flow sequence is re-rendered with the item last.
///
/// # Errors
/// As [`plan_set`].
pub fn plan_append_item(
    src: &EditSource<'_>,
    path: &[Seg<'_>],
    value: &NewValue,
) -> Result<Vec<Edit>, EditError> {
    let text = src.text;
    let seq = resolve(src, path)?.ok_or(EditError::Invalid(WRONG_KIND))?;
    let NodeKind::Sequence { flow, items } = &seq.kind else {
        return Err(EditError::Invalid(WRONG_KIND));
    };
    if *flow {
        check_flow(src, seq)?;
        let mut parts: Vec<String> = items
            .iter()
            .map(|n| text[n.span.clone()].to_owned())
            .collect();
        // Inside a flow sequence a new item is written in flow style (§4.4 rule 2).
        parts.push(render_inline(&value.to_flow(), true)?);
        return Ok(vec![Edit {
            range: seq.span.clone(),
            replacement: flow_seq_text(&parts),
        }]);
    }
    let last = items.last().ok_or(EditError::Invalid(WRONG_KIND))?;
    let dash = dash_of(text, last)?;
    let dash_col = column(text, dash);
    let inline_key_col = match &last.kind {
        NodeKind::Mapping {
            flow: false,
            entries,
        } => entries.first().and_then(|(k, _)| {
            (line_start(text, k.span.start) == line_start(text, dash))
                .then(|| column(text, k.span.start))
        }),
        _ => None,
    };
    // A new item follows its siblings' style: after a flow collection item (`- { by: a }`)
    // a collection is written as one flow item too.
    let flow_sibling = matches!(
        &last.kind,
        NodeKind::Mapping { flow: true, .. } | NodeKind::Sequence { flow: true, .. }
    );
    let value = if flow_sibling {
        &value.to_flow()
    } else {
        value
    };
    let mut lines = String::new();
    render_item(&mut lines, dash_col, inline_key_col, value, src.nl)?;
    let pos = line_after(text, seq.span.end);
    Ok(vec![insert_lines(text, pos, lines, src.nl)])
}

// ---------------------------------------------------------------------------------------------
// Applying and verifying
// ---------------------------------------------------------------------------------------------

/// Applies `edits` to `text`.
///
/// # Errors
/// `Invalid` when edits overlap, run past the text or split a UTF-8 character.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Result<String, EditError> {
    const BAD: &str = "edits overlap or fall outside the frontmatter";
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for e in sorted {
        if e.range.start < pos
            || e.range.end < e.range.start
            || !text.is_char_boundary(e.range.start)
            || !text.is_char_boundary(e.range.end)
            || e.range.end > text.len()
        {
            return Err(EditError::Invalid(BAD));
        }
        out.push_str(&text[pos..e.range.start]);
        out.push_str(&e.replacement);
        pos = e.range.end;
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

/// The byte half of [`verify`]: every byte of `original` outside the edited ranges appears
/// unchanged, in order, in `new_text`, the replacements in between, and nothing else.
///
/// # Errors
/// `Invalid` (`invalid_presentation`) when it fails.
pub fn verify_bytes(original: &str, edits: &[Edit], new_text: &str) -> Result<(), EditError> {
    const BYTES: &str = "bytes outside the edited spans changed";
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let (o, n) = (original.as_bytes(), new_text.as_bytes());
    let (mut op, mut np) = (0usize, 0usize);
    for e in sorted {
        let gap = o.get(op..e.range.start).ok_or(EditError::Invalid(BYTES))?;
        if n.get(np..np + gap.len()) != Some(gap) {
            return Err(EditError::Invalid(BYTES));
        }
        np += gap.len();
        if n.get(np..np + e.replacement.len()) != Some(e.replacement.as_bytes()) {
            return Err(EditError::Invalid(BYTES));
        }
        np += e.replacement.len();
        op = e.range.end;
    }
    if n.get(np..) != o.get(op..) {
        return Err(EditError::Invalid(BYTES));
    }
    Ok(())
}

const NO_PARSE: &str = "the edited frontmatter does not parse";
const NOT_EXPECTED: &str = "the edited frontmatter does not hold the expected value";

/// The mandatory post-check of spec/concept-patch.md §4.1 rule 3 for `new_text`, the result of
/// `edits` on `original`:
/// - **byte**: every byte of `original` outside the edited ranges appears unchanged, in order,
///   in `new_text`, and nothing else changed length;
/// - **semantic**: `new_text` re-parses and its projection equals `expected`.
///
/// The re-parse goes through [`yaml::parse_full`] (the event parser), never the fast path of
/// [`yaml::parse`], so the check does not depend on the code whose output it checks.
///
/// Returns the re-parsed tree.
///
/// # Errors
/// `Invalid` (`invalid_presentation`) when either check fails.
pub fn verify(
    original: &str,
    edits: &[Edit],
    new_text: &str,
    expected: &Value,
) -> Result<Yaml, EditError> {
    verify_bytes(original, edits, new_text)?;
    let y = yaml::parse_full(new_text).map_err(|_| EditError::Invalid(NO_PARSE))?;
    if y.value() != *expected {
        return Err(EditError::Invalid(NOT_EXPECTED));
    }
    Ok(y)
}

// ---------------------------------------------------------------------------------------------
// Value model operations (the "expected" side of the post-check)
// ---------------------------------------------------------------------------------------------

fn model_at<'v>(root: &'v mut Value, path: &[Seg<'_>]) -> Option<&'v mut Value> {
    let mut v = root;
    for seg in path {
        v = match (seg, v) {
            (Seg::Key(k), m @ Value::Map(_)) => m.get_mut(k)?,
            (Seg::Index(i), Value::Seq(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// The value model after [`plan_set`]: `key` set (or appended) in the mapping at `path`.
pub fn model_set(root: &mut Value, path: &[Seg<'_>], key: &str, value: Value) {
    if let Some(Value::Map(entries)) = model_at(root, path) {
        if let Some((_, v)) = entries.iter_mut().find(|(k, _)| k.key_text() == Some(key)) {
            *v = value;
        } else {
            entries.push((Value::str(key), value));
        }
    }
}

/// The value model after [`plan_remove`].
pub fn model_remove(root: &mut Value, path: &[Seg<'_>], key: &str) {
    if let Some(Value::Map(entries)) = model_at(root, path) {
        entries.retain(|(k, _)| k.key_text() != Some(key));
    }
}

/// The value model after [`plan_remove_item`].
pub fn model_remove_item(root: &mut Value, path: &[Seg<'_>], index: usize) {
    if let Some(Value::Seq(items)) = model_at(root, path) {
        if index < items.len() {
            items.remove(index);
        }
    }
}

/// The value model after [`plan_append_item`].
pub fn model_append_item(root: &mut Value, path: &[Seg<'_>], value: Value) {
    if let Some(Value::Seq(items)) = model_at(root, path) {
        items.push(value);
    }
}

// ---------------------------------------------------------------------------------------------
// Frontmatter: checked, step-by-step editing
// ---------------------------------------------------------------------------------------------

/// A frontmatter text under edit. Every method either applies one primitive and passes the
/// post-check, or returns an error and leaves the text unchanged.
///
/// With [`Frontmatter::defer_full_check`], a step runs the byte check of [`verify`] and
/// compares the projection of the new text's tree ([`yaml::parse`], the tree the next step
/// plans on) with the expected value, and the independent re-parse of [`verify`]
/// ([`yaml::parse_full`]) runs once, on the final text, in [`Frontmatter::check`]: a caller
/// that edits several times pays one full parse instead of one per step, and MUST call
/// `check` before it uses the text.
#[derive(Debug, Clone)]
pub struct Frontmatter {
    text: String,
    yaml: Yaml,
    /// The projection of `yaml`, kept so a step does not recompute it.
    value: Value,
    nl: &'static str,
    /// The full re-parse of each step is left to [`Frontmatter::check`].
    deferred: bool,
    /// A step was applied since the last full re-parse.
    unchecked: bool,
}

impl Frontmatter {
    /// Parses `text` (the bytes between the fences). `crlf`: whether the whole document uses
    /// CRLF ([`crate::okf::document::Split::crlf`]); generated lines then end in `\r\n`.
    ///
    /// # Errors
    /// `Ambiguous` for a duplicate key (spec/concept-patch.md §4.5), `Invalid` for any other
    /// parse failure (§4.5: frontmatter that is not a mapping).
    pub fn parse(text: &str, crlf: bool) -> Result<Frontmatter, EditError> {
        let yaml = yaml::parse(text).map_err(|e| match e {
            YamlError::DuplicateKey => {
                EditError::Ambiguous("a duplicate key in the edited frontmatter")
            }
            _ => EditError::Invalid("the frontmatter is not a parseable mapping"),
        })?;
        let value = yaml.value();
        Ok(Frontmatter {
            text: text.to_owned(),
            yaml,
            value,
            nl: if crlf { "\r\n" } else { "\n" },
            deferred: false,
            unchecked: false,
        })
    }

    /// Leaves the full re-parse of every following step to one [`Frontmatter::check`] (see
    /// the type's docs).
    pub fn defer_full_check(&mut self) {
        self.deferred = true;
    }

    /// The full post-check of the steps since the last one: the text re-parses with
    /// [`yaml::parse_full`] and its projection equals the expected value of the last step
    /// (the projection of the current tree). Immediate without deferred steps.
    ///
    /// # Errors
    /// `Invalid` (`invalid_presentation`) when it fails; the text then MUST NOT be used.
    pub fn check(&mut self) -> Result<(), EditError> {
        if !self.unchecked {
            return Ok(());
        }
        let y = yaml::parse_full(&self.text).map_err(|_| EditError::Invalid(NO_PARSE))?;
        if y.value() != self.value {
            return Err(EditError::Invalid(NOT_EXPECTED));
        }
        self.unchecked = false;
        Ok(())
    }

    /// The current text.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The current tree.
    #[must_use]
    pub fn yaml(&self) -> &Yaml {
        &self.yaml
    }

    /// The current semantic projection.
    #[must_use]
    pub fn value(&self) -> Value {
        self.value.clone()
    }

    fn source(&self) -> EditSource<'_> {
        EditSource {
            text: &self.text,
            yaml: &self.yaml,
            nl: self.nl,
        }
    }

    /// Applies `edits`, post-checks them against `expected` (the projection the step must
    /// give) and keeps the new text, tree and projection.
    fn commit(&mut self, edits: Vec<Edit>, expected: Value) -> Result<Vec<Edit>, EditError> {
        if edits.is_empty() {
            return Ok(edits);
        }
        let new_text = apply_edits(&self.text, &edits)?;
        let yaml = if self.deferred {
            verify_bytes(&self.text, &edits, &new_text)?;
            let y = yaml::parse(&new_text).map_err(|_| EditError::Invalid(NO_PARSE))?;
            if y.value() != expected {
                return Err(EditError::Invalid(NOT_EXPECTED));
            }
            self.unchecked = true;
            y
        } else {
            verify(&self.text, &edits, &new_text, &expected)?
        };
        self.text = new_text;
        self.yaml = yaml;
        self.value = expected;
        Ok(edits)
    }

    /// [`plan_set`] + post-check. Returns the applied edits (ranges of the previous text).
    ///
    /// # Errors
    /// [`EditError`]; the text is unchanged.
    pub fn set(
        &mut self,
        path: &[Seg<'_>],
        key: &str,
        value: &NewValue,
    ) -> Result<Vec<Edit>, EditError> {
        let edits = plan_set(&self.source(), path, key, value)?;
        let mut expected = self.value();
        model_set(&mut expected, path, key, value.to_value());
        self.commit(edits, expected)
    }

    /// [`plan_remove`] + post-check.
    ///
    /// # Errors
    /// [`EditError`]; the text is unchanged.
    pub fn remove(&mut self, path: &[Seg<'_>], key: &str) -> Result<Vec<Edit>, EditError> {
        let edits = plan_remove(&self.source(), path, key)?;
        let mut expected = self.value();
        model_remove(&mut expected, path, key);
        self.commit(edits, expected)
    }

    /// [`plan_remove_item`] + post-check.
    ///
    /// # Errors
    /// [`EditError`]; the text is unchanged.
    pub fn remove_item(&mut self, path: &[Seg<'_>], index: usize) -> Result<Vec<Edit>, EditError> {
        let edits = plan_remove_item(&self.source(), path, index)?;
        let mut expected = self.value();
        model_remove_item(&mut expected, path, index);
        self.commit(edits, expected)
    }

    /// [`plan_append_item`] + post-check.
    ///
    /// # Errors
    /// [`EditError`]; the text is unchanged.
    pub fn append_item(
        &mut self,
        path: &[Seg<'_>],
        value: &NewValue,
    ) -> Result<Vec<Edit>, EditError> {
        let edits = plan_append_item(&self.source(), path, value)?;
        let mut expected = self.value();
        model_append_item(&mut expected, path, value.to_value());
        self.commit(edits, expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(text: &str) -> Frontmatter {
        Frontmatter::parse(text, text.contains("\r\n")).unwrap()
    }

    fn s(v: &str) -> NewValue {
        NewValue::str(v)
    }

    #[test]
    fn appending_a_block_item_to_a_flow_sequence_writes_it_in_flow_style() {
        let mut f = fm("sources: [{id: s1, resource: \"https://e.test/1\"}]\n");
        let item = NewValue::BlockMap(vec![
            ("id".to_owned(), s("s3")),
            ("resource".to_owned(), s("https://e.test/3")),
        ]);
        f.append_item(&[Seg::Key("sources")], &item).unwrap();
        assert_eq!(
            f.text(),
            "sources: [{id: s1, resource: \"https://e.test/1\"}, { id: s3, resource: https://e.test/3 }]\n"
        );
    }

    #[test]
    fn set_replaces_only_the_scalar_token() {
        let mut f = fm("title: Old   # keep\nz: \"q\" # c\n");
        f.set(&[], "title", &s("New — 中文")).unwrap();
        f.set(&[], "z", &s("yes")).unwrap();
        assert_eq!(f.text(), "title: New — 中文   # keep\nz: \"yes\" # c\n");
    }

    #[test]
    fn set_fills_an_empty_value() {
        let mut f = fm("empty:\nnext: 1\ne2: # c\n");
        f.set(&[], "empty", &s("v")).unwrap();
        f.set(&[], "e2", &s("w")).unwrap();
        assert_eq!(f.text(), "empty: v\nnext: 1\ne2: w # c\n");
    }

    #[test]
    fn new_key_goes_after_last_entry_before_trailing_comments() {
        let src =
            "type: t\ngenerated:\n    by: a   # who\n    # trailing note\n\n# root comment\nz: 1\n";
        let mut f = fm(src);
        f.set(
            &[Seg::Key("generated")],
            "at",
            &NewValue::plain("2026-01-01T00:00:00Z"),
        )
        .unwrap();
        assert_eq!(
            f.text(),
            "type: t\ngenerated:\n    by: a   # who\n    at: 2026-01-01T00:00:00Z\n    # trailing note\n\n# root comment\nz: 1\n"
        );
        f.set(&[], "status", &s("stable")).unwrap();
        assert!(f.text().ends_with("z: 1\nstatus: stable\n"));
    }

    #[test]
    fn crlf_documents_get_crlf_lines_and_okf_version_is_quoted() {
        let mut f = fm("type: t\r\n# c\r\n");
        f.set(
            &[],
            "okf_version",
            &NewValue::Scalar(Scalar::Quoted("0.2".into())),
        )
        .unwrap();
        f.set(
            &[],
            "generated",
            &NewValue::BlockMap(vec![
                ("by".into(), s("human:reviewer")),
                ("at".into(), NewValue::plain("2026-01-01T00:00:00Z")),
            ]),
        )
        .unwrap();
        assert_eq!(
            f.text(),
            "type: t\r\nokf_version: \"0.2\"\r\ngenerated:\r\n  by: human:reviewer\r\n  at: 2026-01-01T00:00:00Z\r\n# c\r\n"
        );
    }

    #[test]
    fn new_sources_use_the_dash_alone_template() {
        let mut f = fm("type: t\n");
        f.set(
            &[],
            "sources",
            &NewValue::BlockSeq(vec![NewValue::BlockMap(vec![
                ("id".into(), s("a")),
                ("title".into(), s("T")),
                ("resource".into(), s("https://example.test/spec")),
            ])]),
        )
        .unwrap();
        assert_eq!(
            f.text(),
            "type: t\nsources:\n  -\n    id: a\n    title: T\n    resource: https://example.test/spec\n"
        );
        f.append_item(
            &[Seg::Key("sources")],
            &NewValue::BlockMap(vec![("id".into(), s("b"))]),
        )
        .unwrap();
        assert!(f.text().ends_with("  -\n    id: b\n"));
    }

    #[test]
    fn append_follows_dash_inline_items() {
        let mut f = fm("sources:\n  - id: a\n    title: T\n# after\nz: 1\n");
        f.append_item(
            &[Seg::Key("sources")],
            &NewValue::BlockMap(vec![("id".into(), s("b")), ("title".into(), s("U"))]),
        )
        .unwrap();
        assert_eq!(
            f.text(),
            "sources:\n  - id: a\n    title: T\n  - id: b\n    title: U\n# after\nz: 1\n"
        );
        let mut g = fm("tags:\n- a\n- b\n");
        g.append_item(&[Seg::Key("tags")], &s("c: d")).unwrap();
        assert_eq!(g.text(), "tags:\n- a\n- b\n- \"c: d\"\n");
    }

    #[test]
    fn remove_entry_and_item_keep_comment_lines() {
        let mut f = fm("a: 1 # gone\n# between\nb:\n  - x\n  # mid\n  - y # y\nc: 3\n");
        f.remove(&[], "a").unwrap();
        assert_eq!(f.text(), "# between\nb:\n  - x\n  # mid\n  - y # y\nc: 3\n");
        f.remove_item(&[Seg::Key("b")], 1).unwrap();
        assert_eq!(f.text(), "# between\nb:\n  - x\n  # mid\nc: 3\n");
        assert_eq!(
            f.remove_item(&[Seg::Key("b")], 0),
            Err(EditError::Invalid(
                "removing the only item of a block sequence"
            ))
        );
        // Comment lines after an entry's last content line are not part of the entry.
        f.remove(&[], "b").unwrap();
        assert_eq!(f.text(), "# between\n  # mid\nc: 3\n");
        assert_eq!(f.remove(&[], "absent").unwrap(), Vec::new());
    }

    #[test]
    fn flow_collections_are_re_rendered_with_verbatim_values() {
        let mut f = fm("generated: {by: 'a',  at: \"2026\"} # c\ntags: [x, \"y\" ,z]\n");
        f.set(
            &[Seg::Key("generated")],
            "at",
            &NewValue::plain("2027-01-01"),
        )
        .unwrap();
        assert_eq!(
            f.text(),
            "generated: { by: 'a', at: 2027-01-01 } # c\ntags: [x, \"y\" ,z]\n"
        );
        f.set(&[Seg::Key("generated")], "note", &s("a,b")).unwrap();
        assert!(f
            .text()
            .starts_with("generated: { by: 'a', at: 2027-01-01, note: \"a,b\" } # c\n"));
        f.append_item(&[Seg::Key("tags")], &s("w")).unwrap();
        assert!(f.text().ends_with("tags: [x, \"y\", z, w]\n"));
        f.remove_item(&[Seg::Key("tags")], 0).unwrap();
        f.remove(&[Seg::Key("generated")], "by").unwrap();
        assert_eq!(
            f.text(),
            "generated: { at: 2027-01-01, note: \"a,b\" } # c\ntags: [\"y\", z, w]\n"
        );
    }

    #[test]
    fn opaque_flow_collections_are_refused() {
        for src in [
            "g: {by: a,\n  at: b}\n",
            "g: {by: &x a, at: b}\n",
            "g: {by: !!str a, at: b}\n",
        ] {
            let mut f = fm(src);
            let before = f.text().to_owned();
            let err = f.set(&[Seg::Key("g")], "at", &s("c")).unwrap_err();
            assert!(
                matches!(err, EditError::Invalid(_) | EditError::Ambiguous(_)),
                "{src}"
            );
            assert_eq!(f.text(), before);
        }
        let mut f = fm("g: {by: a,\n  at: b}\n");
        assert_eq!(
            f.set(&[Seg::Key("g")], "at", &s("c")),
            Err(EditError::Invalid(OPAQUE_FLOW))
        );
        let mut f = fm("a: &x 1\ng: [*x, b]\n");
        assert_eq!(
            f.append_item(&[Seg::Key("g")], &s("c")),
            Err(EditError::Invalid(OPAQUE_FLOW))
        );
    }

    #[test]
    fn fail_closed_presentations() {
        let amb = |src: &str, f: &dyn Fn(&mut Frontmatter) -> Result<Vec<Edit>, EditError>| {
            let mut d = fm(src);
            let r = f(&mut d);
            assert_eq!(
                r.map_err(|e| e.code()),
                Err("ambiguous_presentation"),
                "{src}"
            );
            assert_eq!(d.text(), src);
        };
        amb("a: &x 1\nb: *x\n", &|d| d.set(&[], "a", &s("2")));
        amb("a: &x 1\nb: *x\n", &|d| d.set(&[], "b", &s("2")));
        amb("a: !!str 1\n", &|d| d.set(&[], "a", &s("2")));
        amb("g: &g\n  by: a\n", &|d| {
            d.set(&[Seg::Key("g")], "by", &s("b"))
        });
        amb("b: &m {x: 1}\ng:\n  <<: *m\n  by: a\n", &|d| {
            d.set(&[Seg::Key("g")], "by", &s("b"))
        });
        amb("s:\n  - &a {id: 1}\n  - x\n", &|d| {
            d.remove_item(&[Seg::Key("s")], 0)
        });
        assert_eq!(
            Frontmatter::parse("g:\n  by: a\n  by: b\n", false).map(|_| ()),
            Err(EditError::Ambiguous(
                "a duplicate key in the edited frontmatter"
            ))
        );
        let mut d = fm("d: |\n  text\n");
        assert_eq!(
            d.set(&[], "d", &s("x")).map_err(|e| e.code()),
            Err("invalid_presentation")
        );
        let mut d = fm("d: >-\n  text\n");
        assert_eq!(d.remove(&[], "d").map(|_| ()), Ok(()));
        let mut d = fm("g: x\n");
        assert_eq!(
            d.set(&[Seg::Key("g")], "by", &s("b")),
            Err(EditError::Invalid(WRONG_KIND))
        );
        assert_eq!(
            Frontmatter::parse("- a\n", false)
                .map(|_| ())
                .map_err(|e| e.code()),
            Err("invalid_presentation")
        );
    }

    #[test]
    fn ops_17_flow_generated_re_rendered_on_one_line() {
        let src =
            "type: t\ngenerated: { by: a/1, at: 2026-01-01T00:00:00Z }  # g\nx-opaque: keep\n";
        let mut f = fm(src);
        f.set(&[Seg::Key("generated")], "by", &s("human:reviewer"))
            .unwrap();
        f.set(
            &[Seg::Key("generated")],
            "at",
            &NewValue::plain("2026-02-01T00:00:00Z"),
        )
        .unwrap();
        assert_eq!(
            f.text(),
            "type: t\ngenerated: { by: human:reviewer, at: 2026-02-01T00:00:00Z }  # g\nx-opaque: keep\n"
        );
    }

    #[test]
    fn ops_18_crlf_generated_lines_lf_lines_untouched() {
        // A document is CRLF when it contains any CRLF; its LF lines stay as they are.
        let mut f = Frontmatter::parse("a: 1\nb:\n  - x\r\n", true).unwrap();
        f.append_item(
            &[Seg::Key("b")],
            &NewValue::BlockMap(vec![("id".into(), s("i2"))]),
        )
        .unwrap();
        f.set(&[], "c", &NewValue::BlockSeq(vec![s("z")])).unwrap();
        assert_eq!(
            f.text(),
            "a: 1\nb:\n  - x\r\n  -\r\n    id: i2\r\nc:\r\n  - z\r\n"
        );
    }

    #[test]
    fn ops_14_hostile_presentations_fail_closed_in_the_editor() {
        let cases: [(&str, &str); 4] = [
            ("tags: [a, # c\n  b]\n", "invalid_presentation"),
            ("g0: &g {by: a}\ngenerated: *g\n", "ambiguous_presentation"),
            (
                "g0: &g {by: a}\ngenerated:\n  <<: *g\n  at: x\n",
                "ambiguous_presentation",
            ),
            ("generated:\n  by: a\n  by: b\n", "ambiguous_presentation"),
        ];
        for (src, code) in cases {
            let got = Frontmatter::parse(src, false).and_then(|mut f| {
                if src.starts_with("tags") {
                    f.append_item(&[Seg::Key("tags")], &s("c"))
                } else {
                    f.set(&[Seg::Key("generated")], "by", &s("z"))
                }
            });
            assert_eq!(got.map(|_| ()).map_err(|e| e.code()), Err(code), "{src}");
        }
    }

    #[test]
    fn plain_safe_vectors_round_trip_as_strings() {
        let vectors = [
            "yes",
            "no",
            "on",
            "off",
            "y",
            "N",
            "1.10",
            "0012",
            "0x1F",
            "1_000",
            "1:30",
            ".5",
            "key: value",
            "# x",
            "a #b",
            "multi\nline",
            "",
            "null",
            "~",
            "Null",
            "@at",
            "- dash",
            " lead",
            "trail ",
            "*alias",
            "&anchor",
            "!tag",
            "%dir",
            "|",
            ">",
            "---",
            "...",
            "[flow]",
            "{x: 1}",
            "tab\there",
            "ünï — 中文",
            "2026-07-01",
            "2026-07-01T10:00:00Z",
            "x:",
            "<<",
            "=",
            "'q'",
            "\"dq\"",
            "back\\slash",
            ".inf",
            "-.inf",
            ".NaN",
            "true",
            "FALSE",
            "\u{7}bell",
            "\u{2028}",
            "plain text",
            "human:reviewer",
            "https://example.test/spec",
            "a,b",
        ];
        for v in vectors {
            let mut f = fm("a: 1\nf: {k: v}\n");
            f.set(&[], "a", &s(v))
                .unwrap_or_else(|e| panic!("{v:?}: {e}"));
            f.set(&[Seg::Key("f")], "k", &s(v))
                .unwrap_or_else(|e| panic!("{v:?}: {e}"));
            assert_eq!(f.value().get("a"), Some(&yaml::Value::str(v)), "{v:?}");
        }
        for v in [
            "status",
            "stable",
            "human:reviewer",
            "https://example.test/spec",
            "中文",
        ] {
            assert!(is_plain_safe(v, false), "{v}");
        }
        for v in ["yes", "0012", "1.10", "2026-07-01", "a: b", "a #b", "~", ""] {
            assert!(!is_plain_safe(v, false), "{v}");
        }
        assert!(!is_plain_safe("a,b", true));
        assert_eq!(
            double_quote("a\"\\\n\t\r\u{1}"),
            "\"a\\\"\\\\\\n\\t\\r\\u0001\""
        );
    }

    #[test]
    fn plain_values_must_be_plain_tokens() {
        let mut f = fm("a: 1\n");
        assert_eq!(
            f.set(&[], "a", &NewValue::plain("x: y"))
                .map_err(|e| e.code()),
            Err("invalid_presentation")
        );
        f.set(&[], "a", &NewValue::plain("42")).unwrap();
        assert_eq!(f.value().get("a"), Some(&yaml::Value::plain("42")));
    }

    #[test]
    fn replace_scalar_by_block_collection_and_back() {
        let mut f = fm("verified:\n  by: a\n  at: b\nz: 1\n");
        f.set(
            &[],
            "verified",
            &NewValue::BlockSeq(vec![
                NewValue::BlockMap(vec![("by".into(), s("a")), ("at".into(), s("b"))]),
                NewValue::BlockMap(vec![("by".into(), s("c"))]),
            ]),
        )
        .unwrap();
        assert_eq!(
            f.text(),
            "verified:\n  -\n    by: a\n    at: b\n  -\n    by: c\nz: 1\n"
        );
        f.set(&[], "verified", &NewValue::FlowSeq(vec![])).unwrap();
        assert_eq!(f.text(), "verified: []\nz: 1\n");
        let mut g = fm("g:\n  # note\n  by: a\n");
        assert_eq!(
            g.set(&[], "g", &s("x")).map_err(|e| e.code()),
            Err("invalid_presentation")
        );
    }

    #[test]
    fn empty_frontmatter_gets_root_keys() {
        let mut f = fm("");
        f.set(&[], "type", &s("metric")).unwrap();
        assert_eq!(f.text(), "type: metric\n");
        let mut g = fm("# c");
        g.set(&[], "type", &s("metric")).unwrap();
        assert_eq!(g.text(), "# c\ntype: metric\n");
        let mut h = fm("a: 1");
        h.set(&[], "b", &s("2")).unwrap();
        assert_eq!(h.text(), "a: 1\nb: \"2\"\n");
    }

    #[test]
    fn verify_rejects_changes_outside_edits_and_wrong_values() {
        let original = "a: 1\nb: 2\n";
        let edits = vec![Edit {
            range: 3..4,
            replacement: "5".into(),
        }];
        let mut expected = yaml::parse(original).unwrap().value();
        model_set(&mut expected, &[], "a", Value::plain("5"));
        assert!(verify(original, &edits, "a: 5\nb: 2\n", &expected).is_ok());
        assert_eq!(
            verify(original, &edits, "a: 5\nb: 3\n", &expected).map(|_| ()),
            Err(EditError::Invalid("bytes outside the edited spans changed"))
        );
        assert_eq!(
            verify(original, &edits, "a: 5\nb:  2\n", &expected).map(|_| ()),
            Err(EditError::Invalid("bytes outside the edited spans changed"))
        );
        let wrong = yaml::parse(original).unwrap().value();
        assert!(verify(original, &edits, "a: 5\nb: 2\n", &wrong).is_err());
        assert!(apply_edits(original, &[edits[0].clone(), edits[0].clone()]).is_err());
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    const TRICKY: &[&str] = &[
        "yes",
        "0012",
        "1.10",
        "# x",
        "key: v",
        "2026-01-01",
        "~",
        "",
        "plain",
        "a,b",
        "ünï — 中",
        "x\ny",
        "@at",
        "- d",
        "true",
        "null",
        "\"q\"",
        "it's",
    ];

    /// Source text of a scalar value written in some style.
    fn scalar_src() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("plain text".to_owned()),
            Just("yes".to_owned()),
            Just("0012".to_owned()),
            Just("1.10".to_owned()),
            Just("~".to_owned()),
            Just("2026-01-01".to_owned()),
            Just("\"# x\"".to_owned()),
            Just("'key: v'".to_owned()),
            Just("ünï — 中文".to_owned()),
            Just("\"quoted\"".to_owned()),
        ]
    }

    #[derive(Debug, Clone)]
    enum Val {
        Scalar(String),
        Empty,
        FlowSeq(Vec<String>),
        FlowMap(Vec<String>),
        BlockMap(Vec<String>),
        BlockSeq(Vec<String>),
        InlineItems(usize),
    }

    fn val() -> impl Strategy<Value = Val> {
        prop_oneof![
            3 => scalar_src().prop_map(Val::Scalar),
            1 => Just(Val::Empty),
            1 => prop::collection::vec(scalar_src(), 0..3).prop_map(Val::FlowSeq),
            1 => prop::collection::vec(scalar_src(), 0..3).prop_map(Val::FlowMap),
            2 => prop::collection::vec(scalar_src(), 1..3).prop_map(Val::BlockMap),
            2 => prop::collection::vec(scalar_src(), 1..4).prop_map(Val::BlockSeq),
            1 => (1usize..3).prop_map(Val::InlineItems),
        ]
    }

    #[derive(Debug, Clone)]
    struct Entry {
        val: Val,
        comment: bool,
        line_after: u8,
    }

    fn entry() -> impl Strategy<Value = Entry> {
        (val(), any::<bool>(), 0u8..4).prop_map(|(val, comment, line_after)| Entry {
            val,
            comment,
            line_after,
        })
    }

    fn render(entries: &[Entry], crlf: bool) -> String {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut out = String::new();
        for (i, e) in entries.iter().enumerate() {
            let key = format!("k{i}");
            let c = if e.comment { "  # note" } else { "" };
            match &e.val {
                Val::Scalar(s) => out.push_str(&format!("{key}: {s}{c}{nl}")),
                Val::Empty => out.push_str(&format!("{key}:{c}{nl}")),
                Val::FlowSeq(v) => out.push_str(&format!("{key}: [{}]{c}{nl}", v.join(", "))),
                Val::FlowMap(v) => {
                    let parts: Vec<String> = v
                        .iter()
                        .enumerate()
                        .map(|(j, s)| format!("f{j}: {s}"))
                        .collect();
                    out.push_str(&format!("{key}: {{{}}}{c}{nl}", parts.join(", ")));
                }
                Val::BlockMap(v) => {
                    out.push_str(&format!("{key}:{c}{nl}"));
                    for (j, s) in v.iter().enumerate() {
                        out.push_str(&format!("  m{j}: {s}{nl}"));
                    }
                }
                Val::BlockSeq(v) => {
                    out.push_str(&format!("{key}:{nl}"));
                    for s in v {
                        out.push_str(&format!("  - {s}{c}{nl}"));
                    }
                }
                Val::InlineItems(n) => {
                    out.push_str(&format!("{key}:{nl}"));
                    for j in 0..*n {
                        out.push_str(&format!("- id: i{j}{nl}  title: T{j}{nl}"));
                    }
                }
            }
            match e.line_after {
                1 => out.push_str(nl),
                2 => out.push_str(&format!("# between{nl}")),
                3 => out.push_str(&format!("  # indented{nl}{nl}")),
                _ => {}
            }
        }
        out
    }

    #[derive(Debug, Clone)]
    enum Op {
        Set(usize, NewValue),
        SetNested(usize, String, NewValue),
        Remove(usize),
        RemoveNested(usize, usize),
        Append(usize, NewValue),
        RemoveItem(usize, usize),
    }

    fn new_scalar() -> impl Strategy<Value = NewValue> {
        prop_oneof![
            4 => prop::sample::select(TRICKY).prop_map(NewValue::str),
            1 => prop::sample::select(&["42", "2026-07-01", "true"][..]).prop_map(NewValue::plain),
            1 => Just(NewValue::Scalar(Scalar::Quoted("0.2".into()))),
            1 => prop::sample::select(TRICKY)
                .prop_map(|s| NewValue::Scalar(Scalar::SingleQuoted(s.to_owned()))),
        ]
    }

    fn new_value() -> impl Strategy<Value = NewValue> {
        prop_oneof![
            4 => new_scalar(),
            1 => prop::collection::vec(new_scalar(), 0..3).prop_map(NewValue::FlowSeq),
            1 => prop::collection::vec(new_scalar(), 1..3).prop_map(|v| NewValue::BlockMap(
                v.into_iter().enumerate().map(|(i, v)| (format!("n{i}"), v)).collect()
            )),
            1 => prop::collection::vec(new_scalar(), 1..3).prop_map(NewValue::BlockSeq),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0usize..8, new_value()).prop_map(|(k, v)| Op::Set(k, v)),
            2 => (0usize..6, prop::sample::select(&["m0", "m1", "f0", "f1", "new key", "n"][..]), new_scalar())
                .prop_map(|(k, n, v)| Op::SetNested(k, n.to_owned(), v)),
            2 => (0usize..8).prop_map(Op::Remove),
            1 => (0usize..6, 0usize..3).prop_map(|(k, j)| Op::RemoveNested(k, j)),
            2 => (0usize..6, prop_oneof![
                new_scalar(),
                Just(NewValue::BlockMap(vec![("id".into(), NewValue::str("z")), ("title".into(), NewValue::str("yes"))])),
            ]).prop_map(|(k, v)| Op::Append(k, v)),
            2 => (0usize..6, 0usize..4).prop_map(|(k, j)| Op::RemoveItem(k, j)),
        ]
    }

    /// Bytes outside the (sorted, non-overlapping) edits are the same, checked independently of
    /// [`verify`]: the text before the first edit is a prefix, the text after the last edit a
    /// suffix, and between edits the original gap occurs in order.
    fn outside_unchanged(before: &str, edits: &[Edit], after: &str) -> bool {
        let mut sorted = edits.to_vec();
        sorted.sort_by_key(|e| e.range.start);
        let first = sorted.first().map_or(before.len(), |e| e.range.start);
        let last = sorted.last().map_or(before.len(), |e| e.range.end);
        if !after.starts_with(&before[..first]) || !after.ends_with(&before[last..]) {
            return false;
        }
        let mut from = first;
        for w in sorted.windows(2) {
            let gap = &before[w[0].range.end..w[1].range.start];
            match after[from..].find(gap) {
                Some(i) => from += i + gap.len(),
                None => return false,
            }
        }
        true
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn edits_touch_only_their_spans(
            entries in prop::collection::vec(entry(), 1..7),
            crlf in any::<bool>(),
            ops in prop::collection::vec(op(), 1..5),
        ) {
            let text = render(&entries, crlf);
            let mut f = Frontmatter::parse(&text, crlf).expect("generated frontmatter parses");
            for op in ops {
                let before = f.text().to_owned();
                let before_value = f.value();
                // Nested operations aim at a key holding a collection of the right kind.
                let pick = |sel: usize, want_map: bool| -> String {
                    let yaml::Value::Map(e) = &before_value else { return format!("k{sel}") };
                    let c: Vec<&str> = e
                        .iter()
                        .filter(|(_, v)| matches!(v, yaml::Value::Map(_)) == want_map
                            && matches!(v, yaml::Value::Map(_) | yaml::Value::Seq(_)))
                        .filter_map(|(k, _)| k.key_text())
                        .collect();
                    if c.is_empty() { format!("k{sel}") } else { c[sel % c.len()].to_owned() }
                };
                let mut expected = before_value.clone();
                let result = match &op {
                    Op::Set(k, v) => {
                        let key = format!("k{k}");
                        model_set(&mut expected, &[], &key, v.to_value());
                        f.set(&[], &key, v)
                    }
                    Op::SetNested(k, n, v) => {
                        let key = pick(*k, true);
                        model_set(&mut expected, &[Seg::Key(&key)], n, v.to_value());
                        f.set(&[Seg::Key(&key)], n, v)
                    }
                    Op::Remove(k) => {
                        let key = format!("k{k}");
                        model_remove(&mut expected, &[], &key);
                        f.remove(&[], &key)
                    }
                    Op::RemoveNested(k, j) => {
                        let key = pick(*k, true);
                        let sub = before_value
                            .get(&key)
                            .and_then(|m| match m { yaml::Value::Map(e) => e.get(*j), _ => None })
                            .and_then(|(k, _)| k.key_text().map(str::to_owned))
                            .unwrap_or_else(|| "absent".to_owned());
                        model_remove(&mut expected, &[Seg::Key(&key)], &sub);
                        f.remove(&[Seg::Key(&key)], &sub)
                    }
                    Op::Append(k, v) => {
                        let key = pick(*k, false);
                        model_append_item(&mut expected, &[Seg::Key(&key)], v.to_value());
                        f.append_item(&[Seg::Key(&key)], v)
                    }
                    Op::RemoveItem(k, j) => {
                        let key = pick(*k, false);
                        model_remove_item(&mut expected, &[Seg::Key(&key)], *j);
                        f.remove_item(&[Seg::Key(&key)], *j)
                    }
                };
                match result {
                    Ok(edits) => {
                        let after = f.text();
                        prop_assert!(outside_unchanged(&before, &edits, after),
                            "bytes outside edits changed: {before:?} -> {after:?}");
                        let reparsed = yaml::parse(after).expect("edited text parses");
                        prop_assert_eq!(reparsed.value(), expected);
                        if crlf {
                            prop_assert_eq!(after.matches('\n').count(), after.matches("\r\n").count());
                        } else {
                            prop_assert!(!after.contains('\r'));
                        }
                    }
                    Err(_) => {
                        prop_assert_eq!(f.text(), before.as_str());
                    }
                }
            }
        }
    }

    /// Guards the property against vacuity: on a typical frontmatter every primitive succeeds.
    #[test]
    fn typical_operations_succeed() {
        let entries = vec![
            Entry {
                val: Val::Scalar("yes".into()),
                comment: true,
                line_after: 2,
            },
            Entry {
                val: Val::BlockMap(vec!["1.10".into()]),
                comment: false,
                line_after: 3,
            },
            Entry {
                val: Val::BlockSeq(vec!["a".into(), "b".into()]),
                comment: true,
                line_after: 1,
            },
            Entry {
                val: Val::FlowMap(vec!["x".into()]),
                comment: true,
                line_after: 0,
            },
            Entry {
                val: Val::InlineItems(2),
                comment: false,
                line_after: 0,
            },
        ];
        for crlf in [false, true] {
            let mut f = Frontmatter::parse(&render(&entries, crlf), crlf).unwrap();
            f.set(&[], "k0", &NewValue::str("0012")).unwrap();
            f.set(&[Seg::Key("k1")], "m1", &NewValue::str("# x"))
                .unwrap();
            f.append_item(&[Seg::Key("k2")], &NewValue::str("key: v"))
                .unwrap();
            f.remove_item(&[Seg::Key("k2")], 0).unwrap();
            f.set(&[Seg::Key("k3")], "f0", &NewValue::plain("2026-01-01"))
                .unwrap();
            f.append_item(
                &[Seg::Key("k4")],
                &NewValue::BlockMap(vec![("id".into(), NewValue::str("z"))]),
            )
            .unwrap();
            f.remove(&[], "k1").unwrap();
            f.set(&[], "k9", &NewValue::BlockSeq(vec![NewValue::str("yes")]))
                .unwrap();
            let v = f.value();
            assert_eq!(v.get("k0"), Some(&Value::str("0012")));
            assert!(v.get("k1").is_none());
        }
    }
}
