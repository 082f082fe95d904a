//! Every filesystem effect of okf-mcp lives here (spec/store.md rule S-1).
//!
//! - [`root`]: the `bundle_path` walk from `/` with no-follow opens (spec/surface.md §7).
//! - [`capture`]: one bounded, symlink-refusing read of the visible tree (spec/store.md §3).
//! - The transactional writer (spec/store.md §6–§15; design: `docs/store.md`):
//!   [`commit`] (the pipeline C1–C16 and the receipt lookup), [`handle`] (an open store:
//!   private state layout, options, fault dispatch), [`open`] (opening it: private
//!   directories, lock, folding probe, recovery), [`lock`], [`journal`] and [`receipt`] (pure
//!   formats and validity), [`publish`] (post-boundary steps shared with recovery),
//!   [`recovery`] (R1–R8), [`durable`] (the one durability seam), [`fault`] (fault points
//!   and test hooks), [`error`] (the error type and its wire mapping) and [`outcome`] (the
//!   tool-layer classifier and receipt match).
//! - [`warm`]: the warm capture cache of a long-running server (spec/store.md §17).
//! - [`wait`]: read and preview tools facing a commit in flight: the wait for its
//!   publication (spec/store.md §16 rule 2).

pub mod capture;
pub mod commit;
pub mod durable;
pub mod error;
pub mod fault;
pub mod handle;
#[cfg(feature = "fault-injection")]
pub mod hooks;
pub mod journal;
pub mod lock;
pub mod open;
pub mod outcome;
pub mod publish;
pub mod receipt;
pub mod recovery;
pub mod root;
pub mod wait;
pub mod warm;
