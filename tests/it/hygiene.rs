//! SEC-04 / SEC-05: output and filesystem hygiene of whole sessions.
//!
//! Every CLI call and MCP message of the suite is also checked by `util::run_cli` /
//! `client::Mcp::read` (no host temp path in any output; nothing on stderr in a normal run).

use crate::util::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};

fn call_in(cwd: &std::path::Path, tmpdir: &std::path::Path, tool: &str, args: &Value) -> Value {
    let out = Command::new(bin())
        .args(["call", tool, "--args", &args.to_string()])
        .current_dir(cwd)
        .env("TMPDIR", tmpdir)
        .env("HOME", tmpdir)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(
        out.stderr.is_empty(),
        "{tool}: stderr {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_no_host_path(&stdout);
    serde_json::from_str(stdout.trim()).expect("one JSON line")
}

#[test]
fn sec_04_05_a_whole_session_writes_nothing_outside_the_bundle_and_nothing_on_stderr() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let cwd = tempfile::tempdir().expect("cwd");
    let tmpdir = tempfile::tempdir().expect("tmpdir");
    let bp = b.to_string_lossy().into_owned();
    call_in(
        cwd.path(),
        tmpdir.path(),
        "list_concepts",
        &json!({"bundle_path": bp}),
    );
    call_in(
        cwd.path(),
        tmpdir.path(),
        "read_concept",
        &json!({"bundle_path": bp, "concept_id": "tables/orders"}),
    );
    call_in(
        cwd.path(),
        tmpdir.path(),
        "validate_bundle",
        &json!({"bundle_path": bp, "strict": true}),
    );
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "tables/orders", "lifecycle": {"status": "draft", "stale_after": null}}]);
    let p = call_in(
        cwd.path(),
        tmpdir.path(),
        "preview_concept_patch",
        &json!({"bundle_path": bp, "actor": "t", "operations": ops}),
    );
    let s = &p["structuredContent"];
    let a = call_in(
        cwd.path(),
        tmpdir.path(),
        "apply_concept_patch",
        &json!({
        "bundle_path": bp, "actor": "t", "operations": ops,
        "expected_revision": s["base_revision"], "expected_plan_digest": s["plan_digest"]}),
    );
    assert_eq!(a["structuredContent"]["status"], "applied");
    let w = call_in(
        cwd.path(),
        tmpdir.path(),
        "write_concept",
        &json!({
        "bundle_path": bp, "concept_id": "notes/x", "frontmatter": "type: Note\n", "body": "x\n"}),
    );
    assert_eq!(w["structuredContent"]["status"], "success", "{w}");
    // Bad input too.
    call_in(
        cwd.path(),
        tmpdir.path(),
        "read_concept",
        &json!({"bundle_path": bp, "concept_id": "no/such"}),
    );
    call_in(
        cwd.path(),
        tmpdir.path(),
        "list_concepts",
        &json!({"bundle_path": "relative"}),
    );
    for dir in [cwd.path(), tmpdir.path()] {
        let left: Vec<_> = std::fs::read_dir(dir).expect("read_dir").collect();
        assert!(
            left.is_empty(),
            "files created outside the bundle: {left:?}"
        );
    }
    // Inside the bundle: only the written files and `.okf/`.
    let mut new: Vec<String> = snapshot(&b)
        .into_keys()
        .filter(|p| !p.starts_with(".okf"))
        .collect();
    new.retain(|p| !snapshot(&fixture("demo")).contains_key(p));
    assert_eq!(new, ["notes/", "notes/x.md"]);
}

#[test]
fn sec_05_mcp_session_keeps_stderr_empty() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let mut m = Mcp::start();
    m.request("tools/list", json!({}));
    m.call("list_concepts", &json!({"bundle_path": b}));
    m.call(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "../x"}),
    );
    m.call(
        "validate_bundle",
        &json!({"bundle_path": b, "sk_live_SECRET": "hunter2"}),
    );
    let (code, _, stderr) = m.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
}
