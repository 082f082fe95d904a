//! `apply_concept_patch` when `.okf/` already exists: the store is opened and locked first and
//! the one capture taken under the lock is the C5 compare-and-swap capture (docs/store.md §3.1,
//! spec/store.md §10.1, §13). These tests pin that the lock-first path answers exactly as the
//! replay matrix says and leaves every byte (visible tree and private state) alone on noop,
//! rejection and plan mismatch.

use crate::patch::{apply, apply_args, patch_args, preview, put, tool_err};
use crate::util::{copy_bundle, fixture, snapshot};
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
