//! Tool descriptions (spec/surface.md §17.5), the `description` of each tool in `tools/list`,
//! declared in each tool's module.
//!
//! Each says when to use the tool, which sibling to use instead, what it returns, its limits,
//! its statuses and error codes with the next step for each, and the next step after success.
//! Mutating tools add that a preview alone is not authorisation and the replay protocol of
//! spec/store.md §13; apply tools name their paired preview.

use crate::tools;

/// The description of a Phase-1 tool by name.
#[must_use]
pub fn for_tool(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "list_concepts" => tools::list_concepts::DESCRIPTION,
        "read_concept" => tools::read_concept::DESCRIPTION,
        "validate_bundle" => tools::validate_bundle::DESCRIPTION,
        "preview_concept_patch" => tools::preview_concept_patch::DESCRIPTION,
        "apply_concept_patch" => tools::apply_concept_patch::DESCRIPTION,
        "write_concept" => tools::write_concept::DESCRIPTION,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_description_states_the_shared_rules() {
        for t in crate::wire::schema_gen::PHASE1_TOOLS {
            let d = for_tool(t).expect("description");
            assert!(d.contains("retryable: true means"), "{t}");
            assert!(
                d.contains("Next step") || d.contains("next read_concept"),
                "{t}"
            );
            assert!(d.contains("Limits"), "{t}");
            assert!(d.contains("schema_validation"), "{t}");
        }
        for t in ["apply_concept_patch", "write_concept"] {
            let d = for_tool(t).expect("description");
            assert!(d.contains("not authorisation"), "{t}");
            assert!(d.contains("repeat the exact same arguments"), "{t}");
        }
        assert!(tools::apply_concept_patch::DESCRIPTION
            .contains("preview_concept_patch, its paired preview"));
    }
}
