//! Planner tests on in-memory captures (spec/concept-patch.md §3, §4; scenarios OPS-*).

use super::*;
use crate::okf::capture::overlay_capture;
use crate::plan::patch::ops::parse_patch_request;
use crate::plan::stage::PlanStatus as LifecycleStatus;
use serde_json::{json, Value};

const CONCEPT: &str = "---\n# leading comment\ntype: Metric\ntitle: \"Orders\"   # keep\ntags: [a, \"b\"]\nx-opaque: keep\nv: 1.10\n---\n\n# Body\n\nText.[^s]\n";

fn cap(files: &[(&str, &str)]) -> Capture {
    Capture::from_files(
        files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec())),
    )
}

fn bundle(concept: &str) -> Capture {
    cap(&[("index.md", "# Index\n"), ("m/c.md", concept)])
}

fn plan_ops(c: &Capture, ops: Value) -> Plan {
    plan_profile(c, ops, "")
}

fn plan_profile(c: &Capture, ops: Value, profile: &str) -> Plan {
    let req = parse_patch_request(
        &json!({"bundle_path": "/x", "actor": "tester", "operations": ops, "temporal_profile": profile}),
        false,
    )
    .expect("valid request");
    plan_patch(c, &req, &c.revision, &Cancel::new()).expect("plan")
}

fn applied(c: &Capture, p: &Plan) -> Capture {
    overlay_capture(c, p.writes.resident().expect("resident writes"))
}

fn text(c: &Capture, path: &str) -> String {
    String::from_utf8(c.get(path).expect("file").bytes().to_vec()).expect("utf8")
}

fn codes(p: &Plan) -> Vec<&str> {
    p.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

/// Applies `ops`, asserts `applicable`, then asserts a re-run is `noop` (OPS-02).
fn apply_and_rerun(c: &Capture, ops: Value) -> Capture {
    let p = plan_ops(c, ops.clone());
    assert_eq!(p.status, LifecycleStatus::Applicable, "{:?}", p.diagnostics);
    let after = applied(c, &p);
    let again = plan_ops(&after, ops);
    assert_eq!(
        again.status,
        LifecycleStatus::Noop,
        "rerun: {:?}",
        again.diagnostics
    );
    assert_eq!(
        again.result_revision.as_deref(),
        Some(after.revision.as_str())
    );
    after
}

fn c_path() -> &'static str {
    "m/c.md"
}

#[test]
fn ops_03_set_generated_insert_set_and_remove_at() {
    let c = bundle(CONCEPT);
    let after = apply_and_rerun(
        &c,
        json!([{"kind": "set_generated", "concept_id": "m/c", "generated": {"by": "agent/1.0", "at": "2026-01-02T03:04:05Z"}}]),
    );
    let t = text(&after, c_path());
    assert!(t.starts_with("---\n# leading comment\ntype: Metric\ntitle: \"Orders\"   # keep\ntags: [a, \"b\"]\nx-opaque: keep\nv: 1.10\ngenerated:\n  by: agent/1.0\n  at: 2026-01-02T03:04:05Z\n---\n"), "{t}");
    assert!(t.ends_with("\n# Body\n\nText.[^s]\n"));
    let after2 = apply_and_rerun(
        &after,
        json!([{"kind": "set_generated", "concept_id": "m/c", "generated": {"by": "agent/2.0"}}]),
    );
    let t2 = text(&after2, c_path());
    assert!(t2.contains("generated:\n  by: agent/2.0\n---"), "{t2}");
}

#[test]
fn ops_04_verification_events() {
    let c = bundle(CONCEPT);
    let e1 = json!({"kind": "ensure_verification", "concept_id": "m/c", "verification": {"by": "human:ann", "at": "2026-06-25T09:00:00Z"}});
    let a1 = apply_and_rerun(&c, json!([e1]));
    assert!(
        text(&a1, c_path()).contains("verified:\n  by: human:ann\n  at: 2026-06-25T09:00:00Z\n")
    );
    // Same instant in another offset matches.
    let same = json!({"kind": "ensure_verification", "concept_id": "m/c", "verification": {"by": "human:ann", "at": "2026-06-25T16:00:00+07:00"}});
    assert_eq!(plan_ops(&a1, json!([same])).status, LifecycleStatus::Noop);
    let e2 = json!({"kind": "ensure_verification", "concept_id": "m/c", "verification": {"by": "process:nightly", "at": "2026-06-26T02:00:00Z"}});
    let a2 = apply_and_rerun(&a1, json!([e2]));
    let t2 = text(&a2, c_path());
    assert!(
        t2.contains("verified:\n  -\n    by: human:ann\n    at: 2026-06-25T09:00:00Z\n  -\n    by: process:nightly\n    at: 2026-06-26T02:00:00Z\n"),
        "{t2}"
    );
    let r1 = json!({"kind": "remove_verification", "concept_id": "m/c", "verification": {"by": "human:ann", "at": "2026-06-25T09:00:00Z"}});
    let a3 = apply_and_rerun(&a2, json!([r1]));
    let t3 = text(&a3, c_path());
    assert!(
        !t3.contains("human:ann") && t3.contains("process:nightly"),
        "{t3}"
    );
    let r2 = json!({"kind": "remove_verification", "concept_id": "m/c", "verification": {"by": "process:nightly", "at": "2026-06-26T02:00:00Z"}});
    let a4 = apply_and_rerun(&a3, json!([r2.clone()]));
    assert!(!text(&a4, c_path()).contains("verified"));
    assert_eq!(text(&a4, c_path()), CONCEPT);
    assert_eq!(plan_ops(&a4, json!([r2])).status, LifecycleStatus::Noop);
}

#[test]
fn flow_bare_verified_becomes_a_sequence() {
    let c = bundle("---\ntype: T\nverified: { by: human:a, at: 2026-01-01T00:00:00Z }\n---\n");
    let a = apply_and_rerun(
        &c,
        json!([{"kind": "ensure_verification", "concept_id": "m/c", "verification": {"by": "human:b", "at": "2026-01-02T00:00:00Z"}}]),
    );
    let t = text(&a, c_path());
    assert!(
        t.contains("  - { by: human:a, at: 2026-01-01T00:00:00Z }\n"),
        "{t}"
    );
}

#[test]
fn ops_05_put_source_with_id() {
    let c = bundle("---\ntype: T\nsources:\n  - id: s1\n    resource: https://a.test/\n    title: Old\n    x-source: keep\n---\nbody\n");
    let a = apply_and_rerun(
        &c,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"id": "s1", "resource": "https://a.test/", "author": "team:x", "usage_count": "5"}}]),
    );
    let t = text(&a, c_path());
    assert!(
        t.contains("x-source: keep")
            && !t.contains("title: Old")
            && t.contains("author: team:x")
            && t.contains("usage_count: 5"),
        "{t}"
    );
    let b = apply_and_rerun(
        &a,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"id": "s2", "resource": "https://b.test/"}}]),
    );
    assert!(text(&b, c_path()).contains("id: s2"));
    let dup = bundle(
        "---\ntype: T\nsources:\n  - id: s1\n    resource: a\n  - id: s1\n    resource: b\n---\n",
    );
    let p = plan_ops(
        &dup,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"id": "s1", "resource": "c"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert!(codes(&p).contains(&"ambiguous_presentation"));
}

#[test]
fn ops_06_07_anonymous_sources() {
    let c = bundle("---\ntype: T\nsources:\n  - title: A\n    resource: https://a.test/\n  - id: k\n    resource: https://a.test/\n    title: A\n---\n");
    // Key order does not matter; equal anonymous candidate → noop.
    let p = plan_ops(
        &c,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"resource": "https://a.test/", "title": "A"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Noop, "{:?}", p.diagnostics);
    let ext = bundle(
        "---\ntype: T\nsources:\n  - title: A\n    resource: https://a.test/\n    x-e: 1\n---\n",
    );
    let p = plan_ops(
        &ext,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"resource": "https://a.test/", "title": "A"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert!(codes(&p).contains(&"ambiguous_presentation"));
    let only = bundle("---\ntype: T\nsources:\n  - resource: https://a.test/\n---\n");
    let a = apply_and_rerun(
        &only,
        json!([{"kind": "remove_source", "concept_id": "m/c", "source": {"resource": "https://a.test/"}}]),
    );
    assert_eq!(text(&a, c_path()), "---\ntype: T\n---\n");
}

#[test]
fn ops_08_usage_windows() {
    let c = bundle("---\ntype: T\nusage_window: { from: 2026-01-01, to: 2026-02-01, x-w: 1 }\nsources:\n  - id: s\n    resource: r\n---\n");
    let a = apply_and_rerun(
        &c,
        json!([{"kind": "set_usage_window", "concept_id": "m/c", "usage_window": {"from": "2026-03-01", "to": "2026-04-01"}}]),
    );
    assert!(
        text(&a, c_path()).contains("usage_window: { from: 2026-03-01, to: 2026-04-01, x-w: 1 }"),
        "{}",
        text(&a, c_path())
    );
    let b = apply_and_rerun(
        &a,
        json!([{"kind": "set_usage_window", "concept_id": "m/c", "source_id": "s", "usage_window": {"from": "2026-03-01", "to": "2026-04-01"}}]),
    );
    assert!(
        text(&b, c_path()).contains("    usage_window: { from: 2026-03-01, to: 2026-04-01 }\n"),
        "{}",
        text(&b, c_path())
    );
    let d = apply_and_rerun(
        &b,
        json!([{"kind": "set_usage_window", "concept_id": "m/c", "usage_window": null}]),
    );
    assert!(!text(&d, c_path()).contains("x-w"));
    let p = plan_ops(
        &d,
        json!([{"kind": "set_usage_window", "concept_id": "m/c", "source_id": "nope", "usage_window": null}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert!(codes(&p).contains(&"missing_source_selector"));
}

#[test]
fn ops_09_lifecycle() {
    let c = bundle(CONCEPT);
    let a = apply_and_rerun(
        &c,
        json!([{"kind": "set_lifecycle", "concept_id": "m/c", "lifecycle": {"status": "stable", "stale_after": "2026-09-23"}}]),
    );
    assert!(text(&a, c_path()).contains("status: stable\nstale_after: 2026-09-23\n"));
    let b = apply_and_rerun(
        &a,
        json!([{"kind": "set_lifecycle", "concept_id": "m/c", "lifecycle": {"status": null, "stale_after": null}}]),
    );
    assert_eq!(text(&b, c_path()), CONCEPT);
}

#[test]
fn ops_10_11_attested_computation() {
    let c = bundle("---\ntype: Metric\n---\n# Definition\n\nx\n");
    let inline = json!({"kind": "put_attested_computation", "concept_id": "m/c", "attested_computation": {
        "mode": "inline", "runtime": "bigquery",
        "parameters": [{"name": "year", "type": "integer", "required": true}],
        "executor": {"resource": "refs/run.md", "receipt": ["job_id", "sql"]},
        "attester": {"resource": "refs/att.py"},
        "inline_computation": "SELECT 1 -- ```\n", "inline_language": "sql"}});
    let a = apply_and_rerun(&c, json!([inline]));
    let t = text(&a, c_path());
    assert!(t.contains("type: Attested Computation\nruntime: bigquery\nparameters:\n  - { name: year, type: integer, required: true }\nexecutor:\n  resource: refs/run.md\n  receipt: [job_id, sql]\nattester:\n  resource: refs/att.py\n"), "{t}");
    assert!(
        t.contains("# Computation\n\n````sql\nSELECT 1 -- ```\n````\n"),
        "{t}"
    );
    let file = json!({"kind": "put_attested_computation", "concept_id": "m/c", "attested_computation": {
        "mode": "file", "runtime": "bigquery",
        "parameters": [{"name": "region", "type": "string", "required": false}, {"name": "year", "type": "integer", "required": true}],
        "executor": {"resource": "refs/run.md", "receipt": ["job_id"]},
        "attester": {"resource": "refs/att.py"},
        "computation_path": "refs/rev.sql"}});
    let b = apply_and_rerun(&a, json!([file]));
    let t = text(&b, c_path());
    assert!(
        t.contains("computation: refs/rev.sql") && !t.contains("```"),
        "{t}"
    );
    assert!(
        t.find("name: region").expect("region") < t.find("name: year").expect("year"),
        "{t}"
    );
    assert!(t.contains("receipt: [job_id]"), "{t}");
}

#[test]
fn ops_13_bundle_version() {
    let c = cap(&[("index.md", "# Index\r\n"), ("m/c.md", CONCEPT)]);
    let a = apply_and_rerun(
        &c,
        json!([{"kind": "set_bundle_version", "version": "0.2"}]),
    );
    assert_eq!(
        text(&a, "index.md"),
        "---\r\nokf_version: \"0.2\"\r\n---\r\n# Index\r\n"
    );
    let p = plan_ops(
        &c,
        json!([{"kind": "set_bundle_version", "version": "0.1"}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert!(
        codes(&p).contains(&"version_assertion_failed"),
        "{:?}",
        p.diagnostics
    );
    let rootless = cap(&[("m/c.md", CONCEPT)]);
    let p = plan_ops(
        &rootless,
        json!([{"kind": "set_bundle_version", "version": "0.2"}]),
    );
    assert!(codes(&p).contains(&"missing_root_index"));
    let legacy = cap(&[
        ("index.md", "# I\n"),
        (
            "m/c.md",
            "---\ntype: T\ntimestamp: '2026-01-01T00:00:00Z'\n---\n",
        ),
    ]);
    let p = plan_ops(
        &legacy,
        json!([{"kind": "set_bundle_version", "version": "0.2"}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    let d = p
        .diagnostics
        .iter()
        .find(|d| d.code == "migration_required")
        .expect("migration_required");
    assert_eq!(d.file, "m/c.md");
}

#[test]
fn pat_01_declared_0_1_bundle_rejects_every_patch() {
    let c = cap(&[
        ("index.md", "---\nokf_version: \"0.1\"\n---\n"),
        ("m/c.md", CONCEPT),
    ]);
    let p = plan_ops(
        &c,
        json!([{"kind": "set_generated", "concept_id": "m/c", "generated": {"by": "a/1"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert!(codes(&p).contains(&"version_assertion_failed"));
    assert!(codes(&p).contains(&"staged_validation_failed"));
    assert_eq!(p.plan_digest, p.request_digest);
    assert!(p.result_revision.is_none() && p.writes.is_empty() && p.diff.text.is_empty());
}

#[test]
fn ops_14_hostile_presentations() {
    let gen = json!([{"kind": "set_generated", "concept_id": "m/c", "generated": {"by": "a/1"}}]);
    for (fm, code) in [
        (
            "---\ntype: T\nbase: &g { by: x/1 }\ngenerated: *g\n---\n",
            "ambiguous_presentation",
        ),
        (
            "---\ntype: T\nbase: &g { by: x/1 }\n<<: *g\n---\n",
            "ambiguous_presentation",
        ),
        (
            "---\ntype: T\ngenerated:\n  by: a/1\n  by: b/1\n---\n",
            "ambiguous_presentation",
        ),
        (
            "---\ntype: T\ngenerated: [a, b]\n---\n",
            "invalid_presentation",
        ),
    ] {
        let p = plan_ops(&bundle(fm), gen.clone());
        assert_eq!(p.status, LifecycleStatus::Rejected, "{fm}");
        assert!(codes(&p).contains(&code), "{fm}: {:?}", p.diagnostics);
    }
    let flow =
        bundle("---\ntype: T\nparameters: [{ name: a, type: t, required: true } # c\n  ]\n---\n");
    let p = plan_ops(
        &flow,
        json!([{"kind": "put_attested_computation", "concept_id": "m/c", "attested_computation": {
        "mode": "file", "runtime": "r", "parameters": [{"name": "b", "type": "t", "required": true}],
        "executor": {"resource": "e", "receipt": ["x"]}, "attester": {"resource": "a"}, "computation_path": "p.sql"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
}

#[test]
fn ops_16_invalid_usage_count_on_target() {
    let c =
        bundle("---\ntype: T\nsources:\n  - id: s\n    resource: r\n    usage_count: many\n---\n");
    let p = plan_ops(
        &c,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"id": "s", "resource": "r"}}]),
    );
    assert!(
        codes(&p).contains(&"usage_count_invalid"),
        "{:?}",
        p.diagnostics
    );
}

#[test]
fn pat_17_missing_concept() {
    let p = plan_ops(
        &bundle(CONCEPT),
        json!([{"kind": "set_generated", "concept_id": "no/such", "generated": {"by": "a/1"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    let d = &p.diagnostics[0];
    assert_eq!(
        (d.code.as_str(), d.file.as_str()),
        ("missing_concept", "no/such.md")
    );
}

#[test]
fn pat_20_preexisting_errors_do_not_block() {
    let c = cap(&[
        ("index.md", "# I\n"),
        ("m/c.md", CONCEPT),
        ("m/untyped.md", "---\ntitle: x\n---\n"),
        ("AGENTS.md", "no frontmatter\n"),
    ]);
    let p = plan_ops(
        &c,
        json!([{"kind": "set_lifecycle", "concept_id": "m/c", "lifecycle": {"status": "draft", "stale_after": null}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Applicable, "{:?}", p.diagnostics);
    let pre: Vec<&str> = p
        .diagnostics
        .iter()
        .filter(|d| d.code == "preexisting_error")
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(pre, ["AGENTS.md", "m/untyped.md"]);
    assert!(p.diagnostics.iter().all(|d| d.severity != Severity::Error));
    let p = plan_ops(
        &c,
        json!([{"kind": "set_lifecycle", "concept_id": "m/untyped", "lifecycle": {"status": "draft", "stale_after": null}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert!(codes(&p).contains(&"staged_validation_failed"));
    assert!(codes(&p).contains(&"missing_type"));
    let pre: Vec<&str> = p
        .diagnostics
        .iter()
        .filter(|d| d.code == "preexisting_error")
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(pre, ["AGENTS.md"]);
}

#[test]
fn pat_10_instant_profile_values_verbatim() {
    let c = bundle("---\ntype: T\n---\n");
    let ops = json!([
        {"kind": "set_lifecycle", "concept_id": "m/c", "lifecycle": {"status": null, "stale_after": "2026-09-23T18:00:00+07:00"}},
        {"kind": "set_usage_window", "concept_id": "m/c", "usage_window": {"from": "2026-09-23T18:00:00+07:00", "to": "2026-09-23T12:00:00Z"}},
        {"kind": "put_source", "concept_id": "m/c", "source": {"id": "s", "resource": "r", "last_modified": "2026-01-02T03:04:05.120+02:00"}}
    ]);
    let p = plan_profile(&c, ops, "instant-0b87c52");
    assert_eq!(p.status, LifecycleStatus::Applicable, "{:?}", p.diagnostics);
    let t = text(&applied(&c, &p), c_path());
    assert!(
        t.contains("stale_after: 2026-09-23T18:00:00+07:00")
            && t.contains("last_modified: 2026-01-02T03:04:05.120+02:00"),
        "{t}"
    );
}

#[test]
fn ops_18_crlf_documents() {
    let c = bundle("---\r\ntype: T\r\n---\r\nbody\n");
    let a = apply_and_rerun(
        &c,
        json!([{"kind": "set_generated", "concept_id": "m/c", "generated": {"by": "a/1"}}]),
    );
    assert_eq!(
        text(&a, c_path()),
        "---\r\ntype: T\r\ngenerated:\r\n  by: a/1\r\n---\r\nbody\n"
    );
}

#[test]
fn plan_digest_is_deterministic_and_bound_to_content() {
    let c = bundle(CONCEPT);
    let ops = json!([{"kind": "set_generated", "concept_id": "m/c", "generated": {"by": "a/1"}}]);
    let p1 = plan_ops(&c, ops.clone());
    let p2 = plan_ops(&c, ops);
    assert_eq!(p1.plan_digest, p2.plan_digest);
    assert_eq!(p1.diff.text, p2.diff.text);
    assert!(p1.diff.text.starts_with("--- a/m/c.md\n+++ b/m/c.md\n@@ "));
    let p3 = plan_ops(
        &c,
        json!([{"kind": "set_generated", "concept_id": "m/c", "generated": {"by": "a/2"}}]),
    );
    assert_ne!(p1.plan_digest, p3.plan_digest);
    assert_eq!(p1.changed_refs, ["m/c"]);
}

#[test]
fn inline_computation_with_crlf_content_is_idempotent_in_an_lf_document() {
    let c = bundle("---\ntype: X\n---\nBody\n");
    apply_and_rerun(
        &c,
        json!([{"kind": "put_attested_computation", "concept_id": "m/c", "attested_computation": {
            "mode": "inline", "runtime": "bq", "parameters": [],
            "executor": {"resource": "https://e.test/x", "receipt": ["r"]},
            "attester": {"resource": "https://e.test/a"},
            "inline_computation": "SELECT 1\r\nFROM t"}}]),
    );
}

#[test]
fn appending_to_flow_sequences_keeps_them_flow() {
    let c = bundle("---\ntype: X\nverified: [{by: \"human:a\", at: 2026-01-01T00:00:00Z}]\nsources: [{id: s1, resource: \"https://e.test/1\"}]\n---\n");
    let a = apply_and_rerun(
        &c,
        json!([
            {"kind": "put_source", "concept_id": "m/c", "source": {"id": "s3", "resource": "https://e.test/3"}},
            {"kind": "ensure_verification", "concept_id": "m/c", "verification": {"by": "human:b", "at": "2026-02-01T00:00:00Z"}}
        ]),
    );
    let t = text(&a, "m/c.md");
    assert!(t.contains("sources: [{id: s1, resource: \"https://e.test/1\"}, { id: s3, resource: https://e.test/3 }]"), "{t}");
    assert!(t.contains("verified: [{by: \"human:a\", at: 2026-01-01T00:00:00Z}, { by: human:b, at: 2026-02-01T00:00:00Z }]"), "{t}");
}

#[test]
fn ops_14_item_edit_inside_an_opaque_flow_sequence_is_invalid_presentation() {
    let put = |r: &str| json!([{"kind": "put_source", "concept_id": "m/c", "source": {"id": "s", "resource": r}}]);
    let opaque = bundle("---\ntype: T\nsources: [{ id: s, resource: r } # c\n  ]\n---\n");
    let p = plan_ops(&opaque, put("r2"));
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert_eq!(codes(&p), ["invalid_presentation"]);
    // Nothing to change: no re-rendering, so no rejection.
    assert_eq!(plan_ops(&opaque, put("r")).status, LifecycleStatus::Noop);
    let clean =
        bundle("---\ntype: T\nsources: [{ id: s, resource: r }, { id: t, resource: u }]\n---\n");
    let a = apply_and_rerun(&clean, put("r2"));
    assert!(
        text(&a, c_path()).contains("sources: [{ id: s, resource: r2 }, { id: t, resource: u }]\n"),
        "{}",
        text(&a, c_path())
    );
    let verified = bundle(
        "---\ntype: T\nverified: [{ by: human:a, at: 2026-01-01T00:00:00Z }, # c\n  { by: human:b, at: 2026-01-01T00:00:00Z }]\n---\n",
    );
    let p = plan_ops(
        &verified,
        json!([{"kind": "remove_verification", "concept_id": "m/c", "verification": {"by": "human:a", "at": "2026-01-01T00:00:00Z"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Rejected);
    assert_eq!(codes(&p), ["invalid_presentation"]);
}

#[test]
fn ops_15_trailing_comment_on_an_anonymous_candidate_is_ambiguous() {
    let c = bundle("---\ntype: T\nsources:\n  - resource: r # c\n  - resource: q\n---\n");
    let p = plan_ops(
        &c,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"resource": "r"}}]),
    );
    assert_eq!(codes(&p), ["ambiguous_presentation"]);
    let p = plan_ops(
        &c,
        json!([{"kind": "put_source", "concept_id": "m/c", "source": {"resource": "q"}}]),
    );
    assert_eq!(p.status, LifecycleStatus::Noop, "{:?}", p.diagnostics);
}

#[test]
fn bare_verified_ending_in_a_multibyte_character_converts_without_panic() {
    let c =
        bundle("---\ntype: X\nverified:\n  at: '2026-01-01T00:00:00Z'\n  by: human:josé\n---\n");
    let a = apply_and_rerun(
        &c,
        json!([{"kind": "ensure_verification", "concept_id": "m/c", "verification": {"by": "human:bob", "at": "2026-02-02T00:00:00Z"}}]),
    );
    let t = text(&a, c_path());
    assert!(
        t.contains("verified:\n  -\n    at: '2026-01-01T00:00:00Z'\n    by: human:josé\n  -\n    by: human:bob\n    at: 2026-02-02T00:00:00Z\n"),
        "{t}"
    );
}
