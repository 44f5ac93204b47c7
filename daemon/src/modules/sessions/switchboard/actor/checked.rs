//! What runs before a tool and before a turn ends, in a live session: the driver's PreToolUse
//! callback asks the Gate (`gate.check`, for Bash and MCP calls: would it send as the person,
//! spend their money or delete beyond the folder?) and the lessons (`learn.check`: does it break
//! what the person taught Vyre?); its Stop callback asks the lessons about the answer. Answered
//! at once; what the Gate holds waits on Claude Code's permission question (`gated.rs`).

use serde_json::json;

use super::*;

fn pre_tool(decision: &str, reason: &str) -> Value {
    json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    } })
}

impl Actor {
    /// Answer the driver's check of a call about to run.
    pub(super) async fn on_checking(
        &mut self,
        session: &dyn Session,
        request: String,
        tool: String,
        input: Value,
        cwd: Option<String>,
    ) {
        if cwd.is_some() {
            self.folder = cwd.clone();
        }
        self.changes_before_tool(&tool, &input).await;
        let ctx = &self.board.ctx;
        // The Gate: what it holds is asked about (and then held); a Gate that cannot check asks.
        let mut ask: Vec<String> = Vec::new();
        if tool == "Bash" || tool.starts_with("mcp__") {
            match ctx
                .call(
                    "gate.check",
                    json!({ "tool": tool, "input": input, "cwd": cwd, "thread": self.thread }),
                )
                .await
            {
                Ok(c) if c["denied"].is_string() => {
                    let why = c["denied"].as_str().unwrap_or_default();
                    let _ = session.answer(&request, pre_tool("deny", why));
                    return;
                }
                Ok(c) if c["held"] == true => ask.push(
                    c["reason"]
                        .as_str()
                        .unwrap_or("Vyre's Gate holds this until you have seen it.")
                        .to_string(),
                ),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(thread = %self.thread, error = %e, "the Gate could not check a call; it is asked about");
                    ask.push(format!(
                        "Vyre's Gate could not check this call ({}), so you are asked.",
                        e.message
                    ));
                }
            }
        }
        // The lessons: a broken one reminds, asks or denies.
        let lesson = ctx
            .call(
                "learn.check",
                json!({ "stage": "tool", "session": self.thread, "tool": tool, "input": input, "project": self.project, "agent": self.agent }),
            )
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(thread = %self.thread, error = %e, "the lessons could not check a call");
                json!({ "decision": "allow" })
            });
        let reason = lesson["reason"].as_str().unwrap_or_default();
        let answer = match lesson["decision"].as_str() {
            Some("deny") => pre_tool("deny", reason),
            Some("ask") => {
                ask.push(reason.to_string());
                pre_tool("ask", &ask.join(" "))
            }
            _ if !ask.is_empty() => pre_tool("ask", &ask.join(" ")),
            _ => match lesson["context"].as_str() {
                Some(context) => json!({ "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "additionalContext": context,
                } }),
                None => json!({ "continue": true }),
            },
        };
        let _ = session.answer(&request, answer);
    }

    /// Answer the driver's check of the answer before the turn ends: a broken lesson sends it
    /// back to Claude with the lesson quoted.
    pub(super) async fn on_ending(&mut self, session: &dyn Session, request: String, text: String) {
        let checked = self
            .board
            .ctx
            .call(
                "learn.check",
                json!({ "stage": "stop", "session": self.thread, "text": text, "project": self.project, "agent": self.agent }),
            )
            .await;
        let answer = match checked {
            Ok(c) if c["decision"] == "block" => json!({
                "decision": "block",
                "reason": c["reason"].as_str().unwrap_or("Your answer breaks a lesson the person taught Vyre."),
            }),
            Ok(_) => json!({}),
            Err(e) => {
                tracing::warn!(thread = %self.thread, error = %e, "the lessons could not check an answer");
                json!({})
            }
        };
        let _ = session.answer(&request, answer);
    }
}
