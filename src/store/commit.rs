//! The commit pipeline (spec/store.md §10.1 C1–C16, §10.2) and the receipt lookup (§8.5).
//!
//! One entry, [`Txn`]: [`Txn::begin`] before the caller's capture (lock-first when `.okf/`
//! exists and the caller asks for it: C1–C2 without waiting, probe and recovery deferred
//! until needed, docs/store.md §3.1), then [`Txn::commit`] (C4–C16) or [`Txn::replay`] (C4
//! only). A reserved transaction reuses the caller's capture, taken under the lock, for the
//! C5 compare-and-swap and the §12 step 6 replay basis; otherwise the commit waits for the
//! lock and captures the tree itself at C5. The writes of a request are an enum
//! ([`Writes`]): their bytes, or planned writes whose payloads a [`Payloads`] producer makes
//! under the lock at C8 (spec/migration.md §12.5 rule 2).
//!
//! The states of one attempt are types: `Staged` (payloads durable in `.okf/staging/`,
//! nothing visible changed) → `PastCommitPoint` (the journal renamed: the commit point) →
//! `Published` (every write visible and verified). Only `Staged::commit_point` creates a
//! `PastCommitPoint`, and only `PastCommitPoint::publish` creates a `Published`, so a receipt can never be
//! written before the publish, nor the publish start before the journal is durable.
//!
//! # What a failure means
//! - Any error except `Committed`, `PublicationBlocked`, `PublicationIncomplete`,
//!   `RecoveryIncomplete` and `ReceiptNotStored`: rolled back — the visible tree is
//!   at its pre-state and this attempt's private leftovers are removed (at the latest by the
//!   next open).
//! - `PublicationBlocked`: the transaction is durable and partly published; the journal stays;
//!   recovery completes it once the operator restores the path (§10.3).
//! - `PublicationIncomplete` / `RecoveryIncomplete`: durable, some write not visible yet
//!   (an I/O failure while publishing, also in the retry of §10.2); the journal stays; the
//!   exact replay completes it once the cause is gone (spec/store.md §16 rule 1).
//! - `ReceiptNotStored`: durable and every write visible, but the receipt could not be
//!   stored (also in the retry); the journal stays; the exact replay stores it once the cause
//!   is gone (spec/store.md §16 rule 1a).
//! - `Committed`: durable and every write visible; do not assume rollback — the next store
//!   open completes the receipt and cleanup.

use crate::cancel::Cancel;
use crate::digest;
use crate::envelope::{codes, ToolError};
use crate::okf::capture::Capture;
use crate::plan::stream::{Emit, Fault, Payloads, PlannedWrite, Writes};
use crate::store::capture::{self, Spill, MAX_FILES, MAX_FILE_BYTES, MAX_TOTAL_BYTES};
use crate::store::error::{Corrupt, StoreError};
use crate::store::fault::Point;
use crate::store::handle::{checkpoint, is_crash, point, Handle, StoreOptions};
use crate::store::journal::{self, BaseEntry, Journal};
use crate::store::open::{self, Create};
use crate::store::publish;
use crate::store::receipt::{self, ReceiptFile};
use crate::store::root::Root;
use cap_fs_ext::{DirExt, MetadataExt};
use serde_json::Value;
use std::sync::Arc;

/// What a commit is asked to persist (spec/store.md §9, §10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitRequest {
    /// The change set id (receipt `change_set_id`).
    pub change_set_id: String,
    /// The derived idempotency key (§6.1) or the `write_concept` change id (§10.0).
    pub idempotency_key: String,
    /// The request digest (§4).
    pub request_digest: String,
    /// The change set's base revision; the C5 compare-and-swap checks it.
    pub base_revision: String,
    /// The plan's result revision.
    pub result_revision: String,
    /// The base manifest (see [`manifest`]), sorted by path.
    pub base: Vec<BaseEntry>,
    /// The files to write (any order): their bytes, or the planned writes of a streamed
    /// plan whose payloads a [`Payloads`] producer makes at C8.
    pub writes: Writes,
    /// Refs the plan changes (§5 rule 4), any order.
    pub changed_refs: Vec<String>,
    /// `write_concept` only: the success payload stored for replays (§10.0 step 3).
    pub replay: Option<Value>,
}

/// A payload producer as the store calls it.
pub type Producer<'p> = &'p dyn Payloads<StoreError>;

impl From<Fault> for StoreError {
    fn from(f: Fault) -> Self {
        match f {
            Fault::Changed => StoreError::Conflict { retryable: true },
            Fault::Unreproducible => StoreError::PayloadMismatch,
        }
    }
}

/// Payloads already in memory: emitted in publish order (ascending path bytes, root
/// `index.md` last).
#[derive(Debug, Clone, Copy)]
struct InMemory<'a>(&'a [(String, Vec<u8>)]);

impl Payloads<StoreError> for InMemory<'_> {
    fn produce(
        &self,
        _locked: &Capture,
        emit: &mut Emit<'_, StoreError>,
    ) -> Result<(), StoreError> {
        let mut order: Vec<&(String, Vec<u8>)> = self.0.iter().collect();
        journal::publish_order(&mut order, |w| &w.0);
        for (p, b) in order {
            emit(p, b)?;
        }
        Ok(())
    }
}

/// The base manifest of a capture (spec/store.md §3.6 rule 4).
#[must_use]
pub fn manifest(c: &Capture) -> Vec<BaseEntry> {
    c.files
        .iter()
        .map(|f| BaseEntry {
            path: f.path.clone(),
            size: f.size,
            digest: digest::hex(&f.digest),
        })
        .collect()
}

/// Whether `base` equals [`manifest`]`(cap)`, compared without building it (the digests
/// are compared as bytes: `unhex32` accepts exactly the lowercase hex that `hex` writes).
fn is_manifest_of(base: &[BaseEntry], cap: &Capture) -> bool {
    base.len() == cap.files.len()
        && base.iter().zip(&cap.files).all(|(b, f)| {
            b.path == f.path && b.size == f.size && digest::unhex32(&b.digest) == Some(f.digest)
        })
}

/// Why a lookup hit happened, for the `receipt_replayed` message (spec/store.md §12 step 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayBasis {
    /// This call's recovery (C3) completed the journal of this key.
    CompletedNow,
    /// The revision read under the lock equals the receipt's base revision.
    Undone,
    /// Otherwise.
    Plain,
}

impl ReplayBasis {
    /// The diagnostic message of spec/store.md §12 step 6.
    #[must_use]
    pub fn message(self) -> &'static str {
        match self {
            ReplayBasis::CompletedNow => "this exact request was committed earlier and its interrupted publication was completed now",
            ReplayBasis::Undone => "this exact request was committed earlier and later undone; nothing was written now; change the request (e.g. actor) and preview again to apply it again",
            ReplayBasis::Plain => "this exact request was committed earlier; its stored result is returned and nothing was written now",
        }
    }
}

/// Where the receipt of a successful call came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptSource {
    /// This attempt committed (possibly completed by the in-process retry of §10.2).
    Committed,
    /// A receipt lookup hit (C4).
    Replayed(ReplayBasis),
}

/// A successful store call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct CommitOutcome {
    /// The persisted (or replayed) receipt file.
    pub receipt: ReceiptFile,
    /// Fresh commit or lookup hit.
    pub source: ReceiptSource,
    /// This call created `.okf/` (and its `.gitignore`): the bundle's first fresh commit.
    pub created_store: bool,
}

/// How a [`Txn`] reaches the store lock (docs/store.md §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// Lock-first when `.okf/` already exists: the lock is taken without waiting before the
    /// caller's capture, so that capture is the capture under the lock of C5 and the §12
    /// step 6 replay basis. Otherwise (no `.okf/`, the lock busy, a journal pending) as
    /// [`Reserve::Deferred`].
    LockFirst,
    /// Capture-first (spec/store.md §10.1): the commit waits for the lock, recovers and
    /// captures again at C5; a replay reads the revision under the lock for its basis.
    Deferred,
    /// As [`Reserve::Deferred`], for a caller whose replay answer does not depend on the
    /// §12 step 6 basis (`write_concept`, §10.0): a replay reads no tree.
    DeferredNoBasis,
}

/// One transaction on the store (spec/store.md §10): begun with [`Txn::begin`] before the
/// caller's capture, then finished with [`Txn::commit`] (C4–C16) or [`Txn::replay`] (C4
/// only, replay-only mode of §10.1). Whether the store was reserved lock-first or the commit
/// opens it itself is decided inside. Dropping an unused transaction releases a held lock and
/// has written nothing (rule S-2).
#[derive(Debug)]
#[must_use = "dropping the transaction releases the lock"]
pub struct Txn<'r> {
    root: &'r Root,
    txn_id: String,
    key: String,
    request_digest: String,
    opts: StoreOptions,
    reserved: Reserved<'r>,
}

/// What [`Txn::begin`] reached.
#[derive(Debug)]
enum Reserved<'r> {
    /// The lock is held and no journal was pending; probe and recovery (C3) run only when
    /// the store is needed.
    Locked(Handle<'r>),
    /// The commit opens the store itself; `basis` says whether a replay reads its basis.
    Deferred { basis: bool },
    /// The lock-first open failed: reported only where the store is needed, so answers that
    /// never reach it stay as spec/store.md §13 rows 2 and 6 say.
    Failed(StoreError),
}

impl<'r> Txn<'r> {
    /// Begins the transaction of `key` and `request_digest` on `root` (C1–C2 for
    /// [`Reserve::LockFirst`] when `.okf/` exists: creates and writes nothing, never waits).
    /// `opts`: [`StoreOptions::from_env`] in production; tests pass seams, faults and
    /// timeouts.
    ///
    /// # Errors
    /// `Cancelled` only; every other reservation error is kept and answered by
    /// [`Txn::commit`] or [`Txn::replay`].
    pub fn begin(
        root: &'r Root,
        key: &str,
        request_digest: &str,
        reserve: Reserve,
        cancel: &Cancel,
        opts: &StoreOptions,
    ) -> Result<Self, StoreError> {
        let txn_id = digest::txn_id(request_digest, key);
        let reserved = match reserve {
            Reserve::Deferred => Reserved::Deferred { basis: true },
            Reserve::DeferredNoBasis => Reserved::Deferred { basis: false },
            Reserve::LockFirst if !crate::store::root::has_private_state(root).unwrap_or(false) => {
                Reserved::Deferred { basis: true }
            }
            Reserve::LockFirst => {
                match open::open(root, opts, Some(cancel), Create::Existing, &txn_id) {
                    Ok(Some(h)) => Reserved::Locked(h),
                    Ok(None) => Reserved::Deferred { basis: true },
                    Err(StoreError::Cancelled) => return Err(StoreError::Cancelled),
                    Err(e) => Reserved::Failed(e),
                }
            }
        };
        Ok(Txn {
            root,
            txn_id,
            key: key.to_owned(),
            request_digest: request_digest.to_owned(),
            opts: opts.clone(),
            reserved,
        })
    }

    /// Whether the commit and the replay open the store themselves (nothing was reserved and
    /// no reservation error is kept).
    #[must_use]
    pub fn is_deferred(&self) -> bool {
        matches!(self.reserved, Reserved::Deferred { .. })
    }

    /// C4–C16 of a fresh commit of `req` (the transaction's key and request digest).
    /// `locked` is the caller's capture taken after [`Txn::begin`], its planning basis: when
    /// the store was reserved it is the capture under the lock, C5 compares its revision with
    /// `req.base_revision` and a receipt hit at C4 takes its §12 step 6 basis from it;
    /// otherwise it is not read, and the store waits for the lock, recovers and captures again
    /// at C5. `payloads` makes the bytes of streamed writes at C8 (resident writes need none).
    ///
    /// # Errors
    /// See [`StoreError`] and the module docs for which errors rolled back; a request of
    /// another transaction, streamed writes without a producer, or a reserved transaction
    /// without `locked` → `Rejected`; [`StoreError::PayloadMismatch`] (rolled back).
    pub fn commit(
        self,
        req: &CommitRequest,
        payloads: Option<Producer<'_>>,
        locked: Option<&Capture>,
        cancel: &Cancel,
    ) -> Result<CommitOutcome, StoreError> {
        let inconsistent = StoreError::Rejected("the planned transaction is inconsistent");
        if req.idempotency_key != self.key || req.request_digest != self.request_digest {
            return Err(inconsistent);
        }
        let planned = req.writes.planned();
        let resident;
        let payloads: Producer<'_> = match (&req.writes, payloads) {
            (Writes::Resident(w), _) => {
                resident = InMemory(w);
                &resident
            }
            (Writes::Streamed(_), Some(p)) => p,
            (Writes::Streamed(_), None) => return Err(inconsistent),
        };
        match self.reserved {
            Reserved::Failed(e) => Err(e),
            Reserved::Deferred { .. } => {
                run_commit(self.root, req, &planned, payloads, cancel, &self.opts)
            }
            Reserved::Locked(mut h) => {
                let Some(capture) = locked else {
                    return Err(inconsistent);
                };
                // §7 steps 4–5 deferred by the reservation (no journal was pending; nothing
                // visible changes), then C4.
                h.prepare(Some(cancel))?;
                if let Some(hit) = find(
                    &h,
                    &req.idempotency_key,
                    &req.request_digest,
                    Basis::Known(&capture.revision),
                )? {
                    return Ok(hit);
                }
                // C5: `capture` was taken under this lock; the deferred C3 found no journal
                // (none was pending at the reservation), so it is still the tree's state.
                point(&h.opts, Point::AfterCapture, Some(cancel))?;
                if forced_conflict(&h.opts) || capture.revision != req.base_revision {
                    return Err(StoreError::Conflict { retryable: true });
                }
                write_locked(h, req, &planned, payloads, capture, cancel)
            }
        }
    }

    /// C4 only (replay-only mode, spec/store.md §10.1): the receipt lookup of §8.5.
    /// `Ok(None)` = miss or no store (the caller answers `Conflict{retryable: true}`); never
    /// creates `.okf/`. A hit's §12 step 6 basis comes from `locked` (as in [`Txn::commit`])
    /// when the store was reserved, else from the revision read under the lock (none for
    /// [`Reserve::DeferredNoBasis`]).
    ///
    /// # Errors
    /// `IdempotencyConflict`, `StorageCorrupt`, probe/recovery errors, `LockTimeout`,
    /// `Cancelled`, I/O; a kept reservation error; a reserved transaction without `locked` →
    /// `Rejected`.
    pub fn replay(
        self,
        locked: Option<&Capture>,
        cancel: &Cancel,
    ) -> Result<Option<CommitOutcome>, StoreError> {
        let (h, basis) = match self.reserved {
            Reserved::Failed(e) => return Err(e),
            Reserved::Locked(mut h) => {
                let Some(capture) = locked else {
                    return Err(StoreError::Rejected(
                        "the planned transaction is inconsistent",
                    ));
                };
                h.prepare(Some(cancel))?;
                (h, Basis::Known(&capture.revision))
            }
            Reserved::Deferred { basis } => {
                let Some(h) = open::open(
                    self.root,
                    &self.opts,
                    Some(cancel),
                    Create::No,
                    &self.txn_id,
                )?
                else {
                    return Ok(None);
                };
                (
                    h,
                    if basis {
                        Basis::Capture(cancel)
                    } else {
                        Basis::Skip
                    },
                )
            }
        };
        find(&h, &self.key, &self.request_digest, basis)
    }
}

/// C1–C16 for `req` (only its identity, revisions, base, refs and replay are read) with the
/// planned writes `planned` and their `payloads`: opens (waiting for the lock) and recovers,
/// C4, then captures the tree under the lock at C5.
fn run_commit(
    root: &Root,
    req: &CommitRequest,
    planned: &[PlannedWrite],
    payloads: Producer<'_>,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<CommitOutcome, StoreError> {
    let txn_id = digest::txn_id(&req.request_digest, &req.idempotency_key);
    // C1–C3.
    let Some(h) = open::open(root, opts, Some(cancel), Create::Yes, &txn_id)? else {
        return Err(StoreError::Conflict { retryable: true });
    };
    // C4.
    if let Some(hit) = find(
        &h,
        &req.idempotency_key,
        &req.request_digest,
        Basis::Capture(cancel),
    )? {
        return Ok(hit);
    }
    // C5. Digests, sizes and paths are all the compare-and-swap and the C6 checks read.
    let cap =
        capture::capture_with(root, cancel, Some(&Spill::DIGESTS_ONLY)).map_err(capture_error)?;
    point(opts, Point::AfterCapture, Some(cancel))?;
    if forced_conflict(opts) || cap.revision != req.base_revision {
        return Err(StoreError::Conflict { retryable: true });
    }
    let created = h.created;
    write_locked(h, req, planned, payloads, &cap, cancel).map(|mut o| {
        o.created_store = created;
        o
    })
}

/// C6–C16 on a locked, recovered handle whose C5 compare-and-swap passed with capture `cap`.
fn write_locked(
    mut h: Handle<'_>,
    req: &CommitRequest,
    planned: &[PlannedWrite],
    payloads: Producer<'_>,
    cap: &Capture,
    cancel: &Cancel,
) -> Result<CommitOutcome, StoreError> {
    let root = h.root;
    let opts = h.opts.clone();
    // §7 step 4, deferred to the first write of this open ([`Handle::prepare`]).
    h.probe_for_write()?;
    // C6.
    pre_publish_checks(&h, planned, cap)?;
    // C7.
    let j = journal::build(
        &req.change_set_id,
        &req.idempotency_key,
        &req.request_digest,
        &req.base_revision,
        &req.result_revision,
        &req.base,
        planned,
        &req.changed_refs,
        req.replay.as_ref(),
        receipt::format_commit_time(chrono::Utc::now()),
    )
    .map_err(|_| StoreError::Rejected("the planned transaction is inconsistent"))?;
    let j = Arc::new(j);
    if !is_manifest_of(&j.base, cap) {
        return Err(StoreError::Rejected(
            "the planned transaction is inconsistent",
        ));
    }
    // C8–C9.
    let staged = match stage(&h, &j, payloads, cap, cancel) {
        Ok(s) => s,
        Err(e) => return Err(abandon(&h, &j, e)),
    };
    let durable = match staged.commit_point(cancel) {
        Ok(d) => d,
        Err(e) => return Err(abandon(&h, &j, e)),
    };
    // Past the commit point: cancellation is ignored from here on (§14).
    finish(root, h, durable, &opts, cancel)
}

/// Where the §12 step 6 replay basis of a receipt hit comes from.
#[derive(Clone, Copy)]
enum Basis<'a> {
    /// Not needed (`write_concept`, whose replay message does not depend on it).
    Skip,
    /// Read the tree under the lock now, honouring the request's cancellation.
    Capture(&'a Cancel),
    /// The revision of a capture the caller already took under this lock.
    Known(&'a str),
}

/// C4 / §8.5 on an open handle. `basis` says where the revision under the lock that decides
/// the replay basis of §12 step 6 (patch, migration, temporal apply) comes from.
fn find(
    h: &Handle<'_>,
    key: &str,
    request_digest: &str,
    basis: Basis<'_>,
) -> Result<Option<CommitOutcome>, StoreError> {
    let stem = digest::receipt_name(key);
    let corrupt = || StoreError::StorageCorrupt(Corrupt::Receipt { name: stem.clone() });
    let Some(bytes) =
        publish::read_receipt(h, &format!("{stem}.json")).map_err(|e| StoreError::Io {
            step: "receipt lookup",
            source: crate::store::durable::at_path(e, format!(".okf/receipts/{stem}.json")),
        })?
    else {
        return Ok(None);
    };
    let r = ReceiptFile::decode(&bytes).map_err(|_| corrupt())?;
    if r.key != key {
        return Err(corrupt());
    }
    if r.digest != request_digest {
        return Err(StoreError::IdempotencyConflict);
    }
    let undone = |rev: &str| {
        if rev == r.receipt.base_revision {
            ReplayBasis::Undone
        } else {
            ReplayBasis::Plain
        }
    };
    let basis = if h.completed.iter().any(|k| k == key) {
        ReplayBasis::CompletedNow
    } else {
        match basis {
            // Read under the lock (R42); a failed or cancelled read falls back to the plain
            // message and the answer stays a success.
            Basis::Capture(cancel) => {
                match capture::capture_with(h.root, cancel, Some(&Spill::DIGESTS_ONLY)) {
                    Ok(c) => undone(&c.revision),
                    Err(_) => ReplayBasis::Plain,
                }
            }
            Basis::Known(rev) => undone(rev),
            Basis::Skip => ReplayBasis::Plain,
        }
    };
    Ok(Some(CommitOutcome {
        receipt: r,
        source: ReceiptSource::Replayed(basis),
        created_store: false,
    }))
}

fn capture_error(e: ToolError) -> StoreError {
    if e.code == codes::OPERATION_CANCELLED {
        StoreError::Cancelled
    } else if capture::is_kept_changing(&e) {
        // No stable snapshot for the C5 compare-and-swap: the base cannot be confirmed
        // (spec/store.md §16 rule 3).
        StoreError::Conflict { retryable: true }
    } else {
        StoreError::Refused(e)
    }
}

#[allow(clippy::unused_self)]
fn forced_conflict(opts: &StoreOptions) -> bool {
    #[cfg(feature = "fault-injection")]
    if let Some(c) = &opts.forced_conflicts {
        use std::sync::atomic::Ordering;
        return c
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
    }
    let _ = opts;
    false
}

/// C6 (spec/store.md §10.1).
fn pre_publish_checks(
    h: &Handle<'_>,
    planned: &[PlannedWrite],
    cap: &Capture,
) -> Result<(), StoreError> {
    for PlannedWrite { path: p, .. } in planned {
        if !receipt::is_writable_path(p) {
            return Err(StoreError::Refused(ToolError::invalid_request(
                "a planned path cannot be written",
            )));
        }
    }
    let total: u64 = planned.iter().map(|w| w.size).sum();
    if planned.len() > MAX_FILES
        || planned.iter().any(|w| w.size > MAX_FILE_BYTES)
        || total > MAX_TOTAL_BYTES
    {
        return Err(StoreError::Limit(
            "the staged writes exceed the store limits",
        ));
    }
    // Result manifest within the capture limits (§3.3).
    let mut result_total: u64 = cap.files.iter().map(|f| f.size).sum();
    let mut result_count = cap.files.len();
    for PlannedWrite { path: p, size, .. } in planned {
        match cap.get(p) {
            Some(old) => result_total -= old.size,
            None => result_count += 1,
        }
        result_total += size;
        if p.split('/').count() > capture::MAX_PATH_COMPONENTS || p.len() > capture::MAX_PATH_BYTES
        {
            return Err(StoreError::Limit(
                "the result would exceed the bundle limits",
            ));
        }
    }
    if result_count > MAX_FILES || result_total > MAX_TOTAL_BYTES {
        return Err(StoreError::Limit(
            "the result would exceed the bundle limits",
        ));
    }
    // Folding collisions of new paths.
    if h.folding.case || h.folding.normalization {
        let fold = |s: &str| {
            let s = if h.folding.normalization {
                use unicode_normalization::UnicodeNormalization;
                s.nfc().collect::<String>()
            } else {
                s.to_owned()
            };
            if h.folding.case {
                s.to_lowercase()
            } else {
                s
            }
        };
        let mut known: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        let prefixes = |p: &str| {
            let comps: Vec<&str> = p.split('/').collect();
            (1..=comps.len())
                .map(move |n| comps[..n].join("/"))
                .collect::<Vec<_>>()
        };
        for f in &cap.files {
            for pre in prefixes(&f.path) {
                known.insert(fold(&pre), pre);
            }
        }
        for PlannedWrite { path: p, .. } in planned {
            for pre in prefixes(p) {
                let k = fold(&pre);
                match known.get(&k) {
                    Some(existing) if *existing != pre => {
                        return Err(StoreError::Rejected(
                            "path collides under filesystem case or normalisation folding",
                        ))
                    }
                    Some(_) => {}
                    None => {
                        known.insert(k, pre);
                    }
                }
            }
        }
    }
    // Parents: no symlink or non-directory component; same device as staging.
    let staging_dev = h
        .staging
        .dir_metadata()
        .map_err(StoreError::io("pre-publish checks"))?
        .dev();
    for PlannedWrite { path: p, .. } in planned {
        let comps: Vec<&str> = p.split('/').collect();
        let mut dir = h
            .root
            .dir
            .try_clone()
            .map_err(StoreError::io("pre-publish checks"))?;
        let mut dev = h
            .root
            .dir
            .dir_metadata()
            .map_err(StoreError::io("pre-publish checks"))?
            .dev();
        for (i, c) in comps.iter().enumerate() {
            let last = i + 1 == comps.len();
            let shown = comps[..=i].join("/");
            match dir.symlink_metadata(c) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(StoreError::Refused(ToolError::invalid_request(format!(
                        "bundle contains a symlink: {shown}"
                    ))))
                }
                Ok(m) if last && !m.is_file() => {
                    return Err(StoreError::Refused(ToolError::invalid_request(format!(
                        "a planned file is not a regular file: {shown}"
                    ))))
                }
                Ok(m) if !last && !m.is_dir() => {
                    return Err(StoreError::Refused(ToolError::invalid_request(format!(
                        "a planned path has a parent that is not a directory: {shown}"
                    ))))
                }
                Ok(m) if !last => {
                    dir = dir
                        .open_dir_nofollow(c)
                        .map_err(StoreError::io("pre-publish checks"))?;
                    dev = m.dev();
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(source) => {
                    return Err(StoreError::Io {
                        step: "pre-publish checks",
                        source,
                    })
                }
            }
        }
        if dev != staging_dev {
            return Err(StoreError::Rejected(
                "bundle spans more than one filesystem",
            ));
        }
    }
    Ok(())
}

/// Payloads durable in `.okf/staging/<txn-id>/`; nothing visible changed yet.
#[must_use = "a staged transaction must reach its commit point or be abandoned"]
struct Staged<'h, 'r> {
    h: &'h Handle<'r>,
    /// Shared, not copied: the journal holds the whole base manifest.
    j: Arc<Journal>,
}

/// The journal is renamed: the transaction is committed (durability boundary).
#[must_use = "a durable transaction must be published"]
struct PastCommitPoint {
    j: Arc<Journal>,
}

/// Every write is visible and verified; only the receipt and cleanup remain.
#[must_use = "a published transaction must write its receipt"]
struct Published {
    j: Arc<Journal>,
}

/// C8 (spec/store.md §10.1).
fn stage<'h, 'r>(
    h: &'h Handle<'r>,
    j: &Arc<Journal>,
    payloads: Producer<'_>,
    locked: &Capture,
    cancel: &Cancel,
) -> Result<Staged<'h, 'r>, StoreError> {
    checkpoint(Some(cancel))?;
    let io = |s| StoreError::io(s);
    let at = h.at_staging();
    h.fs().mkdir(at, &j.txn_id, 0o700).map_err(io("stage"))?;
    let dir = h
        .staging
        .open_dir_nofollow(&j.txn_id)
        .map_err(io("stage"))?;
    let rel = format!(".okf/staging/{}", j.txn_id);
    let sat = crate::store::durable::At {
        dir: &dir,
        rel: &rel,
    };
    let inconsistent = || StoreError::Rejected("the planned transaction is inconsistent");
    // Path → index of its journal write entry: one O(1) lookup per produced payload.
    let index: std::collections::HashMap<&str, usize> = j
        .writes
        .iter()
        .enumerate()
        .map(|(i, w)| (w.path.as_str(), i))
        .collect();
    let mut staged = vec![false; j.writes.len()];
    let total = j.writes.len() as u64;
    let progress = crate::progress::current();
    let large = total > crate::progress::LARGE;
    let mut done = 0u64;
    payloads.produce(locked, &mut |path, bytes| {
        checkpoint(Some(cancel))?;
        let i = *index.get(path).ok_or_else(inconsistent)?;
        let w = &j.writes[i];
        if std::mem::replace(&mut staged[i], true) {
            return Err(inconsistent());
        }
        if bytes.len() as u64 != w.size || digest::hex(&digest::sha256(bytes)) != w.digest {
            return Err(StoreError::PayloadMismatch);
        }
        drop(
            h.fs()
                .create_write(sat, &w.payload, bytes)
                .map_err(io("stage"))?,
        );
        done += 1;
        if large {
            progress.report(done, Some(total), "staging");
        }
        point(&h.opts, Point::AfterStagePayload(i), Some(cancel))
    })?;
    if staged.contains(&false) {
        return Err(inconsistent());
    }
    // One durability step for every payload (spec/migration.md §12.5 rule 3), then their
    // directory entries.
    let names: Vec<&str> = j.writes.iter().map(|w| w.payload.as_str()).collect();
    h.fs().sync_batch(sat, &names).map_err(io("stage"))?;
    h.fs().sync_dir(sat).map_err(io("stage"))?;
    h.fs().sync_dir(at).map_err(io("stage"))?;
    point(&h.opts, Point::AfterStageFsync, Some(cancel))?;
    if large {
        progress.finish(total, Some(total), "staging");
    }
    Ok(Staged {
        h,
        j: Arc::clone(j),
    })
}

impl Staged<'_, '_> {
    /// C9: journal temp → `fsync` → last checkpoint → rename (the commit point).
    fn commit_point(self, cancel: &Cancel) -> Result<PastCommitPoint, StoreError> {
        let h = self.h;
        let at = h.at_tx();
        let tmp = format!("{}.json.tmp", self.j.txn_id);
        let f = h
            .fs()
            .create_write(at, &tmp, &self.j.encode())
            .map_err(StoreError::io("journal"))?;
        h.fs()
            .sync_file(at, &tmp, &f)
            .map_err(StoreError::io("journal"))?;
        drop(f);
        point(&h.opts, Point::AfterJournalTmp, Some(cancel))?;
        checkpoint(Some(cancel))?;
        h.fs()
            .rename(at, &tmp, at, &format!("{}.json", self.j.txn_id))
            .map_err(StoreError::io("journal"))?;
        Ok(PastCommitPoint { j: self.j })
    }
}

impl PastCommitPoint {
    /// C10–C13. `cancel` only reaches the fault hooks (CAN-04): there is no checkpoint here.
    fn publish(self, h: &Handle<'_>, cancel: &Cancel) -> Result<Published, StoreError> {
        point(&h.opts, Point::AfterJournalRename, Some(cancel))?;
        h.fs().sync_dir(h.at_tx()).map_err(|source| {
            h.poison();
            StoreError::Io {
                step: "journal fsync",
                source,
            }
        })?;
        point(&h.opts, Point::AfterDurableFsync, Some(cancel))?;
        publish::publish_all(h, &self.j)?;
        Ok(Published { j: self.j })
    }
}

impl Published {
    /// C14–C15.
    fn complete(self, h: &Handle<'_>) -> Result<ReceiptFile, StoreError> {
        publish::write_receipt(h, &self.j, publish::now_ns())?;
        publish::cleanup(h, &self.j)?;
        Ok(self.j.receipt_file())
    }
}

/// Pre-boundary failure: removes this attempt's staging directory and journal temp (best
/// effort; R1 of the next open removes what is left), unless the failure is a simulated
/// crash, which must leave everything as a dead process would.
fn abandon(h: &Handle<'_>, j: &Journal, e: StoreError) -> StoreError {
    if is_crash(&e) {
        return e;
    }
    // A rename that reported failure but happened anyway leaves a journal: keep its payloads
    // so that recovery can complete it.
    if h.tx.symlink_metadata(format!("{}.json", j.txn_id)).is_ok() {
        return e;
    }
    let _ = h.tx.remove_file(format!("{}.json.tmp", j.txn_id));
    if h.staging.symlink_metadata(&j.txn_id).is_ok() {
        let _ = h.fs().remove_dir_all(h.at_staging(), &j.txn_id);
    }
    e
}

/// C10–C16 plus the post-boundary failure handling of §10.2.
fn finish(
    root: &Root,
    h: Handle<'_>,
    durable: PastCommitPoint,
    opts: &StoreOptions,
    cancel: &Cancel,
) -> Result<CommitOutcome, StoreError> {
    let j = Arc::clone(&durable.j);
    // Whether C13 verified every write visible: a later failure (C14 receipt, C15 cleanup)
    // keeps the Phase-1 rule, `Committed` is success (spec/store.md §16 rule 1).
    let mut verified = false;
    let first = durable.publish(&h, cancel).and_then(|p| {
        verified = true;
        p.complete(&h)
    });
    let cause = match first {
        Ok(receipt) => {
            return Ok(CommitOutcome {
                receipt,
                source: ReceiptSource::Committed,
                created_store: false,
            })
        }
        Err(e @ StoreError::PublicationBlocked { .. }) => return Err(e),
        Err(e) if is_crash(&e) => return Err(e),
        Err(e) => e,
    };
    // §10.2: poison and release this handle, retry once on a fresh one (no checkpoints).
    h.poison();
    drop(h);
    let retry = open::open(root, opts, None, Create::No, &j.txn_id);
    match retry {
        Err(e) if is_crash(&e) => Err(e),
        Err(
            e @ (StoreError::RecoveryBlocked { .. }
            | StoreError::PublicationBlocked { .. }
            | StoreError::RecoveryIncomplete { .. }
            | StoreError::ReceiptNotStored { .. }),
        ) => Err(e),
        Ok(Some(h2)) => {
            let done = h2
                .tx
                .symlink_metadata(format!("{}.json", j.txn_id))
                .is_err();
            let stem = digest::receipt_name(&j.idempotency_key);
            let stored = publish::read_receipt(&h2, &format!("{stem}.json"))
                .ok()
                .flatten();
            let expected = j.receipt_file();
            if done && stored.as_deref() == Some(expected.encode().as_slice()) {
                return Ok(CommitOutcome {
                    receipt: expected,
                    source: ReceiptSource::Committed,
                    created_store: false,
                });
            }
            Err(unverified(root, &j, verified, cause))
        }
        _ => Err(unverified(root, &j, verified, cause)),
    }
}

/// The answer of a durable transaction the retry did not complete (spec/store.md §16 rule 1):
/// `Committed` (success for the tool layer) when every write is visible — C13 verified them,
/// or a read now finds each at its result — else `PublicationIncomplete` naming the first
/// write in publish order that is not.
fn unverified(root: &Root, j: &Journal, verified: bool, cause: StoreError) -> StoreError {
    // spec/store.md §16 rule 1a: without a stored receipt the change is not success.
    if matches!(cause, StoreError::ReceiptNotStored { .. }) {
        return cause;
    }
    if !verified {
        if let Some(path) = publish::first_unpublished(&root.dir, j) {
            return StoreError::PublicationIncomplete { path };
        }
    }
    committed(j, cause)
}

fn committed(j: &Journal, cause: StoreError) -> StoreError {
    StoreError::Committed {
        receipt: Box::new(j.receipt_file()),
        journal: Box::new(j.receipt.clone()),
        cause: Box::new(cause),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_manifest_of_equals_comparing_with_the_built_manifest() {
        let cap = Capture::from_files(vec![
            ("a.md".to_owned(), b"a".to_vec()),
            ("b/c.md".to_owned(), b"bc".to_vec()),
        ]);
        let base = manifest(&cap);
        assert!(is_manifest_of(&base, &cap));
        type Change = Box<dyn Fn(&mut Vec<BaseEntry>)>;
        let variants: Vec<Change> = vec![
            Box::new(|b| b[1].digest = b[1].digest.to_uppercase()),
            Box::new(|b| b[0].digest.replace_range(0..1, "0")),
            Box::new(|b| b[0].digest.push('0')),
            Box::new(|b| b[0].size += 1),
            Box::new(|b| b[1].path = "b/d.md".to_owned()),
            Box::new(|b| {
                b.pop();
            }),
            Box::new(|b| b.swap(0, 1)),
        ];
        for change in variants {
            let mut other = base.clone();
            change(&mut other);
            assert_eq!(is_manifest_of(&other, &cap), other == manifest(&cap));
        }
    }
}
