//! Target replay (§6.7 rules 1 and 6, §12.2 rule 3).

use super::entries::Spot;
use super::inline::{project, Legacy, Projected};
use super::lines::{lines, sections};
use super::model::{CitationMapping, ClaimMarkers, DocKind, MappingEntry, ProjectedSource};
use super::prose::{definitions, note_map, note_rewrite, prose, same_content};
use crate::okf::markdown::{self, mentions_citations};
use std::collections::{HashMap, HashSet};

/// The expected source of one mapping entry in an already-migrated body, or why it cannot
/// be known (as a blocker at the end of the body, or at the frontmatter).
pub(super) fn expected(
    m: &MappingEntry,
    kind: DocKind,
    sources: &[ProjectedSource],
    eof: usize,
) -> Result<Projected, Spot> {
    if let Some(raw) = &m.legacy_entry {
        return project(&Legacy::parse(raw), m).map_err(|errs| {
            let codes: Vec<&str> = errs.iter().map(|e| e.0).collect();
            Spot::new(
                "migration_replay_mismatch",
                (eof, eof),
                format!(
                    "the legacy_entry of source id {:?} does not project ({}): the transition \
                     would have been blocked",
                    m.source_id,
                    codes.join(", ")
                ),
            )
        });
    }
    match kind {
        DocKind::Concept => {
            let Some(s) = sources.iter().find(|s| s.id == m.source_id) else {
                return Err(Spot::frontmatter(
                    "migration_replay_mismatch",
                    format!("no sources item has the id {:?}", m.source_id),
                ));
            };
            Ok(Projected {
                title: m.title.clone().unwrap_or_else(|| s.title.clone()),
                resource: m.resource.clone().unwrap_or_else(|| s.resource.clone()),
                link_title: None,
            })
        }
        DocKind::Reserved => match &m.resource {
            Some(r) => Ok(Projected {
                title: m.title.clone().unwrap_or_default(),
                resource: r.clone(),
                link_title: None,
            }),
            None => Err(Spot::new(
                "migration_citation_replay_evidence_missing",
                (eof, eof),
                format!(
                    "source id {:?} of a reserved document is selected by legacy_number only \
                     and has no resource: its footnote definition cannot be checked",
                    m.source_id
                ),
            )),
        },
    }
}

pub(super) fn replay(
    body: &str,
    kind: DocKind,
    mapping: Option<&CitationMapping>,
    sources: &[ProjectedSource],
) -> Vec<Spot> {
    let mut out = Vec::new();
    let lines = lines(body);
    let heads = if mentions_citations(body) {
        sections(&lines)
    } else {
        Vec::new()
    };
    for h in &heads {
        out.push(
            Spot::new(
                "migration_replay_mismatch",
                h.span(&lines),
                "an active `# Citations` section remains in a v0.2 document",
            )
            .with_action("normalize_citations_section"),
        );
    }
    let Some(mapping) = mapping else {
        return out;
    };
    let in_section = |i: usize| heads.iter().any(|h| i >= h.line && i < h.end_line);
    let eof = (body.len(), body.len());
    let defs = definitions(&lines, in_section);

    // Definitions and sources, per distinct normalised source id.
    let mut seen: HashMap<String, (usize, Option<String>)> = HashMap::new();
    for (j, m) in mapping.entries.iter().enumerate() {
        let label = markdown::normalise_label(&m.source_id);
        let exp = match expected(m, kind, sources, body.len()) {
            Ok(p) => p,
            Err(raw) => {
                out.push(raw);
                seen.entry(label).or_insert((j, None));
                continue;
            }
        };
        if kind == DocKind::Concept {
            let ok = sources
                .iter()
                .find(|s| s.id == m.source_id)
                .is_some_and(|s| s.title == exp.title && s.resource == exp.resource);
            if !ok {
                out.push(Spot::frontmatter(
                    "migration_replay_mismatch",
                    format!(
                        "the sources item {:?} is missing or differs from the mapping's \
                         projection",
                        m.source_id
                    ),
                ));
            }
        }
        let content = exp.content();
        if let Some((first, prev)) = seen.get(&label) {
            if prev.as_ref().is_some_and(|p| *p != content) {
                out.push(Spot::new(
                    "migration_replay_mismatch",
                    eof,
                    format!(
                        "mapping entries[{first}] and entries[{j}] give one footnote label \
                         different content"
                    ),
                ));
            }
            continue;
        }
        let mut found = false;
        for d in defs.iter().filter(|d| d.label == label) {
            found = true;
            if !same_content(d.content, &content) {
                out.push(Spot::new(
                    "migration_replay_mismatch",
                    (d.start, d.end),
                    format!(
                        "the footnote definition of source id {:?} differs from the mapping's \
                         rendering",
                        m.source_id
                    ),
                ));
            }
        }
        if !found {
            out.push(Spot::new(
                "migration_replay_mismatch",
                eof,
                format!("no footnote definition for source id {:?}", m.source_id),
            ));
        }
        seen.insert(label, (j, Some(content)));
    }

    // No claim marker of a number-selected entry, no mapped inline note remains.
    let (markers, notes) = prose(&lines, in_section);
    if mapping.claim_markers == ClaimMarkers::Rewrite {
        let numbers: HashSet<u64> = mapping
            .entries
            .iter()
            .filter_map(|m| m.legacy_number.map(u64::from))
            .collect();
        for mk in markers.iter().filter(|mk| numbers.contains(&mk.number)) {
            out.push(Spot::new(
                "migration_replay_mismatch",
                (mk.start, mk.end),
                format!("claim marker [{}] of a mapped entry remains", mk.number),
            ));
        }
    }
    let map = note_map(mapping);
    for n in notes
        .iter()
        .filter(|n| note_rewrite(n.text, &map).is_some())
    {
        out.push(Spot::new(
            "migration_replay_mismatch",
            (n.start, n.end),
            "an inline note with a mapped text remains",
        ));
    }
    out
}
