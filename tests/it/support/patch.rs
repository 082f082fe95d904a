//! The concept-patch workflow (`preview_concept_patch` → `apply_concept_patch`) through
//! `okf-mcp call`, with the §5.1/§5.2 status invariants every answer is checked against
//! (spec/concept-patch.md). Moved from `patch.rs`.

use crate::support::util::{call, run_cli};
use serde_json::{json, Value};
use std::path::Path;

pub(crate) const ACTOR: &str = "agent:patch-it";

/// Patch arguments for `bundle` (date profile).
pub(crate) fn patch_args(bundle: &Path, ops: &Value) -> Value {
    json!({"bundle_path": bundle, "actor": ACTOR, "operations": ops})
}

/// A revision or plan digest of the canonical shape that names no tree (64 zeros).
pub const ZERO_DIGEST: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// `preview_concept_patch` arguments for the in-process pure checks only: a bundle path that
/// does not exist.
pub fn pure_preview_args(ops: Value) -> Value {
    json!({"bundle_path": "/nonexistent/okf-bundle", "actor": "agent-1", "operations": ops})
}

/// `apply_concept_patch` arguments for the in-process pure checks only: [`pure_preview_args`]
/// with [`ZERO_DIGEST`] expectations (no preview behind them).
pub fn pure_apply_args(ops: Value) -> Value {
    let mut a = pure_preview_args(ops);
    a["expected_revision"] = json!(ZERO_DIGEST);
    a["expected_plan_digest"] = json!(ZERO_DIGEST);
    a
}

/// Preview arguments plus the expectations of `preview`.
pub(crate) fn apply_args(args: &Value, preview: &Value) -> Value {
    let mut a = args.clone();
    a["expected_revision"] = preview["base_revision"].clone();
    a["expected_plan_digest"] = preview["plan_digest"].clone();
    a
}

/// Runs a tool through `okf-mcp call`; returns (isError, structuredContent).
pub(crate) fn tool(name: &str, args: &Value) -> (bool, Value) {
    let text = args.to_string();
    let out = if text.len() > 64 * 1024 {
        run_cli(&["call", name, "--args-file", "-"], Some(text.as_bytes()))
    } else {
        call(name, args)
    };
    assert!(out.stderr.is_empty(), "stderr: {}", out.stderr);
    if let Some(bp) = args["bundle_path"].as_str() {
        // SEC-04: no output carries the absolute bundle path.
        assert!(!out.stdout.contains(bp), "output leaks the bundle path");
    }
    let r = out.result.as_ref().expect("one CallToolResult line");
    let err = r["isError"] == json!(true);
    assert_eq!(out.code, i32::from(err), "exit code matches isError");
    (err, r["structuredContent"].clone())
}

/// A successful preview (asserts the §5.1 invariants of its status).
pub(crate) fn preview(args: &Value) -> Value {
    let (err, s) = tool("preview_concept_patch", args);
    assert!(!err, "preview failed: {s}");
    check_preview(&s);
    s
}

/// A successful apply (asserts the §5.2 invariants of its status).
pub(crate) fn apply(args: &Value) -> Value {
    let (err, s) = tool("apply_concept_patch", args);
    assert!(!err, "apply failed: {s}");
    check_apply(&s);
    s
}

/// An error envelope of `name`; returns it.
pub(crate) fn tool_err(name: &str, args: &Value) -> Value {
    let (err, s) = tool(name, args);
    assert!(err, "expected an error from {name}: {s}");
    s
}

pub(crate) fn severities(s: &Value) -> Vec<String> {
    s["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["severity"].as_str().expect("severity").to_owned())
        .collect()
}

pub(crate) fn codes(s: &Value) -> Vec<String> {
    s["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["code"].as_str().expect("code").to_owned())
        .collect()
}

fn sorted_unique(paths: &Value) -> bool {
    let p: Vec<&str> = paths
        .as_array()
        .expect("paths")
        .iter()
        .map(|v| v.as_str().expect("str"))
        .collect();
    p.windows(2).all(|w| w[0] < w[1])
}

/// spec/concept-patch.md §5.1 state invariants, plus OUT-02 (no receipt/proof keys).
pub(crate) fn check_preview(s: &Value) {
    no_receipt_keys(s);
    let status = s["status"].as_str().expect("status");
    let sev = severities(s);
    assert!(sorted_unique(&s["affected_paths"]), "{s}");
    match status {
        "applicable" => {
            assert_ne!(s["result_revision"], s["base_revision"]);
            assert!(s["diff"] != "" || s["diff_truncated"] == true);
            assert!(!s["affected_paths"].as_array().expect("a").is_empty());
            assert!(!sev.contains(&"ERROR".to_owned()), "{s}");
            assert_eq!(s["unknown_preserved"], true);
        }
        "noop" => {
            assert_eq!(s["result_revision"], s["base_revision"]);
            assert_eq!(s["diff"], "");
            assert_eq!(s["diff_truncated"], false);
            assert_eq!(s["affected_paths"], json!([]));
            assert!(!sev.contains(&"ERROR".to_owned()), "{s}");
            assert_eq!(s["unknown_preserved"], true);
        }
        "rejected" => {
            assert_eq!(s["result_revision"], Value::Null);
            assert_eq!(s["diff"], "");
            assert_eq!(s["diff_truncated"], false);
            assert_eq!(s["affected_paths"], json!([]));
            assert!(sev.contains(&"ERROR".to_owned()), "{s}");
            assert_eq!(s["unknown_preserved"], false);
        }
        other => panic!("unexpected preview status {other}"),
    }
}

/// spec/concept-patch.md §5.2 state invariants, plus OUT-02.
pub(crate) fn check_apply(s: &Value) {
    no_receipt_keys(s);
    let sev = severities(s);
    assert!(sorted_unique(&s["changed_paths"]), "{s}");
    assert!(s["base_revision"].is_string() && s["result_revision"].is_string());
    match s["status"].as_str().expect("status") {
        "applied" => {
            assert_ne!(s["result_revision"], s["base_revision"]);
            assert!(!s["changed_paths"].as_array().expect("a").is_empty());
            assert!(sev.iter().all(|x| x == "INFO"), "{s}");
        }
        "noop" => {
            assert_eq!(s["result_revision"], s["base_revision"]);
            assert_eq!(s["changed_paths"], json!([]));
            assert!(sev.iter().all(|x| x == "INFO"), "{s}");
        }
        "rejected" => {
            assert_eq!(s["result_revision"], s["base_revision"]);
            assert_eq!(s["changed_paths"], json!([]));
            assert!(sev.contains(&"ERROR".to_owned()), "{s}");
        }
        other => panic!("unexpected apply status {other}"),
    }
}

/// OUT-02: no `receipt` or `proof` key anywhere in the output.
pub(crate) fn no_receipt_keys(v: &Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                assert!(k != "receipt" && k != "proof", "output key {k}");
                no_receipt_keys(x);
            }
        }
        Value::Array(a) => a.iter().for_each(no_receipt_keys),
        _ => {}
    }
}

/// Writes a test file (the store is the only writer in `src/`; clippy bans `fs::write`).
pub(crate) fn put(p: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(p)?
        .write_all(bytes.as_ref())
}

pub(crate) fn has_okf(b: &Path) -> bool {
    b.join(".okf").symlink_metadata().is_ok()
}

/// Number of files in `.okf/receipts/`.
pub(crate) fn receipts(b: &Path) -> usize {
    std::fs::read_dir(b.join(".okf/receipts")).map_or(0, |d| {
        d.filter(|e| e.as_ref().is_ok_and(|e| e.path().is_file()))
            .count()
    })
}
