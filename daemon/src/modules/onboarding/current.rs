//! What the onboarding's screens show: its state, assembled from its own saved steps and names
//! and from other modules' answers (`agents.list`, `sessions.claude`, `vault.status`,
//! `recall.status`), each read as the onboarding's own typed view.

use super::*;

#[derive(Debug, Serialize, JsonSchema)]
pub struct State {
    /// The owner exists: the onboarding was finished once.
    finished: bool,
    owner: Option<OwnerRecord>,
    /// The assistant agent, once made.
    assistant: Option<Assistant>,
    /// The names given (or the defaults finishing would use).
    names: Names,
    /// Each step: `open`, `done` or `skipped`.
    steps: BTreeMap<String, String>,
    /// The CLI (`sessions.claude`) and its credential (`vault.status`'s `claude`).
    claude: Claude,
    /// The history's indexing (`recall.status`); none while recall is not running.
    history: Option<History>,
}

/// The part of `vault.status` the onboarding shows.
#[derive(Deserialize)]
struct VaultStatus {
    claude: AuthStatus,
}

/// The assistant agent, as `agents.list` lists it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Assistant {
    pub(super) name: String,
    /// Its current thread, once it has one.
    #[serde(default)]
    thread: Option<String>,
}

/// The Claude Code CLI sessions run and the credential they run on, from `sessions.claude`
/// and `vault.status`. Each part says nothing (`found: false`, no `auth`) while the module
/// that answers it is not running.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Claude {
    #[serde(default)]
    found: bool,
    #[serde(default)]
    path: Option<String>,
    /// What `claude --version` printed, first word.
    #[serde(default)]
    version: Option<String>,
    /// The version Vyre speaks to.
    #[serde(default)]
    pinned: Option<String>,
    /// Why it cannot run, and what to do; none when it can.
    #[serde(default)]
    problem: Option<String>,
    /// The mode in force, where it came from, and its item's readiness.
    #[serde(default)]
    auth: Option<AuthStatus>,
}

/// How far recall has read the history (`recall.status`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct History {
    sessions: i64,
    turns: i64,
    progress: Option<HistoryProgress>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct HistoryProgress {
    scanning: bool,
    done: u64,
    total: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Names {
    pub(super) owner: String,
    pub(super) assistant: String,
}

pub(super) fn names_of(saved: &BTreeMap<String, String>, owner: Option<&OwnerRecord>) -> Names {
    Names {
        owner: owner
            .map(|o| o.name.clone())
            .or_else(|| saved.get("owner_name").cloned())
            .unwrap_or_else(|| DEFAULT_OWNER.into()),
        assistant: saved
            .get("assistant_name")
            .cloned()
            .unwrap_or_else(|| DEFAULT_ASSISTANT.into()),
    }
}

pub(super) async fn assistant(ctx: &Ctx) -> Option<Assistant> {
    let agents = ctx.call("agents.list", json!({})).await.ok()?;
    let found = agents
        .as_array()?
        .iter()
        .find(|a| a["kind"] == "assistant")?;
    serde_json::from_value(found.clone()).ok()
}

/// Another module's answer read as this module's own view of it; what does not read is none.
async fn view<T: serde::de::DeserializeOwned>(ctx: &Ctx, tool: &str) -> Option<T> {
    let answer = ctx.call(tool, json!({})).await.ok()?;
    serde_json::from_value(answer)
        .inspect_err(|e| tracing::warn!(tool, error = %e, "an answer the onboarding cannot read"))
        .ok()
}

pub(super) async fn state(ctx: &Ctx) -> Result<State, ToolError> {
    let saved = saved(ctx).await?;
    let owner = ctx.owner().get();
    let steps = STEPS
        .iter()
        .map(|s| {
            let st = saved
                .get(&format!("step:{s}"))
                .cloned()
                .unwrap_or_else(|| "open".into());
            (s.to_string(), st)
        })
        .collect();
    let mut claude: Claude = view(ctx, "sessions.claude").await.unwrap_or_default();
    claude.auth = view::<VaultStatus>(ctx, "vault.status")
        .await
        .map(|v| v.claude);
    let history = view(ctx, "recall.status").await;
    Ok(State {
        finished: owner.is_some(),
        names: names_of(&saved, owner.as_ref()),
        owner,
        assistant: assistant(ctx).await,
        steps,
        claude,
        history,
    })
}
