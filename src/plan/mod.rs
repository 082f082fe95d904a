//! Pure planners and digests. No I/O: captures and arguments in, plans and digests out.

pub mod args;
pub mod computation;
pub mod diff;
pub mod doc_edit;
pub mod edit;
pub mod identity;
pub mod migration;
pub mod patch;
pub mod stage;
pub mod stream;
pub mod temporal;
