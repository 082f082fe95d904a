//! The `okf-mcp` binary: see [`okf_mcp::cli`].

fn main() {
    let code = okf_mcp::cli::main();
    // rmcp's stdin reader can keep the runtime alive; always leave through exit
    // (spec/rust-notes.md §3.6).
    std::process::exit(code);
}
