//! The declaration of one MCP tool (spec/surface.md §2, §9.4, §17): [`ToolSpec`].
//!
//! Every tool module declares `pub const TOOL: ToolSpec` next to its handler: the name, the
//! read-only annotation, the description, the checked-in schema texts and the builders that
//! generate them, its rows of the curated alias table, and the handler. The registry is the
//! one list of tool modules in [`crate::tools`] ([`crate::tools::TOOLS`]); the wire layer
//! (dispatcher, schema validation, alias check, schema generator, `tools/list`) reads
//! everything from it.
//!
//! The type lives in the tools layer because the modules that declare it may not import the
//! wire layer (tests/it/layers.rs), while the wire layer may import the tools.

use crate::envelope::ToolError;
use crate::tools::call::{Ctx, Success};
use crate::tools::schema_parts::SchemaRoot;
use serde_json::Value;

/// A handler: receives schema-valid arguments of its own tool only (spec/surface.md §9.1).
pub type Handler = fn(Value, &Ctx) -> Result<Success, ToolError>;

/// A schema builder: the root of one of the tool's schema files without `$defs`
/// ([`SchemaRoot`]); `wire::schema_gen` attaches the definitions and renders the file.
pub type SchemaBuilder = fn() -> SchemaRoot;

/// The mode switches no apply tool and no `write_concept` has (spec/surface.md §9.4).
pub const MODE_KEYS: [&str; 5] = ["dryRun", "dry_run", "mode", "preview", "confirm"];

/// One row of the curated alias table (spec/surface.md §9.4) for the top level of a tool's
/// arguments: each key of `keys` is refused with `unknown_parameter`, the canonical `field`,
/// and the message `<key> is not accepted: <guidance> Nothing was executed.`
///
/// The camelCase rows need no declaration: they follow from the input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alias {
    /// The exact keys this row answers.
    pub keys: &'static [&'static str],
    /// The canonical replacement named in the diagnostic's `field`.
    pub field: &'static str,
    /// The guidance after `<key> is not accepted: `, one or more full sentences.
    pub guidance: &'static str,
}

/// A shared schema file that tools contribute beside the built-in ones (spec/surface.md
/// §17.1): `schemas/<file>` holds `defs` under its header; the tool files carry copies of
/// the definitions they reference. Tools that share one file point to the same value.
#[derive(Debug)]
pub struct SharedSchema {
    /// The file name under `schemas/`, e.g. `migration_v02.shared.schema.json`.
    pub file: &'static str,
    /// The file's `title`.
    pub title: &'static str,
    /// The file's `description`.
    pub description: &'static str,
    /// The definitions the file owns, in file order: `(name, schema)`.
    pub defs: fn() -> Vec<(&'static str, Value)>,
}

/// A tool's own example of a top-level argument for the schema guidance (spec/surface.md
/// §6.3, SCH-07): a missing or mistyped `name` gets "supply <name> as <shape>, e.g.
/// <example>", too few items "supply at least <n> <item>, e.g. <example>".
#[derive(Debug, Clone, Copy)]
pub struct ArgumentExample {
    /// The argument, e.g. `operations`.
    pub name: &'static str,
    /// Its shape in words, e.g. `a JSON array of 1 to 256 operation objects`.
    pub shape: &'static str,
    /// One item in words, e.g. `operation`.
    pub item: &'static str,
    /// The example value, rendered as compact JSON.
    pub example: fn() -> Value,
}

/// One registered tool.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// The MCP tool name (spec/surface.md §2); also the name of its module and of its schema
    /// files.
    pub name: &'static str,
    /// The human-readable `title` of `tools/list` (spec/surface.md §18.6 rule 2).
    pub title: &'static str,
    /// `readOnlyHint`; the other three hints follow from it (spec/surface.md §2).
    pub read_only: bool,
    /// The tool description: what the tool is for, what it returns and the next step; the
    /// protocol every tool shares is in `initialize` `instructions` (spec/surface.md §18.6).
    pub description: &'static str,
    /// The checked-in `schemas/<name>.input.schema.json` text, advertised and enforced.
    pub input_schema: &'static str,
    /// The checked-in `schemas/<name>.output.schema.json` text, advertised and enforced.
    pub output_schema: &'static str,
    /// Builds what `input_schema` must hold (the gate test `schemas_are_current` compares).
    pub build_input_schema: SchemaBuilder,
    /// Builds what `output_schema` must hold.
    pub build_output_schema: SchemaBuilder,
    /// The tool's rows of the curated alias table (spec/surface.md §9.4).
    pub aliases: &'static [Alias],
    /// The shared schema file the tool's schemas draw on, beside the built-in ones.
    pub shared_schema: Option<&'static SharedSchema>,
    /// The tool's own examples of arguments for the schema guidance.
    pub argument_examples: &'static [ArgumentExample],
    /// The handler: pure checks, then `bundle_path`, then I/O (spec/surface.md §9.1 steps 5–7).
    pub run: Handler,
}

/// The checked-in text of `schemas/<tool>.<direction>.schema.json`, `direction` being
/// `"input"` or `"output"`.
///
/// A new tool's two files must exist before it compiles: create them empty, then run the
/// generator (`OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it schemas_are_current`).
macro_rules! checked_in {
    ($tool:literal, $direction:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/schemas/",
            $tool,
            ".",
            $direction,
            ".schema.json"
        ))
    };
}
pub(crate) use checked_in;

/// The alias row of an apply tool without a mode switch (spec/surface.md §9.4): every mode key
/// names the paired preview and what the apply binds to.
macro_rules! mode_switch_alias {
    ($tool:literal, $preview:literal, $binds:literal) => {
        $crate::tools::def::Alias {
            keys: &$crate::tools::def::MODE_KEYS,
            field: $preview,
            guidance: concat!(
                $tool,
                " has no mode switch. Use ",
                $preview,
                " to rehearse, then apply with ",
                $binds,
                "."
            ),
        }
    };
}
pub(crate) use mode_switch_alias;
