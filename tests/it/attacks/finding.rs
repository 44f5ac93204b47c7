//! The tools that find and name threads (issue 18) hold to a session's fence: a session's
//! Bash, on the real CLI, gets only its own project's folders from `threads.folders`, and may
//! rename its own thread but never another's.

use serde_json::{Value, json};

use crate::threads_e2e::{allow_until_finished, events_until, rig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_sessions_bash_finds_only_its_projects_folders_and_renames_only_its_own_thread() {
    let r = rig("attack-finding").await;
    let (mine, theirs) = (r.work.join("mine"), r.work.join("theirs-secret-place"));
    for (name, dir) in [("Mine", &mine), ("Theirs", &theirs)] {
        std::fs::create_dir_all(dir).unwrap();
        r.sock
            .call("projects.create", &json!({ "name": name, "home": dir }))
            .await
            .unwrap();
    }
    // The victim: a thread of Theirs, titled by its first message.
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let v = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": theirs, "project": "Theirs", "text": "the victim's plan" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == v.as_str()
    })
    .await;
    let victim_before = r
        .sock
        .call("threads.get", &json!({ "thread": v }))
        .await
        .unwrap();
    assert_eq!(victim_before["title"], "the victim's plan");
    let victim_events = |events: &Value| {
        events
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "thread.titled")
            .count()
    };
    let titled_before = victim_events(
        &r.sock
            .call("system.events", &json!({ "thread": v, "limit": 1000 }))
            .await
            .unwrap(),
    );

    // The attacker: a session of Mine, whose Bash a person allowed once.
    let a = super::common::attacker(&r, &mine).await;
    let call = |tool: &str, input: Value, out: &str| {
        format!(
            "curl -s --unix-socket \"$VYRE_SOCKET\" -X POST -H 'content-type: application/json' -d '{input}' http://localhost/v1/tools/{tool} > {out}\n"
        )
    };
    let mut script = String::from("set +e\n");
    for (tool, input, out) in [
        ("threads.folders", json!({}), "folders"),
        ("threads.folders", json!({ "query": "secret" }), "folders_q"),
        (
            "threads.rename",
            json!({ "thread": v, "title": "pwned by another session" }),
            "rename_v",
        ),
        (
            "threads.rename",
            json!({ "thread": a, "title": "my own work" }),
            "rename_own",
        ),
    ] {
        script.push_str(&call(tool, input, &format!("out-{out}.json")));
    }
    std::fs::write(mine.join("attack.sh"), script).unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": a, "text": "RUNBASH sh attack.sh" }),
        )
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &a).await;
    let read = |name: &str| -> Value {
        let text = std::fs::read_to_string(mine.join(format!("out-{name}.json")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"))
    };

    let folders = read("folders");
    let listed = folders["data"]["folders"]
        .as_array()
        .unwrap_or_else(|| panic!("{folders}"));
    assert!(
        listed
            .iter()
            .any(|f| f["path"] == mine.display().to_string()),
        "its own project's folder: {folders}"
    );
    assert!(
        !folders.to_string().contains("theirs-secret-place")
            && !folders.to_string().contains("Theirs"),
        "never another project's: {folders}"
    );
    assert_eq!(read("folders_q")["data"]["folders"], json!([]));
    let rename_v = read("rename_v");
    assert_eq!(rename_v["error"]["code"], "not_your_thread", "{rename_v}");
    let own = read("rename_own");
    assert_eq!(own["data"]["title"], "my own work", "{own}");

    // Nothing of the victim's changed: its title, and nothing told about it.
    let victim_after = r
        .sock
        .call("threads.get", &json!({ "thread": v }))
        .await
        .unwrap();
    assert_eq!(victim_after["title"], victim_before["title"]);
    assert_eq!(victim_after["renamed"], false);
    assert_eq!(
        victim_events(
            &r.sock
                .call("system.events", &json!({ "thread": v, "limit": 1000 }))
                .await
                .unwrap()
        ),
        titled_before
    );
    r.vyred.stop().await;
}
