//! The raw-argument boundary (spec/surface.md §9.2).

use crate::wire::envelope::ToolError;
use serde_json::Value;

/// Decodes raw argument bytes into a JSON object value.
///
/// # Errors
/// `invalid_request` / `resource_limit` per spec/surface.md §9.2; messages never name keys or
/// values.
pub fn decode_arguments(raw: &[u8]) -> Result<Value, ToolError> {
    let text = std::str::from_utf8(raw)
        .map_err(|_| ToolError::invalid_request("MCP arguments contain invalid UTF-8"))?;
    let v: Value = serde_json::from_str(text)
        .map_err(|_| ToolError::invalid_request("MCP arguments are not valid JSON"))?;
    if !v.is_object() {
        return Err(ToolError::invalid_request(
            "MCP arguments must be a JSON object",
        ));
    }
    Ok(v)
}
