//! YAML 1.2 frontmatter parsing into a node tree with **byte** spans (spec/surface.md §13.1
//! rule 3, spec/store.md §3.4–§3.5, spec/concept-patch.md §4.1).
//!
//! Built on the event parser of `saphyr-parser`, whose markers count characters; this module
//! maps them to byte offsets of the frontmatter text. Scalars keep their decoded value and
//! style, so `1.10`, `0012`, `yes` and dates stay text (resolution happens only on request
//! through [`Node::resolved`]).
//!
//! # Spans
//! Every [`Node::span`] is an exact byte range of the frontmatter text: it starts at the node's
//! first property (`&anchor` / `!tag`) when present, else at its first token, and covers:
//! - plain scalars: the scalar text (several lines for a multi-line plain scalar);
//! - quoted scalars: the whole token including both quotes (never a trailing comment);
//! - literal / folded scalars: from the `|` / `>` indicator through the end of the last
//!   non-blank content line (trailing blank lines and following comment lines are outside);
//! - flow collections: from `[` / `{` through the closing bracket;
//! - block collections: from the first key or dash through the end of the last child's span
//!   (comment and blank lines after the last child are outside — saphyr's own end marker of a
//!   block collection swallows them, spec/rust-notes.md §4.3);
//! - aliases: the `*name` token.
//!
//! An empty plain scalar (`empty:`) has an empty span placed right after the `:`.
//! [`Yaml::comments`] lists the byte range of every comment (`#` through the end of its line,
//! newline excluded); [`Yaml::line_starts`] is the line-start table.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::ops::Range;

mod fast;

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

/// Parses one frontmatter block (the text between the fences).
///
/// Enforces every rule of spec/store.md §3.4–§3.5: the size, depth, node, alias and scalar
/// limits; duplicate anchors, aliases to undefined anchors and malformed merge keys; duplicate
/// keys at every level (compared by semantic projection, so `"a"` and `a` collide).
///
/// Frontmatter in the plain subset most documents use is read by a direct scanner (`fast`),
/// which hands anything else — and every error — to the event parser; both give the same
/// tree (checked by differential tests, and on every call by the tripwire when it is armed:
/// debug builds and the `yaml-tripwire` feature, see [`tripwire`]).
///
/// # Errors
/// [`YamlError`] as documented on its variants.
pub fn parse(text: &str) -> Result<Yaml, YamlError> {
    if text.len() <= MAX_FRONTMATTER_BYTES {
        if let Some(y) = fast::parse(text) {
            tripwire(text, &y);
            return Ok(y);
        }
    }
    parse_full(text)
}

/// The fast ↔ full tripwire: panics when `fast`, the fast path's tree of `text`, differs from
/// what [`parse_full`] makes of `text`. Armed in debug builds and, in any profile, with the
/// `yaml-tripwire` feature (`.ci/run` tests with it); never compiled into a release build
/// without that feature.
#[cfg(any(debug_assertions, feature = "yaml-tripwire"))]
fn tripwire(text: &str, fast: &Yaml) {
    assert_eq!(
        Ok(fast),
        parse_full(text).as_ref(),
        "yaml fast path differs"
    );
}

/// The fast ↔ full tripwire, compiled out (release build without `yaml-tripwire`).
#[cfg(not(any(debug_assertions, feature = "yaml-tripwire")))]
#[inline(always)]
fn tripwire(_text: &str, _fast: &Yaml) {}

/// Where a frontmatter text that [`parse`] refuses goes wrong, as a 1-based `(line, column)`
/// of `text` (column in characters), for messages (spec/surface.md §18.3 rule 3): the
/// position of a syntax error, of the second document's start, of a duplicate key (keys
/// compared by their scalar text), or of a root that is not a mapping. `None` when none of
/// these is found (e.g. keys that are duplicates only after resolution, such as `~` and
/// `null`, or a resource-limit fault). Pure; reads no document text into its result.
#[must_use]
pub fn error_position(text: &str) -> Option<(usize, usize)> {
    enum Frame {
        Map { keys: Vec<String>, expect_key: bool },
        Seq,
    }
    // A node ended at the top of `stack`: a mapping alternates key and value.
    fn consumed(stack: &mut [Frame]) {
        if let Some(Frame::Map { expect_key, .. }) = stack.last_mut() {
            *expect_key = !*expect_key;
        }
    }
    let at = |m: &saphyr_parser::Marker| Some((m.line(), m.col() + 1));
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let (mut docs, mut roots) = (0, 0);
    while let Some(ev) = parser.next_event() {
        let (ev, span) = match ev {
            Ok(x) => x,
            Err(e) => return at(e.marker()),
        };
        let root = stack.is_empty();
        match ev {
            Event::DocumentStart(_) => {
                docs += 1;
                if docs > 1 {
                    return at(&span.start);
                }
            }
            Event::Scalar(value, ..) => {
                if root {
                    roots += 1;
                    if roots == 1 && !value.is_empty() {
                        return at(&span.start);
                    }
                }
                if let Some(Frame::Map {
                    keys,
                    expect_key: true,
                }) = stack.last_mut()
                {
                    if keys.iter().any(|k| *k == *value) {
                        return at(&span.start);
                    }
                    keys.push(value.into_owned());
                }
                consumed(&mut stack);
            }
            Event::Alias(_) => consumed(&mut stack),
            Event::SequenceStart(..) => {
                if root {
                    return at(&span.start);
                }
                stack.push(Frame::Seq);
            }
            Event::MappingStart(..) => stack.push(Frame::Map {
                keys: Vec::new(),
                expect_key: true,
            }),
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                consumed(&mut stack);
            }
            Event::StreamEnd => break,
            _ => {}
        }
    }
    None
}

/// The text of [`error_position`] for a message: ` at line L, column C of the frontmatter`,
/// with `line_offset` added to the line (1 when the frontmatter starts on a file's second
/// line, after its `---` fence); empty when the position is unknown.
#[must_use]
pub fn error_position_text(text: &str, line_offset: usize) -> String {
    match error_position(text) {
        Some((line, col)) => format!(" (line {}, column {col})", line + line_offset),
        None => String::new(),
    }
}

/// [`parse`] through the event parser (saphyr) only, never the fast path; same result and
/// same errors as [`parse`] for every input (spec/store.md §3.4–§3.5).
///
/// For checks that must be independent of the fast path they check: the lossless editor's
/// post-check (spec/concept-patch.md §4.1 rule 3, `plan::edit::verify`) re-parses
/// each edited text here, so a fast-path bug cannot both produce and accept a wrong tree.
/// Slower than [`parse`]; every other caller uses [`parse`].
///
/// # Errors
/// [`YamlError`] as documented on its variants.
pub fn parse_full(text: &str) -> Result<Yaml, YamlError> {
    if text.len() > MAX_FRONTMATTER_BYTES {
        return Err(YamlError::Limit("frontmatter exceeds 1 MiB"));
    }
    // char index → byte offset table (saphyr markers count chars).
    let mut char_to_byte: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    char_to_byte.push(text.len());
    let mut b = Builder {
        text,
        char_to_byte,
        anchors: Vec::new(),
        anchor_names: Vec::new(),
        nodes: 0,
        aliases: 0,
        opaque: Vec::new(),
    };
    let mut parser = Parser::new_from_str(text);
    let mut root: Option<Node> = None;
    let mut docs = 0;
    let mut stack: Vec<Frame> = Vec::new();
    while let Some(ev) = parser.next_event() {
        let (ev, span) = ev.map_err(|e| {
            if e.info().contains("unknown anchor") {
                YamlError::Graph("alias to an undefined anchor")
            } else if e.info().contains("recursion limit") {
                YamlError::Limit("nesting exceeds the depth limit")
            } else {
                YamlError::Invalid("frontmatter is not valid YAML")
            }
        })?;
        let starts_seq = matches!(ev, Event::SequenceStart(..));
        match ev {
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                docs += 1;
                if docs > 1 {
                    return Err(YamlError::Invalid(
                        "frontmatter holds more than one document",
                    ));
                }
            }
            Event::Scalar(value, style, anchor_id, tag) => {
                if value.len() > MAX_SCALAR_BYTES {
                    return Err(YamlError::Limit("scalar exceeds 1 MiB"));
                }
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                };
                let raw = b.byte_span(span);
                let span = b.scalar_span(raw, style, value.is_empty());
                let node = Node {
                    span,
                    anchor: None,
                    tag: tag.map(|t| tag_text(&t.handle, &t.suffix)),
                    kind: NodeKind::Scalar {
                        text: value.into_owned(),
                        style,
                    },
                };
                let node = b.finish_node(node, anchor_id)?;
                push_node(&mut stack, &mut root, node)?;
            }
            Event::Alias(id) => {
                b.aliases += 1;
                if b.aliases > MAX_ALIASES {
                    return Err(YamlError::Limit("too many aliases"));
                }
                let target = b
                    .anchors
                    .iter()
                    .rev()
                    .find(|(i, _)| *i == id)
                    .map(|(_, n)| n.clone())
                    .ok_or(YamlError::Graph("alias to an undefined anchor"))?;
                b.nodes += count_nodes(&target);
                if b.nodes > MAX_NODES {
                    return Err(YamlError::Limit("alias expansion exceeds the node limit"));
                }
                let start = b.byte_span(span).start;
                let end = text.get(start + 1..).map_or(text.len(), |r| {
                    start + 1 + r.find(is_name_end).unwrap_or(r.len())
                });
                let node = Node {
                    span: start..end,
                    anchor: None,
                    tag: None,
                    kind: NodeKind::Alias {
                        target: Box::new(target),
                    },
                };
                push_node(&mut stack, &mut root, node)?;
            }
            Event::SequenceStart(anchor_id, tag) | Event::MappingStart(anchor_id, tag) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(YamlError::Limit("nesting exceeds the depth limit"));
                }
                let raw = b.byte_span(span);
                // A flow collection's event covers its opening bracket (after any
                // properties); a block one's is empty or covers only its properties, so the
                // look stays inside the event (a property line before a block mapping whose
                // first key is `[…]` must not read as flow).
                let flow = text.get(raw.clone()).is_some_and(|s| {
                    let s = skip_props(s);
                    s.starts_with('[') || s.starts_with('{')
                });
                let in_block_mapping = stack.last().is_some_and(|f| f.mapping && !f.flow);
                let start = if starts_seq && !flow && in_block_mapping {
                    indentless_dash(text, raw.start).unwrap_or(raw.start)
                } else {
                    raw.start
                };
                stack.push(Frame {
                    start,
                    anchor_id,
                    tag: tag.map(|t| tag_text(&t.handle, &t.suffix)),
                    flow,
                    mapping: !starts_seq,
                    children: Vec::new(),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let frame = stack
                    .pop()
                    .ok_or(YamlError::Invalid("frontmatter is not valid YAML"))?;
                let last_child_end = frame.children.iter().map(|c| c.span.end).max();
                let end = if frame.flow {
                    // The end event starts at the closing bracket (at a trailing comma of a
                    // flow mapping, before it); its own end may run over trailing spaces and
                    // a comment.
                    let at = b.byte_span(span).start;
                    let close = text.get(at..).and_then(|r| {
                        r.bytes()
                            .position(|c| !matches!(c, b',' | b' ' | b'\t' | b'\r' | b'\n'))
                            .map(|p| at + p)
                    });
                    match close {
                        Some(c) if matches!(text.as_bytes().get(c), Some(b']' | b'}')) => c + 1,
                        _ => b.byte_span(span).end,
                    }
                } else {
                    last_child_end.unwrap_or(frame.start)
                };
                let end = end.max(last_child_end.unwrap_or(0)).max(frame.start);
                let is_mapping = matches!(ev, Event::MappingEnd);
                let kind = if is_mapping {
                    let mut entries = Vec::new();
                    let mut it = frame.children.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        entries.push((k, v));
                    }
                    check_mapping(&entries)?;
                    NodeKind::Mapping {
                        flow: frame.flow,
                        entries,
                    }
                } else {
                    NodeKind::Sequence {
                        flow: frame.flow,
                        items: frame.children,
                    }
                };
                let node = Node {
                    span: frame.start..end,
                    anchor: None,
                    tag: frame.tag,
                    kind,
                };
                let node = b.finish_node(node, frame.anchor_id)?;
                push_node(&mut stack, &mut root, node)?;
            }
        }
    }
    let line_starts = line_starts(text);
    let comments = find_comments(text, &b.opaque);
    let root = match root {
        None => None,
        Some(n) if matches!(n.kind, NodeKind::Mapping { .. }) => Some(n),
        Some(n) if n.is_null() && n.tag.is_none() && n.anchor.is_none() => None,
        Some(_) => return Err(YamlError::Invalid("frontmatter is not a mapping")),
    };
    Ok(Yaml {
        root,
        comments,
        line_starts,
    })
}

/// Duplicate keys (by semantic projection) and merge-key values (spec/store.md §3.4).
fn check_mapping(entries: &[(Node, Node)]) -> Result<(), YamlError> {
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

fn is_name_end(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}')
}

/// Byte offsets of line starts (after `\n`; a lone `\r` is not a line break here because the
/// documents this editor writes use LF or CRLF).
fn line_starts(text: &str) -> Vec<usize> {
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
fn find_comments(text: &str, opaque: &[Range<usize>]) -> Vec<Range<usize>> {
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

/// Skips leading `&anchor` / `!tag` properties and the blanks after them (line breaks too:
/// properties may stand on the line before their node).
fn skip_props(mut s: &str) -> &str {
    let mut any = false;
    loop {
        s = if any {
            s.trim_start_matches([' ', '\t', '\r', '\n'])
        } else {
            s.trim_start_matches([' ', '\t'])
        };
        if s.starts_with('&') || s.starts_with('!') {
            let end = s.find([' ', '\t', '\n', '\r']).unwrap_or(s.len());
            s = &s[end..];
            any = true;
        } else {
            return s;
        }
    }
}

fn tag_text(handle: &str, suffix: &str) -> String {
    if handle == "tag:yaml.org,2002:" {
        format!("!!{suffix}")
    } else {
        format!("{handle}{suffix}")
    }
}

struct Frame {
    start: usize,
    anchor_id: usize,
    tag: Option<String>,
    flow: bool,
    mapping: bool,
    children: Vec<Node>,
}

struct Builder<'a> {
    text: &'a str,
    char_to_byte: Vec<usize>,
    anchors: Vec<(usize, Node)>,
    anchor_names: Vec<String>,
    nodes: usize,
    aliases: usize,
    /// Byte ranges in which `#` cannot open a comment (scalar tokens, block scalar bodies).
    opaque: Vec<Range<usize>>,
}

impl Builder<'_> {
    fn byte_span(&self, span: Span) -> Range<usize> {
        let map = |i: usize| self.char_to_byte.get(i).copied().unwrap_or(self.text.len());
        let s = map(span.start.index());
        let e = map(span.end.index()).max(s);
        s..e
    }

    /// The exact byte span of a scalar token from saphyr's raw span (module docs, "Spans").
    fn scalar_span(&mut self, raw: Range<usize>, style: Style, empty: bool) -> Range<usize> {
        let text = self.text;
        let start = raw.start;
        let rest = text.get(start..).unwrap_or("");
        let has_props = rest.starts_with(['&', '!']);
        let content = if has_props {
            text.len() - skip_props(rest).len()
        } else {
            start
        };
        match style {
            Style::Plain => {
                if empty && !has_props && text.as_bytes().get(start) == Some(&b':') {
                    // saphyr places an empty value at its `:`; the value sits after it.
                    return start + 1..start + 1;
                }
                if empty
                    && !has_props
                    && matches!(text.as_bytes().get(start), Some(b',' | b']' | b'}'))
                {
                    // The implicit empty value of a flow entry (`{a, b}`): saphyr places it on
                    // the next separator or bracket, which is not its text.
                    return start..start;
                }
                let span = start..raw.end.max(start);
                self.opaque.push(content.min(span.end)..span.end);
                span
            }
            Style::SingleQuoted | Style::DoubleQuoted => {
                let end = quoted_end(text, content, style == Style::DoubleQuoted)
                    .unwrap_or(raw.end)
                    .max(start);
                self.opaque.push(content.min(end)..end);
                start..end
            }
            Style::Literal | Style::Folded => {
                let indicator = if has_props {
                    Some(content)
                } else {
                    block_indicator(text, start)
                };
                // The indicator must be a `|` or `>` of the text: after properties that end
                // the text (or where the parser's mark is elsewhere) there is none, and the
                // parser's own span is kept (found by the `editor` fuzz target).
                let Some(ind) =
                    indicator.filter(|&i| matches!(text.as_bytes().get(i), Some(b'|' | b'>')))
                else {
                    return raw;
                };
                let header_end = ind
                    + 1
                    + text
                        .get(ind + 1..)
                        .unwrap_or("")
                        .bytes()
                        .take_while(|c| matches!(c, b'-' | b'+' | b'0'..=b'9'))
                        .count();
                let span_start = if has_props { start } else { ind };
                if empty {
                    return span_start..header_end;
                }
                let body_end = raw.end.max(header_end).min(text.len());
                let trimmed = text
                    .get(..body_end)
                    .unwrap_or(text)
                    .trim_end_matches([' ', '\t', '\r', '\n'])
                    .len();
                let end = trimmed.max(header_end);
                let body_start = text
                    .get(header_end..)
                    .and_then(|t| t.find('\n'))
                    .map_or(text.len(), |i| header_end + i + 1);
                if body_start < end {
                    self.opaque.push(body_start..end);
                }
                span_start..end
            }
        }
    }

    fn finish_node(&mut self, mut node: Node, anchor_id: usize) -> Result<Node, YamlError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(YamlError::Limit("document exceeds the node limit"));
        }
        if anchor_id != 0 {
            let name = anchor_name_at(self.text, node.span.start);
            if let Some(n) = &name {
                if self.anchor_names.contains(n) {
                    return Err(YamlError::Graph("duplicate anchor name"));
                }
                self.anchor_names.push(n.clone());
            }
            node.anchor = name.or_else(|| Some(String::new()));
            self.anchors.push((anchor_id, node.clone()));
        }
        Ok(node)
    }
}

/// A block sequence that is a block mapping's value starts at the first dash of its first
/// line. saphyr starts the event of an indentless one (`key:` then `- item` in the key's
/// column) after that dash and the blanks, comment or nested dash following it; this returns
/// the line's leading dash. `None` when `start`'s line is not led by a block-entry dash at or
/// before `start` (an indented sequence's event is already at its dash; properties lead their
/// own line).
fn indentless_dash(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let start = start.min(bytes.len());
    let line_start = text[..start].rfind('\n').map_or(0, |p| p + 1);
    let dash = line_start + text[line_start..start].find(|c| c != ' ')?;
    (bytes[dash] == b'-'
        && matches!(
            bytes.get(dash + 1),
            None | Some(b' ' | b'\t' | b'\r' | b'\n')
        ))
    .then_some(dash)
}

/// End (exclusive) of the quoted scalar whose opening quote is at `open`.
fn quoted_end(text: &str, open: usize, double: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let q = if double { b'"' } else { b'\'' };
    if bytes.get(open) != Some(&q) {
        return None;
    }
    let mut i = open + 1;
    while i < bytes.len() {
        let c = bytes[i];
        if double && c == b'\\' {
            i += 2;
            continue;
        }
        if c == q {
            if !double && bytes.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Position of the `|` / `>` header indicator of a block scalar whose saphyr span starts at
/// `start` (its first content character, or where content would be when empty): the header is
/// on `start`'s line when something precedes `start` there, else on the nearest earlier
/// non-blank line. Within that line the indicator is the last `|`/`>` before any comment.
fn block_indicator(text: &str, start: usize) -> Option<usize> {
    let start = start.min(text.len());
    let mut line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let mut line_end = start;
    if text[line_start..start].trim().is_empty() {
        loop {
            if line_start == 0 {
                return None;
            }
            line_end = line_start - 1;
            line_start = text[..line_end].rfind('\n').map_or(0, |i| i + 1);
            if !text[line_start..line_end].trim().is_empty() {
                break;
            }
        }
    }
    let line = &text[line_start..line_end];
    let cut = line
        .match_indices('#')
        .find(|(i, _)| *i == 0 || line.as_bytes()[i - 1] == b' ' || line.as_bytes()[i - 1] == b'\t')
        .map_or(line.len(), |(i, _)| i);
    line[..cut].rfind(['|', '>']).map(|i| line_start + i)
}

/// Reads `&name` at or after `start` (before the node's content).
fn anchor_name_at(text: &str, start: usize) -> Option<String> {
    let s = text.get(start..)?;
    let mut rest = s;
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        if let Some(r) = rest.strip_prefix('&') {
            let end = r
                .find(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}'))
                .unwrap_or(r.len());
            return Some(r[..end].to_owned());
        }
        if rest.starts_with('!') {
            let end = rest.find([' ', '\t', '\n', '\r']).unwrap_or(rest.len());
            rest = &rest[end..];
            continue;
        }
        return None;
    }
}

fn count_nodes(n: &Node) -> usize {
    1 + match &n.kind {
        NodeKind::Scalar { .. } => 0,
        NodeKind::Mapping { entries, .. } => entries
            .iter()
            .map(|(k, v)| count_nodes(k) + count_nodes(v))
            .sum(),
        NodeKind::Sequence { items, .. } => items.iter().map(count_nodes).sum(),
        NodeKind::Alias { target } => count_nodes(target),
    }
}

fn push_node(stack: &mut [Frame], root: &mut Option<Node>, node: Node) -> Result<(), YamlError> {
    if let Some(top) = stack.last_mut() {
        top.children.push(node);
        Ok(())
    } else if root.is_none() {
        *root = Some(node);
        Ok(())
    } else {
        Err(YamlError::Invalid(
            "frontmatter holds more than one document",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aut_05_error_positions_are_line_and_column() {
        assert_eq!(error_position("a: 1\nb: [unclosed\n"), Some((3, 1)));
        assert_eq!(error_position("type: t\n  bad: x\n"), Some((2, 6)));
        assert_eq!(error_position("a: 1\nb: 2\na: 3\n"), Some((3, 1)));
        assert_eq!(error_position("m:\n  k: 1\n  k: 2\n"), Some((3, 3)));
        assert_eq!(error_position("- a\n- b\n"), Some((1, 1)));
        assert_eq!(error_position("just a scalar"), Some((1, 1)));
        assert_eq!(error_position("a: 1\n---\nb: 2\n"), Some((2, 1)));
        assert_eq!(error_position("a: 1\nb: 2\n"), None);
        assert_eq!(
            error_position_text("a: 1\na: 2\n", 1),
            " (line 3, column 1)"
        );
    }

    /// Debug builds and every build with `yaml-tripwire` (`.ci/run` tests with it) carry the
    /// tripwire: it panics on a tree that differs from the full parser's and stays quiet on
    /// the right one. Fails if the comparison were compiled out of such a build.
    #[cfg(any(debug_assertions, feature = "yaml-tripwire"))]
    #[test]
    fn tripwire_is_armed_in_debug_and_with_the_feature() {
        let text = "a: 1\n";
        let right = parse_full(text).unwrap();
        tripwire(text, &right);
        let mut wrong = right.clone();
        wrong.root = None;
        let fired = std::panic::catch_unwind(|| tripwire(text, &wrong));
        assert!(fired.is_err(), "the tripwire let a differing tree through");
    }

    /// A release build without `yaml-tripwire` (`cargo test --release`) compiles the
    /// comparison out: a differing tree passes unnoticed.
    #[cfg(not(any(debug_assertions, feature = "yaml-tripwire")))]
    #[test]
    fn tripwire_is_compiled_out_of_a_plain_release_build() {
        let text = "a: 1\n";
        let mut wrong = parse_full(text).unwrap();
        wrong.root = None;
        tripwire(text, &wrong);
    }

    #[test]
    fn scalars_keep_text_and_spans_are_bytes() {
        let src = "title: Ünïcode — x\nv: 1.10\nn: 0012\ntags: [a, \"b\"]\n";
        let y = parse(src).unwrap();
        let root = y.root.unwrap();
        let t = root.get("title").unwrap();
        assert_eq!(&src[t.span.clone()], "Ünïcode — x");
        assert_eq!(root.get("v").unwrap().scalar_text(), Some("1.10"));
        assert_eq!(root.get("n").unwrap().resolved(), Some(Resolved::Int(12)));
        let tags = root.get("tags").unwrap();
        assert!(matches!(tags.kind, NodeKind::Sequence { flow: true, .. }));
        assert_eq!(&src[tags.span.clone()], "[a, \"b\"]");
    }

    #[test]
    fn faults() {
        assert_eq!(parse("a: 1\na: 2\n"), Err(YamlError::DuplicateKey));
        assert!(matches!(parse("- a\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("a: [\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(
            parse("a: &x 1\nb: &x 2\n"),
            Err(YamlError::Graph(_))
        ));
        assert!(matches!(parse("a: *nope\n"), Err(YamlError::Graph(_))));
        assert_eq!(parse("").unwrap().root, None);
    }

    #[test]
    fn block_sequences_under_a_key_start_at_their_first_dash() {
        let src = "a:\n- x\nb:\n- [1]\nc:\n- - y\nd:\n- # c\n  k: 1\ne: &p\n  [1]: 2\n";
        let y = parse_full(src).unwrap();
        let r = y.root.unwrap();
        let at = |k: &str| &src[r.get(k).unwrap().span.clone()];
        assert_eq!(at("a"), "- x");
        assert_eq!(at("b"), "- [1]");
        assert!(!r.get("b").unwrap().is_flow());
        assert_eq!(at("c"), "- - y");
        assert_eq!(at("d"), "- # c\n  k: 1");
        // A property line before a block mapping whose first key is a flow sequence.
        let e = r.get("e").unwrap();
        assert!(!e.is_flow());
        assert_eq!(at("e"), "&p\n  [1]: 2");
    }

    #[test]
    fn flow_mapping_spans_with_trailing_commas_and_implicit_values() {
        let src = "x: {a: b,}\ny: {a: {b: c,},}\nz: [{a: b, }]\nw: {a, b}\nv: {c}\n";
        let y = parse_full(src).unwrap();
        let r = y.root.unwrap();
        let at = |n: &Node| &src[n.span.clone()];
        assert_eq!(at(r.get("x").unwrap()), "{a: b,}");
        assert_eq!(at(r.get("y").unwrap()), "{a: {b: c,},}");
        assert_eq!(at(r.get("y").unwrap().get("a").unwrap()), "{b: c,}");
        assert_eq!(at(&r.get("z").unwrap().items().unwrap()[0]), "{a: b, }");
        for k in ["w", "v"] {
            let m = r.get(k).unwrap();
            for (key, value) in m.entries().unwrap() {
                assert!(value.is_null());
                assert!(value.span.is_empty(), "{k}.{:?}", key.scalar_text());
                assert_eq!(value.span.start, key.span.end);
            }
        }
    }

    #[test]
    fn alias_bomb_hits_the_limit() {
        let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            s.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n",
                p = i - 1
            ));
        }
        assert!(matches!(parse(&s), Err(YamlError::Limit(_))));
    }
}

#[cfg(test)]
mod span_tests {
    use super::*;

    fn root(src: &str) -> (Yaml, Node) {
        let y = parse(src).unwrap();
        let r = y.root.clone().unwrap();
        (y, r)
    }

    fn at<'a>(src: &'a str, n: &Node) -> &'a str {
        &src[n.span.clone()]
    }

    /// Found by the `editor` fuzz target (fuzz/regressions/editor/): a block-scalar event
    /// whose properties end where no `|` or `>` follows sliced past the end of the text.
    #[test]
    fn block_scalar_properties_without_an_indicator_do_not_panic() {
        for src in [
            "\r|\r!|\r!\u{0}_p \t",
            "\r|\r!|\r!",
            "a: !t |\n",
            "a: &x !t >-\n  b\n",
            "!|",
            "! |",
        ] {
            // Either answer is fine; only a panic is not.
            let _ = parse(src);
            let _ = parse_full(src);
        }
    }

    #[test]
    fn quoted_scalar_spans_cover_quotes_not_comments() {
        let src = "a: \"q\\\"x\" # c\nb: 'it''s'   # z\nc: [ \"y\" , 'w' ]\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("a").unwrap()), "\"q\\\"x\"");
        assert_eq!(at(src, r.get("b").unwrap()), "'it''s'");
        let items = r.get("c").unwrap().items().unwrap();
        assert_eq!(at(src, &items[0]), "\"y\"");
        assert_eq!(at(src, &items[1]), "'w'");
        assert_eq!(at(src, r.get("c").unwrap()), "[ \"y\" , 'w' ]");
        let comments: Vec<&str> = y.comments.iter().map(|c| &src[c.clone()]).collect();
        assert_eq!(comments, ["# c", "# z"]);
    }

    #[test]
    fn block_scalar_spans_start_at_the_indicator() {
        let src = "c: |\n  lit\n  more\n\n# after\nd: >-  # hdr\n  fold\ne: &x !!str |\n  t\nf: |\ng: 1\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("c").unwrap()), "|\n  lit\n  more");
        assert_eq!(at(src, r.get("d").unwrap()), ">-  # hdr\n  fold");
        let e = r.get("e").unwrap();
        assert_eq!(at(src, e), "&x !!str |\n  t");
        assert_eq!(e.anchor.as_deref(), Some("x"));
        assert_eq!(e.tag.as_deref(), Some("!!str"));
        assert_eq!(at(src, r.get("f").unwrap()), "|");
        let comments: Vec<&str> = y.comments.iter().map(|c| &src[c.clone()]).collect();
        assert_eq!(comments, ["# after", "# hdr"]);
    }

    #[test]
    fn hash_inside_scalars_is_not_a_comment() {
        let src = "a: \"x # y\"\nb: x#y\nc: |\n  # not a comment\nd: 'p # q' # real\n";
        let (y, _) = root(src);
        let comments: Vec<&str> = y.comments.iter().map(|c| &src[c.clone()]).collect();
        assert_eq!(comments, ["# real"]);
    }

    #[test]
    fn block_collection_spans_exclude_trailing_comment_lines() {
        let src = "g:\n  - 1\n  # inner\n  - 2\n# tail\nh:\n  k: v  # c\n\n# t2\nz: 1\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("g").unwrap()), "- 1\n  # inner\n  - 2");
        assert_eq!(at(src, r.get("h").unwrap()), "k: v");
        assert!(y.has_comment_in(&r.get("g").unwrap().span));
        assert!(!y.has_comment_in(&r.get("h").unwrap().span));
        assert_eq!(y.line_of(src.find("z:").unwrap()), 9);
        assert_eq!(y.line_starts[1], 3);
    }

    #[test]
    fn flow_collection_spans_end_at_the_bracket() {
        let src = "e: [a, b] # c\nf: {x: \"y\" , z: 'w'  }   \ng: &an [1]\n";
        let (_, r) = root(src);
        assert_eq!(at(src, r.get("e").unwrap()), "[a, b]");
        assert_eq!(at(src, r.get("f").unwrap()), "{x: \"y\" , z: 'w'  }");
        let g = r.get("g").unwrap();
        assert_eq!(at(src, g), "&an [1]");
        assert!(g.is_flow());
        let (k, v) = &r.get("f").unwrap().entries().unwrap()[1];
        assert_eq!(at(src, k), "z");
        assert_eq!(at(src, v), "'w'");
    }

    #[test]
    fn cjk_em_dash_crlf_and_bom_text() {
        let src = "ü: Ünï — 中文 # ç\r\nk: \"日本\"\r\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("ü").unwrap()), "Ünï — 中文");
        assert_eq!(at(src, r.get("k").unwrap()), "\"日本\"");
        assert_eq!(&src[y.comments[0].clone()], "# ç");
        // A BOM left in the frontmatter text is not YAML content at a key position.
        let bom = "\u{feff}a: 1\n";
        let y = parse(bom).unwrap();
        let a = y.root.unwrap();
        assert_eq!(&bom[a.get("a").unwrap().span.clone()], "1");
    }

    #[test]
    fn tricky_scalars_stay_text() {
        let src = "a: yes\nb: 0012\nc: 1.10\nd: ~\nempty:\nf: 2026-01-01\ng: on\n";
        let (_, r) = root(src);
        assert_eq!(r.get("a").unwrap().as_str(), Some("yes"));
        assert_eq!(r.get("b").unwrap().scalar_text(), Some("0012"));
        assert_eq!(r.get("c").unwrap().scalar_text(), Some("1.10"));
        assert!(r.get("d").unwrap().is_null());
        let e = r.get("empty").unwrap();
        assert!(e.is_null());
        assert_eq!(e.span, 34..34);
        assert_eq!(r.get("f").unwrap().as_str(), Some("2026-01-01"));
        assert_eq!(r.get("g").unwrap().as_str(), Some("on"));
        assert_ne!(r.get("c").unwrap().value(), Value::plain("1.1"));
        assert_eq!(r.get("d").unwrap().value(), Value::plain("null"));
    }

    #[test]
    fn multi_line_plain_and_quoted_spans() {
        let src = "d: multi\n  line plain\nc: \"m\n  n\"\nz: 1\n";
        let (_, r) = root(src);
        assert_eq!(at(src, r.get("d").unwrap()), "multi\n  line plain");
        assert_eq!(at(src, r.get("c").unwrap()), "\"m\n  n\"");
    }

    #[test]
    fn sequence_items_and_alias_spans() {
        let src = "s:\n- a\n-\n  id: 1\n- id: 2\n  t: 3\nx: &k v\ny: *k\n";
        let (_, r) = root(src);
        let items = r.get("s").unwrap().items().unwrap();
        assert_eq!(at(src, &items[1]), "id: 1");
        assert_eq!(at(src, &items[2]), "id: 2\n  t: 3");
        let (_, y) = r.entries().unwrap().last().unwrap();
        assert_eq!(at(src, y), "*k");
        assert_eq!(y.value(), Value::str("v"));
        assert!(y.has_props_inside());
    }

    #[test]
    fn rev_07_resource_limits() {
        let big = format!("a: {}\n", "x".repeat(MAX_FRONTMATTER_BYTES));
        assert!(matches!(parse(&big), Err(YamlError::Limit(_))));
        let deep = format!("a: {}{}\n", "[".repeat(65), "]".repeat(65));
        assert!(matches!(parse(&deep), Err(YamlError::Limit(_))));
        let ok = format!("a: {}{}\n", "[".repeat(63), "]".repeat(63));
        assert!(parse(&ok).is_ok());
        let very_deep = format!("a: {}{}\n", "[".repeat(5000), "]".repeat(5000));
        assert!(matches!(parse(&very_deep), Err(YamlError::Limit(_))));
        let mut many = String::from("a: &a x\nb: [");
        for _ in 0..1001 {
            many.push_str("*a, ");
        }
        many.push_str("]\n");
        assert_eq!(parse(&many), Err(YamlError::Limit("too many aliases")));
        let mut nodes = String::from("a: [");
        for _ in 0..100_001 {
            nodes.push_str("1,");
        }
        nodes.push_str("]\n");
        assert!(matches!(parse(&nodes), Err(YamlError::Limit(_))));
    }

    #[test]
    fn rev_07_graph_faults() {
        assert_eq!(
            parse("a: &x 1\nb: &x 2\n"),
            Err(YamlError::Graph("duplicate anchor name"))
        );
        assert!(matches!(parse("a: *nope\n"), Err(YamlError::Graph(_))));
        assert!(matches!(parse("<<: 1\n"), Err(YamlError::Graph(_))));
        assert!(matches!(
            parse("b: &m [1]\n<<: *m\n"),
            Err(YamlError::Graph(_))
        ));
        assert!(matches!(
            parse("m: {<<: [{a: 1}, 2]}\n"),
            Err(YamlError::Graph(_))
        ));
        assert!(parse("b: &m {a: 1}\nc:\n  <<: *m\n  d: 2\n").is_ok());
        assert!(parse("b: &m {a: 1}\nc:\n  <<: [*m, {e: 1}]\n").is_ok());
        // A quoted `<<` is an ordinary key.
        assert!(parse("\"<<\": 1\n").is_ok());
    }

    #[test]
    fn duplicate_keys_at_every_level() {
        assert_eq!(parse("a: 1\na: 2\n"), Err(YamlError::DuplicateKey));
        assert_eq!(
            parse("g:\n  by: x\n  by: y\n"),
            Err(YamlError::DuplicateKey)
        );
        assert_eq!(parse("g: {by: x, by: y}\n"), Err(YamlError::DuplicateKey));
        assert_eq!(
            parse("s:\n  - a: 1\n    a: 2\n"),
            Err(YamlError::DuplicateKey)
        );
        assert_eq!(parse("a: 1\n\"a\": 2\n"), Err(YamlError::DuplicateKey));
        assert_eq!(
            parse("? [x]\n: 1\n? [x]\n: 2\n"),
            Err(YamlError::DuplicateKey)
        );
        assert!(parse("a: 1\nb: {a: 1}\n").is_ok());
    }

    #[test]
    fn invalid_documents() {
        assert!(matches!(parse("- a\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("just text\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("a: [\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(
            parse("a: 1\n---\nb: 2\n"),
            Err(YamlError::Invalid(_))
        ));
        assert!(matches!(parse("a: \"x\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("a:\n\t- b\n"), Err(YamlError::Invalid(_))));
        assert_eq!(parse("# only a comment\n").unwrap().root, None);
        assert_eq!(parse("# only a comment\n").unwrap().comments, vec![0..16]);
    }
}
