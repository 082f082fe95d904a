//! Every filesystem effect of okf-mcp lives here (spec/store.md rule S-1).
//!
//! - [`root`]: the `bundle_path` walk from `/` with no-follow opens (spec/surface.md §7).
//! - [`capture`]: one bounded, symlink-refusing read of the visible tree (spec/store.md §3).

pub mod capture;
#[cfg(feature = "fault-injection")]
pub mod hooks;
pub mod root;
