//! Agents and the assistant (spec section 10; ADR 0030 migration step 4): named, headless Claude
//! Code sessions with their own instructions, credentials, budget and projects. The assistant is
//! the one agent of kind `assistant`, made at onboarding.
//!
//! An agent is a row of `agents_roster`; its conversations are ordinary threads (`threads_runs.agent`). This
//! module talks to the Switchboard through tools (`threads.start`, `threads.send`, ...) and gives
//! the launch what it needs through the router's [`AgentBook`]: the instructions become the
//! system prompt's append, `budget_usd` the CLI's `--max-budget-usd`, the credentials an auth
//! mode fetched as the agent (`agent:<name>` grants in the vault).

use std::path::PathBuf;
use std::sync::Arc;

use rusqlite::{OptionalExtension, Row, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::claude::Credential;
use super::provider::BoxFuture;
use super::router::{AgentBook, Router};
use crate::modules::{Ctx, Module, StartFuture, ToolDef};
use crate::store::Migration;
use crate::tools::ToolError;
use crate::vault::auth::{API_KEY_ITEM, AuthMode, SETUP_TOKEN_ITEM};

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE agents_roster (
        name TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        instructions TEXT NOT NULL,
        model TEXT,
        auth TEXT NOT NULL,
        projects TEXT NOT NULL,
        cwd TEXT NOT NULL,
        thread TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX agents_one_assistant ON agents_roster(kind) WHERE kind = 'assistant';",
    },
    Migration {
        version: 2,
        // What a person granted the agent beyond its own threads (issue 17); none for an older
        // one, the assistant included: its powers come from a person's explicit grant.
        sql: "ALTER TABLE agents_roster ADD COLUMN grants TEXT NOT NULL DEFAULT '[]';",
    },
];

/// What a person granted an agent beyond its own threads (spec section 10: the assistant "can
/// see every project and every session, and it can start, drive, monitor and stop any
/// session"). Without a grant an agent's sessions are fenced like any session's.
#[derive(
    Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// Start, drive, monitor and stop any thread, in any project or none (and read them all).
    Threads,
    /// Read every session's history and the catalogue, in any project or none.
    Recall,
}

/// How an agent's sessions authenticate.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AgentAuth {
    /// `sessions` (the machine's own credential, the default), `setup-token` (a subscription)
    /// or `api-key`.
    #[serde(default)]
    pub mode: Option<String>,
    /// The vault item the credential is in (default `claude-setup-token` or
    /// `anthropic-api-key`, by mode); a person grants it to `agent:<name>`.
    #[serde(default)]
    pub vault: Option<String>,
    /// An API key item to fall back to when the subscription's limit is reached; none means no
    /// fallback is allowed.
    #[serde(default)]
    pub fallback: Option<String>,
    /// The most one session may spend, in US dollars (the CLI's `--max-budget-usd`).
    #[serde(default)]
    pub budget_usd: Option<f64>,
}

impl AgentAuth {
    fn check(&self) -> Result<(), ToolError> {
        match self.mode.as_deref() {
            None | Some("sessions") | Some("setup-token") | Some("api-key") => {}
            Some(other) => {
                return Err(ToolError::invalid(format!(
                    "auth.mode must be sessions, setup-token or api-key, not {other:?}"
                )));
            }
        }
        if self.mode.as_deref().unwrap_or("sessions") == "sessions" && self.vault.is_some() {
            return Err(ToolError::invalid(
                "auth.vault names the agent's own credential: give auth.mode setup-token or api-key with it",
            ));
        }
        for item in self.vault.iter().chain(self.fallback.iter()) {
            crate::vault::valid_item_name(item).map_err(|e| ToolError::invalid(e.to_string()))?;
        }
        if let Some(b) = self.budget_usd
            && !(b > 0.0 && b.is_finite())
        {
            return Err(ToolError::invalid(
                "auth.budget_usd must be a positive number of dollars",
            ));
        }
        Ok(())
    }

    /// The agent's own auth mode and item, or `None` for the machine's.
    fn own(&self) -> Option<(AuthMode, String)> {
        match self.mode.as_deref() {
            Some("setup-token") => Some((
                AuthMode::SetupToken,
                self.vault
                    .clone()
                    .unwrap_or_else(|| SETUP_TOKEN_ITEM.into()),
            )),
            Some("api-key") => Some((
                AuthMode::ApiKey,
                self.vault.clone().unwrap_or_else(|| API_KEY_ITEM.into()),
            )),
            _ => None,
        }
    }
}

/// The projects an agent may draw context from: every one (`"*"`) or those named.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum Projects {
    All(String),
    Only(Vec<String>),
}

impl Default for Projects {
    fn default() -> Self {
        Projects::Only(vec![])
    }
}

impl Projects {
    fn check(&self) -> Result<(), ToolError> {
        match self {
            Projects::All(s) if s == "*" => Ok(()),
            Projects::All(s) => Err(ToolError::invalid(format!(
                "projects is \"*\" (every project) or a list of project names, not {s:?}"
            ))),
            Projects::Only(names) if names.iter().any(|n| n.trim().is_empty()) => {
                Err(ToolError::invalid("a project name must not be empty"))
            }
            Projects::Only(_) => Ok(()),
        }
    }
    pub fn allows(&self, project: &str) -> bool {
        match self {
            Projects::All(_) => true,
            Projects::Only(names) => names.iter().any(|n| n == project),
        }
    }
}

/// An agent as tools show it and launches use it. Never holds a credential's value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AgentProfile {
    pub name: String,
    /// `assistant` or `agent`.
    pub kind: String,
    pub instructions: String,
    pub model: Option<String>,
    pub auth: AgentAuth,
    pub projects: Projects,
    /// The folder its sessions work in.
    pub cwd: String,
    /// What a person granted it beyond its own threads.
    pub grants: Vec<Grant>,
    /// Its current thread: where `agents.ask` goes.
    pub thread: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

fn profile_of(r: &Row) -> rusqlite::Result<AgentProfile> {
    let json = |i: usize| -> rusqlite::Result<String> { r.get(i) };
    Ok(AgentProfile {
        name: r.get(0)?,
        kind: r.get(1)?,
        instructions: r.get(2)?,
        model: r.get(3)?,
        auth: serde_json::from_str(&json(4)?).unwrap_or_default(),
        projects: serde_json::from_str(&json(5)?).unwrap_or_default(),
        cwd: r.get(6)?,
        thread: r.get(7)?,
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
        grants: serde_json::from_str(&json(10)?).unwrap_or_default(),
    })
}

const COLUMNS: &str =
    "name, kind, instructions, model, auth, projects, cwd, thread, created_at, updated_at, grants";

fn unknown_agent(name: &str) -> ToolError {
    ToolError::not_found(
        "unknown_agent",
        format!("there is no agent {name:?}; agents.list shows them"),
    )
}

/// The agents' rows, shared by the tools and the router's [`AgentBook`].
#[derive(Clone)]
struct Book {
    ctx: Ctx,
}

impl Book {
    async fn get(&self, name: &str) -> Result<AgentProfile, ToolError> {
        let n = name.to_string();
        self.ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    &format!("SELECT {COLUMNS} FROM agents_roster WHERE name = ?1"),
                    [&n],
                    profile_of,
                )
                .optional()?)
            })
            .await?
            .ok_or_else(|| unknown_agent(name))
    }

    async fn list(&self) -> Result<Vec<AgentProfile>, ToolError> {
        Ok(self
            .ctx
            .store()
            .read(|c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM agents_roster ORDER BY kind = 'assistant' DESC, name"
                ))?;
                let rows = stmt.query_map([], profile_of)?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await?)
    }

    async fn save(&self, p: &AgentProfile, new: bool) -> Result<(), ToolError> {
        let name = p.name.clone();
        let p = p.clone();
        let auth = serde_json::to_string(&p.auth).map_err(ToolError::internal)?;
        let projects = serde_json::to_string(&p.projects).map_err(ToolError::internal)?;
        let grants = serde_json::to_string(&p.grants).map_err(ToolError::internal)?;
        let written = self
            .ctx
            .store()
            .write(move |tx| {
                let now = crate::now_ms();
                if new {
                    let taken: bool = tx.conn().query_row(
                        "SELECT EXISTS(SELECT 1 FROM agents_roster WHERE name = ?1)",
                        [&p.name],
                        |r| r.get(0),
                    )?;
                    if taken {
                        return Ok(Err("exists"));
                    }
                    if p.kind == "assistant" {
                        let one: bool = tx.conn().query_row(
                            "SELECT EXISTS(SELECT 1 FROM agents_roster WHERE kind = 'assistant')",
                            [],
                            |r| r.get(0),
                        )?;
                        if one {
                            return Ok(Err("assistant_exists"));
                        }
                    }
                    tx.conn().execute(
                        &format!("INSERT INTO agents_roster ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8, ?8, ?9)"),
                        params![p.name, p.kind, p.instructions, p.model, auth, projects, p.cwd, now, grants],
                    )?;
                    tx.emit(crate::events::NewEvent::new(
                        "agent.created",
                        json!({ "agent": p.name, "kind": p.kind }),
                    ))?;
                } else {
                    tx.conn().execute(
                        "UPDATE agents_roster SET instructions = ?2, model = ?3, auth = ?4, projects = ?5, cwd = ?6, updated_at = ?7, grants = ?8 WHERE name = ?1",
                        params![p.name, p.instructions, p.model, auth, projects, p.cwd, now, grants],
                    )?;
                    tx.emit(crate::events::NewEvent::new(
                        "agent.updated",
                        json!({ "agent": p.name }),
                    ))?;
                }
                Ok(Ok(()))
            })
            .await?;
        match written {
            Ok(()) => Ok(()),
            Err("assistant_exists") => Err(ToolError::conflict(
                "assistant_exists",
                "this machine has its assistant already; change it with agents.update",
            )),
            Err(_) => Err(ToolError::conflict(
                "exists",
                format!("an agent named {name:?} exists; agents.update changes it"),
            )),
        }
    }

    async fn set_thread(&self, name: &str, thread: &str) -> Result<(), ToolError> {
        let (n, t) = (name.to_string(), thread.to_string());
        self.ctx
            .store()
            .write(move |tx| {
                tx.conn().execute(
                    // Not `updated_at`: that marks changes a live session must restart for.
                    "UPDATE agents_roster SET thread = ?2 WHERE name = ?1",
                    params![n, t],
                )?;
                Ok(())
            })
            .await?;
        Ok(())
    }

    /// The agent's threads, newest first, as `threads.list` shows them.
    async fn threads(&self, name: &str) -> Result<Vec<Value>, ToolError> {
        let all = self.ctx.call("threads.list", json!({})).await?;
        Ok(all
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["agent"] == name)
            .cloned()
            .collect())
    }
}

impl AgentBook for Book {
    fn profile<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<AgentProfile, ToolError>> {
        Box::pin(self.get(name))
    }

    fn credential<'a>(
        &'a self,
        name: &'a str,
        fallback: bool,
    ) -> BoxFuture<'a, Result<Option<(AuthMode, Credential)>, ToolError>> {
        Box::pin(async move {
            let agent = self.get(name).await?;
            let vault = self.ctx.vault();
            if fallback {
                let Some(item) = &agent.auth.fallback else {
                    return Err(ToolError::conflict(
                        "no_fallback",
                        format!("agent {name:?} has no API key to fall back to (auth.fallback)"),
                    ));
                };
                let value = vault
                    .fetch_for_agent(name, item)
                    .await
                    .map_err(ToolError::from)?;
                return Ok(Some((
                    AuthMode::ApiKey,
                    Credential::ApiKey(value.primary().clone()),
                )));
            }
            let Some((mode, item)) = agent.auth.own() else {
                return Ok(None);
            };
            let secret = vault
                .fetch_for_agent(name, &item)
                .await
                .map_err(ToolError::from)?
                .primary()
                .clone();
            Ok(Some(match mode {
                AuthMode::ApiKey => (mode, Credential::ApiKey(secret)),
                _ => (mode, Credential::SetupToken(secret)),
            }))
        })
    }
}

/// The built-in `agents` module.
pub struct AgentsModule {
    pub router: Arc<Router>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    /// Lowercase letters, digits and dashes, up to 32.
    #[schemars(pattern(crate::tools::shape::NAME))]
    name: String,
    /// `agent` (the default) or `assistant` (one per machine, made at onboarding).
    #[serde(default)]
    #[schemars(pattern(r"^(agent|assistant)$"))]
    kind: Option<String>,
    /// Appended to Claude Code's system prompt in every session of this agent.
    #[serde(default)]
    instructions: Option<String>,
    /// Its model; the `agent` purpose's model when left out.
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    auth: Option<AgentAuth>,
    /// `"*"` (every project) or the projects it may draw on; none when left out (the assistant:
    /// every one).
    #[serde(default)]
    projects: Option<Projects>,
    /// The folder its sessions work in (absolute, existing); `VYRE_HOME/agents/<name>` when
    /// left out.
    #[serde(default)]
    cwd: Option<PathBuf>,
    /// Powers beyond its own threads: `threads` (start, drive, monitor and stop any session),
    /// `recall` (read every session's history). None when left out, the assistant included.
    #[serde(default)]
    grants: Option<Vec<Grant>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateInput {
    name: String,
    #[serde(default)]
    instructions: Option<String>,
    /// A model; an empty string goes back to the `agent` purpose's.
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    auth: Option<AgentAuth>,
    #[serde(default)]
    projects: Option<Projects>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    /// Replaces its grants (`[]` takes them all back).
    #[serde(default)]
    grants: Option<Vec<Grant>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskInput {
    agent: String,
    text: String,
    /// Start a new thread instead of going on with the current one.
    #[serde(default)]
    new: bool,
    /// Vyre's own instruction (the onboarding's greeting prompt), not the person's words: the
    /// timeline marks it and surfaces hide it. Only Vyre's modules may say so.
    #[serde(default)]
    internal: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    agent: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

#[derive(Serialize, JsonSchema)]
pub struct Asked {
    agent: String,
    thread: String,
    /// Whether a new thread was started for this.
    started: bool,
    /// The send's uuid and how it went (`turn`, `steer`), when it went to a running thread.
    uuid: Option<String>,
    via: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Stopped {
    agent: String,
    stopped: Vec<String>,
}

fn check_name(name: &str) -> Result<(), ToolError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid(format!(
            "an agent's name is 1 to 32 lowercase letters, digits and dashes, not {name:?}"
        )))
    }
}

/// Grants as stored: each once, in order.
fn grants_of(grants: Option<Vec<Grant>>) -> Vec<Grant> {
    let mut g = grants.unwrap_or_default();
    g.sort();
    g.dedup();
    g
}

fn check_cwd(cwd: &std::path::Path) -> Result<String, ToolError> {
    if !cwd.is_absolute() || !cwd.is_dir() {
        return Err(ToolError::invalid(format!(
            "cwd {:?} must be an existing folder, given as an absolute path",
            cwd
        )));
    }
    Ok(cwd.display().to_string())
}

impl Module for AgentsModule {
    fn name(&self) -> &str {
        "agents"
    }
    fn manifest(&self) -> &str {
        include_str!("manifests/agents.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        let router = self.router.clone();
        Box::pin(async move {
            ctx.store().migrate(MIGRATIONS).await?;
            let book = Book { ctx: ctx.clone() };
            register(&ctx, book.clone())?;
            router.set_agents(Arc::new(book));
            Ok(())
        })
    }
}

fn register(ctx: &Ctx, book: Book) -> Result<(), crate::modules::StartError> {
    let b = book.clone();
    ctx.tool(
        ToolDef::new(
            "agents.list",
            "Every agent (the assistant first) and its current thread.",
        )
        .sessions_fenced(),
        move |_: NoInput, cx| {
            let b = b.clone();
            async move {
                // A session sees the agents it acts for (its own; every one with the grant).
                let scope = cx.scope(crate::tools::Reach::Own).await?;
                let mut all = b.list().await?;
                all.retain(|a| scope.acts_for(&a.name));
                Ok::<_, ToolError>(all)
            }
        },
    )?;

    let b = book.clone();
    let home = ctx.kernel().home().root().to_path_buf();
    ctx.tool(
        ToolDef::new(
            "agents.create",
            "Create an agent: its instructions, model, credentials, budget and projects.",
        )
        .finishes()
        .person_only(),
        move |input: CreateInput, _| {
            let b = b.clone();
            let home = home.clone();
            async move {
                check_name(&input.name)?;
                let kind = input.kind.unwrap_or_else(|| "agent".into());
                if !matches!(kind.as_str(), "agent" | "assistant") {
                    return Err(ToolError::invalid("kind must be agent or assistant"));
                }
                let auth = input.auth.unwrap_or_default();
                auth.check()?;
                let projects = input.projects.unwrap_or_else(|| {
                    if kind == "assistant" {
                        Projects::All("*".into())
                    } else {
                        Projects::default()
                    }
                });
                projects.check()?;
                let cwd = match input.cwd {
                    Some(dir) => check_cwd(&dir)?,
                    None => {
                        let dir = home.join("agents").join(&input.name);
                        std::fs::create_dir_all(&dir).map_err(|e| {
                            ToolError::internal(format!("cannot create {}: {e}", dir.display()))
                        })?;
                        dir.display().to_string()
                    }
                };
                let profile = AgentProfile {
                    name: input.name,
                    kind,
                    instructions: input.instructions.unwrap_or_default(),
                    model: input.model.filter(|m| !m.trim().is_empty()),
                    auth,
                    projects,
                    cwd,
                    grants: grants_of(input.grants),
                    thread: None,
                    created_at: 0,
                    updated_at: 0,
                };
                b.save(&profile, true).await?;
                b.get(&profile.name).await
            }
        },
    )?;

    let b = book.clone();
    ctx.tool(
        ToolDef::new(
            "agents.update",
            "Change an agent. It applies from the agent's next turn: a live session restarts on its transcript with the change.",
        )
        .finishes()
        .person_only(),
        move |input: UpdateInput, _| {
            let b = b.clone();
            async move {
                let mut p = b.get(&input.name).await?;
                if let Some(i) = input.instructions {
                    p.instructions = i;
                }
                if let Some(m) = input.model {
                    p.model = Some(m).filter(|m| !m.trim().is_empty());
                }
                if let Some(a) = input.auth {
                    a.check()?;
                    p.auth = a;
                }
                if let Some(pr) = input.projects {
                    pr.check()?;
                    p.projects = pr;
                }
                if let Some(dir) = input.cwd {
                    p.cwd = check_cwd(&dir)?;
                }
                if let Some(g) = input.grants {
                    p.grants = grants_of(Some(g));
                }
                b.save(&p, false).await?;
                b.get(&p.name).await
            }
        },
    )?;

    let b = book.clone();
    ctx.tool(
        ToolDef::new(
            "agents.ask",
            "Say something to an agent: to its current thread, starting one if it has none.",
        ).finishes().sessions_own_agent("agent"),
        move |input: AskInput, cx| {
            let b = b.clone();
            async move {
                if input.internal && !matches!(cx.caller, crate::tools::Caller::Module { .. }) {
                    return Err(ToolError::refused(
                        "internal_for_modules",
                        "only Vyre's own modules mark words as internal",
                    ));
                }
                let agent = b.get(&input.agent).await?;
                if input.text.trim().is_empty() {
                    return Err(ToolError::invalid("text must not be empty"));
                }
                if let Some(thread) = agent.thread.as_deref().filter(|_| !input.new) {
                    let sent = b
                        .ctx
                        .call(
                            "threads.send",
                            json!({ "thread": thread, "text": input.text, "internal": input.internal }),
                        )
                        .await;
                    match sent {
                        Ok(sent) => {
                            return Ok(Asked {
                                agent: agent.name,
                                thread: thread.to_string(),
                                started: false,
                                uuid: sent["uuid"].as_str().map(String::from),
                                via: sent["via"].as_str().map(String::from),
                            });
                        }
                        // Its thread is gone (deleted, or its transcript is): start another.
                        Err(e) if matches!(&*e.code, "unknown_thread" | "no_history") => {
                            tracing::info!(agent = %agent.name, thread, "the agent's thread cannot go on ({}); starting a new one", e.code);
                        }
                        Err(e) => return Err(e),
                    }
                }
                let started = b
                    .ctx
                    .call(
                        "threads.start",
                        json!({ "cwd": agent.cwd, "agent": agent.name, "text": input.text, "internal": input.internal }),
                    )
                    .await?;
                let thread = started["thread"]
                    .as_str()
                    .ok_or_else(|| ToolError::internal("threads.start gave no thread"))?
                    .to_string();
                b.set_thread(&agent.name, &thread).await?;
                Ok(Asked {
                    agent: agent.name,
                    thread,
                    started: true,
                    uuid: None,
                    via: Some("turn".into()),
                })
            }
        },
    )?;

    let b = book.clone();
    ctx.tool(
        ToolDef::new("agents.threads", "An agent's threads, newest first.")
            .sessions_own_agent("agent"),
        move |input: AgentInput, _| {
            let b = b.clone();
            async move {
                b.get(&input.agent).await?;
                b.threads(&input.agent).await
            }
        },
    )?;

    let b = book;
    ctx.tool(
        ToolDef::new(
            "agents.stop",
            "Stop every live session of an agent; the next ask resumes its current thread.",
        )
        .finishes()
        .sessions_own_agent("agent"),
        move |input: AgentInput, _| {
            let b = b.clone();
            async move {
                b.get(&input.agent).await?;
                let mut stopped = Vec::new();
                for t in b.threads(&input.agent).await? {
                    if t["live"] == true
                        && let Some(thread) = t["thread"].as_str()
                    {
                        b.ctx
                            .call("threads.stop", json!({ "thread": thread }))
                            .await?;
                        stopped.push(thread.to_string());
                    }
                }
                Ok(Stopped {
                    agent: input.agent,
                    stopped,
                })
            }
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_projects_are_checked() {
        assert!(check_name("juno").is_ok());
        assert!(check_name("research-2").is_ok());
        for bad in ["", "Juno", "a b", "-x", "x/y", &"a".repeat(33)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let all: Projects = serde_json::from_value(json!("*")).unwrap();
        assert!(all.check().is_ok() && all.allows("anything"));
        let some: Projects = serde_json::from_value(json!(["acme", "home"])).unwrap();
        assert!(some.allows("acme") && !some.allows("other"));
        let bad: Projects = serde_json::from_value(json!("acme")).unwrap();
        assert!(bad.check().is_err());
    }

    #[test]
    fn grants_are_named_and_kept_once() {
        let g: Vec<Grant> = serde_json::from_value(json!(["recall", "threads", "recall"])).unwrap();
        assert_eq!(grants_of(Some(g)), vec![Grant::Threads, Grant::Recall]);
        assert_eq!(grants_of(None), vec![]);
        assert!(serde_json::from_value::<Vec<Grant>>(json!(["everything"])).is_err());
        assert_eq!(
            serde_json::to_value(vec![Grant::Threads, Grant::Recall]).unwrap(),
            json!(["threads", "recall"])
        );
    }

    #[test]
    fn auth_modes_name_their_items() {
        let a = AgentAuth::default();
        assert!(a.check().is_ok());
        assert_eq!(a.own(), None);
        let a = AgentAuth {
            mode: Some("setup-token".into()),
            ..Default::default()
        };
        assert_eq!(
            a.own(),
            Some((AuthMode::SetupToken, SETUP_TOKEN_ITEM.into()))
        );
        let a = AgentAuth {
            mode: Some("api-key".into()),
            vault: Some("juno-key".into()),
            budget_usd: Some(5.0),
            ..Default::default()
        };
        assert_eq!(a.own(), Some((AuthMode::ApiKey, "juno-key".into())));
        for bad in [
            AgentAuth {
                mode: Some("password".into()),
                ..Default::default()
            },
            AgentAuth {
                vault: Some("x".into()),
                ..Default::default()
            },
            AgentAuth {
                budget_usd: Some(0.0),
                ..Default::default()
            },
            AgentAuth {
                mode: Some("api-key".into()),
                vault: Some("no/slashes".into()),
                ..Default::default()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
