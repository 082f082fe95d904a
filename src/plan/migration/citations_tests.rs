//! Unit tests of the citations transition (spec/migration.md §3.3, §6.2–§6.4, §6.7, §12),
//! named after the scenario ids of spec/scenarios.md §15 where one applies.

use super::prose::*;
use super::*;
use crate::digest;
use crate::okf::markdown;
use std::collections::HashSet;

fn num(n: u32, id: &str) -> MappingEntry {
    MappingEntry {
        legacy_number: Some(n),
        source_id: id.to_owned(),
        ..MappingEntry::default()
    }
}

fn ent(raw: &str, id: &str) -> MappingEntry {
    MappingEntry {
        legacy_entry: Some(raw.to_owned()),
        source_id: id.to_owned(),
        ..MappingEntry::default()
    }
}

fn item(entries: Vec<MappingEntry>) -> CitationMapping {
    CitationMapping {
        path: "a.md".to_owned(),
        entries,
        ..CitationMapping::default()
    }
}

fn run(body: &str, kind: DocKind, m: Option<&CitationMapping>) -> BodyOutcome {
    migrate_body(body, 0, "\n", kind, m)
}

fn codes(o: &BodyOutcome) -> Vec<&'static str> {
    o.blockers.iter().map(|b| b.code).collect()
}

/// Migrates a concept body that must succeed; checks its replay and returns the new body.
fn ok(body: &str, m: &CitationMapping) -> (String, Vec<ProjectedSource>) {
    let o = run(body, DocKind::Concept, Some(m));
    assert!(o.blockers.is_empty(), "{:#?}", o.blockers);
    let new = o.body.clone().expect("a rewritten body");
    let replay = replay_check(&new, 0, DocKind::Concept, Some(m), &o.sources);
    assert!(replay.is_empty(), "{new:?}: {replay:#?}");
    (new, o.sources)
}

#[test]
fn mig_01_02_spec_example() {
    let body = "Claim [1].\n\n# Citations\n\n[1] [Spec](https://example.test/spec)\n";
    let (new, sources) = ok(body, &item(vec![num(1, "spec")]));
    assert_eq!(
        new,
        "Claim [^spec].\n\n[^spec]: [Spec](https://example.test/spec)\n"
    );
    assert_eq!(
        sources,
        vec![ProjectedSource {
            id: "spec".into(),
            title: "Spec".into(),
            resource: "https://example.test/spec".into()
        }]
    );
}

fn span_text<'a>(body: &'a str, b: &Blocker) -> &'a str {
    &body[b.start..b.end]
}

// ----- probe (§4.2 rule 4) -----------------------------------------------------------------

#[test]
fn probe_finds_one_section_with_its_span() {
    assert_eq!(probe("no citations here\n", 0), SectionProbe::None);
    assert_eq!(probe("Claim [1].\n", 5), SectionProbe::None);
    let body = "Intro\n\n# Citations\n\n- a\n\n# Next\nx\n";
    let SectionProbe::One { start, end } = probe(body, 10) else {
        panic!("one section");
    };
    assert_eq!(&body[start - 10..end - 10], "# Citations\n\n- a\n\n");
    // To the end of the body.
    let body = "# Citations\n[1] x";
    assert_eq!(probe(body, 0), SectionProbe::One { start: 0, end: 17 });
    // A heading inside a fence is code; `## Citations` is ordinary content (MIG-29).
    assert_eq!(probe("```\n# Citations\n```\n", 0), SectionProbe::None);
    assert_eq!(probe("## Citations\n- a\n", 0), SectionProbe::None);
}

#[test]
fn probe_locates_unparseable_ownership_at_the_error() {
    let body = "# Citations #\n- a\n";
    assert_eq!(
        probe(body, 3),
        SectionProbe::Unparseable { start: 3, end: 16 }
    );
    let body = "# Citations\n- a\n# Citations\n- b\n";
    let SectionProbe::Unparseable { start, end } = probe(body, 0) else {
        panic!("unparseable");
    };
    assert_eq!((start, end), (16, 27));
    assert_eq!(&body[start..end], "# Citations");
}

#[test]
fn mig_07_marker_only_bodies_are_no_candidates() {
    let body = "Claim [1] and [2].\n\n## Citations\n\n[1] not a section\n";
    assert_eq!(probe(body, 0), SectionProbe::None);
    assert_eq!(run(body, DocKind::Concept, None), BodyOutcome::default());
    assert!(replay_check(body, 0, DocKind::Concept, None, &[]).is_empty());
    assert_eq!(propose("a.md", body, DocKind::Concept), None);
}

// ----- section grammar (§6.2, §12.1) --------------------------------------------------------

#[test]
fn missing_mapping_and_missing_section() {
    let body = "# Citations\n\n- https://x.test/a\n";
    let o = run(body, DocKind::Concept, None);
    assert!(o.has_section);
    assert_eq!(codes(&o), ["missing_explicit_citation_mapping"]);
    assert_eq!(o.blockers[0].action, Some("provide_citation_mapping"));
    assert_eq!((o.blockers[0].start, o.blockers[0].end), (0, body.len()));
    assert_eq!(o.body, None);

    let o = migrate_body(
        "Just prose [1].\n",
        7,
        "\n",
        DocKind::Concept,
        Some(&item(vec![num(1, "a")])),
    );
    assert!(!o.has_section);
    assert_eq!(codes(&o), ["missing_citations_section"]);
    assert_eq!((o.blockers[0].start, o.blockers[0].end), (7, 7));

    let o = run("Just prose.\n", DocKind::Concept, None);
    assert_eq!(o, BodyOutcome::default());
}

#[test]
fn heading_anchor_and_multiple_sections() {
    for body in [
        "# Citations #\n- a\n",
        "# Citations {#refs}\n- a\n",
        "# Citations ##  \n- a\n",
    ] {
        let o = run(body, DocKind::Concept, Some(&item(vec![ent("a", "a")])));
        assert_eq!(codes(&o), ["heading_source_anchor"], "{body:?}");
        assert_eq!(o.blockers[0].action, Some("normalize_citations_section"));
        assert!(span_text(body, &o.blockers[0]).starts_with("# Citations"));
    }
    // `#   Citations   ` is the exact heading text `Citations`.
    let (new, _) = ok("#   Citations   \n- a\n", &item(vec![ent("a", "a")]));
    assert_eq!(new, "[^a]: a\n");

    let body = "# Citations\n- a\n\n# Citations\n- b\n";
    let o = run(body, DocKind::Concept, Some(&item(vec![ent("a", "a")])));
    assert_eq!(codes(&o), ["multiple_citations_sections"]);
    assert_eq!(span_text(body, &o.blockers[0]), "# Citations");
    assert_eq!(o.blockers[0].start, 17);
}

#[test]
fn mig_29_bullets_without_numbers_and_minor_headings() {
    let body = "Text.\n\n### Citations\n\nsee below\n\n# Citations\n\n- [A](https://a.test)\n* [2] [B](https://b.test)\n+ plain-resource\n";
    let m = item(vec![
        ent("[A](https://a.test)", "a"),
        num(2, "b"),
        ent("plain-resource", "c"),
    ]);
    let (new, sources) = ok(body, &m);
    assert_eq!(
        new,
        "Text.\n\n### Citations\n\nsee below\n\n[^a]: [A](https://a.test)\n[^b]: [B](https://b.test)\n[^c]: plain-resource\n"
    );
    assert_eq!(sources.len(), 3);
    assert_eq!(sources[2].title, "");
    assert_eq!(sources[2].resource, "plain-resource");
    // A bullet without `[N]` cannot be selected by number.
    let o = run(
        "# Citations\n- x\n",
        DocKind::Concept,
        Some(&item(vec![num(1, "x")])),
    );
    assert_eq!(
        codes(&o),
        ["unresolved_citation_entry", "incomplete_citation_mapping"]
    );
}

#[test]
fn unsupported_entries() {
    let cases = [
        ("# Citations\n[0] zero\n", "[0] zero"),
        ("# Citations\n- [0] zero\n", "- [0] zero"),
        ("# Citations\n[01] zero-led\n", "[01] zero-led"),
        ("# Citations\n0. zero\n", "0. zero"),
        ("# Citations\n01. zero-led\n", "01. zero-led"),
        ("# Citations\n  1. indented\n", "  1. indented"),
        ("# Citations\n - indented\n", " - indented"),
        ("# Citations\n- two\n  lines\n", "- two\n  lines"),
        (
            "# Citations\n- lazy\ncontinuation\n",
            "- lazy\ncontinuation",
        ),
        ("# Citations\n1. two\n   lines\n", "1. two\n   lines"),
        (
            "# Citations\n- item\n\n    indented paragraph\n",
            "- item\n\n    indented paragraph",
        ),
    ];
    for (body, span) in cases {
        let o = run(body, DocKind::Concept, None);
        let b: Vec<_> = o
            .blockers
            .iter()
            .filter(|b| b.code == "unsupported_citation_entry")
            .collect();
        assert_eq!(b.len(), 1, "{body:?}: {:#?}", o.blockers);
        assert_eq!(span_text(body, b[0]), span, "{body:?}");
        assert_eq!(b[0].action, Some("normalize_citations_section"));
    }
}

#[test]
fn opaque_and_unowned_content() {
    let body = "# Citations\n\n[1] [A](a)\n\n```\n- fenced\n```\n\n<div>\nhtml\n</div>\n\n<!-- note -->\nprose line\nmore prose\n## Sub\n";
    let o = run(body, DocKind::Concept, Some(&item(vec![num(1, "a")])));
    let found: Vec<(&str, &str)> = o
        .blockers
        .iter()
        .map(|b| (b.code, span_text(body, b)))
        .collect();
    assert_eq!(
        found,
        [
            ("opaque_citations_content", "```\n- fenced\n```"),
            ("opaque_citations_content", "<div>\nhtml\n</div>"),
            ("opaque_citations_content", "<!-- note -->"),
            (
                "unowned_citations_content",
                "prose line\nmore prose\n## Sub"
            ),
        ]
    );
    assert!(o
        .blockers
        .iter()
        .all(|b| b.action == Some("normalize_citations_section")));
    // A paragraph line after a `[N]` line is not part of it.
    let o = run("# Citations\n[1] a\nnext\n", DocKind::Concept, None);
    assert!(codes(&o).contains(&"unowned_citations_content"));
    // Thematic breaks and indented code.
    let o = run(
        "# Citations\n[1] a\n\n    code\n\n* * *\n",
        DocKind::Concept,
        None,
    );
    assert_eq!(
        codes(&o),
        [
            "opaque_citations_content",
            "unowned_citations_content",
            "missing_explicit_citation_mapping"
        ]
    );
}

#[test]
fn duplicate_numbers() {
    let body = "# Citations\n[1] a\n- [1] b\n";
    let o = run(body, DocKind::Concept, None);
    assert_eq!(codes(&o)[0], "duplicate_citation_number");
    assert_eq!(span_text(body, &o.blockers[0]), "- [1] b");
    assert_eq!(o.blockers[0].action, Some("disambiguate_citation_entry"));
}

#[test]
fn mig_33_ordered_lists() {
    // Numbered 1 and 2, selectable by number, claims rewritten.
    let body = "A [1], B [2].\n\n# Citations\n\n1. [A](https://a.test)\n2. [B](https://b.test)\n";
    let (new, _) = ok(body, &item(vec![num(1, "a"), num(2, "b")]));
    assert_eq!(
        new,
        "A [^a], B [^b].\n\n[^a]: [A](https://a.test)\n[^b]: [B](https://b.test)\n"
    );
    // Lazy numbering: 1. 1. 1. are 1, 2, 3 (blank lines do not end the run).
    let body = "x [3]\n# Citations\n1. a\n\n1. b\n1. c\n";
    let (new, _) = ok(body, &item(vec![num(1, "a"), num(2, "b"), num(3, "c")]));
    assert_eq!(new, "x [^c]\n[^a]: a\n[^b]: b\n[^c]: c\n");
    // A `)` run after a `.` run restarts numbering; `[7]` in the content stays content.
    let body = "# Citations\n5. a\n6. b\n1) [7] [C](https://c.test)\n2) d\n";
    let m = item(vec![num(5, "a"), num(6, "b"), num(1, "c"), num(2, "d")]);
    let o = run(body, DocKind::Concept, Some(&m));
    assert!(o.blockers.is_empty(), "{:#?}", o.blockers);
    let m = item(vec![
        num(5, "a"),
        num(6, "b"),
        MappingEntry {
            legacy_entry: Some("[7] [C](https://c.test)".into()),
            ..num(1, "c")
        },
        num(2, "d"),
    ]);
    assert!(run(body, DocKind::Concept, Some(&m)).blockers.is_empty());
    // A bullet ends the run.
    let body = "# Citations\n3. a\n- b\n1. c\n";
    let m = item(vec![num(3, "a"), ent("b", "b"), num(1, "c")]);
    assert!(run(body, DocKind::Concept, Some(&m)).blockers.is_empty());
    // A number repeated across runs.
    let body = "# Citations\n1. a\n2. b\n1) c\n";
    let o = run(body, DocKind::Concept, None);
    assert_eq!(codes(&o)[0], "duplicate_citation_number");
    assert_eq!(span_text(body, &o.blockers[0]), "1) c");
    // A two-line ordered item.
    let o = run("# Citations\n1. a\ncontinued\n", DocKind::Concept, None);
    assert_eq!(codes(&o)[0], "unsupported_citation_entry");
}

// ----- selectors (§3.3) ---------------------------------------------------------------------

#[test]
fn selectors_resolve_each_entry_exactly_once() {
    let body = "# Citations\n[1] a\n[2] b\n";
    // Unresolved entry and an unmatched mapping entry.
    let o = run(
        body,
        DocKind::Concept,
        Some(&item(vec![num(1, "a"), num(3, "c")])),
    );
    let found: Vec<(&str, &str)> = o
        .blockers
        .iter()
        .map(|b| (b.code, span_text(body, b)))
        .collect();
    assert_eq!(
        found,
        [
            ("unresolved_citation_entry", "[2] b"),
            ("incomplete_citation_mapping", "# Citations"),
        ]
    );
    assert!(o
        .blockers
        .iter()
        .all(|b| b.action == Some("provide_citation_mapping")));
    // Matched twice: by number and by entry.
    let o = run(
        body,
        DocKind::Concept,
        Some(&item(vec![num(1, "a"), ent("a", "x"), num(2, "b")])),
    );
    assert_eq!(codes(&o), ["ambiguous_citation_mapping"]);
    assert_eq!(o.blockers[0].action, Some("disambiguate_citation_entry"));
    // Both selectors must match.
    let both = MappingEntry {
        legacy_entry: Some("b".into()),
        ..num(1, "a")
    };
    let o = run(body, DocKind::Concept, Some(&item(vec![both, num(2, "b")])));
    assert_eq!(
        codes(&o),
        ["unresolved_citation_entry", "incomplete_citation_mapping"]
    );
    // An entry-only selector that matches two entries: the counts differ.
    let body = "# Citations\n- same\n- same\n";
    let o = run(body, DocKind::Concept, Some(&item(vec![ent("same", "s")])));
    assert_eq!(codes(&o), ["incomplete_citation_mapping"]);
    assert_eq!((o.blockers[0].start, o.blockers[0].end), (19, 25));
    // Raw content is exact: trailing whitespace counts.
    let body = "# Citations\n- x \n";
    assert_eq!(
        codes(&run(
            body,
            DocKind::Concept,
            Some(&item(vec![ent("x", "x")]))
        )),
        ["unresolved_citation_entry", "incomplete_citation_mapping"]
    );
    ok(body, &item(vec![ent("x ", "x")]));
}

// ----- projection and rendering (§3.3, §6.3 rule 5) -----------------------------------------

#[test]
fn projection_rules() {
    let m = |e: MappingEntry| item(vec![e]);
    let body = "# Citations\n[1] [Spec](https://x.test/s)\n";
    // Caller values equal to the legacy ones.
    let e = MappingEntry {
        title: Some("Spec".into()),
        resource: Some("https://x.test/s".into()),
        ..num(1, "s")
    };
    ok(body, &m(e));
    let e = MappingEntry {
        title: Some("Other".into()),
        ..num(1, "s")
    };
    assert_eq!(
        codes(&run(body, DocKind::Concept, Some(&m(e)))),
        ["citation_title_mismatch"]
    );
    let e = MappingEntry {
        resource: Some("https://elsewhere.test".into()),
        ..num(1, "s")
    };
    assert_eq!(
        codes(&run(body, DocKind::Concept, Some(&m(e)))),
        ["citation_resource_mismatch"]
    );
    // A caller title for a link without text is no mismatch.
    let (new, s) = ok(
        "# Citations\n[1] [](https://x.test/s)\n",
        &m(MappingEntry {
            title: Some("Named".into()),
            ..num(1, "s")
        }),
    );
    assert_eq!(new, "[^s]: [Named](https://x.test/s)\n");
    assert_eq!(s[0].title, "Named");
    // No resource at all; a caller resource supplies one.
    let body = "# Citations\n[1] lines 47-60\n";
    let o = run(body, DocKind::Concept, Some(&m(num(1, "l"))));
    assert_eq!(codes(&o), ["missing_citation_resource"]);
    let (new, _) = ok(
        body,
        &m(MappingEntry {
            resource: Some("lines 47-60".into()),
            ..num(1, "l")
        }),
    );
    assert_eq!(new, "[^l]: lines 47-60\n");
    // Two destinations.
    let body = "# Citations\n[1] [A](https://a.test) and <https://b.test>\n";
    let o = run(body, DocKind::Concept, Some(&m(num(1, "a"))));
    assert_eq!(codes(&o), ["ambiguous_citation_destination"]);
    assert_eq!(
        o.blockers[0].action,
        Some("disambiguate_citation_destination")
    );
    // A link inside a code span is no link.
    let (new, _) = ok(
        "# Citations\n[1] [A](https://a.test) `[B](https://b.test)`\n",
        &m(num(1, "a")),
    );
    assert_eq!(new, "[^a]: [A](https://a.test)\n");
    // An autolink has no link text.
    let (new, s) = ok(
        "# Citations\n- <https://a.test/x>\n",
        &m(ent("<https://a.test/x>", "a")),
    );
    assert_eq!(new, "[^a]: https://a.test/x\n");
    assert_eq!(s[0].title, "");
}

#[test]
fn rendering_encodes_the_destination_and_escapes_the_link_title() {
    let body = "# Citations\n- [T](<https://x.test/a b(c)> \"say \\\"hi\\\" \\\\ ok\")\n";
    let raw = "[T](<https://x.test/a b(c)> \"say \\\"hi\\\" \\\\ ok\")";
    let (new, s) = ok(body, &item(vec![ent(raw, "t")]));
    assert_eq!(
        new,
        "[^t]: [T](https://x.test/a%20b%28c%29 \"say \\\"hi\\\" \\\\ ok\")\n"
    );
    assert_eq!(s[0].resource, "https://x.test/a b(c)");
    // Balanced parentheses and escapes in a plain destination; `<` `>` in the resource.
    let (new, _) = ok(
        "# Citations\n[1] [W](https://w.test/A_(b)\\)x)\n",
        &item(vec![num(1, "w")]),
    );
    assert_eq!(new, "[^w]: [W](https://w.test/A_%28b%29%29x)\n");
    let (new, _) = ok(
        "# Citations\n[1] some text\n",
        &item(vec![MappingEntry {
            title: Some("X".into()),
            resource: Some("a <b>".into()),
            ..num(1, "x")
        }]),
    );
    assert_eq!(new, "[^x]: [X](a%20%3Cb%3E)\n");
}

#[test]
fn replay_evidence_for_number_only_selectors() {
    let body = "# Citations\n[1] [Spec](https://x.test/s)\n";
    // Reserved: resource and (with link text) title needed.
    let o = run(body, DocKind::Reserved, Some(&item(vec![num(1, "s")])));
    assert_eq!(codes(&o), ["migration_citation_replay_evidence_missing"]);
    assert_eq!(o.blockers[0].action, Some("provide_citation_mapping"));
    let only_resource = MappingEntry {
        resource: Some("https://x.test/s".into()),
        ..num(1, "s")
    };
    let o = run(
        body,
        DocKind::Reserved,
        Some(&item(vec![only_resource.clone()])),
    );
    assert_eq!(codes(&o), ["migration_citation_replay_evidence_missing"]);
    let full = MappingEntry {
        title: Some("Spec".into()),
        ..only_resource
    };
    let m = item(vec![full]);
    let o = run(body, DocKind::Reserved, Some(&m));
    assert!(o.blockers.is_empty());
    assert!(o.sources.is_empty(), "reserved documents get no sources");
    let new = o.body.unwrap();
    assert!(replay_check(&new, 0, DocKind::Reserved, Some(&m), &[]).is_empty());
    // Without link text the resource alone is enough.
    let m = item(vec![MappingEntry {
        resource: Some("https://x.test/s".into()),
        ..num(1, "s")
    }]);
    assert!(run(
        "# Citations\n[1] https://x.test/s\n",
        DocKind::Reserved,
        Some(&m)
    )
    .blockers
    .is_empty());
    // A legacy_entry is always enough.
    let m = item(vec![ent("[Spec](https://x.test/s)", "s")]);
    assert!(run(body, DocKind::Reserved, Some(&m)).blockers.is_empty());
    // A link title attribute: never by number, not even in a concept.
    let body = "# Citations\n[1] [Spec](https://x.test/s \"T\")\n";
    let o = run(body, DocKind::Concept, Some(&item(vec![num(1, "s")])));
    assert_eq!(codes(&o), ["migration_citation_replay_evidence_missing"]);
    ok(
        body,
        &item(vec![ent("[Spec](https://x.test/s \"T\")", "s")]),
    );
}

// ----- claim markers (§6.2 rule 5, §12.6 rule 1) ---------------------------------------------

#[test]
fn claim_markers_and_their_exclusions() {
    let prose = "A [1] b[1]. `code [1]` \\[1] ![1] ^[1] [1](x) [1][y] [1]: z [[1]] _[1]_\n\n```\n[1]\n```\n\n    [1] indented\n\n<div>\n[1]\n</div>\n\n[^n]: note [1]\n\n## Heading [1]\n";
    let body = format!("{prose}\n# Citations\n[1] [A](https://a.test)\n");
    let (new, _) = ok(&body, &item(vec![num(1, "a")]));
    let expected = "A [^a] b[^a]. `code [1]` \\[1] ![1] ^[1] [1](x) [1][y] [1]: z [[^a]] _[^a]_\n\n```\n[1]\n```\n\n    [1] indented\n\n<div>\n[1]\n</div>\n\n[^n]: note [1]\n\n## Heading [^a]\n\n[^a]: [A](https://a.test)\n";
    assert_eq!(new, expected);
}

#[test]
fn markers_of_blocked_entries_are_not_reported_again() {
    let body = "x [1]\n# Citations\n[1] a\n";
    let o = run(
        body,
        DocKind::Concept,
        Some(&item(vec![num(1, "a"), ent("a", "b")])),
    );
    assert_eq!(codes(&o), ["ambiguous_citation_mapping"]);
}

#[test]
fn invalid_and_unresolved_markers() {
    let body = "Zero [0], stray [2], ok [1].\n# Citations\n[1] [A](https://a.test)\n";
    let o = run(body, DocKind::Concept, Some(&item(vec![num(1, "a")])));
    let found: Vec<(&str, &str, Option<&str>)> = o
        .blockers
        .iter()
        .map(|b| (b.code, span_text(body, b), b.action))
        .collect();
    assert_eq!(
        found,
        [
            ("invalid_claim_marker", "[0]", None),
            (
                "unresolved_claim_marker",
                "[2]",
                Some("provide_citation_mapping")
            ),
        ]
    );
    // Leading zeros are no marker; numbers beyond u64 neither.
    ok(
        "x [01] [99999999999999999999999]\n# Citations\n[1] [A](https://a.test)\n",
        &item(vec![num(1, "a")]),
    );
}

#[test]
fn mig_39_claim_markers_ignore() {
    let body = "| a | b [1] |\n\nText [2].\n\n# Citations\n\n2. [B](https://b.test)\n";
    let m = item(vec![num(2, "b")]);
    let o = run(body, DocKind::Concept, Some(&m));
    assert_eq!(codes(&o), ["unresolved_claim_marker"]);
    let m = CitationMapping {
        claim_markers: ClaimMarkers::Ignore,
        ..m
    };
    let (new, _) = ok(body, &m);
    assert_eq!(
        new,
        "| a | b [1] |\n\nText [2].\n\n[^b]: [B](https://b.test)\n"
    );
    // Ignore also leaves `[0]` as text.
    ok(
        "x [0]\n# Citations\n[1] a\n",
        &CitationMapping {
            claim_markers: ClaimMarkers::Ignore,
            ..item(vec![num(1, "a")])
        },
    );
}

// ----- inline notes (§12.2) ----------------------------------------------------------------

fn with_note(e: MappingEntry, note: &str) -> MappingEntry {
    MappingEntry {
        inline_note: Some(note.to_owned()),
        ..e
    }
}

#[test]
fn mig_34_inline_notes() {
    let body = "x ^[a.md] y ^[a.md] ^[other] `^[a.md]` \\^[a.md] ^[a.md](l) ^[a.md]: z\n\n```\n^[a.md]\n```\n\n# Citations\n\n1. [a.md](a.md)\n";
    let m = item(vec![with_note(num(1, "a"), "a.md")]);
    let (new, _) = ok(body, &m);
    assert_eq!(
        new,
        "x [^a] y [^a] ^[other] `^[a.md]` \\^[a.md] ^[a.md](l) ^[a.md]: z\n\n```\n^[a.md]\n```\n\n[^a]: [a.md](a.md)\n"
    );
    // A mapped note absent from the body.
    let body = "x ^[b.md]\n# Citations\n1. [a.md](a.md)\n";
    let o = run(body, DocKind::Concept, Some(&m));
    assert_eq!(codes(&o), ["unresolved_inline_note"]);
    assert_eq!(span_text(body, &o.blockers[0]), "1. [a.md](a.md)");
    assert_eq!(o.blockers[0].action, Some("provide_citation_mapping"));
    // A note in code only does not count.
    let body = "`^[a.md]`\n# Citations\n1. [a.md](a.md)\n";
    assert_eq!(
        codes(&run(body, DocKind::Concept, Some(&m))),
        ["unresolved_inline_note"]
    );
}

#[test]
fn mig_40_inline_note_lists() {
    let body = "x ^[a.md, b.md] y ^[a.md, c.md]\n# Citations\n1. [a.md](a.md)\n2. [b.md](b.md)\n";
    let m = item(vec![
        with_note(num(1, "a"), "a.md"),
        with_note(num(2, "b"), "b.md"),
    ]);
    let (new, _) = ok(body, &m);
    assert_eq!(
        new,
        "x [^a][^b] y ^[a.md, c.md]\n[^a]: [a.md](a.md)\n[^b]: [b.md](b.md)\n"
    );
    // A part of an unmapped list does not count as an occurrence.
    let body = "x ^[a.md, c.md]\n# Citations\n1. [a.md](a.md)\n";
    let m = item(vec![with_note(num(1, "a"), "a.md")]);
    assert_eq!(
        codes(&run(body, DocKind::Concept, Some(&m))),
        ["unresolved_inline_note"]
    );
}

#[test]
fn mig_40_a_note_list_alone_gets_its_parts_proposed_and_rewritten() {
    // The generator dialect: only the list occurs, never `^[a.md]` alone.
    let body = "x ^[a.md, b.md].\n\n# Citations\n\n1. [a.md](/r/a.md)\n2. [b.md](https://example.test/b)\n";
    let p = propose("t/x.md", body, DocKind::Concept).expect("a proposal");
    let notes: Vec<Option<&str>> = p.entries.iter().map(|e| e.inline_note.as_deref()).collect();
    assert_eq!(notes, [Some("a.md"), Some("b.md")]);
    let o = run(body, DocKind::Concept, Some(&p));
    assert!(o.blockers.is_empty(), "{:?}", o.blockers);
    let new = o.body.expect("rewritten");
    assert!(new.starts_with("x [^a][^b].\n"), "{new}");
    assert!(replay_check(&new, 0, DocKind::Concept, Some(&p), &o.sources).is_empty());
    // A list with a part that no entry carries stays as it is, and proposes no note.
    let body = "x ^[a.md, zzz.md].\n\n# Citations\n\n1. [a.md](/r/a.md)\n";
    let p = propose("t/x.md", body, DocKind::Concept).expect("a proposal");
    assert_eq!(p.entries[0].inline_note, None);
}

#[test]
fn mig_40_citations_in_a_never_closed_fence() {
    let body = "Text\n\n```md\n# Citations\n\n[1] x\n";
    let o = run(body, DocKind::Concept, None);
    assert!(!o.has_section);
    assert!(o.blockers.is_empty());
    assert_eq!(o.notices.len(), 1);
    assert_eq!(o.notices[0].code, "legacy_citations_in_code");
    assert_eq!(probe(body, 0), SectionProbe::None);
    // A closed fence is ordinary code: no notice.
    let o = run("```\n# Citations\n```\n", DocKind::Concept, None);
    assert!(o.notices.is_empty());
    // A closed fence, then a never-closed one without the heading.
    let o = run("```\n# Citations\n```\n~~~\nx\n", DocKind::Concept, None);
    assert!(o.notices.is_empty());
}

// ----- definitions block (§6.3 rules 4–5) ----------------------------------------------------

#[test]
fn definitions_dedupe_skip_and_conflict() {
    // One definition per distinct normalised id, in entry order; one sources item.
    let body = "a [1] b [2] c [3]\n# Citations\n[2] [B](https://b.test)\n[1] [A](https://a.test)\n[3] [B](https://b.test)\n";
    let m = item(vec![num(1, "a"), num(2, "b"), num(3, "b")]);
    let (new, sources) = ok(body, &m);
    assert_eq!(
        new,
        "a [^a] b [^b] c [^b]\n[^b]: [B](https://b.test)\n[^a]: [A](https://a.test)\n"
    );
    assert_eq!(
        sources.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["b", "a"]
    );
    // The same id rendered differently.
    let body = "# Citations\n[1] [B](https://b.test)\n[2] [Other](https://b.test)\n";
    let o = run(
        body,
        DocKind::Concept,
        Some(&item(vec![num(1, "b"), num(2, "b")])),
    );
    assert_eq!(codes(&o), ["reused_source_metadata_conflict"]);
    assert_eq!(
        span_text(body, &o.blockers[0]),
        "[2] [Other](https://b.test)"
    );
    // An identical existing definition is skipped (its label compared normalised).
    let body = "x [1]\n\n[^A]: [A](https://a.test)\n\n# Citations\n[1] [A](https://a.test)\n";
    let (new, _) = ok(body, &item(vec![num(1, "a")]));
    assert_eq!(new, "x [^a]\n\n[^A]: [A](https://a.test)\n\n");
    // A different existing definition with that label.
    let body = "[^a]: something else\n# Citations\n[1] [A](https://a.test)\n";
    let o = run(body, DocKind::Concept, Some(&item(vec![num(1, "a")])));
    assert_eq!(codes(&o), ["conflicting_footnote_definition"]);
    assert_eq!(span_text(body, &o.blockers[0]), "[^a]: something else");
}

#[test]
fn blank_lines_and_what_follows_the_block() {
    // Blank lines among the entries are owned; content after the section gets a blank line.
    let body = "Intro\n\n# Citations\n\n[1] a\n\n[2] b\n\n\n# Next\nText\n";
    let (new, _) = ok(body, &item(vec![num(1, "a"), num(2, "b")]));
    assert_eq!(new, "Intro\n\n[^a]: a\n[^b]: b\n\n# Next\nText\n");
    let body = "# Citations\n[1] a\n# Next\n";
    assert_eq!(ok(body, &item(vec![num(1, "a")])).0, "[^a]: a\n\n# Next\n");
    // A last entry without a newline.
    assert_eq!(
        ok("x\n# Citations\n[1] a", &item(vec![num(1, "a")])).0,
        "x\n[^a]: a\n"
    );
    // Every definition already exists: the section goes, nothing is added.
    let body = "[^a]: a\n\n# Citations\n\n[1] a\n\n# Next\n";
    assert_eq!(ok(body, &item(vec![num(1, "a")])).0, "[^a]: a\n\n# Next\n");
}

#[test]
fn crlf_and_bom() {
    let body =
        "Claim [1].\r\n\r\n# Citations\r\n\r\n[1] [Spec](https://x.test/s)\r\n\r\n# Next\r\n";
    let m = item(vec![num(1, "spec")]);
    let o = migrate_body(body, 0, "\r\n", DocKind::Concept, Some(&m));
    assert!(o.blockers.is_empty(), "{:#?}", o.blockers);
    assert_eq!(
        o.body.as_deref(),
        Some("Claim [^spec].\r\n\r\n[^spec]: [Spec](https://x.test/s)\r\n\r\n# Next\r\n")
    );
    // A byte order mark before the heading stays.
    let body = "\u{feff}# Citations\n[1] a\n";
    let o = run(body, DocKind::Concept, Some(&item(vec![num(1, "a")])));
    assert_eq!(o.body.as_deref(), Some("\u{feff}[^a]: a\n"));
    assert_eq!(
        probe(body, 0),
        SectionProbe::One {
            start: 3,
            end: body.len()
        }
    );
}

#[test]
fn spans_are_document_offsets() {
    let body = "x [2]\n# Citations\n[1] a\n";
    let o = migrate_body(
        body,
        100,
        "\n",
        DocKind::Concept,
        Some(&item(vec![num(1, "a")])),
    );
    assert_eq!(codes(&o), ["unresolved_claim_marker"]);
    assert_eq!((o.blockers[0].start, o.blockers[0].end), (102, 105));
}

// ----- trailing content (§12.6 rule 2) -------------------------------------------------------

#[test]
fn mig_39_trailing_content() {
    let body = "Claim [1].\n\n# Citations\n\n1. [A](https://a.test)\n\n### Notes\n\nGenerated [1] by a tool.\n\n```\ncode\n```\n\n# Next\n";
    let m = item(vec![num(1, "a")]);
    let o = run(body, DocKind::Concept, Some(&m));
    assert_eq!(
        codes(&o),
        [
            "unowned_citations_content",
            "unowned_citations_content",
            "opaque_citations_content"
        ]
    );
    assert!(o.notices.is_empty());
    let keep = CitationMapping {
        trailing_content: TrailingContent::Keep,
        ..m.clone()
    };
    let o = run(body, DocKind::Concept, Some(&keep));
    assert!(o.blockers.is_empty(), "{:#?}", o.blockers);
    assert_eq!(o.notices.len(), 1);
    assert_eq!(o.notices[0].code, "citations_trailing_content_kept");
    let new = o.body.unwrap();
    // Kept content stays byte for byte, except a marker rewrite (it is no longer in a section).
    assert_eq!(
        new,
        "Claim [^a].\n\n[^a]: [A](https://a.test)\n\n### Notes\n\nGenerated [^a] by a tool.\n\n```\ncode\n```\n\n# Next\n"
    );
    assert!(replay_check(&new, 0, DocKind::Concept, Some(&keep), &o.sources).is_empty());
    // Content right after an entry line gets the separating blank line.
    let body = "# Citations\n[1] a\nTrailing prose.\n";
    let keep = CitationMapping {
        trailing_content: TrailingContent::Keep,
        ..item(vec![num(1, "a")])
    };
    assert_eq!(ok(body, &keep).0, "[^a]: a\n\nTrailing prose.\n");
    // Entry-like lines after the first other content are kept content (§12.8): a mapping
    // entry selecting one selects no owned entry.
    let body = "# Citations\n[1] a\n\nProse.\n\n[2] b\n";
    let keep = CitationMapping {
        trailing_content: TrailingContent::Keep,
        ..item(vec![num(1, "a"), num(2, "b")])
    };
    // (Its `[2]` is a claim marker in kept content, with no owned entry 2.)
    let o = run(body, DocKind::Concept, Some(&keep));
    assert_eq!(
        codes(&o),
        ["incomplete_citation_mapping", "unresolved_claim_marker"]
    );
    let keep = CitationMapping {
        trailing_content: TrailingContent::Keep,
        claim_markers: ClaimMarkers::Ignore,
        ..item(vec![num(1, "a")])
    };
    assert_eq!(ok(body, &keep).0, "[^a]: a\n\nProse.\n\n[2] b\n");
    // A multi-line entry is not settled either.
    let body = "# Citations\n- a\n  more\n";
    let keep = CitationMapping {
        trailing_content: TrailingContent::Keep,
        ..item(vec![ent("a", "a")])
    };
    assert_eq!(
        codes(&run(body, DocKind::Concept, Some(&keep))),
        ["unsupported_citation_entry"]
    );
}

#[test]
fn post_check_sees_what_remains() {
    let m = item(vec![with_note(num(1, "a"), "a.md")]);
    let map = note_map(&m);
    assert_eq!(post_check("x\n", &m, &map), None);
    assert!(post_check("# Citations\n", &m, &map).is_some());
    assert!(post_check("x [3]\n", &m, &map).is_some());
    assert!(post_check("x ^[a.md]\n", &m, &map).is_some());
    let ignore = CitationMapping {
        claim_markers: ClaimMarkers::Ignore,
        ..m.clone()
    };
    assert_eq!(post_check("x [3]\n", &ignore, &map), None);
}

// ----- target replay (§6.7 rules 1 and 6, §12.2 rule 3) ---------------------------------------

fn src(id: &str, title: &str, resource: &str) -> ProjectedSource {
    ProjectedSource {
        id: id.into(),
        title: title.into(),
        resource: resource.into(),
    }
}

#[test]
fn mig_08_active_section_in_target_replay() {
    let body = "Text\n\n# Citations\n\n[1] [A](https://a.test)\n";
    let b = replay_check(body, 40, DocKind::Concept, None, &[]);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].code, "migration_replay_mismatch");
    assert_eq!(b[0].action, Some("normalize_citations_section"));
    assert_eq!((b[0].start, b[0].end), (46, 40 + body.len()));
    assert!(replay_check("Text [1]\n", 0, DocKind::Concept, None, &[]).is_empty());
}

#[test]
fn mig_09_reserved_replay() {
    let body = "## 2026-05-22\n\nChanged [1].\n\n# Citations\n\n[1] [Spec](https://x.test/s)\n";
    let m = item(vec![MappingEntry {
        title: Some("Spec".into()),
        resource: Some("https://x.test/s".into()),
        ..num(1, "spec")
    }]);
    let o = run(body, DocKind::Reserved, Some(&m));
    let new = o.body.expect("migrated");
    assert!(replay_check(&new, 0, DocKind::Reserved, Some(&m), &[]).is_empty());
    let tampered = new.replace("https://x.test/s)", "https://x.test/t)");
    let b = replay_check(&tampered, 0, DocKind::Reserved, Some(&m), &[]);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].code, "migration_replay_mismatch");
    assert_eq!(
        span_text(&tampered, &b[0]),
        "[^spec]: [Spec](https://x.test/t)"
    );
    // Without a resource, a number-only entry cannot be checked.
    let b = replay_check(
        &new,
        0,
        DocKind::Reserved,
        Some(&item(vec![num(1, "spec")])),
        &[],
    );
    assert_eq!(b[0].code, "migration_citation_replay_evidence_missing");
    assert_eq!(b[0].action, Some("provide_citation_mapping"));
}

#[test]
fn mig_21_claim_and_footnote_ownership() {
    let m = item(vec![num(1, "spec")]);
    let s = [src("spec", "Spec", "https://x.test/s")];
    let good = "Claim [^spec].\n\n[^spec]: [Spec](https://x.test/s)\n";
    assert!(replay_check(good, 0, DocKind::Concept, Some(&m), &s).is_empty());
    // A leftover marker.
    let body = "Claim [1].\n\n[^spec]: [Spec](https://x.test/s)\n";
    let b = replay_check(body, 0, DocKind::Concept, Some(&m), &s);
    assert_eq!(b.len(), 1);
    assert_eq!(span_text(body, &b[0]), "[1]");
    // ... unless markers are ignored.
    let ignore = CitationMapping {
        claim_markers: ClaimMarkers::Ignore,
        ..m.clone()
    };
    assert!(replay_check(body, 0, DocKind::Concept, Some(&ignore), &s).is_empty());
    // A missing definition: at the end of the body.
    let body = "Claim [^spec].\n";
    let b = replay_check(body, 9, DocKind::Concept, Some(&m), &s);
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].start, b[0].end), (9 + body.len(), 9 + body.len()));
    // Wrong attribution: the definition points elsewhere.
    let body = "Claim [^spec].\n\n[^spec]: [Spec](https://other.test)\n";
    let b = replay_check(body, 0, DocKind::Concept, Some(&m), &s);
    assert_eq!(
        span_text(body, &b[0]),
        "[^spec]: [Spec](https://other.test)"
    );
    // A sources item that differs, or is missing: located at the frontmatter.
    let em = item(vec![ent("[Spec](https://x.test/s)", "spec")]);
    let b = replay_check(
        good,
        30,
        DocKind::Concept,
        Some(&em),
        &[src("spec", "Spec", "https://y.test")],
    );
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].start, b[0].end), (0, 30));
    let b = replay_check(good, 30, DocKind::Concept, Some(&m), &[]);
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].start, b[0].end), (0, 30));
    // A number-only entry takes its source from `sources`: the definition must agree.
    let b = replay_check(
        good,
        0,
        DocKind::Concept,
        Some(&m),
        &[src("spec", "Spec", "https://y.test")],
    );
    assert_eq!(span_text(good, &b[0]), "[^spec]: [Spec](https://x.test/s)");
    // A shared normalised id is one definition.
    let shared = item(vec![num(1, "spec"), num(2, "spec")]);
    assert!(replay_check(good, 0, DocKind::Concept, Some(&shared), &s).is_empty());
    // An entry-only mapping whose definition is missing, and the unreferenced one accepted.
    assert!(!replay_check("Claim.\n", 0, DocKind::Concept, Some(&em), &s).is_empty());
    assert!(replay_check(
        "Claim.\n\n[^spec]: [Spec](https://x.test/s)\n",
        0,
        DocKind::Concept,
        Some(&em),
        &s
    )
    .is_empty());
    // A definition inside a fence is code.
    let body = "```\n[^spec]: [Spec](https://x.test/s)\n```\n";
    assert!(!replay_check(body, 0, DocKind::Concept, Some(&m), &s).is_empty());
}

#[test]
fn mig_34_replay_requires_no_mapped_inline_note() {
    let m = item(vec![
        with_note(num(1, "a"), "a.md"),
        with_note(num(2, "b"), "b.md"),
    ]);
    let s = [src("a", "a.md", "a.md"), src("b", "b.md", "b.md")];
    let defs = "[^a]: [a.md](a.md)\n[^b]: [b.md](b.md)\n";
    assert!(replay_check(
        &format!("x [^a] ^[c.md]\n{defs}"),
        0,
        DocKind::Concept,
        Some(&m),
        &s
    )
    .is_empty());
    for leftover in ["^[a.md]", "^[a.md, b.md]"] {
        let body = format!("x {leftover}\n{defs}");
        let b = replay_check(&body, 0, DocKind::Concept, Some(&m), &s);
        assert_eq!(b.len(), 1, "{leftover}");
        assert_eq!(span_text(&body, &b[0]), leftover);
    }
}

// ----- static validation (§3.3 rules 3–11, §12.2 rule 2) --------------------------------------

fn check(entries: Vec<MappingEntry>) -> Result<bool, StaticError> {
    let mut m = item(entries);
    sort_entries(&mut m.entries);
    validate_mapping(&m, 2)
}

fn err(entries: Vec<MappingEntry>) -> StaticError {
    check(entries).expect_err("invalid")
}

#[test]
fn validation_rule_3_selectors() {
    assert_eq!(check(vec![num(1, "a"), num(2, "b")]), Ok(false));
    let e = err(vec![num(1, "a"), num(1, "b")]);
    assert_eq!(e.code, "invalid_request");
    assert!(
        e.message.contains("ambiguous_citation_mapping"),
        "{}",
        e.message
    );
    assert!(
        e.message
            .contains("citation_mappings[2].entries[1].legacy_number"),
        "{}",
        e.message
    );
    let e = err(vec![ent("x", "a"), ent("x", "b")]);
    assert!(e.message.contains("ambiguous_citation_mapping"));
    let both = MappingEntry {
        legacy_entry: Some("x".into()),
        ..num(1, "a")
    };
    assert!(err(vec![both.clone(), ent("x", "b")])
        .message
        .contains("ambiguous_citation_mapping"));
    // Two number-and-entry selectors sharing the entry text do not overlap.
    let other = MappingEntry {
        legacy_entry: Some("x".into()),
        ..num(2, "b")
    };
    assert_eq!(check(vec![both, other]), Ok(false));
    let none = MappingEntry {
        source_id: "a".into(),
        ..MappingEntry::default()
    };
    assert_eq!(err(vec![none]).code, "invalid_request");
    assert_eq!(err(vec![num(0, "a")]).code, "invalid_request");
    assert_eq!(err(vec![num(1_000_001, "a")]).code, "invalid_request");
}

#[test]
fn validation_rule_4_legacy_entry() {
    assert_eq!(check(vec![ent("a\tb", "a")]), Ok(false));
    for bad in [" ", "", "a\u{1}b", "a\u{7f}", "a\u{0}", "a\u{85}"] {
        let e = err(vec![ent(bad, "a")]);
        assert_eq!(e.code, "invalid_request", "{bad:?}");
        assert!(
            e.message.contains("entries[0].legacy_entry"),
            "{}",
            e.message
        );
    }
    assert_eq!(
        err(vec![ent(&"x".repeat(4097), "a")]).code,
        "invalid_request"
    );
    assert_eq!(check(vec![ent(&"x".repeat(4096), "a")]), Ok(false));
}

#[test]
fn mig_19_validation_rules_5_to_8_fields() {
    for bad in ["", " ", "a]", "[a", " a", "a ", "a\nb", "a\rb"] {
        let e = err(vec![num(1, bad)]);
        assert_eq!(e.code, "invalid_request", "{bad:?}");
        assert!(e.message.contains("invalid_source_id"), "{}", e.message);
        assert!(e
            .message
            .contains("citation_mappings[2].entries[0].source_id"));
    }
    // MIG-19: controls, then sizes counted in bytes; valid Unicode unnormalised.
    for (field, value) in [
        ("title", "a\u{0}"),
        ("title", "a\tb"),
        ("resource", "a\u{7f}"),
        ("resource", "\u{1b}x"),
    ] {
        let mut e = num(1, "a");
        match field {
            "title" => e.title = Some(value.into()),
            _ => e.resource = Some(value.into()),
        }
        let e = err(vec![e]);
        assert_eq!(e.code, "invalid_request");
        assert!(
            e.message.contains(&format!("entries[0].{field}")),
            "{}",
            e.message
        );
    }
    assert_eq!(err(vec![num(1, "a\u{7f}")]).code, "invalid_request");
    let long = "é".repeat(2049);
    for which in 0..3 {
        let mut e = num(1, "a");
        match which {
            0 => e.source_id.clone_from(&long),
            1 => e.title = Some(long.clone()),
            _ => e.resource = Some(long.clone()),
        }
        assert_eq!(err(vec![e]).code, "resource_limit");
    }
    let exact = "é".repeat(2048);
    assert_eq!(check(vec![num(1, &exact)]), Ok(false));
    assert_eq!(check(vec![num(1, "e\u{301}"), num(2, "\u{e9}")]), Ok(false));
    for blank in ["", "  "] {
        let e = MappingEntry {
            title: Some(blank.into()),
            ..num(1, "a")
        };
        assert_eq!(err(vec![e]).code, "invalid_request");
        let e = MappingEntry {
            resource: Some(blank.into()),
            ..num(1, "a")
        };
        assert_eq!(err(vec![e]).code, "invalid_request");
    }
}

#[test]
fn mig_20_validation_rules_9_to_11() {
    let t = |n: u32, title: &str| MappingEntry {
        title: Some(title.into()),
        ..num(n, "s")
    };
    let e = err(vec![t(1, "A"), t(2, "B")]);
    assert!(
        e.message.contains("reused_source_metadata_conflict"),
        "{}",
        e.message
    );
    assert_eq!(check(vec![t(1, "A"), t(2, "A"), num(3, "s")]), Ok(false));
    let r = |n: u32, res: &str| MappingEntry {
        resource: Some(res.into()),
        ..num(n, "s")
    };
    assert!(err(vec![r(1, "x"), num(2, "s"), r(3, "y")])
        .message
        .contains("reused_source_metadata_conflict"));
    // MIG-20: a title `[bad]`; the collision `Spec` / `spec`.
    let e = err(vec![t(1, "[bad]")]);
    assert_eq!(e.code, "invalid_request");
    assert!(
        e.message.contains("unsupported_footnote_definition"),
        "{}",
        e.message
    );
    assert_eq!(check(vec![num(1, "Spec"), num(2, "spec")]), Ok(true));
    assert_eq!(check(vec![num(1, "A  b"), num(2, "a b")]), Ok(true));
}

#[test]
fn mig_34_validation_inline_notes() {
    assert_eq!(check(vec![with_note(num(1, "a"), "a.md")]), Ok(false));
    for bad in ["", "a[", "b]", "a\tb", "a\u{7f}"] {
        assert_eq!(
            err(vec![with_note(num(1, "a"), bad)]).code,
            "invalid_request",
            "{bad:?}"
        );
    }
    assert_eq!(
        err(vec![with_note(num(1, "a"), &"n".repeat(4097))]).code,
        "resource_limit"
    );
    let e = err(vec![
        with_note(num(1, "a"), "x"),
        with_note(num(2, "b"), "x"),
    ]);
    assert!(
        e.message.contains("ambiguous_citation_mapping"),
        "{}",
        e.message
    );
    assert!(e.message.contains("inline_note"));
}

// ----- proposals (§12.4) ----------------------------------------------------------------------

/// Proposes, passes the proposal back (sorted, as the caller does), and checks the result
/// replays clean; returns the proposal.
fn round_trip(body: &str, kind: DocKind) -> CitationMapping {
    let p = propose("a.md", body, kind).expect("a proposal");
    let mut sorted = p.clone();
    sort_entries(&mut sorted.entries);
    assert_eq!(validate_mapping(&sorted, 0), Ok(false));
    let o = migrate_body(body, 0, "\n", kind, Some(&sorted));
    assert!(o.blockers.is_empty(), "{body:?}\n{p:#?}\n{:#?}", o.blockers);
    let new = o.body.expect("a rewrite");
    let r = replay_check(&new, 0, kind, Some(&sorted), &o.sources);
    assert!(r.is_empty(), "{new:?}: {r:#?}");
    p
}

fn ids(p: &CitationMapping) -> Vec<&str> {
    p.entries.iter().map(|e| e.source_id.as_str()).collect()
}

#[test]
fn mig_36_proposals_slugs_notes_reserved_fields() {
    let body = "A [1] B [2] C [3] ^[Spec]\n\n# Citations\n\n[1] [Spec](https://a.test)\n[2] [spec](https://b.test)\n[3] [SPEC](https://c.test)\n";
    let p = round_trip(body, DocKind::Concept);
    assert_eq!(p.path, "a.md");
    assert_eq!(ids(&p), ["spec", "spec-2", "spec-3"]);
    assert_eq!(
        p.entries
            .iter()
            .map(|e| e.legacy_number)
            .collect::<Vec<_>>(),
        [Some(1), Some(2), Some(3)]
    );
    assert!(p.entries.iter().all(|e| e.legacy_entry.is_none()));
    // `inline_note` only where such a note occurs; concepts get no title/resource.
    assert_eq!(p.entries[0].inline_note.as_deref(), Some("Spec"));
    assert_eq!(p.entries[1].inline_note, None);
    assert!(p
        .entries
        .iter()
        .all(|e| e.title.is_none() && e.resource.is_none()));
    assert_eq!(p.claim_markers, ClaimMarkers::Rewrite);
    assert_eq!(p.trailing_content, TrailingContent::Block);
    // Identical across calls.
    assert_eq!(propose("a.md", body, DocKind::Concept), Some(p));
    // Reserved documents: title and resource for number-only entries.
    let p = round_trip(body, DocKind::Reserved);
    assert_eq!(p.entries[0].title.as_deref(), Some("Spec"));
    assert_eq!(p.entries[0].resource.as_deref(), Some("https://a.test"));
    // ... and a resource alone when the link has no text.
    let p = round_trip("# Citations\n[1] https://a.test/x\n", DocKind::Reserved);
    assert_eq!(p.entries[0].title, None);
    assert_eq!(p.entries[0].resource.as_deref(), Some("https://a.test/x"));
    assert_eq!(ids(&p), ["a-test-x"]);
}

#[test]
fn proposal_selectors() {
    // Bullets without a number, link titles and numbers over 1,000,000: legacy_entry.
    let body = "# Citations\n- [A](https://a.test)\n[2] [B](https://b.test \"T\")\n[1000001] [C](https://c.test)\n";
    let p = round_trip(body, DocKind::Reserved);
    assert_eq!(
        p.entries
            .iter()
            .map(|e| e.legacy_entry.as_deref())
            .collect::<Vec<_>>(),
        [
            Some("[A](https://a.test)"),
            Some("[B](https://b.test \"T\")"),
            Some("[C](https://c.test)")
        ]
    );
    assert!(p
        .entries
        .iter()
        .all(|e| e.legacy_number.is_none() && e.title.is_none()));
    // Existing footnote labels are taken.
    let p = round_trip(
        "x\n\n[^a]: other\n\n# Citations\n[1] [A](https://a.test)\n",
        DocKind::Concept,
    );
    assert_eq!(ids(&p), ["a-2"]);
}

#[test]
fn mig_39_proposal_flags() {
    let body = "| x [1] |\n\nText [2].\n\n# Citations\n\n2. [B](https://b.test)\n3. lines 47-60\n\n### Notes\n\nProse.\n";
    let p = round_trip(body, DocKind::Concept);
    assert_eq!(p.claim_markers, ClaimMarkers::Ignore);
    assert_eq!(p.trailing_content, TrailingContent::Keep);
    assert_eq!(p.entries[1].resource.as_deref(), Some("lines 47-60"));
    assert_eq!(ids(&p), ["b", "lines-47-60"]);
    // `[0]` alone does not make markers ignored (invalid_claim_marker stays visible).
    let p = propose("a.md", "x [0]\n# Citations\n[1] a\n", DocKind::Concept).unwrap();
    assert_eq!(p.claim_markers, ClaimMarkers::Rewrite);
}

#[test]
fn mig_40_slugs() {
    let long = "A very long link text that goes on and on about many things, reaching ninety bytes in all!";
    assert_eq!(long.len(), 90);
    let s = slug_base(long);
    assert!(s.len() <= 56, "{s}");
    let (head, hash) = s.rsplit_once('-').unwrap();
    assert_eq!(hash.len(), 7);
    assert!(hash
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert!(head.len() <= 48 && !head.ends_with('-'));
    assert_eq!(head, "a-very-long-link-text-that-goes-on-and-on-about");
    let uncut =
        "a-very-long-link-text-that-goes-on-and-on-about-many-things-reaching-ninety-bytes-in-all";
    assert_eq!(hash, &digest::hex(&digest::sha256(uncut.as_bytes()))[..7]);
    // No `-` to cut at: 48 bytes at a character boundary.
    let s = slug_base(&"é".repeat(40));
    assert_eq!(s.len(), 48 + 8);
    assert!(s.starts_with(&"é".repeat(24)));
    let s = slug_base(&format!("a{}", "é".repeat(40)));
    assert!(s.starts_with(&format!("a{}-", "é".repeat(23))), "{s}");
    for (text, slug) in [
        ("page.md:31-33", "page"),
        ("page.md#L4", "page"),
        ("page.md:31", "page"),
        ("docs/page.html#L11-L24", "docs-page"),
        ("https://example.test/a/b.html?q=1#frag", "example-test-a-b"),
        ("https://user@Host.test:8080/Path/", "host-test-path"),
        ("C# guide", "c-guide"),
        ("Spec", "spec"),
        ("  ---  ", "source"),
        ("Größe ÄÖÜ", "größe-äöü"),
        ("issue #12", "issue-12"),
    ] {
        assert_eq!(slug_base(text), slug, "{text:?}");
    }
    let mut taken: HashSet<String> = ["spec".to_owned(), "spec-2".to_owned()].into();
    assert_eq!(unique_id("spec", &mut taken), "spec-3");
    assert_eq!(unique_id("spec", &mut taken), "spec-4");
    let base = "x".repeat(56);
    let mut taken: HashSet<String> = [base.clone()].into();
    assert_eq!(unique_id(&base, &mut taken), format!("{base}-2"));
    let base = "y".repeat(64);
    let mut taken: HashSet<String> = [base.clone()].into();
    assert_eq!(unique_id(&base, &mut taken).len(), 64);
}

#[test]
fn no_proposal_cases() {
    for body in [
        "No section.\n",
        "# Citations #\n- a\n",
        "# Citations\n- a\n# Citations\n- b\n",
        "# Citations\n[1] a\n[1] b\n",
        "# Citations\n- a\n  more\n",
        "# Citations\n[1] a\n\nProse.\n\n[2] [b](https://b.test)\n",
        "# Citations\n1. [a](a.md)\n\nProse.\n\n1. see <https://b.test>\n",
        "# Citations\nProse first.\n\n1. [a](a.md)\n",
        "# Citations\n1. [a](a.md)\nProse continuing the entry.\n\n## More\n",
        "# Citations\n- same\n- same\n",
        "# Citations\n- a\u{1}b\n",
        "# Citations\n\n",
        "# Citations\n[0] zero\n",
    ] {
        assert_eq!(propose("a.md", body, DocKind::Concept), None, "{body:?}");
    }
    // Identical raw contents with distinct numbers are fine.
    round_trip("# Citations\n[1] same\n[2] same\n", DocKind::Concept);
}

#[test]
fn mig_05_ga4_style_bullets_of_bare_urls() {
    let body = "Prose.\n\n# Citations\n- https://developers.google.com/analytics/bigquery/basic-queries\n- https://support.google.com/analytics/answer/7029846\n";
    let p = round_trip(body, DocKind::Concept);
    assert_eq!(
        ids(&p),
        [
            "developers-google-com-analytics-bigquery-basic-queries",
            "support-google-com-analytics-answer-7029846"
        ]
    );
    let o = migrate_body(body, 0, "\n", DocKind::Concept, Some(&p));
    assert_eq!(
        o.body.unwrap(),
        "Prose.\n\n[^developers-google-com-analytics-bigquery-basic-queries]: https://developers.google.com/analytics/bigquery/basic-queries\n[^support-google-com-analytics-answer-7029846]: https://support.google.com/analytics/answer/7029846\n"
    );
}

// ----- the v0.1 corpus --------------------------------------------------------------------------

/// Every `.md` file under `dir`, recursively, in path order.
fn markdown_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("the corpus must be present at {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[test]
fn v01_corpus_proposals_migrate_and_replay_clean() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/knowledge-catalog/v0.1");
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(
        !files.is_empty(),
        "no corpus documents under {}",
        root.display()
    );
    let mut migrated = 0;
    for path in &files {
        let bytes = std::fs::read(path).expect("a corpus file");
        let split = crate::okf::document::split(&bytes).expect("a splittable corpus document");
        let body = split.body_text();
        let offset = split.body.start;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let kind = if name == "index.md" || name == "log.md" {
            DocKind::Reserved
        } else {
            DocKind::Concept
        };
        let has_heading = body.lines().any(|l| l.trim_end() == "# Citations");
        let probed = probe(body, offset);
        if !has_heading {
            assert_eq!(probed, SectionProbe::None, "{}", path.display());
            assert_eq!(propose("x.md", body, kind), None);
            continue;
        }
        let SectionProbe::One { start, end } = probed else {
            panic!("{}: {probed:?}", path.display());
        };
        assert!(start >= offset && end <= split.text.len() && start < end);
        assert!(split.text[start..end].starts_with("# Citations"));
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        let mut p = propose(&rel, body, kind).unwrap_or_else(|| panic!("{rel}: no proposal"));
        sort_entries(&mut p.entries);
        assert_eq!(validate_mapping(&p, 0), Ok(false), "{rel}");
        let o = migrate_body(body, offset, split.newline(), kind, Some(&p));
        assert!(o.blockers.is_empty(), "{rel}: {:#?}", o.blockers);
        let new = o.body.unwrap_or_else(|| panic!("{rel}: no rewrite"));
        // Everything before the section is unchanged (the corpus has no claim markers).
        assert_eq!(&new[..start - offset], &body[..start - offset], "{rel}");
        assert!(new[start - offset..].starts_with("[^"), "{rel}");
        assert_eq!(o.sources.len(), p.entries.len(), "{rel}");
        let r = replay_check(&new, offset, kind, Some(&p), &o.sources);
        assert!(r.is_empty(), "{rel}: {r:#?}");
        // The rewritten body is itself a target: no section, nothing to propose.
        assert_eq!(probe(&new, offset), SectionProbe::None);
        assert_eq!(propose(&rel, &new, kind), None);
        migrated += 1;
    }
    assert!(
        migrated >= 60,
        "only {migrated} corpus documents with citations"
    );
}

// ----- property: proposals passed back (MIG-36, §12.4 rule 3) -----------------------------------

mod generated {
    use super::*;
    use proptest::prelude::*;

    /// A piece of a generated document: literal bytes, or a token the transition may rewrite
    /// into footnote references (a claim marker or an inline note).
    #[derive(Debug, Clone)]
    enum Piece {
        Lit(String),
        Tok(String),
    }

    /// A generated body: prose, the section (heading and entries), kept content, what follows.
    #[derive(Debug, Clone)]
    struct Doc {
        prefix: Vec<Piece>,
        section: String,
        trailing: Vec<Piece>,
        suffix: Vec<Piece>,
        crlf: bool,
        reserved: bool,
    }

    impl Doc {
        fn nl(&self) -> &'static str {
            if self.crlf {
                "\r\n"
            } else {
                "\n"
            }
        }
        fn fix(&self, s: &str) -> String {
            if self.crlf {
                s.replace('\n', "\r\n")
            } else {
                s.to_owned()
            }
        }
        fn render(&self, pieces: &[Piece]) -> String {
            pieces
                .iter()
                .map(|p| match p {
                    Piece::Lit(s) | Piece::Tok(s) => self.fix(s),
                })
                .collect()
        }
        fn body(&self) -> String {
            format!(
                "{}{}{}{}",
                self.render(&self.prefix),
                self.fix(&self.section),
                self.render(&self.trailing),
                self.render(&self.suffix)
            )
        }
    }

    /// Literal prose that holds no rewritable token.
    const LITERALS: &[&str] = &[
        "Plain text",
        "`code [1] ^[a.md]`",
        "\\[2]",
        "![1]",
        "[1](https://x.test)",
        "[2][ref]",
        "**bold**",
        "^[unmapped note]",
        "é ü 中",
        "\n\n```\n[1] ^[a.md]\n# Citations\n```\n\n",
        "\n\n## Heading\n",
        "\n\n[^spec]: https://x.test/a\n\n",
        "\n\n[^old]: [Old](https://x.test/old)\n\n",
        "\n\n- a list item\n\n",
        "\n",
    ];

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u32..6).prop_map(|n| format!("[{n}]")),
            prop::sample::select(vec![
                "^[a.md]",
                "^[Spec]",
                "^[b.md]",
                "^[a.md, b.md]",
                "^[x]"
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn prose() -> impl Strategy<Value = Vec<Piece>> {
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(LITERALS).prop_map(|s| vec![Piece::Lit(s.to_owned())]),
                token().prop_map(|t| vec![
                    Piece::Lit(" ".into()),
                    Piece::Tok(t),
                    Piece::Lit(" ".into())
                ]),
            ],
            0..10,
        )
        .prop_map(|v| v.into_iter().flatten().collect())
    }

    /// Entry content; `{i}` is replaced by the entry's position in some variants, so that
    /// raw contents are mostly distinct.
    fn content() -> impl Strategy<Value = String> {
        let text = prop::sample::select(vec![
            "Spec",
            "spec",
            "a.md",
            "b.md",
            "Guide: part 1",
            "",
            "Ünïcode",
        ]);
        let url = prop::sample::select(vec![
            "https://x.test/a",
            "https://x.test/{i}",
            "a.md",
            "https://x.test/p_(1)?v={i}",
            "<https://x.test/a b/{i}>",
            "../b.md#L{i}",
        ]);
        prop_oneof![
            8 => (text.clone(), url.clone()).prop_map(|(t, u)| format!("[{t}]({u})")),
            1 => (text, url).prop_map(|(t, u)| format!("[{t}]({u} \"Ti\\\"tle\")")),
            2 => prop::sample::select(vec!["https://x.test/bare/{i}", "a.md", "page.md:31-33"])
                .prop_map(str::to_owned),
            1 => Just("lines {i}-60".to_owned()),
            1 => Just("<https://x.test/auto/{i}>".to_owned()),
            1 => Just("[A](https://a.test) and [B](https://b.test)".to_owned()),
        ]
    }

    /// An entry line in one of the supported forms, given its position (for numbers).
    fn entry(i: usize, form: u8, lazy: bool, c: &str) -> String {
        let n = if lazy { 1 } else { i + 1 };
        let c = c.replace("{i}", &n.to_string());
        match form {
            0 => format!("- {c}"),
            1 => format!("* [{n}] {c}"),
            2 => format!("[{n}] {c}"),
            3 => format!("{n}. {c}"),
            _ => format!("{n})\t{c}"),
        }
    }

    fn section() -> impl Strategy<Value = String> {
        prop::collection::vec(
            (
                0u8..5,
                prop::bool::weighted(0.03),
                content(),
                prop::bool::weighted(0.3),
            ),
            1..7,
        )
        .prop_map(|entries| {
            let mut s = String::from("# Citations\n\n");
            for (i, (form, lazy, c, blank)) in entries.iter().enumerate() {
                s.push_str(&entry(i, *form, *lazy, c));
                s.push('\n');
                if *blank {
                    s.push('\n');
                }
            }
            s
        })
    }

    fn trailing() -> impl Strategy<Value = Vec<Piece>> {
        prop_oneof![
            3 => Just(Vec::new()),
            1 => prose().prop_map(|mut p| {
                p.insert(0, Piece::Lit("### Notes\n\nGenerated".into()));
                p.push(Piece::Lit("\n".into()));
                p
            }),
            1 => Just(vec![Piece::Lit("```\nleft open? no\n```\n".into())]),
        ]
    }

    fn doc() -> impl Strategy<Value = Doc> {
        (
            prose(),
            section(),
            trailing(),
            prop::option::of(prose()),
            prop::bool::ANY,
            prop::bool::weighted(0.3),
        )
            .prop_map(|(mut prefix, section, trailing, suffix, crlf, reserved)| {
                prefix.push(Piece::Lit("\n\n".into()));
                let suffix = suffix
                    .map(|mut p| {
                        p.insert(0, Piece::Lit("# Next\n\n".into()));
                        p.push(Piece::Lit("\n".into()));
                        p
                    })
                    .unwrap_or_default();
                Doc {
                    prefix,
                    section,
                    trailing,
                    suffix,
                    crlf,
                    reserved,
                }
            })
    }

    /// The blockers §12.4 rule 3 allows for a proposal passed back.
    const ALLOWED: &[&str] = &[
        "ambiguous_citation_destination",
        "conflicting_footnote_definition",
        "sources_citations_conflict",
        "invalid_claim_marker",
        "heading_source_anchor",
        "multiple_citations_sections",
        "duplicate_citation_number",
        "unsupported_citation_entry",
        "unowned_citations_content",
        "opaque_citations_content",
    ];

    /// Consumes `pieces` from `new` at `pos`: literals byte for byte, tokens unchanged or as
    /// footnote references `[^…]…`.
    fn eat(doc: &Doc, pieces: &[Piece], new: &str, mut pos: usize) -> Result<usize, String> {
        for p in pieces {
            match p {
                Piece::Lit(s) => {
                    let s = doc.fix(s);
                    if !new[pos..].starts_with(&s) {
                        return Err(format!("literal {s:?} changed at {pos}: {:?}", &new[pos..]));
                    }
                    pos += s.len();
                }
                Piece::Tok(t) => {
                    if new[pos..].starts_with(t.as_str()) {
                        pos += t.len();
                        continue;
                    }
                    let mut any = false;
                    while new[pos..].starts_with("[^") {
                        let close = new[pos..].find(']').ok_or("an unclosed reference")?;
                        pos += close + 1;
                        any = true;
                    }
                    if !any {
                        return Err(format!("token {t:?} became {:?}", &new[pos..]));
                    }
                }
            }
        }
        Ok(pos)
    }

    /// The new body is the old one with the section replaced by definition lines (and one
    /// blank line when content follows), tokens rewritten, and nothing else changed.
    fn check_bytes(doc: &Doc, new: &str, kept: bool) -> Result<(), String> {
        let mut pos = eat(doc, &doc.prefix, new, 0)?;
        let nl = doc.nl();
        let mut defs = 0;
        while new[pos..].starts_with("[^") {
            let line_end = new[pos..].find('\n').map_or(new.len(), |i| pos + i + 1);
            let line = &new[pos..line_end];
            if !line.contains("]: ") || !line.ends_with(nl) {
                return Err(format!("not a definition line: {line:?}"));
            }
            pos = line_end;
            defs += 1;
        }
        let follows = kept && !doc.trailing.is_empty() || !doc.suffix.is_empty();
        if defs > 0 && follows {
            if !new[pos..].starts_with(nl) {
                return Err("no blank line after the definitions".into());
            }
            pos += nl.len();
        }
        if kept {
            pos = eat(doc, &doc.trailing, new, pos)?;
        }
        pos = eat(doc, &doc.suffix, new, pos)?;
        if pos != new.len() {
            return Err(format!("unexpected tail {:?}", &new[pos..]));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn mig_36_proposals_passed_back_migrate_and_replay(doc in doc()) {
            let body = doc.body();
            let kind = if doc.reserved { DocKind::Reserved } else { DocKind::Concept };
            let nl = doc.nl();
            // Without a mapping: a blocker, never a rewrite.
            let o = migrate_body(&body, 3, nl, kind, None);
            prop_assert!(o.has_section);
            prop_assert!(o.body.is_none());
            prop_assert!(o.blockers.iter().any(|b| b.code == "missing_explicit_citation_mapping"));
            let Some(p) = propose("d.md", &body, kind) else {
                // Only a syntax blocker or an unproposable entry prevents a proposal.
                let syntax = o.blockers.iter().any(|b| ALLOWED.contains(&b.code));
                // The raw contents: after the marker (and a `[N]`) and its whitespace.
                let raws: Vec<&str> = doc
                    .section
                    .lines()
                    .skip(1)
                    .filter(|l| !l.is_empty())
                    .map(|l| {
                        let (marker, rest) = l.split_once([' ', '\t']).unwrap_or((l, ""));
                        match rest.split_once(' ') {
                            Some((n, raw)) if marker == "*" && n.starts_with('[') => raw,
                            _ => rest,
                        }
                    })
                    .collect();
                let dup = raws.iter().enumerate().any(|(i, a)| raws[..i].contains(a));
                prop_assert!(syntax || dup, "no proposal for {body:?}: {:#?}", o.blockers);
                return Ok(());
            };
            let mut sorted = p.clone();
            sort_entries(&mut sorted.entries);
            prop_assert_eq!(validate_mapping(&sorted, 0), Ok(false));
            let o = migrate_body(&body, 3, nl, kind, Some(&sorted));
            for b in &o.blockers {
                prop_assert!(ALLOWED.contains(&b.code), "{body:?}\n{p:#?}\n{:#?}", o.blockers);
                prop_assert!(b.start >= 3 && b.end <= body.len() + 3 && b.start <= b.end);
            }
            if !o.blockers.is_empty() {
                return Ok(());
            }
            let new = o.body.clone().expect("a rewrite without blockers");
            let kept = sorted.trailing_content == TrailingContent::Keep;
            prop_assert_eq!(kept, o.notices.iter().any(|n| n.code == "citations_trailing_content_kept"));
            if let Err(e) = check_bytes(&doc, &new, kept) {
                prop_assert!(false, "{e}\nold: {body:?}\nnew: {new:?}");
            }
            let r = replay_check(&new, 3, kind, Some(&sorted), &o.sources);
            prop_assert!(r.is_empty(), "{new:?}\n{r:#?}");
            if kind == DocKind::Reserved {
                prop_assert!(o.sources.is_empty());
            } else {
                let labels: HashSet<String> = sorted.entries.iter().map(|e| markdown::normalise_label(&e.source_id)).collect();
                prop_assert_eq!(o.sources.len(), labels.len());
            }
        }

        /// No input panics, and every span lies on char boundaries of the document.
        #[test]
        fn arbitrary_bodies_never_panic(
            body in "(\\PC|[\\[\\]^`~#<>!()\\\\:. \t\r\n0-9-]|# Citations\n|\\[1\\] |1\\. |- |\\^\\[a\\]){0,120}",
            keep in prop::bool::ANY,
        ) {
            let _ = probe(&body, 0);
            let kind = DocKind::Concept;
            if let Some(p) = propose("d.md", &body, kind) {
                let p = CitationMapping { trailing_content: if keep { TrailingContent::Keep } else { p.trailing_content }, ..p };
                let o = migrate_body(&body, 0, "\n", kind, Some(&p));
                for b in &o.blockers {
                    prop_assert!(body.is_char_boundary(b.start) && body.is_char_boundary(b.end));
                }
                if let Some(new) = &o.body {
                    prop_assert!(replay_check(new, 0, kind, Some(&p), &o.sources).is_empty(), "{body:?} -> {new:?}");
                }
            }
            let m = item(vec![num(1, "a"), with_note(ent("x", "b"), "a")]);
            let o = migrate_body(&body, 0, "\n", kind, Some(&m));
            for b in &o.blockers {
                prop_assert!(body.is_char_boundary(b.start) && body.is_char_boundary(b.end));
            }
            for b in replay_check(&body, 0, DocKind::Reserved, Some(&m), &[]) {
                prop_assert!(body.is_char_boundary(b.start) && body.is_char_boundary(b.end));
            }
        }
    }
}

// ----- generator leftovers inside a citations section (§12.8) --------------------------------

/// The §12.8 example: a document's whole section, behind a body with the entry's inline note.
const MIG_45_EXAMPLE: &str = "Intro ^[guide.md].\n\n# Citations\n\n1. [guide.md](/references/guide-1a2b.md)\n2. guide.md>\n\nEvery step refers to the guide\n3. for the details. ^[guide.md\n\n## Lifecycle\n\n1. **Build**: create the agent\n4. evaluate it\n";

#[test]
fn mig_45_the_owned_run_is_the_run_after_the_heading_and_the_rest_is_kept() {
    let body = MIG_45_EXAMPLE;
    // With the defaults the later lines block, as the reference's rules say.
    let p = propose("a.md", body, DocKind::Concept).expect("a proposal");
    let block = CitationMapping {
        trailing_content: TrailingContent::Block,
        ..p.clone()
    };
    assert!(
        codes(&run(body, DocKind::Concept, Some(&block))).contains(&"unowned_citations_content")
    );
    // The proposal maps the two owned lines, the bare path with its raw content, under keep.
    assert_eq!(p.trailing_content, TrailingContent::Keep);
    assert_eq!(p.claim_markers, ClaimMarkers::Rewrite);
    assert_eq!(
        p.entries
            .iter()
            .map(|e| (
                e.legacy_number,
                e.source_id.as_str(),
                e.resource.as_deref(),
                e.inline_note.as_deref(),
                e.needs_review
            ))
            .collect::<Vec<_>>(),
        [
            (Some(1), "guide", None, Some("guide.md"), false),
            (Some(2), "guide-md", Some("guide.md>"), None, true),
        ]
    );
    let o = run(body, DocKind::Concept, Some(&p));
    assert!(o.blockers.is_empty(), "{:#?}", o.blockers);
    // No later line raises any of the four codes; one WARN says content was kept.
    assert_eq!(
        o.notices.iter().map(|n| n.code).collect::<Vec<_>>(),
        ["citations_trailing_content_kept"]
    );
    // The proposal passes its own static validation and replay (the §12.4 rule 3 round trip).
    assert_eq!(round_trip(body, DocKind::Concept), p);
    let new = o.body.expect("a rewrite");
    // The heading and the two owned lines became the definitions; every line from "Every
    // step" to "4. evaluate it" is byte-identical (`^[guide.md`, never closed, is passive).
    assert_eq!(
        new,
        "Intro [^guide].\n\n[^guide]: [guide.md](/references/guide-1a2b.md)\n[^guide-md]: guide.md>\n\nEvery step refers to the guide\n3. for the details. ^[guide.md\n\n## Lifecycle\n\n1. **Build**: create the agent\n4. evaluate it\n"
    );
    let tail = &body[body.find("Every step").expect("tail")..];
    assert!(new.ends_with(tail));
    assert!(replay_check(&new, 0, DocKind::Concept, Some(&p), &o.sources).is_empty());
}

#[test]
fn mig_45_markers_and_mapped_notes_in_kept_content_are_rewritten() {
    let body = "Claim [1].\n\n# Citations\n\n1. [A](https://a.test)\n2. [b.md](/refs/b.md)\n\nSee also [1] and ^[b.md] here.\n3. more text [2]\n1. again\n\n### Steps\n\n2. **Run**: ^[b.md, nothing.md]\n";
    let p = round_trip(body, DocKind::Concept);
    assert_eq!(p.trailing_content, TrailingContent::Keep);
    assert_eq!(ids(&p), ["a", "b"]);
    assert!(p.entries.iter().all(|e| !e.needs_review));
    let (new, sources) = ok(body, &p);
    assert_eq!(sources.len(), 2);
    assert_eq!(
        new,
        "Claim [^a].\n\n[^a]: [A](https://a.test)\n[^b]: [b.md](/refs/b.md)\n\nSee also [^a] and [^b] here.\n3. more text [^b]\n1. again\n\n### Steps\n\n2. **Run**: ^[b.md, nothing.md]\n"
    );
}

#[test]
fn mig_45_repeated_numbers_sub_headings_and_unsupported_lines_after_the_run_raise_nothing() {
    let body = "# Citations\n\n1. [a](a.md)\n2. [b](b.md)\n\nThen:\n1. first\n1. first again\n01. zero-led\n   - indented\n\n## Sub\n\n2. second\n";
    let keep = CitationMapping {
        trailing_content: TrailingContent::Keep,
        ..item(vec![num(1, "a"), num(2, "b")])
    };
    let o = run(body, DocKind::Concept, Some(&keep));
    assert!(o.blockers.is_empty(), "{:#?}", o.blockers);
    let (new, _) = ok(body, &keep);
    assert!(new.ends_with(
        "\n\nThen:\n1. first\n1. first again\n01. zero-led\n   - indented\n\n## Sub\n\n2. second\n"
    ));
    // A mapping entry that selects a kept line selects no owned entry.
    for extra in [num(3, "c"), ent("first", "c"), ent("second", "c")] {
        let m = CitationMapping {
            trailing_content: TrailingContent::Keep,
            ..item(vec![num(1, "a"), num(2, "b"), extra])
        };
        assert_eq!(
            codes(&run(body, DocKind::Concept, Some(&m))),
            ["incomplete_citation_mapping"]
        );
    }
    // The proposal suggests keep and maps only the owned run.
    let p = round_trip(body, DocKind::Concept);
    assert_eq!(p.trailing_content, TrailingContent::Keep);
    assert_eq!(p.entries.len(), 2);
}

#[test]
fn mig_45_bare_path_entries_are_ordinary_entries() {
    for (line, resource, review) in [
        ("2. page.md>", Some("page.md>"), true),
        ("2. page.md", None, false),
        ("2. docs/page.html", None, false),
    ] {
        let body = format!("# Citations\n\n1. [a](https://a.test/x)\n{line}\n");
        let p = round_trip(&body, DocKind::Concept);
        let e = &p.entries[1];
        assert_eq!(e.legacy_number, Some(2), "{line}");
        assert_eq!(e.resource.as_deref(), resource, "{line}");
        assert_eq!(e.needs_review, review, "{line}");
        assert_eq!(p.trailing_content, TrailingContent::Block, "{line}");
    }
}

#[test]
fn mig_45_needs_review_marks_resources_that_came_from_prose() {
    let body = "# Citations\n\n1. **Continuous mode**: Runs the pipeline continuously\n2. [x](https://x.test)\n3. [Doc](#anchor)\n4. [Guide](../guide)\n5. [Spec](spec.md#part)\n6. <https://auto.test/p>\n";
    let p = round_trip(body, DocKind::Concept);
    assert_eq!(
        p.entries.iter().map(|e| e.needs_review).collect::<Vec<_>>(),
        [true, false, true, true, false, false]
    );
    assert_eq!(
        p.entries[0].resource.as_deref(),
        Some("**Continuous mode**: Runs the pipeline continuously")
    );
    // needs_review is output only: the §7.1 encoding ignores it.
    let mut cleared = p.clone();
    for e in &mut cleared.entries {
        e.needs_review = false;
    }
    assert_eq!(
        super::super::identity::proposals_digest(std::slice::from_ref(&p)),
        super::super::identity::proposals_digest(std::slice::from_ref(&cleared))
    );
    for (r, like) in [
        ("https://a.test", true),
        ("git+ssh://host/repo", true),
        ("s3://bucket/key with space", true),
        ("://nothing", false),
        ("1http://x", false),
        ("https://", false),
        ("/references/page-1a2b.md", true),
        ("page.md", true),
        ("a/b.c/readme", false),
        ("page.md>", false),
        ("my page.md", false),
        ("[x].md", false),
        ("", false),
        ("Spec", false),
    ] {
        assert_eq!(resource_like(r), like, "{r:?}");
    }
}
