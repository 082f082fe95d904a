//! The real-client tests' shared pieces (`python_client`, `mcp_use_client`, `ts_client`,
//! `inspector`): finding what `.ci/run` installed under `target/`, a call plan in a temp
//! file, running a client script and reading the JSON report it prints on stdout, and the
//! check that a client listed every registered tool.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// `<repo>/<rel>`: a client script or an install of this checkout.
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// `target/<dir>` when every one of `files` (relative to it) exists.
fn installed(dir: &str, files: &[&str]) -> Option<PathBuf> {
    let d = repo_path("target").join(dir);
    files.iter().all(|f| d.join(f).exists()).then_some(d)
}

/// `target/<dir>` when `files` are installed there. Otherwise `None` outside CI, after a
/// `SKIPPED <test>` line on stderr (the caller returns), and a failure when `CI` is set.
pub fn installed_or_skip(test: &str, dir: &str, files: &[&str], what: &str) -> Option<PathBuf> {
    if let Some(d) = installed(dir, files) {
        return Some(d);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is missing under CI: .ci/run installs it into target/{dir}"
    );
    eprintln!("SKIPPED {test}: target/{dir} is missing; run `bash .ci/run` (it installs {what})");
    None
}

/// `target/<dir>` when `files` are installed there; fails the test otherwise.
pub fn installed_or_fail(dir: &str, files: &[&str], what: &str) -> PathBuf {
    installed(dir, files).unwrap_or_else(|| {
        panic!("{what} is missing: run `bash .ci/run` (it installs target/{dir})")
    })
}

/// A temp file holding `plan` (the calls a client script makes), removed on drop.
pub fn plan_file(plan: &Value) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().expect("plan file");
    #[allow(clippy::disallowed_methods)] // a test's own temp file
    std::fs::write(f.path(), plan.to_string()).expect("write plan");
    f
}

/// What a client script printed: its JSON report (stdout), its stderr, and how it exited.
pub struct Report {
    /// The report, parsed from the whole of stdout.
    pub json: Value,
    /// stderr, for failure messages.
    pub stderr: String,
    /// The script's exit status.
    pub status: ExitStatus,
}

impl Report {
    /// Asserts the report's `failures` list is empty (the report and stderr are shown
    /// otherwise).
    pub fn assert_no_failures(&self) {
        assert_eq!(
            self.json["failures"],
            Value::Array(Vec::new()),
            "{:#}; stderr: {}",
            self.json,
            self.stderr
        );
    }
}

/// Runs a client script; fails the test, showing both streams, unless stdout is one JSON
/// value.
pub fn run_report(cmd: &mut Command, what: &str) -> Report {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("run the {what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("{what} report not JSON ({e}); stdout: {stdout}; stderr: {stderr}")
    });
    Report {
        json,
        stderr,
        status: out.status,
    }
}

/// The tools a client listed (`tools`, an array of objects with a `name`), after asserting
/// their names are the registered tools in registry order.
pub fn every_tool_listed(tools: &Value) -> &[Value] {
    let tools = tools.as_array().map_or(&[][..], Vec::as_slice);
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let registered: Vec<&str> = okf_mcp::wire::registry::all()
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, registered, "the listed tools");
    tools
}
