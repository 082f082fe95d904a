//! Capture test hooks of spec/store.md §15 (compiled only with the `fault-injection` feature;
//! release builds contain none of this).
//!
//! Three hooks:
//! - **capture-walk cancellation** (CAN-02): after the capture walk has read N regular files,
//!   the request's [`Cancel`] is cancelled; the per-file checkpoint right after that read then
//!   ends the capture with `operation_cancelled`.
//! - **swap between `lstat` and open** (REV-05): right after the capture `lstat`s the entry
//!   with the configured bundle-relative path and saw a regular file, the hook replaces it by
//!   a FIFO, a socket or a symlink, so the capture's open meets the swapped entry.
//! - **forget the parse memo after a spilled capture** (docs/store.md §3.2): right after the
//!   spilled capture of `tools::common::with_patch_capture`, the process-wide parse memo is
//!   cleared, so the plan reads spilled documents, the capture is missed and the tool must
//!   re-capture with every file resident.
//!
//! # Configuration
//! - In process: [`install`] sets the hooks **for the calling thread** until the returned
//!   guard is dropped (tests running in parallel threads do not see each other's hooks).
//!   [`crate::wire::dispatch::call`] and [`crate::store::capture::capture`] run on the
//!   calling thread, so this covers library and dispatcher tests.
//! - Spawned binaries (`okf-mcp call`, `okf-mcp serve`): environment variables, read once per
//!   process and only in a `fault-injection` build, applying to every capture of the process
//!   that has no thread-local hooks installed:
//!   - [`ENV_CANCEL_AFTER`] = `OKF_MCP_FI_CAPTURE_CANCEL_AFTER`: a decimal N ≥ 1; cancel after
//!     the N-th file read.
//!   - [`ENV_SWAP`] = `OKF_MCP_FI_CAPTURE_SWAP`: `<kind>:<bundle-relative path>` with kind
//!     `fifo`, `socket` or `symlink` (the symlink's target is [`ENV_SYMLINK_TARGET`],
//!     relative to the link's directory), or `replace` (the same bytes in a new inode, at
//!     every capture attempt: a tree that keeps changing, spec/store.md §16 rule 3).
//!
//!   - [`ENV_FORGET_MEMO`] = `OKF_MCP_FI_FORGET_MEMO`: `1` forgets the parse memo after
//!     every spilled capture.
//!   - [`ENV_DENY`] = `OKF_MCP_FI_CAPTURE_DENY`: `<bundle-relative path>` of a regular file
//!     whose open fails as with `EACCES` (what `chmod 000` does to anyone but root).
//!
//!   A malformed value is ignored (no hook).
//!
//! A fourth, **I/O trace** (MIG-13, MIG-12, MIG-23, MIG-24: "zero I/O events", "never opens
//! the store"), is in-process only: [`trace`] records, for the calling thread until its
//! guard is dropped, the store's I/O events in the order they happen ([`IoEvent`]).

use crate::cancel::Cancel;
use cap_std::fs::Dir;
use std::cell::RefCell;
use std::sync::OnceLock;

/// Environment variable of the capture-walk cancellation hook (see the module docs).
pub const ENV_CANCEL_AFTER: &str = "OKF_MCP_FI_CAPTURE_CANCEL_AFTER";
/// Environment variable of the swap hook (see the module docs).
pub const ENV_SWAP: &str = "OKF_MCP_FI_CAPTURE_SWAP";
/// Environment variable of the forget-the-memo hook (see the module docs).
pub const ENV_FORGET_MEMO: &str = "OKF_MCP_FI_FORGET_MEMO";
/// Environment variable of the unreadable-file hook (see the module docs).
pub const ENV_DENY: &str = "OKF_MCP_FI_CAPTURE_DENY";
/// Target of a symlink swapped in through [`ENV_SWAP`].
pub const ENV_SYMLINK_TARGET: &str = "index.md";

/// What the swap hook puts in place of the regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwapKind {
    /// A named pipe (mode 0600).
    Fifo,
    /// A Unix socket inode (mode 0600), created with `mknodat`.
    Socket,
    /// A symlink with this target (any string; never resolved by the hook).
    Symlink(String),
    /// A new regular file with the same bytes (a new inode, as a publish's rename leaves):
    /// the capture sees the file change between its `lstat` and its read, at every attempt
    /// (spec/store.md §16 rule 3).
    Replace,
}

/// One swap: the bundle-relative path of the entry and what replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swap {
    /// Bundle-relative path (spec/store.md §3.2) of a regular file of the bundle.
    pub path: String,
    pub kind: SwapKind,
}

/// The capture hooks in effect for one capture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureHooks {
    /// Cancel the request once this many files have been read (≥ 1; `Some(0)` acts as 1).
    pub cancel_after_files: Option<usize>,
    /// Swap one entry between its `lstat` and its open.
    pub swap: Option<Swap>,
    /// Clear the parse memo right after a spilled capture of a plan.
    pub forget_memo_after_spill: bool,
    /// The bundle-relative path of a regular file whose open fails as with `EACCES` (root
    /// is never denied by permission bits, spec/store.md §16 rule 5, STO-20).
    pub deny: Option<String>,
}

thread_local! {
    static LOCAL: RefCell<Option<CaptureHooks>> = const { RefCell::new(None) };
}

static FROM_ENV: OnceLock<CaptureHooks> = OnceLock::new();

/// Restores the previous thread-local hooks when dropped.
#[derive(Debug)]
#[must_use = "the hooks are removed when the guard is dropped"]
pub struct HookGuard {
    previous: Option<CaptureHooks>,
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        LOCAL.with(|l| *l.borrow_mut() = previous);
    }
}

/// Installs `hooks` for captures running on the calling thread until the guard is dropped.
pub fn install(hooks: CaptureHooks) -> HookGuard {
    let previous = LOCAL.with(|l| l.borrow_mut().replace(hooks));
    HookGuard { previous }
}

/// The hooks for a capture starting now: the thread-local ones if installed, else those of
/// the environment variables.
#[must_use]
pub fn current() -> CaptureHooks {
    LOCAL
        .with(|l| l.borrow().clone())
        .unwrap_or_else(|| FROM_ENV.get_or_init(from_env).clone())
}

fn from_env() -> CaptureHooks {
    let cancel_after_files = std::env::var(ENV_CANCEL_AFTER)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    let swap = std::env::var(ENV_SWAP).ok().and_then(|v| parse_swap(&v));
    CaptureHooks {
        cancel_after_files,
        swap,
        forget_memo_after_spill: std::env::var(ENV_FORGET_MEMO).is_ok_and(|v| v.trim() == "1"),
        deny: std::env::var(ENV_DENY).ok().filter(|v| !v.is_empty()),
    }
}

/// Parses `<kind>:<path>` of [`ENV_SWAP`].
#[must_use]
pub fn parse_swap(v: &str) -> Option<Swap> {
    let (kind, path) = v.split_once(':')?;
    let kind = match kind {
        "fifo" => SwapKind::Fifo,
        "socket" => SwapKind::Socket,
        "symlink" => SwapKind::Symlink(ENV_SYMLINK_TARGET.to_owned()),
        "replace" => SwapKind::Replace,
        _ => return None,
    };
    if path.is_empty() {
        return None;
    }
    Some(Swap {
        path: path.to_owned(),
        kind,
    })
}

impl CaptureHooks {
    /// Called by the capture right after the `files_read`-th file was read, before the
    /// checkpoint: cancels `cancel` once the configured count is reached.
    pub(crate) fn after_file_read(&self, files_read: usize, cancel: &Cancel) {
        if let Some(n) = self.cancel_after_files {
            if files_read >= n.max(1) {
                cancel.cancel();
            }
        }
    }

    /// Called by the capture after the `lstat` of the regular file `name` (bundle-relative
    /// `path`) in `dir` and before its open: performs the configured swap. Failures of the
    /// swap itself are ignored (the capture then reads the original entry).
    pub(crate) fn after_lstat(&self, dir: &Dir, name: &str, path: &str) {
        let Some(swap) = &self.swap else { return };
        if swap.path != path {
            return;
        }
        let bytes = if swap.kind == SwapKind::Replace {
            match dir.read(name) {
                Ok(b) => Some(b),
                Err(_) => return,
            }
        } else {
            None
        };
        if dir.remove_file(name).is_err() {
            return;
        }
        let mode = rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR;
        let _ = match &swap.kind {
            SwapKind::Fifo => rustix::fs::mknodat(dir, name, rustix::fs::FileType::Fifo, mode, 0)
                .map_err(std::io::Error::from),
            SwapKind::Socket => {
                rustix::fs::mknodat(dir, name, rustix::fs::FileType::Socket, mode, 0)
                    .map_err(std::io::Error::from)
            }
            SwapKind::Symlink(target) => dir.symlink_contents(target, name),
            SwapKind::Replace => dir.write(name, bytes.unwrap_or_default()),
        };
    }
}

/// One I/O event of the store, as recorded by [`trace`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoEvent {
    /// The `bundle_path` walk from `/` started (`store::root::open`, surface.md §7 rules 5–9).
    OpenRoot,
    /// The capture accepted the read of this bundle-relative file (once per file and
    /// capture, in walk order, whichever thread read it).
    Read(String),
    /// A planner read this captured file again (`store::capture::reread`).
    Reread(String),
    /// An `lstat` of root `.okf` or of an entry below it outside the store proper
    /// (`root::has_private_state`, `root::journal_pending`).
    ProbePrivateState,
    /// A read or preview tool's capture listed `.okf/transactions/` and `.okf/receipts/`
    /// for a commit in flight (`store::wait`, spec/store.md §16 rule 2): names only, never
    /// a store open.
    PendingCheck,
    /// An `lstat` of this bundle-relative path (`root::is_directory`).
    Lstat(String),
    /// The store was opened (spec/store.md §7; every `Create` mode, also when `.okf/` is
    /// absent and nothing is created).
    StoreOpen,
}

thread_local! {
    static TRACE: RefCell<Option<Vec<IoEvent>>> = const { RefCell::new(None) };
}

/// Records the calling thread's I/O events until dropped; [`TraceGuard::events`] reads them.
#[derive(Debug)]
#[must_use = "the trace stops when the guard is dropped"]
pub struct TraceGuard {
    previous: Option<Vec<IoEvent>>,
}

impl TraceGuard {
    /// The events recorded so far, oldest first.
    #[must_use]
    pub fn events(&self) -> Vec<IoEvent> {
        TRACE.with(|t| t.borrow().clone().unwrap_or_default())
    }
}

impl Drop for TraceGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        TRACE.with(|t| *t.borrow_mut() = previous);
    }
}

/// Starts an empty I/O trace on the calling thread (see the module docs).
pub fn trace() -> TraceGuard {
    let previous = TRACE.with(|t| t.borrow_mut().replace(Vec::new()));
    TraceGuard { previous }
}

/// Appends `event()` to the calling thread's trace, if one is running.
pub(crate) fn record(event: impl FnOnce() -> IoEvent) {
    TRACE.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            v.push(event());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_values_parse() {
        assert_eq!(
            parse_swap("fifo:a/b.md"),
            Some(Swap {
                path: "a/b.md".into(),
                kind: SwapKind::Fifo
            })
        );
        assert_eq!(
            parse_swap("symlink:x.md").map(|s| s.kind),
            Some(SwapKind::Symlink(ENV_SYMLINK_TARGET.into()))
        );
        assert_eq!(
            parse_swap("replace:x.md").map(|s| s.kind),
            Some(SwapKind::Replace)
        );
        assert_eq!(parse_swap("pipe:x.md"), None);
        assert_eq!(parse_swap("fifo:"), None);
        assert_eq!(parse_swap("fifo"), None);
    }

    #[test]
    fn thread_local_hooks_are_scoped_to_the_guard() {
        let before = current();
        {
            let _g = install(CaptureHooks {
                cancel_after_files: Some(3),
                swap: None,
                forget_memo_after_spill: false,
                deny: None,
            });
            assert_eq!(current().cancel_after_files, Some(3));
        }
        assert_eq!(current(), before);
    }

    #[test]
    fn a_trace_records_only_inside_its_guard() {
        record(|| IoEvent::OpenRoot);
        {
            let g = trace();
            record(|| IoEvent::StoreOpen);
            assert_eq!(g.events(), vec![IoEvent::StoreOpen]);
        }
        let g = trace();
        assert_eq!(g.events(), vec![]);
    }

    #[test]
    fn cancel_fires_at_the_configured_count_only() {
        let h = CaptureHooks {
            cancel_after_files: Some(2),
            swap: None,
            forget_memo_after_spill: false,
            deny: None,
        };
        let c = Cancel::new();
        h.after_file_read(1, &c);
        assert!(!c.is_cancelled());
        h.after_file_read(2, &c);
        assert!(c.is_cancelled());
    }
}
