//! A fake of Cloudflare's DNS API (v4, the part vyred speaks: zones by name, and a zone's DNS
//! records listed, created, replaced and deleted), for tests. Its zones' records are written
//! into a DNS server the test runs, `pebble-challtestsrv`, through that server's management API,
//! so an ACME server that checks a DNS-01 challenge there sees what vyred wrote. Like the real
//! API it answers `{success, errors, result}` and refuses any call without the one token.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use serde_json::{Value, json};

/// A record as the fake holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub id: String,
    pub zone: String,
    pub kind: String,
    pub name: String,
    pub content: String,
    pub proxied: bool,
}

#[derive(Clone)]
pub struct FakeCloudflare {
    token: String,
    /// Zone id → zone name.
    zones: BTreeMap<String, String>,
    dns: SocketAddr,
    records: Arc<Mutex<Vec<Record>>>,
    calls: Arc<Mutex<usize>>,
}

impl FakeCloudflare {
    /// Zones named `zones` (e.g. `example.test`), reachable with `token`, writing records into
    /// challtestsrv's management API at `dns`.
    pub fn new(token: &str, zones: &[&str], dns: SocketAddr) -> FakeCloudflare {
        FakeCloudflare {
            token: token.to_string(),
            zones: zones
                .iter()
                .enumerate()
                .map(|(i, z)| {
                    (
                        format!("zone{i:02}{:x}", 0x5eed_u32 + i as u32),
                        z.to_string(),
                    )
                })
                .collect(),
            dns,
            records: Arc::default(),
            calls: Arc::default(),
        }
    }

    /// The records the fake holds now.
    pub fn records(&self) -> Vec<Record> {
        self.records.lock().unwrap().clone()
    }

    /// How many calls were answered (authorized or not).
    pub fn calls(&self) -> usize {
        *self.calls.lock().unwrap()
    }

    /// Serve the API at `/client/v4` on `listener`.
    pub async fn serve(self, listener: tokio::net::TcpListener) {
        let app = Router::new()
            .route("/client/v4/zones", get(zones))
            .route(
                "/client/v4/zones/{zone}/dns_records",
                get(list).post(create),
            )
            .route(
                "/client/v4/zones/{zone}/dns_records/{id}",
                put(replace).delete(delete),
            )
            .with_state(self);
        let _ = axum::serve(listener, app).await;
    }

    /// The refusal for a call without the token, as Cloudflare words it.
    fn unauthorized(&self, headers: &HeaderMap) -> Option<Response> {
        *self.calls.lock().unwrap() += 1;
        let given = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        (given != Some(self.token.as_str()))
            .then(|| refuse(StatusCode::FORBIDDEN, 10000, "Authentication error"))
    }

    /// The zone's name, or the refusal for an unknown one.
    fn zone(&self, id: &str) -> Result<String, Refusal> {
        self.zones.get(id).cloned().ok_or((
            StatusCode::NOT_FOUND,
            7003,
            "Could not route to /zones",
        ))
    }

    /// Write the records of `name` into the DNS server as they are now.
    async fn publish(&self, name: &str) -> Result<(), Response> {
        let (a, txt): (Vec<_>, Vec<_>) = {
            let records = self.records.lock().unwrap();
            let of = |kind: &str| {
                records
                    .iter()
                    .filter(|r| r.name == name && r.kind == kind)
                    .map(|r| r.content.clone())
                    .collect::<Vec<_>>()
            };
            (of("A"), of("TXT"))
        };
        let host = format!("{name}.");
        crate::directory::dns_post(self.dns, "/clear-a", json!({ "host": host })).await?;
        if !a.is_empty() {
            crate::directory::dns_post(self.dns, "/add-a", json!({ "host": host, "addresses": a }))
                .await?;
        }
        crate::directory::dns_post(self.dns, "/clear-txt", json!({ "host": host })).await?;
        // challtestsrv holds one TXT value per name: the newest.
        if let Some(value) = txt.last() {
            crate::directory::dns_post(
                self.dns,
                "/set-txt",
                json!({ "host": host, "value": value }),
            )
            .await?;
        }
        Ok(())
    }
}

/// A refusal as Cloudflare says it: status, error code, message.
type Refusal = (StatusCode, u32, &'static str);

fn refused((status, code, message): Refusal) -> Response {
    refuse(status, code, message)
}

fn refuse(status: StatusCode, code: u32, message: &str) -> Response {
    (
        status,
        Json(json!({ "success": false, "errors": [{ "code": code, "message": message }], "messages": [], "result": null })),
    )
        .into_response()
}

fn ok(result: Value) -> Response {
    Json(json!({ "success": true, "errors": [], "messages": [], "result": result })).into_response()
}

fn shown(r: &Record) -> Value {
    json!({ "id": r.id, "zone_id": r.zone, "type": r.kind, "name": r.name, "content": r.content, "proxied": r.proxied, "ttl": 60 })
}

async fn zones(
    State(cf): State<FakeCloudflare>,
    headers: HeaderMap,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    if let Some(refused) = cf.unauthorized(&headers) {
        return refused;
    }
    let found: Vec<Value> = cf
        .zones
        .iter()
        .filter(|(_, name)| q.get("name").is_none_or(|n| n == *name))
        .map(|(id, name)| json!({ "id": id, "name": name, "status": "active" }))
        .collect();
    ok(Value::Array(found))
}

async fn list(
    State(cf): State<FakeCloudflare>,
    Path(zone): Path<String>,
    headers: HeaderMap,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    if let Some(refused) = cf.unauthorized(&headers) {
        return refused;
    }
    if let Err(refusal) = cf.zone(&zone) {
        return refused(refusal);
    }
    let records = cf.records.lock().unwrap();
    let found: Vec<Value> = records
        .iter()
        .filter(|r| r.zone == zone)
        .filter(|r| q.get("type").is_none_or(|t| *t == r.kind))
        .filter(|r| q.get("name").is_none_or(|n| *n == r.name))
        .map(shown)
        .collect();
    ok(Value::Array(found))
}

/// A record from a request's body, checked as Cloudflare checks it: a known type, a name in
/// the zone, an A record's content an IPv4 address.
fn record_of(zone_id: &str, zone: &str, id: String, body: &Value) -> Result<Record, Refusal> {
    let kind = body["type"].as_str().unwrap_or_default().to_string();
    let name = body["name"].as_str().unwrap_or_default().to_string();
    let content = body["content"].as_str().unwrap_or_default().to_string();
    if !["A", "TXT"].contains(&kind.as_str()) {
        return Err((StatusCode::BAD_REQUEST, 9000, "DNS record type is invalid"));
    }
    if name != zone && !name.ends_with(&format!(".{zone}")) {
        return Err((
            StatusCode::BAD_REQUEST,
            9005,
            "Record name is not in the zone",
        ));
    }
    if kind == "A" && content.parse::<std::net::Ipv4Addr>().is_err() {
        return Err((
            StatusCode::BAD_REQUEST,
            9005,
            "Content for A record must be a valid IPv4 address",
        ));
    }
    Ok(Record {
        id,
        zone: zone_id.to_string(),
        kind,
        name,
        content,
        proxied: body["proxied"].as_bool().unwrap_or(false),
    })
}

async fn create(
    State(cf): State<FakeCloudflare>,
    Path(zone): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(refused) = cf.unauthorized(&headers) {
        return refused;
    }
    let zone_name = match cf.zone(&zone) {
        Ok(z) => z,
        Err(refusal) => return refused(refusal),
    };
    let id = format!("rec{:04}", cf.calls());
    let record = match record_of(&zone, &zone_name, id, &body) {
        Ok(r) => r,
        Err(refusal) => return refused(refusal),
    };
    cf.records.lock().unwrap().push(record.clone());
    if let Err(failed) = cf.publish(&record.name).await {
        return failed;
    }
    ok(shown(&record))
}

async fn replace(
    State(cf): State<FakeCloudflare>,
    Path((zone, id)): Path<(String, String)>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(refused) = cf.unauthorized(&headers) {
        return refused;
    }
    let zone_name = match cf.zone(&zone) {
        Ok(z) => z,
        Err(refusal) => return refused(refusal),
    };
    let record = match record_of(&zone, &zone_name, id.clone(), &body) {
        Ok(r) => r,
        Err(refusal) => return refused(refusal),
    };
    let old = {
        let mut records = cf.records.lock().unwrap();
        let Some(at) = records.iter().position(|r| r.id == id && r.zone == zone) else {
            return refuse(StatusCode::NOT_FOUND, 81044, "Record does not exist.");
        };
        std::mem::replace(&mut records[at], record.clone())
    };
    for name in [old.name, record.name.clone()] {
        if let Err(failed) = cf.publish(&name).await {
            return failed;
        }
    }
    ok(shown(&record))
}

async fn delete(
    State(cf): State<FakeCloudflare>,
    Path((zone, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = cf.unauthorized(&headers) {
        return refused;
    }
    let gone = {
        let mut records = cf.records.lock().unwrap();
        let Some(at) = records.iter().position(|r| r.id == id && r.zone == zone) else {
            return refuse(StatusCode::NOT_FOUND, 81044, "Record does not exist.");
        };
        records.remove(at)
    };
    if let Err(failed) = cf.publish(&gone.name).await {
        return failed;
    }
    ok(json!({ "id": id }))
}
