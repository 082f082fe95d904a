//! Identity of a concept patch: operation encodings (spec/concept-patch.md §7.1), the
//! concept-patch change set and its change-set id (spec/concept-patch.md §7.2). The generic
//! change set, request digest and plan digest are [`crate::plan::identity`].
//!
//! Everything here is deterministic and pure: the same inputs give the same bytes on every
//! run and machine, and every encoded input changes the digest (spec/store.md §2 rule 4).
//! The temporal profile is never encoded.

use super::ops::{Member, Operation, PatchSource, SourceSelector};
use crate::digest::Encoder;
#[cfg(test)]
use crate::plan::identity::{
    content_hex, plan_digest, PlanDigestError, PlanInputs, PlanWrite, Precondition, Ref,
};
use crate::plan::identity::{sentinel_change_set_id, ChangeSet};

/// Id of the sentinel change set of spec/concept-patch.md §7.2.
pub const SENTINEL_ID: &str = "mcp-patch-identity-sentinel-v1";
/// Base revision of the sentinel change set: `sha256:` + 64 zeros.
pub const SENTINEL_BASE: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// Prefix of every concept-patch change-set id.
pub const CHANGE_SET_ID_PREFIX: &str = "mcp-patch-";

/// `tri(x)` of spec/concept-patch.md §11.1: `cnt(0)` absent, `cnt(1)` null, `cnt(2) str(x)`.
fn tri(e: &mut Encoder, m: &Member<String>) {
    match m {
        Member::Keep => e.cnt(0),
        Member::Remove => e.cnt(1),
        Member::Set(x) => e.cnt(2).str(x),
    };
}

/// Appends `OperationBytes(op)` (spec/concept-patch.md §7.1) to `e`.
pub fn encode_operation(e: &mut Encoder, op: &Operation) {
    match op {
        Operation::SetMetadata {
            concept_id,
            metadata,
        } => {
            e.str("set_metadata").str(concept_id);
            tri(e, &metadata.type_);
            tri(e, &metadata.title);
            tri(e, &metadata.description);
            match &metadata.tags {
                Member::Keep => {
                    e.cnt(0);
                }
                Member::Remove => {
                    e.cnt(1);
                }
                Member::Set(tags) => {
                    e.cnt(2).cnt(tags.len() as u64);
                    for t in tags {
                        e.str(t);
                    }
                }
            }
        }
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
            let status = match &lifecycle.status {
                Member::Keep => None,
                Member::Remove => Some(None),
                Member::Set(s) => Some(Some(s.as_str())),
            };
            let stale_after = match &lifecycle.stale_after {
                Member::Keep => None,
                Member::Remove => Some(None),
                Member::Set(s) => Some(Some(s.as_str())),
            };
            if let (Some(status), Some(stale_after)) = (status, stale_after) {
                // Both members present: the Phase-1 encoding, so exact replays across the
                // upgrade keep their key (spec/concept-patch.md §7.1).
                e.str("set_lifecycle").str(concept_id);
                e.bool(status.is_some());
                if let Some(s) = status {
                    e.str(s);
                }
                e.bool(stale_after.is_some());
                if let Some(s) = stale_after {
                    e.str(s);
                }
            } else {
                // A member absent (§11.1): tri(x) = cnt(0) absent, cnt(1) null, cnt(2) str(x).
                e.str("set_lifecycle:v2").str(concept_id);
                for m in [status, stale_after] {
                    match m {
                        None => {
                            e.cnt(0);
                        }
                        Some(None) => {
                            e.cnt(1);
                        }
                        Some(Some(x)) => {
                            e.cnt(2).str(x);
                        }
                    }
                }
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
                crate::okf::computation::ComputationBody::File { path } => (path.as_str(), "", ""),
                crate::okf::computation::ComputationBody::Inline { code, language } => {
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
fn encode_source(e: &mut Encoder, s: &PatchSource) {
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

/// The concept-patch constructor of the generic [`ChangeSet`].
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
}

/// The change-set id of spec/concept-patch.md §7.2:
/// `"mcp-patch-" + <64 hex of request_digest(sentinel)>`, where the sentinel has id
/// [`SENTINEL_ID`], the request actor, base [`SENTINEL_BASE`], the same operations and no
/// preconditions. Depends only on actor and operations.
#[must_use]
pub fn change_set_id(actor: &str, operations: &[Operation]) -> String {
    sentinel_change_set_id(
        CHANGE_SET_ID_PREFIX,
        SENTINEL_ID,
        SENTINEL_BASE,
        actor,
        operations.iter().map(operation_bytes).collect(),
    )
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
