//! Helpers shared by tool handlers: the pure argument checks of spec/surface.md §9.1 step 5
//! (temporal profile, `as_of`, `concept_id`), capture of a validated `bundle_path`, and the
//! mapping of bundle-wide and per-document parse faults (spec/store.md §3.4, README R4, R37;
//! spec/surface.md §12.6).

use crate::okf::bundle::BundleFault;
use crate::okf::grammar::{check_concept_id, ConceptIdError};
use crate::okf::temporal::{normalise_instant_text, parse_date, Profile};
use crate::okf::validate;
use crate::store::capture::{self, Capture};
use crate::store::root;
use crate::wire::dispatch::Ctx;
use crate::wire::envelope::{codes, Diagnostic, Severity, ToolError};
use serde_json::{json, Value};

/// Validates `bundle_path` (spec/surface.md §7) and captures the bundle (spec/store.md §3).
///
/// # Errors
/// The `bundle_path` and capture errors of the spec.
pub fn capture_bundle(bundle_path: &str, ctx: &Ctx) -> Result<Capture, ToolError> {
    ctx.cancel.check()?;
    let root = root::open(bundle_path)?;
    capture::capture(&root, &ctx.cancel)
}

/// Maps a bundle-wide YAML fault to its tool error (spec/store.md §3.4).
#[must_use]
pub fn bundle_fault(f: &BundleFault) -> ToolError {
    match f {
        BundleFault::Limit { path } => {
            ToolError::resource_limit("a document exceeds the YAML resource limits")
                .with_diagnostic(
                    Diagnostic::new(
                        codes::RESOURCE_LIMIT,
                        Severity::Error,
                        "frontmatter exceeds the YAML resource limits",
                    )
                    .with_file(path.clone()),
                )
        }
        BundleFault::Graph { path } => ToolError::new(
            codes::INVALID_YAML_GRAPH,
            "a document has a broken YAML graph",
        )
        .with_diagnostic(
            Diagnostic::new(
                codes::INVALID_YAML_GRAPH,
                Severity::Error,
                "frontmatter has a broken YAML graph",
            )
            .with_file(path.clone()),
        ),
    }
}

/// A required string argument of a schema-valid object (the schema guarantees presence).
#[must_use]
pub fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The runtime temporal profile check (spec/temporal.md §1 rule 1): absent or `""` is the
/// date profile; anything else unknown → `invalid_request` `unknown OKF temporal profile`.
///
/// # Errors
/// `invalid_request`.
pub fn profile_arg(args: &Value) -> Result<Profile, ToolError> {
    let raw = match args.get("temporal_profile") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(ToolError::invalid_request("unknown OKF temporal profile")),
    };
    Profile::parse(raw).ok_or_else(|| ToolError::invalid_request("unknown OKF temporal profile"))
}

/// Parses `as_of` under `profile` (spec/temporal.md §2.4) and returns its normalised echo
/// (§8 rule 6): `YYYY-MM-DD` under the date profile; under the instant profile the same
/// instant in its original offset, trailing fraction zeros trimmed, a zero offset as `Z`.
///
/// # Errors
/// `invalid_request` when `as_of` is not valid under the profile (the value is not echoed).
pub fn as_of_arg(args: &Value, profile: Profile) -> Result<Option<String>, ToolError> {
    let Some(v) = args.get("as_of") else {
        return Ok(None);
    };
    let bad = || {
        ToolError::invalid_request(
            "as_of does not match the temporal profile: use YYYY-MM-DD under date-3fcbb9f and an RFC 3339 datetime with explicit offset under instant-0b87c52",
        )
    };
    let s = v.as_str().ok_or_else(bad)?;
    match profile {
        Profile::Date => parse_date(s).map(|_| Some(s.to_owned())).ok_or_else(bad),
        Profile::Instant => normalise_instant_text(s).map(Some).ok_or_else(bad),
    }
}

/// The runtime concept-id check (spec/surface.md §8): never echoes the id.
///
/// # Errors
/// `resource_limit` over 4096 bytes; `invalid_request` otherwise.
pub fn concept_id_arg(id: &str) -> Result<(), ToolError> {
    match check_concept_id(id) {
        Ok(()) => Ok(()),
        Err(ConceptIdError::TooLong) => Err(ToolError::resource_limit(
            "concept_id exceeds the 4096-byte limit",
        )),
        Err(ConceptIdError::Reserved) => Err(ToolError::invalid_request(
            "concept_id contains reserved segment",
        )),
        Err(ConceptIdError::NotCanonical) => {
            Err(ToolError::invalid_request("concept_id is not canonical"))
        }
    }
}

/// The read-tool parse failure of spec/surface.md §12.6 for the given (path, code) pairs:
/// `operation_rejected`, ≤ 64 diagnostics, legacy JSON text
/// `{"status":"error","diagnostics":[{"code","severity","file","message"}…]}`.
#[must_use]
pub fn parse_failure(docs: &[(&str, &'static str)]) -> ToolError {
    let mut e = ToolError::new(
        codes::OPERATION_REJECTED,
        "bundle contains documents that cannot be parsed",
    );
    let mut legacy = Vec::new();
    for (path, code) in docs.iter().take(64) {
        let d =
            Diagnostic::new(*code, Severity::Error, validate::parse_message(code)).with_file(*path);
        let w = d.to_wire();
        legacy.push(json!({
            "code": w["code"], "severity": w["severity"], "file": w["file"], "message": w["message"],
        }));
        e = e.with_diagnostic(d);
    }
    let text = json!({"status": "error", "diagnostics": legacy}).to_string();
    e.with_text(text)
}
