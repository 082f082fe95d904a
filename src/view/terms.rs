//! Folding and terms of the search tools (spec/surface.md §14.6 rule 1, amending §14.4).
//!
//! The query and every section are read as `NFC(full_case_fold(NFC(text)))` ([`fold`]): Unicode
//! full case folding is the `C` and `F` mappings of `CaseFolding.txt` (the Turkic `T` mappings
//! are not used, so `I` folds to `i` and `İ` to `i` + U+0307). A term is a maximal run of
//! characters of general category `L*`, `M*` or `N*` ([`is_term_char`]) **of the folded text**, so
//! combining marks stay inside a term (`İstanbul` is one term, `i̇stanbul`) and `STRASSE` and
//! `Straße` are the same term `strasse`.
//!
//! # Unicode data
//! One Unicode version, **18.0.0**, for all three steps ([`UNICODE_VERSION`]):
//! - NFC: the `unicode-normalization` crate (0.1.26, its `UNICODE_VERSION`);
//! - full case folding: ICU4X `icu_casemap` 2.4.0 (`CaseMapper::fold`, root locale: `C` + `F`),
//!   with the Unicode 18.0.0 data of `icu_casemap_data` 2.4.0;
//! - general categories: ICU4X `icu_properties` 2.4.0 with `icu_properties_data` 2.4.0.
//!
//! Both ICU4X crates are pinned exactly in `Cargo.toml`, so the data moves only with a reviewed
//! bump. `tests/it/terms_oracle.rs` checks [`fold`] and [`is_term_char`] on every code point
//! against two Python oracles: the standard library (`str.casefold`, `unicodedata.normalize`,
//! `unicodedata.category`; its older Unicode version's unassigned code points left out), and,
//! with no exclusion, Unicode 18.0.0 itself (`unicodedata2` 18.0.0 and the `C` + `F` lines of
//! `tests/unicode/CaseFolding-18.0.0.txt`). The test `unicode_versions_agree` ties
//! [`UNICODE_VERSION`] to `unicode-normalization`'s.
//!
//! # Splitting the text without changing the answer
//! [`for_each_term`] must give the terms of the fold of the **whole** text, but folds the text
//! in pieces, and copies nothing for lowercase ASCII. It cuts only before a *cut byte*: an ASCII
//! character that is neither alphanumeric nor one of `<`, `=`, `>` (those three compose with a
//! following U+0338 into `≮`, `≠`, `≯`). For a cut byte `c` and any texts `A`, `B`:
//! `fold(A + c + B) = fold(A) + c + fold(B)`, because
//! 1. `c` has canonical combining class 0 and composes with no preceding character (true of
//!    all ASCII), so NFC never looks across the start of `c`:
//!    `NFC(A + c + B) = NFC(A) + NFC(c + B)`;
//! 2. `c` composes with no following character, so `NFC(c + B) = c + NFC(B)`;
//! 3. case folding maps each character on its own and maps `c` to itself;
//! 4. steps 1 and 2 apply again to the outer NFC.
//!
//! Since `c` is not a term character, no term spans a cut. The unit tests check the facts about
//! the cut bytes on every code point (`cut_bytes_compose_with_nothing`). A piece is then folded
//! by the first of these that applies:
//! - no byte above 0x7F: `to_ascii_lowercase` (ASCII is NFC and its full folding is exactly
//!   `A`–`Z` → `a`–`z`), and a term with no capital letter is passed as a slice of the text;
//! - only code points below U+0800 (one or two UTF-8 bytes), each with NFC quick check `Yes`,
//!   combining class 0 and a one-character folding with the same two properties: character by
//!   character through a table computed once from the same sources (no NFC step can change such
//!   a text);
//! - otherwise NFC, ICU4X folding and NFC, in reusable buffers.
//!
//! The proptests check that the pieces give the terms of the fold of the whole text.
//!
//! # Limitations
//! Terms are not further normalised: no compatibility normalisation (NFKC: `ﬁ` folds to `fi`
//! because the folding says so, but `²` stays `²`), no stemming, no word segmentation of scripts
//! written without spaces (a run of Han characters is one term).

use icu_casemap::{CaseMapper, CaseMapperBorrowed};
use icu_properties::props::GeneralCategory;
use icu_properties::{CodePointMapData, CodePointMapDataBorrowed};
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
use writeable::Writeable;

/// The Unicode version of all data used here (NFC, case folding, general categories), as
/// `(major, minor, update)`. See the module docs for the sources.
pub const UNICODE_VERSION: (u8, u8, u8) = (18, 0, 0);

/// Full case folding (root locale: `C` + `F`, no `T`).
const CASE: CaseMapperBorrowed<'static> = CaseMapper::new();

/// General category of every code point.
const CATEGORY: CodePointMapDataBorrowed<'static, GeneralCategory> =
    CodePointMapData::<GeneralCategory>::new();

/// Byte classes of the fast path ([`CLASS`]): one bit each, none for a byte above 0x7F.
const NON_ASCII: u8 = 0;
/// An ASCII character that is not a term character and composes with nothing: the text may be
/// cut before it (module docs).
const CUT: u8 = 1;
/// `a`–`z` and `0`–`9`: term characters that fold to themselves.
const LOWER: u8 = 2;
/// `A`–`Z`: term characters that fold to their lowercase.
const UPPER: u8 = 4;
/// `<`, `=`, `>`: not term characters, but they compose with a following U+0338, so the text is
/// never cut before them.
const JOINER: u8 = 8;
/// The classes that continue an ASCII piece.
const WORD: u8 = LOWER | UPPER | JOINER;

/// The class of each byte value.
const CLASS: [u8; 256] = {
    let mut t = [NON_ASCII; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'a'..=b'z' | b'0'..=b'9' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'<' | b'=' | b'>' => JOINER,
            _ => CUT,
        };
        b += 1;
    }
    t
};

/// Whether `c` is a term character: general category `L*` (letter), `M*` (mark) or `N*`
/// (number) in Unicode 18.0.0 (spec/surface.md §14.6 rule 1). Unassigned code points (`Cn`),
/// punctuation, symbols (emoji included), separators and controls are not.
#[must_use]
pub fn is_term_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    matches!(
        CATEGORY.get(c),
        GeneralCategory::UppercaseLetter
            | GeneralCategory::LowercaseLetter
            | GeneralCategory::TitlecaseLetter
            | GeneralCategory::ModifierLetter
            | GeneralCategory::OtherLetter
            | GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
            | GeneralCategory::DecimalNumber
            | GeneralCategory::LetterNumber
            | GeneralCategory::OtherNumber
    )
}

/// `text` read as `NFC(full_case_fold(NFC(text)))` (spec/surface.md §14.6 rule 1): the text that
/// terms are cut from, and what `search_concepts` with `match: "all_terms"` compares
/// substrings in (§14.6 rule 4). Pure ASCII folds to its `to_ascii_lowercase`. Never panics;
/// the result may be longer than `text` (`ß` → `ss`, `ﬃ` → `ffi`).
#[must_use]
pub fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut scratch = Scratch::default();
    fold_into(text, &mut scratch).to_owned()
}

/// Calls `f` with each term of `text` in text order, repeats included: the maximal runs of
/// [`is_term_char`] characters of [`fold`]`(text)` (spec/surface.md §14.6 rule 1). Each term is
/// non-empty and its `&str` lives only for its call. Never panics. Same as
/// [`TermSplitter::for_each_term`] with fresh buffers; use a [`TermSplitter`] to cut many texts.
pub fn for_each_term(text: &str, f: impl FnMut(&str)) {
    TermSplitter::new().for_each_term(text, f);
}

/// The terms of `text` in text order, repeats included (the document side: term frequencies).
/// Equal to what [`for_each_term`] calls `f` with.
#[must_use]
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

/// The distinct terms of `text` in order of first occurrence (the query side: spec/surface.md
/// §14.4 counts and matches distinct terms).
#[must_use]
pub fn distinct_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for_each_term(text, |t| {
        if !seen.contains(t) {
            seen.insert(t.to_owned());
            out.push(t.to_owned());
        }
    });
    out
}

/// A term splitter with reusable buffers, for cutting many texts (e.g. every section of a
/// bundle) without allocating per text. Holds no state between calls other than capacity.
#[derive(Debug, Default)]
pub struct TermSplitter {
    /// A lowercased ASCII term.
    lower: String,
    /// Buffers of the general fold.
    scratch: Scratch,
}

impl TermSplitter {
    /// A splitter with empty buffers.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `f` with each term of `text` in text order, repeats included (see
    /// [`for_each_term`]). Lowercase ASCII terms are passed as slices of `text`; other terms
    /// are slices of this splitter's buffers. Never panics.
    pub fn for_each_term(&mut self, text: &str, mut f: impl FnMut(&str)) {
        let b = text.as_bytes();
        let n = b.len();
        // `start` is the start of the next piece: 0 or the index of a cut byte.
        let mut start = 0;
        while start < n {
            let mut j = start + usize::from(CLASS[usize::from(b[start])] == CUT);
            let body = j;
            // The classes seen in the body: one branch per byte.
            let mut seen = 0;
            while let Some(&x) = b.get(j) {
                let class = CLASS[usize::from(x)];
                if class & WORD == 0 {
                    break;
                }
                seen |= class;
                j += 1;
            }
            if j < n && CLASS[usize::from(b[j])] == NON_ASCII {
                // The piece holds non-ASCII text: it runs to the next cut byte. A byte below
                // 0x80 is never inside a multi-byte character, so `end` is a char boundary.
                let end = b[j..]
                    .iter()
                    .position(|&x| CLASS[usize::from(x)] == CUT)
                    .map_or(n, |k| j + k);
                let piece = text.get(start..end).unwrap_or_default();
                let Scratch { folded, runs, .. } = &mut self.scratch;
                if fold_two_byte(piece, folded, runs) {
                    for &(s, e) in runs.iter() {
                        f(folded.get(s..e).unwrap_or_default());
                    }
                } else {
                    split_folded(fold_into(piece, &mut self.scratch), &mut f);
                }
                start = end;
            } else {
                let word = text.get(body..j).unwrap_or_default();
                let upper = seen & UPPER != 0;
                if seen & JOINER != 0 {
                    for part in word.split(['<', '=', '>']) {
                        emit_ascii(part, upper, &mut self.lower, &mut f);
                    }
                } else {
                    emit_ascii(word, upper, &mut self.lower, &mut f);
                }
                start = j;
            }
        }
    }
}

/// Calls `f` with the ASCII alphanumeric `word` folded, if it is not empty; `upper` says
/// whether it may hold `A`–`Z`.
fn emit_ascii(word: &str, upper: bool, lower: &mut String, f: &mut impl FnMut(&str)) {
    if word.is_empty() {
        return;
    }
    if upper && word.bytes().any(|x| x.is_ascii_uppercase()) {
        lower.clear();
        lower.push_str(word);
        lower.make_ascii_lowercase();
        f(lower);
    } else {
        f(word);
    }
}

/// Calls `f` with each maximal run of term characters of the already folded `folded`.
fn split_folded(folded: &str, f: &mut impl FnMut(&str)) {
    let mut run: Option<usize> = None;
    for (i, c) in folded.char_indices() {
        match (is_term_char(c), run) {
            (true, None) => run = Some(i),
            (false, Some(s)) => {
                f(folded.get(s..i).unwrap_or_default());
                run = None;
            }
            _ => {}
        }
    }
    if let Some(s) = run {
        f(folded.get(s..).unwrap_or_default());
    }
}

/// Reusable buffers of [`fold_into`].
#[derive(Debug, Default)]
struct Scratch {
    /// `NFC(text)` when `text` is not already NFC.
    nfc: String,
    /// `full_case_fold(NFC(text))`.
    folded: String,
    /// `NFC(folded)` when `folded` is not already NFC.
    out: String,
    /// The byte ranges of the terms in `folded` ([`fold_two_byte`]).
    runs: Vec<(usize, usize)>,
}

/// Bits of a [`two_byte_table`] entry: the low 21 bits are the folded character.
const CHAR_BITS: u32 = 0x1F_FFFF;
/// The code point has NFC quick check `Yes` and canonical combining class 0: a text of such
/// characters is NFC (none composes with a neighbour or is reordered).
const INERT: u32 = 1 << 24;
/// The code point is [`INERT`], its full folding is one character, and that character is
/// [`INERT`] too: a text of such code points folds character by character.
const SIMPLE: u32 = 1 << 25;
/// The folded character is a term character.
const TERM: u32 = 1 << 26;
/// The code points of the table: those of one or two UTF-8 bytes (Latin, Greek, Cyrillic,
/// Armenian, Hebrew, Arabic and more).
const TWO_BYTE: usize = 0x800;

/// One entry per code point below U+0800, computed once from the same sources as [`fold`]
/// and [`is_term_char`] (folding, NFC quick check and combining class of
/// `unicode-normalization`, categories), so it holds no data of its own.
fn two_byte_table() -> &'static [u32; TWO_BYTE] {
    static TABLE: std::sync::OnceLock<Box<[u32; TWO_BYTE]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let inert = |c: char| {
            is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes
                && unicode_normalization::char::canonical_combining_class(c) == 0
        };
        let mut table = Box::new([0; TWO_BYTE]);
        let mut folded = String::new();
        for (cp, entry) in (0u32..).zip(table.iter_mut()) {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            if !inert(c) {
                continue;
            }
            *entry = INERT;
            folded.clear();
            // Writing into a `String` cannot fail.
            let _ = CASE.fold(c.encode_utf8(&mut [0; 4])).write_to(&mut folded);
            let mut chars = folded.chars();
            if let (Some(d), None) = (chars.next(), chars.next()) {
                if inert(d) {
                    *entry |= SIMPLE | u32::from(d);
                    if is_term_char(d) {
                        *entry |= TERM;
                    }
                }
            }
        }
        table
    })
}

/// The fold of `piece` into `out` and the byte ranges of its terms in `out` into `runs`,
/// character by character, when every character of `piece` is [`SIMPLE`] (then the fold is
/// the concatenation of the characters' folds: no NFC step changes anything). Returns `false`,
/// with `out` and `runs` unspecified, when a character is not.
fn fold_two_byte(piece: &str, out: &mut String, runs: &mut Vec<(usize, usize)>) -> bool {
    let table = two_byte_table();
    out.clear();
    runs.clear();
    let mut run: Option<usize> = None;
    for c in piece.chars() {
        let entry = table.get(c as usize).copied().unwrap_or(0);
        let Some(d) = char::from_u32(entry & CHAR_BITS).filter(|_| entry & SIMPLE != 0) else {
            return false;
        };
        match (entry & TERM != 0, run) {
            (true, None) => run = Some(out.len()),
            (false, Some(s)) => {
                runs.push((s, out.len()));
                run = None;
            }
            _ => {}
        }
        out.push(d);
    }
    if let Some(s) = run {
        runs.push((s, out.len()));
    }
    true
}

/// Whether `text` is NFC by the quick check (a `Maybe` counts as no: the caller normalises).
fn is_nfc(text: &str) -> bool {
    let table = two_byte_table();
    text.chars()
        .all(|c| table.get(c as usize).is_some_and(|e| e & INERT != 0))
        || is_nfc_quick(text.chars()) == IsNormalized::Yes
}

/// `NFC(full_case_fold(NFC(text)))`, in `scratch`'s buffers.
fn fold_into<'s>(text: &str, scratch: &'s mut Scratch) -> &'s str {
    let Scratch {
        nfc, folded, out, ..
    } = scratch;
    let input: &str = if is_nfc(text) {
        text
    } else {
        nfc.clear();
        nfc.extend(text.nfc());
        nfc
    };
    folded.clear();
    // Writing into a `String` cannot fail.
    let _ = CASE.fold(input).write_to(folded);
    if is_nfc(folded) {
        folded
    } else {
        out.clear();
        out.extend(folded.nfc());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference of [`for_each_term`]: fold the whole text, then split.
    fn reference(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        split_folded(&fold(text), &mut |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn unicode_versions_agree() {
        assert_eq!(unicode_normalization::UNICODE_VERSION, UNICODE_VERSION);
    }

    #[test]
    fn dotted_capital_i_keeps_its_mark_inside_the_term() {
        assert_eq!(terms("İstanbul"), vec!["i\u{307}stanbul"]);
        assert_eq!(
            terms("İSTANBUL, istanbul"),
            vec!["i\u{307}stanbul", "istanbul"]
        );
        // Not Turkic: `I` folds to `i`, `ı` stays.
        assert_eq!(fold("I ı"), "i ı");
    }

    #[test]
    fn sharp_s_folds_to_ss() {
        assert_eq!(fold("Straße"), "strasse");
        assert_eq!(terms("STRASSE"), terms("Straße"));
        assert_eq!(terms("Straße"), vec!["strasse"]);
        assert_eq!(fold("ẞ"), "ss");
    }

    #[test]
    fn ligatures_and_special_folds() {
        assert_eq!(terms("ﬁle ﬃ"), vec!["file", "ffi"]);
        assert_eq!(fold("ŉ"), "ʼn");
        // Greek: final sigma folds to sigma; iota subscript becomes a full iota (F).
        assert_eq!(terms("ΟΔΟΣ οδος οδοσ"), vec!["οδοσ", "οδοσ", "οδοσ"]);
        assert_eq!(fold("ᾼ"), "αι");
        // NFC before folding: the angstrom sign is Å, which folds to å.
        assert_eq!(fold("\u{212B}"), "å");
    }

    #[test]
    fn cherokee_and_deseret() {
        // Cherokee folds to the capitals: the small letters U+AB70..U+ABBF and U+13F8..U+13FD
        // have C mappings to U+13A0..U+13F5 (stable since Unicode 8.0).
        assert_eq!(fold("\u{AB70}"), "\u{13A0}");
        assert_eq!(fold("\u{13A0}"), "\u{13A0}");
        assert_eq!(terms("ᏣᎳᎩ ꮳꮃꭹ"), vec!["ᏣᎳᎩ", "ᏣᎳᎩ"]);
        // Deseret (astral): capitals fold to small letters.
        assert_eq!(fold("\u{10400}\u{10401}"), "\u{10428}\u{10429}");
        assert_eq!(terms("𐐀𐐁 𐐨𐐩"), vec!["𐐨𐐩", "𐐨𐐩"]);
    }

    #[test]
    fn combining_marks_stay_inside_terms() {
        // Decomposed é is composed by NFC; a mark without a precomposed form stays a mark.
        assert_eq!(terms("cafe\u{301} x\u{301}y"), vec!["café", "x\u{301}y"]);
        assert_eq!(terms("Cafe\u{301}"), terms("CAFÉ"));
        // A mark at the start of a term (after a space) is still a term character.
        assert_eq!(terms(" \u{301}a"), vec!["\u{301}a"]);
        // Devanagari vowel signs (Mc, Mn) keep the word whole.
        assert_eq!(terms("नमस्ते दुनिया"), vec!["नमस्ते", "दुनिया"]);
    }

    #[test]
    fn numbers_of_other_scripts_are_terms() {
        assert_eq!(terms("٣٤ ४२ Ⅻ ½"), vec!["٣٤", "४२", "ⅻ", "½"]);
        assert_eq!(terms("v2 ３"), vec!["v2", "３"]);
    }

    #[test]
    fn punctuation_space_and_emoji_split_terms() {
        assert_eq!(
            terms("a-b_c.d/e\u{A0}f\u{3000}g😀h—i«j»k\u{200B}l"),
            vec!["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]
        );
        assert_eq!(
            terms("Hello, Мир! [link](x.md)"),
            vec!["hello", "мир", "link", "x", "md"]
        );
        assert!(terms("").is_empty());
        assert!(terms(" ,.;😀 ").is_empty());
    }

    #[test]
    fn joiners_compose_with_a_following_long_solidus() {
        // `=` + U+0338 is `≠` (Sm): it splits, and no cut is made before the `=`.
        assert_eq!(terms("a=\u{338}b"), vec!["a", "b"]);
        assert_eq!(fold("a=\u{338}b"), "a≠b");
        assert_eq!(terms("A<B>C=D"), vec!["a", "b", "c", "d"]);
        assert_eq!(terms("<Ä>"), vec!["ä"]);
    }

    #[test]
    fn distinct_terms_keep_first_occurrence_order() {
        assert_eq!(distinct_terms("b A a B c"), vec!["b", "a", "c"]);
        assert_eq!(distinct_terms("Straße STRASSE"), vec!["strasse"]);
        assert_eq!(terms("b A a B c"), vec!["b", "a", "a", "b", "c"]);
    }

    #[test]
    fn lowercase_ascii_terms_are_borrowed_from_the_text() {
        let text = "plain words here";
        let range = text.as_bytes().as_ptr_range();
        let mut borrowed = 0;
        for_each_term(text, |t| {
            if range.contains(&t.as_ptr()) {
                borrowed += 1;
            }
        });
        assert_eq!(borrowed, 3);
    }

    /// The facts of the module docs behind cutting before a cut byte, on every code point:
    /// a cut byte has combining class 0, folds to itself, is not a term character, and
    /// composes with no character on either side. For the last: if `compose(a, b)` is some `y`,
    /// the full canonical decomposition of `y` is that of `a` followed by that of `b`, so an
    /// ASCII `b` would stand after the first character, and an ASCII `a` first, of a
    /// decomposition of two or more characters.
    #[test]
    fn cut_bytes_compose_with_nothing() {
        use unicode_normalization::char::{canonical_combining_class, decompose_canonical};
        let cuts: Vec<char> = (0u8..128)
            .filter(|&b| CLASS[usize::from(b)] == CUT)
            .map(char::from)
            .collect();
        assert_eq!(cuts.len(), 128 - 62 - 3);
        for &c in &cuts {
            assert_eq!(canonical_combining_class(c), 0);
            assert_eq!(fold(&c.to_string()), c.to_string());
            assert!(!is_term_char(c));
        }
        let mut joiners = Vec::new();
        for y in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let mut d = Vec::new();
            decompose_canonical(y, |x| d.push(x));
            if d.len() < 2 {
                continue;
            }
            assert!(d[1..].iter().all(|x| !x.is_ascii()), "{y:?}: {d:?}");
            if d[0].is_ascii() && !d[0].is_ascii_alphanumeric() {
                joiners.push(d[0]);
            }
        }
        // Only `<`, `=`, `>` start a composition (`≮`, `≠`, `≯`): they are the joiners.
        joiners.sort_unstable();
        assert_eq!(joiners, ['<', '=', '>']);
    }

    /// The table of the two-byte path against the general path, on every code point below
    /// U+0800, alone and between a letter and a cut byte.
    #[test]
    fn two_byte_path_equals_the_general_path() {
        let (mut out, mut runs) = (String::new(), Vec::new());
        let mut simple = 0;
        for c in (0..0x800).filter_map(char::from_u32) {
            for text in [c.to_string(), format!("Я{c}."), format!(" {c}Ω")] {
                if fold_two_byte(&text, &mut out, &mut runs) {
                    assert_eq!(out, fold(&text), "{text:?}");
                    let split: Vec<&str> = runs.iter().map(|&(s, e)| &out[s..e]).collect();
                    assert_eq!(split, reference(&text), "{text:?}");
                    simple += 1;
                }
            }
        }
        // A text of INERT characters is NFC: each one between two others, both orders.
        let inert: Vec<char> = (0..0x800)
            .filter_map(char::from_u32)
            .filter(|&c| two_byte_table()[c as usize] & INERT != 0)
            .collect();
        for (i, &c) in inert.iter().enumerate() {
            for k in [1, 7, 101, 997] {
                let (d, e) = (
                    inert[(i + k) % inert.len()],
                    inert[(i * k + 3) % inert.len()],
                );
                let text = format!("{d}{c}{e}{c}{d}");
                assert!(text.nfc().eq(text.chars()), "{text:?}");
            }
        }
        // Most of the range takes the two-byte path (combining marks and the few characters
        // with a multi-character folding do not).
        assert!(simple > 3 * 1500, "{simple}");
    }

    /// Every ASCII character: folding is `to_ascii_lowercase`, term characters are the
    /// alphanumerics (what the fast path assumes).
    #[test]
    fn ascii_fast_path_matches_the_general_fold() {
        for b in 0u8..128 {
            let c = char::from(b);
            let mut s = Scratch::default();
            assert_eq!(
                fold_into(&c.to_string(), &mut s),
                c.to_ascii_lowercase().to_string()
            );
            let general = matches!(
                CATEGORY.get(c),
                GeneralCategory::UppercaseLetter
                    | GeneralCategory::LowercaseLetter
                    | GeneralCategory::DecimalNumber
            );
            assert_eq!(is_term_char(c), general, "{c:?}");
        }
    }

    #[test]
    fn pieces_equal_the_whole() {
        for text in [
            "a\u{301}",
            ". \u{301}",
            "x <\u{338} y",
            "Ä-Ö—ÜBER straße;STRAẞE",
            "ΣΑΣ. Σ",
            "\u{1E9E}\u{301}",
            "q\u{307}\u{323}. İ\u{323}",
            "한국어 ᄒ\u{1161}\u{11AB}",
        ] {
            assert_eq!(terms(text), reference(text), "{text:?}");
        }
    }

    /// About `bytes` of generated Markdown with headings, links, code spans and list items. Its
    /// words are mixed-case ASCII; with `mix` 1 about one word in twenty is Cyrillic or
    /// accented Latin, with `mix` 2 most words are Cyrillic.
    fn generated_markdown(bytes: usize, mix: u8) -> String {
        const ASCII: [&str; 16] = [
            "the", "Concept", "bundle", "search", "Index", "section", "with", "a", "terms",
            "Folding", "of", "2024", "OKF", "v0.2", "markdown", "link",
        ];
        const OTHER: [&str; 6] = ["Привет", "мир", "ЗНАНИЯ", "café", "Straße", "naïve"];
        const RUSSIAN: [&str; 8] = [
            "знание",
            "Концепция",
            "поиск",
            "в",
            "и",
            "раздел",
            "ЖУРНАЛ",
            "термины",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(state >> 33).unwrap_or_default()
        };
        let mut s = String::with_capacity(bytes + 64);
        while s.len() < bytes {
            let word = match (next() % 40, mix) {
                (0, _) => "\n\n## ",
                (1, _) => " [see also](other/concept-17.md)",
                (2, _) => " `code_span()`",
                (3, _) => ".\n- ",
                (6, _) => ", ",
                (4 | 5, 1) => OTHER[next() % OTHER.len()],
                (_, 2) => RUSSIAN[next() % RUSSIAN.len()],
                _ => ASCII[next() % ASCII.len()],
            };
            if !word.starts_with([' ', '\n', '.', ',']) {
                s.push(' ');
            }
            s.push_str(word);
        }
        s
    }

    /// Throughput of [`TermSplitter::for_each_term`] on about 37 MB of generated Markdown, best
    /// of five runs, wall clock (no timed assertion): run with
    /// `cargo test --release --lib view::terms::tests::throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "a benchmark; run in --release"]
    fn throughput() {
        for (name, mix) in [
            ("ASCII", 0),
            ("ASCII, 1 word in 20 not", 1),
            ("Cyrillic", 2),
        ] {
            let text = generated_markdown(37_000_000, mix);
            #[allow(clippy::cast_precision_loss)]
            let mb = text.len() as f64 / 1e6;
            let mut splitter = TermSplitter::new();
            let (mut best, mut n) = (f64::MAX, 0u64);
            for _ in 0..5 {
                let t0 = std::time::Instant::now();
                let mut h = 0u64;
                n = 0;
                splitter.for_each_term(&text, |t| {
                    n += 1;
                    h = h.rotate_left(5) ^ u64::from(t.as_bytes()[0]);
                });
                std::hint::black_box(h);
                best = best.min(t0.elapsed().as_secs_f64());
            }
            eprintln!(
                "{name}: {mb:.1} MB, {n} terms, for_each_term {:.0} MB/s",
                mb / best
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Any text: no panic, and the pieces of the fast path give the terms of the fold of
        /// the whole text.
        #[test]
        fn terms_equal_fold_then_split(text in "\\PC*") {
            proptest::prop_assert_eq!(terms(&text), reference(&text));
        }

        /// Texts dense in what makes folding and composition hard: ASCII around the joiners,
        /// combining marks, Hangul jamo, special foldings.
        #[test]
        fn terms_equal_fold_then_split_on_hard_text(
            text in "[aAzZ09 .,<=>\\-\u{300}\u{301}\u{307}\u{323}\u{338}\u{345}\u{1100}\u{1161}\u{11A8}ßẞİıΣσςΐᾼﬁ\u{10400}😀éЯяЁ\u{483}\u{5B0}\u{653}ا]{0,40}"
        ) {
            proptest::prop_assert_eq!(terms(&text), reference(&text));
        }

        /// Any chars at all, controls and unassigned code points included.
        #[test]
        fn arbitrary_chars_never_panic(chars in proptest::collection::vec(proptest::char::any(), 0..64)) {
            let text: String = chars.into_iter().collect();
            let mut n = 0;
            for_each_term(&text, |t| {
                assert!(!t.is_empty());
                n += 1;
            });
            proptest::prop_assert_eq!(n, reference(&text).len());
            proptest::prop_assert_eq!(distinct_terms(&text).len() <= n, true);
        }
    }
}
