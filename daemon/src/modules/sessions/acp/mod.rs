//! Providers for any agent that speaks the Agent Client Protocol (ADR 0037): each
//! `sessions.acp.<name>` in config is provider `acp-<name>`, started like any session (its own
//! process group, contained as Claude Code's sessions are), with its permission requests as
//! Vyre's asks and its updates as thread events.
//!
//! - `sessions::rpc`: JSON-RPC 2.0 over the agent's stdio;
//! - `sessions::agent_process`: the agent's process;
//! - `translate`: its updates as happenings;
//! - `session`: one live session.
//!
//! An ACP agent names its sessions itself; which of its sessions a thread is, is kept in
//! `VYRE_HOME/acp/<provider>/<thread>`, which no session can reach, so that a resume goes on
//! with the same one.

pub mod session;
pub mod translate;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use self::session::AcpSession;
use self::translate::Translator;
use crate::kernel::contracts::provider::{
    BoxFuture, Capabilities, Launch, Provider, ProviderError, Session, Unresumable,
};
use crate::modules::sessions::agent_process::{AgentProcess, Command};
use crate::modules::sessions::sandbox::Contain;

/// The protocol version Vyre speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// How long an agent gets to answer `initialize` and to make or load a session.
const START_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

pub use crate::modules::sessions::kept::Kept;

pub struct AcpProvider {
    /// `acp-<name>`.
    pub id: String,
    pub command: Command,
    /// HOME for its sessions (shared with Claude Code's sessions).
    pub home: PathBuf,
    pub contain: Arc<Contain>,
    /// Where each thread's ACP session id is kept (`VYRE_HOME/acp/<provider>`).
    pub ids: PathBuf,
}

impl AcpProvider {
    /// The agent's session for thread `thread`, when it made one.
    fn session_of(&self, thread: &str) -> Option<Kept> {
        Kept::of(&self.ids, thread)
    }

    /// Make, resume or fork the agent's session for `launch`: its id and what the agent
    /// answered (modes, models).
    async fn open(
        &self,
        process: &mut AgentProcess,
        caps: &Value,
        launch: &Launch,
    ) -> Result<(String, Value), String> {
        let cwd = launch.cwd.display().to_string();
        let sessions = &caps["sessionCapabilities"];
        let rpc = process.rpc.clone();
        if let Some(from) = &launch.fork_from {
            let from = self
                .session_of(from)
                .ok_or_else(|| format!("thread {from} has no session of this agent to fork"))?
                .session;
            if sessions.get("fork").is_none() {
                return Err("this agent cannot fork a session".into());
            }
            let made = rpc
                .request(
                    "session/fork",
                    json!({ "sessionId": from, "cwd": cwd, "mcpServers": [] }),
                )
                .await
                .map_err(|e| e.to_string())?;
            let id = made["sessionId"]
                .as_str()
                .ok_or("session/fork gave no sessionId")?;
            return Ok((id.to_string(), made));
        }
        if launch.resume {
            let id = self
                .session_of(&launch.id)
                .ok_or_else(|| format!("thread {} has no session of this agent", launch.id))?
                .session;
            let params = json!({ "sessionId": id, "cwd": cwd, "mcpServers": [] });
            let answer = if sessions.get("resume").is_some() {
                rpc.request("session/resume", params).await
            } else if caps["loadSession"] == true {
                let answer = rpc.request("session/load", params).await;
                // The agent replays the session's history as updates before it answers: the
                // thread has it already.
                while process.incoming.try_recv().is_ok() {}
                answer
            } else {
                return Err("this agent cannot resume a session".into());
            };
            return Ok((id, answer.map_err(|e| e.to_string())?));
        }
        let made = rpc
            .request("session/new", json!({ "cwd": cwd, "mcpServers": [] }))
            .await
            .map_err(|e| e.to_string())?;
        let id = made["sessionId"]
            .as_str()
            .ok_or("session/new gave no sessionId")?;
        Ok((id.to_string(), made))
    }
}

impl Provider for AcpProvider {
    fn id(&self) -> &str {
        &self.id
    }
    fn driver(&self) -> &str {
        "acp"
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
    /// The agent signs in its own way (its `env` in config) and names its own models.
    fn runs_claude(&self) -> bool {
        false
    }
    /// ACP has no message ids to go back to.
    fn rewinds(&self) -> bool {
        false
    }
    /// ACP says nothing of what a turn cost.
    fn prices(&self, _model: Option<&str>) -> bool {
        false
    }

    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Session>, ProviderError>> {
        Box::pin(async move {
            let mut process = AgentProcess::spawn(
                &self.command,
                launch.cwd.clone(),
                self.home.clone(),
                launch.env.clone(),
                &self.contain,
            )
            .await?;
            process.register(&launch);
            let init = json!({
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": { "fs": { "readTextFile": false, "writeTextFile": false }, "terminal": false },
                "clientInfo": { "name": "vyre", "version": crate::kernel::VERSION },
            });
            let rpc = process.rpc.clone();
            let caps = match tokio::time::timeout(START_WAIT, rpc.request("initialize", init)).await
            {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => return Err(process.failed("initialize", e).await),
                Err(_) => return Err(process.failed("initialize", "no answer in 60 s").await),
            };
            if caps["protocolVersion"].as_u64() != Some(PROTOCOL_VERSION) {
                let said = caps["protocolVersion"].to_string();
                return Err(process
                    .failed(
                        "initialize",
                        format!("it speaks ACP version {said}, Vyre speaks {PROTOCOL_VERSION}"),
                    )
                    .await);
            }
            let caps = caps["agentCapabilities"].clone();
            let opened =
                tokio::time::timeout(START_WAIT, self.open(&mut process, &caps, &launch)).await;
            let (session, answer) = match opened {
                Ok(Ok(made)) => made,
                Ok(Err(e)) => return Err(process.failed("session", e).await),
                Err(_) => return Err(process.failed("session", "no answer in 60 s").await),
            };
            // A resumed or forked session has history; a new one once the agent answers.
            let kept = Kept {
                session: session.clone(),
                answered: launch.resume || launch.fork_from.is_some(),
            };
            let file = match kept.keep(&self.ids, &launch.id) {
                Ok(file) => file,
                Err(e) => {
                    process.stop(std::time::Duration::from_millis(100)).await;
                    return Err(e);
                }
            };
            let modes: Vec<String> = answer["modes"]["availableModes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str().map(String::from))
                .collect();
            let current = answer["modes"]["currentModeId"].as_str();
            if modes.contains(&launch.mode) && current != Some(launch.mode.as_str()) {
                let set = rpc
                    .request(
                        "session/set_mode",
                        json!({ "sessionId": session, "modeId": launch.mode }),
                    )
                    .await;
                if let Err(e) = set {
                    return Err(process.failed("mode", e).await);
                }
            }
            if let Some(model) = &launch.model
                && let Err(e) = session::set_model(&rpc, &session, model).await
            {
                // The agent's own model, said in the log: a chosen model it does not know is
                // not a reason to refuse the session.
                tracing::warn!(provider = %self.id, model, error = %e, "the agent kept its own model");
            }
            let unanswered = (!kept.answered).then_some((file, kept));
            Ok(Box::new(AcpSession::new(
                process,
                session,
                modes,
                Translator::default(),
                unanswered,
            )) as Box<dyn Session>)
        })
    }

    fn can_resume(&self, id: &str, at: Option<&str>) -> Result<(), Unresumable> {
        // A session whose agent never answered (killed in its first turn) may have kept
        // nothing: the thread starts afresh, as a Claude Code thread without a transcript does.
        if !self.session_of(id).is_some_and(|k| k.answered) {
            return Err(Unresumable::NoHistory {
                looked_in: self.ids.clone(),
            });
        }
        match at {
            // ACP has no message ids to go back to.
            Some(uuid) => Err(Unresumable::UnknownMessage {
                uuid: uuid.to_string(),
            }),
            None => Ok(()),
        }
    }

    fn stamp<'a>(&'a self, _cwd: &'a std::path::Path) -> BoxFuture<'a, String> {
        Box::pin(async move {
            let program = crate::modules::sessions::spare_checks::file(&self.command.program);
            format!("{:?}\n{program}", self.command)
        })
    }
}
