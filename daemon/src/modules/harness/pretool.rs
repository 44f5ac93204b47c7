//! PreToolUse: the floor refuses what must never run, and the Gate has Claude Code ask about
//! what would send as the person, spend their money or delete beyond the folder.

use serde_json::{Value, json};

use crate::kernel::module::Ctx;

/// The floor's answer to a tool call, if it refuses it.
pub fn floor(input: &Value) -> Option<Value> {
    let tool = input["tool_name"].as_str()?;
    let why = crate::kernel::floor::check(tool, &input["tool_input"])?;
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": why,
        }
    }))
}

/// The Gate's answer to a tool call it would hold (spec 7.7): Claude Code asks about it, so a
/// terminal's person sees the command before it sends as them, or denies it when the Gate
/// refuses it outright (a command that names a vault item) (a session Vyre runs is held in
/// the Gate itself, by its driver's own check). A Gate that cannot check asks too. `thread` is
/// the session's, as vyred bound it (an agent's session may use the items granted to it).
pub async fn gate(ctx: &Ctx, input: &Value, thread: Option<&str>) -> Option<Value> {
    let tool = input["tool_name"].as_str()?;
    if tool != "Bash" && !tool.starts_with("mcp__") {
        return None;
    }
    let checked = ctx
        .call(
            "gate.check",
            json!({ "tool": tool, "input": input["tool_input"], "cwd": input["cwd"], "thread": thread }),
        )
        .await;
    let (decision, reason) = match checked {
        Ok(c) if c["denied"].is_string() => ("deny", c["denied"].as_str()?.to_string()),
        Ok(c) if c["held"] == true => ("ask", c["reason"].as_str()?.to_string()),
        Ok(_) => return None,
        Err(e) => (
            "ask",
            format!(
                "Vyre's Gate could not check this call ({}), so you are asked.",
                e.message
            ),
        ),
    };
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_tool_use_runs_the_floor() {
        let denied =
            floor(&json!({ "tool_name": "Bash", "tool_input": { "command": "rm -rf /" } }))
                .unwrap();
        assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(
            floor(&json!({ "tool_name": "Bash", "tool_input": { "command": "ls" } })).is_none()
        );
        assert!(floor(&json!({ "tool_name": "Read", "tool_input": {} })).is_none());
    }
}
