//! `validate_bundle` (spec/surface.md §12.5, §13.2, README R22, R45).
//!
//! Pure checks first (target version, temporal profile, `as_of`), then `bundle_path`, one
//! capture, and the validator of [`crate::okf::validate`]. A non-conformant bundle is a
//! successful result; parse failures are reported as diagnostics, never as a tool error.

use crate::envelope::{Severity, ToolError};
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::Target;
use crate::tools::common::{insert_profile, str_arg, ReadProfile};
use crate::tools::def::checked_in;
use crate::tools::read;
use crate::tools::schema_parts::{
    as_of_prop, boolean, closed, closed_with, count, input_root, output_root, profile_branches, r,
    temporal_profile_prop, with, SchemaRoot, EXAMPLE_BUNDLE_PATH,
};
use crate::tools::Ctx;
use crate::tools::Success;
use crate::tools::ToolSpec;
use serde_json::{json, Map, Value};

/// `validate_bundle` as registered (spec/surface.md §2, §12.5; annotations spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "validate_bundle",
    title: "Validate a bundle",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("validate_bundle", "input"),
    output_schema: checked_in!("validate_bundle", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// Most diagnostics one report may carry (spec/surface.md §11): the largest `limit`.
pub const MAX_DIAGNOSTICS: u64 = 10_000;

/// `limit` when absent (spec/surface.md §18.5 rule 2).
pub const DEFAULT_LIMIT: u64 = 1_000;

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to check a bundle against OKF: conformance {conformant, errors}, guidance {warnings, info}, diagnostics with stable codes (the first limit of them), diagnostic_counts per code. A non-conformant bundle is a successful result. Next: fix ERROR findings with preview_concept_patch or write_concept, then validate again.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (arguments, `bundle_path`), capture and YAML limits, cancellation.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let flag = |k: &str| args.get(k).and_then(Value::as_bool).unwrap_or(false);
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_DIAGNOSTICS);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let spec_version = match args.get("target_version").and_then(Value::as_str) {
        None | Some("auto") => None,
        Some("0.1") => Some(Target::V01),
        Some("0.2") => Some(Target::V02),
        Some(_) => return Err(ToolError::invalid_request("unknown target_version")),
    };
    let temporal = ReadProfile::from_args(&args)?;
    let bundle_path = str_arg(&args, "bundle_path").to_owned();
    let capture = read::open(&bundle_path, ctx)?;
    let (resolution, as_of) = temporal.resolve(&capture)?;
    let profile = resolution.profile;
    let opts = ValidationOptions {
        strict: flag("strict"),
        check_links: flag("check_links"),
        check_orphans: flag("check_orphans"),
        spec_version,
        temporal_profile: profile,
        as_of: as_of.clone(),
    };
    let bundle = read::parse(&capture, Some(&opts))?;
    ctx.cancel.check()?;
    let report = validate::validate_bundle(&bundle, &opts);
    let (errors, warnings, info) = (
        report.count(Severity::Error),
        report.count(Severity::Warn),
        report.count(Severity::Info),
    );
    let conformant = errors == 0;
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for f in &report.findings {
        let d = f.to_diagnostic();
        *counts.entry(d.code.to_string()).or_default() += 1;
    }
    let truncated = report.findings.len() > limit;
    let diagnostics: Vec<Value> = report
        .findings
        .iter()
        .take(limit)
        .map(|f| f.to_diagnostic().to_wire())
        .collect();
    let mut m = Map::new();
    read::insert_version(&mut m, &report.declaration, &report.version);
    insert_profile(&mut m, &resolution);
    if let Some(a) = &as_of {
        m.insert("as_of".into(), json!(a));
    }
    m.insert("scanned_files".into(), json!(report.scanned_files));
    m.insert(
        "conformance".into(),
        json!({"conformant": conformant, "errors": errors}),
    );
    m.insert(
        "guidance".into(),
        json!({"warnings": warnings, "info": info}),
    );
    m.insert("diagnostics".into(), Value::Array(diagnostics));
    m.insert(
        "diagnostic_counts".into(),
        Value::Object(counts.into_iter().map(|(k, v)| (k, json!(v))).collect()),
    );
    m.insert("diagnostics_truncated".into(), json!(truncated));
    // The one text item is the compact JSON of the object (spec/surface.md §18.2 rule 1).
    Ok(Success::json(Value::Object(m)))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/surface.md §2, §12.5).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "validate_bundle",
        "Arguments of validate_bundle (spec/surface.md §2, §12.5).",
        &["bundle_path"],
        vec![
            ("bundle_path", r("bundle_path")),
            ("strict", boolean()),
            ("check_links", boolean()),
            ("check_orphans", boolean()),
            (
                "target_version",
                json!({"type": "string", "enum": ["auto", "0.1", "0.2"]}),
            ),
            ("temporal_profile", temporal_profile_prop()),
            ("as_of", as_of_prop()),
            (
                "limit",
                json!({"description": "Most diagnostics returned (default 1000); diagnostic_counts always counts every finding.", "type": "integer", "minimum": 1, "maximum": MAX_DIAGNOSTICS}),
            ),
        ],
    );
    profile_branches(&mut m, true, false);
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "strict": true, "target_version": "auto"}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §12.5).
fn output_schema() -> SchemaRoot {
    output_root(
        "validate_bundle",
        "Result of validate_bundle (spec/surface.md §12.5).",
        validate_success(),
    )
}

fn validate_success() -> Value {
    closed_with(
        &[
            "version",
            "version_declaration",
            "temporal_profile",
            "scanned_files",
            "conformance",
            "guidance",
            "diagnostics",
            "diagnostic_counts",
            "diagnostics_truncated",
        ],
        vec![
            ("version", r("version")),
            ("version_declaration", r("version_declaration")),
            ("temporal_profile", r("temporal_profile_id")),
            ("temporal_profile_source", r("temporal_profile_source")),
            (
                "as_of",
                json!({"description": "Present only when as_of was given.", "type": "string"}),
            ),
            ("scanned_files", count()),
            (
                "conformance",
                closed(vec![("conformant", boolean()), ("errors", count())]),
            ),
            (
                "guidance",
                closed(vec![("warnings", count()), ("info", count())]),
            ),
            (
                "diagnostics",
                json!({"type": "array", "maxItems": MAX_DIAGNOSTICS, "items": r("diagnostic")}),
            ),
            (
                "diagnostic_counts",
                json!({"description": "Number of findings per diagnostic code, over all findings (also those left out of diagnostics).", "type": "object", "additionalProperties": count()}),
            ),
            (
                "diagnostics_truncated",
                with(
                    boolean(),
                    "description",
                    json!("True when findings were left out of diagnostics (more than limit)."),
                ),
            ),
        ],
    )
}
