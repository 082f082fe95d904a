//! The Markdown scanner (`okf::markdown`) and the citation-section grammar of the migration
//! (spec/migration.md §6.2–§6.3, §12.1–§12.6). Input: a document body (UTF-8).
//!
//! - No scanner or grammar function panics; every blocker span lies inside the body on char
//!   boundaries.
//! - A proposal passed back that migrates without blockers yields a body that passes the
//!   target replay with the same mapping (§6.7), for concepts and reserved documents.
#![no_main]

use libfuzzer_sys::fuzz_target;
use okf_mcp::okf::markdown;
use okf_mcp::plan::migration::citations::{
    migrate_body, probe, propose, replay_check, Blocker, DocKind, MappingEntry,
};

const OFFSET: usize = 5;

fn check_spans(body: &str, blockers: &[Blocker]) {
    for b in blockers {
        assert!(b.start <= b.end, "{b:?}");
        assert!(b.start >= OFFSET && b.end <= body.len() + OFFSET, "{b:?}");
        assert!(body.is_char_boundary(b.start - OFFSET) && body.is_char_boundary(b.end - OFFSET));
    }
}

/// The canonical entry order of a decoded request (`request.rs`).
fn sort(entries: &mut [MappingEntry]) {
    entries.sort_by(|a, b| {
        let key = |m: &MappingEntry| {
            (
                m.legacy_number.unwrap_or(0),
                m.legacy_entry.clone().unwrap_or_default(),
                m.source_id.clone(),
                m.inline_note.clone().unwrap_or_default(),
            )
        };
        key(a).cmp(&key(b))
    });
}

fuzz_target!(|data: &[u8]| {
    let Ok(body) = std::str::from_utf8(data) else {
        return;
    };
    assert_eq!(markdown::code_span_mask(body.as_bytes()).len(), body.len());
    let _ = markdown::scan(body);
    let _ = markdown::citations_sections(body);
    let _ = markdown::footnote_references(body);
    let _ = markdown::footnote_label_superset(body);
    let _ = markdown::md_links(body);
    let _ = markdown::level2_headings(body);
    let _ = markdown::has_computation_fence(body);
    let _ = probe(body, OFFSET);
    let nl = if body.contains("\r\n") { "\r\n" } else { "\n" };
    for kind in [DocKind::Concept, DocKind::Reserved] {
        let bare = migrate_body(body, OFFSET, nl, kind, None);
        check_spans(body, &bare.blockers);
        let Some(mut p) = propose("d.md", body, kind) else {
            continue;
        };
        sort(&mut p.entries);
        let o = migrate_body(body, OFFSET, nl, kind, Some(&p));
        check_spans(body, &o.blockers);
        if !o.blockers.is_empty() {
            continue;
        }
        let Some(new) = o.body else { continue };
        let r = replay_check(&new, OFFSET, kind, Some(&p), &o.sources);
        assert!(r.is_empty(), "migrated body fails its own replay: {r:?}");
    }
});
