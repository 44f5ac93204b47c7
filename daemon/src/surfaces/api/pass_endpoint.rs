//! `POST /v1/pass`: where another person's Vyre sends a request with a relayed pass this one
//! gave (ADR 0036). No device credential: the pass's token in the body is what lets it, checked
//! by `gate.relay` against the hash the vault kept; an unknown pass, a wrong token and a revoked
//! pass get the same answer. Everything else (where the request may go, the masking of the
//! answer) is the Gate's, as for any of its requests.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use serde_json::{Value, json};

use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::contracts::vault::{PASS_ENDPOINT_CALLER, PASS_RELAY_TOOL};
use crate::kernel::tools::Caller;

/// The largest request a pass may carry (the Gate's own body limit and some room).
pub const MAX_PASS_BODY: usize = 1100 * 1024;

pub async fn relay(State(kernel): State<Kernel>, body: Body) -> Result<Json<Value>, ApiError> {
    let bytes = super::read_body(&kernel, body, MAX_PASS_BODY).await?;
    let input: Value = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
    })?;
    let caller = Caller::Module {
        name: PASS_ENDPOINT_CALLER.into(),
    };
    let data = kernel
        .registry()
        .call(PASS_RELAY_TOOL, input, caller)
        .await?;
    Ok(Json(json!({ "data": data })))
}
