//! The actor: one task per live session that owns its provider session, takes the Switchboard's
//! commands, and turns what the session says into rows and events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::*;
use crate::sessions::timeline::import::exit_of;
use crate::sessions::timeline::item::{INPUT_STRING_CAP, OUTPUT_CAP, cap_strings, cut};

/// `extra`'s fields added to `payload`.
fn merge(payload: &mut Value, extra: &Value) {
    if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
}

impl Switchboard {
    /// The actor: owns one provider session until it ends.
    pub(super) async fn run(
        self: Arc<Self>,
        thread: String,
        mut session: Box<dyn Session>,
        (rx, me): (
            mpsc::UnboundedReceiver<Command>,
            mpsc::WeakUnboundedSender<Command>,
        ),
        shown: Arc<Mutex<super::Shown>>,
        (turns, project): (u64, Option<String>),
    ) {
        let mut rx = rx;
        let mut a = Actor {
            me,
            project,
            slot_waits: HashMap::new(),
            slots_held: HashMap::new(),
            tasked: Default::default(),
            thread: thread.clone(),
            turns,
            turn: None,
            own_uuid: None,
            running: false,
            asks: HashMap::new(),
            tools: HashMap::new(),
            total: 0.0,
            steered: Default::default(),
            pending_now: None,
            shown,
            turn_text: String::new(),
            limited: None,
        };
        loop {
            // Idle: no turn and no open question. A timer runs only then, once.
            let idle = (!a.running && a.asks.is_empty())
                .then_some(self.idle_after)
                .flatten();
            tokio::select! {
                _ = tokio::time::sleep(idle.unwrap_or_default()), if idle.is_some() => {
                    let _exit = session.stop(STOP_GRACE).await;
                    self.ended(&a, "idle").await;
                    return;
                }
                command = rx.recv() => {
                    let Some(command) = command else { break };
                    match command {
                        Command::Send { text, uuid, queue, images, internal, reply } => {
                            let _ = reply.send(self.on_send(&mut a, session.as_ref(), &text, &uuid, (queue, internal), images).await);
                        }
                        Command::SendNow { queued, reply } => {
                            let _ = reply.send(self.on_send_now(&mut a, session.as_ref(), queued).await);
                        }
                        Command::Answer { ask, request, response, decision, by, reply } => {
                            let _ = reply.send(self.on_answer(&mut a, session.as_ref(), &ask, &request, response, &decision, &by).await);
                        }
                        Command::Interrupt { reply } => {
                            self.cancel_asks(&mut a, "interrupted").await;
                            let _ = reply.send(session.interrupt().await.map_err(|e| ToolError::conflict("interrupt_failed", e)));
                        }
                        Command::Mode { mode, reply } => {
                            let result = session.set_mode(&mode).await.map_err(|e| ToolError::conflict("mode_failed", e));
                            if result.is_ok() {
                                self.update_run(&a.thread, "mode", Some(mode.clone())).await;
                                self.emit("mode.changed", &a.thread, json!({ "mode": mode, "turn": a.turn })).await;
                            }
                            let _ = reply.send(result);
                        }
                        Command::Model { model, reply } => {
                            let result = session.set_model(model.as_deref()).await.map_err(|e| ToolError::conflict("model_failed", e));
                            if result.is_ok() {
                                self.emit("thread.model", &a.thread, json!({ "model": model })).await;
                                self.update_run(&a.thread, "model", model).await;
                            }
                            let _ = reply.send(result);
                        }
                        Command::SlotGranted { request } => {
                            self.on_slot_granted(&mut a, session.as_ref(), &request);
                        }
                        Command::Stop { reason, idle_only, reply } => {
                            if idle_only && (a.running || !a.asks.is_empty()) {
                                let _ = reply.send(false);
                                continue;
                            }
                            self.cancel_asks(&mut a, &reason).await;
                            self.close_turn(&mut a, true).await;
                            self.abandon_turn(&mut a, json!({ "canceled": true, "reason": reason })).await;
                            let _exit = session.stop(STOP_GRACE).await;
                            self.ended(&a, &reason).await;
                            let _ = reply.send(true);
                            return;
                        }
                    }
                }
                happening = session.next() => {
                    match happening {
                        Some(h) => self.on_happening(&mut a, session.as_ref(), h).await,
                        None => {
                            let exit = session.exit().await;
                            if a.running {
                                let error = clean(&format!("Claude Code {} mid-turn: {}", exit.describe(), exit.stderr.lines().last().unwrap_or("")));
                                self.cancel_asks(&mut a, "exited").await;
                                self.close_turn(&mut a, true).await;
                                self.abandon_turn(&mut a, json!({ "error": error })).await;
                                self.state(&mut a, "failed", json!({ "error": error })).await;
                                self.state(&mut a, "idle", json!({})).await;
                            }
                            self.ended(&a, &exit.describe()).await;
                            return;
                        }
                    }
                }
            }
        }
        let exit = session.stop(STOP_GRACE).await;
        self.ended(&a, &exit.describe()).await;
    }

    pub(super) async fn state(&self, a: &mut Actor, state: &str, extra: Value) {
        *a.shown.lock().expect("state") = super::Shown::new(state);
        let mut payload = json!({ "state": state, "turn": a.turn });
        if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        self.emit("thread.state", &a.thread, payload).await;
        self.set_status(&a.thread, state).await;
    }

    /// A send: `(queue, internal)` say how it waits while a turn runs, and whether it is
    /// Vyre's own words.
    pub(super) async fn on_send(
        &self,
        a: &mut Actor,
        session: &dyn Session,
        text: &str,
        uuid: &str,
        (queue, internal): (bool, bool),
        images: Vec<Value>,
    ) -> Result<Sent, ToolError> {
        // The same send retried (a surface that lost the answer) is one turn: answer as before.
        if let Some(earlier) = self.sent_before(uuid).await? {
            return Ok(earlier);
        }
        let sent = self
            .on_send_new(a, session, text, uuid, (queue, internal), images)
            .await?;
        self.record_sent(&a.thread, &sent).await;
        Ok(sent)
    }

    /// What a send with this uuid did before, if it was made.
    pub(super) async fn sent_before(&self, uuid: &str) -> Result<Option<Sent>, ToolError> {
        let u = uuid.to_string();
        Ok(self
            .ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT uuid, via, queued FROM threads_sent WHERE uuid = ?1",
                    [&u],
                    |r| {
                        Ok(Sent {
                            uuid: r.get(0)?,
                            via: r.get(1)?,
                            queued: r.get(2)?,
                        })
                    },
                )
                .optional()?)
            })
            .await?)
    }

    pub(super) async fn record_sent(&self, thread: &str, sent: &Sent) {
        let (t, s) = (thread.to_string(), sent.clone());
        let _ = self
            .ctx
            .store()
            .write(move |tx| {
                tx.conn().execute(
                    "INSERT OR IGNORE INTO threads_sent (uuid, thread, via, queued, at) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![s.uuid, t, s.via, s.queued, crate::now_ms()],
                )?;
                Ok(())
            })
            .await;
    }

    async fn on_send_new(
        &self,
        a: &mut Actor,
        session: &dyn Session,
        text: &str,
        uuid: &str,
        (queue, internal): (bool, bool),
        images: Vec<Value>,
    ) -> Result<Sent, ToolError> {
        // What the timeline needs to say of the message beyond its words.
        let mut marks = json!({});
        if internal {
            marks["internal"] = json!(true);
        }
        if !images.is_empty() {
            marks["images"] = json!(images.len());
        }
        if a.running && queue {
            // "After this turn": Vyre's own queue, where it can be taken back or edited.
            let (t, u, x) = (a.thread.clone(), uuid.to_string(), text.to_string());
            let payload =
                json!({ "uuid": uuid, "text": clean(text), "turn": a.turn, "status": "queued" });
            let queued = self
                .ctx
                .store()
                .write(move |tx| {
                    let now = crate::now_ms();
                    tx.conn().execute(
                        "INSERT INTO threads_inbox (thread, uuid, text, status, created_at) VALUES (?1, ?2, ?3, 'queued', ?4)",
                        params![t, u, x, now],
                    )?;
                    let queued = tx.conn().last_insert_rowid();
                    tx.conn().execute(
                        "INSERT OR IGNORE INTO threads_sent (uuid, thread, via, queued, at) VALUES (?1, ?2, 'queued', ?3, ?4)",
                        params![u, t, queued, now],
                    )?;
                    let mut payload = payload;
                    payload["queued"] = json!(queued);
                    crate::sessions::timeline::record(
                        tx,
                        NewEvent::new("thread.queued", payload).thread(t),
                    )?;
                    Ok(queued)
                })
                .await?;
            return Ok(Sent {
                uuid: uuid.to_string(),
                via: "queued".into(),
                queued: Some(queued),
            });
        }
        let mut blocks = images;
        blocks.push(json!({ "type": "text", "text": text }));
        let content = Value::Array(blocks);
        if a.running {
            // Recorded first, as for a turn below.
            let (t, u) = (a.thread.clone(), uuid.to_string());
            let mut payload =
                json!({ "text": clean(text), "uuid": uuid, "via": "steer", "turn": a.turn });
            merge(&mut payload, &marks);
            self.try_emit_with(
                "thread.sent",
                &a.thread,
                payload,
                move |c| {
                    c.execute(
                        "INSERT OR IGNORE INTO threads_sent (uuid, thread, via, queued, at) VALUES (?1, ?2, 'steer', NULL, ?3)",
                        params![u, t, crate::now_ms()],
                    )?;
                    Ok(true)
                },
            )
            .await?;
            session
                .send(content, uuid, Some("next"))
                .map_err(|e| ToolError::conflict("not_live", e))?;
            a.steered_pending(uuid, text);
            return Ok(Sent {
                uuid: uuid.to_string(),
                via: "steer".into(),
                queued: None,
            });
        }
        // The turn is recorded before the session has the words: a store that cannot write (a
        // full disk) refuses the send clearly, and a crash in between ends a recorded turn.
        let before = (a.turns, a.turn.clone());
        if let Err(e) = self.begin_turn_as(a, text, uuid, marks).await {
            (a.turns, a.turn) = before;
            (a.running, a.own_uuid) = (false, None);
            return Err(e.into());
        }
        if let Err(e) = session.send(content, uuid, None) {
            let error = clean(&format!("the session did not take the message: {e}"));
            self.abandon_turn(a, json!({ "error": error })).await;
            self.state(a, "idle", json!({})).await;
            return Err(ToolError::conflict("not_live", e));
        }
        Ok(Sent {
            uuid: uuid.to_string(),
            via: "turn".into(),
            queued: None,
        })
    }

    /// A turn begins for a message already handed to the session.
    pub(super) async fn begin_turn(&self, a: &mut Actor, text: &str, uuid: &str) {
        if let Err(e) = self.begin_turn_as(a, text, uuid, json!({})).await {
            tracing::warn!(thread = %a.thread, error = %e, "a turn began unrecorded");
        }
    }

    /// A turn; `marks` go into its `thread.turn` (`steered` when it is steered words the
    /// previous turn never reached, `internal` for Vyre's own words, `images`).
    pub(super) async fn begin_turn_as(
        &self,
        a: &mut Actor,
        text: &str,
        uuid: &str,
        marks: Value,
    ) -> Result<(), StoreError> {
        let mut payload = a.open_turn(text, uuid);
        merge(&mut payload, &marks);
        // One transaction: after a crash, a turn that began is running (so the restart ends
        // it) and its send is recorded (so the same send retried is this turn, not another).
        let (t, n, u) = (a.thread.clone(), a.turns, uuid.to_string());
        let written = self
            .try_emit_with("thread.turn", &a.thread, payload, move |c| {
                turn_rows(c, &t, n, &u)?;
                Ok(true)
            })
            .await;
        written?;
        self.state(a, "running", json!({})).await;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn on_answer(
        &self,
        a: &mut Actor,
        session: &dyn Session,
        ask: &str,
        request: &str,
        response: Value,
        decision: &str,
        by: &str,
    ) -> Result<(), ToolError> {
        if a.asks.remove(request).is_none() {
            return Err(ToolError::conflict(
                "ask_closed",
                "this question is no longer open",
            ));
        }
        let answers = response
            .get("updatedInput")
            .and_then(|u| u.get("answers"))
            .map(super::clean_value);
        // What a deny told Claude, when the person said why.
        let message = (decision == "deny")
            .then(|| response["message"].as_str().map(clean))
            .flatten();
        // An "always" that switches the session's mode (Claude Code suggests Accept edits for a
        // file): the CLI switches with it, so the thread's mode says so too.
        let switched = response["updatedPermissions"]
            .as_array()
            .and_then(|ps| {
                ps.iter()
                    .rev()
                    .find(|p| p["type"] == "setMode")
                    .and_then(|p| p["mode"].as_str())
            })
            .map(String::from);
        session
            .answer(request, response)
            .map_err(|e| ToolError::conflict("ask_closed", e))?;
        // What was chosen, for every surface (AskUserQuestion's answers; none for a permission).
        let mut payload = json!({ "ask": ask, "decision": decision, "turn": a.turn });
        if let Some(answers) = answers {
            payload["answers"] = answers;
        }
        if let Some(message) = message {
            payload["message"] = json!(message);
        }
        let (id, d, b) = (ask.to_string(), decision.to_string(), by.to_string());
        self.emit_with("ask.answered", &a.thread, payload, move |c| {
            c.execute(
                "UPDATE threads_asks SET status = 'answered', decision = ?1, answered_by = ?2, answered_at = ?3 WHERE id = ?4",
                params![d, b, crate::now_ms(), id],
            )?;
            Ok(true)
        })
        .await;
        if let Some(mode) = switched {
            self.update_run(&a.thread, "mode", Some(mode.clone())).await;
            self.emit(
                "mode.changed",
                &a.thread,
                json!({ "mode": mode, "turn": a.turn, "by": "always" }),
            )
            .await;
        }
        if a.asks.is_empty() && a.running {
            self.state(a, "running", json!({})).await;
        }
        Ok(())
    }

    pub(super) async fn on_happening(
        self: &Arc<Self>,
        a: &mut Actor,
        session: &dyn Session,
        h: Happening,
    ) {
        match h {
            Happening::TurnBegan { .. } => {}
            Happening::Text {
                message,
                block,
                delta,
                done,
                reasoning,
            } => {
                let mut p = json!({ "message": message, "block": block, "turn": a.turn });
                if let Some(d) = delta {
                    p["delta"] = json!(clean(&d));
                }
                if done {
                    p["done"] = json!(true);
                }
                if reasoning {
                    p["kind"] = json!("reasoning");
                }
                self.emit("thread.text", &a.thread, p).await;
            }
            Happening::ToolStarted {
                call,
                name,
                summary,
                block,
                input,
                parent,
            } => {
                a.tools.insert(call.clone(), name.clone());
                let (input, input_truncated) = cap_strings(&input, INPUT_STRING_CAP);
                let mut p = json!({ "id": call, "call": call, "name": name, "phase": "started", "status": "running", "summary": clean(&summary), "block": block, "turn": a.turn, "input": super::clean_value(&input) });
                if input_truncated {
                    p["input_truncated"] = json!(true);
                }
                if let Some(parent) = parent {
                    p["parent"] = json!(parent);
                }
                self.emit("thread.tool", &a.thread, p).await;
            }
            Happening::ToolEnded {
                call,
                failed,
                output,
                interrupted,
            } => {
                // A subagent that became a task keeps its slot until the task ends.
                if !a.tasked.contains(&call) {
                    self.on_call_over(a, &call).await;
                }
                let name = a.tools.remove(&call).unwrap_or_default();
                let status = if failed { "failed" } else { "completed" };
                let (kept, was_cut) = cut(&output, OUTPUT_CAP);
                let mut p = json!({ "id": call, "call": call, "name": name, "phase": "done", "status": status, "turn": a.turn, "output": clean(&kept), "output_bytes": output.len() });
                if was_cut {
                    p["output_truncated"] = json!(true);
                }
                if interrupted {
                    p["interrupted"] = json!(true);
                }
                if let Some(exit) = exit_of(&name, failed, &output) {
                    p["exit"] = json!(exit);
                }
                self.emit("thread.tool", &a.thread, p).await;
            }
            Happening::Asked(q) => match crate::floor::check(&q.tool, &q.input) {
                // The floor refuses without asking anyone.
                Some(why) => {
                    let _ =
                        session.answer(&q.request, json!({ "behavior": "deny", "message": why }));
                    self.emit(
                        "thread.denied",
                        &a.thread,
                        json!({ "tool": q.tool, "call": q.tool_use_id, "reason": clean(&why), "by": "floor", "turn": a.turn }),
                    )
                    .await;
                }
                None => self.on_asked(a, session, q).await,
            },
            Happening::Withdrawn { request } => {
                if let Some(ask) = a.asks.remove(&request) {
                    self.close_ask(a, &ask, "cancelled").await;
                } else {
                    self.on_slot_withdrawn(a, &request).await;
                }
            }
            Happening::SlotWanted { request, call } => {
                self.on_slot_wanted(a, session, request, call).await;
            }
            Happening::TaskStarted { call } => {
                a.tasked.insert(call);
            }
            Happening::TaskEnded { call } => self.on_call_over(a, &call).await,
            Happening::Steered { uuid } => {
                if a.own_uuid.as_deref() != Some(uuid.as_str()) && a.steered.remove(&uuid).is_some()
                {
                    self.emit(
                        "thread.steered",
                        &a.thread,
                        json!({ "uuid": uuid, "turn": a.turn }),
                    )
                    .await;
                }
            }
            Happening::Limit(info) => {
                let limit = &info["rate_limit_info"];
                if limit["status"] == "rejected" {
                    a.limited = Some(limit["resetsAt"].as_i64().map(|s| s * 1000));
                }
                self.emit(
                    "thread.limit",
                    &a.thread,
                    json!({ "info": info, "turn": a.turn }),
                )
                .await;
            }
            Happening::Retry {
                attempt,
                max_retries,
                delay_ms,
                status,
                error,
            } => {
                self.emit(
                    "thread.retry",
                    &a.thread,
                    json!({ "attempt": attempt, "max_retries": max_retries, "delay_ms": delay_ms, "status": status, "error": clean(&error), "turn": a.turn }),
                )
                .await;
            }
            // A result with no turn running (after an interrupt, say) is stale: drop it.
            Happening::Finished { .. } if !a.running => {}
            Happening::Finished {
                ok,
                canceled,
                error,
                total_cost_usd,
                tokens,
                ..
            } => {
                let cost = (total_cost_usd - a.total).max(0.0);
                a.total = total_cost_usd;
                self.cancel_asks(a, "turn ended").await;
                self.close_turn(a, canceled).await;
                self.emit("thread.usage", &a.thread, json!({ "tokens": tokens, "cost_usd": cost, "total_cost_usd": total_cost_usd, "turn": a.turn })).await;
                let mut p = json!({ "ok": ok, "cost_usd": cost, "total_cost_usd": total_cost_usd, "tokens": tokens, "turn": a.turn });
                if canceled {
                    p["canceled"] = json!(true);
                    p["reason"] = json!("interrupt");
                }
                if let Some(e) = error {
                    p["error"] = json!(clean(&e));
                }
                let (t, total) = (a.thread.clone(), total_cost_usd);
                self.emit_with("thread.finished", &a.thread, p, move |c| {
                    c.execute(
                        "UPDATE threads_runs SET total_cost_usd = ?1, status = 'idle', history = 1, updated_at = ?2 WHERE id = ?3",
                        params![total, crate::now_ms(), t],
                    )?;
                    Ok(true)
                })
                .await;
                a.running = false;
                a.own_uuid = None;
                if !canceled && a.limited.is_none() && !a.steered.is_empty() {
                    // Steered words the turn never reached (it had no step left to take them
                    // in): Claude answers them next, so they are the next turn, marked
                    // `steered` (ADR 0030), and a queued message waits for it.
                    let mut late: Vec<(String, String)> = a.steered.drain().collect();
                    late.sort();
                    let text = late
                        .iter()
                        .map(|(_, t)| t.as_str())
                        .collect::<Vec<_>>()
                        .join("\n");
                    if let Err(e) = self
                        .begin_turn_as(a, &text, &late[0].0, json!({ "steered": true }))
                        .await
                    {
                        tracing::warn!(thread = %a.thread, error = %e, "a turn began unrecorded");
                    }
                    return;
                }
                self.state(a, "idle", json!({})).await;
                if let Some(resets) = a.limited.take() {
                    // Another task: falling back stops this very actor.
                    let (me, t, text) = (self.clone(), a.thread.clone(), a.turn_text.clone());
                    self.ctx.spawn(me.fall_back(t, text, resets));
                    return;
                }
                self.next_turn(a, session).await;
            }
            Happening::Garbage(line) => {
                tracing::warn!(thread = %a.thread, "skipped a line the session wrote that is not JSON: {}", line.chars().take(120).collect::<String>());
            }
        }
    }

    pub(super) async fn on_asked(&self, a: &mut Actor, session: &dyn Session, q: Question) {
        let ask = crate::ids::random_hex(9);
        let summary = clean(&q.description.clone().unwrap_or_else(|| q.tool.clone()));
        let (id, t, turn) = (ask.clone(), a.thread.clone(), a.turn.clone());
        let q2 = q.clone();
        let sum = summary.clone();
        let input = super::clean_value(&q.input);
        let mut raised = json!({ "ask": ask, "kind": q.kind, "tool": q.tool, "summary": summary, "call": q.tool_use_id, "turn": a.turn, "input": input });
        // What a person needs before answering (issue 18): what "always" writes, and a warning.
        super::super::always::annotate(&mut raised, &q.tool, &q.input, &q.suggestions);
        let raised = NewEvent::new("ask.raised", raised).thread(a.thread.clone());
        let stored: Result<(), StoreError> = self
            .ctx
            .store()
            .write(move |tx| {
                tx.conn().execute(
                    "INSERT INTO threads_asks (id, thread, turn, request, kind, tool, summary, input, suggestions, status, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'open', ?10)",
                    params![id, t, turn, q2.request, q2.kind, q2.tool, sum, q2.input.to_string(), q2.suggestions.to_string(), crate::now_ms()],
                )?;
                crate::sessions::timeline::record(tx, raised)?;
                Ok(())
            })
            .await;
        if let Err(e) = stored {
            // Unrecorded, no one could answer it: the turn would wait for ever.
            tracing::error!(error = %e, "cannot record an ask; denying it");
            let why = "Vyre could not record this question (its store refused the write), so no one can answer it; try again.";
            let _ = session.answer(&q.request, json!({ "behavior": "deny", "message": why }));
            return;
        }
        a.asks.insert(q.request.clone(), ask.clone());
        // "waiting" is a turn's state: a question that comes in after its turn ended (the CLI's
        // request racing a result) stays answerable without claiming a turn that is not there,
        // which a restart would then end a second time.
        if a.running {
            self.state(a, "waiting", json!({})).await;
        }
    }

    pub(super) async fn close_ask(&self, a: &Actor, ask: &str, why: &str) {
        let id = ask.to_string();
        self.emit_with(
            "ask.answered",
            &a.thread,
            json!({ "ask": ask, "decision": "cancelled", "reason": why, "turn": a.turn }),
            move |c| {
                let changed = c.execute(
                    "UPDATE threads_asks SET status = 'cancelled', decision = 'cancelled', answered_at = ?1 WHERE id = ?2 AND status = 'open'",
                    params![crate::now_ms(), id],
                )?;
                Ok(changed > 0)
            },
        )
        .await;
    }

    pub(super) async fn cancel_asks(&self, a: &mut Actor, why: &str) {
        let open: Vec<String> = a.asks.drain().map(|(_, ask)| ask).collect();
        for ask in open {
            self.close_ask(a, &ask, why).await;
        }
    }

    /// The running turn ends without its result (the session is stopped, or its process is
    /// gone): `thread.finished` with `ok: false` and `extra` (why), so every turn ends once.
    pub(super) async fn abandon_turn(&self, a: &mut Actor, extra: Value) {
        if !a.running {
            return;
        }
        a.running = false;
        a.own_uuid = None;
        let mut payload = json!({ "ok": false, "turn": a.turn });
        if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        let t = a.thread.clone();
        self.emit_with("thread.finished", &a.thread, payload, move |c| {
            c.execute(
                "UPDATE threads_runs SET status = 'idle', updated_at = ?1 WHERE id = ?2",
                params![crate::now_ms(), t],
            )?;
            Ok(true)
        })
        .await;
    }

    /// Tool calls the turn left open end as canceled.
    pub(super) async fn close_turn(&self, a: &mut Actor, canceled: bool) {
        let open: Vec<(String, String)> = a.tools.drain().collect();
        for (call, name) in open {
            let status = if canceled { "canceled" } else { "completed" };
            self.emit("thread.tool", &a.thread, json!({ "id": call, "call": call, "name": name, "phase": "done", "status": status, "turn": a.turn })).await;
        }
    }

    pub(super) async fn ended(&self, a: &Actor, reason: &str) {
        // Whatever the session started and detached from its group goes too.
        let thread = a.thread.clone();
        let swept = tokio::task::spawn_blocking(move || {
            crate::sessions::spawn::kill_tagged("VYRE_THREAD", &thread)
        })
        .await
        .unwrap_or(0);
        if swept > 0 {
            tracing::info!(thread = %a.thread, swept, "ended processes the session had detached");
        }
        self.live.lock().expect("live").remove(&a.thread);
        self.ctx.session_processes().unregister(&a.thread);
        self.close_socket(&a.thread);
        self.release_slots(&a.thread, reason).await;
        *a.shown.lock().expect("state") = super::Shown::new("stopped");
        self.account_transcript(&a.thread).await;
        let (t, r) = (a.thread.clone(), reason.to_string());
        self.emit_with(
            "thread.stopped",
            &a.thread,
            json!({ "reason": reason }),
            move |c| {
                c.execute(
                    "UPDATE threads_runs SET status = 'stopped', stopped_reason = ?1, updated_at = ?2 WHERE id = ?3",
                    params![r, crate::now_ms(), t],
                )?;
                Ok(true)
            },
        )
        .await;
    }
}

/// The rows of a turn's start, written with its `thread.turn`: the thread's turn count and state,
/// and the send's record.
pub(super) fn turn_rows(
    c: &rusqlite::Connection,
    thread: &str,
    turns: u64,
    uuid: &str,
) -> rusqlite::Result<()> {
    let now = crate::now_ms();
    c.execute(
        "UPDATE threads_runs SET turns = ?1, status = 'running', updated_at = ?2 WHERE id = ?3",
        params![turns as i64, now, thread],
    )?;
    c.execute(
        "INSERT OR IGNORE INTO threads_sent (uuid, thread, via, queued, at) VALUES (?1, ?2, 'turn', NULL, ?3)",
        params![uuid, thread, now],
    )?;
    Ok(())
}

pub(super) struct Actor {
    pub(super) thread: String,
    /// This actor's own command channel, for tasks it starts (a subagent waiting for a slot).
    pub(super) me: mpsc::WeakUnboundedSender<Command>,
    pub(super) project: Option<String>,
    /// Subagent calls waiting for a slot: the hook request → (slot, call).
    pub(super) slot_waits: HashMap<String, (String, String)>,
    /// Slots held by subagent calls: call → slot.
    pub(super) slots_held: HashMap<String, String>,
    /// Calls that became background tasks.
    pub(super) tasked: std::collections::HashSet<String>,
    pub(super) turns: u64,
    pub(super) turn: Option<String>,
    pub(super) own_uuid: Option<String>,
    pub(super) running: bool,
    /// Open asks: the provider's request id → the ask id.
    pub(super) asks: HashMap<String, String>,
    /// Tool calls started and not yet done: call → name.
    pub(super) tools: HashMap<String, String>,
    pub(super) total: f64,
    /// Steered messages not yet taken in.
    pub(super) steered: std::collections::HashMap<String, String>,
    /// A queued message sent "now": it runs when the cut-short turn reports its result.
    pub(super) pending_now: Option<(String, String)>,
    pub(super) shown: Arc<Mutex<super::Shown>>,
    /// The words of the running turn, to run again on the fallback key.
    pub(super) turn_text: String,
    /// The subscription's limit refused this turn; when it resets (ms), if said.
    pub(super) limited: Option<Option<i64>>,
}

impl Actor {
    /// The next turn runs, for message `uuid`; the payload of its `thread.turn`.
    pub(super) fn open_turn(&mut self, text: &str, uuid: &str) -> Value {
        self.turns += 1;
        let turn = format!("{}:{}", self.thread, self.turns);
        self.turn = Some(turn.clone());
        self.own_uuid = Some(uuid.to_string());
        self.running = true;
        self.turn_text = text.to_string();
        json!({ "turn": turn, "uuid": uuid, "text": clean(text) })
    }

    /// A message sent into the running turn, waiting for the CLI to take it in.
    pub(super) fn steered_pending(&mut self, uuid: &str, text: &str) {
        self.steered.insert(uuid.to_string(), text.to_string());
    }
}
