//! The lossless YAML editor (spec/concept-patch.md §4): random operations on a random
//! frontmatter either re-parse (with the full parser, independently of the editor's own
//! post-check) to the intended semantic value with every byte outside the returned edits
//! unchanged, or are refused with the text left as it was.
//!
//! Input: `<program>\0<frontmatter text>`. The program bytes choose up to 8 operations
//! (set / remove / remove item / append item), their paths into existing keys, their keys
//! and their values; the text after the first NUL is the frontmatter (seeds: the frontmatter
//! of fixture and corpus documents).
#![no_main]

use libfuzzer_sys::fuzz_target;
use okf_mcp::okf::yaml::{self, Value};
use okf_mcp::plan::edit::{
    apply_edits, model_append_item, model_remove, model_remove_item, model_set, Edit, Frontmatter,
    NewValue, Scalar, Seg,
};

/// Reads the program one byte at a time; 0 once exhausted.
struct Program<'a>(&'a [u8]);

impl Program<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn word(&mut self) -> String {
        const WORDS: [&str; 16] = [
            "type",
            "title",
            "sources",
            "generated",
            "by",
            "at",
            "id",
            "resource",
            "tags",
            "x-ext",
            "stale_after",
            "k",
            "a b",
            "",
            "é",
            "#",
        ];
        let b = self.byte();
        if b < 200 {
            WORDS[usize::from(b) % WORDS.len()].to_owned()
        } else {
            // A short arbitrary string from the next bytes.
            let n = usize::from(self.byte() % 6);
            (0..n).map(|_| char::from(self.byte() % 95 + 32)).collect()
        }
    }
    fn value(&mut self, depth: u8) -> NewValue {
        let pick = self.byte() % if depth >= 2 { 3 } else { 7 };
        let items = |p: &mut Self| usize::from(p.byte() % 3);
        match pick {
            0 => NewValue::Scalar(Scalar::Str(self.word())),
            1 => NewValue::Scalar(Scalar::Plain(
                [
                    "2026-01-02",
                    "12",
                    "true",
                    "x",
                    "2026-01-02T03:04:05Z",
                    "a b",
                    "",
                ][usize::from(self.byte() % 7)]
                .to_owned(),
            )),
            2 if self.byte() & 1 == 0 => NewValue::Scalar(Scalar::Quoted(self.word())),
            2 => NewValue::Scalar(Scalar::SingleQuoted(self.word())),
            3 => {
                let n = items(self);
                NewValue::FlowMap(
                    (0..n)
                        .map(|_| (self.word(), self.value(depth + 1)))
                        .collect(),
                )
            }
            4 => {
                let n = items(self);
                NewValue::FlowSeq((0..n).map(|_| self.value(depth + 1)).collect())
            }
            5 => {
                let n = items(self);
                NewValue::BlockMap(
                    (0..n)
                        .map(|_| (self.word(), self.value(depth + 1)))
                        .collect(),
                )
            }
            _ => {
                let n = items(self);
                NewValue::BlockSeq((0..n).map(|_| self.value(depth + 1)).collect())
            }
        }
    }
}

/// A path of up to two steps into the current value, following existing keys and indexes.
fn path(p: &mut Program<'_>, v: &Value) -> Vec<PathStep> {
    let mut out = Vec::new();
    let mut cur = v;
    for _ in 0..usize::from(p.byte() % 3) {
        match cur {
            Value::Map(entries) if !entries.is_empty() => {
                let (k, next) = &entries[usize::from(p.byte()) % entries.len()];
                let Some(k) = k.key_text() else { break };
                out.push(PathStep::Key(k.to_owned()));
                cur = next;
            }
            Value::Seq(items) if !items.is_empty() => {
                let i = usize::from(p.byte()) % items.len();
                out.push(PathStep::Index(i));
                cur = &items[i];
            }
            _ => break,
        }
    }
    out
}

enum PathStep {
    Key(String),
    Index(usize),
}

fn segs(steps: &[PathStep]) -> Vec<Seg<'_>> {
    steps
        .iter()
        .map(|s| match s {
            PathStep::Key(k) => Seg::Key(k),
            PathStep::Index(i) => Seg::Index(*i),
        })
        .collect()
}

/// `before` with `edits` applied is `after`, and the edits lie on `before`'s char boundaries
/// and do not overlap: every byte outside them is unchanged.
fn check_splices(before: &str, edits: &[Edit], after: &str) {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut end = 0;
    for e in &sorted {
        assert!(e.range.start >= end, "overlapping edits");
        assert!(e.range.start <= e.range.end && e.range.end <= before.len());
        assert!(before.is_char_boundary(e.range.start) && before.is_char_boundary(e.range.end));
        end = e.range.end;
    }
    let mut rebuilt = String::new();
    let mut at = 0;
    for e in &sorted {
        rebuilt.push_str(&before[at..e.range.start]);
        rebuilt.push_str(&e.replacement);
        at = e.range.end;
    }
    rebuilt.push_str(&before[at..]);
    assert_eq!(rebuilt, after, "bytes outside the edits changed");
    assert_eq!(apply_edits(before, edits).as_deref(), Ok(after));
}

fuzz_target!(|data: &[u8]| {
    let Some(nul) = data.iter().position(|b| *b == 0) else {
        return;
    };
    let (program, text) = (&data[..nul], &data[nul + 1..]);
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let crlf = text.contains("\r\n");
    let Ok(mut f) = Frontmatter::parse(text, crlf) else {
        return;
    };
    let mut p = Program(program);
    for _ in 0..8 {
        if p.0.is_empty() {
            break;
        }
        let before = f.text().to_owned();
        let before_value = f.value();
        let steps = path(&mut p, &before_value);
        let at = segs(&steps);
        let mut expected = before_value.clone();
        let result = match p.byte() % 4 {
            0 => {
                let key = p.word();
                let v = p.value(0);
                model_set(&mut expected, &at, &key, v.to_value());
                f.set(&at, &key, &v)
            }
            1 => {
                let key = p.word();
                model_remove(&mut expected, &at, &key);
                f.remove(&at, &key)
            }
            2 => {
                let i = usize::from(p.byte() % 4);
                model_remove_item(&mut expected, &at, i);
                f.remove_item(&at, i)
            }
            _ => {
                let v = p.value(0);
                model_append_item(&mut expected, &at, v.to_value());
                f.append_item(&at, &v)
            }
        };
        match result {
            Ok(edits) => {
                let after = f.text().to_owned();
                check_splices(&before, &edits, &after);
                let reparsed = yaml::parse_full(&after).expect("an accepted edit re-parses");
                assert_eq!(reparsed.value(), expected, "the edit's semantic intent");
                assert_eq!(f.value(), expected);
            }
            Err(_) => {
                assert_eq!(f.text(), before, "a refused edit leaves the text unchanged");
            }
        }
    }
});
