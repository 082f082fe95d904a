//! Command line: `okf-mcp [serve]`, `okf-mcp call <tool> --args JSON | --args-file F|-
//! [--pretty]`, `okf-mcp tools`, `okf-mcp demo` (spec/surface.md §1.2, §18.7), and
//! `okf-mcp migrate <bundle> …`, the guided 0.1 → 0.2 migration (`src/cli/migrate.rs`).
//!
//! Exit codes: 0 success, 1 tool error (`isError: true`), 2 usage error, 3 internal fault;
//! `migrate` also exits 2 when the migration is blocked (see its module docs).
//!
//! When stderr is a terminal (and `TERM` is set and not `dumb`), `call` and `migrate` draw the
//! call's progress there (`src/cli/bar.rs`); otherwise they write nothing but their result and
//! the fault or usage lines below.

mod bar;
mod invoke;
mod migrate;

use invoke::{run_tool, usage, Fault};
pub use invoke::{EXIT_INTERNAL, EXIT_USAGE, INTERNAL_FAULT_LINE, UNKNOWN_TOOL};

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
    Serve {
        /// Allow only bundles inside this directory (repeatable; absolute; symlinks in it are
        /// resolved once, at startup).
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<std::path::PathBuf>,
        /// Register only the read-only tools.
        #[arg(long = "read-only")]
        read_only: bool,
        /// Capture every bundle cold on every call: no warm capture cache between calls
        /// (spec/store.md §17).
        #[arg(long = "no-cache")]
        no_cache: bool,
    },
    /// Print the tool names with their titles, one per line.
    Tools,
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
        /// Print the CallToolResult indented over several lines.
        #[arg(long)]
        pretty: bool,
    },
    /// Copy an embedded demo bundle to a temporary directory and run the tools end to end.
    Demo,
    /// Migrate a bundle from OKF 0.1 to 0.2: preview, accept the proposals, apply by digest.
    Migrate(migrate::MigrateArgs),
}

/// The one stderr line of a bare `okf-mcp` whose standard input is a terminal.
pub const BARE_TERMINAL_LINE: &str = "okf-mcp: this is an MCP server speaking JSON-RPC on standard input; start it from an MCP host, or see okf-mcp --help (okf-mcp demo shows it at work). Ctrl-D ends it.";

/// The one line of a clap usage error (spec/surface.md §18.7 rule 2): clap's own explanation
/// of the kind of error, with only what names the command line's own grammar (flags and
/// subcommands okf-mcp defines, clap's suggestions among them, the valid subcommands) and
/// never an argument value or an unknown argument as typed, which may be a secret.
#[must_use]
pub fn usage_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let kind = e.kind();
    let mut parts: Vec<String> = Vec::new();
    let names = |v: &ContextValue| -> Vec<String> {
        match v {
            ContextValue::String(s) => vec![s.clone()],
            ContextValue::Strings(v) => v.clone(),
            _ => Vec::new(),
        }
    };
    // Only for these kinds does InvalidArg name a defined argument rather than user text.
    let invalid_arg_is_defined = matches!(
        kind,
        ErrorKind::InvalidValue
            | ErrorKind::ValueValidation
            | ErrorKind::ArgumentConflict
            | ErrorKind::MissingRequiredArgument
            | ErrorKind::TooManyValues
            | ErrorKind::TooFewValues
            | ErrorKind::WrongNumberOfValues
            | ErrorKind::NoEquals
    );
    for (k, v) in e.context() {
        let shown = match k {
            ContextKind::InvalidArg if invalid_arg_is_defined => {
                format!("argument {}", names(v).join(", "))
            }
            ContextKind::PriorArg => format!("cannot be used with {}", names(v).join(", ")),
            ContextKind::SuggestedArg => format!("did you mean {}", names(v).join(" or ")),
            ContextKind::SuggestedSubcommand => {
                format!("did you mean {}", names(v).join(" or "))
            }
            ContextKind::ValidSubcommand => {
                format!("subcommands: {}", names(v).join(", "))
            }
            _ => continue,
        };
        parts.push(shown);
    }
    let what = kind.as_str().unwrap_or("usage error").to_lowercase();
    if parts.is_empty() {
        format!("okf-mcp: {what}; see okf-mcp --help")
    } else {
        format!("okf-mcp: {what} ({}); see okf-mcp --help", parts.join("; "))
    }
}

/// `okf-mcp tools`: one line per registered tool, `<name>  <title>`, sorted by name
/// (spec/surface.md §18.7 rule 1; the title is the one `tools/list` advertises).
fn tools() -> i32 {
    let mut out = std::io::stdout().lock();
    for t in registry::all() {
        if writeln!(out, "{:<26}{}", t.name, t.title).is_err() {
            return 1;
        }
    }
    i32::from(out.flush().is_err())
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
                _ => {
                    eprintln!("{}", usage_line(&e));
                    EXIT_USAGE
                }
            };
        }
    };
    match cli.command {
        None => {
            // A bare `okf-mcp` typed on a terminal would otherwise wait silently for MCP
            // frames (issue 21 item 5); a host's pipe gets no extra output.
            if std::io::stdin().is_terminal() {
                eprintln!("{BARE_TERMINAL_LINE}");
            }
            serve(&[], false, false)
        }
        Some(Command::Serve {
            roots,
            read_only,
            no_cache,
        }) => serve(&roots, read_only, no_cache),
        Some(Command::Demo) => crate::demo::run(),
        Some(Command::Tools) => tools(),
        Some(Command::Migrate(a)) => migrate::run(&a),
        Some(Command::Call {
            tool,
            args,
            args_file,
            pretty,
        }) => call(&tool, args, args_file, pretty),
    }
}

/// `okf-mcp serve [--root DIR]… [--read-only] [--no-cache]` (spec/surface.md §18.4): resolves
/// the roots once (a bad one is a startup error: one line on stderr, exit 1), turns the warm
/// capture cache on unless `--no-cache` (spec/store.md §17), then serves.
fn serve(roots: &[std::path::PathBuf], read_only: bool, no_cache: bool) -> i32 {
    if !roots.is_empty() {
        let mut allowed = Vec::with_capacity(roots.len());
        for r in roots {
            match crate::store::root::resolve_root(r) {
                Ok(a) => allowed.push(a),
                Err(why) => {
                    eprintln!("okf-mcp: {why}");
                    return 1;
                }
            }
        }
        crate::store::root::set_cli_roots(allowed);
    }
    crate::server::set_read_only(read_only);
    crate::store::warm::enable(!no_cache);
    init_logging();
    crate::server::mcp::serve_stdio()
}

/// `okf-mcp call`: the raw bytes of `--args`, the file or stdin (`-`) go to the dispatcher
/// unchanged (spec/surface.md §1.2). Usage errors → 2; `isError` → 1; a handler panic → one
/// fixed stderr line, empty stdout, 3. `pretty` indents the result over several lines
/// (spec/surface.md §18.2 rule 3).
fn call(tool: &str, args: Option<OsString>, args_file: Option<OsString>, pretty: bool) -> i32 {
    if registry::find(tool).is_none() {
        return usage(UNKNOWN_TOOL);
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
    let result = run_tool(tool, &raw);
    match result {
        Ok(Some(r)) => {
            let v = r.to_call_tool_result_json();
            let line = if pretty {
                serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
            } else {
                v.to_string()
            };
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                return 1;
            }
            i32::from(r.is_error)
        }
        Ok(None) => usage(UNKNOWN_TOOL),
        Err(Fault) => {
            eprintln!("{INTERNAL_FAULT_LINE}");
            EXIT_INTERNAL
        }
    }
}

/// Debug logging of the server, to stderr only and only when `RUST_LOG` is set (e.g.
/// `RUST_LOG=okf_mcp=debug`). Normal operation logs nothing (spec/surface.md §1, §16); log
/// events name the tool, the outcome code and the duration, never arguments or documents.
/// Every other crate's events, rmcp's included (its debug and trace events print whole
/// JSON-RPC messages), pass only at `warn` or above, whatever `RUST_LOG` says
/// (spec/surface.md §18.7 rule 3).
fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let Ok(filter) = std::env::var("RUST_LOG") else {
        return;
    };
    if filter.trim().is_empty() {
        return;
    }
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_filter(tracing_subscriber::filter::filter_fn(own_or_warning));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// The cap of [`init_logging`]: okf-mcp's own events at any level, others at `warn` or above.
fn own_or_warning(m: &tracing::Metadata<'_>) -> bool {
    let t = m.target();
    let own = t == "okf_mcp" || t.starts_with("okf_mcp::");
    own || *m.level() <= tracing::Level::WARN
}
