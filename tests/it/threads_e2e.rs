//! Threads end to end: vyred's Switchboard driving the real Claude Code CLI against the fake
//! Messages API, observed through tools and the event stream as any surface would.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::{Client, EventStream};

use crate::claude_e2e::claude_bin;
use crate::fake_api::FakeApi;
use crate::support::*;

pub(crate) const KEY: &str = "sk-ant-api03-fake-threads-key-22222222";

pub(crate) struct Rig {
    pub(crate) home: TempHome,
    pub(crate) api: FakeApi,
    pub(crate) vyred: InProcess,
    pub(crate) sock: Client,
    pub(crate) work: std::path::PathBuf,
}

pub(crate) async fn rig(name: &str) -> Rig {
    rig_with(name, json!({})).await
}

/// A rig whose `sessions` config also has the keys of `extra`.
pub(crate) async fn rig_with(name: &str, extra: Value) -> Rig {
    rig_full(name, extra, false, json!({})).await
}

/// A rig whose config also has the top-level sections of `top` (e.g. `push`).
pub(crate) async fn rig_configured(name: &str, top: Value) -> Rig {
    rig_full(name, json!({}), false, top).await
}

/// A rig whose sessions load the harness (its hooks run this build's `vyre`).
pub(crate) async fn rig_with_harness(name: &str) -> Rig {
    rig_full(name, json!({}), true, json!({})).await
}

/// A rig whose sessions load the harness, with the top-level config sections of `top`.
pub(crate) async fn rig_with_harness_configured(name: &str, top: Value) -> Rig {
    rig_full(name, json!({}), true, top).await
}

pub(crate) async fn rig_full(name: &str, extra: Value, harness: bool, top: Value) -> Rig {
    rig_running(name, extra, harness.then(|| BIN.into()), top).await
}

/// A rig whose sessions load the harness with `vyre` (the one its hooks run) at `harness`.
pub(crate) async fn rig_running(
    name: &str,
    extra: Value,
    harness: Option<std::path::PathBuf>,
    top: Value,
) -> Rig {
    let bin = claude_bin();
    let home = TempHome::new(name);
    let api = FakeApi::start().await;
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let mut config = json!({
        "sessions": { "claude": bin, "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key", "spares": 0 }
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        config["sessions"][k] = v.clone();
    }
    for (k, v) in top.as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start_with(&home, vec![], |o| {
        o.vyre_bin = harness;
    })
    .await;
    let sock = vyred.socket_client();
    grant_key(&sock).await;
    Rig {
        home,
        api,
        vyred,
        sock,
        work,
    }
}

/// Store the test API key in the vault and grant it to sessions.
pub(crate) async fn grant_key(sock: &Client) {
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
}

/// A new thread in the rig's work folder, with no first message.
pub(crate) async fn start_thread(r: &Rig) -> String {
    let started = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work }))
        .await
        .unwrap();
    started["thread"].as_str().unwrap().to_string()
}

/// `threads.send` with a mode (`steer` or `queue`); its answer.
pub(crate) async fn send_as(r: &Rig, thread: &str, text: &str, mode: &str) -> Value {
    let input = json!({ "thread": thread, "text": text, "mode": mode });
    r.sock.call("threads.send", &input).await.unwrap()
}

/// Send `text` to `thread` and wait for its turn's end: the events until then.
pub(crate) async fn send_until_finished(
    r: &Rig,
    stream: &mut EventStream,
    thread: &str,
    text: &str,
) -> Vec<Value> {
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    events_until(stream, |e| e["type"] == "thread.finished").await
}

/// Events of `thread` until one matches `until`.
pub(crate) async fn events_until(
    stream: &mut EventStream,
    until: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let Ok(next) = tokio::time::timeout(Duration::from_secs(60), stream.next()).await else {
            // Say what did come, so a failure seen only in CI can be read from its log.
            let came: Vec<String> = seen
                .iter()
                .map(|e: &Value| format!("{} {}", e["type"], e["payload"]))
                .collect();
            panic!("no awaited event within 60 s; after: {came:#?}");
        };
        let msg = next.expect("stream open").expect("no error");
        let event: Value = serde_json::from_str(&msg.data).unwrap();
        let done = until(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

/// Wait for the next question, answer it with `answer` (`{decision, message?, answers?}`), and
/// give back what was raised (its payload).
pub(crate) async fn answer_next_ask(r: &Rig, stream: &mut EventStream, answer: Value) -> Value {
    let events = events_until(stream, |e| e["type"] == "ask.raised").await;
    let raised = events.last().unwrap()["payload"].clone();
    let mut input = answer;
    input["ask"] = raised["ask"].clone();
    r.sock.call("threads.answer", &input).await.unwrap();
    raised
}

/// Interrupt `thread` while it asks: the ask is withdrawn (`cancelled`), and the thread takes
/// its next turn.
pub(crate) async fn interrupt_the_open_ask(r: &Rig, stream: &mut EventStream, thread: &str) {
    r.sock
        .call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    let events = events_until(stream, |e| e["type"] == "thread.finished").await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "ask.answered" && e["payload"]["decision"] == "cancelled"),
        "{events:?}"
    );
    let again = json!({ "thread": thread, "text": "still there?" });
    r.sock.call("threads.send", &again).await.unwrap();
    let events = events_until(stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true,
        "{events:?}"
    );
}

/// Allow every question `thread` asks until its turn ends.
pub(crate) async fn allow_until_finished(r: &Rig, stream: &mut EventStream, thread: &str) {
    loop {
        let events = events_until(stream, |e| {
            e["thread"] == thread
                && matches!(e["type"].as_str(), Some("ask.raised" | "thread.finished"))
        })
        .await;
        let last = events.last().unwrap();
        if last["type"] == "thread.finished" {
            return;
        }
        r.sock
            .call(
                "threads.answer",
                &json!({ "ask": last["payload"]["ask"], "decision": "allow" }),
            )
            .await
            .unwrap();
    }
}

pub(crate) fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_thread_starts_and_streams_a_turn() {
    let r = rig("threads-turn").await;
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
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn bad_input_to_threads_gets_clear_errors() {
    let r = rig("threads-bad").await;
    for (tool, input, code) in [
        (
            "threads.start",
            json!({ "cwd": "relative/path" }),
            "invalid_input",
        ),
        (
            "threads.start",
            json!({ "cwd": "/definitely/not/here" }),
            "no_such_folder",
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

/// A stand-in CLI for what the real one cannot be made to do: garbage on stdout, then a crash
/// mid-turn.
pub(crate) const CRASHING_CLI: &str = r#"#!/bin/sh
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

pub(crate) async fn rig_with_cli(
    name: &str,
    cli: &str,
) -> (TempHome, InProcess, Client, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let home = TempHome::new(name);
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let script = home.dir.join("fake-claude");
    std::fs::write(&script, cli).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = json!({ "sessions": { "claude": script, "home": home.dir.join("home"), "auth": "login", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    (home, vyred, sock, work)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn each_purpose_has_a_model_and_says_where_it_comes_from() {
    let r = rig("threads-models").await;
    let models = r
        .sock
        .call("sessions.models.get", &json!({}))
        .await
        .unwrap();
    assert_eq!(
        models["chat"],
        json!({ "model": "opus", "provider": "claude", "source": "default" })
    );
    assert_eq!(
        models["job"],
        json!({ "model": "haiku", "provider": "claude", "source": "default" })
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
        json!({ "model": "claude-fake-chat", "provider": "claude", "source": "set" })
    );
    let err = r
        .sock
        .call(
            "sessions.models.set",
            &json!({ "purpose": "gossip", "model": "x" }),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("purpose: must be one of chat, agent"),
        "{err}"
    );

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

    // A project's own model wins over the purpose's, below a launch's.
    let home = r.home.dir.join("work/modelled");
    std::fs::create_dir_all(&home).unwrap();
    r.sock
        .call(
            "projects.create",
            &json!({ "name": "Modelled", "home": home, "model": "claude-fake-project" }),
        )
        .await
        .unwrap();
    for (input, expected) in [
        (
            json!({ "cwd": home, "project": "Modelled" }),
            "claude-fake-project",
        ),
        (
            json!({ "cwd": home, "project": "Modelled", "model": "claude-fake-explicit" }),
            "claude-fake-explicit",
        ),
    ] {
        r.sock.call("threads.start", &input).await.unwrap();
        let events = events_until(&mut stream, |e| e["type"] == "thread.started").await;
        assert_eq!(
            events.last().unwrap()["payload"]["model"],
            expected,
            "{input}"
        );
    }
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_threads_commands_work_from_the_terminal() {
    let r = rig("threads-cli").await;
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
