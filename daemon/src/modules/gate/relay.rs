//! Relayed passes through the Gate (ADR 0036), both ends.
//!
//! The receiving end: a request whose item is a relayed pass (`VaultValue::Pass`) is not sent
//! from here. The Gate hands it, as written (references, never a value), to the giver's Vyre
//! (`POST <url>/v1/pass`, the pass's token in the body), whose Gate fills the value in and sends
//! it, and gives back the answer already masked.
//!
//! The giving end: `gate.relay`, called only by that endpoint (as `module:pass`), checks the
//! token against the vault's pass (`ctx.vault().open_pass`: unknown, wrong and revoked are one
//! answer), and sends the request with the pass's item through the same boundary as any of the
//! Gate's own: https or a listed address, no private address unless listed, pinned addresses,
//! the answer masked. Each use is kept by the vault with where it went.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::Deserialize;
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

/// A relayed pass found among a request's items.
pub(super) struct Pass {
    item: String,
    url: String,
    pass: String,
    token: Secret,
}

/// The relayed pass a request's items hold, if one does: then it must be the only item (the
/// giver's Gate fills in its one value, and nothing of this vault travels with it).
pub(super) fn pass_in(opened: &BTreeMap<String, VaultValue>) -> Result<Option<Pass>, ToolError> {
    let Some((item, VaultValue::Pass { url, pass, token })) = opened
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
        token: token.clone(),
    }))
}

/// Hand the request to the giver's Vyre, and its answer back.
pub(super) async fn forward(
    c: &Ctx,
    pass: Pass,
    input: &RequestInput,
    shape: &Shape,
    who: Who,
) -> Result<Sent, ToolError> {
    let http = crate::kernel::outbound::Http::new().map_err(ToolError::internal)?;
    let url = format!("{}/v1/pass", pass.url);
    let body = json!({ "pass": pass.pass, "token": pass.token.expose(), "request": input });
    let answer = http.json("POST", &url, None, Some(&body)).await;
    drop(body);
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
            "pass_revoked" | "not_granted" => ErrorKind::Refused,
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
    /// Its token.
    #[schemars(length(min = 1, max = 128))]
    pub token: String,
    /// The request as the other side's session wrote it: `{{vault:NAME}}` (any one name)
    /// where the pass's value goes.
    pub request: RequestInput,
}

/// `gate.relay`: the giving end.
pub async fn relay(c: Ctx, b: Boundary, input: RelayInput, cx: CallCx) -> Result<Sent, ToolError> {
    if !matches!(&cx.caller, Caller::Module { name } if name == ENDPOINT) {
        return Err(ToolError::refused(
            "not_approved",
            "gate.relay is called by another Vyre holding a pass, at POST /v1/pass",
        ));
    }
    let req = input.request;
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
        .open_pass(&input.pass, &input.token, &destination)
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
