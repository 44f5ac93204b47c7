//! A fake Web Push service (RFC 8030), for tests: it plays the browser vendor's push service and
//! the browser's key holder at once. A test makes a subscription here (`POST
//! /push/subscriptions` → `{id, endpoint, keys: {p256dh, auth}}`, what a browser's
//! `PushSubscription.toJSON()` gives), hands it to vyred, and reads back what vyred sent (`GET
//! /push/messages/{id}`), opened with the subscription's private key. What a real service checks,
//! it checks: the VAPID token's signature by the key it names, its audience (this service's
//! origin), its expiry (at most 24 hours ahead) and subject, the key the subscription was made
//! for (when the test said), the aes128gcm encoding and a TTL. `DELETE
//! /push/subscriptions/{id}` makes the subscription gone (410 from then on), as when a person
//! turns notifications off in the browser.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
use serde_json::{Value, json};
use web_push_native::p256::SecretKey;
use web_push_native::p256::elliptic_curve::sec1::ToEncodedPoint;

/// What vyred sent to one subscription, opened.
#[derive(Debug, Clone)]
pub struct Received {
    /// The decrypted message (JSON when it parses, else a string).
    pub payload: Value,
    pub topic: Option<String>,
    pub urgency: Option<String>,
    pub ttl: Option<u64>,
    /// The VAPID token's claims and key.
    pub vapid: Value,
}

struct Sub {
    secret: SecretKey,
    auth: [u8; 16],
    /// The application server key it was made for, when the test said.
    server_key: Option<String>,
    gone: bool,
    received: Vec<Received>,
}

/// The push service's state, shared with the test.
#[derive(Clone, Default)]
pub struct PushService {
    subs: Arc<Mutex<HashMap<String, Sub>>>,
    /// Answers to give instead of delivering (a status per send), for faults.
    faults: Arc<Mutex<Vec<u16>>>,
}

/// A subscription as a browser would hand it to an app.
#[derive(Debug, Clone)]
pub struct Subscription {
    pub id: String,
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
}

impl PushService {
    /// A new subscription whose messages go to `base` (this service's URL).
    pub fn subscribe(&self, base: &str, server_key: Option<String>) -> Subscription {
        let mut bytes = [0u8; 32];
        let secret = loop {
            getrandom::fill(&mut bytes).expect("random");
            if let Ok(s) = SecretKey::from_slice(&bytes) {
                break s;
            }
        };
        let mut auth = [0u8; 16];
        getrandom::fill(&mut auth).expect("random");
        let mut idb = [0u8; 9];
        getrandom::fill(&mut idb).expect("random");
        let id = B64.encode(idb);
        let p256dh = B64.encode(secret.public_key().to_encoded_point(false).as_bytes());
        self.subs.lock().unwrap().insert(
            id.clone(),
            Sub {
                secret,
                auth,
                server_key,
                gone: false,
                received: Vec::new(),
            },
        );
        Subscription {
            endpoint: format!("{base}/push/send/{id}"),
            id,
            p256dh,
            auth: B64.encode(auth),
        }
    }

    pub fn received(&self, id: &str) -> Vec<Received> {
        self.subs
            .lock()
            .unwrap()
            .get(id)
            .map(|s| s.received.clone())
            .unwrap_or_default()
    }

    pub fn make_gone(&self, id: &str) {
        if let Some(s) = self.subs.lock().unwrap().get_mut(id) {
            s.gone = true;
        }
    }

    /// The next sends are answered with these statuses, in order, instead of being delivered.
    pub fn fail_next(&self, statuses: &[u16]) {
        self.faults.lock().unwrap().extend_from_slice(statuses);
    }
}

pub fn router(service: PushService) -> Router {
    Router::new()
        .route("/push/subscriptions", post(new_subscription))
        .route("/push/subscriptions/{id}", delete(gone))
        .route("/push/send/{id}", post(send))
        .route("/push/messages/{id}", get(messages))
        .with_state(service)
}

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, why.to_string()).into_response()
}

async fn new_subscription(
    State(s): State<PushService>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let base = format!("http://{}", host(&headers));
    let server_key = body["applicationServerKey"].as_str().map(str::to_string);
    let sub = s.subscribe(&base, server_key);
    Json(json!({ "id": sub.id, "endpoint": sub.endpoint, "keys": { "p256dh": sub.p256dh, "auth": sub.auth } }))
        .into_response()
}

async fn gone(State(s): State<PushService>, Path(id): Path<String>) -> StatusCode {
    s.make_gone(&id);
    StatusCode::NO_CONTENT
}

async fn messages(State(s): State<PushService>, Path(id): Path<String>) -> Json<Value> {
    let list: Vec<Value> = s
        .received(&id)
        .into_iter()
        .map(|r| json!({ "payload": r.payload, "topic": r.topic, "urgency": r.urgency, "ttl": r.ttl, "vapid": r.vapid }))
        .collect();
    Json(json!(list))
}

fn host(headers: &HeaderMap) -> String {
    headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_string()
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The VAPID token's claims and key, checked as a push service does.
fn check_vapid(headers: &HeaderMap, audience: &str) -> Result<Value, String> {
    let auth = header(headers, "authorization").ok_or("no Authorization")?;
    let rest = auth
        .strip_prefix("vapid ")
        .ok_or("not a vapid Authorization")?;
    let mut token = None;
    let mut key = None;
    for part in rest.split(',') {
        let part = part.trim();
        if let Some(t) = part.strip_prefix("t=") {
            token = Some(t);
        } else if let Some(k) = part.strip_prefix("k=") {
            key = Some(k);
        }
    }
    let (token, key) = (token.ok_or("no t=")?, key.ok_or("no k=")?);
    let public = B64.decode(key).map_err(|_| "k is not base64url")?;
    let (signed, signature) = token.rsplit_once('.').ok_or("t is not a JWT")?;
    let signature = B64
        .decode(signature)
        .map_err(|_| "bad signature encoding")?;
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
        .verify(signed.as_bytes(), &signature)
        .map_err(|_| "the token's signature is not by k")?;
    let mut parts = signed.split('.');
    let head: Value = serde_json::from_slice(
        &B64.decode(parts.next().unwrap_or_default())
            .map_err(|_| "bad header")?,
    )
    .map_err(|_| "bad header")?;
    if head["alg"] != "ES256" {
        return Err("alg is not ES256".into());
    }
    let claims: Value = serde_json::from_slice(
        &B64.decode(parts.next().unwrap_or_default())
            .map_err(|_| "bad claims")?,
    )
    .map_err(|_| "bad claims")?;
    if claims["aud"] != audience {
        return Err(format!("aud is {}, not {audience}", claims["aud"]));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let exp = claims["exp"].as_i64().ok_or("no exp")?;
    if exp <= now || exp > now + 24 * 3600 {
        return Err("exp is not within the next 24 hours".into());
    }
    let sub = claims["sub"].as_str().unwrap_or_default();
    if !(sub.starts_with("mailto:") || sub.starts_with("https://")) {
        return Err("sub is not a mailto: or https: address".into());
    }
    Ok(json!({ "aud": claims["aud"], "sub": sub, "exp": exp, "k": key }))
}

async fn send(
    State(s): State<PushService>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let audience = format!("http://{}", host(&headers));
    let vapid = match check_vapid(&headers, &audience) {
        Ok(v) => v,
        Err(why) => return refuse(StatusCode::UNAUTHORIZED, &why),
    };
    if header(&headers, "content-encoding").as_deref() != Some("aes128gcm") {
        return refuse(StatusCode::BAD_REQUEST, "Content-Encoding is not aes128gcm");
    }
    let Some(ttl) = header(&headers, "ttl").and_then(|t| t.parse::<u64>().ok()) else {
        return refuse(StatusCode::BAD_REQUEST, "no TTL");
    };
    if body.len() > 4096 {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "more than 4096 bytes");
    }
    let fault = {
        let mut faults = s.faults.lock().unwrap();
        (!faults.is_empty()).then(|| faults.remove(0))
    };
    let mut subs = s.subs.lock().unwrap();
    let Some(sub) = subs.get_mut(&id) else {
        return refuse(StatusCode::NOT_FOUND, "no such subscription");
    };
    if sub.gone {
        return refuse(
            StatusCode::GONE,
            "the subscription has expired or was removed",
        );
    }
    if let Some(status) = fault {
        return refuse(
            StatusCode::from_u16(status).unwrap(),
            "a fault the test asked for",
        );
    }
    if let Some(expected) = &sub.server_key
        && vapid["k"] != expected.as_str()
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "k is not the key the subscription was made for",
        );
    }
    let auth = web_push_native::Auth::clone_from_slice(&sub.auth);
    let opened = match web_push_native::decrypt(body.to_vec(), &sub.secret, &auth) {
        Ok(o) => o,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                &format!("cannot open the message: {e}"),
            );
        }
    };
    let payload = serde_json::from_slice(&opened)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&opened).into_owned()));
    let topic = header(&headers, "topic");
    // A message with the Topic of one not yet delivered replaces it (RFC 8030 §5.4); here every
    // message is delivered at once, so each is kept, in order.
    sub.received.push(Received {
        payload,
        topic,
        urgency: header(&headers, "urgency"),
        ttl: Some(ttl),
        vapid,
    });
    StatusCode::CREATED.into_response()
}
