//! The tools layer: one module per MCP tool, the workflow spine ([`spine`]) and the per-call
//! context and success types every handler uses. A handler first parses its schema-valid
//! arguments with pure checks only (spec/surface.md §9.1 step 5), then opens the bundle
//! (step 6) and does its I/O through [`crate::store`].
//!
//! # Registering a tool
//!
//! A tool is one module `src/tools/<name>.rs` that declares `pub const TOOL:`
//! [`ToolSpec`] (name, annotation, description, schemas, aliases, handler), plus one
//! identifier in the `registry!` list below, which declares the module and adds its `TOOL` to
//! [`TOOLS`]. Its two checked-in schema files are generated (see `checked_in!` in [`def`]).
//!
//! # Limitations
//!
//! rustfmt does not follow `mod` items declared by a macro, so `cargo fmt` neither formats
//! nor checks the tool modules; `tests/it/registry.rs` runs `rustfmt --check` on them, and
//! `rustfmt --edition 2021 src/tools/<name>.rs` formats one.

pub mod call;
pub mod common;
pub mod concept_patch;
pub mod def;
pub mod migration;
pub mod outcome;
pub mod paging;
pub mod read;
pub mod schema_parts;
pub mod spine;
pub mod temporal_upgrade;
pub mod text;

pub use call::{Ctx, Success, MAY_HAVE_COMMITTED};
pub use def::{Alias, Handler, SchemaBuilder, ToolSpec};

/// Declares each listed tool module and collects its `TOOL` into [`TOOLS`], in list order.
macro_rules! registry {
    ($($tool:ident),+ $(,)?) => {
        $(pub mod $tool;)+

        /// Every registered tool, sorted by name (spec/surface.md §2: `tools/list` order).
        pub static TOOLS: &[ToolSpec] = &[$($tool::TOOL),+];

        /// The module of each entry of [`TOOLS`], by name.
        #[cfg(test)]
        const MODULES: &[&str] = &[$(stringify!($tool)),+];
    };
}

registry!(
    apply_concept_patch,
    apply_temporal_upgrade,
    apply_v02_migration,
    get_neighbors,
    get_semantic_graph,
    list_concepts,
    preview_concept_patch,
    preview_temporal_upgrade,
    preview_v02_migration,
    read_concept,
    search_concepts,
    search_sections,
    validate_bundle,
    write_concept,
);

#[cfg(test)]
mod tests {
    use super::schema_parts::ID_BASE;
    use super::{MODULES, TOOLS};

    #[test]
    fn tools_are_sorted_unique_and_named_after_their_modules() {
        let names: Vec<_> = TOOLS.iter().map(|t| t.name).collect();
        assert_eq!(names, MODULES, "a tool's name is its module's name");
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            names, sorted,
            "the registry lists its tools sorted by name, once each"
        );
    }

    #[test]
    fn checked_in_schemas_are_the_tools_own_files() {
        for t in TOOLS {
            for (direction, text) in [("input", t.input_schema), ("output", t.output_schema)] {
                let v: serde_json::Value = serde_json::from_str(text).expect("schema JSON");
                let id = format!("{ID_BASE}{}.{direction}.schema.json", t.name);
                assert_eq!(v["$id"], id.as_str(), "{}", t.name);
            }
        }
    }

    #[test]
    fn aut_08_descriptions_are_short_titled_and_name_a_next_step() {
        for t in TOOLS {
            let (n, d) = (t.name, t.description);
            assert!(d.len() <= 600, "{n}: {} bytes", d.len());
            assert!(d.contains("Next"), "{n}: no next step");
            assert!(!t.title.is_empty() && t.title.len() <= 48, "{n}");
            // The shared protocol moved to `initialize` instructions.
            assert!(!d.contains("Replay protocol"), "{n}");
        }
    }
}
