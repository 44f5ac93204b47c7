//! `vyre up` over an older vyred with a thread in flight, on the real Claude Code CLI: the
//! upgrade lets the running turn finish before it restarts vyred onto the new binary (or, with
//! `--wait 0`, stops it), and the thread loses nothing: the whole answer is kept and the next
//! message resumes the same Claude session with the history.
//!
//! The older vyred is this build's binary with its version strings patched to `0.0.0` (as
//! npm/test's upgrade does), run as a child process as `vyre up` would have started it.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::claude_e2e::claude_bin;
use crate::fake_api::FakeApi;
use crate::support::*;
use crate::threads_e2e::{events_until, grant_key};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// This build's `vyre` with every copy of its version string made `0.0.0`-like (same length,
/// digits 0), written into `dir`.
fn older_binary(dir: &Path) -> (PathBuf, String) {
    let old_version: String = VERSION
        .chars()
        .map(|c| if c.is_ascii_digit() { '0' } else { c })
        .collect();
    assert_ne!(old_version, VERSION, "no older version than {VERSION}");
    let mut bytes = std::fs::read(BIN).unwrap();
    let (from, to) = (VERSION.as_bytes(), old_version.as_bytes());
    let mut i = 0;
    let mut patched = 0;
    while let Some(at) = bytes[i..].windows(from.len()).position(|w| w == from) {
        bytes[i + at..i + at + from.len()].copy_from_slice(to);
        i += at + from.len();
        patched += 1;
    }
    assert!(patched > 0);
    let path = dir.join("vyre-old");
    std::fs::write(&path, bytes).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (path, old_version)
}

/// A home whose sessions run the real CLI against `api`, and the older vyred serving it.
async fn older_vyred(name: &str, api: &FakeApi) -> (TempHome, String, PathBuf) {
    let home = TempHome::new(name);
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({
        "sessions": { "claude": claude_bin(), "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key", "spares": 0 }
    });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let (old, old_version) = older_binary(&home.dir);
    // Started as a person started it before the upgrade: `vyre up` of the older version.
    let up = home
        .command_of(&old)
        .arg("up")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        up.status.success(),
        "the older vyre up failed: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    let sock = home.socket_client();
    let health = sock.get("/v1/health").await.unwrap();
    assert_eq!(health["version"], old_version.as_str());
    grant_key(&sock).await;
    (home, old_version, work)
}

/// `vyre up --wait SECONDS` of this build, off the test's runtime; what it said, and whether it
/// succeeded.
async fn vyre_up(home: &TempHome, wait: &str) -> (String, bool) {
    let mut cmd = home.command();
    cmd.args(["up", "--wait", wait]).stdin(Stdio::null());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (text, out.status.success())
}

/// A thread started in `work` with `text` (a SLOWLY prompt: its answer streams for seconds),
/// once its answer has begun.
async fn start_streaming_turn(home: &TempHome, work: &Path, text: &str) -> String {
    let sock = home.socket_client();
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let started = sock
        .call("threads.start", &json!({ "cwd": work, "text": text }))
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    events_until(&mut stream, |e| e["type"] == "thread.text").await;
    thread
}

/// The payloads of the stored events of `kind` (each test runs one thread).
fn payloads(home: &TempHome, kind: &str) -> Vec<Value> {
    stored_events(&home.home().database())
        .into_iter()
        .filter(|(_, k, _)| k == kind)
        .map(|(_, _, p)| p)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_upgrade_lets_the_running_turn_finish_and_the_thread_goes_on_from_its_whole_answer() {
    let api = FakeApi::start().await;
    let (home, old_version, work) = older_vyred("upgrade-drain", &api).await;
    let first = "SLOWLY across the upgrade";
    let thread = start_streaming_turn(&home, &work, first).await;

    // The turn streams for about 4 s; the upgrade waits for it.
    let (said, ok) = vyre_up(&home, "60").await;
    assert!(ok, "vyre up failed: {said}");
    assert!(said.contains("Waiting for 1 turn to finish"), "{said}");
    assert!(said.contains("1 turn finished."), "{said}");
    assert!(
        said.contains(&format!(
            "vyred {old_version} is running from {}; this vyre is {VERSION}",
            home.vyre_home().display()
        )),
        "{said}"
    );
    let sock = home.socket_client();
    let health = sock.get("/v1/health").await.unwrap();
    assert_eq!(health["version"], VERSION);

    // The turn ended as a whole answer before the restart, not cancelled by it.
    let finished = payloads(&home, "thread.finished");
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!(finished[0]["ok"], true, "{finished:?}");
    assert!(finished[0]["canceled"].is_null() || finished[0]["canceled"] == false);
    let stopped = payloads(&home, "thread.stopped");
    assert!(stopped.iter().all(|p| p["reason"] == "restart"));

    // The next message resumes the same Claude session, with the first message and its whole
    // answer in the history the model is sent.
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let sent = sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "after the upgrade" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "turn");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "thread.started" && e["payload"]["resumed"] == true)
    );
    let last = api.message_requests().last().unwrap().body.to_string();
    assert!(last.contains(first), "{last}");
    assert!(last.contains("after the upgrade"), "{last}");
    assert!(
        last.contains(&format!("reply to [{first}]")),
        "the whole answer of the turn in flight is in the history: {last}"
    );
    assert!(home.vyre(&["down"]).status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_upgrade_that_may_not_wait_stops_the_turn_and_the_thread_resumes_with_the_message() {
    let api = FakeApi::start().await;
    let (home, _old, work) = older_vyred("upgrade-now", &api).await;
    let first = "SLOWLY cut short by the upgrade";
    let thread = start_streaming_turn(&home, &work, first).await;

    let (said, ok) = vyre_up(&home, "0").await;
    assert!(ok, "vyre up failed: {said}");
    assert!(
        said.contains(&format!(
            "1 turn still under way ({thread}): the restart stops them"
        )),
        "{said}"
    );
    let finished = payloads(&home, "thread.finished");
    assert!(
        finished.iter().all(|p| p["ok"] != true),
        "the turn was cut short, not finished: {finished:?}"
    );
    let stopped = payloads(&home, "thread.stopped");
    assert!(
        stopped.iter().any(|p| p["reason"] == "restart"),
        "{stopped:?}"
    );

    let sock = home.socket_client();
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    sock.call(
        "threads.send",
        &json!({ "thread": thread, "text": "after the cut" }),
    )
    .await
    .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let last = api.message_requests().last().unwrap().body.to_string();
    assert!(
        last.contains(first) && last.contains("after the cut"),
        "{last}"
    );
    assert!(home.vyre(&["down"]).status.success());
}

/// A store a newer vyre migrated (the person went back to an older version): vyred refuses to
/// start on it with a message that says what and what to do, `vyre up` passes that on and exits
/// non-zero, and the store is left as it was.
#[test]
fn a_store_newer_than_the_binary_is_refused_with_a_clear_message_and_left_alone() {
    let home = TempHome::new("store-newer");
    let mut d = home.spawn_daemon();
    assert!(home.vyre(&["down"]).status.success());
    d.wait(std::time::Duration::from_secs(20));
    let db = home.home().database();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let kernel: u32 = conn
        .query_row(
            "SELECT version FROM kernel_migrations WHERE namespace = 'kernel'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE kernel_migrations SET version = version + 1 WHERE namespace = 'kernel'",
        [],
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();

    let out = home.vyre(&["up"]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "the database has kernel at version {}, newer than this vyred knows ({kernel}); upgrade vyre",
            kernel + 1
        )),
        "{said}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the store is untouched"
    );
    assert!(!home.home().socket().exists());
}
