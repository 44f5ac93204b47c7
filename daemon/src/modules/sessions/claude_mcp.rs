//! Vyre's tools to a Claude Code session as an in-process ("sdk") MCP server: declared in
//! `initialize` with its handshake and tool list already answered (`sdkMcpServerManifests`), so
//! only calls cross the wire, as `mcp_message` control requests on the session's own stdio.
//! Named like the harness plugin's server, it takes its place (the tools keep their names), and
//! the plugin's own is denied in the flag settings: no `vyre mcp` per session.

use serde_json::{Value, json};

use crate::kernel::contracts::provider::{HOOKS_BY_HOST, HostCall, HostTools};
use crate::modules::sessions::claude::{HARNESS_HOOK, HARNESS_HOOK_S};

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

/// `initialize`'s callback hooks for the harness's hooks vyred answers itself: one more entry
/// under each event of [`HOOKS_BY_HOST`], for every tool (no matcher), beside the driver's own.
pub fn harness_hooks(hooks: &mut Value) {
    for event in HOOKS_BY_HOST {
        let entry = json!({ "hookCallbackIds": [format!("{HARNESS_HOOK}{event}")], "timeout": HARNESS_HOOK_S });
        match hooks[event].as_array_mut() {
            Some(entries) => entries.push(entry),
            None => hooks[event] = json!([entry]),
        }
    }
}

/// The harness event a `hook_callback` request is for, when it is one of [`harness_hooks`].
pub fn harness_event(request: &Value) -> Option<&'static str> {
    if request["subtype"] != "hook_callback" {
        return None;
    }
    let event = request["callback_id"]
        .as_str()?
        .strip_prefix(HARNESS_HOOK)?;
    HOOKS_BY_HOST.into_iter().find(|e| *e == event)
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
            hooks: None,
        }
    }

    #[test]
    fn the_harness_hooks_are_registered_beside_the_drivers_own_and_known_again() {
        let mut hooks = json!({
            "PreToolUse": [{ "matcher": "*", "hookCallbackIds": ["vyre-gate"] }],
            "Stop": [{ "hookCallbackIds": ["vyre-stop"] }],
        });
        harness_hooks(&mut hooks);
        assert_eq!(
            hooks["PreToolUse"][0]["hookCallbackIds"],
            json!(["vyre-gate"])
        );
        assert_eq!(
            hooks["PreToolUse"][1],
            json!({ "hookCallbackIds": ["vyre-harness-PreToolUse"], "timeout": 10 })
        );
        assert_eq!(
            hooks["Stop"][1]["hookCallbackIds"],
            json!(["vyre-harness-Stop"])
        );
        assert_eq!(
            hooks["UserPromptSubmit"],
            json!([{ "hookCallbackIds": ["vyre-harness-UserPromptSubmit"], "timeout": 10 }])
        );
        assert!(
            hooks.get("SessionStart").is_none(),
            "SessionStart stays the plugin's command"
        );
        let asked = |id: &str| json!({ "subtype": "hook_callback", "callback_id": id });
        assert_eq!(harness_event(&asked("vyre-harness-Stop")), Some("Stop"));
        assert_eq!(harness_event(&asked("vyre-harness-SessionStart")), None);
        assert_eq!(harness_event(&asked("vyre-gate")), None);
        assert_eq!(
            harness_event(&json!({ "subtype": "mcp_message", "callback_id": "vyre-harness-Stop" })),
            None
        );
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
