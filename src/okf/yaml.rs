//! YAML 1.2 frontmatter parsing into a node tree with **byte** spans (spec/surface.md §13.1
//! rule 3, spec/store.md §3.4–§3.5, spec/concept-patch.md §4.1).
//!
//! Built on the event parser of `saphyr-parser`, whose markers count characters; this module
//! maps them to byte offsets of the frontmatter text. Scalars keep their decoded value and
//! style, so `1.10`, `0012`, `yes` and dates stay text (resolution happens only on request
//! through [`Node::resolved`]).
//!
//! # Spans
//! Every [`Node::span`] is an exact byte range of the frontmatter text: it starts at the node's
//! first property (`&anchor` / `!tag`) when present, else at its first token, and covers:
//! - plain scalars: the scalar text (several lines for a multi-line plain scalar);
//! - quoted scalars: the whole token including both quotes (never a trailing comment);
//! - literal / folded scalars: from the `|` / `>` indicator through the end of the last
//!   non-blank content line (trailing blank lines and following comment lines are outside);
//! - flow collections: from `[` / `{` through the closing bracket;
//! - block collections: from the first key or dash through the end of the last child's span
//!   (comment and blank lines after the last child are outside — saphyr's own end marker of a
//!   block collection swallows them, spec/rust-notes.md §4.3);
//! - aliases: the `*name` token.
//!
//! An empty plain scalar (`empty:`) has an empty span placed right after the `:`.
//! [`Yaml::comments`] lists the byte range of every comment (`#` through the end of its line,
//! newline excluded); [`Yaml::line_starts`] is the line-start table.

mod fast;
mod full;
mod tree;

pub use full::{error_position, error_position_text, parse_full};
pub use tree::{
    resolve_plain, Node, NodeKind, Resolved, ScalarKind, Style, Value, Yaml, YamlError,
    MAX_ALIASES, MAX_DEPTH, MAX_FRONTMATTER_BYTES, MAX_NODES, MAX_SCALAR_BYTES,
};

/// Parses one frontmatter block (the text between the fences).
///
/// Enforces every rule of spec/store.md §3.4–§3.5: the size, depth, node, alias and scalar
/// limits; duplicate anchors, aliases to undefined anchors and malformed merge keys; duplicate
/// keys at every level (compared by semantic projection, so `"a"` and `a` collide).
///
/// Frontmatter in the plain subset most documents use is read by a direct scanner (`fast`),
/// which hands anything else — and every error — to the event parser; both give the same
/// tree (checked by differential tests, and on every call by the tripwire when it is armed:
/// debug builds and the `yaml-tripwire` feature, see [`tripwire`]).
///
/// # Errors
/// [`YamlError`] as documented on its variants.
pub fn parse(text: &str) -> Result<Yaml, YamlError> {
    if text.len() <= MAX_FRONTMATTER_BYTES {
        if let Some(y) = fast::parse(text) {
            tripwire(text, &y);
            return Ok(y);
        }
    }
    parse_full(text)
}

/// The fast ↔ full tripwire: panics when `fast`, the fast path's tree of `text`, differs from
/// what [`parse_full`] makes of `text`. Armed in debug builds and, in any profile, with the
/// `yaml-tripwire` feature (`.ci/run` tests with it); never compiled into a release build
/// without that feature.
#[cfg(any(debug_assertions, feature = "yaml-tripwire"))]
fn tripwire(text: &str, fast: &Yaml) {
    assert_eq!(
        Ok(fast),
        parse_full(text).as_ref(),
        "yaml fast path differs"
    );
}

/// The fast ↔ full tripwire, compiled out (release build without `yaml-tripwire`).
#[cfg(not(any(debug_assertions, feature = "yaml-tripwire")))]
#[inline(always)]
fn tripwire(_text: &str, _fast: &Yaml) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aut_05_error_positions_are_line_and_column() {
        assert_eq!(error_position("a: 1\nb: [unclosed\n"), Some((3, 1)));
        assert_eq!(error_position("type: t\n  bad: x\n"), Some((2, 6)));
        assert_eq!(error_position("a: 1\nb: 2\na: 3\n"), Some((3, 1)));
        assert_eq!(error_position("m:\n  k: 1\n  k: 2\n"), Some((3, 3)));
        assert_eq!(error_position("- a\n- b\n"), Some((1, 1)));
        assert_eq!(error_position("just a scalar"), Some((1, 1)));
        assert_eq!(error_position("a: 1\n---\nb: 2\n"), Some((2, 1)));
        assert_eq!(error_position("a: 1\nb: 2\n"), None);
        assert_eq!(
            error_position_text("a: 1\na: 2\n", 1),
            " (line 3, column 1)"
        );
    }

    /// Debug builds and every build with `yaml-tripwire` (`.ci/run` tests with it) carry the
    /// tripwire: it panics on a tree that differs from the full parser's and stays quiet on
    /// the right one. Fails if the comparison were compiled out of such a build.
    #[cfg(any(debug_assertions, feature = "yaml-tripwire"))]
    #[test]
    fn tripwire_is_armed_in_debug_and_with_the_feature() {
        let text = "a: 1\n";
        let right = parse_full(text).unwrap();
        tripwire(text, &right);
        let mut wrong = right.clone();
        wrong.root = None;
        let fired = std::panic::catch_unwind(|| tripwire(text, &wrong));
        assert!(fired.is_err(), "the tripwire let a differing tree through");
    }

    /// A release build without `yaml-tripwire` (`cargo test --release`) compiles the
    /// comparison out: a differing tree passes unnoticed.
    #[cfg(not(any(debug_assertions, feature = "yaml-tripwire")))]
    #[test]
    fn tripwire_is_compiled_out_of_a_plain_release_build() {
        let text = "a: 1\n";
        let mut wrong = parse_full(text).unwrap();
        wrong.root = None;
        tripwire(text, &wrong);
    }

    #[test]
    fn scalars_keep_text_and_spans_are_bytes() {
        let src = "title: Ünïcode — x\nv: 1.10\nn: 0012\ntags: [a, \"b\"]\n";
        let y = parse(src).unwrap();
        let root = y.root.unwrap();
        let t = root.get("title").unwrap();
        assert_eq!(&src[t.span.clone()], "Ünïcode — x");
        assert_eq!(root.get("v").unwrap().scalar_text(), Some("1.10"));
        assert_eq!(root.get("n").unwrap().resolved(), Some(Resolved::Int(12)));
        let tags = root.get("tags").unwrap();
        assert!(matches!(tags.kind, NodeKind::Sequence { flow: true, .. }));
        assert_eq!(&src[tags.span.clone()], "[a, \"b\"]");
    }

    #[test]
    fn faults() {
        assert_eq!(parse("a: 1\na: 2\n"), Err(YamlError::DuplicateKey));
        assert!(matches!(parse("- a\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("a: [\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(
            parse("a: &x 1\nb: &x 2\n"),
            Err(YamlError::Graph(_))
        ));
        assert!(matches!(parse("a: *nope\n"), Err(YamlError::Graph(_))));
        assert_eq!(parse("").unwrap().root, None);
    }

    #[test]
    fn block_sequences_under_a_key_start_at_their_first_dash() {
        let src = "a:\n- x\nb:\n- [1]\nc:\n- - y\nd:\n- # c\n  k: 1\ne: &p\n  [1]: 2\n";
        let y = parse_full(src).unwrap();
        let r = y.root.unwrap();
        let at = |k: &str| &src[r.get(k).unwrap().span.clone()];
        assert_eq!(at("a"), "- x");
        assert_eq!(at("b"), "- [1]");
        assert!(!r.get("b").unwrap().is_flow());
        assert_eq!(at("c"), "- - y");
        assert_eq!(at("d"), "- # c\n  k: 1");
        // A property line before a block mapping whose first key is a flow sequence.
        let e = r.get("e").unwrap();
        assert!(!e.is_flow());
        assert_eq!(at("e"), "&p\n  [1]: 2");
    }

    #[test]
    fn flow_mapping_spans_with_trailing_commas_and_implicit_values() {
        let src = "x: {a: b,}\ny: {a: {b: c,},}\nz: [{a: b, }]\nw: {a, b}\nv: {c}\n";
        let y = parse_full(src).unwrap();
        let r = y.root.unwrap();
        let at = |n: &Node| &src[n.span.clone()];
        assert_eq!(at(r.get("x").unwrap()), "{a: b,}");
        assert_eq!(at(r.get("y").unwrap()), "{a: {b: c,},}");
        assert_eq!(at(r.get("y").unwrap().get("a").unwrap()), "{b: c,}");
        assert_eq!(at(&r.get("z").unwrap().items().unwrap()[0]), "{a: b, }");
        for k in ["w", "v"] {
            let m = r.get(k).unwrap();
            for (key, value) in m.entries().unwrap() {
                assert!(value.is_null());
                assert!(value.span.is_empty(), "{k}.{:?}", key.scalar_text());
                assert_eq!(value.span.start, key.span.end);
            }
        }
    }

    #[test]
    fn alias_bomb_hits_the_limit() {
        let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            s.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n",
                p = i - 1
            ));
        }
        assert!(matches!(parse(&s), Err(YamlError::Limit(_))));
    }
}

#[cfg(test)]
mod span_tests {
    use super::*;

    fn root(src: &str) -> (Yaml, Node) {
        let y = parse(src).unwrap();
        let r = y.root.clone().unwrap();
        (y, r)
    }

    fn at<'a>(src: &'a str, n: &Node) -> &'a str {
        &src[n.span.clone()]
    }

    /// Found by the `editor` fuzz target (fuzz/regressions/editor/): a block-scalar event
    /// whose properties end where no `|` or `>` follows sliced past the end of the text.
    #[test]
    fn block_scalar_properties_without_an_indicator_do_not_panic() {
        for src in [
            "\r|\r!|\r!\u{0}_p \t",
            "\r|\r!|\r!",
            "a: !t |\n",
            "a: &x !t >-\n  b\n",
            "!|",
            "! |",
        ] {
            // Either answer is fine; only a panic is not.
            let _ = parse(src);
            let _ = parse_full(src);
        }
    }

    #[test]
    fn quoted_scalar_spans_cover_quotes_not_comments() {
        let src = "a: \"q\\\"x\" # c\nb: 'it''s'   # z\nc: [ \"y\" , 'w' ]\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("a").unwrap()), "\"q\\\"x\"");
        assert_eq!(at(src, r.get("b").unwrap()), "'it''s'");
        let items = r.get("c").unwrap().items().unwrap();
        assert_eq!(at(src, &items[0]), "\"y\"");
        assert_eq!(at(src, &items[1]), "'w'");
        assert_eq!(at(src, r.get("c").unwrap()), "[ \"y\" , 'w' ]");
        let comments: Vec<&str> = y.comments.iter().map(|c| &src[c.clone()]).collect();
        assert_eq!(comments, ["# c", "# z"]);
    }

    #[test]
    fn block_scalar_spans_start_at_the_indicator() {
        let src = "c: |\n  lit\n  more\n\n# after\nd: >-  # hdr\n  fold\ne: &x !!str |\n  t\nf: |\ng: 1\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("c").unwrap()), "|\n  lit\n  more");
        assert_eq!(at(src, r.get("d").unwrap()), ">-  # hdr\n  fold");
        let e = r.get("e").unwrap();
        assert_eq!(at(src, e), "&x !!str |\n  t");
        assert_eq!(e.anchor.as_deref(), Some("x"));
        assert_eq!(e.tag.as_deref(), Some("!!str"));
        assert_eq!(at(src, r.get("f").unwrap()), "|");
        let comments: Vec<&str> = y.comments.iter().map(|c| &src[c.clone()]).collect();
        assert_eq!(comments, ["# after", "# hdr"]);
    }

    #[test]
    fn hash_inside_scalars_is_not_a_comment() {
        let src = "a: \"x # y\"\nb: x#y\nc: |\n  # not a comment\nd: 'p # q' # real\n";
        let (y, _) = root(src);
        let comments: Vec<&str> = y.comments.iter().map(|c| &src[c.clone()]).collect();
        assert_eq!(comments, ["# real"]);
    }

    #[test]
    fn block_collection_spans_exclude_trailing_comment_lines() {
        let src = "g:\n  - 1\n  # inner\n  - 2\n# tail\nh:\n  k: v  # c\n\n# t2\nz: 1\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("g").unwrap()), "- 1\n  # inner\n  - 2");
        assert_eq!(at(src, r.get("h").unwrap()), "k: v");
        assert!(y.has_comment_in(&r.get("g").unwrap().span));
        assert!(!y.has_comment_in(&r.get("h").unwrap().span));
        assert_eq!(y.line_of(src.find("z:").unwrap()), 9);
        assert_eq!(y.line_starts[1], 3);
    }

    #[test]
    fn flow_collection_spans_end_at_the_bracket() {
        let src = "e: [a, b] # c\nf: {x: \"y\" , z: 'w'  }   \ng: &an [1]\n";
        let (_, r) = root(src);
        assert_eq!(at(src, r.get("e").unwrap()), "[a, b]");
        assert_eq!(at(src, r.get("f").unwrap()), "{x: \"y\" , z: 'w'  }");
        let g = r.get("g").unwrap();
        assert_eq!(at(src, g), "&an [1]");
        assert!(g.is_flow());
        let (k, v) = &r.get("f").unwrap().entries().unwrap()[1];
        assert_eq!(at(src, k), "z");
        assert_eq!(at(src, v), "'w'");
    }

    #[test]
    fn cjk_em_dash_crlf_and_bom_text() {
        let src = "ü: Ünï — 中文 # ç\r\nk: \"日本\"\r\n";
        let (y, r) = root(src);
        assert_eq!(at(src, r.get("ü").unwrap()), "Ünï — 中文");
        assert_eq!(at(src, r.get("k").unwrap()), "\"日本\"");
        assert_eq!(&src[y.comments[0].clone()], "# ç");
        // A BOM left in the frontmatter text is not YAML content at a key position.
        let bom = "\u{feff}a: 1\n";
        let y = parse(bom).unwrap();
        let a = y.root.unwrap();
        assert_eq!(&bom[a.get("a").unwrap().span.clone()], "1");
    }

    #[test]
    fn tricky_scalars_stay_text() {
        let src = "a: yes\nb: 0012\nc: 1.10\nd: ~\nempty:\nf: 2026-01-01\ng: on\n";
        let (_, r) = root(src);
        assert_eq!(r.get("a").unwrap().as_str(), Some("yes"));
        assert_eq!(r.get("b").unwrap().scalar_text(), Some("0012"));
        assert_eq!(r.get("c").unwrap().scalar_text(), Some("1.10"));
        assert!(r.get("d").unwrap().is_null());
        let e = r.get("empty").unwrap();
        assert!(e.is_null());
        assert_eq!(e.span, 34..34);
        assert_eq!(r.get("f").unwrap().as_str(), Some("2026-01-01"));
        assert_eq!(r.get("g").unwrap().as_str(), Some("on"));
        assert_ne!(r.get("c").unwrap().value(), Value::plain("1.1"));
        assert_eq!(r.get("d").unwrap().value(), Value::plain("null"));
    }

    #[test]
    fn multi_line_plain_and_quoted_spans() {
        let src = "d: multi\n  line plain\nc: \"m\n  n\"\nz: 1\n";
        let (_, r) = root(src);
        assert_eq!(at(src, r.get("d").unwrap()), "multi\n  line plain");
        assert_eq!(at(src, r.get("c").unwrap()), "\"m\n  n\"");
    }

    #[test]
    fn sequence_items_and_alias_spans() {
        let src = "s:\n- a\n-\n  id: 1\n- id: 2\n  t: 3\nx: &k v\ny: *k\n";
        let (_, r) = root(src);
        let items = r.get("s").unwrap().items().unwrap();
        assert_eq!(at(src, &items[1]), "id: 1");
        assert_eq!(at(src, &items[2]), "id: 2\n  t: 3");
        let (_, y) = r.entries().unwrap().last().unwrap();
        assert_eq!(at(src, y), "*k");
        assert_eq!(y.value(), Value::str("v"));
        assert!(y.has_props_inside());
    }

    #[test]
    fn rev_07_resource_limits() {
        let big = format!("a: {}\n", "x".repeat(MAX_FRONTMATTER_BYTES));
        assert!(matches!(parse(&big), Err(YamlError::Limit(_))));
        let deep = format!("a: {}{}\n", "[".repeat(65), "]".repeat(65));
        assert!(matches!(parse(&deep), Err(YamlError::Limit(_))));
        let ok = format!("a: {}{}\n", "[".repeat(63), "]".repeat(63));
        assert!(parse(&ok).is_ok());
        let very_deep = format!("a: {}{}\n", "[".repeat(5000), "]".repeat(5000));
        assert!(matches!(parse(&very_deep), Err(YamlError::Limit(_))));
        let mut many = String::from("a: &a x\nb: [");
        for _ in 0..1001 {
            many.push_str("*a, ");
        }
        many.push_str("]\n");
        assert_eq!(parse(&many), Err(YamlError::Limit("too many aliases")));
        let mut nodes = String::from("a: [");
        for _ in 0..100_001 {
            nodes.push_str("1,");
        }
        nodes.push_str("]\n");
        assert!(matches!(parse(&nodes), Err(YamlError::Limit(_))));
    }

    #[test]
    fn rev_07_graph_faults() {
        assert_eq!(
            parse("a: &x 1\nb: &x 2\n"),
            Err(YamlError::Graph("duplicate anchor name"))
        );
        assert!(matches!(parse("a: *nope\n"), Err(YamlError::Graph(_))));
        assert!(matches!(parse("<<: 1\n"), Err(YamlError::Graph(_))));
        assert!(matches!(
            parse("b: &m [1]\n<<: *m\n"),
            Err(YamlError::Graph(_))
        ));
        assert!(matches!(
            parse("m: {<<: [{a: 1}, 2]}\n"),
            Err(YamlError::Graph(_))
        ));
        assert!(parse("b: &m {a: 1}\nc:\n  <<: *m\n  d: 2\n").is_ok());
        assert!(parse("b: &m {a: 1}\nc:\n  <<: [*m, {e: 1}]\n").is_ok());
        // A quoted `<<` is an ordinary key.
        assert!(parse("\"<<\": 1\n").is_ok());
    }

    #[test]
    fn duplicate_keys_at_every_level() {
        assert_eq!(parse("a: 1\na: 2\n"), Err(YamlError::DuplicateKey));
        assert_eq!(
            parse("g:\n  by: x\n  by: y\n"),
            Err(YamlError::DuplicateKey)
        );
        assert_eq!(parse("g: {by: x, by: y}\n"), Err(YamlError::DuplicateKey));
        assert_eq!(
            parse("s:\n  - a: 1\n    a: 2\n"),
            Err(YamlError::DuplicateKey)
        );
        assert_eq!(parse("a: 1\n\"a\": 2\n"), Err(YamlError::DuplicateKey));
        assert_eq!(
            parse("? [x]\n: 1\n? [x]\n: 2\n"),
            Err(YamlError::DuplicateKey)
        );
        assert!(parse("a: 1\nb: {a: 1}\n").is_ok());
    }

    #[test]
    fn invalid_documents() {
        assert!(matches!(parse("- a\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("just text\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("a: [\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(
            parse("a: 1\n---\nb: 2\n"),
            Err(YamlError::Invalid(_))
        ));
        assert!(matches!(parse("a: \"x\n"), Err(YamlError::Invalid(_))));
        assert!(matches!(parse("a:\n\t- b\n"), Err(YamlError::Invalid(_))));
        assert_eq!(parse("# only a comment\n").unwrap().root, None);
        assert_eq!(parse("# only a comment\n").unwrap().comments, vec![0..16]);
    }
}
