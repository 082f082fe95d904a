//! Unit tests of the `# Computation` section (spec/concept-patch.md §3.7; OPS-10..12).

use super::*;

fn inline(code: &str, language: Option<&str>) -> ComputationBody {
    ComputationBody::Inline {
        code: code.into(),
        language: language.map(Into::into),
    }
}

fn file(path: &str) -> ComputationBody {
    ComputationBody::File { path: path.into() }
}

/// Applies the edit (or keeps the body) and checks bytes outside the edited range.
fn edited(body: &str, crlf: bool, d: &ComputationBody) -> String {
    match body_edit(body, crlf, d).expect("edit") {
        None => body.to_owned(),
        Some(e) => {
            let out = e.apply(body);
            assert_eq!(&out[..e.range.start], &body[..e.range.start]);
            assert_eq!(
                &out[out.len() - (body.len() - e.range.end)..],
                &body[e.range.end..]
            );
            out
        }
    }
}

#[test]
fn ops_10_inline_appends_section_at_the_end() {
    let d = inline("print(1)\n", Some("python"));
    let tail = "# Computation\n\n```python\nprint(1)\n```\n";
    assert_eq!(edited("Intro.\n", false, &d), format!("Intro.\n\n{tail}"));
    assert_eq!(edited("Intro.", false, &d), format!("Intro.\n\n{tail}"));
    assert_eq!(edited("Intro.\n\n", false, &d), format!("Intro.\n\n{tail}"));
    assert_eq!(edited("", false, &d), tail);
    // A rerun is a no-op.
    let once = edited("Intro.\n", false, &d);
    assert_eq!(body_edit(&once, false, &d), Ok(None));
    assert_eq!(post_check(&once, None, &d), Ok(()));
}

#[test]
fn ops_10_inline_fills_an_empty_section() {
    let d = inline("x = 1", None);
    assert_eq!(
        edited("# Computation\n\n\n# Next\n", false, &d),
        "# Computation\n\n```\nx = 1\n```\n\n\n# Next\n"
    );
    assert_eq!(
        edited("Intro.\n# Computation", false, &d),
        "Intro.\n# Computation\n\n```\nx = 1\n```\n"
    );
}

#[test]
fn ops_10_inline_replaces_a_direct_fence_and_keeps_prose_after_it() {
    let body = "Intro.\n\n# Computation\n\n```py\nold()\n```\n\nExplanation.\n\n# Notes\nn\n";
    let d = inline("new()\n", Some("python"));
    let out = edited(body, false, &d);
    assert_eq!(
        out,
        "Intro.\n\n# Computation\n\n```python\nnew()\n```\n\nExplanation.\n\n# Notes\nn\n"
    );
    assert_eq!(body_edit(&out, false, &d), Ok(None));
    // A closing fence without a final line break keeps that shape.
    let out = edited("# Computation\n~~~\nold\n~~~", false, &d);
    assert_eq!(out, "# Computation\n```python\nnew()\n```");
    assert_eq!(post_check(&out, None, &d), Ok(()));
}

#[test]
fn ops_10_fence_length_and_delimiter() {
    let out = edited("", false, &inline("a\n```\nb\n", Some("md")));
    assert!(out.contains("\n````md\na\n```\nb\n````\n"), "{out}");
    let out = edited("", false, &inline("`````", None));
    assert!(out.ends_with("``````\n`````\n``````\n"), "{out}");
    let out = edited("", false, &inline("x ~~~ y\n", Some("we`ird")));
    assert!(out.ends_with("~~~~we`ird\nx ~~~ y\n~~~~\n"), "{out}");
    // Empty content: no content line.
    let out = edited("", false, &inline("", None));
    assert!(out.ends_with("\n```\n```\n"), "{out}");
    for d in [
        inline("a\n```\nb\n", Some("md")),
        inline("`````", None),
        inline("x ~~~ y\n", Some("we`ird")),
        inline("", None),
    ] {
        let out = edited("", false, &d);
        assert_eq!(post_check(&out, None, &d), Ok(()), "{out}");
        assert_eq!(body_edit(&out, false, &d), Ok(None));
    }
}

#[test]
fn ops_10_crlf_documents_get_crlf_lines_and_verbatim_content() {
    let d = inline("a\nb", Some("sh"));
    let out = edited("Intro.\r\n", true, &d);
    assert_eq!(
        out,
        "Intro.\r\n\r\n# Computation\r\n\r\n```sh\r\na\nb\r\n```\r\n"
    );
    assert_eq!(post_check(&out, None, &d), Ok(()));
    assert_eq!(body_edit(&out, true, &d), Ok(None));
    let d = inline("x\r\n", None);
    let out = edited("# Computation\r\n\r\n```\r\nold\r\n```\r\n", true, &d);
    assert_eq!(out, "# Computation\r\n\r\n```\r\nx\r\n```\r\n");
}

#[test]
fn headings_inside_fences_or_indented_are_not_sections() {
    assert_eq!(classify("```\n# Computation\n```\n"), Ok(Section::Absent));
    assert_eq!(classify("    # Computation\n"), Ok(Section::Absent));
    assert_eq!(classify("## Computation\n"), Ok(Section::Absent));
    assert_eq!(classify("#Computation\n"), Ok(Section::Absent));
    assert_eq!(classify("# Computations\n"), Ok(Section::Absent));
    assert!(matches!(
        classify("# Computation ##\n\n"),
        Ok(Section::Empty { .. })
    ));
    assert!(matches!(
        classify("   # Computation\n"),
        Ok(Section::Empty { .. })
    ));
    // A level-2 heading inside the section is content.
    assert!(matches!(
        classify("# Computation\n## Sub\n"),
        Ok(Section::ProseOnly { .. })
    ));
    // The section ends at the next level-1 heading: a fence after it is not in the section.
    assert!(matches!(
        classify("# Computation\n\n# Other\n```\nx\n```\n"),
        Ok(Section::Empty { .. })
    ));
    let Ok(Section::Direct { fence, .. }) = classify("# Computation\n```py  \nbody\n```\n") else {
        panic!("direct")
    };
    assert_eq!(fence.info, "py");
}

#[test]
fn ops_12_ambiguous_and_unclosed_sections() {
    let d = inline("x", None);
    for body in [
        "# Computation\n```\na\n```\n# Computation\n```\nb\n```\n",
        "# Computation\n\nProse first.\n\n```\na\n```\n",
        "# Computation\n```\na\n```\n\n```\nb\n```\n",
        "# Computation\n```\na\n```\n\n    indented code\n",
        "# Computation\n\n    indented code\n",
    ] {
        assert_eq!(classify(body), Err(SectionError::Ambiguous), "{body}");
        assert_eq!(body_edit(body, false, &d), Err(SectionError::Ambiguous));
        assert_eq!(
            body_edit(body, false, &file("c.py")),
            Err(SectionError::Ambiguous)
        );
    }
    assert_eq!(
        SectionError::Ambiguous.to_string(),
        "use one fenced code block under # Computation"
    );
    for body in [
        "# Computation\n```\nnever closed\n",
        "# Computation\n\n````\n```\n",
    ] {
        assert_eq!(classify(body), Err(SectionError::Unclosed), "{body}");
        assert_eq!(
            body_edit(body, false, &file("c.py")),
            Err(SectionError::Unclosed)
        );
    }
    assert_eq!(SectionError::Unclosed.code(), "unclosed_computation_fence");
    assert_eq!(
        SectionError::Ambiguous.code(),
        "ambiguous_computation_section"
    );
    // A paragraph continuation indented by four spaces is prose, not code.
    let body = "# Computation\n```\na\n```\n\nProse\n    continued.\n";
    assert!(matches!(classify(body), Ok(Section::Direct { .. })));
    // Prose-only section: inline cannot place the fence, file mode leaves it alone.
    let prose = "# Computation\n\nThis computes X.\n";
    assert_eq!(body_edit(prose, false, &d), Err(SectionError::Ambiguous));
    assert_eq!(body_edit(prose, false, &file("c.py")), Ok(None));
}

#[test]
fn ops_11_file_mode_removes_the_fence_and_an_emptied_heading() {
    let d = file("compute.py");
    // Prose after the fence stays, and so does the heading.
    assert_eq!(
        edited("# Computation\n\n```\nx\n```\n\nNote.\n", false, &d),
        "# Computation\n\nNote.\n"
    );
    // Only blank lines remain: the heading goes too (blank lines before the fence stay).
    assert_eq!(
        edited("Intro.\n\n# Computation\n\n```py\nx\n```\n", false, &d),
        "Intro.\n\n\n"
    );
    assert_eq!(
        edited(
            "Intro.\n# Computation\n```\nx\n```\n\n# Next\nn\n",
            false,
            &d
        ),
        "Intro.\n# Next\nn\n"
    );
    // Only one following blank line is removed.
    assert_eq!(
        edited("# Computation\n```\nx\n```\n\n\nNote.\n", false, &d),
        "# Computation\n\nNote.\n"
    );
    // CRLF.
    assert_eq!(
        edited(
            "A\r\n# Computation\r\n```\r\nx\r\n```\r\n\r\nB\r\n",
            true,
            &d
        ),
        "A\r\n# Computation\r\nB\r\n"
    );
    // Nothing to remove.
    assert_eq!(body_edit("Intro.\n", false, &d), Ok(None));
    assert_eq!(body_edit("# Computation\n\n", false, &d), Ok(None));
    let out = edited("# Computation\n```\nx\n```\n", false, &d);
    assert_eq!(post_check(&out, Some("compute.py"), &d), Ok(()));
}

#[test]
fn post_check_reports_mode_and_semantic_mismatches() {
    let d = inline("a", Some("py"));
    let body = "# Computation\n```py\na\n```\n";
    assert_eq!(post_check(body, None, &d), Ok(()));
    assert_eq!(
        post_check(body, Some("x.py"), &d),
        Err(PostCheckError::ModeMismatch)
    );
    assert_eq!(
        post_check("Intro.\n", None, &d),
        Err(PostCheckError::ModeMismatch)
    );
    assert_eq!(
        post_check("# Computation\n```rb\na\n```\n", None, &d),
        Err(PostCheckError::SemanticMismatch)
    );
    assert_eq!(
        post_check("# Computation\n```py\nb\n```\n", None, &d),
        Err(PostCheckError::SemanticMismatch)
    );
    // Content that already ends with a line break must match exactly.
    assert_eq!(
        post_check(
            "# Computation\n```py\na\n\n```\n",
            None,
            &inline("a\n", Some("py"))
        ),
        Err(PostCheckError::SemanticMismatch)
    );
    let f = file("c.py");
    assert_eq!(post_check("Intro.\n", Some("c.py"), &f), Ok(()));
    assert_eq!(
        post_check("Intro.\n", None, &f),
        Err(PostCheckError::ModeMismatch)
    );
    assert_eq!(
        post_check("Intro.\n", Some("d.py"), &f),
        Err(PostCheckError::SemanticMismatch)
    );
    assert_eq!(
        post_check(body, Some("c.py"), &f),
        Err(PostCheckError::ModeMismatch)
    );
    assert_eq!(
        PostCheckError::ModeMismatch.code(),
        "computation_mode_mismatch"
    );
    assert_eq!(
        PostCheckError::SemanticMismatch.code(),
        "computation_semantic_mismatch"
    );
}

const ALPHABET: &[&str] = &[
    "# Computation",
    "# Other",
    "## Sub",
    "```",
    "```py",
    "~~~",
    "text",
    "",
    "   ",
    "    indented",
    "# Computation #",
];

proptest::proptest! {
    /// On any body, an edit either fails closed or yields a body that passes the post-check
    /// and is a fixed point (idempotence, spec/concept-patch.md §3 rule 4).
    #[test]
    fn edits_pass_the_post_check_and_are_idempotent(
        picks in proptest::collection::vec(0..ALPHABET.len(), 0..12),
        crlf in proptest::bool::ANY,
        final_break in proptest::bool::ANY,
        code in "[a-z`~\n\r]{0,12}",
        lang_tick in proptest::bool::ANY,
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut body = picks.iter().map(|&i| ALPHABET[i]).collect::<Vec<_>>().join(nl);
        if final_break && !body.is_empty() {
            body.push_str(nl);
        }
        let language = if lang_tick { Some("a`b".to_owned()) } else { Some("py".to_owned()) };
        let desired = [
            ComputationBody::Inline { code: code.clone(), language },
            ComputationBody::File { path: "c.py".into() },
        ];
        for d in &desired {
            let Ok(edit) = body_edit(&body, crlf, d) else { continue };
            let out = edit.map_or_else(|| body.clone(), |e| e.apply(&body));
            let key = match d { ComputationBody::File { path } => Some(path.as_str()), _ => None };
            proptest::prop_assert_eq!(post_check(&out, key, d), Ok(()), "{:?}", out);
            proptest::prop_assert_eq!(body_edit(&out, crlf, d), Ok(None), "{:?}", out);
        }
    }
}

#[test]
fn inline_append_refuses_a_body_with_an_unclosed_fence() {
    let d = inline("x", None);
    assert_eq!(
        body_edit("Intro.\n```\n", false, &d),
        Err(SectionError::Unclosed)
    );
    assert_eq!(body_edit("Intro.\n```\n", false, &file("c.py")), Ok(None));
}
