//! The link between a Mac's Vyre and its box (issue 20): the box serves a paired Vyre only the
//! tools `link.allow` lists, treats it as a person only for a call its signed presence
//! assertion vouches for (once, for that call), and the Mac follows the box's events across a
//! box restart, a dropped link and its own restart, losing and doubling nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use vyre::kernel::presence::DeviceKey;
use vyre::surfaces::client::Client;

use crate::support::*;

/// A free loopback port, so a box restarted on the same home keeps its address.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A box with a probe that emits thread and ask events, on a fixed port.
pub(crate) async fn start_box(home: &TempHome, port: u16) -> InProcess {
    let probe = Probe::with_manifest(
        "boxprobe",
        &json!({
            "name": "boxprobe", "version": "0.1.0", "roles": ["box", "local"], "requires": [],
            "does": { "tools": ["boxprobe.emit", "boxprobe.call", "boxprobe.panic", "boxprobe.echo",
                "boxprobe.note", "boxprobe.notes", "boxprobe.heard", "boxprobe.fetch"] },
            "watches": { "emits": ["probe.pinged", "thread.started", "ask.raised", "thread.text"] },
            "shows": { "cli": ["boxprobe"] }, "needs": {}
        })
        .to_string(),
    );
    InProcess::start_with(home, vec![probe], |o| o.port = Some(port)).await
}

pub(crate) fn mac_home(name: &str) -> TempHome {
    let home = TempHome::new(name);
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    // Local role keeps the vault's key in the OS keychain; this test's machine has none.
    std::fs::write(
        home.home().config_file(),
        r#"{"vault": {"keystore": "file"}}"#,
    )
    .unwrap();
    home
}

pub(crate) async fn start_mac(home: &TempHome) -> InProcess {
    let probe = Probe::module("macprobe", &["pairing"], Start::Ok);
    InProcess::start_with(home, vec![probe], |o| {
        o.role = Some(vyre::kernel::config::Role::Local)
    })
    .await
}

pub(crate) async fn pair(on_box: &InProcess, on_mac: &InProcess) -> Value {
    let code = on_box
        .socket_client()
        .call("pairing.code", &json!({}))
        .await
        .unwrap();
    on_mac
        .socket_client()
        .call(
            "pairing.add",
            &json!({ "address": code["address"], "code": code["code"], "name": "test mac" }),
        )
        .await
        .unwrap()
}

/// Pair as a program would, holding the token and the key itself: the attacker's seat.
pub(crate) async fn pair_by_hand(on_box: &InProcess, key: &DeviceKey) -> (String, String) {
    let code = on_box
        .socket_client()
        .call("pairing.code", &json!({}))
        .await
        .unwrap();
    let (status, answer) = on_box
        .http_client(None)
        .json(
            hyper::Method::POST,
            "/v1/pair",
            Some(
                serde_json::to_vec(
                    &json!({ "code": code["code"], "name": "by hand", "key": key.public() }),
                )
                .unwrap(),
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{answer}");
    (
        answer["data"]["device"]["id"].as_str().unwrap().to_string(),
        answer["data"]["token"].as_str().unwrap().to_string(),
    )
}

/// POST a tool call with a raw body and an optional presence header: (status, error code).
async fn raw_call(
    on_box: &InProcess,
    token: &str,
    tool: &str,
    body: &[u8],
    presence: Option<&str>,
) -> (u16, Value) {
    let mut headers = vec![("content-type", "application/json")];
    if let Some(p) = presence {
        headers.push((vyre::kernel::presence::HEADER, p));
    }
    on_box
        .http_client(Some(token))
        .json(
            hyper::Method::POST,
            &format!("/v1/tools/{tool}"),
            Some(body.to_vec()),
            &headers,
        )
        .await
        .unwrap()
}

fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or("(none)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_vyre_is_fenced_to_link_allow_and_a_person_only_by_a_fresh_assertion_of_its_key() {
    let box_home = TempHome::new("link-fence");
    let the_box = start_box(&box_home, free_port()).await;
    let key = DeviceKey::generate().unwrap();
    let (device, token) = pair_by_hand(&the_box, &key).await;

    // It sees and calls only what link.allow lists (the defaults here).
    let tools = the_box
        .http_client(Some(&token))
        .get("/v1/tools")
        .await
        .unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"threads.list"), "{names:?}");
    assert!(names.contains(&"files.search"), "{names:?}");
    for hidden in ["vault.put", "devices.add", "pairing.code", "system.stop"] {
        assert!(!names.contains(&hidden), "{hidden} listed: {names:?}");
    }
    let (status, answer) = raw_call(&the_box, &token, "system.status", b"{}", None).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) =
        raw_call(&the_box, &token, "devices.add", br#"{"name":"evil"}"#, None).await;
    assert_eq!((status, code(&answer)), (403, "not_federated"), "{answer}");

    // The credential alone is no person.
    let body = br#"{"ask":"a-nope","decision":"allow"}"#;
    let (status, answer) = raw_call(&the_box, &token, "threads.answer", body, None).await;
    assert_eq!((status, code(&answer)), (403, "person_only"), "{answer}");

    // Vouched for: the person's call goes through the rules to the tool (no such ask here).
    let good = key.assert(&device, "threads.answer", body, "socket:501");
    let (status, answer) = raw_call(&the_box, &token, "threads.answer", body, Some(&good)).await;
    assert_eq!((status, code(&answer)), (404, "unknown_ask"), "{answer}");
    // Once.
    let (status, answer) = raw_call(&the_box, &token, "threads.answer", body, Some(&good)).await;
    assert_eq!(
        (status, code(&answer)),
        (403, "presence_replayed"),
        "{answer}"
    );
    // For that call only: other bytes, another tool.
    let fresh = key.assert(&device, "threads.answer", body, "socket:501");
    let other = br#"{"ask":"a-other","decision":"allow"}"#;
    let (status, answer) = raw_call(&the_box, &token, "threads.answer", other, Some(&fresh)).await;
    assert_eq!(
        (status, code(&answer)),
        (403, "presence_mismatch"),
        "{answer}"
    );
    let fresh = key.assert(&device, "threads.answer", body, "socket:501");
    let (status, answer) = raw_call(&the_box, &token, "threads.list", body, Some(&fresh)).await;
    assert_eq!(
        (status, code(&answer)),
        (403, "presence_mismatch"),
        "{answer}"
    );
    // Another key's signature is a forgery.
    let stranger = DeviceKey::generate().unwrap();
    let forged = stranger.assert(&device, "threads.answer", body, "socket:501");
    let (status, answer) = raw_call(&the_box, &token, "threads.answer", body, Some(&forged)).await;
    assert_eq!(
        (status, code(&answer)),
        (403, "presence_forged"),
        "{answer}"
    );
    // A person there is still fenced here.
    let put = br#"{"name":"x","kind":"secret","value":"v"}"#;
    let vouched = key.assert(&device, "vault.put", put, "socket:501");
    let (status, answer) = raw_call(&the_box, &token, "vault.put", put, Some(&vouched)).await;
    assert_eq!((status, code(&answer)), (403, "not_federated"), "{answer}");

    // Any other device's assertion is refused, not ignored.
    let (_, plain) = the_box.device_token("phone").await;
    let assertion = key.assert(&device, "threads.list", b"{}", "socket:501");
    let (status, answer) =
        raw_call(&the_box, &plain, "threads.list", b"{}", Some(&assertion)).await;
    assert_eq!(
        (status, code(&answer)),
        (403, "presence_not_paired"),
        "{answer}"
    );
    // Only a paired Vyre unpairs, and only itself.
    let (status, answer) = raw_call(&the_box, &plain, "pairing.unpair", b"{}", None).await;
    assert_eq!(
        (status, code(&answer)),
        (403, "not_paired_vyre"),
        "{answer}"
    );
    let (status, answer) = raw_call(&the_box, &token, "pairing.unpair", b"{}", None).await;
    assert_eq!(
        (status, answer["data"]["device"].as_str()),
        (200, Some(device.as_str()))
    );
    let (status, _) = raw_call(&the_box, &token, "system.status", b"{}", None).await;
    assert_eq!(status, 401, "its credential is revoked");
    // A pairing without a key is refused before its code is spent.
    let code_now = the_box
        .socket_client()
        .call("pairing.code", &json!({}))
        .await
        .unwrap();
    let (status, answer) = the_box
        .http_client(None)
        .json(
            hyper::Method::POST,
            "/v1/pair",
            Some(
                serde_json::to_vec(
                    &json!({ "code": code_now["code"], "name": "old", "key": "nope" }),
                )
                .unwrap(),
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!((status, code(&answer)), (400, "invalid_input"), "{answer}");
    let (status, _) = the_box
        .http_client(None)
        .json(
            hyper::Method::POST,
            "/v1/pair",
            Some(
                serde_json::to_vec(
                    &json!({ "code": code_now["code"], "name": "new", "key": key.public() }),
                )
                .unwrap(),
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "the code still works");
    the_box.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mac_calls_the_box_as_its_person_only_when_a_person_calls_and_link_allow_is_the_boxs() {
    let box_home = TempHome::new("link-call-box");
    std::fs::create_dir_all(box_home.vyre_home()).unwrap();
    std::fs::write(
        box_home.home().config_file(),
        r#"{"link": {"allow": ["threads.*", "system.status"]}}"#,
    )
    .unwrap();
    let the_box = start_box(&box_home, free_port()).await;
    let mac_home = mac_home("link-call-mac");
    let mac = start_mac(&mac_home).await;
    pair(&the_box, &mac).await;
    let on_mac = mac.socket_client();

    let threads = on_mac
        .call("pairing.call", &json!({ "tool": "threads.list" }))
        .await
        .unwrap();
    assert!(threads.is_array() || threads.is_object(), "{threads}");
    // The box's own list, not the Mac's default.
    let refused = on_mac
        .call(
            "pairing.call",
            &json!({ "tool": "files.roots", "input": {} }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("not_federated"), "{refused}");
    // A person at the Mac answers: the box takes it as theirs (no such ask there).
    let answer =
        json!({ "tool": "threads.answer", "input": { "ask": "a-nope", "decision": "allow" } });
    let err = on_mac.call("pairing.call", &answer).await.unwrap_err();
    assert_eq!(err.code(), Some("unknown_ask"), "{err}");
    // A module on the Mac is no person on the box.
    let err = on_mac
        .call(
            "macprobe.call",
            &json!({ "tool": "pairing.call", "input": answer }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("person_only"), "{err}");
    // A bad tool name never leaves the Mac.
    let err = on_mac
        .call("pairing.call", &json!({ "tool": "../v1/pair" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("invalid_input"), "{err}");

    // Ending the pairing revokes the Mac's device through its own unpairing.
    let list = on_mac.call("pairing.list", &json!({})).await.unwrap();
    let removed = on_mac
        .call("pairing.remove", &json!({ "id": list[0]["id"] }))
        .await
        .unwrap();
    assert_eq!(removed["revoked_on_box"], true, "{removed}");
    let items = on_mac.call("vault.list", &json!({})).await.unwrap();
    assert!(
        items
            .as_array()
            .unwrap()
            .iter()
            .all(|i| !i["name"].as_str().unwrap().starts_with("box-")),
        "the token and the key are forgotten: {items}"
    );
    let err = on_mac
        .call("pairing.call", &json!({ "tool": "threads.list" }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("not_paired"), "{err}");
    mac.stop().await;
    the_box.stop().await;
}

/// The box events the Mac has republished, as (box event id, type), in order.
async fn republished(mac: &Client) -> Vec<(i64, String)> {
    let events = mac
        .call(
            "system.events",
            &json!({ "types": ["pairing.box_event"], "limit": 1000 }),
        )
        .await
        .unwrap();
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["payload"]["id"].as_i64().unwrap(),
                e["payload"]["type"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn wait_for(mac: &Client, n: usize) -> Vec<(i64, String)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got = republished(mac).await;
        if got.len() >= n || std::time::Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn link_state(mac: &Client) -> Value {
    let list = mac.call("pairing.list", &json!({})).await.unwrap();
    list[0]["link"].clone()
}

async fn wait_link(mac: &Client, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    while link_state(mac).await != want {
        assert!(
            std::time::Instant::now() < deadline,
            "the link never became {want}: {}",
            link_state(mac).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn emit(on_box: &InProcess, kind: &str, n: u32) {
    on_box
        .socket_client()
        .call("boxprobe.emit", &json!({ "n": n, "kind": kind }))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mac_follows_the_box_events_across_restarts_and_a_dropped_link_losing_and_doubling_nothing()
 {
    let box_home = TempHome::new("link-follow-box");
    let port = free_port();
    let the_box = start_box(&box_home, port).await;
    let mac_home = mac_home("link-follow-mac");
    let mac = start_mac(&mac_home).await;
    // What the box did before the pairing is not the Mac's news.
    emit(&the_box, "thread.started", 2).await;
    pair(&the_box, &mac).await;
    wait_link(&mac.socket_client(), "up").await;

    emit(&the_box, "thread.started", 3).await;
    emit(&the_box, "probe.pinged", 2).await; // not followed
    emit(&the_box, "ask.raised", 2).await;
    assert_eq!(wait_for(&mac.socket_client(), 5).await.len(), 5);

    // The box stops (the link drops mid-stream) and comes back on the same address.
    the_box.stop().await;
    wait_link(&mac.socket_client(), "down").await;
    let the_box = start_box(&box_home, port).await;
    emit(&the_box, "thread.started", 2).await;
    assert_eq!(wait_for(&mac.socket_client(), 7).await.len(), 7);

    // The Mac stops; the box goes on; the Mac comes back and catches up.
    mac.stop().await;
    emit(&the_box, "ask.raised", 3).await;
    let mac = start_mac(&mac_home).await;
    let got = wait_for(&mac.socket_client(), 10).await;
    // Exactly the box's followed events after the pairing, each once, in order.
    the_box.stop().await;
    mac.stop().await;
    let on_box: Vec<(i64, String)> = stored_events(&box_home.home().database())
        .into_iter()
        .filter(|(_, t, _)| t == "thread.started" || t == "ask.raised")
        .map(|(id, t, _)| (id, t))
        .skip(2)
        .collect();
    assert_eq!(got, on_box);
    let stored = stored_events(&mac_home.home().database());
    let links: Vec<&str> = stored
        .iter()
        .filter(|(_, t, _)| t == "pairing.link")
        .map(|(_, _, p)| p["state"].as_str().unwrap())
        .collect();
    assert!(
        links.windows(2).any(|w| w == ["up", "down"]),
        "the Mac said the link went down, in one place: {links:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_box_threads_ask_reaches_the_mac_and_is_answered_there_by_its_person() {
    use crate::threads_e2e::*;
    let r = rig("link-ask-box").await;
    let mac_home = mac_home("link-ask-mac");
    let mac = start_mac(&mac_home).await;
    let paired = pair(&r.vyred, &mac).await;
    let on_mac = mac.socket_client();
    wait_link(&on_mac, "up").await;

    // A thread started on the box, listed from the Mac.
    let thread = start_thread(&r).await;
    let listed = on_mac
        .call("pairing.call", &json!({ "tool": "threads.list" }))
        .await
        .unwrap();
    assert!(listed.to_string().contains(&thread), "{listed}");

    // Its ask arrives on the Mac as a box event.
    let mut on_box = r.sock.events("types=ask.*", None).await.unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch from-the-mac.txt" }),
        )
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let raised = loop {
        let events = on_mac
            .call(
                "system.events",
                &json!({ "types": ["pairing.box_event"], "limit": 100 }),
            )
            .await
            .unwrap();
        if let Some(e) = events
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["payload"]["type"] == "ask.raised")
        {
            break e["payload"].clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no ask reached the Mac: {events}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(raised["box"], paired["id"]);
    assert_eq!(
        raised["payload"]["input"]["command"],
        "touch from-the-mac.txt"
    );
    let ask = raised["payload"]["ask"].clone();

    // A module on the Mac cannot answer it; the person at the Mac can.
    let answer = json!({ "tool": "threads.answer", "input": { "ask": ask, "decision": "allow" } });
    let err = on_mac
        .call(
            "macprobe.call",
            &json!({ "tool": "pairing.call", "input": answer }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("person_only"), "{err}");
    on_mac.call("pairing.call", &answer).await.unwrap();
    let events = events_until(&mut on_box, |e| e["type"] == "ask.answered").await;
    let answered = &of_type(&events, "ask.answered")[0]["payload"];
    assert_eq!(answered["decision"], "allow");
    // The box's audit names the Mac's device and the person there it vouched for.
    let uid = nix::unistd::getuid().as_raw();
    assert_eq!(
        answered["by"],
        format!("link:{}/socket:{uid}", paired["device"].as_str().unwrap()),
        "{answered}"
    );
    let mut finished = r
        .sock
        .events("types=thread.finished", Some("0"))
        .await
        .unwrap();
    events_until(&mut finished, |e| e["type"] == "thread.finished").await;
    assert!(
        r.work.join("from-the-mac.txt").exists(),
        "the answered command ran"
    );
    mac.stop().await;
    r.vyred.stop().await;
}

/// How a fake box answers the event stream.
#[derive(Clone, Copy)]
enum Stream {
    /// One event that never ends.
    Endless,
    /// Nothing at all, the connection held open (a Mac that slept, a network that changed).
    Silent,
}

/// A "box" that pairs, then answers each event stream as `how` says; the streams opened so far.
async fn fake_box(how: Stream) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let streams = Arc::new(AtomicUsize::new(0));
    let opened = streams.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            let opened = opened.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if conn.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                if head.starts_with("POST /v1/pair") {
                    let body = json!({ "data": {
                        "token": "vyre_dev_endless", "device": { "id": "dendless", "name": "test mac" },
                        "name": "endless", "events_from": 0
                    }})
                    .to_string();
                    let _ = conn
                        .write_all(
                            format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                                body.len()
                            )
                            .as_bytes(),
                        )
                        .await;
                    return;
                }
                opened.fetch_add(1, Ordering::SeqCst);
                let _ = conn
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
                    .await;
                if let Stream::Silent = how {
                    // Held open, never a word, until the other side lets go.
                    let _ = conn.read(&mut byte).await;
                    return;
                }
                let _ = conn.write_all(b"id: 1\ndata: ").await;
                let chunk = vec![b'x'; 64 * 1024];
                // 64 MiB at most, so a Mac without the cap would hold it all.
                for _ in 0..1024 {
                    if conn.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, streams)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_that_never_ends_an_event_cannot_make_the_mac_hold_it() {
    let (addr, _) = fake_box(Stream::Endless).await;
    let mac_home = mac_home("link-endless-mac");
    let mac = start_mac(&mac_home).await;
    let on_mac = mac.socket_client();
    on_mac
        .call(
            "pairing.add",
            &json!({ "address": addr.to_string(), "code": "0000-0000-0000", "name": "test mac" }),
        )
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let why = loop {
        let events = on_mac
            .call("system.events", &json!({ "types": ["pairing.link"] }))
            .await
            .unwrap();
        if let Some(down) = events
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["payload"]["state"] == "down")
        {
            break down["payload"]["why"].as_str().unwrap_or("").to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the link never went down: {events}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(why.contains("larger than 8 MiB"), "{why}");
    assert!(
        republished(&on_mac).await.is_empty(),
        "nothing was republished"
    );
    mac.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_on_the_box_is_found_and_previewed_from_the_mac_and_nothing_outside_its_roots() {
    use std::os::unix::fs::symlink;
    let box_home = TempHome::new("link-files-box");
    let project = box_home.dir.join("acme");
    let outside = box_home.dir.join("outside");
    for d in [project.join("src"), outside.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(project.join("src/parser.rs"), "fn parse() {}\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "sk-ant-api03-not-for-the-mac\n").unwrap();
    symlink(outside.join("secret.txt"), project.join("notes.txt")).unwrap();
    let the_box = start_box(&box_home, free_port()).await;
    the_box
        .socket_client()
        .call(
            "projects.create",
            &json!({ "name": "Acme", "home": project }),
        )
        .await
        .unwrap();
    let mac_home = mac_home("link-files-mac");
    let mac = start_mac(&mac_home).await;
    pair(&the_box, &mac).await;
    let on_mac = mac.socket_client();

    let found = on_mac
        .call(
            "pairing.call",
            &json!({ "tool": "files.search", "input": { "query": "parser" } }),
        )
        .await
        .unwrap();
    let path = found["found"][0]["path"].as_str().unwrap().to_string();
    assert!(path.ends_with("acme/src/parser.rs"), "{found}");
    let text = on_mac
        .call(
            "pairing.call",
            &json!({ "tool": "files.preview", "input": { "path": path } }),
        )
        .await
        .unwrap();
    assert_eq!(text["lines"][0], json!({ "n": 1, "text": "fn parse() {}" }));
    // The box's confinement holds for the Mac as for anyone: outside the roots, or out through
    // a link planted inside one.
    let through_link = project.join("notes.txt").display().to_string();
    let outside_path = outside.join("secret.txt").display().to_string();
    for (path, want) in [
        (outside_path.as_str(), "outside_roots"),
        (through_link.as_str(), "link_refused"),
        ("/etc/passwd", "outside_roots"),
    ] {
        let err = on_mac
            .call(
                "pairing.call",
                &json!({ "tool": "files.preview", "input": { "path": path } }),
            )
            .await
            .expect_err(path);
        assert_eq!(err.code(), Some(want), "{path}: {err}");
        assert!(!err.to_string().contains("not-for-the-mac"), "{err}");
    }
    mac.stop().await;
    the_box.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_gone_silent_is_taken_for_dead_and_opened_again() {
    let (addr, streams) = fake_box(Stream::Silent).await;
    let mac_home = mac_home("link-silent-mac");
    std::fs::write(
        mac_home.home().config_file(),
        r#"{"vault": {"keystore": "file"}, "link": {"silence_s": 1}}"#,
    )
    .unwrap();
    let mac = start_mac(&mac_home).await;
    let on_mac = mac.socket_client();
    on_mac
        .call(
            "pairing.add",
            &json!({ "address": addr.to_string(), "code": "0000-0000-0000", "name": "test mac" }),
        )
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while streams.load(Ordering::SeqCst) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the Mac never opened the stream again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let events = on_mac
        .call("system.events", &json!({ "types": ["pairing.link"] }))
        .await
        .unwrap();
    let said: Vec<(&str, &str)> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["payload"]["state"].as_str().unwrap(),
                e["payload"]["why"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(
        said.iter()
            .any(|(state, why)| *state == "down" && why.contains("no word from the box in 1 s")),
        "{said:?}"
    );
    mac.stop().await;
}
