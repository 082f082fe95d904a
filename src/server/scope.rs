//! The client's MCP `roots` (spec/surface.md §18.4 rules 2, 2a, 2b): asked with `roots/list`
//! after `notifications/initialized` and again on `notifications/roots/list_changed`, turned
//! into allowed roots ([`crate::wire::scope::set_client_roots`]), intersected with `--root`.
//!
//! - Fail closed: while an answer is awaited (the first one, or the one a `list_changed`
//!   asked for), tool calls wait for it (at most [`FIRST_ANSWER_WAIT`]); a client that
//!   advertises `roots` but does not answer in time, or answers with an error, leaves no
//!   directory allowed until a later answer. Only the newest exchange's answer is installed.
//!   A root that is not a `file://` URI of an accessible directory allows nothing, so a
//!   non-empty list without a usable root allows nothing.
//! - Rule 2a: a `[]` answer while no non-empty list has been installed in the session allows
//!   what `--root` allows (every path without it) and every answer carries the `WARN` notice
//!   `roots_empty`; a `[]` after a non-empty list allows nothing (withdrawn roots never widen
//!   the scope).
//! - Rule 2b: under protocol 2026-07-28 (a session without `initialize`, SEP-2567) roots are
//!   deprecated (SEP-2577) and never asked; `--root` is the scoping.
//! - A client without the `roots` capability changes nothing (rule 4).

use crate::wire::scope as roots;
use rmcp::service::Peer;
use rmcp::RoleServer;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Longest wait of a tool call for a pending `roots/list` answer (the first one, or the one a
/// `list_changed` asked for).
pub const FIRST_ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Longest wait for one `roots/list` answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
struct State {
    /// Generation of the newest `roots/list` exchange started (0: none yet).
    latest: u64,
    /// Generation whose answer is in force (0: none yet).
    installed: u64,
    /// A non-empty list has been installed in this session: a later `[]` allows nothing
    /// (rule 2a).
    listed: bool,
}

/// The roots exchange shared by the notification handlers and the tool calls.
#[derive(Debug, Clone, Default)]
pub struct Pending(Arc<(Mutex<State>, Notify)>);

impl Pending {
    fn update<T>(&self, f: impl FnOnce(&mut State) -> T) -> Option<T> {
        let out = self.0 .0.lock().ok().map(|mut s| f(&mut s));
        self.0 .1.notify_waiters();
        out
    }

    /// Whether the newest exchange has ended and its answer is in force. A poisoned lock
    /// reads as not quiet, so a call waits and then fails closed.
    fn quiet(&self) -> bool {
        self.0
             .0
            .lock()
            .is_ok_and(|s| s.latest > 0 && s.installed == s.latest)
    }

    /// Waits (at most [`FIRST_ANSWER_WAIT`]) until the newest `roots/list` exchange has ended,
    /// when `peer` advertises the `roots` capability; returns at once otherwise. When the
    /// wait runs out, nothing is allowed until an answer comes (fail closed: neither "no
    /// roots yet" nor the roots a `list_changed` is replacing are used).
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
                roots::close();
                return;
            }
        }
    }
}

/// Whether this server asks `peer` for its roots: the client advertised the `roots`
/// capability in `initialize`, and the session's protocol version has an `initialize`
/// handshake (before 2026-07-28; rule 2b). A 2026-07-28 session has no `initialize`, so rmcp
/// keeps no peer info for it and it is never asked; the version test says so explicitly.
fn advertises_roots(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|i| i.capabilities.roots.is_some() && i.protocol_version.has_initialize())
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
    let generation = pending.update(|s| {
        s.latest += 1;
        s.latest
    });
    roots::close_if_unknown();
    let answer = tokio::time::timeout(ANSWER_TIMEOUT, peer.list_roots()).await;
    // `None`: an error or no answer.
    let uris: Option<Vec<String>> = match answer {
        Ok(Ok(list)) => Some(list.roots.into_iter().map(|r| r.uri).collect()),
        _ => None,
    };
    // Only the newest exchange installs its answer: an older one that ends later (or times
    // out later) never overwrites it.
    pending.update(|s| {
        if Some(s.latest) == generation {
            match &uris {
                // An error or no answer: nothing is allowed (fail closed).
                None => roots::close(),
                // A first empty list: only --root applies, with the roots_empty notice.
                Some(list) if list.is_empty() && !s.listed => roots::set_first_empty(),
                // A list (usable roots or not), or `[]` after a non-empty list (nothing).
                Some(list) => {
                    s.listed |= !list.is_empty();
                    roots::set_client_roots(list);
                }
            }
            s.installed = s.latest;
        }
    });
}
