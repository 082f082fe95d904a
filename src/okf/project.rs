//! Read projections: cards, list entries and the `read_concept` projection
//! (spec/surface.md §12.1, §12.3, §12.4; spec/temporal.md §8; OKF 0.2 §5, §10).
//!
//! Pure functions over a parsed document, the temporal profile and an optional `as_of`.
//! Values invalid under the profile project as `null`, never reinterpreted; invalid
//! `verified` events, sources without a valid `resource` and malformed parameters are left
//! out. Member order follows the spec tables.

use crate::okf::actor::is_document_actor;
use crate::okf::bundle::Doc;
use crate::okf::markdown;
use crate::okf::temporal::{parse_offset_datetime, Profile};
use crate::okf::yaml::{Node, Resolved};
use serde_json::{json, Map, Value};
use std::cmp::Ordering;

/// `type` value of an Attested Computation concept (OKF 0.2 §10).
pub const ATTESTED_COMPUTATION: &str = "Attested Computation";

/// The three valid `status` values (OKF 0.2 §5.4).
pub const STATUSES: [&str; 3] = ["draft", "stable", "deprecated"];

/// A top-level value, with YAML null counted as absent (spec/temporal.md §3).
#[must_use]
pub fn field<'n>(root: Option<&'n Node>, key: &str) -> Option<&'n Node> {
    root.and_then(|r| r.get(key)).filter(|n| !n.is_null())
}

/// A non-empty string value, else `None`.
#[must_use]
pub fn non_empty_str(node: Option<&Node>) -> Option<&str> {
    node.and_then(Node::as_str).filter(|s| !s.is_empty())
}

/// A non-blank string value (not only whitespace), else `None` (`resource` fields).
pub fn non_blank_str(node: Option<&Node>) -> Option<&str> {
    node.and_then(Node::as_str).filter(|s| !s.trim().is_empty())
}

/// `status_state` (spec/surface.md §12.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusState {
    pub present: bool,
    pub valid: bool,
    pub raw: Option<String>,
    pub effective: Option<String>,
}

impl StatusState {
    /// `{present, valid, raw, effective}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({"present": self.present, "valid": self.valid, "raw": self.raw, "effective": self.effective})
    }
}

/// Reads `status`: absent → `{false, true, null, "stable"}`; valid → `effective = raw`;
/// invalid → `{true, false, raw, null}` (`raw` null for a non-string value).
#[must_use]
pub fn status_state(root: Option<&Node>) -> StatusState {
    match field(root, "status") {
        None => StatusState {
            present: false,
            valid: true,
            raw: None,
            effective: Some("stable".into()),
        },
        Some(n) => {
            let raw = n.as_str().map(str::to_owned);
            let valid = raw.as_deref().is_some_and(|s| STATUSES.contains(&s));
            StatusState {
                present: true,
                valid,
                effective: if valid { raw.clone() } else { None },
                raw,
            }
        }
    }
}

/// A valid verification event `(by, at)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub by: String,
    pub at: String,
}

/// Whether an event mapping is valid: `by` a document actor, `at` an offset datetime.
#[must_use]
pub fn valid_event(n: &Node) -> Option<Event> {
    n.entries()?;
    let by = n.get("by")?.as_str().filter(|s| is_document_actor(s))?;
    let at = n
        .get("at")?
        .as_str()
        .filter(|s| parse_offset_datetime(s).is_some())?;
    Some(Event {
        by: by.to_owned(),
        at: at.to_owned(),
    })
}

/// The events of `verified` (a bare mapping is a one-element list, OKF 0.2 §5.2), in order.
#[must_use]
pub fn verified_items(root: Option<&Node>) -> Vec<&Node> {
    match field(root, "verified") {
        None => Vec::new(),
        Some(n) if n.entries().is_some() => vec![n.deref_alias()],
        Some(n) => n
            .items()
            .map(|i| i.iter().map(Node::deref_alias).collect())
            .unwrap_or_default(),
    }
}

/// Valid verification events only (spec/surface.md §12.4 `verified`).
#[must_use]
pub fn valid_events(root: Option<&Node>) -> Vec<Event> {
    verified_items(root)
        .into_iter()
        .filter_map(valid_event)
        .collect()
}

/// Trust tier from valid events (OKF 0.2 §5.3).
#[must_use]
pub fn trust(events: &[Event]) -> &'static str {
    if events.iter().any(|e| e.by.starts_with("human:")) {
        "human-reviewed"
    } else if events.is_empty() {
        "unverified"
    } else {
        "machine-confirmed"
    }
}

/// A temporal scalar valid under `profile`, verbatim.
#[must_use]
pub fn temporal_value(node: Option<&Node>, profile: Profile) -> Option<&str> {
    node.filter(|n| !n.is_null())
        .and_then(Node::as_str)
        .filter(|s| profile.is_valid(s))
}

/// `stale_after` verbatim when valid under the profile.
#[must_use]
pub fn stale_after(root: Option<&Node>, profile: Profile) -> Option<&str> {
    temporal_value(field(root, "stale_after"), profile)
}

/// Staleness (spec/temporal.md §11 rule 6, which replaces the "no valid `stale_after`"
/// column of §8 rule 4): `None` without `as_of`; with `as_of`, `false` when `stale_after` is
/// absent (or YAML null), `None` when it is present but invalid under the profile, else
/// `as_of >= stale_after` (dates as strings, instants as instants).
#[must_use]
pub fn stale(root: Option<&Node>, profile: Profile, as_of: Option<&str>) -> Option<bool> {
    let as_of = as_of?;
    let Some(node) = field(root, "stale_after") else {
        return Some(false);
    };
    let s = temporal_value(Some(node), profile)?;
    profile
        .compare(as_of, s)
        .map(|o| matches!(o, Ordering::Greater | Ordering::Equal))
}

/// A `usage_window` valid under the profile: both ends valid and `from <= to`.
#[must_use]
pub fn usage_window(node: Option<&Node>, profile: Profile) -> Option<(String, String)> {
    let n = node.filter(|n| !n.is_null())?;
    n.entries()?;
    let from = temporal_value(n.get("from"), profile)?;
    let to = temporal_value(n.get("to"), profile)?;
    match profile.compare(from, to)? {
        Ordering::Greater => None,
        _ => Some((from.to_owned(), to.to_owned())),
    }
}

fn window_json(w: Option<(String, String)>) -> Value {
    w.map_or(Value::Null, |(f, t)| json!({"from": f, "to": t}))
}

/// Whether a node is a non-negative integer scalar (`usage_count`, spec/surface.md §13.2).
#[must_use]
pub fn non_negative_int(n: &Node) -> Option<u64> {
    match n.resolved()? {
        Resolved::Int(i) => u64::try_from(i).ok(),
        _ => None,
    }
}

/// The source items that are mappings with a non-blank string `resource`.
#[must_use]
pub fn valid_sources(root: Option<&Node>) -> Vec<&Node> {
    field(root, "sources")
        .and_then(Node::items)
        .map(|items| {
            items
                .iter()
                .map(Node::deref_alias)
                .filter(|i| i.entries().is_some() && non_blank_str(i.get("resource")).is_some())
                .collect()
        })
        .unwrap_or_default()
}

/// One `projection.sources` item (spec/surface.md §12.4).
fn source_json(item: &Node, profile: Profile) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(non_empty_str(item.get("id"))));
    m.insert(
        "resource".into(),
        json!(non_blank_str(item.get("resource"))),
    );
    m.insert("title".into(), json!(non_empty_str(item.get("title"))));
    m.insert("author".into(), json!(non_empty_str(item.get("author"))));
    m.insert(
        "usage_count".into(),
        json!(item.get("usage_count").and_then(non_negative_int)),
    );
    m.insert(
        "last_modified".into(),
        json!(temporal_value(item.get("last_modified"), profile)),
    );
    m.insert(
        "usage_window".into(),
        window_json(usage_window(item.get("usage_window"), profile)),
    );
    Value::Object(m)
}

/// A legacy `timestamp` usable as `generated_at`: a string parsing as an offset datetime.
#[must_use]
pub fn legacy_timestamp(root: Option<&Node>) -> Option<&str> {
    field(root, "timestamp")
        .and_then(Node::as_str)
        .filter(|s| parse_offset_datetime(s).is_some())
}

/// `generated.at` when `generated` is a mapping and `at` is an offset datetime.
#[must_use]
pub fn generated_at(root: Option<&Node>) -> Option<&str> {
    let g = field(root, "generated")?;
    g.entries()?;
    g.get("at")
        .and_then(Node::as_str)
        .filter(|s| parse_offset_datetime(s).is_some())
}

/// The view of one parsed concept used by every projection.
struct View<'d> {
    root: Option<&'d Node>,
    body: &'d str,
}

fn view<'d>(doc: &'d Doc<'_>) -> Option<View<'d>> {
    let p = doc.parsed().as_ref().ok()?;
    Some(View {
        root: p.root(),
        body: p.split.body_text(),
    })
}

/// Entries of the legacy `# Citations` sections of a body.
fn citation_entries(body: &str) -> Option<usize> {
    let s = markdown::citations_sections(body);
    if s.is_empty() {
        None
    } else {
        Some(s.iter().map(|c| c.entries).sum())
    }
}

/// Card members of spec/surface.md §12.1, in order, for a parsed concept.
fn card_map(
    id: &str,
    path: &str,
    v: &View<'_>,
    profile: Profile,
    as_of: Option<&str>,
) -> Map<String, Value> {
    let root = v.root;
    let ss = status_state(root);
    let events = valid_events(root);
    let sa = stale_after(root, profile);
    let tags: Vec<&str> = field(root, "tags")
        .and_then(Node::items)
        .map(|i| i.iter().filter_map(Node::as_str).collect())
        .unwrap_or_default();
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("path".into(), json!(path));
    m.insert("type".into(), json!(non_empty_str(field(root, "type"))));
    m.insert("title".into(), json!(non_empty_str(field(root, "title"))));
    m.insert(
        "description".into(),
        json!(non_empty_str(field(root, "description"))),
    );
    m.insert("tags".into(), json!(tags));
    m.insert("status".into(), json!(ss.effective));
    m.insert("trust".into(), json!(trust(&events)));
    m.insert("stale".into(), json!(stale(root, profile, as_of)));
    m.insert("stale_after".into(), json!(sa));
    m.insert("status_state".into(), ss.to_json());
    m
}

/// The card of a concept (spec/surface.md §12.1); `None` when the document cannot be parsed.
#[must_use]
pub fn card(id: &str, doc: &Doc<'_>, profile: Profile, as_of: Option<&str>) -> Option<Value> {
    let v = view(doc)?;
    Some(Value::Object(card_map(
        id,
        &doc.file.path,
        &v,
        profile,
        as_of,
    )))
}

/// A `list_concepts` entry (spec/surface.md §12.3), including the fixed shape of an entry
/// whose document cannot be parsed (R37).
#[must_use]
pub fn list_entry(id: &str, doc: &Doc<'_>, profile: Profile, as_of: Option<&str>) -> Value {
    let Some(v) = view(doc) else {
        let code = doc.parsed().as_ref().err().map(|f| f.code());
        return json!({
            "id": id, "path": doc.file.path, "type": null, "title": null, "description": null,
            "tags": [], "status": null, "trust": "unverified", "stale": null, "stale_after": null,
            "status_state": null, "generated_at": null, "source_count": 0,
            "computation": {"present": false, "runtime": null, "executor": null, "attester": null},
            "legacy_derived": {"generated": false, "citations": false},
            "parse_error": code,
        });
    };
    let root = v.root;
    let mut m = card_map(id, &doc.file.path, &v, profile, as_of);
    let (gen_at, gen_legacy) = match generated_at(root) {
        Some(a) => (Some(a), false),
        None if field(root, "generated").is_none() => match legacy_timestamp(root) {
            Some(t) => (Some(t), true),
            None => (None, false),
        },
        None => (None, false),
    };
    let (source_count, cit_legacy) = if field(root, "sources").is_some() {
        (valid_sources(root).len(), false)
    } else {
        match citation_entries(v.body) {
            Some(n) => (n, true),
            None => (0, false),
        }
    };
    let is_ac = non_empty_str(field(root, "type")) == Some(ATTESTED_COMPUTATION);
    let resource_of = |k: &str| {
        if is_ac {
            field(root, k).and_then(|n| non_blank_str(n.get("resource")))
        } else {
            None
        }
    };
    m.insert("generated_at".into(), json!(gen_at));
    m.insert("source_count".into(), json!(source_count));
    m.insert(
        "computation".into(),
        json!({
            "present": is_ac,
            "runtime": if is_ac { non_empty_str(field(root, "runtime")) } else { None },
            "executor": resource_of("executor"),
            "attester": resource_of("attester"),
        }),
    );
    m.insert(
        "legacy_derived".into(),
        json!({"generated": gen_legacy, "citations": cit_legacy}),
    );
    m.insert("parse_error".into(), Value::Null);
    Value::Object(m)
}

/// Footnote attributions grouped by normalised label in first-occurrence order, joined to
/// `sources[].id` (spec/surface.md §12.4): `(label, source_id, count)`.
#[must_use]
pub fn attributions(root: Option<&Node>, body: &str) -> Vec<(String, Option<String>, usize)> {
    let ids: Vec<&str> = valid_sources(root)
        .into_iter()
        .filter_map(|s| non_empty_str(s.get("id")))
        .collect();
    let mut groups: Vec<(String, String, usize)> = Vec::new();
    for label in markdown::footnote_references(body) {
        let norm = markdown::normalise_label(&label);
        match groups.iter_mut().find(|g| g.1 == norm) {
            Some(g) => g.2 += 1,
            None => groups.push((label, norm, 1)),
        }
    }
    groups
        .into_iter()
        .map(|(label, norm, count)| {
            let sid = ids
                .iter()
                .find(|id| markdown::normalise_label(id) == norm)
                .map(|s| (*s).to_owned());
            (label, sid, count)
        })
        .collect()
}

/// `projection.computation` (spec/surface.md §12.4).
fn computation_json(root: Option<&Node>, body: &str) -> Value {
    let is_ac = non_empty_str(field(root, "type")) == Some(ATTESTED_COMPUTATION);
    if !is_ac {
        return json!({"present": false, "runtime": null, "parameters": [], "computation_path": null,
            "inline": false, "executor": null, "attester": null});
    }
    let parameters: Vec<Value> = field(root, "parameters")
        .and_then(Node::items)
        .map(|items| {
            items
                .iter()
                .filter_map(|p| {
                    let name = non_empty_str(p.get("name"))?;
                    let ty = non_empty_str(p.get("type"))?;
                    let Some(Resolved::Bool(req)) = p.get("required")?.resolved() else {
                        return None;
                    };
                    Some(json!({"name": name, "type": ty, "required": req}))
                })
                .collect()
        })
        .unwrap_or_default();
    let executor = field(root, "executor").and_then(|e| {
        let r = non_blank_str(e.get("resource"))?;
        let receipt: Vec<&str> = e
            .get("receipt")
            .and_then(Node::items)
            .map(|i| i.iter().filter_map(Node::as_str).collect())
            .unwrap_or_default();
        Some(json!({"resource": r, "receipt": receipt}))
    });
    let attester = field(root, "attester")
        .and_then(|a| non_blank_str(a.get("resource")))
        .map(|r| json!({"resource": r}));
    json!({
        "present": true,
        "runtime": non_empty_str(field(root, "runtime")),
        "parameters": parameters,
        "computation_path": non_blank_str(field(root, "computation")),
        "inline": markdown::has_computation_fence(body),
        "executor": executor,
        "attester": attester,
    })
}

/// The `projection` and `legacy_fallback` objects of `read_concept` (spec/surface.md §12.4);
/// `None` when the document cannot be parsed.
#[must_use]
pub fn read_projection(doc: &Doc<'_>, profile: Profile) -> Option<(Value, Value)> {
    let v = view(doc)?;
    let root = v.root;
    let ss = status_state(root);
    let events = valid_events(root);
    let tags: Vec<&str> = field(root, "tags")
        .and_then(Node::items)
        .map(|i| i.iter().filter_map(Node::as_str).collect())
        .unwrap_or_default();
    let sources: Vec<Value> = valid_sources(root)
        .into_iter()
        .map(|s| source_json(s, profile))
        .collect();
    let attributions: Vec<Value> = attributions(root, v.body)
        .into_iter()
        .map(|(label, sid, count)| json!({"label": label, "source_id": sid, "count": count}))
        .collect();
    let generated = field(root, "generated").and_then(|g| {
        g.entries()?;
        let by = g.get("by")?.as_str().filter(|s| is_document_actor(s))?;
        let at = g
            .get("at")
            .and_then(Node::as_str)
            .filter(|s| parse_offset_datetime(s).is_some());
        Some(json!({"by": by, "at": at}))
    });
    let verified: Vec<Value> = events
        .iter()
        .map(|e| json!({"by": e.by, "at": e.at}))
        .collect();
    let mut p = Map::new();
    p.insert("type".into(), json!(non_empty_str(field(root, "type"))));
    p.insert("title".into(), json!(non_empty_str(field(root, "title"))));
    p.insert(
        "description".into(),
        json!(non_empty_str(field(root, "description"))),
    );
    p.insert(
        "resource".into(),
        json!(non_blank_str(field(root, "resource"))),
    );
    p.insert("tags".into(), json!(tags));
    p.insert("sources".into(), json!(sources));
    p.insert("attributions".into(), json!(attributions));
    p.insert(
        "usage_window".into(),
        window_json(usage_window(field(root, "usage_window"), profile)),
    );
    p.insert("generated".into(), generated.unwrap_or(Value::Null));
    p.insert("verified".into(), json!(verified));
    p.insert("trust".into(), json!(trust(&events)));
    p.insert("status".into(), json!(ss.effective));
    p.insert("status_state".into(), ss.to_json());
    p.insert("stale_after".into(), json!(stale_after(root, profile)));
    p.insert("computation".into(), computation_json(root, v.body));
    let legacy = json!({
        "generated_from_timestamp": field(root, "generated").is_none() && legacy_timestamp(root).is_some(),
        "sources_from_citations": field(root, "sources").is_none() && citation_entries(v.body).is_some(),
    });
    Some((Value::Object(p), legacy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::okf::bundle::parse_bundle;
    use crate::okf::capture::Capture;

    fn with_doc<R>(text: &str, f: impl FnOnce(&Doc<'_>) -> R) -> R {
        let c = Capture::from_files([("c.md".to_owned(), text.as_bytes().to_vec())]);
        let b = parse_bundle(&c).unwrap();
        f(&b.docs[0])
    }

    #[test]
    fn trust_tiers_and_bare_mapping() {
        let t = |fm: &str| {
            with_doc(&format!("---\ntype: x\n{fm}---\n"), |d| {
                card("c", d, Profile::Date, None).unwrap()["trust"].clone()
            })
        };
        assert_eq!(t(""), json!("unverified"));
        assert_eq!(
            t("verified: {by: process:x, at: 2026-01-02T03:04:05Z}\n"),
            json!("machine-confirmed")
        );
        assert_eq!(
            t("verified:\n  - {by: agent/1, at: 2026-01-02T03:04:05Z}\n  - {by: human:a, at: 2026-01-02T03:04:05Z}\n"),
            json!("human-reviewed")
        );
        // An event without a valid `at` does not count.
        assert_eq!(
            t("verified: {by: human:a, at: 2026-01-02}\n"),
            json!("unverified")
        );
        assert_eq!(
            t("verified: {by: reviewer, at: 2026-01-02T03:04:05Z}\n"),
            json!("unverified")
        );
    }

    #[test]
    fn staleness_per_profile() {
        // spec/temporal.md §11 rule 6 (PRF-04 as changed by Phase 5).
        let y = |t: &str| crate::okf::yaml::parse(t).expect("yaml");
        let st = |t: &str, p: Profile, as_of: Option<&str>| stale(y(t).root.as_ref(), p, as_of);
        let (d, i) = (Profile::Date, Profile::Instant);
        assert_eq!(st("stale_after: 2026-01-02\n", d, None), None);
        assert_eq!(
            st("stale_after: 2026-01-02\n", d, Some("2026-01-02")),
            Some(true)
        );
        assert_eq!(
            st("stale_after: 2026-01-02\n", d, Some("2026-01-01")),
            Some(false)
        );
        assert_eq!(
            st(
                "stale_after: 2026-01-02T07:00:00+07:00\n",
                i,
                Some("2026-01-02T00:00:00Z")
            ),
            Some(true)
        );
        for p in [d, i] {
            let as_of = Some(if p == d {
                "2026-01-01"
            } else {
                "2026-01-01T00:00:00Z"
            });
            // Absent (or null) → false under every profile.
            assert_eq!(st("type: T\n", p, as_of), Some(false));
            assert_eq!(st("stale_after: ~\n", p, as_of), Some(false));
            assert_eq!(st("type: T\n", p, None), None);
            // Present but invalid under the profile → null.
            assert_eq!(st("stale_after: soon\n", p, as_of), None);
        }
        assert_eq!(
            st("stale_after: 2026-01-02T00:00:00Z\n", d, Some("2026-01-03")),
            None
        );
        assert_eq!(
            st("stale_after: 2026-01-02\n", i, Some("2026-01-03T00:00:00Z")),
            None
        );
    }

    #[test]
    fn status_states() {
        with_doc("---\nstatus: archived\n---\n", |d| {
            let c = card("c", d, Profile::Date, None).unwrap();
            assert_eq!(c["status"], Value::Null);
            assert_eq!(
                c["status_state"],
                json!({"present": true, "valid": false, "raw": "archived", "effective": null})
            );
        });
        with_doc("---\nstatus: draft\n---\n", |d| {
            assert_eq!(
                card("c", d, Profile::Date, None).unwrap()["status"],
                "draft"
            );
        });
    }

    #[test]
    fn sources_projection_and_attributions() {
        let text = "---\nsources:\n  - id: Spec One\n    resource: https://x\n    usage_count: -1\n    last_modified: 2026-01-02T00:00:00Z\n    usage_window: {from: 2026-01-01, to: 2026-01-31}\n  - id: nores\n  - title: t\n    resource: ' '\n  - id: b\n    resource: r\n    usage_count: 5\n    last_modified: 2026-01-02\n---\nA[^spec  one] B[^Spec One] C[^zzz].\n\n[^spec one]: def\n";
        with_doc(text, |d| {
            let (p, l) = read_projection(d, Profile::Date).unwrap();
            let s = p["sources"].as_array().unwrap();
            assert_eq!(s.len(), 2);
            assert_eq!(s[0]["usage_count"], Value::Null);
            assert_eq!(s[0]["last_modified"], Value::Null);
            assert_eq!(
                s[0]["usage_window"],
                json!({"from": "2026-01-01", "to": "2026-01-31"})
            );
            assert_eq!(s[1]["usage_count"], json!(5));
            assert_eq!(s[1]["last_modified"], json!("2026-01-02"));
            assert_eq!(
                p["attributions"],
                json!([
                    {"label": "spec  one", "source_id": "Spec One", "count": 2},
                    {"label": "zzz", "source_id": null, "count": 1}
                ])
            );
            assert_eq!(
                l,
                json!({"generated_from_timestamp": false, "sources_from_citations": false})
            );
        });
    }

    #[test]
    fn generated_projection() {
        let g = |fm: &str| {
            with_doc(&format!("---\n{fm}---\n"), |d| {
                read_projection(d, Profile::Date).unwrap().0["generated"].clone()
            })
        };
        assert_eq!(g(""), Value::Null);
        assert_eq!(g("generated: x\n"), Value::Null);
        assert_eq!(g("generated: {by: nobody}\n"), Value::Null);
        assert_eq!(
            g("generated: {by: a/1}\n"),
            json!({"by": "a/1", "at": null})
        );
        assert_eq!(
            g("generated: {by: a/1, at: '2026-01-02T03:04:05+00:00'}\n"),
            json!({"by": "a/1", "at": "2026-01-02T03:04:05+00:00"})
        );
    }

    #[test]
    fn legacy_fallbacks_in_list_entries() {
        let text = "---\ntype: x\ntimestamp: '2026-05-28T22:43:59+00:00'\n---\nClaim [1].\n\n# Citations\n\n[1] a\n[2] b\n";
        with_doc(text, |d| {
            let e = list_entry("c", d, Profile::Date, None);
            assert_eq!(e["generated_at"], "2026-05-28T22:43:59+00:00");
            assert_eq!(e["source_count"], 2);
            assert_eq!(
                e["legacy_derived"],
                json!({"generated": true, "citations": true})
            );
        });
    }

    #[test]
    fn computation_projection() {
        let text = "---\ntype: Attested Computation\nruntime: bigquery\nparameters:\n  - {name: year, type: integer, required: true}\n  - {name: bad, type: integer, required: 'yes'}\nexecutor: {resource: run.md, receipt: [job_id]}\nattester: {resource: a.py}\n---\n# Computation\n\n    SELECT 1\n";
        with_doc(text, |d| {
            let (p, _) = read_projection(d, Profile::Date).unwrap();
            assert_eq!(
                p["computation"],
                json!({"present": true, "runtime": "bigquery",
                    "parameters": [{"name": "year", "type": "integer", "required": true}],
                    "computation_path": null, "inline": true,
                    "executor": {"resource": "run.md", "receipt": ["job_id"]},
                    "attester": {"resource": "a.py"}})
            );
            let e = list_entry("c", d, Profile::Date, None);
            assert_eq!(
                e["computation"],
                json!({"present": true, "runtime": "bigquery", "executor": "run.md", "attester": "a.py"})
            );
        });
    }
}
