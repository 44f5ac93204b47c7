//! The harness's side in vyred (spec section 8): what Claude Code's hooks ask, answered. The
//! plugin in `harness/` runs `vyre hook <Event>` for each hook; that command hands the hook's
//! input to `harness.hook` and prints what comes back, which is the hook's output.
//!
//! Built so far: PreToolUse runs the floor and denies with the reason. SessionStart,
//! UserPromptSubmit and Stop answer nothing yet (Claude Code then behaves as without Vyre);
//! the brief, recall's context and the hand-over of queued words come next (issue 7).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::modules::{Ctx, Module, StartFuture, ToolDef};
use crate::tools::ToolError;

pub struct HarnessModule;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookInput {
    /// The hook event: SessionStart, UserPromptSubmit, PreToolUse or Stop.
    event: String,
    /// What Claude Code gave the hook on its stdin.
    input: Value,
}

#[derive(Serialize, JsonSchema)]
pub struct HookOutput {
    /// What the hook prints for Claude Code; nothing when it has nothing to say.
    output: Option<Value>,
}

/// The answer to one hook.
pub fn answer(event: &str, input: &Value) -> Option<Value> {
    match event {
        "PreToolUse" => {
            let tool = input["tool_name"].as_str()?;
            let why = crate::sessions::floor::check(tool, &input["tool_input"])?;
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": why,
                }
            }))
        }
        _ => None,
    }
}

impl Module for HarnessModule {
    fn name(&self) -> &str {
        "harness"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.tool(
                ToolDef::new(
                    "harness.hook",
                    "Answer one of Claude Code's hooks (what `vyre hook <Event>` prints).",
                ),
                move |input: HookInput, _| async move {
                    if !matches!(
                        input.event.as_str(),
                        "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "Stop"
                    ) {
                        return Err(ToolError::invalid(format!(
                            "event must be SessionStart, UserPromptSubmit, PreToolUse or Stop, not {:?}",
                            input.event
                        )));
                    }
                    Ok(HookOutput {
                        output: answer(&input.event, &input.input),
                    })
                },
            )?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_tool_use_runs_the_floor() {
        let denied = answer(
            "PreToolUse",
            &json!({ "tool_name": "Bash", "tool_input": { "command": "rm -rf /" } }),
        )
        .unwrap();
        assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(
            answer(
                "PreToolUse",
                &json!({ "tool_name": "Bash", "tool_input": { "command": "ls" } })
            )
            .is_none()
        );
        assert!(answer("Stop", &json!({})).is_none());
    }
}
