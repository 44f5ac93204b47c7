//! The vault's whole scenario (issue 27) around passes (spec 7.5, ADR 0036): a 500-item
//! Bitwarden export imported, one login revealed with presence (a wrong passphrase first), and
//! items shared with another person's Vyre, here a second vyred on this machine. Relayed: the receiving Vyre's Gate sends its request through the
//! giver's, which fills the value in; a revoke ends it at the next call. Sealed: an encrypted
//! copy opened once with a key the receiver made. Offboarding revokes what a person holds and
//! says what to rotate and where it was used. No value and no pass token is anywhere in the
//! clear: not in either store, an event or an answer.

use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use base64::Engine;
use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;

const VALUE: &str = "team_live_8d2f6a1c9e4b7a3d5f";
const PASSWORD: &str = "pw-sealed-3b9e1f7c2a";

/// A service that keeps every `Authorization` it was sent (and echoes it back).
pub(crate) async fn service() -> (u16, Arc<Mutex<Vec<String>>>) {
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let keep = got.clone();
    let app = axum::Router::new().fallback(move |headers: HeaderMap| {
        let keep = keep.clone();
        async move {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            keep.lock().unwrap().push(auth.clone());
            axum::Json(json!({ "you_sent": auth }))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (port, got)
}

fn request(port: u16, reference: &str) -> Value {
    json!({
        "method": "GET",
        "url": format!("http://127.0.0.1:{port}/whoami"),
        "headers": { "Authorization": format!("Bearer {{{{vault:{reference}}}}}") },
    })
}

fn code_of(err: &vyre::surfaces::client::ClientError) -> String {
    err.code().unwrap_or_default().to_string()
}

/// `POST /v1/pass` as another Vyre would: the error's code, or its data.
async fn post_pass(endpoint: &Client, body: &Value) -> Result<Value, String> {
    let (status, answer) = endpoint
        .json(
            axum::http::Method::POST,
            "/v1/pass",
            Some(body.to_string().into_bytes()),
            &[("content-type", "application/json")],
        )
        .await
        .unwrap();
    if status == 200 {
        Ok(answer["data"].clone())
    } else {
        Err(answer["error"]["code"].as_str().unwrap_or("?").to_string())
    }
}

/// Every file under `dir`, read once: `(path, bytes)`.
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                found.push((p, bytes));
            }
        }
    }
    found
}

/// The giver's item `name` shared with sam as a relayed pass through the giver at `address`,
/// accepted by the taker as `kept` and granted to the taker's Gate.
async fn share_relayed(g: &Client, t: &Client, address: &str, name: &str, kept: &str) {
    let pass = g
        .call(
            "vault.pass.create",
            &json!({ "name": name, "to": "sam", "url": format!("http://{address}") }),
        )
        .await
        .unwrap();
    t.call(
        "vault.pass.accept",
        &json!({ "code": pass["code"], "name": kept }),
    )
    .await
    .unwrap();
    t.call("vault.grant", &json!({ "item": kept, "to": "gate" }))
        .await
        .unwrap();
}

pub(crate) async fn start(home: &TempHome, config: Value) -> InProcess {
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    InProcess::start(home, vec![]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_shares_one_item_with_another_vyre_until_it_is_revoked_and_offboarding_ends_the_rest()
 {
    let (port, got) = service().await;
    let (giver_home, taker_home) = (TempHome::new("pass-giver"), TempHome::new("pass-taker"));
    // Both Gates may send to the service on loopback (their persons listed it); the taker's
    // person listed a private address too, which the giver's did not.
    let giver = start(
        &giver_home,
        json!({ "gate": { "local": [format!("127.0.0.1:{port}")] } }),
    )
    .await;
    let taker = start(
        &taker_home,
        json!({ "gate": { "local": [format!("127.0.0.1:{port}"), "10.1.2.3:443"] } }),
    )
    .await;
    let (g, t) = (giver.socket_client(), taker.socket_client());
    // Every answer either side gives, searched for values at the end.
    let mut answers: Vec<String> = Vec::new();

    // The giver's vault is a password manager's: 500 logins and more, imported.
    let (export, imported_values) = crate::vault::bitwarden_export();
    let out = g
        .call("vault.import", &json!({ "data": export.to_string() }))
        .await
        .unwrap();
    assert_eq!(
        out["imported"].as_array().unwrap().len(),
        508,
        "500 logins, 5 notes, 3 cards"
    );
    answers.push(out.to_string());
    // One shown to the person, with presence: a wrong passphrase first.
    g.call(
        "vault.passphrase",
        &json!({ "passphrase": "giver horse battery" }),
    )
    .await
    .unwrap();
    let err = g
        .call(
            "vault.reveal",
            &json!({ "name": "Site 042", "field": "password", "passphrase": "wrong horse" }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "wrong_passphrase", "{err}");
    let shown = g
        .call(
            "vault.reveal",
            &json!({ "name": "Site 042", "field": "password", "passphrase": "giver horse battery" }),
        )
        .await
        .unwrap();
    assert_eq!(shown["value"], "imp-pass-0042-Zq8");
    // An imported login shared as a relayed pass, its password filled in at the giver's Gate.
    share_relayed(&g, &t, &giver.http.to_string(), "Site 007", "sams-site").await;
    let sent = t
        .call("gate.request", &request(port, "sams-site/password"))
        .await
        .unwrap();
    assert_eq!(
        got.lock().unwrap().pop().unwrap(),
        "Bearer imp-pass-0007-Zq8"
    );
    answers.push(sent.to_string());

    g.call("vault.put", &json!({ "name": "team-api", "value": VALUE }))
        .await
        .unwrap();
    g.call(
        "vault.put",
        &json!({ "name": "team-login", "kind": "login", "username": "ops", "password": PASSWORD }),
    )
    .await
    .unwrap();

    // A relayed pass, given and taken.
    let made = g
        .call(
            "vault.pass.create",
            &json!({ "name": "team-api", "to": "sam", "url": format!("http://{}", giver.http) }),
        )
        .await
        .unwrap();
    assert_eq!(made["kind"], "relayed");
    let code = made["code"].as_str().unwrap().to_string();
    assert!(code.starts_with("vyre-pass-1.") && !code.contains(VALUE));
    let token = {
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(code.trim_start_matches("vyre-pass-1."))
            .unwrap();
        let v: Value = serde_json::from_slice(&raw).unwrap();
        v["token"].as_str().unwrap().to_string()
    };
    // Not by the Vyre that gave it; not under a name the taker has (and that burns nothing).
    let err = g
        .call(
            "vault.pass.accept",
            &json!({ "code": code, "name": "mine-again" }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "invalid_input", "{err}");
    let err = t
        .call(
            "vault.pass.accept",
            &json!({ "code": code, "name": "sams-site" }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "exists", "{err}");
    let taken = t
        .call(
            "vault.pass.accept",
            &json!({ "code": code, "name": "sams-key" }),
        )
        .await
        .unwrap();
    // Taken once: again, even by the same Vyre, it is refused.
    let err = t
        .call(
            "vault.pass.accept",
            &json!({ "code": code, "name": "sams-key-again" }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "pass_taken", "{err}");
    assert_eq!(
        (taken["pass"].as_str(), taken["kind"].as_str()),
        (Some("relayed"), Some("pass"))
    );
    let listed = t.call("vault.list", &json!({})).await.unwrap();
    let item = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "sams-key")
        .unwrap()
        .clone();
    assert_eq!(item["kind"], "pass");
    assert_eq!(item["from"], format!("http://{}", giver.http));

    // Not granted to the taker's Gate yet: refused there, nothing sent.
    let err = t
        .call("gate.request", &request(port, "sams-key"))
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "not_granted", "{err}");
    t.call("vault.grant", &json!({ "item": "sams-key", "to": "gate" }))
        .await
        .unwrap();
    let sent = t
        .call("gate.request", &request(port, "sams-key"))
        .await
        .unwrap();
    assert_eq!(sent["status"], 200, "{sent}");
    assert_eq!(got.lock().unwrap().as_slice(), [format!("Bearer {VALUE}")]);
    let body = sent["body"].as_str().unwrap();
    assert!(
        body.contains("Bearer {{vault:sams-key}}") && !body.contains(VALUE),
        "the answer comes back masked: {body}"
    );
    // The giver sees the use and where it went.
    let passes = g.call("vault.pass.list", &json!({})).await.unwrap();
    assert_eq!(passes[0]["uses"], 1, "{passes}");
    assert_eq!(passes[0]["to"], "sam");

    // Bad input on either side: two items with a pass, a pass used by a module other than the
    // Gate, a pass with no reference, a wrong token, a body that is not a relay.
    t.call(
        "vault.put",
        &json!({ "name": "mine", "value": "mine_value_123456" }),
    )
    .await
    .unwrap();
    t.call("vault.grant", &json!({ "item": "mine", "to": "gate" }))
        .await
        .unwrap();
    let mut two = request(port, "sams-key");
    two["body"] = json!("{{vault:mine}}");
    two["method"] = json!("POST");
    let err = t.call("gate.request", &two).await.unwrap_err();
    assert_eq!(code_of(&err), "invalid_input", "{err}");
    let endpoint = Client::http(giver.http, None);
    let pass_id = made["id"].as_str().unwrap();
    // The pass is bound to the taker's key: its token alone, as a bearer, opens nothing.
    for body in [
        json!({ "pass": pass_id, "token": token, "request": request(port, "x") }),
        json!({ "pass": pass_id }),
    ] {
        let err = post_pass(&endpoint, &body).await.unwrap_err();
        assert_eq!(err, "invalid_input", "{body}");
    }
    // A private address the giver did not list is refused by the giver's Gate (the taker's
    // person listed it, so the taker's Gate sent it on).
    let err = t
        .call(
            "gate.request",
            &json!({ "method": "GET", "url": "https://10.1.2.3/", "headers": { "a": "{{vault:sams-key}}" } }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "private_address", "{err}");
    assert_eq!(got.lock().unwrap().len(), 1, "none of these sent anything");

    // Revoked mid-use: the next call ends there.
    let revoked = g
        .call("vault.pass.revoke", &json!({ "id": pass_id }))
        .await
        .unwrap();
    assert_eq!(
        (revoked["revoked"].as_bool(), revoked["rotate"].as_bool()),
        (Some(true), Some(false))
    );
    let err = t
        .call("gate.request", &request(port, "sams-key"))
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "pass_revoked", "{err}");
    assert_eq!(
        got.lock().unwrap().len(),
        1,
        "nothing sent after the revoke"
    );

    // A sealed pass: a key the taker made, a copy only it opens, once.
    let key = t.call("vault.pass.key", &json!({})).await.unwrap()["key"]
        .as_str()
        .unwrap()
        .to_string();
    let sealed = g
        .call(
            "vault.pass.create",
            &json!({ "name": "team-login", "to": "sam", "sealed_for": key }),
        )
        .await
        .unwrap();
    assert_eq!(sealed["kind"], "sealed");
    let sealed_code = sealed["code"].as_str().unwrap().to_string();
    assert!(!sealed_code.contains(PASSWORD));
    // Another Vyre's key does not open it.
    let err = g
        .call(
            "vault.pass.accept",
            &json!({ "code": sealed_code, "name": "x" }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "unknown_key", "{err}");
    let taken = t
        .call(
            "vault.pass.accept",
            &json!({ "code": sealed_code, "name": "sams-login" }),
        )
        .await
        .unwrap();
    assert_eq!(
        (taken["pass"].as_str(), taken["kind"].as_str()),
        (Some("sealed"), Some("login"))
    );
    let err = t
        .call(
            "vault.pass.accept",
            &json!({ "code": sealed_code, "name": "again" }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "unknown_key", "a key opens one pass: {err}");
    t.call(
        "vault.grant",
        &json!({ "item": "sams-login", "to": "gate" }),
    )
    .await
    .unwrap();
    // The copy is the taker's own: its Gate sends it, and the giver keeps no use of it.
    t.call("gate.request", &request(port, "sams-login/password"))
        .await
        .unwrap();
    assert_eq!(
        got.lock().unwrap().last().unwrap(),
        &format!("Bearer {PASSWORD}")
    );

    // A second relayed pass, used, then offboarding: a dry run first.
    share_relayed(&g, &t, &giver.http.to_string(), "team-api", "sams-key-2").await;
    t.call("gate.request", &request(port, "sams-key-2"))
        .await
        .unwrap();
    let dry = g
        .call(
            "vault.offboard",
            &json!({ "person": "sam", "dry_run": true }),
        )
        .await
        .unwrap();
    assert_eq!(dry["revoked"].as_array().unwrap().len(), 3, "{dry}");
    t.call("gate.request", &request(port, "sams-key-2"))
        .await
        .expect("a dry run revokes nothing");
    let off = g
        .call("vault.offboard", &json!({ "person": "sam" }))
        .await
        .unwrap();
    assert_eq!(off["rotate"][0]["item"], "team-login", "{off}");
    assert!(
        off["revoked"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["revoked_at"].is_i64()),
        "the answer shows them revoked: {off}"
    );
    assert!(
        dry["revoked"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["revoked_at"].is_null())
    );
    let used = off["used"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["item"] == "team-api")
        .unwrap()
        .clone();
    assert_eq!(used["item"], "team-api");
    assert_eq!(used["uses"][0]["count"], 2, "{off}");
    assert!(
        used["uses"][0]["destination"]
            .as_str()
            .unwrap()
            .starts_with(&format!("GET http://127.0.0.1:{port}/whoami")),
        "{off}"
    );
    answers.push(off.to_string());
    for item in ["sams-key-2", "sams-site/password"] {
        let err = t
            .call("gate.request", &request(port, item))
            .await
            .unwrap_err();
        assert_eq!(code_of(&err), "pass_revoked", "{item}: {err}");
    }
    let nobody = g
        .call("vault.offboard", &json!({ "person": "sam" }))
        .await
        .unwrap();
    assert_eq!(nobody["revoked"], json!([]));
    let err = g
        .call("vault.offboard", &json!({ "person": "   " }))
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "invalid_input", "{err}");

    // A session may not give, take or end a pass.
    let socket = giver
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .open("t-pass")
        .unwrap()
        .expect("a short enough path");
    let session = Client::socket(&socket);
    for (tool, input) in [
        (
            "vault.pass.create",
            json!({ "name": "team-api", "to": "me" }),
        ),
        ("vault.pass.list", json!({})),
        ("vault.pass.key", json!({})),
        ("vault.offboard", json!({ "person": "sam" })),
        (
            "gate.relay",
            json!({ "pass": pass_id, "signed": "{}", "sig": "A".repeat(86) }),
        ),
        (
            "vault.pass.bind",
            json!({ "pass": pass_id, "token": token, "key": "A".repeat(43) }),
        ),
    ] {
        let err = session.call(tool, &input).await.unwrap_err();
        assert!(
            matches!(
                code_of(&err).as_str(),
                "person_only" | "not_for_sessions" | "forbidden" | "not_approved"
            ),
            "{tool}: {err}"
        );
    }

    // Nothing in the clear: the values (a sample of the import's, and the shared and shown
    // ones), the token; in either store, event or answer.
    giver.stop().await;
    taker.stop().await;
    let mut needles: Vec<String> = vec![VALUE.into(), PASSWORD.into(), token.clone()];
    needles.extend(imported_values.iter().step_by(37).cloned());
    needles.extend(["imp-pass-0042-Zq8".into(), "imp-pass-0007-Zq8".into()]);
    for answer in &answers {
        for needle in &needles {
            assert!(
                !answer.contains(needle.as_str()),
                "{needle} in an answer: {answer}"
            );
        }
    }
    for home in [&giver_home, &taker_home] {
        let files = files_under(&home.dir);
        for needle in &needles {
            let finder = memchr::memmem::Finder::new(needle.as_bytes());
            let holding: Vec<_> = files
                .iter()
                .filter(|(_, bytes)| finder.find(bytes).is_some())
                .map(|(p, _)| p)
                .collect();
            assert!(holding.is_empty(), "{needle} in {holding:?}");
        }
        for (_, kind, data) in stored_events(&home.home().database()) {
            let text = data.to_string();
            for needle in &needles {
                assert!(!text.contains(needle.as_str()), "{kind}: {text}");
            }
        }
    }
}

/// A relayed pass whose name was taken on the taking Vyre between its check and the giver's
/// bind: the pass is used up at the giver's, and the error says so and what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_could_not_be_kept_after_the_giver_bound_it_says_it_is_used_up() {
    let (port, _got) = service().await;
    let (giver_home, taker_home) = (
        TempHome::new("pass-lost-giver"),
        TempHome::new("pass-lost-taker"),
    );
    let config = json!({ "gate": { "local": [format!("127.0.0.1:{port}")] } });
    let giver = start(&giver_home, config.clone()).await;
    let taker = start(&taker_home, config).await;
    let (g, t) = (giver.socket_client(), taker.socket_client());
    // Between the taker and the giver: on the bind, the name is taken on the taker first.
    let (to, meanwhile) = (giver.http, t.clone());
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, body: axum::body::Bytes| {
        let meanwhile = meanwhile.clone();
        async move {
            if uri.path() == "/v1/pass/bind" {
                meanwhile
                    .call(
                        "vault.put",
                        &json!({ "name": "sams-key", "value": "other" }),
                    )
                    .await
                    .unwrap();
            }
            let (status, answer) = Client::http(to, None)
                .json(
                    axum::http::Method::POST,
                    uri.path(),
                    Some(body.to_vec()),
                    &[("content-type", "application/json")],
                )
                .await
                .unwrap();
            (
                axum::http::StatusCode::from_u16(status).unwrap(),
                axum::Json(answer),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relay = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    g.call("vault.put", &json!({ "name": "api", "value": VALUE }))
        .await
        .unwrap();
    let made = g
        .call(
            "vault.pass.create",
            &json!({ "name": "api", "to": "sam", "url": format!("http://{relay}") }),
        )
        .await
        .unwrap();
    let err = t
        .call(
            "vault.pass.accept",
            &json!({ "code": made["code"], "name": "sams-key" }),
        )
        .await
        .unwrap_err();
    assert_eq!(code_of(&err), "exists", "{err}");
    assert!(
        err.to_string().contains("used up: ask for a new pass"),
        "{err}"
    );
    // It was taken at the giver's, as the error says.
    let listed = g.call("vault.pass.list", &json!({})).await.unwrap();
    assert!(listed[0]["taken_at"].is_i64(), "{listed}");
    giver.stop().await;
    taker.stop().await;
}
