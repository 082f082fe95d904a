//! Progress of a long tool call (spec/migration.md §12.5 rule 4): the sink an MCP
//! `notifications/progress` sender (or the CLI's terminal bar) hands to the call, and the
//! rules every report passes through here, once:
//!
//! - `progress` strictly increases; a report that does not increase it is dropped. A phase
//!   counts from zero on its own (`reading` the files, then `planning`, then `staging` the
//!   writes): when the message word changes, the new phase's figures are shifted by the
//!   progress already sent, so the call's progress keeps increasing (`total` is shifted
//!   alike);
//! - at most 10 reports a second: a report less than 100 ms after the last one sent is
//!   dropped, except one marked final;
//! - nothing after [`Progress::close`], which the server calls before it writes the response.
//!
//! The sink of the running call is reachable in two ways: explicitly ([`crate::tools::Ctx`]
//! carries it) and, for the store's capture walk and staging, which run on the call's
//! thread and take no context, as the thread's current sink ([`with_current`],
//! [`current`]). Reports carry counts and a fixed word (`reading`, `staging`), never paths
//! or document text (spec/surface.md §16).

use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Minimum spacing of two reports that are not final.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// Work below this many items reports nothing (spec/migration.md §12.5 rule 4: a capture
/// over 1,000 files).
pub const LARGE: u64 = 1_000;

/// One report: items done, the total when known, and a short fixed word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update {
    /// Items done so far (strictly increasing across the reports of one call: the phase's
    /// own count shifted by what earlier phases sent).
    pub progress: u64,
    /// Total items, when known (shifted alike).
    pub total: Option<u64>,
    /// The phase's own count, as reported (what a per-phase bar draws).
    pub in_phase: u64,
    /// The phase's own total, as reported.
    pub phase_total: Option<u64>,
    /// `reading`, `staging`, …
    pub message: &'static str,
}

type Sink = dyn Fn(Update) + Send + Sync;

struct State {
    last_sent: Option<Instant>,
    /// The last progress sent (already shifted).
    last_progress: Option<u64>,
    /// The phase word of the last report sent, and the shift of its figures.
    phase: Option<&'static str>,
    offset: u64,
    closed: bool,
}

struct Inner {
    sink: Box<Sink>,
    state: Mutex<State>,
}

/// The progress sink of one call; `Progress::default()` reports nowhere. Cheap to clone.
#[derive(Clone, Default)]
pub struct Progress {
    inner: Option<Arc<Inner>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("active", &self.is_active())
            .finish()
    }
}

impl Progress {
    /// A sink that passes every accepted report to `sink` (on the reporting thread).
    #[must_use]
    pub fn new(sink: impl Fn(Update) + Send + Sync + 'static) -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                sink: Box::new(sink),
                state: Mutex::new(State {
                    last_sent: None,
                    last_progress: None,
                    phase: None,
                    offset: 0,
                    closed: false,
                }),
            })),
        }
    }

    /// Whether reports go anywhere.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.inner.is_some()
    }

    /// Reports `progress` of `total` (throttled; see the module docs).
    pub fn report(&self, progress: u64, total: Option<u64>, message: &'static str) {
        self.send(progress, total, message, false);
    }

    /// Reports a final figure: never dropped by the rate limit (still dropped when it does
    /// not increase, or after [`Progress::close`]).
    pub fn finish(&self, progress: u64, total: Option<u64>, message: &'static str) {
        self.send(progress, total, message, true);
    }

    /// No report is passed on after this returns.
    pub fn close(&self) {
        if let Some(inner) = &self.inner {
            if let Ok(mut s) = inner.state.lock() {
                s.closed = true;
            }
        }
    }

    fn send(&self, progress: u64, total: Option<u64>, message: &'static str, last: bool) {
        let Some(inner) = &self.inner else {
            return;
        };
        // The sink runs under the lock, so reports reach it in order and none after close.
        let Ok(mut s) = inner.state.lock() else {
            return;
        };
        let now = Instant::now();
        // A new phase counts on from what was sent (see the module docs).
        let offset = match s.phase {
            Some(m) if m != message => s.last_progress.unwrap_or(0),
            _ => s.offset,
        };
        let (in_phase, phase_total) = (progress, total);
        let progress = progress.saturating_add(offset);
        let total = total.map(|t| t.saturating_add(offset));
        let increasing = s.last_progress.is_none_or(|p| progress > p);
        let spaced = last
            || s.last_sent
                .is_none_or(|t| now.duration_since(t) >= MIN_INTERVAL);
        if s.closed || !increasing || !spaced {
            return;
        }
        s.last_sent = Some(now);
        s.last_progress = Some(progress);
        s.phase = Some(message);
        s.offset = offset;
        (inner.sink)(Update {
            progress,
            total,
            in_phase,
            phase_total,
            message,
        });
    }
}

thread_local! {
    static CURRENT: RefCell<Progress> = RefCell::new(Progress::default());
}

/// Runs `f` with `p` as this thread's current sink (restoring the previous one after).
pub fn with_current<T>(p: &Progress, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Progress>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(prev) = self.0.take() {
                CURRENT.with(|c| *c.borrow_mut() = prev);
            }
        }
    }
    let prev = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), p.clone()));
    let _restore = Restore(Some(prev));
    f()
}

/// This thread's current sink (inactive outside [`with_current`]).
#[must_use]
pub fn current() -> Progress {
    CURRENT.with(|c| c.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> (Progress, Arc<Mutex<Vec<Update>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let p = Progress::new(move |u| s.lock().expect("lock").push(u));
        (p, seen)
    }

    #[test]
    fn reports_increase_are_rate_limited_and_stop_at_close() {
        let (p, seen) = recorder();
        p.report(1, None, "reading");
        p.report(2, None, "reading"); // within 100 ms: dropped
        p.report(1, None, "reading"); // not increasing: dropped
        p.finish(3, Some(3), "reading"); // final: not rate limited
        std::thread::sleep(MIN_INTERVAL);
        p.report(0, None, "staging"); // a new phase counts on from 3: 3 + 0 does not increase
        std::thread::sleep(MIN_INTERVAL);
        p.report(4, Some(9), "staging"); // 3 + 4 of 3 + 9
        p.close();
        p.finish(9, Some(9), "staging"); // after close: dropped
        let got: Vec<(u64, Option<u64>, &str)> = seen
            .lock()
            .expect("lock")
            .iter()
            .map(|u| (u.progress, u.total, u.message))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, None, "reading"),
                (3, Some(3), "reading"),
                (7, Some(12), "staging")
            ]
        );
    }

    #[test]
    fn the_current_sink_is_scoped_to_the_thread_and_the_call() {
        let (p, seen) = recorder();
        assert!(!current().is_active());
        with_current(&p, || {
            assert!(current().is_active());
            current().finish(5, None, "reading");
            std::thread::spawn(|| assert!(!current().is_active()))
                .join()
                .expect("thread");
        });
        assert!(!current().is_active());
        assert_eq!(seen.lock().expect("lock").len(), 1);
        Progress::default().finish(1, None, "reading");
    }
}
