//! Server lifecycle and CLI hardening over the real binary: SRV-04, SRV-06, CLI-02, CLI-04,
//! EOF and signal shutdown (spec/surface.md §1, §1.2, spec/rust-notes.md §3.6), handler
//! panics (README R28). CAN-01 is proven at library level in
//! `src/server/mcp.rs::tests::can_01_cancelled_at_dispatch_wins_over_every_other_fault_without_diagnostics`
//! (a request cancelled before dispatch gets no reply over the wire: rmcp drops it).

use crate::support::raw::{assert_tool_error, cli_raw, MISSING_BUNDLE};
use crate::support::util::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn srv_04_server_name_silent_stderr_and_only_json_rpc_on_stdout() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let mut s = Mcp::start();
    let l = s.call_raw(
        1,
        "list_concepts",
        json!({"bundle_path": b}).to_string().as_bytes(),
    );
    assert_eq!(l["result"]["isError"], false);
    let e = s.call_raw(2, "list_concepts", b"[]");
    assert_eq!(e["result"]["isError"], true);
    s.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert!(s.read_id(&json!(3))["result"]["tools"].is_array());
    s.send(b"\xff garbage that is ignored");
    let (code, rest, stderr) = s.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "stderr: {stderr}");
    for line in rest.lines() {
        let v: Value = serde_json::from_str(line).expect("JSON-RPC only");
        assert_eq!(v["jsonrpc"], "2.0");
    }
}

#[test]
fn srv_06_tool_errors_have_the_exact_envelope_over_mcp_and_cli() {
    let mut s = Mcp::start();
    // Boundary, schema and bundle_path faults: three different pipeline steps.
    let cases: [(&[u8], &str); 3] = [
        (b"[]", "invalid_request"),
        (b"{\"bundle_path\":\"\"}", "schema_validation"),
        (
            b"{\"bundle_path\":\"/nonexistent/okf-mcp-raw-tests/bundle\"}",
            "invalid_request",
        ),
    ];
    for (i, (raw, code)) in cases.iter().enumerate() {
        let cli = cli_raw("list_concepts", raw);
        assert_eq!(cli.code, 1);
        let r = cli.result.clone().expect("result");
        let msg = r["structuredContent"]["message"]
            .as_str()
            .expect("message")
            .to_owned();
        assert!(!msg.is_empty());
        assert_tool_error(&r, code, &msg);
        let m = s.call_raw(i64::try_from(i).expect("small") + 1, "list_concepts", raw);
        assert_eq!(identity(&m["result"]), identity(&r));
    }
    s.finish();
}

#[test]
fn cli_02_read_concept_unknown_concept_is_a_tool_error_exit_1() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let out = call(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "metrics/no_such_concept"}),
    );
    assert_eq!(out.code, 1, "stderr: {}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1);
    assert!(out.stderr.is_empty());
    assert!(out.is_error());
    let sc = out.structured();
    // `concept_not_found` once read_concept is implemented; any tool error maps to exit 1.
    let code = sc["code"].as_str().expect("code");
    assert!(
        code == "concept_not_found" || code == "operation_rejected",
        "{sc}"
    );
    crate::support::util::assert_error_texts(out.result.as_ref().expect("result"));
    assert_eq!(snapshot(&b), before);
}

#[test]
fn cli_04_args_file_with_invalid_utf8_is_invalid_request_exit_1_no_io() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let mut raw = format!("{{\"bundle_path\":{},\"x\":\"", json!(b)).into_bytes();
    raw.extend_from_slice(b"\x80\"}");
    let out = cli_raw("list_concepts", &raw);
    assert_eq!(out.code, 1);
    assert!(out.stderr.is_empty());
    assert_tool_error(
        out.result.as_ref().expect("result"),
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
    // The same bytes through `--args-file -` and through `--args`.
    let stdin = run_cli(&["call", "list_concepts", "--args-file", "-"], Some(&raw));
    assert_eq!(stdin.stdout, out.stdout);
    assert_eq!(stdin.code, 1);
    let via_args = {
        use std::os::unix::ffi::OsStrExt;
        let o = Command::new(bin())
            .args(["call", "list_concepts", "--args"])
            .arg(std::ffi::OsStr::from_bytes(&raw))
            .stdin(Stdio::null())
            .output()
            .expect("run");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    assert_eq!(via_args, (Some(1), out.stdout.clone()));
}

#[test]
fn cli_usage_errors_never_echo_arguments_and_present_bad_args_are_tool_errors() {
    let secret = "sk_live_CLI_SECRET";
    let out = run_cli(&["call", secret, "--args", "{}"], None);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert_eq!(out.stderr.lines().count(), 1);
    assert!(!out.stderr.contains(secret));
    let out = run_cli(&["call", "list_concepts", &format!("--{secret}")], None);
    assert_eq!(out.code, 2);
    assert!(!out.stderr.contains(secret), "{}", out.stderr);
    // Present but invalid JSON: a tool error, exit 1, not a usage error.
    let out = run_cli(&["call", "list_concepts", "--args", secret], None);
    assert_eq!(out.code, 1);
    assert!(out.is_error());
    assert!(!out.stdout.contains(secret));
}

#[test]
fn eof_exits_0_after_answering_every_pipelined_request() {
    // All requests written at once, then EOF: every request gets its response, then exit 0.
    // Since spec/surface.md §18.7 rule 4 EOF finishes the requests in flight: none is
    // answered `operation_cancelled`.
    let mut s = Mcp::spawn(&[]);
    let mut input = String::new();
    input.push_str(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}).to_string());
    input.push('\n');
    input.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for id in 1..=5 {
        input.push_str(
            &json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"list_concepts","arguments":{"bundle_path": MISSING_BUNDLE}}})
                .to_string(),
        );
        input.push('\n');
    }
    s.write(input.as_bytes());
    s.close_stdin(); // EOF
    let code = s
        .wait_exit(Duration::from_secs(60))
        .expect("server exited after EOF");
    let (_, out, err) = s.finish();
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
    let mut ids: Vec<i64> = Vec::new();
    for line in out.lines() {
        let v: Value = serde_json::from_str(line).expect("JSON-RPC");
        if let Some(id) = v["id"].as_i64() {
            if id > 0 {
                let code = &v["result"]["structuredContent"]["code"];
                assert_eq!(code, "invalid_request", "{v}");
            }
            ids.push(id);
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
}

fn signal_with_stdin_open_exits(sig: &str) {
    let mut s = Mcp::start();
    let l = s.call_raw(1, "list_concepts", b"[]");
    assert_eq!(l["result"]["isError"], true);
    s.signal(sig);
    // stdin stays open (the session still owns it): the server must not hang on its read.
    let code = s.wait_exit(Duration::from_secs(30));
    assert_eq!(
        code,
        Some(0),
        "server did not exit after SIG{sig} with stdin open"
    );
    let (_, rest, stderr) = s.finish();
    assert!(rest.is_empty(), "{rest}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn sigterm_with_stdin_held_open_exits() {
    signal_with_stdin_open_exits("TERM");
}

#[test]
fn sigint_with_stdin_held_open_exits() {
    signal_with_stdin_open_exits("INT");
}

#[cfg(feature = "fault-injection")]
#[test]
fn r28_handler_panic_is_json_rpc_32603_never_a_tool_result() {
    let secret = "sk_live_PANIC_SECRET";
    let mut s = Mcp::start_with(&[("OKF_MCP_TEST_PANIC", "list_concepts")]);
    let m = s.call_raw(
        1,
        "list_concepts",
        json!({"bundle_path": secret}).to_string().as_bytes(),
    );
    assert!(m.get("result").is_none(), "{m}");
    assert_eq!(m["error"]["code"], -32603);
    assert_eq!(m["error"]["message"], "internal error in tool handler");
    assert!(!m.to_string().contains(secret));
    // The server keeps serving.
    s.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert!(s.read_id(&json!(2))["result"]["tools"].is_array());
    let (code, _, stderr) = s.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "panic output reached stderr: {stderr}");
}

#[cfg(feature = "fault-injection")]
#[test]
fn r28_cli_handler_panic_exits_3_with_one_fixed_stderr_line() {
    let secret = "sk_live_PANIC_SECRET";
    let o = Command::new(bin())
        .args(["call", "list_concepts", "--args"])
        .arg(json!({"bundle_path": secret}).to_string())
        .env("OKF_MCP_TEST_PANIC", "list_concepts")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(3));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err, "okf-mcp: internal error in tool handler\n");
}
