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
    r.sock
        .call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "ask.answered" && e["payload"]["decision"] == "cancelled"),
        "{events:?}"
    );
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "still there?" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    r.vyred.stop().await;
}
