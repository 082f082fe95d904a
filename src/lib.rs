//! okf-mcp: an MCP server and CLI that lets a local agent read and safely change an OKF
//! (Open Knowledge Format) bundle on disk.
//!
//! Layout (functional core, imperative shell):
//! - [`envelope`]: the error vocabulary every layer may use — tool errors, diagnostics,
//!   severities and the stable wire codes (spec/surface.md §4–§6).
//! - [`digest`]: canonical length-prefixed encodings and digests (revision, keys, names;
//!   spec/store.md §2, §3.6, §6), shared by every layer.
//! - [`progress`]: the progress sink of a long call (rate limit, order, close).
//! - [`notices`]: the notices a call collects for its success object (spec/surface.md §18.1).
//! - [`okf`]: pure OKF document layer — frontmatter split, YAML with byte spans, grammars,
//!   projections, version resolution, the validator. Bytes in, values out; no I/O.
//! - [`view`]: pure derived read models of the Phase-4 search and graph tools (terms,
//!   sections, scoring, edges; spec/surface.md §14, §14.6), on [`okf`] documents only.
//! - [`plan`]: pure planners: the lossless editor, identity (change set, request and plan
//!   digests), shared staging, the concept patch.
//! - [`store`]: every filesystem effect — `bundle_path` walk, capture, and the transactional
//!   writer under `.okf/`.
//! - [`tools`]: the workflow spine (`tools::spine`) and one module per MCP tool: a pure parse
//!   of validated arguments, then the I/O through the store.
//! - [`wire`]: the shared dispatcher — raw-argument boundary, aliases, JSON Schema, error
//!   output enforcement. MCP and CLI both call [`wire::dispatch::call`].
//! - [`server`]: the stdio MCP server (rmcp) and its framing layer.
//! - [`cli`]: `okf-mcp serve | call | demo`.

pub mod cancel;
pub mod cli;
pub mod demo;
pub mod digest;
pub mod envelope;
pub mod notices;
pub mod okf;
pub mod plan;
pub mod progress;
pub mod server;
pub mod store;
pub mod tools;
pub mod view;
pub mod wire;
