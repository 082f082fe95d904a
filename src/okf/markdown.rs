//! A small CommonMark block scanner for document bodies (spec/surface.md §13.1 rule 6,
//! spec/migration.md §6.2, §6.3 rule 6).
//!
//! It classifies each line as ATX heading, fenced code (``` / `~~~`, length ≥ 3), indented
//! code, HTML block, blank or ordinary text. Content inside fences, indented code and HTML
//! blocks is never interpreted: no headings, footnotes, links or citation entries come from
//! it. On ordinary lines it finds footnote references `[^x]` and definitions, inline `.md`
//! links, and the `# Citations` section with its entries.
//!
//! # Limitations
//! Block structure is approximated line by line: list-item continuation and block quotes are
//! not modelled (a line indented by four or more columns right after a list item is treated as
//! list content, not code); link reference definitions are ignored; inline code spans are
//! skipped when looking for footnote references and links.
//!
//! # Differential oracle
//! pulldown-cmark (CommonMark, no extensions) checks this scanner: the proptest
//! `tests/it/markdown_oracle.rs` and the fuzz target `markdown_oracle` (both through
//! `tests/it/support/markdown_oracle.rs`) compare, line by line, the ATX headings and their levels, the
//! fenced-code lines, the non-blank indented-code lines, the code-span bytes of ordinary lines
//! and the `.md` destinations of inline links. They agree on every body of those constructs.
//! The deliberate differences, left out of the comparison:
//! - block quotes, list items and their continuation, thematic breaks, setext headings (the
//!   validator's rules name ATX headings), HTML blocks, tables and tabs: not modelled (see
//!   above; a setext underline is an ordinary line here);
//! - link reference definitions and reference links: [`md_links`] reports a definition's
//!   destination whether or not a link uses it, and never resolves `[text][ref]`;
//! - inline HTML and autolinks (a line holding `<`): not modelled; CommonMark lets them take
//!   precedence over a code span that starts inside them (``<a+:`x`>`` is an autolink, not a
//!   code span), while here such a backtick run may open one;
//! - a code span that crosses a line: spans are found within one line, so the lines such a
//!   span touches (and their links) may differ;
//! - links whose text holds brackets, backslashes, backticks or angle brackets, or whose
//!   destination needs escapes or spaces: [`md_links`] finds every `](…)` outside code spans,
//!   without CommonMark's bracket matching and escape rules;
//! - headings' inline content: only the line and the level are compared, not the rendered
//!   text (headings here keep their raw content).
//!
//! [`headings`] (ATX and setext, the sections of spec/surface.md §14.6 rule 2) is compared
//! with pulldown-cmark's heading events on bodies of paragraphs, underlines, ATX headings,
//! fences, indented code and thematic breaks (`md_oracle_atx_and_setext_headings_agree…`);
//! list items and block quotes, which it does not model, are left out (a paragraph holding
//! one never becomes a setext heading here).

use std::sync::LazyLock;

/// What a body line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Blank,
    /// An ATX heading of this level (1–6).
    Heading(u8),
    /// A fence opening or closing line, or a line inside a fenced code block.
    Fenced,
    /// A line of an indented code block.
    IndentedCode,
    /// A line of an HTML block.
    Html,
    /// Any other line (paragraph, list item, …).
    Text,
}

/// One line of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// The line text without its line ending (and without a leading byte order mark).
    pub text: &'a str,
    /// Byte offset of the line in the body.
    pub start: usize,
    pub kind: LineKind,
}

/// Columns of leading indentation (tab = to the next multiple of 4) and the byte index of the
/// first non-indent character.
#[must_use]
pub fn indent(s: &str) -> (usize, usize) {
    let mut col = 0;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b' ' => col += 1,
            b'\t' => col += 4 - col % 4,
            _ => return (col, i),
        }
    }
    (col, s.len())
}

/// An ATX heading: `(level, content)` with the optional closing `#` sequence removed and the
/// content trimmed (CommonMark §4.2).
#[must_use]
pub fn atx_heading(line: &str) -> Option<(u8, &str)> {
    let (col, i) = indent(line);
    if col > 3 {
        return None;
    }
    let rest = &line[i..];
    let hashes = rest.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let after = &rest[hashes..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let mut content = after.trim_matches([' ', '\t']);
    // Closing sequence: a run of `#` preceded by a space or tab (or the whole content).
    let trimmed = content.trim_end_matches('#');
    if trimmed.len() < content.len()
        && (trimmed.is_empty() || trimmed.ends_with(' ') || trimmed.ends_with('\t'))
    {
        content = trimmed.trim_end_matches([' ', '\t']);
    }
    u8::try_from(hashes).ok().map(|h| (h, content))
}

/// A fence opening: `(char, length)` (CommonMark §4.5).
#[must_use]
pub fn fence_open(line: &str) -> Option<(u8, usize)> {
    let (col, i) = indent(line);
    if col > 3 {
        return None;
    }
    let rest = &line[i..];
    let c = *rest.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.bytes().take_while(|&b| b == c).count();
    if n < 3 {
        return None;
    }
    if c == b'`' && rest[n..].contains('`') {
        return None;
    }
    Some((c, n))
}

/// Whether `line` closes a fence opened with `n` times `c` (CommonMark §4.5).
#[must_use]
pub fn fence_close(line: &str, c: u8, n: usize) -> bool {
    let (col, i) = indent(line);
    if col > 3 {
        return false;
    }
    let rest = &line[i..];
    let m = rest.bytes().take_while(|&b| b == c).count();
    m >= n && rest[m..].trim_matches([' ', '\t']).is_empty()
}

/// HTML block start condition (CommonMark §4.6): returns the end condition kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HtmlEnd {
    Contains(&'static str),
    RawTag,
    Blank,
}

const BLOCK_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

fn html_start(line: &str, after_paragraph: bool) -> Option<HtmlEnd> {
    let (col, i) = indent(line);
    if col > 3 {
        return None;
    }
    let rest = &line[i..];
    if !rest.starts_with('<') {
        return None;
    }
    let lower = rest.to_ascii_lowercase();
    for t in ["<script", "<pre", "<style", "<textarea"] {
        if let Some(after) = lower.strip_prefix(t) {
            if after.is_empty() || after.starts_with([' ', '\t', '>']) {
                return Some(HtmlEnd::RawTag);
            }
        }
    }
    if rest.starts_with("<!--") {
        return Some(HtmlEnd::Contains("-->"));
    }
    if rest.starts_with("<?") {
        return Some(HtmlEnd::Contains("?>"));
    }
    if rest.starts_with("<![CDATA[") {
        return Some(HtmlEnd::Contains("]]>"));
    }
    if rest.len() > 2 && rest.as_bytes()[1] == b'!' && rest.as_bytes()[2].is_ascii_alphabetic() {
        return Some(HtmlEnd::Contains(">"));
    }
    let name_start = usize::from(lower.as_bytes().get(1) == Some(&b'/')) + 1;
    let name: String = lower[name_start..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    let after = &lower[name_start + name.len()..];
    if BLOCK_TAGS.contains(&name.as_str())
        && (after.is_empty() || after.starts_with([' ', '\t', '>']) || after.starts_with("/>"))
    {
        return Some(HtmlEnd::Blank);
    }
    // Kind 7: a complete open or closing tag alone on the line; cannot interrupt a paragraph.
    if !after_paragraph
        && !name.is_empty()
        && name.as_bytes()[0].is_ascii_alphabetic()
        && rest.trim_end().ends_with('>')
        && !rest.trim_end()[1..].contains('<')
    {
        return Some(HtmlEnd::Blank);
    }
    None
}

fn is_list_item(text: &str) -> bool {
    let (col, i) = indent(text);
    if col > 3 {
        return false;
    }
    let rest = &text[i..];
    let b = rest.as_bytes();
    if matches!(b.first(), Some(b'-' | b'*' | b'+'))
        && (b.len() == 1 || matches!(b.get(1), Some(b' ' | b'\t')))
    {
        return true;
    }
    let d = rest.bytes().take_while(u8::is_ascii_digit).count();
    (1..=9).contains(&d)
        && matches!(b.get(d), Some(b'.' | b')'))
        && (b.len() == d + 1 || matches!(b.get(d + 1), Some(b' ' | b'\t')))
}

/// Scans `body` into classified lines (spec/surface.md §13.1 rule 6).
#[must_use]
pub fn scan(body: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut html: Option<HtmlEnd> = None;
    let mut after_paragraph = false;
    let mut in_list = false;
    let mut pos = 0;
    while pos < body.len() {
        let rest = &body[pos..];
        let (raw, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], pos + i + 1),
            None => (rest, body.len()),
        };
        let text = raw.strip_suffix('\r').unwrap_or(raw);
        // A leading byte order mark is not content (spec/surface.md §13.1 rule 2).
        let text = if pos == 0 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        let blank = text.trim_matches([' ', '\t']).is_empty();
        let kind = if let Some((c, n)) = fence {
            if fence_close(text, c, n) {
                fence = None;
            }
            LineKind::Fenced
        } else if let Some(end) = html {
            let done = match end {
                HtmlEnd::Contains(s) => text.contains(s),
                HtmlEnd::RawTag => {
                    let l = text.to_ascii_lowercase();
                    ["</script>", "</pre>", "</style>", "</textarea>"]
                        .iter()
                        .any(|t| l.contains(t))
                }
                HtmlEnd::Blank => blank,
            };
            if done {
                html = None;
            }
            if blank {
                LineKind::Blank
            } else {
                LineKind::Html
            }
        } else if blank {
            after_paragraph = false;
            LineKind::Blank
        } else if indent(text).0 >= 4 && !after_paragraph && !in_list {
            LineKind::IndentedCode
        } else if let Some((c, n)) = fence_open(text) {
            fence = Some((c, n));
            after_paragraph = false;
            LineKind::Fenced
        } else if let Some((level, _)) = atx_heading(text) {
            after_paragraph = false;
            in_list = false;
            LineKind::Heading(level)
        } else if let Some(end) = html_start(text, after_paragraph) {
            let done = match end {
                HtmlEnd::Contains(s) => text.get(4..).is_some_and(|t| t.contains(s)),
                HtmlEnd::RawTag => {
                    let l = text.to_ascii_lowercase();
                    ["</script>", "</pre>", "</style>", "</textarea>"]
                        .iter()
                        .any(|t| l.contains(t))
                }
                HtmlEnd::Blank => false,
            };
            if !done {
                html = Some(end);
            }
            after_paragraph = false;
            LineKind::Html
        } else {
            if is_list_item(text) {
                in_list = true;
            } else if indent(text).0 == 0 && !after_paragraph {
                in_list = false;
            }
            after_paragraph = true;
            LineKind::Text
        };
        out.push(Line {
            text,
            start: pos,
            kind,
        });
        pos = next;
    }
    out
}

/// Normalised footnote label (spec/migration.md §6.3 rule 6, README R18): trim, collapse
/// internal whitespace runs to one space, Unicode lowercase.
#[must_use]
pub fn normalise_label(label: &str) -> String {
    // Printable ASCII without spaces or capitals is already normalised.
    if label
        .bytes()
        .all(|c| c.is_ascii_graphic() && !c.is_ascii_uppercase())
    {
        return label.to_owned();
    }
    normalise_label_general(label)
}

/// [`normalise_label`] without its shortcut.
fn normalise_label_general(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Whether `text` is a footnote definition line `[^label]: …` (up to 3 spaces indent).
#[must_use]
pub fn is_footnote_definition(text: &str) -> bool {
    let (col, i) = indent(text);
    if col > 3 {
        return false;
    }
    let rest = &text[i..];
    let Some(r) = rest.strip_prefix("[^") else {
        return false;
    };
    match r.find(']') {
        Some(end) => end > 0 && r[end + 1..].starts_with(':') && !r[..end].contains('['),
        None => false,
    }
}

/// The text of `line` with inline code spans blanked out (CommonMark §6.1, backtick runs of
/// equal length), so that markers inside them are not seen.
fn without_code_spans(text: &str) -> String {
    let mask = code_span_mask(text.as_bytes());
    let mut out = text.as_bytes().to_vec();
    for (c, inside) in out.iter_mut().zip(mask) {
        if inside && c.is_ascii() {
            *c = b' ';
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// For each byte of `b`: whether it lies inside an inline code span (CommonMark §6.1:
/// backtick runs of equal length; a backslash outside code escapes the next byte). Spans are
/// found within `b` only (one line).
#[must_use]
pub fn code_span_mask(b: &[u8]) -> Vec<bool> {
    let mut mask = vec![false; b.len()];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|&&c| c == b'`').count();
        // Find a closing run of exactly n backticks.
        let mut j = i + n;
        let mut close = None;
        while j < b.len() {
            if b[j] == b'`' {
                let m = b[j..].iter().take_while(|&&c| c == b'`').count();
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                for m in &mut mask[i..j + n] {
                    *m = true;
                }
                i = j + n;
            }
            None => i += n,
        }
    }
    mask
}

/// Whether `text` contains `[^` (found through the rarer `^`).
fn has_footnote_mark(text: &str) -> bool {
    find_footnote_mark(text).is_some()
}

/// The byte offset of the first `[^` in `text` (`str::find("[^")` without building a
/// substring searcher for each call).
fn find_footnote_mark(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    memchr::memchr_iter(b'^', b)
        .find(|&p| p > 0 && b[p - 1] == b'[')
        .map(|p| p - 1)
}

/// Footnote references `[^label]` on interpretable lines, in document order; definition lines
/// are not references (spec/surface.md §12.4 `attributions`).
#[must_use]
pub fn footnote_references(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Masking code spans only turns bytes into spaces, so a line (a substring of the body)
    // without `[^` yields no reference: skip the scan, and the per-line copy, in that case.
    if !has_footnote_mark(body) {
        return out;
    }
    for line in scan(body) {
        if !matches!(line.kind, LineKind::Text | LineKind::Heading(_))
            || !has_footnote_mark(line.text)
        {
            continue;
        }
        if is_footnote_definition(line.text) {
            continue;
        }
        let t = without_code_spans(line.text);
        let mut rest = t.as_str();
        while let Some(i) = find_footnote_mark(rest) {
            let escaped = i > 0 && rest.as_bytes()[i - 1] == b'\\';
            let after = &rest[i + 2..];
            match after.find(']') {
                Some(end)
                    if !escaped
                        && end > 0
                        && !after[..end].contains('[')
                        && !after[..end].trim().is_empty() =>
                {
                    out.push(after[..end].to_owned());
                    rest = &after[end + 1..];
                }
                _ => rest = after,
            }
        }
    }
    out
}

/// Without scanning the Markdown structure: labels that include every label
/// [`footnote_references`] would return, read as raw `[^label]` text on every line of the
/// body (code, HTML and definition lines too, so usually a superset). `None` when a backtick
/// precedes a reference's closing `]` on its line, where code-span masking could change a
/// label: the caller then needs [`footnote_references`]. Lets a check whose every raw label
/// is acceptable skip the line scan (spec/surface.md §12.4 `attributions`).
#[must_use]
pub fn footnote_label_superset(body: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let b = body.as_bytes();
    // Only the lines holding a `[^` are looked at: each is found from its first mark, itself
    // found through the rarer `^`.
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'^', &b[from..]) {
        let hit = from + k;
        if hit == 0 || b[hit - 1] != b'[' {
            from = hit + 1;
            continue;
        }
        let line_start = memchr::memrchr(b'\n', &b[..hit]).map_or(0, |i| i + 1);
        let line_end = memchr::memchr(b'\n', &b[hit..]).map_or(b.len(), |i| hit + i);
        let line = &body[line_start..line_end];
        from = line_end;
        let tick = memchr::memchr(b'`', line.as_bytes()).unwrap_or(line.len());
        let mut rest = line;
        let mut offset = 0;
        while let Some(i) = find_footnote_mark(rest) {
            let escaped = i > 0 && rest.as_bytes()[i - 1] == b'\\';
            let after = &rest[i + 2..];
            let close = after.find(']');
            // Masking only blanks code-span bytes: up to the first backtick, the masked line
            // equals the raw one. (Without a `]` the candidate is no reference either way.)
            if close.is_some_and(|end| offset + i + 2 + end >= tick) {
                return None;
            }
            match close {
                Some(end)
                    if !escaped
                        && end > 0
                        && !after[..end].contains('[')
                        && !after[..end].trim().is_empty() =>
                {
                    out.push(&after[..end]);
                    offset += i + 2 + end + 1;
                    rest = &after[end + 1..];
                }
                _ => {
                    offset += i + 2;
                    rest = after;
                }
            }
        }
    }
    Some(out)
}

/// Targets of inline links `[text](target)` and of link reference definitions
/// (`[label]: target`, CommonMark §4.7; footnote definitions `[^x]:` excluded) on
/// interpretable lines whose path part ends with `.md` and that are relative or `/`-rooted
/// (no URL scheme), in document order. The target is returned without `#fragment` /
/// `?query` and without angle brackets or a link title.
#[must_use]
pub fn md_links(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_md_link(body, |p| out.push(p.to_owned()));
    out
}

/// [`md_links`] without collecting: calls `f` with each target, in document order.
pub fn for_each_md_link(body: &str, mut f: impl FnMut(&str)) {
    let mut push = |raw: &str| {
        let raw = raw.trim();
        let target = match raw.strip_prefix('<') {
            Some(inner) => inner.split('>').next().unwrap_or_default(),
            None => raw.split([' ', '\t']).next().unwrap_or_default(),
        };
        let path = target.split(['#', '?']).next().unwrap_or_default();
        let has_scheme = path.split_once(':').is_some_and(|(s, _)| !s.contains('/'));
        if path.ends_with(".md") && !has_scheme && !path.starts_with("//") {
            f(path);
        }
    };
    for line in scan(body) {
        if !matches!(line.kind, LineKind::Text | LineKind::Heading(_)) {
            continue;
        }
        // Fast path: a line without `]` holds neither a link nor a definition.
        if memchr::memchr(b']', line.text.as_bytes()).is_none() {
            continue;
        }
        if line.kind == LineKind::Text {
            if let Some(target) = reference_definition(line.text) {
                push(target);
                continue;
            }
        }
        // Without a backtick there is no code span to blank out.
        let t: std::borrow::Cow<'_, str> = if memchr::memchr(b'`', line.text.as_bytes()).is_some() {
            std::borrow::Cow::Owned(without_code_spans(line.text))
        } else {
            std::borrow::Cow::Borrowed(line.text)
        };
        let mut rest: &str = &t;
        while let Some(i) = memchr::memmem::find(rest.as_bytes(), b"](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else {
                break;
            };
            push(&after[..end]);
            rest = &after[end..];
        }
    }
}

/// The destination of a link reference definition line `[label]: destination` (up to three
/// spaces of indentation; not a footnote definition).
fn reference_definition(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = line[indent..].strip_prefix('[')?;
    if rest.starts_with('^') {
        return None;
    }
    let close = rest.find("]:")?;
    let label = &rest[..close];
    if label.trim().is_empty() || label.contains('[') || label.contains(']') {
        return None;
    }
    let dest = rest[close + 2..].trim();
    (!dest.is_empty()).then_some(dest)
}

/// A `# Citations` section (spec/migration.md §6.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitationsSection {
    /// Index of the heading line in [`scan`] output.
    pub heading_line: usize,
    /// Index of the first line after the section: the next level-1 heading, or the number
    /// of lines.
    pub end_line: usize,
    /// Whether the heading carries a closing `#` sequence or an attribute block
    /// (`heading_source_anchor`, README R17).
    pub anchored: bool,
    /// Number of entries: single-line unordered list items and `[N]` paragraph lines.
    pub entries: usize,
}

/// Whether a line is a level-1 `# Citations` heading: `Some(anchored)`, where `anchored`
/// means a closing `#` sequence or an attribute block (`heading_source_anchor` cases,
/// README R17); `None` for any other line. The one recogniser of the heading, for the
/// validator and the migration.
#[must_use]
pub fn citations_heading(text: &str) -> Option<bool> {
    let (1, content) = atx_heading(text)? else {
        return None;
    };
    if content == "Citations" {
        // `atx_heading` removed a closing sequence, if any: the raw line then ends in `#`.
        return Some(text.trim_end_matches([' ', '\t']).ends_with('#'));
    }
    let anchored = content
        .strip_prefix("Citations")
        .map(str::trim_start)
        .is_some_and(|r| r.starts_with('{') && r.ends_with('}'));
    anchored.then_some(true)
}

/// `[N]` prefix with decimal `N ≥ 1`, no leading zero, followed by space or tab.
fn numbered_prefix(s: &str) -> bool {
    let Some(r) = s.strip_prefix('[') else {
        return false;
    };
    let d = r.bytes().take_while(u8::is_ascii_digit).count();
    d > 0
        && !r.starts_with('0')
        && r[d..].starts_with(']')
        && matches!(r.as_bytes().get(d + 1), Some(b' ' | b'\t'))
}

/// Whether `body` can hold a `# Citations` heading at all (a cheap pre-check: a section
/// starts at a heading whose text, a substring of the body, begins with `Citations`).
#[must_use]
pub fn mentions_citations(body: &str) -> bool {
    static WORD: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("Citations"));
    WORD.find(body.as_bytes()).is_some()
}

/// Every `# Citations` section of the scanned lines `(kind, text)` ([`scan`] output, in
/// order), with its bounds and entry count (spec/migration.md §6.2 rule 1): level-1 headings
/// recognised as CommonMark blocks, so a heading inside a fence is code.
pub fn citations_sections_of<'a>(
    lines: impl IntoIterator<Item = (LineKind, &'a str)>,
) -> Vec<CitationsSection> {
    let mut out: Vec<CitationsSection> = Vec::new();
    let mut current: Option<CitationsSection> = None;
    let mut count = 0;
    for (idx, (kind, t)) in lines.into_iter().enumerate() {
        count = idx + 1;
        if kind == LineKind::Heading(1) {
            if let Some(mut c) = current.take() {
                c.end_line = idx;
                out.push(c);
            }
            if let Some(anchored) = citations_heading(t) {
                current = Some(CitationsSection {
                    heading_line: idx,
                    end_line: idx,
                    anchored,
                    entries: 0,
                });
            }
            continue;
        }
        let Some(c) = current.as_mut() else {
            continue;
        };
        if kind != LineKind::Text {
            continue;
        }
        let b = t.as_bytes();
        let bullet =
            matches!(b.first(), Some(b'-' | b'*' | b'+')) && matches!(b.get(1), Some(b' ' | b'\t'));
        if bullet || numbered_prefix(t) {
            c.entries += 1;
        }
    }
    if let Some(mut c) = current {
        c.end_line = count;
        out.push(c);
    }
    out
}

/// Every `# Citations` section of `body` with its bounds and entry count
/// (spec/migration.md §6.2; [`citations_sections_of`] on [`scan`]).
#[must_use]
pub fn citations_sections(body: &str) -> Vec<CitationsSection> {
    if !mentions_citations(body) {
        return Vec::new();
    }
    citations_sections_of(scan(body).iter().map(|l| (l.kind, l.text)))
}

/// Whether the body has a `# Computation` section holding a fenced or indented code block
/// (OKF 0.2 §10.3 inline computation).
#[must_use]
pub fn has_computation_fence(body: &str) -> bool {
    let mut in_section = false;
    for line in scan(body) {
        if let LineKind::Heading(1) = line.kind {
            in_section = atx_heading(line.text).is_some_and(|(_, c)| c == "Computation");
            continue;
        }
        if in_section && matches!(line.kind, LineKind::Fenced | LineKind::IndentedCode) {
            return true;
        }
    }
    false
}

/// Level-2 heading texts of a `log.md` body (OKF 0.2 §9 date headings).
#[must_use]
pub fn level2_headings(body: &str) -> Vec<&str> {
    scan(body)
        .into_iter()
        .filter(|l| l.kind == LineKind::Heading(2))
        .filter_map(|l| atx_heading(l.text).map(|(_, c)| c))
        .collect()
}

/// A heading of the document model (spec/surface.md §14.6 rule 2): an ATX heading, or a
/// setext heading (CommonMark §4.3: a paragraph followed by a `=` or `-` underline).
///
/// Only the Phase-4 sections use setext headings; the validator's rules that name ATX headings
/// (the citations heading, `# Computation`, log dates) read [`LineKind::Heading`] of [`scan`],
/// which stays ATX-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// Index in [`scan`] output of the heading's first line (the ATX line, or the first line
    /// of a setext heading's paragraph).
    pub first_line: usize,
    /// Index of its last line (the ATX line, or the setext underline).
    pub last_line: usize,
    /// 1–6 for ATX; 1 (`=`) or 2 (`-`) for setext.
    pub level: u8,
    /// The heading text: the ATX content (closing sequence removed, trimmed), or the setext
    /// paragraph's lines, each trimmed, joined with `\n`.
    pub text: String,
}

/// A setext underline (CommonMark §4.3): up to three spaces, a run of `=` or of `-`, trailing
/// spaces or tabs; `Some(level)`.
#[must_use]
pub fn setext_underline(line: &str) -> Option<u8> {
    let (col, i) = indent(line);
    if col > 3 {
        return None;
    }
    let rest = line[i..].trim_end_matches([' ', '\t']);
    let c = *rest.as_bytes().first()?;
    if !matches!(c, b'=' | b'-') || !rest.bytes().all(|b| b == c) {
        return None;
    }
    Some(if c == b'=' { 1 } else { 2 })
}

/// A thematic break (CommonMark §4.1): up to three spaces, then three or more `-`, `*` or `_`
/// of one kind, with spaces or tabs between them.
#[must_use]
pub fn thematic_break(line: &str) -> bool {
    let (col, i) = indent(line);
    if col > 3 {
        return false;
    }
    let mut marks = line[i..].bytes().filter(|b| !matches!(b, b' ' | b'\t'));
    let Some(c) = marks.next() else {
        return false;
    };
    matches!(c, b'-' | b'*' | b'_') && {
        let rest: Vec<u8> = marks.collect();
        rest.len() >= 2 && rest.iter().all(|&b| b == c)
    }
}

/// Whether a paragraph line could not belong to a plain paragraph that a setext underline
/// turns into a heading: a list item or a block quote line (not modelled as paragraphs, see
/// the module's limitations).
fn breaks_setext(text: &str) -> bool {
    let (col, i) = indent(text);
    is_list_item(text) || (col <= 3 && text[i..].starts_with('>'))
}

/// The headings of scanned `lines` (ATX and setext), in order (spec/surface.md §14.6 rule 2).
///
/// A setext heading is a run of consecutive [`LineKind::Text`] lines (a paragraph: it starts
/// after a line of another kind or at the body's start) holding no list item or block quote
/// line, followed by a [`setext_underline`] indented at most three columns. Lines inside
/// fences, HTML blocks and indented code are never headings ([`scan`] classifies them).
#[must_use]
pub fn headings(lines: &[Line<'_>]) -> Vec<Heading> {
    let mut out = Vec::new();
    // The start of the current paragraph, and whether it can still become a setext heading.
    let mut para: Option<(usize, bool)> = None;
    for (i, line) in lines.iter().enumerate() {
        match line.kind {
            LineKind::Heading(level) => {
                para = None;
                let text = atx_heading(line.text).map(|(_, c)| c).unwrap_or_default();
                out.push(Heading {
                    first_line: i,
                    last_line: i,
                    level,
                    text: text.to_owned(),
                });
            }
            LineKind::Text => match para {
                Some((start, ok)) => {
                    if let (true, Some(level)) = (ok, setext_underline(line.text)) {
                        let text = lines[start..i]
                            .iter()
                            .map(|l| l.text.trim_matches([' ', '\t']))
                            .collect::<Vec<_>>()
                            .join("\n");
                        out.push(Heading {
                            first_line: start,
                            last_line: i,
                            level,
                            text,
                        });
                        para = None;
                    } else if thematic_break(line.text) {
                        para = None;
                    } else {
                        para = Some((start, ok && !breaks_setext(line.text)));
                    }
                }
                None if thematic_break(line.text) => {}
                // A paragraph never starts indented by four columns: after a setext heading
                // (which `scan` does not know) such a line is indented code.
                None if indent(line.text).0 >= 4 => {}
                None => para = Some((i, !breaks_setext(line.text))),
            },
            _ => para = None,
        }
    }
    out
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    #[test]
    fn skipping_lines_without_a_marker_keeps_the_answers() {
        let body = "plain\na `[^x]` b [^y]\n`[`^z]\n[^d]: def\n\n# Citations\n\n- c\n";
        assert_eq!(footnote_references(body), vec!["y"]);
        assert!(footnote_references("no refs [^ here\n").is_empty());
        assert_eq!(citations_sections(body).len(), 1);
        assert_eq!(citations_sections(body)[0].entries, 1);
        assert!(citations_sections("# Notes\n- a\n").is_empty());
    }
}

#[cfg(test)]
mod reference_link_tests {
    #[test]
    fn reference_definitions_are_links_and_footnotes_are_not() {
        let body =
            "See [d][r] and [gone][g].\n\n[r]: d.md\n  [g]: <gone.md> \"t\"\n[^f]: note.md\n";
        assert_eq!(super::md_links(body), ["d.md", "gone.md"]);
    }
}

#[cfg(test)]
mod tests {

    proptest::proptest! {
        #[test]
        fn normalise_label_shortcut_equals_the_general_rule(
            label in "[a-zA-Z0-9 \t\n_.:-]{0,12}|[a-z0-9ÄéΣ\u{a0}\u{2003}x-]{0,8}"
        ) {
            proptest::prop_assert_eq!(normalise_label(&label), normalise_label_general(&label));
        }

        #[test]
        fn find_footnote_mark_equals_str_find(text in "[\\[\\^a é\n]{0,16}") {
            proptest::prop_assert_eq!(find_footnote_mark(&text), text.find("[^"));
        }
    }
    use super::*;

    #[test]
    fn headings() {
        assert_eq!(atx_heading("# Citations"), Some((1, "Citations")));
        assert_eq!(atx_heading("## a ##"), Some((2, "a")));
        assert_eq!(atx_heading("#a"), None);
        assert_eq!(atx_heading("    # a"), None);
        assert_eq!(atx_heading("####### a"), None);
        assert_eq!(atx_heading("# a#"), Some((1, "a#")));
        assert_eq!(atx_heading("#"), Some((1, "")));
    }

    #[test]
    fn fences_indented_code_and_html_are_opaque() {
        let body =
            "```\n# not\n[^x]\n```\n~~~\n# no\n~~~~\n\n    # code\n<div>\n# html\n\n# yes [^y]\n";
        let kinds: Vec<_> = scan(body).iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            vec![
                LineKind::Fenced,
                LineKind::Fenced,
                LineKind::Fenced,
                LineKind::Fenced,
                LineKind::Fenced,
                LineKind::Fenced,
                LineKind::Fenced,
                LineKind::Blank,
                LineKind::IndentedCode,
                LineKind::Html,
                LineKind::Html,
                LineKind::Blank,
                LineKind::Heading(1),
            ]
        );
        assert_eq!(footnote_references(body), vec!["y"]);
        // An unclosed fence runs to the end.
        assert!(footnote_references("```\n[^a]\n").is_empty());
        // A shorter closing run does not close.
        assert!(footnote_references("````\n```\n[^a]\n").is_empty());
        // Indented continuation of a paragraph is not code.
        assert_eq!(footnote_references("para\n    more [^b]\n"), vec!["b"]);
    }

    #[test]
    fn footnotes() {
        let body = "A[^One] b[^one] `[^code]` \\[^esc] c[^two].\n\n[^one]: def [^inner]\n";
        assert_eq!(footnote_references(body), vec!["One", "one", "two"]);
        assert!(is_footnote_definition("[^x]: y"));
        assert!(!is_footnote_definition("[^x] y"));
        assert_eq!(normalise_label("  Foo \t Bar "), "foo bar");
        assert_eq!(normalise_label("ÄB"), "äb");
    }

    #[test]
    fn links() {
        let body = "[a](/x.md) [b](../y.md#frag) [c](https://h/z.md) [d](dir/) [e](<s p.md> \"t\")\n```\n[f](g.md)\n```\n";
        assert_eq!(md_links(body), vec!["/x.md", "../y.md", "s p.md"]);
    }

    #[test]
    fn citations() {
        let body = "Claim [1].\n\n### Citations\n\n# Citations\n\n[1] [Spec](https://x)\n- two\n* [2] three\n1. ordered\n[0] zero\n```\n- fenced\n```\n# Next\n- not\n";
        let s = citations_sections(body);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].entries, 3);
        assert_eq!(citations_sections("# Citations #\n- a\n")[0].entries, 1);
        assert_eq!(citations_sections("# Citations {#refs}\n- a\n").len(), 1);
        assert!(citations_sections("## Citations\n- a\n").is_empty());
        assert!(citations_sections("```\n# Citations\n```\n").is_empty());
    }

    proptest::proptest! {
        #[test]
        fn scanners_never_panic(body in "(\\PC|[\\[\\]^`~#<>!?/ \t\r\n-]){0,200}") {
            let lines = scan(&body);
            let total: usize = lines.iter().map(|l| l.text.len()).sum();
            proptest::prop_assert!(total <= body.len());
            let _ = footnote_references(&body);
            let _ = md_links(&body);
            let _ = citations_sections(&body);
            let _ = has_computation_fence(&body);
            let _ = level2_headings(&body);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// Every label the line scan reports is among the raw superset, when there is one.
        #[test]
        fn footnote_label_superset_covers_the_scan(
            body in "([\\[\\]^`~#<>!\\\\ a-c\t\r\n-]|\\[\\^|    |```|<!--|-->|é){0,120}"
        ) {
            if let Some(sup) = footnote_label_superset(&body) {
                for r in footnote_references(&body) {
                    proptest::prop_assert!(sup.contains(&r.as_str()), "{r:?} missing from {sup:?}");
                }
            }
        }
    }

    #[test]
    fn footnote_label_superset_cases() {
        assert_eq!(footnote_label_superset("no refs"), Some(vec![]));
        assert_eq!(
            footnote_label_superset("a[^x] b\n```\n[^code]\n```\n[^x]: def\n"),
            Some(vec!["x", "code", "x"])
        );
        // A backtick before a reference's end: masking might change it.
        assert_eq!(footnote_label_superset("`[^x]` y\n"), None);
        assert_eq!(footnote_label_superset("[^a`]`b]\n"), None);
        // A backtick after the last reference on the line is harmless.
        assert_eq!(
            footnote_label_superset("[^x] and `code`\n"),
            Some(vec!["x"])
        );
        assert_eq!(footnote_label_superset("`a` [^open\n"), Some(vec![]));
    }

    #[test]
    fn html_comment_with_multibyte_text() {
        assert!(footnote_references("<?aé [^x]\n[^y]\n").is_empty());
        assert_eq!(footnote_references("<!-- a -->\n[^y]\n"), vec!["y"]);
    }

    #[test]
    fn computation_fence() {
        assert!(has_computation_fence("# Computation\n\n    SELECT 1\n"));
        assert!(has_computation_fence(
            "\u{feff}# Computation\r\n```\r\nx\r\n```\r\n"
        ));
        assert!(has_computation_fence("# Computation\n```sql\nx\n```\n"));
        assert!(!has_computation_fence("# Other\n```sql\nx\n```\n"));
    }
}
