//! Bounded work: slow and idle connections, too many streams, huge queries; every call ends when its client goes or vyred stops.
//!
//! The attackers: a session (or any local process) that opens connections and never finishes
//! them, opens event streams without end, or pastes a page into a search; and a client that
//! starts a long call and goes away. No test here times anything: each asserts that the work
//! ends (or is refused) and that vyred still answers; the benchmark prints the figures.

use std::time::{Duration, Instant};

use serde_json::json;

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
