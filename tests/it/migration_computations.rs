//! `computations` of `preview_v02_migration` / `apply_v02_migration` through the real binary
//! (spec/migration.md §3.4, §6.6, §6.7 rules 5 and 7; scenarios MIG-22, MIG-23, MIG-24,
//! MIG-30).
#![allow(clippy::disallowed_methods)]

use crate::support::migration::{apply, apply_args, apply_err, args, bundle, preview, read, write};
use crate::support::migration::{file_item, inline_item, query, ROOT_01};
use crate::support::patch::receipts;
use crate::support::util::{call, snapshot, visible};
use serde_json::{json, Value};

fn preview_err(a: &Value) -> Value {
    let out = call("preview_v02_migration", a);
    assert!(out.is_error(), "preview should fail: {}", out.stdout);
    out.structured().clone()
}

#[test]
fn mig_22_assets_apply_relative_rooted_normalised_and_zero_byte_then_target_noop_and_replay() {
    let fenced = "---\ntype: Query\ntitle: E\n---\n\nIntro.\n\n# Computation\n\n```sql\nSELECT 5;\n```\n\nMore prose.\n";
    let (_d, root) = bundle(&[
        ("index.md", ROOT_01),
        ("q/a.md", &query("A")),
        ("q/b.md", &query("B")),
        ("q/c.md", &query("C")),
        ("q/d.md", &query("D")),
        ("q/e.md", fenced),
        ("q/i.md", &query("I")),
        // An existing asset with identical bytes is not written (§6.6 rule 4).
        ("q/e.sql", "SELECT 5;\n"),
    ]);
    let a = args(
        &root,
        json!({"computations": [
            // Listed out of order: the canonical input sorts by path (§3.5).
            file_item("q/d", "d.sql", "q/d.sql", ""),
            file_item("q/a", "sql/a.sql", "q/sql/a.sql", "SELECT 1;\n"),
            file_item("q/b", "/assets/b.sql", "assets/b.sql", "SELECT 2;\n"),
            file_item("q/c", "../shared/./c.sql?v=1#top", "shared/c.sql", "SELECT 3;\n"),
            file_item("q/e", "e.sql", "q/e.sql", "SELECT 5;\n"),
            inline_item("q/i", "print(1)"),
        ]}),
    );
    let before = snapshot(&root);
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(
        p["affected_paths"],
        json!([
            "assets/b.sql",
            "index.md",
            "q/a.md",
            "q/b.md",
            "q/c.md",
            "q/d.md",
            "q/d.sql",
            "q/e.md",
            "q/i.md",
            "q/sql/a.sql",
            "shared/c.sql"
        ]),
        "{p}"
    );
    // The proof binds the zero-byte asset by the digest of empty content.
    let writes = p["proof"]["writes"].as_array().expect("writes");
    let empty = writes
        .iter()
        .find(|w| w["path"] == "q/d.sql")
        .expect("q/d.sql write");
    assert_eq!(
        empty["digest"],
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    // Item order never changes a digest.
    let mut reordered = a.clone();
    reordered["computations"]
        .as_array_mut()
        .expect("array")
        .reverse();
    assert_eq!(preview(&reordered)["plan_digest"], p["plan_digest"]);
    assert_eq!(snapshot(&root), before, "a preview writes nothing");
    assert!(!root.join(".okf").exists());

    let x = apply_args(&a, &p);
    let r = apply(&x);
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(r["result_revision"], p["result_revision"]);
    assert_eq!(r["changed_paths"], p["affected_paths"]);
    assert_eq!(read(&root, "q/sql/a.sql"), "SELECT 1;\n");
    assert_eq!(read(&root, "assets/b.sql"), "SELECT 2;\n");
    assert_eq!(read(&root, "shared/c.sql"), "SELECT 3;\n");
    assert_eq!(std::fs::read(root.join("q/d.sql")).expect("zero-byte"), b"");
    assert_eq!(read(&root, "q/e.sql"), "SELECT 5;\n");
    assert_eq!(
        read(&root, "q/a.md"),
        "---\ntype: Attested Computation\ntitle: A\nruntime: bigquery\nparameters:\n  - { name: year, type: integer, required: true }\nexecutor:\n  resource: run.md\n  receipt: [job_id]\nattester:\n  resource: attest.py\ncomputation: sql/a.sql\n---\n\nWhat it computes.\n"
    );
    // `computation` is kept verbatim, query and fragment included.
    let c = read(&root, "q/c.md");
    assert!(c.contains("../shared/./c.sql?v=1#top"), "{c}");
    // File mode with a fence equal to the asset: heading and fence go, prose stays.
    let e = read(&root, "q/e.md");
    assert!(e.ends_with("---\n\nIntro.\n\nMore prose.\n"), "{e}");
    assert!(e.contains("computation: e.sql\n"), "{e}");
    // Inline mode: the section is appended.
    assert!(
        read(&root, "q/i.md")
            .ends_with("\n\nWhat it computes.\n\n# Computation\n\n```python\nprint(1)\n```\n"),
        "{}",
        read(&root, "q/i.md")
    );
    let v = call(
        "validate_bundle",
        &json!({"bundle_path": root.to_str(), "strict": true, "target_version": "0.2"}),
    );
    assert_eq!(
        v.structured()["conformance"]["conformant"],
        true,
        "{}",
        v.stdout
    );

    // Re-preview → target-noop; its apply → noop, nothing written, no new receipt.
    let n = preview(&a);
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(n["source"]["transition"], "target-noop");
    assert_eq!(n["blockers"], json!([]));
    let store_before = snapshot(&root);
    let receipts_before = receipts(&root);
    let na = apply(&apply_args(&a, &n));
    assert_eq!(na["status"], "noop", "{na}");
    assert_eq!(na["plan_digest"], "");
    assert_eq!(snapshot(&root), store_before);
    assert_eq!(receipts(&root), receipts_before);

    // The exact replay of the first apply → applied plus receipt_replayed.
    let after = visible(&root);
    let again = apply(&x);
    assert_eq!(again["status"], "applied", "{again}");
    assert_eq!(again["result_revision"], r["result_revision"]);
    assert_eq!(again["changed_paths"], r["changed_paths"]);
    let d = again["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(d.len(), 1, "{again}");
    assert_eq!(d[0]["code"], "receipt_replayed");
    assert_eq!(visible(&root), after);

    // A changed asset breaks the target replay (§6.7 rule 7).
    write(&root, "q/d.sql", "changed");
    let m = preview(&a);
    assert_eq!(m["status"], "blocked", "{m}");
    assert_eq!(m["blockers"][0]["code"], "migration_replay_mismatch");
    assert_eq!(m["blockers"][0]["path"], "q/d.sql");
}

#[test]
fn mig_22_existing_asset_with_other_bytes_is_an_asset_conflict() {
    let (_d, root) = bundle(&[
        ("index.md", ROOT_01),
        ("q/a.md", &query("A")),
        ("q/a.sql", "SELECT 0;\n"),
    ]);
    let a = args(
        &root,
        json!({"computations": [file_item("q/a", "a.sql", "q/a.sql", "SELECT 1;\n")]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "blocked", "{p}");
    assert_eq!(p["blockers"][0]["code"], "migration_asset_conflict");
    assert_eq!(p["blockers"][0]["path"], "q/a.sql");
    assert!(p.get("proof").is_none());
    // An asset path that is a directory of the bundle, or below a file, also conflicts.
    for (cp, asset) in [("/q", "q"), ("/q/a.sql/x", "q/a.sql/x")] {
        let a = args(
            &root,
            json!({"computations": [file_item("q/a", cp, asset, "x")]}),
        );
        let p = preview(&a);
        assert_eq!(p["status"], "blocked", "{asset}: {p}");
        assert_eq!(
            p["blockers"][0]["code"], "migration_asset_conflict",
            "{asset}: {p}"
        );
    }
}

#[test]
fn mig_23_asset_path_mismatches_block_the_preview_and_fail_the_apply() {
    let (_d, root) = bundle(&[
        ("index.md", ROOT_01),
        ("q/a.md", &query("A")),
        ("other/x.md", &query("X")),
    ]);
    let good = args(
        &root,
        json!({"computations": [file_item("q/a", "a.sql", "q/a.sql", "SELECT 1;\n")]}),
    );
    let gp = preview(&good);
    assert_eq!(gp["status"], "applicable", "{gp}");
    let before = snapshot(&root);
    for (what, cp, asset) in [
        ("below another document", "a.sql", "other/a.sql"),
        ("another asset", "b.sql", "q/a.sql"),
        ("a URL", "https://example.test/a.sql", "q/a.sql"),
        ("a Windows path", "C:\\q\\a.sql", "q/a.sql"),
        ("a Windows drive path", "C:/q/a.sql", "q/a.sql"),
        ("an escape", "../../a.sql", "a.sql"),
        ("fragment-only", "#a", "q/a.sql"),
        ("query-only", "?a", "q/a.sql"),
    ] {
        let a = args(
            &root,
            json!({"computations": [file_item("q/a", cp, asset, "SELECT 1;\n")]}),
        );
        let p = preview(&a);
        assert_eq!(p["status"], "blocked", "{what}: {p}");
        assert!(
            p["blockers"]
                .as_array()
                .expect("blockers")
                .iter()
                .any(|b| b["code"] == "migration_computation_asset_path_mismatch"
                    && b["path"] == "q/a.md"),
            "{what}: {p}"
        );
        assert!(p.get("proof").is_none(), "{what}");
        // The transition apply (any proof: the preview gave none) → plan_mismatch.
        let mut x = a.clone();
        x["expected_source"] = p["source"].clone();
        x["proof"] = gp["proof"].clone();
        x["expected_plan_digest"] = gp["plan_digest"].clone();
        let e = apply_err(&x);
        assert_eq!(e["code"], "plan_mismatch", "{what}: {e}");
        assert_eq!(snapshot(&root), before, "{what}");
        assert!(!root.join(".okf").exists(), "{what}");
    }
    // Target-noop: a rootless v0.2 bundle whose concept already is the computation.
    let migrated = "---\ntype: Attested Computation\ntitle: A\nruntime: bigquery\nparameters:\n  - {name: year, type: integer, required: true}\nexecutor:\n  resource: run.md\n  receipt: [job_id]\nattester:\n  resource: attest.py\ncomputation: a.sql\n---\n\nWhat it computes.\n";
    let (_d2, root2) = bundle(&[("q/a.md", migrated), ("a.sql", "SELECT 1;\n")]);
    let a = args(
        &root2,
        json!({"computations": [file_item("q/a", "a.sql", "a.sql", "SELECT 1;\n")]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "blocked", "{p}");
    assert_eq!(p["source"]["transition"], "target-noop");
    assert_eq!(
        p["blockers"][0]["code"],
        "migration_computation_asset_path_mismatch"
    );
    let before2 = snapshot(&root2);
    let e = apply_err(&apply_args(&a, &p));
    assert_eq!(
        e["code"], "migration_computation_asset_path_mismatch",
        "{e}"
    );
    assert_eq!(snapshot(&root2), before2);
    assert!(!root2.join(".okf").exists());
    // The same bundle with a matching contract is a target-noop (§6.7 rules 5 and 7).
    let ok = args(
        &root2,
        json!({"computations": [file_item("q/a", "../a.sql", "a.sql", "SELECT 1;\n")]}),
    );
    // `computation: a.sql` in the document differs from `../a.sql`: a replay mismatch.
    let m = preview(&ok);
    assert_eq!(m["status"], "blocked", "{m}");
    assert_eq!(m["blockers"][0]["code"], "migration_replay_mismatch", "{m}");
    let ok = args(
        &root2,
        json!({"computations": [file_item("q/a", "/a.sql", "a.sql", "SELECT 1;\n")]}),
    );
    write(
        &root2,
        "q/a.md",
        &migrated.replace("computation: a.sql", "computation: /a.sql"),
    );
    let n = preview(&ok);
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(apply(&apply_args(&ok, &n))["status"], "noop");
    assert!(!root2.join(".okf").exists());
}

#[test]
fn mig_24_mode_asset_parity_is_schema_validation_before_any_io() {
    let missing = "/nonexistent/okf-mcp-mig-24";
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
    cases.push(("file with inline_computation", x));
    let mut x = base.clone();
    x["contract"]["inline_language"] = json!("sql");
    cases.push(("file with inline_language", x));
    let mut x = inline_item("q/a", "print(1)");
    x["contract"]["computation_path"] = json!("a.py");
    cases.push(("inline with computation_path", x));
    let mut x = inline_item("q/a", "print(1)");
    x["contract"]
        .as_object_mut()
        .expect("object")
        .remove("inline_computation");
    cases.push(("inline without inline_computation", x));
    let mut x = base.clone();
    x["contract"]
        .as_object_mut()
        .expect("object")
        .remove("computation_path");
    cases.push(("file without computation_path", x));
    let mut x = base.clone();
    x["contract"]["extra"] = json!(1);
    cases.push(("unknown contract member", x));
    for (what, item) in cases {
        let a = json!({"bundle_path": missing, "timestamp_policy": "preserve", "citation_mappings": [], "computations": [item]});
        let e = preview_err(&a);
        assert_eq!(e["code"], "schema_validation", "{what}: {e}");
    }
    // A zero-byte asset is schema-valid: the preview gets to the bundle path.
    let a = json!({"bundle_path": missing, "timestamp_policy": "preserve", "citation_mappings": [], "computations": [base]});
    let e = preview_err(&a);
    assert_eq!(e["message"], "bundle_path is not accessible", "{e}");
}

#[test]
fn mig_30_asset_paths_outside_the_writable_tree_are_invalid_requests_before_io() {
    let (_d, root) = bundle(&[("index.md", ROOT_01), ("q/a.md", &query("A"))]);
    let before = snapshot(&root);
    for bad in [
        ".git/hooks/pre-commit",
        ".OKF/x",
        ".okf/receipts/x",
        "a/../b.sql",
        "./a.sql",
        "x.md",
        "q/X.MD",
        "a?b",
        "a#b",
        "/abs.sql",
        "a//b.sql",
    ] {
        // The computation_path resolves to the bad path where it can: only asset.path fails.
        let cp = format!("/{}", bad.trim_start_matches('/'));
        for bundle_path in [root.to_str().expect("utf8"), "/nonexistent/okf-mcp-mig-30"] {
            let a = json!({
                "bundle_path": bundle_path,
                "timestamp_policy": "preserve",
                "citation_mappings": [],
                "computations": [file_item("q/a", &cp, bad, "x")],
            });
            let e = preview_err(&a);
            assert_eq!(e["code"], "invalid_request", "{bad}: {e}");
            // Refused on asset.path, before the bundle path is looked at.
            assert!(
                e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("asset.path")),
                "{bad}: {e}"
            );
            let mut x = a.clone();
            x["expected_source"] = json!({
                "requested_selector": "auto", "declaration_present": true,
                "declaration_valid": true, "declaration_raw": "0.1", "declared_version": "0.1",
                "resolved_source": "0.1", "resolution_source": "declared",
                "from_version": "0.1", "to_version": "0.2", "transition": "v0.1-to-v0.2",
                "candidates": [], "blockers": []
            });
            x["proof"] = json!({
                "format_version": 2,
                "request_digest": format!("sha256:{}", "0".repeat(64)),
                "resolution_digest": format!("sha256:{}", "0".repeat(64)),
                "base_revision": format!("sha256:{}", "0".repeat(64)),
                "result_revision": format!("sha256:{}", "1".repeat(64)),
                "reads": [], "writes": [], "deletes": [], "renames": [],
                "affected_refs": [], "reverse_impact": [], "changed_files": [], "changed_refs": []
            });
            x["expected_plan_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
            let e = apply_err(&x);
            assert_eq!(e["code"], "invalid_request", "{bad}: {e}");
            assert!(
                e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("asset.path")),
                "{bad}: {e}"
            );
        }
    }
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
    assert!(!root.join(".git").exists());
    assert!(!root.join(".OKF").exists());
}

#[test]
fn dif_01_a_created_asset_diffs_from_dev_null_end_to_end() {
    let concept =
        "---\ntype: Metric\ntitle: Revenue\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nRevenue.\n";
    let (_d, root) = bundle(&[("index.md", "# B\n"), ("metrics/revenue.md", concept)]);
    let a = args(
        &root,
        json!({"generated_by": "agent/1.0", "computations": [
            file_item("metrics/revenue", "revenue.sql", "metrics/revenue.sql", "SELECT 1;\n")
        ]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    let diff = p["diff"].as_str().expect("diff");
    assert!(
        diff.contains("--- /dev/null\n+++ b/metrics/revenue.sql\n@@ -0,0 +1 @@\n+SELECT 1;\n"),
        "{diff}"
    );
    assert_eq!(apply(&apply_args(&a, &p))["status"], "applied");
    assert_eq!(read(&root, "metrics/revenue.sql"), "SELECT 1;\n");
}
