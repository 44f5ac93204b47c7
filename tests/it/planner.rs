//! The planner (issue 23) on the kernel's one timer: a reminder falls due on time, once; one
//! that fell due while vyred was down is told once at the start, saying how late; a snoozed
//! one falls due again; done and removed ones never do; a person's words become the time.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;

/// The `planner.due` events told of `item` so far.
async fn dues(sock: &Client, item: i64) -> Vec<Value> {
    let events = sock
        .call(
            "system.events",
            &json!({ "types": ["planner.due"], "limit": 1000 }),
        )
        .await
        .unwrap();
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["payload"]["item"] == item)
        .cloned()
        .collect()
}

/// Wait (up to 10 s) until `item` fell due `n` times; the last.
async fn due_times(sock: &Client, item: i64, n: usize) -> Value {
    for _ in 0..200 {
        let d = dues(sock, item).await;
        if d.len() >= n {
            return d[n - 1].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "item {item} did not fall due {n} times: {:?}",
        dues(sock, item).await
    );
}

async fn add(sock: &Client, input: Value) -> Value {
    sock.call("planner.add", &input).await.unwrap()
}

fn ids(list: &Value) -> Vec<i64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reminders_fall_due_once_on_time_and_once_late_after_a_restart() {
    let home = TempHome::new("planner");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();

    let soon = add(&sock, json!({ "text": "check the deploy", "at": "in 1s" })).await;
    assert_eq!(soon["kind"], "reminder");
    assert_eq!(soon["created_by"], "person");
    let a = soon["id"].as_i64().unwrap();
    let wait = soon["due_at"].as_i64().unwrap() - vyre::now_ms();
    assert!((500..=1100).contains(&wait), "due in a second: {wait}");
    let told = due_times(&sock, a, 1).await;
    assert_eq!(told["payload"]["text"], "check the deploy");
    assert_eq!(told["payload"]["late_ms"], 0, "on time: {told}");
    assert!(told["at"].as_i64().unwrap() >= soon["due_at"].as_i64().unwrap());

    // Set, then vyred stops before it is due and starts after.
    let later = add(
        &sock,
        json!({ "text": "stand up", "at": "in 2s", "kind": "alarm" }),
    )
    .await;
    let b = later["id"].as_i64().unwrap();
    let todo = add(&sock, json!({ "text": "write the notes" })).await;
    assert_eq!(todo["kind"], "todo");
    assert_eq!(todo["due_at"], Value::Null);
    let note = add(
        &sock,
        json!({ "text": "the door code changed", "kind": "note" }),
    )
    .await;
    vyred.stop().await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let told = due_times(&sock, b, 1).await;
    let late = told["payload"]["late_ms"].as_i64().unwrap();
    assert!(late >= 900, "it says it was late: {told}");
    assert_eq!(told["payload"]["kind"], "alarm");
    // Told once each, not again after the restart.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(dues(&sock, a).await.len(), 1);
    assert_eq!(dues(&sock, b).await.len(), 1);

    // Snoozed, it falls due again; done, it does not.
    let snoozed = sock
        .call("planner.snooze", &json!({ "item": a, "for": "1s" }))
        .await
        .unwrap();
    assert_eq!(snoozed["fell_due_at"], Value::Null);
    due_times(&sock, a, 2).await;
    let c = add(&sock, json!({ "text": "never told", "at": "in 1s" })).await["id"]
        .as_i64()
        .unwrap();
    let done = sock
        .call("planner.done", &json!({ "item": c }))
        .await
        .unwrap();
    assert!(done["done_at"].is_i64());
    let d = add(&sock, json!({ "text": "removed before", "at": "in 1s" })).await["id"]
        .as_i64()
        .unwrap();
    sock.call("planner.remove", &json!({ "item": d }))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1800)).await;
    assert!(dues(&sock, c).await.is_empty(), "done: never told");
    assert!(dues(&sock, d).await.is_empty(), "removed: never told");

    // Lists: open ones by when they fall due, done ones only when asked.
    let open = sock.call("planner.list", &json!({})).await.unwrap();
    let open_ids = ids(&open);
    assert!(!open_ids.contains(&c) && !open_ids.contains(&d), "{open:#}");
    for want in [
        a,
        b,
        todo["id"].as_i64().unwrap(),
        note["id"].as_i64().unwrap(),
    ] {
        assert!(open_ids.contains(&want), "{want} in {open:#}");
    }
    assert_eq!(
        *open_ids.last().unwrap(),
        note["id"].as_i64().unwrap(),
        "items without a time come after"
    );
    let all = sock
        .call("planner.list", &json!({ "done": true }))
        .await
        .unwrap();
    assert!(ids(&all).contains(&c));
    let notes = sock
        .call("planner.list", &json!({ "kind": "note" }))
        .await
        .unwrap();
    assert_eq!(ids(&notes), vec![note["id"].as_i64().unwrap()]);
    let events = sock
        .call(
            "system.events",
            &json!({ "types": ["planner.done", "planner.changed"], "limit": 1000 }),
        )
        .await
        .unwrap();
    let kinds: Vec<String> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["type"].as_str().unwrap(),
                e["payload"]["change"].as_str().unwrap_or("")
            )
        })
        .collect();
    for want in [
        "planner.changed added",
        "planner.changed snoozed",
        "planner.done ",
        "planner.changed done",
        "planner.changed removed",
    ] {
        assert!(kinds.contains(&want.to_string()), "{want}: {kinds:?}");
    }
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_planner_input_is_refused_in_words_and_changes_nothing() {
    let home = TempHome::new("planner-bad");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    for (input, code, words) in [
        (
            json!({ "text": "x", "kind": "reminder" }),
            "invalid_input",
            "needs a time",
        ),
        (
            json!({ "text": "x", "at": "soon" }),
            "invalid_input",
            "not a time",
        ),
        (
            json!({ "text": "x", "at": "in -5m" }),
            "invalid_input",
            "not a time",
        ),
        (
            json!({ "text": "x", "at": "in 11 years" }),
            "invalid_input",
            "not a time",
        ),
        (
            json!({ "text": "x", "at": "2099-01-01" }),
            "invalid_input",
            "ten years",
        ),
        (
            json!({ "text": "x", "kind": "note", "at": "in 1h" }),
            "invalid_input",
            "a note has no time",
        ),
        (
            json!({ "text": "x", "at": "9am", "zone": "Mars/Olympus" }),
            "invalid_input",
            "not a time zone",
        ),
        (
            json!({ "text": "   ", "at": "in 1h" }),
            "invalid_input",
            "text is empty",
        ),
        (
            json!({ "text": "x", "at": "in 1h", "project": "nowhere" }),
            "unknown_project",
            "",
        ),
        (
            json!({ "text": "x", "every": "1s" }),
            "invalid_input",
            "every",
        ),
    ] {
        let err = sock.call("planner.add", &input).await.unwrap_err();
        assert_eq!(err.code(), Some(code), "{input}: {err}");
        assert!(err.to_string().contains(words), "{input}: {err}");
    }
    let err = sock
        .call("planner.done", &json!({ "item": 999 }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_item"));
    let todo = add(&sock, json!({ "text": "a todo" })).await["id"]
        .as_i64()
        .unwrap();
    sock.call("planner.done", &json!({ "item": todo }))
        .await
        .unwrap();
    let err = sock
        .call("planner.snooze", &json!({ "item": todo }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("done"), "{err}");
    assert!(
        sock.call("planner.list", &json!({})).await.unwrap() == json!([]),
        "nothing open was added by the refused calls"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_for_when_the_person_next_opens_vyre_falls_due_then_and_once() {
    let home = TempHome::new("planner-open");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let item = add(
        &sock,
        json!({ "text": "ask about the invoice", "at": "when I next open Vyre" }),
    )
    .await;
    assert_eq!(item["kind"], "reminder");
    assert_eq!(item["on_open"], true);
    assert_eq!(item["due_at"], Value::Null);
    let id = item["id"].as_i64().unwrap();
    assert!(
        dues(&sock, id).await.is_empty(),
        "not before the person opens Vyre"
    );

    let fell = sock.call("planner.opened", &json!({})).await.unwrap();
    assert_eq!(ids(&fell), vec![id]);
    let told = due_times(&sock, id, 1).await;
    assert_eq!(told["payload"]["on_open"], true);
    assert_eq!(told["payload"]["late_ms"], 0);
    // Opened again: nothing more, told once.
    assert_eq!(
        sock.call("planner.opened", &json!({})).await.unwrap(),
        json!([])
    );
    assert_eq!(dues(&sock, id).await.len(), 1);
    // Snoozed, it becomes a reminder at a time, not one for the next opening.
    let snoozed = sock
        .call("planner.snooze", &json!({ "item": id, "for": "1h" }))
        .await
        .unwrap();
    assert_eq!(snoozed["on_open"], false);
    assert!(snoozed["due_at"].is_i64());
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calendar_file_goes_out_and_comes_back_in_once() {
    let home = TempHome::new("planner-ics");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    add(
        &sock,
        json!({ "text": "call the bank, then the school", "at": "in 2 hours" }),
    )
    .await;
    add(
        &sock,
        json!({ "text": "renew the passport", "kind": "todo", "at": "tomorrow 9am" }),
    )
    .await;
    add(
        &sock,
        json!({ "text": "the door code is in the vault", "kind": "note" }),
    )
    .await;
    let out = sock.call("planner.export", &json!({})).await.unwrap();
    assert_eq!(out["items"], 3);
    let ics = out["ics"].as_str().unwrap().to_string();
    assert!(ics.starts_with("BEGIN:VCALENDAR\r\n"), "{ics}");
    assert!(
        ics.contains("SUMMARY:call the bank\\, then the school"),
        "{ics}"
    );
    assert!(ics.contains("BEGIN:VTODO") && ics.contains("BEGIN:VJOURNAL"));

    // Into another Vyre (a calendar app's file, in effect): each item once, whatever it is.
    let other = TempHome::new("planner-ics-other");
    let there = InProcess::start(&other, vec![]).await;
    let sock2 = there.socket_client();
    let first = sock2
        .call("planner.import", &json!({ "ics": ics }))
        .await
        .unwrap();
    assert_eq!(first["added"].as_array().unwrap().len(), 3, "{first}");
    let again = sock2
        .call("planner.import", &json!({ "ics": ics }))
        .await
        .unwrap();
    assert_eq!(again["added"].as_array().unwrap().len(), 0);
    assert_eq!(again["skipped"].as_array().unwrap().len(), 3, "{again}");
    let list = sock2
        .call("planner.list", &json!({ "done": true }))
        .await
        .unwrap();
    let mine = sock
        .call("planner.list", &json!({ "done": true }))
        .await
        .unwrap();
    let shape = |l: &Value| {
        let mut v: Vec<(String, String, Option<i64>)> = l
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["kind"].as_str().unwrap().to_string(),
                    i["text"].as_str().unwrap().to_string(),
                    // To the second: iCalendar's times have no milliseconds.
                    i["due_at"].as_i64().map(|t| t / 1000),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(shape(&list), shape(&mine));
    // The reminder it brought falls due there too.
    let reminder = list
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "reminder")
        .unwrap();
    let due = sock2
        .call("system.events", &json!({ "types": ["planner.changed"] }))
        .await
        .unwrap();
    assert!(due.as_array().unwrap().len() >= 3);
    assert!(reminder["due_at"].as_i64().unwrap() > vyre::now_ms());

    // A file that is not one, or breaks a line, is refused in words and adds nothing.
    for (bad, says) in [
        ("hello", "not an iCalendar file"),
        (
            "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nDTSTART:soon\nEND:VEVENT\nEND:VCALENDAR",
            "line 4",
        ),
    ] {
        let e = sock2
            .call("planner.import", &json!({ "ics": bad }))
            .await
            .unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
    let after = sock2
        .call("planner.list", &json!({ "done": true }))
        .await
        .unwrap();
    assert_eq!(after.as_array().unwrap().len(), 3);
    there.stop().await;
    vyred.stop().await;
}
