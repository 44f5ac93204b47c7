//! Concurrency slots (ADR 0030 section 12): subagents of real Claude Code sessions wait in line
//! for a slot in the driver's hook; teammates take theirs with `sessions.slots.*`.

use serde_json::{Value, json};

use crate::support::*;
use crate::threads_e2e::{events_until, rig_with};

fn of<'a>(events: &'a [Value], kind: &str, thread: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["type"] == kind && e["thread"] == thread)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_subagent_waits_in_line_for_a_slot_and_gets_it_when_the_other_ends() {
    let r = rig_with("slots-subagents", json!({ "slots": { "subagent": 1 } })).await;
    let mut stream = r.sock.events("types=slot.*", None).await.unwrap();
    let start = |text: &str| {
        let input = json!({ "cwd": r.work, "text": text });
        let sock = r.sock.clone();
        async move {
            sock.call("threads.start", &input).await.unwrap()["thread"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let first = start("RUNAGENT SLOWLY count to three").await;
    let events = events_until(&mut stream, |e| e["type"] == "slot.taken").await;
    assert_eq!(events.last().unwrap()["thread"], first.as_str());
    assert_eq!(events.last().unwrap()["payload"]["kind"], "subagent");

    let second = start("RUNAGENT count to two").await;
    let events = events_until(&mut stream, |e| e["type"] == "slot.waiting").await;
    let waiting = &events.last().unwrap();
    assert_eq!(waiting["thread"], second.as_str());
    assert_eq!(waiting["payload"]["position"], 1);
    let list = r
        .sock
        .call("sessions.slots.list", &json!({}))
        .await
        .unwrap();
    assert_eq!(list["limits"]["subagent"], 1);
    assert_eq!(list["held"][0]["thread"], first.as_str());
    assert_eq!(list["waiting"][0]["thread"], second.as_str());

    // The first subagent's task ends: its slot goes back and the second's call goes on.
    let events = events_until(&mut stream, |e| {
        e["type"] == "slot.taken" && e["thread"] == second.as_str()
    })
    .await;
    let released = of(&events, "slot.released", &first);
    assert_eq!(released[0]["payload"]["reason"], "done", "{events:?}");
    let taken = of(&events, "slot.taken", &second);
    assert!(taken[0]["payload"]["waited_ms"].as_i64().unwrap() > 0);
    let events = events_until(&mut stream, |e| {
        e["type"] == "slot.released" && e["thread"] == second.as_str()
    })
    .await;
    let released = of(&events, "slot.released", &second);
    assert_eq!(released[0]["payload"]["reason"], "done", "{events:?}");
    let list = r
        .sock
        .call("sessions.slots.list", &json!({}))
        .await
        .unwrap();
    assert_eq!(list["held"], json!([]));
    assert_eq!(list["waiting"], json!([]));
    // The second subagent really ran: its request reached the API after the first's.
    let prompts: Vec<String> = r
        .api
        .message_requests()
        .iter()
        .map(|q| q.body["messages"].to_string())
        .collect();
    assert!(prompts.iter().any(|p| p.contains("count to two")));
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teammates_take_and_release_slots_in_a_fair_line() {
    let home = TempHome::new("slots-teammates");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        json!({ "sessions": { "slots": { "teammate": 1 }, "spares": 0 } }).to_string(),
    )
    .unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let mut stream = sock.events("types=slot.*", None).await.unwrap();
    let take = |project: &str| {
        let sock = sock.clone();
        let input = json!({ "kind": "teammate", "project": project });
        async move { sock.call("sessions.slots.take", &input).await.unwrap() }
    };
    let a1 = take("a").await;
    assert_eq!(a1["state"], "held");
    let a2 = take("a").await;
    let b1 = take("b").await;
    assert_eq!(
        (a2["state"].as_str(), a2["position"].as_u64()),
        (Some("waiting"), Some(1))
    );
    assert_eq!(b1["position"], 1, "b's turn comes before a's second");
    events_until(&mut stream, |e| {
        e["type"] == "slot.waiting"
            && e["payload"]["slot"] == a2["slot"]
            && e["payload"]["position"] == 2
    })
    .await;
    // a2 was first in line; b came and took the place ahead of it (fair between projects).
    let list = sock.call("sessions.slots.list", &json!({})).await.unwrap();
    let position = |slot: &Value| {
        list["waiting"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| &w["slot"] == slot)
            .map(|w| w["position"].clone())
    };
    assert_eq!(
        (position(&b1["slot"]), position(&a2["slot"])),
        (Some(json!(1)), Some(json!(2))),
        "{list}"
    );
    sock.call("sessions.slots.release", &json!({ "slot": a1["slot"] }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| {
        e["type"] == "slot.taken" && e["payload"]["slot"] == b1["slot"]
    })
    .await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "slot.released" && e["payload"]["slot"] == a1["slot"])
    );
    let events = events_until(&mut stream, |e| {
        e["type"] == "slot.waiting" && e["payload"]["slot"] == a2["slot"]
    })
    .await;
    assert_eq!(
        events.last().unwrap()["payload"]["position"],
        1,
        "a2 moved up"
    );
    let err = sock
        .call("sessions.slots.release", &json!({ "slot": "slot-999" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_slot"));
    let err = sock
        .call("sessions.slots.take", &json!({ "kind": "robot" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("invalid_input"));
    vyred.stop().await;
}
