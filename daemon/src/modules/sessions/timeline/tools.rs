//! `threads.timeline` and `threads.output`: a thread's timeline a page at a time, and a tool
//! call's whole output. Sessions may read their own threads' (and those they see).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::ToolError;
use crate::modules::sessions::switchboard::Switchboard;

/// Items in a page unless the caller says.
pub const DEFAULT_LIMIT: u32 = 100;
/// Items in a page at most.
pub const MAX_LIMIT: u32 = 500;
/// Bytes of a tool's output `threads.output` gives at most.
pub const FULL_OUTPUT_CAP: usize = 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineInput {
    thread: String,
    /// The `before` of the page after this one: the page of older items.
    #[serde(default)]
    before: Option<f64>,
    /// Items in the page, 1 to 500 (100).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputInput {
    thread: String,
    /// The tool call (its item's `call`).
    call: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Output {
    pub call: String,
    /// The output, at most 1 MiB of it, credentials masked.
    pub output: String,
    /// The whole output's size in bytes.
    pub bytes: u64,
    /// More than 1 MiB: `output` is its start.
    pub truncated: bool,
}

pub fn register(ctx: &Ctx, board: Arc<Switchboard>) -> Result<(), StartError> {
    ctx.tool_with(
        ToolDef::new(
            "threads.timeline",
            "A thread's timeline, newest page first: messages, Claude's words, tool calls with their input and output, asks with their answers, interrupts, retries and errors, in order. `before` pages back; apply thread.item and thread.text events after `last_event`.",
        )
        .sessions_see_thread("thread"),
        &board,
        |b, input: TimelineInput, _| async move {
                let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
                if input.before.is_some_and(|b| !b.is_finite()) {
                    return Err(ToolError::invalid("before must be a page's `before`"));
                }
                Ok(b.timeline(&input.thread, input.before, limit as usize)
                    .await?)
            },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.output",
            "A tool call's whole output (up to 1 MiB), where its timeline item shows the start.",
        )
        .sessions_see_thread("thread"),
        &board,
        |b, input: OutputInput, _| async move {
            Ok::<_, ToolError>(b.tool_output(&input.thread, &input.call).await?)
        },
    )?;
    Ok(())
}
