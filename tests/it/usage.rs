//! What sessions cost (issue 25), on the real CLI: each turn's cost and tokens are kept from the
//! CLI's own report and added up by thread and day; after a restart the same turns are counted
//! once; a session may not read the person's spending.

use serde_json::json;

use crate::support::*;
use crate::threads_e2e::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn each_turn_is_counted_once_by_thread_and_day() {
    let r = rig("usage").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let mut threads = vec![];
    for n in 0..2 {
        let thread = start_thread(&r).await;
        for _ in 0..=n {
            r.sock
                .call(
                    "threads.send",
                    &json!({ "thread": thread, "text": "hello" }),
                )
                .await
                .unwrap();
            events_until(&mut stream, |e| e["type"] == "thread.finished").await;
        }
        threads.push(thread);
    }
    let summary = |by: &'static str| {
        let sock = r.sock.clone();
        async move {
            // The turns are kept from the events just after them.
            for _ in 0..50 {
                let s = sock
                    .call("usage.summary", &json!({ "by": by }))
                    .await
                    .unwrap();
                if s["total"]["turns"] == 3 {
                    return s;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            panic!("the three turns were not counted");
        }
    };
    let by_thread = summary("thread").await;
    let lines = by_thread["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "{by_thread}");
    let of = |t: &str| {
        lines
            .iter()
            .find(|l| l["key"] == t)
            .unwrap_or_else(|| panic!("{t} in {by_thread}"))["turns"]
            .clone()
    };
    assert_eq!((of(&threads[0]), of(&threads[1])), (json!(1), json!(2)));
    let total = &by_thread["total"];
    assert!(
        total["output_tokens"].as_i64().unwrap() > 0,
        "the CLI's tokens are kept: {total}"
    );
    let by_day = summary("day").await;
    assert_eq!(by_day["lines"].as_array().unwrap().len(), 1, "{by_day}");

    // A session reads its own thread, not the person's spending.
    let socket = r
        .home
        .vyre_home()
        .join("s")
        .join(format!("{}.sock", threads[1]));
    let refused = vyre::surfaces::client::Client::socket(&socket)
        .call("usage.summary", &json!({}))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("not_for_sessions"), "{refused}");
    let bad = r
        .sock
        .call("usage.summary", &json!({ "from": 10, "to": 5 }))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Some("invalid_input"));

    // After a restart the same turns, once each.
    r.vyred.stop().await;
    let vyred = InProcess::start(&r.home, vec![]).await;
    let sock = vyred.socket_client();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let again = sock
        .call("usage.summary", &json!({ "by": "thread" }))
        .await
        .unwrap();
    assert_eq!(again["total"], by_thread["total"], "{again}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_subscriptions_windows_are_kept_as_the_real_cli_reports_them() {
    let (_home, _api, vyred, sock, work) =
        crate::faults::subscription_rig("usage-windows", false).await;
    let before = sock.call("usage.limits", &json!({})).await.unwrap();
    assert_eq!(before["windows"], json!([]), "{before}");
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "text": "WINDOWS how much is left" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        events.iter().any(|e| e["type"] == "thread.limit"),
        "Claude Code said the windows"
    );
    let mut limits = json!(null);
    for _ in 0..50 {
        limits = sock.call("usage.limits", &json!({})).await.unwrap();
        if limits["windows"].as_array().is_some_and(|w| w.len() == 2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let five = &limits["windows"][0];
    assert_eq!(five["kind"], "five_hour", "{limits}");
    assert_eq!(five["status"], "allowed_warning");
    assert_eq!(five["utilization"], 0.82);
    assert_eq!(five["thread"], thread.as_str());
    let resets = five["resets_at"].as_i64().unwrap() - vyre::now_ms();
    assert!(
        (6_000_000..7_300_000).contains(&resets),
        "in about two hours: {resets}"
    );
    assert_eq!(limits["windows"][1]["kind"], "seven_day");
    assert_eq!(limits["windows"][1]["utilization"], 0.41);
    assert_eq!(limits["fallback"], json!(null));

    // Not a session's to read.
    let socket = _home.vyre_home().join("s").join(format!("{thread}.sock"));
    let refused = vyre::surfaces::client::Client::socket(&socket)
        .call("usage.limits", &json!({}))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("not_for_sessions"), "{refused}");
    vyred.stop().await;
}
