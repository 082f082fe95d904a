//! One validator finding (spec/surface.md §13.2): what the validator ([`crate::okf::validate`])
//! reports and the parse memo ([`crate::okf::memo`]) remembers per document.

use crate::envelope::{Diagnostic, Severity};

/// One validator finding; becomes a wire diagnostic through [`Finding::to_diagnostic`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// Bundle-relative path, or `""` for bundle-level findings without a document.
    pub file: String,
    /// A code of the spec/surface.md §13.2 table.
    pub code: &'static str,
    /// A fixed sentence, or one built from fixed parts and bundle-relative names only (never
    /// a value or document text).
    pub message: std::borrow::Cow<'static, str>,
    pub severity: Severity,
}

impl Finding {
    /// The seven-member diagnostic (spec/surface.md §6.1).
    #[must_use]
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::new(self.code, self.severity, self.message.to_string())
            .with_file(self.file.clone())
    }
}
