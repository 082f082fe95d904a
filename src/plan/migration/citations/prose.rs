//! Prose: claim markers (§6.2 rule 5), inline notes (§12.2 rule 1), footnote definitions.

use super::inline::{code_mask, escaped};
use super::lines::Ln;
use super::model::CitationMapping;
use crate::okf::markdown::{self, LineKind};
use std::collections::HashMap;

/// A claim marker `[N]` (`number` 0 for the invalid `[0]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Marker {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) number: u64,
}

/// An inline note `^[text]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Note<'a> {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) text: &'a str,
}

/// Claim markers and inline notes on the interpretable lines of `lines` for which `skip` is
/// false, in body order.
pub(super) fn prose<'a>(
    lines: &[Ln<'a>],
    skip: impl Fn(usize) -> bool,
) -> (Vec<Marker>, Vec<Note<'a>>) {
    let mut markers = Vec::new();
    let mut notes = Vec::new();
    for (idx, l) in lines.iter().enumerate() {
        if !matches!(l.kind, LineKind::Text | LineKind::Heading(_))
            || !l.text.contains('[')
            || skip(idx)
        {
            continue;
        }
        let t = l.text;
        let b = t.as_bytes();
        let mask = code_mask(b);
        let definition = markdown::is_footnote_definition(t);
        for p in memchr::memchr2_iter(b'[', b'^', b) {
            if mask[p] || escaped(b, p) {
                continue;
            }
            if b[p] == b'^' {
                if let Some((end, text)) = inline_note_at(t, &mask, p) {
                    notes.push(Note {
                        start: l.start + p,
                        end: l.start + end,
                        text,
                    });
                }
            } else if !definition {
                if let Some((end, number)) = marker_at(b, p) {
                    markers.push(Marker {
                        start: l.start + p,
                        end: l.start + end,
                        number,
                    });
                }
            }
        }
    }
    (markers, notes)
}

/// The claim marker at the `[` at `p` (§6.2 rule 5): its end and number.
pub(super) fn marker_at(b: &[u8], p: usize) -> Option<(usize, u64)> {
    let d = b[p + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if d == 0 || b.get(p + 1 + d) != Some(&b']') {
        return None;
    }
    if p > 0 && matches!(b[p - 1], b'!' | b'^') {
        return None;
    }
    let end = p + d + 2;
    if matches!(b.get(end), Some(b'(' | b'[' | b':')) {
        return None;
    }
    let digits = std::str::from_utf8(&b[p + 1..p + 1 + d]).ok()?;
    if digits == "0" {
        return Some((end, 0));
    }
    if digits.starts_with('0') {
        return None;
    }
    digits.parse::<u64>().ok().map(|n| (end, n))
}

/// The inline note at the `^` at `p` (§12.2 rule 1): its end and text.
pub(super) fn inline_note_at<'a>(t: &'a str, mask: &[bool], p: usize) -> Option<(usize, &'a str)> {
    let b = t.as_bytes();
    if b.get(p + 1) != Some(&b'[') || mask.get(p + 1) != Some(&false) {
        return None;
    }
    let from = p + 2;
    let close = from + b[from..].iter().position(|&c| c == b'[' || c == b']')?;
    if b[close] != b']' || mask[close] || close == from {
        return None;
    }
    if matches!(b.get(close + 1), Some(b'(' | b'[' | b':')) {
        return None;
    }
    Some((close + 1, t.get(from..close)?))
}

/// A footnote definition line: `(label, content)` with the content trimmed.
pub(super) fn definition(text: &str) -> Option<(&str, &str)> {
    if !markdown::is_footnote_definition(text) {
        return None;
    }
    let rest = text.trim_start_matches(' ').strip_prefix("[^")?;
    let end = rest.find(']')?;
    let content = rest[end + 1..].strip_prefix(':')?;
    Some((&rest[..end], content.trim_matches([' ', '\t'])))
}

/// Whether an existing definition's (trimmed) content is the rendered `content`.
pub(super) fn same_content(existing: &str, content: &str) -> bool {
    existing == content.trim_matches([' ', '\t'])
}

/// A footnote definition of the body.
#[derive(Debug, Clone)]
pub(super) struct Def<'a> {
    /// Normalised label (§6.3 rule 6).
    pub(super) label: String,
    pub(super) content: &'a str,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// The footnote definitions on interpretable lines for which `skip` is false.
pub(super) fn definitions<'a>(lines: &[Ln<'a>], skip: impl Fn(usize) -> bool) -> Vec<Def<'a>> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.kind != LineKind::Text || skip(i) {
            continue;
        }
        if let Some((label, content)) = definition(l.text) {
            out.push(Def {
                label: markdown::normalise_label(label),
                content,
                start: l.start,
                end: l.end(),
            });
        }
    }
    out
}

/// The mapped inline notes of a mapping: note text → source id (§12.2 rule 2).
pub(super) fn note_map(mapping: &CitationMapping) -> HashMap<&str, &str> {
    let mut map = HashMap::new();
    for m in &mapping.entries {
        if let Some(n) = &m.inline_note {
            map.entry(n.as_str()).or_insert(m.source_id.as_str());
        }
    }
    map
}

/// The rewrite of one inline note (§12.2 rules 2 and 2a): the footnote references and the
/// mapped note texts used, or `None` when it stays as it is.
pub(super) fn note_rewrite<'a>(
    text: &'a str,
    map: &HashMap<&str, &str>,
) -> Option<(String, Vec<&'a str>)> {
    if let Some(id) = map.get(text) {
        return Some((format!("[^{id}]"), vec![text]));
    }
    let parts: Vec<&str> = text.split(", ").collect();
    if parts.len() < 2 || !parts.iter().all(|p| map.contains_key(p)) {
        return None;
    }
    let mut refs = String::new();
    for p in &parts {
        refs.push_str("[^");
        refs.push_str(map.get(p).copied().unwrap_or_default());
        refs.push(']');
    }
    Some((refs, parts))
}
