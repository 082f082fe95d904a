//! The transactional store at library level (spec/store.md §6–§15): crash matrix through the
//! fault points, recovery, receipts, locks, limits, permissions, cancellation.
//!
//! Every test works on a copy of `fixtures/bundles/store-basic` and drives the store with
//! synthetic plans (the apply tools are built on top of this API).

use crate::support::store::{commit_with, lookup_with, replay_with, resident};
use crate::support::util::{copy_bundle, fixture, visible};
use okf_mcp::cancel::Cancel;
use okf_mcp::digest::{self, Encoder};
use okf_mcp::okf::capture::Capture;
use okf_mcp::plan::stream::Writes;
use okf_mcp::store::capture::capture;
use okf_mcp::store::commit::{manifest, CommitOutcome, CommitRequest, ReceiptSource, ReplayBasis};
use okf_mcp::store::durable::{check_sync_discipline, durable_renames, Op, RecordingFs};
use okf_mcp::store::error::{Corrupt, StoreError};
use okf_mcp::store::fault::{Action, Faults, Point};
use okf_mcp::store::handle::{Folding, StoreOptions};
use okf_mcp::store::outcome::ReceiptMatch;
use okf_mcp::store::receipt::{self, ReceiptFile};
use okf_mcp::store::root::{self, Root};
use okf_mcp::tools::outcome::classify;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const ORDERS_NEW: &[u8] =
    b"---\ntype: table\ntitle: Orders v2\n---\n# Orders\n\nOne row per order.\n";
const TERMS_NEW: &[u8] = b"---\ntype: glossary\ntitle: Terms\n---\n# Terms\n";
const INDEX_NEW: &[u8] = b"---\nokf_version: \"0.2\"\ntitle: Store fixture\n---\n# Store fixture\n\n- [Orders](tables/orders.md)\n";

/// Test-side writes (foreign writers, tampering, seeding); the product's writes go through
/// the store.
fn put(p: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(p)?
        .write_all(bytes.as_ref())
}

struct Bundle {
    _tmp: tempfile::TempDir,
    path: PathBuf,
}

impl Bundle {
    fn new() -> Self {
        let (tmp, path) = copy_bundle(&fixture("store-basic"));
        Self { _tmp: tmp, path }
    }
    fn root(&self) -> Root {
        root::open(self.path.to_str().expect("utf8")).expect("root")
    }
    fn capture(&self) -> Capture {
        capture(&self.root(), &Cancel::new()).expect("capture")
    }
    fn okf(&self) -> PathBuf {
        self.path.join(".okf")
    }
    fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path.join(rel)).expect("read")
    }
    fn write(&self, rel: &str, bytes: &[u8]) {
        put(self.path.join(rel), bytes).expect("write");
    }
    /// Every visible file (root `.okf` excluded).
    fn visible(&self) -> BTreeMap<String, Vec<u8>> {
        visible(&self.path)
    }
    fn listing(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.okf().join(rel))
            .map(|rd| {
                rd.map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// A synthetic plan over the current capture: `writes` applied, identity derived from `tag`.
fn request(b: &Bundle, tag: &str, writes: &[(&str, &[u8])]) -> CommitRequest {
    let cap = b.capture();
    let mut after: BTreeMap<String, Vec<u8>> = cap
        .files
        .iter()
        .map(|f| (f.path.clone(), f.bytes().to_vec()))
        .collect();
    for (p, w) in writes {
        after.insert((*p).to_owned(), w.to_vec());
    }
    let result = Capture::from_files(after);
    let request_digest = Encoder::tagged("test:request").str(tag).digest();
    let plan_digest = Encoder::tagged("test:plan").str(tag).digest();
    let key = digest::idempotency_key("mcp:concept-patch", &plan_digest).expect("key");
    CommitRequest {
        change_set_id: format!("mcp-patch-{tag}"),
        idempotency_key: key,
        request_digest,
        base_revision: cap.revision.clone(),
        result_revision: result.revision,
        base: manifest(&cap),
        writes: Writes::Resident(
            writes
                .iter()
                .map(|(p, w)| ((*p).to_owned(), w.to_vec()))
                .collect(),
        ),
        changed_refs: writes
            .iter()
            .filter_map(|(p, _)| p.strip_suffix(".md"))
            .filter(|p| !p.ends_with("index"))
            .map(str::to_owned)
            .collect(),
        replay: None,
    }
}

/// Two files plus the root `index.md` (one of them new, in a new directory).
fn three_writes(b: &Bundle, tag: &str) -> CommitRequest {
    request(
        b,
        tag,
        &[
            ("tables/orders.md", ORDERS_NEW),
            ("glossary/terms.md", TERMS_NEW),
            ("index.md", INDEX_NEW),
        ],
    )
}

fn post_state(pre: &BTreeMap<String, Vec<u8>>, req: &CommitRequest) -> BTreeMap<String, Vec<u8>> {
    let mut post = pre.clone();
    for (p, w) in resident(req) {
        let mut acc = String::new();
        for c in p
            .split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map(|x| x.1)
            .unwrap_or(&[])
        {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(c);
            post.insert(format!("{acc}/"), Vec::new());
        }
        post.insert(p.clone(), w.clone());
    }
    post
}

fn fast() -> StoreOptions {
    StoreOptions::default().with_lock_timeout(Duration::from_millis(300))
}

fn crash_at(p: Point) -> StoreOptions {
    fast().with_faults(Faults::new().with(p, Action::Crash, 1))
}

fn run(b: &Bundle, req: &CommitRequest, opts: &StoreOptions) -> Result<CommitOutcome, StoreError> {
    commit_with(&b.root(), req, None, &Cancel::new(), opts)
}

/// Reopens the store (recovery runs) through a receipt lookup of `req`.
fn reopen(b: &Bundle, req: &CommitRequest) -> Result<Option<CommitOutcome>, StoreError> {
    lookup_with(
        &b.root(),
        &req.idempotency_key,
        &req.request_digest,
        &Cancel::new(),
        &fast(),
    )
}

fn receipt_path(b: &Bundle, req: &CommitRequest) -> PathBuf {
    b.okf()
        .join("receipts")
        .join(ReceiptFile::file_name(&req.idempotency_key))
}

/// STO-02: the root `index.md` never holds its result while another write holds its base.
fn assert_index_never_ahead(
    b: &Bundle,
    req: &CommitRequest,
    pre: &BTreeMap<String, Vec<u8>>,
    at: &str,
) {
    let vis = b.visible();
    if vis.get("index.md").map(Vec::as_slice) == Some(INDEX_NEW) {
        for (p, w) in resident(req) {
            assert_eq!(vis.get(p), Some(w), "{at}: index.md ahead of {p}");
        }
    }
    for (p, _) in resident(req) {
        let v = vis.get(p);
        assert!(
            v == pre.get(p) || v == resident(req).iter().find(|w| &w.0 == p).map(|w| &w.1),
            "{at}: {p} is neither base nor result"
        );
    }
}

/// STO-05: the journal lists only written files (plus the full base) and no staged copy of an
/// unchanged file exists.
fn assert_staging_only_writes(b: &Bundle, req: &CommitRequest, at: &str) {
    let txn = digest::txn_id(&req.request_digest, &req.idempotency_key);
    for name in b.listing(&format!("staging/{txn}")) {
        let bytes = std::fs::read(b.okf().join("staging").join(&txn).join(&name)).expect("payload");
        assert!(
            resident(req).iter().any(|(_, w)| *w == bytes),
            "{at}: staged {name} is not a planned write"
        );
    }
    let jpath = b.okf().join("transactions").join(format!("{txn}.json"));
    if let Ok(j) = std::fs::read(&jpath) {
        let v: serde_json::Value = serde_json::from_slice(&j).expect("journal json");
        let paths: Vec<&str> = v["writes"]
            .as_array()
            .expect("writes")
            .iter()
            .map(|w| w["path"].as_str().expect("path"))
            .collect();
        assert_eq!(
            paths,
            ["glossary/terms.md", "tables/orders.md", "index.md"],
            "{at}"
        );
        assert_eq!(
            v["base"].as_array().expect("base").len(),
            4,
            "{at}: full base manifest"
        );
    }
}

#[test]
fn sto_01_02_05_crash_at_every_fault_point_lands_on_pre_or_post_state() {
    for p in Point::commit_sequence(3) {
        let b = Bundle::new();
        let req = three_writes(&b, "crash");
        let pre = b.visible();
        let post = post_state(&pre, &req);
        let r = run(&b, &req, &crash_at(p));
        assert!(matches!(r, Err(StoreError::SimulatedCrash)), "{p}: {r:?}");
        assert_index_never_ahead(&b, &req, &pre, &p.to_string());
        assert_staging_only_writes(&b, &req, &p.to_string());
        let found = reopen(&b, &req).unwrap_or_else(|e| panic!("{p}: reopen {e:?}"));
        if p.is_post_boundary() {
            assert_eq!(b.visible(), post, "{p}: post-state");
            let hit = found.unwrap_or_else(|| panic!("{p}: receipt persisted"));
            let completed_now = !matches!(p, Point::AfterJournalRemove | Point::AfterCleanup);
            let want = if completed_now {
                ReplayBasis::CompletedNow
            } else {
                ReplayBasis::Plain
            };
            assert_eq!(hit.source, ReceiptSource::Replayed(want), "{p}");
            assert_eq!(hit.receipt.receipt.result_revision, req.result_revision);
            assert!(receipt_path(&b, &req).exists());
        } else {
            assert_eq!(b.visible(), pre, "{p}: pre-state");
            assert!(found.is_none(), "{p}: no receipt");
            assert!(!receipt_path(&b, &req).exists());
        }
        assert!(
            b.listing("transactions").is_empty(),
            "{p}: journal and temps gone"
        );
        assert!(b.listing("staging").is_empty(), "{p}: staging gone");
        assert!(b.listing("capabilities").is_empty(), "{p}: probes gone");
    }
}

#[test]
fn sto_04_crash_during_recovery_converges_to_the_post_state() {
    let recovery_points = [
        Point::AfterPublish(0),
        Point::AfterPublish(1),
        Point::AfterPublish(2),
        Point::AfterVerify,
        Point::AfterReceiptTmp,
        Point::AfterReceipt,
        Point::AfterJournalRemove,
    ];
    for first in [Point::AfterJournalRename, Point::AfterPublish(0)] {
        for p in recovery_points {
            let b = Bundle::new();
            let req = three_writes(&b, "recover");
            let pre = b.visible();
            let post = post_state(&pre, &req);
            assert!(matches!(
                run(&b, &req, &crash_at(first)),
                Err(StoreError::SimulatedCrash)
            ));
            let r = lookup_with(
                &b.root(),
                &req.idempotency_key,
                &req.request_digest,
                &Cancel::new(),
                &crash_at(p),
            );
            let at = format!("{first} then {p}");
            // A point the recovery does not reach (already-published writes) lets it finish.
            if let Err(e) = &r {
                assert!(matches!(e, StoreError::SimulatedCrash), "{at}: {e:?}");
            }
            assert_index_never_ahead(&b, &req, &pre, &at);
            let again = reopen(&b, &req).unwrap_or_else(|e| panic!("{at}: {e:?}"));
            assert!(again.is_some(), "{at}: receipt");
            assert_eq!(b.visible(), post, "{at}");
            assert!(b.listing("transactions").is_empty() && b.listing("staging").is_empty());
            // A third open changes nothing.
            let snap = crate::support::util::snapshot(&b.path);
            let _ = reopen(&b, &req).expect("third open");
            assert_eq!(
                crate::support::util::snapshot(&b.path),
                snap,
                "{at}: recovery idempotent"
            );
        }
    }
}

#[test]
fn durability_seam_records_fsync_before_every_rename_and_index_last() {
    let b = Bundle::new();
    let req = three_writes(&b, "seam");
    let fs = RecordingFs::new();
    let out = run(&b, &req, &fast().with_fs(fs.clone())).expect("commit");
    assert_eq!(out.source, ReceiptSource::Committed);
    let log = fs.log();
    assert_eq!(check_sync_discipline(&log), None, "{log:#?}");
    let renames: Vec<&str> = log
        .iter()
        .filter_map(|o| match o {
            Op::Rename(_, to) => Some(to.as_str()),
            _ => None,
        })
        .collect();
    let txn = digest::txn_id(&req.request_digest, &req.idempotency_key);
    let journal = format!(".okf/transactions/{txn}.json");
    assert_eq!(
        renames,
        [
            journal.as_str(),
            "glossary/terms.md",
            "tables/orders.md",
            "index.md",
            &format!(
                ".okf/receipts/{}",
                ReceiptFile::file_name(&req.idempotency_key)
            ),
        ]
    );
    // C10: the journal rename is made durable before the first publish.
    let jr = log
        .iter()
        .position(|o| matches!(o, Op::Rename(_, to) if *to == journal))
        .expect("jr");
    assert_eq!(log[jr + 1], Op::SyncDir(".okf/transactions".into()));
}

#[test]
fn durability_seam_fsyncs_each_published_directory_once_and_all_before_the_root_index() {
    // Publish order: glossary/a.md, glossary/b.md, glossary/sub/c.md, glossary/z.md,
    // tables/orders.md, top.md, index.md: `glossary/` waits across its subdirectory's write,
    // the root from top.md to index.md.
    let b = Bundle::new();
    let req = request(
        &b,
        "per-directory",
        &[
            ("glossary/a.md", TERMS_NEW),
            ("glossary/b.md", TERMS_NEW),
            ("glossary/sub/c.md", TERMS_NEW),
            ("glossary/z.md", TERMS_NEW),
            ("top.md", TERMS_NEW),
            ("tables/orders.md", ORDERS_NEW),
            ("index.md", INDEX_NEW),
        ],
    );
    let pre = b.visible();
    let fs = RecordingFs::new();
    let out = run(&b, &req, &fast().with_fs(fs.clone())).expect("commit");
    assert_eq!(out.source, ReceiptSource::Committed);
    assert_eq!(b.visible(), post_state(&pre, &req));
    let log = fs.log();
    assert_eq!(check_sync_discipline(&log), None, "{log:#?}");
    // The publication's directory fsyncs (those not following a mkdir, which makes the new
    // directory's entry durable in its parent): one per directory after its last rename,
    // plus the root once more before the root index is renamed.
    let first = log
        .iter()
        .position(|o| matches!(o, Op::Rename(_, to) if to == "glossary/a.md"))
        .expect("first publish");
    let last = log
        .iter()
        .position(|o| matches!(o, Op::Rename(_, to) if to == "index.md"))
        .expect("index publish");
    let syncs: Vec<&str> = log[first..=last + 1]
        .iter()
        .enumerate()
        .filter_map(|(k, o)| match o {
            Op::SyncDir(d) if k == 0 || !matches!(log[first + k - 1], Op::Mkdir(_)) => {
                Some(d.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(syncs, ["glossary/sub", "glossary", "tables", "", ""]);
    assert_eq!(log[last + 1], Op::SyncDir(String::new()));
    // Every visible rename survives a power loss at the end of the publication.
    let kept = durable_renames(&log[..=last + 1]);
    for (p, _) in resident(&req) {
        assert!(kept.iter().any(|(_, to)| to == p), "{p} not durable");
    }
    // The discipline check is not vacuous: the root index renamed while `tables/` waits.
    let mut bad = log.clone();
    let tables_sync = bad
        .iter()
        .position(|o| *o == Op::SyncDir("tables".into()))
        .expect("tables sync");
    bad.remove(tables_sync);
    assert!(check_sync_discipline(&bad).is_some_and(|v| v.contains("tables")));
}

#[test]
fn recovery_fsyncs_the_directory_of_writes_an_earlier_attempt_published() {
    // The attempt stops after renaming glossary/a.md (glossary/ still waits for its fsync);
    // glossary/b.md is found at its result too (as if renamed just before a crash), so
    // recovery renames nothing into glossary/ and must still make it durable.
    let b = Bundle::new();
    let req = request(
        &b,
        "recover-sync",
        &[
            ("glossary/a.md", TERMS_NEW),
            ("glossary/b.md", ORDERS_NEW),
            ("index.md", INDEX_NEW),
        ],
    );
    let pre = b.visible();
    assert!(matches!(
        run(&b, &req, &crash_at(Point::AfterPublish(0))),
        Err(StoreError::SimulatedCrash)
    ));
    b.write("glossary/b.md", ORDERS_NEW);
    let fs = RecordingFs::new();
    let hit = lookup_with(
        &b.root(),
        &req.idempotency_key,
        &req.request_digest,
        &Cancel::new(),
        &fast().with_fs(fs.clone()),
    )
    .expect("recovery");
    assert!(hit.is_some(), "receipt");
    assert_eq!(b.visible(), post_state(&pre, &req));
    // (The payloads were made durable by the attempt, so this log alone is not checked with
    // `check_sync_discipline`.)
    let log = fs.log();
    let sync = log
        .iter()
        .position(|o| *o == Op::SyncDir("glossary".into()))
        .expect("glossary/ fsynced by recovery");
    let index = log
        .iter()
        .position(|o| matches!(o, Op::Rename(_, to) if to == "index.md"))
        .expect("index published by recovery");
    assert!(sync < index, "{log:#?}");
    assert!(!log
        .iter()
        .any(|o| matches!(o, Op::Rename(_, to) if to.starts_with("glossary/"))));
}

#[test]
fn power_loss_view_journal_rename_is_durable_only_after_the_c10_fsync() {
    for (p, durable) in [
        (Point::AfterJournalRename, false),
        (Point::AfterDurableFsync, true),
    ] {
        let b = Bundle::new();
        let req = three_writes(&b, "power");
        let fs = RecordingFs::new();
        let opts = crash_at(p).with_fs(fs.clone());
        assert!(matches!(
            run(&b, &req, &opts),
            Err(StoreError::SimulatedCrash)
        ));
        let txn = digest::txn_id(&req.request_digest, &req.idempotency_key);
        let journal = format!(".okf/transactions/{txn}.json");
        let kept = durable_renames(&fs.log());
        assert_eq!(kept.iter().any(|(_, to)| *to == journal), durable, "{p}");
        // Nothing visible was renamed yet: a power loss here lands on the pre-state or, once
        // the journal is durable, is completed by recovery.
        assert!(kept.iter().all(|(_, to)| to.starts_with(".okf")), "{p}");
    }
}

#[test]
fn countdown_io_failure_at_every_seam_call_never_mixes_states() {
    let probe = Bundle::new();
    let req0 = three_writes(&probe, "countdown");
    let fs = RecordingFs::new();
    let _ = run(&probe, &req0, &fast().with_fs(fs.clone())).expect("commit");
    let total = fs.calls();
    assert!(total > 20, "{total}");
    for n in 0..total {
        let b = Bundle::new();
        let req = three_writes(&b, "countdown");
        let pre = b.visible();
        let post = post_state(&pre, &req);
        let r = run(&b, &req, &fast().with_fs(RecordingFs::failing_at(n)));
        let committed = match &r {
            Ok(_)
            | Err(StoreError::Committed { .. } | StoreError::PublicationIncomplete { .. }) => true,
            Err(StoreError::Io { .. }) => false,
            Err(e) => panic!("call {n}: unexpected {e:?}"),
        };
        if !committed {
            assert_eq!(
                b.visible(),
                pre,
                "call {n}: pre-boundary failure rolls back"
            );
        }
        assert_index_never_ahead(&b, &req, &pre, &format!("call {n}"));
        let _ = reopen(&b, &req).expect("reopen");
        let vis = b.visible();
        assert!(vis == pre || vis == post, "call {n}: mixed state");
        if committed {
            assert_eq!(vis, post, "call {n}: committed means post-state");
        }
    }
}

#[test]
fn post_boundary_io_failure_is_retried_once_then_reported_receipt_not_stored() {
    // One failure: the in-process retry completes the commit.
    let b = Bundle::new();
    let req = three_writes(&b, "retry");
    let pre = b.visible();
    let opts = fast().with_faults(Faults::new().with(Point::AfterReceiptTmp, Action::IoError, 1));
    let out = run(&b, &req, &opts).expect("retried");
    assert_eq!(out.source, ReceiptSource::Committed);
    assert_eq!(b.visible(), post_state(&pre, &req));
    assert!(receipt_path(&b, &req).exists() && b.listing("transactions").is_empty());

    // Two failures at the receipt write: every write is visible, but a receipt that cannot
    // be stored is not success (spec/store.md §16 rule 1a): `ReceiptNotStored` naming the
    // receipt file, a retryable error for the tool layer; the next open completes it.
    let b = Bundle::new();
    let req = three_writes(&b, "retry");
    let opts = fast().with_faults(Faults::new().with(Point::AfterReceiptTmp, Action::IoError, 2));
    let r = run(&b, &req, &opts);
    let name = receipt_path(&b, &req)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert!(
        matches!(&r, Err(StoreError::ReceiptNotStored { path }) if *path == format!(".okf/receipts/{name}")),
        "{r:?}"
    );
    assert_eq!(b.visible(), post_state(&pre, &req));
    assert_eq!(b.listing("transactions").len(), 1, "journal kept");
    assert!(!receipt_path(&b, &req).exists(), "no receipt");
    let expected = ReceiptMatch {
        change_set_id: req.change_set_id.clone(),
        idempotency_key: req.idempotency_key.clone(),
        request_digest: req.request_digest.clone(),
        base_revision: Some(req.base_revision.clone()),
    };
    let e = classify(r, &expected, okf_mcp::tools::concept_patch::FLAVOR).expect_err("not success");
    assert_eq!((e.code.as_str(), e.retryable), ("operation_rejected", true));
    let hit = reopen(&b, &req).expect("reopen").expect("hit");
    assert_eq!(
        hit.source,
        ReceiptSource::Replayed(ReplayBasis::CompletedNow)
    );
    assert_eq!(b.visible(), post_state(&pre, &req));
}

fn expect_publication_blocked(r: Result<CommitOutcome, StoreError>) -> StoreError {
    match r {
        Err(e @ (StoreError::PublicationBlocked { .. } | StoreError::RecoveryBlocked { .. })) => e,
        other => panic!("expected a blocked publication, got {other:?}"),
    }
}

#[test]
fn sto_06_foreign_write_after_the_boundary_blocks_publication() {
    for resolve in ["restore_base", "delete_journal"] {
        let b = Bundle::new();
        let req = three_writes(&b, "foreign");
        let pre = b.visible();
        let base_orders = b.read("tables/orders.md");
        let target = b.path.join("tables/orders.md");
        let cb: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            put(&target, b"foreign bytes\n").expect("foreign write");
        });
        let opts = fast().with_faults(Faults::new().with_callback(Point::AfterDurableFsync, cb));
        let e = expect_publication_blocked(run(&b, &req, &opts));
        assert!(matches!(e, StoreError::PublicationBlocked { .. }));
        assert_eq!(
            b.read("tables/orders.md"),
            b"foreign bytes\n",
            "not overwritten"
        );
        assert_eq!(
            b.read("index.md"),
            pre["index.md"],
            "root index never ahead"
        );
        assert_eq!(
            b.read("glossary/terms.md"),
            TERMS_NEW,
            "earlier write published"
        );
        let txn = digest::txn_id(&req.request_digest, &req.idempotency_key);
        let w = e
            .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR)
            .to_wire();
        assert_eq!(w["code"], "operation_rejected");
        assert_eq!(w["retryable"], false);
        assert_eq!(w["diagnostics"][0]["code"], "publication_blocked");
        assert_eq!(w["diagnostics"][0]["file"], "tables/orders.md");
        let step = w["diagnostics"][1]["message"]
            .as_str()
            .expect("step")
            .to_owned();
        assert!(
            step.contains(&format!(".okf/staging/{txn}/payload-00001")),
            "{step}"
        );
        assert!(
            step.contains(&format!(".okf/transactions/{txn}.json")),
            "{step}"
        );
        assert!(!receipt_path(&b, &req).exists(), "no receipt");

        // Every later open refuses with the same recovery step (R4), an apply or a lookup.
        let other = request(&b, "other", &[("notes/keep.md", b"x")]);
        let again = expect_publication_blocked(run(&b, &other, &fast()));
        assert!(matches!(again, StoreError::RecoveryBlocked { .. }));
        let w2 = again
            .to_tool_error(okf_mcp::tools::write_concept::FLAVOR)
            .to_wire();
        assert_eq!(
            w2["message"],
            "pending transaction cannot be completed; a written file changed outside the store"
        );
        assert_eq!(w2["diagnostics"][0]["code"], "publication_blocked");
        assert_eq!(
            w2["diagnostics"][1]["message"].as_str(),
            Some(step.as_str())
        );
        let snap = crate::support::util::snapshot(&b.path);
        assert!(
            expect_publication_blocked(reopen(&b, &req).map(|_| unreachable()))
                .to_string()
                .contains("pending")
        );
        assert_eq!(
            crate::support::util::snapshot(&b.path),
            snap,
            "refusal writes nothing"
        );

        if resolve == "restore_base" {
            b.write("tables/orders.md", &base_orders);
            let hit = reopen(&b, &req).expect("recovered").expect("hit");
            assert_eq!(
                hit.source,
                ReceiptSource::Replayed(ReplayBasis::CompletedNow)
            );
            assert_eq!(b.visible(), post_state(&pre, &req));
        } else {
            std::fs::remove_file(b.okf().join("transactions").join(format!("{txn}.json")))
                .expect("delete journal");
            assert!(reopen(&b, &req).expect("open").is_none());
            assert!(b.listing("staging").is_empty(), "staging removed");
            assert_eq!(
                b.read("glossary/terms.md"),
                TERMS_NEW,
                "published files stay"
            );
            assert_eq!(b.read("index.md"), pre["index.md"]);
        }
    }
}

fn unreachable() -> CommitOutcome {
    panic!("a blocked store must not answer")
}

#[test]
fn sto_07_tampered_receipts_are_corrupt_never_absent() {
    let b = Bundle::new();
    let req = three_writes(&b, "tamper");
    let _ = run(&b, &req, &fast()).expect("commit");
    let path = receipt_path(&b, &req);
    let good = String::from_utf8(std::fs::read(&path).expect("receipt")).expect("utf8");
    let upper_result = {
        let r = &req.result_revision;
        good.replace(r.as_str(), &format!("sha256:{}", r[7..].to_uppercase()))
    };
    let other_key = digest::idempotency_key(
        "mcp:concept-patch",
        &Encoder::tagged("test:plan").str("someone-else").digest(),
    )
    .expect("key");
    let cases = vec![
        ("uppercase result_revision", upper_result),
        (
            "duplicate key",
            good.replacen("{\"version\":1,", "{\"version\":1,\"version\":1,", 1),
        ),
        ("trailing bytes", format!("{good}\n")),
        ("whitespace", good.replacen(",\"key\"", ", \"key\"", 1)),
        (
            "dotdot path",
            good.replace("\"glossary/terms.md\"", "\"../x\""),
        ),
        (
            "okf path",
            good.replace("\"glossary/terms.md\"", "\".okf/x\""),
        ),
        (
            "name not matching key",
            good.replace(req.idempotency_key.as_str(), &other_key),
        ),
    ];
    let stem = digest::receipt_name(&req.idempotency_key);
    for (name, text) in cases {
        assert_ne!(text, good, "{name}: the tampering changes the file");
        put(&path, &text).expect("tamper");
        let snap = crate::support::util::snapshot(&b.path);
        let r = run(&b, &req, &fast());
        match &r {
            Err(StoreError::StorageCorrupt(Corrupt::Receipt { name: n })) => assert_eq!(n, &stem),
            other => panic!("{name}: {other:?}"),
        }
        let w = r
            .expect_err("err")
            .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR)
            .to_wire();
        assert_eq!(
            w["message"], "receipt failed integrity validation",
            "{name}"
        );
        assert!(w["diagnostics"][0]["message"]
            .as_str()
            .expect("step")
            .starts_with(&format!("Delete .okf/receipts/{stem}.json")));
        assert_eq!(
            crate::support::util::snapshot(&b.path),
            snap,
            "{name}: tree unchanged"
        );
    }
    put(&path, &good).expect("restore");
    let hit = run(&b, &req, &fast()).expect("replay");
    assert!(matches!(hit.source, ReceiptSource::Replayed(_)));
}

#[test]
fn sto_08_corrupt_journal_refuses_with_a_recovery_step_naming_it() {
    for tamper in [
        "base_binding",
        "payload_digest",
        "not_json",
        "index_ahead_r5",
    ] {
        let b = Bundle::new();
        let req = three_writes(&b, "journal");
        assert!(matches!(
            run(&b, &req, &crash_at(Point::AfterJournalRename)),
            Err(StoreError::SimulatedCrash)
        ));
        let txn = digest::txn_id(&req.request_digest, &req.idempotency_key);
        let jpath = b.okf().join("transactions").join(format!("{txn}.json"));
        match tamper {
            "base_binding" => {
                let mut v: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&jpath).expect("j")).expect("json");
                v["base_binding"] = serde_json::json!(format!("sha256:{}", "0".repeat(64)));
                put(&jpath, serde_json::to_vec(&v).expect("enc")).expect("w");
            }
            "payload_digest" => {
                put(
                    b.okf().join("staging").join(&txn).join("payload-00001"),
                    b"evil",
                )
                .expect("w");
            }
            "index_ahead_r5" => put(b.path.join("index.md"), INDEX_NEW).expect("w"),
            _ => put(&jpath, b"{").expect("w"),
        }
        let snap = crate::support::util::snapshot(&b.path);
        let r = run(
            &b,
            &request(&b, "next", &[("notes/keep.md", b"y")]),
            &fast(),
        );
        let e = match r {
            Err(e @ StoreError::StorageCorrupt(Corrupt::Journal { .. })) => e,
            other => panic!("{tamper}: {other:?}"),
        };
        let w = e
            .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR)
            .to_wire();
        assert_eq!(w["code"], "operation_rejected");
        assert_eq!(
            w["message"],
            "pending transaction failed integrity validation"
        );
        assert_eq!(
            w["diagnostics"][0]["message"].as_str().expect("step"),
            format!("Delete .okf/transactions/{txn}.json to abandon the pending transaction (files already published stay; the root index.md is never ahead), then repeat the same call.")
        );
        assert_eq!(
            crate::support::util::snapshot(&b.path),
            snap,
            "{tamper}: tree unchanged"
        );
    }
}

#[test]
fn sto_09_staged_and_result_limits_fail_before_the_boundary() {
    let mib = 1024 * 1024;
    let big = vec![b'a'; 16 * mib + 1];
    let b = Bundle::new();
    let pre = crate::support::util::snapshot(&b.path);
    let r = run(&b, &request(&b, "big", &[("big.bin", &big)]), &fast());
    assert!(matches!(r, Err(StoreError::Limit(_))), "{r:?}");
    let e = r
        .expect_err("err")
        .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR);
    assert_eq!(e.code, "resource_limit");
    let sixteen = vec![b'b'; 16 * mib];
    let total = request(
        &b,
        "total",
        &[
            ("a.bin", &sixteen),
            ("b.bin", &sixteen),
            ("c.bin", &sixteen),
            ("d.bin", &sixteen),
            ("e.bin", b"1"),
        ],
    );
    assert!(matches!(
        run(&b, &total, &fast()),
        Err(StoreError::Limit(_))
    ));
    // Nothing staged, nothing visible; only the (empty) private state exists.
    let mut now = crate::support::util::snapshot(&b.path);
    now.retain(|k, _| !k.starts_with(".okf"));
    let mut before = pre.clone();
    before.retain(|k, _| !k.starts_with(".okf"));
    assert_eq!(now, before);
    assert!(b.listing("staging").is_empty() && b.listing("transactions").is_empty());

    // A result beyond the capture limits: 60 MiB on disk plus a 5 MiB write.
    let c = Bundle::new();
    for n in ["b1.bin", "b2.bin", "b3.bin", "b4.bin"] {
        c.write(n, &vec![b'c'; 15 * mib]);
    }
    let req = request(&c, "result", &[("more.bin", &vec![b'd'; 5 * mib])]);
    let r = run(&c, &req, &fast());
    match r {
        Err(StoreError::Limit(m)) => assert_eq!(m, "the result would exceed the bundle limits"),
        other => panic!("{other:?}"),
    }
    assert!(!c.path.join("more.bin").exists());
}

fn old_receipt(i: usize, age_secs: i64) -> (String, Vec<u8>) {
    let key = digest::idempotency_key(
        "mcp:concept-patch",
        &Encoder::tagged("test:old").cnt(i as u64).digest(),
    )
    .expect("key");
    let d = Encoder::tagged("test:old-req").cnt(i as u64).digest();
    let t = chrono::Utc::now() - chrono::Duration::seconds(age_secs + i as i64);
    let r = ReceiptFile {
        version: 1,
        key: key.clone(),
        digest: d.clone(),
        receipt: receipt::Receipt {
            format_version: 1,
            change_set_id: format!("mcp-patch-{i}"),
            idempotency_key: key.clone(),
            request_digest: d,
            base_revision: format!("sha256:{}", "1".repeat(64)),
            result_revision: format!("sha256:{}", "2".repeat(64)),
            commit_time: receipt::format_commit_time(t),
            changed_refs: vec![],
            changed_files: vec![receipt::ChangedFile {
                kind: "write".into(),
                path: "x.md".into(),
                from: String::new(),
            }],
        },
        replay: None,
    };
    (ReceiptFile::file_name(&key), r.encode())
}

fn seed_receipts(b: &Bundle, n: usize, age_secs: i64) -> Vec<String> {
    let dir = b.okf().join("receipts");
    std::fs::create_dir_all(&dir).expect("mkdir");
    (0..n)
        .map(|i| {
            let (name, bytes) = old_receipt(i, age_secs);
            put(dir.join(&name), bytes).expect("seed");
            name
        })
        .collect()
}

#[test]
fn sto_10_retention_keeps_the_1000_newest_and_never_young_or_corrupt() {
    let b = Bundle::new();
    let names = seed_receipts(&b, 1005, 48 * 3600);
    let corrupt = format!("{}.json", "f".repeat(64));
    put(b.okf().join("receipts").join(&corrupt), b"{corrupt").expect("corrupt");
    let req = request(&b, "retention", &[("notes/keep.md", b"changed\n")]);
    let _ = run(&b, &req, &fast()).expect("commit");
    let left = b.listing("receipts");
    assert_eq!(left.len(), 1000 + 1, "1,000 valid + the corrupt one");
    assert!(left.contains(&corrupt), "corrupt receipts are never pruned");
    assert!(
        left.contains(&ReceiptFile::file_name(&req.idempotency_key)),
        "new one kept"
    );
    // Index i is older for larger i: the 6 oldest (1000..1005) are gone, 0..999 stay.
    for (i, n) in names.iter().enumerate() {
        assert_eq!(left.contains(n), i < 999, "receipt {i}");
    }

    let y = Bundle::new();
    seed_receipts(&y, 1005, 3600);
    let _ = run(
        &y,
        &request(&y, "young", &[("notes/keep.md", b"z\n")]),
        &fast(),
    )
    .expect("commit");
    assert_eq!(
        y.listing("receipts").len(),
        1006,
        "young receipts are never pruned"
    );
}

#[test]
fn sto_10_retention_boundary_at_exactly_1000_receipts() {
    // 999 old receipts + the new one: 1,000 in all, none pruned.
    let b = Bundle::new();
    seed_receipts(&b, 999, 48 * 3600);
    let _ = run(
        &b,
        &request(&b, "at", &[("notes/keep.md", b"a\n")]),
        &fast(),
    )
    .expect("commit");
    assert_eq!(b.listing("receipts").len(), 1000);
    // 1,000 old receipts + the new one: the oldest goes.
    let c = Bundle::new();
    let names = seed_receipts(&c, 1000, 48 * 3600);
    let _ = run(
        &c,
        &request(&c, "past", &[("notes/keep.md", b"b\n")]),
        &fast(),
    )
    .expect("commit");
    let left = c.listing("receipts");
    assert_eq!(left.len(), 1000);
    assert!(!left.contains(&names[999]), "the oldest is pruned");
    assert!(left.contains(&names[998]));
}

#[test]
fn sto_11_private_state_path_must_be_a_real_directory() {
    let b = Bundle::new();
    std::os::unix::fs::symlink(b.path.join("notes"), b.okf()).expect("symlink");
    let req = request(&b, "s", &[("notes/keep.md", b"q")]);
    let snap = crate::support::util::snapshot(&b.path);
    let e = run(&b, &req, &fast())
        .expect_err("refused")
        .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR);
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("invalid_request", "bundle contains a symlink: .okf")
    );
    assert_eq!(crate::support::util::snapshot(&b.path), snap);

    let c = Bundle::new();
    put(c.okf(), b"file").expect("file");
    let req = request(&c, "s", &[("notes/keep.md", b"q")]);
    let snap = crate::support::util::snapshot(&c.path);
    let e = run(&c, &req, &fast())
        .expect_err("refused")
        .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR);
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        (
            "operation_rejected",
            "private state path is not a directory: .okf"
        )
    );
    assert!(e.diagnostics[0]
        .message
        .starts_with(".okf is not a directory: move it out of the way"));
    assert_eq!(crate::support::util::snapshot(&c.path), snap);

    // A symlinked subdirectory is refused the same way.
    let d = Bundle::new();
    std::fs::create_dir_all(d.okf()).expect("okf");
    std::os::unix::fs::symlink(d.path.join("notes"), d.okf().join("receipts")).expect("symlink");
    let req = request(&d, "s", &[("notes/keep.md", b"q")]);
    let e = run(&d, &req, &fast())
        .expect_err("refused")
        .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR);
    assert_eq!(e.code, "invalid_request");
    assert_eq!(
        d.read("notes/keep.md"),
        b"An ordinary note that no commit touches.\n"
    );
}

/// Holds `.okf/lock` as another writer would (its store already created the layout).
fn hold_lock(b: &Bundle) -> std::fs::File {
    make_private_dirs(b);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(b.okf().join("lock"))
        .expect("lock file");
    f.lock().expect("lock");
    f
}

#[test]
fn sto_12_lock_held_beyond_the_timeout_is_a_retryable_cancellation() {
    let b = Bundle::new();
    let req = three_writes(&b, "locked");
    let _held = hold_lock(&b);
    let snap = crate::support::util::snapshot(&b.path);
    let opts = StoreOptions::default().with_lock_timeout(Duration::from_millis(150));
    let r = run(&b, &req, &opts);
    assert!(matches!(r, Err(StoreError::LockTimeout)), "{r:?}");
    let e = r
        .expect_err("err")
        .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR);
    assert_eq!(
        (e.code.as_str(), e.retryable),
        ("operation_cancelled", true)
    );
    assert_eq!(
        e.message,
        "bundle is locked by another writer; retry the same call later"
    );
    assert_eq!(
        crate::support::util::snapshot(&b.path),
        snap,
        "tree unchanged"
    );
}

#[test]
fn sto_12_lock_timeout_is_the_real_30_seconds() {
    let b = Bundle::new();
    let req = three_writes(&b, "locked30");
    let _held = hold_lock(&b);
    let start = std::time::Instant::now();
    let r = run(&b, &req, &StoreOptions::default());
    assert!(matches!(r, Err(StoreError::LockTimeout)), "{r:?}");
    // Not a speed assertion: it proves the default is not a shortened test timeout.
    assert!(start.elapsed() >= Duration::from_secs(30));
    assert_eq!(
        b.read("index.md"),
        std::fs::read(fixture("store-basic").join("index.md")).expect("r")
    );
}

#[test]
fn sto_13_concurrent_commits_one_wins_and_identical_ones_replay_plainly() {
    let b = Bundle::new();
    let pre = b.visible();
    let r1 = request(&b, "one", &[("tables/orders.md", ORDERS_NEW)]);
    let r2 = request(&b, "two", &[("metrics/revenue.md", b"revenue v2\n")]);
    let root = Arc::new(b.path.clone());
    let spawn = |req: CommitRequest| {
        let root = Arc::clone(&root);
        std::thread::spawn(move || {
            let r = root::open(root.to_str().expect("utf8")).expect("root");
            commit_with(&r, &req, None, &Cancel::new(), &StoreOptions::default())
        })
    };
    let (t1, t2) = (spawn(r1.clone()), spawn(r2.clone()));
    let (o1, o2) = (t1.join().expect("t1"), t2.join().expect("t2"));
    let oks = [&o1, &o2].iter().filter(|o| o.is_ok()).count();
    assert_eq!(oks, 1, "{o1:?} {o2:?}");
    let (winner, loser) = if o1.is_ok() { (&r1, o2) } else { (&r2, o1) };
    assert!(
        matches!(loser, Err(StoreError::Conflict { retryable: true })),
        "{loser:?}"
    );
    assert_eq!(
        b.visible(),
        post_state(&pre, winner),
        "exactly one plan applied"
    );

    // Two identical applies wait on a lock the test holds; both captured the base.
    let c = Bundle::new();
    let req = three_writes(&c, "same");
    let held = hold_lock(&c);
    let root = Arc::new(c.path.clone());
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (root, req) = (Arc::clone(&root), req.clone());
            std::thread::spawn(move || {
                let r = root::open(root.to_str().expect("utf8")).expect("root");
                commit_with(&r, &req, None, &Cancel::new(), &StoreOptions::default())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    drop(held);
    let outs: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().expect("join").expect("ok"))
        .collect();
    let mut sources: Vec<ReceiptSource> = outs.iter().map(|o| o.source).collect();
    sources.sort_by_key(|s| format!("{s:?}"));
    assert_eq!(
        sources,
        [
            ReceiptSource::Committed,
            ReceiptSource::Replayed(ReplayBasis::Plain)
        ]
    );
    assert_eq!(outs[0].receipt, outs[1].receipt);
}

#[test]
fn sto_14_case_folding_override_rejects_a_colliding_new_path() {
    let b = Bundle::new();
    let req = request(&b, "fold", &[("Tables/Orders.md", b"x\n")]);
    let snap = crate::support::util::snapshot(&b.path);
    let opts = fast().with_folding(Folding {
        case: true,
        normalization: false,
    });
    let r = run(&b, &req, &opts);
    match r {
        Err(StoreError::Rejected(m)) => {
            assert_eq!(
                m,
                "path collides under filesystem case or normalisation folding"
            );
        }
        other => panic!("{other:?}"),
    }
    let mut now = crate::support::util::snapshot(&b.path);
    now.retain(|k, _| !k.starts_with(".okf"));
    let mut before = snap;
    before.retain(|k, _| !k.starts_with(".okf"));
    assert_eq!(now, before, "tree unchanged");
    assert!(b.listing("staging").is_empty());
    // NFD folding: a decomposed variant of an existing name collides too.
    let c = Bundle::new();
    c.write("notes/caf\u{e9}.md", b"cafe\n");
    let req = request(&c, "nfd", &[("notes/cafe\u{301}.md", b"x\n")]);
    let opts = fast().with_folding(Folding {
        case: false,
        normalization: true,
    });
    assert!(matches!(run(&c, &req, &opts), Err(StoreError::Rejected(_))));
    // The real probe on this (case-sensitive) filesystem lets the same write through.
    let d = Bundle::new();
    let req = request(&d, "fold", &[("Tables/Orders.md", b"x\n")]);
    let _ = run(&d, &req, &fast()).expect("no folding here");
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .expect("meta")
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn sto_15_permissions_of_replaced_new_and_private_files() {
    let b = Bundle::new();
    std::fs::set_permissions(
        b.path.join("tables/orders.md"),
        std::fs::Permissions::from_mode(0o640),
    )
    .expect("chmod");
    let req = three_writes(&b, "perm");
    let _ = run(&b, &req, &fast()).expect("commit");
    assert_eq!(
        mode(&b.path.join("tables/orders.md")),
        0o640,
        "replaced keeps its bits"
    );
    assert_eq!(mode(&b.path.join("index.md")), 0o644);
    // New files: 0644 under the umask (measured with a file created the same way).
    let probe = b.path.join("../umask-probe");
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&probe)
            .expect("probe");
    }
    assert_eq!(mode(&b.path.join("glossary/terms.md")), mode(&probe));
    for d in ["", "transactions", "staging", "receipts", "capabilities"] {
        assert_eq!(mode(&b.okf().join(d)) & 0o077, 0, ".okf/{d} is private");
        assert_eq!(mode(&b.okf().join(d)) & 0o700, 0o700);
    }
    assert_eq!(mode(&receipt_path(&b, &req)), 0o600);
    assert_eq!(mode(&b.okf().join("lock")), 0o600);
}

#[test]
fn can_03_cancellation_before_the_boundary_rolls_back_and_cleans_up() {
    for p in [
        Point::AfterLock,
        Point::AfterStagePayload(0),
        Point::AfterJournalTmp,
    ] {
        let b = Bundle::new();
        let req = three_writes(&b, "cancel");
        let pre = b.visible();
        let opts = fast().with_faults(Faults::new().with(p, Action::Cancel, 1));
        let r = run(&b, &req, &opts);
        assert!(matches!(r, Err(StoreError::Cancelled)), "{p}: {r:?}");
        let e = r
            .expect_err("err")
            .to_tool_error(okf_mcp::tools::concept_patch::FLAVOR);
        assert_eq!(
            (e.code.as_str(), e.retryable),
            ("operation_cancelled", true),
            "{p}"
        );
        assert_eq!(b.visible(), pre, "{p}: tree unchanged");
        assert!(
            b.listing("staging").is_empty(),
            "{p}: staging removed by the checkpoint"
        );
        assert!(b.listing("transactions").is_empty(), "{p}: no journal temp");
        // The same call repeated performs the commit (§13 row 5).
        let out = run(&b, &req, &fast()).expect("repeat");
        assert_eq!(out.source, ReceiptSource::Committed);
    }
}

#[test]
fn can_04_cancellation_from_the_commit_point_on_is_ignored() {
    for p in [Point::AfterJournalRename, Point::AfterDurableFsync] {
        let b = Bundle::new();
        let req = three_writes(&b, "late-cancel");
        let pre = b.visible();
        let cancel = Cancel::new();
        let opts = fast().with_faults(Faults::new().with(p, Action::Cancel, 1));
        let out = commit_with(&b.root(), &req, None, &cancel, &opts).expect("applied");
        assert!(cancel.is_cancelled(), "{p}: the request was cancelled");
        assert_eq!(out.source, ReceiptSource::Committed, "{p}");
        assert_eq!(b.visible(), post_state(&pre, &req), "{p}: post-state");
    }
}

#[test]
fn replay_only_mode_and_lookup_never_create_private_state() {
    let b = Bundle::new();
    let req = three_writes(&b, "replay");
    let r = replay_with(&b.root(), &req, &fast());
    assert!(matches!(r, Ok(None)), "{r:?}");
    assert!(reopen(&b, &req).expect("lookup").is_none());
    assert!(!b.okf().exists(), "no .okf created");

    let _ = run(&b, &req, &fast()).expect("commit");
    // Replay-only after the bundle moved: the stored receipt answers; nothing is written.
    let snap = crate::support::util::snapshot(&b.path);
    let out = replay_with(&b.root(), &req, &fast())
        .expect("lookup")
        .expect("hit");
    assert_eq!(out.source, ReceiptSource::Replayed(ReplayBasis::Plain));
    assert_eq!(crate::support::util::snapshot(&b.path), snap);
    // A miss in replay-only mode with `.okf/` present: no receipt (the caller's CAS conflict).
    let other = request(&b, "never", &[("notes/keep.md", b"n")]);
    let r = replay_with(&b.root(), &other, &fast());
    assert!(matches!(r, Ok(None)), "{r:?}");
}

#[test]
fn idempotency_conflict_and_undone_replay() {
    let b = Bundle::new();
    let pre = b.visible();
    let req = three_writes(&b, "idem");
    let _ = run(&b, &req, &fast()).expect("commit");
    let mut changed = req.clone();
    changed.request_digest = Encoder::tagged("test:request").str("changed").digest();
    assert!(matches!(
        run(&b, &changed, &fast()),
        Err(StoreError::IdempotencyConflict)
    ));

    // Revert the bundle to exactly the base: the same request replays "later undone" and
    // re-applies nothing (§13 row 10).
    for (p, _) in resident(&req) {
        match pre.get(p) {
            Some(bytes) => b.write(p, bytes),
            None => std::fs::remove_file(b.path.join(p)).expect("rm"),
        }
    }
    std::fs::remove_dir(b.path.join("glossary")).expect("rmdir");
    assert_eq!(b.visible(), pre);
    let out = run(&b, &req, &fast()).expect("replay");
    assert_eq!(out.source, ReceiptSource::Replayed(ReplayBasis::Undone));
    assert_eq!(b.visible(), pre, "nothing re-applied");
}

#[test]
fn stale_base_is_a_conflict_and_forced_conflicts_count_down() {
    let b = Bundle::new();
    let req = three_writes(&b, "cas");
    b.write("notes/keep.md", b"someone else\n");
    assert!(matches!(
        run(&b, &req, &fast()),
        Err(StoreError::Conflict { retryable: true })
    ));
    assert_eq!(
        b.read("notes/keep.md"),
        b"someone else\n",
        "external content kept"
    );

    let c = Bundle::new();
    let req = three_writes(&c, "forced");
    let opts = fast().with_forced_conflicts(2);
    assert!(matches!(
        run(&c, &req, &opts),
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        run(&c, &req, &opts),
        Err(StoreError::Conflict { .. })
    ));
    let _ = run(&c, &req, &opts).expect("third attempt commits");
}

#[test]
fn write_concept_receipts_carry_the_replay_payload() {
    let b = Bundle::new();
    let mut req = request(&b, "wc", &[("tables/orders.md", ORDERS_NEW)]);
    req.idempotency_key = format!("mcp-replace-{}", "e".repeat(64));
    req.replay =
        Some(serde_json::json!({"status":"success","path":"tables/orders.md","diagnostics":[]}));
    let out = run(&b, &req, &fast()).expect("commit");
    assert_eq!(out.receipt.replay, req.replay);
    let bytes = std::fs::read(receipt_path(&b, &req)).expect("receipt");
    assert!(String::from_utf8_lossy(&bytes).ends_with(
        r#","replay":{"status":"success","path":"tables/orders.md","diagnostics":[]}}"#
    ));
    // Identical content replays after the bundle moved (lookup before any base check).
    b.write("notes/keep.md", b"moved\n");
    let hit = reopen(&b, &req).expect("lookup").expect("hit");
    assert_eq!(hit.receipt.replay, req.replay);
    // A plan key without replay must not carry one.
    let mut bad = request(&b, "wc2", &[("notes/keep.md", b"q")]);
    bad.replay = Some(serde_json::json!({}));
    assert!(matches!(
        run(&b, &bad, &fast()),
        Err(StoreError::Rejected(_))
    ));
}

#[test]
fn cancellation_while_waiting_for_the_lock_is_a_checkpoint() {
    let b = Bundle::new();
    let req = three_writes(&b, "wait");
    let _held = hold_lock(&b);
    let snap = crate::support::util::snapshot(&b.path);
    let cancel = Cancel::new();
    let c2 = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        c2.cancel();
    });
    // The real 30 s timeout: only the poll checkpoint can end this call early.
    let r = commit_with(&b.root(), &req, None, &cancel, &StoreOptions::default());
    t.join().expect("join");
    assert!(matches!(r, Err(StoreError::Cancelled)), "{r:?}");
    assert_eq!(
        crate::support::util::snapshot(&b.path),
        snap,
        "tree unchanged"
    );
}

/// Creates `.okf/` and its four subdirectories, as a first open would.
fn make_private_dirs(b: &Bundle) {
    for d in ["transactions", "staging", "receipts", "capabilities"] {
        std::fs::create_dir_all(b.okf().join(d)).expect("mkdir");
    }
}

#[test]
fn leftovers_of_a_crashed_probe_do_not_block_the_next_open() {
    let b = Bundle::new();
    let req = three_writes(&b, "probe");
    let txn = digest::txn_id(&req.request_digest, &req.idempotency_key);
    make_private_dirs(&b);
    put(
        b.okf().join("capabilities").join(format!("{txn}-mode")),
        b"",
    )
    .expect("leftover");
    put(
        b.okf().join("capabilities").join(format!("{txn}-case-a")),
        b"",
    )
    .expect("leftover");
    let out = run(&b, &req, &fast()).expect("commit");
    assert_eq!(out.source, ReceiptSource::Committed);
    assert!(b.listing("capabilities").is_empty());
}

#[test]
fn an_unremovable_case_probe_name_does_not_block_the_open() {
    // A directory holds the case probe's name: the umask is measured on `-mode` instead and
    // case folding reads as absent, as before the two probes were merged.
    let b = Bundle::new();
    let req = three_writes(&b, "probe-dir");
    let txn = digest::txn_id(&req.request_digest, &req.idempotency_key);
    make_private_dirs(&b);
    let blocker = b.okf().join("capabilities").join(format!("{txn}-case-a"));
    std::fs::create_dir_all(blocker.join("inside")).expect("blocker");
    let out = run(&b, &req, &fast()).expect("commit");
    assert_eq!(out.source, ReceiptSource::Committed);
    assert_eq!(b.listing("capabilities"), vec![format!("{txn}-case-a")]);
}

/// Child-process half of `env_fault_crash_in_a_real_process_lands_on_the_post_state`: a no-op
/// unless `OKF_MCP_STORE_CHILD` names a bundle; then it commits through the production entry
/// point, whose options come from the environment (`OKF_MCP_FAULT`).
#[test]
fn child_process_commit_helper() {
    let Ok(path) = std::env::var("OKF_MCP_STORE_CHILD") else {
        return;
    };
    let b = Bundle {
        _tmp: tempfile::tempdir().expect("unused"),
        path: PathBuf::from(path),
    };
    let req = three_writes(&b, "child");
    let r = commit_with(
        &b.root(),
        &req,
        None,
        &Cancel::new(),
        &StoreOptions::from_env(),
    );
    // Reached only when the fault did not fire.
    std::process::exit(if r.is_ok() { 0 } else { 1 });
}

#[test]
fn env_fault_crash_in_a_real_process_lands_on_the_post_state() {
    for (fault, post) in [
        ("after_stage_payload(1):crash", false),
        ("after_journal_rename:crash", true),
        ("after_publish(1):crash", true),
    ] {
        let b = Bundle::new();
        let req = three_writes(&b, "child");
        let pre = b.visible();
        let out = std::process::Command::new(std::env::current_exe().expect("exe"))
            .args([
                "--exact",
                "store::child_process_commit_helper",
                "--test-threads=1",
            ])
            .env("OKF_MCP_STORE_CHILD", &b.path)
            .env("OKF_MCP_FAULT", fault)
            .output()
            .expect("spawn child");
        assert_eq!(
            out.status.code(),
            Some(86),
            "{fault}: the child crashed at the point"
        );
        let hit = reopen(&b, &req).expect("reopen");
        if post {
            assert_eq!(b.visible(), post_state(&pre, &req), "{fault}");
            assert_eq!(
                hit.map(|h| h.source),
                Some(ReceiptSource::Replayed(ReplayBasis::CompletedNow))
            );
        } else {
            assert_eq!(b.visible(), pre, "{fault}");
            assert!(hit.is_none());
        }
        assert!(b.listing("staging").is_empty() && b.listing("transactions").is_empty());
    }
}
