//! The wire layer shared by MCP and the CLI: decode, validate, dispatch, encode.
//!
//! [`dispatch::call`] runs the pipeline of spec/surface.md §9.1 for one tool call:
//! cancellation → raw-argument boundary ([`raw`]) → `null` optional arguments dropped
//! ([`optional`]) → curated aliases ([`alias`]) → JSON Schema ([`schema`]) → the tool's pure
//! checks → the tool's I/O; then output enforcement.

pub mod advertise;
pub mod alias;
pub mod dispatch;
pub mod optional;
pub mod raw;
pub mod registry;
pub mod result;
pub mod schema;
pub mod schema_gen;
pub mod scope;
