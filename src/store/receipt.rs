//! Receipts: canonical format, strict decoding and validation (spec/store.md §8.1, §8.2).
//!
//! Pure: bytes in, values out. The file I/O (write, lookup, prune) is in
//! [`crate::store::commit`] and [`crate::store::recovery`].
//!
//! Canonical JSON here means: the compact `serde_json` encoding of the types below (members in
//! declaration order, no whitespace, no trailing newline). A file is accepted only if it
//! decodes into these types *and* re-encodes to exactly its own bytes, which rejects
//! whitespace, trailing bytes, duplicate keys (also inside `replay`), key reordering, `null`
//! for absent members and non-canonical escapes in one rule.

use crate::digest::{self, is_canonical_digest, REPLACE_KEY_PREFIX};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The inner receipt object (spec/store.md §8.1 `receipt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// Always `1`.
    pub format_version: u64,
    /// Non-empty, at most 256 bytes.
    pub change_set_id: String,
    /// The key (§6.1).
    pub idempotency_key: String,
    /// Canonical digest.
    pub request_digest: String,
    /// Canonical revision.
    pub base_revision: String,
    /// Canonical revision.
    pub result_revision: String,
    /// `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`, UTC.
    pub commit_time: String,
    /// Sorted by ref order (spec/store.md §5 rule 4), unique.
    pub changed_refs: Vec<String>,
    /// Sorted by (path, kind, from), unique.
    pub changed_files: Vec<ChangedFile>,
}

/// One `changed_files` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangedFile {
    /// `write`, `delete` or `rename`.
    pub kind: String,
    /// A writable bundle path (§3.2).
    pub path: String,
    /// `""` unless `kind` is `rename`.
    pub from: String,
}

/// The receipt file (spec/store.md §8.1): `{version, key, digest, receipt, replay?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptFile {
    /// Envelope version, `1`.
    pub version: u64,
    /// Equals `receipt.idempotency_key`.
    pub key: String,
    /// Equals `receipt.request_digest`.
    pub digest: String,
    /// The receipt object.
    pub receipt: Receipt,
    /// Present iff `key` starts with `mcp-replace-` (the stored `write_concept` payload).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<Value>,
}

/// Why a receipt (or journal) failed validation; never shown on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub &'static str);

impl ReceiptFile {
    /// The canonical bytes (spec/store.md §8.1).
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        canonical(self)
    }

    /// Strict decoding plus every §8.1 rule (spec/store.md §8.2).
    ///
    /// # Errors
    /// [`Invalid`] for any deviation; callers map it to storage corruption.
    pub fn decode(bytes: &[u8]) -> Result<Self, Invalid> {
        let r: ReceiptFile = strict_decode(bytes)?;
        r.validate()?;
        Ok(r)
    }

    /// The §8.1 rules on a decoded value.
    ///
    /// # Errors
    /// [`Invalid`] naming the broken rule.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.version != 1 {
            return Err(Invalid("envelope version"));
        }
        if self.key != self.receipt.idempotency_key {
            return Err(Invalid("key differs from idempotency_key"));
        }
        if self.digest != self.receipt.request_digest {
            return Err(Invalid("digest differs from request_digest"));
        }
        let is_replace = self.key.starts_with(REPLACE_KEY_PREFIX);
        match (&self.replay, is_replace) {
            (Some(Value::Object(_)), true) | (None, false) => {}
            _ => return Err(Invalid("replay member")),
        }
        self.receipt.validate()
    }

    /// The receipt file name of this key (spec/store.md §6.2), without directory.
    #[must_use]
    pub fn file_name(key: &str) -> String {
        format!("{}.json", digest::receipt_name(key))
    }
}

impl Receipt {
    /// The §8.1 field rules.
    ///
    /// # Errors
    /// [`Invalid`] naming the broken rule.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.format_version != 1 {
            return Err(Invalid("format_version"));
        }
        if self.change_set_id.is_empty() || self.change_set_id.len() > 256 {
            return Err(Invalid("change_set_id"));
        }
        if !digest::is_valid_key(&self.idempotency_key) {
            return Err(Invalid("idempotency_key"));
        }
        for d in [
            &self.request_digest,
            &self.base_revision,
            &self.result_revision,
        ] {
            if !is_canonical_digest(d) {
                return Err(Invalid("non-canonical digest"));
            }
        }
        if !is_commit_time(&self.commit_time) {
            return Err(Invalid("commit_time"));
        }
        for r in &self.changed_refs {
            if !is_ref(r) {
                return Err(Invalid("changed_refs entry"));
            }
        }
        if !self
            .changed_refs
            .windows(2)
            .all(|w| ref_key(&w[0]) < ref_key(&w[1]))
        {
            return Err(Invalid("changed_refs order"));
        }
        for f in &self.changed_files {
            let kind_ok = match f.kind.as_str() {
                "write" | "delete" => f.from.is_empty(),
                "rename" => is_writable_path(&f.from),
                _ => false,
            };
            if !kind_ok || !is_writable_path(&f.path) {
                return Err(Invalid("changed_files entry"));
            }
        }
        let key = |f: &ChangedFile| (f.path.clone(), f.kind.clone(), f.from.clone());
        if !self
            .changed_files
            .windows(2)
            .all(|w| key(&w[0]) < key(&w[1]))
        {
            return Err(Invalid("changed_files order"));
        }
        Ok(())
    }
}

/// Compact canonical JSON of a serialisable value.
#[must_use]
pub fn canonical<T: Serialize>(v: &T) -> Vec<u8> {
    // Serialising these plain structs cannot fail (string keys, no maps with non-string keys).
    serde_json::to_vec(v).unwrap_or_default()
}

/// Decodes `bytes` into `T` and requires the canonical re-encoding to equal `bytes`
/// (spec/store.md §8.2).
///
/// # Errors
/// [`Invalid`] on invalid UTF-8, syntax errors, unknown/missing/null members, trailing bytes,
/// or any non-canonical form (whitespace, duplicate keys, member order).
pub fn strict_decode<T: Serialize + for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, Invalid> {
    if std::str::from_utf8(bytes).is_err() {
        return Err(Invalid("invalid UTF-8"));
    }
    let v: T = serde_json::from_slice(bytes).map_err(|_| Invalid("does not decode"))?;
    if canonical(&v) != bytes {
        return Err(Invalid("not canonical"));
    }
    Ok(v)
}

/// `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`, a valid UTC instant, not the zero time.
#[must_use]
pub fn is_commit_time(s: &str) -> bool {
    parse_commit_time(s).is_some()
}

/// Parses a commit time (see [`is_commit_time`]) into nanoseconds since the Unix epoch.
#[must_use]
pub fn parse_commit_time(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    if b.len() != 30 {
        return None;
    }
    let shape = b.iter().enumerate().all(|(i, &c)| match i {
        4 | 7 => c == b'-',
        10 => c == b'T',
        13 | 16 => c == b':',
        19 => c == b'.',
        29 => c == b'Z',
        _ => c.is_ascii_digit(),
    });
    if !shape {
        return None;
    }
    let dt = chrono::NaiveDateTime::parse_from_str(&s[..29], "%Y-%m-%dT%H:%M:%S%.9f").ok()?;
    let ns = i128::from(dt.and_utc().timestamp()) * 1_000_000_000
        + i128::from(dt.and_utc().timestamp_subsec_nanos());
    if s.starts_with("0000-") || s == "0001-01-01T00:00:00.000000000Z" {
        return None;
    }
    Some(ns)
}

/// Formats a UTC instant as a commit time.
#[must_use]
pub fn format_commit_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string()
}

/// A ref (spec/store.md §5 rule 4): a canonical concept id, optionally `#fragment`
/// (1..4096 bytes, no `#`, no control characters).
#[must_use]
pub fn is_ref(r: &str) -> bool {
    let (id, frag) = match r.split_once('#') {
        Some((id, f)) => (id, Some(f)),
        None => (r, None),
    };
    let frag_ok = frag.is_none_or(|f| {
        !f.is_empty() && f.len() <= 4096 && !f.contains('#') && !f.chars().any(char::is_control)
    });
    frag_ok && crate::okf::grammar::check_concept_id(id).is_ok()
}

/// The sort key of a ref: (concept id bytes, fragment bytes), a ref without fragment first.
#[must_use]
pub fn ref_key(r: &str) -> (&[u8], Option<&[u8]>) {
    match r.split_once('#') {
        Some((id, f)) => (id.as_bytes(), Some(f.as_bytes())),
        None => (r.as_bytes(), None),
    }
}

/// A writable path (spec/store.md §3.2 rules 1–4, the writable form of rule 4).
#[must_use]
pub fn is_writable_path(p: &str) -> bool {
    if !crate::envelope::is_bundle_relative_path(p) {
        return false;
    }
    let first = p.split('/').next().unwrap_or_default().to_ascii_lowercase();
    first != ".okf" && first != ".git"
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample(key: &str) -> ReceiptFile {
        let d = |c: char| format!("sha256:{}", c.to_string().repeat(64));
        ReceiptFile {
            version: 1,
            key: key.to_owned(),
            digest: d('1'),
            receipt: Receipt {
                format_version: 1,
                change_set_id: "mcp-patch-x".into(),
                idempotency_key: key.to_owned(),
                request_digest: d('1'),
                base_revision: d('2'),
                result_revision: d('3'),
                commit_time: "2026-07-01T12:00:00.000000000Z".into(),
                changed_refs: vec!["tables/orders".into(), "tables/orders#a".into()],
                changed_files: vec![
                    ChangedFile {
                        kind: "write".into(),
                        path: "index.md".into(),
                        from: String::new(),
                    },
                    ChangedFile {
                        kind: "write".into(),
                        path: "tables/orders.md".into(),
                        from: String::new(),
                    },
                ],
            },
            replay: key
                .starts_with(REPLACE_KEY_PREFIX)
                .then(|| serde_json::json!({"status":"success","path":"a.md","diagnostics":[]})),
        }
    }

    fn key() -> String {
        format!("okf-plan-v1-{}", "a".repeat(64))
    }

    #[test]
    fn canonical_form_round_trips_byte_exact() {
        let r = sample(&key());
        let b = r.encode();
        let s = String::from_utf8(b.clone()).expect("utf8");
        assert!(s.starts_with(r#"{"version":1,"key":"okf-plan-v1-"#), "{s}");
        assert!(!s.contains(' ') && !s.ends_with('\n'));
        assert!(s.contains(r#","receipt":{"format_version":1,"change_set_id":"#));
        assert_eq!(ReceiptFile::decode(&b), Ok(r));
        let w = sample(&format!("mcp-replace-{}", "b".repeat(64)));
        let wb = w.encode();
        assert!(String::from_utf8_lossy(&wb).contains(r#"}]},"replay":{"status":"success""#));
        assert_eq!(ReceiptFile::decode(&wb), Ok(w));
    }

    #[test]
    fn sto_07_strict_decoding_rejects_every_tampering() {
        let good = String::from_utf8(sample(&key()).encode()).expect("utf8");
        let upper = good.replace(
            &format!("sha256:{}", "3".repeat(64)),
            &format!("sha256:{}", "A".repeat(64)),
        );
        let cases: Vec<(&str, String)> = vec![
            ("uppercase result", upper),
            (
                "duplicate key",
                good.replacen("{\"version\":1,", "{\"version\":1,\"version\":1,", 1),
            ),
            ("trailing bytes", format!("{good}x")),
            ("trailing newline", format!("{good}\n")),
            (
                "whitespace",
                good.replacen("\"version\":1", "\"version\": 1", 1),
            ),
            (
                "dotdot path",
                good.replace("\"tables/orders.md\"", "\"../x\""),
            ),
            (
                "okf path",
                good.replace("\"tables/orders.md\"", "\".okf/x\""),
            ),
            (
                "unknown member",
                good.replacen("{\"version\":1,", "{\"version\":1,\"x\":1,", 1),
            ),
            (
                "null array",
                good.replace(
                    "\"changed_refs\":[\"tables/orders\",\"tables/orders#a\"]",
                    "\"changed_refs\":null",
                ),
            ),
            ("missing member", good.replace("\"format_version\":1,", "")),
            ("null replay", good.replacen("}}", "},\"replay\":null}", 1)),
            ("replay on plan key", {
                let mut s = good.clone();
                s.pop();
                format!("{s},\"replay\":{{}}}}")
            }),
            (
                "zero time",
                good.replace(
                    "2026-07-01T12:00:00.000000000Z",
                    "0001-01-01T00:00:00.000000000Z",
                ),
            ),
            (
                "short fraction",
                good.replace("12:00:00.000000000Z", "12:00:00.000Z"),
            ),
            ("unsorted files", good.replace("\"index.md\"", "\"zz.md\"")),
            (
                "key mismatch",
                good.replacen(&key(), &format!("okf-plan-v1-{}", "c".repeat(64)), 1),
            ),
            ("invalid utf8", String::new()),
        ];
        for (name, s) in cases {
            let bytes = if name == "invalid utf8" {
                let mut b = good.as_bytes().to_vec();
                b[20] = 0xff;
                b
            } else {
                s.into_bytes()
            };
            assert!(
                ReceiptFile::decode(&bytes).is_err(),
                "{name} must be corrupt"
            );
        }
    }

    #[test]
    fn commit_time_grammar() {
        assert!(is_commit_time("2026-07-01T12:00:00.123456789Z"));
        assert!(!is_commit_time("2026-02-30T12:00:00.123456789Z"));
        assert!(!is_commit_time("2026-07-01 12:00:00.123456789Z"));
        assert!(!is_commit_time("2026-07-01T12:00:00.123456789+00:00"));
        let t = format_commit_time(chrono::Utc::now());
        assert!(is_commit_time(&t), "{t}");
        assert!(
            parse_commit_time("2026-07-01T12:00:01.000000000Z")
                > parse_commit_time("2026-07-01T12:00:00.999999999Z")
        );
    }

    #[test]
    fn refs_order_without_fragment_first() {
        assert!(ref_key("a") < ref_key("a#b"));
        assert!(ref_key("a#z") < ref_key("a/b"));
        assert!(is_ref("tables/orders#col"));
        assert!(!is_ref("tables/orders#"));
        assert!(!is_ref("tables/orders#a#b"));
        assert!(!is_ref("../x"));
    }
}
