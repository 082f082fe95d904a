//! Identity of a change set, common to every workflow (spec/store.md §4–§5): the change set
//! and its request digest, the sentinel-based change-set id, the written-file and ref values,
//! and the plan digest. A workflow encodes its own operations (`OperationBytes`, e.g.
//! [`crate::plan::patch::identity::operation_bytes`]) and passes them in pre-encoded.
//!
//! Everything here is deterministic and pure: the same inputs give the same bytes on every
//! run and machine, and every encoded input changes the digest (spec/store.md §2 rule 4).

use crate::digest::{digest_str, hex, is_canonical_digest, sha256, Encoder};

/// What a preview authorised, as an apply request carries it back: both canonical
/// `sha256:<64 hex>` strings (spec/concept-patch.md §6.2 `expected_revision` and
/// `expected_plan_digest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorisation {
    /// The preview's `base_revision`: the change set's base.
    pub revision: String,
    /// The preview's `plan_digest`.
    pub plan_digest: String,
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

/// The change-set id of a workflow whose id depends only on the actor and the operations
/// (spec/concept-patch.md §7.2 and its siblings): `prefix` + the 64 hex of the request digest
/// of the sentinel change set with id `sentinel_id`, the actor, base `sentinel_base`, the
/// pre-encoded `operations` and no preconditions.
#[must_use]
pub fn sentinel_change_set_id(
    prefix: &str,
    sentinel_id: &str,
    sentinel_base: &str,
    actor: &str,
    operations: Vec<Vec<u8>>,
) -> String {
    let sentinel = ChangeSet {
        id: sentinel_id.to_owned(),
        actor: actor.to_owned(),
        base_revision: sentinel_base.to_owned(),
        operations,
        preconditions: Vec::new(),
    };
    let d = sentinel.request_digest();
    format!("{prefix}{}", d.strip_prefix("sha256:").unwrap_or(&d))
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
    encode_plan_digest(p, writes)
}

/// The plan digest of spec/store.md §5 for a streamed plan, whose written bytes are no longer
/// at hand: `writes` are `(path, bare lowercase hex SHA-256 of the content)`, computed by the
/// planner from the bytes it produced; `p.writes` is ignored.
///
/// # Errors
/// [`PlanDigestError`] when a rule-6 revision check fails or a path is written twice.
pub fn plan_digest_hashed(
    p: &PlanInputs<'_>,
    writes: &[(&str, &str)],
) -> Result<String, PlanDigestError> {
    if !is_canonical_digest(p.base_revision) || !is_canonical_digest(p.result_revision) {
        return Err(PlanDigestError::NonCanonicalRevision);
    }
    if p.base_revision != p.change_set_base {
        return Err(PlanDigestError::BaseMismatch);
    }
    encode_plan_digest(p, writes.to_vec())
}

fn encode_plan_digest(
    p: &PlanInputs<'_>,
    mut writes: Vec<(&str, &str)>,
) -> Result<String, PlanDigestError> {
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
