//! `preview_v02_migration` / `apply_v02_migration` through the real binary (`okf-mcp call`),
//! on small bundles written here and on copies of every
//! `shared/corpus/knowledge-catalog/v0.1/*` bundle (spec/migration.md; scenarios MIG-*,
//! CRP-03/04/06).
#![allow(clippy::disallowed_methods)]

use crate::support::migration::{apply, apply_args, apply_err, args, bundle, preview, read, write};
use crate::support::patch::receipts;
use crate::support::util::{call, copy_bundle, corpus, snapshot, visible};
use serde_json::{json, Value};
use std::path::Path;

/// Asserts that `root` validates strictly as OKF 0.2 with no ERROR (`what` names the case).
fn assert_conformant_02(root: &Path, what: &str) {
    let v = call(
        "validate_bundle",
        &json!({"bundle_path": root.to_str(), "strict": true, "target_version": "0.2"}),
    );
    assert_eq!(
        v.structured()["conformance"]["conformant"],
        true,
        "{what}: {}",
        v.stdout
    );
}

const CONCEPT: &str = "---\ntype: Table\ntitle: Orders\ntimestamp: '2026-05-28T22:43:59+00:00'\n---\n\nClaim [1].\n\n# Citations\n\n[1] [Spec](https://example.test/spec)\n";
const ROOT: &str = "# Bundle\n\n* [orders](tables/orders.md)\n";

fn mig01_args(root: &Path) -> Value {
    args(
        root,
        json!({
            "generated_by": "agent/1.0",
            "citation_mappings": [{"path": "tables/orders.md", "entries": [{"legacy_number": 1, "source_id": "spec"}]}],
        }),
    )
}

#[test]
fn mig_01_02_03_04_fixture_migrates_replays_and_is_then_a_target_noop() {
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let before = snapshot(&root);
    let a = mig01_args(&root);
    // MIG-01: applicable with a proof; deterministic; nothing written.
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    assert!(p["proof"].is_object());
    assert_eq!(p["source"]["resolution_source"], "legacy-probe");
    assert_eq!(p["affected_paths"], json!(["index.md", "tables/orders.md"]));
    assert_eq!(
        preview(&a),
        p,
        "two previews of the same bytes are identical"
    );
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
    // MIG-02: applied; the exact bytes of §6.3.
    let x = apply_args(&a, &p);
    let r = apply(&x);
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(r["base_revision"], p["base_revision"]);
    assert_eq!(r["result_revision"], p["result_revision"]);
    assert_eq!(r["changed_paths"], p["affected_paths"]);
    assert_eq!(r["diagnostics"], json!([]));
    assert_eq!(
        read(&root, "tables/orders.md"),
        "---\ntype: Table\ntitle: Orders\ngenerated:\n  by: agent/1.0\n  at: 2026-05-28T22:43:59+00:00\nsources:\n  -\n    id: spec\n    title: Spec\n    resource: https://example.test/spec\n---\n\nClaim [^spec].\n\n[^spec]: [Spec](https://example.test/spec)\n"
    );
    assert_eq!(
        read(&root, "index.md"),
        format!("---\nokf_version: \"0.2\"\n---\n{ROOT}")
    );
    assert_conformant_02(&root, "MIG-02");
    // MIG-04: exact replay → identical plus receipt_replayed.
    let after = visible(&root);
    let again = apply(&x);
    assert_eq!(again["status"], "applied");
    assert_eq!(again["result_revision"], r["result_revision"]);
    assert_eq!(again["changed_paths"], r["changed_paths"]);
    let d = again["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(d.len(), 1, "{again}");
    assert_eq!(d[0]["code"], "receipt_replayed");
    assert_eq!(apply(&x), again, "repeated replays are identical");
    assert_eq!(visible(&root), after);
    // MIG-03: a target-noop preview and apply; the apply never opens the store.
    let n = preview(&a);
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(n["source"]["transition"], "target-noop");
    assert_eq!(n["plan_digest"], "");
    assert!(n.get("proof").is_none());
    assert_eq!(n["diagnostics"], json!([]));
    let receipts_before = receipts(&root);
    let store_before = snapshot(&root);
    let na = apply(&apply_args(&a, &n));
    assert_eq!(na["status"], "noop", "{na}");
    assert_eq!(na["plan_digest"], "");
    assert_eq!(na["base_revision"], na["result_revision"]);
    assert_eq!(snapshot(&root), store_before);
    assert_eq!(receipts(&root), receipts_before);
}

#[test]
fn mig_06_07_v02_and_marker_only_bundles_are_target_noops_that_write_nothing() {
    // Rootless, already v0.2 form → default; declared 0.2 → declared.
    let v02 =
        "---\ntype: Table\ngenerated:\n  by: agent/1.0\n  at: 2026-01-01T00:00:00Z\n---\n\nBody.\n";
    let (_d, root) = bundle(&[("t/a.md", v02)]);
    let p = preview(&args(&root, json!({})));
    assert_eq!(p["status"], "noop");
    assert_eq!(p["source"]["resolution_source"], "default");
    let before = snapshot(&root);
    assert_eq!(
        apply(&apply_args(&args(&root, json!({})), &p))["status"],
        "noop"
    );
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
    let (_d2, root2) = bundle(&[
        ("index.md", "---\nokf_version: \"0.2\"\n---\n# B\n"),
        ("t/a.md", v02),
    ]);
    let p2 = preview(&args(&root2, json!({})));
    assert_eq!(p2["source"]["resolution_source"], "declared");
    assert_eq!(p2["status"], "noop");
    // MIG-07: prose [1] without a section or timestamp → default.
    let (_d3, root3) = bundle(&[("t/a.md", "---\ntype: Table\n---\n\nSee [1].\n")]);
    let p3 = preview(&args(&root3, json!({})));
    assert_eq!(p3["source"]["resolution_source"], "default");
    assert_eq!(p3["status"], "noop");
    assert!(!root3.join(".okf").exists());
}

#[test]
fn mig_11_future_declaration_is_blocked_and_a_contradicting_selector_is_refused() {
    let (_d, root) = bundle(&[("index.md", "---\nokf_version: \"9.0\"\n---\n# B\n")]);
    let p = preview(&args(&root, json!({})));
    assert_eq!(p["status"], "blocked");
    assert_eq!(p["source"]["transition"], "blocked");
    assert_eq!(p["source"]["resolution_source"], "future");
    assert_eq!(p["source"]["to_version"], "");
    assert_eq!(
        p["blockers"],
        json!([{"code": "unsupported_migration_source", "path": "index.md", "location": {"start": 0, "end": 0}, "message": "future declaration \"9.0\" cannot be rewritten as v0.2"}])
    );
    assert_eq!(p["result_revision"], Value::Null);
    assert_eq!(p["plan_digest"], "");
    let (_d2, root2) = bundle(&[("index.md", "---\nokf_version: \"0.2\"\n---\n# B\n")]);
    let out = call(
        "preview_v02_migration",
        &args(&root2, json!({"from": "0.1"})),
    );
    assert!(out.is_error());
    assert_eq!(out.structured()["code"], "invalid_request");
    assert!(!root2.join(".okf").exists());
}

#[test]
fn mig_12_31_authorisation_preflight_refuses_tampering_before_any_io() {
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let a = mig01_args(&root);
    let p = preview(&a);
    let good = apply_args(&a, &p);
    let before = snapshot(&root);
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut x = good.clone();
    x["expected_plan_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    cases.push(("wrong digest", x));
    let mut x = good.clone();
    x["proof"]["request_digest"] = json!(format!("sha256:{}", "1".repeat(64)));
    cases.push(("tampered request_digest", x));
    let mut x = good.clone();
    x["proof"]["result_revision"] = x["proof"]["base_revision"].clone();
    cases.push(("result = base with writes", x));
    let mut x = good.clone();
    x["generated_by"] = json!("agent/2.0");
    cases.push(("changed generated_by (MIG-31)", x));
    let mut x = good.clone();
    x["generated_at"] = json!([{"concept_id": "tables/orders", "at": "2026-05-28T22:43:59Z"}]);
    cases.push(("changed generated_at", x));
    for (what, x) in cases {
        let e = apply_err(&x);
        assert_eq!(e["code"], "plan_mismatch", "{what}: {e}");
        assert_eq!(snapshot(&root), before, "{what}");
        assert!(!root.join(".okf").exists(), "{what}");
    }
    // Schema-level refusals (MIG-12, MIG-14).
    let mut x = good.clone();
    x["proof"]["format_version"] = json!(1);
    let mut y = good.clone();
    y["expected_source"]["transition"] = json!("blocked");
    let mut z = good.clone();
    z["expected_source"]["resolution_source"] = json!("declared");
    for x in [x, y, z] {
        let e = apply_err(&x);
        assert_eq!(e["code"], "schema_validation", "{e}");
    }
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_16_17_18_generated_and_timestamp_rules() {
    let with_gen = "---\ntype: Table\ngenerated:\n  by: human:ann\n  at: 2026-06-25T16:00:00+07:00\n---\n\nBody.\n";
    let (_d, root) = bundle(&[("t/a.md", with_gen)]);
    // MIG-16: an equivalent explicit instant keeps `by`; from 0.1 makes it a transition.
    let a = args(
        &root,
        json!({"from": "0.1", "generated_at": [{"concept_id": "t/a", "at": "2026-06-25T09:00:00.000Z"}]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "noop", "{p}");
    assert!(p["proof"].is_object(), "a transition noop carries a proof");
    let bad = args(
        &root,
        json!({"from": "0.1", "generated_at": [{"concept_id": "t/a", "at": "2026-06-25T10:00:00Z"}]}),
    );
    let pb = preview(&bad);
    assert_eq!(pb["status"], "blocked");
    assert_eq!(pb["blockers"][0]["code"], "explicit_generated_at_mismatch");
    // MIG-17: timestamp vs generated conflict.
    let both = "---\ntype: Table\ntimestamp: 2026-01-01T00:00:00Z\ngenerated:\n  by: human:ann\n  at: 2026-02-01T00:00:00Z\n---\n\nBody.\n";
    let (_d2, root2) = bundle(&[("t/a.md", both)]);
    let p = preview(&args(&root2, json!({"from": "0.1"})));
    assert_eq!(p["status"], "blocked");
    assert_eq!(p["blockers"][0]["code"], "timestamp_generated_conflict");
    let p = preview(&args(
        &root2,
        json!({"from": "0.1", "timestamp_conflict_policy": "use_timestamp"}),
    ));
    assert_eq!(p["status"], "applicable", "{p}");
    assert!(p["diff"]
        .as_str()
        .expect("diff")
        .contains("+  at: 2026-01-01T00:00:00Z"));
    let p = preview(&args(
        &root2,
        json!({"from": "0.1", "timestamp_conflict_policy": "use_generated", "timestamp_policy": "preserve"}),
    ));
    assert_eq!(p["status"], "noop", "{p}");
    // MIG-18: no generated_by with a timestamp to copy.
    let (_d3, root3) = bundle(&[(
        "t/a.md",
        "---\ntype: Table\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nBody.\n",
    )]);
    let p = preview(&args(&root3, json!({})));
    assert_eq!(p["status"], "blocked");
    assert_eq!(p["blockers"][0]["code"], "missing_explicit_generated_by");
    assert_eq!(p["manual_actions"][0]["code"], "provide_generated_by");
    // CRLF: generated lines use CRLF.
    let (_d4, root4) = bundle(&[(
        "t/a.md",
        "---\r\ntype: Table\r\ntimestamp: 2026-01-01T00:00:00Z\r\n---\r\n\r\nBody.\r\n",
    )]);
    let a4 = args(&root4, json!({"generated_by": "agent/1.0"}));
    let p = preview(&a4);
    assert_eq!(apply(&apply_args(&a4, &p))["status"], "applied");
    assert_eq!(
        read(&root4, "t/a.md"),
        "---\r\ntype: Table\r\ngenerated:\r\n  by: agent/1.0\r\n  at: 2026-01-01T00:00:00Z\r\n---\r\n\r\nBody.\r\n"
    );
}

#[test]
fn mig_32_from_01_applies_and_replays_after_the_root_declares_02() {
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let a = {
        let mut a = mig01_args(&root);
        a["from"] = json!("0.1");
        a
    };
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    let x = apply_args(&a, &p);
    assert_eq!(apply(&x)["status"], "applied");
    let again = apply(&x);
    assert_eq!(again["status"], "applied", "{again}");
    assert_eq!(again["diagnostics"][0]["code"], "receipt_replayed");
    let out = call("preview_v02_migration", &a);
    assert!(out.is_error());
    assert_eq!(out.structured()["code"], "invalid_request");
}

fn corpus_bundles() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(corpus("v0.1"))
        .expect("the v0.1 corpus is missing: it must sit at ../shared/corpus")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    assert!(
        v.len() >= 3,
        "expected the three v0.1 corpus bundles: {v:?}"
    );
    v
}

/// The body of a document with its citations section and the rewritten markers removed: the
/// text before `# Citations` with every `[^id]` / `[N]` / `^[...]` marker dropped.
fn body_outside_citations(text: &str) -> String {
    let body = match text.strip_prefix("---") {
        Some(rest) => rest
            .split_once("\n---")
            .map_or(text, |(_, b)| b.split_once('\n').map_or("", |(_, x)| x)),
        None => text,
    };
    let cut = body.find("\n# Citations").map_or(body, |i| &body[..i]);
    let cut = cut.find("\n[^").map_or(cut, |i| &cut[..i]);
    let re = regex_lite(cut);
    re.trim_end().to_owned()
}

/// Drops `[^…]`, `[N]` and `^[…]` markers.
fn regex_lite(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &s[i..];
        let marker = if rest.starts_with("[^") || rest.starts_with("^[") {
            rest.find(']').map(|e| e + 1)
        } else if let Some(after) = rest.strip_prefix('[') {
            let d = after.bytes().take_while(u8::is_ascii_digit).count();
            (d > 0 && after[d..].starts_with(']')).then_some(d + 2)
        } else {
            None
        };
        match marker {
            Some(n) => i += n,
            None => {
                let c = rest.chars().next().expect("char");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

#[test]
fn crp_03_04_06_every_v01_corpus_bundle_migrates_with_its_own_proposals() {
    for name in corpus_bundles() {
        let (_d, root) = copy_bundle(&corpus(&format!("v0.1/{name}")));
        let original = snapshot(&root);
        // CRP-03: [] and no generated_by → blocked on both, legacy-probe source.
        let bare = preview(&args(&root, json!({})));
        assert_eq!(bare["status"], "blocked", "{name}");
        assert_eq!(
            bare["source"]["resolution_source"], "legacy-probe",
            "{name}"
        );
        let codes: Vec<&str> = bare["blockers"]
            .as_array()
            .expect("blockers")
            .iter()
            .filter_map(|b| b["code"].as_str())
            .collect();
        for code in [
            "missing_explicit_citation_mapping",
            "missing_explicit_generated_by",
        ] {
            assert!(codes.contains(&code), "{name}: {code} in {codes:?}");
        }
        assert_eq!(snapshot(&root), original, "{name}");
        assert!(!root.join(".okf").exists(), "{name}");
        // 1. [] → blocked, with proposals.
        let a0 = args(&root, json!({"generated_by": "agent/1.0"}));
        let p0 = preview(&a0);
        assert_eq!(p0["status"], "blocked", "{name}: {}", p0["blockers"]);
        let proposals = p0["proposed_citation_mappings"].clone();
        assert!(
            !proposals.as_array().expect("array").is_empty(),
            "{name}: proposals"
        );
        // 2. the proposals unchanged → applicable.
        let a = args(
            &root,
            json!({"generated_by": "agent/1.0", "citation_mappings": proposals}),
        );
        let p = preview(&a);
        assert_eq!(p["status"], "applicable", "{name}: {}", p["blockers"]);
        assert_eq!(snapshot(&root), original, "{name}: previews write nothing");
        assert!(!root.join(".okf").exists());
        // 3. apply → applied.
        let x = apply_args(&a, &p);
        let r = apply(&x);
        assert_eq!(r["status"], "applied", "{name}: {r}");
        // 4. strict 0.2 validation → conformant.
        assert_conformant_02(&root, &name);
        // 5. re-preview → target-noop.
        let n = preview(&a);
        assert_eq!(n["status"], "noop", "{name}: {n}");
        assert_eq!(n["source"]["transition"], "target-noop");
        // 6. its apply → noop, tree and .okf untouched.
        let before = snapshot(&root);
        assert_eq!(apply(&apply_args(&a, &n))["status"], "noop");
        assert_eq!(snapshot(&root), before, "{name}");
        // 7. exact replay of the first apply → applied + receipt_replayed.
        let again = apply(&x);
        assert_eq!(again["status"], "applied", "{name}: {again}");
        assert_eq!(again["result_revision"], r["result_revision"]);
        assert_eq!(again["diagnostics"][0]["code"], "receipt_replayed");
        // 8. every concept body is byte-identical outside the citations section and markers.
        let after = visible(&root);
        for (path, old) in &original {
            let Some(new) = after.get(path) else {
                panic!("{name}: {path} vanished")
            };
            if !path.ends_with(".md") {
                assert_eq!(
                    new, old,
                    "{name}: {path} is not a document and must not change"
                );
                continue;
            }
            let old = String::from_utf8_lossy(old);
            let new = String::from_utf8_lossy(new);
            assert_eq!(
                body_outside_citations(&new),
                body_outside_citations(&old),
                "{name}: {path} body changed outside the citations"
            );
        }
    }
}

#[test]
fn mig_08_declared_02_with_an_active_section_is_blocked_and_its_apply_fails() {
    let (_d, root) = bundle(&[
        ("index.md", "---\nokf_version: \"0.2\"\n---\n# B\n"),
        (
            "t/a.md",
            "---\ntype: Table\n---\n\nA.\n\n# Citations\n\n[1] [A](https://example.test/a)\n",
        ),
    ]);
    let before = snapshot(&root);
    let a = args(&root, json!({}));
    let p = preview(&a);
    assert_eq!(p["status"], "blocked", "{p}");
    assert_eq!(p["source"]["transition"], "target-noop");
    assert_eq!(p["blockers"][0]["code"], "migration_replay_mismatch");
    assert_eq!(p["blockers"][0]["path"], "t/a.md");
    assert!(
        p["blockers"][0]["location"]["end"].as_u64()
            > p["blockers"][0]["location"]["start"].as_u64()
    );
    assert_eq!(
        p["manual_actions"][0]["code"],
        "normalize_citations_section"
    );
    let e = apply_err(&apply_args(&a, &p));
    assert_eq!(e["code"], "migration_replay_mismatch", "{e}");
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_10_from_01_on_a_rootless_v02_bundle_is_a_transition_noop() {
    let v02 =
        "---\ntype: Table\ngenerated:\n  by: agent/1.0\n  at: 2026-01-01T00:00:00Z\n---\n\nBody.\n";
    let (_d, root) = bundle(&[("t/a.md", v02)]);
    let a = args(&root, json!({"from": "0.1"}));
    let p = preview(&a);
    assert_eq!(p["status"], "noop", "{p}");
    assert_eq!(p["source"]["transition"], "v0.1-to-v0.2");
    assert!(p["proof"].is_object());
    assert!(p["plan_digest"]
        .as_str()
        .expect("digest")
        .starts_with("sha256:"));
    assert_eq!(p["result_revision"], p["base_revision"]);
    let good = apply_args(&a, &p);
    let mut wrong = good.clone();
    wrong["expected_plan_digest"] = json!(format!("sha256:{}", "a".repeat(64)));
    assert_eq!(apply_err(&wrong)["code"], "plan_mismatch");
    let mut tampered = good.clone();
    tampered["proof"]["reads"] = json!([]);
    assert_eq!(apply_err(&tampered)["code"], "plan_mismatch");
    let r = apply(&good);
    assert_eq!(r["status"], "noop", "{r}");
    assert_eq!(r["plan_digest"], p["plan_digest"]);
    assert_eq!(r["base_revision"], r["result_revision"]);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_14_impossible_expected_source_tuples_fail_the_schema_without_io() {
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let a = mig01_args(&root);
    let p = preview(&a);
    let good = apply_args(&a, &p);
    let before = snapshot(&root);
    let mut cases: Vec<Value> = Vec::new();
    for (k, v) in [
        ("resolved_source", json!("0.2")),
        ("from_version", json!("0.2")),
        ("to_version", json!("")),
        ("requested_selector", json!("0.2")),
        ("declaration_valid", json!(false)),
        ("candidates", json!([])),
        (
            "blockers",
            json!([{"code": "x", "path": "index.md", "location": {"start": 0, "end": 0}, "message": "m"}]),
        ),
    ] {
        let mut x = good.clone();
        x["expected_source"][k] = v;
        cases.push(x);
    }
    // A target-noop tuple with a proof, or with a digest (even "").
    let noop_source = json!({"requested_selector": "auto", "declaration_present": false,
        "declaration_valid": true, "declaration_raw": "", "declared_version": null,
        "resolved_source": "0.2", "resolution_source": "default", "from_version": "0.2",
        "to_version": "0.2", "transition": "target-noop", "candidates": [], "blockers": []});
    for (k, v) in [
        ("proof", good["proof"].clone()),
        ("expected_plan_digest", json!("")),
    ] {
        let mut x = a.clone();
        x["expected_source"] = noop_source.clone();
        x[k] = v;
        cases.push(x);
    }
    for x in cases {
        let e = apply_err(&x);
        assert_eq!(e["code"], "schema_validation", "{x}: {e}");
    }
    // `expected_plan_digest: null` is an optional top-level null, treated as absent since
    // spec/surface.md §18.6 rule 3b (it amends MIG-14's "even as null"): the answer is the
    // one without it (here the bundle is no target-noop: source_conflict, nothing written).
    let mut absent = a.clone();
    absent["expected_source"] = noop_source.clone();
    let mut null = absent.clone();
    null["expected_plan_digest"] = Value::Null;
    let (e_absent, e_null) = (apply_err(&absent), apply_err(&null));
    assert_eq!(e_null, e_absent, "{null}");
    assert_ne!(e_null["code"], "schema_validation", "{e_null}");
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
    // Every applicable tuple a preview produced is accepted by the apply schema.
    let mut ok = a.clone();
    ok["expected_source"] = noop_source;
    let out = call("apply_v02_migration", &ok);
    assert_ne!(
        out.structured()["code"],
        "schema_validation",
        "{}",
        out.stdout
    );
}

#[test]
fn mig_20_label_collision_blocks_the_preview_and_fails_the_apply() {
    let doc = "---\ntype: Table\n---\n\nA [1] B [2].\n\n# Citations\n\n[1] [A](https://example.test/a)\n[2] [B](https://example.test/b)\n";
    let (_d, root) = bundle(&[("t/a.md", doc)]);
    let a = args(
        &root,
        json!({"citation_mappings": [{"path": "t/a.md", "entries": [
        {"legacy_number": 1, "source_id": "Spec"}, {"legacy_number": 2, "source_id": "spec"}]}]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "blocked", "{p}");
    assert!(p["blockers"]
        .as_array()
        .expect("b")
        .iter()
        .any(|b| b["code"] == "normalized_footnote_label_collision"));
    assert!(p["manual_actions"]
        .as_array()
        .expect("m")
        .iter()
        .any(|m| m["code"] == "disambiguate_citation_entry"));
    let mut x = a.clone();
    x["expected_source"] = p["source"].clone();
    x["proof"] = json!({"format_version": 2, "request_digest": format!("sha256:{}", "0".repeat(64)),
        "resolution_digest": format!("sha256:{}", "0".repeat(64)),
        "base_revision": p["base_revision"], "result_revision": format!("sha256:{}", "1".repeat(64)),
        "reads": [], "writes": [], "deletes": [], "renames": [], "affected_refs": [],
        "reverse_impact": [], "changed_files": [], "changed_refs": []});
    x["expected_plan_digest"] = json!(format!("sha256:{}", "2".repeat(64)));
    assert_eq!(apply_err(&x)["code"], "normalized_footnote_label_collision");
    let bad = args(
        &root,
        json!({"citation_mappings": [{"path": "t/a.md", "entries": [
        {"legacy_number": 1, "source_id": "a", "title": "[bad]"}]}]}),
    );
    let out = call("preview_v02_migration", &bad);
    assert_eq!(
        out.structured()["code"],
        "invalid_request",
        "{}",
        out.stdout
    );
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_19_25_input_faults_are_refused_before_reading_the_bundle() {
    // The bundle holds a YAML bomb: any read of it would fail differently.
    let bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\ntype: T\n---\n";
    let (_d, root) = bundle(&[("t/bomb.md", bomb)]);
    let before = snapshot(&root);
    let entry = |e: Value| {
        args(
            &root,
            json!({"citation_mappings": [{"path": "t/a.md", "entries": [e]}]}),
        )
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            entry(json!({"legacy_number": 1, "source_id": "a\u{0}b"})),
            "invalid_request",
        ),
        (
            entry(json!({"legacy_number": 1, "source_id": "a", "title": "t\u{7f}"})),
            "invalid_request",
        ),
        (
            entry(json!({"legacy_number": 1, "source_id": "a", "resource": "r\u{1}"})),
            "invalid_request",
        ),
        (
            entry(json!({"legacy_number": 1, "source_id": "é".repeat(2049)})),
            "resource_limit",
        ),
        (
            // An advertised pattern since spec/surface.md §18.3 rule 4.
            args(&root, json!({"generated_by": "not an actor"})),
            "schema_validation",
        ),
        (
            args(
                &root,
                json!({"citation_mappings": [{"path": "../x.md", "entries": [{"legacy_number": 1, "source_id": "a"}]}]}),
            ),
            "invalid_request",
        ),
        (
            args(
                &root,
                json!({"generated_at": [{"concept_id": "t/a", "at": "2026-01-01T00:00:00Z"}, {"concept_id": "t/a", "at": "2026-01-02T00:00:00Z"}]}),
            ),
            "invalid_request",
        ),
        (
            args(
                &root,
                json!({"generated_at": [{"concept_id": "t/index", "at": "2026-01-01T00:00:00Z"}]}),
            ),
            "schema_validation",
        ),
    ];
    for (a, code) in cases {
        let out = call("preview_v02_migration", &a);
        assert!(out.is_error(), "{a}");
        assert_eq!(out.structured()["code"], code, "{a}: {}", out.stdout);
    }
    let out = call(
        "preview_v02_migration",
        &args(&root, json!({"timestamp_policy": "sometimes"})),
    );
    assert_eq!(out.structured()["code"], "schema_validation");
    // Valid Unicode passes unnormalised (it reaches the bundle, which then fails on the bomb).
    let out = call(
        "preview_v02_migration",
        &entry(json!({"legacy_number": 1, "source_id": "Ünïcödé"})),
    );
    assert_ne!(
        out.structured()["code"],
        "invalid_request",
        "{}",
        out.stdout
    );
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_27_a_different_live_resolution_at_the_same_revision_is_a_source_conflict() {
    use okf_mcp::plan::migration::{identity, request, source::SourceResolution};
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let a = mig01_args(&root);
    let p = preview(&a);
    let mut x = apply_args(&a, &p);
    // Another applicable tuple (declared 0.1 instead of the legacy probe), with a proof that
    // is consistent with it: the authorisation preflight passes, the live resolution differs.
    x["expected_source"]["declaration_present"] = json!(true);
    x["expected_source"]["declaration_raw"] = json!("0.1");
    x["expected_source"]["declared_version"] = json!("0.1");
    x["expected_source"]["resolution_source"] = json!("declared");
    x["expected_source"]["candidates"] = json!([]);
    let forged = SourceResolution::from_json(&x["expected_source"]).expect("source");
    let req = request::parse_request(&x, true).expect("request");
    let cs = identity::change_set(
        &req,
        &forged.digest(),
        p["base_revision"].as_str().expect("rev"),
    );
    x["proof"]["resolution_digest"] = json!(forged.digest());
    x["proof"]["request_digest"] = json!(cs.request_digest());
    let proof = request::parse_request(&x, true)
        .expect("request")
        .apply
        .expect("apply")
        .proof
        .expect("proof");
    x["expected_plan_digest"] = json!(identity::plan_digest(&proof));
    let before = snapshot(&root);
    let out = call("apply_v02_migration", &x);
    assert!(out.is_error(), "{}", out.stdout);
    assert_eq!(
        out.structured()["code"],
        "source_conflict",
        "{}",
        out.stdout
    );
    assert_eq!(out.structured()["retryable"], true);
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_35_preexisting_errors_of_untouched_documents_warn_instead_of_blocking() {
    let (_d, root) = bundle(&[
        ("index.md", ROOT),
        ("tables/orders.md", CONCEPT),
        (
            "references/x.md",
            "---\ntitle: No type\n---\n\nA reference.\n",
        ),
    ]);
    let a = mig01_args(&root);
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    let d = p["diagnostics"].as_array().expect("diagnostics");
    assert!(
        d.iter().any(|x| x["code"] == "preexisting_error"
            && x["file"] == "references/x.md"
            && x["severity"] == "WARN"),
        "{d:?}"
    );
    assert_eq!(apply(&apply_args(&a, &p))["status"], "applied");
    // A written document that ends up with an ERROR still blocks.
    let bad = "---\ntitle: No type\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nB.\n";
    let (_d2, root2) = bundle(&[("t/b.md", bad)]);
    let p2 = preview(&args(&root2, json!({"generated_by": "agent/1.0"})));
    assert_eq!(p2["status"], "blocked", "{p2}");
    assert_eq!(
        p2["blockers"][0]["code"],
        "migration_target_preflight_failed"
    );
}

#[test]
fn mig_39_generator_leftovers_through_the_tools() {
    let doc = "---\ntype: Table\n---\n\n| a | b |\n| 1 | see [1] |\n\n# Citations\n\n2. [B](https://example.test/b)\n\n### Notes\n\nProse left by the generator.\n";
    let (_d, root) = bundle(&[("t/a.md", doc)]);
    let p0 = preview(&args(&root, json!({})));
    let props = p0["proposed_citation_mappings"].clone();
    assert_eq!(props[0]["claim_markers"], "ignore", "{props}");
    assert_eq!(props[0]["trailing_content"], "keep", "{props}");
    let mut strict = props.clone();
    strict[0]
        .as_object_mut()
        .expect("item")
        .remove("trailing_content");
    let pb = preview(&args(&root, json!({"citation_mappings": strict})));
    assert_eq!(pb["status"], "blocked");
    let a = args(&root, json!({"citation_mappings": props}));
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    assert!(p["diagnostics"]
        .as_array()
        .expect("d")
        .iter()
        .any(|d| d["code"] == "citations_trailing_content_kept"));
    assert_eq!(apply(&apply_args(&a, &p))["status"], "applied");
    let text = read(&root, "t/a.md");
    assert!(text.contains("| 1 | see [1] |"), "{text}");
    assert!(
        text.ends_with("### Notes\n\nProse left by the generator.\n"),
        "{text}"
    );
    assert_eq!(preview(&a)["status"], "noop");
}

#[test]
fn sec_01_migration_payloads_are_inert_and_preserved_byte_for_byte() {
    let probe = crate::support::probe::Probe::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("marker");
    let m = marker.display();
    let url = format!("http://{}/probe?x=1", probe.addr);
    let shell = format!("$(touch {m})");
    let tick = format!("`touch {m}`");
    let root = dir.path().join("b");
    let doc = format!(
        "---\ntype: Table\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nSee {url} and {shell} and {tick} [1].\n\n# Citations\n\n[1] [{tick}]({url})\n"
    );
    write(&root, "index.md", "# B\n");
    write(&root, "t/a.md", &doc);
    let a = args(
        &root,
        json!({"generated_by": "agent/1.0", "citation_mappings": [{"path": "t/a.md", "entries": [{"legacy_number": 1, "source_id": "probe"}]}]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(apply(&apply_args(&a, &p))["status"], "applied");
    for (tool, extra) in [
        ("read_concept", json!({"concept_id": "t/a"})),
        ("list_concepts", json!({})),
        ("validate_bundle", json!({})),
    ] {
        let mut x = json!({"bundle_path": root.to_str()});
        for (k, v) in extra.as_object().expect("object") {
            x[k] = v.clone();
        }
        assert!(!call(tool, &x).is_error(), "{tool}");
    }
    let t = read(&root, "t/a.md");
    assert!(
        t.contains(&format!("See {url} and {shell} and {tick} [^probe].")),
        "{t}"
    );
    assert!(
        t.contains(&format!("resource: {url}")) || t.contains(&format!("resource: \"{url}\"")),
        "{t}"
    );
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(probe.hits(), 0, "no request reached the probe");
    assert!(!marker.exists(), "no shell payload ran");
}

#[test]
fn ali_02_04_mode_switches_and_near_synonyms_on_apply_v02_migration() {
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let a = mig01_args(&root);
    let p = preview(&a);
    let good = apply_args(&a, &p);
    for (key, field) in [
        ("dryRun", "preview_v02_migration"),
        ("dry_run", "preview_v02_migration"),
        ("mode", "preview_v02_migration"),
        ("preview", "preview_v02_migration"),
        ("confirm", "preview_v02_migration"),
        ("expected_revision", "expected_source"),
        ("planDigest", "expected_plan_digest"),
        ("plan_digest", "expected_plan_digest"),
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
fn cid_02_invalid_concept_ids_in_generated_at_are_refused_before_io() {
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let before = snapshot(&root);
    for id in [
        "", "/a", "a/", "a//b", "a\\b", "a:b", "file:x", ".hidden", "a/../b", "a/./b", "index",
        "x/log", "a.md", " a", "a ", "a\tb",
    ] {
        let x = args(
            &root,
            json!({"generated_by": "agent/1.0", "generated_at": [{"concept_id": id, "at": "2026-01-01T00:00:00Z"}]}),
        );
        let out = call("preview_v02_migration", &x);
        assert!(out.is_error(), "{id:?}");
        let code = out.structured()["code"].as_str().expect("code").to_owned();
        assert!(
            code == "schema_validation" || code == "invalid_request",
            "{id:?}: {code}"
        );
    }
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_15_tampered_provenance_in_expected_source_is_refused_before_io() {
    let (_d, root) = bundle(&[("index.md", ROOT), ("tables/orders.md", CONCEPT)]);
    let a = mig01_args(&root);
    let p = preview(&a);
    let good = apply_args(&a, &p);
    let cands = good["expected_source"]["candidates"].clone();
    assert_eq!(cands.as_array().map(Vec::len), Some(2), "{cands}");
    let before = snapshot(&root);
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut tamper = |what: &'static str, f: &dyn Fn(&mut Value)| {
        let mut x = good.clone();
        f(&mut x["expected_source"]);
        cases.push((what, x));
    };
    tamper("validity", &|s| s["declaration_valid"] = json!(false));
    tamper("presence", &|s| s["declaration_present"] = json!(true));
    tamper("raw", &|s| s["declaration_raw"] = json!("0.1"));
    tamper("version", &|s| s["declared_version"] = json!("0.1"));
    tamper("resolution source", &|s| {
        s["resolution_source"] = json!("default")
    });
    // Candidates are sorted by (path, kind): [0] is the citations span, [1] the timestamp.
    tamper("candidate kind", &|s| {
        s["candidates"][0]["kind"] = json!("timestamp")
    });
    tamper("candidate path", &|s| {
        s["candidates"][0]["path"] = json!("tables/other.md")
    });
    tamper("negative span", &|s| {
        s["candidates"][0]["location"]["start"] = json!(-1)
    });
    tamper("inverted span", &|s| {
        let start = s["candidates"][0]["location"]["start"].clone();
        s["candidates"][0]["location"]["start"] = s["candidates"][0]["location"]["end"].clone();
        s["candidates"][0]["location"]["end"] = start;
    });
    tamper("order", &|s| {
        let c = s["candidates"].as_array_mut().expect("candidates");
        c.reverse();
    });
    tamper("duplicate", &|s| {
        let first = s["candidates"][0].clone();
        s["candidates"]
            .as_array_mut()
            .expect("candidates")
            .push(first);
    });
    for (what, x) in cases {
        let out = call("apply_v02_migration", &x);
        assert!(out.is_error(), "{what}: {}", out.stdout);
        let code = out.structured()["code"].as_str().expect("code").to_owned();
        assert!(
            ["schema_validation", "invalid_request", "plan_mismatch"].contains(&code.as_str()),
            "{what}: {code}"
        );
        assert_eq!(snapshot(&root), before, "{what}");
        assert!(!root.join(".okf").exists(), "{what}");
    }
}
