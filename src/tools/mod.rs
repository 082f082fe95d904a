//! The tools layer: one module per MCP tool, the workflow spine ([`spine`]) and the per-call
//! context and success types every handler uses. A handler first parses its schema-valid
//! arguments with pure checks only (spec/surface.md §9.1 step 5), then opens the bundle
//! (step 6) and does its I/O through [`crate::store`].

use crate::cancel::Cancel;
use serde_json::Value;

pub mod apply_concept_patch;
pub mod common;
pub mod concept_patch;
pub mod describe;
pub mod list_concepts;
pub mod preview_concept_patch;
pub mod read_concept;
pub mod schema_parts;
pub mod spine;
pub mod validate_bundle;
pub mod write_concept;

/// Per-call context handed to tool handlers.
#[derive(Debug, Clone, Default)]
pub struct Ctx {
    /// The request's cancellation flag (spec/store.md §14).
    pub cancel: Cancel,
}

/// A handler's success: the structured object and, where the tool's text differs from the
/// compact JSON of the structured object (spec/surface.md §3), that text.
#[derive(Debug, Clone, PartialEq)]
pub struct Success {
    /// `structuredContent`: the tool's success object.
    pub structured: Value,
    /// The text content when it is not the compact JSON of `structured`.
    pub text: Option<String>,
    /// Whether a store `Commit` (spec/store.md §10) ran for this call: output-enforcement
    /// failures then say the change may have been committed (spec/surface.md §3).
    pub committed: bool,
}

impl Success {
    /// A success whose text content is the compact JSON of `structured`.
    #[must_use]
    pub fn json(structured: Value) -> Self {
        Self {
            structured,
            text: None,
            committed: false,
        }
    }

    /// A success whose text content differs from the compact JSON (spec/surface.md §3).
    #[must_use]
    pub fn with_text(structured: Value, text: String) -> Self {
        Self {
            structured,
            text: Some(text),
            committed: false,
        }
    }
}

/// Message of an output-enforcement failure after a store `Commit` ran (spec/surface.md §3).
pub const MAY_HAVE_COMMITTED: &str =
    "the change may have been committed; inspect the bundle and repeat the same call";
