//! The readable second text item of a result, for hosts that show only `content`
//! (spec/surface.md §18.2 rule 2). Pure: wire objects in, plain text out.
//!
//! - [`error_text`]: a tool error as the envelope `message`, one line per diagnostic
//!   (`<field or file>: <message>`) and last the recovery step(s) (`next step: <message>`).
//! - [`preview_text`]: a preview as its status, one line per operation or document
//!   (`<subject>: changed` / `no change` / `rejected: <code>`), the ERROR diagnostics, and the
//!   unified diff as plain text (already cut at 1 MiB by the planner, spec/concept-patch.md
//!   §5.4; the cut is said).

use crate::envelope::codes;
use serde_json::Value;
use std::fmt::Write as _;

/// The second text item of a tool error, built from its wire envelope
/// (`{code, message, retryable, diagnostics}`, spec/surface.md §4): the message line, one
/// line per non-recovery diagnostic as `<field or file>: <message>` (the code when both are
/// empty), then each `recovery_step` as `next step: <message>`. Every line ends with `\n`.
#[must_use]
pub fn error_text(envelope: &Value) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({})",
        envelope["message"].as_str().unwrap_or_default(),
        envelope["code"].as_str().unwrap_or_default()
    );
    let diagnostics = envelope["diagnostics"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let is_recovery = |d: &Value| d["code"] == codes::RECOVERY_STEP;
    for d in diagnostics.iter().filter(|d| !is_recovery(d)) {
        let _ = writeln!(out, "{}", diagnostic_line(d));
    }
    for d in diagnostics.iter().filter(|d| is_recovery(d)) {
        let _ = writeln!(
            out,
            "next step: {}",
            d["message"].as_str().unwrap_or_default()
        );
    }
    out
}

/// One diagnostic as `<field or file>: <message>`: `field` when set, else `file`, else the
/// diagnostic's `code`.
#[must_use]
pub fn diagnostic_line(d: &Value) -> String {
    let pick = |k: &str| d[k].as_str().filter(|s| !s.is_empty());
    let subject = pick("field")
        .or_else(|| pick("file"))
        .or_else(|| pick("code"))
        .unwrap_or("diagnostic");
    format!("{subject}: {}", d["message"].as_str().unwrap_or_default())
}

/// The second text item of a preview (spec/surface.md §18.2 rule 2).
///
/// `status` is the preview's status; `lines` are `(subject, effect)` pairs, one per operation
/// or document in the tool's order; `diagnostics` the output's wire diagnostics (only the
/// `ERROR` ones are listed); `diff` the output's unified diff (empty when there is none) and
/// `diff_truncated` whether the planner cut it at 1 MiB.
#[must_use]
pub fn preview_text(
    status: &str,
    lines: &[(String, String)],
    diagnostics: &[Value],
    diff: &str,
    diff_truncated: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "status: {status}");
    for (subject, effect) in lines {
        let _ = writeln!(out, "{subject}: {effect}");
    }
    for d in diagnostics.iter().filter(|d| d["severity"] == "ERROR") {
        let _ = writeln!(out, "error {}", diagnostic_line(d));
    }
    if diff.is_empty() {
        out.push_str("diff: none\n");
    } else {
        out.push_str("diff:\n");
        out.push_str(diff);
        if !diff.ends_with('\n') {
            out.push('\n');
        }
        if diff_truncated {
            out.push_str(
                "(the diff was cut at 1 MiB by whole file sections; diff_truncated is true)\n",
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_text_lists_message_diagnostics_then_recovery() {
        let env = json!({
            "code": "invalid_request", "message": "bad thing", "retryable": false,
            "diagnostics": [
                {"code": "recovery_step", "severity": "INFO", "file": "", "field": "bundle_path", "message": "fix it"},
                {"code": "x", "severity": "ERROR", "file": "a.md", "field": "", "message": "broken"},
                {"code": "y", "severity": "ERROR", "file": "", "field": "operations[0]", "message": "wrong"},
                {"code": "z", "severity": "WARN", "file": "", "field": "", "message": "odd"},
            ]
        });
        assert_eq!(
            error_text(&env),
            "bad thing (invalid_request)\na.md: broken\noperations[0]: wrong\nz: odd\nnext step: fix it\n"
        );
    }

    #[test]
    fn preview_text_has_one_line_per_subject_and_the_plain_diff() {
        let t = preview_text(
            "applicable",
            &[
                ("operations[0] set_lifecycle a".into(), "changed".into()),
                ("operations[1] put_source a".into(), "no change".into()),
            ],
            &[
                json!({"severity": "WARN", "code": "w", "file": "a.md", "field": "", "message": "m"}),
            ],
            "--- a/a.md\n+++ b/a.md\n",
            true,
        );
        assert_eq!(
            t,
            "status: applicable\noperations[0] set_lifecycle a: changed\noperations[1] put_source a: no change\ndiff:\n--- a/a.md\n+++ b/a.md\n(the diff was cut at 1 MiB by whole file sections; diff_truncated is true)\n"
        );
        assert!(preview_text("noop", &[], &[], "", false).ends_with("diff: none\n"));
    }
}
