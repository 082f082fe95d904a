//! The Phase-4 layer (spec/surface.md §14, §14.6): derived read models of a parsed bundle —
//! the term model ([`terms`]), sections ([`sections`]) and their BM25 ranking ([`rank`]), the
//! concept search ([`concepts`]), the link graph ([`edges`]), its JSON-LD projection
//! ([`graph`]) and the card filters ([`filter`]).
//!
//! Pure: built from `okf` documents and the bottom layer only; it never imports the store,
//! the planners or the tools (tests/it/layers.rs). What it derives from one document is a
//! pure function of that document's path and bytes (and, for edges, of the bundle's paths),
//! so a warm server can keep it per file (spec/store.md §17).

pub mod concepts;
pub mod edges;
pub mod filter;
pub mod graph;
pub mod index;
pub mod memo;
pub mod rank;
pub mod sections;
pub mod terms;
