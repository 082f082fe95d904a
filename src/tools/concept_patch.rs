//! The concept-patch workflow on the spine (spec/concept-patch.md §6): what
//! `preview_concept_patch` and `apply_concept_patch` supply to [`crate::tools::spine`], and the
//! parts of their schemas they share.

use crate::cancel::Cancel;
use crate::envelope::ToolError;
use crate::okf::bundle::Bundle;
use crate::okf::capture::Capture;
use crate::okf::detect;
use crate::okf::temporal::{Choice, Profile, ProfileSource, Resolution};
use crate::okf::validate::ValidationOptions;
use crate::plan::identity::{Authorisation, ChangeSet};
use crate::plan::patch::ops::{authorisation_mismatch, PatchRequest};
use crate::plan::patch::planner::{documents_read, plan_patch_parsed, validation_options};
use crate::plan::stage::Plan;
use crate::store::root::Root;
use crate::tools::outcome::Flavor;
use crate::tools::schema_parts::{
    input_root, profile_branches, r, temporal_profile_prop, with, EXAMPLE_BUNDLE_PATH,
};
use crate::tools::spine::{
    has_severity, state_violation, strictly_ascending, ApplyAnswer, Workflow,
};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// How the concept-patch apply's store errors read (spec/concept-patch.md §6.2).
pub const FLAVOR: Flavor = Flavor {
    tool: "apply_concept_patch",
    revision_field: "expected_revision",
    digest_field: "expected_plan_digest",
    conflict_step: crate::tools::outcome::PREVIEW_CONFLICT_STEP,
    wrap: None,
};

/// The concept patch (spec/concept-patch.md).
#[derive(Debug, Clone, Copy)]
pub struct ConceptPatch;

impl Workflow for ConceptPatch {
    type Request = PatchRequest;
    type Plan = Plan;
    const NAMESPACE: &'static str = "mcp:concept-patch";
    const FLAVOR: Flavor = FLAVOR;

    fn bundle_path(req: &PatchRequest) -> &str {
        &req.bundle_path
    }

    fn authorisation(req: &PatchRequest) -> Option<&Authorisation> {
        req.expected.as_ref()
    }

    fn change_set(req: &PatchRequest, base_revision: &str) -> ChangeSet {
        ChangeSet::concept_patch(&req.actor, base_revision, &req.operations)
    }

    fn validation_options(req: &PatchRequest) -> ValidationOptions {
        validation_options(req)
    }

    fn documents_read(req: &PatchRequest) -> BTreeSet<String> {
        documents_read(req)
    }

    fn spill_profiles(req: &PatchRequest) -> Vec<Profile> {
        match req.choice {
            Choice::Explicit(p) => vec![p],
            Choice::Auto => vec![Profile::Date, Profile::Instant],
        }
    }

    fn resolve(
        req: &PatchRequest,
        capture: &Capture,
        _root: &Root,
        replay: bool,
        _cancel: &Cancel,
    ) -> Result<Option<PatchRequest>, ToolError> {
        match req.choice {
            Choice::Explicit(_) => Ok(None),
            Choice::Auto => {
                let q = req.resolved(detect::capture_kinds(capture), replay)?;
                if let Some(r) = &q.resolution {
                    crate::tools::common::notice_mixed(r);
                }
                Ok(Some(q))
            }
        }
    }

    fn plan(
        bundle: &Bundle<'_>,
        req: &PatchRequest,
        change_set_base: &str,
        _root: &Root,
        cancel: &Cancel,
    ) -> Result<Plan, ToolError> {
        plan_patch_parsed(bundle, req, change_set_base, cancel)
    }

    fn to_stage(plan: Plan) -> Result<Plan, ToolError> {
        Ok(plan)
    }

    fn mismatch(message: &str) -> ToolError {
        authorisation_mismatch(message)
    }

    fn check_apply_state(out: &Value) -> Result<(), ToolError> {
        check_apply_state(out)
    }

    fn render_apply(answer: &ApplyAnswer<'_>, req: &PatchRequest) -> Value {
        let mut out = answer.to_json();
        if let Value::Object(m) = &mut out {
            insert_profile(m, req);
        }
        out
    }
}

/// The resolution of `req`'s profile (spec/temporal.md §11): the explicit one, or what `auto`
/// resolved to (the date profile by default if the request never met a capture).
#[must_use]
pub fn resolution(req: &PatchRequest) -> Resolution {
    req.resolution.unwrap_or(Resolution {
        profile: req.profile,
        source: ProfileSource::Default,
        mixed: false,
    })
}

/// Adds `temporal_profile` (the resolved id) and `temporal_profile_source` to a patch output
/// (spec/surface.md §18.1 rule 1).
pub fn insert_profile(m: &mut Map<String, Value>, req: &PatchRequest) {
    let r = resolution(req);
    m.insert("temporal_profile".into(), json!(r.profile.id()));
    m.insert("temporal_profile_source".into(), json!(r.source.as_str()));
}

/// A fixed operation list that validates under both temporal profiles; the guidance for a
/// missing or empty `operations` shows it (spec/surface.md §6.3, SCH-07). It sets only the
/// status, so an agent that copies it keeps the concept's `stale_after` (AUT-02).
#[must_use]
pub fn example_operations() -> Value {
    json!([{
        "kind": "set_lifecycle",
        "concept_id": "tables/orders",
        "lifecycle": {"status": "deprecated"}
    }])
}

/// The schema guidance's example of `operations` (spec/surface.md §6.3, SCH-07):
/// [`example_operations`].
pub const OPERATIONS_EXAMPLE: crate::tools::def::ArgumentExample =
    crate::tools::def::ArgumentExample {
        name: "operations",
        shape: "a JSON array of 1 to 256 operation objects",
        item: "operation",
        example: example_operations,
    };

/// The input root of a concept-patch tool (spec/concept-patch.md §2): `bundle_path`,
/// `temporal_profile`, `actor` and `operations`, then the tool's `extra` members (all
/// required), the profile branches over the operations, and one example with the
/// `extra_example` members appended.
#[must_use]
pub fn patch_input_root(
    tool: &str,
    description: &str,
    extra: Vec<(&str, Value)>,
    extra_example: Vec<(&str, Value)>,
) -> Map<String, Value> {
    let mut required = vec!["bundle_path", "actor", "operations"];
    required.extend(extra.iter().map(|(k, _)| *k));
    let mut props = vec![
        ("bundle_path", r("bundle_path")),
        ("temporal_profile", temporal_profile_prop()),
        (
            "actor",
            with(r("actor"), "examples", json!(["agent-session-1"])),
        ),
        (
            "operations",
            json!({
                "type": "array",
                "minItems": 1,
                "maxItems": 256,
                "items": r("operation"),
                "examples": [example_operations()]
            }),
        ),
    ];
    props.extend(extra);
    let mut example = Map::new();
    example.insert("bundle_path".into(), json!(EXAMPLE_BUNDLE_PATH));
    example.insert("actor".into(), json!("agent-session-1"));
    example.insert("operations".into(), example_operations());
    for (k, v) in extra_example {
        example.insert(k.to_owned(), v);
    }
    let mut m = input_root(tool, description, &required, props);
    profile_branches(&mut m, false, true);
    m.insert("examples".into(), json!([example]));
    m
}

/// The cross-field state invariants of an apply result that the JSON Schema cannot express
/// (spec/concept-patch.md §5.2): `applied` has result ≠ base, ≥ 1 changed path and `INFO`
/// diagnostics only; `noop` has result = base, no paths, `INFO` only; `rejected` has
/// result = base, no paths and ≥ 1 `ERROR`; paths strictly ascending; codes non-empty.
///
/// # Errors
/// `schema_validation` (`tool output violates its advertised state invariants`).
pub fn check_apply_state(out: &Value) -> Result<(), ToolError> {
    let base = &out["base_revision"];
    let result = &out["result_revision"];
    let paths_empty = out["changed_paths"].as_array().is_some_and(Vec::is_empty);
    let info_only = !has_severity(out, "ERROR") && !has_severity(out, "WARN");
    let empty_code = out["diagnostics"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x["code"] == ""));
    let revisions = base.is_string() && result.is_string();
    let ok = match out["status"].as_str() {
        Some("applied") => result != base && !paths_empty && info_only,
        Some("noop") => result == base && paths_empty && info_only,
        Some("rejected") => result == base && paths_empty && has_severity(out, "ERROR"),
        _ => false,
    };
    if ok && revisions && !empty_code && strictly_ascending(&out["changed_paths"]) {
        Ok(())
    } else {
        Err(state_violation())
    }
}
