//! The provider router (ADR 0030 section 5): the providers this machine has, by name, and the
//! credential sessions run on. The `sessions` module fills it at start; the Switchboard (the
//! `threads` module) asks it for providers and credentials.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use super::agents::AgentProfile;
use super::claude::Credential;
use super::provider::{BoxFuture, Provider};
use super::slots::Slots;
use crate::modules::Ctx;
use crate::tools::{ErrorKind, ToolError};
use crate::vault::auth::{self, AuthMode};

/// The agents this machine has, as the `agents` module keeps them: what a launch needs to know
/// about one, and its credentials, fetched as the agent.
pub trait AgentBook: Send + Sync {
    fn profile<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<AgentProfile, ToolError>>;
    /// The agent's own credential (its fallback API key when `fallback`), or `None` when it
    /// runs on the machine's.
    fn credential<'a>(
        &'a self,
        name: &'a str,
        fallback: bool,
    ) -> BoxFuture<'a, Result<Option<(AuthMode, Credential)>, ToolError>>;
}

#[derive(Default)]
pub struct Router {
    /// Filled by the `agents` module when it starts.
    agents: RwLock<Option<Arc<dyn AgentBook>>>,
    /// The concurrency slots, kept by the `sessions` module.
    slots: RwLock<Option<Arc<Slots>>>,
    // std RwLock: registered at start, read per launch.
    providers: RwLock<BTreeMap<String, Arc<dyn Provider>>>,
    /// The `sessions` module's context: the vault grants are to `module:sessions`.
    sessions: RwLock<Option<Ctx>>,
    /// Where sessions' HOME is (their `~/.claude`).
    home: RwLock<Option<PathBuf>>,
}

impl Router {
    pub fn register(&self, provider: Arc<dyn Provider>) -> Result<(), String> {
        let mut providers = self.providers.write().expect("providers");
        let name = provider.id().to_string();
        if providers.contains_key(&name) {
            return Err(format!("a provider named {name:?} is already registered"));
        }
        providers.insert(name, provider);
        Ok(())
    }

    pub fn names(&self) -> Vec<String> {
        self.providers
            .read()
            .expect("providers")
            .keys()
            .cloned()
            .collect()
    }

    pub fn get(&self, name: &str) -> Result<Arc<dyn Provider>, ToolError> {
        self.providers
            .read()
            .expect("providers")
            .get(name)
            .cloned()
            .ok_or_else(|| {
                ToolError::new(
                    ErrorKind::InvalidInput,
                    "unknown_provider",
                    format!(
                        "no provider named {name:?}; this machine has: {}",
                        self.names().join(", ")
                    ),
                )
            })
    }

    pub(crate) fn set_sessions_ctx(&self, ctx: Ctx, home: PathBuf) {
        *self.sessions.write().expect("sessions ctx") = Some(ctx);
        *self.home.write().expect("sessions home") = Some(home);
    }

    pub(crate) fn set_slots(&self, slots: Arc<Slots>) {
        *self.slots.write().expect("slots") = Some(slots);
    }

    /// The concurrency slots, once the sessions module runs.
    pub fn slots(&self) -> Option<Arc<Slots>> {
        self.slots.read().expect("slots").clone()
    }

    pub(crate) fn set_agents(&self, book: Arc<dyn AgentBook>) {
        *self.agents.write().expect("agents") = Some(book);
    }

    fn agents(&self) -> Result<Arc<dyn AgentBook>, ToolError> {
        self.agents.read().expect("agents").clone().ok_or_else(|| {
            ToolError::new(
                ErrorKind::Unavailable,
                "agents_unavailable",
                "the agents module is not running",
            )
        })
    }

    /// What a launch needs to know about agent `name`.
    pub async fn agent(&self, name: &str) -> Result<AgentProfile, ToolError> {
        self.agents()?.profile(name).await
    }

    /// The credential a session runs on: its agent's own, else the machine's; with `fallback`,
    /// the API key used once a subscription's limit is reached.
    pub async fn credential_for(
        &self,
        agent: Option<&str>,
        fallback: bool,
    ) -> Result<(AuthMode, Credential), ToolError> {
        if let Some(name) = agent
            && let Some(own) = self.agents()?.credential(name, fallback).await?
        {
            return Ok(own);
        }
        if fallback {
            let ctx = self.sessions_ctx()?;
            let value = ctx
                .vault()
                .fetch(auth::API_KEY_ITEM)
                .await
                .map_err(ToolError::from)?;
            return Ok((
                AuthMode::ApiKey,
                Credential::ApiKey(value.primary().clone()),
            ));
        }
        self.credential().await
    }

    fn sessions_ctx(&self) -> Result<Ctx, ToolError> {
        self.sessions
            .read()
            .expect("sessions ctx")
            .clone()
            .ok_or_else(|| {
                ToolError::new(
                    ErrorKind::Unavailable,
                    "sessions_unavailable",
                    "the sessions module is not running",
                )
            })
    }

    /// When session `id`'s transcript last changed, if it has one.
    pub fn transcript_written(&self, id: &str) -> Option<std::time::SystemTime> {
        let path = self.transcript_path(id)?;
        std::fs::metadata(path).ok()?.modified().ok()
    }

    /// Session `id`'s transcript under the sessions' HOME, if it has one there.
    pub fn transcript_path(&self, id: &str) -> Option<std::path::PathBuf> {
        let home = self.home.read().expect("sessions home").clone()?;
        crate::transcripts::find(&home, id)
    }

    /// The auth mode in force and the credential for it, from the vault.
    pub async fn credential(&self) -> Result<(AuthMode, Credential), ToolError> {
        let ctx = self.sessions_ctx()?;
        let (mut mode, source) =
            auth::mode(ctx.kernel().config(), ctx.kernel().role()).map_err(ToolError::invalid)?;
        let credential = match mode.item() {
            None => Credential::Login,
            Some(item) => {
                let mut fetched = ctx.vault().fetch(item).await.map_err(ToolError::from);
                // The role's default and no setup token: an API key alone is what to use
                // (`auth::effective`, which `vault.status` reports the same way).
                if source == auth::DEFAULT_SOURCE
                    && mode == AuthMode::SetupToken
                    && fetched.as_ref().is_err_and(|e| e.code == "unknown_item")
                    && let Ok(key) = ctx.vault().fetch(auth::API_KEY_ITEM).await
                {
                    mode = AuthMode::ApiKey;
                    fetched = Ok(key);
                }
                let value = fetched?;
                let secret = value.primary().clone();
                match mode {
                    AuthMode::ApiKey => Credential::ApiKey(secret),
                    _ => Credential::SetupToken(secret),
                }
            }
        };
        Ok((mode, credential))
    }
}
