//! The bundle lock (spec/store.md §7 step 3, §10.1 C2; README R11).
//!
//! Two layers, both taken by polling every 10 ms up to the timeout (30 s; shorter only under
//! the `fault-injection` feature), each poll a cancellation checkpoint when the caller is
//! still before the boundary:
//! 1. an in-process set of locked bundles keyed by the root's (device, inode), so that two
//!    requests of this server never race on the same bundle even before touching the file;
//! 2. an exclusive advisory lock (`File::try_lock`, flock-like) on `.okf/lock`, which also
//!    excludes other processes that honour it.
//!
//! Dropping [`BundleLock`] releases both (C16). A crashed process releases its flock with
//! its file descriptors.

use crate::cancel::Cancel;
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The poll interval of C2.
pub const POLL: Duration = Duration::from_millis(10);
/// The lock timeout of C2.
pub const TIMEOUT: Duration = Duration::from_secs(30);

fn held() -> &'static Mutex<HashSet<(u64, u64)>> {
    static HELD: OnceLock<Mutex<HashSet<(u64, u64)>>> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The timeout passed (→ `LockTimeout`).
    #[error("bundle is locked by another writer")]
    Timeout,
    /// The request was cancelled while waiting.
    #[error("cancelled while waiting for the lock")]
    Cancelled,
    /// Opening or locking `.okf/lock` failed.
    #[error("lock file could not be opened")]
    Io(#[source] std::io::Error),
}

/// Both lock layers; released on drop.
#[derive(Debug)]
#[must_use = "the lock is released when this value is dropped"]
pub struct BundleLock {
    file: std::fs::File,
    id: (u64, u64),
}

impl Drop for BundleLock {
    fn drop(&mut self) {
        // Unlock errors are irrelevant: closing the descriptor releases the flock anyway.
        let _ = self.file.unlock();
        if let Ok(mut h) = held().lock() {
            h.remove(&self.id);
        }
    }
}

/// Opens or creates `.okf/lock` (0600, no-follow) and takes both layers for bundle `id`
/// (root device, inode). `cancel` is checked at every poll when given.
///
/// # Errors
/// [`LockError`].
pub fn acquire(
    okf: &Dir,
    id: (u64, u64),
    timeout: Duration,
    cancel: Option<&Cancel>,
) -> Result<BundleLock, LockError> {
    let mut o = OpenOptions::new();
    o.read(true)
        .write(true)
        .create(true)
        .follow(FollowSymlinks::No)
        .mode(0o600);
    let file = okf.open_with("lock", &o).map_err(LockError::Io)?;
    let meta = file.metadata().map_err(LockError::Io)?;
    if !meta.is_file() {
        return Err(LockError::Io(std::io::Error::other("lock is not a file")));
    }
    let file = file.into_std();
    let start = Instant::now();
    loop {
        if cancel.is_some_and(Cancel::is_cancelled) {
            return Err(LockError::Cancelled);
        }
        let mine = held().lock().map(|mut h| h.insert(id)).unwrap_or(false);
        if mine {
            match file.try_lock() {
                Ok(()) => return Ok(BundleLock { file, id }),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => {
                    if let Ok(mut h) = held().lock() {
                        h.remove(&id);
                    }
                    return Err(LockError::Io(e));
                }
            }
            if let Ok(mut h) = held().lock() {
                h.remove(&id);
            }
        }
        if start.elapsed() >= timeout {
            return Err(LockError::Timeout);
        }
        std::thread::sleep(POLL);
    }
}
