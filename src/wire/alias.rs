//! The curated unknown-parameter table (spec/surface.md §9.4, README D2a).

use crate::wire::envelope::ToolError;
use serde_json::Value;

/// Step 3 of spec/surface.md §9.1.
///
/// # Errors
/// `unknown_parameter` naming the canonical parameter; "nothing was executed".
pub fn check(_tool: &str, _args: &Value) -> Result<(), ToolError> {
    Ok(())
}
