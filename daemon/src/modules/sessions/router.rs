//! The provider router (ADR 0030 section 5): the providers this machine has, by name, and the
//! credential sessions run on. The `sessions` module fills it at start; the Switchboard (the
//! `threads` module) asks it for providers and credentials.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use super::agents::AgentProfile;
use super::slots::Slots;
use crate::kernel::contracts::auth::{self, AuthMode};
use crate::kernel::contracts::provider::Credential;
use crate::kernel::contracts::provider::{BoxFuture, Provider, Providers};
use crate::kernel::module::Ctx;
use crate::kernel::tools::{ErrorKind, ToolError};

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

pub struct Router {
    /// The providers modules registered (`Ctx::provider`), shared with the kernel.
    providers: Providers,
    /// Filled by the `agents` module when it starts.
    agents: RwLock<Option<Arc<dyn AgentBook>>>,
    /// The concurrency slots, kept by the `sessions` module.
    slots: RwLock<Option<Arc<Slots>>>,
    /// The `sessions` module's context: the vault grants are to `module:sessions`.
    sessions: RwLock<Option<Ctx>>,
    /// Where sessions' HOME is (their `~/.claude`).
    home: RwLock<Option<PathBuf>>,
}

impl Router {
    /// A router over `providers`, the registry the kernel keeps.
    pub fn new(providers: Providers) -> Router {
        Router {
            providers,
            agents: RwLock::new(None),
            slots: RwLock::new(None),
            sessions: RwLock::new(None),
            home: RwLock::new(None),
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.providers.names()
    }

    pub fn get(&self, name: &str) -> Result<Arc<dyn Provider>, ToolError> {
        self.providers.get(name).ok_or_else(|| {
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

    /// The API key in vault item `item` for a provider that is not Claude Code's (its
    /// [`Provider::key_item`]); none when the vault has no such item (the program's own
    /// sign-in is used). A locked vault or an item not granted to sessions is an error: the
    /// person meant the key to be used.
    pub async fn provider_key(
        &self,
        item: &str,
    ) -> Result<Option<crate::kernel::contracts::secret::Secret>, ToolError> {
        let vault = self.sessions_ctx()?.vault();
        // Asked first without opening anything: a locked vault does not stop the program's
        // own sign-in when there is no key to open.
        match vault.may_fetch(item).await {
            Err(crate::kernel::contracts::vault::VaultError::NotFound) => return Ok(None),
            Err(e) => return Err(ToolError::from(e)),
            Ok(_) => {}
        }
        let value = vault.fetch(item).await.map_err(ToolError::from)?;
        Ok(Some(value.primary().clone()))
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
        let path = self.history_file(id)?;
        std::fs::metadata(path).ok()?.modified().ok()
    }

    /// Session `id`'s transcript under the sessions' HOME, if it has one there.
    pub fn transcript_path(&self, id: &str) -> Option<std::path::PathBuf> {
        let home = self.home.read().expect("sessions home").clone()?;
        crate::kernel::transcripts::find(&home, id)
    }

    /// Session `id`'s history file under the sessions' HOME: Claude Code's transcript, else
    /// Codex's rollout of that thread (only for when it last changed: the timeline reads
    /// Claude Code's transcripts alone).
    fn history_file(&self, id: &str) -> Option<std::path::PathBuf> {
        let home = self.home.read().expect("sessions home").clone()?;
        crate::kernel::transcripts::find(&home, id)
            .or_else(|| crate::kernel::transcripts::rollout::find(&home, id))
    }

    /// The auth mode in force and the credential for it, from the vault (none there: an error
    /// that says how to give it).
    pub async fn credential(&self) -> Result<(AuthMode, Credential), ToolError> {
        let ctx = self.sessions_ctx()?;
        let (mut mode, source) =
            auth::mode(ctx.config(), ctx.role()).map_err(ToolError::invalid)?;
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
                let value = fetched.map_err(|e| missing(e, item))?;
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

/// A session's credential missing from the vault: the vault's own code, and words that say what
/// to do instead of only that an item is not there.
fn missing(mut e: ToolError, item: &str) -> ToolError {
    if e.code == "unknown_item" {
        e.message = format!(
            "sessions sign in with the vault's `{item}` (sessions.auth), which is not there yet: put it in (`vyre vault put {item}`) and give it to sessions (`vyre vault grant {item} sessions`), or finish the onboarding in the web app, which does both"
        );
    }
    e
}
