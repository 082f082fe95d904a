//! `get_semantic_graph` (spec/surface.md §14.3, §14.5 rule 2, §14.6 rules 8–9, §12.6).
//!
//! Pure checks first (temporal profile, `as_of`, canonical `concept_ids`), then `bundle_path`,
//! one capture, the link graph and the JSON-LD projection ([`crate::view::graph`]). Any concept
//! or reserved document that cannot be parsed fails the call (§12.6). A whole graph over
//! 256 KiB carries the `WARN` notice `large_graph`.

use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::grammar::DocClass;
use crate::tools::common::{bundle_parse_failure, concept_id_arg, str_arg, ReadProfile};
use crate::tools::def::checked_in;
use crate::tools::read;
use crate::tools::schema_parts::{
    as_of_prop, closed, input_root, output_root, profile_branches, r, temporal_profile_prop,
    SchemaRoot, EXAMPLE_BUNDLE_PATH, EXAMPLE_CONCEPT_ID,
};
use crate::tools::{Ctx, Success, ToolSpec};
use crate::view::graph::{self, GraphError, Root};
use serde_json::{json, Value};

/// `get_semantic_graph` as registered (spec/surface.md §2, §14.3).
pub const TOOL: ToolSpec = ToolSpec {
    name: "get_semantic_graph",
    title: "Get the semantic graph (JSON-LD)",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("get_semantic_graph", "input"),
    output_schema: checked_in!("get_semantic_graph", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to export the bundle as linked data: a JSON-LD document with a root node, one node per concept (type, title, description, tags, status, trust, generated, stale_after typed xsd:date or xsd:dateTime, sources, links) and one per source, ordered by @id. concept_ids gives a subgraph; a whole graph over 256 KiB says so (large_graph). Next: get_neighbors or read_concept on a node.";

/// Most `concept_ids` (spec/surface.md §14.6 rule 8).
pub const MAX_SEEDS: u64 = 100;
/// Deepest subgraph.
pub const MAX_DEPTH: u64 = 3;
/// The answer size above which a whole graph carries `large_graph` (spec/surface.md §14.6
/// rules 8–9).
pub const LARGE_GRAPH: usize = 256 * 1024;
/// Largest text of a graph (spec/surface.md §11).
pub const MAX_TEXT: usize = 16 * 1024 * 1024;

/// The member the dispatcher adds to every success object when there is no notice.
const EMPTY_NOTICES: &str = ",\"notices\":[]";

/// The one recovery step of a graph over a size limit: ask for a (smaller) subgraph.
fn narrow_step(subgraph: bool) -> Diagnostic {
    if subgraph {
        Diagnostic::recovery("depth", "Pass fewer concept_ids or a smaller depth.")
    } else {
        Diagnostic::recovery(
            "concept_ids",
            "Ask for a subgraph: pass concept_ids (and depth) to get part of the graph.",
        )
    }
}

/// Code of the notice of a graph answer over 256 KiB.
pub const LARGE_GRAPH_NOTICE: &str = "large_graph";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (temporal profile, `as_of`, a non-canonical id, `bundle_path`, symlinks),
/// `concept_not_found` for an unknown id of `concept_ids`, `operation_rejected` when a document
/// cannot be parsed (§12.6), `resource_limit` over the graph limits (§11),
/// `invalid_projection`, capture and YAML limits, `operation_cancelled`.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let temporal = ReadProfile::from_args(&args)?;
    let seeds: Option<Vec<String>> = args.get("concept_ids").and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    });
    for id in seeds.iter().flatten() {
        concept_id_arg(id)?;
    }
    let depth = args
        .get("depth")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .min(MAX_DEPTH);
    let depth = usize::try_from(depth).unwrap_or(1);
    let capture = read::open(str_arg(&args, "bundle_path"), ctx)?;
    let bundle = read::parse(&capture, None)?;
    if let Some(e) = bundle_parse_failure(&bundle) {
        return Err(e);
    }
    for id in seeds.iter().flatten() {
        let known = bundle
            .doc(&format!("{id}.md"))
            .is_some_and(|d| matches!(&d.class, DocClass::Concept(c) if c == id));
        if !known {
            return Err(ToolError::new(
                codes::CONCEPT_NOT_FOUND,
                "an id of concept_ids names no concept",
            )
            .with_diagnostic(Diagnostic::recovery(
                "concept_ids",
                "Find current ids with search_concepts or list_concepts.",
            )));
        }
    }
    let (resolution, as_of) = temporal.resolve(&capture)?;
    let (_, ver) = read::version(&bundle);
    ctx.cancel.check()?;
    let links = read::link_graph(&bundle);
    ctx.cancel.check()?;
    let only = seeds
        .as_ref()
        .map(|s| graph::subgraph_ids(&links, s, depth));
    let root = Root {
        effective: ver.effective,
        declared: ver.declared.as_deref(),
        profile: resolution.profile,
    };
    let doc = graph::render(&bundle, &links, &root, as_of.as_deref(), only.as_ref()).map_err(
        |e| match e {
            GraphError::TooManyNodes => ToolError::new(
                codes::RESOURCE_LIMIT,
                "the graph exceeds 100,000 nodes",
            )
            .with_diagnostic(narrow_step(only.is_some())),
            GraphError::IdTooLong(path) => ToolError::new(
                codes::RESOURCE_LIMIT,
                "a concept id is too long for a graph node @id (8192 characters once percent-encoded)",
            )
            .with_diagnostic(
                Diagnostic::recovery(
                    "bundle_path",
                    "Give the concept with the longest path (named in file when its path fits) a shorter one: move or rename its file, then repeat the call.",
                )
                .with_file(path),
            ),
            GraphError::Malformed => ToolError::new(
                codes::INVALID_PROJECTION,
                "the graph renderer produced a malformed node collection",
            ),
        },
    )?;
    // The answer's size as the client gets it: the document plus the notices member.
    let size = serde_json::to_string(&doc).map_or(usize::MAX, |s| s.len() + EMPTY_NOTICES.len());
    if size > MAX_TEXT {
        return Err(
            ToolError::new(codes::RESOURCE_LIMIT, "the graph exceeds 16 MiB of text")
                .with_diagnostic(narrow_step(only.is_some())),
        );
    }
    if size > LARGE_GRAPH {
        let advice = if only.is_none() {
            "pass concept_ids (and depth) to get only the part around some concepts"
        } else {
            "pass fewer concept_ids or a smaller depth"
        };
        crate::notices::push(
            Diagnostic::new(
                LARGE_GRAPH_NOTICE,
                Severity::Warn,
                format!("the graph is {} KiB; {advice}", size.div_ceil(1024)),
            )
            .with_field(if only.is_none() {
                "concept_ids"
            } else {
                "depth"
            }),
        );
    }
    Ok(Success::json(doc))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/surface.md §2, §14.3, §14.6 rule 8).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "get_semantic_graph",
        "Arguments of get_semantic_graph (spec/surface.md §2, §14.3, §14.6 rule 8).",
        &["bundle_path"],
        vec![
            ("bundle_path", r("bundle_path")),
            (
                "concept_ids",
                json!({"description": "Only these concepts and those reached within depth hops over relation and navigation edges; leave out for the whole graph.", "type": "array", "minItems": 1, "maxItems": MAX_SEEDS, "uniqueItems": true, "items": r("concept_id")}),
            ),
            (
                "depth",
                json!({"description": "Hops around concept_ids (default 1; 0: only those concepts). An index.md listing counts as one hop.", "type": "integer", "minimum": 0, "maximum": MAX_DEPTH}),
            ),
            ("temporal_profile", temporal_profile_prop()),
            ("as_of", as_of_prop()),
        ],
    );
    profile_branches(&mut m, true, false);
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "concept_ids": [EXAMPLE_CONCEPT_ID], "depth": 1}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §14.3).
fn output_schema() -> SchemaRoot {
    let node = json!({
        "type": "object",
        "required": ["@id", "@type"],
        "properties": {
            "@id": {"type": "string", "minLength": 1, "maxLength": graph::MAX_ID_CHARS},
            "@type": {"type": "string", "enum": ["okf:Bundle", "okf:Concept", "okf:Source"]}
        },
        "additionalProperties": true
    });
    output_root(
        "get_semantic_graph",
        "Result of get_semantic_graph: a JSON-LD document (spec/surface.md §14.3, §14.5 rule 2).",
        closed(vec![
            (
                "@context",
                json!({"type": "object", "required": ["okf", "xsd"], "properties": {"okf": {"const": "https://okf.dev/ns#"}, "xsd": {"const": "http://www.w3.org/2001/XMLSchema#"}}, "additionalProperties": false}),
            ),
            (
                "@graph",
                json!({"type": "array", "minItems": 1, "maxItems": graph::MAX_NODES, "items": node}),
            ),
        ]),
    )
}
