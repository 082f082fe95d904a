//! The papercuts an agent met when it tried every workflow as a new user would (issue 21 item
//! 6), each driven through the real binary (`okf-mcp call`) on a copy of a fixture bundle.
//! Every rejection here also leaves the bundle byte-identical and creates no `.okf/`.
#![allow(clippy::disallowed_methods)] // tests build their own temp trees

use crate::support::patch::{apply_args, patch_args, preview, tool_err};
use crate::support::util::*;
use serde_json::{json, Value};
use std::path::Path;

/// The readable second text item of an error or preview answer.
fn readable(tool: &str, args: &Value) -> (Value, String) {
    let out = call(tool, args);
    (out.structured().clone(), out.second_text().to_owned())
}

fn unchanged(b: &Path, before: &std::collections::BTreeMap<String, Vec<u8>>) {
    assert_eq!(&snapshot(b), before, "the bundle is byte-identical");
    assert!(!b.join(".okf").exists(), "no .okf/");
}

#[test]
fn papercut_concept_instead_of_concept_id_names_the_stray_key() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let (s, text) = readable(
        "read_concept",
        &json!({"bundle_path": b, "concept": "tables/orders"}),
    );
    assert_eq!(s["code"], "unknown_parameter", "{s}");
    let d = &s["diagnostics"][0];
    assert_eq!(d["field"], "concept_id", "{s}");
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("concept is not accepted: use concept_id")),
        "{d}"
    );
    assert!(
        text.contains("concept_id: concept is not accepted"),
        "{text}"
    );
    // Inside an operation, too.
    let ops = json!([{"kind": "set_lifecycle", "concept": "tables/orders",
                      "lifecycle": {"status": "deprecated"}}]);
    let e = tool_err("preview_concept_patch", &patch_args(&b, &ops));
    assert_eq!(e["code"], "unknown_parameter", "{e}");
    assert_eq!(
        e["diagnostics"][0]["field"], "operations.0.concept_id",
        "{e}"
    );
    unchanged(&b, &before);
}

#[test]
fn papercut_a_result_revision_as_expected_revision_is_named_in_the_headline() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue",
                      "lifecycle": {"status": "deprecated"}}]);
    let args = patch_args(&b, &ops);
    let p = preview(&args);
    let before = snapshot(&b);
    let mut x = apply_args(&args, &p);
    x["expected_revision"] = p["result_revision"].clone();
    let e = tool_err("apply_concept_patch", &x);
    // The code stays; the headline and the next step say what happened.
    assert_eq!(e["code"], "revision_conflict", "{e}");
    let m = e["message"].as_str().expect("message");
    assert!(
        m.contains("result_revision") && m.contains("base_revision"),
        "{m}"
    );
    assert!(!m.contains("bundle revision changed"), "{m}");
    let step = e["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|x| x["code"] == "recovery_step"))
        .expect("a recovery step");
    assert!(
        step["message"]
            .as_str()
            .is_some_and(|s| s.contains("Pass the preview's base_revision")),
        "{step}"
    );
    unchanged(&b, &before);
    // A bundle that really moved keeps the plain headline.
    let mut y = apply_args(&args, &p);
    y["expected_revision"] = json!(format!("sha256:{}", "1".repeat(64)));
    let e = tool_err("apply_concept_patch", &y);
    assert_eq!(e["message"], "bundle revision changed", "{e}");
}

#[test]
fn papercut_a_missing_at_gives_its_format_and_an_example() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let ops = json!([{"kind": "ensure_verification", "concept_id": "tables/orders",
                      "verification": {"by": "human:ann"}}]);
    let e = tool_err("preview_concept_patch", &patch_args(&b, &ops));
    assert_eq!(e["code"], "schema_validation", "{e}");
    let d = e["diagnostics"]
        .as_array()
        .and_then(|d| {
            d.iter()
                .find(|x| x["field"] == "operations.0.verification.at")
        })
        .unwrap_or_else(|| panic!("a diagnostic on at: {e}"));
    let m = d["message"].as_str().expect("message");
    assert!(m.starts_with("supply at as JSON string; "), "{m}");
    assert!(
        m.contains("RFC 3339") && m.contains("e.g. 2026-01-02T03:04:05Z"),
        "{m}"
    );
    unchanged(&b, &before);
}

#[test]
fn papercut_a_missing_expected_source_says_it_is_the_previews_source() {
    let (_t, b) = copy_bundle(&fixture("demo-v01"));
    let before = snapshot(&b);
    let digest = format!("sha256:{}", "1".repeat(64));
    let e = tool_err(
        "apply_v02_migration",
        &json!({"bundle_path": b, "generated_by": "agent/1.0", "citation_mappings": [],
                "expected_plan_digest": digest, "base_revision": digest}),
    );
    assert_eq!(e["code"], "schema_validation", "{e}");
    let d = e["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|x| x["field"] == "expected_source"))
        .unwrap_or_else(|| panic!("a diagnostic on expected_source: {e}"));
    let m = d["message"].as_str().expect("message");
    assert!(
        m.contains("preview_v02_migration returned as source, passed back unchanged"),
        "{m}"
    );
    assert!(m.contains("e.g. {\"requested_selector\""), "{m}");
    unchanged(&b, &before);
}

#[test]
fn papercut_a_limit_out_of_range_names_the_tools_own_bounds() {
    // Each tool with a `limit` (in registry order), the guidance its own schema gives, and
    // its maximum.
    let migration = "limit must be an integer from 1 to 10000 (default 200 when left out)";
    let phase4 = "limit must be an integer from 1 to 100 (default 20 when left out)";
    let cases = [
        ("apply_v02_migration", migration, 10000),
        ("get_neighbors", phase4, 100),
        (
            "list_concepts",
            "limit must be an integer from 1 to 1000 (default 200 when left out)",
            1000,
        ),
        ("preview_v02_migration", migration, 10000),
        ("search_concepts", phase4, 100),
        ("search_sections", phase4, 100),
        (
            "validate_bundle",
            "limit must be an integer from 1 to 10000 (default 1000 when left out)",
            10000,
        ),
    ];
    // No other tool advertises a `limit`.
    let with_limit: Vec<&str> = okf_mcp::wire::registry::all()
        .iter()
        .filter(|t| {
            okf_mcp::wire::schema::input_schema(t.name)
                .is_some_and(|s| s["properties"].get("limit").is_some())
        })
        .map(|t| t.name)
        .collect();
    assert_eq!(with_limit, cases.map(|c| c.0));
    let (_t, b) = copy_bundle(&fixture("demo-v01"));
    let before = snapshot(&b);
    for (tool, text, max) in cases {
        for (limit, code) in [(0, "schema_validation"), (max + 1, "resource_limit")] {
            let mut args = json!({"bundle_path": b, "limit": limit});
            if tool.ends_with("_migration") {
                args["timestamp_policy"] = json!("preserve");
                args["citation_mappings"] = json!([]);
            }
            if tool.starts_with("search_") {
                args["query"] = json!("orders");
            }
            if tool == "get_neighbors" {
                args["concept_id"] = json!("tables/orders");
            }
            let out = call(tool, &args);
            let e = out.structured();
            assert!(out.is_error(), "{tool}: {e}");
            assert_eq!(e["code"], code, "{tool} {limit}: {e}");
            let d = e["diagnostics"]
                .as_array()
                .and_then(|d| d.iter().find(|x| x["field"] == "limit"))
                .unwrap_or_else(|| panic!("{tool}: a diagnostic on limit: {e}"));
            assert_eq!(d["message"], text, "{tool} {limit}");
            assert!(
                out.second_text().contains(text),
                "{tool}: {}",
                out.second_text()
            );
        }
    }
    unchanged(&b, &before);
}

#[test]
fn papercut_a_duplicate_key_is_named_when_the_tool_advertises_it() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let bp = serde_json::to_string(&b).expect("path");
    let raw = format!(r#"{{"bundle_path":{bp},"concept_id":"tables/orders","concept_id":"x"}}"#);
    let out = run_cli(&["call", "read_concept", "--args", &raw], None);
    let s = out.structured();
    assert_eq!(s["code"], "invalid_request", "{s}");
    assert_eq!(s["message"], "MCP arguments contain a duplicate key");
    assert_eq!(s["diagnostics"][0]["field"], "concept_id", "{s}");
    assert!(out
        .second_text()
        .contains("concept_id appears twice in one object"));
    // A key the tool does not advertise is never said back (spec/surface.md §9.3 rule 1).
    let raw = format!(r#"{{"bundle_path":{bp},"sk_live_SECRET":1,"sk_live_SECRET":2}}"#);
    let out = run_cli(&["call", "read_concept", "--args", &raw], None);
    assert_eq!(out.structured()["code"], "invalid_request");
    assert!(!out.stdout.contains("sk_live_SECRET") && !out.stderr.contains("sk_live_SECRET"));
    unchanged(&b, &before);
}

#[test]
fn papercut_a_missing_concept_points_to_list_concepts() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "tables/nope",
                      "lifecycle": {"status": "deprecated"}}]);
    let (s, text) = readable("preview_concept_patch", &patch_args(&b, &ops));
    assert_eq!(s["status"], "rejected", "{s}");
    let d = s["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|x| x["code"] == "missing_concept"))
        .unwrap_or_else(|| panic!("missing_concept: {s}"));
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("list_concepts")),
        "{d}"
    );
    assert!(text.contains("list_concepts"), "{text}");
    unchanged(&b, &before);
}

#[test]
fn papercut_a_ready_temporal_preview_shows_the_diff_of_its_rewrites() {
    use crate::support::temporal::{map_all, targs};
    let (_t, b) = copy_bundle(&fixture("temporal-date"));
    let first = crate::support::temporal::preview(&targs(&b, None));
    let mappings = map_all(&first["unresolved"], "T00:00:00Z");
    let out = call("preview_temporal_upgrade", &targs(&b, Some(mappings)));
    let s = out.structured();
    assert_eq!(s["status"], "ready", "{s}");
    let text = out.second_text();
    assert!(!text.contains("diff: none"), "{text}");
    assert!(text.contains("\ndiff:\n--- a/"), "{text}");
    // Every rewritten value shows in the diff as a removed date and an added instant.
    for u in first["unresolved"].as_array().expect("unresolved") {
        let from = u["from"].as_str().expect("from");
        assert!(
            text.contains(&format!("{from}T00:00:00Z")),
            "{from} in {text}"
        );
    }
    let changed = text.lines().filter(|l| l.ends_with(": changed")).count();
    let sections = text.lines().filter(|l| l.starts_with("+++ b/")).count();
    assert_eq!(
        changed, sections,
        "one diff section per changed file: {text}"
    );
    assert!(changed > 0);
}

#[test]
fn papercut_write_concept_counts_the_findings_of_other_documents() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    // Other documents with many broken links.
    for i in 0..40 {
        std::fs::write(
            b.join(format!("tables/noisy{i}.md")),
            format!("---\ntype: T\ntitle: N{i}\n---\n\n[a](gone{i}.md) [b](lost{i}.md)\n"),
        )
        .expect("write");
    }
    let out = call(
        "write_concept",
        &json!({"bundle_path": b, "concept_id": "tables/fresh",
                "frontmatter": "type: T\ntitle: Fresh\n", "body": "# Fresh\n\n[x](missing.md)\n"}),
    );
    assert!(!out.is_error(), "{}", out.stdout);
    let d = out.structured()["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .clone();
    let other: Vec<&Value> = d
        .iter()
        .filter(|x| {
            x["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("other_findings:"))
        })
        .collect();
    assert_eq!(other.len(), 1, "{d:?}");
    assert_eq!(other[0]["severity"], "INFO");
    let m = other[0]["message"].as_str().expect("m");
    assert!(
        m.contains("broken_link 40") && m.contains("validate_bundle"),
        "{m}"
    );
    for x in d.iter().filter(|x| !std::ptr::eq(*x, other[0])) {
        assert!(
            x.get("file").is_none_or(|f| f == "tables/fresh.md"),
            "only the written concept's findings: {x}"
        );
    }
    assert!(
        d.iter().any(|x| x["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("broken_link:"))),
        "its own broken link is given: {d:?}"
    );
    assert!(out.stdout.len() < 8_000, "{} bytes", out.stdout.len());
}

#[test]
fn papercut_the_commit_that_creates_okf_says_so() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let store_created = |s: &Value| {
        s["notices"]
            .as_array()
            .expect("notices")
            .iter()
            .filter(|n| n["code"] == "store_created")
            .count()
    };
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue",
                      "lifecycle": {"status": "deprecated"}}]);
    let args = patch_args(&b, &ops);
    let p = preview(&args);
    assert_eq!(store_created(&p), 0, "a preview creates nothing");
    assert!(!b.join(".okf").exists());
    let out = call("apply_concept_patch", &apply_args(&args, &p));
    let a = out.structured();
    assert_eq!(a["status"], "applied", "{a}");
    assert_eq!(store_created(a), 1, "{a}");
    let n = a["notices"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["code"] == "store_created"))
        .expect("notice");
    assert_eq!(n["severity"], "INFO");
    let m = n["message"].as_str().expect("m");
    assert!(m.contains(".okf/") && m.contains(".gitignore"), "{m}");
    assert!(b.join(".okf/.gitignore").is_file());
    // The next commit finds the store: no notice.
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "tables/orders",
                      "lifecycle": {"status": "deprecated"}}]);
    let args = patch_args(&b, &ops);
    let p = preview(&args);
    let out = call("apply_concept_patch", &apply_args(&args, &p));
    assert_eq!(out.structured()["status"], "applied");
    assert_eq!(store_created(out.structured()), 0);
}

#[test]
fn papercut_a_new_sequence_item_follows_its_siblings_style() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let f = b.join("tables/orders.md");
    let text = std::fs::read_to_string(&f).expect("read");
    let text = text.replacen(
        "x-opaque: keep me\n",
        "x-opaque: keep me\nverified:\n  - { by: human:ann, at: 2026-06-01T00:00:00Z }\n",
        1,
    );
    std::fs::write(&f, &text).expect("write");
    let ops = json!([{"kind": "ensure_verification", "concept_id": "tables/orders",
                      "verification": {"by": "human:bob", "at": "2026-07-01T00:00:00Z"}}]);
    let mut args = patch_args(&b, &ops);
    args["temporal_profile"] = json!("instant-0b87c52");
    let p = preview(&args);
    assert_eq!(p["status"], "applicable", "{p}");
    let diff = p["diff"].as_str().expect("diff");
    assert!(
        diff.contains(
            "   - { by: human:ann, at: 2026-06-01T00:00:00Z }\n+  - { by: human:bob, at: 2026-07-01T00:00:00Z }\n"
        ),
        "{diff}"
    );
}

#[test]
fn papercut_hints_under_auto_name_no_profile_and_instructions_explain_idempotent_hint() {
    let mut m = crate::support::client::Mcp::spawn(&[]);
    let init = m.initialize();
    let instructions = init["result"]["instructions"]
        .as_str()
        .expect("instructions")
        .to_owned();
    assert!(
        instructions.contains("idempotentHint false on purpose"),
        "{instructions}"
    );
    m.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = m.request("tools/list", json!({}));
    let apply = list["result"]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "apply_temporal_upgrade"))
        .expect("apply_temporal_upgrade");
    let d = apply["description"].as_str().expect("description");
    assert!(d.contains("Next: validate_bundle"), "{d}");
    assert!(!d.contains("temporal_profile instant-0b87c52"), "{d}");
    m.finish();
}
