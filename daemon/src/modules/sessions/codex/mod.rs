//! The Codex provider (ADR 0038): OpenAI's Codex CLI driven through `codex app-server`, its
//! JSON-RPC over stdio, as provider `codex`.
//!
//! - `translate`: its notifications as happenings;
//! - `params`: Vyre's terms as Codex's (a mode's policies, a message's input, a decision);
//! - `session`: one live thread (turns, steering, approvals as asks, interrupt, mode, model);
//! - `tools`: Vyre's own tools, given to Codex as its dynamic tools.
//!
//! Its process is started and contained as an ACP agent's is (`sessions::agent_process`), with
//! HOME the sessions' own (so its rollouts are `~/.codex/sessions/...` there). Its credential
//! is the vault's `openai-api-key`, given over the pipe (`account/login/start`) into a store
//! Codex keeps in memory only (`cli_auth_credentials_store = "ephemeral"`): never in an
//! environment, a file or an argument. Without that item, Codex uses the person's own sign-in
//! (`codex login` in the sessions' home). Which Codex thread a Vyre thread is, is kept in
//! `VYRE_HOME/codex-threads/<thread>`.

pub mod forms;
pub mod open;
pub mod params;
pub mod questions;
pub mod session;
pub mod tools;
pub mod translate;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use self::session::CodexSession;
use crate::kernel::contracts::provider::{
    BoxFuture, Capabilities, Credential, Launch, Provider, ProviderError, Session, Unresumable,
};
use crate::modules::sessions::agent_process::{AgentProcess, Command};
use crate::modules::sessions::kept::Kept;
use crate::modules::sessions::npm_cli::NpmCli;
use crate::modules::sessions::sandbox::Contain;

/// The Codex CLI version Vyre was built and tested against.
pub const PINNED_VERSION: &str = "0.171.0";

/// The vault item of the OpenAI API key Codex runs on, when the person keeps one there.
pub const API_KEY_ITEM: &str = "openai-api-key";

/// How long Codex gets to answer `initialize` and to make or load a thread.
const START_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

pub struct CodexProvider {
    pub cli: Arc<NpmCli>,
    /// The Responses API's base URL (`sessions.codex_base_url`: a gateway, or a test's fake);
    /// none for OpenAI's own.
    pub base_url: Option<String>,
    /// HOME for its sessions (shared with the other providers' sessions).
    pub home: PathBuf,
    pub contain: Arc<Contain>,
    /// Where each thread's Codex thread id is kept.
    pub ids: PathBuf,
    /// What each model's tokens cost (`sessions.prices`).
    pub prices: Arc<std::collections::BTreeMap<String, crate::kernel::config::Price>>,
}

/// OpenAI's API, where the vault's key goes when no other address is set.
pub const OPENAI_URL: &str = "https://api.openai.com/v1";

/// `codex app-server`'s arguments: its settings as `-c key=value` (TOML values), which Codex
/// puts above its `~/.codex/config.toml`.
///
/// That file is in the sessions' home, which sessions write: one could name another provider
/// there (`model_provider`, its own `model_providers.vyre`, `openai_base_url`) and have the next
/// Codex send the vault's key to it. So with a key from the vault the provider is always
/// Vyre's own, given whole here: OpenAI's API (or `base_url`), signed in with that key.
pub fn arguments(base_url: Option<&str>, credential: &Credential) -> Vec<String> {
    let mut args = vec!["app-server".to_string()];
    let mut set = |key: &str, value: String| {
        args.push("-c".into());
        args.push(format!("{key}={value}"));
    };
    set("check_for_update_on_startup", "false".into());
    // The model may ask the person questions in any mode, as Claude Code's may: asked through
    // Vyre's question ask (`questions.rs`). Codex offers its tool only in plan mode otherwise.
    set("features.default_mode_request_user_input", "true".into());
    let keyed = matches!(credential, Credential::ApiKey(_));
    if keyed {
        // The key Vyre gives is held in memory only, never written to ~/.codex.
        set("cli_auth_credentials_store", "\"ephemeral\"".into());
    }
    if keyed || base_url.is_some() {
        // Signed in as OpenAI's own provider is. The WebSocket transport is OpenAI's own, so
        // another address is spoken to over HTTP.
        let url = toml_string(base_url.unwrap_or(OPENAI_URL));
        let websockets = base_url.is_none();
        set(
            "model_providers.vyre",
            format!(
                "{{name=\"OpenAI\",base_url={url},wire_api=\"responses\",requires_openai_auth=true,supports_websockets={websockets}}}"
            ),
        );
        set("model_provider", "\"vyre\"".into());
    } else {
        // The person's own sign-in goes to OpenAI's own provider, whichever a file names.
        set("model_provider", "\"openai\"".into());
    }
    args
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

impl CodexProvider {
    /// The Codex thread of Vyre's thread `thread`: the one Vyre started for it, else Codex's
    /// own thread of that id when its rollout is in the sessions' home (a session started in
    /// Codex's terminal, adopted).
    fn codex_thread(&self, thread: &str) -> Option<String> {
        if let Some(kept) = Kept::of(&self.ids, thread) {
            return Some(kept.session);
        }
        self.has_rollout(thread).then(|| thread.to_string())
    }

    /// The Codex turn Vyre's message `uuid` of thread `thread` began, from its rollout.
    fn turn_of(&self, thread: &str, uuid: &str) -> Option<String> {
        let codex = self.codex_thread(thread)?;
        let rollout = crate::kernel::transcripts::rollout::find(&self.home, &codex)?;
        crate::kernel::transcripts::rollout_entries::turn_of(&rollout, uuid)
    }

    /// Whether Codex has a rollout of thread `id` in the sessions' home.
    fn has_rollout(&self, id: &str) -> bool {
        crate::kernel::transcripts::rollout::find(&self.home, id).is_some()
    }

    /// Make, resume or fork the Codex thread for `launch`: its id, and the model it runs on.
    async fn open(
        &self,
        process: &AgentProcess,
        launch: &Launch,
    ) -> Result<(String, Option<String>), String> {
        let cwd = launch.cwd.display().to_string();
        let rpc = process.rpc.clone();
        let (approval, _) = params::policies(&launch.mode);
        let mut params = json!({ "cwd": cwd, "approvalPolicy": approval });
        if let Some(model) = &launch.model {
            params["model"] = json!(model);
        }
        if let Some(prompt) = &launch.append_system_prompt {
            params["developerInstructions"] = json!(prompt);
        }
        // Vyre's tools go with a new thread; Codex keeps them in its rollout, so a resumed or
        // forked thread has them again.
        if let (None, false, Some(tools)) = (&launch.fork_from, launch.resume, &launch.host_tools) {
            params["dynamicTools"] = tools::specs(tools);
        }
        let (method, from) = if let Some(from) = &launch.fork_from {
            ("thread/fork", Some(from))
        } else if launch.resume {
            ("thread/resume", Some(&launch.id))
        } else {
            ("thread/start", None)
        };
        if let Some(thread) = from {
            let codex = self
                .codex_thread(thread)
                .ok_or_else(|| format!("thread {thread} has no Codex thread"))?;
            params["threadId"] = json!(codex);
        }
        // A fork from a message takes the history through the turn that message began.
        if let (Some(from), Some(uuid)) = (&launch.fork_from, &launch.resume_at) {
            let turn = self
                .turn_of(from, uuid)
                .ok_or_else(|| format!("thread {from} has no message {uuid} in Codex's rollout"))?;
            params["lastTurnId"] = json!(turn);
        }
        let answer: Value = rpc
            .request(method, params)
            .await
            .map_err(|e| e.to_string())?;
        let id = answer["thread"]["id"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("{method} gave no thread id"))?;
        Ok((id, answer["model"].as_str().map(String::from)))
    }
}

impl Provider for CodexProvider {
    fn id(&self) -> &str {
        "codex"
    }
    fn driver(&self) -> &str {
        "codex"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streaming: true,
            resume: true,
            interrupt: true,
            modes: true,
            questions: true,
            transcripts: false,
        }
    }
    /// The reasoning efforts Codex 0.171.0's models offer (`model/list`; a few lack `ultra`,
    /// which the model then refuses in the turn's words).
    fn efforts(&self) -> &'static [&'static str] {
        &["low", "medium", "high", "xhigh", "max", "ultra"]
    }
    fn runs_claude(&self) -> bool {
        false
    }
    /// Codex can fork through a turn, and revert to before one (`thread/revert`), but not keep
    /// a message while dropping its answer, which is what a rewind to it is in Vyre.
    fn rewinds(&self) -> bool {
        false
    }
    fn key_item(&self) -> Option<&str> {
        Some(API_KEY_ITEM)
    }
    /// Codex reports tokens; a turn is priced by the person's `sessions.prices` for its model.
    /// Its default model is Codex's to choose, so it is not known to be priced.
    fn prices(&self, model: Option<&str>) -> bool {
        model.is_some_and(|m| self.prices.contains_key(m))
    }

    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Session>, ProviderError>> {
        Box::pin(async move {
            let program = self.cli.program().await.map_err(ProviderError::Start)?;
            let command = Command {
                label: "Codex",
                setting: "sessions.codex",
                program,
                args: arguments(self.base_url.as_deref(), &launch.credential),
                env: vec![],
            };
            let process = AgentProcess::spawn(
                &command,
                launch.cwd.clone(),
                self.home.clone(),
                launch.env.clone(),
                &self.contain,
            )
            .await?;
            process.register(&launch);
            let rpc = process.rpc.clone();
            let mut init = json!({
                "clientInfo": { "name": "vyre", "title": "Vyre", "version": crate::kernel::VERSION },
            });
            if launch.host_tools.is_some() {
                // Vyre's tools are Codex's dynamic tools, a part of its protocol it calls
                // experimental.
                init["capabilities"] = json!({ "experimentalApi": true });
            }
            match tokio::time::timeout(START_WAIT, rpc.request("initialize", init)).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(process.failed("initialize", e).await),
                Err(_) => return Err(process.failed("initialize", "no answer in 60 s").await),
            }
            if let Err(e) = rpc.notify("initialized", json!({})) {
                return Err(process.failed("initialize", e).await);
            }
            if let Credential::ApiKey(key) = &launch.credential {
                let login = json!({ "type": "apiKey", "apiKey": key.expose() });
                match rpc.request("account/login/start", login).await {
                    Ok(_) => {}
                    Err(e) => return Err(process.failed("sign-in", e).await),
                }
            }
            let (thread, model) =
                match tokio::time::timeout(START_WAIT, self.open(&process, &launch)).await {
                    Ok(Ok(opened)) => opened,
                    Ok(Err(e)) => return Err(process.failed("thread", e).await),
                    Err(_) => return Err(process.failed("thread", "no answer in 60 s").await),
                };
            // A resumed or forked thread has history; a new one once a turn completes.
            let kept = Kept {
                session: thread.clone(),
                answered: launch.resume || launch.fork_from.is_some(),
            };
            let file = match kept.keep(&self.ids, &launch.id) {
                Ok(file) => file,
                Err(e) => {
                    process.stop(std::time::Duration::from_millis(100)).await;
                    return Err(e);
                }
            };
            let unanswered = (!kept.answered).then_some((file, kept));
            let mut session = CodexSession::new(process, thread, &launch, unanswered);
            session.priced(model, self.prices.clone());
            Ok(Box::new(session) as Box<dyn Session>)
        })
    }

    fn can_resume(&self, id: &str, at: Option<&str>) -> Result<(), Unresumable> {
        // A thread Codex never completed a turn of may have kept nothing: it starts afresh.
        // One of Codex's own (adopted) has its rollout.
        let resumable = match Kept::of(&self.ids, id) {
            Some(kept) => kept.answered,
            None => self.has_rollout(id),
        };
        if !resumable {
            return Err(Unresumable::NoHistory {
                looked_in: self.ids.clone(),
            });
        }
        // A fork from a message forks through the turn it began (a rewind is refused before
        // this is asked: `rewinds`).
        match at {
            Some(uuid) if self.turn_of(id, uuid).is_none() => Err(Unresumable::UnknownMessage {
                uuid: uuid.to_string(),
            }),
            _ => Ok(()),
        }
    }

    fn stamp<'a>(&'a self, _cwd: &'a std::path::Path) -> BoxFuture<'a, String> {
        Box::pin(async move {
            let program = match self.cli.program().await {
                Ok(p) => crate::modules::sessions::spare_checks::file(&p),
                Err(e) => e,
            };
            format!("{:?}\n{program}", self.base_url)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::contracts::secret::Secret;

    #[test]
    fn a_key_is_never_an_argument_and_always_goes_to_vyres_provider() {
        let key = Credential::ApiKey(Secret::new("sk-never-in-args".into()));
        let provider = |args: &[String]| {
            args.iter()
                .find(|a| a.starts_with("model_providers.vyre="))
                .cloned()
        };
        let args = arguments(Some("http://127.0.0.1:9/v1"), &key);
        assert!(args.iter().all(|a| !a.contains("sk-never")));
        assert!(args.contains(&"cli_auth_credentials_store=\"ephemeral\"".to_string()));
        assert!(args.contains(&"model_provider=\"vyre\"".to_string()));
        let vyre = provider(&args).unwrap();
        assert!(vyre.contains("base_url=\"http://127.0.0.1:9/v1\""));
        assert!(vyre.contains("supports_websockets=false"));
        // No address set: OpenAI's own, still Vyre's provider, whatever ~/.codex names.
        let args = arguments(None, &key);
        assert!(args.contains(&"model_provider=\"vyre\"".to_string()));
        let vyre = provider(&args).unwrap();
        assert!(vyre.contains(OPENAI_URL) && vyre.contains("supports_websockets=true"));
        // The person's own sign-in is read from ~/.codex, as Codex keeps it, for OpenAI's own.
        let own = arguments(None, &Credential::Login);
        assert!(!own.iter().any(|a| a.contains("ephemeral")));
        assert!(own.contains(&"model_provider=\"openai\"".to_string()));
        assert!(provider(&own).is_none());
    }
}
