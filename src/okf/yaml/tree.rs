//! The frontmatter tree and what both parsers share: the node types, the resource limits,
//! core-schema resolution, the mapping checks, the line-start table and the comment finder.
//! Built by `full` (the event parser) and `fast` (the direct scanner).

use std::ops::Range;

/// YAML resource limits (spec/store.md §3.5).
pub const MAX_FRONTMATTER_BYTES: usize = 1024 * 1024;
pub const MAX_DEPTH: usize = 64;
pub const MAX_NODES: usize = 100_000;
pub const MAX_ALIASES: usize = 1_000;
pub const MAX_SCALAR_BYTES: usize = 1024 * 1024;

/// Style of a scalar as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// A node of the frontmatter tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Byte span in the frontmatter text (for collections: from the first token to the end of
    /// the last content; includes a leading anchor/tag when present).
    pub span: Range<usize>,
    /// Anchor name (`&name`) when present.
    pub anchor: Option<String>,
    /// Explicit tag as written, e.g. `!!str` or `!custom`.
    pub tag: Option<String>,
    pub kind: NodeKind,
}

/// The kind of a node.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A scalar: decoded text and style.
    Scalar { text: String, style: Style },
    /// A mapping: entries in document order; `flow` for `{…}`.
    Mapping {
        flow: bool,
        entries: Vec<(Node, Node)>,
    },
    /// A sequence: items in document order; `flow` for `[…]`.
    Sequence { flow: bool, items: Vec<Node> },
    /// An alias (`*name`); `target` is the expanded anchored node.
    Alias { target: Box<Node> },
}

/// A scalar resolved under the YAML 1.2 core schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved<'a> {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'a str),
}

/// A parsed frontmatter block.
#[derive(Debug, Clone, PartialEq)]
pub struct Yaml {
    /// The root node; `None` for an empty document (an empty mapping per spec/surface.md §13.1).
    pub root: Option<Node>,
    /// Byte range of every comment, in document order: from `#` to the end of its line,
    /// line break excluded (spec/concept-patch.md §4.1 rule 1).
    pub comments: Vec<Range<usize>>,
    /// Byte offset of the start of every line; `line_starts[0] == 0`. A text ending in a line
    /// break has a last entry equal to its length (an empty last line).
    pub line_starts: Vec<usize>,
}

impl Yaml {
    /// The 0-based line holding byte `pos` (a line includes its line break).
    #[must_use]
    pub fn line_of(&self, pos: usize) -> usize {
        match self.line_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Whether a comment starts inside `range`.
    #[must_use]
    pub fn has_comment_in(&self, range: &Range<usize>) -> bool {
        self.comments
            .iter()
            .any(|c| c.start >= range.start && c.start < range.end)
    }

    /// The semantic projection of the whole frontmatter: the root mapping, or an empty mapping
    /// for an empty document (spec/surface.md §13.1 rule 3).
    #[must_use]
    pub fn value(&self) -> Value {
        self.root
            .as_ref()
            .map_or_else(|| Value::Map(Vec::new()), Node::value)
    }
}

/// The resolved type of a scalar in the semantic projection (YAML 1.2 core schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    Null,
    Bool,
    Int,
    Float,
    Str,
}

/// The semantic projection of a node (spec/concept-patch.md §4.1 rule 3): aliases expanded,
/// presentation (style, spans, comments, anchors) dropped. Scalars keep their decoded text
/// and resolved kind; two scalars are equal when kind and text are equal, except that every
/// null equals every other null (`~`, `null`, empty). `1.10` and `1.1` are different values:
/// the editor never retypes or normalises untouched scalars.
#[derive(Debug, Clone)]
pub enum Value {
    Scalar {
        text: String,
        kind: ScalarKind,
    },
    Seq(Vec<Value>),
    /// Entries in document order.
    Map(Vec<(Value, Value)>),
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Scalar { text: a, kind: ka }, Value::Scalar { text: b, kind: kb }) => {
                ka == kb && (*ka == ScalarKind::Null || a == b)
            }
            (Value::Seq(a), Value::Seq(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            _ => false,
        }
    }
}

impl Value {
    /// A string scalar.
    #[must_use]
    pub fn str(text: &str) -> Value {
        Value::Scalar {
            text: text.to_owned(),
            kind: ScalarKind::Str,
        }
    }

    /// A scalar written plain: its kind is its core-schema resolution.
    #[must_use]
    pub fn plain(text: &str) -> Value {
        Value::Scalar {
            text: text.to_owned(),
            kind: kind_of(&resolve_plain(text)),
        }
    }

    /// The entry value of string key `key` in a mapping.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(e) => e
                .iter()
                .find(|(k, _)| k.key_text() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Mutable access to the entry value of key `key` in a mapping.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Map(e) => e
                .iter_mut()
                .find(|(k, _)| k.key_text() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text of a scalar key.
    #[must_use]
    pub fn key_text(&self) -> Option<&str> {
        match self {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }
}

fn kind_of(r: &Resolved<'_>) -> ScalarKind {
    match r {
        Resolved::Null => ScalarKind::Null,
        Resolved::Bool(_) => ScalarKind::Bool,
        Resolved::Int(_) => ScalarKind::Int,
        Resolved::Float(_) => ScalarKind::Float,
        Resolved::Str(_) => ScalarKind::Str,
    }
}

/// Why a frontmatter block could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlError {
    /// Syntax error, several documents, or a root that is not a mapping → `invalid_frontmatter`.
    Invalid(&'static str),
    /// Duplicate key in some mapping → `invalid_frontmatter` (patch edits: `ambiguous_presentation`).
    DuplicateKey,
    /// A resource limit of spec/store.md §3.5 → `resource_limit`.
    Limit(&'static str),
    /// A graph fault of spec/store.md §3.4 → `invalid_yaml_graph`.
    Graph(&'static str),
}

impl Node {
    /// The semantic projection of this node (aliases expanded).
    #[must_use]
    pub fn value(&self) -> Value {
        let node = self.deref_alias();
        match &node.kind {
            NodeKind::Scalar { text, .. } => Value::Scalar {
                text: text.clone(),
                kind: node.resolved().map_or(ScalarKind::Str, |r| kind_of(&r)),
            },
            NodeKind::Sequence { items, .. } => Value::Seq(items.iter().map(Node::value).collect()),
            NodeKind::Mapping { entries, .. } => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.value(), v.value()))
                    .collect(),
            ),
            NodeKind::Alias { target } => target.value(),
        }
    }

    /// Whether this node or any node inside it carries an anchor, a tag or is an alias
    /// (spec/concept-patch.md §4.5, §4.4 rule 3).
    #[must_use]
    pub fn has_props_inside(&self) -> bool {
        if self.anchor.is_some() || self.tag.is_some() {
            return true;
        }
        match &self.kind {
            NodeKind::Scalar { .. } => false,
            NodeKind::Alias { .. } => true,
            NodeKind::Sequence { items, .. } => items.iter().any(Node::has_props_inside),
            NodeKind::Mapping { entries, .. } => entries
                .iter()
                .any(|(k, v)| k.has_props_inside() || v.has_props_inside()),
        }
    }

    /// Whether this node is a mapping with a merge key (plain `<<`) among its own entries.
    #[must_use]
    pub fn has_merge_key(&self) -> bool {
        match &self.kind {
            NodeKind::Mapping { entries, .. } => entries.iter().any(|(k, _)| is_merge_key(k)),
            _ => false,
        }
    }

    /// Whether this node is a flow collection.
    #[must_use]
    pub fn is_flow(&self) -> bool {
        matches!(
            self.kind,
            NodeKind::Mapping { flow: true, .. } | NodeKind::Sequence { flow: true, .. }
        )
    }

    /// The value of `key` in a mapping (aliases followed), else `None`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.deref_alias().kind {
            NodeKind::Mapping { entries, .. } => entries
                .iter()
                .find(|(k, _)| k.scalar_text() == Some(key))
                .map(|(_, v)| v.deref_alias()),
            _ => None,
        }
    }

    /// Follows aliases to the anchored node.
    #[must_use]
    pub fn deref_alias(&self) -> &Node {
        match &self.kind {
            NodeKind::Alias { target } => target.deref_alias(),
            _ => self,
        }
    }

    /// The scalar's decoded text, whatever its resolved type.
    #[must_use]
    pub fn scalar_text(&self) -> Option<&str> {
        match &self.deref_alias().kind {
            NodeKind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The text when the node resolves to a string under the core schema.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self.resolved()? {
            Resolved::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the node is a null scalar (`~`, `null`, empty).
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self.resolved(), Some(Resolved::Null))
    }

    /// Mapping entries, if a mapping.
    #[must_use]
    pub fn entries(&self) -> Option<&[(Node, Node)]> {
        match &self.deref_alias().kind {
            NodeKind::Mapping { entries, .. } => Some(entries),
            _ => None,
        }
    }

    /// Sequence items, if a sequence.
    #[must_use]
    pub fn items(&self) -> Option<&[Node]> {
        match &self.deref_alias().kind {
            NodeKind::Sequence { items, .. } => Some(items),
            _ => None,
        }
    }

    /// Resolves a scalar under the YAML 1.2 core schema; `None` for collections. Quoted and
    /// block scalars and `!!str`-tagged scalars are strings.
    #[must_use]
    pub fn resolved(&self) -> Option<Resolved<'_>> {
        let node = self.deref_alias();
        let NodeKind::Scalar { text, style } = &node.kind else {
            return None;
        };
        if *style != Style::Plain || node.tag.as_deref() == Some("!!str") {
            return Some(Resolved::Str(text));
        }
        Some(resolve_plain(text))
    }
}

/// Core-schema resolution of a plain scalar (YAML 1.2.2 §10.3.2).
#[must_use]
pub fn resolve_plain(t: &str) -> Resolved<'_> {
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "false" | "False" | "FALSE" => return Resolved::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY)
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        _ => {}
    }
    let digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits(body, 10) {
        if let Ok(i) = t.parse::<i128>() {
            return Resolved::Int(i);
        }
    }
    if let Some(o) = t.strip_prefix("0o") {
        if digits(o, 8) {
            if let Ok(i) = i128::from_str_radix(o, 8) {
                return Resolved::Int(i);
            }
        }
    }
    if let Some(h) = t.strip_prefix("0x") {
        if digits(h, 16) {
            if let Ok(i) = i128::from_str_radix(h, 16) {
                return Resolved::Int(i);
            }
        }
    }
    if is_core_float(t) {
        if let Ok(f) = t.parse::<f64>() {
            return Resolved::Float(f);
        }
    }
    Resolved::Str(t)
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
fn is_core_float(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if int_digits == 0 && i == s {
            return false;
        }
    } else if int_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    i == b.len()
}

/// Duplicate keys (by semantic projection) and merge-key values (spec/store.md §3.4).
pub(super) fn check_mapping(entries: &[(Node, Node)]) -> Result<(), YamlError> {
    // Scalar keys (the usual case) compare by resolved kind and text without projecting.
    let scalar_keys: Option<Vec<(ScalarKind, &str)>> = entries
        .iter()
        .map(|(k, _)| match (&k.kind, k.resolved()) {
            (NodeKind::Scalar { text, .. }, Some(r)) => Some((kind_of(&r), text.as_str())),
            _ => None,
        })
        .collect();
    if let Some(keys) = scalar_keys {
        for (i, (kind, text)) in keys.iter().enumerate() {
            if keys[..i]
                .iter()
                .any(|(k, t)| k == kind && (*kind == ScalarKind::Null || t == text))
            {
                return Err(YamlError::DuplicateKey);
            }
        }
    } else {
        let keys: Vec<Value> = entries.iter().map(|(k, _)| k.value()).collect();
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].contains(k) {
                return Err(YamlError::DuplicateKey);
            }
        }
    }
    for (k, v) in entries {
        if !is_merge_key(k) {
            continue;
        }
        let v = v.deref_alias();
        let ok = match &v.kind {
            NodeKind::Mapping { .. } => true,
            NodeKind::Sequence { items, .. } => items
                .iter()
                .all(|i| matches!(i.deref_alias().kind, NodeKind::Mapping { .. })),
            _ => false,
        };
        if !ok {
            return Err(YamlError::Graph(
                "merge key whose value is not a mapping or a sequence of mappings",
            ));
        }
    }
    Ok(())
}

/// A merge key: the plain, untagged scalar `<<`.
fn is_merge_key(k: &Node) -> bool {
    k.tag.is_none()
        && matches!(&k.kind, NodeKind::Scalar { text, style: Style::Plain } if text == "<<")
}

/// Byte offsets of line starts (after `\n`; a lone `\r` is not a line break here because the
/// documents this editor writes use LF or CRLF).
pub(super) fn line_starts(text: &str) -> Vec<usize> {
    // Counted first, so the table is allocated once.
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let mut v = Vec::with_capacity(breaks + 1);
    v.push(0);
    v.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    v
}

/// Every `#` at a line start or after a space/tab that lies outside every scalar token opens
/// a comment running to the end of its line.
///
/// Visits only the `#` bytes; a position is inside the union of the `opaque` ranges exactly
/// when the largest end among the ranges starting at or before it lies after it.
pub(super) fn find_comments(text: &str, opaque: &[Range<usize>]) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Range<usize>> = Vec::new();
    if memchr::memchr(b'#', bytes).is_none() {
        return out;
    }
    // Sorted by start (the scanners record them in document order). An empty range never
    // covers a position: its end is at most any position it is compared with.
    let sorted: Vec<Range<usize>>;
    let opaque = if opaque.is_sorted_by_key(|r| r.start) {
        opaque
    } else {
        let mut v = opaque.to_vec();
        v.sort_by_key(|r| r.start);
        sorted = v;
        &sorted
    };
    let (mut oi, mut covered) = (0, 0);
    for i in memchr::memchr_iter(b'#', bytes) {
        if out.last().is_some_and(|c| i < c.end) {
            continue;
        }
        while oi < opaque.len() && opaque[oi].start <= i {
            covered = covered.max(opaque[oi].end);
            oi += 1;
        }
        if covered > i {
            continue;
        }
        if i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'\r') {
            let end = text[i..].find(['\n', '\r']).map_or(text.len(), |e| i + e);
            out.push(i..end);
        }
    }
    out
}
