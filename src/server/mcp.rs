//! The rmcp server: hand-written `list_tools` / `call_tool` routed to the shared dispatcher
//! (spec/rust-notes.md §2), schemas advertised from `schemas/`, stdin owned by the framing
//! layer (spec/surface.md §1.1), and the process lifecycle of spec/surface.md §1 and
//! spec/rust-notes.md §3.6.
//!
//! Lifecycle:
//! - stdin → [`framing::pump_input`] → in-process pipe → rmcp → in-process pipe →
//!   [`framing::pump_output`] → stdout. `pump_output` is stdout's one writer: rmcp's frames
//!   and the framing layer's own error replies (spec/surface.md §18.8).
//! - stdin EOF: the framing layer stops reading and waits until every `tools/call` it
//!   forwarded has been answered (spec/surface.md §18.7 rule 4: requests in flight finish
//!   and are answered, none is cancelled); then rmcp sees EOF, the server waits for every
//!   running tool call, flushes stdout and [`serve_stdio`] returns 0.
//! - SIGTERM / SIGINT: same, without waiting for stdin (whose blocking read cannot be
//!   interrupted); the runtime is shut down in the background, and the caller leaves through
//!   `std::process::exit`. The exit code is 0 (a requested, orderly shutdown).
//! - A handler panic becomes JSON-RPC −32603 with [`INTERNAL_FAULT`] (README R28); the panic
//!   hook is silenced so nothing reaches stderr.
//!
//! # Test hook
//! With the `fault-injection` feature, `OKF_MCP_TEST_PANIC=<tool>` makes every call of
//! `<tool>` panic inside the handler (MCP and CLI alike), see [`crate::server::test_panic`].

use crate::cancel::Cancel;
use crate::envelope::ToolError;
use crate::progress::{Progress, Update};
use crate::server::framing::{self, RawEntry, SideTable};
use crate::server::{discovery, scope};
use crate::tools::Ctx;
use crate::wire::dispatch;
use crate::wire::result::ToolResult;
use crate::wire::schema::advertised;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Fixed message of a handler panic (README R28).
pub const INTERNAL_FAULT: &str = "internal error in tool handler";

/// Capacity of each in-process pipe between the framing layer and rmcp, in bytes.
const PIPE_CAPACITY: usize = 1024 * 1024;

/// Longest wait for rmcp to finish after a signal, once every tool call has ended.
const SIGNAL_DRAIN: Duration = Duration::from_secs(3);

/// Counts running tool calls so shutdown can wait for them (spec/store.md §14).
#[derive(Debug, Clone, Default)]
pub struct InFlight(Arc<(AtomicUsize, Notify)>);

/// Marks one running tool call; dropping it (also while unwinding) ends the call.
#[derive(Debug)]
pub struct InFlightGuard(InFlight);

impl InFlight {
    /// Registers a running call.
    #[must_use]
    pub fn enter(&self) -> InFlightGuard {
        self.0 .0.fetch_add(1, Ordering::SeqCst);
        InFlightGuard(self.clone())
    }

    /// Number of running calls.
    #[must_use]
    pub fn count(&self) -> usize {
        self.0 .0.load(Ordering::SeqCst)
    }

    /// Resolves once no call is running.
    pub async fn idle(&self) {
        loop {
            let notified = self.0 .1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.0 .0 .0.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0 .0 .1.notify_waiters();
        }
    }
}

/// The okf-mcp MCP server.
#[derive(Debug, Clone, Default)]
pub struct OkfServer {
    side: SideTable,
    /// Cancelled on stdin EOF and on SIGTERM/SIGINT: every request token is its child.
    shutdown: CancellationToken,
    inflight: InFlight,
    /// Set while the client's MCP roots are being fetched (spec/surface.md §18.4 rule 2);
    /// tool calls wait for it ([`scope::Pending::wait`]).
    roots_ready: scope::Pending,
}

impl OkfServer {
    /// A server reading raw arguments from `side`.
    #[must_use]
    pub fn new(side: SideTable) -> Self {
        Self {
            side,
            ..Self::default()
        }
    }
}

/// The advertised tool list, sorted by name (spec/surface.md §2, §18.6): name, title,
/// description, the advertised input schema ([`crate::wire::advertise::input_schema`]), the
/// loosened output schema ([`crate::wire::advertise::output_schema`], §18.6 rule 3a) and
/// annotations.
///
/// The advertised output schema only gives each top-level member of the success object and
/// the error envelope its JSON type (`tools/list` stays within 40,000 bytes; the full output
/// schemas alone are about 50 KB): the checked-in `schemas/<tool>.output.schema.json` files
/// stay the contract the server enforces on every result, and the first text item of every
/// result is its JSON.
#[must_use]
pub fn tool_list() -> Vec<Tool> {
    crate::server::served_tools()
        .map(|t| {
            let r = t.read_only;
            let full = serde_json::Value::Object(advertised(t.input_schema));
            let input = crate::wire::advertise::input_schema(&full);
            let full_output = serde_json::Value::Object(advertised(t.output_schema));
            let output = crate::wire::advertise::output_schema(&full_output);
            let mut tool = Tool::new(t.name, t.description, Arc::new(input));
            tool.output_schema = Some(Arc::new(output));
            tool.title = Some(t.title.to_owned());
            tool.annotations = Some(
                ToolAnnotations::new()
                    .read_only(r)
                    .destructive(!r)
                    .idempotent(r)
                    .open_world(false),
            );
            tool
        })
        .collect()
}

/// The result of a tool error built outside the dispatcher (framing faults, a missing
/// side-table entry); the same members the dispatcher produces for that error.
fn error_result(e: &ToolError) -> ToolResult {
    ToolResult::from_error(e)
}

/// The JSON-RPC `-32602` message of a `tools/call` naming no served tool.
pub const UNKNOWN_TOOL: &str =
    "tool not found: tools/list names every tool (okf-mcp tools on the command line)";

/// Answers one `tools/call` from its side-table entry (spec/surface.md §1.1 step 3, §9.1).
///
/// `entry` is what the framing layer stored for the request id; `None` (never stored, or
/// removed by `notifications/cancelled`) is answered as a request already cancelled at
/// dispatch. A cancelled `ctx` answers `operation_cancelled` with no diagnostics before
/// anything else (CAN-01). Returns `None` for an unregistered tool.
///
/// Blocking: runs the tool, including its bundle I/O; call it off the async runtime.
#[must_use]
pub fn answer_call(name: &str, entry: Option<RawEntry>, ctx: &Ctx) -> Option<ToolResult> {
    crate::server::test_panic(name);
    crate::server::served(name)?;
    if ctx.cancel.is_cancelled() {
        return Some(error_result(&ToolError::cancelled()));
    }
    let Some(entry) = entry else {
        return Some(error_result(&ToolError::cancelled()));
    };
    match entry.into_arguments() {
        Ok(raw) => dispatch::call(name, Some(&raw), ctx),
        Err(e) => Some(error_result(&e)),
    }
}

impl ServerHandler for OkfServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        );
        let mut server = Implementation::new("okf-mcp", env!("CARGO_PKG_VERSION"));
        server.title = Some(discovery::SERVER_TITLE.to_owned());
        info.server_info = server;
        info.instructions = Some(discovery::INSTRUCTIONS.to_owned());
        info
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult {
            prompts: discovery::prompts(),
            ..Default::default()
        })
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        match discovery::get(&request.name, request.arguments.as_ref()) {
            Ok(r) => Ok(r.into()),
            Err(discovery::PromptError::Unknown) => {
                Err(ErrorData::invalid_params("prompt not found", None))
            }
            Err(discovery::PromptError::Argument(a)) => Err(ErrorData::invalid_params(
                format!("prompt argument {a} is required (a non-empty string)"),
                None,
            )),
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        scope::refresh(&context.peer, &self.roots_ready).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        scope::refresh(&context.peer, &self.roots_ready).await;
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: tool_list(),
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if crate::server::served(&name).is_none() {
            return Err(ErrorData::invalid_params(UNKNOWN_TOOL, None));
        }
        let entry = self.side.take(&framing::id_key(&context.id));
        // Counted from here, so shutdown waits for a call that is still waiting for roots.
        let guard = self.inflight.enter();
        // The request's token: cancelled by `notifications/cancelled` (rmcp's token) or by
        // shutdown (stdin EOF, signals).
        let token = self.shutdown.child_token();
        {
            let (t, rmcp_ct) = (token.clone(), context.ct.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = rmcp_ct.cancelled() => t.cancel(),
                    () = t.cancelled() => {}
                }
            });
        }
        // `_meta.progressToken` (spec/migration.md §12.5 rule 4): the blocking call reports
        // through a channel; a task forwards each report as `notifications/progress`. The
        // sink is closed and the forwarder drained before the response is returned, so no
        // notification follows the response.
        let (progress, forwarder) = match context.meta.get_progress_token() {
            Some(ptoken) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Update>();
                let peer = context.peer.clone();
                let done = token.clone();
                let forwarder = tokio::spawn(async move {
                    #[allow(clippy::cast_precision_loss)]
                    let param = |u: Update| {
                        let p = ProgressNotificationParam::new(ptoken.clone(), u.progress as f64)
                            .with_message(u.message);
                        match u.total {
                            Some(t) => p.with_total(t as f64),
                            None => p,
                        }
                    };
                    loop {
                        tokio::select! {
                            biased;
                            Some(u) = rx.recv() => {
                                let _ = peer.notify_progress(param(u)).await;
                            }
                            () = done.cancelled() => {
                                // The call is over: send what it reported, then stop.
                                while let Ok(u) = rx.try_recv() {
                                    let _ = peer.notify_progress(param(u)).await;
                                }
                                break;
                            }
                        }
                    }
                });
                let sink = Progress::new(move |u| {
                    let _ = tx.send(u);
                });
                (sink, Some(forwarder))
            }
            None => (Progress::default(), None),
        };
        // The client's MCP roots (spec/surface.md §18.4 rule 2): wait for the answer in
        // flight; a cancel or shutdown ends the wait (the call then answers cancelled).
        tokio::select! {
            () = self.roots_ready.wait(&context.peer) => {}
            () = token.cancelled() => {}
        }
        let ctx = Ctx {
            cancel: Cancel::from_token(token.clone()),
            progress: progress.clone(),
        };
        let joined = tokio::task::spawn_blocking(move || {
            let _guard = guard;
            answer_call(&name, entry, &ctx)
        })
        .await;
        // No report passes the sink from here on; then the link task above and the
        // forwarder end (the forwarder after sending what was reported before).
        progress.close();
        drop(progress);
        token.cancel();
        if let Some(f) = forwarder {
            let _ = f.await;
        }
        match joined {
            Ok(Some(r)) => Ok(to_call_tool_result(&r).into()),
            Ok(None) => Err(ErrorData::invalid_params(UNKNOWN_TOOL, None)),
            Err(_) => Err(ErrorData::internal_error(INTERNAL_FAULT, None)),
        }
    }
}

fn to_call_tool_result(r: &ToolResult) -> CallToolResult {
    let mut out = if r.is_error {
        CallToolResult::structured_error(r.structured.clone())
    } else {
        CallToolResult::structured(r.structured.clone())
    };
    out.content = r.texts.iter().cloned().map(ContentBlock::text).collect();
    out
}

/// Runs the server over `input` / `output` until `input` closes or `stop` is cancelled;
/// returns the exit code (0).
///
/// `side` is the side table the framing layer and the handler share (exposed for tests:
/// it is empty once every response has been written). Waits for every running tool call
/// before returning, and flushes `output`.
pub async fn serve_io<R, W>(input: R, output: W, side: SideTable, stop: CancellationToken) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // A session starts with no client roots (one session per process in production; tests
    // run several).
    crate::wire::scope::reset();
    let server = OkfServer::new(side.clone());
    let shutdown = server.shutdown.clone();
    let inflight = server.inflight.clone();
    let (in_w, in_r) = tokio::io::duplex(PIPE_CAPACITY);
    let (out_w, out_r) = tokio::io::duplex(PIPE_CAPACITY);
    let (replies, replies_rx) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(framing::pump_input(
        input,
        in_w,
        side.clone(),
        |n| crate::server::served(n).is_some(),
        shutdown.clone(),
        replies,
    ));
    let writer = tokio::spawn(framing::pump_output(out_r, output, side, replies_rx));

    let running = tokio::select! {
        r = server.serve((in_r, out_w)) => r.ok(),
        () = stop.cancelled() => None,
    };
    if let Some(running) = running {
        let rmcp_stop = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        tokio::select! {
            _ = &mut waiting => {}
            () = stop.cancelled() => {
                shutdown.cancel();
                inflight.idle().await;
                rmcp_stop.cancel();
                let _ = tokio::time::timeout(SIGNAL_DRAIN, &mut waiting).await;
            }
        }
    }
    shutdown.cancel();
    inflight.idle().await;
    // rmcp has closed its end: the writer flushes what is left and ends.
    let _ = tokio::time::timeout(SIGNAL_DRAIN, writer).await;
    if !stop.is_cancelled() {
        let _ = reader.await;
    }
    0
}

/// Runs the MCP server on stdin/stdout until stdin closes or SIGTERM/SIGINT arrives;
/// returns the process exit code (spec/surface.md §1). The caller must leave through
/// `std::process::exit` (spec/rust-notes.md §3.6).
#[must_use]
pub fn serve_stdio() -> i32 {
    // Panics are answered on the wire (R28); never print their payload on stderr.
    std::panic::set_hook(Box::new(|_| {}));
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => {
            eprintln!("okf-mcp: cannot start the async runtime");
            return 1;
        }
    };
    let code = rt.block_on(async {
        let stop = CancellationToken::new();
        {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                eprintln!("okf-mcp: cannot install signal handlers");
                return 1;
            };
            let stop = stop.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = term.recv() => {},
                    _ = int.recv() => {},
                }
                stop.cancel();
            });
        }
        serve_io(
            tokio::io::stdin(),
            tokio::io::stdout(),
            SideTable::default(),
            stop,
        )
        .await
    });
    // stdin's blocking read may still hold a pool thread: do not wait for it.
    rt.shutdown_background();
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[test]
    fn can_01_cancelled_at_dispatch_wins_over_every_other_fault_without_diagnostics() {
        let ctx = Ctx::default();
        ctx.cancel.cancel();
        for entry in [
            Some(RawEntry::Bytes(
                br#"{"bundle_path":"/nonexistent/okf-can-01"}"#.to_vec(),
            )),
            Some(RawEntry::Bytes(b"{\"a\":1,\"a\":2}".to_vec())),
            Some(RawEntry::TooLong),
            None,
        ] {
            let r = answer_call("list_concepts", entry, &ctx).expect("registered");
            assert!(r.is_error);
            assert_eq!(r.structured["code"], "operation_cancelled");
            assert_eq!(r.structured["retryable"], true);
            assert_eq!(r.structured["diagnostics"], json!([]));
            assert_eq!(r.texts[0], r.structured.to_string());
            assert!(r.texts[1].starts_with("operation was cancelled (operation_cancelled)\n"));
        }
    }

    #[test]
    fn missing_entry_is_answered_as_cancelled_and_unknown_tool_is_none() {
        let r = answer_call("list_concepts", None, &Ctx::default()).expect("registered");
        assert_eq!(r.structured["code"], "operation_cancelled");
        assert!(answer_call("no_such_tool", None, &Ctx::default()).is_none());
    }

    #[test]
    fn broken_span_goes_through_the_dispatcher_like_the_cli() {
        let span = b"{\"bundle_path\":\"\xff\"}".to_vec();
        let mcp = answer_call(
            "list_concepts",
            Some(RawEntry::Broken {
                span: Some(span.clone()),
                message: crate::wire::raw::MSG_INVALID_UTF8,
            }),
            &Ctx::default(),
        )
        .expect("registered");
        let cli = dispatch::call("list_concepts", Some(&span), &Ctx::default()).expect("tool");
        assert_eq!(mcp, cli);
        assert_eq!(
            cli.structured["message"],
            "MCP arguments contain invalid UTF-8"
        );
    }

    struct Session {
        to: tokio::io::DuplexStream,
        from: BufReader<tokio::io::DuplexStream>,
    }

    impl Session {
        async fn send(&mut self, line: &[u8]) {
            self.to.write_all(line).await.expect("write");
            self.to.write_all(b"\n").await.expect("write");
        }
        async fn read(&mut self) -> Value {
            let mut l = String::new();
            self.from.read_line(&mut l).await.expect("read");
            serde_json::from_str(&l).expect("json-rpc")
        }
    }

    fn start() -> (Session, SideTable, tokio::task::JoinHandle<i32>) {
        let (to, input) = tokio::io::duplex(1 << 20);
        let (output, from) = tokio::io::duplex(1 << 20);
        let side = SideTable::default();
        let task = tokio::spawn(serve_io(
            input,
            output,
            side.clone(),
            CancellationToken::new(),
        ));
        (
            Session {
                to,
                from: BufReader::new(from),
            },
            side,
            task,
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn raw_09_side_table_is_empty_once_every_response_is_sent() {
        let (mut s, side, task) = start();
        s.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
        assert_eq!(s.read().await["result"]["serverInfo"]["name"], "okf-mcp");
        s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        let frames: Vec<Vec<u8>> = vec![
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_concepts","arguments":{"bundle_path":"/nonexistent/okf","bundle_path":"x"}}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"list_concepts","arguments":[]}}"#.to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"list_concepts\",\"arguments\":{\"bundle_path\":\"\xff\"}}}".to_vec(),
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_concepts","arguments":{"bundle_path":"a"}},"x":}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{"a":1}}}"#.to_vec(),
        ];
        for f in &frames {
            s.send(f).await;
        }
        let mut got = std::collections::BTreeMap::new();
        for _ in 0..frames.len() {
            let m = s.read().await;
            got.insert(m["id"].to_string(), m);
        }
        let code = |id: &str| got[id]["result"]["structuredContent"]["code"].clone();
        let msg = |id: &str| got[id]["result"]["structuredContent"]["message"].clone();
        assert_eq!(msg("1"), "MCP arguments contain a duplicate key");
        assert_eq!(msg("\"two\""), "MCP arguments must be a JSON object");
        assert_eq!(msg("3"), "MCP arguments contain invalid UTF-8");
        assert_eq!(code("4"), "invalid_request");
        assert_eq!(msg("4"), "MCP arguments are not valid JSON");
        assert_eq!(got["5"]["error"]["code"], -32602);
        // The writer removes entries after writing; it has written all five.
        assert!(side.is_empty(), "side table holds {} entries", side.len());
        drop(s.to);
        assert_eq!(task.await.expect("join"), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn side_table_entry_of_a_request_rmcp_rejects_is_removed_with_its_response() {
        // No initialize and no 2026 `_meta`: rmcp answers −32602 without calling the handler.
        let (mut s, side, task) = start();
        s.send(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_concepts","arguments":{"bundle_path":"x"}}}"#).await;
        let m = s.read().await;
        assert_eq!(m["id"], 8);
        assert!(side.is_empty(), "side table holds {} entries", side.len());
        drop(s.to);
        let _ = task.await;
    }
}
