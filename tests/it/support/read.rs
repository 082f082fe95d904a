//! Temp bundles written from text, and CLI calls that must succeed or fail. Moved from
//! `read_tools.rs`.

use crate::support::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Test setup only: writes one file of a temporary bundle copy (the store's write rule,
/// spec/store.md S-1, governs `src/`, not test fixtures).
#[allow(clippy::disallowed_methods)]
pub fn write_file(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

/// A temp bundle holding exactly `files` (path, text).
pub fn tmp_bundle(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("bundle");
    std::fs::create_dir_all(&root).expect("mkdir");
    for (p, t) in files {
        let f = root.join(p);
        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
        write_file(&f, t);
    }
    (tmp, root)
}

/// Runs `tool` over the CLI, asserting success; returns the CLI output.
pub fn ok(tool: &str, args: &Value) -> CliOut {
    let out = call(tool, args);
    assert_eq!(
        out.code, 0,
        "{tool} {args}: stdout {} stderr {}",
        out.stdout, out.stderr
    );
    assert!(!out.is_error());
    out
}

/// Runs `tool` over the CLI, asserting a tool error; returns the CLI output.
pub fn err(tool: &str, args: &Value) -> CliOut {
    let out = call(tool, args);
    assert_eq!(out.code, 1, "{tool} {args}: stdout {}", out.stdout);
    assert!(out.is_error());
    out
}
