//! The Gate in a live session (spec 7.7). Before a Bash or MCP call runs, the driver's
//! PreToolUse callback asks the gate module whether it would send as the person, spend their
//! money or delete beyond the folder; if so the hook answers `ask`, and Claude Code puts the
//! call to Vyre as a permission question, which waits without a deadline. That question is
//! then held by the Gate (`gate.hold`) instead of asked: the thread waits on the person, the
//! item shows what goes where, and only `gate.approve` or `gate.reject` (through
//! `threads.release`) answers it. A check that fails asks the person as usual: never silent.

use serde_json::json;

use super::*;
use crate::kernel::contracts::provider::Question;

/// A permission question the Gate holds: Claude Code's request, the call's input (an edit is
/// merged into it here; the Gate keeps only a masked copy), the item.
pub(super) struct Gated {
    request: String,
    input: Value,
    item: String,
}

impl Actor {
    /// Have the Gate hold a permission question it would hold; false when it does not (the
    /// question is then asked as usual).
    pub(super) async fn held_by_gate(&mut self, q: &Question) -> bool {
        let gated_tool = q.tool == "Bash" || q.tool.starts_with("mcp__");
        let Some(call) = q
            .tool_use_id
            .clone()
            .filter(|_| q.kind == "tool" && gated_tool)
        else {
            return false;
        };
        let held = self
            .board
            .ctx
            .call(
                "gate.hold",
                json!({ "thread": self.thread, "call": call, "tool": q.tool, "input": q.input, "cwd": self.folder }),
            )
            .await;
        let item = match held {
            Ok(h) => match h["item"]["item"].as_str() {
                Some(item) => item.to_string(),
                None => return false,
            },
            Err(e) => {
                tracing::warn!(thread = %self.thread, error = %e, "the Gate could not hold a call; it is asked about");
                return false;
            }
        };
        self.gated.insert(
            call,
            Gated {
                request: q.request.clone(),
                input: q.input.clone(),
                item,
            },
        );
        if matches!(self.turn, TurnState::Running(_)) {
            self.state(ThreadStatus::Waiting, json!({})).await;
        }
        true
    }

    /// The person decided a held call (`gate.approve` or `gate.reject`, through
    /// `threads.release`): Claude Code is answered.
    pub(super) async fn on_release(
        &mut self,
        session: &dyn Session,
        release: Release,
    ) -> Result<()> {
        let Some(gated) = self.gated.remove(&release.call) else {
            return Err(Error::AskClosed(
                "this call no longer waits (its turn ended or was interrupted)",
            ));
        };
        let response = if release.allow {
            match (release.field, release.text) {
                (Some(field), Some(text)) => {
                    let mut input = gated.input;
                    if !input.is_object() {
                        input = json!({});
                    }
                    input[field.as_str()] = json!(text);
                    json!({ "behavior": "allow", "updatedInput": input })
                }
                _ => json!({ "behavior": "allow", "updatedInput": gated.input }),
            }
        } else {
            json!({ "behavior": "deny", "message": release.message.unwrap_or_else(|| "The person refused this in Vyre's Gate.".into()) })
        };
        session
            .answer(&gated.request, response)
            .map_err(|error| Error::Provider {
                op: Op::Answer,
                error,
            })?;
        if matches!(self.turn, TurnState::Running(_)) && !self.waits_on_person() {
            self.state(ThreadStatus::Running, json!({})).await;
        }
        Ok(())
    }

    /// Claude Code withdrew request `request` (an interrupt): if the Gate held it, it is
    /// withdrawn there. True when it was the Gate's.
    pub(super) async fn gated_withdrawn(&mut self, request: &str) -> bool {
        let Some(call) = self
            .gated
            .iter()
            .find(|(_, g)| g.request == request)
            .map(|(c, _)| c.clone())
        else {
            return false;
        };
        if let Some(g) = self.gated.remove(&call) {
            self.withdraw_gated(vec![g.item], "Claude Code withdrew the call")
                .await;
        }
        true
    }

    /// Every held call of this session is withdrawn (the turn ended, an interrupt, a stop).
    pub(super) async fn cancel_gated(&mut self, why: &str) {
        let items: Vec<String> = self.gated.drain().map(|(_, g)| g.item).collect();
        self.withdraw_gated(items, why).await;
    }

    async fn withdraw_gated(&self, items: Vec<String>, why: &str) {
        for item in items {
            if let Err(e) = self
                .board
                .ctx
                .call("gate.withdraw", json!({ "item": item, "why": why }))
                .await
            {
                tracing::warn!(thread = %self.thread, %item, error = %e, "a held item was not withdrawn");
            }
        }
    }

    /// A person is waited on: an open question or a held call.
    pub(super) fn waits_on_person(&self) -> bool {
        !self.asks.is_empty() || !self.gated.is_empty()
    }
}

/// A person's decision on a held call, as the Switchboard hands it to the actor.
pub struct Release {
    pub call: String,
    pub allow: bool,
    /// An edit: the input field replaced, and its new text.
    pub field: Option<String>,
    pub text: Option<String>,
    /// What Claude is told of a refusal.
    pub message: Option<String>,
}
