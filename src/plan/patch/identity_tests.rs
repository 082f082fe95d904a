//! Unit tests of operation encodings, change-set identity and the plan digest.

use super::*;
use crate::digest::digest_str;
use crate::okf::computation::{AttestedComputation, ComputationBody, Executor, Parameter};
use crate::plan::patch::ops::{
    BundleVersion, Generated, Lifecycle, LifecycleStatus, Member, Operation, PatchSource,
    SourceSelector, Verification, Window,
};
use std::collections::HashSet;

const BASE: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const RESULT: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

fn src() -> PatchSource {
    PatchSource {
        id: Some("s1".into()),
        resource: "https://ex.test/r".into(),
        title: Some("T".into()),
        author: Some("A".into()),
        usage_count: Some("42".into()),
        last_modified: Some("2026-01-01".into()),
        usage_window: Some(Window {
            from: "2026-01-01".into(),
            to: "2026-02-01".into(),
        }),
    }
}

fn comp() -> AttestedComputation {
    AttestedComputation {
        runtime: "python3".into(),
        parameters: vec![Parameter {
            name: "year".into(),
            type_: "integer".into(),
            required: true,
        }],
        executor: Executor {
            resource: "https://ex.test/run".into(),
            receipt: vec!["r1".into(), "r2".into()],
        },
        attester_resource: "https://ex.test/att".into(),
        body: ComputationBody::Inline {
            code: "print(1)\n".into(),
            language: Some("python".into()),
        },
    }
}

/// One operation of every kind.
fn all_kinds() -> Vec<Operation> {
    let c = || "a/b".to_owned();
    vec![
        Operation::SetGenerated {
            concept_id: c(),
            generated: Generated {
                by: "agent/1.0".into(),
                at: Some("2026-01-02T03:04:05Z".into()),
            },
        },
        Operation::EnsureVerification {
            concept_id: c(),
            verification: Verification {
                by: "human:r".into(),
                at: "2026-01-02T03:04:05Z".into(),
            },
        },
        Operation::RemoveVerification {
            concept_id: c(),
            verification: Verification {
                by: "human:r".into(),
                at: "2026-01-02T03:04:05Z".into(),
            },
        },
        Operation::PutSource {
            concept_id: c(),
            source: src(),
        },
        Operation::RemoveSource {
            concept_id: c(),
            selector: SourceSelector::Id("s1".into()),
        },
        Operation::SetUsageWindow {
            concept_id: c(),
            selector: None,
            window: Some(Window {
                from: "2026-01-01".into(),
                to: "2026-01-02".into(),
            }),
        },
        Operation::SetLifecycle {
            concept_id: c(),
            lifecycle: Lifecycle {
                status: Member::Set(LifecycleStatus::Stable),
                stale_after: Member::Remove,
            },
        },
        Operation::PutAttestedComputation {
            concept_id: c(),
            computation: comp(),
        },
        Operation::SetBundleVersion {
            version: BundleVersion::V02,
        },
    ]
}

fn enc() -> Encoder {
    Encoder::default()
}

#[test]
fn operation_bytes_follow_the_tables_of_7_1() {
    // set_bundle_version: str(kind) str(version).
    let mut e = enc();
    e.str("set_bundle_version").str("0.2");
    assert_eq!(
        operation_bytes(&Operation::SetBundleVersion {
            version: BundleVersion::V02
        }),
        e.finish()
    );
    // set_generated without `at`: str("").
    let mut e = enc();
    e.str("set_generated").str("c").str("a/b").str("");
    assert_eq!(
        operation_bytes(&Operation::SetGenerated {
            concept_id: "c".into(),
            generated: Generated {
                by: "a/b".into(),
                at: None
            }
        }),
        e.finish()
    );
    // remove_source with an exact selector: str("exact") SRC, opt() for count and window.
    let anon = PatchSource {
        id: None,
        resource: "r".into(),
        title: None,
        author: None,
        usage_count: Some("7".into()),
        last_modified: None,
        usage_window: None,
    };
    let mut e = enc();
    e.str("remove_source").str("c").str("exact");
    e.str("")
        .str("r")
        .str("")
        .str("")
        .bool(true)
        .cnt(7)
        .str("")
        .bool(false);
    assert_eq!(
        operation_bytes(&Operation::RemoveSource {
            concept_id: "c".into(),
            selector: SourceSelector::Exact(anon)
        }),
        e.finish()
    );
    // set_usage_window with source_id selector and a null window.
    let mut e = enc();
    e.str("set_usage_window")
        .str("c")
        .bool(true)
        .str("id")
        .str("s");
    e.bool(false);
    assert_eq!(
        operation_bytes(&Operation::SetUsageWindow {
            concept_id: "c".into(),
            selector: Some(SourceSelector::Id("s".into())),
            window: None
        }),
        e.finish()
    );
    // set_lifecycle with both nulls.
    let mut e = enc();
    e.str("set_lifecycle").str("c").bool(false).bool(false);
    assert_eq!(
        operation_bytes(&Operation::SetLifecycle {
            concept_id: "c".into(),
            lifecycle: Lifecycle {
                status: Member::Remove,
                stale_after: Member::Remove
            }
        }),
        e.finish()
    );
    // put_attested_computation (inline): computation_path encodes as "".
    let mut e = enc();
    e.str("put_attested_computation")
        .str("c")
        .str("inline")
        .str("python3")
        .cnt(1);
    e.str("year").str("integer").bool(true);
    e.str("")
        .str("print(1)\n")
        .str("python")
        .str("https://ex.test/run")
        .cnt(2);
    e.str("r1").str("r2").str("https://ex.test/att");
    assert_eq!(
        operation_bytes(&Operation::PutAttestedComputation {
            concept_id: "c".into(),
            computation: comp()
        }),
        e.finish()
    );
}

/// Mutations of every encoded field; every pair must encode differently.
fn mutations() -> Vec<Operation> {
    let mut v = all_kinds();
    let base = all_kinds();
    let mut push = |i: usize, f: &dyn Fn(&mut Operation)| {
        let mut op = base[i].clone();
        f(&mut op);
        v.push(op);
    };
    push(0, &|o| {
        if let Operation::SetGenerated { generated, .. } = o {
            generated.at = None;
        }
    });
    push(0, &|o| {
        if let Operation::SetGenerated { generated, .. } = o {
            generated.by = "agent/2.0".into();
        }
    });
    push(0, &|o| {
        if let Operation::SetGenerated { concept_id, .. } = o {
            *concept_id = "a/c".into();
        }
    });
    push(1, &|o| {
        if let Operation::EnsureVerification { verification, .. } = o {
            verification.at = "2026-01-02T03:04:05+00:00".into();
        }
    });
    for field in 0..8 {
        push(3, &move |o| {
            if let Operation::PutSource { source: s, .. } = o {
                match field {
                    0 => s.id = None,
                    1 => s.resource = "https://ex.test/x".into(),
                    2 => s.title = None,
                    3 => s.author = None,
                    4 => s.usage_count = None,
                    5 => s.usage_count = Some("0".into()),
                    6 => s.last_modified = None,
                    _ => s.usage_window = None,
                }
            }
        });
    }
    push(4, &|o| {
        if let Operation::RemoveSource { selector, .. } = o {
            *selector = SourceSelector::Exact(PatchSource { id: None, ..src() });
        }
    });
    push(5, &|o| {
        if let Operation::SetUsageWindow { window, .. } = o {
            *window = None;
        }
    });
    push(5, &|o| {
        if let Operation::SetUsageWindow { selector, .. } = o {
            *selector = Some(SourceSelector::Id("s1".into()));
        }
    });
    push(6, &|o| {
        if let Operation::SetLifecycle { lifecycle, .. } = o {
            lifecycle.status = Member::Remove;
        }
    });
    push(6, &|o| {
        if let Operation::SetLifecycle { lifecycle, .. } = o {
            lifecycle.stale_after = Member::Set("2026-01-01".into());
        }
    });
    for field in 0..8 {
        push(7, &move |o| {
            if let Operation::PutAttestedComputation { computation: c, .. } = o {
                match field {
                    0 => c.runtime = "python2".into(),
                    1 => c.parameters[0].required = false,
                    2 => c.parameters.clear(),
                    3 => c.executor.receipt.reverse(),
                    4 => c.attester_resource = "x".into(),
                    5 => {
                        c.body = ComputationBody::File {
                            path: "print(1)\n".into(),
                        }
                    }
                    6 => {
                        c.body = ComputationBody::Inline {
                            code: "print(1)\n".into(),
                            language: None,
                        }
                    }
                    _ => c.executor.resource = "y".into(),
                }
            }
        });
    }
    push(8, &|o| {
        *o = Operation::SetBundleVersion {
            version: BundleVersion::V01,
        };
    });
    v
}

#[test]
fn every_encoded_field_changes_the_operation_bytes() {
    let ops = mutations();
    let distinct: HashSet<Vec<u8>> = ops.iter().map(operation_bytes).collect();
    assert_eq!(distinct.len(), ops.len());
    // Deterministic.
    assert_eq!(operation_bytes(&ops[7]), operation_bytes(&ops[7].clone()));
}

#[test]
fn canonical_bytes_layout_of_store_4() {
    let ops = all_kinds();
    let cs = ChangeSet::concept_patch("mcp:policy-test", BASE, &ops[..1]);
    let mut e = Encoder::tagged("okf:changeset");
    e.cnt(1).str(&cs.id).str("mcp:policy-test").str(BASE).cnt(1);
    let mut expect = e.finish();
    expect.extend(operation_bytes(&ops[0]));
    expect.extend(0u64.to_be_bytes());
    assert_eq!(cs.canonical_bytes(), expect);
    assert_eq!(cs.request_digest(), digest_str(&expect));
    // Preconditions are encoded after the operations.
    let mut with_pre = cs.clone();
    with_pre.preconditions = vec![Precondition::RevisionEquals(BASE.into())];
    let mut tail = Encoder::default();
    tail.cnt(1).str("revision_equals").str(BASE);
    let mut expect2 = expect[..expect.len() - 8].to_vec();
    expect2.extend(tail.finish());
    assert_eq!(with_pre.canonical_bytes(), expect2);
}

/// Golden values, computed once and frozen: any change to an encoding breaks them.
#[test]
fn golden_identity_values() {
    let ops = all_kinds();
    let id = change_set_id("mcp:policy-test", &ops);
    assert_eq!(
        id,
        "mcp-patch-640c3fd8898d41fef302380d8d80f64f181d0b92cf006274226777a0bf893043"
    );
    let cs = ChangeSet::concept_patch("mcp:policy-test", BASE, &ops);
    assert_eq!(cs.id, id);
    assert_eq!(
        cs.request_digest(),
        "sha256:8a6c0cc2fc159c989040aaba29c15d6a2ce3e9a847de8607661d7f8a021fc0cf"
    );
    let content = b"---\ntype: T\n---\n";
    let hexd = content_hex(content);
    let plan = PlanInputs {
        request_digest: &cs.request_digest(),
        change_set_base: BASE,
        base_revision: BASE,
        result_revision: RESULT,
        reads: vec!["index.md", "a/b.md"],
        writes: vec![PlanWrite {
            path: "a/b.md",
            content,
            digest_hex: &hexd,
        }],
        affected_refs: vec![Ref::concept("a/b")],
    };
    assert_eq!(
        plan_digest(&plan).unwrap(),
        "sha256:5d4aeb3f111debcb4def6bfff743127d698b86786564b9a0706fdd531deafb66"
    );
}

#[test]
fn change_set_id_depends_on_actor_and_operations_only() {
    let ops = all_kinds();
    let id = change_set_id("mcp:a", &ops);
    assert!(id.starts_with(CHANGE_SET_ID_PREFIX));
    assert_eq!(id.len(), CHANGE_SET_ID_PREFIX.len() + 64);
    // It is the sentinel's request digest.
    let sentinel = ChangeSet {
        id: SENTINEL_ID.into(),
        actor: "mcp:a".into(),
        base_revision: SENTINEL_BASE.into(),
        operations: ops.iter().map(operation_bytes).collect(),
        preconditions: vec![],
    };
    assert_eq!(
        id,
        format!(
            "mcp-patch-{}",
            &sentinel.request_digest()["sha256:".len()..]
        )
    );
    // Independent of the live base.
    assert_eq!(
        ChangeSet::concept_patch("mcp:a", BASE, &ops).id,
        ChangeSet::concept_patch("mcp:a", RESULT, &ops).id
    );
    assert_ne!(id, change_set_id("mcp:b", &ops));
    assert_ne!(id, change_set_id("mcp:a", &ops[1..]));
    let mut swapped = ops.clone();
    swapped.swap(0, 1);
    assert_ne!(id, change_set_id("mcp:a", &swapped));
}

#[test]
fn every_change_set_field_changes_the_request_digest() {
    let ops = all_kinds();
    let cs = ChangeSet::concept_patch("mcp:a", BASE, &ops);
    let d = cs.request_digest();
    let mut variants = vec![
        ChangeSet::concept_patch("mcp:b", BASE, &ops),
        ChangeSet::concept_patch("mcp:a", RESULT, &ops),
        ChangeSet::concept_patch("mcp:a", BASE, &ops[..8]),
    ];
    for m in mutations().into_iter().skip(ops.len()) {
        variants.push(ChangeSet::concept_patch("mcp:a", BASE, &[m]));
    }
    let mut other_id = cs.clone();
    other_id.id = "mcp-patch-x".into();
    variants.push(other_id);
    let mut pre = cs.clone();
    pre.preconditions = vec![Precondition::RevisionEquals(BASE.into())];
    variants.push(pre);
    let mut all: HashSet<String> = variants.iter().map(ChangeSet::request_digest).collect();
    assert_eq!(all.len(), variants.len());
    assert!(all.insert(d));
    assert!(crate::digest::is_canonical_digest(&cs.request_digest()));
}

fn plan_with<'a>(
    content: &'a [u8],
    hexd: &'a str,
    f: impl FnOnce(&mut PlanInputs<'a>),
) -> Result<String, PlanDigestError> {
    let mut p = PlanInputs {
        request_digest: RESULT,
        change_set_base: BASE,
        base_revision: BASE,
        result_revision: RESULT,
        reads: vec!["a.md", "index.md"],
        writes: vec![PlanWrite {
            path: "a.md",
            content,
            digest_hex: hexd,
        }],
        affected_refs: vec![Ref::concept("a")],
    };
    f(&mut p);
    plan_digest(&p)
}

#[test]
fn every_plan_field_changes_the_plan_digest() {
    let c = b"x".as_slice();
    let h = content_hex(c);
    let c2 = b"y".as_slice();
    let h2 = content_hex(c2);
    let d = plan_with(c, &h, |_| {}).unwrap();
    let variants = [
        plan_with(c, &h, |p| p.request_digest = BASE),
        plan_with(c, &h, |p| {
            p.base_revision = RESULT;
            p.change_set_base = RESULT;
        }),
        plan_with(c, &h, |p| p.result_revision = BASE),
        plan_with(c, &h, |p| p.reads.push("b.md")),
        plan_with(c, &h, |p| p.reads.pop().map(|_| ()).unwrap_or(())),
        plan_with(c2, &h2, |_| {}),
        plan_with(c, &h, |p| p.writes[0].path = "b.md"),
        plan_with(c, &h, |p| p.writes.clear()),
        plan_with(c, &h, |p| p.affected_refs.clear()),
        plan_with(c, &h, |p| p.affected_refs = vec![Ref::concept("b")]),
        plan_with(c, &h, |p| {
            p.affected_refs = vec![Ref {
                concept_id: "a".into(),
                fragment: Some("f".into()),
            }]
        }),
    ];
    let mut all = HashSet::new();
    assert!(all.insert(d));
    for v in variants {
        assert!(all.insert(v.unwrap()));
    }
}

#[test]
fn plan_digest_is_order_independent_and_dedups_refs() {
    let (a, b) = (b"1".as_slice(), b"2".as_slice());
    let (ha, hb) = (content_hex(a), content_hex(b));
    let p1 = PlanInputs {
        request_digest: RESULT,
        change_set_base: BASE,
        base_revision: BASE,
        result_revision: RESULT,
        reads: vec!["a.md", "b.md", "index.md"],
        writes: vec![
            PlanWrite {
                path: "a.md",
                content: a,
                digest_hex: &ha,
            },
            PlanWrite {
                path: "b.md",
                content: b,
                digest_hex: &hb,
            },
        ],
        affected_refs: vec![Ref::concept("a"), Ref::concept("b")],
    };
    let mut p2 = p1.clone();
    p2.reads.reverse();
    p2.writes.reverse();
    p2.affected_refs = vec![Ref::concept("b"), Ref::concept("a"), Ref::concept("b")];
    assert_eq!(plan_digest(&p1), plan_digest(&p2));
}

#[test]
fn refs_order_by_concept_then_fragment_without_fragment_first() {
    let mut v = [
        Ref {
            concept_id: "a".into(),
            fragment: Some("z".into()),
        },
        Ref::concept("b"),
        Ref::concept("a"),
        Ref {
            concept_id: "a".into(),
            fragment: Some("b".into()),
        },
    ];
    v.sort();
    let enc: Vec<String> = v.iter().map(Ref::encoded).collect();
    assert_eq!(enc, ["a", "a#b", "a#z", "b"]);
}

#[test]
fn plan_digest_rule_6_checks() {
    let c = b"x".as_slice();
    let h = content_hex(c);
    let upper = BASE.replace('1', "A");
    assert_eq!(
        plan_with(c, &h, |p| {
            p.base_revision = &upper;
            p.change_set_base = &upper;
        }),
        Err(PlanDigestError::NonCanonicalRevision)
    );
    assert_eq!(
        plan_with(c, &h, |p| p.result_revision = "sha256:12"),
        Err(PlanDigestError::NonCanonicalRevision)
    );
    assert_eq!(
        plan_with(c, &h, |p| p.change_set_base = RESULT),
        Err(PlanDigestError::BaseMismatch)
    );
    let wrong = content_hex(b"other");
    assert_eq!(
        plan_with(c, &wrong, |_| {}),
        Err(PlanDigestError::WriteDigestMismatch)
    );
    let prefixed = format!("sha256:{h}");
    assert_eq!(
        plan_with(c, &prefixed, |_| {}),
        Err(PlanDigestError::WriteDigestMismatch)
    );
    assert_eq!(
        plan_with(c, &h, |p| {
            let w = p.writes[0];
            p.writes.push(w);
        }),
        Err(PlanDigestError::DuplicateWrite)
    );
}

proptest::proptest! {
    #[test]
    fn plan_digest_ignores_input_order(seed in proptest::collection::vec(0u8..20, 1..12)) {
        let paths: Vec<String> = seed.iter().map(|n| format!("d/{n}.md")).collect::<HashSet<_>>().into_iter().collect();
        let contents: Vec<Vec<u8>> = paths.iter().map(|p| p.as_bytes().to_vec()).collect();
        let hexes: Vec<String> = contents.iter().map(|c| content_hex(c)).collect();
        let mk = |rev: bool| {
            let mut idx: Vec<usize> = (0..paths.len()).collect();
            if rev { idx.reverse(); }
            PlanInputs {
                request_digest: RESULT,
                change_set_base: BASE,
                base_revision: BASE,
                result_revision: RESULT,
                reads: idx.iter().map(|&i| paths[i].as_str()).collect(),
                writes: idx.iter().map(|&i| PlanWrite { path: &paths[i], content: &contents[i], digest_hex: &hexes[i] }).collect(),
                affected_refs: idx.iter().map(|&i| Ref::concept(&paths[i])).collect(),
            }
        };
        proptest::prop_assert_eq!(plan_digest(&mk(false)), plan_digest(&mk(true)));
    }
}

#[test]
fn aut_02_lifecycle_encodings_phase_1_when_both_members_are_present_v2_otherwise() {
    let op = |status, stale_after| Operation::SetLifecycle {
        concept_id: "c".into(),
        lifecycle: Lifecycle {
            status,
            stale_after,
        },
    };
    // Both present: the Phase-1 bytes, so replays across the upgrade keep their key.
    let mut e = Encoder::default();
    e.str("set_lifecycle")
        .str("c")
        .bool(true)
        .str("deprecated")
        .bool(false);
    assert_eq!(
        operation_bytes(&op(
            Member::Set(LifecycleStatus::Deprecated),
            Member::Remove
        )),
        e.finish()
    );
    // A member absent: tri(x) = cnt(0) absent, cnt(1) null, cnt(2) str(x) (§11.1).
    let mut e = Encoder::default();
    e.str("set_lifecycle:v2")
        .str("c")
        .cnt(2)
        .str("deprecated")
        .cnt(0);
    assert_eq!(
        operation_bytes(&op(Member::Set(LifecycleStatus::Deprecated), Member::Keep)),
        e.finish()
    );
    let mut e = Encoder::default();
    e.str("set_lifecycle:v2").str("c").cnt(0).cnt(1);
    assert_eq!(
        operation_bytes(&op(Member::Keep, Member::Remove)),
        e.finish()
    );
    // Keep, remove and set are three different operations.
    let all = [
        operation_bytes(&op(Member::Keep, Member::Set("2026-01-01".into()))),
        operation_bytes(&op(Member::Remove, Member::Set("2026-01-01".into()))),
        operation_bytes(&op(Member::Set(LifecycleStatus::Draft), Member::Keep)),
        operation_bytes(&op(Member::Set(LifecycleStatus::Draft), Member::Remove)),
    ];
    let distinct: HashSet<&Vec<u8>> = all.iter().collect();
    assert_eq!(distinct.len(), all.len());
}
