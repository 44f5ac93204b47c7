//! Threads end to end: vyred's Switchboard driving the real Claude Code CLI against the fake
//! Messages API, observed through tools and the event stream as any surface would.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::client::{Client, EventStream};

use crate::claude_e2e::claude_bin;
use crate::fake_api::FakeApi;
use crate::support::*;

const KEY: &str = "sk-ant-api03-fake-threads-key-22222222";

struct Rig {
    home: TempHome,
    api: FakeApi,
    vyred: InProcess,
    sock: Client,
    work: std::path::PathBuf,
}

async fn rig(name: &str) -> Option<Rig> {
    let bin = claude_bin()?;
    let home = TempHome::new(name);
    let api = FakeApi::start().await;
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({
        "sessions": { "claude": bin, "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key" }
    });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    sock.call(
        "vault.put",
        &json!({ "name": "anthropic-api-key", "value": KEY }),
    )
    .await
    .unwrap();
    sock.call(
        "vault.grant",
        &json!({ "item": "anthropic-api-key", "to": "sessions" }),
    )
    .await
    .unwrap();
    Some(Rig {
        home,
        api,
        vyred,
        sock,
        work,
    })
}

/// Events of `thread` until one matches `until`.
async fn events_until(stream: &mut EventStream, until: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("events in time")
            .expect("stream open")
            .expect("no error");
        let event: Value = serde_json::from_str(&msg.data).unwrap();
        let done = until(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_starts_and_streams_a_turn() {
    let Some(r) = rig("threads-turn").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "hello from vyre" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(events.iter().all(|e| e["thread"] == thread.as_str()));
    let started = of_type(&events, "thread.started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["payload"]["provider"], "claude");
    assert_eq!(started[0]["payload"]["auth"], "api-key");
    assert_eq!(started[0]["payload"]["resumed"], false);
    let turn = of_type(&events, "thread.turn");
    assert_eq!(turn[0]["payload"]["turn"], format!("{thread}:1"));
    assert_eq!(turn[0]["payload"]["text"], "hello from vyre");
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [hello from vyre]"), "{text}");
    assert!(
        of_type(&events, "thread.text")
            .iter()
            .any(|e| e["payload"]["done"] == true)
    );
    assert_eq!(of_type(&events, "thread.usage").len(), 1);
    let finished = of_type(&events, "thread.finished");
    assert_eq!(finished[0]["payload"]["ok"], true);
    let states: Vec<&str> = of_type(&events, "thread.state")
        .iter()
        .map(|e| e["payload"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["starting", "idle", "running"],
        "then idle after finished"
    );
    let after = events_until(&mut stream, |e| e["type"] == "thread.state").await;
    assert_eq!(after[0]["payload"]["state"], "idle");

    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        (
            got["state"].as_str(),
            got["live"].as_bool(),
            got["turns"].as_i64()
        ),
        (Some("idle"), Some(true), Some(1))
    );
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    assert_eq!(pids["pids"].as_array().unwrap().len(), 1);
    // The key reached the API from the vault, on fd 3.
    assert!(
        r.api
            .message_requests()
            .iter()
            .all(|q| q.api_key.as_deref() == Some(KEY))
    );

    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    let stopped = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    assert_eq!(stopped.last().unwrap()["payload"]["reason"], "stopped");
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    assert!(pids["pids"].as_array().unwrap().is_empty());
    let listed = r.sock.call("threads.list", &json!({})).await.unwrap();
    assert_eq!(listed[0]["state"], "stopped");
    // The transcript grew in the sessions' HOME, not the real one.
    assert!(r.home.dir.join("home/.claude/projects").exists());
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_becomes_an_ask_and_allow_and_deny_are_honoured() {
    let Some(r) = rig("threads-ask").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch allowed.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = of_type(&events, "ask.raised")[0]["payload"].clone();
    assert_eq!(
        (raised["kind"].as_str(), raised["tool"].as_str()),
        (Some("tool"), Some("Bash"))
    );
    let waiting = events_until(&mut stream, |e| e["type"] == "thread.state").await;
    assert_eq!(waiting.last().unwrap()["payload"]["state"], "waiting");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["asks"][0]["status"], "open");
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "allow" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        r.work.join("allowed.txt").exists(),
        "the allowed command ran"
    );
    let tools = of_type(&events, "thread.tool");
    assert!(
        tools.iter().any(|t| t["payload"]["status"] == "completed"),
        "{tools:?}"
    );
    assert_eq!(
        of_type(&events, "ask.answered")[0]["payload"]["decision"],
        "allow"
    );
    // Answering again returns the earlier outcome.
    let again = r
        .sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "deny" }),
        )
        .await
        .unwrap();
    assert_eq!(
        (again["decision"].as_str(), again["already"].as_bool()),
        (Some("allow"), Some(true))
    );

    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch denied.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let ask = of_type(&events, "ask.raised")[0]["payload"]["ask"].clone();
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "deny", "message": "not today" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        !r.work.join("denied.txt").exists(),
        "the denied command did not run"
    );
    assert!(
        of_type(&events, "thread.tool")
            .iter()
            .any(|t| t["payload"]["status"] == "failed")
    );
    let err = r
        .sock
        .call(
            "threads.answer",
            &json!({ "ask": "nope", "decision": "allow" }),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown_ask"), "{err}");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_only_call_from_inside_a_session_is_refused() {
    let Some(r) = rig("threads-peer").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    // The session's Bash (detached with setsid, so not by ancestry alone) tries to act as a person.
    let command = format!(
        "RUNBASH setsid curl -s --unix-socket {} -X POST -H 'content-type: application/json' -d '{{\"name\":\"sneaky\"}}' http://localhost/v1/tools/devices.add > peer.txt 2>&1; setsid env VYRE_HOME={} {} tools > tools.txt 2>&1; true",
        r.home.home().socket().display(),
        r.home.vyre_home().display(),
        BIN
    );
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": command }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let ask = of_type(&events, "ask.raised")[0]["payload"]["ask"].clone();
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "allow" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let out = std::fs::read_to_string(r.work.join("peer.txt")).unwrap();
    assert!(out.contains("person_only"), "{out}");
    let tools = std::fs::read_to_string(r.work.join("tools.txt")).unwrap();
    assert!(
        tools.contains("threads.list") && !tools.contains("devices.add"),
        "a session is not shown person-only tools: {tools}"
    );
    let devices = r.sock.call("devices.list", &json!({})).await.unwrap();
    assert!(
        devices.as_array().unwrap().is_empty(),
        "no device was added"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_to_threads_gets_clear_errors() {
    let Some(r) = rig("threads-bad").await else {
        return;
    };
    for (tool, input, code) in [
        (
            "threads.start",
            json!({ "cwd": "relative/path" }),
            "invalid_input",
        ),
        (
            "threads.start",
            json!({ "cwd": "/definitely/not/here" }),
            "invalid_input",
        ),
        (
            "threads.start",
            json!({ "cwd": r.work, "provider": "codex" }),
            "unknown_provider",
        ),
        (
            "threads.send",
            json!({ "thread": "nope", "text": "hi" }),
            "unknown_thread",
        ),
        ("threads.get", json!({ "thread": "nope" }), "unknown_thread"),
        (
            "threads.stop",
            json!({ "thread": "nope" }),
            "unknown_thread",
        ),
        (
            "threads.answer",
            json!({ "ask": "nope", "decision": "allow" }),
            "unknown_ask",
        ),
    ] {
        let err = r.sock.call(tool, &input).await.unwrap_err().to_string();
        assert!(err.contains(code), "{tool} {input}: {err}");
    }
    r.vyred.stop().await;
    let _ = &r.home;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_ends_the_turn_canceled_and_the_next_turn_works() {
    let Some(r) = rig("threads-interrupt").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "please answer SLOWLY" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.text" && e["payload"]["delta"].is_string()
    })
    .await;
    r.sock
        .call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let finished = &of_type(&events, "thread.finished")[0]["payload"];
    assert_eq!(
        (finished["canceled"].as_bool(), finished["reason"].as_str()),
        (Some(true), Some("interrupt")),
        "{finished}"
    );
    let idle = events_until(&mut stream, |e| e["type"] == "thread.state").await;
    assert_eq!(idle.last().unwrap()["payload"]["state"], "idle");

    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "are you there" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [are you there]"), "{text}");

    // Stopping vyred stops the session with it, leaving no process behind.
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let pid = pids["pids"][0].as_i64().unwrap() as i32;
    r.vyred.stop().await;
    let gone = wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true)
    });
    assert!(gone, "the session's process ended with vyred");
    let events = stored_events(&r.home.home().database());
    let stopped = events
        .iter()
        .rev()
        .find(|(_, kind, _)| kind == "thread.stopped")
        .expect("thread.stopped");
    assert_eq!(stopped.2["reason"], "restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_while_a_tool_runs_steers_that_turn() {
    let Some(r) = rig("threads-steer").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    // A read-only command runs without asking; steer while it runs.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH sleep 3; echo slept" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.tool" && e["payload"]["phase"] == "started"
    })
    .await;
    let sent = r
        .sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "also mention the weather" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "steer");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let steered = of_type(&events, "thread.steered");
    assert_eq!(
        steered.len(),
        1,
        "the CLI took the message in at a step: {events:?}"
    );
    assert_eq!(steered[0]["payload"]["uuid"], sent["uuid"]);
    assert_eq!(
        of_type(&events, "thread.turn").len(),
        0,
        "no second turn: it joined this one"
    );
    let sent_events = of_type(&events, "thread.sent");
    assert!(sent_events.is_empty() || sent_events[0]["payload"]["via"] == "steer");
    // The folded message reached the model in the same turn.
    let folded = r
        .api
        .message_requests()
        .iter()
        .any(|q| q.body.to_string().contains("also mention the weather"));
    assert!(folded, "the steered words reached the API");
    r.vyred.stop().await;
}

/// A stand-in CLI for what the real one cannot be made to do: garbage on stdout, then a crash
/// mid-turn.
const CRASHING_CLI: &str = r#"#!/bin/sh
read line
echo '{"type":"control_response","response":{"subtype":"success","request_id":"vyre-1","response":{"claude_code_version":"2.1.328"}}}'
read line
echo 'this line is not json'
echo '{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_x"}}}'
echo '{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}'
echo '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial "}}}'
echo 'boom: the fake CLI fell over' >&2
sleep 0.2
exit 3
"#;

async fn rig_with_cli(name: &str, cli: &str) -> (TempHome, InProcess, Client, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let home = TempHome::new(name);
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let script = home.dir.join("fake-claude");
    std::fs::write(&script, cli).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config =
        json!({ "sessions": { "claude": script, "home": home.dir.join("home"), "auth": "login" } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    (home, vyred, sock, work)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_writes_garbage_and_crashes_mid_turn_fails_the_turn_and_says_why() {
    let (_home, vyred, sock, work) = rig_with_cli("threads-crash", CRASHING_CLI).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let thread = sock
        .call("threads.start", &json!({ "cwd": work, "text": "go" }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert_eq!(
        text, "partial ",
        "the garbage line was skipped and the stream went on"
    );
    let states: Vec<&Value> = of_type(&events, "thread.state");
    let failed = states
        .iter()
        .find(|e| e["payload"]["state"] == "failed")
        .expect("the turn failed");
    let error = failed["payload"]["error"].as_str().unwrap();
    assert!(
        error.contains("exited 3") && error.contains("fell over"),
        "{error}"
    );
    assert_eq!(
        states.last().unwrap()["payload"]["state"],
        "idle",
        "failed is followed by idle"
    );
    assert_eq!(events.last().unwrap()["payload"]["reason"], "exited 3");
    let got = sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        (got["live"].as_bool(), got["state"].as_str()),
        (Some(false), Some("stopped"))
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_cli_is_a_clear_error_naming_what_to_install() {
    let home = TempHome::new("threads-missing-cli");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "sessions": { "claude": "/nonexistent/bin/claude", "home": home.dir.join("home"), "auth": "login" } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let err = vyred
        .socket_client()
        .call("threads.start", &json!({ "cwd": work }))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("start_failed")
            && err.contains("npm install -g @anthropic-ai/claude-code@2.1.328"),
        "{err}"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_denies_without_asking_and_modes_change_only_to_offered_ones() {
    let Some(r) = rig("threads-floor").await else {
        return;
    };
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,mode.*", None)
        .await
        .unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::create_dir_all(r.work.join(".claude")).unwrap();
    for command in [
        "rm -rf /",
        "echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .claude/settings.local.json",
    ] {
        r.sock
            .call(
                "threads.send",
                &json!({ "thread": thread, "text": format!("RUNBASH {command}") }),
            )
            .await
            .unwrap();
        let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
        assert!(
            of_type(&events, "ask.raised").is_empty(),
            "{command}: nobody was asked"
        );
        let denied = of_type(&events, "thread.denied");
        assert_eq!(denied.len(), 1, "{command}: {events:?}");
        assert_eq!(denied[0]["payload"]["by"], "floor");
        assert!(
            denied[0]["payload"]["reason"]
                .as_str()
                .unwrap()
                .contains("floor refuses")
        );
        assert!(
            of_type(&events, "thread.tool")
                .iter()
                .any(|t| t["payload"]["status"] == "failed")
        );
    }
    assert!(!r.work.join(".claude/settings.local.json").exists());

    r.sock
        .call(
            "threads.mode",
            &json!({ "thread": thread, "mode": "acceptEdits" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "mode.changed").await;
    assert_eq!(events.last().unwrap()["payload"]["mode"], "acceptEdits");
    let err = r
        .sock
        .call(
            "threads.mode",
            &json!({ "thread": thread, "mode": "bypassPermissions" }),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("default, acceptEdits or plan"),
        "{err}"
    );
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["mode"], "acceptEdits");
    r.sock
        .call(
            "threads.model",
            &json!({ "thread": thread, "model": "claude-fake-2" }),
        )
        .await
        .unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "which model" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert_eq!(last.body["model"], "claude-fake-2");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_takes_every_process_the_session_started_even_detached_ones() {
    let Some(r) = rig("threads-orphans").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let command = "RUNBASH (sleep 600 & echo $! > plain.pid); (setsid sleep 601 & echo $! > setsid.pid); (sh -c 'setsid sleep 602 & echo $! > double.pid' &); sleep 0.5; echo started";
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": command }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| {
        e["type"] == "ask.raised" || e["type"] == "thread.finished"
    })
    .await;
    if let Some(ask) = of_type(&events, "ask.raised").first() {
        r.sock
            .call(
                "threads.answer",
                &json!({ "ask": ask["payload"]["ask"], "decision": "allow" }),
            )
            .await
            .unwrap();
        events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    }
    let pids: Vec<i32> = ["plain.pid", "setsid.pid", "double.pid"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(r.work.join(f))
                .unwrap_or_else(|e| panic!("{f}: {e}"))
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
    };
    assert!(
        pids.iter().all(|p| alive(*p)),
        "the session's children run: {pids:?}"
    );
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || pids.iter().all(|p| !alive(*p))),
        "every one is gone, detached or not: {:?}",
        pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_thread_resumes_on_the_next_send_and_always_writes_a_rule() {
    let Some(r) = rig("threads-resume").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "first words" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let key: String = r
        .work
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let transcript = r
        .home
        .dir
        .join("home/.claude/projects")
        .join(key)
        .join(format!("{thread}.jsonl"));
    let lines_before = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .count();
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.stopped").await;

    let sent = r
        .sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "second words" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "turn");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let started = of_type(&events, "thread.started");
    assert_eq!(started[0]["payload"]["resumed"], true);
    assert_eq!(
        of_type(&events, "thread.turn")[0]["payload"]["turn"],
        format!("{thread}:2")
    );
    let lines_after = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .count();
    assert!(
        lines_after > lines_before,
        "the same transcript grew: {lines_before} -> {lines_after}"
    );
    // The model saw the earlier turn.
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert!(
        last.body.to_string().contains("first words"),
        "the resumed session has its history"
    );

    // "always" writes a rule, so the same call does not ask again.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch always.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let ask = of_type(&events, "ask.raised")[0]["payload"]["ask"].clone();
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "always" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let rules = std::fs::read_to_string(r.work.join(".claude/settings.local.json")).unwrap();
    assert!(rules.contains("touch always.txt"), "{rules}");
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch always.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        of_type(&events, "ask.raised").is_empty(),
        "no second question: {events:?}"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_and_exit_plan_mode_are_asks_of_their_own_kinds() {
    let Some(r) = rig("threads-questions").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "ASKQUESTION please" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = &of_type(&events, "ask.raised")[0]["payload"];
    assert_eq!(
        (raised["kind"].as_str(), raised["tool"].as_str()),
        (Some("question"), Some("AskUserQuestion"))
    );
    let answers = json!({ "Which color do you prefer?": "Blue" });
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "allow", "answers": answers }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let answered = r
        .api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        answered.contains("Which color do you prefer?") && answered.contains("Blue"),
        "the answer reached the model: {answered}"
    );

    r.sock
        .call("threads.mode", &json!({ "thread": thread, "mode": "plan" }))
        .await
        .unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "EXITPLAN now" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = &of_type(&events, "ask.raised")[0]["payload"];
    assert_eq!(
        (raised["kind"].as_str(), raised["tool"].as_str()),
        (Some("plan"), Some("ExitPlanMode"))
    );
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "allow" }),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_waits_for_the_turn_and_can_be_edited_taken_back_or_sent_now() {
    let Some(r) = rig("threads-queue").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let send = |text: &str, mode: &str| {
        let (sock, thread) = (r.sock.clone(), thread.clone());
        let input = json!({ "thread": thread, "text": text, "mode": mode });
        async move { sock.call("threads.send", &input).await.unwrap() }
    };
    send("first, SLOWLY", "steer").await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.text" && e["payload"]["delta"].is_string()
    })
    .await;
    let one = send("queued one", "queue").await;
    let two = send("queued two", "queue").await;
    assert_eq!(
        (one["via"].as_str(), two["via"].as_str()),
        (Some("queued"), Some("queued"))
    );
    r.sock
        .call(
            "threads.edit",
            &json!({ "queued": two["queued"], "text": "queued two, edited" }),
        )
        .await
        .unwrap();
    r.sock
        .call("threads.unqueue", &json!({ "queued": one["queued"] }))
        .await
        .unwrap();
    let err = r
        .sock
        .call("threads.unqueue", &json!({ "queued": one["queued"] }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not_queued"), "{err}");

    let events = events_until(&mut stream, |e| e["type"] == "thread.turn").await;
    let queued = of_type(&events, "thread.queued");
    assert_eq!(queued.len(), 3, "two queued, one edited: {queued:?}");
    assert_eq!(queued[2]["payload"]["edited"], true);
    let unqueued = of_type(&events, "thread.unqueued");
    assert_eq!(unqueued[0]["payload"]["reason"], "unqueued");
    assert_eq!(unqueued[1]["payload"]["reason"], "taken");
    let sent = of_type(&events, "thread.sent");
    assert_eq!(sent.last().unwrap()["payload"]["via"], "turn");
    let turn = &events.last().unwrap()["payload"];
    assert_eq!(
        (turn["text"].as_str(), turn["turn"].as_str()),
        (
            Some("queued two, edited"),
            Some(format!("{thread}:2").as_str())
        )
    );
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [queued two, edited]"), "{text}");
    assert!(
        !r.api
            .message_requests()
            .iter()
            .any(|q| q.body.to_string().contains("queued one")),
        "the message taken back never went out"
    );

    // send_now: the running turn is cut short and the queued message runs next.
    send("second, SLOWLY", "steer").await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.text" && e["payload"]["delta"].is_string()
    })
    .await;
    let urgent = send("urgent", "queue").await;
    let now = r
        .sock
        .call("threads.send_now", &json!({ "queued": urgent["queued"] }))
        .await
        .unwrap();
    assert_eq!(now["via"], "now");
    let events = events_until(&mut stream, |e| e["type"] == "thread.turn").await;
    assert_eq!(events.last().unwrap()["payload"]["text"], "urgent");
    assert!(
        of_type(&events, "thread.finished").len() == 1,
        "the cut-short turn finished first"
    );
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [urgent]"), "{text}");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_purpose_has_a_model_and_says_where_it_comes_from() {
    let Some(r) = rig("threads-models").await else {
        return;
    };
    let models = r
        .sock
        .call("sessions.models.get", &json!({}))
        .await
        .unwrap();
    assert_eq!(
        models["chat"],
        json!({ "model": "opus", "source": "default" })
    );
    assert_eq!(
        models["job"],
        json!({ "model": "haiku", "source": "default" })
    );
    let set = r
        .sock
        .call(
            "sessions.models.set",
            &json!({ "purpose": "chat", "model": "claude-fake-chat" }),
        )
        .await
        .unwrap();
    assert_eq!(
        set["chat"],
        json!({ "model": "claude-fake-chat", "source": "set" })
    );
    let err = r
        .sock
        .call(
            "sessions.models.set",
            &json!({ "purpose": "gossip", "model": "x" }),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("purpose must be one of"), "{err}");

    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    r.sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "which model am I" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.started")[0]["payload"]["model"],
        "claude-fake-chat"
    );
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert_eq!(last.body["model"], "claude-fake-chat");
    r.sock
        .call("sessions.models.set", &json!({ "purpose": "chat" }))
        .await
        .unwrap();
    let models = r
        .sock
        .call("sessions.models.get", &json!({}))
        .await
        .unwrap();
    assert_eq!(models["chat"]["source"], "default", "cleared");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_makes_a_new_thread_and_rewind_continues_from_an_earlier_message() {
    let Some(r) = rig("threads-fork").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let mut uuids = Vec::new();
    for word in ["alpha", "beta", "gamma"] {
        let sent = r
            .sock
            .call("threads.send", &json!({ "thread": thread, "text": word }))
            .await
            .unwrap();
        uuids.push(sent["uuid"].as_str().unwrap().to_string());
        events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    }

    let fork = r
        .sock
        .call("threads.fork", &json!({ "thread": thread }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(fork, thread);
    let events = events_until(&mut stream, |e| e["type"] == "thread.started").await;
    let started = &events.last().unwrap()["payload"];
    assert_eq!(started["forked_from"], thread.as_str());
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": fork, "text": "fork words" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == fork.as_str()
    })
    .await;
    let last = r
        .api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        last.contains("alpha") && last.contains("gamma") && last.contains("fork words"),
        "the fork has the history"
    );

    r.sock
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": uuids[1] }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.rewound").await;
    assert_eq!(events.last().unwrap()["payload"]["uuid"], uuids[1].as_str());
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "delta" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == thread.as_str()
    })
    .await;
    let last = r
        .api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        last.contains("beta") && last.contains("delta"),
        "kept up to the rewind point"
    );
    assert!(!last.contains("gamma"), "what came after it is dropped");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_older_than_the_pinned_version_is_refused_with_what_to_install() {
    let old = "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.0.1 (Claude Code)'; exit 0; fi\nexit 1\n";
    let (_home, vyred, sock, work) = rig_with_cli("threads-old-cli", old).await;
    let err = sock
        .call("threads.start", &json!({ "cwd": work }))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("older than 2.1.328")
            && err.contains("npm install -g @anthropic-ai/claude-code@2.1.328"),
        "{err}"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundled_installs_the_pinned_cli_on_first_use_and_says_so() {
    // Needs npm (which `tests/run` has, since it installs the pinned CLI the same way).
    if claude_bin().is_none() {
        return;
    }
    let home = TempHome::new("threads-bundled");
    let api = FakeApi::start().await;
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "sessions": { "claude": "bundled", "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key" } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    sock.call(
        "vault.put",
        &json!({ "name": "anthropic-api-key", "value": KEY }),
    )
    .await
    .unwrap();
    sock.call(
        "vault.grant",
        &json!({ "item": "anthropic-api-key", "to": "sessions" }),
    )
    .await
    .unwrap();
    let mut stream = sock.events("types=claude.*,thread.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "text": "hello bundled" }),
        )
        .await
        .unwrap();
    assert!(thread["thread"].is_string());
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(of_type(&events, "claude.install_started").len(), 1);
    assert_eq!(
        of_type(&events, "claude.installed")[0]["payload"]["version"],
        "2.1.328"
    );
    assert!(
        home.vyre_home()
            .join("claude-code/node_modules/.bin/claude")
            .exists()
    );
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [hello bundled]"), "{text}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_go_with_the_words() {
    let Some(r) = rig("threads-images").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
    let image = json!({ "media_type": "image/png", "data": png });
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "what is in this picture", "images": [image] }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        !events.iter().any(|e| e.to_string().contains(png)),
        "image data never rides on events"
    );
    let last = r.api.message_requests().into_iter().last().unwrap();
    let has_image = last.body["messages"].as_array().unwrap().iter().any(|m| {
        m["content"].as_array().is_some_and(|c| {
            c.iter()
                .any(|b| b["type"] == "image" && b["source"]["data"] == png)
        })
    });
    assert!(has_image, "the image reached the model");
    for (bad, why) in [
        (
            json!({ "media_type": "image/tiff", "data": png }),
            "image/png",
        ),
        (
            json!({ "media_type": "image/png", "data": "not base64!" }),
            "base64",
        ),
    ] {
        let err = r
            .sock
            .call(
                "threads.send",
                &json!({ "thread": thread, "text": "x", "images": [bad] }),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
    }
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_threads_commands_work_from_the_terminal() {
    let Some(r) = rig("threads-cli").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let run = |args: Vec<String>| {
        let mut cmd = r.home.command();
        cmd.args(&args);
        async move {
            tokio::task::spawn_blocking(move || cmd.output().unwrap())
                .await
                .unwrap()
        }
    };
    let work = r.work.display().to_string();
    let out = run(vec![
        "threads".into(),
        "start".into(),
        "--cwd".into(),
        work,
        "--text".into(),
        "from the terminal".into(),
    ])
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let thread = serde_json::from_slice::<Value>(&out.stdout).unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let out = run(vec![
        "threads".into(),
        "send".into(),
        thread.clone(),
        "and again".into(),
    ])
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["via"],
        "turn"
    );
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [and again]"), "{text}");
    let out = run(vec!["threads".into(), "get".into(), thread.clone()]).await;
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (got["turns"].as_i64(), got["state"].as_str()),
        (Some(2), Some("idle"))
    );
    let out = run(vec![
        "threads".into(),
        "answer".into(),
        "nope".into(),
        "allow".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown_ask"));
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_cancels_the_open_ask_and_answering_it_then_is_refused() {
    let Some(r) = rig("threads-cancel-ask").await else {
        return;
    };
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch never.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let ask = of_type(&events, "ask.raised")[0]["payload"]["ask"].clone();
    r.sock
        .call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let answered = of_type(&events, "ask.answered");
    assert_eq!(
        answered[0]["payload"]["decision"], "cancelled",
        "{events:?}"
    );
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["canceled"],
        true
    );
    let err = r
        .sock
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "allow" }),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ask_closed"), "{err}");
    assert!(!r.work.join("never.txt").exists());
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["asks"][0]["status"], "cancelled");
    r.vyred.stop().await;
}
