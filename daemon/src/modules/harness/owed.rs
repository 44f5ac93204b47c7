//! A start's brief, owed to the first prompt of each of an owned session's processes: vyred
//! answers a session's SessionStart there (ADR 0033), since Claude Code runs that hook before
//! vyred can speak to it, and a warm spare's before it is any thread's (ADR 0032).

use serde_json::Value;

use super::{brief, context, lessons};
use crate::kernel::module::Ctx;
use crate::kernel::tools::Caller;

/// The start's brief and the lessons' reminders for it.
pub async fn briefing(
    ctx: &Ctx,
    caller: &Caller,
    input: &Value,
    at: Option<&super::At>,
) -> Option<Value> {
    let brief = brief(ctx, caller, input, at);
    lessons::remind(ctx, caller, "SessionStart", input, brief).await
}

/// Whether this prompt is the first of its session's Claude Code process `pid`: no
/// SessionStart bound the session to that process yet (an owned session's SessionStart command
/// steps aside, and vyred answers it here). The process it is bound to counts as this one when
/// either runs under the other: vyred names a contained session by the sandbox it started, a
/// call from inside it by the Claude Code within.
pub async fn first_prompt(ctx: &Ctx, input: &Value, pid: Option<u32>) -> bool {
    let (Some(session), Some(pid)) = (input["session_id"].as_str(), pid) else {
        return false;
    };
    match bound_pid(ctx, session).await {
        Ok(Some(Some(bound))) => !crate::kernel::peer::one_tree(bound as i32, pid as i32),
        Ok(_) => true,
        // Unreadable: no brief rather than one with every prompt.
        Err(_) => false,
    }
}

/// The process the session is bound to, as stored (`Some(None)`: bound to no known process).
async fn bound_pid(
    ctx: &Ctx,
    session: &str,
) -> Result<Option<Option<u32>>, crate::kernel::store::StoreError> {
    let s = session.to_string();
    ctx.store()
        .read(move |c| {
            Ok(rusqlite::OptionalExtension::optional(c.query_row(
                "SELECT pid FROM harness_bindings WHERE session = ?1",
                [&s],
                |r| r.get(0),
            ))?)
        })
        .await
}

/// `first`'s context before `then`'s, as `event`'s answer.
pub fn joined(event: &str, first: Option<Value>, then: Option<Value>) -> Option<Value> {
    let text = |v: &Option<Value>| {
        v.as_ref()
            .and_then(|v| v["hookSpecificOutput"]["additionalContext"].as_str())
            .filter(|t| !t.is_empty())
            .map(String::from)
    };
    match (text(&first), text(&then)) {
        (None, _) => then,
        (Some(a), None) => Some(context(event, a)),
        (Some(a), Some(b)) => Some(context(event, format!("{a}\n\n{b}"))),
    }
}
