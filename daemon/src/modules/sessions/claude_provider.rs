//! The Claude provider: Claude Code sessions through the [`ClaudeProcess`] driver, with the
//! CLI's wire messages translated into the provider contract's [`Happening`]s.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::claude::{ClaudeOptions, ClaudeProcess, READY_HOOK};
use super::claude_mcp;
pub use super::claude_translate::Translator;
use super::claude_warm::{self, Readied};
use super::mcp_forms::{self, Field, Request};
use super::sandbox::Containment;
use super::wire::{Incoming, WireError};
use crate::kernel::contracts::provider::{
    BoxFuture, Capabilities, Exit, Happening, HostTools, Launch, Priority, ProcessIds, Provider,
    ProviderError, Question, Readiness, Session, SlashCommand, Unresumable,
};
use crate::kernel::transcripts;

pub struct ClaudeProvider {
    pub cli: std::sync::Arc<super::npm_cli::NpmCli>,
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
    /// Claude Code's `effortLevel`s (2.1.328's `initialize` lists them for every model).
    fn efforts(&self) -> &'static [&'static str] {
        &["low", "medium", "high", "xhigh", "max"]
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
                effort: launch.effort,
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
                host_tools: launch.host_tools.clone(),
            };
            // A new session may take its first turn ahead (a spare's `prepare`).
            let fresh = (!options.resume && options.fork_from.is_none()).then(|| Readied {
                home: self.home.clone(),
                id: options.session_id.clone(),
            });
            // A resumed or forked CLI counts its cost on from the transcript's; read while it
            // starts (a long transcript is not read on the person's time).
            let before = fresh.is_none().then(|| {
                let (home, id) = (self.home.clone(), options.fork_from.clone());
                let id = id.unwrap_or_else(|| options.session_id.clone());
                tokio::task::spawn_blocking(move || {
                    crate::kernel::transcripts::find(&home, &id)
                        .and_then(|path| crate::kernel::transcripts::cost_so_far(&path))
                })
            });
            let (process, init) = ClaudeProcess::start(&options)
                .await
                .map_err(|e| ProviderError::Start(e.to_string()))?;
            let cost_before = match before {
                Some(task) => task.await.ok().flatten().unwrap_or(0.0),
                None => 0.0,
            };
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
                stream: Translator::costing_from(cost_before),
                queue: Vec::new(),
                host: launch.host_tools,
                serving: Serving::default(),
                forms: Default::default(),
                fresh,
                readied: false,
                sent: AtomicBool::new(false),
            }) as Box<dyn Session>)
        })
    }
    fn stamp<'a>(&'a self, cwd: &'a std::path::Path) -> BoxFuture<'a, String> {
        Box::pin(async move {
            let program = self.cli.program().await.unwrap_or_default();
            let home = &self.home;
            // What Claude Code reads as it starts (an upgrade replaces the program; a settings
            // file changes permissions, hooks or MCP servers; CLAUDE.md the system prompt).
            let read_at_start = [
                program.clone(),
                cwd.join(".claude/settings.json"),
                cwd.join(".claude/settings.local.json"),
                cwd.join(".mcp.json"),
                cwd.join("CLAUDE.md"),
                cwd.join("CLAUDE.local.md"),
                home.join(".claude/settings.json"),
                home.join(".claude/CLAUDE.md"),
            ];
            let mut stamp = format!(
                "{}\n{:?}\n{}\n",
                program.display(),
                self.base_url,
                home.display()
            );
            for path in read_at_start {
                stamp.push_str(&super::spare_checks::file(&path));
                stamp.push('\n');
            }
            stamp
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

/// How long a spare's CLI may take to answer what `prepare` asks.
const PREPARE_PATIENCE: Duration = Duration::from_secs(10);

struct ClaudeSession {
    process: ClaudeProcess,
    ids: ProcessIds,
    commands: Vec<SlashCommand>,
    /// What the CLI's messages mean, with what it remembers of the message being streamed.
    stream: Translator,
    /// Happenings translated but not yet handed out (one line can make several).
    queue: Vec<Happening>,
    /// Vyre's tools, which this session's CLI calls through `mcp_message` requests.
    host: Option<HostTools>,
    serving: Serving,
    /// The MCP servers' forms put to the person, by the CLI's request id: how each answer
    /// becomes the form's content (`mcp_forms`).
    forms: std::sync::Mutex<std::collections::HashMap<String, Vec<Field>>>,
    /// Where a new session's transcript is (`None`: resumed or forked, never readied).
    fresh: Option<Readied>,
    /// Whether its first turn was taken ahead (`claude_warm`), and whether a message was sent
    /// since: a readied session let go unused leaves no transcript.
    readied: bool,
    sent: AtomicBool,
}

/// The MCP messages being answered, by request id: each runs in a task of its own (a tool may
/// take long; the session's other messages go on), cancelled when the CLI withdraws it or the
/// session ends.
#[derive(Default)]
struct Serving(std::collections::HashMap<String, tokio::task::AbortHandle>);

impl Drop for Serving {
    fn drop(&mut self) {
        for task in self.0.values() {
            task.abort();
        }
    }
}

impl ClaudeSession {
    fn translate(&mut self, incoming: Incoming) -> Vec<Happening> {
        match incoming {
            Incoming::Garbage(line) => vec![Happening::Garbage(line)],
            Incoming::Cancel { id } => match self.serving.0.remove(&id) {
                Some(task) => {
                    task.abort();
                    vec![]
                }
                None => {
                    self.forms().remove(&id);
                    vec![Happening::Withdrawn { request: id }]
                }
            },
            Incoming::Request { id, request } if request["subtype"] == "elicitation" => {
                vec![self.form(id, &request)]
            }
            Incoming::Request { id, request }
                if self
                    .host
                    .as_ref()
                    .is_some_and(|h| claude_mcp::is_ours(&request, h)) =>
            {
                self.serve(id, request);
                vec![]
            }
            Incoming::Request { id, request }
                if request["subtype"] == "hook_callback"
                    && request["callback_id"] == READY_HOOK =>
            {
                // A new session's prompt hook, there only to hold back the readying prompt.
                let _ = self.process.peer.respond(&id, json!({}));
                vec![]
            }
            Incoming::Request { id, request } if claude_mcp::harness_event(&request).is_some() => {
                self.hooked(id, request);
                vec![]
            }
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
    fn forms(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Vec<Field>>> {
        self.forms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// An MCP server's form (the CLI's `elicitation` request: MCP's `elicitation/create` from
    /// a server the person configured), put to the person as a question ask; the answer goes
    /// back as the form's content (`answer`).
    fn form(&mut self, id: String, request: &Value) -> Happening {
        let form = mcp_forms::form(&Request {
            server: request["mcp_server_name"]
                .as_str()
                .unwrap_or("an MCP server"),
            message: request["message"].as_str().unwrap_or_default(),
            link: request["mode"] == "url",
            url: request["url"].as_str(),
            schema: &request["requested_schema"],
            order: request.get("property_order"),
        });
        self.forms().insert(id.clone(), form.fields);
        Happening::Asked(Question {
            request: id,
            kind: "question".into(),
            tool: form.tool,
            tool_use_id: None,
            input: form.input,
            description: Some(form.note),
            suggestions: json!([]),
        })
    }

    /// Answer an MCP message for Vyre's tools, in a task of its own.
    fn serve(&mut self, id: String, request: Value) {
        let Some(host) = self.host.clone() else {
            return;
        };
        let (peer, pid) = (self.process.peer.clone(), self.ids.pid);
        self.serving.0.retain(|_, task| !task.is_finished());
        let key = id.clone();
        let task = tokio::spawn(async move {
            let reply = claude_mcp::reply(&host, &request["message"], Some(pid)).await;
            let _ = peer.respond(&id, json!({ "mcp_response": reply }));
        });
        self.serving.0.insert(key, task.abort_handle());
    }

    /// Answer a harness hook's callback with the harness's answer, in a task of its own
    /// (nothing to add when there is no hook or no answer).
    fn hooked(&mut self, id: String, request: Value) {
        let Some(event) = claude_mcp::harness_event(&request) else {
            return;
        };
        let hooks = self.host.as_ref().and_then(|h| h.hooks.clone());
        let (peer, pid) = (self.process.peer.clone(), self.ids.pid);
        self.serving.0.retain(|_, task| !task.is_finished());
        let key = id.clone();
        let task = tokio::spawn(async move {
            let answer = match hooks {
                Some(hooks) => hooks(event, request["input"].clone(), Some(pid)).await,
                None => None,
            };
            let _ = peer.respond(&id, answer.unwrap_or_else(|| json!({})));
        });
        self.serving.0.insert(key, task.abort_handle());
    }

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
        self.sent.store(true, Ordering::Relaxed);
        self.process
            .send_user(content, uuid, priority.map(Priority::as_str))
            .map_err(provider_error)
    }

    /// A form's answer becomes its content (one that does not fit leaves the form open);
    /// anything else goes as it is.
    fn answer(&self, request: &str, response: Value) -> Result<(), ProviderError> {
        let mut forms = self.forms();
        let response = match forms.get(request) {
            Some(fields) => {
                let content =
                    mcp_forms::content(fields, &response).map_err(ProviderError::BadAnswer)?;
                forms.remove(request);
                content
            }
            None => response,
        };
        drop(forms);
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

    /// Into the flag settings' layer, where the launch put it; `null` takes it out, back to
    /// the CLI's default (measured on 2.1.328: `get_settings`' `applied.effort` follows).
    fn set_effort(&self, effort: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        self.control(
            json!({ "subtype": "apply_flag_settings", "settings": { "effortLevel": effort } }),
        )
    }

    /// The context's summary (what `/context` shows) makes the CLI build what its first turn
    /// sends: the system prompt, the tools and the memory files. Measured on 2.1.328 (the
    /// first-words bench, warm spares with and without it): the first turn's first delta comes
    /// ~20 ms sooner (p50 105 ms against 125); `summary` asks no `count_tokens` of the API
    /// (`full` would, once per tool) and writes nothing to the transcript. Then a new session
    /// whose prompts only vyred's callback sees takes its first turn ahead, held back before
    /// the model (`claude_warm`): ~50 ms more.
    fn prepare(&mut self) -> BoxFuture<'_, Result<Readiness, ProviderError>> {
        Box::pin(async move {
            // A CLI that does not answer is no spare to hand out.
            let ask = |request: Value| {
                tokio::time::timeout(PREPARE_PATIENCE, self.process.peer.request(request))
            };
            let summary = json!({ "subtype": "get_context_usage", "detail": "summary" });
            match ask(summary).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::debug!("a spare's context summary failed: {e}"),
                Err(_) => return Err(ProviderError::Start("it did not answer".into())),
            }
            // A new session has vyred's prompt hook: the harness's, or `READY_HOOK`.
            if self.fresh.is_none() {
                return Ok(Readiness::Loaded("it resumes a conversation".into()));
            }
            let listing = match ask(json!({ "subtype": "get_hooks_listing" })).await {
                Ok(answer) => answer.unwrap_or_default(),
                Err(_) => return Err(ProviderError::Start("it did not answer".into())),
            };
            if let Some(why) = claude_warm::refused(&listing) {
                tracing::debug!("a spare's first turn is not taken ahead: {why}");
                return Ok(Readiness::Loaded(why));
            }
            claude_warm::hold_back(&mut self.process, self.host.as_ref())
                .await
                .map_err(ProviderError::Start)?;
            self.readied = true;
            Ok(Readiness::Readied)
        })
    }

    fn stop(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Exit> {
        Box::pin(async move {
            let stderr = self.process.stderr_tail();
            let status = self.process.stop(grace).await;
            if let Some(r) = self.fresh.as_ref().filter(|_| self.readied)
                && !self.sent.load(Ordering::Relaxed)
            {
                claude_warm::forget(&r.home, &r.id);
            }
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
