//! A relayed pass's code (ADR 0036): what it holds (the giver's address, the pass's id, its
//! token), where it may be sent, and taking it at the giver's, which binds the pass to a key
//! this Vyre makes for it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::tools::ToolError;

/// A relayed pass as the person gives it: `vyre-pass-1.` and base64url JSON.
pub const RELAYED_PREFIX: &str = "vyre-pass-1.";

/// What a relayed pass's code holds: where to send, which pass, its token.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Relayed {
    pub v: u8,
    pub url: String,
    pub pass: String,
    pub token: String,
    /// The item's name on the giver's side (shown, not used).
    pub item: String,
}

/// Where a relayed pass may send its token: https, or plain http to an address on this machine
/// or a private network (the private network's tunnel is encrypted), never plain http over the
/// internet.
pub fn check_url(url: &str) -> Result<String, String> {
    let uri: hyper::Uri = url
        .trim()
        .trim_end_matches('/')
        .parse()
        .map_err(|_| format!("{url:?} is not a URL"))?;
    let host = uri.host().ok_or_else(|| format!("{url:?} has no host"))?;
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") => {
            let ip = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .map_err(|_| {
                    format!("{url:?}: a pass's token crosses the network; use https, or an address on this machine or the private network")
                })?;
            if !crate::kernel::outbound::private_ip(ip) {
                return Err(format!(
                    "{url:?} is plain http on the internet: a pass's token would cross it in the clear; use https"
                ));
            }
        }
        _ => return Err(format!("{url:?}: a pass's address is http or https")),
    }
    if uri.path() != "/" && !uri.path().is_empty() || uri.query().is_some() {
        return Err(format!(
            "{url:?}: give the Vyre's address alone (scheme, host, port)"
        ));
    }
    Ok(format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map(|a| a.as_str()).unwrap_or(host)
    ))
}

pub(super) fn relayed_code(r: &Relayed) -> String {
    format!(
        "{RELAYED_PREFIX}{}",
        B64.encode(serde_json::to_vec(r).expect("serializes"))
    )
}

pub(super) fn read_relayed(code: &str) -> Result<Relayed, ToolError> {
    let body = code.trim().strip_prefix(RELAYED_PREFIX).unwrap_or_default();
    let r: Relayed = B64
        .decode(body.trim_end_matches('='))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| ToolError::invalid(format!("a relayed pass is {RELAYED_PREFIX} and the code its giver was shown; this one does not read")))?;
    if r.v != 1 || r.pass.is_empty() || r.token.len() < 32 {
        return Err(ToolError::invalid(
            "this relayed pass is not one this Vyre can use",
        ));
    }
    Ok(r)
}

pub(super) fn token() -> Result<String, ToolError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
    Ok(B64.encode(b))
}

/// A new Ed25519 key for a relayed pass: its seed (kept sealed in the item) and public half
/// (given to the giver), both base64url.
pub(super) fn pass_key() -> Result<(super::Secret, String), ToolError> {
    let mut seed = zeroize::Zeroizing::new([0u8; 32]);
    getrandom::fill(seed.as_mut())
        .map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
    let public = ed25519_dalek::SigningKey::from_bytes(&seed)
        .verifying_key()
        .to_bytes();
    Ok((super::Secret::new(B64.encode(*seed)), B64.encode(public)))
}

/// Ask the giver's Vyre to bind pass `r` to `public`: the pass is this Vyre's from then on.
pub(super) async fn bind_at_giver(url: &str, r: &Relayed, public: &str) -> Result<(), ToolError> {
    let http = crate::kernel::outbound::Http::new().map_err(ToolError::internal)?;
    let body = json!({ "pass": r.pass, "token": r.token, "key": public });
    let answer = http
        .json("POST", &format!("{url}/v1/pass/bind"), None, Some(&body))
        .await
        .map_err(|e| {
            ToolError::unavailable(
                "unreachable",
                format!("the Vyre that gave this pass ({url}) did not answer, and a relayed pass is taken there: {e}"),
            )
        })?;
    if answer.status == 200 {
        return Ok(());
    }
    let code = answer.body["error"]["code"].as_str().unwrap_or("refused");
    let message = answer.body["error"]["message"]
        .as_str()
        .unwrap_or("it refused the pass");
    Err(match code {
        "pass_taken" => ToolError::conflict(
            "pass_taken",
            format!("the Vyre that gave this pass ({url}): {message}"),
        ),
        "pass_revoked" => ToolError::refused(
            "pass_revoked",
            format!("the Vyre that gave this pass ({url}): {message}"),
        ),
        _ => ToolError::unavailable(
            "unreachable",
            format!(
                "the Vyre that gave this pass ({url}) answered {}: {message}",
                answer.status
            ),
        ),
    })
}

#[cfg(test)]
#[path = "pass_code_tests.rs"]
mod tests;
