//! Concept-ID grammar (spec/surface.md §8) and document classification (§13.1 rule 5).

/// Why a string is not a canonical concept ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConceptIdError {
    /// Longer than 4096 bytes → `resource_limit`.
    TooLong,
    /// Violates the grammar → `invalid_request` (`concept_id is not canonical`).
    NotCanonical,
    /// The last segment is `index` or `log` → `concept_id contains reserved segment`.
    Reserved,
}

/// Checks the concept-ID grammar of spec/surface.md §8.
///
/// # Errors
/// [`ConceptIdError`].
pub fn check_concept_id(id: &str) -> Result<(), ConceptIdError> {
    if id.len() > 4096 {
        return Err(ConceptIdError::TooLong);
    }
    if id.is_empty() || id.trim() != id || id.ends_with(".md") {
        return Err(ConceptIdError::NotCanonical);
    }
    if id
        .chars()
        .any(|c| c == '\\' || c == ':' || c <= '\u{1f}' || c == '\u{7f}')
    {
        return Err(ConceptIdError::NotCanonical);
    }
    let mut last = "";
    for segment in id.split('/') {
        if segment.is_empty() || segment.starts_with('.') {
            return Err(ConceptIdError::NotCanonical);
        }
        last = segment;
    }
    if matches!(last, "index" | "log") {
        return Err(ConceptIdError::Reserved);
    }
    Ok(())
}

/// What a visible path is, for OKF purposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocClass {
    /// `index.md` or `log.md` at any level.
    Reserved,
    /// A concept with this canonical ID.
    Concept(String),
    /// A `.md` file that is neither reserved nor a concept (`noncanonical_concept_path`).
    NoncanonicalMarkdown,
    /// Any other file.
    Other,
}

/// Classifies a bundle-relative path (spec/surface.md §13.1 rule 5).
#[must_use]
pub fn classify(path: &str) -> DocClass {
    let Some(stem) = path.strip_suffix(".md") else {
        return DocClass::Other;
    };
    let last = path.rsplit('/').next().unwrap_or(path);
    if last == "index.md" || last == "log.md" {
        return DocClass::Reserved;
    }
    if check_concept_id(stem).is_ok() {
        DocClass::Concept(stem.to_owned())
    } else {
        DocClass::NoncanonicalMarkdown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cid_01_valid_ids() {
        for id in [
            "東京/данные/100%+ready=да",
            "a b/c",
            "tables/orders",
            "log/2026",
        ] {
            assert_eq!(check_concept_id(id), Ok(()), "{id}");
        }
    }

    #[test]
    fn cid_02_invalid_ids_are_rejected() {
        for id in [
            "", "/a", "a/", "a//b", "a\\b", "a:b", "file:x", ".hidden", "a/../b", "a/./b", "a.md",
            " a", "a ", "a\tb",
        ] {
            assert_eq!(
                check_concept_id(id),
                Err(ConceptIdError::NotCanonical),
                "{id:?}"
            );
        }
        assert_eq!(check_concept_id("index"), Err(ConceptIdError::Reserved));
        assert_eq!(check_concept_id("x/log"), Err(ConceptIdError::Reserved));
        assert_eq!(
            check_concept_id(&"a".repeat(4097)),
            Err(ConceptIdError::TooLong)
        );
    }

    #[test]
    fn classification() {
        assert_eq!(classify("index.md"), DocClass::Reserved);
        assert_eq!(classify("a/log.md"), DocClass::Reserved);
        assert_eq!(
            classify("log/2026.md"),
            DocClass::Concept("log/2026".into())
        );
        assert_eq!(classify("notes/a:b.md"), DocClass::NoncanonicalMarkdown);
        assert_eq!(
            classify(".github/pull_request_template.md"),
            DocClass::NoncanonicalMarkdown
        );
        assert_eq!(classify("viz.html"), DocClass::Other);
    }
}
