//! The temporal kinds a bundle shows (spec/temporal.md §11 rule 1): which of calendar dates
//! (§2.3) and offset datetimes (§2.1) its concepts hold in the three temporal families of §3
//! (`stale_after`, `usage_window.*`, `sources[].last_modified`, `sources[].usage_window.*`).
//! `generated.at` and `verified[].at` never count; YAML null counts as absent; a value that is
//! neither kind is ignored; a concept whose frontmatter does not parse adds nothing.
//!
//! Pure. A concept's kinds are a function of its bytes and are remembered by digest
//! ([`memo::kinds`]), so `auto` resolves without parsing an unchanged document again, also on
//! a spilled capture (docs/store.md §3.2) whose spill visit remembered them.

use crate::okf::bundle::parse_document;
use crate::okf::capture::{Capture, CapturedFile};
use crate::okf::grammar::{classify, DocClass};
use crate::okf::memo;
use crate::okf::project::field;
use crate::okf::temporal::Kinds;
use crate::okf::yaml::Node;

/// The kinds of the temporal values of one concept frontmatter `root`.
#[must_use]
pub fn doc_kinds(root: Option<&Node>) -> Kinds {
    let mut k = Kinds::default();
    let mut scalar = |n: Option<&Node>| {
        if let Some(s) = n.filter(|n| !n.is_null()).and_then(Node::as_str) {
            k.observe(s);
        }
    };
    scalar(field(root, "stale_after"));
    for end in window(field(root, "usage_window")) {
        scalar(end);
    }
    if let Some(items) = field(root, "sources").and_then(Node::items) {
        for item in items.iter().map(Node::deref_alias) {
            if item.entries().is_none() {
                continue;
            }
            scalar(item.get("last_modified"));
            for end in window(item.get("usage_window")) {
                scalar(end);
            }
        }
    }
    k
}

/// The two ends of a `usage_window` mapping (none when it is not a mapping).
fn window(n: Option<&Node>) -> [Option<&Node>; 2] {
    match n.filter(|n| n.entries().is_some()) {
        Some(w) => [w.get("from"), w.get("to")],
        None => [None, None],
    }
}

/// The kinds of one concept file's bytes: `None` when its frontmatter does not parse at all
/// (a YAML limit or graph fault, which fails the tool elsewhere).
fn file_kinds(bytes: &[u8]) -> Option<Kinds> {
    match parse_document(bytes) {
        Ok(Ok(p)) => Some(doc_kinds(p.root())),
        Ok(Err(_)) => Some(Kinds::default()),
        Err(_) => None,
    }
}

/// Remembers the kinds of a concept document parsed elsewhere (the spill visit), so that
/// [`capture_kinds`] finds them.
pub fn remember(digest: &[u8; 32], root: Option<&Node>) {
    memo::remember_kinds(digest, doc_kinds(root));
}

/// The kinds of every concept of `capture` (spec/temporal.md §11 rule 1), from the memo where
/// known, else parsed from the resident bytes (and remembered).
///
/// A spilled concept whose kinds the memo no longer knows is read through
/// [`CapturedFile::bytes`], which marks the capture as missed ([`Capture::missed`]): a caller
/// on a spilled capture then starts over on a resident one, as for any other missed read.
#[must_use]
pub fn capture_kinds(capture: &Capture) -> Kinds {
    let concepts: Vec<&CapturedFile> = capture
        .files
        .iter()
        .filter(|f| matches!(classify(&f.path), DocClass::Concept(_)))
        .collect();
    let mut total = Kinds::default();
    let mut todo: Vec<&CapturedFile> = Vec::new();
    for f in concepts {
        match memo::kinds(&f.digest) {
            Some(k) => total = total.union(k),
            None => todo.push(f),
        }
    }
    let fresh = crate::okf::par::map(&todo, |f| {
        if f.is_resident() {
            file_kinds(f.bytes())
        } else {
            // Marks the capture as missed; nothing is learned from absent bytes.
            let _ = f.bytes();
            None
        }
    });
    for (f, k) in todo.iter().zip(fresh) {
        if let Some(k) = k {
            memo::remember_kinds(&f.digest, k);
            total = total.union(k);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_of(files: &[(&str, &str)]) -> Kinds {
        let c = Capture::from_files(
            files
                .iter()
                .map(|(p, b)| ((*p).to_owned(), b.as_bytes().to_vec())),
        );
        memo::bypassed(|| capture_kinds(&c))
    }

    #[test]
    fn the_three_families_count_and_nothing_else() {
        let date = Kinds {
            date: true,
            instant: false,
        };
        let instant = Kinds {
            date: false,
            instant: true,
        };
        assert_eq!(
            kinds_of(&[("a.md", "---\nstale_after: 2026-01-02\n---\n")]),
            date
        );
        assert_eq!(
            kinds_of(&[("a.md", "---\nusage_window:\n  from: 2026-01-02T00:00:00Z\n  to: 2026-01-03T00:00:00Z\n---\n")]),
            instant
        );
        assert_eq!(
            kinds_of(&[("a.md", "---\nsources:\n  - resource: r\n    last_modified: 2026-01-02\n  - resource: s\n    usage_window: {from: 2026-01-02T00:00:00Z, to: 2026-01-02T00:00:00Z}\n---\n")]),
            Kinds { date: true, instant: true }
        );
        // generated.at, verified[].at, nulls, junk, other keys, reserved documents: nothing.
        assert_eq!(
            kinds_of(&[
                ("a.md", "---\ngenerated: {by: x, at: 2026-01-02T00:00:00Z}\nverified: [{by: human:a, at: 2026-01-02T00:00:00Z}]\nstale_after: ~\nx-when: 2026-01-02\n---\n"),
                ("b.md", "---\nstale_after: soon\nsources: [{resource: r, last_modified: 2026-02-30}]\n---\n"),
                ("index.md", "---\nstale_after: 2026-01-02\n---\n"),
                ("c.md", "---\n: [\n---\n"),
            ]),
            Kinds::default()
        );
    }
}
