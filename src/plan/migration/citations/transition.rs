//! The transition of one body.

use super::entries::{Entry, Parsed, Spot};
use super::inline::{project, Legacy, Projected};
use super::lines::{lines, sections, Head, Ln};
use super::model::{CitationMapping, ClaimMarkers, DocKind, ProjectedSource};
use super::prose::{definitions, note_map, note_rewrite, prose, same_content};
use crate::okf::markdown;
use std::collections::{HashMap, HashSet};

/// The mapping entries that select `e` (§3.3 selectors), via the two indexes.
pub(super) fn selecting(
    e: &Entry<'_>,
    mapping: &CitationMapping,
    by_number: &HashMap<u64, Vec<usize>>,
    by_entry: &HashMap<&str, Vec<usize>>,
) -> Vec<usize> {
    let mut out = Vec::new();
    if let Some(n) = e.number {
        for &j in by_number.get(&n).into_iter().flatten() {
            let m = &mapping.entries[j];
            if m.legacy_entry.as_deref().is_none_or(|s| s == e.raw) {
                out.push(j);
            }
        }
    }
    out.extend(by_entry.get(e.raw).into_iter().flatten().copied());
    out.sort_unstable();
    out
}

/// Matches the section entries with the mapping entries (§3.3 selectors): for each entry its
/// unique mapping entry, and the blockers.
pub(super) fn match_entries(
    entries: &[Entry<'_>],
    mapping: &CitationMapping,
    heading: (usize, usize),
    blockers: &mut Vec<Spot>,
) -> Vec<Option<usize>> {
    let mut by_number: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut by_entry: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, m) in mapping.entries.iter().enumerate() {
        match (m.legacy_number, &m.legacy_entry) {
            (Some(n), _) => by_number.entry(u64::from(n)).or_default().push(j),
            (None, Some(s)) => by_entry.entry(s.as_str()).or_default().push(j),
            (None, None) => {}
        }
    }
    let mut hits: Vec<Vec<usize>> = vec![Vec::new(); mapping.entries.len()];
    let mut assigned = Vec::with_capacity(entries.len());
    for (k, e) in entries.iter().enumerate() {
        let sel = selecting(e, mapping, &by_number, &by_entry);
        for &j in &sel {
            hits[j].push(k);
        }
        let which = match e.number {
            Some(n) => format!("citation entry {} (number {n})", k + 1),
            None => format!("citation entry {} (no number)", k + 1),
        };
        match sel.as_slice() {
            [] => {
                blockers.push(Spot::new(
                    "unresolved_citation_entry",
                    (e.start, e.end),
                    format!("{which} is selected by no mapping entry"),
                ));
                assigned.push(None);
            }
            [j] => assigned.push(Some(*j)),
            many => {
                let list: Vec<String> = many.iter().map(|j| format!("entries[{j}]")).collect();
                blockers.push(Spot::new(
                    "ambiguous_citation_mapping",
                    (e.start, e.end),
                    format!("{which} is selected by mapping {}", list.join(", ")),
                ));
                assigned.push(None);
            }
        }
    }
    for (j, h) in hits.iter().enumerate() {
        match h.as_slice() {
            [] => blockers.push(Spot::new(
                "incomplete_citation_mapping",
                heading,
                format!("mapping entries[{j}] selects no citation entry of the section"),
            )),
            [_] => {}
            [_, rest @ ..] => {
                for &k in rest {
                    blockers.push(Spot::new(
                        "incomplete_citation_mapping",
                        (entries[k].start, entries[k].end),
                        format!(
                            "mapping entries[{j}] selects more than one citation entry (also \
                             entry {}); map each entry with its own mapping entry",
                            k + 1
                        ),
                    ));
                }
            }
        }
    }
    assigned
}

/// One rendered footnote definition of the block: per distinct normalised source id.
#[derive(Debug, Clone)]
pub(super) struct Group {
    pub(super) id: String,
    pub(super) content: String,
    pub(super) source: ProjectedSource,
    /// Index of its first entry.
    pub(super) entry: usize,
    /// Whether an identical definition already exists (skipped).
    pub(super) skip: bool,
}

/// Whether a line index lies in `range`.
pub(super) fn within(range: (usize, usize)) -> impl Fn(usize) -> bool {
    move |i| i >= range.0 && i < range.1
}

/// A body with its scanned lines and parsed section.
pub(super) struct Doc<'a, 'l> {
    pub(super) body: &'a str,
    pub(super) lines: &'l [Ln<'a>],
    pub(super) head: &'l Head,
    pub(super) parsed: &'l Parsed<'a>,
}

/// The rewrite with `mapping` (§6.3 rule 4, §12.2, §12.6): the new body and the sources, or
/// `None` with the reasons in `blockers`.
pub(super) fn migrate(
    doc: &Doc<'_, '_>,
    nl: &str,
    kind: DocKind,
    mapping: &CitationMapping,
    blockers: &mut Vec<Spot>,
) -> Option<(String, Vec<ProjectedSource>)> {
    let Doc {
        body,
        lines,
        head,
        parsed,
    } = *doc;
    let entries = &parsed.entries;
    let heading = head.heading_span(lines);
    let assigned = match_entries(entries, mapping, heading, blockers);

    // Projection and replay sufficiency, per entry.
    let mut projected: Vec<Option<Projected>> = Vec::with_capacity(entries.len());
    for (e, a) in entries.iter().zip(&assigned) {
        let Some(j) = *a else {
            projected.push(None);
            continue;
        };
        let m = &mapping.entries[j];
        let legacy = Legacy::parse(e.raw);
        let p = match project(&legacy, m) {
            Ok(p) => Some(p),
            Err(errs) => {
                for (code, message) in errs {
                    blockers.push(Spot::new(code, (e.start, e.end), message));
                }
                None
            }
        };
        if m.legacy_entry.is_none() {
            let why = if legacy.link_title().is_some() {
                Some("its link has a title attribute, which only a legacy_entry selector keeps")
            } else if kind == DocKind::Reserved
                && (m.resource.is_none() || (m.title.is_none() && !legacy.title().is_empty()))
            {
                Some(
                    "a reserved document keeps no sources: give the mapping entry a resource \
                     (and a title when the link has text), or select it by legacy_entry",
                )
            } else {
                None
            };
            if let Some(why) = why {
                blockers.push(Spot::new(
                    "migration_citation_replay_evidence_missing",
                    (e.start, e.end),
                    format!(
                        "mapping entries[{j}] selects its entry by legacy_number only, but {why}"
                    ),
                ));
            }
        }
        projected.push(p);
    }

    // The definitions block: one per distinct normalised source id, in entry order.
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for (k, (a, p)) in assigned.iter().zip(&projected).enumerate() {
        let (Some(j), Some(p)) = (a, p) else {
            continue;
        };
        let m = &mapping.entries[*j];
        let label = markdown::normalise_label(&m.source_id);
        let content = p.content();
        match group_of.get(&label) {
            Some(&g) => {
                let g = &groups[g];
                // Different ids with one normalised label are rule 11's collision, raised by
                // the caller (`validate_mapping` returns `Ok(true)`).
                if g.id == m.source_id && g.content != content {
                    blockers.push(Spot::new(
                        "reused_source_metadata_conflict",
                        (entries[k].start, entries[k].end),
                        format!(
                            "source id {:?} is rendered with different content for entries {} \
                             and {}",
                            m.source_id,
                            g.entry + 1,
                            k + 1
                        ),
                    ));
                }
            }
            None => {
                group_of.insert(label, groups.len());
                groups.push(Group {
                    id: m.source_id.clone(),
                    content,
                    source: ProjectedSource {
                        id: m.source_id.clone(),
                        title: p.title.clone(),
                        resource: p.resource.clone(),
                    },
                    entry: k,
                    skip: false,
                });
            }
        }
    }
    let owned = within(parsed.owned);
    for d in definitions(lines, &owned) {
        let Some(&g) = group_of.get(&d.label) else {
            continue;
        };
        let g = &mut groups[g];
        if same_content(d.content, &g.content) {
            g.skip = true;
        } else {
            blockers.push(Spot::new(
                "conflicting_footnote_definition",
                (d.start, d.end),
                format!(
                    "an existing footnote definition has the label of source id {:?} with \
                     different content",
                    g.id
                ),
            ));
        }
    }

    // Claim markers and inline notes outside the owned region.
    let (markers, notes) = prose(lines, &owned);
    let mut patches: Vec<(usize, usize, String)> = Vec::new();
    if mapping.claim_markers == ClaimMarkers::Rewrite {
        let mut by_number: HashMap<u64, Option<&str>> = HashMap::new();
        for (e, a) in entries.iter().zip(&assigned) {
            if let Some(n) = e.number {
                by_number.insert(n, a.map(|j| mapping.entries[j].source_id.as_str()));
            }
        }
        for mk in &markers {
            match by_number.get(&mk.number) {
                _ if mk.number == 0 => blockers.push(Spot::new(
                    "invalid_claim_marker",
                    (mk.start, mk.end),
                    "claim marker [0]: citation numbers start at 1",
                )),
                Some(Some(id)) => patches.push((mk.start, mk.end, format!("[^{id}]"))),
                // The entry itself is unresolved or ambiguous: blocked there.
                Some(None) => {}
                None => blockers.push(Spot::new(
                    "unresolved_claim_marker",
                    (mk.start, mk.end),
                    format!(
                        "claim marker [{}] has no citation entry {}",
                        mk.number, mk.number
                    ),
                )),
            }
        }
    }
    let map = note_map(mapping);
    let mut used: HashSet<&str> = HashSet::new();
    for n in &notes {
        if let Some((refs, parts)) = note_rewrite(n.text, &map) {
            patches.push((n.start, n.end, refs));
            used.extend(parts);
        }
    }
    for (k, (e, a)) in entries.iter().zip(&assigned).enumerate() {
        let Some(j) = *a else {
            continue;
        };
        if let Some(t) = &mapping.entries[j].inline_note {
            if !used.contains(t.as_str()) {
                blockers.push(Spot::new(
                    "unresolved_inline_note",
                    (e.start, e.end),
                    format!(
                        "the inline_note of mapping entries[{j}] (citation entry {}) occurs \
                         nowhere in the body",
                        k + 1
                    ),
                ));
            }
        }
    }
    if !blockers.is_empty() {
        return None;
    }

    // The rewrite: the owned region becomes the definitions block.
    let mut block = String::new();
    for g in groups.iter().filter(|g| !g.skip) {
        block.push_str("[^");
        block.push_str(&g.id);
        block.push_str("]: ");
        block.push_str(&g.content);
        block.push_str(nl);
    }
    let (os, oe) = parsed.owned_span;
    if !block.is_empty() && oe < body.len() {
        // Content follows: keep it out of the last definition (it would continue it).
        block.push_str(nl);
    }
    patches.push((os, oe, block));
    patches.sort_by_key(|p| p.0);
    let mut out = String::with_capacity(body.len() + 64);
    let mut pos = 0;
    for (s, e, text) in &patches {
        out.push_str(&body[pos..*s]);
        out.push_str(text);
        pos = *e;
    }
    out.push_str(&body[pos..]);

    // Post-check (§6.3 rule 4, §12.2 rule 4).
    if let Some(why) = post_check(&out, mapping, &map) {
        blockers.push(Spot::new(
            "citation_semantic_mismatch",
            head.span(lines),
            format!("the rewritten body still has {why}"),
        ));
        return None;
    }
    let sources = match kind {
        DocKind::Concept => groups.into_iter().map(|g| g.source).collect(),
        DocKind::Reserved => Vec::new(),
    };
    Some((out, sources))
}

/// What of the legacy syntax remains in a rewritten body, if anything.
pub(super) fn post_check(
    body: &str,
    mapping: &CitationMapping,
    map: &HashMap<&str, &str>,
) -> Option<&'static str> {
    let lines = lines(body);
    if !sections(&lines).is_empty() {
        return Some("a `# Citations` section");
    }
    let (markers, notes) = prose(&lines, |_| false);
    if mapping.claim_markers == ClaimMarkers::Rewrite && !markers.is_empty() {
        return Some("a claim marker");
    }
    if notes.iter().any(|n| note_rewrite(n.text, map).is_some()) {
        return Some("a mapped inline note");
    }
    None
}
