//! `vyre mcp`: the Vyre MCP server over stdio (built on `rmcp`), what a Claude Code session
//! uses to reach Vyre's tools. It is a thin bridge: it lists the tools vyred offers *this
//! caller* and forwards each call to vyred. The caller is never in the input: an owned session
//! reaches vyred through its own socket (`VYRE_SOCKET`), bound by vyred to its thread; a
//! terminal session through vyred's socket, where vyred sees a process of Claude Code. Either
//! way it is a session, so PERSON_ONLY tools are neither listed nor callable.
//!
//! MCP tool names may not hold dots (the Messages API allows `[a-zA-Z0-9_-]`), so
//! `threads.list` is offered as `threads_list`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::fail;
use crate::surfaces::client::{Client, ClientError};

use crate::kernel::contracts::harness::mcp_name;

struct VyreMcp {
    client: Client,
    /// MCP name to Vyre's, from the last listing.
    names: Arc<Mutex<HashMap<String, String>>>,
}

impl VyreMcp {
    async fn tools(&self) -> Result<Vec<Tool>, ClientError> {
        let specs = self.client.get("/v1/tools").await?;
        let mut names = HashMap::new();
        let mut tools = vec![];
        for spec in specs.as_array().into_iter().flatten() {
            // vyred lists PERSON_ONLY tools only to persons; a session never is one, and this
            // says so again here.
            // Vyre's plumbing (`for_models: false`) is for the session's hooks and CLI.
            if spec["person_only"] == true || spec["for_models"] == false {
                continue;
            }
            let Some(name) = spec["name"].as_str() else {
                continue;
            };
            let schema = match &spec["input_schema"] {
                Value::Object(o) => o.clone(),
                _ => serde_json::Map::new(),
            };
            let description = spec["description"].as_str().unwrap_or("").to_string();
            let exposed = mcp_name(name);
            names.insert(exposed.clone(), name.to_string());
            tools.push(Tool::new(exposed, description, Arc::new(schema)));
        }
        *self.names.lock().expect("names") = names;
        Ok(tools)
    }

    async fn vyre_name(&self, exposed: &str) -> Option<String> {
        if let Some(n) = self.names.lock().expect("names").get(exposed) {
            return Some(n.clone());
        }
        self.tools().await.ok()?;
        self.names.lock().expect("names").get(exposed).cloned()
    }
}

fn text_result(text: String, is_error: bool) -> CallToolResponse {
    let content = vec![ContentBlock::text(text)];
    CallToolResponse::Complete(if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    })
}

impl ServerHandler for VyreMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("vyre", crate::kernel::VERSION))
            .with_instructions(
                "Vyre's tools: threads, projects, recall (search every earlier session), agents, the vault's status. A session acts as itself, never as its person.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // With vyred down the session goes on as without Vyre: no tools, no failure.
        let tools = self.tools().await.unwrap_or_default();
        give_back_soon();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = self.vyre_name(&request.name).await else {
            return Ok(text_result(
                format!("Vyre has no tool {} for this session", request.name),
                true,
            ));
        };
        let input = Value::Object(request.arguments.unwrap_or_default());
        give_back_soon();
        Ok(match self.client.call(&tool, &input).await {
            Ok(data) => text_result(
                serde_json::to_string_pretty(&data).unwrap_or_else(|_| data.to_string()),
                false,
            ),
            // The model reads the refusal and its reason (`person_only`, `invalid_input` ...).
            Err(e) => text_result(e.to_string(), true),
        })
    }
}

pub async fn run(client: Client) -> i32 {
    let server = VyreMcp {
        client,
        names: Arc::default(),
    };
    let running = match server.serve(rmcp::transport::io::stdio()).await {
        Ok(r) => r,
        Err(e) => return fail(&format!("the MCP session did not start: {e}")),
    };

    match running.waiting().await {
        Ok(_) => 0,
        Err(e) => fail(&format!("the MCP session ended with an error: {e}")),
    }
}

/// One of these lives beside every session for its whole life, idle nearly all of it: the heap
/// a request used (a tool listing parses and writes out every tool's schema) is given back to
/// the system a second after it, instead of staying in the allocator's free lists. No timer
/// runs while nothing is asked.
fn give_back_soon() {
    tokio::spawn(async {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        give_back_free_heap();
    });
}

/// Return the allocator's free memory to the system (glibc's `malloc_trim`; elsewhere nothing).
fn give_back_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
