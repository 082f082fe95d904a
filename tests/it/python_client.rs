//! The real-client test: the official Python MCP SDK (installed by `.ci/run` into
//! `target/mcp-venv`) lists the tools and calls each read tool. The SDK validates every
//! success against the advertised (loosened) `outputSchema` itself (spec/surface.md §18.6
//! rule 3a); the script validates each error envelope against it (the SDK skips errors), and
//! every `structuredContent`, error envelopes included, against the checked-in full output
//! schema.

use crate::support::real_client::{installed_or_fail, plan_file, repo_path, run_report};
use crate::support::util::*;
use serde_json::json;
use std::process::Command;

#[test]
fn aut_12_python_sdk_lists_tools_and_validates_every_result_against_output_schema() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let missing = b.join("does-not-exist");
    let calls = json!({"calls": [
        {"tool": "list_concepts", "args": {"bundle_path": b}, "expect_error": false},
        {"tool": "list_concepts", "args": {"bundle_path": missing}, "expect_error": true},
        {"tool": "read_concept", "args": {"bundle_path": b, "concept_id": "tables/orders"}, "expect_error": false},
        {"tool": "read_concept", "args": {"bundle_path": b, "concept_id": "no/such"}, "expect_error": true},
        {"tool": "validate_bundle", "args": {"bundle_path": b}, "expect_error": false},
        {"tool": "validate_bundle", "args": {"bundle_path": b, "strict": "yes"}, "expect_error": true},
        {"tool": "search_concepts", "args": {"bundle_path": b, "query": "orders"}, "expect_error": false},
        {"tool": "search_concepts", "args": {"bundle_path": b, "query": "x", "cursor": "nope"}, "expect_error": true},
        {"tool": "search_sections", "args": {"bundle_path": b, "query": "order amount"}, "expect_error": false},
        {"tool": "search_sections", "args": {"bundle_path": b, "query": "?!"}, "expect_error": true},
        {"tool": "get_neighbors", "args": {"bundle_path": b, "concept_id": "tables/orders", "direction": "in"}, "expect_error": false},
        {"tool": "get_neighbors", "args": {"bundle_path": b, "concept_id": "no/such"}, "expect_error": true},
        {"tool": "get_semantic_graph", "args": {"bundle_path": b}, "expect_error": false},
        {"tool": "get_semantic_graph", "args": {"bundle_path": b, "concept_ids": ["no/such"]}, "expect_error": true},
    ]});
    let venv = installed_or_fail("mcp-venv", &["bin/python"], "the Python MCP SDK");
    let plan = plan_file(&calls);
    let out = run_report(
        Command::new(venv.join("bin/python"))
            .arg(repo_path("tests/python/mcp_client.py"))
            .arg(bin())
            .arg(plan.path())
            .arg(repo_path("schemas")),
        "Python client",
    );
    let reports = out.json.as_array().expect("one report per mode");
    assert_eq!(reports.len(), 2);
    for r in reports {
        assert_eq!(r["failures"], json!([]), "mode {}: {r:#}", r["mode"]);
        let names: Vec<&str> = r["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().expect("name"))
            .collect();
        for t in [
            "list_concepts",
            "read_concept",
            "validate_bundle",
            "search_concepts",
            "search_sections",
            "get_neighbors",
            "get_semantic_graph",
        ] {
            assert!(names.contains(&t), "{t} listed");
        }
        for t in r["tools"].as_array().expect("tools") {
            assert_eq!(t["has_output_schema"], json!(true), "{t}");
            assert!(t["title"].as_str().is_some_and(|s| !s.is_empty()), "{t}");
            assert_eq!(t["annotations"]["openWorldHint"], json!(false));
        }
        for c in r["calls"].as_array().expect("calls") {
            assert_eq!(c["validated"], json!(true), "{c:#}");
        }
    }
    assert!(out.status.success());
    assert_eq!(snapshot(&b), before, "tree unchanged");
    assert!(!b.join(".okf").exists());
}
