//! A live session's handle: what the Switchboard keeps of an actor task. Cheap to clone: the
//! actor's command sender, its process ids, the agent it runs for, and the state readers show.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::error::{Error, Result};
use super::types::{Decision, PermissionMode, SendMode, Sent, ThreadStatus};
use crate::kernel::contracts::provider::ProcessIds;

/// Words for a thread.
#[derive(Debug, Clone, Default)]
pub struct Message {
    pub text: String,
    /// An idempotency key (the user message's uuid); one is made when none is given.
    pub uuid: Option<String>,
    /// While a turn runs: steer into it, or queue for its end.
    pub mode: SendMode,
    /// Image content blocks, sent before the words.
    pub images: Vec<Value>,
    /// Vyre's own words (a greeting, an instruction), not the person's: the timeline marks them
    /// so, and surfaces hide them by default. Only modules send them.
    pub internal: bool,
    /// A person sent them (not a session, an agent or a module): what Vyre may learn from.
    pub person: bool,
}

impl Message {
    /// Plain words, steered into a running turn.
    pub fn words(text: impl Into<String>) -> Message {
        Message {
            text: text.into(),
            ..Message::default()
        }
    }
}

/// A person's answer, checked and shaped for the provider by the Switchboard.
pub(super) struct Answer {
    pub ask: String,
    pub request: String,
    pub response: Value,
    pub decision: Decision,
    pub by: String,
    /// Where the person answered, when not in an app (`notification`).
    pub via: Option<&'static str>,
}

pub(super) type Reply<T> = oneshot::Sender<Result<T>>;

/// What the Switchboard asks of an actor.
pub(super) enum Command {
    /// The person decided a call the Gate held.
    Release {
        release: super::actor::Release,
        reply: Reply<()>,
    },
    Send {
        message: Message,
        uuid: String,
        reply: Reply<Sent>,
    },
    /// Send a queued message at once.
    SendNow {
        queued: i64,
        reply: Reply<Sent>,
    },
    Answer {
        answer: Answer,
        reply: Reply<()>,
    },
    Interrupt {
        reply: Reply<()>,
    },
    Mode {
        mode: PermissionMode,
        reply: Reply<()>,
    },
    Model {
        model: Option<String>,
        reply: Reply<()>,
    },
    Effort {
        effort: Option<String>,
        reply: Reply<()>,
    },
    /// A subagent's slot came free (sent by the session's own waiting task).
    SlotGranted {
        request: String,
    },
    Stop {
        reason: String,
        /// Only when no turn runs and no question is open; the reply says whether it stopped.
        idle_only: bool,
        reply: oneshot::Sender<bool>,
    },
}

/// A live session's state as readers see it, and since when.
pub(super) struct Shown {
    pub(super) status: ThreadStatus,
    pub(super) since: Instant,
}

impl Shown {
    pub(super) fn new(status: ThreadStatus) -> Arc<Mutex<Shown>> {
        Arc::new(Mutex::new(Shown {
            status,
            since: Instant::now(),
        }))
    }
}

#[derive(Clone)]
pub(super) struct Handle {
    pub(super) tx: mpsc::UnboundedSender<Command>,
    pub(super) ids: ProcessIds,
    /// The agent this session runs for, and its record's `updated_at` at launch.
    pub(super) agent: Option<(String, i64)>,
    // std Mutex: read by tools, written by the actor, never held across an await.
    pub(super) shown: Arc<Mutex<Shown>>,
}

impl Handle {
    pub(super) fn status(&self) -> ThreadStatus {
        self.shown.lock().expect("shown").status
    }

    /// Since when the session has been idle, if it is.
    pub(super) fn idle_since(&self) -> Option<Instant> {
        let shown = self.shown.lock().expect("shown");
        (shown.status == ThreadStatus::Idle).then_some(shown.since)
    }

    /// Ask the actor and wait for its reply; `gone`: the error when it has ended.
    pub(super) async fn request<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<T>) -> Command,
        gone: impl Fn() -> Error,
    ) -> Result<T> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(command(reply)).map_err(|_| gone())?;
        answer.await.map_err(|_| gone())
    }

    /// Send words (a uuid is made when none is given).
    pub(super) async fn send(&self, mut message: Message) -> Result<Sent> {
        let uuid = message
            .uuid
            .take()
            .unwrap_or_else(crate::kernel::ids::uuid_v4);
        let gone = || Error::NotLive("the session just ended");
        let (reply, answer) = oneshot::channel();
        let command = Command::Send {
            message,
            uuid,
            reply,
        };
        self.tx.send(command).map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    /// Stop the session (only if idle, asked of its actor so a turn just ending counts as
    /// ended); whether it stopped.
    pub(super) async fn stop(&self, reason: &str, idle_only: bool) -> bool {
        let (reply, done) = oneshot::channel();
        let command = Command::Stop {
            reason: reason.to_string(),
            idle_only,
            reply,
        };
        self.tx.send(command).is_ok() && done.await.unwrap_or(false)
    }
}
