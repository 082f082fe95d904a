//! Read tools over the real binary: RD-01…10, PRF-01…04, CID-01, SRV-05
//! (spec/surface.md §12, spec/temporal.md §8).

use crate::support::read::{err, ok, tmp_bundle, write_file};
use crate::support::util::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn entry<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["concepts"]
        .as_array()
        .expect("concepts")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no entry {id}"))
}

fn ids(list: &Value) -> Vec<String> {
    list["concepts"]
        .as_array()
        .expect("concepts")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_owned())
        .collect()
}

fn fixture_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    copy_bundle(&fixture(name))
}

fn read(b: &Path, id: &str) -> CliOut {
    ok("read_concept", &json!({"bundle_path": b, "concept_id": id}))
}

#[test]
fn rd_01_empty_bundle_and_bundle_without_root_index() {
    let (_t, b) = tmp_bundle(&[]);
    let l = ok("list_concepts", &json!({"bundle_path": b}));
    let s = l.structured();
    assert_eq!(s["concepts"], json!([]));
    assert_eq!(
        s["version"],
        json!({"declared": null, "effective": "0.2", "resolution": "default", "compatibility": "native"})
    );
    assert_eq!(
        s["version_declaration"],
        json!({"present": false, "valid": true, "raw": null, "value": null})
    );
    assert_eq!(s["as_of"], Value::Null);
    assert_eq!(s["temporal_profile"], "date-3fcbb9f");
    assert_eq!(l.text(), s.to_string());
    assert!(!b.join(".okf").exists());

    let (_t, b) = tmp_bundle(&[("a.md", "---\ntype: T\n---\n")]);
    let s = ok("list_concepts", &json!({"bundle_path": b}))
        .structured()
        .clone();
    assert_eq!(s["version"]["resolution"], "default");
    assert_eq!(s["version"]["effective"], "0.2");
    let e = entry(&s, "a");
    assert_eq!(e["tags"], json!([]));
    assert!(e["tags"].is_array());
}

#[test]
fn rd_02_sorted_by_id_without_reserved_documents_and_deterministic() {
    let (_t, b) = fixture_copy("read_tools");
    let before = snapshot(&b);
    let a = ok("list_concepts", &json!({"bundle_path": b}));
    let a2 = ok("list_concepts", &json!({"bundle_path": b}));
    assert_eq!(a.stdout, a2.stdout);
    let got = ids(a.structured());
    let mut sorted = got.clone();
    sorted.sort_by(|x, y| x.as_bytes().cmp(y.as_bytes()));
    assert_eq!(got, sorted);
    assert_eq!(
        got,
        vec![
            "a b/c",
            "broken/unterminated",
            "comp/revenue",
            "legacy/old",
            "log/2026",
            "metrics/archived",
            "tables/orders",
            "東京/данные/100%+ready=да",
        ]
    );
    assert_eq!(snapshot(&b), before, "tree unchanged");
    assert!(!b.join(".okf").exists());
}

#[test]
fn rd_03_read_concept_verbatim_parts_and_projection_rules() {
    let (_t, b) = fixture_copy("read_tools");
    let before = snapshot(&b);
    let bytes = std::fs::read(b.join("tables/orders.md")).expect("read");
    let text = String::from_utf8(bytes).expect("utf8");
    let r = read(&b, "tables/orders");
    assert_eq!(r.second_text(), text, "second text item = file bytes");
    let s = r.structured();
    let (fm, body) = text
        .strip_prefix("---\n")
        .and_then(|t| t.split_once("\n---\n"))
        .expect("fences");
    assert_eq!(s["frontmatter_yaml"], format!("{fm}\n"));
    assert_eq!(s["body"], body);
    assert_eq!(s["id"], "tables/orders");
    assert_eq!(s["path"], "tables/orders.md");
    let p = &s["projection"];
    assert_eq!(p["type"], "BigQuery Table");
    assert_eq!(
        p["resource"],
        "https://bigquery.googleapis.com/v2/projects/p/datasets/d/tables/orders"
    );
    assert_eq!(
        p["tags"],
        json!(["sales", "orders"]),
        "non-string items dropped"
    );
    assert_eq!(
        p["generated"],
        json!({"by": "reference_agent/gemini-2.5-pro", "at": "2026-06-20T22:53:05Z"})
    );
    assert_eq!(
        p["verified"],
        json!([{"by": "process:nightly", "at": "2026-06-26T02:00:00Z"}])
    );
    assert_eq!(
        p["usage_window"],
        json!({"from": "2026-06-01", "to": "2026-06-30"})
    );
    assert_eq!(p["status"], "deprecated");
    assert_eq!(p["stale_after"], "2026-09-23");
    let sources = p["sources"].as_array().expect("sources");
    assert_eq!(sources.len(), 2, "the item without resource is omitted");
    assert_eq!(
        sources[0],
        json!({"id": "ga4-schema", "resource": "https://developers.google.com/analytics/bigquery/export-schema",
            "title": "GA4 BigQuery Export schema", "author": "team:ga4-docs", "usage_count": 5000,
            "last_modified": "2026-05-30", "usage_window": null})
    );
    // A quoted usage_count is not an integer scalar; an instant under the date profile and a
    // reversed window project as null.
    assert_eq!(sources[1]["usage_count"], Value::Null);
    assert_eq!(sources[1]["last_modified"], Value::Null);
    assert_eq!(sources[1]["usage_window"], Value::Null);
    assert_eq!(sources[1]["title"], Value::Null);
    assert_eq!(
        p["attributions"],
        json!([
            {"label": "ga4-schema", "source_id": "ga4-schema", "count": 2},
            {"label": "policy   doc", "source_id": "Policy Doc", "count": 1},
            {"label": "nobody", "source_id": null, "count": 1}
        ])
    );
    assert_eq!(
        p["computation"],
        json!({"present": false, "runtime": null, "parameters": [], "computation_path": null,
            "inline": false, "executor": null, "attester": null})
    );
    assert_eq!(
        s["legacy_fallback"],
        json!({"generated_from_timestamp": false, "sources_from_citations": false})
    );
    // generated: not a mapping → null; invalid `by` → null.
    assert_eq!(
        read(&b, "metrics/archived").structured()["projection"]["generated"],
        Value::Null
    );
    let rev = read(&b, "comp/revenue");
    let p = &rev.structured()["projection"];
    assert_eq!(p["generated"], Value::Null);
    assert_eq!(
        p["computation"],
        json!({"present": true, "runtime": "bigquery",
            "parameters": [{"name": "year", "type": "integer", "required": true}],
            "computation_path": null, "inline": true,
            "executor": {"resource": "references/skills/run-on-bq.md", "receipt": ["job_id", "executed_sql", "result"]},
            "attester": {"resource": "references/attesters/revenue.py"}})
    );
    assert_eq!(snapshot(&b), before, "tree unchanged");
    assert!(!b.join(".okf").exists());
}

#[test]
fn rd_04_unknown_id_is_concept_not_found_with_recovery_step() {
    let (_t, b) = fixture_copy("read_tools");
    let out = err(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "tables/nowhere_xyz"}),
    );
    let s = out.structured();
    assert_eq!(s["code"], "concept_not_found");
    assert_eq!(s["retryable"], false);
    let d = s["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["code"], "recovery_step");
    assert_eq!(d[0]["field"], "concept_id");
    assert_eq!(d[0]["severity"], "INFO");
    assert!(!out.stdout.contains("nowhere_xyz"), "id not echoed");
    crate::support::util::assert_error_texts(out.result.as_ref().expect("result"));
    assert!(out.second_text().ends_with(&format!(
        "next step: {}\n",
        d[0]["message"].as_str().expect("m")
    )));
    // A reserved document and a non-canonical .md file are not concepts.
    for id in ["log", ".github/pull_request_template", "notes/a:b"] {
        let out = err("read_concept", &json!({"bundle_path": b, "concept_id": id}));
        let code = out.structured()["code"].as_str().expect("code").to_owned();
        assert!(
            code == "invalid_request" || code == "schema_validation",
            "{id}: {code}"
        );
    }
    assert!(!b.join(".okf").exists());
}

#[test]
fn rd_05_unparseable_concept_listed_read_fails_validate_reports() {
    let (_t, b) = fixture_copy("read_tools");
    let before = snapshot(&b);
    let l = ok("list_concepts", &json!({"bundle_path": b}));
    let s = l.structured();
    assert_eq!(
        entry(s, "broken/unterminated"),
        &json!({"id": "broken/unterminated", "path": "broken/unterminated.md", "type": null,
            "title": null, "description": null, "tags": [], "status": null, "trust": "unverified",
            "stale": null, "stale_after": null, "status_state": null, "generated_at": null,
            "source_count": 0,
            "computation": {"present": false, "runtime": null, "executor": null, "attester": null},
            "legacy_derived": {"generated": false, "citations": false},
            "parse_error": "unterminated_frontmatter"})
    );
    for c in s["concepts"].as_array().expect("concepts") {
        if c["id"] != "broken/unterminated" {
            assert_eq!(c["parse_error"], Value::Null, "{}", c["id"]);
            assert!(c["status_state"].is_object(), "{}", c["id"]);
        }
    }
    let out = err(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "broken/unterminated"}),
    );
    let e = out.structured();
    assert_eq!(e["code"], "operation_rejected");
    assert_eq!(
        e["message"],
        "bundle contains documents that cannot be parsed"
    );
    assert_eq!(e["diagnostics"].as_array().expect("d").len(), 1);
    assert_eq!(e["diagnostics"][0]["code"], "unterminated_frontmatter");
    assert_eq!(e["diagnostics"][0]["file"], "broken/unterminated.md");
    // AUT-04: the readable text names the file at fault.
    crate::support::util::assert_error_texts(out.result.as_ref().expect("result"));
    assert_eq!(
        out.second_text(),
        format!(
            "bundle contains documents that cannot be parsed (operation_rejected)\nbroken/unterminated.md: {}\n",
            e["diagnostics"][0]["message"].as_str().expect("m")
        )
    );
    read(&b, "tables/orders");
    let v = ok("validate_bundle", &json!({"bundle_path": b}));
    assert_eq!(v.structured()["conformance"]["conformant"], false);
    assert!(v.structured()["diagnostics"]
        .as_array()
        .expect("d")
        .iter()
        .any(|d| d["code"] == "unterminated_frontmatter" && d["file"] == "broken/unterminated.md"));
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}

#[test]
fn rd_06_trust_tiers() {
    let (_t, b) = fixture_copy("read_tools");
    let s = ok("list_concepts", &json!({"bundle_path": b}))
        .structured()
        .clone();
    assert_eq!(entry(&s, "legacy/old")["trust"], "unverified");
    assert_eq!(entry(&s, "tables/orders")["trust"], "machine-confirmed");
    assert_eq!(entry(&s, "metrics/archived")["trust"], "human-reviewed");
    assert_eq!(
        read(&b, "metrics/archived").structured()["projection"]["trust"],
        "human-reviewed"
    );
}

#[test]
fn rd_07_status_state_invalid_and_absent() {
    let (_t, b) = fixture_copy("read_tools");
    let s = ok("list_concepts", &json!({"bundle_path": b}))
        .structured()
        .clone();
    let a = entry(&s, "metrics/archived");
    assert_eq!(
        a["status_state"],
        json!({"present": true, "valid": false, "raw": "archived", "effective": null})
    );
    assert_eq!(a["status"], Value::Null);
    let o = entry(&s, "legacy/old");
    assert_eq!(
        o["status_state"],
        json!({"present": false, "valid": true, "raw": null, "effective": "stable"})
    );
    assert_eq!(o["status"], "stable");
}

#[test]
fn rd_08_legacy_fallbacks() {
    let (_t, b) = fixture_copy("read_tools");
    let s = ok("list_concepts", &json!({"bundle_path": b}))
        .structured()
        .clone();
    let o = entry(&s, "legacy/old");
    assert_eq!(o["generated_at"], "2026-05-28T22:43:59+00:00");
    assert_eq!(o["source_count"], 2);
    assert_eq!(
        o["legacy_derived"],
        json!({"generated": true, "citations": true})
    );
    let t = entry(&s, "tables/orders");
    assert_eq!(t["generated_at"], "2026-06-20T22:53:05Z");
    assert_eq!(t["source_count"], 2);
    assert_eq!(
        t["legacy_derived"],
        json!({"generated": false, "citations": false})
    );
    assert_eq!(
        read(&b, "legacy/old").structured()["legacy_fallback"],
        json!({"generated_from_timestamp": true, "sources_from_citations": true})
    );
    let c = entry(&s, "comp/revenue");
    assert_eq!(
        c["computation"],
        json!({"present": true, "runtime": "bigquery",
            "executor": "references/skills/run-on-bq.md", "attester": "references/attesters/revenue.py"})
    );
}

#[test]
fn rd_09_version_objects_per_declaration() {
    let null_version =
        json!({"declared": null, "effective": null, "resolution": null, "compatibility": null});
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "# no frontmatter\n",
            json!({"declared": null, "effective": "0.2", "resolution": "default", "compatibility": "native"}),
            json!({"present": false, "valid": true, "raw": null, "value": null}),
        ),
        (
            "---\nokf_version: \"0.1\"\n---\n",
            json!({"declared": "0.1", "effective": "0.1", "resolution": "declared", "compatibility": "legacy"}),
            json!({"present": true, "valid": true, "raw": "0.1", "value": "0.1"}),
        ),
        (
            "---\nokf_version: \"0.2\"\n---\n",
            json!({"declared": "0.2", "effective": "0.2", "resolution": "declared", "compatibility": "native"}),
            json!({"present": true, "valid": true, "raw": "0.2", "value": "0.2"}),
        ),
        (
            "---\nokf_version: \"9.0\"\n---\n",
            json!({"declared": "9.0", "effective": "0.2", "resolution": "future-best-effort", "compatibility": "best-effort"}),
            json!({"present": true, "valid": true, "raw": "9.0", "value": "9.0"}),
        ),
        (
            "---\nokf_version: 0.10\n---\n",
            json!({"declared": "0.10", "effective": "0.2", "resolution": "future-best-effort", "compatibility": "best-effort"}),
            json!({"present": true, "valid": true, "raw": "0.10", "value": "0.10"}),
        ),
        (
            "---\nokf_version: [1]\n---\n",
            null_version.clone(),
            json!({"present": true, "valid": false, "raw": null, "value": null}),
        ),
        (
            "---\nokf_version: \"0.0\"\n---\n",
            null_version.clone(),
            json!({"present": true, "valid": false, "raw": "0.0", "value": null}),
        ),
        (
            "---\nokf_version: \"00.2\"\n---\n",
            null_version.clone(),
            json!({"present": true, "valid": false, "raw": "00.2", "value": null}),
        ),
        (
            "---\nokf_version: \"0.2\"\n",
            null_version.clone(),
            json!({"present": true, "valid": false, "raw": null, "value": null}),
        ),
    ];
    for (index, version, decl) in cases {
        let (_t, b) = tmp_bundle(&[("index.md", index), ("a.md", "---\ntype: T\n---\n")]);
        for tool in ["list_concepts", "validate_bundle"] {
            let s = ok(tool, &json!({"bundle_path": b})).structured().clone();
            assert_eq!(s["version"], version, "{tool} {index:?}");
            assert_eq!(s["version_declaration"], decl, "{tool} {index:?}");
        }
        let s = read(&b, "a").structured().clone();
        assert_eq!(s["version"], version, "read {index:?}");
        assert_eq!(s["version_declaration"], decl, "read {index:?}");
        let v = ok("validate_bundle", &json!({"bundle_path": b}))
            .structured()
            .clone();
        let invalid = v["diagnostics"]
            .as_array()
            .expect("d")
            .iter()
            .any(|d| d["code"] == "version_declaration_invalid" && d["severity"] == "ERROR");
        assert_eq!(invalid, decl["valid"] == false, "{index:?}");
    }
}

#[test]
fn rd_10_noncanonical_markdown_is_not_a_concept() {
    let (_t, b) = fixture_copy("read_tools");
    let got = ids(ok("list_concepts", &json!({"bundle_path": b})).structured());
    assert!(got.contains(&"log/2026".to_owned()));
    assert!(!got
        .iter()
        .any(|i| i.contains(".github") || i.contains("a:b")));
    assert_eq!(
        read(&b, "log/2026").structured()["projection"]["title"],
        "Year 2026"
    );
    let v = ok("validate_bundle", &json!({"bundle_path": b}));
    let d = v.structured()["diagnostics"].as_array().expect("d").clone();
    for f in [".github/pull_request_template.md", "notes/a:b.md"] {
        let of_file: Vec<&Value> = d.iter().filter(|x| x["file"] == f).collect();
        assert_eq!(of_file.len(), 1, "{f}: {of_file:?}");
        assert_eq!(of_file[0]["code"], "noncanonical_concept_path");
        assert_eq!(of_file[0]["severity"], "WARN");
    }
    assert_eq!(v.structured()["scanned_files"], 12);
    // Their bytes still count in the revision.
    let rev = |p: &Path| {
        let root = okf_mcp::store::root::open(p.to_str().expect("utf8")).expect("open");
        okf_mcp::store::capture::capture(&root, &okf_mcp::cancel::Cancel::new())
            .expect("capture")
            .revision
    };
    let r1 = rev(&b);
    write_file(&b.join("notes/a:b.md"), "changed");
    let r2 = rev(&b);
    assert_ne!(r1, r2);
    write_file(&b.join(".github/pull_request_template.md"), "changed");
    assert_ne!(rev(&b), r2);
}

#[test]
fn cid_01_valid_ids_are_read() {
    let (_t, b) = fixture_copy("read_tools");
    let (_t2, b2) = copy_bundle(&fixture("demo"));
    for (bundle, id) in [
        (&b, "東京/данные/100%+ready=да"),
        (&b, "a b/c"),
        (&b2, "tables/orders"),
        (&b, "log/2026"),
    ] {
        let r = read(bundle, id);
        assert_eq!(r.structured()["id"], id);
        assert_eq!(r.structured()["path"], format!("{id}.md"));
        let bytes = std::fs::read(bundle.join(format!("{id}.md"))).expect("read");
        assert_eq!(r.second_text().as_bytes(), bytes.as_slice());
    }
}

#[test]
fn srv_05_text_content_relations() {
    let (_t, b) = fixture_copy("read_tools");
    let l = ok("list_concepts", &json!({"bundle_path": b}));
    // spec/surface.md §18.2 rule 1 (supersedes the legacy text shapes of §3): the one text
    // item of list_concepts and validate_bundle is the compact JSON of the object.
    assert_eq!(l.text(), l.structured().to_string());
    assert_eq!(
        l.result.as_ref().expect("r")["content"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let v = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "check_links": true, "check_orphans": true}),
    );
    let s = v.structured();
    assert_eq!(v.text(), s.to_string());
    assert_eq!(
        v.result.as_ref().expect("r")["content"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let keys: Vec<&str> = s
        .as_object()
        .expect("o")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        vec![
            "version",
            "version_declaration",
            "temporal_profile",
            "temporal_profile_source",
            "scanned_files",
            "conformance",
            "guidance",
            "diagnostics",
            "diagnostic_counts",
            "diagnostics_truncated",
            "notices"
        ],
        "as_of omitted when absent"
    );
    let r = read(&b, "legacy/old");
    assert_eq!(r.text(), r.structured().to_string());
    assert_eq!(
        r.second_text().as_bytes(),
        std::fs::read(b.join("legacy/old.md"))
            .expect("read")
            .as_slice()
    );
}

#[test]
fn prf_01_instant_profile_on_list_read_validate() {
    let (_t, b) = fixture_copy("instant");
    let before = snapshot(&b);
    let l = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52", "as_of": "2026-09-23T05:00:00Z"}),
    );
    let s = l.structured();
    assert_eq!(s["temporal_profile"], "instant-0b87c52");
    assert_eq!(s["as_of"], "2026-09-23T05:00:00Z");
    let u = entry(s, "metrics/upgraded");
    assert_eq!(u["stale"], true, "12:00+07:00 is 05:00Z");
    assert_eq!(u["stale_after"], "2026-09-23T12:00:00+07:00");
    assert_eq!(u["source_count"], 1);
    let l2 = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52", "as_of": "2026-09-23T04:59:59.999Z"}),
    );
    assert_eq!(entry(l2.structured(), "metrics/upgraded")["stale"], false);

    let r = ok(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "metrics/upgraded", "temporal_profile": "instant-0b87c52"}),
    );
    let p = &r.structured()["projection"];
    assert_eq!(r.structured()["temporal_profile"], "instant-0b87c52");
    assert_eq!(
        p["usage_window"],
        json!({"from": "2026-06-01T00:00:00Z", "to": "2026-06-30T23:59:59.5+02:00"})
    );
    assert_eq!(
        p["sources"][0]["last_modified"],
        "2026-05-30T10:00:00.120+00:00"
    );
    assert_eq!(
        p["attributions"],
        json!([{"label": "rev-policy", "source_id": "rev-policy", "count": 1}])
    );
    let v = ok(
        "validate_bundle",
        &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52", "strict": true}),
    );
    let vs = v.structured();
    assert_eq!(vs["temporal_profile"], "instant-0b87c52");
    assert_eq!(vs["conformance"]["conformant"], true);
    let mismatches: Vec<&Value> = vs["diagnostics"]
        .as_array()
        .expect("d")
        .iter()
        .filter(|d| d["code"] == "temporal_profile_mismatch")
        .collect();
    assert!(!mismatches.is_empty());
    assert!(mismatches
        .iter()
        .all(|d| d["file"] == "metrics/legacy_dates.md" && d["severity"] == "WARN"));
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}

#[test]
fn prf_02_values_invalid_under_the_profile_project_null() {
    let (_t, b) = fixture_copy("instant");
    let l = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52", "as_of": "2027-01-01T00:00:00Z"}),
    );
    let e = entry(l.structured(), "metrics/legacy_dates");
    assert_eq!(e["stale_after"], Value::Null);
    assert_eq!(e["stale"], Value::Null);
    let r = ok(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "metrics/legacy_dates", "temporal_profile": "instant-0b87c52"}),
    );
    assert_eq!(r.structured()["projection"]["stale_after"], Value::Null);
    assert_eq!(
        r.structured()["projection"]["sources"][0]["last_modified"],
        Value::Null
    );
    // Date profile: the instant last_modified projects null, the date one survives.
    let up = read(&b, "metrics/upgraded");
    assert_eq!(
        up.structured()["projection"]["sources"][0]["last_modified"],
        Value::Null
    );
    assert_eq!(up.structured()["projection"]["stale_after"], Value::Null);
    assert_eq!(up.structured()["projection"]["usage_window"], Value::Null);
    let ld = read(&b, "metrics/legacy_dates");
    assert_eq!(
        ld.structured()["projection"]["sources"][0]["last_modified"],
        "2026-05-30"
    );
}

#[test]
fn prf_03_as_of_vectors_per_profile() {
    let (_t, b) = fixture_copy("instant");
    let before = snapshot(&b);
    for tool in ["list_concepts", "validate_bundle"] {
        // Date profile: a calendar date only.
        for bad in ["2026-02-30", "2026-09-26T12:34:56Z", "26-01-01"] {
            let out = err(tool, &json!({"bundle_path": b, "as_of": bad}));
            let code = out.structured()["code"].as_str().expect("code").to_owned();
            assert!(
                code == "invalid_request" || code == "schema_validation",
                "{tool} {bad}: {code}"
            );
            assert!(!out.stdout.contains(bad), "value not echoed");
        }
        // Instant profile: date-only and the invalid vectors of temporal.md §2.4 are rejected.
        for bad in [
            "2026-09-26",
            "2026-09-26T12:34:56",
            "2026-09-26T12:34:56-00:00",
            "2026-09-26T12:34:56+24:00",
            "2026-12-31T23:59:60Z",
            "2026-09-26T12:34:56,5Z",
            "2026-09-26t12:34:56Z",
            "2026-09-26T12:34:56z",
        ] {
            let out = err(
                tool,
                &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52", "as_of": bad}),
            );
            let code = out.structured()["code"].as_str().expect("code").to_owned();
            assert!(
                code == "invalid_request" || code == "schema_validation",
                "{tool} {bad}: {code}"
            );
        }
        // Echo normalisation.
        for (given, echoed) in [
            ("2026-09-26T12:34:56+00:00", "2026-09-26T12:34:56Z"),
            (
                "2026-09-26T12:34:56.1200+07:00",
                "2026-09-26T12:34:56.12+07:00",
            ),
            ("2026-09-26T12:34:56.000-00:30", "2026-09-26T12:34:56-00:30"),
        ] {
            let s = ok(
                tool,
                &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52", "as_of": given}),
            )
            .structured()
            .clone();
            assert_eq!(s["as_of"], echoed, "{tool}");
        }
        let s = ok(tool, &json!({"bundle_path": b, "as_of": "2026-01-02"}))
            .structured()
            .clone();
        assert_eq!(s["as_of"], "2026-01-02");
        assert_eq!(s["temporal_profile"], "date-3fcbb9f");
    }
    // The as_of check is pure: it wins over a missing bundle path.
    let out = err(
        "list_concepts",
        &json!({"bundle_path": "/nonexistent/okf/bundle", "as_of": "2026-13-01"}),
    );
    assert_ne!(out.structured()["message"], "bundle_path is not accessible");
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}

/// PRF-04 (Phase 1 part; the Phase-5 rule for a present but invalid `stale_after` is
/// `auto_profile::prf_04_aut_01_…`): the date profile, passed explicitly.
#[test]
fn prf_04_date_profile_stale_without_valid_stale_after() {
    let (_t, b) = fixture_copy("read_tools");
    let with = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "date-3fcbb9f", "as_of": "2026-09-23"}),
    );
    let s = with.structured();
    assert_eq!(
        entry(s, "legacy/old")["stale"],
        false,
        "no stale_after + as_of → false"
    );
    assert_eq!(
        entry(s, "tables/orders")["stale"],
        true,
        "as_of == stale_after → stale"
    );
    assert_eq!(entry(s, "broken/unterminated")["stale"], Value::Null);
    let before = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "date-3fcbb9f", "as_of": "2026-09-22"}),
    );
    assert_eq!(entry(before.structured(), "tables/orders")["stale"], false);
    let without = ok(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "date-3fcbb9f"}),
    );
    for c in without.structured()["concepts"].as_array().expect("c") {
        assert_eq!(c["stale"], Value::Null, "{}", c["id"]);
    }
}

#[test]
fn read_concept_pure_checks_win_over_a_bad_bundle_path() {
    for id in ["a:b", "x/log", "a/../b"] {
        let out = err(
            "read_concept",
            &json!({"bundle_path": "/nonexistent/okf/bundle", "concept_id": id}),
        );
        let s = out.structured();
        let code = s["code"].as_str().expect("code");
        assert!(
            code == "invalid_request" || code == "schema_validation",
            "{id}: {code}"
        );
        assert_ne!(s["message"], "bundle_path is not accessible");
        assert!(!out.stdout.contains(id), "id not echoed");
    }
    let long = "a".repeat(4097);
    let out = err(
        "read_concept",
        &json!({"bundle_path": "/nonexistent/okf/bundle", "concept_id": long}),
    );
    assert_eq!(out.structured()["code"], "resource_limit");
}

#[test]
fn read_tools_and_their_errors_over_mcp_equal_the_cli() {
    let (_t, b) = fixture_copy("read_tools");
    let before = snapshot(&b);
    let mut mcp = Mcp::start();
    for (tool, args) in [
        (
            "list_concepts",
            json!({"bundle_path": b, "as_of": "2026-09-23"}),
        ),
        (
            "read_concept",
            json!({"bundle_path": b, "concept_id": "東京/данные/100%+ready=да"}),
        ),
        (
            "read_concept",
            json!({"bundle_path": b, "concept_id": "broken/unterminated"}),
        ),
        (
            "read_concept",
            json!({"bundle_path": b, "concept_id": "missing/one"}),
        ),
        (
            "validate_bundle",
            json!({"bundle_path": b, "strict": true, "check_links": true, "check_orphans": true}),
        ),
    ] {
        let m = mcp.call(tool, &args);
        let c = call(tool, &args);
        assert_eq!(
            identity(&m),
            identity(c.result.as_ref().expect("CLI result")),
            "{tool} {args}"
        );
    }
    let (code, _, stderr) = mcp.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}
