//! The Claude driver: one Claude Code CLI process per live session, spoken to in the Agent SDK's
//! own wire protocol (stream-json plus the stdio control protocol; see
//! `../shared/briefs/claude-protocol.md`, measured on CLI 2.1.328).
//!
//! The argv is the SDK's, plus flag settings that pin what Vyre decides above a repository's own
//! settings ([`super::pinned`]); the environment is built from nothing (HOME, PATH, the locale,
//! the base URL, `VYRE_*`); a credential goes on fd 3, never into the environment, where every
//! tool and hook process would inherit it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::sandbox::{Exposed, Sandbox, SandboxInfo};
use super::spawn::{self, SandboxLaunch, SpawnError, SpawnSpec};
use super::wire::{Incoming, Peer, WireError};
use crate::kernel::contracts::provider::Credential;

/// The CLI version Vyre is built and tested against.
pub const PINNED_VERSION: &str = "2.1.328";

/// The tools that start a subagent, and the callback hook that makes them wait for a slot.
pub const SLOT_TOOLS: &str = "Agent|Task";
pub const SLOT_HOOK: &str = "vyre-slot";
/// How long a subagent may wait in line for a slot (the hook's timeout, in seconds).
pub const SLOT_WAIT_S: u64 = 3600;
/// The tools checked before they run: every one. The Gate looks at what can send, spend or
/// delete beyond the folder (Bash, MCP tools); the lessons at commands and the files changed.
pub const GATE_TOOLS: &str = "*";
/// The driver's PreToolUse callback for the Gate's and the lessons' check.
pub const GATE_HOOK: &str = "vyre-gate";
/// The driver's Stop callback: the lessons' check of the answer before the turn ends.
pub const STOP_HOOK: &str = "vyre-stop";
/// The driver's UserPromptSubmit callback of a new session without the harness's hooks: it
/// holds back a warm spare's readying prompt (`claude_warm`) and answers every other prompt
/// with nothing to add. (With the harness's hooks, their UserPromptSubmit does this.)
pub const READY_HOOK: &str = "vyre-ready";
/// The harness's hooks vyred answers itself (`HOOKS_BY_HOST`): the callback's id is this and
/// the event's name (`vyre-harness-PreToolUse`).
pub const HARNESS_HOOK: &str = "vyre-harness-";
/// How long the CLI waits for one, as for the plugin's command (vyred gives up sooner: 3 s for
/// what only adds to a session, 5 s for PreToolUse, which then denies).
pub const HARNESS_HOOK_S: u64 = 10;
/// How long the CLI waits for the Gate's check (it answers at once; the hold itself is the
/// permission question, which has no deadline).
pub const GATE_CHECK_S: u64 = 60;

/// How to start one session's process.
#[derive(Debug, Clone)]
pub struct ClaudeOptions {
    pub program: PathBuf,
    pub cwd: PathBuf,
    /// The Claude session id: new (`--session-id`) or resumed (`--resume`).
    pub session_id: String,
    pub resume: bool,
    /// Start as a fork of this session (`--resume=<it> --fork-session --session-id=<session_id>`).
    pub fork_from: Option<String>,
    /// Resume with the history cut after this message (`--resume-session-at`).
    pub resume_at: Option<String>,
    pub model: Option<String>,
    /// `default`, `acceptEdits` or `plan`.
    pub permission_mode: String,
    /// How hard the model thinks (`effortLevel` in the flag settings); `None`: its default.
    pub effort: Option<String>,
    /// Text appended to Claude Code's system prompt (sent in `initialize`).
    pub append_system_prompt: Option<String>,
    /// `initialize.systemPromptSnapshot`: the CLI records the first rendered system prompt in
    /// the transcript and reuses it verbatim on resume, even when a later launch passes another
    /// append; `Some(false)` renders it fresh every request (measured on 2.1.328).
    pub system_prompt_snapshot: Option<bool>,
    pub plugin_dirs: Vec<PathBuf>,
    pub max_budget_usd: Option<f64>,
    /// `ANTHROPIC_BASE_URL` for gateways and tests.
    pub base_url: Option<String>,
    pub credential: Credential,
    /// The child's HOME (where `~/.claude` and transcripts live).
    pub home: PathBuf,
    /// The user the child runs as, when not vyred's (`sessions.uid`, `sessions.gid`).
    pub run_as: Option<spawn::RunAs>,
    /// The sandbox the child runs in (ADR 0014), and what it sees again inside hidden folders
    /// besides its folder, its HOME and its own socket.
    pub sandbox: Option<Sandbox>,
    pub expose_ro: Vec<PathBuf>,
    /// Claude Code's own sandbox for the session's commands, hiding these folders (macOS, where
    /// there is no bubblewrap; ADR 0014), set as managed settings, which no repository's
    /// settings can loosen.
    pub claude_sandbox: Option<Vec<PathBuf>>,
    /// Where the process is recorded, as thread `session_id`, as soon as it exists.
    pub processes: Option<crate::kernel::peer::SessionProcesses>,
    /// More variables to set (the `VYRE_*` ones).
    pub extra_env: Vec<(String, OsString)>,
    /// Vyre's tools, served in-process (`claude_mcp`).
    pub host_tools: Option<crate::kernel::contracts::provider::HostTools>,
}

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("Claude Code exited during start-up: {0}")]
    StartFailed(String),
}

/// The argv the Agent SDK builds for these options (its §2.1 mapping).
pub fn argv(o: &ClaudeOptions) -> Vec<String> {
    let mut args: Vec<String> = [
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(budget) = o.max_budget_usd {
        args.push(format!("--max-budget-usd={budget}"));
    }
    if let Some(model) = &o.model {
        args.push(format!("--model={model}"));
    }
    args.push("--permission-prompt-tool=stdio".into());
    if let Some(from) = &o.fork_from {
        args.push(format!("--resume={from}"));
    } else if o.resume {
        args.push(format!("--resume={}", o.session_id));
    }
    args.push("--setting-sources=user,project,local".into());
    // What Vyre decides for the session, above anything a repository's settings say. One
    // `--settings` only: with two, the CLI keeps the last (measured on 2.1.328), so anything
    // else Vyre passes as flag settings goes into `flag_settings`.
    args.push("--settings".into());
    args.push(flag_settings(o).to_string());
    args.push(format!("--permission-mode={}", o.permission_mode));
    args.push("--include-partial-messages".into());
    for dir in &o.plugin_dirs {
        args.push(format!("--plugin-dir={}", dir.display()));
    }
    if o.fork_from.is_some() {
        args.push("--fork-session".into());
    }
    if let Some(at) = &o.resume_at {
        args.push(format!("--resume-session-at={at}"));
    }
    if !o.resume || o.fork_from.is_some() {
        args.push(format!("--session-id={}", o.session_id));
    }
    if let Some(hidden) = &o.claude_sandbox {
        let socket = o
            .extra_env
            .iter()
            .find(|(k, _)| k == "VYRE_SOCKET")
            .map(|(_, v)| PathBuf::from(v));
        args.push("--managed-settings".into());
        args.push(super::sandbox::claude_settings(hidden, socket.as_deref()).to_string());
    }
    args
}

/// The flag settings that pin what Vyre decides for the session (see [`super::pinned`]).
pub fn flag_settings(o: &ClaudeOptions) -> Value {
    let mut settings = super::pinned::flag_settings(
        &environment(o),
        !matches!(o.credential, Credential::Login),
        |name| std::env::var(name).ok().filter(|v| !v.is_empty()),
    );
    if let Some(tools) = &o.host_tools {
        super::claude_mcp::deny_the_plugins_own(&mut settings, tools);
    }
    if let Some(effort) = &o.effort {
        settings["effortLevel"] = Value::String(effort.clone());
    }
    settings
}

/// What every process Vyre runs for sessions starts from: HOME (the sessions'), PATH and the
/// locale, nothing else of vyred's.
pub fn base_environment(home: &std::path::Path) -> Vec<(String, OsString)> {
    let mut env: Vec<(String, OsString)> = vec![
        ("HOME".into(), home.as_os_str().to_owned()),
        (
            "PATH".into(),
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
        ),
    ];
    for name in ["LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL"] {
        if let Some(v) = std::env::var_os(name) {
            env.push((name.into(), v));
        }
    }
    env
}

/// The child's whole environment.
pub fn environment(o: &ClaudeOptions) -> Vec<(String, OsString)> {
    let mut env = base_environment(&o.home);
    env.extend([
        ("CLAUDE_CODE_ENTRYPOINT".into(), "sdk-ts".into()),
        (
            "CLAUDE_AGENT_SDK_CLIENT_APP".into(),
            format!("vyre/{}", crate::kernel::VERSION).into(),
        ),
        ("CLAUDE_CODE_SDK_READS_SESSION_STATE".into(), "1".into()),
        // A headless session needs none of the CLI's side traffic (telemetry, update checks, an
        // extra small-model request each turn): measured, it halves the requests per turn and
        // trims the CLI's memory.
        (
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
            "1".into(),
        ),
    ]);
    if let Some(url) = &o.base_url {
        env.push(("ANTHROPIC_BASE_URL".into(), url.into()));
    }
    match &o.credential {
        Credential::Login => {}
        Credential::ApiKey(_) => {
            env.push(("CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR".into(), "3".into()))
        }
        Credential::SetupToken(_) => {
            env.push(("CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR".into(), "3".into()))
        }
    }
    env.extend(o.extra_env.iter().cloned());
    env
}

/// What a sandboxed session sees again inside the folders its sandbox hides.
fn exposed(o: &ClaudeOptions) -> Vec<Exposed> {
    let rw = |path: PathBuf| Exposed {
        path,
        writable: true,
    };
    let mut e = vec![rw(o.cwd.clone()), rw(o.home.clone())];
    e.extend(
        o.extra_env
            .iter()
            .filter(|(k, _)| k == "VYRE_SOCKET")
            .map(|(_, v)| rw(PathBuf::from(v))),
    );
    e.extend(
        o.expose_ro
            .iter()
            .chain(&o.plugin_dirs)
            .map(|path| Exposed {
                path: path.clone(),
                writable: false,
            }),
    );
    e
}

/// A running Claude Code process.
pub struct ClaudeProcess {
    pub peer: Peer,
    pub incoming: mpsc::UnboundedReceiver<Incoming>,
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// The sandbox it runs in.
    pub sandbox: Option<SandboxInfo>,
    child: spawn::GroupChild,
    stderr: spawn::StderrTail,
}

impl ClaudeProcess {
    /// Spawn the CLI and send `initialize`. Answers `(process, initialize response)`.
    pub async fn start(o: &ClaudeOptions) -> Result<(ClaudeProcess, Value), DriverError> {
        let fd3 = match &o.credential {
            Credential::Login => None,
            Credential::ApiKey(s) | Credential::SetupToken(s) => Some(s.clone()),
        };
        let spawned = spawn::spawn(SpawnSpec {
            program: o.program.clone(),
            args: argv(o),
            cwd: o.cwd.clone(),
            env: environment(o),
            fd3,
            subreaper: spawn::find_tini(),
            run_as: o.run_as,
            sandbox: o.sandbox.as_ref().map(|s| SandboxLaunch {
                bwrap: s.bwrap.clone(),
                args: s.args(&exposed(o)),
            }),
        })
        .map_err(|e| match e {
            SpawnError::Start { source, .. } if o.run_as.is_some() && source.kind() == std::io::ErrorKind::PermissionDenied => DriverError::StartFailed(format!(
                "cannot run the session as uid {} gid {}: vyred may not switch users ({source}); it needs CAP_SETUID, CAP_SETGID and CAP_KILL (the box image gives them to vyred), or unset sessions.uid and sessions.gid",
                o.run_as.map(|r| r.uid).unwrap_or_default(),
                o.run_as.map(|r| r.gid).unwrap_or_default(),
            )),
            SpawnError::Start { source, .. } if source.kind() == std::io::ErrorKind::NotFound => DriverError::StartFailed(format!(
                "Claude Code was not found at {}: install it with `npm install -g @anthropic-ai/claude-code@{PINNED_VERSION}`, or set sessions.claude in config.json to its path",
                o.program.display()
            )),
            e => DriverError::Spawn(e),
        })?;
        if let Some(processes) = &o.processes {
            processes.register(&o.session_id, spawned.pgid, spawned.sid);
            if let Some(sandbox) = &spawned.sandbox {
                processes.register_namespace(&o.session_id, sandbox.pid_namespace);
            }
        }
        let stderr = spawn::StderrTail::follow(spawned.stderr, spawned.pid, "claude");
        let (peer, incoming) = Peer::start(spawned.stdout, spawned.stdin);
        let mut process = ClaudeProcess {
            peer,
            incoming,
            pid: spawned.pid,
            pgid: spawned.pgid,
            sid: spawned.sid,
            sandbox: spawned.sandbox,
            child: spawn::GroupChild::new(spawned.child, spawned.pgid),
            stderr,
        };
        // Subagents wait for a slot in a PreToolUse callback hook (ADR 0030 section 12).
        let mut init = json!({
            "subtype": "initialize",
            "hooks": { "PreToolUse": [
                { "matcher": SLOT_TOOLS, "hookCallbackIds": [SLOT_HOOK], "timeout": SLOT_WAIT_S },
                { "matcher": GATE_TOOLS, "hookCallbackIds": [GATE_HOOK], "timeout": GATE_CHECK_S },
            ], "Stop": [{ "hookCallbackIds": [STOP_HOOK], "timeout": GATE_CHECK_S }] },
        });
        if let Some(text) = &o.append_system_prompt {
            init["appendSystemPrompt"] = json!(text);
        }
        if let Some(snapshot) = o.system_prompt_snapshot {
            init["systemPromptSnapshot"] = json!(snapshot);
        }
        let mut harness_hooked = false;
        if let Some(tools) = &o.host_tools {
            super::claude_mcp::declare(&mut init, tools);
            if tools.hooks.is_some() {
                super::claude_mcp::harness_hooks(&mut init["hooks"]);
                harness_hooked = true;
            }
        }
        if !harness_hooked && !o.resume && o.fork_from.is_none() {
            init["hooks"]["UserPromptSubmit"] =
                json!([{ "hookCallbackIds": [READY_HOOK], "timeout": HARNESS_HOOK_S }]);
        }
        match process.peer.request(init).await {
            Ok(answer) => Ok((process, answer)),
            Err(WireError::Closed) => {
                let status = process.child.wait().await.ok();
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(DriverError::StartFailed(format!(
                    "{} ({})",
                    process.stderr_tail().trim(),
                    status
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "no status".into())
                )))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Write a user message; `priority` steers a running turn (`next`, `now`, `later`).
    pub fn send_user(
        &self,
        content: Value,
        uuid: &str,
        priority: Option<&str>,
    ) -> Result<(), WireError> {
        let mut message = json!({
            "type": "user",
            "message": { "role": "user", "content": content },
            "parent_tool_use_id": null,
            "session_id": "",
            "uuid": uuid,
        });
        if let Some(p) = priority {
            message["priority"] = json!(p);
        }
        self.peer.send(&message)
    }

    /// The last lines the CLI wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Wait for the process to exit on its own.
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }

    /// Stop the session: close its stdin, give it `grace` to finish, then end its whole group.
    pub async fn stop(mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        drop(self.peer);
        let ended = tokio::time::timeout(grace, self.child.wait()).await;
        match ended {
            Ok(Ok(status)) => {
                // The leader is gone; its group may not be.
                spawn::kill_group(&mut self.child, self.pgid, Duration::from_millis(100)).await;
                end_sandbox(&self.sandbox);
                Some(status)
            }
            _ => {
                spawn::kill_group(&mut self.child, self.pgid, Duration::from_secs(2)).await;
                end_sandbox(&self.sandbox);
                self.child.try_wait().ok().flatten()
            }
        }
    }
}

/// End whatever still runs in a session's sandbox (a process that left its group).
fn end_sandbox(sandbox: &Option<SandboxInfo>) {
    if let Some(info) = sandbox {
        spawn::kill_sandbox(info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::contracts::secret::Secret;

    fn options() -> ClaudeOptions {
        ClaudeOptions {
            program: "claude".into(),
            cwd: "/work".into(),
            session_id: "11111111-1111-4111-8111-111111111111".into(),
            resume: false,
            fork_from: None,
            resume_at: None,
            model: Some("claude-sonnet-5".into()),
            effort: None,
            permission_mode: "default".into(),
            append_system_prompt: None,
            system_prompt_snapshot: None,
            plugin_dirs: vec!["/p".into()],
            max_budget_usd: Some(1.5),
            base_url: Some("http://127.0.0.1:9".into()),
            credential: Credential::ApiKey(Secret::new("sk-never-in-env".into())),
            home: "/home/s".into(),
            run_as: None,
            sandbox: None,
            expose_ro: vec![],
            claude_sandbox: None,
            processes: None,
            extra_env: vec![("VYRE_THREAD".into(), "t".into())],
            host_tools: None,
        }
    }

    #[test]
    fn the_argv_is_the_sdks() {
        let args = argv(&options());
        assert_eq!(
            &args[..5],
            [
                "--output-format",
                "stream-json",
                "--verbose",
                "--input-format",
                "stream-json"
            ]
        );
        for expected in [
            "--permission-prompt-tool=stdio",
            "--include-partial-messages",
            "--permission-mode=default",
            "--model=claude-sonnet-5",
            "--max-budget-usd=1.5",
            "--plugin-dir=/p",
            "--session-id=11111111-1111-4111-8111-111111111111",
        ] {
            assert!(
                args.contains(&expected.to_string()),
                "{expected} in {args:?}"
            );
        }
        let mut o = options();
        o.resume = true;
        let args = argv(&o);
        assert!(args.contains(&"--resume=11111111-1111-4111-8111-111111111111".to_string()));
        assert!(
            !args.iter().any(|a| a.starts_with("--session-id")),
            "resume without a fork keeps the id"
        );
    }

    #[test]
    fn the_flag_settings_pin_the_environment_and_hold_no_secret() {
        let args = argv(&options());
        assert_eq!(args.iter().filter(|a| *a == "--settings").count(), 1);
        let at = args
            .iter()
            .position(|a| a == "--settings")
            .expect("--settings");
        let settings: Value = serde_json::from_str(&args[at + 1]).unwrap();
        assert_eq!(settings["env"]["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(settings["env"]["VYRE_THREAD"], "t");
        assert_eq!(settings["env"]["CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR"], "3");
        assert_eq!(settings["env"]["ANTHROPIC_API_KEY"], "");
        assert_eq!(settings["apiKeyHelper"], "");
        assert!(!args.iter().any(|a| a.contains("sk-never-in-env")));
    }

    #[test]
    fn a_fork_and_a_rewind_have_their_flags() {
        let mut o = options();
        o.fork_from = Some("old-id".into());
        o.resume_at = Some("msg-uuid".into());
        let args = argv(&o);
        for expected in [
            "--resume=old-id",
            "--fork-session",
            "--resume-session-at=msg-uuid",
        ] {
            assert!(
                args.contains(&expected.to_string()),
                "{expected} in {args:?}"
            );
        }
        assert!(
            args.contains(&format!("--session-id={}", o.session_id)),
            "the fork gets its own id"
        );
    }

    #[test]
    fn the_environment_is_built_from_nothing_and_holds_no_secret() {
        let env = environment(&options());
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        for expected in [
            "HOME",
            "PATH",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
            "VYRE_THREAD",
        ] {
            assert!(names.contains(&expected), "{expected} in {names:?}");
        }
        for never in [
            "ANTHROPIC_API_KEY",
            "CLAUDECODE",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "NODE_OPTIONS",
        ] {
            assert!(!names.contains(&never), "{never} must not pass");
        }
        assert!(
            !env.iter()
                .any(|(_, v)| v.to_string_lossy().contains("sk-never-in-env"))
        );
    }
}
