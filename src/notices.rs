//! Notices of one tool call (spec/surface.md §18.1 rule 2): what a tool has to say about the
//! bundle or the server rather than about the request's outcome, such as
//! `publication_pending` (spec/store.md §16 rule 2) or `mixed_temporal_values`
//! (spec/temporal.md §11).
//!
//! The dispatcher runs each call inside [`collect`]; any code on the call's thread (a tool
//! handler, the store's capture) adds a notice with [`push`]. The collected notices become the
//! `notices` member of the success object, never part of its `diagnostics` (so the "INFO only"
//! rule of apply results, R35, and the "exactly `[]`" rule of a migration target-noop are
//! unchanged).
//!
//! Rules applied here, once:
//! - severity `INFO` or `WARN` only: an `ERROR` pushed here is recorded as `WARN`;
//! - a notice equal to one already collected (code, severity, field, file, message) is
//!   dropped;
//! - at most [`MAX`] notices per call; later ones are dropped;
//! - outside [`collect`], [`push`] does nothing.

use crate::envelope::{Diagnostic, Severity};
use std::cell::RefCell;

/// The most notices one result carries (spec/surface.md §18.1: `≤ 100`).
pub const MAX: usize = 100;

thread_local! {
    static CURRENT: RefCell<Option<Vec<Diagnostic>>> = const { RefCell::new(None) };
}

/// Runs `f` with an empty notice list as this thread's current one and returns its result
/// with the notices pushed meanwhile, in push order. Nested calls collect separately; the
/// outer list is restored afterwards, also when `f` panics.
pub fn collect<T>(f: impl FnOnce() -> T) -> (T, Vec<Diagnostic>) {
    struct Restore(Option<Option<Vec<Diagnostic>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(prev) = self.0.take() {
                CURRENT.with(|c| *c.borrow_mut() = prev);
            }
        }
    }
    let prev = CURRENT.with(|c| c.borrow_mut().replace(Vec::new()));
    let mut restore = Restore(Some(prev));
    let out = f();
    let taken = CURRENT.with(|c| c.borrow_mut().take()).unwrap_or_default();
    if let Some(prev) = restore.0.take() {
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
    (out, taken)
}

/// Adds `d` to the current call's notices (see the module rules); a no-op outside
/// [`collect`].
pub fn push(mut d: Diagnostic) {
    if d.severity == Severity::Error {
        d.severity = Severity::Warn;
    }
    CURRENT.with(|c| {
        if let Some(list) = c.borrow_mut().as_mut() {
            if list.len() < MAX && !list.contains(&d) {
                list.push(d);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warn(code: &str) -> Diagnostic {
        Diagnostic::new(code, Severity::Warn, "m")
    }

    #[test]
    fn collects_in_order_dedups_caps_and_downgrades_errors() {
        let ((), got) = collect(|| {
            push(warn("a"));
            push(warn("a"));
            push(Diagnostic::new("b", Severity::Error, "m"));
            for i in 0..200 {
                push(warn(&format!("c{i}")));
            }
        });
        assert_eq!(got.len(), MAX);
        assert_eq!(got[0].code, "a");
        assert_eq!(got[1].code, "b");
        assert_eq!(got[1].severity, Severity::Warn);
        assert_eq!(got[2].code, "c0");
    }

    #[test]
    fn outside_collect_push_is_a_no_op_and_nesting_restores_the_outer_list() {
        push(warn("lost"));
        let (inner, outer) = collect(|| {
            push(warn("outer"));
            let ((), inner) = collect(|| push(warn("inner")));
            push(warn("outer2"));
            inner
        });
        assert_eq!(inner.len(), 1);
        assert_eq!(inner[0].code, "inner");
        let codes: Vec<_> = outer.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["outer", "outer2"]);
        let ((), empty) = collect(|| ());
        assert!(empty.is_empty());
    }
}
