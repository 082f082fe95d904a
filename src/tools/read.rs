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
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::{self, Declaration, Version};
use crate::store::root;
use crate::store::wait::{self, WaitFor};
use crate::tools::Ctx;
use serde_json::{Map, Value};

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
