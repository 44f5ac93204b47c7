//! Recall on real transcripts: the real CLI's, an older shape with broken lines, found as they
//! grow, searched with FTS5, and one conversation shown whole with its live turns, each once.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::threads_e2e::{events_until, of_type, rig, start_thread};

/// Call `recall.search` until `until` holds for its answer (the index follows file events).
pub(crate) async fn search_until(
    sock: &Client,
    query: &str,
    until: impl Fn(&Value) -> bool,
) -> Value {
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
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn history_is_found_as_it_grows_and_a_conversation_shows_each_turn_once() {
    let r = rig("recall-e2e").await;
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
    let last = &events.last().expect("events_until returns the match")["payload"];
    assert_eq!(
        last["total"], 1,
        "the transcript dropped in counts in the progress, read or found: {last}"
    );
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

/// One line of a transcript for `session`, in the shape the CLI writes.
fn line(session: &str, n: usize, text: &str) -> String {
    format!(
        "{}\n",
        json!({
            "type": "user", "sessionId": session, "uuid": format!("{session}-{n}"),
            "cwd": "/work", "timestamp": "2026-01-01T00:00:00.000Z",
            "message": { "role": "user", "content": text }
        })
    )
}

/// Hundreds of project folders appear while vyred runs, some with their transcript written the
/// instant the folder exists, some a moment later, some only appended after their first read,
/// and the first ones before `~/.claude/projects` itself existed, then folders moved in whole:
/// every one is found, and its last line too, with no timing on vyred's side to get lucky with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_folder_created_while_vyred_runs_is_watched_and_read() {
    use std::io::Write;
    let home = crate::support::TempHome::new("recall-folders");
    std::fs::create_dir_all(home.dir.join("home")).unwrap();
    let vyred = crate::support::InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let projects = home.dir.join("home/.claude/projects");
    const FOLDERS: usize = 300;
    const MOVED: usize = 20;
    let writer = std::thread::spawn(move || {
        let mut files = vec![];
        for i in 0..FOLDERS {
            let session = format!("0b7e4c1e-0000-4000-8000-{i:012}");
            let folder = projects.join(format!("-work-stress-{i}"));
            std::fs::create_dir_all(&folder).unwrap();
            // Every third folder waits a little before its file, every third a little longer:
            // the moments in which a watch on a new folder may not yet be in place.
            match i % 3 {
                0 => {}
                1 => std::thread::sleep(Duration::from_micros(200)),
                _ => std::thread::sleep(Duration::from_millis(2)),
            }
            let path = folder.join(format!("{session}.jsonl"));
            let mut f = std::fs::File::create(&path).unwrap();
            f.write_all(line(&session, 0, &format!("first{i} words")).as_bytes())
                .unwrap();
            files.push((session, path));
        }
        files
    });
    let mut files = tokio::task::spawn_blocking(move || writer.join().unwrap())
        .await
        .unwrap();
    // Folders written elsewhere and moved in whole: their files make no event of their own.
    let outside = home.dir.join("elsewhere");
    for i in FOLDERS..FOLDERS + MOVED {
        let session = format!("0b7e4c1e-0000-4000-8000-{i:012}");
        let folder = outside.join(format!("-work-moved-{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join(format!("{session}.jsonl"));
        std::fs::write(&path, line(&session, 0, &format!("first{i} words"))).unwrap();
        let to = home
            .dir
            .join(format!("home/.claude/projects/-work-moved-{i}"));
        std::fs::rename(&folder, &to).unwrap();
        files.push((session.clone(), to.join(format!("{session}.jsonl"))));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = sock.call("recall.status", &json!({})).await.unwrap();
        if s["sessions"] == FOLDERS + MOVED {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{FOLDERS} folders made and {MOVED} moved in while vyred ran: {s}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A second line in every file, after vyred has read the first: each is an append the
    // watch on its folder must see.
    for (i, (session, path)) in files.iter().enumerate() {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(line(session, 1, &format!("lastword{i} here")).as_bytes())
            .unwrap();
    }
    for i in [
        0,
        1,
        2,
        FOLDERS / 2,
        FOLDERS - 1,
        FOLDERS,
        FOLDERS + MOVED - 1,
    ] {
        let hits = search_until(&sock, &format!("lastword{i}"), |h| {
            h.as_array().is_some_and(|a| a.len() == 1)
        })
        .await;
        assert_eq!(hits[0]["thread"], files[i].0.as_str(), "{hits}");
    }
    let status = sock.call("recall.status", &json!({})).await.unwrap();
    assert_eq!(status["sessions"], FOLDERS + MOVED, "{status}");
    vyred.stop().await;
}
