//! `preview_v02_migration` (spec/migration.md §5.1, §8). Read-only: never writes, never
//! creates `.okf/`.

use crate::envelope::ToolError;
use crate::plan::migration::request::parse_request;
use crate::tools::def::checked_in;
use crate::tools::migration::{input_members, preview_success, render_preview, Migration};
use crate::tools::schema_parts::{output_root, SchemaRoot};
use crate::tools::{Ctx, Success, ToolSpec};
use serde_json::Value;

/// `preview_v02_migration` as registered (spec/migration.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "preview_v02_migration",
    title: "Preview the 0.1 to 0.2 migration",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("preview_v02_migration", "input"),
    output_schema: checked_in!("preview_v02_migration", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: Some(&crate::tools::migration::SHARED_SCHEMA),
    argument_examples: &[],
    run,
};

/// The tool description (spec/migration.md §2).
const DESCRIPTION: &str = "Use to rehearse the OKF 0.1 to 0.2 migration; writes nothing. Only mapped # Citations are rewritten: start with citation_mappings [], review proposed_citation_mappings (unreviewed suggestions), then preview with accept_proposals = proposals_digest or your own items. Lists stop at limit; totals counts all. Next: apply_v02_migration with the same arguments plus expected_source = source, base_revision and expected_plan_digest = plan_digest.";

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
    let (plan, _) = crate::tools::spine::preview::<Migration>(&req, ctx)?;
    let out = render_preview(&plan, &req.view)?;
    let text = crate::tools::migration::preview_summary(&plan, &out, &req.view);
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
