//! The layers of `src/` hold: every `crate::<module>` path in a file (imports and inline
//! paths, test code included, comments excluded) must name a module its layer may use.
//!
//! Layers, bottom up (a layer may use the ones below it and itself):
//! - bottom: `cancel`, `envelope` (the error vocabulary), `digest` (canonical encodings),
//!   `progress` (the progress sink), `notices` (the call's notices; a side channel, so the
//!   pure layers `okf` and `plan` may not use it);
//! - `okf` (pure OKF documents, the capture value);
//! - `view` (the Phase-4 search and graph layer, spec/surface.md §14.6: pure, on `okf` and
//!   the bottom only; `plan` and `store` never use it);
//! - `plan` (pure planners, identity, staging). Each workflow's planner is a folder
//!   `plan/<workflow>/`; it never uses another workflow's folder, and the shared files of
//!   `plan/` use none: what two workflows share lives in a shared `plan/` file (checked on two
//!   path segments, `crate::plan::<module>`);
//! - `store` (every filesystem effect; it does not plan, so of `plan` it uses only the
//!   payload interface `plan::stream` (the writes of a plan and their producer, which the
//!   store calls under its lock): checked on two path segments);
//! - `tools` (the workflow spine and one module per tool). The read tools ([`READ_TOOLS`])
//!   use of the store only its root, capture and wait modules, never commit, journal,
//!   receipt or publish: checked on two path segments (`crate::store::<module>`);
//! - `wire` (the dispatcher, schemas, registry);
//! - `server`; and the entry points `cli`, `demo`, `main`, `lib`, which may use anything.

use std::path::Path;

/// The layer of a `src/`-relative file: its first path component without `.rs`.
fn layer_of(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap_or(rel);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// What `layer` may use, or `None` when it may use anything.
fn allowed(layer: &str) -> Option<&'static [&'static str]> {
    const BOTTOM: &[&str] = &["cancel", "envelope", "digest", "progress"];
    Some(match layer {
        "cancel" | "envelope" | "digest" | "progress" => BOTTOM,
        "notices" => &["cancel", "envelope", "digest", "progress", "notices"],
        "okf" => &["cancel", "envelope", "digest", "progress", "okf"],
        "view" => &["cancel", "envelope", "digest", "progress", "okf", "view"],
        "plan" => &["cancel", "envelope", "digest", "progress", "okf", "plan"],
        "store" => &[
            "cancel", "envelope", "digest", "progress", "notices", "okf", "plan", "store",
        ],
        "tools" => &[
            "cancel", "envelope", "digest", "progress", "notices", "okf", "view", "plan", "store",
            "tools",
        ],
        "wire" => &[
            "cancel", "envelope", "digest", "progress", "notices", "okf", "view", "plan", "store",
            "tools", "wire",
        ],
        "server" => &[
            "cancel", "envelope", "digest", "progress", "notices", "tools", "wire", "server",
        ],
        _ => return None,
    })
}

/// The read tools' files (and the helpers only they use): of the store they may use only
/// [`READ_STORE`]. Every other read-only tool module is a workflow preview; a new read tool
/// must be listed here (`read_tools_are_listed`).
const READ_TOOLS: [&str; 10] = [
    "tools/common.rs",
    "tools/get_neighbors.rs",
    "tools/get_semantic_graph.rs",
    "tools/list_concepts.rs",
    "tools/paging.rs",
    "tools/read.rs",
    "tools/read_concept.rs",
    "tools/search_concepts.rs",
    "tools/search_sections.rs",
    "tools/validate_bundle.rs",
];
/// The store modules a read tool may use.
const READ_STORE: [&str; 3] = ["root", "capture", "wait"];

/// The one `plan` module the store may use: the payload interface.
const STORE_PLAN: &str = "stream";

/// The second path segment after `crate::store::` in `after` (the text after `crate::`).
fn store_module(after: &str) -> Option<String> {
    second_segment(after, "store::")
}

/// The second path segment after `crate::<first>` in `after` (`{` for a grouped import).
fn second_segment(after: &str, first: &str) -> Option<String> {
    let rest = after.strip_prefix(first)?;
    let m: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if rest.starts_with('{') {
        Some("{".to_owned())
    } else {
        Some(m)
    }
}

/// The workflow folder `plan/<workflow>/` a `src/`-relative file is in.
fn workflow_of(rel: &str) -> Option<&str> {
    rel.strip_prefix("plan/")?.split_once('/').map(|(w, _)| w)
}

/// The forbidden uses in `files` (`src/`-relative path, text), as `path:line: layer -> module`
/// (or `-> store::<module>` for a read tool, `-> plan::<workflow>` for a planner file).
fn violations(files: &[(String, String)]) -> Vec<String> {
    let workflows: std::collections::BTreeSet<&str> = files
        .iter()
        .filter_map(|(rel, _)| workflow_of(rel))
        .collect();
    let mut out = Vec::new();
    for (rel, text) in files {
        let layer = layer_of(rel);
        let read_tool = READ_TOOLS.contains(&rel.as_str());
        let own = workflow_of(rel);
        let from = own.map_or_else(|| layer.to_owned(), |w| format!("plan::{w}"));
        let Some(ok) = allowed(layer) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let code = code.split(" //").next().unwrap_or(code);
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                // `okf_mcp::`-free: only `crate::` paths exist inside the library.
                let after = &rest[i + "crate::".len()..];
                let module: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if after.starts_with('{') {
                    out.push(format!(
                        "{rel}:{}: {layer} -> a grouped crate import",
                        n + 1
                    ));
                } else if !module.is_empty() && !ok.contains(&module.as_str()) {
                    out.push(format!("{rel}:{}: {layer} -> {module}", n + 1));
                } else if let Some(m) = second_segment(after, "plan::").filter(|_| layer == "store")
                {
                    if m != STORE_PLAN {
                        out.push(format!("{rel}:{}: store -> plan::{m}", n + 1));
                    }
                } else if let Some(m) = second_segment(after, "plan::").filter(|m| {
                    layer == "plan"
                        && (m == "{" || workflows.contains(m.as_str()) && own != Some(m.as_str()))
                }) {
                    out.push(format!("{rel}:{}: {from} -> plan::{m}", n + 1));
                } else if let Some(m) = store_module(after).filter(|_| read_tool) {
                    if !READ_STORE.contains(&m.as_str()) {
                        out.push(format!("{rel}:{}: read tool -> store::{m}", n + 1));
                    }
                }
                rest = after;
            }
        }
    }
    out
}

fn read_src(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            read_src(&p, base, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p
                .strip_prefix(base)
                .expect("under src")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&p).expect("utf-8 source");
            out.push((rel, text));
        }
    }
}

#[test]
fn layers_hold_in_src() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_src(&src, &src, &mut files);
    for must in [
        "okf/validate.rs",
        "plan/stage.rs",
        "store/commit.rs",
        "tools/spine.rs",
    ] {
        assert!(
            files.iter().any(|(p, _)| p == must),
            "src/{must} not found: the layering test read the wrong tree"
        );
    }
    let bad = violations(&files);
    assert!(
        bad.is_empty(),
        "imports that go the wrong way (see the layer table in tests/it/layers.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_layer_check_catches_wrong_way_imports() {
    let files = vec![
        (
            "okf/x.rs".to_owned(),
            "use crate::store::capture::Capture;\n// use crate::tools::Ctx;\nlet _ = crate::okf::memo::clear();\n".to_owned(),
        ),
        (
            "plan/y.rs".to_owned(),
            "fn f() -> crate::tools::Ctx { todo!() } // crate::wire\n".to_owned(),
        ),
        (
            "store/z.rs".to_owned(),
            "use crate::plan::stage::Plan;\nuse crate::{okf, tools};\n".to_owned(),
        ),
        ("tools/w.rs".to_owned(), "use crate::wire::dispatch;\n".to_owned()),
        ("digest.rs".to_owned(), "use crate::okf::capture::Capture;\n".to_owned()),
        ("cli.rs".to_owned(), "use crate::server::mcp;\n".to_owned()),
        ("plan/n.rs".to_owned(), "crate::notices::push(d);\n".to_owned()),
        ("store/n.rs".to_owned(), "crate::notices::push(d);\n".to_owned()),
        ("store/s.rs".to_owned(), "use crate::plan::stream::{Payloads, Writes};\n".to_owned()),
        (
            "view/search.rs".to_owned(),
            "use crate::okf::bundle::Bundle;\nuse crate::store::capture;\nuse crate::plan::stage;\nuse crate::notices;\n".to_owned(),
        ),
        ("plan/v.rs".to_owned(), "use crate::view::graph;\n".to_owned()),
        ("store/v.rs".to_owned(), "use crate::view::graph;\n".to_owned()),
        ("tools/v.rs".to_owned(), "use crate::view::graph;\n".to_owned()),
        (
            "tools/read_concept.rs".to_owned(),
            "use crate::store::wait::{self, WaitFor};\nuse crate::store::root;\nuse crate::store::commit::Session;\nlet _ = crate::store::receipt::x();\nuse crate::store::{journal, root};\n".to_owned(),
        ),
        ("tools/spine.rs".to_owned(), "use crate::store::commit::Session;\n".to_owned()),
        (
            "plan/migration/document.rs".to_owned(),
            "use crate::plan::migration::citations;\nuse crate::plan::patch::planner::x;\nuse crate::plan::doc_edit::DocEdit;\nuse crate::plan::{patch, stage};\n".to_owned(),
        ),
        ("plan/patch/ops.rs".to_owned(), "use crate::plan::args::serialised_len;\n".to_owned()),
        ("plan/stage.rs".to_owned(), "use crate::plan::patch::ops::Operation;\n".to_owned()),
    ];
    assert_eq!(
        violations(&files),
        vec![
            "okf/x.rs:1: okf -> store",
            "plan/y.rs:1: plan -> tools",
            "store/z.rs:1: store -> plan::stage",
            "store/z.rs:2: store -> a grouped crate import",
            "tools/w.rs:1: tools -> wire",
            "digest.rs:1: digest -> okf",
            "plan/n.rs:1: plan -> notices",
            "view/search.rs:2: view -> store",
            "view/search.rs:3: view -> plan",
            "view/search.rs:4: view -> notices",
            "plan/v.rs:1: plan -> view",
            "store/v.rs:1: store -> view",
            "tools/read_concept.rs:3: read tool -> store::commit",
            "tools/read_concept.rs:4: read tool -> store::receipt",
            "tools/read_concept.rs:5: read tool -> store::{",
            "plan/migration/document.rs:2: plan::migration -> plan::patch",
            "plan/migration/document.rs:4: plan::migration -> plan::{",
            "plan/stage.rs:1: plan -> plan::patch",
        ]
    );
}

/// Every read-only tool module that is not a workflow preview is in [`READ_TOOLS`], so a new
/// read tool (Phase 4) cannot skip the two-segment check.
#[test]
fn read_tools_are_listed() {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
    let mut seen = 0;
    for e in std::fs::read_dir(&tools).expect("src/tools") {
        let p = e.expect("entry").path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        if text.contains("read_only: true") && !name.starts_with("preview_") {
            seen += 1;
            assert!(
                READ_TOOLS.contains(&format!("tools/{name}").as_str()),
                "src/tools/{name} is a read tool: list it in READ_TOOLS (tests/it/layers.rs)"
            );
        }
    }
    assert!(seen >= 3, "only {seen} read tools found: wrong tree?");
}

/// Filesystem calls outside the store in `files` (`src/`-relative path, text), as
/// `path:line`: the tools, planners and OKF layer do no I/O of their own (issue 9 item 4);
/// test modules (`*_tests.rs`, and code after `#[cfg(test)]`) are exempt.
fn io_outside_store(files: &[(String, String)]) -> Vec<String> {
    const CALLS: [&str; 5] = [
        "std::fs::",
        ".dir.",
        "cap_std::",
        "symlink_metadata(",
        "File::open(",
    ];
    let mut out = Vec::new();
    for (path, text) in files {
        let layer = layer_of(path);
        if !matches!(layer, "okf" | "plan" | "tools") || path.ends_with("_tests.rs") {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            if line.contains("#[cfg(test)]") {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            if CALLS.iter().any(|c| code.contains(c)) {
                out.push(format!("{path}:{}", i + 1));
            }
        }
    }
    out
}

#[test]
fn no_filesystem_io_outside_the_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_src(&src, &src, &mut files);
    assert!(
        files.iter().any(|(p, _)| p == "tools/migration.rs"),
        "read the wrong tree"
    );
    let bad = io_outside_store(&files);
    assert!(
        bad.is_empty(),
        "filesystem calls outside src/store/:\n{}",
        bad.join("\n")
    );
    // The check is not vacuous.
    let probe = vec![(
        "tools/x.rs".to_owned(),
        "fn f(r: &Root) { r.dir.symlink_metadata(\"a\"); }\n".to_owned(),
    )];
    assert_eq!(io_outside_store(&probe), vec!["tools/x.rs:1"]);
}
