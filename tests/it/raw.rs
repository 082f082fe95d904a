//! RAW-01…08: the raw-argument boundary (spec/surface.md §9.2) over the real binary, through
//! `okf-mcp call --args-file` and over MCP, with identical results (the helpers it shares with
//! the framing and server tests are in `support/raw.rs`).

use crate::support::raw::{both, cli_raw, MISSING_BUNDLE};
use crate::support::util::*;
use serde_json::{json, Value};
use std::path::Path;

fn nested_arrays(depth: usize, bundle: &str) -> Vec<u8> {
    // The arguments object is depth 1; `x` holds depth-1 nested arrays.
    format!(
        "{{\"bundle_path\":{},\"x\":{}{}}}",
        json!(bundle),
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    )
    .into_bytes()
}

fn assert_untouched(root: &Path, before: &std::collections::BTreeMap<String, Vec<u8>>) {
    assert_eq!(&snapshot(root), before, "the bundle tree changed");
    assert!(!root.join(".okf").exists(), ".okf was created");
}

#[test]
fn raw_01_invalid_utf8_in_a_string_value_over_cli_and_mcp() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let mut mcp = Mcp::start();
    let mut raw = format!("{{\"bundle_path\":{},\"x\":\"a", json!(b)).into_bytes();
    raw.extend_from_slice(b"\xff\xfe\"}");
    both(
        &mut mcp,
        1,
        &raw,
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    // Against a missing bundle path the input fault still wins ("nothing before I/O").
    let raw = b"{\"bundle_path\":\"/nonexistent/okf-mcp-raw-tests/bundle\",\"x\":\"\xc0\"}";
    both(
        &mut mcp,
        2,
        raw,
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    let (code, _, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
    assert_untouched(&b, &before);
}

#[test]
fn raw_02_lone_surrogate_escape_is_invalid_utf8() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let mut mcp = Mcp::start();
    let raw = format!(r#"{{"bundle_path":{},"x":"\ud800"}}"#, json!(b));
    both(
        &mut mcp,
        1,
        raw.as_bytes(),
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    let raw = format!(r#"{{"bundle_path":"{MISSING_BUNDLE}","x":"\udc00x"}}"#);
    both(
        &mut mcp,
        2,
        raw.as_bytes(),
        "invalid_request",
        "MCP arguments contain invalid UTF-8",
    );
    mcp.finish();
    assert_untouched(&b, &before);
}

#[test]
fn raw_03_duplicate_keys_top_level_and_nested() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let p = json!(b).to_string();
    let mut mcp = Mcp::start();
    let cases = [
        format!(r#"{{"bundle_path":{p},"bundle_path":"/b"}}"#),
        format!(r#"{{"bundle_path":{p},"operations":[{{"op":"set_title","op":"x"}}]}}"#),
        format!(r#"{{"bundle_path":{p},"expected_source":{{"version":"0.1","version":"0.2"}}}}"#),
        // Compared after unescaping.
        format!(r#"{{"bundle_path":{p},"bundle\u005fpath":{p}}}"#),
    ];
    for (i, raw) in cases.iter().enumerate() {
        both(
            &mut mcp,
            i64::try_from(i).expect("small") + 1,
            raw.as_bytes(),
            "invalid_request",
            "MCP arguments contain a duplicate key",
        );
    }
    mcp.finish();
    assert_untouched(&b, &before);
}

#[test]
fn raw_04_depth_64_passes_the_boundary_65_is_resource_limit() {
    let mut mcp = Mcp::start();
    // Depth 64 passes the boundary and then fails the closed schema (`x` is unknown).
    let ok = nested_arrays(64, MISSING_BUNDLE);
    let cli = cli_raw("list_concepts", &ok);
    assert_eq!(cli.code, 1);
    assert_eq!(cli.structured()["code"], "schema_validation");
    let m = mcp.call_raw(1, "list_concepts", &ok);
    assert_eq!(
        identity(&m["result"]),
        identity(cli.result.as_ref().expect("result"))
    );
    // Depth 65 is a boundary fault, before the schema and before the missing bundle path.
    let deep = nested_arrays(65, MISSING_BUNDLE);
    let r = both_limit(&mut mcp, 2, &deep);
    assert!(r["structuredContent"]["message"]
        .as_str()
        .expect("message")
        .contains("depth"));
    mcp.finish();
}

/// Like [`both`] for a `resource_limit` whose message is ours to word.
fn both_limit(mcp: &mut Mcp, id: i64, raw: &[u8]) -> Value {
    let cli = cli_raw("list_concepts", raw);
    assert_eq!(cli.code, 1, "stderr: {}", cli.stderr);
    let r = cli.result.clone().expect("result");
    assert_eq!(r["isError"], true);
    assert_eq!(r["structuredContent"]["code"], "resource_limit");
    assert_eq!(r["structuredContent"]["retryable"], false);
    let diags = r["structuredContent"]["diagnostics"]
        .as_array()
        .expect("diags");
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0]["code"], "recovery_step");
    let m = mcp.call_raw(id, "list_concepts", raw);
    assert_eq!(identity(&m["result"]), identity(&r));
    r
}

#[test]
fn raw_05_one_million_values_pass_one_more_is_resource_limit() {
    let build = |n: usize| {
        // The object, `bundle_path`, the array `x` and n-3 numbers = n values.
        let mut s = format!("{{\"bundle_path\":\"{MISSING_BUNDLE}\",\"x\":[");
        for i in 0..n - 3 {
            if i > 0 {
                s.push(',');
            }
            s.push('0');
        }
        s.push_str("]}");
        s.into_bytes()
    };
    let mut mcp = Mcp::start();
    let ok = build(1_000_000);
    let cli = cli_raw("list_concepts", &ok);
    assert_eq!(cli.code, 1);
    assert_eq!(cli.structured()["code"], "schema_validation");
    let r = both_limit(&mut mcp, 1, &build(1_000_001));
    assert!(r["structuredContent"]["message"]
        .as_str()
        .expect("message")
        .contains("values"));
    mcp.finish();
}

#[test]
fn raw_06_arguments_over_64_mib_are_resource_limit() {
    let mut raw = format!("{{\"bundle_path\":\"{MISSING_BUNDLE}\",\"x\":\"").into_bytes();
    raw.resize(64 * 1024 * 1024 - 1, b'a');
    raw.extend_from_slice(b"\"}");
    assert_eq!(raw.len(), 64 * 1024 * 1024 + 1);
    let mut mcp = Mcp::start();
    let r = both_limit(&mut mcp, 1, &raw);
    assert!(r["structuredContent"]["message"]
        .as_str()
        .expect("message")
        .contains("64 MiB"));
    // The next request on the same session is answered normally.
    let l = mcp.call_raw(2, "list_concepts", b"[]");
    assert_eq!(l["result"]["isError"], true);
    mcp.finish();
}

#[test]
fn raw_07_non_object_malformed_and_out_of_range_numbers() {
    let mut mcp = Mcp::start();
    let not_object = "MCP arguments must be a JSON object";
    let not_json = "MCP arguments are not valid JSON";
    let cases: [(&[u8], &str); 8] = [
        (b"[]", not_object),
        (b"\"/tmp/x\"", not_object),
        (b"null", not_object),
        (b"{\"bundle_path\":}", not_json),
        (b"{\"bundle_path\":\"/x\",\"n\":1e400}", not_json),
        (b"{\"bundle_path\":\"/x\",\"n\":NaN}", not_json),
        (b"{\"bundle_path\":\"/x\",\"n\":-Infinity}", not_json),
        (b"{\"bundle_path\":\"/x\"", not_json),
    ];
    for (i, (raw, msg)) in cases.iter().enumerate() {
        both(
            &mut mcp,
            i64::try_from(i).expect("small") + 1,
            raw,
            "invalid_request",
            msg,
        );
    }
    mcp.finish();
}

#[test]
fn raw_08_same_faulty_input_twice_gives_identical_results_without_keys_or_values() {
    let secret_key = "sk_secret_field";
    let secret_value = "sk_live_SECRETVALUE";
    let inputs: Vec<Vec<u8>> = vec![
        format!(r#"{{"{secret_key}":"{secret_value}","{secret_key}":1}}"#).into_bytes(),
        format!(r#"{{"{secret_key}":"{secret_value}\ud800"}}"#).into_bytes(),
        format!(r#"{{"{secret_key}":{secret_value}}}"#).into_bytes(),
        format!(r#"["{secret_value}"]"#).into_bytes(),
        {
            let mut v = format!(r#"{{"{secret_key}":"{secret_value}"#).into_bytes();
            v.extend_from_slice(b"\xff\"}");
            v
        },
        format!(
            r#"{{"{secret_key}":{}"{secret_value}"{}}}"#,
            "[".repeat(70),
            "]".repeat(70)
        )
        .into_bytes(),
    ];
    let mut mcp = Mcp::start();
    let mut id = 0;
    for raw in &inputs {
        let a = cli_raw("list_concepts", raw);
        let b = cli_raw("list_concepts", raw);
        assert_eq!(a.stdout, b.stdout);
        assert_eq!(a.code, 1);
        for s in [&a.stdout, &a.stderr] {
            assert!(!s.contains(secret_key) && !s.contains(secret_value), "{s}");
        }
        id += 1;
        let m1 = mcp.call_raw(id, "list_concepts", raw);
        id += 1;
        let m2 = mcp.call_raw(id, "list_concepts", raw);
        assert_eq!(m1["result"], m2["result"]);
        assert_eq!(
            identity(&m1["result"]),
            identity(a.result.as_ref().expect("result"))
        );
        let wire = m1.to_string();
        assert!(
            !wire.contains(secret_key) && !wire.contains(secret_value),
            "{wire}"
        );
    }
    let (code, _, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
}
