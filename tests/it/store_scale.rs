//! The store at scale (spec/store.md §10–§11, spec/migration.md §12.5): a streamed commit of
//! 5,000 changed files, crashed at the first, a middle and the last staged payload and at
//! every later kind of fault point, recovers to exactly the pre-state or the post-state with
//! the root `index.md` never ahead; and the commit's peak memory does not grow with the
//! payload bytes (same file count, 8× larger payloads).

#![allow(clippy::disallowed_methods)] // tests build their own temp trees

use crate::support::store::{commit_with, lookup_with};
use crate::support::util::visible;
use okf_mcp::cancel::Cancel;
use okf_mcp::digest::{self, Encoder};
use okf_mcp::okf::capture::Capture;
use okf_mcp::plan::stream::{Emit, Payloads, PlannedWrite, Writes};
use okf_mcp::store::capture::capture;
use okf_mcp::store::commit::{manifest, CommitRequest};
use okf_mcp::store::error::StoreError;
use okf_mcp::store::fault::{Action, Faults, Point};
use okf_mcp::store::handle::StoreOptions;
use okf_mcp::store::root::{self, Root};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Concept files of the generated bundle; every one is rewritten, and so is `index.md`.
const CONCEPTS: usize = 4_999;

fn concept_path(i: usize) -> String {
    format!("c{:02}/concept-{i:05}.md", i % 50)
}

/// The base bytes of concept `i`.
fn base_bytes(i: usize) -> Vec<u8> {
    format!("---\ntype: note\ntitle: Concept {i}\n---\n# Concept {i}\n").into_bytes()
}

/// The new bytes of `path`, padded to about `pad` bytes: generated on demand, never held.
fn new_bytes(path: &str, pad: usize) -> Vec<u8> {
    let mut b = format!("---\ntype: note\ntitle: {path} v2\n---\n").into_bytes();
    while b.len() < pad {
        b.extend_from_slice(b"lorem ipsum dolor sit amet\n");
    }
    b
}

const INDEX_BASE: &[u8] = b"---\nokf_version: \"0.2\"\ntitle: Scale\n---\n# Scale\n";

struct Gen {
    pad: usize,
}

impl Payloads<StoreError> for Gen {
    fn produce(
        &self,
        _locked: &Capture,
        emit: &mut Emit<'_, StoreError>,
    ) -> Result<(), StoreError> {
        // Any order: the store maps each path to its journal entry.
        for i in (0..CONCEPTS).rev() {
            let p = concept_path(i);
            emit(&p, &new_bytes(&p, self.pad))?;
        }
        emit("index.md", &new_bytes("index.md", self.pad))
    }
}

fn make_bundle() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let b = tmp.path().join("bundle");
    for i in 0..CONCEPTS {
        let p = b.join(concept_path(i));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, base_bytes(i)).expect("write");
    }
    std::fs::write(b.join("index.md"), INDEX_BASE).expect("write index");
    (tmp, b)
}

fn open_root(b: &Path) -> Root {
    root::open(b.to_str().expect("utf-8")).expect("root")
}

fn all_paths() -> Vec<String> {
    let mut v: Vec<String> = (0..CONCEPTS).map(concept_path).collect();
    v.push("index.md".to_owned());
    v
}

/// The streamed request rewriting every file with payloads of about `pad` bytes.
fn request(root: &Root, pad: usize) -> CommitRequest {
    let cap = capture(root, &Cancel::new()).expect("capture");
    assert_eq!(cap.files.len(), CONCEPTS + 1, "generated bundle");
    let writes: Vec<PlannedWrite> = all_paths()
        .iter()
        .map(|p| PlannedWrite::of(p, &new_bytes(p, pad)))
        .collect();
    let result = digest::revision(writes.iter().map(|w| (w.path.as_str(), &w.digest)));
    let request_digest = Encoder::tagged("test:scale").str("5000").digest();
    let plan_digest = Encoder::tagged("test:scale-plan").str("5000").digest();
    CommitRequest {
        change_set_id: "mcp-patch-scale".to_owned(),
        idempotency_key: digest::idempotency_key("mcp:concept-patch", &plan_digest).expect("key"),
        request_digest,
        base_revision: cap.revision.clone(),
        result_revision: result,
        base: manifest(&cap),
        writes: Writes::Streamed(writes),
        changed_refs: (0..CONCEPTS)
            .map(|i| concept_path(i).trim_end_matches(".md").to_owned())
            .collect(),
        replay: None,
    }
}

/// Every visible file (`.okf/` excluded) with bytes, as path → bytes (directories and empty
/// files left out).
fn nonempty_files(b: &Path) -> BTreeMap<String, Vec<u8>> {
    visible(b)
        .into_iter()
        .filter(|(k, v)| !k.ends_with('/') && !v.is_empty())
        .collect()
}

fn opts() -> StoreOptions {
    StoreOptions::default().with_lock_timeout(Duration::from_millis(300))
}

#[test]
fn sto_scale_a_5000_file_commit_crashed_anywhere_recovers_to_pre_or_post_state() {
    let pad = 200;
    let last = CONCEPTS; // index.md is the last payload in publish order.
    let mid = CONCEPTS / 2;
    let points = [
        Point::AfterStagePayload(0),
        Point::AfterStagePayload(mid),
        Point::AfterStagePayload(last),
        Point::AfterStageFsync,
        Point::AfterJournalTmp,
        Point::AfterJournalRename,
        Point::AfterDurableFsync,
        Point::AfterPublish(0),
        Point::AfterPublish(mid),
        Point::AfterPublish(last - 1),
        Point::AfterPublish(last),
        Point::AfterVerify,
        Point::AfterReceiptTmp,
        Point::AfterReceipt,
        Point::AfterJournalRemove,
        Point::AfterCleanup,
    ];
    let (_tmp, b) = make_bundle();
    let pre = nonempty_files(&b);
    assert_eq!(pre.len(), CONCEPTS + 1);
    let post: BTreeMap<String, Vec<u8>> = all_paths()
        .into_iter()
        .map(|p| {
            let bytes = new_bytes(&p, pad);
            (p, bytes)
        })
        .collect();
    let index_new = new_bytes("index.md", pad);
    for p in points {
        // Each point starts from the pre-state: restore it byte for byte.
        for (path, bytes) in &pre {
            std::fs::write(b.join(path), bytes).expect("restore");
        }
        let _ = std::fs::remove_dir_all(b.join(".okf"));
        let root = open_root(&b);
        let req = request(&root, pad);
        let faulty = opts().with_faults(Faults::new().with(p, Action::Crash, 1));
        let r = commit_with(&root, &req, Some(&Gen { pad }), &Cancel::new(), &faulty);
        assert!(matches!(r, Err(StoreError::SimulatedCrash)), "{p}: {r:?}");
        let seen = nonempty_files(&b);
        // The root index.md is never ahead of any other write.
        if seen.get("index.md") == Some(&index_new) {
            let behind = seen.iter().find(|(k, v)| post.get(*k) != Some(*v));
            assert!(behind.is_none(), "{p}: index.md ahead of {behind:?}");
        }
        // Recovery on the next open (a receipt lookup) lands on exactly one state.
        let found = lookup_with(
            &root,
            &req.idempotency_key,
            &req.request_digest,
            &Cancel::new(),
            &opts(),
        )
        .unwrap_or_else(|e| panic!("{p}: reopen {e:?}"));
        let after = nonempty_files(&b);
        if p.is_post_boundary() {
            assert!(after == post, "{p}: not the post-state");
            assert!(found.is_some(), "{p}: receipt persisted");
        } else {
            assert!(after == pre, "{p}: not the pre-state");
            assert!(found.is_none(), "{p}: no receipt");
        }
        for sub in ["staging", "transactions"] {
            let left: Vec<_> = std::fs::read_dir(b.join(".okf").join(sub))
                .map(|rd| rd.filter_map(Result::ok).map(|e| e.file_name()).collect())
                .unwrap_or_default();
            assert!(left.is_empty(), "{p}: .okf/{sub} not clean: {left:?}");
        }
    }
}

#[test]
fn sto_scale_a_payload_that_differs_from_the_plan_abandons_before_the_boundary() {
    struct Tampered;
    impl Payloads<StoreError> for Tampered {
        fn produce(
            &self,
            _locked: &Capture,
            emit: &mut Emit<'_, StoreError>,
        ) -> Result<(), StoreError> {
            for p in all_paths() {
                let mut bytes = new_bytes(&p, 200);
                if p == concept_path(7) {
                    bytes.push(b'!');
                }
                emit(&p, &bytes)?;
            }
            Ok(())
        }
    }
    let (_tmp, b) = make_bundle();
    let pre = nonempty_files(&b);
    let root = open_root(&b);
    let req = request(&root, 200);
    let r = commit_with(&root, &req, Some(&Tampered), &Cancel::new(), &opts());
    assert!(matches!(r, Err(StoreError::PayloadMismatch)), "{r:?}");
    assert!(nonempty_files(&b) == pre, "tree unchanged");
    for sub in ["staging", "transactions", "receipts"] {
        let n = std::fs::read_dir(b.join(".okf").join(sub))
            .map(Iterator::count)
            .unwrap_or(0);
        assert_eq!(n, 0, ".okf/{sub} is empty");
    }
}

const RSS_ENV: &str = "OKF_MCP_TEST_SCALE_RSS_PAD";

/// The peak resident set of this process in KiB (`VmHWM`).
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// Run only as a child of the RSS test: one streamed commit of 5,000 files with payloads of
/// the padding in the environment, then the process's peak RSS on stdout.
#[test]
#[ignore = "a child process of sto_scale_commit_memory_grows_with_files_not_bytes"]
fn sto_scale_rss_probe() {
    let pad: usize = std::env::var(RSS_ENV)
        .unwrap_or_else(|_| panic!("{RSS_ENV} is not set: run the parent test instead"))
        .parse()
        .expect("padding");
    let (_tmp, b) = make_bundle();
    let root = open_root(&b);
    let req = request(&root, pad);
    let before = peak_kib();
    let out =
        commit_with(&root, &req, Some(&Gen { pad }), &Cancel::new(), &opts()).expect("committed");
    assert_eq!(out.receipt.receipt.changed_files.len(), CONCEPTS + 1);
    println!("RSS-PROBE before={before} peak={}", peak_kib());
}

fn probe(pad: usize) -> (u64, u64) {
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .args([
            "store_scale::sto_scale_rss_probe",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(RSS_ENV, pad.to_string())
        .output()
        .expect("run the probe");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "probe failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find_map(|l| l.split_once("RSS-PROBE ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no probe line in: {text}"));
    let field = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .expect("probe field")
    };
    (field("before="), field("peak="))
}

#[test]
fn sto_scale_commit_memory_grows_with_files_not_bytes() {
    // 5,000 payloads of ~1 KiB (≈ 5 MiB) and of ~8 KiB (≈ 40 MiB, within the 64 MiB limit).
    let (_, small) = probe(1024);
    let (_, large) = probe(8 * 1024);
    let ratio = large as f64 / small as f64;
    assert!(
        ratio <= 1.10,
        "peak RSS {small} KiB with 1 KiB payloads, {large} KiB with 8 KiB payloads (ratio {ratio:.3})"
    );
}
