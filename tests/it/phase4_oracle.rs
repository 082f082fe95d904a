//! Independent oracles of the Phase-4 tools (P4-05, P4-07): a Python BM25 of spec/surface.md
//! §14.6 rules 1–3 (`tests/python/phase4_oracle.py`, Python's own case folding, NFC and
//! general categories) on 200 generated bundles; pyld (installed by `.ci/run` into
//! `target/p4-venv`) expanding every graph with a document loader that refuses fetches;
//! brute-force closures of generated link graphs against `get_neighbors`; and subgraphs of
//! `get_semantic_graph` against the whole graph.

use crate::support::client::Mcp;
use crate::support::read::{ok, tmp_bundle, write_file};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// splitmix64: every choice is a pure function of the seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n as u64)).unwrap_or(0)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Words of the generated text: ASCII, full-folding cases (ß, ﬁ, İ, final sigma), Cyrillic,
/// Greek, combining sequences (decomposed é), Arabic-Indic digits, a Deseret letter — all
/// within Unicode 14 (the Python oracle's data).
const WORDS: &[&str] = &[
    "orders",
    "Orders",
    "revenue",
    "REVENUE",
    "Straße",
    "STRASSE",
    "strasse",
    "ﬁle",
    "FILE",
    "İstanbul",
    "istanbul",
    "ΣΊΣΥΦΟΣ",
    "σίσυφος",
    "Ёлка",
    "ёлка",
    "cafe\u{301}",
    "café",
    "١٢٣",
    "x2",
    "𐐀bc",
    "𐐨bc",
    "data",
    "table",
    "metric",
    "join",
];

fn sentence(r: &mut Rng) -> String {
    let n = 1 + r.below(8);
    let seps = [" ", ", ", " - ", "; ", " (", ") ", "/", " — "];
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str(seps[r.below(seps.len())]);
        }
        s.push_str(r.pick(WORDS));
    }
    s
}

/// One generated concept body of the constructs both scanners model: ATX and setext headings,
/// paragraphs, lists, fenced code holding heading-like lines, thematic breaks, blank lines.
fn body(r: &mut Rng) -> String {
    let mut out = String::new();
    if r.below(3) > 0 {
        out.push_str(&sentence(r));
        out.push('\n');
    }
    for _ in 0..r.below(6) {
        match r.below(7) {
            0 => out.push_str(&format!(
                "\n{} {}\n",
                "#".repeat(1 + r.below(6)),
                sentence(r)
            )),
            1 => out.push_str(&format!(
                "\n{}\n{}\n",
                sentence(r),
                if r.below(2) == 0 { "===" } else { "---" }
            )),
            2 => out.push_str(&format!("\n- {}\n- {}\n", sentence(r), sentence(r))),
            3 => out.push_str(&format!("\n```\n# {}\n```\n", sentence(r))),
            4 => out.push_str("\n***\n"),
            5 => out.push_str(&format!("{}\n{}\n", sentence(r), sentence(r))),
            _ => out.push('\n'),
        }
    }
    out
}

fn generate(seed: u64, root: &Path) -> Vec<String> {
    let mut r = Rng(seed);
    let n = 2 + r.below(10);
    let mut ids = Vec::new();
    for i in 0..n {
        let dir = ["", "a/", "b/c/"][r.below(3)];
        let id = format!("{dir}c{i}");
        let title = match r.below(3) {
            0 => String::new(),
            _ => format!("title: {}\n", json!(sentence(&mut r))),
        };
        let text = format!("---\ntype: T\n{title}---\n{}", body(&mut r));
        let p = root.join(format!("{id}.md"));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        write_file(&p, &text);
        ids.push(id);
    }
    ids
}

/// One call over the stdio server (one process for many calls); the structured success.
fn sc(m: &mut Mcp, tool: &str, args: &Value) -> Value {
    let r = m.call(tool, args);
    assert_eq!(r["isError"], json!(false), "{tool} {args}: {r}");
    r["structuredContent"].clone()
}

fn venv_python(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/{name}/bin/python"));
    assert!(
        p.exists(),
        "target/{name} is missing: run `bash .ci/run` (it creates the venvs the oracles use)"
    );
    p
}

fn oracle(python: &Path, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/phase4_oracle.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .expect("run the oracle");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "oracle output not JSON ({e}): {stdout}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn p4_05_scores_equal_a_python_bm25_oracle_on_200_generated_bundles() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut plan = Vec::new();
    let mut ours = Vec::new();
    let mut compared = 0usize;
    let mut mcp = Mcp::start();
    for seed in 0..200u64 {
        let root = tmp.path().join(format!("b{seed}"));
        std::fs::create_dir_all(&root).expect("mkdir");
        generate(seed, &root);
        let mut r = Rng(seed ^ 0xdead_beef);
        let queries: Vec<String> = (0..3)
            .map(|_| {
                (0..1 + r.below(2))
                    .map(|_| r.pick(WORDS))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let mut per_query = Vec::new();
        for q in &queries {
            per_query.push(sc(
                &mut mcp,
                "search_sections",
                &json!({"bundle_path": root, "query": q, "limit": 100}),
            ));
        }
        plan.push(json!({"root": root, "queries": queries}));
        ours.push(per_query);
    }
    let plan_file = tmp.path().join("plan.json");
    write_file(&plan_file, &json!({"bundles": plan}).to_string());
    // The standard library suffices for this oracle; any python3 with Unicode data runs it.
    let want = oracle(
        Path::new("python3"),
        &["bm25", plan_file.to_str().expect("utf-8 path")],
    );
    for (b, per_query) in ours.iter().enumerate() {
        for (q, st) in per_query.iter().enumerate() {
            let expected = want["results"][b][q].as_array().expect("oracle hits");
            let got = st["hits"].as_array().expect("hits");
            assert_eq!(
                st["total"].as_u64().expect("total") as usize,
                expected.len(),
                "bundle {b} query {q} ({}): {st:#} vs {expected:#?}",
                plan[b]["queries"][q]
            );
            for (g, e) in got.iter().zip(expected) {
                for k in ["concept_id", "line_start", "line_end", "heading"] {
                    assert_eq!(g[k], e[k], "bundle {b} query {q} member {k}");
                }
                let (gs, es) = (
                    g["score"].as_f64().expect("score"),
                    e["score"].as_f64().expect("score"),
                );
                assert!(
                    (gs - es).abs() <= 1e-9 * es.abs().max(f64::MIN_POSITIVE),
                    "bundle {b} query {q}: score {gs} vs oracle {es}"
                );
                compared += 1;
            }
        }
    }
    assert!(
        compared > 500,
        "only {compared} hits compared: the generator lost its words"
    );
}

/// A random link graph: concepts `n0…`, each linking 0–3 others, plus an index listing some.
fn link_bundle(seed: u64, root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut r = Rng(seed);
    let n = 4 + r.below(10);
    let mut links: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for i in 0..n {
        let targets: BTreeSet<String> = (0..r.below(4))
            .map(|_| format!("n{}", r.below(n)))
            .filter(|t| *t != format!("n{i}"))
            .collect();
        let body: String = targets
            .iter()
            .map(|t| format!("See [x]({t}.md).\n"))
            .collect();
        write_file(
            &root.join(format!("n{i}.md")),
            &format!("---\ntitle: N{i}\n---\n{body}"),
        );
        links.insert(format!("n{i}"), targets);
    }
    let listed: String = (0..n)
        .filter(|_| r.below(3) == 0)
        .map(|i| format!("* [n](n{i}.md)\n"))
        .collect();
    write_file(&root.join("index.md"), &listed);
    links
}

/// The brute-force closure: every relation edge whose near end is within `depth - 1` hops of
/// `start` along `out` (or reversed for `in`).
fn closure(
    links: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    depth: usize,
    reverse: bool,
) -> BTreeSet<(String, String)> {
    let edges: Vec<(String, String)> = links
        .iter()
        .flat_map(|(f, ts)| ts.iter().map(move |t| (f.clone(), t.clone())))
        .collect();
    let mut dist: BTreeMap<String, usize> = BTreeMap::from([(start.to_owned(), 0)]);
    let mut out = BTreeSet::new();
    for d in 0..depth {
        let at: Vec<String> = dist
            .iter()
            .filter(|(_, v)| **v == d)
            .map(|(k, _)| k.clone())
            .collect();
        for node in at {
            for (f, t) in &edges {
                let (near, far) = if reverse { (t, f) } else { (f, t) };
                if *near == node {
                    out.insert((f.clone(), t.clone()));
                    dist.entry(far.clone()).or_insert(d + 1);
                }
            }
        }
    }
    out
}

fn edge_set(st: &Value) -> BTreeSet<(String, String)> {
    st["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            (
                e["from"].as_str().expect("from").to_owned(),
                e["to"].as_str().expect("to").to_owned(),
            )
        })
        .collect()
}

#[test]
fn p4_07_neighbors_equal_brute_force_closures_and_in_is_the_reverse_of_out() {
    let mut mcp = Mcp::start();
    for seed in 0..25u64 {
        let (_t, b) = tmp_bundle(&[]);
        let links = link_bundle(seed, &b);
        for start in links.keys().take(3) {
            for depth in [1usize, 2, 3] {
                for (dir, reverse) in [("out", false), ("in", true)] {
                    let st = sc(
                        &mut mcp,
                        "get_neighbors",
                        &json!({"bundle_path": b, "concept_id": start, "kinds": ["relation"],
                                "direction": dir, "depth": depth, "limit": 100, "max_nodes": 1000}),
                    );
                    let want = closure(&links, start, depth, reverse);
                    assert_eq!(
                        edge_set(&st),
                        want,
                        "seed {seed} {start} {dir} depth {depth}"
                    );
                    assert_eq!(st["truncated"], false);
                }
            }
            // depth 1: "in" is exactly the reverse of every "out" edge reaching the concept.
            let all_out: BTreeSet<(String, String)> = links
                .iter()
                .flat_map(|(f, ts)| ts.iter().map(move |t| (f.clone(), t.clone())))
                .filter(|(_, t)| t == start)
                .collect();
            let st = sc(
                &mut mcp,
                "get_neighbors",
                &json!({"bundle_path": b, "concept_id": start, "kinds": ["relation"], "direction": "in", "limit": 100}),
            );
            assert_eq!(edge_set(&st), all_out, "seed {seed} {start}");
        }
    }
}

fn graph_nodes(st: &Value) -> BTreeMap<String, Value> {
    st["@graph"]
        .as_array()
        .expect("graph")
        .iter()
        .map(|n| (n["@id"].as_str().expect("id").to_owned(), n.clone()))
        .collect()
}

#[test]
fn p4_07_subgraphs_are_induced_parts_and_every_graph_expands_in_pyld() {
    let python = venv_python("p4-venv");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for seed in 0..8u64 {
        let (_t, b) = tmp_bundle(&[]);
        let links = link_bundle(seed, &b);
        let whole_out = ok("get_semantic_graph", &json!({"bundle_path": b}));
        let again = ok("get_semantic_graph", &json!({"bundle_path": b}));
        assert_eq!(whole_out.stdout, again.stdout, "two runs, byte-identical");
        let whole = graph_nodes(whole_out.structured());
        let f = tmp.path().join(format!("whole{seed}.json"));
        write_file(&f, &whole_out.structured().to_string());
        files.push(f);
        for (k, start) in links.keys().take(3).enumerate() {
            let depth = k % 3;
            let st = ok(
                "get_semantic_graph",
                &json!({"bundle_path": b, "concept_ids": [start], "depth": depth}),
            )
            .structured()
            .clone();
            let sub = graph_nodes(&st);
            let members: BTreeSet<String> = sub
                .keys()
                .filter(|id| {
                    id.starts_with("okf:") && !id.contains(":source-") && *id != "okf::bundle"
                })
                .cloned()
                .collect();
            for (id, node) in &sub {
                let mut whole_node = whole.get(id).cloned().expect("a node of the whole graph");
                // Induced: links restricted to the subgraph's concepts.
                if let Some(l) = whole_node.get("okf:links").and_then(Value::as_array) {
                    let kept: Vec<Value> = l
                        .iter()
                        .filter(|x| members.contains(x["@id"].as_str().unwrap_or("")))
                        .cloned()
                        .collect();
                    let obj = whole_node.as_object_mut().expect("node");
                    if kept.is_empty() {
                        obj.remove("okf:links");
                    } else {
                        obj.insert("okf:links".into(), Value::Array(kept));
                    }
                }
                assert_eq!(node, &whole_node, "seed {seed} {id}");
            }
            let f = tmp.path().join(format!("sub{seed}-{k}.json"));
            write_file(&f, &st.to_string());
            files.push(f);
        }
    }
    let mut args = vec!["expand".to_owned()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = oracle(&python, &args);
    assert_eq!(r["errors"], json!([]), "{r}");
    let counts = r["expanded"].as_array().expect("counts");
    assert_eq!(counts.len(), files.len());
    assert!(counts.iter().all(|c| c.as_i64().unwrap_or(-1) >= 2), "{r}");
}
