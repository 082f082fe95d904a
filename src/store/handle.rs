//! An open store ([`Handle`]): the private state layout, the per-call [`StoreOptions`], the
//! fault-hook dispatch and the cancellation checkpoint. Opening, the folding probe and
//! recovery (spec/store.md §7, §10.1 C1–C3) are [`crate::store::open`].
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
use crate::store::lock::{self, BundleLock};
use crate::store::root::Root;
use cap_std::fs::Dir;
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

/// Per-call store options. [`StoreOptions::from_env`] is what the tools use; the builders exist
/// only under the `fault-injection` feature (spec/store.md §15).
#[derive(Clone, Debug)]
pub struct StoreOptions {
    pub(crate) lock_timeout: Duration,
    pub(crate) fs: Arc<dyn Durable>,
    #[cfg(feature = "fault-injection")]
    pub(crate) faults: Option<Arc<crate::store::fault::Faults>>,
    #[cfg(feature = "fault-injection")]
    pub(crate) folding: Option<Folding>,
    #[cfg(feature = "fault-injection")]
    pub(crate) forced_conflicts: Option<Arc<std::sync::atomic::AtomicUsize>>,
}

impl Default for StoreOptions {
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

impl StoreOptions {
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
impl StoreOptions {
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
pub(crate) fn point(
    opts: &StoreOptions,
    p: Point,
    cancel: Option<&Cancel>,
) -> Result<(), StoreError> {
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
            Some(Action::Stop) => {
                // Resumed by the test's SIGCONT; a failure to stop just continues.
                let _ = rustix::process::kill_process(
                    rustix::process::getpid(),
                    rustix::process::Signal::STOP,
                );
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

/// An open, locked and recovered store. Dropping it releases the lock (C16). The folding
/// probe runs only where something is written: before a recovery that publishes and before
/// a commit's C6 ([`Handle::probe_for_write`]); a receipt replay writes nothing.
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
    pub opts: StoreOptions,
    pub folding: Folding,
    /// Permission bits a new visible file gets: 0644 under the process umask.
    pub new_file_mode: u32,
    /// Idempotency keys whose journals this open's recovery completed (§12 step 6).
    pub completed: Vec<String>,
    pub(crate) poisoned: Cell<bool>,
    /// Whether [`Handle::prepare`] has run (recovery done).
    pub(crate) prepared: bool,
    /// The folding-probe files' tag (the transaction id).
    pub(crate) probe_tag: String,
    /// Whether the folding probe has run: `folding` and `new_file_mode` are measured.
    pub(crate) probed: bool,
    /// This open created `.okf/` itself (the first fresh commit of the bundle).
    pub(crate) created: bool,
    /// Held for the handle's lifetime (never read); dropping it releases the lock (C16).
    #[allow(dead_code)]
    pub(crate) lock: BundleLock,
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

/// A cancellation checkpoint (spec/store.md §14); `None` = past the boundary, never cancels.
pub(crate) fn checkpoint(cancel: Option<&Cancel>) -> Result<(), StoreError> {
    if cancel.is_some_and(Cancel::is_cancelled) {
        Err(StoreError::Cancelled)
    } else {
        Ok(())
    }
}
