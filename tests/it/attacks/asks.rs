//! An ask shows the person exactly what they approve: the command and the file, with only a matched credential masked.
//!
//! The attacker is a session gone wrong: it hides what a command does behind a comment that
//! looks like a credential, hoping the ask shows one opaque "[redacted]" string the person
//! approves blind. On the real CLI, the ask shows the whole command and file with only the key's
//! secret part masked, and the event log holds nothing of the key beyond its public prefix.

use serde_json::{Value, json};

use crate::support::*;
use crate::threads_e2e::*;

/// A fake key made at run time (no credential sits in the source): a public prefix and a secret
/// tail, which must never be stored or broadcast.
fn fake_key() -> (String, String) {
    let tail: String = "Q7fakeTAILw3Zx9Lp2Vb8Nm4Kd6Hs1Jr5Gt0"
        .chars()
        .cycle()
        .take(72)
        .collect();
    (format!("sk-ant-api03-{tail}"), tail)
}

/// Whether `text` holds any 8 characters of `tail` in a row.
fn holds_part_of(text: &str, tail: &str) -> bool {
    let chars: Vec<char> = tail.chars().collect();
    chars
        .windows(8)
        .map(|w| w.iter().collect::<String>())
        .any(|w| text.contains(&w))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_ask_shows_the_whole_command_and_file_with_only_the_key_masked() {
    let r = rig("atk-asks").await;
    let (key, tail) = fake_key();
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;

    // A command whose comment looks like a credential.
    let command = format!("echo hi > shown.txt # {key}");
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": format!("RUNBASH {command}") }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = of_type(&events, "ask.raised")[0]["payload"].clone();
    let shown = "echo hi > shown.txt # sk-ant-…[redacted]";
    assert_eq!(raised["input"]["command"], shown, "{raised}");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["asks"][0]["input"]["command"], shown, "{got}");
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "allow" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    // What was approved is what ran: the command itself, not its masked form.
    assert_eq!(
        std::fs::read_to_string(r.work.join("shown.txt")).unwrap(),
        "hi\n"
    );

    // A file whose content holds the key: the path shows whole, the content with the key masked.
    let file = r.work.join("settings.env");
    let write = json!({ "file_path": file, "content": format!("MODE=fast\nKEY={key}\n") });
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": format!("CALLTOOL Write {write}") }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = of_type(&events, "ask.raised")[0]["payload"].clone();
    assert_eq!(raised["tool"], "Write");
    assert_eq!(raised["input"]["file_path"], json!(file), "{raised}");
    assert_eq!(
        raised["input"]["content"], "MODE=fast\nKEY=sk-ant-…[redacted]\n",
        "{raised}"
    );
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "deny" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(!file.exists(), "the denied write did not happen");

    // Nothing of the key's secret part was stored in, or broadcast from, the event log.
    r.vyred.stop().await;
    let stored = stored_events(&r.home.home().database());
    let asks: Vec<&Value> = stored
        .iter()
        .filter(|(_, kind, _)| kind == "ask.raised")
        .map(|(_, _, payload)| payload)
        .collect();
    assert_eq!(asks.len(), 2, "{asks:?}");
    for (id, kind, payload) in &stored {
        assert!(
            !holds_part_of(&payload.to_string(), &tail),
            "event {id} ({kind}) holds part of the key: {payload}"
        );
    }
    for e in &events {
        assert!(!holds_part_of(&e.to_string(), &tail), "{e}");
    }
}
