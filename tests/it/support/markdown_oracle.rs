//! pulldown-cmark as a differential oracle of `okf_mcp::okf::markdown` (issue 21 item 7),
//! shared by the proptest (`tests/it/markdown_oracle.rs`) and the fuzz target
//! (`fuzz/fuzz_targets/markdown_oracle.rs`).
//!
//! On the constructs the scanner claims to handle, the scanner and pulldown-cmark (CommonMark,
//! no extensions) must agree on: which lines are ATX headings and of which level, which lines
//! are fenced code, which non-blank lines are indented code, which bytes of ordinary lines are
//! code spans, and the `.md` destinations of inline links. [`supported`] says which bodies the
//! comparison covers; what it leaves out is listed in the scanner's docstring as deliberate
//! differences (block quotes, lists, setext headings, HTML blocks, inline HTML and autolinks,
//! link reference definitions and reference links, tabs, code spans across lines, links
//! whose text holds brackets or whose destination needs escapes).

use okf_mcp::okf::markdown::{self, LineKind};
use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag};
use std::collections::BTreeSet;

/// Whether `body` uses only constructs the comparison covers.
pub fn supported(body: &str) -> bool {
    body.split('\n').all(supported_line)
}

/// The lines of `body` that [`supported`] covers, in order (the fuzz target's input mapping).
pub fn supported_part(body: &str) -> String {
    body.split('\n')
        .filter(|l| supported_line(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether one line is of the covered constructs.
fn supported_line(line: &str) -> bool {
    // `]:` anywhere: a link reference definition whose label spans lines (`[\n`a`\n]: x`)
    // ends on this line, and pulldown-cmark reads the lines before it as its label.
    // `<` anywhere: an autolink or inline HTML (``<a+:`x`>``, ``<b c='`'>``) takes
    // precedence over a code span that starts inside it, and the scanner models neither.
    if line.contains(['\t', '\r', '\u{feff}', '\0', '<'])
        || line.contains("[^")
        || line.contains("]:")
    {
        return false;
    }
    {
        let t = line.trim_start_matches(' ');
        let indent = line.len() - t.len();
        if indent <= 3 {
            let first = t.bytes().next();
            // Block quotes, list items, thematic breaks and setext underlines, HTML blocks,
            // tables, link reference definitions.
            if matches!(
                first,
                Some(b'>' | b'-' | b'+' | b'*' | b'_' | b'=' | b'<' | b'|')
            ) || (first == Some(b'[') && t.contains("]:"))
            {
                return false;
            }
            let digits = t.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && matches!(t.as_bytes().get(digits), Some(b'.' | b')')) {
                return false;
            }
        }
    }
    true
}

/// The facts both sides are compared on.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// `(line index, level)` of each ATX heading.
    pub headings: BTreeSet<(usize, u8)>,
    /// Line indices inside fenced code blocks (fences included).
    pub fenced: BTreeSet<usize>,
    /// Non-blank line indices of indented code blocks.
    pub indented: BTreeSet<usize>,
    /// Byte offsets (in the body) covered by code spans on single lines.
    pub code_spans: BTreeSet<usize>,
    /// `.md` destinations of inline links, in document order; `None` when a link of the body
    /// is outside the compared forms.
    pub links: Option<Vec<String>>,
}

/// Line start offsets of `body` (as [`markdown::scan`] splits it).
fn line_starts(body: &str) -> Vec<usize> {
    let mut v = vec![0];
    for (i, b) in body.bytes().enumerate() {
        if b == b'\n' && i + 1 < body.len() {
            v.push(i + 1);
        }
    }
    v
}

fn line_of(starts: &[usize], offset: usize) -> usize {
    match starts.binary_search(&offset) {
        Ok(i) => i,
        Err(i) => i.saturating_sub(1),
    }
}

/// The scanner's facts.
pub fn scanner(body: &str) -> Facts {
    let mut f = Facts::default();
    let lines = markdown::scan(body);
    for (i, l) in lines.iter().enumerate() {
        match l.kind {
            LineKind::Heading(level) => {
                f.headings.insert((i, level));
            }
            LineKind::Fenced => {
                f.fenced.insert(i);
            }
            LineKind::IndentedCode if !l.text.trim().is_empty() => {
                f.indented.insert(i);
            }
            LineKind::Text => {
                let mask = markdown::code_span_mask(l.text.as_bytes());
                for (j, m) in mask.iter().enumerate() {
                    if *m {
                        f.code_spans.insert(l.start + j);
                    }
                }
            }
            _ => {}
        }
    }
    f.links = Some(markdown::md_links(body));
    f
}

/// Whether a link destination is one [`markdown::md_links`] reports (relative or `/`-rooted,
/// path part ending in `.md`), and its path part.
fn md_target(dest: &str) -> Option<String> {
    let path = dest.split(['#', '?']).next().unwrap_or_default();
    let has_scheme = path.split_once(':').is_some_and(|(s, _)| !s.contains('/'));
    (path.ends_with(".md") && !has_scheme && !path.starts_with("//")).then(|| path.to_owned())
}

/// pulldown-cmark's facts.
pub fn oracle(body: &str) -> Facts {
    let mut f = Facts::default();
    let starts = line_starts(body);
    let mut links = Vec::new();
    let mut links_ok = true;
    let mut in_heading = false;
    for (event, range) in Parser::new_ext(body, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                in_heading = true;
                f.headings
                    .insert((line_of(&starts, range.start), level as u8));
            }
            Event::End(pulldown_cmark::TagEnd::Heading(_)) => in_heading = false,
            Event::Start(Tag::CodeBlock(kind)) => {
                let first = line_of(&starts, range.start);
                let last = line_of(&starts, range.end.saturating_sub(1).max(range.start));
                for i in first..=last {
                    let text = body[starts[i]..].split('\n').next().unwrap_or_default();
                    match kind {
                        CodeBlockKind::Fenced(_) => {
                            f.fenced.insert(i);
                        }
                        CodeBlockKind::Indented if !text.trim().is_empty() => {
                            f.indented.insert(i);
                        }
                        CodeBlockKind::Indented => {}
                    }
                }
            }
            Event::Code(_) => {
                let text = &body[range.clone()];
                // Across lines: a deliberate difference, left out by `compare`.
                if !text.contains('\n') && !in_heading {
                    f.code_spans.extend(range);
                }
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) => {
                if link_type != LinkType::Inline {
                    links_ok = false;
                } else if let Some(t) = md_target(&dest_url) {
                    links.push(t);
                }
            }
            _ => {}
        }
    }
    f.links = links_ok.then_some(links);
    f
}

/// Whether every link of `body` is in the compared form: `[text](dest)` with no bracket,
/// backslash, backtick or angle bracket in `text`, and a destination of letters, digits and
/// `._/-#?` only.
pub fn simple_links(body: &str) -> bool {
    let mut i = 0;
    while let Some(j) = body[i..].find("](").map(|j| i + j) {
        let open = body[..j].rfind('[');
        let Some(open) = open else { return false };
        let text = &body[open + 1..j];
        if text.contains(['[', ']', '\\', '`', '<', '>', '\n']) {
            return false;
        }
        let rest = &body[j + 2..];
        let Some(end) = rest.find(')') else {
            return false;
        };
        if !rest[..end]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"._/-#?".contains(&c))
        {
            return false;
        }
        i = j + 2 + end;
    }
    // `[` `]` pairs not followed by `(` could be reference links (shortcut form).
    !body.contains("][") && !body.contains("\\")
}

/// Compares the scanner with the oracle on `body` (a supported body). `Err` names the first
/// disagreement.
pub fn compare(body: &str) -> Result<(), String> {
    let s = scanner(body);
    let o = oracle(body);
    if s.headings != o.headings {
        return Err(format!(
            "headings: scanner {:?}, pulldown {:?}",
            s.headings, o.headings
        ));
    }
    if s.fenced != o.fenced {
        return Err(format!(
            "fenced: scanner {:?}, pulldown {:?}",
            s.fenced, o.fenced
        ));
    }
    if s.indented != o.indented {
        return Err(format!(
            "indented: scanner {:?}, pulldown {:?}",
            s.indented, o.indented
        ));
    }
    // Code spans on text lines; the lines a pulldown-cmark code span across lines touches are
    // left out (the scanner finds spans within one line: a deliberate difference).
    let starts = line_starts(body);
    let multi: BTreeSet<usize> = oracle_multiline_code(body)
        .into_iter()
        .flat_map(|r| line_of(&starts, r.start)..=line_of(&starts, r.end.saturating_sub(1)))
        .collect();
    let compared = |p: &usize| {
        let l = line_of(&starts, *p);
        !multi.contains(&l)
            && !s.headings.iter().any(|(h, _)| *h == l)
            && !s.fenced.contains(&l)
            && !s.indented.contains(&l)
    };
    let a: BTreeSet<usize> = s.code_spans.iter().copied().filter(compared).collect();
    let b: BTreeSet<usize> = o.code_spans.iter().copied().filter(compared).collect();
    if a != b {
        return Err(format!("code spans: scanner {a:?}, pulldown {b:?}"));
    }
    if multi.is_empty() && simple_links(body) {
        if let (Some(a), Some(b)) = (&s.links, &o.links) {
            if a != b {
                return Err(format!("links: scanner {a:?}, pulldown {b:?}"));
            }
        }
    }
    Ok(())
}

/// The ranges of pulldown-cmark code spans that cross a line.
fn oracle_multiline_code(body: &str) -> Vec<std::ops::Range<usize>> {
    Parser::new_ext(body, Options::empty())
        .into_offset_iter()
        .filter_map(|(e, r)| match e {
            Event::Code(_) if body[r.clone()].contains('\n') => Some(r),
            _ => None,
        })
        .collect()
}

/// `(first line, level)` of every heading, ATX and setext, as the document model's heading
/// scanner finds them (`okf::markdown::headings`, spec/surface.md §14.6 rule 2).
pub fn scanner_headings(body: &str) -> BTreeSet<(usize, u8)> {
    let lines = markdown::scan(body);
    markdown::headings(&lines)
        .into_iter()
        .map(|h| (h.first_line, h.level))
        .collect()
}

/// `(first line, level)` of every heading pulldown-cmark reads.
pub fn oracle_headings(body: &str) -> BTreeSet<(usize, u8)> {
    let starts = line_starts(body);
    Parser::new_ext(body, Options::empty())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Heading { level, .. }) => {
                Some((line_of(&starts, range.start), level as u8))
            }
            _ => None,
        })
        .collect()
}
