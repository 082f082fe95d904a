//! MCP progress over stdio (spec/migration.md §12.5 rule 4): with `_meta.progressToken`, a
//! preview of a 2,000-file bundle gets increasing `notifications/progress` before its
//! response; without a token, none; nothing follows the response. `okf-mcp call` draws the
//! same reports as a bar on stderr when stderr is a terminal (under util-linux `script`) and
//! erases it before the result; on a `dumb` terminal or with stderr a pipe it writes nothing
//! there.

#![allow(clippy::disallowed_methods)] // tests build their own temp trees

use crate::support::util::{bin, run_cli, Mcp};
use serde_json::{json, Value};
use std::process::{Command, Stdio};

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

    // The server's next capture of the unchanged bundle is warm (spec/store.md §17, the
    // fast lane of docs/store.md §3.3): it reports as a cold one does.
    let lines = preview_lines(&mut mcp, bundle, Some(json!({"progressToken": "tok-2"})));
    assert!(checked_progress(&lines, "tok-2", bundle) >= 2, "{lines:?}");
    assert_eq!(
        lines[lines.len() - 2]["params"]["total"],
        json!(2001.0),
        "{lines:?}"
    );
    let (code, _, stderr) = mcp.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
}

/// The notifications of `lines` before the response, checked: increasing, token echoed, no
/// path; returns how many.
fn checked_progress(lines: &[Value], token: &str, bundle: &str) -> usize {
    let (_, before) = lines.split_last().expect("a response");
    let mut last = -1.0;
    let mut n = 0;
    for m in before {
        assert_eq!(m["method"], "notifications/progress", "{m}");
        assert_eq!(m["params"]["progressToken"], token);
        let p = m["params"]["progress"].as_f64().expect("progress");
        assert!(p > last, "progress must increase: {before:?}");
        last = p;
        assert!(!m.to_string().contains(bundle), "no paths in progress");
        n += 1;
    }
    n
}

#[test]
fn mig_38_migration_preview_and_apply_report_progress_only_with_a_token() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let b = tmp.path().join("bundle");
    std::fs::create_dir_all(b.join("t")).expect("mkdir");
    std::fs::write(b.join("index.md"), "# B\n").expect("index");
    for i in 0..3 {
        std::fs::write(
            b.join(format!("t/c{i}.md")),
            format!(
                "---\ntype: Table\ntimestamp: 2026-01-0{}T00:00:00Z\n---\n\nC{i}.\n",
                i + 1
            ),
        )
        .expect("write");
    }
    let bundle = b.to_str().expect("utf-8");
    let args = json!({"bundle_path": bundle, "timestamp_policy": "remove_after_copy",
        "generated_by": "agent/1.0", "citation_mappings": []});
    let mut mcp = Mcp::start();
    let call = |mcp: &mut Mcp, name: &str, a: &Value, meta: Option<Value>| -> Vec<Value> {
        let mut params = json!({"name": name, "arguments": a});
        if let Some(m) = meta {
            params["_meta"] = m;
        }
        mcp.request_raw("tools/call", params)
            .iter()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    };
    let lines = call(
        &mut mcp,
        "preview_v02_migration",
        &args,
        Some(json!({"progressToken": "p"})),
    );
    assert!(checked_progress(&lines, "p", bundle) >= 2, "{lines:?}");
    let preview = lines.last().expect("response")["result"]["structuredContent"].clone();
    assert_eq!(preview["status"], "applicable", "{preview}");
    let quiet = call(&mut mcp, "preview_v02_migration", &args, None);
    assert_eq!(quiet.len(), 1, "no notification without a token: {quiet:?}");
    let mut apply = args.clone();
    apply["expected_source"] = preview["source"].clone();
    apply["proof"] = preview["proof"].clone();
    apply["expected_plan_digest"] = preview["plan_digest"].clone();
    let lines = call(
        &mut mcp,
        "apply_v02_migration",
        &apply,
        Some(json!({"progressToken": 7})),
    );
    let applied = lines.last().expect("response")["result"]["structuredContent"].clone();
    assert_eq!(applied["status"], "applied", "{applied}");
    let (_, before) = lines.split_last().expect("response");
    assert!(before.len() >= 2, "{lines:?}");
    let mut last = -1.0;
    for m in before {
        assert_eq!(m["params"]["progressToken"], 7);
        let p = m["params"]["progress"].as_f64().expect("progress");
        assert!(p > last);
        last = p;
    }
    let (code, _, stderr) = mcp.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
}

/// `s` as one word of `sh -c`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs `okf-mcp call validate_bundle` on `bundle` under a pseudo-terminal (util-linux
/// `script`) with `TERM=term`, stdout and stderr both on it in the order written; returns
/// what the terminal received and a description for failure messages.
fn validate_under_pty(tmp: &std::path::Path, bundle: &str, term: &str) -> (String, String) {
    let args = tmp.join("args.json");
    std::fs::write(&args, json!({"bundle_path": bundle}).to_string()).expect("args");
    let cmd = format!(
        "{} call validate_bundle --args-file {}",
        sh_quote(bin().to_str().expect("utf-8")),
        sh_quote(args.to_str().expect("utf-8"))
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env("TERM", term)
        .stdin(Stdio::null())
        .output()
        .expect("util-linux `script` runs the CLI under a pseudo-terminal");
    let tty = String::from_utf8_lossy(&out.stdout).into_owned();
    let context = format!(
        "command: TERM={term} script -q -e -c {cmd:?} /dev/null\nterminal: {tty:?}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{context}");
    (tty, context)
}

#[test]
fn cli_call_draws_progress_on_a_terminal_and_erases_it_before_the_result() {
    let (tmp, b) = big_bundle();
    let (tty, context) = validate_under_pty(tmp.path(), b.to_str().expect("utf-8"), "xterm");
    let at = tty
        .find("{\"content\"")
        .unwrap_or_else(|| panic!("no result: {context}"));
    let (bar, rest) = tty.split_at(at);
    assert!(bar.contains("reading "), "no progress drawn: {context}");
    assert!(bar.contains("2001/2001 files"), "no final count: {context}");
    let last = bar.rfind("files").expect("a drawn line");
    assert!(
        bar[last..].contains("\u{1b}[2K"),
        "the bar is not erased before the result: {context}"
    );
    let line = rest.trim_end();
    assert_eq!(
        rest,
        format!("{line}\r\n"),
        "nothing after the result: {context}"
    );
    let result: Value = serde_json::from_str(line).expect("the result is one JSON line");
    assert_eq!(
        result["structuredContent"]["scanned_files"], 2001,
        "{context}"
    );
    let root = tmp.path().to_str().expect("utf-8");
    assert!(!tty.contains(root), "no paths on the terminal: {context}");
}

#[test]
fn cli_call_on_a_dumb_terminal_draws_nothing() {
    let (tmp, b) = big_bundle();
    let (tty, context) = validate_under_pty(tmp.path(), b.to_str().expect("utf-8"), "dumb");
    assert!(tty.starts_with("{\"content\""), "{context}");
    assert_eq!(tty.matches("\r\n").count(), 1, "one line: {context}");
}

#[test]
fn cli_call_with_stderr_a_pipe_draws_nothing() {
    let (_tmp, b) = big_bundle();
    let args = json!({"bundle_path": b}).to_string();
    let out = run_cli(&["call", "validate_bundle", "--args", &args], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "", "stderr is a pipe: no bar");
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    assert_eq!(out.structured()["scanned_files"], 2001);
}
