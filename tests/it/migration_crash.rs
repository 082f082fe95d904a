//! Crash points of the migration commit (spec/migration.md §9 F, store.md §10–§11; MIG-26):
//! at every fault point of a migration that writes three concepts (one of them an Attested
//! Computation), its zero-byte asset and the root `index.md`, a real process crash (`exit(86)`) leaves exactly the pre-state or
//! the post-state once recovered, and the new root `index.md` is never visible beside an
//! unmigrated document.
#![allow(clippy::disallowed_methods)]

use crate::support::migration::apply_args;
use crate::support::util::{bin, call, visible};
use okf_mcp::store::fault::Point;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const DOCS: [(&str, &str); 4] = [
    ("index.md", "# Bundle\n\n* [a](t/a.md)\n"),
    (
        "t/a.md",
        "---\ntype: Table\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nA [1].\n\n# Citations\n\n[1] [A](https://example.test/a)\n",
    ),
    (
        "t/b.md",
        "---\ntype: Table\ntimestamp: 2026-01-02T00:00:00Z\n---\n\nB.\n",
    ),
    (
        "t/c.md",
        "---\ntype: Table\ntimestamp: 2026-01-03T00:00:00Z\n---\n\nC.\n",
    ),
];

fn fresh() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("b");
    for (p, t) in DOCS {
        let f = root.join(p);
        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
        std::fs::write(f, t).expect("write");
    }
    (dir, root)
}

/// The bytes of the one receipt of `root`'s store.
fn receipt_file(root: &Path) -> Vec<u8> {
    let dir = root.join(".okf/receipts");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("receipts")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    std::fs::read(names.remove(0)).expect("receipt")
}

fn args(root: &Path) -> Value {
    json!({
        "bundle_path": root.to_str().expect("utf8"),
        "timestamp_policy": "remove_after_copy",
        "generated_by": "agent/1.0",
        "citation_mappings": [{"path": "t/a.md", "entries": [{"legacy_number": 1, "source_id": "a"}]}],
        "computations": [{
            "concept_id": "t/c",
            "contract": {
                "mode": "file", "runtime": "sql", "parameters": [],
                "computation_path": "c.sql",
                "executor": {"resource": "run.md", "receipt": ["job_id"]},
                "attester": {"resource": "attest.py"},
            },
            "asset": {"path": "t/c.sql", "content": ""},
        }],
    })
}

/// The apply arguments of `root` after an applicable preview (whose proof is inline: the
/// bundle is small, `include_proof` is `auto`).
fn authorised(root: &Path) -> Value {
    let a = args(root);
    let p = call("preview_v02_migration", &a);
    let p = p.structured();
    assert_eq!(p["status"], "applicable", "{p}");
    apply_args(&a, p)
}

#[test]
fn mig_26_every_fault_point_of_a_migration_commit_recovers_to_pre_or_post_state() {
    // The post-state, from an uninterrupted run.
    let (_d, clean) = fresh();
    let pre = visible(&clean);
    let x = authorised(&clean);
    let r = call("apply_v02_migration", &x);
    assert_eq!(r.structured()["status"], "applied", "{}", r.stdout);
    let changed = r.structured()["changed_paths"]
        .as_array()
        .expect("paths")
        .len();
    assert_eq!(
        changed, 5,
        "three concepts, the zero-byte asset and the root index"
    );
    let post = visible(&clean);
    assert_eq!(
        post.get("t/c.sql"),
        Some(&Vec::new()),
        "the zero-byte asset"
    );
    let relocate = |m: &BTreeMap<String, Vec<u8>>| m.clone();

    let mut crashed = 0;
    for point in Point::commit_sequence(changed) {
        let (_d, root) = fresh();
        let x = authorised(&root);
        let out = Command::new(bin())
            .args(["call", "apply_v02_migration", "--args", &x.to_string()])
            .env("OKF_MCP_FAULT", format!("{point}:crash"))
            .output()
            .expect("spawn");
        assert_eq!(out.status.code(), Some(86), "{point}: the process crashed");
        crashed += 1;
        let now = visible(&root);
        // Before recovery: never the new root index beside an old document.
        let root_new = now.get("index.md") == post.get("index.md");
        if root_new {
            for (p, bytes) in &post {
                assert_eq!(now.get(p), Some(bytes), "{point}: index.md ahead of {p}");
            }
        }
        // Recovery happens on the next store open; the exact replay then answers.
        let again = call("apply_v02_migration", &x);
        assert!(!again.is_error(), "{point}: {}", again.stdout);
        assert_eq!(again.structured()["status"], "applied", "{point}");
        assert_eq!(
            visible(&root),
            relocate(&post),
            "{point}: converged to the post-state"
        );
        if point.is_post_boundary() {
            // After a crash past the boundary the zero-byte asset exists and a re-resolve is
            // the target noop.
            assert_eq!(visible(&root).get("t/c.sql"), Some(&Vec::new()), "{point}");
            let n = call("preview_v02_migration", &args(&root));
            assert_eq!(n.structured()["status"], "noop", "{point}: {}", n.stdout);
            assert_eq!(
                n.structured()["source"]["transition"],
                "target-noop",
                "{point}"
            );
            assert_eq!(
                again.structured()["diagnostics"][0]["code"],
                "receipt_replayed",
                "{point}: past the boundary the commit had happened"
            );
            // Two replays return equal receipts, whose fields equal the proof.
            let first = receipt_file(&root);
            let twice = call("apply_v02_migration", &x);
            // The same answer, except that the first replay also completed the publication
            // (its `receipt_replayed` message says so) and the second only looked it up.
            let mut same = again.structured().clone();
            same["diagnostics"][0]["message"] =
                twice.structured()["diagnostics"][0]["message"].clone();
            assert_eq!(twice.structured(), &same, "{point}");
            assert_eq!(
                twice.structured()["diagnostics"][0]["code"],
                "receipt_replayed"
            );
            assert_eq!(
                receipt_file(&root),
                first,
                "{point}: the receipt is not rewritten"
            );
            let receipt: Value = serde_json::from_slice(&first).expect("receipt JSON");
            let r = &receipt["receipt"];
            let proof = &x["proof"];
            for k in [
                "request_digest",
                "base_revision",
                "result_revision",
                "changed_refs",
                "changed_files",
            ] {
                assert_eq!(r[k], proof[k], "{point}: receipt {k} equals the proof's");
            }
        } else {
            assert_ne!(
                now, post,
                "{point}: nothing is published before the boundary"
            );
            assert_eq!(now, pre, "{point}: the pre-state before the boundary");
        }
    }
    assert!(crashed >= 15, "the fault points ran: {crashed}");
}
