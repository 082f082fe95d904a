//! The rmcp server handler: hand-written `list_tools` / `call_tool` routed to the shared
//! dispatcher (spec/rust-notes.md §2), with schemas advertised from `schemas/`.

use crate::cancel::Cancel;
use crate::server::framing::{RawEntry, SideTable};
use crate::wire::dispatch::{self, Ctx};
use crate::wire::envelope::ToolError;
use crate::wire::registry;
use crate::wire::schema::advertised;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;

/// Fixed message of a handler panic (README R28).
pub const INTERNAL_FAULT: &str = "internal error in tool handler";

/// The okf-mcp MCP server.
#[derive(Debug, Clone, Default)]
pub struct OkfServer {
    side: SideTable,
}

impl OkfServer {
    /// A server reading raw arguments from `side`.
    #[must_use]
    pub fn new(side: SideTable) -> Self {
        Self { side }
    }
}

/// The advertised tool list, sorted by name (spec/surface.md §2).
#[must_use]
pub fn tool_list() -> Vec<Tool> {
    registry::all()
        .iter()
        .map(|t| {
            let r = t.read_only;
            let mut tool = Tool::new(t.name, t.description, Arc::new(advertised(t.input_schema)));
            tool.output_schema = Some(Arc::new(advertised(t.output_schema)));
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

impl ServerHandler for OkfServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("okf-mcp", env!("CARGO_PKG_VERSION"));
        info
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
        if registry::find(&name).is_none() {
            return Err(ErrorData::invalid_params("tool not found", None));
        }
        let id_key = serde_json::to_string(&context.id).unwrap_or_default();
        let raw = match self.side.take(&id_key) {
            Some(RawEntry::Bytes(b)) => b,
            Some(RawEntry::Fault(msg)) => {
                let e = ToolError::invalid_request(msg);
                let r = dispatch_error_result(&name, &e);
                return Ok(to_call_tool_result(&r).into());
            }
            None => match &request.arguments {
                // Without the framing layer (direct rmcp use) fall back to the decoded map.
                Some(m) => serde_json::to_vec(m).unwrap_or_else(|_| b"{}".to_vec()),
                None => b"{}".to_vec(),
            },
        };
        let ctx = Ctx {
            cancel: Cancel::from_token(context.ct.clone()),
        };
        let joined =
            tokio::task::spawn_blocking(move || dispatch::call(&name, Some(&raw), &ctx)).await;
        match joined {
            Ok(Some(r)) => Ok(to_call_tool_result(&r).into()),
            Ok(None) => Err(ErrorData::invalid_params("tool not found", None)),
            Err(_) => Err(ErrorData::internal_error(INTERNAL_FAULT, None)),
        }
    }
}

fn dispatch_error_result(name: &str, e: &ToolError) -> dispatch::ToolResult {
    let _ = name;
    dispatch::ToolResult {
        text: e.wire_message(),
        structured: e.to_wire(),
        is_error: true,
    }
}

fn to_call_tool_result(r: &dispatch::ToolResult) -> CallToolResult {
    let mut out = if r.is_error {
        CallToolResult::structured_error(r.structured.clone())
    } else {
        CallToolResult::structured(r.structured.clone())
    };
    out.content = vec![ContentBlock::text(r.text.clone())];
    out
}

/// Runs the MCP server on stdin/stdout until stdin closes; returns the process exit code.
#[must_use]
pub fn serve_stdio() -> i32 {
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
    rt.block_on(async {
        let side = SideTable::default();
        let server = OkfServer::new(side);
        let transport = (tokio::io::stdin(), tokio::io::stdout());
        let running = match server.serve(transport).await {
            Ok(r) => r,
            Err(_) => return 0,
        };
        let _ = running.waiting().await;
        0
    })
}
