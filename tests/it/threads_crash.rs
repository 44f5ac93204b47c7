//! vyred killed with `kill -9` in the middle of a turn on the real CLI: the session's processes
//! do not outlive it, the restarted vyred ends the turn and the thread with reason `restart`,
//! and the next send resumes the same thread on its transcript.

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use crate::claude_e2e::claude_bin;
use crate::fake_api::FakeApi;
use crate::support::*;
use crate::threads_e2e::{events_until, grant_key, of_type};

/// Kills a process group when dropped, so a failing test leaves nothing running.
struct Reaper(i32);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(-self.0), Signal::SIGKILL);
    }
}

fn group_alive(pgid: i32) -> bool {
    kill(Pid::from_raw(-pgid), None).is_ok()
}

#[test]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
fn after_a_kill_9_mid_turn_nothing_is_orphaned_and_the_thread_resumes() {
    let bin = claude_bin();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let api = rt.block_on(FakeApi::start());
    let home = TempHome::new("threads-kill9");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "sessions": { "claude": bin, "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();

    let mut vyred = home.spawn_daemon();
    let sock = home.socket_client();
    let (thread, pgid) = rt.block_on(async {
        grant_key(&sock).await;
        let mut stream = sock.events("types=thread.*", None).await.unwrap();
        let thread = sock
            .call(
                "threads.start",
                &json!({ "cwd": work, "text": "SLOWLY tell a long story" }),
            )
            .await
            .unwrap()["thread"]
            .as_str()
            .unwrap()
            .to_string();
        // Mid-turn: the reply is streaming.
        events_until(&mut stream, |e| e["type"] == "thread.text").await;
        let pids = sock.call("threads.pids", &json!({})).await.unwrap();
        (thread, pids["pgids"][0].as_i64().unwrap() as i32)
    });
    let _reaper = Reaper(pgid);
    assert!(group_alive(pgid));
    vyred.signal(Signal::SIGKILL);
    vyred.wait(Duration::from_secs(10));
    assert!(
        wait_until(Duration::from_secs(15), || !group_alive(pgid)),
        "the session's process group outlived vyred"
    );

    let _vyred = home.spawn_daemon();
    rt.block_on(async {
        let mut past = sock
            .events(&format!("since=0&follow=false&thread={thread}"), None)
            .await
            .unwrap();
        let mut events = vec![];
        while let Some(Ok(m)) = past.next().await {
            events.push(serde_json::from_str::<serde_json::Value>(&m.data).unwrap());
        }
        let finished = of_type(&events, "thread.finished");
        assert_eq!(finished.len(), 1, "the killed turn ended once");
        assert_eq!(finished[0]["payload"]["reason"], "restart");
        let stopped = of_type(&events, "thread.stopped");
        assert_eq!(stopped.len(), 1);
        assert_eq!(stopped[0]["payload"]["reason"], "restart");

        let mut stream = sock.events("types=thread.*", None).await.unwrap();
        let sent = sock
            .call(
                "threads.send",
                &json!({ "thread": thread, "text": "are you back?" }),
            )
            .await
            .unwrap();
        assert_eq!(sent["via"], "turn");
        let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
        assert_eq!(
            of_type(&events, "thread.started")[0]["payload"]["resumed"],
            true
        );
        assert_eq!(
            of_type(&events, "thread.finished")[0]["payload"]["ok"],
            true
        );
        assert_eq!(
            of_type(&events, "thread.turn")[0]["payload"]["turn"],
            format!("{thread}:2")
        );
        let last = api.message_requests().last().unwrap().body.to_string();
        assert!(
            last.contains("tell a long story") && last.contains("are you back?"),
            "the same conversation"
        );
    });
}

/// A stand-in CLI that ignores its stdin closing and every catchable signal: a process that
/// would outlive a vyred killed with `kill -9`.
const STUBBORN_CLI: &str = r#"#!/bin/sh
if [ "$1" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi
trap '' HUP INT PIPE TERM
read line
echo '{"type":"control_response","response":{"subtype":"success","request_id":"vyre-1","response":{}}}'
exec 0</dev/null
while true; do sleep 0.2; done
"#;

/// A home whose sessions run [`STUBBORN_CLI`], a runtime for the test's calls, and a folder.
fn stubborn_rig(name: &str) -> (tokio::runtime::Runtime, TempHome, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let home = TempHome::new(name);
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let script = home.dir.join("stubborn-claude");
    std::fs::write(&script, STUBBORN_CLI).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = json!({ "sessions": { "claude": script, "home": home.dir.join("home"), "auth": "login", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    (rt, home, work)
}

#[test]
fn a_session_process_that_outlives_a_killed_vyred_is_ended_when_vyred_starts_again() {
    let (rt, home, work) = stubborn_rig("threads-stubborn");

    let mut vyred = home.spawn_daemon();
    let sock = home.socket_client();
    let pgid = rt.block_on(async {
        sock.call("threads.start", &json!({ "cwd": work }))
            .await
            .unwrap();
        let pids = sock.call("threads.pids", &json!({})).await.unwrap();
        pids["pgids"][0].as_i64().unwrap() as i32
    });
    // Whatever happens below, the stand-in does not outlive the test.
    let _reaper = Reaper(pgid);
    vyred.signal(Signal::SIGKILL);
    vyred.wait(Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500));
    assert!(group_alive(pgid), "the stand-in outlived vyred, as meant");

    let _vyred = home.spawn_daemon();
    assert!(
        wait_until(Duration::from_secs(10), || !group_alive(pgid)),
        "the new vyred ended what the old one left"
    );
}

/// A thread whose row already said `stopped` when vyred died (killed between the row's change
/// and its processes' end, or a detached command of its session): the new vyred ends what
/// carries its tag too, not only what its live rows name.
#[test]
fn a_process_of_a_thread_stopped_when_vyred_died_is_ended_when_vyred_starts_again() {
    let (rt, home, work) = stubborn_rig("threads-stopped-left");

    let mut vyred = home.spawn_daemon();
    let sock = home.socket_client();
    let (thread, pgid) = rt.block_on(async {
        let started = sock
            .call("threads.start", &json!({ "cwd": work }))
            .await
            .unwrap();
        let pids = sock.call("threads.pids", &json!({})).await.unwrap();
        (
            started["thread"].as_str().unwrap().to_string(),
            pids["pgids"][0].as_i64().unwrap() as i32,
        )
    });
    let _reaper = Reaper(pgid);
    // Another vyre's session's process (a tag this store never made) is not this vyred's.
    let mut stranger = std::process::Command::new("sleep")
        .arg("60")
        .env("VYRE_THREAD", "not-a-thread-of-this-store")
        .spawn()
        .unwrap();
    vyred.signal(Signal::SIGKILL);
    vyred.wait(Duration::from_secs(10));
    let conn = rusqlite::Connection::open(home.vyre_home().join("vyre.db")).unwrap();
    conn.execute(
        "UPDATE threads_runs SET status = 'stopped', stopped_reason = 'stopped' WHERE id = ?1",
        [&thread],
    )
    .unwrap();
    drop(conn);
    assert!(group_alive(pgid), "the stand-in outlived vyred, as meant");

    let _vyred = home.spawn_daemon();
    assert!(
        wait_until(Duration::from_secs(10), || !group_alive(pgid)),
        "the new vyred ended the stopped thread's process"
    );
    assert!(
        stranger.try_wait().unwrap().is_none(),
        "a process another store's thread tagged runs on"
    );
    let _ = stranger.kill();
    let _ = stranger.wait();
}
