//! `apply_concept_patch` (spec/concept-patch.md §5.2, §6.2; spec/store.md §10–§13): the
//! request is decoded here, the pipeline (gating, capture, branch A/B, commit, outcome) is
//! [`crate::tools::spine::apply`] with the [`ConceptPatch`] workflow.

use crate::envelope::ToolError;
use crate::plan::patch::ops::parse_patch_request;
use crate::tools::concept_patch::patch_input_root;
use crate::tools::concept_patch::ConceptPatch;
use crate::tools::def::{checked_in, mode_switch_alias, Alias};
use crate::tools::schema_parts::{
    closed, diagnostics_array, has_error, info_only, output_root, paths_array, r, status_branch,
    with, SchemaRoot,
};
use crate::tools::spine;
use crate::tools::{Ctx, Success, ToolSpec};
use serde_json::{json, Value};

/// `apply_concept_patch` as registered (spec/concept-patch.md §5.2, §6.2; annotations
/// spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "apply_concept_patch",
    title: "Apply a concept patch",
    read_only: false,
    description: DESCRIPTION,
    input_schema: checked_in!("apply_concept_patch", "input"),
    output_schema: checked_in!("apply_concept_patch", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[
        mode_switch_alias!(
            "apply_concept_patch",
            "preview_concept_patch",
            "its expected_revision and expected_plan_digest"
        ),
        Alias {
            keys: &["plan_digest", "planDigest"],
            field: "expected_plan_digest",
            guidance: "use expected_plan_digest (the plan_digest returned by preview_concept_patch, unchanged).",
        },
        Alias {
            keys: &["base_revision", "baseRevision"],
            field: "expected_revision",
            guidance: "use expected_revision (the base_revision returned by preview_concept_patch, unchanged).",
        },
    ],
    shared_schema: None,
    argument_examples: &[crate::tools::concept_patch::OPERATIONS_EXAMPLE],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to commit a patch the user approved after preview_concept_patch: the identical arguments plus expected_revision (the preview's base_revision, not result_revision) and expected_plan_digest (its plan_digest). Rebuilds the plan and commits atomically if the bundle did not move. revision_conflict: preview again. Next: read_concept or validate_bundle to confirm.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The envelope errors of spec/concept-patch.md §8. Rejections are successes.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_patch_request(&args, true)?;
    spine::apply::<ConceptPatch>(&req, ctx)
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root: the preview's arguments plus the two authorisation values
/// (spec/concept-patch.md §2).
fn input_schema() -> SchemaRoot {
    let revision = format!("sha256:{}", "0".repeat(64));
    SchemaRoot::new(patch_input_root(
        "apply_concept_patch",
        "Arguments of apply_concept_patch: the preview's arguments plus its base_revision and plan_digest (spec/concept-patch.md §2).",
        vec![
            (
                "expected_revision",
                with(
                    r("revision"),
                    "description",
                    json!("The base_revision of the preview, unchanged."),
                ),
            ),
            (
                "expected_plan_digest",
                with(
                    r("digest"),
                    "description",
                    json!("The plan_digest of the preview, unchanged."),
                ),
            ),
        ],
        vec![
            ("expected_revision", json!(revision)),
            ("expected_plan_digest", json!(revision)),
        ],
    ))
}

/// The output schema root (spec/concept-patch.md §5.2).
fn output_schema() -> SchemaRoot {
    output_root(
        "apply_concept_patch",
        "Result of apply_concept_patch (spec/concept-patch.md §5.2).",
        apply_success(),
    )
}

fn apply_success() -> Value {
    let base = closed(vec![
        (
            "status",
            json!({"type": "string", "enum": ["applied", "noop", "rejected"]}),
        ),
        ("base_revision", r("revision")),
        ("result_revision", r("revision")),
        ("plan_digest", r("digest")),
        ("changed_paths", paths_array()),
        ("diagnostics", diagnostics_array()),
        ("temporal_profile", r("temporal_profile_id")),
        ("temporal_profile_source", r("temporal_profile_source")),
    ]);
    // The state invariants of spec/concept-patch.md §5.2 that JSON Schema can express.
    with(
        base,
        "allOf",
        json!([
            status_branch(
                "applied",
                json!({
                    "changed_paths": {"minItems": 1},
                    "diagnostics": info_only()
                })
            ),
            status_branch(
                "noop",
                json!({
                    "changed_paths": {"const": []},
                    "diagnostics": info_only()
                })
            ),
            status_branch(
                "rejected",
                json!({
                    "changed_paths": {"const": []},
                    "diagnostics": has_error()
                })
            )
        ]),
    )
}
