//! The warm capture cache of `okf-mcp serve` (spec/store.md §17; P4-09): a warm server's
//! answers are the answers of a cold one (`serve --no-cache`) on the same bytes, byte for
//! byte, over random edit sequences; an apply never trusts the cache.
//!
//! A stat tuple is trusted only once both its times are more than 2 s old (the racy rule),
//! so the sequences sleep past that window ("age") now and then: the edits after an age
//! meet entries the cache trusts.

#![allow(clippy::disallowed_methods)] // the tests edit their own temp trees by hand

use crate::support::client::Mcp;
use crate::support::read::write_file;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Past the racy window of spec/store.md §17 rule 2 (2 s), with a margin.
const AGE: Duration = Duration::from_millis(2_100);

const DIRS: [&str; 3] = ["a", "b", "c"];
const PER_DIR: usize = 5;

fn concept(dir: &str, i: usize, variant: u8) -> String {
    let other = DIRS[(i + 1) % DIRS.len()];
    let next = (i + 1) % PER_DIR;
    let variant = char::from(variant);
    format!(
        "---\ntype: Table\ntitle: {dir} item {i}\ndescription: Orders and revenue of {dir}{i}\ntags: [sales, t{i}]\nstatus: stable\n---\n# Schema {variant}\n\nJoins [next](c{next}.md) and [other](../{other}/c{i}.md).\n\n## Revenue\n\nRevenue per order, variant {variant}.\n"
    )
}

fn make_bundle() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let b = t.path().join("bundle");
    for d in DIRS {
        std::fs::create_dir_all(b.join(d)).expect("mkdir");
    }
    let mut index = String::from("---\nokf_version: \"0.2\"\n---\n# Bundle\n\n");
    for d in DIRS {
        for i in 0..PER_DIR {
            write_file(&b.join(format!("{d}/c{i}.md")), &concept(d, i, b'0'));
            index.push_str(&format!("* [{d}{i}]({d}/c{i}.md)\n"));
        }
    }
    write_file(&b.join("index.md"), &index);
    (t, b)
}

/// The calls compared after every edit: every read tool, the four Phase-4 tools and a patch
/// preview (spec/scenarios.md P4-09).
fn calls(b: &Path) -> Vec<(&'static str, Value)> {
    let b = b.to_str().expect("utf-8");
    vec![
        ("list_concepts", json!({"bundle_path": b})),
        (
            "read_concept",
            json!({"bundle_path": b, "concept_id": "a/c1"}),
        ),
        ("validate_bundle", json!({"bundle_path": b})),
        (
            "search_concepts",
            json!({"bundle_path": b, "query": "revenue"}),
        ),
        (
            "search_sections",
            json!({"bundle_path": b, "query": "revenue per order"}),
        ),
        (
            "get_neighbors",
            json!({"bundle_path": b, "concept_id": "b/c2", "depth": 2}),
        ),
        ("get_semantic_graph", json!({"bundle_path": b})),
        (
            "preview_concept_patch",
            json!({"bundle_path": b, "actor": "agent:warm-it", "operations": [
                {"kind": "set_lifecycle", "concept_id": "c/c3", "lifecycle": {"status": "deprecated"}}
            ]}),
        ),
    ]
}

/// A warm and a cold server side by side, given the same requests (so the same ids).
struct Pair {
    warm: Mcp,
    cold: Mcp,
}

impl Pair {
    /// Both servers log only the capture module's debug events (counts, one line per warm
    /// capture), so their stderr pipes never fill; the cold one must log none.
    fn start_logged() -> Self {
        let start = |args: &[&str]| {
            let mut s = Mcp::spawn_serve(args, &[("RUST_LOG", "okf_mcp::store::capture=debug")]);
            s.initialize();
            s.send_json(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
            s
        };
        Pair {
            warm: start(&[]),
            cold: start(&["--no-cache"]),
        }
    }

    /// Every call of [`calls`] on both servers; the answers' lines must be identical.
    fn compare(&mut self, b: &Path, step: &str) -> Result<(), TestCaseError> {
        for (tool, args) in calls(b) {
            let p = json!({"name": tool, "arguments": args});
            let warm = self.warm.request_raw("tools/call", p.clone());
            let cold = self.cold.request_raw("tools/call", p);
            let (w, c) = (warm.concat(), cold.concat());
            if w != c {
                let at = w.bytes().zip(c.bytes()).take_while(|(x, y)| x == y).count();
                let around = |s: &str| {
                    let mut lo = at.saturating_sub(120);
                    while !s.is_char_boundary(lo) {
                        lo -= 1;
                    }
                    let mut hi = (at + 120).min(s.len());
                    while !s.is_char_boundary(hi) {
                        hi += 1;
                    }
                    s[lo..hi].to_owned()
                };
                prop_assert!(
                    false,
                    "{} after {}: warm and cold differ at byte {}:\nwarm …{}…\ncold …{}…",
                    tool,
                    step,
                    at,
                    around(&w),
                    around(&c)
                );
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
enum Edit {
    /// The same number of bytes, other content.
    SameSize(usize),
    /// The same number of bytes, other content, and the old modification time put back.
    SameSizeOldMtime(usize),
    /// A new modification time, the same bytes (`touch`).
    Touch(usize),
    /// The file moves to a new name in another directory.
    Rename(usize),
    Delete(usize),
    /// The file is replaced by a symlink to another file (every tool refuses the bundle).
    ToSymlink(usize),
    /// A symlink is added to a directory right after a call.
    AddSymlink(usize),
    /// Two directories trade places.
    SwapDirs(usize, usize),
    /// A file is rewritten over and over while the warm server captures.
    ChurnDuringCapture(usize),
    /// Symlinks go away and a removed file comes back (so later calls see a valid bundle).
    Repair,
    /// Sleep past the racy window: what is on disk becomes trusted.
    Age,
}

fn edit() -> impl Strategy<Value = Edit> {
    let f = 0..(DIRS.len() * PER_DIR);
    prop_oneof![
        4 => f.clone().prop_map(Edit::SameSize),
        3 => f.clone().prop_map(Edit::SameSizeOldMtime),
        2 => f.clone().prop_map(Edit::Touch),
        2 => f.clone().prop_map(Edit::Rename),
        2 => f.clone().prop_map(Edit::Delete),
        1 => f.clone().prop_map(Edit::ToSymlink),
        1 => (0..DIRS.len()).prop_map(Edit::AddSymlink),
        1 => (0..DIRS.len(), 0..DIRS.len()).prop_map(|(a, b)| Edit::SwapDirs(a, b)),
        1 => f.prop_map(Edit::ChurnDuringCapture),
        2 => Just(Edit::Repair),
        2 => Just(Edit::Age),
    ]
}

/// The `k`-th regular file of the bundle's concept directories (sorted; `None` when none).
fn nth_file(b: &Path, k: usize) -> Option<PathBuf> {
    let mut all = Vec::new();
    for d in DIRS {
        let Ok(rd) = std::fs::read_dir(b.join(d)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                all.push(p);
            }
        }
    }
    all.sort();
    (!all.is_empty()).then(|| all[k % all.len()].clone())
}

/// The same bytes with one digit of the `# Schema` line changed (same length).
fn same_size_variant(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if let Some(i) = out.iter().position(|&c| c.is_ascii_digit()) {
        out[i] = if out[i] == b'9' { b'0' } else { out[i] + 1 };
    } else if let Some(last) = out.last_mut() {
        *last = if *last == b'\n' { b' ' } else { b'\n' };
    }
    out
}

fn set_mtime(p: &Path, t: SystemTime) {
    let f = std::fs::File::options()
        .write(true)
        .open(p)
        .expect("open for times");
    f.set_modified(t).expect("set mtime");
}

fn apply(b: &Path, e: &Edit, pair: &mut Pair, counter: &mut usize) {
    *counter += 1;
    match *e {
        Edit::SameSize(k) | Edit::SameSizeOldMtime(k) => {
            if let Some(p) = nth_file(b, k) {
                let old = std::fs::read(&p).expect("read");
                let mtime = std::fs::metadata(&p).and_then(|m| m.modified()).ok();
                std::fs::write(&p, same_size_variant(&old)).expect("write");
                if let (Edit::SameSizeOldMtime(_), Some(t)) = (e, mtime) {
                    set_mtime(&p, t);
                }
            }
        }
        Edit::Touch(k) => {
            if let Some(p) = nth_file(b, k) {
                set_mtime(&p, SystemTime::now());
            }
        }
        Edit::Rename(k) => {
            if let Some(p) = nth_file(b, k) {
                let to = b.join(DIRS[k % DIRS.len()]).join(format!("r{counter}.md"));
                let _ = std::fs::rename(&p, to);
            }
        }
        Edit::Delete(k) => {
            if let Some(p) = nth_file(b, k) {
                let _ = std::fs::remove_file(&p);
            }
        }
        Edit::ToSymlink(k) => {
            if let (Some(p), Some(target)) = (nth_file(b, k), nth_file(b, k + 1)) {
                if p != target {
                    let _ = std::fs::remove_file(&p);
                    let _ = std::os::unix::fs::symlink(&target, &p);
                }
            }
        }
        Edit::AddSymlink(d) => {
            let dir = b.join(DIRS[d]);
            if dir.is_dir() {
                let _ =
                    std::os::unix::fs::symlink("../index.md", dir.join(format!("l{counter}.md")));
            }
        }
        Edit::SwapDirs(x, y) if x != y => {
            let tmp = b.join("swap-tmp");
            let (dx, dy) = (b.join(DIRS[x]), b.join(DIRS[y]));
            if dx.is_dir() && dy.is_dir() {
                std::fs::rename(&dx, &tmp).expect("swap 1");
                std::fs::rename(&dy, &dx).expect("swap 2");
                std::fs::rename(&tmp, &dy).expect("swap 3");
            }
        }
        Edit::SwapDirs(..) => {}
        Edit::ChurnDuringCapture(k) => {
            if let Some(p) = nth_file(b, k) {
                let base = std::fs::read(&p).expect("read");
                let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let churn = {
                    let (p, stop) = (p.clone(), std::sync::Arc::clone(&stop));
                    std::thread::spawn(move || {
                        let mut cur = base;
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            cur = same_size_variant(&cur);
                            let _ = std::fs::write(&p, &cur);
                        }
                    })
                };
                // Answers during the churn describe some moment of it: only the server's
                // health is checked; the comparison after the edit decides.
                let bp = b.to_str().expect("utf-8");
                for (tool, args) in [
                    ("list_concepts", json!({"bundle_path": bp})),
                    (
                        "search_sections",
                        json!({"bundle_path": bp, "query": "revenue"}),
                    ),
                ] {
                    let r = pair.warm.call(tool, &args);
                    assert!(r.get("content").is_some(), "{r}");
                    // The cold server gets the same requests, so the ids stay in step.
                    let r = pair.cold.call(tool, &args);
                    assert!(r.get("content").is_some(), "{r}");
                }
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                churn.join().expect("churn thread");
            }
        }
        Edit::Repair => {
            for d in DIRS {
                let dir = b.join(d);
                let _ = std::fs::create_dir_all(&dir);
                if let Ok(rd) = std::fs::read_dir(&dir) {
                    for e in rd.flatten() {
                        if std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_symlink()) {
                            let _ = std::fs::remove_file(e.path());
                        }
                    }
                }
                let c0 = dir.join("c0.md");
                if !c0.exists() {
                    write_file(&c0, &concept(d, 0, b'5'));
                }
            }
        }
        Edit::Age => std::thread::sleep(AGE),
    }
}

/// P4-09 (spec/store.md §17 rules 2–4): over random edit sequences every warm answer of
/// the read tools, the four Phase-4 tools and a patch preview equals the cold answer. The
/// warm server's debug events count the files it took from its cache: some must have been.
#[test]
fn p4_09_warm_answers_equal_cold_answers_over_random_edit_sequences() {
    let reused = std::cell::Cell::new(0usize);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 8,
        max_shrink_iters: 16,
        ..ProptestConfig::default()
    });
    let result = runner.run(&proptest::collection::vec(edit(), 3..9), |edits| {
        let (_t, b) = make_bundle();
        let mut pair = Pair::start_logged();
        // Aged once, so the first edits meet entries older than the rest of the bundle.
        std::thread::sleep(AGE);
        pair.compare(&b, "start")?;
        let mut counter = 0;
        for (k, e) in edits.iter().enumerate() {
            apply(&b, e, &mut pair, &mut counter);
            pair.compare(&b, &format!("edit {k}: {e:?}"))?;
        }
        let Pair { warm, cold } = pair;
        let (_, _, log) = warm.finish();
        reused.set(reused.get() + reused_files(&log));
        let (_, _, log) = cold.finish();
        prop_assert!(
            !log.contains("warm capture"),
            "--no-cache captured warm: {}",
            log
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        reused.get() > 0,
        "no warm capture took a file from its cache"
    );
}

/// The sum of `reused_files=N` over the warm-capture debug events in `log`.
fn reused_files(log: &str) -> usize {
    log.lines()
        .filter_map(|l| l.split("reused_files=").nth(1))
        .filter_map(|r| r.split(' ').next()?.parse::<usize>().ok())
        .sum()
}

/// spec/store.md §17 rules 2–3: a same-size rewrite inside the racy window (within one clock
/// tick of the write a warm preview saw) is seen by the next warm preview, and the apply of
/// the first preview answers `revision_conflict` (an apply captures cold).
#[test]
fn p4_09_a_same_size_rewrite_in_the_racy_window_is_seen_and_the_apply_conflicts() {
    let (_t, b) = make_bundle();
    // Debug events carry the warm captures' counts (never paths or text).
    let mut warm = Mcp::spawn_serve(&[], &[("RUST_LOG", "okf_mcp=debug")]);
    warm.initialize();
    warm.send_json(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let bp = b.to_str().expect("utf-8");
    let args = json!({"bundle_path": bp, "actor": "agent:warm-it", "operations": [
        {"kind": "set_lifecycle", "concept_id": "c/c3", "lifecycle": {"status": "deprecated"}}
    ]});
    // Aged: the cache trusts every file after this preview.
    std::thread::sleep(AGE);
    let first = warm.call("preview_concept_patch", &args);
    let first = first["structuredContent"].clone();
    assert_eq!(first["status"], "applicable", "{first}");
    let p = b.join("c/c3.md");
    let old = std::fs::read(&p).expect("read");
    // Written, previewed and rewritten with the same size inside one tick of the clock.
    std::fs::write(&p, same_size_variant(&old)).expect("write 1");
    let second = warm.call("preview_concept_patch", &args)["structuredContent"].clone();
    std::fs::write(&p, same_size_variant(&same_size_variant(&old))).expect("write 2");
    let third = warm.call("preview_concept_patch", &args)["structuredContent"].clone();
    let mut cold = Mcp::start_serve(&["--no-cache"]);
    let cold_third = cold.call("preview_concept_patch", &args)["structuredContent"].clone();
    assert_eq!(third, cold_third, "the warm preview is the cold one");
    for later in [&second, &third] {
        assert_ne!(later["base_revision"], first["base_revision"], "{later}");
    }
    assert_ne!(second["base_revision"], third["base_revision"]);
    let mut apply_args = args.clone();
    apply_args["expected_revision"] = first["base_revision"].clone();
    apply_args["expected_plan_digest"] = first["plan_digest"].clone();
    let before = std::fs::read(&p).expect("read");
    let a = warm.call("apply_concept_patch", &apply_args);
    assert_eq!(a["isError"], true, "{a}");
    assert_eq!(a["structuredContent"]["code"], "revision_conflict", "{a}");
    assert_eq!(std::fs::read(&p).expect("read"), before, "nothing written");
    let (_, _, log) = warm.finish();
    let warm_lines: Vec<&str> = log.lines().filter(|l| l.contains("warm capture")).collect();
    // Three previews capture warm, the apply cold. The bundle was written in one go, so the
    // first capture trusts nothing (every file is within 2 s of the newest change it saw,
    // spec/store.md §17 rule 2); the second sees the rewrite as the newest change and trusts
    // the 15 files older than it; the third takes those 15 from the cache and reads the file
    // rewritten in between, which the second saw inside the racy window.
    assert_eq!(warm_lines.len(), 3, "{log}");
    for (k, reused) in [(0, 0), (1, 0), (2, 15)] {
        let want = format!("files=16 reused_files={reused} ");
        assert!(warm_lines[k].contains(&want), "capture {k}: {log}");
    }
}

/// spec/store.md §17 rule 5: only `okf-mcp serve` turns the cache on (so the one-shot `call`,
/// `migrate` and `demo` never build one), once, unless `--no-cache`.
#[test]
fn p4_09_only_serve_turns_the_cache_on() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("read src").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("read");
                for line in text.lines().filter(|l| l.contains("warm::enable(")) {
                    let rel = p
                        .strip_prefix(&src)
                        .expect("under src")
                        .display()
                        .to_string();
                    found.push(format!("{rel}: {}", line.trim()));
                }
            }
        }
    }
    assert_eq!(
        found,
        vec!["cli.rs: crate::store::warm::enable(!no_cache);"],
        "{found:?}"
    );
    let cli = std::fs::read_to_string(src.join("cli.rs")).expect("cli.rs");
    let serve = cli.find("fn serve(").expect("fn serve");
    let enable = cli.find("warm::enable(").expect("enable");
    let next_fn = cli[serve + 1..]
        .find("\nfn ")
        .map_or(cli.len(), |k| serve + 1 + k);
    assert!(
        serve < enable && enable < next_fn,
        "enabled inside fn serve only"
    );
}
