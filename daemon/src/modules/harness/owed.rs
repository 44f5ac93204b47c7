//! A warm spare's brief (ADR 0032): a spare's SessionStart runs before it is any thread's, so
//! its brief and the lessons' reminders for a start are owed, and given with its first prompt.

use serde_json::{Value, json};

use super::{brief, context, lessons};
use crate::kernel::module::Ctx;
use crate::kernel::tools::{Caller, Scope};

/// The start's brief and the lessons' reminders for it.
pub async fn briefing(ctx: &Ctx, caller: &Caller, input: &Value) -> Option<Value> {
    let brief = brief(ctx, caller, input).await;
    lessons::remind(ctx, caller, "SessionStart", input, brief).await
}

/// Whether an owned session's SessionStart runs before its thread exists: a warm spare,
/// whose brief is owed to its first prompt (ADR 0032).
pub async fn spare(ctx: &Ctx, scope: &Scope) -> bool {
    let Some(thread) = scope.thread().filter(|_| !scope.is_everything()) else {
        return false;
    };
    matches!(
        ctx.call("threads.get", json!({ "thread": thread })).await,
        Err(e) if e.code == "unknown_thread"
    )
}

/// Whether this prompt is the first of its session's Claude Code process `pid`: no
/// SessionStart bound the session to that process yet (an owned session's SessionStart command
/// steps aside, and vyred answers it here). A process is recorded by its pid alone: whether it
/// still runs does not matter to its own prompt.
pub async fn first_prompt(ctx: &Ctx, input: &Value, pid: Option<u32>) -> bool {
    let (Some(session), Some(pid)) = (input["session_id"].as_str(), pid) else {
        return false;
    };
    let bound = binding(ctx, session).await;
    match bound {
        Ok(Some((Some(bound), _))) => bound != pid,
        Ok(_) => true,
        // Unreadable: no brief rather than one with every prompt.
        Err(_) => false,
    }
}

/// Whether this session's brief is still owed; it is not any more once asked.
pub async fn take(ctx: &Ctx, session: &str) -> bool {
    let owed = binding(ctx, session).await;
    if !matches!(owed, Ok(Some((_, true)))) {
        return false;
    }
    let s = session.to_string();
    let _ = ctx
        .store()
        .write(move |tx| {
            tx.conn().execute(
                "UPDATE harness_bindings SET brief_owed = 0 WHERE session = ?1",
                [&s],
            )?;
            Ok(())
        })
        .await;
    true
}

/// The session's binding as stored: the process it is bound to, and whether its brief is owed.
async fn binding(
    ctx: &Ctx,
    session: &str,
) -> Result<Option<(Option<u32>, bool)>, crate::kernel::store::StoreError> {
    let s = session.to_string();
    ctx.store()
        .read(move |c| {
            Ok(rusqlite::OptionalExtension::optional(c.query_row(
                "SELECT pid, brief_owed FROM harness_bindings WHERE session = ?1",
                [&s],
                |r| Ok((r.get(0)?, r.get(1)?)),
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
