//! Pure parts of `preview_concept_patch` / `apply_concept_patch` (spec/concept-patch.md):
//! typed operations and input validation ([`ops`]), identity and digests ([`identity`]), and
//! the `# Computation` body section of `put_attested_computation` ([`computation`]).

pub mod computation;
pub mod identity;
pub mod ops;
pub mod planner;
