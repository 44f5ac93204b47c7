//! Warm spares (issue 26, ADR 0032) on the real Claude Code CLI: a start takes the spare made
//! like the last start, and gets the brief with its first prompt; a spare that no longer fits
//! (exited, its folder replaced, the settings or the CLI changed, another folder or agent) is
//! never handed out, and the start is cold, said in `thread.started`; a spare reads its folder
//! into the changes store before it is taken; Codex gets spares as Claude Code does.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::EventStream;

use crate::threads_e2e::{Rig, events_until, rig_full};

async fn rig_spares(name: &str) -> Rig {
    rig_full(name, json!({ "spares": 1 }), true, json!({})).await
}

/// The spares held, once there are `n` (a spare is made a moment after a start).
pub(crate) async fn spares(r: &Rig, n: usize) -> Vec<Value> {
    for _ in 0..600 {
        let held = r.sock.call("threads.spares", &json!({})).await.unwrap();
        let held = held.as_array().unwrap().clone();
        if held.len() == n {
            return held;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{n} spares were never held");
}

/// Start a thread in `cwd` with a first message; its id, its `thread.started` payload and the
/// events of its first turn.
pub(crate) async fn start(
    r: &Rig,
    stream: &mut EventStream,
    cwd: &std::path::Path,
    text: &str,
) -> (String, Value) {
    let out = r
        .sock
        .call("threads.start", &json!({ "cwd": cwd, "text": text }))
        .await
        .unwrap();
    let thread = out["thread"].as_str().unwrap().to_string();
    let seen = events_until(stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == thread.as_str()
    })
    .await;
    let started = seen
        .iter()
        .find(|e| e["type"] == "thread.started" && e["thread"] == thread.as_str())
        .map(|e| e["payload"].clone())
        .expect("thread.started");
    let finished = seen.last().unwrap();
    assert_eq!(finished["payload"]["ok"], true, "{finished}");
    (thread, started)
}

fn alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_start_takes_the_warm_spare_and_its_first_prompt_gets_the_brief() {
    let r = rig_spares("spares-take").await;
    r.sock
        .call(
            "projects.create",
            &json!({ "name": "Walrus", "home": r.work }),
        )
        .await
        .unwrap();
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let (first, started) = start(&r, &mut stream, &r.work, "first words").await;
    // A cold start's SessionStart is vyred's too: its brief comes with its first prompt.
    let sent = r.api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("first words")
            && sent.contains("this session belongs to the project \\\"Walrus\\\""),
        "{sent}"
    );
    // Every request to the API, not only turns (a spare gets ready without `count_tokens`).
    let asked_before = r.api.requests().len();
    assert_eq!(started["warm"], false, "nothing was held yet: {started}");
    assert!(
        started["cold"].as_str().unwrap().contains("no warm spare"),
        "{started}"
    );

    let held = spares(&r, 1).await;
    let spare = held[0]["thread"].as_str().unwrap().to_string();
    assert_ne!(spare, first);
    assert_eq!(held[0]["cwd"], r.work.display().to_string());
    assert!(
        held[0]["rss_bytes"].as_u64().unwrap() > 10 << 20,
        "its memory is shown: {held:?}"
    );
    // Before it is taken, a spare is no one's thread.
    let err = r
        .sock
        .call("threads.get", &json!({ "thread": spare }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_thread"), "{err}");
    let listed = r.sock.call("threads.list", &json!({})).await.unwrap();
    assert!(!listed.to_string().contains(&spare), "{listed}");

    // A spare waiting, ready for its first turn, asks the API nothing.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        r.api.requests().len(),
        asked_before,
        "{:?}",
        r.api.requests().iter().map(|q| &q.path).collect::<Vec<_>>()
    );
    let (second, started) = start(&r, &mut stream, &r.work, "second words").await;
    assert_eq!(second, spare, "the start took the spare");
    assert_eq!(started["warm"], true, "{started}");
    assert!(started.get("cold").is_none(), "{started}");
    let info = r
        .sock
        .call("threads.get", &json!({ "thread": second }))
        .await
        .unwrap();
    assert_eq!(info["turns"], 1, "{info}");
    // The brief a spare could not have before it was a thread came with its first prompt.
    let sent = r.api.message_requests().last().unwrap().body.to_string();
    assert!(sent.contains("second words"), "{sent}");
    assert!(
        sent.contains("this session belongs to the project \\\"Walrus\\\""),
        "the brief reached the model with the first prompt: {sent}"
    );
    // ... once: the next prompt has no brief.
    let sent_before = r.api.message_requests().len();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": second, "text": "third words" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == second.as_str()
    })
    .await;
    let requests = r.api.message_requests();
    let last = requests[sent_before..]
        .iter()
        .rev()
        .find(|q| q.body.to_string().contains("third words"))
        .unwrap()
        .body
        .to_string();
    let briefs = last.matches("this session belongs to the project").count();
    assert_eq!(
        briefs, 1,
        "the brief is in the history once, not given again: {last}"
    );

    // A new spare is made for the next start; when vyred stops, it stops too.
    let held = spares(&r, 1).await;
    assert_ne!(held[0]["thread"], second.as_str());
    let pid = held[0]["pid"].as_i64().unwrap();
    assert!(alive(pid));
    r.vyred.stop().await;
    assert!(!alive(pid), "the spare's process ended with vyred");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_spare_that_no_longer_fits_is_never_handed_out() {
    // The CLI behind a link, so an "upgrade" can swap it under the same path.
    let bin_dir = crate::support::TempHome::new("spares-bin");
    std::fs::create_dir_all(&bin_dir.dir).unwrap();
    let link = bin_dir.dir.join("claude");
    let swapped = link.clone();
    std::os::unix::fs::symlink(crate::claude_e2e::claude_bin(), &link).unwrap();
    let r = rig_full(
        "spares-stale",
        json!({ "spares": 1, "claude": link }),
        true,
        json!({}),
    )
    .await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    start(&r, &mut stream, &r.work, "warm up").await;

    // Each way a held spare stops fitting, and what the cold start says.
    type Spoil = Box<dyn Fn(&Rig, &Value)>;
    let cases: Vec<(&str, Spoil, &str)> = vec![
        (
            "exited",
            Box::new(|_, held| {
                // Its whole session, as a crash of the CLI under its sandbox leaves it.
                let pid = held["pid"].as_i64().unwrap();
                let sid = held["sid"].as_i64().unwrap() as i32;
                let killed = vyre::modules::sessions::spawn::signal_session(
                    sid,
                    nix::sys::signal::Signal::SIGKILL,
                );
                assert!(killed >= 2, "{killed} processes of {held}");
                while alive(pid) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                std::thread::sleep(Duration::from_millis(200));
            }),
            "had exited",
        ),
        (
            "settings",
            Box::new(|r, _| {
                std::fs::create_dir_all(r.work.join(".claude")).unwrap();
                std::fs::write(r.work.join(".claude/settings.json"), "{}").unwrap();
            }),
            "changed",
        ),
        (
            "folder replaced",
            Box::new(|r, _| {
                std::fs::remove_dir_all(&r.work).unwrap();
                std::fs::create_dir(r.work.with_extension("other")).unwrap();
                std::fs::create_dir(&r.work).unwrap();
            }),
            "folder was replaced",
        ),
        (
            "cli upgraded",
            Box::new(move |_, _| {
                let wrapper = swapped.with_extension("new");
                std::fs::write(
                    &wrapper,
                    format!(
                        "#!/bin/sh\nexec {} \"$@\"\n",
                        crate::claude_e2e::claude_bin().display()
                    ),
                )
                .unwrap();
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
                std::fs::rename(&wrapper, &swapped).unwrap();
            }),
            "changed",
        ),
    ];
    for (case, spoil, said) in cases {
        let held = spares(&r, 1).await;
        let spare = held[0]["thread"].as_str().unwrap().to_string();
        spoil(&r, &held[0]);
        let (thread, started) = start(&r, &mut stream, &r.work, case).await;
        assert_ne!(thread, spare, "{case}: the spare was not handed out");
        // A spare that exited or spoke may have been let go on the minute's look at the spares
        // already (its replacement then taken, or not made yet); otherwise the start is cold
        // and says why.
        let cold = started["cold"].as_str().unwrap_or_default();
        let looked =
            case == "exited" && (started["warm"] == true || cold.contains("no warm spare"));
        if !looked {
            assert_eq!(started["warm"], false, "{case}: {started}");
            assert!(cold.contains(said), "{case}: {cold}");
        }
        let asked = r.api.message_requests();
        let asked = asked
            .iter()
            .rev()
            .find(|q| q.body.to_string().contains(case))
            .unwrap();
        assert!(
            !asked.body.to_string().contains("INJECTED"),
            "{case}: the model saw what was written into the spare"
        );
    }

    // Another process of the sessions' user (on the box, any other session) cannot open a
    // held spare's standard streams to write a message into it for the next person's session,
    // or to forge its messages to vyred: they are sockets, which /proc does not reopen.
    let held = spares(&r, 1).await;
    let sid = held[0]["sid"].as_i64().unwrap() as i32;
    let members = vyre::modules::sessions::spawn::session_members(sid);
    assert!(!members.is_empty(), "{held:?}");
    for pid in members {
        for fd in 0..3 {
            let path = format!("/proc/{pid}/fd/{fd}");
            let Ok(target) = std::fs::read_link(&path) else {
                continue;
            };
            let target = target.display().to_string();
            assert!(!target.starts_with("pipe:"), "{path} is a pipe");
            if target.starts_with("socket:") {
                let refused = std::fs::OpenOptions::new().write(true).open(&path);
                assert!(refused.is_err(), "{path} ({target}) opened for writing");
            }
        }
    }
    let (thread, started) = start(&r, &mut stream, &r.work, "after the attempt").await;
    assert_eq!(thread, held[0]["thread"].as_str().unwrap(), "{started}");
    assert_eq!(started["warm"], true, "the spare is whole and handed out");

    // What was written into a spare is in no thread a person has.
    for t in r
        .sock
        .call("threads.list", &json!({}))
        .await
        .unwrap()
        .as_array()
        .unwrap()
    {
        let turns = r
            .sock
            .call(
                "threads.timeline",
                &json!({ "thread": t["thread"], "limit": 200 }),
            )
            .await
            .unwrap();
        assert!(!turns.to_string().contains("INJECTED"), "{turns}");
    }

    // Another folder never takes this folder's spare.
    let held = spares(&r, 1).await;
    let spare = held[0]["thread"].as_str().unwrap().to_string();
    let elsewhere = r.home.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (thread, started) = start(&r, &mut stream, &elsewhere, "elsewhere").await;
    assert_ne!(thread, spare);
    assert_eq!(started["warm"], false, "{started}");
    // A burst of starts: every one runs its own session, in its own folder.
    let mut threads = Vec::new();
    for i in 0..3 {
        let out = r
            .sock
            .call(
                "threads.start",
                &json!({ "cwd": elsewhere, "text": format!("burst {i}") }),
            )
            .await
            .unwrap();
        threads.push(out["thread"].as_str().unwrap().to_string());
    }
    let mut done = std::collections::BTreeSet::new();
    while done.len() < threads.len() {
        let e = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
        let e = e.last().unwrap();
        assert_eq!(e["payload"]["ok"], true, "{e}");
        done.insert(e["thread"].as_str().unwrap().to_string());
    }
    let unique: std::collections::BTreeSet<_> = threads.iter().collect();
    assert_eq!(unique.len(), 3, "three starts, three threads");
    for t in &threads {
        let info = r
            .sock
            .call("threads.get", &json!({ "thread": t }))
            .await
            .unwrap();
        assert_eq!(info["cwd"], elsewhere.display().to_string(), "{info}");
    }
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_closed_thread_warmed_while_the_person_writes_answers_from_a_running_session() {
    let r = rig_full(
        "spares-warm",
        json!({ "spares": 0, "idle_minutes": 0.01 }),
        true,
        json!({}),
    )
    .await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let (thread, _) = start(&r, &mut stream, &r.work, "before the close").await;
    events_until(&mut stream, |e| {
        e["type"] == "thread.stopped" && e["thread"] == thread.as_str()
    })
    .await;

    // The person starts writing: the app warms the thread.
    let warmed = r
        .sock
        .call("threads.warm", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(warmed["resumed"], true, "{warmed}");
    let seen = events_until(&mut stream, |e| {
        e["type"] == "thread.state"
            && e["thread"] == thread.as_str()
            && e["payload"]["state"] == "idle"
    })
    .await;
    let started: Vec<_> = seen
        .iter()
        .filter(|e| e["type"] == "thread.started")
        .collect();
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["payload"]["resumed"], true);
    // Warming a running thread does nothing.
    let again = r
        .sock
        .call("threads.warm", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(again["resumed"], false, "{again}");

    // The message finds it running: no second start, and the answer knows the history.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "after the warm" }),
        )
        .await
        .unwrap();
    let seen = events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == thread.as_str()
    })
    .await;
    assert!(
        seen.iter().all(|e| e["type"] != "thread.started"),
        "{seen:?}"
    );
    assert_eq!(seen.last().unwrap()["payload"]["ok"], true);
    let sent = r.api.message_requests().last().unwrap().body.to_string();
    assert!(
        sent.contains("before the close") && sent.contains("after the warm"),
        "{sent}"
    );

    // An unknown thread is refused as a send would be.
    let err = r
        .sock
        .call("threads.warm", &json!({ "thread": "no-such-thread" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_thread"), "{err}");
    r.vyred.stop().await;
}

/// The files the changes store of `folder` holds in its index (`VYRE_HOME/changes/<hash>/`,
/// found by the folder it names), or none while it has no store.
fn stored_files(r: &Rig, folder: &std::path::Path) -> Vec<String> {
    let root = r.home.home().root().join("changes");
    let Some(store) = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .find(|e| {
            std::fs::read(e.path().join("folder"))
                .is_ok_and(|f| f == folder.as_os_str().as_encoded_bytes())
        })
    else {
        return vec![];
    };
    let out = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(store.path())
        .args(["ls-files", "--cached"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_spare_reads_its_folder_before_it_is_taken_not_while_the_person_waits() {
    // A first vyred with no spares: one start in the folder, the start the next one is like.
    let r = rig_full("spares-read", json!({ "spares": 0 }), true, json!({})).await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let (first, _) = start(&r, &mut stream, &r.work, "first words").await;
    r.sock
        .call("threads.stop", &json!({ "thread": first }))
        .await
        .unwrap();
    drop(stream);
    let Rig {
        home,
        api,
        vyred,
        work,
        ..
    } = r;
    vyred.stop().await;

    // A file written while no vyred ran, then a vyred that keeps a spare.
    std::fs::write(work.join("late.txt"), "written while vyred was down\n").unwrap();
    let config = home.home().config_file();
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    c["sessions"]["spares"] = json!(1);
    std::fs::write(&config, c.to_string()).unwrap();
    let vyred = crate::support::InProcess::start_with(&home, vec![], |o| {
        o.vyre_bin = Some(crate::support::BIN.into());
    })
    .await;
    let sock = vyred.socket_client();
    let r = Rig {
        home,
        api,
        vyred,
        sock,
        work,
    };
    let held = spares(&r, 1).await;
    // No thread has run in this vyred: only the spare can have read the file into the store.
    let mut files = vec![];
    for _ in 0..200 {
        files = stored_files(&r, &r.work);
        if files.iter().any(|f| f == "late.txt") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        files.iter().any(|f| f == "late.txt"),
        "the spare read its folder into the store: {files:?}"
    );

    // The thread that takes it still follows its turns: what the turn did not do is not its.
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let (second, started) = start(&r, &mut stream, &r.work, "second words").await;
    assert_eq!(second, held[0]["thread"].as_str().unwrap());
    assert_eq!(started["warm"], true, "{started}");
    let changes = r
        .sock
        .call("threads.changes", &json!({ "thread": second }))
        .await
        .unwrap();
    assert!(!changes.to_string().contains("late.txt"), "{changes}");
}

/// A warm spare (ADR 0032) for Codex as for Claude Code: a second start in the same folder on
/// Codex takes the spare made after the first, and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Codex CLI: tests/run, or VYRE_TEST_CODEX=... cargo test -- --include-ignored"]
async fn a_codex_start_takes_a_warm_spare_made_for_codex() {
    let (_api, r) =
        crate::codex::codex_rig_full("codex-spare", false, json!({ "spares": 1 })).await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let input = json!({ "cwd": r.work, "provider": "codex", "text": "first on codex" });
    let first = r.sock.call("threads.start", &input).await.unwrap();
    let first = first["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(
        crate::threads_e2e::of_type(&events, "thread.started")[0]["payload"]["warm"],
        false
    );
    let mut held = json!([]);
    for _ in 0..600 {
        held = r.sock.call("threads.spares", &json!({})).await.unwrap();
        if held.as_array().is_some_and(|h| !h.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(held[0]["provider"], "codex", "{held}");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let input = json!({ "cwd": r.work, "provider": "codex", "text": "second on codex" });
    let second = r.sock.call("threads.start", &input).await.unwrap();
    let second = second["thread"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    let events = events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == second.as_str()
    })
    .await;
    let started = crate::threads_e2e::of_type(&events, "thread.started");
    let started = started
        .iter()
        .find(|e| e["thread"] == second.as_str())
        .unwrap();
    assert_eq!(started["payload"]["warm"], true, "{started}");
    assert_eq!(second, held[0]["thread"].as_str().unwrap());
    let finished = crate::threads_e2e::of_type(&events, "thread.finished");
    assert_eq!(
        finished.last().unwrap()["payload"]["ok"],
        true,
        "{finished:?}"
    );
    let texts: String = crate::threads_e2e::of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(texts.contains("reply to [second on codex]"), "{texts}");
    r.vyred.stop().await;
}
