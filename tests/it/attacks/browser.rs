//! A browser's credential is bound to Vyre's origin: what another loopback port receives is useless.
//!
//! Also what the attacks on browsers share: a browser as the HTTP layer sees it, and checks
//! that nothing changed.

use hyper::Method;
use serde_json::{Value, json};

/// A browser as the HTTP layer sees it: its cookie, and the key Vyre's own page keeps in its
/// origin's storage (sent as `X-Vyre-Key`), both taken from the redeem answer.
pub(super) struct Browser {
    pub client: vyre::client::Client,
    pub cookie: Option<String>,
    pub key: Option<String>,
}

impl Browser {
    pub fn new(addr: std::net::SocketAddr) -> Browser {
        Browser {
            client: vyre::client::Client::http(addr, None),
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
pub(super) async fn newest_event(person: &vyre::client::Client) -> i64 {
    let newest = person
        .call("system.events", &json!({ "limit": 1 }))
        .await
        .unwrap();
    newest[0]["id"].as_i64().unwrap_or(0)
}

/// The types of the events after `id`.
pub(super) async fn events_after(person: &vyre::client::Client, id: i64) -> Vec<String> {
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
pub(super) async fn devices(person: &vyre::client::Client) -> Vec<(String, String, bool)> {
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
