//! Patch preview/apply on copies of every `shared/corpus/knowledge-catalog/v0.2/*` bundle
//! (Phase 1b acceptance; scenario CRP-05).

use crate::support::patch::{apply, apply_args, patch_args, preview, receipts, tool};
use crate::support::util::{copy_bundle, corpus, snapshot, visible};
use serde_json::{json, Value};
use std::path::Path;

/// Keys the acceptance patch owns.
const EDITED: [&str; 5] = [
    "status:",
    "stale_after:",
    "verified:",
    "usage_window:",
    "sources:",
];

fn bundles() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(corpus("v0.2"))
        .expect("corpus v0.2")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    assert!(!v.is_empty());
    v
}

/// Splits a document into (frontmatter lines incl. fences, body bytes).
fn split(doc: &str) -> (&str, &str) {
    let end = doc[4..].find("\n---\n").expect("closing fence") + 4 + 5;
    (&doc[..end], &doc[end..])
}

/// A real concept (sorted walk) whose root mapping has none of the lifecycle, verification
/// or window keys, and whose `sources` (if any) is a block sequence.
fn pick_concept(b: &Path) -> String {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut es: Vec<_> = std::fs::read_dir(dir)
            .expect("dir")
            .filter_map(Result::ok)
            .collect();
        es.sort_by_key(std::fs::DirEntry::file_name);
        for e in es {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(
                    p.strip_prefix(root)
                        .expect("p")
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    let mut files = Vec::new();
    walk(b, b, &mut files);
    for rel in files {
        let name = Path::new(&rel)
            .file_name()
            .expect("n")
            .to_string_lossy()
            .into_owned();
        if name == "index.md" || name == "log.md" {
            continue;
        }
        let doc = std::fs::read_to_string(b.join(&rel)).expect("read");
        if !doc.starts_with("---\n") || doc.contains('\r') {
            continue;
        }
        let (fm, _) = split(&doc);
        let clean = fm.lines().all(|l| {
            ![
                "status:",
                "stale_after:",
                "verified:",
                "usage_window:",
                "sources: [",
            ]
            .iter()
            .any(|k| l.starts_with(k))
        });
        if clean && fm.contains("\ntype:") {
            return rel.trim_end_matches(".md").to_owned();
        }
    }
    panic!("no suitable concept");
}

fn acceptance_ops(concept: &str) -> Value {
    json!([
        {"kind": "set_lifecycle", "concept_id": concept, "lifecycle": {"status": "stable", "stale_after": "2027-06-30"}},
        {"kind": "put_source", "concept_id": concept, "source": {"id": "okf-mcp-acceptance", "resource": "https://example.test/acceptance", "title": "Acceptance source", "usage_count": "3"}},
        {"kind": "ensure_verification", "concept_id": concept, "verification": {"by": "human:reviewer", "at": "2026-11-30T12:00:00+01:00"}},
        {"kind": "set_usage_window", "concept_id": concept, "usage_window": {"from": "2026-01-01", "to": "2026-12-31"}}
    ])
}

/// The new file is the old one plus inserted frontmatter lines that belong to the edited keys;
/// every old byte and the body are untouched.
fn assert_only_edited_keys_changed(old: &str, new: &str) {
    let (old_fm, old_body) = split(old);
    let (new_fm, new_body) = split(new);
    assert_eq!(new_body, old_body, "body byte-identical");
    let diff = similar::TextDiff::from_lines(old_fm, new_fm);
    let mut owner = String::new();
    for ch in diff.iter_all_changes() {
        let line = ch.value();
        match ch.tag() {
            similar::ChangeTag::Equal => {
                if !line.starts_with(' ') && !line.starts_with('-') {
                    owner = line.to_owned();
                }
            }
            similar::ChangeTag::Delete => panic!("an original line was removed: {line:?}"),
            similar::ChangeTag::Insert => {
                if !line.starts_with(' ') && !line.starts_with('-') {
                    owner = line.to_owned();
                }
                assert!(
                    EDITED.iter().any(|k| owner.starts_with(k)),
                    "inserted line {line:?} outside the edited keys (owner {owner:?})"
                );
            }
        }
    }
}

#[test]
fn corpus_v02_acceptance_patch_applies_and_reruns_as_noop() {
    for name in bundles() {
        let (_t, b) = copy_bundle(&corpus(&format!("v0.2/{name}")));
        let concept = pick_concept(&b);
        let file = format!("{concept}.md");
        let before = snapshot(&b);
        let old = std::fs::read_to_string(b.join(&file)).expect("read");
        let args = patch_args(&b, &acceptance_ops(&concept));
        let p = preview(&args);
        assert_eq!(p["status"], "applicable", "{name}: {p}");
        assert_eq!(p["affected_paths"], json!([file]), "{name}");
        assert_eq!(snapshot(&b), before, "{name}: preview writes nothing");
        let a = apply(&apply_args(&args, &p));
        assert_eq!(a["status"], "applied", "{name}");
        assert_eq!(a["result_revision"], p["result_revision"], "{name}");
        assert_eq!(a["diagnostics"], json!([]), "{name}");
        let new = std::fs::read_to_string(b.join(&file)).expect("read");
        assert_only_edited_keys_changed(&old, &new);
        for v in [
            "status: stable",
            "stale_after: 2027-06-30",
            "by: human:reviewer",
            "at: 2026-11-30T12:00:00+01:00",
            "usage_window: { from: 2026-01-01, to: 2026-12-31 }",
            "id: okf-mcp-acceptance",
            "usage_count: 3",
        ] {
            assert!(new.contains(v), "{name}: {v}");
        }
        // Every other visible file is byte-identical.
        let mut expected = before.clone();
        expected.insert(file.clone(), new.clone().into_bytes());
        assert_eq!(visible(&b), expected, "{name}");
        assert_eq!(receipts(&b), 1, "{name}");
        let (err, v) = tool("validate_bundle", &json!({"bundle_path": b}));
        assert!(!err, "{name}: {v}");
        assert_eq!(v["conformance"]["conformant"], true, "{name}: {v}");
        let again = preview(&args);
        assert_eq!(again["status"], "noop", "{name}: {again}");
        assert_eq!(again["base_revision"], a["result_revision"], "{name}");
    }
}

#[test]
fn crp_05_ensure_verification_on_a_corpus_concept_touches_only_that_file() {
    for name in bundles() {
        let (_t, b) = copy_bundle(&corpus(&format!("v0.2/{name}")));
        let concept = pick_concept(&b);
        let file = format!("{concept}.md");
        let before = visible(&b);
        let args = patch_args(
            &b,
            &json!([{"kind": "ensure_verification", "concept_id": concept,
                     "verification": {"by": "human:reviewer", "at": "2026-11-30T12:00:00Z"}}]),
        );
        let p = preview(&args);
        assert_eq!(p["status"], "applicable", "{name}: {p}");
        let a = apply(&apply_args(&args, &p));
        assert_eq!(a["status"], "applied", "{name}");
        assert_eq!(a["changed_paths"], json!([file]), "{name}");
        let after = visible(&b);
        for (k, v) in &before {
            if k != &file {
                assert_eq!(after.get(k), Some(v), "{name}: {k} unchanged");
            }
        }
        assert_eq!(
            after.len(),
            before.len(),
            "{name}: no file added or removed"
        );
        assert_ne!(after[&file], before[&file]);
    }
}
