//! The Claude provider: Claude Code sessions through the [`ClaudeProcess`] driver, with the
//! CLI's wire messages translated into the provider contract's [`Happening`]s.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::claude::{ClaudeOptions, ClaudeProcess, SLOT_HOOK};
use super::sandbox::Containment;
use super::wire::{Incoming, WireError};
use crate::kernel::contracts::provider::{
    BoxFuture, Capabilities, Exit, Happening, Launch, Priority, ProcessIds, Provider,
    ProviderError, Question, Session, SlashCommand, Unresumable,
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

/// The CLI's stream-json messages turned into [`Happening`]s, apart from the process so that the
/// fuzz targets (`fuzz/`) drive the same code a session runs. It remembers the API message being
/// streamed and the kind of each of its open content blocks.
#[derive(Debug, Default)]
pub struct Translator {
    /// The kind of each open content block of the current message (`text`, `thinking`, `tool_use`).
    blocks: HashMap<u64, String>,
    /// The API message id being streamed.
    message: String,
    /// A rate limit was already said in this turn.
    limit_said: bool,
}

impl Translator {
    /// A control request of the CLI as a happening: a permission question or a subagent waiting
    /// for a slot. `None` for any other request, which the session refuses.
    pub fn request(id: &str, request: &Value) -> Option<Happening> {
        match request["subtype"].as_str() {
            Some("can_use_tool") => Some(Happening::Asked(question(id.to_string(), request))),
            Some("hook_callback") if request["callback_id"] == SLOT_HOOK => {
                Some(Happening::SlotWanted {
                    request: id.to_string(),
                    call: request["input"]["tool_use_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                })
            }
            _ => None,
        }
    }

    /// What one message (any line that is not a control request or answer) says.
    pub fn message(&mut self, m: &Value) -> Vec<Happening> {
        match m["type"].as_str() {
            Some("stream_event") => self.stream(&m["event"]),
            Some("assistant") => m["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .filter(|(_, b)| b["type"] == "tool_use")
                .map(|(i, b)| Happening::ToolStarted {
                    call: b["id"].as_str().unwrap_or_default().to_string(),
                    name: b["name"].as_str().unwrap_or_default().to_string(),
                    summary: summary(b["name"].as_str().unwrap_or_default(), &b["input"]),
                    block: i as u64,
                    input: b["input"].clone(),
                    parent: m["parent_tool_use_id"].as_str().map(String::from),
                })
                .collect(),
            Some("user") => m["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| Happening::ToolEnded {
                    call: b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                    failed: b["is_error"] == true,
                    output: crate::kernel::transcripts::entry::result_text(&b["content"]),
                    interrupted: m["tool_use_result"]["interrupted"] == true,
                })
                .collect(),
            Some("command_lifecycle") if m["state"] == "started" => m["command_uuid"]
                .as_str()
                .map(|u| {
                    vec![Happening::Steered {
                        uuid: u.to_string(),
                    }]
                })
                .unwrap_or_default(),
            Some("rate_limit_event") => {
                self.limit_said = true;
                vec![Happening::Limit(m.clone())]
            }
            // The API failed and the CLI tries again (500, 529 overloaded, 429, a lost
            // connection); a 429 is also the turn's rate limit, said once.
            Some("system") if m["subtype"] == "api_retry" => {
                let status = m["error_status"].as_u64();
                let mut out = vec![Happening::Retry {
                    attempt: m["attempt"].as_u64().unwrap_or(0),
                    max_retries: m["max_retries"].as_u64().unwrap_or(0),
                    delay_ms: m["retry_delay_ms"].as_u64().unwrap_or(0),
                    status,
                    error: m["error"].as_str().unwrap_or_default().to_string(),
                }];
                if status == Some(429) {
                    out.extend(self.api_limit(m, true));
                }
                out
            }
            // A subagent (or a long Bash) became a task, and the task ended: what slots follow.
            // The mode the CLI is in: `system/status` after every change (Vyre's own, an
            // "always" carrying `setMode`, EnterPlanMode, an approved ExitPlanMode) and
            // `system/init` at each turn's start.
            Some("system")
                if (m["subtype"] == "status" || m["subtype"] == "init")
                    && m["permissionMode"].is_string() =>
            {
                vec![Happening::Mode {
                    mode: m["permissionMode"].as_str().unwrap_or_default().to_string(),
                }]
            }
            Some("system") if m["subtype"] == "task_started" => m["tool_use_id"]
                .as_str()
                .map(|c| vec![Happening::TaskStarted { call: c.into() }])
                .unwrap_or_default(),
            Some("system") if m["subtype"] == "task_notification" => m["tool_use_id"]
                .as_str()
                .map(|c| vec![Happening::TaskEnded { call: c.into() }])
                .unwrap_or_default(),
            Some("result") => {
                // A turn the API refused at a rate limit the CLI did not report on its own (an
                // API key's 429: only subscriptions get `rate_limit_event`).
                let mut out = if m["is_error"] == true && m["api_error_status"] == 429 {
                    self.api_limit(m, false)
                } else {
                    vec![]
                };
                self.limit_said = false;
                out.extend(self.finished(m));
                out
            }
            _ => vec![],
        }
    }

    /// `thread.limit` for an API 429, unless this turn already said one.
    fn api_limit(&mut self, m: &Value, retrying: bool) -> Vec<Happening> {
        if std::mem::replace(&mut self.limit_said, true) {
            return vec![];
        }
        vec![Happening::Limit(json!({
            "type": "api_error",
            "status": 429,
            "error": m["error"].as_str().or(m["api_error_type"].as_str()).unwrap_or("rate_limit"),
            "retrying": retrying,
        }))]
    }

    fn finished(&self, m: &Value) -> Vec<Happening> {
        match m["type"].as_str() {
            Some("result") => {
                let is_error = m["is_error"] == true;
                let terminal = m["terminal_reason"].as_str().unwrap_or("");
                let canceled = is_error && terminal.starts_with("aborted");
                let error = is_error.then(|| {
                    m["errors"]
                        .as_array()
                        .and_then(|e| e.first())
                        .and_then(Value::as_str)
                        .or_else(|| m["result"].as_str())
                        .unwrap_or(terminal)
                        .to_string()
                });
                vec![Happening::Finished {
                    ok: !is_error,
                    canceled,
                    error: if canceled { None } else { error },
                    cost_usd: 0.0,
                    total_cost_usd: m["total_cost_usd"].as_f64().unwrap_or(0.0),
                    tokens: m["usage"].clone(),
                }]
            }
            _ => vec![],
        }
    }

    fn stream(&mut self, e: &Value) -> Vec<Happening> {
        let index = e["index"].as_u64().unwrap_or(0);
        match e["type"].as_str() {
            Some("message_start") => {
                self.message = e["message"]["id"].as_str().unwrap_or_default().to_string();
                self.blocks.clear();
                vec![Happening::TurnBegan {
                    uuid: e["user_message_uuid"].as_str().map(String::from),
                }]
            }
            Some("content_block_start") => {
                let kind = e["content_block"]["type"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                self.blocks.insert(index, kind);
                vec![]
            }
            Some("content_block_delta") => {
                let (text, reasoning) = match e["delta"]["type"].as_str() {
                    Some("text_delta") => (e["delta"]["text"].as_str(), false),
                    Some("thinking_delta") => (e["delta"]["thinking"].as_str(), true),
                    _ => (None, false),
                };
                text.map(|t| {
                    vec![Happening::Text {
                        message: self.message.clone(),
                        block: index,
                        delta: Some(t.to_string()),
                        done: false,
                        reasoning,
                    }]
                })
                .unwrap_or_default()
            }
            Some("content_block_stop") => match self.blocks.remove(&index).as_deref() {
                Some(kind @ ("text" | "thinking")) => vec![Happening::Text {
                    message: self.message.clone(),
                    block: index,
                    delta: None,
                    done: true,
                    reasoning: kind == "thinking",
                }],
                _ => vec![],
            },
            _ => vec![],
        }
    }
}

/// A short, event-sized description of a tool call (never its whole input).
fn summary(tool: &str, input: &Value) -> String {
    let field = |k: &str| input[k].as_str().map(String::from);
    let text = match tool {
        "Bash" => field("description").or_else(|| field("command")),
        "Read" | "Write" | "Edit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path"))
        }
        "Glob" | "Grep" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description"),
        _ => None,
    }
    .unwrap_or_default();
    let mut short: String = text.chars().take(120).collect();
    if text.chars().count() > 120 {
        short.push('…');
    }
    short
}

fn question(id: String, r: &Value) -> Question {
    let tool = r["tool_name"].as_str().unwrap_or_default().to_string();
    let kind = match tool.as_str() {
        "AskUserQuestion" => "question",
        "ExitPlanMode" => "plan",
        _ => "tool",
    };
    Question {
        request: id,
        kind: kind.into(),
        tool_use_id: r["tool_use_id"].as_str().map(String::from),
        input: r["input"].clone(),
        description: r["description"].as_str().map(String::from),
        suggestions: r["permission_suggestions"].clone(),
        tool,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_the_cli_reports_is_said_and_a_status_without_one_is_not() {
        let mut t = Translator::default();
        let mode_of = |said: Vec<Happening>| match &said[..] {
            [Happening::Mode { mode }] => Some(mode.clone()),
            _ => None,
        };
        let status = json!({ "type": "system", "subtype": "status", "status": null, "permissionMode": "plan" });
        assert_eq!(mode_of(t.message(&status)).as_deref(), Some("plan"));
        let init = json!({ "type": "system", "subtype": "init", "permissionMode": "acceptEdits", "tools": [] });
        assert_eq!(mode_of(t.message(&init)).as_deref(), Some("acceptEdits"));
        let requesting = json!({ "type": "system", "subtype": "status", "status": "requesting" });
        assert!(t.message(&requesting).is_empty());
        // Only a status or an init says the mode: another line keeps its own meaning.
        let task = json!({ "type": "system", "subtype": "task_started", "tool_use_id": "t1", "permissionMode": "plan" });
        assert!(matches!(
            &t.message(&task)[..],
            [Happening::TaskStarted { .. }]
        ));
    }

    #[test]
    fn api_retries_are_said_and_a_429_is_one_limit_per_turn() {
        let mut t = Translator::default();
        let retry = |status: u64| json!({ "type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10, "retry_delay_ms": 600, "error_status": status, "error": "x" });
        let said = t.message(&retry(529));
        assert!(matches!(
            said[..],
            [Happening::Retry {
                status: Some(529),
                attempt: 1,
                ..
            }]
        ));
        let said = t.message(&retry(429));
        assert!(matches!(
            said[..],
            [Happening::Retry { .. }, Happening::Limit(_)]
        ));
        assert_eq!(t.message(&retry(429)).len(), 1, "the limit once a turn");
        let result = json!({ "type": "result", "is_error": true, "api_error_status": 429, "result": "API Error: 429", "total_cost_usd": 0 });
        let said = t.message(&result);
        assert!(matches!(said[..], [Happening::Finished { ok: false, .. }]));
        // The next turn refused at once (no retry) says its limit with its result.
        let said = t.message(&result);
        assert!(matches!(
            said[..],
            [Happening::Limit(_), Happening::Finished { .. }]
        ));
        // A subscription's own limit event is the turn's limit; the 429 result adds none.
        let event =
            json!({ "type": "rate_limit_event", "rate_limit_info": { "status": "rejected" } });
        assert_eq!(t.message(&event).len(), 1);
        assert!(matches!(
            t.message(&result)[..],
            [Happening::Finished { .. }]
        ));
    }

    #[test]
    fn summaries_are_short_and_pick_the_telling_field() {
        assert_eq!(
            summary(
                "Bash",
                &json!({"command": "ls", "description": "list files"})
            ),
            "list files"
        );
        assert_eq!(
            summary(
                "Write",
                &json!({"file_path": "/w/notes.txt", "content": "long"})
            ),
            "/w/notes.txt"
        );
        assert_eq!(summary("Mystery", &json!({"x": 1})), "");
        assert_eq!(
            summary("Bash", &json!({"command": "x".repeat(300)}))
                .chars()
                .count(),
            121
        );
    }
}
