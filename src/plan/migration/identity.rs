//! Identity of a migration (spec/migration.md §7): the operation bytes, the change set and its
//! id, the content-free proof (format version 2), its validation and the plan digest. Pure.

use super::citations::CitationMapping;
use super::request::{MigrationRequest, Proof};
use crate::digest::{hex, sha256, Encoder};
use crate::okf::computation::ComputationBody;
use crate::plan::identity::{sentinel_change_set_id, ChangeSet, Precondition};
use serde_json::{json, Value};

/// The transaction principal of every migration (§7.1).
pub const ACTOR: &str = "tool:okf-mcp";
/// Id of the sentinel change set (§7.1).
pub const SENTINEL_ID: &str = "mcp-migration-identity-sentinel-v1";
/// Base of the sentinel change set.
pub const SENTINEL_BASE: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// Idempotency namespace of the apply (§7.4).
pub const NAMESPACE: &str = "migration:v0.1-to-v0.2";

/// `OperationBytes` of the migrate operation (§7.1) over the canonical request.
#[must_use]
pub fn operation_bytes(req: &MigrationRequest) -> Vec<u8> {
    let mut e = Encoder::default();
    e.str("migrate_v01_to_v02")
        .str(&req.generated_by)
        .str(req.timestamp_policy.as_str())
        .str(req.conflict_policy.as_str());
    e.cnt(req.generated_at.len() as u64);
    for g in &req.generated_at {
        e.str(&g.path).str(&g.at);
    }
    e.cnt(req.citation_mappings.len() as u64);
    for m in &req.citation_mappings {
        encode_mapping(&mut e, m);
    }
    e.cnt(req.computations.len() as u64);
    for c in &req.computations {
        let k = &c.contract;
        e.str(&c.path).str(k.mode()).str(&k.runtime);
        e.cnt(k.parameters.len() as u64);
        for p in &k.parameters {
            e.str(&p.name).str(&p.type_).bool(p.required);
        }
        let (path, code, language) = match &k.body {
            ComputationBody::File { path } => (path.as_str(), "", ""),
            ComputationBody::Inline { code, language } => {
                ("", code.as_str(), language.as_deref().unwrap_or(""))
            }
        };
        e.str(path).str(code).str(language);
        e.str(&k.executor.resource)
            .cnt(k.executor.receipt.len() as u64);
        for r in &k.executor.receipt {
            e.str(r);
        }
        e.str(&k.attester_resource);
        e.bool(c.asset.is_some());
        if let Some(a) = &c.asset {
            e.str(&a.path).bytes(a.content.as_bytes());
        }
    }
    e.finish()
}

/// The §7.1 encoding of one citation document item. `needs_review` is output only and never
/// encoded (§12.7 rule 8).
fn encode_mapping(e: &mut Encoder, m: &CitationMapping) {
    e.str(&m.path)
        .str(m.claim_markers.as_str())
        .str(m.trailing_content.as_str())
        .cnt(m.entries.len() as u64);
    for x in &m.entries {
        e.cnt(u64::from(x.legacy_number.unwrap_or(0)))
            .str(x.legacy_entry.as_deref().unwrap_or(""))
            .str(&x.source_id)
            .str(x.title.as_deref().unwrap_or(""))
            .str(x.resource.as_deref().unwrap_or(""))
            .str(x.inline_note.as_deref().unwrap_or(""));
    }
}

/// `proposals_digest` (§12.7 rule 2): `digest(str("okf:migration-proposals:v1") cnt(n)
/// [the §7.1 encoding of one item]*)` over every proposed item in path order; `""` when there
/// is none.
#[must_use]
pub fn proposals_digest(items: &[CitationMapping]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut e = Encoder::tagged("okf:migration-proposals:v1");
    e.cnt(items.len() as u64);
    for m in items {
        encode_mapping(&mut e, m);
    }
    e.digest()
}

/// The receipt's caller binding of §12.7 rule 4a: `digest(str("okf:migration-caller:v1")
/// str(<the §3.5 canonical input of the explicit arguments>) str(accept_proposals or "")
/// str(resolution_digest))`.
#[must_use]
pub fn caller_binding(req: &MigrationRequest, resolution_digest: &str) -> String {
    let mut e = Encoder::tagged("okf:migration-caller:v1");
    e.bytes(&operation_bytes(req))
        .str(req.accept_proposals.as_deref().unwrap_or(""))
        .str(resolution_digest);
    e.digest()
}

/// The change set the store binds a caller-bound apply to (§12.7 rule 4a): its one operation
/// is the caller binding, so its request digest, the transaction id and the receipt are
/// functions of the caller's explicit arguments (known before any I/O), not of the proposals
/// that the capture yields. The proof and plan digest are still those of the full request.
#[must_use]
pub fn caller_change_set(req: &MigrationRequest, resolution_digest: &str, base: &str) -> ChangeSet {
    let binding = caller_binding(req, resolution_digest);
    let mut op = Encoder::tagged("okf:migration-caller-binding");
    op.str(&binding);
    ChangeSet {
        id: format!(
            "mcp-migration-caller-{}",
            binding.strip_prefix("sha256:").unwrap_or(&binding)
        ),
        actor: ACTOR.to_owned(),
        base_revision: base.to_owned(),
        operations: vec![op.finish()],
        preconditions: vec![Precondition::RevisionEquals(base.to_owned())],
    }
}

/// The change-set id (§7.1): depends on the canonical input and the resolution only.
#[must_use]
pub fn change_set_id(req: &MigrationRequest, resolution_digest: &str) -> String {
    let sentinel = sentinel_change_set_id(
        "",
        SENTINEL_ID,
        SENTINEL_BASE,
        ACTOR,
        vec![operation_bytes(req)],
    );
    let mut e = Encoder::tagged("okf-mcp:v01-to-v02-migration-identity:v3");
    e.str(&format!("sha256:{sentinel}")).str(resolution_digest);
    format!("mcp-migration-{}", hex(&sha256(&e.finish())))
}

/// The change set on `base` (§7.1).
#[must_use]
pub fn change_set(req: &MigrationRequest, resolution_digest: &str, base: &str) -> ChangeSet {
    ChangeSet {
        id: change_set_id(req, resolution_digest),
        actor: ACTOR.to_owned(),
        base_revision: base.to_owned(),
        operations: vec![operation_bytes(req)],
        preconditions: vec![Precondition::RevisionEquals(base.to_owned())],
    }
}

/// The plan digest of §7.3: a function of the proof alone.
#[must_use]
pub fn plan_digest(p: &Proof) -> String {
    let mut e = Encoder::tagged("okf:migration-plan-proof:v2");
    e.cnt(p.format_version)
        .str(&p.request_digest)
        .str(&p.resolution_digest)
        .str(&p.base_revision)
        .str(&p.result_revision);
    e.str("reads").cnt(p.reads.len() as u64);
    for r in &p.reads {
        e.str(r);
    }
    e.str("writes").cnt(p.writes.len() as u64);
    for (path, d) in &p.writes {
        e.str(path).str(d);
    }
    e.str("deletes").cnt(p.deletes.len() as u64);
    for d in &p.deletes {
        e.str(d);
    }
    e.str("renames").cnt(p.renames.len() as u64);
    for (f, t) in &p.renames {
        e.str(f).str(t);
    }
    e.str("affected_refs").cnt(p.affected_refs.len() as u64);
    for r in &p.affected_refs {
        e.str(r);
    }
    e.str("reverse_impact").cnt(p.reverse_impact.len() as u64);
    for r in &p.reverse_impact {
        e.str(r);
    }
    e.str("changed_files").cnt(p.changed_files.len() as u64);
    for (k, path, from) in &p.changed_files {
        e.str(k).str(path).str(from);
    }
    e.str("changed_refs").cnt(p.changed_refs.len() as u64);
    for r in &p.changed_refs {
        e.str(r);
    }
    e.digest()
}

/// The sort key of a ref: (id bytes, fragment bytes), without fragment first.
fn ref_key(r: &str) -> (&[u8], Option<&[u8]>) {
    match r.split_once('#') {
        Some((id, f)) => (id.as_bytes(), Some(f.as_bytes())),
        None => (r.as_bytes(), None),
    }
}

/// Builds the proof (§7.2): `reads` = every base path, `writes` = `(path, digest hex)`,
/// refs = the concept ids of written concepts. Inputs in any order; sorted here.
#[must_use]
pub fn build_proof(
    request_digest: &str,
    resolution_digest: &str,
    base_revision: &str,
    result_revision: &str,
    reads: Vec<String>,
    writes: Vec<(String, String)>,
    mut changed_refs: Vec<String>,
) -> Proof {
    let mut reads = reads;
    reads.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut writes = writes;
    writes.sort_by(|a, b| (a.0.as_bytes(), a.1.as_bytes()).cmp(&(b.0.as_bytes(), b.1.as_bytes())));
    changed_refs.sort_by(|a, b| ref_key(a).cmp(&ref_key(b)));
    changed_refs.dedup();
    let changed_files = writes
        .iter()
        .map(|(p, _)| ("write".to_owned(), p.clone(), String::new()))
        .collect();
    Proof {
        format_version: 2,
        request_digest: request_digest.to_owned(),
        resolution_digest: resolution_digest.to_owned(),
        base_revision: base_revision.to_owned(),
        result_revision: result_revision.to_owned(),
        reads,
        writes,
        deletes: Vec::new(),
        renames: Vec::new(),
        affected_refs: changed_refs.clone(),
        reverse_impact: Vec::new(),
        changed_files,
        changed_refs,
    }
}

/// The wire object of a proof.
#[must_use]
pub fn proof_json(p: &Proof) -> Value {
    json!({
        "format_version": p.format_version,
        "request_digest": p.request_digest,
        "resolution_digest": p.resolution_digest,
        "base_revision": p.base_revision,
        "result_revision": p.result_revision,
        "reads": p.reads,
        "writes": p.writes.iter().map(|(path, d)| json!({"path": path, "digest": d})).collect::<Vec<_>>(),
        "deletes": p.deletes,
        "renames": p.renames.iter().map(|(f, t)| json!({"from": f, "to": t})).collect::<Vec<_>>(),
        "affected_refs": p.affected_refs,
        "reverse_impact": p.reverse_impact,
        "changed_files": p.changed_files.iter().map(|(k, path, from)| json!({"kind": k, "path": path, "from": from})).collect::<Vec<_>>(),
        "changed_refs": p.changed_refs,
    })
}

/// Constant-time string equality (§7.2 rule 4).
fn ct_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The proof validation of §7.2 rules 1–4 against the change set's `request_digest` and
/// base, and the expected source's `resolution_digest`; `assets` are the request's asset
/// paths (rule 2: a write may create one). Returns the reason of the first failure (the
/// caller answers `plan_mismatch`).
///
/// # Errors
/// A message naming the rule that failed.
pub fn validate_proof(
    p: &Proof,
    request_digest: &str,
    resolution_digest: &str,
    assets: &[&str],
) -> Result<(), &'static str> {
    let sorted_unique = |v: &[String]| v.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes());
    let refs_sorted = |v: &[String]| v.windows(2).all(|w| ref_key(&w[0]) < ref_key(&w[1]));
    if !p.deletes.is_empty() || !p.renames.is_empty() || !p.reverse_impact.is_empty() {
        return Err("the proof holds deletes, renames or reverse impact");
    }
    if p.changed_files.len() != p.writes.len()
        || p.changed_files
            .iter()
            .zip(&p.writes)
            .any(|((k, path, from), (wp, _))| k != "write" || path != wp || !from.is_empty())
    {
        return Err("proof changed_files do not mirror its writes");
    }
    if !sorted_unique(&p.reads)
        || !p
            .writes
            .windows(2)
            .all(|w| w[0].0.as_bytes() < w[1].0.as_bytes())
        || !refs_sorted(&p.affected_refs)
        || !refs_sorted(&p.changed_refs)
    {
        return Err("proof lists are not canonically sorted");
    }
    let read_document = |path: &str| {
        path.ends_with(".md")
            && p.reads
                .binary_search_by(|r| r.as_bytes().cmp(path.as_bytes()))
                .is_ok()
    };
    if p.writes.iter().any(|(path, d)| {
        !crate::digest::is_lower_hex64(d)
            || !(read_document(path) || assets.contains(&path.as_str()))
    }) {
        return Err("a proof write targets a path that was not read or is not a document");
    }
    if p.writes.is_empty() != (p.result_revision == p.base_revision) {
        return Err("proof writes and revisions disagree");
    }
    if p.affected_refs != p.changed_refs {
        return Err("proof affected_refs differ from changed_refs");
    }
    if !ct_eq(&p.request_digest, request_digest) {
        return Err("proof request_digest differs from the request");
    }
    if !ct_eq(&p.resolution_digest, resolution_digest) {
        return Err("proof resolution_digest differs from expected_source");
    }
    Ok(())
}
