//! A fake of the name directory (vyre.run; its API is `docs/directory-api.md`), for tests: it
//! hands out names in a zone of its own and writes their records into a DNS server the test
//! runs, `pebble-challtestsrv`, through that server's management API. What a real directory
//! must check, it checks: a name's token for every change, a name claimed once, a label that is
//! a DNS label, and an A record only in the private network's range (100.64.0.0/10).

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Clone)]
struct Dir {
    zone: String,
    /// challtestsrv's management address.
    dns: SocketAddr,
    tokens: Arc<Mutex<HashMap<String, String>>>,
}

/// The directory, serving on `listener`, for names under `zone` (e.g. `vyre.test`), writing
/// records through the challtestsrv management API at `dns`.
pub async fn serve(listener: tokio::net::TcpListener, zone: &str, dns: SocketAddr) {
    let dir = Dir {
        zone: zone.trim_matches('.').to_string(),
        dns,
        tokens: Arc::default(),
    };
    let app = Router::new()
        .route("/v1/names", post(claim))
        .route("/v1/names/{name}/a", put(set_a))
        .route("/v1/names/{name}/txt", put(set_txt).delete(clear_txt))
        .with_state(dir);
    let _ = axum::serve(listener, app).await;
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({ "error": { "code": code, "message": message } })),
    )
        .into_response()
}

fn is_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

async fn claim(State(dir): State<Dir>, Json(body): Json<Value>) -> Response {
    let name = body["name"].as_str().unwrap_or("");
    if !is_label(name) {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_name",
            "a name is a DNS label: a-z, 0-9 and inner hyphens",
        );
    }
    let token = {
        let mut tokens = dir.tokens.lock().unwrap();
        if tokens.contains_key(name) {
            return error(StatusCode::CONFLICT, "name_taken", "that name is taken");
        }
        let token = format!(
            "dir-{}-{}",
            name,
            std::process::id() ^ tokens.len() as u32 ^ 0x5eed
        );
        tokens.insert(name.to_string(), token.clone());
        token
    };
    (
        StatusCode::CREATED,
        Json(json!({ "data": { "name": name, "fqdn": format!("{name}.{}", dir.zone), "token": token } })),
    )
        .into_response()
}

/// The refusal when the caller is not the name's owner: every change needs the name's token.
fn not_owner(dir: &Dir, name: &str, headers: &HeaderMap) -> Option<Response> {
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let tokens = dir.tokens.lock().unwrap();
    match (tokens.get(name), given) {
        (Some(t), Some(g)) if t == g => None,
        _ => Some(error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "not this name's token",
        )),
    }
}

/// The name's challenge record, as the DNS server names it.
fn challenge_host(dir: &Dir, name: &str) -> String {
    format!("_acme-challenge.{name}.{}.", dir.zone)
}

async fn set_a(
    State(dir): State<Dir>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(refused) = not_owner(&dir, &name, &headers) {
        return refused;
    }
    let Some(address) = body["address"]
        .as_str()
        .and_then(|a| a.parse::<Ipv4Addr>().ok())
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_address",
            "address is an IPv4 address",
        );
    };
    let [a, b, ..] = address.octets();
    if a != 100 || !(64..128).contains(&b) {
        return error(
            StatusCode::BAD_REQUEST,
            "not_private",
            "a name points only at a private network address (100.64.0.0/10)",
        );
    }
    let host = format!("{name}.{}.", dir.zone);
    dns(&dir, "/clear-a", json!({ "host": host })).await;
    dns(
        &dir,
        "/add-a",
        json!({ "host": host, "addresses": [address.to_string()] }),
    )
    .await
}

async fn set_txt(
    State(dir): State<Dir>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(refused) = not_owner(&dir, &name, &headers) {
        return refused;
    }
    let value = body["value"].as_str().unwrap_or("").to_string();
    let host = challenge_host(&dir, &name);
    dns(&dir, "/set-txt", json!({ "host": host, "value": value })).await
}

async fn clear_txt(
    State(dir): State<Dir>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = not_owner(&dir, &name, &headers) {
        return refused;
    }
    let host = challenge_host(&dir, &name);
    dns(&dir, "/clear-txt", json!({ "host": host })).await
}

/// A POST to challtestsrv's management API, answered in the directory's words.
async fn dns(dir: &Dir, path: &str, body: Value) -> Response {
    match dns_post(dir.dns, path, body).await {
        Ok(()) => Json(json!({ "data": { "ok": true } })).into_response(),
        Err(failed) => failed,
    }
}

/// A POST to challtestsrv's management API at `dns` (plain HTTP/1.0, one request per
/// connection); a 502 with why when it did not take it.
pub async fn dns_post(dns: SocketAddr, path: &str, body: Value) -> Result<(), Response> {
    let body = body.to_string();
    let sent = async {
        let mut s = tokio::net::TcpStream::connect(dns).await?;
        let req = format!(
            "POST {path} HTTP/1.0\r\nhost: {dns}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await?;
        let mut answer = String::new();
        s.read_to_string(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    }
    .await;
    match sent {
        Ok(answer) if answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200") => {
            Ok(())
        }
        Ok(answer) => Err(error(
            StatusCode::BAD_GATEWAY,
            "dns_refused",
            answer.lines().next().unwrap_or(""),
        )),
        Err(e) => Err(error(
            StatusCode::BAD_GATEWAY,
            "dns_unreachable",
            &e.to_string(),
        )),
    }
}
