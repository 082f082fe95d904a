//! JSON Schema enforcement of the advertised schemas, both directions
//! (spec/surface.md §3, §6.3, §9.3, §17). rmcp advertises schemas but enforces nothing.

use crate::wire::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::wire::registry;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

struct Validators {
    input: jsonschema::Validator,
    success: jsonschema::Validator,
    error: jsonschema::Validator,
}

fn validators() -> &'static HashMap<&'static str, Validators> {
    static V: OnceLock<HashMap<&'static str, Validators>> = OnceLock::new();
    V.get_or_init(|| {
        registry::all()
            .iter()
            .filter_map(|t| {
                let input = parse_schema(t.input_schema)?;
                let output = parse_schema(t.output_schema)?;
                let sub = |def: &str| {
                    let mut s = output.clone();
                    if let Value::Object(m) = &mut s {
                        m.remove("anyOf");
                        m.insert("$ref".into(), Value::String(format!("#/$defs/{def}")));
                    }
                    build(&s)
                };
                Some((
                    t.name,
                    Validators {
                        input: build(&input)?,
                        success: sub("success")?,
                        error: sub("error_envelope")?,
                    },
                ))
            })
            .collect()
    })
}

fn parse_schema(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}

fn build(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .ok()
}

/// The parsed checked-in schema text of a tool, as advertised (member order preserved).
#[must_use]
pub fn advertised(text: &str) -> serde_json::Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

/// Step 4 of spec/surface.md §9.1.
///
/// # Errors
/// `schema_validation`, or `resource_limit` when a size/count keyword failed; diagnostics
/// never echo argument values or unadvertised keys.
pub fn validate_input(tool: &str, args: &Value) -> Result<(), ToolError> {
    let Some(v) = validators().get(tool) else {
        return Err(ToolError::new(
            codes::SCHEMA_VALIDATION,
            "tool schema is unavailable",
        ));
    };
    let mut size_fault = false;
    let mut any = false;
    let mut diags: Vec<Diagnostic> = Vec::new();
    for err in v.input.iter_errors(args) {
        any = true;
        let kw = keyword_name(&err);
        if matches!(kw, "maxLength" | "maxItems" | "maxProperties" | "maximum") {
            size_fault = true;
        }
        let d = Diagnostic::new(
            codes::INVALID_INPUT,
            Severity::Error,
            format!("{kw}: the value does not satisfy the advertised schema"),
        )
        .with_field("arguments");
        if !diags.contains(&d) {
            diags.push(d);
        }
    }
    if !any {
        return Ok(());
    }
    diags.truncate(8);
    let code = if size_fault {
        codes::RESOURCE_LIMIT
    } else {
        codes::SCHEMA_VALIDATION
    };
    let mut e = ToolError::new(code, "arguments do not match the tool's input schema");
    e.diagnostics = diags;
    Err(e)
}

fn keyword_name(err: &jsonschema::ValidationError<'_>) -> &'static str {
    use jsonschema::error::ValidationErrorKind as K;
    match err.kind() {
        K::MaxLength { .. } => "maxLength",
        K::MaxItems { .. } => "maxItems",
        K::MaxProperties { .. } => "maxProperties",
        K::Maximum { .. } => "maximum",
        K::Required { .. } => "required",
        K::Type { .. } => "type",
        K::Enum { .. } => "enum",
        K::Pattern { .. } => "pattern",
        K::Format { .. } => "format",
        K::AdditionalProperties { .. } => "additionalProperties",
        _ => "schema",
    }
}

/// Output enforcement (spec/surface.md §3): a success object against `$defs/success`, an
/// error object against `$defs/error_envelope`.
///
/// # Errors
/// `schema_validation` (`tool output violates its advertised state invariants`).
pub fn validate_output(tool: &str, value: &Value, is_error: bool) -> Result<(), ToolError> {
    let ok = validators().get(tool).is_some_and(|v| {
        if is_error {
            v.error.is_valid(value)
        } else {
            v.success.is_valid(value)
        }
    });
    if ok {
        Ok(())
    } else {
        Err(ToolError::new(
            codes::SCHEMA_VALIDATION,
            "tool output violates its advertised state invariants",
        ))
    }
}
