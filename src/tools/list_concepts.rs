//! `list_concepts` (spec/surface.md §12.3, README R37, R40).
//!
//! Pure checks first (temporal profile, `as_of`), then `bundle_path`, one capture, and the
//! projection of every concept. A document that cannot be parsed never fails the tool: its
//! entry carries `parse_error`.

use crate::envelope::{Diagnostic, ToolError};
use crate::okf::project;
use crate::tools::common::{filters_arg, insert_profile, str_arg, ReadProfile};
use crate::tools::def::checked_in;
use crate::tools::read;
use crate::tools::schema_parts::{
    as_of_prop, boolean, card_props, closed, count, filter_props, input_root, nullable_string,
    output_root, profile_branches, r, temporal_profile_prop, with, SchemaRoot, EXAMPLE_BUNDLE_PATH,
};
use crate::tools::Ctx;
use crate::tools::Success;
use crate::tools::ToolSpec;
use serde_json::{json, Map, Value};

/// `list_concepts` as registered (spec/surface.md §2, §12.3; annotations spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "list_concepts",
    title: "List concepts",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("list_concepts", "input"),
    output_schema: checked_in!("list_concepts", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// Most concepts one page may return (spec/surface.md §11, §18.5 rule 1: the cap applies to
/// one page; `limit` is at most [`MAX_LIMIT`]).
pub const MAX_CONCEPTS: usize = 10_000;

/// Largest `limit` (spec/surface.md §18.5 rule 1).
pub const MAX_LIMIT: u64 = 1_000;

/// `limit` when absent (spec/surface.md §18.5 rule 1).
pub const DEFAULT_LIMIT: u64 = 200;

/// Longest `cursor` the schema accepts, in characters: the prefix, 64 revision digits, a dot
/// and the hex of a concept id of at most 4096 bytes.
pub const MAX_CURSOR: u64 = 8_300;

/// Prefix of every cursor this version issues (the cursor format's version).
const CURSOR_PREFIX: &str = "lc1.";

/// Message of a cursor issued for another revision (spec/surface.md §18.5 rule 1).
pub const STALE_CURSOR: &str = "the bundle changed since this cursor; list again without cursor";

/// Message of a string that is not a cursor of this tool.
pub const BAD_CURSOR: &str =
    "cursor is not a next_cursor of list_concepts; list again without cursor";

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use first to see what an OKF bundle holds: one page of concept cards (id, path, type, title, tags, status, trust, staleness, sources, computation), sorted by id, plus the version resolution, total and next_cursor. Filters (exact, combined): stale (needs as_of), status, type, tag, trust. When next_cursor is not null, call again with cursor set to it and the same other arguments. A concept that does not parse has parse_error set; repair it with write_concept. Next: read_concept.";

/// The cursor naming the page after `last_id` of the listing of `revision`
/// (`sha256:<64 hex>`): `lc1.<64 hex>.<hex of the id's bytes>`. Opaque to callers.
#[must_use]
pub fn encode_cursor(revision: &str, last_id: &str) -> String {
    let digits = revision.strip_prefix("sha256:").unwrap_or(revision);
    format!(
        "{CURSOR_PREFIX}{digits}.{}",
        crate::digest::hex(last_id.as_bytes())
    )
}

/// Decodes a cursor of [`encode_cursor`] into (revision, last id). Pure.
///
/// # Errors
/// `invalid_request` [`BAD_CURSOR`] (the value is never echoed), recovery step on `cursor`.
pub fn decode_cursor(cursor: &str) -> Result<(String, String), ToolError> {
    let bad = || {
        ToolError::invalid_request(BAD_CURSOR).with_diagnostic(Diagnostic::recovery(
            "cursor",
            "Leave cursor out to list from the first page, then pass each next_cursor unchanged.",
        ))
    };
    let rest = cursor.strip_prefix(CURSOR_PREFIX).ok_or_else(bad)?;
    let (digits, id_hex) = rest.split_once('.').ok_or_else(bad)?;
    let lower_hex = |s: &str| s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if digits.len() != 64 || !lower_hex(digits) || !lower_hex(id_hex) || id_hex.len() % 2 != 0 {
        return Err(bad());
    }
    let bytes: Vec<u8> = (0..id_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&id_hex[i..i + 2], 16))
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let id = String::from_utf8(bytes).map_err(|_| bad())?;
    Ok((format!("sha256:{digits}"), id))
}

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (temporal profile, `as_of`, `stale` without `as_of`, a malformed or
/// stale `cursor`, `bundle_path`, symlinks), capture and YAML limits (`resource_limit`,
/// `invalid_yaml_graph`), `operation_cancelled`.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let temporal = ReadProfile::from_args(&args)?;
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_LIMIT);
    let limit = usize::try_from(limit).unwrap_or(MAX_CONCEPTS);
    let filters = filters_arg(&args)?;
    let after = match args.get("cursor").and_then(Value::as_str) {
        Some(c) => Some(decode_cursor(c)?),
        None => None,
    };
    let bundle_path = str_arg(&args, "bundle_path").to_owned();
    let capture = read::open(&bundle_path, ctx)?;
    if let Some((rev, _)) = &after {
        if *rev != capture.revision {
            return Err(
                ToolError::invalid_request(STALE_CURSOR).with_diagnostic(Diagnostic::recovery(
                    "cursor",
                    "Call list_concepts again without cursor; the listing starts over on the current bundle.",
                )),
            );
        }
    }
    let bundle = read::parse(&capture, None)?;
    let (resolution, as_of) = temporal.resolve(&capture)?;
    let profile = resolution.profile;
    let (decl, ver) = read::version(&bundle);
    let mut docs: Vec<_> = bundle.concepts().collect();
    docs.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let after_id = after.as_ref().map(|(_, id)| id.as_str());
    let past = |id: &str| after_id.is_none_or(|a| id.as_bytes() > a.as_bytes());
    let mut total = 0usize;
    let mut page: Vec<(&str, Value)> = Vec::new();
    let mut more = false;
    if filters.is_empty() {
        // Only the page is projected.
        total = docs.len();
        for (id, doc) in docs.iter().filter(|(id, _)| past(id)) {
            if page.len() == limit {
                more = true;
                break;
            }
            ctx.cancel.check()?;
            page.push((id, project::list_entry(id, doc, profile, as_of.as_deref())));
        }
    } else {
        for (id, doc) in &docs {
            ctx.cancel.check()?;
            let entry = project::list_entry(id, doc, profile, as_of.as_deref());
            if !filters.matches(Some(&entry)) {
                continue;
            }
            total += 1;
            if past(id) {
                if page.len() < limit {
                    page.push((id, entry));
                } else {
                    more = true;
                }
            }
        }
    }
    let next_cursor = match page.last() {
        Some((id, _)) if more => Some(encode_cursor(&capture.revision, id)),
        _ => None,
    };
    let mut m = Map::new();
    read::insert_version(&mut m, &decl, &ver);
    insert_profile(&mut m, &resolution);
    m.insert("as_of".into(), json!(as_of));
    m.insert(
        "concepts".into(),
        Value::Array(page.into_iter().map(|(_, v)| v).collect()),
    );
    m.insert("total".into(), json!(total));
    m.insert("next_cursor".into(), json!(next_cursor));
    // The one text item is the compact JSON of the object (spec/surface.md §18.2 rule 1).
    Ok(Success::json(Value::Object(m)))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/surface.md §2, §12.3).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "list_concepts",
        "Arguments of list_concepts (spec/surface.md §2, §12.3).",
        &["bundle_path"],
        vec![
            ("bundle_path", r("bundle_path")),
            ("temporal_profile", temporal_profile_prop()),
            ("as_of", as_of_prop()),
            (
                "limit",
                json!({"description": "Most concepts in this page (default 200).", "type": "integer", "minimum": 1, "maximum": MAX_LIMIT}),
            ),
            (
                "cursor",
                json!({"description": "The next_cursor of the previous page, unchanged; leave out for the first page. Bound to the bundle's revision.", "type": "string", "minLength": 1, "maxLength": MAX_CURSOR}),
            ),
        ]
        .into_iter()
        .chain(filter_props("concepts"))
        .collect(),
    );
    profile_branches(&mut m, true, false);
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "limit": 50, "status": "stable"}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §12.3).
fn output_schema() -> SchemaRoot {
    output_root(
        "list_concepts",
        "Result of list_concepts (spec/surface.md §12.3).",
        list_success(),
    )
}

fn list_success() -> Value {
    let mut entry_props = card_props();
    entry_props.extend([
        ("generated_at", nullable_string()),
        ("source_count", count()),
        (
            "computation",
            closed(vec![
                ("present", boolean()),
                ("runtime", nullable_string()),
                ("executor", nullable_string()),
                ("attester", nullable_string()),
            ]),
        ),
        (
            "legacy_derived",
            closed(vec![("generated", boolean()), ("citations", boolean())]),
        ),
        (
            "parse_error",
            json!({
                "description": "Set when the concept's document cannot be parsed (spec/surface.md §13.1): the entry then has only id, path and parse_error set, every other member null, empty or false. list_concepts never fails for such a document; repair it with write_concept.",
                "type": ["string", "null"],
                "enum": ["invalid_encoding", "unterminated_frontmatter", "invalid_frontmatter", null]
            }),
        ),
    ]);
    // status_state is null only in the entry of an unparseable concept (spec/surface.md §12.3).
    let mut entry = closed(entry_props);
    if let Value::Object(m) = &mut entry {
        if let Some(Value::Object(p)) = m.get_mut("properties") {
            p.insert(
                "status_state".into(),
                json!({"anyOf": [r("status_state"), {"type": "null"}]}),
            );
        }
        m.insert(
            "if".into(),
            json!({"properties": {"parse_error": {"type": "null"}}, "additionalProperties": true}),
        );
        m.insert(
            "then".into(),
            json!({"properties": {"status_state": {"type": "object"}}, "additionalProperties": true}),
        );
        m.insert(
            "else".into(),
            json!({
                "properties": {
                    "type": {"type": "null"},
                    "title": {"type": "null"},
                    "description": {"type": "null"},
                    "tags": {"const": []},
                    "status": {"type": "null"},
                    "trust": {"const": "unverified"},
                    "stale": {"type": "null"},
                    "stale_after": {"type": "null"},
                    "status_state": {"type": "null"},
                    "generated_at": {"type": "null"},
                    "source_count": {"const": 0},
                    "computation": {"const": {"present": false, "runtime": null, "executor": null, "attester": null}},
                    "legacy_derived": {"const": {"generated": false, "citations": false}}
                },
                "additionalProperties": true
            }),
        );
    }
    closed(vec![
        ("version", r("version")),
        ("version_declaration", r("version_declaration")),
        ("temporal_profile", r("temporal_profile_id")),
        ("temporal_profile_source", r("temporal_profile_source")),
        ("as_of", nullable_string()),
        (
            "concepts",
            json!({"type": "array", "maxItems": MAX_LIMIT, "items": entry}),
        ),
        (
            "total",
            with(
                count(),
                "description",
                json!("Concepts matching the filters, over all pages."),
            ),
        ),
        (
            "next_cursor",
            with(
                nullable_string(),
                "description",
                json!("Pass as cursor to get the next page; null on the last page."),
            ),
        ),
    ])
}
