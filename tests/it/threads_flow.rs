//! The flow of a thread on the real CLI: interrupt, steering, the queue, fork, rewind, resume,
//! images.

use std::time::Duration;

use serde_json::json;

use crate::support::*;
use crate::threads_e2e::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn interrupt_ends_the_turn_canceled_and_the_next_turn_works() {
    let r = rig("threads-interrupt").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "please answer SLOWLY" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.text" && e["payload"]["delta"].is_string()
    })
    .await;
    r.sock
        .call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let finished = &of_type(&events, "thread.finished")[0]["payload"];
    assert_eq!(
        (finished["canceled"].as_bool(), finished["reason"].as_str()),
        (Some(true), Some("interrupt")),
        "{finished}"
    );
    let idle = events_until(&mut stream, |e| e["type"] == "thread.state").await;
    assert_eq!(idle.last().unwrap()["payload"]["state"], "idle");

    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "are you there" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [are you there]"), "{text}");

    // Stopping vyred stops the session with it, leaving no process behind.
    let pids = r.sock.call("threads.pids", &json!({})).await.unwrap();
    let pid = pids["pids"][0].as_i64().unwrap() as i32;
    r.vyred.stop().await;
    let gone = wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true)
    });
    assert!(gone, "the session's process ended with vyred");
    let events = stored_events(&r.home.home().database());
    let stopped = events
        .iter()
        .rev()
        .find(|(_, kind, _)| kind == "thread.stopped")
        .expect("thread.stopped");
    assert_eq!(stopped.2["reason"], "restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_message_sent_while_a_tool_runs_steers_that_turn() {
    let r = rig("threads-steer").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    // A read-only command runs without asking; steer while it runs.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH sleep 3; echo slept" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.tool" && e["payload"]["phase"] == "started"
    })
    .await;
    let sent = r
        .sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "also mention the weather" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "steer");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let steered = of_type(&events, "thread.steered");
    assert_eq!(
        steered.len(),
        1,
        "the CLI took the message in at a step: {events:?}"
    );
    assert_eq!(steered[0]["payload"]["uuid"], sent["uuid"]);
    assert_eq!(
        of_type(&events, "thread.turn").len(),
        0,
        "no second turn: it joined this one"
    );
    let sent_events = of_type(&events, "thread.sent");
    assert!(sent_events.is_empty() || sent_events[0]["payload"]["via"] == "steer");
    // The folded message reached the model in the same turn.
    let folded = r
        .api
        .message_requests()
        .iter()
        .any(|q| q.body.to_string().contains("also mention the weather"));
    assert!(folded, "the steered words reached the API");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn steered_words_the_turn_never_reached_are_the_next_turn_before_the_queue() {
    let r = rig("threads-late-steer").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    let send = |text: &'static str, mode: &'static str| send_as(&r, &thread, text, mode);
    // A reply of text alone has no step to take a steer in: the CLI answers it after the
    // reply, with a result of its own. Vyre makes that the next turn (ADR 0030: `steered`).
    send("first, SLOWLY", "steer").await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.text" && e["payload"]["delta"].is_string()
    })
    .await;
    let late = send("late words", "steer").await;
    assert_eq!(late["via"], "steer");
    let queued = send("then this", "queue").await;
    assert_eq!(queued["via"], "queued");
    let said = |events: &[serde_json::Value]| -> String {
        of_type(events, "thread.text")
            .iter()
            .filter_map(|e| e["payload"]["delta"].as_str())
            .collect()
    };
    let first = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        said(&first).contains("reply to [first, SLOWLY]"),
        "{}",
        said(&first)
    );
    let second = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let turn = of_type(&second, "thread.turn");
    assert_eq!(turn.len(), 1, "{second:?}");
    assert_eq!(turn[0]["payload"]["text"], "late words");
    assert_eq!(turn[0]["payload"]["steered"], true);
    assert!(
        said(&second).contains("reply to [late words]"),
        "{}",
        said(&second)
    );
    // Then the queued message, answered within its own turn.
    let third = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let turn = of_type(&third, "thread.turn");
    assert_eq!(turn.len(), 1, "{third:?}");
    assert_eq!(turn[0]["payload"]["text"], "then this");
    assert!(
        said(&third).contains("reply to [then this]"),
        "{}",
        said(&third)
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_queue_waits_for_the_turn_and_can_be_edited_taken_back_or_sent_now() {
    let r = rig("threads-queue").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    let send = |text: &'static str, mode: &'static str| send_as(&r, &thread, text, mode);
    send("first, SLOWLY", "steer").await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.text" && e["payload"]["delta"].is_string()
    })
    .await;
    let one = send("queued one", "queue").await;
    let two = send("queued two", "queue").await;
    assert_eq!(
        (one["via"].as_str(), two["via"].as_str()),
        (Some("queued"), Some("queued"))
    );
    r.sock
        .call(
            "threads.edit",
            &json!({ "queued": two["queued"], "text": "queued two, edited" }),
        )
        .await
        .unwrap();
    // The queue as a surface that opens the thread now sees it.
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    let texts: Vec<&str> = got["queued"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|q| q["text"].as_str())
        .collect();
    assert_eq!(texts, ["queued one", "queued two, edited"]);
    r.sock
        .call("threads.unqueue", &json!({ "queued": one["queued"] }))
        .await
        .unwrap();
    let err = r
        .sock
        .call("threads.unqueue", &json!({ "queued": one["queued"] }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not_queued"), "{err}");
    // A message that never was is not found, where one no longer queued is a conflict.
    for (tool, input) in [
        ("threads.unqueue", json!({ "queued": 987654321 })),
        ("threads.edit", json!({ "queued": 987654321, "text": "x" })),
        ("threads.send_now", json!({ "queued": 987654321 })),
    ] {
        let err = r.sock.call(tool, &input).await.unwrap_err();
        assert_eq!(err.code(), Some("unknown_queued"), "{tool}: {err}");
    }

    let events = events_until(&mut stream, |e| e["type"] == "thread.turn").await;
    let queued = of_type(&events, "thread.queued");
    assert_eq!(queued.len(), 3, "two queued, one edited: {queued:?}");
    assert_eq!(queued[2]["payload"]["edited"], true);
    let unqueued = of_type(&events, "thread.unqueued");
    assert_eq!(unqueued[0]["payload"]["reason"], "unqueued");
    assert_eq!(unqueued[1]["payload"]["reason"], "taken");
    let sent = of_type(&events, "thread.sent");
    assert_eq!(sent.last().unwrap()["payload"]["via"], "turn");
    let turn = &events.last().unwrap()["payload"];
    assert_eq!(
        (turn["text"].as_str(), turn["turn"].as_str()),
        (
            Some("queued two, edited"),
            Some(format!("{thread}:2").as_str())
        )
    );
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [queued two, edited]"), "{text}");
    assert!(
        !r.api
            .message_requests()
            .iter()
            .any(|q| q.body.to_string().contains("queued one")),
        "the message taken back never went out"
    );

    // send_now: the running turn is cut short and the queued message runs next.
    send("second, SLOWLY", "steer").await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.text" && e["payload"]["delta"].is_string()
    })
    .await;
    let urgent = send("urgent", "queue").await;
    let now = r
        .sock
        .call("threads.send_now", &json!({ "queued": urgent["queued"] }))
        .await
        .unwrap();
    assert_eq!(now["via"], "now");
    let events = events_until(&mut stream, |e| e["type"] == "thread.turn").await;
    assert_eq!(events.last().unwrap()["payload"]["text"], "urgent");
    assert!(
        of_type(&events, "thread.finished").len() == 1,
        "the cut-short turn finished first"
    );
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [urgent]"), "{text}");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn fork_makes_a_new_thread_and_rewind_continues_from_an_earlier_message() {
    let r = rig("threads-fork").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    let mut uuids = Vec::new();
    for word in ["alpha", "beta", "gamma"] {
        let sent = r
            .sock
            .call("threads.send", &json!({ "thread": thread, "text": word }))
            .await
            .unwrap();
        uuids.push(sent["uuid"].as_str().unwrap().to_string());
        events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    }

    let fork = r
        .sock
        .call("threads.fork", &json!({ "thread": thread }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(fork, thread);
    let events = events_until(&mut stream, |e| e["type"] == "thread.started").await;
    let started = &events.last().unwrap()["payload"];
    assert_eq!(started["forked_from"], thread.as_str());
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": fork, "text": "fork words" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == fork.as_str()
    })
    .await;
    let last = r
        .api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        last.contains("alpha") && last.contains("gamma") && last.contains("fork words"),
        "the fork has the history"
    );

    r.sock
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": uuids[1] }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.rewound").await;
    assert_eq!(events.last().unwrap()["payload"]["uuid"], uuids[1].as_str());
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "delta" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == thread.as_str()
    })
    .await;
    let last = r
        .api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        last.contains("beta") && last.contains("delta"),
        "kept up to the rewind point"
    );
    assert!(!last.contains("gamma"), "what came after it is dropped");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_stopped_thread_resumes_on_the_next_send_and_always_writes_a_rule() {
    let r = rig("threads-resume").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "first words" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let key: String = r
        .work
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let transcript = r
        .home
        .dir
        .join("home/.claude/projects")
        .join(key)
        .join(format!("{thread}.jsonl"));
    let lines_before = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .count();
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.stopped").await;

    let sent = r
        .sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "second words" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "turn");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let started = of_type(&events, "thread.started");
    assert_eq!(started[0]["payload"]["resumed"], true);
    assert_eq!(
        of_type(&events, "thread.turn")[0]["payload"]["turn"],
        format!("{thread}:2")
    );
    let lines_after = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .count();
    assert!(
        lines_after > lines_before,
        "the same transcript grew: {lines_before} -> {lines_after}"
    );
    // The model saw the earlier turn.
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert!(
        last.body.to_string().contains("first words"),
        "the resumed session has its history"
    );

    // "always" writes a rule, so the same call does not ask again.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch always.txt" }),
        )
        .await
        .unwrap();
    answer_next_ask(&r, &mut stream, json!({ "decision": "always" })).await;
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let rules = std::fs::read_to_string(r.work.join(".claude/settings.local.json")).unwrap();
    assert!(rules.contains("touch always.txt"), "{rules}");
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch always.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        of_type(&events, "ask.raised").is_empty(),
        "no second question: {events:?}"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn images_go_with_the_words() {
    let r = rig("threads-images").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
    let image = json!({ "media_type": "image/png", "data": png });
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "what is in this picture", "images": [image] }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        !events.iter().any(|e| e.to_string().contains(png)),
        "image data never rides on events"
    );
    let last = r.api.message_requests().into_iter().last().unwrap();
    let has_image = last.body["messages"].as_array().unwrap().iter().any(|m| {
        m["content"].as_array().is_some_and(|c| {
            c.iter()
                .any(|b| b["type"] == "image" && b["source"]["data"] == png)
        })
    });
    assert!(has_image, "the image reached the model");
    for (bad, why) in [
        (
            json!({ "media_type": "image/tiff", "data": png }),
            "image/png",
        ),
        (
            json!({ "media_type": "image/png", "data": "not base64!" }),
            "base64",
        ),
    ] {
        let err = r
            .sock
            .call(
                "threads.send",
                &json!({ "thread": thread, "text": "x", "images": [bad] }),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
    }
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn on_the_real_cli_an_idle_session_closes_the_cap_holds_and_both_resume() {
    let r = rig_with(
        "threads-idle-cap",
        json!({ "idle_minutes": 0.03, "max_live": 1 }),
    )
    .await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let first = start_thread(&r).await;
    r.sock
        .call("threads.send", &json!({ "thread": first, "text": "one" }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    // With room for one, a second session closes the idle first one.
    let second = start_thread(&r).await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    let stopped = events.last().unwrap();
    assert_eq!(
        (
            stopped["thread"].as_str(),
            stopped["payload"]["reason"].as_str()
        ),
        (Some(first.as_str()), Some("idle"))
    );
    // Left alone, the second closes too, for idleness.
    let events = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    let stopped = events.last().unwrap();
    assert_eq!(
        (
            stopped["thread"].as_str(),
            stopped["payload"]["reason"].as_str()
        ),
        (Some(second.as_str()), Some("idle"))
    );
    // The first resumes on its transcript and remembers.
    r.sock
        .call("threads.send", &json!({ "thread": first, "text": "two" }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "thread.started" && e["payload"]["resumed"] == true)
    );
    let last = r
        .api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        last.contains("one") && last.contains("two"),
        "the resumed session has its history"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn on_the_real_cli_a_vyred_restart_stops_the_session_and_the_next_send_resumes_it() {
    let r = rig("threads-restart").await;
    let Rig {
        home,
        api,
        vyred,
        sock,
        ..
    } = r;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let work = home.dir.join("work");
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "text": "before the restart" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    vyred.stop().await;
    let events = stored_events(&home.home().database());
    let stopped = events
        .iter()
        .rev()
        .find(|(_, kind, _)| kind == "thread.stopped")
        .unwrap();
    assert_eq!(stopped.2["reason"], "restart");

    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let sent = sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "after the restart" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "turn");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "thread.started" && e["payload"]["resumed"] == true)
    );
    assert_eq!(
        events.iter().find(|e| e["type"] == "thread.turn").unwrap()["payload"]["turn"],
        format!("{thread}:2")
    );
    let last = api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(last.contains("before the restart") && last.contains("after the restart"));
    vyred.stop().await;
}
