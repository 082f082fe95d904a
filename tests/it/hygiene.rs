//! SEC-04 / SEC-05: output and filesystem hygiene of whole sessions.
//!
//! Every CLI call and MCP message of the suite is also checked by `util::run_cli` /
//! `client::Mcp::read` (no host temp path in any output; nothing on stderr in a normal run).

use crate::support::util::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};

fn call_in(cwd: &std::path::Path, tmpdir: &std::path::Path, tool: &str, args: &Value) -> Value {
    let out = Command::new(bin())
        .args(["call", tool, "--args", &args.to_string()])
        .current_dir(cwd)
        .env("TMPDIR", tmpdir)
        .env("HOME", tmpdir)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(
        out.stderr.is_empty(),
        "{tool}: stderr {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_no_host_path(&stdout);
    serde_json::from_str(stdout.trim()).expect("one JSON line")
}

#[test]
fn sec_04_05_a_whole_session_writes_nothing_outside_the_bundle_and_nothing_on_stderr() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let cwd = tempfile::tempdir().expect("cwd");
    let tmpdir = tempfile::tempdir().expect("tmpdir");
    let bp = b.to_string_lossy().into_owned();
    call_in(
        cwd.path(),
        tmpdir.path(),
        "list_concepts",
        &json!({"bundle_path": bp}),
    );
    call_in(
        cwd.path(),
        tmpdir.path(),
        "read_concept",
        &json!({"bundle_path": bp, "concept_id": "tables/orders"}),
    );
    call_in(
        cwd.path(),
        tmpdir.path(),
        "validate_bundle",
        &json!({"bundle_path": bp, "strict": true}),
    );
    let ops = json!([{"kind": "set_lifecycle", "concept_id": "tables/orders", "lifecycle": {"status": "draft", "stale_after": null}}]);
    let p = call_in(
        cwd.path(),
        tmpdir.path(),
        "preview_concept_patch",
        &json!({"bundle_path": bp, "actor": "t", "operations": ops}),
    );
    let s = &p["structuredContent"];
    let a = call_in(
        cwd.path(),
        tmpdir.path(),
        "apply_concept_patch",
        &json!({
        "bundle_path": bp, "actor": "t", "operations": ops,
        "expected_revision": s["base_revision"], "expected_plan_digest": s["plan_digest"]}),
    );
    assert_eq!(a["structuredContent"]["status"], "applied");
    let w = call_in(
        cwd.path(),
        tmpdir.path(),
        "write_concept",
        &json!({
        "bundle_path": bp, "concept_id": "notes/x", "frontmatter": "type: Note\n", "body": "x\n"}),
    );
    assert_eq!(w["structuredContent"]["status"], "success", "{w}");
    // Bad input too.
    call_in(
        cwd.path(),
        tmpdir.path(),
        "read_concept",
        &json!({"bundle_path": bp, "concept_id": "no/such"}),
    );
    call_in(
        cwd.path(),
        tmpdir.path(),
        "list_concepts",
        &json!({"bundle_path": "relative"}),
    );
    for dir in [cwd.path(), tmpdir.path()] {
        let left: Vec<_> = std::fs::read_dir(dir).expect("read_dir").collect();
        assert!(
            left.is_empty(),
            "files created outside the bundle: {left:?}"
        );
    }
    // Inside the bundle: only the written files and `.okf/`.
    let mut new: Vec<String> = snapshot(&b)
        .into_keys()
        .filter(|p| !p.starts_with(".okf"))
        .collect();
    new.retain(|p| !snapshot(&fixture("demo")).contains_key(p));
    assert_eq!(new, ["notes/", "notes/x.md"]);
}

#[test]
fn sec_05_mcp_session_keeps_stderr_empty() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let mut m = Mcp::start();
    m.request("tools/list", json!({}));
    m.call("list_concepts", &json!({"bundle_path": b}));
    m.call(
        "read_concept",
        &json!({"bundle_path": b, "concept_id": "../x"}),
    );
    m.call(
        "validate_bundle",
        &json!({"bundle_path": b, "sk_live_SECRET": "hunter2"}),
    );
    let (code, _, stderr) = m.finish();
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
}

/// The contents of every string literal of a Rust source text, outside comments and
/// `#[cfg(test)]` modules: ordinary strings with their escapes kept, raw strings, and not
/// char literals or lifetimes.
fn string_literals(src: &str) -> Vec<String> {
    let src = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
    let b: Vec<char> = src.chars().collect();
    let (mut i, mut out) = (0, Vec::new());
    while i < b.len() {
        match b[i] {
            '/' if b.get(i + 1) == Some(&'/') => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
            }
            '/' if b.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            '\'' => {
                // A char literal ('x', '\n', '\'', '\u{..}') or a lifetime ('a).
                if b.get(i + 1) == Some(&'\\') {
                    i += 2;
                    while i < b.len() && b[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if b.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            'r' if (b.get(i + 1) == Some(&'"') || b.get(i + 1) == Some(&'#'))
                && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&'"') {
                    i += 1;
                    continue;
                }
                j += 1;
                let start = j;
                loop {
                    if j >= b.len() {
                        break;
                    }
                    if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                        break;
                    }
                    j += 1;
                }
                out.push(b[start..j.min(b.len())].iter().collect());
                i = j + 1 + hashes;
            }
            '"' => {
                let mut j = i + 1;
                let start = j;
                while j < b.len() && b[j] != '"' {
                    if b[j] == '\\' {
                        j += 1;
                    }
                    j += 1;
                }
                out.push(b[start..j.min(b.len())].iter().collect());
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[test]
fn aut_05_messages_and_recovery_steps_name_only_registered_tools() {
    // spec/surface.md §18.3 rule 3: every string the server can say (messages, recovery
    // steps, guidance, descriptions) that names something shaped like a tool names a tool
    // that tools/list registers.
    let mut mcp = Mcp::start();
    let list = mcp.request("tools/list", json!({}));
    let tools: Vec<String> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_owned())
        .collect();
    mcp.finish();
    assert!(tools.len() >= 10, "{tools:?}");
    const VERBS: [&str; 13] = [
        "search", "get", "list", "read", "write", "preview", "apply", "validate", "find", "query",
        "update", "create", "delete",
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && !p.to_string_lossy().ends_with("_tests.rs")
            {
                files.push(p);
            }
        }
    }
    let mut scanned = 0;
    let mut unknown = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(&f).expect("read");
        for lit in string_literals(&src) {
            scanned += 1;
            for w in
                lit.split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            {
                let Some((verb, rest)) = w.split_once('_') else {
                    continue;
                };
                // A tool-like name: a verb, then a plural or workflow noun (list_concepts,
                // search_concepts, preview_v02_migration), never a JSON key like read_only.
                let noun_like = rest.ends_with('s')
                    || [
                        "concept",
                        "bundle",
                        "patch",
                        "migration",
                        "upgrade",
                        "graph",
                    ]
                    .iter()
                    .any(|n| rest.ends_with(n));
                if VERBS.contains(&verb) && noun_like && !tools.iter().any(|t| t == w) {
                    let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
                    unknown.push(format!("{rel}: {w}"));
                }
            }
        }
    }
    assert!(
        scanned > 1000,
        "the scan read the sources ({scanned} literals)"
    );
    assert!(
        unknown.is_empty(),
        "names of unregistered tools: {unknown:?}"
    );
}
