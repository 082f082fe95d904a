//! The journal: the durable statement of intent (spec/store.md §9). Pure format, construction
//! and validity conditions; the I/O is in [`crate::store::commit`] / [`crate::store::recovery`].

use crate::digest::{self, REPLACE_KEY_PREFIX};
use crate::plan::stream::PlannedWrite;
use crate::store::receipt::{self, ChangedFile, Invalid, Receipt, ReceiptFile};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `base` entry: `{path, size, digest}` (bare 64-hex digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaseEntry {
    /// Bundle-relative path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// 64 lowercase hex of `H(bytes)`.
    pub digest: String,
}

/// A `writes` entry: `{path, payload, size, digest}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteEntry {
    /// Bundle-relative target path.
    pub path: String,
    /// `payload-NNNNN`, numbered in publish order.
    pub payload: String,
    /// Size of the new bytes.
    pub size: u64,
    /// 64 lowercase hex of `H(new bytes)`.
    pub digest: String,
}

/// The journal file `.okf/transactions/<txn-id>.json` (spec/store.md §9).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Journal {
    /// Envelope version, `1`.
    pub version: u64,
    /// `txn-<hex>` (spec/store.md §6.2).
    pub txn_id: String,
    /// Always `sha256`.
    pub hash_algorithm: String,
    /// The request digest (§4).
    pub request_digest: String,
    /// The idempotency key (§6.1).
    pub idempotency_key: String,
    /// Revision of `base`.
    pub base_revision: String,
    /// Revision of `base` with `writes` applied.
    pub result_revision: String,
    /// The full base manifest, sorted by path.
    pub base: Vec<BaseEntry>,
    /// The §9 base binding digest.
    pub base_binding: String,
    /// Publish order: ascending path bytes, root `index.md` last.
    pub writes: Vec<WriteEntry>,
    /// The receipt that will be persisted.
    pub receipt: Receipt,
    /// Present iff the key starts with `mcp-replace-`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<Value>,
}

/// The payload name of write `i`: `payload-NNNNN`.
#[must_use]
pub fn payload_name(i: usize) -> String {
    format!("payload-{i:05}")
}

/// Sorts paths into publish order (spec/store.md §10.1 C12): ascending bytes, root
/// `index.md` last.
pub fn publish_order<T>(items: &mut [T], path: impl Fn(&T) -> &str) {
    items.sort_by(|a, b| {
        let (pa, pb) = (path(a), path(b));
        (pa == "index.md", pa.as_bytes()).cmp(&(pb == "index.md", pb.as_bytes()))
    });
}

impl Journal {
    /// The canonical bytes.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        receipt::canonical(self)
    }

    /// Strict decoding plus the validity conditions of spec/store.md §9.
    ///
    /// # Errors
    /// [`Invalid`] for any deviation (→ `StorageCorrupt`).
    pub fn decode(bytes: &[u8]) -> Result<Self, Invalid> {
        let j: Journal = receipt::strict_decode(bytes)?;
        j.validate()?;
        Ok(j)
    }

    /// The receipt file this journal persists (spec/store.md §8.1, §11 R8).
    #[must_use]
    pub fn receipt_file(&self) -> ReceiptFile {
        ReceiptFile {
            version: 1,
            key: self.idempotency_key.clone(),
            digest: self.request_digest.clone(),
            receipt: self.receipt.clone(),
            replay: self.replay.clone(),
        }
    }

    /// Validity conditions 1–4 of spec/store.md §9 plus the structural rules (txn id, digests,
    /// paths, publish order, payload numbering).
    ///
    /// # Errors
    /// [`Invalid`] naming the broken condition.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.version != 1 || self.hash_algorithm != "sha256" {
            return Err(Invalid("journal version"));
        }
        if self.txn_id != digest::txn_id(&self.request_digest, &self.idempotency_key) {
            return Err(Invalid("txn_id"));
        }
        if (self.replay.is_some()) != self.idempotency_key.starts_with(REPLACE_KEY_PREFIX)
            || self.replay.as_ref().is_some_and(|v| !v.is_object())
        {
            return Err(Invalid("replay member"));
        }
        // Base: sorted, unique, well-formed; condition 1.
        if !self
            .base
            .windows(2)
            .all(|w| w[0].path.as_bytes() < w[1].path.as_bytes())
        {
            return Err(Invalid("base order"));
        }
        for b in &self.base {
            if !crate::envelope::is_bundle_relative_path(&b.path)
                || !digest::is_lower_hex64(&b.digest)
            {
                return Err(Invalid("base entry"));
            }
        }
        let base_rev = digest::manifest_revision(
            self.base
                .iter()
                .map(|b| (b.path.as_str(), b.digest.as_str())),
        )
        .map_err(|_| Invalid("base digest"))?;
        if base_rev != self.base_revision {
            return Err(Invalid("base revision"));
        }
        // Writes: publish order, payload numbering, paths, unique.
        let mut ordered = self.writes.clone();
        publish_order(&mut ordered, |w| &w.path);
        if ordered != self.writes
            || self.writes.windows(2).any(|w| w[0].path == w[1].path)
            || self.writes.is_empty()
        {
            return Err(Invalid("writes order"));
        }
        for (i, w) in self.writes.iter().enumerate() {
            if w.payload != payload_name(i)
                || !receipt::is_writable_path(&w.path)
                || !digest::is_lower_hex64(&w.digest)
            {
                return Err(Invalid("write entry"));
            }
        }
        // Condition 2: result revision.
        let mut result: Vec<(&str, &str)> = self
            .base
            .iter()
            .filter(|b| !self.writes.iter().any(|w| w.path == b.path))
            .map(|b| (b.path.as_str(), b.digest.as_str()))
            .collect();
        result.extend(
            self.writes
                .iter()
                .map(|w| (w.path.as_str(), w.digest.as_str())),
        );
        if digest::manifest_revision(result).map_err(|_| Invalid("write digest"))?
            != self.result_revision
        {
            return Err(Invalid("result revision"));
        }
        // Condition 3: base binding.
        if self.base_binding != binding(self) {
            return Err(Invalid("base binding"));
        }
        // Condition 4: the receipt.
        let r = &self.receipt;
        if r.request_digest != self.request_digest
            || r.idempotency_key != self.idempotency_key
            || r.base_revision != self.base_revision
            || r.result_revision != self.result_revision
        {
            return Err(Invalid("receipt fields"));
        }
        if r.changed_files != changed_files(self.writes.iter().map(|w| w.path.as_str())) {
            return Err(Invalid("receipt changed_files"));
        }
        self.receipt_file().validate()
    }
}

fn binding(j: &Journal) -> String {
    digest::base_binding(
        &j.request_digest,
        &j.base_revision,
        &j.result_revision,
        j.base
            .iter()
            .map(|b| (b.path.as_str(), b.size, b.digest.as_str())),
    )
}

/// The receipt's `changed_files` for `paths`: one `write` each, sorted by (path, kind, from).
#[must_use]
pub fn changed_files<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<ChangedFile> {
    let mut v: Vec<ChangedFile> = paths
        .into_iter()
        .map(|p| ChangedFile {
            kind: "write".into(),
            path: p.to_owned(),
            from: String::new(),
        })
        .collect();
    v.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    v
}

/// Builds the journal of a commit (spec/store.md §9, §10.1 C7) and checks its validity.
///
/// `base` is the base manifest (sorted by path); `writes` are the planned writes (path, size,
/// digest) in any order.
///
/// # Errors
/// [`Invalid`] when the inputs do not form a valid journal (e.g. the declared revisions do
/// not match the manifest) — an internal error (`operation_rejected`).
#[allow(clippy::too_many_arguments)]
pub fn build(
    change_set_id: &str,
    key: &str,
    request_digest: &str,
    base_revision: &str,
    result_revision: &str,
    base: &[BaseEntry],
    writes: &[PlannedWrite],
    changed_refs: &[String],
    replay: Option<&Value>,
    commit_time: String,
) -> Result<Journal, Invalid> {
    let mut order: Vec<&PlannedWrite> = writes.iter().collect();
    publish_order(&mut order, |w| &w.path);
    let writes: Vec<WriteEntry> = order
        .iter()
        .enumerate()
        .map(|(i, w)| WriteEntry {
            path: w.path.clone(),
            payload: payload_name(i),
            size: w.size,
            digest: digest::hex(&w.digest),
        })
        .collect();
    let mut refs = changed_refs.to_vec();
    refs.sort_by(|a, b| receipt::ref_key(a).cmp(&receipt::ref_key(b)));
    refs.dedup();
    let receipt = Receipt {
        format_version: 1,
        change_set_id: change_set_id.to_owned(),
        idempotency_key: key.to_owned(),
        request_digest: request_digest.to_owned(),
        base_revision: base_revision.to_owned(),
        result_revision: result_revision.to_owned(),
        commit_time,
        changed_refs: refs,
        changed_files: changed_files(writes.iter().map(|w| w.path.as_str())),
    };
    let mut j = Journal {
        version: 1,
        txn_id: digest::txn_id(request_digest, key),
        hash_algorithm: "sha256".into(),
        request_digest: request_digest.to_owned(),
        idempotency_key: key.to_owned(),
        base_revision: base_revision.to_owned(),
        result_revision: result_revision.to_owned(),
        base: base.to_vec(),
        base_binding: String::new(),
        writes,
        receipt,
        replay: replay.cloned(),
    };
    j.base_binding = binding(&j);
    j.validate()?;
    Ok(j)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::okf::capture::Capture;

    pub(crate) fn sample() -> Journal {
        let base = Capture::from_files([
            ("index.md".to_owned(), b"root".to_vec()),
            ("a.md".to_owned(), b"a".to_vec()),
        ]);
        let result = Capture::from_files([
            ("index.md".to_owned(), b"root2".to_vec()),
            ("a.md".to_owned(), b"a".to_vec()),
            ("b/c.md".to_owned(), b"c".to_vec()),
        ]);
        let entries: Vec<BaseEntry> = base
            .files
            .iter()
            .map(|f| BaseEntry {
                path: f.path.clone(),
                size: f.size,
                digest: digest::hex(&f.digest),
            })
            .collect();
        let rd = format!("sha256:{}", "1".repeat(64));
        let key = format!("okf-plan-v1-{}", "a".repeat(64));
        build(
            "mcp-patch-x",
            &key,
            &rd,
            &base.revision,
            &result.revision,
            &entries,
            &[
                PlannedWrite::of("index.md", b"root2"),
                PlannedWrite::of("b/c.md", b"c"),
            ],
            &["b/c".into()],
            None,
            "2026-07-01T12:00:00.000000000Z".into(),
        )
        .expect("valid journal")
    }

    #[test]
    fn build_orders_writes_root_index_last_and_round_trips() {
        let j = sample();
        let paths: Vec<&str> = j.writes.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(paths, ["b/c.md", "index.md"]);
        assert_eq!(j.writes[1].payload, "payload-00001");
        assert_eq!(Journal::decode(&j.encode()), Ok(j.clone()));
        assert_eq!(j.receipt_file().receipt.changed_files.len(), 2);
    }

    #[test]
    fn sto_08_validity_conditions_detect_tampering() {
        let j = sample();
        let mut bad = j.clone();
        bad.base_binding = format!("sha256:{}", "0".repeat(64));
        assert_eq!(bad.validate(), Err(Invalid("base binding")));
        let mut bad = j.clone();
        bad.writes[0].digest = "0".repeat(64);
        assert_eq!(bad.validate(), Err(Invalid("result revision")));
        let mut bad = j.clone();
        bad.base[0].size += 1;
        assert_eq!(bad.validate(), Err(Invalid("base binding")));
        let mut bad = j.clone();
        bad.writes.reverse();
        assert!(bad.validate().is_err());
        let mut bad = j.clone();
        bad.receipt.base_revision.clone_from(&j.result_revision);
        assert_eq!(bad.validate(), Err(Invalid("receipt fields")));
        let mut bad = j.clone();
        bad.txn_id = format!("txn-{}", "0".repeat(64));
        assert_eq!(bad.validate(), Err(Invalid("txn_id")));
        let mut bytes = j.encode();
        bytes.push(b' ');
        assert!(Journal::decode(&bytes).is_err());
    }
}
