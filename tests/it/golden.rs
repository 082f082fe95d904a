//! Golden transcripts: today's observable behaviour of the write tools, byte for byte, so a
//! refactor can prove it changed nothing.
//!
//! Every transcript drives one temp copy of a bundle through the same scenario sequence
//! (preview, apply, exact replay, undo-then-replay, stale apply, tampered digest, rejected,
//! noop, `write_concept` new / identical / changed) through `okf-mcp call` (stdout, stderr,
//! exit code) or through one `okf-mcp serve` session (every JSON-RPC line read for each
//! `tools/call`), and records the whole tree, `.okf/` included, after every write-capable
//! call. With the `fault-injection` feature two more transcripts record a crash right after
//! the journal rename and the recovering next call.
//!
//! The transcripts live in `tests/golden/`. Regenerate them with
//! `OKF_MCP_WRITE_GOLDEN=1 cargo test --features fault-injection --test it golden`;
//! without the variable the test compares and names the first differing line (the actual
//! transcript is left in `target/tmp/golden-actual/` for a full diff).
//!
//! Exactness: an output line is shown pretty-printed only when re-encoding its parsed JSON
//! compactly gives back exactly its bytes (checked on every run); otherwise it is shown as a
//! Rust string literal of its exact text.
//! A `content[].text` that equals the compact encoding of `structuredContent` (checked) is
//! shown as `<= structuredContent>`, a later text item ending with `\n` without `\r` as
//! `<= text block below>` followed by its rows, and a `diff` string that ends with `\n` and holds no
//! `\r` as `<= diff block below>` followed by its rows, each after `| `. So every byte is
//! pinned either way. The spawned binaries run without any `OKF_*` or `RUST_LOG` variable of
//! the test's environment (only the fault rule the crash transcripts name).
//!
//! Normalised, and nothing else:
//! - `commit_time` values (`"commit_time":"YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ"`, taken from the
//!   clock in `src/store/commit.rs` C7 and stored in receipts and journals) → `<COMMIT_TIME>`;
//!   for the files that carry them (`.okf/receipts/*`, `.okf/transactions/*`) the transcript
//!   holds the size and the full normalised text instead of a sha256.
//! - The absolute temp bundle path, which appears only in the arguments sent, → `<BUNDLE>`
//!   (every output is checked not to contain it).
//!
//! No other run-to-run variation was found: receipt, journal, staging and probe names derive
//! from the request (txn id, key digest), and the probe files are removed before each call
//! returns.

#![allow(clippy::disallowed_methods)] // the test edits its own temp trees by hand

use crate::support::patch::apply_args;
use crate::support::util::{
    assert_no_host_path_in_result, bin, copy_bundle, corpus, fixture, snapshot, Mcp,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const ACTOR: &str = "agent:golden";
const WRITE_ENV: &str = "OKF_MCP_WRITE_GOLDEN";
const TIME_PLACEHOLDER: &str = "<COMMIT_TIME>";

// ---------------------------------------------------------------------------------------------
// The bundles
// ---------------------------------------------------------------------------------------------

/// One bundle and the names the scenarios use in it.
struct Case {
    /// Golden file stem.
    name: &'static str,
    /// Source bundle (copied to a temp dir; never written).
    src: PathBuf,
    /// The concept the patches edit.
    concept: &'static str,
    /// A file of the bundle the stale scenario edits by hand.
    other: &'static str,
    /// A concept id that does not exist yet, for `write_concept`.
    new_id: &'static str,
}

fn patch_ext() -> Case {
    Case {
        name: "fixture-patch-ext",
        src: fixture("patch-ext"),
        concept: "metrics/revenue",
        other: "tables/orders.md",
        new_id: "notes/golden",
    }
}

fn write_basic() -> Case {
    Case {
        name: "fixture-write-basic",
        src: fixture("write-basic"),
        concept: "tables/orders",
        other: "index.md",
        new_id: "sales/golden",
    }
}

fn patch_v01() -> Case {
    Case {
        name: "fixture-patch-v01",
        src: fixture("patch-v01"),
        concept: "metrics/a",
        other: "index.md",
        new_id: "metrics/golden",
    }
}

/// The corpus bundle `<version>/crypto_bitcoin`; panics when the corpus is missing.
fn corpus_case(version: &str, name: &'static str) -> Case {
    let src = corpus(&format!("{version}/crypto_bitcoin"));
    assert!(
        src.join("index.md").is_file(),
        "the corpus is missing: {} must hold a copy of shared/corpus/knowledge-catalog \
         (the golden transcripts need it; they never skip)",
        src.display()
    );
    Case {
        name,
        src,
        concept: "tables/blocks",
        other: "tables/inputs.md",
        new_id: "references/golden",
    }
}

fn corpus_v02() -> Case {
    corpus_case("v0.2", "corpus-v0.2-crypto_bitcoin")
}

fn corpus_v01() -> Case {
    corpus_case("v0.1", "corpus-v0.1-crypto_bitcoin")
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

#[test]
fn golden_fixture_patch_ext_cli() {
    check(&patch_ext(), Via::Cli);
}

#[test]
fn golden_fixture_patch_ext_mcp() {
    check(&patch_ext(), Via::Mcp);
}

#[test]
fn golden_fixture_write_basic_cli() {
    check(&write_basic(), Via::Cli);
}

#[test]
fn golden_fixture_patch_v01_cli() {
    check(&patch_v01(), Via::Cli);
}

#[test]
fn golden_corpus_v02_cli() {
    check(&corpus_v02(), Via::Cli);
}

#[test]
fn golden_corpus_v02_mcp() {
    check(&corpus_v02(), Via::Mcp);
}

#[test]
fn golden_corpus_v01_cli() {
    check(&corpus_v01(), Via::Cli);
}

#[cfg(feature = "fault-injection")]
#[test]
fn golden_crash_fixture_patch_ext_cli() {
    check_crash(&patch_ext());
}

#[cfg(feature = "fault-injection")]
#[test]
fn golden_crash_corpus_v02_cli() {
    check_crash(&corpus_v02());
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    Cli,
    Mcp,
}

impl Via {
    fn label(self) -> &'static str {
        match self {
            Via::Cli => "cli",
            Via::Mcp => "mcp",
        }
    }
}

fn check(case: &Case, via: Via) {
    let text = transcript(case, via);
    compare(&format!("{}.{}.txt", case.name, via.label()), &text);
}

#[cfg(feature = "fault-injection")]
fn check_crash(case: &Case) {
    let (_tmp, bundle) = copy_bundle(&case.src);
    let mut r = Recorder::new(&bundle, Via::Cli);
    r.title(&format!(
        "crash after the journal rename, then the recovering next call ({}, via cli)",
        case.name
    ));
    let args = patch_args(
        &bundle,
        &json!([{"kind": "put_source", "concept_id": case.concept,
                 "source": {"id": "golden-crash", "resource": "https://example.test/golden-crash"}}]),
    );
    r.tree_titled("initial tree");
    r.scenario("crash.1 preview");
    let p = r.call("preview_concept_patch", &args);
    r.scenario("crash.2 apply with OKF_MCP_FAULT=after_journal_rename:crash");
    r.call_env(
        "apply_concept_patch",
        &apply_args(&args, &p),
        &[("OKF_MCP_FAULT", "after_journal_rename:crash")],
    );
    r.tree();
    r.scenario("crash.3 the same apply again (recovery completes the journal)");
    r.call("apply_concept_patch", &apply_args(&args, &p));
    r.tree();
    r.scenario("crash.4 the same apply once more (plain replay)");
    r.call("apply_concept_patch", &apply_args(&args, &p));
    r.tree();
    let text = r.finish();
    compare(&format!("{}.crash.cli.txt", case.name), &text);
}

// ---------------------------------------------------------------------------------------------
// The scenario sequence
// ---------------------------------------------------------------------------------------------

fn patch_args(bundle: &Path, ops: &Value) -> Value {
    json!({"bundle_path": bundle, "actor": ACTOR, "operations": ops})
}

fn transcript(case: &Case, via: Via) -> String {
    let (_tmp, b) = copy_bundle(&case.src);
    let mut r = Recorder::new(&b, via);
    r.title(&format!(
        "golden transcript of {} (copy of {}), via {}",
        case.name,
        source_label(&case.src),
        via.label()
    ));
    r.tree_titled("initial tree");

    // 1–4: one patch through preview, apply, exact replay and undo-then-replay.
    let main = patch_args(
        &b,
        &json!([{"kind": "ensure_verification", "concept_id": case.concept,
                 "verification": {"by": "human:golden", "at": "2026-11-30T12:00:00Z"}}]),
    );
    r.scenario("1 preview");
    let p = r.call("preview_concept_patch", &main);
    let before_apply = snapshot(&b);
    r.scenario("2 apply");
    let a = r.call("apply_concept_patch", &apply_args(&main, &p));
    r.tree();
    r.scenario("3 exact replay of the apply");
    r.call("apply_concept_patch", &apply_args(&main, &p));
    r.tree();
    r.scenario("4 undo by hand, then the same apply again");
    let changed: Vec<String> = a["changed_paths"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for rel in &changed {
        match before_apply.get(rel) {
            Some(bytes) => r.hand_write(rel, bytes, "restore the pre-apply bytes"),
            None => r.hand_remove(rel),
        }
    }
    r.call("apply_concept_patch", &apply_args(&main, &p));
    r.tree();

    // 5: stale apply.
    let stale = patch_args(
        &b,
        &json!([{"kind": "put_source", "concept_id": case.concept,
                 "source": {"id": "golden-stale", "resource": "https://example.test/golden-stale"}}]),
    );
    r.scenario("5 stale apply: preview, edit a file by hand, apply");
    let p = r.call("preview_concept_patch", &stale);
    let other_bytes = std::fs::read(b.join(case.other)).expect("read the file to edit");
    let mut edited = other_bytes.clone();
    edited.extend_from_slice(b"\nEdited by hand.\n");
    r.hand_write(case.other, &edited, "a foreign edit");
    r.call("apply_concept_patch", &apply_args(&stale, &p));
    r.tree();
    r.hand_write(case.other, &other_bytes, "undo the foreign edit");

    // 6: tampered digest.
    let tamper = patch_args(
        &b,
        &json!([{"kind": "set_lifecycle", "concept_id": case.concept,
                 "lifecycle": {"status": "stable", "stale_after": "2027-06-30"}}]),
    );
    r.scenario("6 tampered digest: apply with a wrong but well-formed expected_plan_digest");
    let p = r.call("preview_concept_patch", &tamper);
    let mut t = apply_args(&tamper, &p);
    t["expected_plan_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    r.call("apply_concept_patch", &t);
    r.tree();

    // 7: rejected.
    let rejected = patch_args(
        &b,
        &json!([{"kind": "ensure_verification", "concept_id": "golden/no-such-concept",
                 "verification": {"by": "human:golden", "at": "2026-11-30T12:00:00Z"}}]),
    );
    r.scenario("7 rejected: a patch on a missing concept, preview and apply");
    let p = r.call("preview_concept_patch", &rejected);
    r.call("apply_concept_patch", &apply_args(&rejected, &p));
    r.tree();

    // 8: noop.
    let noop = patch_args(
        &b,
        &json!([{"kind": "remove_verification", "concept_id": case.concept,
                 "verification": {"by": "human:nobody", "at": "2026-07-01T00:00:00Z"}}]),
    );
    r.scenario("8 noop: a patch that changes nothing, preview and apply");
    let p = r.call("preview_concept_patch", &noop);
    r.call("apply_concept_patch", &apply_args(&noop, &p));
    r.tree();

    // 9: write_concept.
    let new = json!({"bundle_path": b, "concept_id": case.new_id,
        "frontmatter": "type: Note\ntitle: Golden\n", "body": "# Golden\n\nA new concept.\n"});
    r.scenario("9.1 write_concept: a new file");
    r.call("write_concept", &new);
    r.tree();
    r.scenario("9.2 write_concept: identical content (replay)");
    r.call("write_concept", &new);
    r.tree();
    let mut changed = new.clone();
    changed["body"] = json!("# Golden\n\nA changed concept.\n");
    r.scenario("9.3 write_concept: changed content");
    r.call("write_concept", &changed);
    r.tree();

    r.finish()
}

fn source_label(src: &Path) -> String {
    let s = src.to_string_lossy();
    match s.find("fixtures/bundles/").or_else(|| s.find("corpus/")) {
        Some(i) => s[i..].to_owned(),
        None => s.into_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// The recorder
// ---------------------------------------------------------------------------------------------

struct Recorder {
    out: String,
    bundle: PathBuf,
    bundle_str: String,
    mcp: Option<Mcp>,
}

impl Recorder {
    fn new(bundle: &Path, via: Via) -> Self {
        let bundle_str = bundle.to_str().expect("utf-8 temp path").to_owned();
        Self {
            out: String::new(),
            bundle: bundle.to_path_buf(),
            bundle_str,
            mcp: (via == Via::Mcp).then(Mcp::start),
        }
    }

    fn title(&mut self, t: &str) {
        let _ = writeln!(self.out, "# {t}");
        let _ = writeln!(
            self.out,
            "# Format: tests/it/golden.rs. Regenerate: {WRITE_ENV}=1 cargo test --features fault-injection --test it golden"
        );
    }

    fn scenario(&mut self, s: &str) {
        let _ = writeln!(self.out, "\n== {s}");
    }

    /// Sends `tool` and records it; returns `structuredContent` (`null` if there is none).
    fn call(&mut self, tool: &str, args: &Value) -> Value {
        self.call_env(tool, args, &[])
    }

    fn call_env(&mut self, tool: &str, args: &Value, env: &[(&str, &str)]) -> Value {
        let args_text = args.to_string();
        let shown_args = args_text.replace(&self.bundle_str, "<BUNDLE>");
        if let Some(mcp) = self.mcp.as_mut() {
            assert!(env.is_empty(), "environment hooks need the CLI");
            let lines = mcp.request_raw("tools/call", json!({"name": tool, "arguments": args}));
            let _ = writeln!(self.out, "\n--- mcp tools/call {tool}");
            let _ = writeln!(self.out, "arguments: {shown_args}");
            let mut last = Value::Null;
            for line in &lines {
                assert!(
                    !line.contains(&self.bundle_str),
                    "a response leaks the bundle path: {line}"
                );
                let _ = writeln!(self.out, "line:");
                self.out.push_str(&indent(&render(line), 2));
                last = serde_json::from_str(line).expect("JSON-RPC");
            }
            return last["result"]["structuredContent"].clone();
        }
        let mut cmd = Command::new(bin());
        cmd.args(["call", tool, "--args", &args_text]);
        // The child sees no test hook or log filter but the ones named here.
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("OKF_") || k == "RUST_LOG" {
                cmd.env_remove(k.as_ref());
            }
        }
        let mut env_label = String::new();
        for (k, v) in env {
            cmd.env(k, v);
            let _ = write!(env_label, " {k}={v}");
        }
        let out = cmd.output().expect("spawn okf-mcp");
        let stdout = String::from_utf8(out.stdout).expect("utf-8 stdout");
        let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
        assert_no_host_path_in_result(&stdout);
        for s in [&stdout, &stderr] {
            assert!(
                !s.contains(&self.bundle_str),
                "an output leaks the bundle path: {s}"
            );
        }
        let _ = writeln!(
            self.out,
            "\n--- cli{env_label} okf-mcp call {tool} --args <arguments>"
        );
        let _ = writeln!(self.out, "arguments: {shown_args}");
        let code = out
            .status
            .code()
            .map_or_else(|| "killed by a signal".to_owned(), |c| c.to_string());
        let _ = writeln!(self.out, "exit: {code}");
        let _ = writeln!(self.out, "stdout:");
        self.out.push_str(&render_stream(&stdout));
        let _ = writeln!(self.out, "stderr:");
        self.out.push_str(&render_stream(&stderr));
        serde_json::from_str::<Value>(stdout.trim_end())
            .map(|v| v["structuredContent"].clone())
            .unwrap_or(Value::Null)
    }

    fn hand_write(&mut self, rel: &str, bytes: &[u8], why: &str) {
        std::fs::write(self.bundle.join(rel), bytes).expect("hand edit");
        let _ = writeln!(
            self.out,
            "\n--- by hand ({why}): write {rel}  {} bytes  sha256:{}",
            bytes.len(),
            sha256_hex(bytes)
        );
    }

    fn hand_remove(&mut self, rel: &str) {
        std::fs::remove_file(self.bundle.join(rel)).expect("hand remove");
        let _ = writeln!(self.out, "\n--- by hand: remove {rel}");
    }

    fn tree(&mut self) {
        self.tree_titled("tree");
    }

    /// Every path under the bundle root, `.okf/` included.
    fn tree_titled(&mut self, title: &str) {
        let _ = writeln!(self.out, "{title}:");
        for (path, bytes) in snapshot(&self.bundle) {
            if path.ends_with('/') {
                let _ = writeln!(self.out, "  d {path}");
            } else if path.ends_with('@') || path.ends_with('!') {
                let _ = writeln!(
                    self.out,
                    "  s {path} -> {}",
                    String::from_utf8_lossy(&bytes)
                );
            } else if path.starts_with(".okf/receipts/") || path.starts_with(".okf/transactions/") {
                let _ = writeln!(
                    self.out,
                    "  t {path}  {} bytes  (full text; commit_time normalised)",
                    bytes.len()
                );
                match String::from_utf8(bytes) {
                    Ok(text) => self
                        .out
                        .push_str(&indent(&render(&normalise_time(&text)), 6)),
                    Err(e) => {
                        let _ = writeln!(self.out, "      (not UTF-8: {e})");
                    }
                }
            } else {
                let _ = writeln!(
                    self.out,
                    "  f {path}  {} bytes  sha256:{}",
                    bytes.len(),
                    sha256_hex(&bytes)
                );
            }
        }
    }

    fn finish(mut self) -> String {
        if let Some(mcp) = self.mcp.take() {
            let (code, _, stderr) = mcp.finish();
            let _ = writeln!(self.out, "\n--- mcp session closed (stdin EOF)");
            let _ = writeln!(self.out, "exit: {code}");
            let _ = writeln!(self.out, "stderr:");
            self.out.push_str(&render_stream(&stderr));
        }
        self.out
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines().fold(String::new(), |mut s, l| {
        let _ = writeln!(s, "{pad}{l}");
        s
    })
}

/// A whole output stream: `(empty)`, or each line rendered, or the unterminated rest raw.
fn render_stream(s: &str) -> String {
    if s.is_empty() {
        return "  (empty)\n".to_owned();
    }
    let mut out = String::new();
    for line in s.split_inclusive('\n') {
        out.push_str(&indent(&render(line), 2));
    }
    out
}

/// One line (with or without its `\n`): pretty JSON when its compact re-encoding is exactly
/// its bytes, otherwise as an escaped string literal. The first row says which and whether a
/// newline ends it.
fn render(line: &str) -> String {
    let (body, nl) = match line.strip_suffix('\n') {
        Some(b) => (b, "ends with \\n"),
        None => (line, "no final \\n"),
    };
    let body = normalise_time(body);
    if let Ok(v) = serde_json::from_str::<Value>(&body) {
        if serde_json::to_string(&v).expect("encode") == body {
            let mut diffs = Vec::new();
            let mut blocks = Vec::new();
            let v = fold_diffs(fold_text(v, &mut blocks), &mut diffs);
            let pretty = serde_json::to_string_pretty(&v).expect("encode");
            let mut out = format!("[compact JSON, {nl}; shown pretty]\n{pretty}\n");
            for t in blocks {
                out.push_str("[a text item above, verbatim, one row per line after `| `]\n");
                for l in t.lines() {
                    let _ = writeln!(out, "| {l}");
                }
            }
            for d in diffs {
                out.push_str("[the `diff` string above, verbatim, one row per line after `| `]\n");
                for l in d.lines() {
                    let _ = writeln!(out, "| {l}");
                }
            }
            return out;
        }
    }
    // Not canonical JSON: the exact bytes, as a Rust string literal (unambiguous, one line).
    format!("[not compact JSON, {nl}; shown as a Rust string literal]\n{body:?}\n")
}

/// In a CallToolResult (bare or as a JSON-RPC `result`), replaces every `content[].text`
/// that equals the compact encoding of `structuredContent` with `<= structuredContent>`, and
/// every later text item that ends with `\n` and holds no `\r` (the readable lines of an
/// error, a preview's summary and diff, `read_concept`'s bytes: spec/surface.md §18.2) with
/// `<= text block below>`, collected into `blocks` in order.
fn fold_text(mut v: Value, blocks: &mut Vec<String>) -> Value {
    fn fold(r: &mut Value, blocks: &mut Vec<String>) {
        let Some(sc) = r.get("structuredContent") else {
            return;
        };
        let compact = serde_json::to_string(sc).expect("encode");
        if let Some(items) = r.get_mut("content").and_then(Value::as_array_mut) {
            for item in items {
                match item.get("text").and_then(Value::as_str) {
                    Some(t) if t == compact => item["text"] = json!("<= structuredContent>"),
                    Some(t) if t.ends_with('\n') && !t.contains('\r') => {
                        blocks.push(t.to_owned());
                        item["text"] = json!("<= text block below>");
                    }
                    _ => {}
                }
            }
        }
    }
    fold(&mut v, blocks);
    if let Some(r) = v.get_mut("result") {
        fold(r, blocks);
    }
    v
}

/// Replaces every `diff` member that is a non-empty string ending with `\n` and holding no
/// `\r` with `<= diff block below>` and collects it, so a diff reads as text. Exact: such a
/// string is its rows joined with `\n` plus a final `\n`.
fn fold_diffs(v: Value, out: &mut Vec<String>) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, x)| match x {
                    Value::String(d) if k == "diff" && d.ends_with('\n') && !d.contains('\r') => {
                        out.push(d);
                        (k, json!("<= diff block below>"))
                    }
                    x => (k, fold_diffs(x, out)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(|x| fold_diffs(x, out)).collect()),
        x => x,
    }
}

/// `"commit_time":"YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ"` → `"commit_time":"<COMMIT_TIME>"`; the
/// only clock-derived value of the transcripts. Values of another shape are left as they are
/// (and then fail the comparison).
fn normalise_time(s: &str) -> String {
    const KEY: &str = "\"commit_time\":\"";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(KEY) {
        let (head, tail) = rest.split_at(i + KEY.len());
        out.push_str(head);
        let value = tail.get(..30).unwrap_or_default();
        if is_commit_time_shape(value) && tail[30..].starts_with('"') {
            out.push_str(TIME_PLACEHOLDER);
            rest = &tail[30..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

fn is_commit_time_shape(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 30
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            29 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn compare(file: &str, actual: &str) {
    let path = golden_dir().join(file);
    if std::env::var_os(WRITE_ENV).is_some() {
        std::fs::create_dir_all(golden_dir()).expect("mkdir tests/golden");
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-actual");
    std::fs::create_dir_all(&keep).expect("mkdir golden-actual");
    std::fs::write(keep.join(file), actual).expect("write actual transcript");
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "tests/golden/{file} cannot be read ({e}); generate it with \
             {WRITE_ENV}=1 cargo test --features fault-injection --test it golden"
        )
    });
    if expected == actual {
        return;
    }
    let (el, al): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let n = el
        .iter()
        .zip(&al)
        .position(|(e, a)| e != a)
        .unwrap_or(el.len().min(al.len()));
    let from = n.saturating_sub(3);
    let mut msg = format!(
        "golden transcript tests/golden/{file} differs at line {}:\n",
        n + 1
    );
    for (i, l) in el.iter().enumerate().take(n).skip(from) {
        let _ = writeln!(msg, "   {:>5}   {l}", i + 1);
    }
    let _ = writeln!(
        msg,
        "-  {:>5}   {}",
        n + 1,
        el.get(n).copied().unwrap_or("<end of file>")
    );
    let _ = writeln!(
        msg,
        "+  {:>5}   {}",
        n + 1,
        al.get(n).copied().unwrap_or("<end of file>")
    );
    let _ = writeln!(
        msg,
        "(- golden, + actual; the whole actual transcript is {}; if the change is intended, \
         regenerate with {WRITE_ENV}=1 cargo test --features fault-injection --test it golden)",
        keep.join(file).display()
    );
    panic!("{msg}");
}
