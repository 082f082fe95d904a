//! Proposals (§12.4).

use super::entries::parse_section;
use super::inline::Legacy;
use super::lines::{lines, sections};
use super::model::{CitationMapping, ClaimMarkers, DocKind, MappingEntry, TrailingContent};
use super::prose::{definitions, prose};
use super::transition::within;
use super::validate::{note_text_ok, validate, FIELD_MAX, NUMBER_MAX};
use crate::digest;
use crate::okf::markdown::{self, mentions_citations};
use std::collections::{HashMap, HashSet};

/// The longest proposed slug before the uniqueness suffix (§12.4 rule 2.6).
pub(super) const SLUG_MAX: usize = 56;
/// The prefix a long slug is cut to before its hash.
pub(super) const SLUG_CUT: usize = 48;
/// The longest final id (§12.4 rule 2.7).
pub(super) const ID_MAX: usize = 64;

/// `scheme://…` without whitespace: its host followed by its path (§12.4 rule 2.2).
pub(super) fn url_host_path(t: &str) -> Option<String> {
    let (scheme, rest) = t.split_once("://")?;
    let mut sc = scheme.chars();
    if !sc.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !sc.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
        || t.chars().any(char::is_whitespace)
    {
        return None;
    }
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let auth = &rest[..auth_end];
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let host = match host.rsplit_once(':') {
        Some((h, port)) if !host.ends_with(']') && port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    };
    let after = &rest[auth_end..];
    let path = &after[..after.find(['?', '#']).unwrap_or(after.len())];
    Some(format!("{host}{path}"))
}

/// `t` without a trailing line range (`:31`, `:31-33`) or fragment (`#L11-L24`, `#anchor`)
/// (§12.4 rule 2.3).
pub(super) fn drop_location(t: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, tail)) = t.rsplit_once(':') {
        let range = match tail.split_once('-') {
            Some((a, b)) => digits(a) && digits(b),
            None => digits(tail),
        };
        if range && !head.is_empty() {
            return head;
        }
    }
    for (i, _) in t.match_indices('#') {
        let (head, frag) = (&t[..i], &t[i + 1..]);
        if !head.is_empty()
            && !head.ends_with(char::is_whitespace)
            && !frag.is_empty()
            && !frag.contains(char::is_whitespace)
        {
            return head;
        }
    }
    t
}

/// The slug of a text, before uniqueness (§12.4 rule 2, steps 2–6).
pub(super) fn slug_base(text: &str) -> String {
    let url = url_host_path(text);
    let t = drop_location(url.as_deref().unwrap_or(text));
    let t = t
        .strip_suffix(".md")
        .or_else(|| t.strip_suffix(".html"))
        .unwrap_or(t);
    let lower = t.to_lowercase();
    let mut s = String::with_capacity(lower.len());
    let mut dash = false;
    for c in lower.chars() {
        if c.is_alphanumeric() {
            s.push(c);
            dash = false;
        } else if !dash {
            s.push('-');
            dash = true;
        }
    }
    let s = s.trim_matches('-');
    if s.is_empty() {
        return "source".to_owned();
    }
    if s.len() <= SLUG_MAX {
        return s.to_owned();
    }
    let b = s.as_bytes();
    let cut = (1..=SLUG_CUT)
        .rev()
        .find(|&i| b[i] == b'-')
        .unwrap_or_else(|| floor_boundary(s, SLUG_CUT));
    let hash = digest::hex(&digest::sha256(s.as_bytes()));
    format!("{}-{}", &s[..cut], &hash[..7])
}

/// The largest char boundary of `s` at or below `i`.
pub(super) fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A unique id for `base` (§12.4 rule 2.7): `base`, `base-2`, `base-3`, … whose normalised
/// label is not taken; at most [`ID_MAX`] bytes. Records the label as taken.
pub(super) fn unique_id(base: &str, taken: &mut HashSet<String>) -> String {
    let mut id = base.to_owned();
    let mut k = 2u64;
    while taken.contains(&markdown::normalise_label(&id)) {
        let suffix = format!("-{k}");
        let keep = floor_boundary(base, ID_MAX.saturating_sub(suffix.len()));
        id = format!("{}{suffix}", &base[..keep]);
        k += 1;
    }
    taken.insert(markdown::normalise_label(&id));
    id
}

pub(super) fn proposal(path: &str, body: &str, kind: DocKind) -> Option<CitationMapping> {
    if !mentions_citations(body) {
        return None;
    }
    let lines = lines(body);
    let heads = sections(&lines);
    let [head] = heads.as_slice() else {
        return None;
    };
    if head.anchored {
        return None;
    }
    let parsed = parse_section(&lines, head, TrailingContent::Keep);
    if !parsed.blockers.is_empty() || parsed.entries.is_empty() || parsed.trailing_links {
        return None;
    }
    let owned = within(parsed.owned);
    let mut taken: HashSet<String> = definitions(&lines, &owned)
        .into_iter()
        .map(|d| d.label)
        .collect();
    let (markers, notes) = prose(&lines, &owned);
    let mut note_texts: HashSet<String> = notes.iter().map(|n| n.text.to_owned()).collect();
    // A note list `^[a.md, b.md]` (§12.2 rule 2a) counts as an occurrence of each part when
    // every part is the note text an entry would be given, so that the list is rewritten.
    let candidates: HashSet<String> = parsed
        .entries
        .iter()
        .map(|e| {
            let legacy = Legacy::parse(e.raw);
            let lt = legacy.title();
            if lt.is_empty() {
                legacy.resource().to_owned()
            } else {
                lt.to_owned()
            }
        })
        .filter(|n| !n.is_empty())
        .collect();
    for n in &notes {
        let parts: Vec<&str> = n.text.split(", ").collect();
        if parts.len() >= 2 && parts.iter().all(|p| candidates.contains(*p)) {
            note_texts.extend(parts.into_iter().map(str::to_owned));
        }
    }
    let numbers: HashSet<u64> = parsed.entries.iter().filter_map(|e| e.number).collect();
    let stray = markers
        .iter()
        .any(|m| m.number != 0 && !numbers.contains(&m.number));
    let mut raw_count: HashMap<&str, usize> = HashMap::new();
    for e in &parsed.entries {
        *raw_count.entry(e.raw).or_default() += 1;
    }

    let mut entries = Vec::with_capacity(parsed.entries.len());
    let mut notes_given: HashSet<String> = HashSet::new();
    for e in &parsed.entries {
        let legacy = Legacy::parse(e.raw);
        let by_number = e
            .number
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=NUMBER_MAX).contains(n) && legacy.link_title().is_none());
        if by_number.is_none() && raw_count.get(e.raw).copied().unwrap_or(0) > 1 {
            // An entry-only selector would select more than one entry.
            return None;
        }
        let (lt, lr) = (legacy.title(), legacy.resource());
        let resource_less = lr.is_empty() && legacy.links.len() <= 1;
        let text = if !lt.is_empty() {
            lt
        } else if !lr.is_empty() {
            lr
        } else {
            e.raw
        };
        let source_id = unique_id(&slug_base(text), &mut taken);
        let note = if lt.is_empty() { lr } else { lt };
        let inline_note = (!note.is_empty()
            && note.len() <= FIELD_MAX
            && note_text_ok(note)
            && note_texts.contains(note)
            && notes_given.insert(note.to_owned()))
        .then(|| note.to_owned());
        let (mut title, mut resource) = (None, None);
        if kind == DocKind::Reserved && by_number.is_some() {
            title = (!lt.is_empty()).then(|| lt.to_owned());
            resource = Some(if lr.is_empty() { e.raw } else { lr }.to_owned());
        } else if resource_less {
            resource = Some(e.raw.to_owned());
        }
        let needs_review = !resource_like(resource.as_deref().unwrap_or(lr));
        entries.push(MappingEntry {
            legacy_number: by_number,
            legacy_entry: by_number.is_none().then(|| e.raw.to_owned()),
            source_id,
            title,
            resource,
            inline_note,
            needs_review,
        });
    }
    let item = CitationMapping {
        path: path.to_owned(),
        entries,
        claim_markers: if stray {
            ClaimMarkers::Ignore
        } else {
            ClaimMarkers::Rewrite
        },
        trailing_content: if parsed.kept {
            TrailingContent::Keep
        } else {
            TrailingContent::Block
        },
    };
    // A proposal must pass the static validation it will meet when passed back.
    let mut sorted = item.clone();
    sort_entries(&mut sorted.entries);
    match validate(&sorted, 0) {
        Ok(false) => Some(item),
        _ => None,
    }
}

/// Whether a projected resource looks like one (§12.7 rule 8): `scheme://…`, or no whitespace,
/// none of `<>[]()` and a `.` in its last `/`-separated segment. Anything else (e.g.
/// `**Continuous mode**: Runs the pipeline continuously`) came from prose: the proposed entry
/// gets `needs_review: true`.
pub(super) fn resource_like(r: &str) -> bool {
    let scheme = r.split_once("://").is_some_and(|(s, rest)| {
        !rest.is_empty()
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    scheme
        || (!r.chars().any(|c| c.is_whitespace() || "<>[]()".contains(c))
            && r.rsplit('/').next().is_some_and(|seg| seg.contains('.')))
}

/// Sorts entries canonically (§3.5 step 5): by `(legacy_number, legacy_entry, source_id,
/// inline_note)`, absent number as 0, absent strings as `""`.
pub(super) fn sort_entries(entries: &mut [MappingEntry]) {
    fn key(m: &MappingEntry) -> (u32, &str, &str, &str) {
        (
            m.legacy_number.unwrap_or(0),
            m.legacy_entry.as_deref().unwrap_or(""),
            &m.source_id,
            m.inline_note.as_deref().unwrap_or(""),
        )
    }
    entries.sort_by(|a, b| key(a).cmp(&key(b)));
}
