//! Unit tests of the pure patch-input validation (spec/concept-patch.md §2).

use super::*;
use serde_json::json;

const REV: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const DIG: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

fn args(ops: Value) -> Value {
    json!({"bundle_path": "/nonexistent/b", "actor": "mcp:policy-test", "operations": ops})
}

fn with(mut a: Value, key: &str, v: Value) -> Value {
    a[key] = v;
    a
}

fn ok(a: &Value) -> PatchRequest {
    match parse_patch_request(a, false) {
        Ok(r) => r,
        Err(e) => panic!("unexpected error {}: {}", e.code, e.message),
    }
}

fn err(a: &Value) -> ToolError {
    parse_patch_request(a, false).expect_err("expected an error")
}

fn assert_err(a: &Value, code: &str, message: &str) {
    let e = err(a);
    assert_eq!((e.code.as_str(), e.message.as_str()), (code, message));
}

fn gen(by: &str, at: Option<&str>) -> Value {
    let mut g = json!({"by": by});
    if let Some(at) = at {
        g["at"] = json!(at);
    }
    json!({"kind": "set_generated", "concept_id": "a/b", "generated": g})
}

fn computation(extra: Value) -> Value {
    let mut c = json!({
        "mode": "inline",
        "runtime": "python3",
        "parameters": [{"name": "year", "type": "integer", "required": true}],
        "executor": {"resource": "https://ex.test/run", "receipt": ["r1", "r2"]},
        "attester": {"resource": "https://ex.test/att"},
        "inline_computation": "print(1)\n",
        "inline_language": "python"
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        if v.is_null() {
            c.as_object_mut().unwrap().remove(&k);
        } else {
            c[k] = v;
        }
    }
    json!({"kind": "put_attested_computation", "concept_id": "c", "attested_computation": c})
}

fn lifecycle(status: Value, stale_after: Value) -> Value {
    json!({"kind": "set_lifecycle", "concept_id": "c",
           "lifecycle": {"status": status, "stale_after": stale_after}})
}

fn window_op(from: &str, to: &str) -> Value {
    json!({"kind": "set_usage_window", "concept_id": "c", "usage_window": {"from": from, "to": to}})
}

#[test]
fn all_nine_kinds_parse_into_typed_operations() {
    let r = ok(&args(json!([
        gen("agent/1.0", Some("2026-01-02T03:04:05Z")),
        {"kind": "ensure_verification", "concept_id": "c",
         "verification": {"by": "human:reviewer", "at": "2026-01-02T03:04:05+07:00"}},
        {"kind": "remove_verification", "concept_id": "c",
         "verification": {"by": "human:reviewer", "at": "2026-01-02T03:04:05Z"}},
        {"kind": "put_source", "concept_id": "c",
         "source": {"id": "s1", "resource": "https://ex.test", "usage_count": "42",
                    "usage_window": {"from": "2026-01-01", "to": "2026-02-01"}}},
        {"kind": "remove_source", "concept_id": "c", "source_id": "s1"},
        {"kind": "set_usage_window", "concept_id": "c", "usage_window": null,
         "source": {"resource": "https://ex.test"}},
        lifecycle(json!("stable"), json!(null)),
        computation(json!({})),
        {"kind": "set_bundle_version", "version": "0.2"}
    ])));
    assert_eq!(r.actor, "mcp:policy-test");
    assert_eq!(r.profile, Profile::Date);
    assert_eq!(r.expected, None);
    let kinds: Vec<&str> = r.operations.iter().map(Operation::kind).collect();
    assert_eq!(
        kinds,
        [
            "set_generated",
            "ensure_verification",
            "remove_verification",
            "put_source",
            "remove_source",
            "set_usage_window",
            "set_lifecycle",
            "put_attested_computation",
            "set_bundle_version"
        ]
    );
    assert_eq!(
        r.operations[0],
        Operation::SetGenerated {
            concept_id: "a/b".into(),
            generated: Generated {
                by: "agent/1.0".into(),
                at: Some("2026-01-02T03:04:05Z".into())
            }
        }
    );
    let Operation::PutSource { source, .. } = &r.operations[3] else {
        panic!("put_source")
    };
    assert_eq!(source.usage_count_value(), Some(42));
    assert_eq!(source.title, None);
    assert_eq!(
        r.operations[4],
        Operation::RemoveSource {
            concept_id: "c".into(),
            selector: SourceSelector::Id("s1".into())
        }
    );
    let Operation::SetUsageWindow {
        selector, window, ..
    } = &r.operations[5]
    else {
        panic!("set_usage_window")
    };
    assert!(matches!(selector, Some(SourceSelector::Exact(s)) if s.resource == "https://ex.test"));
    assert_eq!(window, &None);
    assert_eq!(
        r.operations[6],
        Operation::SetLifecycle {
            concept_id: "c".into(),
            lifecycle: Lifecycle {
                status: Member::Set(LifecycleStatus::Stable),
                stale_after: Member::Remove
            }
        }
    );
    let Operation::PutAttestedComputation { computation: c, .. } = &r.operations[7] else {
        panic!("computation")
    };
    assert_eq!(c.mode(), "inline");
    assert_eq!(
        c.body,
        ComputationBody::Inline {
            code: "print(1)\n".into(),
            language: Some("python".into())
        }
    );
    assert_eq!(c.executor.receipt, ["r1", "r2"]);
    assert_eq!(r.operations[8].concept_id(), None);
    assert_eq!(
        r.operations[8],
        Operation::SetBundleVersion {
            version: BundleVersion::V02
        }
    );
}

#[test]
fn serialised_cap_is_checked_first_and_exact_16_mib_passes() {
    let base = args(json!([gen("agent/1.0", None)]));
    let overhead = serialised_len(&with(base.clone(), "bundle_path", json!("")));
    let at_cap = with(
        base.clone(),
        "bundle_path",
        json!("p".repeat(MAX_SERIALISED_ARGS - overhead)),
    );
    assert_eq!(serialised_len(&at_cap), MAX_SERIALISED_ARGS);
    assert_eq!(
        serialised_len(&at_cap),
        serde_json::to_vec(&at_cap).unwrap().len()
    );
    ok(&at_cap);
    // One byte more, with a bad operation and a bad actor too: the cap wins.
    let mut bad = args(json!([gen("reviewer", None)]));
    bad["actor"] = json!(" bad");
    let overhead = serialised_len(&with(bad.clone(), "bundle_path", json!("")));
    let over = with(
        bad,
        "bundle_path",
        json!("p".repeat(MAX_SERIALISED_ARGS - overhead + 1)),
    );
    assert_eq!(serialised_len(&over), MAX_SERIALISED_ARGS + 1);
    let e = err(&over);
    assert_eq!(e.code, codes::RESOURCE_LIMIT);
    assert_eq!(e.message, "patch input exceeds the MCP limit");
}

#[test]
fn operations_are_checked_in_order_before_the_actor() {
    let mut a = args(json!([gen("agent/1.0", None), gen("reviewer", None), {"kind": "x"}]));
    a["actor"] = json!(" spaced");
    assert_err(
        &a,
        codes::INVALID_REQUEST,
        "operations[1]: invalid change set: invalid document actor",
    );
}

#[test]
fn rules_run_in_numbered_order_within_an_operation() {
    // Rule 1 (concept id) before rule 2 (text cap) before rule 6 (selectors).
    let op = json!({"kind": "remove_source", "concept_id": "a:b",
                    "source_id": "x".repeat(5000), "source": {"resource": "r"}});
    assert_err(
        &args(json!([op])),
        codes::INVALID_REQUEST,
        "operations[0]: concept_id is not canonical",
    );
    let op = json!({"kind": "remove_source", "concept_id": "c",
                    "source_id": "x".repeat(5000), "source": {"resource": "r"}});
    assert_eq!(err(&args(json!([op]))).code, codes::RESOURCE_LIMIT);
    // Rule 3 (blank) before rule 7 (temporal).
    let op = json!({"kind": "put_source", "concept_id": "c",
                    "source": {"resource": "  ", "last_modified": "bad"}});
    assert_err(
        &args(json!([op])),
        codes::INVALID_REQUEST,
        "operations[0]: text field is blank",
    );
    // Rule 5 (actor) before rule 7 (temporal).
    assert_err(
        &args(json!([gen("reviewer", Some("bad"))])),
        codes::INVALID_REQUEST,
        "operations[0]: invalid change set: invalid document actor",
    );
}

#[test]
fn concept_id_rule_1() {
    let op = |id: &str| {
        json!({"kind": "set_lifecycle", "concept_id": id,
                               "lifecycle": {"status": null, "stale_after": null}})
    };
    assert_err(
        &args(json!([op("x/index")])),
        codes::INVALID_REQUEST,
        "operations[0]: concept_id contains reserved segment",
    );
    assert_err(
        &args(json!([op("a/../b")])),
        codes::INVALID_REQUEST,
        "operations[0]: concept_id is not canonical",
    );
    assert_eq!(
        err(&args(json!([op(&"a".repeat(4097))]))).code,
        codes::RESOURCE_LIMIT
    );
    ok(&args(json!([op("東京/данные/100%+ready=да")])));
}

#[test]
fn text_rules_2_and_3() {
    let src = |s: Value| json!({"kind": "put_source", "concept_id": "c", "source": s});
    ok(&args(json!([src(json!({"resource": "r".repeat(4096)}))])));
    assert_err(
        &args(json!([src(json!({"resource": "r", "title": "a\u{7f}b"}))])),
        codes::INVALID_REQUEST,
        "operations[0]: text field contains a control character",
    );
    assert_err(
        &args(json!([src(json!({"resource": "r", "author": "\t"}))])),
        codes::INVALID_REQUEST,
        "operations[0]: text field contains a control character",
    );
    assert_err(
        &args(json!([src(json!({"resource": "r", "id": " "}))])),
        codes::INVALID_REQUEST,
        "operations[0]: text field is blank",
    );
    // inline_computation may hold newlines and tabs, never NUL; inline_language may not be
    // checked for blankness but is checked for control characters.
    ok(&args(json!([computation(
        json!({"inline_computation": "a\n\tb\r\n"})
    )])));
    assert_err(
        &args(json!([computation(
            json!({"inline_computation": "a\u{0}"})
        )])),
        codes::INVALID_REQUEST,
        "operations[0]: inline_computation contains a NUL character",
    );
    assert_err(
        &args(json!([computation(json!({"inline_language": "py\n"}))])),
        codes::INVALID_REQUEST,
        "operations[0]: text field contains a control character",
    );
    // File mode: a blank computation_path is rejected.
    let file = json!({"mode": "file", "computation_path": " ", "inline_computation": null,
                      "inline_language": null});
    assert_err(
        &args(json!([computation(file)])),
        codes::INVALID_REQUEST,
        "operations[0]: text field is blank",
    );
}

#[test]
fn usage_count_is_a_canonical_u64_string() {
    let src = |n: &str| {
        json!({"kind": "put_source", "concept_id": "c",
               "source": {"resource": "r", "usage_count": n}})
    };
    for good in ["0", "7", "18446744073709551615"] {
        ok(&args(json!([src(good)])));
    }
    for bad in [
        "007",
        "-1",
        "1.0",
        "",
        "18446744073709551616",
        "99999999999999999999",
    ] {
        assert_err(
            &args(json!([src(bad)])),
            codes::INVALID_REQUEST,
            "operations[0]: usage_count is not a canonical non-negative integer",
        );
    }
    assert_eq!(
        err(&args(json!([src("123456789012345678901")]))).code,
        codes::RESOURCE_LIMIT
    );
}

#[test]
fn pat_14_runtime_caps_are_resource_limit() {
    // Request actor of 257 bytes.
    let a = with(
        args(json!([gen("agent/1.0", None)])),
        "actor",
        json!("a".repeat(257)),
    );
    assert_err(
        &a,
        codes::RESOURCE_LIMIT,
        "actor exceeds the MCP transport limit",
    );
    ok(&with(
        args(json!([gen("agent/1.0", None)])),
        "actor",
        json!("a".repeat(256)),
    ));
    // 257 operations; 256 pass.
    let ops: Vec<Value> = (0..257).map(|_| gen("agent/1.0", None)).collect();
    assert_err(
        &args(json!(ops)),
        codes::RESOURCE_LIMIT,
        "patch has more than 256 operations",
    );
    ok(&args(json!(ops[..256])));
    // 4097-byte resource.
    let op =
        json!({"kind": "put_source", "concept_id": "c", "source": {"resource": "r".repeat(4097)}});
    assert_err(
        &args(json!([op])),
        codes::RESOURCE_LIMIT,
        "operations[0]: text field exceeds 4096 bytes",
    );
    // 257 parameters; 256 pass.
    let params = |n: usize| -> Value {
        (0..n)
            .map(|i| json!({"name": format!("p{i}"), "type": "t", "required": false}))
            .collect()
    };
    assert_err(
        &args(json!([computation(json!({"parameters": params(257)}))])),
        codes::RESOURCE_LIMIT,
        "operations[0]: more than 256 computation parameters",
    );
    ok(&args(json!([computation(
        json!({"parameters": params(256)})
    )])));
    // 257 receipt entries.
    let receipt: Vec<String> = (0..257).map(|i| format!("r{i}")).collect();
    let e = err(&args(json!([computation(
        json!({"executor": {"resource": "x", "receipt": receipt}})
    )])));
    assert_eq!(e.code, codes::RESOURCE_LIMIT);
    // inline_computation of 1 MiB + 1; exactly 1 MiB passes.
    assert_err(
        &args(json!([computation(
            json!({"inline_computation": "x".repeat(MAX_INLINE_COMPUTATION + 1)})
        )])),
        codes::RESOURCE_LIMIT,
        "operations[0]: inline_computation exceeds 1 MiB",
    );
    ok(&args(json!([computation(
        json!({"inline_computation": "x".repeat(MAX_INLINE_COMPUTATION)})
    )])));
    // Document actor of 257 bytes.
    let by = format!("a/{}", "b".repeat(255));
    assert_err(
        &args(json!([gen(&by, None)])),
        codes::RESOURCE_LIMIT,
        "operations[0]: document actor exceeds the MCP transport limit",
    );
    // Every resource_limit carries the generic recovery step.
    assert_eq!(err(&args(json!([gen(&by, None)]))).diagnostics.len(), 1);
}

#[test]
fn pat_14_wrong_kinds_and_extra_payloads_fail_closed_at_runtime() {
    let shape = "operations[0]: operation does not match its schema";
    for op in [
        json!({"kind": "set_bundle_version", "version": "0.2", "concept_id": "c"}),
        json!({"kind": "put_source", "concept_id": "c", "source": {"resource": "r"}, "source_id": "x"}),
        json!({"kind": "delete_everything", "concept_id": "c"}),
        json!({"kind": "set_generated", "concept_id": "c", "generated": {"by": "a/b", "at": null}}),
        json!({"kind": "set_generated", "concept_id": "c", "generated": {"by": "a/b", "x": 1}}),
        json!({"kind": "set_bundle_version", "version": "0.3"}),
        json!({"kind": "set_usage_window", "concept_id": "c"}),
        json!({"kind": "set_lifecycle", "concept_id": "c", "lifecycle": {"status": "archived", "stale_after": null}}),
        computation(json!({"mode": "file", "computation_path": "x.py"})),
        computation(json!({"computation_path": "x.py"})),
        computation(json!({"inline_computation": null})),
        computation(json!({"parameters": [{"name": "a", "type": "t", "required": "yes"}]})),
    ] {
        assert_err(&args(json!([op])), codes::INVALID_REQUEST, shape);
    }
    assert_err(
        &args(json!([])),
        codes::INVALID_REQUEST,
        "operations must contain at least one operation",
    );
}

#[test]
fn pat_13_missing_or_null_required_members_fail_closed_at_runtime() {
    let shape = "operations[0]: operation does not match its schema";
    for op in [
        computation(json!({"parameters": null})),
        computation(json!({"parameters": [{"name": "a", "type": "t"}]})),
        computation(json!({"parameters": [{"name": "a", "type": "t", "required": null}]})),
        // An empty lifecycle: at least one member (spec/concept-patch.md §11.1).
        json!({"kind": "set_lifecycle", "concept_id": "c", "lifecycle": {}}),
    ] {
        assert_err(&args(json!([op])), codes::INVALID_REQUEST, shape);
    }
    // An explicit null status with a value for stale_after is valid (PAT-10).
    ok(&args(json!([lifecycle(json!(null), json!("2026-01-01"))])));
    // One member alone is valid since §11.1 (Phase 1 required both): absent keeps.
    let r = ok(&args(json!([
        {"kind": "set_lifecycle", "concept_id": "c", "lifecycle": {"stale_after": null}},
        {"kind": "set_lifecycle", "concept_id": "c", "lifecycle": {"status": "deprecated"}},
    ])));
    assert_eq!(
        r.operations,
        [
            Operation::SetLifecycle {
                concept_id: "c".into(),
                lifecycle: Lifecycle {
                    status: Member::Keep,
                    stale_after: Member::Remove
                }
            },
            Operation::SetLifecycle {
                concept_id: "c".into(),
                lifecycle: Lifecycle {
                    status: Member::Set(LifecycleStatus::Deprecated),
                    stale_after: Member::Keep
                }
            }
        ]
    );
    // Empty parameters are valid; the key must be present.
    ok(&args(json!([computation(json!({"parameters": []}))])));
}

#[test]
fn rule_4_unique_parameters_and_receipts() {
    let dup = json!([{"name": "a", "type": "t", "required": true},
                     {"name": "a", "type": "u", "required": false}]);
    assert_err(
        &args(json!([computation(json!({"parameters": dup}))])),
        codes::INVALID_REQUEST,
        "operations[0]: computation parameter names are not unique",
    );
    assert_err(
        &args(json!([computation(
            json!({"executor": {"resource": "x", "receipt": []}})
        )])),
        codes::INVALID_REQUEST,
        "operations[0]: executor receipt must not be empty",
    );
    assert_err(
        &args(json!([computation(
            json!({"executor": {"resource": "x", "receipt": ["a", "a"]}})
        )])),
        codes::INVALID_REQUEST,
        "operations[0]: executor receipt entries are not unique",
    );
}

#[test]
fn pat_15_document_and_request_actors() {
    let actor_err = "operations[0]: invalid change set: invalid document actor";
    assert_err(
        &args(json!([gen("reviewer", None)])),
        codes::INVALID_REQUEST,
        actor_err,
    );
    assert_err(
        &args(json!([gen("human:", None)])),
        codes::INVALID_REQUEST,
        actor_err,
    );
    let ver = |by: &str| {
        json!({"kind": "ensure_verification", "concept_id": "c",
               "verification": {"by": by, "at": "2026-01-01T00:00:00Z"}})
    };
    assert_err(
        &args(json!([ver("reviewer")])),
        codes::INVALID_REQUEST,
        actor_err,
    );
    ok(&args(json!([gen("agent/1.0", None)])));
    ok(&args(json!([ver("human:reviewer")])));
    let r = ok(&args(json!([gen("agent/1.0", None)])));
    assert_eq!(r.actor, "mcp:policy-test");
    for bad in [" mcp:policy-test", "mcp\u{1}x", "x\u{7f}", "trailing "] {
        let a = with(args(json!([gen("agent/1.0", None)])), "actor", json!(bad));
        assert_err(
            &a,
            codes::INVALID_REQUEST,
            "actor is not a valid transport identity",
        );
    }
}

#[test]
fn pat_16_remove_source_selectors() {
    let rs = |extra: Value| {
        let mut o = json!({"kind": "remove_source", "concept_id": "c"});
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            o[k] = v;
        }
        o
    };
    assert_err(
        &args(json!([rs(
            json!({"source_id": "s", "source": {"resource": "r"}})
        )])),
        codes::INVALID_REQUEST,
        "operations[0]: remove_source takes exactly one source selector",
    );
    assert_err(
        &args(json!([rs(json!({}))])),
        codes::INVALID_REQUEST,
        "operations[0]: remove_source needs a source selector",
    );
    assert_err(
        &args(json!([rs(json!({"source": {"resource": "r", "id": "s"}}))])),
        codes::INVALID_REQUEST,
        "operations[0]: exact source selector requires an anonymous source",
    );
    assert_eq!(
        err(&args(json!([rs(json!({"source_id": ""}))]))).code,
        codes::INVALID_REQUEST
    );
    ok(&args(json!([rs(json!({"source": {"resource": "r"}}))])));
    // set_usage_window: both selectors, or a source with id.
    let w = json!({"from": "2026-01-01", "to": "2026-01-02"});
    assert_err(
        &args(
            json!([{"kind": "set_usage_window", "concept_id": "c", "usage_window": w,
                       "source_id": "s", "source": {"resource": "r"}}]),
        ),
        codes::INVALID_REQUEST,
        "operations[0]: set_usage_window takes at most one source selector",
    );
    assert_err(
        &args(
            json!([{"kind": "set_usage_window", "concept_id": "c", "usage_window": w,
                       "source": {"resource": "r", "id": "s"}}]),
        ),
        codes::INVALID_REQUEST,
        "operations[0]: exact source selector requires an anonymous source",
    );
}

const VALID_DT: &[&str] = &[
    "2026-09-26T12:34:56Z",
    "2026-09-26T12:34:56.1200+07:00",
    "2026-09-26T12:34:56+00:00",
    "2026-09-26T12:34:56-00:30",
];
const INVALID_DT: &[&str] = &[
    "2026-09-26T12:34:56",
    "2026-09-26T12:34:56-00:00",
    "2026-09-26T12:34:56+24:00",
    "2026-09-26T12:34:60Z",
    "2026-12-31T23:59:60Z",
    "2026-02-30T12:34:56Z",
    "2026-09-26T12:34:56,5Z",
    "2026-09-26t12:34:56Z",
    "2026-09-26T12:34:56z",
];

/// The three profile-dependent families, each carrying value `v`.
fn temporal_ops(v: &str) -> Vec<Value> {
    vec![
        lifecycle(json!(null), json!(v)),
        window_op(v, v),
        json!({"kind": "put_source", "concept_id": "c",
               "source": {"resource": "r", "last_modified": v}}),
        json!({"kind": "put_source", "concept_id": "c",
               "source": {"resource": "r", "usage_window": {"from": v, "to": v}}}),
    ]
}

fn parse_with_profile(op: &Value, profile: &str) -> Result<PatchRequest, ToolError> {
    parse_patch_request(
        &with(args(json!([op])), "temporal_profile", json!(profile)),
        false,
    )
}

#[test]
fn pat_11_every_vector_under_both_profiles() {
    // `""` and `auto` accept either grammar before I/O (spec/concept-patch.md §2.4 rule 4).
    for profile in ["", "auto", DATE_ID, INSTANT_ID] {
        let (date_ok, instant_ok) = (profile != INSTANT_ID, profile != DATE_ID);
        // Profile-dependent families.
        for op in temporal_ops("2026-12-31") {
            assert_eq!(
                parse_with_profile(&op, profile).is_ok(),
                date_ok,
                "{profile} {op}"
            );
        }
        for v in VALID_DT {
            for op in temporal_ops(v) {
                assert_eq!(
                    parse_with_profile(&op, profile).is_ok(),
                    instant_ok,
                    "{profile} {op}"
                );
            }
        }
        for v in INVALID_DT
            .iter()
            .chain(&["2026-02-30", "2026-1-01", "2026-12-31 "])
        {
            for op in temporal_ops(v) {
                let e = parse_with_profile(&op, profile).expect_err(v);
                assert_eq!(e.code, codes::INVALID_REQUEST, "{profile} {v}");
                assert!(!e.message.contains(v), "value echoed: {}", e.message);
            }
        }
        // generated.at and verification.at are offset datetimes under both profiles.
        for v in VALID_DT {
            assert!(parse_with_profile(&gen("agent/1.0", Some(v)), profile).is_ok());
        }
        for v in INVALID_DT.iter().chain(&["2026-12-31"]) {
            let e = parse_with_profile(&gen("agent/1.0", Some(v)), profile).expect_err(v);
            assert_eq!(
                e.message,
                "operations[0]: generated.at is not an offset datetime"
            );
            let ver = json!({"kind": "remove_verification", "concept_id": "c",
                             "verification": {"by": "human:x", "at": v}});
            let e = parse_with_profile(&ver, profile).expect_err(v);
            assert_eq!(
                e.message,
                "operations[0]: verification.at is not an offset datetime"
            );
        }
    }
}

const DATE_ID: &str = crate::okf::temporal::DATE_PROFILE;
const INSTANT_ID: &str = crate::okf::temporal::INSTANT_PROFILE;

#[test]
fn unknown_profile_is_invalid_request() {
    let a = with(
        args(json!([gen("agent/1.0", None)])),
        "temporal_profile",
        json!("iso"),
    );
    assert_err(&a, codes::INVALID_REQUEST, "unknown OKF temporal profile");
    let r = ok(&with(
        args(json!([gen("agent/1.0", None)])),
        "temporal_profile",
        json!(INSTANT_ID),
    ));
    assert_eq!(r.profile, Profile::Instant);
}

#[test]
fn pat_12_usage_window_order() {
    let msg = "operations[0]: usage window starts after it ends";
    let date = |a: Value| with(a, "temporal_profile", json!(DATE_ID));
    assert_err(
        &date(args(json!([window_op("2026-01-02", "2026-01-01")]))),
        codes::INVALID_REQUEST,
        msg,
    );
    ok(&date(args(json!([window_op("2026-01-01", "2026-01-01")]))));
    ok(&date(args(json!([window_op("2026-01-01", "2026-01-02")]))));
    // Per-source windows are ordered too.
    let src = json!({"kind": "put_source", "concept_id": "c",
                     "source": {"resource": "r", "usage_window": {"from": "2026-03-01", "to": "2026-02-01"}}});
    assert_err(
        &date(args(json!([src.clone()]))),
        codes::INVALID_REQUEST,
        msg,
    );
    // Under auto the order waits for the resolved profile (§2.4 rule 4).
    let r = ok(&args(json!([src])));
    let e = r.resolved(Kinds::default(), false).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        (codes::INVALID_REQUEST, msg)
    );
    // Instant profile compares instants: 18:00+07:00 (11:00Z) <= 12:00Z although the strings
    // sort the other way.
    let inst = |op: Value| parse_with_profile(&op, INSTANT_ID);
    assert!(inst(window_op(
        "2026-09-23T18:00:00+07:00",
        "2026-09-23T12:00:00Z"
    ))
    .is_ok());
    let e = inst(window_op(
        "2026-09-23T12:00:00Z",
        "2026-09-23T18:00:00+07:00",
    ))
    .unwrap_err();
    assert_eq!(e.message, msg);
    // Equal instants with different spellings are allowed.
    assert!(inst(window_op(
        "2026-09-23T19:00:00+07:00",
        "2026-09-23T12:00:00.000Z"
    ))
    .is_ok());
}

#[test]
fn temporal_values_are_kept_verbatim() {
    let v = "2026-09-23T18:00:00.1200+07:00";
    let r = parse_with_profile(&lifecycle(json!(null), json!(v)), INSTANT_ID).unwrap();
    assert_eq!(
        r.operations[0],
        Operation::SetLifecycle {
            concept_id: "c".into(),
            lifecycle: Lifecycle {
                status: Member::Remove,
                stale_after: Member::Set(v.into())
            }
        }
    );
}

#[test]
fn messages_never_echo_values() {
    let secret = "SECRET-VALUE-123";
    let cases = [
        gen(secret, None),
        gen("agent/1.0", Some(secret)),
        json!({"kind": "put_source", "concept_id": "c",
               "source": {"resource": format!("{secret}\u{1}")}}),
        json!({"kind": "put_source", "concept_id": secret, "source": {"resource": "r", "last_modified": secret}}),
        json!({"kind": "set_lifecycle", "concept_id": format!("{secret}:x"),
               "lifecycle": {"status": null, "stale_after": null}}),
    ];
    for op in cases {
        let e = err(&args(json!([op])));
        assert!(!e.message.contains("SECRET"), "{}", e.message);
    }
    let e = err(&with(
        args(json!([gen("agent/1.0", None)])),
        "actor",
        json!(format!(" {secret}")),
    ));
    assert!(!e.message.contains("SECRET"));
}

#[test]
fn apply_checks_expected_revision_then_plan_digest() {
    let a = args(json!([gen("agent/1.0", None)]));
    let apply = |rev: Value, dig: Value| {
        let mut x = a.clone();
        x["expected_revision"] = rev;
        x["expected_plan_digest"] = dig;
        parse_patch_request(&x, true)
    };
    let r = apply(json!(REV), json!(DIG)).unwrap();
    assert_eq!(
        r.expected,
        Some(Authorisation {
            revision: REV.into(),
            plan_digest: DIG.into()
        })
    );
    let upper = format!("sha256:{}", "A".repeat(64));
    let e = apply(json!(upper), json!("nope")).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        (
            codes::INVALID_REVISION,
            "expected_revision is not canonical"
        )
    );
    let e = apply(json!(REV), json!(DIG.replace('2', "A"))).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        (
            codes::PLAN_MISMATCH,
            "expected_plan_digest is not canonical"
        )
    );
    assert_eq!(e.diagnostics.len(), 1);
    assert_eq!(e.diagnostics[0].code, codes::RECOVERY_STEP);
    assert_eq!(e.diagnostics[0].field, "expected_plan_digest");
    // Operation faults come before the expectations.
    let mut bad = a.clone();
    bad["operations"] = json!([gen("reviewer", None)]);
    bad["expected_revision"] = json!("x");
    assert_eq!(
        parse_patch_request(&bad, true).unwrap_err().code,
        codes::INVALID_REQUEST
    );
    // Preview never reads the expectations.
    assert_eq!(parse_patch_request(&a, false).unwrap().expected, None);
    assert_eq!(
        parse_patch_request(&a, true).unwrap_err().code,
        codes::INVALID_REVISION
    );
}

/// AUT-01 (spec/concept-patch.md §2.4 rule 4, spec/temporal.md §11): `auto` before and after
/// the capture.
#[test]
fn aut_01_auto_checks_one_kind_before_io_and_the_resolved_profile_after() {
    use crate::okf::temporal::ProfileSource;
    let date = Kinds {
        date: true,
        instant: false,
    };
    let instant = Kinds {
        date: false,
        instant: true,
    };
    // Both kinds in one request: refused before I/O, whatever the operations.
    let mixed = args(json!([
        lifecycle(json!(null), json!("2026-01-02")),
        window_op("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"),
    ]));
    assert_err(
        &mixed,
        codes::INVALID_REQUEST,
        "the request mixes calendar dates and instants",
    );
    // An explicit profile reports the value that does not fit it instead.
    assert!(err(&with(mixed, "temporal_profile", json!(DATE_ID)))
        .message
        .starts_with("operations[1]: "));
    // Neither grammar under auto: named, not echoed.
    let e = err(&args(json!([lifecycle(json!(null), json!("soon"))])));
    assert_eq!(
        e.message,
        "operations[0]: lifecycle.stale_after is neither a calendar date nor an offset datetime"
    );
    // The request's own kind decides on a bundle with neither kind; the bundle decides
    // otherwise, and a value that does not fit it is named with the profile.
    let r = ok(&args(json!([lifecycle(
        json!(null),
        json!("2026-01-02T00:00:00Z")
    )])));
    assert_eq!(r.request_kinds, instant);
    assert_eq!(r.resolution, None);
    let q = r.resolved(Kinds::default(), false).unwrap();
    assert_eq!(q.profile, Profile::Instant);
    assert_eq!(q.resolution.unwrap().source, ProfileSource::Detected);
    let e = r.resolved(date, false).unwrap_err();
    assert_eq!(
        e.message,
        "operations[0].lifecycle.stale_after does not match the bundle's temporal profile date-3fcbb9f"
    );
    // A replay-only apply is never stopped by that check (spec/temporal.md §11 rule 3).
    assert_eq!(r.resolved(date, true).unwrap().profile, Profile::Date);
    let src = json!({"kind": "put_source", "concept_id": "c",
                     "source": {"resource": "r", "last_modified": "2026-01-02"}});
    let e = ok(&args(json!([gen("agent/1.0", None), src])))
        .resolved(instant, false)
        .unwrap_err();
    assert_eq!(
        e.message,
        "operations[1].source.last_modified does not match the bundle's temporal profile instant-0b87c52"
    );
    // No temporal values at all: the bundle decides, else the default.
    let r = ok(&args(json!([gen("agent/1.0", None)])));
    assert_eq!(
        r.resolved(instant, false).unwrap().profile,
        Profile::Instant
    );
    let d = r
        .resolved(Kinds::default(), false)
        .unwrap()
        .resolution
        .unwrap();
    assert_eq!(
        (d.profile, d.source),
        (Profile::Date, ProfileSource::Default)
    );
    let m = r
        .resolved(date.union(instant), false)
        .unwrap()
        .resolution
        .unwrap();
    assert_eq!(
        (m.profile, m.source, m.mixed),
        (Profile::Date, ProfileSource::Detected, true)
    );
    // An explicit profile stands, with source explicit.
    let x = ok(&with(
        args(json!([gen("agent/1.0", None)])),
        "temporal_profile",
        json!(INSTANT_ID),
    ));
    let xr = x.resolved(date, false).unwrap().resolution.unwrap();
    assert_eq!(
        (xr.profile, xr.source),
        (Profile::Instant, ProfileSource::Explicit)
    );
}
