//! One module per MCP tool. Each exposes `DESCRIPTION` and `run`, which first parses the
//! schema-valid arguments with pure checks only (spec/surface.md §9.1 step 5), then opens the
//! bundle (step 6) and does its I/O through [`crate::store`].

pub mod apply_concept_patch;
pub mod common;
pub mod list_concepts;
pub mod preview_concept_patch;
pub mod read_concept;
pub mod validate_bundle;
pub mod write_concept;
