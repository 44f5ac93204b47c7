//! The two built-in modules of the sessions layer: `sessions` (the provider router, the Claude
//! provider and the credential sessions run on; the vault grants are to it) and `threads` (the
//! Switchboard and its tools).

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claude_provider::ClaudeProvider;
use super::cli::{ClaudeCli, Probe, Source};
use super::provider::ProcessIds;
use super::router::Router;
use super::switchboard::{AskInfo, Owners, StartRequest, Switchboard, ThreadInfo};
use crate::modules::{Ctx, Module, StartFuture, ToolDef};
use crate::tools::fence::{not_your_project, not_your_thread};
use crate::tools::{Caller, Reach, ToolError};

/// The thread of a session caller, when vyred knows it.
fn session_thread(caller: &Caller) -> Option<String> {
    match caller {
        Caller::Session { thread, .. } => thread.clone(),
        _ => None,
    }
}

pub struct SessionsModule {
    pub router: Arc<Router>,
}

impl Module for SessionsModule {
    fn name(&self) -> &str {
        "sessions"
    }
    fn manifest(&self) -> &str {
        include_str!("manifests/sessions.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        let router = self.router.clone();
        Box::pin(async move {
            let settings = ctx.kernel().config().config.sessions.clone();
            let run_as = run_as(&settings)?;
            if run_as.is_some() && settings.socket_dir.is_none() {
                tracing::warn!(
                    "sessions.uid is set but sessions.socket_dir is not: the sessions' own sockets stay in VYRE_HOME, which their user cannot reach, so their Vyre tools will fail"
                );
            }
            let home = sessions_home(ctx.kernel())?;
            let base_url = settings.base_url.or_else(|| {
                std::env::var("ANTHROPIC_BASE_URL")
                    .ok()
                    .filter(|v| !v.is_empty())
            });
            let vyre_home = ctx.kernel().home().root().to_path_buf();
            let contain = Arc::new(super::sandbox::Contain::new(
                super::sandbox::Wanted::parse(settings.containment.as_deref())?,
                run_as,
                super::sandbox::hidden_paths(&vyre_home),
                // A bundled CLI lives in VYRE_HOME (sessions.claude = "bundled").
                vec![vyre_home.join("claude-code")],
            ));
            let cli = Arc::new(ClaudeCli::new(
                Source::parse(settings.claude.as_deref(), ctx.kernel().home().root()),
                Probe {
                    home: home.clone(),
                    contain: contain.clone(),
                },
                Some(ctx.clone()),
            ));
            ctx.provider(Arc::new(ClaudeProvider {
                cli: cli.clone(),
                base_url,
                home: home.clone(),
                contain,
            }))?;
            ctx.tool(
                ToolDef::new(
                    "sessions.claude",
                    "Which Claude Code CLI sessions run, and its version, found without installing anything.",
                ).sessions_open(),
                move |_: EmptyInput, _| {
                    let cli = cli.clone();
                    async move { Ok::<_, ToolError>(cli.detect().await) }
                },
            )?;
            ctx.store().migrate(super::models::MIGRATIONS).await?;
            super::models::register(&ctx)?;
            let slots = Arc::new(super::slots::Slots::new(
                ctx.clone(),
                super::slots::Limits::from_config(&ctx.kernel().config().config.sessions.slots),
            ));
            register_slots(&ctx, slots.clone())?;
            router.set_slots(slots);
            router.set_sessions_ctx(ctx, home);
            Ok(())
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyInput {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesInput {
    thread: String,
    /// Words of the path, in order (`src main` finds `src/main.rs`); none lists the shallowest.
    #[serde(default)]
    query: Option<String>,
    /// At most this many (1 to 100, default 20).
    #[serde(default)]
    limit: Option<u32>,
}

pub struct ThreadsModule {
    pub router: Arc<Router>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartInput {
    /// The folder the session works in (absolute).
    cwd: PathBuf,
    /// A first message.
    #[serde(default)]
    text: Option<String>,
    /// The first message is Vyre's own instruction, not the person's words: the timeline marks
    /// it `internal` and surfaces hide it. Only Vyre's modules may say so.
    #[serde(default)]
    internal: bool,
    #[serde(default)]
    model: Option<String>,
    /// chat, agent, project, capsule, job, memory, planner or learn.
    #[serde(default)]
    purpose: Option<String>,
    #[serde(default)]
    project: Option<String>,
    /// Which provider (default claude).
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    agent: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Started {
    thread: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendInput {
    thread: String,
    text: String,
    /// An idempotency key, the user message's uuid.
    #[serde(default)]
    uuid: Option<String>,
    /// While a turn runs: steer (join it, the default) or queue (after it).
    #[serde(default)]
    mode: Option<String>,
    /// Images to send with the words.
    #[serde(default)]
    images: Vec<Image>,
    /// Vyre's own instruction, not the person's words (see threads.start). Only Vyre's modules
    /// may say so.
    #[serde(default)]
    internal: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Image {
    /// image/png, image/jpeg, image/gif or image/webp.
    media_type: String,
    /// The image, base64.
    data: String,
}

impl Image {
    /// The Messages API's image block, after checking what can be checked here.
    fn block(&self) -> Result<Value, ToolError> {
        if !matches!(
            self.media_type.as_str(),
            "image/png" | "image/jpeg" | "image/gif" | "image/webp"
        ) {
            return Err(ToolError::invalid(
                "an image must be image/png, image/jpeg, image/gif or image/webp",
            ));
        }
        let base64 = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=');
        if self.data.is_empty() || !self.data.bytes().all(base64) {
            return Err(ToolError::invalid("an image's data must be base64"));
        }
        Ok(
            serde_json::json!({ "type": "image", "source": { "type": "base64", "media_type": self.media_type, "data": self.data } }),
        )
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkInput {
    thread: String,
    /// Fork from this message (its uuid); the whole history when left out.
    #[serde(default)]
    uuid: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RewindInput {
    thread: String,
    /// The user message (its uuid, from threads.send or thread.turn) to continue from.
    uuid: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueuedInput {
    /// The queued message's id (from threads.send or thread.queued).
    queued: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    queued: i64,
    #[schemars(pattern(crate::tools::shape::NOT_BLANK))]
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerInput {
    ask: String,
    /// allow, deny or always.
    decision: String,
    /// For a question: the chosen labels keyed by the question text.
    #[serde(default)]
    answers: Option<Value>,
    /// For a deny: what to tell Claude.
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadInput {
    thread: String,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeInput {
    thread: String,
    /// default, acceptEdits or plan.
    #[schemars(pattern(r"^(default|acceptEdits|plan)$"))]
    mode: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelInput {
    thread: String,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Detail {
    #[serde(flatten)]
    info: ThreadInfo,
    #[serde(flatten)]
    about: super::about::About,
    asks: Vec<Ask>,
    /// Messages waiting for the turn's end (`queued`) or for a terminal to let go (`held`).
    queued: Vec<super::switchboard::QueuedInfo>,
}

/// A thread in `threads.list`.
#[derive(Serialize, JsonSchema)]
pub struct Listed {
    #[serde(flatten)]
    info: ThreadInfo,
    #[serde(flatten)]
    about: super::about::About,
}

/// An ask in `threads.get`, with what a person reads before answering it.
#[derive(Serialize, JsonSchema)]
pub struct Ask {
    #[serde(flatten)]
    ask: AskInfo,
    /// What answering `always` would write; null when it would write nothing.
    rule: Option<super::always::Always>,
    /// Why the call deserves a second look (it deletes or discards something), if it does.
    destructive: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Pids {
    pids: Vec<i32>,
    pgids: Vec<i32>,
    sids: Vec<i32>,
    processes: Vec<ProcessIds>,
}

#[derive(Serialize, JsonSchema)]
pub struct Done {
    ok: bool,
}

impl Module for ThreadsModule {
    fn name(&self) -> &str {
        "threads"
    }
    fn manifest(&self) -> &str {
        include_str!("manifests/threads.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        let router = self.router.clone();
        Box::pin(async move {
            ctx.store().migrate(super::rows::MIGRATIONS).await?;
            // Sessions a vyred left live when it died (a crash, kill -9): their processes went
            // with it; say so, and they resume on the next send.
            let left = ctx.store()
                .write(|tx| {
                    let left: Vec<(String, String, i64)> = {
                        let mut stmt = tx.conn().prepare(
                            "SELECT id, status, turns FROM threads_runs WHERE status NOT IN ('stopped', 'failed')",
                        )?;
                        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                        rows.collect::<Result<_, _>>()?
                    };
                    // `updated_at` now: what their processes wrote before they went was Vyre's own
                    // (see the one-writer check in switchboard/adopt.rs).
                    tx.conn().execute(
                        "UPDATE threads_runs SET status = 'stopped', stopped_reason = 'restart', updated_at = ?1
                         WHERE status NOT IN ('stopped', 'failed')",
                        [crate::now_ms()],
                    )?;
                    let asks: Vec<(String, String)> = {
                        let mut stmt = tx.conn().prepare("SELECT id, thread FROM threads_asks WHERE status = 'open'")?;
                        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                        rows.collect::<Result<_, _>>()?
                    };
                    tx.conn().execute("UPDATE threads_asks SET status = 'cancelled', decision = 'cancelled' WHERE status = 'open'", [])?;
                    // Recorded through the timeline, which closes what they leave open.
                    use super::timeline::record;
                    for (ask, thread) in asks {
                        record(
                            tx,
                            crate::events::NewEvent::new("ask.answered", serde_json::json!({ "ask": ask, "decision": "cancelled", "reason": "restart" }))
                                .thread(thread),
                        )?;
                    }
                    for (thread, status, turns) in &left {
                        let thread = thread.clone();
                        // A turn is running exactly when its row says so: the turn's start and
                        // its end each commit with the row's status.
                        if status == "running" || status == "waiting" {
                            record(
                                tx,
                                crate::events::NewEvent::new("thread.finished", serde_json::json!({ "ok": false, "canceled": true, "reason": "restart", "turn": format!("{thread}:{turns}") }))
                                    .thread(thread.clone()),
                            )?;
                        }
                        record(tx, crate::events::NewEvent::new("thread.stopped", serde_json::json!({ "reason": "restart" })).thread(thread))?;
                    }
                    Ok(left)
                })
                .await?;
            // A process of theirs that outlived the old vyred (its stdin closed with it, so this
            // is rare) must not write the transcript the next resume writes: end it.
            if !left.is_empty() {
                let swept = tokio::task::spawn_blocking(move || {
                    left.iter()
                        .map(|(t, ..)| super::spawn::kill_tagged("VYRE_THREAD", t))
                        .sum::<usize>()
                })
                .await
                .unwrap_or(0);
                if swept > 0 {
                    tracing::warn!(
                        swept,
                        "ended session processes a previous vyred left behind"
                    );
                }
            }
            let owners = ctx.store().read(|c| Ok(Owners::load(c)?)).await?;
            let board = Switchboard::new(ctx.clone(), router, owners);
            ctx.provide_fence(board.clone())?;
            let home = Arc::new(sessions_home(ctx.kernel())?);
            register(&ctx, board.clone(), home.clone())?;
            super::finding::register(&ctx, board.clone(), home)?;
            // Threads are titled by the first words a person sends them.
            super::about::follow(&ctx);
            // When vyred stops, every session stops with it.
            let stop = ctx.shutdown();
            ctx.spawn(async move {
                stop.cancelled().await;
                board.stop_all("restart").await;
            });
            Ok(())
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TakeInput {
    /// `teammate` or `subagent`.
    kind: super::slots::Kind,
    /// The thread it is for: its slots go back when its session ends.
    #[serde(default)]
    thread: Option<String>,
    /// The project it counts against (per-project limits, and whose turn it is).
    #[serde(default)]
    project: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct TakeOutput {
    slot: String,
    /// `held`, or `waiting` (then `slot.taken` says when it is held).
    state: String,
    position: Option<usize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlotInput {
    slot: String,
}

/// `sessions.slots.*`: how teammates take and give back theirs (subagents of Vyre's own
/// sessions wait in the driver's hook instead).
fn register_slots(
    ctx: &Ctx,
    slots: Arc<super::slots::Slots>,
) -> Result<(), crate::modules::StartError> {
    let s = slots.clone();
    ctx.tool(
        ToolDef::new(
            "sessions.slots.take",
            "Take a teammate or subagent slot: held at once, or waiting in a fair line (slot.waiting and slot.taken say how it goes).",
        ).finishes().sessions_fenced(),
        move |input: TakeInput, cx| {
            let s = s.clone();
            async move {
                let scope = cx.scope(Reach::Projects).await?;
                // A session's slot is always one of its own threads' (so it goes back when that
                // session ends), counted against a project it may see.
                let thread = input.thread.or_else(|| scope.thread().map(String::from));
                if !scope.is_everything() {
                    if !thread.as_deref().is_some_and(|t| scope.owns(t)) {
                        let named = thread.as_deref().unwrap_or("(none)");
                        return Err(not_your_thread(&format!("thread {named:?}")));
                    }
                    if let Some(p) = &input.project
                        && !scope.sees_project(p)
                    {
                        return Err(not_your_project(p));
                    }
                }
                let taken = s.take(input.kind, thread, input.project).await;
                Ok::<_, ToolError>(TakeOutput {
                    slot: taken.slot,
                    state: if taken.position.is_some() { "waiting" } else { "held" }.into(),
                    position: taken.position,
                })
            }
        },
    )?;
    let s = slots.clone();
    ctx.tool(
        ToolDef::new(
            "sessions.slots.release",
            "Give a slot back, or stop waiting for it.",
        )
        .finishes()
        .sessions_fenced(),
        move |input: SlotInput, cx| {
            let s = s.clone();
            async move {
                let scope = cx.scope(Reach::Own).await?;
                if !scope.is_everything() {
                    let view = s.view();
                    let thread = view
                        .held
                        .iter()
                        .chain(view.waiting.iter().map(|w| &w.entry))
                        .find(|e| e.slot == input.slot)
                        .and_then(|e| e.thread.clone());
                    if !thread.is_some_and(|t| scope.owns(&t)) {
                        return Err(not_your_thread(&format!("slot {:?}", input.slot)));
                    }
                }
                if s.release(&input.slot, "released").await {
                    Ok(Done { ok: true })
                } else {
                    Err(ToolError::not_found(
                        "unknown_slot",
                        format!("no slot {:?} is held or waited for", input.slot),
                    ))
                }
            }
        },
    )?;
    ctx.tool(
        ToolDef::new(
            "sessions.slots.list",
            "The slot limits, who holds a slot, and who waits, with positions.",
        )
        .sessions_fenced(),
        move |_: NoInput, cx| {
            let s = slots.clone();
            async move {
                let scope = cx.scope(Reach::Own).await?;
                let mut view = s.view();
                // A session sees the limits and its own threads' slots, nobody else's.
                if !scope.is_everything() {
                    let mine = |e: &super::slots::Entry| {
                        e.thread.as_deref().is_some_and(|t| scope.owns(t))
                    };
                    view.held.retain(mine);
                    view.waiting.retain(|w| mine(&w.entry));
                }
                Ok::<_, ToolError>(view)
            }
        },
    )?;
    Ok(())
}

/// Whether words may be marked as Vyre's own: only a module's call says so (a person's words
/// are theirs, and a session must not hide what it sends from the person).
fn internal_by(caller: &Caller, internal: bool) -> Result<bool, ToolError> {
    match (internal, caller) {
        (false, _) => Ok(false),
        (true, Caller::Module { .. }) => Ok(true),
        (true, _) => Err(ToolError::refused(
            "internal_for_modules",
            "only Vyre's own modules mark words as internal",
        )),
    }
}

fn register(
    ctx: &Ctx,
    board: Arc<Switchboard>,
    home: Arc<PathBuf>,
) -> Result<(), crate::modules::StartError> {
    super::timeline::tools::register(ctx, board.clone())?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool(
        ToolDef::new(
            "threads.start",
            "Start a Claude Code session in a folder, optionally with a first message.",
        )
        .finishes()
        .sessions_fenced(),
        move |input: StartInput, cx| {
            let b = b.clone();
            let c = c.clone();
            let home = home.clone();
            async move {
                // `~` is the sessions' HOME; a folder that is not there is said as typed.
                let cwd = super::folders::check(&input.cwd, &home)?;
                // A session starts threads within what it may act on and see: for its own agent
                // only, in its projects only (named, or by the folder), so what it starts never
                // reaches further than it does. The new thread is its own.
                let scope = cx.scope(Reach::Projects).await?;
                if !scope.is_everything() {
                    if let Some(agent) = &input.agent
                        && !scope.acts_for(agent)
                    {
                        return Err(not_your_thread(&format!("agent {agent:?}")));
                    }
                    if let Some(p) = &input.project
                        && !scope.sees_project(p)
                    {
                        return Err(not_your_project(p));
                    }
                    let at = c
                        .call("projects.at", serde_json::json!({ "cwd": cwd }))
                        .await?;
                    if let Some(p) = at["project"].as_str()
                        && !scope.sees_project(p)
                    {
                        return Err(not_your_project(p));
                    }
                }
                let started_by = session_thread(&cx.caller);
                let purpose = input.purpose.unwrap_or_else(|| {
                    if input.agent.is_some() {
                        "agent".into()
                    } else if input.project.is_some() {
                        "project".into()
                    } else {
                        "chat".into()
                    }
                });
                if !super::models::PURPOSES.contains(&purpose.as_str()) {
                    return Err(ToolError::invalid(format!(
                        "purpose must be one of {}",
                        super::models::PURPOSES.join(", ")
                    )));
                }
                // An explicit model wins, then the agent's own, then the project's (ADR 0030
                // section 9); else the purpose's, from the sessions module.
                let agent_model = match &input.agent {
                    Some(name) => b.agent(name).await?.model,
                    None => None,
                };
                let project_model = match &input.project {
                    Some(name) => c
                        .call("projects.get", serde_json::json!({ "project": name }))
                        .await
                        .ok()
                        .and_then(|p| p["model"].as_str().map(String::from)),
                    None => None,
                };
                let model = match input.model.or(agent_model).or(project_model) {
                    Some(m) => m,
                    None => c
                        .call("sessions.models.get", serde_json::json!({}))
                        .await?
                        .get(&purpose)
                        .and_then(|p| p["model"].as_str())
                        .map(String::from)
                        .unwrap_or_else(|| super::models::default_model(&purpose).to_string()),
                };
                let request = StartRequest {
                    cwd,
                    model: Some(model),
                    purpose,
                    project: input.project,
                    provider: input.provider.unwrap_or_else(|| "claude".into()),
                    agent: input.agent,
                    mode: "default".into(),
                };
                let internal = internal_by(&cx.caller, input.internal)?;
                let thread = b.start(request, started_by).await?;
                if let Some(text) = input.text {
                    b.send_as(&thread, &text, None, false, vec![], internal)
                        .await?;
                }
                Ok::<_, ToolError>(Started { thread })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.send",
            "Send words to a thread: a new turn when it is idle; while a turn runs, joining it at its next step (steer, the default) or waiting for its end (queue).",
        ).finishes().sessions_own_thread("thread"),
        move |input: SendInput, cx| {
            let b = b.clone();
            async move {
                let internal = internal_by(&cx.caller, input.internal)?;
                let queue = match input.mode.as_deref() {
                    None | Some("steer") => false,
                    Some("queue") => true,
                    Some(other) => return Err(ToolError::invalid(format!("mode must be steer or queue, not {other:?}"))),
                };
                let images = input.images.iter().map(Image::block).collect::<Result<Vec<_>, _>>()?;
                b.send_as(&input.thread, &input.text, input.uuid, queue, images, internal).await
            }
        },
    )?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool(
        ToolDef::new(
            "threads.fork",
            "A new thread that continues from this one's history (up to a message, when given).",
        )
        .finishes()
        .sessions_own_thread("thread"),
        move |input: ForkInput, cx| {
            let b = b.clone();
            let c = c.clone();
            async move {
                let thread = b
                    .fork(
                        &input.thread,
                        input.uuid.clone(),
                        session_thread(&cx.caller),
                    )
                    .await?;
                // Its parent, and its parent's title to start with, for every surface.
                if let Err(e) = super::about::forked(&c, &thread, &input.thread, input.uuid).await {
                    tracing::warn!(thread, error = %e, "the fork's parent was not recorded");
                }
                Ok::<_, ToolError>(Started { thread })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.rewind",
            "Continue a thread from an earlier message: what came after it is dropped.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        move |input: RewindInput, _| {
            let b = b.clone();
            async move {
                b.rewind(&input.thread, &input.uuid).await?;
                Ok::<_, ToolError>(Done { ok: true })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.unqueue",
            "Take a queued message back before it is handed over.",
        )
        .finishes()
        .sessions_own_queued("queued"),
        move |input: QueuedInput, _| {
            let b = b.clone();
            async move {
                b.unqueue(input.queued).await?;
                Ok::<_, ToolError>(Done { ok: true })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new("threads.edit", "Change the words of a queued message.")
            .finishes()
            .sessions_own_queued("queued"),
        move |input: EditInput, _| {
            let b = b.clone();
            async move {
                b.edit(input.queued, &input.text).await?;
                Ok::<_, ToolError>(Done { ok: true })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.take_held",
            "Take the messages held for a session a terminal is writing, oldest first: the terminal's Stop hook delivers them.",
        ).finishes().sessions_own_thread("thread"),
        move |input: ThreadInput, _| {
            let b = b.clone();
            async move { b.take_held(&input.thread).await }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new("threads.send_now", "Send a queued message at once: the running turn stops at its next step and this one runs.").finishes().sessions_own_queued("queued"),
        move |input: QueuedInput, _| {
            let b = b.clone();
            async move { b.send_now(input.queued).await }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.answer",
            "Answer a session's question: allow, deny, or always (a rule for next time).",
        )
        .finishes()
        .person_only(),
        move |input: AnswerInput, cx| {
            let b = b.clone();
            async move {
                b.answer(
                    &input.ask,
                    &input.decision,
                    input.answers,
                    input.message,
                    &cx.caller,
                )
                .await
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.interrupt",
            "Stop the running turn at once; the session stays.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        move |input: ThreadInput, _| {
            let b = b.clone();
            async move {
                b.interrupt(&input.thread).await?;
                Ok::<_, ToolError>(Done { ok: true })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.stop",
            "End a thread's session and everything it started.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        move |input: ThreadInput, _| {
            let b = b.clone();
            async move {
                let stopped = b.stop(&input.thread, "stopped").await?;
                Ok::<_, ToolError>(Done { ok: stopped })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.commands",
            "The thread's slash commands (name, description, argument hint), as its session said at its start: a surface's slash menu.",
        ).sessions_see_thread("thread"),
        move |input: ThreadInput, _| {
            let b = b.clone();
            async move { b.commands(&input.thread).await }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.files",
            "Files in the thread's folder whose path holds the query (best first): a surface's @file picker.",
        ).sessions_see_thread("thread"),
        move |input: FilesInput, _| {
            let b = b.clone();
            async move {
                let cwd = b.cwd(&input.thread).await?;
                let limit = input.limit.unwrap_or(20).clamp(1, 100) as usize;
                let query = input.query.unwrap_or_default();
                tokio::task::spawn_blocking(move || super::files::find(&cwd, &query, limit))
                    .await
                    .map_err(ToolError::internal)
            }
        },
    )?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool(
        ToolDef::new(
            "threads.list",
            "Every thread, newest first, with its title and the thread it was forked from.",
        )
        .sessions_fenced(),
        move |_: NoInput, cx| {
            let b = b.clone();
            let c = c.clone();
            async move {
                let scope = cx.scope(Reach::Threads).await?;
                let mut all = b.list().await?;
                all.retain(|t| scope.sees(&t.thread));
                let mut about = super::about::all(&c).await?;
                Ok::<_, ToolError>(
                    all.into_iter()
                        .map(|info| Listed {
                            about: about.remove(&info.thread).unwrap_or_default(),
                            info,
                        })
                        .collect::<Vec<_>>(),
                )
            }
        },
    )?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool(
        ToolDef::new(
            "threads.get",
            "One thread: its state, title, turns, cost and questions.",
        )
        .sessions_see_thread("thread"),
        move |input: ThreadInput, _| {
            let b = b.clone();
            let c = c.clone();
            async move {
                let info = b.info(&input.thread).await?.ok_or_else(|| {
                    ToolError::not_found(
                        "unknown_thread",
                        format!("there is no thread {:?}", input.thread),
                    )
                })?;
                let t = input.thread.clone();
                let mut suggestions = c
                    .store()
                    .read(move |conn| Ok(super::always::suggestions(conn, &t)?))
                    .await?;
                let asks = b
                    .asks(&input.thread, false)
                    .await?
                    .into_iter()
                    .map(|ask| {
                        let suggested = suggestions.remove(&ask.ask).unwrap_or(Value::Null);
                        Ask {
                            rule: super::always::of(&suggested),
                            destructive: super::caution::destructive(&ask.tool, &ask.input)
                                .map(String::from),
                            ask,
                        }
                    })
                    .collect();
                let queued = b.queued(&input.thread).await?;
                let about = super::about::of(&c, &input.thread).await?;
                Ok::<_, ToolError>(Detail {
                    info,
                    about,
                    asks,
                    queued,
                })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.mode",
            "Change a session's permission mode: default, acceptEdits or plan (never bypass).",
        )
        .finishes()
        .person_only(),
        move |input: ModeInput, cx| {
            let b = b.clone();
            async move {
                if let Caller::Session {
                    thread: Some(t), ..
                } = &cx.caller
                    && *t == input.thread
                {
                    return Err(ToolError::refused(
                        "own_thread",
                        "a session cannot change its own mode",
                    ));
                }
                b.set_mode(&input.thread, &input.mode).await?;
                Ok::<_, ToolError>(Done { ok: true })
            }
        },
    )?;
    let b = board.clone();
    ctx.tool(
        ToolDef::new(
            "threads.model",
            "Change a live session's model; leave it out for the session's default.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        move |input: ModelInput, _| {
            let b = b.clone();
            async move {
                b.set_model(&input.thread, input.model).await?;
                Ok::<_, ToolError>(Done { ok: true })
            }
        },
    )?;
    let b = board;
    ctx.tool(
        ToolDef::new(
            "threads.pids",
            "The pids, process groups and sessions of every live session.",
        ),
        move |_: NoInput, _| {
            let b = b.clone();
            async move {
                let processes = b.pids();
                Ok::<_, ToolError>(Pids {
                    pids: processes.iter().map(|p| p.pid).collect(),
                    pgids: processes.iter().map(|p| p.pgid).collect(),
                    sids: processes.iter().map(|p| p.sid).collect(),
                    processes,
                })
            }
        },
    )?;
    Ok(())
}

/// The HOME sessions run with (their `~/.claude`, and what a typed `~` means):
/// `sessions.home`, else vyred's, else with `sessions.uid` that user's home.
pub(crate) fn sessions_home(kernel: &crate::kernel::Kernel) -> Result<PathBuf, String> {
    let settings = &kernel.config().config.sessions;
    match (settings.home.clone().map(PathBuf::from), run_as(settings)?) {
        (Some(home), _) => Ok(home),
        (None, None) => Ok(kernel.user_home()),
        // Sessions of another user live in that user's home.
        (None, Some(r)) => nix::unistd::User::from_uid(r.uid.into())
            .ok()
            .flatten()
            .map(|u| u.dir)
            .ok_or_else(|| {
                format!(
                    "sessions.uid {} has no home in the user database: set sessions.home",
                    r.uid
                )
            }),
    }
}

/// `sessions.uid` and `sessions.gid`, which go together (ADR 0013).
fn run_as(settings: &crate::config::SessionsConfig) -> Result<Option<super::spawn::RunAs>, String> {
    match (settings.uid, settings.gid) {
        (None, None) => Ok(None),
        (Some(uid), Some(gid)) => Ok(Some(super::spawn::RunAs { uid, gid })),
        _ => Err("sessions.uid and sessions.gid go together: set both, or neither".into()),
    }
}
