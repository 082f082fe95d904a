//! Canonical length-prefixed encodings and digests (spec/store.md §2, §3.6).

use sha2::{Digest, Sha256};

/// A length-prefixed, domain-separated byte encoder (spec/store.md §2).
#[derive(Debug, Default, Clone)]
pub struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    /// An encoder that starts with `str(tag)`.
    #[must_use]
    pub fn tagged(tag: &str) -> Self {
        let mut e = Self::default();
        e.str(tag);
        e
    }
    /// `u64be(n)`.
    pub fn cnt(&mut self, n: u64) -> &mut Self {
        self.buf.extend_from_slice(&n.to_be_bytes());
        self
    }
    /// `str(s)`: length then UTF-8 bytes.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }
    /// `bytes(b)`: length then bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.cnt(b.len() as u64);
        self.buf.extend_from_slice(b);
        self
    }
    /// `bool(b)`.
    pub fn bool(&mut self, b: bool) -> &mut Self {
        self.cnt(u64::from(b))
    }
    /// The encoded bytes.
    #[must_use]
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
    /// `digest(x)` of the encoded bytes: `sha256:<64 hex>`.
    #[must_use]
    pub fn digest(&self) -> String {
        digest_str(&self.buf)
    }
}

/// `H(x)`: raw SHA-256.
#[must_use]
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let out = Sha256::digest(bytes);
    let mut a = [0u8; 32];
    a.copy_from_slice(&out);
    a
}

/// Lowercase hex of `bytes`.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// `digest(x)` = `"sha256:" + hex(H(x))`.
#[must_use]
pub fn digest_str(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&sha256(bytes)))
}

/// Whether `s` is a canonical digest `^sha256:[0-9a-f]{64}$` (spec/store.md §2 rule 1).
#[must_use]
pub fn is_canonical_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The revision of a visible tree (spec/store.md §3.6): `entries` are `(path, H(bytes))`,
/// in any order; they are sorted by path bytes here.
#[must_use]
pub fn revision<'a>(entries: impl IntoIterator<Item = (&'a str, &'a [u8; 32])>) -> String {
    let mut v: Vec<(&str, &[u8; 32])> = entries.into_iter().collect();
    v.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut e = Encoder::tagged("okf:revision:v1");
    e.cnt(v.len() as u64);
    for (p, d) in v {
        e.str(p);
        e.bytes(d);
    }
    e.digest()
}

/// The revision of `base` with `writes` applied (spec/store.md §3.6), without copying the
/// tree: `base` yields `(path, H(bytes))` of the current visible files (any order, unique
/// paths); `writes` are `(path, new bytes)` replacing or adding files (a repeated path: the
/// last write wins). Equal to the revision of `Capture::from_files` over the overlay; only
/// the written bytes are hashed.
#[must_use]
pub fn revision_with<'a>(
    base: impl IntoIterator<Item = (&'a str, &'a [u8; 32])>,
    writes: &'a [(String, Vec<u8>)],
) -> String {
    let mut written: std::collections::BTreeMap<&str, [u8; 32]> = std::collections::BTreeMap::new();
    for (p, b) in writes {
        written.insert(p.as_str(), sha256(b));
    }
    let kept: Vec<(&str, &[u8; 32])> = base
        .into_iter()
        .filter(|(p, _)| !written.contains_key(p))
        .collect();
    revision(kept.into_iter().chain(written.iter().map(|(p, d)| (*p, d))))
}

/// Maximum length in bytes of an idempotency key (spec/store.md §6.1).
pub const MAX_KEY_BYTES: usize = 256;

/// Prefix of plan-derived idempotency keys (spec/store.md §6.1).
pub const PLAN_KEY_PREFIX: &str = "okf-plan-v1-";

/// Prefix of `write_concept` change ids, which are their own keys (spec/store.md §10.0).
pub const REPLACE_KEY_PREFIX: &str = "mcp-replace-";

/// The idempotency key of spec/store.md §6.1:
/// `"okf-plan-v1-" + hex(H( str("okf:plan-idempotency:v1") str(namespace) str(plan_digest) str("") ))`.
///
/// Pure; computed before any I/O.
///
/// # Errors
/// `Err(())` when the namespace is not 1..128 bytes, has surrounding whitespace or control
/// characters, or `plan_digest` is not canonical; the tool maps this to its plan-mismatch
/// error ("cannot derive transaction identity").
#[allow(clippy::result_unit_err)]
pub fn idempotency_key(namespace: &str, plan_digest: &str) -> Result<String, ()> {
    let ns_ok = !namespace.is_empty()
        && namespace.len() <= 128
        && namespace.trim() == namespace
        && !namespace.chars().any(char::is_control);
    if !ns_ok || !is_canonical_digest(plan_digest) {
        return Err(());
    }
    let mut e = Encoder::tagged("okf:plan-idempotency:v1");
    e.str(namespace).str(plan_digest).str("");
    Ok(format!("{PLAN_KEY_PREFIX}{}", hex(&sha256(&e.finish()))))
}

/// Whether `key` has the shape of an idempotency key: `okf-plan-v1-<64 hex>` or
/// `mcp-replace-<64 hex>` (spec/store.md §6.1, §10.0), at most 256 bytes.
#[must_use]
pub fn is_valid_key(key: &str) -> bool {
    let rest = key
        .strip_prefix(PLAN_KEY_PREFIX)
        .or_else(|| key.strip_prefix(REPLACE_KEY_PREFIX));
    key.len() <= MAX_KEY_BYTES && rest.is_some_and(is_lower_hex64)
}

/// Whether `s` is exactly 64 lowercase hex digits (a bare manifest or write digest).
#[must_use]
pub fn is_lower_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The receipt file stem of spec/store.md §6.2: `hex(H(key bytes))`.
#[must_use]
pub fn receipt_name(key: &str) -> String {
    hex(&sha256(key.as_bytes()))
}

/// The transaction id of spec/store.md §6.2:
/// `"txn-" + hex(H( str("okf:transaction:v1") str(request_digest) str(key) ))`.
#[must_use]
pub fn txn_id(request_digest: &str, key: &str) -> String {
    let mut e = Encoder::tagged("okf:transaction:v1");
    e.str(request_digest).str(key);
    format!("txn-{}", hex(&sha256(&e.finish())))
}

/// One entry of a manifest (spec/store.md §3.6 rule 4): path, size in bytes, bare hex digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Bundle-relative path (spec/store.md §3.2).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// 64 lowercase hex digits of `H(bytes)`.
    pub digest: String,
}

/// The journal base binding of spec/store.md §9:
/// `digest( str("okf:journal-base:v1") str(request_digest) str(base_revision)
/// str(result_revision) cnt(N) [ str(path) cnt(size) str(digest) ]* )`, over `base` in the
/// given order (the journal stores it sorted by path). `base` yields `(path, size, digest)`
/// of each [`ManifestEntry`]-shaped entry.
#[must_use]
pub fn base_binding<'a>(
    request_digest: &str,
    base_revision: &str,
    result_revision: &str,
    base: impl ExactSizeIterator<Item = (&'a str, u64, &'a str)>,
) -> String {
    let mut e = Encoder::tagged("okf:journal-base:v1");
    e.str(request_digest)
        .str(base_revision)
        .str(result_revision)
        .cnt(base.len() as u64);
    for (path, size, digest) in base {
        e.str(path).cnt(size).str(digest);
    }
    e.digest()
}

/// The revision (spec/store.md §3.6) of a manifest whose digests are bare hex.
///
/// # Errors
/// `Err(())` when a digest is not 64 lowercase hex digits.
#[allow(clippy::result_unit_err)]
pub fn manifest_revision<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<String, ()> {
    let mut raw: Vec<(&str, [u8; 32])> = Vec::new();
    for (p, d) in entries {
        raw.push((p, unhex32(d).ok_or(())?));
    }
    Ok(revision(raw.iter().map(|(p, d)| (*p, d))))
}

/// Decodes 64 lowercase hex digits into 32 bytes.
#[must_use]
pub fn unhex32(s: &str) -> Option<[u8; 32]> {
    if !is_lower_hex64(s) {
        return None;
    }
    let b = s.as_bytes();
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        let v = |c: u8| {
            if c.is_ascii_digit() {
                c - b'0'
            } else {
                c - b'a' + 10
            }
        };
        *o = (v(b[2 * i]) << 4) | v(b[2 * i + 1]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_is_order_independent_and_content_sensitive() {
        let a = sha256(b"a");
        let b = sha256(b"b");
        let r1 = revision([("x.md", &a), ("y.md", &b)]);
        let r2 = revision([("y.md", &b), ("x.md", &a)]);
        assert_eq!(r1, r2);
        assert!(is_canonical_digest(&r1));
        assert_ne!(r1, revision([("x.md", &b), ("y.md", &a)]));
        assert_ne!(r1, revision([("x.md", &a), ("z.md", &b)]));
        assert_ne!(revision([]), r1);
    }

    #[test]
    fn canonical_digest_shape() {
        assert!(!is_canonical_digest(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_canonical_digest(&"a".repeat(64)));
        assert!(is_canonical_digest(&format!("sha256:{}", "0".repeat(64))));
    }

    #[test]
    fn key_txn_and_binding_are_deterministic_and_input_sensitive() {
        let d1 = format!("sha256:{}", "1".repeat(64));
        let d2 = format!("sha256:{}", "2".repeat(64));
        let k = idempotency_key("mcp:concept-patch", &d1).expect("key");
        assert!(k.starts_with("okf-plan-v1-") && is_valid_key(&k));
        assert_eq!(k, idempotency_key("mcp:concept-patch", &d1).expect("key"));
        assert_ne!(k, idempotency_key("mcp:concept-patch", &d2).expect("key"));
        assert_ne!(
            k,
            idempotency_key("migration:v0.1-to-v0.2", &d1).expect("key")
        );
        assert!(idempotency_key("", &d1).is_err());
        assert!(idempotency_key(" ns", &d1).is_err());
        assert!(idempotency_key("n\ns", &d1).is_err());
        assert!(idempotency_key(&"n".repeat(129), &d1).is_err());
        assert!(idempotency_key("ns", "sha256:ABC").is_err());
        let t = txn_id(&d1, &k);
        assert!(t.starts_with("txn-") && is_lower_hex64(&t[4..]));
        assert_ne!(t, txn_id(&d2, &k));
        assert_eq!(receipt_name(&k).len(), 64);
        let m = vec![ManifestEntry {
            path: "a.md".into(),
            size: 1,
            digest: hex(&sha256(b"a")),
        }];
        let entries = |m: &'_ [ManifestEntry]| -> Vec<(String, u64, String)> {
            m.iter()
                .map(|e| (e.path.clone(), e.size, e.digest.clone()))
                .collect()
        };
        let bind = |x: &str, y: &str, m: &[ManifestEntry]| {
            let v = entries(m);
            base_binding(
                &d1,
                x,
                y,
                v.iter().map(|(p, n, d)| (p.as_str(), *n, d.as_str())),
            )
        };
        let b = bind(&d1, &d2, &m);
        assert_ne!(b, bind(&d2, &d1, &m));
        let mut m2 = m.clone();
        m2[0].size = 2;
        assert_ne!(b, bind(&d1, &d2, &m2));
        let a = sha256(b"a");
        assert_eq!(
            manifest_revision([("a.md", m[0].digest.as_str())]).expect("rev"),
            revision([("a.md", &a)])
        );
        assert!(manifest_revision([("a.md", "XYZ")]).is_err());
        assert_eq!(unhex32(&hex(&a)), Some(a));
    }
}
