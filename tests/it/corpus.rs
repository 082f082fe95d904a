//! End to end on copies of the real bundles in `shared/corpus/knowledge-catalog`
//! (CRP-01, CRP-02 and the corpus e2e of the read tools): every tool over the CLI, and over
//! MCP with identical results; the tree stays byte-identical and no `.okf/` appears.

use crate::support::util::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The corpus root: `$OKF_CORPUS_DIR`, else `shared/` next to the repository or next to its
/// worktree directory.
fn corpus_root() -> PathBuf {
    if let Ok(d) = std::env::var("OKF_CORPUS_DIR") {
        return PathBuf::from(d);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    for up in ["..", "../.."] {
        let c = manifest.join(up).join("shared/corpus/knowledge-catalog");
        if c.is_dir() {
            return c;
        }
    }
    panic!("corpus not found; set OKF_CORPUS_DIR");
}

/// Every bundle directory `<version>/<name>`, sorted.
fn bundles() -> Vec<(String, PathBuf)> {
    let root = corpus_root();
    let mut out = Vec::new();
    for v in ["v0.1", "v0.2"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(v))
            .expect("corpus version dir")
            .map(|e| e.expect("entry"))
            .filter(|e| e.file_type().expect("ft").is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for n in names {
            out.push((format!("{v}/{n}"), root.join(v).join(n)));
        }
    }
    assert!(out.len() >= 6, "expected the six corpus bundles");
    out
}

/// Concept ids on disk, computed independently of the server: non-reserved `.md` files whose
/// path without `.md` is canonical (spec/surface.md §8, README R40).
fn concept_ids_on_disk(root: &Path) -> Vec<String> {
    let mut ids: Vec<String> = snapshot(root)
        .keys()
        .filter_map(|p| p.strip_suffix(".md").map(str::to_owned))
        .filter(|id| {
            let segs: Vec<&str> = id.split('/').collect();
            let last = segs.last().copied().unwrap_or_default();
            last != "index"
                && last != "log"
                && !id.contains(':')
                && !id.contains('\\')
                && !id.chars().any(char::is_control)
                && id.trim() == id
                && segs.iter().all(|s| !s.is_empty() && !s.starts_with('.'))
        })
        .collect();
    ids.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    ids
}

fn listed_ids(list: &Value) -> Vec<String> {
    list["concepts"]
        .as_array()
        .expect("concepts")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_owned())
        .collect()
}

fn diag_codes(s: &Value, severity: &str) -> Vec<String> {
    s["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == severity)
        .map(|d| d["code"].as_str().expect("code").to_owned())
        .collect()
}

fn cli_ok(tool: &str, args: &Value) -> CliOut {
    let out = call(tool, args);
    assert_eq!(out.code, 0, "{tool} {args}: {}", out.stdout);
    out
}

#[test]
fn crp_01_crp_02_and_read_tools_e2e_on_every_corpus_bundle_over_cli() {
    for (name, src) in bundles() {
        let (_t, b) = copy_bundle(&src);
        let before = snapshot(&b);
        let on_disk = concept_ids_on_disk(&b);
        assert!(!on_disk.is_empty(), "{name}");

        let list = cli_ok("list_concepts", &json!({"bundle_path": b}));
        assert_eq!(listed_ids(list.structured()), on_disk, "{name}");
        for c in list.structured()["concepts"].as_array().expect("concepts") {
            assert_eq!(c["parse_error"], Value::Null, "{name} {}", c["id"]);
            assert_eq!(c["path"], format!("{}.md", c["id"].as_str().expect("id")));
        }

        for id in &on_disk {
            let r = cli_ok("read_concept", &json!({"bundle_path": b, "concept_id": id}));
            let bytes = std::fs::read(b.join(format!("{id}.md"))).expect("read");
            assert_eq!(r.second_text().as_bytes(), bytes.as_slice(), "{name} {id}");
            assert_eq!(r.structured()["id"], json!(id));
        }

        let auto = cli_ok("validate_bundle", &json!({"bundle_path": b}));
        assert!(auto.structured()["scanned_files"].as_u64().expect("n") > on_disk.len() as u64);
        if name.starts_with("v0.2/") {
            // CRP-01.
            assert_eq!(
                auto.structured()["conformance"]["conformant"],
                true,
                "{name}: {}",
                auto.stdout
            );
            assert_eq!(diag_codes(auto.structured(), "ERROR"), Vec::<String>::new());
        } else {
            // CRP-02.
            let v01 = cli_ok(
                "validate_bundle",
                &json!({"bundle_path": b, "target_version": "0.1"}),
            );
            assert_eq!(
                v01.structured()["conformance"]["conformant"],
                true,
                "{name}: {}",
                v01.stdout
            );
            let v02 = cli_ok(
                "validate_bundle",
                &json!({"bundle_path": b, "target_version": "0.2"}),
            );
            let s = v02.structured();
            assert_eq!(diag_codes(s, "ERROR"), Vec::<String>::new(), "{name}");
            let info = diag_codes(s, "INFO");
            assert!(info.iter().any(|c| c == "legacy_timestamp"), "{name}");
            assert!(info.iter().any(|c| c == "legacy_citations"), "{name}");
        }
        assert_eq!(snapshot(&b), before, "{name}: tree unchanged");
        assert!(!b.join(".okf").exists(), "{name}: no .okf");
    }
}

#[test]
fn corpus_read_tools_over_mcp_equal_the_cli() {
    let mut mcp = Mcp::start();
    for (name, src) in bundles() {
        let (_t, b) = copy_bundle(&src);
        let before = snapshot(&b);
        let mut calls: Vec<(&str, Value)> = vec![
            ("list_concepts", json!({"bundle_path": b})),
            (
                "validate_bundle",
                json!({"bundle_path": b, "check_links": true, "strict": true}),
            ),
        ];
        for id in concept_ids_on_disk(&b) {
            calls.push(("read_concept", json!({"bundle_path": b, "concept_id": id})));
        }
        if name.starts_with("v0.2/") {
            calls.push((
                "list_concepts",
                json!({"bundle_path": b, "temporal_profile": "instant-0b87c52", "as_of": "2026-07-01T00:00:00+00:00"}),
            ));
        }
        for (tool, args) in calls {
            let m = mcp.call(tool, &args);
            assert_eq!(m["isError"], false, "{name} {tool}: {m}");
            let c = call(tool, &args);
            assert_eq!(
                identity(&m),
                identity(c.result.as_ref().expect("CLI result")),
                "{name} {tool} {args}"
            );
        }
        assert_eq!(snapshot(&b), before, "{name}: tree unchanged");
        assert!(!b.join(".okf").exists(), "{name}: no .okf");
    }
    let (code, _, stderr) = mcp.finish();
    assert_eq!(code, 0);
    assert_eq!(stderr, "");
}
