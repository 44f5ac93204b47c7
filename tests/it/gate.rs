//! The Gate on the real CLI (spec 7.7, issue 24): a session's `git push` to a bare repository on
//! this machine is held, not asked and not run, until a person approves it; a rejection reaches
//! Claude with its reason; an edited approval runs the edited command; what stays on this
//! machine is asked about as before.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::git;
use crate::threads_e2e::*;

/// The rig's folder as a repository with one commit, and a bare remote beside it.
fn repository(r: &Rig) -> std::path::PathBuf {
    let remote = r.home.dir.join("remote.git");
    std::fs::create_dir_all(&remote).unwrap();
    git(&remote, &["init", "-q", "--bare", "-b", "main"]);
    git(&r.work, &["init", "-q", "-b", "main"]);
    git(&r.work, &["config", "user.email", "dev@example.com"]);
    git(&r.work, &["config", "user.name", "Dev"]);
    std::fs::write(r.work.join("notes.txt"), "the walrus plan\n").unwrap();
    git(&r.work, &["add", "notes.txt"]);
    git(&r.work, &["commit", "-q", "-m", "Add the walrus plan"]);
    git(
        &r.work,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    remote
}

fn branches(remote: &Path) -> String {
    git(remote, &["branch", "--list", "--format=%(refname:short)"])
}

/// Send `text` and wait until the Gate holds its call: the item as `gate.held` lists it.
async fn held_after(
    r: &Rig,
    stream: &mut vyre::surfaces::client::EventStream,
    thread: &str,
    text: &str,
) -> Value {
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    let events = events_until(stream, |e| {
        matches!(e["type"].as_str(), Some("gate.held" | "ask.raised"))
    })
    .await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "gate.held", "held, not asked: {last}");
    assert_eq!(last["thread"], thread);
    let held = r
        .sock
        .call("gate.held", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(held.as_array().unwrap().len(), 1, "{held}");
    held[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_push_waits_for_the_person_and_goes_only_when_approved() {
    let r = rig("gate-push").await;
    let remote = repository(&r);
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,gate.*", None)
        .await
        .unwrap();
    // A session that wrote its repository's config to run its programs when vyred reads the
    // push (the threat model's hostile session): vyred reads it with git under settings that
    // run none of them.
    let marker = r.home.dir.join("pwned");
    let evil = format!("sh -c 'touch {}'", marker.display());
    for (key, value) in [
        ("core.fsmonitor", evil.as_str()),
        ("core.pager", evil.as_str()),
        ("diff.evil.textconv", evil.as_str()),
        ("diff.external", evil.as_str()),
        ("log.showSignature", "true"),
        ("gpg.program", evil.as_str()),
    ] {
        git(&r.work, &["config", key, value]);
    }
    std::fs::write(r.work.join(".gitattributes"), "* diff=evil\n").unwrap();
    let thread = start_thread(&r).await;
    let item = held_after(&r, &mut stream, &thread, "RUNBASH git push origin main").await;
    assert!(
        !marker.exists(),
        "vyred ran a program the repository's config named"
    );
    // What the person sees before it goes: where, and the commit it sends.
    assert_eq!(item["kind"], "send");
    assert_eq!(item["rule"], "git-push");
    assert_eq!(item["field"], "command");
    let destination = item["destination"].as_str().unwrap();
    assert!(
        destination.contains(remote.to_str().unwrap()) && destination.contains("main"),
        "{destination}"
    );
    let content = item["content"].as_str().unwrap();
    assert!(
        content.starts_with("git push origin main")
            && content.contains("Add the walrus plan")
            && content.contains("+the walrus plan"),
        "{content}"
    );
    // The session waits on the person (said after the hold: the Gate holds, then the thread
    // says it waits); nothing went out.
    events_until(&mut stream, |e| {
        e["type"] == "thread.state" && e["payload"]["state"] == "waiting"
    })
    .await;
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["state"], "waiting", "{got}");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(branches(&remote), "", "nothing pushed before approval");

    let approved = r
        .sock
        .call("gate.approve", &json!({ "item": item["item"] }))
        .await
        .unwrap();
    assert_eq!(approved["state"], "approved");
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(branches(&remote), "main", "pushed once approved");
    let said = of_type(&events, "gate.approved");
    assert_eq!(said.len(), 1, "{events:?}");
    assert!(
        said[0]["payload"]["by"]
            .as_str()
            .unwrap()
            .starts_with("socket:")
    );
    assert!(
        of_type(&events, "ask.raised").is_empty(),
        "never asked as well"
    );
    // Decided: it cannot be decided again, and nothing is held.
    let again = r
        .sock
        .call("gate.reject", &json!({ "item": item["item"] }))
        .await
        .unwrap_err();
    assert!(again.to_string().contains("decided"), "{again}");
    assert_eq!(
        r.sock.call("gate.held", &json!({})).await.unwrap(),
        json!([])
    );
    let all = r
        .sock
        .call("gate.held", &json!({ "all": true }))
        .await
        .unwrap();
    assert_eq!(all[0]["state"], "approved");

    // What stays on this machine is asked about as before, not held.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch made.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| {
        matches!(e["type"].as_str(), Some("gate.held" | "ask.raised"))
    })
    .await;
    assert_eq!(events.last().unwrap()["type"], "ask.raised");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_rejection_tells_claude_why_and_an_edit_sends_the_edited_words() {
    let r = rig("gate-edit").await;
    let remote = repository(&r);
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,gate.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;

    let item = held_after(&r, &mut stream, &thread, "RUNBASH git push origin main").await;
    r.sock
        .call(
            "gate.reject",
            &json!({ "item": item["item"], "why": "not before the review on Friday" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(of_type(&events, "gate.rejected").len(), 1);
    assert_eq!(branches(&remote), "", "a rejected push sends nothing");
    let told = r.api.message_requests().last().unwrap().body.to_string();
    assert!(
        told.contains("not before the review on Friday") && told.contains("Gate"),
        "Claude reads why: {told}"
    );

    let item = held_after(&r, &mut stream, &thread, "RUNBASH git push origin main").await;
    r.sock
        .call(
            "gate.approve",
            &json!({ "item": item["item"], "edited": "git push origin main:reviewed" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        of_type(&events, "gate.approved")[0]["payload"]["edited"],
        true
    );
    assert_eq!(
        branches(&remote),
        "reviewed",
        "the edited command ran, not the first"
    );
    let all = r
        .sock
        .call("gate.held", &json!({ "all": true }))
        .await
        .unwrap();
    assert_eq!(all[1]["edited"], "git push origin main:reviewed");
    assert_eq!(all[0]["why"], "not before the review on Friday");

    // Held, then interrupted: withdrawn, and approving it sends nothing.
    let item = held_after(&r, &mut stream, &thread, "RUNBASH git push origin main").await;
    r.sock
        .call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "gate.withdrawn").await;
    let late = r
        .sock
        .call("gate.approve", &json!({ "item": item["item"] }))
        .await
        .unwrap_err();
    assert!(late.to_string().contains("withdrawn"), "{late}");
    assert_eq!(branches(&remote), "reviewed");
    r.vyred.stop().await;
}

async fn accept_edits(r: &Rig, stream: &mut vyre::surfaces::client::EventStream, thread: &str) {
    r.sock
        .call(
            "threads.mode",
            &json!({ "thread": thread, "mode": "acceptEdits" }),
        )
        .await
        .unwrap();
    events_until(stream, |e| e["type"] == "mode.changed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn in_accept_edits_a_push_is_still_held_and_a_gate_that_cannot_check_asks() {
    // Accept edits runs Bash without asking: the Gate still holds what sends as the person.
    let r = rig("gate-accept").await;
    let remote = repository(&r);
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,gate.*,mode.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    accept_edits(&r, &mut stream, &thread).await;
    send_and_finish(&r, &mut stream, &thread, "RUNBASH touch quietly.txt").await;
    assert!(
        r.work.join("quietly.txt").exists(),
        "ran without a question"
    );
    let item = held_after(&r, &mut stream, &thread, "RUNBASH git push origin main").await;
    assert_eq!(branches(&remote), "");
    r.sock
        .call("gate.reject", &json!({ "item": item["item"] }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(branches(&remote), "");
    r.vyred.stop().await;

    // A gate section the module refuses: the module is off, and every Bash call is asked.
    let r = rig_configured(
        "gate-broken",
        json!({ "gate": { "hold": [{ "kind": "send" }] } }),
    )
    .await;
    let modules = r.sock.call("system.modules", &json!({})).await.unwrap();
    let gate = modules
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "gate")
        .unwrap();
    assert_eq!(gate["state"], "disabled", "{gate}");
    assert!(
        gate["reason"].as_str().unwrap().contains("command"),
        "{gate}"
    );
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,gate.*,mode.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    accept_edits(&r, &mut stream, &thread).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch quietly.txt" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| {
        matches!(e["type"].as_str(), Some("ask.raised" | "thread.finished"))
    })
    .await;
    assert_eq!(
        events.last().unwrap()["type"],
        "ask.raised",
        "asked, not run"
    );
    assert!(!r.work.join("quietly.txt").exists());
    r.vyred.stop().await;
}

/// Send `text` and let the turn run to its end, answering nothing.
async fn send_and_finish(
    r: &Rig,
    stream: &mut vyre::surfaces::client::EventStream,
    thread: &str,
    text: &str,
) {
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    let events = events_until(stream, |e| {
        matches!(
            e["type"].as_str(),
            Some("thread.finished" | "ask.raised" | "gate.held")
        )
    })
    .await;
    assert_eq!(
        events.last().unwrap()["type"],
        "thread.finished",
        "{events:?}"
    );
}
