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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_link_serves_the_file_as_it_is_and_never_what_a_link_points_to() {
    use http_body_util::BodyExt;
    let home = TempHome::new("files-fetch");
    let work = home.dir.join("home").join("work");
    let outside = home.dir.join("outside");
    for d in [work.clone(), outside.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    // Three MiB of every byte value, NULs included: binary-safe and streamed.
    let bytes: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(work.join("data é.bin"), &bytes).unwrap();
    std::fs::write(work.join("swap.txt"), "the real one\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "sk-ant-api03-not-for-you\n").unwrap();
    symlink(outside.join("secret.txt"), work.join("notes.txt")).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.vyre_home().join("config.json"),
        json!({ "roots": ["~/work"] }).to_string(),
    )
    .unwrap();
    let d = InProcess::start(&home, vec![]).await;
    let (_, token) = d.device_token("phone").await;
    let phone = d.http_client(Some(&token));
    let get = |url: String| {
        let anyone = d.http_client(None);
        async move {
            let res = anyone
                .send(hyper::Method::GET, &url, None, &[])
                .await
                .unwrap();
            let status = res.status().as_u16();
            let headers = res.headers().clone();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            (status, headers, body)
        }
    };

    let link = phone
        .call("files.fetch", &json!({ "path": "~/work/data é.bin" }))
        .await
        .unwrap();
    assert_eq!(link["size"], bytes.len());
    assert_eq!(link["name"], "data é.bin");
    let url = link["url"].as_str().unwrap().to_string();
    // The link is the credential: no device needed to follow it, and it works more than once
    // while it lasts (a download that is retried).
    for _ in 0..2 {
        let (status, headers, body) = get(url.clone()).await;
        assert_eq!(status, 200);
        assert_eq!(body.len(), bytes.len());
        assert!(body[..] == bytes[..], "the bytes as they are");
        assert_eq!(headers["content-length"], bytes.len().to_string().as_str());
        assert!(
            headers["content-disposition"]
                .to_str()
                .unwrap()
                .contains("filename*=UTF-8''data%20%C3%A9.bin"),
            "{headers:?}"
        );
    }
    // A made-up token is nothing.
    let (status, _, body) = get("/v1/files/not-a-token".into()).await;
    assert_eq!(status, 404, "{body:?}");
    assert!(String::from_utf8_lossy(&body).contains("unknown_link"));

    // No link is made to what is outside the roots, through a link, or not a file.
    for (path, want) in [
        ("/etc/passwd", "outside_roots"),
        ("~/work/notes.txt", "link_refused"),
        ("~/work", "not_regular"),
    ] {
        let err = phone
            .call("files.fetch", &json!({ "path": path }))
            .await
            .expect_err(path);
        assert!(err.to_string().contains(want), "{path}: {err}");
    }
    // A file swapped for a link after its link was made is not served.
    let swap = phone
        .call("files.fetch", &json!({ "path": "~/work/swap.txt" }))
        .await
        .unwrap();
    std::fs::remove_file(work.join("swap.txt")).unwrap();
    symlink(outside.join("secret.txt"), work.join("swap.txt")).unwrap();
    let (status, _, body) = get(swap["url"].as_str().unwrap().to_string()).await;
    let body = String::from_utf8_lossy(&body);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("link_refused"), "{body}");
    assert!(!body.contains("not-for-you"));
    // A web page on another site cannot make the browser fetch it.
    let (status, _, _) = {
        let res = d
            .http_client(None)
            .send(
                hyper::Method::GET,
                &url,
                None,
                &[("origin", "http://evil.example")],
            )
            .await
            .unwrap();
        (res.status().as_u16(), (), ())
    };
    assert_eq!(status, 403);
    d.stop().await;
}
