//! `preview_v02_migration` (spec/migration.md §5.1, §8). Read-only: never writes, never
//! creates `.okf/`.

use crate::envelope::ToolError;
use crate::plan::migration::request::parse_request;
use crate::tools::def::checked_in;
use crate::tools::describe::{input_errors, retryable_note};
use crate::tools::migration::{input_members, plan_live, preview_success, render_preview};
use crate::tools::schema_parts::{output_root, SchemaRoot};
use crate::tools::{Ctx, Success, ToolSpec};
use serde_json::Value;

/// `preview_v02_migration` as registered (spec/migration.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "preview_v02_migration",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("preview_v02_migration", "input"),
    output_schema: checked_in!("preview_v02_migration", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    run,
};

/// The tool description (spec/migration.md §2).
const DESCRIPTION: &str = concat!(
    "Use to rehearse the OKF 0.1 to 0.2 migration of a bundle without publishing anything: legacy timestamp becomes generated {by, at}, each # Citations section becomes frontmatter sources plus footnotes [^id] (claims [N] and mapped inline notes ^[text] rewritten), and the root index.md declares okf_version \"0.2\" last. ",
    "Only what the caller maps explicitly is rewritten: pass citation_mappings (may be [] on a first call; then copy proposed_citation_mappings after review), timestamp_policy, and generated_by for new generated blocks. Reserved index.md/log.md citations need an exact legacy_entry or an explicit resource (and title). Optional computations turn mapped concepts into Attested Computations from a caller-supplied contract (inline fence, or a file asset created with the given text, whose computation_path must resolve to asset.path). Date to instant upgrades belong to preview_temporal_upgrade. ",
    "Returns status (applicable, noop or blocked), source (the resolution), proof and plan_digest (applicable and transition noop only), base_revision, result_revision, a unified diff (at most 1 MiB), affected_paths, blockers with manual_actions, diagnostics, proposed_citation_mappings and proposals_truncated. ",
    "Limits: citation_mappings at most 10,000 documents and 100,000 entries, text fields at most 4096 bytes, generated_by at most 256 bytes, computations at most 256 (asset content at most 8 MiB, inline_computation at most 1 MiB), arguments at most 16 MiB; at most 10,000 blockers are returned (blockers_truncated) and 100,000 proposed entries (proposals_truncated). ",
    "Next step: after the user approves the diff, call apply_v02_migration with the same arguments plus expected_source = source, proof and expected_plan_digest = plan_digest, unchanged (for a target noop omit proof and expected_plan_digest). Blocked: fix what the blockers name and preview again.",
    input_errors!(),
    retryable_note!(),
    " A preview is not authorisation."
);

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The pure input checks of spec/migration.md §3.5, then `bundle_path`, capture and
/// resolution errors (`unsupported_migration_source`, `invalid_request`), `resource_limit`
/// past the output caps. Blocked plans are successes.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_request(&args, false)?;
    // The typed request holds everything the tool needs; the JSON tree of a large request
    // (a 3.8 MiB `citation_mappings` takes ≈ 35 MiB as a `Value`) goes before any I/O.
    drop(args);
    let plan = plan_live(&req, ctx, "from")?;
    let out = render_preview(&plan)?;
    let text = crate::tools::migration::preview_summary(&plan, &out);
    Ok(Success::with_second_text(out, text))
}

fn input_schema() -> SchemaRoot {
    SchemaRoot {
        members: input_members(
            "preview_v02_migration",
            "Arguments of preview_v02_migration (spec/migration.md §3).",
            false,
        ),
        local_defs: Vec::new(),
    }
}

fn output_schema() -> SchemaRoot {
    output_root(
        "preview_v02_migration",
        "Result of preview_v02_migration (spec/migration.md §5.1).",
        preview_success(),
    )
}
