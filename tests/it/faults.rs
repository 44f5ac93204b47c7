//! Faults from outside vyred: the Claude Code CLI killed mid-turn, the Messages API answering
//! 500, 529 and 429 (and a subscription's limit, with the fallback to the API key), the store's
//! disk filling up, and an event stream whose client stops reading.

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::claude_e2e::claude_bin;
use crate::fake_api::FakeApi;
use crate::support::*;
use crate::threads_e2e::{KEY, Rig, events_until, of_type, rig, start_thread};

/// A send that makes a new turn; the events until that turn's `thread.finished`.
async fn turn(
    r: &Rig,
    stream: &mut vyre::surfaces::client::EventStream,
    thread: &str,
    text: &str,
) -> Vec<Value> {
    let sent = r
        .sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap_or_else(|e| panic!("{text}: the send was refused: {e}"));
    assert_eq!(sent["via"], "turn", "{text}: {sent}");
    events_until(stream, |e| e["type"] == "thread.finished").await
}

/// Every process of session `sid`, from `/proc/<pid>/stat`.
pub(crate) fn in_session(sid: i32) -> Vec<i32> {
    let mut found = vec![];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // After the command's closing parenthesis: state, ppid, pgrp, session.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        if fields.get(3).and_then(|s| s.parse::<i32>().ok()) == Some(sid)
            && fields.first() != Some(&"Z")
        {
            found.push(pid);
        }
    }
    found
}

/// How many Messages requests carried `word`.
fn asked(api: &FakeApi, word: &str) -> usize {
    api.message_requests()
        .iter()
        .filter(|q| q.body["messages"].to_string().contains(word))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_cli_killed_mid_turn_ends_the_turn_clearly_and_the_thread_goes_on() {
    let r = rig("faults-cli-killed").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "SLOWLY tell a long story" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| e["type"] == "thread.text").await;
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let sid = pids["sids"][0].as_i64().unwrap() as i32;
    // Every process of the session, as the OOM killer or a `kill -9` would: under tini the CLI
    // leads a process group of its own inside the session, so the session is what holds it all.
    let members = in_session(sid);
    assert!(members.len() > 1, "the CLI and what it runs: {members:?}");
    for pid in members {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }

    let events = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    let finished = of_type(&events, "thread.finished");
    assert_eq!(finished.len(), 1, "the turn ends once: {events:?}");
    assert_eq!(finished[0]["payload"]["ok"], false);
    assert_eq!(finished[0]["payload"]["turn"], format!("{thread}:1"));
    let error = finished[0]["payload"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("signal 9"), "the turn says why: {error}");
    let failed: Vec<&Value> = of_type(&events, "thread.state")
        .into_iter()
        .filter(|e| e["payload"]["state"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(
        failed[0]["payload"]["error"]
            .as_str()
            .unwrap()
            .contains("signal 9")
    );
    assert_eq!(
        events.last().unwrap()["payload"]["reason"],
        "exited by signal 9"
    );
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    assert!(pids["pgids"].as_array().unwrap().is_empty(), "{pids}");

    // The thread goes on: the next send starts its session again (resumed on its transcript,
    // or afresh under the same id when the CLI died before writing one).
    let events = turn(&r, &mut stream, &thread, "are you back?").await;
    assert_eq!(of_type(&events, "thread.started").len(), 1, "{events:?}");
    assert_eq!(
        of_type(&events, "thread.turn")[0]["payload"]["turn"],
        format!("{thread}:2")
    );
    assert_eq!(events.last().unwrap()["payload"]["ok"], true);
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [are you back?]"), "{text}");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn api_errors_are_retried_by_the_cli_and_a_lasting_one_fails_the_turn_clearly() {
    let r = rig("faults-api-errors").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.state" && e["payload"]["state"] == "idle"
    })
    .await;

    // Passing faults: the CLI retries, says so, and the turn succeeds.
    for (word, status) in [("FAIL500 1", 500), ("OVERLOADED 2", 529)] {
        let text = format!("{word} passing");
        let events = turn(&r, &mut stream, &thread, &text).await;
        let finished = events.last().unwrap();
        assert_eq!(finished["payload"]["ok"], true, "{word}: {events:?}");
        let tries = word.split(' ').nth(1).unwrap().parse::<usize>().unwrap();
        assert_eq!(
            asked(&r.api, &text),
            tries + 1,
            "{word}: retried by the CLI"
        );
        let retries = of_type(&events, "thread.retry");
        assert_eq!(
            retries.len(),
            tries,
            "{word}: each retry is said: {events:?}"
        );
        assert_eq!(retries[0]["payload"]["status"], status);
        assert_eq!(retries[0]["payload"]["attempt"], 1);
        assert!(retries[0]["payload"]["max_retries"].as_u64().unwrap() >= 1);
    }

    // Lasting faults (the API says not to retry): the turn fails and says why; the thread lives.
    for (word, says) in [
        ("FAIL500 always", "500"),
        ("OVERLOADED always", "Overloaded"),
    ] {
        let text = format!("{word} lasting");
        let events = turn(&r, &mut stream, &thread, &text).await;
        let finished = events.last().unwrap();
        assert_eq!(finished["payload"]["ok"], false, "{word}: {events:?}");
        let error = finished["payload"]["error"].as_str().unwrap_or_default();
        assert!(error.contains(says), "{word}: {error}");
        assert!(
            of_type(&events, "thread.limit").is_empty(),
            "{word}: not a limit"
        );
    }
    let events = turn(&r, &mut stream, &thread, "still here?").await;
    assert_eq!(events.last().unwrap()["payload"]["ok"], true);
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        (got["live"].as_bool(), got["turns"].as_i64()),
        (Some(true), Some(5))
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_api_rate_limit_is_a_thread_limit_and_no_fallback_on_the_api_key() {
    let r = rig("faults-rate-limit").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.state" && e["payload"]["state"] == "idle"
    })
    .await;

    let events = turn(&r, &mut stream, &thread, "RATELIMIT 1 soon over").await;
    assert_eq!(events.last().unwrap()["payload"]["ok"], true, "{events:?}");
    let limits = of_type(&events, "thread.limit");
    assert_eq!(limits.len(), 1, "{events:?}");
    assert_eq!(limits[0]["payload"]["info"]["status"], 429);
    assert_eq!(limits[0]["payload"]["turn"], format!("{thread}:1"));

    let events = turn(&r, &mut stream, &thread, "RATELIMIT always for good").await;
    let finished = events.last().unwrap();
    assert_eq!(finished["payload"]["ok"], false, "{events:?}");
    assert!(
        finished["payload"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("429"),
        "{finished}"
    );
    assert_eq!(of_type(&events, "thread.limit").len(), 1, "{events:?}");
    // Already on the API key: there is nothing to fall back to, and nothing runs again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        (got["live"].as_bool(), got["turns"].as_i64()),
        (Some(true), Some(2)),
        "{got}"
    );
    let log = r
        .sock
        .events(&format!("since=0&follow=false&thread={thread}"), None)
        .await
        .unwrap();
    let all = drain(log).await;
    assert!(of_type(&all, "thread.fallback").is_empty());
    r.vyred.stop().await;
}

async fn drain(mut stream: vyre::surfaces::client::EventStream) -> Vec<Value> {
    let mut out = vec![];
    while let Some(Ok(m)) = stream.next().await {
        out.push(serde_json::from_str(&m.data).unwrap());
    }
    out
}

/// A vyred whose sessions sign in with a subscription token (the vault's
/// `claude-setup-token`), with the API key beside it granted to sessions when `key`.
pub(crate) async fn subscription_rig(
    name: &str,
    key: bool,
) -> (TempHome, FakeApi, InProcess, Client, std::path::PathBuf) {
    let bin = claude_bin();
    let home = TempHome::new(name);
    let api = FakeApi::start().await;
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "sessions": { "claude": bin, "base_url": api.url(), "home": home.dir.join("home"), "auth": "setup-token", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let mut items = vec![(
        "claude-setup-token",
        "sk-ant-oat01-fake-subscription-token-55555555",
    )];
    if key {
        items.push(("anthropic-api-key", KEY));
    }
    for (item, value) in items {
        sock.call("vault.put", &json!({ "name": item, "value": value }))
            .await
            .unwrap();
        sock.call("vault.grant", &json!({ "item": item, "to": "sessions" }))
            .await
            .unwrap();
    }
    (home, api, vyred, sock, work)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn at_the_subscriptions_limit_the_real_cli_falls_back_to_the_api_key() {
    let (_home, api, vyred, sock, work) = subscription_rig("faults-sublimit", true).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "text": "SUBLIMIT the report" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let events = events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["payload"]["ok"] == true
    })
    .await;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let started = of_type(&events, "thread.started");
    assert_eq!(started[0]["payload"]["auth"], "setup-token", "{types:?}");
    let limits = of_type(&events, "thread.limit");
    assert_eq!(limits.len(), 1, "{types:?}");
    assert_eq!(
        limits[0]["payload"]["info"]["rate_limit_info"]["status"],
        "rejected"
    );
    assert_eq!(
        of_type(&events, "thread.fallback")[0]["payload"]["to"],
        "api-key"
    );
    assert_eq!(
        of_type(&events, "thread.stopped")[0]["payload"]["reason"],
        "fallback"
    );
    assert_eq!(started[1]["payload"]["auth"], "api-key", "{types:?}");
    assert_eq!(started[1]["payload"]["resumed"], true);
    let turns = of_type(&events, "thread.turn");
    assert_eq!(
        turns.last().unwrap()["payload"]["text"],
        "SUBLIMIT the report"
    );
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [SUBLIMIT the report]"), "{text}");
    // The subscription's token was refused; the API key was answered.
    let requests = api.message_requests();
    assert_ne!(requests.first().unwrap().api_key.as_deref(), Some(KEY));
    assert_eq!(requests.last().unwrap().api_key.as_deref(), Some(KEY));
    let got = sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["auth"], "api-key");
    // The meter says it: the five-hour window refused, the thread on the API key until then.
    let mut limits = json!(null);
    for _ in 0..50 {
        limits = sock.call("usage.limits", &json!({})).await.unwrap();
        if !limits["fallback"].is_null() && limits["windows"][0]["status"] == "rejected" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(limits["windows"][0]["kind"], "five_hour", "{limits}");
    assert_eq!(limits["windows"][0]["status"], "rejected", "{limits}");
    assert_eq!(limits["fallback"]["thread"], thread.as_str(), "{limits}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn at_the_subscriptions_limit_without_an_api_key_the_thread_says_so_and_waits() {
    let (_home, _api, vyred, sock, work) = subscription_rig("faults-sublimit-nokey", false).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    sock.call(
        "threads.start",
        &json!({ "cwd": work, "text": "SUBLIMIT the report" }),
    )
    .await
    .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.notice").await;
    let finished = of_type(&events, "thread.finished");
    assert_eq!(finished.len(), 1, "{events:?}");
    assert_eq!(finished[0]["payload"]["ok"], false);
    assert!(
        finished[0]["payload"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("limit"),
        "{finished:?}"
    );
    assert_eq!(of_type(&events, "thread.limit").len(), 1);
    let notice = events.last().unwrap()["payload"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(notice.contains("no API key may take over"), "{notice}");
    assert!(of_type(&events, "thread.fallback").is_empty());
    vyred.stop().await;
}

/// A small tmpfs mounted over a folder, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    /// `None` (and why, on stderr) where this process may not mount.
    fn mount(at: &std::path::Path, size: &str) -> Option<Tmpfs> {
        if !nix::unistd::Uid::effective().is_root() {
            eprintln!(
                "skipped: the disk-full test mounts a small tmpfs and needs root (CI runs as root)"
            );
            return None;
        }
        std::fs::create_dir_all(at).unwrap();
        let out = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(at)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(at.to_path_buf())),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs here: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Fill the file system holding `path` with one file until it refuses more.
fn fill(path: &std::path::Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5a_u8; 16 * 1024];
    loop {
        if let Err(e) = f.write_all(&chunk) {
            assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
            break;
        }
    }
    // Whatever is left is smaller than a chunk; take it too.
    for _ in 0..chunk.len() {
        if f.write_all(&[0]).is_err() {
            break;
        }
    }
    let _ = f.sync_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_a_clear_error_corrupts_nothing_and_passes_when_space_returns() {
    let home = TempHome::new("faults-disk-full");
    let Some(_mount) = Tmpfs::mount(&home.vyre_home(), "8m") else {
        return;
    };
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    let note = |i: usize| json!({ "text": format!("{i:05} {}", "n".repeat(16 * 1024)) });
    let mut kept: Vec<i64> = vec![];
    for i in 0..10 {
        kept.push(
            sock.call("probe.note", &note(i))
                .await
                .unwrap()
                .as_i64()
                .unwrap(),
        );
    }

    let filler = home.vyre_home().join("filler");
    fill(&filler);
    let mut refused = None;
    for i in 10..2000 {
        match sock.call("probe.note", &note(i)).await {
            Ok(id) => kept.push(id.as_i64().unwrap()),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let refused = refused.expect("a full disk refuses writes");
    assert_eq!(refused.code(), Some("disk_full"), "{refused}");
    assert!(refused.to_string().contains("disk"), "{refused}");
    // vyred still answers, reads still work, and a refused write left nothing behind.
    sock.get("/v1/health").await.unwrap();
    let notes = sock.call("probe.notes", &json!({})).await.unwrap();
    assert_eq!(notes.as_array().unwrap().len(), kept.len());
    for _ in 0..5 {
        let err = sock.call("probe.note", &note(9999)).await.unwrap_err();
        assert_eq!(err.code(), Some("disk_full"), "{err}");
    }

    // Space returns: writes pass again, with no restart.
    std::fs::remove_file(&filler).unwrap();
    for i in 3000..3010 {
        kept.push(
            sock.call("probe.note", &note(i))
                .await
                .unwrap()
                .as_i64()
                .unwrap(),
        );
    }
    let emitted = sock.call("probe.emit", &json!({ "n": 3 })).await.unwrap();
    assert_eq!(emitted.as_array().unwrap().len(), 3);
    vyred.stop().await;

    // Every note that was answered is there with its one event, and nothing else is.
    let db = home.vyre_home().join("vyre.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let mut stmt = conn
        .prepare("SELECT id FROM probe_notes ORDER BY id")
        .unwrap();
    let rows: Vec<i64> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, kept);
    let events = stored_events(&db);
    let mut told: Vec<i64> = events
        .iter()
        .filter(|(_, kind, p)| kind == "probe.pinged" && p["note"].is_i64())
        .map(|(.., p)| p["note"].as_i64().unwrap())
        .collect();
    told.sort();
    assert_eq!(told, kept, "each kept note has exactly one event");
}

fn rss_kb(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn a_client_that_stops_reading_its_events_neither_grows_vyred_nor_holds_up_others() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let home = TempHome::new("faults-stalled-client");
    let vyred = home.spawn_daemon();
    let sock = home.socket_client();
    // Events of about 16 KiB each, from outside: a hook's SessionStart says which session it
    // bound, and the session id is the client's to choose.
    let pad = "s".repeat(16 * 1024);
    let bind = |i: usize| {
        let sock = sock.clone();
        let session = format!("{i:06}-{pad}");
        async move {
            sock.call(
                "harness.hook",
                &json!({ "event": "SessionStart", "input": { "session_id": session } }),
            )
            .await
            .unwrap();
        }
    };
    rt.block_on(async {
        let first = sock.call("system.events", &json!({ "limit": 1 })).await;
        let _ = first;
        // The client that stops reading: subscribed to everything, never read until the end.
        let mut stalled = sock.events("types=harness.bound", None).await.unwrap();
        // A client that keeps reading, beside it.
        let mut reader = sock.events("types=harness.bound", None).await.unwrap();
        const WARM: usize = 300;
        const N: usize = 1500;
        let reading = tokio::spawn(async move {
            let mut ids = vec![];
            while ids.len() < WARM + N {
                let m = tokio::time::timeout(Duration::from_secs(120), reader.next())
                    .await
                    .expect("the reading client is not held up")
                    .expect("stream open")
                    .unwrap();
                ids.push(m.id.unwrap().parse::<i64>().unwrap());
            }
            ids
        });
        for i in 0..WARM {
            bind(i).await;
        }
        let before = rss_kb(vyred.pid());
        for i in WARM..WARM + N {
            bind(i).await;
        }
        let ids = tokio::time::timeout(Duration::from_secs(180), reading)
            .await
            .expect("the reading client got everything in time")
            .unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        sock.call("system.status", &json!({})).await.unwrap();
        let after = rss_kb(vyred.pid());
        // What the stalled client may pin: the bus's last batches and one write's worth. Had
        // vyred kept everything it owed that client, it would have grown by more than the
        // events' size (N x 16 KiB = 24 MiB), twice over with their stream text.
        let grown_mb = after.saturating_sub(before) / 1024;
        eprintln!(
            "stalled client: vyred's RSS {before} kB, then {after} kB after {N} events of 16 KiB"
        );
        assert!(
            grown_mb < 48,
            "vyred grew by {grown_mb} MiB while one client did not read"
        );
        // The stalled client, reading at last, gets every event once and in order.
        let mut got = vec![];
        while got.len() < WARM + N {
            let m = tokio::time::timeout(Duration::from_secs(120), stalled.next())
                .await
                .expect("the stalled stream still flows")
                .expect("stream open")
                .unwrap();
            got.push(m.id.unwrap().parse::<i64>().unwrap());
        }
        assert_eq!(got, ids, "every event, once, in order");
    });
    drop(vyred);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_send_on_a_full_disk_is_refused_before_the_session_has_it_and_goes_through_after() {
    let bin = claude_bin();
    let home = TempHome::new("faults-disk-full-send");
    let Some(_mount) = Tmpfs::mount(&home.vyre_home(), "16m") else {
        return;
    };
    let api = FakeApi::start().await;
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let config = json!({ "sessions": { "claude": bin, "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    crate::threads_e2e::grant_key(&sock).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "text": "first words" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| {
        e["type"] == "thread.state"
            && e["payload"]["state"] == "idle"
            && e["payload"]["turn"].is_string()
    })
    .await;

    // The disk fills up, to the last page the store could use.
    let filler = home.vyre_home().join("filler");
    fill(&filler);
    for i in 0..2000 {
        let note = json!({ "text": format!("{i} {}", "n".repeat(8 * 1024)) });
        if sock.call("probe.note", &note).await.is_err() {
            break;
        }
    }
    let asked_before = api.message_requests().len();
    let err = sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "lost words?" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("disk_full"), "{err}");
    assert_eq!(
        api.message_requests().len(),
        asked_before,
        "the session never had them"
    );
    let got = sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        (got["live"].as_bool(), got["turns"].as_i64()),
        (Some(true), Some(1)),
        "{got}"
    );

    // Space returns: the same words go through, as one turn.
    std::fs::remove_file(&filler).unwrap();
    let sent = sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "lost words?" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "turn");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let finished = events.last().unwrap();
    assert_eq!(finished["payload"]["ok"], true, "{events:?}");
    assert_eq!(finished["payload"]["turn"], format!("{thread}:2"));
    vyred.stop().await;
}
