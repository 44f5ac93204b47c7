//! `POST /v1/pass` and `POST /v1/pass/bind`: where another person's Vyre takes a relayed pass
//! this one gave, and then sends requests with it (ADR 0036). No device credential: taking it
//! needs the pass's token (checked by `vault.pass.bind` against the hash the vault kept, once:
//! the pass is then bound to the taker's key), and each request the taker's signature by that
//! key (checked by `gate.relay`); an unknown pass, a wrong token or signature and a revoked pass
//! get the same answer. Everything else (where the request may go, the masking of the answer) is
//! the Gate's, as for any of its requests.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use serde_json::{Value, json};

use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::contracts::vault::{PASS_BIND_TOOL, PASS_ENDPOINT_CALLER, PASS_RELAY_TOOL};
use crate::kernel::tools::Caller;

/// The largest request a pass may carry: the Gate's own body limit, as JSON text escaped twice
/// (in the signed text, and that text in the body), and some room.
pub const MAX_PASS_BODY: usize = 4 * 1024 * 1024;

/// The body a bind carries at most (an id, a token and a key).
const MAX_BIND_BODY: usize = 4 * 1024;

pub async fn relay(State(kernel): State<Kernel>, body: Body) -> Result<Json<Value>, ApiError> {
    call(&kernel, PASS_RELAY_TOOL, body, MAX_PASS_BODY).await
}

pub async fn bind(State(kernel): State<Kernel>, body: Body) -> Result<Json<Value>, ApiError> {
    call(&kernel, PASS_BIND_TOOL, body, MAX_BIND_BODY).await
}

/// `tool` called with the JSON body as the pass endpoint (`module:pass`).
async fn call(
    kernel: &Kernel,
    tool: &str,
    body: Body,
    max: usize,
) -> Result<Json<Value>, ApiError> {
    let bytes = super::read_body(kernel, body, max).await?;
    let input: Value = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
    })?;
    let caller = Caller::Module {
        name: PASS_ENDPOINT_CALLER.into(),
    };
    let data = kernel.registry().call(tool, input, caller).await?;
    Ok(Json(json!({ "data": data })))
}
