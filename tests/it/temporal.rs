//! `preview_temporal_upgrade` / `apply_temporal_upgrade` through the real binary
//! (`okf-mcp call`), on the realistic date-profile fixture `fixtures/bundles/temporal-date`
//! (copied to a temp dir) and on small bundles written here (spec/temporal.md; scenarios
//! TMP-01…TMP-15, CAN-06, ALI-02/ALI-04 and CID-02 temporal parts).
#![allow(clippy::disallowed_methods)]

use crate::support::migration::{bundle, read, write};
use crate::support::patch::receipts;
use crate::support::temporal::{
    apply, apply_args, apply_err, map_all, preview, preview_err, targs,
};
use crate::support::util::{call, call_env_exit, copy_bundle, fixture, snapshot, visible};
use serde_json::{json, Value};
use std::path::Path;

pub(crate) const INSTANT: &str = "instant-0b87c52";

/// The `temporal_profile_mismatch` warnings of `validate_bundle` under `profile`.
pub(crate) fn mismatches(root: &Path, profile: &str) -> Vec<Value> {
    let v = call(
        "validate_bundle",
        &json!({"bundle_path": root.to_str(), "strict": true, "temporal_profile": profile}),
    );
    assert!(!v.is_error(), "{}", v.stdout);
    v.structured()["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "temporal_profile_mismatch")
        .cloned()
        .collect()
}

fn code_of(e: &Value) -> (String, String) {
    (
        e["code"].as_str().unwrap_or_default().to_owned(),
        e["message"].as_str().unwrap_or_default().to_owned(),
    )
}

fn diag_codes(e: &Value) -> Vec<String> {
    e["diagnostics"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|x| x["code"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The frontmatter and body of a document text.
fn halves(text: &str) -> (&str, &str) {
    let rest = text.strip_prefix("---").expect("frontmatter");
    let end = rest.find("\n---").expect("closing fence");
    (&rest[..end], &rest[end..])
}

#[test]
fn realistic_date_bundle_upgrades_to_instants_end_to_end() {
    let (_t, root) = copy_bundle(&fixture("temporal-date"));
    let pre = snapshot(&root);
    let a = targs(&root, None);
    // (1) Without mappings: incomplete, every legacy date listed in observation order
    // (concepts by id, fields in §3 order), no digest, nothing written.
    let p0 = preview(&a);
    assert_eq!(p0["status"], "incomplete", "{p0}");
    assert!(p0.get("plan_digest").is_none());
    assert_eq!(p0["result_revision"], p0["base_revision"]);
    let unresolved = p0["unresolved"].as_array().expect("list");
    assert_eq!(unresolved.len(), 29, "{p0}");
    let order: Vec<String> = unresolved
        .iter()
        .map(|u| {
            format!(
                "{}#{}",
                u["concept"].as_str().unwrap_or(""),
                u["path"].as_str().unwrap_or("")
            )
        })
        .collect();
    let first_orders = order
        .iter()
        .position(|k| k.starts_with("tables/orders#"))
        .expect("orders");
    assert_eq!(
        order[first_orders..first_orders + 6],
        [
            "tables/orders#stale_after",
            "tables/orders#usage_window.from",
            "tables/orders#usage_window.to",
            "tables/orders#sources[0].last_modified",
            "tables/orders#sources[0].usage_window.from",
            "tables/orders#sources[0].usage_window.to",
        ]
    );
    let concepts: Vec<&str> = unresolved
        .iter()
        .map(|u| u["concept"].as_str().unwrap_or(""))
        .collect();
    let mut sorted = concepts.clone();
    sorted.sort_unstable();
    assert_eq!(concepts, sorted, "concepts in ascending id order");
    // Already-instant values, generated.at and verified[].at are not listed.
    assert!(!order.iter().any(|k| k == "metrics/arpu#stale_after"));
    assert!(!order
        .iter()
        .any(|k| k == "glossary/terms/customer#sources[2].last_modified"));
    assert!(!order
        .iter()
        .any(|k| k.contains("generated") || k.contains("verified")));
    assert_eq!(snapshot(&root), pre);
    assert!(!root.join(".okf").exists());

    // (2) One mapping per listed occurrence → ready with a digest.
    let a = targs(&root, Some(map_all(&p0["unresolved"], "T00:00:00Z")));
    let p = preview(&a);
    assert_eq!(p["status"], "ready", "{p}");
    assert_eq!(p["unresolved"], json!([]));
    assert_eq!(p["base_revision"], p0["base_revision"]);
    assert_ne!(p["result_revision"], p["base_revision"]);
    assert!(p["plan_digest"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    assert_eq!(preview(&a), p, "previews are deterministic");
    assert_eq!(snapshot(&root), pre);
    assert!(!root.join(".okf").exists());

    // (3) Apply → applied.
    let x = apply_args(&a, &p);
    let r = apply(&x);
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(r["result_revision"], p["result_revision"]);
    assert_eq!(r["diagnostics"], json!([]));
    assert!(r["request_digest"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    let post = visible(&root);

    // (4) validate_bundle under the instant profile: no temporal_profile_mismatch left.
    assert_eq!(mismatches(&root, INSTANT), Vec::<Value>::new());
    assert!(!mismatches(&copy_bundle(&fixture("temporal-date")).1, INSTANT).is_empty());

    // (5) Re-preview → noop, no digest.
    let n = preview(&targs(&root, None));
    assert_eq!(n["status"], "noop", "{n}");
    assert!(n.get("plan_digest").is_none());
    assert_eq!(n["result_revision"], n["base_revision"]);

    // (6) Outside the rewritten scalars every byte is unchanged.
    let per_concept = |c: &str| {
        unresolved
            .iter()
            .filter(|u| format!("{}.md", u["concept"].as_str().unwrap_or("")) == c)
            .count()
    };
    let pre_visible: std::collections::BTreeMap<String, Vec<u8>> = pre
        .iter()
        .filter(|(k, _)| !k.starts_with(".okf"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(
        pre_visible.keys().collect::<Vec<_>>(),
        post.keys().collect::<Vec<_>>()
    );
    for (path, before) in &pre_visible {
        let after = &post[path.as_str()];
        let n = per_concept(path);
        if n == 0 {
            assert_eq!(after, before, "{path}: untouched");
            continue;
        }
        let (b, a) = (
            std::str::from_utf8(before).expect("utf8"),
            std::str::from_utf8(after).expect("utf8"),
        );
        let ((bf, bb), (af, ab)) = (halves(b), halves(a));
        assert_eq!(ab, bb, "{path}: body unchanged");
        assert_eq!(
            af.matches("T00:00:00Z").count() - bf.matches("T00:00:00Z").count(),
            n,
            "{path}: one instant per mapping"
        );
        assert_eq!(
            af.replace("T00:00:00Z", ""),
            bf.replace("T00:00:00Z", ""),
            "{path}"
        );
    }
    for untouched in [
        "index.md",
        "log.md",
        "dashboards/sales.sql",
        "dashboards/ops.md",
    ] {
        assert_eq!(post[untouched], pre[untouched], "{untouched}");
    }
    let customers = read(&root, "tables/customers.md");
    assert!(
        customers.contains("stale_after: 2026-09-30T00:00:00Z\r\n"),
        "CRLF kept"
    );
    assert_eq!(
        customers.matches('\n').count(),
        customers.matches("\r\n").count()
    );
    let orders = read(&root, "tables/orders.md");
    assert!(
        orders.contains("stale_after: 2026-06-30T00:00:00Z # keep\n"),
        "{orders}"
    );
    assert!(orders.contains("  to: 2026-12-31T00:00:00Z   # calendar year\n"));
    let payments = read(&root, "tables/payments.md");
    assert!(payments
        .contains("usage_window: {from: \"2026-01-01T00:00:00Z\", to: '2026-12-31T00:00:00Z'}\n"));

    // (7) The exact replay: the identical answer plus receipt_replayed; nothing written.
    let again = apply(&x);
    assert_eq!(again["status"], "applied");
    assert_eq!(again["request_digest"], r["request_digest"]);
    assert_eq!(again["result_revision"], r["result_revision"]);
    let d = again["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(d.len(), 1, "{again}");
    assert_eq!(
        (d[0]["code"].as_str(), d[0]["severity"].as_str()),
        (Some("receipt_replayed"), Some("INFO"))
    );
    assert_eq!(visible(&root), post);
    assert_eq!(receipts(&root), 1);
}

const FOUR: &str = "---\ntype: Table\nx-root: keep\nstale_after: 2026-01-02 # keep\nusage_window:\n  from: 2026-01-01\n  to: 2026-01-31\nsources:\n  - id: s\n    resource: https://example.test/s\n    last_modified: 2026-01-05\n---\n\nBody 2026-01-02.\n";

fn four_mappings() -> Value {
    json!([
        {"concept": "t/a", "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T12:00:00+07:00"},
        {"concept": "t/a", "path": "usage_window.from", "from": "2026-01-01", "to": "2026-01-01T00:00:00Z"},
        {"concept": "t/a", "path": "usage_window.to", "from": "2026-01-31", "to": "2026-01-31T23:59:59.5-03:00"},
        {"concept": "t/a", "path": "sources[0].last_modified", "from": "2026-01-05", "to": "2026-01-05T08:00:00+00:00"},
    ])
}

#[test]
fn tmp_01_one_mapping_of_four_is_incomplete_with_the_rest_in_observation_order() {
    let (_d, root) = bundle(&[("t/a.md", FOUR), ("t/b.md", "---\ntype: T\n---\n")]);
    let before = snapshot(&root);
    let m = json!([four_mappings()[2].clone()]);
    let p = preview(&targs(&root, Some(m)));
    assert_eq!(p["status"], "incomplete");
    assert_eq!(
        p["unresolved"],
        json!([
            {"concept": "t/a", "path": "stale_after", "from": "2026-01-02"},
            {"concept": "t/a", "path": "usage_window.from", "from": "2026-01-01"},
            {"concept": "t/a", "path": "sources[0].last_modified", "from": "2026-01-05"},
        ])
    );
    assert!(p.get("plan_digest").is_none());
    assert_eq!(p["result_revision"], p["base_revision"]);
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn tmp_02_03_04_full_mappings_ready_applied_replayed() {
    let crlf = FOUR.replace('\n', "\r\n");
    let (_d, root) = bundle(&[("t/a.md", &crlf), ("t/b.md", "---\ntype: T\n---\n")]);
    let before = visible(&root);
    let a = targs(&root, Some(four_mappings()));
    // TMP-02: ready; nothing written yet.
    let p = preview(&a);
    assert_eq!(p["status"], "ready", "{p}");
    assert!(p["plan_digest"].is_string());
    assert_eq!(visible(&root), before);
    assert!(!root.join(".okf").exists());
    // TMP-03: applied; the one file holds the instants, everything else as it was.
    let x = apply_args(&a, &p);
    let r = apply(&x);
    assert_eq!(
        r.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec![
            "status".to_owned(),
            "request_digest".to_owned(),
            "result_revision".to_owned(),
            "diagnostics".to_owned(),
            "notices".to_owned()
        ])
    );
    assert_eq!(r["status"], "applied");
    assert_eq!(r["diagnostics"], json!([]));
    assert_eq!(r["result_revision"], p["result_revision"]);
    let after = visible(&root);
    assert_eq!(
        after["t/b.md"], before["t/b.md"],
        "the plan writes one file"
    );
    let expected = "---\ntype: Table\nx-root: keep\nstale_after: 2026-01-02T12:00:00+07:00 # keep\nusage_window:\n  from: 2026-01-01T00:00:00Z\n  to: 2026-01-31T23:59:59.5-03:00\nsources:\n  - id: s\n    resource: https://example.test/s\n    last_modified: 2026-01-05T08:00:00+00:00\n---\n\nBody 2026-01-02.\n"
        .replace('\n', "\r\n");
    assert_eq!(read(&root, "t/a.md"), expected);
    assert_eq!(mismatches(&root, INSTANT), Vec::<Value>::new());
    // TMP-04: the exact replay.
    let again = apply(&x);
    assert_eq!(again["request_digest"], r["request_digest"]);
    assert_eq!(again["result_revision"], r["result_revision"]);
    assert_eq!(diag_codes(&again), ["receipt_replayed"]);
    assert_eq!(again["diagnostics"][0]["severity"], "INFO");
    assert_eq!(visible(&root), after);
}

#[test]
fn tmp_05_tampered_plan_digest_is_refused_without_io() {
    let (_d, root) = bundle(&[("t/a.md", FOUR)]);
    let a = targs(&root, Some(four_mappings()));
    let p = preview(&a);
    let mut x = apply_args(&a, &p);
    let d = p["plan_digest"].as_str().expect("digest");
    let flipped = if d.ends_with('0') { "1" } else { "0" };
    x["plan_digest"] = json!(format!("{}{flipped}", &d[..d.len() - 1]));
    let before = snapshot(&root);
    let e = apply_err(&x);
    assert_eq!(
        code_of(&e),
        (
            "operation_rejected".to_owned(),
            "temporal upgrade plan or receipt did not match".to_owned()
        )
    );
    assert_eq!(e["retryable"], false);
    assert_eq!(e["diagnostics"][0]["code"], "recovery_step");
    assert_eq!(e["diagnostics"][0]["field"], "plan_digest");
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn tmp_06_concurrent_edit_after_preview_is_a_conflict_on_base_revision() {
    let (_d, root) = bundle(&[("t/a.md", FOUR)]);
    let a = targs(&root, Some(four_mappings()));
    let p = preview(&a);
    let edited = FOUR.replace("Body", "Edited body");
    write(&root, "t/a.md", &edited);
    let e = apply_err(&apply_args(&a, &p));
    assert_eq!(
        code_of(&e),
        (
            "operation_rejected".to_owned(),
            "temporal upgrade apply failed".to_owned()
        )
    );
    assert_eq!(e["diagnostics"][0]["code"], "recovery_step");
    assert_eq!(e["diagnostics"][0]["field"], "base_revision");
    assert_eq!(read(&root, "t/a.md"), edited, "the concurrent edit is kept");
    assert!(!root.join(".okf").exists());
}

#[test]
fn tmp_07_declared_01_and_future_bundles_are_refused() {
    for decl in ["0.1", "0.3"] {
        let root_doc = format!("---\nokf_version: \"{decl}\"\n---\n# B\n");
        let (_d, root) = bundle(&[("index.md", &root_doc), ("t/a.md", FOUR)]);
        let e = preview_err(&targs(&root, None));
        assert_eq!(
            code_of(&e),
            (
                "operation_rejected".to_owned(),
                "temporal upgrade preview failed".to_owned()
            ),
            "{decl}"
        );
        assert_eq!(diag_codes(&e), ["temporal_version_unsupported"]);
        assert!(!root.join(".okf").exists());
    }
    // Declared 0.2 and rootless bundles are upgradable.
    let (_d, root) = bundle(&[
        ("index.md", "---\nokf_version: \"0.2\"\n---\n# B\n"),
        ("t/a.md", FOUR),
    ]);
    assert_eq!(preview(&targs(&root, None))["status"], "incomplete");
}

#[test]
fn tmp_08_upgrade_targets_outside_plus_minus_14_are_schema_errors() {
    let (_d, root) = bundle(&[("t/a.md", "---\ntype: T\nstale_after: 2026-01-02\n---\n")]);
    let m = |to: &str| json!([{"concept": "t/a", "path": "stale_after", "from": "2026-01-02", "to": to}]);
    for to in [
        "2026-01-02T00:00:00-00:00",
        "2026-01-02T00:00:00+24:00",
        "2026-01-02T00:00:00+14:30",
        "2026-01-02T00:00:00+14:01",
        "2026-01-02T00:00:00",
        "2026-01-02",
    ] {
        let e = preview_err(&targs(&root, Some(m(to))));
        assert_eq!(e["code"], "schema_validation", "{to}");
    }
    for to in ["2026-01-02T00:00:00+14:00", "2026-01-02T00:00:00-14:00"] {
        let p = preview(&targs(&root, Some(m(to))));
        assert_eq!(p["status"], "ready", "{to}");
    }
    assert!(!root.join(".okf").exists());
}

#[test]
fn tmp_09_tags_and_comments_are_kept_and_tagged_quoted_values_fail_closed() {
    let doc = "---\ntype: T\nstale_after: !!timestamp 2026-01-02 # t\nsources:\n  - id: s\n    resource: r\n    last_modified: !!str 2026-01-03 # s\n---\n";
    let (_d, root) = bundle(&[("t/a.md", doc)]);
    let a = targs(
        &root,
        Some(json!([
            {"concept": "t/a", "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"},
            {"concept": "t/a", "path": "sources[0].last_modified", "from": "2026-01-03", "to": "2026-01-03T00:00:00Z"},
        ])),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "ready", "{p}");
    apply(&apply_args(&a, &p));
    assert_eq!(
        read(&root, "t/a.md"),
        "---\ntype: T\nstale_after: !!timestamp 2026-01-02T00:00:00Z # t\nsources:\n  - id: s\n    resource: r\n    last_modified: !!str 2026-01-03T00:00:00Z # s\n---\n"
    );
    for bad in [
        "---\ntype: T\nstale_after: !!str '2026-01-02' # q\n---\n",
        "---\ntype: T\nstale_after: &d 2026-01-02\n---\n",
        "---\ntype: T\nstale_after: |-\n  2026-01-02\n---\n",
    ] {
        let (_d, root) = bundle(&[("t/a.md", bad)]);
        let before = snapshot(&root);
        let e = preview_err(&targs(
            &root,
            Some(
                json!([{"concept": "t/a", "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"}]),
            ),
        ));
        assert_eq!(e["code"], "operation_rejected", "{bad}");
        assert_eq!(
            diag_codes(&e),
            ["temporal_presentation_unsupported"],
            "{bad}"
        );
        assert_eq!(e["diagnostics"][0]["file"], "t/a.md");
        assert!(e.get("plan_digest").is_none());
        assert_eq!(snapshot(&root), before, "file untouched");
        assert!(!root.join(".okf").exists());
    }
}

#[test]
fn tmp_10_quoted_dates_keep_their_quoting_style() {
    let doc = "---\ntype: T\nstale_after: '2026-01-02'\nusage_window: {from: \"2026-01-01\", to: '2026-01-31'}\n---\n";
    let (_d, root) = bundle(&[("t/a.md", doc)]);
    let p0 = preview(&targs(&root, None));
    let a = targs(&root, Some(map_all(&p0["unresolved"], "T08:00:00+07:00")));
    let p = preview(&a);
    assert_eq!(p["status"], "ready");
    apply(&apply_args(&a, &p));
    assert_eq!(
        read(&root, "t/a.md"),
        "---\ntype: T\nstale_after: '2026-01-02T08:00:00+07:00'\nusage_window: {from: \"2026-01-01T08:00:00+07:00\", to: '2026-01-31T08:00:00+07:00'}\n---\n"
    );
}

#[test]
fn tmp_11_source_changed_stray_and_duplicate_mappings_fail() {
    let doc = "---\ntype: T\nstale_after: 2026-01-02\nusage_window: {from: 2026-01-01T00:00:00Z, to: 2026-01-31}\n---\n";
    let (_d, root) = bundle(&[("t/a.md", doc)]);
    let before = snapshot(&root);
    let one = |concept: &str, path: &str, from: &str| json!({"concept": concept, "path": path, "from": from, "to": "2026-01-02T00:00:00Z"});
    for (m, code) in [
        (
            json!([one("t/a", "stale_after", "2026-01-03")]),
            "temporal_source_changed",
        ),
        (
            json!([one("t/a", "usage_window.from", "2026-01-01")]),
            "temporal_mapping_stray",
        ),
        (
            json!([one("t/a", "sources[0].last_modified", "2026-01-01")]),
            "temporal_mapping_stray",
        ),
        (
            json!([one("t/missing", "stale_after", "2026-01-02")]),
            "temporal_mapping_stray",
        ),
    ] {
        let e = preview_err(&targs(&root, Some(m)));
        assert_eq!(
            code_of(&e),
            (
                "operation_rejected".to_owned(),
                "temporal upgrade preview failed".to_owned()
            ),
            "{code}"
        );
        assert_eq!(e["retryable"], false);
        assert_eq!(diag_codes(&e), [code]);
        assert_eq!(e["diagnostics"][0]["severity"], "ERROR");
    }
    // A duplicate key fails before any I/O: even on a bundle path that does not exist.
    let dup = json!([
        one("t/a", "stale_after", "2026-01-02"),
        one("t/a", "stale_after", "2026-01-02")
    ]);
    let missing = root.join("does-not-exist");
    for tool in ["preview_temporal_upgrade", "apply_temporal_upgrade"] {
        let mut x = targs(&missing, Some(dup.clone()));
        if tool.starts_with("apply") {
            x["base_revision"] = json!(format!("sha256:{}", "1".repeat(64)));
            x["plan_digest"] = json!(format!("sha256:{}", "2".repeat(64)));
        }
        let out = call(tool, &x);
        let e = out.structured();
        assert_eq!(e["code"], "operation_rejected", "{tool}: {e}");
        assert_eq!(diag_codes(e), ["temporal_mapping_duplicate"], "{tool}");
    }
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn tmp_12_no_legacy_dates_is_a_noop_without_digest() {
    let doc = "---\ntype: T\nstale_after: 2026-01-02T00:00:00Z\ngenerated: {by: a/b, at: 2026-01-01T00:00:00Z}\n---\n";
    let (_d, root) = bundle(&[("t/a.md", doc), ("log.md", "# Log\n\n## 2026-01-02\n")]);
    let p = preview(&targs(&root, None));
    assert_eq!(p["status"], "noop");
    assert_eq!(p["unresolved"], json!([]));
    assert!(p.get("plan_digest").is_none());
    assert_eq!(p["result_revision"], p["base_revision"]);
    assert!(!root.join(".okf").exists());
}

#[test]
fn tmp_13_non_canonical_base_revision_and_digest_shapes() {
    let (_d, root) = bundle(&[("t/a.md", FOUR)]);
    let mut x = targs(&root, Some(json!([])));
    x["base_revision"] = json!("abc");
    x["plan_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    let e = apply_err(&x);
    assert_eq!(
        code_of(&e),
        (
            "invalid_request".to_owned(),
            "invalid base revision".to_owned()
        )
    );
    assert_eq!(e["diagnostics"], json!([]));
    x["base_revision"] = json!(format!("sha256:{}", "0".repeat(64)));
    x["plan_digest"] = json!("sha256:XYZ");
    assert_eq!(apply_err(&x)["code"], "schema_validation");
    assert!(!root.join(".okf").exists());
}

#[cfg(feature = "fault-injection")]
#[test]
fn tmp_14_a_committed_receipt_after_a_deadline_is_success_and_a_cancel_before_is_not() {
    let (_d, root) = bundle(&[("t/a.md", FOUR)]);
    let a = targs(&root, Some(four_mappings()));
    let p = preview(&a);
    let x = apply_args(&a, &p);
    let before = visible(&root);
    // Cancelled before the boundary: not confirmed, retryable, recovery on base_revision.
    let (e, _) = call_env_exit(
        "apply_temporal_upgrade",
        &x,
        &[("OKF_MCP_FAULT", "after_stage_fsync:cancel")],
        1,
    );
    let e = &e["structuredContent"];
    assert_eq!(
        code_of(e),
        (
            "operation_cancelled".to_owned(),
            "temporal upgrade outcome is not confirmed".to_owned()
        )
    );
    assert_eq!(e["retryable"], true);
    assert_eq!(e["diagnostics"][0]["code"], "recovery_step");
    assert_eq!(e["diagnostics"][0]["field"], "base_revision");
    assert_eq!(visible(&root), before);
    // A deadline after the receipt was written: the committed receipt is success.
    let (ok, _) = call_env_exit(
        "apply_temporal_upgrade",
        &x,
        &[("OKF_MCP_FAULT", "after_receipt:cancel")],
        0,
    );
    let ok = &ok["structuredContent"];
    assert_eq!(ok["status"], "applied", "{ok}");
    assert_eq!(ok["diagnostics"], json!([]));
    assert_eq!(ok["result_revision"], p["result_revision"]);
}

#[test]
fn tmp_15_changed_mappings_replayed_after_the_result_is_an_idempotency_conflict() {
    let (_d, root) = bundle(&[("t/a.md", FOUR)]);
    let a = targs(&root, Some(four_mappings()));
    let p = preview(&a);
    let x = apply_args(&a, &p);
    apply(&x);
    let after = visible(&root);
    let mut changed = x.clone();
    changed["mappings"][0]["to"] = json!("2026-01-02T13:00:00+07:00");
    let e = apply_err(&changed);
    assert_eq!(e["code"], "idempotency_conflict", "{e}");
    assert_eq!(e["retryable"], false);
    assert_eq!(e["diagnostics"][0]["field"], "plan_digest");
    assert_eq!(visible(&root), after);
    // A changed id is a different request too.
    let mut other = x.clone();
    other["id"] = json!("upgrade-2");
    assert_eq!(apply_err(&other)["code"], "idempotency_conflict");
}

#[cfg(feature = "fault-injection")]
#[test]
fn can_06_cancellation_during_preview_is_retryable() {
    let (_t, root) = copy_bundle(&fixture("temporal-date"));
    let before = snapshot(&root);
    let (r, _) = call_env_exit(
        "preview_temporal_upgrade",
        &targs(&root, None),
        &[("OKF_MCP_FI_CAPTURE_CANCEL_AFTER", "3")],
        1,
    );
    let e = &r["structuredContent"];
    assert_eq!(e["code"], "operation_cancelled", "{e}");
    assert_eq!(e["retryable"], true);
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn ali_02_04_mode_switches_and_near_synonyms_on_apply_temporal_upgrade() {
    let (_d, root) = bundle(&[("t/a.md", FOUR)]);
    let a = targs(&root, Some(four_mappings()));
    let p = preview(&a);
    let good = apply_args(&a, &p);
    for (key, field) in [
        ("dryRun", "preview_temporal_upgrade"),
        ("dry_run", "preview_temporal_upgrade"),
        ("mode", "preview_temporal_upgrade"),
        ("preview", "preview_temporal_upgrade"),
        ("confirm", "preview_temporal_upgrade"),
        ("planDigest", "plan_digest"),
        ("expected_plan_digest", "plan_digest"),
        ("expected_revision", "base_revision"),
        ("baseRevision", "base_revision"),
    ] {
        let mut x = good.clone();
        x[key] = json!(true);
        let e = apply_err(&x);
        assert_eq!(e["code"], "unknown_parameter", "{key}: {e}");
        assert_eq!(e["diagnostics"][0]["field"], field, "{key}: {e}");
    }
    assert!(!root.join(".okf").exists());
}

#[test]
fn cid_02_invalid_mapping_concepts_are_refused_before_io_without_echo() {
    let (_d, root) = bundle(&[("t/a.md", FOUR)]);
    let before = snapshot(&root);
    for id in [
        "", "/a", "a/", "a//b", "a\\b", "a:b", "file:x", ".hidden", "a/../b", "a/./b", "index",
        "x/log", "a.md", " a", "a ", "a\tb",
    ] {
        let m = json!([{"concept": id, "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"}]);
        let out = call("preview_temporal_upgrade", &targs(&root, Some(m)));
        assert!(out.is_error(), "{id:?}");
        let code = out.structured()["code"].as_str().expect("code").to_owned();
        assert!(
            code == "schema_validation" || code == "invalid_request",
            "{id:?}: {code}"
        );
        if code == "invalid_request" {
            assert_eq!(out.structured()["message"], "invalid temporal mapping");
        }
        if !id.trim().is_empty() {
            assert!(!out.stdout.contains(&format!("\"{id}\"")), "{id:?} echoed");
        }
    }
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn staged_validation_blocks_an_inverted_usage_window() {
    let doc = "---\ntype: T\nusage_window: {from: 2026-01-01, to: 2026-01-01}\n---\n";
    let (_d, root) = bundle(&[("t/a.md", doc)]);
    let m = json!([
        {"concept": "t/a", "path": "usage_window.from", "from": "2026-01-01", "to": "2026-01-01T23:00:00Z"},
        {"concept": "t/a", "path": "usage_window.to", "from": "2026-01-01", "to": "2026-01-01T01:00:00Z"},
    ]);
    let e = preview_err(&targs(&root, Some(m)));
    let codes = diag_codes(&e);
    assert!(
        codes.contains(&"staged_validation_failed".to_owned()),
        "{e}"
    );
    assert!(codes.contains(&"invalid_usage_window".to_owned()), "{e}");
    assert!(!root.join(".okf").exists());
}

#[test]
fn malformed_fields_and_unsupported_values_fail_the_whole_preview() {
    for (doc, code) in [
        (
            "---\ntype: T\nusage_window: 2026-01-01\n---\n",
            "temporal_field_malformed",
        ),
        (
            "---\ntype: T\nsources: {a: 1}\n---\n",
            "temporal_field_malformed",
        ),
        (
            "---\ntype: T\nstale_after: soon\n---\n",
            "temporal_value_unsupported",
        ),
    ] {
        let (_d, root) = bundle(&[("t/a.md", doc), ("t/b.md", FOUR)]);
        let e = preview_err(&targs(&root, None));
        assert_eq!(diag_codes(&e), [code], "{doc}");
        assert_eq!(e["diagnostics"][0]["file"], "t/a.md");
    }
}

/// A generated date-profile bundle of `n` concepts in 6 folders, each with four legacy
/// dates in mixed presentations, plus a root index, a log and a non-Markdown file.
fn generate(root: &Path, n: usize) {
    write(
        root,
        "index.md",
        "---\nokf_version: \"0.2\"\n---\n# Generated\n",
    );
    write(root, "log.md", "# Log\n\n## 2026-01-02\n\n- generated\n");
    write(root, "assets/query.sql", "SELECT 1;\n");
    for i in 0..n {
        let day = 1 + i % 28;
        let doc = format!(
            "---\ntype: Table\ntitle: T{i}\nstale_after: 2026-06-{day:02} # keep\nusage_window: {{from: '2026-01-{day:02}', to: \"2026-12-{day:02}\"}}\nsources:\n  - id: s{i}\n    resource: https://example.test/{i}\n    last_modified: 2026-02-{day:02}\n---\n\nBody {i}, valid from 2026-01-{day:02}.\n"
        );
        write(root, &format!("f{}/t{i}.md", i % 6), &doc);
    }
}

/// An external `SIGKILL` during an apply (no fault hooks), at deterministic pseudo-random
/// moments spread over its duration (a golden-ratio sequence scaled by the latest
/// uninterrupted apply's wall time; every fourth kill right after the journal appears, so
/// some kills land past the commit point on a host of any speed), each on a fresh copy with the same arguments but its
/// `bundle_path`. After each kill the visible tree holds only pre or post bytes per file and
/// the pre-state unless something was published; the exact replay then yields `applied`
/// with the first run's result, exactly once (a further replay answers from the one
/// receipt), and the post-state.
#[cfg(unix)]
#[test]
fn sigkill_during_an_apply_then_the_exact_replay_applies_exactly_once() {
    use crate::support::util::copy_dir;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    const KILLS: usize = 24;
    let dir = tempfile::tempdir().expect("tempdir");
    let template = dir.path().join("template");
    generate(&template, 120);
    let copy = |k: usize| {
        let root = dir.path().join(format!("copy-{k}")).join("b");
        copy_dir(&template, &root);
        root
    };
    let work = copy(0);
    let pre = visible(&work);
    let p0 = preview(&targs(&work, None));
    assert_eq!(p0["unresolved"].as_array().map(Vec::len), Some(480));
    let a = targs(&work, Some(map_all(&p0["unresolved"], "T06:00:00+03:00")));
    let p = preview(&a);
    assert_eq!(p["status"], "ready");
    let x = apply_args(&a, &p);
    let args_for = |root: &Path| {
        let mut y = x.clone();
        y["bundle_path"] = json!(root.to_str().expect("utf8 path"));
        y.to_string()
    };
    let t = Instant::now();
    let first = apply(&serde_json::from_str(&args_for(&work)).expect("json"));
    let mut duration = t.elapsed();
    let post = visible(&work);
    let (mut kills, mut k, mut past) = (0usize, 0usize, 0usize);
    while kills < KILLS {
        assert!(
            k <= 4 * KILLS,
            "too many applies finished before their kill"
        );
        k += 1;
        let root = copy(k);
        let u = (0.5 + k as f64 * 0.618_033_988_749_895).fract();
        let mut child = Command::new(crate::support::util::bin())
            .args(["call", "apply_temporal_upgrade", "--args", &args_for(&root)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        if k % 4 == 0 {
            // Every fourth kill lands just after the journal appears (the commit point), so
            // the spread reaches past the boundary however slow the host is today.
            let journal = root.join(".okf/transactions");
            let until = Instant::now() + Duration::from_secs(30);
            while child.try_wait().expect("try_wait").is_none() && Instant::now() < until {
                let committed = std::fs::read_dir(&journal).is_ok_and(|d| {
                    d.flatten()
                        .any(|e| e.file_name().to_string_lossy().ends_with(".json"))
                });
                if committed {
                    break;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        } else {
            std::thread::sleep(duration.mul_f64(u));
        }
        let status = match child.try_wait().expect("try_wait") {
            Some(s) => s,
            None => {
                child.kill().expect("SIGKILL");
                child.wait().expect("wait")
            }
        };
        let now = visible(&root);
        if status.signal() != Some(9) {
            assert!(status.success(), "{status:?}");
            assert_eq!(now, post, "a finished apply left the post-state");
            continue;
        }
        kills += 1;
        let at = format!("kill {kills} (u={u:.3})");
        assert_eq!(
            now.keys().collect::<Vec<_>>(),
            pre.keys().collect::<Vec<_>>(),
            "{at}"
        );
        for (path, bytes) in &now {
            assert!(
                bytes == &pre[path] || bytes == &post[path],
                "{at}: {path} torn"
            );
        }
        let t = Instant::now();
        let out = call(
            "apply_temporal_upgrade",
            &serde_json::from_str(&args_for(&root)).expect("json"),
        );
        let took = t.elapsed();
        assert!(!out.is_error(), "{at}: {}", out.stdout);
        let r = out.structured();
        assert_eq!(r["status"], "applied", "{at}");
        assert_eq!(r["result_revision"], first["result_revision"], "{at}");
        assert_eq!(r["request_digest"], first["request_digest"], "{at}");
        let replayed = r["diagnostics"].as_array().is_some_and(|d| !d.is_empty());
        assert!(
            replayed || now == pre,
            "{at}: something was published, so the replay answers from the receipt"
        );
        if replayed {
            past += 1;
        } else {
            duration = took.max(Duration::from_millis(5));
        }
        assert_eq!(visible(&root), post, "{at}: the post-state");
        assert_eq!(receipts(&root), 1, "{at}: exactly one commit");
        let again = call(
            "apply_temporal_upgrade",
            &serde_json::from_str(&args_for(&root)).expect("json"),
        );
        assert_eq!(diag_codes(again.structured()), ["receipt_replayed"], "{at}");
    }
    eprintln!("temporal sigkill: {kills} kills in {k} applies, {past} past the boundary");
    // The spread reached both sides of the commit boundary.
    assert!(past >= 1 && past < kills, "{past} of {kills}");
}

/// MCP progress on the temporal calls: with `_meta.progressToken` the preview and the apply
/// send increasing `notifications/progress` (no paths) before the response; without a
/// token, none.
#[test]
fn temporal_preview_and_apply_report_mcp_progress_only_with_a_token() {
    let (_t, root) = copy_bundle(&fixture("temporal-date"));
    let bundle = root.to_str().expect("utf8");
    let mut mcp = crate::support::util::Mcp::start();
    let mut call_mcp = |name: &str, a: &Value, token: Option<&str>| -> Vec<Value> {
        let mut params = json!({"name": name, "arguments": a});
        if let Some(t) = token {
            params["_meta"] = json!({"progressToken": t});
        }
        mcp.request_raw("tools/call", params)
            .iter()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    };
    let check = |lines: &[Value], token: &str| -> usize {
        let (_, before) = lines.split_last().expect("response");
        let mut last = -1.0;
        for m in before {
            assert_eq!(m["method"], "notifications/progress", "{m}");
            assert_eq!(m["params"]["progressToken"], token);
            let p = m["params"]["progress"].as_f64().expect("progress");
            assert!(p > last, "increasing: {before:?}");
            last = p;
            assert!(!m.to_string().contains(bundle), "no paths in progress");
        }
        before.len()
    };
    let p0 = preview(&targs(&root, None));
    let a = targs(&root, Some(map_all(&p0["unresolved"], "T00:00:00Z")));
    let lines = call_mcp("preview_temporal_upgrade", &a, Some("tp"));
    assert!(check(&lines, "tp") >= 2, "{lines:?}");
    let p = lines.last().expect("response")["result"]["structuredContent"].clone();
    assert_eq!(p["status"], "ready", "{p}");
    let quiet = call_mcp("preview_temporal_upgrade", &a, None);
    assert_eq!(quiet.len(), 1, "no notification without a token");
    let lines = call_mcp("apply_temporal_upgrade", &apply_args(&a, &p), Some("ta"));
    assert!(check(&lines, "ta") >= 2, "{lines:?}");
    assert_eq!(
        lines.last().expect("response")["result"]["structuredContent"]["status"],
        "applied"
    );
    let (code, _, stderr) = mcp.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
}
