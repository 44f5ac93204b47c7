//! Learning on the real CLI (spec 7.11, issue 24): a correction in a prompt becomes a lesson; a
//! lesson with a check is enforced in code (an answer that breaks it is sent back before the
//! turn ends, a command that breaks it is refused); a lesson broken again moves up a level. And
//! the harness's hooks for a terminal's session: reminders in the prompt, a lesson learned from
//! `/vyre remember`, an answer sent back.

use serde_json::{Value, json};

use crate::support::*;
use crate::threads_e2e::*;

/// The events until a turn ends or asks the person (a lesson that refuses a call never asks).
async fn finished_or_asked(stream: &mut vyre::surfaces::client::EventStream) -> Vec<Value> {
    events_until(stream, |e| {
        matches!(e["type"].as_str(), Some("thread.finished" | "ask.raised"))
    })
    .await
}

async fn lessons(r: &Rig) -> Vec<Value> {
    r.sock
        .call("learn.lessons", &json!({}))
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The newest user text the model was sent in each request, in order.
fn told(r: &Rig) -> Vec<String> {
    r.api
        .message_requests()
        .iter()
        .map(|q| {
            let m = q.body["messages"].as_array().unwrap();
            m.last().unwrap()["content"].to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_correction_becomes_a_lesson_that_sends_an_answer_back_and_escalates() {
    let r = rig("learn-dashes").await;
    let mut stream = r
        .sock
        .events("types=thread.*,lesson.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    let events = send_until_finished(
        &r,
        &mut stream,
        &thread,
        "don't use em dashes in your answers",
    )
    .await;
    let learned = events
        .iter()
        .find(|e| e["type"] == "lesson.learned")
        .expect("a lesson learned from the correction");
    assert_eq!(learned["thread"], thread.as_str());
    let l = &lessons(&r).await[0];
    assert_eq!(l["rule"], "don't use em dashes in your answers");
    assert_eq!(
        l["check"],
        json!({ "type": "banned", "chars": ["\u{2014}"], "words": [] })
    );
    assert_eq!(l["level"], "remind");
    assert_eq!(l["source"]["kind"], "correction");
    assert_eq!(l["source"]["thread"], thread.as_str());

    // The model's answer has an em dash: the turn does not end with it.
    let before = told(&r).len();
    let events = send_until_finished(&r, &mut stream, &thread, "EMDASH tell me the plan").await;
    let sent: Vec<String> = told(&r)[before..].to_vec();
    assert_eq!(sent.len(), 2, "the answer, then the answer again: {sent:?}");
    assert!(
        sent[1].contains("Before you finish") && sent[1].contains("don't use em dashes"),
        "Claude is told which lesson it broke: {}",
        sent[1]
    );
    assert!(
        !sent[1].contains('\u{2014}'),
        "the feedback names the character without using it"
    );
    let broken: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "lesson.broken")
        .collect();
    assert_eq!(broken.len(), 1, "{events:?}");
    assert_eq!(broken[0]["thread"], thread.as_str());
    let timeline = r
        .sock
        .call("threads.timeline", &json!({ "thread": thread }))
        .await
        .unwrap();
    let last = timeline["items"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|i| i["kind"] == "assistant")
        .unwrap_or_else(|| panic!("an answer: {timeline}"))
        .to_string();
    assert!(
        !last.contains('\u{2014}'),
        "the turn ended on an answer that keeps the lesson: {last}"
    );
    let l = &lessons(&r).await[0];
    assert_eq!(
        (l["broken"].as_i64(), l["level"].as_str()),
        (Some(1), Some("remind"))
    );
    // The thread's lesson events, for a chat opened later.
    let said = r
        .sock
        .call("learn.events", &json!({ "thread": thread }))
        .await
        .unwrap();
    let kinds: Vec<&str> = said
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["lesson.learned", "lesson.broken"], "{said}");
    assert!(l["applied"].as_i64().unwrap() >= 1);

    // Broken again: it moves up to asking.
    let events = send_until_finished(&r, &mut stream, &thread, "EMDASH and once more").await;
    let up = events
        .iter()
        .find(|e| e["type"] == "lesson.escalated")
        .unwrap_or_else(|| panic!("escalated: {events:?}"));
    assert_eq!(
        (up["payload"]["from"].as_str(), up["payload"]["to"].as_str()),
        (Some("remind"), Some("ask"))
    );
    let l = &lessons(&r).await[0];
    assert_eq!(
        (l["broken"].as_i64(), l["level"].as_str()),
        (Some(2), Some("ask"))
    );

    // Retired, it is no longer checked.
    r.sock
        .call("learn.retire", &json!({ "lesson": l["lesson"] }))
        .await
        .unwrap();
    let before = told(&r).len();
    send_until_finished(&r, &mut stream, &thread, "EMDASH after it was retired").await;
    assert_eq!(
        told(&r).len() - before,
        1,
        "the answer ends the turn as it is"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_blocking_lesson_refuses_the_command_with_the_lesson_quoted() {
    let r = rig("learn-command").await;
    let added = r
        .sock
        .call(
            "learn.add",
            &json!({ "rule": "never run `touch` in this repository", "level": "block" }),
        )
        .await
        .unwrap();
    assert_eq!(
        added["check"],
        json!({ "type": "command", "words": ["touch"], "flags": [] })
    );
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,lesson.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch forbidden.txt" }),
        )
        .await
        .unwrap();
    let events = finished_or_asked(&mut stream).await;
    assert_eq!(
        events.last().unwrap()["type"],
        "thread.finished",
        "refused, not asked: {events:?}"
    );
    assert!(!r.work.join("forbidden.txt").exists());
    assert!(events.iter().any(|e| e["type"] == "lesson.broken"));
    let said = told(&r).last().unwrap().clone();
    assert!(
        said.contains("never run `touch` in this repository"),
        "the tool's result quotes the lesson: {said}"
    );
    // A lesson narrowed to an agent holds that agent's sessions, and not the person's.
    let juno = r
        .sock
        .call(
            "agents.create",
            &json!({ "name": "juno", "kind": "assistant" }),
        )
        .await
        .unwrap();
    r.sock
        .call(
            "learn.add",
            &json!({ "rule": "never run `mkdir` for the assistant", "level": "block", "scope": "agent", "target": "juno" }),
        )
        .await
        .unwrap();
    r.sock
        .call(
            "agents.ask",
            &json!({ "agent": "juno", "text": "RUNBASH mkdir by-juno" }),
        )
        .await
        .unwrap();
    let events = finished_or_asked(&mut stream).await;
    assert_eq!(
        events.last().unwrap()["type"],
        "thread.finished",
        "{events:?}"
    );
    let folder = std::path::PathBuf::from(juno["cwd"].as_str().unwrap());
    assert!(!folder.join("by-juno").exists());
    let said = told(&r).last().unwrap().clone();
    assert!(
        said.contains("never run `mkdir` for the assistant"),
        "{said}"
    );
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH mkdir by-me" }),
        )
        .await
        .unwrap();
    let events = finished_or_asked(&mut stream).await;
    assert_eq!(
        events.last().unwrap()["type"],
        "ask.raised",
        "the person's session is asked as usual: {events:?}"
    );

    // A session cannot teach or unteach: the person's only.
    let refused = r
        .sock
        .call(
            "learn.check",
            &json!({ "stage": "stop", "session": "x", "text": "y" }),
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("for_modules"), "{refused}");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminals_hooks_learn_remind_and_send_an_answer_back() {
    let home = TempHome::new("learn-terminal");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let hook = |event: &str, input: Value| json!({ "event": event, "input": input });
    // `/vyre remember` in a terminal's prompt: a lesson, said back in the next prompt.
    sock.call(
        "harness.hook",
        &hook("UserPromptSubmit", json!({ "session_id": "t1", "prompt": "/vyre remember the staging host is called blue" })),
    )
    .await
    .unwrap();
    let all = sock.call("learn.lessons", &json!({})).await.unwrap();
    assert_eq!(all[0]["rule"], "the staging host is called blue");
    assert_eq!(all[0]["source"]["kind"], "remember");
    let out = sock
        .call(
            "harness.hook",
            &hook(
                "UserPromptSubmit",
                json!({ "session_id": "t1", "prompt": "deploy it" }),
            ),
        )
        .await
        .unwrap();
    let context = out["output"]["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("- the staging host is called blue"),
        "{context}"
    );
    let brief = sock
        .call(
            "harness.hook",
            &hook("SessionStart", json!({ "session_id": "t2", "cwd": "/tmp" })),
        )
        .await
        .unwrap();
    assert!(
        brief
            .to_string()
            .contains("the staging host is called blue"),
        "{brief}"
    );

    // A lesson with a check: the terminal's answer that breaks it is sent back.
    sock.call("learn.add", &json!({ "rule": "don't say \"delve\"" }))
        .await
        .unwrap();
    let stop = |text: &str| {
        hook(
            "Stop",
            json!({ "session_id": "t1", "last_assistant_message": text }),
        )
    };
    let out = sock
        .call("harness.hook", &stop("Let us delve into it."))
        .await
        .unwrap();
    assert_eq!(out["output"]["decision"], "block", "{out}");
    assert!(
        out["output"]["reason"]
            .as_str()
            .unwrap()
            .contains("don't say \"delve\"")
    );
    // Once at the remind level: the next end goes through, and then the turn starts over.
    let out = sock
        .call("harness.hook", &stop("Let us delve again."))
        .await
        .unwrap();
    assert_eq!(out["output"], Value::Null, "{out}");
    let out = sock
        .call("harness.hook", &stop("Plain words."))
        .await
        .unwrap();
    assert_eq!(out["output"], Value::Null);
    // A person's lessons: edited and retired by the person.
    let edited = sock
        .call(
            "learn.edit",
            &json!({ "lesson": all[0]["lesson"], "level": "block", "scope": "project" }),
        )
        .await
        .unwrap_err();
    assert!(edited.to_string().contains("target"), "{edited}");
    let edited = sock
        .call(
            "learn.edit",
            &json!({ "lesson": all[0]["lesson"], "level": "block" }),
        )
        .await
        .unwrap();
    assert_eq!(edited["level"], "block");
    let gone = sock
        .call("learn.retire", &json!({ "lesson": 999 }))
        .await
        .unwrap_err();
    assert!(gone.to_string().contains("unknown_lesson"));
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_correction_queued_behind_a_turn_is_learned_when_its_turn_runs() {
    let r = rig("learn-queued").await;
    let mut stream = r
        .sock
        .events("types=thread.*,lesson.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "SLOWLY tell a long story" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.text").await;
    let sent = send_as(&r, &thread, "never run `rmdir` in this folder", "queue").await;
    assert_eq!(sent["via"], "queued", "{sent}");
    let events = events_until(&mut stream, |e| e["type"] == "lesson.learned").await;
    let turns = of_type(&events, "thread.turn");
    assert_eq!(
        turns.last().unwrap()["payload"]["by_person"],
        true,
        "{turns:?}"
    );
    let rules: Vec<String> = lessons(&r)
        .await
        .iter()
        .map(|l| l["rule"].as_str().unwrap().to_string())
        .collect();
    assert!(
        rules.iter().any(|x| x.contains("rmdir")),
        "the queued words taught: {rules:?}"
    );
    r.vyred.stop().await;
}
