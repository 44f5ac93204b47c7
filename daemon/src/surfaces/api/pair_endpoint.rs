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
use crate::kernel::links::{LinkError, LinkKind};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairInput {
    code: String,
    /// What the pairing Vyre calls itself, e.g. "Sam's MacBook".
    name: String,
    /// Its Ed25519 public key (base64url): the presence assertions it signs are checked with
    /// it (`kernel::presence`).
    key: String,
}

pub async fn pair(
    State(kernel): State<Kernel>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    if peer.is_http() {
        auth::check_browser_headers(&peer, &headers)?;
    }
    let input: PairInput = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request("invalid_input", format!("the body is not valid: {e}"))
    })?;
    let Some(public_key) = crate::kernel::presence::parse_public(&input.key) else {
        return Err(ApiError::bad_request(
            "invalid_input",
            "key is not an Ed25519 public key (32 bytes, base64url); update Vyre on the pairing machine",
        ));
    };
    let refused = |code: &str, message: &str| ApiError::unauthorized(code, message);
    match kernel
        .links()
        .redeem(&input.code, &[LinkKind::Pair], || false)
        .await
    {
        Ok(_) => {}
        Err(LinkError::Invalid) => {
            return Err(refused(
                "invalid_code",
                "that pairing code is not valid; make a new one on the box (Settings, or `vyre pairing code`)",
            ));
        }
        Err(LinkError::WrongKind(_) | LinkError::OnboardingOver) => {
            return Err(refused(
                "sign_in_link",
                "that is a browser's sign-in link, not a pairing code: open it in a browser; make a pairing code on the box (Settings, or `vyre pairing code`)",
            ));
        }
        Err(LinkError::Used) => {
            return Err(refused(
                "code_used",
                "that pairing code was already used; make a new one on the box (Settings, or `vyre pairing code`)",
            ));
        }
        Err(LinkError::Expired) => {
            return Err(refused(
                "code_expired",
                "that pairing code has expired; make a new one on the box (Settings, or `vyre pairing code`)",
            ));
        }
        Err(LinkError::Store(e)) => return Err(crate::kernel::tools::ToolError::from(e).into()),
    }
    let (device, token) = kernel.devices().add_paired(&input.name, public_key).await?;
    // The box's own screens (its onboarding included) hear that the code was spent.
    let event = crate::kernel::events::NewEvent::new(
        "pairing.paired",
        json!({ "device": device.id, "name": device.name }),
    );
    if let Err(e) = kernel
        .store()
        .write_as("pairing", move |tx| tx.emit(event))
        .await
    {
        tracing::warn!("cannot record pairing.paired: {e}");
    }
    Ok(Json(json!({ "data": {
        "device": device,
        "token": token,
        "role": kernel.role(),
        "name": host_name(),
        "version": crate::kernel::VERSION,
        // Where the pairing Vyre starts following this one's events (`pairing`'s follower).
        "events_from": kernel.bus().latest_id(),
    }})))
}

/// This machine's name, as a paired Vyre lists it.
pub fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "a Vyre".into())
}
