//! `null` for an optional top-level argument (spec/surface.md §18.6 rule 3b): LangChain and
//! other adapters send `null` for every optional parameter the model left unset, so such a
//! `null` is treated as absent.
//!
//! Between the raw-argument decode ([`crate::wire::raw`], spec/surface.md §9.1 step 2) and
//! the alias check and schema validation, [`drop_null_optionals`] removes every member of the
//! argument object that
//! - is a property of the tool's **advertised** input schema ([`crate::wire::advertise`],
//!   what `tools/list` shows), and
//! - is not in that schema's top-level `required`, and
//! - has the value `null`.
//!
//! Required members, alias keys (`path`, `url`, …) and unknown keys are never dropped, so
//! their `null` keeps its answer (schema_validation, unknown_parameter). Only the top level
//! is touched: a `null` inside `operations`, `citation_mappings`, `mappings` or
//! `computations` keeps its meaning or its error. A success answer then carries one `INFO`
//! notice [`NULL_ARGUMENT_IGNORED`] naming the dropped fields ([`push_notice`]).

use crate::envelope::{Diagnostic, Severity};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

/// Code of the notice of spec/surface.md §18.6 rule 3b.
pub const NULL_ARGUMENT_IGNORED: &str = "null_argument_ignored";

/// The optional top-level properties of each registered tool's advertised input schema, by
/// tool name.
fn optional_by_tool() -> &'static HashMap<&'static str, BTreeSet<String>> {
    static OPTIONAL: OnceLock<HashMap<&'static str, BTreeSet<String>>> = OnceLock::new();
    OPTIONAL.get_or_init(|| {
        crate::wire::registry::all()
            .iter()
            .map(|t| {
                let full = Value::Object(crate::wire::schema::advertised(t.input_schema));
                (
                    t.name,
                    optional_of(&Value::Object(crate::wire::advertise::input_schema(&full))),
                )
            })
            .collect()
    })
}

/// The top-level properties of `schema` that its top-level `required` does not list.
fn optional_of(schema: &Value) -> BTreeSet<String> {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .filter(|k| !required.contains(k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Removes from the argument object `args` every advertised optional top-level member of
/// `tool` whose value is `null` (module docs); returns their names in argument order. A
/// non-object `args` or an unregistered tool is left as it is.
pub fn drop_null_optionals(tool: &str, args: &mut Value) -> Vec<String> {
    let (Some(optional), Value::Object(m)) = (optional_by_tool().get(tool), args) else {
        return Vec::new();
    };
    let dropped: Vec<String> = m
        .iter()
        .filter(|(k, v)| v.is_null() && optional.contains(k.as_str()))
        .map(|(k, _)| k.clone())
        .collect();
    for k in &dropped {
        m.shift_remove(k);
    }
    dropped
}

/// Pushes the `INFO` notice [`NULL_ARGUMENT_IGNORED`] naming `fields` (in its `field`,
/// comma-separated, and in its message); nothing when `fields` is empty.
pub fn push_notice(fields: &[String]) {
    if fields.is_empty() {
        return;
    }
    let names = fields.join(", ");
    crate::notices::push(
        Diagnostic::new(
            NULL_ARGUMENT_IGNORED,
            Severity::Info,
            format!(
                "null was passed for the optional argument(s) {names}; each was treated as absent (its default applies): leave an unset optional argument out"
            ),
        )
        .with_field(names),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aut_13_only_advertised_optional_top_level_nulls_are_dropped() {
        let mut args = json!({
            "bundle_path": null, "temporal_profile": null, "path": null, "nope": null,
            "as_of": "2026-01-01", "limit": null, "status": null
        });
        let dropped = drop_null_optionals("list_concepts", &mut args);
        assert_eq!(dropped, ["temporal_profile", "limit", "status"]);
        // Required, alias and unknown keys stay, and so does a non-null optional one.
        assert_eq!(
            args,
            json!({"bundle_path": null, "path": null, "nope": null, "as_of": "2026-01-01"})
        );
        // Nothing below the top level is touched.
        let mut patch = json!({"bundle_path": "/b", "actor": "a", "temporal_profile": null,
            "operations": [{"kind": "set_lifecycle", "concept_id": "c", "lifecycle": {"status": null}}]});
        assert_eq!(
            drop_null_optionals("preview_concept_patch", &mut patch),
            ["temporal_profile"]
        );
        assert_eq!(patch["operations"][0]["lifecycle"], json!({"status": null}));
        // A tool whose every argument is required drops nothing.
        let mut w =
            json!({"bundle_path": null, "concept_id": null, "frontmatter": null, "body": null});
        assert!(drop_null_optionals("write_concept", &mut w).is_empty());
        assert!(drop_null_optionals("no_such_tool", &mut json!({"a": null})).is_empty());
        assert!(drop_null_optionals("list_concepts", &mut json!([null])).is_empty());
    }

    #[test]
    fn aut_13_optional_members_are_what_tools_list_advertises_as_not_required() {
        let of =
            |t: &str| -> Vec<&str> { optional_by_tool()[t].iter().map(String::as_str).collect() };
        assert_eq!(
            of("list_concepts"),
            [
                "as_of",
                "cursor",
                "limit",
                "stale",
                "status",
                "tag",
                "temporal_profile",
                "trust",
                "type"
            ]
        );
        assert_eq!(
            of("validate_bundle"),
            [
                "as_of",
                "check_links",
                "check_orphans",
                "limit",
                "strict",
                "target_version",
                "temporal_profile"
            ]
        );
        assert!(of("write_concept").is_empty());
        for t in crate::wire::registry::all() {
            assert!(
                !optional_by_tool()[t.name].contains("bundle_path"),
                "{}",
                t.name
            );
        }
    }
}
