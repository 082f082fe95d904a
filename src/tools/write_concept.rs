//! `write_concept` (compatibility; spec/concept-patch.md §10, spec/store.md §4 exception,
//! §10.0): whole-document replacement with a content-derived change id, fixed actor
//! `okf-mcp`, frontmatter written verbatim, exact replay of identical content.

use crate::digest::{self, Encoder};
use crate::envelope::{codes, Diagnostic, Severity, ToolError};
use crate::okf::bundle::parse_bundle;
use crate::okf::capture::{overlay_capture, Capture};
use crate::okf::temporal::Profile;
use crate::okf::validate::{self, ValidationOptions};
use crate::okf::version::{self, Target};
use crate::okf::yaml::{self, YamlError};
use crate::plan::stage::{finish_diagnostics, judge};
use crate::plan::stream::Writes;
use crate::store::capture;
use crate::store::commit::{manifest, CommitRequest, Reserve, Txn};
use crate::store::error::StoreError;
use crate::store::handle::StoreOptions;
use crate::store::outcome::ReceiptMatch;
use crate::store::root::{self, Root};
use crate::tools::common::{concept_id_arg, str_arg};
use crate::tools::def::{checked_in, Alias, MODE_KEYS};
use crate::tools::outcome;
use crate::tools::outcome::Flavor;
use crate::tools::schema_parts::{
    closed, closed_with, concept_id_prop, input_root, output_root, r, SchemaRoot,
    EXAMPLE_BUNDLE_PATH, EXAMPLE_CONCEPT_ID,
};
use crate::tools::Ctx;
use crate::tools::Success;
use crate::tools::ToolSpec;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// How `write_concept`'s store errors read (spec/concept-patch.md §10): no preview, so a
/// conflict asks to read the concept again.
pub const FLAVOR: Flavor = Flavor {
    tool: "write_concept",
    revision_field: "",
    digest_field: "",
    conflict_step:
        "The bundle revision changed. Read the concept again and repeat with reviewed content.",
    wrap: None,
};

/// `write_concept` as registered (spec/concept-patch.md §10; annotations spec/surface.md §2).
pub const TOOL: ToolSpec = ToolSpec {
    name: "write_concept",
    title: "Replace a whole concept",
    read_only: false,
    description: DESCRIPTION,
    input_schema: checked_in!("write_concept", "input"),
    output_schema: checked_in!("write_concept", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[Alias {
        keys: &MODE_KEYS,
        field: "preview_concept_patch",
        guidance: "write_concept has no rehearsal mode and replaces the whole concept. Review it with read_concept, or use preview_concept_patch for a bounded change.",
    }],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// Maximum bytes of `frontmatter` (spec/concept-patch.md §10.1).
pub const MAX_FRONTMATTER: usize = 1024 * 1024;
/// Maximum bytes of `body` and of the written file (spec/store.md §3.3).
pub const MAX_FILE: usize = 16 * 1024 * 1024;
/// Store attempts, repeated only after a CAS conflict (§10.3 step 5).
pub const ATTEMPTS: usize = 3;
/// The fixed adapter subject (§10).
pub const ACTOR: &str = "okf-mcp";

struct Input {
    bundle_path: String,
    concept_id: String,
    frontmatter: String,
    body: String,
    /// `<concept_id>.md`.
    path: String,
    /// The serialised document (§10.3 step 3).
    document: Vec<u8>,
}

/// Steps 1–3 of §10.3: pure, no I/O.
fn parse(args: &Value) -> Result<Input, ToolError> {
    let concept_id = str_arg(args, "concept_id").to_owned();
    concept_id_arg(&concept_id)?;
    let frontmatter = str_arg(args, "frontmatter").to_owned();
    let body = str_arg(args, "body").to_owned();
    if frontmatter.len() > MAX_FRONTMATTER {
        return Err(ToolError::resource_limit("frontmatter exceeds 1 MiB"));
    }
    if body.len() > MAX_FILE {
        return Err(ToolError::resource_limit("body exceeds 16 MiB"));
    }
    let frontmatter_step =
        || Diagnostic::recovery("frontmatter", "Check the YAML syntax and remove aliases.");
    if frontmatter
        .split('\n')
        .any(|l| l.strip_suffix('\r').unwrap_or(l) == "---")
    {
        return Err(
            ToolError::invalid_request("frontmatter must not contain a --- line")
                .with_diagnostic(frontmatter_step()),
        );
    }
    match yaml::parse(&frontmatter) {
        Ok(_) => {}
        Err(YamlError::Limit(_)) => {
            return Err(ToolError::resource_limit(
                "frontmatter exceeds the YAML resource limits",
            ))
        }
        Err(YamlError::Graph(_)) => {
            return Err(ToolError::new(
                codes::INVALID_YAML_GRAPH,
                "frontmatter has a broken YAML graph",
            )
            .with_diagnostic(frontmatter_step()))
        }
        Err(YamlError::Invalid(_) | YamlError::DuplicateKey) => {
            // spec/surface.md §18.3 rule 3: the line and column, counted in `frontmatter`.
            let at = yaml::error_position_text(&frontmatter, 0);
            return Err(ToolError::invalid_request(format!(
                "frontmatter is not one valid YAML mapping{at}"
            ))
            .with_diagnostic(frontmatter_step()));
        }
    }
    let nl = if frontmatter.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut doc = String::with_capacity(frontmatter.len() + body.len() + 16);
    doc.push_str("---");
    doc.push_str(nl);
    doc.push_str(&frontmatter);
    if !frontmatter.is_empty() && !frontmatter.ends_with('\n') {
        doc.push_str(nl);
    }
    doc.push_str("---");
    doc.push_str(nl);
    doc.push_str(&body);
    if doc.len() > MAX_FILE {
        return Err(ToolError::resource_limit(
            "the concept file would exceed the 16 MiB file limit",
        ));
    }
    Ok(Input {
        bundle_path: str_arg(args, "bundle_path").to_owned(),
        path: format!("{concept_id}.md"),
        concept_id,
        frontmatter,
        body,
        document: doc.into_bytes(),
    })
}

/// The loose diagnostic of §10.2: `{severity, message: "<code>: …", file?}`.
fn loose(d: &Diagnostic) -> Value {
    let wire = d.to_wire();
    let mut m = Map::new();
    m.insert("severity".into(), wire["severity"].clone());
    m.insert(
        "message".into(),
        Value::String(format!(
            "{}: {}",
            wire["code"].as_str().unwrap_or("operation_rejected"),
            wire["message"].as_str().unwrap_or_default()
        )),
    );
    if let Some(f) = wire["file"].as_str().filter(|f| !f.is_empty()) {
        m.insert("file".into(), Value::String(f.to_owned()));
    }
    Value::Object(m)
}

/// Code of the one `INFO` that counts the findings of the documents `write_concept` did not
/// write.
pub const OTHER_FINDINGS: &str = "other_findings";

/// Splits `projected` into the findings of `path` or of the bundle as a whole (no file) and
/// the `preexisting_error` warnings, kept as they are, and one `INFO` [`OTHER_FINDINGS`] that
/// counts the rest (the other documents' warnings and notes) by code (none when there is no
/// rest).
fn own_findings(projected: Vec<Diagnostic>, path: &str) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    // A pre-existing error elsewhere (one per document) stays named: it is what the write
    // did not block on (spec/concept-patch.md §10.2).
    let (own, rest): (Vec<Diagnostic>, Vec<Diagnostic>) = projected
        .into_iter()
        .partition(|d| d.file.is_empty() || d.file == path || d.code == "preexisting_error");
    if rest.is_empty() {
        return (own, Vec::new());
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &rest {
        *counts.entry(d.code.as_str()).or_default() += 1;
    }
    let by_code: Vec<String> = counts.iter().map(|(c, n)| format!("{c} {n}")).collect();
    let summary = Diagnostic::new(
        OTHER_FINDINGS,
        Severity::Info,
        format!(
            "{} findings in other documents ({}), not caused by this write: validate_bundle lists them",
            rest.len(),
            by_code.join(", ")
        ),
    );
    (own, vec![summary])
}

fn replayed_info() -> Value {
    json!({"severity": "INFO", "message": "receipt_replayed: answered from the stored receipt; nothing was written now"})
}

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Compatibility tool: replaces one concept file (or creates it) with frontmatter (YAML text without --- fences) and a Markdown body. No preview pair: read_concept first and prefer preview_concept_patch for metadata changes. Also the repair of a concept that does not parse. Only errors the write introduces block it (operation_rejected, nothing written). Next: validate_bundle.";

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// The errors of spec/concept-patch.md §10.3; a validation rejection is `operation_rejected`
/// whose diagnostics are the findings of §10.2 (the text items follow spec/surface.md §18.2).
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let input = parse(&args)?;
    // A cancellation after the input checks carries the recovery step of spec/surface.md §6.2.
    run_checked(&input, ctx).map_err(|e| {
        // A lock timeout keeps its own message (spec/store.md §16 rule 4).
        if e.code == codes::OPERATION_CANCELLED && e.message != crate::tools::outcome::MSG_LOCKED {
            StoreError::Cancelled.to_tool_error(FLAVOR)
        } else {
            e
        }
    })
}

fn run_checked(input: &Input, ctx: &Ctx) -> Result<Success, ToolError> {
    ctx.cancel.check()?;
    let root = root::open(&input.bundle_path)?;
    for _ in 0..ATTEMPTS {
        match attempt_once(&root, input, ctx)? {
            Attempt::Done(s) => return Ok(s),
            Attempt::Conflict => {}
        }
    }
    Err(StoreError::Conflict { retryable: true }.to_tool_error(FLAVOR))
}

enum Attempt {
    Done(Success),
    Conflict,
}

fn attempt_once(root: &Root, input: &Input, ctx: &Ctx) -> Result<Attempt, ToolError> {
    let capture = match capture::capture(root, &ctx.cancel) {
        // No stable snapshot: this tool's conflict, retried as one (spec/store.md §16 rule 3).
        Err(e) if capture::is_kept_changing(&e) => return Ok(Attempt::Conflict),
        other => other?,
    };
    // Step 5.1: an existing target that is a directory (also an empty one, which the
    // capture does not list) → `invalid_request`.
    let dir_prefix = format!("{}/", input.path);
    if capture
        .files
        .iter()
        .any(|f| f.path.starts_with(&dir_prefix))
        || root::is_directory(root, &input.path)
    {
        return Err(ToolError::invalid_request(
            "the concept path is a directory in the bundle",
        ));
    }
    let bundle = parse_bundle(&capture).map_err(|f| f.to_tool_error())?;
    let decl = version::declaration(&bundle);
    let ver = version::resolve(&decl, None);
    // Step 5.2: identity.
    let mut e = Encoder::tagged("okf-mcp:write-concept:v3");
    e.str(&input.concept_id)
        .str(&input.frontmatter)
        .str(&input.body)
        .str(ver.declared.as_deref().unwrap_or(""))
        .str(ver.effective.unwrap_or(""))
        .str(ver.resolution.unwrap_or(""))
        .str(ver.compatibility.unwrap_or(""));
    let change_id = format!("mcp-replace-{}", digest::hex(&digest::sha256(&e.finish())));
    let mut rd = Encoder::tagged("okf:replace-concept:v1");
    rd.str(&change_id)
        .str(ACTOR)
        .str(&input.concept_id)
        .bytes(&input.document);
    let request_digest = rd.digest();
    let expected = ReceiptMatch {
        change_set_id: change_id.clone(),
        idempotency_key: change_id.clone(),
        request_digest: request_digest.clone(),
        base_revision: None,
    };
    // Step 5.3: receipt lookup only when `.okf/` exists.
    if root::has_private_state(root)? {
        let hit = Txn::begin(
            root,
            &change_id,
            &request_digest,
            Reserve::DeferredNoBasis,
            &ctx.cancel,
            &StoreOptions::from_env(),
        )
        .and_then(|txn| txn.replay(Some(&capture), &ctx.cancel));
        match hit {
            Ok(None) => {}
            Ok(Some(outcome)) => {
                let ok = outcome::classify(Ok(outcome), &expected, FLAVOR)?;
                let mut payload = ok.receipt.replay.clone().unwrap_or_else(|| json!({}));
                if let Some(d) = payload.get_mut("diagnostics").and_then(Value::as_array_mut) {
                    d.push(replayed_info());
                }
                return Ok(Attempt::Done(Success::json(payload)));
            }
            Err(err) => return Err(err.to_tool_error(FLAVOR)),
        }
    }
    // Step 5.4: staged validation.
    let spec_version = match (ver.resolution, ver.effective) {
        (Some("declared" | "default"), Some("0.1")) => Some(Target::V01),
        (Some("declared" | "default"), Some("0.2")) => Some(Target::V02),
        _ => None,
    };
    let opts = ValidationOptions {
        strict: true,
        check_links: true,
        check_orphans: true,
        spec_version,
        temporal_profile: Profile::Date,
        as_of: None,
    };
    let writes = vec![(input.path.clone(), input.document.clone())];
    let staged: Capture = overlay_capture(&capture, &writes);
    let base_report = validate::validate(&capture, &opts).map_err(|f| f.to_tool_error())?;
    let staged_report = validate::validate(&staged, &opts).map_err(|f| f.to_tool_error())?;
    let written: BTreeSet<&str> = std::iter::once(input.path.as_str()).collect();
    let verdict = judge(&base_report, &staged_report, &written);
    // The findings of the written concept (and bundle-level ones) are given; the other
    // documents' findings only as counts (spec/surface.md §18.2: answers that fit).
    let (projected, others) = own_findings(verdict.projected, &input.path);
    if !verdict.blocking.is_empty() {
        let mut all = projected.clone();
        all.extend(others.clone());
        all.extend(verdict.blocking);
        // The envelope keeps diagnostics from the front while the whole error result fits
        // 64 KiB (spec/surface.md §4; the trim is in `ToolError::to_wire`).
        let mut err = ToolError::new(codes::OPERATION_REJECTED, "tool operation was rejected");
        err.diagnostics = finish_diagnostics(all);
        return Err(err);
    }
    let mut own = projected;
    own.extend(others);
    let diagnostics: Vec<Value> = finish_diagnostics(own).iter().map(loose).collect();
    let payload = json!({"status": "success", "path": input.path, "diagnostics": diagnostics});
    // Step 5.5: identical replacement.
    if capture
        .get(&input.path)
        .is_some_and(|f| f.bytes() == input.document)
    {
        return Ok(Attempt::Done(Success::json(payload)));
    }
    // Step 5.6: commit.
    let request = CommitRequest {
        change_set_id: change_id.clone(),
        idempotency_key: change_id,
        request_digest,
        base_revision: capture.revision.clone(),
        result_revision: staged.revision.clone(),
        base: manifest(&capture),
        writes: Writes::Resident(writes),
        changed_refs: vec![input.concept_id.clone()],
        replay: Some(payload),
    };
    let result = Txn::begin(
        root,
        &request.idempotency_key,
        &request.request_digest,
        Reserve::Deferred,
        &ctx.cancel,
        &StoreOptions::from_env(),
    )
    .and_then(|txn| txn.commit(&request, None, Some(&capture), &ctx.cancel));
    outcome::notice_store_created(&result);
    match result {
        Err(StoreError::Conflict { .. }) => Ok(Attempt::Conflict),
        result => {
            let ok = outcome::classify(result, &expected, FLAVOR)?;
            let mut payload = ok.receipt.replay.clone().unwrap_or_else(|| json!({}));
            if ok.replayed.is_some() {
                if let Some(d) = payload.get_mut("diagnostics").and_then(Value::as_array_mut) {
                    d.push(replayed_info());
                }
            }
            let mut s = Success::json(payload);
            s.committed = true;
            Ok(Attempt::Done(s))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The input schema root (spec/concept-patch.md §10.1).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "write_concept",
        "Arguments of write_concept; all required, no revision, digest or idempotency token (spec/concept-patch.md §10.1).",
        &["bundle_path", "concept_id", "frontmatter", "body"],
        vec![
            ("bundle_path", r("bundle_path")),
            ("concept_id", concept_id_prop()),
            (
                "frontmatter",
                json!({
                    "description": "YAML text of one mapping, without the --- fences.",
                    "type": "string",
                    "maxLength": 1024 * 1024,
                    "examples": ["type: Table\ntitle: Orders\n"]
                }),
            ),
            (
                "body",
                json!({
                    "description": "Markdown body written after the closing fence.",
                    "type": "string",
                    "maxLength": 16 * 1024 * 1024,
                    "examples": ["# Orders\n"]
                }),
            ),
        ],
    );
    m.insert(
        "examples".into(),
        json!([{
            "bundle_path": EXAMPLE_BUNDLE_PATH,
            "concept_id": EXAMPLE_CONCEPT_ID,
            "frontmatter": "type: Table\ntitle: Orders\n",
            "body": "# Orders\n"
        }]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/concept-patch.md §10.2).
fn output_schema() -> SchemaRoot {
    output_root(
        "write_concept",
        "Result of write_concept (spec/concept-patch.md §10.2).",
        write_success(),
    )
}

fn write_success() -> Value {
    let loose = closed_with(
        &["severity", "message"],
        vec![
            (
                "severity",
                json!({"type": "string", "enum": ["ERROR", "WARN", "INFO"]}),
            ),
            (
                "message",
                json!({"description": "Starts with the finding's code and ': ' (spec/concept-patch.md §10.2).", "type": "string", "pattern": "^[a-z0-9_]+: "}),
            ),
            ("file", json!({"type": "string", "minLength": 1})),
        ],
    );
    closed(vec![
        ("status", json!({"type": "string", "const": "success"})),
        (
            "path",
            json!({"type": "string", "minLength": 4, "maxLength": 4099, "pattern": "\\.md$"}),
        ),
        (
            "diagnostics",
            json!({"type": "array", "maxItems": 10000, "items": loose}),
        ),
    ])
}
