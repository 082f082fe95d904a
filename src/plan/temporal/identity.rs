//! Identity of a temporal upgrade (spec/temporal.md §10): operation bytes, change set and
//! the idempotency namespace.

use super::request::{Mapping, TemporalRequest};
use crate::digest::Encoder;
use crate::plan::identity::ChangeSet;

/// The idempotency namespace of `apply_temporal_upgrade` (spec/store.md §6.1).
pub const NAMESPACE: &str = "temporal-upgrade:v1";

/// `str("upgrade_temporal_concept") str(concept_id) cnt(#rewrites) [ str(path) str(from)
/// str(to) ]*`, rewrites sorted by path bytes (§10).
#[must_use]
pub fn operation_bytes(concept: &str, rewrites: &[&Mapping]) -> Vec<u8> {
    let mut sorted: Vec<&&Mapping> = rewrites.iter().collect();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let mut e = Encoder::tagged("upgrade_temporal_concept");
    e.str(concept).cnt(sorted.len() as u64);
    for m in sorted {
        e.str(&m.path).str(&m.from).str(&m.to);
    }
    e.finish()
}

/// The change set of `req` on `base_revision` (§10): id and actor of the request, one
/// operation per concept with at least one mapping, concepts ascending, no preconditions.
/// On a `ready` plan every mapping is a rewrite, so this is also the change set of the plan;
/// the apply off the previewed revision rebuilds it from the request alone (§6 step 4).
#[must_use]
pub fn change_set(req: &TemporalRequest, base_revision: &str) -> ChangeSet {
    ChangeSet {
        id: req.id.clone(),
        actor: req.actor.clone(),
        base_revision: base_revision.to_owned(),
        operations: req
            .by_concept()
            .iter()
            .map(|(c, ms)| operation_bytes(c, ms))
            .collect(),
        preconditions: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(concept: &str, path: &str, to: &str) -> Mapping {
        Mapping {
            concept: concept.into(),
            path: path.into(),
            from: "2026-01-02".into(),
            to: to.into(),
        }
    }

    fn req(mappings: Vec<Mapping>) -> TemporalRequest {
        TemporalRequest {
            bundle_path: "/x".into(),
            id: "up-1".into(),
            actor: "agent".into(),
            mappings,
            auth: None,
        }
    }

    #[test]
    fn every_member_of_the_request_enters_the_request_digest() {
        let base = format!("sha256:{}", "1".repeat(64));
        let z = "2026-01-02T00:00:00Z";
        let a = req(vec![m("a", "stale_after", z), m("b", "usage_window.to", z)]);
        let d = change_set(&a, &base).request_digest();
        let mut ids = a.clone();
        ids.id = "up-2".into();
        let mut actor = a.clone();
        actor.actor = "other".into();
        let mut to = a.clone();
        to.mappings[1].to = "2026-01-02T00:00:00+07:00".into();
        let mut path = a.clone();
        path.mappings[1].path = "usage_window.from".into();
        for other in [ids, actor, to, path] {
            assert_ne!(change_set(&other, &base).request_digest(), d);
        }
        assert_ne!(
            change_set(&a, &format!("sha256:{}", "2".repeat(64))).request_digest(),
            d
        );
        let cs = change_set(&a, &base);
        assert_eq!(cs.operations.len(), 2);
        assert!(cs.preconditions.is_empty());
        // Rewrites sorted by path bytes inside the operation, whatever the slice order.
        let x = m("a", "usage_window.to", z);
        let y = m("a", "stale_after", z);
        assert_eq!(
            operation_bytes("a", &[&x, &y]),
            operation_bytes("a", &[&y, &x])
        );
    }
}
