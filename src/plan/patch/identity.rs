//! Identity of a concept patch: operation encodings (spec/concept-patch.md §7.1), the change
//! set and its request digest (spec/store.md §4), the change-set id (spec/concept-patch.md
//! §7.2) and the plan digest (spec/store.md §5).
//!
//! Everything here is deterministic and pure: the same inputs give the same bytes on every
//! run and machine, and every encoded input changes the digest (spec/store.md §2 rule 4).
//! The temporal profile is never encoded.

use super::ops::{Operation, Source, SourceSelector};
use crate::plan::digest::{digest_str, hex, is_canonical_digest, revision, sha256, Encoder};
use std::collections::BTreeMap;

/// Id of the sentinel change set of spec/concept-patch.md §7.2.
pub const SENTINEL_ID: &str = "mcp-patch-identity-sentinel-v1";
/// Base revision of the sentinel change set: `sha256:` + 64 zeros.
pub const SENTINEL_BASE: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// Prefix of every concept-patch change-set id.
pub const CHANGE_SET_ID_PREFIX: &str = "mcp-patch-";

/// Appends `OperationBytes(op)` (spec/concept-patch.md §7.1) to `e`.
pub fn encode_operation(e: &mut Encoder, op: &Operation) {
    match op {
        Operation::SetGenerated {
            concept_id,
            generated,
        } => {
            e.str("set_generated")
                .str(concept_id)
                .str(&generated.by)
                .str(generated.at.as_deref().unwrap_or(""));
        }
        Operation::EnsureVerification {
            concept_id,
            verification,
        }
        | Operation::RemoveVerification {
            concept_id,
            verification,
        } => {
            e.str(op.kind())
                .str(concept_id)
                .str(&verification.by)
                .str(&verification.at);
        }
        Operation::PutSource { concept_id, source } => {
            e.str("put_source").str(concept_id);
            encode_source(e, source);
        }
        Operation::RemoveSource {
            concept_id,
            selector,
        } => {
            e.str("remove_source").str(concept_id);
            encode_selector(e, selector);
        }
        Operation::SetUsageWindow {
            concept_id,
            selector,
            window,
        } => {
            e.str("set_usage_window").str(concept_id);
            e.bool(selector.is_some());
            if let Some(s) = selector {
                encode_selector(e, s);
            }
            e.bool(window.is_some());
            if let Some(w) = window {
                e.str(&w.from).str(&w.to);
            }
        }
        Operation::SetLifecycle {
            concept_id,
            lifecycle,
        } => {
            e.str("set_lifecycle").str(concept_id);
            e.bool(lifecycle.status.is_some());
            if let Some(s) = lifecycle.status {
                e.str(s.as_str());
            }
            e.bool(lifecycle.stale_after.is_some());
            if let Some(s) = &lifecycle.stale_after {
                e.str(s);
            }
        }
        Operation::PutAttestedComputation {
            concept_id,
            computation: c,
        } => {
            e.str("put_attested_computation")
                .str(concept_id)
                .str(c.mode())
                .str(&c.runtime)
                .cnt(c.parameters.len() as u64);
            for p in &c.parameters {
                e.str(&p.name).str(&p.type_).bool(p.required);
            }
            let (path, code, language) = match &c.body {
                super::ops::ComputationBody::File { path } => (path.as_str(), "", ""),
                super::ops::ComputationBody::Inline { code, language } => {
                    ("", code.as_str(), language.as_deref().unwrap_or(""))
                }
            };
            e.str(path)
                .str(code)
                .str(language)
                .str(&c.executor.resource)
                .cnt(c.executor.receipt.len() as u64);
            for r in &c.executor.receipt {
                e.str(r);
            }
            e.str(&c.attester_resource);
        }
        Operation::SetBundleVersion { version } => {
            e.str("set_bundle_version").str(version.as_str());
        }
    }
}

/// SRC of spec/concept-patch.md §7.1.
fn encode_source(e: &mut Encoder, s: &Source) {
    let opt = |x: &Option<String>| x.clone().unwrap_or_default();
    e.str(&opt(&s.id))
        .str(&s.resource)
        .str(&opt(&s.title))
        .str(&opt(&s.author));
    e.bool(s.usage_count.is_some());
    if s.usage_count.is_some() {
        // Validation guarantees the text is a canonical u64 (ops.rs rule 2).
        e.cnt(s.usage_count_value().unwrap_or(0));
    }
    e.str(&opt(&s.last_modified));
    e.bool(s.usage_window.is_some());
    if let Some(w) = &s.usage_window {
        e.str(&w.from).str(&w.to);
    }
}

/// SEL of spec/concept-patch.md §7.1.
fn encode_selector(e: &mut Encoder, s: &SourceSelector) {
    match s {
        SourceSelector::Id(id) => {
            e.str("id").str(id);
        }
        SourceSelector::Exact(src) => {
            e.str("exact");
            encode_source(e, src);
        }
    }
}

/// `OperationBytes(op)` as a standalone byte string.
#[must_use]
pub fn operation_bytes(op: &Operation) -> Vec<u8> {
    let mut e = Encoder::default();
    encode_operation(&mut e, op);
    e.finish()
}

/// A precondition of a change set (spec/store.md §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// `revision_equals(r)`: `str("revision_equals") str(r)`.
    RevisionEquals(String),
}

/// A change set `{format_version: 1, id, actor, base_revision, operations, preconditions}`
/// (spec/store.md §4). `operations` hold pre-encoded `OperationBytes`, so the migration and
/// temporal tools can reuse this type with their own operation kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSet {
    pub id: String,
    pub actor: String,
    pub base_revision: String,
    /// `OperationBytes` of each operation, in request order.
    pub operations: Vec<Vec<u8>>,
    pub preconditions: Vec<Precondition>,
}

impl ChangeSet {
    /// The concept-patch change set of spec/concept-patch.md §6.1 step 5 / §6.2 step 4: id per
    /// §7.2, the request actor, `base_revision` (preview: captured; apply:
    /// `expected_revision`), the operations, no preconditions.
    #[must_use]
    pub fn concept_patch(actor: &str, base_revision: &str, operations: &[Operation]) -> Self {
        Self {
            id: change_set_id(actor, operations),
            actor: actor.to_owned(),
            base_revision: base_revision.to_owned(),
            operations: operations.iter().map(operation_bytes).collect(),
            preconditions: Vec::new(),
        }
    }

    /// `CanonicalBytes(cs)` of spec/store.md §4. `OperationBytes` are self-delimiting and are
    /// concatenated without a further length prefix.
    #[must_use]
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut head = Encoder::tagged("okf:changeset");
        head.cnt(1)
            .str(&self.id)
            .str(&self.actor)
            .str(&self.base_revision)
            .cnt(self.operations.len() as u64);
        let mut bytes = head.finish();
        for op in &self.operations {
            bytes.extend_from_slice(op);
        }
        let mut tail = Encoder::default();
        tail.cnt(self.preconditions.len() as u64);
        for p in &self.preconditions {
            match p {
                Precondition::RevisionEquals(r) => {
                    tail.str("revision_equals").str(r);
                }
            }
        }
        bytes.extend_from_slice(&tail.finish());
        bytes
    }

    /// `request_digest(cs) = digest(CanonicalBytes(cs))`: `sha256:<64 hex>`.
    #[must_use]
    pub fn request_digest(&self) -> String {
        digest_str(&self.canonical_bytes())
    }
}

/// The change-set id of spec/concept-patch.md §7.2:
/// `"mcp-patch-" + <64 hex of request_digest(sentinel)>`, where the sentinel has id
/// [`SENTINEL_ID`], the request actor, base [`SENTINEL_BASE`], the same operations and no
/// preconditions. Depends only on actor and operations.
#[must_use]
pub fn change_set_id(actor: &str, operations: &[Operation]) -> String {
    let sentinel = ChangeSet {
        id: SENTINEL_ID.to_owned(),
        actor: actor.to_owned(),
        base_revision: SENTINEL_BASE.to_owned(),
        operations: operations.iter().map(operation_bytes).collect(),
        preconditions: Vec::new(),
    };
    let d = sentinel.request_digest();
    format!(
        "{CHANGE_SET_ID_PREFIX}{}",
        d.strip_prefix("sha256:").unwrap_or(&d)
    )
}

/// One written file of a plan: its path, its new content and the claimed content digest
/// (bare lowercase hex SHA-256, spec/store.md §5 rule 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanWrite<'a> {
    pub path: &'a str,
    pub content: &'a [u8],
    pub digest_hex: &'a str,
}

/// Bare lowercase hex SHA-256 of `content` (spec/store.md §5 rule 2).
#[must_use]
pub fn content_hex(content: &[u8]) -> String {
    hex(&sha256(content))
}

/// A ref of spec/store.md §5 rule 4: a concept id, optionally with a fragment.
/// Ordered by (concept id bytes, fragment bytes), a ref without fragment first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ref {
    pub concept_id: String,
    pub fragment: Option<String>,
}

impl Ref {
    /// A ref without fragment.
    #[must_use]
    pub fn concept(id: &str) -> Self {
        Self {
            concept_id: id.to_owned(),
            fragment: None,
        }
    }

    /// The encoded form: `id` or `id#fragment`.
    #[must_use]
    pub fn encoded(&self) -> String {
        match &self.fragment {
            None => self.concept_id.clone(),
            Some(f) => format!("{}#{f}", self.concept_id),
        }
    }
}

/// The inputs of a plan digest (spec/store.md §5). Deletes, renames and reverse impact are
/// always empty for the tools of this product (§5 rules 4–5) and are encoded as empty lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanInputs<'a> {
    /// The change set's request digest.
    pub request_digest: &'a str,
    /// The change set's `base_revision` (must equal `base_revision`, §5 rule 6).
    pub change_set_base: &'a str,
    /// The plan's base revision (the captured revision).
    pub base_revision: &'a str,
    /// The plan's result revision (§5 rule 3).
    pub result_revision: &'a str,
    /// Every path of the base manifest (§5 rule 1), any order.
    pub reads: Vec<&'a str>,
    /// The written files, any order.
    pub writes: Vec<PlanWrite<'a>>,
    /// Refs of the written concept files, any order; duplicates collapse.
    pub affected_refs: Vec<Ref>,
}

/// Why a plan digest cannot be computed (spec/store.md §5 rule 6); the tool maps every
/// variant to its plan-mismatch error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanDigestError {
    /// The base or result revision is not `sha256:<64 lowercase hex>`.
    #[error("plan revision is not canonical")]
    NonCanonicalRevision,
    /// The plan's base differs from the change set's base.
    #[error("plan base differs from the change set base")]
    BaseMismatch,
    /// A write's claimed digest differs from the digest of its content.
    #[error("plan write digest does not match its content")]
    WriteDigestMismatch,
    /// Two writes name the same path.
    #[error("plan writes one path twice")]
    DuplicateWrite,
}

/// The plan digest of spec/store.md §5.
///
/// # Errors
/// [`PlanDigestError`] when a rule-6 check fails (or a path is written twice).
pub fn plan_digest(p: &PlanInputs<'_>) -> Result<String, PlanDigestError> {
    if !is_canonical_digest(p.base_revision) || !is_canonical_digest(p.result_revision) {
        return Err(PlanDigestError::NonCanonicalRevision);
    }
    if p.base_revision != p.change_set_base {
        return Err(PlanDigestError::BaseMismatch);
    }
    let mut writes: Vec<(&str, &str)> = Vec::with_capacity(p.writes.len());
    for w in &p.writes {
        if content_hex(w.content) != w.digest_hex {
            return Err(PlanDigestError::WriteDigestMismatch);
        }
        writes.push((w.path, w.digest_hex));
    }
    writes.sort_by(|a, b| {
        a.0.as_bytes()
            .cmp(b.0.as_bytes())
            .then(a.1.as_bytes().cmp(b.1.as_bytes()))
    });
    if writes.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(PlanDigestError::DuplicateWrite);
    }
    let mut reads = p.reads.clone();
    reads.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut refs = p.affected_refs.clone();
    refs.sort();
    refs.dedup();

    let mut e = Encoder::tagged("okf:mutation-plan:v1");
    e.str(p.request_digest)
        .str(p.base_revision)
        .str(p.result_revision);
    e.str("reads").cnt(reads.len() as u64);
    for r in &reads {
        e.str(r);
    }
    e.str("writes").cnt(writes.len() as u64);
    for (path, d) in &writes {
        e.str(path).str(d);
    }
    e.str("deletes").cnt(0);
    e.str("renames").cnt(0);
    e.str("affected_refs").cnt(refs.len() as u64);
    for r in &refs {
        e.str(&r.encoded());
    }
    e.str("reverse_impact").cnt(0);
    Ok(e.digest())
}

/// The result revision of spec/store.md §5 rule 3: the revision (§3.6) of the base manifest
/// `(path, H(content))` with every write applied (replaced or added).
#[must_use]
pub fn result_revision<'a>(
    base: impl IntoIterator<Item = (&'a str, [u8; 32])>,
    writes: &[(&'a str, &[u8])],
) -> String {
    let mut m: BTreeMap<&str, [u8; 32]> = base.into_iter().collect();
    for (path, content) in writes {
        m.insert(path, sha256(content));
    }
    revision(m.iter().map(|(p, d)| (*p, d)))
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
