//! Text content for hosts that show only `content` (spec/surface.md §18.2, scenario AUT-04),
//! over the real server (`okf-mcp serve`) and the CLI (`okf-mcp call`): the first text item
//! of every result is the compact JSON of `structuredContent`; `read_concept` keeps its file
//! bytes second; errors add their readable lines; previews add one line per operation or
//! document and the plain diff.
#![allow(clippy::disallowed_methods)] // the AUT-05 tests write their own temp bundles

use crate::support::patch::patch_args;
use crate::support::util::{call, copy_bundle, fixture, identity, Mcp};
use serde_json::{json, Value};
use std::path::Path;

/// The text items of a CallToolResult, checking each is `{"type":"text","text":…}`.
fn texts(r: &Value) -> Vec<String> {
    r["content"]
        .as_array()
        .expect("content array")
        .iter()
        .map(|c| {
            assert_eq!(c["type"], "text", "{c}");
            c["text"].as_str().expect("text").to_owned()
        })
        .collect()
}

/// spec/surface.md §18.2 rule 1: the first item is exactly the compact serialisation.
fn assert_first_is_structured(r: &Value) {
    let t = texts(r);
    let parsed: Value = serde_json::from_str(&t[0]).expect("first text item is JSON");
    assert_eq!(parsed, r["structuredContent"], "first text item");
    assert_eq!(
        t[0],
        serde_json::to_string(&r["structuredContent"]).expect("encode"),
        "compact, members in order"
    );
}

/// spec/surface.md §18.2 rule 2: an error's second item is the message, one
/// `<field or file>: <message>` line per diagnostic, then the recovery step.
fn assert_error_text(r: &Value) {
    assert_eq!(r["isError"], true, "{r}");
    let t = texts(r);
    assert_eq!(t.len(), 2, "an error has two text items: {r}");
    let env = &r["structuredContent"];
    let lines: Vec<&str> = t[1].lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "{} ({})",
            env["message"].as_str().expect("message"),
            env["code"].as_str().expect("code")
        )
    );
    let diags = env["diagnostics"].as_array().expect("diagnostics");
    let mut at = 1;
    let (steps, others): (Vec<&Value>, Vec<&Value>) =
        diags.iter().partition(|d| d["code"] == "recovery_step");
    for d in others {
        let subject = [&d["field"], &d["file"], &d["code"]]
            .into_iter()
            .filter_map(Value::as_str)
            .find(|s| !s.is_empty())
            .expect("a subject");
        assert_eq!(
            lines[at],
            format!("{subject}: {}", d["message"].as_str().expect("m")),
            "{}",
            t[1]
        );
        at += 1;
    }
    for d in steps {
        assert_eq!(
            lines[at],
            format!("next step: {}", d["message"].as_str().expect("m"))
        );
        at += 1;
    }
}

fn bp(b: &Path) -> &str {
    b.to_str().expect("utf-8")
}

#[test]
fn aut_04_every_result_starts_with_its_structured_content_over_mcp_and_cli() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    let (_u, d) = copy_bundle(&fixture("temporal-date"));
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue", "lifecycle": {"status": "deprecated"}}]);
    let preview = patch_args(&b, &ops);
    let calls: Vec<(&str, Value)> = vec![
        ("list_concepts", json!({"bundle_path": bp(&b)})),
        ("validate_bundle", json!({"bundle_path": bp(&b)})),
        (
            "read_concept",
            json!({"bundle_path": bp(&b), "concept_id": "metrics/revenue"}),
        ),
        ("preview_concept_patch", preview.clone()),
        (
            "preview_v02_migration",
            crate::support::migration::args(&b, json!({})),
        ),
        (
            "preview_temporal_upgrade",
            crate::support::temporal::targs(&d, None),
        ),
        // Errors: schema guidance, a missing concept, a bad bundle_path, an unknown tool key.
        ("list_concepts", json!({})),
        (
            "read_concept",
            json!({"bundle_path": bp(&b), "concept_id": "no/such"}),
        ),
        ("validate_bundle", json!({"bundle_path": "relative/x"})),
        ("list_concepts", json!({"bundle_path": bp(&b), "bundle": 1})),
        (
            "apply_concept_patch",
            json!({"bundle_path": bp(&b), "actor": "agent:x", "operations": []}),
        ),
    ];
    let mut mcp = Mcp::start();
    let mut errors = 0;
    for (i, (tool, args)) in calls.iter().enumerate() {
        let r = mcp.call(tool, args);
        assert_first_is_structured(&r);
        assert_eq!(r["isError"] == true, i >= 6, "{tool}: {r}");
        if r["isError"] == true {
            errors += 1;
            assert_error_text(&r);
        } else if *tool == "list_concepts" || *tool == "validate_bundle" {
            assert_eq!(texts(&r).len(), 1, "{tool}: only the JSON item");
        }
        // The CLI prints the same CallToolResult (spec/surface.md §18.2 rule 3).
        let cli = call(tool, args);
        assert_eq!(
            identity(cli.result.as_ref().expect("one JSON line")),
            identity(&r),
            "{tool}"
        );
    }
    assert_eq!(errors, 5, "the error cases above are errors");
}

#[test]
fn aut_04_read_concept_keeps_the_file_bytes_as_second_item() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    let out = call(
        "read_concept",
        &json!({"bundle_path": bp(&b), "concept_id": "metrics/revenue"}),
    );
    let r = out.result.expect("result");
    assert_first_is_structured(&r);
    let t = texts(&r);
    assert_eq!(t.len(), 2);
    let bytes = std::fs::read_to_string(b.join("metrics/revenue.md")).expect("read");
    assert_eq!(t[1], bytes);
}

#[test]
fn aut_04_a_concept_patch_preview_lists_each_operation_and_the_plain_diff() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    // Operation 0 changes the document; operation 1 asks for what operation 0 already did.
    let lifecycle = json!({"kind": "set_lifecycle", "concept_id": "metrics/revenue", "lifecycle": {"status": "deprecated"}});
    let out = call(
        "preview_concept_patch",
        &patch_args(&b, &json!([lifecycle.clone(), lifecycle])),
    );
    let r = out.result.expect("result");
    assert_first_is_structured(&r);
    let s = &r["structuredContent"];
    assert_eq!(s["status"], "applicable", "{s}");
    let t = texts(&r);
    assert_eq!(t.len(), 2);
    let diff = s["diff"].as_str().expect("diff");
    assert!(diff.starts_with("--- a/metrics/revenue.md"), "{diff}");
    assert_eq!(
        t[1],
        format!(
            "status: applicable\noperations[0] set_lifecycle metrics/revenue: changed\noperations[1] set_lifecycle metrics/revenue: no change\ndiff:\n{diff}"
        )
    );
    // The diff is plain text: real line breaks, no JSON escapes.
    assert!(t[1].contains("\n+status: deprecated\n"), "{}", t[1]);

    // A rejected operation names its code; the one after it did not run.
    let missing = json!({"kind": "set_lifecycle", "concept_id": "no/such", "lifecycle": {"status": "deprecated"}});
    let ok = json!({"kind": "set_lifecycle", "concept_id": "metrics/revenue", "lifecycle": {"status": "deprecated"}});
    let out = call(
        "preview_concept_patch",
        &patch_args(&b, &json!([missing, ok])),
    );
    let r = out.result.expect("result");
    assert_eq!(r["structuredContent"]["status"], "rejected");
    let t = texts(&r);
    let lines: Vec<&str> = t[1].lines().collect();
    assert_eq!(lines[0], "status: rejected");
    assert_eq!(
        lines[1],
        "operations[0] set_lifecycle no/such: rejected: missing_concept"
    );
    assert!(lines[2].starts_with("operations[1] set_lifecycle metrics/revenue: not run"));
    assert!(
        lines.contains(&"error no/such.md: the concept does not exist: list_concepts lists the concept ids of this bundle"),
        "{}",
        t[1]
    );
    assert_eq!(lines.last(), Some(&"diff: none"));
}

#[test]
fn aut_04_migration_and_temporal_previews_list_their_documents() {
    let (_t, b) = copy_bundle(&fixture("patch-v01"));
    let out = call(
        "preview_v02_migration",
        &crate::support::migration::args(&b, json!({})),
    );
    let r = out.result.expect("result");
    assert_first_is_structured(&r);
    let s = &r["structuredContent"];
    let t = texts(&r);
    assert_eq!(t.len(), 2);
    let lines: Vec<&str> = t[1].lines().collect();
    assert_eq!(
        lines[0],
        format!("status: {}", s["status"].as_str().expect("s"))
    );
    for p in s["affected_paths"].as_array().expect("paths") {
        let line = format!("{}: changed", p.as_str().expect("p"));
        assert!(lines.contains(&line.as_str()), "{line} in {}", t[1]);
    }
    for bl in s["blockers"].as_array().expect("blockers") {
        let line = format!(
            "{}: rejected: {}",
            bl["path"].as_str().expect("p"),
            bl["code"].as_str().expect("c")
        );
        assert!(lines.contains(&line.as_str()), "{line} in {}", t[1]);
    }
    assert!(
        !s["affected_paths"].as_array().expect("a").is_empty()
            || !s["blockers"].as_array().expect("b").is_empty(),
        "the v0.1 fixture has something to say: {s}"
    );
    let diff = s["diff"].as_str().expect("diff");
    if !diff.is_empty() {
        assert!(t[1].contains(&format!("diff:\n{diff}")), "plain diff");
    }

    let (_u, d) = copy_bundle(&fixture("temporal-date"));
    let out = call(
        "preview_temporal_upgrade",
        &crate::support::temporal::targs(&d, None),
    );
    let r = out.result.expect("result");
    assert_first_is_structured(&r);
    let s = &r["structuredContent"];
    let t = texts(&r);
    assert_eq!(t.len(), 2);
    let lines: Vec<&str> = t[1].lines().collect();
    assert_eq!(
        lines[0],
        format!("status: {}", s["status"].as_str().expect("s"))
    );
    let unresolved = s["unresolved"].as_array().expect("unresolved");
    for u in unresolved {
        let line = format!(
            "{} {}: rejected: unresolved (value {})",
            u["concept"].as_str().expect("c"),
            u["path"].as_str().expect("p"),
            u["from"].as_str().expect("f")
        );
        assert!(lines.contains(&line.as_str()), "{line} in {}", t[1]);
    }
    assert_eq!(lines.len(), 2 + unresolved.len(), "{}", t[1]);
}

/// A temp bundle of the given files.
fn bundle(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().expect("tmp");
    let b = t.path().join("bundle");
    for (p, text) in files {
        let f = b.join(p);
        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
        std::fs::write(f, text).expect("write");
    }
    (t, b)
}

fn messages_of(s: &Value, code: &str) -> Vec<String> {
    s["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == code)
        .map(|d| d["message"].as_str().expect("m").to_owned())
        .collect()
}

#[test]
fn aut_05_yaml_errors_give_line_and_column() {
    let (_t, b) = bundle(&[
        ("index.md", "---\nokf_version: \"0.2\"\n---\n# Index\n"),
        ("a.md", "---\ntype: Note\ntitle: A\n  bad: x\n---\n# A\n"),
        ("d.md", "---\ntype: Note\ntitle: D\ntitle: E\n---\n# D\n"),
    ]);
    let v = call("validate_bundle", &json!({"bundle_path": bp(&b)}));
    let s = v.structured();
    let m = messages_of(s, "invalid_frontmatter");
    // Lines count in the whole file: the frontmatter starts on line 2.
    assert_eq!(
        m,
        [
            "the frontmatter is not one YAML mapping with unique keys (line 4, column 6)",
            "the frontmatter is not one YAML mapping with unique keys (line 4, column 1)",
        ],
        "{s}"
    );
    let r = call(
        "read_concept",
        &json!({"bundle_path": bp(&b), "concept_id": "d"}),
    );
    assert_eq!(r.structured()["code"], "operation_rejected");
    assert!(
        r.second_text().contains(
            "d.md: the frontmatter is not one YAML mapping with unique keys (line 4, column 1)"
        ),
        "{}",
        r.second_text()
    );
    // write_concept counts in its `frontmatter` argument.
    let w = call(
        "write_concept",
        &json!({"bundle_path": bp(&b), "concept_id": "n", "frontmatter": "type: t\n  bad: x\n",
            "body": "# N\n"}),
    );
    assert_eq!(
        w.structured()["message"],
        "frontmatter is not one valid YAML mapping (line 2, column 6)",
        "{}",
        w.stdout
    );
}

#[test]
fn aut_05_validator_messages_name_the_footnote_key_or_link_at_fault() {
    let (_t, b) = bundle(&[
        ("index.md", "---\nokf_version: \"0.2\"\nowner: team\n---\n# Index\n\n* [A](a.md)\n"),
        (
            "a.md",
            "---\ntype: Note\ntitle: A\nsources:\n  - id: known\n    resource: https://example.test/\n---\n# A\n\nSee [^known] and [^ghost].\n\n[B](missing/b.md) and [C](../outside.md)\n",
        ),
    ]);
    let v = call(
        "validate_bundle",
        &json!({"bundle_path": bp(&b), "check_links": true}),
    );
    let s = v.structured();
    assert_eq!(
        messages_of(s, "unresolved_attribution"),
        ["footnote [^ghost] matches no sources id; add a source with that id or fix the label"],
        "{s}"
    );
    assert_eq!(
        messages_of(s, "reserved_frontmatter"),
        ["the root index frontmatter holds keys other than okf_version: owner; move them to a concept or remove them"],
        "{s}"
    );
    assert_eq!(
        messages_of(s, "broken_link"),
        ["a Markdown link points to a document that is not in the bundle: missing/b.md, (a target that leaves the bundle root)"],
        "{s}"
    );
}

#[test]
fn aut_05_each_clean_rule_of_bundle_path_says_its_fix() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let p = bp(&b);
    for (path, fix) in [
        (format!("{p}/"), "remove the trailing slash"),
        (format!("{p}//x"), "remove the empty component"),
        (format!("{p}/./x"), "remove the single-dot components"),
        (format!("{p}/../x"), "remove the double-dot components"),
    ] {
        let out = call("list_concepts", &json!({ "bundle_path": path }));
        let m = out.structured()["message"].as_str().expect("m").to_owned();
        assert!(
            m.starts_with("bundle_path must be clean: ") && m.contains(fix),
            "{path}: {m}"
        );
        assert!(out.second_text().starts_with(&m), "{}", out.second_text());
    }
}

#[test]
fn aut_05_actor_grammar_aliases_and_kinds_reach_the_agent() {
    let mut mcp = Mcp::start();
    let list = mcp.request("tools/list", json!({}));
    mcp.finish();
    let tool = |n: &str| -> Value {
        list["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == n)
            .cloned()
            .expect("tool")
    };
    // The document-actor grammar: a pattern with its description, where a `by` is written.
    // Definitions are inlined (spec/surface.md §18.6 rule 3a): read it where it is used.
    // The apply tool takes the preview's operations again, unchanged: it advertises them as
    // such, and the preview advertises their shape (spec/surface.md §18.6 rule 3a, the size
    // bound of tools/list).
    let ops = &tool("apply_concept_patch")["inputSchema"]["properties"]["operations"];
    assert_eq!(ops["type"], "array", "{ops}");
    assert!(
        ops["description"]
            .as_str()
            .is_some_and(|d| d.contains("preview") && d.contains("unchanged")),
        "{ops}"
    );
    for (n, payload) in [
        ("preview_concept_patch", "generated"),
        ("preview_concept_patch", "verification"),
    ] {
        let d = &tool(n)["inputSchema"]["properties"]["operations"]["items"]["properties"][payload]
            ["properties"]["by"];
        assert!(
            d["pattern"]
                .as_str()
                .is_some_and(|p| p.contains("human|process")),
            "{n}: {d}"
        );
        let text = d["description"].as_str().expect("description");
        assert!(
            text.contains("human:<name>")
                && text.contains("process:<name>")
                && text.contains("producer/version"),
            "{text}"
        );
    }
    let g = &tool("preview_v02_migration")["inputSchema"]["properties"]["generated_by"];
    assert!(
        g["pattern"].as_str().is_some_and(|p| p.starts_with("^$|")),
        "{g}"
    );
    assert!(
        g["description"]
            .as_str()
            .is_some_and(|d| d.contains("human:<name>")),
        "{g}"
    );

    // Names agents try: path/bundle/dir/root for bundle_path, url/href for resource.
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    for key in ["path", "bundle", "dir", "root"] {
        let out = call("validate_bundle", &json!({ key: bp(&b) }));
        let d = &out.structured()["diagnostics"][0];
        assert_eq!(out.structured()["code"], "unknown_parameter", "{key}");
        assert_eq!(d["field"], "bundle_path", "{key}");
    }
    let src = json!({"kind": "put_source", "concept_id": "metrics/revenue",
        "source": {"id": "s", "href": "https://example.test/"}});
    let out = call("preview_concept_patch", &patch_args(&b, &json!([src])));
    assert_eq!(
        out.structured()["code"],
        "unknown_parameter",
        "{}",
        out.stdout
    );
    assert_eq!(
        out.structured()["diagnostics"][0]["field"],
        "operations.0.source.resource"
    );

    // A kind that does not exist: the guidance lists every kind.
    let bad = json!({"kind": "set_status", "concept_id": "metrics/revenue"});
    let out = call("preview_concept_patch", &patch_args(&b, &json!([bad])));
    let d = &out.structured()["diagnostics"][0];
    assert_eq!(d["field"], "operations.0.kind", "{}", out.stdout);
    let m = d["message"].as_str().expect("m");
    for kind in [
        "set_generated",
        "ensure_verification",
        "remove_verification",
        "put_source",
        "remove_source",
        "set_usage_window",
        "set_lifecycle",
        "put_attested_computation",
        "set_bundle_version",
        "set_metadata",
    ] {
        assert!(m.contains(&format!("\"{kind}\"")), "{kind} in {m}");
    }
}
