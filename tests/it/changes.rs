//! Every file change visible (floor rule 5, issue 25), on the real CLI: a turn whose Bash runs
//! `sed -i` and `touch` shows both files changed and unannounced, with a diff; a Write shows its
//! file announced; what the person changes between turns is not the session's; the person's
//! repository (its index, objects, config) is neither touched nor obeyed.

use serde_json::{Value, json};

use crate::support::git;
use crate::threads_e2e::*;

/// Every file under `dir`, with its bytes.
fn files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

async fn turn_changes(r: &Rig, thread: &str, turn: &Value) -> Value {
    let all = r
        .sock
        .call(
            "threads.changes",
            &json!({ "thread": thread, "turn": turn }),
        )
        .await
        .unwrap();
    assert_eq!(all.as_array().unwrap().len(), 1, "{all}");
    all[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_commands_changes_show_unannounced_and_a_writes_announced() {
    let r = rig("changes").await;
    // The person's repository, hostile: its config would run a program if git obeyed it.
    git(&r.work, &["init", "-q", "-b", "main"]);
    let marker = r.home.dir.join("pwned");
    let evil = format!("sh -c 'touch {}'", marker.display());
    git(&r.work, &["config", "core.fsmonitor", &evil]);
    git(&r.work, &["config", "filter.evil.clean", &evil]);
    std::fs::write(r.work.join(".gitattributes"), "* filter=evil\n").unwrap();
    std::fs::write(r.work.join("notes.txt"), "the old plan\nline two\n").unwrap();
    std::fs::write(r.work.join("keep.txt"), "kept\n").unwrap();
    let dot_git = files(&r.work.join(".git"));

    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH sed -i s/old/new/ notes.txt && touch made.txt" }),
        )
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &thread).await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.changed").await;
    let changed = &events.last().unwrap()["payload"];
    assert_eq!(changed["files"], 2, "{changed}");
    assert_eq!(changed["unannounced"], 2, "{changed}");
    assert_eq!(
        (changed["added"].clone(), changed["modified"].clone()),
        (json!(1), json!(1))
    );
    let turn = changed["turn"].clone();
    let got = turn_changes(&r, &thread, &turn).await;
    let by_path = |p: &str| {
        got["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == p)
            .cloned()
            .unwrap_or_else(|| panic!("{p} not in {got}"))
    };
    let notes = by_path("notes.txt");
    assert_eq!(
        (notes["status"].clone(), notes["announced"].clone()),
        (json!("modified"), json!(false))
    );
    let diff = notes["diff"].as_str().unwrap();
    assert!(
        diff.contains("-the old plan") && diff.contains("+the new plan"),
        "{diff}"
    );
    assert_eq!(by_path("made.txt")["status"], "added");

    // A Write says what it writes: announced.
    let written = r.work.join("written.txt");
    let call = json!({ "file_path": written, "content": "written by Claude\n" });
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": format!("CALLTOOL Write {call}") }),
        )
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &thread).await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.changed").await;
    let changed = &events.last().unwrap()["payload"];
    assert_eq!(changed["files"], 1, "{changed}");
    assert_eq!(changed["unannounced"], 0, "{changed}");
    assert_eq!(changed["paths"][0]["path"], "written.txt");

    // What the person changes between turns is not the session's.
    std::fs::write(r.work.join("keep.txt"), "the person's own edit\n").unwrap();
    send_until_finished(&r, &mut stream, &thread, "just words").await;
    let all = r
        .sock
        .call("threads.changes", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        all.as_array().unwrap().len(),
        2,
        "two turns changed files: {all}"
    );
    assert!(!all.to_string().contains("keep.txt"), "{all}");

    // Putting a turn back: a session may not; a person may, one file or all; never over work
    // that came after.
    let socket = r.home.vyre_home().join("s").join(format!("{thread}.sock"));
    let refused = vyre::surfaces::client::Client::socket(&socket)
        .call("threads.revert", &json!({ "thread": thread, "turn": turn }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("person_only"), "{refused}");
    assert!(r.work.join("made.txt").exists());
    let written_turn = all[1]["turn"].clone();
    std::fs::write(&written, "the person's later words\n").unwrap();
    let newer = r
        .sock
        .call(
            "threads.revert",
            &json!({ "thread": thread, "turn": written_turn }),
        )
        .await
        .unwrap_err();
    assert_eq!(newer.code(), Some("changed_since"), "{newer}");
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "the person's later words\n"
    );
    let one = r
        .sock
        .call(
            "threads.revert",
            &json!({ "thread": thread, "turn": turn, "path": "made.txt" }),
        )
        .await
        .unwrap();
    assert_eq!(one["paths"], json!(["made.txt"]));
    assert!(!r.work.join("made.txt").exists());
    assert!(
        std::fs::read_to_string(r.work.join("notes.txt"))
            .unwrap()
            .contains("new plan")
    );
    // A link planted where the file was: the revert refuses rather than write through it.
    let outside = r.home.dir.join("outside.txt");
    std::fs::write(&outside, "not the session's\n").unwrap();
    std::fs::remove_file(r.work.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, r.work.join("notes.txt")).unwrap();
    let linked = r
        .sock
        .call("threads.revert", &json!({ "thread": thread, "turn": turn }))
        .await
        .unwrap_err();
    assert_eq!(linked.code(), Some("changed_since"), "{linked}");
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "not the session's\n"
    );
    std::fs::remove_file(r.work.join("notes.txt")).unwrap();
    std::fs::write(r.work.join("notes.txt"), "the new plan\nline two\n").unwrap();
    let all_back = r
        .sock
        .call("threads.revert", &json!({ "thread": thread, "turn": turn }))
        .await
        .unwrap();
    assert_eq!(
        all_back["paths"],
        json!(["notes.txt"]),
        "made.txt is already gone: {all_back}"
    );
    assert_eq!(
        std::fs::read_to_string(r.work.join("notes.txt")).unwrap(),
        "the old plan\nline two\n"
    );
    // What the person put back is a learning signal, kept with its turn.
    let mut reverted = vec![];
    for _ in 0..50 {
        let signals = r.sock.call("learn.signals", &json!({})).await.unwrap();
        reverted = signals
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "reverted")
            .cloned()
            .collect();
        if reverted.len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(reverted.len(), 2, "{reverted:?}");
    assert_eq!(reverted[0]["turn"], turn);
    assert!(reverted[1]["text"].as_str().unwrap().contains("made.txt"));

    // A session that writes a huge file cannot fill Vyre's store: the change is said, its
    // content left out.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH truncate -s 70M huge.bin" }),
        )
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &thread).await;
    let events = events_until(&mut stream, |e| e["type"] == "thread.changed").await;
    let changed = &events.last().unwrap()["payload"];
    assert!(
        changed["note"]
            .as_str()
            .unwrap()
            .contains("huge.bin (70 MiB)"),
        "{changed}"
    );
    assert_eq!(changed["paths"][0]["path"], "huge.bin", "{changed}");
    let store: u64 = files(&r.home.vyre_home().join("changes"))
        .iter()
        .map(|(_, b)| b.len() as u64)
        .sum();
    assert!(store < 8 * 1024 * 1024, "the store holds {store} bytes");

    // The person's repository: nothing in .git changed, and nothing it names ran.
    assert!(
        !marker.exists(),
        "vyred ran a program the repository's config named"
    );
    assert!(
        files(&r.work.join(".git")) == dot_git,
        "the person's .git was touched"
    );
    r.vyred.stop().await;
}

/// The uuid of the message that began the turn now running, and the turn's events until its
/// changes are known.
async fn turn_of_message(
    r: &Rig,
    stream: &mut vyre::surfaces::client::EventStream,
    thread: &str,
    text: &str,
) -> String {
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    let began = events_until(stream, |e| e["type"] == "thread.turn").await;
    let uuid = began.last().unwrap()["payload"]["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    allow_until_finished(r, stream, thread).await;
    events_until(stream, |e| e["type"] == "thread.changed").await;
    uuid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_rewind_puts_the_files_back_to_where_that_turn_began() {
    let r = rig("changes-rewind").await;
    std::fs::write(r.work.join("plan.txt"), "zero\n").unwrap();
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    let first = turn_of_message(&r, &mut stream, &thread, "RUNBASH echo one > plan.txt").await;
    let second = turn_of_message(
        &r,
        &mut stream,
        &thread,
        "RUNBASH echo two > plan.txt && echo new > added.txt && mkdir -p d && echo deep > d/x.txt",
    )
    .await;
    // Between the turns the person wrote a file of their own: not the session's to put back.
    std::fs::write(r.work.join("mine.txt"), "the person's\n").unwrap();
    let third = turn_of_message(&r, &mut stream, &thread, "RUNBASH echo three > plan.txt").await;
    let _ = third;

    // Not the session's to do: it may rewind its own thread, but not the files.
    let socket = r.home.vyre_home().join("s").join(format!("{thread}.sock"));
    let refused = vyre::surfaces::client::Client::socket(&socket)
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": second, "files": true }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("person_only"), "{refused}");

    // A message that began no turn cannot place the files.
    let nowhere = r
        .sock
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": "00000000-0000-4000-8000-000000000000", "files": true }),
        )
        .await
        .unwrap_err();
    assert_eq!(nowhere.code(), Some("not_a_turn"), "{nowhere}");

    r.sock
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": second, "files": true }),
        )
        .await
        .unwrap();
    let read = |p: &str| std::fs::read_to_string(r.work.join(p)).ok();
    assert_eq!(
        read("plan.txt").as_deref(),
        Some("one\n"),
        "as turn 2 began"
    );
    assert_eq!(read("added.txt"), None, "added in turn 2: removed");
    assert_eq!(read("d/x.txt"), None);
    assert_eq!(read("mine.txt").as_deref(), Some("the person's\n"));
    let reverted = events_until(&mut stream, |e| e["type"] == "thread.reverted").await;
    let payload = &reverted.last().unwrap()["payload"];
    assert_eq!(payload["rewind"], true, "{payload}");

    // Newer work is never lost: the person edits a file turn 1 changed, then asks to rewind
    // to turn 1 with the files: refused, nothing written.
    std::fs::write(r.work.join("plan.txt"), "edited by hand\n").unwrap();
    let refused = r
        .sock
        .call(
            "threads.rewind",
            &json!({ "thread": thread, "uuid": first, "files": true }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("changed_since"), "{refused}");
    assert!(refused.to_string().contains("plan.txt"), "{refused}");
    assert_eq!(read("plan.txt").as_deref(), Some("edited by hand\n"));
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        got["live"], true,
        "a refusal leaves the session as it was: {got}"
    );
    r.vyred.stop().await;
}
