//! The curated unknown-parameter table (spec/surface.md §9.4, README D2a, R27).
//!
//! Checked before the schema (step 3 of spec/surface.md §9.1). Only the keys of this table
//! are ever named back to the caller; every other unknown key falls through to the schema
//! (`schema_validation`, never echoed, §9.3 rule 1). Pure: no I/O.
//!
//! The table is data: [`MODE_KEYS`] × [`APPLY_TOOLS`], the cross-tool rows of [`CROSS_TOOL`],
//! and the camelCase spelling of every property advertised at the same object position of the
//! tool's input schema (any depth for Phase-1 tools, whose schemas exist; top level for the
//! Phase 2/3 tools through [`PLANNED_TOP_LEVEL`]).

use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::wire::schema::{self, resolve};
use serde_json::Value;

/// Envelope message of every alias hit.
pub const MESSAGE: &str = "unsupported parameter; nothing was executed";
/// Most diagnostics of one alias error.
pub const MAX_DIAGNOSTICS: usize = 8;

/// Mode switches that apply tools and `write_concept` do not have.
pub const MODE_KEYS: [&str; 5] = ["dryRun", "dry_run", "mode", "preview", "confirm"];

/// Apply tool → (paired preview, what the apply binds to).
pub const APPLY_TOOLS: [(&str, &str, &str); 3] = [
    (
        "apply_concept_patch",
        "preview_concept_patch",
        "its expected_revision and expected_plan_digest",
    ),
    (
        "apply_temporal_upgrade",
        "preview_temporal_upgrade",
        "its base_revision and plan_digest",
    ),
    (
        "apply_v02_migration",
        "preview_v02_migration",
        "its expected_source, proof and expected_plan_digest",
    ),
];

/// Cross-tool near-synonyms at the top level: (tool, keys, canonical field, guidance after
/// `<key> is not accepted: `).
pub const CROSS_TOOL: [(&str, [&str; 2], &str, &str); 6] = [
    (
        "apply_concept_patch",
        ["plan_digest", "planDigest"],
        "expected_plan_digest",
        "use expected_plan_digest (the plan_digest returned by preview_concept_patch, unchanged).",
    ),
    (
        "apply_v02_migration",
        ["plan_digest", "planDigest"],
        "expected_plan_digest",
        "use expected_plan_digest (the plan_digest returned by preview_v02_migration, unchanged).",
    ),
    (
        "apply_concept_patch",
        ["base_revision", "baseRevision"],
        "expected_revision",
        "use expected_revision (the base_revision returned by preview_concept_patch, unchanged).",
    ),
    (
        "apply_temporal_upgrade",
        ["expected_plan_digest", "expectedPlanDigest"],
        "plan_digest",
        "use plan_digest (the plan_digest returned by preview_temporal_upgrade, unchanged).",
    ),
    (
        "apply_temporal_upgrade",
        ["expected_revision", "expectedRevision"],
        "base_revision",
        "use base_revision (the base_revision returned by preview_temporal_upgrade, unchanged).",
    ),
    (
        "apply_v02_migration",
        ["expected_revision", "expectedRevision"],
        "expected_source",
        "apply_v02_migration has no expected_revision; it binds to expected_source and proof.base_revision from preview_v02_migration.",
    ),
];

/// Top-level properties of the Phase 2/3 tools, whose schemas do not exist yet
/// (spec/surface.md §2).
pub const PLANNED_TOP_LEVEL: [(&str, &[&str]); 4] = [
    (
        "preview_v02_migration",
        &[
            "bundle_path",
            "citation_mappings",
            "timestamp_policy",
            "from",
            "generated_by",
            "generated_at",
            "timestamp_conflict_policy",
            "computations",
        ],
    ),
    (
        "apply_v02_migration",
        &[
            "bundle_path",
            "citation_mappings",
            "timestamp_policy",
            "from",
            "generated_by",
            "generated_at",
            "timestamp_conflict_policy",
            "computations",
            "expected_source",
            "proof",
            "expected_plan_digest",
        ],
    ),
    (
        "preview_temporal_upgrade",
        &["bundle_path", "id", "actor", "mappings"],
    ),
    (
        "apply_temporal_upgrade",
        &[
            "bundle_path",
            "id",
            "actor",
            "mappings",
            "base_revision",
            "plan_digest",
        ],
    ),
];

/// The camelCase spelling of a snake_case name (`bundle_path` → `bundlePath`).
#[must_use]
pub fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Step 3 of spec/surface.md §9.1.
///
/// # Errors
/// `unknown_parameter` (non-retryable, message [`MESSAGE`]) with one `ERROR` diagnostic per
/// hit (≤ 8, sorted by field then message): `field` is the canonical replacement, the
/// guidance ends `Nothing was executed.`
pub fn check(tool: &str, args: &Value) -> Result<(), ToolError> {
    let mut hits: Vec<(String, String)> = Vec::new();
    if let Value::Object(top) = args {
        for key in top.keys() {
            top_level_hit(tool, key, &mut hits);
        }
    }
    match schema::input_schema(tool) {
        Some(root) => camel_hits(root, root, args, &mut Vec::new(), &mut hits),
        None => {
            if let (Some((_, props)), Value::Object(top)) =
                (PLANNED_TOP_LEVEL.iter().find(|(t, _)| *t == tool), args)
            {
                for key in top.keys() {
                    if let Some(p) = props.iter().find(|p| camel_case(p) == *key && **p != key) {
                        hits.push(camel_hit(key, (*p).to_owned()));
                    }
                }
            }
        }
    }
    if hits.is_empty() {
        return Ok(());
    }
    hits.sort();
    hits.dedup();
    let mut e = ToolError::new(codes::UNKNOWN_PARAMETER, MESSAGE);
    e.diagnostics = hits
        .into_iter()
        .take(MAX_DIAGNOSTICS)
        .map(|(field, message)| {
            Diagnostic::new(codes::UNKNOWN_PARAMETER, Severity::Error, message).with_field(field)
        })
        .collect();
    Err(e)
}

fn top_level_hit(tool: &str, key: &str, hits: &mut Vec<(String, String)>) {
    if MODE_KEYS.contains(&key) {
        if let Some((t, preview, binds)) = APPLY_TOOLS.iter().find(|(t, _, _)| *t == tool) {
            hits.push((
                (*preview).to_owned(),
                format!(
                    "{key} is not accepted: {t} has no mode switch. Use {preview} to rehearse, then apply with {binds}. Nothing was executed."
                ),
            ));
        } else if tool == "write_concept" {
            hits.push((
                "preview_concept_patch".to_owned(),
                format!(
                    "{key} is not accepted: write_concept has no rehearsal mode and replaces the whole concept. Review it with read_concept, or use preview_concept_patch for a bounded change. Nothing was executed."
                ),
            ));
        }
    }
    for (t, keys, field, guidance) in CROSS_TOOL {
        if t == tool && keys.contains(&key) {
            hits.push((
                field.to_owned(),
                format!("{key} is not accepted: {guidance} Nothing was executed."),
            ));
        }
    }
}

fn camel_hit(key: &str, dotted_snake: String) -> (String, String) {
    let snake = dotted_snake
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_owned();
    (
        dotted_snake,
        format!("{key} is not accepted: use {snake} (snake_case). Nothing was executed."),
    )
}

/// The property schemas a node (and its `allOf`/`if`/`then`/`else`/`anyOf`/`oneOf` branches)
/// advertises for one object position.
fn position_props<'a>(root: &'a Value, node: &'a Value, out: &mut Vec<(&'a str, &'a Value)>) {
    let node = resolve(root, node);
    if let Some(Value::Object(p)) = node.get("properties") {
        for (k, v) in p {
            if !out.iter().any(|(n, _)| *n == k.as_str()) && v.is_object() {
                out.push((k.as_str(), v));
            }
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = node.get(key) {
            for b in a {
                position_props(root, b, out);
            }
        }
    }
    for key in ["if", "then", "else"] {
        if let Some(b) = node.get(key) {
            position_props(root, b, out);
        }
    }
}

fn items_schema<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    resolve(root, node).get("items")
}

fn camel_hits(
    root: &Value,
    node: &Value,
    value: &Value,
    path: &mut Vec<String>,
    hits: &mut Vec<(String, String)>,
) {
    match value {
        Value::Object(m) => {
            let mut props = Vec::new();
            position_props(root, node, &mut props);
            for (key, child) in m {
                if let Some((_, s)) = props.iter().find(|(n, _)| *n == key.as_str()) {
                    path.push(key.clone());
                    camel_hits(root, s, child, path, hits);
                    path.pop();
                } else if let Some((snake, _)) = props
                    .iter()
                    .find(|(n, _)| n.contains('_') && camel_case(n) == *key)
                {
                    let mut dotted = path.clone();
                    dotted.push((*snake).to_owned());
                    hits.push(camel_hit(key, dotted.join(".")));
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = items_schema(root, node) {
                for (i, child) in a.iter().enumerate() {
                    path.push(i.to_string());
                    camel_hits(root, items, child, path, hits);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_case_of_snake_names() {
        assert_eq!(camel_case("bundle_path"), "bundlePath");
        assert_eq!(camel_case("expected_plan_digest"), "expectedPlanDigest");
        assert_eq!(camel_case("actor"), "actor");
    }

    #[test]
    fn hits_are_capped_and_sorted() {
        let args = json!({
            "dryRun": 1, "dry_run": 1, "mode": 1, "preview": 1, "confirm": 1,
            "planDigest": 1, "plan_digest": 1, "baseRevision": 1, "base_revision": 1,
            "bundlePath": 1,
        });
        let e = check("apply_concept_patch", &args).expect_err("aliases");
        assert_eq!(e.diagnostics.len(), MAX_DIAGNOSTICS);
        let keys: Vec<(String, String)> = e
            .diagnostics
            .iter()
            .map(|d| (d.field.clone(), d.message.clone()))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn advertised_and_unknown_keys_pass_through() {
        assert!(check(
            "list_concepts",
            &json!({"bundle_path": "/x", "whatever": 1})
        )
        .is_ok());
        assert!(check("preview_concept_patch", &json!({"dryRun": true})).is_ok());
    }
}
