//! `tests/COVERAGE.md` maps every scenario id of `../shared/spec/scenarios.md` to the tests
//! that prove it; this test fails when the file is stale (regenerate with
//! `python3 tests/tools/gen_coverage.py`).

use std::path::Path;
use std::process::Command;

#[test]
fn coverage_map_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        root.join("../shared/spec/scenarios.md").exists(),
        "../shared/spec/scenarios.md is missing: the coverage map cannot be checked (the spec must sit beside the checkout)"
    );
    let out = Command::new("python3")
        .arg("tests/tools/gen_coverage.py")
        .arg("--check")
        .current_dir(root)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
