//! The curated unknown-parameter table (spec/surface.md §9.4, README D2a, R27).
//!
//! Checked before the schema (step 3 of spec/surface.md §9.1). Only the keys of this table
//! are ever named back to the caller; every other unknown key falls through to the schema
//! (`schema_validation`, never echoed, §9.3 rule 1). Pure: no I/O.
//!
//! The table is data: the top-level rows ([`Alias`]) each registered tool declares in its
//! module ([`crate::tools::ToolSpec::aliases`]) and the rows of the planned Phase 2/3 tools,
//! which have no module yet ([`PLANNED`]); plus the camelCase spelling of every property
//! advertised at the same object position of the tool's input schema (any depth for the
//! registered tools, whose schemas exist; top level for the planned tools through
//! [`PlannedTool::properties`]).

use crate::envelope::{codes, Diagnostic, Severity, ToolError};
pub use crate::tools::def::MODE_KEYS;
pub use crate::tools::Alias;
use crate::wire::registry;
use crate::wire::schema::{self, resolve};
use serde_json::Value;

/// Envelope message of every alias hit.
pub const MESSAGE: &str = "unsupported parameter; nothing was executed";
/// Most diagnostics of one alias error.
pub const MAX_DIAGNOSTICS: usize = 8;

/// A Phase 2/3 tool of spec/surface.md §2 that has no module and no schemas yet: its alias
/// rows and its top-level properties. When the tool gets its module, the rows move there.
#[derive(Debug, Clone, Copy)]
pub struct PlannedTool {
    /// The tool name.
    pub name: &'static str,
    /// Its top-level rows of the alias table.
    pub aliases: &'static [Alias],
    /// Its top-level properties (spec/surface.md §2), whose camelCase spellings are aliases.
    pub properties: &'static [&'static str],
}

/// The planned tools (spec/surface.md §2, §9.4): none left; the temporal tools' rows moved to
/// their modules (`tools::apply_temporal_upgrade`).
pub const PLANNED: [PlannedTool; 0] = [];

/// Near-synonyms agents try for an advertised property (spec/surface.md §18.3 rule 4): the
/// keys, the canonical property, and what it holds. A key is a hit only at an object position
/// whose schema advertises the canonical property and not the key itself, at any depth (`url`
/// inside a `put_source` source). Where the position also advertises `concept_id`
/// (`read_concept`, `write_concept`), `path` names `concept_id` instead, with both meanings.
pub const SYNONYMS: &[(&[&str], &str, &str)] = &[
    (
        &["path", "bundle", "dir", "root"],
        "bundle_path",
        "the absolute path of the bundle's root directory, without a trailing slash",
    ),
    (
        &["concept", "concept_path"],
        "concept_id",
        "the bundle-relative concept id without the .md suffix, e.g. tables/orders",
    ),
    (
        &["url", "href"],
        "resource",
        "the resource this entry points to: a URL or a bundle-relative path",
    ),
    (
        &["q", "search", "text", "keywords", "terms"],
        "query",
        "the words to find (search_sections: every word must occur)",
    ),
    (
        &["max_results", "top_k", "page_size"],
        "limit",
        "the most items of this page; pass next_cursor as cursor for the next page",
    ),
    (
        &["ids", "concepts"],
        "concept_ids",
        "the concept ids to center the subgraph on, e.g. [\"tables/orders\"]",
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
    let planned = PLANNED.iter().find(|p| p.name == tool);
    let aliases = match (registry::find(tool), planned) {
        (Some(t), _) => t.aliases,
        (None, Some(p)) => p.aliases,
        (None, None) => &[],
    };
    let mut hits: Vec<(String, String)> = Vec::new();
    if let Value::Object(top) = args {
        for key in top.keys() {
            for a in aliases.iter().filter(|a| a.keys.contains(&key.as_str())) {
                hits.push((
                    a.field.to_owned(),
                    format!(
                        "{key} is not accepted: {} Nothing was executed.",
                        a.guidance
                    ),
                ));
            }
        }
    }
    match schema::input_schema(tool) {
        Some(root) => camel_hits(root, root, args, &mut Vec::new(), &mut hits),
        None => {
            if let (Some(p), Value::Object(top)) = (planned, args) {
                for key in top.keys() {
                    if let Some(snake) = p
                        .properties
                        .iter()
                        .find(|n| camel_case(n) == *key && **n != key)
                    {
                        hits.push(camel_hit(key, (*snake).to_owned()));
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
                } else if key == "path" && props.iter().any(|(n, _)| *n == "concept_id") {
                    // A tool that names a concept: `path` is most likely the concept's.
                    let mut dotted = path.clone();
                    dotted.push("concept_id".to_owned());
                    hits.push((
                        dotted.join("."),
                        "path is not accepted: use concept_id for the concept (its bundle-relative path without .md) and bundle_path for the bundle's root directory. Nothing was executed.".to_owned(),
                    ));
                } else if let Some((_, canonical, holds)) =
                    SYNONYMS.iter().find(|(keys, canonical, _)| {
                        keys.contains(&key.as_str()) && props.iter().any(|(n, _)| n == canonical)
                    })
                {
                    let mut dotted = path.clone();
                    dotted.push((*canonical).to_owned());
                    hits.push((
                        dotted.join("."),
                        format!(
                            "{key} is not accepted: use {canonical}, {holds}. Nothing was executed."
                        ),
                    ));
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
    fn planned_tools_are_not_registered() {
        for p in PLANNED {
            assert!(
                registry::find(p.name).is_none(),
                "{}: rows belong in its module",
                p.name
            );
        }
    }

    #[test]
    fn mode_switch_guidance_is_the_table_sentence() {
        let e = check("apply_concept_patch", &json!({"confirm": true})).expect_err("hit");
        assert_eq!(
            e.diagnostics[0].message,
            "confirm is not accepted: apply_concept_patch has no mode switch. Use preview_concept_patch to rehearse, then apply with its expected_revision and expected_plan_digest. Nothing was executed."
        );
        let e = check("write_concept", &json!({"dryRun": true})).expect_err("hit");
        assert_eq!(
            e.diagnostics[0].message,
            "dryRun is not accepted: write_concept has no rehearsal mode and replaces the whole concept. Review it with read_concept, or use preview_concept_patch for a bounded change. Nothing was executed."
        );
    }

    #[test]
    fn aut_05_near_synonyms_name_their_canonical_property_where_it_is_advertised() {
        for key in ["path", "bundle", "dir", "root"] {
            let e = check("list_concepts", &json!({ key: "/x" })).expect_err(key);
            assert_eq!(e.diagnostics[0].field, "bundle_path", "{key}");
            assert!(e.diagnostics[0]
                .message
                .starts_with(&format!("{key} is not accepted: use bundle_path, ")));
        }
        // Where a concept is named, `path` points to concept_id (and bundle_path).
        let e = check("write_concept", &json!({"path": "a.md"})).expect_err("path");
        assert_eq!(e.diagnostics[0].field, "concept_id");
        assert!(e.diagnostics[0].message.contains("bundle_path"));
        assert_eq!(
            check("write_concept", &json!({"dir": "/x"}))
                .expect_err("dir")
                .diagnostics[0]
                .field,
            "bundle_path"
        );
        // Inside an operation's source object.
        let args = json!({"operations": [{"kind": "put_source", "concept_id": "a",
            "source": {"id": "s", "url": "https://example.test/"}}]});
        let e = check("preview_concept_patch", &args).expect_err("url");
        assert_eq!(e.diagnostics[0].field, "operations.0.source.resource");
        // Not where `resource` is not advertised.
        assert!(check("list_concepts", &json!({"bundle_path": "/x", "href": 1})).is_ok());
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
