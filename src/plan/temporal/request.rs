//! The temporal-upgrade request: decoding and the pure checks of spec/temporal.md §5 step 2
//! and §6 step 1 (zero I/O).

use crate::digest::is_canonical_digest;
use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::actor::{check_request_actor, RequestActorError};
use crate::okf::grammar::{check_concept_id, ConceptIdError};
use crate::okf::temporal::{parse_date, parse_upgrade_target};
use crate::plan::identity::Authorisation;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Most `mappings` items (spec/temporal.md §4 rule 6, spec/surface.md §11).
pub const MAX_MAPPINGS: usize = 10_000;
/// Most bytes of the request `id` (spec/surface.md §11).
pub const MAX_ID_BYTES: usize = 128;

/// One mapping (spec/temporal.md §4): the caller's instant for one legacy-date occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// A canonical concept id.
    pub concept: String,
    /// The §3 field path (`stale_after`, `sources[0].last_modified`, …), verbatim.
    pub path: String,
    /// The observed legacy date, `YYYY-MM-DD`.
    pub from: String,
    /// The caller's instant (§2.2 grammar), verbatim.
    pub to: String,
}

impl Mapping {
    /// The duplicate key `concept + "#" + path` (§4 rule 3).
    #[must_use]
    pub fn key(&self) -> String {
        format!("{}#{}", self.concept, self.path)
    }
}

/// A decoded temporal-upgrade request (spec/temporal.md §5, §6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemporalRequest {
    pub bundle_path: String,
    /// The request `id` (the change-set id, §10).
    pub id: String,
    /// The request `actor` (a transport identity).
    pub actor: String,
    /// The mappings sorted by (concept id bytes, path bytes) (§4 rule 7); unique keys.
    pub mappings: Vec<Mapping>,
    /// Apply only: `{base_revision, plan_digest}`.
    pub auth: Option<Authorisation>,
}

impl TemporalRequest {
    /// The mappings grouped by concept, concepts ascending, paths ascending inside each.
    #[must_use]
    pub fn by_concept(&self) -> Vec<(&str, Vec<&Mapping>)> {
        let mut out: Vec<(&str, Vec<&Mapping>)> = Vec::new();
        for m in &self.mappings {
            match out.last_mut() {
                Some((c, v)) if *c == m.concept => v.push(m),
                _ => out.push((m.concept.as_str(), vec![m])),
            }
        }
        out
    }
}

/// The failure of a preview (`temporal upgrade preview failed`) or apply (`temporal upgrade
/// apply failed`): `operation_rejected`, non-retryable, one `ERROR` diagnostic `code` with
/// `message` on `file` (a concept path or `""`) (spec/temporal.md §5 step 9, §7).
#[must_use]
pub fn failure(apply: bool, code: &str, message: impl Into<String>, file: &str) -> ToolError {
    let msg = if apply {
        "temporal upgrade apply failed"
    } else {
        "temporal upgrade preview failed"
    };
    ToolError::new(codes::OPERATION_REJECTED, msg)
        .with_diagnostic(Diagnostic::new(code, Severity::Error, message).with_file(file))
}

fn bad_mapping() -> ToolError {
    ToolError::invalid_request("invalid temporal mapping")
}

fn text<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    obj.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::invalid_request(format!("{key} must be a string")))
}

/// Whether `path` is a §3 field path:
/// `^(stale_after|usage_window\.(from|to)|sources\[[0-9]+\]\.(last_modified|usage_window\.(from|to)))$`.
#[must_use]
pub fn is_field_path(path: &str) -> bool {
    if matches!(
        path,
        "stale_after" | "usage_window.from" | "usage_window.to"
    ) {
        return true;
    }
    let Some(rest) = path.strip_prefix("sources[") else {
        return false;
    };
    let Some((digits, field)) = rest.split_once("].") else {
        return false;
    };
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && matches!(
            field,
            "last_modified" | "usage_window.from" | "usage_window.to"
        )
}

/// Checks the request `id` (spec/temporal.md §5): 1..128 bytes, no surrounding whitespace,
/// no control characters.
fn check_id(id: &str) -> Result<(), ToolError> {
    if id.len() > MAX_ID_BYTES {
        return Err(ToolError::resource_limit("id exceeds 128 bytes"));
    }
    if id.is_empty() || id.trim() != id || id.chars().any(char::is_control) {
        return Err(ToolError::invalid_request(
            "id must be 1 to 128 bytes without surrounding whitespace or control characters",
        ));
    }
    Ok(())
}

fn parse_mapping(v: &Value) -> Result<Mapping, ToolError> {
    let obj = v.as_object().ok_or_else(bad_mapping)?;
    let get = |k: &str| obj.get(k).and_then(Value::as_str).ok_or_else(bad_mapping);
    let concept = get("concept")?;
    match check_concept_id(concept) {
        Ok(()) => {}
        Err(ConceptIdError::TooLong) => {
            return Err(ToolError::resource_limit(
                "a mapping concept exceeds 4096 bytes",
            ))
        }
        Err(_) => return Err(bad_mapping()),
    }
    let path = get("path")?;
    let from = get("from")?;
    let to = get("to")?;
    if !is_field_path(path) || parse_date(from).is_none() || parse_upgrade_target(to).is_none() {
        return Err(bad_mapping());
    }
    Ok(Mapping {
        concept: concept.to_owned(),
        path: path.to_owned(),
        from: from.to_owned(),
        to: to.to_owned(),
    })
}

/// Decodes schema-valid arguments of `preview_temporal_upgrade` (`apply` false) or
/// `apply_temporal_upgrade` (`apply` true). Pure: no I/O.
///
/// # Errors
/// `invalid_request` (id, actor, a mapping concept or value, `invalid base revision`,
/// `invalid plan digest`), `resource_limit` (id over 128 bytes, actor over 256 bytes, more
/// than 10,000 mappings), `operation_rejected` with `temporal_mapping_duplicate` for two
/// mappings of one `concept#path` key (§4 rule 3).
pub fn parse_request(args: &Value, apply: bool) -> Result<TemporalRequest, ToolError> {
    let obj = args
        .as_object()
        .ok_or_else(|| ToolError::invalid_request("MCP arguments must be a JSON object"))?;
    let bundle_path = text(obj, "bundle_path")?.to_owned();
    let id = text(obj, "id")?.to_owned();
    check_id(&id)?;
    let actor = text(obj, "actor")?.to_owned();
    match check_request_actor(&actor) {
        Ok(()) => {}
        Err(RequestActorError::TooLong) => {
            return Err(ToolError::resource_limit("actor exceeds 256 bytes"))
        }
        Err(RequestActorError::Invalid) => {
            return Err(ToolError::invalid_request(
                "actor must be 1 to 256 bytes without surrounding whitespace or control characters",
            ))
        }
    }
    let items: &[Value] = match obj.get("mappings") {
        None | Some(Value::Null) if !apply => &[],
        Some(Value::Array(a)) => a,
        _ => return Err(ToolError::invalid_request("mappings must be an array")),
    };
    if items.len() > MAX_MAPPINGS {
        return Err(ToolError::resource_limit(
            "mappings has more than 10,000 items",
        ));
    }
    let mut mappings = items
        .iter()
        .map(parse_mapping)
        .collect::<Result<Vec<_>, _>>()?;
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for (i, m) in mappings.iter().enumerate() {
        if !keys.insert(m.key()) {
            return Err(failure(
                apply,
                "temporal_mapping_duplicate",
                format!("mappings[{i}] repeats the concept and path of an earlier mapping"),
                &format!("{}.md", m.concept),
            ));
        }
    }
    mappings.sort_by(|a, b| {
        a.concept
            .as_bytes()
            .cmp(b.concept.as_bytes())
            .then(a.path.as_bytes().cmp(b.path.as_bytes()))
    });
    let auth = if apply {
        let revision = text(obj, "base_revision")?;
        if !is_canonical_digest(revision) {
            return Err(ToolError::invalid_request("invalid base revision"));
        }
        let plan_digest = text(obj, "plan_digest")?;
        if !is_canonical_digest(plan_digest) {
            return Err(ToolError::invalid_request("invalid plan digest"));
        }
        Some(Authorisation {
            revision: revision.to_owned(),
            plan_digest: plan_digest.to_owned(),
        })
    } else {
        None
    };
    Ok(TemporalRequest {
        bundle_path,
        id,
        actor,
        mappings,
        auth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"bundle_path": "/x", "id": "up-1", "actor": "agent"})
    }

    #[test]
    fn field_paths_follow_the_section_3_pattern() {
        for ok in [
            "stale_after",
            "usage_window.from",
            "usage_window.to",
            "sources[0].last_modified",
            "sources[12].usage_window.to",
        ] {
            assert!(is_field_path(ok), "{ok}");
        }
        for bad in [
            "",
            "generated.at",
            "sources[].last_modified",
            "sources[a].last_modified",
            "sources[0]last_modified",
            "usage_window",
            "sources[0].usage_window",
            "stale_after ",
        ] {
            assert!(!is_field_path(bad), "{bad}");
        }
    }

    #[test]
    fn mappings_are_sorted_and_duplicates_fail_before_io() {
        let mut a = base();
        a["mappings"] = json!([
            {"concept": "b", "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"},
            {"concept": "a", "path": "usage_window.to", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"},
            {"concept": "a", "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"},
        ]);
        let r = parse_request(&a, false).expect("valid");
        let keys: Vec<String> = r.mappings.iter().map(Mapping::key).collect();
        assert_eq!(
            keys,
            ["a#stale_after", "a#usage_window.to", "b#stale_after"]
        );
        assert_eq!(r.by_concept().len(), 2);
        a["mappings"][1]["concept"] = json!("b");
        a["mappings"][1]["path"] = json!("stale_after");
        let e = parse_request(&a, false).unwrap_err();
        assert_eq!(e.code, "operation_rejected");
        assert_eq!(e.message, "temporal upgrade preview failed");
        assert_eq!(e.diagnostics[0].code, "temporal_mapping_duplicate");
        let e = parse_request(&a, true).unwrap_err();
        assert_eq!(e.message, "temporal upgrade apply failed");
    }

    #[test]
    fn cid_02_invalid_mapping_concepts_are_invalid_requests() {
        for id in [
            "", "/a", "a/", "a//b", "a\\b", "a:b", "file:x", ".hidden", "a/../b", "a/./b", "index",
            "x/log", "a.md", " a", "a ", "a\tb",
        ] {
            let mut a = base();
            a["mappings"] = json!([{"concept": id, "path": "stale_after", "from": "2026-01-02", "to": "2026-01-02T00:00:00Z"}]);
            let e = parse_request(&a, false).unwrap_err();
            assert_eq!(e.code, "invalid_request", "{id:?}");
            assert_eq!(e.message, "invalid temporal mapping");
            assert!(e.diagnostics.is_empty());
        }
    }

    #[test]
    fn tmp_13_apply_fields_are_checked_at_runtime() {
        let mut a = base();
        a["mappings"] = json!([]);
        a["base_revision"] = json!("abc");
        a["plan_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
        let e = parse_request(&a, true).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("invalid_request", "invalid base revision")
        );
        a["base_revision"] = json!(format!("sha256:{}", "1".repeat(64)));
        a["plan_digest"] = json!("sha256:ABC");
        let e = parse_request(&a, true).unwrap_err();
        assert_eq!(e.message, "invalid plan digest");
        a["plan_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
        let r = parse_request(&a, true).expect("valid");
        assert!(r.auth.is_some());
        // id and actor rules.
        for (k, v, code) in [
            ("id", " x", "invalid_request"),
            ("id", "a\u{1}", "invalid_request"),
            ("actor", "x ", "invalid_request"),
        ] {
            let mut b = a.clone();
            b[k] = json!(v);
            assert_eq!(parse_request(&b, true).unwrap_err().code, code, "{k}={v:?}");
        }
        let mut b = a.clone();
        b["id"] = json!("é".repeat(65));
        assert_eq!(parse_request(&b, true).unwrap_err().code, "resource_limit");
    }
}
