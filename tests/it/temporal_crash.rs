//! Crash points of the temporal-upgrade commit (spec/temporal.md §6, store.md §10–§11): at
//! every fault point of an upgrade of the realistic date-profile fixture (eleven concepts
//! rewritten), a real process crash (`exit(86)`) leaves exactly the pre-state before the
//! boundary, only pre or post bytes per file after it, and the exact replay recovers to
//! exactly the post-state, answered from the receipt when the boundary was passed.
#![allow(clippy::disallowed_methods)]

use crate::support::temporal::{apply_args, map_all, preview, targs};
use crate::support::util::{bin, call, copy_bundle, fixture, visible};
use okf_mcp::store::fault::Point;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn ready_args(root: &Path) -> Value {
    let p0 = preview(&targs(root, None));
    let a = targs(root, Some(map_all(&p0["unresolved"], "T00:00:00+02:00")));
    let p = preview(&a);
    assert_eq!(p["status"], "ready", "{p}");
    apply_args(&a, &p)
}

#[test]
fn every_fault_point_of_an_upgrade_commit_recovers_to_pre_or_post_state() {
    let (_d, clean) = copy_bundle(&fixture("temporal-date"));
    let pre = visible(&clean);
    let x = ready_args(&clean);
    let r = call("apply_temporal_upgrade", &x);
    assert_eq!(r.structured()["status"], "applied", "{}", r.stdout);
    let post = visible(&clean);
    let changed = pre.iter().filter(|(k, v)| post.get(*k) != Some(v)).count();
    assert_eq!(changed, 11, "eleven concepts hold legacy dates");

    let mut crashed = 0;
    for point in Point::commit_sequence(changed) {
        let (_d, root) = copy_bundle(&fixture("temporal-date"));
        let x = ready_args(&root);
        let out = Command::new(bin())
            .args(["call", "apply_temporal_upgrade", "--args", &x.to_string()])
            .env("OKF_MCP_FAULT", format!("{point}:crash"))
            .output()
            .expect("spawn");
        assert_eq!(out.status.code(), Some(86), "{point}: the process crashed");
        crashed += 1;
        let now = visible(&root);
        assert_eq!(
            now.keys().collect::<Vec<_>>(),
            pre.keys().collect::<Vec<_>>(),
            "{point}: no extra or missing visible file"
        );
        for (p, bytes) in &now {
            assert!(
                bytes == &pre[p] || bytes == &post[p],
                "{point}: {p} holds neither its pre nor its post bytes"
            );
        }
        if !point.is_post_boundary() {
            assert_eq!(now, pre, "{point}: the pre-state before the boundary");
        }
        // Recovery happens on the next store open; the exact replay then answers.
        let again = call("apply_temporal_upgrade", &x);
        assert!(!again.is_error(), "{point}: {}", again.stdout);
        let s = again.structured();
        assert_eq!(s["status"], "applied", "{point}");
        assert_eq!(
            s["result_revision"],
            r.structured()["result_revision"],
            "{point}"
        );
        assert_eq!(visible(&root), post, "{point}: converged to the post-state");
        let replayed = s["diagnostics"]
            .as_array()
            .is_some_and(|d| d.len() == 1 && d[0]["code"] == "receipt_replayed");
        assert_eq!(
            replayed,
            point.is_post_boundary(),
            "{point}: answered from the receipt exactly when the commit had happened: {s}"
        );
        // Exactly once: a further replay publishes nothing and answers from the receipt.
        let third = call("apply_temporal_upgrade", &x);
        assert_eq!(
            third.structured()["diagnostics"][0]["code"],
            "receipt_replayed"
        );
        assert_eq!(visible(&root), post, "{point}");
    }
    assert!(crashed >= 30, "the fault points ran: {crashed}");
}
