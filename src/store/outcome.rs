//! The receipt-to-request match (spec/store.md §12.2) and a classified outcome; the
//! classification itself, which maps to tool errors, is `tools::outcome::classify`.

use crate::store::commit::ReplayBasis;
use crate::store::receipt::ReceiptFile;

/// The authorised request a receipt must match (spec/store.md §12.2).
///
/// It names no workflow: what a workflow needs bound beyond these fields rides in the key and
/// the request digest, which the workflow derives (`docs/store.md` §5, "Receipts bind a
/// request"). The migration's `result_revision`, `changed_files` (in order) and
/// `changed_refs` of §12.2 are covered by its plan digest, from which the key is derived, and
/// its caller binding (spec/migration.md §12.7 rule 4a) is its request digest.
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
}

/// Whether `r` matches the authorised request (spec/store.md §12.2).
#[must_use]
pub fn receipt_matches(r: &ReceiptFile, e: &ReceiptMatch) -> bool {
    let x = &r.receipt;
    let base_ok = e
        .base_revision
        .as_ref()
        .is_none_or(|b| *b == x.base_revision);
    x.change_set_id == e.change_set_id
        && x.idempotency_key == e.idempotency_key
        && r.key == e.idempotency_key
        && x.request_digest == e.request_digest
        && base_ok
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
