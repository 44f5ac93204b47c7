//! The HTTP layer alone, in milliseconds: vyred's router on a kernel with no listener and no
//! module, each request handed to it with `tower::ServiceExt::oneshot` as a loopback client's
//! would arrive. What needs sockets, sessions or modules is in `api.rs` and `web.rs`.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use vyre::kernel::Kernel;
use vyre::surfaces::api::Peer;

use crate::support::TempHome;

/// A kernel on a fresh home: its store and devices, nothing started.
async fn kernel(home: &TempHome) -> Kernel {
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = vyre::kernel::config::LoadedConfig {
        config: Default::default(),
        file: None,
        warnings: vec![],
    };
    Kernel::open(
        vyre::kernel::paths::VyreHome::at(home.vyre_home()),
        config,
        vyre::kernel::config::Role::Box,
    )
    .await
    .unwrap()
}

/// One request from a loopback client; the status and the JSON body (Null when not JSON).
async fn send(
    k: &Kernel,
    method: Method,
    path: &str,
    body: Vec<u8>,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "127.0.0.1:4477");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let mut req = req.body(Body::from(body)).unwrap();
    let client: SocketAddr = "127.0.0.1:50000".parse().unwrap();
    req.extensions_mut().insert(ConnectInfo(Peer::Tcp(client)));
    let res = vyre::surfaces::api::router(k.clone(), None)
        .oneshot(req)
        .await
        .unwrap();
    let status = res.status().as_u16();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn health_answers_anyone_and_the_tools_only_a_device() {
    let home = TempHome::new("router-auth");
    let k = kernel(&home).await;
    let (status, body) = send(&k, Method::GET, "/v1/health", vec![], &[]).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["version"], vyre::kernel::VERSION);

    let (status, body) = send(&k, Method::GET, "/v1/tools", vec![], &[]).await;
    assert_eq!(status, 401, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().len() > 10);

    let (device, token) = k.devices().add("laptop", "cli").await.unwrap();
    let bearer = format!("Bearer {token}");
    let auth = [("authorization", bearer.as_str())];
    let (status, body) = send(&k, Method::GET, "/v1/tools", vec![], &auth).await;
    assert_eq!((status, body["data"].clone()), (200, Value::Array(vec![])));
    let (status, body) = send(
        &k,
        Method::POST,
        "/v1/tools/probe.nothing",
        b"{}".to_vec(),
        &auth,
    )
    .await;
    assert_eq!((status, code(&body)), (404, "unknown_tool"));

    // Revoked: refused at once, with a reason.
    k.devices().revoke(&device.id).await.unwrap();
    let (status, body) = send(&k, Method::GET, "/v1/tools", vec![], &auth).await;
    assert_eq!((status, code(&body)), (401, "invalid_credential"), "{body}");
    let (status, _) = send(
        &k,
        Method::GET,
        "/v1/tools",
        vec![],
        &[("authorization", "Bearer made-up")],
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_page_of_another_site_or_name_is_refused_before_any_credential_is_read() {
    let home = TempHome::new("router-origin");
    let k = kernel(&home).await;
    let (_, token) = k.devices().add("laptop", "cli").await.unwrap();
    let bearer = format!("Bearer {token}");
    // A page elsewhere posting to vyred with a stolen token: its Origin gives it away.
    let (status, body) = send(
        &k,
        Method::GET,
        "/v1/tools",
        vec![],
        &[
            ("authorization", bearer.as_str()),
            ("origin", "http://evil.example"),
        ],
    )
    .await;
    assert_eq!((status, code(&body)), (403, "cross_origin"), "{body}");
    // DNS rebinding: a name that resolves to 127.0.0.1 is not vyred's name.
    let mut req = Request::builder()
        .uri("/v1/tools")
        .header("host", "evil.example:4477")
        .header("authorization", bearer.as_str())
        .body(Body::empty())
        .unwrap();
    req.extensions_mut()
        .insert(ConnectInfo(Peer::Tcp("127.0.0.1:50001".parse().unwrap())));
    let res = vyre::surfaces::api::router(k.clone(), None)
        .oneshot(req)
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
}

#[tokio::test]
async fn wrong_paths_methods_and_bodies_get_json_errors() {
    let home = TempHome::new("router-shape");
    let k = kernel(&home).await;
    let (_, token) = k.devices().add("laptop", "cli").await.unwrap();
    let bearer = format!("Bearer {token}");
    let auth = [("authorization", bearer.as_str())];

    let (status, body) = send(&k, Method::GET, "/v1/nothing-here", vec![], &auth).await;
    assert_eq!(status, 404, "{body}");
    assert!(!code(&body).is_empty(), "a JSON error: {body}");

    let (status, body) = send(&k, Method::GET, "/v1/tools/system.status", vec![], &auth).await;
    assert_eq!(status, 405, "{body}");
    assert!(!code(&body).is_empty(), "a JSON error: {body}");

    let huge = format!(
        "{{\"text\": \"{}\"}}",
        "x".repeat(vyre::surfaces::api::MAX_BODY + 1)
    );
    let (status, body) = send(
        &k,
        Method::POST,
        "/v1/tools/probe.echo",
        huge.into_bytes(),
        &auth,
    )
    .await;
    assert_eq!((status, code(&body)), (413, "too_large"), "{body}");

    // Without the web app built, its pages say so in JSON rather than a blank page.
    let (status, body) = send(&k, Method::GET, "/app/", vec![], &[]).await;
    assert_eq!((status, code(&body)), (503, "app_not_built"), "{body}");
}

/// The tools' published schemas are the check their input gets (daemon/src/kernel/tools/input/): an
/// input too long, of the wrong pattern, out of range or missing what its kind needs is refused
/// with `400 invalid_input` naming the field and the rule, before the tool runs; and the same
/// rule is in the schema that `GET /v1/openapi.json` and `/v1/tools` publish.
#[tokio::test]
async fn input_that_breaks_a_tools_published_schema_is_refused_naming_the_field_and_rule() {
    let home = TempHome::new("router-schema");
    let k = kernel(&home).await;
    let light = ["system", "devices", "vault"];
    let modules = vyre::modules::modules(&k)
        .into_iter()
        .filter(|m| light.contains(&m.name()))
        .collect();
    vyre::kernel::module::load_all(&k, modules).await;
    let (_, token) = k.devices().add("laptop", "cli").await.unwrap();
    let bearer = format!("Bearer {token}");
    let auth = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
    ];
    let (status, doc) = send(&k, Method::GET, "/v1/openapi.json", vec![], &auth).await;
    assert_eq!(status, 200, "{doc}");
    let schema_of = |tool: &str| {
        let schema = &doc["paths"][format!("/v1/tools/{tool}")]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert!(schema.is_object(), "{tool} is published");
        schema.clone()
    };
    let cases = [
        // (tool, input, what the refusal says, where the schema says it, what it says)
        (
            "devices.add",
            serde_json::json!({ "name": "x".repeat(65) }),
            "name: at most 64 characters",
            "/properties/name/maxLength",
            serde_json::json!(64),
        ),
        (
            "devices.add",
            serde_json::json!({ "name": "   " }),
            "name: must be printable text that is not only white space",
            "/properties/name/pattern",
            serde_json::json!(vyre::kernel::tools::shape::LABEL),
        ),
        (
            "system.events",
            serde_json::json!({ "limit": 1001 }),
            "limit: at most 1000",
            "/properties/limit/maximum",
            serde_json::json!(1000),
        ),
        (
            "vault.put",
            serde_json::json!({ "name": "a/b", "value": "hunter2-fake" }),
            "name: must not contain / or \\",
            "/properties/name/pattern",
            serde_json::json!(vyre::kernel::tools::shape::ITEM),
        ),
        (
            "vault.put",
            serde_json::json!({ "name": "..", "value": "hunter2-fake" }),
            "name: must not be . or ..",
            "/properties/name/not/enum",
            serde_json::json!([".", ".."]),
        ),
        (
            "vault.put",
            serde_json::json!({ "name": "site", "kind": "login", "username": "me" }),
            "password: is required",
            "/anyOf/1/required",
            serde_json::json!(["kind", "password"]),
        ),
    ];
    for (tool, input, says, at, rule) in cases {
        let (status, body) = send(
            &k,
            Method::POST,
            &format!("/v1/tools/{tool}"),
            input.to_string().into_bytes(),
            &auth,
        )
        .await;
        assert_eq!(
            (status, code(&body)),
            (400, "invalid_input"),
            "{tool} {input}: {body}"
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(says), "{tool} {input}: {message}");
        assert!(!message.contains("hunter2"), "{message} echoes a value");
        let schema = schema_of(tool);
        assert_eq!(
            schema.pointer(at),
            Some(&rule),
            "{tool}'s schema at {at}: {schema}"
        );
    }
    // Nothing was made by the refused calls.
    let (_, listed) = send(
        &k,
        Method::POST,
        "/v1/tools/vault.list",
        b"{}".to_vec(),
        &auth,
    )
    .await;
    assert_eq!(listed["data"], serde_json::json!([]), "{listed}");
    let (_, devices) = send(
        &k,
        Method::POST,
        "/v1/tools/devices.list",
        b"{}".to_vec(),
        &auth,
    )
    .await;
    assert_eq!(
        devices["data"].as_array().map(Vec::len),
        Some(1),
        "{devices}"
    );
}
