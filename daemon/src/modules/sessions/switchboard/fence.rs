//! The Fence (issue 17): what a session may act on and see, decided here, in one place, from
//! what vyred recorded (never from a tool's input).
//!
//! - A session owns its own thread, the threads it started or forked (and theirs, down the
//!   line), and, when it runs for an agent, that agent's threads (and theirs). An agent with the
//!   `threads` grant owns every thread.
//! - It sees what it owns, and the threads of the projects it may see: an agent's list
//!   (`projects`), else the project its thread was started in and the one its folder belongs
//!   to. An agent with the `recall` grant sees every thread.
//! - A session vyred did not start (`Caller::Session { thread: None }`: a person's plain
//!   `claude` with the harness) owns nothing; it sees the project of the folder of the Claude
//!   Code process it runs under, which vyred finds from the socket's peer, not from anything
//!   the process sends.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde_json::json;

use super::Switchboard;
use crate::kernel::tools::fence::{
    BoxFuture, Fence, Projects, Reach, Scope, SessionScope, ThreadTest,
};
use crate::kernel::tools::{Caller, ToolError};
use crate::modules::sessions::agents::Grant;

/// Who made a thread, and for which agent: what ownership is decided from.
#[derive(Debug, Clone)]
struct Run {
    started_by: Option<String>,
    agent: Option<String>,
}

/// Every thread's maker and agent, in memory: an ownership test runs per event on a session's
/// stream, so it never touches the store. One small entry per thread Vyre knows.
#[derive(Default)]
pub struct Owners {
    // std RwLock: a lookup per check, a write when a thread is made; never across an await.
    runs: RwLock<HashMap<String, Run>>,
}

/// How far up a chain of starters ownership is looked for.
const MAX_DEPTH: usize = 64;

impl Owners {
    /// Load every thread's row (at the threads module's start).
    pub(crate) fn load(conn: &rusqlite::Connection) -> rusqlite::Result<Owners> {
        let runs = super::rows::runs::owners(conn)?
            .into_iter()
            .map(|o| {
                let run = Run {
                    started_by: o.started_by,
                    agent: o.agent,
                };
                (o.thread, run)
            })
            .collect();
        Ok(Owners {
            runs: RwLock::new(runs),
        })
    }

    pub(crate) fn insert(&self, thread: &str, started_by: Option<String>, agent: Option<String>) {
        self.runs
            .write()
            .expect("owners")
            .insert(thread.to_string(), Run { started_by, agent });
    }

    /// Every thread the session of `me` (running for `agent`) owns: one walk under one lock,
    /// with nothing copied but what it owns (it runs at each call that needs a session's
    /// threads, over every thread Vyre ran).
    fn owned(&self, me: &str, agent: Option<&str>) -> BTreeSet<String> {
        let runs = self.runs.read().expect("owners");
        let mut owned: BTreeSet<String> = runs
            .keys()
            .filter(|t| owns_in(&runs, me, agent, t))
            .cloned()
            .collect();
        owned.insert(me.to_string());
        owned
    }

    fn agent_of(&self, thread: &str) -> Option<String> {
        self.runs
            .read()
            .expect("owners")
            .get(thread)
            .and_then(|r| r.agent.clone())
    }

    /// Whether the session of thread `me` (running for `agent`) owns `thread`.
    fn owns(&self, me: &str, agent: Option<&str>, thread: &str) -> bool {
        owns_in(&self.runs.read().expect("owners"), me, agent, thread)
    }
}

/// Whether the session of thread `me` (running for `agent`) owns `thread`: it is `me`, or
/// `agent`'s, or was started by one of those, at any depth.
fn owns_in(runs: &HashMap<String, Run>, me: &str, agent: Option<&str>, thread: &str) -> bool {
    let mut t = thread;
    for _ in 0..MAX_DEPTH {
        if t == me {
            return true;
        }
        let Some(run) = runs.get(t) else {
            return false;
        };
        if agent.is_some() && run.agent.as_deref() == agent {
            return true;
        }
        match &run.started_by {
            Some(parent) => t = parent,
            None => return false,
        }
    }
    false
}

/// What a session is, before its projects are looked up.
struct Known {
    thread: Option<String>,
    agent: Option<crate::modules::sessions::agents::AgentProfile>,
    owns: ThreadTest,
    /// The Claude Code process it runs under, found from the caller's pid.
    claude: Option<i32>,
}

impl Switchboard {
    /// Who the session is and what it owns.
    async fn known(&self, caller: &Caller) -> Result<Known, ToolError> {
        let (thread, pid) = match caller {
            Caller::Session { thread, pid } => (thread.clone(), *pid),
            _ => return Err(ToolError::internal("the fence is for sessions only")),
        };
        let claude = pid.and_then(crate::kernel::peer::claude_ancestor);
        let Some(me) = thread else {
            return Ok(Known {
                thread: None,
                agent: None,
                owns: Arc::new(|_| false),
                claude,
            });
        };
        let agent = match self.owners.agent_of(&me) {
            // An agent that is gone grants nothing: the thread is fenced as any other.
            Some(name) => self.router.agent(&name).await.ok(),
            None => None,
        };
        let owners = self.owners.clone();
        let (m, a) = (me.clone(), agent.as_ref().map(|a| a.name.clone()));
        Ok(Known {
            thread: Some(me),
            agent,
            owns: Arc::new(move |t| owners.owns(&m, a.as_deref(), t)),
            claude,
        })
    }

    /// The folder the session works in: its thread's, as vyred started it; for a session vyred
    /// did not start, its Claude Code process's.
    async fn folder_of(&self, known: &Known) -> Option<PathBuf> {
        match &known.thread {
            Some(t) => self.info(t).await.ok().flatten().map(|i| i.cwd.into()),
            None => known.claude.and_then(process_folder),
        }
    }

    /// The projects a session that runs for no agent may see: the one its thread was started
    /// in and the one its folder belongs to.
    async fn own_projects(&self, known: &Known, folder: Option<&PathBuf>) -> BTreeSet<String> {
        let mut projects = BTreeSet::new();
        if let Some(t) = &known.thread
            && let Ok(Some(info)) = self.info(t).await
            && let Some(p) = info.project
        {
            projects.insert(p);
        }
        if let Some(folder) = folder
            && let Ok(at) = self.ctx.call("projects.at", json!({ "cwd": folder })).await
            && let Some(p) = at["project"].as_str()
        {
            projects.insert(p.to_string());
        }
        projects
    }

    /// The threads of these projects (every project's for `All`).
    async fn threads_of(&self, projects: &Projects) -> Result<BTreeSet<String>, ToolError> {
        let names: Vec<String> = match projects {
            Projects::Only(names) => names.iter().cloned().collect(),
            Projects::All => self
                .ctx
                .call("projects.list", json!({}))
                .await?
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["name"].as_str().map(String::from))
                .collect(),
        };
        let mut threads = BTreeSet::new();
        for name in names {
            // A project that went away since adds nothing.
            if let Ok(ids) = self
                .ctx
                .call("projects.threads", json!({ "project": name }))
                .await
            {
                threads.extend(serde_json::from_value::<Vec<String>>(ids).unwrap_or_default());
            }
        }
        Ok(threads)
    }

    async fn session_scope(&self, caller: &Caller, reach: Reach) -> Result<Scope, ToolError> {
        let known = self.known(caller).await?;
        let grants = known
            .agent
            .as_ref()
            .map(|a| a.grants.clone())
            .unwrap_or_default();
        let all_threads = grants.contains(&Grant::Threads);
        let sees_all = all_threads || grants.contains(&Grant::Recall);
        let folder = match reach {
            Reach::Own => None,
            _ => self.folder_of(&known).await,
        };
        let projects = match (&known.agent, reach) {
            (_, Reach::Own) => Projects::Only(BTreeSet::new()),
            (Some(agent), _) => match &agent.projects {
                crate::modules::sessions::agents::Projects::All(_) => Projects::All,
                crate::modules::sessions::agents::Projects::Only(names) => {
                    Projects::Only(names.iter().cloned().collect())
                }
            },
            (None, _) => Projects::Only(self.own_projects(&known, folder.as_ref()).await),
        };
        let seen = if reach == Reach::Threads && !sees_all {
            let mut seen = self.threads_of(&projects).await?;
            if let Some(me) = &known.thread {
                let agent = known.agent.as_ref().map(|a| a.name.as_str());
                seen.extend(self.owners.owned(me, agent));
            }
            seen
        } else {
            BTreeSet::new()
        };
        Ok(Scope::of_session(SessionScope {
            reach,
            thread: known.thread,
            agent: known.agent.map(|a| a.name),
            all_threads,
            owns: known.owns,
            sees_all,
            projects,
            seen,
            folder,
            claude: known.claude,
        }))
    }
}

impl Fence for Switchboard {
    fn scope<'a>(
        &'a self,
        caller: &'a Caller,
        reach: Reach,
    ) -> BoxFuture<'a, Result<Scope, ToolError>> {
        Box::pin(async move {
            match caller {
                Caller::Session { .. } => self.session_scope(caller, reach).await,
                _ => Ok(Scope::everything()),
            }
        })
    }

    fn thread_of_queued(&self, queued: i64) -> BoxFuture<'_, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            Ok(self
                .read(move |c| Ok(super::rows::inbox::thread_of(c, queued)?))
                .await?)
        })
    }
}

/// The folder a process works in (`/proc/<pid>/cwd`; `lsof` where there is no `/proc`).
fn process_folder(pid: i32) -> Option<PathBuf> {
    if let Ok(dir) = std::fs::read_link(format!("/proc/{pid}/cwd")) {
        return Some(dir);
    }
    if cfg!(target_os = "linux") {
        return None;
    }
    let out = std::process::Command::new("lsof")
        .args(["-a", "-p", &pid.to_string(), "-d", "cwd", "-Fn"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix('n'))
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owners(rows: &[(&str, Option<&str>, Option<&str>)]) -> Owners {
        let o = Owners::default();
        for (t, by, agent) in rows {
            o.insert(t, by.map(String::from), agent.map(String::from));
        }
        o
    }

    #[test]
    fn a_session_owns_its_thread_what_it_started_and_its_agents_threads() {
        let o = owners(&[
            ("me", None, None),
            ("child", Some("me"), None),
            ("grandchild", Some("child"), None),
            ("other", None, None),
            ("others-child", Some("other"), None),
            ("scout-1", None, Some("scout")),
            ("scout-2", None, Some("scout")),
            ("started-by-scout", Some("scout-2"), None),
            ("juno-1", None, Some("juno")),
        ]);
        for mine in ["me", "child", "grandchild"] {
            assert!(o.owns("me", None, mine), "{mine}");
        }
        for not in ["other", "others-child", "scout-1", "juno-1", "unknown"] {
            assert!(!o.owns("me", None, not), "{not}");
        }
        // An agent's session: every thread of its agent and what they started.
        for mine in ["scout-1", "scout-2", "started-by-scout"] {
            assert!(o.owns("scout-1", Some("scout"), mine), "{mine}");
        }
        for not in ["me", "juno-1", "child"] {
            assert!(!o.owns("scout-1", Some("scout"), not), "{not}");
        }
        // A thread it started never makes its starter's threads its own.
        assert!(!o.owns("child", None, "me"));
    }

    #[test]
    fn a_chain_of_starters_is_followed_only_so_far() {
        let o = Owners::default();
        o.insert("t0", None, None);
        for i in 1..=(MAX_DEPTH + 5) {
            o.insert(&format!("t{i}"), Some(format!("t{}", i - 1)), None);
        }
        assert!(o.owns("t0", None, "t10"));
        assert!(!o.owns("t0", None, &format!("t{}", MAX_DEPTH + 5)));
    }
}
