//! The real-client test: the official Python MCP SDK (installed by `.ci/run` into
//! `target/mcp-venv`) lists the tools and calls each read tool. The SDK validates every
//! success against the advertised (loosened) `outputSchema` itself (spec/surface.md §18.6
//! rule 3a); the script validates each error envelope against it (the SDK skips errors), and
//! every `structuredContent`, error envelopes included, against the checked-in full output
//! schema.

use crate::support::util::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

fn python() -> std::path::PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/python");
    assert!(
        p.exists(),
        "the Python MCP SDK is missing: run `bash .ci/run` (it creates target/mcp-venv)"
    );
    p
}

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
    ]});
    let plan = tempfile::NamedTempFile::new().expect("plan file");
    #[allow(clippy::disallowed_methods)]
    std::fs::write(plan.path(), calls.to_string()).expect("write plan");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_client.py");
    let out = Command::new(python())
        .arg(script)
        .arg(bin())
        .arg(plan.path())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas"))
        .output()
        .expect("run python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reports: Vec<Value> = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "client report not JSON ({e}); stdout: {stdout}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(reports.len(), 2);
    for r in &reports {
        assert_eq!(r["failures"], json!([]), "mode {}: {r:#}", r["mode"]);
        let names: Vec<&str> = r["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().expect("name"))
            .collect();
        for t in ["list_concepts", "read_concept", "validate_bundle"] {
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
