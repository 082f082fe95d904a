//! Helpers shared by the test files of the `it` binary. A test file imports only from here
//! (`crate::support::…`), never from another test file; `guard.rs` checks that, and that every
//! `.rs` file under `tests/it/` is reached from `main.rs`.
//!
//! - `util`: the binary, fixtures, temp copies, tree snapshots, the CLI; `client`: the MCP
//!   client over stdio;
//! - `patch`, `migration`, `temporal`: the three write workflows (preview → apply → replay);
//! - `dispatch`: in-process calls through the shared dispatcher; `raw`: raw-argument calls;
//!   `read`: temp bundles from text and calls that must succeed or fail; `probe`: an HTTP
//!   probe counting connections; `real_client`: the real clients' installs under `target/`,
//!   their call plans and JSON reports;
//! - `markdown_oracle`: pulldown-cmark as the Markdown scanner's differential oracle (also
//!   compiled into the fuzz target `markdown_oracle`);
//! - `gen`: the generator of v0.1 bundles at scale; `store`: the store's transaction API as
//!   the store tests drive it.

// Some helpers are used only by the `fault-injection` test files.
#![allow(dead_code)]

pub mod client;
pub mod dispatch;
pub mod gen;
pub mod markdown_oracle;
pub mod migration;
pub mod patch;
pub mod probe;
pub mod raw;
pub mod read;
pub mod real_client;
pub mod store;
pub mod temporal;
pub mod util;
