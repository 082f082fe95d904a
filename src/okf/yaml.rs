//! YAML 1.2 frontmatter parsing into a node tree with **byte** spans (spec/surface.md §13.1
//! rule 3, spec/store.md §3.4–§3.5, spec/concept-patch.md §4.1).
//!
//! Built on the event parser of `saphyr-parser`, whose markers count characters; this module
//! maps them to byte offsets of the frontmatter text. Scalars keep their decoded value and
//! style, so `1.10`, `0012`, `yes` and dates stay text (resolution happens only on request
//! through [`Node::resolved`]).

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
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
/// # Errors
/// [`YamlError`] as documented on its variants.
pub fn parse(text: &str) -> Result<Yaml, YamlError> {
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
    };
    let mut parser = Parser::new_from_str(text);
    let mut root: Option<Node> = None;
    let mut docs = 0;
    let mut stack: Vec<Frame> = Vec::new();
    while let Some(ev) = parser.next_event() {
        let (ev, span) = ev.map_err(|e| {
            if e.info().contains("unknown anchor") {
                YamlError::Graph("alias to an undefined anchor")
            } else {
                YamlError::Invalid("frontmatter is not valid YAML")
            }
        })?;
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
                let node = Node {
                    span: b.byte_span(span),
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
                let node = Node {
                    span: b.byte_span(span),
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
                let start = b.byte_span(span).start;
                let flow = text.get(start..).is_some_and(|s| {
                    let s = skip_props(s);
                    s.starts_with('[') || s.starts_with('{')
                });
                stack.push(Frame {
                    start,
                    anchor_id,
                    tag: tag.map(|t| tag_text(&t.handle, &t.suffix)),
                    flow,
                    children: Vec::new(),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let frame = stack
                    .pop()
                    .ok_or(YamlError::Invalid("frontmatter is not valid YAML"))?;
                let end = b
                    .byte_span(span)
                    .end
                    .max(frame.children.last().map_or(frame.start, |c| c.span.end));
                let is_mapping = matches!(ev, Event::MappingEnd);
                let kind = if is_mapping {
                    let mut entries = Vec::new();
                    let mut it = frame.children.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        entries.push((k, v));
                    }
                    for (i, (k, _)) in entries.iter().enumerate() {
                        let kt = k.scalar_text();
                        if kt.is_some() && entries[..i].iter().any(|(p, _)| p.scalar_text() == kt) {
                            return Err(YamlError::DuplicateKey);
                        }
                    }
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
    match &root {
        None => Ok(Yaml { root: None }),
        Some(n) if matches!(n.kind, NodeKind::Mapping { .. }) => Ok(Yaml { root }),
        Some(n) if n.is_null() => Ok(Yaml { root: None }),
        Some(_) => Err(YamlError::Invalid("frontmatter is not a mapping")),
    }
}

fn skip_props(mut s: &str) -> &str {
    loop {
        s = s.trim_start_matches([' ', '\t']);
        if s.starts_with('&') || s.starts_with('!') {
            let end = s.find([' ', '\t', '\n', '\r']).unwrap_or(s.len());
            s = &s[end..];
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
    children: Vec<Node>,
}

struct Builder<'a> {
    text: &'a str,
    char_to_byte: Vec<usize>,
    anchors: Vec<(usize, Node)>,
    anchor_names: Vec<String>,
    nodes: usize,
    aliases: usize,
}

impl Builder<'_> {
    fn byte_span(&self, span: Span) -> Range<usize> {
        let map = |i: usize| self.char_to_byte.get(i).copied().unwrap_or(self.text.len());
        let s = map(span.start.index());
        let e = map(span.end.index()).max(s);
        s..e
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
