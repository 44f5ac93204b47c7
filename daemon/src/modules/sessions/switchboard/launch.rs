//! Starting sessions: a new thread, a resume, a fork, a rewind, and the cap on live sessions.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc;

use super::actor::Actor;
use super::handle::{Handle, Shown};
use super::*;
use crate::kernel::contracts::provider::{Credential, HOOKS_BY_HOST_ENV, Launch, Unresumable};
use crate::kernel::contracts::sockets::SessionSockets;
use crate::modules::sessions::agents::AgentProfile;

/// The error for a thread that cannot go on from its history, and what to do instead.
fn unresumable(thread: &str, req: &StartRequest, why: Unresumable) -> Error {
    Error::Unresumable {
        thread: thread.to_string(),
        cwd: req.cwd.clone(),
        why,
    }
}

/// How a launch starts its session.
enum How {
    /// `cold`: why no warm spare was taken, when spares are kept.
    New {
        cold: Option<String>,
    },
    Resume {
        at: Option<String>,
    },
    Fork {
        from: String,
        at: Option<String>,
    },
}

impl Switchboard {
    /// What a launch needs to know about an agent.
    pub async fn agent(&self, name: &str) -> Result<AgentProfile> {
        Ok(self.router.agent(name).await?)
    }

    /// Start a new session; `started_by` is the thread of the session that asked, if one did.
    pub async fn start(
        self: &Arc<Self>,
        req: StartRequest,
        started_by: Option<String>,
    ) -> Result<String> {
        if let Some(name) = &req.agent {
            let agent = self.agent(name).await?;
            if let Some(project) = &req.project
                && !agent.projects.allows(project)
            {
                return Err(Error::ProjectNotAllowed {
                    agent: name.clone(),
                    project: project.clone(),
                });
            }
        }
        if !req.cwd.is_absolute() || !req.cwd.is_dir() {
            return Err(Error::BadFolder(req.cwd));
        }
        let _one_at_a_time = self.launching.lock().await;
        let by_session = started_by.is_some();
        let thread = match self.take_spare(&req).await {
            Ok(spare) => self.start_on_spare(&req, started_by, spare).await?,
            Err(cold) => {
                let thread = crate::kernel::ids::uuid_v4();
                self.insert_run(&thread, &req, started_by, false).await?;
                self.launch(&thread, &req, How::New { cold }, 0).await?;
                thread
            }
        };
        // The next start is likely to look like the last ones a person or a module made.
        if !by_session {
            self.started(&req);
        }
        Ok(thread)
    }

    /// Start the session of an existing thread that is not live, resuming its transcript.
    pub(super) async fn resume(self: &Arc<Self>, thread: &str, at: Option<String>) -> Result<()> {
        let _one_at_a_time = self.launching.lock().await;
        if self.live(thread).is_some() {
            return Ok(());
        }
        let (req, turns) = match self.launch_options(thread).await? {
            Some(row) => row,
            // A session Vyre did not start: adopt it from its transcript.
            None => {
                self.adopt(thread)
                    .await?
                    .ok_or_else(|| Error::UnknownThread(thread.into()))?;
                self.launch_options(thread)
                    .await?
                    .ok_or_else(|| Error::UnknownThread(thread.into()))?
            }
        };
        // What a terminal wrote since Vyre's last run (or before it adopted the session) goes
        // into the timeline before this run adds to it.
        if let Err(e) = self.import_transcript(thread, true).await {
            tracing::warn!(thread, error = %e, "the transcript's history was not read in");
        }
        // A thread whose CLI died before it wrote its transcript (killed in its first turn) has
        // nothing to resume: it starts afresh under the same id rather than being stuck.
        let how = match self.router.get(&req.provider)?.can_resume(thread, None) {
            Err(Unresumable::NoHistory { .. }) if at.is_none() && !self.history(thread).await? => {
                How::New { cold: None }
            }
            _ => How::Resume { at },
        };
        self.launch(thread, &req, how, turns).await
    }

    /// Whether this thread's transcript is known to have been written.
    async fn history(&self, thread: &str) -> Result<bool> {
        let t = thread.to_string();
        Ok(self.read(move |c| Ok(rows::runs::history(c, &t)?)).await?)
    }

    /// Whether this thread runs on the fallback API key: its subscription's limit was reached
    /// and has not reset yet.
    pub(super) async fn on_fallback(&self, thread: &str) -> bool {
        let t = thread.to_string();
        let until = self
            .read(move |c| Ok(rows::runs::fallback_until(c, &t)?))
            .await
            .unwrap_or(None);
        until.is_some_and(|u| u > crate::now_ms())
    }

    /// Keep within `sessions.max_live`: close the oldest idle session, or refuse when every one
    /// is busy. Called with the launching lock held.
    pub(super) async fn make_room(&self) -> Result<()> {
        let (count, oldest_idle) = {
            let live = self.live.lock().expect("live");
            let oldest = live
                .iter()
                .filter_map(|(t, l)| l.idle_since().map(|since| (since, t.clone())))
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
            None => Err(Error::Busy(self.max_live)),
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
    ) -> Result<()> {
        let driver = self.router.get(&req.provider)?.driver().to_string();
        let (t, r, by) = (thread.to_string(), req.clone(), started_by.clone());
        self.change(move |tx| {
            rows::runs::insert(tx.conn(), &t, &r, &driver, by.as_deref())?;
            crate::modules::sessions::timeline::store::new_marker(tx.conn(), &t, import)?;
            Ok(())
        })
        .await?;
        self.owners.insert(thread, started_by, req.agent.clone());
        Ok(())
    }

    /// The options a thread was started with (what a resume or a fork reuses) and its turns.
    pub(super) async fn launch_options(&self, thread: &str) -> Result<Option<(StartRequest, u64)>> {
        let t = thread.to_string();
        Ok(self.read(move |c| Ok(rows::runs::options(c, &t)?)).await?)
    }

    /// A new thread that continues from this one's history (up to `at`, when given);
    /// `started_by` is the thread of the session that asked, if one did.
    pub async fn fork(
        self: &Arc<Self>,
        thread: &str,
        at: Option<String>,
        started_by: Option<String>,
    ) -> Result<String> {
        let req = match self.launch_options(thread).await? {
            Some((req, _)) => req,
            None => self
                .adopt(thread)
                .await?
                .ok_or_else(|| Error::UnknownThread(thread.into()))?,
        };
        let new = crate::kernel::ids::uuid_v4();
        self.copy_timeline(thread, &new, at.clone()).await;
        let _one_at_a_time = self.launching.lock().await;
        self.insert_run(&new, &req, started_by, false).await?;
        let from = thread.to_string();
        self.launch(&new, &req, How::Fork { from, at }, 0).await?;
        Ok(new)
    }

    /// Continue this thread from an earlier message: everything after it is dropped.
    pub async fn rewind(self: &Arc<Self>, thread: &str, uuid: &str) -> Result<()> {
        let (req, _) = self
            .launch_options(thread)
            .await?
            .ok_or_else(|| Error::UnknownThread(thread.into()))?;
        // Refuse a bad point before the live session is stopped for it.
        let provider = self.router.get(&req.provider)?;
        if !provider.rewinds() {
            let why = Unresumable::NoRewind {
                provider: req.provider.clone(),
            };
            return Err(unresumable(thread, &req, why));
        }
        provider
            .can_resume(thread, Some(uuid))
            .map_err(|why| unresumable(thread, &req, why))?;
        if self.live(thread).is_some() {
            self.stop(thread, "rewind").await?;
        }
        let _one_at_a_time = self.launching.lock().await;
        let (req, turns) = self
            .launch_options(thread)
            .await?
            .ok_or_else(|| Error::UnknownThread(thread.into()))?;
        let at = Some(uuid.to_string());
        self.launch(thread, &req, How::Resume { at }, turns).await?;
        self.emit(
            "thread.rewound",
            thread,
            json!({ "uuid": uuid, "at": uuid }),
        )
        .await;
        Ok(())
    }

    /// Launch (or relaunch) a thread's process and its actor.
    async fn launch(
        self: &Arc<Self>,
        thread: &str,
        req: &StartRequest,
        how: How,
        turns: u64,
    ) -> Result<()> {
        let (resume, fork_from, resume_at, cold) = match how {
            How::New { cold } => (false, None, None, cold),
            How::Resume { at } => (true, None, at, None),
            How::Fork { from, at } => (false, Some(from), at, None),
        };
        let provider = self.router.get(&req.provider)?;
        // A resume, rewind or fork needs its history: check before closing anything for room.
        if resume || fork_from.is_some() {
            let from = fork_from.as_deref().unwrap_or(thread);
            provider
                .can_resume(from, resume_at.as_deref())
                .map_err(|why| unresumable(from, req, why))?;
        }
        let planned = async {
            self.make_room().await?;
            let fallback = self.on_fallback(thread).await;
            let plan = self.plan(thread, req, fallback).await?;
            self.starting(thread, &plan.auth).await?;
            Ok::<_, Error>(plan)
        }
        .await;
        let plan = match planned {
            Ok(plan) => plan,
            // A thread this start made (new, or a fork) never stays "starting": it failed, and
            // says why. A resumed one stays as it was.
            Err(e) if !resume => {
                self.failed_to_start(thread, &e.to_string()).await?;
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let mut launch = plan.launch;
        launch.resume = resume;
        launch.fork_from = fork_from.clone();
        launch.resume_at = resume_at;
        launch.env.extend(self.socket_for(thread));
        let session = match provider.start(launch).await {
            Ok(s) => s,
            Err(e) => {
                self.close_socket(thread);
                self.failed_to_start(thread, &e.to_string()).await?;
                return Err(Error::StartFailed(e));
            }
        };
        let went = Went {
            agent: plan.agent,
            auth: plan.auth,
            resumed: resume,
            forked_from: fork_from,
            warm: cold.map(Err),
        };
        self.went_live(thread, req, session, went, turns).await
    }

    /// The thread is starting, on `auth`.
    pub(super) async fn starting(&self, thread: &str, auth: &str) -> Result<()> {
        let (t, a) = (thread.to_string(), auth.to_string());
        self.change(move |tx| {
            rows::runs::set_auth(tx.conn(), &t, &a)?;
            tell(
                tx,
                &t,
                "thread.state",
                json!({ "state": ThreadStatus::Starting }),
            )
        })
        .await?;
        Ok(())
    }

    /// The thread's process did not start, and why.
    pub(super) async fn failed_to_start(&self, thread: &str, why: &str) -> Result<()> {
        let (t, error) = (thread.to_string(), clean(why));
        self.change(move |tx| {
            rows::runs::set_status(tx.conn(), &t, ThreadStatus::Failed)?;
            tell(
                tx,
                &t,
                "thread.state",
                json!({ "state": ThreadStatus::Failed, "error": error }),
            )
        })
        .await?;
        Ok(())
    }

    /// What a new session of `thread` would be launched with (no socket yet: [`Self::socket_for`]),
    /// its agent, and the name of its credential.
    pub(super) async fn plan(
        &self,
        thread: &str,
        req: &StartRequest,
        fallback: bool,
    ) -> Result<Plan> {
        let agent = match &req.agent {
            Some(name) => Some(self.router.agent(name).await?),
            None => None,
        };
        let provider = self.router.get(&req.provider)?;
        let (auth, credential) = if provider.runs_claude() {
            let (auth, credential) = self
                .router
                .credential_for(req.agent.as_deref(), fallback)
                .await?;
            let auth = serde_json::to_value(auth)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            (auth, credential)
        } else if let Some(item) = provider.key_item() {
            match self.router.provider_key(item).await? {
                Some(key) => ("api-key".to_string(), Credential::ApiKey(key)),
                None => ("login".to_string(), Credential::Login),
            }
        } else {
            // The provider's program signs in its own way (an ACP agent's config).
            ("own".to_string(), Credential::Login)
        };
        let budget_left = self.budget_left(thread, req, agent.as_ref()).await?;
        let harness = self.harness();
        // With the plugin, vyred serves its tools itself instead of the plugin's helper.
        let host_tools = (!harness.plugin_dirs.is_empty()).then(|| self.host_tools(thread));
        let launch = Launch {
            id: thread.to_string(),
            resume: false,
            fork_from: None,
            resume_at: None,
            cwd: req.cwd.clone(),
            model: req.model.clone(),
            effort: req.effort.clone(),
            mode: req.mode.as_str().to_string(),
            append_system_prompt: agent
                .as_ref()
                .map(|a| a.instructions.clone())
                .filter(|i| !i.trim().is_empty()),
            // An agent's instructions can change between launches; the prompt must follow.
            system_prompt_snapshot: agent.as_ref().map(|_| false),
            credential,
            budget_usd: budget_left,
            plugin_dirs: harness.plugin_dirs,
            env: {
                let mut env = vec![("VYRE_THREAD".into(), thread.into())];
                if let Some(a) = &agent {
                    env.push(("VYRE_AGENT".into(), a.name.clone().into()));
                }
                env.extend(harness.env);
                if host_tools.as_ref().is_some_and(|t| t.hooks.is_some()) {
                    // vyred answers these hooks itself; the plugin's commands step aside.
                    env.push((HOOKS_BY_HOST_ENV.into(), "1".into()));
                }
                env
            },
            processes: Some(self.ctx.session_processes().clone()),
            host_tools,
        };
        Ok(Plan {
            launch,
            agent,
            auth,
        })
    }

    /// A started session becomes the thread's live one: its processes known, its actor run.
    pub(super) async fn went_live(
        self: &Arc<Self>,
        thread: &str,
        req: &StartRequest,
        session: Box<dyn crate::kernel::contracts::provider::Session>,
        went: Went,
        turns: u64,
    ) -> Result<()> {
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
        let mut started = json!({ "provider": req.provider, "model": req.model, "effort": req.effort, "auth": went.auth, "purpose": req.purpose, "cwd": req.cwd.display().to_string(), "resumed": went.resumed, "forked_from": went.forked_from });
        let on_spare = matches!(went.warm, Some(Ok(())));
        if let Some(warm) = went.warm {
            started["warm"] = json!(warm.is_ok());
            if let Err(why) = warm {
                started["cold"] = json!(why);
            }
        }
        let (t, resumed) = (thread.to_string(), went.resumed);
        self.change(move |tx| {
            rows::runs::launched(tx.conn(), &t, ids, resumed)?;
            tell(tx, &t, "thread.started", started)?;
            tell(
                tx,
                &t,
                "thread.state",
                json!({ "state": ThreadStatus::Idle }),
            )
        })
        .await?;
        let (tx, rx) = mpsc::unbounded_channel();
        let shown = Shown::new(ThreadStatus::Idle);
        let agent = went.agent;
        let budget = agent.as_ref().and_then(|a| a.auth.budget_usd);
        // What the thread spent before matters only against a budget: no read without one.
        let spent = match budget {
            Some(_) => {
                let t = thread.to_string();
                self.read(move |c| Ok(rows::runs::spent(c, &t)?)).await?
            }
            None => 0.0,
        };
        let actor = Actor::new(
            self.clone(),
            thread,
            req.project.clone(),
            agent.as_ref().map(|a| a.name.clone()),
            turns,
            tx.downgrade(),
            shown.clone(),
        )
        .costing(spent, budget)
        .following(&req.cwd, on_spare);
        self.live.lock().expect("live").insert(
            thread.to_string(),
            Handle {
                tx,
                ids,
                agent: agent.as_ref().map(|a| (a.name.clone(), a.updated_at)),
                shown,
            },
        );
        self.ctx.spawn(actor.run(session, rx));
        Ok(())
    }
}

/// A launch worked out ([`Switchboard::plan`]).
pub(super) struct Plan {
    pub launch: Launch,
    pub agent: Option<AgentProfile>,
    /// The credential's name (`login`, `setup-token`, `api-key`).
    pub auth: String,
}

/// How a session went live, for `thread.started`.
pub(super) struct Went {
    agent: Option<AgentProfile>,
    auth: String,
    resumed: bool,
    forked_from: Option<String>,
    /// For a new thread when spares are kept: `Ok` when a warm spare was claimed, else why
    /// it started cold.
    pub warm: Option<std::result::Result<(), String>>,
}

impl Went {
    pub fn new(
        agent: Option<AgentProfile>,
        auth: String,
        warm: std::result::Result<(), String>,
    ) -> Went {
        Went {
            agent,
            auth,
            resumed: false,
            forked_from: None,
            warm: Some(warm),
        }
    }
}

/// What an owned session gets of the harness: the plugin's hosted part (its commands and skills;
/// its hooks vyred answers and its MCP server vyred serves itself, `host_tools`), and `vyre` first on its PATH (its own socket is added per thread: `socket_for`).
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

    /// The session's own socket, as `VYRE_SOCKET`, if the daemon gives it one.
    pub(super) fn socket_for(&self, thread: &str) -> Vec<(String, std::ffi::OsString)> {
        let opened = match self.ctx.get::<dyn SessionSockets>() {
            Some(sockets) => sockets.open(thread),
            None => Ok(None),
        };
        match opened {
            Ok(Some(path)) => vec![("VYRE_SOCKET".into(), path.into_os_string())],
            Ok(None) => vec![],
            Err(e) => {
                tracing::warn!(thread, "no socket of its own for the session: {e}");
                vec![]
            }
        }
    }

    /// The plugin and `vyre` first on the PATH, unless `sessions.harness` is off.
    fn harness(&self) -> HarnessLaunch {
        let mut out = HarnessLaunch::default();
        if self.ctx.config().sessions.harness == Some(false) {
            return out;
        }
        let (Some(bin), Some(plugin)) = (
            self.ctx.vyre_bin(),
            crate::kernel::contracts::harness::hosted_plugin_dir(),
        ) else {
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
