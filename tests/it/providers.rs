//! The provider router: providers come from modules that declare them, and a provider that is
//! not Claude runs sessions end to end through the same Switchboard and passes the same contract.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use vyre::modules::Module;
use vyre::sessions::conformance::{Script, conform};
use vyre::sessions::provider::Launch;

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
        mode: "default".into(),
        append_system_prompt: None,
        credential: vyre::sessions::claude::Credential::Login,
        budget_usd: None,
        plugin_dirs: vec![],
        env: vec![],
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
        json!({ "sessions": { "auth": "login", "home": home.dir.join("home") } }).to_string(),
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
