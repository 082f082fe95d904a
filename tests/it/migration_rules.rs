//! Migration rules end to end through the real binary (`okf-mcp call`): the reserved
//! `log.md` replay (MIG-09), explicit `generated.at` (MIG-16), the timestamp/generated
//! matrix (MIG-17) and the input faults of a rootless target-noop apply (MIG-25).
#![allow(clippy::disallowed_methods)]

use crate::support::migration::file_item;
use crate::support::migration::{apply, apply_args, apply_err, args, bundle, preview, read, write};
use crate::support::util::{call, snapshot};
use serde_json::{json, Value};

const LOG: &str = "## 2026-05-22\n\nChanged [1].\n\n# Citations\n\n[1] [Spec](https://x.test/s)\n";

#[test]
fn mig_09_reserved_log_replays_through_the_tools() {
    let (_d, root) = bundle(&[
        ("index.md", "# B\n"),
        ("log.md", LOG),
        (
            "t/a.md",
            "---\ntype: Table\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nA.\n",
        ),
    ]);
    let entry = json!({"legacy_number": 1, "source_id": "spec", "title": "Spec", "resource": "https://x.test/s"});
    let a = args(
        &root,
        json!({"generated_by": "agent/1.0", "citation_mappings": [{"path": "log.md", "entries": [entry]}]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    let r = apply(&apply_args(&a, &p));
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(
        read(&root, "log.md"),
        "## 2026-05-22\n\nChanged [^spec].\n\n[^spec]: [Spec](https://x.test/s)\n",
        "a reserved document gets footnotes and no frontmatter"
    );
    // Target replay of the same mapping: noop, nothing written.
    let state = snapshot(&root);
    let n = preview(&a);
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(n["source"]["transition"], "target-noop");
    assert_eq!(apply(&apply_args(&a, &n))["status"], "noop");
    assert_eq!(snapshot(&root), state);
    // The footnote content differs from the mapping: the replay is blocked at the definition.
    let tampered = read(&root, "log.md").replace("https://x.test/s)", "https://x.test/t)");
    write(&root, "log.md", &tampered);
    let state = snapshot(&root);
    let b = preview(&a);
    assert_eq!(b["status"], "blocked", "{b}");
    let blocker = &b["blockers"][0];
    assert_eq!(blocker["code"], "migration_replay_mismatch", "{b}");
    assert_eq!(blocker["path"], "log.md", "{b}");
    let (s, e) = (
        blocker["location"]["start"].as_u64().expect("start") as usize,
        blocker["location"]["end"].as_u64().expect("end") as usize,
    );
    assert_eq!(&tampered[s..e], "[^spec]: [Spec](https://x.test/t)", "{b}");
    // Its apply: the blocked target-noop fails with the blocker's code and writes nothing.
    let e = apply_err(&apply_args(&a, &b));
    assert_eq!(e["code"], "migration_replay_mismatch", "{e}");
    assert_eq!(snapshot(&root), state);
}

#[test]
fn mig_16_an_equivalent_explicit_instant_applies_and_a_different_one_fails_the_old_proof() {
    let with_gen = "---\ntype: Table\ngenerated:\n  by: human:ann\n  at: 2026-06-25T16:00:00+07:00\n---\n\nBody.\n";
    let (_d, root) = bundle(&[("index.md", "# B\n"), ("t/a.md", with_gen)]);
    // `from: 0.1`: the root index then gets its declaration, so there is something to apply.
    let same = args(
        &root,
        json!({"from": "0.1", "generated_at": [{"concept_id": "t/a", "at": "2026-06-25T09:00:00Z"}]}),
    );
    let p = preview(&same);
    assert_eq!(p["status"], "applicable", "{p}");
    // A different explicit instant: blocked, with the span of the `at` value.
    let other = args(
        &root,
        json!({"from": "0.1", "generated_at": [{"concept_id": "t/a", "at": "2026-06-25T10:00:00Z"}]}),
    );
    let b = preview(&other);
    assert_eq!(b["status"], "blocked", "{b}");
    let blocker = &b["blockers"][0];
    assert_eq!(blocker["code"], "explicit_generated_at_mismatch", "{b}");
    assert_eq!(blocker["path"], "t/a.md");
    let (s, e) = (
        blocker["location"]["start"].as_u64().expect("start") as usize,
        blocker["location"]["end"].as_u64().expect("end") as usize,
    );
    assert_eq!(&with_gen[s..e], "2026-06-25T16:00:00+07:00", "{b}");
    // The apply of the different instant with the old proof: plan mismatch, nothing written.
    let before = snapshot(&root);
    let mut x = apply_args(&same, &p);
    x["generated_at"] = other["generated_at"].clone();
    let err = apply_err(&x);
    assert_eq!(err["code"], "plan_mismatch", "{err}");
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
    // The equivalent instant applies; the concept keeps `by` and its own `at` bytes.
    let r = apply(&apply_args(&same, &p));
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(r["changed_paths"], json!(["index.md"]), "{r}");
    assert_eq!(read(&root, "t/a.md"), with_gen);
}

/// One MIG-17 case: line ending, `generated` style and the two policies.
struct Case {
    crlf: bool,
    flow: bool,
    preserve: bool,
    conflict: &'static str,
}

impl Case {
    fn source(&self) -> String {
        let generated = if self.flow {
            "generated: {by: human:ann, at: 2026-02-01T00:00:00Z}\n"
        } else {
            "generated:\n  by: human:ann\n  at: 2026-02-01T00:00:00Z\n"
        };
        let text = format!(
            "---\ntype: Table\n# kept comment\ntimestamp: 2026-01-01T00:00:00Z\n{generated}x-tail: 1\n---\n\nBody.\n"
        );
        self.eol(&text)
    }

    /// The expected bytes: only `generated.at` (when the timestamp wins) and the `timestamp`
    /// line (when removed) move.
    fn expected(&self) -> String {
        let mut text = self.source();
        if self.conflict == "use_timestamp" {
            // A changed flow mapping is re-rendered on one line as `{ k: v, … }`, the
            // untouched value copied verbatim (spec/concept-patch.md §4.4 rule 1).
            text = if self.flow {
                text.replace(
                    "{by: human:ann, at: 2026-02-01T00:00:00Z}",
                    "{ by: human:ann, at: 2026-01-01T00:00:00Z }",
                )
            } else {
                text.replace("at: 2026-02-01T00:00:00Z", "at: 2026-01-01T00:00:00Z")
            };
        }
        if !self.preserve {
            text = text.replace(&self.eol("timestamp: 2026-01-01T00:00:00Z\n"), "");
        }
        text
    }

    fn eol(&self, s: &str) -> String {
        if self.crlf {
            s.replace('\n', "\r\n")
        } else {
            s.to_owned()
        }
    }
}

#[test]
fn mig_17_timestamp_generated_conflict_matrix() {
    for crlf in [false, true] {
        for flow in [false, true] {
            for preserve in [false, true] {
                for conflict in ["reject", "use_timestamp", "use_generated"] {
                    let c = Case {
                        crlf,
                        flow,
                        preserve,
                        conflict,
                    };
                    let what = format!("crlf={crlf} flow={flow} preserve={preserve} {conflict}");
                    let (_d, root) = bundle(&[("t/a.md", &c.source())]);
                    let a = args(
                        &root,
                        json!({
                            "from": "0.1",
                            "timestamp_policy": if preserve { "preserve" } else { "remove_after_copy" },
                            "timestamp_conflict_policy": conflict,
                        }),
                    );
                    let p = preview(&a);
                    if conflict == "reject" {
                        assert_eq!(p["status"], "blocked", "{what}: {p}");
                        assert_eq!(
                            p["blockers"][0]["code"], "timestamp_generated_conflict",
                            "{what}"
                        );
                        assert!(p.get("proof").is_none(), "{what}: zero staged writes");
                        continue;
                    }
                    let expected = c.expected();
                    if expected == c.source() {
                        assert_eq!(p["status"], "noop", "{what}: {p}");
                        continue;
                    }
                    assert_eq!(p["status"], "applicable", "{what}: {p}");
                    let r = apply(&apply_args(&a, &p));
                    assert_eq!(r["status"], "applied", "{what}: {r}");
                    assert_eq!(read(&root, "t/a.md"), expected, "{what}");
                    let again = preview(&a);
                    assert_eq!(again["status"], "noop", "{what}: {again}");
                }
            }
        }
    }
}

#[test]
fn mig_25_a_rootless_target_noop_apply_still_validates_the_whole_input() {
    let v02 =
        "---\ntype: Table\ngenerated:\n  by: agent/1.0\n  at: 2026-01-01T00:00:00Z\n---\n\nBody.\n";
    // An already-migrated computation (its asset q/a.sql) and a second copy of the asset
    // bytes elsewhere, so an item naming other/a.sql fails only on the path rule.
    let computation = "---\ntype: Attested Computation\ntitle: A\nruntime: bigquery\nparameters:\n  - {name: year, type: integer, required: true}\nexecutor:\n  resource: run.md\n  receipt: [job_id]\nattester:\n  resource: attest.py\ncomputation: a.sql\n---\n\nWhat it computes.\n";
    let (_d, root) = bundle(&[
        ("t/a.md", v02),
        ("q/a.md", computation),
        ("q/a.sql", ""),
        ("other/a.sql", ""),
    ]);
    let a = args(&root, json!({}));
    let p = preview(&a);
    assert_eq!(p["status"], "noop", "{p}");
    assert_eq!(p["source"]["transition"], "target-noop");
    assert_eq!(p["source"]["declaration_present"], false, "rootless");
    let x = apply_args(&a, &p);
    assert_eq!(apply(&x)["status"], "noop", "the untouched input applies");
    let before = snapshot(&root);
    let mut dup_param = file_item("q/a", "a.sql", "q/a.sql", "");
    dup_param["contract"]["parameters"] = json!([
        {"name": "year", "type": "integer", "required": true},
        {"name": "year", "type": "integer", "required": false},
    ]);
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        (
            // The document-actor grammar is an advertised pattern (spec/surface.md §18.3
            // rule 4): refused at the schema step.
            "bad actor",
            "generated_by",
            json!("not an actor"),
            "schema_validation",
        ),
        (
            "bad timestamp policy",
            "timestamp_policy",
            json!("sometimes"),
            "schema_validation",
        ),
        (
            "escaping citation path",
            "citation_mappings",
            json!([{"path": "../x.md", "entries": [{"legacy_number": 1, "source_id": "a"}]}]),
            "invalid_request",
        ),
        (
            "duplicate generated_at",
            "generated_at",
            json!([{"concept_id": "t/a", "at": "2026-01-01T00:00:00Z"}, {"concept_id": "t/a", "at": "2026-01-02T00:00:00Z"}]),
            "invalid_request",
        ),
        (
            "duplicate parameter",
            "computations",
            json!([dup_param]),
            "invalid_request",
        ),
        (
            "asset path mismatch",
            "computations",
            json!([file_item("q/a", "a.sql", "other/a.sql", "")]),
            "migration_computation_asset_path_mismatch",
        ),
    ];
    for (what, key, value, code) in cases {
        let mut y = x.clone();
        y[key] = value;
        let out = call("apply_v02_migration", &y);
        assert!(out.is_error(), "{what}: {}", out.stdout);
        assert_eq!(out.structured()["code"], code, "{what}: {}", out.stdout);
        assert_eq!(snapshot(&root), before, "{what}");
        assert!(!root.join(".okf").exists(), "{what}");
    }
}

#[test]
fn mig_14_all_eight_applicable_tuples_come_from_previews_and_are_accepted_by_the_apply() {
    let legacy = "---\ntype: Table\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nBody.\n";
    let migrated =
        "---\ntype: Table\ngenerated:\n  by: agent/1.0\n  at: 2026-01-01T00:00:00Z\n---\n\nBody.\n";
    let declared = |v: &str| format!("---\nokf_version: \"{v}\"\n---\n# B\n");
    // (from, root index, concept, resolution_source, transition)
    let rows: Vec<(&str, Option<String>, &str, &str, &str)> = vec![
        ("0.1", None, legacy, "explicit", "v0.1-to-v0.2"),
        (
            "0.1",
            Some(declared("0.1")),
            legacy,
            "explicit",
            "v0.1-to-v0.2",
        ),
        (
            "auto",
            Some(declared("0.1")),
            legacy,
            "declared",
            "v0.1-to-v0.2",
        ),
        ("auto", None, legacy, "legacy-probe", "v0.1-to-v0.2"),
        ("0.2", None, migrated, "explicit", "target-noop"),
        (
            "0.2",
            Some(declared("0.2")),
            migrated,
            "explicit",
            "target-noop",
        ),
        (
            "auto",
            Some(declared("0.2")),
            migrated,
            "declared",
            "target-noop",
        ),
        ("auto", None, migrated, "default", "target-noop"),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (from, index, concept, resolution, transition) in rows {
        let what = format!("from={from} root={} {resolution}", index.is_some());
        let mut files = vec![("t/a.md", concept)];
        if let Some(i) = &index {
            files.push(("index.md", i.as_str()));
        }
        let (_d, root) = bundle(&files);
        let mut extra = json!({"generated_by": "agent/1.0"});
        if from != "auto" {
            extra["from"] = json!(from);
        }
        let a = args(&root, extra);
        let p = preview(&a);
        let s = &p["source"];
        assert_eq!(s["requested_selector"], from, "{what}: {p}");
        assert_eq!(s["declaration_present"], index.is_some(), "{what}");
        assert_eq!(s["declaration_valid"], true, "{what}");
        assert_eq!(s["resolution_source"], resolution, "{what}: {p}");
        assert_eq!(s["transition"], transition, "{what}: {p}");
        assert_eq!(s["blockers"], json!([]), "{what}");
        let (version, status) = if transition == "target-noop" {
            ("0.2", "noop")
        } else {
            ("0.1", "applicable")
        };
        assert_eq!(s["resolved_source"], version, "{what}");
        assert_eq!(s["from_version"], version, "{what}");
        assert_eq!(s["to_version"], "0.2", "{what}");
        assert_eq!(
            s["candidates"].as_array().map(Vec::is_empty),
            Some(resolution != "legacy-probe"),
            "{what}: candidates only from the legacy probe"
        );
        assert_eq!(p["status"], status, "{what}: {p}");
        let r = apply(&apply_args(&a, &p));
        let want = if status == "noop" { "noop" } else { "applied" };
        assert_eq!(r["status"], want, "{what}: {r}");
        assert!(seen.insert(s.to_string()), "{what}: a distinct tuple");
    }
    assert_eq!(seen.len(), 8);
}

/// A v0.1 concept with `body` (its `# Citations` section included).
fn concept(body: &str) -> String {
    format!("---\ntype: Table\ntitle: T\n---\n\n{body}")
}

#[test]
fn mig_34_40_inline_notes_and_note_lists_through_the_tools() {
    let notes = "x ^[a.md] y ^[a.md] ^[other] `^[a.md]` and ^[a.md, b.md] but ^[a.md, c.md]\n\n```\n^[a.md]\n```\n\n# Citations\n\n1. [a.md](/references/a.md)\n2. [b.md](/references/b.md)\n";
    let fenced = "Text\n\n```md\n# Citations\n\n[1] x\n";
    let (_d, root) = bundle(&[
        ("index.md", "# B\n"),
        ("t/notes.md", &concept(notes)),
        ("t/fenced.md", &concept(fenced)),
    ]);
    let mapping = json!([{"path": "t/notes.md", "entries": [
        {"legacy_number": 1, "source_id": "a", "inline_note": "a.md"},
        {"legacy_number": 2, "source_id": "b", "inline_note": "b.md"},
    ]}]);
    let a = args(&root, json!({"citation_mappings": mapping}));
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    // MIG-40: the never-closed fence swallows the heading: a notice, never a section.
    let notices: Vec<&Value> = p["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "legacy_citations_in_code")
        .collect();
    assert_eq!(notices.len(), 1, "{p}");
    assert_eq!(notices[0]["file"], "t/fenced.md", "{p}");
    let r = apply(&apply_args(&a, &p));
    assert_eq!(r["status"], "applied", "{r}");
    let new = read(&root, "t/notes.md");
    let body = new.split_once("---\n\n").expect("body").1;
    assert_eq!(
        body,
        "x [^a] y [^a] ^[other] `^[a.md]` and [^a][^b] but ^[a.md, c.md]\n\n```\n^[a.md]\n```\n\n[^a]: [a.md](/references/a.md)\n[^b]: [b.md](/references/b.md)\n",
        "mapped notes and fully mapped lists rewritten; code, unmapped notes and partly mapped lists byte-identical"
    );
    assert_eq!(
        read(&root, "t/fenced.md"),
        concept(fenced),
        "the fenced document is not rewritten"
    );
    // Re-preview: target-noop.
    let n = preview(&a);
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(n["source"]["transition"], "target-noop");
}

#[test]
fn mig_34_a_mapped_note_absent_from_the_body_blocks_and_a_shared_note_is_refused() {
    let body = "x ^[b.md]\n\n# Citations\n\n1. [a.md](/references/a.md)\n";
    let (_d, root) = bundle(&[("index.md", "# B\n"), ("t/a.md", &concept(body))]);
    let before = snapshot(&root);
    let a = args(
        &root,
        json!({"citation_mappings": [{"path": "t/a.md", "entries": [
            {"legacy_number": 1, "source_id": "a", "inline_note": "a.md"}]}]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "blocked", "{p}");
    assert_eq!(p["blockers"][0]["code"], "unresolved_inline_note", "{p}");
    assert!(
        p["manual_actions"]
            .as_array()
            .expect("actions")
            .iter()
            .any(|m| m["code"] == "provide_citation_mapping"),
        "{p}"
    );
    // Two entries with one inline_note: refused before reading the bundle.
    let two = args(
        &root,
        json!({"citation_mappings": [{"path": "t/a.md", "entries": [
            {"legacy_number": 1, "source_id": "a", "inline_note": "a.md"},
            {"legacy_number": 2, "source_id": "b", "inline_note": "a.md"}]}]}),
    );
    let out = call("preview_v02_migration", &two);
    assert!(out.is_error(), "{}", out.stdout);
    assert_eq!(
        out.structured()["code"],
        "invalid_request",
        "{}",
        out.stdout
    );
    assert_eq!(snapshot(&root), before);
    assert!(!root.join(".okf").exists());
}

#[test]
fn mig_36_40_proposals_through_the_tools_slugs_notes_and_reserved_documents() {
    let long = "L".repeat(90);
    let body = format!(
        "See [1], [2], [3], [4] and [5]. ^[page.md]\n\n# Citations\n\n[1] [Spec](https://x.test/1)\n[2] [spec](https://x.test/2)\n[3] [SPEC](https://x.test/3)\n[4] [{long}](https://x.test/4)\n[5] [page.md:31-33](/references/page.md)\n"
    );
    let body2 = "A ^[page.md]\n\n# Citations\n\n1. [page.md#L4](/references/page.md)\n";
    let (_d, root) = bundle(&[
        ("index.md", "# B\n"),
        ("t/a.md", &concept(&body)),
        ("t/b.md", &concept(body2)),
        ("log.md", LOG),
    ]);
    let a = args(&root, json!({}));
    let p = preview(&a);
    assert_eq!(p["status"], "blocked", "{p}");
    assert_eq!(p["proposals_truncated"], false);
    let props = p["proposed_citation_mappings"]
        .as_array()
        .expect("proposals");
    let by_path = |path: &str| -> Vec<Value> {
        props
            .iter()
            .find(|m| m["path"] == path)
            .unwrap_or_else(|| panic!("a proposal for {path}: {p}"))["entries"]
            .as_array()
            .expect("entries")
            .clone()
    };
    assert_eq!(props.len(), 3, "one per document with a section: {p}");
    let ids: Vec<String> = by_path("t/a.md")
        .iter()
        .map(|e| e["source_id"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(&ids[..3], ["spec", "spec-2", "spec-3"], "{ids:?}");
    let slug = &ids[3];
    assert!(slug.len() <= 56, "{slug}");
    let (stem, hash) = slug.rsplit_once('-').expect("a hash suffix");
    assert!(stem.chars().all(|c| c == 'l'), "{slug}");
    assert!(
        hash.len() == 7 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{slug}"
    );
    assert_eq!(ids[4], "page", "`page.md:31-33` → page");
    assert_eq!(
        by_path("t/b.md")[0]["source_id"],
        "page",
        "`page.md#L4` → page"
    );
    // `inline_note` only where such a note occurs.
    let a_entries = by_path("t/a.md");
    assert!(a_entries[..4]
        .iter()
        .all(|e| e.get("inline_note").is_none()));
    // The reserved log gets replay evidence (title and resource).
    let log = by_path("log.md");
    assert_eq!(log[0]["title"], "Spec", "{log:?}");
    assert_eq!(log[0]["resource"], "https://x.test/s", "{log:?}");
    // Identical across two previews; passed back → no citation blockers, then applied.
    assert_eq!(
        preview(&a)["proposed_citation_mappings"],
        p["proposed_citation_mappings"]
    );
    let back = args(
        &root,
        json!({"citation_mappings": p["proposed_citation_mappings"]}),
    );
    let q = preview(&back);
    assert_eq!(q["status"], "applicable", "{q}");
    assert_eq!(apply(&apply_args(&back, &q))["status"], "applied");
    assert_eq!(preview(&back)["status"], "noop");
}

#[test]
fn mig_21_claim_and_footnote_ownership_in_the_target_replay_through_the_tools() {
    let fm = "---\ntype: Table\nsources:\n  -\n    id: spec\n    title: Spec\n    resource: https://x.test/s\n---\n\n";
    let index = "---\nokf_version: \"0.2\"\n---\n# B\n";
    let number = json!([{"legacy_number": 1, "source_id": "spec"}]);
    let entry_only = json!([{"legacy_entry": "[Spec](https://x.test/s)", "source_id": "spec"}]);
    let shared = json!([{"legacy_number": 1, "source_id": "spec"}, {"legacy_number": 2, "source_id": "spec"}]);
    // (what, body, entries, expected status, the blocked span's text)
    let cases: Vec<(&str, &str, &Value, &str, Option<&str>)> = vec![
        (
            "migrated",
            "Claim [^spec].\n\n[^spec]: [Spec](https://x.test/s)\n",
            &number,
            "noop",
            None,
        ),
        (
            "leftover marker",
            "Claim [1].\n\n[^spec]: [Spec](https://x.test/s)\n",
            &number,
            "blocked",
            Some("[1]"),
        ),
        (
            "missing definition (at the end of the file)",
            "Claim [^spec].\n",
            &number,
            "blocked",
            Some(""),
        ),
        (
            "wrong attribution",
            "Claim [^spec].\n\n[^spec]: [Spec](https://other.test)\n",
            &number,
            "blocked",
            Some("[^spec]: [Spec](https://other.test)"),
        ),
        (
            "entry-only mapping without its definition",
            "Claim.\n",
            &entry_only,
            "blocked",
            None,
        ),
        (
            "two entries sharing one normalised id",
            "A [^spec] and B [^spec].\n\n[^spec]: [Spec](https://x.test/s)\n",
            &shared,
            "noop",
            None,
        ),
        (
            "unreferenced definition",
            "Claim.\n\n[^spec]: [Spec](https://x.test/s)\n",
            &number,
            "noop",
            None,
        ),
    ];
    for (what, body, entries, status, span) in cases {
        let text = format!("{fm}{body}");
        let (_d, root) = bundle(&[("index.md", index), ("t/a.md", &text)]);
        let state = snapshot(&root);
        let a = args(
            &root,
            json!({"citation_mappings": [{"path": "t/a.md", "entries": entries}]}),
        );
        let p = preview(&a);
        assert_eq!(p["source"]["transition"], "target-noop", "{what}: {p}");
        assert_eq!(p["status"], status, "{what}: {p}");
        if status == "blocked" {
            let b = &p["blockers"][0];
            assert_eq!(b["path"], "t/a.md", "{what}: {p}");
            if let Some(want) = span {
                let s = b["location"]["start"].as_u64().expect("start") as usize;
                let e = b["location"]["end"].as_u64().expect("end") as usize;
                assert_eq!(&text[s..e], want, "{what}: {p}");
                if want.is_empty() {
                    assert_eq!(s, text.len(), "{what}: at the end of the file");
                }
            }
            let e = apply_err(&apply_args(&a, &p));
            assert_eq!(e["code"], b["code"], "{what}: {e}");
        } else {
            assert_eq!(apply(&apply_args(&a, &p))["status"], "noop", "{what}");
        }
        assert_eq!(snapshot(&root), state, "{what}");
        assert!(!root.join(".okf").exists(), "{what}");
    }
}

/// `legacy_entry` mappings written by hand for every `# Citations` section of bullet
/// entries under `root` (ga4 style: `- <url>`).
fn bullet_mappings(root: &std::path::Path) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("utf8");
        let Some((_, section)) = text.split_once("\n# Citations\n") else {
            continue;
        };
        let entries: Vec<Value> = section
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .enumerate()
            .map(|(i, url)| json!({"legacy_entry": url, "source_id": format!("s{}", i + 1)}))
            .collect();
        assert!(!entries.is_empty(), "{}", f.display());
        let rel = f.strip_prefix(root).expect("below root");
        out.push(json!({"path": rel.to_str().expect("utf8"), "entries": entries}));
    }
    out
}

#[test]
fn mig_05_ga4_migrates_with_hand_written_legacy_entry_mappings() {
    let src = crate::support::util::corpus("v0.1/ga4");
    assert!(
        src.join("index.md").is_file(),
        "the ga4 corpus bundle is present"
    );
    let (_t, root) = crate::support::util::copy_bundle(&src);
    let mappings = bullet_mappings(&root);
    assert!(
        mappings.len() >= 5,
        "ga4 has many cited documents: {}",
        mappings.len()
    );
    let a = args(
        &root,
        json!({"generated_by": "agent/1.0", "citation_mappings": mappings}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    let r = apply(&apply_args(&a, &p));
    assert_eq!(r["status"], "applied", "{r}");
    let n = preview(&a);
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(n["source"]["transition"], "target-noop");
    let v = call(
        "validate_bundle",
        &json!({"bundle_path": root.to_str(), "strict": true, "target_version": "0.2"}),
    );
    assert_eq!(
        v.structured()["conformance"]["conformant"],
        true,
        "{}",
        v.stdout
    );
}

/// spec/migration.md §8 step 5.2 (mixed-state tolerance): a document already migrated with the
/// same mapping (say by an earlier, partial run) is done, not blocked, while the bundle as a
/// whole still transitions; a document whose migrated form does not match its mapping still
/// blocks.
#[test]
fn mig_mixed_state_an_already_migrated_document_is_done_not_blocked() {
    let legacy = "---\ntype: Table\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nA [1].\n\n# Citations\n\n[1] [Spec](https://x.test/s)\n";
    let migrated = "---\ntype: Table\ngenerated:\n  by: agent/1.0\n  at: 2026-01-01T00:00:00Z\nsources:\n  -\n    id: spec\n    title: Spec\n    resource: https://x.test/s\n---\n\nClaim [^spec].\n\n[^spec]: [Spec](https://x.test/s)\n";
    let (_d, root) = bundle(&[
        ("index.md", "# B\n"),
        ("t/a.md", legacy),
        ("t/b.md", migrated),
    ]);
    let entry = json!([{"legacy_number": 1, "source_id": "spec"}]);
    let a = args(
        &root,
        json!({"generated_by": "agent/1.0", "citation_mappings": [
            {"path": "t/a.md", "entries": entry}, {"path": "t/b.md", "entries": entry}]}),
    );
    let p = preview(&a);
    assert_eq!(p["status"], "applicable", "{p}");
    assert_eq!(
        p["affected_paths"],
        json!(["index.md", "t/a.md"]),
        "the migrated document is not written: {p}"
    );
    let r = apply(&apply_args(&a, &p));
    assert_eq!(r["status"], "applied", "{r}");
    assert_eq!(read(&root, "t/b.md"), migrated);
    let n = preview(&a);
    assert_eq!(n["status"], "noop", "{n}");
    assert_eq!(n["source"]["transition"], "target-noop");
    // A migrated document that does not match its mapping still blocks the transition.
    let other = migrated.replace("https://x.test/s)", "https://x.test/other)");
    let (_d2, root2) = bundle(&[
        ("index.md", "# B\n"),
        ("t/a.md", legacy),
        ("t/b.md", &other),
    ]);
    let a2 = args(
        &root2,
        json!({"generated_by": "agent/1.0", "citation_mappings": [
            {"path": "t/a.md", "entries": entry}, {"path": "t/b.md", "entries": entry}]}),
    );
    let p2 = preview(&a2);
    assert_eq!(p2["status"], "blocked", "{p2}");
    assert!(
        p2["blockers"]
            .as_array()
            .expect("blockers")
            .iter()
            .any(|b| b["path"] == "t/b.md"),
        "{p2}"
    );
    // A legacy document without a mapping still blocks (its replay fails too).
    let a3 = args(
        &root2,
        json!({"generated_by": "agent/1.0", "citation_mappings": []}),
    );
    let p3 = preview(&a3);
    assert_eq!(p3["status"], "blocked", "{p3}");
    assert!(
        p3["blockers"]
            .as_array()
            .expect("blockers")
            .iter()
            .any(|b| b["path"] == "t/a.md" && b["code"] == "missing_explicit_citation_mapping"),
        "{p3}"
    );
}
