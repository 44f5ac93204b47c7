//! Projects and the catalogue (spec section 7.2): sessions belong by a pick or by their folder,
//! nothing automatic removes a pick, and a project's context never draws on another's sessions.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;

fn transcript(root: &Path, session: &str, cwd: &Path, prompt: &str, at: &str) {
    let folder = root.join(cwd.display().to_string().replace(['/', '.'], "-"));
    std::fs::create_dir_all(&folder).unwrap();
    let line = json!({
        "parentUuid": null, "isSidechain": false, "type": "user",
        "message": { "role": "user", "content": prompt },
        "uuid": format!("{session}-u1"), "timestamp": at, "cwd": cwd, "sessionId": session, "entrypoint": "cli"
    });
    std::fs::write(folder.join(format!("{session}.jsonl")), format!("{line}\n")).unwrap();
}

async fn until(sock: &Client, tool: &str, input: Value, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let v = sock.call(tool, &input).await.unwrap();
        if ok(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "{tool}: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn threads(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e["thread"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn sessions_belong_by_pick_or_folder_and_contexts_stay_apart() {
    let home = TempHome::new("projects");
    let root = home.dir.join("home/.claude/projects");
    let juniper = home.dir.join("work/juniper");
    let other = home.dir.join("work/other");
    let elsewhere = home.dir.join("work/elsewhere");
    for d in [
        &juniper,
        &other,
        &elsewhere,
        &home.dir.join("work/juniper-site"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    transcript(
        &root,
        "sess-a",
        &juniper.join("src"),
        "the invoice for Dana",
        "2026-11-01T10:00:00Z",
    );
    transcript(
        &root,
        "sess-b",
        &other,
        "lunch plans with the juniper team",
        "2026-11-02T10:00:00Z",
    );
    transcript(
        &root,
        "sess-c",
        &elsewhere,
        "colours for the site",
        "2026-11-03T10:00:00Z",
    );
    transcript(
        &root,
        "sess-d",
        &home.dir.join("work/juniper-site"),
        "deploy the site",
        "2026-11-04T10:00:00Z",
    );
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    until(&sock, "recall.status", json!({}), |s| s["sessions"] == 4).await;

    let created = sock
        .call(
            "projects.create",
            &json!({ "name": "Juniper", "home": juniper, "workspaces": ["../juniper-site"] }),
        )
        .await
        .unwrap();
    assert_eq!(created["name"], "Juniper");
    let declared: Value =
        serde_json::from_str(&std::fs::read_to_string(juniper.join(".vyre/project.json")).unwrap())
            .unwrap();
    assert_eq!(declared["workspaces"], json!(["../juniper-site"]));
    sock.call(
        "projects.create",
        &json!({ "name": "Other", "home": other }),
    )
    .await
    .unwrap();

    let all = sock.call("projects.catalog", &json!({})).await.unwrap();
    assert_eq!(
        threads(&all),
        vec!["sess-d", "sess-c", "sess-b", "sess-a"],
        "newest first"
    );
    let a = all
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["thread"] == "sess-a")
        .unwrap();
    assert_eq!(a["projects"], json!(["Juniper"]), "by its folder");
    assert_eq!(a["source"], "terminal");
    assert_eq!(a["first_message"], "the invoice for Dana");

    sock.call(
        "projects.add-threads",
        &json!({ "project": "Juniper", "threads": ["sess-c"] }),
    )
    .await
    .unwrap();
    let mine = sock
        .call("projects.catalog", &json!({ "project": "Juniper" }))
        .await
        .unwrap();
    assert_eq!(
        threads(&mine),
        vec!["sess-d", "sess-c", "sess-a"],
        "folder, workspace and pick"
    );
    // What a session's fence reads at each call: the project's threads, found without reading
    // the rest of the history, and the same as its catalogue's.
    let belong = sock
        .call("projects.threads", &json!({ "project": "Juniper" }))
        .await
        .unwrap();
    let mut belong: Vec<&str> = belong
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    belong.sort();
    assert_eq!(belong, ["sess-a", "sess-c", "sess-d"]);
    let inside = sock
        .call("recall.sessions", &json!({ "folders": [juniper] }))
        .await
        .unwrap();
    assert_eq!(
        threads(&inside),
        vec!["sess-a"],
        "never juniper-site beside it"
    );
    let named = sock
        .call(
            "recall.sessions",
            &json!({ "folders": [elsewhere], "threads": ["sess-b"] }),
        )
        .await
        .unwrap();
    assert_eq!(threads(&named), vec!["sess-c", "sess-b"]);
    let list = sock.call("projects.list", &json!({})).await.unwrap();
    let j = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Juniper")
        .unwrap();
    assert_eq!(j["threads"], 3);
    let said = sock
        .call("projects.catalog", &json!({ "query": "lunch" }))
        .await
        .unwrap();
    assert_eq!(threads(&said), vec!["sess-b"]);

    // The context of a project is its own sessions only; search within it likewise.
    let context = sock
        .call("projects.context", &json!({ "project": "Juniper" }))
        .await
        .unwrap();
    assert!(!context.to_string().contains("sess-b"), "{context}");
    let hits = sock
        .call(
            "recall.search",
            &json!({ "query": "juniper", "project": "Juniper" }),
        )
        .await
        .unwrap();
    assert_eq!(hits, json!([]), "sess-b says juniper but is Other's");
    let hits = sock
        .call(
            "recall.search",
            &json!({ "query": "juniper", "project": "Other" }),
        )
        .await
        .unwrap();
    assert_eq!(threads(&hits), vec!["sess-b"]);

    // Taking picks out leaves what belongs by folder.
    let removed = sock
        .call(
            "projects.remove-threads",
            &json!({ "project": "Juniper", "threads": ["sess-a", "sess-c"] }),
        )
        .await
        .unwrap();
    assert_eq!(removed["picks"], json!([]));
    assert_eq!(removed["still_in_folders"], json!(["sess-a"]));

    // Bad input, each refused with the reason.
    for (tool, input, code) in [
        (
            "projects.create",
            json!({ "name": "X", "home": "relative/dir" }),
            "invalid_input",
        ),
        (
            "projects.create",
            json!({ "name": "Juniper", "home": elsewhere }),
            "exists",
        ),
        (
            "projects.create",
            json!({ "name": "Renamed", "home": juniper }),
            "project_file",
        ),
        (
            "projects.add-threads",
            json!({ "project": "Nope", "threads": ["sess-a"] }),
            "unknown_project",
        ),
        (
            "projects.add-threads",
            json!({ "project": "Juniper", "threads": ["../etc"] }),
            "invalid_input",
        ),
        (
            "projects.add-threads",
            json!({ "project": "Juniper", "threads": [] }),
            "invalid_input",
        ),
        (
            "projects.catalog",
            json!({ "project": "Nope" }),
            "unknown_project",
        ),
        (
            "recall.sessions",
            json!({ "folders": "/work" }),
            "invalid_input",
        ),
        ("threads.list", json!({ "project": "" }), "invalid_input"),
        ("threads.list", json!({ "cwd": "/work" }), "invalid_input"),
    ] {
        let err = sock.call(tool, &input).await.unwrap_err();
        assert_eq!(err.code(), Some(code), "{tool} {input}: {err}");
    }
    // A project whose file broke is skipped; the others still list.
    std::fs::write(other.join(".vyre/project.json"), "{ not json").unwrap();
    let list = sock.call("projects.list", &json!({})).await.unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");

    // A project with more folders than one ask takes still finds its threads (read from the
    // whole catalogue).
    let wide = home.dir.join("work/wide");
    std::fs::create_dir_all(&wide).unwrap();
    let mut workspaces: Vec<String> = (0..300).map(|i| format!("../nowhere-{i}")).collect();
    workspaces.push("../elsewhere".into());
    sock.call(
        "projects.create",
        &json!({ "name": "Wide", "home": wide, "workspaces": workspaces }),
    )
    .await
    .unwrap();
    let found = sock
        .call("projects.threads", &json!({ "project": "Wide" }))
        .await
        .unwrap();
    assert_eq!(found, json!(["sess-c"]));
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_agent_searching_history_finds_only_its_projects_sessions() {
    let r = crate::threads_e2e::rig("projects-fence").await;
    let root = r.home.dir.join("home/.claude/projects");
    let juniper = r.home.dir.join("work/juniper");
    let other = r.home.dir.join("work/other");
    for d in [&juniper, &other] {
        std::fs::create_dir_all(d).unwrap();
    }
    transcript(
        &root,
        "sess-j",
        &juniper,
        "the secret plan for juniper",
        "2026-11-01T10:00:00Z",
    );
    transcript(
        &root,
        "sess-o",
        &other,
        "the secret plan for the other client",
        "2026-11-02T10:00:00Z",
    );
    until(&r.sock, "recall.status", json!({}), |s| s["sessions"] == 2).await;
    for (name, home) in [("Juniper", &juniper), ("Other", &other)] {
        r.sock
            .call("projects.create", &json!({ "name": name, "home": home }))
            .await
            .unwrap();
    }
    r.sock
        .call(
            "agents.create",
            &json!({ "name": "scout", "projects": ["Juniper"] }),
        )
        .await
        .unwrap();
    // The agent's own Bash asks vyred, over the socket, what history says about "plan".
    let command = format!(
        "VYRE_HOME={} {} recall search secret plan",
        r.home.vyre_home().display(),
        BIN
    );
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    r.sock
        .call(
            "agents.ask",
            &json!({ "agent": "scout", "text": format!("RUNBASH {command}") }),
        )
        .await
        .unwrap();
    let mut said = String::new();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("in time")
            .unwrap()
            .unwrap();
        let e: Value = serde_json::from_str(&msg.data).unwrap();
        match e["type"].as_str() {
            Some("ask.raised") => {
                r.sock
                    .call(
                        "threads.answer",
                        &json!({ "ask": e["payload"]["ask"], "decision": "allow" }),
                    )
                    .await
                    .unwrap();
            }
            Some("thread.text") => said.push_str(e["payload"]["delta"].as_str().unwrap_or("")),
            Some("thread.finished") => break,
            _ => {}
        }
    }
    assert!(said.contains("sess-j"), "its project's session: {said}");
    assert!(!said.contains("sess-o"), "never another project's: {said}");
    // A person searching sees both.
    let hits = r
        .sock
        .call("recall.search", &json!({ "query": "secret plan" }))
        .await
        .unwrap();
    let found = threads(&hits);
    assert!(
        found.contains(&"sess-j") && found.contains(&"sess-o"),
        "{found:?}"
    );
    r.vyred.stop().await;
}
