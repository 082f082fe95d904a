//! The pure OKF document layer: bytes in, values out; no I/O.
//!
//! - [`capture`]: the captured tree of a bundle (paths, sizes, digests, bytes) and its
//!   revision (spec/store.md §3).
//! - [`document`]: frontmatter/body split (spec/surface.md §13.1 rules 1–2).
//! - [`yaml`]: YAML 1.2 node tree with byte spans and limits.
//! - [`grammar`]: concept-ID grammar (spec/surface.md §8) and document classification.
//! - [`temporal`]: temporal profiles and the strict date / offset-datetime grammars;
//!   [`detect`]: the temporal kinds a bundle shows (the `auto` profile).
//! - [`actor`]: document and request actor conventions.
//! - [`bundle`]: a capture parsed into documents (spec/store.md §3.4).
//! - [`computation`]: the attested-computation model and its `# Computation` body section
//!   (spec/concept-patch.md §2.3, §3.7), for the patch and the migration.
//! - [`links`]: Markdown link targets resolved to bundle paths.
//! - [`finding`]: one validator finding; [`validate`]: the OKF validator; [`memo`]: the
//!   content-keyed parse memo.

pub mod actor;
pub mod bundle;
pub mod capture;
pub mod computation;
pub mod detect;
pub mod document;
pub mod finding;
pub mod grammar;
pub mod links;
pub mod markdown;
pub mod memo;
pub mod par;
pub mod project;
pub mod temporal;
pub mod validate;
pub mod version;
pub mod yaml;
