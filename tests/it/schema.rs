//! The checked-in schemas (spec/surface.md §17): the generation gate, structure (SRV-03),
//! envelope shape (SRV-06), input guidance (SCH-01…08) and the patch-input schema cases
//! (PAT-06, PAT-11, PAT-13, PAT-14).

use crate::util::*;
use okf_mcp::wire::schema_gen;
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

use okf_mcp::okf::temporal::{parse_offset_datetime, Profile};
use okf_mcp::wire::envelope::ToolError;
use okf_mcp::wire::{alias, schema};

fn read_schema(name: &str) -> Value {
    let text = std::fs::read_to_string(schemas_dir().join(name)).expect("schema file");
    serde_json::from_str(&text).expect("schema JSON")
}

fn schema_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(schemas_dir())
        .expect("schemas dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
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
        Err(e) => e,
    }
}

/// The CallToolResult JSON of an error, as the dispatcher builds it.
fn error_result(e: &ToolError) -> Value {
    json!({"content": [{"type": "text", "text": e.wire_message()}], "structuredContent": e.to_wire(), "isError": true})
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

const REV: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

fn lifecycle_op(stale_after: Value) -> Value {
    json!({"kind": "set_lifecycle", "concept_id": "tables/orders", "lifecycle": {"status": "stable", "stale_after": stale_after}})
}

fn preview_args(ops: Value) -> Value {
    json!({"bundle_path": "/nonexistent/okf-bundle", "actor": "agent-1", "operations": ops})
}

fn apply_args(ops: Value) -> Value {
    json!({"bundle_path": "/nonexistent/okf-bundle", "actor": "agent-1", "operations": ops,
           "expected_revision": REV, "expected_plan_digest": REV})
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

#[test]
fn srv_03_structure_of_every_checked_in_schema() {
    for f in schema_files() {
        let root = read_schema(&f);
        let text = std::fs::read_to_string(schemas_dir().join(&f)).expect("text");
        assert!(!text.contains("\\\\d"), "{f}: \\d in a pattern");
        assert_eq!(root["$schema"], schema_gen::SCHEMA_DRAFT, "{f}");
        assert_eq!(root["$id"], format!("https://okf.dev/mcp/v0.2/{f}"), "{f}");
        let is_input = f.ends_with(".input.schema.json");
        let is_output = f.ends_with(".output.schema.json");
        if is_output {
            assert_eq!(root["type"], "object", "{f}");
            assert_eq!(
                root["anyOf"],
                json!([{"$ref": "#/$defs/success"}, {"$ref": "#/$defs/error_envelope"}]),
                "{f}"
            );
            assert!(root.get("additionalProperties").is_none(), "{f}: output root");
        }
        let nodes = all_nodes(&root);
        // Every $ref is local and resolves.
        for (p, n, _, _) in &nodes {
            if let Some(r) = n.get("$ref") {
                let r = r.as_str().expect("ref string");
                let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("{f}{p}: non-local {r}"));
                assert!(root["$defs"].get(name).is_some(), "{f}{p}: dangling {r}");
            }
        }
        let mut with_props = 0;
        for (p, n, in_branch, direct_branch) in &nodes {
            let Some(obj) = n.as_object() else { continue };
            if obj.contains_key("properties") {
                with_props += 1;
                let ap = obj.get("additionalProperties");
                assert!(
                    matches!(ap, Some(Value::Bool(_))),
                    "{f}{p}: properties without explicit additionalProperties"
                );
                if is_input {
                    let expected = *in_branch;
                    assert_eq!(
                        ap,
                        Some(&Value::Bool(expected)),
                        "{f}{p}: input member nodes are closed, branch nodes open"
                    );
                }
            } else if *direct_branch {
                assert!(
                    !obj.contains_key("additionalProperties"),
                    "{f}{p}: branch node without properties carries additionalProperties"
                );
            }
        }
        if f != schema_gen::MIGRATION_FILE {
            assert!(with_props > 0, "{f}: the walk saw objects");
        }
    }
}

#[test]
fn srv_03_examples_validate_against_their_property_and_the_full_input_schema() {
    let mut seen = 0;
    for t in schema_gen::PHASE1_TOOLS {
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
                assert!(full.is_valid(&input), "{t}.{name}: example vs the full schema");
                seen += 1;
            }
        }
    }
    assert!(seen >= 10, "examples checked: {seen}");
}

#[test]
fn srv_03_advertised_schemas_equal_the_checked_in_files() {
    let mut mcp = Mcp::start();
    let l = mcp.request("tools/list", json!({}));
    let tools = l["result"]["tools"].as_array().expect("tools");
    assert!(!tools.is_empty());
    for t in tools {
        let name = t["name"].as_str().expect("name");
        assert_eq!(t["inputSchema"], read_schema(&format!("{name}.input.schema.json")), "{name}");
        assert_eq!(t["outputSchema"], read_schema(&format!("{name}.output.schema.json")), "{name}");
        // Member order preserved (serde_json preserve_order), not only JSON equality.
        let keys: Vec<&String> = t["outputSchema"].as_object().expect("obj").keys().collect();
        let file = read_schema(&format!("{name}.output.schema.json"));
        let file_keys: Vec<&String> = file.as_object().expect("obj").keys().collect();
        assert_eq!(keys, file_keys, "{name}");
        assert_eq!(
            t["description"].as_str(),
            okf_mcp::wire::descriptions::for_tool(name),
            "{name}"
        );
    }
    mcp.finish();
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
        ("read_concept", json!({"bundle_path": missing, "concept_id": "tables/orders"})),
        ("validate_bundle", json!({"bundle_path": missing, "strict": "yes"})),
        ("list_concepts", json!({"bundle_path": missing, "bundlePath": "x"})),
    ];
    for (tool, args) in cases {
        let spec = l["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|x| x["name"] == tool)
            .expect("registered");
        let out_schema = validator(&spec["outputSchema"]);
        let r = mcp.call(tool, &args);
        assert_eq!(r["isError"], json!(true), "{tool}: {r}");
        let env = &r["structuredContent"];
        let keys: Vec<&String> = env.as_object().expect("envelope").keys().collect();
        assert_eq!(keys, ["code", "message", "retryable", "diagnostics"], "{tool}");
        assert!(env["diagnostics"].is_array());
        assert_eq!(r["content"][0]["text"], env["message"], "{tool}");
        assert!(out_schema.is_valid(env), "{tool}: {env}");
        let cli = call(tool, &args);
        assert_eq!(cli.code, 1);
        assert_eq!(identity(cli.result.as_ref().expect("json")), identity(&r), "{tool}");
    }
    mcp.finish();
    assert_no_io(&t, &missing);
}

#[test]
fn srv_06_output_schemas_accept_envelopes_and_reject_other_shapes() {
    let env = json!({"code": "invalid_request", "message": "m", "retryable": false, "diagnostics": []});
    for t in schema_gen::PHASE1_TOOLS {
        let v = validator(&read_schema(&format!("{t}.output.schema.json")));
        assert!(v.is_valid(&env), "{t}");
        let mut extra = env.clone();
        extra["hint"] = json!("x");
        assert!(!v.is_valid(&extra), "{t}: envelope is closed and success must not match it");
        let mut no_diags = env.clone();
        no_diags.as_object_mut().expect("obj").remove("diagnostics");
        assert!(!v.is_valid(&no_diags), "{t}: diagnostics always present");
    }
}
