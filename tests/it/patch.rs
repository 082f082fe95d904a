//! `preview_concept_patch` / `apply_concept_patch` end to end through the real binary
//! (spec/concept-patch.md; scenarios.md §9 PAT-*, §10 OPS-*/DIF-*, §12 OUT-02..04, §14 SEC-01).
//! Every test works on a temp copy of a fixture and checks the tree and `.okf/` where the
//! scenario says so.

use crate::support::patch::*;
use crate::support::probe::Probe;
use crate::support::util::{copy_bundle, fixture, snapshot, Mcp};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn read(b: &Path, rel: &str) -> String {
    String::from_utf8(std::fs::read(b.join(rel)).expect("read")).expect("utf8")
}

fn ext() -> (tempfile::TempDir, PathBuf) {
    copy_bundle(&fixture("patch-ext"))
}

fn gen_op(concept: &str, by: &str) -> Value {
    json!({"kind": "set_generated", "concept_id": concept, "generated": {"by": by}})
}

/// The recovery step's `field`.
fn recovery_field(e: &Value) -> String {
    e["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == "recovery_step")
        .map(|d| d["field"].as_str().expect("field").to_owned())
        .unwrap_or_default()
}

#[test]
fn pat_01_declared_0_1_bundle_preview_and_apply_are_rejected() {
    let (_t, b) = copy_bundle(&fixture("patch-v01"));
    let before = snapshot(&b);
    let args = patch_args(&b, &json!([gen_op("metrics/a", "agent/2")]));
    let p = preview(&args);
    assert_eq!(p["status"], "rejected");
    let c = codes(&p);
    assert!(c.contains(&"version_assertion_failed".to_owned()), "{p}");
    assert!(c.contains(&"staged_validation_failed".to_owned()), "{p}");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "rejected");
    assert_eq!(a["base_revision"], p["base_revision"]);
    assert_eq!(a["result_revision"], p["base_revision"]);
    assert_eq!(a["plan_digest"], p["plan_digest"]);
    assert!(codes(&a).contains(&"version_assertion_failed".to_owned()));
    assert_eq!(snapshot(&b), before, "tree unchanged, no .okf");
}

#[test]
fn pat_02_warning_only_bundle_applies_and_stores_one_receipt() {
    let (_t, b) = ext();
    let args = patch_args(
        &b,
        &json!([{"kind": "ensure_verification", "concept_id": "metrics/archived",
                 "verification": {"by": "human:reviewer", "at": "2026-07-01T00:00:00Z"}}]),
    );
    let p = preview(&args);
    assert_eq!(p["status"], "applicable");
    assert!(
        p["diagnostics"]
            .as_array()
            .expect("d")
            .iter()
            .any(|d| d["code"] == "status_invalid" && d["severity"] == "WARN"),
        "{p}"
    );
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    assert_eq!(a["result_revision"], p["result_revision"]);
    assert_eq!(a["diagnostics"], json!([]));
    assert_eq!(a["changed_paths"], json!(["metrics/archived.md"]));
    assert!(read(&b, "metrics/archived.md").contains("by: human:reviewer"));
    assert_eq!(receipts(&b), 1);
}

#[test]
fn pat_03_noop_patch_previews_and_applies_as_noop_without_state() {
    let (_t, b) = ext();
    let before = snapshot(&b);
    let args = patch_args(
        &b,
        &json!([{"kind": "remove_verification", "concept_id": "metrics/archived",
                 "verification": {"by": "human:nobody", "at": "2026-07-01T00:00:00Z"}}]),
    );
    let p = preview(&args);
    assert_eq!(p["status"], "noop");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "noop");
    assert_eq!(a["base_revision"], p["base_revision"]);
    assert_eq!(a["diagnostics"], json!([]));
    assert_eq!(snapshot(&b), before);
    assert!(!has_okf(&b));
}

#[test]
fn pat_04_external_writer_wins_with_a_retryable_conflict() {
    let (_t, b) = ext();
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    let external = b"---\ntype: Metric\ntitle: External\n---\n\nRewritten by someone else.\n";
    put(b.join("metrics/revenue.md"), external).expect("write");
    let before = snapshot(&b);
    let e = tool_err("apply_concept_patch", &apply_args(&args, &p));
    assert_eq!(e["code"], "revision_conflict");
    assert_eq!(e["retryable"], true);
    assert_eq!(recovery_field(&e), "expected_revision");
    assert_eq!(
        std::fs::read(b.join("metrics/revenue.md")).expect("r"),
        external
    );
    assert_eq!(snapshot(&b), before);
    assert!(!has_okf(&b));
}

#[test]
fn pat_05_changed_operation_is_a_plan_mismatch() {
    let (_t, b) = ext();
    let before = snapshot(&b);
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    let changed = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/3")]));
    let e = tool_err("apply_concept_patch", &apply_args(&changed, &p));
    assert_eq!(e["code"], "plan_mismatch");
    assert_eq!(recovery_field(&e), "expected_plan_digest");
    assert_eq!(snapshot(&b), before);
    assert!(!has_okf(&b));
}

#[test]
fn pat_06_uppercase_digest_is_a_schema_error_before_io() {
    let args = json!({"bundle_path": "/nonexistent/okf-it/bundle", "actor": ACTOR,
        "operations": [gen_op("metrics/revenue", "agent/2")],
        "expected_revision": format!("sha256:{}", "0".repeat(64)),
        "expected_plan_digest": format!("sha256:ABC{}", "0".repeat(61))});
    let e = tool_err("apply_concept_patch", &args);
    assert_eq!(e["code"], "schema_validation");
}

#[test]
fn pat_07_exact_replay_returns_the_first_answer_plus_one_info() {
    let (_t, b) = ext();
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    let first = apply(&apply_args(&args, &p));
    assert_eq!(first["status"], "applied");
    assert_eq!(first["diagnostics"], json!([]));
    let after = snapshot(&b);
    let again = apply(&apply_args(&args, &p));
    for k in [
        "status",
        "base_revision",
        "result_revision",
        "changed_paths",
        "plan_digest",
    ] {
        assert_eq!(again[k], first[k], "{k}");
    }
    let d = again["diagnostics"].as_array().expect("d");
    assert_eq!(d.len(), 1, "{again}");
    assert_eq!(
        (d[0]["code"].as_str(), d[0]["severity"].as_str()),
        (Some("receipt_replayed"), Some("INFO"))
    );
    assert_eq!(snapshot(&b), after, "the replay writes nothing");
    assert_eq!(receipts(&b), 1);
}

#[test]
fn pat_08_changed_operations_with_the_old_digest_after_success_is_idempotency_conflict() {
    let (_t, b) = ext();
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    apply(&apply_args(&args, &p));
    let after = snapshot(&b);
    let changed = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/3")]));
    let e = tool_err("apply_concept_patch", &apply_args(&changed, &p));
    assert_eq!(e["code"], "idempotency_conflict");
    assert_eq!(e["retryable"], false);
    assert_eq!(snapshot(&b), after);
}

#[test]
fn pat_09_reverted_bundle_answers_from_the_receipt_without_rewriting() {
    let (_t, b) = ext();
    let original = std::fs::read(b.join("metrics/revenue.md")).expect("r");
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = preview(&args);
    let first = apply(&apply_args(&args, &p));
    put(b.join("metrics/revenue.md"), &original).expect("revert");
    let before = snapshot(&b);
    let again = apply(&apply_args(&args, &p));
    assert_eq!(again["status"], "applied");
    assert_eq!(again["result_revision"], first["result_revision"]);
    let d = again["diagnostics"].as_array().expect("d");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["code"], "receipt_replayed");
    assert!(
        d[0]["message"]
            .as_str()
            .expect("m")
            .contains("later undone"),
        "{again}"
    );
    assert_eq!(snapshot(&b), before, "not re-written");
    assert_eq!(
        std::fs::read(b.join("metrics/revenue.md")).expect("r"),
        original
    );
}

#[test]
fn pat_10_instant_profile_values_are_written_verbatim() {
    let (_t, b) = copy_bundle(&fixture("instant"));
    let concept = "metrics/upgraded";
    let mut args = patch_args(
        &b,
        &json!([
            {"kind": "set_lifecycle", "concept_id": concept,
             "lifecycle": {"status": null, "stale_after": "2026-09-23T18:00:00+07:00"}},
            {"kind": "set_usage_window", "concept_id": concept,
             "usage_window": {"from": "2026-09-23T18:00:00+07:00", "to": "2026-09-23T12:00:00Z"}},
            {"kind": "put_source", "concept_id": concept,
             "source": {"id": "inst", "resource": "https://example.test/i",
                        "last_modified": "2026-01-02T03:04:05.120-00:30"}}
        ]),
    );
    args["temporal_profile"] = json!("instant-0b87c52");
    let p = preview(&args);
    assert_eq!(p["status"], "applicable", "{p}");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    assert_eq!(a["result_revision"], p["result_revision"]);
    let t = read(&b, &format!("{concept}.md"));
    for v in [
        "stale_after: 2026-09-23T18:00:00+07:00",
        "from: 2026-09-23T18:00:00+07:00",
        "to: 2026-09-23T12:00:00Z",
        "last_modified: 2026-01-02T03:04:05.120-00:30",
    ] {
        assert!(t.contains(v), "{v} in {t}");
    }
}

fn lifecycle_args(b: &Path, profile: &str, v: &str) -> Value {
    let mut a = patch_args(
        b,
        &json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue",
                  "lifecycle": {"status": "stable", "stale_after": v}}]),
    );
    a["temporal_profile"] = json!(profile);
    a
}

#[test]
fn pat_11_temporal_grammar_per_profile_at_the_tool() {
    let (_t, b) = ext();
    let before = snapshot(&b);
    preview(&lifecycle_args(&b, "date-3fcbb9f", "2026-12-31"));
    preview(&lifecycle_args(&b, "", "2026-12-31"));
    for v in ["2026-12-31T00:00:00Z", "2026-02-30", "2026-1-01"] {
        let e = tool_err(
            "preview_concept_patch",
            &lifecycle_args(&b, "date-3fcbb9f", v),
        );
        assert!(
            e["code"] == "schema_validation" || e["code"] == "invalid_request",
            "{v}: {e}"
        );
    }
    for v in [
        "2026-09-26T12:34:56Z",
        "2026-09-26T12:34:56.1200+07:00",
        "2026-09-26T12:34:56+00:00",
        "2026-09-26T12:34:56-00:30",
    ] {
        let p = preview(&lifecycle_args(&b, "instant-0b87c52", v));
        assert_eq!(p["status"], "applicable", "{v}");
    }
    for v in [
        "2026-12-31",
        "2026-09-26T12:34:56",
        "2026-09-26T12:34:56-00:00",
        "2026-09-26T12:34:56+24:00",
        "2026-09-26T12:34:60Z",
        "2026-12-31T23:59:60Z",
        "2026-02-30T12:34:56Z",
        "2026-09-26T12:34:56,5Z",
        "2026-09-26t12:34:56Z",
        "2026-09-26T12:34:56z",
    ] {
        let e = tool_err(
            "preview_concept_patch",
            &lifecycle_args(&b, "instant-0b87c52", v),
        );
        assert!(
            e["code"] == "schema_validation" || e["code"] == "invalid_request",
            "{v}: {e}"
        );
    }
    assert_eq!(snapshot(&b), before);
}

fn window_args(b: &Path, profile: &str, from: &str, to: &str) -> Value {
    let mut a = patch_args(
        b,
        &json!([{"kind": "set_usage_window", "concept_id": "metrics/revenue",
                  "usage_window": {"from": from, "to": to}}]),
    );
    a["temporal_profile"] = json!(profile);
    a
}

#[test]
fn pat_12_usage_window_order() {
    let (_t, b) = ext();
    let e = tool_err(
        "preview_concept_patch",
        &window_args(&b, "", "2026-12-31", "2026-01-01"),
    );
    assert_eq!(e["code"], "invalid_request");
    assert!(e["message"]
        .as_str()
        .expect("m")
        .contains("usage window starts after it ends"));
    preview(&window_args(&b, "", "2026-05-05", "2026-05-05"));
    preview(&window_args(
        &b,
        "instant-0b87c52",
        "2026-09-23T18:00:00+07:00",
        "2026-09-23T12:00:00Z",
    ));
    let e = tool_err(
        "preview_concept_patch",
        &window_args(
            &b,
            "instant-0b87c52",
            "2026-09-23T12:00:01Z",
            "2026-09-23T18:00:00+07:00",
        ),
    );
    assert_eq!(e["code"], "invalid_request");
    assert!(!has_okf(&b));
}

/// Runs `ops` through preview and apply against a path that does not exist: the error must
/// come from the pure checks (a bundle_path error would mean I/O happened first).
fn both_before_io(ops: &Value, actor: &str) -> Vec<String> {
    let fake = Path::new("/nonexistent/okf-it/bundle");
    let mut args = patch_args(fake, ops);
    args["actor"] = json!(actor);
    let mut out = Vec::new();
    let pe = tool_err("preview_concept_patch", &args);
    args["expected_revision"] = json!(format!("sha256:{}", "1".repeat(64)));
    args["expected_plan_digest"] = json!(format!("sha256:{}", "2".repeat(64)));
    let ae = tool_err("apply_concept_patch", &args);
    assert_eq!(pe["code"], ae["code"], "preview and apply agree: {pe} {ae}");
    for e in [pe, ae] {
        assert_ne!(e["code"], "invalid_bundle_path", "{e}");
        assert!(
            !e["message"].as_str().expect("m").contains("bundle_path"),
            "{e}"
        );
        out.push(e["code"].as_str().expect("code").to_owned());
    }
    out
}

fn computation(params: Value) -> Value {
    json!({"mode": "inline", "runtime": "bigquery", "parameters": params,
           "executor": {"resource": "e", "receipt": ["job"]}, "attester": {"resource": "a"},
           "inline_computation": "SELECT 1"})
}

#[test]
fn pat_13_missing_required_payload_keys_fail_before_io() {
    let pac = |c: Value| json!([{"kind": "put_attested_computation", "concept_id": "m/c", "attested_computation": c}]);
    let mut no_params = computation(json!([]));
    no_params.as_object_mut().expect("o").remove("parameters");
    let cases = [
        pac(no_params),
        pac(computation(Value::Null)),
        pac(computation(json!([{"name": "y", "type": "t"}]))),
        pac(computation(
            json!([{"name": "y", "type": "t", "required": null}]),
        )),
        // Since spec/concept-patch.md §11.1 a lifecycle member may be absent (kept), but an
        // empty lifecycle says nothing.
        json!([{"kind": "set_lifecycle", "concept_id": "m/c", "lifecycle": {}}]),
    ];
    for ops in &cases {
        let c = both_before_io(ops, ACTOR);
        assert!(
            c[0] == "schema_validation" || c[0] == "invalid_request",
            "{ops}: {c:?}"
        );
    }
    // An explicit null status is valid: it gets past the pure checks to the bundle_path.
    let (_t, b) = ext();
    let p = preview(&patch_args(
        &b,
        &json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue", "lifecycle": {"status": null, "stale_after": null}}]),
    ));
    assert_eq!(p["status"], "noop");
}

#[test]
fn pat_14_caps_are_resource_limits_and_wrong_shapes_schema_errors_before_io() {
    let op = gen_op("m/c", "agent/2");
    assert_eq!(
        both_before_io(&json!([op]), &"a".repeat(257))[0],
        "resource_limit"
    );
    let many: Vec<Value> = (0..257).map(|_| op.clone()).collect();
    assert_eq!(both_before_io(&json!(many), ACTOR)[0], "resource_limit");
    let big_res = json!([{"kind": "put_source", "concept_id": "m/c", "source": {"resource": "r".repeat(4097)}}]);
    assert_eq!(both_before_io(&big_res, ACTOR)[0], "resource_limit");
    let params: Vec<Value> = (0..257)
        .map(|i| json!({"name": format!("p{i}"), "type": "t", "required": true}))
        .collect();
    let pac = json!([{"kind": "put_attested_computation", "concept_id": "m/c", "attested_computation": computation(json!(params))}]);
    assert_eq!(both_before_io(&pac, ACTOR)[0], "resource_limit");
    let mut c = computation(json!([]));
    c["inline_computation"] = json!("x".repeat(1024 * 1024 + 1));
    let pac = json!([{"kind": "put_attested_computation", "concept_id": "m/c", "attested_computation": c}]);
    assert_eq!(both_before_io(&pac, ACTOR)[0], "resource_limit");
    let sbv = json!([{"kind": "set_bundle_version", "version": "0.2", "concept_id": "m/c"}]);
    assert_eq!(both_before_io(&sbv, ACTOR)[0], "schema_validation");
    let ps = json!([{"kind": "put_source", "concept_id": "m/c", "source_id": "s", "source": {"resource": "r"}}]);
    assert_eq!(both_before_io(&ps, ACTOR)[0], "schema_validation");
}

#[test]
fn pat_15_aut_05_document_and_request_actors() {
    // spec/surface.md §18.3 rule 4 (Phase 5): the document-actor grammar is an advertised
    // `pattern`, so the schema step refuses a bad actor before any I/O (Phase 1 answered
    // `invalid_request` from the tool's own check; the refusal point and the "nothing
    // happened" guarantee are unchanged) and its guidance spells the grammar out.
    for by in ["reviewer", "human:"] {
        let c = both_before_io(&json!([gen_op("m/c", by)]), ACTOR);
        assert_eq!(c[0], "schema_validation", "{by}");
    }
    let fake = Path::new("/nonexistent/okf-it/bundle");
    let e = tool_err(
        "preview_concept_patch",
        &patch_args(fake, &json!([gen_op("m/c", "reviewer")])),
    );
    let d = &e["diagnostics"][0];
    assert_eq!(d["field"], "operations.0.generated.by", "{e}");
    assert!(
        d["message"]
            .as_str()
            .expect("m")
            .contains("use a document actor: human:<name>, process:<name>, or producer/version"),
        "{e}"
    );
    for actor in [" agent:x", "agent:x ", "agent:\u{1}x", "agent:\u{7f}"] {
        assert_eq!(
            both_before_io(&json!([gen_op("m/c", "agent/1.0")]), actor)[0],
            "invalid_request",
            "{actor:?}"
        );
    }
    let (_t, b) = ext();
    let mut args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/1.0")]));
    args["actor"] = json!("mcp:policy-test");
    let p = preview(&args);
    assert_eq!(p["status"], "applicable");
}

#[test]
fn pat_16_remove_source_selector_rules() {
    for op in [
        json!({"kind": "remove_source", "concept_id": "m/c", "source_id": "s", "source": {"resource": "r"}}),
        json!({"kind": "remove_source", "concept_id": "m/c"}),
        json!({"kind": "remove_source", "concept_id": "m/c", "source": {"id": "s", "resource": "r"}}),
    ] {
        let c = both_before_io(&json!([op]), ACTOR);
        assert!(
            c[0] == "invalid_request" || c[0] == "schema_validation",
            "{op}: {c:?}"
        );
    }
}

#[test]
fn pat_17_missing_concept_is_rejected_and_nothing_changes() {
    let (_t, b) = ext();
    let before = snapshot(&b);
    let args = patch_args(&b, &json!([gen_op("metrics/nope", "agent/2")]));
    let p = preview(&args);
    assert_eq!(p["status"], "rejected");
    assert_eq!(codes(&p), ["missing_concept"]);
    assert_eq!(p["diagnostics"][0]["file"], "metrics/nope.md");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "rejected");
    assert_eq!(snapshot(&b), before);
}

#[test]
fn pat_18_preview_never_creates_private_state() {
    let (_t, b) = ext();
    let before = snapshot(&b);
    for ops in [
        json!([gen_op("metrics/revenue", "agent/2")]),
        json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue", "lifecycle": {"status": null, "stale_after": null}}]),
        json!([gen_op("metrics/nope", "agent/2")]),
    ] {
        preview(&patch_args(&b, &ops));
        assert_eq!(snapshot(&b), before);
    }
    assert!(!has_okf(&b));
}

#[test]
fn pat_20_preexisting_errors_elsewhere_do_not_block() {
    let (_t, b) = copy_bundle(&fixture("patch-pre"));
    let preexisting = |s: &Value| -> Vec<String> {
        s["diagnostics"]
            .as_array()
            .expect("d")
            .iter()
            .filter(|d| d["code"] == "preexisting_error")
            .map(|d| {
                assert_eq!(d["severity"], "WARN");
                d["file"].as_str().expect("f").to_owned()
            })
            .collect()
    };
    let args = patch_args(&b, &json!([gen_op("metrics/good", "agent/2")]));
    let p = preview(&args);
    assert_eq!(p["status"], "applicable");
    assert_eq!(preexisting(&p), ["AGENTS.md", "metrics/untyped.md"]);
    assert!(!codes(&p).contains(&"missing_type".to_owned()));
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    assert_eq!(a["diagnostics"], json!([]));

    let before = snapshot(&b);
    let args = patch_args(&b, &json!([gen_op("metrics/untyped", "agent/2")]));
    let p = preview(&args);
    assert_eq!(p["status"], "rejected");
    let c = codes(&p);
    assert!(c.contains(&"staged_validation_failed".to_owned()), "{p}");
    assert!(c.contains(&"missing_type".to_owned()), "{p}");
    assert_eq!(preexisting(&p), ["AGENTS.md"]);
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "rejected");
    assert_eq!(snapshot(&b), before);
}

/// The nine kinds, in an order that edits every owned key of `metrics/revenue`.
fn nine_kinds(concept: &str) -> Value {
    json!([
        {"kind": "set_generated", "concept_id": concept, "generated": {"by": "agent/2", "at": "2026-07-01T00:00:00Z"}},
        {"kind": "ensure_verification", "concept_id": concept, "verification": {"by": "human:bob", "at": "2026-07-02T00:00:00Z"}},
        {"kind": "remove_verification", "concept_id": concept, "verification": {"by": "human:carol", "at": "2026-07-02T00:00:00Z"}},
        {"kind": "put_source", "concept_id": concept, "source": {"id": "schema", "resource": "https://example.test/schema/v2", "title": "Orders schema"}},
        {"kind": "remove_source", "concept_id": concept, "source_id": "no-such-source"},
        {"kind": "set_usage_window", "concept_id": concept, "source_id": "schema", "usage_window": {"from": "2026-01-01", "to": "2026-06-30"}},
        {"kind": "set_lifecycle", "concept_id": concept, "lifecycle": {"status": "stable", "stale_after": "2027-01-01"}},
        {"kind": "put_attested_computation", "concept_id": concept, "attested_computation": {
            "mode": "inline", "runtime": "bigquery",
            "parameters": [{"name": "year", "type": "integer", "required": true}, {"name": "region", "type": "string", "required": false}],
            "executor": {"resource": "tables/orders.md", "receipt": ["job_id", "sql"]},
            "attester": {"resource": "tables/orders.md"},
            "inline_computation": "SELECT 2\n", "inline_language": "sql"}},
        {"kind": "set_bundle_version", "version": "0.2"}
    ])
}

#[test]
fn ops_01_02_nine_kinds_keep_extensions_comments_and_body_then_rerun_is_noop() {
    let (_t, b) = ext();
    let original = read(&b, "metrics/revenue.md");
    let index = std::fs::read(b.join("index.md")).expect("index");
    let args = patch_args(&b, &nine_kinds("metrics/revenue"));
    let p = preview(&args);
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(
        p["affected_paths"],
        json!(["metrics/revenue.md"]),
        "index already declares 0.2"
    );
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    let t = read(&b, "metrics/revenue.md");
    // Unknown keys, comments, quoting and key order survive.
    for keep in [
        "# card comment\n",
        "title: \"Revenue\"   # quoted on purpose\n",
        "description: 'Recognized revenue.'\n",
        "x-opaque: keep\n",
        "  x-generated: keep-gen\n",
        "  x-verification: keep-ver\n",
        "    x-source: keep-src\n",
        "  x-executor: keep-exe\n",
        "  x-attester: keep-att\n",
    ] {
        assert!(t.contains(keep), "{keep:?} lost:\n{t}");
    }
    let order: Vec<usize> = [
        "# card comment",
        "type:",
        "title:",
        "description:",
        "x-opaque:",
        "generated:",
        "verified:",
        "sources:",
        "runtime:",
        "parameters:",
        "executor:",
        "attester:",
    ]
    .iter()
    .map(|k| t.find(k).expect(k))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "key order:\n{t}");
    // Edited values.
    for edited in [
        "by: agent/2",
        "at: 2026-07-01T00:00:00Z",
        "by: human:bob",
        "resource: https://example.test/schema/v2",
        "usage_window: { from: 2026-01-01, to: 2026-06-30 }",
        "status: stable",
        "stale_after: 2027-01-01",
        "receipt: [job_id, sql]",
        "```sql\nSELECT 2\n```\n",
    ] {
        assert!(t.contains(edited), "{edited:?} missing:\n{t}");
    }
    // The body outside `# Computation` is byte-identical.
    let body_head = |s: &str| -> String {
        let start = s.find("\n---\n").expect("fence") + 5;
        let end = s.find("# Computation").expect("section");
        s[start..end].to_owned()
    };
    assert_eq!(body_head(&t), body_head(&original));
    assert_eq!(std::fs::read(b.join("index.md")).expect("i"), index);
    // OPS-02: the same operations on their own output write nothing.
    let again = preview(&args);
    assert_eq!(again["status"], "noop", "{again}");
    assert_eq!(again["base_revision"], a["result_revision"]);
    let re = apply(&apply_args(&args, &again));
    assert_eq!(re["status"], "noop");
    assert_eq!(receipts(&b), 1);
}

/// OPS-14/15/16 and OPS-08's selector miss at the tool level: preview and apply both
/// `rejected` with the code, tree unchanged, no `.okf`.
#[test]
fn ops_14_15_16_hostile_presentations_reject_preview_and_apply() {
    let (_t, b) = copy_bundle(&fixture("patch-hostile"));
    let before = snapshot(&b);
    let put = |c: &str, src: Value| json!([{"kind": "put_source", "concept_id": c, "source": src}]);
    let cases = [
        (
            json!([gen_op("m/alias", "agent/2")]),
            "ambiguous_presentation",
        ),
        (
            json!([gen_op("m/merge", "agent/2")]),
            "ambiguous_presentation",
        ),
        (
            json!([gen_op("m/dupkey", "agent/2")]),
            "ambiguous_presentation",
        ),
        (
            json!([gen_op("m/genscalar", "agent/2")]),
            "invalid_presentation",
        ),
        (
            put("m/dupsrc", json!({"id": "s", "resource": "r"})),
            "ambiguous_presentation",
        ),
        (
            put("m/flowcomment", json!({"id": "t", "resource": "r"})),
            "invalid_presentation",
        ),
        (
            put("m/flowcomment", json!({"id": "s", "resource": "r2"})),
            "invalid_presentation",
        ),
        (
            put("m/anoncomment", json!({"resource": "r"})),
            "ambiguous_presentation",
        ),
        (
            put("m/tag", json!({"resource": "r"})),
            "ambiguous_presentation",
        ),
        (
            put("m/anchor", json!({"resource": "r"})),
            "ambiguous_presentation",
        ),
        (
            put("m/anoncomment2", json!({"resource": "r", "title": "t"})),
            "ambiguous_presentation",
        ),
        (
            put("m/srcmap", json!({"id": "s", "resource": "r"})),
            "invalid_presentation",
        ),
        (
            put("m/usage", json!({"id": "s", "resource": "r"})),
            "usage_count_invalid",
        ),
        (
            json!([{"kind": "set_usage_window", "concept_id": "m/usage", "source_id": "zzz", "usage_window": null}]),
            "missing_source_selector",
        ),
    ];
    for (ops, code) in cases {
        let args = patch_args(&b, &ops);
        let p = preview(&args);
        assert_eq!(p["status"], "rejected", "{ops}: {p}");
        assert!(codes(&p).contains(&code.to_owned()), "{ops}: {p}");
        let a = apply(&apply_args(&args, &p));
        assert_eq!(a["status"], "rejected", "{ops}: {a}");
        assert!(codes(&a).contains(&code.to_owned()), "{ops}: {a}");
        assert_eq!(snapshot(&b), before, "{ops}");
    }
    assert!(!has_okf(&b));
}

#[test]
fn ops_13_bundle_version_on_a_root_without_frontmatter_and_without_root() {
    let (_t, b) = copy_bundle(&fixture("patch-durable"));
    let args = patch_args(
        &b,
        &json!([{"kind": "set_bundle_version", "version": "0.2"}]),
    );
    let p = preview(&args);
    assert_eq!(p["affected_paths"], json!(["index.md"]));
    apply(&apply_args(&args, &p));
    assert!(read(&b, "index.md").starts_with("---\nokf_version: \"0.2\"\n---\n# Durable bundle\n"));
    let (_t2, c) = copy_bundle(&fixture("patch-durable"));
    std::fs::remove_file(c.join("index.md")).expect("rm");
    let p = preview(&patch_args(
        &c,
        &json!([{"kind": "set_bundle_version", "version": "0.2"}]),
    ));
    assert_eq!(codes(&p), ["missing_root_index"]);
    let p = preview(&patch_args(
        &b,
        &json!([{"kind": "set_bundle_version", "version": "0.1"}]),
    ));
    assert!(
        codes(&p).contains(&"version_assertion_failed".to_owned()),
        "{p}"
    );
}

#[test]
fn dif_01_preview_diff_is_a_unified_diff_with_hunks_in_path_order() {
    let (_t, b) = copy_bundle(&fixture("patch-durable"));
    let args = patch_args(
        &b,
        &json!([gen_op("metrics/b", "agent/2"), gen_op("metrics/a", "agent/2"),
                 {"kind": "set_bundle_version", "version": "0.2"}]),
    );
    let p = preview(&args);
    let d = p["diff"].as_str().expect("diff");
    let heads: Vec<&str> = d.lines().filter(|l| l.starts_with("--- ")).collect();
    assert_eq!(
        heads,
        ["--- a/index.md", "--- a/metrics/a.md", "--- a/metrics/b.md"]
    );
    assert!(d.contains("+++ b/metrics/a.md\n@@ -1,6 +1,8 @@\n ---\n type: Metric\n title: A\n+generated:\n+  by: agent/2\n ---\n"), "{d}");
    assert!(d.starts_with("--- a/index.md\n+++ b/index.md\n@@ -1,3 +1,6 @@\n+---\n+okf_version: \"0.2\"\n+---\n # Durable bundle\n"), "{d}");
}

#[test]
fn dif_02_over_limit_diff_is_cut_by_whole_sections_and_still_applies() {
    let (_t, b) = copy_bundle(&fixture("patch-durable"));
    // One section over 1 MiB: a 1,000,000-byte inline computation of short lines (each gets
    // a `+` in the diff) on `metrics/b`; the small section of `metrics/a` comes first.
    let args = patch_args(
        &b,
        &json!([gen_op("metrics/a", "agent/2"),
            {"kind": "put_attested_computation", "concept_id": "metrics/b", "attested_computation": {
                "mode": "inline", "runtime": "bigquery", "parameters": [],
                "executor": {"resource": "metrics/a.md", "receipt": ["job"]},
                "attester": {"resource": "metrics/a.md"},
                "inline_computation": "SELECT 1;\n".repeat(100_000)}}]),
    );
    let p = preview(&args);
    assert_eq!(p["status"], "applicable");
    assert_eq!(p["diff_truncated"], true);
    let d = p["diff"].as_str().expect("d");
    assert!(
        d.starts_with("--- a/metrics/a.md\n"),
        "{}",
        &d[..d.len().min(200)]
    );
    assert!(!d.contains("metrics/b.md"), "no partial section");
    assert!(
        d.ends_with("+generated:\n+  by: agent/2\n ---\n \n Body A.\n"),
        "{d}"
    );
    assert_eq!(p["affected_paths"], json!(["metrics/a.md", "metrics/b.md"]));
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    assert_eq!(a["result_revision"], p["result_revision"]);
}

#[test]
fn sec_01_payloads_are_inert_and_preserved_byte_for_byte() {
    let probe = Probe::start();
    let (t, b) = ext();
    let marker = t.path().join("marker");
    let m = marker.display();
    let url = format!("http://{}/probe?x=1", probe.addr);
    let shell = format!("$(touch {m})");
    let tick = format!("`touch {m}`");
    // Body text with payloads, written before the patch.
    let body = format!("\nSee {url} and {shell} and {tick}.\n");
    let mut doc = std::fs::read_to_string(b.join("tables/orders.md")).expect("r");
    doc.push_str(&body);
    put(b.join("tables/orders.md"), &doc).expect("w");
    let inline = format!("SELECT '{shell}', '{tick}' -- {url}\n");
    let args = patch_args(
        &b,
        &json!([
            {"kind": "put_source", "concept_id": "metrics/revenue",
             "source": {"id": "probe", "resource": url, "title": shell}},
            {"kind": "put_attested_computation", "concept_id": "metrics/revenue", "attested_computation": {
                "mode": "inline", "runtime": "bigquery", "parameters": [],
                "executor": {"resource": url, "receipt": [tick]},
                "attester": {"resource": url},
                "inline_computation": inline, "inline_language": "sh"}}
        ]),
    );
    let p = preview(&args);
    assert_eq!(p["status"], "applicable", "{p}");
    let a = apply(&apply_args(&args, &p));
    assert_eq!(a["status"], "applied");
    for tool_name in ["read_concept", "list_concepts", "validate_bundle"] {
        let mut args = json!({"bundle_path": b});
        if tool_name == "read_concept" {
            args["concept_id"] = json!("metrics/revenue");
        }
        let (err, _) = tool(tool_name, &args);
        assert!(!err, "{tool_name}");
    }
    let t = read(&b, "metrics/revenue.md");
    assert!(
        t.contains(&format!("resource: \"{url}\"")) || t.contains(&format!("resource: {url}")),
        "{t}"
    );
    assert!(
        t.contains(&format!("```sh\n{inline}```\n")),
        "inline kept verbatim:\n{t}"
    );
    assert!(read(&b, "tables/orders.md").ends_with(&body));
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(probe.hits(), 0, "no request reached the probe");
    assert!(!marker.exists(), "no shell payload ran");
}

#[test]
fn out_02_no_receipt_or_proof_key_over_mcp_either() {
    let (_t, b) = ext();
    let mut mcp = Mcp::start();
    let args = patch_args(&b, &json!([gen_op("metrics/revenue", "agent/2")]));
    let p = mcp.call("preview_concept_patch", &args);
    no_receipt_keys(&p);
    let text: Value =
        serde_json::from_str(p["content"][0]["text"].as_str().expect("t")).expect("json text");
    assert_eq!(
        text, p["structuredContent"],
        "text mirrors structuredContent"
    );
    let a = mcp.call(
        "apply_concept_patch",
        &apply_args(&args, &p["structuredContent"]),
    );
    no_receipt_keys(&a);
    assert_eq!(a["structuredContent"]["status"], "applied");
    let r = mcp.call(
        "apply_concept_patch",
        &apply_args(&args, &p["structuredContent"]),
    );
    no_receipt_keys(&r);
    assert!(!r.to_string().contains("\"receipt\""));
    let (code, _, stderr) = mcp.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
}

fn rev(c: char) -> Value {
    json!(format!("sha256:{}", c.to_string().repeat(64)))
}

fn wire_diag(code: &str, severity: &str) -> Value {
    json!({"code": code, "severity": severity, "file": "", "field": "", "message": "m",
           "spec_ref": "", "policy_failure": false})
}

/// `validate_output`'s code for `value` as a success of `tool` (`"ok"` when it passes).
/// Runs the schema check and then the tool's own cross-field state check (the two together
/// are what the tool enforces on its output).
fn output_verdict(tool_name: &str, value: &Value) -> String {
    let state = if tool_name == "preview_concept_patch" {
        okf_mcp::tools::preview_concept_patch::check_state(value)
    } else {
        okf_mcp::tools::concept_patch::check_apply_state(value)
    };
    // The objects of these tests leave out `notices` (spec/surface.md §18.1), which the
    // dispatcher adds to every success: `[]` is added here when absent.
    let mut value = value.clone();
    // They also leave out the profile echo every patch output carries (§18.1 rule 1).
    if let Some(m) = value.as_object_mut() {
        m.entry("notices").or_insert(json!([]));
        m.entry("temporal_profile").or_insert(json!("date-3fcbb9f"));
        m.entry("temporal_profile_source")
            .or_insert(json!("explicit"));
    }
    let value = &value;
    okf_mcp::wire::schema::validate_output(tool_name, value, false)
        .and(state)
        .map_or_else(|e| e.code, |()| "ok".to_owned())
}

#[test]
fn out_03_output_state_matrix_single_mutations_fail_schema_validation() {
    let applicable = json!({"status": "applicable", "base_revision": rev('a'), "result_revision": rev('b'),
        "plan_digest": rev('c'), "diff": "--- a/x.md\n", "diff_truncated": false,
        "affected_paths": ["a.md", "b.md"], "diagnostics": [wire_diag("status_invalid", "WARN")],
        "unknown_preserved": true});
    let noop = json!({"status": "noop", "base_revision": rev('a'), "result_revision": rev('a'),
        "plan_digest": rev('c'), "diff": "", "diff_truncated": false, "affected_paths": [],
        "diagnostics": [], "unknown_preserved": true});
    let rejected = json!({"status": "rejected", "base_revision": rev('a'), "result_revision": null,
        "plan_digest": rev('c'), "diff": "", "diff_truncated": false, "affected_paths": [],
        "diagnostics": [wire_diag("missing_concept", "ERROR")], "unknown_preserved": false});
    let applied = json!({"status": "applied", "base_revision": rev('a'), "result_revision": rev('b'),
        "plan_digest": rev('c'), "changed_paths": ["a.md"], "diagnostics": []});
    let apply_rejected = json!({"status": "rejected", "base_revision": rev('a'), "result_revision": rev('a'),
        "plan_digest": rev('c'), "changed_paths": [], "diagnostics": [wire_diag("missing_concept", "ERROR")]});
    let p = "preview_concept_patch";
    let a = "apply_concept_patch";
    for (t, v) in [
        (p, &applicable),
        (p, &noop),
        (p, &rejected),
        (a, &applied),
        (a, &apply_rejected),
    ] {
        assert_eq!(output_verdict(t, v), "ok", "{v}");
    }
    let mutate = |base: &Value, key: &str, val: Value| {
        let mut m = base.clone();
        m[key] = val;
        m
    };
    let bad = [
        (p, mutate(&applicable, "result_revision", rev('a'))),
        (p, mutate(&noop, "affected_paths", json!(["a.md"]))),
        (
            p,
            mutate(&applicable, "affected_paths", json!(["b.md", "a.md"])),
        ),
        (
            p,
            mutate(&applicable, "affected_paths", json!(["a.md", "a.md"])),
        ),
        (a, mutate(&apply_rejected, "result_revision", Value::Null)),
        (
            a,
            mutate(&applied, "diagnostics", json!([wire_diag("x", "WARN")])),
        ),
        (
            a,
            mutate(&applied, "changed_paths", json!(["b.md", "a.md"])),
        ),
        (
            a,
            mutate(&applied, "diagnostics", json!([wire_diag("", "INFO")])),
        ),
    ];
    for (t, v) in &bad {
        assert_eq!(output_verdict(t, v), "schema_validation", "{v}");
    }
}

#[test]
fn out_04_pat_19_path_and_diagnostic_caps_are_resource_limits_never_truncation() {
    let paths =
        |n: usize| -> Value { json!((0..n).map(|i| format!("p/{i:06}.md")).collect::<Vec<_>>()) };
    let applicable = |n: usize| {
        json!({"status": "applicable", "base_revision": rev('a'), "result_revision": rev('b'),
            "plan_digest": rev('c'), "diff": "x", "diff_truncated": false,
            "affected_paths": paths(n), "diagnostics": [], "unknown_preserved": true})
    };
    assert_eq!(
        output_verdict("preview_concept_patch", &applicable(10_000)),
        "ok"
    );
    assert_eq!(
        output_verdict("preview_concept_patch", &applicable(10_001)),
        "resource_limit"
    );
    let applied = |n: usize, d: usize| {
        json!({"status": "applied", "base_revision": rev('a'), "result_revision": rev('b'),
            "plan_digest": rev('c'), "changed_paths": paths(n),
            "diagnostics": (0..d).map(|_| wire_diag("receipt_replayed", "INFO")).collect::<Vec<_>>()})
    };
    assert_eq!(
        output_verdict("apply_concept_patch", &applied(10_000, 0)),
        "ok"
    );
    assert_eq!(
        output_verdict("apply_concept_patch", &applied(10_001, 0)),
        "resource_limit"
    );
    let mut big = applicable(1);
    big["diff"] = json!("x".repeat(1_048_577));
    assert_eq!(
        output_verdict("preview_concept_patch", &big),
        "resource_limit"
    );
    assert_eq!(okf_mcp::plan::patch::planner::MAX_AFFECTED_PATHS, 10_000);
}

#[test]
fn ops_18_dif_01_crlf_lines_and_missing_final_newline_end_to_end() {
    let (_t, b) = copy_bundle(&fixture("patch-durable"));
    let crlf = "---\r\ntype: Metric\r\ntitle: C\r\nx-lf: kept\n---\r\n\r\nBody C.\r\n";
    put(b.join("metrics/c.md"), crlf).expect("write");
    put(b.join("metrics/d.md"), "---\ntype: Metric\n---\nBody D").expect("write");
    let args = patch_args(
        &b,
        &json!([
            gen_op("metrics/c", "agent/2"),
            gen_op("metrics/d", "agent/2")
        ]),
    );
    let p = preview(&args);
    let d = p["diff"].as_str().expect("diff");
    assert!(
        d.ends_with("+generated:\n+  by: agent/2\n ---\n Body D\n\\ No newline at end of file\n"),
        "{d}"
    );
    assert!(d.contains("+generated:\r\n+  by: agent/2\r\n"), "{d}");
    apply(&apply_args(&args, &p));
    let c = read(&b, "metrics/c.md");
    assert!(
        c.starts_with("---\r\ntype: Metric\r\ntitle: C\r\nx-lf: kept\n"),
        "{c:?}"
    );
    assert!(c.contains("generated:\r\n  by: agent/2\r\n"), "{c:?}");
    assert!(c.ends_with("---\r\n\r\nBody C.\r\n"), "{c:?}");
    assert!(read(&b, "metrics/d.md").ends_with("---\nBody D"));
}

#[test]
fn ops_17_flow_generated_is_re_rendered_on_one_line() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = read(&b, "tables/orders.md");
    let args = patch_args(&b, &json!([gen_op("tables/orders", "agent/9")]));
    let p = preview(&args);
    apply(&apply_args(&args, &p));
    let after = read(&b, "tables/orders.md");
    assert!(after.contains("\ngenerated: { by: agent/9 }\n"), "{after}");
    assert_eq!(
        before.replace(
            "generated: { by: reference_agent/gemini-2.5-pro, at: 2026-06-20T22:53:05Z }",
            "generated: { by: agent/9 }"
        ),
        after,
        "only the flow mapping changed"
    );
}

/// AUT-02 (spec/concept-patch.md §11.1): `set_lifecycle` keeps what it is not told to change.
#[test]
fn aut_02_set_lifecycle_keeps_an_absent_member_byte_for_byte() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let path = b.join("metrics/revenue.md");
    let original = std::fs::read_to_string(&path).expect("read");
    // Deprecate only: `stale_after` stays byte for byte.
    let args = patch_args(
        &b,
        &json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue",
                 "lifecycle": {"status": "deprecated"}}]),
    );
    let p = preview(&args);
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(apply(&apply_args(&args, &p))["status"], "applied");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        original.replace("status: stable\n", "status: deprecated\n"),
        "only the status token changed"
    );
    // `stale_after: null` alone removes it and keeps the status.
    let args = patch_args(
        &b,
        &json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue",
                 "lifecycle": {"stale_after": null}}]),
    );
    let p = preview(&args);
    assert_eq!(apply(&apply_args(&args, &p))["status"], "applied");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        original
            .replace("status: stable\n", "status: deprecated\n")
            .replace("stale_after: 2026-09-23\n", "")
    );
    // `{}` is a schema failure, and no hint suggests `null` to satisfy the schema.
    let before = snapshot(&b);
    let args = patch_args(
        &b,
        &json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue", "lifecycle": {}}]),
    );
    let e = tool_err("preview_concept_patch", &args);
    assert_eq!(e["code"], "schema_validation", "{e}");
    assert!(
        !e.to_string().contains("or null"),
        "no hint offers null as a filler: {e}"
    );
    assert!(
        e["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .any(|d| d["message"]
                .as_str()
                .is_some_and(|m| m.contains("an absent member keeps the current value"))),
        "{e}"
    );
    assert_eq!(snapshot(&b), before);
}

/// AUT-03 (spec/concept-patch.md §11.2): `set_metadata` sets `type`, `title`, `description`
/// and `tags` with only their bytes moving.
#[test]
fn aut_03_set_metadata_sets_the_descriptive_keys_and_keeps_every_other_byte() {
    let block = "---\ntype: Metric\ntitle: 'Old title'\ndescription: A description that\n  spans two lines\ntags:\n- a\n- b\nx-ext: keep # a comment\n---\n\nBody [x].\n";
    let flow = "---\ntype: Table\ntags: [a, b] # kept\n---\n\nBody.\n";
    let (_d, root) =
        crate::support::migration::bundle(&[("m/block.md", block), ("m/flow.md", flow)]);
    let set =
        |id: &str, m: Value| json!([{"kind": "set_metadata", "concept_id": id, "metadata": m}]);
    let run = |ops: Value| {
        let args = patch_args(&root, &ops);
        let p = preview(&args);
        assert_eq!(p["status"], "applicable", "{p}");
        assert_eq!(apply(&apply_args(&args, &p))["status"], "applied");
    };
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).expect("read");
    // Every member at once on the block-style concept.
    run(set(
        "m/block",
        json!({"type": "Dashboard", "title": "New title", "description": "One line now",
               "tags": ["b", "c", "needs: quoting"]}),
    ));
    assert_eq!(
        read("m/block.md"),
        "---\ntype: Dashboard\ntitle: 'New title'\ndescription: One line now\ntags:\n- b\n- c\n- \"needs: quoting\"\nx-ext: keep # a comment\n---\n\nBody [x].\n",
        "single quotes kept, the multi-line plain description replaced whole, the block list at its indentation"
    );
    // Flow tags stay flow; a new title is appended; the trailing comment stays.
    run(set("m/flow", json!({"tags": ["x"], "title": "T"})));
    assert_eq!(
        read("m/flow.md"),
        "---\ntype: Table\ntags: [x] # kept\ntitle: T\n---\n\nBody.\n"
    );
    // Equal values are a noop; removing a title and the tags; `type: null` is refused.
    let state = snapshot(&root);
    let args = patch_args(
        &root,
        &set("m/flow", json!({"tags": ["x"], "type": "Table"})),
    );
    assert_eq!(preview(&args)["status"], "noop");
    let e = tool_err(
        "preview_concept_patch",
        &patch_args(&root, &set("m/flow", json!({"type": null}))),
    );
    assert_eq!(e["code"], "invalid_request", "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("every concept needs a type")),
        "{e}"
    );
    let e = tool_err(
        "preview_concept_patch",
        &patch_args(&root, &set("m/flow", json!({"tags": ["x", "y", "x"]}))),
    );
    assert_eq!(e["code"], "invalid_request", "{e}");
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("tags[2]")),
        "{e}"
    );
    let e = tool_err(
        "preview_concept_patch",
        &patch_args(&root, &set("m/flow", json!({}))),
    );
    assert_eq!(e["code"], "schema_validation", "{e}");
    assert_eq!(snapshot(&root), state);
    assert!(!root
        .join(".okf/transactions")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
    run(set("m/flow", json!({"title": null, "tags": null})));
    assert_eq!(read("m/flow.md"), "---\ntype: Table\n---\n\nBody.\n");
}

/// AUT-03 presentations that fail closed: a block scalar to replace, a comment or anchor
/// inside the tags, tags that are not a list.
#[test]
fn aut_03_set_metadata_fails_closed_on_presentations_it_cannot_edit_losslessly() {
    let cases = [
        (
            "---\ntype: T\ndescription: |\n  literal\n---\n",
            json!({"description": "x"}),
            "invalid_presentation",
        ),
        (
            "---\ntype: T\ntags:\n  - a # why\n  - b\n---\n",
            json!({"tags": ["c"]}),
            "ambiguous_presentation",
        ),
        (
            "---\ntype: T\ntags: &t [a]\n---\n",
            json!({"tags": ["c"]}),
            "ambiguous_presentation",
        ),
        (
            "---\ntype: T\ntags: a\n---\n",
            json!({"tags": ["c"]}),
            "invalid_presentation",
        ),
    ];
    for (text, m, code) in cases {
        let (_d, root) = crate::support::migration::bundle(&[("m/c.md", text)]);
        let before = snapshot(&root);
        let args = patch_args(
            &root,
            &json!([{"kind": "set_metadata", "concept_id": "m/c", "metadata": m}]),
        );
        let p = preview(&args);
        assert_eq!(p["status"], "rejected", "{text:?}: {p}");
        assert!(codes(&p).contains(&code.to_owned()), "{text:?}: {p}");
        assert_eq!(snapshot(&root), before);
        assert!(!root.join(".okf").exists());
    }
}

/// AUT-05 (spec/surface.md §18.3 rules 1–2): the wrong revision or a placeholder digest are
/// diagnosed as what they are.
#[test]
fn aut_05_a_result_revision_in_the_base_slot_and_placeholder_digests_are_named() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "metrics/revenue",
                      "lifecycle": {"status": "deprecated"}}]);
    let args = patch_args(&b, &ops);
    let zeros = format!("sha256:{}", "0".repeat(64));
    let hint = |e: &Value| -> Option<String> {
        e["diagnostics"]
            .as_array()
            .and_then(|d| d.iter().find(|x| x["code"] == "revision_hint"))
            .map(|x| {
                assert_eq!(x["field"], "expected_revision", "{x}");
                x["message"].as_str().unwrap_or_default().to_owned()
            })
    };
    for with_store in [false, true] {
        let p = preview(&args);
        let before = snapshot(&b);
        // The preview's result_revision passed as expected_revision.
        let mut x = apply_args(&args, &p);
        x["expected_revision"] = p["result_revision"].clone();
        let e = tool_err("apply_concept_patch", &x);
        assert_eq!(e["code"], "revision_conflict", "{e}");
        let h = hint(&e).unwrap_or_else(|| panic!("store={with_store}: a hint: {e}"));
        assert!(h.contains("result_revision was passed"), "{h}");
        // The schema's all-zero example as the revision.
        x["expected_revision"] = json!(zeros);
        let e = tool_err("apply_concept_patch", &x);
        assert_eq!(e["code"], "revision_conflict", "{e}");
        assert!(hint(&e).is_some_and(|h| h.contains("all zeros")), "{e}");
        // A plain stale revision gets no hint.
        x["expected_revision"] = json!(format!("sha256:{}", "1".repeat(64)));
        let e = tool_err("apply_concept_patch", &x);
        assert_eq!(e["code"], "revision_conflict", "{e}");
        assert!(hint(&e).is_none(), "{e}");
        // An all-zero digest on the unchanged bundle: plan_mismatch that says so.
        let mut x = apply_args(&args, &p);
        x["expected_plan_digest"] = json!(zeros);
        let e = tool_err("apply_concept_patch", &x);
        assert_eq!(e["code"], "plan_mismatch", "{e}");
        assert!(
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("all zeros")),
            "{e}"
        );
        assert_eq!(snapshot(&b), before, "store={with_store}");
        if !with_store {
            // Create `.okf/` with another change, then preview again: the lock-first path.
            let other = patch_args(
                &b,
                &json!([{"kind": "set_lifecycle", "concept_id": "tables/orders",
                         "lifecycle": {"status": "stable"}}]),
            );
            let q = preview(&other);
            assert_eq!(apply(&apply_args(&other, &q))["status"], "applied");
        }
    }
}
