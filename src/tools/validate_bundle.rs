//! `validate_bundle` (spec/surface.md §12.5).

use crate::wire::dispatch::Ctx;
use crate::wire::envelope::ToolError;
use crate::wire::registry::Success;
use serde_json::Value;

/// Tool description (spec/surface.md §17.5).
pub const DESCRIPTION: &str = "Validate an OKF bundle.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// Not implemented yet.
pub fn run(_args: Value, _ctx: &Ctx) -> Result<Success, ToolError> {
    Err(ToolError::new(
        "operation_rejected",
        "validate_bundle is not implemented yet",
    ))
}
