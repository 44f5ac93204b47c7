//! Bounded work: slow and idle connections, too many streams, huge queries; every call ends when its client goes or vyred stops.
//!
//! The attackers: a session (or any local process) that opens connections and never finishes
//! them, opens event streams without end, or pastes a page into a search; and a client that
//! starts a long call and goes away. No test here times anything: each asserts that the work
//! ends (or is refused) and that vyred still answers; the benchmark prints the figures.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vyre::modules::{Module, ToolDef};
use vyre::tools::ToolError;

use crate::support::*;

/// A query of about 900 KB: `pasted0 pasted1 ...`, every word distinct.
fn pasted_page() -> String {
    let mut q = String::with_capacity(930_000);
    let mut i = 0;
    while q.len() < 900 * 1024 {
        q.push_str(&format!("pasted{i} "));
        i += 1;
    }
    q
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_900_kb_query_answers_with_its_first_words() {
    let home = TempHome::new("atk-long-query");
    // A turn holding the page's first 64 words, and one holding its 65th too.
    let first: Vec<String> = (0..64).map(|i| format!("pasted{i}")).collect();
    let folder = home.dir.join("home/.claude/projects/-work-a");
    std::fs::create_dir_all(&folder).unwrap();
    for (session, text) in [
        ("s-first", first.join(" ")),
        ("s-other", "nothing pasted here".to_string()),
    ] {
        let line = json!({
            "parentUuid": null, "isSidechain": false, "type": "user",
            "message": { "role": "user", "content": text },
            "uuid": format!("{session}-u1"), "timestamp": "2026-11-01T10:00:00Z",
            "cwd": "/work/a", "sessionId": session, "entrypoint": "cli"
        });
        std::fs::write(folder.join(format!("{session}.jsonl")), format!("{line}\n")).unwrap();
    }
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let deadline = Instant::now() + Duration::from_secs(20);
    while sock.call("recall.status", &json!({})).await.unwrap()["sessions"] != 2 {
        assert!(
            Instant::now() < deadline,
            "the transcripts were not indexed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Every word must match, but only the first 64 distinct ones count: the turn holding
    // exactly those is found, though it holds none of the other 90,000.
    let page = pasted_page();
    let hits = sock
        .call("recall.search", &json!({ "query": page }))
        .await
        .unwrap();
    let threads: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["thread"].as_str().unwrap())
        .collect();
    assert_eq!(threads, vec!["s-first"], "{hits}");
    // Any word, likewise bounded.
    let hits = sock
        .call("recall.search", &json!({ "query": page, "any": true }))
        .await
        .unwrap();
    assert_eq!(hits[0]["thread"], "s-first", "{hits}");
    // And vyred answers the next caller.
    let health = sock.get("/v1/health").await.unwrap();
    assert!(health["version"].is_string(), "{health}");
    vyred.stop().await;
}

/// What the waiter's handlers have done, read by the test in-process.
#[derive(Default)]
struct Waited {
    started: AtomicUsize,
    /// Store reads that ended, and of those the ones SQLite interrupted.
    ended: AtomicUsize,
    interrupted: AtomicUsize,
    /// `waiter.sleep` handlers dropped before they ended.
    dropped: AtomicUsize,
}

/// A test module in `support::Probe`'s style with two calls that never end by themselves:
/// `waiter.spin`, a store read that counts for ever (a runaway search), and `waiter.sleep`,
/// which waits for ever.
struct Waiter(Arc<Waited>);

struct Dropped(Arc<Waited>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

impl Module for Waiter {
    fn name(&self) -> &str {
        "waiter"
    }
    fn manifest(&self) -> &str {
        r#"{"name": "waiter", "version": "0.1.0", "roles": ["box", "local"],
            "does": {"tools": ["waiter.spin", "waiter.sleep"]}}"#
    }
    fn start(&self, ctx: vyre::modules::Ctx) -> vyre::modules::StartFuture {
        let waited = self.0.clone();
        Box::pin(async move {
            let (c, w) = (ctx.clone(), waited.clone());
            ctx.tool(
                ToolDef::new("waiter.spin", "A read that never ends by itself."),
                move |_: Nothing, _| {
                    let (c, w) = (c.clone(), w.clone());
                    async move {
                        w.started.fetch_add(1, Ordering::SeqCst);
                        c.store()
                            .read(move |conn| {
                                let r = conn.query_row(
                                    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n",
                                    [],
                                    |r| r.get::<_, i64>(0),
                                );
                                w.ended.fetch_add(1, Ordering::SeqCst);
                                if r.as_ref().is_err_and(|e| e.to_string().contains("interrupt")) {
                                    w.interrupted.fetch_add(1, Ordering::SeqCst);
                                }
                                Ok(r?)
                            })
                            .await?;
                        Ok::<_, ToolError>(json!({}))
                    }
                },
            )?;
            let w = waited.clone();
            ctx.tool(
                ToolDef::new("waiter.sleep", "Waits for ever."),
                move |_: Nothing, _| {
                    let guard = Dropped(w.clone());
                    let w = w.clone();
                    async move {
                        w.started.fetch_add(1, Ordering::SeqCst);
                        std::future::pending::<()>().await;
                        drop(guard);
                        Ok::<_, ToolError>(json!({}))
                    }
                },
            )?;
            Ok(())
        })
    }
}

/// Start a tool call on vyred's socket and leave it running; the open connection.
async fn call_raw(socket: &std::path::Path, tool: &str) -> tokio::net::UnixStream {
    let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let request = format!(
        "POST /v1/tools/{tool} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

async fn until_count(n: &AtomicUsize, want: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while n.load(Ordering::SeqCst) < want {
        assert!(
            Instant::now() < deadline,
            "{what}: {}",
            n.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_mid_call_cancels_its_handler() {
    let home = TempHome::new("atk-disconnect");
    let waited = Arc::new(Waited::default());
    let vyred = InProcess::start(&home, vec![Arc::new(Waiter(waited.clone()))]).await;

    let spinning = call_raw(&vyred.socket, "waiter.spin").await;
    let sleeping = call_raw(&vyred.socket, "waiter.sleep").await;
    until_count(&waited.started, 2, "both calls started").await;
    // The client goes away: both handlers end, the runaway read interrupted by SQLite.
    drop(spinning);
    drop(sleeping);
    until_count(&waited.dropped, 1, "the sleeping handler was dropped").await;
    until_count(&waited.ended, 1, "the spinning read ended").await;
    assert_eq!(waited.interrupted.load(Ordering::SeqCst), 1);
    // And vyred answers the next caller.
    let health = vyred.socket_client().get("/v1/health").await.unwrap();
    assert!(health["version"].is_string(), "{health}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vyre_down_with_long_calls_in_flight_stops_within_its_deadline() {
    let home = TempHome::new("atk-down");
    let waited = Arc::new(Waited::default());
    let vyred = InProcess::start(&home, vec![Arc::new(Waiter(waited.clone()))]).await;
    let mut spinning = call_raw(&vyred.socket, "waiter.spin").await;
    let mut sleeping = call_raw(&vyred.socket, "waiter.sleep").await;
    until_count(&waited.started, 2, "both calls started").await;

    // `vyre down` waits for vyred's lock for 30 s at most (the drain deadline is 20 s).
    let down = {
        let mut cmd = home.command();
        tokio::task::spawn_blocking(move || cmd.arg("down").output().unwrap())
            .await
            .unwrap()
    };
    assert!(
        down.status.success(),
        "{}{}",
        String::from_utf8_lossy(&down.stdout),
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(String::from_utf8_lossy(&down.stdout).contains("vyred stopped"));
    tokio::time::timeout(Duration::from_secs(30), vyred.task)
        .await
        .expect("vyred's serve returned")
        .unwrap();
    // Both calls were ended, and each client heard why.
    assert_eq!(waited.interrupted.load(Ordering::SeqCst), 1);
    assert_eq!(waited.dropped.load(Ordering::SeqCst), 1);
    for stream in [&mut spinning, &mut sleeping] {
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer))
            .await
            .expect("the connection was closed");
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("\"code\":\"stopping\""), "{answer}");
    }
}
