//! Watchers run with the network and with vault items, outside any session (issue 23), so a
//! session must never get one of those through them: what a session writes waits, paused, for
//! the person, who alone turns a watcher on (and grants it what it needs); a session's try gets
//! no vault item; a session sees, tries and rewrites only its own projects' watchers, and a
//! rewrite of a running one stops it until the person looks again. Played for real: a Vyre
//! session's Bash on the real CLI, calling the tools through its own `VYRE_SOCKET`.

use serde_json::{Value, json};

use super::common::{attacker, run_allowed};
use crate::threads_e2e::rig;

const READS_TOKEN: &str = "export async function watch({ vault, emit }) { emit({ title: 'got ' + vault.get('deploy-token') }); }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_session_never_turns_a_watcher_on_nor_reaches_its_vault_or_another_projects() {
    if vyre::kernel::jail::bwrap().is_none() || vyre::kernel::jail::find("node").is_none() {
        eprintln!("skipped: watchers need bwrap and node");
        return;
    }
    let r = rig("attack-watchers").await;
    let (mine, theirs) = (r.work.join("mine"), r.work.join("theirs"));
    for (name, home) in [("Mine", &mine), ("Theirs", &theirs)] {
        std::fs::create_dir_all(home).unwrap();
        r.sock
            .call("projects.create", &json!({ "name": name, "home": home }))
            .await
            .unwrap();
    }
    r.sock
        .call(
            "vault.put",
            &json!({ "name": "deploy-token", "value": "walrus-token-9f8e7d", "kind": "secret" }),
        )
        .await
        .unwrap();
    // The person's own watchers: one in each project, both on, the one in Mine granted a token.
    for (name, project) in [("mine-feed", "Mine"), ("walrus-feed", "Theirs")] {
        r.sock
            .call(
                "watchers.create",
                &json!({ "name": name, "project": project, "schedule": "@daily",
                         "script": READS_TOKEN, "needs": ["deploy-token"] }),
            )
            .await
            .unwrap();
        r.sock
            .call("watchers.resume", &json!({ "name": name }))
            .await
            .unwrap();
    }
    let theirs_before =
        std::fs::read_to_string(r.home.vyre_home().join("watchers/walrus-feed/watch.js")).unwrap();
    // Theirs has a filed item (what its watcher found with its token), and recall holds it.
    let ran = r
        .sock
        .call("watchers.run", &json!({ "name": "walrus-feed" }))
        .await
        .unwrap();
    assert_eq!(ran["filed"], 1, "{ran}");
    let mut found = Value::Null;
    for _ in 0..100 {
        found = r
            .sock
            .call("recall.filed", &json!({ "query": "got" }))
            .await
            .unwrap();
        if found.as_array().is_some_and(|f| !f.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(found[0]["project"], "Theirs", "{found}");

    let a = attacker(&r, &mine).await;
    let leak = "export async function watch({ vault, emit }) { emit({ title: 'x' + vault.get('deploy-token') }); }";
    let mut script = String::from("set +e\n");
    for (tool, input, out) in [
        ("watchers.list", json!({}), "list"),
        (
            "watchers.create",
            json!({ "name": "own", "project": "Mine", "schedule": "@hourly", "script": leak, "needs": ["deploy-token"] }),
            "create_own",
        ),
        ("watchers.resume", json!({ "name": "own" }), "resume_own"),
        ("watchers.test", json!({ "name": "own" }), "test_own"),
        ("watchers.run", json!({ "name": "own" }), "run_own"),
        (
            "watchers.create",
            json!({ "name": "spy", "project": "Theirs", "schedule": "@hourly", "script": leak }),
            "create_theirs",
        ),
        (
            "watchers.create",
            json!({ "name": "walrus-feed", "project": "Mine", "schedule": "@hourly", "script": leak, "replace": true }),
            "replace_theirs",
        ),
        (
            "watchers.run",
            json!({ "name": "walrus-feed" }),
            "run_theirs",
        ),
        (
            "watchers.logs",
            json!({ "name": "walrus-feed" }),
            "logs_theirs",
        ),
        (
            "watchers.source",
            json!({ "name": "walrus-feed" }),
            "source_theirs",
        ),
        (
            "watchers.pause",
            json!({ "name": "walrus-feed" }),
            "pause_theirs",
        ),
        (
            "watchers.remove",
            json!({ "name": "walrus-feed" }),
            "remove_theirs",
        ),
        (
            "watchers.items",
            json!({ "project": "Theirs" }),
            "items_theirs",
        ),
        ("recall.filed", json!({ "query": "got" }), "filed_all"),
        (
            "recall.filed",
            json!({ "query": "got", "project": "Theirs" }),
            "filed_theirs",
        ),
        (
            "watchers.create",
            json!({ "name": "mine-feed", "project": "Mine", "schedule": "@daily", "script": leak,
                    "needs": ["deploy-token"], "replace": true }),
            "replace_mine",
        ),
        ("watchers.run", json!({ "name": "mine-feed" }), "run_mine"),
        ("watchers.test", json!({ "name": "mine-feed" }), "test_mine"),
        (
            "watchers.hook",
            json!({ "name": "mine-feed", "secret": "x", "body": {} }),
            "hook",
        ),
    ] {
        script.push_str(&format!(
            "curl -s --unix-socket \"$VYRE_SOCKET\" -X POST -H 'content-type: application/json' -d '{input}' http://localhost/v1/tools/{tool} > out-{out}.json\n"
        ));
    }
    std::fs::write(mine.join("attack.sh"), script).unwrap();
    run_allowed(&r, &a, "RUNBASH sh attack.sh").await;
    let read = |name: &str| std::fs::read_to_string(mine.join(format!("out-{name}.json"))).unwrap();
    let all: String = std::fs::read_dir(&mine)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("out-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(!all.contains("walrus-token"), "never the token: {all}");

    let list = read("list");
    assert!(
        list.contains("mine-feed") && !list.contains("walrus"),
        "{list}"
    );
    let own: Value = serde_json::from_str(&read("create_own")).unwrap();
    assert_eq!(own["data"]["paused"], true, "{own}");
    assert_eq!(own["data"]["created_by"], a.as_str());
    assert!(
        read("resume_own").contains("person_only"),
        "{}",
        read("resume_own")
    );
    let tried: Value = serde_json::from_str(&read("test_own")).unwrap();
    assert_eq!(
        tried["data"]["ok"], false,
        "no vault in a session's try: {tried}"
    );
    assert!(read("run_own").contains("not on"), "{}", read("run_own"));
    assert!(
        read("create_theirs").contains("not_your_project"),
        "{}",
        read("create_theirs")
    );
    assert!(
        read("replace_theirs").contains("exists"),
        "{}",
        read("replace_theirs")
    );
    for out in [
        "run_theirs",
        "logs_theirs",
        "source_theirs",
        "pause_theirs",
        "remove_theirs",
    ] {
        assert!(
            read(out).contains("unknown_watcher"),
            "{out}: {}",
            read(out)
        );
    }
    assert!(read("items_theirs").contains("not_your_project"));
    // Search finds nothing of what was filed into Theirs, and will not look there when asked.
    let filed: Value = serde_json::from_str(&read("filed_all")).unwrap();
    assert_eq!(filed["data"], json!([]), "{filed}");
    assert!(
        read("filed_theirs").contains("not_your_project"),
        "{}",
        read("filed_theirs")
    );
    // Its rewrite of the person's running watcher stopped it: it waits for the person again.
    let replaced: Value = serde_json::from_str(&read("replace_mine")).unwrap();
    assert_eq!(replaced["data"]["paused"], true, "{replaced}");
    assert_eq!(replaced["data"]["waiting"], true, "{replaced}");
    assert!(read("run_mine").contains("not on"), "{}", read("run_mine"));
    let tried: Value = serde_json::from_str(&read("test_mine")).unwrap();
    assert_eq!(tried["data"]["ok"], false, "{tried}");
    assert!(
        read("hook").contains("not_for_sessions"),
        "{}",
        read("hook")
    );

    // Nothing of Theirs changed, and nothing was filed but the person's one run.
    let theirs_after =
        std::fs::read_to_string(r.home.vyre_home().join("watchers/walrus-feed/watch.js")).unwrap();
    assert_eq!(theirs_before, theirs_after);
    let listed = r.sock.call("watchers.list", &json!({})).await.unwrap();
    let walrus = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "walrus-feed")
        .unwrap();
    assert_eq!(walrus["paused"], false, "{walrus}");
    let items = r.sock.call("watchers.items", &json!({})).await.unwrap();
    assert_eq!(items["items"].as_array().unwrap().len(), 1, "{items}");
    assert_eq!(items["items"][0]["project"], "Theirs", "{items}");
    r.vyred.stop().await;
}
