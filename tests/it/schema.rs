//! The checked-in schemas (spec/surface.md §17): the generation gate, structure (SRV-03),
//! envelope shape (SRV-06), input guidance (SCH-01…08) and the patch-input schema cases
//! (PAT-06, PAT-11, PAT-13, PAT-14).

use crate::util::*;
use okf_mcp::wire::schema_gen;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

/// The gate: `schemas/` holds exactly the generated files, byte for byte. Regenerate with
/// `OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it schemas_are_current` (README).
#[test]
#[allow(clippy::disallowed_methods)]
fn schemas_are_current() {
    let dir = schemas_dir();
    let files = schema_gen::all_files();
    if std::env::var_os("OKF_MCP_WRITE_SCHEMAS").is_some() {
        for entry in std::fs::read_dir(&dir).expect("schemas dir") {
            let p = entry.expect("entry").path();
            if p.extension().is_some_and(|e| e == "json") {
                std::fs::remove_file(&p).expect("remove stale schema");
            }
        }
        for (name, v) in &files {
            std::fs::write(dir.join(name), schema_gen::render(v)).expect("write schema");
        }
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("schemas dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(
        on_disk, names,
        "schemas/ file set differs from the generator"
    );
    for (name, v) in &files {
        let text = std::fs::read_to_string(dir.join(name)).expect("read schema");
        assert!(
            text == schema_gen::render(v),
            "schemas/{name} is stale; run OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it schemas_are_current"
        );
    }
}
