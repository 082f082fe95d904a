//! `apply_v02_migration` (spec/migration.md §5.2, §9): [`crate::tools::spine::apply`] with the
//! [`Migration`] workflow, whose hooks hold the zero-I/O gating of §9 A
//! ([`crate::tools::migration::authorise`]) and the target-noop branch of §9 C.

use crate::envelope::ToolError;
use crate::plan::migration::request::parse_request;
use crate::tools::def::{checked_in, mode_switch_alias, Alias};
use crate::tools::migration::{apply_success, input_members, Migration};
use crate::tools::schema_parts::{output_root, SchemaRoot};
use crate::tools::spine;
use crate::tools::{Ctx, Success, ToolSpec};
use serde_json::Value;

/// `apply_v02_migration` as registered (spec/migration.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "apply_v02_migration",
    title: "Apply the 0.1 to 0.2 migration",
    read_only: false,
    description: DESCRIPTION,
    input_schema: checked_in!("apply_v02_migration", "input"),
    output_schema: checked_in!("apply_v02_migration", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[
        mode_switch_alias!(
            "apply_v02_migration",
            "preview_v02_migration",
            "its expected_source, proof and expected_plan_digest"
        ),
        Alias {
            keys: &["plan_digest", "planDigest"],
            field: "expected_plan_digest",
            guidance: "use expected_plan_digest (the plan_digest returned by preview_v02_migration, unchanged).",
        },
        Alias {
            keys: &["expected_revision", "expectedRevision"],
            field: "expected_source",
            guidance: "apply_v02_migration has no expected_revision; it binds to expected_source and proof.base_revision from preview_v02_migration.",
        },
    ],
    shared_schema: Some(&crate::tools::migration::SHARED_SCHEMA),
    argument_examples: &[crate::tools::migration::EXPECTED_SOURCE_EXAMPLE],
    run,
};

/// The tool description (spec/migration.md §2).
const DESCRIPTION: &str = "Use after reviewing preview_v02_migration: the same arguments plus expected_source (its source), base_revision and expected_plan_digest (its plan_digest), unchanged; proof is optional; for a target noop omit the digest. Publishes in one transaction, root index.md last; an exact replay returns the stored result. source_conflict or revision_conflict: preview again. Next: validate_bundle with strict true and target_version 0.2.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The zero-I/O checks of spec/migration.md §9 A, then the errors of §9 B–G.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let req = parse_request(&args, true)?;
    // The typed request holds everything the tool needs; the JSON tree of a large request
    // (a 3.8 MiB `citation_mappings` takes ≈ 35 MiB as a `Value`) goes before any I/O.
    drop(args);
    spine::apply::<Migration>(&req, ctx)
}

fn input_schema() -> SchemaRoot {
    SchemaRoot {
        members: input_members(
            "apply_v02_migration",
            "Arguments of apply_v02_migration (spec/migration.md §3.1–§3.2).",
            true,
        ),
        local_defs: Vec::new(),
    }
}

fn output_schema() -> SchemaRoot {
    output_root(
        "apply_v02_migration",
        "Result of apply_v02_migration (spec/migration.md §5.2).",
        apply_success(),
    )
}
