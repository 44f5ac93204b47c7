//! A browser's credential is bound to Vyre's origin: what another loopback port receives is useless.
//!
//! Browsers scope cookies by host, not by port, so a page on `http://127.0.0.1:<another port>/`
//! (a dev server a session started) is sent the `vyre_device` cookie. These tests play that
//! server: it holds the cookie's value and tries it as a cookie and as a Bearer token, against a
//! real vyred, and nothing it tries may call a tool, follow events or change anything. The
//! person's own page, which also holds the key only Vyre's origin can read, keeps working.
//! (`tests/browser/leak.test.mjs` makes the same attack in Chromium.)

use hyper::Method;
use serde_json::{Value, json};

use crate::support::*;

/// A browser as the HTTP layer sees it: its cookie, and the key Vyre's own page keeps in its
/// origin's storage (sent as `X-Vyre-Key`), both taken from the redeem answer.
pub(super) struct Browser {
    pub client: vyre::surfaces::client::Client,
    pub cookie: Option<String>,
    pub key: Option<String>,
}

impl Browser {
    pub fn new(addr: std::net::SocketAddr) -> Browser {
        Browser {
            client: vyre::surfaces::client::Client::http(addr, None),
            cookie: None,
            key: None,
        }
    }

    pub async fn request(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let cookie = self.cookie.clone().map(|c| format!("vyre_device={c}"));
        let mut headers: Vec<(&str, &str)> = vec![];
        if let Some(c) = &cookie {
            headers.push(("cookie", c));
        }
        if let Some(k) = &self.key {
            headers.push(("x-vyre-key", k));
        }
        let res = self
            .client
            .send(
                method,
                path,
                body.map(|b| serde_json::to_vec(&b).unwrap()),
                &headers,
            )
            .await
            .unwrap();
        let status = res.status().as_u16();
        if let Some(set) = res.headers().get("set-cookie") {
            let value = set
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .strip_prefix("vyre_device=")
                .unwrap()
                .to_string();
            self.cookie = (!value.is_empty()).then_some(value);
        }
        use http_body_util::BodyExt;
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let value: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        if let Some(key) = value["data"]["key"].as_str() {
            self.key = Some(key.to_string());
        }
        (status, value)
    }

    pub async fn call(&mut self, tool: &str, input: Value) -> (u16, Value) {
        self.request(Method::POST, &format!("/v1/tools/{tool}"), Some(input))
            .await
    }

    pub async fn redeem(&mut self, token: &str) -> (u16, Value) {
        self.request(
            Method::POST,
            "/v1/session/redeem",
            Some(json!({ "token": token })),
        )
        .await
    }
}

/// The token of a link `devices.link` made.
pub(super) fn token_of(link: &Value) -> String {
    link["url"]
        .as_str()
        .unwrap()
        .split("t=")
        .nth(1)
        .unwrap()
        .to_string()
}

/// The newest event's id, to check later that an attack added none.
pub(super) async fn newest_event(person: &vyre::surfaces::client::Client) -> i64 {
    let newest = person
        .call("system.events", &json!({ "limit": 1 }))
        .await
        .unwrap();
    newest[0]["id"].as_i64().unwrap_or(0)
}

/// The types of the events after `id`.
pub(super) async fn events_after(person: &vyre::surfaces::client::Client, id: i64) -> Vec<String> {
    let events = person
        .call("system.events", &json!({ "limit": 1000 }))
        .await
        .unwrap();
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["id"].as_i64().unwrap() > id)
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

/// The devices, as `(name, kind, revoked)`.
pub(super) async fn devices(
    person: &vyre::surfaces::client::Client,
) -> Vec<(String, String, bool)> {
    let list = person.call("devices.list", &json!({})).await.unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["kind"].as_str().unwrap().to_string(),
                d["revoked_at"].is_i64(),
            )
        })
        .collect()
}

/// A vyred with an owner (made from its socket, as `vyre onboarding finish` does) and a person's
/// browser signed in by a `vyre open` link.
async fn signed_in(home: &TempHome) -> (InProcess, Browser) {
    let vyred = InProcess::start(home, vec![]).await;
    let person = vyred.socket_client();
    person
        .call(
            "onboarding.you",
            &json!({ "name": "Sam", "assistant_name": "Juno" }),
        )
        .await
        .unwrap();
    person.call("onboarding.finish", &json!({})).await.unwrap();
    let link = person.call("devices.link", &json!({})).await.unwrap();
    assert_eq!(link["kind"], "login");
    let mut browser = Browser::new(vyred.http);
    let (status, body) = browser.redeem(&token_of(&link)).await;
    assert_eq!(status, 200, "{body}");
    assert!(browser.cookie.is_some());
    (vyred, browser)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cookie_another_loopback_port_receives_calls_nothing() {
    let home = TempHome::new("attack-cookie-leak");
    let (vyred, mut person_browser) = signed_in(&home).await;
    let person = vyred.socket_client();
    // The person's page works: it has the cookie and its origin's key.
    let (status, body) = person_browser.call("threads.list", json!({})).await;
    assert_eq!(status, 200, "{body}");

    // What a server on another port receives: the cookie header, nothing else.
    let leaked = person_browser.cookie.clone().unwrap();
    let before = newest_event(&person).await;
    let devices_before = devices(&person).await;
    let mut thief = Browser::new(vyred.http);
    thief.cookie = Some(leaked.clone());
    for tool in ["threads.list", "devices.add", "devices.link", "vault.list"] {
        let input = if tool == "devices.add" {
            json!({ "name": "mallory" })
        } else {
            json!({})
        };
        let (status, body) = thief.call(tool, input).await;
        assert_eq!(status, 401, "{tool} with the cookie alone: {body}");
        assert_eq!(body["error"]["code"], "key_missing", "{tool}: {body}");
    }
    let (status, body) = thief
        .request(Method::GET, "/v1/events?follow=false", None)
        .await;
    assert_eq!(
        status, 401,
        "the event stream with the cookie alone: {body}"
    );
    let (status, body) = thief.request(Method::GET, "/v1/tools", None).await;
    assert_eq!(status, 401, "{body}");
    // Nor does /v1/session say who the cookie is.
    let (status, body) = thief.request(Method::GET, "/v1/session", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["kind"], Value::Null, "{body}");
    assert_eq!(body["data"]["device"], Value::Null, "{body}");

    // As a bearer token: refused, whatever it is sent with.
    let bearer = vyre::surfaces::client::Client::http(vyred.http, Some(leaked.clone()));
    for tool in ["threads.list", "devices.add", "system.status"] {
        let input = if tool == "devices.add" {
            json!({ "name": "mallory" })
        } else {
            json!({})
        };
        let err = bearer.call(tool, &input).await.unwrap_err();
        assert_eq!(err.code(), Some("browser_credential"), "{tool}: {err}");
    }
    let (status, body) = bearer
        .json(Method::GET, "/v1/events?follow=false", None, &[])
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("browser_credential"))
    );

    assert!(
        person_browser.key.is_some(),
        "the redeem answer gives Vyre's page its key"
    );
    // A key guessed, or another browser's key, with the cookie: refused.
    thief.key = Some("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".into());
    let (status, body) = thief.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_credential"))
    );
    let link = person.call("devices.link", &json!({})).await.unwrap();
    let mut other = Browser::new(vyred.http);
    assert_eq!(other.redeem(&token_of(&link)).await.0, 200);
    let before_other = newest_event(&person).await;
    thief.key = other.key.clone();
    let (status, body) = thief.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_credential"))
    );

    // Nothing changed: no device, no event, and the person's page still works.
    let after = devices(&person).await;
    assert_eq!(
        after.len(),
        devices_before.len() + 1,
        "only the second browser the person signed in: {after:?}"
    );
    assert!(
        after.iter().all(|(_, kind, _)| kind == "browser"),
        "{after:?}"
    );
    assert_eq!(
        events_after(&person, before_other).await,
        Vec::<String>::new()
    );
    assert!(
        !events_after(&person, before)
            .await
            .iter()
            .any(|t| t != "device.added"),
        "the thief caused no event"
    );
    let (status, _) = person_browser.call("threads.list", json!({})).await;
    assert_eq!(status, 200);
    let (_, session) = person_browser
        .request(Method::GET, "/v1/session", None)
        .await;
    assert_eq!(session["data"]["kind"], "device");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_token_is_a_bearer_token_and_not_a_cookie() {
    let home = TempHome::new("attack-program-token");
    let vyred = InProcess::start(&home, vec![]).await;
    let (_, token) = vyred.device_token("script").await;
    // Programs keep working as they are.
    let program = vyred.http_client(Some(&token));
    program.call("threads.list", &json!({})).await.unwrap();
    // A program's token in the cookie is no browser: it has no key.
    let mut as_cookie = Browser::new(vyred.http);
    as_cookie.cookie = Some(token.clone());
    let (status, body) = as_cookie.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("key_missing"))
    );
    as_cookie.key = Some("made-up".into());
    let (status, body) = as_cookie.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_credential"))
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_signed_in_before_keys_must_sign_in_again() {
    let home = TempHome::new("attack-old-browser");
    let (vyred, browser) = signed_in(&home).await;
    let person = vyred.socket_client();
    let id = person.call("devices.list", &json!({})).await.unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let cookie = browser.cookie.clone().unwrap();
    vyred.stop().await;
    // As an older vyred left it: a browser's device with no key.
    let conn = rusqlite::Connection::open(home.home().database()).unwrap();
    conn.execute("UPDATE devices SET key_hash = NULL WHERE id = ?1", [&id])
        .unwrap();
    drop(conn);

    let vyred = InProcess::start(&home, vec![]).await;
    let mut old = Browser::new(vyred.http);
    old.cookie = Some(cookie.clone());
    let (status, body) = old.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("key_missing")),
        "{body}"
    );
    old.key = browser.key.clone();
    let (status, body) = old.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_credential")),
        "{body}"
    );
    let (_, session) = old.request(Method::GET, "/v1/session", None).await;
    assert_eq!(session["data"]["kind"], Value::Null);
    assert_eq!(session["data"]["problem"]["code"], "invalid_credential");
    let bearer = vyre::surfaces::client::Client::http(vyred.http, Some(cookie));
    let err = bearer.call("threads.list", &json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some("browser_credential"));
    // A fresh link signs it in again, with a key.
    let link = vyred
        .socket_client()
        .call("devices.link", &json!({}))
        .await
        .unwrap();
    let mut again = Browser::new(vyred.http);
    assert_eq!(again.redeem(&token_of(&link)).await.0, 200);
    assert_eq!(again.call("threads.list", json!({})).await.0, 200);
    vyred.stop().await;
}
