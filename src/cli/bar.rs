//! The progress bar of `okf-mcp call` and `okf-mcp migrate` (spec/migration.md §12.5 rule 4):
//! the reports of a long call's [`Progress`] sink (`reading`, `staging`), drawn on stderr with
//! `indicatif`.
//!
//! Invariants:
//! - only when stderr is a terminal that can redraw a line ([`draws_on`]: `TERM` set and not
//!   `dumb`, as `indicatif` itself requires); otherwise the call gets the inactive sink and
//!   nothing is drawn, so stdout and stderr are byte for byte what they are without this
//!   module;
//! - the bar shows a report's fixed word and counts only, never paths or document text;
//! - nothing is drawn before the first report (a small bundle draws nothing) and nothing
//!   after [`CallProgress::clear`], which the CLI calls before it prints the result.

use crate::progress::{Progress, Update};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::ffi::OsStr;
use std::sync::{Arc, Mutex};

/// Whether `okf-mcp call` (or `migrate`) draws a bar: stderr is a terminal and `TERM`
/// (`term`) names one that can move the cursor (set, and not `dumb`).
#[must_use]
pub fn draws_on(stderr_is_terminal: bool, term: Option<&OsStr>) -> bool {
    stderr_is_terminal && term.is_some_and(|t| !t.is_empty() && t != "dumb")
}

/// The template while the total is unknown (a capture walk).
const COUNT_TEMPLATE: &str = "{msg} {pos} files";
/// The template once the total is known.
const BAR_TEMPLATE: &str = "{msg} [{bar:30}] {pos}/{len} files";

/// The progress of one `okf-mcp call`: the sink handed to the call and, when stderr is a
/// terminal, the bar that draws its reports.
pub struct CallProgress {
    sink: Progress,
    bar: Option<Arc<Bar>>,
}

impl CallProgress {
    /// A bar on stderr when `draw` ([`draws_on`]), else the inactive sink and no bar.
    #[must_use]
    pub fn for_stderr(draw: bool) -> Self {
        if draw {
            Self::drawing_to(ProgressDrawTarget::stderr)
        } else {
            Self {
                sink: Progress::default(),
                bar: None,
            }
        }
    }

    /// A bar created on the first report with the draw target `target` makes.
    fn drawing_to(target: fn() -> ProgressDrawTarget) -> Self {
        let bar = Arc::new(Bar {
            target,
            shown: Mutex::new(None),
        });
        let to = Arc::clone(&bar);
        Self {
            sink: Progress::new(move |u| to.show(u)),
            bar: Some(bar),
        }
    }

    /// The sink to put in the call's context.
    #[must_use]
    pub fn sink(&self) -> Progress {
        self.sink.clone()
    }

    /// Closes the sink (no report passes after this) and erases the bar if one was drawn.
    pub fn clear(self) {
        self.sink.close();
        if let Some(bar) = self.bar {
            bar.clear();
        }
    }
}

/// The bar of one call: none before its first report, then one per phase (a report's word
/// and whether its total is known), each drawn once per report.
struct Bar {
    target: fn() -> ProgressDrawTarget,
    shown: Mutex<Option<Shown>>,
}

/// The drawn bar of one phase.
struct Shown {
    pb: ProgressBar,
    message: &'static str,
    counted: bool,
}

impl Bar {
    fn show(&self, u: Update) {
        let Ok(mut shown) = self.shown.lock() else {
            return;
        };
        let counted = u.phase_total.is_some();
        match shown.as_ref() {
            Some(s) if s.message == u.message && s.counted == counted => {
                // One state change, one draw (subject to indicatif's own rate limit).
                s.pb.update(|st| {
                    if let Some(t) = u.phase_total {
                        st.set_len(t);
                    }
                    st.set_pos(u.in_phase);
                });
            }
            _ => {
                if let Some(old) = shown.take() {
                    old.pb.finish_and_clear();
                }
                let template = if counted {
                    BAR_TEMPLATE
                } else {
                    COUNT_TEMPLATE
                };
                let mut pb = ProgressBar::with_draw_target(u.phase_total, (self.target)());
                if let Ok(style) = ProgressStyle::with_template(template) {
                    pb = pb.with_style(style.progress_chars("=> "));
                }
                // The builders do not draw: the first line already carries the report.
                let pb = pb.with_message(u.message).with_position(u.in_phase);
                pb.tick();
                *shown = Some(Shown {
                    pb,
                    message: u.message,
                    counted,
                });
            }
        }
    }

    fn clear(&self) {
        if let Ok(mut shown) = self.shown.lock() {
            if let Some(s) = shown.take() {
                s.pb.finish_and_clear();
            }
        }
    }

    /// What the bar holds: (position, total, message), `None` before the first report.
    #[cfg(test)]
    fn state(&self) -> Option<(u64, Option<u64>, String)> {
        let shown = self.shown.lock().ok()?;
        shown
            .as_ref()
            .map(|s| (s.pb.position(), s.pb.length(), s.pb.message()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_needs_a_terminal_stderr_and_a_term_that_is_not_dumb() {
        fn t(s: &str) -> Option<&OsStr> {
            Some(OsStr::new(s))
        }
        assert!(draws_on(true, t("xterm-256color")));
        assert!(!draws_on(false, t("xterm-256color")));
        assert!(!draws_on(true, None));
        assert!(!draws_on(true, t("")));
        assert!(!draws_on(true, t("dumb")));
    }

    #[test]
    fn without_a_terminal_the_call_gets_no_sink_and_no_bar() {
        let p = CallProgress::for_stderr(false);
        assert!(p.bar.is_none());
        assert!(!p.sink().is_active());
        p.clear();
    }

    #[test]
    fn on_a_terminal_the_call_gets_a_sink_that_draws() {
        let p = CallProgress::for_stderr(true);
        assert!(p.bar.is_some());
        assert!(p.sink().is_active());
    }

    #[test]
    fn the_bar_follows_the_reports_from_the_first_one_and_stops_at_clear() {
        let p = CallProgress::drawing_to(ProgressDrawTarget::hidden);
        let bar = Arc::clone(p.bar.as_ref().expect("a bar"));
        assert_eq!(bar.state(), None, "nothing before the first report");
        let sink = p.sink();
        sink.report(1_001, None, "reading");
        assert_eq!(bar.state(), Some((1_001, None, "reading".to_owned())));
        sink.finish(2_001, Some(2_001), "reading");
        assert_eq!(
            bar.state(),
            Some((2_001, Some(2_001), "reading".to_owned()))
        );
        sink.finish(2_500, Some(3_000), "staging");
        assert_eq!(
            bar.state(),
            Some((2_500, Some(3_000), "staging".to_owned()))
        );
        p.clear();
        assert_eq!(bar.state(), None, "cleared");
        sink.finish(3_000, Some(3_000), "staging");
        assert_eq!(bar.state(), None, "nothing after clear");
    }

    #[test]
    fn the_templates_parse_and_show_only_the_word_and_counts() {
        for t in [COUNT_TEMPLATE, BAR_TEMPLATE] {
            assert!(ProgressStyle::with_template(t).is_ok(), "{t}");
            let fields: Vec<&str> = t
                .split('{')
                .skip(1)
                .filter_map(|f| f.split('}').next())
                .map(|f| f.split(':').next().unwrap_or(f))
                .collect();
            assert!(
                fields
                    .iter()
                    .all(|f| matches!(*f, "msg" | "pos" | "len" | "bar")),
                "{t}: {fields:?}"
            );
        }
    }
}
