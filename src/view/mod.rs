//! The Phase-4 layer: pure read models derived from a bundle's documents for the search and
//! graph tools (spec/surface.md §14, with the decisions of §14.6). Documents of [`crate::okf`]
//! and text in, values out; no I/O, no clock, no environment. The model of one document is a
//! pure function of its bytes and path, so a warm index can keep and update it per changed file
//! (spec/surface.md §14.6 rule 10).
//!
//! This layer imports only [`crate::okf`] and the bottom layer (`cancel`, `envelope`,
//! `digest`, `progress`); never `plan`, `store`, `tools` or `wire`, and neither `plan` nor
//! `store` imports it (checked by `tests/it/layers.rs`).
//!
//! - [`terms`]: folding and the term model of §14.6 rule 1.

pub mod terms;
