//! The `auto` temporal profile (spec/temporal.md §11, spec/concept-patch.md §2.4 rule 4,
//! spec/surface.md §18.1 rule 1): AUT-01 and the Phase-5 PRF-04, over the real binary.

use crate::support::read::{err, ok, tmp_bundle, write_file};
use crate::support::util::*;
use serde_json::{json, Value};
use std::path::Path;

const DATE: &str = "date-3fcbb9f";
const INSTANT: &str = "instant-0b87c52";

fn entry<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["concepts"]
        .as_array()
        .expect("concepts")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {list}"))
}

fn profile_of(v: &Value) -> (String, String) {
    (
        v["temporal_profile"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        v["temporal_profile_source"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

fn pair(p: &str, s: &str) -> (String, String) {
    (p.to_owned(), s.to_owned())
}

fn patch(b: &Path, ops: &Value) -> Value {
    json!({"bundle_path": b, "actor": "agent-aut-01", "operations": ops})
}

/// Preview then apply `args`; returns (preview, apply) structured results.
fn preview_apply(args: &Value) -> (Value, Value) {
    let p = ok("preview_concept_patch", args).structured().clone();
    assert_eq!(p["status"], "applicable", "{p}");
    let mut a = args.clone();
    a["expected_revision"] = p["base_revision"].clone();
    a["expected_plan_digest"] = p["plan_digest"].clone();
    let r = ok("apply_concept_patch", &a).structured().clone();
    assert_eq!(r["status"], "applied", "{r}");
    (p, r)
}

/// AUT-01: absent profile on an instants-only bundle → instant, detected, on every read tool;
/// a later `as_of` marks the concept stale; a dates-only bundle → date, detected; an explicit
/// id → explicit; `""` and `"auto"` equal absent.
#[test]
fn aut_01_read_tools_resolve_auto_from_the_bundle_and_echo_the_source() {
    let (_t, b) = copy_bundle(&fixture("demo-instant"));
    let l = ok(
        "list_concepts",
        &json!({"bundle_path": b, "as_of": "2026-07-01T00:00:00Z"}),
    );
    let s = l.structured();
    assert_eq!(profile_of(s), pair(INSTANT, "detected"));
    assert_eq!(entry(s, "tables/orders")["stale"], true, "{s}");
    assert_eq!(
        entry(s, "tables/orders")["stale_after"],
        "2026-06-30T18:00:00+07:00"
    );
    // No stale_after and as_of given → false (spec/temporal.md §11 rule 6).
    assert_eq!(entry(s, "metrics/revenue")["stale"], false);
    for profile in [json!(""), json!("auto")] {
        let l = ok(
            "list_concepts",
            &json!({"bundle_path": b, "temporal_profile": profile}),
        );
        assert_eq!(profile_of(l.structured()), pair(INSTANT, "detected"));
    }
    let r = ok(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "metrics/revenue"}),
    );
    assert_eq!(profile_of(r.structured()), pair(INSTANT, "detected"));
    assert_eq!(
        r.structured()["projection"]["sources"][0]["last_modified"],
        "2026-03-05T09:30:00.120+00:00"
    );
    let v = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "strict": true}),
    );
    assert_eq!(profile_of(v.structured()), pair(INSTANT, "detected"));
    assert_eq!(v.structured()["conformance"]["conformant"], true);
    // A date as_of on an instant bundle: the message names the resolved profile.
    let e = err(
        "list_concepts",
        &json!({"bundle_path": b, "as_of": "2026-07-01"}),
    );
    assert_eq!(e.structured()["code"], "invalid_request");
    let m = e.structured()["message"].as_str().expect("message");
    assert!(
        m.contains("does not match the bundle's temporal profile instant-0b87c52"),
        "{m}"
    );
    assert!(!m.contains("2026-07-01"), "value echoed: {m}");
    // Explicit wins and says so.
    let x = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": DATE}),
    );
    assert_eq!(profile_of(x.structured()), pair(DATE, "explicit"));

    let (_t2, d) = copy_bundle(&fixture("demo-date"));
    let l = ok(
        "list_concepts",
        &json!({"bundle_path": d, "as_of": "2026-07-01"}),
    );
    assert_eq!(profile_of(l.structured()), pair(DATE, "detected"));
    assert_eq!(entry(l.structured(), "tables/orders")["stale"], true);
}

/// AUT-01: a bundle with no temporal values → date by default; a patch whose `stale_after`
/// is an instant → instant, detected (from the request); a request mixing both kinds →
/// `invalid_request` before any I/O.
#[test]
fn aut_01_the_request_decides_on_a_bundle_without_temporal_values_and_may_not_mix_kinds() {
    let (_t, b) = tmp_bundle(&[
        ("index.md", "---\nokf_version: \"0.2\"\n---\n# B\n"),
        ("a.md", "---\ntype: T\ntitle: A\n---\nBody.\n"),
    ]);
    let l = ok("list_concepts", &json!({"bundle_path": b}));
    assert_eq!(profile_of(l.structured()), pair(DATE, "default"));
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "a",
                      "lifecycle": {"stale_after": "2026-09-23T12:00:00+07:00"}}]);
    let (p, a) = preview_apply(&patch(&b, &ops));
    assert_eq!(profile_of(&p), pair(INSTANT, "detected"));
    assert_eq!(profile_of(&a), pair(INSTANT, "detected"));
    let text = std::fs::read_to_string(b.join("a.md")).expect("read");
    assert!(
        text.contains("stale_after: 2026-09-23T12:00:00+07:00"),
        "{text}"
    );
    // Now the bundle holds an instant: it decides.
    let l = ok("list_concepts", &json!({"bundle_path": b}));
    assert_eq!(profile_of(l.structured()), pair(INSTANT, "detected"));
    // A patch without temporal values on a bundle with none → date, default.
    let (_t2, c) = tmp_bundle(&[("a.md", "---\ntype: T\n---\n")]);
    let ops =
        json!([{"kind": "set_lifecycle", "concept_id": "a", "lifecycle": {"status": "stable"}}]);
    let p = ok("preview_concept_patch", &patch(&c, &ops));
    assert_eq!(profile_of(p.structured()), pair(DATE, "default"));
    // Mixing both kinds: refused before I/O (the bundle path does not even exist).
    let mixed = json!([
        {"kind": "set_lifecycle", "concept_id": "a", "lifecycle": {"stale_after": "2026-09-23"}},
        {"kind": "set_usage_window", "concept_id": "a",
         "usage_window": {"from": "2026-01-01T00:00:00Z", "to": "2026-02-01T00:00:00Z"}}
    ]);
    let missing = c.join("missing");
    for tool in ["preview_concept_patch", "apply_concept_patch"] {
        let mut args = patch(&missing, &mixed);
        if tool == "apply_concept_patch" {
            args["expected_revision"] = json!(format!("sha256:{}", "1".repeat(64)));
            args["expected_plan_digest"] = json!(format!("sha256:{}", "2".repeat(64)));
        }
        let e = err(tool, &args);
        assert_eq!(e.structured()["code"], "invalid_request", "{tool}");
        assert_eq!(
            e.structured()["message"],
            "the request mixes calendar dates and instants"
        );
    }
}

/// AUT-01: a value that does not fit the profile the bundle shows is refused after the
/// capture, naming the operation, the field and the profile; nothing is written.
#[test]
fn aut_01_a_value_of_the_other_kind_is_refused_naming_field_and_profile() {
    let (_t, b) = copy_bundle(&fixture("demo-instant"));
    let before = snapshot(&b);
    let ops = json!([
        {"kind": "set_lifecycle", "concept_id": "tables/orders", "lifecycle": {"status": "stable"}},
        {"kind": "put_source", "concept_id": "tables/orders",
         "source": {"resource": "https://example.test/x", "last_modified": "2026-01-02"}}
    ]);
    let e = err("preview_concept_patch", &patch(&b, &ops));
    assert_eq!(e.structured()["code"], "invalid_request");
    assert_eq!(
        e.structured()["message"],
        "operations[1].source.last_modified does not match the bundle's temporal profile instant-0b87c52"
    );
    // The same request with the profile it fits, explicitly: accepted (the instant bundle then
    // gets the date under the date profile, with the mismatches that implies).
    let mut x = patch(&b, &ops);
    x["temporal_profile"] = json!(DATE);
    let p = ok("preview_concept_patch", &x);
    assert_eq!(profile_of(p.structured()), pair(DATE, "explicit"));
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}

/// The `mixed_temporal_values` notices of a result: exactly one, a `WARN` naming
/// `preview_temporal_upgrade`, never among the diagnostics.
fn assert_one_mixed_notice(v: &Value) {
    let mixed: Vec<&Value> = v["notices"]
        .as_array()
        .expect("notices")
        .iter()
        .filter(|n| n["code"] == "mixed_temporal_values")
        .collect();
    assert_eq!(mixed.len(), 1, "{v}");
    assert_eq!(mixed[0]["severity"], "WARN");
    assert!(
        mixed[0]["message"]
            .as_str()
            .expect("message")
            .contains("preview_temporal_upgrade"),
        "{v}"
    );
    assert!(!v["diagnostics"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x["code"] == "mixed_temporal_values")));
}

/// AUT-01: a bundle half-way through an upgrade (both kinds) resolves to the date profile,
/// detected, with one `WARN` notice `mixed_temporal_values` naming `preview_temporal_upgrade`
/// on every tool that resolves `auto`; an explicit profile gets no notice.
#[test]
fn aut_01_a_mixed_bundle_resolves_to_the_date_profile_with_one_notice() {
    let (_t, b) = copy_bundle(&fixture("instant"));
    let l = ok("list_concepts", &json!({"bundle_path": b}));
    assert_eq!(profile_of(l.structured()), pair(DATE, "detected"));
    assert_one_mixed_notice(l.structured());
    let v = ok("validate_bundle", &json!({"bundle_path": b}));
    assert_eq!(profile_of(v.structured()), pair(DATE, "detected"));
    assert_one_mixed_notice(v.structured());
    let r = ok(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "metrics/upgraded"}),
    );
    assert_one_mixed_notice(r.structured());
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "metrics/legacy_dates",
                      "lifecycle": {"status": "deprecated"}}]);
    let (p, a) = preview_apply(&patch(&b, &ops));
    assert_eq!(profile_of(&p), pair(DATE, "detected"));
    assert_one_mixed_notice(&p);
    assert_one_mixed_notice(&a);
    let x = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": DATE}),
    );
    assert_eq!(x.structured()["notices"], json!([]));
}

/// AUT-01: an exact replay with `auto` after the bundle moved finds its receipt, even though
/// the bundle now shows the other profile and the request's date no longer fits it.
#[test]
fn aut_01_an_exact_replay_with_auto_after_the_bundle_moved_finds_its_receipt() {
    let (_t, b) = copy_bundle(&fixture("demo-date"));
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "tables/orders",
                      "lifecycle": {"stale_after": "2026-12-31"}}]);
    let args = patch(&b, &ops);
    let p = ok("preview_concept_patch", &args).structured().clone();
    assert_eq!(profile_of(&p), pair(DATE, "detected"));
    let mut a = args.clone();
    a["expected_revision"] = p["base_revision"].clone();
    a["expected_plan_digest"] = p["plan_digest"].clone();
    let first = ok("apply_concept_patch", &a).structured().clone();
    assert_eq!(first["status"], "applied");
    // The bundle moves to instants (as a temporal upgrade would leave it).
    let orders = b.join("tables/orders.md");
    let text = std::fs::read_to_string(&orders).expect("read");
    let moved = text
        .replace(
            "stale_after: 2026-12-31",
            "stale_after: 2026-12-31T00:00:00Z",
        )
        .replace("from: 2026-01-01", "from: 2026-01-01T00:00:00Z")
        .replace("to: 2026-12-31", "to: 2026-12-31T00:00:00Z");
    assert_ne!(moved, text);
    write_file(&orders, &moved);
    let rev = b.join("metrics/revenue.md");
    let text = std::fs::read_to_string(&rev).expect("read");
    write_file(
        &rev,
        &text
            .replace("'2026-03-05'", "'2026-03-05T00:00:00Z'")
            .replace(
                "{from: 2026-01-01, to: 2026-06-30}",
                "{from: 2026-01-01T00:00:00Z, to: 2026-06-30T00:00:00Z}",
            ),
    );
    let l = ok("list_concepts", &json!({"bundle_path": b}));
    assert_eq!(profile_of(l.structured()), pair(INSTANT, "detected"));
    let replay = ok("apply_concept_patch", &a).structured().clone();
    assert_eq!(replay["status"], "applied", "{replay}");
    assert_eq!(replay["result_revision"], first["result_revision"]);
    let codes: Vec<&str> = replay["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["receipt_replayed"]);
    assert_eq!(profile_of(&replay), pair(INSTANT, "detected"));
    // A fresh preview of the same request now fails: the date does not fit.
    let e = err("preview_concept_patch", &args);
    assert!(e.structured()["message"]
        .as_str()
        .expect("message")
        .ends_with("does not match the bundle's temporal profile instant-0b87c52"));
}

/// AUT-01 (spec/temporal.md §11 rule 5): a `temporal_profile_mismatch` names the concept,
/// the §3 path and the profile under which the value would be valid.
#[test]
fn aut_01_mismatch_warnings_name_concept_path_and_the_fitting_profile() {
    let (_t, b) = copy_bundle(&fixture("instant"));
    let v = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "temporal_profile": INSTANT}),
    );
    let msgs: Vec<String> = v.structured()["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "temporal_profile_mismatch")
        .map(|d| {
            assert_eq!(d["file"], "metrics/legacy_dates.md");
            assert_eq!(d["severity"], "WARN");
            d["message"].as_str().expect("message").to_owned()
        })
        .collect();
    let want = |at: &str| {
        format!("{at} of concept metrics/legacy_dates is not valid under instant-0b87c52; it would be valid under date-3fcbb9f (a legacy date; preview_temporal_upgrade converts it)")
    };
    assert_eq!(
        msgs,
        [want("sources[0].last_modified"), want("stale_after")],
        "{msgs:?}"
    );
    let v = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "temporal_profile": DATE}),
    );
    let msgs: Vec<&str> = v.structured()["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "temporal_profile_mismatch")
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert!(msgs.contains(
        &"sources[0].last_modified of concept metrics/upgraded is not valid under date-3fcbb9f; it would be valid under instant-0b87c52"
    ), "{msgs:?}");
    assert!(msgs.contains(
        &"usage_window.to of concept metrics/upgraded is not valid under date-3fcbb9f; it would be valid under instant-0b87c52"
    ), "{msgs:?}");
    // Neither profile fits a value that is neither kind.
    let (_t2, c) = tmp_bundle(&[("a.md", "---\ntype: T\nstale_after: soon\n---\n")]);
    let v = ok("validate_bundle", &json!({"bundle_path": c}));
    let d = &v.structured()["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == "temporal_profile_mismatch")
        .cloned()
        .expect("a mismatch");
    assert_eq!(
        d["message"],
        "stale_after of concept a is not valid under date-3fcbb9f; it is valid under neither profile"
    );
}

/// PRF-04 as changed by Phase 5 (spec/temporal.md §11 rule 6): under every profile, `stale`
/// is `null` without `as_of`; with `as_of`, `false` when `stale_after` is absent and `null`
/// when it is present but invalid under the profile.
#[test]
fn prf_04_aut_01_stale_is_false_when_absent_and_null_when_present_but_invalid() {
    let (_t, b) = tmp_bundle(&[
        ("none.md", "---\ntype: T\n---\n"),
        ("nul.md", "---\ntype: T\nstale_after: ~\n---\n"),
        ("date.md", "---\ntype: T\nstale_after: 2026-01-02\n---\n"),
        (
            "instant.md",
            "---\ntype: T\nstale_after: 2026-01-02T00:00:00Z\n---\n",
        ),
        ("junk.md", "---\ntype: T\nstale_after: soon\n---\n"),
    ]);
    for (profile, as_of, valid, invalid) in [
        (DATE, "2026-06-01", "date", "instant"),
        (INSTANT, "2026-06-01T00:00:00Z", "instant", "date"),
    ] {
        let l = ok(
            "list_concepts",
            &json!({"bundle_path": b, "temporal_profile": profile, "as_of": as_of}),
        );
        let s = l.structured();
        assert_eq!(entry(s, "none")["stale"], false, "{profile}");
        assert_eq!(entry(s, "nul")["stale"], false, "{profile}");
        assert_eq!(entry(s, valid)["stale"], true, "{profile}");
        assert_eq!(entry(s, invalid)["stale"], Value::Null, "{profile}");
        assert_eq!(entry(s, "junk")["stale"], Value::Null, "{profile}");
        let l = ok(
            "list_concepts",
            &json!({"bundle_path": b, "temporal_profile": profile}),
        );
        for c in l.structured()["concepts"].as_array().expect("concepts") {
            assert_eq!(c["stale"], Value::Null, "{profile} {}", c["id"]);
        }
    }
}

/// AUT-01 (issue 13: "the schema hint tells the agent to write a calendar date into an
/// instant bundle"): under `auto` the hint for a temporal value names the bundle's kind and
/// both grammars, never "use a calendar date" alone; an explicit profile keeps its own hint.
#[test]
fn aut_01_schema_hints_for_temporal_values_under_auto_name_the_bundles_kind() {
    let (_t, b) = tmp_bundle(&[("a.md", "---\ntype: T\n---\n")]);
    let missing = b.join("missing");
    let hint = |profile: Option<&str>, v: &str| -> String {
        let mut args = patch(
            &missing,
            &json!([{"kind": "set_lifecycle", "concept_id": "a", "lifecycle": {"stale_after": v}}]),
        );
        if let Some(p) = profile {
            args["temporal_profile"] = json!(p);
        }
        let e = err("preview_concept_patch", &args);
        assert_eq!(e.structured()["code"], "schema_validation");
        let d = &e.structured()["diagnostics"][0];
        assert_eq!(d["field"], "operations.0.lifecycle.stale_after");
        d["message"].as_str().expect("message").to_owned()
    };
    let m = hint(None, "soon");
    assert!(
        m.contains("the kind of temporal value the bundle already holds"),
        "{m}"
    );
    assert!(
        m.contains("offset datetime") && m.contains("instant-0b87c52"),
        "{m}"
    );
    assert!(!m.starts_with("stale_after: use a calendar date"), "{m}");
    // Under auto a well-formed instant and a well-formed date both pass the schema.
    for v in ["2026-01-02T03:04:05Z", "2026-01-02"] {
        let mut args = patch(
            &missing,
            &json!([{"kind": "set_lifecycle", "concept_id": "a", "lifecycle": {"stale_after": v}}]),
        );
        args["temporal_profile"] = json!("auto");
        let e = err("preview_concept_patch", &args);
        assert_eq!(e.structured()["code"], "invalid_request", "{v}: {e:?}");
    }
    assert!(hint(Some(INSTANT), "2026-01-02").contains("RFC 3339"));
    assert!(hint(Some(DATE), "2026-01-02T03:04:05Z").contains("YYYY-MM-DD"));
}
