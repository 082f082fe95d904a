//! `get_neighbors` (spec/surface.md §14.2, §14.5 rule 1, §14.6 rules 5–7, 9, §12.6).
//!
//! Pure checks first (temporal profile, `as_of`, filters, canonical `concept_id`, cursor),
//! then `bundle_path`, one capture, the link graph ([`crate::view::edges`]) and a breadth-first
//! walk from the concept. Any concept or reserved document that cannot be parsed fails the
//! call (§12.6).
//!
//! The answer's edges are the edges the walk followed whose far end passes the filters (the
//! unfiltered answer intersected with the filters, §14.6 rule 5), in `(kind, from, to)` order,
//! paged by `limit` and `cursor`. `truncated` says that more edges follow this page or that
//! `max_nodes` stopped the walk.

use crate::envelope::{codes, Diagnostic, ToolError};
use crate::okf::bundle::Bundle;
use crate::okf::grammar::DocClass;
use crate::okf::project::{self, non_empty_str};
use crate::okf::temporal::Profile;
use crate::tools::common::{
    bundle_parse_failure, concept_id_arg, filters_arg, insert_profile, str_arg, ReadProfile,
};
use crate::tools::def::checked_in;
use crate::tools::paging::{self, Cursors};
use crate::tools::read;
use crate::tools::schema_parts::{
    as_of_prop, closed, concept_id_prop, count, filter_props, input_root, nullable_string,
    output_root, profile_branches, r, temporal_profile_prop, with, SchemaRoot, EXAMPLE_BUNDLE_PATH,
    EXAMPLE_CONCEPT_ID,
};
use crate::tools::search_sections::{cursor_prop, limit_prop, DEFAULT_LIMIT, MAX_LIMIT};
use crate::tools::{Ctx, Success, ToolSpec};
use crate::view::edges::{self, Direction, EdgeKind};
use serde_json::{json, Map, Value};

/// `get_neighbors` as registered (spec/surface.md §2, §14.2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "get_neighbors",
    title: "Get a concept's neighbours",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("get_neighbors", "input"),
    output_schema: checked_in!("get_neighbors", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to see what a concept connects to: relation edges (body links between concepts), navigation edges (index.md listings; an index is named by its path and has card null) and the concept's sources; direction in gives backlinks. Filters apply to each edge's far end. concept_not_found: find the id with search_concepts. Next: read_concept on a neighbour.";

/// Deepest walk (spec/surface.md §14.6 rule 7).
pub const MAX_DEPTH: u64 = 3;
/// Most nodes a walk may reach, and the default.
pub const MAX_NODES: u64 = 1_000;
/// `max_nodes` when absent.
pub const DEFAULT_MAX_NODES: u64 = 200;
/// Most sources listed (spec/surface.md §14.5 rule 1).
pub const MAX_SOURCES: usize = 100;

const CURSORS: Cursors = Cursors {
    prefix: "gn1",
    tool: "get_neighbors",
    verb: "call get_neighbors",
};

fn kind_of(s: &str) -> Option<EdgeKind> {
    match s {
        "navigation" => Some(EdgeKind::Navigation),
        "relation" => Some(EdgeKind::Relation),
        _ => None,
    }
}

/// Whether `k` has the shape of a sort key of [`key`]: a kind, a UTF-8 `from`, a NUL, a
/// UTF-8 `to`.
fn key_ok(k: &[u8]) -> bool {
    let Some((&kind, rest)) = k.split_first() else {
        return false;
    };
    let Some(nul) = rest.iter().position(|&b| b == 0) else {
        return false;
    };
    kind <= EdgeKind::Relation as u8
        && std::str::from_utf8(&rest[..nul]).is_ok()
        && std::str::from_utf8(&rest[nul + 1..]).is_ok()
}

fn key(e: &edges::Edge<'_>) -> Vec<u8> {
    let mut k = vec![e.kind as u8];
    k.extend(e.from.as_bytes());
    k.push(0);
    k.extend(e.to.as_bytes());
    k
}

/// The card of a node: a concept's card, `None` for an `index.md` or an unknown node.
fn node_card(
    bundle: &Bundle<'_>,
    node: &str,
    profile: Profile,
    as_of: Option<&str>,
) -> Option<Value> {
    if edges::is_index_node(node) {
        return None;
    }
    let doc = bundle.doc(&format!("{node}.md"))?;
    project::card(node, doc, profile, as_of)
}

/// Most bytes the listed sources take (the rest of the answer is the edges' page).
const SOURCES_BYTES: usize = 64 * 1024;

/// The concept's sources for the answer: `{id, resource, title}` of each item with a valid
/// `resource`, at most [`MAX_SOURCES`] and [`SOURCES_BYTES`] of them, and how many it has
/// (`sources_total`, so a cut list is never silent).
fn sources_of(bundle: &Bundle<'_>, id: &str) -> (Vec<Value>, usize) {
    let Some(Ok(p)) = bundle.doc(&format!("{id}.md")).map(|d| d.parsed().as_ref()) else {
        return (Vec::new(), 0);
    };
    let all = project::valid_sources(p.root());
    let mut used = 0usize;
    let mut out = Vec::new();
    for s in all.iter().take(MAX_SOURCES) {
        let v = json!({
            "id": non_empty_str(s.get("id")),
            "resource": project::non_blank_str(s.get("resource")),
            "title": non_empty_str(s.get("title")),
        });
        used += serde_json::to_string(&v).map_or(usize::MAX, |t| t.len() + 1);
        if used > SOURCES_BYTES {
            break;
        }
        out.push(v);
    }
    (out, all.len())
}

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (temporal profile, `as_of`, `stale` without `as_of`, a non-canonical id,
/// a malformed or stale `cursor`, `bundle_path`, symlinks), `concept_not_found`,
/// `operation_rejected` when a document cannot be parsed (§12.6), capture and YAML limits,
/// `operation_cancelled`.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let temporal = ReadProfile::from_args(&args)?;
    let filters = filters_arg(&args)?;
    let id = str_arg(&args, "concept_id").to_owned();
    concept_id_arg(&id)?;
    let direction = args
        .get("direction")
        .and_then(Value::as_str)
        .and_then(Direction::parse)
        .unwrap_or(Direction::Both);
    let kind_names: Vec<String> = match args.get("kinds").and_then(Value::as_array) {
        Some(k) => k
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        None => vec!["navigation".into(), "relation".into(), "source".into()],
    };
    let kinds: Vec<EdgeKind> = kind_names.iter().filter_map(|k| kind_of(k)).collect();
    let with_sources = kind_names.iter().any(|k| k == "source");
    let num = |k: &str, default: u64, max: u64| {
        let v = args
            .get(k)
            .and_then(Value::as_u64)
            .unwrap_or(default)
            .clamp(1, max);
        usize::try_from(v).unwrap_or(1)
    };
    let limit = num("limit", DEFAULT_LIMIT, MAX_LIMIT);
    let depth = num("depth", 1, MAX_DEPTH);
    let max_nodes = num("max_nodes", DEFAULT_MAX_NODES, MAX_NODES);
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
    let path = format!("{id}.md");
    if !bundle
        .doc(&path)
        .is_some_and(|d| matches!(&d.class, DocClass::Concept(c) if *c == id))
    {
        return Err(
            ToolError::new(codes::CONCEPT_NOT_FOUND, "no concept with that id exists")
                .with_diagnostic(Diagnostic::recovery(
                    "concept_id",
                    "Find a current id with search_concepts or list_concepts.",
                )),
        );
    }
    let (resolution, as_of) = temporal.resolve(&capture)?;
    let profile = resolution.profile;
    let as_of_ref = as_of.as_deref();
    ctx.cancel.check()?;
    let graph = read::link_graph(&bundle);
    ctx.cancel.check()?;
    let walk = edges::walk(&graph, &id, direction, &kinds, depth, max_nodes);
    let mut cards: std::collections::HashMap<String, Option<Value>> =
        std::collections::HashMap::new();
    let mut card = |node: &str| -> Option<Value> {
        cards
            .entry(node.to_owned())
            .or_insert_with(|| node_card(&bundle, node, profile, as_of_ref))
            .clone()
    };
    let mut kept: Vec<edges::Edge<'_>> = Vec::new();
    for (i, far) in &walk.edges {
        if filters.is_empty() || filters.matches(card(far).as_ref()) {
            kept.push(graph.edge(*i));
        }
    }
    let total = kept.len();
    let (page, more) = paging::page(
        kept,
        after.as_ref().map(|a| a.key.as_slice()),
        limit,
        |e, k| key(e).as_slice() > k,
    );
    let (sources, sources_total) = if with_sources {
        sources_of(&bundle, &id)
    } else {
        (Vec::new(), 0)
    };
    let concept = json!(card(&id));
    let rendered: Vec<(Vec<u8>, Value)> = page
        .iter()
        .map(|e| {
            (
                key(e),
                json!({
                    "from": e.from,
                    "to": e.to,
                    "kind": e.kind.as_str(),
                    "relation_type": e.kind.relation_type(),
                    "source": card(e.from),
                    "target": card(e.to),
                }),
            )
        })
        .collect();
    let others = serde_json::to_string(&concept).map_or(0, |t| t.len())
        + serde_json::to_string(&sources).map_or(0, |t| t.len());
    let (kept_edges, cut) = paging::fit(rendered, others);
    let more = more || cut;
    let next_cursor = match kept_edges.last() {
        Some((k, _)) if more => Some(CURSORS.encode(&capture.revision, &inputs, k)),
        _ => None,
    };
    let edges_json: Vec<Value> = kept_edges.into_iter().map(|(_, v)| v).collect();
    let mut m = Map::new();
    m.insert("concept".into(), concept);
    m.insert("as_of".into(), json!(as_of));
    m.insert("direction".into(), json!(direction.as_str()));
    m.insert("kinds".into(), json!(kind_names));
    m.insert("depth".into(), json!(depth));
    m.insert("total".into(), json!(total));
    m.insert("truncated".into(), json!(more || walk.truncated));
    m.insert("edges".into(), Value::Array(edges_json));
    m.insert("sources".into(), Value::Array(sources));
    m.insert("sources_total".into(), json!(sources_total));
    m.insert("next_cursor".into(), json!(next_cursor));
    insert_profile(&mut m, &resolution);
    Ok(Success::json(Value::Object(m)))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/surface.md §2, §14.2, §14.6).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "get_neighbors",
        "Arguments of get_neighbors (spec/surface.md §2, §14.2, §14.6).",
        &["bundle_path", "concept_id"],
        [
            ("bundle_path", r("bundle_path")),
            ("concept_id", concept_id_prop()),
            (
                "direction",
                json!({"description": "Which edges: out (leaving the concept), in (reaching it: backlinks) or both (default).", "type": "string", "enum": ["in", "out", "both"]}),
            ),
            (
                "kinds",
                json!({"description": "Edge kinds (default all): navigation (index.md listings), relation (body links), source (the concept's sources, listed under sources).", "type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": true, "items": {"type": "string", "enum": ["navigation", "relation", "source"]}}),
            ),
            (
                "depth",
                json!({"description": "Hops to walk, breadth first (default 1).", "type": "integer", "minimum": 1, "maximum": MAX_DEPTH}),
            ),
            (
                "max_nodes",
                json!({"description": "Most nodes the walk reaches, the concept included (default 200); truncated is set when it stops the walk.", "type": "integer", "minimum": 1, "maximum": MAX_NODES}),
            ),
            ("limit", limit_prop("edges")),
            ("cursor", cursor_prop()),
            ("temporal_profile", temporal_profile_prop()),
            ("as_of", as_of_prop()),
        ]
        .into_iter()
        .chain(filter_props("neighbours"))
        .collect(),
    );
    profile_branches(&mut m, true, false);
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "concept_id": EXAMPLE_CONCEPT_ID, "direction": "in"}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §14.2).
fn output_schema() -> SchemaRoot {
    let card_or_null = json!({"anyOf": [r("card"), {"type": "null"}]});
    let edge = closed(vec![
        ("from", json!({"type": "string"})),
        ("to", json!({"type": "string"})),
        (
            "kind",
            json!({"type": "string", "enum": ["navigation", "relation"]}),
        ),
        (
            "relation_type",
            json!({"type": "string", "enum": ["navigation", "link"]}),
        ),
        ("source", card_or_null.clone()),
        ("target", card_or_null),
    ]);
    let source = closed(vec![
        ("id", nullable_string()),
        ("resource", json!({"type": "string"})),
        ("title", nullable_string()),
    ]);
    output_root(
        "get_neighbors",
        "Result of get_neighbors (spec/surface.md §14.2).",
        closed(vec![
            ("concept", r("card")),
            ("as_of", nullable_string()),
            (
                "direction",
                json!({"type": "string", "enum": ["in", "out", "both"]}),
            ),
            (
                "kinds",
                json!({"type": "array", "maxItems": 3, "items": {"type": "string", "enum": ["navigation", "relation", "source"]}}),
            ),
            (
                "depth",
                json!({"type": "integer", "minimum": 1, "maximum": MAX_DEPTH}),
            ),
            (
                "total",
                with(
                    count(),
                    "description",
                    json!("Edges after the filters, over all pages."),
                ),
            ),
            (
                "truncated",
                json!({"type": "boolean", "description": "Whether more edges follow this page, or max_nodes stopped the walk."}),
            ),
            (
                "edges",
                json!({"type": "array", "maxItems": MAX_LIMIT, "items": edge}),
            ),
            (
                "sources",
                json!({"type": "array", "maxItems": MAX_SOURCES, "items": source}),
            ),
            (
                "sources_total",
                with(
                    count(),
                    "description",
                    json!("Sources of the concept with a valid resource; sources lists at most 100 of them (and 64 KiB)."),
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
            ("temporal_profile", r("temporal_profile_id")),
            ("temporal_profile_source", r("temporal_profile_source")),
        ]),
    )
}
