//! Vyre's tools to a Claude Code session as an in-process ("sdk") MCP server: declared in
//! `initialize` with its handshake and tool list already answered (`sdkMcpServerManifests`), so
//! only calls cross the wire, as `mcp_message` control requests on the session's own stdio.
//! Named like the harness plugin's server, it takes its place (the tools keep their names), and
//! the plugin's own is denied in the flag settings: no `vyre mcp` per session.

use serde_json::{Value, json};

use crate::kernel::contracts::provider::{HostCall, HostTools};

/// The MCP protocol version the CLI speaks (2.1.328's `initialize`).
const PROTOCOL: &str = "2025-11-25";

const INSTRUCTIONS: &str = "Vyre's tools: threads, projects, recall (search every earlier session), agents, the vault's status. A session acts as itself, never as its person.";

/// `initialize`'s fields that declare the server.
pub fn declare(init: &mut Value, tools: &HostTools) {
    init["sdkMcpServers"] = json!([tools.server]);
    let mut manifests = serde_json::Map::new();
    manifests.insert(
        tools.server.clone(),
        json!({
            "initializeResult": initialize_result(),
            "toolsListResult": { "tools": *tools.tools },
        }),
    );
    init["sdkMcpServerManifests"] = Value::Object(manifests);
}

/// The flag settings' part: the plugin's own server of the same name is denied, so the CLI
/// does not start a `vyre mcp` beside the session (a same-named in-process server takes its
/// place for calls, but the plugin's process was still started; a denial applies to configured
/// servers, not to in-process ones: both measured on 2.1.328, and checked by the end-to-end
/// test).
pub fn deny_the_plugins_own(settings: &mut Value, tools: &HostTools) {
    settings["deniedMcpServers"] = json!([{ "serverName": tools.server }]);
}

fn initialize_result() -> Value {
    json!({
        "protocolVersion": PROTOCOL,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": "vyre", "version": crate::kernel::VERSION },
        "instructions": INSTRUCTIONS,
    })
}

/// Whether a control request of the CLI is a message for this server.
pub fn is_ours(request: &Value, tools: &HostTools) -> bool {
    request["subtype"] == "mcp_message" && request["server_name"] == tools.server.as_str()
}

/// The answer to one MCP message (the control request's `message`), as the control response's
/// `mcp_response`: the JSON-RPC reply, or an empty acknowledgement of a notification.
pub async fn reply(tools: &HostTools, message: &Value, pid: Option<i32>) -> Value {
    let Some(id) = message.get("id").filter(|id| !id.is_null()).cloned() else {
        return json!({ "jsonrpc": "2.0", "result": {}, "id": 0 });
    };
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => Ok(initialize_result()),
        "tools/list" => Ok(json!({ "tools": *tools.tools })),
        "ping" => Ok(json!({})),
        "tools/call" => match message["params"]["name"].as_str() {
            Some(name) => {
                let input = match &message["params"]["arguments"] {
                    Value::Null => json!({}),
                    other => other.clone(),
                };
                let call = HostCall {
                    name: name.to_string(),
                    input,
                    pid,
                };
                let answer = (tools.call)(call).await;
                Ok(json!({
                    "content": [{ "type": "text", "text": answer.text }],
                    "isError": answer.is_error,
                }))
            }
            None => Err((-32602, "tools/call needs the tool's name".to_string())),
        },
        other => Err((-32601, format!("no method {other:?} here"))),
    };
    match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message)) => {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::kernel::contracts::provider::{HostAnswer, HostTool};

    fn tools(seen: Arc<Mutex<Vec<HostCall>>>) -> HostTools {
        HostTools {
            server: "plugin:vyre:vyre".into(),
            tools: Arc::new(vec![HostTool {
                name: "threads_list".into(),
                description: "the threads".into(),
                input_schema: json!({ "type": "object" }),
            }]),
            call: Arc::new(move |call: HostCall| {
                let seen = seen.clone();
                Box::pin(async move {
                    let text = format!("{} {}", call.name, call.input);
                    let is_error = call.name != "threads_list";
                    seen.lock().unwrap().push(call);
                    HostAnswer { text, is_error }
                })
            }),
            prompt_hook: None,
        }
    }

    #[test]
    fn the_server_is_declared_with_its_tools_listed_ahead() {
        let mut init = json!({ "subtype": "initialize" });
        declare(&mut init, &tools(Arc::default()));
        assert_eq!(init["sdkMcpServers"], json!(["plugin:vyre:vyre"]));
        let manifest = &init["sdkMcpServerManifests"]["plugin:vyre:vyre"];
        assert_eq!(manifest["initializeResult"]["protocolVersion"], PROTOCOL);
        assert_eq!(
            manifest["toolsListResult"]["tools"][0],
            json!({ "name": "threads_list", "description": "the threads", "inputSchema": { "type": "object" } })
        );
    }

    #[test]
    fn the_plugins_own_server_is_denied_by_the_same_name() {
        let mut settings = json!({ "env": {} });
        deny_the_plugins_own(&mut settings, &tools(Arc::default()));
        assert_eq!(
            settings["deniedMcpServers"],
            json!([{ "serverName": "plugin:vyre:vyre" }])
        );
        assert_eq!(settings["env"], json!({}));
    }

    #[test]
    fn only_this_servers_messages_are_ours() {
        let t = tools(Arc::default());
        assert!(is_ours(
            &json!({ "subtype": "mcp_message", "server_name": "plugin:vyre:vyre" }),
            &t
        ));
        assert!(!is_ours(
            &json!({ "subtype": "mcp_message", "server_name": "other" }),
            &t
        ));
        assert!(!is_ours(
            &json!({ "subtype": "can_use_tool", "server_name": "plugin:vyre:vyre" }),
            &t
        ));
    }

    #[tokio::test]
    async fn a_call_runs_the_tool_and_answers_in_json_rpc() {
        let seen = Arc::new(Mutex::new(vec![]));
        let t = tools(seen.clone());
        let message = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "threads_list", "arguments": { "limit": 1 } } });
        let reply = reply(&t, &message, Some(42)).await;
        assert_eq!(reply["id"], 2);
        assert_eq!(reply["result"]["isError"], false);
        assert_eq!(
            reply["result"]["content"][0]["text"],
            "threads_list {\"limit\":1}"
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].pid, Some(42));
        assert_eq!(seen[0].input, json!({ "limit": 1 }));
    }

    #[tokio::test]
    async fn a_refusal_is_an_error_result_and_odd_messages_get_json_rpc_errors() {
        let t = tools(Arc::default());
        let refused = reply(
            &t,
            &json!({ "id": 3, "method": "tools/call", "params": { "name": "vault_reveal" } }),
            None,
        )
        .await;
        assert_eq!(refused["result"]["isError"], true);
        let nameless = reply(&t, &json!({ "id": 4, "method": "tools/call" }), None).await;
        assert_eq!(nameless["error"]["code"], -32602);
        let unknown = reply(&t, &json!({ "id": 5, "method": "resources/list" }), None).await;
        assert_eq!(unknown["error"]["code"], -32601);
        let listed = reply(&t, &json!({ "id": 6, "method": "tools/list" }), None).await;
        assert_eq!(listed["result"]["tools"][0]["name"], "threads_list");
        // A notification is acknowledged, never run.
        let note = reply(&t, &json!({ "method": "notifications/initialized" }), None).await;
        assert_eq!(note, json!({ "jsonrpc": "2.0", "result": {}, "id": 0 }));
    }
}
