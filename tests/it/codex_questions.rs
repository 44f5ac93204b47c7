//! Codex's questions to the person on the real Codex CLI (issue 28): its `request_user_input`
//! tool, offered in the default mode, is asked through vyred as Claude Code's AskUserQuestion
//! is (a `question` ask with its choices), and the person's answer, or none when they decline,
//! reaches the model by Codex's own ids.

use serde_json::json;

use crate::codex::codex_rig;
use crate::threads_e2e::*;

const ASK: &str = r#"CALLTOOL request_user_input {"questions":[{"id":"db","header":"Database","question":"Which database should the app use?","options":[{"label":"SQLite (Recommended)","description":"Embedded, nothing to run"},{"label":"Postgres","description":"A server of its own"}]}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Codex CLI: tests/run, or VYRE_TEST_CODEX=... cargo test -- --include-ignored"]
async fn codex_asks_the_person_a_question_and_the_answer_reaches_the_model() {
    let (api, r) = codex_rig("codex-questions").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let input = json!({ "cwd": r.work, "provider": "codex", "text": ASK });
    let started = r.sock.call("threads.start", &input).await.unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let answer = json!({ "decision": "allow", "answers": { "Which database should the app use?": "Postgres" } });
    let raised = answer_next_ask(&r, &mut stream, answer).await;
    assert_eq!(raised["kind"], "question", "{raised}");
    assert_eq!(raised["tool"], "request_user_input", "{raised}");
    let q = &raised["input"]["questions"][0];
    assert_eq!(
        q["question"], "Which database should the app use?",
        "{raised}"
    );
    assert_eq!(q["header"], "Database");
    assert_eq!(q["options"][0]["label"], "SQLite (Recommended)");
    assert_eq!(q["options"][1]["description"], "A server of its own");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true,
        "{events:?}"
    );
    let answered = of_type(&events, "ask.answered");
    assert_eq!(
        answered[0]["payload"]["answers"]["Which database should the app use?"], "Postgres",
        "every surface sees what was chosen: {answered:?}"
    );
    let said = api.responses_requests().pop().unwrap().body["input"].to_string();
    assert!(
        said.contains("Postgres") && said.contains("db"),
        "the answer reached the model by its id: {said}"
    );

    // Declined: the model gets no answer, and the turn goes on.
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": ASK }))
        .await
        .unwrap();
    answer_next_ask(&r, &mut stream, json!({ "decision": "deny" })).await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    let said = api.responses_requests().pop().unwrap().body["input"].to_string();
    let last_output = said.rsplit("function_call_output").next().unwrap();
    assert!(!last_output.contains("Postgres"), "{said}");

    // Asked and then interrupted: the question is withdrawn, and the thread takes the next turn.
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": ASK }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    interrupt_the_open_ask(&r, &mut stream, &thread).await;
    r.vyred.stop().await;
}

/// The output of the last tool call the model was given, as it read it.
fn last_output(api: &crate::fake_api::FakeApi) -> String {
    let body = api.responses_requests().pop().unwrap().body;
    let items = body["input"].as_array().cloned().unwrap_or_default();
    let last = items
        .iter()
        .rev()
        .find(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].to_string());
    last.unwrap_or_default()
}

/// The sessions' Codex with the test's MCP server, whose `book` asks a form first
/// (`tests/fixtures/mcp/form_server.py`), in its `~/.codex/config.toml` as a person's would be.
fn with_form_server(r: &crate::threads_e2e::Rig) {
    let server = crate::mcp_forms::form_server();
    let codex = r.home.dir.join("home/.codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("config.toml"),
        format!(
            "[mcp_servers.tables]\ncommand = \"python3\"\nargs = [{:?}]\n",
            server.display().to_string()
        ),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Codex CLI: tests/run, or VYRE_TEST_CODEX=... cargo test -- --include-ignored"]
async fn an_mcp_servers_form_is_put_to_the_person_and_their_answer_reaches_the_server() {
    let (api, r) = codex_rig("codex-forms").await;
    with_form_server(&r);
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let book = "CALLTOOL mcp__tables/book {}";
    let input = json!({ "cwd": r.work, "provider": "codex", "text": book });
    let started = r.sock.call("threads.start", &input).await.unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    // Codex asks first whether the server's tool may run, as Claude Code asks for an MCP tool.
    let allow = json!({ "decision": "allow" });
    let approval = answer_next_ask(&r, &mut stream, allow.clone()).await;
    assert_eq!(approval["kind"], "tool", "{approval}");
    assert_eq!(approval["tool"], "mcp__tables__book", "{approval}");
    // The person fills the form in: a choice, a number in their own words, a yes-or-no; a
    // number in words is refused first, and the form stays open for the right one.
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = events.last().unwrap()["payload"].clone();
    crate::mcp_forms::fill_the_form(&r, &raised).await;
    assert_eq!(raised["kind"], "question", "{raised}");
    assert!(
        raised["tool"].as_str().unwrap().contains("tables"),
        "{raised}"
    );
    let questions = raised["input"]["questions"].as_array().unwrap();
    let day = questions.iter().find(|q| q["header"] == "Day").unwrap();
    assert_eq!(day["options"][1]["label"], "Tuesday", "{raised}");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true,
        "{events:?}"
    );
    // What the server got back, as its tool's answer read by the model.
    crate::mcp_forms::the_server_got_the_form(&last_output(&api));

    // Declined: the server is told so, and the turn goes on.
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": book }))
        .await
        .unwrap();
    answer_next_ask(&r, &mut stream, allow.clone()).await;
    answer_next_ask(&r, &mut stream, json!({ "decision": "deny" })).await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    let out = last_output(&api);
    assert!(out.contains("decline") && !out.contains("tue"), "{out}");

    // The tool itself refused: it does not run, so nothing is asked of the person.
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": book }))
        .await
        .unwrap();
    answer_next_ask(&r, &mut stream, json!({ "decision": "deny" })).await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(of_type(&events, "ask.raised").is_empty(), "{events:?}");
    let out = last_output(&api);
    assert!(!out.is_empty() && !out.contains("elicited"), "{out}");
    r.vyred.stop().await;
}
