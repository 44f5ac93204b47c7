//! A question of Codex's that waits for the person, and how the person's answer (or its
//! withdrawal) goes back to Codex.

use serde_json::{Value, json};

use super::params::decision;
use super::questions::Answering;
use super::tools;
use crate::kernel::contracts::provider::{HostCall, HostTools, ProviderError};
use crate::modules::sessions::rpc::{Rpc, RpcError};

/// A question of Codex's, open.
pub enum Open {
    /// An approval request (a command, a file change): answered with a decision.
    Approval { id: Value },
    /// Codex's questions to the person, or an MCP server's form (`questions.rs`).
    Input { id: Value, answering: Answering },
    /// A call of one of Vyre's tools, held until the person answers.
    Tool {
        id: Value,
        call: HostCall,
        tools: HostTools,
    },
}

impl Open {
    /// What Codex gets for its questions or a form, from Vyre's answer (`None` for the other
    /// kinds, answered by `reply`); a form's answer that does not fit is refused, and the
    /// question is then left open for another.
    pub fn input(&self, response: &Value) -> Result<Option<Value>, ProviderError> {
        match self {
            Open::Input { answering, .. } => answering
                .answer(response)
                .map(Some)
                .map_err(ProviderError::BadAnswer),
            _ => Ok(None),
        }
    }

    /// Answer it on Codex's pipe: `input` is what `input` made of the answer.
    pub fn reply(self, rpc: &Rpc, response: &Value, input: Option<Value>) -> Result<(), RpcError> {
        match self {
            Open::Approval { id } => rpc.respond(&id, json!({ "decision": decision(response) })),
            Open::Input { id, .. } => rpc.respond(&id, input.unwrap_or_default()),
            Open::Tool { id, call, tools } => {
                if response["behavior"] != "allow" {
                    let why = response["message"]
                        .as_str()
                        .unwrap_or("The person declined this.");
                    return rpc.respond(&id, tools::declined(why));
                }
                tools::run(&tools, call, rpc, id);
                Ok(())
            }
        }
    }

    /// Withdrawn (the turn interrupted): an approval `cancel`, a form `cancel`, questions no
    /// answer, a call of Vyre's tools declined.
    pub fn withdraw(self, rpc: &Rpc) -> Result<(), RpcError> {
        match self {
            Open::Approval { id } => rpc.respond(&id, json!({ "decision": "cancel" })),
            Open::Input { id, answering } => rpc.respond(&id, answering.withdrawn()),
            Open::Tool { id, .. } => rpc.respond(&id, tools::declined("The turn was interrupted.")),
        }
    }
}
