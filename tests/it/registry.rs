//! The tool registry's source: `src/tools/mod.rs` declares each tool module inside its
//! `registry!` list, and rustfmt does not follow `mod` items that a macro declares, so
//! `cargo fmt` neither formats nor checks those files. This test checks them instead; format
//! them with `rustfmt --edition 2021 src/tools/<tool>.rs`.

use std::path::Path;
use std::process::Command;

#[test]
fn registered_tool_modules_are_rustfmt_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
    // A tool's module is named after the tool (checked by the unit tests of `tools`).
    let files: Vec<_> = okf_mcp::tools::TOOLS
        .iter()
        .map(|t| dir.join(format!("{}.rs", t.name)))
        .collect();
    assert!(!files.is_empty());
    for f in &files {
        assert!(f.is_file(), "{} is not a file", f.display());
    }
    let out = Command::new("rustfmt")
        .args(["--check", "--edition", "2021"])
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run rustfmt (install the rustfmt component): {e}"));
    assert!(
        out.status.success(),
        "tool modules are not formatted; run: rustfmt --edition 2021 src/tools/<tool>.rs\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
