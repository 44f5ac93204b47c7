//! `sessions.slots.*`: how teammates take and give back theirs.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::io::Done;
use crate::kernel::module::{Ctx, ToolDef};
use crate::kernel::tools::fence::{not_your_project, not_your_thread};
use crate::kernel::tools::{CallCx, Reach, ToolError};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TakeInput {
    /// `teammate` or `subagent`.
    pub(crate) kind: crate::modules::sessions::slots::Kind,
    /// The thread it is for: its slots go back when its session ends.
    #[serde(default)]
    pub(crate) thread: Option<String>,
    /// The project it counts against (per-project limits, and whose turn it is).
    #[serde(default)]
    pub(crate) project: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct TakeOutput {
    pub(crate) slot: String,
    /// `held`, or `waiting` (then `slot.taken` says when it is held).
    pub(crate) state: String,
    pub(crate) position: Option<usize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlotInput {
    pub(crate) slot: String,
}

/// `sessions.slots.*`: how teammates take and give back theirs (subagents of Vyre's own
/// sessions wait in the driver's hook instead).
pub(super) fn register(
    ctx: &Ctx,
    slots: Arc<crate::modules::sessions::slots::Slots>,
) -> Result<(), crate::kernel::module::StartError> {
    ctx.tool_with(
        ToolDef::new(
            "sessions.slots.take",
            "Take a teammate or subagent slot: held at once, or waiting in a fair line (slot.waiting and slot.taken say how it goes).",
        )
        .finishes()
        .sessions_fenced().plumbing(),
        &slots,
        take,
    )?;
    ctx.tool_with(
        ToolDef::new(
            "sessions.slots.release",
            "Give a slot back, or stop waiting for it.",
        )
        .finishes()
        .sessions_fenced()
        .plumbing(),
        &slots,
        release,
    )?;
    ctx.tool_with(
        ToolDef::new(
            "sessions.slots.list",
            "The slot limits, who holds a slot, and who waits, with positions.",
        )
        .sessions_fenced()
        .plumbing(),
        &slots,
        list,
    )?;
    Ok(())
}

type SlotsRef = Arc<crate::modules::sessions::slots::Slots>;

/// `sessions.slots.take`: a session's slot is always one of its own threads' (so it goes back
/// when that session ends), counted against a project it may see.
async fn take(s: SlotsRef, input: TakeInput, cx: CallCx) -> Result<TakeOutput, ToolError> {
    let scope = cx.scope(Reach::Projects).await?;
    let thread = input.thread.or_else(|| scope.thread().map(String::from));
    if !scope.is_everything() {
        if !thread.as_deref().is_some_and(|t| scope.owns(t)) {
            let named = thread.as_deref().unwrap_or("(none)");
            return Err(not_your_thread(&format!("thread {named:?}")));
        }
        if let Some(p) = &input.project
            && !scope.sees_project(p)
        {
            return Err(not_your_project(p));
        }
    }
    let taken = s.take(input.kind, thread, input.project).await;
    Ok(TakeOutput {
        slot: taken.slot,
        state: if taken.position.is_some() {
            "waiting"
        } else {
            "held"
        }
        .into(),
        position: taken.position,
    })
}

/// `sessions.slots.release`: a session gives back only its own threads' slots.
async fn release(s: SlotsRef, input: SlotInput, cx: CallCx) -> Result<Done, ToolError> {
    let scope = cx.scope(Reach::Own).await?;
    if !scope.is_everything() {
        let view = s.view();
        let thread = view
            .held
            .iter()
            .chain(view.waiting.iter().map(|w| &w.entry))
            .find(|e| e.slot == input.slot)
            .and_then(|e| e.thread.clone());
        if !thread.is_some_and(|t| scope.owns(&t)) {
            return Err(not_your_thread(&format!("slot {:?}", input.slot)));
        }
    }
    if s.release(&input.slot, "released").await {
        Ok(Done { ok: true })
    } else {
        Err(ToolError::not_found(
            "unknown_slot",
            format!("no slot {:?} is held or waited for", input.slot),
        ))
    }
}

/// `sessions.slots.list`: a session sees the limits and its own threads' slots, nobody else's.
async fn list(
    s: SlotsRef,
    _: crate::kernel::tools::NoInput,
    cx: CallCx,
) -> Result<crate::modules::sessions::slots::View, ToolError> {
    let scope = cx.scope(Reach::Own).await?;
    let mut view = s.view();
    if !scope.is_everything() {
        let mine = |e: &crate::modules::sessions::slots::Entry| {
            e.thread.as_deref().is_some_and(|t| scope.owns(t))
        };
        view.held.retain(mine);
        view.waiting.retain(|w| mine(&w.entry));
    }
    Ok(view)
}
