//! Read and preview tools facing a commit in flight (spec/store.md §16 rule 2: "readers are
//! told, not misled").
//!
//! A read or preview tool captures with [`capture_after`] and [`WaitFor::Publication`], which then:
//! 1. lists `.okf/transactions/` (no-follow opens of `.okf` and `transactions`, names only)
//!    and `.okf/receipts/` (names only) — a pending journal is a `*.json` regular file;
//! 2. while a journal is pending, waits, re-checking every [`STEP`] for at most [`WAIT`] in
//!    all (a commit in flight finishes within that time);
//! 3. captures (with the retries of rule 3);
//! 4. lists both again. Unchanged and no journal: the capture is of a settled tree. A
//!    journal appeared, or a receipt appeared or vanished (a commit published and finished
//!    while the walk ran, which the walk alone cannot see): within the budget it waits and
//!    captures again; past it, it captures once more without waiting.
//!
//! If no settled capture is taken, the tool answers from the last (visible) tree, as before,
//! and one `WARN` notice [`PENDING`] (spec/surface.md §18.1) says that a committed change is
//! not yet fully published, that the visible files may mix the states before and after it,
//! and that any write tool or the exact replay of the apply completes it. The capture's
//! revision is, as always, the hash of the visible tree.
//!
//! A journal whose receipt is durable is finished, not pending: only its cleanup failed
//! (spec/store.md §16 rule 1a), and the visible tree is its post-state.
//!
//! Readers never run recovery, never take the lock and never write: they list two
//! directories and read a journal only to see whether its receipt is durable. Without
//! `.okf/` (or with one that is not a real directory) there is nothing to wait for.

use crate::cancel::Cancel;
use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::okf::capture::Capture;
use crate::store::capture::{capture_warm, capture_with, Spill};
use crate::store::root::Root;
use cap_fs_ext::DirExt;
use cap_std::fs::Dir;
use std::time::{Duration, Instant};

/// Re-check interval while a journal is pending.
pub const STEP: Duration = Duration::from_millis(5);
/// The longest a reader waits for a journal to go.
pub const WAIT: Duration = Duration::from_millis(200);
/// Code of the notice of a tree that may mix two states.
pub const PENDING: &str = "publication_pending";
/// Its message.
pub const MSG_PENDING: &str = "A committed change is not yet fully published: the visible files may mix the states before and after it. Any write tool call on this bundle, or the exact replay of the apply that made the change, completes the publication.";

/// Whether a capture first waits for a commit in flight (spec/store.md §16 rule 2). Each
/// caller says which it needs; nothing else changes what a capture does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitFor {
    /// Read and preview tools: wait for a pending journal to publish, then capture a settled
    /// tree, or answer from the visible tree with the `publication_pending` notice (module
    /// docs).
    Publication,
    /// Apply and write tools: capture at once ([`capture_with`]); their store recovers or
    /// completes a pending publication under the lock.
    Nothing,
}

/// What a reader sees of the private state: pending journal names and receipt names, sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Marks {
    journals: Vec<String>,
    receipts: Vec<String>,
}

fn sorted_names(dir: &Dir, keep: impl Fn(&Dir, &str) -> bool) -> Vec<String> {
    let mut v: Vec<String> = dir
        .entries()
        .map(|it| {
            it.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| keep(dir, n))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Lists `.okf/transactions/` and `.okf/receipts/` without following symlinks; nothing when
/// `.okf` is absent or not a real directory.
fn marks(root: &Root) -> Marks {
    #[cfg(feature = "fault-injection")]
    crate::store::hooks::record(|| crate::store::hooks::IoEvent::PendingCheck);
    let Ok(okf) = root.dir.open_dir_nofollow(".okf") else {
        return Marks::default();
    };
    let receipts_dir = okf.open_dir_nofollow("receipts").ok();
    let journal = |d: &Dir, n: &str| {
        n.ends_with(".json")
            && d.symlink_metadata(n)
                .is_ok_and(|m| m.is_file() && !m.file_type().is_symlink())
            && !receipts_dir.as_ref().is_some_and(|r| finished(d, n, r))
    };
    let journals = okf
        .open_dir_nofollow("transactions")
        .map(|d| sorted_names(&d, journal))
        .unwrap_or_default();
    let receipts = receipts_dir
        .as_ref()
        .map(|d| sorted_names(d, |_, n| n.ends_with(".json")))
        .unwrap_or_default();
    Marks { journals, receipts }
}

/// Whether the journal `name` in `tx` is finished: it decodes, names itself, and its receipt
/// is durable in `receipts` (spec/store.md §16 rule 1a). Anything unreadable is pending.
fn finished(tx: &Dir, name: &str, receipts: &Dir) -> bool {
    let Ok(Some(bytes)) = crate::store::recovery::read_regular(tx, name) else {
        return false;
    };
    let Ok(j) = crate::store::journal::Journal::decode(&bytes) else {
        return false;
    };
    name.strip_suffix(".json") == Some(j.txn_id.as_str())
        && crate::store::publish::receipt_durable(receipts, &j)
}

/// The `publication_pending` notice.
#[must_use]
pub fn pending_notice() -> Diagnostic {
    Diagnostic::new(PENDING, Severity::Warn, MSG_PENDING)
}

/// A capture of `root` that waits for `wait`: [`capture_with`] for [`WaitFor::Nothing`]; for
/// [`WaitFor::Publication`] the wait of the module docs around [`capture_warm`] (the warm
/// cache of a long-running server, spec/store.md §17; applies never use it). `spill` as
/// [`capture_with`].
///
/// # Errors
/// The capture's errors; `operation_cancelled` while waiting.
pub fn capture_after(
    wait: WaitFor,
    root: &Root,
    cancel: &Cancel,
    spill: Option<&Spill<'_>>,
) -> Result<Capture, ToolError> {
    if wait == WaitFor::Nothing {
        return capture_with(root, cancel, spill);
    }
    let start = Instant::now();
    let mut extra = false;
    loop {
        let mut before = marks(root);
        while !before.journals.is_empty() && start.elapsed() < WAIT {
            cancel.check()?;
            std::thread::sleep(STEP);
            before = marks(root);
        }
        let cap = capture_warm(root, cancel, spill)?;
        let after = marks(root);
        if before.journals.is_empty() && after == before {
            return Ok(cap);
        }
        if start.elapsed() < WAIT {
            cancel.check()?;
            std::thread::sleep(STEP);
            continue;
        }
        // Past the budget: a journal that stays is a stuck publication; a commit that only
        // finished during the walk is captured once more, without waiting.
        if after.journals.is_empty() && !extra {
            extra = true;
            continue;
        }
        crate::notices::push(pending_notice());
        return Ok(cap);
    }
}
