//! The HTTP API, served on both listeners (the unix socket and loopback TCP) by one router.
//!
//! - `GET /v1/health`: version, role, uptime; no credential needed.
//! - `GET /v1/tools[?module=<m>]`: every tool the caller may call (of one module), with its
//!   schemas.
//! - `POST /v1/tools/<module>.<tool>`: call a tool with its JSON input.
//! - `GET /v1/events`: the event log as Server-Sent Events.
//! - `GET /v1/files/<token>`: a download link `files.fetch` made.
//! - `POST /v1/link/calls/<id>`: a paired Vyre's answer to a call sent down its event stream.
//! - `POST /v1/hooks/<watcher>/<secret>`: a webhook watcher's address (no credential but its
//!   secret).

pub mod app;
pub mod auth;
mod box_events;
mod browser;
pub mod error;
mod files_endpoint;
mod hooks_endpoint;
mod link_answer;
pub mod openapi;
pub mod pair_endpoint;
mod pass_endpoint;
pub mod quiet;
pub mod serve;
pub mod session_socket;
mod sse;

use axum::Json;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use auth::Authed;
pub use auth::Peer;
use error::ApiError;

use crate::kernel::Kernel;

/// Largest request body accepted by a tool call.
pub const MAX_BODY: usize = 1024 * 1024;
/// A person's `vault.import`: a password manager's whole export (the import reads at most
/// 16 MiB of it, and says so past that), with room for JSON's escapes.
pub const MAX_IMPORT_BODY: usize = 40 * 1024 * 1024;

pub fn router(kernel: Kernel, ui_dir: Option<&std::path::Path>) -> Router {
    let api = Router::new()
        .route("/v1/health", get(health))
        .route("/v1/session", get(browser::session))
        .route("/v1/session/redeem", post(browser::redeem))
        .route("/v1/session/finish", post(browser::finish))
        .route("/v1/session/logout", post(browser::logout))
        .route("/v1/pair", post(pair_endpoint::pair))
        .route("/v1/pass", post(pass_endpoint::relay))
        .route("/v1/pass/bind", post(pass_endpoint::bind))
        .route("/v1/tools", get(list_tools))
        .route("/v1/openapi.json", get(openapi_doc))
        .route(
            "/v1/tools/{name}",
            post(call_tool).fallback(method_not_allowed),
        )
        .route("/v1/events", get(sse::events))
        .route(
            "/v1/boxes/{box}/threads/{thread}/events",
            get(box_events::thread_events),
        )
        .route("/v1/link/calls/{id}", post(link_answer::answer))
        .route("/v1/files/{token}", get(files_endpoint::download))
        .route("/v1/hooks/{name}/{secret}", post(hooks_endpoint::hook));
    app::routes(api, ui_dir, &kernel)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(kernel)
}

async fn health(State(kernel): State<Kernel>) -> Json<Value> {
    Json(json!({ "data": {
        "version": crate::kernel::VERSION,
        "role": kernel.role(),
        "uptime_s": kernel.uptime_s(),
    }}))
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsQuery {
    /// Only this module's tools (what `vyre <module> <tool>` needs to read its flags).
    module: Option<String>,
}

/// `{"data": ...}` written straight from what it holds: the listing's schemas are kept as text,
/// and going through `json!` would parse every one of them into a tree first (~330 kB of JSON
/// as several MB of heap, on each of the listings every session's `vyre mcp` asks for).
#[derive(serde::Serialize)]
struct Data<T> {
    data: T,
}

/// What this caller may call (the rules decide, as they do for a call).
async fn list_tools(
    State(kernel): State<Kernel>,
    Authed(caller): Authed,
    query: Result<Query<ToolsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Data<Vec<std::sync::Arc<crate::kernel::tools::ToolSpec>>>>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
    let mut specs = kernel.registry().specs_for(&caller);
    if let Some(module) = &query.module {
        specs.retain(|spec| &spec.module == module);
    }
    Ok(Json(Data { data: specs }))
}

/// The API as OpenAPI 3.1, for the tools this caller may call.
async fn openapi_doc(State(kernel): State<Kernel>, Authed(caller): Authed) -> Json<Value> {
    Json(openapi::document(&kernel.registry().specs_for(&caller)))
}

async fn call_tool(
    State(kernel): State<Kernel>,
    Path(name): Path<String>,
    Authed(caller): Authed,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if let Some(ct) = headers.get(header::CONTENT_TYPE) {
        let ct = ct.to_str().unwrap_or("");
        if !ct
            .trim()
            .to_ascii_lowercase()
            .starts_with("application/json")
        {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "tool calls take a JSON body (Content-Type: application/json)",
            ));
        }
    }
    let max = if name == "vault.import" && caller.is_person() {
        MAX_IMPORT_BODY
    } else {
        MAX_BODY
    };
    let bytes = read_body(&kernel, body, max).await?;
    let input: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
        })?
    };
    if !input.is_object() {
        return Err(ApiError::bad_request(
            "invalid_input",
            "a tool's input must be a JSON object",
        ));
    }
    let caller = vouched(&kernel, caller, &headers, &name, &bytes)?;
    let data = kernel.registry().call(&name, input, caller).await?;
    Ok(Json(json!({ "data": data })).into_response())
}

/// A request's body, at most `max` bytes, arriving no slower than a head may (`limits`): a body
/// that stalls holds its connection no longer than that.
pub(crate) async fn read_body(kernel: &Kernel, body: Body, max: usize) -> Result<Bytes, ApiError> {
    let wait = kernel.config().config.limits.header_timeout();
    tokio::time::timeout(wait, collect(body, max))
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!(
                    "the request body did not arrive within {} s (limits.header_timeout_s)",
                    wait.as_secs_f64()
                ),
            )
        })?
}

/// The most of a body over its limit that is read (and dropped) so that the caller, still
/// writing it, gets the `413` rather than a connection closed under it.
const DRAIN_MAX: usize = MAX_IMPORT_BODY;

/// `body` whole when it is at most `max` bytes; past that, the rest is drained (up to
/// [`DRAIN_MAX`]) and the answer is `413 too_large`.
async fn collect(body: Body, max: usize) -> Result<Bytes, ApiError> {
    let mut body = body.into_data_stream();
    let mut kept = bytes::BytesMut::new();
    let mut seen = 0usize;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the request body is larger than {} KiB", max / 1024),
        )
    };
    while let Some(chunk) = futures_util::StreamExt::next(&mut body).await {
        let chunk = chunk.map_err(|e| {
            ApiError::bad_request("body_unreadable", format!("the request body: {e}"))
        })?;
        seen = seen.saturating_add(chunk.len());
        if seen > DRAIN_MAX {
            return Err(too_large());
        }
        if seen <= max {
            kept.extend_from_slice(&chunk);
        }
    }
    if seen > max {
        return Err(too_large());
    }
    Ok(kept.freeze())
}

/// A paired Vyre's call with a presence assertion: the person it vouches for, once the
/// assertion holds for this device, this tool and these very bytes. An assertion from any
/// other caller, or one that does not hold, is refused rather than ignored.
fn vouched(
    kernel: &Kernel,
    caller: crate::kernel::tools::Caller,
    headers: &HeaderMap,
    tool: &str,
    body: &[u8],
) -> Result<crate::kernel::tools::Caller, ApiError> {
    use crate::kernel::tools::Caller;
    let Some(header) = headers.get(crate::kernel::presence::HEADER) else {
        return Ok(caller);
    };
    let Caller::Linked { id, name, .. } = caller else {
        return Err(ApiError::forbidden(
            "presence_not_paired",
            "only a paired Vyre sends presence assertions",
        ));
    };
    let refused = |e: crate::kernel::presence::PresenceError| {
        tracing::warn!(device = %id, why = %e, "a presence assertion was refused");
        ApiError::forbidden(e.code(), e.to_string())
    };
    let device = kernel.devices().active(&id).ok_or_else(|| {
        ApiError::unauthorized("invalid_credential", "the device credential was revoked")
    })?;
    let header = header
        .to_str()
        .map_err(|_| refused(crate::kernel::presence::PresenceError::Malformed))?;
    let claim = kernel
        .accept_presence(header, &device, tool, body)
        .map_err(refused)?;
    Ok(Caller::Linked {
        id,
        name,
        present: Some(claim.by),
    })
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route; the API lives under /v1/",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method",
    )
}
