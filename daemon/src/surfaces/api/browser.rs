//! What browsers need beyond the tools: the one-time link that makes a browser a device (a
//! cookie its scripts cannot read, and a key only Vyre's own origin can: ADR 0009), who this
//! browser is, finishing the onboarding, and signing out.
//!
//! - `GET /v1/session`: this browser's device and the owner, or nulls (and why, when it sent a
//!   credential that is refused); no credential needed.
//! - `POST /v1/session/redeem {token}`: spend a sign-in link; sets the device cookie and answers
//!   the key the page keeps in its origin's storage and sends as `X-Vyre-Key`.
//! - `POST /v1/session/finish {device_name?}`: `onboarding.finish` for this browser.
//! - `POST /v1/session/logout`: revoke this browser's device and forget its cookie.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::{self, Authed, DEVICE_COOKIE, Peer};
use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::device_tokens::{BROWSER, ONBOARDING};
use crate::kernel::links::{LinkError, LinkKind};
use crate::kernel::tools::Caller;

/// A browser's device lasts until it is revoked; the cookie is kept for a year at a time.
const COOKIE_MAX_AGE_S: u64 = 365 * 24 * 3600;

fn set_cookie(token: &str, max_age: u64) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{DEVICE_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}"
    ))
    .expect("a token is a valid header value")
}

fn json_body<T: for<'de> Deserialize<'de>>(bytes: &Bytes) -> Result<T, ApiError> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request("invalid_input", format!("the body is not valid: {e}")))
}

fn tcp_only(peer: &Peer) -> Result<(), ApiError> {
    match peer {
        Peer::Tcp(_) => Ok(()),
        Peer::Network { .. } => Err(ApiError::bad_request(
            "network_device",
            "a device on the network is known by its tunnel: it needs no sign-in",
        )),
        Peer::Socket { .. } | Peer::Session { .. } => Err(ApiError::bad_request(
            "browsers_only",
            "this route is for browsers over HTTP",
        )),
    }
}

/// Who this browser is, without refusing one that is nobody yet.
pub async fn session(
    State(kernel): State<Kernel>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    if !peer.is_http() {
        tcp_only(&peer)?;
    }
    auth::check_browser_headers(&peer, &headers)?;
    let (device, problem) = match auth::resolve(&kernel, &peer, &headers) {
        Ok(Caller::Device { id, name, kind }) => {
            (Some(json!({ "id": id, "name": name, "kind": kind })), None)
        }
        Ok(_) => (None, None),
        // Why a credential it sent is refused, so the page can say it (e.g. sign in again).
        Err(e) if auth::presents_credential(&headers) => {
            (None, Some(json!({ "code": e.code, "message": e.message })))
        }
        Err(_) => (None, None),
    };
    let kind = device.as_ref().map(|d| {
        if d["kind"] == ONBOARDING {
            "onboard"
        } else {
            "device"
        }
    });
    let owner = kernel.owner().get().map(|o| json!({ "name": o.name }));
    Ok(Json(json!({ "data": {
        "kind": kind,
        "device": device,
        "owner": owner,
        "onboarded": kernel.owner().exists(),
        "problem": problem,
    }})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RedeemInput {
    token: String,
}

/// Spend a one-time link: this browser becomes a device (in the onboarding while there is no
/// owner) and gets its cookie.
pub async fn redeem(
    State(kernel): State<Kernel>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    tcp_only(&peer)?;
    auth::check_browser_headers(&peer, &headers)?;
    let input: RedeemInput = json_body(&body)?;
    let owner = kernel.owner().clone();
    let link = kernel
        .links()
        .redeem(
            &input.token,
            &[LinkKind::Onboard, LinkKind::Login],
            move || owner.exists(),
        )
        .await
        .map_err(refusal)?;
    let kind = match (link, kernel.owner().exists()) {
        (LinkKind::Onboard, false) => ONBOARDING,
        (LinkKind::Login, true) => BROWSER,
        // A sign-in link before any owner exists (none is made so): it could not be finished
        // from, but it is no onboarding either.
        (LinkKind::Login, false) => {
            return Err(ApiError::unauthorized(
                "not_onboarded",
                "Vyre has no owner yet: open the onboarding link `vyre up` prints",
            ));
        }
        // The owner was made while this link was being spent: the onboarding is over.
        _ => return Err(refusal(LinkError::OnboardingOver)),
    };
    let name = browser_name(&headers);
    let (device, token, key) = kernel.devices().add_browser(&name, kind).await?;
    // Finishing revokes every onboarding device; one made in the instant it ran is revoked here.
    if kind == ONBOARDING && kernel.owner().exists() {
        kernel.devices().revoke(&device.id).await?;
        return Err(refusal(LinkError::OnboardingOver));
    }
    let mut response = Json(json!({ "data": {
        "kind": if kind == ONBOARDING { "onboard" } else { "device" },
        "device": device,
        "key": key,
    }}))
    .into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, set_cookie(&token, COOKIE_MAX_AGE_S));
    Ok(response)
}

/// A link that cannot be spent here, in words that say what to do.
fn refusal(e: LinkError) -> ApiError {
    let code = match e {
        LinkError::Used => "token_used",
        LinkError::Expired => "token_expired",
        LinkError::Invalid => "invalid_token",
        LinkError::OnboardingOver => "onboarding_over",
        LinkError::WrongKind(_) => {
            return ApiError::unauthorized(
                "pairing_code",
                "that is a pairing code, for another Vyre (its Settings, or `vyre pairing add`); a browser signs in with the link `vyre open` prints",
            );
        }
        LinkError::Store(e) => return ApiError::from(crate::kernel::tools::ToolError::from(e)),
    };
    ApiError::unauthorized(code, e.to_string())
}

/// A name a person recognises in the device list: the browser and the system it runs on.
fn browser_name(headers: &HeaderMap) -> String {
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // The Mac app's window signs itself in with its own agent.
    if ua.starts_with("VyreApp/") {
        return "Vyre app".to_string();
    }
    let browser = ["Edg/", "Firefox/", "Chrome/", "Safari/"]
        .iter()
        .find(|b| ua.contains(*b))
        .map(|b| match *b {
            "Edg/" => "Edge",
            "Firefox/" => "Firefox",
            "Chrome/" => "Chrome",
            _ => "Safari",
        })
        .unwrap_or("A browser");
    let system = [
        ("iPhone", "iPhone"),
        ("iPad", "iPad"),
        ("Android", "Android"),
        ("Mac OS X", "macOS"),
        ("Windows", "Windows"),
        ("Linux", "Linux"),
    ]
    .iter()
    .find(|(k, _)| ua.contains(k))
    .map(|(_, v)| *v);
    match system {
        Some(system) => format!("{browser} on {system}"),
        None => browser.to_string(),
    }
}

/// Finish the onboarding for this browser.
pub async fn finish(
    State(kernel): State<Kernel>,
    Authed(caller): Authed,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let input: Value = json_body(&body)?;
    let data = kernel
        .registry()
        .call("onboarding.finish", input, caller)
        .await?;
    Ok(Json(json!({ "data": data })))
}

/// Sign this browser out: its device is revoked and its cookie forgotten.
pub async fn logout(
    State(kernel): State<Kernel>,
    Authed(caller): Authed,
) -> Result<Response, ApiError> {
    let Caller::Device { id, .. } = &caller else {
        return Err(ApiError::bad_request(
            "browsers_only",
            "only a browser's device signs out",
        ));
    };
    kernel.devices().revoke(id).await?;
    let mut response = Json(json!({ "data": { "ok": true } })).into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, set_cookie("", 0));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browsers_name_says_what_and_where() {
        let mut h = HeaderMap::new();
        h.insert(
            header::USER_AGENT,
            HeaderValue::from_static("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36"),
        );
        assert_eq!(browser_name(&h), "Chrome on Linux");
        h.insert(
            header::USER_AGENT,
            HeaderValue::from_static("Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1"),
        );
        assert_eq!(browser_name(&h), "Safari on iPhone");
        assert_eq!(browser_name(&HeaderMap::new()), "A browser");
        h.insert(header::USER_AGENT, HeaderValue::from_static("VyreApp/0.1"));
        assert_eq!(browser_name(&h), "Vyre app");
    }
}
