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

/// Issue 21 item 5: an unknown tool name points to `okf-mcp tools`, on the command line (exit
/// 2, one stderr line) and over MCP (the `-32602` message).
#[test]
fn an_unknown_tool_name_points_to_okf_mcp_tools() {
    let out = run_cli(&["call", "no_such_tool", "--args", "{}"], None);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown tool name") && out.stderr.contains("okf-mcp tools"),
        "{}",
        out.stderr
    );
    let mut mcp = Mcp::start();
    let m = mcp.call_raw(7, "no_such_tool", b"{}");
    assert_eq!(m["error"]["code"], -32602, "{m}");
    let msg = m["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("tools/list") && msg.contains("okf-mcp tools"),
        "{m}"
    );
    mcp.finish();
}

/// Issue 21 item 5: a bare `okf-mcp` whose standard input is a terminal says, in one stderr
/// line, that it speaks MCP on stdin and how to get help; on a pipe it prints nothing.
/// The terminal is util-linux `script`'s pseudo-terminal; its end of input ends the server.
#[test]
fn a_bare_okf_mcp_on_a_terminal_prints_one_line_and_on_a_pipe_nothing() {
    let line = bin().to_string_lossy().into_owned();
    let out = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux `script` must be installed: it gives the binary a terminal");
    let tty = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert_eq!(out.status.code(), Some(0), "terminal: {tty:?}");
    let lines: Vec<&str> = tty.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "terminal: {tty:?}");
    assert!(
        lines[0].starts_with("okf-mcp: this is an MCP server speaking JSON-RPC on standard input")
            && lines[0].contains("okf-mcp --help"),
        "terminal: {tty:?}"
    );
    let piped = run_cli(&[], Some(b""));
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(
        piped.stdout.is_empty() && piped.stderr.is_empty(),
        "{piped:?}"
    );
}
