//! Bad input to sessions on the real CLI: each is refused clearly, and nothing is lost.

use serde_json::json;

use crate::threads_e2e::{events_until, of_type, rig, start_thread};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_resume_without_its_transcript_is_refused_and_offers_a_new_thread() {
    let r = rig("threads-no-transcript").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "remember me" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    let transcript = vyre::kernel::transcripts::find(&r.home.dir.join("home"), &thread)
        .expect("the CLI wrote a transcript");
    std::fs::remove_file(&transcript).unwrap();

    let err = r
        .sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "again" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("no_history"), "{err}");
    let message = err.to_string();
    assert!(message.contains("transcript is gone"), "{message}");
    assert!(
        message.contains(&format!("vyre threads start --cwd {}", r.work.display())),
        "a new thread is offered: {message}"
    );
    // The offer works, and the thread's record is still there to look at.
    let again = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work, "text": "fresh" }))
        .await
        .unwrap();
    assert_ne!(again["thread"], thread.as_str());
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let info = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(info["live"], false);
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_rewind_to_an_unknown_message_is_refused_and_the_session_goes_on() {
    let r = rig("threads-bad-rewind").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": "one" }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();

    let err = r
        .sock
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": "00000000-0000-4000-8000-000000000000" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_message"), "{err}");
    assert_eq!(
        r.sock.call("threads.pids", &json!({})).await.unwrap(),
        pids,
        "the live session was not stopped for it"
    );
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": "two" }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    assert!(of_type(&events, "thread.rewound").is_empty());
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_model_the_cli_rejects_fails_the_turn_with_its_message_and_the_session_stays_usable() {
    let r = rig("threads-bad-model").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "model": "claude-nosuch-9", "text": "hello" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let finished = &of_type(&events, "thread.finished")[0]["payload"];
    assert_eq!(finished["ok"], false, "{finished}");
    let error = finished["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("claude-nosuch-9"),
        "the CLI's message: {error}"
    );

    r.sock
        .call(
            "threads.model",
            &json!({ "thread": thread, "model": "sonnet" }),
        )
        .await
        .unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "and now" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    assert!(
        of_type(&events, "thread.started").is_empty(),
        "the same session went on"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_same_send_twice_is_one_turn_on_the_real_cli_even_after_a_restart() {
    let r = rig("threads-same-send").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    let uuid = "6f1b9a52-3c1e-4d7a-9a7e-2b8c4d5e6f70";
    let send = json!({ "thread": thread, "text": "only once", "uuid": uuid });
    let first = r.sock.call("threads.send", &send).await.unwrap();
    let again = r.sock.call("threads.send", &send).await.unwrap();
    assert_eq!(first, again, "the retry answers as the first did");
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let requests = r.api.message_requests().len();

    let home = r.home;
    r.vyred.stop().await;
    let vyred = crate::support::InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let after = sock.call("threads.send", &send).await.unwrap();
    assert_eq!(
        after, first,
        "and so after a restart, without resuming the thread"
    );
    let info = sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        (info["turns"].as_i64(), info["live"].as_bool()),
        (Some(1), Some(false))
    );
    assert_eq!(
        r.api.message_requests().len(),
        requests,
        "no second turn reached Claude"
    );
    let events = crate::support::stored_events(&home.home().database());
    let turns = events
        .iter()
        .filter(|(_, kind, p)| kind == "thread.turn" && p["uuid"] == uuid)
        .count();
    assert_eq!(turns, 1);
    vyred.stop().await;
}

/// A new person's first start before any key is in the vault: refused with the vault's code and
/// words that say what to do; no process is left, and the thread it made says it failed and why
/// (it never stays "starting").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_start_with_no_key_in_the_vault_says_how_to_give_one() {
    let r = rig("threads-no-key").await;
    r.sock
        .call("vault.delete", &json!({ "name": "anthropic-api-key" }))
        .await
        .unwrap();
    let err = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work, "text": "hi" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_item"), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("vyre vault put anthropic-api-key")
            && message.contains("vyre vault grant anthropic-api-key sessions"),
        "{message}"
    );
    let listed = r.sock.call("threads.list", &json!({})).await.unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["state"], "failed", "{listed}");
    assert_eq!(listed[0]["live"], false, "{listed}");
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    assert_eq!(pids["sids"], json!([]), "{pids}");
}
