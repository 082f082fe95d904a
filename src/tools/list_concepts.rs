//! `list_concepts` (spec/surface.md §12.3).

use crate::okf::bundle::{parse_bundle, Doc};
use crate::tools::common::{bundle_fault, capture_bundle, str_arg};
use crate::wire::dispatch::Ctx;
use crate::wire::envelope::ToolError;
use crate::wire::registry::Success;
use serde_json::{json, Value};

/// Tool description (spec/surface.md §17.5).
pub const DESCRIPTION: &str = "List every concept of an OKF bundle with its card.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `bundle_path` and capture errors.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let bundle_path = str_arg(&args, "bundle_path").to_owned();
    let capture = capture_bundle(&bundle_path, ctx)?;
    let bundle = parse_bundle(&capture).map_err(|f| bundle_fault(&f))?;
    let mut concepts: Vec<(String, Value)> = bundle
        .concepts()
        .map(|(id, doc)| (id.to_owned(), entry(id, doc)))
        .collect();
    concepts.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let structured = json!({
        "version": {"declared": null, "effective": "0.2", "resolution": "default", "compatibility": "native"},
        "version_declaration": {"present": false, "valid": true, "raw": null, "value": null},
        "temporal_profile": "date-3fcbb9f",
        "as_of": null,
        "concepts": concepts.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    });
    let text = json!({"concepts": structured["concepts"].as_array().map(|a| a.iter().map(|c| json!({
        "id": c["id"], "type": c["type"], "title": c["title"], "path": c["path"],
    })).collect::<Vec<_>>())});
    Ok(Success {
        structured,
        text: Some(text.to_string()),
    })
}

fn entry(id: &str, doc: &Doc<'_>) -> Value {
    let root = doc.parsed.as_ref().ok().and_then(|p| p.root());
    let s = |k: &str| {
        root.and_then(|r| r.get(k))
            .and_then(|n| n.as_str())
            .filter(|s| !s.is_empty())
    };
    json!({
        "id": id,
        "path": doc.file.path,
        "type": s("type"),
        "title": s("title"),
        "description": s("description"),
        "tags": [],
        "status": "stable",
        "trust": "unverified",
        "stale": null,
        "stale_after": null,
        "status_state": {"present": false, "valid": true, "raw": null, "effective": "stable"},
        "generated_at": null,
        "source_count": 0,
        "computation": {"present": false, "runtime": null, "executor": null, "attester": null},
        "legacy_derived": {"generated": false, "citations": false},
        "parse_error": doc.parsed.as_ref().err().map(|f| f.code()),
    })
}
