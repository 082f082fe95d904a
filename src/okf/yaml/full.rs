//! The full parser: frontmatter through the event parser of `saphyr-parser` (every input the
//! fast path hands on, and every error), and [`error_position`] for refused frontmatter.

use super::tree::{
    check_mapping, find_comments, line_starts, Node, NodeKind, Style, Yaml, YamlError, MAX_ALIASES,
    MAX_DEPTH, MAX_FRONTMATTER_BYTES, MAX_NODES, MAX_SCALAR_BYTES,
};
use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::ops::Range;

/// Where a frontmatter text that [`parse`] refuses goes wrong, as a 1-based `(line, column)`
/// of `text` (column in characters), for messages (spec/surface.md §18.3 rule 3): the
/// position of a syntax error, of the second document's start, of a duplicate key (keys
/// compared by their scalar text), or of a root that is not a mapping. `None` when none of
/// these is found (e.g. keys that are duplicates only after resolution, such as `~` and
/// `null`, or a resource-limit fault). Pure; reads no document text into its result.
///
/// [`parse`]: super::parse
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
///
/// [`parse`]: super::parse
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

fn is_name_end(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}')
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
