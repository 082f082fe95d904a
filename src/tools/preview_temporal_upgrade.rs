//! `preview_temporal_upgrade` (spec/temporal.md §5). Read-only: never writes, never creates
//! `.okf/`.

use crate::envelope::ToolError;
use crate::plan::temporal::request::parse_request;
use crate::tools::def::checked_in;
use crate::tools::schema_parts::{output_root, SchemaRoot};
use crate::tools::temporal_upgrade::{
    check_preview_state, input_members, preview_success, render_preview, TemporalUpgrade,
};
use crate::tools::{Ctx, Success, ToolSpec};
use serde_json::Value;

/// `preview_temporal_upgrade` as registered (spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "preview_temporal_upgrade",
    title: "Preview the date to instant upgrade",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("preview_temporal_upgrade", "input"),
    output_schema: checked_in!("preview_temporal_upgrade", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to rehearse upgrading an OKF 0.2 bundle from calendar dates (date-3fcbb9f) to offset datetimes (instant-0b87c52); writes nothing. There is no default time or offset: a first call without mappings lists every legacy date in unresolved; pass one mapping {concept, path, from, to} for each. Returns status ready, incomplete or noop, base_revision and (ready) plan_digest. Next, after approval: apply_temporal_upgrade with the same arguments plus base_revision and plan_digest.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The pure checks of spec/temporal.md §5 step 2, then `bundle_path`, capture errors and the
/// failures of §5 step 9.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_request(&args, false)?;
    let (plan, _) = crate::tools::spine::preview::<TemporalUpgrade>(&req, ctx)?;
    let out = render_preview(&plan)?;
    check_preview_state(&out)?;
    let text = crate::tools::temporal_upgrade::preview_summary(&plan, &out);
    Ok(Success::with_second_text(out, text))
}

fn input_schema() -> SchemaRoot {
    SchemaRoot::new(input_members(
        "preview_temporal_upgrade",
        "Arguments of preview_temporal_upgrade (spec/temporal.md §5).",
        false,
    ))
}

fn output_schema() -> SchemaRoot {
    output_root(
        "preview_temporal_upgrade",
        "Result of preview_temporal_upgrade (spec/temporal.md §5).",
        preview_success(),
    )
}
