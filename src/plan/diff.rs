//! The unified diff of previews (spec/concept-patch.md §5.4, README R34).
//!
//! One file section per write, in ascending byte order of path, each exactly what `similar`
//! 3.2.1 renders for
//! `TextDiff::from_lines(old, new).unified_diff().context_radius(3).missing_newline_hint(true)
//! .header("a/<path>", "b/<path>")` (`"/dev/null"` as the old header of a new file, whose old
//! content is empty). Over [`DIFF_CAP`] bytes the diff keeps whole sections, in order, while
//! they fit and stops before the first that does not (possibly `""`). The diff is never part
//! of any digest.

use similar::TextDiff;

/// Maximum bytes of a returned diff: 1 MiB; exactly 1,048,576 bytes passes.
pub const DIFF_CAP: usize = 1_048_576;

/// One written file: `old` is `None` for a new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileChange<'a> {
    /// Bundle-relative path (spec/store.md §3.2).
    pub path: &'a str,
    /// The base content; `None` when the file is created.
    pub old: Option<&'a str>,
    /// The new content.
    pub new: &'a str,
}

/// A rendered diff and whether the size cap cut it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diff {
    /// Concatenated whole file sections (≤ [`DIFF_CAP`] bytes).
    pub text: String,
    /// `true` only when a section was left out because of the cap.
    pub truncated: bool,
}

/// The file section of one change (spec/concept-patch.md §5.4 rules 1–2). Unchanged content
/// and a new zero-byte file give `""`.
#[must_use]
pub fn file_section(change: &FileChange<'_>) -> String {
    let old_header = match change.old {
        Some(_) => format!("a/{}", change.path),
        None => "/dev/null".to_owned(),
    };
    let new_header = format!("b/{}", change.path);
    let diff = TextDiff::from_lines(change.old.unwrap_or(""), change.new);
    diff.unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header(&old_header, &new_header)
        .to_string()
}

/// Renders the diff of `changes` (any order; sorted here by path bytes) under the 1 MiB cap
/// of spec/concept-patch.md §5.4 rule 4.
#[must_use]
pub fn render(changes: &[FileChange<'_>]) -> Diff {
    let mut sorted: Vec<&FileChange<'_>> = changes.iter().collect();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let sections: Vec<String> = sorted.iter().map(|c| file_section(c)).collect();
    assemble(&sections)
}

/// Concatenates rendered sections under the cap: complete when the total is at most
/// [`DIFF_CAP`]; otherwise the longest prefix of whole sections that fits, `truncated: true`.
#[must_use]
pub fn assemble(sections: &[String]) -> Diff {
    assemble_within(sections, DIFF_CAP)
}

/// [`assemble`] under a cap of `cap` bytes instead of [`DIFF_CAP`] (the migration's
/// `diff_bytes`, spec/migration.md §12.7 rule 1).
#[must_use]
pub fn assemble_within(sections: &[String], cap: usize) -> Diff {
    let total: usize = sections.iter().map(String::len).sum();
    if total <= cap {
        return Diff {
            text: sections.concat(),
            truncated: false,
        };
    }
    let mut text = String::new();
    for s in sections {
        if text.len() + s.len() > cap {
            break;
        }
        text.push_str(s);
    }
    Diff {
        text,
        truncated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upd<'a>(path: &'a str, old: &'a str, new: &'a str) -> FileChange<'a> {
        FileChange {
            path,
            old: Some(old),
            new,
        }
    }

    #[test]
    fn dif_01_update_has_headers_and_three_lines_of_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = render(&[upd("x/p.md", old, new)]);
        assert!(!d.truncated);
        assert_eq!(
            d.text,
            "--- a/x/p.md\n+++ b/x/p.md\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn dif_01_two_distant_changes_give_two_hunks() {
        let old: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l2\n", "L2\n").replace("l18\n", "L18\n");
        let d = render(&[upd("p.md", &old, &new)]);
        assert_eq!(d.text.matches("@@ -").count(), 2, "{}", d.text);
        assert!(d.text.contains("@@ -1,5 +1,5 @@\n"), "{}", d.text);
        assert!(d.text.contains("@@ -15,6 +15,6 @@\n"), "{}", d.text);
    }

    #[test]
    fn dif_01_new_file_uses_dev_null_and_minus_zero_range() {
        let d = render(&[FileChange {
            path: "assets/a.txt",
            old: None,
            new: "one\ntwo\n",
        }]);
        assert_eq!(
            d.text,
            "--- /dev/null\n+++ b/assets/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        );
        // A new zero-byte file has an empty section.
        let e = render(&[FileChange {
            path: "e.txt",
            old: None,
            new: "",
        }]);
        assert_eq!(e.text, "");
        assert!(!e.truncated);
    }

    #[test]
    fn dif_01_missing_final_newline_hint() {
        let d = render(&[upd("p.md", "a\nb", "a\nc")]);
        assert_eq!(
            d.text,
            "--- a/p.md\n+++ b/p.md\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn dif_01_crlf_lines_keep_their_carriage_return() {
        let d = render(&[upd("p.md", "a\r\nb\r\n", "a\r\nc\r\n")]);
        assert!(d.text.contains("-b\r\n+c\r\n"), "{:?}", d.text);
    }

    #[test]
    fn dif_01_several_files_in_path_order() {
        let d = render(&[
            upd("b.md", "1\n", "2\n"),
            upd("a/z.md", "1\n", "2\n"),
            upd("B.md", "1\n", "2\n"),
        ]);
        let a = d.text.find("--- a/a/z.md").unwrap();
        let b_upper = d.text.find("--- a/B.md").unwrap();
        let b = d.text.find("--- a/b.md").unwrap();
        // Byte order: "B" (0x42) < "a" (0x61) < "b" (0x62).
        assert!(b_upper < a && a < b, "{}", d.text);
        // Byte-equal to similar's own rendering, concatenated.
        let expect = file_section(&upd("B.md", "1\n", "2\n"))
            + &file_section(&upd("a/z.md", "1\n", "2\n"))
            + &file_section(&upd("b.md", "1\n", "2\n"));
        assert_eq!(d.text, expect);
    }

    /// A section of exactly `n` bytes for path `p` (a one-line replacement with padding).
    fn section_of(path: &str, n: usize) -> (String, String, String) {
        let old = "x\n".to_owned();
        let base = file_section(&upd(path, &old, "\n"));
        // `+<pad>\n` adds pad.len() bytes over the "+\n" line of `base`.
        let pad = "y".repeat(n - base.len());
        let new = format!("{pad}\n");
        let s = file_section(&upd(path, &old, &new));
        assert_eq!(s.len(), n);
        (path.to_owned(), old, new)
    }

    #[test]
    fn dif_02_exactly_one_mib_passes_one_more_byte_truncates() {
        let (p1, o1, n1) = section_of("a.md", 1000);
        let (p2, o2, n2) = section_of("b.md", DIFF_CAP - 1000);
        let d = render(&[upd(&p1, &o1, &n1), upd(&p2, &o2, &n2)]);
        assert_eq!(d.text.len(), DIFF_CAP);
        assert!(!d.truncated);

        let (p2, o2, n2) = section_of("b.md", DIFF_CAP - 999);
        let d = render(&[upd(&p1, &o1, &n1), upd(&p2, &o2, &n2)]);
        assert!(d.truncated);
        // Only the whole first section is kept; the second is never cut.
        assert_eq!(d.text, file_section(&upd(&p1, &o1, &n1)));
        assert_eq!(d.text.len(), 1000);
    }

    #[test]
    fn dif_02_later_sections_that_fit_are_not_taken_after_the_first_misfit() {
        let sections = vec!["a".repeat(10), "b".repeat(DIFF_CAP), "c".repeat(5)];
        let d = assemble(&sections);
        assert!(d.truncated);
        assert_eq!(d.text, "a".repeat(10));
    }

    #[test]
    fn dif_02_single_section_over_one_mib_gives_empty_diff() {
        let (p, o, n) = section_of("big.md", DIFF_CAP + 1);
        let d = render(&[upd(&p, &o, &n)]);
        assert_eq!(d.text, "");
        assert!(d.truncated);
    }
}
