//! Helpers shared by tool handlers: the pure argument checks of spec/surface.md §9.1 step 5
//! (temporal profile, `as_of`, `concept_id`), capture of a validated `bundle_path`, and the
//! read tools' mapping of per-document parse faults (README R4, R37; spec/surface.md §12.6).

use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::bundle::Bundle;
use crate::okf::capture::Capture;
use crate::okf::grammar::{check_concept_id, ConceptIdError};
use crate::okf::temporal::{normalise_instant_text, parse_date, Profile};
use crate::okf::validate;
use crate::store::capture;
use crate::store::root;
use crate::tools::Ctx;
use serde_json::{json, Value};

/// Validates `bundle_path` (spec/surface.md §7) and captures the bundle (spec/store.md §3) as
/// a reader (`store::reader`, spec/store.md §16 rule 2).
///
/// # Errors
/// The `bundle_path` and capture errors of the spec.
pub fn capture_bundle(bundle_path: &str, ctx: &Ctx) -> Result<Capture, ToolError> {
    ctx.cancel.check()?;
    let root = root::open(bundle_path)?;
    // A read tool: waits for a commit in flight, else warns (spec/store.md §16 rule 2).
    crate::store::reader::reading(|| capture::capture(&root, &ctx.cancel))
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

/// The whole-bundle parse rule of the graph and search read tools (spec/surface.md §12.6):
/// a [`parse_failure`] naming every concept or reserved document that cannot be parsed (at
/// most 64), or `None` when every document parsed.
#[must_use]
pub fn bundle_parse_failure(bundle: &Bundle<'_>) -> Option<ToolError> {
    let failed: Vec<(&str, &'static str)> = bundle
        .docs
        .iter()
        .filter_map(|d| {
            d.parsed()
                .as_ref()
                .err()
                .map(|f| (d.file.path.as_str(), f.code()))
        })
        .collect();
    if failed.is_empty() {
        None
    } else {
        Some(parse_failure(&failed))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_profile_check() {
        assert_eq!(profile_arg(&json!({})), Ok(Profile::Date));
        assert_eq!(
            profile_arg(&json!({"temporal_profile": ""})),
            Ok(Profile::Date)
        );
        assert_eq!(
            profile_arg(&json!({"temporal_profile": "instant-0b87c52"})),
            Ok(Profile::Instant)
        );
        let e = profile_arg(&json!({"temporal_profile": "instant"})).unwrap_err();
        assert_eq!(e.code, codes::INVALID_REQUEST);
        assert_eq!(e.message, "unknown OKF temporal profile");
    }

    #[test]
    fn as_of_per_profile_and_normalised_echo() {
        let d = |v: &str| as_of_arg(&json!({"as_of": v}), Profile::Date);
        let i = |v: &str| as_of_arg(&json!({"as_of": v}), Profile::Instant);
        assert_eq!(as_of_arg(&json!({}), Profile::Instant), Ok(None));
        assert_eq!(d("2026-01-02"), Ok(Some("2026-01-02".into())));
        assert!(d("2026-02-30").is_err());
        assert!(d("2026-01-02T00:00:00Z").is_err());
        assert!(i("2026-01-02").is_err());
        assert_eq!(
            i("2026-01-02T03:04:05.500+00:00"),
            Ok(Some("2026-01-02T03:04:05.5Z".into()))
        );
        let e = i("2026-09-26T12:34:56-00:00").unwrap_err();
        assert_eq!(e.code, codes::INVALID_REQUEST);
        assert!(!e.message.contains("2026-09-26"));
    }

    #[test]
    fn concept_id_runtime_check_never_echoes() {
        assert_eq!(concept_id_arg("tables/orders"), Ok(()));
        let e = concept_id_arg("secret:x").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (codes::INVALID_REQUEST, "concept_id is not canonical")
        );
        let e = concept_id_arg("a/index").unwrap_err();
        assert_eq!(e.message, "concept_id contains reserved segment");
        assert_eq!(
            concept_id_arg(&"a".repeat(4097)).unwrap_err().code,
            codes::RESOURCE_LIMIT
        );
    }

    #[test]
    fn whole_bundle_rule_names_every_unparseable_document() {
        let c = Capture::from_files([
            ("a.md".to_owned(), b"---\ntype: T\n---\n".to_vec()),
            ("b.md".to_owned(), b"---\ntype: T\n".to_vec()),
            ("x/index.md".to_owned(), b"\xff".to_vec()),
        ]);
        let b = crate::okf::bundle::parse_bundle(&c).unwrap();
        let e = bundle_parse_failure(&b).unwrap();
        let files: Vec<(&str, &str)> = e
            .diagnostics
            .iter()
            .map(|d| (d.file.as_str(), d.code.as_str()))
            .collect();
        assert_eq!(
            files,
            vec![
                ("b.md", "unterminated_frontmatter"),
                ("x/index.md", "invalid_encoding")
            ]
        );
        let ok = Capture::from_files([("a.md".to_owned(), b"---\ntype: T\n---\n".to_vec())]);
        assert!(bundle_parse_failure(&crate::okf::bundle::parse_bundle(&ok).unwrap()).is_none());
    }

    #[test]
    fn parse_failure_shape() {
        let e = parse_failure(&[("a.md", "unterminated_frontmatter")]);
        assert_eq!(e.code, codes::OPERATION_REJECTED);
        assert_eq!(e.diagnostics.len(), 1);
        let t: Value = serde_json::from_str(e.text.as_deref().unwrap()).unwrap();
        assert_eq!(
            t,
            json!({"status": "error", "diagnostics": [{"code": "unterminated_frontmatter",
                "severity": "ERROR", "file": "a.md",
                "message": "the frontmatter block has no closing fence"}]})
        );
        let many: Vec<(String, &str)> = (0..70)
            .map(|i| (format!("d{i}.md"), "invalid_encoding"))
            .collect();
        let refs: Vec<(&str, &str)> = many.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        assert_eq!(parse_failure(&refs).diagnostics.len(), 64);
    }
}
