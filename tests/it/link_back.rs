//! The box calls the Mac (issue 20): down the event stream the Mac holds open, since the box
//! cannot dial a Mac behind its router. The Mac serves it only what its own `link.allow` lists
//! (by default: find and read files in its roots), never as a person; only the device a call
//! went to can answer it; with the Mac gone the box says so at once.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::kernel::presence::DeviceKey;
use vyre::surfaces::client::Client;

use crate::link::{free_port, pair, pair_by_hand, start_box, start_mac};
use crate::support::*;

/// `pairing.call` on the box to the Mac's device, retried while the Mac's line is not open yet.
async fn call_mac(
    on_box: &Client,
    device: &str,
    tool: &str,
    input: Value,
) -> Result<Value, String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match on_box
            .call(
                "pairing.call",
                &json!({ "device": device, "tool": tool, "input": input }),
            )
            .await
        {
            Err(e) if e.code() == Some("peer_offline") && std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Ok(v) => return Ok(v),
            Err(e) => return Err(format!("{}: {e}", e.code().unwrap_or("?"))),
        }
    }
}

fn code(e: &str) -> &str {
    e.split(':').next().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_box_finds_and_reads_a_file_on_the_mac_and_nothing_else_of_it() {
    let the_box_home = TempHome::new("back-box");
    let the_box = start_box(&the_box_home, free_port()).await;
    let mac_home = TempHome::new("back-mac");
    std::fs::create_dir_all(mac_home.vyre_home()).unwrap();
    let root = mac_home.dir.join("work");
    let outside = mac_home.dir.join("private");
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        root.join("notes/launch-plan.md"),
        "# Launch\nship on friday\n",
    )
    .unwrap();
    std::fs::write(outside.join("secret.txt"), "not for the box\n").unwrap();
    std::os::unix::fs::symlink(
        outside.join("secret.txt"),
        root.join("notes/secret-link.txt"),
    )
    .unwrap();
    std::fs::write(
        mac_home.home().config_file(),
        json!({ "vault": { "keystore": "file" }, "roots": [root] }).to_string(),
    )
    .unwrap();
    let mac = start_mac(&mac_home).await;
    let paired = pair(&the_box, &mac).await;
    let device = paired["device"].as_str().unwrap().to_string();
    let on_box = the_box.socket_client();

    // Found and read on the Mac, from the box.
    let found = call_mac(
        &on_box,
        &device,
        "files.search",
        json!({ "query": "launch" }),
    )
    .await
    .unwrap();
    let text = found.to_string();
    assert!(text.contains("launch-plan.md"), "{found}");
    let path = root.join("notes/launch-plan.md");
    let preview = call_mac(&on_box, &device, "files.preview", json!({ "path": path }))
        .await
        .unwrap();
    assert!(preview.to_string().contains("ship on friday"), "{preview}");

    // Outside the Mac's roots, or out through a link planted inside them: refused there.
    let err = call_mac(
        &on_box,
        &device,
        "files.preview",
        json!({ "path": outside.join("secret.txt") }),
    )
    .await
    .unwrap_err();
    assert!(!err.contains("not for the box"), "{err}");
    assert_eq!(code(&err), "outside_roots", "{err}");
    let err = call_mac(
        &on_box,
        &device,
        "files.preview",
        json!({ "path": root.join("notes/secret-link.txt") }),
    )
    .await
    .unwrap_err();
    assert!(!err.contains("not for the box"), "{err}");
    assert_eq!(code(&err), "link_refused", "{err}");

    // Nothing the Mac's link.allow does not list: no sessions, no vault, no threads.
    for (tool, input) in [
        ("threads.list", json!({})),
        ("threads.start", json!({ "prompt": "rm -rf ~" })),
        ("vault.list", json!({})),
        ("files.fetch", json!({ "path": path })),
        ("devices.add", json!({ "name": "the box's own" })),
    ] {
        let err = call_mac(&on_box, &device, tool, input).await.unwrap_err();
        assert_eq!(code(&err), "not_federated", "{tool}: {err}");
    }
    // Its one always-allowed tool ends nothing of the Mac's.
    let err = call_mac(&on_box, &device, "pairing.unpair", json!({}))
        .await
        .unwrap_err();
    assert_eq!(code(&err), "unknown_device", "{err}");
    let list = mac
        .socket_client()
        .call("pairing.list", &json!({}))
        .await
        .unwrap();
    assert_eq!(list[0]["status"], "paired", "{list}");

    // The Mac gone: the box says so at once, not after a timeout.
    mac.stop().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let err = loop {
        let err = on_box
            .call(
                "pairing.call",
                &json!({ "device": device, "tool": "system.status" }),
            )
            .await
            .unwrap_err();
        if err.code() == Some("peer_offline") || std::time::Instant::now() > deadline {
            break err;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(err.code(), Some("peer_offline"), "{err}");
    the_box.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_paired_vyre_takes_calls_and_only_the_one_called_answers() {
    let home = TempHome::new("back-attack");
    let the_box = start_box(&home, free_port()).await;
    let on_box = the_box.socket_client();

    // A program's or a person's device takes no calls, and answers none.
    let (_, plain) = the_box.device_token("phone").await;
    let err = the_box
        .http_client(Some(&plain))
        .events("calls=1", None)
        .await
        .err()
        .expect("refused");
    assert_eq!(err.code(), Some("not_paired_vyre"), "{err}");
    let (status, answer) = the_box
        .http_client(Some(&plain))
        .json(
            hyper::Method::POST,
            "/v1/link/calls/00ff",
            Some(br#"{"data": 1}"#.to_vec()),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (403, Some("not_paired_vyre"))
    );

    // Two paired Vyres, by hand: the box calls the first.
    let (first, first_token) = pair_by_hand(&the_box, &DeviceKey::generate().unwrap()).await;
    let (_, second_token) = pair_by_hand(&the_box, &DeviceKey::generate().unwrap()).await;
    let mut line = the_box
        .http_client(Some(&first_token))
        .events("types=nothing.here&calls=1", None)
        .await
        .unwrap();
    let to = first.clone();
    let call = tokio::spawn(async move {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let r = on_box
                .call(
                    "pairing.call",
                    &json!({ "device": to, "tool": "files.search", "input": { "query": "x" } }),
                )
                .await;
            match r {
                Err(e)
                    if e.code() == Some("peer_offline") && std::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                r => return r,
            }
        }
    });
    let message = loop {
        let m = tokio::time::timeout(Duration::from_secs(15), line.next())
            .await
            .expect("the call comes down the line")
            .unwrap()
            .unwrap();
        if m.event.as_deref() == Some("link.call") {
            break m;
        }
    };
    assert!(message.id.is_none(), "a call is not an event of the log");
    let sent: Value = serde_json::from_str(&message.data).unwrap();
    assert_eq!(sent["tool"], "files.search");
    let id = sent["id"].as_str().unwrap();
    let post = |token: String, body: &'static [u8]| {
        let client = the_box.http_client(Some(&token));
        let path = format!("/v1/link/calls/{id}");
        async move {
            client
                .json(hyper::Method::POST, &path, Some(body.to_vec()), &[])
                .await
                .unwrap()
        }
    };
    // The other paired Vyre cannot answer for it.
    let (status, answer) = post(second_token.clone(), br#"{"data": "forged"}"#).await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (404, Some("unknown_call"))
    );
    // Garbage is refused without spending the call.
    let (status, _) = post(first_token.clone(), b"{not json").await;
    assert_eq!(status, 400);
    let (status, _) = post(first_token.clone(), br#"{"data": 1, "error": {}}"#).await;
    assert_eq!(status, 400);
    // The one called answers, once; a refusal passes on as a refusal, its code kept.
    let (status, _) = post(
        first_token.clone(),
        br#"{"status": 403, "error": {"code": "not_federated", "message": "no"}}"#,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = post(first_token.clone(), br#"{"data": "again"}"#).await;
    assert_eq!(status, 404, "answered once");
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.code(), Some("not_federated"), "{err}");
    // A revoked device's line is cut, and the box says it is offline.
    the_box
        .socket_client()
        .call("devices.revoke", &json!({ "id": first }))
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let err = the_box
            .socket_client()
            .call(
                "pairing.call",
                &json!({ "device": first, "tool": "files.search" }),
            )
            .await
            .unwrap_err();
        // A revoked device is no paired Vyre any more: the box does not look for its line.
        if err.code() == Some("unknown_pairing") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{err}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(line);
    the_box.stop().await;
}
