//! The actor: one task per live session. It owns the provider session (passed to [`Actor::run`]
//! and lent to each method that talks to the process), the thread's [`TurnState`] and all it
//! knows of the turn; it takes the Switchboard's commands one at a time and turns what the
//! session says into rows and events.
//!
//! - `turn.rs`: a send (a new turn, steered, queued), a turn's start and end, the queue's
//!   handover;
//! - `happen.rs`: what the session says (`Happening`s);
//! - `asks.rs`: permission questions and their answers;
//! - `subagent_slots.rs`: subagents waiting for a slot.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::error::{Error, Op, Result};
use super::handle::{Command, Shown};
use super::types::{PermissionMode, SendMode, ThreadStatus, clean, merge};
use super::{STOP_GRACE, Switchboard, rows, tell};
use crate::kernel::contracts::provider::Session;

mod asks;
mod changed;
mod checked;
mod gated;
mod happen;
mod subagent_slots;
mod turn;

pub use gated::Release;
pub(super) use turn::TurnState;

/// Subagent calls and the slots they wait for or hold.
#[derive(Default)]
struct SlotBook {
    /// Waiting for a slot: the hook request → (slot, call).
    waits: HashMap<String, (String, String)>,
    /// Holding one: call → slot.
    held: HashMap<String, String>,
    /// Calls that became background tasks (they keep their slot until the task ends).
    tasked: HashSet<String>,
}

pub(super) struct Actor {
    board: Arc<Switchboard>,
    thread: String,
    project: Option<String>,
    /// The agent it runs for: lessons narrowed to an agent apply to its sessions.
    agent: Option<String>,
    /// This actor's own command channel, for tasks it starts (a subagent waiting for a slot).
    me: mpsc::WeakUnboundedSender<Command>,
    shown: Arc<Mutex<Shown>>,
    turn: TurnState,
    /// The last turn begun (`<thread>:<n>`): what events name, during the turn and after.
    last: Option<String>,
    /// Turns so far.
    turns: u64,
    /// This process's total cost, as the session last said.
    total: f64,
    /// What the thread has cost, every process of it together.
    spent: f64,
    /// The most the thread may cost (its agent's `auth.budget_usd`): once spent, no turn begins.
    budget: Option<f64>,
    /// A turn of this process was given no price.
    unpriced: bool,
    /// Open asks: the provider's request id → the ask id.
    asks: HashMap<String, String>,
    /// Tool calls started and not yet done: call → name.
    calls: HashMap<String, String>,
    /// Messages steered into a turn and not yet taken in: uuid → words.
    steered: HashMap<String, String>,
    slots: SlotBook,
    /// A mode an answer "always" asked Claude Code to switch to, until it says it switched:
    /// who the `mode.changed` names.
    mode_by: Option<(PermissionMode, &'static str)>,
    /// Calls the Gate holds for the person: call → Claude Code's question.
    gated: HashMap<String, gated::Gated>,
    /// The session's folder, as its hooks last said.
    folder: Option<String>,
    /// What each turn changes in the thread's folder (issue 25).
    changes: Following,
}

/// The thread's folder followed across turns: the follower, the current turn's first snapshot
/// (awaited before a tool runs) and the files its tool calls said they would change.
struct Following {
    follower: Option<crate::modules::sessions::changes::follow::Follower>,
    folder: Option<std::path::PathBuf>,
    /// When the running turn's first snapshot starts unless the session answers first.
    due: Option<tokio::time::Instant>,
    /// How long after a turn begins that is ([`changed::FIRST_SNAPSHOT_AFTER`]).
    after: std::time::Duration,
    started: Option<oneshot::Receiver<()>>,
    announced: std::collections::BTreeSet<std::path::PathBuf>,
    /// A tool of this turn ran before its first snapshot was taken.
    late: bool,
}

/// Why the actor's loop ended.
enum End {
    /// Stopped (by a command, or idle for too long).
    Stop {
        reason: String,
        reply: Option<oneshot::Sender<bool>>,
    },
    /// The process ended on its own.
    Exited,
    /// Every handle is gone.
    Closed,
}

impl Actor {
    pub(super) fn new(
        board: Arc<Switchboard>,
        thread: &str,
        project: Option<String>,
        agent: Option<String>,
        turns: u64,
        me: mpsc::WeakUnboundedSender<Command>,
        shown: Arc<Mutex<Shown>>,
    ) -> Actor {
        Actor {
            board,
            thread: thread.to_string(),
            project,
            agent,
            me,
            shown,
            turn: TurnState::Idle,
            last: None,
            turns,
            total: 0.0,
            spent: 0.0,
            budget: None,
            unpriced: false,
            asks: HashMap::new(),
            calls: HashMap::new(),
            steered: HashMap::new(),
            slots: SlotBook::default(),
            mode_by: None,
            gated: HashMap::new(),
            folder: None,
            changes: Following {
                follower: None,
                folder: None,
                due: None,
                after: changed::FIRST_SNAPSHOT_AFTER,
                started: None,
                announced: Default::default(),
                late: false,
            },
        }
    }

    /// What the thread has cost before this process, and the most it may cost.
    pub(super) fn costing(mut self, spent: f64, budget: Option<f64>) -> Actor {
        self.spent = spent;
        self.budget = budget;
        self
    }

    /// Follow what each turn changes in `folder` (the thread's own, as it was launched), read
    /// into its store now unless that was done already (`read`: a warm spare's folder is read
    /// when the spare is made).
    pub(super) fn following(mut self, folder: &std::path::Path, read: bool) -> Actor {
        let follower = crate::modules::sessions::changes::follow::Follower::spawn(
            &self.board.ctx,
            &self.thread,
        );
        if !read {
            follower.warm(folder);
        }
        self.changes.follower = Some(follower);
        self.changes.folder = Some(folder.to_path_buf());
        self
    }

    /// A turn's first snapshot starts this long after it begins unless the session answers
    /// first (a test's own wait instead of [`changed::FIRST_SNAPSHOT_AFTER`]).
    #[cfg(test)]
    pub(super) fn first_snapshot_after(mut self, after: std::time::Duration) -> Actor {
        self.changes.after = after;
        self
    }

    /// No turn and no open question: what the idle timer and an idle-only stop wait for.
    fn idle(&self) -> bool {
        matches!(self.turn, TurnState::Idle) && !self.waits_on_person()
    }

    /// The task: owns `session` until it ends.
    pub(super) async fn run(
        mut self,
        mut session: Box<dyn Session>,
        mut rx: mpsc::UnboundedReceiver<Command>,
    ) {
        let end = loop {
            // A timer runs only while idle, once.
            let idle = self.idle().then_some(self.board.idle_after).flatten();
            let due = self.changes.due;
            tokio::select! {
                _ = tokio::time::sleep(idle.unwrap_or_default()), if idle.is_some() => {
                    break End::Stop { reason: "idle".into(), reply: None };
                }
                _ = tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)), if due.is_some() => {
                    self.changes_start();
                }
                command = rx.recv() => match command {
                    None => break End::Closed,
                    Some(Command::Stop { reason, idle_only, reply }) => {
                        if idle_only && !self.idle() {
                            let _ = reply.send(false);
                            continue;
                        }
                        self.cancel_asks(&reason).await;
                        self.close_calls(true).await;
                        self.abandon_turn(json!({ "canceled": true, "reason": reason })).await;
                        break End::Stop { reason, reply: Some(reply) };
                    }
                    Some(command) => self.on_command(session.as_ref(), command).await,
                },
                happening = session.next() => match happening {
                    Some(h) => self.on_happening(session.as_ref(), h).await,
                    None => break End::Exited,
                },
            }
        };
        match end {
            End::Stop { reason, reply } => {
                let _exit = session.stop(STOP_GRACE).await;
                self.ended(&reason).await;
                if let Some(reply) = reply {
                    let _ = reply.send(true);
                }
            }
            End::Exited => {
                let exit = session.exit().await;
                if matches!(self.turn, TurnState::Running(_)) {
                    let error = clean(&format!(
                        "Claude Code {} mid-turn: {}",
                        exit.describe(),
                        exit.stderr.lines().last().unwrap_or("")
                    ));
                    self.cancel_asks("exited").await;
                    self.close_calls(true).await;
                    self.abandon_turn(json!({ "error": error })).await;
                    self.state(ThreadStatus::Failed, json!({ "error": error }))
                        .await;
                    self.state(ThreadStatus::Idle, json!({})).await;
                }
                self.ended(&exit.describe()).await;
            }
            End::Closed => {
                let exit = session.stop(STOP_GRACE).await;
                self.ended(&exit.describe()).await;
            }
        }
    }

    async fn on_command(&mut self, session: &dyn Session, command: Command) {
        match command {
            // A new turn when idle; while a turn runs, steered into it or queued.
            Command::Send {
                message,
                uuid,
                reply,
            } => {
                let sent = match (&self.turn, message.mode) {
                    (TurnState::Idle, _) => self.new_turn(session, message, uuid).await,
                    (TurnState::Running(_), SendMode::Steer) => {
                        self.steer(session, message, uuid).await
                    }
                    (TurnState::Running(_), SendMode::Queue) => self.queue(message, uuid).await,
                };
                let _ = reply.send(sent);
            }
            Command::SendNow { queued, reply } => {
                let _ = reply.send(self.send_now(session, queued).await);
            }
            Command::Answer { answer, reply } => {
                let _ = reply.send(self.on_answer(session, answer).await);
            }
            Command::Interrupt { reply } => {
                self.cancel_asks("interrupted").await;
                let done = session.interrupt().await.map_err(|error| Error::Provider {
                    op: Op::Interrupt,
                    error,
                });
                let _ = reply.send(done);
            }
            Command::Mode { mode, reply } => {
                let result = session.set_mode(mode.as_str()).await;
                if result.is_ok() {
                    let (t, turn) = (self.thread.clone(), self.last.clone());
                    self.record(move |tx| {
                        rows::runs::set_mode(tx.conn(), &t, mode)?;
                        tell(
                            tx,
                            &t,
                            "mode.changed",
                            json!({ "mode": mode, "turn": turn }),
                        )
                    })
                    .await;
                }
                let _ = reply.send(result.map_err(|error| Error::Provider {
                    op: Op::Mode,
                    error,
                }));
            }
            Command::Model { model, reply } => {
                let result = session.set_model(model.as_deref()).await;
                if result.is_ok() {
                    let t = self.thread.clone();
                    self.record(move |tx| {
                        tell(tx, &t, "thread.model", json!({ "model": model }))?;
                        rows::runs::set_model(tx.conn(), &t, model.as_deref())?;
                        Ok(())
                    })
                    .await;
                }
                let _ = reply.send(result.map_err(|error| Error::Provider {
                    op: Op::Model,
                    error,
                }));
            }
            Command::Effort { effort, reply } => {
                let result = session.set_effort(effort.as_deref()).await;
                if result.is_ok() {
                    let t = self.thread.clone();
                    self.record(move |tx| {
                        tell(tx, &t, "thread.effort", json!({ "effort": effort }))?;
                        rows::runs::set_effort(tx.conn(), &t, effort.as_deref())?;
                        Ok(())
                    })
                    .await;
                }
                let _ = reply.send(result.map_err(|error| Error::Provider {
                    op: Op::Effort,
                    error,
                }));
            }
            Command::SlotGranted { request } => self.on_slot_granted(session, &request),
            Command::Release { release, reply } => {
                let _ = reply.send(self.on_release(session, release).await);
            }
            Command::Stop { .. } => unreachable!("the loop takes stops"),
        }
    }

    /// Write a change (its rows and its events, one transaction); a failure is logged.
    async fn record<F>(&self, f: F)
    where
        F: FnOnce(
                &mut crate::kernel::store::WriteTx<'_>,
            ) -> Result<(), crate::kernel::store::StoreError>
            + Send
            + 'static,
    {
        if let Err(e) = self.board.change(f).await {
            tracing::warn!(thread = %self.thread, error = %e, "a change was not recorded");
        }
    }

    /// Record one event of this thread.
    async fn emit(&self, kind: &str, payload: Value) {
        self.board.emit(kind, &self.thread, payload).await;
    }

    /// The thread's state changes: shown at once, its row and `thread.state` in one change.
    async fn state(&mut self, status: ThreadStatus, extra: Value) {
        self.show(status);
        let mut payload = json!({ "state": status, "turn": self.last });
        merge(&mut payload, &extra);
        let t = self.thread.clone();
        self.record(move |tx| {
            tell(tx, &t, "thread.state", payload)?;
            rows::runs::set_status(tx.conn(), &t, status)?;
            Ok(())
        })
        .await;
    }

    fn show(&self, status: ThreadStatus) {
        let mut shown = self.shown.lock().expect("shown");
        shown.status = status;
        shown.since = std::time::Instant::now();
    }

    /// The session is gone: what it started and detached goes too, its slots go back, its
    /// handle leaves the map, and `thread.stopped` says why.
    async fn ended(&self, reason: &str) {
        let thread = self.thread.clone();
        let swept = tokio::task::spawn_blocking(move || {
            crate::modules::sessions::spawn::kill_tagged("VYRE_THREAD", &thread)
        })
        .await
        .unwrap_or(0);
        if swept > 0 {
            tracing::info!(thread = %self.thread, swept, "ended processes the session had detached");
        }
        let board = &self.board;
        board.live.lock().expect("live").remove(&self.thread);
        board.ctx.session_processes().unregister(&self.thread);
        board.close_socket(&self.thread);
        if let Some(slots) = board.router.slots() {
            slots.release_thread(&self.thread, reason).await;
        }
        self.show(ThreadStatus::Stopped);
        board.account_transcript(&self.thread).await;
        let (t, r) = (self.thread.clone(), reason.to_string());
        self.record(move |tx| {
            rows::runs::stopped(tx.conn(), &t, &r)?;
            tell(tx, &t, "thread.stopped", json!({ "reason": r }))
        })
        .await;
    }
}
