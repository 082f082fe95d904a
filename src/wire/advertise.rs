//! The input schemas `tools/list` advertises (spec/surface.md §18.6 rule 3, amending §17.1):
//! a small, portable projection of each checked-in `schemas/<tool>.input.schema.json`.
//!
//! The checked-in files stay the contract the server enforces (input validation and its
//! guidance, output enforcement). What a client sees is derived from them by
//! [`input_schema`], a pure function, and is checked in as `schemas/advertised/tools.json`
//! (the whole `tools` array of `tools/list`), so a review sees exactly what hosts see.
//!
//! The projection only ever **loosens**: every argument object the checked-in schema accepts,
//! the advertised one accepts too (tests/it/schema.rs checks this on every example and on the
//! suite's calls). A request the projection admits but the server refuses gets the server's
//! full guidance (`schema_validation` with one diagnostic per field).
//!
//! Rules, applied to every schema node:
//! 1. annotations that only the full contract needs are dropped: `$schema`, `$id`, `title`,
//!    `examples`, `$comment`, the root's `description` (the tool description says it), and
//!    every nested `description` longer than [`SHORT_DESCRIPTION`] bytes once its spec
//!    references are removed;
//! 2. cross-field conditionals are dropped (the server still enforces them): `if`/`then`/
//!    `else` outside an `allOf`, `not`, `dependentRequired`, `dependentSchemas`, and every
//!    `allOf` branch but those of rule 9;
//! 3. size limits are dropped: `minLength`, `maxLength`, `maxItems`, `maxProperties` (the server still
//!    enforces them, as `resource_limit` or `schema_validation`), and so is a `pattern` next
//!    to a `format` (`date`, `date-time` name the grammar; the exact pattern, stricter on
//!    offsets, stays in the checked-in file);
//! 4. portability: a `type` array becomes an `anyOf` of single types, `oneOf` becomes `anyOf`
//!    (a looser branch set could match twice), a boolean subschema becomes `{}` or
//!    `{"not": {}}`;
//! 5. the document-actor pattern becomes a readable superset of the grammar
//!    ([`ADVERTISED_ACTOR_PATTERN`]);
//! 6. members an agent copies from a preview unchanged ([`ECHOED`]) are advertised as a plain
//!    object with a description saying so;
//! 7. each top-level property and each definition keeps the first sentence of its own
//!    description, without spec references; a top-level property keeps its `examples` when
//!    they serialise to at most [`SHORT_EXAMPLES`] bytes, except a digest's (an agent must
//!    copy a preview's digest, never a schema's);
//! 9. of an `allOf`, the `if`/`then` branches that say which members a discriminator value
//!    requires are kept, reduced to that: the `if`'s `properties`/`const`/`enum`/`required`
//!    and the `then`'s `required` (e.g. which payload each operation `kind` needs).
//! 8. definitions no longer referenced are removed.

use crate::wire::schema_gen::local_refs;
use serde_json::{Map, Value};

/// Keywords dropped from every node (rules 1–3).
const DROPPED: [&str; 14] = [
    "minLength",
    "$schema",
    "$id",
    "$comment",
    "title",
    "examples",
    "if",
    "then",
    "else",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "maxLength",
    "maxItems",
];

/// Longest nested `description` the projection keeps (rule 1), in bytes.
pub const SHORT_DESCRIPTION: usize = 100;

/// Longest `examples` of a top-level property the projection keeps (rule 7), in bytes.
pub const SHORT_EXAMPLES: usize = 120;

/// Members an agent copies from the paired preview unchanged (rule 6), with the preview's
/// member they come from.
pub const ECHOED: [(&str, &str); 2] = [("expected_source", "source"), ("proof", "proof")];

/// The advertised document-actor pattern (rule 5): `human:<name>`, `process:<name>` or
/// `producer/version`; the server's exact grammar is `schemas/common.schema.json`
/// `$defs/document_actor` (spec/surface.md §13.3).
/// It uses no `.`: in ECMA-262 regexes (what JSON Schema clients run) `.` does not match
/// U+2028/U+2029, which the exact grammar allows in a name.
pub const ADVERTISED_ACTOR_PATTERN: &str = r"^((human|process):[^\x00-\x1f\x7f]+|[^/]+/[^/]+)$";

/// The advertised input schema of a tool, from its checked-in input schema `full` (rules 1–8).
#[must_use]
pub fn input_schema(full: &Value) -> Map<String, Value> {
    let mut out = match project(full) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    out.remove("description");
    if let (Some(Value::Object(props)), Some(Value::Object(orig))) =
        (out.get_mut("properties"), full.get("properties"))
    {
        for (name, node) in props.iter_mut() {
            if let Some((_, from)) = ECHOED.iter().find(|(n, _)| *n == name.as_str()) {
                *node = serde_json::json!({
                    "type": "object",
                    "description": format!("The preview's {from}, unchanged; never build or edit it.")
                });
                continue;
            }
        }
        first_sentences(props, orig);
    }
    if let (Some(Value::Object(defs)), Some(Value::Object(orig))) =
        (out.get_mut("$defs"), full.get("$defs"))
    {
        first_sentences(defs, orig);
    }
    prune_defs(&mut out);
    out
}

/// Rule 7: each member of `projected` gets the first sentence of the description its
/// counterpart in `orig` has (echoed members keep theirs).
fn first_sentences(projected: &mut Map<String, Value>, orig: &Map<String, Value>) {
    for (name, node) in projected.iter_mut() {
        if ECHOED.iter().any(|(n, _)| *n == name.as_str()) {
            continue;
        }
        let Value::Object(m) = node else { continue };
        let text = orig.get(name).and_then(|o| o.get("description"));
        if let Some(Value::String(t)) = text {
            m.insert("description".into(), Value::String(first_sentence(t)));
        }
        if let Some(ex) = orig.get(name).and_then(|o| o.get("examples")) {
            let digest = ex.to_string().contains("\"sha256:");
            if !digest && ex.to_string().len() <= SHORT_EXAMPLES {
                m.insert("examples".into(), ex.clone());
            }
        }
    }
}

/// The first sentence of a description, without `(spec/…)` references (rule 7).
fn first_sentence(text: &str) -> String {
    let mut end = text.len();
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '.' | ';'
                if depth == 0
                    && text[i + 1..].starts_with(' ')
                    && !text[..i].ends_with("e.g")
                    && !text[..i].ends_with("i.e") =>
            {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut s = without_spec_references(text[..end].trim_end_matches(['.', ';']));
    s.push('.');
    s
}

/// `text` without its ` (spec/…)` references.
fn without_spec_references(text: &str) -> String {
    let mut s = text.to_owned();
    while let Some(open) = s.find(" (spec/") {
        match s[open..].find(')') {
            Some(close) => s.replace_range(open..open + close + 1, ""),
            None => s.truncate(open),
        }
    }
    s
}

/// Rules 1–5 on one node and its subschemas.
fn project(node: &Value) -> Value {
    match node {
        Value::Bool(true) => Value::Object(Map::new()),
        Value::Bool(false) => serde_json::json!({"not": {}}),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                if DROPPED.contains(&k.as_str()) || k == "maxProperties" {
                    continue;
                }
                match k.as_str() {
                    "description" => {
                        if let Some(text) = v.as_str().map(without_spec_references) {
                            if text.len() <= SHORT_DESCRIPTION {
                                out.insert(k.clone(), Value::String(text));
                            }
                        }
                    }
                    "type" => match v {
                        Value::Array(types) => {
                            let branches = types
                                .iter()
                                .map(|t| serde_json::json!({ "type": t }))
                                .collect();
                            out.insert("anyOf".into(), Value::Array(branches));
                        }
                        other => {
                            out.insert(k.clone(), other.clone());
                        }
                    },
                    "properties" | "$defs" | "patternProperties" => {
                        let mapped = match v {
                            Value::Object(p) => {
                                p.iter().map(|(n, s)| (n.clone(), project(s))).collect()
                            }
                            _ => Map::new(),
                        };
                        out.insert(k.clone(), Value::Object(mapped));
                    }
                    "allOf" => {
                        let kept: Vec<Value> = match v {
                            Value::Array(a) => a.iter().filter_map(requirement).collect(),
                            _ => Vec::new(),
                        };
                        if !kept.is_empty() {
                            out.insert(k.clone(), Value::Array(kept));
                        }
                    }
                    "oneOf" | "anyOf" => {
                        let branches = match v {
                            Value::Array(a) => a.iter().map(project).collect(),
                            _ => Vec::new(),
                        };
                        out.insert("anyOf".into(), Value::Array(branches));
                    }
                    "items" | "additionalItems" | "contains" | "propertyNames" => {
                        out.insert(k.clone(), project(v));
                    }
                    "additionalProperties" => {
                        // `false` closes an object: kept as the boolean every client reads.
                        let kept = if v.is_boolean() {
                            v.clone()
                        } else {
                            project(v)
                        };
                        out.insert(k.clone(), kept);
                    }
                    "pattern" if m.contains_key("format") => {}
                    "pattern" => {
                        let p = v.as_str().unwrap_or_default();
                        let actor = crate::tools::schema_parts::DOCUMENT_ACTOR_PATTERN;
                        let kept = if p == actor {
                            Value::String(ADVERTISED_ACTOR_PATTERN.to_owned())
                        } else if p.strip_prefix("^$|") == Some(actor) {
                            Value::String(format!("^$|{ADVERTISED_ACTOR_PATTERN}"))
                        } else {
                            v.clone()
                        };
                        out.insert(k.clone(), kept);
                    }
                    _ => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Rule 9: an `allOf` branch `{"if": <test>, "then": {"required": [...]}}` reduced to its
/// test and the members it requires; `None` for any other branch.
fn requirement(branch: &Value) -> Option<Value> {
    let required = branch.get("then")?.get("required")?.as_array()?;
    if required.is_empty() {
        return None;
    }
    let test = test_of(branch.get("if")?)?;
    Some(serde_json::json!({"if": test, "then": {"required": required}}))
}

/// The part of an `if` schema that tests values: `properties` (recursively), `const`, `enum`
/// and `required`; `None` when nothing of that is left.
fn test_of(node: &Value) -> Option<Value> {
    let m = node.as_object()?;
    let mut out = Map::new();
    for (k, v) in m {
        match k.as_str() {
            "const" | "enum" | "required" => {
                out.insert(k.clone(), v.clone());
            }
            "properties" => {
                let props: Map<String, Value> = v
                    .as_object()?
                    .iter()
                    .filter_map(|(n, s)| Some((n.clone(), test_of(s)?)))
                    .collect();
                if !props.is_empty() {
                    out.insert(k.clone(), Value::Object(props));
                }
            }
            _ => {}
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Rule 8: keeps the definitions reachable from the root's own members.
fn prune_defs(m: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = m.remove("$defs") else {
        return;
    };
    let mut wanted = std::collections::BTreeSet::new();
    local_refs(&Value::Object(m.clone()), &mut wanted);
    loop {
        let mut next = wanted.clone();
        for n in &wanted {
            if let Some(d) = defs.get(n) {
                local_refs(d, &mut next);
            }
        }
        if next == wanted {
            break;
        }
        wanted = next;
    }
    let kept: Map<String, Value> = defs
        .into_iter()
        .filter(|(n, _)| wanted.contains(n))
        .collect();
    if !kept.is_empty() {
        m.insert("$defs".into(), Value::Object(kept));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn type_arrays_booleans_and_conditionals_become_portable_and_looser() {
        let full = json!({
            "$schema": "x", "type": "object", "additionalProperties": false,
            "properties": {
                "a": {"type": ["string", "null"], "maxLength": 4, "description": "First. Second."},
                "d": {"type": "object", "properties": {
                    "e": {"type": "string", "description": "Short (spec/x.md §1)."},
                    "f": {"type": "string", "description": "Long ".repeat(30)}
                }},
                "b": false,
                "c": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "if": {"required": ["a"]}, "then": {"properties": {"c": false}},
            "allOf": [
                {"if": {"properties": {"k": {"const": "x"}}, "required": ["k"], "additionalProperties": true},
                 "then": {"required": ["a"], "properties": {"b": false}}},
                {"if": {"required": ["a"]}, "then": {"properties": {"c": false}}},
                {"not": {"required": ["b"]}}
            ]
        });
        let got = Value::Object(input_schema(&full));
        assert_eq!(
            got,
            json!({
                "type": "object", "additionalProperties": false,
                "properties": {
                    "a": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "First."},
                    "b": {"not": {}},
                    "c": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                    "d": {"type": "object", "properties": {
                        "e": {"type": "string", "description": "Short."},
                        "f": {"type": "string"}
                    }}
                },
                "allOf": [
                    {"if": {"properties": {"k": {"const": "x"}}, "required": ["k"]},
                     "then": {"required": ["a"]}}
                ]
            })
        );
    }

    #[test]
    fn the_actor_pattern_is_a_readable_superset_without_a_dot() {
        // ECMA-262 `.` skips U+2028/U+2029, which the exact grammar allows in a name.
        assert!(!ADVERTISED_ACTOR_PATTERN.contains('.'));
        let exact = regex_lite(crate::tools::schema_parts::DOCUMENT_ACTOR_PATTERN);
        let adv = regex_lite(ADVERTISED_ACTOR_PATTERN);
        for s in [
            "human:alice",
            "process:nightly",
            "agent/1.0",
            "human:a\u{2028}b",
            "x/y z",
        ] {
            if exact.is_valid(&json!(s)) {
                assert!(adv.is_valid(&json!(s)), "{s}");
            }
        }
        assert!(!adv.is_valid(&json!("alice")));
    }

    fn regex_lite(p: &str) -> jsonschema::Validator {
        jsonschema::validator_for(&json!({"type": "string", "pattern": p})).expect("pattern")
    }

    #[test]
    fn first_sentence_drops_spec_references() {
        assert_eq!(
            first_sentence("Absolute path of the root (spec/surface.md §7); see also. More."),
            "Absolute path of the root."
        );
        assert_eq!(first_sentence("No stop"), "No stop.");
        assert_eq!(
            first_sentence("A path, e.g. a/b. More."),
            "A path, e.g. a/b."
        );
        assert_eq!(
            first_sentence("Profile: auto (the default; or date). Then."),
            "Profile: auto (the default; or date)."
        );
    }

    #[test]
    fn unreferenced_definitions_are_removed() {
        let full = json!({
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}, "c": {"type": "integer"}}
        });
        let got = input_schema(&full);
        let defs = got["$defs"].as_object().expect("defs");
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["a", "b"]);
    }
}
