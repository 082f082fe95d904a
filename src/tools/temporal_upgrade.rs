//! The date → instant temporal upgrade on the spine (spec/temporal.md §5–§7, §10): what
//! `preview_temporal_upgrade` and `apply_temporal_upgrade` supply to
//! [`crate::tools::spine`], the preview run, the payload producer of the apply, the
//! rendering of both outputs and the parts of their schemas they share.

use crate::cancel::Cancel;
use crate::envelope::ToolError;
use crate::okf::bundle::Bundle;
use crate::okf::capture::CapturedFile;
use crate::okf::temporal::{DATE_PATTERN, UPGRADE_TARGET_PATTERN};
use crate::okf::validate::ValidationOptions;
use crate::plan::identity::{Authorisation, ChangeSet};
use crate::plan::stage::{Plan, PlanStatus};
use crate::plan::stream::{Payloads, Writes};
use crate::plan::temporal::identity::{self, NAMESPACE};
use crate::plan::temporal::payloads::Producer;
use crate::plan::temporal::request::{failure, TemporalRequest};
use crate::plan::temporal::{self as planner, UpgradePlan, UpgradeStatus};
use crate::store::capture;
use crate::store::error::StoreError;
use crate::store::root::Root;
use crate::tools::outcome::{receipt_mismatch, Flavor};
use crate::tools::schema_parts::{
    closed, closed_with, diagnostics_array, info_only, input_root, r, status_branch, with,
    EXAMPLE_BUNDLE_PATH,
};
use crate::tools::spine::{state_violation, ApplyAnswer, Workflow};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// How the temporal apply's store errors read: its own fixed form (temporal.md §7).
pub const FLAVOR: Flavor = Flavor {
    tool: "apply_temporal_upgrade",
    revision_field: "base_revision",
    digest_field: "plan_digest",
    conflict_step: crate::tools::outcome::PREVIEW_CONFLICT_STEP,
    wrap: Some(&crate::tools::outcome::Wrap {
        message: "temporal upgrade apply failed",
        conflict_step: "The bundle revision changed. Preview again, review the new revision and digest, then apply the new plan.",
        cancelled_message: "temporal upgrade outcome is not confirmed",
        mismatch_message: "temporal upgrade plan or receipt did not match",
        io_field: "bundle_path",
    }),
};

/// The temporal upgrade (spec/temporal.md).
#[derive(Debug, Clone, Copy)]
pub struct TemporalUpgrade;

/// Reads spilled documents of `root` again ([`crate::store::capture::reread`]).
fn reader(root: &Root) -> impl Fn(&CapturedFile) -> Result<Vec<u8>, ToolError> + '_ {
    move |f| capture::reread(root, f)
}

impl Workflow for TemporalUpgrade {
    type Request = TemporalRequest;
    type Plan = UpgradePlan;
    const NAMESPACE: &'static str = NAMESPACE;
    const FLAVOR: Flavor = FLAVOR;

    fn bundle_path(req: &TemporalRequest) -> &str {
        &req.bundle_path
    }

    fn authorisation(req: &TemporalRequest) -> Option<&Authorisation> {
        req.auth.as_ref()
    }

    fn change_set(req: &TemporalRequest, base_revision: &str) -> ChangeSet {
        identity::change_set(req, base_revision)
    }

    fn validation_options(_req: &TemporalRequest) -> ValidationOptions {
        planner::validation_options()
    }

    fn documents_read(_req: &TemporalRequest) -> BTreeSet<String> {
        // Only the root declaration stays resident; every concept is read again one at a
        // time (as the migration, spec/migration.md §12.5 rule 1).
        BTreeSet::from(["index.md".to_owned()])
    }

    /// §5 (a preview request) or §6 step 3 (an apply request, with its base revision): the
    /// full preview on the capture.
    fn plan(
        bundle: &Bundle<'_>,
        req: &TemporalRequest,
        change_set_base: &str,
        root: &Root,
        cancel: &Cancel,
    ) -> Result<UpgradePlan, ToolError> {
        let apply = req.auth.is_some();
        planner::plan(bundle, req, change_set_base, &reader(root), cancel, apply)
    }

    /// §6 step 3: a status other than `ready` fails.
    fn to_stage(p: UpgradePlan) -> Result<Plan, ToolError> {
        match p.status {
            UpgradeStatus::Ready => Ok(to_stage_plan(p)),
            UpgradeStatus::Incomplete => Err(failure(
                true,
                "temporal_upgrade_incomplete",
                "legacy dates without a mapping remain: run preview_temporal_upgrade and map every unresolved entry",
                "",
            )),
            UpgradeStatus::Noop => Err(failure(
                true,
                "temporal_upgrade_noop",
                "the bundle holds no legacy dates: there is nothing to apply",
                "",
            )),
        }
    }

    fn payloads<'a>(
        req: &'a TemporalRequest,
        root: &'a Root,
    ) -> Option<Box<dyn Payloads<StoreError> + 'a>> {
        Some(Box::new(Producer::new(
            req,
            Box::new(move |f| capture::reread(root, f)),
        )))
    }

    fn mismatch(_message: &str) -> ToolError {
        receipt_mismatch(FLAVOR)
    }

    fn check_apply_state(out: &Value) -> Result<(), ToolError> {
        check_apply_state(out)
    }

    fn render_apply(answer: &ApplyAnswer<'_>, req: &TemporalRequest) -> Value {
        // The receipt matched the request (spec/store.md §12.2), so its request digest is
        // the one recomputed from the request on the authorised base.
        let base = req
            .auth
            .as_ref()
            .map_or(answer.base_revision.as_str(), |a| a.revision.as_str());
        json!({
            "status": answer.status.as_str(),
            "request_digest": identity::change_set(req, base).request_digest(),
            "result_revision": answer.result_revision,
            "diagnostics": answer.diagnostics,
        })
    }
}

/// The spine's view of a `ready` plan: applicable, streamed writes.
fn to_stage_plan(p: UpgradePlan) -> Plan {
    Plan {
        status: PlanStatus::Applicable,
        base_revision: p.base_revision,
        result_revision: Some(p.result_revision),
        request_digest: p.request_digest,
        change_set_id: p.change_set_id,
        plan_digest: p.plan_digest.unwrap_or_default(),
        writes: Writes::streamed(p.writes),
        changed_refs: p.changed_refs,
        diff: crate::plan::diff::Diff::default(),
        diagnostics: Vec::new(),
        effects: Vec::new(),
    }
}

/// The preview's wire object (§5): `{status, base_revision, result_revision, unresolved,
/// plan_digest?}`.
///
/// # Errors
/// `resource_limit` past [`MAX_UNRESOLVED`] unresolved entries.
pub fn render_preview(p: &UpgradePlan) -> Result<Value, ToolError> {
    if p.unresolved.len() > MAX_UNRESOLVED {
        return Err(ToolError::resource_limit(
            "more than 100,000 legacy dates are unresolved; the upgrade of this bundle exceeds the mapping limit",
        ));
    }
    let mut o = Map::new();
    o.insert("status".into(), json!(p.status.as_str()));
    o.insert("base_revision".into(), json!(p.base_revision));
    o.insert("result_revision".into(), json!(p.result_revision));
    o.insert(
        "unresolved".into(),
        json!(p
            .unresolved
            .iter()
            .map(|u| json!({"concept": u.concept, "path": u.path, "from": u.from}))
            .collect::<Vec<_>>()),
    );
    if let Some(d) = &p.plan_digest {
        o.insert("plan_digest".into(), json!(d));
    }
    Ok(Value::Object(o))
}

/// The readable preview text (spec/surface.md §18.2 rule 2): one line per upgraded document
/// (`<path>: changed`) and one per unresolved value (`<concept> <field>: rejected:
/// unresolved (value <from>)`: the upgrade needs a mapping for it); documents not listed are
/// left as they are; then the diff of the planned rewrites (a `ready` preview; its structured
/// result carries no diff).
#[must_use]
pub fn preview_summary(p: &UpgradePlan, out: &Value) -> String {
    let mut lines: Vec<(String, String)> = p
        .writes
        .iter()
        .map(|(x, _, _)| (x.clone(), "changed".to_owned()))
        .collect();
    lines.extend(p.unresolved.iter().map(|u| {
        (
            format!("{} {}", u.concept, u.path),
            format!("rejected: unresolved (value {})", u.from),
        )
    }));
    // The planned rewrites as a diff (empty unless ready).
    crate::tools::text::preview_text(
        out["status"].as_str().unwrap_or_default(),
        &lines,
        &[],
        &p.diff.text,
        p.diff.truncated,
    )
}

/// Most `unresolved` entries of one preview (beyond reference: the output cap).
pub const MAX_UNRESOLVED: usize = 100_000;

/// The cross-field invariants of a preview result (§5): `ready` has a digest and a result
/// revision ≠ base, no unresolved entry; `incomplete` has ≥ 1 unresolved entry, no digest,
/// result = base; `noop` has none of them, result = base.
///
/// # Errors
/// `schema_validation` (`tool output violates its advertised state invariants`).
pub fn check_preview_state(out: &Value) -> Result<(), ToolError> {
    let base = &out["base_revision"];
    let result = &out["result_revision"];
    let unresolved = out["unresolved"].as_array().map_or(0, Vec::len);
    let digest = out.get("plan_digest").is_some();
    let ok = base.is_string()
        && result.is_string()
        && match out["status"].as_str() {
            Some("ready") => digest && unresolved == 0 && result != base,
            Some("incomplete") => !digest && unresolved > 0 && result == base,
            Some("noop") => !digest && unresolved == 0 && result == base,
            _ => false,
        };
    if ok {
        Ok(())
    } else {
        Err(state_violation())
    }
}

/// The cross-field invariants of an apply result (§6): `applied`, canonical digests,
/// `INFO` diagnostics only, each with a code.
///
/// # Errors
/// `schema_validation` (`tool output violates its advertised state invariants`).
pub fn check_apply_state(out: &Value) -> Result<(), ToolError> {
    let info_only = out["diagnostics"].as_array().is_some_and(|d| {
        d.iter()
            .all(|x| x["severity"] == "INFO" && x["code"].as_str().is_some_and(|c| !c.is_empty()))
    });
    let canonical = |v: &Value| v.as_str().is_some_and(crate::digest::is_canonical_digest);
    if out["status"] == "applied"
        && canonical(&out["request_digest"])
        && canonical(&out["result_revision"])
        && info_only
    {
        Ok(())
    } else {
        Err(state_violation())
    }
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/temporal.md §2.2, §3, §4, §5, §6)
// ---------------------------------------------------------------------------------------------

/// The §3 field-path pattern.
pub const FIELD_PATH_PATTERN: &str = r"^(stale_after|usage_window\.(from|to)|sources\[[0-9]+\]\.(last_modified|usage_window\.(from|to)))$";

fn mapping_def() -> Value {
    closed(vec![
        (
            "concept",
            json!({"type": "string", "minLength": 1, "maxLength": 4096, "description": "A concept id (parsed at runtime)."}),
        ),
        (
            "path",
            json!({"type": "string", "pattern": FIELD_PATH_PATTERN, "description": "The field occurrence (spec/temporal.md §3)."}),
        ),
        (
            "from",
            json!({"type": "string", "format": "date", "pattern": DATE_PATTERN, "description": "The observed legacy date, exactly as preview_temporal_upgrade listed it."}),
        ),
        (
            "to",
            json!({"type": "string", "format": "date-time", "pattern": UPGRADE_TARGET_PATTERN, "description": "The instant chosen for this occurrence; no default time of day or offset exists."}),
        ),
    ])
}

fn example_mapping() -> Value {
    json!({"concept": "tables/orders", "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"})
}

/// The input root of a temporal tool (§5, §6).
#[must_use]
pub fn input_members(tool: &str, description: &str, apply: bool) -> Map<String, Value> {
    let mut props = vec![
        ("bundle_path", r("bundle_path")),
        (
            "id",
            json!({"type": "string", "minLength": 1, "maxLength": 128, "description": "The change-set id of this upgrade (1 to 128 bytes, no surrounding whitespace or control characters).", "examples": ["upgrade-2026-01"]}),
        ),
        (
            "actor",
            with(r("actor"), "examples", json!(["agent-session-1"])),
        ),
        (
            "mappings",
            json!({"type": "array", "maxItems": 10000, "items": mapping_def(), "examples": [[example_mapping()]]}),
        ),
    ];
    let mut required = vec!["bundle_path", "id", "actor"];
    if apply {
        required.push("mappings");
        props.push((
            "base_revision",
            json!({"type": "string", "minLength": 1, "maxLength": 4096, "description": "The base_revision of the preview, unchanged (checked at runtime).", "examples": [format!("sha256:{}", "0".repeat(64))]}),
        ));
        props.push((
            "plan_digest",
            json!({"type": "string", "pattern": "^sha256:[a-f0-9]{64}$", "description": "The plan_digest of the ready preview, unchanged.", "examples": [format!("sha256:{}", "0".repeat(64))]}),
        ));
        required.push("base_revision");
        required.push("plan_digest");
    }
    let mut m = input_root(tool, description, &required, props);
    let mut example = Map::new();
    example.insert("bundle_path".into(), json!(EXAMPLE_BUNDLE_PATH));
    example.insert("id".into(), json!("upgrade-2026-01"));
    example.insert("actor".into(), json!("agent-session-1"));
    example.insert("mappings".into(), json!([example_mapping()]));
    if apply {
        let zero = format!("sha256:{}", "0".repeat(64));
        example.insert("base_revision".into(), json!(zero));
        example.insert("plan_digest".into(), json!(zero));
    }
    m.insert("examples".into(), json!([example]));
    m
}

/// The preview's success object (§5).
#[must_use]
pub fn preview_success() -> Value {
    let entry = closed(vec![
        (
            "concept",
            json!({"type": "string", "minLength": 1, "maxLength": 4096}),
        ),
        (
            "path",
            json!({"type": "string", "pattern": FIELD_PATH_PATTERN}),
        ),
        (
            "from",
            json!({"type": "string", "format": "date", "pattern": DATE_PATTERN}),
        ),
    ]);
    let base = closed_with(
        &["status", "base_revision", "result_revision", "unresolved"],
        vec![
            ("status", json!({"enum": ["ready", "incomplete", "noop"]})),
            ("base_revision", r("revision")),
            ("result_revision", r("revision")),
            (
                "unresolved",
                json!({"type": "array", "maxItems": MAX_UNRESOLVED, "items": entry}),
            ),
            ("plan_digest", r("digest")),
        ],
    );
    with(
        base,
        "allOf",
        json!([
            {
                "if": {"properties": {"status": {"const": "ready"}}, "required": ["status"], "additionalProperties": true},
                "then": {"properties": {"unresolved": {"maxItems": 0}}, "required": ["plan_digest"], "additionalProperties": true}
            },
            {
                "if": {"properties": {"status": {"const": "incomplete"}}, "required": ["status"], "additionalProperties": true},
                "then": {"properties": {"unresolved": {"minItems": 1}}, "not": {"required": ["plan_digest"]}, "additionalProperties": true}
            },
            {
                "if": {"properties": {"status": {"const": "noop"}}, "required": ["status"], "additionalProperties": true},
                "then": {"properties": {"unresolved": {"maxItems": 0}}, "not": {"required": ["plan_digest"]}, "additionalProperties": true}
            }
        ]),
    )
}

/// The apply's success object (§6).
#[must_use]
pub fn apply_success() -> Value {
    let base = closed(vec![
        ("status", json!({"const": "applied"})),
        ("request_digest", r("digest")),
        ("result_revision", r("revision")),
        ("diagnostics", diagnostics_array()),
    ]);
    with(
        base,
        "allOf",
        json!([status_branch(
            "applied",
            json!({"diagnostics": info_only()})
        )]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::commit::{CommitOutcome, ReceiptSource};
    use crate::store::outcome::ReceiptMatch;
    use crate::store::receipt::tests::sample;
    use crate::tools::outcome::classify;

    fn key() -> String {
        format!("okf-plan-v1-{}", "a".repeat(64))
    }

    fn expected() -> ReceiptMatch {
        let r = sample(&key());
        ReceiptMatch {
            change_set_id: r.receipt.change_set_id.clone(),
            idempotency_key: key(),
            request_digest: r.receipt.request_digest.clone(),
            base_revision: Some(r.receipt.base_revision.clone()),
        }
    }

    /// TMP-14 (library level): the temporal outcome classification of spec/temporal.md §7.
    #[test]
    fn tmp_14_outcome_classifier_of_the_temporal_flavour() {
        let t = FLAVOR;
        let good = sample(&key());
        let committed = |r: crate::store::receipt::ReceiptFile, cause: StoreError| {
            let j = r.receipt.clone();
            Err(StoreError::Committed {
                receipt: Box::new(r),
                journal: Box::new(j),
                cause: Box::new(cause),
            })
        };
        // A valid committed receipt after a deadline → success.
        let ok = classify(
            committed(good.clone(), StoreError::Cancelled),
            &expected(),
            t,
        )
        .expect("success");
        assert!(!ok.noop);
        // A deadline without receipt → not confirmed, retryable, recovery on base_revision.
        let e = classify(Err(StoreError::Cancelled), &expected(), t).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.retryable, e.message.as_str()),
            (
                "operation_cancelled",
                true,
                "temporal upgrade outcome is not confirmed"
            )
        );
        assert_eq!(e.diagnostics[0].field, "base_revision");
        // A foreign change-set id or a wrong request digest → plan or receipt mismatch.
        let mut foreign = good.clone();
        foreign.receipt.change_set_id = "someone-else".into();
        let mut wrong = expected();
        wrong.request_digest = format!("sha256:{}", "9".repeat(64));
        for (r, m) in [(foreign, expected()), (good.clone(), wrong)] {
            let ok = Ok(CommitOutcome {
                receipt: r,
                source: ReceiptSource::Committed,
                created_store: false,
            });
            let e = classify(ok, &m, t).unwrap_err();
            assert_eq!(
                (e.code.as_str(), e.message.as_str()),
                (
                    "operation_rejected",
                    "temporal upgrade plan or receipt did not match"
                )
            );
            assert_eq!(e.diagnostics[0].field, "plan_digest");
        }
        // A conflict is the temporal revision conflict.
        let e = classify(
            Err(StoreError::Conflict { retryable: true }),
            &expected(),
            t,
        )
        .unwrap_err();
        assert_eq!(
            (
                e.code.as_str(),
                e.retryable,
                e.diagnostics[0].field.as_str()
            ),
            ("operation_rejected", false, "base_revision")
        );
    }

    #[test]
    fn state_checks_reject_what_the_schema_cannot_express() {
        let rev = format!("sha256:{}", "1".repeat(64));
        let other = format!("sha256:{}", "2".repeat(64));
        let ok = json!({"status": "ready", "base_revision": rev, "result_revision": other, "unresolved": [], "plan_digest": rev});
        assert!(check_preview_state(&ok).is_ok());
        let mut same = ok.clone();
        same["result_revision"] = json!(rev);
        assert!(check_preview_state(&same).is_err());
        let inc = json!({"status": "incomplete", "base_revision": rev, "result_revision": rev, "unresolved": [], "plan_digest": rev});
        assert!(check_preview_state(&inc).is_err());
        let applied = json!({"status": "applied", "request_digest": rev, "result_revision": other, "diagnostics": [{"code": "x", "severity": "WARN"}]});
        assert!(check_apply_state(&applied).is_err());
    }
}
