//! The OKF 0.1 → 0.2 migration planner (spec/migration.md). Pure: a parsed bundle and the
//! canonical request in, the migration plan out.

pub mod citations;
