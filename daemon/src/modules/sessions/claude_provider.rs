//! The Claude provider: Claude Code sessions through the [`ClaudeProcess`] driver, with the
//! CLI's wire messages translated into the provider contract's [`Happening`]s.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::claude::{ClaudeOptions, ClaudeProcess};
pub use super::claude_translate::Translator;
use super::sandbox::Containment;
use super::wire::{Incoming, WireError};
use crate::kernel::contracts::provider::{
    BoxFuture, Capabilities, Exit, Happening, Launch, Priority, ProcessIds, Provider,
    ProviderError, Session, SlashCommand, Unresumable,
};
use crate::kernel::transcripts;

pub struct ClaudeProvider {
    pub cli: std::sync::Arc<super::claude_cli::ClaudeCli>,
    pub base_url: Option<String>,
    /// HOME for the sessions (where `~/.claude` lives).
    pub home: PathBuf,
    /// How sessions are contained here (ADR 0014), shared with the CLI's version probe.
    pub contain: std::sync::Arc<super::sandbox::Contain>,
}

impl Provider for ClaudeProvider {
    fn id(&self) -> &str {
        "claude"
    }
    fn driver(&self) -> &str {
        "claude-cli-stream-json"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streaming: true,
            resume: true,
            interrupt: true,
            modes: true,
            questions: true,
            transcripts: true,
        }
    }
    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Session>, ProviderError>> {
        Box::pin(async move {
            let program = self.cli.program().await.map_err(ProviderError::Start)?;
            let (run_as, sandbox, claude_sandbox) =
                match self.contain.get().await.map_err(ProviderError::Start)? {
                    Containment::User(r) => (Some(*r), None, None),
                    Containment::Sandbox(s) => (None, Some(s.clone()), None),
                    Containment::Claude { hide } => (None, None, Some(hide.clone())),
                    Containment::None => (None, None, None),
                };
            let options = ClaudeOptions {
                program,
                cwd: launch.cwd,
                session_id: launch.id,
                resume: launch.resume,
                fork_from: launch.fork_from,
                resume_at: launch.resume_at,
                model: launch.model,
                permission_mode: launch.mode,
                append_system_prompt: launch.append_system_prompt,
                system_prompt_snapshot: launch.system_prompt_snapshot,
                plugin_dirs: launch.plugin_dirs,
                max_budget_usd: launch.budget_usd,
                base_url: self.base_url.clone(),
                credential: launch.credential,
                home: self.home.clone(),
                run_as,
                sandbox,
                expose_ro: self.contain.expose_ro.clone(),
                claude_sandbox,
                processes: launch.processes,
                extra_env: launch.env,
            };
            let (process, init) = ClaudeProcess::start(&options)
                .await
                .map_err(|e| ProviderError::Start(e.to_string()))?;
            // `initialize`'s commands: `{name, description, argumentHint, builtin}` (2.1.328).
            let commands = init["commands"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| {
                    Some(SlashCommand {
                        name: c["name"].as_str()?.to_string(),
                        description: c["description"].as_str().unwrap_or("").to_string(),
                        argument_hint: c["argumentHint"].as_str().unwrap_or("").to_string(),
                    })
                })
                .collect();
            Ok(Box::new(ClaudeSession {
                ids: ProcessIds {
                    pid: process.pid,
                    pgid: process.pgid,
                    sid: process.sid,
                    pid_namespace: process.sandbox.map(|s| s.pid_namespace),
                },
                process,
                commands,
                stream: Translator::default(),
                queue: Vec::new(),
            }) as Box<dyn Session>)
        })
    }
    fn can_resume(&self, id: &str, at: Option<&str>) -> Result<(), Unresumable> {
        let path = transcripts::find(&self.home, id).ok_or_else(|| Unresumable::NoHistory {
            looked_in: transcripts::projects_dir(&self.home),
        })?;
        match at {
            Some(uuid) if !transcripts::has_entry(&path, uuid) => {
                Err(Unresumable::UnknownMessage {
                    uuid: uuid.to_string(),
                })
            }
            _ => Ok(()),
        }
    }
}

struct ClaudeSession {
    process: ClaudeProcess,
    ids: ProcessIds,
    commands: Vec<SlashCommand>,
    /// What the CLI's messages mean, with what it remembers of the message being streamed.
    stream: Translator,
    /// Happenings translated but not yet handed out (one line can make several).
    queue: Vec<Happening>,
}

impl ClaudeSession {
    fn translate(&mut self, incoming: Incoming) -> Vec<Happening> {
        match incoming {
            Incoming::Garbage(line) => vec![Happening::Garbage(line)],
            Incoming::Cancel { id } => vec![Happening::Withdrawn { request: id }],
            Incoming::Request { id, request } => match Translator::request(&id, &request) {
                Some(happening) => vec![happening],
                None => {
                    // No other hooks or in-process MCP servers are registered: refuse plainly.
                    let _ = self.process.peer.respond_error(
                        &id,
                        "unsupported_request",
                        &format!(
                            "Unsupported control request subtype: {}",
                            request["subtype"].as_str().unwrap_or("?")
                        ),
                    );
                    vec![]
                }
            },
            Incoming::Message(m) => self.stream.message(&m),
        }
    }
}

impl ClaudeSession {
    /// A control request whose answer only matters for success or failure.
    fn control(&self, request: Value) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async move {
            self.process
                .peer
                .request(request)
                .await
                .map(|_| ())
                .map_err(provider_error)
        })
    }
}

/// The wire's failure as the provider contract says it.
fn provider_error(e: WireError) -> ProviderError {
    match e {
        WireError::Closed => ProviderError::Gone,
        refused @ WireError::Refused { .. } => ProviderError::Refused(refused.to_string()),
    }
}

impl Session for ClaudeSession {
    fn ids(&self) -> ProcessIds {
        self.ids
    }

    fn commands(&self) -> Vec<SlashCommand> {
        self.commands.clone()
    }

    fn next(&mut self) -> BoxFuture<'_, Option<Happening>> {
        Box::pin(async move {
            loop {
                if !self.queue.is_empty() {
                    return Some(self.queue.remove(0));
                }
                let incoming = self.process.incoming.recv().await?;
                let happenings = self.translate(incoming);
                self.queue.extend(happenings);
            }
        })
    }

    fn send(
        &self,
        content: Value,
        uuid: &str,
        priority: Option<Priority>,
    ) -> Result<(), ProviderError> {
        self.process
            .send_user(content, uuid, priority.map(Priority::as_str))
            .map_err(provider_error)
    }

    fn answer(&self, request: &str, response: Value) -> Result<(), ProviderError> {
        self.process
            .peer
            .respond(request, response)
            .map_err(provider_error)
    }

    fn interrupt(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        self.control(json!({ "subtype": "interrupt" }))
    }

    fn set_mode(&self, mode: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        self.control(json!({ "subtype": "set_permission_mode", "mode": mode }))
    }

    fn set_model(&self, model: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        self.control(json!({ "subtype": "set_model", "model": model }))
    }

    fn stop(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Exit> {
        Box::pin(async move {
            let stderr = self.process.stderr_tail();
            let status = self.process.stop(grace).await;
            exit_of(status, stderr)
        })
    }

    fn exit(self: Box<Self>) -> BoxFuture<'static, Exit> {
        Box::pin(async move {
            let mut process = self.process;
            let status = tokio::time::timeout(Duration::from_secs(5), process.wait())
                .await
                .ok()
                .and_then(Result::ok);
            tokio::time::sleep(Duration::from_millis(20)).await;
            let stderr = process.stderr_tail();
            // Anything the session left in its group goes with it.
            let _ = process.stop(Duration::from_millis(100)).await;
            exit_of(status, stderr)
        })
    }
}

fn exit_of(status: Option<std::process::ExitStatus>, stderr: String) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    Exit {
        status: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stderr,
    }
}
