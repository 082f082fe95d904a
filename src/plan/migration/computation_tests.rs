//! Computations of the migration (spec/migration.md §3.4, §6.6, §6.7 rule 5, §7.1, §7.2
//! rule 2): request rules, path resolution, the per-document steps and the identity.

use super::*;
use crate::plan::migration::identity;
use crate::plan::migration::request::{is_asset_path, parse_request, resolve_computation_path};
use serde_json::{json, Value};

fn item_file(id: &str, cp: &str, asset: &str, content: &str) -> Value {
    json!({"concept_id": id, "contract": {
        "mode": "file", "runtime": "sql", "parameters": [],
        "computation_path": cp,
        "executor": {"resource": "run.md", "receipt": ["job_id"]},
        "attester": {"resource": "a.py"}},
        "asset": {"path": asset, "content": content}})
}

fn item_inline(id: &str, code: &str) -> Value {
    json!({"concept_id": id, "contract": {
        "mode": "inline", "runtime": "python",
        "parameters": [{"name": "y", "type": "int", "required": false}],
        "inline_computation": code, "inline_language": "python",
        "executor": {"resource": "run.md", "receipt": ["job_id"]},
        "attester": {"resource": "a.py"}}})
}

fn req(items: Value) -> Result<MigrationRequest, crate::envelope::ToolError> {
    parse_request(
        &json!({"bundle_path": "/b", "timestamp_policy": "preserve", "citation_mappings": [], "computations": items}),
        false,
    )
}

#[test]
fn computation_path_resolution_rules() {
    let r = |doc: &str, p: &str| resolve_computation_path(doc, p);
    assert_eq!(r("q/a.md", "a.sql").as_deref(), Some("q/a.sql"));
    assert_eq!(r("q/a.md", "sql/./a.sql").as_deref(), Some("q/sql/a.sql"));
    assert_eq!(r("q/a.md", "/x/a.sql").as_deref(), Some("x/a.sql"));
    assert_eq!(
        r("q/r/a.md", "../s/a.sql?v=1#f").as_deref(),
        Some("q/s/a.sql")
    );
    assert_eq!(r("a.md", "a.sql").as_deref(), Some("a.sql"));
    assert_eq!(r("q/a.md", "../a.sql").as_deref(), Some("a.sql"));
    for bad in [
        "https://e.test/a.sql",
        "file:///a.sql",
        "C:\\a.sql",
        "C:/a.sql",
        "../../a.sql",
        "/../a.sql",
        "#frag",
        "?q",
        "",
        "a//b.sql",
        "//host/a.sql",
        "dir/",
    ] {
        assert_eq!(r("q/a.md", bad), None, "{bad}");
    }
}

#[test]
fn asset_path_rules() {
    for ok in ["a.sql", "q/a.sql", "q/.hidden", "okf/x", "gitx/y", "a.mdx"] {
        assert!(is_asset_path(ok), "{ok}");
    }
    for bad in [
        ".git/hooks/pre-commit",
        ".OKF/x",
        ".Git/x",
        "a/../b.sql",
        "./a",
        "x.md",
        "q/X.MD",
        "a?b",
        "a#b",
        "/a",
        "",
        "a\\b",
    ] {
        assert!(!is_asset_path(bad), "{bad}");
    }
}

#[test]
fn request_rules_of_section_3_4() {
    let code = |v: Value| req(v).map(|_| ()).map_err(|e| e.code);
    assert!(code(json!([item_file("q/a", "a.sql", "q/a.sql", "")])).is_ok());
    let mut dup = item_inline("q/a", "x");
    dup["contract"]["parameters"] = json!([
        {"name": "y", "type": "int", "required": true},
        {"name": "y", "type": "str", "required": true}
    ]);
    let mut receipt = item_inline("q/a", "x");
    receipt["contract"]["executor"]["receipt"] = json!(["a", "a"]);
    let mut blank = item_inline("q/a", "x");
    blank["contract"]["runtime"] = json!("  ");
    for (what, items) in [
        ("duplicate parameter", json!([dup])),
        ("duplicate receipt field", json!([receipt])),
        ("blank runtime", json!([blank])),
        ("reserved target", json!([item_inline("index", "x")])),
        ("nested reserved target", json!([item_inline("q/log", "x")])),
        (
            "one concept twice",
            json!([item_inline("q/a", "x"), item_inline("q/a", "y")]),
        ),
        (
            "one asset with two contents",
            json!([
                item_file("q/a", "/s.sql", "s.sql", "1"),
                item_file("q/b", "/s.sql", "s.sql", "2")
            ]),
        ),
        (
            "bad asset path",
            json!([item_file("q/a", "/x.md", "x.md", "")]),
        ),
    ] {
        assert_eq!(code(items), Err("invalid_request".into()), "{what}");
    }
    // A path mismatch is recorded, not raised.
    let r = req(json!([item_file("q/a", "b.sql", "q/a.sql", "")])).expect("parsed");
    assert!(r.computations[0].path_mismatch);
    let r = req(json!([item_file("q/a", "a.sql", "q/a.sql", "")])).expect("parsed");
    assert!(!r.computations[0].path_mismatch);
}

#[test]
fn operation_bytes_bind_computations_in_canonical_order() {
    let a = item_file("q/a", "a.sql", "q/a.sql", "");
    let b = item_inline("q/b", "print(1)");
    let one = req(json!([a.clone(), b.clone()])).expect("parsed");
    let two = req(json!([b, a.clone()])).expect("parsed");
    let none = req(json!([])).expect("parsed");
    assert_eq!(
        identity::operation_bytes(&one),
        identity::operation_bytes(&two)
    );
    assert_ne!(
        identity::operation_bytes(&one),
        identity::operation_bytes(&none)
    );
    let mut changed = a;
    changed["asset"]["content"] = json!(" ");
    let three = req(json!([changed])).expect("parsed");
    let four = req(json!([item_file("q/a", "a.sql", "q/a.sql", "")])).expect("parsed");
    assert_ne!(
        identity::operation_bytes(&three),
        identity::operation_bytes(&four)
    );
}

#[test]
fn proof_writes_may_create_requested_assets_only() {
    let h = "0".repeat(64);
    let mut p = identity::build_proof(
        "sha256:r",
        "sha256:s",
        "sha256:base",
        "sha256:result",
        vec!["q/a.md".into()],
        vec![("q/a.md".into(), h.clone()), ("q/a.sql".into(), h.clone())],
        vec!["q/a".into()],
    );
    assert!(identity::validate_proof(&p, "sha256:r", "sha256:s", &["q/a.sql"]).is_ok());
    assert!(identity::validate_proof(&p, "sha256:r", "sha256:s", &[]).is_err());
    p.writes[1].0 = "q/b.sql".into();
    p.changed_files[1].1 = "q/b.sql".into();
    assert!(identity::validate_proof(&p, "sha256:r", "sha256:s", &["q/a.sql"]).is_err());
}

const FM: &str = "---\ntype: Query\n---\n";

fn run(body: &str, items: Value) -> DocOutcome {
    let r = req(items).expect("parsed");
    let text = format!("{FM}{body}");
    migrate_document(
        DocKind::Concept,
        text.as_bytes(),
        &r,
        None,
        None,
        r.computations.first(),
    )
}

fn codes(o: &DocOutcome) -> Vec<&'static str> {
    o.blockers.iter().map(|b| b.code).collect()
}

#[test]
fn inline_body_rules_of_section_6_6() {
    // No section: appended.
    let o = run("\nText.\n", json!([item_inline("q/a", "print(1)")]));
    let t = o.text.expect("written");
    assert!(
        t.ends_with("\nText.\n\n# Computation\n\n```python\nprint(1)\n```\n"),
        "{t}"
    );
    // A matching fence: the body stays; the migrated document replays unchanged.
    let r = req(json!([item_inline("q/a", "print(1)")])).expect("parsed");
    assert!(replay_document(
        DocKind::Concept,
        t.as_bytes(),
        &r,
        None,
        None,
        r.computations.first()
    )
    .is_empty());
    let o = run(
        "\n# Computation\n\n```python\nprint(1)\n```\n",
        json!([item_inline("q/a", "print(1)")]),
    );
    assert!(o.blockers.is_empty(), "{:?}", o.blockers);
    assert!(!o
        .text
        .expect("frontmatter written")
        .contains("print(1)\n```\n\n# Computation"));
    for (body, code) in [
        (
            "\n# Computation\n\n```python\nprint(2)\n```\n",
            "sanctioned_computation_mismatch",
        ),
        (
            "\n# Computation\n\n```sql\nprint(1)\n```\n",
            "sanctioned_computation_mismatch",
        ),
        ("\n# Computation\n\n", "missing_computation_boundary"),
        (
            "\n# Computation\n\nProse.\n",
            "ambiguous_computation_boundary",
        ),
        (
            "\n# Computation\n\n```\na\n```\n\n```\nb\n```\n",
            "ambiguous_computation_boundary",
        ),
        (
            "\n# Computation\n\n```python\nprint(1)\n",
            "ambiguous_computation_boundary",
        ),
        ("\n```\nopen fence\n", "ambiguous_computation_boundary"),
    ] {
        let o = run(body, json!([item_inline("q/a", "print(1)")]));
        assert_eq!(codes(&o), vec![code], "{body:?}");
        assert!(o.text.is_none());
    }
}

#[test]
fn file_body_rules_of_section_6_6() {
    let items = || json!([item_file("q/a", "a.sql", "q/a.sql", "SELECT 1;\n")]);
    let o = run("\nText.\n", items());
    let t = o.text.expect("written");
    assert!(t.contains("computation: a.sql\n---\n\nText.\n"), "{t}");
    let o = run(
        "\nIntro.\n\n# Computation\n\n```sql\nSELECT 1;\n```\n\nAfter.\n\n# Next\n",
        items(),
    );
    let t = o.text.expect("written");
    assert!(t.ends_with("---\n\nIntro.\n\nAfter.\n\n# Next\n"), "{t}");
    for (body, code) in [
        (
            "\n# Computation\n\n```sql\nSELECT 2;\n```\n",
            "sanctioned_computation_mismatch",
        ),
        ("\n# Computation\n", "missing_computation_boundary"),
        (
            "\n# Computation\n\nProse only.\n",
            "ambiguous_computation_boundary",
        ),
    ] {
        let o = run(body, items());
        assert_eq!(codes(&o), vec![code], "{body:?}");
    }
    // A zero-byte asset matches an empty fence.
    let o = run(
        "\n# Computation\n\n```\n```\n",
        json!([item_file("q/a", "a.sql", "q/a.sql", "")]),
    );
    assert!(o.blockers.is_empty(), "{:?}", o.blockers);
    // CRLF documents get CRLF lines.
    let r = req(json!([item_inline("q/a", "x")])).expect("parsed");
    let text = "---\r\ntype: Query\r\n---\r\nBody.\r\n";
    let o = migrate_document(
        DocKind::Concept,
        text.as_bytes(),
        &r,
        None,
        None,
        r.computations.first(),
    );
    let t = o.text.expect("written");
    assert!(
        t.ends_with("Body.\r\n\r\n# Computation\r\n\r\n```python\r\nx\r\n```\r\n"),
        "{t:?}"
    );
    assert!(!t.replace("\r\n", "").contains('\n'), "{t:?}");
}

#[test]
fn a_concept_without_frontmatter_cannot_take_a_computation() {
    let r = req(json!([item_inline("q/a", "x")])).expect("parsed");
    let o = migrate_document(
        DocKind::Concept,
        b"Body.\n",
        &r,
        None,
        None,
        r.computations.first(),
    );
    assert_eq!(codes(&o), vec!["migration_document_invalid"]);
}

#[test]
fn the_reconcile_keeps_extension_keys_and_comments_and_is_idempotent() {
    let r = req(json!([item_file("q/a", "a.sql", "q/a.sql", "")])).expect("parsed");
    let text = "---\ntype: Query # kind\nexecutor:\n  resource: old.md # was\n  timeout: 5\n  receipt: [job_id]\nattester:\n  resource: a.py\n  key: k1\n---\nBody.\n";
    let o = migrate_document(
        DocKind::Concept,
        text.as_bytes(),
        &r,
        None,
        None,
        r.computations.first(),
    );
    assert!(o.blockers.is_empty(), "{:?}", o.blockers);
    let t = o.text.expect("written");
    assert!(t.contains("  timeout: 5\n"), "{t}");
    assert!(t.contains("  key: k1\n"), "{t}");
    assert!(t.contains("# kind"), "{t}");
    assert!(t.contains("resource: run.md"), "{t}");
    assert!(!t.contains("old.md"), "{t}");
    assert!(
        replay_document(
            DocKind::Concept,
            t.as_bytes(),
            &r,
            None,
            None,
            r.computations.first()
        )
        .is_empty(),
        "{t}"
    );
    // A different contract does not replay.
    let other = req(json!([item_file("q/a", "a.sql", "q/a.sql", "")]))
        .map(|mut x| {
            x.computations[0].contract.runtime = "python".into();
            x
        })
        .expect("parsed");
    let bs = replay_document(
        DocKind::Concept,
        t.as_bytes(),
        &other,
        None,
        None,
        other.computations.first(),
    );
    assert_eq!(
        bs.iter().map(|b| b.code).collect::<Vec<_>>(),
        vec!["migration_replay_mismatch"]
    );
}

/// The shortcut of `settled`: a blocked document with an active `# Citations` section is never
/// settled, and the full target replay agrees (it reports the section), so skipping the replay
/// for it changes no outcome; a proposal exists only for such a document.
#[test]
fn settled_skips_the_replay_only_where_the_replay_must_fail() {
    let r = req(json!([])).expect("request");
    let doc = b"---\ntype: concept\ntimestamp: 2024-01-02T03:04:05Z\n---\n# A\n\nClaim [1].\n\n# Citations\n\n1. [Guide](https://example.org/guide)\n";
    let o = migrate_document(DocKind::Concept, doc, &r, None, None, None);
    assert!(o.has_section, "the section is active");
    assert!(
        !o.blockers.is_empty(),
        "unmapped citations block the document"
    );
    assert!(!settled(&o, DocKind::Concept, doc, &r, None, None, None));
    let replay = replay_document(DocKind::Concept, doc, &r, None, None, None);
    assert!(
        replay.iter().any(|b| b.code == "migration_replay_mismatch"),
        "the replay reports the active section: {replay:?}"
    );
    assert!(propose("a.md", DocKind::Concept, doc).is_some());
    // Without a section there is no proposal, whatever the outcome.
    let plain = b"---\ntype: concept\n---\n# A\n\nNo citations here.\n";
    assert!(propose("b.md", DocKind::Concept, plain).is_none());
}
