//! The stdio MCP server: rmcp behind our own framing layer (spec/surface.md §1, §1.1).

pub mod framing;
pub mod mcp;
