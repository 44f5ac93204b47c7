//! Projects and the catalogue (spec section 7.2). A project is a home folder with
//! `.vyre/project.json`, the other folders it owns, and its threads: those a person picked and
//! those that ran in its folders. Nothing automatic removes a pick. The catalogue is every
//! session on this machine, from recall (`recall.sessions`) and the threads Vyre runs
//! (`threads.list`), with its source and whether it is live.

pub mod file;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::modules::{Ctx, Module, StartFuture, ToolDef};
use crate::store::Migration;
use crate::tools::{Reach, ToolError};
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
    #[schemars(length(min = 1, max = 80), pattern(crate::tools::shape::LABEL))]
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
    #[schemars(length(min = 1), inner(pattern(crate::tools::shape::THREAD_ID)))]
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
    #[schemars(pattern(crate::tools::shape::A_WORD))]
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

    /// Every session on this machine: recall's and Vyre's, each once, newest first.
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
                projects: vec![],
                state: None,
                forked_from: None,
            });
            e.source = "vyre".into();
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
            register(&ctx, Projects { ctx: ctx.clone() })?;
            Ok(())
        })
    }
}

fn register(ctx: &Ctx, p: Projects) -> Result<(), crate::modules::StartError> {
    let pr = p.clone();
    ctx.tool(
        ToolDef::new(
            "projects.create",
            "Make a folder a project (writing its .vyre/project.json), or register one that has it already.",
        )
        .onboarding()
        .finishes()
        .person_only(),
        move |input: CreateInput, _| {
            let pr = pr.clone();
            async move {
                // 1 to 80 characters, not blank: the schema's, checked before this runs.
                let name = input.name.trim().to_string();
                // `~` is the sessions' HOME, as in threads.start; a missing folder says so.
                let sessions_home = pr.ctx.sessions_home().map_err(ToolError::invalid)?;
                let home = crate::folders::check(&input.home, &sessions_home)?;
                let input = CreateInput { home, ..input };
                let f = match ProjectFile::read(&input.home) {
                    Ok(existing) if existing.name() != name => {
                        return Err(ToolError::conflict(
                            "project_file",
                            format!(
                                "{} declares the project {:?}; use that name to register it",
                                file::path_in(&input.home).display(),
                                existing.name()
                            ),
                        ));
                    }
                    Ok(existing) => existing,
                    Err(file::FileError::Read { source, .. })
                        if source.kind() == std::io::ErrorKind::NotFound =>
                    {
                        let mut f = ProjectFile::new(&input.home, &name, &input.workspaces);
                        if let Some(m) = input.model.as_deref().filter(|m| !m.trim().is_empty()) {
                            f.set_model(m);
                        }
                        f.write().map_err(file_error)?;
                        f
                    }
                    Err(e) => return Err(file_error(e)),
                };
                let home = input.home.display().to_string();
                let (n, h) = (name.clone(), home.clone());
                let taken = pr
                    .ctx
                    .store()
                    .write(move |tx| {
                        let clash: Option<String> = rusqlite::OptionalExtension::optional(tx.conn().query_row(
                            "SELECT home FROM projects_homes WHERE name = ?1 AND home != ?2",
                            params![n, h],
                            |r| r.get(0),
                        ))?;
                        if clash.is_some() {
                            return Ok(clash);
                        }
                        tx.conn().execute(
                            "INSERT INTO projects_homes (name, home, created_at) VALUES (?1, ?2, ?3)
                             ON CONFLICT(home) DO UPDATE SET name = excluded.name",
                            params![n, h, crate::now_ms()],
                        )?;
                        tx.emit(crate::events::NewEvent::new("project.created", json!({ "project": n, "home": h })))?;
                        Ok(None)
                    })
                    .await?;
                if let Some(other) = taken {
                    return Err(ToolError::conflict(
                        "exists",
                        format!("a project named {name:?} already lives in {other}"),
                    ));
                }
                Ok::<_, ToolError>(ProjectInfo::of(&f))
            }
        },
    )?;

    let pr = p.clone();
    ctx.tool(
        ToolDef::new(
            "projects.list",
            "Every project: its folders, how many threads, last activity.",
        )
        .onboarding()
        .sessions_fenced(),
        move |_: crate::tools::NoInput, cx| {
            let pr = pr.clone();
            async move {
                // A session sees the projects it may see, nobody else's.
                let scope = cx.scope(Reach::Projects).await?;
                let mut projects = pr.all().await?;
                projects.retain(|f| scope.sees_project(f.name()));
                let catalogue = pr.catalogue(&projects).await?;
                Ok::<_, ToolError>(
                    projects
                        .iter()
                        .map(|f| {
                            let mine: Vec<&Entry> = catalogue
                                .iter()
                                .filter(|e| e.projects.iter().any(|n| n == f.name()))
                                .collect();
                            ProjectInfo {
                                threads: Some(mine.len()),
                                last_activity: mine.iter().filter_map(|e| e.last_activity).max(),
                                ..ProjectInfo::of(f)
                            }
                        })
                        .collect::<Vec<_>>(),
                )
            }
        },
    )?;

    let pr = p.clone();
    ctx.tool(
        ToolDef::new("projects.add-threads", "Pick threads into a project.")
            .onboarding()
            .finishes(),
        move |input: ThreadsInput, _| {
            let pr = pr.clone();
            async move {
                let mut f = pr.one(&input.project).await?;
                let mut picks = f.picks();
                for t in input.threads {
                    if !picks.contains(&t) {
                        picks.push(t);
                    }
                }
                f.set_picks(picks.clone());
                f.write().map_err(file_error)?;
                Ok::<_, ToolError>(Picks {
                    project: input.project,
                    picks,
                    still_in_folders: vec![],
                })
            }
        },
    )?;

    let pr = p.clone();
    ctx.tool(
        ToolDef::new(
            "projects.remove-threads",
            "Take threads out of a project's picks (a thread that ran in its folders still belongs).",
        )
        .finishes(),
        move |input: ThreadsInput, _| {
            let pr = pr.clone();
            async move {
                let mut f = pr.one(&input.project).await?;
                let picks: Vec<String> = f
                    .picks()
                    .into_iter()
                    .filter(|t| !input.threads.contains(t))
                    .collect();
                f.set_picks(picks.clone());
                f.write().map_err(file_error)?;
                let catalogue = pr.catalogue(std::slice::from_ref(&f)).await?;
                let still_in_folders = catalogue
                    .into_iter()
                    .filter(|e| input.threads.contains(&e.thread) && !e.projects.is_empty())
                    .map(|e| e.thread)
                    .collect();
                Ok::<_, ToolError>(Picks {
                    project: input.project,
                    picks,
                    still_in_folders,
                })
            }
        },
    )?;

    let pr = p.clone();
    ctx.tool(
        ToolDef::new(
            "projects.catalog",
            "Every session on this machine (or one project's), newest first: name, first message, folder, last activity, live, source; searchable by what was said.",
        )
        .onboarding()
        .sessions_fenced(),
        move |input: CatalogInput, cx| {
            let pr = pr.clone();
            async move {
                let limit = input.limit.unwrap_or(200) as usize;
                // A session's catalogue is what it may see: its threads and its projects'.
                let scope = cx.scope(Reach::Threads).await?;
                if let Some(name) = &input.project
                    && !scope.sees_project(name)
                {
                    return Err(crate::tools::fence::not_your_project(name));
                }
                let projects = pr.all().await?;
                if let Some(name) = &input.project
                    && !projects.iter().any(|f| f.name() == name)
                {
                    return Err(unknown_project(name));
                }
                let said: Option<BTreeSet<String>> = match &input.query {
                    Some(q) => Some(
                        pr.ctx
                            .call("recall.search", json!({ "query": q, "limit": 200 }))
                            .await?
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|h| h["thread"].as_str().map(String::from))
                            .collect(),
                    ),
                    None => None,
                };
                Ok::<_, ToolError>(
                    pr.catalogue(&projects)
                        .await?
                        .into_iter()
                        .filter(|e| {
                            input
                                .project
                                .as_ref()
                                .is_none_or(|p| e.projects.contains(p))
                        })
                        .filter(|e| said.as_ref().is_none_or(|s| s.contains(&e.thread)))
                        .filter(|e| scope.sees(&e.thread))
                        .take(limit)
                        .collect::<Vec<_>>(),
                )
            }
        },
    )?;

    let pr = p.clone();
    ctx.tool(
        ToolDef::new(
            "projects.get",
            "One project as its file declares it (no session counts): cheap, for launches.",
        )
        .sessions_see_project("project"),
        move |input: ProjectInput, _| {
            let pr = pr.clone();
            async move {
                let f = pr.one(&input.project).await?;
                Ok::<_, ToolError>(ProjectInfo::of(&f))
            }
        },
    )?;

    let pr = p.clone();
    ctx.tool(
        ToolDef::new(
            "projects.at",
            "The project a folder belongs to, if any: cheap, for hooks.",
        )
        .sessions_fenced(),
        move |input: AtInput, cx| {
            let pr = pr.clone();
            async move {
                let cwd = match input.cwd {
                    Some(c) => c,
                    // The caller's own folder, from its process (a hook or a plugin command).
                    None => match &cx.caller {
                        crate::tools::Caller::Socket { pid: Some(pid), .. }
                        | crate::tools::Caller::Session { pid: Some(pid), .. } => {
                            std::fs::read_link(format!("/proc/{pid}/cwd")).map_err(|_| {
                                ToolError::invalid("cannot tell the caller's folder; give cwd")
                            })?
                        }
                        _ => return Err(ToolError::invalid("cwd is needed")),
                    },
                };
                let best = pr
                    .all()
                    .await?
                    .into_iter()
                    .filter_map(|f| {
                        let depth = f
                            .folders()
                            .iter()
                            .filter(|d| cwd.starts_with(d))
                            .map(|d| d.components().count())
                            .max()?;
                        Some((depth, f))
                    })
                    .max_by_key(|(depth, _)| *depth)
                    .map(|(_, f)| f);
                // A session learns only of projects it may see.
                let scope = cx.scope(Reach::Projects).await?;
                let best = best.filter(|f| scope.sees_project(f.name()));
                Ok::<_, ToolError>(At {
                    project: best.as_ref().map(|f| f.name().to_string()),
                    home: best.map(|f| f.home.display().to_string()),
                })
            }
        },
    )?;

    let pr = p.clone();
    ctx.tool(
        ToolDef::new(
            "projects.threads",
            "The threads that belong to a project: picked or run in its folders.",
        )
        .sessions_see_project("project"),
        move |input: ProjectInput, _| {
            let pr = pr.clone();
            async move {
                let f = pr.one(&input.project).await?;
                let catalogue = pr.catalogue(std::slice::from_ref(&f)).await?;
                let mut ids: Vec<String> = catalogue
                    .into_iter()
                    .filter(|e| !e.projects.is_empty())
                    .map(|e| e.thread)
                    .collect();
                for pick in f.picks() {
                    if !ids.contains(&pick) {
                        ids.push(pick);
                    }
                }
                Ok::<_, ToolError>(ids)
            }
        },
    )?;

    ctx.tool(
        ToolDef::new(
            "projects.context",
            "What a session in this project may draw on: its folders and its own sessions, never another project's.",
        ).sessions_see_project("project"),
        move |input: ProjectInput, _| {
            let pr = p.clone();
            async move {
                let f = pr.one(&input.project).await?;
                let sessions = pr
                    .catalogue(std::slice::from_ref(&f))
                    .await?
                    .into_iter()
                    .filter(|e| !e.projects.is_empty())
                    .take(20)
                    .collect();
                Ok::<_, ToolError>(Context {
                    project: f.name().to_string(),
                    home: f.home.display().to_string(),
                    folders: f.folders().iter().map(|p| p.display().to_string()).collect(),
                    sessions,
                })
            }
        },
    )?;
    Ok(())
}
