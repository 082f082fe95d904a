//! Agent and host experience (spec/surface.md §18.4, §18.5, §18.7; scenarios AUT-06, AUT-07,
//! AUT-09, AUT-10): paging and filters of the read tools, the store's `.gitignore`, the CLI
//! and logs, scoping. Every test drives the real binary on temp bundles.

#![allow(clippy::disallowed_methods)] // tests build and mutate their own temp trees

use crate::support::util::{call, copy_bundle, fixture, snapshot};
use serde_json::{json, Value};
use std::path::Path;

/// Writes a generated bundle of `n` concepts `c/NNNN` under `dir`: types, statuses, tags,
/// `stale_after` dates and verification events vary with the index, so every filter of
/// spec/surface.md §18.5 selects a proper, non-empty subset.
pub fn generated_bundle(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir.join("c")).expect("mkdir");
    std::fs::write(
        dir.join("index.md"),
        "---\nokf_version: \"0.2\"\n---\n# Index\n",
    )
    .expect("w");
    for i in 0..n {
        let kind = if i % 3 == 0 { "Table" } else { "Metric" };
        let status = match i % 4 {
            0 => "status: draft\n",
            1 => "status: deprecated\n",
            _ => "",
        };
        let verified = if i % 7 == 0 {
            "verified: { by: human:ann, at: 2026-01-01T00:00:00Z }\n"
        } else if i % 7 == 1 {
            "verified: { by: process:nightly, at: 2026-01-01T00:00:00Z }\n"
        } else {
            ""
        };
        let text = format!(
            "---\ntype: {kind}\ntitle: Concept {i}\ndescription: Generated concept number {i}.\n{status}tags: [t{}, common]\nstale_after: 2026-01-{:02}\n{verified}---\n# Concept {i}\n\nBody of concept {i}.\n",
            i % 5,
            i % 28 + 1
        );
        std::fs::write(dir.join(format!("c/{i:04}.md")), text).expect("write concept");
    }
}

fn list(args: &Value) -> Value {
    let out = call("list_concepts", args);
    assert_eq!(out.code, 0, "{}", out.stdout);
    out.structured().clone()
}

fn ids(page: &Value) -> Vec<String> {
    page["concepts"]
        .as_array()
        .expect("concepts")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_owned())
        .collect()
}

/// Every page of a listing with `args`, following `next_cursor`.
fn all_pages(args: &Value) -> Vec<Value> {
    let mut pages = vec![list(args)];
    while let Some(c) = pages.last().and_then(|p| p["next_cursor"].as_str()) {
        let mut a = args.clone();
        a["cursor"] = json!(c);
        pages.push(list(&a));
        assert!(pages.len() < 100, "paging does not end");
    }
    pages
}

#[test]
fn aut_07_list_concepts_pages_by_limit_and_cursor_in_id_order() {
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 450);
    let bp = b.to_str().expect("utf-8");
    // Default limit 200: 200 + 200 + 50, each page saying total 450.
    let pages = all_pages(&json!({"bundle_path": bp}));
    let sizes: Vec<usize> = pages.iter().map(|p| ids(p).len()).collect();
    assert_eq!(sizes, [200, 200, 50]);
    for p in &pages {
        assert_eq!(p["total"], 450);
    }
    assert_eq!(pages[2]["next_cursor"], Value::Null);
    let joined: Vec<String> = pages.iter().flat_map(ids).collect();
    let expected: Vec<String> = (0..450).map(|i| format!("c/{i:04}")).collect();
    assert_eq!(joined, expected, "pages partition the sorted listing");
    // A text-only host can page too: the text is the whole object, cursor included.
    let out = call("list_concepts", &json!({"bundle_path": bp}));
    let text: Value = serde_json::from_str(out.text()).expect("text JSON");
    assert_eq!(text["next_cursor"], pages[0]["next_cursor"]);
    assert_eq!(&text, out.structured());
    // limit 7 and the maximum 1,000.
    let small = all_pages(&json!({"bundle_path": bp, "limit": 7}));
    assert_eq!(small.len(), 65);
    assert_eq!(small.iter().flat_map(ids).collect::<Vec<_>>(), expected);
    let one = list(&json!({"bundle_path": bp, "limit": 1000}));
    assert_eq!(ids(&one).len(), 450);
    assert_eq!(one["next_cursor"], Value::Null);
    // The pages equal the entries of one full listing.
    assert_eq!(
        pages
            .iter()
            .flat_map(|p| p["concepts"].as_array().expect("a").clone())
            .collect::<Vec<_>>(),
        one["concepts"].as_array().expect("a").clone()
    );
}

/// A client-side filter over list entries.
type Pred = Box<dyn Fn(&Value) -> bool>;

#[test]
fn aut_07_filters_are_exact_matches_and_total_counts_after_them() {
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 120);
    let bp = b.to_str().expect("utf-8");
    let base = json!({"bundle_path": bp, "as_of": "2026-01-15", "limit": 1000});
    let full = list(&base);
    let every = full["concepts"].as_array().expect("a").clone();
    assert_eq!(every.len(), 120);
    let cases: Vec<(&str, Value, Pred)> = vec![
        (
            "status",
            json!("draft"),
            Box::new(|c| c["status"] == "draft"),
        ),
        (
            "status",
            json!("stable"),
            Box::new(|c| c["status"] == "stable"),
        ),
        ("type", json!("Table"), Box::new(|c| c["type"] == "Table")),
        (
            "tag",
            json!("t3"),
            Box::new(|c| {
                c["tags"]
                    .as_array()
                    .is_some_and(|t| t.contains(&json!("t3")))
            }),
        ),
        (
            "trust",
            json!("human-reviewed"),
            Box::new(|c| c["trust"] == "human-reviewed"),
        ),
        (
            "trust",
            json!("machine-confirmed"),
            Box::new(|c| c["trust"] == "machine-confirmed"),
        ),
        ("stale", json!(true), Box::new(|c| c["stale"] == true)),
        ("stale", json!(false), Box::new(|c| c["stale"] == false)),
    ];
    for (key, value, pred) in &cases {
        let want: Vec<Value> = every.iter().filter(|c| pred(c)).cloned().collect();
        assert!(
            !want.is_empty() && want.len() < every.len(),
            "{key}={value} must select a proper subset"
        );
        let mut a = base.clone();
        a[*key] = value.clone();
        let got = list(&a);
        assert_eq!(got["total"], want.len(), "{key}={value}");
        assert_eq!(
            got["concepts"].as_array().expect("a"),
            &want,
            "{key}={value}"
        );
        // Paging a filtered listing gives the same entries.
        a["limit"] = json!(4);
        let paged: Vec<Value> = all_pages(&a)
            .iter()
            .flat_map(|p| {
                assert_eq!(p["total"], want.len());
                p["concepts"].as_array().expect("a").clone()
            })
            .collect();
        assert_eq!(paged, want, "{key}={value} paged");
    }
    // Filters combine with AND; a value nothing has gives an empty page.
    let both = list(&json!({"bundle_path": bp, "type": "Table", "status": "draft"}));
    let want = every
        .iter()
        .filter(|c| c["type"] == "Table" && c["status"] == "draft")
        .count();
    assert_eq!(both["total"], want);
    let none = list(&json!({"bundle_path": bp, "tag": "no-such-tag"}));
    assert_eq!(
        (none["total"].clone(), none["next_cursor"].clone()),
        (json!(0), Value::Null)
    );
    assert_eq!(none["concepts"], json!([]));
}

#[test]
fn aut_07_rejections_change_nothing_and_pure_ones_need_no_bundle() {
    let (_t, b) = copy_bundle(&fixture("read_tools"));
    let bp = b.to_str().expect("utf-8");
    let before = snapshot(&b);
    let missing = "/nonexistent/okf-aut-07";
    let reject = |args: Value, code: &str, msg: Option<&str>| {
        let out = call("list_concepts", &args);
        assert_eq!(out.code, 1, "{}", out.stdout);
        assert_eq!(out.structured()["code"], code, "{}", out.stdout);
        if let Some(m) = msg {
            assert_eq!(out.structured()["message"], m);
        }
        assert!(!out.stdout.contains("lc1.zz"), "a cursor is never echoed");
    };
    // Pure checks win over a bundle path that does not exist (spec/surface.md §9.1).
    reject(
        json!({"bundle_path": missing, "stale": true}),
        "invalid_request",
        Some("the stale filter needs as_of"),
    );
    reject(
        json!({"bundle_path": missing, "cursor": "lc1.zz"}),
        "invalid_request",
        Some("cursor is not a next_cursor of list_concepts; list again without cursor"),
    );
    reject(
        json!({"bundle_path": missing, "cursor": format!("lc1.{}.4", "0".repeat(64))}),
        "invalid_request",
        None,
    );
    reject(
        json!({"bundle_path": bp, "limit": 0}),
        "schema_validation",
        None,
    );
    reject(
        json!({"bundle_path": bp, "limit": 1001}),
        "resource_limit",
        None,
    );
    reject(
        json!({"bundle_path": bp, "status": "archived"}),
        "schema_validation",
        None,
    );
    reject(
        json!({"bundle_path": bp, "trust": "trusted"}),
        "schema_validation",
        None,
    );
    let v = call(
        "validate_bundle",
        &json!({"bundle_path": bp, "limit": 10001}),
    );
    assert_eq!(v.structured()["code"], "resource_limit");
    let v = call("validate_bundle", &json!({"bundle_path": bp, "limit": 0}));
    assert_eq!(v.structured()["code"], "schema_validation");
    assert_eq!(snapshot(&b), before, "tree byte-identical, no .okf/");
}

#[test]
fn aut_07_a_cursor_is_bound_to_the_revision() {
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 12);
    let bp = b.to_str().expect("utf-8");
    let first = list(&json!({"bundle_path": bp, "limit": 5}));
    let cursor = first["next_cursor"].as_str().expect("a cursor").to_owned();
    // Same revision: the cursor works, also after a touch that changes no byte.
    let again = list(&json!({"bundle_path": bp, "limit": 5, "cursor": cursor}));
    assert_eq!(ids(&again)[0], "c/0005");
    std::fs::write(b.join("c/0011.md"), "---\ntype: Table\n---\n# Changed\n").expect("edit");
    let before = snapshot(&b);
    let out = call(
        "list_concepts",
        &json!({"bundle_path": bp, "limit": 5, "cursor": cursor}),
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.structured()["code"], "invalid_request");
    assert_eq!(
        out.structured()["message"],
        "the bundle changed since this cursor; list again without cursor"
    );
    assert!(out.structured()["diagnostics"]
        .as_array()
        .expect("d")
        .iter()
        .any(|d| d["field"] == "cursor"));
    assert!(!out.stdout.contains(&cursor), "the cursor is not echoed");
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
    // A fresh listing gives a new cursor that works.
    let fresh = list(&json!({"bundle_path": bp, "limit": 5}));
    assert_ne!(fresh["next_cursor"].as_str(), Some(cursor.as_str()));
}

#[test]
fn aut_07_validate_bundle_limits_diagnostics_and_counts_every_finding() {
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 40);
    // Forty broken links, one per concept: each a finding with check_links.
    for i in 0..40 {
        let p = b.join(format!("c/{i:04}.md"));
        let mut t = std::fs::read_to_string(&p).expect("r");
        t.push_str(&format!("\nSee [missing](missing-{i}.md).\n"));
        std::fs::write(&p, t).expect("w");
    }
    let bp = b.to_str().expect("utf-8");
    let full = call(
        "validate_bundle",
        &json!({"bundle_path": bp, "check_links": true}),
    );
    let full = full.structured().clone();
    let all = full["diagnostics"].as_array().expect("d").clone();
    assert!(all.len() >= 40, "{}", all.len());
    assert_eq!(full["diagnostics_truncated"], false);
    let counts = full["diagnostic_counts"].as_object().expect("counts");
    let mut by_code = std::collections::BTreeMap::<String, u64>::new();
    for d in &all {
        *by_code
            .entry(d["code"].as_str().expect("c").to_owned())
            .or_default() += 1;
    }
    assert_eq!(
        counts
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().expect("n")))
            .collect::<std::collections::BTreeMap<_, _>>(),
        by_code
    );
    let cut = call(
        "validate_bundle",
        &json!({"bundle_path": bp, "check_links": true, "limit": 5}),
    );
    let cut = cut.structured();
    assert_eq!(
        cut["diagnostics"].as_array().expect("d"),
        &all[..5],
        "the first five in sort order"
    );
    assert_eq!(cut["diagnostics_truncated"], true);
    assert_eq!(
        cut["diagnostic_counts"], full["diagnostic_counts"],
        "counts cover every finding"
    );
    assert_eq!(cut["conformance"], full["conformance"]);
    assert_eq!(cut["guidance"], full["guidance"]);
    let exact = call(
        "validate_bundle",
        &json!({"bundle_path": bp, "check_links": true, "limit": all.len()}),
    );
    assert_eq!(exact.structured()["diagnostics_truncated"], false);
    assert!(!b.join(".okf").exists());
}

// ---------------------------------------------------------------------------------------------
// AUT-10: .okf/.gitignore
// ---------------------------------------------------------------------------------------------

fn write_concept(b: &Path, id: &str, title: &str) -> Value {
    let out = call(
        "write_concept",
        &json!({"bundle_path": b.to_str().expect("utf-8"), "concept_id": id,
            "frontmatter": format!("type: Table\ntitle: {title}\n"), "body": "# Hi\n"}),
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    out.structured().clone()
}

#[test]
fn aut_10_the_commit_that_creates_the_store_writes_its_gitignore() {
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 3);
    let bp = b.to_str().expect("utf-8");
    let listed = list(&json!({"bundle_path": bp, "limit": 1}));
    assert!(!b.join(".okf").exists());
    write_concept(&b, "notes/one", "One");
    assert_eq!(
        std::fs::read(b.join(".okf/.gitignore")).expect("gitignore"),
        b"*\n"
    );
    // The store ignores it: the revision (bound into a cursor) does not see `.okf/`, and a
    // host's own edit of the file is kept by later commits.
    std::fs::write(b.join(".okf/.gitignore"), "*\n# mine\n").expect("edit");
    write_concept(&b, "notes/two", "Two");
    assert_eq!(
        std::fs::read(b.join(".okf/.gitignore")).expect("gitignore"),
        b"*\n# mine\n"
    );
    std::fs::remove_file(b.join("notes/one.md")).expect("rm");
    std::fs::remove_file(b.join("notes/two.md")).expect("rm");
    std::fs::remove_dir(b.join("notes")).expect("rmdir");
    let after = list(&json!({"bundle_path": bp, "limit": 1}));
    assert_eq!(
        after["next_cursor"], listed["next_cursor"],
        "same revision with .okf/ present"
    );
    let v = call("validate_bundle", &json!({"bundle_path": bp}));
    assert_eq!(
        v.structured()["scanned_files"],
        4,
        "index + 3 concepts; .okf/ is not scanned"
    );
    // An existing store that has no .gitignore (made before this rule) is left as it is.
    std::fs::remove_file(b.join(".okf/.gitignore")).expect("rm");
    write_concept(&b, "notes/three", "Three");
    assert!(!b.join(".okf/.gitignore").exists());
}

#[test]
fn aut_10_git_never_sees_the_store() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("git not installed: the git half of AUT-10 is not run");
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 2);
    write_concept(&b, "notes/one", "One");
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e", "-C"])
            .arg(&b)
            .args(args)
            .output()
            .expect("git");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    let files = git(&["ls-files"]);
    assert!(files.contains("notes/one.md"), "{files}");
    assert!(!files.contains(".okf"), "the store is ignored: {files}");
}

// ---------------------------------------------------------------------------------------------
// AUT-09: CLI and logs
// ---------------------------------------------------------------------------------------------

#[test]
fn aut_09_tools_prints_every_registered_tool_with_its_title() {
    let out = crate::support::util::run_cli(&["tools"], None);
    assert_eq!(out.code, 0);
    let mut mcp = crate::support::util::Mcp::start();
    let listed = mcp.request("tools/list", json!({}));
    let tools: Vec<(String, String)> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            let field = |k: &str| t[k].as_str().expect(k).to_owned();
            (field("name"), field("title"))
        })
        .collect();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), tools.len(), "{}", out.stdout);
    for (line, (name, advertised)) in lines.iter().zip(&tools) {
        let (n, title) = line.split_once(' ').expect("name, then title");
        assert_eq!(n, name);
        // The CLI prints the title tools/list advertises.
        assert_eq!(title.trim(), advertised, "{line}");
    }
    assert!(out
        .stdout
        .contains("list_concepts             List concepts\n"));
}

#[test]
fn aut_09_usage_errors_explain_without_echoing_argument_values() {
    const SECRET: &str = "sk-live-AUT09-5f3c9e";
    let cases: [(&[&str], &str); 7] = [
        (
            &["call", "list_concepts", "--args-fil", SECRET],
            "did you mean --args-file",
        ),
        (&[&format!("--token={SECRET}")], "unexpected argument"),
        (&[SECRET], "unrecognized subcommand"),
        (&["servee"], "did you mean serve"),
        (&["call"], "argument <TOOL>"),
        (
            &[
                "call",
                "list_concepts",
                &format!("--pretty={SECRET}"),
                "--args",
                "{}",
            ],
            "argument --pretty",
        ),
        (&["call", SECRET, "--args", "{}"], "unknown tool name"),
    ];
    for (argv, explains) in cases {
        let out = crate::support::util::run_cli(argv, None);
        assert_eq!(out.code, 2, "{argv:?}");
        assert!(out.stdout.is_empty(), "{argv:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{argv:?}: {}", out.stderr);
        assert!(out.stderr.contains(explains), "{argv:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains("AUT09"),
            "{argv:?} echoed a value: {}",
            out.stderr
        );
    }
}

#[test]
fn aut_09_call_pretty_prints_the_same_result_over_several_lines() {
    let (_t, b) = copy_bundle(&fixture("read_tools"));
    let args = json!({"bundle_path": b.to_str().expect("utf-8"), "limit": 2}).to_string();
    let one = crate::support::util::run_cli(&["call", "list_concepts", "--args", &args], None);
    let pretty = crate::support::util::run_cli(
        &["call", "list_concepts", "--pretty", "--args", &args],
        None,
    );
    assert_eq!((one.code, pretty.code), (0, 0));
    assert_eq!(one.stdout.lines().count(), 1);
    assert!(pretty.stdout.lines().count() > 10, "{}", pretty.stdout);
    assert!(pretty.stdout.starts_with("{\n  \"content\": ["));
    let a: Value = serde_json::from_str(&one.stdout).expect("json");
    let p: Value = serde_json::from_str(&pretty.stdout).expect("json");
    assert_eq!(a, p);
    // A tool error keeps its exit code under --pretty.
    let bad =
        crate::support::util::run_cli(&["call", "list_concepts", "--pretty", "--args", "{}"], None);
    assert_eq!(bad.code, 1);
}

#[test]
fn aut_09_rust_log_never_prints_arguments_or_documents() {
    const ARG_MARKER: &str = "argmarker-7d41c2";
    const DOC_MARKER: &str = "docmarker-93be0a";
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 3);
    std::fs::write(
        b.join("c/secret.md"),
        format!(
            "---\ntype: Table\ntitle: {DOC_MARKER}\n---\n# {DOC_MARKER}\n\nBody {DOC_MARKER}.\n"
        ),
    )
    .expect("w");
    let bp = b.to_str().expect("utf-8");
    for (i, level) in [
        "debug",
        "trace",
        "rmcp=trace,okf_mcp=trace",
        "trace,rmcp=trace",
    ]
    .into_iter()
    .enumerate()
    {
        let mut s = crate::support::util::Mcp::start_with(&[("RUST_LOG", level)]);
        let r = s.call(
            "read_concept",
            &json!({"bundle_path": bp, "concept_id": "c/secret"}),
        );
        assert!(r.to_string().contains(DOC_MARKER), "{r}");
        let r = s.call(
            "list_concepts",
            &json!({"bundle_path": bp, "tag": ARG_MARKER}),
        );
        assert_eq!(r["structuredContent"]["total"], 0, "{r}");
        let r = s.call(
            "list_concepts",
            &json!({"bundle_path": bp, "type": "Table"}),
        );
        assert!(
            r.to_string().contains(DOC_MARKER),
            "the answer carries the document's title"
        );
        let r = s.call(
            "write_concept",
            &json!({"bundle_path": bp, "concept_id": format!("c/new{i}"),
            "frontmatter": format!("type: Table\ntitle: {ARG_MARKER}\n"), "body": ARG_MARKER}),
        );
        assert_eq!(r["isError"], false, "{r}");
        let _ = s.call(
            "validate_bundle",
            &json!({"bundle_path": bp, ARG_MARKER: 1}),
        );
        std::fs::remove_file(b.join(format!("c/new{i}.md"))).expect("rm");
        let (code, _, stderr) = s.finish();
        assert_eq!(code, 0);
        // Logging is on (okf-mcp's own event names the tool) ...
        assert!(
            stderr.contains("tool call"),
            "{level}: logging is off: {stderr}"
        );
        // ... and no argument value or document text reaches it.
        assert!(
            !stderr.contains(ARG_MARKER),
            "{level}: argument text in the log"
        );
        assert!(
            !stderr.contains(DOC_MARKER),
            "{level}: document text in the log"
        );
        assert!(!stderr.contains(bp), "{level}: the bundle path in the log");
    }
}

#[test]
fn aut_09_requests_in_flight_when_stdin_closes_finish_and_are_answered() {
    let tmp = tempfile::tempdir().expect("tmp");
    let b = tmp.path().join("bundle");
    generated_bundle(&b, 3000);
    let bp = b.to_str().expect("utf-8");
    let mut s = crate::support::util::Mcp::start();
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(s.send_request(
            "tools/call",
            json!({"name": "validate_bundle", "arguments": {"bundle_path": bp, "check_links": true, "limit": 1 + i}}),
        ));
        ids.push(s.send_request(
            "tools/call",
            json!({"name": "list_concepts", "arguments": {"bundle_path": bp, "as_of": "2026-01-10", "stale": true}}),
        ));
    }
    s.close_stdin();
    let mut answered = std::collections::BTreeMap::new();
    while let Some(m) = s.try_read() {
        if m.get("id").is_some() {
            answered.insert(m["id"].to_string(), m);
        }
    }
    assert_eq!(s.finish().0, 0);
    assert_eq!(answered.len(), ids.len(), "every request is answered");
    for id in &ids {
        let m = &answered[&id.to_string()];
        assert_eq!(
            m["result"]["isError"], false,
            "finished, not cancelled: {m}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// AUT-06: scoping
// ---------------------------------------------------------------------------------------------

/// A scratch directory under `target/tmp/` (not under the system temp dir, whose paths the
/// suite forbids in outputs: a refusal names the allowed roots, the host's own config).
fn scratch(name: &str) -> std::path::PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tmp")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

#[test]
fn aut_06_root_restricts_bundle_path_by_directory_identity() {
    let top = scratch("aut06-root");
    let root = top.join("root");
    let evil = top.join("root-evil"); // a string-prefix sibling
    generated_bundle(&root.join("b"), 2);
    generated_bundle(&evil.join("b"), 2);
    std::os::unix::fs::symlink(evil.join("b"), root.join("escape")).expect("symlink");
    std::os::unix::fs::symlink(&root, evil.join("to-root")).expect("symlink");
    let link_to_root = top.join("link");
    std::os::unix::fs::symlink(&root, &link_to_root).expect("symlink");
    let before_evil = snapshot(&evil);
    let code_msg = |r: &Value| {
        (
            r["structuredContent"]["code"].clone(),
            r["structuredContent"]["message"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
        )
    };
    // A bad --root is a startup error.
    for bad in ["relative/dir", "/nonexistent-aut06-root"] {
        let out = std::process::Command::new(crate::support::util::bin())
            .args(["serve", "--root", bad])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--root"), "{err}");
    }
    // The root is given through a symlink: resolved once at startup.
    let mut m = crate::support::util::Mcp::start_serve(&["--root", s(&link_to_root)]);
    let inside = m.call("list_concepts", &json!({"bundle_path": s(&root.join("b"))}));
    assert_eq!(inside["structuredContent"]["total"], 2, "{inside}");
    // The root itself is allowed: the walk passes, then the capture refuses the symlink
    // planted inside it (a bundle's own rule), not the scope.
    let itself = m.call("validate_bundle", &json!({"bundle_path": s(&root)}));
    assert_eq!(
        itself["structuredContent"]["message"],
        "bundle contains a symlink: escape"
    );
    let outside_cases = [
        evil.join("b"),                 // a sibling whose path starts with the root's
        evil.join("to-root").join("b"), // through a symlink outside the roots
        top.join("missing/b"),          // does not exist: nothing is learnt about it
        std::path::PathBuf::from("/"),
    ];
    for p in &outside_cases {
        for tool in ["list_concepts", "write_concept"] {
            let args = if tool == "write_concept" {
                json!({"bundle_path": s(p), "concept_id": "x/y", "frontmatter": "type: T\n", "body": "b\n"})
            } else {
                json!({"bundle_path": s(p)})
            };
            let r = m.call(tool, &args);
            let (code, msg) = code_msg(&r);
            assert_eq!(code, "invalid_request", "{p:?}: {r}");
            assert_eq!(
                msg, "bundle_path is outside the allowed roots: root",
                "{p:?}"
            );
            if p != Path::new("/") {
                assert!(
                    !r.to_string().contains(s(p)),
                    "the refused bundle_path is not echoed"
                );
            }
        }
    }
    // Inside the root the usual rules hold: a symlink out of it is refused as a symlink.
    let r = m.call(
        "list_concepts",
        &json!({"bundle_path": s(&root.join("escape"))}),
    );
    assert_eq!(code_msg(&r).1, "bundle_path must not be a symlink");
    let r = m.call(
        "list_concepts",
        &json!({"bundle_path": s(&root.join("escape/c"))}),
    );
    assert_eq!(code_msg(&r).1, "bundle_path must not contain a symlink");
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        snapshot(&evil),
        before_evil,
        "outside: byte-identical, no .okf/"
    );
    assert!(!evil.join("b/.okf").exists());
    // Without --root the same paths are accepted as before.
    let free = call("list_concepts", &json!({"bundle_path": s(&evil.join("b"))}));
    assert_eq!(free.structured()["total"], 2);
    let _ = std::fs::remove_dir_all(&top);
}

#[test]
fn aut_06_read_only_lists_and_runs_only_the_read_tools() {
    let mut full = crate::support::util::Mcp::start();
    let all = full.request("tools/list", json!({}))["result"]["tools"].clone();
    drop(full.finish());
    let read: Vec<Value> = all
        .as_array()
        .expect("tools")
        .iter()
        .filter(|t| t["annotations"]["readOnlyHint"] == true)
        .cloned()
        .collect();
    assert!(read.len() >= 3 && read.len() < all.as_array().expect("a").len());
    let mut m = crate::support::util::Mcp::start_serve(&["--read-only"]);
    let listed = m.request("tools/list", json!({}))["result"]["tools"].clone();
    assert_eq!(
        listed,
        Value::Array(read),
        "exactly the read tools, as advertised before"
    );
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let before = snapshot(&b);
    let args = json!({"bundle_path": s(&b), "concept_id": "notes/x", "frontmatter": "type: T\n", "body": "b\n"});
    let id = m.send_request(
        "tools/call",
        json!({"name": "write_concept", "arguments": args}),
    );
    let write = m.read_id(&id);
    let id = m.send_request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    let unknown = m.read_id(&id);
    assert_eq!(write["error"]["code"], -32602, "{write}");
    assert_eq!(write["error"], unknown["error"], "the unknown-tool answer");
    let r = m.call("list_concepts", &json!({"bundle_path": s(&b)}));
    assert_eq!(r["isError"], false);
    assert_eq!(m.finish().0, 0);
    assert_eq!(snapshot(&b), before, "nothing written, no .okf/");
}

/// The client's side of the roots exchange: reads the server's `roots/list` request and
/// answers it with `uris` (or with a JSON-RPC error when `uris` is `None`).
fn answer_roots(m: &mut crate::support::util::Mcp, uris: Option<&[String]>) {
    let req = m.read();
    assert_eq!(req["method"], "roots/list", "{req}");
    let id = req["id"].clone();
    assert!(!id.is_null(), "{req}");
    let reply = match uris {
        Some(u) => {
            let roots: Vec<Value> = u.iter().map(|x| json!({"uri": x, "name": "r"})).collect();
            json!({"jsonrpc": "2.0", "id": id, "result": {"roots": roots}})
        }
        None => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "no"}}),
    };
    m.send_json(&reply);
}

/// A session whose client advertises `roots` (spec/surface.md §18.4 rule 2), initialised;
/// the server's first `roots/list` is not read yet.
fn start_roots_client(args: &[&str]) -> crate::support::util::Mcp {
    let mut m = crate::support::util::Mcp::spawn_serve(args, &[]);
    let init = m.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}},
               "clientInfo": {"name": "it-roots", "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "okf-mcp", "{init}");
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    m
}

/// [`start_roots_client`] whose first `roots/list` is answered with `uris` (an error when
/// `None`).
fn start_with_roots(args: &[&str], uris: Option<&[String]>) -> crate::support::util::Mcp {
    let mut m = start_roots_client(args);
    answer_roots(&mut m, uris);
    m
}

/// `list_concepts` on `p`; its structured result (a success or an error envelope).
fn list_in(m: &mut crate::support::util::Mcp, p: &Path) -> Value {
    m.call("list_concepts", &json!({"bundle_path": s(p)}))["structuredContent"].clone()
}

fn file_uri(p: &Path) -> String {
    // Percent-encode the space the test directory names hold.
    format!("file://{}", s(p).replace(' ', "%20"))
}

#[test]
fn aut_06_mcp_roots_bound_bundle_path_and_list_changed_refreshes_them() {
    let top = scratch("aut06-mcp roots");
    let (a, b) = (top.join("a"), top.join("b"));
    generated_bundle(&a.join("x"), 2);
    generated_bundle(&b.join("y"), 3);
    let before_b = snapshot(&b);
    let mut m = start_with_roots(&[], Some(&[file_uri(&a), "https://example.com/".into()]));
    assert_eq!(list_in(&mut m, &a.join("x"))["total"], 2);
    let out = list_in(&mut m, &b.join("y"));
    assert_eq!(out["code"], "invalid_request", "{out}");
    assert_eq!(
        out["message"],
        "bundle_path is outside the allowed roots: a"
    );
    // notifications/roots/list_changed: the server asks again; the new list replaces the old.
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    answer_roots(&mut m, Some(&[format!("{}/", file_uri(&b))]));
    assert_eq!(list_in(&mut m, &b.join("y"))["total"], 3);
    let out = list_in(&mut m, &a.join("x"));
    assert_eq!(
        out["message"],
        "bundle_path is outside the allowed roots: b"
    );
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));

    // Intersected with --root: only what both allow.
    let mut m = start_with_roots(&["--root", s(&top)], Some(&[file_uri(&a)]));
    assert_eq!(list_in(&mut m, &a.join("x"))["total"], 2);
    assert_eq!(
        list_in(&mut m, &b.join("y"))["message"],
        "bundle_path is outside the allowed roots: a"
    );
    drop(m.finish());
    let mut m = start_with_roots(&["--root", s(&a)], Some(&[file_uri(&b)]));
    assert_eq!(
        list_in(&mut m, &b.join("y"))["message"],
        "bundle_path is outside the allowed roots: none"
    );
    drop(m.finish());

    // Fail closed: a client that advertises roots and answers roots/list with an error, or
    // with no usable root, allows nothing; no write reaches the bundle.
    for uris in [None, Some(vec!["file://host/elsewhere".to_owned()])] {
        let mut m = start_with_roots(&[], uris.as_deref());
        let w = m.call(
            "write_concept",
            &json!({"bundle_path": s(&b.join("y")), "concept_id": "n/new", "frontmatter": "type: T\n", "body": "b\n"}),
        );
        assert_eq!(
            w["structuredContent"]["message"], "bundle_path is outside the allowed roots: none",
            "{w}"
        );
        drop(m.finish());
    }
    assert_eq!(snapshot(&b), before_b, "byte-identical, no .okf/");
    assert!(!b.join("y/.okf").exists());
    let _ = std::fs::remove_dir_all(&top);
}

#[test]
fn aut_08_initialize_carries_instructions_titles_and_prompts() {
    let mut m = crate::support::util::Mcp::spawn_serve(&[], &[]);
    let init = m.initialize();
    let r = &init["result"];
    assert_eq!(r["serverInfo"]["title"], "OKF knowledge bundle", "{init}");
    let instructions = r["instructions"].as_str().expect("instructions");
    for needle in [
        "preview",
        "base_revision",
        "receipt_replayed",
        "retryable",
        "instant-0b87c52",
        "process:<name>",
    ] {
        assert!(instructions.contains(needle), "{needle}");
    }
    assert!(r["capabilities"]["prompts"].is_object(), "{init}");
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tools = m.request("tools/list", json!({}))["result"]["tools"].clone();
    for t in tools.as_array().expect("tools") {
        assert!(t["title"].as_str().is_some_and(|x| !x.is_empty()), "{t}");
        // The shared protocol is said once, in the instructions.
        assert!(!t["description"]
            .as_str()
            .unwrap_or("")
            .contains("Replay protocol"));
    }
    let prompts = m.request("prompts/list", json!({}))["result"]["prompts"].clone();
    let names: Vec<&str> = prompts
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "review_stale_concepts",
            "fix_stale_concepts_about",
            "verify_concept",
            "migrate_bundle_to_0_2"
        ]
    );
    let got = m.request(
        "prompts/get",
        json!({"name": "fix_stale_concepts_about", "arguments": {"bundle_path": "/srv/okf/b", "topic": "orders", "as_of": "2026-12-01"}}),
    );
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("search_concepts")
            && text.contains("search_sections")
            && text.contains("orders"),
        "{text}"
    );
    let got = m.request(
        "prompts/get",
        json!({"name": "migrate_bundle_to_0_2", "arguments": {"bundle_path": "/srv/okf/b"}}),
    );
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("/srv/okf/b") && text.contains("preview_v02_migration"),
        "{text}"
    );
    let missing = m.request(
        "prompts/get",
        json!({"name": "verify_concept", "arguments": {}}),
    );
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn aut_06_only_the_newest_roots_answer_counts_and_a_pending_refresh_fails_closed() {
    let top = scratch("aut06-newest");
    let (a, b) = (top.join("a"), top.join("b"));
    generated_bundle(&a.join("x"), 2);
    generated_bundle(&b.join("y"), 3);
    let mut m = start_with_roots(&[], Some(&[file_uri(&a)]));
    assert_eq!(list_in(&mut m, &a.join("x"))["total"], 2);
    // Two list_changed in a row: the older exchange answers last and is ignored.
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    let (r1, r2) = (m.read(), m.read());
    assert_eq!(
        (&r1["method"], &r2["method"]),
        (&json!("roots/list"), &json!("roots/list"))
    );
    let reply = |id: &Value, p: &Path| json!({"jsonrpc": "2.0", "id": id, "result": {"roots": [{"uri": file_uri(p)}]}});
    // rmcp numbers its requests in order: the larger id is the newer exchange.
    let (older, newer) = if r1["id"].as_i64() < r2["id"].as_i64() {
        (r1["id"].clone(), r2["id"].clone())
    } else {
        (r2["id"].clone(), r1["id"].clone())
    };
    m.send_json(&reply(&newer, &b));
    m.send_json(&reply(&older, &a));
    assert_eq!(list_in(&mut m, &b.join("y"))["total"], 3);
    assert_eq!(
        list_in(&mut m, &a.join("x"))["message"],
        "bundle_path is outside the allowed roots: b"
    );
    // A list_changed the client does not answer: after the wait the old roots are not used.
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    let pending = m.read();
    assert_eq!(pending["method"], "roots/list");
    let out = list_in(&mut m, &b.join("y"));
    assert_eq!(
        out["message"], "bundle_path is outside the allowed roots: none",
        "{out}"
    );
    // The late answer is installed.
    m.send_json(&reply(&pending["id"], &b));
    let mut allowed = Value::Null;
    for _ in 0..50 {
        allowed = list_in(&mut m, &b.join("y"));
        if allowed["total"] == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(allowed["total"], 3, "{allowed}");
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));
    let _ = std::fs::remove_dir_all(&top);
}

// ---------------------------------------------------------------------------------------------
// AUT-11: roots as real clients send them (spec/surface.md §18.4 rules 2a, 2b)
// ---------------------------------------------------------------------------------------------

/// The codes and severities of a success object's `notices`.
fn notice_codes(out: &Value) -> Vec<(String, String)> {
    out["notices"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| {
                    (
                        n["code"].as_str().unwrap_or("").to_owned(),
                        n["severity"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn roots_empty() -> Vec<(String, String)> {
    vec![("roots_empty".to_owned(), "WARN".to_owned())]
}

fn list_changed(m: &mut crate::support::util::Mcp, uris: Option<&[String]>) {
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    answer_roots(m, uris);
}

#[test]
fn aut_11_a_first_empty_roots_list_allows_what_root_allows_with_one_roots_empty_notice() {
    let top = scratch("aut11-empty");
    let (a, b) = (top.join("a"), top.join("b"));
    generated_bundle(&a.join("x"), 2);
    generated_bundle(&b.join("y"), 3);
    // Without --root: every path, and every answer says so once.
    let mut m = start_with_roots(&[], Some(&[]));
    let out = list_in(&mut m, &a.join("x"));
    assert_eq!(out["total"], 2, "{out}");
    assert_eq!(notice_codes(&out), roots_empty(), "{out}");
    let msg = out["notices"][0]["message"].as_str().unwrap_or("");
    assert!(
        msg.contains("--root") && msg.contains("roots/list"),
        "{msg}"
    );
    let v = m.call("validate_bundle", &json!({"bundle_path": s(&b.join("y"))}));
    assert_eq!(v["isError"], false, "{v}");
    assert_eq!(notice_codes(&v["structuredContent"]), roots_empty(), "{v}");
    // A second empty list (still no roots listed): the same.
    list_changed(&mut m, Some(&[]));
    let out = list_in(&mut m, &b.join("y"));
    assert_eq!(
        (out["total"].clone(), notice_codes(&out)),
        (json!(3), roots_empty()),
        "{out}"
    );
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));

    // With --root: what --root allows, nothing more.
    let mut m = start_with_roots(&["--root", s(&a)], Some(&[]));
    let out = list_in(&mut m, &a.join("x"));
    assert_eq!(
        (out["total"].clone(), notice_codes(&out)),
        (json!(2), roots_empty()),
        "{out}"
    );
    assert_eq!(
        list_in(&mut m, &b.join("y"))["message"],
        "bundle_path is outside the allowed roots: a"
    );
    drop(m.finish());
    let _ = std::fs::remove_dir_all(&top);
}

#[test]
fn aut_11_roots_withdrawn_to_an_empty_list_allow_nothing() {
    let top = scratch("aut11-withdrawn");
    let a = top.join("a");
    generated_bundle(&a.join("x"), 2);
    let before = snapshot(&a);
    let mut m = start_with_roots(&[], Some(&[file_uri(&a)]));
    let out = list_in(&mut m, &a.join("x"));
    assert_eq!(out["total"], 2, "{out}");
    assert_eq!(
        notice_codes(&out),
        vec![],
        "a listed root: no roots_empty notice"
    );
    list_changed(&mut m, Some(&[]));
    for tool in ["list_concepts", "write_concept"] {
        let args = if tool == "write_concept" {
            json!({"bundle_path": s(&a.join("x")), "concept_id": "n/new", "frontmatter": "type: T\n", "body": "b\n"})
        } else {
            json!({"bundle_path": s(&a.join("x"))})
        };
        let r = m.call(tool, &args)["structuredContent"].clone();
        assert_eq!(
            r["message"], "bundle_path is outside the allowed roots: none",
            "{tool}: {r}"
        );
    }
    // And a list without a usable root, then [] again: still nothing.
    list_changed(&mut m, Some(&["https://example.com/".to_owned()]));
    list_changed(&mut m, Some(&[]));
    assert_eq!(
        list_in(&mut m, &a.join("x"))["message"],
        "bundle_path is outside the allowed roots: none"
    );
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(snapshot(&a), before, "nothing written");
    let _ = std::fs::remove_dir_all(&top);
}

#[test]
fn aut_11_an_error_answer_no_answer_or_only_non_file_roots_allow_nothing() {
    let top = scratch("aut11-closed");
    let a = top.join("a");
    generated_bundle(&a.join("x"), 2);
    let non_file = vec![
        "https://example.com/".to_owned(),
        "file://host/elsewhere".to_owned(),
        format!("{}?q", file_uri(&a)),
        file_uri(&top.join("missing")),
    ];
    for (case, uris) in [("error", None), ("non-file roots", Some(non_file))] {
        for args in [vec![], vec!["--root", s(&top)]] {
            let mut m = start_with_roots(&args, uris.as_deref());
            let out = list_in(&mut m, &a.join("x"));
            assert_eq!(
                out["message"], "bundle_path is outside the allowed roots: none",
                "{case} {args:?}: {out}"
            );
            drop(m.finish());
        }
    }
    // No answer: the call waits the 5 s and is refused; a first empty list is not assumed.
    let mut m = start_roots_client(&[]);
    let req = m.read();
    assert_eq!(req["method"], "roots/list", "{req}");
    let started = std::time::Instant::now();
    let out = list_in(&mut m, &a.join("x"));
    assert_eq!(
        out["message"], "bundle_path is outside the allowed roots: none",
        "{out}"
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(4500),
        "the call waited for the answer: {:?}",
        started.elapsed()
    );
    drop(m.finish());
    let _ = std::fs::remove_dir_all(&top);
}

/// `_meta` of a 2026-07-28 request (SEP-2575: no `initialize`; the client's context rides on
/// every request), advertising `roots` as a 2025 client would.
fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": true}},
        "io.modelcontextprotocol/clientInfo": {"name": "it-2026", "version": "1"}
    })
}

#[test]
fn aut_11_a_2026_07_28_session_is_never_asked_for_roots_and_root_binds_it() {
    let top = scratch("aut11-2026");
    let (a, b) = (top.join("a"), top.join("b"));
    generated_bundle(&a.join("x"), 2);
    generated_bundle(&b.join("y"), 3);
    let mut m = crate::support::util::Mcp::spawn_serve(&["--root", s(&a)], &[]);
    let call_2026 = |m: &mut crate::support::util::Mcp, p: &Path| {
        // read_id fails on any request the server sends meanwhile (a roots/list has an id).
        let id = m.send_request(
            "tools/call",
            json!({"name": "list_concepts", "arguments": {"bundle_path": s(p)}, "_meta": meta_2026()}),
        );
        m.read_id(&id)["result"]["structuredContent"].clone()
    };
    let inside = call_2026(&mut m, &a.join("x"));
    assert_eq!(inside["total"], 2, "{inside}");
    assert_eq!(notice_codes(&inside), vec![], "{inside}");
    assert_eq!(
        call_2026(&mut m, &b.join("y"))["message"],
        "bundle_path is outside the allowed roots: a"
    );
    // A list_changed asks nothing either.
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    assert_eq!(
        call_2026(&mut m, &b.join("y"))["message"],
        "bundle_path is outside the allowed roots: a"
    );
    let (code, rest, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(!rest.contains("roots/list"), "{rest}");
    let _ = std::fs::remove_dir_all(&top);
}

#[test]
fn aut_11_readme_instructions_and_host_snippets_say_how_scoping_works_per_protocol_version() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let start = readme
        .find("## Register with an MCP host")
        .expect("host section");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    // Every host snippet (a fenced block that starts okf-mcp) shows --root with a directory.
    let blocks: Vec<&str> = section
        .split("```")
        .skip(1)
        .step_by(2)
        .filter(|b| b.contains("okf-mcp"))
        .collect();
    assert!(blocks.len() >= 4, "{} host snippets", blocks.len());
    for b in &blocks {
        for line in b.lines().filter(|l| l.contains("okf-mcp")) {
            assert!(
                line.contains("--root") && !line.contains("\"--root\"]"),
                "a host snippet without --root DIR: {line}"
            );
        }
    }
    for needle in ["2026-07-28", "roots/list", "roots_empty", "SEP-2577"] {
        assert!(section.contains(needle), "README host section: {needle}");
    }
    let mut m = crate::support::util::Mcp::spawn_serve(&[], &[]);
    let init = m.initialize();
    let instructions = init["result"]["instructions"]
        .as_str()
        .expect("instructions")
        .to_owned();
    for needle in ["--root", "2026-07-28", "roots/list", "roots_empty"] {
        assert!(instructions.contains(needle), "instructions: {needle}");
    }
    drop(m.finish());
}

// ---------------------------------------------------------------------------------------------
// AUT-13: null for an optional argument (spec/surface.md §18.6 rule 3b)
// ---------------------------------------------------------------------------------------------

/// `r` (a CallToolResult) without its `notices`, and those notices.
fn split_notices(r: &Value) -> (Value, Value) {
    let mut s = r["structuredContent"].clone();
    let notices = s
        .as_object_mut()
        .and_then(|m| m.remove("notices"))
        .unwrap_or(Value::Null);
    (s, notices)
}

/// The one `null_argument_ignored` notice naming `fields`.
fn null_notice(fields: &str) -> (String, String, String) {
    (
        "null_argument_ignored".to_owned(),
        "INFO".to_owned(),
        fields.to_owned(),
    )
}

fn notice_triples(notices: &Value) -> Vec<(String, String, String)> {
    notices
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| {
                    let f = |k: &str| n[k].as_str().unwrap_or("").to_owned();
                    (f("code"), f("severity"), f("field"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn aut_13_null_optional_arguments_answer_like_absent_ones_plus_one_notice() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let mut m = crate::support::util::Mcp::start();
    for tool in ["list_concepts", "validate_bundle"] {
        let plain = json!({"bundle_path": s(&b)});
        let nulls =
            json!({"bundle_path": s(&b), "temporal_profile": null, "as_of": null, "limit": null});
        let cli_plain = call(tool, &plain);
        let cli_nulls = call(tool, &nulls);
        let mcp_nulls = m.call(tool, &nulls);
        assert!(!cli_plain.is_error(), "{}", cli_plain.stdout);
        for (via, r) in [
            ("cli", cli_nulls.result.clone().expect("result")),
            ("mcp", mcp_nulls),
        ] {
            assert_eq!(r["isError"], false, "{tool} {via}: {r}");
            let (without, notices) = split_notices(&r);
            let (expected, plain_notices) =
                split_notices(cli_plain.result.as_ref().expect("result"));
            assert_eq!(without, expected, "{tool} {via}: the same answer");
            assert_eq!(plain_notices, json!([]), "{tool}");
            assert_eq!(
                notice_triples(&notices),
                [null_notice("temporal_profile, as_of, limit")],
                "{tool} {via}: {notices}"
            );
            let msg = notices[0]["message"].as_str().unwrap_or("");
            assert!(msg.contains("as_of") && msg.contains("absent"), "{msg}");
            // The first text item is still the JSON of structuredContent (§18.2).
            assert_eq!(
                r["content"][0]["text"].as_str().unwrap_or(""),
                r["structuredContent"].to_string()
            );
        }
    }
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn aut_13_nulls_inside_operations_required_alias_and_unknown_nulls_keep_their_answers() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let mut m = crate::support::util::Mcp::start();
    let bp = s(&b);
    // A null inside an operation keeps its meaning: `status: null` removes the status, with or
    // without a top-level null beside it (same plan, plus the notice).
    let remove = json!([{"kind": "set_lifecycle", "concept_id": "tables/orders", "lifecycle": {"status": null}}]);
    let plain = json!({"bundle_path": bp, "actor": "human:me", "operations": remove});
    let nulls = json!({"bundle_path": bp, "actor": "human:me", "operations": remove, "temporal_profile": null});
    let p = call("preview_concept_patch", &plain);
    assert!(!p.is_error(), "{}", p.stdout);
    for r in [
        call("preview_concept_patch", &nulls)
            .result
            .expect("result"),
        m.call("preview_concept_patch", &nulls),
    ] {
        let (without, notices) = split_notices(&r);
        assert_eq!(without, split_notices(p.result.as_ref().expect("r")).0);
        assert_eq!(notice_triples(&notices), [null_notice("temporal_profile")]);
    }
    // A null inside an operation keeps its error; the top-level null is still dropped, so the
    // answer is the one without it.
    let bad = json!([{"kind": "put_source", "concept_id": "tables/orders", "source": null}]);
    let bad_plain = call(
        "preview_concept_patch",
        &json!({"bundle_path": bp, "actor": "human:me", "operations": bad}),
    );
    assert_eq!(
        bad_plain.structured()["code"],
        "schema_validation",
        "{}",
        bad_plain.stdout
    );
    let bad_nulls = json!({"bundle_path": bp, "actor": "human:me", "operations": bad, "temporal_profile": null});
    for r in [
        call("preview_concept_patch", &bad_nulls)
            .result
            .expect("result"),
        m.call("preview_concept_patch", &bad_nulls),
    ] {
        assert_eq!(r["structuredContent"], *bad_plain.structured(), "{r}");
    }
    // Required, alias and unknown keys are not dropped: their null is refused as before.
    for (args, code, field) in [
        (
            json!({"bundle_path": null, "limit": null}),
            "schema_validation",
            "bundle_path",
        ),
        (
            // The alias answer names the canonical property.
            json!({"bundle_path": bp, "path": null}),
            "unknown_parameter",
            "bundle_path",
        ),
        (
            json!({"bundle_path": bp, "nope": null}),
            "schema_validation",
            "arguments",
        ),
    ] {
        for r in [
            call("list_concepts", &args).result.expect("result"),
            m.call("list_concepts", &args),
        ] {
            let e = &r["structuredContent"];
            assert_eq!(e["code"], code, "{args}: {r}");
            assert!(
                e["diagnostics"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|d| d["field"] == field)),
                "{args}: {r}"
            );
        }
    }
    let (code, _, err) = m.finish();
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(snapshot(&b), before, "previews and refusals write nothing");
}

#[test]
fn aut_13_no_answer_repeats_a_diagnostic() {
    // A temporal_profile that is neither a string nor a profile fails two schema keywords
    // with the same guidance (before 3b, `temporal_profile: null` did so on validate_bundle).
    let args = json!({"bundle_path": "/nonexistent-aut13", "temporal_profile": 5, "limit": "x", "as_of": 7});
    for tool in crate_tools() {
        let r = call(&tool, &args);
        let diags = r.structured()["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(!diags.is_empty(), "{tool}: {}", r.stdout);
        let mut seen = std::collections::HashSet::new();
        for d in &diags {
            assert!(seen.insert(d.to_string()), "{tool} repeats {d}");
        }
        // The readable second item follows the envelope: no repeated line either.
        let text = r.second_text();
        let mut lines = std::collections::HashSet::new();
        for l in text.lines() {
            assert!(lines.insert(l), "{tool} repeats the line {l}");
        }
    }
}

/// Every tool name `okf-mcp tools` prints.
fn crate_tools() -> Vec<String> {
    let out = crate::support::util::run_cli(&["tools"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}
