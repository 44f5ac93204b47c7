//! Recall on real transcripts: the real CLI's, an older shape with broken lines, found as they
//! grow, searched with FTS5, and one conversation shown whole with its live turns, each once.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::client::Client;

use crate::threads_e2e::{events_until, of_type, rig, start_thread};

/// Call `recall.search` until `until` holds for its answer (the index follows file events).
async fn search_until(sock: &Client, query: &str, until: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let hits = sock
            .call("recall.search", &json!({ "query": query }))
            .await
            .unwrap();
        if until(&hits) {
            return hits;
        }
        assert!(Instant::now() < deadline, "{query}: {hits}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_is_found_as_it_grows_and_a_conversation_shows_each_turn_once() {
    let Some(r) = rig("recall-e2e").await else {
        return;
    };
    let mut progress = r.sock.events("types=history.*", Some("0")).await.unwrap();
    // A terminal session an older Claude Code wrote, dropped in while vyred runs.
    let old = r
        .home
        .dir
        .join("home/.claude/projects/-home-someone-old-project");
    std::fs::create_dir_all(&old).unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/transcripts/older-and-broken.jsonl"
    );
    std::fs::copy(
        fixture,
        old.join("0b7e4c1e-0000-4000-8000-00000000a001.jsonl"),
    )
    .unwrap();
    let hits = search_until(&r.sock, "walrus", |h| {
        h.as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    assert_eq!(hits[0]["thread"], "0b7e4c1e-0000-4000-8000-00000000a001");
    assert!(hits.to_string().contains("[walrus]"), "{hits}");
    let events = events_until(&mut progress, |e| {
        e["type"] == "history.indexed"
            && e["payload"]["scanning"] == false
            && e["payload"]["done"] == e["payload"]["total"]
    })
    .await;
    assert!(!events.is_empty());
    let old_thread = r
        .sock
        .call(
            "recall.thread",
            &json!({ "thread": "0b7e4c1e-0000-4000-8000-00000000a001" }),
        )
        .await
        .unwrap();
    assert_eq!(old_thread["title"], "Teaching the walrus to swim");
    let texts: Vec<&str> = old_thread["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec![
            "how does a walrus swim so well?",
            "A walrus paddles with its hind flippers.",
            "and in the cold?",
            "Blubber keeps it warm.\nIt can slow its heart, too."
        ],
        "one reply spread over two lines is one turn; the torn last line waits"
    );
    let status = r.sock.call("recall.status", &json!({})).await.unwrap();
    assert_eq!(status["broken"], 1, "{status}");

    // A Vyre session on the real CLI: its transcript is read as it grows.
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "the quick zebra" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let hits = search_until(&r.sock, "zebra", |h| {
        h.as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .all(|h| h["thread"] == thread.as_str())
    );

    // Mid-turn, the reply is live; once written, it is history; never both.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "SLOWLY a giraffe story" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.text").await;
    let during = r
        .sock
        .call("recall.thread", &json!({ "thread": thread }))
        .await
        .unwrap();
    let live: Vec<&Value> = during["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["live"] == true)
        .collect();
    assert!(
        live.iter().any(|t| t["role"] == "assistant"),
        "the streaming reply shows live: {during}"
    );
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    search_until(&r.sock, "giraffe", |h| {
        h.as_array()
            .is_some_and(|a| a.iter().any(|x| x["role"] == "assistant"))
    })
    .await;
    let after = r
        .sock
        .call("recall.thread", &json!({ "thread": thread }))
        .await
        .unwrap();
    let turns = after["turns"].as_array().unwrap();
    let keys: Vec<&str> = turns.iter().map(|t| t["key"].as_str().unwrap()).collect();
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "nothing twice: {after}");
    assert_eq!(turns.len(), 4, "two prompts, two replies: {after}");
    assert!(turns.iter().all(|t| t["live"] == false));
    assert_eq!(after["cwd"], r.work.display().to_string());

    let err = r
        .sock
        .call("recall.search", &json!({ "query": "  \"\" " }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("invalid_input"));
    let err = r
        .sock
        .call("recall.thread", &json!({ "thread": "no-such-thread" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_thread"));
    r.vyred.stop().await;
}
