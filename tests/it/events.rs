//! The event log over SSE: replay, resume with Last-Event-ID, filters, slow clients, the CLI.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::EventStream;

use crate::support::*;

async fn read_n(stream: &mut EventStream, n: usize) -> Vec<(i64, Value)> {
    let mut out = Vec::new();
    while out.len() < n {
        let msg = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("an event in time")
            .expect("the stream is open")
            .expect("no transport error");
        let id: i64 = msg.id.as_deref().unwrap().parse().unwrap();
        let event: Value = serde_json::from_str(&msg.data).unwrap();
        assert_eq!(event["id"], id, "the SSE id is the row id");
        assert_eq!(msg.event.as_deref(), event["type"].as_str());
        out.push((id, event));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_and_resumes_misses_nothing_and_gets_nothing_twice() {
    let home = TempHome::new("resume");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let (_, token) = vyred.device_token("tablet").await;
    let sock = vyred.socket_client();
    let http = vyred.http_client(Some(&token));
    sock.call("probe.emit", &json!({ "n": 50 })).await.unwrap();

    let mut first = http.events("since=0", None).await.unwrap();
    let seen_a = read_n(&mut first, 20).await;
    drop(first);
    let last = seen_a.last().unwrap().0;

    // Events happen while it is away.
    sock.call("probe.emit", &json!({ "n": 30 })).await.unwrap();
    let mut second = http.events("", Some(&last.to_string())).await.unwrap();
    let total = vyred.kernel.bus().latest_id();
    let seen_b = read_n(&mut second, (total - last) as usize).await;
    // And while it is connected again.
    sock.call("probe.emit", &json!({ "n": 5 })).await.unwrap();
    let seen_c = read_n(&mut second, 5).await;

    let ids: Vec<i64> = seen_a
        .iter()
        .chain(&seen_b)
        .chain(&seen_c)
        .map(|(id, _)| *id)
        .collect();
    let unique: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "nothing twice");
    assert_eq!(
        ids,
        (1..=vyred.kernel.bus().latest_id()).collect::<Vec<_>>(),
        "nothing missed, in order"
    );
    vyred.stop().await;
}

/// The types of the events a replay-only stream with `query` sends.
async fn replayed_types(client: &vyre::surfaces::client::Client, query: &str) -> Vec<String> {
    let mut stream = client.events(query, None).await.unwrap();
    let mut kinds = Vec::new();
    while let Some(Ok(msg)) = stream.next().await {
        kinds.push(msg.event.unwrap());
    }
    kinds
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_by_type_and_thread() {
    let home = TempHome::new("filters");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    sock.call("probe.emit", &json!({ "n": 3, "thread": "t-one" }))
        .await
        .unwrap();
    sock.call("probe.emit", &json!({ "n": 2, "thread": "t-two" }))
        .await
        .unwrap();
    sock.call(
        "probe.emit",
        &json!({ "n": 2, "kind": "probe.thread_said", "thread": "t-one" }),
    )
    .await
    .unwrap();

    let kinds = replayed_types(&sock, "since=0&thread=t-one&follow=false").await;
    assert_eq!(
        kinds,
        [
            "probe.pinged",
            "probe.pinged",
            "probe.pinged",
            "probe.thread_said",
            "probe.thread_said"
        ]
    );

    let kinds = replayed_types(
        &sock,
        "since=0&types=probe.thread_said,daemon.*&follow=false",
    )
    .await;
    assert_eq!(
        kinds,
        ["daemon.started", "probe.thread_said", "probe.thread_said"]
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_never_blocks_emitters_and_catches_up_from_the_log() {
    let home = TempHome::new("slow");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    let start = vyred.kernel.bus().latest_id();
    // Subscribed, but not reading while far more events than the bus holds are emitted.
    let mut slow = sock.events("types=probe.pinged", None).await.unwrap();
    let n = 6000;
    tokio::time::timeout(
        Duration::from_secs(60),
        sock.call("probe.emit", &json!({ "n": n })),
    )
    .await
    .expect("emitters are not held up by a client that does not read")
    .unwrap();
    let got = read_n(&mut slow, n).await;
    let ids: Vec<i64> = got.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, ((start + 1)..=(start + n as i64)).collect::<Vec<_>>());
    assert_eq!(got.last().unwrap().1["payload"]["i"], n - 1);
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_prints_and_follows_events() {
    let home = TempHome::new("cli-events");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    sock.call("probe.emit", &json!({ "n": 2, "thread": "th-1" }))
        .await
        .unwrap();

    let out = home.vyre(&["events", "--since", "0", "--json"]);
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "daemon.started and two pings");
    let out = home.vyre(&["events", "--types", "probe.pinged"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains("probe.pinged") && text.contains("[th-1]"),
        "{text}"
    );

    let mut follow = home
        .command()
        .args(["events", "--follow", "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = follow.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        lines.next().unwrap().unwrap()
    });
    // Give the follower a moment to subscribe; it starts after the newest event either way.
    tokio::time::sleep(Duration::from_millis(300)).await;
    sock.call("probe.emit", &json!({ "n": 1, "note": "live" }))
        .await
        .unwrap();
    let line = tokio::task::spawn_blocking(move || reader.join().unwrap())
        .await
        .unwrap();
    let event: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(event["payload"]["note"], "live");
    let _ = follow.kill();
    let _ = follow.wait();
    vyred.stop().await;
}
