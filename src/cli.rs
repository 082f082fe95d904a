//! Command line: `okf-mcp [serve]`, `okf-mcp call <tool> --args JSON | --args-file F|-`,
//! `okf-mcp demo` (spec/surface.md §1.2).
//!
//! Exit codes: 0 success, 1 tool error (`isError: true`), 2 usage error, 3 internal fault.
//!
//! When stderr is a terminal (and `TERM` is set and not `dumb`), `call` draws the call's
//! progress there (`src/cli/bar.rs`); otherwise it writes nothing but its result and the
//! fault or usage lines below.

mod bar;

use crate::cancel::Cancel;
use crate::tools::Ctx;
use crate::wire::dispatch;
use crate::wire::registry;
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::ffi::OsStringExt;

#[derive(Debug, Parser)]
#[command(
    name = "okf-mcp",
    version,
    about = "MCP server and CLI for OKF knowledge bundles"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default).
    Serve,
    /// Run one tool through the same dispatcher as MCP and print the CallToolResult JSON.
    Call {
        /// Tool name, e.g. `list_concepts`.
        tool: String,
        /// The tool arguments as a JSON object (any bytes: invalid ones are tool errors).
        #[arg(long)]
        args: Option<OsString>,
        /// A file holding the arguments, or `-` for standard input.
        #[arg(long = "args-file")]
        args_file: Option<OsString>,
    },
    /// Copy an embedded demo bundle to a temporary directory and run the tools end to end.
    Demo,
}

/// Exit code of a usage error.
pub const EXIT_USAGE: i32 = 2;
/// Exit code of an internal fault (a handler panic).
pub const EXIT_INTERNAL: i32 = 3;

/// The one stderr line of an internal fault (spec/surface.md §1.2); never carries panic data.
pub const INTERNAL_FAULT_LINE: &str = "okf-mcp: internal error in tool handler";

/// Prints one fixed usage line on stderr (never echoing arguments) and returns exit code 2.
fn usage(msg: &str) -> i32 {
    eprintln!("okf-mcp: {msg}; see okf-mcp --help");
    EXIT_USAGE
}

/// Parses `std::env::args` and runs; returns the process exit code.
#[must_use]
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    0
                }
                _ => usage("usage error"),
            };
        }
    };
    match cli.command {
        None | Some(Command::Serve) => {
            init_logging();
            crate::server::mcp::serve_stdio()
        }
        Some(Command::Demo) => crate::demo::run(),
        Some(Command::Call {
            tool,
            args,
            args_file,
        }) => call(&tool, args, args_file),
    }
}

/// `okf-mcp call`: the raw bytes of `--args`, the file or stdin (`-`) go to the dispatcher
/// unchanged (spec/surface.md §1.2). Usage errors → 2; `isError` → 1; a handler panic → one
/// fixed stderr line, empty stdout, 3.
fn call(tool: &str, args: Option<OsString>, args_file: Option<OsString>) -> i32 {
    if registry::find(tool).is_none() {
        return usage("unknown tool name");
    }
    let raw: Vec<u8> = match (args, args_file) {
        (Some(a), None) => a.into_vec(),
        (None, Some(f)) if f == "-" => {
            let mut buf = Vec::new();
            if std::io::stdin().read_to_end(&mut buf).is_err() {
                return usage("cannot read the arguments from standard input");
            }
            buf
        }
        (None, Some(f)) => match std::fs::read(&f) {
            Ok(b) => b,
            Err(_) => return usage("cannot read the arguments file"),
        },
        _ => return usage("give exactly one of --args and --args-file"),
    };
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
    // The default hook would print the panic payload; the fixed line below replaces it.
    std::panic::set_hook(Box::new(|_| {}));
    // After a panic the progress is only closed and its bar erased (a poisoned lock skips
    // the erase); the process answers and exits.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        crate::server::test_panic(&tool);
        dispatch::call(&tool, Some(&raw), &ctx)
    }));
    // The bar is gone before anything else is printed.
    progress.clear();
    match result {
        Ok(Some(r)) => {
            let line = r.to_call_tool_result_json().to_string();
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                return 1;
            }
            i32::from(r.is_error)
        }
        Ok(None) => usage("unknown tool name"),
        Err(_) => {
            eprintln!("{INTERNAL_FAULT_LINE}");
            EXIT_INTERNAL
        }
    }
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

/// Debug logging of the server, to stderr only and only when `RUST_LOG` is set (e.g.
/// `RUST_LOG=okf_mcp=debug`). Normal operation logs nothing (spec/surface.md §1, §16); log
/// events name the tool, the outcome code and the duration, never arguments or documents.
fn init_logging() {
    let Ok(filter) = std::env::var("RUST_LOG") else {
        return;
    };
    if filter.trim().is_empty() {
        return;
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
