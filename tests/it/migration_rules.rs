//! Migration rules end to end through the real binary (`okf-mcp call`): the reserved
//! `log.md` replay (MIG-09), explicit `generated.at` (MIG-16), the timestamp/generated
//! matrix (MIG-17) and the input faults of a rootless target-noop apply (MIG-25).
#![allow(clippy::disallowed_methods)]

use crate::migration::{apply, apply_args, apply_err, args, bundle, preview, read, write};
use crate::migration_computations::file_item;
use crate::util::{call, snapshot};
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
            "bad actor",
            "generated_by",
            json!("not an actor"),
            "invalid_request",
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
