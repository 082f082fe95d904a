//! Frontmatter/body split (spec/surface.md §13.1 rules 1–2, 4).

use std::ops::Range;

/// Why a document cannot be split; the §13.1 code names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitError {
    /// Not UTF-8 → `invalid_encoding`.
    InvalidEncoding,
    /// An opening fence without a closing one → `unterminated_frontmatter`.
    Unterminated,
}

impl SplitError {
    /// The validator code of spec/surface.md §13.2.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            SplitError::InvalidEncoding => "invalid_encoding",
            SplitError::Unterminated => "unterminated_frontmatter",
        }
    }
}

/// A split document: byte ranges into the original bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The whole document text (BOM included).
    pub text: &'a str,
    /// Byte length of a leading U+FEFF, if any (0 or 3).
    pub bom_len: usize,
    /// The frontmatter text between the fence lines; `None` without frontmatter.
    pub frontmatter: Option<Range<usize>>,
    /// Everything after the closing fence line (or the whole text after the BOM when there is
    /// no frontmatter... the BOM stays part of the body then, verbatim).
    pub body: Range<usize>,
    /// Whether the document uses CRLF (contains at least one `\r\n`).
    pub crlf: bool,
}

impl<'a> Split<'a> {
    /// The frontmatter text, if any.
    #[must_use]
    pub fn frontmatter_text(&self) -> Option<&'a str> {
        self.frontmatter.clone().map(|r| &self.text[r])
    }
    /// The body text.
    #[must_use]
    pub fn body_text(&self) -> &'a str {
        &self.text[self.body.clone()]
    }
    /// The newline generated text in this document uses.
    #[must_use]
    pub fn newline(&self) -> &'static str {
        if self.crlf {
            "\r\n"
        } else {
            "\n"
        }
    }
}

/// Splits `bytes` into frontmatter and body.
///
/// Frontmatter is present iff the first line (after an optional BOM) is exactly `---`
/// (LF or CRLF); it ends at the next line that is exactly `---`.
///
/// # Errors
/// [`SplitError`].
pub fn split(bytes: &[u8]) -> Result<Split<'_>, SplitError> {
    let text = std::str::from_utf8(bytes).map_err(|_| SplitError::InvalidEncoding)?;
    let bom_len = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let crlf = memchr::memchr(b'\r', text.as_bytes()).is_some() && text.contains("\r\n");
    let after_bom = &text[bom_len..];
    let first_len = if after_bom.starts_with("---\n") {
        4
    } else if after_bom.starts_with("---\r\n") {
        5
    } else if after_bom == "---" {
        // A lone opening fence with no newline: unterminated.
        return Err(SplitError::Unterminated);
    } else {
        return Ok(Split {
            text,
            bom_len,
            frontmatter: None,
            body: 0..text.len(),
            crlf,
        });
    };
    let fm_start = bom_len + first_len;
    let mut pos = fm_start;
    while pos <= text.len() {
        let rest = &text[pos..];
        let (line, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], pos + i + 1),
            None => (rest, text.len() + 1),
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line == "---" {
            let body_start = next.min(text.len());
            return Ok(Split {
                text,
                bom_len,
                frontmatter: Some(fm_start..pos),
                body: body_start..text.len(),
                crlf,
            });
        }
        if next > text.len() {
            break;
        }
        pos = next;
    }
    Err(SplitError::Unterminated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_cases() {
        let s = split(b"---\na: 1\n---\nbody\n").unwrap();
        assert_eq!(s.frontmatter_text(), Some("a: 1\n"));
        assert_eq!(s.body_text(), "body\n");
        let s = split(b"no fm\n---\n").unwrap();
        assert_eq!(s.frontmatter, None);
        assert_eq!(s.body_text(), "no fm\n---\n");
        let s = split("\u{feff}---\r\na: 1\r\n---\r\nb".as_bytes()).unwrap();
        assert_eq!(s.frontmatter_text(), Some("a: 1\r\n"));
        assert_eq!(s.body_text(), "b");
        assert!(s.crlf);
        let s = split(b"---\n---").unwrap();
        assert_eq!(s.frontmatter_text(), Some(""));
        assert_eq!(s.body_text(), "");
        assert_eq!(split(b"---\na: 1\n"), Err(SplitError::Unterminated));
        assert_eq!(split(b"---\na: 1\n--- \n"), Err(SplitError::Unterminated));
        assert_eq!(split(b"\xff"), Err(SplitError::InvalidEncoding));
    }
}
