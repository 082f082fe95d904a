//! `docs/contract.ru.md` (spec/README.md §2, STYLE.md "Guard the contract"): the Russian
//! owner contract names every tool and every error code of spec/surface.md §5 (migration
//! blocker codes excluded), with the catalogue's retryable flag.

use std::path::{Path, PathBuf};

/// Every tool of spec/surface.md §2.
const TOOLS: [&str; 14] = [
    "list_concepts",
    "read_concept",
    "validate_bundle",
    "preview_concept_patch",
    "apply_concept_patch",
    "write_concept",
    "preview_v02_migration",
    "apply_v02_migration",
    "preview_temporal_upgrade",
    "apply_temporal_upgrade",
    "search_concepts",
    "get_neighbors",
    "get_semantic_graph",
    "search_sections",
];

/// Every code of spec/surface.md §5 except the open set of migration blocker codes, with its
/// `retryable` flag.
const CODES: [(&str, bool); 16] = [
    ("schema_validation", false),
    ("unknown_parameter", false),
    ("invalid_request", false),
    ("resource_limit", false),
    ("invalid_revision", false),
    ("plan_mismatch", false),
    ("revision_conflict", true),
    ("source_conflict", true),
    ("idempotency_conflict", false),
    ("operation_cancelled", true),
    ("operation_rejected", false),
    ("invalid_yaml_graph", false),
    ("concept_not_found", false),
    ("unsupported_migration_source", false),
    ("migration_blocked", false),
    ("invalid_projection", false),
];

fn doc() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/contract.ru.md");
    std::fs::read_to_string(p).expect("docs/contract.ru.md exists")
}

/// The row of the markdown table whose first cell is `` `name` ``.
fn row<'a>(doc: &'a str, name: &str) -> Option<&'a str> {
    let head = format!("| `{name}` |");
    doc.lines().find(|l| l.starts_with(&head))
}

#[test]
fn contract_doc_names_every_tool_in_its_russian_table() {
    let d = doc();
    assert!(
        d.chars().filter(|c| ('а'..='я').contains(c)).count() > 1000,
        "Russian text"
    );
    for t in TOOLS {
        let r = row(&d, t).unwrap_or_else(|| panic!("tool table row for {t}"));
        let read_only = !(t.starts_with("apply_") || t == "write_concept");
        let expected = if read_only {
            "только чтение"
        } else {
            "изменение"
        };
        assert!(r.contains(expected), "{t}: {r}");
    }
}

#[test]
fn contract_doc_names_every_error_code_with_its_retryable_flag() {
    let d = doc();
    for (code, retryable) in CODES {
        let r = row(&d, code).unwrap_or_else(|| panic!("error table row for {code}"));
        let cells: Vec<&str> = r.split('|').map(str::trim).collect();
        assert_eq!(
            cells[2],
            if retryable { "да" } else { "нет" },
            "{code}: {r}"
        );
    }
    assert!(
        d.contains("`invalid_argument`"),
        "says invalid_argument is unused"
    );
}

#[test]
fn contract_doc_uses_our_paths_not_the_reference_ones() {
    let d = doc();
    assert!(d.contains("schemas/"));
    assert!(d.contains("tests/it/"));
    assert!(
        !d.contains("internal/mcpserver"),
        "reference paths replaced"
    );
    for f in [
        "tests/it/schema.rs",
        "tests/it/aliases.rs",
        "tests/it/contract_doc.rs",
    ] {
        assert!(d.contains(f), "{f}");
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(f).exists(),
            "{f} exists"
        );
    }
}

fn spec_surface() -> Option<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["../shared/spec/surface.md", "../../shared/spec/surface.md"]
        .iter()
        .map(|r| base.join(r))
        .find(|p| p.exists())
}

#[test]
fn the_lists_above_match_the_spec_catalogue_when_the_spec_is_present() {
    let Some(p) = spec_surface() else {
        return; // The lists above are the checked copy; the spec is not shipped with the crate.
    };
    let text = std::fs::read_to_string(p).expect("surface.md");
    let section = |start: &str, end: &str| -> Vec<String> {
        let from = text.find(start).expect("section start");
        let to = text[from..].find(end).map_or(text.len(), |i| from + i);
        text[from..to]
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .map(str::to_owned)
            .collect()
    };
    let codes = section("## 5. Error-code catalogue", "## 6.");
    let ours: Vec<&str> = CODES.iter().map(|(c, _)| *c).collect();
    assert_eq!(codes, ours, "surface.md §5 codes");
    let tools = section("## 2. Tools, annotations and phases", "Common input fields");
    assert_eq!(tools, TOOLS, "surface.md §2 tools");
}
