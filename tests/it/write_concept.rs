//! `write_concept` end to end (spec/concept-patch.md §10, spec/store.md §4 exception, §8,
//! §10.0, §12.2; spec/surface.md §3, §6.1, §6.2): WRT-01…10, the write parts of VAL-04,
//! STO-06, STO-14, ALI-02 and RAW-09. Every test drives the real binary (`okf-mcp call`, and
//! `okf-mcp serve` where named) on a temp copy of a fixture bundle.

#![allow(clippy::disallowed_methods)] // tests build and mutate their own temp trees

use crate::support::util::{
    call, copy_bundle, fixture, identity, run_cli, snapshot, visible, CliOut, Mcp,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ORDERS: &[u8] = b"---\ntype: table\ntitle: Orders\n---\n# Orders\n\nOne row per order.\n";
const REPLAYED: &str =
    "receipt_replayed: answered from the stored receipt; nothing was written now";

/// `write_concept` arguments.
fn args(bundle: &Path, id: &str, frontmatter: &str, body: &str) -> Value {
    json!({
        "bundle_path": bundle.to_str().expect("utf-8 path"),
        "concept_id": id,
        "frontmatter": frontmatter,
        "body": body,
    })
}

/// `okf-mcp call write_concept` with the arguments on stdin (no argv size limit) and extra
/// environment variables (the fault-injection hooks).
fn write_env(a: &Value, env: &[(&str, &str)]) -> CliOut {
    let mut cmd = Command::new(crate::support::util::bin());
    cmd.args(["call", "write_concept", "--args-file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn okf-mcp");
    {
        let mut si = child.stdin.take().expect("stdin");
        si.write_all(a.to_string().as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // SEC-04: no output names the absolute bundle path.
    if let Some(p) = a["bundle_path"].as_str() {
        assert!(!stdout.contains(p), "absolute path leaked: {stdout}");
    }
    let result = if stdout.lines().count() == 1 {
        serde_json::from_str(stdout.trim_end()).ok()
    } else {
        None
    };
    CliOut {
        code: out.status.code().unwrap_or(-1),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        result,
    }
}

fn write(a: &Value) -> CliOut {
    write_env(a, &[])
}

/// Number of receipt files under `.okf/receipts/`.
fn receipts(bundle: &Path) -> usize {
    std::fs::read_dir(bundle.join(".okf/receipts")).map_or(0, |rd| {
        rd.filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .count()
    })
}

fn read(bundle: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(bundle.join(rel)).expect("read")
}

/// A bundle path that does not exist (pure-check failures must win over it).
fn missing() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("no-such-bundle");
    (t, p)
}

/// Asserts the loose diagnostics shape of spec/concept-patch.md §10.2 and returns the codes
/// (the message prefixes).
fn loose_codes(diags: &Value) -> Vec<String> {
    let arr = diags.as_array().expect("diagnostics array");
    arr.iter()
        .map(|d| {
            let o = d.as_object().expect("object");
            for k in o.keys() {
                assert!(
                    ["severity", "message", "file"].contains(&k.as_str()),
                    "unexpected member {k} in {d}"
                );
            }
            assert!(
                ["ERROR", "WARN", "INFO"].contains(&d["severity"].as_str().expect("severity")),
                "{d}"
            );
            if let Some(f) = o.get("file") {
                assert!(
                    !f.as_str().expect("file string").is_empty(),
                    "empty file kept"
                );
            }
            let m = d["message"].as_str().expect("message");
            let (code, rest) = m.split_once(": ").expect("`<code>: ` prefix");
            assert!(
                !code.is_empty()
                    && code
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{m}"
            );
            assert!(!rest.is_empty(), "{m}");
            code.to_owned()
        })
        .collect()
}

/// A success: `isError` false, exit 0, text = compact structured JSON, loose diagnostics.
fn success(out: &CliOut, path: &str) -> Value {
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(!out.is_error(), "{}", out.stdout);
    let s = out.structured().clone();
    assert_eq!(s["status"], "success");
    assert_eq!(s["path"], path);
    assert_eq!(
        s.as_object().expect("object").keys().collect::<Vec<_>>(),
        ["status", "path", "diagnostics", "notices"]
    );
    assert_eq!(out.text(), s.to_string(), "text is the structured JSON");
    loose_codes(&s["diagnostics"]);
    s
}

/// A tool error with `code`; returns the envelope.
fn error(out: &CliOut, code: &str) -> Value {
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.is_error(), "{}", out.stdout);
    let e = out.structured().clone();
    assert_eq!(e["code"], code, "{e}");
    e
}

/// The stored success payload plus the one appended replay INFO.
/// The replay of the write that answered `first`: the same result plus the replay `INFO`;
/// the `store_created` notice of a first commit is said once, by that commit (a replay
/// creates nothing).
fn with_replay_info(first: &Value) -> Value {
    let mut v = first.clone();
    v["diagnostics"]
        .as_array_mut()
        .expect("diagnostics")
        .push(json!({"severity": "INFO", "message": REPLAYED}));
    if let Some(n) = v["notices"].as_array_mut() {
        n.retain(|x| x["code"] != "store_created");
    }
    v
}

#[test]
fn wrt_01_new_concept_in_a_new_subdirectory_is_written_verbatim_with_one_receipt() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let before = visible(&b);
    // Frontmatter bytes are kept verbatim (comment, quoting, key order); a final newline is
    // added because it is missing.
    let fm = "title: 'New'   # kept\ntype: table";
    let body = "# New\n\nSee [Orders](../tables/orders.md).\n";
    let out = write(&args(&b, "sales/new", fm, body));
    let s = success(&out, "sales/new.md");
    assert_eq!(
        read(&b, "sales/new.md"),
        format!("---\n{fm}\n---\n{body}").into_bytes()
    );
    assert_eq!(receipts(&b), 1);
    // Only the new file appeared in the visible tree.
    let mut after = visible(&b);
    after.remove("sales/new.md");
    after.remove("sales/");
    assert_eq!(after, before);
    // The new concept nobody links to is reported as an orphan on itself.
    let codes = loose_codes(&s["diagnostics"]);
    assert!(codes.contains(&"orphan_concept".to_owned()), "{s}");
    assert!(s["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .all(|d| d["severity"] != "ERROR"));
    // A frontmatter that already ends with a newline gets no second one.
    let out = write(&args(&b, "sales/other", "type: table\n", "x\n"));
    success(&out, "sales/other.md");
    assert_eq!(read(&b, "sales/other.md"), b"---\ntype: table\n---\nx\n");
    assert_eq!(receipts(&b), 2);
}

#[test]
fn wrt_01_crlf_frontmatter_gets_crlf_fences() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let out = write(&args(
        &b,
        "sales/crlf",
        "type: table\r\ntitle: C",
        "body\r\n",
    ));
    success(&out, "sales/crlf.md");
    assert_eq!(
        read(&b, "sales/crlf.md"),
        b"---\r\ntype: table\r\ntitle: C\r\n---\r\nbody\r\n"
    );
}

#[test]
fn wrt_02_identical_write_replays_the_stored_result_without_a_second_receipt() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let a = args(&b, "sales/new", "type: table\ntitle: New\n", "# New\n");
    let first = success(&write(&a), "sales/new.md");
    let snap = snapshot(&b);
    let second = success(&write(&a), "sales/new.md");
    assert_eq!(second, with_replay_info(&first));
    assert_eq!(receipts(&b), 1, "no second receipt");
    assert_eq!(snapshot(&b), snap, "nothing written, .okf included");
    // Repeated replays are identical to each other.
    let third = success(&write(&a), "sales/new.md");
    assert_eq!(third, second);
}

#[test]
fn wrt_03_identical_write_after_the_bundle_changed_elsewhere_still_replays() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let a = args(&b, "sales/new", "type: table\ntitle: New\n", "# New\n");
    let first = success(&write(&a), "sales/new.md");
    // Someone else changes another concept: the revision moves.
    let other = b"---\ntype: table\ntitle: Orders v2\n---\n# Orders\n";
    std::fs::write(b.join("tables/orders.md"), other).expect("foreign edit");
    let snap = snapshot(&b);
    let again = success(&write(&a), "sales/new.md");
    assert_eq!(again, with_replay_info(&first), "the stored result");
    assert_eq!(receipts(&b), 1);
    assert_eq!(snapshot(&b), snap, "nothing written");
    assert_eq!(read(&b, "tables/orders.md"), other, "foreign edit kept");
}

#[test]
fn wrt_04_changed_body_is_a_new_write_with_a_new_receipt() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let fm = "type: table\ntitle: New\n";
    success(
        &write(&args(&b, "sales/new", fm, "# New\n")),
        "sales/new.md",
    );
    let s = success(
        &write(&args(&b, "sales/new", fm, "# New v2\n")),
        "sales/new.md",
    );
    assert!(
        !s["diagnostics"].to_string().contains("receipt_replayed"),
        "a fresh write, not a replay: {s}"
    );
    assert_eq!(
        read(&b, "sales/new.md"),
        format!("---\n{fm}---\n# New v2\n").as_bytes()
    );
    assert_eq!(receipts(&b), 2);
    // Going back to the first content replays the first receipt (same content, same id);
    // it does not re-apply it.
    let back = success(
        &write(&args(&b, "sales/new", fm, "# New\n")),
        "sales/new.md",
    );
    assert!(back["diagnostics"].to_string().contains(REPLAYED), "{back}");
    assert_eq!(
        read(&b, "sales/new.md"),
        format!("---\n{fm}---\n# New v2\n").as_bytes()
    );
    assert_eq!(receipts(&b), 2);
}

#[test]
fn wrt_05_frontmatter_without_type_is_rejected_with_readable_text_and_wire_envelope() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let snap = snapshot(&b);
    let out = write(&args(&b, "sales/new", "title: New\n", "# New\n"));
    let e = error(&out, "operation_rejected");
    assert_eq!(e["message"], "tool operation was rejected");
    assert_eq!(e["retryable"], false);
    // Text (spec/surface.md §18.2, superseding the legacy rejection JSON): the envelope's
    // compact JSON, then one `<file>: <message>` line per finding.
    crate::support::util::assert_error_texts(out.result.as_ref().expect("result"));
    let wire = e["diagnostics"].as_array().expect("diagnostics");
    let mt = wire
        .iter()
        .find(|d| d["code"] == "missing_type")
        .expect("a missing_type finding");
    assert_eq!(mt["severity"], "ERROR");
    assert_eq!(mt["file"], "sales/new.md");
    let lines: Vec<&str> = out.second_text().lines().skip(1).collect();
    assert_eq!(lines.len(), wire.len());
    for (w, l) in wire.iter().zip(&lines) {
        assert_eq!(w.as_object().expect("object").len(), 7, "{w}");
        let subject = if w["file"] == "" {
            &w["code"]
        } else {
            &w["file"]
        };
        assert_eq!(
            *l,
            format!(
                "{}: {}",
                subject.as_str().expect("s"),
                w["message"].as_str().expect("m")
            )
        );
    }
    assert_eq!(snapshot(&b), snap, "nothing written");
    assert!(!b.join(".okf").exists(), "no .okf");
}

#[test]
fn wrt_06_malformed_frontmatter_faults_come_before_any_io() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let (_m, gone) = missing();
    let snap = snapshot(&b);
    let cases = [
        ("type: [unclosed", "invalid_request", true),
        ("- a\n- b\n", "invalid_request", true),
        ("just a scalar", "invalid_request", true),
        ("type: t\ntype: u\n", "invalid_request", true),
        ("a: &x 1\nb: &x 2\ntype: t\n", "invalid_yaml_graph", true),
        ("type: t\n---\ntitle: x\n", "invalid_request", true),
        ("type: t\r\n---\r\ntitle: x\r\n", "invalid_request", true),
    ];
    for (fm, code, step) in cases {
        for bundle in [&b, &gone] {
            let out = write(&args(bundle, "sales/new", fm, "# New\n"));
            let e = error(&out, code);
            assert_eq!(e["retryable"], false);
            assert!(!out.stdout.contains(fm), "frontmatter echoed");
            if step {
                let d = e["diagnostics"].as_array().expect("diagnostics");
                assert_eq!(d.len(), 1, "{e}");
                assert_eq!(d[0]["code"], "recovery_step");
                assert_eq!(d[0]["field"], "frontmatter");
                assert_eq!(d[0]["severity"], "INFO");
            }
        }
    }
    assert!(!gone.exists());
    assert_eq!(snapshot(&b), snap, "tree unchanged");
    assert!(!b.join(".okf").exists());
}

#[test]
fn wrt_07_oversized_frontmatter_and_body_are_resource_limits_before_io() {
    let (_m, gone) = missing();
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let snap = snapshot(&b);
    let big_fm = format!("type: t\nx: {}\n", "a".repeat(1024 * 1024));
    assert!(big_fm.len() > 1024 * 1024);
    let exact_fm = "a".repeat(1024 * 1024 + 1);
    let big_body = "b".repeat(16 * 1024 * 1024 + 1);
    // Under the schema's character cap but over 1 MiB of UTF-8 bytes: the handler's check.
    let wide_fm = format!("a: {}", "\u{e9}".repeat(600_000));
    assert!(wide_fm.chars().count() < 1024 * 1024 && wide_fm.len() > 1024 * 1024);
    // A YAML resource limit (nesting depth > 64).
    let deep_fm = format!("a: {}{}", "[".repeat(70), "]".repeat(70));
    for (fm, body) in [
        (exact_fm.as_str(), "x"),
        (big_fm.as_str(), "x"),
        (wide_fm.as_str(), "x"),
        (deep_fm.as_str(), "x"),
        ("type: t\n", big_body.as_str()),
    ] {
        for bundle in [&gone, &b] {
            let out = write(&args(bundle, "sales/new", fm, body));
            let e = error(&out, "resource_limit");
            assert_eq!(e["retryable"], false);
            let d = e["diagnostics"].as_array().expect("diagnostics");
            assert!(d.iter().any(|d| d["code"] == "recovery_step"), "{e}");
            assert!(out.stdout.len() < 4096, "no value echoed");
        }
    }
    // Exactly 16 MiB of body is allowed by itself, but the written file (fences and
    // frontmatter included) would exceed the per-file limit (§10.1, §10.3 step 3).
    let body = "c".repeat(16 * 1024 * 1024);
    for bundle in [&gone, &b] {
        let out = write(&args(bundle, "sales/new", "type: t", &body));
        let e = error(&out, "resource_limit");
        assert_eq!(
            e["message"],
            "the concept file would exceed the 16 MiB file limit"
        );
    }
    // The largest body that still fits is written.
    let fm = "type: t\n";
    let fit = "d".repeat(16 * 1024 * 1024 - 8 - fm.len());
    let out = write(&args(&b, "sales/new", fm, &fit));
    assert!(!gone.exists());
    success(&out, "sales/new.md");
    assert_eq!(
        std::fs::metadata(b.join("sales/new.md"))
            .expect("meta")
            .len(),
        16 * 1024 * 1024
    );
    let mut after = visible(&b);
    after.remove("sales/new.md");
    after.remove("sales/");
    let before: BTreeMap<_, _> = snap
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".okf"))
        .collect();
    assert_eq!(after, before, "the rejected calls wrote nothing");
}

#[test]
fn wrt_08_identical_replacement_without_okf_is_success_and_creates_no_okf() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let snap = snapshot(&b);
    let out = write(&args(
        &b,
        "tables/orders",
        "type: table\ntitle: Orders",
        "# Orders\n\nOne row per order.\n",
    ));
    let s = success(&out, "tables/orders.md");
    assert!(!s["diagnostics"].to_string().contains("receipt_replayed"));
    assert_eq!(read(&b, "tables/orders.md"), ORDERS);
    assert_eq!(snapshot(&b), snap, "tree unchanged");
    assert!(!b.join(".okf").exists(), "store never opened");
}

#[test]
fn wrt_08_identical_replacement_with_okf_commits_nothing() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    success(
        &write(&args(&b, "sales/new", "type: table\n", "x\n")),
        "sales/new.md",
    );
    let snap = snapshot(&b);
    let s = success(
        &write(&args(
            &b,
            "tables/orders",
            "type: table\ntitle: Orders\n",
            "# Orders\n\nOne row per order.\n",
        )),
        "tables/orders.md",
    );
    assert!(!s["diagnostics"].to_string().contains("receipt_replayed"));
    assert_eq!(receipts(&b), 1, "no commit for an identical replacement");
    assert_eq!(snapshot(&b), snap);
}

#[test]
#[cfg(feature = "fault-injection")]
fn wrt_09_three_forced_cas_conflicts_are_a_retryable_revision_conflict() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let before = visible(&b);
    let a = args(&b, "sales/new", "type: table\n", "x\n");
    let out = write_env(&a, &[("OKF_MCP_FORCE_CONFLICTS", "3")]);
    let e = error(&out, "revision_conflict");
    assert_eq!(e["retryable"], true);
    let d = e["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(d.len(), 1, "{e}");
    assert_eq!(d[0]["code"], "recovery_step");
    assert_eq!(d[0]["field"], "");
    assert_eq!(visible(&b), before, "nothing published");
    assert_eq!(receipts(&b), 0);
    // Two conflicts are absorbed by the third attempt (3 attempts in all).
    let out = write_env(&a, &[("OKF_MCP_FORCE_CONFLICTS", "2")]);
    let s = success(&out, "sales/new.md");
    assert!(!s["diagnostics"].to_string().contains("receipt_replayed"));
    assert_eq!(read(&b, "sales/new.md"), b"---\ntype: table\n---\nx\n");
    assert_eq!(receipts(&b), 1);
}

#[test]
fn wrt_10_preexisting_errors_elsewhere_warn_and_do_not_block() {
    let (_t, b) = copy_bundle(&fixture("write-nofm"));
    let body_a = "Plain note a without frontmatter.\n";
    let body_b = "Plain note b without frontmatter.\n";
    let s = success(
        &write(&args(&b, "a", "type: note\ntitle: A\n", body_a)),
        "a.md",
    );
    let pre: Vec<&Value> = s["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| {
            d["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("preexisting_error: "))
        })
        .collect();
    assert_eq!(pre.len(), 1, "{s}");
    assert_eq!(pre[0]["severity"], "WARN");
    assert_eq!(pre[0]["file"], "b.md");
    assert!(
        pre[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("missing_frontmatter")),
        "{s}"
    );
    assert_eq!(
        read(&b, "a.md"),
        format!("---\ntype: note\ntitle: A\n---\n{body_a}").as_bytes()
    );
    // Now b: a is repaired, so no preexisting error is left.
    let s = success(
        &write(&args(&b, "b", "type: note\ntitle: B\n", body_b)),
        "b.md",
    );
    assert!(
        !s["diagnostics"].to_string().contains("preexisting_error"),
        "{s}"
    );
    assert_eq!(receipts(&b), 2);
    // A write whose own document lacks `type` is rejected.
    let snap = snapshot(&b);
    let out = write(&args(&b, "a", "title: A\n", body_a));
    let e = error(&out, "operation_rejected");
    assert!(
        e["diagnostics"]
            .as_array()
            .expect("d")
            .iter()
            .any(|d| d["code"] == "missing_type" && d["file"] == "a.md"),
        "{e}"
    );
    assert_eq!(snapshot(&b), snap);
}

#[test]
fn wrt_10_writing_a_document_without_frontmatter_errors_is_not_masked_by_preexisting() {
    // The written document's own ERROR blocks even when the same (file, code) was in the base.
    let (_t, b) = copy_bundle(&fixture("write-nofm"));
    let snap = snapshot(&b);
    let out = write(&args(&b, "a", "title: A\n", "x\n"));
    let e = error(&out, "operation_rejected");
    crate::support::util::assert_error_texts(out.result.as_ref().expect("result"));
    let codes: Vec<&str> = e["diagnostics"]
        .as_array()
        .expect("d")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(codes.contains(&"missing_type"), "{e}");
    assert!(codes.contains(&"preexisting_error"), "{e}");
    assert_eq!(snapshot(&b), snap);
    assert!(!b.join(".okf").exists());
}

#[test]
fn val_04_write_concept_on_a_future_declared_bundle_succeeds_without_assertion() {
    let (_t, b) = copy_bundle(&fixture("write-future"));
    let s = success(
        &write(&args(&b, "sales/new", "type: table\n", "x\n")),
        "sales/new.md",
    );
    let codes = loose_codes(&s["diagnostics"]);
    assert!(
        !codes.contains(&"version_assertion_failed".to_owned()),
        "{s}"
    );
    assert_eq!(read(&b, "sales/new.md"), b"---\ntype: table\n---\nx\n");
    assert_eq!(receipts(&b), 1);
}

#[test]
fn target_that_is_a_directory_is_invalid_request() {
    for populated in [false, true] {
        let (_t, b) = copy_bundle(&fixture("write-basic"));
        std::fs::create_dir_all(b.join("sales/new.md")).expect("mkdir");
        if populated {
            std::fs::write(b.join("sales/new.md/inner.txt"), b"x").expect("write");
        }
        let snap = snapshot(&b);
        let out = write(&args(&b, "sales/new", "type: table\n", "x\n"));
        let e = error(&out, "invalid_request");
        assert_eq!(
            e["message"],
            "the concept path is a directory in the bundle"
        );
        assert_eq!(snapshot(&b), snap);
        assert!(!b.join(".okf").exists());
    }
}

#[test]
#[cfg(feature = "fault-injection")]
fn sto_14_case_folding_collision_is_rejected_before_the_boundary() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let before = visible(&b);
    let out = write_env(
        &args(&b, "Tables/Orders", "type: table\n", "x\n"),
        &[("OKF_MCP_FOLDING", "case")],
    );
    error(&out, "operation_rejected");
    assert_eq!(visible(&b), before, "nothing published");
    assert_eq!(receipts(&b), 0);
    for d in ["transactions", "staging"] {
        let n = std::fs::read_dir(b.join(".okf").join(d)).map_or(0, Iterator::count);
        assert_eq!(n, 0, "{d} left behind");
    }
    // Without folding the same write is fine (the collision is the folding's doing).
    success(
        &write(&args(&b, "Tables/Orders", "type: table\n", "x\n")),
        "Tables/Orders.md",
    );
}

#[test]
#[cfg(feature = "fault-injection")]
fn sto_06_write_concept_lookup_refuses_while_a_publication_is_blocked() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    // Crash right after the durability boundary: journal on disk, nothing published.
    let a = args(&b, "tables/orders", "type: table\ntitle: New\n", "# New\n");
    let out = write_env(&a, &[("OKF_MCP_FAULT", "after_durable_fsync:crash")]);
    assert_eq!(out.code, 86, "{}", out.stdout);
    assert_eq!(read(&b, "tables/orders.md"), ORDERS);
    // A foreign writer changes the target.
    std::fs::write(b.join("tables/orders.md"), b"foreign\n").expect("foreign write");
    let snap = snapshot(&b);
    let mut steps = Vec::new();
    for call_args in [args(&b, "sales/other", "type: table\n", "x\n"), a.clone()] {
        let out = write(&call_args);
        let e = error(&out, "operation_rejected");
        assert_eq!(e["retryable"], false);
        let d = e["diagnostics"].as_array().expect("diagnostics");
        assert_eq!(d[0]["code"], "publication_blocked", "{e}");
        assert_eq!(d[0]["file"], "tables/orders.md");
        let step = d
            .iter()
            .find(|d| d["code"] == "recovery_step")
            .expect("recovery step");
        let m = step["message"].as_str().expect("m").to_owned();
        assert!(m.contains(".okf/transactions/"), "{m}");
        assert!(m.contains(".okf/staging/"), "{m}");
        steps.push(m);
        assert_eq!(snapshot(&b), snap, "the refusal writes nothing");
    }
    assert_eq!(steps[0], steps[1], "the same recovery step each time");
    assert_eq!(
        read(&b, "tables/orders.md"),
        b"foreign\n",
        "not overwritten"
    );
    // Restoring the base bytes lets the next open complete the transaction; the exact write
    // then replays its receipt.
    std::fs::write(b.join("tables/orders.md"), ORDERS).expect("restore");
    let s = success(&write(&a), "tables/orders.md");
    assert!(s["diagnostics"].to_string().contains(REPLAYED), "{s}");
    assert_eq!(
        read(&b, "tables/orders.md"),
        b"---\ntype: table\ntitle: New\n---\n# New\n"
    );
    assert_eq!(receipts(&b), 1);
}

#[test]
fn ali_02_rehearsal_keys_on_write_concept_execute_nothing() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let snap = snapshot(&b);
    for key in ["dryRun", "dry_run", "mode", "preview", "confirm"] {
        let mut a = args(&b, "sales/new", "type: table\n", "x\n");
        a[key] = json!(true);
        let out = call("write_concept", &a);
        let e = error(&out, "unknown_parameter");
        assert_eq!(e["message"], "unsupported parameter; nothing was executed");
        let d = e["diagnostics"].as_array().expect("diagnostics");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0]["field"], "preview_concept_patch");
        let m = d[0]["message"].as_str().expect("m");
        assert!(m.contains("write_concept has no rehearsal mode"), "{m}");
        assert!(m.ends_with("Nothing was executed."), "{m}");
    }
    assert_eq!(snapshot(&b), snap);
    assert!(!b.join(".okf").exists());
}

/// The same sequence over MCP and through `okf-mcp call` on two identical copies gives
/// identical results (spec/surface.md §1.2).
#[test]
fn wrt_mcp_and_cli_answer_identically() {
    let (_t1, b1) = copy_bundle(&fixture("write-nofm"));
    let (_t2, b2) = copy_bundle(&fixture("write-nofm"));
    let (_m, gone) = missing();
    let seq = |b: &Path| {
        vec![
            args(b, "a", "type: note\ntitle: A\n", "A\n"),
            args(b, "a", "type: note\ntitle: A\n", "A\n"),
            args(b, "b", "title: B\n", "B\n"),
            args(b, "n/c", "type: note\r\ntitle: C", "C\r\n"),
        ]
    };
    let mut mcp = Mcp::start();
    let mut n_ok = 0;
    for (x, y) in seq(&b1).iter().zip(seq(&b2)) {
        let cli = write(x);
        let over_mcp = mcp.call("write_concept", &y);
        assert_eq!(
            identity(cli.result.as_ref().expect("result")),
            identity(&over_mcp),
            "{x}"
        );
        n_ok += usize::from(!cli.is_error());
    }
    assert_eq!(n_ok, 3);
    // A pure-check fault on a missing bundle, too.
    let bad = args(&gone, "a", "type: [", "x");
    let cli = write(&bad);
    let over_mcp = mcp.call("write_concept", &bad);
    assert_eq!(
        identity(cli.result.as_ref().expect("r")),
        identity(&over_mcp)
    );
    assert_eq!(over_mcp["structuredContent"]["code"], "invalid_request");
    let (code, _, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(visible(&b1), visible(&b2));
    assert_eq!(receipts(&b1), 2);
    assert_eq!(receipts(&b2), 2);
}

#[test]
fn raw_09_sixteen_mib_body_over_mcp_gets_its_resource_limit() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let snap = snapshot(&b);
    let a = args(
        &b,
        "sales/new",
        "type: table\n",
        &"z".repeat(16 * 1024 * 1024),
    );
    let mut mcp = Mcp::start();
    let r = mcp.call("write_concept", &a);
    assert_eq!(r["isError"], true, "{}", r["error"]);
    assert_eq!(r["structuredContent"]["code"], "resource_limit");
    assert_eq!(
        r["structuredContent"]["message"],
        "the concept file would exceed the 16 MiB file limit"
    );
    assert!(!r.to_string().contains("zzzz"), "body echoed");
    // The session still answers the next request.
    let ok = mcp.call(
        "write_concept",
        &args(&b, "sales/new", "type: table\n", "x\n"),
    );
    assert_eq!(ok["isError"], false, "{ok}");
    let (code, _, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
    let cli = run_cli(
        &["call", "write_concept", "--args-file", "-"],
        Some(a.to_string().as_bytes()),
    );
    assert_eq!(identity(cli.result.as_ref().expect("r")), identity(&r));
    let mut after = visible(&b);
    assert_eq!(
        after.remove("sales/new.md").as_deref(),
        Some(&b"---\ntype: table\n---\nx\n"[..])
    );
    after.remove("sales/");
    let before: BTreeMap<_, _> = snap.into_iter().collect();
    assert_eq!(after, before);
}

#[test]
#[cfg(feature = "fault-injection")]
fn wrt_cancel_before_the_boundary_is_retryable_and_the_exact_repeat_writes() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let before = visible(&b);
    let a = args(&b, "sales/new", "type: table\n", "x\n");
    let out = write_env(&a, &[("OKF_MCP_FAULT", "after_lock:cancel")]);
    let e = error(&out, "operation_cancelled");
    assert_eq!(e["retryable"], true);
    let d = e["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(d.len(), 1, "{e}");
    assert_eq!(d[0]["code"], "recovery_step");
    assert_eq!(d[0]["field"], "");
    assert_eq!(visible(&b), before, "tree unchanged");
    assert_eq!(receipts(&b), 0);
    let s = success(&write(&a), "sales/new.md");
    assert!(!s["diagnostics"].to_string().contains("receipt_replayed"));
    assert_eq!(read(&b, "sales/new.md"), b"---\ntype: table\n---\nx\n");
    assert_eq!(receipts(&b), 1);
}

#[test]
#[cfg(feature = "fault-injection")]
fn wrt_crash_after_the_commit_point_then_exact_repeat_returns_the_stored_payload() {
    // Reference: the same write on an identical copy without faults.
    let (_r, reference) = copy_bundle(&fixture("write-basic"));
    let fm = "type: table\ntitle: New\n";
    let expected = success(
        &write(&args(&reference, "tables/orders", fm, "# New\n")),
        "tables/orders.md",
    );
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let a = args(&b, "tables/orders", fm, "# New\n");
    let out = write_env(&a, &[("OKF_MCP_FAULT", "after_journal_rename:crash")]);
    assert_eq!(out.code, 86, "a real crash: {}", out.stdout);
    assert!(out.result.is_none());
    assert_eq!(read(&b, "tables/orders.md"), ORDERS, "not yet published");
    // The exact repeat: recovery completes the publication; the receipt is the answer.
    let s = success(&write(&a), "tables/orders.md");
    assert_eq!(s, with_replay_info(&expected));
    assert_eq!(visible(&b), visible(&reference));
    assert_eq!(receipts(&b), 1);
}

#[test]
fn wrt_tampered_receipt_is_operation_rejected_never_absent() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    let a = args(&b, "sales/new", "type: table\n", "x\n");
    success(&write(&a), "sales/new.md");
    let rd: Vec<_> = std::fs::read_dir(b.join(".okf/receipts"))
        .expect("receipts")
        .filter_map(Result::ok)
        .collect();
    assert_eq!(rd.len(), 1);
    let p = rd[0].path();
    let mut bytes = std::fs::read(&p).expect("receipt");
    bytes.push(b' ');
    std::fs::write(&p, &bytes).expect("tamper");
    let snap = snapshot(&b);
    let out = write(&a);
    let e = error(&out, "operation_rejected");
    assert_eq!(e["message"], "receipt failed integrity validation");
    assert!(
        e["diagnostics"]
            .as_array()
            .expect("d")
            .iter()
            .any(|d| d["code"] == "recovery_step"),
        "{e}"
    );
    assert_eq!(snapshot(&b), snap, "nothing written");
}

/// Spawns `okf-mcp call write_concept` without waiting.
fn spawn_write(a: &Value) -> std::process::Child {
    let mut child = Command::new(crate::support::util::bin())
        .args(["call", "write_concept", "--args-file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn okf-mcp");
    let mut si = child.stdin.take().expect("stdin");
    si.write_all(a.to_string().as_bytes()).expect("write stdin");
    drop(si);
    child
}

#[test]
fn wrt_02_two_identical_writes_racing_on_the_lock_write_once_and_replay_once() {
    let (_t, b) = copy_bundle(&fixture("write-basic"));
    for d in ["transactions", "staging", "receipts", "capabilities"] {
        std::fs::create_dir_all(b.join(".okf").join(d)).expect("okf");
    }
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(b.join(".okf/lock"))
        .expect("lock file");
    lock.lock().expect("lock");
    let a = args(&b, "sales/new", "type: table\n", "x\n");
    let children = [spawn_write(&a), spawn_write(&a)];
    // Give both a chance to capture the base and queue on the lock (the outcome does not
    // depend on whether they got there).
    std::thread::sleep(std::time::Duration::from_millis(300));
    lock.unlock().expect("unlock");
    drop(lock);
    let mut payloads = Vec::new();
    for c in children {
        let out = c.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0));
        let r: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(r["isError"], false, "{r}");
        payloads.push(r["structuredContent"].clone());
    }
    let replayed: Vec<bool> = payloads
        .iter()
        .map(|p| p["diagnostics"].to_string().contains(REPLAYED))
        .collect();
    assert_eq!(
        replayed.iter().filter(|r| **r).count(),
        1,
        "exactly one replay: {payloads:?}"
    );
    let (fresh, replay) = if replayed[0] {
        (&payloads[1], &payloads[0])
    } else {
        (&payloads[0], &payloads[1])
    };
    assert_eq!(replay, &with_replay_info(fresh));
    assert_eq!(read(&b, "sales/new.md"), b"---\ntype: table\n---\nx\n");
    assert_eq!(receipts(&b), 1);
}
