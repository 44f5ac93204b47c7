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
use serde_json::json;

use super::register::Listed;
use super::router::{AgentBook, Router};
use crate::kernel::contracts::auth::{API_KEY_ITEM, AuthMode, SETUP_TOKEN_ITEM};
use crate::kernel::contracts::provider::BoxFuture;
use crate::kernel::contracts::provider::Credential;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::store::Migration;
use crate::kernel::tools::ToolError;

mod tools;

pub use tools::{AgentInput, AskInput, Asked, CreateInput, Stopped, UpdateInput};

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

/// How an agent's sessions authenticate. A `vault` item goes with its own `mode` (setup-token
/// or api-key). The schema is the whole check: the input layer refuses what breaks it before a
/// handler runs, so no handler repeats it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [
    { "properties": { "mode": { "enum": ["setup-token", "api-key"] } }, "required": ["mode"] },
    { "properties": { "vault": { "type": "null" } } },
]))]
pub struct AgentAuth {
    /// `sessions` (the machine's own credential, the default), `setup-token` (a subscription)
    /// or `api-key`.
    #[serde(default)]
    #[schemars(extend("enum" = ["sessions", "setup-token", "api-key", null]))]
    pub mode: Option<String>,
    /// The vault item the credential is in (default `claude-setup-token` or
    /// `anthropic-api-key`, by mode); a person grants it to `agent:<name>`.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::kernel::tools::shape::ITEM), extend("not" = { "enum": [".", ".."] }))]
    pub vault: Option<String>,
    /// An API key item to fall back to when the subscription's limit is reached; none means no
    /// fallback is allowed.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::kernel::tools::shape::ITEM), extend("not" = { "enum": [".", ".."] }))]
    pub fallback: Option<String>,
    /// The most one session may spend, in US dollars (the CLI's `--max-budget-usd`).
    #[serde(default)]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub budget_usd: Option<f64>,
}

impl AgentAuth {
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Projects {
    All(String),
    Only(Vec<String>),
}

impl JsonSchema for Projects {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Projects".into()
    }
    /// The whole check (the input layer holds it): `"*"`, or a list of names none of them
    /// blank.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`\"*\"` (every project) or the names of the projects.",
            "anyOf": [
                { "type": "string", "const": "*" },
                { "type": "array", "items": { "type": "string", "pattern": crate::kernel::tools::shape::NOT_BLANK } },
            ]
        })
    }
}

impl Default for Projects {
    fn default() -> Self {
        Projects::Only(vec![])
    }
}

impl Projects {
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
                    tx.emit(crate::kernel::events::NewEvent::new(
                        "agent.created",
                        json!({ "agent": p.name, "kind": p.kind }),
                    ))?;
                } else {
                    tx.conn().execute(
                        "UPDATE agents_roster SET instructions = ?2, model = ?3, auth = ?4, projects = ?5, cwd = ?6, updated_at = ?7, grants = ?8 WHERE name = ?1",
                        params![p.name, p.instructions, p.model, auth, projects, p.cwd, now, grants],
                    )?;
                    tx.emit(crate::kernel::events::NewEvent::new(
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
    /// The agent's threads, newest first: `threads.list`, read back as the type it publishes.
    async fn threads(&self, name: &str) -> Result<Vec<Listed>, ToolError> {
        let all = self.ctx.call("threads.list", json!({})).await?;
        let all: Vec<Listed> = serde_json::from_value(all).map_err(ToolError::internal)?;
        Ok(all
            .into_iter()
            .filter(|t| t.info.agent.as_deref() == Some(name))
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

/// The schema's rule for an agent's name, held here again on purpose: the name becomes a folder
/// under `VYRE_HOME/agents`, and a path is not left to one layer alone.
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
        include_str!("../manifests/agents.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        let router = self.router.clone();
        Box::pin(async move {
            ctx.store().migrate(MIGRATIONS).await?;
            let book = Book { ctx: ctx.clone() };
            tools::register(&ctx, book.clone())?;
            router.set_agents(Arc::new(book));
            Ok(())
        })
    }
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
        assert!(all.allows("anything"));
        let some: Projects = serde_json::from_value(json!(["acme", "home"])).unwrap();
        assert!(some.allows("acme") && !some.allows("other"));
        let check = crate::kernel::tools::input::InputCheck::new(
            &crate::kernel::tools::input::schema_of::<Projects>(),
        )
        .unwrap();
        for bad in [json!("acme"), json!([""]), json!(["  "])] {
            assert!(check.check(&mut bad.clone()).is_err(), "{bad}");
        }
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
    }

    /// What an agent's auth may be is said once, in its schema, and the input layer holds it.
    #[test]
    fn the_auth_schema_refuses_what_no_handler_checks_again() {
        let check = crate::kernel::tools::input::InputCheck::new(
            &crate::kernel::tools::input::schema_of::<AgentAuth>(),
        )
        .unwrap();
        for good in [
            json!({}),
            json!({ "mode": "sessions" }),
            json!({ "mode": "api-key", "vault": "juno-key", "budget_usd": 5.0 }),
        ] {
            let mut v = good.clone();
            assert!(check.check(&mut v).is_ok(), "{good}");
        }
        for bad in [
            json!({ "mode": "password" }),
            json!({ "vault": "x" }),
            json!({ "mode": "sessions", "vault": "x" }),
            json!({ "budget_usd": 0.0 }),
            json!({ "mode": "api-key", "vault": "no/slashes" }),
            json!({ "mode": "api-key", "vault": ".." }),
        ] {
            let mut v = bad.clone();
            assert!(check.check(&mut v).is_err(), "{bad}");
        }
    }
}
