//! Adopting terminal sessions (ADR 0030 section 10) on the real CLI: a session made by `claude`
//! in a terminal is resumed by a message, in its own folder, with one writer: while a terminal
//! writes it, the message waits and a fork is offered.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::threads_e2e::{KEY, Rig, events_until, of_type, rig};

/// What a person does in a terminal: `claude -p <prompt> --session-id <id>` in a folder.
pub(crate) fn terminal_session(r: &Rig, folder: &Path, id: &str, prompt: &str) {
    std::fs::create_dir_all(folder).unwrap();
    let out = std::process::Command::new(crate::claude_e2e::claude_bin())
        .args(["-p", prompt, "--session-id", id])
        .current_dir(folder)
        .env_clear()
        .env("HOME", r.home.dir.join("home"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("ANTHROPIC_BASE_URL", r.api.url())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Make a transcript look quiet for a minute, as if its terminal turn ended long ago.
pub(crate) fn quiet(r: &Rig, id: &str) {
    let path = vyre::kernel::transcripts::find(&r.home.dir.join("home"), id).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
}

pub(crate) async fn wait_sessions(r: &Rig, n: usize) {
    for _ in 0..400 {
        let s = r.sock.call("recall.status", &json!({})).await.unwrap();
        if s["sessions"] == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("recall did not see {n} sessions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_message_adopts_a_terminal_session_once_the_terminal_lets_go() {
    let r = rig("adopt").await;
    let folder = r.home.dir.join("work/walrus-project");
    let id = "5d9e8a10-1111-4a2b-9c3d-000000000001";
    terminal_session(&r, &folder, id, "walrus facts please");
    wait_sessions(&r, 1).await;
    let catalog = r.sock.call("projects.catalog", &json!({})).await.unwrap();
    assert_eq!(catalog[0]["source"], "terminal");
    assert_eq!(
        catalog[0]["live"], true,
        "just written: live in its terminal"
    );

    // The terminal wrote it a moment ago: the message waits, and a fork is offered.
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let sent = r
        .sock
        .call(
            "threads.send",
            &json!({ "thread": id, "text": "and more walrus" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "queued");
    let events = events_until(&mut stream, |e| e["type"] == "thread.queued").await;
    let queued = &events.last().unwrap()["payload"];
    assert_eq!(queued["reason"], "live in a terminal");
    assert!(queued["fork"].as_str().unwrap().contains("threads.fork"));

    // The terminal is quiet now: Vyre adopts the session and resumes it in its own folder.
    quiet(&r, id);
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let started = &of_type(&events, "thread.started")[0]["payload"];
    assert_eq!(started["resumed"], true);
    assert_eq!(started["cwd"], folder.display().to_string());
    assert_eq!(of_type(&events, "thread.adopted").len(), 1);
    assert_eq!(
        of_type(&events, "thread.turn")[0]["payload"]["text"],
        "and more walrus"
    );
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    let last = r.api.message_requests().last().unwrap().body.to_string();
    assert!(
        last.contains("walrus facts please") && last.contains("and more walrus"),
        "the terminal's conversation goes on"
    );
    let catalog = r.sock.call("projects.catalog", &json!({})).await.unwrap();
    assert_eq!(catalog[0]["thread"], id);
    assert_eq!(catalog[0]["source"], "vyre");

    // A fork of a terminal session runs at once, as a new thread.
    let other = "5d9e8a10-1111-4a2b-9c3d-000000000002";
    terminal_session(&r, &folder, other, "penguin notes");
    wait_sessions(&r, 2).await;
    let fork = r
        .sock
        .call("threads.fork", &json!({ "thread": other }))
        .await
        .unwrap();
    let fork = fork["thread"].as_str().unwrap().to_string();
    assert_ne!(fork, other);
    let events = events_until(&mut stream, |e| {
        e["type"] == "thread.started" && e["thread"] == fork.as_str()
    })
    .await;
    assert_eq!(events.last().unwrap()["payload"]["forked_from"], other);
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_claude_resuming_the_session_in_a_terminal_holds_the_message_until_it_exits() {
    let r = rig("adopt-process").await;
    let folder = r.home.dir.join("work/seal-project");
    let id = "5d9e8a10-1111-4a2b-9c3d-000000000003";
    terminal_session(&r, &folder, id, "seal facts please");
    wait_sessions(&r, 1).await;
    quiet(&r, id);
    // `claude --resume <id>` open in a terminal, idle (a stand-in with the same command line).
    let mut terminal = std::process::Command::new("bash")
        .args(["-c", "sleep 60; true", "claude", "--resume", id])
        .spawn()
        .unwrap();
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let sent = r
        .sock
        .call(
            "threads.send",
            &json!({ "thread": id, "text": "after the terminal" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "queued");
    tokio::time::sleep(Duration::from_secs(6)).await;
    let info: Value = r.sock.call("threads.list", &json!({})).await.unwrap();
    assert!(
        info.as_array().unwrap().iter().all(|t| t["live"] != true),
        "nothing resumed while the terminal has it: {info}"
    );
    terminal.kill().unwrap();
    terminal.wait().unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.turn")[0]["payload"]["text"],
        "after the terminal"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn vyre_resume_hands_an_idle_session_to_the_terminal_and_leaves_a_busy_one_alone() {
    use std::os::unix::fs::PermissionsExt;
    let r = rig("resume-cmd").await;
    // A `claude` on PATH that says what it was asked to do, and where.
    let bin = r.home.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    std::fs::write(&claude, "#!/bin/sh\necho \"claude $* in $(pwd)\"\n").unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let resume = |id: &str| {
        let mut cmd = r.home.command();
        cmd.env("PATH", &path).args(["resume", id]);
        cmd.output().unwrap()
    };

    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "SLOWLY a long answer" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    events_until(&mut stream, |e| e["type"] == "thread.text").await;
    let busy = resume(&thread);
    assert_eq!(busy.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&busy.stderr).contains("vyre threads interrupt"),
        "{}",
        String::from_utf8_lossy(&busy.stderr)
    );
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let out = resume(&thread);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("claude --resume {thread} in {}", r.work.display())
    );
    let info = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(info["live"], false, "handed over: Vyre let go");

    let unknown = resume("no-such-session");
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("projects catalog"));
    r.vyred.stop().await;
}
