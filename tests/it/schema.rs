//! The checked-in schemas (spec/surface.md §17): the generation gate, structure (SRV-03),
//! envelope shape (SRV-06), input guidance (SCH-01…08) and the patch-input schema cases
//! (PAT-06, PAT-11, PAT-13, PAT-14).

use crate::support::patch::{pure_apply_args, pure_preview_args, ZERO_DIGEST};
use crate::support::util::*;
use okf_mcp::wire::{registry, schema_gen};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

/// The gate: `schemas/` holds exactly the generated files, byte for byte. Regenerate with
/// `OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it schemas_are_current` (README).
#[test]
#[allow(clippy::disallowed_methods)]
fn schemas_are_current() {
    let dir = schemas_dir();
    let files = schema_gen::all_files();
    if std::env::var_os("OKF_MCP_WRITE_SCHEMAS").is_some() {
        for entry in std::fs::read_dir(&dir).expect("schemas dir") {
            let p = entry.expect("entry").path();
            if p.extension().is_some_and(|e| e == "json") {
                std::fs::remove_file(&p).expect("remove stale schema");
            }
        }
        for (name, v) in &files {
            std::fs::write(dir.join(name), schema_gen::render(v)).expect("write schema");
        }
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("schemas dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    on_disk.sort();
    let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(
        on_disk, names,
        "schemas/ file set differs from the generator"
    );
    for (name, v) in &files {
        let text = std::fs::read_to_string(dir.join(name)).expect("read schema");
        assert!(
            text == schema_gen::render(v),
            "schemas/{name} is stale; run OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it schemas_are_current"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

use okf_mcp::envelope::ToolError;
use okf_mcp::okf::temporal::{parse_offset_datetime, Profile};
use okf_mcp::wire::{alias, schema};

fn read_schema(name: &str) -> Value {
    let text = std::fs::read_to_string(schemas_dir().join(name)).expect("schema file");
    serde_json::from_str(&text).expect("schema JSON")
}

fn schema_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(schemas_dir())
        .expect("schemas dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    v.sort();
    v
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("schema compiles")
}

/// Steps 3–4 of the pipeline (spec/surface.md §9.1), as the dispatcher runs them: pure.
fn pipeline(tool: &str, args: &Value) -> Result<(), ToolError> {
    alias::check(tool, args)?;
    schema::validate_input(tool, args)
}

fn input_error(tool: &str, args: &Value) -> ToolError {
    match pipeline(tool, args) {
        Ok(()) => panic!("{tool} accepted {args}"),
        Err(e) => {
            // Server-authored guidance is never sensitive by itself (spec/surface.md §10
            // rule 4): redaction leaves every message as written.
            for d in &e.diagnostics {
                assert_eq!(d.to_wire()["message"], d.message.as_str(), "{tool}");
            }
            e
        }
    }
}

/// The CallToolResult JSON of an error, as the dispatcher builds it.
/// The CallToolResult an error becomes, both text items included (spec/surface.md §18.2).
fn error_result(e: &ToolError) -> Value {
    okf_mcp::wire::result::ToolResult::from_error(e).to_call_tool_result_json()
}

fn fields(e: &ToolError) -> Vec<String> {
    e.diagnostics
        .iter()
        .filter(|d| d.code == "invalid_input")
        .map(|d| d.field.clone())
        .collect()
}

fn messages(e: &ToolError) -> Vec<String> {
    e.diagnostics.iter().map(|d| d.message.clone()).collect()
}

const REV: &str = ZERO_DIGEST;

fn lifecycle_op(stale_after: Value) -> Value {
    json!({"kind": "set_lifecycle", "concept_id": "tables/orders", "lifecycle": {"status": "stable", "stale_after": stale_after}})
}

fn computation(mode: &str) -> Value {
    let mut c = json!({
        "mode": mode, "runtime": "python3",
        "parameters": [{"name": "n", "type": "integer", "required": true}],
        "executor": {"resource": "https://example.test/exec", "receipt": ["r1"]},
        "attester": {"resource": "https://example.test/attest"}
    });
    if mode == "file" {
        c["computation_path"] = json!("computations/x.py");
    } else {
        c["inline_computation"] = json!("");
    }
    c
}

fn computation_op(c: Value) -> Value {
    json!({"kind": "put_attested_computation", "concept_id": "tables/orders", "attested_computation": c})
}

/// A bundle path that does not exist, inside a temp dir that is checked afterwards.
fn absent_bundle() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("no-such-bundle");
    (t, p)
}

fn assert_no_io(t: &tempfile::TempDir, p: &Path) {
    assert!(!p.exists(), "nothing may be created");
    assert_eq!(
        std::fs::read_dir(t.path()).expect("tmp").count(),
        0,
        "the temp dir stays empty"
    );
}

// ---------------------------------------------------------------------------------------------
// Structure (SRV-03)
// ---------------------------------------------------------------------------------------------

#[test]
fn copied_definitions_equal_their_shared_source() {
    let mut checked = 0;
    for f in schema_files() {
        let v = read_schema(&f);
        let defs = v["$defs"].as_object().expect("$defs");
        for (name, def) in defs {
            match schema_gen::owner(name) {
                Some(owner) => {
                    let src = read_schema(owner);
                    assert_eq!(
                        def, &src["$defs"][name],
                        "{f}: $defs/{name} differs from {owner}"
                    );
                    checked += 1;
                }
                None => assert_eq!(name, "success", "{f}: unowned definition {name}"),
            }
        }
    }
    assert!(checked > 50, "copies were compared: {checked}");
}

#[test]
fn a_drifted_copy_is_detected() {
    // The comparison above is not vacuous: a copy that differs in one keyword is unequal.
    let owner = read_schema(schema_gen::COMMON_FILE);
    let mut copy = read_schema("read_concept.input.schema.json");
    assert_eq!(copy["$defs"]["concept_id"], owner["$defs"]["concept_id"]);
    copy["$defs"]["concept_id"]["maxLength"] = json!(4095);
    assert_ne!(copy["$defs"]["concept_id"], owner["$defs"]["concept_id"]);
}

/// Walks every schema node with its context: `branch` is true for a node reached through
/// `if`/`then`/`else`/`anyOf`/`oneOf`/`allOf` or nested in such a node, or a `$defs` entry
/// referenced only from such positions.
fn walk_nodes<'a>(
    node: &'a Value,
    ptr: String,
    branch: bool,
    out: &mut Vec<(String, &'a Value, bool, bool)>,
) {
    let Value::Object(m) = node else { return };
    // (pointer, node, in_branch, is_direct_branch_node)
    for (k, v) in m {
        match k.as_str() {
            "properties" => {
                if let Value::Object(p) = v {
                    for (pk, pv) in p {
                        out.push((format!("{ptr}/properties/{pk}"), pv, branch, false));
                        walk_nodes(pv, format!("{ptr}/properties/{pk}"), branch, out);
                    }
                }
            }
            "items" | "not" | "contains" => {
                out.push((format!("{ptr}/{k}"), v, branch, false));
                walk_nodes(v, format!("{ptr}/{k}"), branch, out);
            }
            "if" | "then" | "else" => {
                out.push((format!("{ptr}/{k}"), v, true, true));
                walk_nodes(v, format!("{ptr}/{k}"), true, out);
            }
            "anyOf" | "oneOf" | "allOf" => {
                for (i, b) in v.as_array().expect("array").iter().enumerate() {
                    let direct = k != "allOf";
                    out.push((format!("{ptr}/{k}/{i}"), b, true, direct));
                    walk_nodes(b, format!("{ptr}/{k}/{i}"), true, out);
                }
            }
            _ => {}
        }
    }
}

fn all_nodes(root: &Value) -> Vec<(String, &Value, bool, bool)> {
    let mut out = vec![(String::new(), root, false, false)];
    walk_nodes(root, String::new(), false, &mut out);
    // $defs: a definition counts as branch context when every reference to it is.
    let mut refs: Vec<(String, bool)> = Vec::new();
    for (_, n, b, _) in &out {
        if let Some(r) = n.get("$ref").and_then(Value::as_str) {
            refs.push((r.to_owned(), *b));
        }
    }
    if let Some(Value::Object(defs)) = root.get("$defs") {
        let mut def_nodes = Vec::new();
        for (name, d) in defs {
            def_nodes.push((format!("/$defs/{name}"), d));
        }
        // Fixed point over references between definitions.
        let mut branch_only: std::collections::BTreeMap<String, bool> = Default::default();
        for _ in 0..8 {
            let mut all_refs = refs.clone();
            for (p, d) in &def_nodes {
                let b = *branch_only.get(p).unwrap_or(&true);
                let mut inner = Vec::new();
                walk_nodes(d, p.clone(), b, &mut inner);
                inner.push((p.clone(), d, b, false));
                for (_, n, nb, _) in &inner {
                    if let Some(r) = n.get("$ref").and_then(Value::as_str) {
                        all_refs.push((r.to_owned(), *nb));
                    }
                }
            }
            for (p, _) in &def_nodes {
                let target = format!("#{p}");
                let users: Vec<bool> = all_refs
                    .iter()
                    .filter(|(r, _)| *r == target)
                    .map(|(_, b)| *b)
                    .collect();
                branch_only.insert(p.clone(), !users.is_empty() && users.iter().all(|b| *b));
            }
        }
        for (p, d) in def_nodes {
            let b = branch_only[&p];
            out.push((p.clone(), d, b, false));
            walk_nodes(d, p, b, &mut out);
        }
    }
    out
}

/// The §17.1/§17.2 structure rules that `root` (the file `f`) breaks.
fn structure_problems(f: &str, root: &Value, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };
    check(!text.contains("\\\\d"), format!("{f}: \\d in a pattern"));
    check(
        root["$schema"] == schema_gen::SCHEMA_DRAFT,
        format!("{f}: $schema"),
    );
    check(
        root["$id"] == format!("https://okf.dev/mcp/v0.2/{f}"),
        format!("{f}: $id"),
    );
    let is_input = f.ends_with(".input.schema.json");
    if f.ends_with(".output.schema.json") {
        check(root["type"] == "object", format!("{f}: output root type"));
        check(
            root["anyOf"]
                == json!([{"$ref": "#/$defs/success"}, {"$ref": "#/$defs/error_envelope"}]),
            format!("{f}: output root anyOf"),
        );
        check(
            root.get("additionalProperties").is_none(),
            format!("{f}: output root carries additionalProperties"),
        );
    }
    let nodes = all_nodes(root);
    for (p, n, _, _) in &nodes {
        if let Some(r) = n.get("$ref") {
            let r = r.as_str().unwrap_or_default();
            match r.strip_prefix("#/$defs/") {
                Some(name) => check(
                    root["$defs"].get(name).is_some(),
                    format!("{f}{p}: dangling {r}"),
                ),
                None => check(false, format!("{f}{p}: non-local {r}")),
            }
        }
    }
    for (p, n, in_branch, direct_branch) in &nodes {
        let Some(obj) = n.as_object() else { continue };
        if obj.contains_key("properties") {
            let ap = obj.get("additionalProperties");
            check(
                matches!(ap, Some(Value::Bool(_))),
                format!("{f}{p}: properties without explicit additionalProperties"),
            );
            if is_input {
                check(
                    ap == Some(&Value::Bool(*in_branch)),
                    format!("{f}{p}: input member nodes are closed, branch nodes open"),
                );
            }
        } else if *direct_branch {
            check(
                !obj.contains_key("additionalProperties"),
                format!("{f}{p}: branch node without properties carries additionalProperties"),
            );
        }
    }
    problems
}

#[test]
fn srv_03_structure_of_every_checked_in_schema() {
    for f in schema_files() {
        let root = read_schema(&f);
        let text = std::fs::read_to_string(schemas_dir().join(&f)).expect("text");
        let problems = structure_problems(&f, &root, &text);
        assert!(problems.is_empty(), "{problems:#?}");
        if f != okf_mcp::tools::migration::SHARED_SCHEMA.file {
            let n = all_nodes(&root)
                .iter()
                .filter(|(_, n, _, _)| n.get("properties").is_some())
                .count();
            assert!(n > 0, "{f}: the walk saw objects");
        }
    }
}

#[test]
fn srv_03_structure_check_catches_each_violation() {
    let f = "list_concepts.input.schema.json";
    let good = read_schema(f);
    let text = serde_json::to_string(&good).expect("text");
    assert!(structure_problems(f, &good, &text).is_empty());
    let mutate = |path: &str, v: Option<Value>| {
        let mut s = good.clone();
        let (parent, key) = path.rsplit_once('/').expect("path");
        let target = s
            .pointer_mut(parent)
            .expect("parent")
            .as_object_mut()
            .expect("object");
        match v {
            Some(v) => {
                target.insert(key.to_owned(), v);
            }
            None => {
                target.remove(key);
            }
        }
        s
    };
    for (what, bad) in [
        (
            "open input root",
            mutate("/additionalProperties", Some(json!(true))),
        ),
        (
            "closed branch",
            mutate("/then/additionalProperties", Some(json!(false))),
        ),
        ("implicit", mutate("/if/additionalProperties", None)),
        (
            "remote ref",
            mutate(
                "/properties/bundle_path/$ref",
                Some(json!("common.schema.json#/$defs/bundle_path")),
            ),
        ),
        (
            "dangling ref",
            mutate("/properties/bundle_path/$ref", Some(json!("#/$defs/nope"))),
        ),
        (
            "wrong id",
            mutate("/$id", Some(json!("https://example.test/x.json"))),
        ),
    ] {
        let text = serde_json::to_string(&bad).expect("text");
        assert!(
            !structure_problems(f, &bad, &text).is_empty(),
            "{what} not caught"
        );
    }
    let out = "list_concepts.output.schema.json";
    let mut bad = read_schema(out);
    bad["additionalProperties"] = json!(false);
    let text = serde_json::to_string(&bad).expect("text");
    assert!(
        !structure_problems(out, &bad, &text).is_empty(),
        "output root"
    );
    let good = read_schema(f);
    let mut text = serde_json::to_string(&good).expect("text");
    text.push_str(r#"{"pattern":"^\\d$"}"#);
    assert!(!structure_problems(f, &good, &text).is_empty(), "\\d");
}

#[test]
fn srv_03_examples_validate_against_their_property_and_the_full_input_schema() {
    let mut seen = 0;
    for t in registry::all().iter().map(|t| t.name) {
        let root = read_schema(&format!("{t}.input.schema.json"));
        let full = validator(&root);
        let base = root["examples"][0].clone();
        assert!(full.is_valid(&base), "{t}: root example");
        for (name, prop) in root["properties"].as_object().expect("properties") {
            let Some(examples) = prop.get("examples").and_then(Value::as_array) else {
                continue;
            };
            let mut alone = prop.clone();
            alone["$defs"] = root["$defs"].clone();
            let own = validator(&alone);
            for ex in examples {
                assert!(own.is_valid(ex), "{t}.{name}: example vs its property");
                let mut input = base.clone();
                input[name.as_str()] = ex.clone();
                assert!(
                    full.is_valid(&input),
                    "{t}.{name}: example vs the full schema"
                );
                seen += 1;
            }
        }
    }
    assert!(seen >= 10, "examples checked: {seen}");
}

#[test]
fn srv_03_every_examples_entry_anywhere_validates_against_its_own_node() {
    let mut seen = 0;
    for f in schema_files() {
        let root = read_schema(&f);
        for (p, node, _, _) in all_nodes(&root) {
            let Some(examples) = node.get("examples").and_then(Value::as_array) else {
                continue;
            };
            let mut alone = node.clone();
            if p.is_empty() {
                alone.as_object_mut().expect("root").remove("examples");
            } else {
                alone["$defs"] = root["$defs"].clone();
            }
            let v = validator(&alone);
            for ex in examples {
                assert!(v.is_valid(ex), "{f}{p}: example {ex}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 15, "examples checked: {seen}");
}

/// The checked-in advertised schema `schemas/advertised/<file>`.
fn read_advertised(file: &str) -> Value {
    let text = std::fs::read_to_string(schemas_dir().join("advertised").join(file))
        .expect("advertised schema file");
    serde_json::from_str(&text).expect("advertised schema JSON")
}

/// SRV-03 with §18.6 rule 3a: `tools/list` advertises, for every tool, exactly the checked-in
/// `schemas/advertised/<tool>.input.schema.json` and `<tool>.output.schema.json` (JSON-value
/// equality), which are the projection and the loosening of the checked-in full schemas.
#[test]
fn srv_03_advertised_schemas_are_the_projection_of_the_checked_in_files() {
    let mut mcp = Mcp::start();
    let l = mcp.request("tools/list", json!({}));
    let tools = l["result"]["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), registry::all().len());
    for t in tools {
        let name = t["name"].as_str().expect("name");
        let full = read_schema(&format!("{name}.input.schema.json"));
        let input = read_advertised(&format!("{name}.input.schema.json"));
        assert_eq!(t["inputSchema"], input, "{name}");
        assert_eq!(
            input,
            Value::Object(okf_mcp::wire::advertise::input_schema(&full)),
            "{name}"
        );
        let full_out = read_schema(&format!("{name}.output.schema.json"));
        let output = read_advertised(&format!("{name}.output.schema.json"));
        assert_eq!(t["outputSchema"], output, "{name}");
        assert_eq!(
            output,
            Value::Object(okf_mcp::wire::advertise::output_schema(&full_out)),
            "{name}"
        );
        let spec = registry::find(name).expect("registered");
        assert_eq!(t["description"].as_str(), Some(spec.description), "{name}");
        assert_eq!(t["title"].as_str(), Some(spec.title), "{name}");
    }
    mcp.finish();
}

/// AUT-12: `schemas/advertised/` holds exactly the generated per-tool files (plus
/// `tools.json`, checked by AUT-08), byte for byte. Regenerate with
/// `OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it aut_12_advertised_files`.
#[test]
#[allow(clippy::disallowed_methods)]
fn aut_12_advertised_files_are_current() {
    let dir = schemas_dir().join("advertised");
    let files = okf_mcp::wire::advertise::files();
    let generated = |n: &str| n.ends_with(".schema.json");
    if std::env::var_os("OKF_MCP_WRITE_SCHEMAS").is_some() {
        std::fs::create_dir_all(&dir).expect("mkdir");
        for entry in std::fs::read_dir(&dir).expect("advertised dir") {
            let p = entry.expect("entry").path();
            if p.file_name()
                .is_some_and(|n| generated(&n.to_string_lossy()))
            {
                std::fs::remove_file(&p).expect("remove stale schema");
            }
        }
        for (name, v) in &files {
            std::fs::write(dir.join(name), schema_gen::render(v)).expect("write schema");
        }
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("advertised dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| generated(n))
        .collect();
    on_disk.sort();
    let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names.len(), 2 * registry::all().len());
    assert_eq!(
        on_disk, names,
        "schemas/advertised/ file set differs from the generator"
    );
    for (name, v) in &files {
        let text = std::fs::read_to_string(dir.join(name)).expect("read schema");
        assert!(
            text == schema_gen::render(v),
            "schemas/advertised/{name} is stale; run OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it aut_12_advertised_files"
        );
    }
}

/// The top-level members of the checked-in output schema's success object and error
/// envelope, success first.
fn output_members(tool: &str) -> Vec<String> {
    let full = read_schema(&format!("{tool}.output.schema.json"));
    let mut names: Vec<String> = Vec::new();
    for def in ["success", "error_envelope"] {
        for k in full["$defs"][def]["properties"]
            .as_object()
            .expect("properties")
            .keys()
        {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    names
}

/// AUT-12 (§18.6 rule 3a): every advertised output schema is `{"type":"object",
/// "properties":{…}}` with exactly the top-level members of the success object and the error
/// envelope, each `{"type": t}` or an `anyOf` of at least two `{"type": t}` (a member that
/// may be `null`); no `required`, nested schema, `additionalProperties`, boolean or `type`
/// array. The error members are in it (the TypeScript SDK validates error results too).
#[test]
fn aut_12_advertised_output_schemas_name_every_member_with_its_type_only() {
    let types = [
        "string", "integer", "number", "boolean", "array", "object", "null",
    ];
    let single = |v: &Value| {
        v.as_object().is_some_and(|m| m.len() == 1)
            && v["type"].as_str().is_some_and(|t| types.contains(&t))
    };
    let mut nullable = 0;
    for t in registry::all() {
        let adv = read_advertised(&format!("{}.output.schema.json", t.name));
        let root = adv.as_object().expect("object");
        assert_eq!(
            root.keys().collect::<Vec<_>>(),
            ["type", "properties"],
            "{}",
            t.name
        );
        assert_eq!(adv["type"], "object");
        let props = adv["properties"].as_object().expect("properties");
        assert_eq!(
            props.keys().cloned().collect::<Vec<_>>(),
            output_members(t.name),
            "{}",
            t.name
        );
        for m in ["code", "message", "retryable", "diagnostics"] {
            assert!(props.contains_key(m), "{}: error member {m}", t.name);
        }
        for (name, node) in props {
            if single(node) {
                continue;
            }
            let any = node.get("anyOf").and_then(Value::as_array);
            assert!(
                node.as_object().is_some_and(|m| m.len() == 1)
                    && any.is_some_and(|a| a.len() >= 2 && a.iter().all(single)),
                "{}.{name}: {node}",
                t.name
            );
            nullable += usize::from(any.is_some_and(|a| a.contains(&json!({"type": "null"}))));
        }
    }
    assert!(nullable >= 3, "members that may be null: {nullable}");
}

/// Every result recorded in the golden transcripts: `(tool, structuredContent, isError)`,
/// each `diff` placeholder replaced by the diff rows it stands for (tests/it/golden.rs).
fn golden_results() -> Vec<(String, Value, bool)> {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&golden)
        .expect("tests/golden")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("golden");
        let lines: Vec<&str> = text.lines().collect();
        let mut tool: Option<String> = None;
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            if let Some(rest) = line.strip_prefix("--- mcp tools/call ") {
                tool = Some(rest.trim().to_owned());
            } else if let Some(rest) = line.strip_prefix("--- cli okf-mcp call ") {
                tool = rest.split_whitespace().next().map(str::to_owned);
            } else if line.starts_with("--- ") {
                tool = None;
            }
            if line != "  {" {
                i += 1;
                continue;
            }
            let start = i;
            while i < lines.len() && lines[i] != "  }" {
                i += 1;
            }
            let json_text = lines[start..=i.min(lines.len() - 1)].join("\n");
            let mut v: Value = serde_json::from_str(&json_text).expect("golden JSON");
            // The blocks after it, in order: text items, then the diff.
            let mut blocks: Vec<(String, String)> = Vec::new();
            i += 1;
            while i < lines.len() && lines[i].starts_with("  [") {
                let label = lines[i].to_owned();
                let mut rows = String::new();
                i += 1;
                while i < lines.len() && lines[i].starts_with("  |") {
                    rows.push_str(lines[i].get(4..).unwrap_or(""));
                    rows.push('\n');
                    i += 1;
                }
                blocks.push((label, rows));
            }
            let result = if v.get("result").is_some() {
                v["result"].take()
            } else {
                v
            };
            let (Some(t), Some(sc)) = (&tool, result.get("structuredContent")) else {
                continue;
            };
            let mut sc = sc.clone();
            if sc.get("diff") == Some(&json!("<= diff block below>")) {
                let diff = blocks
                    .iter()
                    .find(|(l, _)| l.contains("the `diff` string"))
                    .map(|(_, r)| r.clone())
                    .expect("diff block");
                sc["diff"] = json!(diff);
            }
            let is_error = result["isError"] == json!(true);
            out.push((t.clone(), sc, is_error));
        }
    }
    out
}

/// Results of live calls of every tool on fixture copies (successes of each read tool, the
/// previews and their errors, and an error envelope from every tool), through the CLI.
fn live_results() -> Vec<(String, Value, bool)> {
    let (_t, demo) = copy_bundle(&fixture("demo"));
    let (_t1, v01) = copy_bundle(&fixture("demo-v01"));
    let (_t2, date) = copy_bundle(&fixture("temporal-date"));
    let missing = demo.join("does-not-exist");
    let mut calls = vec![
        ("list_concepts", json!({"bundle_path": demo})),
        ("list_concepts", json!({"bundle_path": demo, "limit": 1})),
        (
            "read_concept",
            json!({"bundle_path": demo, "concept_id": "tables/orders"}),
        ),
        (
            "read_concept",
            json!({"bundle_path": demo, "concept_id": "no/such"}),
        ),
        ("validate_bundle", json!({"bundle_path": demo})),
        ("validate_bundle", json!({"bundle_path": v01})),
        (
            "preview_v02_migration",
            json!({"bundle_path": v01, "timestamp_policy": "preserve", "citation_mappings": []}),
        ),
        (
            "preview_temporal_upgrade",
            json!({"bundle_path": date, "id": "up-1", "actor": "human:t"}),
        ),
        (
            "preview_concept_patch",
            pure_preview_args(
                json!([{"kind": "set_lifecycle", "concept_id": "no/such", "lifecycle": {"status": "stable"}}]),
            ),
        ),
    ];
    calls[8].1["bundle_path"] = json!(demo);
    for t in registry::all() {
        // A schema_validation envelope, and the root example on a missing bundle.
        calls.push((t.name, json!({"bundle_path": missing})));
        let mut example =
            read_schema(&format!("{}.input.schema.json", t.name))["examples"][0].clone();
        example["bundle_path"] = json!(missing);
        calls.push((t.name, example));
    }
    calls
        .into_iter()
        .map(|(tool, args)| {
            let out = call(tool, &args);
            let r = out.result.as_ref().expect("CallToolResult JSON");
            (
                tool.to_owned(),
                r["structuredContent"].clone(),
                r["isError"] == json!(true),
            )
        })
        .collect()
}

/// AUT-12 (§18.6 rule 3a): the advertised output schema only loosens. Every result of the
/// golden transcripts and of live calls of every tool, error results included, passes the
/// checked-in full output schema (which the server enforces) and the advertised one; and a
/// result with one member of the wrong JSON type fails the advertised one (not vacuous).
#[test]
fn aut_12_advertised_output_schemas_accept_every_result_the_full_ones_accept() {
    let mut results = golden_results();
    let golden = results.len();
    assert!(golden >= 40, "golden results read: {golden}");
    results.extend(live_results());
    let (mut errors, mut tools) = (0, std::collections::BTreeSet::new());
    for (tool, sc, is_error) in &results {
        let full = validator(&read_schema(&format!("{tool}.output.schema.json")));
        assert!(full.is_valid(sc), "{tool}: the full schema refuses {sc}");
        let adv = read_advertised(&format!("{tool}.output.schema.json"));
        assert!(
            validator(&adv).is_valid(sc),
            "{tool}: advertised refuses {sc}"
        );
        errors += usize::from(*is_error);
        tools.insert(tool.clone());
        // One member of the wrong type: the advertised schema says no.
        let (name, value) = sc
            .as_object()
            .and_then(|m| m.iter().next())
            .expect("a member");
        let wrong = if value.is_string() {
            json!(1)
        } else {
            json!("x")
        };
        let mut bad = sc.clone();
        bad[name.as_str()] = wrong;
        assert!(!validator(&adv).is_valid(&bad), "{tool}: {name} retyped");
    }
    assert!(errors >= 12, "error results checked: {errors}");
    assert_eq!(tools.len(), registry::all().len(), "{tools:?}");
}

/// Every boolean subschema and `type` array in `v` (JSON pointers), `additionalProperties`
/// booleans excepted; keywords whose value is a boolean by definition (`uniqueItems`) are no
/// subschemas.
fn unportable(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let here = format!("{at}/{k}");
                if k == "type" && x.is_array() {
                    out.push(here.clone());
                }
                let schema_map = matches!(k.as_str(), "properties" | "$defs" | "patternProperties");
                if x.is_boolean()
                    && !schema_map
                    && !matches!(
                        k.as_str(),
                        "additionalProperties" | "const" | "default" | "required" | "uniqueItems"
                    )
                {
                    out.push(here.clone());
                }
                if schema_map {
                    for (n, s) in x.as_object().into_iter().flatten() {
                        if s.is_boolean() {
                            out.push(format!("{here}/{n}"));
                        }
                        unportable(s, &format!("{here}/{n}"), out);
                    }
                } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    unportable(x, &here, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                if x.is_boolean() {
                    out.push(format!("{at}/{i}"));
                }
                unportable(x, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// AUT-08, AUT-12: the advertised list is checked in as `schemas/advertised/tools.json` (the
/// whole `tools` array, pretty), is at most 40,000 bytes compact (spec/surface.md §18.6 rule
/// 3a), holds no boolean subschema and no `type` array in any input or output schema, and no
/// `$ref` anywhere (advertised input schemas inline their definitions). Regenerate with
/// `OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it advertised_tools_list`.
#[test]
#[allow(clippy::disallowed_methods)]
fn aut_08_12_advertised_tools_list_is_checked_in_small_and_portable() {
    let mut mcp = Mcp::start();
    let l = mcp.request("tools/list", json!({}));
    mcp.finish();
    let tools = l["result"]["tools"].clone();
    let file = schemas_dir().join("advertised/tools.json");
    let text = format!("{}\n", serde_json::to_string_pretty(&tools).expect("json"));
    if std::env::var_os("OKF_MCP_WRITE_SCHEMAS").is_some() {
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(&file, &text).expect("write");
    }
    let on_disk = std::fs::read_to_string(&file).expect("schemas/advertised/tools.json");
    assert!(
        on_disk == text,
        "schemas/advertised/tools.json is stale; run OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it advertised_tools_list"
    );
    let size = l["result"].to_string().len();
    assert!(size <= 40_000, "tools/list result is {size} bytes");
    assert!(
        !l["result"].to_string().contains("\"$ref\""),
        "a $ref is advertised"
    );
    let mut bad = Vec::new();
    for t in tools.as_array().expect("tools") {
        let name = t["name"].as_str().expect("name");
        assert!(t["outputSchema"].is_object(), "{name}: outputSchema");
        unportable(&t["inputSchema"], name, &mut bad);
        unportable(
            &t["outputSchema"],
            &format!("{name}/outputSchema"),
            &mut bad,
        );
    }
    assert_eq!(bad, Vec::<String>::new(), "unportable schema nodes");
    // The detector itself finds both kinds.
    let mut probe = Vec::new();
    unportable(
        &json!({"properties": {"a": false, "b": {"type": ["string", "null"]}, "c": {"uniqueItems": true}}, "allOf": [true]}),
        "",
        &mut probe,
    );
    assert_eq!(probe, ["/properties/a", "/properties/b/type", "/allOf/0"]);
}

/// AUT-08 (rule 6 of src/wire/advertise.rs): an apply tool advertises the arguments it takes
/// again from its preview call as copied unchanged, and only those: each such member of
/// `apply_<x>` is a member of `preview_<x>` with the same checked-in schema, which the preview
/// advertises in full (its items have `properties`).
#[test]
fn aut_08_apply_tools_advertise_the_previews_arguments_once() {
    let mut seen = Vec::new();
    for t in registry::all() {
        let adv = read_advertised(&format!("{}.input.schema.json", t.name));
        for (name, node) in adv["properties"].as_object().expect("properties") {
            let d = node["description"].as_str().unwrap_or_default();
            if !d.ends_with("the preview was called with, unchanged.") {
                continue;
            }
            let preview = t.name.replacen("apply_", "preview_", 1);
            assert_ne!(preview, t.name, "{}.{name}", t.name);
            let full = read_schema(&format!("{}.input.schema.json", t.name));
            let full_preview = read_schema(&format!("{preview}.input.schema.json"));
            assert_eq!(
                full["properties"][name], full_preview["properties"][name],
                "{}.{name}",
                t.name
            );
            let shown = read_advertised(&format!("{preview}.input.schema.json"));
            assert!(
                shown["properties"][name]["items"]["properties"].is_object(),
                "{preview}.{name}: {}",
                shown["properties"][name]
            );
            seen.push(format!("{}.{name}", t.name));
        }
    }
    assert_eq!(
        seen,
        [
            "apply_concept_patch.operations",
            "apply_temporal_upgrade.mappings",
            "apply_v02_migration.generated_at",
            "apply_v02_migration.citation_mappings",
            "apply_v02_migration.computations",
        ]
    );
}

/// AUT-08: the projection only loosens. Every root example of a checked-in input schema and
/// every argument object of the golden transcripts that the checked-in schema accepts, the
/// advertised schema accepts too; and a few requests the checked-in schema refuses for a
/// cross-field rule are admitted by the advertised one (the server answers them with its
/// full guidance).
#[test]
fn aut_08_advertised_schemas_accept_whatever_the_checked_in_ones_accept() {
    let mut accepted = 0;
    let mut check = |tool: &str, args: &Value| {
        let full = read_schema(&format!("{tool}.input.schema.json"));
        if !validator(&full).is_valid(args) {
            return;
        }
        let adv = Value::Object(okf_mcp::wire::advertise::input_schema(&full));
        assert!(validator(&adv).is_valid(args), "{tool}: {args}");
        accepted += 1;
    };
    for t in registry::all() {
        let full = read_schema(&format!("{}.input.schema.json", t.name));
        for ex in full["examples"].as_array().into_iter().flatten() {
            check(t.name, ex);
        }
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&golden)
        .expect("tests/golden")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("golden");
        let mut tool = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("--- mcp tools/call ") {
                tool = Some(rest.trim().to_owned());
            } else if let Some(rest) = line.strip_prefix("--- cli okf-mcp call ") {
                tool = rest.split_whitespace().next().map(str::to_owned);
            } else if let (Some(args), Some(t)) = (line.strip_prefix("arguments: "), &tool) {
                let args = args.replace("<BUNDLE>", "/srv/okf/bundle");
                if let Ok(v) = serde_json::from_str::<Value>(&args) {
                    if registry::find(t).is_some() {
                        check(t, &v);
                    }
                }
            }
        }
    }
    assert!(accepted >= 20, "valid requests checked: {accepted}");
    // Cross-field rules stay with the server: the advertised schema admits these.
    let loose = [
        (
            "preview_concept_patch",
            json!({"bundle_path": "/srv/okf/bundle", "actor": "a", "operations": [
                {"kind": "set_lifecycle", "concept_id": "a/b", "lifecycle": {"status": "stable"}, "generated": {"by": "human:x"}}
            ]}),
        ),
        (
            "apply_v02_migration",
            json!({"bundle_path": "/srv/okf/bundle", "timestamp_policy": "preserve",
                   "citation_mappings": [], "expected_source": {}}),
        ),
    ];
    for (tool, args) in loose {
        let full = read_schema(&format!("{tool}.input.schema.json"));
        assert!(
            !validator(&full).is_valid(&args),
            "{tool}: the full schema refuses it"
        );
        let adv = Value::Object(okf_mcp::wire::advertise::input_schema(&full));
        assert!(
            validator(&adv).is_valid(&args),
            "{tool}: advertised admits it"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// SRV-06: the envelope validates against the advertised output schema
// ---------------------------------------------------------------------------------------------

#[test]
fn srv_06_tool_errors_have_the_envelope_shape_and_validate_against_the_output_schema() {
    let (t, missing) = absent_bundle();
    let mut mcp = Mcp::start();
    let l = mcp.request("tools/list", json!({}));
    let cases = [
        ("list_concepts", json!({"bundle_path": missing})),
        (
            "read_concept",
            json!({"bundle_path": missing, "concept_id": "tables/orders"}),
        ),
        (
            "validate_bundle",
            json!({"bundle_path": missing, "strict": "yes"}),
        ),
        (
            "list_concepts",
            json!({"bundle_path": missing, "bundlePath": "x"}),
        ),
    ];
    for (tool, args) in cases {
        let spec = l["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|x| x["name"] == tool)
            .expect("registered");
        let advertised = validator(&spec["outputSchema"]);
        let out_schema = validator(&read_schema(&format!("{tool}.output.schema.json")));
        let r = mcp.call(tool, &args);
        assert_eq!(r["isError"], json!(true), "{tool}: {r}");
        let env = &r["structuredContent"];
        let keys: Vec<&String> = env.as_object().expect("envelope").keys().collect();
        assert_eq!(
            keys,
            ["code", "message", "retryable", "diagnostics"],
            "{tool}"
        );
        assert!(env["diagnostics"].is_array());
        crate::support::util::assert_error_texts(&r);
        assert!(out_schema.is_valid(env), "{tool}: {env}");
        assert!(advertised.is_valid(env), "{tool}: advertised {env}");
        let cli = call(tool, &args);
        assert_eq!(cli.code, 1);
        assert_eq!(
            identity(cli.result.as_ref().expect("json")),
            identity(&r),
            "{tool}"
        );
    }
    mcp.finish();
    assert_no_io(&t, &missing);
}

#[test]
fn srv_06_output_schemas_accept_envelopes_and_reject_other_shapes() {
    let env =
        json!({"code": "invalid_request", "message": "m", "retryable": false, "diagnostics": []});
    for t in registry::all().iter().map(|t| t.name) {
        let v = validator(&read_schema(&format!("{t}.output.schema.json")));
        assert!(v.is_valid(&env), "{t}");
        let mut extra = env.clone();
        extra["hint"] = json!("x");
        assert!(
            !v.is_valid(&extra),
            "{t}: envelope is closed and success must not match it"
        );
        let mut no_diags = env.clone();
        no_diags.as_object_mut().expect("obj").remove("diagnostics");
        assert!(!v.is_valid(&no_diags), "{t}: diagnostics always present");
    }
}

// ---------------------------------------------------------------------------------------------
// SCH-01…08: input guidance (spec/surface.md §6.3)
// ---------------------------------------------------------------------------------------------

#[test]
fn sch_01_missing_required_fields_one_diagnostic_each() {
    let (t, missing) = absent_bundle();
    let out = call("list_concepts", &json!({}));
    assert_eq!(out.code, 1);
    let s = out.structured();
    assert_eq!(s["code"], "schema_validation");
    let d = s["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(d.len(), 1, "{s}");
    assert_eq!(d[0]["code"], "invalid_input");
    assert_eq!(d[0]["severity"], "ERROR");
    assert_eq!(d[0]["field"], "bundle_path");
    // Three missing fields → three diagnostics (write_concept requires four).
    let e = input_error("write_concept", &json!({"bundle_path": missing}));
    assert_eq!(e.code, "schema_validation");
    assert_eq!(fields(&e), ["body", "concept_id", "frontmatter"]);
    let e = input_error("preview_concept_patch", &json!({}));
    assert_eq!(fields(&e), ["actor", "bundle_path", "operations"]);
    assert_no_io(&t, &missing);
}

#[test]
fn sch_02_null_and_uncoerced_types_are_schema_validation_before_io() {
    let (t, missing) = absent_bundle();
    for (tool, args, field) in [
        (
            "read_concept",
            json!({"bundle_path": missing, "concept_id": null}),
            "concept_id",
        ),
        ("list_concepts", json!({"bundle_path": null}), "bundle_path"),
        (
            "validate_bundle",
            json!({"bundle_path": missing, "strict": "true"}),
            "strict",
        ),
        (
            "validate_bundle",
            json!({"bundle_path": missing, "check_links": 1}),
            "check_links",
        ),
    ] {
        let out = call(tool, &args);
        assert_eq!(out.code, 1, "{tool}");
        let s = out.structured();
        assert_eq!(s["code"], "schema_validation", "{tool} {args}");
        assert_eq!(s["diagnostics"][0]["field"], field);
        let m = s["diagnostics"][0]["message"].as_str().expect("message");
        assert!(m.contains("JSON"), "{m}");
        assert!(!out.stdout.contains(&missing.to_string_lossy().into_owned()));
    }
    assert_no_io(&t, &missing);
}

#[test]
fn sch_03_size_keywords_are_resource_limit_even_with_other_faults() {
    let (t, missing) = absent_bundle();
    // One character over maxLength.
    let long = format!("/{}", "a".repeat(4096));
    let out = call("list_concepts", &json!({"bundle_path": long}));
    assert_eq!(out.structured()["code"], "resource_limit");
    let d = out.structured()["diagnostics"]
        .as_array()
        .expect("d")
        .clone();
    assert!(d
        .iter()
        .any(|x| x["code"] == "invalid_input" && x["field"] == "bundle_path"));
    assert_eq!(d.iter().filter(|x| x["code"] == "recovery_step").count(), 1);
    // Exactly at the limit is not a size fault.
    let at = format!("/{}", "a".repeat(4095));
    let out = call("list_concepts", &json!({"bundle_path": at}));
    assert_ne!(out.structured()["code"], "resource_limit");
    // maxLength and type failing together → resource_limit.
    let out = call(
        "validate_bundle",
        &json!({"bundle_path": long, "strict": "yes"}),
    );
    assert_eq!(out.structured()["code"], "resource_limit");
    // One item over maxItems.
    let ops: Vec<Value> = (0..257).map(|_| lifecycle_op(Value::Null)).collect();
    let e = input_error("preview_concept_patch", &pure_preview_args(json!(ops)));
    assert_eq!(e.code, "resource_limit");
    assert_eq!(fields(&e), ["operations"]);
    let ops: Vec<Value> = (0..256).map(|_| lifecycle_op(Value::Null)).collect();
    assert!(pipeline("preview_concept_patch", &pure_preview_args(json!(ops))).is_ok());
    // Diagnostics of one field are ordered by keyword name: minLength before pattern.
    let e = input_error(
        "read_concept",
        &json!({"bundle_path": missing, "concept_id": ""}),
    );
    let m = messages(&e);
    assert_eq!(fields(&e), ["concept_id", "concept_id"], "{m:?}");
    assert!(m[0].contains("at least 1 character"), "{m:?}");
    assert!(m[1].contains("bundle-relative concept id"), "{m:?}");
    assert_no_io(&t, &missing);
}

#[test]
fn sch_04_bad_temporal_profile_names_both_ids_and_the_corrected_call_succeeds() {
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let out = call(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "instant"}),
    );
    assert_eq!(out.structured()["code"], "schema_validation");
    let d = &out.structured()["diagnostics"][0];
    assert_eq!(d["field"], "temporal_profile");
    let m = d["message"].as_str().expect("message");
    assert!(
        m.contains("date-3fcbb9f") && m.contains("instant-0b87c52"),
        "{m}"
    );
    let ok = call(
        "list_concepts",
        &json!({"bundle_path": b, "temporal_profile": "instant-0b87c52"}),
    );
    assert_eq!(ok.code, 0, "{}", ok.stdout);
    assert_eq!(snapshot(&b), before);
    assert!(!b.join(".okf").exists());
}

#[test]
fn sch_05_twenty_faults_give_at_most_eight_sorted_diagnostics_within_4096_bytes() {
    let mut ops = Vec::new();
    for i in 0..20 {
        ops.push(
            json!({"kind": "set_lifecycle", "concept_id": format!("bad{i}.md"),
                        "lifecycle": {"status": "archived", "stale_after": 7}}),
        );
    }
    let args = json!({"bundle_path": 5, "actor": "", "operations": ops, "temporal_profile": "x"});
    let e = input_error("preview_concept_patch", &args);
    assert_eq!(e.code, "schema_validation");
    assert!(
        // Both text items count towards the 4096 bytes (spec/surface.md §18.2).
        e.diagnostics.len() <= 8 && e.diagnostics.len() >= 4,
        "{}",
        e.diagnostics.len()
    );
    let keys: Vec<(String, String)> = e
        .diagnostics
        .iter()
        .map(|d| (d.field.clone(), d.message.clone()))
        .collect();
    let mut fields_sorted: Vec<&String> = keys.iter().map(|(f, _)| f).collect();
    fields_sorted.sort();
    assert_eq!(
        keys.iter().map(|(f, _)| f).collect::<Vec<_>>(),
        fields_sorted
    );
    assert!(error_result(&e).to_string().len() <= 4096);
    // Through the real binary as well.
    let out = call(
        "validate_bundle",
        &json!({"bundle_path": "", "strict": 1, "check_links": 2, "check_orphans": 3,
                "target_version": "9", "temporal_profile": 4, "as_of": 5, "x": 6, "y": 7}),
    );
    let d = out.structured()["diagnostics"].as_array().expect("d");
    assert!(d.len() <= 8);
    assert!(out.stdout.trim_end().len() <= 4096, "{}", out.stdout.len());
    let f: Vec<&str> = d.iter().map(|x| x["field"].as_str().expect("f")).collect();
    let mut s = f.clone();
    s.sort_unstable();
    assert_eq!(f, s);
}

#[test]
fn sch_05_long_guidance_still_fits_4096_bytes() {
    // Ten long concept-id messages plus a profile fault: at most 8 diagnostics, ≤ 4096 bytes.
    let ops: Vec<Value> = (0..10)
        .map(|_| json!({"kind": "set_lifecycle", "concept_id": ".x", "lifecycle": {"status": "stable", "stale_after": null}}))
        .collect();
    let mut args = pure_preview_args(json!(ops));
    args["temporal_profile"] = json!("nope");
    let e = input_error("preview_concept_patch", &args);
    assert!(error_result(&e).to_string().len() <= 4096);
    assert!(!e.diagnostics.is_empty() && e.diagnostics.len() <= 8);
}

#[test]
fn sch_06_enum_lists_values_format_shows_example_multi_branch_names_get_none() {
    let (t, missing) = absent_bundle();
    let out = call(
        "validate_bundle",
        &json!({"bundle_path": missing, "target_version": "1.0"}),
    );
    let m = out.structured()["diagnostics"][0]["message"]
        .as_str()
        .expect("m")
        .to_owned();
    assert!(
        m.contains("\"auto\"") && m.contains("\"0.1\"") && m.contains("\"0.2\""),
        "{m}"
    );
    // format: date (under the date profile, passed explicitly: auto accepts either grammar)
    let out = call(
        "list_concepts",
        &json!({"bundle_path": missing, "temporal_profile": "date-3fcbb9f", "as_of": "2026-02-30"}),
    );
    let d = out.structured()["diagnostics"]
        .as_array()
        .expect("d")
        .clone();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]["message"].as_str().expect("m").contains("2026-01-02"));
    // format: date-time under the instant profile
    let out = call(
        "list_concepts",
        &json!({"bundle_path": missing, "temporal_profile": "instant-0b87c52", "as_of": "2026-02-30T00:00:00Z"}),
    );
    let m = out.structured()["diagnostics"][0]["message"]
        .as_str()
        .expect("m")
        .to_owned();
    assert!(m.contains("2026-01-02T03:04:05Z"), "{m}");
    // as_of is constrained in both profile branches: a type error borrows no example…
    let out = call(
        "list_concepts",
        &json!({"bundle_path": missing, "as_of": 20260102}),
    );
    let m = out.structured()["diagnostics"][0]["message"]
        .as_str()
        .expect("m")
        .to_owned();
    assert!(m.contains("expected JSON string"), "{m}");
    assert!(!m.contains("e.g."), "{m}");
    // …while a single-branch property with examples shows its trusted example.
    let out = call(
        "read_concept",
        &json!({"bundle_path": missing, "concept_id": 7}),
    );
    let m = out.structured()["diagnostics"][0]["message"]
        .as_str()
        .expect("m")
        .to_owned();
    assert!(
        m.contains("expected JSON string") && m.contains("e.g. \"tables/orders\""),
        "{m}"
    );
    // An item of an array never borrows the array's example.
    let e = input_error("preview_concept_patch", &pure_preview_args(json!([5])));
    assert_eq!(fields(&e), ["operations.0"]);
    assert!(e.diagnostics[0].message.contains("expected JSON object"));
    assert!(
        !e.diagnostics[0].message.contains("e.g."),
        "{}",
        e.diagnostics[0].message
    );
    assert_no_io(&t, &missing);
}

#[test]
fn sch_07_missing_operations_shows_an_example_list_that_validates() {
    for tool in ["preview_concept_patch", "apply_concept_patch"] {
        let mut args = pure_apply_args(json!([]));
        args.as_object_mut().expect("obj").remove("operations");
        if tool == "preview_concept_patch" {
            let o = args.as_object_mut().expect("obj");
            o.remove("expected_revision");
            o.remove("expected_plan_digest");
        }
        let e = input_error(tool, &args);
        assert_eq!(fields(&e), ["operations"]);
        let m = &e.diagnostics[0].message;
        let start = m.find("e.g. ").expect("example") + 5;
        let example: Value = serde_json::from_str(&m[start..]).expect("example is JSON");
        args["operations"] = example;
        assert!(
            pipeline(tool, &args).is_ok(),
            "{tool}: the example validates"
        );
        for profile in ["date-3fcbb9f", "instant-0b87c52"] {
            args["temporal_profile"] = json!(profile);
            assert!(pipeline(tool, &args).is_ok(), "{tool} {profile}");
        }
    }
}

#[test]
fn sch_08_deep_or_unadvertised_paths_report_arguments() {
    let t = "preview_concept_patch";
    assert_eq!(
        schema::guidance_field(t, &["operations", "0", "source", "usage_window", "from"]),
        "operations.0.source.usage_window.from"
    );
    let deep = [
        "operations",
        "0",
        "source",
        "usage_window",
        "from",
        "0",
        "1",
        "2",
        "3",
    ];
    assert_eq!(deep.len(), 9);
    assert_eq!(schema::guidance_field(t, &deep), "arguments");
    assert_eq!(
        schema::guidance_field(t, &deep[..8]),
        "operations.0.source.usage_window.from.0.1.2"
    );
    assert_eq!(
        schema::guidance_field(t, &["operations", "1234567"]),
        "arguments"
    );
    assert_eq!(
        schema::guidance_field(t, &["operations", "123456"]),
        "operations.123456"
    );
    assert_eq!(
        schema::guidance_field(t, &["sk_live_SECRET", "0"]),
        "arguments"
    );
    // End to end: an unknown key nested in an advertised object never appears; the field is
    // the advertised parent.
    let mut args = pure_preview_args(json!([lifecycle_op(Value::Null)]));
    args["operations"][0]["lifecycle"]["sk_live_SECRET"] = json!("hunter2");
    let e = input_error(t, &args);
    assert_eq!(fields(&e), ["operations.0.lifecycle"]);
    let text = error_result(&e).to_string();
    assert!(
        !text.contains("sk_live_SECRET") && !text.contains("hunter2"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// PAT-06, PAT-11, PAT-13, PAT-14 (schema side, before any I/O)
// ---------------------------------------------------------------------------------------------

#[test]
fn pat_06_uppercase_digest_is_schema_validation() {
    let mut args = pure_apply_args(json!([lifecycle_op(Value::Null)]));
    assert!(pipeline("apply_concept_patch", &args).is_ok());
    args["expected_plan_digest"] = json!(format!("sha256:{}", "ABC".repeat(21) + "D"));
    let e = input_error("apply_concept_patch", &args);
    assert_eq!(e.code, "schema_validation");
    assert_eq!(fields(&e), ["expected_plan_digest"]);
    assert!(e.diagnostics[0].message.contains("fresh preview"));
    let mut args = pure_apply_args(json!([lifecycle_op(Value::Null)]));
    args["expected_revision"] = json!(REV
        .to_uppercase()
        .replace("SHA256", "sha256")
        .replace('0', "A"));
    assert_eq!(
        input_error("apply_concept_patch", &args).code,
        "schema_validation"
    );
}

const VALID_INSTANTS: [&str; 4] = [
    "2026-09-26T12:34:56Z",
    "2026-09-26T12:34:56.1200+07:00",
    "2026-09-26T12:34:56+00:00",
    "2026-09-26T12:34:56-00:30",
];
const INVALID_INSTANTS: [&str; 9] = [
    "2026-09-26T12:34:56",
    "2026-09-26T12:34:56-00:00",
    "2026-09-26T12:34:56+24:00",
    "2026-09-26T12:34:60Z",
    "2026-12-31T23:59:60Z",
    "2026-02-30T12:34:56Z",
    "2026-09-26T12:34:56,5Z",
    "2026-09-26t12:34:56Z",
    "2026-09-26T12:34:56z",
];
const DATES: [(&str, bool); 6] = [
    ("2026-12-31", true),
    ("2024-02-29", true),
    ("2026-02-30", false),
    ("2026-1-01", false),
    ("2026-12-31T00:00:00Z", false),
    ("２０２６-12-31", false),
];

fn with_profile(mut args: Value, profile: &str) -> Value {
    args["temporal_profile"] = json!(profile);
    args
}

#[test]
fn pat_11_temporal_vectors_agree_between_schema_and_runtime_under_both_profiles() {
    let mut vectors: Vec<(&str, Option<bool>)> = Vec::new();
    vectors.extend(VALID_INSTANTS.iter().map(|v| (*v, None)));
    vectors.extend(INVALID_INSTANTS.iter().map(|v| (*v, None)));
    vectors.extend(DATES.iter().map(|(v, _)| (*v, None)));
    for (v, _) in vectors {
        for profile in [Profile::Date, Profile::Instant] {
            let runtime = profile.is_valid(v);
            // Patch inputs: stale_after, a usage window, a source's last_modified.
            let ops = json!([
                lifecycle_op(json!(v)),
                {"kind": "set_usage_window", "concept_id": "a", "usage_window": {"from": v, "to": v}},
                {"kind": "put_source", "concept_id": "a", "source": {"resource": "r", "last_modified": v,
                                                                       "usage_window": {"from": v, "to": v}}}
            ]);
            for tool in ["preview_concept_patch", "apply_concept_patch"] {
                let args = with_profile(pure_apply_args(ops.clone()), profile.id());
                let args = if tool == "preview_concept_patch" {
                    let mut a = args;
                    let o = a.as_object_mut().expect("obj");
                    o.remove("expected_revision");
                    o.remove("expected_plan_digest");
                    a
                } else {
                    args
                };
                let r = pipeline(tool, &args);
                assert_eq!(r.is_ok(), runtime, "{tool} {} {v}: {r:?}", profile.id());
            }
            // as_of of the read tools.
            for tool in ["list_concepts", "validate_bundle"] {
                let args =
                    json!({"bundle_path": "/x", "temporal_profile": profile.id(), "as_of": v});
                assert_eq!(
                    pipeline(tool, &args).is_ok(),
                    runtime,
                    "{tool} {} as_of {v}",
                    profile.id()
                );
            }
        }
        // generated.at / verification.at: offset datetimes under both profiles.
        let runtime = parse_offset_datetime(v).is_some();
        for profile in ["date-3fcbb9f", "instant-0b87c52"] {
            let ops = json!([
                {"kind": "set_generated", "concept_id": "a", "generated": {"by": "process:x", "at": v}},
                {"kind": "ensure_verification", "concept_id": "a", "verification": {"by": "human:x", "at": v}}
            ]);
            let r = pipeline(
                "preview_concept_patch",
                &with_profile(pure_preview_args(ops), profile),
            );
            assert_eq!(r.is_ok(), runtime, "generated.at {profile} {v}");
        }
    }
    // The spec's expectations, not only parity.
    for v in VALID_INSTANTS {
        assert!(Profile::Instant.is_valid(v), "{v}");
    }
    for v in INVALID_INSTANTS {
        assert!(!Profile::Instant.is_valid(v), "{v}");
    }
    for (v, ok) in DATES {
        assert_eq!(Profile::Date.is_valid(v), ok, "{v}");
    }
    let date_only = pure_preview_args(json!([lifecycle_op(json!("2026-12-31"))]));
    assert!(pipeline("preview_concept_patch", &date_only).is_ok());
    assert!(pipeline(
        "preview_concept_patch",
        &with_profile(date_only, "instant-0b87c52")
    )
    .is_err());
}

#[test]
fn pat_13_missing_or_null_required_payload_members_fail_before_io() {
    let mut no_params = computation("file");
    no_params.as_object_mut().expect("obj").remove("parameters");
    let mut null_params = computation("file");
    null_params["parameters"] = Value::Null;
    let mut no_required = computation("inline");
    no_required["parameters"][0]
        .as_object_mut()
        .expect("obj")
        .remove("required");
    // Since spec/concept-patch.md §11.1 a lifecycle member may be absent (kept); an empty
    // lifecycle is the failure.
    let no_status = json!({"kind": "set_lifecycle", "concept_id": "a", "lifecycle": {}});
    let cases = [
        (
            computation_op(no_params),
            "operations.0.attested_computation.parameters",
        ),
        (
            computation_op(null_params),
            "operations.0.attested_computation.parameters",
        ),
        (
            computation_op(no_required),
            "operations.0.attested_computation.parameters.0.required",
        ),
        (no_status, "operations.0.lifecycle"),
    ];
    for (op, field) in cases {
        for tool in ["preview_concept_patch", "apply_concept_patch"] {
            let mut args = pure_apply_args(json!([op.clone()]));
            if tool == "preview_concept_patch" {
                let o = args.as_object_mut().expect("obj");
                o.remove("expected_revision");
                o.remove("expected_plan_digest");
            }
            let e = input_error(tool, &args);
            assert_eq!(e.code, "schema_validation", "{tool} {field}");
            assert!(
                fields(&e).contains(&field.to_owned()),
                "{tool}: {:?}",
                fields(&e)
            );
        }
    }
    // Explicit nulls in lifecycle are valid; empty parameters are valid; both modes valid.
    let ok = json!([
        {"kind": "set_lifecycle", "concept_id": "a", "lifecycle": {"status": null, "stale_after": null}},
        computation_op(computation("file")),
        computation_op(computation("inline")),
        computation_op({let mut c = computation("file"); c["parameters"] = json!([]); c}),
    ]);
    assert!(pipeline("preview_concept_patch", &pure_preview_args(ok.clone())).is_ok());
    assert!(pipeline("apply_concept_patch", &pure_apply_args(ok)).is_ok());
}

#[test]
fn pat_14_caps_are_resource_limit_and_wrong_payloads_schema_validation() {
    let one = json!([lifecycle_op(Value::Null)]);
    let mut cases: Vec<(Value, &str)> = Vec::new();
    let mut a = pure_preview_args(one.clone());
    a["actor"] = json!("a".repeat(257));
    cases.push((a, "actor"));
    let ops: Vec<Value> = (0..257).map(|_| lifecycle_op(Value::Null)).collect();
    cases.push((pure_preview_args(json!(ops)), "operations"));
    let src =
        json!({"kind": "put_source", "concept_id": "a", "source": {"resource": "r".repeat(4097)}});
    cases.push((
        pure_preview_args(json!([src])),
        "operations.0.source.resource",
    ));
    let mut c = computation("file");
    c["parameters"] = json!((0..257)
        .map(|i| json!({"name": format!("p{i}"), "type": "t", "required": false}))
        .collect::<Vec<_>>());
    cases.push((
        pure_preview_args(json!([computation_op(c)])),
        "operations.0.attested_computation.parameters",
    ));
    let mut c = computation("inline");
    c["inline_computation"] = json!("x".repeat(1024 * 1024 + 1));
    cases.push((
        pure_preview_args(json!([computation_op(c)])),
        "operations.0.attested_computation.inline_computation",
    ));
    for (args, field) in cases {
        let e = input_error("preview_concept_patch", &args);
        assert_eq!(e.code, "resource_limit", "{field}");
        assert!(
            fields(&e).contains(&field.to_owned()),
            "{field}: {:?}",
            fields(&e)
        );
        assert_eq!(
            e.diagnostics
                .iter()
                .filter(|d| d.code == "recovery_step")
                .count(),
            1
        );
    }
    // At the caps: accepted.
    let mut a = pure_preview_args(one);
    a["actor"] = json!("a".repeat(256));
    assert!(pipeline("preview_concept_patch", &a).is_ok());
    let mut c = computation("inline");
    c["inline_computation"] = json!("x".repeat(1024 * 1024));
    assert!(pipeline(
        "preview_concept_patch",
        &pure_preview_args(json!([computation_op(c)]))
    )
    .is_ok());
    // Wrong kinds / extra payloads.
    for (op, field) in [
        (
            json!({"kind": "set_bundle_version", "version": "0.2", "concept_id": "a"}),
            "operations.0.concept_id",
        ),
        (
            json!({"kind": "put_source", "concept_id": "a", "source": {"resource": "r"}, "source_id": "s"}),
            "operations.0.source_id",
        ),
        (
            json!({"kind": "set_lifecycle", "concept_id": "a", "lifecycle": {"status": null, "stale_after": null}, "generated": {"by": "process:x"}}),
            "operations.0.generated",
        ),
        (
            json!({"kind": "rename_concept", "concept_id": "a"}),
            "operations.0.kind",
        ),
        (
            json!({"kind": "set_bundle_version", "version": "0.3"}),
            "operations.0.version",
        ),
        (
            computation_op({
                let mut c = computation("file");
                c["inline_language"] = json!("py");
                c
            }),
            "operations.0.attested_computation.inline_language",
        ),
        (
            computation_op({
                let mut c = computation("inline");
                c["computation_path"] = json!("x.py");
                c
            }),
            "operations.0.attested_computation.computation_path",
        ),
        (
            computation_op({
                let mut c = computation("inline");
                c.as_object_mut().expect("o").remove("inline_computation");
                c
            }),
            "operations.0.attested_computation.inline_computation",
        ),
    ] {
        for tool in ["preview_concept_patch", "apply_concept_patch"] {
            let mut args = pure_apply_args(json!([op.clone()]));
            if tool == "preview_concept_patch" {
                let o = args.as_object_mut().expect("obj");
                o.remove("expected_revision");
                o.remove("expected_plan_digest");
            }
            let e = input_error(tool, &args);
            assert_eq!(e.code, "schema_validation", "{tool} {field}");
            assert!(
                fields(&e).contains(&field.to_owned()),
                "{tool} {field}: {:?}",
                fields(&e)
            );
        }
    }
    // Selectors are runtime checks (concept-patch.md §2.2): the schema lets both through.
    let both = json!({"kind": "remove_source", "concept_id": "a", "source_id": "s", "source": {"resource": "r", "id": "x"}});
    assert!(pipeline("preview_concept_patch", &pure_preview_args(json!([both]))).is_ok());
}

#[test]
fn concept_id_schema_agrees_with_the_runtime_grammar() {
    use okf_mcp::okf::grammar::check_concept_id;
    let ids = [
        "東京/данные/100%+ready=да",
        "a b/c",
        "tables/orders",
        "log/2026",
        "",
        "/a",
        "a/",
        "a//b",
        "a\\b",
        "a:b",
        "file:x",
        ".hidden",
        "a/../b",
        "a/./b",
        "a.md",
        " a",
        "a ",
        "a\tb",
        "index",
        "x/log",
        "x/index",
        "a\u{7f}",
        "a\u{3000}",
        "\u{a0}a",
        "a\u{85}",
        "\u{feff}a",
        "a.mdx",
        "a/.b/c",
        "a/b.",
        "indexes",
        "a\u{2028}",
    ];
    for id in ids {
        let args = json!({"bundle_path": "/x", "concept_id": id});
        let schema_ok = pipeline("read_concept", &args).is_ok();
        assert_eq!(schema_ok, check_concept_id(id).is_ok(), "{id:?}");
    }
    let long = "a".repeat(4097);
    let e = input_error(
        "read_concept",
        &json!({"bundle_path": "/x", "concept_id": long}),
    );
    assert_eq!(e.code, "resource_limit");
}

// ---------------------------------------------------------------------------------------------
// Success schemas describe the outputs of the spec (surface.md §12, concept-patch.md §5, §10)
// ---------------------------------------------------------------------------------------------

/// Whether `v` passes `tool`'s output schema as a success object. The objects written in
/// these tests leave out `notices` (spec/surface.md §18.1 rule 2), which the dispatcher adds
/// to every success: `[]` is added here when absent.
fn out_ok(tool: &str, v: &Value) -> bool {
    schema::validate_output(tool, &with_empty_notices(v), false).is_ok()
}

/// `v` with `"notices": []` when it is an object without one.
fn with_empty_notices(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.entry("notices").or_insert(json!([]));
    }
    v
}

#[test]
fn every_success_schema_requires_notices_of_info_and_warn_only_at_most_100() {
    let tools: Vec<&str> = okf_mcp::tools::TOOLS.iter().map(|t| t.name).collect();
    assert!(tools.len() >= 10, "registry read: {tools:?}");
    for t in &tools {
        let s: Value = serde_json::from_str(
            okf_mcp::tools::TOOLS
                .iter()
                .find(|x| x.name == *t)
                .map(|x| x.output_schema)
                .expect("registered"),
        )
        .expect("schema JSON");
        let success = &s["$defs"]["success"];
        assert_eq!(
            success["properties"]["notices"]["$ref"], "#/$defs/notices",
            "{t}"
        );
        assert!(
            success["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("notices"))),
            "{t}: notices is required"
        );
    }
    let ok = json!({"status": "success", "path": "a.md", "diagnostics": []});
    let check = |notices: Option<Value>| {
        let mut v = ok.clone();
        if let Some(n) = notices {
            v["notices"] = n;
        }
        schema::validate_output("write_concept", &v, false).is_ok()
    };
    assert!(!check(None), "a success without notices is refused");
    assert!(check(Some(json!([]))));
    assert!(check(Some(json!([diag("WARN"), diag("INFO")]))));
    assert!(!check(Some(json!([diag("ERROR")]))), "no ERROR notice");
    assert!(check(Some(json!(vec![diag("INFO"); 100]))));
    assert!(!check(Some(json!(vec![diag("INFO"); 101]))), "at most 100");
}

fn diag(severity: &str) -> Value {
    json!({"code": "x_y", "severity": severity, "file": "", "field": "", "message": "m", "spec_ref": "", "policy_failure": false})
}

const REV2: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

#[test]
fn preview_and_apply_success_schemas_carry_the_state_invariants() {
    let applicable = json!({"status": "applicable", "base_revision": REV, "result_revision": REV2,
        "plan_digest": REV2, "diff": "--- a/x.md\n", "diff_truncated": false,
        "affected_paths": ["x.md"], "diagnostics": [diag("WARN")], "unknown_preserved": true,
        "temporal_profile": "date-3fcbb9f", "temporal_profile_source": "detected"});
    assert!(out_ok("preview_concept_patch", &applicable));
    let noop = json!({"status": "noop", "base_revision": REV, "result_revision": REV,
        "plan_digest": REV2, "diff": "", "diff_truncated": false, "affected_paths": [],
        "diagnostics": [], "unknown_preserved": true,
        "temporal_profile": "instant-0b87c52", "temporal_profile_source": "explicit"});
    assert!(out_ok("preview_concept_patch", &noop));
    let rejected = json!({"status": "rejected", "base_revision": REV, "result_revision": null,
        "plan_digest": REV2, "diff": "", "diff_truncated": false, "affected_paths": [],
        "diagnostics": [diag("ERROR")], "unknown_preserved": false,
        "temporal_profile": "date-3fcbb9f", "temporal_profile_source": "default"});
    assert!(out_ok("preview_concept_patch", &rejected));
    let broken = |base: &Value, key: &str, v: Value| {
        let mut b = base.clone();
        b[key] = v;
        b
    };
    for bad in [
        broken(&applicable, "diagnostics", json!([diag("ERROR")])),
        broken(&applicable, "affected_paths", json!([])),
        broken(&applicable, "diff", json!("")),
        broken(&applicable, "unknown_preserved", json!(false)),
        broken(&applicable, "extra", json!(1)),
        broken(&noop, "affected_paths", json!(["x.md"])),
        broken(&noop, "diff", json!("x")),
        broken(&rejected, "result_revision", json!(REV)),
        broken(&rejected, "diagnostics", json!([diag("WARN")])),
        broken(&rejected, "unknown_preserved", json!(true)),
        broken(&rejected, "plan_digest", json!("sha256:ABC")),
        // spec/surface.md §18.1 rule 1: the resolved id (never auto) and its source.
        broken(&applicable, "temporal_profile", json!("auto")),
        broken(&applicable, "temporal_profile_source", json!("guessed")),
        broken(&applicable, "temporal_profile_source", Value::Null),
    ] {
        assert!(!out_ok("preview_concept_patch", &bad), "{bad}");
    }
    let mut truncated = applicable.clone();
    truncated["diff"] = json!("");
    truncated["diff_truncated"] = json!(true);
    assert!(out_ok("preview_concept_patch", &truncated));

    let applied = json!({"status": "applied", "base_revision": REV, "result_revision": REV2,
        "plan_digest": REV2, "changed_paths": ["x.md"], "diagnostics": [],
        "temporal_profile": "date-3fcbb9f", "temporal_profile_source": "detected"});
    assert!(out_ok("apply_concept_patch", &applied));
    let mut replayed = applied.clone();
    replayed["diagnostics"] = json!([diag("INFO")]);
    assert!(out_ok("apply_concept_patch", &replayed));
    for bad in [
        broken(&applied, "diagnostics", json!([diag("WARN")])),
        broken(&applied, "changed_paths", json!([])),
        broken(&applied, "changed_paths", json!(["x.md", "x.md"])),
        broken(&applied, "result_revision", Value::Null),
        broken(&applied, "status", json!("replayed")),
        broken(&applied, "temporal_profile", json!("")),
    ] {
        assert!(!out_ok("apply_concept_patch", &bad), "{bad}");
    }
    let rejected = json!({"status": "rejected", "base_revision": REV, "result_revision": REV,
        "plan_digest": REV2, "changed_paths": [], "diagnostics": [diag("ERROR")],
        "temporal_profile": "instant-0b87c52", "temporal_profile_source": "detected"});
    assert!(out_ok("apply_concept_patch", &rejected));
    assert!(!out_ok(
        "apply_concept_patch",
        &broken(&rejected, "diagnostics", json!([]))
    ));
}

#[test]
fn write_concept_success_uses_loose_diagnostics_with_code_prefixes() {
    let ok = json!({"status": "success", "path": "tables/orders.md", "diagnostics": [
        {"severity": "WARN", "message": "preexisting_error: x", "file": "a.md"},
        {"severity": "INFO", "message": "receipt_replayed: answered from the stored receipt; nothing was written now"}]});
    assert!(out_ok("write_concept", &ok));
    for (k, v) in [
        ("status", json!("noop")),
        ("path", json!("tables/orders")),
        (
            "diagnostics",
            json!([{"severity": "INFO", "message": "no code prefix"}]),
        ),
        (
            "diagnostics",
            json!([{"severity": "INFO", "message": "x: y", "file": ""}]),
        ),
        ("diagnostics", json!([diag("INFO")])),
    ] {
        let mut b = ok.clone();
        b[k] = v;
        assert!(!out_ok("write_concept", &b), "{b}");
    }
}

fn version_null() -> Value {
    json!({"declared": null, "effective": null, "resolution": null, "compatibility": null})
}

#[test]
fn read_tool_success_schemas_follow_surface_12() {
    let version = json!({"declared": "0.2", "effective": "0.2", "resolution": "declared", "compatibility": "native"});
    let decl = json!({"present": true, "valid": true, "raw": "0.2", "value": "0.2"});
    let state = json!({"present": false, "valid": true, "raw": null, "effective": "stable"});
    let entry = json!({"id": "a", "path": "a.md", "type": "Table", "title": null, "description": null,
        "tags": ["t"], "status": "stable", "trust": "unverified", "stale": null, "stale_after": null,
        "status_state": state, "generated_at": null, "source_count": 0,
        "computation": {"present": false, "runtime": null, "executor": null, "attester": null},
        "legacy_derived": {"generated": false, "citations": false}, "parse_error": null});
    let unparsed = json!({"id": "b", "path": "b.md", "type": null, "title": null, "description": null,
        "tags": [], "status": null, "trust": "unverified", "stale": null, "stale_after": null,
        "status_state": null, "generated_at": null, "source_count": 0,
        "computation": {"present": false, "runtime": null, "executor": null, "attester": null},
        "legacy_derived": {"generated": false, "citations": false}, "parse_error": "invalid_frontmatter"});
    let list = json!({"version": version, "version_declaration": decl, "temporal_profile": "date-3fcbb9f",
        "temporal_profile_source": "default", "as_of": null, "concepts": [entry, unparsed], "total": 2, "next_cursor": null});
    assert!(out_ok("list_concepts", &list));
    let mut bad = list.clone();
    bad["concepts"][1]["type"] = json!("Table");
    assert!(
        !out_ok("list_concepts", &bad),
        "unparsed entries carry nulls"
    );
    let mut bad = list.clone();
    bad["concepts"][0]["status_state"] = Value::Null;
    assert!(
        !out_ok("list_concepts", &bad),
        "only unparsed entries have a null status_state"
    );
    let mut bad = list.clone();
    bad["temporal_profile"] = json!("");
    assert!(
        !out_ok("list_concepts", &bad),
        "outputs echo the normalised id"
    );
    let mut invalid_decl = list.clone();
    invalid_decl["version"] = version_null();
    invalid_decl["version_declaration"] =
        json!({"present": true, "valid": false, "raw": null, "value": null});
    assert!(out_ok("list_concepts", &invalid_decl));

    let read = json!({"id": "a", "path": "a.md", "version": version, "version_declaration": decl,
        "temporal_profile": "instant-0b87c52", "temporal_profile_source": "explicit", "frontmatter_yaml": "type: T\n", "body": "# A\n",
        "projection": {"type": "T", "title": null, "description": null, "resource": null, "tags": [],
            "sources": [{"id": null, "resource": "https://example.test", "title": null, "author": null,
                         "usage_count": 3, "last_modified": null, "usage_window": null}],
            "attributions": [{"label": "S1", "source_id": null, "count": 2}],
            "usage_window": {"from": "2026-01-01T00:00:00Z", "to": "2026-02-01T00:00:00Z"},
            "generated": {"by": "process:x", "at": null}, "verified": [{"by": "human:a", "at": "2026-01-02T03:04:05Z"}],
            "trust": "human-reviewed", "status": "draft",
            "status_state": {"present": true, "valid": true, "raw": "draft", "effective": "draft"},
            "stale_after": null,
            "computation": {"present": false, "runtime": null, "parameters": [], "computation_path": null,
                            "inline": false, "executor": null, "attester": null}},
        "legacy_fallback": {"generated_from_timestamp": false, "sources_from_citations": false}});
    assert!(out_ok("read_concept", &read));
    let mut bad = read.clone();
    bad["projection"]["sources"][0]["usage_count"] = json!("3");
    assert!(!out_ok("read_concept", &bad));
    let mut bad = read.clone();
    bad["projection"]["stale"] = json!(null);
    assert!(
        !out_ok("read_concept", &bad),
        "the projection has no stale member"
    );

    let report = json!({"version": version, "version_declaration": decl, "temporal_profile": "date-3fcbb9f",
        "temporal_profile_source": "detected", "scanned_files": 3, "conformance": {"conformant": true, "errors": 0},
        "guidance": {"warnings": 1, "info": 0}, "diagnostics": [diag("WARN")],
        "diagnostic_counts": {"x_y": 1}, "diagnostics_truncated": false});
    assert!(out_ok("validate_bundle", &report));
    let mut with_as_of = report.clone();
    with_as_of["as_of"] = json!("2026-01-02");
    assert!(out_ok("validate_bundle", &with_as_of));
    let mut null_as_of = report.clone();
    null_as_of["as_of"] = Value::Null;
    assert!(
        !out_ok("validate_bundle", &null_as_of),
        "validate_bundle omits an absent as_of"
    );
}
