//! The read tools' pipeline (spec/surface.md §12; `read_concept`, `list_concepts`,
//! `validate_bundle`): [`open`] validates `bundle_path` and captures the bundle as a reader,
//! asking the store explicitly to wait for a commit in flight ([`WaitFor::Publication`],
//! spec/store.md §16 rule 2); [`parse`] reads the capture into documents; the temporal
//! profile resolves on the capture ([`crate::tools::common::ReadProfile::resolve`]);
//! [`version`] gives the declaration and the effective version (spec/surface.md §12.1), which
//! [`insert_version`] writes into the output. The read tools use of the store only its root,
//! capture and wait modules (tests/it/layers.rs).

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
use std::sync::{Arc, LazyLock};

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

/// The link graph of `bundle` (`get_neighbors`, `get_semantic_graph`; [`edges::build`]). A
/// warm server ([`crate::store::capture::is_warm`]) keeps each document's link targets by
/// content digest and path and scans only the documents it has not seen, so a call after an
/// edit scans the changed files; the graph is the one of a cold call.
#[must_use]
pub fn link_graph(bundle: &Bundle<'_>) -> Graph {
    if !crate::store::capture::is_warm() {
        return edges::build(bundle);
    }
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
