//! `ctx.remote` (`contracts::remote`): this machine calls a tool on the Vyre it is paired with,
//! with the pairing's credential, and with a presence assertion signed by this machine's key
//! when a person here made the call (`kernel::presence`). The one place a module's call leaves
//! for another Vyre.

use hyper::Method;
use serde_json::Value;

use super::{Paired, parse_address, record, unreachable};
use crate::kernel::contracts::remote::{
    Remote, RemoteEvent, RemoteEvents, RemoteEventsFuture, RemoteFuture,
};
use crate::kernel::module::Ctx;
use crate::kernel::presence::{self, DeviceKey};
use crate::kernel::tools::{Caller, ErrorKind, ToolError};
use crate::surfaces::client::Client;

/// The vault item that holds the signing key of pairing `item` (`box-<id>`).
pub fn key_item(item: &str) -> String {
    format!("{item}-key")
}

/// How long a call to the other Vyre may take before it counts as unreachable.
const CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

pub struct Link {
    pub ctx: Ctx,
}

impl Link {
    /// The pairing `peer` names, or the only one there is.
    async fn pairing(&self, peer: Option<&str>) -> Result<(Paired, String), ToolError> {
        match peer {
            Some(id) => record(&self.ctx, id).await?.ok_or_else(|| {
                ToolError::not_found(
                    "unknown_pairing",
                    format!(
                        "there is no pairing {id:?} (pairing.list) and no Vyre paired with this one by that device (devices.list, kind vyre)"
                    ),
                )
            }),
            None => {
                let mut all = super::rows(&self.ctx).await?;
                match all.len() {
                    1 => Ok(all.remove(0)),
                    0 => Err(ToolError::new(
                        ErrorKind::Conflict,
                        "not_paired",
                        "this machine is not paired with a box; pair it with `vyre pairing add`",
                    )),
                    _ => Err(ToolError::invalid(
                        "this machine is paired with more than one box: say which (`box`, from pairing.list)",
                    )),
                }
            }
        }
    }

    /// Whether `id` is not a pairing of this machine but the device of a Vyre paired with it.
    async fn is_paired_vyre(&self, id: &str) -> Result<bool, ToolError> {
        if record(&self.ctx, id).await?.is_some() {
            return Ok(false);
        }
        Ok(self
            .ctx
            .devices()
            .active(id)
            .is_some_and(|d| d.kind == crate::kernel::device_tokens::PAIRED))
    }

    /// A client for the paired Vyre, with the pairing's credential from the vault.
    async fn client(&self, paired: &Paired, item: &str) -> Result<Client, ToolError> {
        let addr = parse_address(&paired.address)?;
        let token = self.ctx.vault().fetch(item).await.map_err(|e| {
            ToolError::new(
                ErrorKind::Conflict,
                "no_credential",
                format!(
                    "the credential of pairing {} cannot be read: {e}",
                    paired.id
                ),
            )
        })?;
        Ok(Client::http(
            addr,
            Some(token.primary().expose().to_string()),
        ))
    }

    async fn call_on(
        &self,
        peer: Option<&str>,
        tool: &str,
        input: Value,
        on_behalf: &Caller,
    ) -> Result<Value, ToolError> {
        if !crate::kernel::tools::valid_name(tool) {
            return Err(ToolError::invalid(format!("{tool:?} is not a tool name")));
        }
        if let Some(device) = peer
            && self.is_paired_vyre(device).await?
        {
            // The other way: a Vyre paired with this one (the Mac, on the box) takes the call
            // down the stream it holds open here. It is never a person's call there.
            return self.ctx.link_calls().call(device, tool, input).await;
        }
        let (paired, item) = self.pairing(peer).await?;
        let client = self.client(&paired, &item).await?;
        let body = serde_json::to_vec(&input).map_err(ToolError::internal)?;
        let assertion = if on_behalf.is_person() {
            let secret = self.ctx.vault().fetch(&key_item(&item)).await.map_err(|_| {
                ToolError::new(
                    ErrorKind::Conflict,
                    "no_device_key",
                    format!(
                        "pairing {} has no key to vouch for a person with (it was made by an older Vyre): pair again",
                        paired.id
                    ),
                )
            })?;
            let key = DeviceKey::from_secret(secret.primary().expose())
                .ok_or_else(|| ToolError::internal("the pairing's key is damaged"))?;
            Some(key.assert(&paired.device, tool, &body, &on_behalf.label()))
        } else {
            None
        };
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = &assertion {
            headers.push((presence::HEADER, a.as_str()));
        }
        let (status, answer) = tokio::time::timeout(
            CALL_TIMEOUT,
            client.json(
                Method::POST,
                &format!("/v1/tools/{tool}"),
                Some(body),
                &headers,
            ),
        )
        .await
        .map_err(|_| unreachable(&paired.address, "no answer within 30 s"))?
        .map_err(|e| unreachable(&paired.address, super::why(&e)))?;
        if (200..300).contains(&status)
            && let Some(data) = answer.get("data")
        {
            return Ok(data.clone());
        }
        Err(passed_on(status, &answer))
    }
}

impl Link {
    async fn open_thread_events(
        &self,
        peer: &str,
        thread: &str,
        since: Option<&str>,
    ) -> Result<RemoteEvents, ToolError> {
        // Both go into the other side's query: only what cannot change its meaning.
        let word = |w: &str| {
            !w.is_empty()
                && w.len() <= 128
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        };
        if !word(thread) {
            return Err(ToolError::invalid(format!("{thread:?} is not a thread id")));
        }
        if let Some(s) = since
            && !(s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() && s.len() <= 19)
        {
            return Err(ToolError::invalid(format!("{s:?} is not an event id")));
        }
        let (paired, item) = self.pairing(Some(peer)).await?;
        let client = self.client(&paired, &item).await?;
        let path = format!("/v1/events?types=thread.*,ask.*,harness.remembered&thread={thread}");
        let stream = tokio::time::timeout(CALL_TIMEOUT, client.event_stream(&path, since))
            .await
            .map_err(|_| unreachable(&paired.address, "no answer within 30 s"))?
            .map_err(|e| match e {
                crate::surfaces::client::ClientError::Api {
                    status,
                    code,
                    message,
                } => passed_on(
                    status,
                    &serde_json::json!({ "error": { "code": code, "message": message } }),
                ),
                e => unreachable(&paired.address, super::why(&e)),
            })?;
        Ok(Box::pin(futures_util::stream::unfold(
            stream,
            |mut stream| async move {
                let next = stream.next().await?;
                let item = next
                    .map(|m| RemoteEvent {
                        id: m.id,
                        event: m.event,
                        data: m.data,
                    })
                    .map_err(|e| e.to_string());
                Some((item, stream))
            },
        )))
    }
}

/// The box's refusal, as this side's.
fn passed_on(status: u16, answer: &Value) -> ToolError {
    ToolError::passed_on(
        status,
        answer.get("error").unwrap_or(&Value::Null),
        "the box",
    )
}

impl Remote for Link {
    fn call<'a>(
        &'a self,
        peer: Option<&'a str>,
        tool: &'a str,
        input: Value,
        on_behalf: &'a Caller,
    ) -> RemoteFuture<'a> {
        Box::pin(self.call_on(peer, tool, input, on_behalf))
    }

    fn thread_events<'a>(
        &'a self,
        peer: &'a str,
        thread: &'a str,
        since: Option<&'a str>,
    ) -> RemoteEventsFuture<'a> {
        Box::pin(self.open_thread_events(peer, thread, since))
    }
}
