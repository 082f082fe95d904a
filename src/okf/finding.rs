//! One validator finding (spec/surface.md §13.2): what the validator ([`crate::okf::validate`])
//! reports and the parse memo ([`crate::okf::memo`]) remembers per document.

use crate::envelope::{Diagnostic, Severity};
use std::borrow::Cow;

/// One validator finding; becomes a wire diagnostic through [`Finding::to_diagnostic`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// Bundle-relative path, or `""` for bundle-level findings without a document.
    pub file: String,
    /// A code of the spec/surface.md §13.2 table.
    pub code: &'static str,
    /// A fixed sentence, or one naming the footnote label, key or link target at fault
    /// (spec/surface.md §18.3 rule 3); redacted and capped on the wire like every message.
    pub message: Cow<'static, str>,
    pub severity: Severity,
}

impl Finding {
    /// The seven-member diagnostic (spec/surface.md §6.1).
    #[must_use]
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::new(self.code, self.severity, self.message.clone().into_owned())
            .with_file(self.file.clone())
    }
}
