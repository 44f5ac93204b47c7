//! Starting and finding sessions (issue 18, items 7 and 8), on the real CLI: folders typed from
//! `~` and refused in place when missing, the folders to start in, titles from the first
//! message and a person's rename, a fork's parent, what an ask's "always" writes and whether
//! its command destroys something, and a credential refused for its shape.

use serde_json::{Value, json};

use crate::support::*;
use crate::threads_e2e::{events_until, of_type, rig};

/// The sessions' HOME in a rig (its config's `sessions.home`).
fn home_of(r: &crate::threads_e2e::Rig) -> std::path::PathBuf {
    r.home.dir.join("home")
}

async fn count_threads(r: &crate::threads_e2e::Rig) -> usize {
    r.sock
        .call("threads.list", &json!({}))
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_folder_is_typed_from_home_and_a_missing_one_is_refused_before_anything_starts() {
    let r = rig("finding-folders").await;
    let home = home_of(&r);
    std::fs::create_dir_all(home.join("src/app")).unwrap();
    std::fs::create_dir_all(home.join("site")).unwrap();
    std::fs::write(home.join("notes.txt"), "x").unwrap();

    // Refused in place: nothing starts, nothing is told.
    let before = count_threads(&r).await;
    let newest = r
        .sock
        .call("system.events", &json!({ "limit": 1 }))
        .await
        .unwrap();
    for (cwd, code, says) in [
        ("~/nope", "no_such_folder", "there is no folder ~/nope"),
        ("~/notes.txt", "not_a_folder", "~/notes.txt is a file"),
        (
            "src/app",
            "invalid_input",
            "absolute path or from your home folder",
        ),
        ("~someone/x", "invalid_input", "only your own home folder"),
    ] {
        let err = r
            .sock
            .call("threads.start", &json!({ "cwd": cwd, "text": "hello" }))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(code), "{cwd}: {err}");
        assert!(err.to_string().contains(says), "{cwd}: {err}");
    }
    assert_eq!(count_threads(&r).await, before, "no thread was made");
    let after = r
        .sock
        .call("system.events", &json!({ "limit": 1 }))
        .await
        .unwrap();
    assert_eq!(after, newest, "no event was recorded");

    // `~/src/app` is the sessions' home's folder.
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let started = r
        .sock
        .call("threads.start", &json!({ "cwd": "~/src/app" }))
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    events_until(&mut stream, |e| {
        e["type"] == "thread.state" && e["payload"]["state"] == "idle"
    })
    .await;
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["cwd"], home.join("src/app").display().to_string());
    assert_eq!(got["title"], Value::Null, "no message, no title yet");
    // A thread with no turn yet is there, and empty (no 404 for a new session's page).
    let conv = r
        .sock
        .call("recall.thread", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(conv["turns"], json!([]));
    assert_eq!(conv["cwd"], got["cwd"]);
    let err = r
        .sock
        .call("recall.thread", &json!({ "thread": "no-such-thread" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_thread"));

    // A project from `~`, and a missing one refused the same way.
    let site = r
        .sock
        .call(
            "projects.create",
            &json!({ "name": "site", "home": "~/site" }),
        )
        .await
        .unwrap();
    assert_eq!(site["home"], home.join("site").display().to_string());
    let err = r
        .sock
        .call(
            "projects.create",
            &json!({ "name": "gone", "home": "~/gone" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("no_such_folder"), "{err}");

    // The folders to start in: where sessions ran and projects live, shown from `~`.
    let folders = r.sock.call("threads.folders", &json!({})).await.unwrap();
    assert_eq!(folders["home"], home.display().to_string());
    let shown: Vec<&str> = folders["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["shown"].as_str().unwrap())
        .collect();
    assert!(
        shown.contains(&"~/src/app") && shown.contains(&"~/site"),
        "{folders}"
    );
    let app = folders["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["shown"] == "~/src/app")
        .unwrap();
    assert_eq!(app["sessions"], 1);
    assert_eq!(app["path"], home.join("src/app").display().to_string());
    assert!(app["last_used"].as_i64().is_some());
    let found = r
        .sock
        .call("threads.folders", &json!({ "query": "~/si" }))
        .await
        .unwrap();
    assert_eq!(found["folders"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found["folders"][0]["project"], "site");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_thread_is_titled_by_its_first_message_renamed_by_a_person_and_a_fork_names_its_parent() {
    let r = rig("finding-titles").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "fix the walrus tests\nthey fail on CI" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let titled = of_type(&events, "thread.titled");
    assert_eq!(titled.len(), 1, "{events:?}");
    assert_eq!(titled[0]["thread"], thread.as_str());
    assert_eq!(titled[0]["payload"]["title"], "fix the walrus tests");
    assert_eq!(titled[0]["payload"]["source"], "message");

    // A second message does not retitle it.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "and the docs" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(of_type(&events, "thread.titled").is_empty());
    let listed = r.sock.call("threads.list", &json!({})).await.unwrap();
    let mine = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["thread"] == thread.as_str())
        .unwrap();
    assert_eq!(
        (mine["title"].as_str(), mine["renamed"].as_bool()),
        (Some("fix the walrus tests"), Some(false))
    );

    // A person's name wins; an empty one gives the first message's words back.
    let named = r
        .sock
        .call(
            "threads.rename",
            &json!({ "thread": thread, "title": "  Walrus\nwork " }),
        )
        .await
        .unwrap();
    assert_eq!(
        (named["title"].as_str(), named["renamed"].as_bool()),
        (Some("Walrus work"), Some(true))
    );
    let said = events_until(&mut stream, |e| e["type"] == "thread.titled").await;
    assert_eq!(said.last().unwrap()["payload"]["source"], "rename");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["title"], "Walrus work");
    let catalog = r.sock.call("projects.catalog", &json!({})).await.unwrap();
    let entry = catalog
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["thread"] == thread.as_str())
        .unwrap();
    assert_eq!(entry["title"], "Walrus work", "the Deck shows the name");
    let back = r
        .sock
        .call("threads.rename", &json!({ "thread": thread, "title": "" }))
        .await
        .unwrap();
    assert_eq!(
        (back["title"].as_str(), back["renamed"].as_bool()),
        (Some("fix the walrus tests"), Some(false))
    );
    let err = r
        .sock
        .call(
            "threads.rename",
            &json!({ "thread": thread, "title": "x".repeat(121) }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("invalid_input"));
    let err = r
        .sock
        .call(
            "threads.rename",
            &json!({ "thread": "no-such-thread", "title": "x" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_thread"));

    // A fork starts with its parent's title and names its parent.
    let fork = r
        .sock
        .call("threads.fork", &json!({ "thread": thread }))
        .await
        .unwrap();
    let fork = fork["thread"].as_str().unwrap().to_string();
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": fork }))
        .await
        .unwrap();
    assert_eq!(got["forked_from"], thread.as_str());
    assert_eq!(got["title"], "fix the walrus tests");
    let catalog = r.sock.call("projects.catalog", &json!({})).await.unwrap();
    let entry = catalog
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["thread"] == fork.as_str())
        .unwrap();
    assert_eq!(entry["forked_from"], thread.as_str());
    // Its own first message does not take its inherited title away.
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": fork, "text": "try another way" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == fork.as_str()
    })
    .await;
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": fork }))
        .await
        .unwrap();
    assert_eq!(got["title"], "fix the walrus tests");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_ask_says_what_always_writes_and_that_its_command_destroys_and_a_deny_says_why() {
    let r = rig("finding-asks").await;
    std::fs::create_dir_all(r.work.join("scratch/inner")).unwrap();
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let started = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "text": "RUNBASH rm -rf scratch" }),
        )
        .await
        .unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let raised = &events.last().unwrap()["payload"];
    assert_eq!(
        raised["destructive"], "deletes files and folders, with everything in them",
        "{raised}"
    );
    // What "always" would write, before it is written: Claude Code's own suggestion.
    let rule = &raised["rule"];
    assert_eq!(rule["file"], ".claude/settings.local.json", "{raised}");
    let rules = rule["rules"].as_array().unwrap();
    assert!(
        !rules.is_empty()
            && rules
                .iter()
                .all(|x| x.as_str().unwrap().starts_with("Bash(")),
        "{rule}"
    );
    assert!(
        rule["text"]
            .as_str()
            .unwrap()
            .contains(".claude/settings.local.json")
    );
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["asks"][0]["rule"], *rule);
    assert_eq!(got["asks"][0]["destructive"], raised["destructive"]);

    // Denied, with a reason Claude is told.
    r.sock
        .call(
            "threads.answer",
            &json!({ "ask": raised["ask"], "decision": "deny", "message": "move it to the trash folder instead" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let answered = of_type(&events, "ask.answered");
    assert_eq!(answered[0]["payload"]["decision"], "deny");
    assert_eq!(
        answered[0]["payload"]["message"],
        "move it to the trash folder instead"
    );
    let told = r.api.requests().iter().any(|q| {
        q.body
            .to_string()
            .contains("move it to the trash folder instead")
    });
    assert!(told, "Claude was told why");
    assert!(r.work.join("scratch/inner").is_dir(), "nothing was deleted");
    assert!(
        !r.work.join(".claude/settings.local.json").exists(),
        "a deny writes no rule"
    );
    r.vyred.stop().await;
}

#[tokio::test]
async fn a_credential_that_is_not_an_anthropic_key_is_refused_and_nothing_is_stored() {
    let home = TempHome::new("finding-key");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let newest = sock
        .call("system.events", &json!({ "limit": 1 }))
        .await
        .unwrap();
    // The shapes are the tool's published schema: the input layer refuses, naming the field
    // and what it must be, never echoing the value.
    for (mode, value, says) in [
        ("api-key", "abc", "value: must be an Anthropic API key"),
        (
            "api-key",
            "sk-ant-oat01-this-is-a-setup-token-not-a-key-0000",
            "a setup token, sk-ant-oat…, goes with mode setup-token",
        ),
        ("setup-token", "abc", "value: must be a setup token"),
    ] {
        let err = sock
            .call(
                "onboarding.claude",
                &json!({ "mode": mode, "value": value }),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some("invalid_input"), "{mode} {value}: {err}");
        assert!(err.to_string().contains(says), "{mode} {value}: {err}");
        assert!(!err.to_string().contains(value), "{err} echoes the value");
    }
    let items = sock.call("vault.list", &json!({})).await.unwrap();
    assert_eq!(items, json!([]), "nothing was stored");
    let state = sock.call("onboarding.state", &json!({})).await.unwrap();
    assert_eq!(state["steps"]["claude"], "open");
    assert_eq!(
        sock.call("system.events", &json!({ "limit": 1 }))
            .await
            .unwrap(),
        newest,
        "nothing was told"
    );
    vyred.stop().await;
}
