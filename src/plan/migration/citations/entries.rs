//! Section entries (§6.2 rules 3–4, §12.1, §12.6 rule 2).

use super::inline::Legacy;
use super::lines::{Head, Ln};
use super::model::{Blocker, TrailingContent};
use crate::okf::markdown::{indent, LineKind};
use std::collections::HashMap;

/// A legacy citation entry owned by the parser.
#[derive(Debug, Clone)]
pub(super) struct Entry<'a> {
    /// Byte span of the line text in the body.
    pub(super) start: usize,
    pub(super) end: usize,
    /// Its number (§6.2 rule 3, §12.1 rule 2), if it has one.
    pub(super) number: Option<u64>,
    /// Spot content (§6.2 rule 3, §12.1 rule 3).
    pub(super) raw: &'a str,
}

/// The list-marker form of an entry line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// `-`, `*` or `+`.
    Bullet,
    /// A paragraph line starting `[N]`.
    Bracket,
    /// `N.` or `N)`: the delimiter.
    Ordered(u8),
}

/// What one line of a section is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cls<'a> {
    Blank,
    /// An entry line: its form, the number it carries (`[N]`, or an ordered item's digits), its
    /// raw content.
    Entry {
        form: Form,
        digits: Option<u64>,
        raw: &'a str,
    },
    /// An entry form the grammar does not support (`[0]`, `0.`, `01.`, an indented item).
    Unsupported(&'static str),
    /// A line continuing a list item (which is then a multi-line item).
    Continuation,
    /// Fenced code, indented code, HTML or a comment.
    Opaque,
    /// Any other non-blank line; `text` when it is a paragraph-like text line.
    Unowned {
        text: bool,
    },
}

/// `[N]` followed by space or tab at the start of `s`: `Ok(Some((N, rest)))`; `Err(())` for a
/// zero or zero-led number (`[0]`, `[01]`); `Ok(None)` otherwise (also for numbers beyond
/// `u64`).
pub(super) fn bracket_prefix(s: &str) -> Result<Option<(u64, &str)>, ()> {
    let Some(r) = s.strip_prefix('[') else {
        return Ok(None);
    };
    let d = r.bytes().take_while(u8::is_ascii_digit).count();
    if d == 0 || !r[d..].starts_with(']') || !matches!(r.as_bytes().get(d + 1), Some(b' ' | b'\t'))
    {
        return Ok(None);
    }
    if r.starts_with('0') {
        return Err(());
    }
    let Ok(n) = r[..d].parse::<u64>() else {
        return Ok(None);
    };
    Ok(Some((n, skip_ws(&r[d + 1..]))))
}

pub(super) fn skip_ws(s: &str) -> &str {
    s.trim_start_matches([' ', '\t'])
}

/// A thematic break line (CommonMark §4.1): not a list item.
pub(super) fn thematic_break(text: &str) -> bool {
    let (col, i) = indent(text);
    if col > 3 {
        return false;
    }
    let rest = &text[i..];
    let Some(c) = rest.bytes().next() else {
        return false;
    };
    matches!(c, b'-' | b'*' | b'_')
        && rest.bytes().all(|b| b == c || b == b' ' || b == b'\t')
        && rest.bytes().filter(|&b| b == c).count() >= 3
}

/// A list-item marker at the start of `s` (no indentation): the form and the content after
/// the marker and its whitespace; for an ordered marker also its digits (`Err` when zero or
/// zero-led).
pub(super) fn list_marker(s: &str) -> Option<(Form, Result<u64, ()>, &str)> {
    let b = s.as_bytes();
    if matches!(b.first(), Some(b'-' | b'*' | b'+')) && matches!(b.get(1), Some(b' ' | b'\t')) {
        return Some((Form::Bullet, Ok(0), skip_ws(&s[1..])));
    }
    let d = s.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=9).contains(&d) {
        return None;
    }
    let delim = *b.get(d)?;
    if !matches!(delim, b'.' | b')') || !matches!(b.get(d + 1), Some(b' ' | b'\t')) {
        return None;
    }
    let n = if s.starts_with('0') {
        Err(())
    } else {
        s[..d].parse::<u64>().map_err(|_| ())
    };
    Some((Form::Ordered(delim), n, skip_ws(&s[d + 1..])))
}

/// The class of one section line (before continuations and run numbering).
pub(super) fn classify<'a>(l: &Ln<'a>) -> Cls<'a> {
    match l.kind {
        LineKind::Blank => return Cls::Blank,
        LineKind::Fenced | LineKind::IndentedCode | LineKind::Html => return Cls::Opaque,
        LineKind::Heading(_) => return Cls::Unowned { text: false },
        LineKind::Text => {}
    }
    let t = l.text;
    if thematic_break(t) {
        return Cls::Unowned { text: true };
    }
    let (col, i) = indent(t);
    if let Some((form, n, content)) = list_marker(&t[i..]) {
        if col > 0 {
            return Cls::Unsupported("an indented list item");
        }
        return match form {
            Form::Ordered(_) => match n {
                Ok(n) => Cls::Entry {
                    form,
                    digits: Some(n),
                    raw: content,
                },
                Err(()) => Cls::Unsupported("an ordered item numbered 0 or with a leading zero"),
            },
            _ => match bracket_prefix(content) {
                Ok(Some((n, raw))) => Cls::Entry {
                    form,
                    digits: Some(n),
                    raw,
                },
                Ok(None) => Cls::Entry {
                    form,
                    digits: None,
                    raw: content,
                },
                Err(()) => Cls::Unsupported("a `[0]` or zero-led citation number"),
            },
        };
    }
    if col == 0 {
        match bracket_prefix(t) {
            Ok(Some((n, raw))) => {
                return Cls::Entry {
                    form: Form::Bracket,
                    digits: Some(n),
                    raw,
                }
            }
            Err(()) => return Cls::Unsupported("a `[0]` or zero-led citation number"),
            Ok(None) => {}
        }
    }
    Cls::Unowned { text: true }
}

/// Whether a class is a list-item entry (a continuation can follow it).
pub(super) fn is_list_entry(c: &Cls<'_>) -> bool {
    matches!(
        c,
        Cls::Entry {
            form: Form::Bullet | Form::Ordered(_),
            ..
        }
    )
}

/// The parsed citations section of a body.
#[derive(Debug)]
pub(super) struct Parsed<'a> {
    pub(super) entries: Vec<Entry<'a>>,
    /// Syntax blockers (body offsets; shifted by the caller).
    pub(super) blockers: Vec<Spot>,
    /// Line index range of the owned region: the heading line and the owned entry and blank
    /// lines after it.
    pub(super) owned: (usize, usize),
    /// Byte span of the owned region in the body (line endings included).
    pub(super) owned_span: (usize, usize),
    /// Whether content after the entries is kept (`trailing_content: keep`, §12.6 rule 2).
    pub(super) kept: bool,
    /// Whether a kept line is an entry-like line holding a link or autolink: a real citation
    /// after the break, which `keep` would turn into prose (§12.8; no proposal then).
    pub(super) trailing_links: bool,
}

/// A blocker as found: located in the body (before its shift to document offsets), or at the
/// frontmatter (`frontmatter`: the span `0..body_offset` of the document).
#[derive(Debug, Clone)]
pub(super) struct Spot {
    pub(super) code: &'static str,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) frontmatter: bool,
    pub(super) message: String,
    pub(super) action: Option<&'static str>,
}

impl Spot {
    pub(super) fn new(
        code: &'static str,
        (start, end): (usize, usize),
        message: impl Into<String>,
    ) -> Self {
        Spot {
            code,
            start,
            end,
            frontmatter: false,
            message: message.into(),
            action: action_for(code),
        }
    }
    pub(super) fn frontmatter(code: &'static str, message: impl Into<String>) -> Self {
        Spot {
            code,
            start: 0,
            end: 0,
            frontmatter: true,
            message: message.into(),
            action: action_for(code),
        }
    }
    pub(super) fn with_action(self, action: &'static str) -> Self {
        Spot {
            action: Some(action),
            ..self
        }
    }
    pub(super) fn into_blocker(self, offset: usize) -> Blocker {
        let (start, end) = if self.frontmatter {
            (0, offset)
        } else {
            (self.start + offset, self.end + offset)
        };
        Blocker {
            action: self.action,
            code: self.code,
            start,
            end,
            message: self.message,
        }
    }
}

/// The manual action a blocker code triggers (§10.3), if any.
pub(super) fn action_for(code: &str) -> Option<&'static str> {
    Some(match code {
        "missing_explicit_citation_mapping"
        | "incomplete_citation_mapping"
        | "unresolved_citation_entry"
        | "unresolved_claim_marker"
        | "migration_citation_replay_evidence_missing"
        | "unresolved_inline_note" => "provide_citation_mapping",
        "ambiguous_citation_mapping"
        | "duplicate_citation_number"
        | "normalized_footnote_label_collision" => "disambiguate_citation_entry",
        "ambiguous_citation_destination" => "disambiguate_citation_destination",
        "unowned_citations_content"
        | "opaque_citations_content"
        | "unsupported_citation_entry"
        | "heading_source_anchor"
        | "multiple_citations_sections" => "normalize_citations_section",
        _ => return None,
    })
}

/// Parses the section `head` (§6.2 rules 3–4, §12.1, §12.6 rule 2).
pub(super) fn parse_section<'a>(
    lines: &[Ln<'a>],
    head: &Head,
    mode: TrailingContent,
) -> Parsed<'a> {
    let body_lines = &lines[head.line + 1..head.end_line];
    let mut cls: Vec<Cls<'a>> = body_lines.iter().map(classify).collect();

    // Continuations: a text line right after a list item, or an indented one after blank
    // lines, belongs to that item (CommonMark), which is then a multi-line item.
    let mut item: Option<usize> = None;
    let mut after_blank = false;
    let mut multi: Vec<Option<usize>> = vec![None; cls.len()];
    for i in 0..cls.len() {
        let c = cls[i];
        match c {
            Cls::Blank => {
                after_blank = true;
                continue;
            }
            Cls::Entry { .. } if is_list_entry(&c) => item = Some(i),
            Cls::Unowned { text: true } | Cls::Unsupported(_) => {
                let indented = indent(body_lines[i].text).0 > 0;
                match item {
                    Some(k) if !after_blank || indented => {
                        cls[i] = Cls::Continuation;
                        multi[k] = Some(i);
                    }
                    _ => item = None,
                }
            }
            _ => item = None,
        }
        after_blank = false;
    }

    // Under `keep` (§12.6 rule 2, §12.8) the owned run is the unbroken run of entry and blank
    // lines right after the heading: the first other non-blank line and every line after it,
    // entry-like or not, is trailing content, kept byte for byte and never a blocker.
    let first_other = cls
        .iter()
        .position(|c| matches!(c, Cls::Opaque | Cls::Unowned { .. }));
    let keep = mode == TrailingContent::Keep && first_other.is_some();
    let owned_lines = match (keep, first_other) {
        (true, Some(t)) => t,
        _ => cls.len(),
    };
    let trailing_links = cls[owned_lines..]
        .iter()
        .zip(&body_lines[owned_lines..])
        .any(|(c, l)| match *c {
            Cls::Entry { raw, .. } => !Legacy::parse(raw).links.is_empty(),
            Cls::Unsupported(_) => !Legacy::parse(l.text).links.is_empty(),
            _ => false,
        });

    let mut blockers = Vec::new();
    let mut entries = Vec::new();
    // Ordered runs (§12.1 rule 2): (delimiter, start, count).
    let mut run: Option<(u8, u64, u64)> = None;
    let mut numbers: HashMap<u64, usize> = HashMap::new();
    for (i, c) in cls.iter().enumerate().take(owned_lines) {
        let l = &body_lines[i];
        let number = match *c {
            Cls::Blank => continue,
            Cls::Entry {
                form: Form::Ordered(d),
                digits,
                ..
            } => match run {
                Some((rd, s, k)) if rd == d => {
                    run = Some((rd, s, k + 1));
                    s.checked_add(k)
                }
                _ => {
                    run = Some((d, digits.unwrap_or(0), 1));
                    digits
                }
            },
            Cls::Entry { digits, .. } => {
                run = None;
                digits
            }
            _ => {
                run = None;
                None
            }
        };
        match *c {
            Cls::Entry { raw, .. } => {
                if let Some(last) = multi[i] {
                    let end = body_lines[last].end();
                    blockers.push(Spot::new(
                        "unsupported_citation_entry",
                        (l.start, end),
                        "a citation entry spans more than one line; write each entry on a \
                         single line",
                    ));
                }
                if let Some(n) = number {
                    if numbers.insert(n, entries.len()).is_some() {
                        blockers.push(Spot::new(
                            "duplicate_citation_number",
                            (l.start, l.end()),
                            format!("citation number {n} is used by more than one entry"),
                        ));
                    }
                }
                entries.push(Entry {
                    start: l.start,
                    end: l.end(),
                    number,
                    raw,
                });
            }
            Cls::Unsupported(why) => blockers.push(Spot::new(
                "unsupported_citation_entry",
                (l.start, l.end()),
                format!("unsupported citation entry: {why}"),
            )),
            _ => {}
        }
    }

    // Content that is neither an entry nor blank, outside a kept tail: a blocker.
    if !keep {
        let mut i = 0;
        while i < cls.len() {
            let code = match cls[i] {
                Cls::Opaque => "opaque_citations_content",
                Cls::Unowned { .. } => "unowned_citations_content",
                _ => {
                    i += 1;
                    continue;
                }
            };
            // One blocker per run of adjacent lines of the same kind.
            let start = body_lines[i].start;
            let mut j = i;
            while j + 1 < cls.len()
                && matches!(
                    (code, cls[j + 1]),
                    ("opaque_citations_content", Cls::Opaque)
                        | ("unowned_citations_content", Cls::Unowned { .. })
                )
            {
                j += 1;
            }
            let message = if code == "opaque_citations_content" {
                "fenced code, indented code, HTML or a comment inside the citations section"
            } else {
                "content inside the citations section that is not a citation entry"
            };
            blockers.push(Spot::new(code, (start, body_lines[j].end()), message));
            i = j + 1;
        }
    }
    let owned_end_line = head.line + 1 + owned_lines;
    let owned_span = (lines[head.line].start, lines[owned_end_line - 1].next);
    Parsed {
        entries,
        blockers,
        owned: (head.line, owned_end_line),
        owned_span,
        kept: keep,
        trailing_links,
    }
}
