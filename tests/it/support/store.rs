//! The store's transaction API ([`Txn`]) as the store tests drive it: capture-first commits,
//! receipt lookups and replay-only lookups, with explicit options.

use okf_mcp::cancel::Cancel;
use okf_mcp::plan::stream::{Payloads, Writes};
use okf_mcp::store::commit::{CommitOutcome, CommitRequest, Reserve, Txn};
use okf_mcp::store::error::StoreError;
use okf_mcp::store::handle::StoreOptions;
use okf_mcp::store::root::Root;

/// A capture-first commit of `req` (the store waits for the lock, recovers and captures at
/// C5); `payloads` for streamed writes.
pub fn commit_with(
    root: &Root,
    req: &CommitRequest,
    payloads: Option<&dyn Payloads<StoreError>>,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<CommitOutcome, StoreError> {
    Txn::begin(
        root,
        &req.idempotency_key,
        &req.request_digest,
        Reserve::Deferred,
        cancel,
        opts,
    )?
    .commit(req, payloads, None, cancel)
}

/// A receipt lookup of `key` (opens and recovers the store when `.okf/` exists; reads no
/// replay basis). `Ok(None)`: a miss or no store.
pub fn lookup_with(
    root: &Root,
    key: &str,
    request_digest: &str,
    cancel: &Cancel,
    opts: &StoreOptions,
) -> Result<Option<CommitOutcome>, StoreError> {
    Txn::begin(
        root,
        key,
        request_digest,
        Reserve::DeferredNoBasis,
        cancel,
        opts,
    )?
    .replay(None, cancel)
}

/// Replay-only mode (spec/store.md §10.1): the lookup of `req` with its §12 step 6 basis read
/// under the lock. `Ok(None)`: a miss or no store.
pub fn replay_with(
    root: &Root,
    req: &CommitRequest,
    opts: &StoreOptions,
) -> Result<Option<CommitOutcome>, StoreError> {
    let cancel = Cancel::new();
    Txn::begin(
        root,
        &req.idempotency_key,
        &req.request_digest,
        Reserve::Deferred,
        &cancel,
        opts,
    )?
    .replay(None, &cancel)
}

/// The resident writes of `req` (a store test's synthetic plan holds its bytes).
///
/// # Panics
/// On a streamed request.
pub fn resident(req: &CommitRequest) -> &[(String, Vec<u8>)] {
    match &req.writes {
        Writes::Resident(w) => w,
        Writes::Streamed(_) => panic!("a streamed request holds no bytes"),
    }
}
