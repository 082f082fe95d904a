//! The I/O order of the migration tools, observed with the store's in-process I/O trace
//! (`okf_mcp::store::hooks::trace`, fault-injection builds only): MIG-13, the "zero I/O" and
//! "zero store opens" parts of MIG-12, MIG-23 and MIG-24, and the idempotency key of MIG-28.
//!
//! The tools run through the shared dispatcher on the test's thread, so the thread-local
//! trace sees every store I/O event of the call ([`IoEvent`]: the root walk, one `Read` per
//! file a capture accepts, each digest-checked `Reread` of a spilled document, the `.okf`
//! probes and every store open).
#![allow(clippy::disallowed_methods)]

use crate::support::dispatch::dispatch;
use crate::support::migration::{apply_args, args, bundle};
use crate::support::migration::{file_item, inline_item, query, ROOT_01};
use crate::support::util::snapshot;
use okf_mcp::store::hooks::{trace, IoEvent};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

const ROOT: &str = "# Bundle\n\n* [orders](tables/orders.md)\n";
const ORDERS: &str = "---\ntype: Table\ntitle: Orders\ntimestamp: '2026-05-28T22:43:59+00:00'\n---\n\nClaim [1].\n\n# Citations\n\n[1] [Spec](https://example.test/spec)\n";
const USERS: &str =
    "---\ntype: Table\ntitle: Users\ntimestamp: '2026-05-29T10:00:00+00:00'\n---\n\nBody.\n";
const PLAIN: &str = "---\ntype: Table\ntitle: Plain\n---\n\nNothing to migrate.\n";

/// Runs `tool` on `a` in process; its structured result, whether it is an error, and the
/// I/O events of the call.
fn traced(tool: &str, a: &Value) -> (Value, bool, Vec<IoEvent>) {
    let g = trace();
    let out = dispatch(tool, a);
    (out.structured, out.is_error, g.events())
}

/// A v0.1 bundle: the root index, two concepts to migrate, one that needs nothing and a
/// non-Markdown file.
fn four_files() -> (tempfile::TempDir, std::path::PathBuf) {
    bundle(&[
        ("index.md", ROOT),
        ("tables/orders.md", ORDERS),
        ("tables/users.md", USERS),
        ("tables/plain.md", PLAIN),
        ("data.csv", "a,b\n"),
    ])
}

/// The migration arguments of [`four_files`].
fn four_args(root: &Path) -> Value {
    args(
        root,
        json!({
            "generated_by": "agent/1.0",
            "citation_mappings": [{"path": "tables/orders.md", "entries": [{"legacy_number": 1, "source_id": "spec"}]}],
        }),
    )
}

/// The files of the bundle in capture (byte) order.
const FILES: [&str; 5] = [
    "data.csv",
    "index.md",
    "tables/orders.md",
    "tables/plain.md",
    "tables/users.md",
];

fn reads(ev: &[IoEvent]) -> Vec<String> {
    ev.iter()
        .filter_map(|e| match e {
            IoEvent::Read(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

fn rereads(ev: &[IoEvent]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in ev {
        if let IoEvent::Reread(p) = e {
            *m.entry(p.clone()).or_insert(0) += 1;
        }
    }
    m
}

fn store_opens(ev: &[IoEvent]) -> usize {
    ev.iter().filter(|e| **e == IoEvent::StoreOpen).count()
}

/// Every reread is of a concept document of the capture (never the resident root index,
/// never a non-Markdown file) and happens at most `max` times per document.
fn assert_rereads_of_documents(ev: &[IoEvent], max: usize, what: &str) {
    for (p, n) in rereads(ev) {
        assert!(
            FILES.contains(&p.as_str()) && p.ends_with(".md") && p != "index.md",
            "{what}: reread of {p}: {ev:?}"
        );
        assert!(n <= max, "{what}: {p} reread {n} times: {ev:?}");
    }
}

#[test]
fn mig_13_io_order_of_preview_apply_replay_and_target_noop() {
    let (_d, root) = four_files();
    let a = four_args(&root);

    // Preview: the root walk first; the capture reads every file exactly once, in byte
    // order, before the planner reads any document again; the documents are read again one
    // at a time through the digest-checked reread (spec/migration.md §12.5 rule 1: the
    // capture spills them), at most once per planning pass (resolution, transformation);
    // the store is never opened and `.okf` never probed (§8 step 9: preview never opens the
    // store).
    let (p, err, ev) = traced("preview_v02_migration", &a);
    assert!(!err, "{p}");
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(ev.first(), Some(&IoEvent::OpenRoot), "{ev:?}");
    assert_eq!(ev.iter().filter(|e| **e == IoEvent::OpenRoot).count(), 1);
    assert_eq!(reads(&ev), FILES, "one capture read per file: {ev:?}");
    let last_read = ev
        .iter()
        .rposition(|e| matches!(e, IoEvent::Read(_)))
        .expect("reads");
    let first_reread = ev
        .iter()
        .position(|e| matches!(e, IoEvent::Reread(_)))
        .expect("the planner reads the spilled documents again");
    assert!(last_read < first_reread, "capture before planning: {ev:?}");
    assert_rereads_of_documents(&ev, 2, "preview");
    assert_eq!(store_opens(&ev), 0, "preview never opens the store: {ev:?}");
    assert!(!ev.contains(&IoEvent::ProbePrivateState), "{ev:?}");
    assert!(!root.join(".okf").exists());

    // Apply on a bundle without `.okf/`: root walk, `.okf` probe (no lock-first
    // reservation), the capture and the hash-and-drop verification pass, then the one store
    // open (§12.5 rule 2: a mismatch must still create nothing), then the capture the store
    // compares at C5 (every file once more) and the payloads produced again at C8.
    let x = apply_args(&a, &p);
    let (r, err, ev) = traced("apply_v02_migration", &x);
    assert!(!err, "{r}");
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(ev.first(), Some(&IoEvent::OpenRoot), "{ev:?}");
    assert_eq!(store_opens(&ev), 1, "{ev:?}");
    let open_at = ev
        .iter()
        .position(|e| *e == IoEvent::StoreOpen)
        .expect("store open");
    let (before, after) = ev.split_at(open_at);
    assert_eq!(reads(before), FILES, "the capture before the store: {ev:?}");
    assert!(
        !rereads(before).is_empty(),
        "the verification pass before the store: {ev:?}"
    );
    assert_rereads_of_documents(before, 2, "apply before the store open");
    assert_eq!(reads(after), FILES, "the capture under the lock: {ev:?}");
    let written: Vec<&str> = r["changed_paths"]
        .as_array()
        .expect("changed_paths")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(written, ["index.md", "tables/orders.md", "tables/users.md"]);
    for w in &written {
        assert!(
            after.contains(&IoEvent::Reread((*w).to_owned())),
            "{w}: its payload is produced again under the lock: {ev:?}"
        );
    }

    // The exact replay: `.okf/` exists, so the store is opened first (lock-first
    // reservation), then one capture.
    let (rr, err, ev) = traced("apply_v02_migration", &x);
    assert!(!err, "{rr}");
    assert_eq!(rr["status"], "applied");
    let first_read = ev
        .iter()
        .position(|e| matches!(e, IoEvent::Read(_)))
        .expect("reads");
    assert_eq!(
        &ev[..first_read],
        [
            IoEvent::OpenRoot,
            IoEvent::ProbePrivateState,
            IoEvent::StoreOpen
        ],
        "{ev:?}"
    );
    assert_eq!(reads(&ev), FILES, "{ev:?}");
    assert_eq!(store_opens(&ev), 1, "{ev:?}");

    // Target-noop: the re-preview and its apply read the bundle but never open the store
    // nor probe `.okf` (spec/migration.md §9, the target-noop row).
    let state = snapshot(&root);
    let (p2, err, ev) = traced("preview_v02_migration", &a);
    assert!(!err, "{p2}");
    assert_eq!(p2["status"], "noop", "{p2}");
    assert_eq!(p2["source"]["transition"], "target-noop");
    assert_eq!(store_opens(&ev), 0, "{ev:?}");
    let (n, err, ev) = traced("apply_v02_migration", &apply_args(&a, &p2));
    assert!(!err, "{n}");
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(ev.first(), Some(&IoEvent::OpenRoot), "{ev:?}");
    assert_eq!(reads(&ev), FILES, "{ev:?}");
    assert_eq!(
        store_opens(&ev),
        0,
        "a target-noop never opens the store: {ev:?}"
    );
    assert!(!ev.contains(&IoEvent::ProbePrivateState), "{ev:?}");
    assert_eq!(snapshot(&root), state);
}

#[test]
fn mig_13_a_transition_noop_apply_never_opens_the_store() {
    let v02 =
        "---\ntype: Table\ngenerated:\n  by: agent/1.0\n  at: 2026-01-01T00:00:00Z\n---\n\nBody.\n";
    let (_d, root) = bundle(&[("t/a.md", v02)]);
    let a = args(&root, json!({"from": "0.1"}));
    let (p, _, _) = traced("preview_v02_migration", &a);
    assert_eq!(p["status"], "noop", "{p}");
    assert_eq!(p["source"]["transition"], "v0.1-to-v0.2");
    let (r, err, ev) = traced("apply_v02_migration", &apply_args(&a, &p));
    assert!(!err, "{r}");
    assert_eq!(r["status"], "noop", "{r}");
    assert_eq!(ev.first(), Some(&IoEvent::OpenRoot), "{ev:?}");
    assert_eq!(reads(&ev), ["t/a.md"], "{ev:?}");
    assert_eq!(store_opens(&ev), 0, "{ev:?}");
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_12_authorisation_preflight_refusals_have_zero_io_events() {
    let (_d, root) = four_files();
    let a = four_args(&root);
    let (p, _, _) = traced("preview_v02_migration", &a);
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(
        p["proof"]["changed_refs"],
        json!(["tables/orders", "tables/users"])
    );
    let good = apply_args(&a, &p);
    let before = snapshot(&root);
    let mut cases: Vec<(&str, Value, &str)> = Vec::new();
    let mut x = good.clone();
    x["expected_plan_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    cases.push(("wrong digest", x, "plan_mismatch"));
    let mut x = good.clone();
    x["proof"]["request_digest"] = json!(format!("sha256:{}", "1".repeat(64)));
    cases.push(("tampered request_digest", x, "plan_mismatch"));
    let mut x = good.clone();
    x["proof"]["changed_refs"] = json!(["tables/users", "tables/orders"]);
    cases.push(("unordered changed_refs", x, "plan_mismatch"));
    let mut x = good.clone();
    let files = x["proof"]["changed_files"]
        .as_array_mut()
        .expect("changed_files");
    files.swap(1, 2);
    cases.push((
        "changed_files out of the proof's order (MIG-28)",
        x,
        "plan_mismatch",
    ));
    let mut x = good.clone();
    x["proof"]["result_revision"] = x["proof"]["base_revision"].clone();
    cases.push(("result = base with writes", x, "plan_mismatch"));
    let mut x = good.clone();
    x["generated_at"] = json!([{"concept_id": "tables/orders", "at": "2026-05-28T22:43:59Z"}]);
    cases.push(("changed generated_at", x, "plan_mismatch"));
    let mut x = good.clone();
    x["generated_by"] = json!("agent/2.0");
    cases.push(("changed generated_by (MIG-31)", x, "plan_mismatch"));
    let mut x = good.clone();
    x["proof"]["changed_refs"] = json!(["tables/orders", "tables/users#"]);
    cases.push(("unparsable ref", x, "invalid_request"));
    let mut x = good.clone();
    x["proof"]["format_version"] = json!(1);
    cases.push(("format_version 1", x, "schema_validation"));
    let mut x = good.clone();
    x["proof"]
        .as_object_mut()
        .expect("proof")
        .remove("resolution_digest");
    cases.push(("missing resolution_digest", x, "schema_validation"));
    let mut x = good.clone();
    x["expected_source"]["resolution_source"] = json!("declared");
    cases.push(("tampered expected_source", x, "schema_validation"));
    for (what, x, code) in cases {
        let (e, err, ev) = traced("apply_v02_migration", &x);
        assert!(err, "{what}: {e}");
        assert_eq!(e["code"], code, "{what}: {e}");
        assert_eq!(ev, [], "{what}: zero I/O events");
        assert_eq!(snapshot(&root), before, "{what}");
        assert!(!root.join(".okf").exists(), "{what}");
    }
    // The control: the untampered apply does reach the bundle.
    let (r, err, ev) = traced("apply_v02_migration", &good);
    assert!(!err, "{r}");
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(ev.first(), Some(&IoEvent::OpenRoot), "{ev:?}");
    assert_eq!(store_opens(&ev), 1, "{ev:?}");
}

#[test]
fn mig_23_asset_path_mismatches_never_open_the_store() {
    let (_d, root) = bundle(&[
        ("index.md", ROOT_01),
        ("q/a.md", &query("A")),
        ("other/x.md", &query("X")),
    ]);
    let good = args(
        &root,
        json!({"computations": [file_item("q/a", "a.sql", "q/a.sql", "SELECT 1;\n")]}),
    );
    let (gp, _, _) = traced("preview_v02_migration", &good);
    assert_eq!(gp["status"], "applicable", "{gp}");
    let before = snapshot(&root);
    for (what, cp, asset) in [
        ("below another document", "a.sql", "other/a.sql"),
        ("another asset", "b.sql", "q/a.sql"),
        ("an escape", "../../a.sql", "a.sql"),
    ] {
        let a = args(
            &root,
            json!({"computations": [file_item("q/a", cp, asset, "SELECT 1;\n")]}),
        );
        let (p, _, ev) = traced("preview_v02_migration", &a);
        assert_eq!(p["status"], "blocked", "{what}: {p}");
        assert_eq!(store_opens(&ev), 0, "{what}: {ev:?}");
        let mut x = a.clone();
        x["expected_source"] = p["source"].clone();
        x["proof"] = gp["proof"].clone();
        x["expected_plan_digest"] = gp["plan_digest"].clone();
        let (e, err, ev) = traced("apply_v02_migration", &x);
        assert!(err, "{what}: {e}");
        assert_eq!(e["code"], "plan_mismatch", "{what}: {e}");
        assert_eq!(store_opens(&ev), 0, "{what}: zero store opens: {ev:?}");
        assert!(!ev.contains(&IoEvent::ProbePrivateState), "{what}: {ev:?}");
        assert_eq!(snapshot(&root), before, "{what}");
        assert!(!root.join(".okf").exists(), "{what}");
    }
    // Target-noop with a mismatched asset: its own code, and still no store open.
    let migrated = "---\ntype: Attested Computation\ntitle: A\nruntime: bigquery\nparameters:\n  - {name: year, type: integer, required: true}\nexecutor:\n  resource: run.md\n  receipt: [job_id]\nattester:\n  resource: attest.py\ncomputation: a.sql\n---\n\nWhat it computes.\n";
    let (_d2, root2) = bundle(&[("q/a.md", migrated), ("a.sql", "SELECT 1;\n")]);
    let a = args(
        &root2,
        json!({"computations": [file_item("q/a", "a.sql", "a.sql", "SELECT 1;\n")]}),
    );
    let (p, _, _) = traced("preview_v02_migration", &a);
    assert_eq!(p["source"]["transition"], "target-noop", "{p}");
    let (e, err, ev) = traced("apply_v02_migration", &apply_args(&a, &p));
    assert!(err, "{e}");
    assert_eq!(
        e["code"], "migration_computation_asset_path_mismatch",
        "{e}"
    );
    assert_eq!(store_opens(&ev), 0, "{ev:?}");
    assert!(!root2.join(".okf").exists());
}

#[test]
fn mig_24_mode_asset_parity_failures_have_zero_io_events_on_a_real_bundle() {
    let (_d, root) = bundle(&[("index.md", ROOT_01), ("q/a.md", &query("A"))]);
    let before = snapshot(&root);
    let base = file_item("q/a", "a.sql", "q/a.sql", "");
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut x = base.clone();
    x.as_object_mut().expect("object").remove("asset");
    cases.push(("file without asset", x));
    let mut x = inline_item("q/a", "print(1)");
    x["asset"] = json!({"path": "q/a.sql", "content": ""});
    cases.push(("inline with asset", x));
    let mut x = base.clone();
    x["contract"]
        .as_object_mut()
        .expect("object")
        .remove("mode");
    cases.push(("missing mode", x));
    let mut x = base.clone();
    x["contract"]["mode"] = json!("remote");
    cases.push(("unknown mode", x));
    let mut x = base.clone();
    x["contract"]["inline_computation"] = json!("SELECT 1;");
    cases.push(("mixed fields", x));
    for tool in ["preview_v02_migration", "apply_v02_migration"] {
        for (what, item) in &cases {
            let mut a = args(&root, json!({"computations": [item]}));
            if tool == "apply_v02_migration" {
                a["expected_source"] = json!({});
            }
            let (e, err, ev) = traced(tool, &a);
            assert!(err, "{tool} {what}: {e}");
            assert_eq!(e["code"], "schema_validation", "{tool} {what}: {e}");
            assert_eq!(ev, [], "{tool} {what}: the handler never runs");
        }
    }
    // A zero-byte asset is allowed (and this preview does read the bundle).
    let (p, err, ev) = traced(
        "preview_v02_migration",
        &args(&root, json!({"computations": [base]})),
    );
    assert!(!err, "{p}");
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(ev.first(), Some(&IoEvent::OpenRoot));
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_28_the_idempotency_key_is_derived_from_the_plan_digest_never_from_caller_input() {
    let (_d, root) = four_files();
    let a = four_args(&root);
    let (p, _, _) = traced("preview_v02_migration", &a);
    let x = apply_args(&a, &p);
    // A caller-supplied key is not an argument of the tool.
    let mut keyed = x.clone();
    keyed["idempotency_key"] = json!("okf-plan-v1-caller-chosen");
    let (e, err, ev) = traced("apply_v02_migration", &keyed);
    assert!(err, "{e}");
    assert_eq!(e["code"], "schema_validation", "{e}");
    assert_eq!(ev, []);
    let (r, err, _) = traced("apply_v02_migration", &x);
    assert!(!err, "{r}");
    assert_eq!(r["status"], "applied", "{r}");
    // The one receipt is named by the key of (namespace, plan digest) (spec/store.md §6.1).
    let digest = p["plan_digest"].as_str().expect("plan_digest");
    let key =
        okf_mcp::digest::idempotency_key(okf_mcp::plan::migration::identity::NAMESPACE, digest)
            .expect("key");
    let names: Vec<String> = std::fs::read_dir(root.join(".okf/receipts"))
        .expect("receipts")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [format!("{}.json", okf_mcp::digest::receipt_name(&key))],
        "{names:?}"
    );
    let stored: Value = serde_json::from_slice(
        &std::fs::read(root.join(".okf/receipts").join(&names[0])).expect("receipt"),
    )
    .expect("receipt JSON");
    assert_eq!(
        stored["key"], key,
        "the stored key is the derived one: {stored}"
    );
    assert_eq!(stored["receipt"]["idempotency_key"], key, "{stored}");
}
