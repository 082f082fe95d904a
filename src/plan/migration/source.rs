//! Source resolution of the 0.1 → 0.2 migration (spec/migration.md §4): the `source` object,
//! the resolution algorithm over a parsed bundle, the applicable tuples and the resolution
//! digest. Pure.

use super::citations::{self, SectionProbe};
use crate::digest::Encoder;
use crate::envelope::ToolError;
use crate::okf::bundle::{Bundle, Doc};
use crate::okf::grammar::DocClass;
use crate::okf::version::{declaration_of, Declaration};
use crate::plan::stream::{bytes_of, Reread};
use serde_json::{json, Value};

/// The `from` selector (§3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selector {
    #[default]
    Auto,
    V01,
    V02,
}

impl Selector {
    /// Wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Selector::Auto => "auto",
            Selector::V01 => "0.1",
            Selector::V02 => "0.2",
        }
    }
    /// Parses the wire spelling.
    #[must_use]
    pub fn parse(s: &str) -> Option<Selector> {
        match s {
            "auto" => Some(Selector::Auto),
            "0.1" => Some(Selector::V01),
            "0.2" => Some(Selector::V02),
            _ => None,
        }
    }
}

/// `transition` of the source object.
pub const TRANSITION: &str = "v0.1-to-v0.2";
/// `transition` of a bundle that is already in the target form.
pub const TARGET_NOOP: &str = "target-noop";
/// `transition` of a future declaration.
pub const BLOCKED: &str = "blocked";

/// A legacy-probe candidate (§4.1): `kind` is `timestamp` or `citations`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Candidate {
    pub path: String,
    pub kind: String,
    pub start: u64,
    pub end: u64,
}

/// A source blocker (§4.1): only the future-declaration blocker of §4.2 rule 4.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceBlocker {
    pub code: String,
    pub path: String,
    pub start: u64,
    pub end: u64,
    pub message: String,
}

/// The `source` object of §4.1 (all members required on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceResolution {
    pub requested_selector: Selector,
    pub declaration_present: bool,
    pub declaration_valid: bool,
    pub declaration_raw: String,
    pub declared_version: Option<String>,
    pub resolved_source: String,
    /// `explicit`, `declared`, `legacy-probe`, `default` or `future`.
    pub resolution_source: String,
    pub from_version: String,
    pub to_version: String,
    pub transition: String,
    pub candidates: Vec<Candidate>,
    pub blockers: Vec<SourceBlocker>,
}

impl SourceResolution {
    /// Whether this is the transition.
    #[must_use]
    pub fn is_transition(&self) -> bool {
        self.transition == TRANSITION
    }
    /// Whether this is a target-noop.
    #[must_use]
    pub fn is_target_noop(&self) -> bool {
        self.transition == TARGET_NOOP
    }

    /// The wire object.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "requested_selector": self.requested_selector.as_str(),
            "declaration_present": self.declaration_present,
            "declaration_valid": self.declaration_valid,
            "declaration_raw": self.declaration_raw,
            "declared_version": self.declared_version,
            "resolved_source": self.resolved_source,
            "resolution_source": self.resolution_source,
            "from_version": self.from_version,
            "to_version": self.to_version,
            "transition": self.transition,
            "candidates": self.candidates.iter().map(|c| json!({
                "kind": c.kind, "path": c.path,
                "location": {"start": c.start, "end": c.end},
            })).collect::<Vec<_>>(),
            "blockers": self.blockers.iter().map(|b| json!({
                "code": b.code, "path": b.path,
                "location": {"start": b.start, "end": b.end},
                "message": b.message,
            })).collect::<Vec<_>>(),
        })
    }

    /// Decodes a schema-valid `source` object; `None` when a member is missing or mistyped.
    #[must_use]
    pub fn from_json(v: &Value) -> Option<SourceResolution> {
        let s = |k: &str| v.get(k)?.as_str().map(str::to_owned);
        let b = |k: &str| v.get(k)?.as_bool();
        let loc = |x: &Value| -> Option<(u64, u64)> {
            let l = x.get("location")?;
            Some((l.get("start")?.as_u64()?, l.get("end")?.as_u64()?))
        };
        let mut candidates = Vec::new();
        for c in v.get("candidates")?.as_array()? {
            let (start, end) = loc(c)?;
            candidates.push(Candidate {
                kind: c.get("kind")?.as_str()?.to_owned(),
                path: c.get("path")?.as_str()?.to_owned(),
                start,
                end,
            });
        }
        let mut blockers = Vec::new();
        for c in v.get("blockers")?.as_array()? {
            let (start, end) = loc(c)?;
            blockers.push(SourceBlocker {
                code: c.get("code")?.as_str()?.to_owned(),
                path: c.get("path")?.as_str()?.to_owned(),
                start,
                end,
                message: c.get("message")?.as_str()?.to_owned(),
            });
        }
        let declared_version = match v.get("declared_version")? {
            Value::Null => None,
            Value::String(t) => Some(t.clone()),
            _ => return None,
        };
        Some(SourceResolution {
            requested_selector: Selector::parse(v.get("requested_selector")?.as_str()?)?,
            declaration_present: b("declaration_present")?,
            declaration_valid: b("declaration_valid")?,
            declaration_raw: s("declaration_raw")?,
            declared_version,
            resolved_source: s("resolved_source")?,
            resolution_source: s("resolution_source")?,
            from_version: s("from_version")?,
            to_version: s("to_version")?,
            transition: s("transition")?,
            candidates,
            blockers,
        })
    }

    /// Whether this is one of the 8 applicable tuples of §4.3, with the runtime-only checks
    /// (candidate paths `.md`, spans per kind, strictly ordered).
    #[must_use]
    pub fn is_applicable_tuple(&self) -> bool {
        if !self.declaration_valid || !self.blockers.is_empty() {
            return false;
        }
        let (present, raw, declared) = (
            self.declaration_present,
            self.declaration_raw.as_str(),
            self.declared_version.as_deref(),
        );
        let decl_ok = |v: &str| {
            if present {
                raw == v && declared == Some(v)
            } else {
                raw.is_empty() && declared.is_none()
            }
        };
        let rs = self.resolution_source.as_str();
        let sel = self.requested_selector;
        let no_candidates = self.candidates.is_empty();
        if self.is_transition() {
            if self.resolved_source != "0.1"
                || self.from_version != "0.1"
                || self.to_version != "0.2"
            {
                return false;
            }
            match (sel, present, rs) {
                (Selector::V01, _, "explicit") => decl_ok("0.1") && no_candidates,
                (Selector::Auto, true, "declared") => decl_ok("0.1") && no_candidates,
                (Selector::Auto, false, "legacy-probe") => {
                    decl_ok("0.1") && !no_candidates && self.candidates_canonical()
                }
                _ => false,
            }
        } else if self.is_target_noop() {
            if self.resolved_source != "0.2"
                || self.from_version != "0.2"
                || self.to_version != "0.2"
            {
                return false;
            }
            no_candidates
                && match (sel, present, rs) {
                    (Selector::V02, _, "explicit") | (Selector::Auto, true, "declared") => {
                        decl_ok("0.2")
                    }
                    (Selector::Auto, false, "default") => decl_ok("0.2"),
                    _ => false,
                }
        } else {
            false
        }
    }

    fn candidates_canonical(&self) -> bool {
        let each = self.candidates.iter().all(|c| {
            std::path::Path::new(&c.path)
                .extension()
                .is_some_and(|e| e == "md")
                && crate::envelope::is_bundle_relative_path(&c.path)
                && match c.kind.as_str() {
                    "timestamp" => c.start == 0 && c.end == 0,
                    "citations" => c.start < c.end,
                    _ => false,
                }
        });
        each && self
            .candidates
            .windows(2)
            .all(|w| candidate_key(&w[0]) < candidate_key(&w[1]))
    }

    /// The resolution digest of §4.4.
    #[must_use]
    pub fn digest(&self) -> String {
        let mut e = Encoder::tagged("okf:migration-source-resolution:v1");
        e.str(self.requested_selector.as_str())
            .str(if self.declaration_present {
                "present"
            } else {
                "absent"
            })
            .str(if self.declaration_valid {
                "valid"
            } else {
                "invalid"
            })
            .str(&self.declaration_raw)
            .str(self.declared_version.as_deref().unwrap_or(""))
            .str(&self.resolved_source)
            .str(&self.resolution_source)
            .str(&self.from_version)
            .str(&self.to_version)
            .str(&self.transition);
        e.str("ordered_candidates")
            .cnt(self.candidates.len() as u64);
        for c in &self.candidates {
            e.str(&c.kind).str(&c.path).cnt(c.start).cnt(c.end);
        }
        e.str("ordered_blockers").cnt(self.blockers.len() as u64);
        for b in &self.blockers {
            e.str(&b.code)
                .str(&b.path)
                .cnt(b.start)
                .cnt(b.end)
                .str(&b.message);
        }
        e.digest()
    }
}

fn candidate_key(c: &Candidate) -> (&[u8], &[u8], u64, u64) {
    (c.path.as_bytes(), c.kind.as_bytes(), c.start, c.end)
}

/// The `unsupported_migration_source` error of §4.2 rule 2 (an unreadable root declaration),
/// with `field` the recovery step's field (`from` in the preview, `expected_source` in the
/// apply).
fn unreadable_root(detail: &'static str, field: &str) -> ToolError {
    ToolError::new(
        "unsupported_migration_source",
        "the root index.md declaration cannot be read",
    )
    .with_diagnostic(
        crate::envelope::Diagnostic::new(
            detail,
            crate::envelope::Severity::Error,
            "the root index.md cannot be read as an OKF declaration",
        )
        .with_file("index.md"),
    )
    .with_diagnostic(crate::envelope::Diagnostic::recovery(
        field,
        "Repair the root index.md frontmatter (a quoted okf_version such as \"0.1\"), then preview again.",
    ))
}

/// Resolves the source of `bundle` for `selector` (§4.2). `field` names the input the
/// recovery step of an unreadable declaration points at.
///
/// # Errors
/// `unsupported_migration_source` (unreadable root declaration, rule 2); `invalid_request`
/// (`from contradicts the bundle declaration`, rule 3).
pub fn resolve(
    bundle: &Bundle<'_>,
    selector: Selector,
    field: &str,
    reread: &Reread<'_>,
) -> Result<SourceResolution, ToolError> {
    let root = bundle.doc("index.md");
    let decl = declaration_of(root);
    if let Some(doc) = root {
        if let Err(fault) = doc.parsed() {
            let code = match fault {
                crate::okf::bundle::ParseFault::InvalidEncoding => "invalid_utf8",
                _ => "frontmatter_boundary",
            };
            return Err(unreadable_root(code, field));
        }
    }
    let declared = match &decl {
        Declaration::Absent => None,
        Declaration::Valid(v) => Some(v.clone()),
        Declaration::InvalidScalar(_) | Declaration::NonScalar => {
            return Err(unreadable_root("unsupported_migration_version", field))
        }
    };
    let base = |resolved: &str, how: &str| -> SourceResolution {
        let (from, to, transition) = if resolved == "0.1" {
            ("0.1", "0.2", TRANSITION)
        } else {
            ("0.2", "0.2", TARGET_NOOP)
        };
        SourceResolution {
            requested_selector: selector,
            declaration_present: declared.is_some(),
            declaration_valid: true,
            declaration_raw: declared.clone().unwrap_or_default(),
            declared_version: declared.clone(),
            resolved_source: resolved.to_owned(),
            resolution_source: how.to_owned(),
            from_version: from.to_owned(),
            to_version: to.to_owned(),
            transition: transition.to_owned(),
            candidates: Vec::new(),
            blockers: Vec::new(),
        }
    };
    match selector {
        Selector::V01 | Selector::V02 => {
            let want = if selector == Selector::V01 {
                "0.1"
            } else {
                "0.2"
            };
            if declared.as_deref().is_some_and(|d| d != want) {
                return Err(contradiction());
            }
            Ok(base(want, "explicit"))
        }
        Selector::Auto => match declared.as_deref() {
            Some("0.1") => Ok(base("0.1", "declared")),
            Some("0.2") => Ok(base("0.2", "declared")),
            Some(future) => Ok(SourceResolution {
                requested_selector: selector,
                declaration_present: true,
                declaration_valid: true,
                declaration_raw: future.to_owned(),
                declared_version: Some(future.to_owned()),
                resolved_source: future.to_owned(),
                resolution_source: "future".to_owned(),
                from_version: future.to_owned(),
                to_version: String::new(),
                transition: BLOCKED.to_owned(),
                candidates: Vec::new(),
                blockers: vec![SourceBlocker {
                    code: "unsupported_migration_source".to_owned(),
                    path: "index.md".to_owned(),
                    start: 0,
                    end: 0,
                    message: format!("future declaration \"{future}\" cannot be rewritten as v0.2"),
                }],
            }),
            None => {
                let candidates = legacy_probe(bundle, reread)?;
                if candidates.is_empty() {
                    Ok(base("0.2", "default"))
                } else {
                    let mut s = base("0.1", "legacy-probe");
                    s.candidates = candidates;
                    Ok(s)
                }
            }
        },
    }
}

/// `invalid_request` `from contradicts the bundle declaration` (§4.2 rule 3).
#[must_use]
pub fn contradiction() -> ToolError {
    ToolError::invalid_request("from contradicts the bundle declaration").with_diagnostic(
        crate::envelope::Diagnostic::recovery(
            "from",
            "Use from: \"auto\" (or the declared version), then preview again.",
        ),
    )
}

/// Whether `doc` is a concept or reserved document (§6.1 rule 2).
#[must_use]
pub fn is_migration_document(doc: &Doc<'_>) -> bool {
    matches!(doc.class, DocClass::Concept(_) | DocClass::Reserved)
}

/// The legacy probe of §4.2 rule 4: candidates sorted by (path, kind, start, end), unique.
/// Spilled documents are read again through `reread`, one at a time.
fn legacy_probe(bundle: &Bundle<'_>, reread: &Reread<'_>) -> Result<Vec<Candidate>, ToolError> {
    let mut out = Vec::new();
    for doc in &bundle.docs {
        if !is_migration_document(doc) {
            continue;
        }
        let path = doc.file.path.as_str();
        let bytes = bytes_of(doc.file, reread)?;
        let Ok(Ok(parsed)) = crate::okf::bundle::parse_document(&bytes) else {
            continue;
        };
        let keys: Vec<String> = parsed
            .root()
            .and_then(|r| r.entries())
            .map(|e| {
                e.iter()
                    .filter_map(|(k, _)| k.scalar_text().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let has = |k: &str| keys.iter().any(|x| x == k);
        if matches!(doc.class, DocClass::Concept(_)) && has("timestamp") && !has("generated") {
            out.push(Candidate {
                path: path.to_owned(),
                kind: "timestamp".to_owned(),
                start: 0,
                end: 0,
            });
        }
        if !has("sources") {
            let body_offset = parsed.split.body.start as u64;
            let (start, end) = match citations::probe(parsed.split.body_text(), 0) {
                SectionProbe::None => continue,
                SectionProbe::One { start, end } | SectionProbe::Unparseable { start, end } => {
                    (start as u64, end as u64)
                }
            };
            out.push(Candidate {
                path: path.to_owned(),
                kind: "citations".to_owned(),
                start: body_offset + start,
                end: body_offset + end.max(start + 1),
            });
        }
    }
    out.sort_by(|a, b| candidate_key(a).cmp(&candidate_key(b)));
    out.dedup();
    Ok(out)
}
