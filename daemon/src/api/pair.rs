//! `POST /v1/pair {code, name}`: another Vyre (the Mac) pairs with this one by the code a
//! person read here (`pairing.code`). The code works once, for ten minutes; spending it makes a
//! device of kind `vyre` whose token only the pairing Vyre holds (in its vault), revocable here
//! like any device.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::{self, Peer};
use super::error::ApiError;
use crate::kernel::Kernel;
use crate::links::{LinkError, LinkKind};

/// A paired Vyre's device kind.
pub const PAIRED: &str = "vyre";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairInput {
    code: String,
    /// What the pairing Vyre calls itself, e.g. "Sam's MacBook".
    name: String,
}

pub async fn pair(
    State(kernel): State<Kernel>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    if let Peer::Tcp(_) = peer {
        auth::check_browser_headers(&headers)?;
    }
    let input: PairInput = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request("invalid_input", format!("the body is not valid: {e}"))
    })?;
    let refused = |code: &str, message: &str| ApiError::unauthorized(code, message);
    match kernel.links().redeem_code(&input.code).await {
        Ok(LinkKind::Pair) => {}
        Ok(_) | Err(LinkError::Invalid) => {
            return Err(refused(
                "invalid_code",
                "that pairing code is not valid; `vyre pairing code` on the box prints a new one",
            ));
        }
        Err(LinkError::Used) => {
            return Err(refused(
                "code_used",
                "that pairing code was already used; `vyre pairing code` on the box prints a new one",
            ));
        }
        Err(LinkError::Expired) => {
            return Err(refused(
                "code_expired",
                "that pairing code has expired; `vyre pairing code` on the box prints a new one",
            ));
        }
        Err(LinkError::Store(e)) => return Err(crate::tools::ToolError::from(e).into()),
    }
    let (device, token) = kernel.devices().add(&input.name, PAIRED).await?;
    Ok(Json(json!({ "data": {
        "device": device,
        "token": token,
        "role": kernel.role(),
        "version": crate::kernel::VERSION,
    }})))
}
