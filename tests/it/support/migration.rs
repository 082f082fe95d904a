//! The v0.2 migration workflow (`preview_v02_migration` → `apply_v02_migration`) through
//! `okf-mcp call`, temp bundles written from text, and the computation items of the
//! migration tests (spec/migration.md). Moved from `migration.rs` and
//! `migration_computations.rs`.
#![allow(clippy::disallowed_methods)]

use crate::support::util::call;
use serde_json::{json, Value};
use std::path::Path;

pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(p, text).expect("write");
}

pub(crate) fn read(root: &Path, rel: &str) -> String {
    String::from_utf8(std::fs::read(root.join(rel)).expect("read")).expect("utf8")
}

/// A temp bundle made of `files`.
pub(crate) fn bundle(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("b");
    std::fs::create_dir(&root).expect("mkdir");
    for (p, t) in files {
        write(&root, p, t);
    }
    (dir, root)
}

pub(crate) fn args(root: &Path, extra: Value) -> Value {
    let mut a = json!({
        "bundle_path": root.to_str().expect("utf8 path"),
        "timestamp_policy": "remove_after_copy",
        "citation_mappings": [],
    });
    for (k, v) in extra.as_object().expect("object") {
        a[k] = v.clone();
    }
    a
}

pub(crate) fn preview(a: &Value) -> Value {
    let out = call("preview_v02_migration", a);
    assert!(!out.is_error(), "preview failed: {}", out.stdout);
    out.structured().clone()
}

/// The apply arguments of a preview `p` of `a`.
pub(crate) fn apply_args(a: &Value, p: &Value) -> Value {
    let mut x = a.clone();
    x["expected_source"] = p["source"].clone();
    if let Some(proof) = p.get("proof") {
        x["proof"] = proof.clone();
        x["expected_plan_digest"] = p["plan_digest"].clone();
    }
    x
}

pub(crate) fn apply(a: &Value) -> Value {
    let out = call("apply_v02_migration", a);
    assert!(!out.is_error(), "apply failed: {}", out.stdout);
    out.structured().clone()
}

pub(crate) fn apply_err(a: &Value) -> Value {
    let out = call("apply_v02_migration", a);
    assert!(out.is_error(), "apply should fail: {}", out.stdout);
    out.structured().clone()
}

pub(crate) const ROOT_01: &str = "---\nokf_version: \"0.1\"\n---\n# Bundle\n";

pub(crate) fn query(title: &str) -> String {
    format!("---\ntype: Query\ntitle: {title}\n---\n\nWhat it computes.\n")
}

/// A file-mode item.
pub(crate) fn file_item(
    id: &str,
    computation_path: &str,
    asset_path: &str,
    content: &str,
) -> Value {
    json!({
        "concept_id": id,
        "contract": {
            "mode": "file",
            "runtime": "bigquery",
            "parameters": [{"name": "year", "type": "integer", "required": true}],
            "computation_path": computation_path,
            "executor": {"resource": "run.md", "receipt": ["job_id"]},
            "attester": {"resource": "attest.py"},
        },
        "asset": {"path": asset_path, "content": content},
    })
}

pub(crate) fn inline_item(id: &str, code: &str) -> Value {
    json!({
        "concept_id": id,
        "contract": {
            "mode": "inline",
            "runtime": "python",
            "parameters": [],
            "inline_computation": code,
            "inline_language": "python",
            "executor": {"resource": "run.md", "receipt": ["job_id", "rows"]},
            "attester": {"resource": "attest.py"},
        },
    })
}
