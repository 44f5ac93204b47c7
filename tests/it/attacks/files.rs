//! vyred never writes through a link a session planted, and recall never leaves its roots through one.
//!
//! The attacker is a hostile repository (or a session writing its own project's folder): it
//! plants symbolic links at every name vyred might use in `.vyre/`, pointing at vyred's own
//! `config.json` (which, on the box, only vyred's privileges can write), and links under the
//! sessions' `~/.claude/projects` pointing out of recall's roots.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;

/// What vyred's own config holds before the attack: it must hold exactly this after.
const CONFIG: &str = "{ \"log\": \"warn\" }\n";

fn write_config(home: &TempHome) {
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(home.vyre_home().join("config.json"), CONFIG).unwrap();
}

fn assert_config_untouched(home: &TempHome) {
    let path = home.vyre_home().join("config.json");
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.is_file(), "config.json is still a plain file");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CONFIG);
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

async fn projects_events(sock: &Client) -> Vec<Value> {
    let events = sock
        .call("system.events", &json!({ "limit": 200 }))
        .await
        .unwrap();
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("project")))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predictable_temp_names_planted_as_links_are_never_written_through() {
    let home = TempHome::new("atk-tmp-links");
    write_config(&home);
    let repo = home.dir.join("work/repo");
    std::fs::create_dir_all(repo.join(".vyre")).unwrap();
    std::fs::write(
        repo.join(".vyre/project.json"),
        "{\"name\":\"Repo\",\"threads\":[],\"sessions\":{\"claude\":\"/tmp/evil\"}}\n",
    )
    .unwrap();
    // Every name an older vyred (or a careless one) would predict, linked to vyred's own
    // config, or to a file that does not exist yet and must not be created.
    let config = home.vyre_home().join("config.json");
    let fresh = home.dir.join("outside/created.json");
    std::fs::create_dir_all(fresh.parent().unwrap()).unwrap();
    for (name, target) in [
        ("project.json.tmp", &config),
        ("project.tmp", &config),
        (".project.json.tmp", &fresh),
        ("project.json~", &fresh),
    ] {
        symlink(target, repo.join(".vyre").join(name)).unwrap();
    }

    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    sock.call("projects.create", &json!({ "name": "Repo", "home": repo }))
        .await
        .unwrap();
    let picked = sock
        .call(
            "projects.add-threads",
            &json!({ "project": "Repo", "threads": ["t-1"] }),
        )
        .await
        .unwrap();
    assert_eq!(picked["picks"], json!(["t-1"]));

    // Only the real file was written, as a plain file, keeping what it does not own.
    let real = repo.join(".vyre/project.json");
    assert!(!is_link(&real), "project.json is a plain file");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(written["threads"], json!(["t-1"]));
    assert_eq!(written["sessions"]["claude"], "/tmp/evil");
    // The targets outside are as they were: the config byte for byte, the other never made.
    assert_config_untouched(&home);
    assert!(!fresh.exists(), "nothing created through a link");
    for name in [
        "project.json.tmp",
        "project.tmp",
        ".project.json.tmp",
        "project.json~",
    ] {
        assert!(is_link(&repo.join(".vyre").join(name)), "{name} left alone");
    }
    // And no temp file of vyred's own is left behind.
    let left: Vec<String> = std::fs::read_dir(repo.join(".vyre"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && !is_link(&repo.join(".vyre").join(n)))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_vyre_folder_or_project_file_is_refused_and_nothing_changes() {
    let home = TempHome::new("atk-vyre-link");
    write_config(&home);
    // A folder outside the project holding a declaration the attacker wants vyred to rewrite.
    let elsewhere = home.dir.join("outside/elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let decoy = "{\"name\":\"Repo\",\"threads\":[]}\n";
    std::fs::write(elsewhere.join("project.json"), decoy).unwrap();

    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();

    // 1. A repository whose `.vyre` is a link: registering it is refused, saying why.
    let linked = home.dir.join("work/linked");
    std::fs::create_dir_all(&linked).unwrap();
    symlink(&elsewhere, linked.join(".vyre")).unwrap();
    let err = sock
        .call(
            "projects.create",
            &json!({ "name": "Repo", "home": linked }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("project_file"), "{err}");
    assert!(err.to_string().contains("symbolic link"), "{err}");

    // 2. A repository whose `.vyre/project.json` is a link to vyred's own config.
    let to_config = home.dir.join("work/to-config");
    std::fs::create_dir_all(to_config.join(".vyre")).unwrap();
    symlink(
        home.vyre_home().join("config.json"),
        to_config.join(".vyre/project.json"),
    )
    .unwrap();
    let err = sock
        .call(
            "projects.create",
            &json!({ "name": "Config", "home": to_config }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("project_file"), "{err}");
    assert!(err.to_string().contains("symbolic link"), "{err}");

    // 3. A project registered while its folder was sound, whose `.vyre` a session then swaps
    //    for a link: picking threads into it is refused.
    let swapped = home.dir.join("work/swapped");
    std::fs::create_dir_all(&swapped).unwrap();
    sock.call(
        "projects.create",
        &json!({ "name": "Repo", "home": swapped }),
    )
    .await
    .unwrap();
    std::fs::remove_dir_all(swapped.join(".vyre")).unwrap();
    symlink(&elsewhere, swapped.join(".vyre")).unwrap();
    let before = projects_events(&sock).await;
    let err = sock
        .call(
            "projects.add-threads",
            &json!({ "project": "Repo", "threads": ["t-1"] }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("project_file"), "{err}");
    assert!(err.to_string().contains("symbolic link"), "{err}");

    // Nothing changed: the folder outside holds exactly the decoy, the config is intact, no
    // project was made of the linked ones and no event says otherwise.
    let names: Vec<String> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["project.json"]);
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("project.json")).unwrap(),
        decoy
    );
    assert_config_untouched(&home);
    let list = sock.call("projects.list", &json!({})).await.unwrap();
    assert!(
        !list.to_string().contains("Config"),
        "the linked project was not registered: {list}"
    );
    assert_eq!(projects_events(&sock).await, before);
    vyred.stop().await;
}

fn transcript_line(session: &str, text: &str) -> String {
    let line = json!({
        "parentUuid": null, "isSidechain": false, "type": "user",
        "message": { "role": "user", "content": text },
        "uuid": format!("{session}-u1"), "timestamp": "2026-11-01T10:00:00Z",
        "cwd": "/work/somewhere", "sessionId": session, "entrypoint": "cli"
    });
    format!("{line}\n")
}

async fn search(sock: &Client, word: &str) -> Value {
    sock.call("recall.search", &json!({ "query": word }))
        .await
        .unwrap()
}

async fn until_found(sock: &Client, word: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while search(sock, word).await.as_array().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "{word} was never indexed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_never_follows_a_link_out_of_its_roots() {
    let home = TempHome::new("atk-recall-links");
    // What lies outside the roots: a transcript-shaped file holding a word no one may find.
    let secret = home.dir.join("outside/secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(
        secret.join("s-outside.jsonl"),
        transcript_line("s-outside", "the vault word is zanzibarquokka"),
    )
    .unwrap();
    // The sessions' projects folder (here the same HOME), with links planted before vyred
    // starts: a transcript that is a link, and a project folder that is a link.
    let root = home.dir.join("home/.claude/projects");
    std::fs::create_dir_all(root.join("-work-a")).unwrap();
    symlink(
        secret.join("s-outside.jsonl"),
        root.join("-work-a/s-file-link.jsonl"),
    )
    .unwrap();
    symlink(&secret, root.join("-work-linked")).unwrap();
    std::fs::write(
        root.join("-work-a/s-plain.jsonl"),
        transcript_line("s-plain", "an ordinary walrus"),
    )
    .unwrap();

    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    until_found(&sock, "walrus").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = sock.call("recall.status", &json!({})).await.unwrap();
        if status["progress"]["scanning"] == false {
            break;
        }
        assert!(Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(search(&sock, "zanzibarquokka").await, json!([]));

    // Links planted while vyred follows the folder: a new linked folder and a linked file,
    // then a plain transcript written after them, found once the watcher has seen all three.
    symlink(&secret, root.join("-work-later")).unwrap();
    std::fs::create_dir_all(root.join("-work-b")).unwrap();
    symlink(
        secret.join("s-outside.jsonl"),
        root.join("-work-b/s-later-link.jsonl"),
    )
    .unwrap();
    std::fs::write(
        root.join("-work-b/s-after.jsonl"),
        transcript_line("s-after", "a later narwhal"),
    )
    .unwrap();
    until_found(&sock, "narwhal").await;
    assert_eq!(search(&sock, "zanzibarquokka").await, json!([]));
    let status = sock.call("recall.status", &json!({})).await.unwrap();
    assert_eq!(status["sessions"], 2, "{status}");
    vyred.stop().await;
}
