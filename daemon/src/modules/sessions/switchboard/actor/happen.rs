//! What the session says, as events: text, tool calls, asks (the floor first), steers, limits,
//! retries and a turn's result.

use serde_json::json;

use super::*;
use crate::kernel::contracts::provider::Happening;
use crate::modules::sessions::switchboard::types::clean_value;
use crate::modules::sessions::timeline::import::exit_of;
use crate::modules::sessions::timeline::item::{INPUT_STRING_CAP, OUTPUT_CAP, cap_strings, cut};

impl Actor {
    pub(super) async fn on_happening(&mut self, session: &dyn Session, h: Happening) {
        let answered = super::changed::answers(&h);
        self.happen(session, h).await;
        // After the happening is told: the first delta goes out before git starts.
        if answered {
            self.changes_start();
        }
    }

    async fn happen(&mut self, session: &dyn Session, h: Happening) {
        match h {
            Happening::TurnBegan { .. } => {}
            Happening::Text {
                message,
                block,
                delta,
                done,
                reasoning,
            } => {
                let mut p = json!({ "message": message, "block": block, "turn": self.last });
                if let Some(d) = delta {
                    p["delta"] = json!(clean(&d));
                }
                if done {
                    p["done"] = json!(true);
                }
                if reasoning {
                    p["kind"] = json!("reasoning");
                }
                self.emit("thread.text", p).await;
            }
            Happening::ToolStarted {
                call,
                name,
                summary,
                block,
                input,
                parent,
            } => {
                self.calls.insert(call.clone(), name.clone());
                let (input, input_truncated) = cap_strings(&input, INPUT_STRING_CAP);
                let mut p = json!({ "id": call, "call": call, "name": name, "phase": "started", "status": "running", "summary": clean(&summary), "block": block, "turn": self.last, "input": clean_value(&input) });
                if input_truncated {
                    p["input_truncated"] = json!(true);
                }
                if let Some(parent) = parent {
                    p["parent"] = json!(parent);
                }
                self.emit("thread.tool", p).await;
            }
            Happening::ToolEnded {
                call,
                failed,
                output,
                interrupted,
            } => {
                // A subagent that became a task keeps its slot until the task ends.
                if !self.slots.tasked.contains(&call) {
                    self.on_call_over(&call).await;
                }
                let name = self.calls.remove(&call).unwrap_or_default();
                let status = if failed { "failed" } else { "completed" };
                let (kept, was_cut) = cut(&output, OUTPUT_CAP);
                let mut p = json!({ "id": call, "call": call, "name": name, "phase": "done", "status": status, "turn": self.last, "output": clean(&kept), "output_bytes": output.len() });
                if was_cut {
                    p["output_truncated"] = json!(true);
                }
                if interrupted {
                    p["interrupted"] = json!(true);
                }
                if let Some(exit) = exit_of(&name, failed, &output) {
                    p["exit"] = json!(exit);
                }
                self.emit("thread.tool", p).await;
            }
            Happening::Asked(q) => match crate::kernel::floor::check(&q.tool, &q.input) {
                // The floor refuses without asking anyone.
                Some(why) => {
                    let _ =
                        session.answer(&q.request, json!({ "behavior": "deny", "message": why }));
                    self.emit(
                        "thread.denied",
                        json!({ "tool": q.tool, "call": q.tool_use_id, "reason": clean(&why), "by": "floor", "turn": self.last }),
                    )
                    .await;
                }
                None => {
                    // An answer may let the call run at once (a rule said always): the turn's
                    // first snapshot comes first, as before a checked tool.
                    self.changes_first_snapshot().await;
                    if !self.held_by_gate(&q).await {
                        self.on_asked(session, q).await;
                    }
                }
            },
            Happening::Checking {
                request,
                tool,
                input,
                cwd,
                ..
            } => self.on_checking(session, request, tool, input, cwd).await,
            Happening::Ending { request, text, .. } => {
                self.on_ending(session, request, text).await;
            }
            Happening::Withdrawn { request } => {
                if let Some(ask) = self.asks.remove(&request) {
                    self.close_ask(&ask, "cancelled").await;
                } else if self.gated_withdrawn(&request).await {
                } else {
                    self.on_slot_withdrawn(&request).await;
                }
            }
            Happening::SlotWanted { request, call } => {
                self.on_slot_wanted(session, request, call).await;
            }
            Happening::TaskStarted { call } => {
                self.slots.tasked.insert(call);
            }
            Happening::TaskEnded { call } => self.on_call_over(&call).await,
            Happening::Steered { uuid } => {
                if self.own_uuid() != Some(uuid.as_str()) && self.steered.remove(&uuid).is_some() {
                    self.emit("thread.steered", json!({ "uuid": uuid, "turn": self.last }))
                        .await;
                }
            }
            Happening::Limit(info) => {
                let limit = &info["rate_limit_info"];
                if limit["status"] == "rejected" {
                    self.limited(limit["resetsAt"].as_i64().map(|s| s * 1000));
                }
                self.emit("thread.limit", json!({ "info": info, "turn": self.last }))
                    .await;
            }
            Happening::Mode { mode } => self.on_mode(&mode).await,
            Happening::Retry {
                attempt,
                max_retries,
                delay_ms,
                status,
                error,
            } => {
                self.emit(
                    "thread.retry",
                    json!({ "attempt": attempt, "max_retries": max_retries, "delay_ms": delay_ms, "status": status, "error": clean(&error), "turn": self.last }),
                )
                .await;
            }
            // A result with no turn running (after an interrupt, say) is stale: drop it.
            Happening::Finished { .. } if matches!(self.turn, TurnState::Idle) => {}
            Happening::Finished {
                ok,
                canceled,
                error,
                total_cost_usd,
                tokens,
                ..
            } => {
                self.finished(session, (ok, canceled, error), total_cost_usd, tokens)
                    .await;
            }
            Happening::Garbage(line) => {
                tracing::warn!(thread = %self.thread, "skipped a line the session wrote that is not JSON: {}", line.chars().take(120).collect::<String>());
            }
        }
    }
}

impl Actor {
    /// Claude Code says which mode it is in. When that is not what the thread's row says (an
    /// "always" that carried a mode, the model entering plan mode or leaving it approved), the
    /// row follows and every surface is told, so no chip shows a mode the session is not in.
    /// A mode Vyre does not offer (auto, dontAsk) is logged: the row keeps the last it knew.
    async fn on_mode(&mut self, said: &str) {
        let Ok(mode) = said.parse::<PermissionMode>() else {
            tracing::warn!(thread = %self.thread, mode = said, "Claude Code is in a mode Vyre does not offer; the thread's mode is left as it was");
            return;
        };
        let by = match self.mode_by.take() {
            Some((asked, by)) if asked == mode => by,
            _ => "claude",
        };
        let (t, turn) = (self.thread.clone(), self.last.clone());
        self.record(move |tx| {
            if rows::runs::mode(tx.conn(), &t)? == Some(mode) {
                return Ok(());
            }
            rows::runs::set_mode(tx.conn(), &t, mode)?;
            tell(
                tx,
                &t,
                "mode.changed",
                json!({ "mode": mode, "turn": turn, "by": by }),
            )
        })
        .await;
    }
}
