//! Post-boundary work shared by a commit and by recovery: publish (C11–C12 / R7), verify
//! (C13), receipt write and pruning (C14 / R8, §8.3–§8.4), cleanup (C15).
//!
//! Invariant: nothing here checks cancellation — every function runs after the commit point.

use crate::digest;
use crate::store::durable::At;
use crate::store::error::{Corrupt, StoreError};
use crate::store::fault::Point;
use crate::store::handle::{point, Handle};
use crate::store::journal::{Journal, WriteEntry};
use crate::store::receipt::{self, ReceiptFile};
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, OpenOptions, PermissionsExt};
use std::io::Read;

/// Receipts always kept by pruning (spec/store.md §8.4).
pub const KEEP_RECEIPTS: usize = 1_000;
/// Age after which receipts beyond the newest 1,000 are pruned, in nanoseconds.
pub const PRUNE_AGE_NS: i128 = 24 * 3600 * 1_000_000_000;

/// The state of one visible path (spec/store.md §11 R3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetState {
    /// No entry at the path (or a missing parent).
    Absent,
    /// A regular file: bare hex digest and permission bits.
    File {
        /// 64 lowercase hex.
        digest: String,
        /// Permission bits.
        mode: u32,
    },
    /// A symlink, directory or special file at the path, or a symlinked / non-directory
    /// parent component.
    Foreign,
}

/// Reads the state of `path` under `root` without following symlinks.
///
/// # Errors
/// I/O errors other than "not found".
pub fn target_state(root: &Dir, path: &str) -> std::io::Result<TargetState> {
    let comps: Vec<&str> = path.split('/').collect();
    let (last, parents) = comps.split_last().unwrap_or((&"", &[]));
    let mut dir = root.try_clone()?;
    for c in parents {
        match dir.symlink_metadata(c) {
            Ok(m) if m.is_dir() && !m.file_type().is_symlink() => {}
            Ok(_) => return Ok(TargetState::Foreign),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TargetState::Absent),
            Err(e) => return Err(e),
        }
        dir = dir.open_dir_nofollow(c)?;
    }
    let m = match dir.symlink_metadata(last) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TargetState::Absent),
        Err(e) => return Err(e),
    };
    if !m.is_file() || m.file_type().is_symlink() {
        return Ok(TargetState::Foreign);
    }
    let mut o = OpenOptions::new();
    o.read(true).follow(FollowSymlinks::No).nonblock(true);
    let mut f = dir.open_with(last, &o)?;
    let m2 = f.metadata()?;
    if !m2.is_file() {
        return Ok(TargetState::Foreign);
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(TargetState::File {
        digest: digest::hex(&digest::sha256(&bytes)),
        mode: m2.permissions().mode() & 0o7777,
    })
}

/// Classification of a write against its base and result (spec/store.md §11 R3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteState {
    /// Holds the result digest.
    Published,
    /// At the base state; carries the mode of the file it will replace (if any).
    Pending(Option<u32>),
    /// Neither base nor result.
    Foreign,
}

/// Classifies write `w` of `j`.
///
/// # Errors
/// I/O errors reading the target.
pub fn classify(root: &Dir, j: &Journal, w: &WriteEntry) -> std::io::Result<WriteState> {
    // `base` is strictly ascending by path bytes (journal validity condition 1, §9).
    let base = j
        .base
        .binary_search_by(|b| b.path.as_bytes().cmp(w.path.as_bytes()))
        .ok()
        .and_then(|i| j.base.get(i));
    Ok(match (target_state(root, &w.path)?, base) {
        (TargetState::File { digest, .. }, _) if digest == w.digest => WriteState::Published,
        (TargetState::Absent, None) => WriteState::Pending(None),
        (TargetState::File { digest, mode }, Some(b)) if digest == b.digest => {
            WriteState::Pending(Some(mode))
        }
        _ => WriteState::Foreign,
    })
}

fn post_io<'a>(
    h: &'a Handle<'_>,
    step: &'static str,
) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |source| {
        h.poison();
        StoreError::Io { step, source }
    }
}

fn blocked(j: &Journal, w: &WriteEntry) -> StoreError {
    StoreError::PublicationBlocked {
        path: w.path.clone(),
        txn_id: j.txn_id.clone(),
        payload: w.payload.clone(),
    }
}

/// C11–C13 (and R7): publishes every write not yet published, in publish order, then
/// verifies all. A target found neither at base nor at result stops publication.
///
/// Directory `fsync`s: each directory that received renames is `fsync`ed once, right after
/// the last write of the journal whose parent it is (publish order keeps a directory's
/// writes within the run of its subtree, so at most the directories on one path wait), and
/// every waiting directory is `fsync`ed **before** the rename of root `index.md`, which is
/// then `fsync`ed itself: a power loss can drop a renamed-but-unsynced write, which recovery
/// finds pending and publishes again (R3, R7), but root `index.md` is never durable ahead of
/// another write (spec/store.md §11 guarantee 3, §10.1 C12). In a recovery, the directories
/// of writes an earlier attempt already published are `fsync`ed as well (that attempt may
/// have stopped between a rename and its directory's `fsync`), before the receipt is written
/// and the journal goes. A process crash sees every
/// completed rename either way. One `fsync` per directory instead of one per rename: 90
/// instead of 4,500 for the 5,000-document migration bench (`docs/bench.md`).
///
/// # Errors
/// `PublicationBlocked`; `PublicationIncomplete` naming the first write in publish order
/// that does not hold its result (or, when every write is visible, the write whose step
/// failed) for any post-boundary I/O failure (the handle is poisoned; spec/store.md §16
/// rule 1); a simulated crash.
pub(crate) fn publish_all(h: &Handle<'_>, j: &Journal) -> Result<(), StoreError> {
    let mut at: Option<usize> = None;
    publish_steps(h, j, &mut at).map_err(|e| match e {
        StoreError::Io { .. } => {
            h.poison();
            let path = first_unpublished(&h.root.dir, j)
                .or_else(|| at.and_then(|i| j.writes.get(i)).map(|w| w.path.clone()))
                .or_else(|| j.writes.last().map(|w| w.path.clone()))
                .unwrap_or_default();
            StoreError::PublicationIncomplete { path }
        }
        other => other,
    })
}

/// The first write of `j` in publish order whose visible path does not hold its result
/// digest (a target that cannot be examined counts as not published); `None` when every
/// write is visible (spec/store.md §16 rule 1). Reads only, no lock needed.
pub(crate) fn first_unpublished(root: &Dir, j: &Journal) -> Option<String> {
    j.writes
        .iter()
        .find(|w| !matches!(target_state(root, &w.path), Ok(TargetState::File { ref digest, .. }) if *digest == w.digest))
        .map(|w| w.path.clone())
}

/// [`publish_all`]'s steps; `at` is the index of the write being published.
fn publish_steps(h: &Handle<'_>, j: &Journal, at: &mut Option<usize>) -> Result<(), StoreError> {
    let stage_rel = format!(".okf/staging/{}", j.txn_id);
    let mut stage_dir: Option<Dir> = None;
    // The index of the last write in each parent directory.
    let mut last_in: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, w) in j.writes.iter().enumerate() {
        last_in.insert(crate::store::durable::parent_of(&w.path), i);
    }
    // Directories with a rename not yet made durable, by label.
    let mut unsynced: std::collections::BTreeMap<String, Dir> = std::collections::BTreeMap::new();
    for (i, w) in j.writes.iter().enumerate() {
        *at = Some(i);
        h.alive()?;
        let class = classify(&h.root.dir, j, w).map_err(post_io(h, "publish"))?;
        let replaced_mode = match class {
            WriteState::Published => {
                // Published by an earlier attempt (recovery): that attempt may have stopped
                // before the directory's `fsync`, so it is made durable here too.
                let label = crate::store::durable::parent_of(&w.path);
                if !unsynced.contains_key(label) {
                    let (parent, parent_rel, _) = ensure_parents(h, &w.path)?;
                    unsynced.insert(parent_rel, parent);
                }
                sync_if_last(h, &mut unsynced, &last_in, &w.path, i)?;
                point(&h.opts, Point::AfterPublish(i), None)?;
                continue;
            }
            WriteState::Foreign => return Err(blocked(j, w)),
            WriteState::Pending(m) => m,
        };
        if stage_dir.is_none() {
            stage_dir = Some(
                h.staging
                    .open_dir_nofollow(&j.txn_id)
                    .map_err(post_io(h, "open staging"))?,
            );
        }
        let Some(sd) = stage_dir.as_ref() else {
            continue;
        };
        let stage = At {
            dir: sd,
            rel: &stage_rel,
        };
        let (parent, parent_rel, name) = ensure_parents(h, &w.path)?;
        point(&h.opts, Point::BeforePublish(i), None)?;
        h.fs()
            .set_mode(stage, &w.payload, replaced_mode.unwrap_or(h.new_file_mode))
            .map_err(post_io(h, "publish"))?;
        if w.path == "index.md" {
            // C12: everything published before the root index is durable before its rename.
            sync_all(h, &mut unsynced)?;
        }
        let target = At {
            dir: &parent,
            rel: &parent_rel,
        };
        h.fs()
            .rename(stage, &w.payload, target, name)
            .map_err(post_io(h, "publish"))?;
        unsynced.entry(parent_rel).or_insert(parent);
        sync_if_last(h, &mut unsynced, &last_in, &w.path, i)?;
        point(&h.opts, Point::AfterPublish(i), None)?;
    }
    *at = None;
    sync_all(h, &mut unsynced)?;
    // C13.
    for w in &j.writes {
        match target_state(&h.root.dir, &w.path).map_err(post_io(h, "verify"))? {
            TargetState::File { digest, .. } if digest == w.digest => {}
            _ => return Err(blocked(j, w)),
        }
    }
    point(&h.opts, Point::AfterVerify, None)
}

/// `fsync`s the parent of write `i` (`path`) if it waits for one and `i` is its last write.
fn sync_if_last(
    h: &Handle<'_>,
    unsynced: &mut std::collections::BTreeMap<String, Dir>,
    last_in: &std::collections::HashMap<&str, usize>,
    path: &str,
    i: usize,
) -> Result<(), StoreError> {
    let label = crate::store::durable::parent_of(path);
    if last_in.get(label) != Some(&i) {
        return Ok(());
    }
    if let Some(dir) = unsynced.remove(label) {
        let at = At {
            dir: &dir,
            rel: label,
        };
        h.fs().sync_dir(at).map_err(post_io(h, "publish"))?;
    }
    Ok(())
}

/// `fsync`s every directory that waits for one, in label order.
fn sync_all(
    h: &Handle<'_>,
    unsynced: &mut std::collections::BTreeMap<String, Dir>,
) -> Result<(), StoreError> {
    for (label, dir) in std::mem::take(unsynced) {
        let at = At {
            dir: &dir,
            rel: &label,
        };
        h.fs().sync_dir(at).map_err(post_io(h, "publish"))?;
    }
    Ok(())
}

/// Opens (creating as needed, 0755 under umask, each creation made durable by an `fsync`
/// of its parent) the parent directory of `path`; returns it, its label and the file name.
fn ensure_parents<'p>(h: &Handle<'_>, path: &'p str) -> Result<(Dir, String, &'p str), StoreError> {
    let comps: Vec<&str> = path.split('/').collect();
    let (name, parents) = comps.split_last().unwrap_or((&"", &[]));
    let mut dir = h.root.dir.try_clone().map_err(post_io(h, "publish"))?;
    let mut rel = String::new();
    for c in parents {
        match dir.symlink_metadata(c) {
            Ok(m) if m.is_dir() && !m.file_type().is_symlink() => {}
            Ok(_) => {
                return Err(StoreError::Io {
                    step: "publish",
                    source: std::io::Error::other("parent is not a directory"),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let at = At {
                    dir: &dir,
                    rel: &rel,
                };
                h.fs().mkdir(at, c, 0o755).map_err(post_io(h, "publish"))?;
                h.fs().sync_dir(at).map_err(post_io(h, "publish"))?;
            }
            Err(e) => return Err(post_io(h, "publish")(e)),
        }
        dir = dir.open_dir_nofollow(c).map_err(post_io(h, "publish"))?;
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(c);
    }
    Ok((dir, rel, name))
}

/// C14 / R8: writes the receipt (temp 0600 → fsync → rename → fsync `receipts/`) unless an
/// identical one exists, then prunes.
///
/// # Errors
/// An existing different receipt → `StorageCorrupt`; post-boundary I/O.
pub(crate) fn write_receipt(h: &Handle<'_>, j: &Journal, now_ns: i128) -> Result<(), StoreError> {
    h.alive()?;
    let name = ReceiptFile::file_name(&j.receipt_file().key);
    store_receipt(h, j).map_err(|e| match e {
        // spec/store.md §16 rule 1a: the receipt that could not be stored, by its path.
        StoreError::Io { .. } => StoreError::ReceiptNotStored {
            path: format!(".okf/receipts/{name}"),
        },
        e => e,
    })?;
    point(&h.opts, Point::AfterReceipt, None)?;
    prune(h, now_ns)
}

/// The receipt of `j` written durably (temp file, `fsync`, rename, directory `fsync`) unless
/// an identical one exists.
fn store_receipt(h: &Handle<'_>, j: &Journal) -> Result<(), StoreError> {
    let rf = j.receipt_file();
    let bytes = rf.encode();
    let name = ReceiptFile::file_name(&rf.key);
    match read_file(&h.receipts, &name) {
        Ok(Some(existing)) => {
            if existing != bytes {
                return Err(StoreError::StorageCorrupt(Corrupt::Receipt {
                    name: digest::receipt_name(&rf.key),
                }));
            }
        }
        Ok(None) => {
            let tmp = format!("{name}.tmp");
            let at = h.at_receipts();
            let _ = h.receipts.remove_file(&tmp);
            let f = h
                .fs()
                .create_write(at, &tmp, &bytes)
                .map_err(post_io(h, "receipt"))?;
            h.fs()
                .sync_file(at, &tmp, &f)
                .map_err(post_io(h, "receipt"))?;
            drop(f);
            point(&h.opts, Point::AfterReceiptTmp, None)?;
            h.fs()
                .rename(at, &tmp, at, &name)
                .map_err(post_io(h, "receipt"))?;
            h.fs().sync_dir(at).map_err(post_io(h, "receipt"))?;
        }
        Err(e) => return Err(post_io(h, "receipt")(e)),
    }
    Ok(())
}

/// Reads a regular file (no-follow); `None` when absent; a non-file is returned as empty
/// bytes so that it compares unequal.
fn read_file(dir: &Dir, name: &str) -> std::io::Result<Option<Vec<u8>>> {
    match dir.symlink_metadata(name) {
        Ok(m) if m.is_file() && !m.file_type().is_symlink() => {}
        Ok(_) => return Ok(Some(Vec::new())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut o = OpenOptions::new();
    o.read(true).follow(FollowSymlinks::No).nonblock(true);
    let mut f = dir.open_with(name, &o)?;
    let mut b = Vec::new();
    f.read_to_end(&mut b)?;
    Ok(Some(b))
}

/// Reads `.okf/receipts/<name>` for the lookup of §8.5.
pub(crate) fn read_receipt(h: &Handle<'_>, name: &str) -> std::io::Result<Option<Vec<u8>>> {
    read_file(&h.receipts, name)
}

/// §8.4: keeps the 1,000 newest receipts (by `commit_time` descending, ties by file name) and
/// deletes the others whose `commit_time` is more than 24 h before `now_ns`. Files that fail
/// strict decoding (or whose name does not match their key) are never deleted.
///
/// # Errors
/// Post-boundary I/O.
pub(crate) fn prune(h: &Handle<'_>, now_ns: i128) -> Result<(), StoreError> {
    let mut names: Vec<String> = Vec::new();
    for e in h.receipts.entries().map_err(post_io(h, "prune"))? {
        let e = e.map_err(post_io(h, "prune"))?;
        if let Some(name) = e.file_name().to_str() {
            if name.ends_with(".json") {
                names.push(name.to_owned());
            }
        }
    }
    // Only receipts past the newest KEEP_RECEIPTS can go, and every valid receipt is one of
    // these names: with no more names than that, nothing is read or decoded.
    if names.len() <= KEEP_RECEIPTS {
        return Ok(());
    }
    let mut valid: Vec<(i128, String)> = Vec::new();
    for name in names {
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let Ok(Some(bytes)) = read_file(&h.receipts, &name) else {
            continue;
        };
        let Ok(r) = ReceiptFile::decode(&bytes) else {
            continue;
        };
        if digest::receipt_name(&r.key) != stem {
            continue;
        }
        if let Some(t) = receipt::parse_commit_time(&r.receipt.commit_time) {
            valid.push((t, name));
        }
    }
    valid.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut removed = false;
    for (t, name) in valid.iter().skip(KEEP_RECEIPTS) {
        if now_ns - t > PRUNE_AGE_NS {
            h.fs()
                .remove_file(h.at_receipts(), name)
                .map_err(post_io(h, "prune"))?;
            removed = true;
        }
    }
    if removed {
        h.fs()
            .sync_dir(h.at_receipts())
            .map_err(post_io(h, "prune"))?;
    }
    Ok(())
}

/// C15: removes the journal, `fsync`s `transactions/`, removes the staging directory.
///
/// # Errors
/// Post-boundary I/O.
pub(crate) fn cleanup(h: &Handle<'_>, j: &Journal) -> Result<(), StoreError> {
    h.alive()?;
    clean(h, j, true)
}

/// C15 of a finished transaction (its receipt is durable, [`receipt_durable`]) met again
/// by recovery: as [`cleanup`], but a failure does not poison the handle, since nothing about
/// the transaction is uncertain (spec/store.md §16 rule 1a: the next open retries it).
///
/// # Errors
/// `Io` (`cleanup`) naming the `.okf/…` entry that could not be removed; injected faults.
pub(crate) fn cleanup_finished(h: &Handle<'_>, j: &Journal) -> Result<(), StoreError> {
    h.alive()?;
    clean(h, j, false)
}

fn clean(h: &Handle<'_>, j: &Journal, poison: bool) -> Result<(), StoreError> {
    let io = |source: std::io::Error| {
        if poison {
            h.poison();
        }
        StoreError::Io {
            step: "cleanup",
            source,
        }
    };
    h.fs()
        .remove_file(h.at_tx(), &format!("{}.json", j.txn_id))
        .map_err(io)?;
    h.fs().sync_dir(h.at_tx()).map_err(io)?;
    point(&h.opts, Point::AfterJournalRemove, None)?;
    match h.staging.symlink_metadata(&j.txn_id) {
        Ok(_) => h
            .fs()
            .remove_dir_all(h.at_staging(), &j.txn_id)
            .map_err(io)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    point(&h.opts, Point::AfterCleanup, None)
}

/// Whether the receipt of `j` is durable in `receipts` (`.okf/receipts/`): the file exists,
/// is regular and equals the journal's receipt byte for byte. Such a journal is finished;
/// only its cleanup (C15) is left (spec/store.md §16 rule 1a). Reads only.
pub(crate) fn receipt_durable(receipts: &Dir, j: &Journal) -> bool {
    let rf = j.receipt_file();
    matches!(
        read_file(receipts, &ReceiptFile::file_name(&rf.key)),
        Ok(Some(b)) if b == rf.encode()
    )
}

/// Code of the notice of a finished transaction whose cleanup failed (spec/store.md §16
/// rule 1a).
pub const CLEANUP_PENDING: &str = "store_cleanup_pending";

/// The `INFO` notice `store_cleanup_pending` for a cleanup that failed at `path` (an
/// `.okf/…` entry): the change is complete; the next store open retries the cleanup.
#[must_use]
pub fn cleanup_pending_notice(path: &str) -> crate::envelope::Diagnostic {
    crate::envelope::Diagnostic::new(
        CLEANUP_PENDING,
        crate::envelope::Severity::Info,
        format!("a finished change's store files could not be removed ({path}); the change is complete, and the next write retries the cleanup once {path} is writable"),
    )
    .with_file(path)
}

/// Now, in nanoseconds since the Unix epoch.
#[must_use]
pub fn now_ns() -> i128 {
    let t = chrono::Utc::now();
    i128::from(t.timestamp()) * 1_000_000_000 + i128::from(t.timestamp_subsec_nanos())
}
