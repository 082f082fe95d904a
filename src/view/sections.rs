//! Sections of a concept document and their terms (spec/surface.md §14.4, §14.5 rule 3,
//! §14.6 rules 2–3). Pure: bytes in, sections out.
//!
//! A section starts at an ATX or setext heading of the body ([`markdown::headings`]); the text
//! before the first heading is a section with the heading `""`. A section's bytes run from its
//! first line to the first line of the next section (line endings included), so
//! `content_sha256` of a locator can be checked from the file alone. A section whose own text
//! (heading and body) holds no term is not a section (§14.6 rule 3).
//!
//! The sections of a document are a pure function of its bytes, so a warm index can keep
//! them per file (spec/store.md §17).

use crate::okf::markdown::{self, Line};
use crate::view::terms;
use std::ops::Range;

/// One section of a concept document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading text (`""` for the text before the first heading).
    pub heading: String,
    /// First line of the section in the whole file, 1-based.
    pub line_start: usize,
    /// Last line of the section in the whole file, 1-based, inclusive.
    pub line_end: usize,
    /// The section's bytes in the whole file: its heading line(s) and its body lines, with
    /// their line endings.
    pub bytes: Range<usize>,
    /// Where the body starts (after the heading lines), as a byte offset in the whole file.
    pub body_start: usize,
}

/// The sections of a document whose whole text is `text` and whose body is `text[body]`
/// (spec/surface.md §14.6 rule 2), in order, including sections without terms (see
/// [`has_terms`]).
#[must_use]
pub fn sections(text: &str, body: Range<usize>) -> Vec<Section> {
    let Some(body_text) = text.get(body.clone()) else {
        return Vec::new();
    };
    let lines = markdown::scan(body_text);
    let heads = markdown::headings(&lines);
    let base_line = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..body.start]).count();
    let offset = |l: usize| -> usize {
        lines
            .get(l)
            .map_or(body.end, |line: &Line<'_>| body.start + line.start)
    };
    let mut out = Vec::with_capacity(heads.len() + 1);
    let first_head = heads.first().map_or(lines.len(), |h| h.first_line);
    if first_head > 0 {
        out.push(Section {
            heading: String::new(),
            line_start: base_line,
            line_end: base_line + first_head - 1,
            bytes: offset(0)..offset(first_head),
            body_start: offset(0),
        });
    }
    for (k, h) in heads.iter().enumerate() {
        let end = heads.get(k + 1).map_or(lines.len(), |n| n.first_line);
        out.push(Section {
            heading: h.text.clone(),
            line_start: base_line + h.first_line,
            line_end: base_line + end - 1,
            bytes: offset(h.first_line)..offset(end),
            body_start: offset(h.last_line + 1),
        });
    }
    out
}

/// The body text of `section` in `text` (its lines after the heading lines).
#[must_use]
pub fn body_of<'t>(text: &'t str, section: &Section) -> &'t str {
    text.get(section.body_start..section.bytes.end)
        .unwrap_or_default()
}

/// Whether the section's own text (heading and body) holds at least one term: only such a
/// section counts (spec/surface.md §14.6 rule 3).
#[must_use]
pub fn has_terms(text: &str, section: &Section) -> bool {
    let mut any = false;
    terms::for_each_term(&section.heading, |_| any = true);
    if !any {
        terms::for_each_term(body_of(text, section), |_| any = true);
    }
    any
}

/// Term counts of one text against the query terms: its token count and, per query term,
/// how often it occurs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Tokens of the text.
    pub len: u64,
    /// Occurrences of each query term, in query order.
    pub tf: Vec<u64>,
}

/// Counts the tokens of `text` and the occurrences of each of `query` (folded, distinct
/// terms; spec/surface.md §14.6 rule 1).
#[must_use]
pub fn count(text: &str, query: &[String]) -> Counts {
    count_with(&mut terms::TermSplitter::new(), text, query)
}

/// [`count`] with a caller's splitter, whose buffers are reused across texts.
#[must_use]
pub fn count_with(splitter: &mut terms::TermSplitter, text: &str, query: &[String]) -> Counts {
    let mut c = Counts {
        len: 0,
        tf: vec![0; query.len()],
    };
    splitter.for_each_term(text, |t| {
        c.len += 1;
        if let Some(i) = query.iter().position(|q| q == t) {
            c.tf[i] += 1;
        }
    });
    c
}

/// The weighted counts of one section (spec/surface.md §14.6 rule 3): frequency
/// `tf_body + 3·tf_heading + 2·tf_title`, length `body + 3·heading + 2·title`. `None` for a
/// section whose own text holds no term (not a section).
#[must_use]
pub fn weighted(heading: &Counts, body: &Counts, title: &Counts) -> Option<Counts> {
    if heading.len + body.len == 0 {
        return None;
    }
    Some(Counts {
        len: body.len + 3 * heading.len + 2 * title.len,
        tf: (0..title.tf.len())
            .map(|i| body.tf[i] + 3 * heading.tf[i] + 2 * title.tf[i])
            .collect(),
    })
}

/// The snippet of a hit (spec/surface.md §14.5 rule 3): the first line of the section that
/// contains a query term, cut to 512 characters at a character boundary; the section's first
/// non-blank line when only the title holds the terms.
#[must_use]
pub fn snippet(text: &str, section: &Section, query: &[String]) -> String {
    let bytes = text.get(section.bytes.clone()).unwrap_or_default();
    let lines = || bytes.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut pick = lines().find(|l| {
        let mut hit = false;
        terms::for_each_term(l, |t| hit |= query.iter().any(|q| q == t));
        hit
    });
    if pick.is_none() {
        pick = lines().find(|l| !l.trim().is_empty());
    }
    pick.unwrap_or_default().chars().take(MAX_SNIPPET).collect()
}

/// Longest snippet, in characters (spec/surface.md §11).
pub const MAX_SNIPPET: usize = 512;

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(text: &str) -> Vec<(String, usize, usize, String)> {
        let body_start = text.find("---\n\n").map_or(0, |i| i + 5);
        sections(text, body_start..text.len())
            .into_iter()
            .map(|s| {
                let b = text[s.bytes.clone()].to_owned();
                (s.heading, s.line_start, s.line_end, b)
            })
            .collect()
    }

    #[test]
    fn atx_and_setext_headings_split_sections_with_file_lines() {
        let text =
            "---\ntitle: T\n---\n\nintro\n# One\nbody 1\n\nTwo\n===\nbody 2\n```\n# not\n```\n";
        let s = secs(text);
        assert_eq!(
            s,
            vec![
                ("".into(), 5, 5, "intro\n".into()),
                ("One".into(), 6, 8, "# One\nbody 1\n\n".into()),
                (
                    "Two".into(),
                    9,
                    14,
                    "Two\n===\nbody 2\n```\n# not\n```\n".into()
                ),
            ]
        );
    }

    #[test]
    fn a_body_starting_with_a_heading_has_no_empty_first_section() {
        let s = secs("# A\nx\n## B\n");
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].1, s[0].2, s[1].1, s[1].2), (1, 2, 3, 3));
    }

    #[test]
    fn list_items_and_thematic_breaks_are_not_setext_headings() {
        let text = "- item\n---\npara\n***\n===\n";
        let s = secs(text);
        assert_eq!(s.len(), 1, "{s:?}");
        let text = "line one\nline two\n---\n";
        let s = secs(text);
        assert_eq!(s[0].0, "line one\nline two");
    }

    #[test]
    fn weighted_counts_follow_rule_3_and_empty_sections_are_dropped() {
        let q = vec!["a".to_owned()];
        let h = count("a b", &q);
        let b = count("a a c", &q);
        let t = count("a", &q);
        let w = weighted(&h, &b, &t).expect("a section");
        assert_eq!((w.len, w.tf.clone()), (3 + 3 * 2 + 2, vec![2 + 3 + 2]));
        assert!(weighted(&count("", &q), &count(" \n", &q), &t).is_none());
    }

    #[test]
    fn snippet_is_the_first_line_with_a_term_cut_at_512_characters() {
        let long = "é".repeat(600);
        let text = format!("# H\nnothing\n{long} needle\n");
        let s = &sections(&text, 0..text.len())[0];
        let sn = snippet(&text, s, &["needle".to_owned()]);
        assert_eq!(sn.chars().count(), 512);
        assert!(sn.starts_with('é'));
        assert_eq!(snippet(&text, s, &["zzz".to_owned()]), "# H");
    }
}
