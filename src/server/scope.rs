//! The client's MCP `roots` (spec/surface.md §18.4 rule 2): asked with `roots/list` after
//! `notifications/initialized` and again on `notifications/roots/list_changed`, turned into
//! allowed roots ([`crate::wire::scope::set_client_roots`]), intersected with `--root`.
//!
//! Fail closed: while the first answer is awaited, tool calls wait for it (at most
//! [`FIRST_ANSWER_WAIT`]); a client that advertises `roots` but does not answer, or answers
//! with an error, leaves no directory allowed until a later answer. A root that is not a
//! `file://` URI of an accessible directory allows nothing. A client without the `roots`
//! capability changes nothing (rule 4).

use crate::wire::scope as roots;
use rmcp::service::Peer;
use rmcp::RoleServer;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Longest wait of a tool call for the client's first `roots/list` answer.
pub const FIRST_ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Longest wait for one `roots/list` answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
struct State {
    /// Whether some `roots/list` exchange has ended (answered, failed or timed out).
    settled: bool,
    /// `roots/list` exchanges under way.
    asking: usize,
}

/// The roots exchange shared by the notification handlers and the tool calls.
#[derive(Debug, Clone, Default)]
pub struct Pending(Arc<(Mutex<State>, Notify)>);

impl Pending {
    fn update(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut s) = self.0 .0.lock() {
            f(&mut s);
        }
        self.0 .1.notify_waiters();
    }

    fn quiet(&self) -> bool {
        self.0
             .0
            .lock()
            .map_or(true, |s| s.settled && s.asking == 0)
    }

    /// Waits (at most [`FIRST_ANSWER_WAIT`]) until no `roots/list` exchange is under way and
    /// one has ended, when `peer` advertises the `roots` capability; returns at once
    /// otherwise. After the wait, the roots in force are used (none, when the client never
    /// answered).
    pub async fn wait(&self, peer: &Peer<RoleServer>) {
        if !advertises_roots(peer) {
            return;
        }
        let deadline = tokio::time::Instant::now() + FIRST_ANSWER_WAIT;
        loop {
            let notified = self.0 .1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.quiet() {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                // No answer in time: nothing is allowed until one comes (fail closed).
                roots::close_if_unknown();
                return;
            }
        }
    }
}

fn advertises_roots(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|i| i.capabilities.roots.is_some())
}

/// Asks the client for its roots and installs them (spec/surface.md §18.4 rule 2); a no-op
/// for a client without the `roots` capability.
///
/// rmcp marks roots deprecated (SEP-2577, for protocol versions after 2025-11-25); clients of
/// the versions this server negotiates still send them, and the issue asks that they bound
/// the server, so the deprecated API is used on purpose.
#[allow(deprecated)]
pub async fn refresh(peer: &Peer<RoleServer>, pending: &Pending) {
    if !advertises_roots(peer) {
        return;
    }
    pending.update(|s| s.asking += 1);
    roots::close_if_unknown();
    let answer = tokio::time::timeout(ANSWER_TIMEOUT, peer.list_roots()).await;
    let uris: Vec<String> = match answer {
        Ok(Ok(list)) => list.roots.into_iter().map(|r| r.uri).collect(),
        // An error or no answer: nothing is allowed (fail closed).
        _ => Vec::new(),
    };
    roots::set_client_roots(&uris);
    pending.update(|s| {
        s.asking = s.asking.saturating_sub(1);
        s.settled = true;
    });
}
