//! End to end on the real Claude Code CLI (the pinned version, installed by `tests/run`), driven
//! through Vyre's Claude driver against the fake Messages API.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::kernel::contracts::provider::Credential;
use vyre::kernel::contracts::secret::Secret;
use vyre::modules::sessions::claude::{ClaudeOptions, ClaudeProcess, PINNED_VERSION};
use vyre::modules::sessions::wire::Incoming;

use crate::fake_api::FakeApi;
use crate::support::TempHome;

/// The pinned CLI, from `VYRE_TEST_CLAUDE` (set by `tests/run`).
/// The pinned Claude Code CLI the end-to-end tests drive. Those tests are `#[ignore]`d so that
/// a plain `cargo test` shows them as ignored rather than passed; `tests/run` installs the CLI,
/// sets `VYRE_TEST_CLAUDE` and runs them with `--include-ignored`. Asked for without it, this
/// fails the test: a skip must never read as a pass.
pub fn claude_bin() -> std::path::PathBuf {
    match std::env::var_os("VYRE_TEST_CLAUDE") {
        Some(p) => p.into(),
        None => panic!(
            "this test drives the real Claude Code CLI: set VYRE_TEST_CLAUDE to the pinned CLI \
             (`tests/run` installs it and sets it)"
        ),
    }
}

fn options(home: &TempHome, api: &FakeApi, bin: std::path::PathBuf, key: &str) -> ClaudeOptions {
    let cwd = home.dir.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    ClaudeOptions {
        program: bin,
        cwd,
        session_id: uuid(),
        resume: false,
        fork_from: None,
        resume_at: None,
        model: Some("claude-fake-1".into()),
        effort: None,
        permission_mode: "default".into(),
        append_system_prompt: Some("You are running inside a Vyre test.".into()),
        system_prompt_snapshot: None,
        plugin_dirs: vec![],
        max_budget_usd: None,
        base_url: Some(api.url()),
        credential: Credential::ApiKey(Secret::new(key.into())),
        home: home.dir.join("home"),
        run_as: None,
        sandbox: None,
        expose_ro: vec![],
        claude_sandbox: None,
        processes: None,
        extra_env: vec![(
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
            "1".into(),
        )],
        host_tools: None,
    }
}

fn uuid() -> String {
    vyre::kernel::ids::uuid_v4()
}

/// Messages until a `result`, answering permission questions with `answer`.
async fn until_result(p: &mut ClaudeProcess, answer: impl Fn(&Value) -> Value) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(60), p.incoming.recv())
            .await
            .expect("the CLI answers in time")
            .expect("the CLI is still running");
        match next {
            Incoming::Message(m) => {
                let done = m["type"] == "result";
                seen.push(m);
                if done {
                    return seen;
                }
            }
            Incoming::Request { id, request } => {
                // The driver's Gate check before a Bash call, its Stop and prompt hooks: let them go on (vyred's actor asks
                // the gate module; this test drives the process alone).
                if request["subtype"] == "hook_callback"
                    && [
                        vyre::modules::sessions::claude::GATE_HOOK,
                        vyre::modules::sessions::claude::STOP_HOOK,
                        vyre::modules::sessions::claude::READY_HOOK,
                    ]
                    .contains(&request["callback_id"].as_str().unwrap_or_default())
                {
                    p.peer.respond(&id, json!({})).unwrap();
                    continue;
                }
                let reply = answer(&request);
                seen.push(json!({ "type": "vyre_asked", "request": request, "answer": reply }));
                p.peer.respond(&id, reply).unwrap();
            }
            Incoming::Cancel { .. } | Incoming::Garbage(_) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_turn_streams_from_the_real_cli_with_the_key_on_fd3() {
    let bin = claude_bin();
    let home = TempHome::new("claude-turn");
    let api = FakeApi::start().await;
    let key = "sk-ant-api03-fake-test-key-0000000000";
    let o = options(&home, &api, bin, key);
    let (mut p, init) = ClaudeProcess::start(&o).await.unwrap();
    assert_eq!(init["claude_code_version"], PINNED_VERSION, "{init}");
    p.send_user(
        json!([{ "type": "text", "text": "hello there" }]),
        &uuid(),
        None,
    )
    .unwrap();
    let seen = until_result(&mut p, |_| json!({ "behavior": "deny", "message": "no" })).await;
    let deltas: String = seen
        .iter()
        .filter(|m| m["type"] == "stream_event" && m["event"]["delta"]["type"] == "text_delta")
        .map(|m| m["event"]["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert!(deltas.contains("reply to [hello there]"), "{deltas}");
    let result = seen.last().unwrap();
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["session_id"], o.session_id.as_str());
    // The key reached the API, from fd 3.
    let requests = api.message_requests();
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| r.api_key.as_deref() == Some(key)));
    // The transcript is where Claude Code keeps it.
    let key_dir: String = o
        .cwd
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let transcript = home
        .dir
        .join("home/.claude/projects")
        .join(key_dir)
        .join(format!("{}.jsonl", o.session_id));
    assert!(transcript.exists(), "{}", transcript.display());
    let status = p.stop(Duration::from_secs(5)).await;
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_tool_call_asks_and_its_bash_sees_no_key() {
    let bin = claude_bin();
    let home = TempHome::new("claude-ask");
    let api = FakeApi::start().await;
    let key = "sk-ant-api03-fake-test-key-1111111111";
    let o = options(&home, &api, bin, key);
    let (mut p, _) = ClaudeProcess::start(&o).await.unwrap();
    p.send_user(
        json!("please RUNBASH env > env_dump.txt; echo dumped"),
        &uuid(),
        None,
    )
    .unwrap();
    let seen = until_result(&mut p, |_| json!({ "behavior": "allow" })).await;
    let asked: Vec<&Value> = seen.iter().filter(|m| m["type"] == "vyre_asked").collect();
    assert_eq!(asked.len(), 1, "one permission question");
    assert_eq!(asked[0]["request"]["subtype"], "can_use_tool");
    assert_eq!(asked[0]["request"]["tool_name"], "Bash");
    assert_eq!(seen.last().unwrap()["is_error"], false);
    let env = std::fs::read_to_string(o.cwd.join("env_dump.txt")).unwrap();
    assert!(
        !env.contains(key),
        "the key is not in the tool's environment"
    );
    assert!(!env.contains("CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR"));
    assert!(
        env.contains("CLAUDECODE=1"),
        "the CLI sets its own markers for children"
    );
    let reply: String = seen
        .iter()
        .filter(|m| m["type"] == "assistant")
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|b| b["text"].as_str().map(String::from))
        .collect();
    assert!(reply.contains("tool said: dumped"), "{reply}");
    p.stop(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_claude_driver_passes_the_provider_contract() {
    use vyre::kernel::contracts::provider::Launch;
    use vyre::modules::sessions::claude_provider::ClaudeProvider;
    use vyre::modules::sessions::conformance::{Script, conform};
    let bin = claude_bin();
    let home = TempHome::new("claude-conform");
    let api = FakeApi::start().await;
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let provider = ClaudeProvider {
        cli: std::sync::Arc::new(vyre::modules::sessions::npm_cli::NpmCli::at(
            bin,
            home.dir.join("home"),
        )),
        base_url: Some(api.url()),
        home: home.dir.join("home"),
        // Contained as vyred contains them: in a sandbox that hides VYRE_HOME.
        contain: std::sync::Arc::new(vyre::modules::sessions::sandbox::Contain::new(
            vyre::modules::sessions::sandbox::Wanted::Auto,
            None,
            vyre::modules::sessions::sandbox::hidden_paths(&home.vyre_home()),
            vec![],
        )),
    };
    let id = uuid();
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
        credential: Credential::ApiKey(Secret::new("sk-ant-api03-conform-0000000000".into())),
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
