//! A Codex thread's history through vyred, on the real Codex CLI against the fake Responses
//! API: forks, whole or from a message, and the rewind Codex cannot do.

use serde_json::json;

use crate::codex::codex_rig;
use crate::threads_e2e::*;

/// A Codex thread forks whole, or from one of its messages (through the turn it began); a
/// rewind, which Codex cannot do, is refused before anything is stopped for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Codex CLI: tests/run, or VYRE_TEST_CODEX=... cargo test -- --include-ignored"]
async fn a_codex_thread_forks_whole_or_from_a_message_and_refuses_a_rewind() {
    let (api, r) = codex_rig("codex-fork").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let input = json!({ "cwd": r.work, "provider": "codex", "text": "first words" });
    let started = r.sock.call("threads.start", &input).await.unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    send_until_finished(&r, &mut stream, &thread, "second words").await;
    let said = || api.responses_requests().pop().unwrap().body["input"].to_string();

    let whole = r
        .sock
        .call("threads.fork", &json!({ "thread": thread }))
        .await
        .unwrap();
    let whole = whole["thread"].as_str().unwrap().to_string();
    send_until_finished(&r, &mut stream, &whole, "in the fork").await;
    let heard = said();
    assert!(
        heard.contains("first words") && heard.contains("second words"),
        "{heard}"
    );

    let page = r
        .sock
        .call("threads.timeline", &json!({ "thread": thread }))
        .await
        .unwrap();
    let first = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "user" && i["text"] == "first words")
        .unwrap_or_else(|| panic!("{page}"))["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let part = r
        .sock
        .call("threads.fork", &json!({ "thread": thread, "uuid": first }))
        .await
        .unwrap();
    let part = part["thread"].as_str().unwrap().to_string();
    send_until_finished(&r, &mut stream, &part, "in the second fork").await;
    let heard = said();
    assert!(heard.contains("reply to [first words]"), "{heard}");
    assert!(
        !heard.contains("second words"),
        "forked through the first turn: {heard}"
    );
    let unknown = r
        .sock
        .call(
            "threads.fork",
            &json!({ "thread": thread, "uuid": "no-such-message" }),
        )
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Some("unknown_message"), "{unknown}");

    let refused = r
        .sock
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": first }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("no_rewind"), "{refused}");
    assert!(refused.to_string().contains("threads.fork"), "{refused}");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["live"], true, "nothing was stopped for it: {got}");
    r.vyred.stop().await;
}
