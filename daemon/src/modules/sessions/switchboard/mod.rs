//! The Switchboard: everything above the provider (ADR 0030), as mini-redis would build it.
//!
//! - Each live session is an actor task ([`actor`]) that owns its provider session, its
//!   [`actor::TurnState`] and everything it knows of its turn; it turns what the session says
//!   into rows and the events of the ADR's table (`thread.*`, `ask.*`).
//! - The Switchboard is a map of cheap [`handle::Handle`]s to those tasks (a command sender,
//!   the process ids, and the state readers show), and the API the tools call: it checks what
//!   can be checked without the session, then sends the actor a command and waits for its reply.
//! - Every SQL statement is in [`rows`]; a change writes its rows and its events in one
//!   transaction. Errors are [`Error`], said to a caller in one place (`error.rs`).
//!
//! Beside them: `launch.rs` (start, resume, fork, rewind, the cap), `queue.rs` (the queue's
//! tools), `adopt.rs` (sessions Vyre did not start, one writer per transcript), `fallback.rs`
//! (the subscription's limit), `timeline.rs` (the timeline's reads) and `fence.rs` (what a
//! session may see and act on).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::router::Router;
use crate::kernel::contracts::provider::{ProcessIds, SlashCommand};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::store::{StoreError, WriteTx};
use crate::kernel::tools::Caller;

mod actor;
mod adopt;
mod budget;
mod error;
mod fallback;
mod fence;
mod handle;
mod host_tools;
mod launch;
mod lean_schema;
mod queue;
mod release;
mod restart;
pub mod rows;
mod spares;
mod timeline;
mod types;

pub use actor::Release;
pub use error::{Error, Op, Result};
pub use fence::Owners;
pub use handle::Message;
pub use spares::SpareInfo;
pub use types::*;

use handle::{Command, Handle};

/// How long a stopping session gets to exit before its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);

pub struct Switchboard {
    ctx: Ctx,
    router: Arc<Router>,
    // std Mutex: a map lookup or insert, never across an await.
    live: Mutex<HashMap<String, Handle>>,
    // tokio Mutex: held across a launch, so two sends never resume one thread twice.
    launching: tokio::sync::Mutex<()>,
    /// Close a session after this long with no turn and no open question (`sessions.idle_minutes`).
    idle_after: Option<Duration>,
    /// At most this many live sessions (`sessions.max_live`).
    max_live: usize,
    /// Each thread's slash commands, as its session last said at start.
    // std Mutex: a map lookup or insert, never across an await.
    commands: Mutex<HashMap<String, Vec<SlashCommand>>>,
    /// Who started each thread and for which agent: what the Fence decides ownership from.
    owners: Arc<Owners>,
    /// Warm spare sessions for the next start (ADR 0032).
    spares: spares::Spares,
    /// The tools sessions are served, one copy for them all (`host_tools`).
    // std Mutex: a compare and a clone, never across an await.
    host_list: Mutex<Option<Arc<host_tools::HostList>>>,
    work: Work,
}

/// The store work the Switchboard asked for, counted (relaxed atomics: a figure, not a lock).
#[derive(Default)]
struct Work {
    reads: AtomicU64,
    writes: AtomicU64,
}

/// Record a thread's event inside a change's transaction, folded into its timeline.
pub(super) fn tell(
    tx: &mut WriteTx<'_>,
    thread: &str,
    kind: &str,
    payload: Value,
) -> Result<(), StoreError> {
    crate::modules::sessions::timeline::record(tx, NewEvent::new(kind, payload).thread(thread))?;
    Ok(())
}

impl Switchboard {
    /// Whether threads on `provider` are Claude Code's (its models, its credential); an unknown
    /// provider is refused in words.
    pub fn runs_claude(
        &self,
        provider: &str,
    ) -> std::result::Result<bool, crate::kernel::tools::ToolError> {
        Ok(self.router.get(provider)?.runs_claude())
    }

    /// `effort` if provider `provider` takes it, else why not.
    pub fn check_effort(
        &self,
        provider: &str,
        effort: Option<String>,
    ) -> std::result::Result<Option<String>, crate::kernel::tools::ToolError> {
        let Some(effort) = effort else {
            return Ok(None);
        };
        let efforts = self.router.get(provider)?.efforts();
        if efforts.contains(&effort.as_str()) {
            return Ok(Some(effort));
        }
        Err(crate::kernel::tools::ToolError::invalid(
            if efforts.is_empty() {
                format!("provider {provider} has no reasoning effort to choose")
            } else {
                format!(
                    "provider {provider} takes effort {}, not {effort:?}",
                    efforts.join(", ")
                )
            },
        ))
    }

    pub fn new(ctx: Ctx, router: Arc<Router>, owners: Owners) -> Arc<Switchboard> {
        let settings = &ctx.config().sessions;
        let (idle_after, max_live) = (settings.idle_after(), settings.max_live());
        Arc::new(Switchboard {
            ctx,
            router,
            live: Mutex::new(HashMap::new()),
            launching: tokio::sync::Mutex::new(()),
            idle_after,
            max_live,
            commands: Mutex::new(HashMap::new()),
            owners: Arc::new(owners),
            spares: spares::Spares::default(),
            host_list: Mutex::new(None),
            work: Work::default(),
        })
    }

    fn live(&self, thread: &str) -> Option<Handle> {
        self.live.lock().expect("live").get(thread).cloned()
    }

    /// Change rows and record what tells of it, in one transaction.
    async fn change<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.work.writes.fetch_add(1, Ordering::Relaxed);
        self.ctx.store().write(f).await
    }

    /// Read with a connection of the store's pool.
    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.work.reads.fetch_add(1, Ordering::Relaxed);
        self.ctx.store().read(f).await
    }

    /// How many reads and write transactions the Switchboard has asked of the store (its one
    /// way to it is [`Switchboard::read`] and [`Switchboard::change`]).
    pub fn work(&self) -> (u64, u64) {
        (
            self.work.reads.load(Ordering::Relaxed),
            self.work.writes.load(Ordering::Relaxed),
        )
    }

    /// Record one event of the thread (a failure is logged: the event is what is lost).
    async fn emit(&self, kind: &str, thread: &str, payload: Value) {
        let (k, t) = (kind.to_string(), thread.to_string());
        if let Err(e) = self.change(move |tx| tell(tx, &t, &k, payload)).await {
            tracing::warn!(thread, kind, error = %e, "event not recorded");
        }
    }

    /// The thread's slash commands as its session said at its last start (none before one).
    pub async fn commands(&self, thread: &str) -> Result<Vec<SlashCommand>> {
        self.info(thread)
            .await?
            .ok_or_else(|| Error::UnknownThread(thread.into()))?;
        let commands = self.commands.lock().expect("commands");
        Ok(commands.get(thread).cloned().unwrap_or_default())
    }

    /// The thread's folder, for pickers.
    pub async fn cwd(&self, thread: &str) -> Result<std::path::PathBuf> {
        match self.info(thread).await? {
            Some(info) => Ok(info.cwd.into()),
            None => Err(Error::UnknownThread(thread.into())),
        }
    }

    /// Whether an idle session runs for an agent that was changed since it started; if so it
    /// is stopped here, so the next launch takes the new instructions, credentials and budget.
    async fn agent_changed(&self, live: &Handle) -> bool {
        let Some((name, rev)) = &live.agent else {
            return false;
        };
        let changed = match self.router.agent(name).await {
            Ok(now) => now.updated_at != *rev,
            Err(_) => false,
        };
        changed && live.stop(ANOTHER_AGENT, true).await
    }

    /// Send words to a thread: a new turn when idle; while a turn runs, steered into it or
    /// queued for its end (`message.mode`). The send's uuid is looked up once, here: the same
    /// send retried answers as before, without resuming or holding anything.
    pub async fn send(self: &Arc<Self>, thread: &str, message: Message) -> Result<Sent> {
        if message.text.trim().is_empty() {
            return Err(Error::EmptyText);
        }
        if message.mode == SendMode::Queue && !message.images.is_empty() {
            return Err(Error::ImagesInQueue);
        }
        if let Some(uuid) = message.uuid.clone()
            && let Some(earlier) = self.read(move |c| Ok(rows::sent(c, &uuid)?)).await?
        {
            return Ok(earlier);
        }
        let live = match self.live(thread) {
            Some(live) if !self.agent_changed(&live).await => live,
            // A thread whose session is closed (or was for an agent since changed) resumes on
            // its transcript.
            _ => {
                // One writer: a session a terminal is writing waits for it to let go.
                if self.live_elsewhere(thread).await {
                    let uuid = message.uuid.unwrap_or_else(crate::kernel::ids::uuid_v4);
                    return self.hold(thread, &message.text, uuid).await;
                }
                self.resume(thread, None).await?;
                self.live(thread)
                    .ok_or(Error::NotLive("the session ended as it resumed"))?
            }
        };
        live.send(message).await
    }

    /// Start a closed thread's session ahead of its next message (resuming its transcript), so
    /// the send finds it live: the app asks when a person starts writing in a closed thread.
    /// False when there was nothing to do (it is live, or a terminal has it).
    pub async fn warm(self: &Arc<Self>, thread: &str) -> Result<bool> {
        if self.live(thread).is_some() || self.live_elsewhere(thread).await {
            return Ok(false);
        }
        self.resume(thread, None).await?;
        Ok(true)
    }

    /// Answer an ask: a person's decision, checked against the ask's row, then given to the
    /// session that asked.
    pub async fn answer(
        &self,
        ask: &str,
        decision: Decision,
        answers: Option<Value>,
        message: Option<String>,
        via: Option<&'static str>,
        caller: &Caller,
    ) -> Result<Value> {
        let a = ask.to_string();
        let row = self
            .read(move |c| Ok(rows::asks::get(c, &a)?))
            .await?
            .ok_or_else(|| Error::UnknownAsk(ask.into()))?;
        if let Caller::Session {
            thread: Some(t), ..
        } = caller
            && *t == row.thread
        {
            return Err(Error::OwnAsk);
        }
        match row.status {
            AskStatus::Answered => {
                return Ok(json!({ "ask": ask, "decision": row.decision, "already": true }));
            }
            AskStatus::Cancelled => {
                return Err(Error::AskClosed(
                    "this question was withdrawn (the turn was interrupted or moved on)",
                ));
            }
            AskStatus::Open => {}
        }
        let response = match decision {
            Decision::Deny => {
                json!({ "behavior": "deny", "message": message.unwrap_or_else(|| "The person declined this.".into()) })
            }
            Decision::Allow | Decision::Always => {
                let mut updated = row.input;
                if updated.is_null() {
                    updated = json!({});
                }
                if row.kind == "question"
                    && let Some(answers) = answers
                {
                    updated["answers"] = answers;
                }
                let mut r = json!({ "behavior": "allow", "updatedInput": updated });
                if decision == Decision::Always {
                    r["updatedPermissions"] = safe_permissions(&row.suggestions);
                }
                r
            }
        };
        let live = self
            .live(&row.thread)
            .ok_or(Error::AskClosed(ASKER_ENDED))?;
        let answer = handle::Answer {
            ask: ask.to_string(),
            request: row.request,
            response,
            decision,
            by: caller.label(),
            via,
        };
        live.request(
            |reply| Command::Answer { answer, reply },
            || Error::AskClosed(ASKER_ENDED),
        )
        .await??;
        Ok(json!({ "ask": ask, "decision": decision.outcome(), "already": false }))
    }

    /// Change a live session's permission mode (never bypass).
    pub async fn set_mode(&self, thread: &str, mode: PermissionMode) -> Result<()> {
        let live = self.live_or_unknown(thread)?;
        live.request(
            |reply| Command::Mode { mode, reply },
            || Error::UnknownThread(thread.into()),
        )
        .await?
    }

    /// Change a live session's model (`None`: the session's default).
    pub async fn set_model(&self, thread: &str, model: Option<String>) -> Result<()> {
        let live = self.live_or_unknown(thread)?;
        live.request(
            |reply| Command::Model { model, reply },
            || Error::UnknownThread(thread.into()),
        )
        .await?
    }

    /// Change how hard a live session's model thinks, from its next turn (`None`: the
    /// provider's default).
    pub async fn set_effort(&self, thread: &str, effort: Option<String>) -> Result<()> {
        let live = self.live_or_unknown(thread)?;
        live.request(
            |reply| Command::Effort { effort, reply },
            || Error::UnknownThread(thread.into()),
        )
        .await?
    }

    pub async fn interrupt(&self, thread: &str) -> Result<()> {
        let live = self.live_or_unknown(thread)?;
        live.request(
            |reply| Command::Interrupt { reply },
            || Error::UnknownThread(thread.into()),
        )
        .await?
    }

    fn live_or_unknown(&self, thread: &str) -> Result<Handle> {
        self.live(thread)
            .ok_or_else(|| Error::UnknownThread(thread.into()))
    }

    /// Stop a thread's session; whether one was live.
    pub async fn stop(&self, thread: &str, reason: &str) -> Result<bool> {
        let Some(live) = self.live(thread) else {
            return match self.info(thread).await? {
                Some(_) => Ok(false),
                None => Err(Error::UnknownThread(thread.into())),
            };
        };
        live.stop(reason, false).await;
        Ok(true)
    }

    /// Stop every live session (vyred is shutting down).
    pub async fn stop_all(&self, reason: &str) {
        let threads: Vec<String> = self.live.lock().expect("live").keys().cloned().collect();
        for t in threads {
            let _ = self.stop(&t, reason).await;
        }
        self.stop_spares().await;
    }

    pub fn pids(&self) -> Vec<ProcessIds> {
        self.live
            .lock()
            .expect("live")
            .values()
            .map(|l| l.ids)
            .collect()
    }

    pub async fn info(&self, thread: &str) -> Result<Option<ThreadInfo>> {
        let t = thread.to_string();
        let mut found = self
            .read(move |c| Ok(rows::runs::infos(c, Some(&t))?))
            .await?;
        Ok(found.pop().map(|i| self.with_live(i)))
    }

    pub async fn list(&self) -> Result<Vec<ThreadInfo>> {
        let all = self.read(|c| Ok(rows::runs::infos(c, None)?)).await?;
        Ok(all.into_iter().map(|i| self.with_live(i)).collect())
    }

    /// The threads that belong to a project ([`rows::runs::belonging`]), newest first.
    pub async fn list_belonging(
        &self,
        project: Option<String>,
        folders: Vec<String>,
        threads: Vec<String>,
    ) -> Result<Vec<ThreadInfo>> {
        let found = self
            .read(move |c| {
                let folders: Vec<&str> = folders.iter().map(String::as_str).collect();
                Ok(rows::runs::belonging(
                    c,
                    project.as_deref(),
                    &folders,
                    &threads,
                )?)
            })
            .await?;
        Ok(found.into_iter().map(|i| self.with_live(i)).collect())
    }

    fn with_live(&self, mut info: ThreadInfo) -> ThreadInfo {
        if let Some(live) = self.live(&info.thread) {
            info.live = true;
            info.state = live.status();
        }
        info
    }

    /// The thread's waiting messages, oldest first.
    pub async fn queued(&self, thread: &str) -> Result<Vec<QueuedInfo>> {
        let t = thread.to_string();
        Ok(self.read(move |c| Ok(rows::inbox::waiting(c, &t)?)).await?)
    }

    pub async fn asks(&self, thread: &str, open_only: bool) -> Result<Vec<AskInfo>> {
        let t = thread.to_string();
        Ok(self
            .read(move |c| Ok(rows::asks::list(c, &t, open_only)?))
            .await?)
    }
}

#[cfg(test)]
mod tests;

/// Why an idle session of a changed agent stops.
const ANOTHER_AGENT: &str = "agent updated";
/// An ask whose session is gone.
const ASKER_ENDED: &str = "the session that asked has ended";
