//! The building blocks of the tool schemas (spec/surface.md §17): small JSON Schema
//! constructors, the file header, the input root and the common input properties, the
//! status branches of the outputs.
//!
//! Each tool module builds its own input and output schema from these parts; the wire
//! layer's generator (`wire::schema_gen`) adds the `$defs` of every tool file and builds the
//! shared files. The parts live in the tools layer because both sides use them: a tool module
//! may not import the wire layer (tests/it/layers.rs), while the wire layer may import the
//! tools.
//!
//! Pure: no I/O. Every constructor returns a fresh value; member order is the insertion order
//! (serde_json `preserve_order`) and is part of the checked-in bytes.

use crate::okf::temporal::{AUTO_PROFILE, DATE_PROFILE, INSTANT_PROFILE};
use serde_json::{json, Map, Value};

/// `$schema` of every file: JSON Schema draft 2020-12.
pub const SCHEMA_DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";
/// Prefix of every `$id` (`$id = <prefix><file name>`, spec/surface.md §17.1).
pub const ID_BASE: &str = "https://okf.dev/mcp/v0.2/";

/// The trusted example of a concept id.
pub const EXAMPLE_CONCEPT_ID: &str = "tables/orders";
/// The example `bundle_path` of the input examples.
pub const EXAMPLE_BUNDLE_PATH: &str = "/srv/okf/bundle";

/// One tool schema file as its module builds it: the root members in file order, and the
/// definitions that belong to this file alone (`success` of an output schema). The generator
/// (`wire::schema_gen`) appends `$defs`: these local definitions first, then a copy of every
/// shared definition the file reaches through a local `$ref` (spec/surface.md §17.1).
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaRoot {
    /// The root members without `$defs`.
    pub members: Map<String, Value>,
    /// The file's own definitions, by name, in `$defs` order.
    pub local_defs: Vec<(&'static str, Value)>,
}

impl SchemaRoot {
    /// A root without local definitions (every input schema).
    #[must_use]
    pub fn new(members: Map<String, Value>) -> Self {
        Self {
            members,
            local_defs: Vec::new(),
        }
    }
}

/// A local reference `{"$ref": "#/$defs/<name>"}`.
#[must_use]
pub fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/$defs/{name}") })
}

/// The document-actor grammar of spec/surface.md §13.3 (`generated.by`, `verified[].by`,
/// `generated_by`), as [`crate::okf::actor::is_document_actor`] decides it: `human:` or
/// `process:` followed by text that is not blank, or exactly one `/` with text that is not
/// blank on both sides; no control characters and no surrounding whitespace (the Unicode
/// `White_Space` set of `str::trim`, spelled out so every regex dialect reads it the same).
/// The 256-byte cap is checked at runtime (the schema's `maxLength` counts characters).
pub const DOCUMENT_ACTOR_PATTERN: &str = r"^(?:(?:human|process):[^\x00-\x1f\x7f]*[^\x00-\x1f\x7f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]|[^/\x00-\x1f\x7f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^/\x00-\x1f\x7f]*/[^/\x00-\x1f\x7f]*[^/\x00-\x1f\x7f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000])$";
/// What a document actor is, for schema descriptions and guidance (spec/surface.md §18.3
/// rule 4). No `/` after a space and no `..`, which redaction would hide (§10).
pub const DOCUMENT_ACTOR_TEXT: &str = "a document actor: human:<name> for a person, process:<name> for an automated process, or producer/version with exactly one slash (e.g. human:alice, process:nightly, agent/1.0); no surrounding whitespace, at most 256 bytes";

/// A string of at most `max` characters.
#[must_use]
pub fn string_max(max: u64) -> Value {
    json!({"type": "string", "maxLength": max})
}

/// A string of 1 to `max` characters.
#[must_use]
pub fn string_1_max(max: u64) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max})
}

/// A string or `null`.
#[must_use]
pub fn nullable_string() -> Value {
    json!({"type": ["string", "null"]})
}

/// A boolean.
#[must_use]
pub fn boolean() -> Value {
    json!({"type": "boolean"})
}

/// A non-negative integer.
#[must_use]
pub fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}

/// An array of at most `max` strings.
#[must_use]
pub fn string_array(max: u64) -> Value {
    json!({"type": "array", "maxItems": max, "items": {"type": "string"}})
}

/// A closed object with every listed member required, members in the given order.
#[must_use]
pub fn closed(props: Vec<(&str, Value)>) -> Value {
    let required: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
    closed_with(&required, props)
}

/// A closed object with the given required members.
#[must_use]
pub fn closed_with(required: &[&str], props: Vec<(&str, Value)>) -> Value {
    let mut p = Map::new();
    for (k, v) in props {
        p.insert(k.to_owned(), v);
    }
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": p,
    })
}

/// `v` with the member `key` set to `extra` (appended when new); `v` unchanged when it is not
/// an object.
#[must_use]
pub fn with(mut v: Value, key: &str, extra: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.insert(key.to_owned(), extra);
    }
    v
}

/// The effective `status` of a concept: `draft`, `stable`, `deprecated` or `null`.
#[must_use]
pub fn status_enum() -> Value {
    json!({"type": ["string", "null"], "enum": ["draft", "stable", "deprecated", null]})
}

/// The trust tier of a concept.
#[must_use]
pub fn trust_enum() -> Value {
    json!({"type": "string", "enum": ["unverified", "machine-confirmed", "human-reviewed"]})
}

/// The card members of spec/surface.md §12.1, in table order.
#[must_use]
pub fn card_props() -> Vec<(&'static str, Value)> {
    vec![
        ("id", json!({"type": "string"})),
        ("path", r("bundle_relative_path")),
        ("type", nullable_string()),
        ("title", nullable_string()),
        ("description", nullable_string()),
        ("tags", string_array(10000)),
        ("status", status_enum()),
        ("trust", trust_enum()),
        ("stale", json!({"type": ["boolean", "null"]})),
        ("stale_after", nullable_string()),
        ("status_state", r("status_state")),
    ]
}

/// The first members of every schema file: `$schema`, `$id` (from the file name), `title`,
/// `description`.
#[must_use]
pub fn file_header(file: &str, title: &str, description: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("$schema".into(), json!(SCHEMA_DRAFT));
    m.insert("$id".into(), json!(format!("{ID_BASE}{file}")));
    m.insert("title".into(), json!(title));
    m.insert("description".into(), json!(description));
    m
}

/// The profile branches of spec/surface.md §2 and spec/concept-patch.md §2.4, over the given
/// temporal members of the root: `if temporal_profile == instant-0b87c52 then …`, else
/// `if temporal_profile == date-3fcbb9f then …`, else (`auto`, `""` or absent) either grammar
/// (spec/concept-patch.md §2.4 rule 4).
pub fn profile_branches(m: &mut Map<String, Value>, as_of: bool, operations: bool) {
    let branch = |kind: &str| {
        let mut p = Map::new();
        if as_of {
            p.insert(
                "as_of".into(),
                match kind {
                    "instant" => r("offset_datetime"),
                    "date" => r("calendar_date"),
                    // Strings only (the type is the property's own), so that a
                    // non-string is reported once, as a type error.
                    _ => r("profile_auto"),
                },
            );
        }
        if operations {
            p.insert(
                "operations".into(),
                json!({"items": r(&format!("operation_temporal_{kind}"))}),
            );
        }
        json!({"properties": p, "additionalProperties": true})
    };
    let is = |id: &str| {
        json!({
            "properties": {"temporal_profile": {"const": id}},
            "required": ["temporal_profile"],
            "additionalProperties": true
        })
    };
    m.insert("if".into(), is(INSTANT_PROFILE));
    m.insert("then".into(), branch("instant"));
    m.insert(
        "else".into(),
        json!({
            "if": is(DATE_PROFILE),
            "then": branch("date"),
            "else": branch("auto")
        }),
    );
}

/// The root of `<tool>.input.schema.json` without `$defs`: the file header, then a closed
/// object of `props` with the `required` members.
#[must_use]
pub fn input_root(
    tool: &str,
    description: &str,
    required: &[&str],
    props: Vec<(&str, Value)>,
) -> Map<String, Value> {
    let file = format!("{tool}.input.schema.json");
    let mut m = file_header(&file, &format!("{tool} input"), description);
    let closed = closed_with(required, props);
    if let Value::Object(c) = closed {
        for (k, v) in c {
            m.insert(k, v);
        }
    }
    m
}

/// The root of `<tool>.output.schema.json`: the file header, `"type": "object"` and the
/// `anyOf` of `$defs/success` (the tool's `success` object) and `$defs/error_envelope`
/// (spec/surface.md §17.1). `description` names the result and its spec section.
#[must_use]
pub fn output_root(tool: &str, description: &str, success: Value) -> SchemaRoot {
    let file = format!("{tool}.output.schema.json");
    let mut m = file_header(
        &file,
        &format!("{tool} output"),
        &format!("{description} A success object satisfies $defs/success; a tool error's structuredContent satisfies $defs/error_envelope (spec/surface.md §17.1)."),
    );
    m.insert("type".into(), json!("object"));
    m.insert("anyOf".into(), json!([r("success"), r("error_envelope")]));
    SchemaRoot {
        members: m,
        local_defs: vec![("success", with_notices(success))],
    }
}

/// `success` with the `notices` member every success object carries (spec/surface.md
/// §18.1 rule 2): a required property, last in `properties` and `required`.
fn with_notices(mut success: Value) -> Value {
    if let Some(props) = success.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("notices".into(), r("notices"));
    }
    if let Some(req) = success.get_mut("required").and_then(Value::as_array_mut) {
        req.push(json!("notices"));
    }
    success
}

/// The `temporal_profile` input property (spec/surface.md §2, common input fields).
#[must_use]
pub fn temporal_profile_prop() -> Value {
    with(r("temporal_profile"), "examples", json!([AUTO_PROFILE]))
}

/// The `concept_id` input property (spec/surface.md §8).
#[must_use]
pub fn concept_id_prop() -> Value {
    with(r("concept_id"), "examples", json!([EXAMPLE_CONCEPT_ID]))
}

/// The `as_of` input property; its format comes from the profile branches.
#[must_use]
pub fn as_of_prop() -> Value {
    json!({
        "description": "Reference time for staleness: YYYY-MM-DD under date-3fcbb9f, an offset datetime under instant-0b87c52, either under auto (it must then fit the profile the bundle shows); never defaulted from the wall clock.",
        "type": "string"
    })
}

/// The concept filters of spec/surface.md §18.5 rule 1 (`stale`, `status`, `type`, `tag`,
/// `trust`), as input properties; `what` names what a filter keeps (e.g. `concepts`).
#[must_use]
pub fn filter_props(what: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "stale",
            json!({"description": format!("Only {what} whose stale is exactly this value (needs as_of)."), "type": "boolean"}),
        ),
        (
            "status",
            json!({"description": format!("Only {what} with this status."), "type": "string", "enum": ["draft", "stable", "deprecated"]}),
        ),
        (
            "type",
            with(
                string_1_max(4096),
                "description",
                json!(format!("Only {what} whose type is exactly this string.")),
            ),
        ),
        (
            "tag",
            with(
                string_1_max(4096),
                "description",
                json!(format!("Only {what} that have this tag.")),
            ),
        ),
        (
            "trust",
            with(
                trust_enum(),
                "description",
                json!(format!("Only {what} with this trust tier.")),
            ),
        ),
    ]
}

/// An output array of at most 10,000 wire diagnostics.
#[must_use]
pub fn diagnostics_array() -> Value {
    json!({"type": "array", "maxItems": 10000, "items": r("diagnostic")})
}

/// An output array of at most 10,000 distinct bundle-relative paths.
#[must_use]
pub fn paths_array() -> Value {
    json!({"type": "array", "maxItems": 10000, "uniqueItems": true, "items": r("bundle_relative_path")})
}

/// A diagnostics constraint: at least one `ERROR`.
#[must_use]
pub fn has_error() -> Value {
    json!({"contains": {"properties": {"severity": {"const": "ERROR"}}, "required": ["severity"], "additionalProperties": true}})
}

/// A diagnostics constraint: `WARN` and `INFO` only.
#[must_use]
pub fn no_error() -> Value {
    json!({"items": {"properties": {"severity": {"enum": ["WARN", "INFO"]}}, "additionalProperties": true}})
}

/// A diagnostics constraint: `INFO` only.
#[must_use]
pub fn info_only() -> Value {
    json!({"items": {"properties": {"severity": {"const": "INFO"}}, "additionalProperties": true}})
}

/// `if status == <status> then <props>`: a state invariant of a success object.
#[must_use]
pub fn status_branch(status: &str, props: Value) -> Value {
    json!({
        "if": {"properties": {"status": {"const": status}}, "required": ["status"], "additionalProperties": true},
        "then": {"properties": props, "additionalProperties": true}
    })
}
