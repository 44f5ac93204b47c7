//! The ACP provider on a real ACP agent: Zed's Claude Code agent (`@zed-industries/claude-code-acp`,
//! pinned in `tests/run`), run on the pinned Claude Code CLI against the fake Messages API. It
//! passes the same provider contract as the Claude driver.

use std::sync::Arc;

use vyre::kernel::contracts::provider::{Credential, Launch};
use vyre::modules::sessions::acp::AcpProvider;
use vyre::modules::sessions::agent_process::Command;
use vyre::modules::sessions::conformance::{Script, conform};
use vyre::modules::sessions::sandbox::{Contain, Wanted, hidden_paths};

use crate::claude_e2e::claude_bin;
use crate::fake_api::FakeApi;
use crate::support::*;

pub fn acp_bin() -> std::path::PathBuf {
    match std::env::var_os("VYRE_TEST_ACP") {
        Some(p) => p.into(),
        None => panic!(
            "this test drives a real ACP agent: set VYRE_TEST_ACP to claude-code-acp \
             (`tests/run` installs it and sets it)"
        ),
    }
}

/// How the agent is started here: node's own PATH, the fake API, the pinned CLI.
pub fn agent(api: &FakeApi) -> Command {
    Command {
        label: "the ACP agent",
        setting: "sessions.acp",
        program: acp_bin(),
        args: vec![],
        env: vec![
            ("ANTHROPIC_BASE_URL".into(), api.url()),
            (
                "ANTHROPIC_API_KEY".into(),
                "sk-ant-api03-acp-0000000000".into(),
            ),
            (
                "CLAUDE_CODE_EXECUTABLE".into(),
                claude_bin().display().to_string(),
            ),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
        ],
    }
}

/// A vyred whose `sessions.acp.claude` is the agent on its own fake API (kept for its requests).
async fn acp_rig(name: &str) -> (FakeApi, crate::threads_e2e::Rig) {
    let api = FakeApi::start().await;
    let agent = agent(&api);
    let env: serde_json::Map<String, serde_json::Value> = agent
        .env
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::json!(v)))
        .collect();
    let acp = serde_json::json!({ "acp": { "claude": { "command": agent.program, "env": env } } });
    (api, crate::threads_e2e::rig_with(name, acp).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives a real ACP agent on the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... VYRE_TEST_ACP=... cargo test -- --include-ignored"]
async fn an_acp_agent_passes_the_provider_contract() {
    let home = TempHome::new("acp-conform");
    let api = FakeApi::start().await;
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let provider = AcpProvider {
        id: "acp-claude".into(),
        command: agent(&api),
        home: home.dir.join("home"),
        // Contained as vyred contains sessions: in a sandbox that hides VYRE_HOME.
        contain: Arc::new(Contain::new(
            Wanted::Auto,
            None,
            hidden_paths(&home.vyre_home()),
            vec![],
        )),
        ids: home.vyre_home().join("acp").join("acp-claude"),
    };
    std::fs::create_dir_all(home.dir.join("home")).unwrap();
    let id = vyre::kernel::ids::uuid_v4();
    let launch = |resume: bool| Launch {
        id: id.clone(),
        resume,
        fork_from: None,
        resume_at: None,
        cwd: work.clone(),
        model: None,
        effort: None,
        mode: "default".into(),
        append_system_prompt: None,
        system_prompt_snapshot: None,
        credential: Credential::Login,
        budget_usd: None,
        plugin_dirs: vec![],
        env: vec![],
        processes: None,
        host_tools: None,
    };
    let script = Script {
        hello: "hello".into(),
        tool: |m| format!("RUNBASH touch {}", m.display()),
    };
    let passed = conform(&provider, launch, &work, &script).await.unwrap();
    assert_eq!(passed.len(), 6, "{passed:?}");
    assert!(
        api.message_requests().len() >= 4,
        "the agent's turns reached the fake API"
    );
}

/// A thread on the ACP provider through vyred, as any surface drives one: a turn streams, a
/// tool call is asked about and allowed or denied by the person, the floor refuses without
/// asking, and after a stop the next message resumes the same agent session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives a real ACP agent on the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... VYRE_TEST_ACP=... cargo test -- --include-ignored"]
async fn a_thread_on_an_acp_agent_streams_asks_and_resumes_through_vyred() {
    use crate::threads_e2e::*;
    use serde_json::json;
    let (api, r) = acp_rig("acp-thread").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let providers = r.sock.call("sessions.providers", &json!({})).await.unwrap();
    let names: Vec<(&str, &str)> = providers
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["driver"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [("acp-claude", "acp"), ("claude", "claude-cli-stream-json")]
    );
    let err = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "provider": "acp-nope" }),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown_provider") && err.to_string().contains("acp-claude"),
        "{err}"
    );
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "provider": "acp-claude" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();

    let events = send_until_finished(&r, &mut stream, &thread, "hello there").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert_eq!(text, "reply to [hello there]");
    let finished = of_type(&events, "thread.finished");
    assert_eq!(finished[0]["payload"]["ok"], true, "{finished:?}");
    // ACP says nothing of what a turn cost: unpriced, not $0.
    assert_eq!(finished[0]["payload"]["priced"], false, "{finished:?}");
    assert_eq!(
        finished[0]["payload"]["cost_usd"],
        serde_json::Value::Null,
        "{finished:?}"
    );
    let begun = of_type(&events, "thread.started");
    assert_eq!(begun[0]["payload"]["provider"], "acp-claude");
    // No Claude default model is passed to the agent, nor a Claude credential asked for.
    assert_eq!(
        (
            &begun[0]["payload"]["model"],
            begun[0]["payload"]["auth"].as_str()
        ),
        (&serde_json::Value::Null, Some("own")),
        "{begun:?}"
    );

    // A tool call is the person's to allow.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch allowed.txt" }),
        )
        .await
        .unwrap();
    let raised = answer_next_ask(&r, &mut stream, json!({ "decision": "allow" })).await;
    assert_eq!(
        (raised["tool"].as_str(), raised["input"]["command"].as_str()),
        (Some("Bash"), Some("touch allowed.txt"))
    );
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        r.work.join("allowed.txt").exists(),
        "the allowed command ran"
    );
    assert!(
        of_type(&events, "thread.tool")
            .iter()
            .any(|t| t["payload"]["status"] == "completed"),
        "{events:?}"
    );
    // What runs in the agent's session sees neither vyred's home (the sandbox hides it) nor
    // anything of vyred's own environment or vault (attacker 2: a session acting as vyred).
    let peek = format!(
        "RUNBASH env > env.txt; ls -a {} > home.txt 2>&1; cat {} >> home.txt 2>&1",
        r.home.vyre_home().display(),
        r.home.home().database().display()
    );
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": peek }))
        .await
        .unwrap();
    answer_next_ask(&r, &mut stream, json!({ "decision": "allow" })).await;
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let env = std::fs::read_to_string(r.work.join("env.txt")).unwrap();
    let home = std::fs::read_to_string(r.work.join("home.txt")).unwrap();
    assert!(
        env.contains("VYRE_THREAD="),
        "the session's own tag is there: {env}"
    );
    assert!(!env.contains(KEY) && !env.contains("VYRE_HOME="), "{env}");
    assert!(
        !home.lines().any(|l| l == "vyre.db" || l == "config.json")
            && home.contains("No such file")
            && !home.contains("SQLite"),
        "VYRE_HOME is hidden from the agent's tools: {home}"
    );
    // Or to deny.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch denied.txt" }),
        )
        .await
        .unwrap();
    answer_next_ask(
        &r,
        &mut stream,
        json!({ "decision": "deny", "message": "no" }),
    )
    .await;
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        !r.work.join("denied.txt").exists(),
        "the denied command did not run"
    );
    // The floor refuses without asking anyone, as for Claude Code's own sessions.
    let events = send_until_finished(&r, &mut stream, &thread, "RUNBASH rm -rf /").await;
    assert!(of_type(&events, "ask.raised").is_empty(), "{events:?}");
    assert_eq!(
        of_type(&events, "thread.denied")[0]["payload"]["by"],
        "floor"
    );

    // Stopped, then resumed by the next message: the same agent session, its history kept.
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    let events = send_until_finished(&r, &mut stream, &thread, "again").await;
    let begun = of_type(&events, "thread.started");
    assert_eq!(begun[0]["payload"]["resumed"], true, "{begun:?}");
    let last = api.message_requests().pop().unwrap();
    let said = last.body["messages"].to_string();
    assert!(
        said.contains("hello there") && said.contains("again"),
        "the resumed session carries the thread's history: {said}"
    );
    r.vyred.stop().await;
}

/// The agent killed mid-turn (every process of its session, as the OOM killer would): the turn
/// ends once and says why, nothing of it is left running, and the next message starts the
/// thread's agent again and is answered; all without a Claude credential in the vault.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives a real ACP agent on the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... VYRE_TEST_ACP=... cargo test -- --include-ignored"]
async fn an_acp_agent_killed_mid_turn_ends_the_turn_clearly_and_the_thread_goes_on() {
    use crate::threads_e2e::*;
    use serde_json::json;
    let (_api, r) = acp_rig("acp-killed").await;
    // The agent signs in its own way: no Claude credential is needed in the vault.
    r.sock
        .call("vault.delete", &json!({ "name": "anthropic-api-key" }))
        .await
        .unwrap();
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "provider": "acp-claude", "text": "SLOWLY tell a long story" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| e["type"] == "thread.text").await;
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let sid = pids["sids"][0].as_i64().unwrap() as i32;
    let members = crate::faults::in_session(sid);
    assert!(members.len() > 1, "the agent and what it runs: {members:?}");
    for pid in members {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let events = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    let finished = of_type(&events, "thread.finished");
    assert_eq!(finished.len(), 1, "the turn ends once: {events:?}");
    assert_eq!(finished[0]["payload"]["ok"], false);
    let error = finished[0]["payload"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("signal 9"), "the turn says why: {error}");
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    assert!(pids["pgids"].as_array().unwrap().is_empty(), "{pids}");

    let events = send_until_finished(&r, &mut stream, &thread, "are you back?").await;
    assert_eq!(of_type(&events, "thread.started").len(), 1, "{events:?}");
    assert_eq!(events.last().unwrap()["payload"]["ok"], true, "{events:?}");
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [are you back?]"), "{text}");
    r.vyred.stop().await;
}

/// What a real agent cannot be made to do, played by a fake one (`tests/fixtures/acp`): lines
/// that are not messages are skipped and the turn goes on; an agent that dies in a turn ends
/// the session (`next` says nothing more) with its exit status; an agent of another protocol
/// version, or a program that is not there, is refused at start in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_a_crash_and_a_wrong_version_from_an_acp_agent_are_handled() {
    use vyre::kernel::contracts::provider::{Happening, Provider};
    let home = TempHome::new("acp-fake");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/acp/fake_agent.py");
    let provider = |env: Vec<(String, String)>, program: std::path::PathBuf| AcpProvider {
        id: "acp-fake".into(),
        command: Command {
            label: "the ACP agent",
            setting: "sessions.acp",
            program,
            args: vec![],
            env,
        },
        home: home.dir.join("home"),
        contain: Arc::new(Contain::new(Wanted::None, None, vec![], vec![])),
        ids: home.vyre_home().join("acp").join("acp-fake"),
    };
    let launch = || Launch {
        id: vyre::kernel::ids::uuid_v4(),
        resume: false,
        fork_from: None,
        resume_at: None,
        cwd: work.clone(),
        model: None,
        effort: None,
        mode: "default".into(),
        append_system_prompt: None,
        system_prompt_snapshot: None,
        credential: Credential::Login,
        budget_usd: None,
        plugin_dirs: vec![],
        env: vec![],
        processes: None,
        host_tools: None,
    };
    let p = provider(vec![], fake.clone());
    let mut session = p.start(launch()).await.unwrap();
    let say = |s: &dyn vyre::kernel::contracts::provider::Session, text: &str| {
        s.send(
            serde_json::json!([{ "type": "text", "text": text }]),
            &vyre::kernel::ids::uuid_v4(),
            None,
        )
        .unwrap()
    };
    say(session.as_ref(), "GARBAGE");
    let mut garbage = 0;
    let mut text = String::new();
    loop {
        match session.next().await.expect("the session goes on") {
            Happening::Garbage(_) => garbage += 1,
            Happening::Text { delta: Some(d), .. } => text.push_str(&d),
            Happening::Finished { ok, .. } => {
                assert!(ok);
                break;
            }
            _ => {}
        }
    }
    assert_eq!((garbage, text.as_str()), (2, "fake reply"));
    // A turn while one runs is refused; the agent dying in a turn ends the session.
    say(session.as_ref(), "CRASH");
    let again = session
        .send(serde_json::json!("more"), "u", None)
        .unwrap_err();
    assert!(again.to_string().contains("a turn is running"), "{again}");
    while session.next().await.is_some() {}
    let exit = session.exit().await;
    assert_eq!(exit.status, Some(3), "{exit:?}");

    let old = provider(vec![("FAKE_ACP_VERSION".into(), "2".into())], fake);
    let err = old.start(launch()).await.err().unwrap().to_string();
    assert!(err.contains("ACP version 2, Vyre speaks 1"), "{err}");
    let missing = provider(vec![], home.dir.join("no-such-agent"));
    let err = missing.start(launch()).await.err().unwrap().to_string();
    assert!(
        err.contains("was not found") && err.contains("sessions.acp"),
        "{err}"
    );
}
