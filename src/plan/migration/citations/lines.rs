//! Lines and sections (§6.2 rules 1–2).

use super::model::Notice;
use crate::okf::markdown::{self, citations_heading, fence_close, fence_open, LineKind};

/// One scanned body line with its byte positions in the body.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ln<'a> {
    /// The line text without its line ending (and without a leading byte order mark).
    pub(super) text: &'a str,
    /// Offset of `text` in the body.
    pub(super) start: usize,
    /// Offset of the next line (just after this line's ending), or the body length.
    pub(super) next: usize,
    pub(super) kind: LineKind,
}

impl Ln<'_> {
    pub(super) fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

/// The lines of `body` ([`markdown::scan`]) with their byte positions.
pub(super) fn lines(body: &str) -> Vec<Ln<'_>> {
    let scanned = markdown::scan(body);
    let mut out = Vec::with_capacity(scanned.len());
    for (i, l) in scanned.iter().enumerate() {
        // The scanner strips a leading U+FEFF from the first line's text only.
        let bom = if l.start == 0 && body.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        let next = scanned.get(i + 1).map_or(body.len(), |n| n.start);
        out.push(Ln {
            text: l.text,
            start: l.start + bom,
            next,
            kind: l.kind,
        });
    }
    out
}

/// One `# Citations` section: its heading line and the line that ends it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    /// Index of the heading line.
    pub(super) line: usize,
    /// Index of the first line after the section (the next level-1 heading, or `lines.len()`).
    pub(super) end_line: usize,
    pub(super) anchored: bool,
}

impl Head {
    /// The section's byte span in the body: heading text start to section end.
    pub(super) fn span(&self, lines: &[Ln<'_>]) -> (usize, usize) {
        let start = lines[self.line].start;
        let end = lines[self.end_line - 1].next;
        (start, end)
    }
    pub(super) fn heading_span(&self, lines: &[Ln<'_>]) -> (usize, usize) {
        let l = &lines[self.line];
        (l.start, l.end())
    }
}

/// Every active `# Citations` section (§6.2 rule 1), as the validator sees them
/// ([`markdown::citations_sections_of`]).
pub(super) fn sections(lines: &[Ln<'_>]) -> Vec<Head> {
    markdown::citations_sections_of(lines.iter().map(|l| (l.kind, l.text)))
        .into_iter()
        .map(|c| Head {
            line: c.heading_line,
            end_line: c.end_line,
            anchored: c.anchored,
        })
        .collect()
}

/// `WARN` `legacy_citations_in_code` (§6.2 rule 1): a `# Citations` heading line inside a
/// fenced code block that is never closed.
pub(super) fn code_notice(lines: &[Ln<'_>]) -> Option<Notice> {
    // (fence char, fence length, whether a `# Citations` line is inside)
    let mut open: Option<(u8, usize, bool)> = None;
    for l in lines {
        if l.kind != LineKind::Fenced {
            // A fenced block ends with its closing line; any other kind means none is open.
            open = None;
            continue;
        }
        match open {
            None => open = fence_open(l.text).map(|(c, n)| (c, n, false)),
            Some((c, n, seen)) => {
                if fence_close(l.text, c, n) {
                    open = None;
                } else if !seen && citations_heading(l.text).is_some() {
                    open = Some((c, n, true));
                }
            }
        }
    }
    match open {
        Some((_, _, true)) => Some(Notice {
            code: "legacy_citations_in_code",
            message: "a `# Citations` heading lies inside a fenced code block that is never \
                      closed: it is code, not a citations section"
                .to_owned(),
        }),
        _ => None,
    }
}
