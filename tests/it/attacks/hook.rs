//! The floor's hook fails closed: a session whose own vyred refuses or cannot be reached is denied, not waved through.
//!
//! `vyre hook PreToolUse` is the floor's hook in every session. Where a session has a socket of
//! its own (`VYRE_SOCKET`), vyred is there to check the call, so any failure to get its answer (a
//! refusal, nobody listening, no answer in time) must deny; a terminal session without Vyre
//! (no `VYRE_SOCKET`, vyred down) is left alone, as are the other hooks. On the box, sessions
//! run as their own user: that user reaches its session's socket, and no other user does.

use std::io::{BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use axum::Json;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::mcp::McpChild;
use crate::support::*;

/// The uid and gid box sessions run as in these tests (`nobody`), and a uid that is not theirs.
const SESSIONS: u32 = 65534;
const STRANGER: u32 = 65533;

/// What "Vyre could not check the call" says in a deny's reason.
const UNCHECKED: &str = "Vyre could not check this call";

/// The plugin's timeout for its hooks (harness/hooks/hooks.json): past it, Claude Code gives up
/// on the hook and runs the tool, so a deny must come well before.
const PLUGIN_TIMEOUT: Duration = Duration::from_secs(10);

fn bash(command: &str) -> Value {
    json!({
        "session_id": "11111111-2222-4333-8444-555555555555",
        "hook_event_name": "PreToolUse",
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": { "command": command },
    })
}

struct Ran {
    out: String,
    code: i32,
    took: Duration,
}

impl Ran {
    /// The hook's decision and its reason, when it printed one.
    fn decision(&self) -> Option<(String, String)> {
        let out: Value = serde_json::from_str(self.out.trim()).ok()?;
        let specific = &out["hookSpecificOutput"];
        Some((
            specific["permissionDecision"].as_str()?.to_string(),
            specific["permissionDecisionReason"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        ))
    }
}

/// Who runs the hook: vyred's own user, or another uid and gid.
#[derive(Clone, Copy)]
enum As {
    Vyred,
    User { uid: u32, gid: u32 },
}

/// `vyre hook <event>` with `input` on its stdin, as a session (with `VYRE_SOCKET`) or as a
/// terminal session (without).
fn hook(home: &TempHome, event: &str, socket: Option<&Path>, who: As, input: &Value) -> Ran {
    let mut cmd = home.command();
    cmd.args(["hook", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(socket) = socket {
        cmd.env("VYRE_SOCKET", socket);
    }
    if let As::User { uid, gid } = who {
        cmd.uid(uid).gid(gid);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Ran {
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        code: out.status.code().unwrap_or(-1),
        took: started.elapsed(),
    }
}

fn hook_blocking(
    home: &TempHome,
    event: &str,
    socket: Option<&Path>,
    who: As,
    input: &Value,
) -> Ran {
    tokio::task::block_in_place(|| hook(home, event, socket, who, input))
}

fn assert_unchecked_deny(ran: &Ran, what: &str) {
    assert_eq!(ran.code, 0, "{what}: exit {}", ran.code);
    let (decision, reason) = ran
        .decision()
        .unwrap_or_else(|| panic!("{what}: no decision printed: {:?}", ran.out));
    assert_eq!(decision, "deny", "{what}: {}", ran.out);
    assert!(reason.contains(UNCHECKED), "{what}: {reason}");
}

/// A socket whose server refuses every request as vyred refuses a foreign user.
fn refusing_socket(path: &Path) -> tokio::task::JoinHandle<()> {
    let listener = tokio::net::UnixListener::bind(path).unwrap();
    let app = axum::Router::new().fallback(|| async {
        (
            StatusCode::FORBIDDEN,
            Json(json!({ "error": { "code": "foreign_user", "message": "only vyred's own user may use a session's socket" } })),
        )
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    })
}

/// A socket whose server takes connections and never answers.
fn silent_socket(path: &Path) -> tokio::task::JoinHandle<()> {
    let listener = tokio::net::UnixListener::bind(path).unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    })
}

/// A socket file nobody listens on any more (vyred gone, its file left behind).
fn stale_socket(path: &Path) {
    drop(std::os::unix::net::UnixListener::bind(path).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_hook_denies_when_its_vyred_refuses_or_is_not_there() {
    let home = TempHome::new("hook-refused");
    let refusing = home.dir.join("refusing.sock");
    let stale = home.dir.join("stale.sock");
    let missing = home.dir.join("missing.sock");
    let server = refusing_socket(&refusing);
    stale_socket(&stale);

    for (socket, why) in [
        (&refusing, "vyred answers 403"),
        (&stale, "nobody listens on the socket"),
        (&missing, "no socket at all"),
    ] {
        for command in ["ls", "rm -rf /"] {
            let ran = hook_blocking(&home, "PreToolUse", Some(socket), As::Vyred, &bash(command));
            assert_unchecked_deny(&ran, &format!("{command:?} when {why}"));
        }
    }
    // The refusal's own words reach the reason, so the model and the person see why.
    let ran = hook_blocking(&home, "PreToolUse", Some(&refusing), As::Vyred, &bash("ls"));
    let (_, reason) = ran.decision().unwrap();
    assert!(reason.contains("foreign_user"), "{reason}");

    // The other hooks add context or hand over words: without vyred they stay out of the way.
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        let input =
            json!({ "session_id": "s", "hook_event_name": event, "cwd": "/tmp", "prompt": "hi" });
        for socket in [&refusing, &stale, &missing] {
            let ran = hook_blocking(&home, event, Some(socket), As::Vyred, &input);
            assert_eq!((ran.code, ran.out.trim()), (0, ""), "{event} at {socket:?}");
        }
    }
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_hook_denies_when_its_vyred_does_not_answer_in_time() {
    let home = TempHome::new("hook-silent");
    let silent = home.dir.join("silent.sock");
    let server = silent_socket(&silent);
    let ran = hook_blocking(&home, "PreToolUse", Some(&silent), As::Vyred, &bash("ls"));
    assert_unchecked_deny(&ran, "vyred never answers");
    assert!(
        ran.took < PLUGIN_TIMEOUT - Duration::from_secs(2),
        "the deny came after {:?}, too close to the plugin's timeout, where Claude Code runs the tool anyway",
        ran.took
    );
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floors_deny_comes_from_vyred_and_a_terminal_without_vyre_is_left_alone() {
    let home = TempHome::new("hook-floor");
    let vyred = InProcess::start(&home, vec![]).await;
    let socket = vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .open("t-hook-floor")
        .unwrap()
        .expect("a short enough path");
    let ran = hook_blocking(
        &home,
        "PreToolUse",
        Some(&socket),
        As::Vyred,
        &bash("rm -rf /"),
    );
    let (decision, reason) = ran.decision().expect("the floor's deny");
    assert_eq!(decision, "deny");
    assert!(reason.contains("the floor refuses it"), "{reason}");
    assert!(!reason.contains(UNCHECKED), "{reason}");
    let ran = hook_blocking(&home, "PreToolUse", Some(&socket), As::Vyred, &bash("ls"));
    assert_eq!(
        (ran.code, ran.out.trim()),
        (0, ""),
        "what the floor allows goes on"
    );
    vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .close("t-hook-floor");
    vyred.stop().await;

    // A terminal session (no socket of its own) with vyred down behaves as without Vyre.
    for command in ["ls", "rm -rf /"] {
        let ran = hook_blocking(&home, "PreToolUse", None, As::Vyred, &bash(command));
        assert_eq!((ran.code, ran.out.trim()), (0, ""), "{command}");
    }
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `vyre mcp` as `who` on `socket`: the tools it lists and the answer to `recall_status`.
fn mcp_as(home: &TempHome, socket: &Path, who: As) -> (Vec<String>, Value) {
    let mut cmd = home.command();
    cmd.arg("mcp")
        .env("VYRE_SOCKET", socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let As::User { uid, gid } = who {
        cmd.uid(uid).gid(gid);
    }
    let mut child = cmd.spawn().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut mcp = McpChild { child, out };
    mcp.request(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "it", "version": "1" } }),
    );
    mcp.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let list = mcp.request(2, "tools/list", json!({}));
    let names = list["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    let called = mcp.request(
        3,
        "tools/call",
        json!({ "name": "recall_status", "arguments": {} }),
    );
    (names, called)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_sessions_user_reaches_its_own_socket_and_no_other_user_does() {
    if !is_root() {
        eprintln!("SKIPPED: running a session's user needs root");
        return;
    }
    let home = TempHome::new("hook-box");
    // As on the box (ADR 0013): sessions as their own uid and gid, their sockets in a folder of
    // that group. The folders above must let that user through to the socket.
    let sockets: PathBuf = home.dir.join("sockets");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        json!({ "sessions": {
            "uid": SESSIONS, "gid": SESSIONS,
            "socket_dir": sockets, "home": home.dir.join("home"),
        } })
        .to_string(),
    )
    .unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let socket = vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .open("t-box")
        .unwrap()
        .expect("a short enough path");
    let session = As::User {
        uid: SESSIONS,
        gid: SESSIONS,
    };
    // What the session runs is in its process group (the hooks and `vyre mcp` below are
    // children of this test, as they are of the session's CLI on the box).
    let pgid = nix::unistd::getpgrp().as_raw();
    vyred
        .kernel
        .session_processes()
        .register("t-box", pgid, pgid);

    // The session's own user: the floor's deny from vyred, Vyre's tools over MCP.
    let ran = hook_blocking(
        &home,
        "PreToolUse",
        Some(&socket),
        session,
        &bash("rm -rf /"),
    );
    let (decision, reason) = ran.decision().expect("a decision");
    assert_eq!(decision, "deny");
    assert!(reason.contains("the floor refuses it"), "{reason}");
    let ran = hook_blocking(&home, "PreToolUse", Some(&socket), session, &bash("ls"));
    assert_eq!((ran.code, ran.out.trim()), (0, ""));
    let (names, called) = tokio::task::block_in_place(|| mcp_as(&home, &socket, session));
    assert!(
        names.iter().any(|n| n == "recall_search"),
        "the session's user lists Vyre's tools: {names:?}"
    );
    assert_eq!(called["result"]["isError"], false, "{called}");

    // Another user in the sessions' group (so the socket's mode lets it connect) is refused by
    // vyred itself, and its hook denies.
    let stranger = As::User {
        uid: STRANGER,
        gid: SESSIONS,
    };
    let ran = hook_blocking(&home, "PreToolUse", Some(&socket), stranger, &bash("ls"));
    assert_unchecked_deny(&ran, "a stranger on the session's socket");
    assert!(
        ran.decision().unwrap().1.contains("foreign_user"),
        "{}",
        ran.out
    );
    let (names, _) = tokio::task::block_in_place(|| mcp_as(&home, &socket, stranger));
    assert!(names.is_empty(), "a stranger lists no tools: {names:?}");

    // vyred's own socket stays closed to the sessions' user: its hook, as a terminal's would,
    // finds nothing it may use.
    let status = tokio::task::block_in_place(|| {
        home.command()
            .args(["tools", "--json"])
            .uid(SESSIONS)
            .gid(SESSIONS)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    });
    assert!(
        !status.status.success(),
        "the sessions' user used vyred's socket: {}",
        String::from_utf8_lossy(&status.stdout)
    );

    // A process of the sessions' user that is not this session's (another session's, or one
    // that outlived its own) is refused on this socket.
    vyred.kernel.session_processes().unregister("t-box");
    let ran = hook_blocking(&home, "PreToolUse", Some(&socket), session, &bash("ls"));
    assert_unchecked_deny(&ran, "another session's process on the session's socket");
    assert!(
        ran.decision().unwrap().1.contains("not_your_socket"),
        "{}",
        ran.out
    );

    vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .close("t-box");
    vyred.stop().await;
}
