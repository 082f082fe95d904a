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
use crate::digest;
use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::capture::{Capture, CapturedFile, StatStamp};
use crate::store::root::{same_identity, Root};
use crate::store::warm::{self, BundleCache, DirStamp, FileEntry, Whole};
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, Metadata, MetadataExt as _, OpenOptions};
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

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

/// The helper reading thread starts once this many files wait for their read (thread
/// start-up would cost more than it saves on a smaller bundle).
const PARALLEL_MIN_FILES: usize = 64;

/// At most this many parent directories (counted as changes of parent between consecutive
/// pending files, an upper bound) are held open by files waiting for their read; the walk
/// pauses to read them before it goes on, so open handles stay bounded whatever the tree's
/// shape.
const MAX_PENDING_DIRS: usize = 256;

/// At most this many files wait for their read or their acceptance: the walk's bookkeeping
/// (names, `lstat` metadata, read results) stays bounded, so a capture's memory beyond the
/// files it keeps is the file list itself (docs/store.md §3.2).
const MAX_PENDING_FILES: usize = 4096;

/// At most this many threads read files (the target machine has 2 cores): the walking
/// thread and one helper.
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
    bytes: Arc<Vec<u8>>,
    /// A warm capture: every byte read, also of a spilled file, for the cache.
    whole: Option<Arc<Vec<u8>>>,
    /// Taken from the warm cache, not read.
    cached: bool,
    len: u64,
    digest: [u8; 32],
    keep: bool,
    /// The open handle's size or modification time differs from the `lstat`, or the bytes
    /// read from its size: the file changed under the read (spec/store.md §16 rule 3).
    /// Reported after the limit checks, which a grown file meets first.
    changed: bool,
    /// The stat tuple of the handle read.
    stamp: StatStamp,
}

/// A read, or the read-phase error.
type ReadResult = Result<FileRead, ToolError>;

/// A queued job and its walk index, and its read once done (`None`: not read, because the
/// capture was cancelled or an earlier job's read failed).
type Done = (usize, Job, Option<ReadResult>);

/// The reads shared by the walking thread and its helper: the walk queues each regular file
/// right after its `lstat`, the helper reads queued files while the walk goes on, and the
/// walking thread joins the reading when it pauses ([`Walk::flush`]).
#[derive(Default)]
struct Pipe {
    state: Mutex<PipeState>,
    /// Wakes the helper (a job was queued, or the walk ended) and the walking thread (the
    /// helper finished a read or left).
    wake: Condvar,
}

#[derive(Default)]
struct PipeState {
    /// Jobs not taken yet, in walk order.
    queue: VecDeque<(usize, Job)>,
    /// Jobs taken and finished (or skipped), in completion order.
    done: Vec<Done>,
    /// Jobs the helper took and has not finished.
    in_flight: usize,
    /// Lowest walk index whose read failed (`None`: none); later jobs are not read.
    first_error: Option<usize>,
    /// No job will be queued any more: the helper leaves once the queue is empty.
    closed: bool,
    /// The helper runs (false before it started, and after it left, also by a panic).
    helper_alive: bool,
    /// The helper waits on `wake` for a job.
    helper_waiting: bool,
    /// The walking thread waits on `wake` for the helper's reads.
    walk_waiting: bool,
    /// Bytes accepted by the walk's last flush ([`Walk::total`] then).
    accepted: u64,
    /// Bytes read since then (files may have grown since their `lstat`).
    read_bytes: u64,
}

impl PipeState {
    /// Whether the job at walk index `i` is read: not after a failed read of an earlier one,
    /// and not once the bytes read exceed what the total limit leaves.
    fn worth_reading(&self, i: usize) -> bool {
        self.first_error.is_none_or(|e| i < e) && !self.over_budget()
    }

    /// Whether the files read since the last flush hold more than the total limit leaves.
    /// Jobs are taken in walk order, so those reads are of jobs before any job still queued,
    /// and accepting them in walk order fails the total limit at one of them (or stops at an
    /// earlier problem): no later file needs reading, and the reads held for acceptance stay
    /// within the limit plus the two files in flight, also when files grew since their
    /// `lstat`.
    fn over_budget(&self) -> bool {
        self.accepted + self.read_bytes > MAX_TOTAL_BYTES
    }

    /// Records a job that is not read ([`PipeState::worth_reading`] is false): past the
    /// total, the limit error it would meet; after a failed read, nothing (never accepted).
    fn skip(&mut self, i: usize, job: Job) {
        let read = self.over_budget().then(|| Err(limit_total()));
        self.finish(i, job, read);
    }

    fn finish(&mut self, i: usize, job: Job, read: Option<ReadResult>) {
        match &read {
            Some(Err(_)) => self.first_error = Some(self.first_error.map_or(i, |e| e.min(i))),
            Some(Ok(r)) => self.read_bytes = self.read_bytes.saturating_add(r.len),
            None => {}
        }
        self.done.push((i, job, read));
    }
}

impl Pipe {
    /// The state, also after a panic elsewhere poisoned the mutex (every update under the
    /// lock is a plain push, pop or flag write, so the state stays consistent).
    fn lock(&self) -> MutexGuard<'_, PipeState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wait<'g>(&self, guard: MutexGuard<'g, PipeState>) -> MutexGuard<'g, PipeState> {
        self.wake
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Marks the helper as gone when it leaves, also by unwinding, so the walking thread never
/// waits for a read that will not come.
struct HelperExit<'p>(&'p Pipe);

impl Drop for HelperExit<'_> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.helper_alive = false;
        drop(st);
        self.0.wake.notify_all();
    }
}

/// Closes the pipe when the walk is over (also by unwinding): no job will be queued any more.
struct CloseOnDrop<'p>(&'p Pipe);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.closed = true;
        // Empty after every flush; not empty only when the walk unwinds, whose panic then
        // need not wait for the helper to read what is left.
        st.queue.clear();
        drop(st);
        self.0.wake.notify_all();
    }
}

/// The helper thread: reads queued jobs in walk order until the walk has ended and the queue
/// is empty, or the capture is cancelled (the walking thread then skips what is left).
/// Reads use the per-file budget only; [`Walk::accept`] applies the total.
fn read_helper(
    pipe: &Pipe,
    root: &Dir,
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
    warm: Option<&BundleCache>,
) {
    let _exit = HelperExit(pipe);
    let mut scratch = Vec::new();
    let mut st = pipe.lock();
    loop {
        if cancel.is_cancelled() {
            break;
        }
        match st.queue.pop_front() {
            Some((i, job)) if st.worth_reading(i) => {
                st.in_flight += 1;
                drop(st);
                let dir = job.dir.as_deref().unwrap_or(root);
                let read = read_one(dir, &job, MAX_FILE_BYTES, spill, warm, &mut scratch);
                st = pipe.lock();
                st.in_flight -= 1;
                st.finish(i, job, Some(read));
                if st.walk_waiting {
                    pipe.wake.notify_all();
                }
            }
            Some((i, job)) => st.skip(i, job),
            None if st.closed => break,
            None => {
                st.helper_waiting = true;
                st = pipe.wait(st);
                st.helper_waiting = false;
            }
        }
    }
}

/// The capture in progress. The walk queues each regular file it finds ([`Walk::push`]);
/// with two threads a helper reads queued files while the walk goes on, and the walk pauses
/// to read along and accept everything queued ([`Walk::flush`]) when its bounds are reached
/// and at its end. Files are accepted in walk order with exactly the checks of a
/// one-file-at-a-time capture.
struct Walk<'a> {
    root: &'a Dir,
    cancel: &'a Cancel,
    /// Accepted files, in walk order.
    files: Vec<CapturedFile>,
    /// Bytes actually read of `files`.
    total: u64,
    /// Files found by the walk and not yet accepted (all after `files`).
    pending: usize,
    /// Sum of the `lstat` sizes of the pending files.
    pending_bytes: u64,
    /// Upper bound of the directories the pending files hold open.
    pending_dirs: usize,
    /// Parent of the last pending file (`Some(None)`: the root).
    last_parent: Option<Option<Arc<Dir>>>,
    /// Walk index of the next file queued.
    next_index: usize,
    /// 1: each file is read right after its `lstat`, on the calling thread.
    threads: usize,
    /// `None`: every file stays resident.
    spill: Option<&'a Spill<'a>>,
    /// The miss flag shared by the capture and its spilled files.
    miss: Arc<AtomicBool>,
    /// Queued jobs and their reads.
    pipe: &'a Pipe,
    /// Starts the helper thread; `true` when it runs. `None`: no helper (already started, or
    /// a one-thread capture).
    start_helper: Option<&'a dyn Fn() -> bool>,
    /// The walking thread's read buffer for spilled files.
    scratch: Vec<u8>,
    /// The call's progress sink (reports once more than [`crate::progress::LARGE`] files
    /// were accepted).
    progress: crate::progress::Progress,
    /// The newest `ctime_ns` of every file and directory seen (spec/store.md §17 rule 2).
    newest_ctime: i128,
    /// A warm capture: the cache's entries of this bundle (spec/store.md §17).
    warm: Option<&'a BundleCache>,
    /// A warm capture: every file accepted and every directory listed, with its stamp, for
    /// the cache (kept once the walk is over only when not racy).
    seen: Seen,
    #[cfg(feature = "fault-injection")]
    hooks: crate::store::hooks::CaptureHooks,
}

/// What a warm capture saw: files by path and directory listings `(path, stamp, names)`.
#[derive(Default)]
struct Seen {
    files: Vec<(String, FileEntry)>,
    dirs: Vec<(String, DirStamp, Arc<[OsString]>)>,
    /// Files taken from the cache, and directory listings reused.
    reused_files: usize,
    reused_dirs: usize,
}

/// Captures the visible tree under `root` (spec/store.md §3.1–§3.3, §3.7).
///
/// Checks cancellation before the walk, after each file read and after the walk
/// (spec/store.md §14). Root-level `.okf` and `.git` entries of any type are skipped; every
/// other entry is walked. Never writes anything.
///
/// The walk (names, types, limits on the `lstat` sizes, directory identity) runs on the
/// calling thread. Once 64 regular files wait for their read, a helper thread starts reading
/// them (open, read, SHA-256, spill visit) while the walk goes on; the calling thread reads
/// along whenever the walk pauses (at most 4,096 files or 256 directories pending) and at
/// its end. The result, and the error when there
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
/// - `operation_rejected` when the tree cannot be read;
/// - the retryable `operation_rejected` [`MSG_KEPT_CHANGING`] when the tree changed under
///   every one of 5 attempts (an entry vanished or was replaced, a file's inode, size or
///   modification time changed between its `lstat` and its read, a directory's entries
///   changed during its walk), with pauses of [`RETRY_PAUSES_MS`] between them
///   (spec/store.md §16 rule 3). The last attempt's observations decide: a symlink or
///   special file found then is refused as above.
pub fn capture(root: &Root, cancel: &Cancel) -> Result<Capture, ToolError> {
    capture_with(root, cancel, None)
}

/// [`capture`] that keeps in memory only the bytes of the files `spill` asks for (every file
/// when `spill` is `None`). Same walk, checks, errors, revision and file list; the spilled
/// files have their size and digest only. It never waits for a commit in flight: read and
/// preview tools capture through [`crate::store::wait::capture_after`] with
/// [`crate::store::wait::WaitFor::Publication`]
/// (spec/store.md §16 rule 2).
///
/// # Errors
/// As [`capture`].
pub fn capture_with(
    root: &Root,
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
) -> Result<Capture, ToolError> {
    attempts(root, cancel, spill, None).map(|(c, _)| c)
}

/// [`capture_with`] through the warm cache of a long-running server when it is on
/// ([`crate::store::warm`], spec/store.md §17): a file whose no-follow `lstat` gives the
/// identical stat tuple a trusted earlier capture recorded is taken from the cache instead
/// of being opened, read and hashed, and a directory with an identical stamp is not listed
/// again; everything else is read as by [`capture_with`], and the same capture results
/// (revision, files, bytes, errors). A successful capture replaces the bundle's entries with
/// what it found not racy; a failed one drops them. Cold ([`capture_with`]) when the cache
/// is off, the bundle is on a network or FUSE filesystem ([`warm::trusts_stat`]) or a
/// fault-injection capture hook is active. Only read and preview tools capture
/// this way ([`crate::store::wait::capture_after`] with
/// [`crate::store::wait::WaitFor::Publication`]).
///
/// # Errors
/// As [`capture`].
pub fn capture_warm(
    root: &Root,
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
) -> Result<Capture, ToolError> {
    #[cfg(feature = "fault-injection")]
    {
        let h = crate::store::hooks::current();
        if h.cancel_after_files.is_some() || h.swap.is_some() || h.deny.is_some() {
            return capture_with(root, cancel, spill);
        }
    }
    let Ok(meta) = root.dir.dir_metadata() else {
        return capture_with(root, cancel, spill);
    };
    if !warm::trusts_stat(&root.dir) {
        return capture_with(root, cancel, spill);
    }
    let id = (meta.dev(), meta.ino());
    let Some(snapshot) = warm::snapshot(id) else {
        return capture_with(root, cancel, spill);
    };
    if let Some(capture) = revalidate(root, cancel, &snapshot.entries) {
        return Ok(capture);
    }
    match attempts(root, cancel, spill, Some(&snapshot.entries)) {
        Ok((capture, fresh)) => {
            if let Some(fresh) = fresh {
                warm::store(id, fresh, &snapshot);
            }
            Ok(capture)
        }
        Err(e) => {
            warm::forget(id);
            Err(e)
        }
    }
}

/// Whether this process keeps warm state (spec/store.md §17: `okf-mcp serve` without
/// `--no-cache`): read tools keep what they derive per document (e.g. section indexes) only
/// then.
#[must_use]
pub fn is_warm() -> bool {
    warm::is_enabled()
}

/// The attempts of a capture (spec/store.md §16 rule 3), warm with `warm`.
fn attempts(
    root: &Root,
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
    warm: Option<&BundleCache>,
) -> Result<(Capture, Option<BundleCache>), ToolError> {
    for pause in RETRY_PAUSES_MS {
        match capture_once(root, cancel, spill, warm) {
            Err(e) if is_change(&e) => {
                cancel.check()?;
                std::thread::sleep(std::time::Duration::from_millis(pause));
            }
            other => return other,
        }
    }
    match capture_once(root, cancel, spill, warm) {
        Err(e) if is_change(&e) => Err(kept_changing()),
        other => other,
    }
}

/// The pauses between the attempts of a capture that saw the tree change under it: 5
/// attempts in all (spec/store.md §16 rule 3).
pub const RETRY_PAUSES_MS: [u64; 4] = [1, 2, 4, 8];

/// The message of a capture whose every attempt saw the tree change (spec/store.md §16
/// rule 3).
pub const MSG_KEPT_CHANGING: &str = "the bundle kept changing while it was read; repeat the call";

/// What one attempt reports when the tree changed under it (never leaves [`capture_with`]).
const MSG_CHANGED: &str = "bundle changed while it was captured";

/// The retryable `operation_rejected` [`MSG_KEPT_CHANGING`] (read and preview tools; an
/// apply answers its workflow's conflict instead, see [`is_kept_changing`]).
#[must_use]
pub fn kept_changing() -> ToolError {
    let mut e = ToolError::new(codes::OPERATION_REJECTED, MSG_KEPT_CHANGING).with_diagnostic(
        Diagnostic::recovery(
            "",
            "Another writer was publishing while the bundle was read. Repeat the same call; nothing was changed.",
        ),
    );
    e.retryable = true;
    e
}

/// Whether `e` is [`kept_changing`]: a write tool maps it to its conflict (spec/store.md §16
/// rule 3).
#[must_use]
pub fn is_kept_changing(e: &ToolError) -> bool {
    e.code == codes::OPERATION_REJECTED && e.message == MSG_KEPT_CHANGING
}

fn is_change(e: &ToolError) -> bool {
    e.code == codes::OPERATION_REJECTED && e.message == MSG_CHANGED
}

/// One attempt of [`capture_with`]; with `warm`, of [`capture_warm`], also returning what it
/// found not racy for the cache.
fn capture_once(
    root: &Root,
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
    warm: Option<&BundleCache>,
) -> Result<(Capture, Option<BundleCache>), ToolError> {
    cancel.check()?;
    #[cfg(feature = "fault-injection")]
    let hooks = crate::store::hooks::current();
    #[cfg(feature = "fault-injection")]
    let hooked = hooks.cancel_after_files.is_some() || hooks.swap.is_some() || hooks.deny.is_some();
    #[cfg(not(feature = "fault-injection"))]
    let hooked = false;
    let threads = if hooked {
        1
    } else {
        crate::okf::par::cpus().min(MAX_READ_THREADS)
    };
    let pipe = Pipe::default();
    let dir = &root.dir;
    // The wall clock before the first lstat (spec/store.md §17 rule 2).
    let started = now_ns();
    let (result, mut files, miss, newest_ctime, seen) = std::thread::scope(|s| {
        let start = || {
            pipe.lock().helper_alive = true;
            let spawned = std::thread::Builder::new()
                .spawn_scoped(s, || read_helper(&pipe, dir, cancel, spill, warm))
                .is_ok();
            if !spawned {
                pipe.lock().helper_alive = false;
            }
            spawned
        };
        let start: &dyn Fn() -> bool = &start;
        #[allow(unused_mut)] // set below only with fault injection
        let mut w = Walk::new(
            dir,
            cancel,
            threads,
            spill,
            &pipe,
            (threads >= 2).then_some(start),
        );
        w.warm = warm;
        #[cfg(feature = "fault-injection")]
        {
            w.hooks = hooks;
        }
        // Lets the helper leave once the queue is empty, also if the walk unwinds.
        let _close = CloseOnDrop(&pipe);
        let walked = walk_dir(dir, None, "", 0, &mut w);
        // The files found before a walk problem come first in walk order: their reads decide.
        let result = w.flush().and(walked);
        (result, w.files, w.miss, w.newest_ctime, w.seen)
    });
    result?;
    cancel.check()?;
    // spec/store.md §17 rule 2: a stat tuple is trusted only when both its times are more
    // than 2 s older than the clock read before the walk and than the newest ctime seen.
    let limit = started.min(newest_ctime).saturating_sub(RACY_NS);
    let trusted = |mtime_ns: i128, ctime_ns: i128| mtime_ns < limit && ctime_ns < limit;
    for f in &mut files {
        let stamp = f
            .stamp()
            .copied()
            .filter(|s| trusted(s.mtime_ns, s.ctime_ns));
        f.set_stamp(stamp);
    }
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let revision = digest::revision(files.iter().map(|f| (f.path.as_str(), &f.digest)));
    let fresh = warm.map(|_| {
        // Counts only: never paths or document text (spec/surface.md §16).
        tracing::debug!(
            files = files.len(),
            reused_files = seen.reused_files,
            reused_listings = seen.reused_dirs,
            "warm capture"
        );
        fresh_cache(&files, &revision, seen, &trusted)
    });
    let n = files.len() as u64;
    if n > crate::progress::LARGE {
        crate::progress::current().finish(n, Some(n), "reading");
    }
    Ok((Capture::walked(files, revision, miss), fresh))
}

/// The cache a successful warm capture leaves (spec/store.md §17 rules 1–2): its trusted files
/// and listings, and the whole capture (every file resident with the bytes read, every
/// listing) for the fast lane of the next one ([`revalidate`]). `files` are the capture's
/// files sorted by path bytes, their stamps already filtered by `trusted`.
fn fresh_cache(
    files: &[CapturedFile],
    revision: &str,
    seen: Seen,
    trusted: &dyn Fn(i128, i128) -> bool,
) -> BundleCache {
    let mut fresh = BundleCache::default();
    let mut bytes: HashMap<&str, &Arc<Vec<u8>>> = HashMap::with_capacity(seen.files.len());
    for (path, entry) in &seen.files {
        bytes.insert(path.as_str(), &entry.bytes);
    }
    // Every file of a warm capture kept its bytes (`FileRead::whole`), so this is complete.
    let whole_files: Option<Vec<CapturedFile>> = files
        .iter()
        .map(|f| {
            bytes.get(f.path.as_str()).map(|b| {
                let mut w =
                    CapturedFile::read(f.path.clone(), Arc::clone(b), f.size, f.digest, None);
                w.set_stamp(f.stamp().copied());
                w
            })
        })
        .collect();
    drop(bytes);
    let mut listings =
        HashMap::with_capacity_and_hasher(seen.dirs.len(), warm::PathHash::default());
    for (path, stamp, names) in seen.dirs {
        listings.insert(path.clone(), Arc::clone(&names));
        if trusted(stamp.2, stamp.3) {
            fresh.insert_listing(path, stamp, names);
        }
    }
    for (path, entry) in seen.files {
        if trusted(entry.stamp.mtime_ns, entry.stamp.ctime_ns) {
            fresh.insert_file(path, entry);
        }
    }
    if let Some(files) = whole_files {
        fresh.set_whole(Whole {
            revision: revision.to_owned(),
            files,
            listings,
        });
    }
    fresh
}

/// The fast lane of a warm capture (spec/store.md §17): the capture `cache` was built from
/// ([`Whole`]), again, when the tree still holds exactly its files and listings; `None`
/// otherwise, and the capture then walks as usual (a fast lane that found nothing to stop it
/// gives the very capture that walk would give).
///
/// The same checks as [`walk_dir`] on the same handles: the clock before the first `lstat`;
/// every directory's stamp before and after its listing; every entry `lstat`ed without
/// following, relative to its open parent, directories opened with no-follow and
/// identity-checked. A trusted entry with the identical stamp stands (§17 rule 2); an entry
/// that is not trusted is checked by content: a directory listed again must give the same
/// names, a file read again (open no-follow, identity re-checked, SHA-256) the same digest.
/// Anything else (a new, missing or changed entry, a symlink or special file, a file that
/// changed during its read, an unreadable entry, cancellation) ends the fast lane. So does a
/// racy entry that has meanwhile aged past the racy window: the usual walk then trusts it and
/// stores it. The answer is resident: every file's bytes are the cache's.
fn revalidate(root: &Root, cancel: &Cancel, cache: &BundleCache) -> Option<Capture> {
    let whole = cache.whole()?;
    if cancel.is_cancelled() {
        return None;
    }
    let started = now_ns();
    let progress = crate::progress::current();
    let n = whole.files.len() as u64;
    if n > crate::progress::LARGE {
        progress.report(0, Some(n), "reading");
    }
    let mut r = Revalidation {
        cache,
        whole,
        cancel,
        root: &root.dir,
        path: String::new(),
        dirs: Vec::new(),
        files: Vec::new(),
        flushes: 0,
        files_seen: 0,
        dirs_seen: 0,
        reread_files: 0,
        reread_dirs: 0,
        racy: Vec::new(),
        newest_ctime: i128::MIN,
    };
    r.dir(&root.dir, None, 0)?;
    r.flush()?;
    if r.files_seen != whole.files.len() || r.dirs_seen != whole.listings.len() {
        return None;
    }
    let limit = started.min(r.newest_ctime).saturating_sub(RACY_NS);
    if r.racy.iter().any(|&(m, c)| m < limit && c < limit) || cancel.is_cancelled() {
        return None;
    }
    if n > crate::progress::LARGE {
        progress.finish(n, Some(n), "reading");
    }
    // Counts only: never paths or document text (spec/surface.md §16).
    tracing::debug!(
        files = r.files_seen,
        reused_files = r.files_seen - r.reread_files,
        reused_listings = r.dirs_seen - r.reread_dirs,
        "warm capture"
    );
    Some(Capture::walked(
        whole.files.clone(),
        whole.revision.clone(),
        Arc::new(AtomicBool::new(false)),
    ))
}

/// Checks one file of a [`revalidate`] walk: `(its ctime, None)` when its no-follow `lstat`
/// in `dir` gives the trusted stamp, `(ctime, Some((mtime, ctime)))` when it is not trusted
/// but read again it has the recorded digest; `None` for anything else (the lane ends).
fn check_file(
    cache: &BundleCache,
    whole: &Whole,
    dir: &Dir,
    name: &str,
    path: &str,
) -> Option<(i128, Option<(i128, i128)>)> {
    let meta = dir.symlink_metadata(name).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let stamp = stamp_of(&meta);
    if cache.file(path, &stamp).is_some() {
        return Some((stamp.ctime_ns, None));
    }
    let known = whole
        .files
        .binary_search_by(|f| f.path.as_bytes().cmp(path.as_bytes()))
        .ok()
        .and_then(|i| whole.files.get(i))?
        .digest;
    let job = Job {
        dir: None,
        name: name.to_owned(),
        path: path.to_owned(),
        meta,
    };
    let read = read_one(dir, &job, MAX_FILE_BYTES, None, None, &mut Vec::new()).ok()?;
    if read.changed || read.digest != known {
        return None;
    }
    let ctime = stamp.ctime_ns.max(read.stamp.ctime_ns);
    Some((ctime, Some((read.stamp.mtime_ns, read.stamp.ctime_ns))))
}

/// The state of one [`revalidate`] walk. Directories are met in walk order on the calling
/// thread (stamp, listing, subdirectories `lstat`ed and opened) and queued with their files;
/// every [`MAX_PENDING_DIRS`] directories, and at the end, the queue is checked
/// ([`Revalidation::flush`]): the files' `lstat`s (and any content check) on up to two
/// threads, then each queued directory's stamp again, which must be the one it had before its
/// listing. So at most that many directory handles, plus the open ancestors, are held.
struct Revalidation<'a> {
    cache: &'a BundleCache,
    whole: &'a Whole,
    cancel: &'a Cancel,
    root: &'a Dir,
    /// The path of the directory at hand (a buffer reused along the walk).
    path: String,
    /// The queued directories: handle (`None`: the root) and stamp before the listing.
    dirs: Vec<(Option<Arc<Dir>>, StatStamp)>,
    /// The queued regular files: their directory's index in `dirs`, their path and where
    /// their name starts in it.
    files: Vec<(usize, String, usize)>,
    /// Flushes so far.
    flushes: usize,
    /// Files and listings met in all (each also in `whole`).
    files_seen: usize,
    dirs_seen: usize,
    /// Of those, checked by content (not trusted).
    reread_files: usize,
    reread_dirs: usize,
    /// `(mtime_ns, ctime_ns)` of every entry checked by content.
    racy: Vec<(i128, i128)>,
    /// The newest `ctime_ns` seen (spec/store.md §17 rule 2).
    newest_ctime: i128,
}

impl Revalidation<'_> {
    /// Checks the directory `dir` (`handle`; `None` for the root) at `self.path` (depth
    /// `depth`) and the directories under it; queues it and its files.
    fn dir(&mut self, dir: &Dir, handle: Option<Arc<Dir>>, depth: usize) -> Option<()> {
        let meta = dir.dir_metadata().ok()?;
        let of_dir = stamp_of(&meta);
        self.newest_ctime = self.newest_ctime.max(of_dir.ctime_ns);
        let stamp: DirStamp = (of_dir.dev, of_dir.ino, of_dir.mtime_ns, of_dir.ctime_ns);
        let known = self.whole.listings.get(self.path.as_str())?;
        let names = match self.cache.listing(&self.path, &stamp) {
            Some(names) => names,
            None => {
                let mut names: Vec<OsString> = Vec::new();
                for entry in dir.entries().ok()? {
                    names.push(entry.ok()?.file_name());
                }
                names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
                if names.as_slice() != &known[..] {
                    return None;
                }
                self.reread_dirs += 1;
                self.racy.push((of_dir.mtime_ns, of_dir.ctime_ns));
                Arc::clone(known)
            }
        };
        if self.dirs.len() >= MAX_PENDING_DIRS {
            self.flush()?;
        }
        // Where the directory is queued: (flush count, index in `dirs`); queued again after a
        // flush that a subdirectory's walk caused, for the files that follow it.
        let mut slot = (self.flushes, self.dirs.len());
        self.dirs.push((handle.clone(), of_dir));
        self.dirs_seen += 1;
        let base = self.path.len();
        for raw in names.iter() {
            if depth == 0 && (raw.as_bytes() == b".okf" || raw.as_bytes() == b".git") {
                continue;
            }
            if self.cancel.is_cancelled() {
                return None;
            }
            let name = representable(raw)?;
            if base > 0 {
                self.path.push('/');
            }
            self.path.push_str(name);
            let ok = if self.whole.listings.contains_key(self.path.as_str()) {
                self.subdir(dir, name, depth)
            } else {
                // A file when the recorded capture holds it (else the counts differ at the
                // end); its `lstat` is the flush's.
                if slot.0 != self.flushes {
                    slot = (self.flushes, self.dirs.len());
                    self.dirs.push((handle.clone(), of_dir));
                }
                self.files
                    .push((slot.1, self.path.clone(), self.path.len() - name.len()));
                self.files_seen += 1;
                Some(())
            };
            self.path.truncate(base);
            ok?;
        }
        Some(())
    }

    /// Checks the queued files, then the queued directories' stamps, and empties the queue
    /// (see the type's docs).
    fn flush(&mut self) -> Option<()> {
        let (cache, whole, cancel, root) = (self.cache, self.whole, self.cancel, self.root);
        let dirs = std::mem::take(&mut self.dirs);
        let files = std::mem::take(&mut self.files);
        self.flushes += 1;
        let dir_of = |d: usize| -> &Dir {
            match dirs.get(d).and_then(|(h, _)| h.as_deref()) {
                Some(h) => h,
                None => root,
            }
        };
        let checks = crate::okf::par::map(&files, |(d, path, name_at)| {
            if cancel.is_cancelled() {
                return None;
            }
            let name = path.get(*name_at..)?;
            check_file(cache, whole, dir_of(*d), name, path)
        });
        for c in checks {
            let (ctime, reread) = c?;
            self.newest_ctime = self.newest_ctime.max(ctime);
            if let Some(times) = reread {
                self.reread_files += 1;
                self.racy.push(times);
            }
        }
        for (k, (_, before)) in dirs.iter().enumerate() {
            let after = dir_of(k).dir_metadata().ok()?;
            if stamp_of(&after) != *before {
                return None;
            }
        }
        Some(())
    }

    /// Checks the entry `name` of `dir`, at `self.path`, that the recorded capture walked as
    /// a directory: still one, opened no-follow with the identity its `lstat` gave.
    fn subdir(&mut self, dir: &Dir, name: &str, depth: usize) -> Option<()> {
        let meta = dir.symlink_metadata(name).ok()?;
        if !meta.file_type().is_dir() {
            return None;
        }
        let sub = dir.open_dir_nofollow(name).ok()?;
        let opened = sub.dir_metadata().ok()?;
        if !same_identity(&meta, &opened) {
            return None;
        }
        let sub = Arc::new(sub);
        self.dir(&Arc::clone(&sub), Some(sub), depth + 1)
    }
}

/// The racy window of spec/store.md §17 rule 2: 2 s.
const RACY_NS: i128 = 2_000_000_000;

/// The wall clock in nanoseconds since the Unix epoch (`i128::MIN` before it: then no stat
/// tuple is trusted).
fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i128::MIN, |d| {
            i128::try_from(d.as_nanos()).unwrap_or(i128::MIN)
        })
}

/// The stat tuple of spec/store.md §17 rule 1 of `m`.
fn stamp_of(m: &Metadata) -> StatStamp {
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    StatStamp {
        dev: m.dev(),
        ino: m.ino(),
        size: m.size(),
        mtime_ns: ns(m.mtime(), m.mtime_nsec()),
        ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        mode: m.mode(),
    }
}

/// Reads the bytes of `file` (a file of a capture of `root`) again, through the same
/// symlink-refusing walk as the capture (spec/store.md §3.1), for a planner that let the
/// capture spill them (spec/migration.md §12.5 rule 1: one document in memory at a time).
/// One file; a pass over many files uses a [`Rereader`].
///
/// # Errors
/// `invalid_request` for a symlink or special file on the way; `operation_rejected`
/// (`bundle changed while it was captured`) when the bytes differ in size or digest from the
/// captured file, or the file is gone; `operation_rejected` for an unreadable file.
pub fn reread(root: &Root, file: &CapturedFile) -> Result<Vec<u8>, ToolError> {
    Rereader::new(root).read(file)
}

/// [`reread`] for one streamed pass over the files of a capture (in path order): keeps the
/// handles of the directories on the last file's path (one set per reading thread), so a
/// file in the same directory as the one before costs one no-follow open instead of one per
/// path component.
///
/// Every directory is still opened no-follow, and every file no-follow, checked to be a
/// regular file and checked against its captured size and digest, so no symlink is followed
/// and a swapped file is refused as by [`reread`]. A directory replaced after this pass
/// opened it is not noticed by the later files of that directory in the pass (their bytes are
/// still read from the directory the capture walked, and must still equal the captured
/// bytes); the next pass, and publication's own no-follow walk (spec/store.md §10.1 C11),
/// see the replacement.
///
/// [`Rereader::within_call`] checks a file whose capture recorded a trusted stat tuple
/// ([`CapturedFile::stamp`]) by that tuple instead of its digest: the open handle must have
/// exactly that tuple (identity, size, both times, mode) and yield exactly `size` bytes;
/// anything else is read and hashed as above (spec/store.md §17 rule 2). It serves planning
/// passes over a capture of the same call; the store's checks (C5, and the payloads produced
/// again at C8) use [`Rereader::new`], which always compares bytes.
pub struct Rereader<'r> {
    root: &'r Root,
    /// Check files with a trusted stat tuple by the tuple (see the type's docs).
    trust_stat: bool,
    /// Per reading thread: the open directories of its last path, (component, handle),
    /// outermost first.
    dirs: Mutex<Vec<(std::thread::ThreadId, OpenDirs)>>,
}

/// The open directories of a path, (component, handle), outermost first.
type OpenDirs = Vec<(String, Dir)>;

impl<'r> Rereader<'r> {
    /// A reader of files of captures of `root`, holding no directory yet; every file is
    /// checked against its captured digest.
    #[must_use]
    pub fn new(root: &'r Root) -> Self {
        Rereader {
            root,
            trust_stat: false,
            dirs: Mutex::new(Vec::new()),
        }
    }

    /// A reader for planning passes over a capture taken in the same call: files with a
    /// trusted stat tuple are checked by it instead of being hashed again (see the type's
    /// docs).
    #[must_use]
    pub fn within_call(root: &'r Root) -> Self {
        Rereader {
            trust_stat: true,
            ..Rereader::new(root)
        }
    }

    /// [`reread`] of `file`, reusing the directories it shares with the previous file this
    /// thread read.
    ///
    /// # Errors
    /// As [`reread`].
    pub fn read(&self, file: &CapturedFile) -> Result<Vec<u8>, ToolError> {
        #[cfg(feature = "fault-injection")]
        crate::store::hooks::record(|| crate::store::hooks::IoEvent::Reread(file.path.clone()));
        let me = std::thread::current().id();
        let mut dirs = {
            let mut pool = self
                .dirs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            pool.iter()
                .position(|(t, _)| *t == me)
                .map(|i| pool.swap_remove(i).1)
                .unwrap_or_default()
        };
        let out = self.read_with(&mut dirs, file);
        self.dirs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((me, dirs));
        out
    }

    fn read_with(&self, dirs: &mut OpenDirs, file: &CapturedFile) -> Result<Vec<u8>, ToolError> {
        let comps: Vec<&str> = file.path.split('/').collect();
        let Some((name, parents)) = comps.split_last() else {
            return Err(changed());
        };
        let keep = dirs
            .iter()
            .zip(parents.iter())
            .take_while(|((have, _), want)| have == *want)
            .count();
        dirs.truncate(keep);
        let mut done = parents[..keep].join("/");
        for part in &parents[keep..] {
            if !done.is_empty() {
                done.push('/');
            }
            done.push_str(part);
            let parent = dirs.last().map_or(&self.root.dir, |(_, d)| d);
            let sub = parent
                .open_dir_nofollow(part)
                .map_err(|_| after_failed_open(parent, part, &done))?;
            dirs.push(((*part).to_owned(), sub));
        }
        if !done.is_empty() {
            done.push('/');
        }
        done.push_str(name);
        let parent = dirs.last().map_or(&self.root.dir, |(_, d)| d);
        read_checked(parent, name, &done, file, self.trust_stat)
    }
}

/// Opens `name` in `parent` (no-follow) and reads it, checked against `file`'s captured size
/// and digest (or, with `trust_stat`, against its trusted stat tuple when it has one and the
/// handle's is identical); `done` is its bundle-relative path for refusals.
fn read_checked(
    parent: &Dir,
    name: &str,
    done: &str,
    file: &CapturedFile,
    trust_stat: bool,
) -> Result<Vec<u8>, ToolError> {
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No).nonblock(true);
    let f = parent
        .open_with(name, &opts)
        .map_err(|_| after_failed_open(parent, name, done))?;
    let meta = f.metadata().map_err(|_| unreadable_at(done))?;
    if !meta.is_file() {
        return Err(refuse_type(&meta, done));
    }
    if meta.len() != file.size {
        return Err(changed());
    }
    let trusted = trust_stat && file.stamp() == Some(&stamp_of(&meta));
    let mut bytes = Vec::with_capacity(usize::try_from(file.size).unwrap_or(0).saturating_add(1));
    f.into_std()
        .take(file.size + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| unreadable_at(done))?;
    if bytes.len() as u64 != file.size || (!trusted && digest::sha256(&bytes) != file.digest) {
        return Err(changed());
    }
    Ok(bytes)
}

fn unreadable() -> ToolError {
    ToolError::new(codes::OPERATION_REJECTED, "bundle could not be read")
}

/// Diagnostic code of a bundle file or directory that cannot be read (spec/store.md §16
/// rule 5).
pub const DIAG_READ_FAILED: &str = "bundle_read_failed";

/// The non-retryable `operation_rejected` of spec/store.md §16 rule 5 for the
/// bundle-relative `path` (`""`: the bundle directory) that cannot be read (EACCES, EIO):
/// message `bundle could not be read: <path>`, one `ERROR` `bundle_read_failed` naming it
/// and the recovery step `make <path> readable, then repeat the call`.
#[must_use]
pub fn unreadable_at(path: &str) -> ToolError {
    let shown = if path.is_empty() {
        "the bundle directory"
    } else {
        path
    };
    ToolError::new(
        codes::OPERATION_REJECTED,
        format!("bundle could not be read: {shown}"),
    )
    .with_diagnostic(
        Diagnostic::new(DIAG_READ_FAILED, Severity::Error, "the file cannot be read")
            .with_file(path),
    )
    .with_diagnostic(Diagnostic::recovery(
        "",
        format!("make {shown} readable, then repeat the call"),
    ))
}

fn changed() -> ToolError {
    ToolError::new(codes::OPERATION_REJECTED, MSG_CHANGED)
}

fn limit_files() -> ToolError {
    ToolError::resource_limit("bundle has more than 10000 visible files")
}

/// A per-file capture limit at `path` (bundle-relative): `resource_limit` naming the file,
/// with a recovery step that moves it out of the bundle (issue 25 item 5: every tool refuses
/// such a bundle, so no tool could find the file otherwise).
fn limit_at(what: &str, path: &str) -> ToolError {
    let mut shown = path.to_owned();
    if shown.len() > 256 {
        let mut cut = 256;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.truncate(cut);
        shown.push('…');
    }
    ToolError::new(codes::RESOURCE_LIMIT, format!("{what}: {shown}")).with_diagnostic(
        Diagnostic::recovery(
            "",
            format!("Move {shown} out of the bundle directory (or make it smaller), then repeat the call."),
        )
        .with_file(&shown),
    )
}

fn limit_file_size(path: &str) -> ToolError {
    limit_at("a bundle file exceeds 16 MiB", path)
}

fn limit_total() -> ToolError {
    ToolError::resource_limit("bundle exceeds 64 MiB in total")
}

fn limit_path(path: &str) -> ToolError {
    limit_at("a bundle path exceeds 4096 bytes or 64 components", path)
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
        Ok(_) => unreadable_at(path),
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
    // A directory whose entries change during its walk (a rename, a new or removed entry)
    // changes its modification time: the attempt restarts (spec/store.md §16 rule 3).
    let meta = dir.dir_metadata().map_err(|_| unreadable_at(prefix))?;
    let of_dir = stamp_of(&meta);
    w.newest_ctime = w.newest_ctime.max(of_dir.ctime_ns);
    let stamp = meta.modified().ok();
    let dir_stamp: DirStamp = (of_dir.dev, of_dir.ino, of_dir.mtime_ns, of_dir.ctime_ns);
    // A warm capture lists a directory again unless its stamp is the trusted one
    // (spec/store.md §17 rule 2).
    let names = match w.warm.and_then(|c| c.listing(prefix, &dir_stamp)) {
        Some(names) => {
            w.seen.reused_dirs += 1;
            names
        }
        None => {
            let mut names: Vec<OsString> = Vec::new();
            for entry in dir.entries().map_err(|_| unreadable_at(prefix))? {
                names.push(entry.map_err(|_| unreadable_at(prefix))?.file_name());
            }
            names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            Arc::from(names)
        }
    };
    if w.warm.is_some() {
        w.seen
            .dirs
            .push((prefix.to_owned(), dir_stamp, Arc::clone(&names)));
    }
    for raw in names.iter() {
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
            return Err(limit_path(&path));
        }
        let meta = dir.symlink_metadata(name).map_err(|_| changed())?;
        let ft = meta.file_type();
        if ft.is_dir() {
            let sub = dir
                .open_dir_nofollow(name)
                .map_err(|_| after_failed_open(dir, name, &path))?;
            let opened = sub.dir_metadata().map_err(|_| unreadable_at(&path))?;
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
    if dir
        .dir_metadata()
        .map_err(|_| unreadable_at(prefix))?
        .modified()
        .ok()
        != stamp
    {
        return Err(changed());
    }
    Ok(())
}

impl<'a> Walk<'a> {
    /// A walk that has found nothing yet (fault hooks: none; the caller sets them).
    fn new(
        root: &'a Dir,
        cancel: &'a Cancel,
        threads: usize,
        spill: Option<&'a Spill<'a>>,
        pipe: &'a Pipe,
        start_helper: Option<&'a dyn Fn() -> bool>,
    ) -> Self {
        Walk {
            root,
            cancel,
            files: Vec::new(),
            total: 0,
            pending: 0,
            pending_bytes: 0,
            pending_dirs: 0,
            last_parent: None,
            next_index: 0,
            threads,
            spill,
            miss: Arc::new(AtomicBool::new(false)),
            pipe,
            start_helper,
            scratch: Vec::new(),
            progress: crate::progress::current(),
            newest_ctime: i128::MIN,
            warm: None,
            seen: Seen::default(),
            #[cfg(feature = "fault-injection")]
            hooks: crate::store::hooks::CaptureHooks::default(),
        }
    }

    /// Queues one regular file after the limit checks a one-file-at-a-time capture makes
    /// before reading it: file count, then the `lstat` size against the per-file limit, then
    /// against the total (on the bytes actually read before it: the queued files are read
    /// first when the `lstat` sizes alone would exceed the total). An error here is a walk
    /// problem at this file; the caller reads the queue first.
    fn push(&mut self, job: Job) -> Result<(), ToolError> {
        if self.files.len() + self.pending >= MAX_FILES {
            return Err(limit_files());
        }
        let len = job.meta.len();
        if len > MAX_FILE_BYTES {
            return Err(limit_file_size(&job.path));
        }
        if self.total + self.pending_bytes + len > MAX_TOTAL_BYTES {
            self.flush()?;
            if self.total + len > MAX_TOTAL_BYTES {
                return Err(limit_total());
            }
        }
        if self.threads < 2 {
            return self.read_now(job);
        }
        // A warm hit with nothing queued before it is accepted at once, on the walking
        // thread: the same acceptance, in the same walk order, without the helper's queue.
        if self.pending == 0 && self.warm.is_some() {
            let budget = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES.saturating_sub(self.total));
            if let Some(hit) = cached_read(&job, budget, self.spill, self.warm) {
                return self.accept(job, Ok(hit));
            }
        }
        let same_parent = self
            .last_parent
            .as_ref()
            .is_some_and(|last| match (last, &job.dir) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            });
        if !same_parent {
            self.pending_dirs += 1;
            self.last_parent = Some(job.dir.clone());
        }
        self.pending_bytes += len;
        self.pending += 1;
        let i = self.next_index;
        self.next_index += 1;
        let mut st = self.pipe.lock();
        st.queue.push_back((i, job));
        let wake = st.helper_waiting;
        drop(st);
        if wake {
            self.pipe.wake.notify_all();
        }
        if self.pending >= PARALLEL_MIN_FILES {
            if let Some(start) = self.start_helper.take() {
                start();
            }
        }
        if self.pending_dirs >= MAX_PENDING_DIRS || self.pending >= MAX_PENDING_FILES {
            self.flush()?;
        }
        Ok(())
    }

    /// A one-thread capture: reads `job` right after its `lstat`, on the calling thread, with
    /// the budget the bytes accepted so far leave.
    fn read_now(&mut self, job: Job) -> Result<(), ToolError> {
        self.check_total(&job)?;
        let dir = job.dir.as_deref().unwrap_or(self.root);
        #[cfg(feature = "fault-injection")]
        self.hooks.after_lstat(dir, &job.name, &job.path);
        let budget = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES.saturating_sub(self.total));
        #[cfg(feature = "fault-injection")]
        if self.hooks.deny.as_deref() == Some(job.path.as_str()) {
            // The open fails as with EACCES: what `read_one` reports for a failed open.
            let read = Err(after_failed_open(dir, &job.name, &job.path));
            return self.accept(job, read);
        }
        let read = read_one(dir, &job, budget, self.spill, self.warm, &mut self.scratch);
        self.accept(job, read)
    }

    /// Reads every queued file (along with the helper, when it runs), waits for the helper's
    /// reads, then accepts them all in walk order; the first problem in walk order is
    /// returned. Nothing is pending afterwards, also on error.
    fn flush(&mut self) -> Result<(), ToolError> {
        let first = self.next_index - self.pending;
        self.pending = 0;
        self.pending_bytes = 0;
        self.pending_dirs = 0;
        self.last_parent = None;
        let mut st = self.pipe.lock();
        loop {
            if let Some((i, job)) = st.queue.pop_front() {
                if self.cancel.is_cancelled() {
                    st.finish(i, job, None);
                    continue;
                }
                if !st.worth_reading(i) {
                    st.skip(i, job);
                    continue;
                }
                drop(st);
                let dir = job.dir.as_deref().unwrap_or(self.root);
                let read = read_one(
                    dir,
                    &job,
                    MAX_FILE_BYTES,
                    self.spill,
                    self.warm,
                    &mut self.scratch,
                );
                st = self.pipe.lock();
                st.finish(i, job, Some(read));
                continue;
            }
            if st.in_flight == 0 || !st.helper_alive {
                break;
            }
            st.walk_waiting = true;
            st = self.pipe.wait(st);
            st.walk_waiting = false;
        }
        let mut done = std::mem::take(&mut st.done);
        drop(st);
        done.sort_unstable_by_key(|d| d.0);
        let count = done.len();
        for (expected, (i, job, read)) in (first..).zip(done) {
            if i != expected {
                // A read lost with a helper that panicked (the scope re-raises its panic).
                return Err(unreadable());
            }
            self.check_total(&job)?;
            let read = read.unwrap_or_else(|| {
                // Not read: the capture was cancelled, or an earlier read failed (which this
                // loop meets first). (Past the total limit a skipped job carries that error.)
                Err(if self.cancel.is_cancelled() {
                    ToolError::cancelled()
                } else {
                    unreadable()
                })
            });
            self.accept(job, read)?;
        }
        if first + count != self.next_index {
            return Err(unreadable());
        }
        let mut st = self.pipe.lock();
        st.accepted = self.total;
        st.read_bytes = 0;
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
            return Err(limit_file_size(&job.path));
        }
        if self.total + n > MAX_TOTAL_BYTES {
            return Err(limit_total());
        }
        if read.changed {
            return Err(changed());
        }
        // Both checks passed, so n <= budget and n is the whole of the bytes read.
        self.total += n;
        #[cfg(feature = "fault-injection")]
        crate::store::hooks::record(|| crate::store::hooks::IoEvent::Read(job.path.clone()));
        let mut file = CapturedFile::read(
            job.path,
            read.bytes,
            read.len,
            read.digest,
            (!read.keep).then(|| Arc::clone(&self.miss)),
        );
        self.newest_ctime = self.newest_ctime.max(read.stamp.ctime_ns);
        self.seen.reused_files += usize::from(read.cached);
        if let Some(whole) = read.whole {
            self.seen.files.push((
                file.path.clone(),
                FileEntry {
                    stamp: read.stamp,
                    digest: read.digest,
                    bytes: whole,
                },
            ));
        }
        // Kept only if not racy, decided once the walk is over (`capture_once`).
        file.set_stamp(Some(read.stamp));
        self.files.push(file);
        let n = self.files.len() as u64;
        if n > crate::progress::LARGE {
            self.progress.report(n, None, "reading");
        }
        #[cfg(feature = "fault-injection")]
        self.hooks.after_file_read(self.files.len(), self.cancel);
        self.cancel.check()
    }
}

/// The read of `job` from the warm cache: its entry when the `lstat` tuple is identical to
/// the trusted one and the bytes fit `budget`, visited as read bytes are; `None` otherwise
/// (the file is then read).
fn cached_read(
    job: &Job,
    budget: u64,
    spill: Option<&Spill<'_>>,
    warm: Option<&BundleCache>,
) -> Option<FileRead> {
    let hit = warm?.file(&job.path, &stamp_of(&job.meta))?;
    let len = hit.bytes.len() as u64;
    if len > budget {
        return None;
    }
    let keep = spill.is_none_or(|s| (s.visit)(&job.path, &hit.bytes, &hit.digest));
    Some(FileRead {
        bytes: if keep {
            Arc::clone(&hit.bytes)
        } else {
            Arc::default()
        },
        whole: Some(Arc::clone(&hit.bytes)),
        cached: true,
        len,
        digest: hit.digest,
        keep,
        changed: false,
        stamp: hit.stamp,
    })
}

/// Opens `job` in `dir` (no-follow, read-only, non-blocking), re-checks type and identity
/// against its `lstat`, reads at most `budget + 1` bytes and hashes them; with a `spill`,
/// visits them and drops them unless the visit keeps them (an over-limit read, which the
/// walk then refuses, is neither visited nor kept).
///
/// With `warm`: a file whose `lstat` tuple is identical to a trusted entry's is not opened;
/// its cached bytes and digest are the read (and are visited as read bytes are). Every read
/// of a warm capture keeps its whole bytes for the cache.
fn read_one(
    dir: &Dir,
    job: &Job,
    budget: u64,
    spill: Option<&Spill<'_>>,
    warm: Option<&BundleCache>,
    scratch: &mut Vec<u8>,
) -> ReadResult {
    if let Some(hit) = cached_read(job, budget, spill, warm) {
        return Ok(hit);
    }
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No).nonblock(true);
    let file = dir
        .open_with(&job.name, &opts)
        .map_err(|_| after_failed_open(dir, &job.name, &job.path))?;
    let opened = file.metadata().map_err(|_| unreadable_at(&job.path))?;
    if !opened.is_file() {
        return Err(refuse_type(&opened, &job.path));
    }
    if !same_identity(&job.meta, &opened) {
        return Err(changed());
    }
    // A spilled read goes to the thread's scratch buffer, which is handed back unless the
    // file is kept or a warm capture keeps it for the cache; a resident read gets its own
    // buffer.
    let mut bytes = if spill.is_some() && warm.is_none() {
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
        .map_err(|_| unreadable_at(&job.path))?;
    let digest = digest::sha256(&bytes);
    let len = bytes.len() as u64;
    let keep = match spill {
        None => true,
        Some(_) if len > budget => false,
        Some(s) => (s.visit)(&job.path, &bytes, &digest),
    };
    let changed = len != job.meta.len()
        || opened.len() != job.meta.len()
        || opened.modified().ok() != job.meta.modified().ok();
    let (bytes, whole) = if warm.is_some() {
        // A warm capture keeps every file's bytes for the cache, spilled or not.
        let whole = Arc::new(bytes);
        let kept = if keep {
            Arc::clone(&whole)
        } else {
            Arc::default()
        };
        (kept, Some(whole))
    } else if keep {
        if bytes.capacity() > bytes.len().saturating_mul(2).max(64 * 1024) {
            // A kept file that landed in a scratch buffer grown by a larger earlier file.
            bytes.shrink_to_fit();
        }
        (Arc::new(bytes), None)
    } else {
        bytes.clear();
        *scratch = bytes;
        (Arc::default(), None)
    };
    Ok(FileRead {
        bytes,
        whole,
        cached: false,
        len,
        digest,
        keep,
        changed,
        stamp: stamp_of(&opened),
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their own temp trees
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;
    use std::sync::atomic::Ordering;

    fn open(p: &Path) -> Root {
        crate::store::root::open(p.to_str().expect("utf-8")).expect("root")
    }

    fn cap(p: &Path) -> Result<Capture, ToolError> {
        capture(&open(p), &Cancel::new())
    }

    /// One pass of a [`Rereader`] reads every file of the capture (sharing directories)
    /// and still refuses a symlinked directory on a new path, a file swapped for a symlink
    /// in a directory it holds open, and changed bytes.
    #[test]
    fn rereader_pass_reads_in_order_and_refuses_symlinks_and_changes() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        for d in ["a/s", "b", "c"] {
            fs::create_dir_all(b.join(d)).expect("mkdir");
        }
        for f in [
            "a/1.md", "a/2.md", "a/s/3.md", "a/4.md", "b/5.md", "c/6.md", "top.md",
        ] {
            fs::write(b.join(f), f.as_bytes()).expect("write");
        }
        let root = open(b);
        let c = capture(&root, &Cancel::new()).expect("capture");
        let r = Rereader::new(&root);
        for f in &c.files {
            assert_eq!(r.read(f).expect("read"), f.path.as_bytes(), "{}", f.path);
        }
        let file = |p: &str| c.files.iter().find(|f| f.path == p).expect("file").clone();
        // The pass holds `a/` open: a file there swapped for a symlink is refused.
        let r = Rereader::new(&root);
        r.read(&file("a/1.md")).expect("a/1.md");
        fs::remove_file(b.join("a/2.md")).expect("rm");
        std::os::unix::fs::symlink("1.md", b.join("a/2.md")).expect("symlink");
        let e = r.read(&file("a/2.md")).expect_err("symlinked file");
        assert_eq!(e.code, "invalid_request", "{e:?}");
        // A directory replaced by a symlink before the pass reaches it is refused.
        fs::rename(b.join("b"), b.join("b-moved")).expect("mv");
        std::os::unix::fs::symlink("c", b.join("b")).expect("symlink");
        let e = r.read(&file("b/5.md")).expect_err("symlinked directory");
        assert_eq!(e.code, "invalid_request", "{e:?}");
        // Changed bytes of the same size in a held directory.
        r.read(&file("c/6.md")).expect("c/6.md");
        fs::write(b.join("c/6.md"), b"c/6.mX").expect("write");
        let e = r.read(&file("c/6.md")).expect_err("changed");
        assert_eq!(e.message, "bundle changed while it was captured");
        // A root file after deeper paths.
        assert_eq!(r.read(&file("top.md")).expect("top"), b"top.md");
    }

    /// spec/store.md §17 rule 2 within one call: files written in the last 2 s before the
    /// capture (or within 2 s of the newest ctime it saw) carry no trusted stat tuple; older
    /// ones do, and [`Rereader::within_call`] then checks them by the tuple while
    /// [`Rereader::new`] still compares the digest. A rewrite changes the tuple, so the
    /// bytes are hashed again and a change is seen.
    #[test]
    fn stat_tuples_are_trusted_only_outside_the_racy_window() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        fs::create_dir(b.join("d")).expect("mkdir");
        fs::write(b.join("d/old.md"), b"old bytes").expect("write");
        fs::write(b.join("d/other.md"), b"other").expect("write");
        let root = open(b);
        let c = capture(&root, &Cancel::new()).expect("capture");
        assert!(c.files.iter().all(|f| f.stamp().is_none()), "all racy");
        std::thread::sleep(std::time::Duration::from_millis(2100));
        fs::write(b.join("new.md"), b"new").expect("write");
        let c = capture(&root, &Cancel::new()).expect("capture");
        let file = |p: &str| c.files.iter().find(|f| f.path == p).expect("file").clone();
        assert!(file("d/old.md").stamp().is_some(), "{c:?}");
        assert!(file("new.md").stamp().is_none(), "newest ctime: racy");
        // A file with the trusted tuple but another digest: only the tuple is checked.
        let old = file("d/old.md");
        let mut forged =
            CapturedFile::read(old.path.clone(), Arc::default(), old.size, [0; 32], None);
        forged.set_stamp(old.stamp().copied());
        let within = Rereader::within_call(&root);
        assert_eq!(within.read(&forged).expect("trusted"), b"old bytes");
        assert!(
            Rereader::new(&root).read(&forged).is_err(),
            "digest compared"
        );
        assert_eq!(within.read(&old).expect("old"), b"old bytes");
        // Same size, other bytes: the tuple changed, the digest is compared, the change seen.
        fs::write(b.join("d/old.md"), b"old BYTES").expect("write");
        let e = within.read(&old).expect_err("changed");
        assert_eq!(e.message, MSG_CHANGED);
        // Rewritten with the same bytes: the tuple changed, the digest still matches.
        fs::write(b.join("d/old.md"), b"old bytes").expect("write");
        assert_eq!(within.read(&old).expect("same bytes"), b"old bytes");
        assert!(
            within.read(&forged).is_err(),
            "tuple changed: digest compared"
        );
    }

    /// The fast lane of a warm capture (spec/store.md §17) answers the capture its cache was
    /// built from only while the tree holds exactly those files and listings: a racy file
    /// rewritten with the same bytes keeps it; other bytes of the same size, a new file or a
    /// file swapped for a symlink end it, and the walk then answers as a cold capture.
    #[test]
    fn the_fast_lane_answers_the_cold_capture_or_steps_aside() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        fs::create_dir_all(b.join("d/e")).expect("mkdir");
        fs::create_dir(b.join(".okf")).expect("mkdir");
        for (p, bytes) in [("a.md", "alpha"), ("d/b.md", "beta"), ("d/e/c.md", "gamma")] {
            fs::write(b.join(p), bytes).expect("write");
        }
        // More directories than one flush of the lane holds, with files of their parent
        // before and after them in walk order.
        let wide = MAX_PENDING_DIRS + 44;
        for k in 0..wide {
            fs::create_dir_all(b.join(format!("w/d{k:03}"))).expect("mkdir");
            fs::write(b.join(format!("w/d{k:03}/f.md")), format!("{k}")).expect("write");
        }
        fs::write(b.join("w/a.md"), b"first").expect("write");
        fs::write(b.join("w/zz.md"), b"last").expect("write");
        std::thread::sleep(std::time::Duration::from_millis(2100));
        // The last edit: the newest change, so racy on every later capture.
        fs::write(b.join("d/b.md"), b"beta").expect("write");
        let root = open(b);
        let cancel = Cancel::new();
        let warm_once = || {
            attempts(&root, &cancel, None, Some(&BundleCache::default()))
                .map(|(c, fresh)| (c, fresh.expect("warm")))
                .expect("capture")
        };
        let (first, fresh) = warm_once();
        assert_eq!(first, cap(b).expect("cold"));
        let whole = fresh.whole().expect("whole capture recorded");
        assert_eq!(whole.files.len(), 3 + wide + 2);
        assert_eq!(
            fresh.files_len(),
            2 + wide + 2,
            "the racy file is not trusted"
        );
        let fast = revalidate(&root, &cancel, &fresh).expect("unchanged: the fast lane");
        assert_eq!(fast, cap(b).expect("cold"));
        assert_eq!(fast.revision, first.revision);
        assert!(fast.is_complete(), "resident");
        // The racy file rewritten with its own bytes: read again, same digest.
        fs::write(b.join("d/b.md"), b"beta").expect("write");
        assert_eq!(
            revalidate(&root, &cancel, &fresh),
            Some(cap(b).expect("cold"))
        );
        // Same size, other bytes: of the racy file, then of a trusted one.
        fs::write(b.join("d/b.md"), b"BETA").expect("write");
        assert!(
            revalidate(&root, &cancel, &fresh).is_none(),
            "racy file changed"
        );
        fs::write(b.join("d/b.md"), b"beta").expect("write");
        fs::write(b.join("d/e/c.md"), b"GAMMA").expect("write");
        assert!(
            revalidate(&root, &cancel, &fresh).is_none(),
            "trusted file changed"
        );
        fs::write(b.join("d/e/c.md"), b"gamma").expect("write");
        // Same bytes again, but a new ctime: read again, and the lane still holds.
        assert_eq!(
            revalidate(&root, &cancel, &fresh),
            Some(cap(b).expect("cold"))
        );
        // A file of the wide directory after its last subdirectory, changed.
        fs::write(b.join("w/zz.md"), b"LAST").expect("write");
        assert!(
            revalidate(&root, &cancel, &fresh).is_none(),
            "late file changed"
        );
        fs::write(b.join("w/zz.md"), b"last").expect("write");
        assert_eq!(
            revalidate(&root, &cancel, &fresh),
            Some(cap(b).expect("cold"))
        );
        // Inside .okf/: not part of the bundle.
        fs::write(b.join(".okf/x"), b"x").expect("write");
        assert!(
            revalidate(&root, &cancel, &fresh).is_some(),
            ".okf is not walked"
        );
        // A new file, a removed one, a symlink in place of a file.
        fs::write(b.join("d/e/new.md"), b"new").expect("write");
        assert!(revalidate(&root, &cancel, &fresh).is_none(), "new file");
        fs::remove_file(b.join("d/e/new.md")).expect("rm");
        fs::remove_file(b.join("a.md")).expect("rm");
        assert!(revalidate(&root, &cancel, &fresh).is_none(), "removed file");
        std::os::unix::fs::symlink("d/b.md", b.join("a.md")).expect("symlink");
        assert!(revalidate(&root, &cancel, &fresh).is_none(), "symlink");
        let e = cap(b).expect_err("the walk refuses it");
        assert!(e.message.starts_with(MSG_SYMLINK), "{e:?}");
        // Cancelled: no fast answer.
        fs::remove_file(b.join("a.md")).expect("rm");
        fs::write(b.join("a.md"), b"alpha").expect("write");
        let (_, fresh) = warm_once();
        let cancelled = Cancel::new();
        cancelled.cancel();
        assert!(revalidate(&root, &cancelled, &fresh).is_none());
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

    #[test]
    fn pipelined_capture_equals_from_files_past_its_pending_bounds() {
        // More files than MAX_PENDING_FILES in one directory, then more directories than
        // MAX_PENDING_DIRS with one file each: the walk pauses at both bounds while the
        // helper reads.
        let t = tempfile::tempdir().expect("tempdir");
        let mut files = Vec::new();
        for i in 0..MAX_PENDING_FILES + 70 {
            let rel = format!("a/f{i:05}.md");
            files.push((rel, format!("{i}").into_bytes()));
        }
        for i in 0..MAX_PENDING_DIRS + 30 {
            files.push((format!("b/d{i:04}/x.md"), format!("dir {i}").into_bytes()));
        }
        for (rel, bytes) in &files {
            fs::create_dir_all(t.path().join(rel).parent().expect("parent")).expect("mkdir");
            fs::write(t.path().join(rel), bytes).expect("write");
        }
        let c = cap(t.path()).expect("capture");
        assert_eq!(c.files.len(), files.len());
        assert_eq!(c, Capture::from_files(files));
    }

    #[test]
    fn a_spill_visit_sees_each_file_once_on_both_threads() {
        let t = tempfile::tempdir().expect("tempdir");
        let files = tree(t.path(), 500);
        let seen = Mutex::new(Vec::new());
        let visit = |path: &str, bytes: &[u8], d: &[u8; 32]| {
            assert_eq!(&digest::sha256(bytes), d);
            let mut s = seen.lock().expect("seen");
            s.push(path.to_owned());
            path.ends_with('7') || path.ends_with("7.md")
        };
        let spill = Spill { visit: &visit };
        let c = capture_with(&open(t.path()), &Cancel::new(), Some(&spill)).expect("capture");
        let mut s = seen.into_inner().expect("seen");
        s.sort();
        let mut want: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
        want.sort();
        assert_eq!(s, want);
        assert_eq!(c.revision, Capture::from_files(files.clone()).revision);
        for (f, (_, bytes)) in c.files.iter().zip({
            let mut sorted = files;
            sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            sorted
        }) {
            if f.path.ends_with("7.md") {
                assert_eq!(f.bytes(), &bytes[..], "{}", f.path);
            }
        }
        assert!(!c.missed());
    }

    #[test]
    fn a_panicking_spill_visit_panics_the_capture_instead_of_hanging_it() {
        let t = tempfile::tempdir().expect("tempdir");
        tree(t.path(), 400);
        let root = open(t.path());
        // Every file panics, so whichever thread reads first panics: the helper's panic
        // must not leave the walking thread waiting for its read.
        let visit = |_: &str, _: &[u8], _: &[u8; 32]| -> bool { panic!("visit") };
        let spill = Spill { visit: &visit };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            capture_with(&root, &Cancel::new(), Some(&spill))
        }));
        assert!(r.is_err());
        // Only the last directory's files panic (the helper likely reads some of them).
        let visit = |p: &str, _: &[u8], _: &[u8; 32]| -> bool {
            assert!(!p.starts_with("d6/"), "late visit");
            false
        };
        let spill = Spill { visit: &visit };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            capture_with(&root, &Cancel::new(), Some(&spill))
        }));
        assert!(r.is_err());
    }

    #[test]
    fn files_grown_after_their_lstat_stop_the_reads_at_the_total_limit() {
        // 20 small files queued by the walk, then each grown (sparse) to 16 MiB before the
        // reads: the first five exceed 64 MiB, so the rest are not read (not held in memory)
        // and the capture fails the total limit, as a one-file-at-a-time capture does.
        let t = tempfile::tempdir().expect("tempdir");
        for i in 0..20 {
            fs::write(t.path().join(format!("f{i:02}.md")), b"x").expect("write");
        }
        let root = open(t.path());
        let c = Cancel::new();
        let pipe = Pipe::default();
        let visits = std::sync::atomic::AtomicUsize::new(0);
        let visit = |_: &str, _: &[u8], _: &[u8; 32]| {
            visits.fetch_add(1, Ordering::Relaxed);
            false
        };
        let spill = Spill { visit: &visit };
        let mut w = Walk::new(&root.dir, &c, 2, Some(&spill), &pipe, None);
        walk_dir(&root.dir, None, "", 0, &mut w).expect("walk");
        for i in 0..20 {
            fs::OpenOptions::new()
                .write(true)
                .open(t.path().join(format!("f{i:02}.md")))
                .and_then(|f| f.set_len(MAX_FILE_BYTES))
                .expect("grow");
        }
        // The first file changed since its lstat: this attempt restarts (spec/store.md §16
        // rule 3); the reads still stopped at the total limit.
        let e = w.flush().expect_err("changed");
        assert!(is_change(&e), "{e:?}");
        assert_eq!(visits.load(Ordering::Relaxed), 5);
        assert!(pipe.lock().queue.is_empty());
        // The restarted capture sees the grown sizes at its lstat: the total limit.
        let e = capture_with(&root, &c, Some(&spill)).expect_err("total limit");
        assert_eq!(e.code, "resource_limit");
        assert_eq!(e.message, "bundle exceeds 64 MiB in total");
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
            assert_eq!(e.message, "bundle could not be read: d0/e0/f0000.md");
            assert_eq!(e.diagnostics[0].code, DIAG_READ_FAILED);
            assert_eq!(e.diagnostics[0].file, "d0/e0/f0000.md");
            assert!(!e.retryable);
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
        // Cancelled after the walk has queued every file, before any read is accepted (no
        // helper started): the walking thread reads nothing and nothing is returned.
        let c = Cancel::new();
        let pipe = Pipe::default();
        let mut w = Walk::new(&root.dir, &c, 2, None, &pipe, None);
        walk_dir(&root.dir, None, "", 0, &mut w).expect("walk");
        assert_eq!(w.pending, 300);
        assert_eq!(pipe.lock().queue.len(), 300);
        c.cancel();
        assert_eq!(
            w.flush().expect_err("cancelled").code,
            "operation_cancelled"
        );
        assert_eq!(w.pending, 0);
        assert!(w.files.is_empty());
        let st = pipe.lock();
        assert!(st.queue.is_empty() && st.done.is_empty());
    }

    /// spec/store.md §17 rule 2: a warm capture of files just written trusts none of them
    /// (racy), and a file whose `lstat` tuple is identical to a trusted entry's is taken from
    /// the cache without being read (so only the racy rule keeps a same-tick rewrite from
    /// being missed); a directory whose stamp is the trusted one is not listed again.
    #[test]
    fn warm_capture_trusts_nothing_racy_and_takes_identical_stamps_from_the_cache() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        fs::create_dir_all(b.join("d")).expect("mkdir");
        fs::write(b.join("a.md"), b"aaa").expect("write");
        fs::write(b.join("d/b.md"), b"bbb").expect("write");
        let root = open(b);
        let cancel = Cancel::new();
        let empty = BundleCache::default();
        let (cold, fresh) = capture_once(&root, &cancel, None, Some(&empty)).expect("capture");
        let fresh = fresh.expect("a warm capture reports what it trusts");
        assert_eq!(fresh.files_len(), 0, "just written: racy, not trusted");
        assert_eq!(
            fresh.dirs_len(),
            0,
            "just created: racy listings, not trusted"
        );
        assert_eq!(cold.files.len(), 2);

        // An entry with the file's current stamp and other bytes: the capture takes it.
        let m = root.dir.symlink_metadata("a.md").expect("lstat");
        let mut forged = BundleCache::default();
        forged.insert_file(
            "a.md".into(),
            FileEntry {
                stamp: stamp_of(&m),
                digest: digest::sha256(b"zzz"),
                bytes: Arc::new(b"zzz".to_vec()),
            },
        );
        // A listing of the root with its current stamp that leaves out `d`.
        let rm = root.dir.dir_metadata().expect("stat root");
        let rs = stamp_of(&rm);
        forged.insert_listing(
            String::new(),
            (rs.dev, rs.ino, rs.mtime_ns, rs.ctime_ns),
            Arc::from(vec![OsString::from("a.md")]),
        );
        let (warm, _) = capture_once(&root, &cancel, None, Some(&forged)).expect("capture");
        assert_eq!(warm.files.len(), 1, "the trusted listing was reused");
        assert_eq!(
            warm.files[0].bytes(),
            b"zzz",
            "the trusted entry was not read"
        );

        // Another stamp (a new modification time): read again.
        let f = fs::File::options()
            .write(true)
            .open(b.join("a.md"))
            .expect("open");
        f.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(9))
            .expect("set mtime");
        let (again, _) = capture_once(&root, &cancel, None, Some(&forged)).expect("capture");
        assert_eq!(
            again.get("a.md").map(CapturedFile::bytes),
            Some(&b"aaa"[..])
        );
    }
}
