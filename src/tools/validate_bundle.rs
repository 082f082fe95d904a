//! `validate_bundle` (spec/surface.md §12.5, §13.2, README R22, R45).
//!
//! Pure checks first (target version, temporal profile, `as_of`), then `bundle_path`, one
//! capture, and the validator of [`crate::okf::validate`]. A non-conformant bundle is a
//! successful result; parse failures are reported as diagnostics, never as a tool error.

use crate::envelope::{Severity, ToolError};
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::Target;
use crate::tools::common::{as_of_arg, capture_bundle, profile_arg, str_arg};
use crate::tools::Ctx;
use crate::tools::Success;
use serde_json::{json, Map, Value};

/// Most diagnostics one report may carry (spec/surface.md §11).
pub const MAX_DIAGNOSTICS: usize = 10_000;

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (arguments, `bundle_path`), capture and YAML limits, cancellation.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let flag = |k: &str| args.get(k).and_then(Value::as_bool).unwrap_or(false);
    let spec_version = match args.get("target_version").and_then(Value::as_str) {
        None | Some("auto") => None,
        Some("0.1") => Some(Target::V01),
        Some("0.2") => Some(Target::V02),
        Some(_) => return Err(ToolError::invalid_request("unknown target_version")),
    };
    let profile = profile_arg(&args)?;
    let as_of = as_of_arg(&args, profile)?;
    let opts = ValidationOptions {
        strict: flag("strict"),
        check_links: flag("check_links"),
        check_orphans: flag("check_orphans"),
        spec_version,
        temporal_profile: profile,
        as_of: as_of.clone(),
    };
    let bundle_path = str_arg(&args, "bundle_path").to_owned();
    let capture = capture_bundle(&bundle_path, ctx)?;
    let bundle = validate::parse_for_validation(&capture, &opts).map_err(|f| f.to_tool_error())?;
    ctx.cancel.check()?;
    let report = validate::validate_bundle(&bundle, &opts);
    if report.findings.len() > MAX_DIAGNOSTICS {
        return Err(ToolError::resource_limit(
            "validation produced more than 10,000 diagnostics",
        ));
    }
    let (errors, warnings, info) = (
        report.count(Severity::Error),
        report.count(Severity::Warn),
        report.count(Severity::Info),
    );
    let conformant = errors == 0;
    let diagnostics: Vec<Value> = report
        .findings
        .iter()
        .map(|f| f.to_diagnostic().to_wire())
        .collect();
    let legacy_diags: Vec<Value> = diagnostics
        .iter()
        .map(|d| json!({"code": d["code"], "severity": d["severity"], "file": d["file"], "message": d["message"]}))
        .collect();
    let mut m = Map::new();
    m.insert("version".into(), report.version.to_json());
    m.insert("version_declaration".into(), report.declaration.to_json());
    m.insert("temporal_profile".into(), json!(profile.id()));
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
    let text = json!({
        "scanned_files": report.scanned_files,
        "conformant": conformant,
        "errors": errors,
        "warnings": warnings,
        "info": info,
        "diagnostics": legacy_diags,
    });
    Ok(Success::with_text(Value::Object(m), text.to_string()))
}
