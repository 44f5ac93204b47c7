//! A watcher end to end on the real Claude Code CLI (issue 23, spec 7.6 and 8): the model
//! writes it through Vyre's MCP tools and tries it; the person sees it waiting, turns it on;
//! it runs on its schedule from the kernel's timer and files what it finds into the project.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::{Client, EventStream};

use crate::threads_e2e::{events_until, of_type, rig_with_harness};

const SERVER: &str = "mcp__plugin_vyre_vyre__";

/// Each of Vyre's tools the model calls is the person's to allow, as any tool is: allow the
/// next ask and wait for the turn's end; the ask and the turn's events.
async fn allow_and_finish(sock: &Client, stream: &mut EventStream) -> (Value, Vec<Value>) {
    let events = events_until(stream, |e| e["type"] == "ask.raised").await;
    let ask = of_type(&events, "ask.raised")[0]["payload"].clone();
    sock.call(
        "threads.answer",
        &json!({ "ask": ask["ask"], "decision": "allow" }),
    )
    .await
    .unwrap();
    (
        ask,
        events_until(stream, |e| e["type"] == "thread.finished").await,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_model_writes_and_tries_a_watcher_the_person_turns_it_on_and_it_files_on_schedule() {
    if vyre::kernel::jail::bwrap().is_none() || vyre::kernel::jail::find("node").is_none() {
        eprintln!("skipped: watchers need bwrap and node");
        return;
    }
    let r = rig_with_harness("watchers-e2e").await;
    r.sock
        .call(
            "projects.create",
            &json!({ "name": "Site", "home": r.work }),
        )
        .await
        .unwrap();
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,watcher.*", None)
        .await
        .unwrap();
    let script = "export async function watch({ since, emit }) { emit({ title: 'Release 2.0 is out', url: 'https://example.com/r/2', id: 'r2' }); return (since ?? 0) + 1; }";
    let create =
        json!({ "name": "releases", "project": "Site", "schedule": "* * * * *", "script": script });
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "project": "Site", "text": format!("CALLTOOL {SERVER}watchers_create {create}") }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let (ask, events) = allow_and_finish(&r.sock, &mut stream).await;
    assert_eq!(ask["tool"], format!("{SERVER}watchers_create"));
    assert_eq!(events.last().unwrap()["payload"]["ok"], true, "{events:?}");
    let made = r.sock.call("watchers.list", &json!({})).await.unwrap()[0].clone();
    assert_eq!(made["name"], "releases");
    assert_eq!(made["paused"], true, "it waits for the person: {made}");
    assert_eq!(made["created_by"], thread.as_str());
    assert!(
        r.home
            .vyre_home()
            .join("watchers/releases/watch.js")
            .exists()
    );

    // The model tries it: what it would file comes back to it, and nothing is filed.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": format!("CALLTOOL {SERVER}watchers_test {{\"name\":\"releases\"}}") }),
        )
        .await
        .unwrap();
    let (_, events) = allow_and_finish(&r.sock, &mut stream).await;
    let said: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(
        said.contains("Release 2.0 is out"),
        "the try's items reach the model: {said}"
    );
    let none = r.sock.call("watchers.items", &json!({})).await.unwrap();
    assert_eq!(none["items"].as_array().unwrap().len(), 0);

    // The person turns it on; it runs at the next minute and files the release, once.
    let on = r
        .sock
        .call("watchers.resume", &json!({ "name": "releases" }))
        .await
        .unwrap();
    assert!(on["next_run_at"].as_i64().is_some(), "{on}");
    let ran = tokio::time::timeout(
        Duration::from_secs(75),
        events_until(&mut stream, |e| e["type"] == "watcher.ran"),
    )
    .await
    .expect("it ran on its schedule");
    assert_eq!(ran.last().unwrap()["payload"]["filed"], 1);
    let items = r
        .sock
        .call("watchers.items", &json!({ "project": "Site" }))
        .await
        .unwrap();
    assert_eq!(items["items"][0]["title"], "Release 2.0 is out");
    assert_eq!(items["items"][0]["url"], "https://example.com/r/2");
    let told = r
        .sock
        .call(
            "system.events",
            &json!({ "types": ["watch.releases.item"] }),
        )
        .await
        .unwrap();
    assert_eq!(told.as_array().map(Vec::len), Some(1), "{told}");
    assert_eq!(told[0]["project"], Value::from("Site"));
    r.vyred.stop().await;
}
