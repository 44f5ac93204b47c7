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

use serde_json::Value;

use super::Capability;
use crate::kernel::tools::{Caller, ToolError};

/// A future a remote call returns.
pub type RemoteFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

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
}

impl Capability for dyn Remote {
    const NAME: &'static str = "remote";
}
