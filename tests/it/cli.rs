//! CLI-01…05 (spec/surface.md §1.2).

use crate::support::util::*;
use serde_json::json;

#[test]
fn cli_01_list_concepts_one_line_exit_0_and_equals_mcp() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let args = json!({"bundle_path": b});
    let out = call("list_concepts", &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1);
    assert!(out.stderr.is_empty());
    let r = out.result.as_ref().expect("json");
    let keys: Vec<_> = r.as_object().expect("object").keys().cloned().collect();
    assert_eq!(keys, ["content", "structuredContent", "isError"]);
    let mut mcp = Mcp::start();
    let m = mcp.call("list_concepts", &args);
    assert_eq!(identity(&m), identity(r));
    let (code, _, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "stderr: {stderr}");
}

#[test]
fn cli_03_usage_errors_exit_2_with_one_stderr_line() {
    let secret = "sk_live_SECRET";
    let (_t, b) = copy_bundle(&fixture("demo"));
    let args = json!({"bundle_path": b, "x": secret}).to_string();
    let f = tempfile::NamedTempFile::new().expect("tmp");
    let fpath = f.path().to_string_lossy().into_owned();
    let missing = format!("{fpath}.missing");
    let cases: Vec<Vec<&str>> = vec![
        vec!["call", "no_such_tool", "--args", &args],
        vec!["call", "list_concepts", "--frobnicate", &args],
        vec![
            "call",
            "list_concepts",
            "--args",
            &args,
            "--args-file",
            &fpath,
        ],
        vec!["call", "list_concepts"],
        vec!["call", "list_concepts", "--args-file", &missing],
        vec!["frobnicate"],
    ];
    for c in cases {
        let out = run_cli(&c, None);
        assert_eq!(out.code, 2, "{c:?}");
        assert!(out.stdout.is_empty(), "{c:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{c:?}: {}", out.stderr);
        assert!(!out.stderr.contains(secret));
    }
}

#[test]
fn cli_05_args_file_dash_reads_stdin() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let args = json!({"bundle_path": b}).to_string();
    let out = run_cli(
        &["call", "list_concepts", "--args-file", "-"],
        Some(args.as_bytes()),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.structured()["concepts"][0]["id"], "metrics/revenue");
}
