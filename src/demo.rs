//! `okf-mcp demo`: the main job on embedded bundles. Copies `fixtures/bundles/demo` into a
//! temporary directory and runs the tools end to end through the shared dispatcher, printing
//! each step: list → search sections → neighbours → preview → apply → exact replay → read → write_concept (+ replay) →
//! validate. Then the 0.1 → 0.2 migration of `fixtures/bundles/demo-v01` (ordered-list
//! citations and inline notes): blocked → proposals → applicable → applied → validate →
//! target-noop. Last the date → instant upgrade of `fixtures/bundles/demo-date`: incomplete →
//! one mapping per listed occurrence → ready → applied → validate under `instant-0b87c52` →
//! noop.

use crate::tools::Ctx;
use crate::wire::dispatch;
use serde_json::{json, Value};

/// The embedded demo bundle: (bundle-relative path, bytes).
const DEMO_FILES: &[(&str, &[u8])] = &[
    (
        "index.md",
        include_bytes!("../fixtures/bundles/demo/index.md"),
    ),
    (
        "tables/orders.md",
        include_bytes!("../fixtures/bundles/demo/tables/orders.md"),
    ),
    (
        "metrics/revenue.md",
        include_bytes!("../fixtures/bundles/demo/metrics/revenue.md"),
    ),
];

/// The embedded OKF 0.1 bundle of the migration part.
const DEMO_V01_FILES: &[(&str, &[u8])] = &[
    (
        "index.md",
        include_bytes!("../fixtures/bundles/demo-v01/index.md"),
    ),
    (
        "tables/orders.md",
        include_bytes!("../fixtures/bundles/demo-v01/tables/orders.md"),
    ),
    (
        "metrics/revenue.md",
        include_bytes!("../fixtures/bundles/demo-v01/metrics/revenue.md"),
    ),
    (
        "references/orders-guide.md",
        include_bytes!("../fixtures/bundles/demo-v01/references/orders-guide.md"),
    ),
];

/// The embedded date-profile bundle of the temporal-upgrade part.
const DEMO_DATE_FILES: &[(&str, &[u8])] = &[
    (
        "index.md",
        include_bytes!("../fixtures/bundles/demo-date/index.md"),
    ),
    (
        "log.md",
        include_bytes!("../fixtures/bundles/demo-date/log.md"),
    ),
    (
        "tables/orders.md",
        include_bytes!("../fixtures/bundles/demo-date/tables/orders.md"),
    ),
    (
        "metrics/revenue.md",
        include_bytes!("../fixtures/bundles/demo-date/metrics/revenue.md"),
    ),
];

/// Writes `files` under `root`; `false` on any I/O failure.
fn copy_files(root: &std::path::Path, files: &[(&str, &[u8])]) -> bool {
    for (rel, bytes) in files {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                return false;
            }
        }
        #[allow(clippy::disallowed_methods)] // the demo writes its own temp copy, not a bundle
        if std::fs::write(&path, bytes).is_err() {
            return false;
        }
    }
    true
}

/// Runs the demo; returns the exit code (0 when every step answered as expected).
#[must_use]
pub fn run() -> i32 {
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("okf-mcp demo: cannot create a temporary directory");
        return 1;
    };
    let main_root = dir.path().join("demo");
    let v01_root = dir.path().join("demo-v01");
    let date_root = dir.path().join("demo-date");
    if !copy_files(&main_root, DEMO_FILES)
        || !copy_files(&v01_root, DEMO_V01_FILES)
        || !copy_files(&date_root, DEMO_DATE_FILES)
    {
        eprintln!("okf-mcp demo: cannot create the demo bundle");
        return 1;
    }
    let bundle = main_root.to_string_lossy().into_owned();
    println!("okf-mcp demo: copied the demo bundle to a temporary directory");
    let ctx = Ctx::default();
    let ok = std::cell::Cell::new(true);
    let step = |title: &str, tool: &str, args: Value| -> Value {
        println!("\n== {title}: {tool}");
        let raw = args.to_string();
        match dispatch::call(tool, Some(raw.as_bytes()), &ctx) {
            Some(r) => {
                println!("isError: {}", r.is_error);
                println!("{}", summarize(&r.structured));
                ok.set(ok.get() && !r.is_error);
                r.structured
            }
            None => {
                ok.set(false);
                Value::Null
            }
        }
    };
    step(
        "1. list the concepts",
        "list_concepts",
        json!({"bundle_path": bundle}),
    );
    let found = step(
        "1a. find where order amounts are written (ranked sections, every word must occur)",
        "search_sections",
        json!({"bundle_path": bundle, "query": "orders amount", "limit": 5}),
    );
    if found["total"].as_u64().unwrap_or(0) == 0 {
        println!(
            "unexpected search_sections total: {} (expected hits)",
            found["total"]
        );
        ok.set(false);
    }
    let neighbours = step(
        "1b. what links to tables/orders (backlinks and index listings)",
        "get_neighbors",
        json!({"bundle_path": bundle, "concept_id": "tables/orders", "direction": "in"}),
    );
    if neighbours["total"].as_u64().unwrap_or(0) == 0 {
        println!(
            "unexpected get_neighbors total: {} (expected edges)",
            neighbours["total"]
        );
        ok.set(false);
    }
    let operations = json!([
        {"kind": "ensure_verification", "concept_id": "tables/orders",
         "verification": {"by": "human:demo-reviewer", "at": "2026-11-30T12:00:00Z"}},
        {"kind": "set_lifecycle", "concept_id": "tables/orders",
         "lifecycle": {"status": "stable", "stale_after": "2027-06-30"}},
        {"kind": "put_source", "concept_id": "tables/orders",
         "source": {"id": "warehouse", "resource": "https://example.test/warehouse/orders", "title": "Warehouse docs"}}
    ]);
    let preview = step(
        "2. preview a patch (writes nothing)",
        "preview_concept_patch",
        json!({"bundle_path": bundle, "actor": "okf-mcp-demo", "operations": operations}),
    );
    if let Some(diff) = preview["diff"].as_str() {
        println!("--- the diff of the preview ---\n{diff}");
    }
    let apply_args = json!({
        "bundle_path": bundle, "actor": "okf-mcp-demo", "operations": operations,
        "expected_revision": preview["base_revision"],
        "expected_plan_digest": preview["plan_digest"],
    });
    step(
        "3. apply it with the preview's revision and digest",
        "apply_concept_patch",
        apply_args.clone(),
    );
    step(
        "4. replay the exact same apply (as after a timeout): answered from the receipt",
        "apply_concept_patch",
        apply_args,
    );
    let read = step(
        "5. read the changed concept",
        "read_concept",
        json!({"bundle_path": bundle, "concept_id": "tables/orders"}),
    );
    if let Some(fm) = read["frontmatter_yaml"].as_str() {
        println!("--- frontmatter after the patch ---\n{fm}");
    }
    let write_args = json!({
        "bundle_path": bundle, "concept_id": "metrics/order_count",
        "frontmatter": "type: Metric\ntitle: Order count\ndescription: Number of orders per day.\n",
        "body": "# Definition\n\nCount of rows in [orders](/tables/orders.md) per order date.\n",
    });
    step(
        "6. write a new concept with write_concept",
        "write_concept",
        write_args.clone(),
    );
    step(
        "7. repeat the identical write: the stored result, nothing written",
        "write_concept",
        write_args,
    );
    step(
        "8. validate the bundle",
        "validate_bundle",
        json!({"bundle_path": bundle, "check_links": true}),
    );
    let v01 = v01_root.to_string_lossy().into_owned();
    println!("\nokf-mcp demo: copied an OKF 0.1 bundle (ordered-list citations, inline notes)");
    let expect = |v: &Value, key: &str, want: &str| {
        if v[key] != want {
            println!("unexpected {key}: {} (expected {want})", v[key]);
            ok.set(false);
        }
    };
    let first = json!({"bundle_path": v01, "generated_by": "okf-mcp-demo/1.0",
        "timestamp_policy": "remove_after_copy", "citation_mappings": []});
    let blocked = step(
        "9. preview the 0.1 → 0.2 migration with no mappings: blocked, with unreviewed suggestions",
        "preview_v02_migration",
        first.clone(),
    );
    expect(&blocked, "status", "blocked");
    println!(
        "--- proposed_citation_mappings are unreviewed suggestions, a starting point to review; \
         this demo accepts them as shown, by their proposals_digest ---"
    );
    let mut args = first;
    args["accept_proposals"] = blocked["proposals_digest"].clone();
    let preview = step(
        "10. preview again, accepting exactly those suggestions by their proposals_digest: applicable",
        "preview_v02_migration",
        args.clone(),
    );
    expect(&preview, "status", "applicable");
    if let Some(diff) = preview["diff"].as_str() {
        println!("--- the diff of the migration ---\n{diff}");
    }
    let mut apply = args.clone();
    apply["expected_source"] = preview["source"].clone();
    apply["base_revision"] = preview["base_revision"].clone();
    apply["expected_plan_digest"] = preview["plan_digest"].clone();
    let applied = step(
        "11. apply it with the preview's source, base_revision and plan digest (no proof to echo)",
        "apply_v02_migration",
        apply,
    );
    expect(&applied, "status", "applied");
    let valid = step(
        "12. validate strictly as OKF 0.2",
        "validate_bundle",
        json!({"bundle_path": v01, "strict": true, "target_version": "0.2"}),
    );
    if valid["conformance"]["conformant"] != true {
        ok.set(false);
    }
    let noop = step(
        "13. preview once more: the bundle is now the target (target-noop)",
        "preview_v02_migration",
        args.clone(),
    );
    expect(&noop, "status", "noop");
    let mut noop_apply = args;
    noop_apply["expected_source"] = noop["source"].clone();
    let n = step(
        "14. its apply writes nothing and opens no store",
        "apply_v02_migration",
        noop_apply,
    );
    expect(&n, "status", "noop");
    temporal_upgrade(&date_root.to_string_lossy(), &step, &expect);
    if ok.get() {
        println!("\nokf-mcp demo: done");
        0
    } else {
        println!("\nokf-mcp demo: a step failed");
        1
    }
}

/// Steps 15–19: the date → instant upgrade of the date-profile bundle at `bundle`.
fn temporal_upgrade(
    bundle: &str,
    step: &dyn Fn(&str, &str, Value) -> Value,
    expect: &dyn Fn(&Value, &str, &str),
) {
    println!("\nokf-mcp demo: copied an OKF 0.2 bundle whose temporal fields are calendar dates");
    let base = json!({"bundle_path": bundle, "id": "demo-upgrade-1", "actor": "okf-mcp-demo"});
    let first = step(
        "15. preview the date → instant upgrade without mappings: incomplete, every legacy date listed",
        "preview_temporal_upgrade",
        base.clone(),
    );
    expect(&first, "status", "incomplete");
    // The caller's policy, recorded per occurrence: midnight UTC of each listed date (the
    // toolkit never picks a time of day or an offset itself).
    let mappings: Vec<Value> = first["unresolved"]
        .as_array()
        .map(|u| {
            u.iter()
                .map(|e| {
                    json!({"concept": e["concept"], "path": e["path"], "from": e["from"],
                        "to": format!("{}T00:00:00Z", e["from"].as_str().unwrap_or_default())})
                })
                .collect()
        })
        .unwrap_or_default();
    let mut args = base.clone();
    args["mappings"] = Value::Array(mappings);
    let ready = step(
        "16. preview with one mapping per listed occurrence: ready",
        "preview_temporal_upgrade",
        args.clone(),
    );
    expect(&ready, "status", "ready");
    let mut apply = args.clone();
    apply["base_revision"] = ready["base_revision"].clone();
    apply["plan_digest"] = ready["plan_digest"].clone();
    let applied = step(
        "17. apply it with the preview's base_revision and plan_digest",
        "apply_temporal_upgrade",
        apply,
    );
    expect(&applied, "status", "applied");
    let valid = step(
        "18. validate strictly under instant-0b87c52: no temporal_profile_mismatch",
        "validate_bundle",
        json!({"bundle_path": bundle, "strict": true, "temporal_profile": "instant-0b87c52"}),
    );
    let mismatch = valid["diagnostics"]
        .as_array()
        .is_none_or(|d| d.iter().any(|x| x["code"] == "temporal_profile_mismatch"));
    let verdict = if mismatch || valid["conformance"]["conformant"] != true {
        "a temporal_profile_mismatch remains"
    } else {
        "instant profile clean"
    };
    expect(
        &json!({ "check": verdict }),
        "check",
        "instant profile clean",
    );
    let noop = step(
        "19. preview once more without mappings: no legacy dates remain (noop)",
        "preview_temporal_upgrade",
        json!({"bundle_path": bundle, "id": "demo-upgrade-2", "actor": "okf-mcp-demo"}),
    );
    expect(&noop, "status", "noop");
}

fn summarize(v: &Value) -> String {
    let s = serde_json::to_string_pretty(v).unwrap_or_default();
    if s.len() > 4000 {
        let mut end = 4000;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}\n…", &s[..end])
    } else {
        s
    }
}
