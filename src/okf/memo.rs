//! A process-wide memo of pure per-document results, keyed by content.
//!
//! Splitting and parsing a document (spec/store.md §3.4) and the validator's per-document
//! checks (spec/surface.md §13.2) are pure functions of the document's bytes, its path and the
//! validator options. A long-running server sees the same unchanged documents on every request,
//! so it remembers two facts between requests:
//!
//! 1. **clean digests**: SHA-256 digests of documents whose frontmatter parses without a YAML
//!    resource-limit or graph fault (spec/store.md §3.4–§3.5). A document whose digest is
//!    clean is not parsed again to re-prove that; [`crate::okf::bundle::parse_bundle`] parses
//!    it lazily, only when a tool actually looks at it.
//! 2. **per-document findings** for `(path, digest, DocOptions)`;
//! 3. **temporal kinds** of concept documents by digest (one byte: whether they hold calendar
//!    dates and offset datetimes, spec/temporal.md §11), so `auto` resolves on a spilled
//!    capture;
//! 4. **parse outcomes** by digest: whether the document parses, or the code of its parse
//!    fault (spec/surface.md §12.6), so the read tools that refuse a bundle holding a document
//!    that cannot be parsed do not parse every document again to learn that it has none.
//!
//! What this does not change: every request still captures the tree (reads and hashes every
//! visible file, spec/store.md §3.6–§3.7), and every answer is computed from that capture. A
//! digest equal to a remembered one stands for the same bytes (the assumption the revision
//! already relies on), so a remembered result equals the recomputed one.
//!
//! Bounded, in two generations per table: the current generation holds at most
//! [`MAX_ENTRIES`] clean digests, and at most [`MAX_ENTRIES`] findings entries with at most
//! [`MAX_FINDINGS_BYTES`] of paths and records; a generation that would grow past a bound
//! becomes the previous one (the older previous one is dropped) and lookups consult both. So
//! at most twice the bounds are held, and a fact remembered by a request survives at least
//! the next [`MAX_ENTRIES`] insertions: a spilled capture (docs/store.md §3.2), which
//! remembers at most one entry per visible file (≤ 10,000) and reads them back right after,
//! finds them all unless other requests insert more than that in between (it then re-captures;
//! nothing is ever wrong, only slower). Holds no document text: 32-byte digests, paths and the
//! fixed finding sentences only.

use crate::okf::finding::Finding;
use crate::okf::temporal::{Kinds, Profile};
use std::collections::{HashMap, HashSet};
use std::hash::Hasher;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// Upper bound of the digests, and of the findings entries, of one generation (a generation
/// that would exceed it becomes the previous one). Twice the visible-file limit of
/// spec/store.md §3.3.
pub const MAX_ENTRIES: usize = 20_000;
/// Upper bound, in bytes, of the paths and finding records one generation of the findings
/// table holds (it becomes the previous one when it would exceed it): 32 MiB.
pub const MAX_FINDINGS_BYTES: usize = 32 * 1024 * 1024;

/// The validator options a document's own findings depend on (spec/surface.md §13.2): the
/// strict switch, whether the 0.2-only rows apply, the temporal profile and `as_of`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocOptions {
    pub strict: bool,
    pub v02: bool,
    pub temporal_profile: Profile,
    pub as_of: Option<String>,
}

/// The hasher of the digest-keyed tables. The keys are SHA-256 digests, so a multiply-rotate
/// fold of their bytes, started from a per-process random seed and finished with the
/// splitmix64 mixer, spreads them at a fraction of SipHash's cost; the seed keeps documents
/// crafted to collide in the table's buckets from being computed ahead. Correct for any input
/// (only the spread depends on the keys).
#[derive(Clone, Copy)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
}

/// Builds [`DigestHasher`]s from the process's seed.
#[derive(Clone, Copy)]
struct DigestHash(u64);

impl Default for DigestHash {
    fn default() -> Self {
        static SEED: LazyLock<u64> = LazyLock::new(|| {
            std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), 0x006f_6b66_u64)
        });
        DigestHash(*SEED)
    }
}

impl std::hash::BuildHasher for DigestHash {
    type Hasher = DigestHasher;

    fn build_hasher(&self) -> DigestHasher {
        DigestHasher(self.0)
    }
}

/// Findings of one `(digest, path)` under each options set seen.
type ByOptions = Vec<(DocOptions, Arc<[Finding]>)>;

/// The documents of one digest: almost always a single path (kept inline, a few dozen bytes
/// instead of a hash table); a map once identical files live under several paths.
enum Paths {
    One(Box<str>, ByOptions),
    Many(HashMap<Box<str>, ByOptions>),
}

impl Paths {
    fn get(&self, path: &str) -> Option<&ByOptions> {
        match self {
            Paths::One(p, v) => (&**p == path).then_some(v),
            Paths::Many(m) => m.get(path),
        }
    }

    /// The options list of `path`, created empty when absent.
    fn entry(&mut self, path: &str) -> &mut ByOptions {
        if matches!(self, Paths::One(p, _) if &**p != path) {
            let old = std::mem::replace(self, Paths::Many(HashMap::with_capacity(2)));
            if let (Paths::One(p, v), Paths::Many(m)) = (old, &mut *self) {
                m.insert(p, v);
            }
        }
        match self {
            Paths::One(_, v) => v,
            Paths::Many(m) => m
                .entry(path.into())
                .or_insert_with(|| Vec::with_capacity(1)),
        }
    }
}

/// One generation of the findings table.
#[derive(Default)]
struct Findings {
    /// digest → path → options → findings: lookups are O(1) even when many documents share
    /// one digest (identical files under different paths).
    map: HashMap<[u8; 32], Paths, DigestHash>,
    len: usize,
    /// Approximate heap bytes held by `map` (paths and finding records).
    bytes: usize,
}

impl Findings {
    fn get(&self, path: &str, digest: &[u8; 32], opts: &DocOptions) -> Option<Arc<[Finding]>> {
        self.map
            .get(digest)?
            .get(path)?
            .iter()
            .find(|(o, _)| o == opts)
            .map(|(_, f)| Arc::clone(f))
    }
}

/// The two generations of both tables (see the module docs).
#[derive(Default)]
struct Memo {
    clean: HashSet<[u8; 32], DigestHash>,
    clean_previous: HashSet<[u8; 32], DigestHash>,
    findings: Findings,
    findings_previous: Findings,
    /// digest → [`Kinds::to_bits`] of a concept's temporal values (spec/temporal.md §11).
    kinds: HashMap<[u8; 32], u8, DigestHash>,
    kinds_previous: HashMap<[u8; 32], u8, DigestHash>,
    /// digest → the code of its parse fault, or none when it parses.
    outcomes: HashMap<[u8; 32], Option<&'static str>, DigestHash>,
    outcomes_previous: HashMap<[u8; 32], Option<&'static str>, DigestHash>,
}

impl Memo {
    fn knows(&self, path: &str, digest: &[u8; 32], opts: &DocOptions) -> bool {
        self.is_clean(digest) && self.findings(path, digest, opts).is_some()
    }

    fn remember_clean(
        &mut self,
        path: &str,
        digest: &[u8; 32],
        opts: &DocOptions,
        found: Arc<[Finding]>,
    ) {
        self.mark_clean(&[*digest]);
        self.remember(path, digest, opts, found);
    }

    fn kinds(&self, digest: &[u8; 32]) -> Option<Kinds> {
        self.kinds
            .get(digest)
            .or_else(|| self.kinds_previous.get(digest))
            .map(|b| Kinds::from_bits(*b))
    }

    fn remember_kinds(&mut self, digest: &[u8; 32], kinds: Kinds) {
        if self.kinds.contains_key(digest) {
            return;
        }
        if self.kinds.len() >= MAX_ENTRIES {
            self.kinds_previous = std::mem::take(&mut self.kinds);
        }
        self.kinds.insert(*digest, kinds.to_bits());
    }

    fn outcome(&self, digest: &[u8; 32]) -> Option<Option<&'static str>> {
        self.outcomes
            .get(digest)
            .or_else(|| self.outcomes_previous.get(digest))
            .copied()
    }

    fn remember_outcome(&mut self, digest: &[u8; 32], fault: Option<&'static str>) {
        if self.outcomes.contains_key(digest) {
            return;
        }
        if self.outcomes.len() >= MAX_ENTRIES {
            self.outcomes_previous = std::mem::take(&mut self.outcomes);
        }
        self.outcomes.insert(*digest, fault);
    }

    fn is_clean(&self, digest: &[u8; 32]) -> bool {
        self.clean.contains(digest) || self.clean_previous.contains(digest)
    }

    fn mark_clean(&mut self, digests: &[[u8; 32]]) {
        for d in digests {
            if self.clean.contains(d) {
                continue;
            }
            if self.clean.len() >= MAX_ENTRIES {
                self.clean_previous = std::mem::take(&mut self.clean);
            }
            self.clean.insert(*d);
        }
    }

    fn findings(&self, path: &str, digest: &[u8; 32], opts: &DocOptions) -> Option<Arc<[Finding]>> {
        self.findings
            .get(path, digest, opts)
            .or_else(|| self.findings_previous.get(path, digest, opts))
    }

    fn remember(
        &mut self,
        path: &str,
        digest: &[u8; 32],
        opts: &DocOptions,
        found: Arc<[Finding]>,
    ) {
        let size = entry_bytes(path, &found);
        if size > MAX_FINDINGS_BYTES || self.findings.get(path, digest, opts).is_some() {
            return;
        }
        if self.findings.len >= MAX_ENTRIES || self.findings.bytes + size > MAX_FINDINGS_BYTES {
            self.findings_previous = std::mem::take(&mut self.findings);
        }
        let f = &mut self.findings;
        // Sized for the usual single options set (a default `Vec` would reserve four).
        f.map
            .entry(*digest)
            .or_insert_with(|| Paths::One(path.into(), Vec::with_capacity(1)))
            .entry(path)
            .push((opts.clone(), found));
        f.len += 1;
        f.bytes += size;
    }
}

static MEMO: LazyLock<Mutex<Memo>> = LazyLock::new(|| Mutex::new(Memo::default()));

/// The memo, also after a panic elsewhere poisoned the mutex (its tables stay consistent:
/// every update is a single insert or a clear).
fn memo() -> MutexGuard<'static, Memo> {
    MEMO.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
thread_local! {
    /// Tests: when set, the calling thread neither reads nor writes the memo.
    static BYPASS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Tests: runs `f` on this thread with the memo bypassed (nothing read, nothing remembered).
#[cfg(test)]
pub(crate) fn bypassed<T>(f: impl FnOnce() -> T) -> T {
    BYPASS.with(|b| b.set(true));
    let out = f();
    BYPASS.with(|b| b.set(false));
    out
}

fn bypass() -> bool {
    #[cfg(test)]
    if BYPASS.with(std::cell::Cell::get) {
        return true;
    }
    false
}

/// Whether `digest` is known to parse without a YAML limit or graph fault.
#[must_use]
pub fn is_clean(digest: &[u8; 32]) -> bool {
    !bypass() && memo().is_clean(digest)
}

/// For each digest, whether it is known clean (one lock for the whole slice).
#[must_use]
pub fn clean_flags(digests: &[&[u8; 32]]) -> Vec<bool> {
    if bypass() {
        return vec![false; digests.len()];
    }
    let m = memo();
    digests.iter().map(|d| m.is_clean(d)).collect()
}

/// For each digest, its remembered parse outcome (one lock for the whole slice): `None` when
/// unknown, `Some(None)` when the document parses, `Some(Some(code))` with the code of its
/// parse fault (spec/surface.md §12.6).
#[must_use]
pub fn parse_outcomes(digests: &[&[u8; 32]]) -> Vec<Option<Option<&'static str>>> {
    if bypass() {
        return vec![None; digests.len()];
    }
    let m = memo();
    digests.iter().map(|d| m.outcome(d)).collect()
}

/// Remembers parse outcomes: `(digest, None)` for a document that parses, `(digest,
/// Some(code))` with the code of its parse fault.
pub fn remember_parse_outcomes(outcomes: &[([u8; 32], Option<&'static str>)]) {
    if outcomes.is_empty() || bypass() {
        return;
    }
    let mut m = memo();
    for (d, fault) in outcomes {
        m.remember_outcome(d, *fault);
    }
}

/// Remembers that the documents with these digests parse without a limit or graph fault.
pub fn mark_clean(digests: &[[u8; 32]]) {
    if digests.is_empty() || bypass() {
        return;
    }
    memo().mark_clean(digests);
}

/// The remembered findings of the document `(path, digest)` under `opts`, if any.
#[must_use]
pub fn findings(path: &str, digest: &[u8; 32], opts: &DocOptions) -> Option<Arc<[Finding]>> {
    findings_many(&[(path, digest)], opts).pop().flatten()
}

/// [`findings`] for many documents under one lock, in order.
#[must_use]
pub fn findings_many(docs: &[(&str, &[u8; 32])], opts: &DocOptions) -> Vec<Option<Arc<[Finding]>>> {
    if bypass() {
        return vec![None; docs.len()];
    }
    let m = memo();
    docs.iter()
        .map(|(path, digest)| m.findings(path, digest, opts))
        .collect()
}

/// Whether `digest` is known clean and the findings of `(path, digest)` under `opts` are
/// remembered (one lock: [`is_clean`] and [`findings`] together).
#[must_use]
pub fn knows(path: &str, digest: &[u8; 32], opts: &DocOptions) -> bool {
    if bypass() {
        return false;
    }
    memo().knows(path, digest, opts)
}

/// Remembers that the document `(path, digest)` is clean and its findings under `opts` (one
/// lock: [`mark_clean`] and [`remember_findings`] together).
pub fn remember_clean(path: &str, digest: &[u8; 32], opts: &DocOptions, found: Arc<[Finding]>) {
    if bypass() {
        return;
    }
    memo().remember_clean(path, digest, opts, found);
}

/// The remembered temporal kinds of a concept document with this digest
/// (spec/temporal.md §11 rule 1: a function of its bytes alone).
#[must_use]
pub fn kinds(digest: &[u8; 32]) -> Option<Kinds> {
    if bypass() {
        return None;
    }
    memo().kinds(digest)
}

/// Remembers the temporal kinds of a concept document with this digest (bounded like the
/// other tables: two generations of at most [`MAX_ENTRIES`]).
pub fn remember_kinds(digest: &[u8; 32], kinds: Kinds) {
    if bypass() {
        return;
    }
    memo().remember_kinds(digest, kinds);
}

/// Approximate heap bytes of one remembered entry.
fn entry_bytes(path: &str, found: &[Finding]) -> usize {
    128 + path.len()
        + found
            .iter()
            .map(|f| {
                let owned = match &f.message {
                    std::borrow::Cow::Owned(m) => m.len(),
                    std::borrow::Cow::Borrowed(_) => 0,
                };
                std::mem::size_of::<Finding>() + f.file.len() + owned
            })
            .sum::<usize>()
}

/// Remembers the findings of the document `(path, digest)` under `opts`.
pub fn remember_findings(path: &str, digest: &[u8; 32], opts: &DocOptions, found: Arc<[Finding]>) {
    if bypass() {
        return;
    }
    memo().remember(path, digest, opts, found);
}

/// Forgets everything (benchmarks measure a first request with it; tests compare).
pub fn clear() {
    *memo() = Memo::default();
}

/// Number of remembered (clean digests, findings entries), both generations.
#[must_use]
pub fn len() -> (usize, usize) {
    let m = memo();
    (
        m.clean.len() + m.clean_previous.len(),
        m.findings.len + m.findings_previous.len,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::Severity;

    fn opts(v02: bool) -> DocOptions {
        DocOptions {
            strict: false,
            v02,
            temporal_profile: Profile::default(),
            as_of: None,
        }
    }

    #[test]
    fn findings_are_keyed_by_path_digest_and_options() {
        let d = [7u8; 32];
        let f: Arc<[Finding]> = Arc::from(vec![Finding {
            file: "memo-test/a.md".into(),
            code: "missing_type",
            message: "m".into(),
            severity: Severity::Error,
        }]);
        remember_findings("memo-test/a.md", &d, &opts(true), Arc::clone(&f));
        assert_eq!(
            findings("memo-test/a.md", &d, &opts(true)).as_deref(),
            Some(&*f)
        );
        assert!(findings("memo-test/a.md", &d, &opts(false)).is_none());
        assert!(findings("memo-test/b.md", &d, &opts(true)).is_none());
        assert!(findings("memo-test/a.md", &[8u8; 32], &opts(true)).is_none());
    }

    #[test]
    fn a_fact_survives_the_next_max_entries_insertions_and_the_bounds_hold() {
        let key = |i: usize| {
            let mut d = [0u8; 32];
            d[..8].copy_from_slice(&(i as u64).to_le_bytes());
            d
        };
        let none: Arc<[Finding]> = Arc::from(Vec::new());
        // A local memo: the process-wide one is shared with concurrent tests.
        let mut m = Memo::default();
        m.mark_clean(&[key(0)]);
        m.remember("a.md", &key(0), &opts(true), Arc::clone(&none));
        for i in 1..=MAX_ENTRIES {
            m.mark_clean(&[key(i)]);
            m.remember("a.md", &key(i), &opts(true), Arc::clone(&none));
        }
        // Entry 0 was rotated into the previous generation, not dropped.
        assert!(m.is_clean(&key(0)));
        assert!(m.findings("a.md", &key(0), &opts(true)).is_some());
        assert_eq!(m.clean.len(), 1);
        assert_eq!(m.clean_previous.len(), MAX_ENTRIES);
        // The next MAX_ENTRIES insertions drop it; the bound is twice MAX_ENTRIES.
        for i in MAX_ENTRIES + 1..=2 * MAX_ENTRIES {
            m.mark_clean(&[key(i)]);
            m.remember("a.md", &key(i), &opts(true), Arc::clone(&none));
        }
        assert!(!m.is_clean(&key(0)));
        assert!(m.findings("a.md", &key(0), &opts(true)).is_none());
        assert!(m.clean.len() + m.clean_previous.len() <= 2 * MAX_ENTRIES);
        assert!(m.findings.len + m.findings_previous.len <= 2 * MAX_ENTRIES);
        assert!(m.is_clean(&key(2 * MAX_ENTRIES)));
        // Re-remembering a known fact adds nothing.
        let before = m.findings.len;
        m.remember("a.md", &key(2 * MAX_ENTRIES), &opts(true), none);
        assert_eq!(m.findings.len, before);
    }

    #[test]
    fn identical_documents_under_several_paths_keep_their_own_findings() {
        let d = [11u8; 32];
        let one = |code: &'static str| -> Arc<[Finding]> {
            Arc::from(vec![Finding {
                file: String::new(),
                code,
                message: "m".into(),
                severity: Severity::Warn,
            }])
        };
        let mut m = Memo::default();
        m.remember("a.md", &d, &opts(true), one("a"));
        m.remember("a.md", &d, &opts(false), one("a0"));
        m.remember("b.md", &d, &opts(true), one("b"));
        m.remember("c.md", &d, &opts(true), one("c"));
        let code = |p: &str, v02: bool| m.findings(p, &d, &opts(v02)).map(|f| f[0].code);
        assert_eq!(code("a.md", true), Some("a"));
        assert_eq!(code("a.md", false), Some("a0"));
        assert_eq!(code("b.md", true), Some("b"));
        assert_eq!(code("c.md", true), Some("c"));
        assert_eq!(code("b.md", false), None);
        assert_eq!(code("d.md", true), None);
        assert_eq!(m.findings.len, 4);
    }

    #[test]
    fn clean_digests_are_remembered() {
        let d = [9u8; 32];
        mark_clean(&[d]);
        assert!(is_clean(&d));
        assert_eq!(clean_flags(&[&d, &[10u8; 32]]), vec![true, false]);
    }

    #[test]
    fn remember_clean_is_mark_clean_and_remember_findings() {
        // A local memo: the process-wide one is cleared by concurrent tests.
        let mut m = Memo::default();
        let d = [12u8; 32];
        let path = "memo-test/clean.md";
        assert!(!m.knows(path, &d, &opts(true)));
        // Findings alone, or a clean digest alone, are not enough.
        m.remember(path, &d, &opts(true), Arc::from(Vec::new()));
        assert!(!m.knows(path, &d, &opts(true)));
        let c = [14u8; 32];
        m.mark_clean(&[c]);
        assert!(!m.knows(path, &c, &opts(true)));
        let e = [13u8; 32];
        m.remember_clean(path, &e, &opts(true), Arc::from(Vec::new()));
        assert!(m.is_clean(&e));
        assert!(m.findings(path, &e, &opts(true)).is_some());
        assert!(m.knows(path, &e, &opts(true)));
        assert!(!m.knows(path, &e, &opts(false)));
        assert!(!m.knows("memo-test/other.md", &e, &opts(true)));
    }

    #[test]
    fn the_digest_hasher_spreads_digest_keys() {
        use std::hash::BuildHasher;
        let h = DigestHash::default();
        let a = h.hash_one([1u8; 32]);
        let b = h.hash_one([2u8; 32]);
        let mut c = [1u8; 32];
        c[31] = 2;
        assert_ne!(a, b);
        assert_ne!(a, h.hash_one(c), "every byte counts");
        assert_eq!(a, h.hash_one([1u8; 32]));
        // The low bits (the bucket index) depend on the first byte too (the final mixer).
        let mut e = [1u8; 32];
        e[0] = 2;
        assert_ne!(a & 0xffff, h.hash_one(e) & 0xffff);
        // Seeded: another seed gives another hash.
        assert_ne!(a, DigestHash(h.0 ^ 1).hash_one([1u8; 32]));
    }
}
