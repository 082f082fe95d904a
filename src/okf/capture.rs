//! The value of a capture (spec/store.md §3): the visible tree of a bundle, sorted by path
//! bytes, with its revision (§3.6). Produced by the store's walk ([`crate::store::capture`])
//! or built in memory ([`Capture::from_files`], [`overlay_capture`]); read by the OKF layer,
//! the planners and the store's compare-and-swap. Pure: no I/O.
//!
//! A file's bytes are resident unless the walk spilled them (docs/store.md §3.2); reading a
//! spilled file's bytes marks the capture as missed ([`Capture::missed`]).

use crate::digest;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The stat tuple of a file as a capture read it (spec/store.md §17 rule 1): identity, size,
/// modification and change times in nanoseconds, and mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatStamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub mode: u32,
}

/// One visible regular file.
///
/// Its bytes are **resident** (held in memory) unless the capture was taken with a
/// [`Spill`] that let them go after visiting them; a spilled file keeps its path, size and
/// digest. Reading the bytes of a spilled file through [`CapturedFile::bytes`] yields an empty
/// slice and marks the capture as missed ([`Capture::missed`]), so a caller discards whatever
/// it computed and captures again with every file resident.
#[derive(Debug, Clone)]
pub struct CapturedFile {
    /// Bundle-relative path (spec/store.md §3.2).
    pub path: String,
    /// The exact bytes read (empty when spilled), shared with the warm cache of a
    /// long-running server (spec/store.md §17) and never copied.
    bytes: Arc<Vec<u8>>,
    /// Length of the bytes read, in bytes (also when spilled).
    pub size: u64,
    /// `H(bytes)`: raw SHA-256 (spec/store.md §3.6 step 1).
    pub digest: [u8; 32],
    /// `Some(miss flag of the capture)` when the bytes were spilled.
    spilled: Option<Arc<AtomicBool>>,
    /// The stat tuple of the handle the capture read, when it is not racy (spec/store.md §17
    /// rule 2): a later read in the same call whose handle has this tuple reads the same
    /// bytes. `None` for files built in memory and racy files. Not part of equality.
    stamp: Option<StatStamp>,
}

impl CapturedFile {
    /// A resident file.
    #[must_use]
    pub fn new(path: String, bytes: Vec<u8>) -> Self {
        let digest = digest::sha256(&bytes);
        Self {
            path,
            size: bytes.len() as u64,
            bytes: Arc::new(bytes),
            digest,
            spilled: None,
            stamp: None,
        }
    }

    /// A file read by the capture walk: `bytes` resident, or (with `spilled` = the miss flag of
    /// its capture) dropped after the visit, keeping `size` and `digest`.
    pub(crate) fn read(
        path: String,
        bytes: Arc<Vec<u8>>,
        size: u64,
        digest: [u8; 32],
        spilled: Option<Arc<AtomicBool>>,
    ) -> Self {
        Self {
            path,
            bytes,
            size,
            digest,
            spilled,
            stamp: None,
        }
    }

    /// Records the stat tuple a capture found not racy (spec/store.md §17 rule 2).
    pub(crate) fn set_stamp(&mut self, stamp: Option<StatStamp>) {
        self.stamp = stamp;
    }

    /// The trusted stat tuple of the read, if any (see the field).
    #[must_use]
    pub fn stamp(&self) -> Option<&StatStamp> {
        self.stamp.as_ref()
    }

    /// The exact bytes read. For a spilled file: the empty slice, and the capture is marked
    /// as missed (see the type's docs).
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        if let Some(miss) = &self.spilled {
            miss.store(true, Ordering::Relaxed);
        }
        &self.bytes
    }

    /// The bytes read, shared (never copied): for work that outlives the capture, such as a
    /// warm server's indexes. Empty for a spilled file, which marks the capture as missed.
    #[must_use]
    pub fn shared_bytes(&self) -> Arc<Vec<u8>> {
        if let Some(miss) = &self.spilled {
            miss.store(true, Ordering::Relaxed);
        }
        Arc::clone(&self.bytes)
    }

    /// Whether the bytes are held in memory.
    #[must_use]
    pub fn is_resident(&self) -> bool {
        self.spilled.is_none()
    }
}

impl PartialEq for CapturedFile {
    /// Same path, size, digest and residency (the bytes of two resident files with equal
    /// digests are compared too); the stat tuple is not content and is not compared.
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
            && self.size == other.size
            && self.digest == other.digest
            && self.is_resident() == other.is_resident()
            && self.bytes == other.bytes
    }
}

impl Eq for CapturedFile {}

/// The visible tree, sorted by path bytes, with its revision.
#[derive(Debug, Clone)]
pub struct Capture {
    /// Every visible file, ascending by path bytes.
    pub files: Vec<CapturedFile>,
    /// `sha256:<64 hex>` (spec/store.md §3.6).
    pub revision: String,
    /// Set once the bytes of a spilled file were asked for (shared with its files).
    miss: Arc<AtomicBool>,
}

impl PartialEq for Capture {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files && self.revision == other.revision
    }
}

impl Eq for Capture {}

impl Capture {
    /// Builds a capture from in-memory files (tests, overlays); sorts by path bytes and
    /// computes the revision of spec/store.md §3.6. Paths are taken as given (no grammar
    /// check). Every file is resident.
    #[must_use]
    pub fn from_files(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> Self {
        let mut files: Vec<CapturedFile> = files
            .into_iter()
            .map(|(path, bytes)| CapturedFile::new(path, bytes))
            .collect();
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        let revision = digest::revision(files.iter().map(|f| (f.path.as_str(), &f.digest)));
        Self {
            files,
            revision,
            miss: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The capture of a walk: `files` sorted by path bytes, their `revision`, and the miss
    /// flag the spilled files share.
    pub(crate) fn walked(
        files: Vec<CapturedFile>,
        revision: String,
        miss: Arc<AtomicBool>,
    ) -> Self {
        Self {
            files,
            revision,
            miss,
        }
    }

    /// The file at `path`, if visible.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&CapturedFile> {
        self.files
            .binary_search_by(|f| f.path.as_bytes().cmp(path.as_bytes()))
            .ok()
            .map(|i| &self.files[i])
    }

    /// Total bytes of all visible files.
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Whether the bytes of a spilled file were asked for since the capture was taken: a
    /// result computed from this capture may then be wrong and MUST be discarded (capture
    /// again without a [`Spill`]). Always false for a capture with every file resident.
    #[must_use]
    pub fn missed(&self) -> bool {
        self.miss.load(Ordering::Relaxed)
    }

    /// Whether every file's bytes are held in memory.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.files.iter().all(CapturedFile::is_resident)
    }
}

/// `capture` with `writes` applied (replaced or added; a repeated path: the last write wins),
/// re-hashed: the staged bundle of a plan as a capture of its own, with every file resident
/// (the bytes of every base file are read, so a spilled `capture` reports
/// [`Capture::missed`]).
#[must_use]
pub fn overlay_capture(capture: &Capture, writes: &[(String, Vec<u8>)]) -> Capture {
    let mut files: std::collections::BTreeMap<String, Vec<u8>> = capture
        .files
        .iter()
        .map(|f| (f.path.clone(), f.bytes().to_vec()))
        .collect();
    for (p, b) in writes {
        files.insert(p.clone(), b.clone());
    }
    Capture::from_files(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_with_equals_the_revision_of_the_overlay_capture() {
        let base = Capture::from_files([
            ("b.md".to_owned(), b"b".to_vec()),
            ("a/x.md".to_owned(), b"x".to_vec()),
            ("index.md".to_owned(), b"i".to_vec()),
        ]);
        let writes = vec![
            ("b.md".to_owned(), b"B1".to_vec()),
            ("a/new.md".to_owned(), b"n".to_vec()),
            ("b.md".to_owned(), b"B2".to_vec()),
            ("z".to_owned(), Vec::new()),
        ];
        let overlay = Capture::from_files([
            ("b.md".to_owned(), b"B2".to_vec()),
            ("a/x.md".to_owned(), b"x".to_vec()),
            ("index.md".to_owned(), b"i".to_vec()),
            ("a/new.md".to_owned(), b"n".to_vec()),
            ("z".to_owned(), Vec::new()),
        ]);
        let digests = || base.files.iter().map(|f| (f.path.as_str(), &f.digest));
        assert_eq!(digest::revision_with(digests(), &writes), overlay.revision);
        assert_ne!(overlay.revision, base.revision);
        // No writes: the base revision; a write of identical bytes: also the base revision.
        assert_eq!(digest::revision_with(digests(), &[]), base.revision);
        let same = vec![("b.md".to_owned(), b"b".to_vec())];
        assert_eq!(digest::revision_with(digests(), &same), base.revision);
    }
}
