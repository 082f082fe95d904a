//! BM25 over the sections of a bundle (spec/surface.md §14.5 rule 3, §14.6 rules 1–3): the
//! ranking of `search_sections`. Pure.
//!
//! Parameters: k1 = 1.2, b = 0.75, IDF = ln(1 + (N − n + 0.5)/(n + 0.5)) over the N sections of
//! every concept, `n` the sections whose weighted frequency of the term is > 0; a term's
//! frequency in a section is `tf_body + 3·tf_heading + 2·tf_title` and the section length
//! `body + 3·heading + 2·title` tokens, averaged over all sections. Every query term must
//! occur (AND). Hits are ordered by (score descending, concept id, line_start).
//!
//! One pass over the documents, on up to two threads ([`crate::okf::par`]): a document gives
//! its section count, length sum, per-term section counts and the sections that hold every
//! term; nothing else is kept, so memory grows with the hits, not with the bundle's text.

use crate::okf::par;
use crate::view::index::DocIndex;
use crate::view::sections::{self, Counts, Section};
use crate::view::terms;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

/// BM25 `k1` (spec/surface.md §14.5 rule 3).
pub const K1: f64 = 1.2;
/// BM25 `b`.
pub const B: f64 = 0.75;

/// One concept document to search.
#[derive(Debug, Clone)]
pub struct SearchDoc<'a> {
    /// The concept id.
    pub id: &'a str,
    /// The whole document text.
    pub text: &'a str,
    /// The body's byte range in `text`.
    pub body: Range<usize>,
    /// The concept's `title` when it is a non-empty string, else `None` (the id's last
    /// segment stands in, spec/surface.md §14.6 rule 3).
    pub title: Option<&'a str>,
}

impl SearchDoc<'_> {
    /// The text whose tokens are the section's title tokens: the title, else the id's last
    /// segment.
    #[must_use]
    pub fn title_text(&self) -> &str {
        self.title
            .unwrap_or_else(|| self.id.rsplit('/').next().unwrap_or(self.id))
    }
}

/// A section holding every query term, scored.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Index of its document in the searched slice.
    pub doc: usize,
    /// The section.
    pub section: Section,
    /// The BM25 score (≥ 0).
    pub score: f64,
}

/// Totals over the bundle's sections.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// N: the sections (those with at least one token of their own).
    pub sections: u64,
    /// Sum of the weighted section lengths.
    pub length: u64,
    /// n per query term: the sections whose weighted frequency is > 0.
    pub with_term: Vec<u64>,
}

struct DocPass {
    totals: Totals,
    /// (section, weighted counts) of the sections that hold every term.
    candidates: Vec<(Section, Counts)>,
}

fn pass(doc: &SearchDoc<'_>, query: &[String]) -> DocPass {
    let mut splitter = terms::TermSplitter::new();
    let title = sections::count_with(&mut splitter, doc.title_text(), query);
    let mut p = DocPass::new(query.len());
    for s in sections::sections(doc.text, doc.body.clone()) {
        let heading = sections::count_with(&mut splitter, &s.heading, query);
        let body = sections::count_with(&mut splitter, sections::body_of(doc.text, &s), query);
        p.add(s, &heading, &body, &title);
    }
    p
}

/// [`pass`] through the document's index: the same counts, looked up, and the weighting of
/// [`sections::weighted`] done in place (a section the index holds has a term of its own).
fn pass_indexed(ix: &DocIndex, query: &[String]) -> DocPass {
    let ids = ix.query_ids(query);
    let title = ix.title_counts(&ids);
    let mut p = DocPass::new(query.len());
    let mut tf = vec![0u64; query.len()];
    for s in ix.section_entries() {
        let len = s.body_len() + 3 * s.heading_len() + 2 * title.len;
        let mut all = !tf.is_empty();
        for (k, id) in ids.iter().enumerate() {
            let (h, b) = id.map_or((0, 0), |id| s.counts(id));
            tf[k] = b + 3 * h + 2 * title.tf[k];
            if tf[k] > 0 {
                p.totals.with_term[k] += 1;
            } else {
                all = false;
            }
        }
        p.totals.sections += 1;
        p.totals.length += len;
        if all {
            p.candidates.push((
                s.section().clone(),
                Counts {
                    len,
                    tf: tf.clone(),
                },
            ));
        }
    }
    p
}

impl DocPass {
    fn new(terms: usize) -> Self {
        DocPass {
            totals: Totals {
                with_term: vec![0; terms],
                ..Totals::default()
            },
            candidates: Vec::new(),
        }
    }

    /// Counts one section of the document (none when its own text holds no term).
    fn add(&mut self, s: Section, heading: &Counts, body: &Counts, title: &Counts) {
        let Some(w) = sections::weighted(heading, body, title) else {
            return;
        };
        self.totals.sections += 1;
        self.totals.length += w.len;
        for (n, tf) in self.totals.with_term.iter_mut().zip(&w.tf) {
            if *tf > 0 {
                *n += 1;
            }
        }
        if !w.tf.is_empty() && w.tf.iter().all(|&tf| tf > 0) {
            self.candidates.push((s, w));
        }
    }
}

/// IDF of a term present in `n` of `big_n` sections.
#[must_use]
pub fn idf(big_n: u64, n: u64) -> f64 {
    let (big_n, n) = (big_n as f64, n as f64);
    (1.0 + (big_n - n + 0.5) / (n + 0.5)).ln()
}

/// The BM25 score of a section with weighted frequencies `tf`, length `len`, against the
/// per-term `idfs` and the average length `avgdl`.
#[must_use]
pub fn score(tf: &[u64], len: u64, idfs: &[f64], avgdl: f64) -> f64 {
    let norm = K1 * (1.0 - B + B * len as f64 / avgdl);
    tf.iter()
        .zip(idfs)
        .map(|(&f, idf)| {
            let f = f as f64;
            idf * f * (K1 + 1.0) / (f + norm)
        })
        .sum()
}

/// The hit order of spec/surface.md §14.5 rule 3: score descending, then concept id (byte
/// order), then `line_start`.
#[must_use]
pub fn order(a: (f64, &str, usize), b: (f64, &str, usize)) -> Ordering {
    b.0.total_cmp(&a.0)
        .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
        .then_with(|| a.2.cmp(&b.2))
}

/// Every section of `docs` that holds all of `query` (folded, distinct terms; empty gives no
/// hit), scored and sorted by [`order`], with the bundle's totals.
#[must_use]
pub fn rank(docs: &[SearchDoc<'_>], query: &[String]) -> (Vec<Hit>, Totals) {
    let passes = par::map(docs, |d| pass(d, query));
    combine(docs, passes, query)
}

/// [`rank`] through the documents' indexes where there are (`indexes[k]` is the
/// [`DocIndex::build`] of `docs[k]`, or `None`: that document's text is split as by [`rank`]):
/// the same hits and totals.
#[must_use]
pub fn rank_indexed(
    docs: &[SearchDoc<'_>],
    indexes: &[Option<Arc<DocIndex>>],
    query: &[String],
) -> (Vec<Hit>, Totals) {
    let order: Vec<usize> = (0..docs.len()).collect();
    let passes = par::map(&order, |&k| match indexes.get(k).and_then(Option::as_ref) {
        Some(ix) => pass_indexed(ix, query),
        None => pass(&docs[k], query),
    });
    combine(docs, passes, query)
}

fn combine(docs: &[SearchDoc<'_>], passes: Vec<DocPass>, query: &[String]) -> (Vec<Hit>, Totals) {
    let mut totals = Totals {
        with_term: vec![0; query.len()],
        ..Totals::default()
    };
    for p in &passes {
        totals.sections += p.totals.sections;
        totals.length += p.totals.length;
        for (a, b) in totals.with_term.iter_mut().zip(&p.totals.with_term) {
            *a += b;
        }
    }
    if totals.sections == 0 || query.is_empty() {
        return (Vec::new(), totals);
    }
    let avgdl = totals.length as f64 / totals.sections as f64;
    let idfs: Vec<f64> = totals
        .with_term
        .iter()
        .map(|&n| idf(totals.sections, n))
        .collect();
    let mut hits: Vec<Hit> = passes
        .into_iter()
        .enumerate()
        .flat_map(|(doc, p)| {
            let idfs = &idfs;
            p.candidates.into_iter().map(move |(section, w)| Hit {
                doc,
                score: score(&w.tf, w.len, idfs, avgdl),
                section,
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        order(
            (a.score, docs[a.doc].id, a.section.line_start),
            (b.score, docs[b.doc].id, b.section.line_start),
        )
    });
    (hits, totals)
}

/// The distinct folded terms of a query (spec/surface.md §14.6 rule 1), in first-occurrence
/// order.
#[must_use]
pub fn query_terms(query: &str) -> Vec<String> {
    terms::distinct_terms(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(id: &'a str, text: &'a str, title: Option<&'a str>) -> SearchDoc<'a> {
        SearchDoc {
            id,
            text,
            body: 0..text.len(),
            title,
        }
    }

    #[test]
    fn and_of_terms_heading_weight_and_order() {
        let docs = [
            doc("a", "# Orders\nrevenue here\n# Other\nnothing\n", None),
            doc("b", "intro\n# Notes\norders and revenue\n", Some("B")),
            doc("c", "orders only\n", None),
        ];
        let q = query_terms("Orders REVENUE");
        assert_eq!(q, vec!["orders", "revenue"]);
        let (hits, totals) = rank(&docs, &q);
        assert_eq!(totals.sections, 5);
        let got: Vec<(&str, usize)> = hits
            .iter()
            .map(|h| (docs[h.doc].id, h.section.line_start))
            .collect();
        // a's heading carries "orders" ×3: it ranks first.
        assert_eq!(got, vec![("a", 1), ("b", 2)]);
        assert!(hits[0].score > hits[1].score && hits[1].score > 0.0);
    }

    #[test]
    fn the_formula_matches_a_hand_computation() {
        // One section "x y", one "y": N = 2, n(x) = 1, avgdl = 1.5 (titles "t" weigh 2 each,
        // so lengths 2+2 = 4 and 1+2 = 3, avgdl 3.5).
        let docs = [doc("t", "x y\n", None), doc("u", "y\n", Some("t"))];
        let (hits, totals) = rank(&docs, &["x".to_owned()]);
        assert_eq!((totals.sections, totals.length), (2, 7));
        let idf = (1.0f64 + (2.0 - 1.0 + 0.5) / (1.0 + 0.5)).ln();
        // doc "t": title "t" (2 tokens weighted), body x y: tf(x) = 1, len = 2 + 2 = 4.
        let want = idf * 1.0 * 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * 4.0 / 3.5));
        assert!((hits[0].score - want).abs() <= 1e-12 * want, "{hits:?}");
    }

    #[test]
    fn no_terms_no_hits() {
        let docs = [doc("a", "text\n", None)];
        assert!(rank(&docs, &[]).0.is_empty());
        assert!(rank(&[], &["text".to_owned()]).0.is_empty());
    }
}
