//! The generator of the checked-in JSON Schemas (spec/surface.md §17).
//!
//! Every file under `schemas/` is built from Rust definitions. The shared definitions (one
//! owner file each: `common.schema.json`, `error.schema.json`, `version.schema.json`) are
//! defined here. Each tool's two roots are built by its own module
//! ([`crate::tools::ToolSpec::build_input_schema`] / `build_output_schema`, from the parts in
//! [`crate::tools::schema_parts`]); this module gives them their `$defs`. A tool file is
//! self-contained: every shared definition it reaches through a local `$ref` is copied into
//! its own `$defs` (spec/surface.md §17.1).
//!
//! The server advertises the *checked-in* files (`include_str!`), never these values directly;
//! the gate test `tests/it/schema.rs::schemas_are_current` fails when the two differ.
//!
//! Regenerate after changing this module, the schema parts or a tool's schema builders (the
//! one documented command):
//!
//! ```sh
//! OKF_MCP_WRITE_SCHEMAS=1 cargo test --test it schemas_are_current
//! ```
//!
//! Pure: no I/O. Patterns use `[0-9]`, never `\d` (spec/surface.md §17.2).

use crate::okf::temporal::{
    AUTO_PROFILE, DATE_PATTERN, DATE_PROFILE, INSTANT_PROFILE, OFFSET_DATETIME_PATTERN,
};
use crate::tools::schema_parts::{
    boolean, card_props, closed, closed_with, file_header, nullable_string, r, status_enum,
    string_1_max, string_max, with, SchemaRoot,
};
pub use crate::tools::schema_parts::{ID_BASE, SCHEMA_DRAFT};
use crate::wire::registry::{self, SharedSchema};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// The shared file holding the common input and output definitions.
pub const COMMON_FILE: &str = "common.schema.json";
/// The shared file holding the error envelope and the wire diagnostic.
pub const ERROR_FILE: &str = "error.schema.json";
/// The shared file holding the version objects of spec/surface.md §12.1.
pub const VERSION_FILE: &str = "version.schema.json";
/// The built-in shared files; the registry's tools add theirs ([`shared_files`]).
const BUILT_IN_FILES: [&str; 3] = [COMMON_FILE, ERROR_FILE, VERSION_FILE];

/// The shared schema files the registered tools contribute
/// ([`crate::tools::ToolSpec::shared_schema`]), one per file name, in registry order.
fn tool_shared() -> Vec<&'static SharedSchema> {
    let mut out: Vec<&'static SharedSchema> = Vec::new();
    for s in registry::all().iter().filter_map(|t| t.shared_schema) {
        if !out.iter().any(|o| o.file == s.file) {
            out.push(s);
        }
    }
    out
}

/// Every shared file: the built-in ones and the registry's, in file-name order.
#[must_use]
pub fn shared_files() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = BUILT_IN_FILES.to_vec();
    v.extend(tool_shared().iter().map(|s| s.file));
    v.sort_unstable();
    v
}

/// Canonical revision and digest shape (`sha256:` + 64 lowercase hex).
pub const REVISION_PATTERN: &str = "^sha256:[0-9a-f]{64}$";
/// `source.usage_count` of patch inputs (spec/concept-patch.md §2.3).
pub const USAGE_COUNT_PATTERN: &str = "^(0|[1-9][0-9]*)$";
/// The positive part of the concept-id grammar (spec/surface.md §8): non-empty segments
/// separated by single `/`, without `\`, `:`, code points ≤ U+001F or U+007F.
pub const CONCEPT_ID_PATTERN: &str = r"^[^/\\:\x00-\x1f\x7f]+(/[^/\\:\x00-\x1f\x7f]+)*$";
pub use crate::tools::schema_parts::{DOCUMENT_ACTOR_PATTERN, DOCUMENT_ACTOR_TEXT};

/// Whitespace that may not surround a concept id, beyond the control characters the main
/// pattern already excludes: the Unicode `White_Space` set Rust's `str::trim` uses.
const CONCEPT_ID_SPACE: &str = r"[ \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]";

/// The negative parts of the concept-id grammar, each a `not` sub-schema (spec/surface.md §8):
/// a segment starting with `.`; a last segment `index`/`log`; a trailing `.md`; surrounding
/// whitespace.
#[must_use]
pub fn concept_id_not_patterns() -> [String; 4] {
    [
        r"(^|/)\.".to_owned(),
        "(^|/)(index|log)$".to_owned(),
        r"\.md$".to_owned(),
        format!("^{CONCEPT_ID_SPACE}|{CONCEPT_ID_SPACE}$"),
    ]
}

/// The ten operation kinds (spec/concept-patch.md §2.2 and §11.2), in table order.
pub const OPERATION_KINDS: [&str; 10] = [
    "set_generated",
    "ensure_verification",
    "remove_verification",
    "put_source",
    "remove_source",
    "set_usage_window",
    "set_lifecycle",
    "put_attested_computation",
    "set_bundle_version",
    "set_metadata",
];

/// Every payload field of an operation object.
pub const PAYLOAD_FIELDS: [&str; 10] = [
    "concept_id",
    "generated",
    "verification",
    "source",
    "source_id",
    "usage_window",
    "lifecycle",
    "attested_computation",
    "version",
    "metadata",
];

/// Per kind: (kind, required payloads, optional payloads); every other payload is forbidden
/// (spec/concept-patch.md §2.2). The selector rules of `remove_source` / `set_usage_window`
/// are runtime checks (§2.5 rule 6), so both selectors are optional here.
pub const KIND_RULES: [(&str, &[&str], &[&str]); 10] = [
    ("set_generated", &["concept_id", "generated"], &[]),
    ("ensure_verification", &["concept_id", "verification"], &[]),
    ("remove_verification", &["concept_id", "verification"], &[]),
    ("put_source", &["concept_id", "source"], &[]),
    ("remove_source", &["concept_id"], &["source_id", "source"]),
    (
        "set_usage_window",
        &["concept_id", "usage_window"],
        &["source_id", "source"],
    ),
    ("set_lifecycle", &["concept_id", "lifecycle"], &[]),
    (
        "put_attested_computation",
        &["concept_id", "attested_computation"],
        &[],
    ),
    ("set_bundle_version", &["version"], &[]),
    ("set_metadata", &["concept_id", "metadata"], &[]),
];

// ---------------------------------------------------------------------------------------------
// Shared definitions
// ---------------------------------------------------------------------------------------------

/// The owner file of a shared definition, or `None` for an unknown name.
#[must_use]
pub fn owner(def: &str) -> Option<&'static str> {
    shared_files()
        .into_iter()
        .find(|f| shared_defs(f).iter().any(|(n, _)| *n == def))
}

/// The definitions a shared file owns, in file order.
#[must_use]
pub fn shared_defs(file: &str) -> Vec<(&'static str, Value)> {
    match file {
        COMMON_FILE => common_defs(),
        ERROR_FILE => vec![
            ("diagnostic", diagnostic_def()),
            ("error_envelope", error_envelope_def()),
            ("notices", notices_def()),
        ],
        VERSION_FILE => vec![
            ("version", version_def()),
            ("version_declaration", version_declaration_def()),
        ],
        _ => tool_shared()
            .into_iter()
            .find(|s| s.file == file)
            .map_or_else(Vec::new, |s| (s.defs)()),
    }
}

/// The shared definition named `name`, from its owner file.
#[must_use]
pub fn shared_def(name: &str) -> Option<Value> {
    shared_files()
        .iter()
        .flat_map(|f| shared_defs(f))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

fn common_defs() -> Vec<(&'static str, Value)> {
    vec![
        ("actor", actor_def()),
        ("attested_computation", attested_computation_def()),
        ("bundle_path", bundle_path_def()),
        ("bundle_relative_path", string_1_max(4096)),
        ("calendar_date", calendar_date_def()),
        ("card", card_def()),
        ("concept_id", concept_id_def()),
        ("digest", digest_def()),
        ("generated", generated_def()),
        ("lifecycle", lifecycle_def()),
        ("metadata", metadata_def()),
        ("offset_datetime", offset_datetime_def()),
        ("operation", operation_def()),
        (
            "operation_temporal_auto",
            operation_temporal_def("profile_auto"),
        ),
        (
            "operation_temporal_date",
            operation_temporal_def("profile_date"),
        ),
        (
            "operation_temporal_instant",
            operation_temporal_def("profile_instant"),
        ),
        ("profile_auto", profile_auto_def()),
        ("profile_date", profile_date_def()),
        ("profile_instant", profile_instant_def()),
        ("document_actor", document_actor_def()),
        ("revision", revision_def()),
        ("source", source_def()),
        ("status_state", status_state_def()),
        ("temporal_profile", temporal_profile_def()),
        ("temporal_profile_id", temporal_profile_id_def()),
        ("temporal_profile_source", temporal_profile_source_def()),
        ("usage_window", usage_window_def()),
        ("verification", verification_def()),
    ]
}

fn bundle_path_def() -> Value {
    json!({
        "description": "Absolute, clean path of the bundle root directory; symlinks are refused (spec/surface.md §7).",
        "type": "string",
        "minLength": 1,
        "maxLength": 4096
    })
}

fn concept_id_def() -> Value {
    let nots: Vec<Value> = concept_id_not_patterns()
        .into_iter()
        .map(|p| json!({"not": {"type": "string", "pattern": p}}))
        .collect();
    json!({
        "description": "Bundle-relative concept path without .md, e.g. tables/orders. Non-empty segments joined by '/', no '\\', ':' or control characters, no segment starting with '.', no surrounding whitespace, last segment not index or log (spec/surface.md §8).",
        "type": "string",
        "minLength": 1,
        "maxLength": 4096,
        "pattern": CONCEPT_ID_PATTERN,
        "allOf": nots
    })
}

fn temporal_profile_def() -> Value {
    json!({
        "description": "Temporal profile: auto (the default), date-3fcbb9f or instant-0b87c52. auto, \"\" or absent: the profile the bundle's own temporal values show (spec/temporal.md §11); date-3fcbb9f reads calendar dates, instant-0b87c52 offset datetimes (spec/temporal.md §1). Leave it out unless the bundle must be read under a profile it does not show.",
        "type": "string",
        "enum": ["", AUTO_PROFILE, DATE_PROFILE, INSTANT_PROFILE]
    })
}

fn temporal_profile_id_def() -> Value {
    json!({
        "description": "The resolved temporal profile id the call ran under (spec/temporal.md §11 rule 2).",
        "type": "string",
        "enum": [DATE_PROFILE, INSTANT_PROFILE]
    })
}

fn temporal_profile_source_def() -> Value {
    json!({
        "description": "What decided temporal_profile: explicit (a profile id was passed), detected (the bundle's values, or the request's own, decided it) or default (nothing did: date-3fcbb9f) (spec/temporal.md §11 rule 2).",
        "type": "string",
        "enum": ["explicit", "detected", "default"]
    })
}

fn offset_datetime_def() -> Value {
    json!({
        "description": "Offset datetime YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM) (spec/temporal.md §2.1).",
        "type": "string",
        "format": "date-time",
        "pattern": OFFSET_DATETIME_PATTERN
    })
}

fn calendar_date_def() -> Value {
    json!({
        "description": "Calendar date YYYY-MM-DD (spec/temporal.md §2.3).",
        "type": "string",
        "format": "date",
        "pattern": DATE_PATTERN
    })
}

fn profile_auto_def() -> Value {
    json!({
        "description": "A temporal value under auto: a calendar date (spec/temporal.md §2.3) or an offset datetime (§2.1), of the kind the bundle already holds; one kind per request (spec/concept-patch.md §2.4 rule 4). Constrains strings only; the type comes from the property.",
        "anyOf": [r("profile_date"), r("profile_instant")]
    })
}

fn profile_date_def() -> Value {
    json!({
        "description": "A temporal value under date-3fcbb9f: a calendar date (spec/temporal.md §2.3). Constrains strings only; the type comes from the property.",
        "format": "date",
        "pattern": DATE_PATTERN
    })
}

fn profile_instant_def() -> Value {
    json!({
        "description": "A temporal value under instant-0b87c52: an offset datetime (spec/temporal.md §2.1). Constrains strings only; the type comes from the property.",
        "format": "date-time",
        "pattern": OFFSET_DATETIME_PATTERN
    })
}

fn revision_def() -> Value {
    json!({
        "description": "Canonical bundle revision: sha256: and 64 lowercase hex digits (spec/store.md §3.6).",
        "type": "string",
        "pattern": REVISION_PATTERN
    })
}

fn digest_def() -> Value {
    json!({
        "description": "Canonical digest: sha256: and 64 lowercase hex digits (spec/store.md §5).",
        "type": "string",
        "pattern": REVISION_PATTERN
    })
}

fn actor_def() -> Value {
    json!({
        "description": "Request actor: who asks, never written to a document. A transport identity of 1 to 256 bytes without surrounding whitespace or control characters (spec/surface.md §13.3).",
        "type": "string",
        "minLength": 1,
        "maxLength": 256
    })
}

/// `generated.by`, `verified[].by`, `generated_by` (spec/surface.md §13.3, §18.3 rule 4).
fn document_actor_def() -> Value {
    json!({
        "description": format!("Document actor written into the concept: {DOCUMENT_ACTOR_TEXT} (spec/surface.md §13.3)."),
        "type": "string",
        "minLength": 1,
        "maxLength": 256,
        "pattern": DOCUMENT_ACTOR_PATTERN
    })
}

fn generated_def() -> Value {
    closed_with(
        &["by"],
        vec![("by", r("document_actor")), ("at", r("offset_datetime"))],
    )
}

fn verification_def() -> Value {
    closed(vec![
        ("by", r("document_actor")),
        ("at", r("offset_datetime")),
    ])
}

fn usage_window_def() -> Value {
    let mut v = closed(vec![
        ("from", json!({"type": "string"})),
        ("to", json!({"type": "string"})),
    ]);
    if let Value::Object(m) = &mut v {
        m.insert("type".into(), json!(["object", "null"]));
    }
    with(
        v,
        "description",
        json!("Usage window {from, to}, both required, per temporal profile; null clears it where the operation allows (spec/concept-patch.md §2.3)."),
    )
}

fn source_def() -> Value {
    closed_with(
        &["resource"],
        vec![
            ("resource", string_max(4096)),
            ("id", string_max(4096)),
            ("title", string_max(4096)),
            ("author", string_max(4096)),
            (
                "usage_count",
                json!({"type": "string", "maxLength": 20, "pattern": USAGE_COUNT_PATTERN}),
            ),
            ("last_modified", json!({"type": "string"})),
            ("usage_window", usage_window_object()),
        ],
    )
}

fn usage_window_object() -> Value {
    closed(vec![
        ("from", json!({"type": "string"})),
        ("to", json!({"type": "string"})),
    ])
}

/// `lifecycle` (spec/concept-patch.md §3.6, §11.1): each member optional — absent keeps the
/// key, `null` removes it, a value sets it — and at least one present.
fn lifecycle_def() -> Value {
    let mut d = closed_with(
        &[],
        vec![
            (
                "status",
                json!({"type": ["string", "null"], "enum": ["draft", "stable", "deprecated", null],
                    "description": "Absent: keep the current status; null: remove it."}),
            ),
            (
                "stale_after",
                with(
                    nullable_string(),
                    "description",
                    json!("Absent: keep the current stale_after; null: remove it."),
                ),
            ),
        ],
    );
    d = with(d, "minProperties", json!(1));
    d
}

/// `metadata` of `set_metadata` (spec/concept-patch.md §11.2): each member optional (absent
/// keeps the key), `null` removes it (`type: null` is answered at runtime), at least one.
fn metadata_def() -> Value {
    let text = |max: u64, what: &str| {
        json!({"type": ["string", "null"], "minLength": 1, "maxLength": max,
            "description": format!("{what} Absent: keep it; null: remove it.")})
    };
    let mut d = closed_with(
        &[],
        vec![
            (
                "type",
                json!({"type": ["string", "null"], "minLength": 1, "maxLength": 256,
                    "description": "The concept type (every concept needs one: null is refused). Absent: keep it."}),
            ),
            ("title", text(4096, "The title.")),
            ("description", text(4096, "A one-line description.")),
            (
                "tags",
                json!({"type": ["array", "null"], "maxItems": 256,
                    "items": {"type": "string", "minLength": 1, "maxLength": 256},
                    "description": "The whole tag list, order kept. Absent: keep it; null: remove it."}),
            ),
        ],
    );
    d = with(d, "minProperties", json!(1));
    d
}

fn attested_computation_def() -> Value {
    let parameter = closed(vec![
        ("name", string_1_max(4096)),
        ("type", string_1_max(4096)),
        ("required", boolean()),
    ]);
    let executor = closed(vec![
        ("resource", string_1_max(4096)),
        (
            "receipt",
            json!({"type": "array", "minItems": 1, "maxItems": 256, "items": string_1_max(4096)}),
        ),
    ]);
    let attester = closed(vec![("resource", string_1_max(4096))]);
    let base = closed_with(
        &["mode", "runtime", "parameters", "executor", "attester"],
        vec![
            (
                "mode",
                json!({"type": "string", "enum": ["inline", "file"]}),
            ),
            ("runtime", string_1_max(4096)),
            (
                "parameters",
                json!({"type": "array", "maxItems": 256, "items": parameter}),
            ),
            ("executor", executor),
            ("attester", attester),
            ("computation_path", string_1_max(4096)),
            ("inline_computation", string_max(1024 * 1024)),
            ("inline_language", string_1_max(4096)),
        ],
    );
    with(
        base,
        "allOf",
        json!([
            {
                "if": {"properties": {"mode": {"const": "file"}}, "required": ["mode"], "additionalProperties": true},
                "then": {
                    "required": ["computation_path"],
                    "properties": {"inline_computation": false, "inline_language": false},
                    "additionalProperties": true
                }
            },
            {
                "if": {"properties": {"mode": {"const": "inline"}}, "required": ["mode"], "additionalProperties": true},
                "then": {
                    "required": ["inline_computation"],
                    "properties": {"computation_path": false},
                    "additionalProperties": true
                }
            }
        ]),
    )
}

fn operation_def() -> Value {
    let base = closed_with(
        &["kind"],
        vec![
            ("kind", json!({"type": "string", "enum": OPERATION_KINDS})),
            ("concept_id", r("concept_id")),
            ("generated", r("generated")),
            ("verification", r("verification")),
            ("source", r("source")),
            ("source_id", string_1_max(4096)),
            ("usage_window", r("usage_window")),
            ("lifecycle", r("lifecycle")),
            ("attested_computation", r("attested_computation")),
            ("version", json!({"type": "string", "enum": ["0.1", "0.2"]})),
            ("metadata", r("metadata")),
        ],
    );
    let branches: Vec<Value> = KIND_RULES
        .iter()
        .map(|(kind, required, optional)| {
            let mut forbidden = Map::new();
            for f in PAYLOAD_FIELDS {
                if !required.contains(&f) && !optional.contains(&f) {
                    forbidden.insert(f.to_owned(), Value::Bool(false));
                }
            }
            json!({
                "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"], "additionalProperties": true},
                "then": {"required": required, "properties": forbidden, "additionalProperties": true}
            })
        })
        .collect();
    let v = with(
        base,
        "description",
        json!("One desired-state operation; each kind admits only its own payload fields, every other payload must be absent (spec/concept-patch.md §2.2)."),
    );
    with(v, "allOf", Value::Array(branches))
}

/// The profile refinement of one operation: only the temporal members, typed by the base.
fn operation_temporal_def(value_def: &str) -> Value {
    let window = json!({
        "properties": {"from": r(value_def), "to": r(value_def)},
        "additionalProperties": true
    });
    json!({
        "properties": {
            "source": {
                "properties": {"last_modified": r(value_def), "usage_window": window},
                "additionalProperties": true
            },
            "usage_window": window,
            "lifecycle": {
                "properties": {"stale_after": r(value_def)},
                "additionalProperties": true
            }
        },
        "additionalProperties": true
    })
}

fn diagnostic_def() -> Value {
    with(
        closed(vec![
            (
                "code",
                json!({"type": "string", "minLength": 1, "pattern": "^[a-z0-9_]+$"}),
            ),
            (
                "severity",
                json!({"type": "string", "enum": ["ERROR", "WARN", "INFO"]}),
            ),
            ("file", string_max(512)),
            ("field", json!({"type": "string"})),
            ("message", string_max(512)),
            ("spec_ref", json!({"type": "string"})),
            ("policy_failure", boolean()),
        ]),
        "description",
        json!("Wire diagnostic with exactly seven members (spec/surface.md §6.1)."),
    )
}

fn notices_def() -> Value {
    json!({
        "description": "What the call has to say about the bundle or the server rather than the request's outcome (e.g. publication_pending, mixed_temporal_values): at most 100 INFO or WARN diagnostics, [] when there is nothing to say; never counted in diagnostics (spec/surface.md §18.1).",
        "type": "array",
        "maxItems": crate::notices::MAX,
        "items": {
            "allOf": [
                r("diagnostic"),
                {"properties": {"severity": {"enum": ["WARN", "INFO"]}}, "additionalProperties": true}
            ]
        }
    })
}

fn error_envelope_def() -> Value {
    with(
        closed(vec![
            (
                "code",
                json!({"type": "string", "minLength": 1, "pattern": "^[a-z0-9_]+$"}),
            ),
            (
                "message",
                json!({"type": "string", "minLength": 1, "maxLength": 512}),
            ),
            ("retryable", boolean()),
            (
                "diagnostics",
                json!({"type": "array", "maxItems": 10000, "items": r("diagnostic")}),
            ),
        ]),
        "description",
        json!("Error envelope of every tool error (spec/surface.md §4)."),
    )
}

fn version_def() -> Value {
    closed(vec![
        ("declared", nullable_string()),
        ("effective", nullable_string()),
        (
            "resolution",
            json!({"type": ["string", "null"], "enum": ["declared", "default", "explicit", "future-best-effort", null]}),
        ),
        (
            "compatibility",
            json!({"type": ["string", "null"], "enum": ["native", "legacy", "best-effort", null]}),
        ),
    ])
}

fn version_declaration_def() -> Value {
    closed(vec![
        ("present", boolean()),
        ("valid", boolean()),
        ("raw", nullable_string()),
        ("value", nullable_string()),
    ])
}

fn status_state_def() -> Value {
    closed(vec![
        ("present", boolean()),
        ("valid", boolean()),
        ("raw", nullable_string()),
        ("effective", status_enum()),
    ])
}

fn card_def() -> Value {
    with(
        closed(card_props()),
        "description",
        json!("Concept card (spec/surface.md §12.1)."),
    )
}

// ---------------------------------------------------------------------------------------------
// Tool roots
// ---------------------------------------------------------------------------------------------

/// A tool file: its module's root with `$defs` attached.
fn assemble(root: SchemaRoot) -> Value {
    let mut m = root.members;
    attach_defs(&mut m, &root.local_defs);
    Value::Object(m)
}

/// The input schema of the registered tool `tool` as generated by its module, or `None` for a
/// tool that is not registered.
#[must_use]
pub fn input_schema(tool: &str) -> Option<Value> {
    registry::find(tool).map(|t| assemble((t.build_input_schema)()))
}

/// The output schema of the registered tool `tool` as generated by its module, or `None` for a
/// tool that is not registered.
#[must_use]
pub fn output_schema(tool: &str) -> Option<Value> {
    registry::find(tool).map(|t| assemble((t.build_output_schema)()))
}

// ---------------------------------------------------------------------------------------------
// Assembly
// ---------------------------------------------------------------------------------------------

/// Every `#/$defs/<name>` referenced anywhere in `v` (also used by
/// [`crate::wire::advertise`]).
pub fn local_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    if let Some(name) = x.as_str().and_then(|s| s.strip_prefix("#/$defs/")) {
                        out.insert(name.to_owned());
                    }
                }
                local_refs(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| local_refs(x, out)),
        _ => {}
    }
}

/// Adds `$defs`: the given local definitions first, then a copy of every shared definition
/// reached transitively through local `$ref`s, by name.
fn attach_defs(m: &mut Map<String, Value>, local: &[(&str, Value)]) {
    let mut defs = Map::new();
    for (n, v) in local {
        defs.insert((*n).to_owned(), v.clone());
    }
    let mut wanted = BTreeSet::new();
    local_refs(&Value::Object(m.clone()), &mut wanted);
    local_refs(&Value::Object(defs.clone()), &mut wanted);
    let mut copied: BTreeSet<String> = BTreeSet::new();
    loop {
        let next: Vec<String> = wanted
            .iter()
            .filter(|n| !copied.contains(*n) && !defs.contains_key(*n))
            .cloned()
            .collect();
        if next.is_empty() {
            break;
        }
        for n in next {
            if let Some(v) = shared_def(&n) {
                local_refs(&v, &mut wanted);
                copied.insert(n.clone());
            } else {
                copied.insert(n);
            }
        }
    }
    for n in copied {
        if let Some(v) = shared_def(&n) {
            defs.insert(n, v);
        }
    }
    m.insert("$defs".into(), Value::Object(defs));
}

/// A shared file: header plus its own definitions and copies of those they reference.
#[must_use]
pub fn shared_file(file: &str) -> Option<Value> {
    let (title, description) = match file {
        COMMON_FILE => (
            "okf-mcp common definitions",
            "Definitions shared by the tool schemas: bundle_path, concept_id, temporal values, revisions, patch operations, cards. Tool files carry copies of what they use (spec/surface.md §17.1).",
        ),
        ERROR_FILE => (
            "okf-mcp error envelope",
            "The error envelope of every tool error and the wire diagnostic (spec/surface.md §4, §6.1).",
        ),
        VERSION_FILE => (
            "okf-mcp version objects",
            "The version and version_declaration objects of the read tools (spec/surface.md §12.1, §12.2).",
        ),
        _ => {
            let s = tool_shared().into_iter().find(|s| s.file == file)?;
            (s.title, s.description)
        }
    };
    let mut m = file_header(file, title, description);
    let own: Vec<(&str, Value)> = shared_defs(file);
    attach_defs(&mut m, &own);
    Some(Value::Object(m))
}

/// Every file of `schemas/`: (file name, value), sorted by file name.
#[must_use]
pub fn all_files() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for f in shared_files() {
        if let Some(v) = shared_file(f) {
            out.push((f.to_owned(), v));
        }
    }
    for t in registry::all() {
        let name = t.name;
        out.push((
            format!("{name}.input.schema.json"),
            assemble((t.build_input_schema)()),
        ));
        out.push((
            format!("{name}.output.schema.json"),
            assemble((t.build_output_schema)()),
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The exact checked-in text of a schema value: pretty JSON (two-space indent) and a final
/// newline.
#[must_use]
pub fn render(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}
