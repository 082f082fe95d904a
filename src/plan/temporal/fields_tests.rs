//! Unit tests of the classification (spec/temporal.md §3) and the presentation rules (§9),
//! with a proptest over generated frontmatter in every presentation.

use super::*;
use proptest::prelude::*;

const TO: &str = "2026-01-02T12:00:00+07:00";

fn rw<'a>(path: &'a str, from: &'a str) -> Rewrite<'a> {
    Rewrite { path, from, to: TO }
}

fn classes(text: &str) -> Vec<(String, ValueClass, String)> {
    let y = yaml::parse(text).expect("yaml");
    occurrences(y.root.as_ref())
        .expect("classifies")
        .into_iter()
        .map(|o| (o.path, o.class, o.text))
        .collect()
}

#[test]
fn observation_order_and_classes() {
    let fm = "sources:\n  - id: a\n    usage_window: {to: 2026-03-01, from: 2026-02-01}\n    last_modified: 2026-01-05T00:00:00Z\nusage_window:\n  to: '2026-01-31'\n  from: ~\nstale_after: 2026-01-02\ngenerated: {by: a/b, at: 2026-01-01}\n";
    let c = classes(fm);
    let paths: Vec<&str> = c.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        paths,
        [
            "stale_after",
            "usage_window.to",
            "sources[0].last_modified",
            "sources[0].usage_window.from",
            "sources[0].usage_window.to"
        ]
    );
    assert_eq!(c[2].1, ValueClass::Instant);
    assert_eq!(c[1].1, ValueClass::Legacy);
    assert_eq!(c[1].2, "2026-01-31");
}

#[test]
fn malformed_and_unsupported_values_fail() {
    for (fm, code) in [
        ("stale_after: [2026-01-02]\n", "temporal_field_malformed"),
        ("usage_window: 2026-01-02\n", "temporal_field_malformed"),
        ("sources: {a: 1}\n", "temporal_field_malformed"),
        ("sources:\n  - 3\n", "temporal_field_malformed"),
        ("usage_window: {from: {x: 1}}\n", "temporal_field_malformed"),
        ("stale_after: next week\n", "temporal_value_unsupported"),
        ("stale_after: 2026-02-30\n", "temporal_value_unsupported"),
        (
            "stale_after: 2026-01-02T00:00:00\n",
            "temporal_value_unsupported",
        ),
        (
            "sources:\n  - last_modified: 7\n",
            "temporal_value_unsupported",
        ),
    ] {
        let y = yaml::parse(fm).expect("yaml");
        assert_eq!(occurrences(y.root.as_ref()).unwrap_err().code, code, "{fm}");
    }
    // Null counts as absent.
    assert!(classes("stale_after: ~\nusage_window:\nsources:\n").is_empty());
}

#[test]
fn tmp_09_10_presentation_rules() {
    let cases = [
        (
            "stale_after: 2026-01-02 # keep\n",
            "stale_after: 2026-01-02T12:00:00+07:00 # keep\n",
        ),
        (
            "stale_after: '2026-01-02'\n",
            "stale_after: '2026-01-02T12:00:00+07:00'\n",
        ),
        (
            "stale_after: \"2026-01-02\"  # q\n",
            "stale_after: \"2026-01-02T12:00:00+07:00\"  # q\n",
        ),
        (
            "stale_after: !!timestamp 2026-01-02 # t\n",
            "stale_after: !!timestamp 2026-01-02T12:00:00+07:00 # t\n",
        ),
        (
            "stale_after: !!str  2026-01-02 # s\n",
            "stale_after: !!str  2026-01-02T12:00:00+07:00 # s\n",
        ),
        (
            "x-root: 1\nstale_after: 2026-01-02\r\nz: 2\r\n",
            "x-root: 1\nstale_after: 2026-01-02T12:00:00+07:00\r\nz: 2\r\n",
        ),
    ];
    for (before, after) in cases {
        assert_eq!(
            rewrite_frontmatter(before, &[rw("stale_after", "2026-01-02")]).as_deref(),
            Ok(after),
            "{before}"
        );
    }
    let flow = "usage_window: {from: 2026-01-01, to: '2026-01-31'} # w\n";
    assert_eq!(
        rewrite_frontmatter(
            flow,
            &[rw("usage_window.from", "2026-01-01"), rw("usage_window.to", "2026-01-31")]
        )
        .as_deref(),
        Ok("usage_window: {from: 2026-01-02T12:00:00+07:00, to: '2026-01-02T12:00:00+07:00'} # w\n")
    );
    for bad in [
        "stale_after: !!str '2026-01-02'\n",
        "stale_after: !!str \"2026-01-02\"\n",
        "stale_after: &d 2026-01-02\nx: *d\n",
        "a: &d 2026-01-02\nstale_after: *d\n",
        "stale_after: !<tag:yaml.org,2002:str> 2026-01-02\n",
        "stale_after: !custom 2026-01-02\n",
        "stale_after: |-\n  2026-01-02\n",
        "stale_after: >-\n  2026-01-02\n",
        "w: &w {from: 2026-01-02}\nusage_window: *w\n",
    ] {
        let path = if bad.contains("usage_window") {
            "usage_window.from"
        } else {
            "stale_after"
        };
        let e = rewrite_frontmatter(bad, &[rw(path, "2026-01-02")]).unwrap_err();
        assert_eq!(e.code, "temporal_presentation_unsupported", "{bad}");
    }
}

#[test]
fn source_changed_and_stray_fail() {
    let fm =
        "stale_after: 2026-01-03\nusage_window: {from: 2026-01-01T00:00:00Z, to: 2026-01-02}\n";
    assert_eq!(
        rewrite_frontmatter(fm, &[rw("stale_after", "2026-01-02")])
            .unwrap_err()
            .code,
        "temporal_source_changed"
    );
    for p in ["usage_window.from", "sources[0].last_modified"] {
        assert_eq!(
            rewrite_frontmatter(fm, &[rw(p, "2026-01-02")])
                .unwrap_err()
                .code,
            "temporal_mapping_stray",
            "{p}"
        );
    }
}

#[test]
fn documents_keep_fences_body_and_crlf() {
    let doc = "---\r\ntype: T\r\nstale_after: 2026-01-02\r\n---\r\nBody 2026-01-02\r\n";
    let out = rewrite_document(doc.as_bytes(), &[rw("stale_after", "2026-01-02")]).expect("ok");
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        "---\r\ntype: T\r\nstale_after: 2026-01-02T12:00:00+07:00\r\n---\r\nBody 2026-01-02\r\n"
    );
}

/// One presentation of a date value in a generated frontmatter.
#[derive(Debug, Clone)]
enum Pres {
    Plain,
    Single,
    Double,
    Timestamp,
    Str,
    StrQuoted,
    Anchored,
}

fn pres() -> impl Strategy<Value = Pres> {
    prop_oneof![
        Just(Pres::Plain),
        Just(Pres::Single),
        Just(Pres::Double),
        Just(Pres::Timestamp),
        Just(Pres::Str),
        Just(Pres::StrQuoted),
        Just(Pres::Anchored),
    ]
}

fn render(p: &Pres, date: &str, n: usize) -> String {
    match p {
        Pres::Plain => date.to_owned(),
        Pres::Single => format!("'{date}'"),
        Pres::Double => format!("\"{date}\""),
        Pres::Timestamp => format!("!!timestamp {date}"),
        Pres::Str => format!("!!str {date}"),
        Pres::StrQuoted => format!("!!str '{date}'"),
        Pres::Anchored => format!("&a{n} {date}"),
    }
}

fn supported(p: &Pres) -> bool {
    !matches!(p, Pres::StrQuoted | Pres::Anchored)
}

prop_compose! {
    fn date()(y in 2000u32..2100, m in 1u32..=12, d in 1u32..=28) -> String {
        format!("{y:04}-{m:02}-{d:02}")
    }
}

prop_compose! {
    fn instant()(d in date(), h in 0u32..24, mi in 0u32..60, frac in proptest::option::of(1u32..999),
                 off in prop_oneof![Just("Z".to_owned()), (0u32..14, 0u32..60, any::<bool>()).prop_map(|(h, m, neg)| format!("{}{h:02}:{m:02}", if neg && (h, m) != (0, 0) { '-' } else { '+' }))])
        -> String {
        let f = frac.map(|f| format!(".{f}")).unwrap_or_default();
        format!("{d}T{h:02}:{mi:02}:00{f}{off}")
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Either the rewrite touches only the scalar tokens and re-parses to the intended
    /// instants, or it fails closed (spec/temporal.md §9).
    #[test]
    fn rewrites_touch_only_tokens_or_fail_closed(
        ps in proptest::collection::vec(pres(), 4),
        dates in proptest::collection::vec(date(), 4),
        tos in proptest::collection::vec(instant(), 4),
        flow in any::<bool>(),
        comments in proptest::collection::vec(any::<bool>(), 4),
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let c = |i: usize| if comments[i] { " # keep" } else { "" };
        let v: Vec<String> = (0..4).map(|i| render(&ps[i], &dates[i], i)).collect();
        let window = if flow {
            format!("usage_window: {{from: {}, to: {}}}{}{nl}", v[1], v[2], c(1))
        } else {
            format!("usage_window:{nl}  from: {}{}{nl}  to: {}{}{nl}", v[1], c(1), v[2], c(2))
        };
        let text = format!(
            "type: T{nl}x-root: keep{nl}stale_after: {}{}{nl}{window}sources:{nl}  - id: s{nl}    last_modified: {}{}{nl}",
            v[0], c(0), v[3], c(3)
        );
        let paths = ["stale_after", "usage_window.from", "usage_window.to", "sources[0].last_modified"];
        let rewrites: Vec<Rewrite<'_>> = (0..4)
            .map(|i| Rewrite { path: paths[i], from: &dates[i], to: &tos[i] })
            .collect();
        match rewrite_frontmatter(&text, &rewrites) {
            Ok(out) => {
                prop_assert!(ps.iter().all(supported), "accepted an unsupported presentation");
                // Only the value tokens changed: removing each instant from the output and
                // each date from the input leaves the same text.
                let mut a = text.clone();
                let mut b = out.clone();
                for i in 0..4 {
                    a = a.replacen(&dates[i], "\u{0}", 1);
                    b = b.replacen(&tos[i], "\u{0}", 1);
                }
                prop_assert_eq!(a, b);
                let y = yaml::parse_full(&out).expect("re-parses");
                let occ = occurrences(y.root.as_ref()).expect("classifies");
                for i in 0..4 {
                    let o = occ.iter().find(|o| o.path == paths[i]).expect("present");
                    prop_assert_eq!(o.class, ValueClass::Instant);
                    prop_assert_eq!(&o.text, &tos[i]);
                }
            }
            Err(e) => {
                prop_assert_eq!(e.code, "temporal_presentation_unsupported");
                prop_assert!(!ps.iter().all(supported), "refused a supported presentation: {}", e.message);
            }
        }
    }
}
