//! What the watchers' tools take and give (their schemas come from these types).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::protocol;
use super::state::Filed;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    /// Its name and its folder's: 1 to 32 of a-z, 0-9 and -, starting with a letter.
    #[schemars(length(min = 1, max = 32))]
    pub name: String,
    /// The project its items are filed into.
    #[schemars(length(min = 1, max = 200))]
    pub project: String,
    /// When it runs: cron's five fields ("*/15 * * * *", "@hourly"), or "webhook".
    #[schemars(length(min = 1, max = 200))]
    pub schedule: String,
    /// The script's text. For watch.js: `export async function watch({vault, since, emit, log})`,
    /// calling `emit({title, url?, body?, id?, at?})` for each thing found.
    #[schemars(length(max = 262144))]
    pub script: String,
    /// The script's file name (default watch.js).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub file: Option<String>,
    /// A program and its arguments speaking the protocol itself (["python3", "watch.py"]);
    /// without it, watch.js runs on Node.
    #[serde(default)]
    pub run: Option<Vec<String>>,
    /// Vault items it reads (granted by the person when they turn it on).
    #[serde(default)]
    pub needs: Vec<String>,
    /// The event type its items are told as (default watch.<name>.item).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub emits: Option<String>,
    /// Seconds a run may take (1 to 600, default 60).
    #[serde(default)]
    #[schemars(range(min = 1, max = 600))]
    pub timeout_s: Option<u64>,
    /// Write it anew if it exists (a session's rewrite waits, paused, for the person).
    #[serde(default)]
    pub replace: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameInput {
    /// The watcher's name, from `watchers.list`.
    #[schemars(length(min = 1, max = 32))]
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookInput {
    #[schemars(length(min = 1, max = 32))]
    pub name: String,
    /// The secret in its webhook's path.
    #[schemars(length(min = 1, max = 200))]
    pub secret: String,
    /// What the webhook was called with: its JSON, or its body as text.
    #[serde(default)]
    pub body: Value,
}

/// A webhook call taken: the run goes on apart from the caller.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Accepted {
    pub accepted: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// Only this project's.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub project: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogsInput {
    #[schemars(length(min = 1, max = 32))]
    pub name: String,
    /// The last this many lines (1 to 1000, default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemsInput {
    /// Only this watcher's.
    #[serde(default)]
    #[schemars(length(min = 1, max = 32))]
    pub name: Option<String>,
    /// Only this project's.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub project: Option<String>,
    /// The newest this many (1 to 500, default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// A watcher as the tools show it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Shown {
    pub name: String,
    /// Where its items are filed (absent when its watcher.json cannot be read).
    pub project: Option<String>,
    pub schedule: Option<String>,
    pub emits: Option<String>,
    pub needs: Vec<String>,
    /// It does not run until the person turns it on.
    pub paused: bool,
    /// Written (or rewritten by a session) and not yet turned on by the person: it waits for
    /// them, rather than being paused by them.
    pub waiting: bool,
    /// Why it was turned off (failures in a row); turning it on clears it.
    pub disabled: Option<String>,
    /// Failed runs in a row.
    pub failures: i64,
    pub last_run_at: Option<i64>,
    pub last_ok_at: Option<i64>,
    pub last_error: Option<String>,
    /// When it runs next (none while paused or turned off, or run by webhook).
    pub next_run_at: Option<i64>,
    /// The time zone its schedule is read in (this machine's, an IANA name).
    pub zone: String,
    /// `person`, or the thread whose session wrote it.
    pub created_by: String,
    /// Items it filed so far.
    pub filed: i64,
    /// Why its folder cannot be used as it is.
    pub problem: Option<String>,
    /// Where its webhook is called, with its secret (`/v1/hooks/<name>/<secret>`): said once,
    /// when the watcher is written; Vyre keeps only the secret's hash.
    pub hook: Option<String>,
}

/// How a run went.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tried {
    pub ok: bool,
    pub items: Vec<protocol::Item>,
    pub logs: Vec<String>,
    /// Where its next run starts.
    pub since: Value,
    pub error: Option<String>,
    pub took_ms: i64,
    /// Items new to the project (none in a try).
    pub filed: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Line {
    pub at: i64,
    pub line: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Logs {
    pub lines: Vec<Line>,
}

/// A watcher's files as they are: what the person reads before turning it on.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Source {
    pub files: Vec<SourceFile>,
    /// Files not shown past the first 50.
    pub left_out: usize,
    /// A hash of every file (names and bytes): `watchers.resume` with it turns on only this.
    pub digest: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeInput {
    #[schemars(length(min = 1, max = 32))]
    pub name: String,
    /// The `digest` of the `watchers.source` the person read: refused (`409 changed`) when
    /// the watcher was rewritten since.
    #[serde(default)]
    #[schemars(length(min = 64, max = 64))]
    pub digest: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SourceFile {
    /// Its name in the watcher's folder.
    pub name: String,
    /// Its text (a file that is not text says so instead).
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Items {
    pub items: Vec<Filed>,
}
