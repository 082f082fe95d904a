//! `okf-mcp migrate` (issue 20 item 6): the four-call sequence of spec/migration.md §12.7
//! rule 6 (MIG-44) through the guided subcommand, on copies of `fixtures/bundles/demo-v01`
//! and on generated v0.1 bundles (`support/gen.rs`). Every step after the first runs
//! the command line the previous summary printed, through `sh -c` (pipes) or util-linux
//! `script` (a pseudo-terminal), from the directory holding the bundle, so the bundle
//! argument is the relative `b` and no output may hold a host path. The summaries are checked
//! against the tool's own answers (`okf-mcp call` with the same arguments).
#![allow(clippy::disallowed_methods)] // tests build their own temp trees

use crate::support::gen::{generate, Spec};
use crate::support::util::{
    assert_no_host_path, assert_no_host_path_in_result, bin, call, copy_dir, fixture, identity,
    snapshot, visible_of,
};
use serde_json::{json, Value};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ACTOR: &str = "catalog-generator/1.0";
const POLICY: &str = "remove_after_copy";
/// The `limit` the CLI asks for when `--limit` is not given.
const CLI_LIMIT: u64 = 50;

/// One run of the binary.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    /// What ran, for failure messages.
    what: String,
}

impl Run {
    fn context(&self) -> String {
        format!(
            "{}\nexit: {}\nstdout:\n{}\nstderr:\n{}",
            self.what, self.code, self.stdout, self.stderr
        )
    }
}

fn finish(what: String, out: &std::process::Output) -> Run {
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        what,
    };
    // Rule 8: the bundle argument is relative, so no output may hold a host path.
    assert_no_host_path_in_result(&r.stdout);
    assert_no_host_path(&r.stderr);
    r
}

/// `okf-mcp <args>` in `dir`, stdio on pipes.
fn okf(dir: &Path, args: &[&OsStr]) -> Run {
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env_remove("TERM")
        .stdin(Stdio::null())
        .output()
        .expect("spawn okf-mcp");
    finish(format!("in {}: okf-mcp {args:?}", dir.display()), &out)
}

fn migrate(dir: &Path, args: &[&str]) -> Run {
    let mut all: Vec<&OsStr> = vec![OsStr::new("migrate")];
    all.extend(args.iter().map(OsStr::new));
    okf(dir, &all)
}

/// `PATH` with the built binary's directory first, so a printed `okf-mcp …` line runs it.
fn path_with_bin() -> String {
    let dir = bin().parent().expect("bin dir").to_owned();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", dir.display())
}

/// A printed command line, run as printed by `sh -c` in `dir` (pipes).
fn run_printed(dir: &Path, line: &str) -> Run {
    assert!(line.starts_with("okf-mcp migrate "), "{line}");
    let out = Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", path_with_bin())
        .env_remove("TERM")
        .stdin(Stdio::null())
        .output()
        .expect("sh runs the printed command");
    finish(format!("in {}: sh -c {line:?}", dir.display()), &out)
}

/// A printed command line, run as printed under a pseudo-terminal (util-linux `script`,
/// `TERM=xterm`) in `dir`. `stdout` is the summary (after the bar, `\r\n` as `\n`), `stderr`
/// what was drawn before it (the progress bar); the bar must have been erased.
fn run_printed_on_a_terminal(dir: &Path, line: &str) -> Run {
    assert!(line.starts_with("okf-mcp migrate "), "{line}");
    let out = Command::new("script")
        .args(["-q", "-e", "-c", line, "/dev/null"])
        .current_dir(dir)
        .env("PATH", path_with_bin())
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("util-linux `script` must be installed: it runs the CLI under a pseudo-terminal");
    let tty = String::from_utf8_lossy(&out.stdout).into_owned();
    let what = format!(
        "in {}: TERM=xterm script -q -e -c {line:?} /dev/null\nterminal: {tty:?}",
        dir.display()
    );
    assert_no_host_path(&tty);
    let at = ["preview of the ", "apply of the "]
        .iter()
        .filter_map(|h| tty.find(h))
        .min()
        .unwrap_or_else(|| panic!("no summary on the terminal: {what}"));
    let (bar, summary) = tty.split_at(at);
    if let Some(last) = bar.rfind("files") {
        assert!(
            bar[last..].contains("\u{1b}[2K"),
            "the bar is not erased before the summary: {what}"
        );
    }
    assert!(
        !summary.contains('\u{1b}') && !summary.contains("files\r"),
        "the summary holds terminal control sequences: {what}"
    );
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: summary.replace("\r\n", "\n"),
        stderr: bar.to_owned(),
        what,
    }
}

/// The command line printed after the summary's `next:` line.
fn next_command(stdout: &str) -> Option<String> {
    let mut lines = stdout.lines();
    lines.find(|l| l.starts_with("next:"))?;
    lines
        .next()
        .and_then(|l| l.strip_prefix("  "))
        .filter(|l| l.starts_with("okf-mcp "))
        .map(str::to_owned)
}

/// The value of the summary line `<key>: <value>`.
fn field<'a>(stdout: &'a str, key: &str) -> Option<&'a str> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
}

/// A generated v0.1 bundle of `documents` at `<tmp>/b`.
fn generated(documents: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("b");
    generate(&root, Spec { documents, size: 1 });
    (dir, root)
}

/// A copy of `fixtures/bundles/demo-v01` at `<tmp>/b`.
fn demo_v01() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("b");
    copy_dir(&fixture("demo-v01"), &root);
    (dir, root)
}

/// The tool arguments the CLI sends for a preview of `root` (spec: the module docs of
/// `src/cli/migrate.rs`), for the `okf-mcp call` the summaries are checked against.
fn preview_args(root: &Path, from: Option<&str>) -> Value {
    let mut a = json!({
        "bundle_path": root.to_str().expect("utf-8"),
        "generated_by": ACTOR,
        "timestamp_policy": POLICY,
        "citation_mappings": [],
        "limit": CLI_LIMIT,
        "include_proof": false,
    });
    if let Some(f) = from {
        a["from"] = json!(f);
    }
    a
}

/// The tool's own preview answer for `args`.
fn tool_preview(args: &Value) -> Value {
    let out = call("preview_v02_migration", args);
    assert!(!out.is_error(), "{}", out.stdout);
    out.structured().clone()
}

/// Checks a preview summary against the tool's answer `p`: status, totals, each per-code
/// count, the first blocked document, the digests.
fn assert_summary_is_the_answer(r: &Run, p: &Value) {
    let s = &r.stdout;
    let ctx = r.context();
    assert!(
        s.starts_with("preview of the 0.1 to 0.2 migration (nothing written)\n"),
        "{ctx}"
    );
    assert_eq!(field(s, "status"), p["status"].as_str(), "{ctx}");
    let t = &p["totals"];
    let totals = format!(
        "{} affected paths, {} blockers, {} manual actions, {} diagnostics, {} proposed citation mappings ({} need review)",
        t["affected_paths"], t["blockers"], t["manual_actions"], t["diagnostics"],
        t["proposed_citation_mappings"], t["proposals_needing_review"]
    );
    assert_eq!(field(s, "totals"), Some(totals.as_str()), "{ctx}");
    for (k, n) in p["diagnostic_counts"].as_object().expect("counts") {
        assert!(s.contains(&format!("\n  {k}: {n}\n")), "count {k}: {ctx}");
    }
    if let Some(b) = p["blockers"].get(0) {
        let path = b["path"].as_str().expect("path");
        let code = b["code"].as_str().expect("code");
        // The document's line and the lines under it.
        let head = format!("  {path}:");
        let mut lines = s.lines().skip_while(|l| !l.starts_with(&head));
        let first = lines
            .next()
            .unwrap_or_else(|| panic!("the first blocked document is not listed: {ctx}"));
        let block: Vec<&str> = std::iter::once(first)
            .chain(lines.take_while(|l| l.starts_with("    ")))
            .collect();
        let block = block.join("\n");
        assert!(block.contains(&format!("blocker {code}")), "{block}: {ctx}");
        let message = b["message"].as_str().expect("message");
        assert!(
            s.contains(&format!("blocker {code}: {message}\n")),
            "what the blocker says: {ctx}"
        );
    }
    let digest = |k: &str| match p[k].as_str() {
        Some(d) if !d.is_empty() => d.to_owned(),
        _ => "(none)".to_owned(),
    };
    for k in ["proposals_digest", "plan_digest", "base_revision"] {
        assert_eq!(field(s, k), Some(digest(k).as_str()), "{k}: {ctx}");
    }
}

/// The sequence preview → accepting preview → apply → replay → preview of the migrated
/// bundle on the generated bundle at `<dir>/b` (`root`), every step after the first run as the
/// previous summary printed it by `runner`; returns the runs.
fn full_sequence(dir: &Path, root: &Path, runner: fn(&Path, &str) -> Run) -> Vec<Run> {
    let pristine = snapshot(root);
    let first =
        format!("okf-mcp migrate b --generated-by {ACTOR} --timestamp-policy {POLICY} --from 0.1");
    let p0 = runner(dir, &first);
    let tool0 = tool_preview(&preview_args(root, Some("0.1")));
    assert_eq!(tool0["status"], "blocked");
    assert_eq!(p0.code, 2, "blocked: {}", p0.context());
    assert_summary_is_the_answer(&p0, &tool0);
    assert_eq!(snapshot(root), pristine, "the preview writes nothing");
    assert!(!root.join(".okf").exists());
    let digest = tool0["proposals_digest"].as_str().expect("digest");
    assert!(digest.starts_with("sha256:"));
    let accept = next_command(&p0.stdout).unwrap_or_else(|| panic!("{}", p0.context()));
    assert_eq!(
        accept,
        format!("{first} --accept {digest}"),
        "{}",
        p0.context()
    );

    let p1 = runner(dir, &accept);
    let mut acc = preview_args(root, Some("0.1"));
    acc["accept_proposals"] = json!(digest);
    let tool1 = tool_preview(&acc);
    assert_eq!(tool1["status"], "applicable", "{tool1}");
    assert_eq!(p1.code, 0, "ready to apply: {}", p1.context());
    assert_summary_is_the_answer(&p1, &tool1);
    assert_eq!(
        snapshot(root),
        pristine,
        "the accepting preview writes nothing"
    );
    assert!(!root.join(".okf").exists());
    let apply = next_command(&p1.stdout).unwrap_or_else(|| panic!("{}", p1.context()));
    let plan = tool1["plan_digest"].as_str().expect("plan digest");
    assert!(
        apply.starts_with(&format!(
            "{accept} --apply {plan} --base-revision {} --expected-source '",
            tool1["base_revision"].as_str().expect("base")
        )),
        "{}",
        p1.context()
    );

    let applied = runner(dir, &apply);
    assert_eq!(applied.code, 0, "applied: {}", applied.context());
    assert!(
        applied
            .stdout
            .starts_with("apply of the 0.1 to 0.2 migration\nstatus: applied\n"),
        "{}",
        applied.context()
    );
    let changed = tool1["totals"]["affected_paths"].as_u64().expect("n");
    assert!(changed > 0);
    assert!(
        applied
            .stdout
            .contains(&format!("changed paths: {changed} (")),
        "{}",
        applied.context()
    );
    assert_eq!(field(&applied.stdout, "plan_digest"), Some(plan));
    let after = snapshot(root);
    assert_ne!(visible_of(&after), visible_of(&pristine), "the apply wrote");
    assert!(root.join(".okf").is_dir());
    let index = String::from_utf8(after["index.md"].clone()).expect("utf-8");
    assert!(index.contains("okf_version"), "{index}");

    let replay = runner(dir, &apply);
    assert_eq!(replay.code, 0, "replay: {}", replay.context());
    assert!(
        replay.stdout.contains("status: applied (receipt replayed"),
        "{}",
        replay.context()
    );
    assert_eq!(visible_of(&snapshot(root)), visible_of(&after));

    let done = runner(
        dir,
        &format!("okf-mcp migrate b --generated-by {ACTOR} --timestamp-policy {POLICY}"),
    );
    assert_eq!(done.code, 0, "{}", done.context());
    assert_eq!(
        field(&done.stdout, "status"),
        Some("noop"),
        "{}",
        done.context()
    );
    assert!(
        done.stdout
            .contains("nothing to migrate: the bundle is already OKF 0.2."),
        "{}",
        done.context()
    );
    assert_eq!(next_command(&done.stdout), None);
    vec![p0, p1, applied, replay, done]
}

/// MIG-44 through `okf-mcp migrate` over pipes on 300 generated documents: preview (exit 2,
/// nothing written) → the printed accept command (exit 0, nothing written) → a wrong plan
/// digest (exit 1, `plan_mismatch`, nothing written) → the printed apply command on a copy
/// that moved (exit 1, `revision_conflict`, nothing written) → the printed apply command (exit 0,
/// applied) → the same command again (exit 0, replayed) → a preview of the migrated bundle
/// (noop, exit 0). With stderr a pipe nothing is drawn.
#[test]
fn mig_44_migrate_cli_the_full_sequence_over_pipes() {
    let (tmp, root) = generated(300);
    let dir = tmp.path();
    // The wrong digest first, on the pristine bundle: the tool's error, nothing written.
    let pristine = snapshot(&root);
    let first =
        format!("okf-mcp migrate b --generated-by {ACTOR} --timestamp-policy {POLICY} --from 0.1");
    let accept = next_command(&run_printed(dir, &first).stdout).expect("accept command");
    let apply = next_command(&run_printed(dir, &accept).stdout).expect("apply command");
    let at = apply.find("--apply sha256:").expect("--apply") + "--apply sha256:".len();
    let flipped = if &apply[at..=at] == "0" { "1" } else { "0" };
    let wrong = format!("{}{flipped}{}", &apply[..at], &apply[at + 1..]);
    let e = run_printed(dir, &wrong);
    assert_eq!(e.code, 1, "{}", e.context());
    assert!(
        e.stdout
            .starts_with("apply of the 0.1 to 0.2 migration failed\nerror: "),
        "{}",
        e.context()
    );
    assert!(e.stdout.contains("(plan_mismatch)"), "{}", e.context());
    assert!(e.stdout.contains("error: next step: "), "{}", e.context());
    assert!(
        e.stdout.contains(&format!(
            "preview without --accept and --apply:\n  okf-mcp migrate b --generated-by {ACTOR} --timestamp-policy {POLICY} --from 0.1\n"
        )),
        "{}",
        e.context()
    );
    assert_eq!(snapshot(&root), pristine, "a wrong digest writes nothing");
    assert!(!root.join(".okf").exists());

    // The same command on a bundle that moved since the preview (a copy with one file more,
    // at `b` in another directory): the tool's revision_conflict, nothing written.
    let other = tempfile::tempdir().expect("tempdir");
    let moved = other.path().join("b");
    copy_dir(&root, &moved);
    std::fs::write(moved.join("notes-added.md"), "# Added\n").expect("write");
    let moved_state = snapshot(&moved);
    let e = run_printed(other.path(), &apply);
    assert_eq!(e.code, 1, "{}", e.context());
    assert!(e.stdout.contains("(revision_conflict)"), "{}", e.context());
    assert!(e.stdout.contains("error: next step: "), "{}", e.context());
    assert_eq!(
        snapshot(&moved),
        moved_state,
        "a moved bundle: nothing written"
    );
    assert!(!moved.join(".okf").exists());

    for r in full_sequence(dir, &root, run_printed) {
        assert_eq!(
            r.stderr,
            "",
            "stderr is a pipe: nothing drawn: {}",
            r.context()
        );
    }
}

/// MIG-44 through `okf-mcp migrate` on a pseudo-terminal, on 1,001 generated documents (a
/// capture over 1,000 files reports progress): the first preview draws the bar on the
/// terminal and erases it before the summary; every step's summary is free of control
/// sequences and runs as printed.
#[test]
fn mig_44_migrate_cli_the_full_sequence_on_a_pseudo_terminal() {
    let (tmp, root) = generated(1_001);
    let runs = full_sequence(tmp.path(), &root, run_printed_on_a_terminal);
    assert!(
        runs[0].stderr.contains("reading "),
        "no progress drawn: {}",
        runs[0].context()
    );
}

/// A bundle with a document no proposal covers (an unparsable legacy timestamp) beside
/// documents with proposals: the preview is blocked (exit 2), lists the uncovered document
/// first and says it still blocks after accepting; the accepting preview is still blocked
/// (exit 2) and prints no apply command; nothing is written.
#[test]
fn migrate_cli_a_blocked_bundle_exits_2_and_names_what_to_fix() {
    let (tmp, root) = demo_v01();
    std::fs::write(
        root.join("broken.md"),
        "---\ntype: Table\ntitle: Broken\ntimestamp: not a date\n---\n\n# Broken\n",
    )
    .expect("write");
    let pristine = snapshot(&root);
    let dir = tmp.path();
    let p0 = migrate(
        dir,
        &["b", "--generated-by", ACTOR, "--timestamp-policy", POLICY],
    );
    assert_eq!(p0.code, 2, "{}", p0.context());
    let tool0 = tool_preview(&preview_args(&root, None));
    assert_summary_is_the_answer(&p0, &tool0);
    assert_eq!(tool0["blockers"][0]["path"], "broken.md", "{tool0}");
    assert!(
        p0.stdout
            .contains("The first blocked document above has no suggestion"),
        "{}",
        p0.context()
    );
    let accept = next_command(&p0.stdout).expect("accept command");
    let p1 = run_printed(dir, &accept);
    assert_eq!(p1.code, 2, "{}", p1.context());
    assert_eq!(field(&p1.stdout, "status"), Some("blocked"));
    assert!(
        p1.stdout
            .contains("\n  broken.md: blocker invalid_legacy_timestamp\n"),
        "{}",
        p1.context()
    );
    let again = next_command(&p1.stdout).expect("preview again");
    assert!(!again.contains("--apply"), "{again}");
    assert!(
        p1.stdout
            .contains("next: fix the documents as their blockers and manual actions say"),
        "{}",
        p1.context()
    );
    assert_eq!(snapshot(&root), pristine);
    assert!(!root.join(".okf").exists());
}

/// `--json` prints the CallToolResult of the same dispatcher as `okf-mcp call` (the same
/// members as `call` with the arguments the CLI sends), with the summary's exit codes: 2
/// blocked, 0 applicable and applied, 1 a tool error.
#[test]
fn migrate_cli_json_prints_the_call_tool_result() {
    let (tmp, root) = demo_v01();
    let dir = tmp.path();
    let base = ["b", "--generated-by", ACTOR, "--timestamp-policy", POLICY];
    let json_run = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        a.push("--json");
        let r = migrate(dir, &a);
        assert_eq!(r.stdout.lines().count(), 1, "{}", r.context());
        let v: Value = serde_json::from_str(r.stdout.trim_end()).expect("one JSON line");
        let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
        assert_eq!(
            keys,
            ["content", "structuredContent", "isError"],
            "{}",
            r.context()
        );
        assert_eq!(r.stderr, "");
        (r.code, v)
    };
    let (code, p0) = json_run(&[]);
    assert_eq!(code, 2);
    let by_call = call("preview_v02_migration", &preview_args(&root, None));
    assert_eq!(
        identity(&p0),
        identity(by_call.result.as_ref().expect("result"))
    );
    let digest = p0["structuredContent"]["proposals_digest"]
        .as_str()
        .expect("digest")
        .to_owned();
    let (code, p1) = json_run(&["--accept", &digest]);
    assert_eq!(code, 0);
    let mut acc = preview_args(&root, None);
    acc["accept_proposals"] = json!(digest);
    let by_call = call("preview_v02_migration", &acc);
    assert_eq!(
        identity(&p1),
        identity(by_call.result.as_ref().expect("result"))
    );
    // --accept-needs-review passes accept_needs_review: true.
    let (code, p2) = json_run(&["--accept", &digest, "--accept-needs-review"]);
    assert_eq!(code, 0);
    acc["accept_needs_review"] = json!(true);
    let by_call = call("preview_v02_migration", &acc);
    assert_eq!(
        identity(&p2),
        identity(by_call.result.as_ref().expect("result"))
    );
    let s = &p1["structuredContent"];
    assert_eq!(s["status"], "applicable");
    assert_eq!(s["proof_omitted"], true, "include_proof is false");
    let source = s["source"].to_string();
    let apply = [
        "--accept",
        &digest,
        "--apply",
        s["plan_digest"].as_str().expect("plan"),
        "--base-revision",
        s["base_revision"].as_str().expect("base"),
        "--expected-source",
        &source,
    ];
    let mut wrong = apply;
    wrong[3] = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let (code, e) = json_run(&wrong);
    assert_eq!(code, 1);
    assert_eq!(e["isError"], true);
    assert_eq!(e["structuredContent"]["code"], "plan_mismatch", "{e}");
    assert!(!root.join(".okf").exists());
    let (code, r) = json_run(&apply);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"]["status"], "applied", "{r}");
    assert_eq!(
        r["content"][0]["text"].as_str().expect("text"),
        r["structuredContent"].to_string()
    );
}

/// Usage errors: exit 2, nothing on stdout, one stderr line that echoes no value, nothing
/// written; `--help` documents the exit codes.
#[test]
fn migrate_cli_usage_errors_exit_2_and_help_lists_the_exit_codes() {
    let secret = "sk_live_SECRET";
    let (tmp, root) = demo_v01();
    let dir = tmp.path();
    let pristine = snapshot(&root);
    let d = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let base = ["b", "--generated-by", ACTOR, "--timestamp-policy", POLICY];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    let cases: Vec<Vec<&str>> = vec![
        vec![],
        vec!["b", "--timestamp-policy", POLICY],
        vec!["b", "--generated-by", secret],
        vec!["b", "--generated-by", ACTOR, "--timestamp-policy", secret],
        with(&["--from", "0.3"]),
        with(&["--apply", d]),
        with(&["--apply", d, "--base-revision", d]),
        with(&["--base-revision", d]),
        with(&["--accept-needs-review"]),
        with(&["--limit", "0"]),
        with(&["--frobnicate"]),
        with(&[
            "--apply",
            d,
            "--base-revision",
            d,
            "--expected-source",
            "sk_live_SECRET{",
        ]),
        with(&[
            "--apply",
            d,
            "--base-revision",
            d,
            "--expected-source",
            "[1]",
        ]),
    ];
    for c in &cases {
        let r = migrate(dir, c);
        assert_eq!(r.code, 2, "{c:?}: {}", r.context());
        assert_eq!(r.stdout, "", "{c:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{c:?}: {}", r.stderr);
        assert!(!r.stderr.contains(secret), "{c:?}: {}", r.stderr);
    }
    // A bundle argument that is not UTF-8 is a usage error too.
    use std::os::unix::ffi::OsStrExt;
    let r = okf(
        dir,
        &[
            OsStr::new("migrate"),
            OsStr::from_bytes(b"b\xff"),
            OsStr::new("--generated-by"),
            OsStr::new(ACTOR),
            OsStr::new("--timestamp-policy"),
            OsStr::new(POLICY),
        ],
    );
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{}", r.context());
    assert_eq!(snapshot(&root), pristine);
    assert!(!root.join(".okf").exists());

    let h = migrate(dir, &["--help"]);
    assert_eq!(h.code, 0, "{}", h.context());
    for want in [
        "--accept <PROPOSALS_DIGEST>",
        "--apply <PLAN_DIGEST>",
        "--accept-needs-review",
        "--json",
        "Exit codes:",
        "0  ready to apply, applied (or replayed), or nothing to do",
        "1  tool error",
        "2  blocked",
        "3  internal fault",
    ] {
        assert!(h.stdout.contains(want), "{want}: {}", h.context());
    }
}

/// A handler panic (test hook of a `fault-injection` build) in the preview and in the apply:
/// exit 3, nothing on stdout, the one fixed stderr line, nothing written.
#[cfg(feature = "fault-injection")]
#[test]
fn migrate_cli_a_handler_panic_exits_3_with_one_fixed_stderr_line() {
    let (tmp, root) = demo_v01();
    let pristine = snapshot(&root);
    let d = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let base = ["b", "--generated-by", ACTOR, "--timestamp-policy", POLICY];
    let apply = [
        "--apply",
        d,
        "--base-revision",
        d,
        "--expected-source",
        "{}",
    ];
    for (tool, extra) in [
        ("preview_v02_migration", &[][..]),
        ("apply_v02_migration", &apply[..]),
    ] {
        let out = Command::new(bin())
            .arg("migrate")
            .args(base)
            .args(extra)
            .current_dir(tmp.path())
            .env("OKF_MCP_TEST_PANIC", tool)
            .stdin(Stdio::null())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(3), "{tool}");
        assert!(out.stdout.is_empty(), "{tool}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "okf-mcp: internal error in tool handler\n",
            "{tool}"
        );
    }
    assert_eq!(snapshot(&root), pristine);
}
