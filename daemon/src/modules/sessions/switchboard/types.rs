//! The Switchboard's words, typed: what a thread is and shows, how a send goes in and what
//! became of it, a person's decision on an ask. Each is an enum from the tool's input to the
//! row and back; serde spells it at the edge (the tools' JSON, the events), the rows module in
//! the store.

use std::path::PathBuf;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Strings as the store and the events spell them, for the enums below.
macro_rules! spelled {
    ($ty:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $text),+ }
            }
            fn parse(s: &str) -> Option<$ty> {
                match s { $($text => Some($ty::$variant),)+ _ => None }
            }
        }
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl rusqlite::types::ToSql for $ty {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }
        impl rusqlite::types::FromSql for $ty {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let s = v.as_str()?;
                $ty::parse(s).ok_or_else(|| {
                    rusqlite::types::FromSqlError::Other(format!("not a {}: {s:?}", stringify!($ty)).into())
                })
            }
        }
    };
}

/// A thread's state: its row's `status`, and what a live session shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThreadStatus {
    /// Its process is being launched.
    Starting,
    /// Live, no turn running.
    Idle,
    /// A turn runs.
    Running,
    /// A turn runs and waits on a person's answer.
    Waiting,
    /// The last launch or turn failed.
    Failed,
    /// No process: a resume starts one.
    Stopped,
}

spelled!(ThreadStatus {
    Starting => "starting",
    Idle => "idle",
    Running => "running",
    Waiting => "waiting",
    Failed => "failed",
    Stopped => "stopped",
});

/// How a send waits while a turn runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SendMode {
    /// Join the running turn at its next step.
    #[default]
    Steer,
    /// Wait for the running turn's end, in Vyre's queue.
    Queue,
}

/// What became of a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// A new turn.
    Turn,
    /// Joined the running turn.
    Steer,
    /// Waits in the queue (for the turn's end, or for a terminal to let go).
    Queued,
    /// A queued message sent at once.
    Now,
}

spelled!(Via {
    Turn => "turn",
    Steer => "steer",
    Queued => "queued",
    Now => "now",
});

/// A session's permission mode (never bypass).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PermissionMode {
    #[default]
    #[serde(rename = "default")]
    Default,
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    #[serde(rename = "plan")]
    Plan,
}

spelled!(PermissionMode {
    Default => "default",
    AcceptEdits => "acceptEdits",
    Plan => "plan",
});

impl FromStr for PermissionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PermissionMode::parse(s).ok_or_else(|| "mode must be default, acceptEdits or plan".into())
    }
}

/// A person's answer to an ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Deny,
    /// Allow, and a rule so the same call is not asked again.
    Always,
}

impl Decision {
    pub fn outcome(self) -> Outcome {
        match self {
            Decision::Allow => Outcome::Allow,
            Decision::Deny => Outcome::Deny,
            Decision::Always => Outcome::Always,
        }
    }
}

/// How an ask was closed: a person's decision, or withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Allow,
    Deny,
    Always,
    /// Withdrawn (the turn was interrupted or ended, the session stopped).
    Cancelled,
}

spelled!(Outcome {
    Allow => "allow",
    Deny => "deny",
    Always => "always",
    Cancelled => "cancelled",
});

/// Where an ask stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AskStatus {
    Open,
    Answered,
    Cancelled,
}

spelled!(AskStatus {
    Open => "open",
    Answered => "answered",
    Cancelled => "cancelled",
});

/// Where a message in a thread's inbox stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InboxStatus {
    /// Waits for the running turn's end.
    Queued,
    /// Waits for a terminal writing the session to let go.
    Held,
    /// Handed to the session.
    Taken,
    /// Taken back by a person.
    Unqueued,
    /// Handed to the terminal's own session by its Stop hook.
    Delivered,
}

spelled!(InboxStatus {
    Queued => "queued",
    Held => "held",
    Taken => "taken",
    Unqueued => "unqueued",
    Delivered => "delivered",
});

/// What to start.
#[derive(Debug, Clone)]
pub struct StartRequest {
    pub cwd: PathBuf,
    pub model: Option<String>,
    /// How hard the model thinks (one of the provider's efforts); `None`: its default.
    pub effort: Option<String>,
    pub purpose: String,
    pub project: Option<String>,
    pub provider: String,
    pub agent: Option<String>,
    pub mode: PermissionMode,
}

/// A thread as `threads.get` and `threads.list` show it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ThreadInfo {
    pub thread: String,
    pub provider: String,
    pub purpose: String,
    pub model: Option<String>,
    /// The reasoning effort asked for; `null`: the provider's default.
    pub effort: Option<String>,
    pub cwd: String,
    pub project: Option<String>,
    pub agent: Option<String>,
    pub auth: String,
    pub mode: PermissionMode,
    pub state: ThreadStatus,
    pub live: bool,
    pub turns: i64,
    pub total_cost_usd: f64,
    pub stopped_reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What became of a send.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Sent {
    pub uuid: String,
    /// `turn` (a new turn), `steer` (joined the running turn), `queued` (waits for this turn's
    /// end) or `now` (a queued message sent at once).
    pub via: Via,
    /// The `threads_inbox` row, for a queued message.
    pub queued: Option<i64>,
}

/// An open or past permission question.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AskInfo {
    pub ask: String,
    pub thread: String,
    pub turn: Option<String>,
    pub kind: String,
    pub tool: String,
    pub summary: String,
    pub status: AskStatus,
    pub decision: Option<Outcome>,
    /// What the tool was to run with (a command, a file, AskUserQuestion's questions and
    /// options), exactly, with only the credentials in it masked (`redact::mask`).
    pub input: Value,
}

/// A message waiting in a thread's inbox.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QueuedInfo {
    pub queued: i64,
    pub uuid: String,
    pub text: String,
    /// `queued` (for the turn's end) or `held` (for a terminal to let go).
    pub status: InboxStatus,
    pub created_at: i64,
}

/// A message held for a session a terminal is writing.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Held {
    pub queued: i64,
    pub uuid: String,
    pub text: String,
}

/// Strings that go into events pass here: each credential in one is masked, the rest kept, so
/// a person sees the command they approve (`echo hi # sk-ant-…[redacted]`) and the event log
/// holds no secret (`redact::mask`).
pub(crate) fn clean(s: &str) -> String {
    crate::kernel::redact::mask(s).into_owned()
}

/// A JSON value for an event: every string in it passes [`clean`].
pub(crate) fn clean_value(v: &Value) -> Value {
    crate::kernel::redact::mask_value(v)
}

/// `extra`'s fields added to `payload`.
pub(super) fn merge(payload: &mut Value, extra: &Value) {
    if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
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
            Some("setMode") => match s["mode"].as_str().map(PermissionMode::from_str) {
                Some(Ok(_)) => Some(s.clone()),
                _ => None,
            },
            Some("addDirectories") => Some(s.clone()),
            _ => None,
        })
        .collect();
    Value::Array(kept)
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

    #[test]
    fn the_enums_are_spelled_the_same_in_json_and_in_the_store() {
        for s in [
            ThreadStatus::Starting,
            ThreadStatus::Waiting,
            ThreadStatus::Stopped,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for v in [Via::Turn, Via::Steer, Via::Queued, Via::Now] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
        for m in [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
        ] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
            assert_eq!(m.as_str().parse::<PermissionMode>(), Ok(m));
        }
        assert!("bypassPermissions".parse::<PermissionMode>().is_err());
        for d in [Decision::Allow, Decision::Deny, Decision::Always] {
            let spelled = d.outcome().as_str();
            assert_eq!(
                serde_json::from_value::<Decision>(json!(spelled)).unwrap(),
                d
            );
        }
        assert!(serde_json::from_value::<Decision>(json!("cancelled")).is_err());
        assert_eq!(
            serde_json::from_value::<SendMode>(json!("queue")).unwrap(),
            SendMode::Queue
        );
        assert!(serde_json::from_value::<SendMode>(json!("later")).is_err());
    }
}
