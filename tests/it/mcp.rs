//! SRV-01…06 over a spawned `okf-mcp serve`.

use crate::support::util::*;
use serde_json::json;

#[test]
fn srv_01_tools_list_sorted_and_stable_across_calls_and_restarts() {
    let mut a = Mcp::start();
    let l1 = a.request("tools/list", json!({}));
    let l2 = a.request("tools/list", json!({}));
    assert_eq!(l1["result"], l2["result"]);
    let names: Vec<&str> = l1["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(names.contains(&"list_concepts"));
    a.finish();
    let mut b = Mcp::start();
    let l3 = b.request("tools/list", json!({}));
    assert_eq!(l1["result"].to_string(), l3["result"].to_string());
    b.finish();
}

#[test]
fn srv_02_annotations_explicit_on_every_tool() {
    let mut a = Mcp::start();
    let l = a.request("tools/list", json!({}));
    for t in l["result"]["tools"].as_array().expect("tools") {
        let ann = &t["annotations"];
        let r = ann["readOnlyHint"].as_bool().expect("readOnlyHint");
        assert_eq!(ann["destructiveHint"], json!(!r), "{}", t["name"]);
        assert_eq!(ann["idempotentHint"], json!(r), "{}", t["name"]);
        assert_eq!(ann["openWorldHint"], json!(false), "{}", t["name"]);
    }
    a.finish();
}
