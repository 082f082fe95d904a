//! The Phase-4 tools over the real binary (`okf-mcp call`): P4-01…P4-04, P4-06 and the
//! per-tool parts of P4-05 and P4-07 (spec/surface.md §14). The Python oracles (BM25, case
//! folding, pyld) are in `phase4_oracle.rs`; the corpus and 5,000-concept answers in
//! `phase4_scale.rs`.

use crate::support::read::{err, ok, tmp_bundle};
use crate::support::util::*;
use serde_json::{json, Value};
use std::path::Path;

fn hits_ids(s: &Value) -> Vec<String> {
    s["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| {
            h["concept"]["id"]
                .as_str()
                .or_else(|| h["concept_id"].as_str())
                .expect("id")
                .to_owned()
        })
        .collect()
}

/// A rejection leaves the tree byte-identical and creates no `.okf/`.
fn rejected(tool: &str, args: &Value, b: &Path) -> Value {
    let before = snapshot(b);
    let out = err(tool, args);
    assert_eq!(snapshot(b), before, "{tool}: tree changed");
    assert!(!b.join(".okf").exists());
    out.structured().clone()
}

fn concepts_bundle() -> (tempfile::TempDir, std::path::PathBuf) {
    tmp_bundle(&[
        ("index.md", "# All\n\n* [Orders](tables/orders.md) - orders\n* [Tables](tables/index.md)\n"),
        ("tables/index.md", "* [Customers](customers.md)\n* [Orders](orders.md)\n"),
        (
            "tables/orders.md",
            "---\ntype: Table\ntitle: Order Facts\ndescription: Revenue per Straße\ntags: [sales, finance]\nstatus: stable\nsources:\n  - {id: s1, resource: 'https://e.test/orders', title: Orders doc}\n  - {resource: ' '}\n---\n# Schema\n\nJoins [customers](customers.md) and [revenue](../metrics/revenue.md).\n",
        ),
        (
            "tables/customers.md",
            "---\ntype: Table\ntitle: Customers\nstatus: draft\nstale_after: 2026-01-01\n---\nEvery customer places orders.\n",
        ),
        (
            "metrics/revenue.md",
            "---\ntype: Metric\ntitle: Revenue\ntags: [finance]\n---\nSum of [orders](../tables/orders.md) amounts.\n",
        ),
    ])
}

#[test]
fn p4_01_search_concepts_substring_match_field_limit_and_order() {
    let (_t, b) = concepts_bundle();
    let s = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "ORDERS"}),
    );
    let st = s.structured();
    assert_eq!(s.text(), st.to_string(), "text = compact JSON");
    // tables/orders matches by id; customers and revenue by body; order: field, then id.
    assert_eq!(
        hits_ids(st),
        vec!["tables/orders", "metrics/revenue", "tables/customers"]
    );
    let fields: Vec<&str> = st["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["match"].as_str().expect("match"))
        .collect();
    assert_eq!(fields, vec!["id", "body", "body"]);
    assert_eq!(st["total"], 3);
    assert_eq!(st["truncated"], false);
    assert_eq!(st["hits"][0]["concept"]["title"], "Order Facts");
    assert_eq!(st["notices"], json!([]));
    // STRASSE finds Straße (full case folding, spec/surface.md §14.6 rule 1).
    let st = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "STRASSE"}),
    )
    .structured()
    .clone();
    assert_eq!(hits_ids(&st), vec!["tables/orders"]);
    assert_eq!(st["hits"][0]["match"], "description");
    // limit and truncated.
    let st = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "orders", "limit": 2}),
    )
    .structured()
    .clone();
    assert_eq!(st["total"], 3);
    assert_eq!(st["truncated"], true);
    assert_eq!(st["hits"].as_array().expect("hits").len(), 2);
    assert!(st["next_cursor"].is_string());
    // Deterministic: two runs, byte-identical.
    let a = ok("search_concepts", &json!({"bundle_path": b, "query": "e"}));
    let c = ok("search_concepts", &json!({"bundle_path": b, "query": "e"}));
    assert_eq!(a.stdout, c.stdout);
    assert!(!b.join(".okf").exists(), "read tools never create .okf/");
}

#[test]
fn p4_06_all_terms_try_search_sections_filters_paging_and_stale_cursor() {
    let (_t, b) = concepts_bundle();
    // Terms in different fields: "finance" is a tag, "customers" in the body.
    let q = json!({"bundle_path": b, "query": "finance customers"});
    let st = ok("search_concepts", &q).structured().clone();
    assert_eq!(st["total"], 0);
    assert_eq!(st["notices"][0]["code"], "try_search_sections");
    let mut q2 = q.clone();
    q2["match"] = json!("all_terms");
    let st = ok("search_concepts", &q2).structured().clone();
    assert_eq!(hits_ids(&st), vec!["tables/orders"]);
    assert_eq!(st["hits"][0]["match"], "tags");
    assert_eq!(st["notices"], json!([]));
    // A one-word query without hits carries no notice.
    let st = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "zzzz"}),
    )
    .structured()
    .clone();
    assert_eq!(st["notices"], json!([]));
    // Filters equal the unfiltered answer intersected with the filter.
    let all = ok("search_concepts", &json!({"bundle_path": b, "query": "o"}))
        .structured()
        .clone();
    let tables = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "o", "type": "Table"}),
    )
    .structured()
    .clone();
    let want: Vec<String> = all["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter(|h| h["concept"]["type"] == "Table")
        .map(|h| h["concept"]["id"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(hits_ids(&tables), want);
    assert_eq!(tables["total"], want.len());
    let stale = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "o", "stale": true, "as_of": "2026-06-01"}),
    )
    .structured()
    .clone();
    assert_eq!(hits_ids(&stale), vec!["tables/customers"]);
    let e = rejected(
        "search_concepts",
        &json!({"bundle_path": b, "query": "o", "stale": true}),
        &b,
    );
    assert_eq!(e["message"], "the stale filter needs as_of");
    // Pages concatenated equal one big page.
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut a = json!({"bundle_path": b, "query": "o", "limit": 1});
        if let Some(c) = &cursor {
            a["cursor"] = json!(c);
        }
        let st = ok("search_concepts", &a).structured().clone();
        got.extend(hits_ids(&st));
        match st["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(got, hits_ids(&all));
    // A cursor of another revision → invalid_request; of other arguments → invalid_request.
    let first = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "o", "limit": 1}),
    )
    .structured()
    .clone();
    let c = first["next_cursor"].as_str().expect("cursor").to_owned();
    let e = rejected(
        "search_concepts",
        &json!({"bundle_path": b, "query": "x", "cursor": c}),
        &b,
    );
    assert_eq!(e["code"], "invalid_request");
    crate::support::read::write_file(&b.join("new.md"), "---\ntitle: New\n---\n");
    let e = rejected(
        "search_concepts",
        &json!({"bundle_path": b, "query": "o", "cursor": c}),
        &b,
    );
    assert_eq!(
        e["message"],
        "the bundle changed since this cursor; search again without cursor"
    );
    let e = rejected(
        "search_concepts",
        &json!({"bundle_path": b, "query": "o", "cursor": "garbage"}),
        &b,
    );
    assert_eq!(e["code"], "invalid_request");
}

#[test]
fn p4_02_get_neighbors_directions_kinds_unknown_id_and_limit() {
    let (_t, b) = concepts_bundle();
    let n = ok(
        "get_neighbors",
        &json!({"bundle_path": b, "concept_id": "tables/orders"}),
    );
    let st = n.structured();
    assert_eq!(n.text(), st.to_string());
    let edges: Vec<(String, String, String)> = st["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().expect("kind").to_owned(),
                e["from"].as_str().expect("from").to_owned(),
                e["to"].as_str().expect("to").to_owned(),
            )
        })
        .collect();
    let t = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
    assert_eq!(
        edges,
        vec![
            t("navigation", "index.md", "tables/orders"),
            t("navigation", "tables/index.md", "tables/orders"),
            t("relation", "metrics/revenue", "tables/orders"),
            t("relation", "tables/orders", "metrics/revenue"),
            t("relation", "tables/orders", "tables/customers"),
        ]
    );
    assert_eq!(st["edges"][0]["relation_type"], "navigation");
    assert_eq!(
        st["edges"][0]["source"],
        Value::Null,
        "an index has no card"
    );
    assert_eq!(st["edges"][2]["relation_type"], "link");
    assert_eq!(st["edges"][2]["source"]["id"], "metrics/revenue");
    assert_eq!(
        st["sources"],
        json!([{"id": "s1", "resource": "https://e.test/orders", "title": "Orders doc"}])
    );
    assert_eq!(st["concept"]["id"], "tables/orders");
    assert_eq!(
        (st["total"].clone(), st["truncated"].clone()),
        (json!(5), json!(false))
    );
    // direction out, kinds relation only.
    let st = ok(
        "get_neighbors",
        &json!({"bundle_path": b, "concept_id": "tables/orders", "direction": "out", "kinds": ["relation"]}),
    )
    .structured()
    .clone();
    assert_eq!(st["total"], 2);
    assert_eq!(st["sources"], json!([]));
    // kinds source only: sources, never edges.
    let st = ok(
        "get_neighbors",
        &json!({"bundle_path": b, "concept_id": "tables/orders", "kinds": ["source"]}),
    )
    .structured()
    .clone();
    assert_eq!(st["edges"], json!([]));
    assert_eq!(st["total"], 0);
    assert_eq!(st["sources"].as_array().expect("sources").len(), 1);
    // limit caps edges; total counts them all.
    let st = ok(
        "get_neighbors",
        &json!({"bundle_path": b, "concept_id": "tables/orders", "limit": 2}),
    )
    .structured()
    .clone();
    assert_eq!(st["edges"].as_array().expect("edges").len(), 2);
    assert_eq!(
        (st["total"].clone(), st["truncated"].clone()),
        (json!(5), json!(true))
    );
    // Unknown id → concept_not_found, nothing written.
    let e = rejected(
        "get_neighbors",
        &json!({"bundle_path": b, "concept_id": "no/such"}),
        &b,
    );
    assert_eq!(e["code"], "concept_not_found");
    // Filters apply to the far end.
    let st = ok(
        "get_neighbors",
        &json!({"bundle_path": b, "concept_id": "tables/orders", "type": "Metric"}),
    )
    .structured()
    .clone();
    assert_eq!(st["total"], 2);
}

#[test]
fn p4_07_depth_in_equals_reverse_of_out_and_max_nodes() {
    let (_t, b) = concepts_bundle();
    let args = |extra: Value| {
        let mut a =
            json!({"bundle_path": b, "concept_id": "metrics/revenue", "kinds": ["relation"]});
        for (k, v) in extra.as_object().expect("object") {
            a[k] = v.clone();
        }
        a
    };
    let st = ok(
        "get_neighbors",
        &args(json!({"direction": "out", "depth": 2})),
    )
    .structured()
    .clone();
    // revenue → orders → customers (and orders → revenue, back).
    assert_eq!(st["total"], 3);
    let st = ok(
        "get_neighbors",
        &args(json!({"direction": "both", "depth": 3, "max_nodes": 2})),
    )
    .structured()
    .clone();
    assert_eq!(st["truncated"], true);
}

#[test]
fn p4_03_semantic_graph_order_typing_and_subgraph() {
    let (_t, b) = concepts_bundle();
    let g = ok("get_semantic_graph", &json!({"bundle_path": b}));
    let st = g.structured();
    assert_eq!(g.text(), st.to_string());
    assert_eq!(
        st["@context"],
        json!({"okf":"https://okf.dev/ns#","xsd":"http://www.w3.org/2001/XMLSchema#"})
    );
    let ids: Vec<&str> = st["@graph"]
        .as_array()
        .expect("graph")
        .iter()
        .map(|n| n["@id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids,
        vec![
            "okf::bundle",
            "okf:metrics/revenue",
            "okf:tables/customers",
            "okf:tables/orders",
            "okf:tables/orders:source-0"
        ]
    );
    assert_eq!(st["@graph"][0]["okf:temporalProfile"], "date-3fcbb9f");
    assert_eq!(
        st["@graph"][2]["okf:staleAfter"],
        json!({"@value": "2026-01-01", "@type": "xsd:date"})
    );
    assert_eq!(
        st["@graph"][3]["okf:links"],
        json!([{"@id": "okf:metrics/revenue"}, {"@id": "okf:tables/customers"}])
    );
    // Under the instant profile the date is not valid and is left out.
    let st = ok(
        "get_semantic_graph",
        &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52"}),
    )
    .structured()
    .clone();
    assert!(st["@graph"][2].get("okf:staleAfter").is_none());
    // A subgraph of depth 0 is one concept, its sources and the root; links inside only.
    let st = ok(
        "get_semantic_graph",
        &json!({"bundle_path": b, "concept_ids": ["tables/orders"], "depth": 0}),
    )
    .structured()
    .clone();
    let ids: Vec<&str> = st["@graph"]
        .as_array()
        .expect("graph")
        .iter()
        .map(|n| n["@id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids,
        vec![
            "okf::bundle",
            "okf:tables/orders",
            "okf:tables/orders:source-0"
        ]
    );
    assert!(st["@graph"][1].get("okf:links").is_none());
    let e = rejected(
        "get_semantic_graph",
        &json!({"bundle_path": b, "concept_ids": ["no/such"]}),
        &b,
    );
    assert_eq!(e["code"], "concept_not_found");
}

#[test]
fn p4_04_search_sections_and_terms_lines_digest_and_limits() {
    let (_t, b) = tmp_bundle(&[
        (
            "a.md",
            "---\ntitle: Alpha\n---\nintro text\n\n# Orders Revenue\n\nrevenue of orders\n\nSetext\n======\norders only\n",
        ),
        ("b.md", "---\ntitle: Beta\n---\n## İstanbul\n\nRevenue ORDERS Straße\n"),
    ]);
    let s = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "orders revenue"}),
    );
    let st = s.structured();
    assert_eq!(s.text(), st.to_string());
    assert_eq!(st["terms"], json!(["orders", "revenue"]));
    let rev = st["snapshot_revision"].as_str().expect("revision");
    assert_eq!(rev.len(), 64);
    assert!(!rev.starts_with("sha256:"));
    let hits = st["hits"].as_array().expect("hits");
    assert_eq!(hits.len(), 2, "{st:#}");
    // The heading weight ranks a's section first.
    assert_eq!(hits[0]["concept_id"], "a");
    assert_eq!(hits[0]["heading"], "Orders Revenue");
    assert_eq!(
        (hits[0]["line_start"].clone(), hits[0]["line_end"].clone()),
        (json!(6), json!(9))
    );
    assert_eq!(hits[0]["locator"], "a.md#L6-L9");
    let file = std::fs::read_to_string(b.join("a.md")).expect("read");
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let section: String = lines[5..9].concat();
    assert_eq!(
        hits[0]["content_sha256"],
        okf_mcp::digest::hex(&okf_mcp::digest::sha256(section.as_bytes()))
    );
    assert_eq!(hits[0]["snippet"], "# Orders Revenue");
    assert_eq!(hits[0]["matched_terms"], json!(["orders", "revenue"]));
    assert!(hits[0]["score"].as_f64().expect("score") > hits[1]["score"].as_f64().expect("score"));
    assert_eq!(hits[1]["concept_id"], "b");
    assert_eq!(hits[1]["heading"], "İstanbul");
    // İstanbul is one term; STRASSE finds Straße.
    let st = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "İSTANBUL strasse"}),
    )
    .structured()
    .clone();
    assert_eq!(st["total"], 1);
    // The setext heading starts a section.
    let st = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "setext"}),
    )
    .structured()
    .clone();
    assert_eq!(st["hits"][0]["heading"], "Setext");
    assert_eq!(st["hits"][0]["line_start"], 10);
    // 33 distinct terms → resource_limit; a query without a term → invalid_request.
    let q: Vec<String> = (0..33).map(|i| format!("w{i}")).collect();
    let e = rejected(
        "search_sections",
        &json!({"bundle_path": b, "query": q.join(" ")}),
        &b,
    );
    assert_eq!(e["code"], "resource_limit");
    let e = rejected(
        "search_sections",
        &json!({"bundle_path": b, "query": "?!"}),
        &b,
    );
    assert_eq!(e["code"], "invalid_request");
    // limit is capped at 100 by the schema.
    let e = rejected(
        "search_sections",
        &json!({"bundle_path": b, "query": "x", "limit": 101}),
        &b,
    );
    assert_eq!(e["code"], "resource_limit");
}

#[test]
fn p4_06_search_sections_pages_concatenate_and_filters_intersect() {
    let files: Vec<(String, String)> = (0..12)
        .map(|i| {
            (
                format!("c{i:02}.md"),
                format!(
                    "---\ntitle: C{i}\ntype: {}\n---\n# Part\nword {}\n# More\nword\n",
                    if i % 3 == 0 { "A" } else { "B" },
                    "word ".repeat(i)
                ),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let (_t, b) = tmp_bundle(&refs);
    let all = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "word", "limit": 100}),
    )
    .structured()
    .clone();
    assert_eq!(all["total"], 24);
    let key = |h: &Value| format!("{}:{}", h["concept_id"], h["line_start"]);
    let whole: Vec<String> = all["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(key)
        .collect();
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut a = json!({"bundle_path": b, "query": "word", "limit": 5});
        if let Some(c) = &cursor {
            a["cursor"] = json!(c);
        }
        let st = ok("search_sections", &a).structured().clone();
        got.extend(st["hits"].as_array().expect("hits").iter().map(key));
        match st["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(got, whole);
    let a_only = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "word", "type": "A", "limit": 100}),
    )
    .structured()
    .clone();
    let want: Vec<String> = all["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter(|h| {
            let n: usize = h["concept_id"].as_str().expect("id")[1..]
                .parse()
                .expect("n");
            n.is_multiple_of(3)
        })
        .map(key)
        .collect();
    let got: Vec<String> = a_only["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(key)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn p4_parse_failures_fail_the_graph_tools_and_skip_in_section_search() {
    let (_t, b) = tmp_bundle(&[
        ("a.md", "---\ntitle: A\n---\nalpha\n"),
        ("bad.md", "---\ntitle: [\n---\nalpha\n"),
    ]);
    for (tool, extra) in [
        ("search_concepts", json!({"query": "alpha"})),
        ("get_neighbors", json!({"concept_id": "a"})),
        ("get_semantic_graph", json!({})),
    ] {
        let mut a = extra.clone();
        a["bundle_path"] = json!(b);
        let e = rejected(tool, &a, &b);
        assert_eq!(e["code"], "operation_rejected", "{tool}");
        assert_eq!(e["diagnostics"][0]["file"], "bad.md", "{tool}");
    }
    let st = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "alpha"}),
    )
    .structured()
    .clone();
    assert_eq!(st["total"], 1);
    assert_eq!(st["notices"][0]["code"], "documents_not_searched");
}

#[test]
fn p4_near_synonyms_name_the_canonical_parameter_and_change_nothing() {
    let (_t, b) = concepts_bundle();
    for (tool, args, field) in [
        (
            "search_sections",
            json!({"bundle_path": b, "q": "orders"}),
            "query",
        ),
        (
            "search_concepts",
            json!({"bundle_path": b, "query": "o", "top_k": 3}),
            "limit",
        ),
        (
            "get_semantic_graph",
            json!({"bundle_path": b, "ids": ["tables/orders"]}),
            "concept_ids",
        ),
        (
            "get_neighbors",
            json!({"bundle_path": b, "concept": "tables/orders"}),
            "concept_id",
        ),
    ] {
        let e = rejected(tool, &args, &b);
        assert_eq!(e["code"], "unknown_parameter", "{tool}: {e}");
        assert!(
            e["diagnostics"]
                .as_array()
                .expect("diagnostics")
                .iter()
                .any(|d| d["field"] == field),
            "{tool}: {e}"
        );
    }
}

/// The recovery steps of an error result.
fn recovery_fields(e: &Value) -> Vec<String> {
    e["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "recovery_step")
        .map(|d| d["field"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn p4_answers_stay_within_256_kib_by_paging_even_for_huge_cards_and_headings() {
    // 6 concepts with a 200 KB title (1.2 MB of cards: five times the budget), each linking
    // hub; one with a 4,000-line setext heading.
    let title = "t".repeat(200_000);
    let mut files: Vec<(String, String)> = (0..6)
        .map(|i| {
            (
                format!("c{i:02}.md"),
                format!("---\ntitle: {title}\n---\nmango [hub](hub.md)\n"),
            )
        })
        .collect();
    files.push(("hub.md".into(), "---\ntitle: Hub\n---\nhub\n".into()));
    files.push((
        "long.md".into(),
        format!(
            "---\ntitle: L\n---\n{}===\nmango here\n",
            "word word\n".repeat(4_000)
        ),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let (_t, b) = tmp_bundle(&refs);
    let budget = 256 * 1024;
    for (tool, args, list) in [
        (
            "search_concepts",
            json!({"bundle_path": b, "query": "mango"}),
            "hits",
        ),
        (
            "get_neighbors",
            json!({"bundle_path": b, "concept_id": "hub"}),
            "edges",
        ),
    ] {
        let mut all = 0;
        let mut cursor: Option<String> = None;
        loop {
            let mut a = args.clone();
            if let Some(c) = &cursor {
                a["cursor"] = json!(c);
            }
            let out = ok(tool, &a);
            assert!(
                out.text().len() <= budget,
                "{tool}: {} bytes",
                out.text().len()
            );
            let st = out.structured();
            let n = st[list].as_array().expect("list").len();
            assert!(n >= 1, "{tool}: a page always moves on");
            all += n;
            match st["next_cursor"].as_str() {
                Some(c) => {
                    assert_eq!(st["truncated"], true);
                    cursor = Some(c.to_owned());
                }
                None => break,
            }
        }
        assert_eq!(all, if tool == "get_neighbors" { 6 } else { 7 }, "{tool}");
    }
    let st = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "mango here"}),
    )
    .structured()
    .clone();
    let h = st["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .find(|h| h["concept_id"] == "long")
        .expect("the long heading's section")
        .clone();
    assert_eq!(h["heading"].as_str().expect("heading").chars().count(), 512);
    assert_eq!(h["line_start"], 4);
}

#[test]
fn p4_cursors_of_another_shape_or_tool_and_other_findings_are_refused_or_said() {
    let (_t, b) = concepts_bundle();
    let first = ok(
        "search_sections",
        &json!({"bundle_path": b, "query": "orders", "limit": 1}),
    )
    .structured()
    .clone();
    let c = first["next_cursor"].as_str().expect("a cursor").to_owned();
    let (head, _key) = c.rsplit_once('.').expect("cursor parts");
    for bad in [format!("{head}."), format!("{head}.3fe2")] {
        let e = rejected(
            "search_sections",
            &json!({"bundle_path": b, "query": "orders", "limit": 1, "cursor": bad}),
            &b,
        );
        assert_eq!(e["code"], "invalid_request", "{e}");
    }
    // A search_concepts cursor relabelled as search_sections' is another tool's.
    let sc = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "orders", "limit": 1}),
    )
    .structured()
    .clone();
    let c = sc["next_cursor"]
        .as_str()
        .expect("a cursor")
        .replacen("sc1", "ss1", 1);
    let e = rejected(
        "search_sections",
        &json!({"bundle_path": b, "query": "orders", "limit": 1, "cursor": c}),
        &b,
    );
    assert_eq!(e["code"], "invalid_request", "{e}");
    // all_terms without a hit suggests search_sections too.
    let st = ok(
        "search_concepts",
        &json!({"bundle_path": b, "query": "zzz qqq", "match": "all_terms"}),
    )
    .structured()
    .clone();
    assert_eq!(st["notices"][0]["code"], "try_search_sections");
    // 33 terms: one recovery step, on query.
    let q: Vec<String> = (0..33).map(|i| format!("w{i}")).collect();
    let e = rejected(
        "search_sections",
        &json!({"bundle_path": b, "query": q.join(" ")}),
        &b,
    );
    assert_eq!(recovery_fields(&e), vec!["query"]);
    // sources are counted, so a cut list is never silent.
    let st = ok(
        "get_neighbors",
        &json!({"bundle_path": b, "concept_id": "tables/orders", "kinds": ["source"]}),
    )
    .structured()
    .clone();
    assert_eq!(st["sources_total"], 1);
}

#[test]
fn p4_a_graph_over_a_limit_has_one_recovery_step_naming_what_to_do() {
    // 14 folders of 100 × é: 1,400 é are 8,400 characters once percent-encoded (%C3%A9).
    let long = vec!["é".repeat(100); 14].join("/");
    let (_t, b) = tmp_bundle(&[
        (&format!("{long}.md"), "---\ntitle: L\n---\n"),
        ("short.md", "---\ntitle: S\n---\n"),
    ]);
    let e = rejected("get_semantic_graph", &json!({"bundle_path": b}), &b);
    assert_eq!(e["code"], "resource_limit");
    assert_eq!(recovery_fields(&e), vec!["bundle_path"]);
    // Such a path is over the 512 bytes a diagnostic's file may hold (spec/surface.md §11):
    // the step says which concept instead of naming it.
    assert!(e["diagnostics"][0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("longest path")));
    let st = ok(
        "get_semantic_graph",
        &json!({"bundle_path": b, "concept_ids": ["short"], "depth": 0}),
    )
    .structured()
    .clone();
    assert_eq!(st["@graph"].as_array().map(Vec::len), Some(2));
}
