//! A thread's turns: a send (a new turn, steered into the running one, queued for its end), a
//! turn's start (recorded before the session has the words: a store that cannot write refuses
//! the send, and a crash in between ends a recorded turn), its end, and what runs next.

use serde_json::{Value, json};

use super::*;
use crate::kernel::contracts::provider::{Priority, ProviderError};
use crate::kernel::store::{StoreError, WriteTx};
use crate::modules::sessions::switchboard::handle::Message;
use crate::modules::sessions::switchboard::rows::inbox::Waiting;
use crate::modules::sessions::switchboard::types::{InboxStatus, Sent, Via};

/// Where the thread's turn stands. Waiting on a person is a running turn with open asks
/// ([`Actor::status`]); interrupting is a running turn until its result comes.
pub(in crate::modules::sessions::switchboard) enum TurnState {
    /// No turn runs.
    Idle,
    /// Turn `Actor::last` runs.
    Running(Turn),
}

pub(in crate::modules::sessions::switchboard) struct Turn {
    /// The message that began it (the CLI's echo of it is not a steer).
    uuid: String,
    /// Its words, to run again on the fallback key.
    text: String,
    /// A queued message sent "now": it runs when this cut-short turn reports its result.
    then: Option<(String, String)>,
    /// The subscription's limit refused it.
    limited: Option<Limited>,
}

/// The subscription's limit was reached, and when it resets (ms), if the CLI said.
pub(super) struct Limited {
    resets_at: Option<i64>,
}

/// The rows and events of a turn's start, written inside one change.
struct Beginning {
    thread: String,
    turns: u64,
    uuid: String,
    turn: Value,
    state: Value,
}

impl Beginning {
    fn new(thread: &str, turns: u64, uuid: &str, text: &str, marks: &Value) -> Beginning {
        let id = format!("{thread}:{turns}");
        let mut turn = json!({ "turn": id, "uuid": uuid, "text": clean(text) });
        merge(&mut turn, marks);
        Beginning {
            thread: thread.to_string(),
            turns,
            uuid: uuid.to_string(),
            turn,
            state: json!({ "state": ThreadStatus::Running, "turn": id }),
        }
    }

    /// The thread's turn count and state, the send's record, `thread.turn`, `thread.state`.
    /// `fresh`: the send is new here, and false comes back (nothing written) when its uuid was
    /// recorded meanwhile; otherwise (words already handed over) the uuid's record stays.
    /// One transaction: after a crash, a turn that began is running (so the restart ends it)
    /// and its send is recorded (so the same send retried is this turn, not another).
    fn write(self, tx: &mut WriteTx<'_>, fresh: bool) -> Result<bool, StoreError> {
        let claimed = rows::claim_sent(tx.conn(), &self.thread, &self.uuid, Via::Turn, None)?;
        if fresh && !claimed {
            return Ok(false);
        }
        rows::runs::turn_began(tx.conn(), &self.thread, self.turns)?;
        tell(tx, &self.thread, "thread.turn", self.turn)?;
        tell(tx, &self.thread, "thread.state", self.state)?;
        Ok(true)
    }
}

/// A message's words, its content blocks (its images, then its words) and what the timeline
/// says of it beyond its words (`internal`, `images`).
fn content(message: Message) -> (String, Value, Value) {
    let mut marks = json!({});
    if message.internal {
        marks["internal"] = json!(true);
    }
    if message.person {
        marks["by_person"] = json!(true);
    }
    if !message.images.is_empty() {
        marks["images"] = json!(message.images.len());
    }
    let mut blocks = message.images;
    blocks.push(json!({ "type": "text", "text": message.text }));
    (message.text, Value::Array(blocks), marks)
}

fn words(text: &str) -> Value {
    json!([{ "type": "text", "text": text }])
}

fn refused(error: ProviderError) -> Error {
    Error::Provider {
        op: Op::Send,
        error,
    }
}

impl Actor {
    /// What readers see: a running turn with open asks waits on a person.
    pub(super) fn status(&self) -> ThreadStatus {
        match (&self.turn, self.waits_on_person()) {
            (TurnState::Idle, _) => ThreadStatus::Idle,
            (TurnState::Running(_), false) => ThreadStatus::Running,
            (TurnState::Running(_), true) => ThreadStatus::Waiting,
        }
    }

    /// The message that began the running turn.
    pub(super) fn own_uuid(&self) -> Option<&str> {
        match &self.turn {
            TurnState::Running(turn) => Some(&turn.uuid),
            TurnState::Idle => None,
        }
    }

    /// The subscription's limit refused the running turn.
    pub(super) fn limited(&mut self, resets_at: Option<i64>) {
        if let TurnState::Running(turn) = &mut self.turn {
            turn.limited = Some(Limited { resets_at });
        }
    }

    /// The next turn runs, for message `uuid` (its start is recorded).
    fn open(&mut self, text: &str, uuid: &str) {
        self.turns += 1;
        self.last = Some(format!("{}:{}", self.thread, self.turns));
        self.changes_begin();
        self.turn = TurnState::Running(Turn {
            uuid: uuid.to_string(),
            text: text.to_string(),
            then: None,
            limited: None,
        });
        self.show(ThreadStatus::Running);
    }

    /// What the send with this uuid did (it was recorded while this one waited).
    async fn earlier(&self, uuid: String) -> Result<Sent> {
        self.board
            .read(move |c| Ok(rows::sent(c, &uuid)?))
            .await?
            .ok_or(Error::NotLive("the session just ended"))
    }

    /// "After this turn": Vyre's own queue, where it can be taken back or edited.
    pub(super) async fn queue(&mut self, message: Message, uuid: String) -> Result<Sent> {
        let (t, u, text, person) = (
            self.thread.clone(),
            uuid.clone(),
            message.text,
            message.person,
        );
        let payload = json!({ "uuid": uuid, "text": clean(&text), "turn": self.last, "status": InboxStatus::Queued });
        let queued = self
            .board
            .change(move |tx| {
                let queued =
                    rows::inbox::insert(tx.conn(), &t, &u, &text, InboxStatus::Queued, person)?;
                if !rows::claim_sent(tx.conn(), &t, &u, Via::Queued, Some(queued))? {
                    rows::inbox::remove(tx.conn(), queued)?;
                    return Ok(None);
                }
                let mut payload = payload;
                payload["queued"] = json!(queued);
                tell(tx, &t, "thread.queued", payload)?;
                Ok(Some(queued))
            })
            .await?;
        match queued {
            Some(queued) => Ok(Sent {
                uuid,
                via: Via::Queued,
                queued: Some(queued),
            }),
            None => self.earlier(uuid).await,
        }
    }

    /// Words into the running turn, recorded first.
    pub(super) async fn steer(
        &mut self,
        session: &dyn Session,
        message: Message,
        uuid: String,
    ) -> Result<Sent> {
        let (text, content, marks) = content(message);
        let text = text.as_str();
        let mut payload =
            json!({ "text": clean(text), "uuid": uuid, "via": Via::Steer, "turn": self.last });
        merge(&mut payload, &marks);
        let (t, u) = (self.thread.clone(), uuid.clone());
        let claimed = self
            .board
            .change(move |tx| {
                if !rows::claim_sent(tx.conn(), &t, &u, Via::Steer, None)? {
                    return Ok(false);
                }
                tell(tx, &t, "thread.sent", payload)?;
                Ok(true)
            })
            .await?;
        if !claimed {
            return self.earlier(uuid).await;
        }
        session
            .send(content, &uuid, Some(Priority::Next))
            .map_err(refused)?;
        self.steered.insert(uuid.clone(), text.to_string());
        Ok(Sent {
            uuid,
            via: Via::Steer,
            queued: None,
        })
    }

    /// A new turn: recorded (one change), then handed to the session.
    pub(super) async fn new_turn(
        &mut self,
        session: &dyn Session,
        message: Message,
        uuid: String,
    ) -> Result<Sent> {
        self.within_budget()?;
        let (text, content, marks) = content(message);
        let text = text.as_str();
        let beginning = Beginning::new(&self.thread, self.turns + 1, &uuid, text, &marks);
        if !self
            .board
            .change(move |tx| beginning.write(tx, true))
            .await?
        {
            return self.earlier(uuid).await;
        }
        self.hand_over(session, text, content, &uuid).await?;
        Ok(Sent {
            uuid,
            via: Via::Turn,
            queued: None,
        })
    }

    /// Refused once the thread has cost its agent's budget: no turn begins after that, in
    /// this process or a resumed one (a provider whose program keeps no budget of its own
    /// stops here too; Claude Code's `--max-budget-usd` stops a turn that runs over).
    pub(super) fn within_budget(&self) -> Result<()> {
        match self.budget {
            // A turn its provider gave no price for (a model switched to one without a
            // price) leaves the spend unknown: nothing more runs on a budget nothing keeps.
            Some(_) if self.unpriced => Err(Error::BudgetUnkept {
                agent: self.agent.clone().unwrap_or_default(),
                provider: "its provider".into(),
                what: "the thread's last turn".into(),
            }),
            Some(budget) if self.spent >= budget => Err(Error::BudgetSpent {
                agent: self.agent.clone().unwrap_or_default(),
                budget,
                spent: self.spent,
            }),
            _ => Ok(()),
        }
    }

    /// A recorded turn's words, handed to the session: a session that does not take them ends
    /// the turn at once (recorded) and goes idle, and the send is refused.
    async fn hand_over(
        &mut self,
        session: &dyn Session,
        text: &str,
        content: Value,
        uuid: &str,
    ) -> Result<()> {
        self.open(text, uuid);
        if let Err(message) = session.send(content, uuid, None) {
            let error = clean(&format!("the session did not take the message: {message}"));
            self.abandon_turn(json!({ "error": error })).await;
            self.state(ThreadStatus::Idle, json!({})).await;
            return Err(refused(message));
        }
        Ok(())
    }

    /// A turn begins for words already handed to the session (steered late, sent "now").
    async fn begin_handed(&mut self, text: &str, uuid: &str, marks: Value) {
        let beginning = Beginning::new(&self.thread, self.turns + 1, uuid, text, &marks);
        if let Err(e) = self
            .board
            .change(move |tx| beginning.write(tx, false))
            .await
        {
            tracing::warn!(thread = %self.thread, error = %e, "a turn began unrecorded");
        }
        self.open(text, uuid);
    }

    /// A queued message, sent at once: it cuts the running turn short and runs next (or now,
    /// when no turn runs). Taken from the queue and recorded in one change, then handed over.
    pub(super) async fn send_now(&mut self, session: &dyn Session, queued: i64) -> Result<Sent> {
        self.within_budget()?;
        let (t, last) = (self.thread.clone(), self.last.clone());
        let next = matches!(self.turn, TurnState::Idle).then_some(self.turns + 1);
        let taken = self
            .board
            .change(move |tx| {
                let Some(w) = rows::inbox::queued(tx.conn(), &t, Some(queued))? else {
                    return Ok(None);
                };
                rows::inbox::take(tx.conn(), w.queued)?;
                tell(tx, &t, "thread.unqueued", json!({ "queued": queued, "uuid": w.uuid, "reason": "taken" }))?;
                tell(tx, &t, "thread.sent", json!({ "text": clean(&w.text), "uuid": w.uuid, "via": Via::Now, "queued": queued, "turn": last }))?;
                if let Some(turns) = next {
                    Beginning::new(&t, turns, &w.uuid, &w.text, &w.marks()).write(tx, false)?;
                }
                Ok(Some(w))
            })
            .await?
            .ok_or(Error::NotQueued(
                "that message is no longer queued (sent, taken back, or never there)",
            ))?;
        let Waiting { uuid, text, .. } = taken;
        if next.is_some() {
            self.hand_over(session, &text, words(&text), &uuid).await?;
        } else {
            session
                .send(words(&text), &uuid, Some(Priority::Now))
                .map_err(refused)?;
            if let TurnState::Running(turn) = &mut self.turn {
                turn.then = Some((uuid.clone(), text));
            }
        }
        Ok(Sent {
            uuid,
            via: Via::Now,
            queued: Some(queued),
        })
    }

    /// The turn reported its result: its usage, its end and the idle state in one change; then
    /// what runs next (steered words it never reached, the fallback, a message sent "now", the
    /// queue's oldest).
    pub(super) async fn finished(
        &mut self,
        session: &dyn Session,
        (ok, canceled, error): (bool, bool, Option<String>),
        reported_total: Option<f64>,
        tokens: Value,
    ) {
        // A turn its provider gave no price for is unpriced (`cost_usd` null, `priced` false),
        // never a turn that cost nothing; the thread's total stays what was priced. The
        // provider's total is this process's; the thread's counts every process it had.
        let cost = reported_total.map(|total| {
            let cost = (total - self.total).max(0.0);
            self.total = total;
            cost
        });
        let priced = cost.is_some();
        self.spent += cost.unwrap_or(0.0);
        self.unpriced |= !priced;
        self.cancel_asks("turn ended").await;
        self.close_calls(canceled).await;
        let TurnState::Running(turn) = std::mem::replace(&mut self.turn, TurnState::Idle) else {
            return;
        };
        self.changes_end();
        let last = self.last.clone();
        let mut usage =
            json!({ "tokens": tokens, "cost_usd": cost, "priced": priced, "turn": last });
        let mut end =
            json!({ "ok": ok, "cost_usd": cost, "priced": priced, "tokens": tokens, "turn": last });
        if canceled {
            end["canceled"] = json!(true);
            end["reason"] = json!("interrupt");
        }
        if let Some(e) = error {
            end["error"] = json!(clean(&e.to_string()));
        }
        // Steered words the turn never reached (it had no step left to take them in): Claude
        // answers them next, so they are the next turn, marked `steered` (ADR 0030), and a
        // queued message waits for it.
        let late = !canceled && turn.limited.is_none() && !self.steered.is_empty();
        let t = self.thread.clone();
        let idle = (!late).then(|| json!({ "state": ThreadStatus::Idle, "turn": last }));
        if !late {
            // Idle before the events that say so: a client that reads `thread.finished` and at
            // once starts another session finds this one idle (so the cap can close it), never
            // still running.
            self.show(ThreadStatus::Idle);
        }
        self.record(move |tx| {
            let total = rows::runs::turn_finished(tx.conn(), &t, cost.unwrap_or(0.0))?;
            usage["total_cost_usd"] = json!(total);
            end["total_cost_usd"] = json!(total);
            tell(tx, &t, "thread.usage", usage)?;
            tell(tx, &t, "thread.finished", end)?;
            if let Some(idle) = idle {
                tell(tx, &t, "thread.state", idle)?;
            }
            Ok(())
        })
        .await;
        if late {
            let mut late: Vec<(String, String)> = self.steered.drain().collect();
            late.sort();
            let text = late
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            self.begin_handed(&text, &late[0].0, json!({ "steered": true }))
                .await;
            return;
        }
        if let Some(limit) = turn.limited {
            // Another task: falling back stops this very actor.
            let board = self.board.clone();
            let (t, text) = (self.thread.clone(), turn.text);
            self.board
                .ctx
                .spawn(board.fall_back(t, text, limit.resets_at));
            return;
        }
        if let Some((uuid, text)) = turn.then {
            self.begin_handed(&text, &uuid, json!({})).await;
            return;
        }
        self.next_turn(session).await;
    }

    /// At a turn's end the queue's oldest message is handed over. Taking it from the queue and
    /// its turn's start commit together, so a crash never loses a message that left the queue:
    /// its turn is there, and a restart ends it.
    async fn next_turn(&mut self, session: &dyn Session) {
        if self.within_budget().is_err() {
            // The queue stays as it is: its messages can be taken back and sent elsewhere.
            return;
        }
        let (t, turns) = (self.thread.clone(), self.turns + 1);
        let taken = self
            .board
            .change(move |tx| {
                let Some(w) = rows::inbox::queued(tx.conn(), &t, None)? else {
                    return Ok(None);
                };
                if !rows::inbox::take(tx.conn(), w.queued)? {
                    return Ok(None);
                }
                tell(tx, &t, "thread.unqueued", json!({ "queued": w.queued, "uuid": w.uuid, "reason": "taken" }))?;
                tell(tx, &t, "thread.sent", json!({ "text": clean(&w.text), "uuid": w.uuid, "via": Via::Turn, "queued": w.queued }))?;
                Beginning::new(&t, turns, &w.uuid, &w.text, &w.marks()).write(tx, false)?;
                Ok(Some(w))
            })
            .await;
        let w = match taken {
            Ok(Some(w)) => w,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(thread = %self.thread, error = %e, "cannot hand over a queued message");
                return;
            }
        };
        self.open(&w.text, &w.uuid);
        if let Err(e) = session.send(words(&w.text), &w.uuid, None) {
            // The process is gone: its end closes this turn.
            tracing::warn!(thread = %self.thread, error = %e, "cannot hand over a queued message");
        }
    }

    /// The running turn ends without its result (the session is stopped, or its process is
    /// gone): `thread.finished` with `ok: false` and `extra` (why), so every turn ends once.
    pub(super) async fn abandon_turn(&mut self, extra: Value) {
        if matches!(
            std::mem::replace(&mut self.turn, TurnState::Idle),
            TurnState::Idle
        ) {
            return;
        }
        self.changes_end();
        let mut payload = json!({ "ok": false, "turn": self.last });
        merge(&mut payload, &extra);
        let t = self.thread.clone();
        self.record(move |tx| {
            tell(tx, &t, "thread.finished", payload)?;
            rows::runs::set_status(tx.conn(), &t, ThreadStatus::Idle)?;
            Ok(())
        })
        .await;
    }

    /// Tool calls the turn left open end (canceled, when it was).
    pub(super) async fn close_calls(&mut self, canceled: bool) {
        if self.calls.is_empty() {
            return;
        }
        let status = if canceled { "canceled" } else { "completed" };
        let (t, turn) = (self.thread.clone(), self.last.clone());
        let open: Vec<(String, String)> = self.calls.drain().collect();
        self.record(move |tx| {
            for (call, name) in open {
                tell(tx, &t, "thread.tool", json!({ "id": call, "call": call, "name": name, "phase": "done", "status": status, "turn": turn }))?;
            }
            Ok(())
        })
        .await;
    }
}
