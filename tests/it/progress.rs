//! MCP progress over stdio (spec/migration.md §12.5 rule 4): with `_meta.progressToken`, a
//! preview of a 2,000-file bundle gets increasing `notifications/progress` before its
//! response; without a token, none; nothing follows the response.

#![allow(clippy::disallowed_methods)] // tests build their own temp trees

use crate::util::Mcp;
use serde_json::{json, Value};

fn big_bundle() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let b = tmp.path().join("bundle");
    for i in 0..2_000 {
        let p = b.join(format!("d{:02}/c{i:04}.md", i % 40));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, format!("---\ntype: note\ntitle: C{i}\n---\n# C{i}\n")).expect("write");
    }
    std::fs::write(
        b.join("index.md"),
        "---\nokf_version: \"0.2\"\ntitle: Big\n---\n# Big\n",
    )
    .expect("index");
    (tmp, b)
}

fn preview_lines(mcp: &mut Mcp, bundle: &str, meta: Option<Value>) -> Vec<Value> {
    let mut params = json!({"name": "preview_concept_patch", "arguments": {
        "bundle_path": bundle, "actor": "agent:progress",
        "operations": [{"kind": "set_lifecycle", "concept_id": "d00/c0000",
                        "lifecycle": {"status": "deprecated", "stale_after": null}}]}});
    if let Some(m) = meta {
        params["_meta"] = m;
    }
    mcp.request_raw("tools/call", params)
        .iter()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

#[test]
fn progress_notifications_precede_the_response_only_with_a_token() {
    let (_tmp, b) = big_bundle();
    let bundle = b.to_str().expect("utf-8");
    let mut mcp = Mcp::start();

    let lines = preview_lines(&mut mcp, bundle, Some(json!({"progressToken": "tok-1"})));
    let (response, before) = lines.split_last().expect("a response");
    assert_eq!(
        response["result"]["structuredContent"]["status"],
        "applicable"
    );
    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(
        progress.len() >= 2,
        "expected >= 2 progress notifications, got {before:?}"
    );
    let mut last = -1.0;
    for n in &progress {
        assert_eq!(n["params"]["progressToken"], "tok-1");
        let p = n["params"]["progress"].as_f64().expect("progress");
        assert!(p > last, "progress must increase: {progress:?}");
        last = p;
        assert!(n["params"]["message"].is_string());
        assert!(!n.to_string().contains(bundle), "no paths in progress");
    }
    assert_eq!(
        progress.last().expect("last")["params"]["total"],
        json!(2001.0)
    );

    // Without a token: none. The next response also shows nothing trailed the first one.
    let lines = preview_lines(&mut mcp, bundle, None);
    assert_eq!(lines.len(), 1, "no notification without a token: {lines:?}");
    assert!(lines[0]["result"].is_object());
    let (code, _, stderr) = mcp.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
}
