//! Issue 23 item 5, spec/surface.md §14.6 rule 1: Python checks `view::terms::fold` and
//! `view::terms::is_term_char` on every code point (`tests/tools/terms_oracle.py` prints
//! Python's answers in one run; this file compares them).
//!
//! Two oracles:
//! - **the standard library**, the rule's own words: `unicodedata.normalize("NFC",
//!   unicodedata.normalize("NFC", c).casefold())` and `unicodedata.category(c)`. Python's
//!   `unicodedata` is older than the Unicode 18.0.0 of the Rust data (14.0.0 in Python 3.11),
//!   so one exclusion is made, mechanically: the code points that are unassigned (`Cn`) in
//!   Python's database (829,834 in 14.0.0). Python folds such a code point to itself and calls
//!   it no term character, whatever a later version assigned there. Every other code point is
//!   compared with no exception: normalization and case folding are stable for assigned
//!   characters, and the two categories that moved between 14.0.0 and 18.0.0 stayed in their
//!   letter or mark class (U+0295 Ll → Lo, U+1171E Mn → Mc: found by comparing both oracles'
//!   output), so they still agree on term characters.
//! - **Unicode 18.0.0**, the version of the Rust data, with no exclusion: `unicodedata2`
//!   18.0.0 (PyPI, installed by `.ci/run` into `target/terms-venv`) for NFC and the categories,
//!   and the `C` + `F` mappings of `tests/unicode/CaseFolding-18.0.0.txt` (the Unicode
//!   Character Database file, as shipped in the `focaccia` 2.6.0 crate) for the folding. This
//!   covers the code points the first oracle leaves out.

use std::path::Path;
use std::process::Command;

use okf_mcp::view::terms::{fold, is_term_char, UNICODE_VERSION};

/// Runs the oracle script with `python` and `args`; its stdout.
fn oracle(python: &Path, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/terms_oracle.py");
    let out = Command::new(python)
        .arg(&script)
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{} {} {args:?}: {}",
        python.display(),
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the oracle prints UTF-8")
}

/// Compares the oracle's `text` with `fold` and `is_term_char`, skipping the code points whose
/// category is in `excluded`. Returns `(version line, compared, skipped)`; panics listing the
/// disagreements.
fn compare(text: &str, excluded: &[&str]) -> (String, u32, u32) {
    let mut lines = text.lines();
    let version = lines.next().unwrap_or_default().to_owned();
    let (mut compared, mut skipped) = (0u32, 0u32);
    let mut wrong = Vec::new();
    for line in lines {
        let mut fields = line.split(' ');
        let (Some(cp), Some(cat), Some(py_fold), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            panic!("malformed oracle line {line:?}");
        };
        let cp = u32::from_str_radix(cp, 16).expect("hex code point");
        let c = char::from_u32(cp).expect("no surrogates in the oracle's output");
        if excluded.contains(&cat) {
            skipped += 1;
            continue;
        }
        compared += 1;
        let py_fold: String = if py_fold == "=" {
            c.to_string()
        } else {
            py_fold
                .split(',')
                .map(|h| char::from_u32(u32::from_str_radix(h, 16).expect("hex")).expect("a char"))
                .collect()
        };
        let py_term = matches!(cat.as_bytes().first(), Some(b'L' | b'M' | b'N'));
        let ours = fold(&c.to_string());
        if ours != py_fold || is_term_char(c) != py_term {
            wrong.push(format!(
                "U+{cp:04X} {cat}: fold {ours:?} (Python {py_fold:?}), term char {} (Python {py_term})",
                is_term_char(c)
            ));
        }
    }
    assert_eq!(
        compared + skipped,
        0x11_0000 - 0x800,
        "the oracle covers every code point but the surrogates"
    );
    assert!(
        wrong.is_empty(),
        "{version}: {} code points disagree with Python, e.g.:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(40)].join("\n")
    );
    (version, compared, skipped)
}

#[test]
fn fold_and_term_chars_agree_with_python_stdlib_on_every_assigned_code_point() {
    let text = oracle(Path::new("python3"), &[]);
    let (version, compared, skipped) = compare(&text, &["Cn"]);
    eprintln!(
        "{version}: {compared} code points compared, {skipped} unassigned in Python left out"
    );
    assert!(compared > 280_000, "{compared} code points compared");
}

#[test]
fn fold_and_term_chars_agree_with_unicode_18_on_every_code_point() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/terms-venv/bin/python");
    assert!(
        python.exists(),
        "unicodedata2 is missing: run `bash .ci/run` (it creates target/terms-venv)"
    );
    let case_folding = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!(
            "tests/unicode/CaseFolding-{}.{}.{}.txt",
            UNICODE_VERSION.0, UNICODE_VERSION.1, UNICODE_VERSION.2
        ))
        .display()
        .to_string();
    let text = oracle(&python, &["--unicode18", &case_folding]);
    let (version, compared, skipped) = compare(&text, &[]);
    assert_eq!(version, "# unicode 18.0.0");
    assert_eq!(skipped, 0);
    eprintln!("{version}: {compared} code points compared");
}
