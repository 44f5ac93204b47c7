//! An MCP server's form in a Claude Code session, on the real CLI (issue 28): a server the
//! person configured asks for input (MCP `elicitation/create`), Claude Code passes it on as its
//! `elicitation` control request, and vyred puts it to the person as a question ask, one
//! question per field in the server's order. The person's answer reaches the server as the
//! form's content; one that does not fit (a number in words) is refused with what would, and
//! the question stays open; a decline and an interrupt reach the server as such.

use serde_json::{Value, json};

use crate::threads_e2e::*;
use vyre::surfaces::client::EventStream;

const BOOK: &str = "CALLTOOL mcp__tables__book {}";

/// The test's MCP server, whose `book` asks a form first.
pub(crate) fn form_server() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/mcp/form_server.py")
        .canonicalize()
        .unwrap()
}

/// The sessions' Claude Code with the form server as a person's own (`~/.claude.json`).
fn with_form_server(r: &Rig) {
    let config = json!({ "mcpServers": { "tables": {
        "type": "stdio", "command": "python3", "args": [form_server()] } } });
    let home = r.home.dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".claude.json"), config.to_string()).unwrap();
}

/// What the last tool call gave the model, as the CLI sent it.
fn last_tool_result(r: &Rig) -> String {
    let body = r.api.message_requests().pop().unwrap().body;
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let result = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .rfind(|b| b["type"] == "tool_result");
    result.map(|b| b["content"].to_string()).unwrap_or_default()
}

/// Answer the form server's form (`ask`, raised): first a number in words, which is refused
/// with what would fit while the form stays open, then Tuesday, 4 and Yes.
pub(crate) async fn fill_the_form(r: &Rig, ask: &Value) {
    let wrong = json!({ "ask": ask["ask"], "decision": "allow", "answers": {
        "Day": "Tuesday", "Seats: How many people": "two" } });
    let err = r.sock.call("threads.answer", &wrong).await.unwrap_err();
    let err = err.to_string();
    assert!(
        err.contains("invalid_answer") && err.contains("whole number"),
        "{err}"
    );
    let filled = json!({ "ask": ask["ask"], "decision": "allow", "answers": {
        "Day": "Tuesday", "Seats: How many people": "4", "Window": "Yes" } });
    r.sock.call("threads.answer", &filled).await.unwrap();
}

/// The form server's tool said it got [`fill_the_form`]'s values (`out`: its answer as the
/// model read it).
pub(crate) fn the_server_got_the_form(out: &str) {
    assert!(out.contains("elicited"), "{out}");
    for part in ["accept", "tue", "seats", "4", "window", "true"] {
        assert!(out.contains(part), "{part} in {out}");
    }
}

async fn finished(stream: &mut EventStream) -> Vec<Value> {
    let events = events_until(stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true,
        "{events:?}"
    );
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_mcp_servers_form_in_a_claude_session_is_put_to_the_person() {
    let r = rig("claude-forms").await;
    with_form_server(&r);
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let input = json!({ "cwd": r.work, "text": BOOK });
    let started = r.sock.call("threads.start", &input).await.unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    // Claude Code asks first whether the server's tool may run.
    let allow = json!({ "decision": "allow" });
    let tool = answer_next_ask(&r, &mut stream, allow.clone()).await;
    assert_eq!(
        (tool["kind"].as_str(), tool["tool"].as_str()),
        (Some("tool"), Some("mcp__tables__book")),
        "{tool}"
    );
    // Then the server's form: its fields in the server's order, its choices by their titles.
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let form = events.last().unwrap()["payload"].clone();
    assert_eq!(form["kind"], "question", "{form}");
    assert_eq!(form["tool"], "tables (MCP form)", "{form}");
    assert!(
        form["summary"].as_str().unwrap().contains("Book a table"),
        "{form}"
    );
    let questions = form["input"]["questions"].as_array().unwrap();
    let headers: Vec<&str> = questions
        .iter()
        .map(|q| q["header"].as_str().unwrap())
        .collect();
    assert_eq!(headers, ["Day", "Seats", "Window"], "{form}");
    assert_eq!(questions[0]["options"][1]["label"], "Tuesday");
    fill_the_form(&r, &form).await;
    let events = finished(&mut stream).await;
    let answered = of_type(&events, "ask.answered");
    assert_eq!(
        answered[0]["payload"]["answers"]["Day"], "Tuesday",
        "{answered:?}"
    );
    the_server_got_the_form(&last_tool_result(&r));

    // Declined: the server is told so, and the turn goes on.
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": BOOK }))
        .await
        .unwrap();
    answer_next_ask(&r, &mut stream, allow.clone()).await;
    answer_next_ask(&r, &mut stream, json!({ "decision": "deny" })).await;
    finished(&mut stream).await;
    let out = last_tool_result(&r);
    assert!(out.contains("decline") && !out.contains("tue"), "{out}");

    // Interrupted while the form is open: it is withdrawn, and the next turn runs.
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": BOOK }))
        .await
        .unwrap();
    answer_next_ask(&r, &mut stream, allow).await;
    events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    interrupt_the_open_ask(&r, &mut stream, &thread).await;
    r.vyred.stop().await;
}
