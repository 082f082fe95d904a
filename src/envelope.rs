//! The error envelope, diagnostics and message redaction (spec/surface.md §4, §6, §10).
//!
//! Every tool error leaves the server as `{code, message, retryable, diagnostics}`. This module
//! owns the one place where internal findings become wire objects: code sanitising, severity
//! mapping, the 512-byte caps and redaction all happen in [`ToolError::to_wire`] and
//! [`Diagnostic::to_wire`].

use serde_json::{json, Map, Value};

/// Stable wire error codes (spec/surface.md §5). Lower snake case, never renamed.
pub mod codes {
    /// Input fails the advertised schema (no size keyword), or output violates its schema/invariants.
    pub const SCHEMA_VALIDATION: &str = "schema_validation";
    /// A key of the curated alias table (§9.4); names the canonical parameter.
    pub const UNKNOWN_PARAMETER: &str = "unknown_parameter";
    /// Raw-argument, `bundle_path`, runtime grammar and domain faults; refused bundle entries.
    pub const INVALID_REQUEST: &str = "invalid_request";
    /// Any size or count cap (§11).
    pub const RESOURCE_LIMIT: &str = "resource_limit";
    /// A non-canonical revision reaching an apply handler (defensive).
    pub const INVALID_REVISION: &str = "invalid_revision";
    /// Wrong or non-canonical plan digest; rebuilt plan or receipt does not match.
    pub const PLAN_MISMATCH: &str = "plan_mismatch";
    /// The bundle changed since the preview and no matching receipt exists (retryable).
    pub const REVISION_CONFLICT: &str = "revision_conflict";
    /// The derived key names a receipt of a different request.
    pub const IDEMPOTENCY_CONFLICT: &str = "idempotency_conflict";
    /// Cancelled before the durability boundary, or lock wait timeout (retryable).
    pub const OPERATION_CANCELLED: &str = "operation_cancelled";
    /// Generic failure, corrupt private state, blocked publication, parse failures of read tools.
    pub const OPERATION_REJECTED: &str = "operation_rejected";
    /// A broken YAML graph (duplicate anchor, undefined alias, bad merge key).
    pub const INVALID_YAML_GRAPH: &str = "invalid_yaml_graph";
    /// No concept with the requested id.
    pub const CONCEPT_NOT_FOUND: &str = "concept_not_found";
    /// The graph renderer produced a malformed node collection (`get_semantic_graph`).
    pub const INVALID_PROJECTION: &str = "invalid_projection";
    /// Diagnostic code of the one recovery hint a recoverable error carries (§6.2).
    pub const RECOVERY_STEP: &str = "recovery_step";
    /// Diagnostic code of schema guidance (§6.3).
    pub const INVALID_INPUT: &str = "invalid_input";
}

/// Maximum bytes of an error or diagnostic message (spec/surface.md §4, §6.1).
pub const MESSAGE_CAP: usize = 512;
/// Maximum serialised size of an error result; diagnostics are dropped from the end to fit.
pub const ERROR_RESULT_CAP: usize = 64 * 1024;
/// Fixed replacement of a sensitive message (spec/surface.md §10 rule 3).
pub const REDACTED: &str = "operation failed; sensitive path redacted";

/// Severity of a diagnostic (spec/surface.md §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warn,
    Info,
}

impl Severity {
    /// Wire spelling: `ERROR`, `WARN`, `INFO`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Warn => "WARN",
            Severity::Info => "INFO",
        }
    }
}

/// An internal finding; becomes the seven-member wire diagnostic of spec/surface.md §6.1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: String,
    pub severity: Severity,
    /// Bundle-relative path (spec/store.md §3.2) or empty.
    pub file: String,
    /// Dotted input path or empty; for `unknown_parameter`, the canonical replacement.
    pub field: String,
    pub message: String,
    pub spec_ref: String,
    pub policy_failure: bool,
}

impl Diagnostic {
    /// A diagnostic with empty `file`, `field`, `spec_ref` and `policy_failure: false`.
    #[must_use]
    pub fn new(code: impl Into<String>, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            severity,
            file: String::new(),
            field: String::new(),
            message: message.into(),
            spec_ref: String::new(),
            policy_failure: false,
        }
    }

    /// Sets `file` (a bundle-relative path).
    #[must_use]
    pub fn with_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }

    /// Sets `field` (a dotted input path or a canonical replacement).
    #[must_use]
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }

    /// The `recovery_step` INFO diagnostic of spec/surface.md §6.2.
    #[must_use]
    pub fn recovery(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(codes::RECOVERY_STEP, Severity::Info, message).with_field(field)
    }

    /// The wire object: members in the order of spec/surface.md §6.1, code sanitised,
    /// message redacted and capped, `file` blanked unless it is a canonical bundle path.
    #[must_use]
    pub fn to_wire(&self) -> Value {
        let message = {
            let m = redact(&self.message);
            if m.len() > MESSAGE_CAP {
                "diagnostic message exceeds the size limit".to_owned()
            } else {
                m
            }
        };
        let file = if self.file.len() <= MESSAGE_CAP && is_bundle_relative_path(&self.file) {
            self.file.clone()
        } else {
            String::new()
        };
        json!({
            "code": sanitize_code(&self.code),
            "severity": self.severity.as_str(),
            "file": file,
            "field": self.field,
            "message": message,
            "spec_ref": self.spec_ref,
            "policy_failure": self.policy_failure,
        })
    }
}

/// A tool error: becomes `isError: true` with the envelope of spec/surface.md §4.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// A code of [`codes`]; sanitised to `^[a-z0-9_]+$` on the wire.
    pub code: String,
    /// One concrete sentence; redacted and capped at 512 bytes on the wire (§4, §10).
    pub message: String,
    /// As the catalogue of spec/surface.md §5 says for `code`.
    pub retryable: bool,
    /// At most 10,000, trimmed so the whole error result fits 64 KiB.
    pub diagnostics: Vec<Diagnostic>,
}

impl ToolError {
    /// A new error; `retryable` follows the catalogue of spec/surface.md §5 for `code`.
    #[must_use]
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        let retryable = matches!(
            code,
            codes::REVISION_CONFLICT | codes::OPERATION_CANCELLED | "source_conflict"
        );
        Self {
            code: code.to_owned(),
            message: message.into(),
            retryable,
            diagnostics: Vec::new(),
        }
    }

    /// `invalid_request` with `message`.
    #[must_use]
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }

    /// `resource_limit` with `message` and the generic recovery step (field empty).
    #[must_use]
    pub fn resource_limit(message: impl Into<String>) -> Self {
        Self::new(codes::RESOURCE_LIMIT, message).with_diagnostic(Diagnostic::recovery(
            "",
            "Narrow the request or reduce its scope; repeating the same call hits the same limit.",
        ))
    }

    /// `operation_cancelled`, retryable, without diagnostics.
    #[must_use]
    pub fn cancelled() -> Self {
        Self::new(codes::OPERATION_CANCELLED, "operation was cancelled")
    }

    /// Appends a diagnostic.
    #[must_use]
    pub fn with_diagnostic(mut self, d: Diagnostic) -> Self {
        self.diagnostics.push(d);
        self
    }

    /// The envelope message after redaction and the 512-byte cut.
    #[must_use]
    pub fn wire_message(&self) -> String {
        let m = redact(&self.message);
        let m = if m.is_empty() {
            "operation failed".to_owned()
        } else {
            m
        };
        cap_message(&m)
    }

    /// The envelope `{code, message, retryable, diagnostics}`; a diagnostic equal on the
    /// wire to an earlier one is left out (a diagnostic is never repeated in one answer,
    /// spec/surface.md §18.6 rule 3b); diagnostics are capped at 10,000 and dropped from the
    /// end until the serialised result fits 64 KiB.
    ///
    /// The result carries each diagnostic three times (spec/surface.md §18.2): in
    /// `structuredContent`, in the first text item (its compact JSON, escaped once more as a
    /// JSON string) and as one line of the second text item; the budget counts all three.
    #[must_use]
    pub fn to_wire(&self) -> Value {
        let message = self.wire_message();
        let mut diags: Vec<Value> = Vec::new();
        // Fixed overhead: the envelope members, their escaped copy in the first text item and
        // the message line of the second (each escape at most doubles a byte).
        let mut size = 512 + 5 * message.len();
        let mut seen = std::collections::HashSet::new();
        for d in self.diagnostics.iter() {
            if diags.len() == 10_000 {
                break;
            }
            let w = d.to_wire();
            let text = w.to_string();
            if !seen.insert(text.clone()) {
                continue;
            }
            let n = 5 * (text.len() + 1);
            if size + n > ERROR_RESULT_CAP {
                break;
            }
            size += n;
            diags.push(w);
        }
        let mut m = Map::new();
        m.insert("code".into(), Value::String(sanitize_code(&self.code)));
        m.insert("message".into(), Value::String(message));
        m.insert("retryable".into(), Value::Bool(self.retryable));
        m.insert("diagnostics".into(), Value::Array(diags));
        Value::Object(m)
    }
}

/// Replaces a code that is not `^[a-z0-9_]+$` by `operation_rejected` (spec/surface.md §4).
#[must_use]
pub fn sanitize_code(code: &str) -> String {
    if !code.is_empty()
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        code.to_owned()
    } else {
        codes::OPERATION_REJECTED.to_owned()
    }
}

/// Cuts a message longer than 512 bytes at a UTF-8 boundary and appends ` [truncated]`.
#[must_use]
pub fn cap_message(m: &str) -> String {
    if m.len() <= MESSAGE_CAP {
        return m.to_owned();
    }
    const SUFFIX: &str = " [truncated]";
    let mut end = MESSAGE_CAP - SUFFIX.len();
    while !m.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{SUFFIX}", &m[..end])
}

/// Applies spec/surface.md §10: a sensitive message is replaced wholesale by [`REDACTED`].
#[must_use]
pub fn redact(message: &str) -> String {
    if is_sensitive(message) {
        REDACTED.to_owned()
    } else {
        message.to_owned()
    }
}

/// Whether `message` is sensitive under spec/surface.md §10 rules 1–2.
#[must_use]
pub fn is_sensitive(message: &str) -> bool {
    // Rule 1: percent-decode until stable, at most 4 rounds; a malformed escape is sensitive.
    let mut text = message.to_owned();
    for _ in 0..4 {
        match percent_decode(&text) {
            None => return true,
            Some(d) if d == text => break,
            Some(d) => text = d,
        }
    }
    if percent_decode(&text).is_none() {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    if text.contains("..") || lower.contains("file:") || text.contains("\\\\") {
        return true;
    }
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        // Drive paths `X:\` or `X:/`.
        if c.is_ascii_alphabetic()
            && i.checked_sub(1).is_none_or(|j| !chars[j].is_alphanumeric())
            && chars.get(i + 1) == Some(&':')
            && matches!(chars.get(i + 2), Some('\\' | '/'))
        {
            return true;
        }
        if c != '/' {
            continue;
        }
        let at_boundary = match i.checked_sub(1).map(|j| chars[j]) {
            None => true,
            Some(p) => !(p.is_alphanumeric() || p == '_' || p == '-' || p == '.'),
        };
        if !at_boundary {
            continue;
        }
        // The two slashes directly after `http:` / `https:` are allowed.
        let prefix: String = chars[..i].iter().collect();
        let prefix_lower = prefix.to_ascii_lowercase();
        let after_scheme = |s: &str| {
            prefix_lower.ends_with(s)
                && prefix_lower[..prefix_lower.len() - s.len()]
                    .chars()
                    .last()
                    .is_none_or(|b| !b.is_ascii_alphanumeric())
        };
        if after_scheme("http:") || after_scheme("https:") {
            continue;
        }
        if (after_scheme("http:/") || after_scheme("https:/")) && chars[i - 1] == '/' {
            continue;
        }
        return true;
    }
    false
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let h = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(h).ok()?;
            let v = u8::from_str_radix(hex, 16).ok()?;
            if !h.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Whether `p` is a bundle-relative path under spec/store.md §3.2 rules 1–3.
#[must_use]
pub fn is_bundle_relative_path(p: &str) -> bool {
    if p.is_empty() || p.len() > 4096 || p.starts_with('/') {
        return false;
    }
    let mut n = 0;
    for comp in p.split('/') {
        n += 1;
        if comp.is_empty() || comp == "." || comp == ".." {
            return false;
        }
        if comp
            .chars()
            .any(|c| c == '\\' || c <= '\u{1f}' || c == '\u{7f}')
        {
            return false;
        }
    }
    n <= 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aut_13_an_error_envelope_never_repeats_a_diagnostic() {
        let d = |f: &str, m: &str| {
            Diagnostic::new(codes::INVALID_INPUT, Severity::Error, m).with_field(f)
        };
        let e = ToolError::invalid_request("m")
            .with_diagnostic(d("a", "x"))
            .with_diagnostic(d("b", "x"))
            .with_diagnostic(d("a", "x"))
            .with_diagnostic(d("a", "y"))
            .with_diagnostic(d("b", "x"));
        let w = e.to_wire();
        let got: Vec<(&str, &str)> = w["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .map(|d| {
                (
                    d["field"].as_str().unwrap_or(""),
                    d["message"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(got, [("a", "x"), ("b", "x"), ("a", "y")]);
    }

    #[test]
    fn redaction_vectors_of_sec_02() {
        for m in [
            "failed at /etc/passwd",
            "C:\\x",
            "a .. b",
            "file:///x",
            "x %2Fetc%2Fpasswd",
            "~/x",
            "see https://h/a?p=/etc",
            "bad %zz escape",
            "\\\\server\\share",
        ] {
            assert_eq!(redact(m), REDACTED, "{m}");
        }
        for m in [
            "see https://example.test/spec",
            "tables/orders.md is broken",
            "bundle contains a symlink: a/b.md",
            "operations[0]: usage window starts after it ends",
        ] {
            assert_eq!(redact(m), m, "{m}");
        }
    }

    #[test]
    fn sec_03_long_messages_are_cut_and_absolute_files_blanked() {
        let m = "é".repeat(400);
        let c = cap_message(&m);
        assert!(c.len() <= MESSAGE_CAP);
        assert!(c.ends_with(" [truncated]"));
        let e = ToolError::invalid_request("x".repeat(600));
        assert!(e.wire_message().len() <= MESSAGE_CAP);
        let d = Diagnostic::new("x", Severity::Warn, "y".repeat(513));
        assert_eq!(
            d.to_wire()["message"],
            "diagnostic message exceeds the size limit"
        );
        let d = Diagnostic::new("x", Severity::Warn, "m").with_file("/abs/path.md");
        assert_eq!(d.to_wire()["file"], "");
    }

    #[test]
    fn bad_codes_become_operation_rejected() {
        assert_eq!(sanitize_code(""), "operation_rejected");
        assert_eq!(sanitize_code("Bad-Code"), "operation_rejected");
        assert_eq!(sanitize_code("ok_1"), "ok_1");
    }
}
