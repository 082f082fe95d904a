//! Helpers shared by tool handlers: capture of a validated `bundle_path` and the mapping of
//! bundle-wide parse faults (spec/store.md §3.4, README R4).

use crate::okf::bundle::BundleFault;
use crate::store::capture::{self, Capture};
use crate::store::root;
use crate::wire::dispatch::Ctx;
use crate::wire::envelope::{codes, Diagnostic, Severity, ToolError};
use serde_json::Value;

/// Validates `bundle_path` (spec/surface.md §7) and captures the bundle (spec/store.md §3).
///
/// # Errors
/// The `bundle_path` and capture errors of the spec.
pub fn capture_bundle(bundle_path: &str, ctx: &Ctx) -> Result<Capture, ToolError> {
    ctx.cancel.check()?;
    let root = root::open(bundle_path)?;
    capture::capture(&root, &ctx.cancel)
}

/// Maps a bundle-wide YAML fault to its tool error (spec/store.md §3.4).
#[must_use]
pub fn bundle_fault(f: &BundleFault) -> ToolError {
    match f {
        BundleFault::Limit { path } => {
            ToolError::resource_limit("a document exceeds the YAML resource limits")
                .with_diagnostic(
                    Diagnostic::new(
                        codes::RESOURCE_LIMIT,
                        Severity::Error,
                        "frontmatter exceeds the YAML resource limits",
                    )
                    .with_file(path.clone()),
                )
        }
        BundleFault::Graph { path } => ToolError::new(
            codes::INVALID_YAML_GRAPH,
            "a document has a broken YAML graph",
        )
        .with_diagnostic(
            Diagnostic::new(
                codes::INVALID_YAML_GRAPH,
                Severity::Error,
                "frontmatter has a broken YAML graph",
            )
            .with_file(path.clone()),
        ),
    }
}

/// A required string argument of a schema-valid object (the schema guarantees presence).
#[must_use]
pub fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}
