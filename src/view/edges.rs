//! The link graph of a bundle (spec/surface.md §14.2, §14.5 rule 1, §14.6 rule 7): the
//! `navigation` and `relation` edges of `get_neighbors` and the `okf:links` of
//! `get_semantic_graph`. Pure.
//!
//! - A **relation** edge runs from a concept to each other concept its body links to (an
//!   inline `.md` link or a link reference definition, outside code; `okf::markdown::md_links`),
//!   resolved against the linking file's directory (`okf::links::resolve_link`); `relation_type`
//!   is `link`. Several links to one concept are one edge; a link to itself is none.
//! - A **navigation** edge runs from an `index.md` listing to each concept or `index.md` it
//!   links to (OKF 0.2 §8: an index enumerates its directory's contents). An index is a node
//!   of the walk named by its path (`tables/index.md`), never a concept id: concept ids have
//!   no `.md` suffix and no reserved name. Its card is `null`.
//!
//! Edges are unique and sorted by `(kind, from, to)` (byte order; `navigation` < `relation`),
//! spec/surface.md §14.5 rule 1. The edges of a document are a pure function of its path, its
//! bytes and the set of paths of the bundle.

use crate::okf::bundle::Bundle;
use crate::okf::grammar::DocClass;
use crate::okf::links::resolve_link;
use crate::okf::markdown;
use crate::okf::par;
use crate::view::memo::{Cost, Memo};
use std::collections::HashMap;
use std::sync::Arc;

/// The kind of an edge (spec/surface.md §14.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// From an `index.md` listing to what it lists.
    Navigation,
    /// From a concept's body link to another concept.
    Relation,
}

impl EdgeKind {
    /// The wire name of the kind.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Navigation => "navigation",
            EdgeKind::Relation => "relation",
        }
    }

    /// The edge's `relation_type` (spec/surface.md §14.5 rule 1).
    #[must_use]
    pub fn relation_type(self) -> &'static str {
        match self {
            EdgeKind::Navigation => "navigation",
            EdgeKind::Relation => "link",
        }
    }
}

/// One directed edge between two nodes (a concept id, or an `index.md` path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edge<'g> {
    /// Its kind (first in the sort order).
    pub kind: EdgeKind,
    /// The node it leaves.
    pub from: &'g str,
    /// The node it reaches.
    pub to: &'g str,
}

/// Whether a node name is an `index.md` listing rather than a concept id.
#[must_use]
pub fn is_index_node(node: &str) -> bool {
    node == "index.md" || node.ends_with("/index.md")
}

/// Every edge of a bundle, sorted, with lookups by node.
///
/// Node names are interned: `names` holds every node sorted by bytes, and an edge is
/// `(kind, from rank, to rank)`, so the integer order of edges is the `(kind, from, to)` byte
/// order of their names.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    names: Vec<String>,
    /// `(kind, from, to)` as ranks in `names`, unique and sorted.
    edges: Vec<(EdgeKind, u32, u32)>,
    /// Edge indices sorted by `from` (then edge order).
    by_from: Vec<usize>,
    /// Edge indices sorted by `to` (then edge order).
    by_to: Vec<usize>,
}

impl Graph {
    /// Builds the graph from named edges (sorted and deduplicated here).
    #[must_use]
    pub fn from_edges<'a>(edges: impl IntoIterator<Item = (EdgeKind, &'a str, &'a str)>) -> Self {
        let edges: Vec<(EdgeKind, &str, &str)> = edges.into_iter().collect();
        let mut names: Vec<String> = edges
            .iter()
            .flat_map(|(_, f, t)| [(*f).to_owned(), (*t).to_owned()])
            .collect();
        names.sort_unstable();
        names.dedup();
        let rank = |n: &str| -> u32 {
            let i = names.partition_point(|x| x.as_str() < n);
            u32::try_from(i).unwrap_or(u32::MAX)
        };
        let ranked: Vec<(EdgeKind, u32, u32)> = edges
            .iter()
            .map(|(k, f, t)| (*k, rank(f), rank(t)))
            .collect();
        Self::from_ranked(names, ranked)
    }

    /// Builds the graph from `names` (sorted, unique) and edges given as ranks in it.
    fn from_ranked(names: Vec<String>, mut edges: Vec<(EdgeKind, u32, u32)>) -> Self {
        edges.sort_unstable();
        edges.dedup();
        let mut by_from: Vec<usize> = (0..edges.len()).collect();
        by_from.sort_unstable_by_key(|&i| (edges[i].1, i));
        let mut by_to: Vec<usize> = (0..edges.len()).collect();
        by_to.sort_unstable_by_key(|&i| (edges[i].2, i));
        Self {
            names,
            edges,
            by_from,
            by_to,
        }
    }

    /// Estimated heap bytes held: names with their allocations, edges and both lookups.
    #[must_use]
    pub fn cost(&self) -> usize {
        128 + self.names.iter().map(|n| n.len() + 40).sum::<usize>()
            + self.edges.len() * (12 + 8 + 8)
    }

    /// The number of edges.
    #[must_use]
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// Whether the graph has no edge.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The edge at index `i` (in `(kind, from, to)` order).
    ///
    /// # Panics
    /// Never for `i < len()`; an index out of range is a caller bug.
    #[must_use]
    pub fn edge(&self, i: usize) -> Edge<'_> {
        let (kind, f, t) = self.edges[i];
        Edge {
            kind,
            from: &self.names[f as usize],
            to: &self.names[t as usize],
        }
    }

    /// Every edge, in order.
    pub fn edges(&self) -> impl Iterator<Item = Edge<'_>> {
        (0..self.edges.len()).map(|i| self.edge(i))
    }

    fn rank(&self, node: &str) -> Option<u32> {
        self.names
            .binary_search_by(|x| x.as_str().cmp(node))
            .ok()
            .and_then(|i| u32::try_from(i).ok())
    }

    fn range<'g>(
        &'g self,
        index: &'g [usize],
        node: &str,
        end: fn(&(EdgeKind, u32, u32)) -> u32,
    ) -> &'g [usize] {
        let Some(r) = self.rank(node) else {
            return &[];
        };
        let lo = index.partition_point(|&i| end(&self.edges[i]) < r);
        let hi = lo + index[lo..].partition_point(|&i| end(&self.edges[i]) == r);
        // lo ≤ hi ≤ index.len() by construction.
        index.get(lo..hi).unwrap_or(&[])
    }

    /// Indices of the edges leaving `node`, in edge order.
    #[must_use]
    pub fn outgoing(&self, node: &str) -> &[usize] {
        self.range(&self.by_from, node, |e| e.1)
    }

    /// Indices of the edges reaching `node`, in edge order.
    #[must_use]
    pub fn incoming(&self, node: &str) -> &[usize] {
        self.range(&self.by_to, node, |e| e.2)
    }

    /// The concept ids a concept's relation edges reach, unique and sorted (the `okf:links` of
    /// spec/surface.md §14.5 rule 2).
    #[must_use]
    pub fn links_of(&self, id: &str) -> Vec<&str> {
        self.outgoing(id)
            .iter()
            .map(|&i| self.edge(i))
            .filter(|e| e.kind == EdgeKind::Relation)
            .map(|e| e.to)
            .collect()
    }
}

/// `okf::links::resolve_link` for the common target (no `%`, no empty, `.` or `..`
/// segment) without allocating: the resolved path into `buf`; `false` when the target needs
/// the full resolver.
fn resolve_simple(from: &str, target: &str, buf: &mut String) -> bool {
    if target.contains('%') {
        return false;
    }
    let (base, rel) = match target.strip_prefix('/') {
        Some(r) => ("", r),
        None => (from.rsplit_once('/').map_or("", |(d, _)| d), target),
    };
    if rel
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return false;
    }
    buf.clear();
    if !base.is_empty() {
        buf.push_str(base);
        buf.push('/');
    }
    buf.push_str(rel);
    true
}

/// The bundle-relative path a link from `from` (a bundle-relative path) to `target` reaches,
/// into `buf` (`okf::links::resolve_link`); `false` when it reaches none.
fn resolve_into(from: &str, target: &str, buf: &mut String) -> bool {
    if resolve_simple(from, target, buf) {
        return true;
    }
    match resolve_link(from, target) {
        Some(p) => {
            *buf = p;
            true
        }
        None => false,
    }
}

/// Calls `f` with the resolved path of every `.md` link of `body`, the body of the document
/// at `from`, in order, repeats included.
fn for_each_target(from: &str, body: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    markdown::for_each_md_link(body, |target| {
        if resolve_into(from, target, &mut buf) {
            f(&buf);
        }
    });
}

/// The node name of a document: its concept id, or its path for an `index.md`.
fn name_of<'b>(bundle: &'b Bundle<'_>, i: usize) -> Option<&'b str> {
    let d = &bundle.docs[i];
    match &d.class {
        DocClass::Concept(id) => Some(id.as_str()),
        DocClass::Reserved if is_index_node(&d.file.path) => Some(d.file.path.as_str()),
        _ => None,
    }
}

/// The kind of the edges document `i` of `bundle` gives: relation for a concept, navigation
/// for an `index.md`, none for any other document.
#[must_use]
pub fn kind_from(bundle: &Bundle<'_>, i: usize) -> Option<EdgeKind> {
    let doc = bundle.docs.get(i)?;
    match &doc.class {
        DocClass::Concept(_) => Some(EdgeKind::Relation),
        DocClass::Reserved if is_index_node(&doc.file.path) => Some(EdgeKind::Navigation),
        _ => None,
    }
}

/// The link targets of one document: the bundle-relative path of every `.md` link of its
/// body that resolves, unique and ascending by bytes. A pure function of the document's path
/// and bytes, so a warm server keeps it by content digest and path ([`LinkMemo`]); whether a
/// target is a node, and of which kind, is decided against the bundle of each call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocLinks {
    paths: Box<[Box<str>]>,
}

impl DocLinks {
    /// Scans `body`, the body of the document at `path` (bundle-relative).
    #[must_use]
    pub fn scan(path: &str, body: &str) -> Self {
        let mut paths: Vec<Box<str>> = Vec::new();
        for_each_target(path, body, |p| paths.push(Box::from(p)));
        paths.sort_unstable();
        paths.dedup();
        Self {
            paths: paths.into_boxed_slice(),
        }
    }

    /// The targets, ascending by bytes.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(|p| &**p)
    }
}

impl Cost for DocLinks {
    fn cost(&self) -> usize {
        // The slice, and each path's allocation with its header.
        64 + self.paths.iter().map(|p| p.len() + 32).sum::<usize>()
    }
}

/// Link targets of documents by content digest and bundle-relative path (a warm server's,
/// spec/store.md §17 rule 1).
pub type LinkMemo = Memo<DocLinks>;

/// The most bytes (estimated) a server's [`LinkMemo`] holds: 32 MiB.
pub const MAX_LINK_BYTES: usize = 32 * 1024 * 1024;

/// The edges of a bundle's documents (spec/surface.md §14.2). A document that cannot be
/// parsed gives no edge (the tools that use the graph refuse such bundles first,
/// spec/surface.md §12.6).
#[must_use]
pub fn build(bundle: &Bundle<'_>) -> Graph {
    build_with(bundle, &[])
}

/// [`build`], with the link targets of some documents already known: `held[i]`, when
/// present, is [`DocLinks::scan`] of `bundle.docs[i]` (which then is neither parsed nor
/// scanned again); the others (a shorter `held` included) are scanned here. The graph is the
/// one [`build`] gives (a test compares them).
#[must_use]
pub fn build_with(bundle: &Bundle<'_>, held: &[Option<Arc<DocLinks>>]) -> Graph {
    // Every node, ranked by name bytes: documents are in path order, which is not the order
    // of their names (`a/b-c.md` < `a/b.md` while `a/b` < `a/b-c`).
    let mut order: Vec<(usize, &str)> = (0..bundle.docs.len())
        .filter_map(|i| name_of(bundle, i).map(|n| (i, n)))
        .collect();
    order.sort_unstable_by(|a, b| a.1.cmp(b.1));
    let mut rank_of = vec![u32::MAX; bundle.docs.len()];
    for (r, (i, _)) in order.iter().enumerate() {
        rank_of[*i] = u32::try_from(r).unwrap_or(u32::MAX);
    }
    // The node at a path: a concept or an `index.md` of the bundle, as its index in
    // `bundle.docs`.
    let node_at: HashMap<&str, usize, foldhash::fast::RandomState> = order
        .iter()
        .map(|&(i, _)| (bundle.docs[i].file.path.as_str(), i))
        .collect();
    let docs: Vec<usize> = (0..bundle.docs.len()).collect();
    let per_doc = par::map(&docs, |&i| {
        let Some(kind) = kind_from(bundle, i) else {
            return Vec::new();
        };
        let mut edges = Vec::new();
        let push = |path: &str| {
            let Some(&j) = node_at.get(path) else {
                return;
            };
            let to_index = matches!(bundle.docs[j].class, DocClass::Reserved);
            let ok = match kind {
                EdgeKind::Relation => !to_index && j != i,
                EdgeKind::Navigation => j != i,
            };
            if ok {
                edges.push((kind, rank_of[i], rank_of[j]));
            }
        };
        if let Some(links) = held.get(i).and_then(Option::as_ref) {
            links.paths().for_each(push);
            return edges;
        }
        let parsed = bundle.docs[i].parsed_transient();
        let Ok(p) = &*parsed else {
            return Vec::new();
        };
        for_each_target(&bundle.docs[i].file.path, p.split.body_text(), push);
        edges
    });
    let names = order.into_iter().map(|(_, n)| n.to_owned()).collect();
    Graph::from_ranked(names, per_doc.into_iter().flatten().collect())
}

/// Which edges of a node a walk follows (spec/surface.md §14.2 `direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Edges reaching the node (backlinks).
    In,
    /// Edges leaving the node.
    Out,
    /// Both.
    Both,
}

impl Direction {
    /// Parses the wire name (`in`, `out`, `both`).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "in" => Some(Direction::In),
            "out" => Some(Direction::Out),
            "both" => Some(Direction::Both),
            _ => None,
        }
    }

    /// The wire name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::In => "in",
            Direction::Out => "out",
            Direction::Both => "both",
        }
    }
}

/// What a breadth-first walk reached (spec/surface.md §14.6 rules 7–8).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Walk {
    /// The nodes reached, the start first, in breadth-first order (each node's edges in
    /// edge order).
    pub nodes: Vec<String>,
    /// The edges followed, as (edge index, far end) sorted by edge order: an edge of a node
    /// at distance < depth, in the walk's direction, whose far end was reached.
    pub edges: Vec<(usize, String)>,
    /// Whether `max_nodes` refused a node the walk would have reached.
    pub truncated: bool,
}

/// Walks `graph` breadth first from `start` along `direction` over the edges of `kinds`,
/// at most `depth` hops, reaching at most `max_nodes` nodes (the start included).
#[must_use]
pub fn walk(
    graph: &Graph,
    start: &str,
    direction: Direction,
    kinds: &[EdgeKind],
    depth: usize,
    max_nodes: usize,
) -> Walk {
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    seen.insert(start.to_owned());
    let mut w = Walk {
        nodes: vec![start.to_owned()],
        ..Walk::default()
    };
    let mut frontier = vec![start.to_owned()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for node in &frontier {
            let mut steps: Vec<(usize, &str)> = Vec::new();
            if matches!(direction, Direction::Out | Direction::Both) {
                steps.extend(graph.outgoing(node).iter().map(|&i| (i, graph.edge(i).to)));
            }
            if matches!(direction, Direction::In | Direction::Both) {
                steps.extend(
                    graph
                        .incoming(node)
                        .iter()
                        .map(|&i| (i, graph.edge(i).from)),
                );
            }
            steps.sort_unstable();
            for (i, far) in steps {
                if !kinds.contains(&graph.edge(i).kind) {
                    continue;
                }
                if !seen.contains(far) {
                    if w.nodes.len() >= max_nodes {
                        w.truncated = true;
                        continue;
                    }
                    seen.insert(far.to_owned());
                    w.nodes.push(far.to_owned());
                    next.push(far.to_owned());
                }
                w.edges.push((i, far.to_owned()));
            }
        }
        frontier = next;
        if frontier.is_empty() {
            break;
        }
    }
    w.edges.sort();
    w.edges.dedup_by(|a, b| a.0 == b.0);
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::okf::bundle::parse_bundle;
    use crate::okf::capture::Capture;

    fn graph(files: &[(&str, &str)]) -> Vec<(String, String, String)> {
        let c = Capture::from_files(
            files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec())),
        );
        let b = parse_bundle(&c).expect("bundle");
        build(&b)
            .edges()
            .map(|e| {
                (
                    e.kind.as_str().to_owned(),
                    e.from.to_owned(),
                    e.to.to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn navigation_from_index_listings_relation_from_body_links() {
        let e = graph(&[
            ("index.md", "# Tables\n\n* [O](tables/orders.md) - x\n* [T](tables/index.md)\n"),
            ("tables/index.md", "* [C](customers.md)\n* [gone](gone.md)\n"),
            (
                "tables/orders.md",
                "---\ntitle: O\n---\nSee [c](customers.md), [c again](./customers.md), [me](orders.md), [idx](index.md) and `[no](x.md)`.\n",
            ),
            ("tables/customers.md", "---\ntitle: C\n---\n[up](../index.md)\n"),
        ]);
        let s = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
        assert_eq!(
            e,
            vec![
                s("navigation", "index.md", "tables/index.md"),
                s("navigation", "index.md", "tables/orders"),
                s("navigation", "tables/index.md", "tables/customers"),
                s("relation", "tables/orders", "tables/customers"),
            ]
        );
    }

    fn named(g: &Graph) -> Vec<(EdgeKind, String, String)> {
        g.edges()
            .map(|e| (e.kind, e.from.to_owned(), e.to.to_owned()))
            .collect()
    }

    /// The graph from held link targets, of every document or of some, equals the graph of
    /// scanning every body (what a warm server answers is what a cold call answers).
    #[test]
    fn the_graph_from_held_link_targets_equals_the_scanned_graph() {
        let files: &[(&str, &str)] = &[
            (
                "index.md",
                "* [A](a/x.md)\n* [B](/b/y.md)\n* [I](a/index.md)\n* [bad](../out.md)\n",
            ),
            ("a/index.md", "* [X](x.md)\n* [Z](./z%20z.md)\n* [up](../index.md)\n"),
            (
                "a/x.md",
                "---\ntitle: X\n---\n[y](../b/y.md) [y again](/b/y.md) [self](x.md) [z](z%20z.md) `[no](b.md)`\n\n[ref]: ../b/y.md\n",
            ),
            ("a/z z.md", "---\ntitle: Z\n---\n[x](x.md) [i](index.md) [gone](gone.md)\n"),
            ("b/y.md", "---\ntitle: Y\n---\n[x](../a/x.md)\n"),
            ("b/notes.txt", "[x](../a/x.md)\n"),
        ];
        let c = Capture::from_files(
            files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec())),
        );
        let b = parse_bundle(&c).expect("bundle");
        let cold = named(&build(&b));
        assert!(cold.len() >= 8, "{cold:?}");
        let scanned: Vec<Option<Arc<DocLinks>>> = b
            .docs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                kind_from(&b, i)?;
                let p = d.parsed_transient();
                let Ok(p) = &*p else { return None };
                Some(Arc::new(DocLinks::scan(&d.file.path, p.split.body_text())))
            })
            .collect();
        assert_eq!(named(&build_with(&b, &scanned)), cold, "all held");
        for skip in 0..scanned.len() {
            let mut some = scanned.clone();
            some[skip] = None;
            assert_eq!(named(&build_with(&b, &some)), cold, "all but {skip}");
            let mut short = scanned.clone();
            short.truncate(skip);
            assert_eq!(named(&build_with(&b, &short)), cold, "first {skip}");
        }
        let x = b
            .docs
            .iter()
            .position(|d| d.file.path == "a/x.md")
            .expect("a/x.md");
        let held = scanned[x].as_ref().expect("a concept has links");
        assert_eq!(
            held.paths().collect::<Vec<_>>(),
            vec!["a/x.md", "a/z z.md", "b/y.md"],
            "unique, sorted, unresolvable and code links left out"
        );
    }

    fn chain() -> Graph {
        Graph::from_edges(vec![
            (EdgeKind::Relation, "a", "b"),
            (EdgeKind::Relation, "b", "c"),
            (EdgeKind::Relation, "c", "a"),
            (EdgeKind::Navigation, "index.md", "a"),
            (EdgeKind::Relation, "d", "a"),
        ])
    }

    #[test]
    fn the_simple_resolver_equals_the_full_one_where_it_answers() {
        let mut buf = String::new();
        for (from, target) in [
            ("a/b.md", "c.md"),
            ("a/b.md", "/c.md"),
            ("b.md", "c/d.md"),
            ("a/b.md", "../c.md"),
            ("a/b.md", "./c.md"),
            ("a/b.md", "c%20d.md"),
            ("a/b.md", "c//d.md"),
            ("a/b/c.md", "d/e.md"),
        ] {
            if resolve_simple(from, target, &mut buf) {
                assert_eq!(
                    Some(buf.clone()),
                    resolve_link(from, target),
                    "{from} {target}"
                );
            }
        }
        assert!(!resolve_simple("a/b.md", "../c.md", &mut buf));
        assert!(resolve_simple("a/b.md", "c.md", &mut buf));
    }

    #[test]
    fn walks_by_direction_depth_kinds_and_max_nodes() {
        let g = chain();
        let all = [EdgeKind::Navigation, EdgeKind::Relation];
        let w = walk(&g, "a", Direction::Out, &all, 1, 200);
        assert_eq!(w.nodes, vec!["a", "b"]);
        let w = walk(&g, "a", Direction::In, &all, 1, 200);
        assert_eq!(w.nodes, vec!["a", "index.md", "c", "d"]);
        let w = walk(&g, "a", Direction::Out, &all, 3, 200);
        assert_eq!(w.nodes, vec!["a", "b", "c"]);
        assert_eq!(w.edges.len(), 3, "the edge back to a is followed too");
        let w = walk(&g, "a", Direction::Both, &[EdgeKind::Relation], 1, 2);
        assert!(w.truncated);
        assert_eq!(w.nodes.len(), 2);
        assert_eq!(w.edges.len(), 1);
    }
}
