//! Vyre's own queue of "after this turn" messages (`threads_inbox`): they wait for the running
//! turn's end, and can be taken back, edited, or sent at once until then.

use rusqlite::{OptionalExtension, params};
use serde_json::json;

use super::*;

impl Switchboard {
    /// A queued message, sent at once: it cuts the running turn short and runs next.
    pub(super) async fn on_send_now(
        &self,
        a: &mut Actor,
        session: &dyn Session,
        queued: i64,
    ) -> Result<Sent, ToolError> {
        let (uuid, text) = self
            .take_queued(&a.thread, Some(queued))
            .await?
            .ok_or_else(|| {
                ToolError::conflict(
                    "not_queued",
                    "that message is no longer queued (sent, taken back, or never there)",
                )
            })?;
        let content = json!([{ "type": "text", "text": text }]);
        if a.running {
            session
                .send(content, &uuid, Some("now"))
                .map_err(|e| ToolError::conflict("not_live", e))?;
            a.pending_now = Some((uuid.clone(), text.clone()));
        } else {
            session
                .send(content, &uuid, None)
                .map_err(|e| ToolError::conflict("not_live", e))?;
        }
        self.emit(
            "thread.unqueued",
            &a.thread,
            json!({ "queued": queued, "uuid": uuid, "reason": "taken" }),
        )
        .await;
        self.emit("thread.sent", &a.thread, json!({ "text": clean(&text), "uuid": uuid, "via": "now", "queued": queued, "turn": a.turn })).await;
        if !a.running {
            self.begin_turn(a, &text, &uuid).await;
        }
        Ok(Sent {
            uuid,
            via: "now".into(),
            queued: Some(queued),
        })
    }

    /// Take a queued row (the given one, or the oldest): `(uuid, text)` when it was still queued.
    pub(super) async fn take_queued(
        &self,
        thread: &str,
        id: Option<i64>,
    ) -> Result<Option<(String, String)>, ToolError> {
        let t = thread.to_string();
        Ok(self
            .ctx
            .store()
            .write(move |tx| {
                let row = tx
                    .conn()
                    .query_row(
                        "SELECT id, uuid, text FROM threads_inbox WHERE thread = ?1 AND status = 'queued' AND (?2 IS NULL OR id = ?2) ORDER BY id LIMIT 1",
                        params![t, id],
                        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)),
                    )
                    .optional()?;
                let Some((id, uuid, text)) = row else { return Ok(None) };
                tx.conn().execute("UPDATE threads_inbox SET status = 'taken' WHERE id = ?1", [id])?;
                Ok(Some((uuid, text)))
            })
            .await?)
    }

    /// At a turn's end: a message sent "now" runs; else the oldest queued one is handed over.
    pub(super) async fn next_turn(&self, a: &mut Actor, session: &dyn Session) {
        if let Some((uuid, text)) = a.pending_now.take() {
            self.begin_turn(a, &text, &uuid).await;
            return;
        }
        // Taking the message from the queue and its turn's start commit together, so a crash
        // never loses a message that left the queue: its turn is there, and a restart ends it.
        let t = a.thread.clone();
        let row = self
            .ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT id, uuid, text FROM threads_inbox WHERE thread = ?1 AND status = 'queued' ORDER BY id LIMIT 1",
                    [t],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)),
                )
                .optional()?)
            })
            .await;
        let (queued, uuid, text) = match row {
            Ok(Some(row)) => row,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(thread = %a.thread, error = %e, "cannot read the queue");
                return;
            }
        };
        let (turns, turn) = (a.turns + 1, format!("{}:{}", a.thread, a.turns + 1));
        let events = [
            NewEvent::new(
                "thread.unqueued",
                json!({ "queued": queued, "uuid": uuid, "reason": "taken" }),
            ),
            NewEvent::new(
                "thread.sent",
                json!({ "text": clean(&text), "uuid": uuid, "via": "turn", "queued": queued }),
            ),
            NewEvent::new(
                "thread.turn",
                json!({ "turn": turn, "uuid": uuid, "text": clean(&text) }),
            ),
        ]
        .map(|e| e.thread(a.thread.clone()));
        let (t, u) = (a.thread.clone(), uuid.clone());
        let taken = self
            .ctx
            .store()
            .write(move |tx| {
                let taken = tx.conn().execute(
                    "UPDATE threads_inbox SET status = 'taken' WHERE id = ?1 AND status = 'queued'",
                    [queued],
                )?;
                if taken == 0 {
                    // Taken back just now.
                    return Ok(false);
                }
                super::actor::turn_rows(tx.conn(), &t, turns, &u)?;
                for event in events {
                    crate::sessions::timeline::record(tx, event)?;
                }
                Ok(true)
            })
            .await;
        match taken {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(thread = %a.thread, error = %e, "cannot hand over a queued message");
                return;
            }
        }
        a.open_turn(&text, &uuid);
        if let Err(e) = session.send(json!([{ "type": "text", "text": text }]), &uuid, None) {
            // The process is gone: its end closes this turn.
            tracing::warn!(thread = %a.thread, error = %e, "cannot hand over a queued message");
        }
        self.state(a, "running", json!({})).await;
    }

    /// Take a queued message back before it is handed over.
    pub async fn unqueue(&self, queued: i64) -> Result<(), ToolError> {
        let row = self
            .ctx
            .store()
            .write(move |tx| {
                let row = tx
                    .conn()
                    .query_row("SELECT thread, uuid FROM threads_inbox WHERE id = ?1 AND status = 'queued'", [queued], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                    })
                    .optional()?;
                if row.is_some() {
                    tx.conn().execute("UPDATE threads_inbox SET status = 'unqueued' WHERE id = ?1", [queued])?;
                }
                Ok(row)
            })
            .await?;
        let (thread, uuid) = row
            .ok_or_else(|| ToolError::conflict("not_queued", "that message is no longer queued"))?;
        self.emit(
            "thread.unqueued",
            &thread,
            json!({ "queued": queued, "uuid": uuid, "reason": "unqueued" }),
        )
        .await;
        Ok(())
    }

    /// Change the words of a queued message.
    pub async fn edit(&self, queued: i64, text: &str) -> Result<(), ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::invalid("text must not be empty"));
        }
        let x = text.to_string();
        let row = self
            .ctx
            .store()
            .write(move |tx| {
                let n = tx.conn().execute(
                    "UPDATE threads_inbox SET text = ?1 WHERE id = ?2 AND status = 'queued'",
                    params![x, queued],
                )?;
                if n == 0 {
                    return Ok(None);
                }
                Ok(Some(tx.conn().query_row(
                    "SELECT thread, uuid FROM threads_inbox WHERE id = ?1",
                    [queued],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
                )?))
            })
            .await?;
        let (thread, uuid) = row
            .ok_or_else(|| ToolError::conflict("not_queued", "that message is no longer queued"))?;
        self.emit(
            "thread.queued",
            &thread,
            json!({ "queued": queued, "uuid": uuid, "text": clean(text), "edited": true, "status": "queued" }),
        )
        .await;
        Ok(())
    }

    /// Send a queued message at once.
    pub async fn send_now(&self, queued: i64) -> Result<Sent, ToolError> {
        let thread: Option<String> = self
            .ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT thread FROM threads_inbox WHERE id = ?1",
                    [queued],
                    |r| r.get(0),
                )
                .optional()?)
            })
            .await?;
        let thread = thread.ok_or_else(|| {
            ToolError::not_found("unknown_queued", "there is no such queued message")
        })?;
        let live = self.live(&thread).ok_or_else(|| {
            ToolError::conflict("not_live", "its thread's session is not running")
        })?;
        let (reply, answer) = oneshot::channel();
        live.tx
            .send(Command::SendNow { queued, reply })
            .map_err(|_| ToolError::conflict("not_live", "the session just ended"))?;
        answer
            .await
            .map_err(|_| ToolError::conflict("not_live", "the session just ended"))?
    }
}
