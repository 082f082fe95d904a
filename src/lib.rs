//! okf-mcp: an MCP server and CLI that lets a local agent read and safely change an OKF
//! (Open Knowledge Format) bundle on disk.
//!
//! Layout (functional core, imperative shell):
//! - [`okf`]: pure OKF document layer — frontmatter split, YAML with byte spans, grammars,
//!   projections, version resolution, the validator. Bytes in, values out; no I/O.
//! - [`plan`]: pure planners and digests (revision, request and plan digests).
//! - [`store`]: every filesystem effect — `bundle_path` walk, capture, and the transactional
//!   writer under `.okf/`.
//! - [`tools`]: one module per MCP tool: a pure `parse` of validated arguments, then `execute`.
//! - [`wire`]: the shared dispatcher — raw-argument boundary, aliases, JSON Schema, error
//!   envelope, output enforcement. MCP and CLI both call [`wire::dispatch::call`].
//! - [`server`]: the stdio MCP server (rmcp) and its framing layer.
//! - [`cli`]: `okf-mcp serve | call | demo`.

pub mod cancel;
pub mod cli;
pub mod demo;
pub mod okf;
pub mod plan;
pub mod server;
pub mod store;
pub mod tools;
pub mod wire;
