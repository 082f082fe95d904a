//! The warm capture cache of a long-running server (spec/store.md §17, beyond reference): per
//! bundle root identity, the stat tuple, digest and bytes of every visible file and the
//! listing of every directory a capture found **not racy**, so the next capture of the same
//! root reads and hashes only what changed.
//!
//! In memory only: nothing is written to the bundle or to `.okf/`. Off unless the process
//! turns it on ([`enable`]; `okf-mcp serve` without `--no-cache`); the one-shot CLI `call`
//! never builds one. Only captures that wait for publication use it (read and preview tools,
//! [`crate::store::wait::capture_after`] with [`crate::store::wait::WaitFor::Publication`]):
//! every apply tool, `write_concept`, the store's compare-and-swap under the lock and
//! recovery capture cold (§17 rule 3).
//!
//! Trust (§17 rule 2): the capture reads the clock `T` before its first `lstat`; an entry is
//! remembered only when its `mtime_ns` and `ctime_ns` are both more than 2 s older than `T`
//! and than the newest `ctime_ns` that capture saw, and it is reused only when the next
//! capture's no-follow `lstat` gives the identical tuple `(dev, ino, size, mtime_ns,
//! ctime_ns, mode)`. A directory listing is reused on its identical `(dev, ino, mtime_ns,
//! ctime_ns)`. Anything else is read again. A failed capture drops the bundle's entries.
//!
//! Bounds (§17 rule 5): at most [`MAX_BUNDLES`] bundles, least recently used evicted, and at
//! most [`BUDGET_BYTES`] over all of them (bytes held plus a fixed cost per entry); a bundle
//! whose entries alone pass the budget is not kept. A capture's bytes are at most 64 MiB
//! (spec/store.md §3.3), so one bundle always fits.
//!
//! Network and FUSE filesystems (NFS, SMB/CIFS, FUSE, Ceph, 9p, AFS, Lustre, GPFS) are
//! never cached ([`trusts_stat`]): their clients may answer `lstat` from an attribute cache
//! that a cold open would revalidate. (A mount of one inside a bundle on a local filesystem
//! is not detected.)
//!
//! Design note: the cache holds the files' bytes (shared with the captures it serves, never
//! copied), so a warm capture is the very capture a cold one makes of the same bytes (§17
//! rule 4) and every tool runs unchanged on it.

use crate::okf::capture::{CapturedFile, StatStamp};
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::AsFd;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// At most this many bundles are cached (spec/store.md §17 rule 5).
pub const MAX_BUNDLES: usize = 8;
/// The process-wide budget of the cache in bytes: 256 MiB (spec/store.md §17 rule 5).
pub const BUDGET_BYTES: usize = 256 * 1024 * 1024;
/// What one entry costs besides its bytes and path (map slot, stamp, digest, handles).
const ENTRY_COST: usize = 160;

/// The identity of a bundle root: `(dev, ino)` of its pinned directory handle (spec/store.md
/// §17 rule 1: not the path string).
pub type RootId = (u64, u64);

/// A directory's stamp: `(dev, ino, mtime_ns, ctime_ns)` (spec/store.md §17 rule 1).
pub type DirStamp = (u64, u64, i128, i128);

/// `statfs` magic numbers of filesystems whose `lstat` may come from a client's attribute
/// cache: NFS, SMB, CIFS, SMB2, FUSE, Ceph, 9p, AFS, kAFS, Lustre, GPFS.
const UNTRUSTED_FS: [i64; 11] = [
    0x6969,
    0x517b,
    0xff53_4d42,
    0xfe53_4d42,
    0x6573_5546,
    0x00c3_6400,
    0x0102_1997,
    0x5346_414f,
    0x6b41_4653,
    0x0bd0_0bd0,
    0x4750_4653,
];

/// Whether the filesystem holding `dir` answers `lstat` from the inode itself, so an identical
/// stat tuple may stand for identical bytes: not a network or FUSE filesystem, and `fstatfs`
/// answered.
#[must_use]
pub fn trusts_stat(dir: impl AsFd) -> bool {
    rustix::fs::fstatfs(dir).is_ok_and(|s| {
        #[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)] // c_long on every target
        let magic = s.f_type as i64;
        !UNTRUSTED_FS.contains(&magic)
    })
}

/// One file as a trusted capture read it.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// The stat tuple the file had (not racy).
    pub stamp: StatStamp,
    /// SHA-256 of `bytes`.
    pub digest: [u8; 32],
    /// The bytes read, shared with the captures that used them.
    pub bytes: Arc<Vec<u8>>,
}

/// What the cache knows of one bundle: trusted files by bundle-relative path, and trusted
/// directory listings by bundle-relative path (`""` is the root), each with its names sorted
/// by bytes. Immutable once built: a capture reads a snapshot while a newer one replaces it.
#[derive(Debug, Default)]
pub struct BundleCache {
    files: HashMap<String, FileEntry, PathHash>,
    dirs: HashMap<String, (DirStamp, Arc<[OsString]>), PathHash>,
    whole: Option<Whole>,
    cost: usize,
}

/// The hasher of the cache's path tables: seeded per process, several times faster than
/// SipHash on short paths (a warm capture looks up every file's path).
pub type PathHash = foldhash::fast::RandomState;

/// The whole capture a [`BundleCache`] was built from, racy entries included: the fast lane
/// of a warm capture ([`crate::store::capture::capture_warm`]) answers it again when the tree
/// still holds exactly these files and listings, instead of building the capture anew.
#[derive(Debug)]
pub struct Whole {
    /// `sha256:<64 hex>`, the capture's revision (spec/store.md §3.6).
    pub revision: String,
    /// Every visible file, ascending by path bytes, resident (the cache's bytes), with the
    /// trusted stat tuple of the cache or none (racy).
    pub files: Vec<CapturedFile>,
    /// Every directory listing the capture walked, by bundle-relative path (`""` the root),
    /// names sorted by bytes.
    pub listings: HashMap<String, Arc<[OsString]>, PathHash>,
}

impl BundleCache {
    /// The trusted entry of `path` when `stamp` is identical to the one it was read with.
    #[must_use]
    pub fn file(&self, path: &str, stamp: &StatStamp) -> Option<&FileEntry> {
        self.files.get(path).filter(|e| e.stamp == *stamp)
    }

    /// The trusted listing of the directory `path` when `stamp` is identical.
    #[must_use]
    pub fn listing(&self, path: &str, stamp: &DirStamp) -> Option<Arc<[OsString]>> {
        self.dirs
            .get(path)
            .filter(|(s, _)| s == stamp)
            .map(|(_, names)| Arc::clone(names))
    }

    /// Adds a trusted file.
    pub fn insert_file(&mut self, path: String, entry: FileEntry) {
        self.cost += ENTRY_COST + path.len() + entry.bytes.len();
        self.files.insert(path, entry);
    }

    /// Adds a trusted directory listing.
    pub fn insert_listing(&mut self, path: String, stamp: DirStamp, names: Arc<[OsString]>) {
        self.cost += ENTRY_COST + path.len() + names.iter().map(|n| n.len() + 32).sum::<usize>();
        self.dirs.insert(path, (stamp, names));
    }

    /// Records the whole capture the entries were built from (see [`Whole`]); its racy files'
    /// bytes count against the budget.
    pub fn set_whole(&mut self, whole: Whole) {
        for f in &whole.files {
            self.cost += f.path.len()
                + if f.stamp().is_some() {
                    0
                } else {
                    f.bytes().len()
                };
        }
        self.cost += whole.listings.keys().map(|k| k.len() + 64).sum::<usize>();
        self.whole = Some(whole);
    }

    /// The whole capture the entries were built from, if recorded.
    #[must_use]
    pub fn whole(&self) -> Option<&Whole> {
        self.whole.as_ref()
    }

    /// Bytes held plus the fixed cost of every entry.
    #[must_use]
    pub fn cost(&self) -> usize {
        self.cost
    }

    /// Trusted files held.
    #[must_use]
    pub fn files_len(&self) -> usize {
        self.files.len()
    }

    /// Trusted directory listings held.
    #[must_use]
    pub fn dirs_len(&self) -> usize {
        self.dirs.len()
    }
}

#[derive(Default)]
struct Cache {
    on: bool,
    /// Bundles with the tick of their last use.
    bundles: Vec<(RootId, Arc<BundleCache>, u64)>,
    tick: u64,
    /// How many times a failed capture dropped a bundle's entries: a capture that began
    /// before a drop stores nothing ([`Snapshot`]).
    drops: u64,
}

/// What a capture starts from: the bundle's entries, and the drop count when it took them.
/// A capture running beside one that fails (calls run concurrently in `serve`) may finish
/// after the failure dropped the entries; its [`store`] is then refused, so "a failed
/// capture drops the cache" holds whatever the order (spec/store.md §17 rule 3).
#[derive(Debug)]
pub struct Snapshot {
    /// The trusted entries (empty when none are cached).
    pub entries: Arc<BundleCache>,
    drops: u64,
}

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| Mutex::new(Cache::default()));

fn cache() -> MutexGuard<'static, Cache> {
    // Every update under the lock replaces whole entries, so a poisoned state is consistent.
    CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Cache {
    fn snapshot(&mut self, id: RootId) -> Option<Snapshot> {
        if !self.on {
            return None;
        }
        self.tick += 1;
        let tick = self.tick;
        let entries = self
            .bundles
            .iter_mut()
            .find(|(i, _, _)| *i == id)
            .map_or_else(Arc::default, |(_, b, used)| {
                *used = tick;
                Arc::clone(b)
            });
        Some(Snapshot {
            entries,
            drops: self.drops,
        })
    }

    fn store(&mut self, id: RootId, fresh: BundleCache, from: &Snapshot) {
        if !self.on || from.drops != self.drops {
            return;
        }
        self.bundles.retain(|(i, _, _)| *i != id);
        if fresh.cost() > BUDGET_BYTES {
            return;
        }
        self.tick += 1;
        let tick = self.tick;
        self.bundles.push((id, Arc::new(fresh), tick));
        while self.bundles.len() > MAX_BUNDLES || self.usage().1 > BUDGET_BYTES {
            let Some(oldest) = self
                .bundles
                .iter()
                .enumerate()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(k, _)| k)
            else {
                break;
            };
            self.bundles.swap_remove(oldest);
        }
    }

    fn forget(&mut self, id: RootId) {
        self.drops += 1;
        self.bundles.retain(|(i, _, _)| *i != id);
    }

    fn usage(&self) -> (usize, usize) {
        (
            self.bundles.len(),
            self.bundles.iter().map(|(_, b, _)| b.cost()).sum(),
        )
    }
}

/// Turns the cache on or off for this process (off drops every bundle).
pub fn enable(on: bool) {
    let mut c = cache();
    c.on = on;
    if !on {
        c.bundles.clear();
    }
}

/// Whether the cache is on.
#[must_use]
pub fn is_enabled() -> bool {
    cache().on
}

/// The current entries of bundle `id` (an empty set when none are cached) and marks it
/// used; `None` when the cache is off.
#[must_use]
pub fn snapshot(id: RootId) -> Option<Snapshot> {
    cache().snapshot(id)
}

/// Replaces the entries of bundle `id` with `fresh` (what a successful capture that started
/// `from` trusted), then evicts the least recently used bundles past [`MAX_BUNDLES`] or
/// [`BUDGET_BYTES`]. A bundle over the budget on its own is dropped. No effect when the cache
/// is off or a failed capture dropped entries since `from` was taken.
pub fn store(id: RootId, fresh: BundleCache, from: &Snapshot) {
    cache().store(id, fresh, from);
}

/// Drops the entries of bundle `id` (a capture of it failed: spec/store.md §17 rule 3), and
/// refuses the [`store`] of every capture that began before.
pub fn forget(id: RootId) {
    cache().forget(id);
}

/// `(bundles cached, their cost in bytes)`.
#[must_use]
pub fn usage() -> (usize, usize) {
    cache().usage()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(ino: u64) -> StatStamp {
        StatStamp {
            dev: 1,
            ino,
            size: 3,
            mtime_ns: 10,
            ctime_ns: 10,
            mode: 0o100_644,
        }
    }

    /// Stores `b` for `id` from a snapshot taken right before (off: from a blank one).
    fn put(c: &mut Cache, id: RootId, b: BundleCache) {
        let from = c.snapshot(id).unwrap_or(Snapshot {
            entries: Arc::default(),
            drops: c.drops,
        });
        c.store(id, b, &from);
    }

    /// One 3-byte file, counted as costing `cost` bytes in all.
    fn one_file(cost: usize) -> BundleCache {
        let mut b = BundleCache::default();
        b.insert_file(
            "a.md".into(),
            FileEntry {
                stamp: stamp(1),
                digest: [0; 32],
                bytes: Arc::new(vec![0; 3]),
            },
        );
        b.cost = cost;
        b
    }

    #[test]
    fn entries_need_the_identical_stamp_and_the_cache_keeps_its_bounds() {
        let b = one_file(ENTRY_COST);
        assert!(b.file("a.md", &stamp(1)).is_some());
        let mut other = stamp(1);
        other.ctime_ns += 1;
        assert!(
            b.file("a.md", &other).is_none(),
            "a changed ctime is a miss"
        );
        assert!(b.file("b.md", &stamp(1)).is_none());

        let mut c = Cache::default();
        assert!(c.snapshot((9, 9)).is_none(), "off: no snapshot");
        put(&mut c, (9, 9), one_file(1));
        assert_eq!(c.usage().0, 0, "off: nothing stored");

        c.on = true;
        for k in 0..10u64 {
            put(&mut c, (7, k), one_file(1));
            // Touch the first bundle so it stays the most recently used.
            assert!(c.snapshot((7, 0)).is_some());
        }
        assert_eq!(
            c.usage().0,
            MAX_BUNDLES,
            "least recently used evicted past 8"
        );
        assert_eq!(
            c.snapshot((7, 0)).map(|s| s.entries.files_len()),
            Some(1),
            "kept"
        );
        assert_eq!(
            c.snapshot((7, 1)).map(|s| s.entries.files_len()),
            Some(0),
            "evicted"
        );
        put(&mut c, (7, 20), one_file(BUDGET_BYTES + 1));
        assert_eq!(
            c.snapshot((7, 20)).map(|s| s.entries.files_len()),
            Some(0),
            "over the budget alone: not kept"
        );
        put(&mut c, (7, 30), one_file(BUDGET_BYTES / 2 + 1));
        put(&mut c, (7, 31), one_file(BUDGET_BYTES / 2 + 1));
        assert!(c.usage().1 <= BUDGET_BYTES, "the budget holds");
        assert_eq!(c.snapshot((7, 31)).map(|s| s.entries.files_len()), Some(1));
        assert_eq!(
            c.snapshot((7, 30)).map(|s| s.entries.files_len()),
            Some(0),
            "evicted by budget"
        );
    }

    /// spec/store.md §17 rule 3 with concurrent calls: a capture that began before another
    /// one failed stores nothing, and one that begins after stores again.
    #[test]
    fn a_capture_that_began_before_a_failure_stores_nothing() {
        let mut c = Cache {
            on: true,
            ..Cache::default()
        };
        let early = c.snapshot((1, 1)).expect("on");
        c.forget((1, 1));
        c.store((1, 1), one_file(ENTRY_COST), &early);
        assert_eq!(c.usage().0, 0, "stored after the drop");
        let late = c.snapshot((1, 1)).expect("on");
        c.store((1, 1), one_file(ENTRY_COST), &late);
        assert_eq!(c.snapshot((1, 1)).map(|s| s.entries.files_len()), Some(1));
    }

    #[test]
    fn a_local_temp_dir_is_trusted() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = std::fs::File::open(t.path()).expect("open dir");
        // The test machine's temp dir is a local filesystem (tmpfs, ext4, overlay, btrfs…).
        assert!(trusts_stat(&d));
    }
}
