//! What a thread costs and an agent's budget, across the processes a thread has (spec section
//! 10) on the real CLI: Claude Code counts a resumed or forked session's cost on from its
//! transcript, so a resumed turn must not be charged what came before it, and the budget is
//! the thread's, not each process's.

use serde_json::{Value, json};

use vyre::surfaces::client::EventStream;

use crate::threads_e2e::{events_until, rig};

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 + b.abs() * 1e-6
}

/// Ask the agent, and what the turn's `thread.finished` said.
async fn ask(r: &crate::threads_e2e::Rig, stream: &mut EventStream, text: &str) -> Value {
    r.sock
        .call("agents.ask", &json!({ "agent": "ada", "text": text }))
        .await
        .unwrap();
    let events = events_until(stream, |e| e["type"] == "thread.finished").await;
    events.last().unwrap()["payload"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_resumed_thread_is_charged_each_turn_once_and_its_agents_budget_holds_across_processes() {
    let r = rig("agents-budget").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    r.sock
        .call("agents.create", &json!({ "name": "ada" }))
        .await
        .unwrap();
    let first = ask(&r, &mut stream, "good morning").await;
    let one = first["cost_usd"].as_f64().unwrap();
    assert!(one > 0.0, "the CLI prices the fake API's tokens: {first}");
    let thread = r
        .sock
        .call("agents.threads", &json!({ "agent": "ada" }))
        .await
        .unwrap()[0]["thread"]
        .as_str()
        .unwrap()
        .to_string();

    // Stopped (the CLI ends well and writes what the session cost), then resumed: the CLI's
    // total starts from the first turn's, and the second turn costs what the first did.
    r.sock
        .call("agents.stop", &json!({ "agent": "ada" }))
        .await
        .unwrap();
    let second = ask(&r, &mut stream, "and again").await;
    assert!(near(second["cost_usd"].as_f64().unwrap(), one), "{second}");
    assert!(near(second["total_cost_usd"].as_f64().unwrap(), 2.0 * one));
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert!(
        near(got["total_cost_usd"].as_f64().unwrap(), 2.0 * one),
        "{got}"
    );

    // A budget of two and a half turns: the resumed CLI is given what is left, not the whole.
    r.sock
        .call(
            "agents.update",
            &json!({ "name": "ada", "auth": { "budget_usd": 2.5 * one } }),
        )
        .await
        .unwrap();
    r.sock
        .call("agents.stop", &json!({ "agent": "ada" }))
        .await
        .unwrap();
    let third = ask(&r, &mut stream, "one more").await;
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let argv = std::fs::read(format!("/proc/{}/cmdline", pids["pids"][0]))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default();
    let left: f64 = argv
        .split("--max-budget-usd=")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no budget on the resumed CLI: {argv}"));
    assert!(near(left, 0.5 * one), "{left} left of {}", 2.5 * one);
    assert!(near(third["total_cost_usd"].as_f64().unwrap(), 3.0 * one));

    // Spent: the live session begins no turn, and neither does a resumed one.
    let refused = r
        .sock
        .call("agents.ask", &json!({ "agent": "ada", "text": "and now?" }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("budget_spent"), "{refused}");
    r.sock
        .call("agents.stop", &json!({ "agent": "ada" }))
        .await
        .unwrap();
    let refused = r
        .sock
        .call(
            "agents.ask",
            &json!({ "agent": "ada", "text": "after a stop?" }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("budget_spent"), "{refused}");
    assert!(
        refused.to_string().contains("agents.update"),
        "it says how: {refused}"
    );
    let body = r.api.message_requests().last().unwrap().body.to_string();
    assert!(!body.contains("and now?") && !body.contains("after a stop?"));

    // A fork is a thread of its own: its first turn is charged that turn, not its source's.
    let fork = r
        .sock
        .call("threads.fork", &json!({ "thread": thread }))
        .await
        .unwrap();
    let fork = fork["thread"].as_str().unwrap().to_string();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": fork, "text": "in the fork" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == fork.as_str()
    })
    .await;
    let forked = &events.last().unwrap()["payload"];
    assert!(near(forked["cost_usd"].as_f64().unwrap(), one), "{forked}");
    assert!(
        near(forked["total_cost_usd"].as_f64().unwrap(), one),
        "{forked}"
    );
}
