//! The process of an agent that speaks JSON-RPC on its stdio (an ACP agent, Codex's
//! app-server): spawned in its own process group and session, contained as Claude Code
//! sessions are (the sessions' own user, or bubblewrap; such an agent cannot be put in Claude
//! Code's own sandbox, so where that is the only containment it does not start), with an
//! environment made from nothing but what it needs and what the person configured for it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use super::rpc::{Incoming, Rpc};
use crate::kernel::contracts::provider::{Exit, ProviderError};
use crate::modules::sessions::sandbox::{Contain, Containment, Exposed, SandboxInfo};
use crate::modules::sessions::spawn::{self, GroupChild, SpawnSpec};

/// How one agent is started (`sessions.acp.<name>`; Codex's app-server).
#[derive(Debug, Clone)]
pub struct Command {
    /// What the person calls it, in errors: "the ACP agent", "Codex".
    pub label: &'static str,
    /// The setting that names its program, in errors: "sessions.acp", "sessions.codex".
    pub setting: &'static str,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The person's variables for it, after the sessions' own.
    pub env: Vec<(String, String)>,
}

/// `program` as a file that is there: a path as it is, a bare name looked up on vyred's PATH
/// (the PATH the agent gets).
fn find(program: &std::path::Path) -> Option<PathBuf> {
    let is_file = |p: &std::path::Path| p.is_file().then(|| p.to_path_buf());
    if program.components().count() > 1 || program.is_absolute() {
        return is_file(program);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path).find_map(|dir| is_file(&dir.join(program)))
}

/// A running agent.
pub struct AgentProcess {
    pub rpc: Rpc,
    pub incoming: mpsc::UnboundedReceiver<Incoming>,
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub sandbox: Option<SandboxInfo>,
    child: GroupChild,
    stderr: spawn::StderrTail,
    label: &'static str,
}

impl AgentProcess {
    /// Spawn `command` in `cwd` with HOME `home`; `extra` are Vyre's own variables for the
    /// session (its thread's tag).
    pub async fn spawn(
        command: &Command,
        cwd: PathBuf,
        home: PathBuf,
        extra: Vec<(String, OsString)>,
        contain: &Contain,
    ) -> Result<AgentProcess, ProviderError> {
        let (run_as, sandbox) = match contain.get().await.map_err(ProviderError::Start)? {
            Containment::User(r) => (Some(*r), None),
            Containment::Sandbox(s) => (None, Some(s.clone())),
            Containment::Claude { .. } => {
                return Err(ProviderError::Start(format!(
                    "{} cannot run in Claude Code's own sandbox, the only containment here: \
                     install bubblewrap, or set sessions.containment to \"none\"",
                    command.label
                )));
            }
            Containment::None => (None, None),
        };
        // Found first: under tini (or bwrap) a missing program is only an exit status 127.
        let program = find(&command.program).ok_or_else(|| {
            ProviderError::Start(format!(
                "{}'s program was not found at {}: check {}",
                command.label,
                command.program.display(),
                command.setting
            ))
        })?;
        let mut env = crate::modules::sessions::claude::base_environment(&home);
        env.extend(extra);
        env.extend(command.env.iter().map(|(k, v)| (k.clone(), v.into())));
        let expose: Vec<Exposed> = [cwd.clone(), home]
            .into_iter()
            .map(|path| Exposed {
                path,
                writable: true,
            })
            .chain(contain.expose_ro.iter().map(|path| Exposed {
                path: path.clone(),
                writable: false,
            }))
            .collect();
        let spawned = spawn::spawn(SpawnSpec {
            program,
            args: command.args.clone(),
            cwd,
            env,
            fd3: None,
            subreaper: spawn::find_tini(),
            run_as,
            sandbox: sandbox.map(|s| spawn::SandboxLaunch {
                bwrap: s.bwrap.clone(),
                args: s.args(&expose),
            }),
        })
        .map_err(|e| ProviderError::Start(e.to_string()))?;
        let stderr = spawn::StderrTail::follow(spawned.stderr, spawned.pid, command.label);
        let (rpc, incoming) = Rpc::start(spawned.stdout, spawned.stdin);
        Ok(AgentProcess {
            rpc,
            incoming,
            pid: spawned.pid,
            pgid: spawned.pgid,
            sid: spawned.sid,
            sandbox: spawned.sandbox,
            child: GroupChild::new(spawned.child, spawned.pgid),
            stderr,
            label: command.label,
        })
    }

    /// The last lines the agent wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Why a start failed: the agent's words when its process ended.
    pub async fn failed(mut self, what: &str, why: impl std::fmt::Display) -> ProviderError {
        let ended = tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let tail = self.stderr_tail();
        let status = match ended {
            Ok(Ok(s)) => format!(" ({s})"),
            _ => String::new(),
        };
        let label = self.label;
        self.stop(Duration::from_millis(100)).await;
        ProviderError::Start(format!(
            "{label}'s {what} failed: {why}{status} {}",
            tail.trim()
        ))
    }

    /// Wait for the process to end on its own.
    pub async fn wait(&mut self) -> Option<std::process::ExitStatus> {
        self.child.wait().await.ok()
    }

    /// Close its stdin, give it `grace`, then end its whole group (and its sandbox).
    pub async fn stop(mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        drop(self.rpc);
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => {
                spawn::kill_group(&mut self.child, self.pgid, Duration::from_millis(100)).await;
                Some(status)
            }
            _ => {
                spawn::kill_group(&mut self.child, self.pgid, Duration::from_secs(2)).await;
                self.child.try_wait().ok().flatten()
            }
        };
        if let Some(info) = &self.sandbox {
            spawn::kill_sandbox(info);
        }
        status
    }
}

impl AgentProcess {
    /// Record its processes as thread `launch.id`'s (its group, session and sandbox), as soon
    /// as they exist: the peer check names them from then on.
    pub fn register(&self, launch: &crate::kernel::contracts::provider::Launch) {
        if let Some(processes) = &launch.processes {
            processes.register(&launch.id, self.pgid, self.sid);
            if let Some(sandbox) = &self.sandbox {
                processes.register_namespace(&launch.id, sandbox.pid_namespace);
            }
        }
    }

    /// Stop it as [`Self::stop`] does: how it ended, with its last words on stderr.
    pub async fn stopped(self, grace: Duration) -> Exit {
        let tail = self.stderr_tail();
        let status = self.stop(grace).await;
        exit(status, tail)
    }

    /// Wait for it to end on its own, then end what is left of its group: how it ended.
    pub async fn ended(mut self) -> Exit {
        let status = self.wait().await;
        let tail = self.stderr_tail();
        self.stop(Duration::from_millis(100)).await;
        exit(status, tail)
    }
}

/// How the process ended, as the provider contract says it.
fn exit(status: Option<std::process::ExitStatus>, stderr: String) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    Exit {
        status: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stderr,
    }
}
