//! The raw-argument helpers the raw, framing and server tests share (spec/surface.md §9.2).
//! Moved from `raw.rs`.

use crate::support::util::*;
use serde_json::Value;
use std::io::Write;

/// A bundle path that does not exist: an input fault must win over it (spec/surface.md §9.1).
pub const MISSING_BUNDLE: &str = "/nonexistent/okf-mcp-raw-tests/bundle";

/// `okf-mcp call <tool> --args-file <tmp file holding exactly raw>`.
pub fn cli_raw(tool: &str, raw: &[u8]) -> CliOut {
    let mut f = tempfile::NamedTempFile::new().expect("tmp");
    f.write_all(raw).expect("write args");
    f.flush().expect("flush");
    let p = f.path().to_string_lossy().into_owned();
    run_cli(&["call", tool, "--args-file", &p], None)
}

/// Asserts a tool error with `code` and `message`, the text equal to the message and the
/// exact envelope members (SRV-06).
pub fn assert_tool_error(result: &Value, code: &str, message: &str) {
    assert_eq!(result["isError"], true, "{result}");
    let sc = &result["structuredContent"];
    let keys: Vec<&str> = sc
        .as_object()
        .expect("envelope object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["code", "message", "retryable", "diagnostics"],
        "{sc}"
    );
    assert_eq!(sc["code"], code, "{sc}");
    assert_eq!(sc["message"], message, "{sc}");
    assert_eq!(sc["retryable"], false, "{sc}");
    assert!(sc["diagnostics"].is_array(), "{sc}");
    assert_eq!(result["content"][0]["type"], "text");
    crate::support::util::assert_error_texts(result);
}

/// Runs `raw` through the CLI and over `mcp` (request `id`), asserts the same tool error on
/// both with identical `content`, `structuredContent` and `isError`, exit code 1 and silent
/// stderr; returns the result.
pub fn both(mcp: &mut Mcp, id: i64, raw: &[u8], code: &str, message: &str) -> Value {
    let cli = cli_raw("list_concepts", raw);
    assert_eq!(cli.code, 1, "stderr: {}", cli.stderr);
    assert!(cli.stderr.is_empty(), "stderr: {}", cli.stderr);
    let cli_result = cli.result.clone().expect("one CallToolResult line");
    assert_tool_error(&cli_result, code, message);
    let m = mcp.call_raw(id, "list_concepts", raw);
    assert!(
        m.get("error").is_none(),
        "JSON-RPC error instead of a tool error: {m}"
    );
    assert_eq!(identity(&m["result"]), identity(&cli_result));
    cli_result
}
