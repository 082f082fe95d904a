//! End to end on copies of `../shared/corpus/knowledge-catalog` (CRP-01 list part).

use crate::util::*;
use serde_json::json;

fn md_concepts_on_disk(root: &std::path::Path) -> Vec<String> {
    let mut ids: Vec<String> = snapshot(root)
        .keys()
        .filter(|p| p.ends_with(".md"))
        .filter(|p| {
            let last = p.rsplit('/').next().unwrap_or(p);
            last != "index.md" && last != "log.md"
        })
        .map(|p| p.trim_end_matches(".md").to_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn list_concepts_lists_exactly_the_concepts_on_disk_for_every_corpus_bundle() {
    for version in ["v0.1", "v0.2"] {
        for name in ["crypto_bitcoin", "ga4", "stackoverflow"] {
            let (_t, b) = copy_bundle(&corpus(&format!("{version}/{name}")));
            let before = snapshot(&b);
            let out = call("list_concepts", &json!({"bundle_path": b}));
            assert_eq!(out.code, 0, "{version}/{name}: {}", out.stdout);
            let listed: Vec<String> = out.structured()["concepts"]
                .as_array()
                .expect("concepts")
                .iter()
                .map(|c| c["id"].as_str().expect("id").to_owned())
                .collect();
            assert_eq!(listed, md_concepts_on_disk(&b), "{version}/{name}");
            for c in out.structured()["concepts"].as_array().expect("concepts") {
                assert_eq!(c["parse_error"], json!(null), "{version}/{name}");
            }
            assert_eq!(snapshot(&b), before, "tree unchanged");
            assert!(!b.join(".okf").exists());
        }
    }
}
