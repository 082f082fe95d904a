//! The shape of this test crate (issue 22 item 6), checked on the real files under
//! `tests/it/`:
//! - every `.rs` file is reached by a `mod` declaration from `main.rs` (following `mod x;` to
//!   `x.rs` or `x/mod.rs`, inline `mod x { … }` blocks and `#[path = "…"]`), so no test file
//!   sits there without ever being compiled;
//! - no file imports another test file: the only `crate::` paths (imports and inline paths,
//!   comments and string literals excluded) name `crate::support`, and `super::` appears only
//!   inside a file's own inline modules (where it names the file itself).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `text` with comments and the contents of string, byte-string, raw-string and char
/// literals replaced by spaces (newlines kept), so byte offsets and line numbers still match
/// the original. The quotes of a literal stay, so `#[path = "…"]` can be read back from the
/// original text at the same offsets.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let prev_ident = i > 0 && ident(b[i - 1]);
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < b.len() && depth > 0 {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (c == b'r' || (c == b'b' && b.get(i + 1) == Some(&b'r'))) && !prev_ident && {
            // A raw string: r"…", r#"…"#, br"…".
            let mut j = i + if c == b'b' { 2 } else { 1 };
            while b.get(j) == Some(&b'#') {
                j += 1;
            }
            b.get(j) == Some(&b'"')
        } {
            let mut j = i + if c == b'b' { 2 } else { 1 };
            let hashes = b[j..].iter().take_while(|&&x| x == b'#').count();
            j += hashes + 1;
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let end = text[j..].find(&close).map_or(b.len(), |n| j + n);
            blank(&mut out, j, end);
            i = (end + close.len()).min(b.len());
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = j.min(b.len());
            blank(&mut out, i + 1, end);
            i = end + 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\'', '"') or a lifetime ('a, left as it is).
            if b.get(i + 1) == Some(&b'\\') {
                let mut j = i + 3;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                blank(&mut out, i + 1, j);
                i = j + 1;
            } else if let Some(ch) = text[i + 1..].chars().next() {
                let after = i + 1 + ch.len_utf8();
                if b.get(after) == Some(&b'\'') {
                    blank(&mut out, i + 1, after);
                    i = after + 1;
                } else {
                    i += 1;
                }
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 (only ASCII spaces replace bytes)")
}

/// One `mod` item of a file: its name, the inline modules around it, its `#[path]`, and
/// whether it is a declaration (`mod x;`) rather than an inline block.
#[derive(Debug)]
struct ModItem {
    name: String,
    inline: Vec<String>,
    path: Option<String>,
    declaration: bool,
    line: usize,
}

/// A cross-file path of a file: its line and the offending path.
#[derive(Debug)]
struct Escape {
    line: usize,
    what: String,
}

/// The `mod` items of `text` and the paths that leave the file for another test file.
fn scan(text: &str) -> (Vec<ModItem>, Vec<Escape>) {
    let code = code_only(text);
    let b = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let word_at = |i: usize| -> &str {
        let end = b[i..]
            .iter()
            .position(|&c| !ident(c))
            .map_or(b.len(), |n| i + n);
        &code[i..end]
    };
    let line_of = |i: usize| code[..i].matches('\n').count() + 1;
    let skip_ws = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let (mut mods, mut escapes) = (Vec::new(), Vec::new());
    // The inline modules around the cursor, with the brace depth each one opened at.
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_path: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == b'}' {
            depth = depth.saturating_sub(1);
            if stack.last().is_some_and(|(_, d)| *d == depth) {
                stack.pop();
            }
            i += 1;
            continue;
        }
        if !ident(c) || (i > 0 && (ident(b[i - 1]) || b[i - 1] == b'$')) {
            i += 1;
            continue;
        }
        let word = word_at(i);
        let next = i + word.len();
        match word {
            "path" if i >= 2 && code[..i].trim_end().ends_with("#[") => {
                // `#[path = "…"]`: the literal's contents, read from the original text.
                let q = code[next..].find('"').map(|n| next + n);
                if let Some(q) = q {
                    let end = code[q + 1..].find('"').map_or(b.len(), |n| q + 1 + n);
                    pending_path = Some(text[q + 1..end].to_owned());
                }
            }
            "mod" => {
                let n = skip_ws(next);
                let name = word_at(n).to_owned();
                let after = skip_ws(n + name.len());
                if !name.is_empty() {
                    let inline: Vec<String> = stack.iter().map(|(m, _)| m.clone()).collect();
                    let declaration = b.get(after) == Some(&b';');
                    mods.push(ModItem {
                        name: name.clone(),
                        inline,
                        path: pending_path.take(),
                        declaration,
                        line: line_of(i),
                    });
                    if b.get(after) == Some(&b'{') {
                        stack.push((name, depth));
                    }
                }
            }
            "crate" if code[next..].starts_with("::") => {
                let n = next + 2;
                let target = word_at(n);
                if target != "support" {
                    let shown = if target.is_empty() {
                        format!("crate::{}", code[n..].chars().next().unwrap_or(' '))
                    } else {
                        format!("crate::{target}")
                    };
                    escapes.push(Escape {
                        line: line_of(i),
                        what: shown,
                    });
                }
            }
            "super" if code[next..].starts_with("::") => {
                let beyond = code[next + 2..].trim_start().starts_with("super");
                if stack.is_empty() || beyond {
                    escapes.push(Escape {
                        line: line_of(i),
                        what: if beyond {
                            "super::super".to_owned()
                        } else {
                            "super:: outside an inline module".to_owned()
                        },
                    });
                }
            }
            _ => {}
        }
        i = next;
    }
    (mods, escapes)
}

/// The problems of the crate whose files are `files` (`tests/it`-relative path with `/`,
/// text): files no `mod` declaration from `main.rs` reaches, declarations whose file is
/// missing, and paths from one file into another test file.
fn problems(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut reached = BTreeSet::new();
    // (file, whether its children sit beside it: `main.rs`, `mod.rs` and `#[path]` files).
    let mut queue = vec![("main.rs".to_owned(), true)];
    while let Some((file, mod_rs)) = queue.pop() {
        let Some(text) = files.get(&file) else {
            continue;
        };
        if !reached.insert(file.clone()) {
            continue;
        }
        let (dir, stem) = match file.rsplit_once('/') {
            Some((d, f)) => (format!("{d}/"), f),
            None => (String::new(), file.as_str()),
        };
        // The directory of this module's children (`a/b.rs` → `a/b/`).
        let module_dir = if mod_rs {
            dir.clone()
        } else {
            format!("{dir}{}/", stem.trim_end_matches(".rs"))
        };
        let (mods, escapes) = scan(text);
        for m in mods.into_iter().filter(|m| m.declaration) {
            let base = if m.inline.is_empty() && m.path.is_some() {
                dir.clone()
            } else {
                let mut d = module_dir.clone();
                for name in &m.inline {
                    d.push_str(name);
                    d.push('/');
                }
                d
            };
            let candidates = match &m.path {
                Some(p) => vec![(normalise(&format!("{base}{p}")), true)],
                None => vec![
                    (format!("{base}{}.rs", m.name), false),
                    (format!("{base}{}/mod.rs", m.name), true),
                ],
            };
            let found: Vec<&(String, bool)> = candidates
                .iter()
                .filter(|(c, _)| files.contains_key(c))
                .collect();
            let names: Vec<&str> = candidates.iter().map(|(c, _)| c.as_str()).collect();
            match found.as_slice() {
                [one] => queue.push((*one).clone()),
                [] => out.push(format!(
                    "{file}:{}: `mod {}` has no file ({})",
                    m.line,
                    m.name,
                    names.join(" or ")
                )),
                _ => out.push(format!(
                    "{file}:{}: `mod {}` is ambiguous: both {}",
                    m.line,
                    m.name,
                    names.join(" and ")
                )),
            }
        }
        for e in escapes {
            out.push(format!(
                "{file}:{}: {} (a test file may use only crate::support::…)",
                e.line, e.what
            ));
        }
    }
    for f in files.keys().filter(|f| !reached.contains(*f)) {
        out.push(format!(
            "{f}: not reached by any `mod` declaration from main.rs (never compiled)"
        ));
    }
    out.sort();
    out
}

/// `a/./b/../c` → `a/c`.
fn normalise(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            x => parts.push(x),
        }
    }
    parts.join("/")
}

/// Every `.rs` file under `dir` (recursively), keyed by its `base`-relative path with `/`.
fn read_rs(dir: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            read_rs(&p, base, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p
                .strip_prefix(base)
                .expect("under tests/it")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = std::fs::read_to_string(&p).expect("utf-8 source");
            out.insert(rel, text);
        }
    }
}

#[test]
fn guard_every_test_file_is_linked_from_main_and_imports_only_support() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut files = BTreeMap::new();
    read_rs(&dir, &dir, &mut files);
    for must in ["main.rs", "guard.rs", "support/mod.rs", "support/util.rs"] {
        assert!(
            files.contains_key(must),
            "tests/it/{must} not found: the guard read the wrong tree"
        );
    }
    let bad = problems(&files);
    assert!(
        bad.is_empty(),
        "the shape of tests/it (see tests/it/guard.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn guard_reports_unlinked_files_missing_modules_and_cross_file_paths() {
    let f = |v: &[(&str, &str)]| -> BTreeMap<String, String> {
        v.iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect()
    };
    // A clean crate: declarations, `x/mod.rs`, `#[path]`, inline modules with `super::`,
    // `crate::` only in comments and literals.
    let clean = f(&[
        (
            "main.rs",
            "mod support;\n#[cfg(feature = \"x\")]\nmod a;\n#[path = \"other/b_file.rs\"]\nmod b;\n",
        ),
        ("support/mod.rs", "pub mod util;\n"),
        ("support/util.rs", "pub fn f() {}\n"),
        (
            "a.rs",
            "use crate::support::util::f;\n// use crate::b::x;\nconst S: &str = \"crate::b\";\nconst R: &str = r#\"use crate::b::y;\"#;\nconst C: char = '\"';\nfn g<'a>(x: &'a str) -> &'a str { x }\nmod inner {\n    use super::*;\n    #[test]\n    fn t() { f() }\n}\n",
        ),
        // A `#[path]` file's children sit beside it, as beside a `mod.rs`.
        ("other/b_file.rs", "mod nested;\n"),
        ("other/nested.rs", "fn h() { crate::support::util::f() }\n"),
    ]);
    assert_eq!(problems(&clean), Vec::<String>::new());

    let bad = f(&[
        ("main.rs", "mod support;\nmod a;\nmod gone;\n"),
        ("support/mod.rs", ""),
        (
            "a.rs",
            "use crate::b::x;\nfn g() { crate::util::y(); }\nuse super::c;\nuse crate::{support, b};\nmod m {\n    use super::super::b;\n}\n",
        ),
        ("b.rs", "fn x() {}\n"),
        ("deep/c.rs", "fn c() {}\n"),
    ]);
    assert_eq!(
        problems(&bad),
        [
            "a.rs:1: crate::b (a test file may use only crate::support::…)",
            "a.rs:2: crate::util (a test file may use only crate::support::…)",
            "a.rs:3: super:: outside an inline module (a test file may use only crate::support::…)",
            "a.rs:4: crate::{ (a test file may use only crate::support::…)",
            "a.rs:6: super::super (a test file may use only crate::support::…)",
            "b.rs: not reached by any `mod` declaration from main.rs (never compiled)",
            "deep/c.rs: not reached by any `mod` declaration from main.rs (never compiled)",
            "main.rs:3: `mod gone` has no file (gone.rs or gone/mod.rs)",
        ]
    );
}
