//! Frontmatter rules of the migration (spec/migration.md §6.3 rule 3, §6.4 rule 4, §6.5,
//! §6.7 rules 3–4), done with the lossless editor ([`crate::plan::edit::Frontmatter`]).
//! Pure.

use super::citations::{Blocker, ProjectedSource};
use super::request::{ConflictPolicy, MigrationRequest, TimestampPolicy};
use crate::okf::temporal::parse_offset_datetime;
use crate::okf::yaml::{Node, NodeKind};
use crate::plan::edit::{Frontmatter, NewValue, Scalar};

fn blocker(
    code: &'static str,
    span: (usize, usize),
    message: &str,
    action: Option<&'static str>,
) -> Blocker {
    Blocker {
        code,
        start: span.0,
        end: span.1,
        message: message.to_owned(),
        action,
    }
}

/// The top-level value of `key` in `root`, not following aliases (an alias is
/// `alias_provenance`).
fn top<'a>(root: Option<&'a Node>, key: &str) -> Option<&'a Node> {
    root?
        .entries()?
        .iter()
        .find(|(k, _)| k.scalar_text() == Some(key))
        .map(|(_, v)| v)
}

/// The text of a scalar that parses as an offset datetime (a string or timestamp scalar).
fn instant_text(node: &Node) -> Option<&str> {
    match &node.kind {
        NodeKind::Scalar { text, .. } if !text.is_empty() => {
            parse_offset_datetime(text).map(|_| text.as_str())
        }
        _ => None,
    }
}

fn same_instant(a: &str, b: &str) -> bool {
    match (parse_offset_datetime(a), parse_offset_datetime(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Applies §6.5 (`timestamp` → `generated`) to a concept's frontmatter. `fm_offset` is the
/// frontmatter's offset in the document (for blocker spans); `explicit_at` the request's
/// `generated_at` for this document.
///
/// # Errors
/// The §6.5 blockers; the frontmatter is then in an unspecified state and must be dropped.
pub fn migrate_generated(
    fm: &mut Frontmatter,
    fm_offset: usize,
    req: &MigrationRequest,
    explicit_at: Option<&str>,
) -> Result<(), Vec<Blocker>> {
    let yaml = fm.yaml().clone();
    let root = yaml.root.as_ref();
    let span = |n: &Node| (fm_offset + n.span.start, fm_offset + n.span.end);
    let timestamp = top(root, "timestamp");
    let generated = top(root, "generated");
    let ts_text = match timestamp {
        None => None,
        Some(n) if matches!(n.kind, NodeKind::Alias { .. }) => {
            return Err(vec![blocker(
                "alias_provenance",
                span(n),
                "the legacy timestamp is a YAML alias",
                None,
            )])
        }
        Some(n) => match instant_text(n) {
            Some(t) => Some(t.to_owned()),
            None => {
                return Err(vec![blocker(
                    "invalid_legacy_timestamp",
                    span(n),
                    "the legacy timestamp is not a datetime with an explicit offset",
                    None,
                )])
            }
        },
    };
    let need_by = |fm_span: (usize, usize)| {
        vec![blocker(
            "missing_explicit_generated_by",
            fm_span,
            "a generated block must be created but generated_by is empty",
            Some("provide_generated_by"),
        )]
    };
    let whole = (fm_offset, fm_offset + fm.text().len());
    match generated {
        None => {
            let at = match (&ts_text, explicit_at) {
                (None, None) => return Ok(()),
                (None, Some(at)) => at.to_owned(),
                (Some(ts), Some(at)) if !same_instant(ts, at) => {
                    return Err(vec![blocker(
                        "explicit_generated_at_mismatch",
                        timestamp.map_or(whole, span),
                        "generated_at names another instant than the legacy timestamp",
                        None,
                    )])
                }
                (Some(ts), _) => ts.clone(),
            };
            if req.generated_by.is_empty() {
                return Err(need_by(timestamp.map_or(whole, span)));
            }
            let value = NewValue::BlockMap(vec![
                ("by".to_owned(), NewValue::str(&req.generated_by)),
                ("at".to_owned(), NewValue::Scalar(Scalar::Plain(at))),
            ]);
            fm.set(&[], "generated", &value).map_err(|e| {
                vec![blocker(
                    "migration_document_invalid",
                    whole,
                    &format!("the frontmatter cannot be edited losslessly ({})", e.code()),
                    None,
                )]
            })?;
        }
        Some(g) => {
            let g_span = span(g);
            let NodeKind::Mapping { .. } = &g.kind else {
                return Err(vec![blocker(
                    "generated_not_mapping",
                    g_span,
                    "generated is not a mapping",
                    None,
                )]);
            };
            if g.get("by").and_then(Node::as_str).is_none_or(str::is_empty) {
                return Err(vec![blocker(
                    "missing_generated_by",
                    g_span,
                    "generated.by is missing or empty",
                    None,
                )]);
            }
            let Some(at_node) = g.get("at") else {
                return Err(vec![blocker(
                    "missing_generated_at",
                    g_span,
                    "generated.at is missing",
                    None,
                )]);
            };
            let Some(at) = instant_text(at_node).map(str::to_owned) else {
                return Err(vec![blocker(
                    "invalid_generated_at",
                    span(at_node),
                    "generated.at is not a datetime with an explicit offset",
                    None,
                )]);
            };
            let mut effective = at.clone();
            if let Some(ts) = &ts_text {
                if !same_instant(ts, &at) {
                    match req.conflict_policy {
                        ConflictPolicy::Reject => {
                            return Err(vec![blocker(
                                "timestamp_generated_conflict",
                                timestamp.map_or(g_span, span),
                                "timestamp and generated.at name different instants",
                                None,
                            )])
                        }
                        ConflictPolicy::UseGenerated => {}
                        ConflictPolicy::UseTimestamp => {
                            fm.set(
                                &[crate::plan::edit::Seg::Key("generated")],
                                "at",
                                &NewValue::Scalar(Scalar::Plain(ts.clone())),
                            )
                            .map_err(|e| {
                                vec![blocker(
                                    "migration_document_invalid",
                                    g_span,
                                    &format!(
                                        "generated.at cannot be edited losslessly ({})",
                                        e.code()
                                    ),
                                    None,
                                )]
                            })?;
                            effective = ts.clone();
                        }
                    }
                }
            }
            if let Some(x) = explicit_at {
                if !same_instant(x, &effective) {
                    return Err(vec![blocker(
                        "explicit_generated_at_mismatch",
                        span(at_node),
                        "generated_at names another instant than generated.at",
                        None,
                    )]);
                }
            }
        }
    }
    if ts_text.is_some() && req.timestamp_policy == TimestampPolicy::RemoveAfterCopy {
        fm.remove(&[], "timestamp").map_err(|e| {
            vec![blocker(
                "migration_document_invalid",
                whole,
                &format!("timestamp cannot be removed losslessly ({})", e.code()),
                None,
            )]
        })?;
    }
    Ok(())
}

/// Inserts `sources` (§6.3 rule 3) as a block sequence of dash-alone mappings.
///
/// # Errors
/// `migration_document_invalid` when the editor refuses.
pub fn insert_sources(
    fm: &mut Frontmatter,
    fm_offset: usize,
    sources: &[ProjectedSource],
) -> Result<(), Vec<Blocker>> {
    if sources.is_empty() {
        return Ok(());
    }
    let items = sources
        .iter()
        .map(|s| {
            let mut m = vec![("id".to_owned(), NewValue::str(&s.id))];
            if !s.title.is_empty() {
                m.push(("title".to_owned(), NewValue::str(&s.title)));
            }
            if !s.resource.is_empty() {
                m.push(("resource".to_owned(), NewValue::str(&s.resource)));
            }
            NewValue::BlockMap(m)
        })
        .collect();
    fm.set(&[], "sources", &NewValue::BlockSeq(items))
        .map(|_| ())
        .map_err(|e| {
            vec![blocker(
                "migration_document_invalid",
                (fm_offset, fm_offset + fm.text().len()),
                &format!("sources cannot be inserted losslessly ({})", e.code()),
                None,
            )]
        })
}

/// Sets the root `okf_version` to `"0.2"` (§6.4 rule 4).
///
/// # Errors
/// `migration_document_invalid` when the editor refuses.
pub fn declare_02(fm: &mut Frontmatter, fm_offset: usize) -> Result<(), Vec<Blocker>> {
    fm.set(
        &[],
        "okf_version",
        &NewValue::Scalar(Scalar::Quoted("0.2".to_owned())),
    )
    .map(|_| ())
    .map_err(|e| {
        vec![blocker(
            "migration_document_invalid",
            (fm_offset, fm_offset + fm.text().len()),
            &format!("okf_version cannot be set losslessly ({})", e.code()),
            None,
        )]
    })
}

/// The frontmatter `sources` items of a concept as [`ProjectedSource`]s (absent members empty).
#[must_use]
pub fn sources_of(root: Option<&Node>) -> Vec<ProjectedSource> {
    let Some(items) = root.and_then(|r| r.get("sources")).and_then(Node::items) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|i| {
            let f = |k: &str| {
                i.get(k)
                    .and_then(Node::scalar_text)
                    .unwrap_or("")
                    .to_owned()
            };
            ProjectedSource {
                id: f("id"),
                title: f("title"),
                resource: f("resource"),
            }
        })
        .collect()
}

/// Target replay of a concept's frontmatter (§6.7 rules 3–4).
#[must_use]
pub fn replay_generated(
    root: Option<&Node>,
    fm_offset: usize,
    req: &MigrationRequest,
    explicit_at: Option<&str>,
) -> Vec<Blocker> {
    let span = |n: &Node| (fm_offset + n.span.start, fm_offset + n.span.end);
    let mismatch =
        |s: (usize, usize), m: &str| vec![blocker("migration_replay_mismatch", s, m, None)];
    let generated = top(root, "generated");
    let timestamp = top(root, "timestamp");
    let mut effective: Option<String> = None;
    if let Some(g) = generated {
        let by_ok = g
            .get("by")
            .and_then(Node::as_str)
            .is_some_and(|s| !s.is_empty());
        let at = g.get("at").and_then(instant_text);
        if !matches!(g.kind, NodeKind::Mapping { .. }) || !by_ok || at.is_none() {
            return mismatch(span(g), "generated is not a valid {by, at} block");
        }
        effective = at.map(str::to_owned);
        if let (Some(x), Some(e)) = (explicit_at, &effective) {
            if !same_instant(x, e) {
                return mismatch(span(g), "generated.at differs from generated_at");
            }
        }
    } else if explicit_at.is_some() {
        return mismatch(
            (fm_offset, fm_offset),
            "generated_at names a concept without generated",
        );
    }
    if let Some(t) = timestamp {
        if req.timestamp_policy != TimestampPolicy::Preserve {
            return mismatch(
                span(t),
                "a legacy timestamp remains although timestamp_policy is remove_after_copy",
            );
        }
        let same = match (instant_text(t), &effective) {
            (Some(ts), Some(e)) => same_instant(ts, e),
            (_, None) => false,
            (None, _) => false,
        };
        if !same && req.conflict_policy != ConflictPolicy::UseGenerated {
            return mismatch(
                span(t),
                "the legacy timestamp names another instant than generated.at",
            );
        }
    }
    Vec::new()
}
