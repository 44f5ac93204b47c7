//! Agents and the assistant (spec section 10) on the real CLI: instructions become the system
//! prompt's append, the budget the CLI's `--max-budget-usd`, credentials an auth mode fetched as
//! the agent, projects a fence; `agents.ask` goes to the agent's current thread.

use serde_json::{Value, json};

use crate::threads_e2e::{KEY, events_until, of_type, rig, rig_with_cli};

/// The system prompt of the fake API's newest conversation request.
fn last_system(r: &crate::threads_e2e::Rig) -> String {
    r.api
        .message_requests()
        .last()
        .map(|q| q.body["system"].to_string())
        .unwrap_or_default()
}

fn cmdline(pid: i64) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_assistant_talks_in_its_own_thread_with_its_instructions_and_budget() {
    let r = rig("agents-assistant").await;
    let mut stream = r.sock.events("types=thread.*,agent.*", None).await.unwrap();
    let juno = r
        .sock
        .call(
            "agents.create",
            &json!({ "name": "juno", "kind": "assistant", "instructions": "You are Juno. MARKER-INSTRUCTIONS-1", "auth": { "budget_usd": 2.5 } }),
        )
        .await
        .unwrap();
    assert_eq!(juno["kind"], "assistant");
    assert_eq!(juno["projects"], "*", "the assistant sees every project");
    let folder = juno["cwd"].as_str().unwrap().to_string();
    assert!(std::path::Path::new(&folder).is_dir());

    let asked = r
        .sock
        .call(
            "agents.ask",
            &json!({ "agent": "juno", "text": "good morning" }),
        )
        .await
        .unwrap();
    assert_eq!(asked["started"], true);
    let thread = asked["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let started = &of_type(&events, "thread.started")[0]["payload"];
    assert_eq!(started["purpose"], "agent");
    assert_eq!(started["cwd"], folder.as_str());
    assert!(
        last_system(&r).contains("MARKER-INSTRUCTIONS-1"),
        "the instructions are appended"
    );
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let argv = cmdline(pids["pids"][0].as_i64().unwrap());
    assert!(
        argv.iter().any(|a| a == "--max-budget-usd=2.5"),
        "the budget is the CLI's: {argv:?}"
    );

    // The next ask goes to the same thread, even after its session was stopped.
    let again = r
        .sock
        .call(
            "agents.ask",
            &json!({ "agent": "juno", "text": "and again" }),
        )
        .await
        .unwrap();
    assert_eq!(
        (again["thread"].as_str(), again["started"].as_bool()),
        (Some(thread.as_str()), Some(false))
    );
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let stopped = r
        .sock
        .call("agents.stop", &json!({ "agent": "juno" }))
        .await
        .unwrap();
    assert_eq!(stopped["stopped"], json!([thread]));
    let third = r
        .sock
        .call(
            "agents.ask",
            &json!({ "agent": "juno", "text": "still there?" }),
        )
        .await
        .unwrap();
    assert_eq!(third["thread"], thread.as_str());
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.started")[0]["payload"]["resumed"],
        true
    );
    let body = r.api.message_requests().last().unwrap().body.to_string();
    assert!(
        body.contains("good morning") && body.contains("still there?"),
        "one conversation"
    );

    let threads = r
        .sock
        .call("agents.threads", &json!({ "agent": "juno" }))
        .await
        .unwrap();
    assert_eq!(threads.as_array().unwrap().len(), 1);
    let list = r.sock.call("agents.list", &json!({})).await.unwrap();
    assert_eq!(list[0]["name"], "juno");
    assert_eq!(list[0]["thread"], thread.as_str());

    // New instructions: the next ask restarts the session on its transcript with them.
    r.sock
        .call(
            "agents.update",
            &json!({ "name": "juno", "instructions": "You are Juno. MARKER-INSTRUCTIONS-2" }),
        )
        .await
        .unwrap();
    r.sock
        .call(
            "agents.ask",
            &json!({ "agent": "juno", "text": "new rules" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == thread.as_str()
    })
    .await;
    let system = last_system(&r);
    assert!(system.contains("MARKER-INSTRUCTIONS-2") && !system.contains("MARKER-INSTRUCTIONS-1"));

    // One assistant per machine; bad records are refused with the reason.
    let err = r
        .sock
        .call(
            "agents.create",
            &json!({ "name": "hera", "kind": "assistant" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("assistant_exists"));
    for (input, code) in [
        (json!({ "name": "juno" }), "exists"),
        (json!({ "name": "Bad Name" }), "invalid_input"),
        (json!({ "name": "x", "projects": "acme" }), "invalid_input"),
        (
            json!({ "name": "x", "auth": { "mode": "password" } }),
            "invalid_input",
        ),
        (
            json!({ "name": "x", "auth": { "budget_usd": -1 } }),
            "invalid_input",
        ),
        (json!({ "name": "x", "computer": true }), "invalid_input"),
    ] {
        let err = r.sock.call("agents.create", &input).await.unwrap_err();
        assert_eq!(err.code(), Some(code), "{input}: {err}");
    }
    let err = r
        .sock
        .call("agents.ask", &json!({ "agent": "nobody", "text": "hi" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_agent"));
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_agent_runs_on_its_own_key_and_only_in_its_projects() {
    let r = rig("agents-own-key").await;
    let own_key = "sk-ant-api03-agent-own-key-33333333";
    r.sock
        .call(
            "vault.put",
            &json!({ "name": "scout-key", "value": own_key }),
        )
        .await
        .unwrap();
    r.sock
        .call(
            "agents.create",
            &json!({ "name": "scout", "projects": ["acme"], "auth": { "mode": "api-key", "vault": "scout-key" } }),
        )
        .await
        .unwrap();
    // Not granted to the agent yet: refused, and nothing started.
    let err = r
        .sock
        .call("agents.ask", &json!({ "agent": "scout", "text": "hello" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("not_granted"), "{err}");
    r.sock
        .call(
            "vault.grant",
            &json!({ "item": "scout-key", "to": "agent:scout" }),
        )
        .await
        .unwrap();
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    r.sock
        .call("agents.ask", &json!({ "agent": "scout", "text": "hello" }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.started")[0]["payload"]["auth"],
        "api-key"
    );
    let keys: Vec<Option<String>> = r
        .api
        .message_requests()
        .iter()
        .map(|q| q.api_key.clone())
        .collect();
    assert!(
        keys.iter().all(|k| k.as_deref() == Some(own_key)),
        "the agent's own key, never the machine's {KEY}: {keys:?}"
    );

    let err = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "agent": "scout", "project": "other" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("project_not_allowed"), "{err}");
    let ok = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "agent": "scout", "project": "acme" }),
        )
        .await
        .unwrap();
    assert!(ok["thread"].is_string());
    r.vyred.stop().await;
}

/// A stand-in CLI (the real one reports limits only for subscription sign-ins): on a setup
/// token every turn is refused at the subscription's limit; on an API key it answers.
const LIMITED_CLI: &str = r#"#!/bin/sh
if [ "$1" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi
for a in "$@"; do case "$a" in --session-id=*) id="${a#--session-id=}";; --resume=*) id="${a#--resume=}";; esac; done
mkdir -p "$HOME/.claude/projects/-work"
echo '{"type":"user","uuid":"u-0"}' >> "$HOME/.claude/projects/-work/$id.jsonl"
read line
echo '{"type":"control_response","response":{"subtype":"success","request_id":"vyre-1","response":{}}}'
while read line; do
  if [ -n "$CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR" ]; then
    echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":4102444800,"rateLimitType":"five_hour"}}'
    echo '{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached","total_cost_usd":0,"usage":{}}'
  else
    echo '{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"answered on the key"}]}}'
    echo '{"type":"result","subtype":"success","is_error":false,"result":"answered on the key","total_cost_usd":0.01,"usage":{}}'
  fi
done
"#;

async fn limited_rig(
    name: &str,
    fallback: bool,
) -> (
    crate::support::TempHome,
    crate::support::InProcess,
    vyre::surfaces::client::Client,
) {
    let (home, vyred, sock, _work) = rig_with_cli(name, LIMITED_CLI).await;
    for (item, value) in [
        (
            "claude-setup-token",
            "sk-ant-oat01-fake-subscription-token-44444444",
        ),
        ("anthropic-api-key", KEY),
    ] {
        sock.call("vault.put", &json!({ "name": item, "value": value }))
            .await
            .unwrap();
        sock.call("vault.grant", &json!({ "item": item, "to": "agent:scout" }))
            .await
            .unwrap();
    }
    let mut auth = json!({ "mode": "setup-token" });
    if fallback {
        auth["fallback"] = json!("anthropic-api-key");
    }
    sock.call("agents.create", &json!({ "name": "scout", "auth": auth }))
        .await
        .unwrap();
    (home, vyred, sock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_subscription_limit_an_agent_falls_back_to_its_api_key_and_says_so() {
    let (_home, vyred, sock) = limited_rig("agents-fallback", true).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let asked = sock
        .call(
            "agents.ask",
            &json!({ "agent": "scout", "text": "the report" }),
        )
        .await
        .unwrap();
    let thread = asked["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["payload"]["ok"] == true
    })
    .await;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(events.iter().all(|e| e["thread"] == thread.as_str()));
    let started: Vec<&Value> = of_type(&events, "thread.started");
    assert_eq!(started[0]["payload"]["auth"], "setup-token", "{types:?}");
    assert_eq!(of_type(&events, "thread.limit").len(), 1);
    assert_eq!(
        of_type(&events, "thread.fallback")[0]["payload"]["to"],
        "api-key"
    );
    let notice = of_type(&events, "thread.notice");
    assert!(
        notice[0]["payload"]["text"]
            .as_str()
            .unwrap()
            .contains("API key"),
        "said in its thread: {notice:?}"
    );
    assert_eq!(
        of_type(&events, "thread.stopped")[0]["payload"]["reason"],
        "fallback"
    );
    assert_eq!(started[1]["payload"]["auth"], "api-key", "{types:?}");
    assert_eq!(started[1]["payload"]["resumed"], true);
    let turns = of_type(&events, "thread.turn");
    assert_eq!(
        turns.last().unwrap()["payload"]["text"],
        "the report",
        "the words run again"
    );
    // It stays on the key until the limit resets.
    sock.call("agents.ask", &json!({ "agent": "scout", "text": "more" }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(events.last().unwrap()["payload"]["ok"], true);
    assert!(of_type(&events, "thread.limit").is_empty());
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_allowed_fallback_the_limit_is_said_and_nothing_else_runs() {
    let (_home, vyred, sock) = limited_rig("agents-no-fallback", false).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    sock.call(
        "agents.ask",
        &json!({ "agent": "scout", "text": "the report" }),
    )
    .await
    .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.notice").await;
    let notice = of_type(&events, "thread.notice")[0]["payload"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(notice.contains("no API key may take over"), "{notice}");
    assert!(of_type(&events, "thread.fallback").is_empty());
    let finished = of_type(&events, "thread.finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["payload"]["ok"], false);
    vyred.stop().await;
}
