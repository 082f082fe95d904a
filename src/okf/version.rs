//! Version declaration and resolution (spec/surface.md §12.1–§12.2, README R45).
//!
//! The only declaration is `okf_version` in the frontmatter of the root `index.md`. This module
//! reads it from a parsed bundle and resolves the `version` and `version_declaration` objects
//! of the read tools and the validator. Pure: no I/O.

use crate::okf::bundle::{Bundle, Doc};
use crate::okf::yaml::{NodeKind, Style};
use serde_json::{json, Value};

/// The root declaration, per case of spec/surface.md §12.1 (`version_declaration` table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declaration {
    /// No root `index.md`, no frontmatter, or no `okf_version` key.
    Absent,
    /// A valid declaration with its text (`0.1`, `0.2` or a future version such as `0.10`).
    Valid(String),
    /// A scalar whose text is not a valid version (e.g. `0.0`, `00.2`), or a scalar with an
    /// anchor, a tag other than `!!str`, or a block style.
    InvalidScalar(String),
    /// A mapping, a sequence, an alias, or a root `index.md` that cannot be parsed.
    NonScalar,
}

impl Declaration {
    /// Whether the declaration is present but invalid (`version_declaration_invalid`).
    #[must_use]
    pub fn is_invalid(&self) -> bool {
        matches!(self, Declaration::InvalidScalar(_) | Declaration::NonScalar)
    }

    /// The valid declared text, if any.
    #[must_use]
    pub fn valid(&self) -> Option<&str> {
        match self {
            Declaration::Valid(t) => Some(t),
            _ => None,
        }
    }

    /// The `version_declaration` object `{present, valid, raw, value}` (spec/surface.md §12.1).
    #[must_use]
    pub fn to_json(&self) -> Value {
        match self {
            Declaration::Absent => {
                json!({"present": false, "valid": true, "raw": null, "value": null})
            }
            Declaration::Valid(t) => json!({"present": true, "valid": true, "raw": t, "value": t}),
            Declaration::InvalidScalar(t) => {
                json!({"present": true, "valid": false, "raw": t, "value": null})
            }
            Declaration::NonScalar => {
                json!({"present": true, "valid": false, "raw": null, "value": null})
            }
        }
    }
}

/// Whether `t` is a valid version text: `^[0-9]+\.[0-9]+$` and either exactly `0.1` / `0.2`
/// or, read as the integer pair (major, minor), greater than (0, 2) (spec/surface.md §12.2).
#[must_use]
pub fn is_valid_version_text(t: &str) -> bool {
    if t == "0.1" || t == "0.2" {
        return true;
    }
    version_pair(t).is_some_and(|p| p > (0, 2))
}

/// Whether `t` is a valid version newer than 0.2 (`future-best-effort`).
#[must_use]
pub fn is_future(t: &str) -> bool {
    t != "0.1" && t != "0.2" && is_valid_version_text(t)
}

/// `(major, minor)` of a `^[0-9]+\.[0-9]+$` text; `None` otherwise or on overflow.
fn version_pair(t: &str) -> Option<(u128, u128)> {
    let (a, b) = t.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if !digits(a) || !digits(b) {
        return None;
    }
    // Very long digit strings: compare as "greater than (0, 2)" without overflow.
    let parse = |s: &str| {
        let s = s.trim_start_matches('0');
        if s.len() > 38 {
            Some(u128::MAX)
        } else if s.is_empty() {
            Some(0)
        } else {
            s.parse::<u128>().ok()
        }
    };
    Some((parse(a)?, parse(b)?))
}

/// Reads the root declaration of a parsed bundle (spec/surface.md §12.2).
#[must_use]
pub fn declaration(bundle: &Bundle<'_>) -> Declaration {
    declaration_of(bundle.doc("index.md"))
}

/// The declaration held by the root `index.md` document `doc` (`None`: no root index).
#[must_use]
pub fn declaration_of(doc: Option<&Doc<'_>>) -> Declaration {
    let Some(doc) = doc else {
        return Declaration::Absent;
    };
    let Ok(parsed) = doc.parsed() else {
        return Declaration::NonScalar;
    };
    let Some(root) = parsed.root() else {
        return Declaration::Absent;
    };
    let Some(entries) = root.entries() else {
        return Declaration::Absent;
    };
    let Some((_, node)) = entries
        .iter()
        .find(|(k, _)| k.scalar_text() == Some("okf_version"))
    else {
        return Declaration::Absent;
    };
    match &node.kind {
        NodeKind::Scalar { text, style } => {
            let plain_or_quoted = matches!(
                style,
                Style::Plain | Style::SingleQuoted | Style::DoubleQuoted
            );
            let tag_ok = node.tag.as_deref().is_none_or(|t| t == "!!str");
            if plain_or_quoted && tag_ok && node.anchor.is_none() && is_valid_version_text(text) {
                Declaration::Valid(text.clone())
            } else {
                Declaration::InvalidScalar(text.clone())
            }
        }
        _ => Declaration::NonScalar,
    }
}

/// An explicit version requested by `validate_bundle` `target_version` (spec/surface.md §12.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    V01,
    V02,
}

impl Target {
    /// `"0.1"` / `"0.2"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Target::V01 => "0.1",
            Target::V02 => "0.2",
        }
    }
}

/// The resolved `version` object (spec/surface.md §12.1–§12.2); all members null when the
/// declaration is present but invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub declared: Option<String>,
    pub effective: Option<&'static str>,
    /// `declared` | `default` | `explicit` | `future-best-effort`.
    pub resolution: Option<&'static str>,
    /// `native` | `legacy` | `best-effort`.
    pub compatibility: Option<&'static str>,
}

impl Version {
    /// `{declared, effective, resolution, compatibility}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "declared": self.declared,
            "effective": self.effective,
            "resolution": self.resolution,
            "compatibility": self.compatibility,
        })
    }
}

/// Resolves the version of spec/surface.md §12.2; `target` is `validate_bundle`'s explicit
/// `target_version` (`None` = `auto` and every other tool).
#[must_use]
pub fn resolve(decl: &Declaration, target: Option<Target>) -> Version {
    let declared = decl.valid().map(str::to_owned);
    if decl.is_invalid() {
        return Version {
            declared: None,
            effective: None,
            resolution: None,
            compatibility: None,
        };
    }
    if let Some(t) = target {
        return Version {
            declared,
            effective: Some(t.as_str()),
            resolution: Some("explicit"),
            compatibility: Some(match t {
                Target::V01 => "legacy",
                Target::V02 => "native",
            }),
        };
    }
    match declared.as_deref() {
        None => Version {
            declared: None,
            effective: Some("0.2"),
            resolution: Some("default"),
            compatibility: Some("native"),
        },
        Some("0.1") => Version {
            declared,
            effective: Some("0.1"),
            resolution: Some("declared"),
            compatibility: Some("legacy"),
        },
        Some("0.2") => Version {
            declared,
            effective: Some("0.2"),
            resolution: Some("declared"),
            compatibility: Some("native"),
        },
        Some(_) => Version {
            declared,
            effective: Some("0.2"),
            resolution: Some("future-best-effort"),
            compatibility: Some("best-effort"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::okf::bundle::parse_bundle;
    use crate::okf::capture::Capture;

    fn decl_of(index: &str) -> Declaration {
        let c = Capture::from_files([("index.md".to_owned(), index.as_bytes().to_vec())]);
        let b = parse_bundle(&c).unwrap();
        declaration(&b)
    }

    #[test]
    fn version_texts() {
        for ok in ["0.1", "0.2", "0.3", "0.10", "1.0", "9.0", "10.0"] {
            assert!(is_valid_version_text(ok), "{ok}");
        }
        for bad in [
            "0.0", "00.2", "0.02", "0.01", "00.1", "1", "0.2.1", "v0.2", " 0.2", "",
        ] {
            assert!(!is_valid_version_text(bad), "{bad}");
        }
        assert!(is_future("0.10") && is_future("1.0") && !is_future("0.2"));
    }

    #[test]
    fn declaration_cases_of_12_1() {
        assert_eq!(decl_of("# x\n"), Declaration::Absent);
        assert_eq!(decl_of("---\nother: 1\n---\n"), Declaration::Absent);
        assert_eq!(
            decl_of("---\nokf_version: \"0.2\"\n---\n"),
            Declaration::Valid("0.2".into())
        );
        assert_eq!(
            decl_of("---\nokf_version: 0.1\n---\n"),
            Declaration::Valid("0.1".into())
        );
        assert_eq!(
            decl_of("---\nokf_version: !!str 0.10\n---\n"),
            Declaration::Valid("0.10".into())
        );
        assert_eq!(
            decl_of("---\nokf_version: \"0.0\"\n---\n"),
            Declaration::InvalidScalar("0.0".into())
        );
        assert_eq!(
            decl_of("---\nokf_version: 00.2\n---\n"),
            Declaration::InvalidScalar("00.2".into())
        );
        assert_eq!(
            decl_of("---\nokf_version: &a 0.2\n---\n"),
            Declaration::InvalidScalar("0.2".into())
        );
        assert_eq!(
            decl_of("---\nokf_version: [1]\n---\n"),
            Declaration::NonScalar
        );
        assert_eq!(
            decl_of("---\nx: &v \"0.2\"\nokf_version: *v\n---\n"),
            Declaration::NonScalar
        );
        assert_eq!(decl_of("---\nokf_version: 0.2\n"), Declaration::NonScalar);
        let empty = Capture::from_files(Vec::<(String, Vec<u8>)>::new());
        assert_eq!(
            declaration(&parse_bundle(&empty).unwrap()),
            Declaration::Absent
        );
    }

    #[test]
    fn resolution_table_of_12_2() {
        let r = resolve(&Declaration::Absent, None);
        assert_eq!(
            (r.declared, r.effective, r.resolution, r.compatibility),
            (None, Some("0.2"), Some("default"), Some("native"))
        );
        let r = resolve(&Declaration::Valid("0.1".into()), None);
        assert_eq!(
            (r.effective, r.compatibility),
            (Some("0.1"), Some("legacy"))
        );
        let r = resolve(&Declaration::Valid("0.10".into()), None);
        assert_eq!(
            (r.declared.as_deref(), r.effective, r.resolution),
            (Some("0.10"), Some("0.2"), Some("future-best-effort"))
        );
        let r = resolve(&Declaration::NonScalar, Some(Target::V02));
        assert_eq!(
            r.to_json(),
            json!({"declared":null,"effective":null,"resolution":null,"compatibility":null})
        );
        let r = resolve(&Declaration::Valid("0.1".into()), Some(Target::V02));
        assert_eq!(
            (
                r.declared.as_deref(),
                r.effective,
                r.resolution,
                r.compatibility
            ),
            (Some("0.1"), Some("0.2"), Some("explicit"), Some("native"))
        );
    }
}
