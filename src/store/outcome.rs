//! Outcome classification and the receipt-to-request match (spec/store.md §12, §12.2).
//! Pure functions of a store result and the authorised request.

use crate::digest;
use crate::envelope::ToolError;
use crate::store::commit::{CommitOutcome, ReceiptSource, ReplayBasis};
use crate::store::error::{corrupt_receipt, receipt_mismatch, Flavor, StoreError};
use crate::store::receipt::ReceiptFile;

/// The authorised request a receipt must match (spec/store.md §12.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReceiptMatch {
    /// The change set id.
    pub change_set_id: String,
    /// The derived key (or the `write_concept` change id).
    pub idempotency_key: String,
    /// The recomputed request digest.
    pub request_digest: String,
    /// `None` for `write_concept` (a replay from a later base is accepted).
    pub base_revision: Option<String>,
    /// Migration only: `proof.result_revision`.
    pub result_revision: Option<String>,
    /// Migration only: `proof.changed_files`, compared **in order** with the receipt's paths.
    pub changed_files: Option<Vec<String>>,
    /// Migration only: `proof.changed_refs`, compared as a set.
    pub changed_refs: Option<Vec<String>>,
}

/// Whether `r` matches the authorised request (spec/store.md §12.2).
#[must_use]
pub fn receipt_matches(r: &ReceiptFile, e: &ReceiptMatch) -> bool {
    let x = &r.receipt;
    let base_ok = e
        .base_revision
        .as_ref()
        .is_none_or(|b| *b == x.base_revision);
    let result_ok = e
        .result_revision
        .as_ref()
        .is_none_or(|b| *b == x.result_revision);
    let files_ok = e.changed_files.as_ref().is_none_or(|f| {
        f.len() == x.changed_files.len()
            && f.iter().zip(&x.changed_files).all(|(a, b)| *a == b.path)
    });
    let refs_ok = e.changed_refs.as_ref().is_none_or(|refs| {
        let a: std::collections::BTreeSet<&String> = refs.iter().collect();
        let b: std::collections::BTreeSet<&String> = x.changed_refs.iter().collect();
        a == b
    });
    x.change_set_id == e.change_set_id
        && x.idempotency_key == e.idempotency_key
        && r.key == e.idempotency_key
        && x.request_digest == e.request_digest
        && base_ok
        && result_ok
        && files_ok
        && refs_ok
}

/// A successful classification (spec/store.md §12 step 5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// The validated, matching receipt.
    pub receipt: ReceiptFile,
    /// `noop` when the receipt's base equals its result (`concept-patch.md` §6.2 step 8).
    pub noop: bool,
    /// `Some` when the answer came from a lookup hit: the `receipt_replayed` basis.
    pub replayed: Option<ReplayBasis>,
}

impl Classified {
    /// `changed_paths` of the tool outputs: the union of `changed_files[].path` and non-empty
    /// `from`, ascending (`concept-patch.md` §5.2).
    #[must_use]
    pub fn changed_paths(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for f in &self.receipt.receipt.changed_files {
            v.push(f.path.clone());
            if !f.from.is_empty() {
                v.push(f.from.clone());
            }
        }
        v.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        v.dedup();
        v
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
        Ok(CommitOutcome { receipt, source }) => {
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
mod tests {
    use super::*;
    use crate::store::receipt::tests::sample;

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
            ..ReceiptMatch::default()
        }
    }

    fn ok(r: ReceiptFile) -> Result<CommitOutcome, StoreError> {
        Ok(CommitOutcome {
            receipt: r,
            source: ReceiptSource::Committed,
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
        classifier_matrix(Flavor::ConceptPatch, &expected());
    }

    /// The authorisation of a migration apply whose receipt is [`sample`]: the patch fields
    /// plus the proof's result revision, file order and ref set (spec/migration.md §9 F).
    fn migration_expected() -> ReceiptMatch {
        let r = sample(&key());
        ReceiptMatch {
            result_revision: Some(r.receipt.result_revision.clone()),
            changed_files: Some(vec!["index.md".into(), "tables/orders.md".into()]),
            changed_refs: Some(vec!["tables/orders#a".into(), "tables/orders".into()]),
            ..expected()
        }
    }

    #[test]
    fn mig_28_classifier_matrix_for_migration() {
        let p = Flavor::Migration;
        let e = migration_expected();
        classifier_matrix(p, &e);
        let good = sample(&key());
        // The migration's own match fields: each mismatch alone is a plan mismatch, also
        // when the receipt is committed and the cause a cancellation or conflict.
        let mut result = e.clone();
        result.result_revision = Some(format!("sha256:{}", "9".repeat(64)));
        let mut order = e.clone();
        order.changed_files = Some(vec!["tables/orders.md".into(), "index.md".into()]);
        let mut fewer = e.clone();
        fewer.changed_files = Some(vec!["index.md".into()]);
        let mut refs = e.clone();
        refs.changed_refs = Some(vec!["tables/orders".into()]);
        for (what, m) in [
            ("result_revision", &result),
            ("changed_files order", &order),
            ("changed_files count", &fewer),
            ("changed_refs set", &refs),
        ] {
            for r in [
                ok(good.clone()),
                committed(good.clone(), StoreError::Cancelled),
                committed(good.clone(), StoreError::Conflict { retryable: true }),
            ] {
                let err = classify(r, m, p).expect_err(what);
                assert_eq!(err.code, "plan_mismatch", "{what}");
                assert!(!err.retryable, "{what}");
                assert_eq!(
                    err.diagnostics.first().map(|d| d.field.as_str()),
                    Some("expected_plan_digest"),
                    "{what}: the recovery step names the migration's digest field"
                );
            }
        }
        // The ref set is compared as a set: the proof's order does not matter.
        let mut reordered = e.clone();
        reordered.changed_refs = Some(vec!["tables/orders".into(), "tables/orders#a".into()]);
        assert_eq!(code(classify(ok(good), &reordered, p)).0, "applied");
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
        let good = sample(&key());
        assert_eq!(code(classify(ok(good.clone()), e, p)).0, "applied");
        let mut noop = good.clone();
        noop.receipt
            .result_revision
            .clone_from(&noop.receipt.base_revision);
        // A noop receipt matches an authorisation of the same noop (for the migration, whose
        // proof names the result revision: result = base).
        let mut noop_auth = e.clone();
        if noop_auth.result_revision.is_some() {
            noop_auth.result_revision = Some(noop.receipt.base_revision.clone());
        }
        assert_eq!(code(classify(ok(noop), &noop_auth, p)).0, "noop");
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
            }),
            &e,
            Flavor::ConceptPatch,
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
        let good = sample(&key());
        let mut e = expected();
        e.result_revision = Some(good.receipt.result_revision.clone());
        e.changed_files = Some(vec!["index.md".into(), "tables/orders.md".into()]);
        e.changed_refs = Some(vec!["tables/orders#a".into(), "tables/orders".into()]);
        assert!(receipt_matches(&good, &e));
        e.changed_files = Some(vec!["tables/orders.md".into(), "index.md".into()]);
        assert!(!receipt_matches(&good, &e));
        let r = classify(ok(good), &e, Flavor::Migration);
        assert_eq!(code(r).0, "plan_mismatch");
    }
}
