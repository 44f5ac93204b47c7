//! Projects and the catalogue (spec section 7.2). A project is a home folder with
//! `.vyre/project.json`, the other folders it owns, and its threads: those a person picked and
//! those that ran in its folders. Nothing automatic removes a pick. The catalogue is every
//! session on this machine, from recall (`recall.sessions`) and the threads Vyre runs
//! (`threads.list`), with its source and whether it is live.

pub mod file;
mod tools;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::store::Migration;
use crate::kernel::tools::{Reach, ToolError};
use file::ProjectFile;

/// A terminal session whose transcript grew this recently is taken as live (ADR 0030 section
/// 10: one writer per transcript).
pub const LIVE_WINDOW_MS: i64 = 30_000;

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE projects_homes (
        name TEXT PRIMARY KEY,
        home TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
    );",
}];

pub struct ProjectsModule;

/// A session in the catalogue.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Entry {
    pub thread: String,
    pub title: Option<String>,
    pub first_message: Option<String>,
    pub cwd: Option<String>,
    pub last_activity: Option<i64>,
    pub live: bool,
    /// `vyre` (a session Vyre runs) or `terminal`.
    pub source: String,
    /// The program it runs on: `claude`, `codex`, `acp-<name>`.
    pub provider: String,
    /// The projects it belongs to.
    pub projects: Vec<String>,
    /// Vyre's state for it (`idle`, `running`, `stopped` ...), when Vyre runs it.
    pub state: Option<String>,
    /// The thread it was forked from, when Vyre forked it.
    pub forked_from: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProjectInfo {
    pub name: String,
    pub home: String,
    pub org: Option<String>,
    pub workspaces: Vec<String>,
    /// The people its file names (`people` in project.json): memory marks where they are
    /// mentioned in its threads.
    pub people: Vec<file::Person>,
    /// The model its sessions use unless a launch names one (`model` in project.json).
    pub model: Option<String>,
    /// Threads picked by a person.
    pub picks: Vec<String>,
    /// Threads that belong (picked or run in its folders).
    /// Not given by `projects.get`, which reads only the project's file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    pub last_activity: Option<i64>,
}

impl ProjectInfo {
    /// What the project's file declares; no session counts.
    fn of(f: &ProjectFile) -> ProjectInfo {
        ProjectInfo {
            name: f.name().to_string(),
            home: f.home.display().to_string(),
            org: f.org().map(String::from),
            workspaces: f.workspaces(),
            people: f.people(),
            model: f.model().map(String::from),
            picks: f.picks(),
            threads: None,
            last_activity: None,
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    /// 1 to 80 characters.
    #[schemars(length(min = 1, max = 80), pattern(crate::kernel::tools::shape::LABEL))]
    name: String,
    /// The project's home folder (existing; absolute, or from `~`, the sessions' HOME). Its
    /// `.vyre/project.json` is written, or read when it has one already.
    #[schemars(pattern(r"^[/~]"))]
    home: PathBuf,
    /// Other folders it owns, relative to the home or absolute.
    #[serde(default)]
    workspaces: Vec<String>,
    /// The model its sessions use unless a launch names one.
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadsInput {
    project: String,
    /// Thread (session) ids, at least one.
    #[schemars(
        length(min = 1),
        inner(pattern(crate::kernel::tools::shape::THREAD_ID))
    )]
    threads: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectInput {
    project: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogInput {
    /// Only this project's sessions.
    #[serde(default)]
    project: Option<String>,
    /// Only sessions where these words were said.
    #[serde(default)]
    #[schemars(pattern(crate::kernel::tools::shape::A_WORD))]
    query: Option<String>,
    /// At most this many, newest first (1 to 5000, default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtInput {
    /// A folder (absolute); the calling process's own folder when left out (a program on
    /// vyred's socket; over HTTP it is needed).
    #[serde(default)]
    #[schemars(pattern(r"^/"))]
    cwd: Option<PathBuf>,
}

#[derive(Serialize, JsonSchema)]
pub struct At {
    /// The project whose folders hold it (the most specific when folders nest), if any.
    project: Option<String>,
    home: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Picks {
    project: String,
    picks: Vec<String>,
    /// Threads taken out of the picks that still belong because they ran in its folders.
    still_in_folders: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Context {
    project: String,
    home: String,
    folders: Vec<String>,
    /// Its sessions, newest first (at most 20), and nothing from another project's.
    sessions: Vec<Entry>,
}

fn unknown_project(name: &str) -> ToolError {
    ToolError::not_found(
        "unknown_project",
        format!("there is no project {name:?}; projects.list shows them"),
    )
}

fn file_error(e: file::FileError) -> ToolError {
    ToolError::conflict("project_file", e.to_string())
}

#[derive(Clone)]
struct Projects {
    ctx: Ctx,
}

impl Projects {
    /// Every registered project's file (a home whose file went missing or broke is skipped
    /// with a warning: one broken folder never hides the others).
    async fn all(&self) -> Result<Vec<ProjectFile>, ToolError> {
        let homes: Vec<(String, String)> = self
            .ctx
            .store()
            .read(|c| {
                let mut stmt = c.prepare("SELECT name, home FROM projects_homes ORDER BY name")?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await?;
        Ok(homes
            .into_iter()
            .filter_map(|(name, home)| match ProjectFile::read(Path::new(&home)) {
                Ok(f) => Some(f),
                Err(e) => {
                    tracing::warn!(project = %name, error = %e, "project skipped");
                    None
                }
            })
            .collect())
    }

    async fn one(&self, name: &str) -> Result<ProjectFile, ToolError> {
        let n = name.to_string();
        let home: Option<String> = self
            .ctx
            .store()
            .read(move |c| {
                Ok(rusqlite::OptionalExtension::optional(c.query_row(
                    "SELECT home FROM projects_homes WHERE name = ?1",
                    [&n],
                    |r| r.get(0),
                ))?)
            })
            .await?;
        let home = home.ok_or_else(|| unknown_project(name))?;
        ProjectFile::read(Path::new(&home)).map_err(file_error)
    }

    /// Every session on this machine: recall's and Vyre's, each once, newest first, marked
    /// with the ones of `projects` each belongs to.
    async fn catalogue(&self, projects: &[ProjectFile]) -> Result<Vec<Entry>, ToolError> {
        let sessions = self
            .ctx
            .call("recall.sessions", json!({}))
            .await
            .unwrap_or_default();
        let threads = self
            .ctx
            .call("threads.list", json!({}))
            .await
            .unwrap_or_default();
        self.entries(projects, sessions, threads)
    }

    /// The catalogue for one project, reading only the sessions that may belong to it (a
    /// session's fence asks this at every call that needs its projects' threads, so it must
    /// not cost the whole history): what [`Self::catalogue`] gives for `[project]`, less entries
    /// that do not carry the project.
    async fn project_catalogue(&self, project: &ProjectFile) -> Result<Vec<Entry>, ToolError> {
        let (folders, picks) = (project.folders(), project.picks());
        // More than the tools take (256 folders, 10,000 ids): the whole catalogue.
        if picks.len() > MAX_PICKS_ASKED || folders.len() > MAX_FOLDERS_ASKED {
            return self.catalogue(std::slice::from_ref(project)).await;
        }
        let (sessions, threads) = self.belonging(project.name(), &folders, picks).await;
        self.entries(std::slice::from_ref(project), sessions, threads)
    }

    /// Recall's sessions and Vyre's threads as entries, each once, newest first.
    fn entries(
        &self,
        projects: &[ProjectFile],
        sessions: Value,
        threads: Value,
    ) -> Result<Vec<Entry>, ToolError> {
        let now = crate::now_ms();
        let mut by_id: HashMap<String, Entry> = HashMap::new();
        for s in sessions.as_array().into_iter().flatten() {
            let Some(id) = s["thread"].as_str() else {
                continue;
            };
            let written = s["written_at"].as_i64().unwrap_or(0);
            by_id.insert(
                id.to_string(),
                Entry {
                    thread: id.to_string(),
                    title: s["title"].as_str().map(String::from),
                    first_message: s["first_text"].as_str().map(String::from),
                    cwd: s["cwd"].as_str().map(String::from),
                    last_activity: s["last_at"].as_i64(),
                    live: now - written < LIVE_WINDOW_MS,
                    source: "terminal".into(),
                    provider: s["provider"].as_str().unwrap_or("claude").into(),
                    projects: vec![],
                    state: None,
                    forked_from: None,
                },
            );
        }
        let mut vyre_project: HashMap<String, String> = HashMap::new();
        for t in threads.as_array().into_iter().flatten() {
            let Some(id) = t["thread"].as_str() else {
                continue;
            };
            let e = by_id.entry(id.to_string()).or_insert_with(|| Entry {
                thread: id.to_string(),
                title: None,
                first_message: None,
                cwd: t["cwd"].as_str().map(String::from),
                last_activity: t["updated_at"].as_i64(),
                live: false,
                source: "vyre".into(),
                provider: "claude".into(),
                projects: vec![],
                state: None,
                forked_from: None,
            });
            e.source = "vyre".into();
            if let Some(p) = t["provider"].as_str() {
                e.provider = p.to_string();
            }
            // Vyre's title (a person's name for it, or its first message's words) over the
            // transcript's.
            if let Some(title) = t["title"].as_str() {
                e.title = Some(title.to_string());
            }
            e.forked_from = t["forked_from"].as_str().map(String::from);
            e.live = t["live"] == true;
            e.state = t["state"].as_str().map(String::from);
            e.last_activity = e.last_activity.max(t["updated_at"].as_i64());
            if e.cwd.is_none() {
                e.cwd = t["cwd"].as_str().map(String::from);
            }
            if let Some(p) = t["project"].as_str() {
                vyre_project.insert(id.to_string(), p.to_string());
            }
        }
        let homes: Vec<(String, Vec<PathBuf>, BTreeSet<String>)> = projects
            .iter()
            .map(|p| {
                (
                    p.name().to_string(),
                    p.folders(),
                    p.picks().into_iter().collect(),
                )
            })
            .collect();
        let mut entries: Vec<Entry> = by_id
            .into_values()
            .map(|mut e| {
                for (name, folders, picks) in &homes {
                    let in_folder = e
                        .cwd
                        .as_deref()
                        .is_some_and(|c| file::within(Path::new(c), folders));
                    let started_in = vyre_project.get(&e.thread) == Some(name);
                    if picks.contains(&e.thread) || in_folder || started_in {
                        e.projects.push(name.clone());
                    }
                }
                e
            })
            .collect();
        entries.sort_by(|a, b| {
            b.last_activity
                .cmp(&a.last_activity)
                .then(a.thread.cmp(&b.thread))
        });
        Ok(entries)
    }
}

/// Picks a project's short catalogue asks for by id (the tools take 10,000, with the threads
/// found by folder): a project with more is read from the whole catalogue.
const MAX_PICKS_ASKED: usize = 5000;

/// Folders the tools take in one ask (`recall.sessions`, `threads.list`).
const MAX_FOLDERS_ASKED: usize = 256;

impl Projects {
    /// What may belong to project `name`, as recall's sessions and Vyre's threads: Vyre's started in
    /// it, run in its folders or picked, then recall's in its folders or of those threads (a
    /// thread started in the project elsewhere keeps its transcript's words, as in the whole
    /// catalogue).
    async fn belonging(
        &self,
        name: &str,
        folders: &[PathBuf],
        picks: Vec<String>,
    ) -> (Value, Value) {
        let folders: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        let threads = self
            .ctx
            .call(
                "threads.list",
                json!({ "project": name, "folders": folders, "threads": picks }),
            )
            .await
            .unwrap_or_default();
        let mut ids: BTreeSet<String> = picks.into_iter().collect();
        ids.extend(
            threads
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["thread"].as_str().map(String::from)),
        );
        // More than the tool takes by id: all of them (what the whole catalogue reads).
        let asked = match ids.len() {
            n if n > 10_000 => json!({}),
            _ => json!({ "folders": folders, "threads": ids }),
        };
        let sessions = self
            .ctx
            .call("recall.sessions", asked)
            .await
            .unwrap_or_default();
        (sessions, threads)
    }
}

impl Module for ProjectsModule {
    fn name(&self) -> &str {
        "projects"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(MIGRATIONS).await?;
            tools::register(&ctx, Projects { ctx: ctx.clone() })?;
            Ok(())
        })
    }
}
