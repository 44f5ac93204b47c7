//! A warm spare takes its first turn ahead (issue 26 goal 1, ADR 0032 amended), on the real
//! Claude Code CLI: its own prompt is held back by vyred's UserPromptSubmit callback, so no
//! request reaches the API and the person's first prompt is the model's first; a spare let go
//! unused leaves no transcript and is never listed as a session; a folder whose settings run a
//! UserPromptSubmit hook of their own gets a spare that is not readied this way (the hook never
//! sees a prompt the person did not write).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use vyre::modules::sessions::claude_warm::PROMPT;

use crate::spares::{spares, start};
use crate::threads_e2e::{Rig, rig_full};

/// The spare held, once there is one.
async fn spare(r: &Rig) -> Value {
    spares(r, 1).await.remove(0)
}

/// Session `id`'s transcript in the sessions' home, when there is one.
fn transcript(r: &Rig, id: &str) -> Option<PathBuf> {
    vyre::kernel::transcripts::find(&r.home.dir.join("home"), id)
}

async fn listed_sessions(r: &Rig) -> String {
    r.sock
        .call("recall.sessions", &json!({}))
        .await
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_spare_takes_its_first_turn_ahead_without_the_model_and_leaves_nothing_when_let_go() {
    let r = rig_full("spares-ready", json!({ "spares": 1 }), true, json!({})).await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    start(&r, &mut stream, &r.work, "first words").await;
    let asked_before = r.api.requests().len();

    let held = spare(&r).await;
    let id = held["thread"].as_str().unwrap().to_string();
    // Readied, as the person's list of spares says: its own prompt was held back, as its
    // transcript says; nothing reached the API.
    assert_eq!(
        (&held["readied"], &held["not_readied"]),
        (&json!(true), &Value::Null),
        "{held}"
    );
    let path = transcript(&r, &id).expect("a readied spare's transcript");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("blocked by hook") && text.contains(PROMPT),
        "{text}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        r.api.requests().len(),
        asked_before,
        "{:?}",
        r.api.requests().iter().map(|q| &q.path).collect::<Vec<_>>()
    );
    // A transcript where nothing was said is no session to list, not even once recall read it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!listed_sessions(&r).await.contains(&id));

    // Taken: the person's first prompt is the model's first, and the thread shows only theirs.
    let (second, started) = start(&r, &mut stream, &r.work, "second words").await;
    assert_eq!(second, id, "the start took the spare");
    assert_eq!(started["warm"], true, "{started}");
    let sent = r.api.message_requests().last().unwrap().body.to_string();
    assert!(sent.contains("second words"), "{sent}");
    assert!(!sent.contains("Vyre readied this session"), "{sent}");
    let timeline = r
        .sock
        .call("threads.timeline", &json!({ "thread": second }))
        .await
        .unwrap()
        .to_string();
    assert!(timeline.contains("second words"), "{timeline}");
    assert!(!timeline.contains("Vyre readied"), "{timeline}");
    assert!(listed_sessions(&r).await.contains(&id));
    // Closed and resumed from its transcript, the session's history is still only the person's.
    r.sock
        .call("threads.stop", &json!({ "thread": second }))
        .await
        .unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": second, "text": "after a resume" }),
        )
        .await
        .unwrap();
    crate::threads_e2e::events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == second.as_str()
    })
    .await;
    let sent = r.api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("second words") && sent.contains("after a resume"),
        "{sent}"
    );
    assert!(!sent.contains("Vyre readied this session"), "{sent}");

    // Let go unused (the folder's CLAUDE.md changed, so the next start is cold): its process
    // and its transcript go.
    let held = spare(&r).await;
    let unused = held["thread"].as_str().unwrap().to_string();
    assert_ne!(unused, second);
    assert!(transcript(&r, &unused).is_some());
    std::fs::write(r.work.join("CLAUDE.md"), "Answer briefly.\n").unwrap();
    let (third, started) = start(&r, &mut stream, &r.work, "third words").await;
    assert_ne!(third, unused);
    assert_eq!(started["warm"], false, "{started}");
    let gone = crate::support::wait_until(Duration::from_secs(10), || {
        transcript(&r, &unused).is_none()
    });
    assert!(gone, "a spare let go unused leaves no transcript");
    assert!(!listed_sessions(&r).await.contains(&unused));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn with_the_harness_off_a_spare_is_readied_by_the_drivers_own_prompt_hook() {
    let r = rig_full("spares-bare", json!({ "spares": 1 }), false, json!({})).await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    start(&r, &mut stream, &r.work, "first words").await;
    let asked_before = r.api.requests().len();
    let held = spare(&r).await;
    assert_eq!(held["readied"], true, "{held}");
    let id = held["thread"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(transcript(&r, &id).unwrap()).unwrap();
    assert!(text.contains("blocked by hook"), "{text}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(r.api.requests().len(), asked_before, "nothing asked ahead");
    // Taken: the person's words are the model's first, and the hook leaves the person's own
    // prompts as they are (no hook error, nothing added).
    let (second, started) = start(&r, &mut stream, &r.work, "second words").await;
    assert_eq!(
        (second.as_str(), &started["warm"]),
        (id.as_str(), &json!(true))
    );
    let sent = r.api.message_requests().last().unwrap().body.to_string();
    assert!(sent.contains("second words"), "{sent}");
    assert!(
        !sent.contains("Vyre readied"),
        "the readying prompt was sent"
    );
    assert!(
        !sent.contains("hook additional context"),
        "the hook added words"
    );
    let text = std::fs::read_to_string(transcript(&r, &id).unwrap()).unwrap();
    assert_eq!(text.matches("blocked by hook").count(), 1, "{text}");
    assert!(!text.contains("hook error"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_folder_with_its_own_prompt_hook_gets_a_spare_that_never_shows_it_a_prompt() {
    let r = rig_full("spares-hooked", json!({ "spares": 1 }), true, json!({})).await;
    // The repository's own hook: it writes down every prompt it is shown.
    std::fs::create_dir_all(r.work.join(".claude")).unwrap();
    let hooks = json!({ "hooks": { "UserPromptSubmit": [{ "hooks": [{
        "type": "command", "command": "cat >> prompts-seen.jsonl; echo >> prompts-seen.jsonl" }] }] } });
    std::fs::write(r.work.join(".claude/settings.json"), hooks.to_string()).unwrap();
    let seen = || std::fs::read_to_string(r.work.join("prompts-seen.jsonl")).unwrap_or_default();
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    start(&r, &mut stream, &r.work, "first words").await;
    assert!(seen().contains("first words"), "the hook runs: {}", seen());

    let held = spare(&r).await;
    let id = held["thread"].as_str().unwrap().to_string();
    // Not readied, and the list of spares says why.
    assert_eq!(held["readied"], false, "{held}");
    let why = held["not_readied"].as_str().unwrap_or_default();
    assert!(why.contains("UserPromptSubmit hook"), "{held}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(!seen().contains("Vyre readied"), "{}", seen());
    assert_eq!(seen().matches("\"prompt\"").count(), 1, "{}", seen());
    // Still a warm spare, readied only as far as no one else sees.
    let (second, started) = start(&r, &mut stream, &r.work, "second words").await;
    assert_eq!(second, id);
    assert_eq!(started["warm"], true, "{started}");
    assert_eq!(seen().matches("\"prompt\"").count(), 2, "{}", seen());
    assert!(!seen().contains("Vyre readied"), "{}", seen());
}

/// A stand-in CLI that answers `initialize` and then nothing at all.
const SILENT_CLI: &str = r#"#!/bin/sh
if [ "$1" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi
read line
echo '{"type":"control_response","response":{"subtype":"success","request_id":"vyre-1","response":{}}}'
while read line; do :; done
"#;

/// The processes running `script`.
fn running(script: &std::path::Path) -> usize {
    let needle = script.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle))
        })
        .count()
}

/// A spare whose CLI never answers what it is asked to get ready is stopped, not held (and not
/// left half-made, which would keep any other spare for that start from being made).
#[test]
fn a_spare_whose_cli_does_not_answer_is_stopped_not_held() {
    use std::os::unix::fs::PermissionsExt;
    let home = crate::support::TempHome::new("spares-silent");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let script = home.dir.join("silent-claude");
    std::fs::write(&script, SILENT_CLI).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = json!({ "sessions": { "claude": script, "home": home.dir.join("home"),
        "auth": "login", "spares": 1, "containment": "none" } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let _vyred = home.spawn_daemon();
    let sock = home.socket_client();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(sock.call("threads.start", &json!({ "cwd": work })))
        .unwrap();
    // The thread's session (its shell, and `tini` where installed).
    let session = running(&script);
    assert!(session >= 1);
    assert!(
        crate::support::wait_until(Duration::from_secs(15), || running(&script) > session),
        "a spare is being made"
    );
    assert!(
        crate::support::wait_until(Duration::from_secs(20), || running(&script) == session),
        "the spare that never got ready was stopped"
    );
    let held = rt
        .block_on(sock.call("threads.spares", &json!({})))
        .unwrap();
    assert_eq!(held, json!([]), "{held}");
}
