//! The schemas `tools/list` advertises (spec/surface.md §18.6 rules 3 and 3a, amending
//! §17.1): a small, portable projection of each checked-in `schemas/<tool>.input.schema.json`
//! ([`input_schema`]) and a loosened form of each checked-in
//! `schemas/<tool>.output.schema.json` ([`output_schema`]).
//!
//! The checked-in files stay the contract the server enforces (input validation and its
//! guidance, output enforcement on every result). What a client sees is derived from them by
//! these pure functions and is checked in under `schemas/advertised/`: one
//! `<tool>.input.schema.json` and one `<tool>.output.schema.json` per tool ([`files`]) and
//! `tools.json` (the whole `tools` array of `tools/list`), so a review sees exactly what hosts
//! see.
//!
//! Both derivations only ever **loosen**: every argument object the checked-in input schema
//! accepts, the advertised one accepts too, and every result the checked-in output schema
//! accepts (success objects and error envelopes), the advertised output schema accepts too
//! (tests/it/schema.rs checks both on every example and on every call and result of the golden
//! transcripts). A request the projection admits but the server refuses gets the server's full
//! guidance (`schema_validation` with one diagnostic per field).
//!
//! # Input projection
//!
//! Rules, applied to every schema node:
//! 1. annotations that only the full contract needs are dropped: `$schema`, `$id`, `title`,
//!    `examples`, `$comment`, the root's `description` (the tool description says it), and
//!    every nested `description` longer than [`SHORT_DESCRIPTION`] bytes once its spec
//!    references are removed;
//! 2. cross-field conditionals are dropped (the server still enforces them): `if`/`then`/
//!    `else` outside an `allOf`, `not`, `dependentRequired`, `dependentSchemas`, and every
//!    `allOf` branch but those of rule 9; so are keywords that constrain nothing:
//!    `additionalProperties: true` (the default) and an empty `required`; and nested objects
//!    are open: `additionalProperties: false` stays on the root only (the server still
//!    refuses an unknown nested member, with a `schema_validation` diagnostic naming it);
//! 3. size limits are dropped: `minLength`, `maxLength`, `maxItems`, `maxProperties` (the server still
//!    enforces them, as `resource_limit` or `schema_validation`), and so is a `pattern` next
//!    to a `format` (`date`, `date-time` name the grammar; the exact pattern, stricter on
//!    offsets, stays in the checked-in file);
//! 4. portability: a `type` array becomes an `anyOf` of single types, `oneOf` becomes `anyOf`
//!    (a looser branch set could match twice), a boolean subschema becomes `{}` or
//!    `{"not": {}}`;
//! 5. the document-actor pattern becomes a readable superset of the grammar
//!    ([`ADVERTISED_ACTOR_PATTERN`]);
//! 6. members an agent copies from a preview unchanged are advertised as their type with a
//!    description saying so: the preview outputs of [`ECHOED`] (a plain object), and, in an
//!    apply tool's input (one that takes a plan digest, [`PLAN_DIGESTS`]), every top-level
//!    array member: the apply takes the preview call's own arguments again, so its
//!    `operations`, `mappings`, `citation_mappings`, `computations` and `generated_at` are
//!    `{"type": "array", "items": {"type": t}}` (`t` the checked-in items' type, when they have
//!    one) with "The <member> the preview was called with, unchanged." (their full shape is
//!    advertised once, by the preview tool);
//! 7. each top-level property and each definition keeps the first sentence of its own
//!    description, without spec references; a top-level property keeps its `examples` when
//!    they serialise to at most [`SHORT_EXAMPLES`] bytes, except a digest's (an agent must
//!    copy a preview's digest, never a schema's), an `enum`'s (the values are listed) and one
//!    whose description already gives an example (`e.g.`);
//! 8. every `$ref` is replaced by the definition it names and `$defs` is dropped (rule 3a:
//!    LangChain-based clients turn a `$ref`'d string into a nested model and cannot call);
//!    the node's own keywords stay beside the definition's, its own `description` and
//!    `examples` win, and a keyword both define puts the definition under an `allOf`;
//! 9. of an `allOf`, only the `if`/`then` branches that say which members a discriminator value
//!    requires are kept, reduced to that: the `if`'s `properties`/`const`/`enum`/`required`
//!    and the `then`'s `required`. Where the test is one `const` of a member the node itself
//!    defines (e.g. which payload each operation `kind` needs), the branches become one
//!    sentence at the end of that member's `description` (any length, after rules 1, 7 and 8):
//!    "Required members by kind: set_generated: concept_id, generated; …; set_bundle_version:
//!    version." The other branches stay `if`/`then` (e.g. a test of a nested member).
//!
//! # Output loosening (rule 3a)
//!
//! The checked-in output root is `{"type":"object","anyOf":[{"$ref":"#/$defs/success"},
//! {"$ref":"#/$defs/error_envelope"}]}` (§17.1). The advertised output schema is
//! `{"type":"object","properties":{…}}` with one member per top-level member of either branch,
//! in the order success then error, each giving only the member's JSON type: `{"type": t}`, or
//! `{"anyOf":[{"type": t1},{"type": t2},…]}` when it may take several (`null` included). No
//! `required`, no nested schemas, no `additionalProperties`, no boolean subschema, no `type`
//! array. A member whose type the checked-in schema does not pin down gets `{}`.

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

/// The members by which an input schema takes a preview's plan digest: a schema with one of
/// them at the top level is an apply tool's, whose top-level arrays repeat the preview call's
/// arguments (rule 6).
pub const PLAN_DIGESTS: [&str; 2] = ["expected_plan_digest", "plan_digest"];

/// The advertised document-actor pattern (rule 5): `human:<name>`, `process:<name>` or
/// `producer/version`; the server's exact grammar is `schemas/common.schema.json`
/// `$defs/document_actor` (spec/surface.md §13.3).
/// It uses no `.`: in ECMA-262 regexes (what JSON Schema clients run) `.` does not match
/// U+2028/U+2029, which the exact grammar allows in a name.
pub const ADVERTISED_ACTOR_PATTERN: &str = r"^((human|process):[^\x00-\x1f\x7f]+|[^/]+/[^/]+)$";

/// The advertised input schema of a tool, from its checked-in input schema `full` (rules 1–9).
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
        let apply = PLAN_DIGESTS.iter().any(|d| orig.contains_key(*d));
        let mut copied = Vec::new();
        for (name, node) in props.iter_mut() {
            let echo = match orig.get(name) {
                Some(o) => copied_member(full, name, o, apply),
                None => None,
            };
            if let Some(e) = echo {
                *node = e;
                copied.push(name.clone());
            }
        }
        first_sentences(full, props, orig, &copied);
    }
    if let (Some(Value::Object(defs)), Some(Value::Object(orig))) =
        (out.get_mut("$defs"), full.get("$defs"))
    {
        first_sentences(full, defs, orig, &[]);
    }
    inline_refs(&mut out);
    for v in out.values_mut() {
        open_nested(v);
    }
    let mut root = Value::Object(out);
    requirements_in_descriptions(&mut root);
    match root {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Rule 2: drops `additionalProperties: false` from `node` and every node below it.
fn open_nested(node: &mut Value) {
    match node {
        Value::Object(m) => {
            if m.get("additionalProperties") == Some(&Value::Bool(false)) {
                m.shift_remove("additionalProperties");
            }
            m.values_mut().for_each(open_nested);
        }
        Value::Array(a) => a.iter_mut().for_each(open_nested),
        _ => {}
    }
}

/// Rule 6: what the top-level member `name` (checked-in schema `orig`) is advertised as when
/// an agent copies it from a preview unchanged; `None` for every other member. `apply` says
/// whether the schema is an apply tool's ([`PLAN_DIGESTS`]).
fn copied_member(full: &Value, name: &str, orig: &Value, apply: bool) -> Option<Value> {
    if let Some((_, from)) = ECHOED.iter().find(|(n, _)| *n == name) {
        return Some(serde_json::json!({
            "type": "object",
            "description": format!("The preview's {from}, unchanged; never build or edit it.")
        }));
    }
    let node = resolve(full, orig, 0);
    if !apply || node.get("type").and_then(Value::as_str) != Some("array") {
        return None;
    }
    let mut m = Map::new();
    m.insert("type".into(), Value::String("array".into()));
    let items = node.get("items").map(|i| resolve(full, i, 0));
    if let Some(t @ Value::String(_)) = items.and_then(|i| i.get("type")) {
        m.insert("items".into(), serde_json::json!({ "type": t }));
    }
    m.insert(
        "description".into(),
        Value::String(format!(
            "The {name} the preview was called with, unchanged."
        )),
    );
    Some(Value::Object(m))
}

/// Rule 7: each member of `projected` gets the first sentence of the description its
/// counterpart in `orig` has, and its short `examples` unless they are redundant (members
/// in `copied`, rule 6, keep what they have). `full` is the checked-in schema, for the
/// definitions `orig` references.
fn first_sentences(
    full: &Value,
    projected: &mut Map<String, Value>,
    orig: &Map<String, Value>,
    copied: &[String],
) {
    for (name, node) in projected.iter_mut() {
        if copied.contains(name) {
            continue;
        }
        let Value::Object(m) = node else { continue };
        let Some(o) = orig.get(name) else { continue };
        if let Some(Value::String(t)) = o.get("description") {
            m.insert("description".into(), Value::String(first_sentence(t)));
        }
        if let Some(ex) = o.get("examples") {
            let digest = ex.to_string().contains("\"sha256:");
            if !digest && ex.to_string().len() <= SHORT_EXAMPLES && !redundant_examples(full, o) {
                m.insert("examples".into(), ex.clone());
            }
        }
    }
}

/// Whether the `examples` of the property `node` (of the checked-in schema `full`) say
/// nothing its schema does not (rule 7): it, or the definition it references, has an `enum`,
/// or the first sentence of its description gives an example (`e.g.`).
fn redundant_examples(full: &Value, node: &Value) -> bool {
    let def = resolve(full, node, 0);
    let listed = node.get("enum").is_some() || def.get("enum").is_some();
    let text = node
        .get("description")
        .or_else(|| def.get("description"))
        .and_then(Value::as_str)
        .map(first_sentence)
        .unwrap_or_default();
    listed || text.contains("e.g.")
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
                    // Rule 2: constrain nothing.
                    "additionalProperties" if v == &Value::Bool(true) => {}
                    "required" if v.as_array().is_some_and(Vec::is_empty) => {}
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

/// Rule 9, last step: in `node` and every subschema, the `allOf` branches
/// `{"if": {"properties": {P: {"const": V}}, "required": [P]}, "then": {"required": R}}` of
/// a node that defines the member `P` become one sentence at the end of `P`'s description,
/// "Required members by P: V: R; …." (in branch order); the `allOf` keeps its other branches
/// and is dropped when none is left.
fn requirements_in_descriptions(node: &mut Value) {
    match node {
        Value::Object(m) => {
            for v in m.values_mut() {
                requirements_in_descriptions(v);
            }
            let Some(Value::Array(branches)) = m.get("allOf") else {
                return;
            };
            let mut kept = Vec::new();
            let mut sentences: Vec<(String, Vec<String>)> = Vec::new();
            for b in branches {
                let defined = |p: &str| {
                    m.get("properties")
                        .and_then(|ps| ps.get(p))
                        .is_some_and(Value::is_object)
                };
                match discriminator(b) {
                    Some((p, value, required)) if defined(&p) => {
                        let part = format!("{value}: {}", required.join(", "));
                        match sentences.iter_mut().find(|(n, _)| *n == p) {
                            Some((_, parts)) => parts.push(part),
                            None => sentences.push((p, vec![part])),
                        }
                    }
                    _ => kept.push(b.clone()),
                }
            }
            if kept.is_empty() {
                m.shift_remove("allOf");
            } else {
                m.insert("allOf".into(), Value::Array(kept));
            }
            for (p, parts) in sentences {
                let sentence = format!("Required members by {p}: {}.", parts.join("; "));
                let Some(Value::Object(prop)) =
                    m.get_mut("properties").and_then(|ps| ps.get_mut(&p))
                else {
                    continue;
                };
                let text = match prop.get("description").and_then(Value::as_str) {
                    Some(d) if !d.is_empty() => format!("{d} {sentence}"),
                    _ => sentence,
                };
                prop.insert("description".into(), Value::String(text));
            }
        }
        Value::Array(a) => a.iter_mut().for_each(requirements_in_descriptions),
        _ => {}
    }
}

/// The member, its `const` string value and the members it requires, when `branch` is
/// exactly `{"if": {"properties": {P: {"const": V}}, "required": [P]}, "then": {"required":
/// R}}` (the `required` of the `if` may be absent) with a non-empty `R` of strings.
fn discriminator(branch: &Value) -> Option<(String, String, Vec<String>)> {
    let b = branch.as_object()?;
    let test = b.get("if")?.as_object()?;
    let then = b.get("then")?.as_object()?;
    if b.len() != 2 || then.len() != 1 {
        return None;
    }
    let props = test.get("properties")?.as_object()?;
    let (p, cond) = props.iter().next()?;
    let value = cond.as_object()?;
    if props.len() != 1 || value.len() != 1 {
        return None;
    }
    let v = value.get("const")?.as_str()?;
    let tested = test.len() == 1
        || (test.len() == 2 && test.get("required") == Some(&serde_json::json!([p])));
    let required: Vec<String> = then
        .get("required")?
        .as_array()?
        .iter()
        .map(|r| r.as_str().map(str::to_owned))
        .collect::<Option<_>>()?;
    (tested && !required.is_empty()).then(|| (p.clone(), v.to_owned(), required))
}

/// Deepest chain of `$ref`s rule 8 follows; a deeper (or cyclic) reference becomes `{}`,
/// which loosens. The checked-in schemas have no cycle (tests/it/schema.rs checks that no
/// `$ref` is advertised).
const MAX_REF_DEPTH: usize = 16;

/// Annotations a node keeps over the definition it references (rule 8).
const OWN_ANNOTATIONS: [&str; 2] = ["description", "examples"];

/// Rule 8: replaces every local `$ref` in `m` by the definition it names and drops `$defs`.
fn inline_refs(m: &mut Map<String, Value>) {
    let defs = match m.remove("$defs") {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    let root = inline(&Value::Object(std::mem::take(m)), &defs, 0);
    if let Value::Object(r) = root {
        *m = r;
    }
}

/// `node` with every `$ref` replaced (rule 8), `depth` references deep.
fn inline(node: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match node {
        Value::Object(m) => {
            let own: Map<String, Value> = m
                .iter()
                .filter(|(k, _)| k.as_str() != "$ref")
                .map(|(k, v)| (k.clone(), inline(v, defs, depth)))
                .collect();
            let Some(target) = m.get("$ref") else {
                return Value::Object(own);
            };
            let name = target.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
            let def = match name.and_then(|n| defs.get(n)) {
                Some(d) if depth < MAX_REF_DEPTH => inline(d, defs, depth + 1),
                _ => Value::Object(Map::new()),
            };
            merge(def, own)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| inline(x, defs, depth)).collect()),
        other => other.clone(),
    }
}

/// A referenced definition `def` with the referencing node's `own` keywords (rule 8).
fn merge(def: Value, own: Map<String, Value>) -> Value {
    let Value::Object(mut d) = def else {
        return Value::Object(own);
    };
    let clash = own
        .keys()
        .any(|k| d.contains_key(k) && !OWN_ANNOTATIONS.contains(&k.as_str()));
    if clash {
        let mut out = own;
        out.insert("allOf".into(), Value::Array(vec![Value::Object(d)]));
        return Value::Object(out);
    }
    for (k, v) in own {
        d.insert(k, v);
    }
    Value::Object(d)
}

/// The advertised output schema of a tool (rule 3a), from its checked-in output schema
/// `full`: every top-level member of the `anyOf` branches of the root (the success object and
/// the error envelope, §17.1) with only its JSON type. See the module docs.
#[must_use]
pub fn output_schema(full: &Value) -> Map<String, Value> {
    let mut members: Vec<(String, Option<Vec<String>>)> = Vec::new();
    let branches = full.get("anyOf").and_then(Value::as_array);
    for branch in branches.into_iter().flatten() {
        for (name, nodes) in top_level_members(full, resolve(full, branch, 0), 0) {
            let types = nodes
                .iter()
                .map(|n| json_types(full, n, 0))
                .reduce(union)
                .flatten();
            match members.iter_mut().find(|(n, _)| *n == name) {
                Some((_, known)) => *known = union(known.take(), types),
                None => members.push((name, types)),
            }
        }
    }
    let properties: Map<String, Value> = members
        .into_iter()
        .map(|(name, types)| (name, type_schema(types)))
        .collect();
    let mut out = Map::new();
    out.insert("type".into(), Value::String("object".into()));
    out.insert("properties".into(), Value::Object(properties));
    out
}

/// The members `node` defines at its top level, each with the schema nodes that give its
/// type: its own `properties` entry when it has one (every branch of the node constrains
/// values that entry already accepts), otherwise every entry of its `allOf`/`anyOf`/`oneOf`
/// branches and `if`/`then`/`else` nodes (read so that no member is missed).
fn top_level_members<'a>(
    root: &'a Value,
    node: &'a Value,
    depth: usize,
) -> Vec<(String, Vec<&'a Value>)> {
    let mut out: Vec<(String, Vec<&'a Value>)> = Vec::new();
    if depth > MAX_REF_DEPTH {
        return out;
    }
    if let Some(Value::Object(p)) = node.get("properties") {
        out.extend(p.iter().map(|(k, v)| (k.clone(), vec![v])));
    }
    let own = out.len();
    let mut pending: Vec<&Value> = Vec::new();
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = node.get(k) {
            pending.extend(a.iter());
        }
    }
    for k in ["if", "then", "else"] {
        pending.extend(node.get(k));
    }
    for branch in pending {
        let branch = resolve(root, branch, 0);
        for (name, nodes) in top_level_members(root, branch, depth + 1) {
            if out[..own].iter().any(|(n, _)| *n == name) {
                continue;
            }
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, known)) => known.extend(nodes),
                None => out.push((name, nodes)),
            }
        }
    }
    out
}

/// Follows local `#/$defs/…` references from `node` in `root`.
fn resolve<'a>(root: &'a Value, node: &'a Value, depth: usize) -> &'a Value {
    let target = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|n| root.get("$defs")?.get(n));
    match target {
        Some(t) if depth < MAX_REF_DEPTH => resolve(root, t, depth + 1),
        _ => node,
    }
}

/// The JSON types a value accepted by `node` may have, in first-seen order; `None` when
/// `node` does not pin them down (any type).
fn json_types(root: &Value, node: &Value, depth: usize) -> Option<Vec<String>> {
    if depth > MAX_REF_DEPTH {
        return None;
    }
    let node = resolve(root, node, 0);
    let m = match node {
        Value::Bool(false) => return Some(Vec::new()),
        Value::Object(m) => m,
        _ => return None,
    };
    let mut known: Option<Vec<String>> = None;
    let mut narrow = |types: Vec<String>| {
        known = Some(match known.take() {
            None => types,
            Some(k) => intersect(k, &types),
        });
    };
    match m.get("type") {
        Some(Value::String(t)) => narrow(vec![t.clone()]),
        Some(Value::Array(a)) => narrow(
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        _ => {}
    }
    if let Some(c) = m.get("const") {
        narrow(vec![value_type(c).to_owned()]);
    }
    if let Some(Value::Array(values)) = m.get("enum") {
        let mut types = Vec::new();
        for v in values {
            push_new(&mut types, value_type(v));
        }
        narrow(types);
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = m.get(k) {
            let mut all = Some(Vec::new());
            for b in branches {
                all = match (all, json_types(root, b, depth + 1)) {
                    (Some(acc), Some(t)) => union(Some(acc), Some(t)),
                    _ => None,
                };
            }
            if let Some(t) = all {
                narrow(t);
            }
        }
    }
    if let Some(Value::Array(branches)) = m.get("allOf") {
        for b in branches {
            if let Some(t) = json_types(root, b, depth + 1) {
                narrow(t);
            }
        }
    }
    known
}

/// The types in both `a` and `b`, in `a`'s order; `integer` is a `number`, so `number`
/// against `integer` keeps `integer`.
fn intersect(a: Vec<String>, b: &[String]) -> Vec<String> {
    let has = |set: &[String], t: &str| set.iter().any(|x| x == t);
    let mut out = Vec::new();
    for t in a {
        if has(b, &t) {
            push_new(&mut out, &t);
        } else if (t == "number" && has(b, "integer")) || (t == "integer" && has(b, "number")) {
            push_new(&mut out, "integer");
        }
    }
    out
}

/// The JSON Schema type name of `v` (`integer` for a number without a fraction).
fn value_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Appends `t` to `types` unless it is there.
fn push_new(types: &mut Vec<String>, t: &str) {
    if !types.iter().any(|x| x == t) {
        types.push(t.to_owned());
    }
}

/// The types of either side (`None`, any type, absorbs).
fn union(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    let (mut a, b) = (a?, b?);
    for t in &b {
        push_new(&mut a, t);
    }
    Some(a)
}

/// `{"type": t}`, an `anyOf` of single types, or `{}` (any type).
fn type_schema(types: Option<Vec<String>>) -> Value {
    let single = |t: &String| serde_json::json!({ "type": t });
    match types.as_deref() {
        Some([t]) => single(t),
        Some(ts) if !ts.is_empty() => {
            serde_json::json!({ "anyOf": ts.iter().map(single).collect::<Vec<_>>() })
        }
        _ => Value::Object(Map::new()),
    }
}

/// Every file of `schemas/advertised/` but `tools.json` (which is `tools/list` itself):
/// `(file name, value)`, per registered tool its `<tool>.input.schema.json` ([`input_schema`])
/// and `<tool>.output.schema.json` ([`output_schema`]), sorted by file name. Built from the
/// checked-in schemas each tool module includes.
#[must_use]
pub fn files() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for t in crate::wire::registry::all() {
        let input = Value::Object(crate::wire::schema::advertised(t.input_schema));
        let output = Value::Object(crate::wire::schema::advertised(t.output_schema));
        out.push((
            format!("{}.input.schema.json", t.name),
            Value::Object(input_schema(&input)),
        ));
        out.push((
            format!("{}.output.schema.json", t.name),
            Value::Object(output_schema(&output)),
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
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
    fn requirements_of_a_discriminator_become_a_sentence_in_its_description() {
        let branch = |v: &str, req: Value| {
            json!({"if": {"properties": {"kind": {"const": v}}, "required": ["kind"]},
                   "then": {"required": req}})
        };
        let full = json!({
            "type": "object", "additionalProperties": false,
            "properties": {
                "ops": {"type": "array", "items": {"$ref": "#/$defs/op"}},
                "mode": {"enum": ["a", "b"], "description": "How. More."}
            },
            "allOf": [
                {"if": {"properties": {"mode": {"const": "a"}}}, "then": {"required": ["ops"]}},
                {"if": {"properties": {"ops": {"properties": {"x": {"const": 1}}}}},
                 "then": {"required": ["mode"]}}
            ],
            "$defs": {"op": {
                "type": "object", "additionalProperties": false, "required": ["kind"],
                "properties": {
                    "kind": {"type": "string", "enum": ["x", "y", "z"]},
                    "p": {"type": "string"}, "q": {"type": "integer"}
                },
                "allOf": [branch("x", json!(["p"])), branch("y", json!(["p", "q"])),
                          branch("z", json!([]))]
            }}
        });
        let got = Value::Object(input_schema(&full));
        let op = &got["properties"]["ops"]["items"];
        assert_eq!(
            op["properties"]["kind"]["description"],
            "Required members by kind: x: p; y: p, q."
        );
        // Every branch became words (an empty requirement says nothing): no allOf is left.
        assert!(op.get("allOf").is_none(), "{op}");
        // A member with a description keeps its first sentence, the requirements after it.
        assert_eq!(
            got["properties"]["mode"]["description"],
            "How. Required members by mode: a: ops."
        );
        // A test of a nested member stays an if/then branch.
        assert_eq!(
            got["allOf"],
            json!([{"if": {"properties": {"ops": {"properties": {"x": {"const": 1}}}}},
                    "then": {"required": ["mode"]}}])
        );
        // Only the root stays closed.
        assert_eq!(got["additionalProperties"], json!(false));
        assert!(op.get("additionalProperties").is_none(), "{op}");
    }

    #[test]
    fn an_apply_tool_advertises_the_previews_arguments_as_copied_unchanged() {
        let schema = |digest: &str| {
            json!({
                "type": "object",
                "properties": {
                    "operations": {"type": "array", "minItems": 1,
                                   "items": {"$ref": "#/$defs/op"}, "examples": [[{"k": "a"}]]},
                    "names": {"type": "array", "items": {"type": "string"}},
                    "any": {"type": "array"},
                    "actor": {"type": "string", "description": "Who."},
                    "expected_source": {"$ref": "#/$defs/op"},
                    digest: {"type": "string", "description": "The preview's digest."}
                },
                "$defs": {"op": {"type": "object", "properties": {"k": {"type": "string"}}}}
            })
        };
        for digest in PLAN_DIGESTS {
            let got = Value::Object(input_schema(&schema(digest)));
            assert_eq!(
                got["properties"]["operations"],
                json!({"type": "array", "items": {"type": "object"},
                       "description": "The operations the preview was called with, unchanged."})
            );
            assert_eq!(
                got["properties"]["names"]["items"],
                json!({"type": "string"})
            );
            assert_eq!(
                got["properties"]["any"],
                json!({"type": "array",
                       "description": "The any the preview was called with, unchanged."})
            );
            assert_eq!(got["properties"]["actor"]["description"], "Who.");
            assert_eq!(
                got["properties"]["expected_source"],
                json!({"type": "object",
                       "description": "The preview's source, unchanged; never build or edit it."})
            );
        }
        // Without a plan digest (a preview), the arrays keep their shape and examples.
        let got = Value::Object(input_schema(&schema("digest")));
        assert_eq!(
            got["properties"]["operations"],
            json!({"type": "array", "minItems": 1,
                   "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                   "examples": [[{"k": "a"}]]})
        );
    }

    #[test]
    fn examples_an_enum_or_the_description_already_gives_are_dropped() {
        let full = json!({
            "type": "object", "additionalProperties": true, "required": [],
            "properties": {
                "profile": {"$ref": "#/$defs/profile", "examples": ["auto"]},
                "id": {"$ref": "#/$defs/id", "examples": ["a/b"]},
                "own": {"type": "string", "description": "A path, e.g. a/b. More.", "examples": ["a/b"]},
                "actor": {"type": "string", "description": "Who asks.", "examples": ["agent-1"]},
                "digest": {"type": "string", "examples": ["sha256:00"]},
                "open": {"type": "object", "additionalProperties": true,
                         "properties": {"x": {"type": "string"}}}
            },
            "$defs": {
                "profile": {"type": "string", "enum": ["auto", "date"]},
                "id": {"type": "string", "description": "An id, e.g. a/b. Long text."}
            }
        });
        let got = Value::Object(input_schema(&full));
        let p = &got["properties"];
        for name in ["profile", "id", "own", "digest"] {
            assert!(p[name].get("examples").is_none(), "{name}: {}", p[name]);
        }
        assert_eq!(p["actor"]["examples"], json!(["agent-1"]));
        assert_eq!(p["id"]["description"], "An id, e.g. a/b.");
        // Keywords that constrain nothing are dropped.
        assert!(got.get("additionalProperties").is_none(), "{got}");
        assert!(got.get("required").is_none(), "{got}");
        assert_eq!(
            p["open"],
            json!({"type": "object", "properties": {"x": {"type": "string"}}})
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
    fn references_are_inlined_and_defs_dropped() {
        let full = json!({
            "type": "object",
            "properties": {
                "x": {"$ref": "#/$defs/a", "description": "Own."},
                "y": {"$ref": "#/$defs/b", "type": "string"},
                "z": {"$ref": "#/$defs/loop"}
            },
            "$defs": {
                "a": {"$ref": "#/$defs/b", "description": "Def."},
                "b": {"type": "string", "pattern": "^b$"},
                "c": {"type": "integer"},
                "loop": {"type": "array", "items": {"$ref": "#/$defs/loop"}}
            }
        });
        let got = Value::Object(input_schema(&full));
        assert!(!got.to_string().contains("$ref"), "{got}");
        assert!(got.get("$defs").is_none());
        assert_eq!(
            got["properties"]["x"],
            json!({"type": "string", "pattern": "^b$", "description": "Own."})
        );
        // A keyword both define keeps the definition under an allOf (nothing is lost).
        assert_eq!(
            got["properties"]["y"],
            json!({"type": "string", "allOf": [{"type": "string", "pattern": "^b$"}]})
        );
        // A cycle ends in {} after MAX_REF_DEPTH hops: looser, never a panic.
        let mut depth = 0;
        let mut n = &got["properties"]["z"];
        while let Some(next) = n.get("items") {
            n = next;
            depth += 1;
        }
        assert_eq!(n, &json!({}));
        assert_eq!(depth, MAX_REF_DEPTH);
    }

    #[test]
    fn output_schema_gives_each_member_of_both_branches_its_type_only() {
        let full = json!({
            "type": "object",
            "anyOf": [{"$ref": "#/$defs/success"}, {"$ref": "#/$defs/error_envelope"}],
            "$defs": {
                "success": {
                    "type": "object", "additionalProperties": false, "required": ["status"],
                    "properties": {
                        "status": {"enum": ["a", "b"]},
                        "rev": {"type": ["string", "null"], "pattern": "^x$"},
                        "n": {"type": "number", "const": 3},
                        "v": {"$ref": "#/$defs/v"},
                        "w": {"anyOf": [{"$ref": "#/$defs/v"}, {"type": "null"}]},
                        "any": {"description": "untyped"},
                        "diagnostics": {"type": "array", "items": {"type": "object"}}
                    },
                    "allOf": [{"if": {"properties": {"status": {"const": "a"}}},
                               "then": {"properties": {"rev": {"type": "null"}}}}]
                },
                "error_envelope": {
                    "type": "object", "additionalProperties": false,
                    "properties": {"code": {"type": "string"}, "retryable": {"type": "boolean"},
                                   "diagnostics": {"type": "array"}}
                },
                "v": {"type": "object", "properties": {"a": {"type": "string"}}}
            }
        });
        let got = Value::Object(output_schema(&full));
        let null_or = |t: &str| json!({"anyOf": [{"type": t}, {"type": "null"}]});
        assert_eq!(
            got,
            json!({"type": "object", "properties": {
                "status": {"type": "string"},
                "rev": null_or("string"),
                "n": {"type": "integer"},
                "v": {"type": "object"},
                "w": null_or("object"),
                "any": {},
                "diagnostics": {"type": "array"},
                "code": {"type": "string"},
                "retryable": {"type": "boolean"}
            }})
        );
    }
}
