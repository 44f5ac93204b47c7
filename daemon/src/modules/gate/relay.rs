//! Relayed passes through the Gate (ADR 0036), both ends.
//!
//! The receiving end: a request whose item is a relayed pass (`VaultValue::Pass`) is not sent
//! from here. The Gate hands it, as written (references, never a value), to the giver's Vyre
//! (`POST <url>/v1/pass`), signed with the key this Vyre bound the pass to when it accepted it,
//! with the time and a one-use nonce; the giver's Gate fills the value in and sends it, and
//! gives back the answer already masked.
//!
//! The giving end: `gate.relay`, called only by that endpoint (as `module:pass`), has the vault
//! check the signature against the key the pass is bound to, the time and the nonce
//! (`ctx.vault().open_pass`: unknown, revoked, never taken and signed by another key are one
//! answer; a replay and a stale time their own), and sends the request with the pass's item
//! through the same boundary as any of the Gate's own: https or a listed address, no private
//! address unless listed, pinned addresses, the answer masked. Each use is kept by the vault
//! with where it went.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::Signer as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::boundary::{self, Shape};
use super::request::{Boundary, RequestInput, Sent, Who, items, send};
use crate::kernel::contracts::secret::{Secret, VaultValue};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::tools::{CallCx, Caller, ErrorKind, ToolError};

pub use crate::kernel::contracts::vault::{
    PASS_ENDPOINT_CALLER as ENDPOINT, PASS_RELAY_TOOL as TOOL,
};
use crate::kernel::contracts::vault::{PassProof, pass_message};

/// A relayed pass found among a request's items.
pub(super) struct Pass {
    item: String,
    url: String,
    pass: String,
    /// The key's seed; `None` for a pass accepted before passes were bound.
    key: Option<Secret>,
}

/// The relayed pass a request's items hold, if one does: then it must be the only item (the
/// giver's Gate fills in its one value, and nothing of this vault travels with it).
pub(super) fn pass_in(opened: &BTreeMap<String, VaultValue>) -> Result<Option<Pass>, ToolError> {
    let Some((item, VaultValue::Pass { url, pass, key })) = opened
        .iter()
        .find(|(_, v)| matches!(v, VaultValue::Pass { .. }))
    else {
        return Ok(None);
    };
    if opened.len() > 1 {
        return Err(ToolError::invalid(format!(
            "{item:?} is a relayed pass: a request with it carries no other vault item (its giver's Vyre sends it)"
        )));
    }
    Ok(Some(Pass {
        item: item.clone(),
        url: url.clone(),
        pass: pass.clone(),
        key: key.clone(),
    }))
}

/// What a relayed request's signature covers, as JSON text: the request as the session wrote
/// it, when, and a nonce the giver takes once.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Signed<R> {
    at: i64,
    nonce: String,
    request: R,
}

/// The body of `POST /v1/pass` for `input`: the signed text and its signature.
fn signed_body(pass: &Pass, input: &RequestInput) -> Result<serde_json::Value, ToolError> {
    let seed: [u8; 32] = pass
        .key
        .as_ref()
        .and_then(|k| B64.decode(k.expose()).ok())
        .and_then(|k| k.try_into().ok())
        .ok_or_else(|| {
            ToolError::refused(
                "pass_unbound",
                format!(
                    "{:?} was accepted before passes were bound to the Vyre that takes them, and its giver no longer takes it: ask them for a new pass",
                    pass.item
                ),
            )
        })?;
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    let mut nonce = [0u8; 18];
    getrandom::fill(&mut nonce).map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
    let signed = serde_json::to_string(&Signed {
        at: crate::now_ms(),
        nonce: B64.encode(nonce),
        request: input,
    })
    .map_err(|e| ToolError::internal(e.to_string()))?;
    let sig = key.sign(&pass_message(&pass.pass, &signed));
    Ok(json!({ "pass": pass.pass, "signed": signed, "sig": B64.encode(sig.to_bytes()) }))
}

/// Hand the request to the giver's Vyre, and its answer back.
pub(super) async fn forward(
    c: &Ctx,
    pass: Pass,
    input: &RequestInput,
    shape: &Shape,
    who: Who,
) -> Result<Sent, ToolError> {
    let body = signed_body(&pass, input)?;
    let http = crate::kernel::outbound::Http::new().map_err(ToolError::internal)?;
    let url = format!("{}/v1/pass", pass.url);
    let answer = http.json("POST", &url, None, Some(&body)).await;
    let outcome = match &answer {
        Ok(a) if a.status == 200 => Ok(()),
        Ok(a) => Err(a.body["error"]["code"]
            .as_str()
            .unwrap_or("refused")
            .to_string()),
        Err(e) => Err(e.clone()),
    };
    let mut event = NewEvent::new(
        "gate.sent",
        crate::kernel::redact::mask_value(&json!({
            "item": who.item, "by": who.by, "method": shape.method, "destination": shape.place,
            "status": answer.as_ref().ok().and_then(|a| a.body["data"]["status"].as_u64()),
            "error": outcome.as_ref().err(), "vault": items(shape), "through": pass.url,
        })),
    );
    if let Some(t) = &who.thread {
        event = event.thread(t);
    }
    if let Err(e) = c.events().emit(event).await {
        tracing::warn!("the gate could not say gate.sent: {e}");
    }
    let a = answer.map_err(|e| {
        ToolError::unavailable(
            "unreachable",
            format!(
                "the Vyre that gave {:?} ({}) did not answer: {e}",
                pass.item, pass.url
            ),
        )
    })?;
    if a.status != 200 {
        let code = a.body["error"]["code"]
            .as_str()
            .unwrap_or("refused")
            .to_string();
        let message = a.body["error"]["message"]
            .as_str()
            .unwrap_or("refused")
            .to_string();
        let kind = match code.as_str() {
            "pass_revoked" | "not_granted" | "pass_replayed" | "pass_stale" => ErrorKind::Refused,
            "invalid_input" => ErrorKind::InvalidInput,
            _ if a.status >= 500 => ErrorKind::Unavailable,
            _ => ErrorKind::Refused,
        };
        return Err(ToolError::new(
            kind,
            code,
            format!(
                "the Vyre that gave {:?} ({}): {message}",
                pass.item, pass.url
            ),
        ));
    }
    serde_json::from_value(a.body["data"].clone()).map_err(|_| {
        ToolError::unavailable(
            "unreachable",
            format!(
                "the Vyre that gave {:?} answered with something else than a request's answer",
                pass.item
            ),
        )
    })
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelayInput {
    /// The pass's id.
    #[schemars(length(min = 1, max = 64))]
    pub pass: String,
    /// JSON text `{"at": <ms>, "nonce": <16 to 128 characters>, "request": <the request as the
    /// other side's session wrote it, `{{vault:NAME}}` (any one name) where the pass's value
    /// goes>}`, exactly as signed.
    #[schemars(length(min = 1, max = 3_000_000))]
    pub signed: String,
    /// The Ed25519 signature, base64url, by the key the pass was bound to when it was taken,
    /// of `vyre-pass-relay-v1`, a zero byte, the pass's id, a zero byte and `signed`.
    #[schemars(length(min = 86, max = 88))]
    pub sig: String,
}

/// `gate.relay`: the giving end.
pub async fn relay(c: Ctx, b: Boundary, input: RelayInput, cx: CallCx) -> Result<Sent, ToolError> {
    if !matches!(&cx.caller, Caller::Module { name } if name == ENDPOINT) {
        return Err(ToolError::refused(
            "not_approved",
            "gate.relay is called by another Vyre holding a pass, at POST /v1/pass",
        ));
    }
    let req: Signed<RequestInput> = serde_json::from_str(&input.signed).map_err(|e| {
        ToolError::invalid(format!(
            "signed: the JSON text {{\"at\", \"nonce\", \"request\"}} as signed: {e}"
        ))
    })?;
    let req = req.request;
    let shape = boundary::shape(&req.method, &req.url, &req.headers, req.body.as_deref())
        .map_err(ToolError::invalid)?;
    let names: BTreeSet<&str> = shape.refs.iter().map(|r| r.item.as_str()).collect();
    let [name] = names.into_iter().collect::<Vec<_>>()[..] else {
        return Err(ToolError::invalid(
            "a request through a pass names its one item: {{vault:NAME}} (one name, any fields)",
        ));
    };
    let destination = format!("{} {}", shape.method, shape.place);
    let opened = c
        .vault()
        .open_pass(
            &input.pass,
            PassProof {
                signed: &input.signed,
                sig: &input.sig,
            },
            &destination,
        )
        .await
        .map_err(ToolError::from)?;
    let by = format!("pass:{} ({})", opened.pass, opened.to);
    let values: BTreeMap<String, VaultValue> = [(name.to_string(), opened.value)].into();
    let who = Who {
        by,
        item: None,
        thread: None,
    };
    send(&c, &b, &req, &shape, &values, who).await
}
