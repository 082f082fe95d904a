//! The stdio MCP server: rmcp behind our own framing layer (spec/surface.md §1, §1.1).

pub mod discovery;
pub mod framing;
pub mod mcp;
pub mod scope;

static READ_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `okf-mcp serve --read-only` (spec/surface.md §18.4 rule 3): from now on the server
/// registers only the tools whose `readOnlyHint` is true.
pub fn set_read_only(on: bool) {
    READ_ONLY.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// The tool `name` when this server registers it: every registered tool, or under
/// `--read-only` only the read-only ones; any other name is an unknown tool.
#[must_use]
pub fn served(name: &str) -> Option<&'static crate::tools::ToolSpec> {
    let read_only = READ_ONLY.load(std::sync::atomic::Ordering::SeqCst);
    crate::wire::registry::find(name).filter(|t| t.read_only || !read_only)
}

/// Every tool this server registers, sorted by name ([`served`]).
pub fn served_tools() -> impl Iterator<Item = &'static crate::tools::ToolSpec> {
    crate::wire::registry::all()
        .iter()
        .filter(|t| served(t.name).is_some())
}

/// Name of the environment variable of the panic test hook (`fault-injection` builds only).
pub const TEST_PANIC_ENV: &str = "OKF_MCP_TEST_PANIC";

/// Test hook (feature `fault-injection`, spec/store.md §15): panics when the environment
/// variable [`TEST_PANIC_ENV`] equals `tool`, so tests can prove that a handler panic becomes
/// JSON-RPC −32603 (MCP) or exit 3 (CLI) and never a tool result (README R28). Called by both
/// front ends right before the dispatcher. A no-op without the feature.
#[cfg(feature = "fault-injection")]
pub fn test_panic(tool: &str) {
    if std::env::var(TEST_PANIC_ENV).is_ok_and(|v| v == tool) {
        panic!("fault injection: test panic in tool handler");
    }
}

/// Test hook (feature `fault-injection`); a no-op in this build.
#[cfg(not(feature = "fault-injection"))]
#[inline]
pub fn test_panic(_tool: &str) {}
