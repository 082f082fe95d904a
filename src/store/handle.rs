//! Opening the store: private state layout, lock, folding probe, recovery
//! (spec/store.md §7, §10.1 C1–C3), the per-call [`Options`] and the fault-hook dispatch.
//!
//! Layout (all real directories, never symlinks; created only when a commit needs them):
//!
//! | Path | Mode | Content |
//! |---|---|---|
//! | `.okf/` | 0700 | private state |
//! | `.okf/lock` | 0600 | advisory lock file |
//! | `.okf/transactions/` | 0700 | journals `<txn-id>.json`, temps `*.json.tmp` |
//! | `.okf/staging/` | 0700 | `<txn-id>/payload-NNNNN` |
//! | `.okf/receipts/` | 0700 | `<hex(H(key))>.json` |
//! | `.okf/capabilities/` | 0700 | probe scratch files |

use crate::cancel::Cancel;
use crate::store::durable::{At, Durable, RealFs};
use crate::store::error::StoreError;
use crate::store::fault::Point;
use crate::store::lock::{self, BundleLock, LockError};
use crate::store::root::Root;
use crate::wire::envelope::{Diagnostic, Severity, ToolError};
use cap_fs_ext::{DirExt, FollowSymlinks, MetadataExt, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt, PermissionsExt};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

/// The subdirectories of `.okf/` (spec/store.md §7).
pub const SUBDIRS: [&str; 4] = ["transactions", "staging", "receipts", "capabilities"];

/// Which name foldings the filesystem applies (spec/store.md §7 step 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Folding {
    /// A case variant resolves to the same file.
    pub case: bool,
    /// An NFC/NFD variant resolves to the same file.
    pub normalization: bool,
}

/// Per-call store options. [`Options::from_env`] is what the tools use; the builders exist
/// only under the `fault-injection` feature (spec/store.md §15).
#[derive(Clone, Debug)]
pub struct Options {
    pub(crate) lock_timeout: Duration,
    pub(crate) fs: Arc<dyn Durable>,
    #[cfg(feature = "fault-injection")]
    pub(crate) faults: Option<Arc<crate::store::fault::Faults>>,
    #[cfg(feature = "fault-injection")]
    pub(crate) folding: Option<Folding>,
    #[cfg(feature = "fault-injection")]
    pub(crate) forced_conflicts: Option<Arc<std::sync::atomic::AtomicUsize>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            lock_timeout: lock::TIMEOUT,
            fs: Arc::new(RealFs),
            #[cfg(feature = "fault-injection")]
            faults: None,
            #[cfg(feature = "fault-injection")]
            folding: None,
            #[cfg(feature = "fault-injection")]
            forced_conflicts: None,
        }
    }
}

impl Options {
    /// The production options; under `fault-injection` also the environment hooks
    /// `OKF_MCP_FAULT`, `OKF_MCP_LOCK_TIMEOUT_MS`, `OKF_MCP_FORCE_CONFLICTS` (process-wide
    /// counter) and `OKF_MCP_FOLDING` (`case`, `nfd` or `case,nfd`). See [`crate::store::fault`].
    #[must_use]
    pub fn from_env() -> Self {
        #[allow(unused_mut)]
        let mut o = Self::default();
        #[cfg(feature = "fault-injection")]
        {
            use std::sync::atomic::AtomicUsize;
            use std::sync::OnceLock;
            static FORCED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
            o.faults = crate::store::fault::Faults::from_env();
            if let Some(ms) = std::env::var("OKF_MCP_LOCK_TIMEOUT_MS")
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
            {
                o.lock_timeout = Duration::from_millis(ms);
            }
            let forced = FORCED.get_or_init(|| {
                Arc::new(AtomicUsize::new(
                    std::env::var("OKF_MCP_FORCE_CONFLICTS")
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                ))
            });
            o.forced_conflicts = Some(forced.clone());
            if let Ok(f) = std::env::var("OKF_MCP_FOLDING") {
                o.folding = Some(Folding {
                    case: f.split(',').any(|x| x == "case"),
                    normalization: f.split(',').any(|x| x == "nfd"),
                });
            }
        }
        o
    }
}

#[cfg(feature = "fault-injection")]
impl Options {
    /// Replaces the 30 s lock timeout.
    #[must_use]
    pub fn with_lock_timeout(mut self, d: Duration) -> Self {
        self.lock_timeout = d;
        self
    }
    /// Replaces the durability seam (e.g. [`crate::store::durable::RecordingFs`]).
    #[must_use]
    pub fn with_fs(mut self, fs: Arc<dyn Durable>) -> Self {
        self.fs = fs;
        self
    }
    /// Arms fault rules.
    #[must_use]
    pub fn with_faults(mut self, f: Arc<crate::store::fault::Faults>) -> Self {
        self.faults = Some(f);
        self
    }
    /// Overrides the folding probe (STO-14).
    #[must_use]
    pub fn with_folding(mut self, f: Folding) -> Self {
        self.folding = Some(f);
        self
    }
    /// Makes the next `n` C5 compare-and-swaps report `Conflict{retryable: true}` (WRT-09).
    #[must_use]
    pub fn with_forced_conflicts(mut self, n: usize) -> Self {
        self.forced_conflicts = Some(Arc::new(std::sync::atomic::AtomicUsize::new(n)));
        self
    }
}

/// Runs the fault hook of `point` (no-op without the feature).
///
/// # Errors
/// An injected I/O error, or `SimulatedCrash`.
#[allow(clippy::unnecessary_wraps, unused_variables)]
pub(crate) fn point(opts: &Options, p: Point, cancel: Option<&Cancel>) -> Result<(), StoreError> {
    #[cfg(feature = "fault-injection")]
    if let Some(f) = &opts.faults {
        use crate::store::fault::Action;
        match f.hit(p) {
            Some(Action::Crash) => {
                if f.exit_on_crash {
                    std::process::exit(86);
                }
                return Err(StoreError::SimulatedCrash);
            }
            Some(Action::IoError) => {
                return Err(StoreError::Io {
                    step: "fault injection",
                    source: std::io::Error::other("injected I/O error"),
                })
            }
            Some(Action::Cancel) => {
                if let Some(c) = cancel {
                    c.cancel();
                }
            }
            Some(Action::Callback) | None => {}
        }
    }
    Ok(())
}

/// Whether the error is a simulated crash (which must bypass every cleanup and retry).
#[must_use]
pub(crate) fn is_crash(e: &StoreError) -> bool {
    #[cfg(feature = "fault-injection")]
    if matches!(e, StoreError::SimulatedCrash) {
        return true;
    }
    let _ = e;
    false
}

/// An open, locked and recovered store. Dropping it releases the lock (C16).
#[derive(Debug)]
pub(crate) struct Handle<'r> {
    pub root: &'r Root,
    /// `.okf/` itself (kept open for the handle's lifetime; the lock file lives here).
    #[allow(dead_code)]
    pub okf: Dir,
    pub tx: Dir,
    pub staging: Dir,
    pub receipts: Dir,
    pub caps: Dir,
    pub opts: Options,
    pub folding: Folding,
    /// Permission bits a new visible file gets: 0644 under the process umask.
    pub new_file_mode: u32,
    /// Idempotency keys whose journals this open's recovery completed (§12 step 6).
    pub completed: Vec<String>,
    poisoned: Cell<bool>,
    /// Whether [`Handle::prepare`] has run (probe and recovery done).
    prepared: bool,
    _lock: BundleLock,
}

impl Handle<'_> {
    pub fn fs(&self) -> &dyn Durable {
        self.opts.fs.as_ref()
    }
    pub fn at_tx(&self) -> At<'_> {
        At {
            dir: &self.tx,
            rel: ".okf/transactions",
        }
    }
    pub fn at_staging(&self) -> At<'_> {
        At {
            dir: &self.staging,
            rel: ".okf/staging",
        }
    }
    pub fn at_receipts(&self) -> At<'_> {
        At {
            dir: &self.receipts,
            rel: ".okf/receipts",
        }
    }
    pub fn at_caps(&self) -> At<'_> {
        At {
            dir: &self.caps,
            rel: ".okf/capabilities",
        }
    }
    /// Marks the handle unusable after a post-boundary failure (sticky I/O failure, §10.2).
    pub fn poison(&self) {
        self.poisoned.set(true);
    }
    /// Refuses work on a poisoned handle.
    pub fn alive(&self) -> Result<(), StoreError> {
        if self.poisoned.get() {
            Err(StoreError::Io {
                step: "poisoned store handle",
                source: std::io::Error::other("store handle is poisoned"),
            })
        } else {
            Ok(())
        }
    }
}

/// How [`open`] treats a missing `.okf/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Create {
    /// Create `.okf/` and its subdirectories (a fresh commit).
    Yes,
    /// Report `None` (replay-only lookup: S-2 forbids creating private state).
    No,
    /// The lock-first reservation of `commit::open_locked` (docs/store.md §3.1): report `None`
    /// unless `.okf/`, its four subdirectories and `.okf/lock` already exist, the lock is
    /// free at the first attempt (no wait), and no journal is pending in `transactions/`.
    /// Creates nothing and writes nothing: the folding probe and recovery (§7 steps 4–5)
    /// are deferred to [`Handle::prepare`], run only once the store is actually needed.
    Existing,
}

/// Opens the store (§7 steps 1–5, C1–C3). `cancel` is `Some` before the boundary (the
/// checkpoints of §14 apply) and `None` for the post-boundary retry of §10.2.
/// `probe_tag` names the folding-probe files (the transaction id). `Ok(None)`: `.okf/` is
/// absent and `create` is not [`Create::Yes`], or (only for [`Create::Existing`]) one of its
/// subdirectories is absent; nothing was created then.
///
/// # Errors
/// `.okf` symlink → `Refused(invalid_request)`; not a directory → `Rejected`; lock timeout;
/// cancellation; I/O; recovery errors.
pub(crate) fn open<'r>(
    root: &'r Root,
    opts: &Options,
    cancel: Option<&Cancel>,
    create: Create,
    probe_tag: &str,
) -> Result<Option<Handle<'r>>, StoreError> {
    checkpoint(cancel)?;
    let fs = opts.fs.as_ref();
    let root_at = At {
        dir: &root.dir,
        rel: "",
    };
    let okf = match private_dir(root_at, ".okf", fs, create)? {
        Some(d) => d,
        None => return Ok(None),
    };
    let okf_at = At {
        dir: &okf,
        rel: ".okf",
    };
    let sub_create = match create {
        Create::Existing => Create::Existing,
        Create::Yes | Create::No => Create::Yes,
    };
    let mut subs = Vec::with_capacity(4);
    for name in SUBDIRS {
        match private_dir(okf_at, name, fs, sub_create)? {
            Some(d) => subs.push(d),
            None if create == Create::Existing => return Ok(None),
            None => return Err(StoreError::Rejected("private state is incomplete")),
        }
    }
    let caps = subs.pop();
    let receipts = subs.pop();
    let staging = subs.pop();
    let tx = subs.pop();
    let (Some(tx), Some(staging), Some(receipts), Some(caps)) = (tx, staging, receipts, caps)
    else {
        return Err(StoreError::Rejected("private state is incomplete"));
    };
    let meta = root.dir.dir_metadata().map_err(StoreError::io("open"))?;
    let reserve = create == Create::Existing;
    if reserve && !okf.symlink_metadata("lock").is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let timeout = if reserve {
        std::time::Duration::ZERO
    } else {
        opts.lock_timeout
    };
    let lock = match lock::acquire(&okf, (meta.dev(), meta.ino()), timeout, cancel) {
        Err(LockError::Timeout) if reserve => return Ok(None),
        other => other,
    };
    let lock = lock.map_err(|e| match e {
        LockError::Timeout => StoreError::LockTimeout,
        LockError::Cancelled => StoreError::Cancelled,
        LockError::Io(source) => StoreError::Io {
            step: "lock",
            source,
        },
    })?;
    let mut h = Handle {
        root,
        okf,
        tx,
        staging,
        receipts,
        caps,
        opts: opts.clone(),
        folding: Folding::default(),
        new_file_mode: 0o644,
        completed: Vec::new(),
        poisoned: Cell::new(false),
        prepared: false,
        _lock: lock,
    };
    if reserve {
        if crate::store::recovery::journal_pending(&h)? {
            return Ok(None);
        }
        return Ok(Some(h));
    }
    h.prepare(probe_tag, cancel)?;
    Ok(Some(h))
}

impl Handle<'_> {
    /// §7 steps 4–5 on a locked handle: the `after_lock` fault point, the folding probe,
    /// recovery (C3), the `after_recovery` point and a checkpoint. Runs once; a handle from
    /// [`Create::Existing`] runs it when the store is first needed (its reservation saw no
    /// pending journal and has held the lock since, so recovery changes nothing visible).
    ///
    /// # Errors
    /// Probe and recovery errors; cancellation; injected faults.
    pub(crate) fn prepare(
        &mut self,
        probe_tag: &str,
        cancel: Option<&Cancel>,
    ) -> Result<(), StoreError> {
        if self.prepared {
            return Ok(());
        }
        let opts = self.opts.clone();
        point(&opts, Point::AfterLock, cancel)?;
        probe(self, probe_tag)?;
        self.completed = crate::store::recovery::recover(self)?;
        point(&opts, Point::AfterRecovery, cancel)?;
        checkpoint(cancel)?;
        self.prepared = true;
        Ok(())
    }
}

/// A cancellation checkpoint (spec/store.md §14); `None` = past the boundary, never cancels.
pub(crate) fn checkpoint(cancel: Option<&Cancel>) -> Result<(), StoreError> {
    if cancel.is_some_and(Cancel::is_cancelled) {
        Err(StoreError::Cancelled)
    } else {
        Ok(())
    }
}

/// §7 step 2 for one private directory: absent → create (0700) when `create` is
/// [`Create::Yes`], else `None`; symlink →
/// `invalid_request`; not a directory → `operation_rejected`.
fn private_dir(
    parent: At<'_>,
    name: &str,
    fs: &dyn Durable,
    create: Create,
) -> Result<Option<Dir>, StoreError> {
    let shown = parent.join(name);
    match parent.dir.symlink_metadata(name) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(StoreError::Refused(
                ToolError::invalid_request(format!("bundle contains a symlink: {shown}"))
                    .with_diagnostic(Diagnostic::new(
                        "symlink_refused",
                        Severity::Error,
                        "bundle contains a symlink",
                    )),
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(StoreError::Rejected(
                "private state path is not a directory",
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if create != Create::Yes {
                return Ok(None);
            }
            match fs.mkdir(parent, name, 0o700) {
                Ok(()) => {}
                // Another writer created it between our lstat and mkdir: check it again.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return private_dir(parent, name, fs, Create::No);
                }
                Err(source) => {
                    return Err(StoreError::Io {
                        step: "create private state",
                        source,
                    })
                }
            }
            fs.sync_dir(parent)
                .map_err(StoreError::io("create private state"))?;
        }
        Err(source) => {
            return Err(StoreError::Io {
                step: "open private state",
                source,
            })
        }
    }
    parent
        .dir
        .open_dir_nofollow(name)
        .map(Some)
        .map_err(StoreError::io("open private state"))
}

/// §7 step 4: the folding probe, plus the umask-derived mode of new files (C11).
fn probe(h: &mut Handle<'_>, tag: &str) -> Result<(), StoreError> {
    let mut o = OpenOptions::new();
    o.write(true)
        .create_new(true)
        .follow(FollowSymlinks::No)
        .mode(0o644);
    let io = StoreError::io("folding probe");
    // `-mode`: the mode probe when the case probe cannot be created (below), and the
    // separate mode probe of earlier versions, whose leftovers are removed too.
    let mode_name = format!("{tag}-mode");
    let case_name = format!("{tag}-case-a");
    let nf_name = format!("{tag}-nf-\u{e9}");
    // Leftovers of a crashed probe with the same tag would make `create_new` fail; R1 runs
    // only after the probe, so remove them first.
    for n in [&mode_name, &case_name, &nf_name] {
        let _ = h.caps.remove_file(n);
    }
    // The case probe file also gives the umask-derived mode of new files: one file fewer
    // to create and delete per open. Should it not be creatable (an entry that could not be
    // removed holds its name), `-mode` measures the mode and case folding reads as absent.
    let (f, case_probe) = match h.caps.open_with(&case_name, &o) {
        Ok(f) => (f, &case_name),
        Err(_) => (h.caps.open_with(&mode_name, &o).map_err(io)?, &mode_name),
    };
    h.new_file_mode = f
        .metadata()
        .map_err(StoreError::io("folding probe"))?
        .permissions()
        .mode()
        & 0o777;
    drop(f);
    let case =
        case_probe == &case_name && h.caps.symlink_metadata(case_name.to_uppercase()).is_ok();
    let _ = h.caps.remove_file(case_probe);
    #[cfg(feature = "fault-injection")]
    if let Some(f) = h.opts.folding {
        h.folding = f;
        return Ok(());
    }
    let mut folding = Folding {
        case,
        ..Folding::default()
    };
    if h.caps.open_with(&nf_name, &o).is_ok() {
        folding.normalization = h
            .caps
            .symlink_metadata(format!("{tag}-nf-e\u{301}"))
            .is_ok();
        let _ = h.caps.remove_file(&nf_name);
    }
    h.folding = folding;
    Ok(())
}
