//! Crash, kill and concurrency proofs with real `okf-mcp` processes (spec/store.md §10–§15;
//! scenarios STO-01/02/03/13 at the tool level, CAN-04, CAN-05). Fault points come from the
//! `fault-injection` feature through `OKF_MCP_FAULT` (a crash is `exit(86)`).

use crate::support::patch::{apply, apply_args, check_apply, patch_args, preview, receipts};
use crate::support::util::{bin, copy_bundle, fixture, visible, Mcp};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const WRITTEN: [&str; 3] = ["index.md", "metrics/a.md", "metrics/b.md"];

/// Two concepts plus the root `index.md` (which has no frontmatter yet).
fn three_file_ops() -> Value {
    json!([
        {"kind": "set_generated", "concept_id": "metrics/a", "generated": {"by": "agent/2"}},
        {"kind": "set_generated", "concept_id": "metrics/b", "generated": {"by": "agent/2"}},
        {"kind": "set_bundle_version", "version": "0.2"}
    ])
}

/// A bundle copy, its preview and the visible pre- and post-states (the post-state from a
/// reference apply on a second copy).
struct Case {
    _t: tempfile::TempDir,
    b: PathBuf,
    args: Value,
    preview: Value,
    pre: BTreeMap<String, Vec<u8>>,
    post: BTreeMap<String, Vec<u8>>,
}

fn case(ops: &Value) -> Case {
    let (rt, rb) = copy_bundle(&fixture("patch-durable"));
    let rargs = patch_args(&rb, ops);
    let rp = preview(&rargs);
    assert_eq!(rp["status"], "applicable");
    apply(&apply_args(&rargs, &rp));
    let post = visible(&rb);
    drop(rt);
    let (t, b) = copy_bundle(&fixture("patch-durable"));
    let args = patch_args(&b, ops);
    let preview = preview(&args);
    assert_eq!(preview["result_revision"], rp["result_revision"]);
    let pre = visible(&b);
    Case {
        _t: t,
        b,
        args,
        preview,
        pre,
        post,
    }
}

/// Sends the apply request without reading its answer (the process may die first).
fn send_apply(srv: &mut Mcp, args: &Value) {
    srv.send_request(
        "tools/call",
        json!({"name": "apply_concept_patch", "arguments": args}),
    );
}

/// Polls the written files until stopped: every observed file is wholly pre or post, and
/// once `index.md` shows its post bytes the other written files already do (read index first).
struct Watcher {
    stop: Arc<AtomicBool>,
    seen: Arc<AtomicUsize>,
    handle: Option<std::thread::JoinHandle<Result<(), String>>>,
}

impl Watcher {
    fn start(c: &Case) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(AtomicUsize::new(0));
        let (s, n) = (stop.clone(), seen.clone());
        let b = c.b.clone();
        let pre = c.pre.clone();
        let post = c.post.clone();
        let handle = std::thread::spawn(move || {
            // Bounded: at most 200,000 rounds.
            for _ in 0..200_000 {
                if s.load(Ordering::SeqCst) {
                    return Ok(());
                }
                let got: Vec<Vec<u8>> = WRITTEN
                    .iter()
                    .map(|p| std::fs::read(b.join(p)).unwrap_or_default())
                    .collect();
                for (p, bytes) in WRITTEN.iter().zip(&got) {
                    if bytes != &pre[*p] && bytes != &post[*p] {
                        return Err(format!("{p} is neither pre nor post"));
                    }
                }
                if got[0] == post["index.md"] {
                    for (p, bytes) in WRITTEN.iter().zip(&got).skip(1) {
                        if bytes != &post[*p] {
                            return Err(format!("index.md published before {p}"));
                        }
                    }
                }
                n.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        });
        Self {
            stop,
            seen,
            handle: Some(handle),
        }
    }
    fn finish(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let r = self.handle.take().expect("h").join().expect("watcher");
        assert_eq!(r, Ok(()));
        assert!(
            self.seen.load(Ordering::SeqCst) > 0,
            "the watcher observed the tree"
        );
    }
}

fn assert_all(b: &Path, state: &BTreeMap<String, Vec<u8>>, what: &str) {
    assert_eq!(&visible(b), state, "{what}");
}

/// The exact replay on a fresh process after an interrupted apply.
fn replay_on_new_process(c: &Case) -> Value {
    let mut mcp = Mcp::start();
    let r = mcp.call("apply_concept_patch", &apply_args(&c.args, &c.preview));
    let (code, _, stderr) = mcp.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(r["isError"], false, "{r}");
    let s = r["structuredContent"].clone();
    check_apply(&s);
    s
}

fn assert_first_answer(c: &Case, s: &Value) {
    assert_eq!(s["status"], "applied");
    assert_eq!(s["base_revision"], c.preview["base_revision"]);
    assert_eq!(s["result_revision"], c.preview["result_revision"]);
    assert_eq!(s["plan_digest"], c.preview["plan_digest"]);
    assert_eq!(s["changed_paths"], c.preview["affected_paths"]);
}

#[test]
fn sto_03_crash_at_the_commit_point_then_exact_replay_completes_publication() {
    let c = case(&three_file_ops());
    let w = Watcher::start(&c);
    let mut srv = Mcp::start_with(&[("OKF_MCP_FAULT", "after_journal_rename:crash")]);
    send_apply(&mut srv, &apply_args(&c.args, &c.preview));
    assert_eq!(srv.try_read(), None, "the process died before answering");
    assert_eq!(srv.finish().0, 86, "simulated crash exit code");
    assert_all(
        &c.b,
        &c.pre,
        "crash at the commit point leaves the visible pre-state",
    );
    let s = replay_on_new_process(&c);
    w.finish();
    assert_first_answer(&c, &s);
    let d = s["diagnostics"].as_array().expect("d");
    assert_eq!(d.len(), 1, "{s}");
    assert_eq!(d[0]["code"], "receipt_replayed");
    assert!(
        d[0]["message"]
            .as_str()
            .expect("m")
            .contains("interrupted publication was completed now"),
        "{s}"
    );
    assert_all(&c.b, &c.post, "recovery published the post-state");
    assert_eq!(receipts(&c.b), 1);
}

#[test]
fn sto_01_02_crash_at_each_publish_never_shows_index_early_and_replay_converges() {
    for i in 0..3 {
        let c = case(&three_file_ops());
        let w = Watcher::start(&c);
        let fault = format!("after_publish({i}):crash");
        let mut srv = Mcp::start_with(&[("OKF_MCP_FAULT", fault.as_str())]);
        send_apply(&mut srv, &apply_args(&c.args, &c.preview));
        assert_eq!(srv.try_read(), None, "{fault}");
        assert_eq!(srv.finish().0, 86, "{fault}");
        let mid = visible(&c.b);
        let index_state = if i == 2 { &c.post } else { &c.pre };
        assert_eq!(
            mid["index.md"], index_state["index.md"],
            "{fault}: the root index is published last"
        );
        let published = WRITTEN[1..]
            .iter()
            .filter(|p| mid[**p] == c.post[**p])
            .count();
        assert_eq!(published, (i + 1).min(2), "{fault}");
        let s = replay_on_new_process(&c);
        w.finish();
        assert_first_answer(&c, &s);
        assert_all(&c.b, &c.post, &fault);
    }
}

#[test]
fn timeout_recovery_sigkill_right_after_apply_then_replay_applies() {
    for delay_ms in [0u64, 5, 20] {
        let c = case(&three_file_ops());
        let w = Watcher::start(&c);
        let mut srv = Mcp::start();
        send_apply(&mut srv, &apply_args(&c.args, &c.preview));
        std::thread::sleep(Duration::from_millis(delay_ms));
        srv.kill();
        let s = replay_on_new_process(&c);
        w.finish();
        // Whether the kill landed before, inside or after the commit, the exact replay ends
        // at the preview's result.
        assert_eq!(s["status"], "applied", "{s}");
        assert_eq!(s["result_revision"], c.preview["result_revision"]);
        assert_eq!(s["changed_paths"], c.preview["affected_paths"]);
        assert_all(&c.b, &c.post, "post-state after the replay");
        assert_eq!(receipts(&c.b), 1);
    }
}

#[test]
fn can_04_cancellation_at_or_after_the_commit_point_is_ignored() {
    for point in ["after_journal_rename", "after_durable_fsync"] {
        let c = case(&three_file_ops());
        let fault = format!("{point}:cancel");
        let mut srv = Mcp::start_with(&[("OKF_MCP_FAULT", fault.as_str())]);
        send_apply(&mut srv, &apply_args(&c.args, &c.preview));
        let m = srv.try_read().expect("an answer");
        assert_eq!(srv.finish().0, 0);
        let s = &m["result"]["structuredContent"];
        check_apply(s);
        assert_first_answer(&c, s);
        assert_eq!(s["diagnostics"], json!([]), "{point}");
        assert_all(&c.b, &c.post, point);
    }
}

#[test]
fn can_05_stdin_eof_during_an_apply_never_leaves_a_half_commit() {
    for delay_ms in [0u64, 2, 10] {
        let c = case(&three_file_ops());
        let w = Watcher::start(&c);
        let mut srv = Mcp::start();
        send_apply(&mut srv, &apply_args(&c.args, &c.preview));
        std::thread::sleep(Duration::from_millis(delay_ms));
        srv.close_stdin();
        let mut answers = Vec::new();
        while let Some(m) = srv.try_read() {
            answers.push(m);
        }
        assert_eq!(srv.finish().0, 0);
        w.finish();
        let now = visible(&c.b);
        let txs = std::fs::read_dir(c.b.join(".okf/transactions")).map_or(0, Iterator::count);
        assert_eq!(txs, 0, "no journal or staging left behind");
        if now == c.post {
            assert_eq!(receipts(&c.b), 1, "a finished commit wrote its receipt");
        } else {
            assert_eq!(now, c.pre, "wholly pre-state otherwise");
        }
        for m in &answers {
            if let Some(s) = m["result"]["structuredContent"].as_object() {
                if s.get("status") == Some(&json!("applied")) {
                    assert_eq!(now, c.post);
                }
            }
        }
    }
}

#[test]
fn sto_13_two_processes_apply_different_patches_on_one_revision() {
    let ops_x = json!([{"kind": "set_generated", "concept_id": "metrics/a", "generated": {"by": "agent/x"}}]);
    let ops_y = json!([{"kind": "set_generated", "concept_id": "metrics/a", "generated": {"by": "agent/y"}},
                       {"kind": "set_generated", "concept_id": "metrics/b", "generated": {"by": "agent/y"}}]);
    let cx = case(&ops_x);
    let cy = case(&ops_y);
    for round in 0..3 {
        let (_t, b) = copy_bundle(&fixture("patch-durable"));
        let ax = apply_args(&patch_args(&b, &ops_x), &cx.preview);
        let ay = apply_args(&patch_args(&b, &ops_y), &cy.preview);
        assert_eq!(ax["expected_revision"], ay["expected_revision"]);
        let spawn = |a: &Value| {
            Command::new(bin())
                .args(["call", "apply_concept_patch", "--args", &a.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        };
        let (px, py) = (spawn(&ax), spawn(&ay));
        let out = |p: Child| -> Value {
            let o = p.wait_with_output().expect("wait");
            assert!(o.stderr.is_empty());
            let v: Value = serde_json::from_slice(&o.stdout).expect("json");
            v["structuredContent"].clone()
        };
        let (rx, ry) = (out(px), out(py));
        let applied_x = rx["status"] == "applied";
        let (win, lose, post) = if applied_x {
            (&rx, &ry, &cx.post)
        } else {
            (&ry, &rx, &cy.post)
        };
        assert_eq!(win["status"], "applied", "round {round}: {rx} {ry}");
        assert_eq!(
            lose["code"], "revision_conflict",
            "round {round}: {rx} {ry}"
        );
        assert_eq!(lose["retryable"], true);
        assert_eq!(
            &visible(&b),
            post,
            "round {round}: the bundle equals the winner's result"
        );
        assert_eq!(receipts(&b), 1);
    }
}

#[test]
fn sto_13_identical_applies_waiting_on_a_held_lock_replay_plainly() {
    let c = case(&three_file_ops());
    for d in ["transactions", "staging", "receipts", "capabilities"] {
        std::fs::create_dir_all(c.b.join(".okf").join(d)).expect("okf");
    }
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(c.b.join(".okf/lock"))
        .expect("lock file");
    lock.lock().expect("lock");
    let a = apply_args(&c.args, &c.preview).to_string();
    let spawn = || {
        Command::new(bin())
            .args(["call", "apply_concept_patch", "--args", &a])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let (p1, p2) = (spawn(), spawn());
    // Give both processes time to capture the base and queue on the lock (if one is late it
    // replays from the moved bundle, which must answer the same way).
    std::thread::sleep(Duration::from_millis(500));
    drop(lock);
    let out = |p: Child| -> Value {
        let o = p.wait_with_output().expect("wait");
        assert!(o.stderr.is_empty());
        let v: Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["isError"], false, "{v}");
        v["structuredContent"].clone()
    };
    let mut outs = [out(p1), out(p2)];
    outs.sort_by_key(|s| s["diagnostics"].as_array().map_or(0, Vec::len));
    for s in &outs {
        check_apply(s);
        assert_first_answer(&c, s);
    }
    assert_eq!(outs[0]["diagnostics"], json!([]), "one fresh commit");
    let d = outs[1]["diagnostics"].as_array().expect("d");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["code"], "receipt_replayed");
    let m = d[0]["message"].as_str().expect("m");
    assert!(m.contains("its stored result is returned"), "{m}");
    assert!(!m.contains("undone"), "{m}");
    assert_all(&c.b, &c.post, "one publish");
    assert_eq!(receipts(&c.b), 1);
}
