//! Every file change visible (floor rule 5, issue 25), on the real CLI: a turn whose Bash runs
//! `sed -i` and `touch` shows both files changed and unannounced, with a diff; a Write shows its
//! file announced; what the person changes between turns is not the session's; the person's
//! repository (its index, objects, config) is neither touched nor obeyed.

use serde_json::{Value, json};

use crate::threads_e2e::*;

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
}

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
