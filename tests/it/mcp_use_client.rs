//! AUT-14: a real agent-framework client. `mcp-use` 1.7.1 with its LangChain adapter (pinned
//! with everything it pulls in by `tests/python/mcp_use.requirements.txt`, installed by
//! `.ci/run` into `target/mcp-use-venv`) builds typed tool models from `tools/list` and calls
//! `list_concepts`, `read_concept` and `preview_concept_patch` on a fixture copy, with its
//! default null-filling (every unset optional top-level argument sent as `null`,
//! spec/surface.md §18.6 rule 3b), plus one call that returns an error result. No LLM is
//! involved: `tests/python/mcp_use_client.py` invokes the adapter's tool objects directly.
//!
//! Without `target/mcp-use-venv` the test is skipped with a message, unless `CI` is set (then
//! the missing install fails it).

use crate::support::real_client::{every_tool_listed, installed_or_skip, repo_path, run_report};
use crate::support::util::*;
use std::process::Command;

#[test]
fn aut_14_mcp_use_langchain_tools_list_read_and_preview_with_null_filling() {
    let Some(venv) =
        installed_or_skip("mcp_use_client", "mcp-use-venv", &["bin/python"], "mcp-use")
    else {
        return;
    };
    let (_t, b) = copy_bundle(&fixture("demo"));
    let before = snapshot(&b);
    let r = run_report(
        Command::new(venv.join("bin/python"))
            .arg(repo_path("tests/python/mcp_use_client.py"))
            .arg(bin())
            .arg(&b)
            .env("MCP_USE_ANONYMIZED_TELEMETRY", "false"),
        "mcp-use client",
    );
    r.assert_no_failures();
    let report = &r.json;
    for t in every_tool_listed(&report["tools"]) {
        // An inlined string, not a nested model built from a `$ref` (rule 3a).
        assert_eq!(t["bundle_path"]["type"], "string", "{t}");
    }
    let calls = report["calls"].as_array().expect("calls");
    let tools_called: Vec<&str> = calls.iter().filter_map(|c| c["tool"].as_str()).collect();
    assert_eq!(
        tools_called,
        [
            "list_concepts",
            "read_concept",
            "preview_concept_patch",
            "read_concept"
        ]
    );
    // The adapter sent null for every unset optional argument; the server treated each as
    // absent and said so once (null_argument_ignored).
    let nulls = |i: usize| {
        calls[i]["null_fields"][0]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    for f in [
        "temporal_profile",
        "as_of",
        "limit",
        "cursor",
        "status",
        "tag",
    ] {
        assert!(nulls(0).contains(f), "list_concepts: {f} in {}", nulls(0));
    }
    assert_eq!(nulls(1), "temporal_profile");
    assert_eq!(nulls(2), "temporal_profile");
    assert_eq!(calls[2]["status"], "applicable", "{:#}", calls[2]);
    assert_eq!(calls[3]["is_error"], true);
    assert_eq!(calls[3]["status"], "concept_not_found");
    assert!(r.status.success(), "stderr: {}", r.stderr);
    assert_eq!(snapshot(&b), before, "a preview writes nothing");
}
