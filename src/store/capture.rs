//! Capture: one bounded, symlink-refusing, in-memory read of the visible tree and its
//! revision (spec/store.md §3). With a [`Spill`], only the files it keeps stay in memory
//! (the others keep path, size and digest; docs/store.md §3.2).
//!
//! The walk starts at the pinned root handle ([`Root`]) and visits the entries of each
//! directory in ascending byte order of their names. Every entry is `lstat`ed relative to its
//! already-open parent handle; directories are opened with no-follow and identity-checked
//! before descending; regular files are opened with no-follow, read-only, close-on-exec and
//! non-blocking flags, and the handle is re-checked to be a regular file with the identity the
//! `lstat` saw (spec/store.md §3.7). Nothing is ever followed and no open can block.
//!
//! Invariants:
//! - The recursion depth is bounded by [`MAX_PATH_COMPONENTS`]: an entry whose path would
//!   exceed it fails before it is opened.
//! - Limits of spec/store.md §3.3 are checked on the `lstat` size before a file is read, and
//!   again on the bytes read (a file growing after its `lstat` cannot exceed them).
//! - Error messages carry at most a bundle-relative path (spec/store.md §3.1); a path that is
//!   not representable (spec/store.md §3.2 rules 1–2) is never echoed.

use crate::cancel::Cancel;
use crate::plan::digest;
use crate::store::root::{same_identity, Root};
use crate::wire::envelope::{codes, Diagnostic, Severity, ToolError};
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, Metadata, OpenOptions};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Visible-file limit: at most 10,000 visible files (spec/store.md §3.3).
pub const MAX_FILES: usize = 10_000;
/// Per-file limit: at most 16 MiB = 16,777,216 bytes (spec/store.md §3.3).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Total-bytes limit: at most 64 MiB = 67,108,864 bytes over all visible files.
pub const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Path limit in bytes of a bundle-relative path (spec/store.md §3.2 rule 3).
pub const MAX_PATH_BYTES: usize = 4096;
/// Path limit in components of a bundle-relative path (spec/store.md §3.2 rule 3).
pub const MAX_PATH_COMPONENTS: usize = 64;

/// Message of a visible path that violates spec/store.md §3.2 rules 1–2 (path not echoed).
pub const MSG_UNREPRESENTABLE: &str = "bundle contains a path that cannot be represented";
/// Message prefix of a symlink in the bundle; `: <path>` follows (spec/store.md §3.1).
pub const MSG_SYMLINK: &str = "bundle contains a symlink";
/// Message prefix of a FIFO, socket or device in the bundle; `: <path>` follows.
pub const MSG_UNSUPPORTED: &str = "bundle contains an unsupported file type";
/// Diagnostic code of a refused symlink (spec/store.md §3.1).
pub const DIAG_SYMLINK: &str = "symlink_refused";
/// Diagnostic code of a refused FIFO, socket or device (spec/store.md §3.1).
pub const DIAG_UNSUPPORTED: &str = "unsupported_file_type";

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
    /// The exact bytes read (empty when spilled).
    bytes: Vec<u8>,
    /// Length of the bytes read, in bytes (also when spilled).
    pub size: u64,
    /// `H(bytes)`: raw SHA-256 (spec/store.md §3.6 step 1).
    pub digest: [u8; 32],
    /// `Some(miss flag of the capture)` when the bytes were spilled.
    spilled: Option<Arc<AtomicBool>>,
}

impl CapturedFile {
    /// A resident file.
    #[must_use]
    pub fn new(path: String, bytes: Vec<u8>) -> Self {
        let digest = digest::sha256(&bytes);
        Self {
            path,
            size: bytes.len() as u64,
            bytes,
            digest,
            spilled: None,
        }
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

    /// Whether the bytes are held in memory.
    #[must_use]
    pub fn is_resident(&self) -> bool {
        self.spilled.is_none()
    }
}

impl PartialEq for CapturedFile {
    /// Same path, size, digest and residency (the bytes of two resident files with equal
    /// digests are compared too).
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

/// What a capture keeps in memory of each file it reads: the bytes of a file are dropped
/// right after `visit` returned `false` for it (the path, size and digest stay). `visit`
/// runs on the capture's reading threads with the bundle-relative path, the bytes and their
/// SHA-256, once per file read; it MUST be pure apart from remembering results (a capture
/// that fails later may already have visited some files).
///
/// Spilling bounds the memory of a capture by the file list plus the files kept, instead
/// of the bundle's size; callers that need other files' bytes read them through
/// [`CapturedFile::bytes`] and get [`Capture::missed`].
pub struct Spill<'a> {
    /// `true`: keep the bytes.
    pub visit: &'a SpillVisit<'a>,
}

/// The visit of a [`Spill`]: `(bundle-relative path, bytes read, their SHA-256)` → keep?
pub type SpillVisit<'v> = dyn Fn(&str, &[u8], &[u8; 32]) -> bool + Sync + 'v;

impl Spill<'_> {
    /// A spill that keeps no file's bytes (revision and manifest only).
    pub const DIGESTS_ONLY: Spill<'static> = Spill {
        visit: &|_, _, _| false,
    };
}

/// Batches smaller than this are read on the calling thread (thread start-up would cost more
/// than it saves).
const PARALLEL_MIN_FILES: usize = 64;

/// At most this many parent directories (counted as changes of parent between consecutive
/// pending files, an upper bound) are held open by files waiting for their read; the batch is
/// read before the walk goes on, so open handles stay bounded whatever the tree's shape.
const MAX_PENDING_DIRS: usize = 256;

/// At most this many files wait for their read: the walk's bookkeeping (names, `lstat`
/// metadata, read results) stays bounded, so a capture's memory beyond the files it keeps is
/// the file list itself (docs/store.md §3.2).
const MAX_PENDING_FILES: usize = 4096;

/// At most this many threads read files (the target machine has 2 cores).
const MAX_READ_THREADS: usize = 2;

/// A regular file seen by the walk's `lstat`, waiting for its open and read.
struct Job {
    /// Parent directory handle; `None` is the root handle.
    dir: Option<Arc<Dir>>,
    /// Name within the parent (representable, checked by the walk).
    name: String,
    /// Bundle-relative path.
    path: String,
    /// What `lstat` saw (type regular file, identity, size).
    meta: Metadata,
}

/// One file read: its bytes (at most the budget + 1; empty once spilled), their length and
/// SHA-256, and whether the bytes are kept.
struct FileRead {
    bytes: Vec<u8>,
    len: u64,
    digest: [u8; 32],
    keep: bool,
}

/// A read, or the read-phase error.
type ReadResult = Result<FileRead, ToolError>;

/// The capture in progress: phase (a), the walk, appends [`Job`]s to `pending`; phase (b)
/// ([`Walk::flush`]) reads them, on two threads for a large batch, and accepts them in walk
/// order with exactly the checks of a one-file-at-a-time capture.
struct Walk<'a> {
    root: &'a Dir,
    cancel: &'a Cancel,
    /// Accepted files, in walk order.
    files: Vec<CapturedFile>,
    /// Bytes actually read of `files`.
    total: u64,
    /// Files found by the walk and not yet read, in walk order (all after `files`).
    pending: Vec<Job>,
    /// Sum of the `lstat` sizes of `pending`.
    pending_bytes: u64,
    /// Upper bound of the directories `pending` holds open.
    pending_dirs: usize,
    /// 1: each file is read right after its `lstat`, on the calling thread.
    threads: usize,
    /// `None`: every file stays resident.
    spill: Option<&'a Spill<'a>>,
    /// The miss flag shared by the capture and its spilled files.
    miss: Arc<AtomicBool>,
    #[cfg(feature = "fault-injection")]
    hooks: crate::store::hooks::CaptureHooks,
}

/// Captures the visible tree under `root` (spec/store.md §3.1–§3.3, §3.7).
///
/// Checks cancellation before the walk, after each file read and after the walk
/// (spec/store.md §14). Root-level `.okf` and `.git` entries of any type are skipped; every
/// other entry is walked. Never writes anything.
///
/// The walk (names, types, limits on the `lstat` sizes, directory identity) runs on the
/// calling thread; the opens, reads and SHA-256 of the regular files it found run on up to
/// two threads when there are at least 64 of them. The result, and the error when there
/// are several problems (the first in walk order), are those of a capture that reads each
/// file right after its `lstat`. With a fault-injection capture hook active every file is
/// read on the calling thread right after its `lstat`.
///
/// # Errors
/// - `invalid_request` `bundle contains a symlink: <path>` with one `symlink_refused`
///   diagnostic whose `file` is the path;
/// - `invalid_request` `bundle contains an unsupported file type: <path>` with one
///   `unsupported_file_type` diagnostic (FIFO, socket, block or character device, also when
///   swapped in between `lstat` and open);
/// - `invalid_request` [`MSG_UNREPRESENTABLE`] for a name that is not UTF-8 or contains `\`
///   or a control character (the path is not echoed);
/// - `resource_limit` for the limits of spec/store.md §3.3;
/// - `operation_cancelled` at a checkpoint;
/// - `operation_rejected` when the tree cannot be read or changes under the walk in a way
///   none of the above describes (an entry vanished or was replaced by another file).
pub fn capture(root: &Root, cancel: &Cancel) -> Result<Capture, ToolError> {
    capture_with(root, cancel, None)
}

/// [`capture`] that keeps in memory only the bytes of the files `spill` asks for (every file
/// when `spill` is `None`). Same walk, checks, errors, revision and file list; the spilled
/// files have their size and digest only.
///
/// # Errors
/// As [`capture`].
pub fn capture_with(
    root: &Root,
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
) -> Result<Capture, ToolError> {
    cancel.check()?;
    #[cfg(feature = "fault-injection")]
    let hooks = crate::store::hooks::current();
    #[cfg(feature = "fault-injection")]
    let hooked = hooks.cancel_after_files.is_some() || hooks.swap.is_some();
    #[cfg(not(feature = "fault-injection"))]
    let hooked = false;
    let threads = if hooked {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_READ_THREADS))
    };
    let mut w = Walk {
        root: &root.dir,
        cancel,
        files: Vec::new(),
        total: 0,
        pending: Vec::new(),
        pending_bytes: 0,
        pending_dirs: 0,
        threads,
        spill,
        miss: Arc::new(AtomicBool::new(false)),
        #[cfg(feature = "fault-injection")]
        hooks,
    };
    let walked = walk_dir(&root.dir, None, "", 0, &mut w);
    // The files found before a walk problem come first in walk order: their reads decide.
    w.flush()?;
    walked?;
    cancel.check()?;
    let mut files = w.files;
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let revision = digest::revision(files.iter().map(|f| (f.path.as_str(), &f.digest)));
    Ok(Capture {
        files,
        revision,
        miss: w.miss,
    })
}

fn unreadable() -> ToolError {
    ToolError::new(codes::OPERATION_REJECTED, "bundle could not be read")
}

fn changed() -> ToolError {
    ToolError::new(
        codes::OPERATION_REJECTED,
        "bundle changed while it was captured",
    )
}

fn limit_files() -> ToolError {
    ToolError::resource_limit("bundle has more than 10000 visible files")
}

fn limit_file_size() -> ToolError {
    ToolError::resource_limit("a bundle file exceeds 16 MiB")
}

fn limit_total() -> ToolError {
    ToolError::resource_limit("bundle exceeds 64 MiB in total")
}

fn limit_path() -> ToolError {
    ToolError::resource_limit("a bundle path exceeds 4096 bytes or 64 components")
}

/// The refusal of spec/store.md §3.1 for a symlink or special file at `path`.
fn refused(code: &str, what: &str, path: &str) -> ToolError {
    ToolError::invalid_request(format!("{what}: {path}"))
        .with_diagnostic(Diagnostic::new(code, Severity::Error, what).with_file(path))
}

fn symlink_at(path: &str) -> ToolError {
    refused(DIAG_SYMLINK, MSG_SYMLINK, path)
}

fn unsupported_at(path: &str) -> ToolError {
    refused(DIAG_UNSUPPORTED, MSG_UNSUPPORTED, path)
}

/// The refusal for a non-regular, non-directory entry type.
fn refuse_type(meta: &Metadata, path: &str) -> ToolError {
    if meta.file_type().is_symlink() {
        symlink_at(path)
    } else {
        unsupported_at(path)
    }
}

/// A name is representable when it is UTF-8 without `\` and control characters
/// (spec/store.md §3.2 rules 1–2; `.`/`..`/empty never come out of a directory listing).
fn representable(name: &OsString) -> Option<&str> {
    let s = name.to_str()?;
    if s.is_empty()
        || s == "."
        || s == ".."
        || s.chars()
            .any(|c| c == '\\' || c <= '\u{1f}' || c == '\u{7f}')
    {
        return None;
    }
    Some(s)
}

/// After a failed open of an entry `lstat` saw as `expected`, classifies what is there now.
fn after_failed_open(dir: &Dir, name: &str, path: &str) -> ToolError {
    match dir.symlink_metadata(name) {
        Ok(m) if m.file_type().is_symlink() => symlink_at(path),
        Ok(m) if !m.is_file() && !m.is_dir() => unsupported_at(path),
        Ok(_) => unreadable(),
        Err(_) => changed(),
    }
}

fn walk_dir(
    dir: &Dir,
    owner: Option<&Arc<Dir>>,
    prefix: &str,
    depth: usize,
    w: &mut Walk<'_>,
) -> Result<(), ToolError> {
    let mut names: Vec<OsString> = Vec::new();
    for entry in dir.entries().map_err(|_| unreadable())? {
        names.push(entry.map_err(|_| unreadable())?.file_name());
    }
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    for raw in &names {
        if depth == 0 && (raw.as_bytes() == b".okf" || raw.as_bytes() == b".git") {
            continue;
        }
        let name =
            representable(raw).ok_or_else(|| ToolError::invalid_request(MSG_UNREPRESENTABLE))?;
        let path = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        if path.len() > MAX_PATH_BYTES || depth + 1 > MAX_PATH_COMPONENTS {
            return Err(limit_path());
        }
        let meta = dir.symlink_metadata(name).map_err(|_| changed())?;
        let ft = meta.file_type();
        if ft.is_dir() {
            let sub = dir
                .open_dir_nofollow(name)
                .map_err(|_| after_failed_open(dir, name, &path))?;
            let opened = sub.dir_metadata().map_err(|_| unreadable())?;
            if !same_identity(&meta, &opened) {
                return Err(changed());
            }
            let sub = Arc::new(sub);
            walk_dir(&sub, Some(&sub), &path, depth + 1, w)?;
            continue;
        }
        if !ft.is_file() {
            return Err(refuse_type(&meta, &path));
        }
        w.push(Job {
            dir: owner.cloned(),
            name: name.to_owned(),
            path,
            meta,
        })?;
    }
    Ok(())
}

impl Walk<'_> {
    /// Queues one regular file after the limit checks a one-file-at-a-time capture makes
    /// before reading it: file count, then the `lstat` size against the per-file limit, then
    /// against the total (on the bytes actually read before it: the queue is read first when
    /// the `lstat` sizes alone would exceed the total). An error here is a walk problem at
    /// this file; the caller reads the queue first.
    fn push(&mut self, job: Job) -> Result<(), ToolError> {
        if self.files.len() + self.pending.len() >= MAX_FILES {
            return Err(limit_files());
        }
        let len = job.meta.len();
        if len > MAX_FILE_BYTES {
            return Err(limit_file_size());
        }
        if self.total + self.pending_bytes + len > MAX_TOTAL_BYTES {
            self.flush()?;
            if self.total + len > MAX_TOTAL_BYTES {
                return Err(limit_total());
            }
        }
        let same_parent = self
            .pending
            .last()
            .is_some_and(|last| match (&last.dir, &job.dir) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            });
        if !same_parent {
            self.pending_dirs += 1;
        }
        self.pending_bytes += len;
        self.pending.push(job);
        if self.threads < 2
            || self.pending_dirs >= MAX_PENDING_DIRS
            || self.pending.len() >= MAX_PENDING_FILES
        {
            self.flush()?;
        }
        Ok(())
    }

    /// Phase (b): reads every queued file and accepts it in walk order; the first problem
    /// in walk order is returned. The queue is empty afterwards, also on error.
    fn flush(&mut self) -> Result<(), ToolError> {
        let jobs = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        self.pending_dirs = 0;
        if self.threads < 2 || jobs.len() < PARALLEL_MIN_FILES {
            let mut scratch = Vec::new();
            for job in jobs {
                self.check_total(&job)?;
                let dir = job.dir.as_deref().unwrap_or(self.root);
                #[cfg(feature = "fault-injection")]
                self.hooks.after_lstat(dir, &job.name, &job.path);
                let budget = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES.saturating_sub(self.total));
                let read = read_one(dir, &job, budget, self.spill, &mut scratch);
                self.accept(job, read)?;
            }
            return Ok(());
        }
        let reads = read_parallel(self.root, &jobs, self.cancel, self.spill);
        for (job, read) in jobs.into_iter().zip(reads) {
            self.check_total(&job)?;
            let read = read.unwrap_or_else(|| {
                // Not read: a worker stopped after a cancellation or an earlier error, which
                // the loop meets first; kept total for robustness.
                Err(if self.cancel.is_cancelled() {
                    ToolError::cancelled()
                } else {
                    unreadable()
                })
            });
            self.accept(job, read)?;
        }
        Ok(())
    }

    /// The total-bytes check on the `lstat` size, made just before the file is read.
    fn check_total(&self, job: &Job) -> Result<(), ToolError> {
        if self.total + job.meta.len() > MAX_TOTAL_BYTES {
            return Err(limit_total());
        }
        Ok(())
    }

    /// Accepts one read in walk order: the per-file and total limits on the bytes read, as
    /// if at most `min(16 MiB, 64 MiB − bytes accepted) + 1` bytes had been read, then the
    /// per-file cancellation checkpoint.
    fn accept(&mut self, job: Job, read: ReadResult) -> Result<(), ToolError> {
        let read = read?;
        let budget = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES.saturating_sub(self.total));
        let n = read.len.min(budget + 1);
        if n > MAX_FILE_BYTES {
            return Err(limit_file_size());
        }
        if self.total + n > MAX_TOTAL_BYTES {
            return Err(limit_total());
        }
        // Both checks passed, so n <= budget and n is the whole of the bytes read.
        self.total += n;
        self.files.push(CapturedFile {
            path: job.path,
            bytes: read.bytes,
            size: read.len,
            digest: read.digest,
            spilled: (!read.keep).then(|| Arc::clone(&self.miss)),
        });
        #[cfg(feature = "fault-injection")]
        self.hooks.after_file_read(self.files.len(), self.cancel);
        self.cancel.check()
    }
}

/// Opens `job` in `dir` (no-follow, read-only, non-blocking), re-checks type and identity
/// against its `lstat`, reads at most `budget + 1` bytes and hashes them; with a `spill`,
/// visits them and drops them unless the visit keeps them (an over-limit read, which the
/// walk then refuses, is neither visited nor kept).
fn read_one(
    dir: &Dir,
    job: &Job,
    budget: u64,
    spill: Option<&Spill<'_>>,
    scratch: &mut Vec<u8>,
) -> ReadResult {
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No).nonblock(true);
    let file = dir
        .open_with(&job.name, &opts)
        .map_err(|_| after_failed_open(dir, &job.name, &job.path))?;
    let opened = file.metadata().map_err(|_| unreadable())?;
    if !opened.is_file() {
        return Err(refuse_type(&opened, &job.path));
    }
    if !same_identity(&job.meta, &opened) {
        return Err(changed());
    }
    // A spilled read goes to the thread's scratch buffer, which is handed back unless the
    // file is kept; a resident read gets its own buffer.
    let mut bytes = if spill.is_some() {
        std::mem::take(scratch)
    } else {
        Vec::new()
    };
    bytes.clear();
    // Sized from the lstat length (at most 16 MiB, checked by the walk) plus one byte for the
    // end-of-file read, so a file that did not grow since its lstat is read without
    // reallocating; growth is bounded by the budget.
    bytes.reserve(
        usize::try_from(job.meta.len())
            .unwrap_or(0)
            .saturating_add(1),
    );
    // Through std's `File`, whose `read_buf` lets `read_to_end` fill the spare capacity
    // without zeroing it first (cap-std's `File` has no `read_buf`).
    file.into_std()
        .take(budget + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| unreadable())?;
    let digest = digest::sha256(&bytes);
    let len = bytes.len() as u64;
    let keep = match spill {
        None => true,
        Some(_) if len > budget => false,
        Some(s) => (s.visit)(&job.path, &bytes, &digest),
    };
    if !keep {
        bytes.clear();
        *scratch = bytes;
        bytes = Vec::new();
    } else if bytes.capacity() > bytes.len().saturating_mul(2).max(64 * 1024) {
        // A kept file that landed in a scratch buffer grown by a larger earlier file.
        bytes.shrink_to_fit();
    }
    Ok(FileRead {
        bytes,
        len,
        digest,
        keep,
    })
}

/// Reads `jobs` on the calling thread and one more (when it can be started), each taking the
/// next unread index. A thread stops once the request is cancelled (checked after each read)
/// or once a job at a lower index than its next one failed. Reads use the per-file budget
/// only; [`Walk::accept`] applies the total. `None`: not read.
fn read_parallel(
    root: &Dir,
    jobs: &[Job],
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
) -> Vec<Option<ReadResult>> {
    let next = AtomicUsize::new(0);
    let first_error = AtomicUsize::new(usize::MAX);
    let work = || {
        let mut out: Vec<(usize, ReadResult)> = Vec::new();
        let mut scratch = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= jobs.len() || i > first_error.load(Ordering::Relaxed) {
                break;
            }
            let job = &jobs[i];
            let read = read_one(
                job.dir.as_deref().unwrap_or(root),
                job,
                MAX_FILE_BYTES,
                spill,
                &mut scratch,
            );
            if read.is_err() {
                first_error.fetch_min(i, Ordering::Relaxed);
            }
            out.push((i, read));
            if cancel.is_cancelled() {
                break;
            }
        }
        out
    };
    let mut reads: Vec<Option<ReadResult>> = Vec::new();
    reads.resize_with(jobs.len(), || None);
    std::thread::scope(|s| {
        let other = std::thread::Builder::new().spawn_scoped(s, work);
        let mut done = work();
        // A helper that could not start leaves its jobs unread (`None`); jobs it never took
        // were read here. A panic of the helper (only a spill visit can panic) is re-raised
        // here, as the same panic on this thread would be, rather than turned into a read
        // error.
        match other.map(std::thread::ScopedJoinHandle::join) {
            Ok(Ok(more)) => done.extend(more),
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => {}
        }
        for (i, read) in done {
            reads[i] = Some(read);
        }
    });
    reads
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their own temp trees
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn open(p: &Path) -> Root {
        crate::store::root::open(p.to_str().expect("utf-8")).expect("root")
    }

    fn cap(p: &Path) -> Result<Capture, ToolError> {
        capture(&open(p), &Cancel::new())
    }

    #[test]
    fn visits_in_byte_order_and_skips_only_root_private_entries() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        for d in [".okf/x", ".git/objects", "x/.okf", "x/.git", ".hidden"] {
            fs::create_dir_all(b.join(d)).expect("mkdir");
        }
        for f in [
            "B.md",
            "a.md",
            "é.md",
            "Z",
            ".okf/x/r",
            ".git/HEAD",
            "x/.okf/s",
            "x/.git/t",
            ".hidden/h",
        ] {
            fs::write(b.join(f), f.as_bytes()).expect("write");
        }
        let c = cap(b).expect("capture");
        let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                ".hidden/h",
                "B.md",
                "Z",
                "a.md",
                "x/.git/t",
                "x/.okf/s",
                "é.md"
            ]
        );
        assert_eq!(c.get("a.md").map(CapturedFile::bytes), Some(&b"a.md"[..]));
        assert_eq!(
            c.total_bytes(),
            paths.iter().map(|p| p.len() as u64).sum::<u64>()
        );
        let expected = Capture::from_files(
            paths
                .iter()
                .map(|p| ((*p).to_owned(), p.as_bytes().to_vec())),
        );
        assert_eq!(c.revision, expected.revision);
    }

    #[test]
    fn root_private_entries_of_any_type_are_skipped() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        fs::write(b.join("a.md"), b"a").expect("write");
        std::os::unix::fs::symlink("/nonexistent", b.join(".okf")).expect("symlink");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            b.join(".git"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .expect("mkfifo");
        assert_eq!(cap(b).expect("capture").files.len(), 1);
    }

    #[test]
    fn the_first_refusal_in_byte_order_wins() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        fs::create_dir(b.join("d")).expect("mkdir");
        std::os::unix::fs::symlink("x", b.join("d/b")).expect("symlink");
        std::os::unix::fs::symlink("x", b.join("d/a")).expect("symlink");
        fs::write(b.join("c"), b"c").expect("write");
        let e = cap(b).expect_err("symlink");
        assert_eq!(e.message, "bundle contains a symlink: d/a");
        assert_eq!(e.diagnostics.len(), 1);
        assert_eq!(e.diagnostics[0].code, DIAG_SYMLINK);
        assert_eq!(e.diagnostics[0].file, "d/a");
    }

    #[test]
    fn control_and_backslash_names_are_unrepresentable() {
        for bad in ["a\\b", "a\u{1}b", "tab\there", "del\u{7f}"] {
            let t = tempfile::tempdir().expect("tempdir");
            fs::write(t.path().join(bad), b"x").expect("write");
            let e = cap(t.path()).expect_err(bad);
            assert_eq!(e.code, "invalid_request");
            assert_eq!(e.message, MSG_UNREPRESENTABLE);
            assert!(e.diagnostics.is_empty());
        }
    }

    #[test]
    fn cancellation_before_walk_is_reported() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::write(t.path().join("a"), b"a").expect("write");
        let c = Cancel::new();
        c.cancel();
        let e = capture(&open(t.path()), &c).expect_err("cancelled");
        assert_eq!(e.code, "operation_cancelled");
    }

    /// Writes `n` files spread over nested directories; returns (path, bytes) of each.
    fn tree(b: &Path, n: usize) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for i in 0..n {
            let rel = format!("d{}/e{}/f{i:04}.md", i % 7, i % 3);
            let bytes = format!("file {i} {}", "x".repeat(i % 50)).into_bytes();
            fs::create_dir_all(b.join(&rel).parent().expect("parent")).expect("mkdir");
            fs::write(b.join(&rel), &bytes).expect("write");
            out.push((rel, bytes));
        }
        out
    }

    #[test]
    fn parallel_capture_equals_from_files_on_a_nested_tree() {
        let t = tempfile::tempdir().expect("tempdir");
        let files = tree(t.path(), 320);
        let c = cap(t.path()).expect("capture");
        assert_eq!(c, Capture::from_files(files));
        assert_eq!(c.files.len(), 320);
    }

    /// A symlink at `d0/a_link` (walk order: before every `d0/e*/` file) and an unreadable
    /// file at `d0/e0/f0000.md`.
    fn symlink_and_unreadable(early_symlink: bool) -> Option<ToolError> {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().expect("tempdir");
        tree(t.path(), 300);
        let link = if early_symlink {
            "d0/a_link"
        } else {
            "d6/z_link"
        };
        std::os::unix::fs::symlink("x", t.path().join(link)).expect("symlink");
        let locked = t.path().join("d0/e0/f0000.md");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).expect("chmod");
        let r = cap(t.path());
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o600)).expect("chmod");
        if fs::File::open(&locked).is_ok() && rustix::process::geteuid().is_root() {
            // Root reads a mode-000 file: only the symlink is a problem.
            let e = r.expect_err("symlink");
            assert_eq!(e.message, format!("{MSG_SYMLINK}: {link}"));
            return None;
        }
        Some(r.expect_err("two problems"))
    }

    #[test]
    fn the_first_problem_in_walk_order_wins_on_the_parallel_path() {
        // Symlink first in walk order: the refusal, though the later read fails too.
        if let Some(e) = symlink_and_unreadable(true) {
            assert_eq!(e.message, format!("{MSG_SYMLINK}: d0/a_link"));
            assert_eq!(e.diagnostics[0].code, DIAG_SYMLINK);
        }
        // Unreadable file first: its read-phase error, not the later symlink refusal.
        if let Some(e) = symlink_and_unreadable(false) {
            assert_eq!(e.code, codes::OPERATION_REJECTED);
            assert_eq!(e.message, "bundle could not be read");
            assert!(e.diagnostics.is_empty());
        }
    }

    #[test]
    fn cancellation_on_the_parallel_path_returns_no_partial_result() {
        let t = tempfile::tempdir().expect("tempdir");
        tree(t.path(), 300);
        let root = open(t.path());
        let pre = Cancel::new();
        pre.cancel();
        assert_eq!(
            capture(&root, &pre).expect_err("pre").code,
            "operation_cancelled"
        );
        // Cancelled from another thread while the capture runs: either the capture
        // finished before (a full result) or it answers operation_cancelled.
        for _ in 0..20 {
            let mid = Cancel::new();
            let other = mid.clone();
            let r = std::thread::scope(|s| {
                s.spawn(move || other.cancel());
                capture(&root, &mid)
            });
            match r {
                Ok(c) => assert_eq!(c.files.len(), 300),
                Err(e) => assert_eq!(e.code, "operation_cancelled"),
            }
        }
        // Cancelled after the walk has queued every file, before any read is accepted:
        // the parallel reads stop and nothing is returned.
        let c = Cancel::new();
        let mut w = Walk {
            root: &root.dir,
            cancel: &c,
            files: Vec::new(),
            total: 0,
            pending: Vec::new(),
            pending_bytes: 0,
            pending_dirs: 0,
            threads: 2,
            spill: None,
            miss: Arc::new(AtomicBool::new(false)),
            #[cfg(feature = "fault-injection")]
            hooks: crate::store::hooks::CaptureHooks::default(),
        };
        walk_dir(&root.dir, None, "", 0, &mut w).expect("walk");
        assert_eq!(w.pending.len(), 300);
        c.cancel();
        assert_eq!(
            w.flush().expect_err("cancelled").code,
            "operation_cancelled"
        );
        assert!(w.pending.is_empty());
    }
}
