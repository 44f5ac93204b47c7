//! The inputs and outputs of the sessions layer's tools.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kernel::contracts::provider::ProcessIds;
use crate::kernel::tools::ToolError;
use crate::modules::sessions::switchboard::{AskInfo, Decision, SendMode, ThreadInfo};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesInput {
    pub(crate) thread: String,
    /// Words of the path, in order (`src main` finds `src/main.rs`); none lists the shallowest.
    #[serde(default)]
    pub(crate) query: Option<String>,
    /// At most this many (1 to 100, default 20).
    #[serde(default)]
    pub(crate) limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartInput {
    /// The folder the session works in (absolute).
    pub(crate) cwd: PathBuf,
    /// A first message.
    #[serde(default)]
    pub(crate) text: Option<String>,
    /// The first message is Vyre's own instruction, not the person's words: the timeline marks
    /// it `internal` and surfaces hide it. Only Vyre's modules may say so.
    #[serde(default)]
    pub(crate) internal: bool,
    #[serde(default)]
    pub(crate) model: Option<String>,
    /// How hard the model thinks: one of the provider's `efforts` (`sessions.providers`);
    /// left out, the provider's default.
    #[serde(default)]
    pub(crate) effort: Option<String>,
    /// chat, agent, project, capsule, job, memory, planner or learn.
    #[serde(default)]
    #[schemars(extend("enum" = ["chat", "agent", "project", "capsule", "job", "memory", "planner", "learn", null]))]
    pub(crate) purpose: Option<String>,
    #[serde(default)]
    pub(crate) project: Option<String>,
    /// Which provider (default claude).
    #[serde(default)]
    pub(crate) provider: Option<String>,
    #[serde(default)]
    pub(crate) agent: Option<String>,
    /// Run the session in a new git worktree of `cwd`'s repository, on its own branch: `true`
    /// for a branch Vyre names from the first words (`vyre/...`), or the branch's name (made
    /// from HEAD, or checked out when it exists).
    #[serde(default)]
    pub(crate) worktree: Option<crate::modules::sessions::worktree::Wish>,
}

#[derive(Serialize, JsonSchema)]
pub struct Started {
    pub(crate) thread: String,
}

/// Images go with steer or a new turn: the queue keeps words only.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [
    { "properties": { "mode": { "enum": ["steer", null] } } },
    { "properties": { "mode": { "const": "queue" }, "images": { "maxItems": 0 } } },
]))]
pub struct SendInput {
    pub(crate) thread: String,
    #[schemars(pattern(crate::kernel::tools::shape::NOT_BLANK))]
    pub(crate) text: String,
    /// An idempotency key, the user message's uuid.
    #[serde(default)]
    pub(crate) uuid: Option<String>,
    /// While a turn runs: steer (join it, the default) or queue (after it).
    #[serde(default)]
    pub(crate) mode: Option<SendMode>,
    /// Images to send with the words.
    #[serde(default)]
    pub(crate) images: Vec<Image>,
    /// Vyre's own instruction, not the person's words (see threads.start). Only Vyre's modules
    /// may say so.
    #[serde(default)]
    pub(crate) internal: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Image {
    /// image/png, image/jpeg, image/gif or image/webp.
    #[schemars(extend("enum" = ["image/png", "image/jpeg", "image/gif", "image/webp"]))]
    pub(crate) media_type: String,
    /// The image, base64.
    #[schemars(pattern(crate::kernel::tools::shape::BASE64))]
    pub(crate) data: String,
}

impl Image {
    /// The Messages API's image block, after checking what can be checked here.
    pub(crate) fn block(&self) -> Result<Value, ToolError> {
        if !matches!(
            self.media_type.as_str(),
            "image/png" | "image/jpeg" | "image/gif" | "image/webp"
        ) {
            return Err(ToolError::invalid(
                "an image must be image/png, image/jpeg, image/gif or image/webp",
            ));
        }
        let base64 = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=');
        if self.data.is_empty() || !self.data.bytes().all(base64) {
            return Err(ToolError::invalid("an image's data must be base64"));
        }
        Ok(
            serde_json::json!({ "type": "image", "source": { "type": "base64", "media_type": self.media_type, "data": self.data } }),
        )
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkInput {
    pub(crate) thread: String,
    /// Fork from this message (its uuid); the whole history when left out.
    #[serde(default)]
    pub(crate) uuid: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RewindInput {
    pub(crate) thread: String,
    /// The user message (its uuid, from threads.send or thread.turn) to continue from.
    pub(crate) uuid: String,
    /// Also put back the files the session changed from that message's turn on, as they were
    /// before it (a person only; refused, with nothing done, when one changed again since).
    #[serde(default)]
    pub(crate) files: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueuedInput {
    /// The queued message's id (from threads.send or thread.queued).
    pub(crate) queued: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    pub(crate) queued: i64,
    #[schemars(pattern(crate::kernel::tools::shape::NOT_BLANK))]
    pub(crate) text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerInput {
    pub(crate) ask: String,
    /// allow, deny or always.
    pub(crate) decision: Decision,
    /// For a question: the chosen labels keyed by the question text.
    #[serde(default)]
    pub(crate) answers: Option<Value>,
    /// For a deny: what to tell Claude.
    #[serde(default)]
    pub(crate) message: Option<String>,
    /// Where the person answered, when it was not the app: `notification` (a push
    /// notification's button). Told in `ask.answered`; who answered is the caller, never this.
    #[serde(default)]
    pub(crate) via: Option<AnswerVia>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AnswerVia {
    Notification,
}

impl AnswerVia {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerVia::Notification => "notification",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadInput {
    pub(crate) thread: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeInput {
    pub(crate) thread: String,
    /// default, acceptEdits or plan.
    #[schemars(pattern(crate::kernel::tools::shape::PICKABLE_MODE))]
    pub(crate) mode: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelInput {
    pub(crate) thread: String,
    #[serde(default)]
    pub(crate) model: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EffortInput {
    pub(crate) thread: String,
    /// One of the thread's provider's `efforts` (`sessions.providers`); left out, the
    /// provider's default.
    #[serde(default)]
    pub(crate) effort: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Detail {
    #[serde(flatten)]
    pub(crate) info: ThreadInfo,
    #[serde(flatten)]
    pub(crate) about: crate::modules::sessions::about::About,
    pub(crate) asks: Vec<Ask>,
    /// Messages waiting for the turn's end (`queued`) or for a terminal to let go (`held`).
    pub(crate) queued: Vec<crate::modules::sessions::switchboard::QueuedInfo>,
    /// The worktree it runs in, when it was started in one.
    pub(crate) worktree: Option<crate::modules::sessions::worktree::Worktree>,
}

/// Which threads `threads.list` lists: every one, or (given any field) those that belong to a
/// project: started in `project`, run in one of `folders`, or one of `threads`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// Only the threads started in this project, and those of `folders` and `threads`.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub project: Option<String>,
    /// Only the threads that ran in one of these folders or inside one, and those of
    /// `project` and `threads`.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub folders: Option<Vec<String>>,
    /// Only these threads, and those of `project` and `folders`.
    #[serde(default)]
    #[schemars(length(max = 10000))]
    pub threads: Option<Vec<String>>,
}

impl ListInput {
    pub fn filters(&self) -> bool {
        self.project.is_some() || self.folders.is_some() || self.threads.is_some()
    }
}

/// A thread in `threads.list` (and `agents.threads`, which reads it back).
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Listed {
    #[serde(flatten)]
    pub(crate) info: ThreadInfo,
    #[serde(flatten)]
    pub(crate) about: crate::modules::sessions::about::About,
    /// The branch of the worktree it runs in, while that worktree is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) branch: Option<String>,
}

/// An ask in `threads.get`, with what a person reads before answering it.
#[derive(Serialize, JsonSchema)]
pub struct Ask {
    #[serde(flatten)]
    pub(crate) ask: AskInfo,
    /// What answering `always` would write; null when it would write nothing.
    pub(crate) rule: Option<crate::modules::sessions::always::Always>,
    /// Why the call deserves a second look (it deletes or discards something), if it does.
    pub(crate) destructive: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Pids {
    pub(crate) pids: Vec<i32>,
    pub(crate) pgids: Vec<i32>,
    pub(crate) sids: Vec<i32>,
    pub(crate) processes: Vec<ProcessIds>,
}

#[derive(Serialize, JsonSchema)]
pub struct Done {
    pub(crate) ok: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct Warmed {
    pub(crate) thread: String,
    /// True when its session was started now; false when it was already running (or a
    /// terminal has it).
    pub(crate) resumed: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseInput {
    #[schemars(length(min = 1, max = 200))]
    pub thread: String,
    /// The held tool call (`tool_use_id`).
    #[schemars(length(min = 1, max = 200))]
    pub call: String,
    /// Let it go (true) or refuse it.
    pub allow: bool,
    /// An edit: the input field replaced ...
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub field: Option<String>,
    /// ... and its new text.
    #[serde(default)]
    #[schemars(length(max = 200_000))]
    pub text: Option<String>,
    /// What Claude is told of a refusal.
    #[serde(default)]
    #[schemars(length(max = 4000))]
    pub message: Option<String>,
}
