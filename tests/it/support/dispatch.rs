//! In-process calls through the shared dispatcher, every registered tool, and arguments
//! that pass every pure check (used by the paths and capture tests). Moved from `paths.rs`.

use crate::support::util::*;
use okf_mcp::tools::Ctx;
use okf_mcp::wire::dispatch;
use okf_mcp::wire::registry::{self, ToolSpec};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// A concept of `fixtures/bundles/demo` (and of the fixtures derived from it).
pub const CONCEPT_ID: &str = "metrics/revenue";

/// The result of one in-process call.
#[derive(Debug)]
pub struct Out {
    pub structured: Value,
    pub is_error: bool,
    /// The whole CallToolResult JSON as text (for "never contains" checks).
    pub full: String,
}

impl Out {
    pub fn code(&self) -> &str {
        self.structured["code"].as_str().unwrap_or("")
    }
    pub fn message(&self) -> &str {
        self.structured["message"].as_str().unwrap_or("")
    }
    pub fn diagnostics(&self) -> Vec<Value> {
        self.structured["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// Runs `tool` on raw argument bytes through the shared dispatcher with `ctx`.
pub fn dispatch_raw_ctx(tool: &str, raw: &[u8], ctx: &Ctx) -> Out {
    let r = dispatch::call(tool, Some(raw), ctx).expect("registered tool");
    Out {
        full: r.to_call_tool_result_json().to_string(),
        structured: r.structured,
        is_error: r.is_error,
    }
}

/// Runs `tool` on `args` through the shared dispatcher.
pub fn dispatch(tool: &str, args: &Value) -> Out {
    dispatch_raw_ctx(tool, args.to_string().as_bytes(), &Ctx::default())
}

/// Arguments that pass every pure check of `spec` (steps 2–5 of spec/surface.md §9.1), with
/// `bundle_path` set to `bundle`: required properties only, from the schema's own examples,
/// `const`/`enum` values or type defaults; `concept_id` is [`CONCEPT_ID`].
pub fn valid_args(spec: &ToolSpec, bundle: &str) -> Value {
    let schema: Value = serde_json::from_str(spec.input_schema).expect("schema JSON");
    let mut m = Map::new();
    for key in schema["required"].as_array().cloned().unwrap_or_default() {
        let key = key.as_str().expect("required name").to_owned();
        let v = match key.as_str() {
            "bundle_path" => json!(bundle),
            "concept_id" => json!(CONCEPT_ID),
            "expected_revision" | "expected_plan_digest" => {
                json!(format!("sha256:{}", "0".repeat(64)))
            }
            "actor" => json!("tester"),
            "frontmatter" => json!("type: Test\n"),
            "body" => json!("body\n"),
            "operations" => json!([{"kind": "set_lifecycle", "concept_id": CONCEPT_ID,
                "lifecycle": {"status": "draft", "stale_after": null}}]),
            _ => example(&schema["properties"][&key], &schema),
        };
        m.insert(key, v);
    }
    Value::Object(m)
}

fn example(prop: &Value, root: &Value) -> Value {
    if let Some(r) = prop["$ref"].as_str() {
        let name = r.trim_start_matches("#/$defs/");
        return example(&root["$defs"][name], root);
    }
    if let Some(e) = prop["examples"].as_array().and_then(|a| a.first()) {
        return e.clone();
    }
    if let Some(c) = prop.get("const") {
        return c.clone();
    }
    if let Some(e) = prop["enum"].as_array() {
        return e
            .iter()
            .find(|v| v.as_str() != Some(""))
            .cloned()
            .unwrap_or(Value::Null);
    }
    match prop["type"].as_str() {
        Some("integer" | "number") => prop.get("minimum").cloned().unwrap_or(json!(1)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("x"),
    }
}

/// Whether `spec`'s handler is still the skeleton stub.
pub fn is_stub(spec: &ToolSpec) -> bool {
    let out = dispatch(spec.name, &valid_args(spec, "relative/path"));
    out.message().contains("is not implemented yet")
}

/// Every registered tool, each asserted to be implemented; at least one.
pub fn live_tools() -> Vec<&'static ToolSpec> {
    let live: Vec<&'static ToolSpec> = registry::all().iter().collect();
    for spec in &live {
        assert!(
            !is_stub(spec),
            "{} is registered but its handler is a stub: register only implemented tools",
            spec.name
        );
    }
    assert!(!live.is_empty(), "no registered tool to check");
    live
}

/// `util::snapshot`, which is safe on trees holding FIFOs, sockets and devices (recorded by
/// type, never opened).
pub fn snap(root: &Path) -> BTreeMap<String, Vec<u8>> {
    snapshot(root)
}
