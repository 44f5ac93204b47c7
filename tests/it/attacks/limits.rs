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
use vyre::kernel::module::{Module, ToolDef};
use vyre::kernel::tools::ToolError;

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
    fn start(&self, ctx: vyre::kernel::module::Ctx) -> vyre::kernel::module::StartFuture {
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

fn write_limits(home: &TempHome, limits: serde_json::Value) {
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        json!({ "limits": limits }).to_string(),
    )
    .unwrap();
}

/// Send `GET /v1/health` on `stream` and read the answer (kept alive): its status line and body.
async fn get_health(stream: &mut tokio::net::TcpStream) -> (String, String) {
    stream
        .write_all(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    read_answer(stream).await
}

/// One HTTP answer with a Content-Length: its status line and body.
async fn read_answer(stream: &mut tokio::net::TcpStream) -> (String, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let status = text.lines().next().unwrap_or_default().to_string();
                return (status, text[end + 4..end + 4 + len].to_string());
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut chunk))
            .await
            .expect("an answer in time")
            .unwrap();
        assert!(
            n > 0,
            "closed before a whole answer: {}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_headers_and_stalled_bodies_are_closed_and_vyred_still_answers() {
    let home = TempHome::new("atk-slow-headers");
    write_limits(&home, json!({ "header_timeout_s": 1 }));
    let vyred = InProcess::start(&home, vec![]).await;
    let mut slow = Vec::new();
    for _ in 0..200 {
        let mut s = tokio::net::TcpStream::connect(vyred.http).await.unwrap();
        s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(s);
    }
    // And ten on the socket whose tool call's body stalls half way.
    let mut stalled = Vec::new();
    for _ in 0..10 {
        let mut s = tokio::net::UnixStream::connect(&vyred.socket)
            .await
            .unwrap();
        s.write_all(b"POST /v1/tools/system.status HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
            .await
            .unwrap();
        stalled.push(s);
    }
    // While they hang, others are answered.
    let mut other = tokio::net::TcpStream::connect(vyred.http).await.unwrap();
    assert_eq!(get_health(&mut other).await.0, "HTTP/1.1 200 OK");
    drop(other);
    // Each half-sent request is closed by vyred, none answered.
    for s in &mut slow {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut rest))
            .await
            .expect("vyred closed the connection");
        assert!(
            closed.is_err() || !String::from_utf8_lossy(&rest).contains("200 OK"),
            "{}",
            String::from_utf8_lossy(&rest)
        );
    }
    // A stalled body is answered 408 in the API's error shape, the connection closed.
    for s in &mut stalled {
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut answer))
            .await
            .expect("vyred closed the connection")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("\"code\":\"request_timeout\""), "{answer}");
    }
    let health = vyred.http_client(None).get("/v1/health").await.unwrap();
    assert!(health["version"].is_string(), "{health}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_a_new_one_is_refused_until_others_go() {
    let home = TempHome::new("atk-conn-cap");
    write_limits(&home, json!({ "connections": 8 }));
    let vyred = InProcess::start(&home, vec![]).await;
    // Eight kept-alive connections, each answered once, so vyred holds all eight.
    let mut held = Vec::new();
    for _ in 0..8 {
        let mut s = tokio::net::TcpStream::connect(vyred.http).await.unwrap();
        assert_eq!(get_health(&mut s).await.0, "HTTP/1.1 200 OK");
        held.push(s);
    }
    // A ninth is refused at once, in the API's error shape.
    let mut ninth = tokio::net::TcpStream::connect(vyred.http).await.unwrap();
    let (status, body) = get_health(&mut ninth).await;
    assert_eq!(status, "HTTP/1.1 503 Service Unavailable", "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "too_many_connections", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limits.connections")
    );
    // The other listener is not affected.
    let health = vyred.socket_client().get("/v1/health").await.unwrap();
    assert!(health["version"].is_string(), "{health}");
    // Once they go, a new connection is served again.
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut s = tokio::net::TcpStream::connect(vyred.http).await.unwrap();
        if get_health(&mut s).await.0 == "HTTP/1.1 200 OK" {
            break;
        }
        assert!(Instant::now() < deadline, "never served again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_streams_past_a_callers_cap_are_refused() {
    let home = TempHome::new("atk-streams");
    write_limits(&home, json!({ "streams": 2 }));
    let vyred = InProcess::start(&home, vec![]).await;
    let (_, token) = vyred.device_token("greedy").await;
    let (_, other) = vyred.device_token("other").await;
    let greedy = vyred.http_client(Some(&token));
    let first = greedy.events("types=device.*", None).await.unwrap();
    let second = greedy.events("types=device.*", None).await.unwrap();
    // The third of the same device is refused, in the API's error shape.
    let Err(err) = greedy.events("types=device.*", None).await else {
        panic!("a third stream of one device was opened");
    };
    assert_eq!(err.code(), Some("too_many_streams"), "{err}");
    assert!(err.to_string().contains("limits.streams"), "{err}");
    // Another device, and the socket's user, each have their own.
    let _theirs = vyred
        .http_client(Some(&other))
        .events("types=device.*", None)
        .await
        .unwrap();
    let _mine = vyred
        .socket_client()
        .events("types=device.*", None)
        .await
        .unwrap();
    // A stream that ends gives its place back.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(20);
    let _again = loop {
        match greedy.events("types=device.*", None).await {
            Ok(s) => break s,
            Err(e) => {
                assert_eq!(e.code(), Some("too_many_streams"), "{e}");
                assert!(Instant::now() < deadline, "the place never came back");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    drop(second);
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_outlives_the_header_timeout() {
    let home = TempHome::new("atk-stream-timeout");
    write_limits(&home, json!({ "header_timeout_s": 0.5 }));
    let vyred = InProcess::start(&home, vec![]).await;
    let (_, token) = vyred.device_token("reader").await;
    let mut stream = vyred
        .http_client(Some(&token))
        .events("types=device.*", None)
        .await
        .unwrap();
    // Quiet for four times the timeout: a stream being answered is not an idle connection.
    tokio::time::sleep(Duration::from_secs(2)).await;
    vyred.device_token("later").await;
    let msg = tokio::time::timeout(Duration::from_secs(20), stream.next())
        .await
        .expect("an event in time")
        .expect("the stream is still open")
        .unwrap();
    assert!(msg.data.contains("later"), "{}", msg.data);
    vyred.stop().await;
}
