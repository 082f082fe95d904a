//! Helpers shared by tool handlers: the pure argument checks of spec/surface.md §9.1 step 5
//! (temporal profile, `as_of`, `concept_id`), and the read tools' mapping of per-document parse faults (README R4, R37; spec/surface.md §12.6).

use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::bundle::Bundle;
use crate::okf::capture::Capture;
use crate::okf::detect;
use crate::okf::grammar::{check_concept_id, ConceptIdError};
use crate::okf::memo;
use crate::okf::temporal::{
    self, normalise_instant_text, parse_date, Choice, Kinds, Profile, Resolution,
};
use crate::okf::validate;
use crate::view::filter::Filters;
use serde_json::{json, Value};

/// A required string argument of a schema-valid object (the schema guarantees presence).
#[must_use]
pub fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The runtime temporal profile check (spec/temporal.md §1 rule 1): absent, `""` or `"auto"`
/// is `auto` (§11); a profile id is explicit; anything else → `invalid_request` `unknown OKF
/// temporal profile`.
///
/// # Errors
/// `invalid_request`.
pub fn profile_arg(args: &Value) -> Result<Choice, ToolError> {
    let raw = match args.get("temporal_profile") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(ToolError::invalid_request("unknown OKF temporal profile")),
    };
    Choice::parse(raw).ok_or_else(|| ToolError::invalid_request("unknown OKF temporal profile"))
}

/// The temporal arguments of a read tool (`temporal_profile`, `as_of`) after the pure checks
/// (spec/surface.md §9.1 step 5), to be resolved on the capture with [`ReadProfile::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadProfile {
    /// The requested profile.
    pub choice: Choice,
    /// The kinds of the request's own temporal values (`as_of`).
    pub request_kinds: Kinds,
    args_as_of: Option<Value>,
}

impl ReadProfile {
    /// Checks `temporal_profile` and `as_of` before any I/O: an explicit profile checks `as_of`
    /// under itself (spec/temporal.md §2.4); `auto` accepts either grammar
    /// (spec/concept-patch.md §2.4 rule 4).
    ///
    /// # Errors
    /// `invalid_request` (unknown profile; `as_of` invalid, never echoed).
    pub fn from_args(args: &Value) -> Result<Self, ToolError> {
        let choice = profile_arg(args)?;
        let mut request_kinds = Kinds::default();
        match choice {
            Choice::Explicit(p) => {
                as_of_arg(args, p)?;
            }
            Choice::Auto => {
                if let Some(v) = args.get("as_of") {
                    let s = v.as_str().ok_or_else(as_of_error)?;
                    request_kinds.observe(s);
                    if request_kinds == Kinds::default() {
                        return Err(as_of_error());
                    }
                }
            }
        }
        Ok(ReadProfile {
            choice,
            request_kinds,
            args_as_of: args.get("as_of").cloned(),
        })
    }

    /// Resolves the profile on `capture` (spec/temporal.md §11) and returns it with the
    /// normalised `as_of` echo (§8 rule 6).
    ///
    /// # Errors
    /// `invalid_request` when `auto` resolved to a profile that `as_of` does not fit (the
    /// message names the resolved profile, never the value).
    pub fn resolve(&self, capture: &Capture) -> Result<(Resolution, Option<String>), ToolError> {
        let r = match self.choice {
            Choice::Explicit(p) => Resolution::explicit(p),
            Choice::Auto => temporal::resolve(
                self.choice,
                detect::capture_kinds(capture),
                self.request_kinds,
            ),
        };
        let mut args = serde_json::Map::new();
        if let Some(v) = &self.args_as_of {
            args.insert("as_of".into(), v.clone());
        }
        let as_of = as_of_arg(&Value::Object(args), r.profile).map_err(|e| {
            if self.choice == Choice::Auto {
                ToolError::invalid_request(format!(
                    "as_of does not match the bundle's temporal profile {}: {}",
                    r.profile.id(),
                    match r.profile {
                        Profile::Date => "use YYYY-MM-DD",
                        Profile::Instant =>
                            "use an RFC 3339 datetime with explicit offset, e.g. 2026-01-02T03:04:05Z",
                    }
                ))
            } else {
                e
            }
        })?;
        notice_mixed(&r);
        Ok((r, as_of))
    }
}

/// Code of the notice of spec/temporal.md §11 rule 1 (a bundle holding both kinds).
pub const MIXED_TEMPORAL_VALUES: &str = "mixed_temporal_values";

/// Pushes the `mixed_temporal_values` `WARN` notice (spec/temporal.md §11 rule 1,
/// spec/surface.md §18.1 rule 2) when `auto` met both kinds in the bundle; its message names
/// `preview_temporal_upgrade`. Pushing twice in one call adds it once.
pub fn notice_mixed(r: &Resolution) {
    if r.mixed {
        crate::notices::push(
            Diagnostic::new(
                MIXED_TEMPORAL_VALUES,
                Severity::Warn,
                "the bundle holds both calendar dates and instants in stale_after, usage_window or sources (an upgrade left half-way), so auto reads it under date-3fcbb9f; finish the upgrade with preview_temporal_upgrade, or pass temporal_profile explicitly",
            )
            .with_field("temporal_profile"),
        );
    }
}

/// Adds `temporal_profile` (the resolved id) and `temporal_profile_source` to a read tool's
/// output (spec/temporal.md §11 rule 2, spec/surface.md §18.1 rule 1).
pub fn insert_profile(m: &mut serde_json::Map<String, Value>, r: &Resolution) {
    m.insert("temporal_profile".into(), json!(r.profile.id()));
    m.insert("temporal_profile_source".into(), json!(r.source.as_str()));
}

fn as_of_error() -> ToolError {
    ToolError::invalid_request(
        "as_of does not match the temporal profile: use YYYY-MM-DD under date-3fcbb9f and an RFC 3339 datetime with explicit offset under instant-0b87c52",
    )
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
    let bad = as_of_error;
    let s = v.as_str().ok_or_else(bad)?;
    match profile {
        Profile::Date => parse_date(s).map(|_| Some(s.to_owned())).ok_or_else(bad),
        Profile::Instant => normalise_instant_text(s).map(Some).ok_or_else(bad),
    }
}

/// The concept filters of a call (spec/surface.md §18.5 rule 1, §14.6 rule 5), after the pure
/// check that `stale` comes with `as_of`.
///
/// # Errors
/// `invalid_request` `the stale filter needs as_of`, recovery step on `as_of`.
pub fn filters_arg(args: &Value) -> Result<Filters, ToolError> {
    let filters = Filters::from_args(args);
    if filters.stale.is_some() && args.get("as_of").is_none() {
        return Err(
            ToolError::invalid_request("the stale filter needs as_of").with_diagnostic(
                Diagnostic::recovery(
                    "as_of",
                    "Give as_of (the reference time of staleness), or leave stale out.",
                ),
            ),
        );
    }
    Ok(filters)
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
    // A document's parse outcome is a pure function of its bytes: the memo answers for the
    // documents seen before, and only the others are parsed here.
    let digests: Vec<&[u8; 32]> = bundle.docs.iter().map(|d| &d.file.digest).collect();
    let known = memo::parse_outcomes(&digests);
    let mut learned: Vec<([u8; 32], Option<&'static str>)> = Vec::new();
    let mut failed: Vec<(&str, &'static str)> = Vec::new();
    for (d, outcome) in bundle.docs.iter().zip(known) {
        let fault = match outcome {
            Some(fault) => fault,
            None => {
                let fault = d.parsed().as_ref().err().map(|f| f.code());
                learned.push((d.file.digest, fault));
                fault
            }
        };
        if let Some(code) = fault {
            failed.push((d.file.path.as_str(), code));
        }
    }
    memo::remember_parse_outcomes(&learned);
    if failed.is_empty() {
        None
    } else {
        Some(parse_failure(&failed))
    }
}

/// The read-tool parse failure of spec/surface.md §12.6 for the given (path, code) pairs:
/// `operation_rejected` with ≤ 64 diagnostics, one per document, each naming its file (the
/// text items follow spec/surface.md §18.2).
#[must_use]
pub fn parse_failure(docs: &[(&str, &'static str)]) -> ToolError {
    let mut e = ToolError::new(
        codes::OPERATION_REJECTED,
        "bundle contains documents that cannot be parsed",
    );
    for (path, code) in docs.iter().take(64) {
        e = e.with_diagnostic(
            Diagnostic::new(*code, Severity::Error, validate::parse_message(code)).with_file(*path),
        );
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The remembered parse outcomes give the failure a fresh parse gives, for a bundle seen
    /// before, one with a document changed, and one whose failing document is fixed.
    #[test]
    fn the_parse_failure_from_remembered_outcomes_is_the_parsed_one() {
        use crate::okf::bundle::parse_bundle;
        let check = |files: &[(&str, &str)]| {
            let c = Capture::from_files(
                files
                    .iter()
                    .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec())),
            );
            let b = parse_bundle(&c).expect("bundle");
            let fresh = memo::bypassed(|| bundle_parse_failure(&b));
            let first = bundle_parse_failure(&b);
            let again = bundle_parse_failure(&b);
            assert_eq!(first, fresh, "{files:?}");
            assert_eq!(again, fresh, "{files:?}");
            fresh
        };
        // Unique bytes, so no other test's outcomes stand in.
        let ok = "---\ntitle: parse outcome memo ok\n---\nbody\n";
        let bad = "---\ntitle: [parse outcome memo\n---\nbody\n";
        let bad2 = "---\ntitle: parse outcome memo unterminated\nbody\n";
        let e = check(&[("a/ok.md", ok), ("a/bad.md", bad)]).expect("a failure");
        assert_eq!(e.code, codes::OPERATION_REJECTED);
        assert_eq!(e.diagnostics.len(), 1);
        assert_eq!(e.diagnostics[0].file, "a/bad.md");
        let e = check(&[("a/ok.md", ok), ("a/bad.md", bad), ("b/bad.md", bad2)]).expect("two");
        assert_eq!(e.diagnostics.len(), 2);
        assert!(check(&[("a/ok.md", ok), ("a/bad.md", ok)]).is_none());
    }

    #[test]
    fn runtime_profile_check() {
        assert_eq!(profile_arg(&json!({})), Ok(Choice::Auto));
        assert_eq!(
            profile_arg(&json!({"temporal_profile": ""})),
            Ok(Choice::Auto)
        );
        assert_eq!(
            profile_arg(&json!({"temporal_profile": "auto"})),
            Ok(Choice::Auto)
        );
        assert_eq!(
            profile_arg(&json!({"temporal_profile": "date-3fcbb9f"})),
            Ok(Choice::Explicit(Profile::Date))
        );
        assert_eq!(
            profile_arg(&json!({"temporal_profile": "instant-0b87c52"})),
            Ok(Choice::Explicit(Profile::Instant))
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
        assert_eq!(
            e.to_wire()["diagnostics"],
            json!([{"code": "unterminated_frontmatter", "severity": "ERROR", "file": "a.md",
                "field": "", "message": "the frontmatter block has no closing fence",
                "spec_ref": "", "policy_failure": false}])
        );
        let many: Vec<(String, &str)> = (0..70)
            .map(|i| (format!("d{i}.md"), "invalid_encoding"))
            .collect();
        let refs: Vec<(&str, &str)> = many.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        assert_eq!(parse_failure(&refs).diagnostics.len(), 64);
    }
}
