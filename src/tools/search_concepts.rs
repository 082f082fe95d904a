//! `search_concepts` (spec/surface.md §14.1, §14.6 rules 4–6, 9, §12.6).
//!
//! Pure checks first (temporal profile, `as_of`, filters, cursor), then `bundle_path`, one
//! capture, and the match of every concept ([`crate::view::concepts`]). Any concept or
//! reserved document that cannot be parsed fails the call (§12.6).

use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::okf::project::{self, field, non_empty_str};
use crate::okf::yaml::Node;
use crate::tools::common::{
    bundle_parse_failure, filters_arg, insert_profile, str_arg, ReadProfile,
};
use crate::tools::def::checked_in;
use crate::tools::paging::{self, Cursors};
use crate::tools::read;
use crate::tools::schema_parts::{
    as_of_prop, closed, count, filter_props, input_root, nullable_string, output_root,
    profile_branches, r, string_1_max, temporal_profile_prop, with, SchemaRoot,
    EXAMPLE_BUNDLE_PATH,
};
use crate::tools::search_sections::{
    cursor_prop, limit_prop, query_prop, DEFAULT_LIMIT, MAX_LIMIT,
};
use crate::tools::{Ctx, Success, ToolSpec};
use crate::view::concepts::{ConceptText, Field, Matcher};
use crate::view::terms;
use serde_json::{json, Map, Value};

/// `search_concepts` as registered (spec/surface.md §2, §14.1).
pub const TOOL: ToolSpec = ToolSpec {
    name: "search_concepts",
    title: "Search concepts",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("search_concepts", "input"),
    output_schema: checked_in!("search_concepts", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to find concepts by a word or phrase: concept cards whose id, title, description, tags or body contain the query (case-insensitive), the first matching field named in match, ordered by that field then id. More pages: pass next_cursor as cursor. Next: read_concept or get_neighbors on a hit; search_sections for ranked passages.";

const CURSORS: Cursors = Cursors {
    prefix: "sc1",
    tool: "search_concepts",
    verb: "search",
};

/// Code of the notice of a multi-word substring search without hits (§14.6 rule 4).
pub const TRY_SEARCH_SECTIONS: &str = "try_search_sections";

/// Whether `k` has the shape of a sort key of [`key`]: a field rank, then a UTF-8 id.
fn key_ok(k: &[u8]) -> bool {
    k.len() > 1 && k[0] <= Field::Body as u8 && std::str::from_utf8(&k[1..]).is_ok()
}

fn key(field: Field, id: &str) -> Vec<u8> {
    let mut k = vec![field as u8];
    k.extend(id.as_bytes());
    k
}

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (temporal profile, `as_of`, `stale` without `as_of`, a malformed or
/// stale `cursor`, `bundle_path`, symlinks), `operation_rejected` when a document cannot be
/// parsed (§12.6), capture and YAML limits, `operation_cancelled`.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let temporal = ReadProfile::from_args(&args)?;
    let filters = filters_arg(&args)?;
    let query = str_arg(&args, "query").to_owned();
    let mode = args
        .get("match")
        .and_then(Value::as_str)
        .unwrap_or("substring")
        .to_owned();
    let matcher = Matcher::new(&query, &mode);
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_LIMIT);
    let limit = usize::try_from(limit).unwrap_or(1);
    let inputs = CURSORS.inputs(&args);
    let after = match args.get("cursor").and_then(Value::as_str) {
        Some(c) => Some(CURSORS.decode_checked(c, key_ok)?),
        None => None,
    };
    let capture = read::open(str_arg(&args, "bundle_path"), ctx)?;
    if let Some(a) = &after {
        CURSORS.check(a, &capture.revision, &inputs)?;
    }
    let bundle = read::parse(&capture, None)?;
    if let Some(e) = bundle_parse_failure(&bundle) {
        return Err(e);
    }
    let (resolution, as_of) = temporal.resolve(&capture)?;
    let profile = resolution.profile;
    ctx.cancel.check()?;
    let concepts: Vec<_> = bundle.concepts().collect();
    let matched = crate::okf::par::map(&concepts, |(id, doc)| {
        let p = doc.parsed().as_ref().ok()?;
        let root = p.root();
        let tags: Vec<&str> = field(root, "tags")
            .and_then(Node::items)
            .map(|i| i.iter().filter_map(Node::as_str).collect())
            .unwrap_or_default();
        let text = ConceptText {
            id,
            title: non_empty_str(field(root, "title")),
            description: non_empty_str(field(root, "description")),
            tags,
            body: p.split.body_text(),
        };
        matcher.matches(&text)
    });
    ctx.cancel.check()?;
    // Cards are projected for the filters only when a filter is given, else for the page.
    let card = |k: usize| project::card(concepts[k].0, concepts[k].1, profile, as_of.as_deref());
    let mut hits: Vec<(Field, &str, usize)> = Vec::new();
    for (k, m) in matched.into_iter().enumerate() {
        let Some(f) = m else { continue };
        if filters.is_empty() || filters.matches(card(k).as_ref()) {
            hits.push((f, concepts[k].0, k));
        }
    }
    hits.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
    });
    let total = hits.len();
    if total == 0 && terms::distinct_terms(&query).len() > 1 {
        let message = if mode == "all_terms" {
            "no concept holds every word of the query; search_sections ranks the sections holding them all, headings and titles included"
        } else {
            "no concept holds the query as one phrase; search_sections finds sections holding every word, and match: \"all_terms\" finds concepts holding every word in any field"
        };
        crate::notices::push(
            Diagnostic::new(TRY_SEARCH_SECTIONS, Severity::Info, message).with_field("query"),
        );
    }
    let (page, more) = paging::page(
        hits,
        after.as_ref().map(|a| a.key.as_slice()),
        limit,
        |h, k| key(h.0, h.1).as_slice() > k,
    );
    let rendered: Vec<(Vec<u8>, Value)> = page
        .into_iter()
        .map(|(f, id, k)| (key(f, id), json!({"concept": card(k), "match": f.as_str()})))
        .collect();
    let (kept, cut) = paging::fit(rendered, query.len());
    let more = more || cut;
    let next_cursor = match kept.last() {
        Some((k, _)) if more => Some(CURSORS.encode(&capture.revision, &inputs, k)),
        _ => None,
    };
    let mut m = Map::new();
    m.insert("query".into(), json!(query));
    m.insert("match".into(), json!(mode));
    m.insert("as_of".into(), json!(as_of));
    m.insert("total".into(), json!(total));
    m.insert("truncated".into(), json!(more));
    m.insert(
        "hits".into(),
        Value::Array(kept.into_iter().map(|(_, v)| v).collect()),
    );
    m.insert("next_cursor".into(), json!(next_cursor));
    insert_profile(&mut m, &resolution);
    Ok(Success::json(Value::Object(m)))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/surface.md §2, §14.1, §14.6).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "search_concepts",
        "Arguments of search_concepts (spec/surface.md §2, §14.1, §14.6).",
        &["bundle_path", "query"],
        [
            ("bundle_path", r("bundle_path")),
            (
                "query",
                query_prop("Text to find in concept ids, titles, descriptions, tags and bodies; case and Unicode case folding do not matter."),
            ),
            (
                "match",
                json!({"description": "How the query matches: substring (the default; one phrase, as is) or all_terms (every word, each in some field).", "type": "string", "enum": ["substring", "all_terms"]}),
            ),
            ("limit", limit_prop("hits")),
            ("cursor", cursor_prop()),
            ("temporal_profile", temporal_profile_prop()),
            ("as_of", as_of_prop()),
        ]
        .into_iter()
        .chain(filter_props("concepts"))
        .collect(),
    );
    profile_branches(&mut m, true, false);
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "query": "orders"}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §14.1).
fn output_schema() -> SchemaRoot {
    let hit = closed(vec![
        ("concept", r("card")),
        (
            "match",
            json!({"type": "string", "enum": ["id", "title", "description", "tags", "body"]}),
        ),
    ]);
    output_root(
        "search_concepts",
        "Result of search_concepts (spec/surface.md §14.1).",
        closed(vec![
            ("query", string_1_max(512)),
            (
                "match",
                json!({"type": "string", "enum": ["substring", "all_terms"]}),
            ),
            ("as_of", nullable_string()),
            (
                "total",
                with(
                    count(),
                    "description",
                    json!("Hits after the filters, over all pages."),
                ),
            ),
            (
                "truncated",
                json!({"type": "boolean", "description": "Whether more hits follow this page (next_cursor is then set)."}),
            ),
            (
                "hits",
                json!({"type": "array", "maxItems": MAX_LIMIT, "items": hit}),
            ),
            (
                "next_cursor",
                with(
                    nullable_string(),
                    "description",
                    json!("Pass as cursor to get the next page; null on the last page."),
                ),
            ),
            ("temporal_profile", r("temporal_profile_id")),
            ("temporal_profile_source", r("temporal_profile_source")),
        ]),
    )
}
