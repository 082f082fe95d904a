//! The JSON-LD projection of a bundle (spec/surface.md §14.3, §14.5 rule 2, §14.6 rule 8): the
//! answer of `get_semantic_graph`. Pure.
//!
//! `@graph[0]` is the root node `okf::bundle`; then one node per concept and one per source
//! item with a valid `resource`, ordered by `@id` (byte order). A concept id inside an `@id` is
//! percent-encoded (RFC 3986: every byte outside the unreserved characters and `/`). Members
//! appear in the spec's order and only when the concept has a value (never `null`); temporal
//! values are typed literals (`xsd:date` under the date profile, `xsd:dateTime` under the
//! instant profile; `generatedAt` always `xsd:dateTime`), and a value invalid under the
//! profile is omitted.
//!
//! A subgraph (`concept_ids`) holds the given concepts and those reached from them within
//! `depth` hops over `relation` and `navigation` edges in either direction (an `index.md`
//! listing counts as a hop and is not a node of the graph), their sources and the root; it is
//! the induced part of the whole graph: each node equals its node in the whole graph, except
//! that `okf:links` names only concepts of the subgraph.

use crate::okf::actor::is_document_actor;
use crate::okf::bundle::Bundle;
use crate::okf::project::{self, field, non_empty_str, temporal_value};
use crate::okf::temporal::Profile;
use crate::okf::yaml::Node;
use crate::view::edges::{self, Direction, EdgeKind, Graph};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// The `@context` of every graph (spec/surface.md §14.5 rule 2).
#[must_use]
pub fn context() -> Value {
    json!({"okf": "https://okf.dev/ns#", "xsd": "http://www.w3.org/2001/XMLSchema#"})
}

/// The `projectionVersion` of this projection.
pub const PROJECTION_VERSION: &str = "1";

/// Most nodes a graph may hold (spec/surface.md §11).
pub const MAX_NODES: usize = 100_000;

/// Longest node `@id`, in characters (spec/surface.md §11).
pub const MAX_ID_CHARS: usize = 8192;

/// Bytes RFC 3986 leaves unencoded in a concept id: the unreserved characters and `/`.
const ID_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// `okf:<percent-encoded concept id>`.
#[must_use]
pub fn concept_node_id(id: &str) -> String {
    format!("okf:{}", utf8_percent_encode(id, ID_ENCODE))
}

/// Why a graph cannot be answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    /// More than [`MAX_NODES`] nodes.
    TooManyNodes,
    /// The `@id` of the concept at this bundle-relative path is over [`MAX_ID_CHARS`]
    /// characters.
    IdTooLong(String),
    /// The renderer produced a malformed node collection (`invalid_projection`).
    Malformed,
}

/// The root node's inputs.
#[derive(Debug, Clone)]
pub struct Root<'a> {
    /// The effective OKF version, if any.
    pub effective: Option<&'a str>,
    /// The declared OKF version, when declared.
    pub declared: Option<&'a str>,
    /// The temporal profile the values are read under.
    pub profile: Profile,
}

fn typed(value: &str, date_typed: bool) -> Value {
    json!({"@value": value, "@type": if date_typed { "xsd:date" } else { "xsd:dateTime" }})
}

fn profile_typed(value: &str, profile: Profile) -> Value {
    typed(value, profile == Profile::Date)
}

/// The source nodes of a concept: `(index in sources, node)` for each item with a valid
/// `resource`.
fn source_nodes(pid: &str, root: Option<&Node>, profile: Profile) -> Vec<(usize, Value)> {
    let Some(items) = field(root, "sources").and_then(Node::items) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let item = item.deref_alias();
        if item.entries().is_none() {
            continue;
        }
        let Some(resource) = project::non_blank_str(item.get("resource")) else {
            continue;
        };
        let mut m = Map::new();
        m.insert("@id".into(), json!(format!("{pid}:source-{i}")));
        m.insert("@type".into(), json!("okf:Source"));
        if let Some(v) = non_empty_str(item.get("id")) {
            m.insert("okf:sourceId".into(), json!(v));
        }
        if let Some(v) = non_empty_str(item.get("title")) {
            m.insert("okf:title".into(), json!(v));
        }
        m.insert("okf:resource".into(), json!(resource));
        if let Some(v) = temporal_value(item.get("last_modified"), profile) {
            m.insert("okf:lastModified".into(), profile_typed(v, profile));
        }
        out.push((i, Value::Object(m)));
    }
    out
}

/// The node of one concept and its source nodes; `links` are the concept ids its relation
/// edges reach (already restricted to the subgraph). `None` when the document cannot be
/// parsed.
fn concept_nodes(
    id: &str,
    doc: &crate::okf::bundle::Doc<'_>,
    profile: Profile,
    as_of: Option<&str>,
    links: &[&str],
) -> Option<Vec<Value>> {
    let card = project::card(id, doc, profile, as_of)?;
    let parsed = doc.parsed().as_ref().ok()?;
    let root = parsed.root();
    let pid = concept_node_id(id);
    let sources = source_nodes(&pid, root, profile);
    let mut m = Map::new();
    m.insert("@id".into(), json!(pid));
    m.insert("@type".into(), json!("okf:Concept"));
    for (key, member) in [
        ("okf:type", "type"),
        ("okf:title", "title"),
        ("okf:description", "description"),
    ] {
        if let Some(v) = card.get(member).filter(|v| !v.is_null()) {
            m.insert(key.into(), v.clone());
        }
    }
    if let Some(tags) = card.get("tags").and_then(Value::as_array) {
        if !tags.is_empty() {
            m.insert("okf:tags".into(), json!(tags));
        }
    }
    if let Some(v) = card.get("status").filter(|v| !v.is_null()) {
        m.insert("okf:status".into(), v.clone());
    }
    if let Some(v) = card.get("trust") {
        m.insert("okf:trust".into(), v.clone());
    }
    if let Some(g) = field(root, "generated").filter(|g| g.entries().is_some()) {
        if let Some(by) = g.get("by").and_then(Node::as_str) {
            if is_document_actor(by) {
                m.insert("okf:generatedBy".into(), json!(by));
            }
        }
    }
    if let Some(at) = project::generated_at(root) {
        m.insert("okf:generatedAt".into(), typed(at, false));
    }
    if let Some(sa) = project::stale_after(root, profile) {
        m.insert("okf:staleAfter".into(), profile_typed(sa, profile));
    }
    if as_of.is_some() {
        if let Some(stale) = card.get("stale").and_then(Value::as_bool) {
            m.insert("okf:stale".into(), json!(stale));
        }
    }
    if !sources.is_empty() {
        let refs: Vec<Value> = sources
            .iter()
            .map(|(i, _)| json!({"@id": format!("{pid}:source-{i}")}))
            .collect();
        m.insert("okf:sources".into(), Value::Array(refs));
    }
    if !links.is_empty() {
        let refs: Vec<Value> = links
            .iter()
            .map(|t| json!({"@id": concept_node_id(t)}))
            .collect();
        m.insert("okf:links".into(), Value::Array(refs));
    }
    let mut out = vec![Value::Object(m)];
    out.extend(sources.into_iter().map(|(_, v)| v));
    Some(out)
}

/// The concept ids of a subgraph: `seeds` and every concept reached from them within `depth`
/// hops over relation and navigation edges, in either direction.
#[must_use]
pub fn subgraph_ids(graph: &Graph, seeds: &[String], depth: usize) -> BTreeSet<String> {
    let kinds = [EdgeKind::Navigation, EdgeKind::Relation];
    let mut out = BTreeSet::new();
    for s in seeds {
        let w = edges::walk(graph, s, Direction::Both, &kinds, depth, usize::MAX);
        out.extend(w.nodes.into_iter().filter(|n| !edges::is_index_node(n)));
    }
    out
}

/// The JSON-LD document of `bundle` (spec/surface.md §14.3): `{"@context", "@graph"}`, only
/// the concepts of `only` when given (a subgraph), else every concept.
///
/// # Errors
/// [`GraphError::TooManyNodes`]; [`GraphError::IdTooLong`] naming the first concept (in
/// path order) whose node or source node `@id` is too long; [`GraphError::Malformed`] when a
/// rendered node lacks a string `@id` or `@type`, or two nodes share an `@id`.
pub fn render(
    bundle: &Bundle<'_>,
    graph: &Graph,
    root: &Root<'_>,
    as_of: Option<&str>,
    only: Option<&BTreeSet<String>>,
) -> Result<Value, GraphError> {
    let concepts: Vec<(&str, &crate::okf::bundle::Doc<'_>)> = bundle
        .concepts()
        .filter(|(id, _)| only.is_none_or(|o| o.contains(*id)))
        .collect();
    let rendered = crate::okf::par::map(&concepts, |(id, doc)| {
        let links: Vec<&str> = graph
            .links_of(id)
            .into_iter()
            .filter(|t| only.is_none_or(|o| o.contains(*t)))
            .collect();
        let nodes = concept_nodes(id, doc, root.profile, as_of, &links).unwrap_or_default();
        let too_long = nodes.iter().any(|n| {
            n.get("@id")
                .and_then(Value::as_str)
                .is_some_and(|i| i.chars().count() > MAX_ID_CHARS)
        });
        if too_long {
            Err(GraphError::IdTooLong(doc.file.path.clone()))
        } else {
            Ok(nodes)
        }
    });
    let mut nodes: Vec<Value> = Vec::new();
    for r in rendered {
        nodes.extend(r?);
    }
    if nodes.len() + 1 > MAX_NODES {
        return Err(GraphError::TooManyNodes);
    }
    nodes.sort_by(by_id);
    let mut r = Map::new();
    r.insert("@id".into(), json!("okf::bundle"));
    r.insert("@type".into(), json!("okf:Bundle"));
    r.insert("okf:projectionVersion".into(), json!(PROJECTION_VERSION));
    if let Some(v) = root.effective {
        r.insert("okf:effectiveOKFVersion".into(), json!(v));
    }
    if let Some(v) = root.declared {
        r.insert("okf:declaredOKFVersion".into(), json!(v));
    }
    r.insert("okf:temporalProfile".into(), json!(root.profile.id()));
    let mut graph_nodes = Vec::with_capacity(nodes.len() + 1);
    graph_nodes.push(Value::Object(r));
    graph_nodes.extend(nodes);
    check(&graph_nodes)?;
    Ok(json!({"@context": context(), "@graph": graph_nodes}))
}

/// Byte order of the nodes' `@id`s.
fn by_id(a: &Value, b: &Value) -> std::cmp::Ordering {
    fn id(v: &Value) -> Option<&[u8]> {
        v.get("@id").and_then(Value::as_str).map(str::as_bytes)
    }
    id(a).cmp(&id(b))
}

/// The output check of spec/surface.md §14.3: every node an object with a string `@id` (at most
/// [`MAX_ID_CHARS`] characters) and `@type`, no `@id` twice.
fn check(nodes: &[Value]) -> Result<(), GraphError> {
    let mut seen = std::collections::HashSet::new();
    for n in nodes {
        let id = n.get("@id").and_then(Value::as_str);
        let ty = n.get("@type").and_then(Value::as_str);
        let (Some(id), Some(_)) = (id, ty) else {
            return Err(GraphError::Malformed);
        };
        if id.chars().count() > MAX_ID_CHARS {
            return Err(GraphError::Malformed);
        }
        if !seen.insert(id) {
            return Err(GraphError::Malformed);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::okf::bundle::parse_bundle;
    use crate::okf::capture::Capture;

    fn bundle_graph(files: &[(&str, &str)], profile: Profile, as_of: Option<&str>) -> Value {
        let c = Capture::from_files(
            files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec())),
        );
        let b = parse_bundle(&c).expect("bundle");
        let g = edges::build(&b);
        let root = Root {
            effective: Some("0.2"),
            declared: None,
            profile,
        };
        render(&b, &g, &root, as_of, None).expect("graph")
    }

    #[test]
    fn over_100_000_nodes_is_a_limit() {
        // 21 concepts × 4,800 sources: 100,821 nodes with the root.
        let sources: String = (0..4_800)
            .map(|i| format!("- {{resource: r{i}}}\n"))
            .collect();
        let files: Vec<(String, Vec<u8>)> = (0..21)
            .map(|k| {
                (
                    format!("c{k}.md"),
                    format!("---\nsources:\n{sources}---\n").into_bytes(),
                )
            })
            .collect();
        let c = Capture::from_files(files);
        let b = parse_bundle(&c).expect("bundle");
        let g = edges::build(&b);
        let root = Root {
            effective: Some("0.2"),
            declared: None,
            profile: Profile::Date,
        };
        assert_eq!(
            render(&b, &g, &root, None, None),
            Err(GraphError::TooManyNodes)
        );
        let only: BTreeSet<String> = ["c0".to_owned()].into();
        let sub = render(&b, &g, &root, None, Some(&only)).expect("a subgraph fits");
        assert_eq!(sub["@graph"].as_array().map(Vec::len), Some(4_802));
    }

    #[test]
    fn ids_are_percent_encoded_and_nodes_sorted_with_typed_values() {
        let files = [
            (
                "a b/c.md",
                "---\ntitle: C\ntags: [x, 3]\nstale_after: 2026-01-01\ngenerated: {by: human:me, at: '2026-01-01T00:00:00Z'}\nsources:\n  - {id: s, resource: 'https://e.test/', last_modified: 2025-01-01}\n  - nope\n  - {resource: 'r2'}\n---\n[d](../d.md)\n",
            ),
            ("d.md", "---\ndescription: D\n---\n"),
        ];
        let g = bundle_graph(&files, Profile::Date, Some("2026-02-01"));
        let ids: Vec<&str> = g["@graph"]
            .as_array()
            .expect("graph")
            .iter()
            .map(|n| n["@id"].as_str().expect("id"))
            .collect();
        assert_eq!(
            ids,
            vec![
                "okf::bundle",
                "okf:a%20b/c",
                "okf:a%20b/c:source-0",
                "okf:a%20b/c:source-2",
                "okf:d"
            ]
        );
        let c = &g["@graph"][1];
        assert_eq!(c["okf:tags"], json!(["x"]));
        assert_eq!(
            c["okf:staleAfter"],
            json!({"@value": "2026-01-01", "@type": "xsd:date"})
        );
        assert_eq!(c["okf:stale"], json!(true));
        assert_eq!(c["okf:generatedBy"], json!("human:me"));
        assert_eq!(c["okf:links"], json!([{"@id": "okf:d"}]));
        let keys: Vec<&String> = c.as_object().expect("node").keys().collect();
        assert_eq!(
            keys,
            vec![
                "@id",
                "@type",
                "okf:title",
                "okf:tags",
                "okf:status",
                "okf:trust",
                "okf:generatedBy",
                "okf:generatedAt",
                "okf:staleAfter",
                "okf:stale",
                "okf:sources",
                "okf:links"
            ]
        );
        // Under the instant profile the date is invalid and omitted.
        let g = bundle_graph(&files, Profile::Instant, None);
        assert!(g["@graph"][1].get("okf:staleAfter").is_none());
        assert!(g["@graph"][1].get("okf:stale").is_none());
    }
}
