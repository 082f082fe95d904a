//! The framing layer between stdin and rmcp (spec/surface.md §1.1, README R39, R43).
//!
//! rmcp decodes every frame into a map (duplicate keys lost), drops lines over 16 MiB, ignores
//! lines that are not JSON and answers non-object `arguments` with −32600
//! (spec/rust-notes.md §2). This layer owns stdin instead:
//!
//! 1. [`pump_input`] reads LF-terminated lines, buffering at most [`MAX_LINE`] bytes of one
//!    line; the rest of a longer line is discarded up to its newline.
//! 2. [`scan`] is a byte-level scanner (no UTF-8 assumption) that finds `method`, `id`,
//!    `params.name`, `params._meta` and the byte span of `params.arguments`.
//! 3. [`frame_line`] decides what rmcp sees: for a `tools/call` of a registered tool the
//!    arguments span is replaced by `{}` and the raw bytes go into the [`SideTable`] keyed by
//!    the canonical JSON text of the request id ([`id_key`]); broken lines with a recoverable
//!    id and tool name are rebuilt into well-formed frames (keeping a complete `_meta` object)
//!    whose entry makes the handler answer the tool error; other broken lines are ignored.
//! 4. [`pump_output`] copies rmcp's frames to stdout unchanged and removes the side-table
//!    entry of every response id once it is written.
//!
//! 5. Lines rmcp would drop without an answer get one here (spec/surface.md §18.8): −32700
//!    for a line that is not JSON, −32600 for a batch or a non-JSON-RPC object; blank lines
//!    and malformed notifications get none. [`pump_output`] writes these replies between
//!    rmcp's frames, so stdout keeps one writer.
//!
//! Invariants: argument bytes never travel inside a frame rmcp reads; nothing here touches
//! the bundle (step 7).

use crate::envelope::ToolError;
use crate::wire::raw;
use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::RxJsonRpcMessage;
use rmcp::RoleServer;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

/// Longest line buffered, in bytes, excluding the newline: 72 MiB (spec/surface.md §1.1
/// step 1). Exactly 72 MiB is kept whole.
pub const MAX_LINE: usize = 72 * 1024 * 1024;

/// Lines longer than this are framed on the blocking pool instead of a runtime worker.
const BLOCKING_FRAME_THRESHOLD: usize = 1024 * 1024;

/// Raw arguments of one in-flight `tools/call` (spec/surface.md §1.1 steps 1, 3, 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawEntry {
    /// A well-formed frame: the raw bytes of `params.arguments` (absent → `{}`), passed to
    /// the dispatcher as they are.
    Bytes(Vec<u8>),
    /// A rebuilt frame (step 4): the line was not valid UTF-8 or not JSON. `span` holds the
    /// raw `params.arguments` bytes when the scanner could still delimit them; the handler
    /// passes them to the boundary, and answers `invalid_request` with `message` when the
    /// boundary finds no fault there (or there is no span).
    Broken {
        span: Option<Vec<u8>>,
        message: &'static str,
    },
    /// A frame fault with a fixed `invalid_request` message (a duplicate `params.arguments`
    /// member: answered as a duplicate key).
    Fault(&'static str),
    /// The line exceeded [`MAX_LINE`]; answered with `resource_limit` (§9.2 row 1).
    TooLong,
}

impl RawEntry {
    /// The tool error this entry stands for when it carries no arguments to dispatch.
    ///
    /// Returns `Ok(bytes)` for the bytes the dispatcher must run on (a well-formed frame, or a
    /// delimited span of a broken line in which the boundary finds a fault, so MCP and CLI
    /// answer identically), else `Err(tool error)`.
    ///
    /// # Errors
    /// `invalid_request` (broken line without a boundary fault, frame faults) or
    /// `resource_limit` (over-long line).
    pub fn into_arguments(self) -> Result<Vec<u8>, ToolError> {
        match self {
            RawEntry::Bytes(b) => Ok(b),
            RawEntry::Broken { span, message } => match span {
                Some(s) if raw::decode_arguments(&s).is_err() => Ok(s),
                _ => Err(ToolError::invalid_request(message)),
            },
            RawEntry::Fault(message) => Err(ToolError::invalid_request(message)),
            RawEntry::TooLong => Err(ToolError::resource_limit(raw::MSG_TOO_LARGE)),
        }
    }
}

/// The side table shared by the framing reader, the tool handler and the output writer:
/// canonical id text ([`id_key`]) → [`RawEntry`], plus the ids of the `tools/call` requests
/// forwarded and not answered yet (stdin EOF waits for them, spec/surface.md §18.7 rule 4).
#[derive(Debug, Clone, Default)]
pub struct SideTable {
    entries: Arc<Mutex<HashMap<String, RawEntry>>>,
    unanswered: Arc<Mutex<HashSet<String>>>,
}

/// How often [`SideTable::answered_all`] looks again.
const SETTLE_POLL: std::time::Duration = std::time::Duration::from_millis(5);

impl SideTable {
    /// Stores the entry for request `id` (its canonical JSON text); the request counts as
    /// unanswered until [`SideTable::answered`].
    pub fn insert(&self, id: String, entry: RawEntry) {
        if let Ok(mut u) = self.unanswered.lock() {
            u.insert(id.clone());
        }
        if let Ok(mut m) = self.entries.lock() {
            m.insert(id, entry);
        }
    }
    /// Takes (removes and returns) the entry for request `id`.
    #[must_use]
    pub fn take(&self, id: &str) -> Option<RawEntry> {
        self.entries.lock().ok().and_then(|mut m| m.remove(id))
    }
    /// The response for request `id` is written, or the request was cancelled: removes its
    /// entry, and it no longer counts as unanswered.
    pub fn answered(&self, id: &str) {
        let _ = self.take(id);
        if let Ok(mut u) = self.unanswered.lock() {
            u.remove(id);
        }
    }
    /// Resolves once every request given an entry has been answered or cancelled.
    pub async fn answered_all(&self) {
        while self
            .unanswered
            .lock()
            .map(|u| !u.is_empty())
            .unwrap_or(false)
        {
            tokio::time::sleep(SETTLE_POLL).await;
        }
    }
    /// Number of entries held (tests: empty once every response is sent).
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// Whether no entry is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The side-table key of a request id: its canonical JSON text (`7`, `"abc"`), the same for
/// the framing reader, rmcp's `RequestContext::id` and the response writer.
#[must_use]
pub fn id_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// What the byte-level scanner found in one line. Spans are byte ranges of the line; a
/// member is recorded only when its value was delimited completely.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scan {
    /// `method`, when it is a complete JSON string.
    pub method: Option<String>,
    /// Span of the top-level `id` value.
    pub id: Option<Range<usize>>,
    /// `params.name`, when it is a complete JSON string.
    pub name: Option<String>,
    /// Span of `params._meta`.
    pub meta: Option<Range<usize>>,
    /// Span of `params.arguments`.
    pub arguments: Option<Range<usize>>,
    /// `method`, `id`, `params` or `params.name` appeared twice: the request is ambiguous.
    pub duplicate_core: bool,
    /// `params.arguments` appeared twice.
    pub duplicate_arguments: bool,
    /// `params._meta` appeared twice (no `_meta` is carried over).
    pub duplicate_meta: bool,
}

fn ws(s: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = s.get(i) {
        i += 1;
    }
    i
}

/// End (exclusive) of the string starting at `s[i] == '"'`.
fn skip_string(s: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match s.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
}

/// End (exclusive) of the value starting at `i`, delimited at the byte level: strings and
/// balanced brackets; a scalar runs to the next delimiter, which must exist.
fn skip_value(s: &[u8], i: usize) -> Option<usize> {
    match s.get(i)? {
        b'"' => skip_string(s, i),
        b'{' | b'[' => {
            let mut stack: Vec<u8> = Vec::new();
            let mut j = i;
            loop {
                match s.get(j)? {
                    b'"' => {
                        j = skip_string(s, j)?;
                        continue;
                    }
                    b @ (b'{' | b'[') => stack.push(*b),
                    // The guard pops; a matching bracket falls through to `_`.
                    b'}' if stack.pop()? != b'{' => return None,
                    b']' if stack.pop()? != b'[' => return None,
                    _ => {}
                }
                j += 1;
                if stack.is_empty() {
                    return Some(j);
                }
            }
        }
        _ => {
            let mut j = i;
            while let Some(b) = s.get(j) {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                j += 1;
            }
            (j > i && j < s.len()).then_some(j)
        }
    }
}

/// Walks the members of the object starting at `s[i] == '{'`; `on_member(key, value_start)`
/// returns the value's end or `None` to stop. Returns the object's end when it closed.
fn scan_object(
    s: &[u8],
    i: usize,
    on_member: &mut dyn FnMut(&str, usize) -> Option<usize>,
) -> Option<usize> {
    let mut j = ws(s, i + 1);
    if s.get(j) == Some(&b'}') {
        return Some(j + 1);
    }
    loop {
        if s.get(j) != Some(&b'"') {
            return None;
        }
        let ke = skip_string(s, j)?;
        // Keys compare after unescaping; an undecodable key matches nothing.
        let key: String = serde_json::from_slice(&s[j..ke]).unwrap_or_else(|_| "\0".to_owned());
        j = ws(s, ke);
        if s.get(j) != Some(&b':') {
            return None;
        }
        j = ws(s, j + 1);
        let ve = on_member(&key, j)?;
        j = ws(s, ve);
        match s.get(j)? {
            b',' => j = ws(s, j + 1),
            b'}' => return Some(j + 1),
            _ => return None,
        }
    }
}

fn json_string(s: &[u8], r: Range<usize>) -> Option<String> {
    serde_json::from_slice(&s[r]).ok()
}

/// Scans one line (BOM and trailing CR already stripped) at the byte level, recording what it
/// meets until the first syntax fault (spec/surface.md §1.1 step 2).
#[must_use]
pub fn scan(line: &[u8]) -> Scan {
    let mut sc = Scan::default();
    let i = ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return sc;
    }
    let mut seen: HashSet<String> = HashSet::new();
    let _ = scan_object(line, i, &mut |key, vs| {
        let tracked = matches!(key, "method" | "id" | "params");
        if tracked && !seen.insert(key.to_owned()) {
            sc.duplicate_core = true;
        }
        match key {
            "method" => {
                let e = skip_value(line, vs)?;
                sc.method = json_string(line, vs..e);
                Some(e)
            }
            "id" => {
                let e = skip_value(line, vs)?;
                sc.id = Some(vs..e);
                Some(e)
            }
            "params" if line.get(vs) == Some(&b'{') => {
                let mut pseen: HashSet<String> = HashSet::new();
                scan_object(line, vs, &mut |pkey, pvs| {
                    let first = pseen.insert(pkey.to_owned());
                    match pkey {
                        "name" => {
                            sc.duplicate_core |= !first;
                            let e = skip_value(line, pvs)?;
                            sc.name = json_string(line, pvs..e);
                            Some(e)
                        }
                        "arguments" => {
                            sc.duplicate_arguments |= !first;
                            let e = skip_value(line, pvs)?;
                            if first {
                                sc.arguments = Some(pvs..e);
                            }
                            Some(e)
                        }
                        "_meta" => {
                            sc.duplicate_meta |= !first;
                            let e = skip_value(line, pvs)?;
                            sc.meta = Some(pvs..e);
                            Some(e)
                        }
                        _ => skip_value(line, pvs),
                    }
                })
            }
            _ => skip_value(line, vs),
        }
    });
    sc
}

/// What to do with one input line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Framed {
    /// The frame handed to rmcp (without the newline); `None` = the line is ignored.
    pub forward: Option<Vec<u8>>,
    /// A side-table entry to insert before forwarding.
    pub entry: Option<(String, RawEntry)>,
    /// A side-table key to remove (`notifications/cancelled`).
    pub cancel: Option<String>,
    /// A JSON-RPC error response (without the newline) the server writes itself for a line
    /// rmcp would silently drop (spec/surface.md §18.8): −32700 for a line that is not
    /// JSON, −32600 for a batch or an object that is not a JSON-RPC 2.0 message.
    pub reply: Option<Vec<u8>>,
}

/// Strips a leading UTF-8 BOM and a trailing CR, as rmcp does.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Decides what rmcp sees for one line (spec/surface.md §1.1 steps 1–6).
///
/// `line` excludes the newline; `truncated` says the line exceeded [`MAX_LINE`] and `line`
/// is its first [`MAX_LINE`] bytes. `registered` tells whether a tool name is registered.
#[must_use]
pub fn frame_line(line: &[u8], truncated: bool, registered: &dyn Fn(&str) -> bool) -> Framed {
    let line = trim_line(line);
    if truncated {
        return frame_truncated(&scan(line), line, registered);
    }
    // A blank line is no message: no reply (spec/surface.md §18.8).
    if line.iter().all(u8::is_ascii_whitespace) {
        return Framed::default();
    }
    let sc = scan(line);
    match sc.method.as_deref() {
        Some("notifications/cancelled") => Framed {
            forward: Some(line.to_vec()),
            entry: None,
            cancel: cancelled_key(line),
            reply: None,
        },
        Some("tools/call") => frame_call(&sc, line, registered),
        _ => frame_other(&sc, line),
    }
}

/// JSON-RPC error code of a line that is not JSON (spec/surface.md §18.8).
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC error code of a batch or an object that is not a JSON-RPC 2.0 message.
pub const INVALID_REQUEST: i64 = -32600;

/// The error response `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`.
fn error_reply(id: Value, code: i64, message: &str) -> Vec<u8> {
    let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    serde_json::to_vec(&v).unwrap_or_default()
}

/// A line whose request cannot be recovered. Not JSON: −32700 with `id: null`, except a
/// malformed notification (the scanner read a `method` and no `id` before the fault), which
/// gets no reply. JSON (e.g. a `tools/call` with two `id` members): ignored, as before.
fn unreadable(sc: &Scan, line: &[u8]) -> Framed {
    let json = serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok();
    if json || (sc.method.is_some() && sc.id.is_none()) {
        return Framed::default();
    }
    Framed {
        reply: Some(error_reply(
            Value::Null,
            PARSE_ERROR,
            "Parse error: the line is not valid JSON; send one JSON-RPC 2.0 object per line",
        )),
        ..Framed::default()
    }
}

/// The id to echo in a −32600 reply (spec/surface.md §18.8, issue 25 item 4): the `id`
/// member when it is a string or an integer that fits i64 (the ids MCP allows; an integral
/// number written as `5.0` is the integer 5, as rmcp reads it), else `null` (`1.5`, `1e308`,
/// 2^64, `true`, `null`, an object or an array). The reply always carries an `id` member.
fn reply_id(o: &serde_json::Map<String, Value>) -> Value {
    match o.get("id") {
        Some(v @ Value::String(_)) => v.clone(),
        Some(v) => int_id(v).map_or(Value::Null, Value::from),
        None => Value::Null,
    }
}

/// The integer an `id` number stands for, when it fits i64 (`5` and `5.0` are 5).
fn int_id(v: &Value) -> Option<i64> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    v.as_i64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && (-LIMIT..LIMIT).contains(f))
            // In range and integral: the cast is exact.
            .map(|f| f as i64)
    })
}

/// Whether `id` is an id MCP accepts: a string or an integer that fits i64.
fn valid_id(id: &Value) -> bool {
    id.is_string() || int_id(id).is_some()
}

/// Whether `o` is a well-formed JSON-RPC 2.0 request, notification or response (what rmcp
/// is handed); `Err(reply)` with the −32600 answer, or `Err(None)` for a malformed
/// notification (no `id`: no reply).
fn check_message(o: &serde_json::Map<String, Value>) -> Result<(), Option<Vec<u8>>> {
    let v2 = o.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let method = o.get("method").is_some_and(Value::is_string);
    let response = o.contains_key("id") && (o.contains_key("result") || o.contains_key("error"));
    if v2 && response {
        return Ok(());
    }
    if v2 && method {
        // Decision (issue 25 item 4): an object without an `id` member is a notification and
        // never gets a reply, whatever else is wrong with it (e.g. `params: []`); a request
        // whose `id` is not a string or an i64 integer is an Invalid Request (−32600,
        // `"id": null`), even when the rest is valid; a request rmcp cannot read (e.g.
        // `params` not an object) gets −32600 with its id here, since rmcp's own reply
        // carries no `id` member.
        let Some(id) = o.get("id") else {
            let readable =
                serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(Value::Object(o.clone()))
                    .is_ok();
            return if readable { Ok(()) } else { Err(None) };
        };
        if !valid_id(id) {
            return Err(Some(error_reply(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: `id` must be a string or an integer",
            )));
        }
        let readable =
            serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(Value::Object(o.clone()))
                .is_ok();
        if readable {
            return Ok(());
        }
        return Err(Some(error_reply(
            reply_id(o),
            INVALID_REQUEST,
            "Invalid Request: the request's `params` do not fit its `method`",
        )));
    }
    if method && !o.contains_key("id") {
        return Err(None);
    }
    let why = if v2 {
        "Invalid Request: a JSON-RPC request needs a string `method`"
    } else {
        "Invalid Request: the object is not JSON-RPC 2.0 (\"jsonrpc\": \"2.0\" is required)"
    };
    Err(Some(error_reply(reply_id(o), INVALID_REQUEST, why)))
}

/// Any line but a `tools/call` or a cancellation: a well-formed JSON-RPC message goes to
/// rmcp as sent; anything else is answered here (spec/surface.md §18.8) or, for a malformed
/// notification, dropped.
fn frame_other(sc: &Scan, line: &[u8]) -> Framed {
    let reply = match serde_json::from_slice::<Value>(line) {
        Err(_) => return unreadable(sc, line),
        Ok(Value::Object(o)) => match check_message(&o) {
            Ok(()) => {
                return Framed {
                    forward: Some(line.to_vec()),
                    ..Framed::default()
                }
            }
            Err(reply) => reply,
        },
        Ok(Value::Array(_)) => Some(error_reply(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: batches are not supported; send one JSON-RPC object per line",
        )),
        Ok(_) => Some(error_reply(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a JSON-RPC message is a JSON object",
        )),
    };
    Framed {
        reply,
        ..Framed::default()
    }
}

/// The `requestId` of a `notifications/cancelled` line, as a side-table key.
fn cancelled_key(line: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let id: RequestId = serde_json::from_value(v.get("params")?.get("requestId")?.clone()).ok()?;
    Some(id_key(&id))
}

fn frame_call(sc: &Scan, line: &[u8], registered: &dyn Fn(&str) -> bool) -> Framed {
    // A duplicate `id`, `method`, `params` or `params.name` leaves the id or the tool name
    // unrecoverable: the line is ignored, never handed to rmcp (§1.1 step 6).
    if sc.duplicate_core {
        return unreadable(sc, line);
    }
    let modified: Vec<u8> = match &sc.arguments {
        Some(r) => {
            let mut m = Vec::with_capacity(line.len() - r.len() + 2);
            m.extend_from_slice(&line[..r.start]);
            m.extend_from_slice(b"{}");
            m.extend_from_slice(&line[r.end..]);
            m
        }
        None => line.to_vec(),
    };
    // Step 4 applies when the line, with its arguments span set aside, is not valid UTF-8
    // or not JSON (the span's own faults are the boundary's to report).
    let outer = std::str::from_utf8(&modified)
        .ok()
        .and_then(|_| serde_json::from_slice::<Value>(&modified).ok());
    let Some(outer) = outer.filter(|_| !sc.duplicate_arguments) else {
        return rebuild(sc, line, registered);
    };
    if let Value::Object(o) = &outer {
        if let Err(reply) = check_message(o) {
            return Framed {
                reply,
                ..Framed::default()
            };
        }
    }
    let parsed = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(&modified);
    let mut out = Framed {
        forward: Some(modified),
        ..Framed::default()
    };
    // A frame rmcp will deliver to the handler gets its entry; any other shape is answered
    // (or ignored) by rmcp itself and gets none.
    if let Ok(JsonRpcMessage::Request(req)) = parsed {
        if let ClientRequest::CallToolRequest(call) = &req.request {
            if registered(&call.params.name) {
                let bytes = sc
                    .arguments
                    .as_ref()
                    .map_or_else(|| b"{}".to_vec(), |r| line[r.clone()].to_vec());
                out.entry = Some((id_key(&req.id), RawEntry::Bytes(bytes)));
            }
        }
    }
    out
}

/// The recoverable id and tool name of a broken line, with the frame rebuilt from them
/// (spec/surface.md §1.1 steps 4 and 5).
fn rebuilt_frame(sc: &Scan, line: &[u8]) -> Option<(String, String, Vec<u8>)> {
    if sc.duplicate_core {
        return None;
    }
    let id: RequestId = serde_json::from_slice(&line[sc.id.clone()?]).ok()?;
    let name = sc.name.clone()?;
    let meta: Option<Value> = match (&sc.meta, sc.duplicate_meta) {
        (Some(r), false) => serde_json::from_slice::<Value>(&line[r.clone()])
            .ok()
            .filter(Value::is_object),
        _ => None,
    };
    let mut params = serde_json::Map::new();
    params.insert("name".into(), Value::String(name.clone()));
    params.insert("arguments".into(), Value::Object(serde_json::Map::new()));
    if let Some(m) = meta {
        params.insert("_meta".into(), m);
    }
    let mut frame = serde_json::Map::new();
    frame.insert("jsonrpc".into(), Value::String("2.0".into()));
    frame.insert("id".into(), serde_json::to_value(&id).ok()?);
    frame.insert("method".into(), Value::String("tools/call".into()));
    frame.insert("params".into(), Value::Object(params));
    let bytes = serde_json::to_vec(&Value::Object(frame)).ok()?;
    Some((id_key(&id), name, bytes))
}

fn rebuild(sc: &Scan, line: &[u8], registered: &dyn Fn(&str) -> bool) -> Framed {
    let Some((key, name, frame)) = rebuilt_frame(sc, line) else {
        return unreadable(sc, line);
    };
    let entry = registered(&name).then(|| {
        let e = if sc.duplicate_arguments {
            RawEntry::Fault(raw::MSG_DUPLICATE_KEY)
        } else {
            RawEntry::Broken {
                span: sc.arguments.as_ref().map(|r| line[r.clone()].to_vec()),
                message: if std::str::from_utf8(line).is_ok() {
                    raw::MSG_NOT_JSON
                } else {
                    raw::MSG_INVALID_UTF8
                },
            }
        };
        (key, e)
    });
    Framed {
        forward: Some(frame),
        entry,
        cancel: None,
        reply: None,
    }
}

fn frame_truncated(sc: &Scan, line: &[u8], registered: &dyn Fn(&str) -> bool) -> Framed {
    // Only a line that may be a tools/call: method read as such, or not read before the cut.
    if sc.method.as_deref().is_some_and(|m| m != "tools/call") {
        return Framed::default();
    }
    let Some((key, name, frame)) = rebuilt_frame(sc, line) else {
        return Framed::default();
    };
    Framed {
        forward: Some(frame),
        entry: registered(&name).then_some((key, RawEntry::TooLong)),
        cancel: None,
        reply: None,
    }
}

/// Reads `input` line by line, frames every line and writes the frames to `to_rmcp`
/// (spec/surface.md §1.1); the error responses of §18.8 go to `replies`, which
/// [`pump_output`] writes. On EOF (or a read error) it stops reading, waits until every
/// `tools/call` it forwarded has been answered (or cancelled by the client), so the requests
/// in flight finish and are answered (spec/surface.md §18.7 rule 4), then cancels `on_eof`
/// and closes `to_rmcp`, so rmcp sees EOF too. When rmcp stops taking frames it does not
/// wait. Signals do not pass here: the server stops without this reader (`serve_io`).
pub async fn pump_input<R, W>(
    input: R,
    mut to_rmcp: W,
    side: SideTable,
    registered: fn(&str) -> bool,
    on_eof: CancellationToken,
    replies: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(256 * 1024, input);
    let mut buf: Vec<u8> = Vec::new();
    let mut truncated = false;
    let mut rmcp_gone = false;
    loop {
        let (consumed, complete) = {
            let Ok(avail) = reader.fill_buf().await else {
                break;
            };
            if avail.is_empty() {
                // EOF; an unterminated trailing line is dropped, as rmcp does.
                break;
            }
            let newline = avail.iter().position(|b| *b == b'\n');
            let content = newline.unwrap_or(avail.len());
            if !truncated {
                let room = MAX_LINE - buf.len();
                let n = content.min(room);
                buf.extend_from_slice(&avail[..n]);
                truncated = n < content;
            }
            (newline.map_or(avail.len(), |p| p + 1), newline.is_some())
        };
        reader.consume(consumed);
        if !complete {
            continue;
        }
        let line = std::mem::take(&mut buf);
        let was_truncated = std::mem::replace(&mut truncated, false);
        let framed = if line.len() > BLOCKING_FRAME_THRESHOLD {
            tokio::task::spawn_blocking(move || frame_line(&line, was_truncated, &registered))
                .await
                .unwrap_or_default()
        } else {
            frame_line(&line, was_truncated, &registered)
        };
        if let Some(k) = framed.cancel {
            side.answered(&k);
        }
        if let Some((k, e)) = framed.entry {
            side.insert(k, e);
        }
        if let Some(r) = framed.reply {
            let _ = replies.send(r);
        }
        if let Some(f) = framed.forward {
            if to_rmcp.write_all(&f).await.is_err()
                || to_rmcp.write_all(b"\n").await.is_err()
                || to_rmcp.flush().await.is_err()
            {
                rmcp_gone = true;
                break;
            }
        }
    }
    if !rmcp_gone {
        side.answered_all().await;
    }
    on_eof.cancel();
    let _ = to_rmcp.shutdown().await;
}

/// The side-table key of the `id` of one outgoing frame, if it has one.
#[must_use]
pub fn response_id_key(frame: &[u8]) -> Option<String> {
    let sc = scan(trim_line(frame.strip_suffix(b"\n").unwrap_or(frame)));
    let id: RequestId = serde_json::from_slice(&frame[sc.id?]).ok()?;
    Some(id_key(&id))
}

/// Copies rmcp's output frames to `out` unchanged, flushing after each, and removes the
/// side-table entry of each response as it is written (spec/surface.md §1.1 step 3); between
/// them it writes the framing layer's own error responses from `replies` (§18.8), so stdout
/// has this one writer and frames never interleave. Returns when rmcp closes its side, after
/// the replies still queued.
pub async fn pump_output<R, W>(
    from_rmcp: R,
    mut out: W,
    side: SideTable,
    mut replies: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(from_rmcp);
    // `read_until` is cancel-safe when its buffer is kept: a frame read in part when a reply
    // wins the race is continued on the next turn.
    let mut line: Vec<u8> = Vec::new();
    let mut out_ok = true;
    let mut replies_open = true;
    loop {
        let frame = tokio::select! {
            biased;
            // A reply first: it answers a line read before any frame rmcp writes now.
            reply = replies.recv(), if replies_open => match reply {
                Some(mut r) => {
                    r.push(b'\n');
                    r
                }
                None => {
                    replies_open = false;
                    continue;
                }
            },
            r = reader.read_until(b'\n', &mut line) => match r {
                Ok(0) | Err(_) => break,
                Ok(_) => std::mem::take(&mut line),
            },
        };
        // The handler has taken its entry or never will: the response is going out now.
        if let Some(k) = response_id_key(&frame) {
            side.answered(&k);
        }
        if out_ok {
            out_ok = out.write_all(&frame).await.is_ok() && out.flush().await.is_ok();
        }
    }
    while let Ok(mut r) = replies.try_recv() {
        r.push(b'\n');
        if out_ok {
            out_ok = out.write_all(&r).await.is_ok();
        }
    }
    let _ = out.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(name: &str) -> bool {
        name == "list_concepts"
    }

    fn frame(line: &[u8]) -> Framed {
        frame_line(line, false, &reg)
    }

    #[test]
    fn scanner_finds_members_and_the_arguments_span() {
        let l = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"a":[1,"}"]},"name":"list_concepts","arguments":{"x":"\"]}"}}}"#;
        let sc = scan(l);
        assert_eq!(sc.method.as_deref(), Some("tools/call"));
        assert_eq!(&l[sc.id.clone().expect("id")], b"7");
        assert_eq!(sc.name.as_deref(), Some("list_concepts"));
        assert_eq!(&l[sc.meta.clone().expect("meta")], br#"{"a":[1,"}"]}"#);
        assert_eq!(&l[sc.arguments.clone().expect("args")], br#"{"x":"\"]}"}"#);
    }

    #[test]
    fn scanner_keeps_what_it_read_before_a_break_and_ignores_invalid_utf8() {
        let l = b"{\"id\":\"a\xff\",\"method\":\"tools/call\",\"params\":{\"name\":\"list_concepts\",\"arguments\":{\"k\":\"\xfe\"}},";
        let sc = scan(l);
        assert_eq!(&l[sc.id.clone().expect("id")], b"\"a\xff\"");
        assert_eq!(sc.method.as_deref(), Some("tools/call"));
        assert_eq!(sc.name.as_deref(), Some("list_concepts"));
        assert_eq!(&l[sc.arguments.clone().expect("args")], b"{\"k\":\"\xfe\"}");
        // An unbalanced arguments value cannot be delimited.
        let sc =
            scan(br#"{"id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[}}}"#);
        assert_eq!(sc.arguments, None);
        assert_eq!(sc.name.as_deref(), Some("x"));
    }

    #[test]
    fn sto_22_a_32600_reply_echoes_only_string_and_i64_ids_and_malformed_notifications_get_none() {
        let id_of = |line: &[u8]| -> Option<Value> {
            let r = frame(line).reply?;
            let v: Value = serde_json::from_slice(&r).ok()?;
            assert_eq!(v["error"]["code"], INVALID_REQUEST, "{v}");
            v.as_object()?.get("id").cloned()
        };
        for id in [
            "1.5",
            "18446744073709551616",
            "1e308",
            "{}",
            "[]",
            "true",
            "null",
        ] {
            let l = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(id_of(l.as_bytes()), Some(Value::Null), "{l}");
            assert!(
                frame(l.as_bytes()).forward.is_none(),
                "{l}: not handed to rmcp"
            );
        }
        for (id, want) in [
            ("9", serde_json::json!(9)),
            ("9.0", serde_json::json!(9)),
            (r#""q""#, serde_json::json!("q")),
        ] {
            let l = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":[]}}"#);
            assert_eq!(id_of(l.as_bytes()), Some(want), "{l}");
            let ok = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let f = frame(ok.as_bytes());
            assert!(f.reply.is_none() && f.forward.is_some(), "{ok}");
        }
        for params in ["[]", r#""x""#, "7", "true"] {
            let l = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized","params":{params}}}"#
            );
            let f = frame(l.as_bytes());
            assert!(f.reply.is_none() && f.forward.is_none(), "{l}: {f:?}");
        }
        let ok = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(
            frame(ok).forward.is_some(),
            "a well-formed notification goes to rmcp"
        );
    }

    #[test]
    fn well_formed_call_hands_rmcp_empty_arguments_and_keeps_raw_bytes() {
        let l = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_concepts","arguments":{"a":1,"a":2},"_meta":{"progressToken":1}}}"#;
        let f = frame(l);
        assert_eq!(
            f.forward.as_deref(),
            Some(&br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_concepts","arguments":{},"_meta":{"progressToken":1}}}"#[..])
        );
        assert_eq!(
            f.entry,
            Some(("3".into(), RawEntry::Bytes(br#"{"a":1,"a":2}"#.to_vec())))
        );
        // Absent arguments → `{}`; non-object arguments are kept for the boundary.
        let f = frame(br#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"list_concepts"}}"#);
        assert_eq!(
            f.entry,
            Some(("\"s\"".into(), RawEntry::Bytes(b"{}".to_vec())))
        );
        let f = frame(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_concepts","arguments":null}}"#);
        assert_eq!(
            f.entry,
            Some(("4".into(), RawEntry::Bytes(b"null".to_vec())))
        );
        // Ids in float form are the same request id for rmcp.
        let f = frame(br#"{"jsonrpc":"2.0","id":5.0,"method":"tools/call","params":{"name":"list_concepts","arguments":[]}}"#);
        assert_eq!(f.entry, Some(("5".into(), RawEntry::Bytes(b"[]".to_vec()))));
    }

    #[test]
    fn member_names_compare_after_unescaping_and_in_any_order() {
        let l = br#"{"params":{"argument\u0073":{"a":1},"n\u0061me":"list_concepts"},"\u0069d":6,"jsonrpc":"2.0","method":"tools/call"}"#;
        let f = frame(l);
        assert_eq!(
            f.entry,
            Some(("6".into(), RawEntry::Bytes(br#"{"a":1}"#.to_vec())))
        );
        let fwd: Value = serde_json::from_slice(&f.forward.expect("frame")).expect("json");
        assert_eq!(fwd["params"]["arguments"], serde_json::json!({}));
    }

    #[test]
    fn unknown_tools_and_other_methods_pass_without_entry() {
        let f = frame(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{"a":1}}}"#);
        assert_eq!(
            f.forward.as_deref(),
            Some(&br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#[..])
        );
        assert_eq!(f.entry, None);
        let l = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert_eq!(frame(l).forward.as_deref(), Some(&l[..]));
        assert_eq!(frame(l).entry, None);
    }

    #[test]
    fn broken_lines_with_recoverable_id_and_name_are_rebuilt() {
        // Invalid UTF-8 inside the arguments: the span goes to the boundary.
        let l = b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"list_concepts\",\"arguments\":{\"a\":\"\xff\"},\"_meta\":{\"k\":1}}}";
        let f = frame(l);
        assert_eq!(
            f.forward.as_deref(),
            Some(&br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_concepts","arguments":{},"_meta":{"k":1}}}"#[..])
        );
        let (k, e) = f.entry.expect("entry");
        assert_eq!(k, "9");
        assert_eq!(e.clone().into_arguments(), Ok(b"{\"a\":\"\xff\"}".to_vec()));
        // Valid arguments but the line breaks elsewhere.
        let l = br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_concepts","arguments":{"a":1},"_meta":{"k":}}}"#;
        let f = frame(l);
        assert!(f.forward.is_some());
        let (_, e) = f.entry.expect("entry");
        let err = e.into_arguments().expect_err("a tool error");
        assert_eq!(
            (err.code.as_str(), err.message.as_str()),
            ("invalid_request", raw::MSG_NOT_JSON)
        );
        // Not UTF-8 outside the arguments.
        let l = b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"list_concepts\",\"arguments\":{},\"_meta\":{\"k\":\"\xff\"}}}";
        let (_, e) = frame(l).entry.expect("entry");
        assert_eq!(
            e.into_arguments().expect_err("err").message,
            raw::MSG_INVALID_UTF8
        );
        // Lone surrogate inside arguments: valid UTF-8 line, boundary fault in the span.
        let l = br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"list_concepts","arguments":{"a":"\ud800"}}}"#;
        let f = frame(l);
        let (_, e) = f.entry.expect("entry");
        assert_eq!(e, RawEntry::Bytes(br#"{"a":"\ud800"}"#.to_vec()));
    }

    #[test]
    fn duplicate_name_or_id_in_a_well_formed_call_is_ignored() {
        let reg = |n: &str| n == "list_concepts" || n == "read_concept";
        for line in [
            &br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"list_concepts","name":"read_concept","arguments":{}}}"#[..],
            &br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_concepts","arguments":{}},"id":10}"#[..],
        ] {
            let f = frame_line(line, false, &reg);
            assert!(f.forward.is_none() && f.entry.is_none(), "{}", String::from_utf8_lossy(line));
        }
    }

    /// The reply of `f`, parsed.
    fn reply(f: &Framed) -> Value {
        serde_json::from_slice(f.reply.as_deref().expect("a reply")).expect("JSON reply")
    }

    #[test]
    fn unrecoverable_lines_get_a_parse_error_or_nothing() {
        // A malformed notification (a method, no id): no reply.
        let l = b"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"list_concepts\",\"arguments\":{}},";
        assert_eq!(frame(l), Framed::default());
        // Not JSON, the request unrecoverable: −32700 with id null, nothing forwarded.
        for l in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":{}},"[..],
            b"{\"id\":1,\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"list_concepts\"}}x",
        ] {
            let f = frame(l);
            assert!(f.forward.is_none() && f.entry.is_none(), "{}", String::from_utf8_lossy(l));
            let r = reply(&f);
            assert_eq!(r["error"]["code"], PARSE_ERROR);
            assert_eq!(r["id"], Value::Null);
            assert_eq!(r["jsonrpc"], "2.0");
        }
        // Valid JSON with two ids: ignored, as before.
        let l = br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"list_concepts"}}"#;
        assert_eq!(frame(l), Framed::default());
    }

    #[test]
    fn sto_21_unreadable_lines_get_json_rpc_errors() {
        // Not JSON at all.
        for l in [
            &b"\xff\xfe"[..],
            b"not json",
            b"{\"jsonrpc\":\"2.0\",\"id\":{,\"method\":\"tools/call\"",
        ] {
            let f = frame(l);
            assert!(f.forward.is_none(), "{}", String::from_utf8_lossy(l));
            let r = reply(&f);
            assert_eq!(
                (r["error"]["code"].clone(), r["id"].clone()),
                (PARSE_ERROR.into(), Value::Null)
            );
        }
        // A batch, a non-object, an object that is not JSON-RPC 2.0: −32600, the id echoed.
        for (l, id) in [
            (&br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#[..], Value::Null),
            (b"42", Value::Null),
            (br#"{"id":7,"method":"ping"}"#, serde_json::json!(7)),
            (br#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#, serde_json::json!("a")),
            (br#"{"jsonrpc":"2.0","id":8}"#, serde_json::json!(8)),
            (br#"{"jsonrpc":"2.0","id":{"x":1},"method":5}"#, Value::Null),
            (br#"{"id":9,"method":"tools/call","params":{"name":"list_concepts","arguments":{}}}"#, serde_json::json!(9)),
        ] {
            let f = frame(l);
            assert!(f.forward.is_none() && f.entry.is_none(), "{}", String::from_utf8_lossy(l));
            let r = reply(&f);
            assert_eq!(r["error"]["code"], INVALID_REQUEST, "{}", String::from_utf8_lossy(l));
            assert_eq!(r["id"], id, "{}", String::from_utf8_lossy(l));
        }
        // No reply: blank lines, malformed notifications.
        for l in [
            &b""[..],
            b"   ",
            b"\t",
            br#"{"method":"notifications/initialized"}"#,
        ] {
            assert_eq!(
                frame(l),
                Framed::default(),
                "{}",
                String::from_utf8_lossy(l)
            );
        }
        // Forwarded as sent: requests, notifications and responses of JSON-RPC 2.0.
        for l in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}"#,
        ] {
            let f = frame(l);
            assert_eq!(
                f.forward.as_deref(),
                Some(l),
                "{}",
                String::from_utf8_lossy(l)
            );
            assert!(f.reply.is_none());
        }
    }

    #[test]
    fn lines_not_recognisable_as_a_call_are_answered_not_forwarded() {
        // A line not recognisable as a tools/call was handed to rmcp, which dropped it; now
        // it is answered here and rmcp never sees it (spec/surface.md §18.8).
        for l in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":{,\"method\":\"tools/call\""[..],
            b"\xff\xfe",
        ] {
            let f = frame(l);
            assert_eq!(f.forward, None);
            assert_eq!(f.entry, None);
            assert_eq!(reply(&f)["error"]["code"], PARSE_ERROR);
        }
    }

    #[test]
    fn duplicate_arguments_member_is_a_duplicate_key_fault() {
        let l = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_concepts","arguments":{},"arguments":{"a":1}}}"#;
        let f = frame(l);
        assert_eq!(
            f.entry,
            Some(("1".into(), RawEntry::Fault(raw::MSG_DUPLICATE_KEY)))
        );
        let fwd: Value = serde_json::from_slice(&f.forward.expect("frame")).expect("json");
        assert_eq!(fwd["params"]["arguments"], serde_json::json!({}));
    }

    #[test]
    fn truncated_lines_answer_only_with_id_and_name_read_first() {
        let l = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_concepts","arguments":{"a":"xxxx"#;
        let f = frame_line(l, true, &reg);
        assert_eq!(f.entry, Some(("2".into(), RawEntry::TooLong)));
        let err = RawEntry::TooLong.into_arguments().expect_err("err");
        assert_eq!(err.code, "resource_limit");
        let l = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"a":"xxxx"#;
        assert_eq!(frame_line(l, true, &reg), Framed::default());
        let l = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"name":"list_concepts","x":"#;
        assert_eq!(frame_line(l, true, &reg), Framed::default());
    }

    #[test]
    fn cancellation_names_the_request_key() {
        let f = frame(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","reason":"x"}}"#);
        assert_eq!(f.cancel.as_deref(), Some("\"r1\""));
        assert!(f.forward.is_some());
    }

    #[test]
    fn response_ids_are_canonical_keys() {
        assert_eq!(
            response_id_key(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"x\":\"}\"}}\n")
                .as_deref(),
            Some("3")
        );
        assert_eq!(
            response_id_key(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{}}\n").as_deref(),
            Some("\"a\"")
        );
        assert_eq!(
            response_id_key(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"),
            None
        );
    }

    #[tokio::test]
    async fn pump_input_caps_lines_and_on_eof_waits_for_answers_then_cancels() {
        let side = SideTable::default();
        let eof = CancellationToken::new();
        let mut input = Vec::new();
        // An over-long tools/call whose id and name come first, then a normal request.
        input.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_concepts","arguments":{"a":""#);
        input.resize(MAX_LINE + 10, b'x');
        input.extend_from_slice(b"\"}}}\n");
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
        let (w, mut r) = tokio::io::duplex(1 << 16);
        let (replies, _replies_rx) = tokio::sync::mpsc::unbounded_channel();
        let pump = tokio::spawn(pump_input(
            std::io::Cursor::new(input),
            w,
            side.clone(),
            reg,
            eof.clone(),
            replies,
        ));
        let mut out = Vec::new();
        let mut reader = tokio::io::BufReader::new(&mut r);
        for _ in 0..2 {
            tokio::io::AsyncBufReadExt::read_until(&mut reader, b'\n', &mut out)
                .await
                .expect("read");
        }
        // EOF was read, but request 1 is not answered yet: rmcp must not see EOF.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!eof.is_cancelled(), "EOF waits for the unanswered call");
        assert_eq!(side.take("1"), Some(RawEntry::TooLong));
        side.answered("1");
        tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut out)
            .await
            .expect("read");
        pump.await.expect("pump");
        assert!(eof.is_cancelled());
        let lines: Vec<Value> = out
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("json frame"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["id"], 1);
        assert_eq!(lines[0]["params"]["arguments"], serde_json::json!({}));
        assert_eq!(lines[1]["method"], "tools/list");
    }
}
