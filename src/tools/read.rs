//! The read tools' pipeline (spec/surface.md §12; `read_concept`, `list_concepts`,
//! `validate_bundle`): [`open`] validates `bundle_path` and captures the bundle as a reader,
//! asking the store explicitly to wait for a commit in flight ([`WaitFor::Publication`],
//! spec/store.md §16 rule 2); [`parse`] reads the capture into documents; the temporal
//! profile resolves on the capture ([`crate::tools::common::ReadProfile::resolve`]);
//! [`version`] gives the declaration and the effective version (spec/surface.md §12.1), which
//! [`insert_version`] writes into the output; [`link_graph`] gives `get_neighbors` and
//! `get_semantic_graph` the link graph, kept per document and per revision by a warm server.
//! The read tools use of the store only its root, capture and wait modules
//! (tests/it/layers.rs).

use crate::envelope::ToolError;
use crate::okf::bundle::{parse_bundle, Bundle};
use crate::okf::capture::Capture;
use crate::okf::par;
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::{self, Declaration, Version};
use crate::store::root;
use crate::store::wait::{self, WaitFor};
use crate::tools::Ctx;
use crate::view::edges::{self, DocLinks, Graph, LinkMemo};
use crate::view::memo::DocKey;
use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock, Mutex};

/// Validates `bundle_path` (spec/surface.md §7) and captures the bundle (spec/store.md §3) as
/// a reader: a commit in flight is waited for, else the answer carries the
/// `publication_pending` notice (spec/store.md §16 rule 2).
///
/// # Errors
/// The `bundle_path` and capture errors of the spec; `operation_cancelled`.
pub fn open(bundle_path: &str, ctx: &Ctx) -> Result<Capture, ToolError> {
    ctx.cancel.check()?;
    let root = root::open(bundle_path)?;
    wait::capture_after(WaitFor::Publication, &root, &ctx.cancel, None)
}

/// Parses `capture` into documents: plainly, or under the validator's `opts`
/// (`validate_bundle`).
///
/// # Errors
/// A bundle-wide fault (spec/store.md §3.4), mapped to its tool error.
pub fn parse<'c>(
    capture: &'c Capture,
    opts: Option<&ValidationOptions>,
) -> Result<Bundle<'c>, ToolError> {
    match opts {
        None => parse_bundle(capture),
        Some(o) => validate::parse_for_validation(capture, o),
    }
    .map_err(|f| f.to_tool_error())
}

/// The bundle's version declaration and its effective version without a target
/// (spec/surface.md §12.1).
#[must_use]
pub fn version(bundle: &Bundle<'_>) -> (Declaration, Version) {
    let decl = version::declaration(bundle);
    let ver = version::resolve(&decl, None);
    (decl, ver)
}

/// Adds `version` and `version_declaration` to a read tool's output, in that order.
pub fn insert_version(m: &mut Map<String, Value>, decl: &Declaration, ver: &Version) {
    m.insert("version".into(), ver.to_json());
    m.insert("version_declaration".into(), decl.to_json());
}

/// The link targets a warm server keeps (spec/store.md §17 rule 1): by content digest and
/// path, within [`edges::MAX_LINK_BYTES`].
static LINKS: LazyLock<LinkMemo> = LazyLock::new(|| LinkMemo::new(edges::MAX_LINK_BYTES));

/// The graphs of the last [`GRAPHS_KEPT`] revisions a warm server built, the latest first,
/// within [`MAX_KEPT_GRAPH_BYTES`]: a graph is a pure function of the revision (the path and
/// bytes of every file).
static GRAPHS: Mutex<Vec<(String, Arc<Graph>)>> = Mutex::new(Vec::new());

/// How many graphs [`GRAPHS`] keeps.
const GRAPHS_KEPT: usize = 4;

/// The most bytes (estimated, [`Graph::cost`]) the kept graphs hold together: 64 MiB. A graph
/// larger than this alone is not kept.
const MAX_KEPT_GRAPH_BYTES: usize = 64 * 1024 * 1024;

/// The link graph of `bundle` (`get_neighbors`, `get_semantic_graph`; [`edges::build`]). A
/// warm server ([`crate::store::capture::is_warm`]) keeps the graphs of its last revisions,
/// and each document's link targets by content digest and path, so a call on an unchanged
/// bundle builds nothing and a call after an edit scans only the changed files; the graph
/// is the one of a cold call.
#[must_use]
pub fn link_graph(bundle: &Bundle<'_>) -> Arc<Graph> {
    if !crate::store::capture::is_warm() {
        return Arc::new(edges::build(bundle));
    }
    let revision = bundle.capture.revision.as_str();
    {
        let mut kept = GRAPHS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(at) = kept.iter().position(|(r, _)| r == revision) {
            let hit = kept.remove(at);
            let graph = Arc::clone(&hit.1);
            kept.insert(0, hit);
            return graph;
        }
    }
    let graph = Arc::new(build_from_links(bundle));
    if graph.cost() <= MAX_KEPT_GRAPH_BYTES {
        let mut kept = GRAPHS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.retain(|(r, _)| r != revision);
        kept.insert(0, (revision.to_owned(), Arc::clone(&graph)));
        kept.truncate(GRAPHS_KEPT);
        let mut total = 0usize;
        kept.retain(|(_, g)| {
            total += g.cost();
            total <= MAX_KEPT_GRAPH_BYTES
        });
    }
    graph
}

/// [`edges::build_with`] from the link targets [`LINKS`] holds, scanning and keeping the
/// missing ones.
fn build_from_links(bundle: &Bundle<'_>) -> Graph {
    let wanted: Vec<usize> = (0..bundle.docs.len())
        .filter(|&i| edges::kind_from(bundle, i).is_some())
        .collect();
    let keys: Vec<DocKey> = wanted
        .iter()
        .map(|&i| {
            let f = &bundle.docs[i].file;
            (f.digest, Box::from(f.path.as_str()))
        })
        .collect();
    let got = LINKS.begin(&keys);
    let missing: Vec<usize> = (0..wanted.len())
        .filter(|&k| got.get(k).is_none_or(Option::is_none))
        .collect();
    let scanned: Vec<Option<Arc<DocLinks>>> = par::map(&missing, |&k| {
        let doc = &bundle.docs[wanted[k]];
        match &*doc.parsed_transient() {
            Ok(p) => Some(Arc::new(DocLinks::scan(
                &doc.file.path,
                p.split.body_text(),
            ))),
            // No edge, as a cold call gives (the tools refuse such a bundle first).
            Err(_) => None,
        }
    });
    let mut held: Vec<Option<Arc<DocLinks>>> = vec![None; bundle.docs.len()];
    for (&i, links) in wanted.iter().zip(got) {
        held[i] = links;
    }
    let mut built = Vec::with_capacity(missing.len());
    for (&k, links) in missing.iter().zip(scanned) {
        if let Some(links) = links {
            held[wanted[k]] = Some(Arc::clone(&links));
            built.push((keys[k].clone(), links));
        }
    }
    let refused = LINKS.keep(built);
    let (entries, bytes) = LINKS.usage();
    tracing::debug!(
        documents = wanted.len(),
        scanned = missing.len(),
        refused,
        entries,
        bytes,
        "link targets"
    );
    edges::build_with(bundle, &held)
}
