//! `planner`: reminders, alarms, timers, todos and notes (spec 3; issue 23), on the kernel's one
//! timer ([`crate::kernel::deadlines`]): each item that falls due at a time has a deadline, so
//! nothing polls, a restart keeps them, and one missed while vyred was down is told once at the
//! start, saying how late.
//!
//! - `planner.add {text, kind?, at?, project?, zone?}`: `at` in a person's words (`in 20m`,
//!   `tomorrow 9am`, see [`when`]), or `when I next open Vyre`; a reminder, an alarm or a
//!   timer needs one.
//! - `planner.opened {}`: the person opened Vyre (the app says so as it starts): what waited
//!   for that falls due.
//! - `planner.list {kind?, project?, done?, limit?}`, `planner.done {item, on?}`,
//!   `planner.snooze {item, for?}`, `planner.remove {item}`.
//! - `planner.export {project?, done?}` and `planner.import {ics, project?, zone?}`: iCalendar
//!   files out and in ([`calendar`], [`ics`]).
//! - Events: `planner.due` when an item falls due, `planner.done`, and `planner.changed` for
//!   the lists that show them.
//!
//! The person sets and sees everything. A session sets and sees items only in the projects it
//! may see, naming one; the person's own items (no project) are not shown to it. The assistant,
//! which sees every project, may do all of it.

pub mod calendar;
pub mod ics;
pub mod items;
pub mod notice;
pub mod when;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::kernel::deadlines::Due;
use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{CallCx, Reach, ToolError};

use items::{Item, Kind};

pub struct PlannerModule;

/// Snoozed without saying for how long: this long.
const SNOOZE: &str = "10m";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddInput {
    /// What it is: "check the deploy".
    #[schemars(length(min = 1, max = 2000))]
    text: String,
    /// What kind of item (default: a reminder when `at` is given, else a todo).
    #[serde(default)]
    kind: Option<Kind>,
    /// When it falls due, in words: "in 20m", "at 15:00", "tomorrow 9am", "2026-12-24 18:00",
    /// an RFC 3339 instant, or "when I next open Vyre".
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    at: Option<String>,
    /// The project it belongs to (a session must name one of its own).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    project: Option<String>,
    /// The time zone clock times are in (an IANA name such as "Europe/Paris"; default this
    /// machine's).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    zone: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// Only this kind.
    #[serde(default)]
    kind: Option<Kind>,
    /// Only this project's.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    project: Option<String>,
    /// Done items too.
    #[serde(default)]
    done: bool,
    /// At most this many (1 to 500, default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneInput {
    /// The item's id, from `planner.list`.
    #[schemars(range(min = 1))]
    item: i64,
    /// `false` makes it not done again (default `true`).
    #[serde(default)]
    on: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnoozeInput {
    /// The item's id, from `planner.list`.
    #[schemars(range(min = 1))]
    item: i64,
    /// For how long, or until when, in words ("10m", "in 1 hour", "tomorrow"; default 10m).
    #[serde(default, rename = "for")]
    #[schemars(length(min = 1, max = 200))]
    for_: Option<String>,
    /// The time zone clock times are in (default this machine's).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    zone: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemInput {
    /// The item's id, from `planner.list`.
    #[schemars(range(min = 1))]
    item: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenedInput {}

#[derive(Clone)]
struct Planner {
    ctx: Ctx,
}

/// The deadline of item `id`.
fn key(id: i64) -> String {
    format!("item:{id}")
}

fn invalid(why: String) -> ToolError {
    ToolError::invalid(why)
}

fn unknown(id: i64) -> ToolError {
    ToolError::not_found(
        "unknown_item",
        format!("there is no planner item {id} here (planner.list lists them)"),
    )
}

/// The instant `phrase` names now, in `zone`.
fn instant(phrase: &str, zone: Option<&str>) -> Result<i64, ToolError> {
    let zone = when::zone(zone).map_err(invalid)?;
    let at = when::parse(phrase, jiff::Timestamp::now(), &zone).map_err(invalid)?;
    Ok(at.as_millisecond())
}

impl Planner {
    /// Whether `cx` may see and change `item`: a person and the assistant every one, a session
    /// only those of the projects it sees.
    async fn may(&self, cx: &CallCx, project: Option<&str>) -> Result<bool, ToolError> {
        let scope = cx.scope(Reach::Projects).await?;
        Ok(scope.is_everything()
            || scope.sees_every_project()
            || project.is_some_and(|p| scope.sees_project(p)))
    }

    /// Items go to `project`, which must be here and one the caller sees; a session must name
    /// one.
    async fn check_project(&self, project: Option<&str>, cx: &CallCx) -> Result<(), ToolError> {
        if let Some(project) = project {
            self.ctx
                .call_as(&cx.caller, "projects.get", json!({ "project": project }))
                .await?;
        } else if !self.may(cx, None).await? {
            return Err(ToolError::refused(
                "name_a_project",
                "a session sets planner items only in a project it works in: name it in project",
            ));
        }
        Ok(())
    }

    async fn item(&self, id: i64, cx: &CallCx) -> Result<Item, ToolError> {
        let item = self
            .ctx
            .store()
            .read(move |c| items::get(c, id))
            .await?
            .ok_or_else(|| unknown(id))?;
        // A session that may not see it is told it is not there, as for a thread.
        if !self.may(cx, item.project.as_deref()).await? {
            return Err(unknown(id));
        }
        Ok(item)
    }

    async fn add(&self, input: AddInput, cx: CallCx) -> Result<Item, ToolError> {
        let kind = input.kind.unwrap_or(if input.at.is_some() {
            Kind::Reminder
        } else {
            Kind::Todo
        });
        let text = input.text.trim().to_string();
        if text.is_empty() {
            return Err(invalid("say what it is: text is empty".into()));
        }
        let on_open = input.at.as_deref().is_some_and(when::on_open);
        let due_at = match (&input.at, kind) {
            (Some(_), Kind::Note) => {
                return Err(invalid("a note has no time: leave out at".into()));
            }
            (Some(_), _) if on_open => None,
            (Some(at), _) => Some(instant(at, input.zone.as_deref())?),
            (None, k) if k.needs_time() => {
                return Err(invalid(format!(
                    "a {} needs a time: at, e.g. \"in 20m\" or \"tomorrow 9am\"",
                    k.as_str()
                )));
            }
            (None, _) => None,
        };
        self.check_project(input.project.as_deref(), &cx).await?;
        let created_by = created_by(&cx);
        let new = items::New {
            kind,
            text,
            project: input.project,
            due_at,
            on_open,
            created_by,
            uid: None,
        };
        let now = crate::now_ms();
        let item = self
            .ctx
            .store()
            .write(move |tx| {
                let item = items::add(tx.conn(), &new, now)?;
                tx.emit(changed(&item, "added"))?;
                Ok(item)
            })
            .await?;
        if let Some(at) = item.due_at {
            self.ctx.deadlines().set(&key(item.id), at).await?;
        }
        Ok(item)
    }

    async fn list(&self, input: ListInput, cx: CallCx) -> Result<Vec<Item>, ToolError> {
        let scope = cx.scope(Reach::Projects).await?;
        let everything = scope.is_everything() || scope.sees_every_project();
        if let Some(p) = &input.project
            && !everything
            && !scope.sees_project(p)
        {
            return Err(crate::kernel::tools::fence::not_your_project(p));
        }
        let f = items::Filter {
            kind: input.kind,
            project: input.project,
            done: input.done,
            limit: input.limit.unwrap_or(100) as usize,
        };
        let all = self.ctx.store().read(move |c| items::list(c, &f)).await?;
        Ok(all
            .into_iter()
            .filter(|i| everything || i.project.as_deref().is_some_and(|p| scope.sees_project(p)))
            .collect())
    }

    async fn done(&self, input: DoneInput, cx: CallCx) -> Result<Item, ToolError> {
        let item = self.item(input.item, &cx).await?;
        let on = input.on.unwrap_or(true);
        let (id, was_due) = (item.id, item.fell_due_at.is_some());
        let at = on.then(crate::now_ms);
        let item = self
            .ctx
            .store()
            .write(move |tx| {
                items::set_done(tx.conn(), id, at)?;
                let item = items::get(tx.conn(), id)?.ok_or_else(|| {
                    crate::kernel::store::StoreError::Task("an item just marked".into())
                })?;
                if on {
                    tx.emit(event("planner.done", &item, json!({})))?;
                }
                tx.emit(changed(&item, if on { "done" } else { "reopened" }))?;
                Ok(item)
            })
            .await?;
        match (on, item.due_at) {
            (true, _) => {
                if was_due {
                    self.ctx.notify_devices(notice::withdraw(id));
                }
                self.ctx.deadlines().clear(&key(id)).await?;
            }
            (false, Some(at)) if item.fell_due_at.is_none() => {
                self.ctx.deadlines().set(&key(id), at).await?;
            }
            _ => {}
        }
        Ok(item)
    }

    async fn snooze(&self, input: SnoozeInput, cx: CallCx) -> Result<Item, ToolError> {
        let item = self.item(input.item, &cx).await?;
        if item.done_at.is_some() {
            return Err(ToolError::conflict(
                "done",
                format!(
                    "item {} is done; planner.done with on: false opens it again",
                    item.id
                ),
            ));
        }
        let phrase = input.for_.as_deref().unwrap_or(SNOOZE);
        let at = instant(phrase, input.zone.as_deref())?;
        let (id, was_due) = (item.id, item.fell_due_at.is_some());
        let item = self
            .ctx
            .store()
            .write(move |tx| {
                items::set_due(tx.conn(), id, at)?;
                let item = items::get(tx.conn(), id)?.ok_or_else(|| {
                    crate::kernel::store::StoreError::Task("an item just snoozed".into())
                })?;
                tx.emit(changed(&item, "snoozed"))?;
                Ok(item)
            })
            .await?;
        if was_due {
            self.ctx.notify_devices(notice::withdraw(id));
        }
        self.ctx.deadlines().set(&key(id), at).await?;
        Ok(item)
    }

    async fn remove(&self, input: ItemInput, cx: CallCx) -> Result<Item, ToolError> {
        let item = self.item(input.item, &cx).await?;
        let gone = item.clone();
        self.ctx
            .store()
            .write(move |tx| {
                items::remove(tx.conn(), gone.id)?;
                tx.emit(changed(&gone, "removed"))?;
                Ok(())
            })
            .await?;
        if item.fell_due_at.is_some() {
            self.ctx.notify_devices(notice::withdraw(item.id));
        }
        self.ctx.deadlines().clear(&key(item.id)).await?;
        Ok(item)
    }

    /// The person opened Vyre: what waited for that falls due now, each told once.
    async fn opened(&self) -> Result<Vec<Item>, ToolError> {
        let now = crate::now_ms();
        Ok(self
            .ctx
            .store()
            .write(move |tx| {
                let fell = items::opened(tx.conn(), now)?;
                for item in &fell {
                    tx.emit(event(
                        "planner.due",
                        item,
                        json!({ "due_at": now, "late_ms": 0, "on_open": true }),
                    ))?;
                }
                Ok(fell)
            })
            .await?)
    }

    /// An item's deadline: it falls due, once.
    async fn due(&self, due: Due) -> bool {
        let Some(id) = due
            .key
            .strip_prefix("item:")
            .and_then(|i| i.parse::<i64>().ok())
        else {
            // Not one of ours to tell: dropped.
            return true;
        };
        let told = self
            .ctx
            .store()
            .write(move |tx| {
                if !items::fell_due(tx.conn(), id, due.due_at)? {
                    // Done, removed, moved, or told already.
                    return Ok(None);
                }
                let item = items::get(tx.conn(), id)?;
                if let Some(item) = &item {
                    tx.emit(event(
                        "planner.due",
                        item,
                        json!({ "due_at": due.due_at, "late_ms": due.late_ms }),
                    ))?;
                }
                Ok(item)
            })
            .await;
        match told {
            Ok(item) => {
                if let Some(item) = item {
                    self.ctx.notify_devices(notice::notice(&item, due.late_ms));
                }
                true
            }
            Err(e) => {
                // The store is failing: kept, and told at the next start.
                tracing::warn!(error = %e, item = id, "a planner item fell due and could not be told");
                false
            }
        }
    }
}

/// Who sets an item: the session's thread, or the person.
fn created_by(cx: &CallCx) -> String {
    match &cx.caller {
        crate::kernel::tools::Caller::Session {
            thread: Some(t), ..
        } => t.clone(),
        _ => "person".to_string(),
    }
}

/// An event about `item`, with its project and the thread that set it.
fn event(kind: &str, item: &Item, extra: serde_json::Value) -> NewEvent {
    let mut payload = json!({
        "item": item.id,
        "kind": item.kind,
        "text": item.text,
        "project": item.project,
    });
    if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let mut ev = NewEvent::new(kind, payload);
    if let Some(p) = &item.project {
        ev = ev.project(p.clone());
    }
    if item.created_by != "person" {
        ev = ev.thread(item.created_by.clone());
    }
    ev
}

fn changed(item: &Item, change: &str) -> NewEvent {
    event("planner.changed", item, json!({ "change": change }))
}

impl Module for PlannerModule {
    fn name(&self) -> &str {
        "planner"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(items::MIGRATIONS).await?;
            let p = Planner { ctx: ctx.clone() };
            ctx.tool_with(
                ToolDef::new(
                    "planner.add",
                    "Set a reminder, an alarm, a timer, a todo or a note; at says when in words (\"in 20m\", \"tomorrow 9am\").",
                )
                .sessions_fenced(),
                &p,
                |p, input: AddInput, cx| async move { p.add(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "planner.list",
                    "Reminders, alarms, timers, todos and notes: open ones by when they fall due, then done ones.",
                )
                .sessions_fenced(),
                &p,
                |p, input: ListInput, cx| async move { p.list(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "planner.done",
                    "Mark an item done (on: false opens it again).",
                )
                .sessions_fenced(),
                &p,
                |p, input: DoneInput, cx| async move { p.done(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "planner.snooze",
                    "Tell of an item again later: for says how long or until when (default 10m).",
                )
                .sessions_fenced(),
                &p,
                |p, input: SnoozeInput, cx| async move { p.snooze(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "planner.opened",
                    "The person opened Vyre: reminders set for \"when I next open Vyre\" fall due now.",
                )
                .person_only(),
                &p,
                |p, _: OpenedInput, _| async move { p.opened().await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "planner.export",
                    "The items as an iCalendar (.ics) file's text, for a calendar app.",
                )
                .sessions_fenced(),
                &p,
                |p, input: calendar::ExportInput, cx| async move { p.export(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "planner.import",
                    "Add the events, to-dos and journal entries of an iCalendar (.ics) file as items.",
                )
                .sessions_fenced(),
                &p,
                |p, input: calendar::ImportInput, cx| async move { p.import(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new("planner.remove", "Remove an item.").sessions_fenced(),
                &p,
                |p, input: ItemInput, cx| async move { p.remove(input, cx).await },
            )?;
            let due = p.clone();
            ctx.deadlines().on_due(move |d| {
                let p = due.clone();
                async move { p.due(d).await }
            });
            Ok(())
        })
    }
}
