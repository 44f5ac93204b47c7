//! Starting sessions: a new thread, a resume, a fork, a rewind, and the cap on live sessions.

use std::sync::{Arc, Mutex};

use rusqlite::{OptionalExtension, params};
use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::contracts::provider::Unresumable;
use crate::contracts::sockets::SessionSockets;
use crate::sessions::agents::AgentProfile;

/// The error for a thread that cannot go on from its history, and what to do instead.
fn unresumable(thread: &str, req: &StartRequest, why: Unresumable) -> ToolError {
    match why {
        Unresumable::NoHistory { looked_in } => ToolError::conflict(
            "no_history",
            format!(
                "thread {thread} cannot resume: its transcript is gone (looked in {}). Start a new thread in the same folder instead: `vyre threads start --cwd {}` (threads.start {{\"cwd\": {:?}}})",
                looked_in.display(),
                req.cwd.display(),
                req.cwd.display().to_string()
            ),
        ),
        Unresumable::UnknownMessage { uuid } => ToolError::not_found(
            "unknown_message",
            format!(
                "thread {thread} has no message {uuid:?} to go back to; the uuids are those threads.send answered and thread.turn events carry"
            ),
        ),
    }
}

impl Switchboard {
    /// What a launch needs to know about an agent.
    pub async fn agent(&self, name: &str) -> Result<AgentProfile, ToolError> {
        self.router.agent(name).await
    }

    /// Start a new session; `started_by` is the thread of the session that asked, if one did.
    pub async fn start(
        self: &Arc<Self>,
        req: StartRequest,
        started_by: Option<String>,
    ) -> Result<String, ToolError> {
        if let Some(name) = &req.agent {
            let agent = self.agent(name).await?;
            if let Some(project) = &req.project
                && !agent.projects.allows(project)
            {
                return Err(ToolError::refused(
                    "project_not_allowed",
                    format!(
                        "agent {name:?} may not draw on project {project:?}; agents.update sets its projects"
                    ),
                ));
            }
        }
        if !req.cwd.is_absolute() || !req.cwd.is_dir() {
            return Err(ToolError::invalid(format!(
                "cwd {:?} must be an existing folder, given as an absolute path",
                req.cwd
            )));
        }
        if !matches!(req.mode.as_str(), "default" | "acceptEdits" | "plan") {
            return Err(ToolError::invalid(
                "mode must be default, acceptEdits or plan",
            ));
        }
        let thread = crate::ids::uuid_v4();
        let _one_at_a_time = self.launching.lock().await;
        self.insert_run(&thread, &req, started_by, false).await?;
        self.launch(&thread, &req, How::New, 0).await?;
        Ok(thread)
    }

    /// Start the session of an existing thread that is not live, resuming its transcript.
    pub(super) async fn resume(
        self: &Arc<Self>,
        thread: &str,
        at: Option<String>,
    ) -> Result<(), ToolError> {
        let _one_at_a_time = self.launching.lock().await;
        if self.live(thread).is_some() {
            return Ok(());
        }
        let row = match self.launch_options(thread).await? {
            Some(row) => row,
            // A session Vyre did not start: adopt it from its transcript.
            None => {
                self.adopt(thread).await?.ok_or_else(|| not_found(thread))?;
                self.launch_options(thread)
                    .await?
                    .ok_or_else(|| not_found(thread))?
            }
        };
        let (req, turns) = row;
        // What a terminal wrote since Vyre's last run (or before it adopted the session) goes
        // into the timeline before this run adds to it.
        if let Err(e) = self.import_transcript(thread, true).await {
            tracing::warn!(thread, error = %e, "the transcript's history was not read in");
        }
        // A thread whose CLI died before it wrote its transcript (killed in its first turn) has
        // nothing to resume: it starts afresh under the same id rather than being stuck.
        let how = match self.router.get(&req.provider)?.can_resume(thread, None) {
            Err(Unresumable::NoHistory { .. }) if at.is_none() && !self.history(thread).await? => {
                How::New
            }
            _ => How::Resume { at },
        };
        self.launch(thread, &req, how, turns.max(0) as u64).await
    }

    /// Whether this thread's transcript is known to have been written.
    async fn history(&self, thread: &str) -> Result<bool, ToolError> {
        let t = thread.to_string();
        Ok(self
            .ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT history FROM threads_runs WHERE id = ?1",
                    [&t],
                    |r| r.get::<_, i64>(0),
                )
                .optional()?
                .is_none_or(|h| h != 0))
            })
            .await?)
    }

    /// Whether this thread runs on the fallback API key: its subscription's limit was reached
    /// and has not reset yet.
    pub(super) async fn on_fallback(&self, thread: &str) -> bool {
        let t = thread.to_string();
        let until: Option<i64> = self
            .ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT fallback_until FROM threads_runs WHERE id = ?1",
                    [&t],
                    |r| r.get(0),
                )
                .optional()?
                .flatten())
            })
            .await
            .unwrap_or(None);
        until.is_some_and(|u| u > crate::now_ms())
    }

    /// Keep within `sessions.max_live`: close the oldest idle session, or refuse when every one
    /// is busy. Called with the launching lock held.
    pub(super) async fn make_room(&self) -> Result<(), ToolError> {
        let (count, oldest_idle) = {
            let live = self.live.lock().expect("live");
            let oldest = live
                .iter()
                .filter_map(|(t, l)| {
                    let shown = l.state.lock().expect("state");
                    (shown.state == "idle").then(|| (shown.since, t.clone()))
                })
                .min()
                .map(|(_, t)| t);
            (live.len(), oldest)
        };
        if count < self.max_live {
            return Ok(());
        }
        match oldest_idle {
            Some(thread) => {
                self.stop(&thread, "idle").await?;
                Ok(())
            }
            None => Err(ToolError::new(
                ErrorKind::Busy,
                "busy",
                format!(
                    "all {} live sessions are busy (sessions.max_live); try again when one finishes",
                    self.max_live
                ),
            )),
        }
    }

    /// A new `threads_runs` row, `starting`, with the options a resume will reuse and who
    /// started it, and its timeline's bookkeeping (`import`: its transcript holds history Vyre
    /// did not see, read in before its first run).
    pub(super) async fn insert_run(
        &self,
        thread: &str,
        req: &StartRequest,
        started_by: Option<String>,
        import: bool,
    ) -> Result<(), ToolError> {
        let driver = self.router.get(&req.provider)?.driver().to_string();
        let (t, r, by) = (thread.to_string(), req.clone(), started_by.clone());
        self.ctx
            .store()
            .write(move |tx| {
                let now = crate::now_ms();
                tx.conn().execute(
                    "INSERT INTO threads_runs (id, provider, driver, purpose, model, cwd, project, agent, auth, mode, status, created_at, updated_at, history, started_by)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '', ?9, 'starting', ?10, ?10, 0, ?11)",
                    params![t, r.provider, driver, r.purpose, r.model, r.cwd.display().to_string(), r.project, r.agent, r.mode, now, by],
                )?;
                crate::sessions::timeline::store::new_marker(tx.conn(), &t, import)?;
                Ok(())
            })
            .await?;
        self.owners.insert(thread, started_by, req.agent.clone());
        Ok(())
    }

    /// The options a thread was started with (what a resume or a fork reuses) and its turn count.
    pub(super) async fn launch_options(
        &self,
        thread: &str,
    ) -> Result<Option<(StartRequest, i64)>, ToolError> {
        let t = thread.to_string();
        Ok(self
            .ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT provider, purpose, model, cwd, project, agent, mode, turns FROM threads_runs WHERE id = ?1",
                    [&t],
                    |r| {
                        Ok((
                            StartRequest {
                                provider: r.get(0)?,
                                purpose: r.get(1)?,
                                model: r.get(2)?,
                                cwd: PathBuf::from(r.get::<_, String>(3)?),
                                project: r.get(4)?,
                                agent: r.get(5)?,
                                mode: r.get(6)?,
                            },
                            r.get::<_, i64>(7)?,
                        ))
                    },
                )
                .optional()?)
            })
            .await?)
    }

    /// A new thread that continues from this one's history (up to `at`, when given);
    /// `started_by` is the thread of the session that asked, if one did.
    pub async fn fork(
        self: &Arc<Self>,
        thread: &str,
        at: Option<String>,
        started_by: Option<String>,
    ) -> Result<String, ToolError> {
        let req = match self.launch_options(thread).await? {
            Some((req, _)) => req,
            None => self.adopt(thread).await?.ok_or_else(|| not_found(thread))?,
        };
        let new = crate::ids::uuid_v4();
        self.copy_timeline(thread, &new, at.clone()).await;
        let _one_at_a_time = self.launching.lock().await;
        self.insert_run(&new, &req, started_by, false).await?;
        self.launch(
            &new,
            &req,
            How::Fork {
                from: thread.to_string(),
                at,
            },
            0,
        )
        .await?;
        Ok(new)
    }

    /// Continue this thread from an earlier message: everything after it is dropped.
    pub async fn rewind(self: &Arc<Self>, thread: &str, uuid: &str) -> Result<(), ToolError> {
        let (req, _) = self
            .launch_options(thread)
            .await?
            .ok_or_else(|| not_found(thread))?;
        // Refuse a bad point before the live session is stopped for it.
        self.router
            .get(&req.provider)?
            .can_resume(thread, Some(uuid))
            .map_err(|why| unresumable(thread, &req, why))?;
        if self.live(thread).is_some() {
            self.stop(thread, "rewind").await?;
        }
        let _one_at_a_time = self.launching.lock().await;
        let (req, turns) = self
            .launch_options(thread)
            .await?
            .ok_or_else(|| not_found(thread))?;
        self.launch(
            thread,
            &req,
            How::Resume {
                at: Some(uuid.to_string()),
            },
            turns.max(0) as u64,
        )
        .await?;
        self.emit(
            "thread.rewound",
            thread,
            json!({ "uuid": uuid, "at": uuid }),
        )
        .await;
        Ok(())
    }

    /// Launch (or relaunch) a thread's process and its actor.
    pub(super) async fn launch(
        self: &Arc<Self>,
        thread: &str,
        req: &StartRequest,
        how: How,
        turns: u64,
    ) -> Result<(), ToolError> {
        let (resume, fork_from, resume_at) = match &how {
            How::New => (false, None, None),
            How::Resume { at } => (true, None, at.clone()),
            How::Fork { from, at } => (false, Some(from.clone()), at.clone()),
        };
        let provider = self.router.get(&req.provider)?;
        // A resume, rewind or fork needs its history: check before closing anything for room.
        if resume || fork_from.is_some() {
            let from = fork_from.as_deref().unwrap_or(thread);
            provider
                .can_resume(from, resume_at.as_deref())
                .map_err(|why| unresumable(from, req, why))?;
        }
        self.make_room().await?;
        let agent = match &req.agent {
            Some(name) => Some(self.router.agent(name).await?),
            None => None,
        };
        let fallback = self.on_fallback(thread).await;
        let (auth, credential) = self
            .router
            .credential_for(req.agent.as_deref(), fallback)
            .await?;
        let auth_name = serde_json::to_value(auth)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        self.update_run(thread, "auth", Some(auth_name.clone()))
            .await;
        self.emit("thread.state", thread, json!({ "state": "starting" }))
            .await;
        let harness = self.harness_for(thread);
        let launch = Launch {
            id: thread.to_string(),
            resume,
            fork_from: fork_from.clone(),
            resume_at,
            cwd: req.cwd.clone(),
            model: req.model.clone(),
            mode: req.mode.clone(),
            append_system_prompt: agent
                .as_ref()
                .map(|a| a.instructions.clone())
                .filter(|i| !i.trim().is_empty()),
            // An agent's instructions can change between launches; the prompt must follow.
            system_prompt_snapshot: agent.as_ref().map(|_| false),
            credential,
            budget_usd: agent.as_ref().and_then(|a| a.auth.budget_usd),
            plugin_dirs: harness.plugin_dirs,
            env: {
                let mut env = vec![("VYRE_THREAD".into(), thread.into())];
                if let Some(a) = &agent {
                    env.push(("VYRE_AGENT".into(), a.name.clone().into()));
                }
                env.extend(harness.env);
                env
            },
            processes: Some(self.ctx.session_processes().clone()),
        };
        let session = match provider.start(launch).await {
            Ok(s) => s,
            Err(e) => {
                self.close_socket(thread);
                self.set_status(thread, "failed").await;
                self.emit(
                    "thread.state",
                    thread,
                    json!({ "state": "failed", "error": clean(&e) }),
                )
                .await;
                return Err(ToolError::new(
                    ErrorKind::Unavailable,
                    "start_failed",
                    format!("the session could not start: {e}"),
                ));
            }
        };
        let ids = session.ids();
        self.commands
            .lock()
            .expect("commands")
            .insert(thread.to_string(), session.commands());
        self.ctx
            .session_processes()
            .register(thread, ids.pgid, ids.sid);
        if let Some(ns) = ids.pid_namespace {
            self.ctx.session_processes().register_namespace(thread, ns);
        }
        {
            let t = thread.to_string();
            self.ctx
                .store()
                .write(move |tx| {
                    tx.conn().execute(
                        "UPDATE threads_runs SET status = 'idle', pid = ?1, pgid = ?2, sid = ?3, stopped_reason = NULL, updated_at = ?4, history = MAX(history, ?6) WHERE id = ?5",
                        params![ids.pid, ids.pgid, ids.sid, crate::now_ms(), t, resume as i64],
                    )?;
                    Ok(())
                })
                .await?;
        }
        self.emit(
            "thread.started",
            thread,
            json!({ "provider": req.provider, "model": req.model, "auth": auth_name, "purpose": req.purpose, "cwd": req.cwd.display().to_string(), "resumed": resume, "forked_from": fork_from }),
        )
        .await;
        self.emit("thread.state", thread, json!({ "state": "idle" }))
            .await;
        let (tx, rx) = mpsc::unbounded_channel();
        let (weak, project) = (tx.downgrade(), req.project.clone());
        let state = Arc::new(Mutex::new(Shown::new("idle")));
        self.live.lock().expect("live").insert(
            thread.to_string(),
            Live {
                tx,
                ids,
                agent: agent.as_ref().map(|a| (a.name.clone(), a.updated_at)),
                state: state.clone(),
            },
        );
        let me = self.clone();
        let t = thread.to_string();
        self.ctx.spawn(async move {
            me.run(t, session, (rx, weak), state, (turns, project))
                .await
        });
        Ok(())
    }
}

/// What an owned session gets of the harness: the plugin (its hooks and Vyre's MCP server),
/// `vyre` first on its PATH, and its own socket as `VYRE_SOCKET`.
#[derive(Default)]
pub(super) struct HarnessLaunch {
    plugin_dirs: Vec<std::path::PathBuf>,
    env: Vec<(String, std::ffi::OsString)>,
}

impl Switchboard {
    /// Close the session's own socket, if the daemon gave it one.
    pub(super) fn close_socket(&self, thread: &str) {
        if let Some(sockets) = self.ctx.get::<dyn SessionSockets>() {
            sockets.close(thread);
        }
    }

    pub(super) fn harness_for(&self, thread: &str) -> HarnessLaunch {
        let mut out = HarnessLaunch::default();
        let opened = match self.ctx.get::<dyn SessionSockets>() {
            Some(sockets) => sockets.open(thread),
            None => Ok(None),
        };
        match opened {
            Ok(Some(path)) => out.env.push(("VYRE_SOCKET".into(), path.into_os_string())),
            Ok(None) => {}
            Err(e) => tracing::warn!(thread, "no socket of its own for the session: {e}"),
        }
        if self.ctx.config().sessions.harness == Some(false) {
            return out;
        }
        let (Some(bin), Some(plugin)) =
            (self.ctx.vyre_bin(), crate::contracts::harness::plugin_dir())
        else {
            return out;
        };
        out.plugin_dirs.push(plugin);
        if let Some(dir) = bin.parent() {
            let mut paths = vec![dir.to_path_buf()];
            if let Some(path) = std::env::var_os("PATH") {
                paths.extend(std::env::split_paths(&path));
            }
            if let Ok(path) = std::env::join_paths(paths) {
                out.env.push(("PATH".into(), path));
            }
        }
        out
    }
}
