//! Static validation (§3.3 rules 3–11, §12.2 rule 2).

use super::model::{CitationMapping, StaticError};
use crate::okf::markdown;
use std::collections::HashMap;

/// The largest text field, in bytes (§3.3 rule 8, §12.2 rule 2).
pub(super) const FIELD_MAX: usize = 4096;

/// The largest `legacy_number` (§3.3 entry schema).
pub(super) const NUMBER_MAX: u32 = 1_000_000;

pub(super) fn invalid(message: String) -> StaticError {
    StaticError {
        code: "invalid_request",
        message,
    }
}

pub(super) fn is_c0_or_del(c: char) -> bool {
    c < ' ' || c == '\u{7f}'
}

/// Whether `raw` is a valid `legacy_entry` (§3.3 rule 4, without the size).
pub(super) fn entry_text_ok(raw: &str) -> bool {
    !raw.trim().is_empty()
        && !raw
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\r' | '\n'))
}

/// Whether `note` is a valid `inline_note` (§12.2 rule 2, without the size).
pub(super) fn note_text_ok(note: &str) -> bool {
    !note.is_empty()
        && !note
            .chars()
            .any(|c| is_c0_or_del(c) || c == '[' || c == ']')
}

pub(super) fn validate(item: &CitationMapping, index: usize) -> Result<bool, StaticError> {
    let field = |j: usize, name: &str| format!("citation_mappings[{index}].entries[{j}].{name}");
    // Sizes first: `resource_limit` (rule 8, §12.2 rule 2).
    for (j, m) in item.entries.iter().enumerate() {
        let sized = [
            ("source_id", Some(&m.source_id)),
            ("title", m.title.as_ref()),
            ("resource", m.resource.as_ref()),
            ("inline_note", m.inline_note.as_ref()),
        ];
        for (name, value) in sized {
            if value.is_some_and(|v| v.len() > FIELD_MAX) {
                return Err(StaticError {
                    code: "resource_limit",
                    message: format!("{} is longer than {FIELD_MAX} bytes", field(j, name)),
                });
            }
        }
    }
    for (j, m) in item.entries.iter().enumerate() {
        if m.legacy_number.is_none() && m.legacy_entry.is_none() {
            return Err(invalid(format!(
                "citation_mappings[{index}].entries[{j}] needs legacy_number or legacy_entry"
            )));
        }
        if let Some(n) = m.legacy_number {
            if !(1..=NUMBER_MAX).contains(&n) {
                return Err(invalid(format!(
                    "{} must be between 1 and {NUMBER_MAX}",
                    field(j, "legacy_number")
                )));
            }
        }
        if let Some(e) = &m.legacy_entry {
            if e.len() > FIELD_MAX {
                return Err(invalid(format!(
                    "{} is longer than {FIELD_MAX} bytes",
                    field(j, "legacy_entry")
                )));
            }
            if !entry_text_ok(e) {
                return Err(invalid(format!(
                    "{} is blank or has control characters other than TAB, CR and LF",
                    field(j, "legacy_entry")
                )));
            }
        }
        let id = &m.source_id;
        if id.chars().any(is_c0_or_del) {
            return Err(invalid(format!(
                "{} has a control character (invalid_source_id)",
                field(j, "source_id")
            )));
        }
        if id.trim().is_empty()
            || id.contains(['[', ']'])
            || id.starts_with(char::is_whitespace)
            || id.ends_with(char::is_whitespace)
        {
            return Err(invalid(format!(
                "{} is not a valid footnote label: blank, with `[` or `]`, or with leading or \
                 trailing whitespace (invalid_source_id)",
                field(j, "source_id")
            )));
        }
        for (name, value) in [("title", &m.title), ("resource", &m.resource)] {
            let Some(v) = value else {
                continue;
            };
            if v.trim().is_empty() {
                return Err(invalid(format!("{} is blank", field(j, name))));
            }
            if v.chars().any(is_c0_or_del) {
                return Err(invalid(format!(
                    "{} has a control character",
                    field(j, name)
                )));
            }
        }
        if m.title.as_ref().is_some_and(|t| t.contains(['[', ']'])) {
            return Err(invalid(format!(
                "{} cannot be rendered in a footnote definition: it has `[` or `]` \
                 (unsupported_footnote_definition)",
                field(j, "title")
            )));
        }
        if let Some(n) = &m.inline_note {
            if !note_text_ok(n) {
                return Err(invalid(format!(
                    "{} is empty or has `[`, `]` or a control character",
                    field(j, "inline_note")
                )));
            }
        }
    }
    // Cross-entry rules: selectors (rule 3), inline notes (§12.2 rule 2), reuse (rule 9).
    let mut numbers: HashMap<u32, usize> = HashMap::new();
    let mut texts: HashMap<&str, (usize, bool)> = HashMap::new();
    let mut notes: HashMap<&str, usize> = HashMap::new();
    let mut ids: HashMap<&str, (usize, Option<&str>, Option<&str>)> = HashMap::new();
    for (j, m) in item.entries.iter().enumerate() {
        if let Some(n) = m.legacy_number {
            if let Some(k) = numbers.insert(n, j) {
                return Err(invalid(format!(
                    "{} repeats legacy number {n} of entries[{k}] (ambiguous_citation_mapping)",
                    field(j, "legacy_number")
                )));
            }
        }
        if let Some(e) = &m.legacy_entry {
            let entry_only = m.legacy_number.is_none();
            if let Some(&(k, other_only)) = texts.get(e.as_str()) {
                if entry_only || other_only {
                    return Err(invalid(format!(
                        "{} overlaps the selector of entries[{k}] (ambiguous_citation_mapping)",
                        field(j, "legacy_entry")
                    )));
                }
            }
            let slot = texts.entry(e.as_str()).or_insert((j, entry_only));
            slot.1 |= entry_only;
        }
        if let Some(n) = &m.inline_note {
            if let Some(k) = notes.insert(n.as_str(), j) {
                return Err(invalid(format!(
                    "{} repeats the inline_note of entries[{k}] (ambiguous_citation_mapping)",
                    field(j, "inline_note")
                )));
            }
        }
        let (t, r) = (m.title.as_deref(), m.resource.as_deref());
        match ids.get_mut(m.source_id.as_str()) {
            None => {
                ids.insert(&m.source_id, (j, t, r));
            }
            Some((k, pt, pr)) => {
                let clash = |a: Option<&str>, b: Option<&str>| matches!((a, b), (Some(a), Some(b)) if a != b);
                if clash(*pt, t) || clash(*pr, r) {
                    return Err(invalid(format!(
                        "{} reuses source id of entries[{k}] with a different title or resource \
                         (reused_source_metadata_conflict)",
                        field(j, "source_id")
                    )));
                }
                if pt.is_none() {
                    *pt = t;
                }
                if pr.is_none() {
                    *pr = r;
                }
            }
        }
    }
    // Rule 11: recorded, not raised.
    let mut labels: HashMap<String, &str> = HashMap::new();
    let mut collision = false;
    for m in &item.entries {
        let label = markdown::normalise_label(&m.source_id);
        match labels.get(&label) {
            Some(id) if *id != m.source_id => collision = true,
            Some(_) => {}
            None => {
                labels.insert(label, &m.source_id);
            }
        }
    }
    Ok(collision)
}
