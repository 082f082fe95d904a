//! Unit tests of the citations transition (spec/migration.md §3.3, §6.2–§6.4, §6.7, §12),
//! named after the scenario ids of spec/scenarios.md §15 where one applies.

use super::*;

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
fn ok(body: &str, m: &CitationMapping) -> (String, Vec<Source>) {
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
        vec![Source {
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
