//! Recall (spec section 7.3): search over every turn of every Claude Code session on this
//! machine, and any one conversation whole. Transcripts are read through [`crate::kernel::transcripts`]
//! by a low-priority worker ([`index`]), followed through file events ([`watch`]), and kept in
//! recall's rows with an FTS5 index ([`rows`], [`search`]); live turns come from the threads'
//! events ([`thread`]). Each turn's meaning is embedded on this machine ([`dense`]), and a
//! search fuses the words' ranking with the meaning's ([`search::fuse`]).

pub mod dense;
pub mod embed;
pub mod filed;
pub mod index;
pub mod rows;
pub mod search;
pub mod sessions;
pub mod thread;
pub mod turns;
pub mod watch;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{Reach, ToolError};
use index::{Job, Progress, ProgressView, Worker};

pub struct RecallModule;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// Words to find; every one must appear in the turn (`any`: at least one). Only the first
    /// 64 distinct words are used (`search::MAX_WORDS`); the rest are ignored.
    #[schemars(pattern(crate::kernel::tools::shape::A_WORD))]
    query: String,
    /// Match turns holding any of the words (of six letters or more) instead of all of them.
    #[serde(default)]
    any: bool,
    /// At most this many (1 to 200, default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    /// Only these sessions (threads).
    #[serde(default)]
    threads: Option<Vec<String>>,
    /// Only this project's sessions.
    #[serde(default)]
    project: Option<String>,
    /// `words` (full text), `meaning` (dense: turns that say the same in other words) or `both`
    /// (default), ranked together. Without the embedding model, `both` is words alone and
    /// `meaning` is an error that says why.
    #[serde(default)]
    mode: Option<Mode>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FiledInput {
    /// Words to find in what the watchers filed; every one must appear (in its title or body).
    #[schemars(pattern(crate::kernel::tools::shape::A_WORD))]
    query: String,
    /// Only this project's.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    project: Option<String>,
    /// At most this many (1 to 200, default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Words,
    Meaning,
    Both,
}

/// Turns each half ranks before the two are fused: a hit low in one list can still rise on the
/// other's strength.
const POOL: usize = 50;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadInput {
    thread: String,
}

/// A session found in the transcripts, as the catalogue shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionInfo {
    pub thread: String,
    pub path: String,
    pub cwd: Option<String>,
    /// Its `/rename` name, else an older transcript's summary.
    pub title: Option<String>,
    pub first_text: Option<String>,
    pub first_at: Option<i64>,
    pub last_at: Option<i64>,
    /// Prompts in it.
    pub turns: i64,
    /// `cli` (a terminal) or the host's, e.g. `sdk-ts` (Vyre); for a Codex thread
    /// `codex:<originator>` (`codex:vyre`, `codex:codex_cli_rs`).
    pub entrypoint: Option<String>,
    /// The program whose session it is: `claude` or `codex`.
    pub provider: String,
    /// When its transcript file last changed (ms), as recall last read it.
    pub written_at: Option<i64>,
}

/// The program a session found on disk is of, by what wrote it.
fn provider_of(entrypoint: Option<&str>) -> &'static str {
    match entrypoint {
        Some(e) if e.starts_with("codex:") => "codex",
        _ => "claude",
    }
}

#[derive(Serialize, JsonSchema)]
pub struct Status {
    roots: Vec<String>,
    sessions: i64,
    turns: i64,
    files: i64,
    /// Lines that were not JSON, skipped.
    broken: i64,
    progress: ProgressView,
    dense: DenseStatus,
}

/// Dense recall's progress.
#[derive(Serialize, JsonSchema)]
pub struct DenseStatus {
    #[serde(flatten)]
    state: dense::ModelState,
    /// Turns given a meaning vector, of `turns`.
    embedded: i64,
    /// Bytes of vectors held in memory now (none when idle).
    held: usize,
}

impl Module for RecallModule {
    fn name(&self) -> &str {
        "recall"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(rows::MIGRATIONS).await?;
            let config = &ctx.config();
            let home = ctx.user_home();
            let sessions_home = config.sessions.home.as_ref().map(PathBuf::from);
            let roots = crate::kernel::transcripts::roots(
                config.transcripts.as_deref(),
                &home,
                sessions_home.as_deref(),
            );
            let progress = Arc::new(Progress::default());
            let dense = start_dense(&ctx)?;
            let (jobs, inbox) = std::sync::mpsc::channel();
            let watch = match watch::Watch::start(roots.clone(), jobs.clone()) {
                Ok(w) => Some(Arc::new(Mutex::new(w))),
                Err(e) => {
                    tracing::warn!(error = %e, "transcripts cannot be followed; they are read at start only");
                    None
                }
            };
            let worker = Worker {
                ctx: ctx.clone(),
                roots: roots.clone(),
                progress: progress.clone(),
                rt: tokio::runtime::Handle::current(),
                watch: watch.clone(),
                dense: dense.clone(),
            };
            let _ = jobs.send(Job::Scan);
            // Its own thread, not the runtime's blocking pool: it lives as long as vyred, and a
            // runtime waits for its blocking tasks when dropped. A panic in it disables recall.
            let (ended, panicked) = tokio::sync::oneshot::channel();
            std::thread::Builder::new()
                .name("vyre-recall".into())
                .spawn(move || {
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        worker.run(inbox)
                    }));
                    let _ = ended.send(run.err());
                })
                .map_err(|e| format!("cannot start the indexer: {e}"))?;
            ctx.spawn(async move {
                if let Ok(Some(panic)) = panicked.await {
                    std::panic::resume_unwind(panic);
                }
            });
            let stop = ctx.shutdown();
            let stopper = jobs.clone();
            ctx.spawn(async move {
                stop.cancelled().await;
                let _ = stopper.send(Job::Stop);
                drop(watch);
            });
            register(&ctx, roots, progress, dense)?;
            filed::follow(&ctx);
            Ok(())
        })
    }
}

/// Dense recall's handle and its worker thread. Its model folder is the config's, else
/// `VYRE_HOME/models/all-minilm-l6-v2`; the worker waits for the model when it is not there.
fn start_dense(ctx: &Ctx) -> Result<dense::Dense, crate::kernel::module::StartError> {
    let config = &ctx.config().recall;
    let dir = config
        .model
        .as_ref()
        .map(PathBuf::from)
        .unwrap_or_else(|| ctx.home().root().join("models").join(dense::MODEL_FOLDER));
    let idle = std::time::Duration::from_secs_f64(config.idle_s.unwrap_or(60.0));
    let d = dense::Dense::new(ctx.clone(), dir, config.embed != Some(false), idle);
    if !d.enabled() {
        return Ok(d);
    }
    let (wake, inbox) = std::sync::mpsc::channel();
    d.set_waker(wake.clone());
    let worker = d.clone();
    let rt = tokio::runtime::Handle::current();
    let (ended, panicked) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("vyre-embed".into())
        .spawn(move || {
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                dense::worker::run(worker, rt, inbox)
            }));
            let _ = ended.send(run.err());
        })
        .map_err(|e| format!("cannot start the embedder: {e}"))?;
    ctx.spawn(async move {
        if let Ok(Some(panic)) = panicked.await {
            std::panic::resume_unwind(panic);
        }
    });
    let stop = ctx.shutdown();
    ctx.spawn(async move {
        stop.cancelled().await;
        let _ = wake.send(dense::worker::Wake::Stop);
    });
    // A turn streaming is the person's: the embedder waits until a few seconds after its last
    // words.
    let busy = d.clone();
    ctx.events().on(
        crate::kernel::events::Filter {
            types: vec!["thread.text".into()],
            ..Default::default()
        },
        move |_| {
            busy.busy(3000);
            async {}
        },
    );
    Ok(d)
}

fn register(
    ctx: &Ctx,
    roots: Vec<PathBuf>,
    progress: Arc<Progress>,
    dense: dense::Dense,
) -> Result<(), crate::kernel::module::StartError> {
    ctx.tool_with(
        ToolDef::new(
            "recall.search",
            "Search every turn of every session on this machine by its words and its meaning; best matches first, with a snippet and which half found each.",
        ).sessions_fenced(),
        &(ctx.clone(), dense.clone()),
        |(c, dense), input: SearchInput, cx| async move {
                // A search is someone waiting (a hook, a person): the embedder steps aside.
                dense.busy(2000);
                let mode = input.mode.unwrap_or(Mode::Both);
                if mode == Mode::Meaning && dense.model().is_none() {
                    return Err(dense::tools::no_model(&dense));
                }
                // A session searches only what it may see (spec sections 7.4 and 10): its own
                // threads and its projects' (an agent: its list's), from what vyred recorded.
                let scope = cx.scope(Reach::Threads).await?;
                // Its range and "at least one word" are the schema's, checked before this runs.
                let limit = input.limit.unwrap_or(20);
                // With `any`, its long words: a query whose words are all short matches nothing,
                // as does one whose only word characters recall does not index (a lone mark).
                let query = if input.any {
                    search::fts_query_any(&input.query)
                } else {
                    search::fts_query(&input.query)
                };
                let mut threads = input.threads;
                if let Some(project) = &input.project {
                    if !scope.sees_project(project) {
                        return Err(crate::kernel::tools::fence::not_your_project(project));
                    }
                    let mine: Vec<String> = serde_json::from_value(
                        c.call("projects.threads", json!({ "project": project })).await?,
                    )
                    .unwrap_or_default();
                    threads = Some(match threads {
                        Some(t) => t.into_iter().filter(|x| mine.contains(x)).collect(),
                        None => mine,
                    });
                }
                if let Some(allowed) = scope.visible() {
                    threads = Some(match threads {
                        Some(t) => t.into_iter().filter(|x| allowed.contains(x)).collect(),
                        None => allowed.iter().cloned().collect(),
                    });
                }
                let limit = limit as usize;
                // The question's meaning is worked out on its own thread while the store finds
                // its words: the two halves take the time of the longer, not of both.
                let question = (mode != Mode::Words).then(|| {
                    let (dense, text) = (dense.clone(), input.query.clone());
                    tokio::task::spawn_blocking(move || dense.question(&text))
                });
                let sessions = threads.clone();
                let fts = query.clone();
                let words = c
                    .store()
                    .read(move |conn| match (&fts, mode) {
                        (Some(q), Mode::Words | Mode::Both) => {
                            search::ranked(conn, q, sessions.as_deref(), limit.max(POOL))
                        }
                        _ => Ok(vec![]),
                    })
                    .await?;
                let question = match question {
                    Some(q) => q.await.map_err(|e| {
                        ToolError::internal(format!("the question's meaning was not worked out: {e}"))
                    })?,
                    None => None,
                };
                Ok(c.store()
                    .read(move |conn| {
                        let meaning = match &question {
                            Some(q) => dense.nearest(conn, q, threads.as_deref(), limit.max(POOL))?,
                            None => vec![],
                        };
                        let found = search::fuse(&words, &meaning, limit);
                        search::details(conn, query.as_deref(), &found)
                    })
                    .await?)
            },
    )?;

    dense::tools::register(ctx, &dense)?;

    ctx.tool_with(
        ToolDef::new(
            "recall.filed",
            "Search what the watchers filed into projects by its words: each item's watcher, project, title, link and the words around the match.",
        )
        .sessions_fenced(),
        ctx,
        |c, input: FiledInput, cx| async move {
            // A session finds only what was filed into the projects it may see.
            let scope = cx.scope(Reach::Projects).await?;
            let seen = if scope.is_everything() { None } else { scope.project_names() };
            let projects = match (input.project, seen) {
                (Some(p), Some(seen)) if !seen.contains(&p) => {
                    return Err(crate::kernel::tools::fence::not_your_project(&p));
                }
                (Some(p), _) => Some(vec![p]),
                (None, seen) => seen,
            };
            let Some(query) = search::fts_query(&input.query) else {
                return Ok(vec![]);
            };
            let limit = input.limit.unwrap_or(20) as usize;
            Ok::<_, ToolError>(
                c.store()
                    .read(move |conn| filed::search(conn, &query, projects.as_deref(), limit))
                    .await?,
            )
        },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "recall.thread",
            "A whole conversation: its history from the transcript and its live turns, each once.",
        ).sessions_see_thread("thread"),
        ctx,
        |c, input: ThreadInput, _| async move {
                let t = input.thread.clone();
                let mut conversation = c.store().read(move |conn| thread::history(conn, &t)).await?;
                let live = c
                    .call(
                        "system.events",
                        json!({ "thread": input.thread, "types": ["thread.turn", "thread.text"], "limit": 1000 }),
                    )
                    .await
                    .unwrap_or_default();
                thread::merge_live(
                    &mut conversation,
                    live.as_array().map(Vec::as_slice).unwrap_or_default(),
                );
                if conversation.turns.is_empty() && conversation.cwd.is_none() {
                    // A thread Vyre just started has no turn yet: it is there, and empty.
                    if let Ok(known) = c.call("threads.get", json!({ "thread": input.thread })).await {
                        conversation.cwd = known["cwd"].as_str().map(String::from);
                        conversation.title = known["title"].as_str().map(String::from);
                        return Ok(conversation);
                    }
                    return Err(ToolError::not_found(
                        "unknown_thread",
                        format!("no history or live turns for {:?}", input.thread),
                    ));
                }
                Ok(conversation)
            },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "recall.turns",
            "The turns recall has read, in the order it read them, after a cursor: for what learns from them (the memory's curator).",
        ).sessions_fenced().plumbing(),
        ctx,
        |c, input: turns::TurnsInput, cx| async move {
                let scope = cx.scope(Reach::Threads).await?;
                let (after, limit) = (input.after.unwrap_or(0), input.limit.unwrap_or(200));
                let mut read = c.store().read(move |conn| turns::after(conn, after, limit)).await?;
                read.retain(|t| scope.sees(&t.thread));
                Ok::<_, ToolError>(read)
            },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "recall.sessions",
            "Every session found in the transcripts (or those in some folders or of some ids: a project's), newest activity first: title, first words, folder, last activity.",
        ).sessions_fenced(),
        ctx,
        |c, input: sessions::SessionsInput, cx| async move {
                let scope = cx.scope(Reach::Threads).await?;
                let mut all = c.store().read(move |conn| sessions::list(conn, &input)).await?;
                all.retain(|s| scope.sees(&s.thread));
                Ok::<_, ToolError>(all)
            },
    )?;

    let roots: Arc<Vec<String>> = Arc::new(roots.iter().map(|r| r.display().to_string()).collect());
    ctx.tool_with(
        ToolDef::new(
            "recall.status",
            "What recall has read: the folders, sessions, turns, broken lines, and the indexing progress.",
        )
        .onboarding()
        .sessions_open(),
        &(ctx.clone(), roots, progress, dense),
        |(c, roots, progress, dense), _: crate::kernel::tools::NoInput, _| async move {
                let (sessions, turns, files, broken) = c
                    .store()
                    .read(|conn| {
                        Ok(conn.query_row(
                            "SELECT (SELECT COUNT(*) FROM recall_sessions), (SELECT COUNT(*) FROM recall_turns),
                                    (SELECT COUNT(*) FROM recall_files), (SELECT COALESCE(SUM(broken), 0) FROM recall_files)",
                            [],
                            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                        )?)
                    })
                    .await?;
                let embedded = c.store().read(dense::embedded).await?;
                Ok::<_, ToolError>(Status {
                    roots: roots.to_vec(),
                    sessions,
                    turns,
                    files,
                    broken,
                    progress: progress.view(),
                    dense: DenseStatus {
                        state: dense.state(),
                        embedded,
                        held: dense.held(),
                    },
                })
        },
    )?;
    Ok(())
}
