//! A scripted fake of the Anthropic Messages API on loopback, for driving the real Claude Code
//! CLI in tests (`ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`, any key).
//!
//! Script, read from the newest user text of each request:
//! - `RUNBASH <command>` → a `tool_use` of Bash with that command; once the request carries its
//!   `tool_result`, a text reply quoting the result.
//! - `CALLTOOL <name> <json>` → a `tool_use` of that tool (an MCP tool is `mcp__<server>__<tool>`)
//!   with that input; the tool's result is quoted as for `RUNBASH`.
//! - `SLOWLY` → the reply streams in many small pieces with pauses (for steering and interrupts).
//! - `MARKDOWN` → a reply in markdown: a heading, a list, a table, inline code and a code block
//!   (for comparing how surfaces draw it).
//! - `EMDASH` → `reply — to [<the text>]`: an answer with an em dash (for the lessons' checks).
//! - anything else → the text `reply to [<the text>]`, streamed in a few deltas.
//!
//! A model whose name contains `nosuch` is refused as the real API refuses an unknown model
//! (404 `not_found_error`).
//!
//! Faults, counted per prompt (the same words retried count against the same budget):
//! - `FAIL500 <n>` → the first `n` requests answer 500 `api_error`, then the reply as usual.
//! - `OVERLOADED <n>` → the same with 529 `overloaded_error`.
//! - `RATELIMIT <n>` → the same with 429 `rate_limit_error`.
//! - `SUBLIMIT` → a request signed in with a subscription token (`Authorization: Bearer`) is
//!   refused at the subscription's five-hour limit: 429 with the `anthropic-ratelimit-unified-*`
//!   headers saying `rejected`, as the real API does. A request with an API key (`x-api-key`)
//!   is answered as usual.
//! - `WINDOWS` → a subscription's request is answered as usual, with the unified headers of a
//!   five-hour window 82% used (`allowed_warning`) and a week 41% used.
//!
//! `<n>` is a count or `always`. Claude Code 2.1.328 retries these with its own backoff (about
//! 0.6 s, then 1.2 s, ...), saying so in `system/api_retry` lines; `always` also says
//! `x-should-retry: false`, so it gives up at once and ends the turn with the error.
//!
//! Every request is recorded (path, headers of interest, body) for assertions.
//!
//! Under `/push/` it is also a fake Web Push service (`push.rs`), and at `/v1/responses` a fake
//! of OpenAI's Responses API for the Codex CLI (`responses.rs`).

pub mod cloudflare;
pub mod directory;
pub mod push;
pub mod responses;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub api_key: Option<String>,
    pub body: Value,
    /// When its body had been read: the bench splits a first delta's wait at it.
    pub at: std::time::Instant,
}

#[derive(Clone, Default)]
struct Shared {
    requests: Arc<Mutex<Vec<Recorded>>>,
    counter: Arc<Mutex<u64>>,
    /// Faults answered so far, per prompt.
    faults: Arc<Mutex<std::collections::HashMap<String, u32>>>,
}

pub struct FakeApi {
    pub addr: SocketAddr,
    /// The fake Web Push service at `/push/` (`push.rs`).
    pub push: push::PushService,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl FakeApi {
    /// On a free loopback port.
    pub async fn start() -> FakeApi {
        FakeApi::start_on(0).await.expect("bind a loopback port")
    }

    /// On this loopback port (0 for any free one).
    pub async fn start_on(port: u16) -> std::io::Result<FakeApi> {
        let shared = Shared::default();
        let push = push::PushService::default();
        let app = push::router(push.clone())
            .merge(Router::new().fallback(handle).with_state(shared.clone()));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeApi {
            addr,
            push,
            shared,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// When the first request read after `at` was read (the bench splits a first delta's wait
    /// there), without copying the recorded bodies.
    pub fn first_request_since(&self, at: std::time::Instant) -> Option<std::time::Instant> {
        let requests = self.shared.requests.lock().unwrap();
        requests.iter().map(|r| r.at).find(|t| *t > at)
    }

    /// Requests to the Responses endpoint (Codex's turns).
    pub fn responses_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/responses"))
            .collect()
    }

    /// Requests to the Messages endpoint that carried a conversation (not probes).
    pub fn message_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.starts_with("/v1/messages") && r.body["messages"].is_array())
            .collect()
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let at = std::time::Instant::now();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let signed_in = headers.get("authorization").is_some() && headers.get("x-api-key").is_none();
    let api_key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
        .or_else(|| {
            headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim_start_matches("Bearer ").to_string())
        });
    shared.requests.lock().unwrap().push(Recorded {
        path: uri.path().to_string(),
        api_key,
        body: body.clone(),
        at,
    });
    if uri.path().ends_with("/responses") {
        let n = {
            let mut c = shared.counter.lock().unwrap();
            *c += 1;
            *c
        };
        return responses::answer(n, &body);
    }
    if !uri.path().starts_with("/v1/messages") || uri.path().contains("count_tokens") {
        if uri.path().contains("count_tokens") {
            return axum::Json(json!({ "input_tokens": 42 })).into_response();
        }
        return (StatusCode::NOT_FOUND, axum::Json(json!({ "type": "error", "error": { "type": "not_found_error", "message": "not in the fake" } }))).into_response();
    }
    let n = {
        let mut c = shared.counter.lock().unwrap();
        *c += 1;
        *c
    };
    let model = body["model"].as_str().unwrap_or("claude-fake").to_string();
    if model.contains("nosuch") {
        let error = json!({ "type": "error", "error": { "type": "not_found_error", "message": format!("model: {model}") } });
        return (StatusCode::NOT_FOUND, axum::Json(error)).into_response();
    }
    if let Some(refusal) = fault(&shared, &body, signed_in) {
        return refusal;
    }
    let reply = script(&body);
    let mut response = if body["stream"] == true {
        stream(n, model, reply)
    } else {
        axum::Json(whole(n, &model, &reply)).into_response()
    };
    if signed_in && prompt_of(&body).0.contains("WINDOWS") {
        windows(response.headers_mut());
    }
    response
}

/// The `anthropic-ratelimit-unified-*` headers of a subscription nearing its five-hour limit
/// (82% used, resetting in two hours; the week 41% used, resetting in four days).
fn windows(h: &mut HeaderMap) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (five, week) = ((now + 2 * 3600).to_string(), (now + 4 * 86400).to_string());
    for (name, value) in [
        ("anthropic-ratelimit-unified-status", "allowed_warning"),
        ("anthropic-ratelimit-unified-reset", five.as_str()),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour",
        ),
        ("anthropic-ratelimit-unified-5h-status", "allowed_warning"),
        ("anthropic-ratelimit-unified-5h-reset", five.as_str()),
        ("anthropic-ratelimit-unified-5h-utilization", "0.82"),
        ("anthropic-ratelimit-unified-5h-surpassed-threshold", "0.8"),
        ("anthropic-ratelimit-unified-7d-status", "allowed"),
        ("anthropic-ratelimit-unified-7d-reset", week.as_str()),
        ("anthropic-ratelimit-unified-7d-utilization", "0.41"),
    ] {
        h.insert(name, value.parse().expect("a header value"));
    }
}

/// What the fake answers.
#[derive(Debug, Clone)]
pub enum Reply {
    Text {
        text: String,
        slowly: bool,
    },
    Tool {
        id: String,
        name: String,
        input: Value,
    },
}

fn texts_of(message: &Value) -> Vec<String> {
    match &message["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(String::from),
                Some("tool_result") => Some(match &b["content"] {
                    Value::String(s) => format!("TOOL_RESULT {s}"),
                    Value::Array(parts) => format!(
                        "TOOL_RESULT {}",
                        parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                    _ => "TOOL_RESULT".into(),
                }),
                _ => None,
            })
            .collect(),
        _ => vec![],
    }
}

/// The newest user text that is not a system reminder the CLI injected, and whether the newest
/// user message carries a tool's result.
fn prompt_of(body: &Value) -> (String, Option<String>) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return (String::new(), None);
    };
    newest(&texts_of(last))
}

/// In the newest user message: the person's words (not a system reminder or an interruption's
/// marker) and a tool's result. Words typed after a result (a call the person refused with Esc,
/// then a new prompt: the CLI sends both in one message) are the prompt, and the result is old.
fn newest(texts: &[String]) -> (String, Option<String>) {
    let result = texts.iter().position(|t| t.starts_with("TOOL_RESULT"));
    let words = texts.iter().rposition(|t| {
        let t = t.trim_start();
        !t.starts_with('<')
            && !t.starts_with("TOOL_RESULT")
            && !t.starts_with("[Request interrupted")
    });
    match (words, result) {
        (Some(w), Some(r)) if w < r => (texts[w].clone(), Some(texts[r].clone())),
        (Some(w), _) => (texts[w].clone(), None),
        (None, r) => (String::new(), r.map(|r| texts[r].clone())),
    }
}

/// A scripted refusal for this request, if its prompt asks for one and its budget is not spent.
fn fault(shared: &Shared, body: &Value, signed_in: bool) -> Option<Response> {
    let (prompt, result) = prompt_of(body);
    if result.is_some() {
        return None;
    }
    if prompt.contains("SUBLIMIT") {
        if !signed_in {
            return None;
        }
        let reset = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() + 3 * 3600)
            .unwrap_or(0);
        let error = json!({ "type": "error", "error": { "type": "rate_limit_error", "message": "This request would exceed your account's rate limit. Please try again later." } });
        let mut response = (StatusCode::TOO_MANY_REQUESTS, axum::Json(error)).into_response();
        let h = response.headers_mut();
        for (name, value) in [
            ("anthropic-ratelimit-unified-status", "rejected".to_string()),
            ("anthropic-ratelimit-unified-reset", reset.to_string()),
            (
                "anthropic-ratelimit-unified-representative-claim",
                "five_hour".to_string(),
            ),
            (
                "anthropic-ratelimit-unified-5h-status",
                "rejected".to_string(),
            ),
            ("anthropic-ratelimit-unified-5h-reset", reset.to_string()),
            (
                "anthropic-ratelimit-unified-5h-utilization",
                "1.0".to_string(),
            ),
            ("x-should-retry", "false".to_string()),
        ] {
            h.insert(name, value.parse().expect("a header value"));
        }
        return Some(response);
    }
    let (status, kind, message, word) = [
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "Internal server error",
            "FAIL500 ",
        ),
        (
            StatusCode::from_u16(529).expect("529"),
            "overloaded_error",
            "Overloaded",
            "OVERLOADED ",
        ),
        (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            "RATELIMIT ",
        ),
    ]
    .into_iter()
    .find(|(.., word)| prompt.contains(word))?;
    let count = prompt.split(word).nth(1)?.split_whitespace().next()?;
    let always = count == "always";
    let budget: u32 = if always {
        u32::MAX
    } else {
        count.parse().ok()?
    };
    {
        let mut faults = shared.faults.lock().unwrap();
        let done = faults.entry(prompt.clone()).or_default();
        if *done >= budget {
            return None;
        }
        *done += 1;
    }
    let error = json!({ "type": "error", "error": { "type": kind, "message": message } });
    let mut response = (status, axum::Json(error)).into_response();
    let h = response.headers_mut();
    h.insert("retry-after-ms", "50".parse().expect("a header value"));
    h.insert(
        "request-id",
        "req_fake_fault".parse().expect("a header value"),
    );
    if always {
        h.insert("x-should-retry", "false".parse().expect("a header value"));
    }
    Some(response)
}

fn script(body: &Value) -> Reply {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return Reply::Text {
            text: "hello".into(),
            slowly: false,
        };
    };
    let (prompt, result) = newest(&texts_of(last));
    if let Some(result) = result {
        return Reply::Text {
            text: format!(
                "tool said: {}",
                result.trim_start_matches("TOOL_RESULT").trim()
            ),
            slowly: false,
        };
    }
    let id = format!("toolu_fake_{}", messages.len());
    if let Some(command) = prompt.split("RUNBASH ").nth(1) {
        let input = json!({ "command": command.trim(), "description": "run it" });
        return Reply::Tool {
            id,
            name: "Bash".into(),
            input,
        };
    }
    if let Some(call) = prompt.split("CALLTOOL ").nth(1) {
        // `CALLTOOL <name> <json input>`: any tool the request offers, e.g. an MCP server's.
        let (name, input) = call.trim().split_once(' ').unwrap_or((call.trim(), "{}"));
        let input = serde_json::from_str(input).unwrap_or_else(|_| json!({}));
        return Reply::Tool {
            id,
            name: name.to_string(),
            input,
        };
    }
    if prompt.contains("ASKQUESTION") {
        let input = json!({ "questions": [{
            "question": "Which color do you prefer?", "header": "Color", "multiSelect": false,
            "options": [{ "label": "Blue", "description": "the sky" }, { "label": "Red", "description": "a rose" }]
        }] });
        return Reply::Tool {
            id,
            name: "AskUserQuestion".into(),
            input,
        };
    }
    if let Some(path) = prompt.split("WRITEFILE ").nth(1) {
        let input = json!({ "file_path": path.trim(), "content": "{\"permissions\":{\"allow\":[\"Bash\"]}}" });
        return Reply::Tool {
            id,
            name: "Write".into(),
            input,
        };
    }
    if let Some(task) = prompt.split("RUNAGENT ").nth(1) {
        let input = json!({ "description": "a helper", "prompt": task.trim(), "subagent_type": "general-purpose" });
        return Reply::Tool {
            id,
            name: "Agent".into(),
            input,
        };
    }
    if prompt.contains("EXITPLAN") {
        return Reply::Tool {
            id,
            name: "ExitPlanMode".into(),
            input: json!({ "plan": "1. do the thing" }),
        };
    }
    if prompt.contains("MARKDOWN") {
        return Reply::Text {
            text: MARKDOWN_REPLY.into(),
            slowly: false,
        };
    }
    if prompt.contains("EMDASH") {
        return Reply::Text {
            text: format!("reply \u{2014} to [{}]", prompt.trim()),
            slowly: false,
        };
    }
    Reply::Text {
        slowly: prompt.contains("SLOWLY"),
        text: format!("reply to [{}]", prompt.trim()),
    }
}

/// The `MARKDOWN` reply: what a model's answers are made of.
const MARKDOWN_REPLY: &str = "## What changed\n\nThe parser now **keeps** the order of `items` and:\n\n1. reads the transcript once\n2. merges the event log\n   - asks and their answers\n   - interruptions\n\n| Part | Before | After |\n|------|-------:|------:|\n| reload | lost order | same order |\n| paging | none | 100 items |\n\n```rust\nfn merge(a: &[Item], b: &[Item]) -> Vec<Item> {\n    let mut out = a.to_vec();\n    out.extend_from_slice(b);\n    out.sort_by_key(|i| i.at);\n    out\n}\n```\n\n> A quote, and a [link](https://example.com/docs).\n";

fn whole(n: u64, model: &str, reply: &Reply) -> Value {
    let (content, stop) = match reply {
        Reply::Text { text, .. } => (json!([{ "type": "text", "text": text }]), "end_turn"),
        Reply::Tool { id, name, input } => (
            json!([{ "type": "tool_use", "id": id, "name": name, "input": input }]),
            "tool_use",
        ),
    };
    json!({
        "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": { "input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 }
    })
}

fn sse(kind: &str, data: Value) -> Bytes {
    Bytes::from(format!("event: {kind}\ndata: {data}\n\n"))
}

fn stream(n: u64, model: String, reply: Reply) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, Infallible>>(64);
    tokio::spawn(async move {
        let send = |b: Bytes| {
            let tx = tx.clone();
            async move { tx.send(Ok(b)).await.is_ok() }
        };
        let start = json!({ "type": "message_start", "message": {
            "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 } } });
        if !send(sse("message_start", start)).await {
            return;
        }
        let stop_reason = match &reply {
            Reply::Text { text, slowly } => {
                send(sse("content_block_start", json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }))).await;
                let words: Vec<String> = text.split_inclusive(' ').map(String::from).collect();
                let (pieces, pause) = if *slowly {
                    let mut many = Vec::new();
                    for i in 0..40 {
                        many.push(format!("slow{i} "));
                    }
                    many.extend(words);
                    (many, Duration::from_millis(100))
                } else {
                    (words, Duration::from_millis(0))
                };
                for piece in pieces {
                    if !send(sse("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": piece } }))).await {
                        return;
                    }
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
                send(sse(
                    "content_block_stop",
                    json!({ "type": "content_block_stop", "index": 0 }),
                ))
                .await;
                "end_turn"
            }
            Reply::Tool { id, name, input } => {
                send(sse("content_block_start", json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "tool_use", "id": id, "name": name, "input": {} } }))).await;
                let input = input.to_string();
                send(sse("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": input } }))).await;
                send(sse(
                    "content_block_stop",
                    json!({ "type": "content_block_stop", "index": 0 }),
                ))
                .await;
                "tool_use"
            }
        };
        send(sse("message_delta", json!({ "type": "message_delta", "delta": { "stop_reason": stop_reason, "stop_sequence": null }, "usage": { "output_tokens": 12 } }))).await;
        send(sse("message_stop", json!({ "type": "message_stop" }))).await;
    });
    let body = Body::from_stream(tokio_stream_from(rx));
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("request-id", format!("req_fake_{n}"))
        .body(body)
        .unwrap()
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<Bytes, Infallible>>,
) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn a_result_alone_is_quoted_and_reminders_are_not_words() {
        let texts = strings(&["TOOL_RESULT hi", "<system-reminder>x</system-reminder>"]);
        assert_eq!(
            newest(&texts),
            (String::new(), Some("TOOL_RESULT hi".into()))
        );
    }

    #[test]
    fn words_typed_after_a_refused_call_are_the_prompt() {
        let texts = strings(&[
            "TOOL_RESULT The user doesn't want to proceed",
            "[Request interrupted by user for tool use]",
            "FAIL500 always",
        ]);
        assert_eq!(newest(&texts), ("FAIL500 always".into(), None));
        // Words before the result (a prompt, then the call it caused) leave the result newest.
        let texts = strings(&["RUNBASH ls", "TOOL_RESULT a b"]);
        assert_eq!(
            newest(&texts),
            ("RUNBASH ls".into(), Some("TOOL_RESULT a b".into()))
        );
    }

    #[test]
    fn the_markdown_reply_is_markdown() {
        let body = json!({ "messages": [{ "role": "user", "content": "MARKDOWN please" }] });
        let Reply::Text { text, .. } = script(&body) else {
            panic!("a text reply");
        };
        for part in [
            "## ",
            "| Part |",
            "```rust",
            "- asks",
            "[link](",
            "**keeps**",
        ] {
            assert!(text.contains(part), "{part}");
        }
    }
}
