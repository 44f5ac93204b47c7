//! `learn`: Vyre learns from how the person corrects it, and enforces what it learned in code
//! (spec 7.11). A lesson that only sits in memory is advice; a lesson here is checked by the
//! hooks, so a model cannot forget it.
//!
//! - Signals ([`signals`]): corrections in the person's prompts ("don't use em dashes", "never
//!   force push", `/vyre remember ...`), denied tool calls with a reason, Gate items edited or
//!   refused; each kept with its thread and turn. A correction becomes a lesson at once
//!   (`lesson.learned`), which the person sees and can edit, narrow or retire.
//! - Lessons ([`lessons`]): `{scope, rule, check?, level: remind|ask|block, source}`; a rule
//!   Vyre can check in code gets its check ([`rules`]).
//! - Enforcement ([`checks`], `learn.check`): before a tool runs (the driver's PreToolUse
//!   callback, or the harness plugin's for a terminal) a broken command lesson reminds, asks or
//!   denies with the lesson quoted; before a turn ends (the driver's Stop callback, or the
//!   plugin's) a broken output lesson refuses the end and tells Claude which lesson it broke, so
//!   it fixes the answer first. A lesson without a check joins the brief and every prompt.
//! - Escalation: each lesson counts how often it applied and was broken; broken again, it moves
//!   up a level (`lesson.broken`, `lesson.escalated`).

pub mod checks;
pub mod lessons;
pub mod rules;
pub mod signals;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{CallCx, Caller, ToolError};

use checks::{Broken, Turns};
use lessons::{Lesson, Level, Scope};
use rules::Check;

pub struct LearnModule;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LessonsInput {
    /// Retired lessons too.
    #[serde(default)]
    all: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddInput {
    /// The rule, in words: "don't use em dashes", "never run `terraform destroy`".
    #[schemars(length(min = 3, max = 500))]
    rule: String,
    #[serde(default)]
    level: Option<Level>,
    #[serde(default)]
    scope: Option<Scope>,
    /// The project or agent a narrowed lesson applies to.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    target: Option<String>,
    /// A check in code, instead of the one Vyre reads from the rule.
    #[serde(default)]
    check: Option<Check>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    lesson: i64,
    #[serde(default)]
    #[schemars(length(min = 3, max = 500))]
    rule: Option<String>,
    #[serde(default)]
    level: Option<Level>,
    #[serde(default)]
    scope: Option<Scope>,
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    target: Option<String>,
    /// Confirm a lesson learned from a terminal's words: it applies from now on.
    #[serde(default)]
    confirm: bool,
    /// A new check (`{"type": ...}`), or null to make it a reminder only.
    #[serde(default, deserialize_with = "present")]
    check: Option<Option<Check>>,
}

/// A field that is there (even as null) is `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Check>>, D::Error> {
    Option::<Check>::deserialize(d).map(Some)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventsInput {
    /// The thread whose lesson events are asked for.
    #[schemars(length(min = 1, max = 200))]
    thread: String,
    /// At most this many of each kind, the newest (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

/// A lesson event of a thread (the shape of `system.events`' events).
#[derive(Serialize, JsonSchema)]
pub struct LessonEvent {
    id: i64,
    at: i64,
    #[serde(rename = "type")]
    kind: String,
    thread: Option<String>,
    payload: Value,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LessonInput {
    lesson: i64,
}

/// Where in a session a check is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// A tool is about to run (`tool`, `input`).
    Tool,
    /// The turn is about to end with `text`.
    Stop,
    /// A prompt (`text`) is about to be sent: the reminders, and whether it teaches a lesson.
    Prompt,
    /// A session starts: the reminders for its brief.
    Brief,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckInput {
    stage: Stage,
    /// The session (its thread, or a terminal session's id).
    #[schemars(length(min = 1, max = 200))]
    session: String,
    #[serde(default)]
    #[schemars(length(max = 200))]
    tool: Option<String>,
    #[serde(default)]
    input: Option<Value>,
    /// The answer (stop) or the prompt (prompt).
    #[serde(default)]
    #[schemars(length(max = 2_000_000))]
    text: Option<String>,
    /// The session's project and agent, for lessons narrowed to one.
    #[serde(default)]
    #[schemars(length(max = 200))]
    project: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 200))]
    agent: Option<String>,
    /// A prompt: read it for a correction (a terminal's; Vyre's own threads are read from
    /// their events).
    #[serde(default)]
    learn: bool,
    /// A person is known to have typed it: what it teaches applies at once (else it waits for
    /// the person to confirm it).
    #[serde(default)]
    person: bool,
}

#[derive(Serialize, JsonSchema, Default)]
pub struct Checked {
    /// `allow`, `ask` or `deny` (a tool); `allow` or `block` (a stop).
    decision: String,
    /// What Claude (or the person asked) reads: the lessons broken, quoted.
    reason: Option<String>,
    /// Reminders to add to the brief, the prompt or a tool call.
    context: Option<String>,
    /// The lessons broken.
    broken: Vec<i64>,
}

fn event(kind: &str, thread: Option<&str>, payload: Value) -> NewEvent {
    let e = NewEvent::new(kind, payload);
    match thread {
        Some(t) => e.thread(t),
        None => e,
    }
}

/// The lessons that apply to a session of `project` / `agent`.
fn applies(l: &Lesson, project: Option<&str>, agent: Option<&str>) -> bool {
    match l.scope {
        Scope::All => true,
        Scope::Project => l.target.as_deref().is_some_and(|t| Some(t) == project),
        Scope::Agent => l.target.as_deref().is_some_and(|t| Some(t) == agent),
    }
}

fn quote(l: &Lesson) -> String {
    format!("\"{}\" (lesson {})", l.rule, l.lesson)
}

/// Count what the check found, escalate, and say so.
async fn counted(ctx: &Ctx, session: &str, found: &[Broken], applied: &[i64], known: &[Lesson]) {
    let (all, applied) = (found.to_vec(), applied.to_vec());
    let counted = ctx
        .store()
        .write(move |tx| {
            let mut out = Vec::new();
            for b in all.iter().filter(|b| b.first) {
                out.push((b.lesson, true, lessons::count(tx.conn(), b.lesson, true)?));
            }
            for id in applied
                .iter()
                .filter(|id| !all.iter().any(|b| b.lesson == **id))
            {
                out.push((*id, false, lessons::count(tx.conn(), *id, false)?));
            }
            Ok(out)
        })
        .await;
    let Ok(counted) = counted else {
        tracing::warn!(session, "a lesson's count was not recorded");
        return;
    };
    for (id, broken, (was, now)) in counted {
        if !broken {
            continue;
        }
        let what = found
            .iter()
            .find(|b| b.lesson == id)
            .map(|b| b.what.clone())
            .unwrap_or_default();
        let rule = known
            .iter()
            .find(|l| l.lesson == id)
            .map(|l| l.rule.clone())
            .unwrap_or_default();
        let thread = (!session.is_empty()).then_some(session);
        let e = event(
            "lesson.broken",
            thread,
            json!({ "lesson": id, "rule": rule, "what": what, "level": was }),
        );
        let _ = ctx.events().emit(e).await;
        if now != was {
            let e = event(
                "lesson.escalated",
                thread,
                json!({ "lesson": id, "rule": rule, "from": was, "to": now }),
            );
            let _ = ctx.events().emit(e).await;
        }
    }
}

async fn check(c: Ctx, turns: Arc<Turns>, input: CheckInput) -> Result<Checked, ToolError> {
    let all = c.store().read(|conn| lessons::list(conn, false)).await?;
    let mine: Vec<Lesson> = all
        .into_iter()
        .filter(|l| !l.pending && applies(l, input.project.as_deref(), input.agent.as_deref()))
        .collect();
    let session = input.session.as_str();
    match input.stage {
        Stage::Brief | Stage::Prompt => {
            if input.stage == Stage::Prompt
                && input.learn
                && let Some(text) = &input.text
            {
                signals::from_prompt(&c, Some(session), None, text, !input.person).await;
            }
            let lines: Vec<String> = mine
                .iter()
                .filter(|l| l.check.is_none())
                .take(20)
                .map(|l| format!("- {}", l.rule))
                .collect();
            Ok(Checked {
                decision: "allow".into(),
                context: (!lines.is_empty()).then(|| {
                    format!(
                        "Lessons the person taught Vyre (their rules; follow them):\n{}",
                        lines.join("\n")
                    )
                }),
                ..Checked::default()
            })
        }
        Stage::Tool => {
            let tool = input.tool.as_deref().unwrap_or_default();
            let value = input.input.clone().unwrap_or(Value::Null);
            let with: Vec<checks::Lesson<'_>> = mine
                .iter()
                .filter_map(|l| {
                    l.check
                        .as_ref()
                        .filter(|k| matches!(k, Check::Command { .. } | Check::Requires { .. }))
                        .map(|check| checks::Lesson {
                            id: l.lesson,
                            check,
                        })
                })
                .collect();
            let found = turns.tool(session, tool, &value, &with);
            if found.is_empty() {
                return Ok(Checked {
                    decision: "allow".into(),
                    ..Checked::default()
                });
            }
            counted(&c, session, &found, &[], &mine).await;
            let broken: Vec<&Lesson> = found
                .iter()
                .filter_map(|b| mine.iter().find(|l| l.lesson == b.lesson))
                .collect();
            let level = broken
                .iter()
                .map(|l| l.level)
                .max()
                .unwrap_or(Level::Remind);
            let why: Vec<String> = found
                .iter()
                .zip(&broken)
                .map(|(b, l)| format!("{}: {}", quote(l), b.what))
                .collect();
            let said = format!(
                "This breaks what the person taught Vyre: {}.",
                why.join("; ")
            );
            Ok(match level {
                Level::Remind => Checked {
                    decision: "allow".into(),
                    context: Some(format!("{said} Keep to it from now on.")),
                    broken: found.iter().map(|b| b.lesson).collect(),
                    ..Checked::default()
                },
                Level::Ask => Checked {
                    decision: "ask".into(),
                    reason: Some(said),
                    broken: found.iter().map(|b| b.lesson).collect(),
                    ..Checked::default()
                },
                Level::Block => Checked {
                    decision: "deny".into(),
                    reason: Some(format!("{said} Do it another way.")),
                    broken: found.iter().map(|b| b.lesson).collect(),
                    ..Checked::default()
                },
            })
        }
        Stage::Stop => {
            let text = input.text.as_deref().unwrap_or_default();
            let with: Vec<checks::Lesson<'_>> = mine
                .iter()
                .filter_map(|l| {
                    l.check
                        .as_ref()
                        .filter(|k| matches!(k, Check::Banned { .. } | Check::Touches { .. }))
                        .map(|check| checks::Lesson {
                            id: l.lesson,
                            check,
                        })
                })
                .collect();
            let ids: Vec<i64> = with.iter().map(|l| l.id).collect();
            let (found, refused) = turns.stop(session, text, &with);
            // Applied once a turn, at its first end; broken once a turn.
            let applied = if refused == 0 { ids } else { vec![] };
            counted(&c, session, &found, &applied, &mine).await;
            let broken: Vec<&Lesson> = found
                .iter()
                .filter_map(|b| mine.iter().find(|l| l.lesson == b.lesson))
                .collect();
            let most = broken.iter().map(|l| l.level.refusals()).max().unwrap_or(0);
            if found.is_empty() || refused >= most {
                turns.ended(session);
                return Ok(Checked {
                    decision: "allow".into(),
                    ..Checked::default()
                });
            }
            turns.refused(session);
            let why: Vec<String> = found
                .iter()
                .zip(&broken)
                .map(|(b, l)| format!("{}: {}", quote(l), b.what))
                .collect();
            Ok(Checked {
                decision: "block".into(),
                reason: Some(format!(
                    "Before you finish: your answer breaks what the person taught Vyre. {}. Write the answer again so that it keeps to it, and say nothing about this check.",
                    why.join("; ")
                )),
                broken: found.iter().map(|b| b.lesson).collect(),
                ..Checked::default()
            })
        }
    }
}

async fn learned(c: &Ctx, id: i64) -> Result<Lesson, ToolError> {
    c.store()
        .read(move |conn| lessons::get(conn, id))
        .await?
        .ok_or_else(|| ToolError::not_found("unknown_lesson", format!("no lesson {id}")))
}

fn modules_only(cx: &CallCx) -> Result<(), ToolError> {
    match cx.caller {
        Caller::Module { .. } => Ok(()),
        _ => Err(ToolError::refused(
            "for_modules",
            "learn.check is called by Vyre's hooks (it counts what it finds)",
        )),
    }
}

impl Module for LearnModule {
    fn name(&self) -> &str {
        "learn"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(lessons::MIGRATIONS).await?;
            signals::follow(&ctx);
            let turns = Arc::new(Turns::default());
            ctx.tool_with(
                ToolDef::new("learn.lessons", "The lessons Vyre learned from the person, with how often each applied and was broken."),
                &ctx,
                |c, input: LessonsInput, _| async move {
                    Ok::<_, ToolError>(c.store().read(move |conn| lessons::list(conn, input.all)).await?)
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "learn.add",
                    "Teach Vyre a rule (a person only); Vyre checks it in code when it can.",
                )
                .person_only(),
                &ctx,
                |c, input: AddInput, _| async move {
                    let parsed = rules::parse(&input.rule);
                    let check = input.check.or(parsed.check);
                    let source = json!({ "kind": "person", "text": input.rule });
                    let id = signals::teach(
                        &c,
                        &parsed.rule,
                        check.as_ref(),
                        input.level.unwrap_or(Level::Remind),
                        input.scope.unwrap_or(Scope::All),
                        input.target.as_deref(),
                        &source,
                        None,
                        false,
                    )
                    .await?;
                    learned(&c, id).await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "learn.edit",
                    "Change a lesson's rule, level, scope or check (a person only).",
                )
                .person_only(),
                &ctx,
                |c, input: EditInput, _| async move {
                    learned(&c, input.lesson).await?;
                    if input.scope.is_some_and(|s| s != Scope::All) && input.target.is_none() {
                        return Err(ToolError::invalid(
                            "a lesson narrowed to a project or agent names it in `target`",
                        ));
                    }
                    let id = input.lesson;
                    let rule = input.rule.clone();
                    let scope = input.scope.map(|s| (s, input.target.clone()));
                    let check = input.check.clone();
                    c.store()
                        .write(move |tx| {
                            lessons::edit(
                                tx.conn(),
                                id,
                                rule.as_deref(),
                                input.level,
                                scope.as_ref().map(|(s, t)| (*s, t.as_deref())),
                                check.as_ref().map(|c| c.as_ref()),
                                input.confirm,
                            )?;
                            tx.emit(NewEvent::new(
                                "lesson.changed",
                                json!({ "lesson": id, "change": "edited" }),
                            ))?;
                            Ok(())
                        })
                        .await?;
                    learned(&c, id).await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "learn.retire",
                    "Retire a lesson: it is no longer checked or said (a person only).",
                )
                .person_only(),
                &ctx,
                |c, input: LessonInput, _| async move {
                    let id = input.lesson;
                    learned(&c, id).await?;
                    c.store()
                        .write(move |tx| {
                            if lessons::retire(tx.conn(), id)? {
                                tx.emit(NewEvent::new(
                                    "lesson.changed",
                                    json!({ "lesson": id, "change": "retired" }),
                                ))?;
                            }
                            Ok(())
                        })
                        .await?;
                    learned(&c, id).await
                },
            )?;
            signals::register(&ctx)?;
            ctx.tool_with(
                ToolDef::new(
                    "learn.events",
                    "A thread's lesson events so far (learned there, broken there, escalated), oldest first: for a chat opened later.",
                ),
                &ctx,
                |c, input: EventsInput, _| async move {
                    let limit = input.limit.unwrap_or(200).clamp(1, 1000) as usize;
                    let mut out = Vec::new();
                    for kind in ["lesson.learned", "lesson.broken", "lesson.escalated"] {
                        for e in c.events().of_thread(&input.thread, kind, limit).await? {
                            out.push(LessonEvent {
                                id: e.id,
                                at: e.at,
                                payload: e.payload_value(),
                                kind: e.kind.clone(),
                                thread: e.thread.clone(),
                            });
                        }
                    }
                    out.sort_by_key(|e| e.id);
                    Ok::<_, ToolError>(out)
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "learn.check",
                    "Run the lessons at one stage of a session (what Vyre's hooks call).",
                ),
                &ctx,
                move |c, input: CheckInput, cx| {
                    let turns = turns.clone();
                    async move {
                        modules_only(&cx)?;
                        check(c, turns, input).await
                    }
                },
            )?;
            Ok(())
        })
    }
}
