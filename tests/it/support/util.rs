//! Shared helpers: temp copies of bundles, tree snapshots, the CLI, and the MCP client of
//! `client.rs` (re-exported here).

#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use crate::support::client::{tools_call_frame, Mcp};

/// The built binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_okf-mcp"))
}

/// `fixtures/bundles/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bundles")
        .join(name)
}

/// `../shared/corpus/knowledge-catalog/<rel>`.
pub fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/knowledge-catalog")
        .join(rel)
}

/// A temp dir holding a copy of `src` at `<tmp>/bundle`; returns (guard, bundle path).
pub fn copy_bundle(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dst = tmp.path().join("bundle");
    copy_dir(src, &dst);
    (tmp, dst)
}

/// Recursive copy of regular files and directories (no symlinks expected in sources).
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    let mut entries: Vec<_> = std::fs::read_dir(src)
        .expect("read_dir")
        .map(|e| e.expect("entry"))
        .collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let ft = e.file_type().expect("file_type");
        let to = dst.join(e.file_name());
        if ft.is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

/// Every file under `root` (including `.okf/`), as relative path → bytes; directories as
/// `path/` → empty; symlinks as `path@` → target; special files as `path!` → their type.
pub fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let e = e.expect("entry");
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .into_owned();
            let ft = e.file_type().expect("ft");
            if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &p, out);
            } else if ft.is_symlink() {
                out.insert(
                    format!("{rel}@"),
                    std::fs::read_link(&p)
                        .expect("readlink")
                        .to_string_lossy()
                        .into_owned()
                        .into_bytes(),
                );
            } else if ft.is_file() {
                out.insert(rel, std::fs::read(&p).expect("read"));
            } else {
                // FIFOs, sockets, devices: recorded by type, never opened (a FIFO would block).
                out.insert(format!("{rel}!"), format!("{ft:?}").into_bytes());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Result of one CLI run.
#[derive(Debug)]
pub struct CliOut {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// The parsed CallToolResult, when stdout held one line of JSON.
    pub result: Option<Value>,
}

impl CliOut {
    /// `structuredContent`.
    pub fn structured(&self) -> &Value {
        &self.result.as_ref().expect("a CallToolResult")["structuredContent"]
    }
    /// `isError`.
    pub fn is_error(&self) -> bool {
        self.result.as_ref().expect("a CallToolResult")["isError"] == json!(true)
    }
    /// The first text item (the compact JSON of `structuredContent`, spec/surface.md §18.2).
    pub fn text(&self) -> &str {
        self.result.as_ref().expect("a CallToolResult")["content"][0]["text"]
            .as_str()
            .expect("text")
    }
    /// The second text item: `read_concept`'s file bytes, a preview's summary, an error's
    /// readable lines (spec/surface.md §18.2).
    pub fn second_text(&self) -> &str {
        self.result.as_ref().expect("a CallToolResult")["content"][1]["text"]
            .as_str()
            .expect("a second text item")
    }
}

/// AUT-04 (spec/surface.md §18.2) for an error CallToolResult `r`: exactly two text items,
/// the first the compact JSON of the envelope, the second starting with its message line
/// `<message> (<code>)`.
pub fn assert_error_texts(r: &Value) {
    let items = r["content"].as_array().expect("content");
    assert_eq!(items.len(), 2, "{r}");
    assert_eq!(
        items[0]["text"].as_str().expect("text"),
        r["structuredContent"].to_string(),
        "first text item = compact structuredContent"
    );
    let env = &r["structuredContent"];
    let head = format!(
        "{} ({})\n",
        env["message"].as_str().expect("message"),
        env["code"].as_str().expect("code")
    );
    assert!(
        items[1]["text"].as_str().expect("text").starts_with(&head),
        "{r}"
    );
}

/// Runs `okf-mcp <args…>` with optional stdin.
pub fn run_cli(args: &[&str], stdin: Option<&[u8]>) -> CliOut {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn okf-mcp");
    {
        let mut si = child.stdin.take().expect("stdin");
        if let Some(b) = stdin {
            si.write_all(b).expect("write stdin");
        }
    }
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    // SEC-04 / SEC-05 for every CLI call of the suite: no host temp path in any output, and
    // nothing on stderr unless the run was a usage error (2) or an internal fault (3).
    assert_no_host_path_in_result(&stdout);
    if code == 0 || code == 1 {
        assert!(stderr.is_empty(), "stderr of a normal run: {stderr}");
    }
    let result = if stdout.lines().count() == 1 {
        serde_json::from_str(stdout.trim_end()).ok()
    } else {
        None
    };
    CliOut {
        code,
        stdout,
        stderr,
        result,
    }
}

/// `okf-mcp call <tool> --args <json>`.
pub fn call(tool: &str, args: &Value) -> CliOut {
    run_cli(&["call", tool, "--args", &args.to_string()], None)
}

/// `okf-mcp call <tool> --args <json>` with extra environment variables (test hooks of a
/// `fault-injection` build); asserts the exit code `code` and returns the parsed result line
/// and stderr.
pub fn call_env_exit(tool: &str, args: &Value, env: &[(&str, &str)], code: i32) -> (Value, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["call", tool, "--args", &args.to_string()]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("spawn okf-mcp");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(code), "{stdout}");
    let result = serde_json::from_str(stdout.trim_end()).expect("one JSON line");
    (result, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The three compared members of a CallToolResult (spec/surface.md §1.2 "Identity").
pub fn identity(r: &Value) -> Value {
    json!({"content": r["content"], "structuredContent": r["structuredContent"], "isError": r["isError"]})
}

/// SEC-04: no tool output may contain an absolute host path. Every fixture copy lives under
/// the system temp dir, so any occurrence of that prefix in an output is a leak.
pub fn assert_no_host_path(output: &str) {
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_string_lossy();
    let tmp = tmp.trim_end_matches('/');
    assert!(
        tmp.len() <= 1 || !output.contains(&format!("{tmp}/")),
        "an output leaks an absolute host path: {output}"
    );
}

/// [`assert_no_host_path`] on a CallToolResult or JSON-RPC line, leaving out the members that
/// are designed to carry document text (spec/surface.md §10: `read_concept` bytes and
/// projection, diffs, card strings copied from frontmatter) and the text content that mirrors
/// or carries them. Everything the server itself authors (messages, paths, codes) is checked.
pub fn assert_no_host_path_in_result(output: &str) {
    let Ok(mut v) = serde_json::from_str::<Value>(output.trim()) else {
        assert_no_host_path(output);
        return;
    };
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in [
                    "diff",
                    "frontmatter_yaml",
                    "body",
                    "content",
                    "projection",
                    "title",
                    "description",
                    "resource",
                    "runtime",
                    "executor",
                    "attester",
                    "tags",
                ] {
                    m.remove(k);
                }
                for x in m.values_mut() {
                    strip(x);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    assert_no_host_path(&v.to_string());
}

/// Whether a [`snapshot`] key is part of the visible bundle: not the root `.okf` (every key
/// starting with `.okf`, as the suite has always counted it).
pub fn is_visible(key: &str) -> bool {
    !key.starts_with(".okf")
}

/// The visible bundle: [`snapshot`] without `.okf/`.
pub fn visible(b: &Path) -> BTreeMap<String, Vec<u8>> {
    snapshot(b)
        .into_iter()
        .filter(|(k, _)| is_visible(k))
        .collect()
}

/// [`visible`] of a snapshot already taken.
pub fn visible_of(s: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    s.iter()
        .filter(|(k, _)| is_visible(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
