//! `threads.*`: the Switchboard's tools.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::io::*;
use super::session_thread;
use crate::kernel::module::{Ctx, ToolDef};
use crate::kernel::tools::fence::{not_your_project, not_your_thread};
use crate::kernel::tools::{Caller, Reach, ToolError};
use crate::modules::sessions::switchboard::{Message, PermissionMode, StartRequest, Switchboard};

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

pub(super) fn register(
    ctx: &Ctx,
    board: Arc<Switchboard>,
    home: Arc<PathBuf>,
) -> Result<(), crate::kernel::module::StartError> {
    crate::modules::sessions::timeline::tools::register(ctx, board.clone())?;
    crate::modules::sessions::changes::register(ctx)?;
    crate::modules::sessions::worktree::register(ctx, board.clone())?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool_with(
        ToolDef::new(
            "threads.start",
            "Start a Claude Code session in a folder, optionally with a first message.",
        )
        .finishes()
        .sessions_fenced(),
        &(b, c, home),
        |(b, c, home), input: StartInput, cx| async move {
            // `~` is the sessions' HOME; a folder that is not there is said as typed.
            let cwd = crate::kernel::folders::check(&input.cwd, &home)?;
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
            if !crate::modules::sessions::models::PURPOSES.contains(&purpose.as_str()) {
                return Err(ToolError::invalid(format!(
                    "purpose must be one of {}",
                    crate::modules::sessions::models::PURPOSES.join(", ")
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
            // The purpose's choice: its model, and the provider a start naming none runs on.
            let choices = c.call("sessions.models.get", serde_json::json!({})).await?;
            let choice: Option<crate::modules::sessions::models::Choice> =
                serde_json::from_value(choices[&purpose].clone()).ok();
            let (provider, purpose_model) = crate::modules::sessions::models::of_purpose(
                choice.as_ref(),
                &purpose,
                input.provider,
            );
            // An agent's and a project's models are Claude's: another provider names its own,
            // and gets only a model the person asked for or the purpose chose for it.
            let claude = b.runs_claude(&provider)?;
            let effort = b.check_effort(&provider, input.effort)?;
            let (agent_model, project_model) = match claude {
                true => (agent_model, project_model),
                false => (None, None),
            };
            let model = input
                .model
                .or(agent_model)
                .or(project_model)
                .or(purpose_model);
            let made = match &input.worktree {
                Some(wish) => {
                    crate::modules::sessions::worktree::make(&c, &cwd, wish, input.text.as_deref())
                        .await?
                }
                None => None,
            };
            let request = StartRequest {
                cwd: made.as_ref().map_or(cwd, |m| m.cwd.clone()),
                model,
                effort,
                purpose,
                project: input.project,
                provider,
                agent: input.agent,
                mode: PermissionMode::Default,
            };
            let internal = internal_by(&cx.caller, input.internal)?;
            let thread = match (b.start(request, started_by).await, made) {
                (Ok(thread), Some(made)) => {
                    crate::modules::sessions::worktree::record(&c, &thread, &made).await?;
                    thread
                }
                (Ok(thread), None) => thread,
                (Err(e), made) => {
                    if let Some(made) = made {
                        crate::modules::sessions::worktree::unmake(made).await;
                    }
                    return Err(e.into());
                }
            };
            if let Some(text) = input.text {
                let message = Message {
                    internal,
                    person: cx.caller.is_person(),
                    ..Message::words(text)
                };
                b.send(&thread, message).await?;
            }
            Ok::<_, ToolError>(Started { thread })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.send",
            "Send words to a thread: a new turn when it is idle; while a turn runs, joining it at its next step (steer, the default) or waiting for its end (queue).",
        ).finishes().sessions_own_thread("thread"),
        &board,
        |b, input: SendInput, cx| async move {
                let internal = internal_by(&cx.caller, input.internal)?;
                let images = input.images.iter().map(Image::block).collect::<Result<Vec<_>, _>>()?;
                let message = Message {
                    text: input.text,
                    uuid: input.uuid,
                    mode: input.mode.unwrap_or_default(),
                    images,
                    internal,
                    person: cx.caller.is_person(),
                };
                Ok(b.send(&input.thread, message).await?)
            },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.warm",
            "Start a closed thread's session before its next message (resuming its transcript), so the message finds it running: for when a person starts writing in a closed thread.",
        ).finishes(),
        &board,
        |b, input: ThreadInput, _| async move {
            let resumed = b.warm(&input.thread).await?;
            Ok::<_, ToolError>(Warmed { thread: input.thread, resumed })
        },
    )?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool_with(
        ToolDef::new(
            "threads.fork",
            "A new thread that continues from this one's history (up to a message, when given).",
        )
        .finishes()
        .sessions_own_thread("thread"),
        &(b, c),
        |(b, c), input: ForkInput, cx| async move {
            let thread = b
                .fork(
                    &input.thread,
                    input.uuid.clone(),
                    session_thread(&cx.caller),
                )
                .await?;
            // Its parent, and its parent's title to start with, for every surface.
            if let Err(e) =
                crate::modules::sessions::about::forked(&c, &thread, &input.thread, input.uuid)
                    .await
            {
                tracing::warn!(thread, error = %e, "the fork's parent was not recorded");
            }
            Ok::<_, ToolError>(Started { thread })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.rewind",
            "Continue a thread from an earlier message: what came after it is dropped.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        &(board.clone(), ctx.clone()),
        |(b, c), input: RewindInput, cx| async move {
            if input.files {
                // Files are the person's: the model never puts them back (as `threads.revert`).
                if !cx.caller.is_person() {
                    return Err(ToolError::refused(
                        "person_only",
                        "only a person rewinds a thread's files",
                    ));
                }
                use crate::modules::sessions::changes::rewind;
                let turn = rewind::turn_of(&c, &input.thread, &input.uuid).await?;
                // A refusal leaves the session as it was; then nothing may write the folder
                // while it is put back (the check is made again there).
                let by = cx.caller.label();
                rewind::put_back_since(&c, &input.thread, &turn, by.clone(), true).await?;
                b.stop(&input.thread, "rewind").await?;
                rewind::put_back_since(&c, &input.thread, &turn, by, false).await?;
            }
            b.rewind(&input.thread, &input.uuid).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.unqueue",
            "Take a queued message back before it is handed over.",
        )
        .finishes()
        .sessions_own_queued("queued"),
        &board,
        |b, input: QueuedInput, _| async move {
            b.unqueue(input.queued).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new("threads.edit", "Change the words of a queued message.")
            .finishes()
            .sessions_own_queued("queued"),
        &board,
        |b, input: EditInput, _| async move {
            b.edit(input.queued, &input.text).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.take_held",
            "Take the messages held for a session a terminal is writing, oldest first: the terminal's Stop hook delivers them.",
        ).finishes().sessions_own_thread("thread").plumbing(),
        &board,
        |b, input: ThreadInput, _| async move { Ok::<_, ToolError>(b.take_held(&input.thread).await?) },
    )?;
    ctx.tool_with(
        ToolDef::new("threads.send_now", "Send a queued message at once: the running turn stops at its next step and this one runs.").finishes().sessions_own_queued("queued"),
        &board,
        |b, input: QueuedInput, _| async move { Ok::<_, ToolError>(b.send_now(input.queued).await?) },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.answer",
            "Answer a session's question: allow, deny, or always (a rule for next time).",
        )
        .finishes()
        .person_only(),
        &board,
        |b, input: AnswerInput, cx| async move {
            Ok::<_, ToolError>(
                b.answer(
                    &input.ask,
                    input.decision,
                    input.answers,
                    input.message,
                    input.via.map(|v| v.as_str()),
                    &cx.caller,
                )
                .await?,
            )
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.release",
            "Answer a call the Gate held for the person: let it go (with an edited field) or refuse it (Vyre's gate module only).",
        )
        .finishes(),
        &board,
        |b, input: ReleaseInput, cx| async move {
            if !matches!(cx.caller, Caller::Module { ref name } if name == "gate") {
                return Err(ToolError::refused(
                    "for_the_gate",
                    "threads.release is the Gate's: a person decides with gate.approve or gate.reject",
                ));
            }
            let release = crate::modules::sessions::switchboard::Release {
                call: input.call,
                allow: input.allow,
                field: input.field,
                text: input.text,
                message: input.message,
            };
            b.release(&input.thread, release).await?;
            Ok::<_, ToolError>(serde_json::json!({ "released": true }))
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.interrupt",
            "Stop the running turn at once; the session stays.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        &board,
        |b, input: ThreadInput, _| async move {
            b.interrupt(&input.thread).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.stop",
            "End a thread's session and everything it started.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        &board,
        |b, input: ThreadInput, _| async move {
            let stopped = b.stop(&input.thread, "stopped").await?;
            Ok::<_, ToolError>(Done { ok: stopped })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.commands",
            "The thread's slash commands (name, description, argument hint), as its session said at its start: a surface's slash menu.",
        ).sessions_see_thread("thread").plumbing(),
        &board,
        |b, input: ThreadInput, _| async move { Ok::<_, ToolError>(b.commands(&input.thread).await?) },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.files",
            "Files in the thread's folder whose path holds the query (best first): a surface's @file picker.",
        ).sessions_see_thread("thread").plumbing(),
        &board,
        |b, input: FilesInput, _| async move {
                let cwd = b.cwd(&input.thread).await?;
                let limit = input.limit.unwrap_or(20).clamp(1, 100) as usize;
                let query = input.query.unwrap_or_default();
                tokio::task::spawn_blocking(move || crate::modules::sessions::files::find(&cwd, &query, limit))
                    .await
                    .map_err(ToolError::internal)
            },
    )?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool_with(
        ToolDef::new(
            "threads.list",
            "Every thread (or those that belong to a project: started in it, run in its folders, or named), newest first, with its title and the thread it was forked from.",
        )
        .sessions_fenced(),
        &(b, c),
        |(b, c), input: ListInput, cx| async move {
            let scope = cx.scope(Reach::Threads).await?;
            let mut all = match input.filters() {
                true => {
                    b.list_belonging(
                        input.project,
                        input.folders.unwrap_or_default(),
                        input.threads.unwrap_or_default(),
                    )
                    .await?
                }
                false => b.list().await?,
            };
            all.retain(|t| scope.sees(&t.thread));
            let mut about = match all.len() {
                // A project's few: their rows only.
                n if n < 500 => {
                    let ids = all.iter().map(|t| t.thread.clone()).collect();
                    crate::modules::sessions::about::some(&c, ids).await?
                }
                _ => crate::modules::sessions::about::all(&c).await?,
            };
            let mut branches = crate::modules::sessions::worktree::branches(&c).await?;
            Ok::<_, ToolError>(
                all.into_iter()
                    .map(|info| Listed {
                        about: about.remove(&info.thread).unwrap_or_default(),
                        branch: branches.remove(&info.thread),
                        info,
                    })
                    .collect::<Vec<_>>(),
            )
        },
    )?;
    let b = board.clone();
    let c = ctx.clone();
    ctx.tool_with(
        ToolDef::new(
            "threads.get",
            "One thread: its state, title, turns, cost and questions.",
        )
        .sessions_see_thread("thread"),
        &(b, c),
        |(b, c), input: ThreadInput, _| async move {
            let info = b.info(&input.thread).await?.ok_or_else(|| {
                ToolError::not_found(
                    "unknown_thread",
                    format!("there is no thread {:?}", input.thread),
                )
            })?;
            let t = input.thread.clone();
            let mut suggestions = c
                .store()
                .read(move |conn| Ok(crate::modules::sessions::always::suggestions(conn, &t)?))
                .await?;
            let asks = b
                .asks(&input.thread, false)
                .await?
                .into_iter()
                .map(|ask| {
                    let suggested = suggestions.remove(&ask.ask).unwrap_or(Value::Null);
                    Ask {
                        rule: crate::modules::sessions::always::of(&suggested),
                        destructive: crate::modules::sessions::caution::destructive(
                            &ask.tool, &ask.input,
                        )
                        .map(String::from),
                        ask,
                    }
                })
                .collect();
            let queued = b.queued(&input.thread).await?;
            let about = crate::modules::sessions::about::of(&c, &input.thread).await?;
            let worktree = crate::modules::sessions::worktree::of(&c, &input.thread).await?;
            Ok::<_, ToolError>(Detail {
                info,
                about,
                asks,
                queued,
                worktree,
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.mode",
            "Change a session's permission mode: default, acceptEdits or plan (never bypass).",
        )
        .finishes()
        .person_only(),
        &board,
        |b, input: ModeInput, cx| async move {
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
            let mode: PermissionMode = input.mode.parse().map_err(ToolError::invalid)?;
            b.set_mode(&input.thread, mode).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.model",
            "Change a live session's model; leave it out for the session's default.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        &board,
        |b, input: ModelInput, _| async move {
            b.set_model(&input.thread, input.model).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.effort",
            "Change how hard a live session's model thinks, from its next turn: one of its provider's efforts (sessions.providers); leave it out for the provider's default.",
        )
        .finishes()
        .sessions_own_thread("thread"),
        &board,
        |b, input: EffortInput, _| async move {
            let provider = b
                .info(&input.thread)
                .await?
                .ok_or_else(|| {
                    ToolError::not_found(
                        "unknown_thread",
                        format!("there is no thread {:?}", input.thread),
                    )
                })?
                .provider;
            let effort = b.check_effort(&provider, input.effort)?;
            b.set_effort(&input.thread, effort).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.spares",
            "The warm spare sessions held for the next start: where, with what, and the memory each holds.",
        ),
        &board,
        |b, _: crate::kernel::tools::NoInput, _| async move {
            Ok::<_, ToolError>(b.spares_held())
        },
    )?;
    let b = board;
    ctx.tool_with(
        ToolDef::new(
            "threads.pids",
            "The pids, process groups and sessions of every live session.",
        ),
        &b,
        |b, _: crate::kernel::tools::NoInput, _| async move {
            let processes = b.pids();
            Ok::<_, ToolError>(Pids {
                pids: processes.iter().map(|p| p.pid).collect(),
                pgids: processes.iter().map(|p| p.pgid).collect(),
                sids: processes.iter().map(|p| p.sid).collect(),
                processes,
            })
        },
    )?;
    Ok(())
}
