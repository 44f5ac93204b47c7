//! `ctx.remote`: a module on one Vyre calls a tool on a Vyre it is paired with (the Mac on its
//! box), through the pairing's credential. The pairing module provides it; no other module
//! makes an HTTP call of its own to another Vyre.
//!
//! The other side sees the call as this machine's device (`link:<device>`). When `on_behalf` is
//! a person here, the call carries a presence assertion signed with this machine's key, and
//! the other side treats it as that person's (`crate::kernel::presence`); otherwise it is not a
//! person there. The other side decides which of its tools a paired Vyre may call
//! (`link.allow` in its config).

use std::future::Future;
use std::pin::Pin;

use futures_util::Stream;
use serde_json::Value;

use super::Capability;
use crate::kernel::tools::{Caller, ToolError};

/// A future a remote call returns.
pub type RemoteFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// One event of the other Vyre's, as its stream said it: its id there and its JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteEvent {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

/// The other Vyre's events, as they come; an error ends it.
pub type RemoteEvents = Pin<Box<dyn Stream<Item = Result<RemoteEvent, String>> + Send>>;

/// A future a remote stream's opening returns.
pub type RemoteEventsFuture<'a> =
    Pin<Box<dyn Future<Output = Result<RemoteEvents, ToolError>> + Send + 'a>>;

pub trait Remote: Send + Sync {
    /// Call `tool` with `input` on the paired Vyre `peer` (a pairing id; `None`: the only one),
    /// for `on_behalf`. The other side's refusal comes back with its own code and message.
    fn call<'a>(
        &'a self,
        peer: Option<&'a str>,
        tool: &'a str,
        input: Value,
        on_behalf: &'a Caller,
    ) -> RemoteFuture<'a>;

    /// Follow one thread of the paired Vyre `peer` live: its `thread.*` and `ask.*` events,
    /// from after `since` (an event id there) or from now. Word by word, as the other side
    /// says them; nothing of it is kept here.
    fn thread_events<'a>(
        &'a self,
        peer: &'a str,
        thread: &'a str,
        since: Option<&'a str>,
    ) -> RemoteEventsFuture<'a>;
}

impl Capability for dyn Remote {
    const NAME: &'static str = "remote";
}
