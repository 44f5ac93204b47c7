//! The Switchboard's errors, typed where they happen and said to a caller in one place: the
//! `From<Error> for ToolError` below (its code, its kind, its words).

use std::path::PathBuf;

use crate::kernel::contracts::provider::{ProviderError, Unresumable};
use crate::kernel::store::StoreError;
use crate::kernel::tools::{ErrorKind, ToolError};

/// What a live session was asked to do when its provider refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Send,
    Answer,
    Interrupt,
    Mode,
    Model,
    Effort,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("there is no thread {0:?}; threads.list shows them")]
    UnknownThread(String),
    /// The thread's session is not (or no longer) running; why.
    #[error("{0}")]
    NotLive(&'static str),
    /// The session's provider refused a command (its own words: typed provider errors are the
    /// provider contract's).
    #[error("{error}")]
    Provider { op: Op, error: ProviderError },
    #[error("text must not be empty")]
    EmptyText,
    #[error("images go with steer or a new turn; the queue keeps words only")]
    ImagesInQueue,
    #[error("{0}")]
    BadMode(String),
    #[error("there is no ask {0:?}")]
    UnknownAsk(String),
    #[error("a session cannot answer its own question")]
    OwnAsk,
    /// The ask cannot be answered any more; why.
    #[error("{0}")]
    AskClosed(&'static str),
    /// The queued message was sent or taken back; what is known.
    #[error("{0}")]
    NotQueued(&'static str),
    #[error("there is no such queued message")]
    UnknownQueued,
    #[error("agent {agent:?} may not draw on project {project:?}; agents.update sets its projects")]
    ProjectNotAllowed { agent: String, project: String },
    #[error("cwd {0:?} must be an existing folder, given as an absolute path")]
    BadFolder(PathBuf),
    #[error("{}", unresumable(thread, cwd, why))]
    Unresumable {
        thread: String,
        cwd: PathBuf,
        why: Unresumable,
    },
    #[error(
        "agent {agent:?}'s budget of ${budget} a thread is spent (${spent:.4} so far); start a new thread, or raise auth.budget_usd with agents.update"
    )]
    BudgetSpent {
        agent: String,
        budget: f64,
        spent: f64,
    },
    #[error(
        "agent {agent:?} has a budget, but {provider} gives no price for {what}, so the budget could not be kept; name a priced model (sessions.prices) or remove auth.budget_usd"
    )]
    BudgetUnkept {
        agent: String,
        provider: String,
        what: String,
    },
    #[error("all {0} live sessions are busy (sessions.max_live); try again when one finishes")]
    Busy(usize),
    #[error("the session could not start: {0}")]
    StartFailed(ProviderError),
    /// An adopted session's folder is unknown or gone; why.
    #[error("{0}")]
    NoFolder(String),
    #[error("thread {thread} has no tool call {call:?}")]
    UnknownCall { thread: String, call: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What another module's tool or the provider router said.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A blocking task failed (a panic reading a file).
    #[error("a blocking task failed: {0}")]
    Task(String),
}

fn unresumable(thread: &str, cwd: &std::path::Path, why: &Unresumable) -> String {
    match why {
        Unresumable::NoHistory { looked_in } => format!(
            "thread {thread} cannot resume: its transcript is gone (looked in {}). Start a new thread in the same folder instead: `vyre threads start --cwd {}` (threads.start {{\"cwd\": {:?}}})",
            looked_in.display(),
            cwd.display(),
            cwd.display().to_string()
        ),
        Unresumable::UnknownMessage { uuid } => format!(
            "thread {thread} has no message {uuid:?} to go back to; the uuids are those threads.send answered and thread.turn events carry"
        ),
        Unresumable::NoRewind { provider } => format!(
            "thread {thread} runs on {provider}, which cannot go back to an earlier message; fork a new thread from it instead (threads.fork {{\"thread\": {thread:?}, \"uuid\": ...}})"
        ),
    }
}

impl From<tokio::task::JoinError> for Error {
    fn from(e: tokio::task::JoinError) -> Self {
        Error::Task(e.to_string())
    }
}

/// The one place a Switchboard error becomes what a caller reads.
impl From<Error> for ToolError {
    fn from(e: Error) -> ToolError {
        let message = e.to_string();
        let (kind, code): (ErrorKind, &'static str) = match &e {
            Error::Store(_) | Error::Tool(_) | Error::Task(_) => {
                return match e {
                    Error::Store(e) => e.into(),
                    Error::Tool(e) => e,
                    _ => ToolError::internal(message),
                };
            }
            Error::UnknownThread(_) => (ErrorKind::NotFound, "unknown_thread"),
            Error::NotLive(_) => (ErrorKind::Conflict, "not_live"),
            Error::Provider {
                error: ProviderError::BadAnswer(_),
                ..
            } => (ErrorKind::InvalidInput, "invalid_answer"),
            Error::Provider { op, .. } => (
                ErrorKind::Conflict,
                match op {
                    Op::Send => "not_live",
                    Op::Answer => "ask_closed",
                    Op::Interrupt => "interrupt_failed",
                    Op::Mode => "mode_failed",
                    Op::Model => "model_failed",
                    Op::Effort => "effort_failed",
                },
            ),
            Error::EmptyText | Error::ImagesInQueue | Error::BadMode(_) | Error::BadFolder(_) => {
                (ErrorKind::InvalidInput, "invalid_input")
            }
            Error::UnknownAsk(_) => (ErrorKind::NotFound, "unknown_ask"),
            Error::OwnAsk => (ErrorKind::Refused, "own_ask"),
            Error::AskClosed(_) => (ErrorKind::Conflict, "ask_closed"),
            Error::NotQueued(_) => (ErrorKind::Conflict, "not_queued"),
            Error::UnknownQueued => (ErrorKind::NotFound, "unknown_queued"),
            Error::ProjectNotAllowed { .. } => (ErrorKind::Refused, "project_not_allowed"),
            Error::Unresumable { why, .. } => match why {
                Unresumable::NoHistory { .. } => (ErrorKind::Conflict, "no_history"),
                Unresumable::UnknownMessage { .. } => (ErrorKind::NotFound, "unknown_message"),
                Unresumable::NoRewind { .. } => (ErrorKind::Conflict, "no_rewind"),
            },
            Error::BudgetSpent { .. } => (ErrorKind::Refused, "budget_spent"),
            Error::BudgetUnkept { .. } => (ErrorKind::Conflict, "budget_unkept"),
            Error::Busy(_) => (ErrorKind::Busy, "busy"),
            Error::StartFailed(_) => (ErrorKind::Unavailable, "start_failed"),
            Error::NoFolder(_) => (ErrorKind::Conflict, "no_folder"),
            Error::UnknownCall { .. } => (ErrorKind::NotFound, "unknown_call"),
        };
        ToolError::new(kind, code, message)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_keeps_its_code_and_kind() {
        let cases = [
            (
                Error::UnknownThread("t".into()),
                "unknown_thread",
                ErrorKind::NotFound,
            ),
            (
                Error::NotLive("the session just ended"),
                "not_live",
                ErrorKind::Conflict,
            ),
            (
                Error::Provider {
                    op: Op::Answer,
                    error: ProviderError::Gone,
                },
                "ask_closed",
                ErrorKind::Conflict,
            ),
            (
                Error::Provider {
                    op: Op::Answer,
                    error: ProviderError::BadAnswer("\"Seats\" takes a whole number".into()),
                },
                "invalid_answer",
                ErrorKind::InvalidInput,
            ),
            (Error::EmptyText, "invalid_input", ErrorKind::InvalidInput),
            (Error::Busy(3), "busy", ErrorKind::Busy),
            (Error::OwnAsk, "own_ask", ErrorKind::Refused),
            (
                Error::BudgetSpent {
                    agent: "juno".into(),
                    budget: 1.0,
                    spent: 1.2,
                },
                "budget_spent",
                ErrorKind::Refused,
            ),
        ];
        for (e, code, kind) in cases {
            let said = e.to_string();
            let t = ToolError::from(e);
            assert_eq!((t.code.as_ref(), t.kind), (code, kind));
            assert_eq!(t.message, said);
        }
        let inner = ToolError::conflict("x", "y");
        assert_eq!(ToolError::from(Error::Tool(inner)).code, "x");
    }
}
