//! The registered tools: names, annotations, descriptions, checked-in schemas, handlers
//! (spec/surface.md §2, §17).

use crate::envelope::ToolError;
use crate::tools::{self, Ctx, Success};
use serde_json::Value;

/// A handler: receives schema-valid arguments of its own tool only (spec/surface.md §9.1).
pub type Handler = fn(Value, &Ctx) -> Result<Success, ToolError>;

/// One registered tool.
pub struct ToolSpec {
    /// The MCP tool name (spec/surface.md §2).
    pub name: &'static str,
    /// `readOnlyHint`; the other three hints follow from it (spec/surface.md §2).
    pub read_only: bool,
    /// The tool description of spec/surface.md §17.5.
    pub description: &'static str,
    /// The checked-in `schemas/<name>.input.schema.json` text.
    pub input_schema: &'static str,
    /// The checked-in `schemas/<name>.output.schema.json` text.
    pub output_schema: &'static str,
    /// The handler: pure checks, then `bundle_path`, then I/O (spec/surface.md §9.1 steps 5–7).
    pub run: Handler,
}

/// One registry entry: the description comes from [`descriptions`], the schemas are the
/// checked-in `schemas/<name>.{input,output}.schema.json` (spec/surface.md §17.1).
///
/// Registering a Phase-1b tool is one line, e.g.
/// `tool!("apply_concept_patch", false, tools::apply_concept_patch::DESCRIPTION, tools::apply_concept_patch::run)`;
/// its schemas, validators and description already exist.
macro_rules! tool {
    ($name:literal, $read_only:expr, $description:path, $run:path) => {
        ToolSpec {
            name: $name,
            read_only: $read_only,
            description: $description,
            input_schema: include_str!(concat!("../../schemas/", $name, ".input.schema.json")),
            output_schema: include_str!(concat!("../../schemas/", $name, ".output.schema.json")),
            run: $run,
        }
    };
}

/// The registered tools, sorted by name. Phase 1a registers only the read tools
/// (spec/README.md §6: `tools/list` lists what is implemented).
static TOOLS: &[ToolSpec] = &[
    tool!(
        "apply_concept_patch",
        false,
        tools::apply_concept_patch::DESCRIPTION,
        tools::apply_concept_patch::run
    ),
    tool!(
        "list_concepts",
        true,
        tools::list_concepts::DESCRIPTION,
        tools::list_concepts::run
    ),
    tool!(
        "preview_concept_patch",
        true,
        tools::preview_concept_patch::DESCRIPTION,
        tools::preview_concept_patch::run
    ),
    tool!(
        "read_concept",
        true,
        tools::read_concept::DESCRIPTION,
        tools::read_concept::run
    ),
    tool!(
        "validate_bundle",
        true,
        tools::validate_bundle::DESCRIPTION,
        tools::validate_bundle::run
    ),
    tool!(
        "write_concept",
        false,
        tools::write_concept::DESCRIPTION,
        tools::write_concept::run
    ),
];

/// Every registered tool, sorted by name (spec/surface.md §2).
#[must_use]
pub fn all() -> &'static [ToolSpec] {
    TOOLS
}

/// The tool named `name`, if registered.
#[must_use]
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn tools_are_sorted_and_unique() {
        let names: Vec<_> = super::all().iter().map(|t| t.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
    }

    #[test]
    fn registered_tools_use_the_spec_descriptions_and_checked_in_schemas() {
        for t in super::all() {
            assert_eq!(
                Some(t.description),
                crate::wire::descriptions::for_tool(t.name)
            );
            let (_, input, output) = crate::wire::schema::CHECKED_IN
                .iter()
                .find(|(n, _, _)| *n == t.name)
                .expect("checked-in schemas");
            assert_eq!(t.input_schema, *input);
            assert_eq!(t.output_schema, *output);
        }
    }
}
