//! `harness.remembered`: what memory gave one thread so far (its `harness.remembered` events),
//! for a surface that opens the thread after its hooks ran. The event log is where it is kept;
//! this is the narrow read of it a paired Mac may call on a box (whose `system.events` it may
//! not), and a session only of a thread it may see.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kernel::module::Ctx;
use crate::kernel::tools::{CallCx, ToolError};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberedInput {
    /// The thread whose memory is asked for.
    thread: String,
    /// At most this many, the newest (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

/// One hook's gift, as the event said it (the shape of `system.events`' events).
#[derive(Serialize, JsonSchema)]
pub struct Remembered {
    id: i64,
    at: i64,
    #[serde(rename = "type")]
    kind: String,
    thread: Option<String>,
    /// `{hook, facts, quotes}`: the facts a brief gave, the turns recall quoted for a prompt.
    payload: Value,
}

/// `harness.remembered`: the thread's `harness.remembered` events, oldest first.
pub async fn remembered(
    c: Ctx,
    input: RememberedInput,
    _: CallCx,
) -> Result<Vec<Remembered>, ToolError> {
    let limit = input.limit.unwrap_or(200).clamp(1, 1000) as usize;
    let events = c
        .events()
        .of_thread(&input.thread, "harness.remembered", limit)
        .await?;
    Ok(events
        .into_iter()
        .map(|e| Remembered {
            id: e.id,
            at: e.at,
            payload: e.payload_value(),
            kind: e.kind.clone(),
            thread: e.thread.clone(),
        })
        .collect())
}
