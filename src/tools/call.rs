//! The per-call context handed to every tool handler and a handler's success
//! (spec/surface.md §18.2); re-exported as `crate::tools::{Ctx, Success}`.

use crate::cancel::Cancel;
use serde_json::Value;

/// Per-call context handed to tool handlers.
#[derive(Debug, Clone, Default)]
pub struct Ctx {
    /// The request's cancellation flag (spec/store.md §14).
    pub cancel: Cancel,
    /// Where progress of a long call goes (`_meta.progressToken`, or the CLI's terminal
    /// bar); inactive by default. The dispatcher makes it the thread's current sink for the
    /// call, which the store's capture and staging report to.
    pub progress: crate::progress::Progress,
}

/// A handler's success: the structured object and the text items that follow the first
/// (spec/surface.md §18.2: the first text item is always the compact JSON of `structured`,
/// which the dispatcher writes).
#[derive(Debug, Clone, PartialEq)]
pub struct Success {
    /// `structuredContent`: the tool's success object.
    pub structured: Value,
    /// The text items after the first, in order: `read_concept`'s file bytes, a preview's
    /// readable summary and plain diff ([`crate::tools::text::preview_text`]); empty for other tools.
    pub more_text: Vec<String>,
    /// Whether a store `Commit` (spec/store.md §10) ran for this call: output-enforcement
    /// failures then say the change may have been committed (spec/surface.md §3).
    pub committed: bool,
}

impl Success {
    /// A success whose only text item is the compact JSON of `structured`.
    #[must_use]
    pub fn json(structured: Value) -> Self {
        Self {
            structured,
            more_text: Vec::new(),
            committed: false,
        }
    }

    /// A success with one more text item after the compact JSON (spec/surface.md §18.2).
    #[must_use]
    pub fn with_second_text(structured: Value, text: String) -> Self {
        Self {
            structured,
            more_text: vec![text],
            committed: false,
        }
    }
}

/// Message of an output-enforcement failure after a store `Commit` ran (spec/surface.md §3).
pub const MAY_HAVE_COMMITTED: &str =
    "the change may have been committed; inspect the bundle and repeat the same call";
