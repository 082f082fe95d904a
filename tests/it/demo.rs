//! `okf-mcp demo` runs the main job end to end on its own temp copy.

use crate::support::util::*;

#[test]
fn demo_runs_every_step_and_exits_0() {
    let out = run_cli(&["demo"], None);
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    for needle in [
        "== 1a. find where order amounts are written",
        "\"concept_id\": \"metrics/revenue\"",
        "\"locator\": \"metrics/revenue.md#L",
        "== 1b. what links to tables/orders",
        "\"relation_type\": \"link\"",
        "== 2. preview a patch",
        "\"status\": \"applicable\"",
        "\"status\": \"applied\"",
        "\"code\": \"receipt_replayed\"",
        "receipt_replayed: answered from the stored receipt",
        "\"conformant\": true",
        "== 9. preview the 0.1 → 0.2 migration",
        "\"status\": \"blocked\"",
        "\"proposed_citation_mappings\"",
        "== 10. preview again, accepting exactly those suggestions by their proposals_digest",
        "== 11. apply it with the preview's source, base_revision and plan digest",
        "== 13. preview once more",
        "\"transition\": \"target-noop\"",
        "+Revenue is the sum of [orders](/tables/orders.md) amounts per day [^orders-guide][^finance].",
        "== 15. preview the date → instant upgrade without mappings",
        "\"status\": \"incomplete\"",
        "\"path\": \"sources[0].usage_window.from\"",
        "== 16. preview with one mapping per listed occurrence: ready",
        "\"status\": \"ready\"",
        "== 17. apply it with the preview's base_revision and plan_digest",
        "\"temporal_profile\": \"instant-0b87c52\"",
        "== 19. preview once more without mappings",
        "okf-mcp demo: done",
    ] {
        assert!(
            out.stdout.contains(needle),
            "missing {needle:?} in:\n{}",
            out.stdout
        );
    }
    assert!(!out.stdout.contains("isError: true"), "{}", out.stdout);
    assert!(!out.stdout.contains("unexpected status"), "{}", out.stdout);
}
