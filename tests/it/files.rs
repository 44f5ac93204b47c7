//! `files` (spec section 3): search and preview inside the roots, from the socket, a device over
//! HTTP and the `vyre` command; and the attacks a person's folders must hold against: a path
//! outside the roots, `..`, a link planted inside a root, a FIFO.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};

use crate::support::*;

fn code(e: &vyre::surfaces::client::ClientError) -> String {
    e.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_are_found_and_previewed_inside_the_roots_and_nowhere_else() {
    let home = TempHome::new("files");
    let user = home.dir.join("home");
    let work = user.join("work");
    let project = home.dir.join("acme");
    let outside = home.dir.join("outside");
    for d in [work.join("src"), project.clone(), outside.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(work.join("src/parser.rs"), "fn parse() {}\n// two\n").unwrap();
    std::fs::write(project.join("plan-notes.md"), "# Plan\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "sk-ant-api03-not-for-you\n").unwrap();
    symlink(&outside, work.join("escape")).unwrap();
    symlink(outside.join("secret.txt"), work.join("notes.txt")).unwrap();
    nix::unistd::mkfifo(&work.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.vyre_home().join("config.json"),
        json!({ "roots": ["~/work"] }).to_string(),
    )
    .unwrap();
    let d = InProcess::start(&home, vec![]).await;
    let sock = d.socket_client();
    sock.call(
        "projects.create",
        &json!({ "name": "Acme", "home": project }),
    )
    .await
    .unwrap();

    let roots = sock.call("files.roots", &json!({})).await.unwrap();
    let roots: Vec<&str> = roots
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(roots.contains(&"~/work"), "{roots:?}");
    assert!(
        roots.iter().any(|r| r.ends_with("/acme")),
        "a project's folder is a root: {roots:?}"
    );

    // A device (the phone, the Mac) searches both roots.
    let (_, token) = d.device_token("phone").await;
    let phone = d.http_client(Some(&token));
    let found = phone
        .call("files.search", &json!({ "query": "parser" }))
        .await
        .unwrap();
    assert_eq!(found["found"][0]["path"], "~/work/src/parser.rs", "{found}");
    let plan = phone
        .call("files.search", &json!({ "query": "plan notes" }))
        .await
        .unwrap();
    assert!(
        plan["found"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("acme/plan-notes.md"),
        "{plan}"
    );
    let secret = phone
        .call("files.search", &json!({ "query": "secret" }))
        .await
        .unwrap();
    assert_eq!(secret["found"], json!([]), "no link is followed: {secret}");

    let text = phone
        .call("files.preview", &json!({ "path": "~/work/src/parser.rs" }))
        .await
        .unwrap();
    assert_eq!(text["kind"], "text");
    assert_eq!(text["lines"][0], json!({ "n": 1, "text": "fn parse() {}" }));

    // Every way out is refused, with a code that says which, and nothing of the file comes back.
    let outside_path = outside.join("secret.txt").display().to_string();
    let dotted = format!("{}/../outside/secret.txt", work.display());
    for (path, want) in [
        (outside_path.as_str(), "outside_roots"),
        ("/etc/passwd", "outside_roots"),
        (dotted.as_str(), "no . or .."),
        ("~/work/notes.txt", "link_refused"),
        ("~/work/escape/secret.txt", "link_refused"),
        ("~/work/escape", "link_refused"),
        ("~/work/pipe", "not_regular"),
        ("src/parser.rs", "from / or from ~"),
    ] {
        let err = phone
            .call("files.preview", &json!({ "path": path }))
            .await
            .expect_err(path);
        let said = code(&err);
        assert!(said.contains(want), "{path}: {said}");
        assert!(!said.contains("not-for-you"), "{path}: {said}");
    }

    // The command: `vyre files search` and `vyre files preview`.
    let out = home.vyre(&["files", "search", "parser"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("~/work/src/parser.rs"), "{stdout}");
    let out = home.vyre(&["files", "preview", "/etc/passwd"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("outside the folders"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("root:"));

    let listed: Value = phone
        .call("files.preview", &json!({ "path": "~/work" }))
        .await
        .unwrap();
    let kinds: Vec<(String, String)> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&("escape".into(), "link".into())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("pipe".into(), "other".into())),
        "{kinds:?}"
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_roots_files_says_how_to_give_it_some() {
    let home = TempHome::new("files-none");
    let d = InProcess::start(&home, vec![]).await;
    let err = d
        .socket_client()
        .call("files.search", &json!({ "query": "x" }))
        .await
        .unwrap_err();
    assert!(code(&err).contains("no_roots"), "{err}");
    assert!(code(&err).contains("roots"), "{err}");
    d.stop().await;
}
