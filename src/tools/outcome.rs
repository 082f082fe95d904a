//! The one mapping of store results to the wire (spec/store.md §10.4, §12, §12.1;
//! spec/surface.md §6.2; temporal.md §7): [`Flavor`] (which tool maps), the store error's
//! tool error ([`StoreError::to_tool_error`]) and the classification of a commit result
//! ([`classify`]). The store returns [`StoreError`] and names no tool.

use crate::digest;
use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::store::commit::{CommitOutcome, ReceiptSource};
use crate::store::error::{Corrupt, StoreError, NOT_A_DIRECTORY, PROBE_STEP};
use crate::store::outcome::{receipt_matches, Classified, ReceiptMatch};

/// How one tool's store errors read on the wire: the data each workflow supplies (its
/// `FLAVOR`; spec/surface.md §6.2, spec/store.md §12.1, temporal.md §7). The mapping itself
/// ([`StoreError::to_tool_error`]) is the same for every tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flavor {
    /// The tool, for messages of tests and logs only.
    pub tool: &'static str,
    /// The request field holding the authorised base revision (`""`: none, `write_concept`).
    pub revision_field: &'static str,
    /// The request field holding the authorised plan digest (`""`: none).
    pub digest_field: &'static str,
    /// The recovery step of a revision conflict.
    pub conflict_step: &'static str,
    /// `Some`: the tool reports store failures in its own fixed form (temporal.md §7).
    pub wrap: Option<&'static Wrap>,
}

/// The fixed error form of a tool whose spec words store failures itself (temporal.md §7
/// "anything else"): every failure becomes `operation_rejected` with [`Wrap::message`] and one
/// `ERROR` naming the cause code before the store's recovery step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrap {
    /// The message of every wrapped failure.
    pub message: &'static str,
    /// The recovery step of a revision conflict (on `revision_field`).
    pub conflict_step: &'static str,
    /// The message of a cancellation whose outcome is unknown.
    pub cancelled_message: &'static str,
    /// The message of a receipt that does not match the request.
    pub mismatch_message: &'static str,
    /// The field of the recovery step of an I/O failure.
    pub io_field: &'static str,
}

/// The recovery step of a revision conflict for a tool with a preview.
pub const PREVIEW_CONFLICT_STEP: &str = "The bundle revision changed. Run the matching preview again, review the new revision and plan, then apply with the new values.";

/// The message of a lock wait that timed out (spec/store.md §16 rule 4): never rewritten into
/// the generic cancellation by a tool.
pub const MSG_LOCKED: &str = "bundle is locked by another writer; retry the same call later";
const LOCKED_STEP: &str = "Nothing was changed: another writer held the bundle's store lock (.okf/lock) for the whole wait. Repeat the same call later; if no other okf-mcp process is running, check what holds .okf/lock.";
const CANCELLED_STEP: &str = "The outcome is not confirmed. Inspect the bundle, then repeat the same arguments so a stored receipt can resolve it, before building a new plan.";
const IDEMPOTENCY_STEP: &str = "A different request already committed under this plan. Preview again; never reuse a digest for changed arguments.";
const PLAN_STEP: &str =
    "Run the matching preview again with the same arguments and use its digest unchanged.";

fn blocked_step(path: &str, txn_id: &str, payload: &str) -> String {
    format!(
        "Restore {path} from .okf/staging/{txn_id}/{payload} (the planned result) or from version control (its earlier content), then repeat the same call; or delete .okf/transactions/{txn_id}.json to abandon the remaining writes (files already published stay; the root index.md is never ahead)."
    )
}

/// The message of a committed but not fully published change (spec/store.md §16 rule 1).
pub const MSG_UNPUBLISHED: &str = "the change is committed but not yet fully published";

/// Diagnostic code naming the first unpublished path (spec/store.md §16 rule 1).
pub const DIAG_UNPUBLISHED: &str = "publication_incomplete";

/// Message of [`StoreError::ReceiptNotStored`] (spec/store.md §16 rule 1a).
pub const MSG_RECEIPT_NOT_STORED: &str =
    "the change is published but its receipt could not be stored";

/// Diagnostic code naming the receipt that could not be stored (spec/store.md §16 rule 1a).
pub const DIAG_RECEIPT_NOT_STORED: &str = "receipt_not_stored";

/// The retryable `operation_rejected` of spec/store.md §16 rule 1a: message
/// [`MSG_RECEIPT_NOT_STORED`], one `ERROR` `receipt_not_stored` naming `path` (the
/// `.okf/receipts/…` file) and the recovery step. The same for every workflow.
#[must_use]
pub fn receipt_not_stored(path: &str) -> ToolError {
    let mut e = ToolError::new(codes::OPERATION_REJECTED, MSG_RECEIPT_NOT_STORED)
        .with_diagnostic(
            Diagnostic::new(
                DIAG_RECEIPT_NOT_STORED,
                Severity::Error,
                "every write is published, but the idempotency receipt is not stored",
            )
            .with_file(path),
        )
        .with_diagnostic(Diagnostic::recovery(
            "",
            "Make .okf/receipts writable, then repeat the same call: it stores the receipt and returns the result.",
        ));
    e.retryable = true;
    e
}

/// The `recovery_step` of [`MSG_UNPUBLISHED`] for `path` (spec/store.md §16 rule 1).
#[must_use]
pub fn unpublished_step(path: &str) -> String {
    format!("Fix what prevents writing {path} (permissions, read-only mount, disk space), then repeat the same call: it completes the publication and returns the stored result.")
}

/// The retryable `operation_rejected` of spec/store.md §16 rule 1: message
/// [`MSG_UNPUBLISHED`], one `ERROR` `publication_incomplete` naming `path`, and the recovery
/// step. The same for every workflow (no temporal wrapping: the caller's next step is the
/// same call).
#[must_use]
pub fn unpublished(path: &str) -> ToolError {
    let mut e = ToolError::new(codes::OPERATION_REJECTED, MSG_UNPUBLISHED)
        .with_diagnostic(
            Diagnostic::new(
                DIAG_UNPUBLISHED,
                Severity::Error,
                "a committed write is not visible yet",
            )
            .with_file(path),
        )
        .with_diagnostic(Diagnostic::recovery("", unpublished_step(path)));
    e.retryable = true;
    e
}

/// The `recovery_step` of an I/O failure at `path` (spec/store.md §16 rule 5), about the
/// fault `kind` names only (issue 25 item 5: a step never carries text about another fault).
fn io_step(path: &str, error: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    // ELOOP (a symlink under the symlink-refusing root) has no stable `ErrorKind`.
    let symlink = error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error());
    match error.kind() {
        _ if symlink => format!("Replace {path} with a plain directory or regular file (not a symlink, FIFO or socket), then repeat the same call."),
        K::PermissionDenied | K::ReadOnlyFilesystem => format!("Make {path} writable for okf-mcp (its permissions, an immutable attribute, a read-only mount), then repeat the same call."),
        K::StorageFull | K::QuotaExceeded => format!("Free disk space (bytes and inodes) on the filesystem of {path}, then repeat the same call."),
        // A file where a directory belongs, or the reverse.
        K::NotADirectory | K::IsADirectory | K::AlreadyExists => format!("Replace {path} with a plain directory or regular file (not a symlink, FIFO or socket), then repeat the same call."),
        K::NotFound => format!("{path} vanished while okf-mcp wrote it: stop whatever else moves files in the bundle, then repeat the same call."),
        K::Interrupted | K::TimedOut | K::WouldBlock => format!("Writing {path} was interrupted; repeat the same call."),
        _ => format!("Check that okf-mcp can write {path} and its filesystem is healthy, then repeat the same call."),
    }
}

/// Whether an I/O failure of `step` before the commit point is fixed from outside, so that
/// the same call then succeeds: the folding probe (its directory is not writable), a full
/// disk or quota (issue 25 items 3 and 5), and an interrupted or timed-out write.
fn io_retryable(step: &str, kind: std::io::ErrorKind) -> bool {
    use std::io::ErrorKind as K;
    step == PROBE_STEP
        || matches!(
            kind,
            K::StorageFull | K::QuotaExceeded | K::Interrupted | K::TimedOut | K::WouldBlock
        )
}

/// The `recovery_step` message of a corrupt journal or receipt (spec/store.md §10.4).
#[must_use]
pub fn corrupt_step(c: &Corrupt) -> String {
    match c {
        Corrupt::Journal { txn_id } => format!(
            "Delete .okf/transactions/{txn_id}.json to abandon the pending transaction (files already published stay; the root index.md is never ahead), then repeat the same call."
        ),
        Corrupt::Receipt { name } => format!(
            "Delete .okf/receipts/{name}.json (a damaged idempotency receipt; only the replay of that one request is lost), then repeat the same call."
        ),
    }
}

fn wrap_error(w: &Wrap, cause: &str, mut e: ToolError) -> ToolError {
    // temporal.md §7 "anything else": fixed message, one ERROR naming the cause code, plus
    // the store's recovery step.
    e.code = codes::OPERATION_REJECTED.to_owned();
    e.retryable = false;
    e.message = w.message.to_owned();
    e.diagnostics.insert(
        0,
        Diagnostic::new(cause, Severity::Error, "the bundle store refused the apply"),
    );
    e.diagnostics
        .retain(|d| d.code != "publication_blocked" || cause == "publication_blocked");
    e
}

/// The plan-mismatch error of a receipt that does not match the request (spec/store.md §12
/// steps 3–4).
#[must_use]
pub fn receipt_mismatch(flavor: Flavor) -> ToolError {
    match flavor.wrap {
        Some(w) => ToolError::new(codes::OPERATION_REJECTED, w.mismatch_message)
            .with_diagnostic(Diagnostic::recovery(flavor.digest_field, PLAN_STEP)),
        None => ToolError::new(
            codes::PLAN_MISMATCH,
            "stored receipt does not match the request",
        )
        .with_diagnostic(Diagnostic::recovery(flavor.digest_field, PLAN_STEP)),
    }
}

/// The corrupt-receipt error of spec/store.md §12 step 2 (`name` = receipt file stem), the
/// same in every tool (never wrapped).
#[must_use]
pub fn corrupt_receipt(name: &str) -> ToolError {
    corrupt(&Corrupt::Receipt {
        name: name.to_owned(),
    })
}

/// The error of a corrupt journal or receipt, before any wrapping (spec/store.md §10.4).
fn corrupt(c: &Corrupt) -> ToolError {
    let msg = match c {
        Corrupt::Journal { .. } => "pending transaction failed integrity validation",
        Corrupt::Receipt { .. } => "receipt failed integrity validation",
    };
    ToolError::new(codes::OPERATION_REJECTED, msg)
        .with_diagnostic(Diagnostic::recovery("", corrupt_step(c)))
}

impl StoreError {
    /// Maps the error to the wire (spec/store.md §12.1, §10.4; surface.md §6.2).
    ///
    /// `Committed` is not an error for the tool layer: pass it to
    /// [`classify`]; mapped directly it yields `operation_rejected`.
    #[must_use]
    pub fn to_tool_error(&self, flavor: Flavor) -> ToolError {
        let wrap = |cause: &str, e: ToolError| match flavor.wrap {
            Some(w) => wrap_error(w, cause, e),
            None => e,
        };
        match self {
            StoreError::Conflict { retryable } => {
                if let Some(w) = flavor.wrap {
                    return ToolError::new(codes::OPERATION_REJECTED, w.message).with_diagnostic(
                        Diagnostic::recovery(flavor.revision_field, w.conflict_step),
                    );
                }
                let mut e = ToolError::new(codes::REVISION_CONFLICT, "bundle revision changed")
                    .with_diagnostic(Diagnostic::recovery(
                        flavor.revision_field,
                        flavor.conflict_step,
                    ));
                e.retryable = *retryable;
                e
            }
            StoreError::IdempotencyConflict => ToolError::new(
                codes::IDEMPOTENCY_CONFLICT,
                "a different request already committed under this plan",
            )
            .with_diagnostic(Diagnostic::recovery(flavor.digest_field, IDEMPOTENCY_STEP)),
            StoreError::StorageCorrupt(c) => wrap("storage_corrupt", corrupt(c)),
            StoreError::RecoveryBlocked {
                path,
                txn_id,
                payload,
            }
            | StoreError::PublicationBlocked {
                path,
                txn_id,
                payload,
            } => {
                let msg = if matches!(self, StoreError::RecoveryBlocked { .. }) {
                    "pending transaction cannot be completed; a written file changed outside the store"
                } else {
                    "bundle changed during publication; transaction kept for recovery"
                };
                let e = ToolError::new(codes::OPERATION_REJECTED, msg)
                    .with_diagnostic(
                        Diagnostic::new(
                            "publication_blocked",
                            Severity::Error,
                            "a written file changed outside the store",
                        )
                        .with_file(path.clone()),
                    )
                    .with_diagnostic(Diagnostic::recovery(
                        "",
                        blocked_step(path, txn_id, payload),
                    ));
                if flavor.wrap.is_some() {
                    let mut t = wrap("publication_blocked", e);
                    t.diagnostics.remove(0);
                    t
                } else {
                    e
                }
            }
            StoreError::PublicationIncomplete { path }
            | StoreError::RecoveryIncomplete { path } => unpublished(path),
            StoreError::ReceiptNotStored { path } => receipt_not_stored(path),
            StoreError::Cancelled => {
                let msg = flavor
                    .wrap
                    .map_or("operation was cancelled", |w| w.cancelled_message);
                ToolError::new(codes::OPERATION_CANCELLED, msg)
                    .with_diagnostic(Diagnostic::recovery(flavor.revision_field, CANCELLED_STEP))
            }
            StoreError::LockTimeout => ToolError::new(codes::OPERATION_CANCELLED, MSG_LOCKED)
                .with_diagnostic(Diagnostic::recovery(flavor.revision_field, LOCKED_STEP)),
            StoreError::PayloadMismatch => {
                let e = ToolError::new(
                    codes::PLAN_MISMATCH,
                    "a staged payload differs from the authorised plan",
                )
                .with_diagnostic(Diagnostic::recovery(flavor.digest_field, PLAN_STEP));
                wrap("plan_mismatch", e)
            }
            StoreError::Limit(m) => ToolError::resource_limit(*m),
            StoreError::Refused(e) => e.clone(),
            StoreError::Rejected(m) => {
                let e = ToolError::new(codes::OPERATION_REJECTED, *m);
                // `.okf` not a directory maps as spec/store.md §7 step 2 in every tool.
                if *m == NOT_A_DIRECTORY {
                    e
                } else {
                    wrap("operation_rejected", e)
                }
            }
            StoreError::Io { step, source } => {
                // spec/store.md §16 rule 5: the path the failure concerns, and a next step.
                let path = crate::store::durable::path_of(source).filter(|p| !p.is_empty());
                let reason = std::error::Error::source(source)
                    .map_or_else(|| source.to_string(), ToString::to_string);
                let kind = source.kind();
                // One wording in every workflow (issue 25 item 5); a wrapping tool keeps its
                // recovery step on its own field (temporal.md §7: `bundle_path`).
                let field = flavor.wrap.map_or("", |w| w.io_field);
                let mut e = match path {
                    Some(p) => ToolError::new(
                        codes::OPERATION_REJECTED,
                        format!("bundle store could not be written: {p}: {reason}"),
                    )
                    .with_diagnostic(Diagnostic::recovery(field, io_step(p, source))),
                    None => ToolError::new(
                        codes::OPERATION_REJECTED,
                        "bundle store could not be written",
                    )
                    .with_diagnostic(Diagnostic::recovery(
                        field,
                        io_step("the bundle directory or its .okf/", source),
                    )),
                };
                e.retryable = io_retryable(step, kind);
                e
            }
            StoreError::Committed { .. } => ToolError::new(
                codes::OPERATION_REJECTED,
                "transaction committed but its receipt could not be confirmed",
            ),
            #[cfg(feature = "fault-injection")]
            StoreError::SimulatedCrash => {
                ToolError::new(codes::OPERATION_REJECTED, "simulated crash")
            }
        }
    }
}

/// Code of the `INFO` notice of the commit that created `.okf/` (issue 21 papercut: the first
/// apply must not create it silently).
pub const STORE_CREATED: &str = "store_created";

/// Says, as a notice of the call, that `result` created `.okf/` with its `.gitignore`.
pub fn notice_store_created(result: &Result<CommitOutcome, StoreError>) {
    if matches!(result, Ok(o) if o.created_store) {
        crate::notices::push(Diagnostic::new(
            STORE_CREATED,
            Severity::Info,
            "this first commit created .okf/ in the bundle root (transactions, receipts; its .gitignore keeps it out of git): keep it, an exact replay answers from it",
        ));
    }
}

/// Classifies a store result for an apply tool (spec/store.md §12 steps 1–5, OUT-01).
///
/// # Errors
/// The mapped store error (§12.1); `operation_rejected` for an invalid receipt;
/// the flavour's plan-mismatch error for a receipt that is not the journal's or does not
/// match the request.
pub fn classify(
    result: Result<CommitOutcome, StoreError>,
    expected: &ReceiptMatch,
    flavor: Flavor,
) -> Result<Classified, ToolError> {
    let (receipt, replayed, journal) = match result {
        Ok(CommitOutcome {
            receipt, source, ..
        }) => {
            let replayed = match source {
                ReceiptSource::Committed => None,
                ReceiptSource::Replayed(b) => Some(b),
            };
            (receipt, replayed, None)
        }
        Err(StoreError::Committed {
            receipt, journal, ..
        }) => (*receipt, None, Some(*journal)),
        Err(e) => return Err(e.to_tool_error(flavor)),
    };
    // Step 2: §8.1 rules (corruption beats every other cause).
    if receipt.validate().is_err() {
        return Err(corrupt_receipt(&digest::receipt_name(&receipt.key)));
    }
    // Step 3.
    if let Some(j) = journal {
        if receipt.receipt != j || receipt.key != j.idempotency_key {
            return Err(receipt_mismatch(flavor));
        }
    }
    // Step 4.
    if !receipt_matches(&receipt, expected) {
        return Err(receipt_mismatch(flavor));
    }
    let noop = receipt.receipt.base_revision == receipt.receipt.result_revision;
    Ok(Classified {
        receipt,
        noop,
        replayed,
    })
}

#[cfg(test)]
mod store_error_tests {
    use super::*;

    #[test]
    fn blocked_and_corrupt_messages_name_the_files_and_survive_redaction() {
        let e = StoreError::PublicationBlocked {
            path: "tables/orders.md".into(),
            txn_id: "txn-ab".into(),
            payload: "payload-00001".into(),
        }
        .to_tool_error(crate::tools::concept_patch::FLAVOR);
        let w = e.to_wire();
        assert_eq!(w["code"], "operation_rejected");
        assert_eq!(w["retryable"], false);
        assert_eq!(
            w["message"],
            "bundle changed during publication; transaction kept for recovery"
        );
        assert_eq!(w["diagnostics"][0]["code"], "publication_blocked");
        assert_eq!(w["diagnostics"][0]["file"], "tables/orders.md");
        assert_eq!(w["diagnostics"][1]["code"], "recovery_step");
        let step = w["diagnostics"][1]["message"].as_str().unwrap_or_default();
        assert!(step.starts_with("Restore tables/orders.md from .okf/staging/txn-ab/payload-00001 (the planned result)"), "{step}");
        assert!(step.contains("delete .okf/transactions/txn-ab.json"));
        let c = StoreError::StorageCorrupt(Corrupt::Receipt { name: "ff".into() })
            .to_tool_error(crate::tools::concept_patch::FLAVOR)
            .to_wire();
        assert_eq!(c["message"], "receipt failed integrity validation");
        assert_eq!(
            c["diagnostics"][0]["message"],
            "Delete .okf/receipts/ff.json (a damaged idempotency receipt; only the replay of that one request is lost), then repeat the same call."
        );
    }

    #[test]
    fn sto_16_unpublished_is_retryable_rejected_with_the_path_in_every_flavor() {
        for flavor in [
            crate::tools::concept_patch::FLAVOR,
            crate::tools::migration::FLAVOR,
            crate::tools::temporal_upgrade::FLAVOR,
            crate::tools::write_concept::FLAVOR,
        ] {
            for e in [
                StoreError::PublicationIncomplete {
                    path: "tables/orders.md".into(),
                },
                StoreError::RecoveryIncomplete {
                    path: "tables/orders.md".into(),
                },
            ] {
                let w = e.to_tool_error(flavor).to_wire();
                assert_eq!(w["code"], "operation_rejected", "{flavor:?}");
                assert_eq!(w["retryable"], true, "{flavor:?}");
                assert_eq!(w["message"], MSG_UNPUBLISHED);
                assert_eq!(w["diagnostics"][0]["code"], DIAG_UNPUBLISHED);
                assert_eq!(w["diagnostics"][0]["severity"], "ERROR");
                assert_eq!(w["diagnostics"][0]["file"], "tables/orders.md");
                assert_eq!(w["diagnostics"][1]["code"], "recovery_step");
                assert_eq!(
                    w["diagnostics"][1]["message"],
                    unpublished_step("tables/orders.md")
                );
            }
        }
    }

    #[test]
    fn sto_22_receipt_not_stored_is_retryable_rejected_with_the_receipt_path_in_every_flavor() {
        for flavor in [
            crate::tools::concept_patch::FLAVOR,
            crate::tools::migration::FLAVOR,
            crate::tools::temporal_upgrade::FLAVOR,
            crate::tools::write_concept::FLAVOR,
        ] {
            let e = StoreError::ReceiptNotStored {
                path: ".okf/receipts/ab.json".into(),
            };
            let w = e.to_tool_error(flavor).to_wire();
            assert_eq!(w["code"], "operation_rejected", "{flavor:?}");
            assert_eq!(w["retryable"], true, "{flavor:?}");
            assert_eq!(w["message"], MSG_RECEIPT_NOT_STORED);
            assert_eq!(w["diagnostics"][0]["code"], DIAG_RECEIPT_NOT_STORED);
            assert_eq!(w["diagnostics"][0]["severity"], "ERROR");
            assert_eq!(w["diagnostics"][0]["file"], ".okf/receipts/ab.json");
            assert_eq!(w["diagnostics"][1]["code"], "recovery_step");
        }
    }

    /// Issue 25 item 5: each I/O kind's recovery step speaks only of its own fault: no
    /// disk-space text on a permission fault, no symlink text on a full disk, and so on.
    #[test]
    fn each_io_kind_has_a_step_about_its_own_fault_only() {
        use std::io::ErrorKind as K;
        let topics = [
            "writable",
            "disk space",
            "symlink",
            "vanished",
            "interrupted",
        ];
        let cases = [
            (K::PermissionDenied, "writable"),
            (K::ReadOnlyFilesystem, "writable"),
            (K::StorageFull, "disk space"),
            (K::QuotaExceeded, "disk space"),
            (K::NotADirectory, "symlink"),
            (K::IsADirectory, "symlink"),
            (K::AlreadyExists, "symlink"),
            (K::NotFound, "vanished"),
            (K::Interrupted, "interrupted"),
            (K::TimedOut, "interrupted"),
            (K::Other, ""),
            (K::InvalidData, ""),
        ];
        let symlink = std::io::Error::from_raw_os_error(rustix::io::Errno::LOOP.raw_os_error());
        assert!(io_step(".okf/x", &symlink).starts_with("Replace .okf/x with a plain directory"));
        for (kind, own) in cases {
            let step = io_step(".okf/receipts/r.json", &std::io::Error::from(kind));
            assert!(step.contains(".okf/receipts/r.json"), "{kind:?}: {step}");
            assert!(step.ends_with("repeat the same call."), "{kind:?}: {step}");
            for topic in topics {
                assert_eq!(
                    step.contains(topic),
                    topic == own,
                    "{kind:?} and {topic:?}: {step}"
                );
            }
        }
    }

    #[test]
    fn store_io_errors_read_the_same_in_every_flavor_and_their_step_speaks_of_their_fault() {
        use std::io::{Error, ErrorKind};
        let at = |kind: ErrorKind, step: &'static str| StoreError::Io {
            step,
            source: crate::store::durable::at_path(Error::from(kind), ".okf/staging/x"),
        };
        for flavor in [
            crate::tools::concept_patch::FLAVOR,
            crate::tools::migration::FLAVOR,
            crate::tools::temporal_upgrade::FLAVOR,
            crate::tools::write_concept::FLAVOR,
        ] {
            let full = at(ErrorKind::StorageFull, "stage").to_tool_error(flavor);
            assert!(
                full.message
                    .starts_with("bundle store could not be written: .okf/staging/x: "),
                "{flavor:?}: {}",
                full.message
            );
            assert!(full.retryable, "{flavor:?}: a full disk clears");
            assert_eq!(
                full.diagnostics[0].message,
                "Free disk space (bytes and inodes) on the filesystem of .okf/staging/x, then repeat the same call."
            );
            let denied = at(ErrorKind::PermissionDenied, "stage").to_tool_error(flavor);
            assert!(!denied.retryable, "{flavor:?}");
            assert!(
                denied.diagnostics[0]
                    .message
                    .starts_with("Make .okf/staging/x writable")
                    && !denied.diagnostics[0].message.contains("symlink"),
                "{flavor:?}: {}",
                denied.diagnostics[0].message
            );
            let probe = at(ErrorKind::PermissionDenied, PROBE_STEP).to_tool_error(flavor);
            assert!(
                probe.retryable,
                "{flavor:?}: the probe's directory is fixed from outside"
            );
        }
    }

    #[test]
    fn codes_and_retryability_follow_12_1() {
        let conflict = StoreError::Conflict { retryable: true };
        let e = conflict.to_tool_error(crate::tools::concept_patch::FLAVOR);
        assert_eq!((e.code.as_str(), e.retryable), ("revision_conflict", true));
        assert_eq!(e.diagnostics[0].field, "expected_revision");
        let e = conflict.to_tool_error(crate::tools::temporal_upgrade::FLAVOR);
        assert_eq!(
            (e.code.as_str(), e.retryable),
            ("operation_rejected", false)
        );
        let e = StoreError::LockTimeout.to_tool_error(crate::tools::migration::FLAVOR);
        assert_eq!(
            (e.code.as_str(), e.retryable),
            ("operation_cancelled", true)
        );
        assert_eq!(
            e.message,
            "bundle is locked by another writer; retry the same call later"
        );
        assert_eq!(e.diagnostics[0].field, "proof.base_revision");
        assert!(e.diagnostics[0].message.starts_with("Nothing was changed"));
        let e = StoreError::Rejected(NOT_A_DIRECTORY)
            .to_tool_error(crate::tools::temporal_upgrade::FLAVOR);
        assert_eq!(e.message, NOT_A_DIRECTORY);
        let e = StoreError::Rejected("bundle spans more than one filesystem")
            .to_tool_error(crate::tools::temporal_upgrade::FLAVOR);
        assert_eq!(e.message, "temporal upgrade apply failed");
        let e =
            StoreError::IdempotencyConflict.to_tool_error(crate::tools::temporal_upgrade::FLAVOR);
        assert_eq!(
            (e.code.as_str(), e.retryable),
            ("idempotency_conflict", false)
        );
        let e = StoreError::Limit("x").to_tool_error(crate::tools::write_concept::FLAVOR);
        assert_eq!(e.code, "resource_limit");
        let e = StoreError::Io {
            step: "stage",
            source: std::io::Error::other("x"),
        }
        .to_tool_error(crate::tools::concept_patch::FLAVOR);
        assert_eq!(
            (e.code.as_str(), e.retryable),
            ("operation_rejected", false)
        );
    }
}

#[cfg(test)]
mod classify_tests {
    use super::*;
    use crate::plan::migration::request::Proof;
    use crate::store::commit::ReplayBasis;
    use crate::store::receipt::tests::sample;
    use crate::store::receipt::{ChangedFile, ReceiptFile};

    fn key() -> String {
        format!("okf-plan-v1-{}", "a".repeat(64))
    }

    fn expected() -> ReceiptMatch {
        let r = sample(&key());
        ReceiptMatch {
            change_set_id: r.receipt.change_set_id.clone(),
            idempotency_key: key(),
            request_digest: r.digest.clone(),
            base_revision: Some(r.receipt.base_revision.clone()),
        }
    }

    fn ok(r: ReceiptFile) -> Result<CommitOutcome, StoreError> {
        Ok(CommitOutcome {
            receipt: r,
            source: ReceiptSource::Committed,
            created_store: false,
        })
    }

    fn committed(r: ReceiptFile, cause: StoreError) -> Result<CommitOutcome, StoreError> {
        let j = r.receipt.clone();
        Err(StoreError::Committed {
            receipt: Box::new(r),
            journal: Box::new(j),
            cause: Box::new(cause),
        })
    }

    fn code(r: Result<Classified, ToolError>) -> (String, bool) {
        match r {
            Ok(s) => (if s.noop { "noop" } else { "applied" }.to_owned(), false),
            Err(e) => (e.code, e.retryable),
        }
    }

    #[test]
    fn out_01_classifier_matrix() {
        classifier_matrix(crate::tools::concept_patch::FLAVOR, &expected());
    }

    /// The proof of a migration whose commit stored [`sample`]'s fields: its base and result
    /// revisions, its two written files and its refs in the proof's order.
    fn migration_proof() -> Proof {
        let r = sample(&key());
        let hex = |c: char| c.to_string().repeat(64);
        Proof {
            format_version: 2,
            request_digest: r.digest.clone(),
            resolution_digest: format!("sha256:{}", hex('4')),
            base_revision: r.receipt.base_revision.clone(),
            result_revision: r.receipt.result_revision.clone(),
            reads: vec!["index.md".into(), "tables/orders.md".into()],
            writes: vec![
                ("index.md".into(), hex('5')),
                ("tables/orders.md".into(), hex('6')),
            ],
            deletes: Vec::new(),
            renames: Vec::new(),
            affected_refs: vec!["tables/orders#a".into(), "tables/orders".into()],
            reverse_impact: Vec::new(),
            changed_files: vec![
                ("write".into(), "index.md".into(), String::new()),
                ("write".into(), "tables/orders.md".into(), String::new()),
            ],
            changed_refs: vec!["tables/orders#a".into(), "tables/orders".into()],
        }
    }

    /// The key of an apply authorised by `p`: derived from its plan digest
    /// (spec/migration.md §7.4).
    fn proof_key(p: &Proof) -> String {
        digest::idempotency_key(
            crate::plan::migration::identity::NAMESPACE,
            &crate::plan::migration::identity::plan_digest(p),
        )
        .expect("key")
    }

    /// The receipt the commit of `p` stores: [`sample`] under `p`'s key with `p`'s result
    /// revision, files and refs (in the receipt's own orders, spec/store.md §8.1).
    fn receipt_of(p: &Proof) -> ReceiptFile {
        let mut r = sample(&proof_key(p));
        r.receipt.result_revision.clone_from(&p.result_revision);
        let mut files: Vec<ChangedFile> = p
            .changed_files
            .iter()
            .map(|(kind, path, from)| ChangedFile {
                kind: kind.clone(),
                path: path.clone(),
                from: from.clone(),
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        r.receipt.changed_files = files;
        let mut refs = p.changed_refs.clone();
        let ref_order = |r: &String| {
            let (id, fragment) = r.split_once('#').map_or((r.clone(), None), |(i, f)| {
                (i.to_owned(), Some(f.to_owned()))
            });
            (id, fragment)
        };
        refs.sort_by_key(ref_order);
        r.receipt.changed_refs = refs;
        r.validate().expect("a valid receipt");
        r
    }

    /// The authorisation of a migration apply by `p`: the patch fields under `p`'s key. The
    /// proof's result revision, file order and ref set (spec/store.md §12.2, spec/migration.md
    /// §9 F) are bound through the key: it is derived from the plan digest, which covers them.
    fn migration_expected(p: &Proof) -> ReceiptMatch {
        ReceiptMatch {
            idempotency_key: proof_key(p),
            ..expected()
        }
    }

    #[test]
    fn mig_28_classifier_matrix_for_migration() {
        let p = crate::tools::migration::FLAVOR;
        let proof = migration_proof();
        let e = migration_expected(&proof);
        classifier_matrix(p, &e);
        // The proof's own match fields: a receipt whose result revision, file order, file
        // count or ref set differs from the authorised proof's is the receipt of another
        // proof, whose plan digest (and so key) differs; alone it is a plan mismatch, also
        // when the receipt is committed and the cause a cancellation or conflict.
        let mut result = proof.clone();
        result.result_revision = format!("sha256:{}", "9".repeat(64));
        let mut order = proof.clone();
        order.changed_files.reverse();
        let mut fewer = proof.clone();
        fewer.changed_files.truncate(1);
        let mut refs = proof.clone();
        refs.changed_refs = vec!["tables/orders".into()];
        for (what, other) in [
            ("result_revision", &result),
            ("changed_files order", &order),
            ("changed_files count", &fewer),
            ("changed_refs set", &refs),
        ] {
            assert_ne!(
                crate::plan::migration::identity::plan_digest(other),
                crate::plan::migration::identity::plan_digest(&proof),
                "the plan digest covers {what}"
            );
            let theirs = receipt_of(other);
            for r in [
                ok(theirs.clone()),
                committed(theirs.clone(), StoreError::Cancelled),
                committed(theirs.clone(), StoreError::Conflict { retryable: true }),
            ] {
                let err = classify(r, &e, p).expect_err(what);
                assert_eq!(err.code, "plan_mismatch", "{what}");
                assert!(!err.retryable, "{what}");
                assert_eq!(
                    err.diagnostics.first().map(|d| d.field.as_str()),
                    Some("expected_plan_digest"),
                    "{what}: the recovery step names the migration's digest field"
                );
            }
        }
        // The ref set is compared as a set: the proof's order does not matter (the receipt
        // keeps the ref order of spec/store.md §5 rule 4).
        assert_eq!(code(classify(ok(receipt_of(&proof)), &e, p)).0, "applied");
        let mut reordered = proof.clone();
        reordered.changed_refs.reverse();
        assert_eq!(
            code(classify(
                ok(receipt_of(&reordered)),
                &migration_expected(&reordered),
                p
            ))
            .0,
            "applied"
        );
        // The migration's recovery fields on retryable outcomes.
        let conflict =
            classify(Err(StoreError::Conflict { retryable: true }), &e, p).expect_err("conflict");
        assert_eq!(conflict.code, "revision_conflict");
        assert_eq!(
            conflict.diagnostics.first().map(|d| d.field.as_str()),
            Some("proof.base_revision")
        );
    }

    /// The OUT-01 matrix for `flavor`, whose authorisation `e` matches [`sample`].
    fn classifier_matrix(p: Flavor, e: &ReceiptMatch) {
        let good = sample(&e.idempotency_key);
        assert_eq!(code(classify(ok(good.clone()), e, p)).0, "applied");
        let mut noop = good.clone();
        noop.receipt
            .result_revision
            .clone_from(&noop.receipt.base_revision);
        // A noop receipt matches an authorisation of the same noop.
        assert_eq!(code(classify(ok(noop), e, p)).0, "noop");
        for cause in [
            StoreError::Cancelled,
            StoreError::Io {
                step: "x",
                source: std::io::Error::other("x"),
            },
            StoreError::Conflict { retryable: true },
            StoreError::Rejected("close failure"),
        ] {
            assert_eq!(
                code(classify(committed(good.clone(), cause), e, p)).0,
                "applied"
            );
        }
        assert_eq!(
            code(classify(Err(StoreError::Cancelled), e, p)),
            ("operation_cancelled".to_owned(), true)
        );
        assert_eq!(
            code(classify(
                Err(StoreError::Conflict { retryable: true }),
                e,
                p
            )),
            ("revision_conflict".to_owned(), true)
        );
        // Invalid receipt, alone or with cancel / conflict causes.
        let mut invalid = good.clone();
        invalid.receipt.result_revision = format!("sha256:{}", "A".repeat(64));
        assert_eq!(
            code(classify(ok(invalid.clone()), e, p)).0,
            "operation_rejected"
        );
        for cause in [
            StoreError::Cancelled,
            StoreError::Conflict { retryable: true },
        ] {
            let r = classify(committed(invalid.clone(), cause), e, p);
            let err = r.expect_err("error");
            assert_eq!(err.code, "operation_rejected");
            assert_eq!(err.message, "receipt failed integrity validation");
            assert!(!err.retryable, "corruption beats cancellation");
        }
        // Receipt differing from the journal's only in commit_time.
        let mut other_time = good.clone();
        other_time.receipt.commit_time = "2026-07-01T12:00:00.000000001Z".into();
        let j = good.receipt.clone();
        let r = classify(
            Err(StoreError::Committed {
                receipt: Box::new(other_time),
                journal: Box::new(j),
                cause: Box::new(StoreError::Conflict { retryable: true }),
            }),
            e,
            p,
        );
        assert_eq!(
            code(r),
            ("plan_mismatch".to_owned(), false),
            "plan mismatch beats conflict"
        );
        // Foreign change_set_id.
        let mut foreign = good.clone();
        foreign.receipt.change_set_id = "mcp-patch-other".into();
        assert_eq!(code(classify(ok(foreign), e, p)).0, "plan_mismatch");
        // Corruption beats everything in the error list.
        let c = StoreError::StorageCorrupt(crate::store::error::Corrupt::Journal {
            txn_id: "txn-x".into(),
        });
        assert_eq!(code(classify(Err(c), e, p)).0, "operation_rejected");
        assert_eq!(
            code(classify(Err(StoreError::IdempotencyConflict), e, p)).0,
            "idempotency_conflict"
        );
    }

    #[test]
    fn replay_source_is_reported_and_write_concept_ignores_base() {
        let mut e = expected();
        let good = sample(&key());
        let r = classify(
            Ok(CommitOutcome {
                receipt: good.clone(),
                source: ReceiptSource::Replayed(ReplayBasis::Undone),
                created_store: false,
            }),
            &e,
            crate::tools::concept_patch::FLAVOR,
        )
        .expect("success");
        assert_eq!(r.replayed, Some(ReplayBasis::Undone));
        assert_eq!(r.changed_paths(), ["index.md", "tables/orders.md"]);
        e.base_revision = Some(format!("sha256:{}", "9".repeat(64)));
        assert!(!receipt_matches(&good, &e));
        e.base_revision = None;
        assert!(receipt_matches(&good, &e));
    }

    #[test]
    fn migration_match_checks_file_order_and_ref_set() {
        let proof = migration_proof();
        let good = receipt_of(&proof);
        let e = migration_expected(&proof);
        assert!(receipt_matches(&good, &e));
        // The receipt of the same files in another proof order.
        let mut order = proof.clone();
        order.changed_files.reverse();
        let theirs = receipt_of(&order);
        assert!(!receipt_matches(&theirs, &e));
        let r = classify(ok(theirs), &e, crate::tools::migration::FLAVOR);
        assert_eq!(code(r).0, "plan_mismatch");
    }
}
