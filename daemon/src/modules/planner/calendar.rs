//! `planner.export` and `planner.import`: the planner's items as an iCalendar file, and a
//! calendar app's file as items ([`super::ics`]). An import is one write: every item it adds is
//! there, or none is; one already imported (by its UID) or past is left out, saying why.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::items::{self, Item, Kind};
use super::{ListInput, Planner, changed, ics, key};
use crate::kernel::tools::{CallCx, ToolError};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportInput {
    /// Only this project's.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    project: Option<String>,
    /// Done items too.
    #[serde(default)]
    done: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Exported {
    /// The iCalendar file's text (RFC 5545).
    pub ics: String,
    /// How many items it holds.
    pub items: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportInput {
    /// An iCalendar file's text (.ics), as a calendar app exports it.
    #[schemars(length(min = 1, max = 2097152))]
    ics: String,
    /// The project its items go to (a session must name one of its own).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    project: Option<String>,
    /// The time zone of times the file gives without one (default this machine's).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    zone: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Imported {
    pub added: Vec<Item>,
    /// What was left out, and why.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Skipped {
    pub text: String,
    pub why: String,
}

impl Planner {
    pub(super) async fn export(
        &self,
        input: ExportInput,
        cx: CallCx,
    ) -> Result<Exported, ToolError> {
        let list = ListInput {
            kind: None,
            project: input.project,
            done: input.done,
            limit: Some(500),
        };
        let items = self.list(list, cx).await?;
        Ok(Exported {
            ics: ics::write(&items, crate::now_ms()),
            items: items.len(),
        })
    }

    pub(super) async fn import(
        &self,
        input: ImportInput,
        cx: CallCx,
    ) -> Result<Imported, ToolError> {
        self.check_project(input.project.as_deref(), &cx).await?;
        let zone = super::when::zone(input.zone.as_deref()).map_err(ToolError::invalid)?;
        let read = ics::read(&input.ics, &zone).map_err(ToolError::invalid)?;
        let created_by = super::created_by(&cx);
        let (project, now) = (input.project, crate::now_ms());
        let (added, skipped) = self
            .ctx
            .store()
            .write(move |tx| {
                let (mut added, mut skipped) = (Vec::new(), Vec::new());
                for r in read {
                    let skip = |why: &str| Skipped {
                        text: r.text.clone(),
                        why: why.into(),
                    };
                    if let Some(uid) = &r.uid
                        && items::has_uid(tx.conn(), uid)?
                    {
                        skipped.push(skip("it is here already (imported before)"));
                        continue;
                    }
                    if r.kind == Kind::Reminder && r.due_at.is_some_and(|at| at < now) {
                        skipped.push(skip("it was in the past"));
                        continue;
                    }
                    if r.repeats {
                        skipped.push(skip("it repeats: only its first time was added"));
                    }
                    let new = items::New {
                        kind: r.kind,
                        text: r.text.clone(),
                        project: project.clone(),
                        due_at: r.due_at,
                        on_open: false,
                        created_by: created_by.clone(),
                        uid: r.uid.clone(),
                    };
                    let mut item = items::add(tx.conn(), &new, now)?;
                    if r.done {
                        items::set_done(tx.conn(), item.id, Some(now))?;
                        item.done_at = Some(now);
                    }
                    tx.emit(changed(&item, "added"))?;
                    added.push(item);
                }
                Ok((added, skipped))
            })
            .await?;
        for item in &added {
            if let (Some(at), None) = (item.due_at, item.done_at) {
                self.ctx.deadlines().set(&key(item.id), at).await?;
            }
        }
        tracing::info!(
            added = added.len(),
            skipped = skipped.len(),
            "a calendar file was imported"
        );
        Ok(Imported { added, skipped })
    }
}
