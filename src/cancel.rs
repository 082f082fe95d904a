//! Request cancellation (spec/store.md §14).
//!
//! A [`Cancel`] is checked at the checkpoints the spec names; it never interrupts work by
//! itself. The MCP server wires it to `notifications/cancelled` and stdin EOF; the CLI to
//! SIGINT/SIGTERM.

use crate::envelope::ToolError;
use tokio_util::sync::CancellationToken;

/// A cheap, clonable cancellation flag shared by one request's work.
#[derive(Debug, Clone, Default)]
pub struct Cancel(CancellationToken);

impl Cancel {
    /// A token that is never cancelled unless [`Cancel::cancel`] is called.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Wraps an rmcp request token.
    #[must_use]
    pub fn from_token(token: CancellationToken) -> Self {
        Self(token)
    }

    /// Marks the request cancelled.
    pub fn cancel(&self) {
        self.0.cancel();
    }

    /// Whether the request was cancelled.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    /// A checkpoint: `Err(operation_cancelled)` once cancelled.
    ///
    /// # Errors
    /// `operation_cancelled` (retryable, no diagnostics) when the request was cancelled.
    pub fn check(&self) -> Result<(), ToolError> {
        if self.is_cancelled() {
            Err(ToolError::cancelled())
        } else {
            Ok(())
        }
    }
}
