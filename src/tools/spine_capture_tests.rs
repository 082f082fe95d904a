//! [`with_capture`] (concept patch): a plan on the spilled capture equals the plan on a resident one,
//! the spilled capture holds only the documents the plan reads, and a plan that reads a
//! spilled file is discarded and rebuilt on a resident capture.

#![allow(clippy::disallowed_methods)] // tests copy fixture trees into temp dirs

use super::*;
use crate::okf::grammar::{classify, DocClass};
use crate::okf::memo;
use crate::plan::patch::ops::{parse_patch_request, PatchRequest};
use crate::plan::patch::planner::{documents_read, plan_patch};
use crate::tools::concept_patch::ConceptPatch;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Serialises the tests of this module: one of them clears the process-wide parse memo,
/// which would make the others fall back (correctly, but then they could not tell).
static SERIAL: Mutex<()> = Mutex::new(());

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    let mut entries: Vec<_> = std::fs::read_dir(src)
        .expect("read_dir")
        .map(|e| e.expect("entry"))
        .collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let to = dst.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

/// Every fixture bundle and every corpus v0.2 bundle present.
fn sources() -> Vec<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        manifest.join("fixtures/bundles"),
        manifest.join("../shared/corpus/knowledge-catalog/v0.2"),
    ] {
        let rd =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{} is missing: {e}", dir.display()));
        let mut v: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        out.extend(v);
    }
    assert!(out.len() >= 10, "fixture bundles not found");
    out
}

fn request(bundle: &Path, ops: &serde_json::Value) -> PatchRequest {
    parse_patch_request(
        &json!({"bundle_path": bundle.to_str().expect("utf-8"), "actor": "tester", "operations": ops}),
        false,
    )
    .expect("valid request")
}

/// Requests on `ids` (concept ids of the bundle): one applicable-looking edit per concept,
/// the bundle version, and an operation on a missing concept.
fn requests(bundle: &Path, ids: &[String]) -> Vec<PatchRequest> {
    let mut out = Vec::new();
    for id in ids {
        out.push(request(
            bundle,
            &json!([{"kind": "set_lifecycle", "concept_id": id, "lifecycle": {"status": "deprecated", "stale_after": null}}]),
        ));
        out.push(request(
            bundle,
            &json!([
                {"kind": "put_source", "concept_id": id, "source": {"id": "spill", "resource": "https://a.test/"}},
                {"kind": "ensure_verification", "concept_id": id, "verification": {"by": "human:ann", "at": "2026-06-25T09:00:00Z"}},
            ]),
        ));
    }
    out.push(request(
        bundle,
        &json!([{"kind": "set_bundle_version", "version": "0.2"}]),
    ));
    out.push(request(
        bundle,
        &json!([{"kind": "set_lifecycle", "concept_id": "no/such-concept", "lifecycle": {"status": "stable", "stale_after": null}}]),
    ));
    out
}

fn concept_ids(c: &Capture) -> Vec<String> {
    let ids: Vec<String> = c
        .files
        .iter()
        .filter_map(|f| match classify(&f.path) {
            DocClass::Concept(id) => Some(id),
            _ => None,
        })
        .collect();
    // The first and the last concept are enough to touch different folders.
    match (ids.first(), ids.last()) {
        (Some(a), Some(b)) if a != b => vec![a.clone(), b.clone()],
        (Some(a), _) => vec![a.clone()],
        _ => Vec::new(),
    }
}

#[test]
fn spilled_plans_equal_resident_plans_and_keep_only_the_documents_read() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cancel = Cancel::new();
    let mut spilled_runs = 0;
    let mut statuses = std::collections::BTreeMap::new();
    for src in sources() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let b = tmp.path().join("bundle");
        copy_dir(&src, &b);
        let root = root::open(b.to_str().expect("utf-8")).expect("root");
        let Ok(resident) = capture::capture(&root, &cancel) else {
            continue; // a fixture the capture refuses (tested elsewhere)
        };
        for (req, cold) in requests(&b, &concept_ids(&resident))
            .into_iter()
            .flat_map(|r| [(r.clone(), true), (r, false)])
        {
            // Cold: the spilling capture parses and checks every document itself; warm: the
            // memo already knows them all.
            if cold {
                memo::clear();
            }
            let mut calls = 0;
            let got =
                with_capture::<ConceptPatch, _>(WaitFor::Nothing, &root, &req, &cancel, |c| {
                    calls += 1;
                    plan_patch(c, &req, &c.revision, &cancel)
                });
            // Computed without the memo: nothing the spilling capture remembered is used.
            let expected =
                memo::bypassed(|| plan_patch(&resident, &req, &resident.revision, &cancel));
            let name = src.display();
            assert_eq!(calls, 1, "{name}: the spilled plan fell back");
            match (&expected, &got) {
                (Ok(e), Ok((c, g))) => {
                    *statuses.entry(e.status.as_str()).or_insert(0) += 1;
                    assert_eq!(format!("{e:?}"), format!("{g:?}"), "{name}");
                    assert_eq!(c.revision, resident.revision);
                    assert!(!c.missed());
                    let read = documents_read(&req);
                    for (f, r) in c.files.iter().zip(&resident.files) {
                        assert_eq!((&f.path, f.size, f.digest), (&r.path, r.size, r.digest));
                        let doc =
                            matches!(classify(&f.path), DocClass::Concept(_) | DocClass::Reserved);
                        // Read documents stay; faulty documents stay (the bundle parse
                        // reports them, so no Ok plan has one); nothing else does.
                        assert_eq!(f.is_resident(), read.contains(&f.path), "{name} {}", f.path);
                        if f.is_resident() {
                            assert_eq!(f.bytes(), r.bytes());
                        } else if doc {
                            spilled_runs += 1;
                        }
                    }
                    assert!(!c.missed(), "the check above read only resident bytes");
                }
                (Err(e), Err(g)) => assert_eq!(format!("{e:?}"), format!("{g:?}"), "{name}"),
                _ => panic!("{name}: {expected:?} vs {got:?}"),
            }
        }
    }
    assert!(
        spilled_runs > 100,
        "too few spilled documents: {spilled_runs}"
    );
    // Every outcome is exercised: edits, no-ops and rejections.
    for status in ["applicable", "noop", "rejected"] {
        assert!(
            statuses.get(status).copied().unwrap_or(0) >= 2,
            "{statuses:?}"
        );
    }
}

#[test]
fn a_plan_that_reads_a_spilled_file_is_rebuilt_on_a_resident_capture() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cancel = Cancel::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let b = tmp.path().join("bundle");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles/patch-pre"),
        &b,
    );
    let root = root::open(b.to_str().expect("utf-8")).expect("root");
    let resident = capture::capture(&root, &cancel).expect("capture");
    // `metrics/untyped.md` has a pre-existing error, so the plan's diagnostics depend on the
    // findings of a document the plan does not edit.
    let req = request(
        &b,
        &json!([{"kind": "set_lifecycle", "concept_id": "metrics/good", "lifecycle": {"status": "deprecated", "stale_after": null}}]),
    );
    let expected =
        memo::bypassed(|| plan_patch(&resident, &req, &resident.revision, &cancel)).expect("plan");
    assert_eq!(expected.status.as_str(), "applicable");
    assert!(
        expected
            .diagnostics
            .iter()
            .any(|d| d.file == "metrics/untyped.md" && d.message.ends_with("missing_type")),
        "{:?}",
        expected.diagnostics
    );

    // The memo forgets what the spilling capture learnt before the plan reads it: the
    // validation must then parse spilled documents, which marks the capture as missed.
    let mut seen: Vec<bool> = Vec::new();
    let (c, got) = with_capture::<ConceptPatch, _>(WaitFor::Nothing, &root, &req, &cancel, |c| {
        seen.push(c.is_complete());
        if seen.len() == 1 {
            memo::clear();
        }
        plan_patch(c, &req, &c.revision, &cancel)
    })
    .expect("plan");
    assert_eq!(seen, [false, true], "spilled first, then resident");
    assert!(c.is_complete() && !c.missed());
    assert_eq!(format!("{expected:?}"), format!("{got:?}"));
    // Nothing computed from the spilled (absent) bytes was remembered: the next plan, served
    // from the memo, is still right.
    let again = plan_patch(&resident, &req, &resident.revision, &cancel).expect("plan");
    assert_eq!(format!("{expected:?}"), format!("{again:?}"));

    // A spilled file read directly: empty bytes and a missed capture.
    let spilled =
        capture::capture_with(&root, &cancel, Some(&Spill::DIGESTS_ONLY)).expect("capture");
    assert_eq!(spilled.revision, resident.revision);
    assert!(!spilled.missed());
    let f = &spilled.files[0];
    assert!(!f.is_resident());
    assert!(f.bytes().is_empty() && f.size > 0);
    assert!(spilled.missed());
}

/// spec/temporal.md §11 on a spilled capture (AUT-01): `auto` resolves from the kinds the
/// spill visit remembered for the documents it let go (here every concept but the edited
/// one), with the findings of both profiles at hand; when the memo forgot them, resolving
/// reads a spilled file, the capture is missed and the answer comes from a resident one.
#[test]
fn aut_01_auto_resolves_on_a_spilled_capture_and_falls_back_when_the_memo_forgot() {
    use crate::okf::temporal::Profile;
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cancel = Cancel::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let b = tmp.path().join("bundle");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bundles/demo-instant"),
        &b,
    );
    // The edited concept holds no temporal value: the instants that decide are all in the
    // spilled tables/orders.md and metrics/revenue.md.
    std::fs::create_dir_all(b.join("notes")).expect("mkdir");
    std::fs::write(
        b.join("notes/plain.md"),
        "---\ntype: Note\ntitle: Plain\n---\n",
    )
    .expect("write");
    let root = root::open(b.to_str().expect("utf-8")).expect("root");
    let req = request(
        &b,
        &json!([{"kind": "set_lifecycle", "concept_id": "notes/plain", "lifecycle": {"status": "deprecated"}}]),
    );
    for forget in [false, true] {
        memo::clear();
        let mut seen: Vec<bool> = Vec::new();
        let (c, (profile, status)) =
            with_capture::<ConceptPatch, _>(WaitFor::Nothing, &root, &req, &cancel, |c| {
                seen.push(c.is_complete());
                if forget && seen.len() == 1 {
                    memo::clear();
                }
                let q =
                    ConceptPatch::resolve(&req, c, &root, false, &cancel)?.expect("auto resolves");
                let plan = plan_capture::<ConceptPatch>(c, &q, &c.revision, &root, &cancel)?;
                Ok((q.profile, plan.status))
            })
            .expect("plan");
        assert_eq!(profile, Profile::Instant, "forget={forget}");
        assert_eq!(status.as_str(), "applicable");
        if forget {
            assert_eq!(seen, [false, true], "spilled first, then resident");
            assert!(c.is_complete() && !c.missed());
        } else {
            assert_eq!(seen, [false], "answered from the spilled capture");
            assert!(!c.missed());
            for p in ["tables/orders.md", "metrics/revenue.md"] {
                assert!(!c.get(p).expect("file").is_resident(), "{p}");
            }
        }
    }
}
