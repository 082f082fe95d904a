//! Pure planners and digests. No I/O: captures and arguments in, plans and digests out.

pub mod diff;
pub mod edit;
pub mod identity;
pub mod migration;
pub mod patch;
pub mod stage;
pub mod stream;
pub mod temporal;
