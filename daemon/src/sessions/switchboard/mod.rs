//! The Switchboard: everything above the provider (ADR 0030). One actor task per live session
//! owns its provider session; tools send it commands; it turns what the session says into rows
//! and the events of the ADR's table (`thread.*`, `ask.*`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::router::Router;
use crate::contracts::provider::{Happening, Launch, ProcessIds, Question, Session};
use crate::events::NewEvent;
use crate::modules::Ctx;
use crate::store::StoreError;
use crate::tools::{Caller, ErrorKind, ToolError};

mod actor;
mod adopt;
mod fallback;
mod fence;
mod launch;
mod queue;
mod slots;
mod timeline;

use actor::Actor;
pub use fence::Owners;

/// How long a stopping session gets to exit before its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// What to start.
#[derive(Debug, Clone)]
pub struct StartRequest {
    pub cwd: PathBuf,
    pub model: Option<String>,
    pub purpose: String,
    pub project: Option<String>,
    pub provider: String,
    pub agent: Option<String>,
    pub mode: String,
}

enum Command {
    Send {
        text: String,
        uuid: String,
        queue: bool,
        /// Image content blocks to send before the text.
        images: Vec<Value>,
        /// Vyre's own words (a greeting), not the person's: marked so, hidden by default.
        internal: bool,
        reply: oneshot::Sender<Result<Sent, ToolError>>,
    },
    SendNow {
        queued: i64,
        reply: oneshot::Sender<Result<Sent, ToolError>>,
    },
    Answer {
        ask: String,
        request: String,
        response: Value,
        decision: String,
        by: String,
        reply: oneshot::Sender<Result<(), ToolError>>,
    },
    Interrupt {
        reply: oneshot::Sender<Result<(), ToolError>>,
    },
    Mode {
        mode: String,
        reply: oneshot::Sender<Result<(), ToolError>>,
    },
    Model {
        model: Option<String>,
        reply: oneshot::Sender<Result<(), ToolError>>,
    },
    /// A subagent's slot came free (sent by the session's own waiting task).
    SlotGranted { request: String },
    Stop {
        reason: String,
        /// Only when no turn runs and no question is open; the reply says whether it stopped.
        idle_only: bool,
        reply: oneshot::Sender<bool>,
    },
}

#[derive(Clone)]
struct Live {
    tx: mpsc::UnboundedSender<Command>,
    ids: ProcessIds,
    /// The agent this session runs for, and its record's `updated_at` at launch.
    agent: Option<(String, i64)>,
    // std Mutex: read by tools, written by the actor, never held across an await.
    state: Arc<Mutex<Shown>>,
}

/// A live session's state as tools see it, and since when.
pub(super) struct Shown {
    pub(super) state: String,
    pub(super) since: std::time::Instant,
}

impl Shown {
    fn new(state: &str) -> Shown {
        Shown {
            state: state.to_string(),
            since: std::time::Instant::now(),
        }
    }
}

pub struct Switchboard {
    ctx: Ctx,
    router: Arc<Router>,
    // std Mutex: a map lookup or insert, never across an await.
    live: Mutex<HashMap<String, Live>>,
    // tokio Mutex: held across a launch, so two sends never resume one thread twice.
    launching: tokio::sync::Mutex<()>,
    /// Close a session after this long with no turn and no open question (`sessions.idle_minutes`).
    idle_after: Option<Duration>,
    /// At most this many live sessions (`sessions.max_live`).
    max_live: usize,
    /// Each thread's slash commands, as its session last said at start.
    commands: Mutex<HashMap<String, Vec<Value>>>,
    /// Who started each thread and for which agent: what the Fence decides ownership from.
    owners: Arc<Owners>,
}

/// A thread as `threads.get` and `threads.list` show it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ThreadInfo {
    pub thread: String,
    pub provider: String,
    pub purpose: String,
    pub model: Option<String>,
    pub cwd: String,
    pub project: Option<String>,
    pub agent: Option<String>,
    pub auth: String,
    pub mode: String,
    pub state: String,
    pub live: bool,
    pub turns: i64,
    pub total_cost_usd: f64,
    pub stopped_reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// How a launch starts its session.
enum How {
    New,
    Resume { at: Option<String> },
    Fork { from: String, at: Option<String> },
}

/// What became of a send.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Sent {
    pub uuid: String,
    /// `turn` (a new turn), `steer` (joined the running turn), `queued` (waits for this turn's
    /// end) or `now` (a queued message sent at once).
    pub via: String,
    /// The `threads_inbox` row, for a queued message.
    pub queued: Option<i64>,
}

/// An open or past permission question.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AskInfo {
    pub ask: String,
    pub thread: String,
    pub turn: Option<String>,
    pub kind: String,
    pub tool: String,
    pub summary: String,
    pub status: String,
    pub decision: Option<String>,
    /// What the tool was to run with (a command, a file, AskUserQuestion's questions and
    /// options), exactly, with only the credentials in it masked (`redact::mask`).
    pub input: Value,
}

/// A message waiting in a thread's inbox.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueuedInfo {
    pub queued: i64,
    pub uuid: String,
    pub text: String,
    /// `queued` (for the turn's end) or `held` (for a terminal to let go).
    pub status: String,
    pub created_at: i64,
}

/// Strings that go into events pass here: each credential in one is masked, the rest kept, so
/// a person sees the command they approve (`echo hi # sk-ant-…[redacted]`) and the event log
/// holds no secret (`redact::mask`).
fn clean(s: &str) -> String {
    crate::redact::mask(s).into_owned()
}

/// A JSON value for an event: every string in it passes [`clean`].
pub(crate) fn clean_value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(clean(s)),
        Value::Array(items) => Value::Array(items.iter().map(clean_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), clean_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn not_found(thread: &str) -> ToolError {
    ToolError::not_found(
        "unknown_thread",
        format!("there is no thread {thread:?}; threads.list shows them"),
    )
}

impl Switchboard {
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
        })
    }

    /// The thread's slash commands as its session said at its last start (none before one).
    pub async fn commands(&self, thread: &str) -> Result<Vec<Value>, ToolError> {
        if self.info(thread).await?.is_none() {
            return Err(ToolError::not_found(
                "unknown_thread",
                format!("there is no thread {thread:?}"),
            ));
        }
        Ok(self
            .commands
            .lock()
            .expect("commands")
            .get(thread)
            .cloned()
            .unwrap_or_default())
    }

    /// The thread's folder, for pickers.
    pub async fn cwd(&self, thread: &str) -> Result<std::path::PathBuf, ToolError> {
        match self.info(thread).await? {
            Some(info) => Ok(std::path::PathBuf::from(info.cwd)),
            None => Err(ToolError::not_found(
                "unknown_thread",
                format!("there is no thread {thread:?}"),
            )),
        }
    }

    /// Record an event of the thread, folded into its timeline in the same transaction.
    async fn emit(&self, kind: &str, thread: &str, payload: Value) {
        let event = NewEvent::new(kind, payload).thread(thread);
        let written = self
            .ctx
            .store()
            .write(move |tx| crate::sessions::timeline::record(tx, event))
            .await;
        if let Err(e) = written {
            tracing::warn!(thread, kind, error = %e, "event not recorded");
        }
    }

    /// Change rows and record the event that tells of it in one transaction, so that a crash
    /// never keeps the one without the other. `rows` says whether the event is still to be told
    /// (false: nothing changed, so nothing is recorded).
    async fn emit_with<F>(&self, kind: &str, thread: &str, payload: Value, rows: F)
    where
        F: FnOnce(&rusqlite::Connection) -> rusqlite::Result<bool> + Send + 'static,
    {
        if let Err(e) = self.try_emit_with(kind, thread, payload, rows).await {
            tracing::warn!(thread, kind, error = %e, "event not recorded");
        }
    }

    /// [`Switchboard::emit_with`], saying whether it was written.
    async fn try_emit_with<F>(
        &self,
        kind: &str,
        thread: &str,
        payload: Value,
        rows: F,
    ) -> Result<(), StoreError>
    where
        F: FnOnce(&rusqlite::Connection) -> rusqlite::Result<bool> + Send + 'static,
    {
        let event = NewEvent::new(kind, payload).thread(thread);
        self.ctx
            .store()
            .write(move |tx| {
                if rows(tx.conn())? {
                    crate::sessions::timeline::record(tx, event)?;
                }
                Ok(())
            })
            .await
    }

    async fn set_status(&self, thread: &str, status: &str) {
        self.update_run(thread, "status", Some(status.to_string()))
            .await;
    }

    fn live(&self, thread: &str) -> Option<Live> {
        self.live.lock().expect("live").get(thread).cloned()
    }

    /// Whether an idle session runs for an agent that was changed since it started; if so it
    /// is stopped here, so the next launch takes the new instructions, credentials and budget.
    async fn agent_changed(&self, live: &Live) -> bool {
        let Some((name, rev)) = &live.agent else {
            return false;
        };
        let changed = match self.router.agent(name).await {
            Ok(now) => now.updated_at != *rev,
            Err(_) => false,
        };
        changed && self.stop_if_idle(live, "agent updated").await
    }

    /// Send words to a thread: a new turn when idle, steered into the running turn otherwise.
    pub async fn send(
        self: &Arc<Self>,
        thread: &str,
        text: &str,
        uuid: Option<String>,
        queue: bool,
        images: Vec<Value>,
    ) -> Result<Sent, ToolError> {
        self.send_as(thread, text, uuid, queue, images, false).await
    }

    /// [`Switchboard::send`]; `internal`: Vyre's own words (a greeting, an instruction), which
    /// the timeline marks so and surfaces hide by default. Only modules send them.
    pub async fn send_as(
        self: &Arc<Self>,
        thread: &str,
        text: &str,
        uuid: Option<String>,
        queue: bool,
        images: Vec<Value>,
        internal: bool,
    ) -> Result<Sent, ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::invalid("text must not be empty"));
        }
        if queue && !images.is_empty() {
            return Err(ToolError::invalid(
                "images go with steer or a new turn; the queue keeps words only",
            ));
        }
        if let Some(uuid) = &uuid
            && let Some(earlier) = self.sent_before(uuid).await?
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
                    let uuid = uuid.unwrap_or_else(crate::ids::uuid_v4);
                    let sent = self.hold(thread, text, uuid).await?;
                    self.record_sent(thread, &sent).await;
                    return Ok(sent);
                }
                self.resume(thread, None).await?;
                self.live(thread).ok_or_else(|| {
                    ToolError::conflict("not_live", "the session ended as it resumed")
                })?
            }
        };
        let uuid = uuid.unwrap_or_else(crate::ids::uuid_v4);
        let (reply, answer) = oneshot::channel();
        live.tx
            .send(Command::Send {
                text: text.to_string(),
                uuid: uuid.clone(),
                queue,
                images,
                internal,
                reply,
            })
            .map_err(|_| ToolError::conflict("not_live", "the session just ended"))?;
        answer
            .await
            .map_err(|_| ToolError::conflict("not_live", "the session just ended"))?
    }

    pub async fn answer(
        &self,
        ask: &str,
        decision: &str,
        answers: Option<Value>,
        message: Option<String>,
        caller: &Caller,
    ) -> Result<Value, ToolError> {
        let a = ask.to_string();
        let row = self
            .ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT thread, request, status, decision, input, suggestions, kind FROM threads_asks WHERE id = ?1",
                    [&a],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, Option<String>>(3)?, r.get::<_, String>(4)?, r.get::<_, String>(5)?, r.get::<_, String>(6)?)),
                )
                .optional()?)
            })
            .await?
            .ok_or_else(|| ToolError::not_found("unknown_ask", format!("there is no ask {ask:?}")))?;
        let (thread, request, status, earlier, input, suggestions, kind) = row;
        if let Caller::Session {
            thread: Some(t), ..
        } = caller
            && *t == thread
        {
            return Err(ToolError::refused(
                "own_ask",
                "a session cannot answer its own question",
            ));
        }
        match status.as_str() {
            "answered" => return Ok(json!({ "ask": ask, "decision": earlier, "already": true })),
            "cancelled" => {
                return Err(ToolError::conflict(
                    "ask_closed",
                    "this question was withdrawn (the turn was interrupted or moved on)",
                ));
            }
            _ => {}
        }
        let input: Value = serde_json::from_str(&input).unwrap_or(json!({}));
        let response = match decision {
            "deny" => {
                json!({ "behavior": "deny", "message": message.unwrap_or_else(|| "The person declined this.".into()) })
            }
            "allow" | "always" => {
                let mut updated = input;
                if kind == "question"
                    && let Some(answers) = answers
                {
                    updated["answers"] = answers;
                }
                let mut r = json!({ "behavior": "allow", "updatedInput": updated });
                if decision == "always" {
                    r["updatedPermissions"] = safe_permissions(
                        &serde_json::from_str(&suggestions).unwrap_or(Value::Null),
                    );
                }
                r
            }
            other => {
                return Err(ToolError::invalid(format!(
                    "decision must be allow, deny or always, not {other:?}"
                )));
            }
        };
        let live = self
            .live(&thread)
            .ok_or_else(|| ToolError::conflict("ask_closed", "the session that asked has ended"))?;
        let (reply, done) = oneshot::channel();
        live.tx
            .send(Command::Answer {
                ask: ask.to_string(),
                request,
                response,
                decision: decision.to_string(),
                by: caller.label(),
                reply,
            })
            .map_err(|_| ToolError::conflict("ask_closed", "the session that asked has ended"))?;
        done.await
            .map_err(|_| ToolError::conflict("ask_closed", "the session that asked has ended"))??;
        Ok(json!({ "ask": ask, "decision": decision, "already": false }))
    }

    /// Change a live session's permission mode (`default`, `acceptEdits`, `plan`; never bypass).
    pub async fn set_mode(&self, thread: &str, mode: &str) -> Result<(), ToolError> {
        if !matches!(mode, "default" | "acceptEdits" | "plan") {
            return Err(ToolError::invalid(
                "mode must be default, acceptEdits or plan",
            ));
        }
        let live = self.live(thread).ok_or_else(|| not_found(thread))?;
        let (reply, done) = oneshot::channel();
        live.tx
            .send(Command::Mode {
                mode: mode.to_string(),
                reply,
            })
            .map_err(|_| not_found(thread))?;
        done.await.map_err(|_| not_found(thread))?
    }

    /// Change a live session's model (`None`: the session's default).
    pub async fn set_model(&self, thread: &str, model: Option<String>) -> Result<(), ToolError> {
        let live = self.live(thread).ok_or_else(|| not_found(thread))?;
        let (reply, done) = oneshot::channel();
        live.tx
            .send(Command::Model { model, reply })
            .map_err(|_| not_found(thread))?;
        done.await.map_err(|_| not_found(thread))?
    }

    async fn update_run(&self, thread: &str, column: &'static str, value: Option<String>) {
        let t = thread.to_string();
        let _ = self
            .ctx
            .store()
            .write(move |tx| {
                tx.conn().execute(
                    &format!(
                        "UPDATE threads_runs SET {column} = ?1, updated_at = ?2 WHERE id = ?3"
                    ),
                    params![value, crate::now_ms(), t],
                )?;
                Ok(())
            })
            .await;
    }

    pub async fn interrupt(&self, thread: &str) -> Result<(), ToolError> {
        let live = self.live(thread).ok_or_else(|| not_found(thread))?;
        let (reply, done) = oneshot::channel();
        live.tx
            .send(Command::Interrupt { reply })
            .map_err(|_| not_found(thread))?;
        done.await.map_err(|_| not_found(thread))?
    }

    pub async fn stop(&self, thread: &str, reason: &str) -> Result<bool, ToolError> {
        let Some(live) = self.live(thread) else {
            return match self.info(thread).await? {
                Some(_) => Ok(false),
                None => Err(not_found(thread)),
            };
        };
        let (reply, done) = oneshot::channel();
        if live
            .tx
            .send(Command::Stop {
                reason: reason.to_string(),
                idle_only: false,
                reply,
            })
            .is_ok()
        {
            let _ = done.await;
        }
        Ok(true)
    }

    /// Stop a live session only if it is idle (asked of its actor, so a turn that is just
    /// ending counts as ended); whether it stopped.
    async fn stop_if_idle(&self, live: &Live, reason: &str) -> bool {
        let (reply, done) = oneshot::channel();
        let command = Command::Stop {
            reason: reason.to_string(),
            idle_only: true,
            reply,
        };
        live.tx.send(command).is_ok() && done.await.unwrap_or(false)
    }

    /// Stop every live session (vyred is shutting down).
    pub async fn stop_all(&self, reason: &str) {
        let threads: Vec<String> = self.live.lock().expect("live").keys().cloned().collect();
        for t in threads {
            let _ = self.stop(&t, reason).await;
        }
    }

    pub fn pids(&self) -> Vec<ProcessIds> {
        self.live
            .lock()
            .expect("live")
            .values()
            .map(|l| l.ids)
            .collect()
    }

    pub async fn info(&self, thread: &str) -> Result<Option<ThreadInfo>, ToolError> {
        let t = thread.to_string();
        let mut found = self
            .ctx
            .store()
            .read(move |c| Ok(query_threads(c, Some(&t))?))
            .await?;
        Ok(found.pop().map(|i| self.with_live(i)))
    }

    pub async fn list(&self) -> Result<Vec<ThreadInfo>, ToolError> {
        let all = self
            .ctx
            .store()
            .read(|c| Ok(query_threads(c, None)?))
            .await?;
        Ok(all.into_iter().map(|i| self.with_live(i)).collect())
    }

    fn with_live(&self, mut info: ThreadInfo) -> ThreadInfo {
        if let Some(live) = self.live(&info.thread) {
            info.live = true;
            info.state = live.state.lock().expect("state").state.clone();
        }
        info
    }

    /// The thread's waiting messages, oldest first.
    pub async fn queued(&self, thread: &str) -> Result<Vec<QueuedInfo>, ToolError> {
        let t = thread.to_string();
        Ok(self
            .ctx
            .store()
            .read(move |c| {
                let mut stmt = c.prepare(
                    "SELECT id, uuid, text, status, created_at FROM threads_inbox
                     WHERE thread = ?1 AND status IN ('queued', 'held') ORDER BY id",
                )?;
                let rows = stmt.query_map([t], |r| {
                    Ok(QueuedInfo {
                        queued: r.get(0)?,
                        uuid: r.get(1)?,
                        text: clean(&r.get::<_, String>(2)?),
                        status: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await?)
    }

    pub async fn asks(&self, thread: &str, open_only: bool) -> Result<Vec<AskInfo>, ToolError> {
        let t = thread.to_string();
        Ok(self
            .ctx
            .store()
            .read(move |c| {
                let mut stmt = c.prepare(
                    "SELECT id, thread, turn, kind, tool, summary, status, decision, input FROM threads_asks
                     WHERE thread = ?1 AND (?2 = 0 OR status = 'open') ORDER BY created_at",
                )?;
                let rows = stmt.query_map(params![t, open_only as i64], |r| {
                    Ok(AskInfo {
                        ask: r.get(0)?,
                        thread: r.get(1)?,
                        turn: r.get(2)?,
                        kind: r.get(3)?,
                        tool: r.get(4)?,
                        summary: r.get(5)?,
                        status: r.get(6)?,
                        decision: r.get(7)?,
                        input: r
                            .get::<_, Option<String>>(8)?
                            .and_then(|t| serde_json::from_str(&t).ok())
                            .map(|v| clean_value(&v))
                            .unwrap_or(Value::Null),
                    })
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await?)
    }
}

/// `updatedPermissions` for "always": the suggestions as rules in `localSettings`, without any
/// switch to a mode Vyre does not offer (never bypassPermissions).
pub fn safe_permissions(suggestions: &Value) -> Value {
    let kept: Vec<Value> = suggestions
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| match s["type"].as_str() {
            Some("addRules") => {
                let mut s = s.clone();
                s["destination"] = json!("localSettings");
                Some(s)
            }
            Some("setMode") => match s["mode"].as_str() {
                Some("default" | "acceptEdits" | "plan") => Some(s.clone()),
                _ => None,
            },
            Some("addDirectories") => Some(s.clone()),
            _ => None,
        })
        .collect();
    Value::Array(kept)
}

fn query_threads(
    c: &rusqlite::Connection,
    thread: Option<&str>,
) -> rusqlite::Result<Vec<ThreadInfo>> {
    let mut stmt = c.prepare(
        "SELECT id, provider, purpose, model, cwd, project, agent, auth, mode, status, turns, total_cost_usd, stopped_reason, created_at, updated_at
         FROM threads_runs WHERE (?1 IS NULL OR id = ?1) ORDER BY updated_at DESC",
    )?;
    let rows = stmt.query_map([thread], |r| {
        Ok(ThreadInfo {
            thread: r.get(0)?,
            provider: r.get(1)?,
            purpose: r.get(2)?,
            model: r.get(3)?,
            cwd: r.get(4)?,
            project: r.get(5)?,
            agent: r.get(6)?,
            auth: r.get(7)?,
            mode: r.get(8)?,
            state: r.get(9)?,
            live: false,
            turns: r.get(10)?,
            total_cost_usd: r.get(11)?,
            stopped_reason: r.get(12)?,
            created_at: r.get(13)?,
            updated_at: r.get(14)?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_never_grants_bypass() {
        let s = json!([
            { "type": "addRules", "rules": [{ "toolName": "Bash", "ruleContent": "ls" }], "behavior": "allow", "destination": "session" },
            { "type": "setMode", "mode": "bypassPermissions", "destination": "session" },
            { "type": "setMode", "mode": "acceptEdits", "destination": "session" },
            { "type": "replaceRules", "rules": [], "destination": "userSettings" }
        ]);
        let kept = safe_permissions(&s);
        assert_eq!(kept.as_array().unwrap().len(), 2);
        assert_eq!(kept[0]["destination"], "localSettings");
        assert_eq!(kept[1]["mode"], "acceptEdits");
        assert!(!kept.to_string().contains("bypass"));
    }
}
