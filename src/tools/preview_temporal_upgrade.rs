//! `preview_temporal_upgrade` (spec/temporal.md §5). Read-only: never writes, never creates
//! `.okf/`.

use crate::envelope::ToolError;
use crate::plan::temporal::request::parse_request;
use crate::tools::def::checked_in;
use crate::tools::describe::{input_errors, retryable_note};
use crate::tools::schema_parts::{output_root, SchemaRoot};
use crate::tools::temporal_upgrade::{
    check_preview_state, input_members, plan_live, preview_success, render_preview,
};
use crate::tools::{Ctx, Success, ToolSpec};
use serde_json::Value;

/// `preview_temporal_upgrade` as registered (spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "preview_temporal_upgrade",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("preview_temporal_upgrade", "input"),
    output_schema: checked_in!("preview_temporal_upgrade", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = concat!(
    "Use to rehearse the upgrade of an OKF 0.2 bundle from calendar dates (profile date-3fcbb9f) to offset datetimes (instant-0b87c52) without writing anything: the temporal fields stale_after, usage_window.from/to, sources[N].last_modified and sources[N].usage_window.from/to. ",
    "There is no default time of day or offset: pass one mapping {concept, path, from, to} per legacy-date occurrence, with from equal to the listed date and to the instant you choose. A first call without mappings lists every legacy date in unresolved (observation order). Only the scalar token changes (plain stays plain, quotes and tags and comments are kept); an anchored or tagged-and-quoted value fails closed. 0.1 bundles: migrate with preview_v02_migration first. ",
    "Returns status (ready, incomplete or noop), base_revision, result_revision, unresolved [{concept, path, from}] and, for ready only, plan_digest. ",
    "Statuses: incomplete (map every unresolved entry and preview again); ready (review, then apply); noop (no legacy dates remain; nothing to apply). ",
    "Errors: operation_rejected \"temporal upgrade preview failed\" with one diagnostic naming the cause: temporal_mapping_duplicate, temporal_source_changed (from differs from the observed date), temporal_mapping_stray (no legacy date at that concept and path), temporal_field_malformed, temporal_value_unsupported, temporal_presentation_unsupported (rewrite that value by hand), temporal_version_unsupported, staged_validation_failed; invalid_request \"invalid temporal mapping\" for a mapping concept that is not a canonical concept id. ",
    "Limits: mappings at most 10,000, id 1 to 128 bytes, actor 1 to 256 bytes, at most 100,000 unresolved entries returned.",
    input_errors!(),
    retryable_note!(),
    " A preview is not authorisation. Next step after ready: apply_temporal_upgrade with the same bundle_path, id, actor and mappings plus base_revision and plan_digest from this preview, unchanged, once the user approves."
);

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The pure checks of spec/temporal.md §5 step 2, then `bundle_path`, capture errors and the
/// failures of §5 step 9.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_request(&args, false)?;
    let plan = plan_live(&req, ctx)?;
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
