//! A scripted fake of the OpenAI Responses API (`POST /v1/responses`, streamed), for driving
//! the real Codex CLI in tests: its model provider's `base_url` pointed here, any key.
//!
//! Script, read from the newest input item of each request:
//! - a tool's output (`function_call_output`) → the text `tool said: <its output>`;
//! - `RUNBASH <command>` → a call of Codex's `exec_command` tool with that command;
//! - `CALLTOOL <name> <json>` → a call of the function tool `name` (one of the client's
//!   dynamic tools, e.g. Vyre's `threads_list`) with that JSON as its arguments; a name
//!   `<namespace>/<tool>` calls a tool in a namespace (an MCP server's: `mcp__<server>/<tool>`);
//! - `SLOWLY` → the reply streams in many small pieces with pauses (for interrupts);
//! - anything else → the text `reply to [<the text>]`, streamed in a few deltas.
//!
//! The events are the ones the real API streams and Codex reads: `response.created`,
//! `response.output_item.added`, `response.output_text.delta`, `response.output_item.done`,
//! `response.completed` with the usage.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::{Value, json};

/// What the script answers.
#[derive(Debug, PartialEq)]
enum Reply {
    Text { text: String, slowly: bool },
    Command { command: String },
    Call { name: String, arguments: String },
}

/// The text of a `message` input item.
fn text_of(item: &Value) -> String {
    match &item["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// What a tool's output says, without Codex's own header (`Chunk ID: ...` up to `Output:`).
fn output_of(item: &Value) -> String {
    let text = match &item["output"] {
        Value::String(s) => s.clone(),
        other => text_of(&json!({ "content": other })),
    };
    match text.split_once("Output:\n") {
        Some((_, out)) => out.trim_end().to_string(),
        None => text.trim_end().to_string(),
    }
}

fn script(body: &Value) -> Reply {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    for item in input.iter().rev() {
        match item["type"].as_str() {
            Some("function_call_output") => {
                return Reply::Text {
                    text: format!("tool said: {}", output_of(item)),
                    slowly: false,
                };
            }
            Some("message") if item["role"] == "user" => {
                let text = text_of(item);
                // Codex's own context (`<environment_context>` ...) is not the person's words.
                if text.trim_start().starts_with('<') {
                    continue;
                }
                if let Some(call) = text.split("CALLTOOL ").nth(1) {
                    let (name, arguments) =
                        call.trim().split_once(' ').unwrap_or((call.trim(), "{}"));
                    return Reply::Call {
                        name: name.to_string(),
                        arguments: arguments.trim().to_string(),
                    };
                }
                if let Some(command) = text.split("RUNBASH ").nth(1) {
                    return Reply::Command {
                        command: command.trim().to_string(),
                    };
                }
                return Reply::Text {
                    slowly: text.contains("SLOWLY"),
                    text: format!("reply to [{}]", text.trim()),
                };
            }
            _ => {}
        }
    }
    Reply::Text {
        text: "hello".into(),
        slowly: false,
    }
}

/// Stream a call of function tool `name`: added, then done with its arguments (the item).
async fn call<F, Fut>(send: &F, n: u64, name: &str, arguments: String) -> Value
where
    F: Fn(Value) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut call = json!({ "type": "function_call", "id": format!("fc_fake_{n}"), "call_id": format!("call_fake_{n}"),
                           "name": name, "arguments": "", "status": "in_progress" });
    // A tool in a namespace (`mcp__<server>/<tool>`: Codex defers MCP servers' tools behind
    // their server's namespace and calls them by it).
    if let Some((namespace, tool)) = name.split_once('/') {
        call["namespace"] = json!(namespace);
        call["name"] = json!(tool);
    }
    send(json!({ "type": "response.output_item.added", "output_index": 0, "item": call })).await;
    call["arguments"] = json!(arguments);
    call["status"] = json!("completed");
    call
}

fn sse(data: Value) -> Bytes {
    let kind = data["type"].as_str().unwrap_or("message").to_string();
    Bytes::from(format!("event: {kind}\ndata: {data}\n\n"))
}

/// The streamed answer to request number `n`.
pub fn answer(n: u64, body: &Value) -> Response {
    let reply = script(body);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Bytes, Infallible>>(64);
    tokio::spawn(async move {
        let response = format!("resp_fake_{n}");
        let send = |v: Value| {
            let tx = tx.clone();
            async move { tx.send(Ok(sse(v))).await.is_ok() }
        };
        send(json!({ "type": "response.created", "response": { "id": response } })).await;
        let item = match reply {
            Reply::Text { text, slowly } => {
                let id = format!("msg_fake_{n}");
                let added =
                    json!({ "type": "message", "id": id, "role": "assistant", "content": [] });
                send(json!({ "type": "response.output_item.added", "output_index": 0, "item": added })).await;
                let mut pieces: Vec<String> = Vec::new();
                if slowly {
                    pieces.extend((0..40).map(|i| format!("slow{i} ")));
                }
                let whole = pieces.concat() + &text;
                pieces.extend(text.split_inclusive(' ').map(String::from));
                let pause = if slowly {
                    Duration::from_millis(100)
                } else {
                    Duration::ZERO
                };
                for piece in pieces {
                    let delta = json!({ "type": "response.output_text.delta", "item_id": id, "output_index": 0, "content_index": 0, "delta": piece });
                    if !send(delta).await {
                        return;
                    }
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
                json!({ "type": "message", "id": id, "role": "assistant", "status": "completed",
                        "content": [{ "type": "output_text", "text": whole, "annotations": [] }] })
            }
            Reply::Command { command } => {
                call(
                    &send,
                    n,
                    "exec_command",
                    json!({ "cmd": command }).to_string(),
                )
                .await
            }
            Reply::Call { name, arguments } => call(&send, n, &name, arguments).await,
        };
        send(json!({ "type": "response.output_item.done", "output_index": 0, "item": item })).await;
        let usage = json!({ "input_tokens": 100, "input_tokens_details": { "cached_tokens": 20 },
                            "output_tokens": 12, "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 112 });
        send(
            json!({ "type": "response.completed", "response": { "id": response, "usage": usage } }),
        )
        .await;
    });
    let stream = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("a response")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Value {
        json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": text }] })
    }

    #[test]
    fn the_newest_words_or_output_choose_the_reply() {
        let context = user("<environment_context>cwd</environment_context>");
        let body = json!({ "input": [user("RUNBASH echo hi"), context] });
        assert_eq!(
            script(&body),
            Reply::Command {
                command: "echo hi".into()
            }
        );
        let output = json!({ "type": "function_call_output", "call_id": "c", "output": "Chunk ID: 1\nProcess exited with code 0\nOutput:\nhi\n" });
        let body = json!({ "input": [user("RUNBASH echo hi"), output] });
        assert_eq!(
            script(&body),
            Reply::Text {
                text: "tool said: hi".into(),
                slowly: false
            }
        );
        let body = json!({ "input": [user("CALLTOOL threads_list {\"limit\": 1}")] });
        assert_eq!(
            script(&body),
            Reply::Call {
                name: "threads_list".into(),
                arguments: "{\"limit\": 1}".into()
            }
        );
        let body = json!({ "input": [user("SLOWLY there")] });
        assert_eq!(
            script(&body),
            Reply::Text {
                text: "reply to [SLOWLY there]".into(),
                slowly: true
            }
        );
    }
}
