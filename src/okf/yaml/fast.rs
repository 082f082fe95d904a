//! The fast path of [`super::parse`]: a direct scanner for the plain subset of YAML that most
//! frontmatter is written in (docs/bench.md, "first call of a process").
//!
//! It reads block mappings and block sequences laid out with spaces, plain scalars (several
//! lines allowed), single-line quoted scalars without escapes, and single-line flow sequences
//! and mappings of such scalars, and builds exactly the [`Yaml`] the event-parser path builds:
//! the same nodes, spans, comments and line table.
//!
//! It **never decides anything on its own**: on any input outside that subset — tabs, CR,
//! anchors, tags, aliases, block scalars, escapes, explicit keys, document markers, odd
//! indentation, duplicate keys, empty sequence items, anything it is unsure of — it returns
//! `None` and the caller runs the full parser, which also produces every error. So the fast
//! path can only ever be slower to give up, never give another answer; the differential tests
//! below (and a debug-build tripwire in [`super::parse`]) check that every tree it accepts is
//! equal to the full parser's tree.

use super::tree::{check_mapping, find_comments, line_starts, Node, NodeKind, Style, Yaml};
use std::ops::Range;

/// Deeper nesting goes to the full parser (which enforces the real limit, 64).
const MAX_DEPTH: usize = 24;
/// More nodes go to the full parser (which enforces the real limit, 100,000).
const MAX_NODES: usize = 20_000;
/// Longer implicit keys go to the full parser (YAML caps implicit keys at 1,024 characters).
const MAX_KEY_BYTES: usize = 512;

/// Parses `text` when it lies in the fast subset; `None` means "ask the full parser".
pub(super) fn parse(text: &str) -> Option<Yaml> {
    if !admissible(text.as_bytes()) {
        return None;
    }
    let line_starts = line_starts(text);
    let mut p = Scanner {
        s: text,
        t: text.as_bytes(),
        pos: 0,
        nodes: 0,
        // Mostly a key and a value per line: one allocation for the usual document (capped:
        // a long text of blank or comment lines records few ranges).
        opaque: Vec::with_capacity((2 * line_starts.len()).min(512)),
    };
    let root = match p.next_content(0) {
        None => None,
        Some((ls, fc)) => {
            if fc != ls || p.is_dash(fc) {
                return None;
            }
            let root = p.block_map(0, fc, 1)?;
            if p.next_content(p.pos).is_some() {
                return None;
            }
            Some(root)
        }
    };
    let comments = find_comments(text, &p.opaque);
    Some(Yaml {
        root,
        comments,
        line_starts,
    })
}

/// Only LF line breaks, no tabs, no control characters, and none of the code points whose
/// YAML treatment is special (C1 controls incl. NEL, U+2028/2029, BOM, U+FFFE/FFFF).
fn admissible(t: &[u8]) -> bool {
    // Branch-free over the whole text (vectorised), the common all-printable-ASCII case.
    let outside = t.iter().fold(0u8, |acc, &c| {
        acc | u8::from(!((0x20..0x7f).contains(&c) || c == b'\n'))
    });
    if outside == 0 {
        return true;
    }
    let mut i = 0;
    while i < t.len() {
        let c = t[i];
        match c {
            b'\n' | 0x20..=0x7e => {}
            0xc2 => {
                if matches!(t.get(i + 1), Some(0x80..=0x9f)) {
                    return false;
                }
            }
            0xe2 => {
                if t.get(i + 1) == Some(&0x80) && matches!(t.get(i + 2), Some(0xa8 | 0xa9)) {
                    return false;
                }
            }
            0xef => {
                let (a, b) = (t.get(i + 1), t.get(i + 2));
                if (a == Some(&0xbb) && b == Some(&0xbf))
                    || (a == Some(&0xbf) && matches!(b, Some(0xbe | 0xbf)))
                {
                    return false;
                }
            }
            0x80..=0xff => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

/// Characters that may not start a plain scalar in this subset (YAML indicators, plus `-`,
/// `?` and `:`, whose plain uses are left to the full parser except `-` before a digit).
fn bad_plain_start(t: &[u8], i: usize) -> bool {
    match t[i] {
        b'-' => !t.get(i + 1).is_some_and(u8::is_ascii_digit),
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' => true,
        _ => false,
    }
}

/// A byte allowed inside a block-mapping key of this subset.
fn key_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/' | b' ') || c >= 0x80
}

struct Scanner<'a> {
    s: &'a str,
    t: &'a [u8],
    /// Start of the first line not consumed yet.
    pos: usize,
    nodes: usize,
    /// Scalar token ranges (where `#` opens no comment), as the full parser records them.
    opaque: Vec<Range<usize>>,
}

impl Scanner<'_> {
    fn line_end(&self, i: usize) -> usize {
        let i = i.min(self.t.len());
        memchr::memchr(b'\n', &self.t[i..]).map_or(self.t.len(), |p| i + p)
    }

    /// Start of the line after the one ending at `le`.
    fn after(&self, le: usize) -> usize {
        (le + 1).min(self.t.len())
    }

    fn skip_spaces(&self, mut i: usize) -> usize {
        while i < self.t.len() && self.t[i] == b' ' {
            i += 1;
        }
        i
    }

    fn at_eol(&self, i: usize) -> bool {
        i >= self.t.len() || self.t[i] == b'\n'
    }

    /// `-` followed by a space or a line end: a block sequence entry.
    fn is_dash(&self, i: usize) -> bool {
        self.t.get(i) == Some(&b'-')
            && (i + 1 >= self.t.len() || matches!(self.t[i + 1], b' ' | b'\n'))
    }

    /// The next line from `pos` that is neither blank nor a comment line: `(line start, first
    /// non-space byte)`.
    fn next_content(&self, mut ls: usize) -> Option<(usize, usize)> {
        while ls < self.t.len() {
            let le = self.line_end(ls);
            let fc = self.skip_spaces(ls);
            if fc < le && self.t[fc] != b'#' {
                return Some((ls, fc));
            }
            ls = self.after(le);
        }
        None
    }

    /// After a value ending at `i`: only spaces, then a line end or a space-led comment.
    /// Returns the line end.
    fn rest_of_line(&self, i: usize) -> Option<usize> {
        let j = self.skip_spaces(i);
        if self.at_eol(j) {
            return Some(j);
        }
        if self.t[j] == b'#' && j > i {
            return Some(self.line_end(j));
        }
        None
    }

    fn count(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    fn scalar(&mut self, span: Range<usize>, text: String, style: Style) -> Option<Node> {
        self.count()?;
        if !span.is_empty() {
            self.opaque.push(span.clone());
        }
        Some(Node {
            span,
            anchor: None,
            tag: None,
            kind: NodeKind::Scalar { text, style },
        })
    }

    /// A block mapping whose first key starts at `first`, in column `col`.
    fn block_map(&mut self, col: usize, first: usize, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.count()?;
        let mut entries: Vec<(Node, Node)> = Vec::new();
        let mut key_pos = first;
        loop {
            let colon = self.block_key(key_pos)?;
            let key = self.scalar(
                key_pos..colon,
                self.s[key_pos..colon].to_owned(),
                Style::Plain,
            )?;
            let i = self.skip_spaces(colon + 1);
            let value = if self.at_eol(i) || self.t[i] == b'#' {
                self.pos = self.after(self.line_end(i));
                self.nested(col, colon, depth)?
            } else {
                self.inline_value(i, col, depth + 1)?
            };
            entries.push((key, value));
            let Some((ls, fc)) = self.next_content(self.pos) else {
                break;
            };
            let ind = fc - ls;
            if ind < col {
                break;
            }
            if ind > col || self.is_dash(fc) {
                return None;
            }
            key_pos = fc;
        }
        check_mapping(&entries).ok()?;
        let start = entries.first().map_or(first, |(k, _)| k.span.start);
        let end = entries
            .iter()
            .map(|(k, v)| k.span.end.max(v.span.end))
            .max()
            .unwrap_or(start);
        Some(Node {
            span: start..end,
            anchor: None,
            tag: None,
            kind: NodeKind::Mapping {
                flow: false,
                entries,
            },
        })
    }

    /// The value of a key whose line ends after its `:` (at `colon`): a block collection on
    /// the following lines, or an empty scalar.
    fn nested(&mut self, col: usize, colon: usize, depth: usize) -> Option<Node> {
        if let Some((ls, fc)) = self.next_content(self.pos) {
            let ind = fc - ls;
            if ind > col {
                return if self.is_dash(fc) {
                    self.block_seq(ind, fc, depth + 1)
                } else {
                    self.block_map(ind, fc, depth + 1)
                };
            }
            if ind == col && self.is_dash(fc) {
                return self.block_seq(ind, fc, depth + 1);
            }
        }
        self.scalar(colon + 1..colon + 1, String::new(), Style::Plain)
    }

    /// A block-mapping key at `i`: plain, one line, made of [`key_byte`]s, directly followed
    /// by `:` and a space or a line end. Returns the position of the `:`.
    fn block_key(&self, i: usize) -> Option<usize> {
        let t = self.t;
        if !(t[i].is_ascii_alphanumeric() || t[i] == b'_' || t[i] >= 0x80) {
            return None;
        }
        let mut j = i;
        while j < t.len() && t[j] != b':' {
            if !key_byte(t[j]) {
                return None;
            }
            j += 1;
        }
        if j >= t.len()
            || j - i > MAX_KEY_BYTES
            || t[j - 1] == b' '
            || !(j + 1 >= t.len() || matches!(t[j + 1], b' ' | b'\n'))
        {
            return None;
        }
        Some(j)
    }

    /// Whether the entry text at `i` reads as `key: …` (a compact mapping in a sequence).
    fn looks_like_key(&self, i: usize) -> bool {
        let le = self.line_end(i);
        let mut j = i;
        while j < le {
            match self.t[j] {
                b':' if j + 1 >= le || self.t[j + 1] == b' ' => return true,
                b'#' if self.t[j - 1] == b' ' => return false,
                _ => {}
            }
            j += 1;
        }
        false
    }

    /// A block sequence whose first `-` is at `first`, in column `col`.
    fn block_seq(&mut self, col: usize, first: usize, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.count()?;
        let mut items: Vec<Node> = Vec::new();
        let mut dash = first;
        loop {
            let i = self.skip_spaces(dash + 1);
            let item = if self.at_eol(i) || self.t[i] == b'#' {
                self.pos = self.after(self.line_end(i));
                let (ls, fc) = self.next_content(self.pos)?;
                let ind = fc - ls;
                if ind <= col {
                    return None;
                }
                if self.is_dash(fc) {
                    self.block_seq(ind, fc, depth + 1)?
                } else {
                    self.block_map(ind, fc, depth + 1)?
                }
            } else if self.is_dash(i) {
                return None;
            } else if !matches!(self.t[i], b'"' | b'\'' | b'[' | b'{') && self.looks_like_key(i) {
                let ls = self.s[..i].rfind('\n').map_or(0, |p| p + 1);
                self.block_map(i - ls, i, depth + 1)?
            } else {
                self.inline_value(i, col, depth + 1)?
            };
            items.push(item);
            let Some((ls, fc)) = self.next_content(self.pos) else {
                break;
            };
            let ind = fc - ls;
            if ind < col || (ind == col && !self.is_dash(fc)) {
                break;
            }
            if ind > col {
                return None;
            }
            dash = fc;
        }
        let end = items.iter().map(|n| n.span.end).max().unwrap_or(first);
        Some(Node {
            span: first..end,
            anchor: None,
            tag: None,
            kind: NodeKind::Sequence { flow: false, items },
        })
    }

    /// A value written on its key's (or dash's) line at `i`; continuation lines of a plain
    /// scalar must be indented deeper than `parent`. Consumes through its last line.
    fn inline_value(&mut self, i: usize, parent: usize, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (node, end) = match self.t[i] {
            b'"' | b'\'' => self.quoted(i)?,
            b'[' => self.flow_seq(i)?,
            b'{' => self.flow_map(i)?,
            _ if bad_plain_start(self.t, i) => return None,
            _ => return self.plain_block(i, parent),
        };
        let le = self.rest_of_line(end)?;
        self.pos = self.after(le);
        Some(node)
    }

    /// One line of a plain scalar from `i` to `le`: its trimmed end, and whether a comment
    /// ended it. `None` on `: ` or a trailing `:` (a mapping where none may start).
    fn plain_line(&self, i: usize, le: usize) -> Option<(usize, bool)> {
        let t = self.t;
        let mut j = i;
        let mut comment = false;
        while j < le {
            match t[j] {
                b':' if j + 1 >= le || t[j + 1] == b' ' => return None,
                b'#' if j > i && t[j - 1] == b' ' => {
                    comment = true;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        while j > i && t[j - 1] == b' ' {
            j -= 1;
        }
        Some((j, comment))
    }

    /// A plain scalar in block context starting at `i`.
    fn plain_block(&mut self, i: usize, parent: usize) -> Option<Node> {
        let le = self.line_end(i);
        let (mut end, comment) = self.plain_line(i, le)?;
        let mut text = self.s[i..end].to_owned();
        let mut next = self.after(le);
        if !comment {
            while next < self.t.len() {
                let le2 = self.line_end(next);
                let fc = self.skip_spaces(next);
                if fc >= le2 {
                    // A blank line: a deeper line after it would continue the scalar with a
                    // folded line break; leave that to the full parser.
                    if let Some((ls, fc)) = self.next_content(next) {
                        if fc - ls > parent {
                            return None;
                        }
                    }
                    break;
                }
                if fc - next <= parent || self.t[fc] == b'#' {
                    break;
                }
                if bad_plain_start(self.t, fc) {
                    return None;
                }
                let (e, c) = self.plain_line(fc, le2)?;
                if c {
                    return None;
                }
                text.push(' ');
                text.push_str(&self.s[fc..e]);
                end = e;
                next = self.after(le2);
            }
        }
        self.pos = next;
        self.scalar(i..end, text, Style::Plain)
    }

    /// A one-line quoted scalar without escapes at `i`; returns it and the end of its token.
    fn quoted(&mut self, i: usize) -> Option<(Node, usize)> {
        let t = self.t;
        let q = t[i];
        let mut text = String::new();
        let mut j = i + 1;
        let mut run = j;
        loop {
            let c = *t.get(j)?;
            if c == b'\n' || (q == b'"' && c == b'\\') {
                return None;
            }
            if c == q {
                text.push_str(&self.s[run..j]);
                if q == b'\'' && t.get(j + 1) == Some(&b'\'') {
                    text.push('\'');
                    j += 2;
                    run = j;
                    continue;
                }
                break;
            }
            j += 1;
        }
        let style = if q == b'"' {
            Style::DoubleQuoted
        } else {
            Style::SingleQuoted
        };
        let node = self.scalar(i..j + 1, text, style)?;
        Some((node, j + 1))
    }

    /// A plain scalar inside a one-line flow collection, from `i` up to `,` or `close`; as a
    /// key (`key`), up to a `:` followed by a space. Returns it and where it stops.
    fn plain_flow(&mut self, i: usize, close: u8, key: bool) -> Option<(Node, usize)> {
        let t = self.t;
        if bad_plain_start(t, i) {
            return None;
        }
        let mut j = i;
        loop {
            let c = *t.get(j)?;
            match c {
                b'\n' | b'[' | b'{' | b']' | b'}' if c != close => return None,
                // A key must end at `: `; `{a, b}` and `{a}` hold keys without values.
                b',' if key => return None,
                _ if c == close && key => return None,
                b',' => break,
                _ if c == close => break,
                b'#' if t[j - 1] == b' ' => return None,
                // saphyr rejects ` -` before a flow indicator; leave such text to it.
                b'-' if t[j - 1] == b' '
                    && !t.get(j + 1).is_some_and(u8::is_ascii_alphanumeric) =>
                {
                    return None
                }
                b':' => match t.get(j + 1) {
                    Some(b' ') if key => break,
                    Some(b' ' | b',' | b']' | b'}' | b'\n') | None => return None,
                    _ => {}
                },
                _ => {}
            }
            j += 1;
        }
        let stop = j;
        while j > i && t[j - 1] == b' ' {
            j -= 1;
        }
        if j == i || (key && j != stop) {
            return None;
        }
        let node = self.scalar(i..j, self.s[i..j].to_owned(), Style::Plain)?;
        Some((node, stop))
    }

    /// A flow item: quoted or plain.
    fn flow_scalar(&mut self, i: usize, close: u8) -> Option<(Node, usize)> {
        match self.t.get(i)? {
            b'"' | b'\'' => self.quoted(i),
            _ => self.plain_flow(i, close, false),
        }
    }

    /// After a flow item ending at `i`: `,` then the next item, or the closing bracket.
    /// Returns `(next item position, closed)`.
    fn flow_sep(&self, i: usize, close: u8) -> Option<(usize, bool)> {
        let j = self.skip_spaces(i);
        match *self.t.get(j)? {
            b',' => {
                let k = self.skip_spaces(j + 1);
                // A trailing comma, or an empty entry, goes to the full parser.
                if matches!(self.t.get(k)?, b',' | b']' | b'}') {
                    return None;
                }
                Some((k, false))
            }
            c if c == close => Some((j, true)),
            _ => None,
        }
    }

    /// A one-line flow sequence `[…]` of scalars at `i`.
    fn flow_seq(&mut self, i: usize) -> Option<(Node, usize)> {
        self.count()?;
        let mut items = Vec::new();
        let mut j = self.skip_spaces(i + 1);
        if self.t.get(j)? != &b']' {
            loop {
                let (item, end) = self.flow_scalar(j, b']')?;
                items.push(item);
                let (next, closed) = self.flow_sep(end, b']')?;
                j = next;
                if closed {
                    break;
                }
            }
        }
        let node = Node {
            span: i..j + 1,
            anchor: None,
            tag: None,
            kind: NodeKind::Sequence { flow: true, items },
        };
        Some((node, j + 1))
    }

    /// A one-line flow mapping `{key: value, …}` of plain keys and scalar values at `i`.
    fn flow_map(&mut self, i: usize) -> Option<(Node, usize)> {
        self.count()?;
        let mut entries = Vec::new();
        let mut j = self.skip_spaces(i + 1);
        if self.t.get(j)? != &b'}' {
            loop {
                let (key, colon) = self.plain_flow(j, b'}', true)?;
                let v = self.skip_spaces(colon + 1);
                let (value, end) = self.flow_scalar(v, b'}')?;
                entries.push((key, value));
                let (next, closed) = self.flow_sep(end, b'}')?;
                j = next;
                if closed {
                    break;
                }
            }
        }
        check_mapping(&entries).ok()?;
        let node = Node {
            span: i..j + 1,
            anchor: None,
            tag: None,
            kind: NodeKind::Mapping {
                flow: true,
                entries,
            },
        };
        Some((node, j + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::super::full::parse_full;
    use super::*;
    use proptest::prelude::*;

    /// The fast path either declines or agrees with the full parser.
    fn agree(text: &str) -> bool {
        match parse(text) {
            None => false,
            Some(y) => {
                assert_eq!(Ok(y), parse_full(text), "fast path differs on {text:?}");
                true
            }
        }
    }

    #[test]
    fn accepts_and_agrees_on_common_frontmatter() {
        let docs = [
            "type: Reference\ntitle: Bad Question Flag Ratio\ndescription: Calculates the ratio\n  to overall votes/flags.\ntags:\n- metric\n- votes\ngenerated:\n  by: reference_agent/gemini-3.5-flash\n  at: '2026-07-10T23:02:44+00:00'\nsources:\n- id: meta_schema_doc\n  resource: https://meta.stackexchange.com/questions/2677\n  title: Database schema\n",
            "type: BigQuery Table\ntitle: Table 7\ndescription: One row per record, reconciled nightly.\ntags: [bench, domain-0, area-7]\nstatus: stable\n# who wrote this card\ngenerated: { by: reference_agent/bench, at: 2026-06-20T22:53:05Z }\nx-opaque: keep me 7\nsources:\n  - id: schema\n    resource: https://example.test/schema/t7\n    title: Schema of the source table\n",
            "",
            "# only a comment\n",
            "a: 1\nb:\nc: \"x # y\" # real\nd: 'it''s'\ne: []\nf: {}\ng: -5\n",
            "ü: Ünï — 中文 # ç\nk: \"日本\"\n",
            "s:\n- a\n-\n  id: 1\n- id: 2\n  t: 3\n",
            "g:\n  - 1\n  # inner\n  - 2\n# tail\nh:\n  k: v  # c\n\n# t2\nz: 1",
            "a: yes\nb: 0012\nc: 1.10\nd: ~\nempty:\nf: 2026-01-01\ng: on\n",
            "d: multi\n  line plain\nz: 1\n",
            "a: # c\n  b: 1\nc: # d\n",
        ];
        for d in docs {
            assert!(agree(d), "fast path declined {d:?}");
        }
    }

    #[test]
    fn declines_what_it_does_not_read() {
        for d in [
            "a: &x 1\n",
            "a: *x\n",
            "a: !!str 1\n",
            "a: |\n  x\n",
            "a: \"x\\ty\"\n",
            "a:\tb\n",
            "a: 1\r\n",
            "- a\n",
            "a: 1\na: 2\n",
            "a: [x,]\n",
            "x: {a,b}\n",
            "x: {a, b}\n",
            "x: {a:b,c}\n",
            "x: {a} b}\n",
            "a: [\n  x]\n",
            "? a\n: 1\n",
            "a: 1\n---\n",
            "\u{feff}a: 1\n",
            "a: x\n\n  y\n",
            "a: b: c\n",
            "  a: 1\n",
        ] {
            assert!(parse(d).is_none(), "fast path accepted {d:?}");
        }
    }

    #[test]
    fn corpus_frontmatter_agrees() {
        // The corpus is beside the repository, here and in CI: its absence is a failure.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
        assert!(
            root.is_dir(),
            "the corpus {} is missing: this test reads every frontmatter in it",
            root.display()
        );
        let mut stack = vec![root.clone()];
        let (mut seen, mut fast) = (0, 0);
        while let Some(dir) = stack.pop() {
            let rd = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("cannot read the corpus folder {}: {e}", dir.display()));
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "md") {
                    let Ok(text) = std::fs::read_to_string(&p) else {
                        continue;
                    };
                    let Ok(split) = crate::okf::document::split(text.as_bytes()) else {
                        continue;
                    };
                    let Some(fm) = split.frontmatter_text() else {
                        continue;
                    };
                    seen += 1;
                    if agree(fm) {
                        fast += 1;
                    }
                }
            }
        }
        assert!(seen > 0, "no frontmatter found under {}", root.display());
        // Nearly all of the corpus takes the fast path.
        assert!(
            fast * 10 >= seen * 9,
            "fast path took {fast} of {seen} corpus frontmatters"
        );
    }

    /// Keys both generators use.
    const KEYS: &[&str] = &[
        "a", "id", "title", "x-k", "ü", "a b", "1", "true", "k.v", "t/u", "_",
    ];

    /// Scalars and flow collections both generators use.
    const SCALARS: &[&str] = &[
        "v",
        "yes",
        "0012",
        "1.10",
        "~",
        "2026-06-20T22:53:05Z",
        "https://e.test/a?b=c#d",
        "a#b",
        "x # c",
        "'q'",
        "'it''s'",
        "\"d\"",
        "\"a # b\"",
        "''",
        "[a, b]",
        "[]",
        "{}",
        "{k: v}",
        "{k: v, j: 'w'}",
        "[\"x\", y z]",
        "[a,b]",
        "-5",
        "日本 語",
        "v  ",
        "{a, b}",
        "{a}",
        "{a:b, c}",
    ];

    fn with(common: &[&'static str], more: &[&'static str]) -> Vec<&'static str> {
        common.iter().chain(more).copied().collect()
    }

    /// Generated frontmatter-like text: keys, nesting, sequences, flow collections, quoting,
    /// comments, blank lines, tricky scalars, and deliberately wrong indentation.
    fn line() -> impl Strategy<Value = String> {
        let key = prop::sample::select(with(KEYS, &["null"]));
        let scalar = prop::sample::select(with(
            SCALARS,
            &[
                "null",
                "2026-01-01",
                "\"\"",
                "-x",
                "- x",
                "a: b",
                "x:",
                ":x",
                "&a v",
                "*a",
                "!t v",
                "|",
                ">",
                "[a, [b]]",
                "{a: {b: c}}",
                "[a:b]",
                "{a:b}",
                "[a, ]",
                "v,w",
                "\"x\\\"y\"",
                "'a\nb'",
                "%x",
                "@x",
                "`x",
                "?x",
                "{k: }",
                "{k:v}",
                "[a #b]",
                "{a,b}",
                "{a:b,c}",
                "{a} b}",
                "{a: b, c}",
                "{a: b,}",
                "[a]b]",
            ],
        ));
        let indent = prop::sample::select(vec!["", "", "", "  ", "  ", "    ", " ", "   "]);
        prop_oneof![
            (indent.clone(), key.clone(), scalar.clone())
                .prop_map(|(i, k, v)| format!("{i}{k}: {v}")),
            (indent.clone(), key.clone()).prop_map(|(i, k)| format!("{i}{k}:")),
            (indent.clone(), scalar.clone()).prop_map(|(i, v)| format!("{i}- {v}")),
            (indent.clone(), key.clone(), scalar).prop_map(|(i, k, v)| format!("{i}- {k}: {v}")),
            indent.clone().prop_map(|i| format!("{i}-")),
            indent.clone().prop_map(|i| format!("{i}# note: x")),
            indent.prop_map(|i| format!("{i}continued text")),
            Just(String::new()),
        ]
    }

    fn any_doc() -> impl Strategy<Value = String> {
        prop_oneof![doc(), tree_doc()]
    }

    /// A generated frontmatter tree, rendered with consistent indentation.
    #[derive(Debug, Clone)]
    enum T {
        Leaf(&'static str),
        Map(Vec<(&'static str, T)>),
        /// Items, and whether the sequence sits in its key's column.
        Seq(Vec<T>, bool),
    }

    fn tree() -> impl Strategy<Value = T> {
        let key = prop::sample::select(with(KEYS, &["by", "at"]));
        let leaf = prop::sample::select(with(
            SCALARS,
            &[
                "long text\n  wrapped once",
                "two\n  more\n  lines",
                "[ a ,b ]",
                "{ by: r/x, at: 2026-01-01T00:00:00Z }",
                "x:y",
                "a - b",
                "c, d",
                "p [q]",
                "",
                "# only comment",
            ],
        ))
        .prop_map(T::Leaf);
        leaf.prop_recursive(4, 40, 6, move |inner| {
            prop_oneof![
                prop::collection::vec((key.clone(), inner.clone()), 1..6).prop_map(T::Map),
                (prop::collection::vec(inner, 1..4), any::<bool>()).prop_map(|(v, c)| T::Seq(v, c)),
            ]
        })
    }

    fn render(t: &T, ind: usize, out: &mut String) {
        let pad = " ".repeat(ind);
        match t {
            T::Leaf(_) => {}
            T::Map(entries) => {
                for (k, v) in entries {
                    out.push_str(&pad);
                    out.push_str(k);
                    out.push(':');
                    match v {
                        T::Leaf(l) => {
                            if !l.is_empty() {
                                out.push(' ');
                                // Continuation lines are written for column 0; shift them.
                                out.push_str(&l.replace("\n", &format!("\n{pad}")));
                            }
                            out.push('\n');
                        }
                        T::Seq(_, true) => {
                            out.push('\n');
                            render(v, ind, out);
                        }
                        _ => {
                            out.push('\n');
                            render(v, ind + 2, out);
                        }
                    }
                }
            }
            T::Seq(items, _) => {
                for it in items {
                    out.push_str(&pad);
                    out.push('-');
                    match it {
                        T::Leaf(l) => {
                            if !l.is_empty() {
                                out.push(' ');
                                out.push_str(&l.replace("\n", &format!("\n{pad}")));
                            }
                            out.push('\n');
                        }
                        T::Map(_) => {
                            // Compact: the first key on the dash line.
                            let mut inner = String::new();
                            render(it, ind + 2, &mut inner);
                            out.push(' ');
                            out.push_str(inner.trim_start_matches(' '));
                        }
                        T::Seq(..) => {
                            out.push('\n');
                            render(it, ind + 2, out);
                        }
                    }
                }
            }
        }
    }

    fn tree_doc() -> impl Strategy<Value = String> {
        (
            prop::collection::vec((any::<prop::sample::Index>(), tree()), 1..4),
            prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        )
            .prop_map(|(parts, extras)| {
                let mut entries = Vec::new();
                for (i, t) in parts {
                    let keys = ["type", "title", "sources", "tags", "generated"];
                    entries.push((keys[i.index(keys.len())], t));
                }
                let mut s = String::new();
                render(&T::Map(entries), 0, &mut s);
                // Sprinkle comment and blank lines between lines.
                let mut lines: Vec<String> = s.lines().map(str::to_owned).collect();
                for e in extras {
                    let at = e.index(lines.len() + 1);
                    let ind = lines.get(at).map_or(0, |l| l.len() - l.trim_start().len());
                    let extra = if at % 2 == 0 {
                        String::new()
                    } else {
                        format!("{}# note: x", " ".repeat(ind))
                    };
                    lines.insert(at, extra);
                }
                let mut s = lines.join("\n");
                s.push('\n');
                s
            })
    }

    fn doc() -> impl Strategy<Value = String> {
        (prop::collection::vec(line(), 0..14), any::<bool>()).prop_map(|(lines, nl)| {
            let mut s = lines.join("\n");
            if nl {
                s.push('\n');
            }
            s
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn fast_path_never_disagrees(text in doc()) {
            agree(&text);
        }

        #[test]
        fn fast_path_agrees_on_generated_trees(text in tree_doc()) {
            agree(&text);
        }

        #[test]
        fn fast_path_never_disagrees_after_a_mutation(
            text in any_doc(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(vec![
                ":", "#", " ", "\n", "-", "'", "\"", "[", "]", "{", "}", ",", "a", "é", "  ",
                ": ", " #", "- ", "\n  ", "\n- ", "?", "{a", "}b", ", ", "!", "&", "*", "|", ">", "%", "@", "`",
                "\\", "~", ".", "0", "\t", "\r", " -", "---", "...", "<<", "\u{a0}",
                "\u{85}", "\u{2028}", "\u{feff}",
            ])), 1..4),
        ) {
            let mut text = text;
            for (at, with) in edits {
                let mut cut = at.index(text.len() + 1);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.insert_str(cut, with);
            }
            agree(&text);
        }
    }
}
