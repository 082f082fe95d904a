//! The temporal-upgrade workflow (`preview_temporal_upgrade` → `apply_temporal_upgrade`)
//! through `okf-mcp call` (spec/temporal.md). Moved from `temporal.rs`.

use crate::support::util::call;
use serde_json::{json, Value};
use std::path::Path;

pub(crate) fn targs(root: &Path, mappings: Option<Value>) -> Value {
    let mut a = json!({
        "bundle_path": root.to_str().expect("utf8 path"),
        "id": "upgrade-1",
        "actor": "agent-session-1",
    });
    if let Some(m) = mappings {
        a["mappings"] = m;
    }
    a
}

pub(crate) fn preview(a: &Value) -> Value {
    let out = call("preview_temporal_upgrade", a);
    assert!(!out.is_error(), "preview failed: {}", out.stdout);
    // Text content mirrors the JSON.
    assert_eq!(
        serde_json::from_str::<Value>(out.text()).expect("json text"),
        *out.structured()
    );
    out.structured().clone()
}

pub(crate) fn preview_err(a: &Value) -> Value {
    let out = call("preview_temporal_upgrade", a);
    assert!(out.is_error(), "preview should fail: {}", out.stdout);
    out.structured().clone()
}

/// The apply arguments of a ready preview `p` of `a`.
pub(crate) fn apply_args(a: &Value, p: &Value) -> Value {
    let mut x = a.clone();
    if x.get("mappings").is_none() {
        x["mappings"] = json!([]);
    }
    x["base_revision"] = p["base_revision"].clone();
    x["plan_digest"] = p["plan_digest"].clone();
    x
}

pub(crate) fn apply(x: &Value) -> Value {
    let out = call("apply_temporal_upgrade", x);
    assert!(!out.is_error(), "apply failed: {}", out.stdout);
    assert_eq!(
        serde_json::from_str::<Value>(out.text()).expect("json text"),
        *out.structured(),
        "text content mirrors the JSON"
    );
    out.structured().clone()
}

pub(crate) fn apply_err(x: &Value) -> Value {
    let out = call("apply_temporal_upgrade", x);
    assert!(out.is_error(), "apply should fail: {}", out.stdout);
    out.structured().clone()
}

/// One mapping per unresolved entry: `from` + `suffix`.
pub(crate) fn map_all(unresolved: &Value, suffix: &str) -> Value {
    Value::Array(
        unresolved
            .as_array()
            .expect("unresolved")
            .iter()
            .map(|u| {
                json!({
                    "concept": u["concept"],
                    "path": u["path"],
                    "from": u["from"],
                    "to": format!("{}{suffix}", u["from"].as_str().expect("from")),
                })
            })
            .collect(),
    )
}
