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
}
