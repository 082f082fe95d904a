//! Typed concept-patch operations and the pure request validation of
//! spec/concept-patch.md §2 (inputs) and §6.2 steps 1–3 (apply gating before I/O).
//!
//! [`parse_patch_request`] turns the schema-valid arguments of `preview_concept_patch` /
//! `apply_concept_patch` into a [`PatchRequest`]. It never touches the filesystem. The checks
//! run in the order of spec/concept-patch.md §2.5:
//!
//! 1. the 16 MiB serialised-argument cap (compact serde_json re-serialisation of the decoded
//!    arguments) → `resource_limit` `patch input exceeds the MCP limit`;
//! 2. the operations, in array order, each against rules 1–7 in numbered order, with messages
//!    `operations[<i>]: <reason>` that never echo a value;
//! 3. the request `actor` (rule 8);
//! 4. apply only: `expected_revision` canonical (`invalid_revision`), then
//!    `expected_plan_digest` canonical (`plan_mismatch`).
//!
//! The schema already enforces shapes, enums and most caps; this module re-checks every one
//! of them at runtime, so a call that bypasses the schema still fails closed. A shape the
//! schema would have refused (wrong type, missing or forbidden member) is `invalid_request`
//! `operations[<i>]: operation does not match its schema`.
//!
//! # Limitations
//! - The temporal profile is resolved right after the size cap (before the operations),
//!   because rule 7 needs it; an unknown profile only reaches this code when the schema
//!   enum was bypassed.
//! - The operation-count cap (1..256) is checked before the per-operation rules; the
//!   parameter and receipt count caps belong to rule 4.

use crate::digest::is_canonical_digest;
use crate::envelope::{codes, Diagnostic, ToolError};
use crate::okf::actor::{self, RequestActorError, MAX_ACTOR_BYTES};
use crate::okf::computation::{
    AttestedComputation, ComputationBody, Executor, Parameter, MAX_INLINE_COMPUTATION,
};
use crate::okf::grammar::{check_concept_id, ConceptIdError};
use crate::okf::temporal::{parse_offset_datetime, Choice, Kinds, Profile, Resolution};
use crate::plan::args::{serialised_len, MAX_SERIALISED_ARGS};
use crate::plan::identity::Authorisation;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::HashSet;

/// Maximum number of operations (spec/concept-patch.md §2.1).
pub const MAX_OPERATIONS: usize = 256;
/// Maximum bytes of an open text field (spec/surface.md §11).
pub const MAX_TEXT_BYTES: usize = 4096;
/// Maximum number of computation parameters (spec/concept-patch.md §2.3).
pub const MAX_PARAMETERS: usize = 256;
/// Maximum number of executor receipt entries (spec/concept-patch.md §2.3).
pub const MAX_RECEIPT_ENTRIES: usize = 256;
/// Maximum characters of `source.usage_count` (spec/concept-patch.md §2.3).
pub const MAX_USAGE_COUNT_CHARS: usize = 20;

/// A validated concept-patch request (spec/concept-patch.md §2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchRequest {
    /// `bundle_path` as given; validated later by the `bundle_path` walk (spec/surface.md §7).
    pub bundle_path: String,
    /// The request `actor` (transport identity, spec/surface.md §13.3).
    pub actor: String,
    /// The profile the request runs under: the explicit one, or the one `auto` resolved to on
    /// the capture ([`PatchRequest::resolved`]); the date profile while `auto` is unresolved.
    pub profile: Profile,
    /// The profile as requested (absent, `""` and `"auto"` are [`Choice::Auto`],
    /// spec/concept-patch.md §2.4 rule 4).
    pub choice: Choice,
    /// The kinds of the request's own temporal values (`stale_after`, `usage_window.*`,
    /// `source.last_modified`, `source.usage_window.*`; one kind at most, §2.4 rule 4).
    pub request_kinds: Kinds,
    /// How the profile was decided: set for an explicit profile, and by
    /// [`PatchRequest::resolved`] for `auto`.
    pub resolution: Option<Resolution>,
    /// The operations, in request order (1..256).
    pub operations: Vec<Operation>,
    /// Apply only: the canonical expectations of spec/concept-patch.md §6.2.
    pub expected: Option<Authorisation>,
}

/// One typed operation (spec/concept-patch.md §2.2, §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `set_generated` (§3.1).
    SetGenerated {
        concept_id: String,
        generated: Generated,
    },
    /// `ensure_verification` (§3.2).
    EnsureVerification {
        concept_id: String,
        verification: Verification,
    },
    /// `remove_verification` (§3.3).
    RemoveVerification {
        concept_id: String,
        verification: Verification,
    },
    /// `put_source` (§3.4).
    PutSource {
        concept_id: String,
        source: PatchSource,
    },
    /// `remove_source` (§3.4): exactly one selector.
    RemoveSource {
        concept_id: String,
        selector: SourceSelector,
    },
    /// `set_usage_window` (§3.5): `window: None` is the explicit `null` (removal).
    SetUsageWindow {
        concept_id: String,
        selector: Option<SourceSelector>,
        window: Option<Window>,
    },
    /// `set_lifecycle` (§3.6).
    SetLifecycle {
        concept_id: String,
        lifecycle: Lifecycle,
    },
    /// `put_attested_computation` (§3.7).
    PutAttestedComputation {
        concept_id: String,
        computation: AttestedComputation,
    },
    /// `set_bundle_version` (§3.8): edits the root `index.md`.
    SetBundleVersion { version: BundleVersion },
    /// `set_metadata` (§11.2): `type`, `title`, `description`, `tags`.
    SetMetadata {
        concept_id: String,
        metadata: Metadata,
    },
}

impl Operation {
    /// The wire `kind`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Operation::SetGenerated { .. } => "set_generated",
            Operation::EnsureVerification { .. } => "ensure_verification",
            Operation::RemoveVerification { .. } => "remove_verification",
            Operation::PutSource { .. } => "put_source",
            Operation::RemoveSource { .. } => "remove_source",
            Operation::SetUsageWindow { .. } => "set_usage_window",
            Operation::SetLifecycle { .. } => "set_lifecycle",
            Operation::PutAttestedComputation { .. } => "put_attested_computation",
            Operation::SetBundleVersion { .. } => "set_bundle_version",
            Operation::SetMetadata { .. } => "set_metadata",
        }
    }

    /// The target concept id; `None` for `set_bundle_version` (which edits root `index.md`).
    #[must_use]
    pub fn concept_id(&self) -> Option<&str> {
        match self {
            Operation::SetGenerated { concept_id, .. }
            | Operation::EnsureVerification { concept_id, .. }
            | Operation::RemoveVerification { concept_id, .. }
            | Operation::PutSource { concept_id, .. }
            | Operation::RemoveSource { concept_id, .. }
            | Operation::SetUsageWindow { concept_id, .. }
            | Operation::SetLifecycle { concept_id, .. }
            | Operation::PutAttestedComputation { concept_id, .. }
            | Operation::SetMetadata { concept_id, .. } => Some(concept_id),
            Operation::SetBundleVersion { .. } => None,
        }
    }
}

/// `generated` payload: `by` (document actor), optional offset-datetime `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Document actor (spec/surface.md §13.3).
    pub by: String,
    /// Offset datetime (spec/temporal.md §2.1); `None` removes an existing `at`.
    pub at: Option<String>,
}

/// `verification` payload: document actor `by` and offset-datetime `at`, both required.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Document actor (spec/surface.md §13.3).
    pub by: String,
    /// Offset datetime, compared as an instant (README R20).
    pub at: String,
}

/// A usage window `{from, to}`; values per profile, `from <= to` (§2.4 rule 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Start, per the temporal profile; `from <= to`.
    pub from: String,
    /// End, per the temporal profile.
    pub to: String,
}

/// `source` payload (spec/concept-patch.md §2.3). Temporal values are kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchSource {
    /// Stable key of the source (footnote label); `None` for an anonymous source.
    pub id: Option<String>,
    /// The artifact or scope descriptor (passive data, never fetched).
    pub resource: String,
    /// Human-readable label.
    pub title: Option<String>,
    /// Who produced the source (actor convention).
    pub author: Option<String>,
    /// The canonical decimal text of a u64 (`^(0|[1-9][0-9]*)$`, ≤ 20 characters); see
    /// [`PatchSource::usage_count_value`].
    pub usage_count: Option<String>,
    /// When the source last changed, per the temporal profile.
    pub last_modified: Option<String>,
    /// The source's own usage window.
    pub usage_window: Option<Window>,
}

impl PatchSource {
    /// The numeric `usage_count`. Validation guarantees that a present text parses.
    #[must_use]
    pub fn usage_count_value(&self) -> Option<u64> {
        self.usage_count.as_deref().and_then(|s| s.parse().ok())
    }
}

/// A source selector of `remove_source` / `set_usage_window`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSelector {
    /// `source_id`: the exact structured id.
    Id(String),
    /// An anonymous exact `source` (never carries `id`).
    Exact(PatchSource),
}

/// `lifecycle.status` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleStatus {
    Draft,
    Stable,
    Deprecated,
}

impl LifecycleStatus {
    /// The wire / document spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleStatus::Draft => "draft",
            LifecycleStatus::Stable => "stable",
            LifecycleStatus::Deprecated => "deprecated",
        }
    }
}

/// One member of a keep-unless-told payload (spec/concept-patch.md §11.1): absent on the wire
/// keeps the current value, `null` removes it, a value sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member<T> {
    /// Absent: the key is left as it is.
    Keep,
    /// `null`: the key is removed.
    Remove,
    /// A value: the key is set to it.
    Set(T),
}

impl<T> Member<T> {
    /// The value of [`Member::Set`].
    #[must_use]
    pub fn value(&self) -> Option<&T> {
        match self {
            Member::Set(v) => Some(v),
            Member::Keep | Member::Remove => None,
        }
    }
}

/// `lifecycle` payload (spec/concept-patch.md §3.6, §11.1): each member absent (keep), `null`
/// (remove) or a value (set); at least one is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    pub status: Member<LifecycleStatus>,
    /// Per the temporal profile, written verbatim.
    pub stale_after: Member<String>,
}

/// Maximum bytes of a concept `type` and of one tag (spec/concept-patch.md §11.2).
pub const MAX_TYPE_BYTES: usize = 256;
/// Maximum number of tags (spec/concept-patch.md §11.2).
pub const MAX_TAGS: usize = 256;

/// `metadata` payload of `set_metadata` (spec/concept-patch.md §11.2): each member absent
/// (keep), `null` (remove; refused for `type`) or a value; at least one is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The concept `type` (1..256 bytes).
    pub type_: Member<String>,
    /// 1..4096 bytes.
    pub title: Member<String>,
    /// 1..4096 bytes, one line.
    pub description: Member<String>,
    /// ≤ 256 unique tags of 1..256 bytes, order kept.
    pub tags: Member<Vec<String>>,
}

/// `set_bundle_version` target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleVersion {
    V01,
    V02,
}

impl BundleVersion {
    /// `"0.1"` or `"0.2"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            BundleVersion::V01 => "0.1",
            BundleVersion::V02 => "0.2",
        }
    }
}

/// Parses and validates the arguments of `preview_concept_patch` (`apply = false`) or
/// `apply_concept_patch` (`apply = true`); pure, no I/O (spec/concept-patch.md §2.5, §6.2).
///
/// # Errors
/// - `resource_limit`: serialised arguments over 16 MiB (checked first), more than 256
///   operations, a text field over its cap, too many parameters or receipt entries, a document
///   actor over 256 bytes, a request actor over 256 bytes;
/// - `invalid_request`: any other rule of §2.5 (`operations[<i>]: <reason>`, no values
///   echoed), an unknown temporal profile, a request actor with surrounding whitespace or
///   control characters;
/// - apply only: `invalid_revision` for a non-canonical `expected_revision`, then
///   `plan_mismatch` (recovery step on `expected_plan_digest`) for a non-canonical
///   `expected_plan_digest`.
pub fn parse_patch_request(args: &Value, apply: bool) -> Result<PatchRequest, ToolError> {
    if serialised_len(args) > MAX_SERIALISED_ARGS {
        return Err(ToolError::resource_limit(
            "patch input exceeds the MCP limit",
        ));
    }
    let obj = args
        .as_object()
        .ok_or_else(|| ToolError::invalid_request("MCP arguments must be a JSON object"))?;
    let choice = match obj.get("temporal_profile") {
        None => Choice::parse(None),
        Some(Value::String(s)) => Choice::parse(Some(s)),
        Some(_) => None,
    }
    .ok_or_else(|| ToolError::invalid_request("unknown OKF temporal profile"))?;
    let explicit = match choice {
        Choice::Explicit(p) => Some(p),
        Choice::Auto => None,
    };
    let raw_ops = match obj.get("operations") {
        Some(Value::Array(a)) => a,
        _ => return Err(request_shape()),
    };
    if raw_ops.is_empty() {
        return Err(ToolError::invalid_request(
            "operations must contain at least one operation",
        ));
    }
    if raw_ops.len() > MAX_OPERATIONS {
        return Err(ToolError::resource_limit(
            "patch has more than 256 operations",
        ));
    }
    let mut operations = Vec::with_capacity(raw_ops.len());
    let mut request_kinds = Kinds::default();
    for (i, raw) in raw_ops.iter().enumerate() {
        let draft =
            Draft::parse(raw).ok_or_else(|| op_err(i, "operation does not match its schema"))?;
        draft.validate(i, explicit, &mut request_kinds)?;
        operations.push(
            draft
                .into_operation()
                .ok_or_else(|| op_err(i, "operation does not match its schema"))?,
        );
    }
    let actor = match obj.get("actor") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(request_shape()),
    };
    match actor::check_request_actor(&actor) {
        Ok(()) => {}
        Err(RequestActorError::TooLong) => {
            return Err(ToolError::resource_limit(
                "actor exceeds the MCP transport limit",
            ))
        }
        Err(RequestActorError::Invalid) => {
            return Err(ToolError::invalid_request(
                "actor is not a valid transport identity",
            ))
        }
    }
    let bundle_path = match obj.get("bundle_path") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(request_shape()),
    };
    let expected = if apply {
        Some(parse_expected(obj)?)
    } else {
        None
    };
    Ok(PatchRequest {
        bundle_path,
        actor,
        profile: explicit.unwrap_or_default(),
        choice,
        request_kinds,
        resolution: explicit.map(Resolution::explicit),
        operations,
        expected,
    })
}

impl PatchRequest {
    /// The request as it runs on a bundle whose concepts hold `bundle` (spec/temporal.md §11,
    /// spec/concept-patch.md §2.4 rule 4): an explicit profile stands; `auto` resolves from
    /// `bundle`, then from the request's own values. Unless `replay` (a replay-only apply,
    /// answered from a stored receipt or not at all), every temporal value must then be valid
    /// under the resolved profile and every usage window ordered.
    ///
    /// # Errors
    /// `invalid_request` `operations[i].<field> does not match the bundle's temporal profile
    /// <id>`, or `operations[i]: usage window starts after it ends`. Nothing is written.
    pub fn resolved(&self, bundle: Kinds, replay: bool) -> Result<PatchRequest, ToolError> {
        let r = crate::okf::temporal::resolve(self.choice, bundle, self.request_kinds);
        if !replay && self.choice == Choice::Auto {
            check_resolved(&self.operations, r.profile)?;
        }
        let mut q = self.clone();
        q.profile = r.profile;
        q.resolution = Some(r);
        Ok(q)
    }
}

/// The temporal values of one operation with their payload-relative paths, and its usage
/// windows (spec/concept-patch.md §2.4: `stale_after`, `usage_window.*`,
/// `source.last_modified`, `source.usage_window.*`).
type TemporalParts<'a> = (Vec<(String, &'a str)>, Vec<(String, &'a Window)>);

fn temporal_parts<'a>(
    source: Option<&'a PatchSource>,
    window: Option<&'a Window>,
    stale_after: Option<&'a str>,
) -> TemporalParts<'a> {
    let mut values: Vec<(String, &str)> = Vec::new();
    let mut windows: Vec<(String, &Window)> = Vec::new();
    if let Some(s) = source {
        if let Some(lm) = &s.last_modified {
            values.push(("source.last_modified".to_owned(), lm));
        }
        if let Some(w) = &s.usage_window {
            values.push(("source.usage_window.from".to_owned(), &w.from));
            values.push(("source.usage_window.to".to_owned(), &w.to));
            windows.push(("source.usage_window".to_owned(), w));
        }
    }
    if let Some(w) = window {
        values.push(("usage_window.from".to_owned(), &w.from));
        values.push(("usage_window.to".to_owned(), &w.to));
        windows.push(("usage_window".to_owned(), w));
    }
    if let Some(sa) = stale_after {
        values.push(("lifecycle.stale_after".to_owned(), sa));
    }
    (values, windows)
}

fn op_temporal_parts(op: &Operation) -> TemporalParts<'_> {
    fn exact(s: &Option<SourceSelector>) -> Option<&PatchSource> {
        match s {
            Some(SourceSelector::Exact(p)) => Some(p),
            _ => None,
        }
    }
    match op {
        Operation::PutSource { source, .. } => temporal_parts(Some(source), None, None),
        Operation::RemoveSource {
            selector: SourceSelector::Exact(s),
            ..
        } => temporal_parts(Some(s), None, None),
        Operation::SetUsageWindow {
            selector, window, ..
        } => temporal_parts(exact(selector), window.as_ref(), None),
        Operation::SetLifecycle { lifecycle, .. } => temporal_parts(
            None,
            None,
            lifecycle.stale_after.value().map(String::as_str),
        ),
        _ => (Vec::new(), Vec::new()),
    }
}

/// The after-capture check of `auto` (spec/concept-patch.md §2.4 rule 4): every temporal
/// value valid under `profile`, then every usage window ordered (§2.4 rule 2).
///
/// # Errors
/// `invalid_request`, naming the operation and the field, never the value.
pub fn check_resolved(ops: &[Operation], profile: Profile) -> Result<(), ToolError> {
    for (i, op) in ops.iter().enumerate() {
        let (values, windows) = op_temporal_parts(op);
        if let Some((field, _)) = values.iter().find(|(_, v)| !profile.is_valid(v)) {
            return Err(ToolError::invalid_request(format!(
                "operations[{i}].{field} does not match the bundle's temporal profile {}",
                profile.id()
            )));
        }
        if windows
            .iter()
            .any(|(_, w)| profile.compare(&w.from, &w.to) == Some(Ordering::Greater))
        {
            return Err(op_err(i, "usage window starts after it ends"));
        }
    }
    Ok(())
}

/// `plan_mismatch` with the recovery step of spec/surface.md §6.2 on `expected_plan_digest`.
#[must_use]
pub fn authorisation_mismatch(message: &str) -> ToolError {
    ToolError::new(codes::PLAN_MISMATCH, message).with_diagnostic(Diagnostic::recovery(
        "expected_plan_digest",
        "Run the matching preview again with the same arguments and use its digest unchanged.",
    ))
}

fn parse_expected(obj: &Map<String, Value>) -> Result<Authorisation, ToolError> {
    let revision = match obj.get("expected_revision") {
        Some(Value::String(s)) if is_canonical_digest(s) => s.clone(),
        _ => {
            return Err(ToolError::new(
                codes::INVALID_REVISION,
                "expected_revision is not canonical",
            ))
        }
    };
    let plan_digest = match obj.get("expected_plan_digest") {
        Some(Value::String(s)) if is_canonical_digest(s) => s.clone(),
        _ => {
            return Err(authorisation_mismatch(
                "expected_plan_digest is not canonical",
            ))
        }
    };
    Ok(Authorisation {
        revision,
        plan_digest,
    })
}

fn request_shape() -> ToolError {
    ToolError::invalid_request("arguments do not match the input schema")
}

fn op_err(i: usize, reason: &str) -> ToolError {
    ToolError::invalid_request(format!("operations[{i}]: {reason}"))
}

fn op_limit(i: usize, reason: &str) -> ToolError {
    ToolError::resource_limit(format!("operations[{i}]: {reason}"))
}

// ---------------------------------------------------------------------------------------------
// Draft: the shape-checked operation before rules 1–7.

/// Every payload an operation may carry, shape-checked against its kind but not yet
/// validated. `usage_window` is `Some(None)` for an explicit `null`.
#[derive(Debug, Default)]
struct Draft {
    kind: String,
    concept_id: Option<String>,
    generated: Option<Generated>,
    verification: Option<Verification>,
    source: Option<PatchSource>,
    source_id: Option<String>,
    usage_window: Option<Option<Window>>,
    lifecycle: Option<Lifecycle>,
    computation: Option<AttestedComputation>,
    version: Option<BundleVersion>,
    metadata: Option<Metadata>,
}

type Obj = Map<String, Value>;

fn closed(o: &Obj, allowed: &[&str]) -> Option<()> {
    o.keys()
        .all(|k| allowed.contains(&k.as_str()))
        .then_some(())
}

fn req_str(o: &Obj, k: &str) -> Option<String> {
    o.get(k)?.as_str().map(str::to_owned)
}

/// Absent → `Some(None)`; a string → `Some(Some(s))`; anything else (including `null`) → `None`.
fn opt_str(o: &Obj, k: &str) -> Option<Option<String>> {
    match o.get(k) {
        None => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        Some(_) => None,
    }
}

fn parse_window(v: &Value) -> Option<Window> {
    let o = v.as_object()?;
    closed(o, &["from", "to"])?;
    Some(Window {
        from: req_str(o, "from")?,
        to: req_str(o, "to")?,
    })
}

fn parse_source(v: &Value) -> Option<PatchSource> {
    let o = v.as_object()?;
    closed(
        o,
        &[
            "resource",
            "id",
            "title",
            "author",
            "usage_count",
            "last_modified",
            "usage_window",
        ],
    )?;
    let usage_window = match o.get("usage_window") {
        None => None,
        Some(w) => Some(parse_window(w)?),
    };
    Some(PatchSource {
        id: opt_str(o, "id")?,
        resource: req_str(o, "resource")?,
        title: opt_str(o, "title")?,
        author: opt_str(o, "author")?,
        usage_count: opt_str(o, "usage_count")?,
        last_modified: opt_str(o, "last_modified")?,
        usage_window,
    })
}

fn parse_computation(v: &Value) -> Option<AttestedComputation> {
    let o = v.as_object()?;
    closed(
        o,
        &[
            "mode",
            "runtime",
            "parameters",
            "executor",
            "attester",
            "computation_path",
            "inline_computation",
            "inline_language",
        ],
    )?;
    let mut parameters = Vec::new();
    for p in o.get("parameters")?.as_array()? {
        let po = p.as_object()?;
        closed(po, &["name", "type", "required"])?;
        parameters.push(Parameter {
            name: req_str(po, "name")?,
            type_: req_str(po, "type")?,
            required: po.get("required")?.as_bool()?,
        });
    }
    let eo = o.get("executor")?.as_object()?;
    closed(eo, &["resource", "receipt"])?;
    let mut receipt = Vec::new();
    for r in eo.get("receipt")?.as_array()? {
        receipt.push(r.as_str()?.to_owned());
    }
    let ao = o.get("attester")?.as_object()?;
    closed(ao, &["resource"])?;
    let path = opt_str(o, "computation_path")?;
    let code = opt_str(o, "inline_computation")?;
    let language = opt_str(o, "inline_language")?;
    let body = match o.get("mode")?.as_str()? {
        "inline" if path.is_none() => ComputationBody::Inline {
            code: code?,
            language,
        },
        "file" if code.is_none() && language.is_none() => ComputationBody::File { path: path? },
        _ => return None,
    };
    Some(AttestedComputation {
        runtime: req_str(o, "runtime")?,
        parameters,
        executor: Executor {
            resource: req_str(eo, "resource")?,
            receipt,
        },
        attester_resource: req_str(ao, "resource")?,
        body,
    })
}

impl Draft {
    /// Shape check of one operation object; `None` when it does not match its kind's schema.
    fn parse(v: &Value) -> Option<Draft> {
        let o = v.as_object()?;
        let kind = o.get("kind")?.as_str()?.to_owned();
        let mut d = Draft {
            kind,
            ..Draft::default()
        };
        let payload: &[&str] = match d.kind.as_str() {
            "set_generated" => &["generated"],
            "ensure_verification" | "remove_verification" => &["verification"],
            "put_source" => &["source"],
            "remove_source" => &["source_id", "source"],
            "set_usage_window" => &["usage_window", "source_id", "source"],
            "set_lifecycle" => &["lifecycle"],
            "put_attested_computation" => &["attested_computation"],
            "set_bundle_version" => &["version"],
            "set_metadata" => &["metadata"],
            _ => return None,
        };
        let mut allowed = vec!["kind"];
        if d.kind != "set_bundle_version" {
            allowed.push("concept_id");
            d.concept_id = Some(req_str(o, "concept_id")?);
        }
        allowed.extend_from_slice(payload);
        closed(o, &allowed)?;
        match d.kind.as_str() {
            "set_generated" => {
                let g = o.get("generated")?.as_object()?;
                closed(g, &["by", "at"])?;
                d.generated = Some(Generated {
                    by: req_str(g, "by")?,
                    at: opt_str(g, "at")?,
                });
            }
            "ensure_verification" | "remove_verification" => {
                let g = o.get("verification")?.as_object()?;
                closed(g, &["by", "at"])?;
                d.verification = Some(Verification {
                    by: req_str(g, "by")?,
                    at: req_str(g, "at")?,
                });
            }
            "put_source" => d.source = Some(parse_source(o.get("source")?)?),
            "remove_source" | "set_usage_window" => {
                d.source_id = opt_str(o, "source_id")?;
                if let Some(s) = o.get("source") {
                    d.source = Some(parse_source(s)?);
                }
                if d.kind == "set_usage_window" {
                    d.usage_window = Some(match o.get("usage_window")? {
                        Value::Null => None,
                        w => Some(parse_window(w)?),
                    });
                }
            }
            "set_lifecycle" => {
                let l = o.get("lifecycle")?.as_object()?;
                closed(l, &["status", "stale_after"])?;
                if l.is_empty() {
                    return None;
                }
                let status = match l.get("status") {
                    None => Member::Keep,
                    Some(Value::Null) => Member::Remove,
                    Some(Value::String(s)) => Member::Set(match s.as_str() {
                        "draft" => LifecycleStatus::Draft,
                        "stable" => LifecycleStatus::Stable,
                        "deprecated" => LifecycleStatus::Deprecated,
                        _ => return None,
                    }),
                    Some(_) => return None,
                };
                let stale_after = match l.get("stale_after") {
                    None => Member::Keep,
                    Some(Value::Null) => Member::Remove,
                    Some(Value::String(s)) => Member::Set(s.clone()),
                    Some(_) => return None,
                };
                d.lifecycle = Some(Lifecycle {
                    status,
                    stale_after,
                });
            }
            "put_attested_computation" => {
                d.computation = Some(parse_computation(o.get("attested_computation")?)?);
            }
            "set_metadata" => {
                let m = o.get("metadata")?.as_object()?;
                closed(m, &["type", "title", "description", "tags"])?;
                if m.is_empty() {
                    return None;
                }
                let text = |k: &str| -> Option<Member<String>> {
                    match m.get(k) {
                        None => Some(Member::Keep),
                        Some(Value::Null) => Some(Member::Remove),
                        Some(Value::String(s)) => Some(Member::Set(s.clone())),
                        Some(_) => None,
                    }
                };
                let tags = match m.get("tags") {
                    None => Member::Keep,
                    Some(Value::Null) => Member::Remove,
                    Some(Value::Array(a)) => Member::Set(
                        a.iter()
                            .map(|t| t.as_str().map(str::to_owned))
                            .collect::<Option<Vec<String>>>()?,
                    ),
                    Some(_) => return None,
                };
                d.metadata = Some(Metadata {
                    type_: text("type")?,
                    title: text("title")?,
                    description: text("description")?,
                    tags,
                });
            }
            "set_bundle_version" => {
                d.version = Some(match o.get("version")?.as_str()? {
                    "0.1" => BundleVersion::V01,
                    "0.2" => BundleVersion::V02,
                    _ => return None,
                });
            }
            _ => return None,
        }
        Some(d)
    }

    /// The sources this operation carries (payload or selector).
    fn sources(&self) -> impl Iterator<Item = &PatchSource> {
        self.source.iter()
    }

    /// Text fields of rule 2 in payload order, each with whether rule 3 (non-blank) applies.
    fn texts(&self) -> Vec<(&str, bool)> {
        let mut t: Vec<(&str, bool)> = Vec::new();
        for s in self.sources() {
            if let Some(id) = &s.id {
                t.push((id, true));
            }
            t.push((&s.resource, true));
            if let Some(x) = &s.title {
                t.push((x, true));
            }
            if let Some(x) = &s.author {
                t.push((x, true));
            }
        }
        if let Some(x) = &self.source_id {
            t.push((x, true));
        }
        if let Some(c) = &self.computation {
            t.push((&c.runtime, true));
            for p in &c.parameters {
                t.push((&p.name, true));
                t.push((&p.type_, true));
            }
            t.push((&c.executor.resource, true));
            for r in &c.executor.receipt {
                t.push((r, true));
            }
            t.push((&c.attester_resource, true));
            match &c.body {
                ComputationBody::File { path } => t.push((path, true)),
                ComputationBody::Inline {
                    language: Some(l), ..
                } => t.push((l, false)),
                ComputationBody::Inline { language: None, .. } => {}
            }
        }
        t
    }

    /// Rules 1–7 of spec/concept-patch.md §2.5, in numbered order. `profile` is the explicit
    /// profile, `None` for `auto` (§2.4 rule 4: either grammar, one kind per request, the kinds
    /// collected into `kinds`).
    fn validate(
        &self,
        i: usize,
        profile: Option<Profile>,
        kinds: &mut Kinds,
    ) -> Result<(), ToolError> {
        // Rule 1: the concept id grammar.
        if let Some(id) = &self.concept_id {
            match check_concept_id(id) {
                Ok(()) => {}
                Err(ConceptIdError::TooLong) => {
                    return Err(op_limit(i, "concept_id exceeds 4096 bytes"))
                }
                Err(ConceptIdError::NotCanonical) => {
                    return Err(op_err(i, "concept_id is not canonical"))
                }
                Err(ConceptIdError::Reserved) => {
                    return Err(op_err(i, "concept_id contains reserved segment"))
                }
            }
        }
        // Rule 2: text sizes and characters; the inline computation; usage_count shape.
        for (text, _) in self.texts() {
            if text.len() > MAX_TEXT_BYTES {
                return Err(op_limit(i, "text field exceeds 4096 bytes"));
            }
            if has_control(text) {
                return Err(op_err(i, "text field contains a control character"));
            }
        }
        if let Some(AttestedComputation {
            body: ComputationBody::Inline { code, .. },
            ..
        }) = &self.computation
        {
            if code.len() > MAX_INLINE_COMPUTATION {
                return Err(op_limit(i, "inline_computation exceeds 1 MiB"));
            }
            if code.contains('\0') {
                return Err(op_err(i, "inline_computation contains a NUL character"));
            }
        }
        for s in self.sources() {
            if let Some(n) = &s.usage_count {
                if n.chars().count() > MAX_USAGE_COUNT_CHARS {
                    return Err(op_limit(i, "usage_count exceeds 20 characters"));
                }
                if !is_canonical_u64(n) {
                    return Err(op_err(
                        i,
                        "usage_count is not a canonical non-negative integer",
                    ));
                }
            }
        }
        // Rule 3: blank values.
        if self
            .texts()
            .iter()
            .any(|(t, nb)| *nb && t.trim().is_empty())
        {
            return Err(op_err(i, "text field is blank"));
        }
        // set_metadata (§11.2): the character rules, sizes, `type: null` and unique tags.
        if let Some(m) = &self.metadata {
            validate_metadata(i, m)?;
        }
        // Rule 4: parameter names and receipt entries.
        if let Some(c) = &self.computation {
            if c.parameters.len() > MAX_PARAMETERS {
                return Err(op_limit(i, "more than 256 computation parameters"));
            }
            let mut names = HashSet::new();
            if !c.parameters.iter().all(|p| names.insert(p.name.as_str())) {
                return Err(op_err(i, "computation parameter names are not unique"));
            }
            if c.executor.receipt.is_empty() {
                return Err(op_err(i, "executor receipt must not be empty"));
            }
            if c.executor.receipt.len() > MAX_RECEIPT_ENTRIES {
                return Err(op_limit(i, "more than 256 executor receipt entries"));
            }
            let mut seen = HashSet::new();
            if !c.executor.receipt.iter().all(|r| seen.insert(r.as_str())) {
                return Err(op_err(i, "executor receipt entries are not unique"));
            }
        }
        // Rule 5: document actors.
        let by = self
            .generated
            .as_ref()
            .map(|g| g.by.as_str())
            .or(self.verification.as_ref().map(|v| v.by.as_str()));
        if let Some(by) = by {
            if by.len() > MAX_ACTOR_BYTES {
                return Err(op_limit(
                    i,
                    "document actor exceeds the MCP transport limit",
                ));
            }
            if !actor::is_document_actor(by) {
                return Err(op_err(i, "invalid change set: invalid document actor"));
            }
        }
        // Rule 6: selectors.
        match self.kind.as_str() {
            "remove_source" => match (&self.source_id, &self.source) {
                (None, None) => return Err(op_err(i, "remove_source needs a source selector")),
                (Some(_), Some(_)) => {
                    return Err(op_err(i, "remove_source takes exactly one source selector"))
                }
                (Some(id), None) if id.is_empty() => {
                    return Err(op_err(i, "source_id must not be empty"))
                }
                (None, Some(s)) if s.id.is_some() => {
                    return Err(op_err(
                        i,
                        "exact source selector requires an anonymous source",
                    ))
                }
                _ => {}
            },
            "set_usage_window" => match (&self.source_id, &self.source) {
                (Some(_), Some(_)) => {
                    return Err(op_err(
                        i,
                        "set_usage_window takes at most one source selector",
                    ))
                }
                (Some(id), None) if id.is_empty() => {
                    return Err(op_err(i, "source_id must not be empty"))
                }
                (None, Some(s)) if s.id.is_some() => {
                    return Err(op_err(
                        i,
                        "exact source selector requires an anonymous source",
                    ))
                }
                _ => {}
            },
            _ => {}
        }
        // Rule 7: temporal grammars, then window order.
        match profile {
            Some(p) => self.validate_temporal(i, p),
            None => self.validate_temporal_auto(i, kinds),
        }
    }

    /// Rule 7 under `auto` (§2.4 rule 4): `generated.at` and `verification.at` as always, each
    /// profile-dependent value a calendar date or an offset datetime, and the request's values
    /// of one kind; the window order waits for the resolved profile ([`check_resolved`]).
    fn validate_temporal_auto(&self, i: usize, kinds: &mut Kinds) -> Result<(), ToolError> {
        self.validate_datetimes(i)?;
        let window = match &self.usage_window {
            Some(Some(w)) => Some(w),
            _ => None,
        };
        let stale_after = self
            .lifecycle
            .as_ref()
            .and_then(|l| l.stale_after.value())
            .map(String::as_str);
        let (values, _) = temporal_parts(self.source.as_ref(), window, stale_after);
        for (field, v) in &values {
            let mut k = Kinds::default();
            k.observe(v);
            if k == Kinds::default() {
                return Err(op_err(
                    i,
                    &format!("{field} is neither a calendar date nor an offset datetime"),
                ));
            }
            *kinds = kinds.union(k);
            if kinds.date && kinds.instant {
                return Err(ToolError::invalid_request(
                    "the request mixes calendar dates and instants",
                ));
            }
        }
        Ok(())
    }

    /// `generated.at` and `verification.at`: offset datetimes under every profile.
    fn validate_datetimes(&self, i: usize) -> Result<(), ToolError> {
        let datetime_ok = |s: &str| parse_offset_datetime(s).is_some();
        if let Some(at) = self.generated.as_ref().and_then(|g| g.at.as_deref()) {
            if !datetime_ok(at) {
                return Err(op_err(i, "generated.at is not an offset datetime"));
            }
        }
        if let Some(v) = &self.verification {
            if !datetime_ok(&v.at) {
                return Err(op_err(i, "verification.at is not an offset datetime"));
            }
        }
        Ok(())
    }

    fn validate_temporal(&self, i: usize, profile: Profile) -> Result<(), ToolError> {
        self.validate_datetimes(i)?;
        let mut windows: Vec<&Window> = Vec::new();
        for s in self.sources() {
            if let Some(lm) = &s.last_modified {
                if !profile.is_valid(lm) {
                    return Err(op_err(
                        i,
                        "source last_modified is invalid under the temporal profile",
                    ));
                }
            }
            windows.extend(s.usage_window.iter());
        }
        if let Some(Some(w)) = &self.usage_window {
            windows.push(w);
        }
        if let Some(sa) = self.lifecycle.as_ref().and_then(|l| l.stale_after.value()) {
            if !profile.is_valid(sa) {
                return Err(op_err(
                    i,
                    "stale_after is invalid under the temporal profile",
                ));
            }
        }
        for w in &windows {
            if !profile.is_valid(&w.from) || !profile.is_valid(&w.to) {
                return Err(op_err(
                    i,
                    "usage window value is invalid under the temporal profile",
                ));
            }
        }
        for w in &windows {
            if profile.compare(&w.from, &w.to) == Some(Ordering::Greater) {
                return Err(op_err(i, "usage window starts after it ends"));
            }
        }
        Ok(())
    }

    /// The typed operation; `None` only if the draft misses a payload its kind requires
    /// (impossible after [`Draft::parse`] and [`Draft::validate`]).
    fn into_operation(self) -> Option<Operation> {
        let selector =
            |source_id: Option<String>, source: Option<PatchSource>| match (source_id, source) {
                (Some(id), None) => Some(Some(SourceSelector::Id(id))),
                (None, Some(s)) => Some(Some(SourceSelector::Exact(s))),
                (None, None) => Some(None),
                (Some(_), Some(_)) => None,
            };
        let concept_id = self.concept_id;
        Some(match self.kind.as_str() {
            "set_generated" => Operation::SetGenerated {
                concept_id: concept_id?,
                generated: self.generated?,
            },
            "ensure_verification" => Operation::EnsureVerification {
                concept_id: concept_id?,
                verification: self.verification?,
            },
            "remove_verification" => Operation::RemoveVerification {
                concept_id: concept_id?,
                verification: self.verification?,
            },
            "put_source" => Operation::PutSource {
                concept_id: concept_id?,
                source: self.source?,
            },
            "remove_source" => Operation::RemoveSource {
                concept_id: concept_id?,
                selector: selector(self.source_id, self.source)??,
            },
            "set_usage_window" => Operation::SetUsageWindow {
                concept_id: concept_id?,
                selector: selector(self.source_id, self.source)?,
                window: self.usage_window?,
            },
            "set_lifecycle" => Operation::SetLifecycle {
                concept_id: concept_id?,
                lifecycle: self.lifecycle?,
            },
            "put_attested_computation" => Operation::PutAttestedComputation {
                concept_id: concept_id?,
                computation: self.computation?,
            },
            "set_bundle_version" => Operation::SetBundleVersion {
                version: self.version?,
            },
            "set_metadata" => Operation::SetMetadata {
                concept_id: concept_id?,
                metadata: self.metadata?,
            },
            _ => return None,
        })
    }
}

/// The checks of a `set_metadata` payload (spec/concept-patch.md §11.2). Messages name the
/// member (and a tag's index), never its value.
fn validate_metadata(i: usize, m: &Metadata) -> Result<(), ToolError> {
    let text = |what: &str, v: &str, max: usize| -> Result<(), ToolError> {
        if v.len() > max {
            return Err(op_limit(i, &format!("metadata.{what} exceeds {max} bytes")));
        }
        if v.is_empty() || v.trim() != v {
            return Err(op_err(
                i,
                &format!("metadata.{what} is blank or has surrounding whitespace"),
            ));
        }
        if has_control(v) {
            return Err(op_err(
                i,
                &format!(
                    "metadata.{what} contains a control character (a description is one line)"
                ),
            ));
        }
        Ok(())
    };
    match &m.type_ {
        Member::Remove => {
            return Err(op_err(
                i,
                "metadata.type cannot be null: every concept needs a type",
            ))
        }
        Member::Set(v) => text("type", v, MAX_TYPE_BYTES)?,
        Member::Keep => {}
    }
    if let Member::Set(v) = &m.title {
        text("title", v, MAX_TEXT_BYTES)?;
    }
    if let Member::Set(v) = &m.description {
        text("description", v, MAX_TEXT_BYTES)?;
    }
    if let Member::Set(tags) = &m.tags {
        if tags.len() > MAX_TAGS {
            return Err(op_limit(i, "metadata.tags has more than 256 tags"));
        }
        let mut seen = HashSet::new();
        for (j, t) in tags.iter().enumerate() {
            text(&format!("tags[{j}]"), t, MAX_TYPE_BYTES)?;
            if !seen.insert(t.as_str()) {
                return Err(op_err(
                    i,
                    &format!("metadata.tags[{j}] repeats an earlier tag"),
                ));
            }
        }
    }
    Ok(())
}

fn has_control(s: &str) -> bool {
    s.chars().any(|c| c < '\u{20}' || c == '\u{7f}')
}

/// `^(0|[1-9][0-9]*)$`, parses as u64 and re-formats identically.
fn is_canonical_u64(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_digit())
        && (s == "0" || !s.starts_with('0'))
        && s.parse::<u64>().is_ok_and(|n| n.to_string() == s)
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
