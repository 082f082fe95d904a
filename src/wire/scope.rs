//! The scope a host sets (spec/surface.md §18.4): the client's MCP roots, given as `file://`
//! URIs, turned into allowed roots of the store ([`crate::store::root`]). The server layer
//! runs the `roots/list` exchange ([`crate::server::scope`]) and hands the URIs here.

use crate::envelope::{Diagnostic, Severity};
use crate::store::root::{self, AllowedRoot};

/// Code of the notice of a first empty `roots/list` answer (spec/surface.md §18.4 rule 2a).
pub const ROOTS_EMPTY: &str = "roots_empty";

/// Message of the `roots_empty` notice: what the empty list means and how a host narrows it.
pub const MSG_ROOTS_EMPTY: &str = "the client answered roots/list with an empty list, so only okf-mcp serve --root bounds bundle_path (every path without --root); a host narrows the scope by listing its workspace directories as roots or by passing --root";

/// Forgets the client's roots: a new session starts as if no client had advertised any.
pub fn reset() {
    root::set_client_roots(None);
}

/// Installs the client's roots from their URIs (rule 2); a URI that is not a `file://` URI of
/// an accessible directory allows nothing, so an empty or unusable list allows nothing.
pub fn set_client_roots(uris: &[String]) {
    root::set_client_roots(Some(uris.iter().filter_map(|u| allowed(u)).collect()));
}

/// The client's first `roots/list` answer was `[]` (rule 2a): only `--root` applies, and
/// every answer carries the `roots_empty` notice ([`push_notice`]) until the next answer
/// that lists roots, fails or times out.
pub fn set_first_empty() {
    root::set_client_roots_empty();
}

/// Pushes the `WARN` `roots_empty` notice (spec/surface.md §18.4 rule 2a, §18.1 rule 2) when
/// the state of [`set_first_empty`] is in force; the dispatcher calls it once per call.
pub fn push_notice() {
    if root::client_roots_empty() {
        crate::notices::push(Diagnostic::new(
            ROOTS_EMPTY,
            Severity::Warn,
            MSG_ROOTS_EMPTY,
        ));
    }
}

/// Fail closed: nothing of the client's roots is allowed until its next answer (a wait for
/// an answer ran out).
pub fn close() {
    root::set_client_roots(Some(Vec::new()));
}

/// Fail closed while the client's first answer is awaited (see
/// [`root::close_client_roots_if_unknown`]).
pub fn close_if_unknown() {
    root::close_client_roots_if_unknown();
}

/// The allowed root of one `file://` root URI, or `None` (not a `file://` URI of an absolute
/// path, not valid UTF-8 once decoded, or not an accessible directory).
#[must_use]
pub fn allowed(uri: &str) -> Option<AllowedRoot> {
    let path = file_uri_path(uri)?;
    root::resolve_root(std::path::Path::new(&path)).ok()
}

/// The absolute path of a `file://` URI with an empty or `localhost` authority, percent-decoded;
/// `None` for any other URI, a query or fragment, or a path that decodes to invalid UTF-8 or
/// holds NUL.
#[must_use]
pub fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') || rest.contains(['?', '#']) {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .ok()?
        .into_owned();
    if decoded.contains('\0') {
        return None;
    }
    // A trailing slash names the same directory.
    let trimmed = decoded.trim_end_matches('/');
    Some(if trimmed.is_empty() {
        "/".to_owned()
    } else {
        trimmed.to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_decode_to_absolute_paths_and_others_are_refused() {
        assert_eq!(
            file_uri_path("file:///srv/okf").as_deref(),
            Some("/srv/okf")
        );
        assert_eq!(
            file_uri_path("file:///srv/okf/").as_deref(),
            Some("/srv/okf")
        );
        assert_eq!(
            file_uri_path("file://localhost/a%20b/%D0%B6").as_deref(),
            Some("/a b/ж")
        );
        assert_eq!(file_uri_path("file:///").as_deref(), Some("/"));
        for bad in [
            "https://example.com/x",
            "file://host/x",
            "file:relative",
            "file:///a?b",
            "file:///a#b",
            "file:///a%00b",
            "file:///%ff",
        ] {
            assert_eq!(file_uri_path(bad), None, "{bad}");
        }
    }
}
