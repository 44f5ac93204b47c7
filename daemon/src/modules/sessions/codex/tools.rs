//! Vyre's tools in a Codex session: given to Codex as its dynamic tools (`thread/start`'s
//! `dynamicTools`, a part of its protocol Codex calls experimental) and called back with
//! `item/tool/call` on the same pipe, so no helper process runs beside the session. A call
//! runs as the session (`HostTools`, the registry's one path): the tools a person alone may
//! call are never listed, and refused if named.

use serde_json::{Value, json};

use crate::kernel::contracts::provider::{HostAnswer, HostCall, HostTools};
use crate::modules::sessions::rpc::Rpc;

/// Vyre's tools as `dynamicTools`: one namespace, `vyre`, whose tools load when the model looks
/// for them (`deferLoading`, found with Codex's `tool_search`), as Claude Code defers an MCP
/// server's tools. Listed whole, their schemas went into every request of the session (Codex
/// 0.171 writes them into its `exec` tool's description: about 40 KB for Vyre's ~100 tools).
pub fn specs(tools: &HostTools) -> Value {
    let listed: Vec<Value> = tools
        .tools
        .iter()
        .map(|t| {
            json!({ "type": "function", "name": t.name, "description": t.description,
                    "inputSchema": t.input_schema, "deferLoading": true })
        })
        .collect();
    json!([{ "type": "namespace", "name": NAMESPACE, "tools": listed,
             "description": "Vyre's tools: this machine's threads and sessions, projects, recall of past sessions, memory, the planner, watchers, files and the vault's generator." }])
}

/// The namespace Vyre's tools are given in.
pub const NAMESPACE: &str = "vyre";

/// How a call of Vyre's tool `name` is shown: as Claude Code names an MCP server's tool, so
/// every surface reads a Codex session's calls as a Claude one's.
pub fn shown_name(name: &str) -> String {
    format!("mcp__vyre__{name}")
}

/// A call's arguments as the tool's input: JSON Codex may pass as text, and nothing as `{}`.
pub fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Null => json!({}),
        Value::String(text) if text.trim().is_empty() => json!({}),
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
        other => other.clone(),
    }
}

/// A tool's answer as `item/tool/call`'s result.
pub fn result(answer: &HostAnswer) -> Value {
    json!({
        "contentItems": [{ "type": "inputText", "text": answer.text }],
        "success": !answer.is_error,
    })
}

/// The result of a call that did not run, saying why.
pub fn declined(why: &str) -> Value {
    result(&HostAnswer {
        text: why.to_string(),
        is_error: true,
    })
}

/// Run `call` on its own task, answering request `id` when it is done, so the turn's other
/// messages keep flowing meanwhile.
pub fn run(tools: &HostTools, call: HostCall, rpc: &Rpc, id: Value) {
    let (tools, rpc) = (tools.clone(), rpc.clone());
    tokio::spawn(async move {
        let answer = (tools.call)(call).await;
        let _ = rpc.respond(&id, result(&answer));
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::kernel::contracts::provider::HostTool;

    #[test]
    fn a_calls_arguments_are_its_input_and_its_answer_codexs_result() {
        assert_eq!(tool_input(&json!({ "q": 1 })), json!({ "q": 1 }));
        assert_eq!(tool_input(&json!("{\"q\":1}")), json!({ "q": 1 }));
        assert_eq!(tool_input(&Value::Null), json!({}));
        assert_eq!(tool_input(&json!(" ")), json!({}));
        // Not JSON: passed on as it is, for the tool to refuse (a tool's input is an object).
        assert_eq!(tool_input(&json!("q=1")), json!("q=1"));
        assert_eq!(
            declined("no"),
            json!({ "contentItems": [{ "type": "inputText", "text": "no" }], "success": false })
        );
    }

    #[test]
    fn vyres_tools_are_one_deferred_namespace_of_codexs_function_tools() {
        let tools = HostTools {
            server: "plugin:vyre:vyre".into(),
            tools: Arc::new(vec![HostTool {
                name: "threads_list".into(),
                description: "the threads".into(),
                input_schema: json!({ "type": "object" }),
            }]),
            call: Arc::new(|_| {
                Box::pin(async {
                    HostAnswer {
                        text: String::new(),
                        is_error: false,
                    }
                })
            }),
            hooks: None,
        };
        let given = specs(&tools);
        assert_eq!(
            (given[0]["type"].as_str(), given[0]["name"].as_str()),
            (Some("namespace"), Some(NAMESPACE))
        );
        assert_eq!(
            given[0]["tools"],
            json!([{ "type": "function", "name": "threads_list", "description": "the threads",
                     "inputSchema": { "type": "object" }, "deferLoading": true }])
        );
        assert_eq!(shown_name("threads_list"), "mcp__vyre__threads_list");
    }
}
