//! Running one tool from the command line, shared by `call` and `migrate`: the dispatch with
//! signal cancellation, the progress bar and the caught handler panic ([`run_tool`]), the
//! exit codes and the fixed usage and fault lines.

use super::bar;
use crate::cancel::Cancel;
use crate::tools::Ctx;
use crate::wire::dispatch;
use crate::wire::result::ToolResult;
use std::io::IsTerminal;

/// Exit code of a usage error.
pub const EXIT_USAGE: i32 = 2;
/// Exit code of an internal fault (a handler panic).
pub const EXIT_INTERNAL: i32 = 3;

/// The one stderr line of an internal fault (spec/surface.md §1.2); never carries panic data.
pub const INTERNAL_FAULT_LINE: &str = "okf-mcp: internal error in tool handler";

/// The usage message of an unknown tool name: it names the command that lists the tools.
pub const UNKNOWN_TOOL: &str = "unknown tool name (okf-mcp tools lists every tool)";

/// Prints one fixed usage line on stderr (never echoing arguments) and returns exit code 2.
pub(super) fn usage(msg: &str) -> i32 {
    eprintln!("okf-mcp: {msg}; see okf-mcp --help");
    EXIT_USAGE
}

/// A handler panic caught by [`run_tool`]; it carries no panic data.
pub(super) struct Fault;

/// Runs `tool` on the raw argument bytes `raw` through the MCP dispatcher, as `call` and
/// `migrate` do: SIGINT/SIGTERM cancel it, its progress is drawn on stderr when stderr is a
/// terminal ([`bar::draws_on`]) and erased before this returns, and a handler panic is caught
/// (the default hook, which would print its payload, is replaced by a silent one).
///
/// `Ok(None)` when no tool of that name is registered.
pub(super) fn run_tool(tool: &str, raw: &[u8]) -> Result<Option<ToolResult>, Fault> {
    let cancel = Cancel::new();
    install_signal_cancel(&cancel);
    let progress = bar::CallProgress::for_stderr(bar::draws_on(
        std::io::stderr().is_terminal(),
        std::env::var_os("TERM").as_deref(),
    ));
    let ctx = Ctx {
        cancel,
        progress: progress.sink(),
    };
    let tool = tool.to_owned();
    // The default hook would print the panic payload; the caller prints a fixed line.
    std::panic::set_hook(Box::new(|_| {}));
    // After a panic the progress is only closed and its bar erased (a poisoned lock skips
    // the erase); the process answers and exits.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        crate::server::test_panic(&tool);
        dispatch::call(&tool, Some(raw), &ctx)
    }));
    // The bar is gone before anything else is printed.
    progress.clear();
    result.map_err(|_| Fault)
}

/// SIGINT/SIGTERM cancel the running CLI request (spec/surface.md §1.2).
fn install_signal_cancel(cancel: &Cancel) {
    let cancel = cancel.clone();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
            cancel.cancel();
        });
    });
}
