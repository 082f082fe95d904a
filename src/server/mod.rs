//! The stdio MCP server: rmcp behind our own framing layer (spec/surface.md §1, §1.1).

pub mod framing;
pub mod mcp;

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
