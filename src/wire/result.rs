//! The result of one tool call, as MCP `tools/call` and `okf-mcp call` return it
//! (spec/surface.md §1.2, §18.2).

use crate::envelope::ToolError;
use crate::tools::text;
use serde_json::{Map, Value};

/// The three members every result carries (spec/surface.md §1.2, §18.2).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The text content items, in order: first the compact JSON of `structured`, then the
    /// tool's further items (`read_concept`'s file bytes, a preview's summary and diff, an
    /// error's readable lines; spec/surface.md §18.2).
    pub texts: Vec<String>,
    /// `structuredContent`: the success object or the error envelope.
    pub structured: Value,
    /// `isError`.
    pub is_error: bool,
}

impl ToolResult {
    /// The CallToolResult JSON with exactly `content`, `structuredContent`, `isError` in that
    /// order (spec/surface.md §1.2); `content` holds one `{"type":"text","text":…}` per
    /// text item.
    #[must_use]
    pub fn to_call_tool_result_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "content".into(),
            Value::Array(
                self.texts
                    .iter()
                    .map(|t| serde_json::json!({"type": "text", "text": t}))
                    .collect(),
            ),
        );
        m.insert("structuredContent".into(), self.structured.clone());
        m.insert("isError".into(), Value::Bool(self.is_error));
        Value::Object(m)
    }

    /// The result of a tool error (spec/surface.md §18.2): the compact JSON of the envelope,
    /// then its readable lines ([`text::error_text`]). Also used for the errors the MCP
    /// server builds outside the dispatcher (framing faults, a request cancelled before
    /// dispatch), so every error result has the same two items.
    #[must_use]
    pub fn from_error(e: &ToolError) -> Self {
        let structured = e.to_wire();
        Self {
            texts: vec![structured.to_string(), text::error_text(&structured)],
            structured,
            is_error: true,
        }
    }

    /// A success result: the compact JSON of `structured`, then `more` (spec/surface.md
    /// §18.2 rule 1).
    #[must_use]
    pub fn success(structured: Value, more: Vec<String>) -> Self {
        let mut texts = Vec::with_capacity(1 + more.len());
        texts.push(structured.to_string());
        texts.extend(more);
        Self {
            texts,
            structured,
            is_error: false,
        }
    }
}
