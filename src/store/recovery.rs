//! Crash recovery (spec/store.md §11 R1–R8), run at every store open under the lock.
//!
//! Idempotent by construction: every rule reads the current state and only moves it forward
//! (R7 skips published paths; R8 accepts an identical existing receipt), so a crash at any
//! point of a recovery is repaired by the next one (STO-04).

use crate::digest;
use crate::store::error::{Corrupt, StoreError};
use crate::store::handle::Handle;
use crate::store::journal::Journal;
use crate::store::publish::{self, WriteState};
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, OpenOptions};
use std::io::Read;

fn names(dir: &Dir, label: &str) -> Result<Vec<String>, StoreError> {
    let io = |e| StoreError::Io {
        step: "recovery",
        source: crate::store::durable::at_path(e, label),
    };
    let mut v = Vec::new();
    for e in dir.entries().map_err(io)? {
        let e = e.map_err(io)?;
        if let Some(n) = e.file_name().to_str() {
            v.push(n.to_owned());
        }
    }
    v.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    Ok(v)
}

/// The bytes of the regular file `name` in `dir`, opened without following symlinks; `None`
/// for any other kind of entry.
pub(crate) fn read_regular(dir: &Dir, name: &str) -> std::io::Result<Option<Vec<u8>>> {
    let m = dir.symlink_metadata(name)?;
    if !m.is_file() || m.file_type().is_symlink() {
        return Ok(None);
    }
    let mut o = OpenOptions::new();
    o.read(true).follow(FollowSymlinks::No).nonblock(true);
    let mut f = dir.open_with(name, &o)?;
    let mut b = Vec::new();
    f.read_to_end(&mut b)?;
    Ok(Some(b))
}

/// Whether a journal (`<txn-id>.json`) waits in `transactions/` (read-only; §11).
///
/// # Errors
/// I/O reading the directory.
pub(crate) fn journal_pending(h: &Handle<'_>) -> Result<bool, StoreError> {
    Ok(names(&h.tx, ".okf/transactions")?
        .iter()
        .any(|n| n.ends_with(".json")))
}

/// In the staging directory `txn` of a pending journal, unlinks every entry that is not a
/// regular file (where only payloads belong), without following or opening it (spec/store.md
/// §16 rule 5). A payload that is missing afterwards is R6's corrupt journal.
fn remove_stray_payloads(h: &Handle<'_>, txn: &str) -> Result<(), StoreError> {
    let Ok(dir) = h.staging.open_dir_nofollow(txn) else {
        return Ok(());
    };
    let rel = format!(".okf/staging/{txn}");
    let at = crate::store::durable::At {
        dir: &dir,
        rel: &rel,
    };
    for n in names(&dir, &rel)? {
        let stray = dir
            .symlink_metadata(&n)
            .is_ok_and(|m| !m.is_file() && !m.is_dir());
        if stray {
            h.fs()
                .remove_file(at, &n)
                .map_err(StoreError::io("recovery"))?;
        }
    }
    Ok(())
}

/// Runs R1–R8; returns the idempotency keys whose journals this recovery completed.
///
/// # Errors
/// `StorageCorrupt` (R2, R5, R6, R8), `RecoveryBlocked` (R4), `RecoveryIncomplete` (an I/O
/// failure while publishing a pending write, R7; spec/store.md §16 rule 1), I/O.
pub(crate) fn recover(h: &Handle<'_>) -> Result<Vec<String>, StoreError> {
    let fs = h.fs();
    // R1: temp files, probe leftovers, orphaned staging directories.
    let journals: Vec<String> = names(&h.tx, ".okf/transactions")?
        .into_iter()
        .filter(|n| {
            if n.ends_with(".json.tmp") {
                let _ = fs.remove_file(h.at_tx(), n);
                false
            } else {
                n.ends_with(".json")
            }
        })
        .collect();
    for n in names(&h.receipts, ".okf/receipts")? {
        if n.ends_with(".json.tmp") {
            fs.remove_file(h.at_receipts(), &n)
                .map_err(StoreError::io("recovery"))?;
        }
    }
    for n in names(&h.caps, ".okf/capabilities")? {
        let _ = fs.remove_file(h.at_caps(), &n);
    }
    for n in names(&h.staging, ".okf/staging")? {
        let pending = journals
            .iter()
            .any(|j| j.strip_suffix(".json") == Some(n.as_str()));
        // spec/store.md §16 rule 5: a non-directory where a staging directory belongs (a
        // FIFO, socket, device, symlink or file) is unlinked, never followed or opened.
        let is_dir = h
            .staging
            .symlink_metadata(&n)
            .is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink());
        if !is_dir {
            fs.remove_file(h.at_staging(), &n)
                .map_err(StoreError::io("recovery"))?;
        } else if !pending {
            fs.remove_dir_all(h.at_staging(), &n)
                .map_err(StoreError::io("recovery"))?;
        } else {
            remove_stray_payloads(h, &n)?;
        }
    }
    let mut completed = Vec::new();
    for name in journals {
        let stem = name.strip_suffix(".json").unwrap_or(&name).to_owned();
        let corrupt = || {
            StoreError::StorageCorrupt(Corrupt::Journal {
                txn_id: stem.clone(),
            })
        };
        // R2.
        let bytes = read_regular(&h.tx, &name)
            .map_err(|e| StoreError::Io {
                step: "recovery",
                source: crate::store::durable::at_path(e, format!(".okf/transactions/{name}")),
            })?
            .ok_or_else(corrupt)?;
        let j = Journal::decode(&bytes).map_err(|_| corrupt())?;
        if j.txn_id != stem {
            return Err(corrupt());
        }
        // spec/store.md §16 rule 1a: a journal whose receipt is durable is finished (its
        // writes were verified before the receipt was written); only its cleanup is left. A
        // cleanup that fails again is an `INFO` notice, not a failure of this open.
        if publish::receipt_durable(&h.receipts, &j) {
            match publish::cleanup_finished(h, &j) {
                Ok(()) => completed.push(j.idempotency_key.clone()),
                Err(StoreError::Io { source, .. }) => {
                    let path =
                        crate::store::durable::path_of(&source).unwrap_or(".okf/transactions");
                    crate::notices::push(publish::cleanup_pending_notice(path));
                }
                Err(e) => return Err(e),
            }
            continue;
        }
        // R3.
        let mut classes = Vec::with_capacity(j.writes.len());
        for w in &j.writes {
            classes
                .push(publish::classify(&h.root.dir, &j, w).map_err(StoreError::io("recovery"))?);
        }
        // R4.
        if let Some((w, _)) = j
            .writes
            .iter()
            .zip(&classes)
            .find(|(_, c)| **c == WriteState::Foreign)
        {
            return Err(StoreError::RecoveryBlocked {
                path: w.path.clone(),
                txn_id: j.txn_id.clone(),
                payload: w.payload.clone(),
            });
        }
        // R5.
        let index_published = j
            .writes
            .iter()
            .zip(&classes)
            .any(|(w, c)| w.path == "index.md" && *c == WriteState::Published);
        let other_pending = j
            .writes
            .iter()
            .zip(&classes)
            .any(|(w, c)| w.path != "index.md" && matches!(c, WriteState::Pending(_)));
        if index_published && other_pending {
            return Err(corrupt());
        }
        // R6.
        let pending = classes.iter().any(|c| matches!(c, WriteState::Pending(_)));
        if pending {
            let stage = h
                .staging
                .open_dir_nofollow(&j.txn_id)
                .map_err(|_| corrupt())?;
            for (w, c) in j.writes.iter().zip(&classes) {
                if matches!(c, WriteState::Pending(_)) {
                    let b = read_regular(&stage, &w.payload)
                        .map_err(|_| corrupt())?
                        .ok_or_else(corrupt)?;
                    if b.len() as u64 != w.size || digest::hex(&digest::sha256(&b)) != w.digest {
                        return Err(corrupt());
                    }
                }
            }
        }
        // R7, R8. Failures here are reported as such; the journal stays for the next open.
        publish::publish_all(h, &j).map_err(|e| match e {
            StoreError::PublicationBlocked {
                path,
                txn_id,
                payload,
            } => StoreError::RecoveryBlocked {
                path,
                txn_id,
                payload,
            },
            // spec/store.md §16 rule 1: retryable, the journal stays for the next open.
            StoreError::PublicationIncomplete { path } => StoreError::RecoveryIncomplete { path },
            other => other,
        })?;
        publish::write_receipt(h, &j, publish::now_ns())?;
        publish::cleanup(h, &j)?;
        completed.push(j.idempotency_key.clone());
    }
    Ok(completed)
}
