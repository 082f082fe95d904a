//! Fault-injection points and test hooks of spec/store.md §15.
//!
//! The named [`Point`]s exist in every build (they document the pipeline); the hooks that act
//! on them (`Faults`, the folding override, forced CAS conflicts, a shorter lock timeout) are
//! compiled only with the cargo feature `fault-injection`, which release builds never enable.
//!
//! # Environment control (feature `fault-injection` only)
//!
//! A spawned binary reads `OKF_MCP_FAULT` once per store call, e.g.
//! `OKF_MCP_FAULT=after_journal_rename:crash` or `OKF_MCP_FAULT=after_publish(1):error`.
//! Grammar: `point[(i)]:action[:times]`, several rules separated by `;`. Actions: `crash`
//! (`std::process::exit(86)` at that point: a real process crash, nothing is cleaned up),
//! `error` (an injected I/O error), `cancel` (cancels the request; the next checkpoint sees
//! it), `stop` (`SIGSTOP` to itself: the test changes the filesystem, then sends `SIGCONT`).
//! Counts (`times`, default 1) apply per store call: every call re-reads the variable.
//! `OKF_MCP_LOCK_TIMEOUT_MS=<n>` shortens the 30 s lock timeout.

use std::fmt;

/// A named fault point (spec/store.md §15), reached immediately after the step it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    /// After C2 (lock taken).
    AfterLock,
    /// After C3.
    AfterRecovery,
    /// After the C5 capture.
    AfterCapture,
    /// After payload `i` (publish order) was written and `fsync`ed.
    AfterStagePayload(usize),
    /// After the C8 directory `fsync`s.
    AfterStageFsync,
    /// After the journal temp file's `fsync`, at the last checkpoint.
    AfterJournalTmp,
    /// The commit point.
    AfterJournalRename,
    /// After the C10 `fsync` of `.okf/transactions/`.
    AfterDurableFsync,
    /// Right before visible rename `i` (publish order) of a write still pending, in a commit
    /// and in recovery (R7). Not in [`Point::commit_sequence`]: a stop here is the state
    /// of `AfterPublish(i - 1)` (or `AfterDurableFsync`); it exists so that a test can fail
    /// one write's publication persistently (`before_publish(1):error:2`: the commit and
    /// its in-process retry, spec/store.md §16 rule 1).
    BeforePublish(usize),
    /// After visible rename `i` (publish order), root `index.md` included.
    AfterPublish(usize),
    /// After C13.
    AfterVerify,
    /// After the receipt temp file's `fsync`.
    AfterReceiptTmp,
    /// After the receipt rename and `fsync` of `receipts/`.
    AfterReceipt,
    /// After the journal removal and `fsync`.
    AfterJournalRemove,
    /// After the staging directory removal.
    AfterCleanup,
}

impl Point {
    /// The points of a commit with `n_writes` writes, in pipeline order.
    #[must_use]
    pub fn commit_sequence(n_writes: usize) -> Vec<Point> {
        let mut v = vec![Point::AfterLock, Point::AfterRecovery, Point::AfterCapture];
        v.extend((0..n_writes).map(Point::AfterStagePayload));
        v.extend([
            Point::AfterStageFsync,
            Point::AfterJournalTmp,
            Point::AfterJournalRename,
            Point::AfterDurableFsync,
        ]);
        v.extend((0..n_writes).map(Point::AfterPublish));
        v.extend([
            Point::AfterVerify,
            Point::AfterReceiptTmp,
            Point::AfterReceipt,
            Point::AfterJournalRemove,
            Point::AfterCleanup,
        ]);
        v
    }

    /// Whether the point lies at or after the commit point (C9 rename).
    #[must_use]
    pub fn is_post_boundary(self) -> bool {
        !matches!(
            self,
            Point::AfterLock
                | Point::AfterRecovery
                | Point::AfterCapture
                | Point::AfterStagePayload(_)
                | Point::AfterStageFsync
                | Point::AfterJournalTmp
        )
    }

    /// Parses `name` or `name(i)`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Point> {
        let (name, idx) = match s.split_once('(') {
            Some((n, rest)) => (n, Some(rest.strip_suffix(')')?.parse::<usize>().ok()?)),
            None => (s, None),
        };
        Some(match (name, idx) {
            ("after_lock", None) => Point::AfterLock,
            ("after_recovery", None) => Point::AfterRecovery,
            ("after_capture", None) => Point::AfterCapture,
            ("after_stage_payload", Some(i)) => Point::AfterStagePayload(i),
            ("after_stage_fsync", None) => Point::AfterStageFsync,
            ("after_journal_tmp", None) => Point::AfterJournalTmp,
            ("after_journal_rename", None) => Point::AfterJournalRename,
            ("after_durable_fsync", None) => Point::AfterDurableFsync,
            ("before_publish", Some(i)) => Point::BeforePublish(i),
            ("after_publish", Some(i)) => Point::AfterPublish(i),
            ("after_verify", None) => Point::AfterVerify,
            ("after_receipt_tmp", None) => Point::AfterReceiptTmp,
            ("after_receipt", None) => Point::AfterReceipt,
            ("after_journal_remove", None) => Point::AfterJournalRemove,
            ("after_cleanup", None) => Point::AfterCleanup,
            _ => return None,
        })
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Point::AfterLock => f.write_str("after_lock"),
            Point::AfterRecovery => f.write_str("after_recovery"),
            Point::AfterCapture => f.write_str("after_capture"),
            Point::AfterStagePayload(i) => write!(f, "after_stage_payload({i})"),
            Point::AfterStageFsync => f.write_str("after_stage_fsync"),
            Point::AfterJournalTmp => f.write_str("after_journal_tmp"),
            Point::AfterJournalRename => f.write_str("after_journal_rename"),
            Point::AfterDurableFsync => f.write_str("after_durable_fsync"),
            Point::BeforePublish(i) => write!(f, "before_publish({i})"),
            Point::AfterPublish(i) => write!(f, "after_publish({i})"),
            Point::AfterVerify => f.write_str("after_verify"),
            Point::AfterReceiptTmp => f.write_str("after_receipt_tmp"),
            Point::AfterReceipt => f.write_str("after_receipt"),
            Point::AfterJournalRemove => f.write_str("after_journal_remove"),
            Point::AfterCleanup => f.write_str("after_cleanup"),
        }
    }
}

/// What a fault rule does when its point is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Stop the store logic as a process crash would: nothing after the point runs, nothing
    /// is cleaned up (in-process: `StoreError::SimulatedCrash`; env var: `process::exit`).
    Crash,
    /// Return an injected I/O error from the step that just completed.
    IoError,
    /// Cancel the request; the next checkpoint observes it (CAN-03/CAN-04).
    Cancel,
    /// Run a test callback (e.g. a foreign write, STO-06), then continue.
    Callback,
    /// Stop the process with `SIGSTOP` at the point and continue once it gets `SIGCONT`: a
    /// test driving a spawned binary changes the filesystem at an exact pipeline step (e.g.
    /// `chattr +i` on a target directory right after the commit point, STO-16), then resumes
    /// it. Env-var grammar `stop`.
    Stop,
}

#[cfg(feature = "fault-injection")]
pub use hooks::*;

#[cfg(feature = "fault-injection")]
mod hooks {
    use super::{Action, Point};
    use std::sync::{Arc, Mutex};

    /// A callback run at a point with [`Action::Callback`].
    pub type Callback = Arc<dyn Fn() + Send + Sync>;

    struct Rule {
        point: Point,
        action: Action,
        remaining: usize,
        callback: Option<Callback>,
    }

    /// A set of armed fault rules plus a trace of the points reached.
    #[derive(Default)]
    pub struct Faults {
        rules: Mutex<Vec<Rule>>,
        trace: Mutex<Vec<Point>>,
        /// Whether a matched crash exits the process (env-var mode) instead of returning.
        pub(crate) exit_on_crash: bool,
    }

    impl std::fmt::Debug for Faults {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Faults").finish_non_exhaustive()
        }
    }

    impl Faults {
        /// No rules.
        #[must_use]
        pub fn new() -> Arc<Self> {
            Arc::new(Self::default())
        }
        /// Arms `action` at `point` for its next `times` hits.
        #[must_use]
        pub fn with(self: Arc<Self>, point: Point, action: Action, times: usize) -> Arc<Self> {
            if let Ok(mut r) = self.rules.lock() {
                r.push(Rule {
                    point,
                    action,
                    remaining: times,
                    callback: None,
                });
            }
            self
        }
        /// Arms a callback at `point` (once).
        #[must_use]
        pub fn with_callback(self: Arc<Self>, point: Point, cb: Callback) -> Arc<Self> {
            if let Ok(mut r) = self.rules.lock() {
                r.push(Rule {
                    point,
                    action: Action::Callback,
                    remaining: 1,
                    callback: Some(cb),
                });
            }
            self
        }
        /// The points reached so far, in order.
        #[must_use]
        pub fn trace(&self) -> Vec<Point> {
            self.trace.lock().map(|t| t.clone()).unwrap_or_default()
        }
        /// Records `point` and returns the action of the first armed rule for it.
        pub(crate) fn hit(&self, point: Point) -> Option<Action> {
            if let Ok(mut t) = self.trace.lock() {
                t.push(point);
            }
            let mut cb = None;
            let mut action = None;
            if let Ok(mut rules) = self.rules.lock() {
                if let Some(r) = rules
                    .iter_mut()
                    .find(|r| r.point == point && r.remaining > 0)
                {
                    r.remaining -= 1;
                    action = Some(r.action);
                    cb.clone_from(&r.callback);
                }
            }
            if let Some(cb) = cb {
                cb();
            }
            action
        }

        /// Reads `OKF_MCP_FAULT` (module docs); `None` when unset or invalid. Rules read
        /// from the environment crash with `std::process::exit(86)`.
        #[must_use]
        pub fn from_env() -> Option<Arc<Self>> {
            let spec = std::env::var("OKF_MCP_FAULT").ok()?;
            let mut f = Self::parse(&spec)?;
            f.exit_on_crash = true;
            Some(Arc::new(f))
        }

        /// Parses the `OKF_MCP_FAULT` grammar `point[(i)]:action[:times]` (`;`-separated);
        /// `None` when any rule is invalid.
        #[must_use]
        pub fn parse(spec: &str) -> Option<Self> {
            let mut rules = Vec::new();
            for part in spec.split(';').filter(|p| !p.is_empty()) {
                let mut it = part.split(':');
                let point = Point::parse(it.next()?)?;
                let action = match it.next()? {
                    "crash" => Action::Crash,
                    "error" => Action::IoError,
                    "cancel" => Action::Cancel,
                    "stop" => Action::Stop,
                    _ => return None,
                };
                let remaining = match it.next() {
                    Some(n) => n.parse().ok()?,
                    None => 1,
                };
                if it.next().is_some() {
                    return None;
                }
                rules.push(Rule {
                    point,
                    action,
                    remaining,
                    callback: None,
                });
            }
            Some(Self {
                rules: Mutex::new(rules),
                ..Self::default()
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "fault-injection")]
    #[test]
    fn env_grammar_parses_rules_and_rejects_garbage() {
        let f = Faults::parse("after_journal_rename:crash;after_publish(1):error:2").expect("ok");
        assert!(!f.exit_on_crash, "only from_env exits");
        assert_eq!(f.hit(Point::AfterLock), None);
        assert_eq!(f.hit(Point::AfterJournalRename), Some(Action::Crash));
        assert_eq!(f.hit(Point::AfterJournalRename), None, "fires once");
        assert_eq!(f.hit(Point::AfterPublish(1)), Some(Action::IoError));
        assert_eq!(f.hit(Point::AfterPublish(1)), Some(Action::IoError));
        assert_eq!(f.hit(Point::AfterPublish(1)), None);
        assert_eq!(f.trace().len(), 6);
        for bad in [
            "after_lock",
            "after_lock:boom",
            "nope:crash",
            "after_lock:crash:x",
            "after_lock:crash:1:2",
        ] {
            assert!(Faults::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn point_names_round_trip_and_sequence_is_ordered() {
        let seq = Point::commit_sequence(3);
        assert_eq!(seq.len(), 3 + 3 + 4 + 3 + 5);
        for p in &seq {
            assert_eq!(Point::parse(&p.to_string()), Some(*p), "{p}");
        }
        let first_post = seq.iter().position(|p| p.is_post_boundary());
        assert_eq!(seq[first_post.unwrap_or(0)], Point::AfterJournalRename);
        assert_eq!(Point::parse("after_publish"), None);
        assert_eq!(
            Point::parse("before_publish(2)"),
            Some(Point::BeforePublish(2))
        );
        assert!(Point::BeforePublish(0).is_post_boundary());
        assert_eq!(Point::parse("after_lock(1)"), None);
        assert_eq!(Point::parse("nope"), None);
    }
}
