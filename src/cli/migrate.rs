//! `okf-mcp migrate`: the 0.1 → 0.2 migration of one bundle as a guided plan and apply, the
//! four-call sequence of spec/migration.md §12.7 rule 6 from a shell (issue 20 item 6).
//!
//! Each run makes exactly one tool call, through the same dispatcher as `okf-mcp call` and
//! MCP (`crate::wire::dispatch::call`), and prints either a one-screen summary of the answer
//! or, with `--json`, the `CallToolResult` line of `okf-mcp call`:
//!
//! 1. `migrate B --generated-by A --timestamp-policy P [--from F]` → `preview_v02_migration`
//!    with `citation_mappings: []`, `include_proof: false`, `limit`;
//! 2. `… --accept <proposals_digest> [--accept-needs-review]` → the same preview with
//!    `accept_proposals` (and `accept_needs_review: true`);
//! 3. `… [--accept …] --apply <plan_digest> --base-revision R --expected-source S` →
//!    `apply_v02_migration` without a proof (§12.7 rule 4): `expected_plan_digest`,
//!    `base_revision`, `expected_source`, plus the preview's arguments. The apply previews
//!    nothing first: the tool rebuilds the plan and checks the digest, so a moved bundle or a
//!    wrong digest is the tool's error, and a replay after a lost answer is the tool's receipt.
//!
//! A preview's summary ends with the exact command line of the next step (shell-quoted), which
//! carries every value the tool binds.
//!
//! Exit codes ([`EXIT_BLOCKED`] and `EXIT_USAGE` are both 2, by number only):
//! - 0: the preview is ready to apply (`applicable`) or there is nothing to do (`noop`); the
//!   apply committed (`applied`, also when replayed) or changed nothing (`noop`);
//! - 1: the tool answered an error (`isError: true`), printed with its next step;
//! - 2: the preview (or apply) is `blocked`/`rejected`; or a usage error (one stderr line);
//! - 3: an internal fault (a handler panic): one fixed stderr line, nothing on stdout.
//!
//! Invariants:
//! - the CLI only decodes flags, dispatches and renders: no planning, no bundle access of its
//!   own; only the apply step's tool writes, and it writes only what the digest authorises;
//! - the summary shows only members of the tool's answer (the tool redacts absolute paths,
//!   spec/surface.md §10), with control characters escaped; the one path of its own it prints
//!   is the bundle argument as the user typed it, inside the next command;
//! - stdout holds the summary or the JSON line and nothing else; stderr holds only the
//!   progress bar (a terminal only, `src/cli/bar.rs`), a usage line or the fault line.
//!
//! # Limitations
//! No flags for `citation_mappings`, `generated_at`, `computations` or
//! `timestamp_conflict_policy`: a bundle that needs them is migrated with `okf-mcp call`.

use super::invoke::{run_tool, usage, Fault, EXIT_INTERNAL, INTERNAL_FAULT_LINE, UNKNOWN_TOOL};
use crate::wire::result::ToolResult;
use serde_json::{json, Map, Value};
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Exit code of a preview or apply whose status is `blocked` or `rejected`.
pub const EXIT_BLOCKED: i32 = 2;

/// Items per list asked of the tool when `--limit` is not given: the summary shows only the
/// heads of the lists, and `totals` / `diagnostic_counts` count the whole lists.
pub const DEFAULT_LIMIT: u32 = 50;

/// Documents the summary lists with their blockers and manual actions.
const SHOWN_DOCUMENTS: usize = 10;

/// Changed paths an apply summary lists.
const SHOWN_CHANGED: usize = 10;

/// The largest `--expected-source` the summary prints (one argument of a Linux command line
/// may hold 128 KiB); a larger source (a `legacy-probe` source with many candidates) is left
/// out with the advice to pass `--from 0.1`.
const MAX_SOURCE_ARGUMENT: usize = 64 * 1024;

/// The `--help` text after the flags.
const AFTER_HELP: &str = "\
Steps (terraform plan / apply):
  1. okf-mcp migrate B --generated-by A --timestamp-policy P
       preview, writes nothing; prints the totals, the blocked documents, proposals_digest,
       plan_digest and the next command
  2. okf-mcp migrate B … --accept <proposals_digest>
       preview accepting exactly the proposed citation mappings shown (unreviewed
       suggestions: review them first; entries marked needs_review also need
       --accept-needs-review)
  3. okf-mcp migrate B … [--accept …] --apply <plan_digest> --base-revision R --expected-source S
       apply exactly the previewed plan (the summary of step 1 or 2 prints this command)

Exit codes:
  0  ready to apply, applied (or replayed), or nothing to do
  1  tool error (printed with its next step)
  2  blocked (the summary lists what to fix), or a usage error
  3  internal fault";

/// The flags of `okf-mcp migrate`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct MigrateArgs {
    /// The bundle directory (a relative path is taken from the current directory).
    #[arg(value_name = "BUNDLE")]
    bundle: OsString,
    /// Who produces the migrated content (`generated.by`): `human:<name>`, `process:<name>`
    /// or `producer/version`.
    #[arg(long = "generated-by", value_name = "ACTOR")]
    generated_by: String,
    /// Keep or remove the legacy `timestamp` once copied into `generated.at`.
    #[arg(long = "timestamp-policy", value_name = "POLICY",
          value_parser = ["preserve", "remove_after_copy"])]
    timestamp_policy: String,
    /// The source version (default: the tool's `auto`); `0.1` resolves the source without the
    /// legacy probe's candidate list.
    #[arg(long, value_name = "VERSION", value_parser = ["auto", "0.1", "0.2"])]
    from: Option<String>,
    /// Accept exactly the proposed citation mappings shown by a preview, by its
    /// proposals_digest.
    #[arg(long, value_name = "PROPOSALS_DIGEST")]
    accept: Option<String>,
    /// Also accept proposals with entries marked needs_review.
    #[arg(long = "accept-needs-review", requires = "accept")]
    accept_needs_review: bool,
    /// Apply the previewed plan with this plan_digest (no proof needed).
    #[arg(long, value_name = "PLAN_DIGEST", requires_all = ["base_revision", "expected_source"])]
    apply: Option<String>,
    /// With --apply: the preview's base_revision, unchanged.
    #[arg(long = "base-revision", value_name = "REVISION", requires = "apply")]
    base_revision: Option<String>,
    /// With --apply: the preview's source as JSON, unchanged.
    #[arg(long = "expected-source", value_name = "JSON", requires = "apply")]
    expected_source: Option<String>,
    /// Items per list in the tool's answer (1..10000; default 50); totals count all.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    limit: Option<u32>,
    /// Print the CallToolResult JSON (as `okf-mcp call` does) instead of the summary.
    #[arg(long)]
    json: bool,
}

/// Which step a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `preview_v02_migration` (with or without `accept_proposals`).
    Preview,
    /// `apply_v02_migration` by digest.
    Apply,
}

/// Runs `okf-mcp migrate`; returns the exit code (see the module docs).
#[must_use]
pub fn run(a: &MigrateArgs) -> i32 {
    let Some(bundle_path) = bundle_path(&a.bundle) else {
        return usage("the bundle path must be UTF-8 and resolvable from the current directory");
    };
    let expected_source = match a
        .expected_source
        .as_deref()
        .map(serde_json::from_str::<Value>)
    {
        None => None,
        Some(Ok(v)) if v.is_object() => Some(v),
        Some(_) => return usage("--expected-source must be the preview's source as JSON"),
    };
    let (step, tool) = if a.apply.is_some() {
        (Step::Apply, "apply_v02_migration")
    } else {
        (Step::Preview, "preview_v02_migration")
    };
    let args = arguments(a, &bundle_path, step, expected_source);
    let raw = args.to_string().into_bytes();
    let result = match run_tool(tool, &raw) {
        Ok(Some(r)) => r,
        Ok(None) => return usage(UNKNOWN_TOOL),
        Err(Fault) => {
            eprintln!("{INTERNAL_FAULT_LINE}");
            return EXIT_INTERNAL;
        }
    };
    let code = exit_code(&result);
    let text = if a.json {
        let mut line = result.to_call_tool_result_json().to_string();
        line.push('\n');
        line
    } else if result.is_error {
        error_summary(&result, a, step)
    } else if step == Step::Apply {
        apply_summary(&result.structured)
    } else {
        preview_summary(&result.structured, a)
    };
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return 1;
    }
    code
}

/// The bundle argument as the tool's `bundle_path`: UTF-8, trailing slashes removed (as a
/// shell's completion adds them), a relative path joined to the current directory with its
/// `.` components dropped (`std::path::absolute`: no symlink is resolved, `..` is kept for
/// the tool to refuse). `None` when it is not UTF-8 or the current directory is unknown.
fn bundle_path(arg: &OsStr) -> Option<String> {
    let s = arg.to_str()?;
    let trimmed = s.trim_end_matches('/');
    let s = if trimmed.is_empty() { s } else { trimmed };
    if s.is_empty() {
        // An empty path goes to the tool, whose answer names the rule.
        return Some(String::new());
    }
    if Path::new(s).is_absolute() {
        return Some(s.to_owned());
    }
    std::path::absolute(s)
        .ok()
        .and_then(|p| p.to_str().map(str::to_owned))
}

/// The tool arguments of one run.
fn arguments(
    a: &MigrateArgs,
    bundle_path: &str,
    step: Step,
    expected_source: Option<Value>,
) -> Value {
    let mut m = Map::new();
    m.insert("bundle_path".into(), json!(bundle_path));
    if let Some(from) = &a.from {
        m.insert("from".into(), json!(from));
    }
    m.insert("generated_by".into(), json!(a.generated_by));
    m.insert("timestamp_policy".into(), json!(a.timestamp_policy));
    m.insert("citation_mappings".into(), json!([]));
    m.insert("limit".into(), json!(a.limit.unwrap_or(DEFAULT_LIMIT)));
    if let Some(d) = &a.accept {
        m.insert("accept_proposals".into(), json!(d));
    }
    if a.accept_needs_review {
        m.insert("accept_needs_review".into(), json!(true));
    }
    match step {
        Step::Preview => {
            m.insert("include_proof".into(), json!(false));
        }
        Step::Apply => {
            if let Some(s) = expected_source {
                m.insert("expected_source".into(), s);
            }
            if let Some(r) = &a.base_revision {
                m.insert("base_revision".into(), json!(r));
            }
            if let Some(d) = &a.apply {
                m.insert("expected_plan_digest".into(), json!(d));
            }
        }
    }
    Value::Object(m)
}

/// 1 for a tool error, [`EXIT_BLOCKED`] for a `blocked` or `rejected` status, else 0.
fn exit_code(r: &ToolResult) -> i32 {
    if r.is_error {
        return 1;
    }
    match r.structured["status"].as_str() {
        Some("blocked" | "rejected") => EXIT_BLOCKED,
        _ => 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/// `s` as one word of a POSIX shell: bare when it holds only characters no shell treats
/// specially, else single-quoted (`'` written as `'\''`).
#[must_use]
pub fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The command line of a preview with this run's bundle, actor, policy, source selector and
/// limit (the user's bundle argument as typed).
fn preview_command(a: &MigrateArgs) -> String {
    let bundle = a.bundle.to_string_lossy();
    let mut c = format!(
        "okf-mcp migrate {} --generated-by {} --timestamp-policy {}",
        shell_quote(&bundle),
        shell_quote(&a.generated_by),
        shell_quote(&a.timestamp_policy)
    );
    if let Some(f) = &a.from {
        let _ = write!(c, " --from {}", shell_quote(f));
    }
    if let Some(n) = a.limit {
        let _ = write!(c, " --limit {n}");
    }
    c
}

/// [`preview_command`] accepting the proposals digest `digest` (and needs_review entries when
/// `needs_review`).
fn accept_command(a: &MigrateArgs, digest: &str, needs_review: bool) -> String {
    let mut c = preview_command(a);
    let _ = write!(c, " --accept {}", shell_quote(digest));
    if needs_review {
        c.push_str(" --accept-needs-review");
    }
    c
}

// ---------------------------------------------------------------------------------------------
// Summaries
// ---------------------------------------------------------------------------------------------

/// `s` with every control character escaped (`\u{1b}`), so no answer text can move the
/// cursor or start a new line of the summary.
fn shown(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The string member `k` of `v`, escaped ([`shown`]), or `""`.
fn text(v: &Value, k: &str) -> String {
    shown(v[k].as_str().unwrap_or_default())
}

/// The count member `k` of `totals`, or 0.
fn count(totals: &Value, k: &str) -> u64 {
    totals[k].as_u64().unwrap_or(0)
}

/// `diagnostic_counts` as indented `severity/code: n` lines.
fn counts_lines(out: &mut String, counts: &Value) {
    let Some(counts) = counts.as_object().filter(|c| !c.is_empty()) else {
        return;
    };
    out.push_str("diagnostics by code:\n");
    for (k, n) in counts {
        let _ = writeln!(out, "  {}: {n}", shown(k));
    }
}

/// A digest member for a `name: value` line: `(none)` when empty or absent.
fn digest_or_none(v: &Value, k: &str) -> String {
    match v[k].as_str() {
        Some(s) if !s.is_empty() => shown(s),
        _ => "(none)".to_owned(),
    }
}

/// The first [`SHOWN_DOCUMENTS`] documents of `blockers` then `manual_actions` (the tool's
/// order: documents no proposal covers first, §12.7 rule 7), one line each naming its
/// blockers and manual actions among the shown items by code; then what each code says,
/// once. A code whose shown items say different things is explained on its documents'
/// lines instead.
fn blocked_documents(out: &mut String, p: &Value) {
    let list = |k: &str| p[k].as_array().map_or(&[][..], Vec::as_slice);
    let items: Vec<(&str, &Value)> = list("blockers")
        .iter()
        .map(|b| ("blocker", b))
        .chain(list("manual_actions").iter().map(|m| ("manual action", m)))
        .collect();
    if items.is_empty() {
        return;
    }
    let mut paths: Vec<&str> = Vec::new();
    for (_, x) in &items {
        let path = x["path"].as_str().unwrap_or_default();
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths.truncate(SHOWN_DOCUMENTS);
    let shown_items: Vec<(&str, String, String)> = items
        .iter()
        .filter(|(_, x)| paths.contains(&x["path"].as_str().unwrap_or_default()))
        .map(|(kind, x)| (*kind, text(x, "code"), text(x, "message")))
        .collect();
    // (kind, code) → its one message among the shown items, or None when they differ.
    let mut legend: Vec<((&str, &str), Option<&str>)> = Vec::new();
    for (kind, code, message) in &shown_items {
        match legend
            .iter_mut()
            .find(|(k, _)| *k == (*kind, code.as_str()))
        {
            Some((_, said)) => {
                if *said != Some(message.as_str()) {
                    *said = None;
                }
            }
            None => legend.push(((kind, code), Some(message))),
        }
    }
    let one_message = |kind: &str, code: &str| {
        legend
            .iter()
            .any(|(k, said)| *k == (kind, code) && said.is_some())
    };
    let t = &p["totals"];
    let _ = writeln!(
        out,
        "blocked documents (the first {} shown; {} blockers and {} manual actions in all):",
        paths.len(),
        count(t, "blockers"),
        count(t, "manual_actions")
    );
    for path in &paths {
        let mine: Vec<(&str, &Value)> = items
            .iter()
            .filter(|(_, x)| x["path"] == *path)
            .copied()
            .collect();
        let mut codes: Vec<String> = Vec::new();
        let mut own: Vec<String> = Vec::new();
        for (kind, x) in &mine {
            let code = text(x, "code");
            let named = format!("{kind} {code}");
            if one_message(kind, &code) {
                if !codes.contains(&named) {
                    codes.push(named);
                }
            } else {
                own.push(format!("{named}: {}", text(x, "message")));
            }
        }
        if codes.is_empty() {
            let _ = writeln!(out, "  {}:", shown(path));
        } else {
            let _ = writeln!(out, "  {}: {}", shown(path), codes.join(", "));
        }
        for line in own {
            let _ = writeln!(out, "    {line}");
        }
    }
    let said: Vec<_> = legend
        .iter()
        .filter_map(|((kind, code), m)| m.map(|m| (kind, code, m)))
        .collect();
    if !said.is_empty() {
        out.push_str("what the codes say:\n");
        for (kind, code, message) in said {
            let _ = writeln!(out, "  {kind} {code}: {message}");
        }
    }
}

/// The paths of the shown proposals with an entry marked `needs_review` (they come first,
/// §12.7 rule 8), at most [`SHOWN_DOCUMENTS`].
fn needing_review(p: &Value) -> Vec<String> {
    p["proposed_citation_mappings"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter(|m| {
            m["entries"]
                .as_array()
                .is_some_and(|e| e.iter().any(|x| x["needs_review"] == true))
        })
        .take(SHOWN_DOCUMENTS)
        .map(|m| text(m, "path"))
        .collect()
}

/// Whether every blocked document of the preview `p` has a proposal: blockers of documents
/// without one sort first (§12.7 rule 7), so the first blocker's document decides. `None`
/// when the shown proposals (cut by `limit`) cannot tell.
fn covered(p: &Value) -> Option<bool> {
    let Some(first) = p["blockers"][0]["path"].as_str() else {
        return Some(true);
    };
    let proposals = p["proposed_citation_mappings"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if proposals.iter().any(|m| m["path"] == first) {
        Some(true)
    } else if p["proposals_truncated"] == false {
        Some(false)
    } else {
        None
    }
}

/// The summary of a preview answer `p`: status, source, totals, counts per code, the first
/// blocked documents, the digests, then the next step with its command line.
fn preview_summary(p: &Value, a: &MigrateArgs) -> String {
    let mut out = String::new();
    let status = p["status"].as_str().unwrap_or_default();
    let t = &p["totals"];
    out.push_str("preview of the 0.1 to 0.2 migration (nothing written)\n");
    let _ = writeln!(out, "status: {}", shown(status));
    let s = &p["source"];
    let _ = writeln!(
        out,
        "source: {} to {} ({}, {})",
        text(s, "from_version"),
        text(s, "to_version"),
        text(s, "resolution_source"),
        text(s, "transition")
    );
    let _ = writeln!(
        out,
        "totals: {} affected paths, {} blockers, {} manual actions, {} diagnostics, {} proposed citation mappings ({} need review)",
        count(t, "affected_paths"),
        count(t, "blockers"),
        count(t, "manual_actions"),
        count(t, "diagnostics"),
        count(t, "proposed_citation_mappings"),
        count(t, "proposals_needing_review")
    );
    counts_lines(&mut out, &p["diagnostic_counts"]);
    let affected = p["affected_paths"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if !affected.is_empty() {
        let _ = writeln!(
            out,
            "changed paths (the first {} shown):",
            affected.len().min(SHOWN_CHANGED)
        );
        for x in affected.iter().take(SHOWN_CHANGED) {
            let _ = writeln!(out, "  {}", shown(x.as_str().unwrap_or_default()));
        }
    }
    blocked_documents(&mut out, p);
    let _ = writeln!(
        out,
        "proposals_digest: {}",
        digest_or_none(p, "proposals_digest")
    );
    let _ = writeln!(out, "plan_digest: {}", digest_or_none(p, "plan_digest"));
    let _ = writeln!(out, "base_revision: {}", digest_or_none(p, "base_revision"));
    out.push('\n');
    let proposals = p["proposals_digest"].as_str().unwrap_or_default();
    match status {
        "applicable" => next_apply(&mut out, p, a),
        "blocked" if !proposals.is_empty() => {
            let n = count(t, "proposed_citation_mappings");
            let review = count(t, "proposals_needing_review");
            let _ = writeln!(
                out,
                "{n} documents have proposed citation mappings: unreviewed suggestions, a starting point to review (`--json --limit 10000` shows them all)."
            );
            if review > 0 {
                let first = needing_review(p);
                let _ = writeln!(
                    out,
                    "{review} of them have entries marked needs_review (first: {}): look at those; accepting them needs --accept-needs-review added to the command below.",
                    if first.is_empty() { "not shown".to_owned() } else { first.join(", ") }
                );
            }
            match covered(p) {
                Some(true) => {}
                Some(false) => out.push_str("The first blocked document above has no suggestion: documents like it still block after accepting; fix them as their blockers and manual actions say.\n"),
                None => out.push_str("A document that no suggestion covers still blocks after accepting: fix it as its blockers and manual actions say.\n"),
            }
            let _ = writeln!(
                out,
                "next: accept exactly these suggestions:\n  {}",
                accept_command(a, proposals, false)
            );
        }
        "blocked" => {
            let _ = writeln!(
                out,
                "next: fix the documents as their blockers and manual actions say (or pass citation_mappings with okf-mcp call preview_v02_migration), then preview again:\n  {}",
                match &a.accept {
                    Some(d) => accept_command(a, d, a.accept_needs_review),
                    None => preview_command(a),
                }
            );
        }
        _ if p["source"]["transition"] == "target-noop" => {
            out.push_str("nothing to migrate: the bundle is already OKF 0.2.\n");
        }
        _ => out.push_str("nothing to migrate: the migration changes no file.\n"),
    }
    out
}

/// The next step of an applicable preview `p`: the apply command, or why it is not printed.
fn next_apply(out: &mut String, p: &Value, a: &MigrateArgs) {
    let source = p["source"].to_string();
    let candidates = p["source"]["candidates"].as_array().map_or(0, Vec::len);
    if source.len() > MAX_SOURCE_ARGUMENT {
        let _ = writeln!(
            out,
            "next: the source lists {candidates} legacy candidates, too long for a command line: preview again with --from 0.1:\n  {} --from 0.1",
            preview_command(a)
        );
        return;
    }
    let mut c = match &a.accept {
        Some(d) => accept_command(a, d, a.accept_needs_review),
        None => preview_command(a),
    };
    let _ = write!(
        c,
        " --apply {} --base-revision {} --expected-source {}",
        shell_quote(p["plan_digest"].as_str().unwrap_or_default()),
        shell_quote(p["base_revision"].as_str().unwrap_or_default()),
        shell_quote(&source)
    );
    if candidates > 0 {
        let _ = writeln!(
            out,
            "(the source lists {candidates} legacy candidates; --from 0.1 gives a shorter command)"
        );
    }
    let _ = writeln!(
        out,
        "next: review (`--json` shows the diff), then apply exactly this plan:\n  {c}"
    );
}

/// The summary of an apply answer `r`: status, changes, counts, revisions, next step.
fn apply_summary(r: &Value) -> String {
    let mut out = String::new();
    let status = r["status"].as_str().unwrap_or_default();
    out.push_str("apply of the 0.1 to 0.2 migration\n");
    let replayed = r["diagnostics"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x["code"] == "receipt_replayed"));
    let _ = writeln!(
        out,
        "status: {}{}",
        shown(status),
        if replayed {
            " (receipt replayed: the stored result of this same apply, nothing written again)"
        } else {
            ""
        }
    );
    let t = &r["totals"];
    let changed = r["changed_paths"].as_array().map_or(&[][..], Vec::as_slice);
    let _ = writeln!(
        out,
        "changed paths: {} (the first {} shown)",
        count(t, "changed_paths"),
        changed.len().min(SHOWN_CHANGED)
    );
    for x in changed.iter().take(SHOWN_CHANGED) {
        let _ = writeln!(out, "  {}", shown(x.as_str().unwrap_or_default()));
    }
    counts_lines(&mut out, &r["diagnostic_counts"]);
    let _ = writeln!(out, "plan_digest: {}", digest_or_none(r, "plan_digest"));
    let _ = writeln!(out, "base_revision: {}", digest_or_none(r, "base_revision"));
    let _ = writeln!(
        out,
        "result_revision: {}",
        digest_or_none(r, "result_revision")
    );
    if matches!(status, "applied" | "noop") {
        out.push_str("\nnext: check the bundle with validate_bundle, strict: true and target_version: \"0.2\" (okf-mcp call validate_bundle).\n");
    }
    out
}

/// The summary of a tool error: the tool's readable error (its message and code, one line
/// per diagnostic, its next step; spec/surface.md §18.2 rule 2), then the preview to start
/// again from when the run accepted proposals or applied.
fn error_summary(r: &ToolResult, a: &MigrateArgs, step: Step) -> String {
    let mut out = String::new();
    out.push_str(match step {
        Step::Preview => "preview of the 0.1 to 0.2 migration failed (nothing written)\n",
        Step::Apply => "apply of the 0.1 to 0.2 migration failed\n",
    });
    let readable = r.texts.get(1).cloned().unwrap_or_else(|| {
        format!(
            "{} ({})",
            r.structured["message"].as_str().unwrap_or_default(),
            r.structured["code"].as_str().unwrap_or_default()
        )
    });
    for line in readable.lines() {
        let _ = writeln!(out, "error: {}", shown(line));
    }
    if step == Step::Apply || a.accept.is_some() {
        let _ = writeln!(
            out,
            "\nto start again, preview without --accept and --apply:\n  {}",
            preview_command(a)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_leaves_plain_words_bare_and_quotes_the_rest() {
        assert_eq!(shell_quote("sha256:00ff"), "sha256:00ff");
        assert_eq!(shell_quote("agent/1.0"), "agent/1.0");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("{\"a\":1}"), "'{\"a\":1}'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn shown_escapes_control_characters_only() {
        assert_eq!(shown("a\u{1b}[2Jb\nc"), "a\\u{1b}[2Jb\\nc");
        assert_eq!(shown("plain — text"), "plain — text");
    }

    #[test]
    fn blocked_and_rejected_exit_2_errors_1_the_rest_0() {
        let r = |status: &str, is_error: bool| ToolResult {
            texts: Vec::new(),
            structured: json!({"status": status}),
            is_error,
        };
        assert_eq!(exit_code(&r("blocked", false)), EXIT_BLOCKED);
        assert_eq!(exit_code(&r("rejected", false)), EXIT_BLOCKED);
        assert_eq!(exit_code(&r("applicable", false)), 0);
        assert_eq!(exit_code(&r("applied", false)), 0);
        assert_eq!(exit_code(&r("noop", false)), 0);
        assert_eq!(exit_code(&r("blocked", true)), 1);
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        a: MigrateArgs,
    }

    fn parsed(args: &[&str]) -> MigrateArgs {
        use clap::Parser as _;
        let mut all = vec!["migrate", "b", "--generated-by", "agent/1.0"];
        all.extend_from_slice(&["--timestamp-policy", "preserve"]);
        all.extend_from_slice(args);
        Cli::try_parse_from(all).expect("valid flags").a
    }

    fn blocked_with_proposals(needing_review: u64) -> Value {
        let flagged = json!({"path": "a.md", "entries": [
            {"legacy_number": 1, "source_id": "x", "needs_review": true}]});
        let plain = json!({"path": "b.md", "entries": [{"legacy_number": 1, "source_id": "y"}]});
        json!({
            "status": "blocked",
            "source": {"from_version": "0.1", "to_version": "0.2",
                       "resolution_source": "explicit", "transition": "v0.1-to-v0.2"},
            "totals": {"affected_paths": 0, "blockers": 3, "manual_actions": 1,
                       "diagnostics": 0, "proposed_citation_mappings": 2,
                       "proposals_needing_review": needing_review},
            "diagnostic_counts": {},
            "blockers": [
                {"code": "c1", "path": "a.md", "message": "first a"},
                {"code": "c1", "path": "b.md", "message": "first b"},
                {"code": "c2", "path": "b.md", "message": "same"},
            ],
            "manual_actions": [{"code": "m", "path": "b.md", "message": "do \u{1b}[2J it"}],
            "proposed_citation_mappings": [flagged, plain],
            "proposals_truncated": false,
            "proposals_digest": "sha256:ab",
            "plan_digest": "",
            "base_revision": "sha256:cd",
        })
    }

    #[test]
    fn a_code_saying_one_thing_is_explained_once_and_one_saying_more_on_its_lines() {
        let s = preview_summary(&blocked_with_proposals(0), &parsed(&[]));
        assert!(s.contains("\n  a.md:\n    blocker c1: first a\n"), "{s}");
        assert!(
            s.contains("\n  b.md: blocker c2, manual action m\n    blocker c1: first b\n"),
            "{s}"
        );
        assert!(
            s.contains(
                "what the codes say:\n  blocker c2: same\n  manual action m: do \\u{1b}[2J it\n"
            ),
            "{s}"
        );
        assert!(!s.contains('\u{1b}'), "{s}");
        assert!(!s.contains("needs_review"), "{s}");
        assert!(s.ends_with(
            "next: accept exactly these suggestions:\n  okf-mcp migrate b --generated-by agent/1.0 --timestamp-policy preserve --accept sha256:ab\n"
        ), "{s}");
        // a.md, the first blocked document, has a proposal: every blocked document has one.
        assert!(!s.contains("still blocks"), "{s}");
    }

    #[test]
    fn proposals_needing_review_are_named_and_their_flag_is_left_to_the_user() {
        let s = preview_summary(&blocked_with_proposals(1), &parsed(&[]));
        assert!(
            s.contains("1 of them have entries marked needs_review (first: a.md): look at those; accepting them needs --accept-needs-review added to the command below."),
            "{s}"
        );
        assert!(
            !s.contains("--accept sha256:ab --accept-needs-review"),
            "{s}"
        );
        // Once passed, the flag stays on the apply command.
        let mut p = blocked_with_proposals(0);
        p["status"] = json!("applicable");
        p["plan_digest"] = json!("sha256:ef");
        p["proposals_digest"] = json!("");
        p["source"]["candidates"] = json!([]);
        let s = preview_summary(
            &p,
            &parsed(&["--accept", "sha256:ab", "--accept-needs-review"]),
        );
        assert!(
            !s.contains(" --from")
                && s.contains("--accept sha256:ab --accept-needs-review --apply sha256:ef --base-revision sha256:cd --expected-source '{"),
            "{s}"
        );
    }

    #[test]
    fn a_bundle_argument_keeps_absolute_paths_and_resolves_relative_ones() {
        assert_eq!(bundle_path(OsStr::new("/a/b/")).as_deref(), Some("/a/b"));
        assert_eq!(bundle_path(OsStr::new("/")).as_deref(), Some("/"));
        let cwd = std::env::current_dir().expect("cwd");
        let want = cwd.join("b").to_str().expect("utf-8").to_owned();
        assert_eq!(bundle_path(OsStr::new("./b/")), Some(want.clone()));
        assert_eq!(bundle_path(OsStr::new("b")), Some(want));
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(bundle_path(OsStr::from_bytes(b"\xff")), None);
    }
}
