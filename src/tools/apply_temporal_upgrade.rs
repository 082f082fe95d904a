//! `apply_temporal_upgrade` (spec/temporal.md §6, §7): the request is decoded here, the
//! pipeline (gating, capture, branch A/B, commit, outcome) is [`crate::tools::spine::apply`]
//! with the [`TemporalUpgrade`] workflow.

use crate::envelope::ToolError;
use crate::plan::temporal::request::parse_request;
use crate::tools::def::{checked_in, mode_switch_alias, Alias};
use crate::tools::schema_parts::{output_root, SchemaRoot};
use crate::tools::spine;
use crate::tools::temporal_upgrade::{apply_success, input_members, TemporalUpgrade};
use crate::tools::{Ctx, Success, ToolSpec};
use serde_json::Value;

/// `apply_temporal_upgrade` as registered (spec/surface.md §2, §9.4).
pub const TOOL: ToolSpec = ToolSpec {
    name: "apply_temporal_upgrade",
    title: "Apply the date to instant upgrade",
    read_only: false,
    description: DESCRIPTION,
    input_schema: checked_in!("apply_temporal_upgrade", "input"),
    output_schema: checked_in!("apply_temporal_upgrade", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[
        mode_switch_alias!(
            "apply_temporal_upgrade",
            "preview_temporal_upgrade",
            "its base_revision and plan_digest"
        ),
        Alias {
            keys: &["expected_plan_digest", "expectedPlanDigest"],
            field: "plan_digest",
            guidance: "use plan_digest (the plan_digest returned by preview_temporal_upgrade, unchanged).",
        },
        Alias {
            keys: &["expected_revision", "expectedRevision"],
            field: "base_revision",
            guidance: "use base_revision (the base_revision returned by preview_temporal_upgrade, unchanged).",
        },
    ],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use after a ready preview_temporal_upgrade the user approved: the identical bundle_path, id, actor and mappings plus its base_revision and plan_digest, unchanged. Rebuilds the plan and commits atomically. If the bundle moved, preview again. Next: validate_bundle (auto reads the instants).";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The envelope errors of spec/temporal.md §7.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_request(&args, true)?;
    spine::apply::<TemporalUpgrade>(&req, ctx)
}

fn input_schema() -> SchemaRoot {
    SchemaRoot::new(input_members(
        "apply_temporal_upgrade",
        "Arguments of apply_temporal_upgrade: the preview's arguments plus its base_revision and plan_digest (spec/temporal.md §6).",
        true,
    ))
}

fn output_schema() -> SchemaRoot {
    output_root(
        "apply_temporal_upgrade",
        "Result of apply_temporal_upgrade (spec/temporal.md §6).",
        apply_success(),
    )
}
