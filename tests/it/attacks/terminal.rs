//! A person's plain `claude` with the harness (a terminal session Vyre did not start) cannot
//! take or bind another session's hook: its Bash hands `vyre hook` another session's id, and
//! the refusal leaves every binding as it was.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::read;
use super::threads::transcript;
use crate::support::*;
use crate::threads_e2e::{events_until, of_type};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_terminal_session_cannot_take_or_bind_another_sessions_hook() {
    let cli = crate::claude_e2e::claude_bin();
    let api = crate::fake_api::FakeApi::start().await;
    let home = TempHome::new("attack-hook");
    let (victim_dir, attacker_dir) = (home.dir.join("victim"), home.dir.join("attacker"));
    for d in [&victim_dir, &attacker_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    // An earlier session of the victim's folder, closed: its id is on disk for anyone to read.
    let closed = "7a1c2b3d-0000-4000-8000-00000000c105";
    transcript(
        &home,
        closed,
        &victim_dir,
        "an earlier session of the victim",
    );
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let mut stream = sock.events("types=thread.*,harness.*", None).await.unwrap();
    let mut indexed = false;
    for _ in 0..400 {
        let s = sock.call("recall.status", &json!({})).await.unwrap();
        if s["sessions"] == 1 {
            indexed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(indexed, "recall read the closed session");
    // A person's terminal has session `s` for a while (its Bash sleeps), with the harness.
    let s = "7a1c2b3d-0000-4000-8000-00000000f00d";
    let victim = crate::harness::terminal_claude(
        &home,
        &api,
        &cli,
        &victim_dir,
        &[
            "-p",
            "RUNBASH sleep 12",
            "--session-id",
            s,
            "--allowedTools",
            "Bash",
        ],
    )
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "harness.bound" && e["payload"]["session"] == s
    })
    .await;
    let sent = sock
        .call(
            "threads.send",
            &json!({ "thread": s, "text": "PERSONAL-WORDS for the victim" }),
        )
        .await
        .unwrap();
    assert_eq!(sent["via"], "queued", "the terminal has it: {sent}");
    let bound = sock
        .call("harness.binding", &json!({ "session": s }))
        .await
        .unwrap();
    assert_eq!(bound["pid"], victim.id(), "{bound}");

    // Another terminal session's Bash hands `vyre hook` the victim's session id.
    let steal = format!(
        "printf '%s' '{{\"session_id\":\"{s}\",\"hook_event_name\":\"Stop\"}}' | vyre hook Stop > stop.txt\n\
         printf '%s' '{{\"session_id\":\"{s}\",\"hook_event_name\":\"SessionStart\",\"cwd\":\"{}\"}}' | vyre hook SessionStart > start.txt\n\
         printf '%s' '{{\"session_id\":\"{closed}\",\"hook_event_name\":\"SessionStart\",\"cwd\":\"{}\"}}' | vyre hook SessionStart > closed.txt\n",
        victim_dir.display(),
        victim_dir.display()
    );
    std::fs::write(attacker_dir.join("steal.sh"), steal).unwrap();
    let out = tokio::task::block_in_place(|| {
        crate::harness::terminal_claude(
            &home,
            &api,
            &cli,
            &attacker_dir,
            &["-p", "RUNBASH sh steal.sh", "--allowedTools", "Bash"],
        )
        .output()
        .unwrap()
    });
    assert!(
        attacker_dir.join("stop.txt").exists(),
        "the attack ran: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stolen = read(&attacker_dir, "stop.txt");
    assert!(!stolen.contains("PERSONAL-WORDS"), "{stolen}");
    // The victim's binding is the victim's still.
    let bound = sock
        .call("harness.binding", &json!({ "session": s }))
        .await
        .unwrap();
    assert_eq!(bound["pid"], victim.id(), "{bound}");
    // Nor can it take the victim's closed session for its own, to have its words held for it.
    let bound = sock
        .call("harness.binding", &json!({ "session": closed }))
        .await
        .unwrap();
    assert_eq!(bound["pid"], Value::Null, "{bound}");

    // And the words reach the session they were for, at its turn's end.
    let out = tokio::task::block_in_place(|| victim.wait_with_output()).unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("PERSONAL-WORDS for the victim"), "{said}");
    let events = events_until(&mut stream, |e| e["type"] == "thread.unqueued").await;
    let unqueued = of_type(&events, "thread.unqueued");
    assert_eq!(unqueued.last().unwrap()["payload"]["reason"], "delivered");
    vyred.stop().await;
}
