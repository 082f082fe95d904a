//! The one durability seam of the store (STYLE.md "One seam for durable effects").
//!
//! Every durable effect of a commit or a recovery — create-and-write, `fsync` of a file,
//! rename, `fsync` of a directory, remove, mkdir, chmod — goes through [`Durable`]. The real
//! implementation is [`RealFs`]; [`RecordingFs`] performs the same effects and records an
//! ordered log of them (with the directory labels), can fail the N-th mutating call (countdown
//! fault injection), and is what the crash tests use to prove the `fsync` ordering.
//!
//! All names passed here are single path components inside a directory handle that was
//! opened without following symlinks; the seam never resolves a multi-component path.

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, DirBuilder, DirBuilderExt, File, OpenOptions, OpenOptionsExt};
use std::fmt::Debug;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

/// A directory handle with its bundle-relative label (`""` for the root, `.okf/receipts`, …).
/// The label is used for logs and never for path resolution.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// The directory handle (opened no-follow).
    pub dir: &'a Dir,
    /// Its bundle-relative label, for logs only.
    pub rel: &'a str,
}

impl At<'_> {
    /// `rel/name` (or `name` at the root), for logs.
    #[must_use]
    pub fn join(&self, name: &str) -> String {
        if self.rel.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.rel)
        }
    }
}

/// The durable effects the store performs (spec/store.md §8.3, §10.1 C8–C15, §11 R1/R7/R8).
///
/// # Errors
/// Every method returns the underlying `io::Error`; the caller decides whether that is a
/// pre-boundary failure (rolled back) or a post-boundary one (poisons the handle, §10.2).
pub trait Durable: Send + Sync + Debug {
    /// Creates `name` exclusively (no-follow, mode 0600 before umask) and writes all `bytes`.
    /// Does not `fsync`.
    fn create_write(&self, at: At<'_>, name: &str, bytes: &[u8]) -> io::Result<File>;
    /// `fsync` of a file written by [`Durable::create_write`].
    fn sync_file(&self, at: At<'_>, name: &str, file: &File) -> io::Result<()>;
    /// Makes the contents of the files `names` of `at` (written by
    /// [`Durable::create_write`], already closed) durable in one step (spec/migration.md
    /// §12.5 rule 3): from [`SYNCFS_FROM`] files on, `syncfs` of the filesystem holding
    /// `at` where available, else (and for fewer files) one `fsync` per file. Not the
    /// directory entries: `fsync` the directory after it.
    fn sync_batch(&self, at: At<'_>, names: &[&str]) -> io::Result<()>;
    /// Renames `from/from_name` onto `to/to_name` (replacing a file there).
    fn rename(&self, from: At<'_>, from_name: &str, to: At<'_>, to_name: &str) -> io::Result<()>;
    /// `fsync` of a directory (`dir.open(".")?.sync_all()`, rust-notes §5.2).
    fn sync_dir(&self, at: At<'_>) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, at: At<'_>, name: &str) -> io::Result<()>;
    /// Removes a directory tree.
    fn remove_dir_all(&self, at: At<'_>, name: &str) -> io::Result<()>;
    /// Creates one directory with `mode` (subject to umask).
    fn mkdir(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()>;
    /// Sets the permission bits of `name`.
    fn set_mode(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()>;
}

/// An I/O error with the bundle-relative path it concerns (a `.okf/…` label or a visible
/// path), so that the store's error names it (spec/store.md §16 rule 5). The kind is the
/// original error's; `Display` is the original error's (an OS message carries no path).
#[derive(Debug)]
pub struct AtPath {
    /// Bundle-relative path (`""`: the bundle directory itself).
    pub path: String,
    /// The original error.
    pub source: io::Error,
}

impl std::fmt::Display for AtPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.source, f)
    }
}

impl std::error::Error for AtPath {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// `e` carrying `path` (an error that already carries one keeps it).
#[must_use]
pub fn at_path(e: io::Error, path: impl Into<String>) -> io::Error {
    if path_of(&e).is_some() {
        return e;
    }
    io::Error::new(
        e.kind(),
        AtPath {
            path: path.into(),
            source: e,
        },
    )
}

/// The path an error carries ([`at_path`]), if any.
#[must_use]
pub fn path_of(e: &io::Error) -> Option<&str> {
    e.get_ref()?
        .downcast_ref::<AtPath>()
        .map(|a| a.path.as_str())
}

/// The real filesystem. Every error carries the path of the entry it concerns
/// ([`at_path`]): the created, renamed-onto, removed or changed entry, or the directory that
/// was `fsync`ed.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

impl Durable for RealFs {
    fn create_write(&self, at: At<'_>, name: &str, bytes: &[u8]) -> io::Result<File> {
        let mut o = OpenOptions::new();
        o.write(true)
            .create_new(true)
            .follow(FollowSymlinks::No)
            .mode(0o600);
        let named = |e| at_path(e, at.join(name));
        let mut f = at.dir.open_with(name, &o).map_err(named)?;
        f.write_all(bytes).map_err(named)?;
        Ok(f)
    }
    fn sync_file(&self, at: At<'_>, name: &str, file: &File) -> io::Result<()> {
        file.sync_all().map_err(|e| at_path(e, at.join(name)))
    }
    fn sync_batch(&self, at: At<'_>, names: &[&str]) -> io::Result<()> {
        sync_batch(at, names).map_err(|e| at_path(e, at.rel))
    }
    fn rename(&self, from: At<'_>, from_name: &str, to: At<'_>, to_name: &str) -> io::Result<()> {
        from.dir
            .rename(from_name, to.dir, to_name)
            .map_err(|e| at_path(e, to.join(to_name)))
    }
    fn sync_dir(&self, at: At<'_>) -> io::Result<()> {
        at.dir
            .open(".")
            .and_then(|d| d.sync_all())
            .map_err(|e| at_path(e, at.rel))
    }
    fn remove_file(&self, at: At<'_>, name: &str) -> io::Result<()> {
        at.dir
            .remove_file(name)
            .map_err(|e| at_path(e, at.join(name)))
    }
    fn remove_dir_all(&self, at: At<'_>, name: &str) -> io::Result<()> {
        at.dir
            .remove_dir_all(name)
            .map_err(|e| at_path(e, at.join(name)))
    }
    fn mkdir(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()> {
        let mut b = DirBuilder::new();
        b.mode(mode);
        at.dir
            .create_dir_with(name, &b)
            .map_err(|e| at_path(e, at.join(name)))
    }
    fn set_mode(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()> {
        use cap_std::fs::{Permissions, PermissionsExt};
        at.dir
            .set_permissions(name, Permissions::from_mode(mode))
            .map_err(|e| at_path(e, at.join(name)))
    }
}

/// [`RealFs::sync_batch`] without the path.
fn sync_batch(at: At<'_>, names: &[&str]) -> io::Result<()> {
    // `syncfs` flushes every dirty file of the filesystem, also other programs' data: it
    // pays off for a large staged set, while a few payloads are cheaper one by one.
    if names.len() < SYNCFS_FROM {
        return sync_each(at, names);
    }
    // A file descriptor of the directory itself (a directory handle may be a path-only
    // descriptor, which `syncfs` refuses).
    let d = at.dir.open(".")?;
    match rustix::fs::syncfs(&d) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::NOSYS => sync_each(at, names),
        Err(e) => Err(e.into()),
    }
}

/// From this many files on, [`RealFs::sync_batch`] uses one `syncfs` instead of one
/// `fsync` per file.
pub const SYNCFS_FROM: usize = 64;

/// The per-file fallback of [`Durable::sync_batch`]: reopens each file read-only (no-follow)
/// and `fsync`s it.
fn sync_each(at: At<'_>, names: &[&str]) -> io::Result<()> {
    let mut o = OpenOptions::new();
    o.read(true).follow(FollowSymlinks::No);
    for name in names {
        at.dir.open_with(name, &o)?.sync_all()?;
    }
    Ok(())
}

/// One recorded effect; paths are `label/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `create_write` of a path.
    Write(String),
    /// `fsync` of a file.
    SyncFile(String),
    /// One durability step for the files of a directory (its label and the names).
    SyncBatch(String, Vec<String>),
    /// Rename from, to.
    Rename(String, String),
    /// `fsync` of a directory (its label).
    SyncDir(String),
    /// File removal.
    Remove(String),
    /// Directory-tree removal.
    RemoveAll(String),
    /// Directory creation.
    Mkdir(String),
    /// Permission change.
    SetMode(String),
}

/// A test seam: performs the real effects, records them in order, and optionally fails the
/// `fail_at`-th call (0-based) with an injected I/O error (countdown fault injection).
#[derive(Debug, Default)]
pub struct RecordingFs {
    log: Mutex<Vec<Op>>,
    fail_at: Mutex<Option<usize>>,
    calls: Mutex<usize>,
}

impl RecordingFs {
    /// A recorder without injected failures.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    /// A recorder whose `n`-th call (0-based) fails with an injected I/O error.
    #[must_use]
    pub fn failing_at(n: usize) -> Arc<Self> {
        let r = Self::default();
        if let Ok(mut f) = r.fail_at.lock() {
            *f = Some(n);
        }
        Arc::new(r)
    }
    /// The effects performed so far (failed calls are not recorded).
    #[must_use]
    pub fn log(&self) -> Vec<Op> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
    /// Number of seam calls so far, including a failed one.
    #[must_use]
    pub fn calls(&self) -> usize {
        self.calls.lock().map(|c| *c).unwrap_or_default()
    }
    fn step(&self, op: Op) -> io::Result<()> {
        let n = {
            let mut c = self
                .calls
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?;
            *c += 1;
            *c - 1
        };
        let fail = self.fail_at.lock().map(|f| *f == Some(n)).unwrap_or(false);
        if fail {
            return Err(io::Error::other("injected I/O error"));
        }
        if let Ok(mut l) = self.log.lock() {
            l.push(op);
        }
        Ok(())
    }
}

impl Durable for RecordingFs {
    fn create_write(&self, at: At<'_>, name: &str, bytes: &[u8]) -> io::Result<File> {
        self.step(Op::Write(at.join(name)))?;
        RealFs.create_write(at, name, bytes)
    }
    fn sync_file(&self, at: At<'_>, name: &str, file: &File) -> io::Result<()> {
        self.step(Op::SyncFile(at.join(name)))?;
        RealFs.sync_file(at, name, file)
    }
    fn sync_batch(&self, at: At<'_>, names: &[&str]) -> io::Result<()> {
        self.step(Op::SyncBatch(
            at.rel.to_owned(),
            names.iter().map(|n| (*n).to_owned()).collect(),
        ))?;
        RealFs.sync_batch(at, names)
    }
    fn rename(&self, from: At<'_>, from_name: &str, to: At<'_>, to_name: &str) -> io::Result<()> {
        self.step(Op::Rename(from.join(from_name), to.join(to_name)))?;
        RealFs.rename(from, from_name, to, to_name)
    }
    fn sync_dir(&self, at: At<'_>) -> io::Result<()> {
        self.step(Op::SyncDir(at.rel.to_owned()))?;
        RealFs.sync_dir(at)
    }
    fn remove_file(&self, at: At<'_>, name: &str) -> io::Result<()> {
        self.step(Op::Remove(at.join(name)))?;
        RealFs.remove_file(at, name)
    }
    fn remove_dir_all(&self, at: At<'_>, name: &str) -> io::Result<()> {
        self.step(Op::RemoveAll(at.join(name)))?;
        RealFs.remove_dir_all(at, name)
    }
    fn mkdir(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()> {
        self.step(Op::Mkdir(at.join(name)))?;
        RealFs.mkdir(at, name, mode)
    }
    fn set_mode(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()> {
        self.step(Op::SetMode(at.join(name)))?;
        RealFs.set_mode(at, name, mode)
    }
}

/// The parent label of a recorded `label/name` path (`""` for a root-level name).
#[must_use]
pub fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

/// Checks the power-loss discipline of a recorded log (spec/store.md §10.1, §8.3, §11):
/// every renamed file was `fsync`ed before its rename; nothing is renamed into
/// `.okf/transactions/` (the commit point) while any rename waits for its directory's
/// `fsync`; every visible rename is made durable by an `fsync` of its directory before the
/// rename of root `index.md` (so the result root index is never durable ahead of another
/// write), before the receipt's rename into `.okf/receipts/` and before the log ends.
/// Publication `fsync`s each directory once after its last
/// rename (`store::publish`), so several visible renames may wait at once. Returns the first
/// violation.
#[must_use]
pub fn check_sync_discipline(log: &[Op]) -> Option<String> {
    use std::collections::BTreeSet;
    let mut synced_files: BTreeSet<String> = BTreeSet::new();
    let mut unsynced_dirs: BTreeSet<String> = BTreeSet::new();
    for op in log {
        match op {
            Op::SyncFile(p) => {
                synced_files.insert(p.clone());
            }
            Op::SyncBatch(dir, names) => {
                synced_files.extend(names.iter().map(|n| format!("{dir}/{n}")));
            }
            Op::Rename(from, to) => {
                // Staged payloads are fsynced at C8; journal and receipt temps right before.
                if !synced_files.contains(from) {
                    return Some(format!("rename of unsynced file {from}"));
                }
                let dir = parent_of(to).to_owned();
                if to == "index.md" {
                    // Publish of the root index: every earlier visible rename is durable.
                    if let Some(d) = unsynced_dirs.iter().find(|d| !d.starts_with(".okf")) {
                        return Some(format!("root index.md published before fsync of {d}"));
                    }
                } else if dir == ".okf/transactions" {
                    // Nothing visible may be pending before the commit point.
                    if let Some(d) = unsynced_dirs.iter().next() {
                        return Some(format!("journal rename before fsync of {d}"));
                    }
                } else if dir == ".okf/receipts" {
                    // C14 follows C13: the whole publication is durable before the receipt.
                    if let Some(d) = unsynced_dirs.iter().find(|d| !d.starts_with(".okf")) {
                        return Some(format!("receipt before fsync of {d}"));
                    }
                }
                unsynced_dirs.insert(dir);
            }
            Op::SyncDir(d) => {
                unsynced_dirs.remove(d);
            }
            _ => {}
        }
    }
    unsynced_dirs
        .into_iter()
        .find(|d| !d.starts_with(".okf/staging"))
        .map(|d| format!("rename into {d} never made durable"))
}

/// The power-loss view of a recorded log: the renames (`(from, to)`) that would survive a
/// power loss at the end of the log, i.e. those followed by an `fsync` of the target's
/// directory (spec/store.md §15 "power-loss mode").
#[must_use]
pub fn durable_renames(log: &[Op]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, op) in log.iter().enumerate() {
        if let Op::Rename(from, to) = op {
            let dir = parent_of(to);
            if log[i + 1..]
                .iter()
                .any(|o| matches!(o, Op::SyncDir(d) if d == dir))
            {
                out.push((from.clone(), to.clone()));
            }
        }
    }
    out
}
