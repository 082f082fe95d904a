//! TEMPORARY stand-in for the term model of spec/surface.md §14.6 rule 1 (replaced by the
//! generated full case folding on merge of branch `terms`).

use unicode_normalization::UnicodeNormalization;

/// `NFC(fold(NFC(text)))` (stand-in: lowercase).
#[must_use]
pub fn fold(text: &str) -> String {
    let n: String = text.nfc().collect();
    let l = n.to_lowercase();
    l.nfc().collect()
}

/// Whether `c` is a term character (L*, M*, N*; stand-in: alphanumeric).
#[must_use]
pub fn is_term_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Calls `f` with each term of the folded `text`, in order.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let folded = fold(text);
    for t in folded.split(|c: char| !is_term_char(c)) {
        if !t.is_empty() {
            f(t);
        }
    }
}

/// The terms of `text` in order.
#[must_use]
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

/// The distinct terms of `text`, in first-occurrence order.
#[must_use]
pub fn distinct_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for_each_term(text, |t| {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    });
    out
}
