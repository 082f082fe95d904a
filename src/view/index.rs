//! The warm section index of a long-running server (spec/store.md §17 rule 1, spec/surface.md
//! §14.6 rule 10): per concept document, its sections ([`sections::sections`]) with their
//! token counts and the count of every distinct term in their heading and body, and its
//! title's counts. [`rank::rank`] over indexed documents looks the query terms up instead of
//! splitting the text again; the counts are those the splitter gives, so every hit, score and
//! total is the one of an unindexed search (a test compares them).
//!
//! Per document, never per bundle: an index is a pure function of the document's id and text
//! (its body range and title come from the same bytes), so it is kept by the content digest
//! and the id, and a changed file costs one new index ([`IndexMemo`]). Memory: about 12 bytes
//! per distinct term of a section plus the document's vocabulary; bounded by
//! [`MAX_INDEX_BYTES`]. Pure apart from the memo's own table.
//!
//! [`rank::rank`]: crate::view::rank::rank

use crate::view::memo::{Cost, DocKey, Memo};
use crate::view::rank::SearchDoc;
use crate::view::sections::{self, Counts, Section};
use crate::view::terms::TermSplitter;
use std::collections::HashMap;

/// The most bytes (estimated) the memo's indexes hold: 128 MiB.
pub const MAX_INDEX_BYTES: usize = 128 * 1024 * 1024;

/// Documents larger than this (1 MiB) are never indexed: they are searched by splitting their
/// text, so one index's size, and the memory of building it, stay bounded.
pub const MAX_INDEXED_DOC_BYTES: usize = 1024 * 1024;

/// The index of one concept document.
#[derive(Debug)]
pub struct DocIndex {
    /// The body's byte range in the document's text, and its non-empty `title` (see
    /// [`SearchDoc`]).
    body: std::ops::Range<usize>,
    title_field: Option<Box<str>>,
    /// The document's distinct terms (title, headings and bodies), ascending by bytes, as one
    /// string cut at `ends`.
    vocabulary: Box<str>,
    ends: Box<[u32]>,
    /// The title's tokens and `(term, count)` ascending by term.
    title_len: u64,
    title: Box<[(u32, u32)]>,
    /// The sections whose own text holds a term (spec/surface.md §14.6 rule 3), in order.
    sections: Box<[SectionIndex]>,
}

/// One section of a [`DocIndex`].
#[derive(Debug)]
pub struct SectionIndex {
    section: Section,
    heading_len: u64,
    body_len: u64,
    /// `(term, count in the heading, count in the body)` ascending by term.
    terms: Box<[(u32, u32, u32)]>,
}

impl SectionIndex {
    /// The section.
    #[must_use]
    pub fn section(&self) -> &Section {
        &self.section
    }

    /// Tokens of the heading.
    #[must_use]
    pub fn heading_len(&self) -> u64 {
        self.heading_len
    }

    /// Tokens of the body.
    #[must_use]
    pub fn body_len(&self) -> u64 {
        self.body_len
    }

    /// `(count in the heading, count in the body)` of the document's term `id` (see
    /// [`DocIndex::query_ids`]).
    #[must_use]
    pub fn counts(&self, id: u32) -> (u64, u64) {
        self.terms
            .binary_search_by_key(&id, |e| e.0)
            .ok()
            .and_then(|i| self.terms.get(i))
            .map_or((0, 0), |&(_, h, b)| (u64::from(h), u64::from(b)))
    }
}

impl DocIndex {
    /// Splits `doc` into its sections and counts their terms (the work of one unindexed
    /// search of the document).
    #[must_use]
    pub fn build(doc: &SearchDoc<'_>) -> Self {
        let mut splitter = TermSplitter::new();
        let mut ids: HashMap<String, u32, foldhash::fast::RandomState> = HashMap::default();
        // The term ids of `text` in text order; appends to `out`.
        let mut cut = |splitter: &mut TermSplitter, text: &str, out: &mut Vec<u32>| {
            splitter.for_each_term(text, |t| {
                let id = match ids.get(t) {
                    Some(&k) => k,
                    None => {
                        let k = u32::try_from(ids.len()).unwrap_or(u32::MAX);
                        ids.insert(t.to_owned(), k);
                        k
                    }
                };
                out.push(id);
            });
        };
        let (mut heading, mut body) = (Vec::new(), Vec::new());
        cut(&mut splitter, doc.title_text(), &mut heading);
        let title_len = heading.len() as u64;
        let mut title_ids = std::mem::take(&mut heading);
        let mut raw = Vec::new();
        for s in sections::sections(doc.text, doc.body.clone()) {
            heading.clear();
            body.clear();
            cut(&mut splitter, &s.heading, &mut heading);
            cut(&mut splitter, sections::body_of(doc.text, &s), &mut body);
            if heading.is_empty() && body.is_empty() {
                continue;
            }
            raw.push((
                s,
                heading.len() as u64,
                body.len() as u64,
                merge(&mut heading, &mut body),
            ));
        }
        // Renumber the terms in byte order so a query term is found by binary search.
        let mut words: Vec<(String, u32)> = ids.into_iter().collect();
        words.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut renumber = vec![0u32; words.len()];
        let mut vocabulary = String::new();
        let mut ends = Vec::with_capacity(words.len());
        for (k, (w, old)) in words.iter().enumerate() {
            if let Some(slot) = renumber.get_mut(*old as usize) {
                *slot = u32::try_from(k).unwrap_or(u32::MAX);
            }
            vocabulary.push_str(w);
            ends.push(u32::try_from(vocabulary.len()).unwrap_or(u32::MAX));
        }
        let new_id = |t: u32| renumber.get(t as usize).copied().unwrap_or(u32::MAX);
        let mut title: Vec<(u32, u32)> = merge(&mut title_ids, &mut [])
            .iter()
            .map(|&(t, n, _)| (new_id(t), n))
            .collect();
        title.sort_unstable();
        let sections = raw
            .into_iter()
            .map(|(section, heading_len, body_len, terms)| {
                let mut terms: Vec<(u32, u32, u32)> = terms
                    .into_iter()
                    .map(|(t, h, b)| (new_id(t), h, b))
                    .collect();
                terms.sort_unstable();
                SectionIndex {
                    section,
                    heading_len,
                    body_len,
                    terms: terms.into(),
                }
            })
            .collect();
        DocIndex {
            body: doc.body.clone(),
            title_field: doc.title.map(Box::from),
            vocabulary: vocabulary.into(),
            ends: ends.into(),
            title_len,
            title: title.into(),
            sections,
        }
    }

    /// The [`SearchDoc`] of the document this index was built from, given its id and text.
    #[must_use]
    pub fn search_doc<'a>(&'a self, id: &'a str, text: &'a str) -> SearchDoc<'a> {
        SearchDoc {
            id,
            text,
            body: self.body.clone(),
            title: self.title_field.as_deref(),
        }
    }

    /// The document's id of term `t`, if it holds it.
    fn term(&self, t: &str) -> Option<u32> {
        let word = |k: usize| {
            let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
            self.vocabulary
                .get(start..self.ends[k] as usize)
                .unwrap_or_default()
        };
        let (mut lo, mut hi) = (0usize, self.ends.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match word(mid).as_bytes().cmp(t.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return u32::try_from(mid).ok(),
            }
        }
        None
    }

    /// The document's ids of `query`'s terms (`None`: absent from the document).
    #[must_use]
    pub fn query_ids(&self, query: &[String]) -> Vec<Option<u32>> {
        query.iter().map(|q| self.term(q)).collect()
    }

    /// The title's counts against `ids` (see [`Self::query_ids`]).
    #[must_use]
    pub fn title_counts(&self, ids: &[Option<u32>]) -> Counts {
        Counts {
            len: self.title_len,
            tf: ids
                .iter()
                .map(|id| {
                    id.and_then(|id| {
                        self.title
                            .binary_search_by_key(&id, |e| e.0)
                            .ok()
                            .map(|k| u64::from(self.title[k].1))
                    })
                    .unwrap_or(0)
                })
                .collect(),
        }
    }

    /// The sections with a term of their own, in order.
    pub fn section_entries(&self) -> impl Iterator<Item = &SectionIndex> {
        self.sections.iter()
    }

    /// Estimated bytes held.
    #[must_use]
    pub fn cost(&self) -> usize {
        let sections: usize = self
            .sections
            .iter()
            // The struct, and the heading's and the terms' allocations with their headers.
            .map(|s| 96 + 32 + s.section.heading.len() + s.terms.len() * 12)
            .sum();
        128 + self.title_field.as_ref().map_or(0, |t| t.len())
            + self.vocabulary.len()
            + self.ends.len() * 4
            + self.title.len() * 8
            + sections
    }
}

/// `(term, count in a, count in b)` of the term ids `a` and `b`, ascending by term (sorts
/// both in place).
fn merge(a: &mut [u32], b: &mut [u32]) -> Vec<(u32, u32, u32)> {
    a.sort_unstable();
    b.sort_unstable();
    let mut out: Vec<(u32, u32, u32)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    let run = |v: &[u32], k: usize| v[k..].iter().take_while(|&&x| x == v[k]).count();
    while i < a.len() || j < b.len() {
        let t = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let na = if a.get(i) == Some(&t) { run(a, i) } else { 0 };
        let nb = if b.get(j) == Some(&t) { run(b, j) } else { 0 };
        i += na;
        j += nb;
        out.push((
            t,
            u32::try_from(na).unwrap_or(u32::MAX),
            u32::try_from(nb).unwrap_or(u32::MAX),
        ));
    }
    out
}

/// The key of a document's index: its content digest and its concept id.
pub type IndexKey = DocKey;

/// Indexes of documents by [`IndexKey`], within the budget given at construction
/// ([`MAX_INDEX_BYTES`] for a server's): see [`crate::view::memo`].
pub type IndexMemo = Memo<DocIndex>;

impl Cost for DocIndex {
    fn cost(&self) -> usize {
        DocIndex::cost(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::rank::{self, Hit, Totals};
    use proptest::prelude::*;
    use std::sync::Arc;

    /// Words with ASCII, case, Unicode folding and NFC/NFD forms, and line shapes with ATX and
    /// setext headings, blank lines and thematic breaks.
    const WORDS: [&str; 12] = [
        "ledger",
        "Ledger",
        "LEDGER",
        "straße",
        "STRASSE",
        "café",
        "cafe\u{301}",
        "x",
        "rev-2",
        "naïve",
        "ΣΊΣΥΦΟΣ",
        "σίσυφος",
    ];
    const SHAPES: [&str; 7] = ["", "# ", "## ", "- ", "> ", "===", "---"];

    fn text_of(lines: &[(usize, Vec<usize>)]) -> String {
        let mut t = String::new();
        for (shape, words) in lines {
            t.push_str(SHAPES[*shape]);
            let w: Vec<&str> = words.iter().map(|&k| WORDS[k]).collect();
            t.push_str(&w.join(" "));
            t.push('\n');
        }
        t
    }

    fn same(a: &(Vec<Hit>, Totals), b: &(Vec<Hit>, Totals)) -> bool {
        a.1 == b.1
            && a.0.len() == b.0.len()
            && a.0.iter().zip(&b.0).all(|(x, y)| {
                x.doc == y.doc && x.section == y.section && x.score.to_bits() == y.score.to_bits()
            })
    }

    proptest! {
        /// Ranking through the indexes, of every document or of some, gives the hits, scores
        /// (to the bit) and totals of ranking the texts.
        #[test]
        fn indexed_ranking_equals_the_ranking_of_the_texts(
            docs in prop::collection::vec(
                (
                    prop::collection::vec((0..SHAPES.len(), prop::collection::vec(0..WORDS.len(), 0..5)), 0..8),
                    prop::option::of(prop::collection::vec(0..WORDS.len(), 0..3)),
                    0..3usize,
                ),
                1..6,
            ),
            query in prop::collection::vec(0..WORDS.len(), 1..4),
            indexed in prop::collection::vec(any::<bool>(), 6),
        ) {
            let texts: Vec<(String, Option<String>, usize)> = docs
                .iter()
                .map(|(lines, title, front)| {
                    let w: Option<String> =
                        title.as_ref().map(|t| t.iter().map(|&k| WORDS[k]).collect::<Vec<_>>().join(" "));
                    // A frontmatter-like prefix outside the body.
                    let pre = "---\ntitle: ledger\n---\n".repeat(*front % 2);
                    (format!("{pre}{}", text_of(lines)), w, pre.len())
                })
                .collect();
            let ids: Vec<String> = (0..texts.len()).map(|k| format!("c/d{k}")).collect();
            let search: Vec<SearchDoc<'_>> = texts
                .iter()
                .zip(&ids)
                .map(|((text, title, start), id)| SearchDoc {
                    id,
                    text,
                    body: *start..text.len(),
                    title: title.as_deref().filter(|t| !t.is_empty()),
                })
                .collect();
            let q: Vec<&str> = query.iter().map(|&k| WORDS[k]).collect();
            let terms = rank::query_terms(&q.join(" "));
            let plain = rank::rank(&search, &terms);
            let all: Vec<Option<Arc<DocIndex>>> =
                search.iter().map(|d| Some(Arc::new(DocIndex::build(d)))).collect();
            prop_assert!(same(&rank::rank_indexed(&search, &all, &terms), &plain));
            let some: Vec<Option<Arc<DocIndex>>> = all
                .iter()
                .zip(&indexed)
                .map(|(ix, on)| ix.clone().filter(|_| *on))
                .collect();
            prop_assert!(same(&rank::rank_indexed(&search, &some, &terms), &plain));
            // The index gives back the document it was built from.
            for (d, ix) in search.iter().zip(all.iter().flatten()) {
                let back = ix.search_doc(d.id, d.text);
                prop_assert_eq!((back.body, back.title), (d.body.clone(), d.title));
            }
        }
    }

    #[test]
    fn the_memo_keeps_what_fits_and_drops_what_the_last_search_did_not_use() {
        let text = "# Heading\nsome body words\n";
        let d = SearchDoc {
            id: "c/a",
            text,
            body: 0..text.len(),
            title: None,
        };
        let ix = Arc::new(DocIndex::build(&d));
        let memo = IndexMemo::new(MAX_INDEX_BYTES);
        let key = |k: u8| ([k; 32], Box::from("c/a"));
        assert!(memo.begin(&[key(1)])[0].is_none());
        memo.keep(vec![(key(1), Arc::clone(&ix))]);
        assert!(memo.begin(&[key(1)])[0].is_some(), "kept");
        assert!(
            memo.begin(&[key(2)])[0].is_none(),
            "another digest is another document"
        );
        memo.keep(vec![(key(1), Arc::clone(&ix))]);
        assert_eq!(memo.usage().0, 1, "replaced, not added");
        let one = memo.usage().1;
        assert!(one > 0 && one < 4096, "{one}");
    }
}
