//! The framing layer between stdin and rmcp (spec/surface.md §1.1, README R39, R43).
//!
//! For every `tools/call` line it cuts the raw `params.arguments` bytes out of the frame,
//! hands rmcp `{}` instead, and keeps the raw bytes in a [`SideTable`] keyed by the request
//! id, so the dispatcher sees exactly the bytes the client sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Raw arguments of one in-flight `tools/call`, keyed by the canonical JSON text of its id.
#[derive(Debug, Clone)]
pub enum RawEntry {
    /// The raw bytes of `params.arguments` (absent → `{}`).
    Bytes(Vec<u8>),
    /// The line could not be parsed and no argument span could be delimited; the message is
    /// the `invalid_request` message to answer with.
    Fault(&'static str),
}

/// The side table shared by the framing reader and the tool handler.
#[derive(Debug, Clone, Default)]
pub struct SideTable(Arc<Mutex<HashMap<String, RawEntry>>>);

impl SideTable {
    /// Stores the entry for request `id` (its JSON text).
    pub fn insert(&self, id: String, entry: RawEntry) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(id, entry);
        }
    }
    /// Takes the entry for request `id`.
    #[must_use]
    pub fn take(&self, id: &str) -> Option<RawEntry> {
        self.0.lock().ok().and_then(|mut m| m.remove(id))
    }
    /// Number of entries held (tests: empty once every response is sent).
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// Whether no entry is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
