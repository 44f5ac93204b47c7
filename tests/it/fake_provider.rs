//! A provider that is not Claude, for the router's and the Switchboard's tests: it runs a real
//! process (so groups and stops are real), answers text prompts itself, and for `RUNBASH <cmd>`
//! asks permission and, once allowed, runs the command with `sh`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use vyre::kernel::contracts::provider::{
    BoxFuture, Capabilities, Exit, Happening, Launch, Priority, ProcessIds, Provider,
    ProviderError, Question, Session,
};
use vyre::kernel::module::{Ctx, Module, StartFuture};
use vyre::modules::sessions::spawn::{self, SpawnSpec, Spawned};

pub struct FakeProvider {
    pub name: String,
}

impl Provider for FakeProvider {
    fn id(&self) -> &str {
        &self.name
    }
    fn driver(&self) -> &str {
        "fake"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streaming: true,
            resume: true,
            interrupt: true,
            ..Default::default()
        }
    }
    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Session>, ProviderError>> {
        Box::pin(async move {
            let spawned = spawn::spawn(SpawnSpec {
                program: "/bin/sh".into(),
                args: vec!["-c".into(), "sleep 3600 & wait".into()],
                cwd: launch.cwd.clone(),
                env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
                fd3: None,
                subreaper: None,
                run_as: None,
                sandbox: None,
            })
            .map_err(|e| ProviderError::Start(e.to_string()))?;
            let (tx, rx) = mpsc::unbounded_channel();
            Ok(Box::new(FakeSession {
                ids: ProcessIds {
                    pid: spawned.pid,
                    pgid: spawned.pgid,
                    sid: spawned.sid,
                    pid_namespace: None,
                },
                process: Mutex::new(Some(spawned)),
                cwd: launch.cwd,
                tx,
                rx,
                pending: Mutex::new(None),
                n: Mutex::new(0),
            }) as Box<dyn Session>)
        })
    }
}

struct FakeSession {
    ids: ProcessIds,
    process: Mutex<Option<Spawned>>,
    cwd: PathBuf,
    tx: mpsc::UnboundedSender<Happening>,
    rx: mpsc::UnboundedReceiver<Happening>,
    /// The question asked and its command.
    pending: Mutex<Option<(String, String)>>,
    n: Mutex<u64>,
}

impl FakeSession {
    fn say(&self, text: &str) {
        let message = format!("fake_msg_{}", {
            let mut n = self.n.lock().unwrap();
            *n += 1;
            *n
        });
        let _ = self.tx.send(Happening::Text {
            message: message.clone(),
            block: 0,
            delta: Some(text.into()),
            done: false,
            reasoning: false,
        });
        let _ = self.tx.send(Happening::Text {
            message,
            block: 0,
            delta: None,
            done: true,
            reasoning: false,
        });
    }
    fn finish(&self, ok: bool, canceled: bool) {
        let _ = self.tx.send(Happening::Finished {
            ok,
            canceled,
            error: None,
            total_cost_usd: Some(0.0),
            tokens: json!({}),
        });
    }
}

impl Session for FakeSession {
    fn ids(&self) -> ProcessIds {
        self.ids
    }
    fn next(&mut self) -> BoxFuture<'_, Option<Happening>> {
        Box::pin(async move { self.rx.recv().await })
    }
    fn send(
        &self,
        content: Value,
        _uuid: &str,
        _priority: Option<Priority>,
    ) -> Result<(), ProviderError> {
        let text: String = content
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect();
        if let Some(command) = text.split("RUNBASH ").nth(1) {
            let request = format!("fake-req-{}", *self.n.lock().unwrap());
            *self.pending.lock().unwrap() = Some((request.clone(), command.to_string()));
            let _ = self.tx.send(Happening::Asked(Question {
                request,
                kind: "tool".into(),
                tool: "Bash".into(),
                tool_use_id: Some("fake_call".into()),
                input: json!({ "command": command }),
                description: Some("run it".into()),
                suggestions: json!([]),
            }));
        } else {
            self.say(&format!("fake reply to [{text}]"));
            self.finish(true, false);
        }
        Ok(())
    }
    fn answer(&self, request: &str, response: Value) -> Result<(), ProviderError> {
        let Some((asked, command)) = self.pending.lock().unwrap().take() else {
            return Err(ProviderError::Refused("no open question".into()));
        };
        if asked != request {
            return Err(ProviderError::Refused("not the open question".into()));
        }
        let _ = self.tx.send(Happening::ToolStarted {
            call: "fake_call".into(),
            name: "Bash".into(),
            summary: "run it".into(),
            block: 0,
            input: serde_json::json!({ "command": command }),
            parent: None,
        });
        let allowed = response["behavior"] == "allow";
        if allowed {
            let _ = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(&command)
                .current_dir(&self.cwd)
                .status();
        }
        let _ = self.tx.send(Happening::ToolEnded {
            call: "fake_call".into(),
            failed: !allowed,
            output: String::new(),
            interrupted: false,
        });
        self.say(if allowed { "done" } else { "not done" });
        self.finish(true, false);
        Ok(())
    }
    fn interrupt(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async move {
            if let Some((request, _)) = self.pending.lock().unwrap().take() {
                let _ = self.tx.send(Happening::Withdrawn { request });
                self.finish(false, true);
            }
            Ok(())
        })
    }
    fn set_mode(&self, _mode: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }
    fn set_model(&self, _model: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }
    fn stop(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Exit> {
        let process = self.process.lock().unwrap().take();
        Box::pin(async move {
            if let Some(mut p) = process {
                spawn::kill_group(&mut p.child, p.pgid, grace).await;
            }
            Exit {
                status: None,
                signal: Some(9),
                stderr: String::new(),
            }
        })
    }
    fn exit(self: Box<Self>) -> BoxFuture<'static, Exit> {
        self.stop(Duration::from_millis(100))
    }
}

/// A module that declares and registers a provider (or, to test refusals, does not declare it).
pub struct FakeProviderModule {
    pub module: String,
    pub provider: String,
    pub declare: bool,
}

impl Module for FakeProviderModule {
    fn name(&self) -> &str {
        &self.module
    }
    fn manifest(&self) -> &str {
        let providers = if self.declare {
            vec![self.provider.clone()]
        } else {
            vec![]
        };
        let text = json!({
            "name": self.module, "version": "0.1.0", "roles": ["box", "local"], "requires": ["sessions"],
            "does": { "tools": [], "providers": providers }
        })
        .to_string();
        Box::leak(text.into_boxed_str())
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        let provider = Arc::new(FakeProvider {
            name: self.provider.clone(),
        });
        Box::pin(async move {
            ctx.provider(provider)?;
            Ok(())
        })
    }
}
