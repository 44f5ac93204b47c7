//! Threads and their questions on the real CLI: asks allowed, denied and always; the floor;
//! AskUserQuestion and ExitPlanMode; a cancelled ask. (The peer check from inside a session is in
//! `attacks/peer.rs`.)

use serde_json::json;

use crate::threads_e2e::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_tool_call_becomes_an_ask_and_allow_and_deny_are_honoured() {
    let r = rig("threads-ask").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch allowed.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = of_type(&events, "ask.raised")[0]["payload"].clone();
    assert_eq!(
        (raised["kind"].as_str(), raised["tool"].as_str()),
        (Some("tool"), Some("Bash"))
    );
    // What it would run, for the person who decides.
    assert_eq!(raised["input"]["command"], "touch allowed.txt");
    let waiting = events_until(&mut stream, |e| e["type"] == "thread.state").await;
    assert_eq!(waiting.last().unwrap()["payload"]["state"], "waiting");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["asks"][0]["status"], "open");
    assert_eq!(got["asks"][0]["input"]["command"], "touch allowed.txt");
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "allow" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        r.work.join("allowed.txt").exists(),
        "the allowed command ran"
    );
    let tools = of_type(&events, "thread.tool");
    assert!(
        tools.iter().any(|t| t["payload"]["status"] == "completed"),
        "{tools:?}"
    );
    assert_eq!(
        of_type(&events, "ask.answered")[0]["payload"]["decision"],
        "allow"
    );
    // Answering again returns the earlier outcome.
    let again = r
        .sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "deny" }),
        )
        .await
        .unwrap();
    assert_eq!(
        (again["decision"].as_str(), again["already"].as_bool()),
        (Some("allow"), Some(true))
    );

    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch denied.txt" }),
        )
        .await
        .unwrap();
    answer_next_ask(
        &r,
        &mut stream,
        json!({ "decision": "deny", "message": "not today" }),
    )
    .await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        !r.work.join("denied.txt").exists(),
        "the denied command did not run"
    );
    assert!(
        of_type(&events, "thread.tool")
            .iter()
            .any(|t| t["payload"]["status"] == "failed")
    );
    let err = r
        .sock
        .call(
            "threads.answer",
            &json!({ "ask": "nope", "decision": "allow" }),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown_ask"), "{err}");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_floor_denies_without_asking_and_modes_change_only_to_offered_ones() {
    let r = rig("threads-floor").await;
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,mode.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    std::fs::create_dir_all(r.work.join(".claude")).unwrap();
    for command in [
        "rm -rf /",
        "echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .claude/settings.local.json",
    ] {
        r.sock
            .call(
                "threads.send",
                &json!({ "thread": thread, "text": format!("RUNBASH {command}") }),
            )
            .await
            .unwrap();
        let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
        assert!(
            of_type(&events, "ask.raised").is_empty(),
            "{command}: nobody was asked"
        );
        let denied = of_type(&events, "thread.denied");
        assert_eq!(denied.len(), 1, "{command}: {events:?}");
        assert_eq!(denied[0]["payload"]["by"], "floor");
        assert!(
            denied[0]["payload"]["reason"]
                .as_str()
                .unwrap()
                .contains("floor refuses")
        );
        assert!(
            of_type(&events, "thread.tool")
                .iter()
                .any(|t| t["payload"]["status"] == "failed")
        );
    }
    assert!(!r.work.join(".claude/settings.local.json").exists());

    r.sock
        .call(
            "threads.mode",
            &json!({ "thread": thread, "mode": "acceptEdits" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "mode.changed").await;
    assert_eq!(events.last().unwrap()["payload"]["mode"], "acceptEdits");
    let err = r
        .sock
        .call(
            "threads.mode",
            &json!({ "thread": thread, "mode": "bypassPermissions" }),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("default, acceptEdits or plan"),
        "{err}"
    );
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["mode"], "acceptEdits");
    r.sock
        .call(
            "threads.model",
            &json!({ "thread": thread, "model": "claude-fake-2" }),
        )
        .await
        .unwrap();
    // Every surface hears of it.
    let changed = events_until(&mut stream, |e| e["type"] == "thread.model").await;
    assert_eq!(changed.last().unwrap()["payload"]["model"], "claude-fake-2");
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "which model" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert_eq!(last.body["model"], "claude-fake-2");
    r.vyred.stop().await;
}

/// How hard the model thinks: asked at the start, it is Claude Code's effort from the first
/// request; changed, from the next; kept for a resume; one Claude Code has not is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_threads_effort_is_claude_codes_from_its_start_and_when_changed() {
    let r = rig("threads-effort").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let wrong = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "model": "opus", "effort": "ultra" }),
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), Some("invalid_input"), "{wrong}");
    assert!(
        wrong.to_string().contains("low, medium, high, xhigh, max"),
        "{wrong}"
    );
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "model": "opus", "effort": "high", "text": "think hard" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let effort = |body: &serde_json::Value| body["output_config"]["effort"].clone();
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert_eq!(effort(&last.body), "high", "{}", last.body);
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["effort"], "high");

    r.sock
        .call(
            "threads.effort",
            &json!({ "thread": thread, "effort": "low" }),
        )
        .await
        .unwrap();
    let changed = events_until(&mut stream, |e| e["type"] == "thread.effort").await;
    assert_eq!(changed.last().unwrap()["payload"]["effort"], "low");
    send_until_finished(&r, &mut stream, &thread, "less now").await;
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert_eq!(effort(&last.body), "low");

    // Kept for the session that resumes the thread.
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    send_until_finished(&r, &mut stream, &thread, "back again").await;
    let last = r.api.message_requests().into_iter().last().unwrap();
    assert_eq!(effort(&last.body), "low");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn ask_user_question_and_exit_plan_mode_are_asks_of_their_own_kinds() {
    let r = rig("threads-questions").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "ASKQUESTION please" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = &of_type(&events, "ask.raised")[0]["payload"];
    assert_eq!(
        (raised["kind"].as_str(), raised["tool"].as_str()),
        (Some("question"), Some("AskUserQuestion"))
    );
    let answers = json!({ "Which color do you prefer?": "Blue" });
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "allow", "answers": answers }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    // Every surface hears what was chosen.
    assert_eq!(
        of_type(&events, "ask.answered")[0]["payload"]["answers"],
        answers
    );
    assert_eq!(
        raised["input"]["questions"][0]["options"][1]["label"], "Red",
        "the options reach the surfaces"
    );
    let answered = r
        .api
        .message_requests()
        .into_iter()
        .last()
        .unwrap()
        .body
        .to_string();
    assert!(
        answered.contains("Which color do you prefer?") && answered.contains("Blue"),
        "the answer reached the model: {answered}"
    );

    r.sock
        .call("threads.mode", &json!({ "thread": thread, "mode": "plan" }))
        .await
        .unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "EXITPLAN now" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = &of_type(&events, "ask.raised")[0]["payload"];
    assert_eq!(
        (raised["kind"].as_str(), raised["tool"].as_str()),
        (Some("plan"), Some("ExitPlanMode"))
    );
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "allow" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["ok"],
        true
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_interrupt_cancels_the_open_ask_and_answering_it_then_is_refused() {
    let r = rig("threads-cancel-ask").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch never.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let ask = of_type(&events, "ask.raised")[0]["payload"]["ask"].clone();
    r.sock
        .call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let answered = of_type(&events, "ask.answered");
    assert_eq!(
        answered[0]["payload"]["decision"], "cancelled",
        "{events:?}"
    );
    assert_eq!(
        of_type(&events, "thread.finished")[0]["payload"]["canceled"],
        true
    );
    let err = r
        .sock
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "allow" }),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ask_closed"), "{err}");
    assert!(!r.work.join("never.txt").exists());
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["asks"][0]["status"], "cancelled");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_floor_refuses_a_file_tool_writing_the_permission_settings() {
    let r = rig("threads-floor-write").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    std::fs::create_dir_all(r.work.join(".claude")).unwrap();
    let target = r.work.join(".claude/settings.local.json");
    r.sock
        .call(
            "threads.mode",
            &json!({ "thread": thread, "mode": "acceptEdits" }),
        )
        .await
        .unwrap();
    let text = format!("WRITEFILE {}", target.display());
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        of_type(&events, "ask.raised").is_empty(),
        "nobody was asked"
    );
    let denied = of_type(&events, "thread.denied");
    assert_eq!(
        (denied.len(), denied[0]["payload"]["tool"].as_str()),
        (1, Some("Write")),
        "{events:?}"
    );
    assert!(!target.exists(), "the settings file was not written");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn always_for_a_file_switches_the_threads_mode_as_it_switches_the_clis() {
    let r = rig("threads-always-mode").await;
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,mode.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    let first = r.work.join("first.md");
    let text = format!(
        "CALLTOOL Write {}",
        json!({ "file_path": first, "content": "one\n" })
    );
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    let raised = answer_next_ask(&r, &mut stream, json!({ "decision": "always" })).await;
    assert_eq!(raised["tool"], "Write");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(first.exists(), "the file was written");
    let changed = of_type(&events, "mode.changed");
    assert_eq!(
        changed.first().map(|e| e["payload"]["mode"].clone()),
        Some(json!("acceptEdits")),
        "Claude Code's suggestion for a file is Accept edits: {events:?}"
    );
    assert_eq!(changed.len(), 1, "told once: {events:?}");
    assert_eq!(changed[0]["payload"]["by"], "always");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        got["mode"], "acceptEdits",
        "the chip says what the CLI does"
    );
    // And the CLI does: the next file is written without asking.
    let second = r.work.join("second.md");
    let text = format!(
        "CALLTOOL Write {}",
        json!({ "file_path": second, "content": "two\n" })
    );
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(of_type(&events, "ask.raised").is_empty(), "{events:?}");
    assert!(second.exists());
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_threads_mode_follows_claude_code_into_plan_mode_and_out() {
    // The model switches the CLI's mode without Vyre asking: EnterPlanMode needs no answer, an
    // approved ExitPlanMode leaves plan mode. The thread's mode (the chip) follows each time.
    let r = rig("threads-mode-follows").await;
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,mode.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "CALLTOOL EnterPlanMode {}" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let changed = of_type(&events, "mode.changed");
    assert_eq!(changed.len(), 1, "told once: {events:?}");
    assert_eq!(changed[0]["payload"]["mode"], "plan");
    assert_eq!(changed[0]["payload"]["by"], "claude");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["mode"], "plan", "the chip says what the CLI is in");

    let text = format!("CALLTOOL ExitPlanMode {}", json!({ "plan": "write it" }));
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    let raised = answer_next_ask(&r, &mut stream, json!({ "decision": "allow" })).await;
    assert_eq!(raised["tool"], "ExitPlanMode");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let changed = of_type(&events, "mode.changed");
    assert_eq!(
        changed
            .iter()
            .map(|e| e["payload"]["mode"].clone())
            .collect::<Vec<_>>(),
        [json!("default")],
        "{events:?}"
    );
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["mode"], "default");
    r.vyred.stop().await;
}
