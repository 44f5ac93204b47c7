//! The provider router: providers come from modules that declare them, and a provider that is
//! not Claude runs sessions end to end through the same Switchboard and passes the same contract.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use vyre::kernel::contracts::provider::Launch;
use vyre::kernel::module::Module;
use vyre::modules::sessions::conformance::{Script, conform};

use crate::fake_provider::{FakeProvider, FakeProviderModule};
use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fake_provider_passes_the_provider_contract() {
    let home = TempHome::new("fake-conform");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let provider = FakeProvider {
        name: "fake".into(),
    };
    let launch = |resume: bool| Launch {
        id: "fake-thread".into(),
        resume,
        fork_from: None,
        resume_at: None,
        cwd: work.clone(),
        model: None,
        effort: None,
        mode: "default".into(),
        append_system_prompt: None,
        system_prompt_snapshot: None,
        credential: vyre::kernel::contracts::provider::Credential::Login,
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_come_from_modules_that_declare_them() {
    let home = TempHome::new("providers");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        json!({ "sessions": { "auth": "login", "home": home.dir.join("home"), "spares": 0 } })
            .to_string(),
    )
    .unwrap();
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let extra: Vec<Arc<dyn Module>> = vec![
        Arc::new(FakeProviderModule {
            module: "fakeprov".into(),
            provider: "fake".into(),
            declare: true,
        }),
        Arc::new(FakeProviderModule {
            module: "sneakyprov".into(),
            provider: "sneaky".into(),
            declare: false,
        }),
        Arc::new(FakeProviderModule {
            module: "dupprov".into(),
            provider: "claude".into(),
            declare: true,
        }),
    ];
    let vyred = InProcess::start(&home, extra).await;
    let sock = vyred.socket_client();
    let modules = sock.call("system.modules", &json!({})).await.unwrap();
    let state = |name: &str| {
        modules
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(state("fakeprov")["state"], "started");
    assert!(
        state("sneakyprov")["reason"]
            .as_str()
            .unwrap()
            .contains("not declared"),
        "{modules}"
    );
    assert!(
        state("dupprov")["reason"]
            .as_str()
            .unwrap()
            .contains("already registered"),
        "{modules}"
    );
    let err = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "provider": "sneaky" }),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown_provider") && err.contains("claude, fake"),
        "{err}"
    );

    // The fake provider's session runs end to end through the Switchboard.
    let mut stream = sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "provider": "fake", "text": "hi there" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let mut seen: Vec<Value> = Vec::new();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let e: Value = serde_json::from_str(&msg.data).unwrap();
        let done = e["type"] == "thread.finished";
        seen.push(e);
        if done {
            break;
        }
    }
    let started = seen.iter().find(|e| e["type"] == "thread.started").unwrap();
    assert_eq!(started["payload"]["provider"], "fake");
    let text: String = seen
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert_eq!(text, "fake reply to [hi there]");
    sock.call(
        "threads.send",
        &json!({ "thread": thread, "text": "RUNBASH touch by-fake.txt" }),
    )
    .await
    .unwrap();
    let ask = loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let e: Value = serde_json::from_str(&msg.data).unwrap();
        if e["type"] == "ask.raised" {
            break e["payload"]["ask"].clone();
        }
    };
    sock.call(
        "threads.answer",
        &json!({ "ask": ask, "decision": "allow" }),
    )
    .await
    .unwrap();
    assert!(wait_until(Duration::from_secs(10), || work
        .join("by-fake.txt")
        .exists()));
    vyred.stop().await;
}

async fn fake_rig(
    name: &str,
    sessions: Value,
) -> (
    TempHome,
    InProcess,
    vyre::surfaces::client::Client,
    std::path::PathBuf,
) {
    let home = TempHome::new(name);
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let mut sessions = sessions;
    sessions["auth"] = json!("login");
    sessions["home"] = json!(home.dir.join("home"));
    if sessions.get("spares").is_none() {
        sessions["spares"] = json!(0);
    }
    std::fs::write(
        home.home().config_file(),
        json!({ "sessions": sessions }).to_string(),
    )
    .unwrap();
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let extra: Vec<Arc<dyn Module>> = vec![Arc::new(FakeProviderModule {
        module: "fakeprov".into(),
        provider: "fake".into(),
        declare: true,
    })];
    let vyred = InProcess::start(&home, extra).await;
    let sock = vyred.socket_client();
    (home, vyred, sock, work)
}

async fn next_of(
    stream: &mut vyre::surfaces::client::EventStream,
    kind: &str,
    thread: Option<&str>,
) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .expect(kind)
            .unwrap()
            .unwrap();
        let e: Value = serde_json::from_str(&msg.data).unwrap();
        if e["type"] == kind && thread.is_none_or(|t| e["thread"] == t) {
            return e;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_closes_and_resumes_on_the_next_send() {
    let (_home, vyred, sock, work) = fake_rig("idle-close", json!({ "idle_minutes": 0.01 })).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "provider": "fake", "text": "hi" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    next_of(&mut stream, "thread.finished", Some(&thread)).await;
    let stopped = next_of(&mut stream, "thread.stopped", Some(&thread)).await;
    assert_eq!(stopped["payload"]["reason"], "idle");
    assert!(
        sock.call("threads.pids", &json!({})).await.unwrap()["pids"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    sock.call(
        "threads.send",
        &json!({ "thread": thread, "text": "back again" }),
    )
    .await
    .unwrap();
    let started = next_of(&mut stream, "thread.started", Some(&thread)).await;
    assert_eq!(started["payload"]["resumed"], true);
    let turn = next_of(&mut stream, "thread.turn", Some(&thread)).await;
    assert_eq!(turn["payload"]["turn"], format!("{thread}:2"));
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_closes_the_oldest_idle_session_and_refuses_when_all_are_busy() {
    let (_home, vyred, sock, work) =
        fake_rig("cap", json!({ "max_live": 2, "idle_minutes": 0 })).await;
    let mut stream = sock.events("types=thread.*,ask.*", None).await.unwrap();
    let start = |text: &str| {
        let (sock, input) = (
            sock.clone(),
            json!({ "cwd": work, "provider": "fake", "text": text }),
        );
        async move { sock.call("threads.start", &input).await }
    };
    let a = start("hi").await.unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    next_of(&mut stream, "thread.finished", Some(&a)).await;
    let b = start("RUNBASH true").await.unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    next_of(&mut stream, "ask.raised", Some(&b)).await;
    // A third session: the oldest idle one (a) makes room.
    let c = start("RUNBASH true").await.unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let stopped = next_of(&mut stream, "thread.stopped", Some(&a)).await;
    assert_eq!(stopped["payload"]["reason"], "idle");
    next_of(&mut stream, "ask.raised", Some(&c)).await;
    // Both live ones wait on a question: a fourth is refused.
    let err = start("hi").await.unwrap_err().to_string();
    assert!(err.contains("busy") && err.contains("max_live"), "{err}");
    let live: Vec<Value> = sock
        .call("threads.list", &json!({}))
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["live"] == true)
        .cloned()
        .collect();
    assert_eq!(live.len(), 2);
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_send_twice_is_one_turn() {
    let (_home, vyred, sock, work) = fake_rig("idempotent", json!({})).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let thread = sock
        .call("threads.start", &json!({ "cwd": work, "provider": "fake" }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let input = json!({ "thread": thread, "text": "only once", "uuid": "11111111-2222-4333-8444-555555555555" });
    let first = sock.call("threads.send", &input).await.unwrap();
    next_of(&mut stream, "thread.finished", Some(&thread)).await;
    let again = sock.call("threads.send", &input).await.unwrap();
    assert_eq!(first, again, "the retry answers as the first did");
    sock.call(
        "threads.send",
        &json!({ "thread": thread, "text": "a new one" }),
    )
    .await
    .unwrap();
    let turn = next_of(&mut stream, "thread.turn", Some(&thread)).await;
    assert_eq!(
        turn["payload"]["turn"],
        format!("{thread}:2"),
        "the retry made no turn of its own"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_crash_running_turns_end_with_restart_and_the_thread_resumes() {
    let (home, vyred, sock, work) = fake_rig("crash-restart", json!({})).await;
    let mut stream = sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "provider": "fake", "text": "RUNBASH true" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let ask = next_of(&mut stream, "ask.raised", Some(&thread)).await["payload"]["ask"]
        .as_str()
        .unwrap()
        .to_string();
    vyred.stop().await;
    // Make the store look as a vyred killed mid-question leaves it.
    {
        let conn = rusqlite::Connection::open(home.home().database()).unwrap();
        conn.execute(
            "UPDATE threads_runs SET status = 'waiting', stopped_reason = NULL WHERE id = ?1",
            [&thread],
        )
        .unwrap();
        conn.execute(
            "UPDATE threads_asks SET status = 'open', decision = NULL WHERE id = ?1",
            [&ask],
        )
        .unwrap();
    }
    let extra: Vec<Arc<dyn Module>> = vec![Arc::new(FakeProviderModule {
        module: "fakeprov".into(),
        provider: "fake".into(),
        declare: true,
    })];
    let vyred = InProcess::start(&home, extra).await;
    let sock = vyred.socket_client();
    let events = sock
        .call("system.events", &json!({ "thread": thread, "limit": 20 }))
        .await
        .unwrap();
    // The timeline's announcements of the items these change (thread.item) come between them.
    let said: Vec<&Value> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] != "thread.item")
        .collect();
    let kinds: Vec<&str> = said.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        &kinds[kinds.len() - 3..],
        ["ask.answered", "thread.finished", "thread.stopped"],
        "{events}"
    );
    let last = said[kinds.len() - 1];
    assert_eq!(last["payload"]["reason"], "restart");
    let err = sock
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "allow" }),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ask_closed"), "{err}");
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    sock.call(
        "threads.send",
        &json!({ "thread": thread, "text": "still there?" }),
    )
    .await
    .unwrap();
    let started = next_of(&mut stream, "thread.started", Some(&thread)).await;
    assert_eq!(started["payload"]["resumed"], true);
    next_of(&mut stream, "thread.finished", Some(&thread)).await;
    vyred.stop().await;
}
