//! The lessons in the harness's hooks (spec 7.11): the reminders the person taught Vyre join the
//! brief and every prompt; for a terminal's session (one Vyre does not run, whose driver would
//! check them itself) a prompt that corrects is read for a lesson, a tool call that breaks one
//! is reminded, asked about or refused, and an answer that breaks one is sent back.

use serde_json::{Value, json};

use crate::kernel::module::Ctx;
use crate::kernel::tools::Caller;

/// A session Vyre runs: its driver checks tools and answers itself.
pub fn owned(caller: &Caller) -> bool {
    matches!(
        caller,
        Caller::Session {
            thread: Some(_),
            ..
        }
    )
}

async fn check(ctx: &Ctx, input: Value) -> Option<Value> {
    match ctx.call("learn.check", input).await {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::debug!(error = %e, "the lessons could not be checked");
            None
        }
    }
}

/// The hook's answer with the lessons' reminders added to its context (SessionStart,
/// UserPromptSubmit): the lessons are checked while the answer is made.
pub async fn remind(
    ctx: &Ctx,
    caller: &Caller,
    event: &str,
    input: &Value,
    answer: impl std::future::Future<Output = Option<Value>>,
) -> Option<Value> {
    let session = input["session_id"].as_str().unwrap_or("terminal");
    let stage = if event == "SessionStart" {
        "brief"
    } else {
        "prompt"
    };
    let asked = json!({
        "stage": stage, "session": session, "text": input["prompt"].as_str(),
        "learn": event == "UserPromptSubmit" && !owned(caller),
        // A terminal's hook could be run by its session's own commands too: what it teaches
        // waits for the person, unless the person called.
        "person": caller.is_person(),
    });
    let lessons = async {
        check(ctx, asked)
            .await
            .and_then(|c| c["context"].as_str().map(String::from))
    };
    let (answer, lessons) = tokio::join!(answer, lessons);
    let Some(lessons) = lessons else {
        return answer;
    };
    let mut answer = answer.unwrap_or_else(
        || json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": "" } }),
    );
    let said = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    answer["hookSpecificOutput"]["additionalContext"] = json!(if said.is_empty() {
        lessons
    } else {
        format!("{said}\n\n{lessons}")
    });
    Some(answer)
}

/// A terminal session's tool call, checked against the lessons: the floor's and the Gate's
/// answer stands when they said something.
pub async fn tool(ctx: &Ctx, caller: &Caller, input: &Value, said: Option<Value>) -> Option<Value> {
    if owned(caller) {
        return said;
    }
    let denied = said
        .as_ref()
        .is_some_and(|s| s["hookSpecificOutput"]["permissionDecision"] == "deny");
    if denied {
        return said;
    }
    let asked = json!({
        "stage": "tool", "session": input["session_id"].as_str().unwrap_or("terminal"),
        "tool": input["tool_name"], "input": input["tool_input"],
    });
    let c = check(ctx, asked).await?;
    let reason = c["reason"].as_str().unwrap_or_default();
    let decision = |d: &str, r: String| {
        Some(json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": d, "permissionDecisionReason": r,
        } }))
    };
    let gate = said
        .as_ref()
        .and_then(|s| s["hookSpecificOutput"]["permissionDecisionReason"].as_str())
        .map(String::from);
    match c["decision"].as_str() {
        Some("deny") => decision("deny", reason.to_string()),
        Some("ask") => decision(
            "ask",
            gate.map_or(reason.to_string(), |g| format!("{g} {reason}")),
        ),
        _ => match (said, c["context"].as_str()) {
            (Some(s), _) => Some(s),
            (None, Some(context)) => Some(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse", "additionalContext": context,
            } })),
            (None, None) => None,
        },
    }
}

/// A terminal session's answer, checked before its turn ends: a broken lesson sends it back,
/// with the words held for the session when there are some.
pub async fn stop(ctx: &Ctx, caller: &Caller, input: &Value, said: Option<Value>) -> Option<Value> {
    if owned(caller) {
        return said;
    }
    let asked = json!({
        "stage": "stop", "session": input["session_id"].as_str().unwrap_or("terminal"),
        "text": input["last_assistant_message"].as_str().unwrap_or_default(),
    });
    let Some(c) = check(ctx, asked).await.filter(|c| c["decision"] == "block") else {
        return said;
    };
    let reason = c["reason"].as_str().unwrap_or_default();
    let reason = match said.as_ref().and_then(|s| s["reason"].as_str()) {
        Some(held) => format!("{reason}\n\n{held}"),
        None => reason.to_string(),
    };
    Some(json!({ "decision": "block", "reason": reason }))
}
