//! The commit pipeline (spec/store.md §10.1 C1–C16, §10.2) and the receipt lookup (§8.5).
//!
//! Two entries: [`commit`] runs C1–C16 itself (it captures the tree under the lock at C5);
//! [`open_locked`] reserves the store first (C1–C2 without waiting; probe and recovery
//! deferred until needed) and returns a [`Session`] whose caller takes its one capture under
//! the lock, so [`Session::commit`] (C4–C16) and [`Session::lookup`] (C4) reuse
//! that capture for the C5 compare-and-swap and the §12 step 6 replay basis.
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
use crate::store::capture::{self, Spill, MAX_FILES, MAX_FILE_BYTES, MAX_TOTAL_BYTES};
use crate::store::error::{Corrupt, StoreError};
use crate::store::fault::Point;
use crate::store::handle::{checkpoint, is_crash, point, Handle, StoreOptions};
use crate::store::journal::{self, BaseEntry, Journal, PlannedWrite};
use crate::store::open::{self, Create};
use crate::store::publish;
use crate::store::receipt::{self, ReceiptFile};
use crate::store::root::Root;
use cap_fs_ext::{DirExt, MetadataExt};
use serde_json::Value;
use std::sync::Arc;

/// What a commit is asked to persist (spec/store.md §9, §10). `W` is the form of the
/// writes: their bytes (`Vec<(String, Vec<u8>)>`, the default, for plans held in memory) or
/// only their paths, sizes and digests ([`PlannedWrite`]s, for [`commit_streamed`], whose
/// payloads are produced under the lock as they are staged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitRequest<W = Vec<(String, Vec<u8>)>> {
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
    /// Files to write (any order): bundle-relative path and full new bytes, or
    /// [`PlannedWrite`]s.
    pub writes: W,
    /// Refs the plan changes (§5 rule 4), any order.
    pub changed_refs: Vec<String>,
    /// `write_concept` only: the success payload stored for replays (§10.0 step 3).
    pub replay: Option<Value>,
}

/// The sink [`Payloads::produce`] hands each payload to: bundle-relative path and bytes.
pub type Emit<'e> = dyn FnMut(&str, &[u8]) -> Result<(), StoreError> + 'e;

/// Produces the payloads of a commit at C8 (spec/migration.md §12.5 rule 2): called once,
/// under the store lock and after the C5 compare-and-swap, with the capture that C5
/// compared. It hands every planned write's bytes to `emit`, one at a time, in any order;
/// the store stages each payload as it comes and keeps only its path and digest. A payload
/// whose size or digest differs from its [`PlannedWrite`] abandons the attempt before the
/// boundary ([`StoreError::PayloadMismatch`]); a path that is not planned, or emitted twice,
/// or a planned path never emitted, abandons it as an internal inconsistency.
pub trait Payloads {
    /// Emits every payload.
    ///
    /// # Errors
    /// The producer's own failure, or the first error `emit` returned (pass it on unchanged).
    fn produce(&self, locked: &Capture, emit: &mut Emit<'_>) -> Result<(), StoreError>;
}

/// Payloads already in memory: emitted in publish order (ascending path bytes, root
/// `index.md` last).
#[derive(Debug, Clone, Copy)]
pub struct InMemory<'a>(pub &'a [(String, Vec<u8>)]);

impl Payloads for InMemory<'_> {
    fn produce(&self, _locked: &Capture, emit: &mut Emit<'_>) -> Result<(), StoreError> {
        let mut order: Vec<&(String, Vec<u8>)> = self.0.iter().collect();
        journal::publish_order(&mut order, |w| &w.0);
        for (p, b) in order {
            emit(p, b)?;
        }
        Ok(())
    }
}

/// The planned writes of in-memory writes.
fn planned_of(writes: &[(String, Vec<u8>)]) -> Vec<PlannedWrite> {
    writes.iter().map(|(p, b)| PlannedWrite::of(p, b)).collect()
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

/// Fresh commit or replay-only (spec/store.md §10.1 "Replay-only mode").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// C1–C16.
    Fresh,
    /// C1–C4: a hit is returned; a miss is `Conflict{retryable: true}`. Never creates `.okf/`.
    ReplayOnly,
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
}

/// Runs a commit (spec/store.md §10) with the production options.
///
/// # Errors
/// See [`StoreError`] and the module docs for which errors rolled back.
pub fn commit(
    root: &Root,
    req: &CommitRequest,
    mode: Mode,
    cancel: &Cancel,
) -> Result<CommitOutcome, StoreError> {
    commit_with(root, req, mode, cancel, &StoreOptions::from_env())
}

/// Receipt lookup only (`write_concept` step 5.3): opens the store only when `.okf/` exists,
/// recovers, and looks the key up. `Ok(None)` = miss (or no `.okf/`).
///
/// # Errors
/// `IdempotencyConflict`, `StorageCorrupt`, recovery errors, `LockTimeout`, `Cancelled`, I/O.
pub fn lookup(
    root: &Root,
    key: &str,
    request_digest: &str,
    cancel: &Cancel,
) -> Result<Option<CommitOutcome>, StoreError> {
    lookup_with(root, key, request_digest, cancel, &StoreOptions::from_env())
}

/// [`lookup`] with explicit options.
///
/// # Errors
/// As [`lookup`].
pub fn lookup_with(
    root: &Root,
    key: &str,
    request_digest: &str,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<Option<CommitOutcome>, StoreError> {
    let tag = digest::txn_id(request_digest, key);
    let Some(h) = open::open(root, opts, Some(cancel), Create::No, &tag)? else {
        return Ok(None);
    };
    find(&h, key, request_digest, Basis::Skip)
}

/// [`commit`] with explicit options (tests: seam, faults, timeouts).
///
/// # Errors
/// As [`commit`].
pub fn commit_with(
    root: &Root,
    req: &CommitRequest,
    mode: Mode,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<CommitOutcome, StoreError> {
    let planned = planned_of(&req.writes);
    run_commit(
        root,
        req,
        &planned,
        &InMemory(&req.writes),
        mode,
        cancel,
        opts,
    )
}

/// A commit whose payloads are produced under the lock (spec/migration.md §12.5 rule 2):
/// `req.writes` are only the [`PlannedWrite`]s; `payloads` emits the bytes at C8. Otherwise
/// as [`commit`].
///
/// # Errors
/// As [`commit`], plus [`StoreError::PayloadMismatch`] (rolled back).
pub fn commit_streamed(
    root: &Root,
    req: &CommitRequest<Vec<PlannedWrite>>,
    payloads: &dyn Payloads,
    mode: Mode,
    cancel: &Cancel,
) -> Result<CommitOutcome, StoreError> {
    commit_streamed_with(root, req, payloads, mode, cancel, &StoreOptions::from_env())
}

/// [`commit_streamed`] with explicit options (tests: seam, faults, timeouts).
///
/// # Errors
/// As [`commit_streamed`].
pub fn commit_streamed_with(
    root: &Root,
    req: &CommitRequest<Vec<PlannedWrite>>,
    payloads: &dyn Payloads,
    mode: Mode,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<CommitOutcome, StoreError> {
    run_commit(root, req, &req.writes, payloads, mode, cancel, opts)
}

/// C1–C16 for `req` (only its identity, revisions, base, refs and replay are read) with the
/// planned writes `planned` and their `payloads`.
fn run_commit<W>(
    root: &Root,
    req: &CommitRequest<W>,
    planned: &[PlannedWrite],
    payloads: &dyn Payloads,
    mode: Mode,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<CommitOutcome, StoreError> {
    let txn_id = digest::txn_id(&req.request_digest, &req.idempotency_key);
    // C1–C3.
    let create = match mode {
        Mode::Fresh => Create::Yes,
        Mode::ReplayOnly => Create::No,
    };
    let Some(h) = open::open(root, opts, Some(cancel), create, &txn_id)? else {
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
    if mode == Mode::ReplayOnly {
        return Err(StoreError::Conflict { retryable: true });
    }
    // C5. Digests, sizes and paths are all the compare-and-swap and the C6 checks read.
    let cap =
        capture::capture_with(root, cancel, Some(&Spill::DIGESTS_ONLY)).map_err(capture_error)?;
    point(opts, Point::AfterCapture, Some(cancel))?;
    if forced_conflict(opts) || cap.revision != req.base_revision {
        return Err(StoreError::Conflict { retryable: true });
    }
    write_locked(h, req, planned, payloads, &cap, cancel)
}

/// A store reserved before the caller's capture: the lock-first apply of `docs/store.md`
/// §3.1. The lock is held, no journal was pending; the folding probe and recovery (C3) run
/// only when [`Session::commit`] or [`Session::lookup`] needs the store. The caller's one
/// capture, taken while this session holds the lock, is the fresh capture under the lock of
/// C5 (spec/store.md §10.1): [`Session::commit`] compares its revision with the change set's
/// base instead of capturing again, and a receipt hit reads the §12 step 6 replay basis from
/// it. Dropping an unused session releases the lock and has written nothing (rule S-2).
#[derive(Debug)]
#[must_use = "dropping the session releases the lock"]
pub struct Session<'r> {
    h: Handle<'r>,
    txn_id: String,
}

/// Reserves the store lock-first with the production options (C1–C2; spec/store.md §7,
/// §10.1). Creates and writes nothing and never waits: `Ok(None)` when `.okf/`, one of its
/// four subdirectories or `.okf/lock` is absent, when the lock is held by another writer, or
/// when a journal is pending (the caller then keeps the spec's capture-first flow, whose
/// commit waits for the lock and recovers as usual). `key` and `request_digest` give the
/// transaction id that names the folding-probe files.
///
/// # Errors
/// `.okf` symlink → `Refused`; not a directory → `Rejected`; `Cancelled`; I/O.
pub fn open_locked<'r>(
    root: &'r Root,
    key: &str,
    request_digest: &str,
    cancel: &Cancel,
) -> Result<Option<Session<'r>>, StoreError> {
    open_locked_with(root, key, request_digest, cancel, &StoreOptions::from_env())
}

/// [`open_locked`] with explicit options.
///
/// # Errors
/// As [`open_locked`].
pub fn open_locked_with<'r>(
    root: &'r Root,
    key: &str,
    request_digest: &str,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<Option<Session<'r>>, StoreError> {
    let txn_id = digest::txn_id(request_digest, key);
    let h = open::open(root, opts, Some(cancel), Create::Existing, &txn_id)?;
    Ok(h.map(|h| Session { h, txn_id }))
}

impl Session<'_> {
    /// C4–C16 of a fresh commit on this session. `locked` is the capture the caller took while
    /// holding this session's lock (its planning basis): C5 compares `locked.revision` with
    /// `req.base_revision` (and honours the forced-conflict hook and the `after_capture` fault
    /// point at that spot); a receipt hit at C4 takes its §12 step 6 basis from `locked`.
    /// `req` must carry the key and request digest the session was opened with.
    ///
    /// # Errors
    /// As [`commit`]; a request of another transaction → `Rejected`.
    pub fn commit(
        self,
        req: &CommitRequest,
        locked: &Capture,
        cancel: &Cancel,
    ) -> Result<CommitOutcome, StoreError> {
        let planned = planned_of(&req.writes);
        self.commit_planned(req, &planned, &InMemory(&req.writes), locked, cancel)
    }

    /// [`Session::commit`] of a streamed request (see [`commit_streamed`]): `payloads` are
    /// produced at C8 from `locked`.
    ///
    /// # Errors
    /// As [`Session::commit`], plus [`StoreError::PayloadMismatch`] (rolled back).
    pub fn commit_streamed(
        self,
        req: &CommitRequest<Vec<PlannedWrite>>,
        payloads: &dyn Payloads,
        locked: &Capture,
        cancel: &Cancel,
    ) -> Result<CommitOutcome, StoreError> {
        self.commit_planned(req, &req.writes, payloads, locked, cancel)
    }

    fn commit_planned<W>(
        self,
        req: &CommitRequest<W>,
        planned: &[PlannedWrite],
        payloads: &dyn Payloads,
        locked: &Capture,
        cancel: &Cancel,
    ) -> Result<CommitOutcome, StoreError> {
        if digest::txn_id(&req.request_digest, &req.idempotency_key) != self.txn_id {
            return Err(StoreError::Rejected(
                "the planned transaction is inconsistent",
            ));
        }
        let mut h = self.h;
        // §7 steps 4–5 deferred by the reservation (no journal was pending; nothing visible
        // changes), then C4.
        h.prepare(Some(cancel))?;
        if let Some(hit) = find(
            &h,
            &req.idempotency_key,
            &req.request_digest,
            Basis::Known(&locked.revision),
        )? {
            return Ok(hit);
        }
        // C5: `locked` was captured under this lock; the deferred C3 found no journal (none was
        // pending at the reservation), so it is still the tree's state.
        point(&h.opts, Point::AfterCapture, Some(cancel))?;
        if forced_conflict(&h.opts) || locked.revision != req.base_revision {
            return Err(StoreError::Conflict { retryable: true });
        }
        write_locked(h, req, planned, payloads, locked, cancel)
    }

    /// C4 only (replay-only mode, spec/store.md §10.1): the receipt lookup of §8.5 for `key`.
    /// `Ok(None)` = miss (the caller answers `Conflict{retryable: true}`). A hit's §12 step 6
    /// basis comes from `locked`, the caller's capture under this lock; no tree is read.
    ///
    /// # Errors
    /// `IdempotencyConflict`, `StorageCorrupt`, probe/recovery errors, `Cancelled`, I/O.
    pub fn lookup(
        self,
        key: &str,
        request_digest: &str,
        locked: &Capture,
        cancel: &Cancel,
    ) -> Result<Option<CommitOutcome>, StoreError> {
        let mut h = self.h;
        h.prepare(Some(cancel))?;
        find(&h, key, request_digest, Basis::Known(&locked.revision))
    }
}

/// C6–C16 on a locked, recovered handle whose C5 compare-and-swap passed with capture `cap`.
fn write_locked<W>(
    mut h: Handle<'_>,
    req: &CommitRequest<W>,
    planned: &[PlannedWrite],
    payloads: &dyn Payloads,
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
    payloads: &dyn Payloads,
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
