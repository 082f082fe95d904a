//! Pure parts of `preview_concept_patch` / `apply_concept_patch` (spec/concept-patch.md):
//! typed operations and input validation ([`ops`]), identity and digests ([`identity`]), the
//! planner ([`planner`]). The computation model and its `# Computation` body section, shared
//! with the migration, are [`crate::okf::computation`].

pub mod identity;
pub mod ops;
pub mod planner;
