//! `apply_concept_patch` when `.okf/` already exists: the store is opened and locked first and
//! the one capture taken under the lock is the C5 compare-and-swap capture (docs/store.md §3.1,
//! spec/store.md §10.1, §13). These tests pin that the lock-first path answers exactly as the
//! replay matrix says and leaves every byte (visible tree and private state) alone on noop,
//! rejection and plan mismatch.

use crate::support::patch::{apply, apply_args, patch_args, preview, put, tool_err};
use crate::support::util::{copy_bundle, fixture, snapshot};
use serde_json::{json, Value};
use std::path::Path;

fn gen_op(concept: &str, by: &str) -> Value {
    json!({"kind": "set_generated", "concept_id": concept, "generated": {"by": by}})
}

/// Applies one patch so that `.okf/` exists; returns its preview and apply answers.
fn seed_store(b: &Path) -> (Value, Value, Value) {
    let args = patch_args(b, &json!([gen_op("metrics/revenue", "agent/seed")]));
    let p = preview(&args);
    assert_eq!(p["status"], "applicable");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    assert!(b.join(".okf").is_dir());
    (args, p, a)
}

#[test]
fn sto_05_with_a_store_noop_rejection_and_mismatch_change_no_byte_anywhere() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    seed_store(&b);
    // Everything, `.okf/` included (the lock file exists since the seed apply).
    let before = snapshot(&b);

    // noop: the seed's own operation again.
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/seed")]));
    let p = preview(&args);
    assert_eq!(p["status"], "noop");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "noop");
    assert_eq!(a["base_revision"], p["base_revision"]);
    assert_eq!(snapshot(&b), before);

    // rejected: a concept that does not exist.
    let args = patch_args(&b, &json!([gen_op("metrics/nope", "agent/x")]));
    let p = preview(&args);
    assert_eq!(p["status"], "rejected");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "rejected");
    assert_eq!(snapshot(&b), before);

    // plan mismatch: the digest of another plan.
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    assert_eq!(p["status"], "applicable");
    let changed = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/3")]));
    let e = tool_err("apply_concept_patch", &apply_args(&changed, &p));
    assert_eq!(e["code"], "plan_mismatch");
    assert_eq!(snapshot(&b), before);
}

#[test]
fn sto_01_with_a_store_a_fresh_apply_commits_the_previewed_result_and_replays_plainly() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    seed_store(&b);
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    assert_eq!(a["base_revision"], p["base_revision"]);
    assert_eq!(a["result_revision"], p["result_revision"]);
    let text = std::fs::read_to_string(b.join("metrics/revenue.md")).expect("read");
    assert!(text.contains("agent/2"));
    let after = snapshot(&b)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".okf"))
        .collect::<Vec<_>>();

    // Exact replay under the lock-first path: the stored answer plus one plain INFO.
    let r = apply(&apply_args(&args, &p));
    assert_eq!(r["status"], "applied");
    assert_eq!(r["result_revision"], a["result_revision"]);
    assert_eq!(r["diagnostics"].as_array().map(Vec::len), Some(1));
    assert_eq!(r["diagnostics"][0]["code"], "receipt_replayed");
    assert!(r["diagnostics"][0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("stored result is returned")));
    let again = snapshot(&b)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".okf"))
        .collect::<Vec<_>>();
    assert_eq!(again, after);
}

#[test]
fn sto_04_with_a_store_an_external_change_is_a_revision_conflict_and_is_kept() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    seed_store(&b);
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    let external = b"---\ntype: Metric\ntitle: External\n---\n\nRewritten.\n";
    put(b.join("metrics/revenue.md"), external).expect("write");
    let before = snapshot(&b);
    let e = tool_err("apply_concept_patch", &apply_args(&args, &p));
    assert_eq!(e["code"], "revision_conflict");
    assert_eq!(e["retryable"], true);
    assert_eq!(snapshot(&b), before);
}

/// `okf-mcp call apply_concept_patch` with extra environment; returns (exit code, stdout).
#[cfg(feature = "fault-injection")]
fn apply_env(args: &Value, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = std::process::Command::new(crate::support::util::bin());
    cmd.args(["call", "apply_concept_patch", "--args", &args.to_string()]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run okf-mcp");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The no-op patch of the `patch-ext` fixture (a verification that is not there).
#[cfg(feature = "fault-injection")]
fn noop_op() -> Value {
    json!({"kind": "remove_verification", "concept_id": "metrics/archived",
           "verification": {"by": "human:nobody", "at": "2026-07-01T00:00:00Z"}})
}

/// Rule S-2 and §13 row 2 with a store whose lock another writer holds: the no-op apply
/// answers `noop` without waiting for the lock (the reservation never waits), and a real
/// change falls back to the spec's order and times out on the lock with nothing written.
#[test]
#[cfg(feature = "fault-injection")]
fn sto_05_a_held_lock_does_not_delay_a_noop_and_times_out_a_change_cleanly() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    seed_store(&b);
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(b.join(".okf/lock"))
        .expect("open lock");
    held.lock().expect("hold the store lock");
    let before = snapshot(&b);

    let args = patch_args(&b, &json!([noop_op()]));
    let p = preview(&args);
    assert_eq!(p["status"], "noop");
    let (code, out) = apply_env(
        &apply_args(&args, &p),
        &[("OKF_MCP_LOCK_TIMEOUT_MS", "60000")],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\"status\":\"noop\""), "{out}");
    assert_eq!(snapshot(&b), before);

    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/9")]));
    let p = preview(&args);
    assert_eq!(p["status"], "applicable");
    let (code, out) = apply_env(
        &apply_args(&args, &p),
        &[("OKF_MCP_LOCK_TIMEOUT_MS", "200")],
    );
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("operation_cancelled"), "{out}");
    assert_eq!(snapshot(&b), before);
    drop(held);
}

/// §13 row 2 with a journal pending (a crash right after the commit point of another
/// request): the no-op apply answers `noop` and does not run recovery (the visible tree stays
/// at the pre-state); the exact replay of the crashed request then completes it.
#[test]
#[cfg(feature = "fault-injection")]
fn sto_03_a_pending_journal_is_not_recovered_by_a_noop_apply() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    seed_store(&b);
    let x = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/x")]));
    let px = preview(&x);
    let y = patch_args(&b, &json!([noop_op()]));
    let py = preview(&y);
    assert_eq!(py["status"], "noop");
    let visible = |b: &Path| {
        snapshot(b)
            .into_iter()
            .filter(|(k, _)| !k.starts_with(".okf"))
            .collect::<Vec<_>>()
    };
    let pre = visible(&b);
    let (code, _) = apply_env(
        &apply_args(&x, &px),
        &[("OKF_MCP_FAULT", "after_journal_rename:crash")],
    );
    assert_eq!(code, 86, "simulated crash after the commit point");
    assert_eq!(visible(&b), pre);

    let a = apply(&apply_args(&y, &py));
    assert_eq!(a["status"], "noop");
    assert_eq!(
        visible(&b),
        pre,
        "a noop apply does not publish another journal"
    );

    let r = apply(&apply_args(&x, &px));
    assert_eq!(r["status"], "applied");
    assert!(r["diagnostics"][0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("completed now")));
    assert_ne!(visible(&b), pre);
}

/// `okf-mcp call` with `env` set; asserts success (exit 0, no stderr) and returns the
/// `structuredContent`.
#[cfg(feature = "fault-injection")]
fn call_ok_env(tool: &str, args: &Value, env: &[(&str, &str)]) -> Value {
    let (r, stderr) = crate::support::util::call_env_exit(tool, args, env, 0);
    assert!(stderr.is_empty());
    r["structuredContent"].clone()
}

/// docs/store.md §3.2: when the plan of a spilled capture reads a spilled document (here the
/// fault-injection hook forgets the parse memo right after the capture), preview and apply
/// discard it and re-capture with every file resident: the answers equal the ones without
/// the hook, and the apply — lock-first, so the second capture is still under the lock —
/// commits the previewed result.
#[cfg(feature = "fault-injection")]
#[test]
fn sto_01_a_plan_that_missed_its_spilled_capture_is_rebuilt_and_commits_under_the_lock() {
    use okf_mcp::store::hooks::ENV_FORGET_MEMO;
    let (_t, b) = copy_bundle(&fixture("patch-pre"));
    // A first commit creates `.okf/`, so the apply below takes the lock-first path.
    let concept = "metrics/good";
    let seed = patch_args(&b, &json!([gen_op(concept, "agent/seed")]));
    let p = preview(&seed);
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(apply(&apply_args(&seed, &p))["status"], "applied");
    assert!(b.join(".okf").is_dir());

    let args = patch_args(&b, &json!([gen_op(concept, "agent/spill")]));
    let plain = preview(&args);
    assert_eq!(plain["status"], "applicable");
    let forgot = call_ok_env("preview_concept_patch", &args, &[(ENV_FORGET_MEMO, "1")]);
    assert_eq!(forgot, plain);

    let before: Vec<(String, Vec<u8>)> = snapshot(&b)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".okf"))
        .collect();
    let a = call_ok_env(
        "apply_concept_patch",
        &apply_args(&args, &plain),
        &[(ENV_FORGET_MEMO, "1")],
    );
    assert_eq!(a["status"], "applied", "{a}");
    assert_eq!(a["result_revision"], plain["result_revision"]);
    let after = snapshot(&b);
    let text = String::from_utf8(after[&format!("{concept}.md")].clone()).expect("utf-8");
    assert!(text.contains("agent/spill"));
    // Only the concept changed in the visible tree.
    for (k, v) in &before {
        if k != &format!("{concept}.md") {
            assert_eq!(after.get(k), Some(v), "{k}");
        }
    }
    // The exact replay (again with the hook) is answered from the receipt.
    let r = call_ok_env(
        "apply_concept_patch",
        &apply_args(&args, &plain),
        &[(ENV_FORGET_MEMO, "1")],
    );
    assert_eq!(r["status"], "applied");
    assert_eq!(r["diagnostics"][0]["code"], "receipt_replayed");
}

/// A bundle copy whose store exists (`.okf/` with its four subdirectories and the lock file)
/// and whose lock the returned file holds, as another writer would.
#[cfg(feature = "fault-injection")]
fn locked_store(b: &Path) -> std::fs::File {
    for d in ["transactions", "staging", "receipts", "capabilities"] {
        std::fs::create_dir_all(b.join(".okf").join(d)).expect("mkdir");
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(b.join(".okf/lock"))
        .expect("open lock");
    f.lock().expect("hold the store lock");
    f
}

/// spec/store.md §16 rule 4 (STO-19): a lock held by another process for the whole wait ends
/// every write tool with `operation_cancelled`, retryable, `bundle is locked by another
/// writer; retry the same call later`, and a recovery step saying nothing was changed —
/// never the generic "outcome is not confirmed" cancellation. The wait is shortened to
/// 300 ms here; `tests/it/store.rs::sto_12_lock_timeout_is_the_real_30_seconds` keeps the
/// real 30 s.
#[test]
#[cfg(feature = "fault-injection")]
fn sto_19_a_held_lock_says_the_bundle_is_locked_and_nothing_changed_for_every_write_tool() {
    use crate::support::util::call_env_exit;
    let mut cases: Vec<(&str, tempfile::TempDir, std::path::PathBuf, Value)> = Vec::new();
    // Concept patch.
    let (t, b) = copy_bundle(&fixture("patch-ext"));
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/9")]));
    let p = preview(&args);
    cases.push(("apply_concept_patch", t, b, apply_args(&args, &p)));
    // Migration.
    let (t, b) = copy_bundle(&fixture("demo-v01"));
    let a =
        json!({"bundle_path": b, "timestamp_policy": "remove_after_copy", "citation_mappings": []});
    let first = crate::support::util::call("preview_v02_migration", &a);
    let mut a = a.clone();
    a["citation_mappings"] = first.structured()["proposed_citation_mappings"].clone();
    a["generated_by"] = json!("agent/1.0");
    let p = crate::support::migration::preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    cases.push((
        "apply_v02_migration",
        t,
        b,
        crate::support::migration::apply_args(&a, &p),
    ));
    // Temporal upgrade.
    let (t, b) = copy_bundle(&fixture("temporal-date"));
    let a = crate::support::temporal::targs(&b, None);
    let p = crate::support::temporal::preview(&a);
    let a = crate::support::temporal::targs(
        &b,
        Some(crate::support::temporal::map_all(
            &p["unresolved"],
            "T00:00:00Z",
        )),
    );
    let p = crate::support::temporal::preview(&a);
    assert_eq!(p["status"], "ready", "{p}");
    cases.push((
        "apply_temporal_upgrade",
        t,
        b,
        crate::support::temporal::apply_args(&a, &p),
    ));
    // write_concept.
    let (t, b) = copy_bundle(&fixture("patch-ext"));
    let w = json!({"bundle_path": b, "concept_id": "notes/new",
        "frontmatter": "type: Note\ntitle: New\n", "body": "Body.\n"});
    cases.push(("write_concept", t, b, w));
    for (tool, _t, b, args) in cases {
        let held = locked_store(&b);
        let before = snapshot(&b);
        let (r, _) = call_env_exit(tool, &args, &[("OKF_MCP_LOCK_TIMEOUT_MS", "300")], 1);
        let e = &r["structuredContent"];
        assert_eq!(e["code"], "operation_cancelled", "{tool}: {r}");
        assert_eq!(e["retryable"], true, "{tool}");
        assert_eq!(
            e["message"], "bundle is locked by another writer; retry the same call later",
            "{tool}: {r}"
        );
        let step = e["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .find(|d| d["code"] == "recovery_step")
            .unwrap_or_else(|| panic!("{tool}: a recovery step: {r}"));
        assert!(
            step["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Nothing was changed")),
            "{tool}: {step}"
        );
        assert_eq!(snapshot(&b), before, "{tool}: nothing changed");
        drop(held);
        // Once the lock is free the same call goes through.
        let ok = crate::support::util::call(tool, &args);
        assert!(!ok.is_error(), "{tool}: {}", ok.stdout);
    }
}

/// spec/store.md §16 rule 5 (STO-20, the `.okf/lock` part): a lock entry that is a symlink,
/// a FIFO or a directory is refused by name with a recovery step and never followed; once it
/// is removed the same call goes through.
#[test]
#[allow(clippy::disallowed_methods)] // the test plants the entries itself
fn sto_20_a_lock_that_is_no_regular_file_is_named_and_never_followed() {
    let outside = tempfile::tempdir().expect("tempdir");
    let target = outside.path().join("victim");
    std::fs::write(&target, b"keep").expect("write");
    for kind in ["symlink", "fifo", "directory"] {
        let (_t, b) = copy_bundle(&fixture("patch-ext"));
        seed_store(&b);
        let lock = b.join(".okf/lock");
        std::fs::remove_file(&lock).expect("remove the lock file");
        match kind {
            "symlink" => std::os::unix::fs::symlink(&target, &lock).expect("symlink"),
            "fifo" => {
                let ok = std::process::Command::new("mkfifo")
                    .arg(&lock)
                    .status()
                    .expect("mkfifo")
                    .success();
                assert!(ok, "mkfifo");
            }
            _ => std::fs::create_dir(&lock).expect("mkdir"),
        }
        let before = snapshot(&b);
        let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/20")]));
        let p = preview(&args);
        assert_eq!(p["status"], "applicable", "{kind}: {p}");
        let e = tool_err("apply_concept_patch", &apply_args(&args, &p));
        assert_eq!(e["code"], "operation_rejected", "{kind}: {e}");
        let m = e["message"].as_str().expect("message");
        assert!(m.starts_with(".okf/lock is "), "{kind}: {m}");
        assert!(
            e["diagnostics"]
                .as_array()
                .expect("diagnostics")
                .iter()
                .any(|d| d["code"] == "recovery_step"
                    && d["message"]
                        .as_str()
                        .is_some_and(|s| s.contains("remove it"))),
            "{kind}: {e}"
        );
        assert_eq!(snapshot(&b), before, "{kind}: nothing changed");
        assert_eq!(std::fs::read(&target).expect("read"), b"keep", "{kind}");
        // Removing the entry lets the same call through.
        if kind == "directory" {
            std::fs::remove_dir(&lock).expect("rmdir");
        } else {
            std::fs::remove_file(&lock).expect("rm");
        }
        let a = apply(&apply_args(&args, &p));
        assert_eq!(a["status"], "applied", "{kind}: {a}");
    }
}
