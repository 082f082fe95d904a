//! JSON Schema enforcement of the advertised schemas, both directions
//! (spec/surface.md §3, §6.3, §9.3, §17). rmcp advertises schemas but enforces nothing.
//!
//! Validators exist for every registered tool and are built once, on first use, from its
//! checked-in files ([`crate::tools::ToolSpec`]: the same bytes the server advertises). Input
//! failures become the guidance of spec/surface.md §6.3: messages are written here per keyword
//! and field; the library's own messages (which quote values and key names) are never
//! forwarded.

use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::temporal::{DATE_PATTERN, OFFSET_DATETIME_PATTERN};
use crate::wire::registry;
use crate::wire::schema_gen::{
    CONCEPT_ID_PATTERN, DOCUMENT_ACTOR_PATTERN, REVISION_PATTERN, USAGE_COUNT_PATTERN,
};
use jsonschema::error::{TypeKind, ValidationErrorKind as K};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::OnceLock;

/// Most `invalid_input` diagnostics in one schema error (spec/surface.md §6.3 rule 1).
pub const MAX_GUIDANCE: usize = 8;
/// Largest serialised schema-error result in bytes (spec/surface.md §6.3 rule 5).
pub const SCHEMA_ERROR_CAP: usize = 4096;
/// Envelope message of an input that fails the schema.
pub const INPUT_MESSAGE: &str = "arguments do not match the tool's input schema";
/// Envelope message of an input that exceeds an advertised size or count limit.
pub const INPUT_LIMIT_MESSAGE: &str = "arguments exceed an advertised size or count limit";

/// The size/count keywords: any failure among them makes the envelope `resource_limit`
/// (spec/surface.md §5, §6.3 rule 1).
pub const SIZE_KEYWORDS: [&str; 4] = ["maxLength", "maxItems", "maxProperties", "maximum"];

/// What the guidance may say about one advertised property.
#[derive(Debug, Clone, Default)]
struct PropInfo {
    /// `type` of the property schema (after `$ref`), e.g. `["string", "null"]`.
    types: Vec<String>,
    /// `enum` values, if any.
    enumeration: Option<Vec<Value>>,
    /// The first `examples` entry next to the property.
    example: Option<Value>,
    /// `pattern` of the property schema (after `$ref`), if any.
    pattern: Option<String>,
    /// `minimum` and `maximum` of an integer property, if both are given.
    bounds: Option<(u64, u64)>,
    /// The default of the property: its `default`, or a "(default N)" in its description.
    default: Option<u64>,
}

/// Facts about one input schema the guidance needs.
#[derive(Debug, Default)]
struct InputInfo {
    /// Every property name advertised anywhere in the schema.
    advertised: BTreeSet<String>,
    /// Property facts by name (root properties win over nested ones of the same name).
    props: HashMap<String, PropInfo>,
    /// Names constrained by more than one branch node (`if`/`then`/`else`/`oneOf`/`anyOf`):
    /// they never get an example (spec/surface.md §6.3 rule 4, last row).
    multi_branch: BTreeSet<String>,
    /// The tool's own argument examples ([`registry::ArgumentExample`]).
    examples: &'static [registry::ArgumentExample],
}

struct Compiled {
    input_value: Value,
    input: jsonschema::Validator,
    success: jsonschema::Validator,
    error: jsonschema::Validator,
    info: InputInfo,
}

/// The compiled schemas of `tool`, built on its first use: a process that serves one call
/// (the CLI) compiles one tool's three validators, not every tool's.
fn compiled(tool: &str) -> Option<&'static Compiled> {
    static V: OnceLock<Vec<OnceLock<Option<Compiled>>>> = OnceLock::new();
    let tools = registry::all();
    let slots = V.get_or_init(|| tools.iter().map(|_| OnceLock::new()).collect());
    let i = tools.iter().position(|t| t.name == tool)?;
    let t = &tools[i];
    slots[i]
        .get_or_init(|| compile(t.input_schema, t.output_schema, t.argument_examples))
        .as_ref()
}

fn compile(
    input_text: &str,
    output_text: &str,
    examples: &'static [registry::ArgumentExample],
) -> Option<Compiled> {
    let input_value: Value = serde_json::from_str(input_text).ok()?;
    let output: Value = serde_json::from_str(output_text).ok()?;
    let sub = |def: &str| {
        let mut s = output.clone();
        if let Value::Object(m) = &mut s {
            m.remove("anyOf");
            m.insert("$ref".into(), Value::String(format!("#/$defs/{def}")));
        }
        build(&s)
    };
    let info = InputInfo {
        examples,
        ..input_info(&input_value)
    };
    Some(Compiled {
        input: build(&input_value)?,
        success: sub("success")?,
        error: sub("error_envelope")?,
        input_value,
        info,
    })
}

fn build(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .ok()
}

/// The parsed checked-in schema text of a tool, as advertised (member order preserved).
#[must_use]
pub fn advertised(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The parsed checked-in input schema of a registered tool.
#[must_use]
pub fn input_schema(tool: &str) -> Option<&'static Value> {
    compiled(tool).map(|c| &c.input_value)
}

/// Whether validators exist for `tool` (every registered tool has them).
#[must_use]
pub fn has_validators(tool: &str) -> bool {
    compiled(tool).is_some()
}

// ---------------------------------------------------------------------------------------------
// Schema facts
// ---------------------------------------------------------------------------------------------

/// Follows local `#/$defs/<name>` references from `node` inside the schema `root` (at most 16
/// hops); returns the first node that is not a reference (or a dangling one).
#[must_use]
pub fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let mut n = node;
    for _ in 0..16 {
        match n
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|s| s.strip_prefix("#/$defs/"))
        {
            Some(name) => match root.get("$defs").and_then(|d| d.get(name)) {
                Some(t) => n = t,
                None => break,
            },
            None => break,
        }
    }
    n
}

fn prop_info(root: &Value, node: &Value) -> PropInfo {
    let example = node
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .cloned();
    let t = resolve(root, node);
    let types = match t.get("type") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let int = |key: &str| node.get(key).or_else(|| t.get(key)).and_then(Value::as_u64);
    let description = node.get("description").or_else(|| t.get("description"));
    PropInfo {
        types,
        bounds: int("minimum").zip(int("maximum")),
        default: int("default").or_else(|| {
            description
                .and_then(Value::as_str)
                .and_then(description_default)
        }),
        enumeration: t.get("enum").and_then(Value::as_array).cloned(),
        pattern: t.get("pattern").and_then(Value::as_str).map(str::to_owned),
        example: example.or_else(|| {
            t.get("examples")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .cloned()
        }),
    }
}

/// The N of a "(default N)" in a property's description (`list_concepts`' `limit`: "Most
/// concepts in this page (default 200).").
fn description_default(text: &str) -> Option<u64> {
    let rest = &text[text.find("(default ")? + "(default ".len()..];
    rest[..rest.find(')')?].parse().ok()
}

fn input_info(root: &Value) -> InputInfo {
    let mut info = InputInfo::default();
    if let Some(Value::Object(p)) = root.get("properties") {
        for (k, v) in p {
            info.props.insert(k.clone(), prop_info(root, v));
        }
    }
    let mut branch_counts: HashMap<String, usize> = HashMap::new();
    walk_info(root, root, false, &mut info, &mut branch_counts);
    info.multi_branch = branch_counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| k)
        .collect();
    info
}

fn walk_info(
    root: &Value,
    node: &Value,
    in_branch: bool,
    info: &mut InputInfo,
    branch_counts: &mut HashMap<String, usize>,
) {
    match node {
        Value::Object(m) => {
            if let Some(Value::Object(p)) = m.get("properties") {
                for (k, v) in p {
                    info.advertised.insert(k.clone());
                    if v.is_object() && !info.props.contains_key(k) {
                        info.props.insert(k.clone(), prop_info(root, v));
                    }
                    if in_branch {
                        *branch_counts.entry(k.clone()).or_default() += 1;
                    }
                }
            }
            for (k, v) in m {
                let branch = matches!(k.as_str(), "if" | "then" | "else" | "oneOf" | "anyOf");
                if k == "examples" || k == "enum" || k == "const" {
                    continue;
                }
                walk_info(root, v, in_branch || branch, info, branch_counts);
            }
        }
        Value::Array(a) => {
            for v in a {
                walk_info(root, v, in_branch, info, branch_counts);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Input validation
// ---------------------------------------------------------------------------------------------

/// One failed keyword, already translated into guidance.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    field: String,
    keyword: String,
    message: String,
}

/// Step 4 of spec/surface.md §9.1 for any registered tool.
///
/// # Errors
/// `schema_validation` with ≤ 8 `invalid_input` diagnostics (deduplicated by (field,
/// keyword) and by (field, message), sorted by field, keyword, message); `resource_limit` when any size/count keyword
/// failed (then ≤ 7 `invalid_input` and one `recovery_step`). The serialised result stays
/// ≤ 4096 bytes. Diagnostics never echo argument values or unadvertised keys
/// (spec/surface.md §6.3, §9.3, §10).
pub fn validate_input(tool: &str, args: &Value) -> Result<(), ToolError> {
    let Some(c) = compiled(tool) else {
        return Err(ToolError::new(
            codes::SCHEMA_VALIDATION,
            "tool schema is unavailable",
        ));
    };
    let mut size_fault = false;
    let mut findings: Vec<Finding> = Vec::new();
    for err in c.input.iter_errors(args) {
        let kind = err.kind();
        let keyword = kind.keyword().to_owned();
        if SIZE_KEYWORDS.contains(&keyword.as_str()) {
            size_fault = true;
        }
        let mut segs: Vec<String> = err.instance_path().iter().map(|s| s.to_string()).collect();
        if let K::Required { property } = kind {
            if let Some(p) = property.as_str() {
                segs.push(p.to_owned());
            }
        }
        let field = field_path(&c.info, &segs);
        // The property the guidance may name: the last advertised, non-index segment of a
        // field that is itself echoable.
        let leaf = if field == "arguments" {
            None
        } else {
            segs.iter().rev().find(|s| !is_index(s)).map(String::as_str)
        };
        let leaf = if matches!(kind, K::AdditionalProperties { .. }) {
            None
        } else {
            leaf
        };
        // An item of an array is not its array: the array's example never describes it.
        let item = segs.last().is_some_and(|s| is_index(s));
        findings.push(Finding {
            field,
            keyword,
            message: guidance(&c.info, leaf, item, kind),
        });
    }
    if findings.is_empty() {
        return Ok(());
    }
    findings.sort();
    findings.dedup_by(|b, a| a.field == b.field && a.keyword == b.keyword);
    // Two keywords of one field may give the same guidance (`temporal_profile: null` fails
    // `type` and `enum` alike): a diagnostic is never repeated (spec/surface.md §18.6 rule 3b).
    let mut seen = std::collections::HashSet::new();
    findings.retain(|f| seen.insert((f.field.clone(), f.message.clone())));
    let (code, message, room) = if size_fault {
        (codes::RESOURCE_LIMIT, INPUT_LIMIT_MESSAGE, MAX_GUIDANCE - 1)
    } else {
        (codes::SCHEMA_VALIDATION, INPUT_MESSAGE, MAX_GUIDANCE)
    };
    let mut e = ToolError::new(code, message);
    e.diagnostics = findings
        .into_iter()
        .take(room)
        .map(|f| {
            Diagnostic::new(codes::INVALID_INPUT, Severity::Error, f.message).with_field(f.field)
        })
        .collect();
    let recovery = size_fault.then(|| {
        Diagnostic::recovery(
            "",
            "Narrow the request or reduce its scope; repeating the same call hits the same limit.",
        )
    });
    Err(fit(e, recovery, SCHEMA_ERROR_CAP))
}

/// spec/surface.md §6.3 rule 5: drops `invalid_input` diagnostics from the end until the whole
/// serialised result (text content + envelope, `recovery` appended last) fits `cap` bytes;
/// one diagnostic always stays.
fn fit(mut e: ToolError, recovery: Option<Diagnostic>, cap: usize) -> ToolError {
    loop {
        let mut probe = e.clone();
        if let Some(r) = &recovery {
            probe.diagnostics.push(r.clone());
        }
        if result_size(&probe) <= cap || e.diagnostics.len() <= 1 {
            return probe;
        }
        e.diagnostics.pop();
    }
}

/// Serialised size of the `CallToolResult` an error becomes, both text items included
/// (spec/surface.md §1.2, §18.2).
fn result_size(e: &ToolError) -> usize {
    crate::wire::result::ToolResult::from_error(e)
        .to_call_tool_result_json()
        .to_string()
        .len()
}

/// Whether `name` is a property advertised anywhere in `tool`'s input schema (a name the
/// server may say back: spec/surface.md §9.3 rule 1 forbids echoing any other key).
#[must_use]
pub fn is_advertised(tool: &str, name: &str) -> bool {
    compiled(tool).is_some_and(|c| c.info.advertised.contains(name))
}

/// The `field` of spec/surface.md §6.3 rule 2 that `tool`'s guidance reports for an instance
/// path given as segments (exposed for the SCH-08 tests).
#[must_use]
pub fn guidance_field(tool: &str, segments: &[&str]) -> String {
    let segs: Vec<String> = segments.iter().map(|s| (*s).to_owned()).collect();
    compiled(tool).map_or_else(|| "arguments".to_owned(), |c| field_path(&c.info, &segs))
}

fn is_index(s: &str) -> bool {
    !s.is_empty() && s.len() <= 6 && s.bytes().all(|b| b.is_ascii_digit())
}

/// spec/surface.md §6.3 rule 2: the dotted instance path when it has ≤ 8 segments, each an
/// advertised property name or a decimal index of ≤ 6 digits; otherwise `arguments`.
fn field_path(info: &InputInfo, segs: &[String]) -> String {
    if segs.is_empty()
        || segs.len() > 8
        || !segs
            .iter()
            .all(|s| is_index(s) || info.advertised.contains(s))
    {
        return "arguments".to_owned();
    }
    segs.join(".")
}

const DATE_TEXT: &str = "use a calendar date YYYY-MM-DD, e.g. 2026-01-02";
const DATETIME_TEXT: &str =
    "use an RFC 3339 datetime with an explicit offset (Z or +HH:MM or -HH:MM, never -00:00), e.g. 2026-01-02T03:04:05Z";
const DIGEST_TEXT: &str = "use the exact value returned by a fresh preview (sha256: followed by 64 lowercase hex digits); never build or edit it";
const PROFILE_TEXT: &str = "temporal_profile must be \"auto\" (the default; \"\" or leaving it out means the same: the profile the bundle's own temporal values show), \"date-3fcbb9f\" (calendar dates) or \"instant-0b87c52\" (offset datetimes); leave it out unless the bundle must be read under a profile it does not show";
const AS_OF_TEXT: &str = "as_of must be YYYY-MM-DD under the date profile (date-3fcbb9f) and an RFC 3339 datetime with an explicit offset under instant-0b87c52 (under auto, the profile the bundle shows: list_concepts echoes it as temporal_profile); never guess a timezone";
const TEMPORAL_AUTO_TEXT: &str = "use the kind of temporal value the bundle already holds (list_concepts echoes it as temporal_profile): an offset datetime such as 2026-01-02T03:04:05Z under instant-0b87c52, a calendar date YYYY-MM-DD under date-3fcbb9f; one kind per request";
const BUNDLE_PATH_TEXT: &str = "bundle_path must be the absolute path of an accessible bundle root";
const CONCEPT_ID_TEXT: &str = "concept_id must be a bundle-relative concept id without the .md suffix: non-empty segments joined by single slashes, no backslash, colon or control characters, no segment starting with a dot, no surrounding whitespace, and a last segment other than index or log, e.g. tables/orders";
const ACTOR_TEXT: &str = "use a document actor: human:<name>, process:<name>, or producer/version with exactly one slash, e.g. human:alice, process:nightly or agent/1.0";
const UNKNOWN_TEXT: &str = "remove unsupported fields; use advertised properties only";
const USAGE_COUNT_TEXT: &str =
    "usage_count is a decimal string without sign or leading zeros, at most 20 digits, e.g. \"12\"";

fn type_name(types: &[String]) -> String {
    if types.is_empty() {
        "value".to_owned()
    } else {
        types.join(" or ")
    }
}

fn kind_types(kind: &TypeKind) -> Vec<String> {
    match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
    }
}

/// Lists `values` when there are ≤ 8 short scalars (≤ 64 bytes each, ≤ 240 bytes in total).
fn enum_list(values: &[Value]) -> Option<String> {
    if values.len() > 8 {
        return None;
    }
    let mut parts = Vec::new();
    for v in values {
        if v.is_object() || v.is_array() {
            return None;
        }
        let s = v.to_string();
        if s.len() > 64 {
            return None;
        }
        parts.push(s);
    }
    let joined = parts.join(", ");
    (joined.len() <= 240).then_some(joined)
}

/// Every value of a `kind` enum (short strings only, at most 32), comma-separated.
fn kind_list(values: &[Value]) -> Option<String> {
    let parts: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    (parts.len() == values.len() && parts.len() <= 32 && parts.iter().all(|p| p.len() <= 64)).then(
        || {
            values
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        },
    )
}

/// The trusted example of `leaf`, unless the name is constrained in several branches.
fn example_of(info: &InputInfo, leaf: Option<&str>) -> Option<String> {
    let leaf = leaf?;
    if info.multi_branch.contains(leaf) {
        return None;
    }
    let ex = info.props.get(leaf)?.example.as_ref()?;
    let s = ex.to_string();
    (s.len() <= 200).then_some(s)
}

fn supply_text(info: &InputInfo, name: &str) -> String {
    if let Some(a) = info.examples.iter().find(|a| a.name == name) {
        return format!("supply {name} as {}, e.g. {}", a.shape, (a.example)());
    }
    let p = info.props.get(name).cloned().unwrap_or_default();
    let mut s = format!("supply {name} as JSON {}", type_name(&p.types));
    if is_digest_name(name) {
        let _ = write!(s, "; {DIGEST_TEXT}");
    } else if name == "bundle_path" {
        let _ = write!(s, "; {BUNDLE_PATH_TEXT}");
    } else if let Some(list) = p.enumeration.as_deref().and_then(enum_list) {
        let _ = write!(s, "; one of: {list}");
    } else if let Some(text) = p
        .pattern
        .as_deref()
        .filter(|_| !info.multi_branch.contains(name))
        .and_then(pattern_text)
    {
        // The format and an example (a missing `at`: "supply at as JSON string; use an
        // RFC 3339 datetime …, e.g. …").
        let _ = write!(s, "; {text}");
    } else if let Some(ex) = example_of(info, Some(name)) {
        let _ = write!(s, ", e.g. {ex}");
    }
    s
}

/// The guidance for a bad `limit`, from the tool's own schema: its bounds and its default
/// (`list_concepts` allows 1 to 1000, `validate_bundle` and the migration tools 1 to 10000).
fn limit_text(info: &InputInfo) -> String {
    let p = info.props.get("limit");
    let mut s = match p.and_then(|p| p.bounds) {
        Some((min, max)) => format!("limit must be an integer from {min} to {max}"),
        None => "limit must be a positive integer".to_owned(),
    };
    if let Some(d) = p.and_then(|p| p.default) {
        let _ = write!(s, " (default {d} when left out)");
    }
    s
}

fn is_digest_name(name: &str) -> bool {
    matches!(
        name,
        "expected_revision" | "expected_plan_digest" | "base_revision" | "plan_digest"
    )
}

fn pattern_text(pattern: &str) -> Option<&'static str> {
    if pattern == DATE_PATTERN {
        Some(DATE_TEXT)
    } else if pattern == OFFSET_DATETIME_PATTERN {
        Some(DATETIME_TEXT)
    } else if pattern == REVISION_PATTERN {
        Some(DIGEST_TEXT)
    } else if pattern == USAGE_COUNT_PATTERN {
        Some(USAGE_COUNT_TEXT)
    } else if pattern == CONCEPT_ID_PATTERN {
        Some(CONCEPT_ID_TEXT)
    } else if pattern.strip_prefix("^$|").unwrap_or(pattern) == DOCUMENT_ACTOR_PATTERN {
        Some(ACTOR_TEXT)
    } else {
        None
    }
}

fn unit_of(keyword: &str) -> &'static str {
    match keyword {
        "maxLength" | "minLength" => "characters",
        "maxItems" | "minItems" => "items",
        "maxProperties" => "properties",
        _ => "",
    }
}

/// The guidance of spec/surface.md §6.3 rule 4 for one failed keyword.
fn guidance(info: &InputInfo, leaf: Option<&str>, item: bool, kind: &K) -> String {
    let name = leaf.unwrap_or("the value");
    // Cases that do not depend on the field.
    match kind {
        K::AdditionalProperties { .. } => return UNKNOWN_TEXT.to_owned(),
        K::Required { property } => {
            let n = property.as_str().unwrap_or_default();
            return supply_text(info, n);
        }
        K::FalseSchema => {
            return format!(
                "{name} is not accepted for this operation kind or computation mode; remove it"
            )
        }
        _ => {}
    }
    // Field-specific guidance.
    match leaf {
        Some("temporal_profile") => return PROFILE_TEXT.to_owned(),
        Some("as_of") => {
            return match kind {
                K::Format { format } if format == "date" => format!("{AS_OF_TEXT}; {DATE_TEXT}"),
                K::Format { .. } => format!("{AS_OF_TEXT}; {DATETIME_TEXT}"),
                K::Pattern { pattern } => match pattern_text(pattern) {
                    Some(t) => format!("{AS_OF_TEXT}; {t}"),
                    None => AS_OF_TEXT.to_owned(),
                },
                K::Type { kind } => format!(
                    "{AS_OF_TEXT}; expected JSON {}",
                    type_name(&kind_types(kind))
                ),
                _ => AS_OF_TEXT.to_owned(),
            };
        }
        Some(n @ ("stale_after" | "last_modified" | "from" | "to"))
            if matches!(kind, K::AnyOf { .. }) =>
        {
            return format!("{n}: {TEMPORAL_AUTO_TEXT}")
        }
        Some("limit") => return limit_text(info),
        Some("query") => {
            return "query must be non-blank literal text of at most 512 characters".to_owned()
        }
        Some(n) if is_digest_name(n) => return format!("{n}: {DIGEST_TEXT}"),
        _ => {}
    }
    let detail = match kind {
        K::Type { kind } => {
            let mut s = format!(
                "expected JSON {}; values are never coerced (\"10\" is not an integer, \"true\" is not a boolean)",
                type_name(&kind_types(kind))
            );
            if let Some(ex) = example_of(info, leaf).filter(|_| !item) {
                let _ = write!(s, ", e.g. {ex}");
            }
            s
        }
        K::Enum { options } => {
            // An operation `kind` lists every value, however many (spec/surface.md §18.3
            // rule 4: guidance for an enum lists the allowed values).
            let list = match options.as_array() {
                Some(a) if leaf == Some("kind") => kind_list(a),
                Some(a) => enum_list(a),
                None => None,
            };
            match list {
                Some(list) => format!("use one of: {list}"),
                None => "use one of the advertised values".to_owned(),
            }
        }
        K::Constant { expected_value } => match enum_list(std::slice::from_ref(expected_value)) {
            Some(v) => format!("use {v}"),
            None => "use the advertised constant".to_owned(),
        },
        K::MaxLength { limit } | K::MaxItems { limit } | K::MaxProperties { limit } => format!(
            "reduce {name} to the advertised limit of {limit} {} (resource limit)",
            unit_of(kind.keyword())
        ),
        K::Maximum { limit } => {
            format!("reduce {name} to the advertised maximum of {limit} (resource limit)")
        }
        K::MinLength { limit } => format!(
            "{name} must have at least {limit} {}",
            if *limit == 1 {
                "character"
            } else {
                "characters"
            }
        ),
        K::MinItems { limit } => {
            if let Some(a) = leaf.and_then(|l| info.examples.iter().find(|a| a.name == l)) {
                format!("supply at least {limit} {}, e.g. {}", a.item, (a.example)())
            } else {
                format!(
                    "supply at least {limit} {}",
                    if *limit == 1 { "item" } else { "items" }
                )
            }
        }
        K::MinProperties { limit } => {
            if leaf == Some("lifecycle") {
                "lifecycle: give status, stale_after or both; an absent member keeps the current value, null removes it".to_owned()
            } else {
                format!(
                    "{name} needs at least {limit} {}",
                    if *limit == 1 { "member" } else { "members" }
                )
            }
        }
        K::Minimum { limit } => format!("{name} must be at least {limit}"),
        K::Format { format } => match format.as_str() {
            "date" => DATE_TEXT.to_owned(),
            _ => DATETIME_TEXT.to_owned(),
        },
        K::Pattern { pattern } => match pattern_text(pattern) {
            Some(t) => t.to_owned(),
            None if leaf == Some("concept_id") => CONCEPT_ID_TEXT.to_owned(),
            None => "the value does not have the advertised form".to_owned(),
        },
        K::Not { .. } if leaf == Some("concept_id") => CONCEPT_ID_TEXT.to_owned(),
        _ => "the value does not satisfy the advertised schema".to_owned(),
    };
    match leaf {
        Some("bundle_path") => format!("{BUNDLE_PATH_TEXT}; {detail}"),
        Some(n) if !detail.contains(n) => format!("{n}: {detail}"),
        _ => detail,
    }
}

// ---------------------------------------------------------------------------------------------
// Output enforcement
// ---------------------------------------------------------------------------------------------

/// Output enforcement (spec/surface.md §3): a success object against `$defs/success`, an
/// error object against `$defs/error_envelope`.
///
/// # Errors
/// `schema_validation` (`tool output violates its advertised state invariants`), or
/// `resource_limit` (`tool output exceeds MCP resource limits`) when a size or count cap
/// failed.
pub fn validate_output(tool: &str, value: &Value, is_error: bool) -> Result<(), ToolError> {
    let invariant = || {
        ToolError::new(
            codes::SCHEMA_VALIDATION,
            "tool output violates its advertised state invariants",
        )
    };
    let Some(c) = compiled(tool) else {
        return Err(invariant());
    };
    let v = if is_error { &c.error } else { &c.success };
    if v.is_valid(value) {
        return Ok(());
    }
    let size = v
        .iter_errors(value)
        .any(|e| SIZE_KEYWORDS.contains(&e.kind().keyword()));
    if size {
        Err(ToolError::resource_limit(
            "tool output exceeds MCP resource limits",
        ))
    } else {
        Err(invariant())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aut_05_the_actor_pattern_agrees_with_the_runtime_grammar() {
        let v = build(&json!({"type": "string", "pattern": DOCUMENT_ACTOR_PATTERN}))
            .expect("pattern compiles");
        for s in [
            "agent/1.0",
            "human:reviewer",
            "human: x",
            "process:nightly",
            "human:a/b",
            "reference_agent/gemini-2.5-flash",
            "a /b",
            "a/ b",
            "reviewer",
            "human:",
            "human: ",
            "process:\u{a0}",
            "a/b/c",
            "/x",
            "x/",
            " a/b",
            "a/b\n",
            "a/b\u{3000}",
            "a\tb/c",
            "",
        ] {
            assert_eq!(
                v.is_valid(&json!(s)),
                crate::okf::actor::is_document_actor(s),
                "{s:?}"
            );
        }
    }
    use serde_json::json;

    #[test]
    fn validators_exist_for_every_registered_tool() {
        for t in registry::all() {
            assert!(has_validators(t.name), "{}", t.name);
        }
    }

    #[test]
    fn field_paths_follow_rule_2() {
        let info = input_info(input_schema("preview_concept_patch").expect("schema"));
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            field_path(&info, &s(&["operations", "0", "concept_id"])),
            "operations.0.concept_id"
        );
        assert_eq!(
            field_path(&info, &s(&["operations", "1234567"])),
            "arguments"
        );
        assert_eq!(field_path(&info, &s(&["sk_live_x"])), "arguments");
        assert_eq!(field_path(&info, &[]), "arguments");
        assert_eq!(
            field_path(
                &info,
                &s(&[
                    "operations",
                    "0",
                    "source",
                    "id",
                    "id",
                    "id",
                    "id",
                    "id",
                    "id"
                ])
            ),
            "arguments"
        );
    }

    #[test]
    fn oversized_guidance_drops_diagnostics_from_the_end() {
        let mut e = ToolError::new(codes::SCHEMA_VALIDATION, INPUT_MESSAGE);
        for i in 0..8 {
            e.diagnostics.push(
                Diagnostic::new(codes::INVALID_INPUT, Severity::Error, "m".repeat(100))
                    .with_field(format!("f{i}")),
            );
        }
        let full = result_size(&e);
        let cap = full - 1;
        let r = fit(e.clone(), None, cap);
        assert_eq!(r.diagnostics.len(), 7);
        assert!(result_size(&r) <= cap);
        assert_eq!(r.diagnostics[6].field, "f6");
        let rec = Diagnostic::recovery("", "narrow it");
        let r = fit(e, Some(rec), cap);
        assert!(result_size(&r) <= cap);
        assert_eq!(
            r.diagnostics.last().map(|d| d.code.as_str()),
            Some("recovery_step")
        );
    }

    #[test]
    fn enum_lists_only_short_scalars() {
        assert_eq!(
            enum_list(&[json!("a"), json!(null)]).as_deref(),
            Some("\"a\", null")
        );
        assert!(enum_list(&[json!("x".repeat(70))]).is_none());
        let nine: Vec<Value> = (0..9).map(|i| json!(i)).collect();
        assert!(enum_list(&nine).is_none());
    }

    #[test]
    fn limit_guidance_reads_the_tools_own_bounds_and_default() {
        assert_eq!(description_default("Most (default 1000); more"), Some(1000));
        assert_eq!(description_default("Most concepts."), None);
        assert_eq!(description_default("(default many)"), None);
        let text = |bounds, default| {
            let mut info = InputInfo::default();
            info.props.insert(
                "limit".into(),
                PropInfo {
                    bounds,
                    default,
                    ..PropInfo::default()
                },
            );
            limit_text(&info)
        };
        assert_eq!(
            text(Some((1, 1000)), Some(200)),
            "limit must be an integer from 1 to 1000 (default 200 when left out)"
        );
        assert_eq!(
            text(Some((1, 10000)), None),
            "limit must be an integer from 1 to 10000"
        );
        assert_eq!(text(None, None), "limit must be a positive integer");
    }

    #[test]
    fn output_size_caps_are_resource_limits() {
        let mut diags = Vec::new();
        for _ in 0..10_001 {
            diags.push(json!({"code":"x","severity":"INFO","file":"","field":"","message":"m","spec_ref":"","policy_failure":false}));
        }
        let e = json!({"code":"x","message":"m","retryable":false,"diagnostics":diags});
        let err = validate_output("list_concepts", &e, true).expect_err("too many");
        assert_eq!(err.code, codes::RESOURCE_LIMIT);
        let bad = json!({"code":"x","message":"m","retryable":false,"diagnostics":[],"extra":1});
        let err = validate_output("list_concepts", &bad, true).expect_err("closed");
        assert_eq!(err.code, codes::SCHEMA_VALIDATION);
    }
}
