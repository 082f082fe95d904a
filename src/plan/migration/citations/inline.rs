//! Inline syntax: code spans, escapes, links (projection, §3.3).

use super::model::MappingEntry;
use crate::okf::markdown;

/// Bytes of `b` inside inline code spans ([`markdown::code_span_mask`]).
pub(super) fn code_mask(b: &[u8]) -> Vec<bool> {
    // Only a backtick opens a code span: without one (most lines) the mask is all false.
    if memchr::memchr(b'`', b).is_none() {
        return vec![false; b.len()];
    }
    markdown::code_span_mask(b)
}

/// Whether the byte at `p` is backslash-escaped (an odd run of backslashes before it).
pub(super) fn escaped(b: &[u8], p: usize) -> bool {
    b[..p].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1
}

/// `s` with backslash escapes of ASCII punctuation resolved (CommonMark §2.4).
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&n) = chars.peek() {
                if n.is_ascii_punctuation() {
                    out.push(n);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

/// An inline link `[text](destination "title")` or an autolink `<scheme:…>` of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Link<'a> {
    /// The link text (raw bytes between the brackets); empty for an autolink.
    pub(super) text: &'a str,
    /// The destination, escapes resolved.
    pub(super) dest: String,
    /// The title attribute, escapes resolved.
    pub(super) title: Option<String>,
}

/// The inline link starting at the `[` at `p`: the link and the offset after it.
pub(super) fn inline_link<'a>(s: &'a str, mask: &[bool], p: usize) -> Option<(Link<'a>, usize)> {
    let b = s.as_bytes();
    // The link text: balanced brackets, escapes and code spans skipped.
    let mut depth = 0usize;
    let mut j = p + 1;
    let close = loop {
        let c = *b.get(j)?;
        if mask[j] {
            j += 1;
            continue;
        }
        match c {
            b'\\' => {
                j += 2;
                continue;
            }
            b'[' => depth += 1,
            b']' if depth == 0 => break j,
            b']' => depth -= 1,
            _ => {}
        }
        j += 1;
    };
    let mut k = close + 1;
    if b.get(k) != Some(&b'(') {
        return None;
    }
    k += 1;
    let ws = |k: &mut usize| {
        let from = *k;
        while matches!(b.get(*k), Some(b' ' | b'\t')) {
            *k += 1;
        }
        *k > from
    };
    ws(&mut k);
    let dest = if b.get(k) == Some(&b'<') {
        let from = k + 1;
        let mut e = from;
        loop {
            match *b.get(e)? {
                b'\\' => e += 2,
                b'>' => break,
                b'<' => return None,
                _ => e += 1,
            }
        }
        let d = unescape(s.get(from..e)?);
        k = e + 1;
        d
    } else {
        let from = k;
        let mut parens = 0usize;
        while let Some(&c) = b.get(k) {
            if c == b'\\' && b.get(k + 1).is_some_and(u8::is_ascii_punctuation) {
                k += 2;
                continue;
            }
            if c == b' ' || c == b'\t' || c.is_ascii_control() {
                break;
            }
            if c == b'(' {
                parens += 1;
            } else if c == b')' {
                if parens == 0 {
                    break;
                }
                parens -= 1;
            }
            k += 1;
        }
        if parens != 0 {
            return None;
        }
        unescape(s.get(from..k)?)
    };
    let spaced = ws(&mut k);
    let mut title = None;
    if let Some(&open) = b.get(k) {
        let closing = match open {
            b'"' => Some(b'"'),
            b'\'' => Some(b'\''),
            b'(' => Some(b')'),
            _ => None,
        };
        if let Some(closing) = closing {
            if !spaced && !dest.is_empty() {
                return None;
            }
            let from = k + 1;
            let mut e = from;
            loop {
                let c = *b.get(e)?;
                if c == b'\\' {
                    e += 2;
                    continue;
                }
                if c == closing {
                    break;
                }
                e += 1;
            }
            title = Some(unescape(s.get(from..e)?));
            k = e + 1;
            ws(&mut k);
        }
    }
    if b.get(k) != Some(&b')') {
        return None;
    }
    let link = Link {
        text: s.get(p + 1..close)?,
        dest,
        title,
    };
    Some((link, k + 1))
}

/// The autolink `<scheme:…>` starting at the `<` at `p` (CommonMark §6.5, URI autolinks).
pub(super) fn autolink(s: &str, p: usize) -> Option<(Link<'_>, usize)> {
    let b = s.as_bytes();
    let from = p + 1;
    let scheme = b[from..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
        .count();
    if !(2..=32).contains(&scheme)
        || !b[from].is_ascii_alphabetic()
        || b.get(from + scheme) != Some(&b':')
    {
        return None;
    }
    let mut e = from + scheme + 1;
    loop {
        match *b.get(e)? {
            b'>' => break,
            c if c == b'<' || c == b' ' || c.is_ascii_control() => return None,
            _ => e += 1,
        }
    }
    let link = Link {
        text: "",
        dest: s.get(from..e)?.to_owned(),
        title: None,
    };
    Some((link, e + 1))
}

/// What the legacy entry itself says (§3.3 projection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Legacy<'a> {
    /// Every inline link and autolink, in order (code spans excluded).
    pub(super) links: Vec<Link<'a>>,
    /// The bare entry text (trimmed) when there is no link and it has no whitespace and none
    /// of `[]()<>`.
    pub(super) bare: Option<&'a str>,
}

impl<'a> Legacy<'a> {
    pub(super) fn parse(raw: &'a str) -> Self {
        let b = raw.as_bytes();
        let mask = code_mask(b);
        let mut links = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if mask[i] {
                i += 1;
                continue;
            }
            let found = match b[i] {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'[' => inline_link(raw, &mask, i),
                b'<' => autolink(raw, i),
                _ => None,
            };
            match found {
                Some((link, next)) => {
                    links.push(link);
                    i = next;
                }
                None => i += 1,
            }
        }
        let trimmed = raw.trim_matches([' ', '\t']);
        let bare = (links.is_empty()
            && !trimmed.is_empty()
            && !trimmed
                .chars()
                .any(|c| c.is_whitespace() || "[]()<>".contains(c)))
        .then_some(trimmed);
        Legacy { links, bare }
    }

    /// The legacy title: the (first) link's text.
    pub(super) fn title(&self) -> &'a str {
        self.links.first().map_or("", |l| l.text)
    }

    /// The legacy resource: the (first) link's destination, else the bare text.
    pub(super) fn resource(&self) -> &str {
        match self.links.first() {
            Some(l) => &l.dest,
            None => self.bare.unwrap_or(""),
        }
    }

    pub(super) fn link_title(&self) -> Option<&str> {
        self.links.first().and_then(|l| l.title.as_deref())
    }
}

/// A projected source plus the link title attribute the rendering keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Projected {
    pub(super) title: String,
    pub(super) resource: String,
    pub(super) link_title: Option<String>,
}

impl Projected {
    /// The footnote definition content (§6.3 rule 5): the text after `[^ID]: `.
    pub(super) fn content(&self) -> String {
        if self.title.is_empty() && self.link_title.is_none() {
            return self.resource.clone();
        }
        let mut s = String::with_capacity(self.title.len() + self.resource.len() + 8);
        s.push('[');
        s.push_str(&self.title);
        s.push_str("](");
        for c in self.resource.chars() {
            match c {
                ' ' => s.push_str("%20"),
                '(' => s.push_str("%28"),
                ')' => s.push_str("%29"),
                '<' => s.push_str("%3C"),
                '>' => s.push_str("%3E"),
                c => s.push(c),
            }
        }
        if let Some(t) = &self.link_title {
            s.push_str(" \"");
            for c in t.chars() {
                if c == '\\' || c == '"' {
                    s.push('\\');
                }
                s.push(c);
            }
            s.push('"');
        }
        s.push(')');
        s
    }
}

/// The projection of one entry with its mapping entry (§3.3): the source, or the blocker
/// codes with their messages.
pub(super) fn project(
    legacy: &Legacy<'_>,
    m: &MappingEntry,
) -> Result<Projected, Vec<(&'static str, String)>> {
    if legacy.links.len() > 1 {
        return Err(vec![(
            "ambiguous_citation_destination",
            format!(
                "the citation entry has {} links or autolinks; keep one destination per entry",
                legacy.links.len()
            ),
        )]);
    }
    let mut errs = Vec::new();
    let (lt, lr) = (legacy.title(), legacy.resource());
    if let Some(t) = &m.title {
        if !lt.is_empty() && t != lt {
            errs.push((
                "citation_title_mismatch",
                format!(
                    "the mapping title of source id {:?} differs from the entry's link text",
                    m.source_id
                ),
            ));
        }
    }
    if let Some(r) = &m.resource {
        if !lr.is_empty() && r != lr {
            errs.push((
                "citation_resource_mismatch",
                format!(
                    "the mapping resource of source id {:?} differs from the entry's destination",
                    m.source_id
                ),
            ));
        }
    }
    let title = m.title.clone().unwrap_or_else(|| lt.to_owned());
    let resource = m.resource.clone().unwrap_or_else(|| lr.to_owned());
    if resource.is_empty() {
        errs.push((
            "missing_citation_resource",
            format!(
                "the citation entry mapped to source id {:?} has no link destination and no \
                 bare resource; give the mapping entry a resource",
                m.source_id
            ),
        ));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Projected {
        title,
        resource,
        link_title: legacy.link_title().map(str::to_owned),
    })
}
