//! The provider contract (ADR 0030 section 2): what every driver gives the Switchboard. Claude
//! Code is the first provider; others (Codex, ACP agents) arrive as modules that declare
//! `"does": {"providers": [...]}` and register a [`Provider`].

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::secret::Secret;

/// What a session runs on: how its credential reaches the provider's program.
#[derive(Debug, Clone)]
pub enum Credential {
    /// Claude Code's own login on this machine; nothing is passed.
    Login,
    /// An API key, on fd 3 (`CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR`).
    ApiKey(Secret),
    /// A subscription's setup token, on fd 3 (`CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR`).
    SetupToken(Secret),
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a provider can do.
#[derive(Debug, Clone, Serialize, Default, JsonSchema)]
pub struct Capabilities {
    pub streaming: bool,
    pub resume: bool,
    pub interrupt: bool,
    pub modes: bool,
    pub questions: bool,
    pub transcripts: bool,
}

/// How to launch (or resume) one session.
#[derive(Debug, Clone)]
pub struct Launch {
    pub id: String,
    pub resume: bool,
    /// Start as a fork of this thread (a new id, a copy of its history).
    pub fork_from: Option<String>,
    /// Resume with the history cut after this message uuid (a rewind).
    pub resume_at: Option<String>,
    pub cwd: PathBuf,
    pub model: Option<String>,
    /// How hard the model thinks (one of the provider's [`Provider::efforts`]); `None`: the
    /// program's default.
    pub effort: Option<String>,
    pub mode: String,
    pub append_system_prompt: Option<String>,
    /// `Some(false)`: render the system prompt fresh on every request instead of reusing the
    /// one recorded in the transcript (which a resume would otherwise keep, append and all).
    pub system_prompt_snapshot: Option<bool>,
    pub credential: Credential,
    pub budget_usd: Option<f64>,
    pub plugin_dirs: Vec<PathBuf>,
    /// Extra `VYRE_*` variables for the child.
    pub env: Vec<(String, std::ffi::OsString)>,
    /// Where the provider records the session's processes (as thread `id`) the moment they
    /// exist, before the session can run anything: the peer check names them from then on.
    pub processes: Option<crate::kernel::peer::SessionProcesses>,
    /// Vyre's own tools, served by vyred to the session through the provider's own channel
    /// (no helper process per session); `None` offers none.
    pub host_tools: Option<HostTools>,
}

/// Tools the host (vyred) serves a session itself, as that session: for Claude Code an
/// in-process ("sdk") MCP server over the control protocol, its tools listed at `initialize`.
#[derive(Clone)]
pub struct HostTools {
    /// The MCP server's name. For Claude Code it is the harness plugin's own server's
    /// (`plugin:vyre:vyre`): the CLI then serves the plugin's tools from vyred instead of
    /// starting the plugin's `vyre mcp`, and the tools keep their names.
    pub server: String,
    /// Shared by every session (the schemas are large: one copy, not one per session).
    pub tools: std::sync::Arc<Vec<HostTool>>,
    /// Run one call (by the tool's MCP name) as the session.
    pub call: std::sync::Arc<dyn Fn(HostCall) -> BoxFuture<'static, HostAnswer> + Send + Sync>,
    /// The harness's answer to the session's hooks named in [`HOOKS_BY_HOST`] (the event, the
    /// hook's input, the provider's process), given by vyred itself instead of the plugin's
    /// command hooks: Claude Code's hook output, or nothing to add.
    pub hooks: Option<HostHooks>,
}

pub type HostHooks = std::sync::Arc<
    dyn Fn(&'static str, Value, Option<i32>) -> BoxFuture<'static, Option<Value>> + Send + Sync,
>;

/// The hooks vyred answers itself for the sessions it runs: each one the plugin's command would
/// otherwise run as a shell and a `vyre hook` process, PreToolUse before every Bash and MCP
/// call. SessionStart cannot be one: Claude Code runs it as it starts, before `initialize`.
pub const HOOKS_BY_HOST: [&str; 3] = ["UserPromptSubmit", "PreToolUse", "Stop"];

/// Set in a session's environment when vyred answers [`HOOKS_BY_HOST`] itself: the harness
/// plugin's command hooks then exit at once (`harness/hooks/hooks.json`), SessionStart's too,
/// whose binding and brief the harness gives at the first prompt of each of the session's
/// processes instead (a `vyre hook` process cost a new or resumed session ~18 ms at its start).
pub const HOOKS_BY_HOST_ENV: &str = "VYRE_HOOKS_BY_HOST";

impl std::fmt::Debug for HostTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostTools")
            .field("server", &self.server)
            .field("tools", &self.tools.len())
            .finish()
    }
}

/// One tool as an MCP server lists it.
#[derive(Debug, Clone, Serialize)]
pub struct HostTool {
    /// Its MCP name (`threads_list` for `threads.list`: MCP names hold no dots).
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

/// A call of a host tool by a session.
#[derive(Debug, Clone)]
pub struct HostCall {
    /// The tool's MCP name.
    pub name: String,
    pub input: Value,
    /// The session's process that made it (the provider's program), when known.
    pub pid: Option<i32>,
}

/// What a host tool answered: text for the model, and whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostAnswer {
    pub text: String,
    pub is_error: bool,
}

/// pid, process group and session of a live session's process.
#[derive(Debug, Clone, Copy, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct ProcessIds {
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// The pid namespace of the session's sandbox, when it runs in one (ADR 0014).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid_namespace: Option<u64>,
}

/// A permission question from the provider.
#[derive(Debug, Clone)]
pub struct Question {
    /// The provider's id for it, used to answer.
    pub request: String,
    /// `tool`, `question` (AskUserQuestion) or `plan` (ExitPlanMode).
    pub kind: String,
    pub tool: String,
    pub tool_use_id: Option<String>,
    pub input: Value,
    pub description: Option<String>,
    pub suggestions: Value,
}

/// What a session says, normalized across providers.
#[derive(Debug, Clone)]
pub enum Happening {
    /// A model turn began streaming for the user message `uuid`.
    TurnBegan {
        uuid: Option<String>,
    },
    /// Text or reasoning, streamed (`delta`) or whole (`done`).
    Text {
        message: String,
        block: u64,
        delta: Option<String>,
        done: bool,
        reasoning: bool,
    },
    ToolStarted {
        call: String,
        name: String,
        summary: String,
        block: u64,
        /// What the tool is given, whole (the Switchboard caps and masks it).
        input: Value,
        /// The Task/Agent call it runs inside, for a subagent's call.
        parent: Option<String>,
    },
    ToolEnded {
        call: String,
        failed: bool,
        /// What it gave back, as text (an image as `[image]`).
        output: String,
        /// The tool stopped because the turn was interrupted.
        interrupted: bool,
    },
    Asked(Question),
    /// The provider withdrew a question.
    Withdrawn {
        request: String,
    },
    /// A user message the provider took into the running turn.
    Steered {
        uuid: String,
    },
    Limit(Value),
    /// The session's permission mode, as the provider says it is now: after any change (one
    /// Vyre asked for, an "always" that carried a mode, the model entering or leaving plan
    /// mode) and at each turn's start.
    Mode {
        mode: String,
    },
    /// The provider's API call failed and the provider tries again (`status`: the HTTP status,
    /// none for a connection error).
    Retry {
        attempt: u64,
        max_retries: u64,
        delay_ms: u64,
        status: Option<u64>,
        error: String,
    },
    /// A subagent is about to start (tool call `call`) and waits for a slot; answer `request`
    /// with `{"continue": true}` to let it go, or a PreToolUse deny.
    SlotWanted {
        request: String,
        call: String,
    },
    /// A tool call (`call`, of `tool` with `input`, in folder `cwd`) is about to run and waits
    /// for the host's check (the Gate, spec 7.7): answer `request` with `{"continue": true}` to
    /// let it go on to the usual permissions, or a PreToolUse `ask` to have it asked about.
    Checking {
        request: String,
        call: String,
        tool: String,
        input: Value,
        cwd: Option<String>,
    },
    /// The turn is about to end with the answer `text` and waits for the host's check (the
    /// lessons, spec 7.11): answer `request` with `{}` to let it end, or `{"decision":
    /// "block", "reason"}` to have the model go on with the reason. `again` is true when it
    /// ends again after such a block.
    Ending {
        request: String,
        text: String,
        again: bool,
    },
    /// Tool call `call` became a background task (a subagent, a long Bash).
    TaskStarted {
        call: String,
    },
    /// The task of tool call `call` ended.
    TaskEnded {
        call: String,
    },
    /// The turn is over.
    Finished {
        ok: bool,
        canceled: bool,
        error: Option<String>,
        /// What this process's turns have cost so far (never what the session cost before it
        /// was resumed or forked: the thread keeps that), as the provider prices it; `None` when it gives
        /// no price for this turn (an ACP agent, a Codex model with no `sessions.prices`
        /// entry): the turn is then said to be unpriced, never to have cost nothing.
        total_cost_usd: Option<f64>,
        tokens: Value,
    },
    /// A line the provider could not be understood from; logged and skipped.
    Garbage(String),
}

/// How a process ended.
#[derive(Debug, Clone)]
pub struct Exit {
    pub status: Option<i32>,
    pub signal: Option<i32>,
    pub stderr: String,
}

impl Exit {
    pub fn describe(&self) -> String {
        match (self.status, self.signal) {
            (Some(0), _) => "exited 0".into(),
            (Some(code), _) => format!("exited {code}"),
            (None, Some(sig)) => format!("exited by signal {sig}"),
            _ => "exited".into(),
        }
    }
}

/// Why a provider could not do what it was asked: typed, so the Switchboard decides by kind and
/// says the provider's own words, never parses them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The session's process is gone: its pipes closed, nothing more will reach it.
    #[error("the session's process is gone")]
    Gone,
    /// The program refused the request, in its own words.
    #[error("{0}")]
    Refused(String),
    /// The session's process could not be started, and why.
    #[error("{0}")]
    Start(String),
    /// An answer that does not fit what was asked (a form's number in words), in words that
    /// say what would; the question stays open.
    #[error("{0}")]
    BadAnswer(String),
}

/// Where a user message goes while a turn runs (stream-json's `priority`); none is a new turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Into the running turn at its next step: a steer.
    Next,
    /// At once, ahead of anything queued.
    Now,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Next => "next",
            Priority::Now => "now",
        }
    }
}

/// A slash command a session offers, as a surface's `/` menu shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SlashCommand {
    /// The name without its slash (`compact`).
    pub name: String,
    /// What it does, in the provider's words; empty when it gave none.
    pub description: String,
    /// What to type after it (`<instructions>`); empty when it takes nothing.
    pub argument_hint: String,
}

/// One live session of a provider.
pub trait Session: Send + Sync {
    fn ids(&self) -> ProcessIds;
    /// The session's slash commands as surfaces show them.
    fn commands(&self) -> Vec<SlashCommand> {
        vec![]
    }
    /// The next thing the session says; `None` once its process is gone.
    fn next(&mut self) -> BoxFuture<'_, Option<Happening>>;
    /// A user message; with a `priority` it joins a running turn.
    fn send(
        &self,
        content: Value,
        uuid: &str,
        priority: Option<Priority>,
    ) -> Result<(), ProviderError>;
    /// Answer a question: the provider-specific response.
    fn answer(&self, request: &str, response: Value) -> Result<(), ProviderError>;
    fn interrupt(&self) -> BoxFuture<'_, Result<(), ProviderError>>;
    fn set_mode(&self, mode: &str) -> BoxFuture<'_, Result<(), ProviderError>>;
    fn set_model(&self, model: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>>;
    /// Change how hard the model thinks from the next turn (`None`: the program's default). By
    /// default refused: a provider whose [`Provider::efforts`] is empty has no such choice.
    fn set_effort(&self, effort: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        let _ = effort;
        Box::pin(async {
            Err(ProviderError::Refused(
                "this provider has no effort to set".into(),
            ))
        })
    }
    /// Before any message, get ready for the first turn (a warm spare, ADR 0032): load what a
    /// first turn would, asking the model nothing and leaving the session quiet after. By
    /// default nothing. An error means the session must not be handed out (it is stopped).
    fn prepare(&mut self) -> BoxFuture<'_, Result<Readiness, ProviderError>> {
        Box::pin(async { Ok(Readiness::Loaded("its provider takes no turn ahead".into())) })
    }
    /// End the session and its whole process group.
    fn stop(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Exit>;
    /// Wait for the process to end on its own (after `next` returned `None`).
    fn exit(self: Box<Self>) -> BoxFuture<'static, Exit>;
}

/// What [`Session::prepare`] made of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// It took its first turn's own work ahead, the model asked nothing.
    Readied,
    /// Started and loaded, its first turn not taken ahead, and why.
    Loaded(String),
}

/// Why a session cannot be resumed as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresumable {
    /// Its history is gone (the transcript was deleted or moved).
    NoHistory { looked_in: PathBuf },
    /// The history has no message with this uuid.
    UnknownMessage { uuid: String },
    /// The provider cannot take a thread back to an earlier message (a fork from it can).
    NoRewind { provider: String },
}

/// A provider: starts sessions.
pub trait Provider: Send + Sync {
    fn id(&self) -> &str;
    fn driver(&self) -> &str;
    fn capabilities(&self) -> Capabilities;
    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Session>, ProviderError>>;
    /// Whether its sessions are Claude Code's: they run on the Claude credential the router
    /// keeps (`sessions.auth`, an agent's own) and take Claude's model names (a purpose's
    /// default model). A provider whose program signs in its own way and names its own models
    /// says no: its launches carry [`Credential::Login`] without the vault being asked, and a
    /// model only when one was asked for.
    fn runs_claude(&self) -> bool {
        true
    }
    /// The reasoning efforts its sessions take (`threads.start`'s and `threads.effort`'s
    /// `effort`), least first; none when it has no such choice.
    fn efforts(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether a thread of it can go back to an earlier message (`threads.rewind`), dropping
    /// what came after. Checked before anything is stopped for it.
    fn rewinds(&self) -> bool {
        true
    }
    /// Whether it says what a session's turns cost on `model` (`None`: the program's default),
    /// so that an agent's budget can be kept. Claude Code prices every model itself.
    fn prices(&self, model: Option<&str>) -> bool {
        let _ = model;
        true
    }
    /// For a provider that is not Claude Code's: the vault item holding the API key its
    /// program runs on. When the vault has it, launches carry it as [`Credential::ApiKey`]
    /// (auth `api-key`); when not, the program's own sign-in (auth `login`). `None`: the
    /// program signs in its own way (auth `own`).
    fn key_item(&self) -> Option<&str> {
        None
    }
    /// Whether session `id` can resume (from message `at`, for a rewind or a fork), checked
    /// before any process starts. A provider that keeps no history Vyre can read says yes.
    fn can_resume(&self, id: &str, at: Option<&str>) -> Result<(), Unresumable> {
        let _ = (id, at);
        Ok(())
    }
    /// What a session's process depends on beyond its [`Launch`], as text that changes when any
    /// of it does (the program itself, the settings it reads at start in `cwd` and its home):
    /// a warm spare started before such a change is not handed out (ADR 0032).
    fn stamp<'a>(&'a self, cwd: &'a std::path::Path) -> BoxFuture<'a, String> {
        let _ = cwd;
        Box::pin(async { String::new() })
    }
}

/// The providers this machine has, by name: each registered by the module that declares it
/// under `does.providers` (`Ctx::provider`), read by the sessions layer's router. Cheap to
/// clone; clones share the table.
#[derive(Clone, Default)]
pub struct Providers {
    // std RwLock: written at modules' start, read per launch.
    by_name: std::sync::Arc<
        std::sync::RwLock<std::collections::BTreeMap<String, std::sync::Arc<dyn Provider>>>,
    >,
}

impl Providers {
    pub fn register(&self, provider: std::sync::Arc<dyn Provider>) -> Result<(), String> {
        let mut by_name = self.by_name.write().expect("providers");
        let name = provider.id().to_string();
        if by_name.contains_key(&name) {
            return Err(format!("a provider named {name:?} is already registered"));
        }
        by_name.insert(name, provider);
        Ok(())
    }

    pub fn names(&self) -> Vec<String> {
        self.by_name
            .read()
            .expect("providers")
            .keys()
            .cloned()
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<std::sync::Arc<dyn Provider>> {
        self.by_name.read().expect("providers").get(name).cloned()
    }
}
