//! The registered tools as the wire layer sees them (spec/surface.md §2, §17): a lookup over
//! [`crate::tools::TOOLS`], the one list of tool modules. Each entry ([`ToolSpec`]) carries the
//! name, annotation, description, checked-in schemas, schema builders, alias rows and handler
//! its module declares.

use crate::tools;
pub use crate::tools::def::{ArgumentExample, SharedSchema};
pub use crate::tools::{Handler, ToolSpec};

/// Every registered tool, sorted by name (spec/surface.md §2).
#[must_use]
pub fn all() -> &'static [ToolSpec] {
    tools::TOOLS
}

/// The tool named `name`, if registered.
#[must_use]
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    tools::TOOLS.iter().find(|t| t.name == name)
}
