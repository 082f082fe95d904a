//! The concept-patch planner (spec/concept-patch.md §3, §5, §6): a capture and a validated
//! request in, a deterministic plan out. Pure: no I/O, only the cancellation flag is read.
//!
//! Every operation edits the current (overlay) bytes of one document through the lossless
//! editor ([`crate::plan::edit`]); documents are re-parsed after every operation. After all
//! operations the whole staged bundle is validated strictly against OKF 0.2 and the blocking
//! rules of §3 rule 3 ("do no harm") decide between `applicable`, `noop` and `rejected`.

use crate::cancel::Cancel;
use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::okf::bundle::Bundle;
use crate::okf::capture::Capture;
use crate::okf::computation::{self, AttestedComputation};
use crate::okf::temporal::parse_offset_datetime;
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::Target;
use crate::okf::yaml::{Node, NodeKind, Style};
use crate::plan::computation::put_computation_frontmatter;
use crate::plan::diff::Diff;
use crate::plan::doc_edit::{
    check_root, check_touched, is_null_node, node_at, open_doc, raw_get, remove_key,
    require_mapping, root_get, set_scalar, set_value, DocEdit, OpResult, Reject,
};
use crate::plan::edit::{self, Frontmatter, NewValue, Scalar, Seg};
use crate::plan::identity::ChangeSet;
use crate::plan::patch::ops::{
    BundleVersion, Lifecycle, Member, Metadata, Operation, PatchRequest, PatchSource,
    SourceSelector, Verification, Window,
};
use crate::plan::stage::{self, finish_diagnostics, OpEffect, Plan, PlanStatus, Sealed, Verdict};
use crate::plan::stream::Writes;
use std::collections::{BTreeMap, BTreeSet};

/// Maximum affected paths of a plan (spec/surface.md §11).
pub const MAX_AFFECTED_PATHS: usize = 10_000;
/// Builds the plan of `req` on `capture` with the change-set base `change_set_base`
/// (preview: the captured revision; apply: `expected_revision`, equal to it in branch A).
///
/// # Errors
/// `operation_cancelled` at the per-operation checkpoints; `resource_limit` /
/// `invalid_yaml_graph` for bundle-wide YAML faults (spec/store.md §3.4); `resource_limit`
/// when more than 10,000 paths would be affected.
pub fn plan_patch(
    capture: &Capture,
    req: &PatchRequest,
    change_set_base: &str,
    cancel: &Cancel,
) -> Result<Plan, ToolError> {
    cancel.check()?;
    let bundle = validate::parse_for_validation(capture, &validation_options(req))
        .map_err(|f| f.to_tool_error())?;
    plan_patch_parsed(&bundle, req, change_set_base, cancel)
}

/// The validator options of the base and staged validations of a patch (spec/concept-patch.md
/// §3 rule 3): strict, 0.2 asserted, the request's temporal profile, no links, orphans or
/// `as_of`. Parse with [`validate::parse_for_validation`] under these to parse once.
#[must_use]
pub fn validation_options(req: &PatchRequest) -> ValidationOptions {
    ValidationOptions {
        strict: true,
        check_links: false,
        check_orphans: false,
        spec_version: Some(Target::V02),
        temporal_profile: req.profile,
        as_of: None,
    }
}

/// The documents whose bytes a plan of `req` reads: the root `index.md` (version
/// declaration, `set_bundle_version`) and the document of every operation's concept, as
/// bundle-relative paths. Every other document enters the plan only through its digest and its
/// own validator findings, so a capture for this plan may spill everything else
/// ([`crate::store::capture::Spill`], [`validate::spill_visitor`]).
#[must_use]
pub fn documents_read(req: &PatchRequest) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = req
        .operations
        .iter()
        .filter_map(|op| op.concept_id().map(|id| format!("{id}.md")))
        .collect();
    out.insert("index.md".to_owned());
    out
}

/// [`plan_patch`] on an already parsed capture, so one request parses every document once.
///
/// # Errors
/// As [`plan_patch`].
pub fn plan_patch_parsed(
    bundle: &Bundle<'_>,
    req: &PatchRequest,
    change_set_base: &str,
    cancel: &Cancel,
) -> Result<Plan, ToolError> {
    cancel.check()?;
    let capture = bundle.capture;
    let change_set = ChangeSet::concept_patch(&req.actor, change_set_base, &req.operations);
    let request_digest = change_set.request_digest();
    let opts = validation_options(req);
    let base_report = validate::validate_bundle(bundle, &opts);

    let mut overlay: BTreeMap<String, String> = BTreeMap::new();
    let mut rejection: Option<Reject> = None;
    let mut effects: Vec<OpEffect> = Vec::with_capacity(req.operations.len());
    for op in &req.operations {
        cancel.check()?;
        // Each operation edits exactly one document: its concept, or root index.md.
        let target = op
            .concept_id()
            .map_or_else(|| "index.md".to_owned(), |id| format!("{id}.md"));
        let before = current_text(capture, &overlay, &target).map(str::to_owned);
        if let Err(r) = apply_operation(capture, &mut overlay, op) {
            effects.push(OpEffect::Rejected(r.code.to_owned()));
            rejection = Some(r);
            break;
        }
        effects.push(
            if current_text(capture, &overlay, &target) == before.as_deref() {
                OpEffect::NoChange
            } else {
                OpEffect::Changed
            },
        );
    }
    effects.resize(req.operations.len(), OpEffect::NotRun);
    let rejected = |reject: &Reject, extra: Vec<Diagnostic>| -> Plan {
        let mut diags = extra;
        diags.push(
            Diagnostic::new(reject.code, Severity::Error, reject.message.clone())
                .with_file(reject.file.clone()),
        );
        Plan {
            status: PlanStatus::Rejected,
            base_revision: capture.revision.clone(),
            result_revision: None,
            request_digest: request_digest.clone(),
            change_set_id: change_set.id.clone(),
            plan_digest: request_digest.clone(),
            writes: Writes::default(),
            changed_refs: Vec::new(),
            diff: Diff::default(),
            diagnostics: finish_diagnostics(diags),
            effects: effects.clone(),
        }
    };
    if let Some(r) = rejection {
        return Ok(rejected(&r, Vec::new()));
    }

    let writes = stage::changed_writes(capture, overlay);
    if writes.len() > MAX_AFFECTED_PATHS {
        return Err(ToolError::resource_limit("patch affects too many paths"));
    }
    cancel.check()?;
    // Incremental: only the written documents are parsed again (proptest-equivalent to a full
    // validation of the overlay, `validate::validate_staged`).
    let (staged_report, verdict) = stage::validate_staged(bundle, &base_report, &writes, &opts)?;

    // set_bundle_version "0.2" while v0.1 constructs remain (§3.8, README R41).
    let declares_02 = req.operations.iter().any(|o| {
        matches!(
            o,
            Operation::SetBundleVersion {
                version: BundleVersion::V02
            }
        )
    });
    if declares_02 {
        if let Some(f) = staged_report
            .findings
            .iter()
            .filter(|f| f.code == "legacy_timestamp" || f.code == "legacy_citations")
            .min_by(|a, b| a.file.as_bytes().cmp(b.file.as_bytes()))
        {
            return Ok(rejected(
                &Reject::new(
                    "migration_required",
                    &f.file,
                    "the bundle still holds v0.1 timestamps or citations; use preview_v02_migration",
                ),
                Vec::new(),
            ));
        }
    }

    let Verdict {
        projected,
        blocking,
    } = verdict;
    if !blocking.is_empty() {
        let mut diags = projected;
        diags.extend(blocking);
        return Ok(rejected(
            &Reject::new(
                "staged_validation_failed",
                "",
                "the patched bundle fails OKF 0.2 validation",
            ),
            diags,
        ));
    }

    let Sealed {
        result_revision,
        changed_refs,
        plan_digest,
        diff,
    } = stage::seal(capture, &request_digest, change_set_base, &writes)?;
    let status = if writes.is_empty() {
        PlanStatus::Noop
    } else {
        PlanStatus::Applicable
    };
    Ok(Plan {
        status,
        base_revision: capture.revision.clone(),
        result_revision: Some(result_revision),
        request_digest,
        change_set_id: change_set.id.clone(),
        plan_digest,
        writes: Writes::Resident(writes),
        changed_refs,
        diff,
        diagnostics: finish_diagnostics(projected),
        effects,
    })
}

// ---------------------------------------------------------------------------------------------
// Documents under edit
// ---------------------------------------------------------------------------------------------

fn current_text<'a>(
    capture: &'a Capture,
    overlay: &'a BTreeMap<String, String>,
    path: &str,
) -> Option<&'a str> {
    if let Some(t) = overlay.get(path) {
        return Some(t.as_str());
    }
    capture
        .get(path)
        .map(|f| std::str::from_utf8(f.bytes()).unwrap_or("\u{0}"))
}

/// Opens the concept's document for a frontmatter operation (§3 rule 1).
fn open_concept(
    capture: &Capture,
    overlay: &BTreeMap<String, String>,
    concept_id: &str,
) -> OpResult<DocEdit> {
    let path = format!("{concept_id}.md");
    let Some(text) = current_text(capture, overlay, &path) else {
        return Err(Reject::new(
            "missing_concept",
            &path,
            "the concept does not exist: list_concepts lists the concept ids of this bundle",
        ));
    };
    if text.contains('\u{0}')
        && capture
            .get(&path)
            .is_some_and(|f| std::str::from_utf8(f.bytes()).is_err())
    {
        return Err(Reject::new(
            "invalid_presentation",
            &path,
            "the document cannot be parsed",
        ));
    }
    let doc = open_doc(text, &path)?;
    let doc = doc.ok_or_else(|| {
        Reject::new(
            "invalid_presentation",
            &path,
            "the concept has no frontmatter",
        )
    })?;
    check_root(&doc)?;
    Ok(doc)
}

fn save(overlay: &mut BTreeMap<String, String>, doc: &DocEdit) {
    overlay.insert(doc.path.clone(), doc.text());
}

// ---------------------------------------------------------------------------------------------
// Operations (§3)
// ---------------------------------------------------------------------------------------------

fn apply_operation(
    capture: &Capture,
    overlay: &mut BTreeMap<String, String>,
    op: &Operation,
) -> OpResult<()> {
    match op {
        Operation::SetBundleVersion { version } => set_bundle_version(capture, overlay, *version),
        Operation::PutAttestedComputation {
            concept_id,
            computation,
        } => {
            let mut doc = open_concept(capture, overlay, concept_id)?;
            put_attested_computation(&mut doc, computation)?;
            save(overlay, &doc);
            Ok(())
        }
        other => {
            let concept_id = other.concept_id().unwrap_or_default();
            let mut doc = open_concept(capture, overlay, concept_id)?;
            // §4.4 rules 2–3: changing an item of a flow sequence re-renders the whole
            // sequence, which is allowed only for a one-line sequence without opaque content.
            let owned = match other {
                Operation::PutSource { .. }
                | Operation::RemoveSource { .. }
                | Operation::SetUsageWindow {
                    selector: Some(_), ..
                } => Some("sources"),
                Operation::EnsureVerification { .. } | Operation::RemoveVerification { .. } => {
                    Some("verified")
                }
                _ => None,
            };
            let opaque = owned.filter(|k| opaque_flow_seq(&doc, k));
            let before = doc.text();
            match other {
                Operation::SetGenerated { generated, .. } => {
                    set_generated(&mut doc, &generated.by, generated.at.as_deref())?;
                }
                Operation::EnsureVerification { verification, .. } => {
                    ensure_verification(&mut doc, verification)?;
                }
                Operation::RemoveVerification { verification, .. } => {
                    remove_verification(&mut doc, verification)?;
                }
                Operation::PutSource { source, .. } => put_source(&mut doc, source)?,
                Operation::RemoveSource { selector, .. } => remove_source(&mut doc, selector)?,
                Operation::SetUsageWindow {
                    selector, window, ..
                } => set_usage_window(&mut doc, selector.as_ref(), window.as_ref())?,
                Operation::SetLifecycle { lifecycle, .. } => set_lifecycle(&mut doc, lifecycle)?,
                Operation::SetMetadata { metadata, .. } => set_metadata(&mut doc, metadata)?,
                Operation::SetBundleVersion { .. } | Operation::PutAttestedComputation { .. } => {}
            }
            if let Some(key) = opaque {
                if doc.text() != before {
                    return Err(Reject::new(
                        "invalid_presentation",
                        &doc.path,
                        format!("partial edit of a flow collection with opaque content ({key})"),
                    ));
                }
            }
            save(overlay, &doc);
            Ok(())
        }
    }
}

/// Whether the root `key` holds a flow sequence that §4.4 rule 3 forbids re-rendering: it
/// spans more than one line, or holds a comment, anchor, alias or tag.
fn opaque_flow_seq(doc: &DocEdit, key: &str) -> bool {
    let Some(node) = root_get(doc, key) else {
        return false;
    };
    if !matches!(node.kind, NodeKind::Sequence { flow: true, .. }) {
        return false;
    }
    let multi_line = doc
        .fm
        .text()
        .get(node.span.clone())
        .is_none_or(|t| t.contains(['\n', '\r']));
    multi_line || doc.fm.yaml().has_comment_in(&node.span) || node.has_props_inside()
}

/// §3.1.
fn set_generated(doc: &mut DocEdit, by: &str, at: Option<&str>) -> OpResult<()> {
    match root_get(doc, "generated") {
        None => {
            let mut entries = vec![("by".to_owned(), NewValue::str(by))];
            if let Some(at) = at {
                entries.push(("at".to_owned(), NewValue::plain(at)));
            }
            set_value(doc, &[], "generated", &NewValue::BlockMap(entries))
        }
        Some(node) => {
            require_mapping(node, &doc.path, "generated is not a mapping")?;
            let path = [Seg::Key("generated")];
            set_scalar(doc, &path, "by", Scalar::Str(by.to_owned()))?;
            match at {
                Some(at) => set_scalar(doc, &path, "at", Scalar::Plain(at.to_owned())),
                None => remove_key(doc, &path, "at"),
            }
        }
    }
}

fn event_matches(node: &Node, v: &Verification) -> bool {
    let Some(desired) = parse_offset_datetime(&v.at) else {
        return false;
    };
    node.get("by").and_then(Node::as_str) == Some(v.by.as_str())
        && node
            .get("at")
            .and_then(Node::scalar_text)
            .and_then(parse_offset_datetime)
            .is_some_and(|a| a == desired)
}

fn event_value(v: &Verification) -> Vec<(String, NewValue)> {
    vec![
        ("by".to_owned(), NewValue::str(&v.by)),
        ("at".to_owned(), NewValue::plain(&v.at)),
    ]
}

/// §3.2.
fn ensure_verification(doc: &mut DocEdit, v: &Verification) -> OpResult<()> {
    let Some(node) = root_get(doc, "verified") else {
        return set_value(doc, &[], "verified", &NewValue::BlockMap(event_value(v)));
    };
    check_touched(node, &doc.path)?;
    match &node.kind {
        NodeKind::Mapping { .. } => {
            if event_matches(node, v) {
                return Ok(());
            }
            convert_bare_verified(doc, v)
        }
        NodeKind::Sequence { items, .. } => {
            let matching = items.iter().filter(|i| event_matches(i, v)).count();
            match matching {
                0 => doc
                    .fm
                    .append_item(&[Seg::Key("verified")], &NewValue::BlockMap(event_value(v)))
                    .map(|_| ())
                    .map_err(|e| Reject::edit(&e, &doc.path)),
                1 => Ok(()),
                _ => Err(Reject::new(
                    "ambiguous_presentation",
                    &doc.path,
                    "more than one verification event matches",
                )),
            }
        }
        NodeKind::Scalar { .. } | NodeKind::Alias { .. } => Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "verified is neither a mapping nor a sequence",
        )),
    }
}

/// A bare `verified` mapping that does not match becomes a block sequence: the existing
/// mapping is the first item (its lines re-indented, nothing else changed), the new event the
/// second (§3.2, README R20).
fn convert_bare_verified(doc: &mut DocEdit, v: &Verification) -> OpResult<()> {
    let text = doc.fm.text().to_owned();
    let yaml = doc.fm.yaml();
    let Some(root) = yaml.root.as_ref() else {
        return Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "verified cannot be converted",
        ));
    };
    let Some((key, value)) = (match &root.kind {
        NodeKind::Mapping { entries, .. } => entries
            .iter()
            .find(|(k, _)| k.scalar_text() == Some("verified"))
            .map(|(k, v)| (k.clone(), v.clone())),
        _ => None,
    }) else {
        return Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "verified cannot be converted",
        ));
    };
    let nl = if doc.crlf { "\r\n" } else { "\n" };
    let key_col = column(&text, key.span.start);
    let ind = " ".repeat(key_col + 2);
    let new_item = format!(
        "{ind}-{nl}{ind}  by: {}{nl}{ind}  at: {}",
        render_str(&v.by),
        v.at
    );
    let edit = if value.is_flow() {
        // `verified: { by: a, at: b }` → `verified:\n  - { by: a, at: b }\n  -\n    by: …`
        let colon = text[key.span.end..value.span.start]
            .find(':')
            .map_or(key.span.end, |i| key.span.end + i + 1);
        edit::Edit {
            range: colon..value.span.end,
            replacement: format!("{nl}{ind}- {}{nl}{new_item}", &text[value.span.clone()]),
        }
    } else {
        // Block mapping lines: indent each by two, insert a dash line before them.
        let start = line_start(&text, value.span.start);
        // The line of the mapping's last character (a char boundary, never inside a
        // multi-byte character).
        let last = text[..value.span.end]
            .char_indices()
            .next_back()
            .map_or(value.span.start, |(i, _)| i.max(value.span.start));
        let end = line_end_incl(&text, last);
        let region = &text[start..end];
        let item_ind = " ".repeat(column(&text, value.span.start));
        let mut out = format!("{item_ind}-{nl}");
        for line in region.split_inclusive('\n') {
            if line.trim().is_empty() {
                out.push_str(line);
            } else {
                out.push_str("  ");
                out.push_str(line);
            }
        }
        if !out.ends_with('\n') {
            out.push_str(nl);
        }
        let new_item = format!(
            "{item_ind}-{nl}{item_ind}  by: {}{nl}{item_ind}  at: {}{nl}",
            render_str(&v.by),
            v.at
        );
        out.push_str(&new_item);
        if end == text.len() && !text.ends_with('\n') {
            out.truncate(out.len() - nl.len());
        }
        edit::Edit {
            range: start..end,
            replacement: out,
        }
    };
    let new_text = edit::apply_edits(&text, std::slice::from_ref(&edit))
        .map_err(|e| Reject::edit(&e, &doc.path))?;
    let mut expected = doc.fm.value();
    if let Some(slot) = expected.get_mut("verified") {
        let old = slot.clone();
        let mut item = crate::okf::yaml::Value::Map(Vec::new());
        if let crate::okf::yaml::Value::Map(e) = &mut item {
            e.push((
                crate::okf::yaml::Value::str("by"),
                crate::okf::yaml::Value::str(&v.by),
            ));
            e.push((
                crate::okf::yaml::Value::str("at"),
                crate::okf::yaml::Value::plain(&v.at),
            ));
        }
        *slot = crate::okf::yaml::Value::Seq(vec![old, item]);
    }
    edit::verify(&text, std::slice::from_ref(&edit), &new_text, &expected)
        .map_err(|e| Reject::edit(&e, &doc.path))?;
    doc.fm = Frontmatter::parse(&new_text, doc.crlf).map_err(|e| Reject::edit(&e, &doc.path))?;
    Ok(())
}

/// §3.3.
fn remove_verification(doc: &mut DocEdit, v: &Verification) -> OpResult<()> {
    let Some(node) = root_get(doc, "verified") else {
        return Ok(());
    };
    check_touched(node, &doc.path)?;
    match &node.kind {
        NodeKind::Mapping { .. } => {
            if event_matches(node, v) {
                remove_key(doc, &[], "verified")
            } else {
                Ok(())
            }
        }
        NodeKind::Sequence { items, .. } => {
            let matching: Vec<usize> = items
                .iter()
                .enumerate()
                .filter(|(_, i)| event_matches(i, v))
                .map(|(i, _)| i)
                .collect();
            if matching.is_empty() {
                Ok(())
            } else if matching.len() == items.len() {
                remove_key(doc, &[], "verified")
            } else {
                for i in matching.into_iter().rev() {
                    doc.fm
                        .remove_item(&[Seg::Key("verified")], i)
                        .map_err(|e| Reject::edit(&e, &doc.path))?;
                }
                Ok(())
            }
        }
        NodeKind::Scalar { .. } | NodeKind::Alias { .. } => Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "verified is neither a mapping nor a sequence",
        )),
    }
}

const KNOWN_SOURCE_KEYS: &[&str] = &[
    "id",
    "resource",
    "title",
    "author",
    "usage_count",
    "last_modified",
    "usage_window",
];

/// The known-field projection of a source item (§3.4): strings byte-exact, usage_count as an
/// integer, window as (from, to).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Projection {
    resource: Option<String>,
    title: Option<String>,
    author: Option<String>,
    usage_count: Option<u64>,
    last_modified: Option<String>,
    usage_window: Option<(String, String)>,
}

fn desired_projection(s: &PatchSource, window: Option<&Window>) -> Projection {
    Projection {
        resource: Some(s.resource.clone()),
        title: s.title.clone(),
        author: s.author.clone(),
        usage_count: s.usage_count_value(),
        last_modified: s.last_modified.clone(),
        usage_window: window.map(|w| (w.from.clone(), w.to.clone())),
    }
}

fn text_of(node: Option<&Node>) -> Option<String> {
    node.and_then(Node::scalar_text).map(str::to_owned)
}

/// The projection of an existing item; `Err` when its `usage_count` is not a plain
/// non-negative integer scalar.
fn item_projection(item: &Node, file: &str) -> OpResult<Projection> {
    let usage_count = match item.get("usage_count") {
        None => None,
        Some(n) => {
            let ok = matches!(&n.kind, NodeKind::Scalar { style: Style::Plain, text } if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0')));
            let parsed = n.scalar_text().and_then(|t| t.parse::<u64>().ok());
            match (ok, parsed) {
                (true, Some(v)) => Some(v),
                _ => {
                    return Err(Reject::new(
                        "usage_count_invalid",
                        file,
                        "a source usage_count is not a non-negative integer",
                    ))
                }
            }
        }
    };
    let usage_window = item
        .get("usage_window")
        .and_then(|w| Some((text_of(w.get("from"))?, text_of(w.get("to"))?)));
    Ok(Projection {
        resource: text_of(item.get("resource")),
        title: text_of(item.get("title")),
        author: text_of(item.get("author")),
        usage_count,
        last_modified: text_of(item.get("last_modified")),
        usage_window,
    })
}

fn has_extension_keys(item: &Node) -> bool {
    item.entries().is_some_and(|e| {
        e.iter().any(|(k, _)| {
            !k.scalar_text()
                .is_some_and(|t| KNOWN_SOURCE_KEYS.contains(&t))
        })
    })
}

fn item_id(item: &Node) -> Option<&str> {
    item.get("id").and_then(Node::scalar_text)
}

/// The `sources` sequence items, or `None` when absent; `Err` when not a sequence of mappings.
fn source_items(doc: &DocEdit) -> OpResult<Option<Vec<Node>>> {
    let Some(node) = root_get(doc, "sources") else {
        return Ok(None);
    };
    if let NodeKind::Alias { .. } = node.kind {
        return Err(Reject::new(
            "ambiguous_presentation",
            &doc.path,
            "sources is an alias",
        ));
    }
    let Some(items) = node.items() else {
        return Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "sources is not a sequence",
        ));
    };
    if node.anchor.is_some() || node.tag.is_some() {
        return Err(Reject::new(
            "ambiguous_presentation",
            &doc.path,
            "sources carries an anchor or tag",
        ));
    }
    for i in items {
        if !matches!(i.deref_alias().kind, NodeKind::Mapping { .. }) {
            return Err(Reject::new(
                "invalid_presentation",
                &doc.path,
                "a sources item is not a mapping",
            ));
        }
    }
    Ok(Some(items.to_vec()))
}

fn rendered_source(s: &PatchSource) -> Vec<(String, NewValue)> {
    let mut e = Vec::new();
    if let Some(id) = &s.id {
        e.push(("id".to_owned(), NewValue::str(id)));
    }
    if let Some(t) = &s.title {
        e.push(("title".to_owned(), NewValue::str(t)));
    }
    e.push(("resource".to_owned(), NewValue::str(&s.resource)));
    if let Some(a) = &s.author {
        e.push(("author".to_owned(), NewValue::str(a)));
    }
    if let Some(c) = &s.usage_count {
        e.push(("usage_count".to_owned(), NewValue::plain(c)));
    }
    if let Some(m) = &s.last_modified {
        e.push(("last_modified".to_owned(), NewValue::plain(m)));
    }
    if let Some(w) = &s.usage_window {
        e.push(("usage_window".to_owned(), window_value(w)));
    }
    e
}

fn window_value(w: &Window) -> NewValue {
    NewValue::FlowMap(vec![
        ("from".to_owned(), NewValue::plain(&w.from)),
        ("to".to_owned(), NewValue::plain(&w.to)),
    ])
}

fn append_source(doc: &mut DocEdit, s: &PatchSource) -> OpResult<()> {
    let item = NewValue::BlockMap(rendered_source(s));
    if root_get(doc, "sources").is_none() {
        set_value(doc, &[], "sources", &NewValue::BlockSeq(vec![item]))
    } else {
        doc.fm
            .append_item(&[Seg::Key("sources")], &item)
            .map(|_| ())
            .map_err(|e| Reject::edit(&e, &doc.path))
    }
}

fn ids_matching(items: &[Node], id: &str, file: &str) -> OpResult<Option<usize>> {
    let hits: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| item_id(i) == Some(id))
        .map(|(i, _)| i)
        .collect();
    match hits.len() {
        0 => Ok(None),
        1 => Ok(Some(hits[0])),
        _ => Err(Reject::new(
            "ambiguous_presentation",
            file,
            "two or more sources carry the selected id",
        )),
    }
}

/// Anonymous candidates (items without `id`) whose projection equals one of `wanted`.
fn anonymous_matches(
    doc: &DocEdit,
    items: &[Node],
    wanted: &[&Projection],
) -> OpResult<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.get("id").is_some() {
            continue;
        }
        let p = item_projection(item, &doc.path)?;
        if let Some(w) = wanted.iter().position(|w| **w == p) {
            out.push((i, w));
        }
    }
    Ok(out)
}

fn check_candidate(doc: &DocEdit, item: &Node) -> OpResult<()> {
    check_touched(item, &doc.path)?;
    // The item's lines: a trailing comment on its last line belongs to it (§4.2 rule 3).
    let text = doc.fm.text();
    let end = text
        .get(item.span.end..)
        .and_then(|rest| rest.find(['\n', '\r']))
        .map_or(text.len(), |n| item.span.end + n);
    if has_extension_keys(item) || doc.fm.yaml().has_comment_in(&(item.span.start..end)) {
        return Err(Reject::new(
            "ambiguous_presentation",
            &doc.path,
            "an anonymous source candidate carries extension keys or a comment",
        ));
    }
    Ok(())
}

/// §3.4 `put_source`.
fn put_source(doc: &mut DocEdit, s: &PatchSource) -> OpResult<()> {
    let Some(items) = source_items(doc)? else {
        return append_source(doc, s);
    };
    match &s.id {
        Some(id) => {
            let Some(i) = ids_matching(&items, id, &doc.path)? else {
                return append_source(doc, s);
            };
            let item = &items[i];
            check_touched(item, &doc.path)?;
            item_projection(item, &doc.path)?;
            let path = [Seg::Key("sources"), Seg::Index(i)];
            set_scalar(doc, &path, "id", Scalar::Str(id.clone()))?;
            set_scalar(doc, &path, "resource", Scalar::Str(s.resource.clone()))?;
            for (key, val) in [("title", &s.title), ("author", &s.author)] {
                match val {
                    Some(v) => set_scalar(doc, &path, key, Scalar::Str(v.clone()))?,
                    None => remove_key(doc, &path, key)?,
                }
            }
            for (key, val) in [
                ("usage_count", &s.usage_count),
                ("last_modified", &s.last_modified),
            ] {
                match val {
                    Some(v) => set_scalar(doc, &path, key, Scalar::Plain(v.clone()))?,
                    None => remove_key(doc, &path, key)?,
                }
            }
            set_item_window(doc, &path, s.usage_window.as_ref())
        }
        None => {
            let desired = desired_projection(s, s.usage_window.as_ref());
            let hits = anonymous_matches(doc, &items, &[&desired])?;
            match hits.as_slice() {
                [] => append_source(doc, s),
                [(i, _)] => check_candidate(doc, &items[*i]),
                _ => Err(Reject::new(
                    "ambiguous_presentation",
                    &doc.path,
                    "more than one anonymous source equals the requested one",
                )),
            }
        }
    }
}

/// Sets or removes the `usage_window` of the mapping at `path`, replacing only `from`/`to` of
/// an existing mapping (unknown keys kept).
fn set_item_window(doc: &mut DocEdit, path: &[Seg<'_>], w: Option<&Window>) -> OpResult<()> {
    let existing = node_at(doc, path).and_then(|m| raw_get(m, "usage_window"));
    match (w, existing) {
        (None, _) => remove_key(doc, path, "usage_window"),
        (Some(w), None) => set_value(doc, path, "usage_window", &window_value(w)),
        (Some(w), Some(node)) => {
            require_mapping(node, &doc.path, "usage_window is not a mapping")?;
            let mut sub: Vec<Seg<'_>> = path.to_vec();
            sub.push(Seg::Key("usage_window"));
            set_scalar(doc, &sub, "from", Scalar::Plain(w.from.clone()))?;
            set_scalar(doc, &sub, "to", Scalar::Plain(w.to.clone()))
        }
    }
}

fn remove_source_item(doc: &mut DocEdit, items_len: usize, i: usize) -> OpResult<()> {
    if items_len == 1 {
        remove_key(doc, &[], "sources")
    } else {
        doc.fm
            .remove_item(&[Seg::Key("sources")], i)
            .map(|_| ())
            .map_err(|e| Reject::edit(&e, &doc.path))
    }
}

/// §3.4 `remove_source`.
fn remove_source(doc: &mut DocEdit, selector: &SourceSelector) -> OpResult<()> {
    let Some(items) = source_items(doc)? else {
        return Ok(());
    };
    match selector {
        SourceSelector::Id(id) => match ids_matching(&items, id, &doc.path)? {
            None => Ok(()),
            Some(i) => {
                check_touched(&items[i], &doc.path)?;
                remove_source_item(doc, items.len(), i)
            }
        },
        SourceSelector::Exact(s) => {
            let desired = desired_projection(s, s.usage_window.as_ref());
            let hits = anonymous_matches(doc, &items, &[&desired])?;
            match hits.as_slice() {
                [] => Ok(()),
                [(i, _)] => {
                    check_candidate(doc, &items[*i])?;
                    remove_source_item(doc, items.len(), *i)
                }
                _ => Err(Reject::new(
                    "ambiguous_presentation",
                    &doc.path,
                    "more than one anonymous source equals the selector",
                )),
            }
        }
    }
}

/// §3.5.
fn set_usage_window(
    doc: &mut DocEdit,
    selector: Option<&SourceSelector>,
    window: Option<&Window>,
) -> OpResult<()> {
    let Some(selector) = selector else {
        if let Some(node) = root_get(doc, "usage_window") {
            if window.is_some() && is_null_node(node) {
                return set_value(
                    doc,
                    &[],
                    "usage_window",
                    &window_value(window.unwrap_or(&Window {
                        from: String::new(),
                        to: String::new(),
                    })),
                );
            }
        }
        return set_item_window(doc, &[], window);
    };
    let missing = || {
        Reject::new(
            "missing_source_selector",
            &doc.path,
            "no source matches the selector",
        )
    };
    let items = match source_items(doc) {
        Ok(Some(items)) => items,
        Ok(None) => return Err(missing()),
        Err(r) if r.code == "invalid_presentation" => return Err(missing()),
        Err(r) => return Err(r),
    };
    let index = match selector {
        SourceSelector::Id(id) => ids_matching(&items, id, &doc.path)?.ok_or_else(missing)?,
        SourceSelector::Exact(s) => {
            let before = desired_projection(s, s.usage_window.as_ref());
            let after = desired_projection(s, window);
            let hits = anonymous_matches(doc, &items, &[&before, &after])?;
            if hits.iter().any(|(_, w)| *w == 1) && hits.len() == 1 {
                return Ok(());
            }
            match hits.as_slice() {
                [] => return Err(missing()),
                [(i, _)] => *i,
                _ => {
                    return Err(Reject::new(
                        "ambiguous_presentation",
                        &doc.path,
                        "more than one anonymous source matches the selector",
                    ))
                }
            }
        }
    };
    check_touched(&items[index], &doc.path)?;
    set_item_window(doc, &[Seg::Key("sources"), Seg::Index(index)], window)
}

/// §3.6.
/// §3.6 with §11.1: an absent member keeps its key byte for byte.
fn set_lifecycle(doc: &mut DocEdit, l: &Lifecycle) -> OpResult<()> {
    match &l.status {
        Member::Set(s) => set_scalar(doc, &[], "status", Scalar::Str(s.as_str().to_owned()))?,
        Member::Remove => remove_key(doc, &[], "status")?,
        Member::Keep => {}
    }
    match &l.stale_after {
        Member::Set(v) => set_scalar(doc, &[], "stale_after", Scalar::Plain(v.clone())),
        Member::Remove => remove_key(doc, &[], "stale_after"),
        Member::Keep => Ok(()),
    }
}

/// §11.2: `type`, `title`, `description` and `tags`; an absent member keeps its key, a member
/// equal to the current value is a no-op for that key.
fn set_metadata(doc: &mut DocEdit, m: &Metadata) -> OpResult<()> {
    for (key, member) in [
        ("type", &m.type_),
        ("title", &m.title),
        ("description", &m.description),
    ] {
        match member {
            Member::Keep => {}
            // `type: null` is refused by the request checks; removal of the others.
            Member::Remove => remove_key(doc, &[], key)?,
            Member::Set(v) => set_text(doc, key, v)?,
        }
    }
    match &m.tags {
        Member::Keep => Ok(()),
        Member::Remove => remove_key(doc, &[], "tags"),
        Member::Set(tags) => set_tags(doc, tags),
    }
}

/// One descriptive text key (§11.2 rules 1, 2, 4): a quoted scalar keeps its quote style when
/// the value is representable in it; a plain one is replaced whole, plain when plain-safe.
fn set_text(doc: &mut DocEdit, key: &str, value: &str) -> OpResult<()> {
    let existing = root_get(doc, key);
    if let Some(n) = existing {
        check_touched(n, &doc.path)?;
        if matches!(n.kind, NodeKind::Scalar { .. }) && n.as_str() == Some(value) {
            return Ok(());
        }
    }
    let scalar = match existing.map(|n| &n.kind) {
        Some(NodeKind::Scalar {
            style: Style::SingleQuoted,
            ..
        }) if edit::single_quote(value).is_some() => Scalar::SingleQuoted(value.to_owned()),
        Some(NodeKind::Scalar {
            style: Style::DoubleQuoted,
            ..
        }) => Scalar::Quoted(value.to_owned()),
        _ => Scalar::Str(value.to_owned()),
    };
    set_value(doc, &[], key, &NewValue::Scalar(scalar))
}

/// `tags` (§11.2 rule 3): re-rendered whole in its current style when it changes; a new key
/// is a block sequence (`tags: []` when empty).
fn set_tags(doc: &mut DocEdit, tags: &[String]) -> OpResult<()> {
    let items: Vec<NewValue> = tags.iter().map(|t| NewValue::str(t)).collect();
    let Some(node) = root_get(doc, "tags") else {
        let v = if items.is_empty() {
            NewValue::FlowSeq(items)
        } else {
            NewValue::BlockSeq(items)
        };
        return set_value(doc, &[], "tags", &v);
    };
    check_touched(node, &doc.path)?;
    if doc.fm.yaml().has_comment_in(&node.span) {
        return Err(Reject::new(
            "ambiguous_presentation",
            &doc.path,
            "a comment inside the tags to replace",
        ));
    }
    let NodeKind::Sequence { flow, items: old } = &node.kind else {
        return Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "tags is not a sequence",
        ));
    };
    let current: Option<Vec<&str>> = old.iter().map(Node::as_str).collect();
    if current.is_some_and(|c| c.iter().copied().eq(tags.iter().map(String::as_str))) {
        return Ok(());
    }
    let v = if *flow || items.is_empty() {
        NewValue::FlowSeq(items)
    } else {
        NewValue::BlockSeq(items)
    };
    set_value(doc, &[], "tags", &v)
}

/// §3.7.
fn put_attested_computation(doc: &mut DocEdit, c: &AttestedComputation) -> OpResult<()> {
    put_computation_frontmatter(doc, c)?;
    let edit = computation::body_edit(&doc.body, doc.crlf, &c.body)
        .map_err(|e| Reject::new(e.code(), &doc.path, e.to_string()))?;
    if let Some(e) = edit {
        doc.body = e.apply(&doc.body);
    }
    let key = root_get(doc, "computation")
        .and_then(Node::scalar_text)
        .map(str::to_owned);
    computation::post_check(&doc.body, key.as_deref(), &c.body)
        .map_err(|e| Reject::new(e.code(), &doc.path, e.to_string()))
}

/// §3.8: edits the root `index.md`.
fn set_bundle_version(
    capture: &Capture,
    overlay: &mut BTreeMap<String, String>,
    version: BundleVersion,
) -> OpResult<()> {
    let path = "index.md";
    let Some(text) = current_text(capture, overlay, path).map(str::to_owned) else {
        return Err(Reject::new(
            "missing_root_index",
            path,
            "the bundle has no root index.md",
        ));
    };
    match open_doc(&text, path)? {
        Some(mut doc) => {
            check_root(&doc)?;
            set_scalar(
                &mut doc,
                &[],
                "okf_version",
                Scalar::Quoted(version.as_str().to_owned()),
            )?;
            save(overlay, &doc);
        }
        None => {
            let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
            let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
            let new = format!(
                "{}---{nl}okf_version: \"{}\"{nl}---{nl}{}",
                &text[..bom],
                version.as_str(),
                &text[bom..]
            );
            overlay.insert(path.to_owned(), new);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------

fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding `pos`, including its line break.
fn line_end_incl(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1)
}

fn column(text: &str, pos: usize) -> usize {
    pos - line_start(text, pos)
}

fn render_str(s: &str) -> String {
    if edit::is_plain_safe(s, false) {
        s.to_owned()
    } else {
        edit::double_quote(s)
    }
}

#[cfg(test)]
#[path = "planner_tests.rs"]
mod tests;
