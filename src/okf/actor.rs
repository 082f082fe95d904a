//! Actor conventions (spec/surface.md §13.3, OKF v0.2 §7).

/// Maximum bytes of a document actor or request actor.
pub const MAX_ACTOR_BYTES: usize = 256;

fn clean(s: &str) -> bool {
    !s.is_empty() && s.trim() == s && !s.chars().any(|c| c < '\u{20}' || c == '\u{7f}')
}

/// Whether `s` is a valid **document** actor (`generated.by`, `verified[].by`): ≤ 256 bytes,
/// no surrounding whitespace or control characters, and `human:`/`process:` + non-blank text
/// or exactly one `/` with non-blank text on both sides.
#[must_use]
pub fn is_document_actor(s: &str) -> bool {
    if s.len() > MAX_ACTOR_BYTES || !clean(s) {
        return false;
    }
    for prefix in ["human:", "process:"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            return !rest.trim().is_empty();
        }
    }
    let mut parts = s.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), None) => !a.trim().is_empty() && !b.trim().is_empty(),
        _ => false,
    }
}

/// Why a request `actor` (transport identity) is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestActorError {
    /// Over 256 bytes → `resource_limit`.
    TooLong,
    /// Empty, surrounding whitespace or a control character → `invalid_request`.
    Invalid,
}

/// Checks a request `actor` (spec/surface.md §13.3; concept-patch.md §2.5 rule 8).
///
/// # Errors
/// [`RequestActorError`].
pub fn check_request_actor(s: &str) -> Result<(), RequestActorError> {
    if s.len() > MAX_ACTOR_BYTES {
        return Err(RequestActorError::TooLong);
    }
    if clean(s) {
        Ok(())
    } else {
        Err(RequestActorError::Invalid)
    }
}

/// Whether a document actor is a human (`human:` prefix) — for trust tiers (OKF v0.2 §5.3).
#[must_use]
pub fn is_human(s: &str) -> bool {
    s.starts_with("human:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_actor_convention() {
        for ok in [
            "agent/1.0",
            "human:reviewer",
            "process:nightly",
            "reference_agent/gemini-2.5-flash",
        ] {
            assert!(is_document_actor(ok), "{ok}");
        }
        for bad in [
            "reviewer", "human:", "human: ", "a/b/c", "/x", "x/", " a/b", "a/b\n", "",
        ] {
            assert!(!is_document_actor(bad), "{bad:?}");
        }
        assert_eq!(check_request_actor("mcp:policy-test"), Ok(()));
        assert_eq!(check_request_actor(" x"), Err(RequestActorError::Invalid));
        assert_eq!(
            check_request_actor("a\u{7}"),
            Err(RequestActorError::Invalid)
        );
        assert_eq!(
            check_request_actor(&"a".repeat(257)),
            Err(RequestActorError::TooLong)
        );
    }
}
