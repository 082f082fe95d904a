//! The store's error type (spec/store.md §10.4, §12.1). It names no tool: the one mapping to
//! the wire is `tools::outcome`.

use crate::envelope::ToolError;
use crate::store::receipt::{Receipt, ReceiptFile};

/// Which damaged private file a `StorageCorrupt` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Corrupt {
    /// `.okf/transactions/<txn_id>.json` (R2, R5, R6).
    Journal {
        /// The transaction id (the journal's file stem).
        txn_id: String,
    },
    /// `.okf/receipts/<name>.json` (§8.5).
    Receipt {
        /// The receipt's file stem, `hex(H(key))`.
        name: String,
    },
}

/// Every way a store call can fail (spec/store.md §12.1).
///
/// Rollback contract: every variant except [`StoreError::Committed`],
/// [`StoreError::PublicationIncomplete`], [`StoreError::RecoveryIncomplete`] (and, under the
/// `fault-injection` feature, `SimulatedCrash`) means the visible tree is at its pre-state
/// *for this attempt* — with one exception: `PublicationBlocked` is raised after the
/// boundary; files published before the blocked one stay, the journal stays, and recovery
/// completes or an operator abandons the transaction (§10.3). `PublicationIncomplete` and
/// `RecoveryIncomplete` are durable and partly published (spec/store.md §16 rule 1): the
/// exact replay completes them once the cause is removed. `Committed` means the
/// transaction is durable and every write visible: do not assume rollback; the next store
/// open completes it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The C5 compare-and-swap failed, or a replay-only lookup missed.
    #[error("bundle revision changed")]
    Conflict {
        /// Always true for a CAS failure.
        retryable: bool,
    },
    /// The key's receipt carries another request digest (§8.5).
    #[error("a different request already committed under this plan")]
    IdempotencyConflict,
    /// A journal or receipt failed integrity validation.
    #[error("private state failed integrity validation")]
    StorageCorrupt(Corrupt),
    /// Recovery found a written path changed outside the store (§11 R4).
    #[error("pending transaction cannot be completed")]
    RecoveryBlocked {
        /// Bundle-relative path of the foreign target.
        path: String,
        /// The transaction id.
        txn_id: String,
        /// The staged payload holding the planned result.
        payload: String,
    },
    /// Publication found a target changed outside the store (§10.3).
    #[error("bundle changed during publication")]
    PublicationBlocked {
        /// Bundle-relative path of the foreign target.
        path: String,
        /// The transaction id.
        txn_id: String,
        /// The staged payload holding the planned result.
        payload: String,
    },
    /// Publication (C10–C13) did not finish and the in-process retry of §10.2 did not finish
    /// it either: the transaction is durable, the journal stays, and some planned write is
    /// not visible yet (spec/store.md §16 rule 1). `path` is the first write in publish order
    /// that does not hold its result. Never success: a retryable `operation_rejected`.
    #[error("the change is committed but not yet fully published")]
    PublicationIncomplete {
        /// Bundle-relative path of the first unpublished write.
        path: String,
    },
    /// Recovery (§11 R7) met an I/O failure while publishing a pending write of a journal
    /// (spec/store.md §16 rule 1; distinct from R4's foreign path, [`StoreError::RecoveryBlocked`]).
    /// The journal stays; once the cause is removed the next open completes it. Mapped as
    /// [`StoreError::PublicationIncomplete`].
    #[error("pending transaction could not be published yet")]
    RecoveryIncomplete {
        /// Bundle-relative path of the first unpublished write.
        path: String,
    },
    /// The receipt write (C14, or recovery's R8) failed after every write was published and
    /// verified, also in the in-process retry of §10.2 (spec/store.md §16 rule 1a). The
    /// journal stays; the exact replay stores the receipt once the cause is gone. Never
    /// success: a retryable `operation_rejected` with `receipt_not_stored`.
    #[error("the change is published but its receipt could not be stored")]
    ReceiptNotStored {
        /// Bundle-relative path of the receipt file (`.okf/receipts/<name>.json`).
        path: String,
    },
    /// Cancelled at a checkpoint before the boundary; this attempt's leftovers are removed.
    #[error("operation was cancelled")]
    Cancelled,
    /// The lock was not obtained within the timeout.
    #[error("bundle is locked by another writer")]
    LockTimeout,
    /// A staged or result limit (→ `resource_limit` with this message).
    #[error("{0}")]
    Limit(&'static str),
    /// A request-shaped refusal with its own tool error (`.okf` symlink, symlinked parent,
    /// capture faults under the lock).
    #[error("{}", .0.message)]
    Refused(ToolError),
    /// `operation_rejected` with a fixed message (folding collision, second filesystem,
    /// `.okf` not a directory, internal inconsistency).
    #[error("{0}")]
    Rejected(&'static str),
    /// A payload produced at C8 differs in size or digest from the authorised plan
    /// (spec/migration.md §12.5 rule 2); the attempt was abandoned before the boundary.
    #[error("a staged payload differs from the authorised plan")]
    PayloadMismatch,
    /// An I/O failure before the boundary (`operation_rejected`, README R30).
    #[error("private state I/O failed during {step}")]
    Io {
        /// The pipeline step that failed.
        step: &'static str,
        #[source]
        /// The underlying error.
        source: std::io::Error,
    },
    /// A failure after the boundary that one in-process retry did not repair (§10.2). The
    /// transaction is durable; `receipt` is the journal's receipt file and `journal` the
    /// journal's receipt object the tool compares it with (§12 step 3).
    #[error("transaction committed; completion deferred to the next store open")]
    Committed {
        /// The journal's receipt file.
        receipt: Box<ReceiptFile>,
        /// The journal's receipt object.
        journal: Box<Receipt>,
        #[source]
        /// The failure the retry did not repair.
        cause: Box<StoreError>,
    },
    /// A fault hook stopped the store as a process crash would (tests only).
    #[cfg(feature = "fault-injection")]
    #[error("simulated crash")]
    SimulatedCrash,
}

impl StoreError {
    /// A pre-boundary I/O error of `step`.
    pub fn io(step: &'static str) -> impl FnOnce(std::io::Error) -> StoreError {
        move |source| StoreError::Io { step, source }
    }
}

/// The §7 step 2 message for a private state path that is not a directory.
pub const NOT_A_DIRECTORY: &str = "private state path is not a directory";

/// The `step` of the folding probe's I/O errors (spec/store.md §7 step 4).
pub const PROBE_STEP: &str = "folding probe";
