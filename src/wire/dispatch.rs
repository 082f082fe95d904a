//! The one dispatcher behind MCP `tools/call` and `okf-mcp call` (spec/surface.md §9.1, R1).

use crate::envelope::{codes, ToolError};
use crate::tools::{Ctx, Success, MAY_HAVE_COMMITTED};
use crate::wire::registry::{self, ToolSpec};
use crate::wire::result::ToolResult;
use crate::wire::{alias, optional, raw, schema};
use serde_json::Value;

/// Runs `tool` on the raw argument bytes (`None` = absent arguments = `{}`).
///
/// Returns `None` when no tool of that name is registered (a protocol error for MCP, a usage
/// error for the CLI). Never panics on any input; a handler panic propagates to the caller,
/// which answers JSON-RPC −32603 / CLI exit 3 (README R28).
#[must_use]
pub fn call(tool: &str, raw_args: Option<&[u8]>, ctx: &Ctx) -> Option<ToolResult> {
    let spec = registry::find(tool)?;
    let started = std::time::Instant::now();
    let (outcome, notices) = crate::notices::collect(|| run(spec, raw_args.unwrap_or(b"{}"), ctx));
    let result = match outcome {
        Ok(success) => enforce_success(spec, with_notices(success, &notices)),
        Err(e) => enforce_error(spec, &e),
    };
    // Names and codes only: never arguments, paths or document text (spec/surface.md §16).
    tracing::debug!(
        tool = spec.name,
        is_error = result.is_error,
        code = result
            .structured
            .get("code")
            .and_then(serde_json::Value::as_str)
            .unwrap_or(""),
        elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "tool call"
    );
    Some(result)
}

fn run(spec: &ToolSpec, raw_args: &[u8], ctx: &Ctx) -> Result<Success, ToolError> {
    // Step 1: a request already cancelled at dispatch.
    ctx.cancel.check()?;
    // A first empty roots/list answer (spec/surface.md §18.4 rule 2a) is said on every answer.
    crate::wire::scope::push_notice();
    // Step 2: raw-argument boundary.
    let mut args =
        raw::decode_arguments_of(raw_args, &|key| schema::is_advertised(spec.name, key))?;
    // spec/surface.md §18.6 rule 3b: an optional top-level `null` is treated as absent; the
    // notice reaches only a success answer.
    let ignored = optional::drop_null_optionals(spec.name, &mut args);
    optional::push_notice(&ignored);
    // Step 3: curated alias table.
    alias::check(spec.name, &args)?;
    // Step 4: the advertised input schema, enforced by the server itself.
    schema::validate_input(spec.name, &args)?;
    // Steps 5–7 belong to the tool: pure checks, then bundle_path, then I/O.
    crate::progress::with_current(&ctx.progress, || (spec.run)(args, ctx))
}

/// Adds the call's notices as the success object's last member `notices` (spec/surface.md
/// §18.1 rule 2), before the first text item is written from it (§18.2 rule 1); the tool's
/// further text items are kept.
fn with_notices(mut s: Success, notices: &[crate::envelope::Diagnostic]) -> Success {
    if let Value::Object(m) = &mut s.structured {
        m.insert(
            "notices".into(),
            Value::Array(
                notices
                    .iter()
                    .map(crate::envelope::Diagnostic::to_wire)
                    .collect(),
            ),
        );
    }
    s
}

fn enforce_success(spec: &ToolSpec, s: Success) -> ToolResult {
    if let Err(mut e) = schema::validate_output(spec.name, &s.structured, false) {
        if s.committed {
            e.message = MAY_HAVE_COMMITTED.to_owned();
        }
        return ToolResult::from_error(&e);
    }
    let size = s.structured.to_string().len();
    if size > 64 * 1024 * 1024 {
        return ToolResult::from_error(&ToolError::resource_limit(
            "tool output exceeds MCP resource limits",
        ));
    }
    ToolResult::success(s.structured, s.more_text)
}

fn enforce_error(spec: &ToolSpec, e: &ToolError) -> ToolResult {
    let result = ToolResult::from_error(e);
    if schema::validate_output(spec.name, &result.structured, true).is_err() {
        let fallback = ToolError::new(
            codes::SCHEMA_VALIDATION,
            "tool output violates its advertised state invariants",
        );
        return ToolResult::from_error(&fallback);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{Diagnostic, Severity};

    #[test]
    fn aut_04_an_error_result_with_both_text_items_fits_64_kib() {
        // Quotes double under JSON escaping: the worst case for the escaped first item.
        let mut e = ToolError::invalid_request("m\"".repeat(200));
        for i in 0..10_000 {
            e = e.with_diagnostic(
                Diagnostic::new("x", Severity::Error, format!("{i}\"").repeat(60))
                    .with_field(format!("operations[{i}]")),
            );
        }
        let r = ToolResult::from_error(&e);
        let n = r.to_call_tool_result_json().to_string().len();
        assert!(n <= crate::envelope::ERROR_RESULT_CAP, "{n} bytes");
        let kept = r.structured["diagnostics"].as_array().map_or(0, Vec::len);
        assert!(kept > 10, "kept {kept}");
        assert_eq!(r.texts.len(), 2);
        assert_eq!(r.texts[0], r.structured.to_string());
        assert_eq!(r.texts[1].lines().count(), 1 + kept);
    }
}
