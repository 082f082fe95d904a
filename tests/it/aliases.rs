//! ALI-01…06: the curated alias table (spec/surface.md §9.4) and unknown keys (§9.3).
//!
//! Tools not registered yet (Phase 2/3) are exercised at library level through the same
//! steps the dispatcher runs (`alias::check`, then `schema::validate_input`), which are pure;
//! registered tools also through `okf-mcp call` with a bundle path that does not exist.

use crate::support::patch::{pure_apply_args, ZERO_DIGEST};
use crate::support::util::*;
use okf_mcp::envelope::ToolError;
use okf_mcp::wire::{alias, schema};
use serde_json::{json, Value};

const REV: &str = ZERO_DIGEST;

fn pipeline(tool: &str, args: &Value) -> Result<(), ToolError> {
    alias::check(tool, args)?;
    schema::validate_input(tool, args)
}

/// The operations of the apply arguments here: one `set_lifecycle`.
fn set_stable() -> Value {
    json!([{"kind": "set_lifecycle", "concept_id": "tables/orders",
            "lifecycle": {"status": "stable", "stale_after": null}}])
}

fn unknown(tool: &str, args: &Value) -> ToolError {
    let e = pipeline(tool, args).expect_err("alias hit");
    assert_eq!(e.code, "unknown_parameter", "{tool} {args}");
    assert!(!e.retryable);
    assert_eq!(
        e.wire_message(),
        "unsupported parameter; nothing was executed"
    );
    for d in &e.diagnostics {
        assert_eq!(d.code, "unknown_parameter");
        assert!(
            d.message.ends_with("Nothing was executed."),
            "{}",
            d.message
        );
        let w = d.to_wire();
        assert_eq!(w["severity"], "ERROR");
        assert_eq!(w["file"], "");
        assert_eq!(w["spec_ref"], "");
        assert_eq!(w["policy_failure"], false);
        assert_eq!(
            w["message"],
            d.message.as_str(),
            "message survives redaction"
        );
    }
    e
}

fn one_field(e: &ToolError) -> &str {
    assert_eq!(e.diagnostics.len(), 1, "{:?}", e.diagnostics);
    &e.diagnostics[0].field
}

fn absent_bundle() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("no-such-bundle");
    (t, p)
}

#[test]
fn ali_01_dry_run_on_apply_concept_patch_names_the_preview() {
    assert!(
        pipeline("apply_concept_patch", &pure_apply_args(set_stable())).is_ok(),
        "valid args"
    );
    let mut args = pure_apply_args(set_stable());
    args["dryRun"] = json!(true);
    let e = unknown("apply_concept_patch", &args);
    assert_eq!(one_field(&e), "preview_concept_patch");
    let m = &e.diagnostics[0].message;
    assert!(
        m.starts_with("dryRun is not accepted: apply_concept_patch has no mode switch."),
        "{m}"
    );
    assert!(
        m.contains("expected_revision and expected_plan_digest"),
        "{m}"
    );
}

#[test]
fn ali_02_every_mode_key_on_every_apply_tool_and_write_concept() {
    let tools = [
        ("apply_concept_patch", "preview_concept_patch"),
        ("apply_v02_migration", "preview_v02_migration"),
        ("apply_temporal_upgrade", "preview_temporal_upgrade"),
        ("write_concept", "preview_concept_patch"),
    ];
    for key in ["dryRun", "dry_run", "mode", "preview", "confirm"] {
        for (tool, preview) in tools {
            let e = unknown(tool, &json!({ key: true, "bundle_path": "/nonexistent" }));
            assert_eq!(one_field(&e), preview, "{tool} {key}");
            let m = &e.diagnostics[0].message;
            assert!(m.starts_with(&format!("{key} is not accepted: ")), "{m}");
            if tool == "write_concept" {
                assert!(m.contains("write_concept has no rehearsal mode"), "{m}");
                assert!(m.contains("read_concept"), "{m}");
            } else {
                assert!(m.contains(&format!("Use {preview} to rehearse")), "{m}");
            }
        }
        // Not in the table for the read tools: falls through to the schema, never echoed.
        let (t, missing) = absent_bundle();
        let out = call(
            "validate_bundle",
            &json!({ key: true, "bundle_path": missing }),
        );
        assert_eq!(out.structured()["code"], "schema_validation");
        assert!(!missing.exists());
        drop(t);
    }
}

#[test]
fn ali_03_camel_case_of_advertised_properties_at_any_depth() {
    let mut args = pure_apply_args(set_stable());
    args["expectedRevision"] = json!(REV);
    let e = unknown("apply_concept_patch", &args);
    assert_eq!(one_field(&e), "expected_revision");
    assert_eq!(
        e.diagnostics[0].message,
        "expectedRevision is not accepted: use expected_revision (snake_case). Nothing was executed."
    );
    let mut args = pure_apply_args(set_stable());
    args["operations"][0]["conceptId"] = json!("tables/orders");
    let e = unknown("apply_concept_patch", &args);
    assert_eq!(one_field(&e), "operations.0.concept_id");
    let mut args = pure_apply_args(set_stable());
    args["operations"][0]["lifecycle"]["staleAfter"] = Value::Null;
    assert_eq!(
        one_field(&unknown("apply_concept_patch", &args)),
        "operations.0.lifecycle.stale_after"
    );
    // Only the camelCase of a property advertised at that position: `conceptId` at the top
    // level of list_concepts is not in the table.
    assert!(alias::check("list_concepts", &json!({"conceptId": "x"})).is_ok());
    // Through the binary, before any I/O.
    let (t, missing) = absent_bundle();
    let out = call("list_concepts", &json!({"bundlePath": missing}));
    assert_eq!(out.code, 1);
    let s = out.structured();
    assert_eq!(s["code"], "unknown_parameter");
    assert_eq!(s["retryable"], false);
    assert_eq!(s["message"], "unsupported parameter; nothing was executed");
    assert_eq!(s["diagnostics"][0]["field"], "bundle_path");
    crate::support::util::assert_error_texts(out.result.as_ref().expect("result"));
    assert!(out
        .second_text()
        .contains("bundle_path: bundlePath is not accepted"));
    assert!(!missing.exists() && std::fs::read_dir(t.path()).expect("tmp").count() == 0);
    // MCP gives the identical result.
    let mut mcp = Mcp::start();
    let r = mcp.call("list_concepts", &json!({"bundlePath": missing}));
    assert_eq!(identity(&r), identity(out.result.as_ref().expect("json")));
    mcp.finish();
}

#[test]
fn ali_04_cross_tool_near_synonyms() {
    let mut args = pure_apply_args(set_stable());
    args["plan_digest"] = json!(REV);
    assert_eq!(
        one_field(&unknown("apply_concept_patch", &args)),
        "expected_plan_digest"
    );
    let mut args = pure_apply_args(set_stable());
    args["baseRevision"] = json!(REV);
    assert_eq!(
        one_field(&unknown("apply_concept_patch", &args)),
        "expected_revision"
    );
    let e = unknown("apply_temporal_upgrade", &json!({"planDigest": REV}));
    assert_eq!(one_field(&e), "plan_digest");
    let e = unknown("apply_temporal_upgrade", &json!({"expected_revision": REV}));
    assert_eq!(one_field(&e), "base_revision");
    let e = unknown(
        "apply_temporal_upgrade",
        &json!({"expectedPlanDigest": REV}),
    );
    assert_eq!(one_field(&e), "plan_digest");
    let e = unknown("apply_v02_migration", &json!({"expected_revision": REV}));
    assert_eq!(one_field(&e), "expected_source");
    assert!(e.diagnostics[0].message.contains("proof.base_revision"));
    let e = unknown("apply_v02_migration", &json!({"planDigest": REV}));
    assert_eq!(one_field(&e), "expected_plan_digest");
    // Several hits: sorted by field, then message.
    let e = unknown(
        "apply_concept_patch",
        &json!({"preview": 1, "plan_digest": 1, "bundlePath": 1, "base_revision": 1}),
    );
    let f: Vec<&str> = e.diagnostics.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(
        f,
        [
            "bundle_path",
            "expected_plan_digest",
            "expected_revision",
            "preview_concept_patch"
        ]
    );
}

#[test]
fn ali_05_arbitrary_unknown_keys_are_never_echoed() {
    let (t, missing) = absent_bundle();
    let args = json!({"bundle_path": missing, "sk_live_SECRET": "hunter2"});
    let out = call("list_concepts", &args);
    assert_eq!(out.code, 1);
    let s = out.structured();
    assert_eq!(s["code"], "schema_validation");
    let d = s["diagnostics"].as_array().expect("d");
    assert!(d.iter().any(|x| x["message"]
        .as_str()
        .is_some_and(|m| m.contains("remove unsupported fields"))));
    for needle in ["sk_live_SECRET", "hunter2"] {
        assert!(!out.stdout.contains(needle), "{needle} in {}", out.stdout);
        assert!(!out.stderr.contains(needle));
    }
    assert!(!missing.exists() && std::fs::read_dir(t.path()).expect("tmp").count() == 0);
    // Unregistered tools and nested positions behave the same.
    let mut a = pure_apply_args(set_stable());
    a["operations"][0]["sk_live_SECRET"] = json!("hunter2");
    let e = pipeline("apply_concept_patch", &a).expect_err("unknown");
    assert_eq!(e.code, "schema_validation");
    let text = e.to_wire().to_string();
    assert!(
        !text.contains("sk_live_SECRET") && !text.contains("hunter2"),
        "{text}"
    );
}

#[test]
fn ali_06_alias_keys_on_a_preview_tool_are_plain_unknown_keys() {
    let mut args = pure_apply_args(set_stable());
    let o = args.as_object_mut().expect("obj");
    o.remove("expected_revision");
    o.remove("expected_plan_digest");
    assert!(pipeline("preview_concept_patch", &args).is_ok());
    args["dryRun"] = json!(true);
    assert!(alias::check("preview_concept_patch", &args).is_ok());
    let e = pipeline("preview_concept_patch", &args).expect_err("schema");
    assert_eq!(e.code, "schema_validation");
    assert_eq!(e.diagnostics[0].field, "arguments");
    assert!(!e.to_wire().to_string().contains("dryRun"));
}
