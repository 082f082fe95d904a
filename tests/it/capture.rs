//! REV-01…08 and CAN-02: the capture and its revision (spec/store.md §3, §14, §15).
//!
//! Revision and limit checks call `capture()` directly (library level); the refusals run for
//! every implemented registered tool through the shared dispatcher, and once per tool through
//! the real binary. Each case works on a fresh copy of a fixture and checks that the tree is
//! unchanged and that no `.okf/` appeared.

#![allow(clippy::disallowed_methods)] // tests build their own temp trees

use crate::support::dispatch::{dispatch, live_tools, snap, valid_args, Out};
use crate::support::util::*;
use cap_std::fs::Dir;
use okf_mcp::cancel::Cancel;
use okf_mcp::envelope::ToolError;
use okf_mcp::okf::capture::Capture;
use okf_mcp::store::capture::{self, MAX_FILE_BYTES, MAX_TOTAL_BYTES};
use okf_mcp::store::root;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// The resident capture of `p`, after checking that a spilled capture (docs/store.md §3.2:
/// no bytes kept) of the same tree gives the same answer: the same error, or the same
/// revision and file list (paths, sizes, digests).
fn cap(p: &Path) -> Result<Capture, ToolError> {
    let r = root::open(s(p)).expect("root opens");
    let resident = capture::capture(&r, &Cancel::new());
    let spilled = capture::capture_with(&r, &Cancel::new(), Some(&capture::Spill::DIGESTS_ONLY));
    match (&resident, &spilled) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.revision, b.revision);
            let list = |c: &Capture| -> Vec<(String, u64, [u8; 32])> {
                c.files
                    .iter()
                    .map(|f| (f.path.clone(), f.size, f.digest))
                    .collect()
            };
            assert_eq!(list(a), list(b));
            assert!(b.files.iter().all(|f| !f.is_resident()));
            assert!(a.is_complete() && !b.missed());
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("resident and spilled captures disagree"),
    }
    resident
}

fn rev(p: &Path) -> String {
    cap(p).expect("capture").revision
}

/// spec/store.md §3.6 computed independently from the capture code.
fn expected_revision(files: &[(String, Vec<u8>)]) -> String {
    let mut files = files.to_vec();
    files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut enc = Vec::new();
    let mut put = |b: &[u8]| {
        enc.extend_from_slice(&(b.len() as u64).to_be_bytes());
        enc.extend_from_slice(b);
    };
    put(b"okf:revision:v1");
    let mut enc2 = enc.clone();
    enc2.extend_from_slice(&(files.len() as u64).to_be_bytes());
    for (p, bytes) in &files {
        enc2.extend_from_slice(&(p.len() as u64).to_be_bytes());
        enc2.extend_from_slice(p.as_bytes());
        let d = Sha256::digest(bytes);
        enc2.extend_from_slice(&(d.len() as u64).to_be_bytes());
        enc2.extend_from_slice(&d);
    }
    let h = Sha256::digest(&enc2);
    let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The visible files of a tree per spec/store.md §3.1 (root `.okf`/`.git` excluded), the
/// ones a revision covers: no directory entries, and `.git` out too, unlike
/// `support::util::visible`.
fn revision_files(root: &Path) -> Vec<(String, Vec<u8>)> {
    snap(root)
        .into_iter()
        .filter(|(p, _)| !p.ends_with('/'))
        .filter(|(p, _)| {
            let first = p.split('/').next().unwrap_or("");
            first != ".okf" && first != ".git"
        })
        .collect()
}

fn mkfifo(p: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        p,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .expect("mkfifo");
}

fn mksock(p: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        p,
        rustix::fs::FileType::Socket,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .expect("mknod socket");
}

/// Runs `f` on another thread and fails (instead of hanging the suite) if it never returns.
fn no_hang<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("{what}: no answer (blocked)"))
}

/// Asserts the refusal of spec/store.md §3.1 naming `rel`.
fn assert_refusal(tool: &str, out: &Out, prefix: &str, diag: &str, rel: &str) {
    assert!(out.is_error, "{tool}: {}", out.full);
    assert_eq!(out.code(), "invalid_request", "{tool}: {}", out.full);
    assert_eq!(out.message(), format!("{prefix}: {rel}"), "{tool}");
    let d = out.diagnostics();
    assert_eq!(d.len(), 1, "{tool}: {}", out.full);
    assert_eq!(d[0]["code"], diag);
    assert_eq!(d[0]["severity"], "ERROR");
    assert_eq!(d[0]["file"], rel);
}

// ---------------------------------------------------------------------------------------
// REV-01, REV-02: the revision.

#[test]
fn rev_01_same_tree_same_revision_and_any_visible_change_changes_it() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let r0 = rev(&b);
    assert_eq!(rev(&b), r0, "two captures of the same tree");
    assert_eq!(
        r0,
        expected_revision(&revision_files(&b)),
        "spec/store.md §3.6 encoding"
    );
    let c = cap(&b).expect("capture");
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["index.md", "metrics/revenue.md", "tables/orders.md"]
    );

    // One byte.
    let f = b.join("metrics/revenue.md");
    let orig = std::fs::read(&f).expect("read");
    let mut changed = orig.clone();
    let last = changed.len() - 1;
    changed[last] ^= 1;
    std::fs::write(&f, &changed).expect("write");
    let r1 = rev(&b);
    assert_ne!(r1, r0);
    assert_eq!(r1, expected_revision(&revision_files(&b)));
    std::fs::write(&f, &orig).expect("write");
    assert_eq!(rev(&b), r0, "restoring the byte restores the revision");

    // Mode and timestamps never count.
    std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("chmod");
    assert_eq!(rev(&b), r0);

    // An empty file.
    std::fs::write(b.join("empty"), b"").expect("write");
    let r2 = rev(&b);
    assert_ne!(r2, r0);
    assert_eq!(r2, expected_revision(&revision_files(&b)));
    std::fs::remove_file(b.join("empty")).expect("rm");
    assert_eq!(rev(&b), r0);

    // An empty directory contributes nothing.
    std::fs::create_dir(b.join("empty-dir")).expect("mkdir");
    assert_eq!(rev(&b), r0);

    // A rename (same bytes, other path).
    std::fs::rename(b.join("tables/orders.md"), b.join("tables/orders2.md")).expect("mv");
    let r3 = rev(&b);
    assert_ne!(r3, r0);
    assert_eq!(r3, expected_revision(&revision_files(&b)));
}

#[test]
fn rev_01_moving_bytes_between_files_changes_the_revision() {
    // Length prefixes: ("ab","") and ("a","b")-style shifts must not collide.
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("a"), b"xy").expect("write");
    std::fs::write(t.path().join("b"), b"").expect("write");
    let r0 = rev(t.path());
    std::fs::write(t.path().join("a"), b"x").expect("write");
    std::fs::write(t.path().join("b"), b"y").expect("write");
    assert_ne!(rev(t.path()), r0);
}

#[test]
fn rev_02_root_git_and_okf_never_count_nested_ones_do() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let r0 = rev(&b);
    for d in [".git/objects/ab", ".okf/receipts"] {
        std::fs::create_dir_all(b.join(d)).expect("mkdir");
    }
    std::fs::write(b.join(".git/HEAD"), b"ref: refs/heads/main\n").expect("write");
    std::fs::write(b.join(".git/objects/ab/cd"), b"blob").expect("write");
    std::fs::write(b.join(".okf/receipts/r.json"), b"{}").expect("write");
    assert_eq!(rev(&b), r0, "added under root .git/.okf");
    std::fs::write(b.join(".git/HEAD"), b"ref: refs/heads/other\n").expect("write");
    std::fs::write(b.join(".okf/receipts/r.json"), b"{\"x\":1}").expect("write");
    assert_eq!(rev(&b), r0, "changed under root .git/.okf");
    let c = cap(&b).expect("capture");
    assert!(c
        .files
        .iter()
        .all(|f| !f.path.starts_with(".git") && !f.path.starts_with(".okf")));

    for nested in ["x/.git/HEAD", "x/.okf/state"] {
        let (_t2, b2) = copy_bundle(&fixture("demo"));
        let r = rev(&b2);
        std::fs::create_dir_all(b2.join(nested).parent().expect("parent")).expect("mkdir");
        std::fs::write(b2.join(nested), b"n").expect("write");
        let c = cap(&b2).expect("capture");
        assert_ne!(c.revision, r, "{nested} counts");
        assert!(c.get(nested).is_some(), "{nested} is visible");
    }
    // Dot-files elsewhere count, including root-level ones that are not exactly .git/.okf.
    for other in [".gitignore", ".okfx", ".GIT"] {
        let (_t3, b3) = copy_bundle(&fixture("demo"));
        let r = rev(&b3);
        std::fs::write(b3.join(other), b"n").expect("write");
        assert_ne!(rev(&b3), r, "{other} counts");
    }
}

// ---------------------------------------------------------------------------------------
// REV-03: symlinks, every tool.

/// Builds a demo copy with a symlink at `rel` and a secret file outside the bundle.
fn with_symlink(rel: &str, target: &str) -> (tempfile::TempDir, PathBuf) {
    let (t, b) = copy_bundle(&fixture("demo"));
    std::fs::write(
        t.path().join("secret.md"),
        b"---\ntype: X\n---\nTOP-SECRET-CONTENT\n",
    )
    .expect("write");
    let target = target.replace("{outside}", s(&t.path().join("secret.md")));
    std::os::unix::fs::symlink(target, b.join(rel)).expect("symlink");
    (t, b)
}

const SYMLINK_CASES: &[(&str, &str)] = &[
    ("metrics/alias.md", "revenue.md"),
    ("tables/sub", "../metrics"),
    ("a-dangling.md", "does-not-exist.md"),
    ("outside.md", "{outside}"),
    ("z-dir-outside", "/"),
];

#[test]
fn rev_03_a_symlink_anywhere_fails_every_tool_naming_the_relative_path() {
    let tools = live_tools();
    for (rel, target) in SYMLINK_CASES {
        let (t, b) = with_symlink(rel, target);
        let before = snap(t.path());
        for spec in &tools {
            let out = dispatch(spec.name, &valid_args(spec, s(&b)));
            assert_refusal(
                spec.name,
                &out,
                "bundle contains a symlink",
                "symlink_refused",
                rel,
            );
            assert!(!out.full.contains("TOP-SECRET"), "{}", out.full);
            assert!(!out.full.contains(s(t.path())), "{}", out.full);
        }
        assert_eq!(snap(t.path()), before, "tree unchanged");
        assert!(!b.join(".okf").exists());
    }
}

#[test]
fn rev_03_symlink_refusal_through_the_real_binary() {
    for spec in live_tools() {
        let (t, b) = with_symlink("outside.md", "{outside}");
        let before = snap(t.path());
        let out = call(spec.name, &valid_args(spec, s(&b)));
        assert_eq!(out.code, 1, "{}", out.stdout);
        assert_eq!(out.structured()["code"], "invalid_request");
        assert_eq!(
            out.structured()["message"],
            "bundle contains a symlink: outside.md"
        );
        assert_eq!(out.structured()["diagnostics"][0]["file"], "outside.md");
        assert!(!out.stdout.contains("TOP-SECRET"));
        assert_eq!(snap(t.path()), before);
    }
}

// ---------------------------------------------------------------------------------------
// REV-04: special files.

#[test]
fn rev_04_fifo_and_socket_fail_promptly_for_every_tool() {
    let tools = live_tools();
    for (rel, make) in [
        ("metrics/pipe", mkfifo as fn(&Path)),
        ("tables/sock", mksock as fn(&Path)),
    ] {
        let (t, b) = copy_bundle(&fixture("demo"));
        make(&b.join(rel));
        let before = snap(t.path());
        for spec in &tools {
            let (name, args) = (spec.name, valid_args(spec, s(&b)));
            let out = no_hang(name, move || dispatch(name, &args));
            assert_refusal(
                name,
                &out,
                "bundle contains an unsupported file type",
                "unsupported_file_type",
                rel,
            );
        }
        assert_eq!(snap(t.path()), before);
        assert!(!b.join(".okf").exists());
    }
}

#[test]
fn rev_04_character_device_is_refused_when_one_can_be_made() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let dev = rustix::fs::mknodat(
        rustix::fs::CWD,
        b.join("null"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        rustix::fs::makedev(1, 3),
    );
    if dev.is_err() {
        eprintln!("skipped: mknod of a character device is not permitted here");
        return;
    }
    let e = cap(&b).expect_err("device");
    assert_eq!(e.code, "invalid_request");
    assert_eq!(e.message, "bundle contains an unsupported file type: null");
    assert_eq!(e.diagnostics[0].code, "unsupported_file_type");
}

#[test]
fn rev_04_fifo_through_the_real_binary_does_not_block() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    mkfifo(&b.join("index.pipe"));
    for spec in live_tools() {
        let args = valid_args(spec, s(&b));
        let name = spec.name;
        let out = no_hang(name, move || call(name, &args));
        assert_eq!(
            out.structured()["code"],
            "invalid_request",
            "{}",
            out.stdout
        );
        assert_eq!(
            out.structured()["message"],
            "bundle contains an unsupported file type: index.pipe"
        );
    }
}

// ---------------------------------------------------------------------------------------
// REV-05: swap between lstat and open (fault-injection hook).

#[cfg(feature = "fault-injection")]
mod swap {
    use super::*;
    use okf_mcp::store::hooks::{self, CaptureHooks, Swap, SwapKind};
    use serde_json::json;

    fn kinds(outside: &Path) -> Vec<(SwapKind, &'static str, &'static str)> {
        vec![
            (
                SwapKind::Fifo,
                "bundle contains an unsupported file type",
                "unsupported_file_type",
            ),
            (
                SwapKind::Socket,
                "bundle contains an unsupported file type",
                "unsupported_file_type",
            ),
            (
                SwapKind::Symlink(s(outside).to_owned()),
                "bundle contains a symlink",
                "symlink_refused",
            ),
        ]
    }

    fn hooks_for(kind: SwapKind) -> CaptureHooks {
        CaptureHooks {
            cancel_after_files: None,
            swap: Some(Swap {
                path: "metrics/revenue.md".into(),
                kind,
            }),
            forget_memo_after_spill: false,
            deny: None,
        }
    }

    #[test]
    fn rev_05_swap_after_lstat_is_refused_not_followed_not_blocking_library() {
        // The symlink points at a readable regular file outside the bundle: following it
        // would make the capture succeed with that file's bytes.
        let probe = tempfile::tempdir().expect("tempdir");
        std::fs::write(probe.path().join("secret"), b"TOP-SECRET").expect("write");
        for (kind, prefix, diag) in kinds(&probe.path().join("secret")) {
            let (_t, b) = copy_bundle(&fixture("demo"));
            let bs = s(&b).to_owned();
            let h = hooks_for(kind.clone());
            let res = no_hang("capture", move || {
                let _g = hooks::install(h);
                cap(Path::new(&bs))
            });
            let e = res.expect_err("swapped entry refused");
            assert_eq!(e.code, "invalid_request", "{kind:?}");
            assert_eq!(
                e.message,
                format!("{prefix}: metrics/revenue.md"),
                "{kind:?}"
            );
            assert_eq!(e.diagnostics.len(), 1);
            assert_eq!(e.diagnostics[0].code, diag);
            assert_eq!(e.diagnostics[0].file, "metrics/revenue.md");
            // The hook really swapped the entry (the refusal is not from anything else).
            let ft = std::fs::symlink_metadata(b.join("metrics/revenue.md"))
                .expect("lstat")
                .file_type();
            assert!(!ft.is_file() && !ft.is_dir(), "{kind:?}");
        }
    }

    #[test]
    fn rev_05_swap_for_every_tool_in_process() {
        for spec in live_tools() {
            let probe = tempfile::tempdir().expect("tempdir");
            std::fs::write(probe.path().join("secret"), b"TOP-SECRET").expect("write");
            for (kind, prefix, diag) in kinds(&probe.path().join("secret")) {
                let (_t, b) = copy_bundle(&fixture("demo"));
                let (name, args) = (spec.name, valid_args(spec, s(&b)));
                let h = hooks_for(kind);
                let out = no_hang(name, move || {
                    let _g = hooks::install(h);
                    dispatch(name, &args)
                });
                assert_refusal(name, &out, prefix, diag, "metrics/revenue.md");
                assert!(!out.full.contains("TOP-SECRET"));
                assert!(!b.join(".okf").exists());
            }
        }
    }

    #[test]
    fn rev_05_swap_through_the_real_binary_via_environment() {
        for (kind, diag) in [
            ("fifo", "unsupported_file_type"),
            ("socket", "unsupported_file_type"),
            ("symlink", "symlink_refused"),
        ] {
            let (_t, b) = copy_bundle(&fixture("demo"));
            let args = json!({"bundle_path": b});
            let env = format!("{kind}:tables/orders.md");
            let out = no_hang(kind, move || {
                call_env("list_concepts", &args, &[(hooks::ENV_SWAP, env.as_str())])
            });
            assert_eq!(out["structuredContent"]["code"], "invalid_request", "{out}");
            assert_eq!(out["structuredContent"]["diagnostics"][0]["code"], diag);
            assert_eq!(
                out["structuredContent"]["diagnostics"][0]["file"],
                "tables/orders.md"
            );
        }
    }
}

/// `okf-mcp call <tool> --args <json>` with extra environment variables; the parsed result.
#[cfg(feature = "fault-injection")]
pub fn call_env(tool: &str, args: &Value, env: &[(&str, &str)]) -> Value {
    call_env_exit(tool, args, env, 1).0
}

// ---------------------------------------------------------------------------------------
// REV-06: limits, exactly at and one past each.

fn sparse(p: &Path, len: u64) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .expect("create");
    f.set_len(len).expect("set_len");
}

fn assert_limit(r: Result<Capture, ToolError>, what: &str) {
    let e = r.expect_err(what);
    assert_eq!(e.code, "resource_limit", "{what}: {e:?}");
    assert!(
        e.diagnostics.iter().any(|d| d.code == "recovery_step"),
        "{what}"
    );
}

#[test]
fn rev_06_file_count_limit() {
    let t = tempfile::tempdir().expect("tempdir");
    let b = t.path();
    for d in 0..10 {
        std::fs::create_dir(b.join(format!("d{d}"))).expect("mkdir");
        for i in 0..1000 {
            std::fs::write(b.join(format!("d{d}/{i:04}")), b"").expect("write");
        }
    }
    // Root .okf/.git never count towards the limit.
    std::fs::create_dir(b.join(".okf")).expect("mkdir");
    std::fs::write(b.join(".okf/x"), b"").expect("write");
    std::fs::write(b.join(".git"), b"").expect("write");
    assert_eq!(cap(b).expect("10,000 files pass").files.len(), 10_000);
    std::fs::write(b.join("one-more"), b"").expect("write");
    assert_limit(cap(b), "10,001 files");
    let tools = live_tools();
    for spec in tools {
        let out = dispatch(spec.name, &valid_args(spec, s(b)));
        assert_eq!(out.code(), "resource_limit", "{}", spec.name);
    }
}

#[test]
fn rev_06_one_file_limit() {
    let t = tempfile::tempdir().expect("tempdir");
    sparse(&t.path().join("big"), MAX_FILE_BYTES);
    let c = cap(t.path()).expect("16 MiB passes");
    assert_eq!(c.files[0].bytes().len() as u64, MAX_FILE_BYTES);
    let t2 = tempfile::tempdir().expect("tempdir");
    sparse(&t2.path().join("big"), MAX_FILE_BYTES + 1);
    assert_limit(cap(t2.path()), "16 MiB + 1");
    // A huge sparse file is refused on its lstat size, before any read.
    let t3 = tempfile::tempdir().expect("tempdir");
    sparse(&t3.path().join("huge"), 1 << 40);
    assert_limit(cap(t3.path()), "1 TiB sparse");
}

/// Issue 25 item 5: the per-file limit names the file, for every tool (`validate_bundle`
/// included, which could not find it otherwise), with a step that moves it out of the
/// bundle; nothing is written and no `.okf/` appears. Through the real binary.
#[test]
fn rev_06_a_file_over_16_mib_is_named_with_a_recovery_step_by_every_tool() {
    let (_t, b) = copy_bundle(&fixture("patch-ext"));
    sparse(&b.join("tables/huge.bin"), MAX_FILE_BYTES + 1);
    let before = snapshot(&b);
    for tool in ["validate_bundle", "list_concepts"] {
        let r = call(tool, &serde_json::json!({"bundle_path": b}));
        let e = r.structured();
        assert_eq!(e["code"], "resource_limit", "{tool}: {}", r.stdout);
        assert_eq!(
            e["message"], "a bundle file exceeds 16 MiB: tables/huge.bin",
            "{tool}"
        );
        let d = &e["diagnostics"][0];
        assert_eq!(d["code"], "recovery_step", "{tool}");
        assert_eq!(d["file"], "tables/huge.bin", "{tool}");
        assert_eq!(
            d["message"],
            "Move tables/huge.bin out of the bundle directory (or make it smaller), then repeat the call.",
            "{tool}"
        );
    }
    assert_eq!(snapshot(&b), before, "nothing written");
    assert!(!b.join(".okf").exists(), "no .okf/");
}

#[test]
fn rev_06_total_bytes_limit() {
    let t = tempfile::tempdir().expect("tempdir");
    for i in 0..4 {
        sparse(&t.path().join(format!("f{i}")), MAX_FILE_BYTES);
    }
    let c = cap(t.path()).expect("64 MiB in total passes");
    assert_eq!(c.total_bytes(), MAX_TOTAL_BYTES);
    drop(c);
    std::fs::write(t.path().join("g"), b"1").expect("write");
    assert_limit(cap(t.path()), "64 MiB + 1");
}

/// Creates `comps` directories then `file` through descriptor-relative calls (the absolute
/// path may exceed `PATH_MAX`).
fn deep(base: &Path, comps: &[String], file: &str) {
    let mut dir = Dir::open_ambient_dir(base, cap_std::ambient_authority()).expect("open");
    for c in comps {
        dir.create_dir(c).expect("mkdir");
        dir = dir.open_dir(c).expect("open dir");
    }
    dir.write(file, b"x").expect("write");
}

#[test]
fn rev_06_path_components_limit() {
    let t = tempfile::tempdir().expect("tempdir");
    let dirs: Vec<String> = (0..63).map(|_| "d".to_owned()).collect();
    deep(t.path(), &dirs, "f");
    let c = cap(t.path()).expect("64 components pass");
    assert_eq!(c.files[0].path.split('/').count(), 64);
    let t2 = tempfile::tempdir().expect("tempdir");
    let dirs: Vec<String> = (0..64).map(|_| "d".to_owned()).collect();
    deep(t2.path(), &dirs, "f");
    assert_limit(cap(t2.path()), "65 components");
    for spec in live_tools() {
        let out = dispatch(spec.name, &valid_args(spec, s(t2.path())));
        assert_eq!(out.code(), "resource_limit", "{}", spec.name);
    }
}

#[test]
fn rev_06_path_bytes_limit() {
    // 20 directories of 195 bytes + 20 separators = 3920 bytes; the file name makes the rest.
    let dirs: Vec<String> = (0..20)
        .map(|i| format!("{i:02}{}", "p".repeat(193)))
        .collect();
    let t = tempfile::tempdir().expect("tempdir");
    deep(t.path(), &dirs, &"f".repeat(176));
    let c = cap(t.path()).expect("4096 bytes pass");
    assert_eq!(c.files[0].path.len(), 4096);
    let t2 = tempfile::tempdir().expect("tempdir");
    deep(t2.path(), &dirs, &"f".repeat(177));
    assert_limit(cap(t2.path()), "4097 bytes");
}

// ---------------------------------------------------------------------------------------
// REV-07: YAML bomb and duplicate anchor, every tool.

#[test]
fn rev_07_yaml_bomb_and_duplicate_anchor_for_every_tool() {
    let tools = live_tools();
    for (fx, code, file) in [
        ("yaml-bomb", "resource_limit", "metrics/bomb.md"),
        ("yaml-dup-anchor", "invalid_yaml_graph", "metrics/dup.md"),
    ] {
        let (t, b) = copy_bundle(&fixture(fx));
        let before = snap(t.path());
        for spec in &tools {
            let out = dispatch(spec.name, &valid_args(spec, s(&b)));
            assert!(out.is_error, "{} {fx}", spec.name);
            assert_eq!(out.code(), code, "{} {fx}: {}", spec.name, out.full);
            let d = out.diagnostics();
            let fault: Vec<&Value> = d.iter().filter(|d| d["code"] == code).collect();
            assert_eq!(fault.len(), 1, "{} {fx}: {}", spec.name, out.full);
            assert_eq!(fault[0]["severity"], "ERROR");
            assert_eq!(fault[0]["file"], file);
            if code == "resource_limit" {
                assert!(d.iter().any(|d| d["code"] == "recovery_step"));
            }
        }
        assert_eq!(snap(t.path()), before, "{fx}: tree unchanged");
        assert!(!b.join(".okf").exists());
    }
}

// ---------------------------------------------------------------------------------------
// REV-08: names that are not representable.

#[test]
fn rev_08_non_utf8_and_control_names_fail_without_echo() {
    let tools = live_tools();
    let names: [&[u8]; 4] = [
        b"caf\xe9-secretname.md",
        b"metrics/\xff-secretname.md",
        b"tables/back\\slash-secretname.md",
        b"ctl\x1b-secretname.md",
    ];
    for raw in names {
        let (t, b) = copy_bundle(&fixture("demo"));
        std::fs::write(b.join(OsStr::from_bytes(raw)), b"x").expect("write");
        let before = snap(t.path());
        let e = cap(&b).expect_err("unrepresentable");
        assert_eq!(e.code, "invalid_request");
        assert_eq!(
            e.message,
            "bundle contains a path that cannot be represented"
        );
        for spec in &tools {
            let out = dispatch(spec.name, &valid_args(spec, s(&b)));
            assert_eq!(out.code(), "invalid_request", "{}", out.full);
            assert_eq!(
                out.message(),
                "bundle contains a path that cannot be represented"
            );
            assert!(!out.full.contains("secretname"), "{}", out.full);
            assert!(out.diagnostics().iter().all(|d| d["file"] == ""));
        }
        assert_eq!(snap(t.path()), before);
        assert!(!b.join(".okf").exists());
    }
}

// ---------------------------------------------------------------------------------------
// CAN-02: cancellation during the capture walk (fault-injection hook).

#[cfg(feature = "fault-injection")]
mod cancel_walk {
    use super::*;
    use okf_mcp::store::hooks::{self, CaptureHooks};

    fn after(n: usize) -> CaptureHooks {
        CaptureHooks {
            cancel_after_files: Some(n),
            swap: None,
            forget_memo_after_spill: false,
            deny: None,
        }
    }

    #[test]
    fn can_02_capture_stops_at_the_checkpoint_after_the_nth_read() {
        let (_t, b) = copy_bundle(&fixture("demo"));
        let r = root::open(s(&b)).expect("root");
        for n in 1..=3 {
            let _g = hooks::install(after(n));
            let cancel = Cancel::new();
            let e = capture::capture(&r, &cancel).expect_err("cancelled");
            assert_eq!(e.code, "operation_cancelled", "n={n}");
            assert!(e.retryable);
            assert!(cancel.is_cancelled());
        }
        // Control: a count past the number of files never fires.
        let _g = hooks::install(after(4));
        let cancel = Cancel::new();
        assert_eq!(
            capture::capture(&r, &cancel)
                .expect("no hook fired")
                .files
                .len(),
            3
        );
        assert!(!cancel.is_cancelled());
    }

    #[test]
    fn can_02_every_tool_answers_operation_cancelled_without_partial_result() {
        for spec in live_tools() {
            let (t, b) = copy_bundle(&fixture("demo"));
            let before = snap(t.path());
            let out = {
                let _g = hooks::install(after(2));
                dispatch(spec.name, &valid_args(spec, s(&b)))
            };
            assert!(out.is_error);
            assert_eq!(out.code(), "operation_cancelled", "{}", out.full);
            assert_eq!(out.structured["retryable"], true);
            let keys: Vec<&String> = out.structured.as_object().expect("obj").keys().collect();
            assert_eq!(keys, ["code", "message", "retryable", "diagnostics"]);
            // spec/surface.md §6.2: apply tools and write_concept cancelled after their input
            // checks carry one recovery_step ("repeat the same arguments"); read tools none.
            let diags = out.structured["diagnostics"]
                .as_array()
                .expect("diagnostics");
            let steps: Vec<&Value> = diags
                .iter()
                .filter(|d| d["code"] == "recovery_step")
                .collect();
            match spec.name {
                "apply_concept_patch" | "apply_temporal_upgrade" | "write_concept" => {
                    assert_eq!(steps.len(), 1, "{}: {}", spec.name, out.full);
                    let field = match spec.name {
                        "write_concept" => "",
                        "apply_temporal_upgrade" => "base_revision",
                        _ => "expected_revision",
                    };
                    assert_eq!(steps[0]["field"], field);
                    assert!(steps[0]["message"]
                        .as_str()
                        .expect("message")
                        .contains("repeat the same arguments"));
                }
                _ => assert!(steps.is_empty(), "{}: {}", spec.name, out.full),
            }
            assert!(
                !out.full.contains("Revenue"),
                "no partial result: {}",
                out.full
            );
            assert_eq!(snap(t.path()), before);
            assert!(!b.join(".okf").exists());
            // The same call without the hook succeeds (the fault was the cancellation).
            assert_ne!(
                dispatch(spec.name, &valid_args(spec, s(&b))).code(),
                "operation_cancelled"
            );
        }
    }

    #[test]
    fn can_02_through_the_real_binary_via_environment() {
        for spec in live_tools() {
            let (t, b) = copy_bundle(&fixture("demo"));
            let before = snap(t.path());
            let out = call_env(
                spec.name,
                &valid_args(spec, s(&b)),
                &[(hooks::ENV_CANCEL_AFTER, "1")],
            );
            assert_eq!(
                out["structuredContent"]["code"], "operation_cancelled",
                "{out}"
            );
            assert_eq!(out["isError"], true);
            assert_eq!(snap(t.path()), before);
        }
    }
}
