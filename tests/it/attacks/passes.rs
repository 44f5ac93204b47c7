//! A relayed pass in the wrong hands (ADR 0036; the network and a leaked code, attackers 4 and
//! 5): the pass's code forwarded or leaked after it was taken, a request captured on the way
//! and sent again (before and after the giver restarts) or altered, a stranger's own signature,
//! the bearer token of old. Each is refused at the giver's Vyre, and nothing is sent, used or
//! kept.

use std::sync::{Arc, Mutex};

use axum::http::{StatusCode, Uri};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::Signer as _;
use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;
use crate::vault_passes::service;

const VALUE: &str = "shared_live_4c1e9b7d2a6f8e3b";

/// What went by: each request's path and body.
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// Where the giver listens, changed when it restarts.
type Target = Arc<Mutex<std::net::SocketAddr>>;

/// Someone on the way between the two Vyres: passes each request on to the giver and keeps a
/// copy of each body, as a proxy or a captured network would.
async fn on_the_way(giver: std::net::SocketAddr) -> (u16, Seen, Target) {
    let seen: Seen = Arc::default();
    let target: Target = Arc::new(Mutex::new(giver));
    let (keep, to) = (seen.clone(), target.clone());
    let app = axum::Router::new().fallback(move |uri: Uri, body: axum::body::Bytes| {
        let (keep, to) = (keep.clone(), to.clone());
        async move {
            keep.lock()
                .unwrap()
                .push((uri.path().to_string(), body.to_vec()));
            let giver = *to.lock().unwrap();
            let (status, answer) = Client::http(giver, None)
                .json(
                    axum::http::Method::POST,
                    uri.path(),
                    Some(body.to_vec()),
                    &[("content-type", "application/json")],
                )
                .await
                .unwrap();
            (StatusCode::from_u16(status).unwrap(), axum::Json(answer))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (port, seen, target)
}

/// A vyred whose Gate may send to the service on loopback.
async fn start(home: &TempHome, port: u16) -> InProcess {
    let config = json!({ "gate": { "local": [format!("127.0.0.1:{port}")] } });
    crate::vault_passes::start(home, config).await
}

/// `POST path` at the giver as a stranger would: the error's code, or `ok`.
async fn post(giver: std::net::SocketAddr, path: &str, body: &[u8]) -> String {
    let (status, answer) = Client::http(giver, None)
        .json(
            axum::http::Method::POST,
            path,
            Some(body.to_vec()),
            &[("content-type", "application/json")],
        )
        .await
        .unwrap();
    if status == 200 {
        "ok".into()
    } else {
        answer["error"]["code"].as_str().unwrap_or("?").to_string()
    }
}

fn request(port: u16, path: &str) -> Value {
    json!({
        "method": "GET",
        "url": format!("http://127.0.0.1:{port}/{path}"),
        "headers": { "Authorization": "Bearer {{vault:shared}}" },
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaked_code_a_captured_request_and_a_strangers_key_open_nothing() {
    let (port, got) = service().await;
    let homes = [
        TempHome::new("pass-attack-giver"),
        TempHome::new("pass-attack-taker"),
        TempHome::new("pass-attack-stranger"),
    ];
    let giver = start(&homes[0], port).await;
    let taker = start(&homes[1], port).await;
    let stranger = start(&homes[2], port).await;
    let (g, t, s) = (
        giver.socket_client(),
        taker.socket_client(),
        stranger.socket_client(),
    );
    let (relay_port, seen, target) = on_the_way(giver.http).await;

    // Sam's Vyre takes the pass (through someone on the way) and uses it once.
    g.call("vault.put", &json!({ "name": "api", "value": VALUE }))
        .await
        .unwrap();
    let made = g
        .call(
            "vault.pass.create",
            &json!({ "name": "api", "to": "sam", "url": format!("http://127.0.0.1:{relay_port}") }),
        )
        .await
        .unwrap();
    let (pass, code) = (
        made["id"].as_str().unwrap().to_string(),
        made["code"].as_str().unwrap().to_string(),
    );
    let token = {
        let raw = B64.decode(code.trim_start_matches("vyre-pass-1.")).unwrap();
        serde_json::from_slice::<Value>(&raw).unwrap()["token"]
            .as_str()
            .unwrap()
            .to_string()
    };
    t.call(
        "vault.pass.accept",
        &json!({ "code": code, "name": "shared" }),
    )
    .await
    .unwrap();
    t.call("vault.grant", &json!({ "item": "shared", "to": "gate" }))
        .await
        .unwrap();
    let sent = t
        .call("gate.request", &request(port, "first"))
        .await
        .unwrap();
    assert_eq!(sent["status"], 200, "{sent}");
    assert_eq!(got.lock().unwrap().as_slice(), [format!("Bearer {VALUE}")]);
    let listed = g.call("vault.pass.list", &json!({})).await.unwrap();
    assert!(listed[0]["taken_at"].is_i64(), "{listed}");
    let captured = seen
        .lock()
        .unwrap()
        .iter()
        .find(|(path, _)| path == "/v1/pass")
        .map(|(_, body)| body.clone())
        .expect("the request went by");
    assert!(
        !String::from_utf8_lossy(&captured).contains(&token),
        "a request carries no token"
    );

    // The code leaked: another Vyre accepting it is refused, and keeps nothing.
    let err = s
        .call(
            "vault.pass.accept",
            &json!({ "code": code, "name": "stolen" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("pass_taken"), "{err}");
    assert_eq!(s.call("vault.list", &json!({})).await.unwrap(), json!([]));
    // So is the code, straight at the giver, with a key of the stranger's own.
    let stranger_key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let bind = json!({ "pass": pass, "token": token, "key": B64.encode(stranger_key.verifying_key().to_bytes()) });
    assert_eq!(
        post(giver.http, "/v1/pass/bind", bind.to_string().as_bytes()).await,
        "pass_taken"
    );
    // And as the bearer token it once was.
    let bearer = json!({ "pass": pass, "token": token, "request": request(port, "bearer") });
    assert_eq!(
        post(giver.http, "/v1/pass", bearer.to_string().as_bytes()).await,
        "invalid_input"
    );

    // The captured request, sent again: refused as a replay.
    assert_eq!(
        post(giver.http, "/v1/pass", &captured).await,
        "pass_replayed"
    );
    // And after the giver's Vyre restarted: the requests it saw are kept in its store.
    giver.stop().await;
    let giver = start(&homes[0], port).await;
    *target.lock().unwrap() = giver.http;
    let g = giver.socket_client();
    assert_eq!(
        post(giver.http, "/v1/pass", &captured).await,
        "pass_replayed"
    );
    // Altered to go elsewhere, with its signature: the signature no longer holds.
    let mut altered: Value = serde_json::from_slice(&captured).unwrap();
    let signed = altered["signed"]
        .as_str()
        .unwrap()
        .replace("/first", "/steal");
    altered["signed"] = json!(signed);
    assert_eq!(
        post(giver.http, "/v1/pass", altered.to_string().as_bytes()).await,
        "pass_revoked"
    );
    // Signed afresh by the stranger's own key: not the key the pass is bound to.
    let fresh = json!({
        "at": vyre::now_ms(), "nonce": "stranger-nonce-0001", "request": request(port, "steal"),
    })
    .to_string();
    let mut message = b"vyre-pass-relay-v1\0".to_vec();
    message.extend_from_slice(pass.as_bytes());
    message.push(0);
    message.extend_from_slice(fresh.as_bytes());
    let forged = json!({
        "pass": pass, "signed": fresh,
        "sig": B64.encode(stranger_key.sign(&message).to_bytes()),
    });
    assert_eq!(
        post(giver.http, "/v1/pass", forged.to_string().as_bytes()).await,
        "pass_revoked"
    );

    // None of it sent anything or counted as a use; sam's own requests still go.
    assert_eq!(got.lock().unwrap().len(), 1, "nothing sent by the attacks");
    let listed = g.call("vault.pass.list", &json!({})).await.unwrap();
    assert_eq!(listed[0]["uses"], 1, "{listed}");
    t.call("gate.request", &request(port, "second"))
        .await
        .unwrap();
    assert_eq!(got.lock().unwrap().len(), 2);

    // Revoked: sam's next request ends at the giver.
    g.call("vault.pass.revoke", &json!({ "id": pass }))
        .await
        .unwrap();
    let err = t
        .call("gate.request", &request(port, "third"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("pass_revoked"), "{err}");
    assert_eq!(
        got.lock().unwrap().len(),
        2,
        "nothing sent after the revoke"
    );

    // No token or value in any event either side wrote.
    for vyred in [giver, taker, stranger] {
        vyred.stop().await;
    }
    for home in &homes {
        for (_, kind, data) in stored_events(&home.home().database()) {
            let text = data.to_string();
            assert!(
                !text.contains(&token) && !text.contains(VALUE),
                "{kind}: {text}"
            );
        }
    }
}
