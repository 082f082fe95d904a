//! RAW-09: the framing layer in front of rmcp (spec/surface.md §1.1, README R39, R43), over
//! the real binary. The side table being empty after every response is proven in
//! `src/server/mcp.rs::tests::raw_09_side_table_is_empty_once_every_response_is_sent`.

use crate::support::raw::{assert_tool_error, both, cli_raw, MISSING_BUNDLE};
use crate::support::util::*;
use serde_json::{json, Value};

#[test]
fn raw_09_invalid_utf8_inside_arguments_answers_that_id_like_the_cli() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let mut mcp = Mcp::start();
    let mut raw = format!("{{\"bundle_path\":{},\"k\":\"", json!(b)).into_bytes();
    raw.extend_from_slice(b"\xed\xa0\x80\"}"); // CESU-encoded surrogate: invalid UTF-8
    both(
        &mut mcp,
        41,
        &raw,
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    let raw = format!(r#"{{"bundle_path":{},"k":"\ud800"}}"#, json!(b));
    both(
        &mut mcp,
        42,
        raw.as_bytes(),
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    mcp.finish();
    assert_eq!(snapshot(&b), before);
}

#[test]
fn raw_09_broken_json_outside_valid_arguments_is_invalid_request_and_the_tool_does_not_run() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let args = json!({"bundle_path": b}).to_string();
    let mut mcp = Mcp::start();
    // The same arguments in a well-formed frame succeed: the tool would run.
    let ok = mcp.call_raw(1, "list_concepts", args.as_bytes());
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    // The frame breaks after the arguments.
    let mut f = tools_call_frame(2, "list_concepts", args.as_bytes());
    f.pop();
    f.extend_from_slice(br#","_meta":{"k":}}"#);
    mcp.send(&f);
    let m = mcp.read_id(&json!(2));
    assert_tool_error(
        &m["result"],
        "invalid_request",
        "MCP arguments are not valid JSON",
    );
    // Not UTF-8 outside the arguments.
    let mut f = tools_call_frame(3, "list_concepts", args.as_bytes());
    f.pop();
    f.extend_from_slice(b",\"_meta\":{\"k\":\"\xff\"}}");
    mcp.send(&f);
    let m = mcp.read_id(&json!(3));
    assert_tool_error(
        &m["result"],
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    // Trailing garbage after the frame.
    let mut f = tools_call_frame(4, "list_concepts", args.as_bytes());
    f.extend_from_slice(b" x");
    mcp.send(&f);
    let m = mcp.read_id(&json!(4));
    assert_tool_error(
        &m["result"],
        "invalid_request",
        "MCP arguments are not valid JSON",
    );
    mcp.finish();
}

#[test]
fn raw_09_non_object_arguments_are_a_tool_error_never_32600() {
    let mut mcp = Mcp::start();
    for (id, raw) in [(1, &b"[]"[..]), (2, b"null"), (3, b"\"x\""), (4, b"7")] {
        let m = mcp.call_raw(id, "list_concepts", raw);
        assert!(m.get("error").is_none(), "{m}");
        assert_tool_error(
            &m["result"],
            "invalid_request",
            "MCP arguments must be a JSON object",
        );
    }
    // Absent arguments = `{}`: the schema answers (bundle_path is required).
    mcp.send(
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_concepts"}}"#,
    );
    let m = mcp.read_id(&json!(5));
    assert_eq!(
        m["result"]["structuredContent"]["code"],
        "schema_validation"
    );
    let cli = cli_raw("list_concepts", b"{}");
    assert_eq!(
        identity(&m["result"]),
        identity(cli.result.as_ref().expect("result"))
    );
    mcp.finish();
}

#[test]
fn raw_09_frame_over_rmcps_16_mib_line_cap_gets_its_tool_result() {
    // A 17 MiB argument line (rmcp alone would drop it without a reply). The `write_concept`
    // 16 MiB body case is `write_concept.rs::raw_09_sixteen_mib_body_over_mcp_gets_its_resource_limit`.
    let big = "a".repeat(17 * 1024 * 1024);
    let raw = json!({"bundle_path": big}).to_string();
    let mut mcp = Mcp::start();
    let m = mcp.call_raw(7, "list_concepts", raw.as_bytes());
    assert_eq!(m["result"]["isError"], true, "{}", m["error"]);
    assert_eq!(m["result"]["structuredContent"]["code"], "resource_limit");
    let text = m.to_string();
    assert!(!text.contains("aaaa"), "the argument value was echoed");
    mcp.finish();
}

#[test]
fn raw_09_line_over_72_mib_with_id_and_name_first_is_resource_limit() {
    let mut f = tools_call_frame(9, "list_concepts", b"");
    f.extend_from_slice(format!("{{\"bundle_path\":\"{MISSING_BUNDLE}\",\"x\":\"").as_bytes());
    f.resize(72 * 1024 * 1024 + 1024, b'z');
    f.extend_from_slice(b"\"}}}");
    let mut mcp = Mcp::start();
    mcp.send(&f);
    let m = mcp.read_id(&json!(9));
    let sc = &m["result"]["structuredContent"];
    assert_eq!(m["result"]["isError"], true, "{m}");
    assert_eq!(sc["code"], "resource_limit");
    assert_eq!(sc["retryable"], false);
    // The session goes on.
    let l = mcp.call_raw(10, "list_concepts", b"[]");
    assert_eq!(l["result"]["isError"], true);
    let (code, rest, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(rest.is_empty(), "{rest}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn raw_09_line_over_72_mib_without_id_first_gets_no_reply() {
    let mut f = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_concepts","arguments":{"x":""#.to_vec();
    f.resize(72 * 1024 * 1024 + 1024, b'z');
    f.extend_from_slice(br#""}},"id":11}"#);
    let mut mcp = Mcp::start();
    mcp.send(&f);
    // The next message is the answer to the next request: nothing answered the long line.
    let m = mcp.call_raw(12, "list_concepts", b"[]");
    assert_eq!(m["id"], 12);
    let (code, rest, _) = mcp.finish();
    assert_eq!(code, 0);
    assert!(rest.is_empty(), "{rest}");
}

#[test]
fn raw_09_sto_21_unrecoverable_lines_get_json_rpc_errors_and_the_next_request_is_answered() {
    let mut mcp = Mcp::start();
    // (line, the error code answered; None: no reply). spec/surface.md §18.8 supersedes the
    // "ignored" of §1.1 step 6: a line that is not JSON gets −32700 with `id: null`.
    let lines: [(&[u8], Option<i64>); 9] = [
        // A malformed notification (no id): no reply.
        (br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_concepts","arguments":{}}"#, None),
        (br#"{"jsonrpc":"2.0","id":,"method":"tools/call","params":{"name":"list_concepts"}}"#, Some(-32700)),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"", Some(-32700)),
        (b"\xff\xfe not json at all", Some(-32700)),
        (b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"arguments\":{}},", Some(-32700)),
        // A blank line: no reply.
        (b"   ", None),
        // A batch: −32600.
        (br#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#, Some(-32600)),
        // Not JSON-RPC 2.0: −32600 with the id.
        (br#"{"id":5,"method":"ping"}"#, Some(-32600)),
        (br#"{"jsonrpc":"2.0","id":6}"#, Some(-32600)),
    ];
    for (l, _) in lines {
        mcp.send(l);
    }
    mcp.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    // `read` asserts every line is JSON-RPC: the replies come in line order, then id 3.
    for (l, code) in lines {
        let Some(code) = code else { continue };
        let m = mcp.read();
        assert_eq!(
            m["error"]["code"],
            code,
            "{}: {m}",
            String::from_utf8_lossy(l)
        );
        let want_id = match code {
            -32600 => serde_json::from_slice::<Value>(l)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .unwrap_or(Value::Null),
            _ => Value::Null,
        };
        assert_eq!(m["id"], want_id, "{}: {m}", String::from_utf8_lossy(l));
        assert!(m.get("result").is_none());
    }
    let m = mcp.read();
    assert_eq!(m["id"], 3, "{m}");
    assert!(m["result"]["tools"].is_array());
    let (code, rest, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(rest.is_empty(), "nothing more was answered: {rest}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// STO-22's framing part (spec/surface.md §18.8, issue 25 item 4), over stdio: malformed
/// notifications (no `id` member: `params` an array, a string, a number, `true`) get no
/// reply, whatever their method; a request whose `id` is not a string or an integer that fits
/// i64 (`1.5`, 2^64, `1e308`, an object, an array, `true`, `null`) is an Invalid Request whose
/// −32600 reply carries `"id": null`; a request with a valid id but unreadable `params` gets
/// −32600 with that id. Then the next request is answered, and nothing else is written.
#[test]
fn sto_22_malformed_notifications_get_no_reply_and_every_32600_carries_an_id() {
    let mut mcp = Mcp::start();
    let mut lines: Vec<(String, Option<Value>)> = Vec::new();
    for method in [
        "ping",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "resources/list",
    ] {
        for params in ["[]", "\"x\"", "7", "true"] {
            lines.push((
                format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#),
                None,
            ));
        }
    }
    for id in [
        "1.5",
        "18446744073709551616",
        "1e308",
        "{}",
        "[]",
        "true",
        "null",
    ] {
        for method in ["ping", "tools/list", "tools/call"] {
            lines.push((
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#),
                Some(Value::Null),
            ));
        }
    }
    for (id, want) in [
        ("11", json!(11)),
        ("\"s-12\"", json!("s-12")),
        ("-13", json!(-13)),
        ("14.0", json!(14)),
    ] {
        lines.push((
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":[]}}"#),
            Some(want),
        ));
    }
    for (l, _) in &lines {
        mcp.send(l.as_bytes());
    }
    mcp.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    for (l, want) in &lines {
        let Some(want) = want else { continue };
        let m = mcp.read();
        assert_eq!(m["error"]["code"], -32600, "{l}: {m}");
        assert!(
            m.as_object().is_some_and(|o| o.contains_key("id")),
            "{l}: no id member: {m}"
        );
        assert_eq!(&m["id"], want, "{l}: {m}");
    }
    let m = mcp.read();
    assert_eq!(m["id"], 3, "the next request: {m}");
    assert!(m["result"]["tools"].is_array());
    let (code, rest, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(rest.is_empty(), "nothing more was answered: {rest}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn raw_09_unknown_tool_is_passed_on_and_rmcp_answers_32602() {
    let mut mcp = Mcp::start();
    let m = mcp.call_raw(5, "no_such_tool", br#"{"a":1,"a":2}"#);
    assert_eq!(m["error"]["code"], -32602, "{m}");
    assert!(m.get("result").is_none());
    // Also for a broken line naming an unknown tool.
    mcp.send(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"no_such_tool\",\"arguments\":{\"a\":\"\xff\"}}} x");
    let m = mcp.read_id(&json!(6));
    assert_eq!(m["error"]["code"], -32602, "{m}");
    mcp.finish();
}

#[test]
fn raw_09_escaped_string_ids_reach_their_side_table_entries() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let args = json!({"bundle_path": b}).to_string();
    let mut mcp = Mcp::start();
    let mut f = br#"{"jsonrpc":"2.0","id":"req-\u0031","method":"tools/call","params":{"name":"list_concepts","arguments":"#.to_vec();
    f.extend_from_slice(args.as_bytes());
    f.extend_from_slice(b"}}");
    mcp.send(&f);
    let m = mcp.read_id(&json!("req-1"));
    assert_eq!(m["result"]["isError"], false, "{m}");
    assert_eq!(
        m["result"]["structuredContent"]["concepts"][0]["id"],
        "metrics/revenue"
    );
    mcp.finish();
}
