//! `system`: what vyred is running, and its recent events. The module that proves the contract
//! end to end.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kernel::KernelStatus;
use crate::kernel::events::{Fenced, Filter};
use crate::kernel::module::{Ctx, Module, ModuleStatus, StartFuture, ToolDef};
use crate::kernel::tools::ToolError;

pub struct System;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventsInput {
    /// How many events, newest last (1 to 1000, default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
    /// Only these types; `thread.*` matches a prefix.
    #[serde(default)]
    types: Vec<String>,
    /// Only events of this thread.
    #[serde(default)]
    thread: Option<String>,
}

/// An event as tools return it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EventOut {
    id: i64,
    at: i64,
    #[serde(rename = "type")]
    kind: String,
    source: String,
    project: Option<String>,
    thread: Option<String>,
    payload: Value,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Stopping {
    stopping: bool,
}

impl Module for System {
    fn name(&self) -> &str {
        "system"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.tool_with(
                ToolDef::new(
                    "system.status",
                    "What vyred runs: version, role, uptime, each module (started, or disabled and why), the store and the listeners.",
                ).sessions_open(),
                &ctx,
                |c, _: crate::kernel::tools::NoInput, _| async move { c.kernel_status().await.map_err(ToolError::from) },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "system.modules",
                    "Every module, with its state and why it is not running.",
                )
                .sessions_open(),
                &ctx,
                |c, _: crate::kernel::tools::NoInput, _| async move {
                    let status: KernelStatus = c.kernel_status().await?;
                    Ok::<Vec<ModuleStatus>, ToolError>(status.modules)
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "system.events",
                    "The most recent events, newest last, optionally filtered by type and thread.",
                )
                .sessions_fenced(),
                &ctx,
                |c, input: EventsInput, cx| async move {
                    // A session reads only the events of threads it owns.
                    let fence = match &cx.caller {
                        crate::kernel::tools::Caller::Session { .. } => Some(Fenced(
                            cx.scope(crate::kernel::tools::Reach::Own)
                                .await?
                                .owner_test(),
                        )),
                        _ => None,
                    };
                    recent_events(&c, input, fence).await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "system.stop",
                    "Stop vyred gracefully: calls in flight finish, then it exits.",
                )
                .finishes()
                .person_only(),
                &ctx,
                |c, _: crate::kernel::tools::NoInput, cx| async move {
                    tracing::info!(caller = %cx.caller.label(), "stop requested");
                    c.request_shutdown();
                    Ok::<_, ToolError>(Stopping { stopping: true })
                },
            )?;
            Ok(())
        })
    }
}

async fn recent_events(
    ctx: &Ctx,
    input: EventsInput,
    fence: Option<Fenced>,
) -> Result<Vec<EventOut>, ToolError> {
    // 1 to 1000: the schema's range, checked before the tool runs.
    let limit = input.limit.unwrap_or(20);
    let filter = Filter {
        types: input.types,
        thread: input.thread,
        fence,
    };
    let limit = limit as usize;
    let events = ctx
        .store()
        .read(move |conn| {
            // Walk back through the log in pages until enough events match.
            let mut out = Vec::new();
            let mut before = i64::MAX;
            loop {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, at, type, source, project, thread, payload FROM events WHERE id < ?1 ORDER BY id DESC LIMIT 500",
                )?;
                let rows: Vec<EventOut> = stmt
                    .query_map([before], |r| {
                        let payload: String = r.get(6)?;
                        Ok(EventOut {
                            id: r.get(0)?,
                            at: r.get(1)?,
                            kind: r.get(2)?,
                            source: r.get(3)?,
                            project: r.get(4)?,
                            thread: r.get(5)?,
                            payload: serde_json::from_str(&payload).unwrap_or(Value::Null),
                        })
                    })?
                    .collect::<Result<_, _>>()?;
                let Some(last) = rows.last() else { break };
                before = last.id;
                out.extend(rows.into_iter().filter(|e| filter.matches_parts(&e.kind, e.thread.as_deref())));
                if out.len() >= limit {
                    out.truncate(limit);
                    break;
                }
            }
            out.reverse();
            Ok(out)
        })
        .await?;
    Ok(events)
}
