//! `validate_bundle` and the validator: VAL-01…06 (spec/surface.md §12.5, §13.2).

use crate::support::read::{err, ok, tmp_bundle};
use crate::support::util::*;
use okf_mcp::okf::capture::Capture;
use okf_mcp::okf::validate::{validate, ValidationOptions};
use okf_mcp::okf::version::Target;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn diags(s: &Value) -> Vec<Value> {
    s["diagnostics"].as_array().expect("diagnostics").clone()
}

fn has(s: &Value, code: &str, severity: &str) -> bool {
    diags(s)
        .iter()
        .any(|d| d["code"] == code && d["severity"] == severity)
}

#[test]
fn val_01_missing_type_is_a_successful_non_conformant_report() {
    let (_t, b) = tmp_bundle(&[
        ("a.md", "---\ntitle: x\n---\n"),
        ("b.md", "---\ntype: T\n---\n"),
    ]);
    let before = snapshot(&b);
    let out = ok("validate_bundle", &json!({"bundle_path": b}));
    let s = out.structured();
    assert_eq!(s["conformance"], json!({"conformant": false, "errors": 1}));
    assert_eq!(s["guidance"], json!({"warnings": 0, "info": 0}));
    assert_eq!(s["scanned_files"], 2);
    let d = diags(s);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["code"], "missing_type");
    assert_eq!(d[0]["severity"], "ERROR");
    assert_eq!(d[0]["file"], "a.md");
    assert_eq!(d[0]["field"], "");
    assert_eq!(d[0]["spec_ref"], "");
    assert_eq!(d[0]["policy_failure"], false);
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}

#[test]
fn val_02_strict_turns_invalid_generated_into_an_error() {
    let (_t, b) = tmp_bundle(&[(
        "a.md",
        "---\ntype: T\ngenerated: {by: nobody, at: 2026-01-02T03:04:05}\n---\n",
    )]);
    let soft = ok("validate_bundle", &json!({"bundle_path": b}));
    assert!(has(soft.structured(), "invalid_generated", "WARN"));
    assert!(!has(soft.structured(), "invalid_generated", "ERROR"));
    assert_eq!(soft.structured()["conformance"]["conformant"], true);
    let strict = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "strict": true}),
    );
    assert!(has(strict.structured(), "invalid_generated", "ERROR"));
    assert!(!has(strict.structured(), "invalid_generated", "WARN"));
    assert_eq!(strict.structured()["conformance"]["conformant"], false);
}

#[test]
fn val_03_links_and_orphans_only_when_asked() {
    let (_t, b) = tmp_bundle(&[
        ("index.md", "* [A](a.md)\n"),
        (
            "a.md",
            "---\ntype: T\n---\nSee [x](/x.md) and [b](/sub/b.md).\n",
        ),
        ("sub/b.md", "---\ntype: T\n---\nBack to [a](../a.md).\n"),
        ("lonely.md", "---\ntype: T\n---\nNobody links here.\n"),
    ]);
    let plain = ok("validate_bundle", &json!({"bundle_path": b}));
    assert_eq!(diags(plain.structured()), Vec::<Value>::new());
    let links = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "check_links": true}),
    );
    let d = diags(links.structured());
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (
            d[0]["code"].clone(),
            d[0]["severity"].clone(),
            d[0]["file"].clone()
        ),
        (json!("broken_link"), json!("WARN"), json!("a.md"))
    );
    let orphans = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "check_orphans": true}),
    );
    let d = diags(orphans.structured());
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (
            d[0]["code"].clone(),
            d[0]["severity"].clone(),
            d[0]["file"].clone()
        ),
        (json!("orphan_concept"), json!("INFO"), json!("lonely.md"))
    );
    assert_eq!(
        orphans.structured()["guidance"],
        json!({"warnings": 0, "info": 1})
    );
}

#[test]
fn val_04_target_version_assertion_and_future_declarations() {
    let (_t, b) = tmp_bundle(&[
        ("index.md", "---\nokf_version: \"0.1\"\n---\n"),
        ("a.md", "---\ntype: T\n---\n"),
    ]);
    let s = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "target_version": "0.2"}),
    )
    .structured()
    .clone();
    assert!(has(&s, "version_assertion_failed", "ERROR"));
    assert_eq!(s["conformance"]["conformant"], false);
    assert_eq!(
        s["version"],
        json!({"declared": "0.1", "effective": "0.2", "resolution": "explicit", "compatibility": "native"})
    );
    let s = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "target_version": "0.1"}),
    )
    .structured()
    .clone();
    assert!(!has(&s, "version_assertion_failed", "ERROR"));
    assert_eq!(s["version"]["resolution"], "explicit");
    assert_eq!(s["version"]["compatibility"], "legacy");

    let (_t, b) = tmp_bundle(&[
        ("index.md", "---\nokf_version: \"0.3\"\n---\n"),
        ("a.md", "---\ntype: T\n---\n"),
    ]);
    let s = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "target_version": "auto"}),
    )
    .structured()
    .clone();
    let d = diags(&s);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "future_version");
    assert_eq!(d[0]["severity"], "WARN");
    assert_eq!(s["conformance"]["conformant"], true);
    // What patch planning sees: strict with an asserted 0.2 fails the future declaration.
    let files: Vec<(String, Vec<u8>)> = snapshot(&b)
        .into_iter()
        .filter(|(p, _)| !p.ends_with('/'))
        .collect();
    let capture = Capture::from_files(files);
    let report = validate(
        &capture,
        &ValidationOptions {
            strict: true,
            spec_version: Some(Target::V02),
            ..ValidationOptions::default()
        },
    )
    .expect("validate");
    assert!(report
        .findings
        .iter()
        .any(|f| f.code == "version_assertion_failed" && f.file == "index.md"));
    assert!(!report.conformant());
}

#[test]
fn val_05_status_invalid_and_profile_mismatch_never_block() {
    let (_t, b) = tmp_bundle(&[(
        "a.md",
        "---\ntype: T\nstatus: archived\nstale_after: 2026-01-02T00:00:00Z\n---\n",
    )]);
    // The date profile, passed explicitly (auto would detect the instant and report none).
    let s = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "strict": true, "temporal_profile": "date-3fcbb9f"}),
    )
    .structured()
    .clone();
    assert!(has(&s, "status_invalid", "WARN"));
    assert!(has(&s, "temporal_profile_mismatch", "WARN"));
    assert_eq!(s["conformance"], json!({"conformant": true, "errors": 0}));
    let s = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "strict": true, "temporal_profile": "instant-0b87c52"}),
    )
    .structured()
    .clone();
    assert!(!has(&s, "temporal_profile_mismatch", "WARN"));
    assert!(has(&s, "status_invalid", "WARN"));
}

const SKIPPED_UNDER_0_1: [&str; 12] = [
    "invalid_generated",
    "invalid_verified",
    "invalid_sources",
    "duplicate_source_id",
    "usage_count_invalid",
    "invalid_usage_window",
    "invalid_computation",
    "status_invalid",
    "temporal_profile_mismatch",
    "unresolved_attribution",
    "legacy_timestamp",
    "legacy_citations",
];

#[test]
fn val_06_target_0_1_skips_exactly_the_listed_rows() {
    let (_t, b) = copy_bundle(&fixture("validate_rows"));
    let before = snapshot(&b);
    // Under 0.2 every skipped row fires, so the 0.1 run below is not vacuous.
    let s02 = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "target_version": "0.2"}),
    )
    .structured()
    .clone();
    let codes02: BTreeSet<String> = diags(&s02)
        .iter()
        .map(|d| d["code"].as_str().expect("code").to_owned())
        .collect();
    for c in SKIPPED_UNDER_0_1 {
        assert!(codes02.contains(c), "0.2 run lacks {c}: {codes02:?}");
    }
    let s01 = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "target_version": "0.1"}),
    )
    .structured()
    .clone();
    let d = diags(&s01);
    for c in SKIPPED_UNDER_0_1 {
        assert!(!d.iter().any(|x| x["code"] == c), "0.1 run reports {c}");
    }
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "missing_type");
    assert_eq!(d[0]["file"], "untyped.md");
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}

#[test]
fn diagnostics_sorted_by_file_code_message_and_counts_match() {
    let (_t, b) = copy_bundle(&fixture("read_tools"));
    let s = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "strict": true, "check_links": true, "check_orphans": true, "as_of": "2026-09-23"}),
    )
    .structured()
    .clone();
    assert_eq!(s["as_of"], "2026-09-23");
    let d = diags(&s);
    let keys: Vec<(String, String, String)> = d
        .iter()
        .map(|x| {
            (
                x["file"].as_str().expect("f").to_owned(),
                x["code"].as_str().expect("c").to_owned(),
                x["message"].as_str().expect("m").to_owned(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let count = |sev: &str| d.iter().filter(|x| x["severity"] == sev).count();
    assert_eq!(s["conformance"]["errors"], count("ERROR"));
    assert_eq!(s["guidance"]["warnings"], count("WARN"));
    assert_eq!(s["guidance"]["info"], count("INFO"));
    assert!(d
        .iter()
        .any(|x| x["code"] == "stale_concept" && x["file"] == "tables/orders.md"));
    assert!(
        !d.iter().any(|x| x["code"] == "broken_link"),
        "every link resolves"
    );
    // No message carries document text or values, except the footnote label, key or link
    // target at fault that spec/surface.md §18.3 rule 3 (AUT-05) has a message name.
    let unresolved: Vec<&Value> = d
        .iter()
        .filter(|x| x["code"] == "unresolved_attribution")
        .collect();
    assert_eq!(unresolved.len(), 1, "{d:?}");
    assert_eq!(unresolved[0]["file"], "tables/orders.md");
    assert_eq!(
        unresolved[0]["message"],
        "footnote [^nobody] matches no sources id; add a source with that id or fix the label"
    );
    let others: Vec<&Value> = d
        .iter()
        .filter(|x| x["code"] != "unresolved_attribution")
        .collect();
    let text = serde_json::to_string(&others).expect("json");
    for secret in ["ga4-schema", "archived\"", "nobody", "reference_agent"] {
        assert!(!text.contains(secret), "{secret} leaked");
    }
}

#[test]
fn validate_pure_checks_win_over_a_bad_bundle_path() {
    let out = err(
        "validate_bundle",
        &json!({"bundle_path": "/nonexistent/okf/bundle", "temporal_profile": "instant-0b87c52", "as_of": "2026-01-02"}),
    );
    assert_ne!(out.structured()["message"], "bundle_path is not accessible");
    let out = err(
        "validate_bundle",
        &json!({"bundle_path": "/nonexistent/okf/bundle"}),
    );
    assert_eq!(out.structured()["code"], "invalid_request");
}
