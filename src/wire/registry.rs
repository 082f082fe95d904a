//! The registered tools: names, annotations, descriptions, checked-in schemas, handlers
//! (spec/surface.md §2, §17).

use crate::tools;
use crate::wire::dispatch::Ctx;
use crate::wire::envelope::ToolError;
use serde_json::Value;

/// A handler's success: the structured object and, where the tool's text differs from the
/// compact JSON of the structured object (spec/surface.md §3), that text.
#[derive(Debug, Clone, PartialEq)]
pub struct Success {
    pub structured: Value,
    pub text: Option<String>,
}

impl Success {
    /// A success whose text content is the compact JSON of `structured`.
    #[must_use]
    pub fn json(structured: Value) -> Self {
        Self {
            structured,
            text: None,
        }
    }
}

/// A handler: receives schema-valid arguments of its own tool only (spec/surface.md §9.1).
pub type Handler = fn(Value, &Ctx) -> Result<Success, ToolError>;

/// One registered tool.
pub struct ToolSpec {
    pub name: &'static str,
    /// `readOnlyHint`; the other three hints follow from it (spec/surface.md §2).
    pub read_only: bool,
    pub description: &'static str,
    /// The checked-in `schemas/<name>.input.schema.json` text.
    pub input_schema: &'static str,
    /// The checked-in `schemas/<name>.output.schema.json` text.
    pub output_schema: &'static str,
    pub run: Handler,
}

static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "list_concepts",
        read_only: true,
        description: tools::list_concepts::DESCRIPTION,
        input_schema: include_str!("../../schemas/list_concepts.input.schema.json"),
        output_schema: include_str!("../../schemas/list_concepts.output.schema.json"),
        run: tools::list_concepts::run,
    },
    ToolSpec {
        name: "read_concept",
        read_only: true,
        description: tools::read_concept::DESCRIPTION,
        input_schema: include_str!("../../schemas/read_concept.input.schema.json"),
        output_schema: include_str!("../../schemas/read_concept.output.schema.json"),
        run: tools::read_concept::run,
    },
    ToolSpec {
        name: "validate_bundle",
        read_only: true,
        description: tools::validate_bundle::DESCRIPTION,
        input_schema: include_str!("../../schemas/validate_bundle.input.schema.json"),
        output_schema: include_str!("../../schemas/validate_bundle.output.schema.json"),
        run: tools::validate_bundle::run,
    },
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
}
