//! The harness plugin on the real CLI: its PreToolUse hook runs `vyre hook`, vyred's floor
//! denies with the reason; with vyred down the hooks print nothing and the session runs as it
//! would without Vyre.

use std::path::Path;

use crate::fake_api::FakeApi;
use crate::support::*;
use crate::threads_e2e::KEY;

/// `claude <args> --plugin-dir harness` as a person runs it in a terminal in `cwd`: Vyre's
/// binary on PATH, the test's HOME and VYRE_HOME, the fake API.
pub(crate) fn terminal_claude(
    home: &TempHome,
    api: &FakeApi,
    cli: &Path,
    cwd: &Path,
    args: &[&str],
) -> std::process::Command {
    let mut cmd = plain_claude(home, api, cli, cwd, args);
    cmd.arg("--plugin-dir")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../harness"));
    cmd
}

/// `claude <args>` as a person runs it, without `--plugin-dir`: what it loads is what is
/// installed for it.
fn plain_claude(
    home: &TempHome,
    api: &FakeApi,
    cli: &Path,
    cwd: &Path,
    args: &[&str],
) -> std::process::Command {
    let vyre_dir = Path::new(BIN).parent().unwrap();
    let cli_dir = cli.parent().unwrap();
    let mut cmd = std::process::Command::new(cli);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}:{}",
                vyre_dir.display(),
                cli_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", home.dir.join("home"))
        .env("VYRE_HOME", home.vyre_home())
        .env("ANTHROPIC_BASE_URL", api.url())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    cmd
}

/// `claude -p <prompt>` with the plugin, in the home's `work` folder: its final text.
fn claude_p(home: &TempHome, api: &FakeApi, cli: &Path, prompt: &str) -> String {
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = terminal_claude(home, api, cli, &work, &["-p", prompt])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_floor_denies_through_the_plugins_hook_and_without_vyred_nothing_changes() {
    let cli = crate::claude_e2e::claude_bin();
    let api = FakeApi::start().await;
    let home = TempHome::new("harness");
    let vyred = InProcess::start(&home, vec![]).await;
    let cli2 = cli.clone();
    let said = {
        let (h, a) = (&home, &api);
        tokio::task::block_in_place(|| claude_p(h, a, &cli2, "RUNBASH mkfs.ext4 /dev/vyre-none"))
    };
    assert!(
        said.contains("hook") && said.contains("the floor refuses it"),
        "the hook's deny and its reason reached the model: {said}"
    );
    vyred.stop().await;

    // vyred down: the hooks stay out of the way.
    let said = tokio::task::block_in_place(|| claude_p(&home, &api, &cli, "hello without vyre"));
    assert!(said.contains("reply to [hello without vyre]"), "{said}");
    let said = tokio::task::block_in_place(|| {
        claude_p(&home, &api, &cli, "RUNBASH mkfs.ext4 /dev/vyre-none")
    });
    assert!(!said.contains("the floor refuses it"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_brief_and_recalled_memory_reach_the_model_through_the_hooks() {
    let cli = crate::claude_e2e::claude_bin();
    let api = FakeApi::start().await;
    let home = TempHome::new("harness-context");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // An earlier session of the project, and one of another project that must not leak.
    for (folder, id, words) in [
        (
            work.clone(),
            "earlier-1",
            "Krill is our inventory robot. the zebrafish inventory budget is 42 crates",
        ),
        (
            home.dir.join("elsewhere"),
            "other-1",
            "Quokka is the codename of another client. the zebrafish secret of another client",
        ),
    ] {
        std::fs::create_dir_all(&folder).unwrap();
        let dir = home
            .dir
            .join("home/.claude/projects")
            .join(folder.display().to_string().replace('/', "-"));
        std::fs::create_dir_all(&dir).unwrap();
        let line = serde_json::json!({
            "type": "user", "message": { "role": "user", "content": words },
            "uuid": format!("{id}-u"), "timestamp": "2026-11-01T10:00:00Z", "cwd": folder, "sessionId": id
        });
        std::fs::write(dir.join(format!("{id}.jsonl")), format!("{line}\n")).unwrap();
    }
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    for (name, dir) in [("Walrus", &work), ("Other", &home.dir.join("elsewhere"))] {
        sock.call(
            "projects.create",
            &serde_json::json!({ "name": name, "home": dir }),
        )
        .await
        .unwrap();
    }
    for _ in 0..200 {
        let s = sock
            .call("recall.status", &serde_json::json!({}))
            .await
            .unwrap();
        if s["sessions"] == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The curator has read them too.
    for _ in 0..200 {
        let f = sock
            .call("memory.facts", &serde_json::json!({ "kind": "term" }))
            .await
            .unwrap();
        if f.as_array().is_some_and(|a| a.len() == 2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let said = tokio::task::block_in_place(|| {
        claude_p(&home, &api, &cli, "what was the zebrafish budget again")
    });
    assert!(said.contains("reply to"), "{said}");
    let sent = api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("this session belongs to the project \\\"Walrus\\\""),
        "the brief: {sent}"
    );
    assert!(
        sent.contains("From Vyre's memory"),
        "memory, marked as such"
    );
    assert!(sent.contains("42 crates"), "what recall found");
    assert!(
        sent.contains("established in this project's sessions")
            && sent.contains("- Krill is our inventory robot"),
        "what the person defined in the project, in the brief: {sent}"
    );
    assert!(!sent.contains("another client"), "never another project's");
    assert!(!sent.contains("Quokka"), "nor its terms");
    // What the memory gave the session is said in its thread, for the app's gold.
    let told = sock
        .call(
            "system.events",
            &serde_json::json!({ "types": ["harness.remembered"] }),
        )
        .await
        .unwrap();
    let told = told.as_array().unwrap();
    let hook = |h: &str| {
        told.iter()
            .find(|e| e["payload"]["hook"] == h)
            .unwrap_or_else(|| panic!("no {h} in {told:?}"))
    };
    let brief = hook("SessionStart");
    let fact = &brief["payload"]["facts"][0];
    assert_eq!(fact["subject"], "Krill", "{brief}");
    let why = sock
        .call("memory.why", &serde_json::json!({ "fact": fact["fact"] }))
        .await
        .unwrap();
    assert!(
        why.to_string().contains("earlier-1"),
        "the fact leads to its turn: {why}"
    );
    let recalled = hook("UserPromptSubmit");
    assert_eq!(
        recalled["thread"], brief["thread"],
        "the same session's thread"
    );
    assert!(recalled["thread"].as_str().is_some_and(|t| !t.is_empty()));
    let quote = &recalled["payload"]["quotes"][0];
    assert_eq!(quote["thread"], "earlier-1", "{recalled}");
    assert!(
        quote["snippet"].as_str().unwrap().contains("42"),
        "{recalled}"
    );
    assert!(
        !serde_json::Value::Array(told.clone())
            .to_string()
            .contains("Quokka")
    );
    // The thread's own read of them (what a surface opening the thread later, or a paired Mac
    // on a box, calls): the same events, in order; a thread memory gave nothing has none.
    let thread = brief["thread"].as_str().unwrap();
    let read = sock
        .call(
            "harness.remembered",
            &serde_json::json!({ "thread": thread }),
        )
        .await
        .unwrap();
    let ids = |v: &[serde_json::Value]| v.iter().map(|e| e["id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(read.as_array().unwrap()), ids(told), "{read}");
    assert_eq!(read[0]["payload"], brief["payload"]);
    let none = sock
        .call(
            "harness.remembered",
            &serde_json::json!({ "thread": "earlier-1" }),
        )
        .await
        .unwrap();
    assert_eq!(none, serde_json::json!([]));
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn words_sent_while_a_terminal_has_the_session_are_handed_over_at_its_turns_end() {
    let cli = crate::claude_e2e::claude_bin();
    let api = FakeApi::start().await;
    let home = TempHome::new("harness-stop");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let id = "7a1c2b3d-0000-4000-8000-00000000beef";
    // A person's terminal: a long turn in a session with the plugin.
    let terminal = terminal_claude(
        &home,
        &api,
        &cli,
        &work,
        &["-p", "SLOWLY tell a long story", "--session-id", id],
    )
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let sent = sock
        .call(
            "threads.send",
            &serde_json::json!({ "thread": id, "text": "HANDOVER-WORDS from the phone" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "queued", "the terminal has it: {sent}");
    let out = tokio::task::block_in_place(|| terminal.wait_with_output()).unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("HANDOVER-WORDS from the phone"),
        "the terminal's session carried on with the words: {said}"
    );
    let events =
        crate::threads_e2e::events_until(&mut stream, |e| e["type"] == "thread.unqueued").await;
    assert_eq!(events.last().unwrap()["payload"]["reason"], "delivered");
    let list = sock
        .call("threads.list", &serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(
        list,
        serde_json::json!([]),
        "Vyre never wrote the session itself"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn session_start_binds_the_session_so_vyre_knows_a_plain_claude_has_it() {
    let cli = crate::claude_e2e::claude_bin();
    let api = FakeApi::start().await;
    let home = TempHome::new("harness-bind");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let mut bound = sock.events("types=harness.*", None).await.unwrap();
    // A plain `claude` (no session id on its command line), with the plugin.
    let terminal = terminal_claude(
        &home,
        &api,
        &cli,
        &work,
        &["-p", "SLOWLY tell a long story"],
    )
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let events =
        crate::threads_e2e::events_until(&mut bound, |e| e["type"] == "harness.bound").await;
    let payload = &events.last().unwrap()["payload"];
    let session = payload["session"].as_str().unwrap().to_string();
    assert_eq!(
        payload["pid"],
        terminal.id(),
        "bound to the claude process itself"
    );
    let binding = sock
        .call(
            "harness.binding",
            &serde_json::json!({ "session": session }),
        )
        .await
        .unwrap();
    assert_eq!(binding["alive"], true);
    // A terminal has it: the message waits for its turn to end.
    let sent = sock
        .call(
            "threads.send",
            &serde_json::json!({ "thread": session, "text": "BOUND-WORDS for you" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "queued");
    let out = tokio::task::block_in_place(|| terminal.wait_with_output()).unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("BOUND-WORDS for you"));
    // The person asks from their own terminal, as docs/api.md gives it.
    let out =
        tokio::task::block_in_place(|| home.vyre(&["harness", "binding", "--session", &session]));
    assert!(out.status.success(), "{out:?}");
    let binding: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(binding["alive"], false, "the terminal is gone");
    assert_eq!(binding["session"], session.as_str());
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_plugins_commands_bring_vyre_into_the_conversation_and_its_skills_are_listed() {
    let cli = crate::claude_e2e::claude_bin();
    let api = FakeApi::start().await;
    let home = TempHome::new("harness-commands");
    let vyred = InProcess::start(&home, vec![]).await;
    let said = tokio::task::block_in_place(|| claude_p(&home, &api, &cli, "/vyre:status"));
    assert!(said.contains("reply to"), "{said}");
    let sent = api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("vyred 0.1.0"),
        "`vyre status` ran for the command: {sent}"
    );
    assert!(
        sent.contains("use-the-vault")
            && sent.contains("work-in-a-project")
            && sent.contains("write-a-watcher"),
        "the plugin's skills are offered"
    );
    let said = tokio::task::block_in_place(|| claude_p(&home, &api, &cli, "/vyre:project"));
    assert!(said.contains("reply to"), "{said}");
    let sent = api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("\\\"project\\\": null"),
        "no project here: {sent}"
    );
    let said =
        tokio::task::block_in_place(|| claude_p(&home, &api, &cli, "/vyre:recall walrus budget"));
    assert!(said.contains("reply to"), "{said}");
    let sent = api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("What Vyre's recall finds for \\\"walrus budget\\\""),
        "the command ran with its words: {sent}"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn harness_install_gives_plain_claude_the_plugin_and_uninstall_takes_only_it_away() {
    let cli = crate::claude_e2e::claude_bin();
    let api = FakeApi::start().await;
    let home = TempHome::new("harness-install");
    let vyred = InProcess::start(&home, vec![]).await;
    let claude_dir = home.dir.join("home/.claude");
    std::fs::create_dir_all(&claude_dir).unwrap();
    let settings = claude_dir.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"theme":"dark","permissions":{"allow":["Bash(ls:*)"]}}"#,
    )
    .unwrap();
    let path = format!(
        "{}:{}:{}",
        Path::new(&cli).parent().unwrap().display(),
        Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let vyre = |args: &[&str]| {
        let out = home
            .command()
            .env("PATH", &path)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let read = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap()
    };

    let (ok, said) = tokio::task::block_in_place(|| vyre(&["harness", "install"]));
    assert!(ok, "{said}");
    assert!(said.contains("installed"), "{said}");
    let s = read();
    assert_eq!(s["enabledPlugins"]["vyre@vyre"], true, "{s}");
    assert_eq!(s["theme"], "dark", "the rest is kept: {s}");
    assert_eq!(s["permissions"]["allow"][0], "Bash(ls:*)", "{s}");
    // Again: nothing breaks.
    let (ok, said) = tokio::task::block_in_place(|| vyre(&["harness", "install"]));
    assert!(ok, "{said}");

    // A plain `claude`, no --plugin-dir: the plugin's command runs `vyre status`.
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = tokio::task::block_in_place(|| {
        plain_claude(&home, &api, &cli, &work, &["-p", "/vyre:status"])
            .output()
            .unwrap()
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("vyred 0.1.0"),
        "the installed plugin ran: {sent}"
    );

    let (ok, said) = tokio::task::block_in_place(|| vyre(&["harness", "uninstall"]));
    assert!(ok, "{said}");
    assert!(said.contains("uninstalled"), "{said}");
    let s = read();
    assert!(s["enabledPlugins"].get("vyre@vyre").is_none(), "{s}");
    assert_eq!(s["theme"], "dark", "{s}");
    assert_eq!(s["permissions"]["allow"][0], "Bash(ls:*)", "{s}");
    let (ok, said) = tokio::task::block_in_place(|| vyre(&["harness", "uninstall"]));
    assert!(ok, "{said}");
    assert!(said.contains("was not installed"), "{said}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plugins_pre_tool_use_has_claude_code_ask_about_what_the_gate_holds() {
    let home = TempHome::new("harness-gate");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let hook = |tool: &str, input: serde_json::Value| {
        serde_json::json!({ "event": "PreToolUse", "input": {
            "session_id": "s1", "cwd": "/work/app", "tool_name": tool, "tool_input": input,
        } })
    };
    // A push from a terminal's session: Claude Code asks the person there, with the Gate's reason.
    let out = sock
        .call(
            "harness.hook",
            &hook(
                "Bash",
                serde_json::json!({ "command": "cd sub && git push origin main" }),
            ),
        )
        .await
        .unwrap();
    let decided = &out["output"]["hookSpecificOutput"];
    assert_eq!(decided["permissionDecision"], "ask", "{out}");
    assert!(
        decided["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("git push sends as you"),
        "{out}"
    );
    let out = sock
        .call(
            "harness.hook",
            &hook(
                "mcp__slack__post_message",
                serde_json::json!({ "channel": "#x", "text": "hi" }),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        out["output"]["hookSpecificOutput"]["permissionDecision"],
        "ask"
    );
    // What stays here says nothing; the floor still denies first.
    for (tool, input) in [
        ("Bash", serde_json::json!({ "command": "git status" })),
        ("Read", serde_json::json!({ "file_path": "/etc/hosts" })),
        (
            "Bash",
            serde_json::json!({ "command": "curl -d x=1 http://127.0.0.1:9/" }),
        ),
    ] {
        let out = sock.call("harness.hook", &hook(tool, input)).await.unwrap();
        assert_eq!(out["output"], serde_json::Value::Null, "{tool}: {out}");
    }
    let out = sock
        .call(
            "harness.hook",
            &hook(
                "Bash",
                serde_json::json!({ "command": "rm -rf / && git push" }),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        out["output"]["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    vyred.stop().await;
}
