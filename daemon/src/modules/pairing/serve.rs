//! The box's calls to this machine (`crate::kernel::link_calls` on the box's side): they come
//! down the event stream the follower holds open, as `link.call` messages. Each runs here as
//! the box's pairing (`link:<pairing>`, never a person), fenced by this machine's own
//! `link.allow` (by default: find and read files in its roots), and its answer goes back to the
//! box. At most [`AT_ONCE`] run at a time; more are answered busy at once.

use std::sync::Arc;

use hyper::Method;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::kernel::module::Ctx;
use crate::kernel::tools::Caller;
use crate::surfaces::client::Client;

/// The box's calls run here at once at most.
const AT_ONCE: usize = 16;

#[derive(Deserialize)]
struct Call {
    id: String,
    tool: String,
    #[serde(default)]
    input: Value,
}

/// What serves one pairing's calls while its stream is open.
pub(super) struct Server {
    ctx: Ctx,
    client: Client,
    caller: Caller,
    slots: Arc<Semaphore>,
}

impl Server {
    /// `pairing` is the pairing's id here, `name` what the box calls itself.
    pub(super) fn new(ctx: &Ctx, client: Client, pairing: &str, name: &str) -> Server {
        Server {
            ctx: ctx.clone(),
            client,
            caller: Caller::Linked {
                id: pairing.to_string(),
                name: name.to_string(),
                present: None,
            },
            slots: Arc::new(Semaphore::new(AT_ONCE)),
        }
    }

    /// Take one `link.call` message: run it in its own task, answer when it ends.
    pub(super) fn take(&self, data: &str) {
        let call: Call = match serde_json::from_str(data) {
            Ok(call) => call,
            Err(e) => {
                tracing::warn!("the box sent a call this machine cannot read: {e}");
                return;
            }
        };
        // The id goes into a path: only what the box's ids are made of.
        if call.id.is_empty()
            || call.id.len() > 64
            || !call.id.bytes().all(|b| b.is_ascii_hexdigit())
        {
            tracing::warn!("the box sent a call with a malformed id");
            return;
        }
        let (ctx, client, caller) = (self.ctx.clone(), self.client.clone(), self.caller.clone());
        let slot = self.slots.clone().try_acquire_owned();
        self.ctx.spawn(async move {
            let answer = match slot {
                Ok(_slot) => run(&ctx, &caller, &call).await,
                Err(_) => json!({ "status": 429, "error": { "code": "link_busy",
                    "message": format!("{AT_ONCE} of the box's calls run here already; try again") } }),
            };
            let body = serde_json::to_vec(&answer).unwrap_or_default();
            let path = format!("/v1/link/calls/{}", call.id);
            match client
                .json(Method::POST, &path, Some(body), &[("content-type", "application/json")])
                .await
            {
                Ok((204, _)) => {}
                Ok((status, answer)) => {
                    tracing::debug!(%status, %answer, "the box did not take an answer (it gave up on the call?)")
                }
                Err(e) => tracing::debug!("the answer did not reach the box: {e}"),
            }
        });
    }
}

/// Run the call here as the box's pairing: its answer as the box takes it.
async fn run(ctx: &Ctx, caller: &Caller, call: &Call) -> Value {
    let input = match &call.input {
        Value::Null => json!({}),
        v => v.clone(),
    };
    match ctx.call_as(caller, &call.tool, input).await {
        Ok(data) => json!({ "data": data }),
        Err(e) => {
            if let Some(detail) = &e.detail {
                tracing::error!(code = %e.code, %detail, tool = %call.tool, "a call of the box failed here");
            }
            json!({
                "status": crate::surfaces::api::error::status_of(e.kind).as_u16(),
                "error": { "code": e.code, "message": e.message },
            })
        }
    }
}
