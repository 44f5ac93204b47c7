//! Vyre's tools reach a Claude Code session over MCP: from `vyre mcp` for Claude Code in a
//! terminal, and from vyred itself for the sessions it runs (an in-process server on the session's
//! own stdio), with the caller bound by vyred either way, so a session never acts as a person.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;
use crate::threads_e2e::{events_until, of_type, rig_running, rig_with_harness};

const SERVER: &str = "mcp__plugin_vyre_vyre__";

/// Speak MCP to a `vyre mcp` child: each request gets the answer with its id.
pub(crate) struct McpChild {
    pub(crate) child: std::process::Child,
    pub(crate) out: BufReader<std::process::ChildStdout>,
}

impl McpChild {
    pub(crate) fn send(&mut self, message: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "vyre mcp ended");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    }
}

impl Drop for McpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vyre_mcp_offers_a_session_every_tool_but_a_persons_and_vyred_refuses_those_anyway() {
    let home = TempHome::new("mcp-bridge");
    let vyred = InProcess::start(&home, vec![]).await;
    let socket = vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .open("t-mcp")
        .unwrap()
        .expect("a short enough path");

    // The socket is the session, whatever a request says.
    let session = Client::socket(&socket);
    let refused = session
        .call("vault.put", &json!({ "name": "x", "value": "y" }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("person_only"));
    assert!(session.call("threads.list", &json!({})).await.is_ok());

    let mut cmd = home.command();
    cmd.arg("mcp")
        .env("VYRE_SOCKET", &socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut mcp = McpChild { child, out };
    let result = tokio::task::spawn_blocking(move || {
        let init = mcp.request(
            1,
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "it", "version": "1" } }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "vyre", "{init}");
        mcp.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        let list = mcp.request(2, "tools/list", json!({}));
        let names: Vec<String> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        let put = mcp.request(
            3,
            "tools/call",
            json!({ "name": "vault_put", "arguments": { "name": "x", "value": "y" } }),
        );
        let listed = mcp.request(
            4,
            "tools/call",
            json!({ "name": "recall_status", "arguments": {} }),
        );
        let bad = mcp.request(
            5,
            "tools/call",
            json!({ "name": "recall_search", "arguments": { "nope": 1 } }),
        );
        (names, put, listed, bad)
    })
    .await
    .unwrap();
    let (names, put, listed, bad) = result;
    for offered in [
        "threads_list",
        "recall_search",
        "projects_catalog",
        "agents_ask",
    ] {
        assert!(names.iter().any(|n| n == offered), "{offered} in {names:?}");
    }
    for plumbing in [
        "harness_hook",
        "threads_take_held",
        "projects_at",
        "recall_turns",
    ] {
        assert!(!names.iter().any(|n| n == plumbing), "{plumbing} offered");
    }
    for person_only in ["vault_put", "threads_answer", "devices_add", "system_stop"] {
        assert!(
            !names.iter().any(|n| n == person_only),
            "{person_only} offered"
        );
    }
    assert!(names.iter().all(|n| !n.contains('.')), "{names:?}");
    assert_eq!(put["result"]["isError"], true, "{put}");
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    assert!(
        listed["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"roots\"")
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        bad["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("invalid_input"),
        "{bad}"
    );
    // Nothing was stored by the session.
    let items = vyred
        .socket_client()
        .call("vault.list", &json!({}))
        .await
        .unwrap();
    assert_eq!(items, json!([]));

    vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .close("t-mcp");
    assert!(!socket.exists());
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_owned_session_loads_the_harness_and_vyred_serves_it_vyres_tools_itself() {
    let r = rig_with_harness("mcp-owned").await;
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,harness.*", None)
        .await
        .unwrap();
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": format!("CALLTOOL {SERVER}recall_status {{}}") }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    // SessionStart's binding, which vyred gives at the first prompt: bound to this thread.
    let bound = of_type(&events, "harness.bound");
    assert!(
        bound
            .iter()
            .any(|e| e["payload"]["session"] == thread.as_str()),
        "{events:?}"
    );
    let ask = of_type(&events, "ask.raised")[0]["payload"].clone();
    assert_eq!(ask["tool"], format!("{SERVER}recall_status"));

    // A surface's slash menu: the session's commands, the plugin's among them.
    let commands = r
        .sock
        .call("threads.commands", &json!({ "thread": thread }))
        .await
        .unwrap();
    let names: Vec<&str> = commands
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"vyre:status"), "{names:?}");
    assert!(names.contains(&"compact"), "{names:?}");
    // And its @file picker: paths in the thread's folder.
    std::fs::create_dir_all(r.work.join("src")).unwrap();
    std::fs::write(r.work.join("src/walrus.rs"), "").unwrap();
    let files = r
        .sock
        .call(
            "threads.files",
            &json!({ "thread": thread, "query": "walrus" }),
        )
        .await
        .unwrap();
    assert_eq!(files, json!(["src/walrus.rs"]));

    // While it runs, its socket is the session and nothing more.
    let socket = r.home.vyre_home().join("s").join(format!("{thread}.sock"));
    assert!(socket.exists());
    let refused = Client::socket(&socket)
        .call(
            "threads.answer",
            &json!({ "ask": ask["ask"], "decision": "allow" }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("person_only"));
    let at = Client::socket(&socket)
        .call("projects.at", &json!({ "cwd": r.work }))
        .await;
    assert!(at.is_ok(), "plumbing is served on the socket: {at:?}");
    let at = Client::socket(&socket)
        .call("projects.at", &json!({ "cwd": r.work }))
        .await;
    assert!(at.is_ok(), "plumbing is served on the socket: {at:?}");

    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": ask["ask"], "decision": "allow" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;

    // vyred served the tools itself: the session runs no `vyre mcp` helper of the plugin's.
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let sids: Vec<i32> = pids["sids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_i64().unwrap() as i32)
        .collect();
    assert!(!sids.is_empty(), "{pids}");
    let mut plugins = vec![];
    for sid in sids {
        for pid in vyre::modules::sessions::spawn::session_members(sid) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            assert!(
                !args.windows(2).any(|w| w[1] == b"mcp"),
                "a helper runs in the session: {}",
                String::from_utf8_lossy(&cmdline)
            );
            plugins.extend(args.iter().filter_map(|a| {
                let a = String::from_utf8_lossy(a);
                a.strip_prefix("--plugin-dir=")
                    .map(std::path::PathBuf::from)
            }));
        }
    }
    // It loaded the plugin's hosted part (the commands above are its): no command hooks, so
    // Claude Code starts no shell at a prompt, a tool call or a turn's end.
    assert!(!plugins.is_empty(), "{pids}");
    for plugin in plugins {
        assert!(plugin.ends_with("harness/hosted"), "{}", plugin.display());
        assert!(!plugin.join("hooks").exists() && !plugin.join(".mcp.json").exists());
    }

    // What the model saw: Vyre's tools but no person's, and the tool's answer from vyred.
    let requests = r.api.message_requests();
    // The CLI defers MCP tools behind its tool search and names them in the conversation.
    let whole = requests.last().unwrap().body.to_string();
    assert!(whole.contains(&format!("{SERVER}threads_list")));
    assert!(whole.contains(&format!("{SERVER}recall_search")));
    assert!(!whole.contains(&format!("{SERVER}vault_put")));
    assert!(!whole.contains(&format!("{SERVER}threads_answer")));
    // Nor Vyre's plumbing, which its hooks and CLI call on its socket (still served there).
    for plumbing in [
        "harness_hook",
        "threads_take_held",
        "projects_at",
        "sessions_slots_take",
    ] {
        assert!(
            !whole.contains(&format!("{SERVER}{plumbing}")),
            "{plumbing}"
        );
    }
    let last = requests.last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("roots"),
        "the tool's answer reached the model: {last}"
    );

    // A person-only tool is not callable: the CLI has no such tool.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": format!("CALLTOOL {SERVER}vault_put {{\"name\":\"x\",\"value\":\"y\"}}") }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(of_type(&events, "ask.raised").is_empty());
    let last = r.api.message_requests().last().unwrap().body["messages"].to_string();
    assert!(last.contains("No such tool available"), "{last}");
    // Nor is Vyre's plumbing: a model steered to take the words held for the session, or to
    // answer a hook itself, finds no such tool.
    for call in [
        format!("CALLTOOL {SERVER}threads_take_held {{\"thread\":\"{thread}\"}}"),
        format!("CALLTOOL {SERVER}harness_hook {{\"event\":\"Stop\",\"input\":{{}}}}"),
    ] {
        r.sock
            .call("threads.send", &json!({ "thread": thread, "text": call }))
            .await
            .unwrap();
        let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
        assert!(of_type(&events, "ask.raised").is_empty(), "{call}");
        let last = r.api.message_requests().last().unwrap().body["messages"].to_string();
        assert!(last.contains("No such tool available"), "{call}: {last}");
    }
    let items = r.sock.call("vault.list", &json!({})).await.unwrap();
    assert_eq!(
        items.as_array().unwrap().len(),
        1,
        "only the test's own key"
    );

    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || !socket.exists()),
        "the session's socket goes with it"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_owned_sessions_hooks_are_answered_by_vyred_and_the_floor_still_holds() {
    // The `vyre` the plugin's hooks run writes down each time it is run, then is this build's.
    let shim = std::env::temp_dir().join(format!("vyre-hooks-shim-{}", std::process::id()));
    std::fs::create_dir_all(&shim).unwrap();
    let log = shim.join("ran.log");
    let vyre = shim.join("vyre");
    std::fs::write(
        &vyre,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            BIN
        ),
    )
    .unwrap();
    std::fs::set_permissions(&vyre, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let r = rig_running("mcp-hooks", json!({}), Some(vyre.clone()), json!({})).await;
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,harness.*", None)
        .await
        .unwrap();
    // A session gone wrong tries what the floor refuses.
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "RUNBASH mkfs.ext4 /dev/vyre-none" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        of_type(&events, "ask.raised").is_empty(),
        "refused before anyone is asked: {events:?}"
    );
    let last = r.api.message_requests().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("PreToolUse:Bash hook error") && last.contains("the floor refuses it"),
        "the harness's PreToolUse refused it, and the model read why: {last}"
    );
    // SessionStart's binding was vyred's too, at the first prompt, to the session's own
    // Claude Code process.
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let pids = pids["pids"].as_array().unwrap();
    assert!(
        of_type(&events, "harness.bound")
            .iter()
            .any(|e| e["payload"]["session"] == thread.as_str()
                && pids.contains(&e["payload"]["pid"])),
        "{events:?} {pids:?}"
    );
    // And it reads as alive while the session runs, though vyred names its sandbox.
    let binding = r
        .sock
        .call("harness.binding", &json!({ "session": thread }))
        .await
        .unwrap();
    assert_eq!(binding["alive"], true, "{binding}");
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        ran, "",
        "no hook ran a `vyre` process: the start, the prompt, the tool call and the turn's end were answered by vyred"
    );
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    r.vyred.stop().await;
    let _ = std::fs::remove_dir_all(&shim);
}
