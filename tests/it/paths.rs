//! PTH-01…05: the `bundle_path` rules of spec/surface.md §7 for every registered tool, and
//! "nothing before I/O" (spec/surface.md §9.1).
//!
//! The matrix runs in process through the shared dispatcher (the same function MCP and the
//! CLI call); one case per tool also runs through the real binary. The helpers it shares with
//! `capture.rs` (every-tool iteration, valid arguments) are in `support/dispatch.rs`.
//!
//! Every registered tool is checked: a handler that is still a skeleton stub ("… is not
//! implemented yet", answered without looking at `bundle_path`) fails the checks instead of
//! being skipped (`tools/list` lists only implemented tools).

#![allow(clippy::disallowed_methods)] // tests build their own temp trees

use crate::support::dispatch::*;
use crate::support::util::*;
use okf_mcp::tools::Ctx;
use okf_mcp::wire::registry::{self, ToolSpec};
use serde_json::{json, Value};
use std::path::Path;

/// Whether `spec` advertises a top-level input property `name`.
pub fn advertises(spec: &ToolSpec, name: &str) -> bool {
    let schema: Value = serde_json::from_str(spec.input_schema).expect("schema JSON");
    schema["properties"].get(name).is_some()
}

/// Asserts `out` is the `invalid_request` of one `bundle_path` rule, and that neither the
/// path nor `hidden` (e.g. the temp dir) appears anywhere in the result.
fn assert_rule(tool: &str, path: &str, out: &Out, message: &str, hidden: &str) {
    assert!(out.is_error, "{tool} {path:?}: {}", out.full);
    assert_eq!(
        out.code(),
        "invalid_request",
        "{tool} {path:?}: {}",
        out.full
    );
    assert_eq!(out.message(), message, "{tool} {path:?}");
    // PTH-04: no message (nor any other part of the result) contains the path.
    let trimmed = path.trim();
    if trimmed.len() > 1 {
        assert!(
            !out.full.contains(trimmed),
            "{tool} echoes {path:?}: {}",
            out.full
        );
    }
    if !hidden.is_empty() {
        assert!(
            !out.full.contains(hidden),
            "{tool} echoes the host path: {}",
            out.full
        );
    }
}

fn tmp_str(p: &Path) -> String {
    p.to_str().expect("utf-8 temp path").to_owned()
}

/// Every `(path, message)` case of PTH-01…03 over a prepared temp tree; `base` is that tree.
fn cases(base: &Path) -> Vec<(String, &'static str)> {
    let b = tmp_str(base);
    vec![
        // PTH-01 (rules 2–4), rule order: whitespace before absolute before clean.
        ("rel-pth/bndl".into(), "bundle_path must be absolute"),
        ("bndl-pth".into(), "bundle_path must be absolute"),
        ("./bndl-pth".into(), "bundle_path must be absolute"),
        ("rel-pth/../x".into(), "bundle_path must be absolute"),
        (
            format!(" {b}"),
            "bundle_path must not contain surrounding whitespace",
        ),
        (
            format!("{b}\t"),
            "bundle_path must not contain surrounding whitespace",
        ),
        (
            " rel-pth".into(),
            "bundle_path must not contain surrounding whitespace",
        ),
        // AUT-05 (spec/surface.md §18.3 rule 3): each clean rule says its own fix.
        (
            format!("{b}/./bundle"),
            "bundle_path must be clean: remove the single-dot components (each names the directory itself)",
        ),
        (
            format!("{b}/bundle/"),
            "bundle_path must be clean: remove the trailing slash",
        ),
        (
            format!("{b}//bundle"),
            "bundle_path must be clean: remove the empty component (a doubled or trailing slash)",
        ),
        (
            format!("{b}/x/../bundle"),
            "bundle_path must be clean: remove the double-dot components and name the directory directly (parent steps are never resolved)",
        ),
        (
            format!("{b}/bun\0dle"),
            "bundle_path must be clean: remove the NUL character",
        ),
        // PTH-02 (rules 7, 8).
        (format!("{b}/missing"), "bundle_path is not accessible"),
        (
            format!("{b}/missing/deeper"),
            "bundle_path is not accessible",
        ),
        (format!("{b}/file.md"), "bundle_path must be a directory"),
        (format!("{b}/fifo"), "bundle_path must be a directory"),
        (format!("{b}/file.md/x"), "bundle_path is not accessible"),
        // PTH-03 (rules 5, 6).
        (format!("{b}/link"), "bundle_path must not be a symlink"),
        (format!("{b}/dangling"), "bundle_path must not be a symlink"),
        (
            format!("{b}/link/metrics"),
            "bundle_path must not contain a symlink",
        ),
    ]
}

/// A temp tree: `bundle/` (demo copy), `file.md`, `fifo`, `link -> bundle`, `dangling`.
fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let (t, bundle) = copy_bundle(&fixture("demo"));
    let base = t.path().to_path_buf();
    std::fs::write(base.join("file.md"), b"---\ntype: X\n---\n").expect("write");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        base.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .expect("mkfifo");
    std::os::unix::fs::symlink(&bundle, base.join("link")).expect("symlink");
    std::os::unix::fs::symlink(base.join("nowhere"), base.join("dangling")).expect("symlink");
    (t, base)
}

#[test]
fn pth_01_02_03_04_every_rule_for_every_tool_without_echoing_the_path() {
    let (_t, base) = tree();
    let before = snap(&base);
    let host = tmp_str(&base);
    let mut checked = 0;
    for spec in live_tools() {
        for (path, message) in cases(&base) {
            let out = dispatch(spec.name, &valid_args(spec, &path));
            assert_rule(spec.name, &path, &out, message, &host);
            checked += 1;
        }
        // The well-formed root of the same tree is accepted by the walk (a baseline: the
        // failures above are the path's, not the arguments'). Mutating tools run on a copy.
        let (_copy, copy) = copy_bundle(&base.join("bundle"));
        let ok_root = if spec.read_only {
            format!("{host}/bundle")
        } else {
            copy.to_string_lossy().into_owned()
        };
        let ok = dispatch(spec.name, &valid_args(spec, &ok_root));
        assert!(
            !ok.message().starts_with("bundle_path"),
            "{}: {}",
            spec.name,
            ok.full
        );
        assert_ne!(
            ok.code(),
            "schema_validation",
            "extend valid_args for {}",
            spec.name
        );
    }
    assert!(checked > 0);
    assert_eq!(snap(&base), before, "tree unchanged");
}

#[test]
fn pth_02_03_through_the_real_binary() {
    let (_t, base) = tree();
    let host = tmp_str(&base);
    for spec in live_tools() {
        for (rel, message) in [
            ("missing", "bundle_path is not accessible"),
            ("file.md", "bundle_path must be a directory"),
            ("link", "bundle_path must not be a symlink"),
            ("link/metrics", "bundle_path must not contain a symlink"),
        ] {
            let path = format!("{host}/{rel}");
            let out = call(spec.name, &valid_args(spec, &path));
            assert_eq!(out.code, 1, "{}: {}", spec.name, out.stdout);
            assert!(out.is_error());
            assert_eq!(out.structured()["code"], "invalid_request");
            assert_eq!(out.structured()["message"], message);
            crate::support::util::assert_error_texts(out.result.as_ref().expect("result"));
            assert!(!out.stdout.contains(&host), "{}", out.stdout);
            assert!(out.stderr.is_empty(), "{}", out.stderr);
        }
    }
}

#[test]
fn pth_03_symlinked_root_is_refused_even_though_its_target_is_a_valid_bundle() {
    let (_t, base) = tree();
    for spec in live_tools() {
        let direct = dispatch(
            spec.name,
            &valid_args(spec, &format!("{}/bundle", tmp_str(&base))),
        );
        let via_link = dispatch(
            spec.name,
            &valid_args(spec, &format!("{}/link", tmp_str(&base))),
        );
        assert_eq!(via_link.message(), "bundle_path must not be a symlink");
        assert_ne!(direct.message(), via_link.message());
    }
}

/// Input faults that the pure steps (2–5) of spec/surface.md §9.1 must report first; with
/// `tool_level` also those of step 5 that the tool's own pure parse reports.
fn input_faults(
    spec: &ToolSpec,
    bundle: &str,
    tool_level: bool,
) -> Vec<(String, Vec<u8>, &'static str)> {
    let mut v = Vec::new();
    let base = valid_args(spec, bundle);
    let mut unknown = base.clone();
    unknown["zz_not_advertised"] = json!(1);
    v.push((
        "unknown key".into(),
        unknown.to_string().into_bytes(),
        "schema_validation",
    ));
    let mut camel = base.clone();
    camel["bundlePath"] = json!(bundle);
    // The alias table itself is proven elsewhere; here only precedence over the path counts.
    v.push((
        "camelCase alias".into(),
        camel.to_string().into_bytes(),
        "unknown_parameter|schema_validation",
    ));
    let mut wrong_type = base.clone();
    wrong_type["bundle_path"] = json!(7);
    v.push((
        "bundle_path not a string".into(),
        wrong_type.to_string().into_bytes(),
        "schema_validation",
    ));
    let mut malformed = base.to_string().into_bytes();
    malformed.pop(); // drop the closing brace
    v.push(("malformed JSON".into(), malformed, "invalid_request"));
    let mut bad_utf8 = base.to_string().into_bytes();
    bad_utf8.extend_from_slice(b" \xff");
    v.push(("invalid UTF-8".into(), bad_utf8, "invalid_request"));
    if advertises(spec, "temporal_profile") {
        let mut tp = base.clone();
        tp["temporal_profile"] = json!("iso-8601");
        v.push((
            "bad temporal_profile".into(),
            tp.to_string().into_bytes(),
            "schema_validation",
        ));
    }
    if tool_level && advertises(spec, "concept_id") {
        let mut id = base.clone();
        id["concept_id"] = json!("../escape");
        v.push((
            "non-canonical concept_id".into(),
            id.to_string().into_bytes(),
            "schema_validation|invalid_request",
        ));
    }
    v
}

#[test]
fn pth_05_input_fault_wins_over_a_bad_bundle_path() {
    let (_t, base) = tree();
    let host = tmp_str(&base);
    let before = snap(&base);
    let missing = format!("{host}/never-created");
    let bad_paths = [
        "relative/bundle".to_owned(),
        " /padded".to_owned(),
        format!("{host}/a/../b"),
        missing.clone(),
        format!("{host}/link"),
        format!("{host}/fifo"),
    ];
    // Run on every registered tool, stubs included: steps 2–4 belong to the dispatcher.
    for spec in registry::all() {
        for bad in &bad_paths {
            for (what, raw, code) in input_faults(spec, bad, !is_stub(spec)) {
                let out = dispatch_raw_ctx(spec.name, &raw, &Ctx::default());
                assert!(out.is_error, "{} {what} {bad:?}", spec.name);
                assert!(
                    code.split('|').any(|c| c == out.code()),
                    "{} {what} {bad:?}: {}",
                    spec.name,
                    out.full
                );
                assert!(
                    !out.message().starts_with("bundle_path"),
                    "{} {what}: the path was checked first: {}",
                    spec.name,
                    out.full
                );
                assert!(!out.full.contains(&host), "{}", out.full);
            }
        }
    }
    assert!(!Path::new(&missing).exists());
    assert_eq!(snap(&base), before, "tree unchanged, no .okf");
}

#[test]
fn pth_05_input_fault_on_a_real_bundle_touches_nothing() {
    let (_t, bundle) = copy_bundle(&fixture("demo"));
    let before = snap(&bundle);
    for spec in registry::all() {
        for (what, raw, code) in input_faults(spec, &tmp_str(&bundle), !is_stub(spec)) {
            let out = dispatch_raw_ctx(spec.name, &raw, &Ctx::default());
            assert!(
                code.split('|').any(|c| c == out.code()),
                "{} {what}: {}",
                spec.name,
                out.full
            );
        }
    }
    assert_eq!(snap(&bundle), before);
    assert!(!bundle.join(".okf").exists());
}

#[test]
fn pth_05_input_fault_wins_through_the_real_binary() {
    for spec in registry::all() {
        let mut args = valid_args(spec, "relative/bundle");
        args["zz_not_advertised"] = json!("sk_live_SECRET");
        let out = call(spec.name, &args);
        assert_eq!(out.code, 1);
        assert_eq!(
            out.structured()["code"],
            "schema_validation",
            "{}",
            out.stdout
        );
        assert!(!out.stdout.contains("zz_not_advertised"));
        assert!(!out.stdout.contains("sk_live_SECRET"));
    }
}
