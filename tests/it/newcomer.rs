//! The newcomer test (issue 13, acceptance): a scripted agent that knows only `tools/list`.
//!
//! The agent is given a task in words: "deprecate concept X, add source Y, record that
//! process:nightly verified it, confirm (preview, then apply)". Everything else it takes from
//! what `tools/list` says over the real stdio server: which tool previews and which applies
//! (names and the preview's description), which operation kinds exist and which payload each
//! one requires (the description of `kind` in the `operations` items schema, definitions
//! inlined), which member of which payload carries the value
//! `deprecated`, what an `actor` looks like (the schema's example), what an `at` is (`format:
//! date-time`), and which preview output each apply input takes (the input's description).
//! It never passes `temporal_profile`, and never sends an optional member the task does not
//! call for.
//!
//! It runs on a copy of an instant-profile bundle (`fixtures/bundles/demo-instant`) and of a
//! date-profile bundle (`fixtures/bundles/demo-date`). Both must succeed with no
//! `temporal_profile_mismatch` anywhere (preview, apply, and a `validate_bundle` afterwards
//! with the profile left out too), the resolved profile echoed as `detected`, and the
//! concept's existing `stale_after` line byte-identical (spec/temporal.md §11,
//! spec/concept-patch.md §11.1, scenarios AUT-01 and AUT-02).

use crate::support::util::{copy_bundle, fixture, Mcp};
use serde_json::{json, Map, Value};
use std::path::Path;

/// What the agent knows of one tool: its name, description and input schema.
struct Tool {
    name: String,
    description: String,
    schema: Value,
}

/// Follows a local `$ref` (`#/$defs/<name>`) inside `root`, once or repeatedly (the
/// advertised schemas have none: spec/surface.md §18.6 rule 3a; a no-op there).
fn deref<'a>(root: &'a Value, mut v: &'a Value) -> &'a Value {
    while let Some(r) = v.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("a local $ref");
        v = &root["$defs"][name];
    }
    v
}

/// The required members of an object schema.
fn required(v: &Value) -> Vec<String> {
    v["required"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// An RFC 3339 timestamp for a `format: date-time` member: the current UTC time, to the
/// second (what an agent would write for "now").
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let days = i64::try_from(secs / 86_400).expect("days");
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// One operation object: `kind`, `concept_id` and one payload member.
fn op(kind: &str, concept: &str, member: &str, payload: Value) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), json!(kind));
    m.insert("concept_id".into(), json!(concept));
    m.insert(member.into(), payload);
    Value::Object(m)
}

/// The scripted newcomer.
struct Agent {
    mcp: Mcp,
    tools: Vec<Tool>,
}

impl Agent {
    /// Starts the server and reads `tools/list`: the agent's only documentation.
    fn start() -> Self {
        let mut mcp = Mcp::start();
        let list = mcp.request("tools/list", json!({}));
        let tools = list["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| Tool {
                name: t["name"].as_str().expect("name").to_owned(),
                description: t["description"].as_str().unwrap_or_default().to_owned(),
                schema: t["inputSchema"].clone(),
            })
            .collect();
        Agent { mcp, tools }
    }

    fn tool(&self, name: &str) -> &Tool {
        self.tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("tools/list has no {name}"))
    }

    /// The previewing tool: a `preview_*` tool that takes `operations`, and the `apply_*`
    /// tool its description names.
    fn pick_tools(&self) -> (String, String) {
        let preview = self
            .tools
            .iter()
            .find(|t| {
                t.name.starts_with("preview_") && t.schema["properties"].get("operations").is_some()
            })
            .expect("a preview tool that takes operations");
        let apply = self
            .tools
            .iter()
            .find(|t| {
                t.name.starts_with("apply_")
                    && t.schema["properties"].get("operations").is_some()
                    && preview.description.contains(&t.name)
            })
            .expect("the apply tool the preview names");
        (preview.name.clone(), apply.name.clone())
    }

    /// The operation kinds of `tool` and, per kind, its required payload members, read from
    /// the description of `kind` in the `operations` items schema as an agent reads it:
    /// "Required members by kind: set_generated: concept_id, generated; …."
    fn kinds(&self, tool: &str) -> Vec<(String, Vec<String>)> {
        let root = &self.tool(tool).schema;
        let op = deref(root, &root["properties"]["operations"]["items"]);
        let kind = deref(root, &op["properties"]["kind"]);
        let kinds: Vec<String> = kind["enum"]
            .as_array()
            .expect("kind enum")
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let text = kind["description"].as_str().unwrap_or_default();
        let (_, rules) = text
            .split_once("Required members by kind: ")
            .unwrap_or_else(|| panic!("kind says what each value requires: {kind}"));
        let rules = rules.trim_end_matches('.');
        kinds
            .into_iter()
            .map(|k| {
                let req = rules
                    .split("; ")
                    .find_map(|rule| rule.strip_prefix(&format!("{k}: ")))
                    .map(|members| members.split(", ").map(str::to_owned).collect())
                    .unwrap_or_default();
                (k, req)
            })
            .collect()
    }

    /// The payload schema of `member` of an operation of `tool`.
    fn payload<'a>(&'a self, tool: &str, member: &str) -> &'a Value {
        let root = &self.tool(tool).schema;
        let op = deref(root, &root["properties"]["operations"]["items"]);
        deref(root, &op["properties"][member])
    }

    /// Builds the task's operations from the schema alone.
    fn operations(&self, tool: &str, concept: &str, resource: &str, verifier: &str) -> Value {
        let kinds = self.kinds(tool);
        let root = &self.tool(tool).schema;
        let mut ops = Vec::new();
        // 1. Deprecate: the kind whose payload has a member with the enum value "deprecated";
        //    only that member is sent (the others are optional).
        let (kind, member, field) = kinds
            .iter()
            .find_map(|(k, req)| {
                req.iter().filter(|m| *m != "concept_id").find_map(|m| {
                    let p = self.payload(tool, m);
                    p["properties"].as_object()?.iter().find_map(|(f, s)| {
                        let s = deref(root, s);
                        s["enum"]
                            .as_array()?
                            .contains(&json!("deprecated"))
                            .then(|| (k.clone(), m.clone(), f.clone()))
                    })
                })
            })
            .expect("a kind that can set deprecated");
        let mut payload = Map::new();
        payload.insert(field, json!("deprecated"));
        ops.push(op(&kind, concept, &member, Value::Object(payload)));
        // 2. Add a source: a put_* kind whose required payload object requires `resource`.
        let (kind, member) = kinds
            .iter()
            .filter(|(k, _)| k.starts_with("put_"))
            .find_map(|(k, req)| {
                req.iter()
                    .filter(|m| *m != "concept_id")
                    .find(|m| required(self.payload(tool, m)) == ["resource"])
                    .map(|m| (k.clone(), m.clone()))
            })
            .expect("a kind that adds a source");
        ops.push(op(&kind, concept, &member, json!({"resource": resource})));
        // 3. Record a verification: the ensure_* kind whose payload requires `by` and `at`;
        //    `at` is whatever its schema's format asks for.
        let (kind, member) = kinds
            .iter()
            .filter(|(k, _)| k.starts_with("ensure_"))
            .find_map(|(k, req)| {
                req.iter()
                    .filter(|m| *m != "concept_id")
                    .find(|m| {
                        let r = required(self.payload(tool, m));
                        r.contains(&"by".to_owned()) && r.contains(&"at".to_owned())
                    })
                    .map(|m| (k.clone(), m.clone()))
            })
            .expect("a kind that records a verification");
        let at_schema = deref(root, &self.payload(tool, &member)["properties"]["at"]);
        assert_eq!(at_schema["format"], "date-time", "{at_schema}");
        ops.push(op(
            &kind,
            concept,
            &member,
            json!({"by": verifier, "at": now_rfc3339()}),
        ));
        json!(ops)
    }

    /// The required top-level arguments of `tool` the task does not give: each from the
    /// schema's own example.
    fn fill_required(&self, tool: &str, args: &mut Map<String, Value>) {
        let root = &self.tool(tool).schema;
        for name in required(root) {
            if args.contains_key(&name) {
                continue;
            }
            let prop = &root["properties"][&name];
            if let Some(ex) = prop["examples"].get(0) {
                args.insert(name, ex.clone());
            }
        }
    }

    fn call(&mut self, tool: &str, args: &Value) -> Value {
        let r = self.mcp.call(tool, args);
        assert_ne!(r["isError"], true, "{tool} failed: {r}");
        r["structuredContent"].clone()
    }

    /// The whole task on the bundle at `bundle`; returns the preview and apply results.
    fn run_task(&mut self, bundle: &Path, concept: &str, resource: &str) -> (Value, Value) {
        let (preview, apply) = self.pick_tools();
        let mut args = Map::new();
        args.insert("bundle_path".into(), json!(bundle.to_str().expect("utf-8")));
        args.insert(
            "operations".into(),
            self.operations(&preview, concept, resource, "process:nightly"),
        );
        self.fill_required(&preview, &mut args);
        assert!(
            !args.contains_key("temporal_profile"),
            "the newcomer never passes temporal_profile"
        );
        let p = self.call(&preview, &Value::Object(args.clone()));
        assert_eq!(p["status"], "applicable", "{p}");
        // The apply's extra required inputs: "The <member> of the preview, unchanged."
        let apply_root = self.tool(&apply).schema.clone();
        for name in required(&apply_root) {
            if args.contains_key(&name) {
                continue;
            }
            let d = apply_root["properties"][&name]["description"]
                .as_str()
                .unwrap_or_default();
            let member = d
                .strip_prefix("The ")
                .and_then(|r| r.split_once(" of the preview"))
                .map(|(m, _)| m)
                .unwrap_or_else(|| panic!("{name}: the description names no preview output"));
            args.insert(name, p[member].clone());
        }
        let a = self.call(&apply, &Value::Object(args));
        assert_eq!(a["status"], "applied", "{a}");
        (p, a)
    }
}

/// Every diagnostic code in a result (its `diagnostics` and, when present, `notices`).
fn codes(v: &Value) -> Vec<String> {
    ["diagnostics", "notices"]
        .iter()
        .flat_map(|k| v[*k].as_array().cloned().unwrap_or_default())
        .filter_map(|d| d["code"].as_str().map(str::to_owned))
        .collect()
}

fn stale_after_line(file: &Path) -> String {
    let text = std::fs::read_to_string(file).expect("read");
    text.lines()
        .find(|l| l.starts_with("stale_after:"))
        .expect("a stale_after line")
        .to_owned()
}

fn newcomer_on(fixture_name: &str, profile: &str) {
    let (_tmp, b) = copy_bundle(&fixture(fixture_name));
    let file = b.join("tables/orders.md");
    let before = stale_after_line(&file);
    let mut agent = Agent::start();
    let (p, a) = agent.run_task(&b, "tables/orders", "https://example.test/runbooks/orders");
    for (what, v) in [("preview", &p), ("apply", &a)] {
        assert!(
            !codes(v).iter().any(|c| c == "temporal_profile_mismatch"),
            "{fixture_name} {what}: {v}"
        );
        assert_eq!(v["temporal_profile"], profile, "{what}: {v}");
        assert_eq!(v["temporal_profile_source"], "detected", "{what}: {v}");
    }
    assert_eq!(stale_after_line(&file), before, "stale_after changed");
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains("status: deprecated"), "{text}");
    assert!(
        text.contains("https://example.test/runbooks/orders"),
        "{text}"
    );
    assert!(text.contains("process:nightly"), "{text}");
    // Reading the result back, as the newcomer would, without a profile: no mismatch.
    let v = agent.call(
        "validate_bundle",
        &json!({"bundle_path": b.to_str().expect("utf-8"), "strict": true}),
    );
    assert_eq!(v["temporal_profile"], profile, "{v}");
    assert!(
        !codes(&v).iter().any(|c| c == "temporal_profile_mismatch"),
        "{v}"
    );
}

/// AUT-01 (newcomer, instant bundle): `auto` resolves to the instant profile; the task
/// succeeds without a profile and keeps `stale_after`.
#[test]
fn aut_01_newcomer_deprecates_adds_a_source_and_records_a_verification_on_an_instant_bundle() {
    newcomer_on("demo-instant", "instant-0b87c52");
}

/// AUT-01 (newcomer, date bundle): the same script on a date-profile bundle.
#[test]
fn aut_01_newcomer_deprecates_adds_a_source_and_records_a_verification_on_a_date_bundle() {
    newcomer_on("demo-date", "date-3fcbb9f");
}
