//! `usage`: what Vyre's sessions cost, per thread, project, agent and day (issue 25), from each
//! turn's cost and tokens as the CLI reported them ([`ingest`]). `usage.summary {from?, to?,
//! by?}` adds them up; `usage.limits {}` says where the subscription's windows stand
//! ([`limits`]). A person's own, not a session's.

pub mod ingest;
pub mod limits;

use std::collections::BTreeMap;

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::ToolError;

pub struct UsageModule;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum By {
    Thread,
    Project,
    Agent,
    #[default]
    Day,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummaryInput {
    /// From this time (ms since the epoch), inclusive; the last 30 days when left out.
    #[serde(default)]
    #[schemars(range(min = 0))]
    from: Option<i64>,
    /// Until this time (ms), exclusive; now when left out.
    #[serde(default)]
    #[schemars(range(min = 0))]
    to: Option<i64>,
    /// How the turns are added up: `day` (this machine's calendar days), `thread`, `project`
    /// or `agent`.
    #[serde(default)]
    by: Option<By>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsInput {}

/// What a group of turns cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct Line {
    /// The day (`2026-12-03`), thread, project or agent; null for turns of no project or agent.
    pub key: Option<String>,
    pub turns: i64,
    /// What the priced turns cost.
    pub cost_usd: f64,
    /// Turns their provider gave no price for (not in `cost_usd`): an ACP agent's, a Codex
    /// model's with no `sessions.prices` entry.
    pub unpriced_turns: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
}

impl Line {
    fn add(&mut self, t: &Turn) {
        self.turns += 1;
        match t.cost_usd {
            Some(cost) => self.cost_usd += cost,
            None => self.unpriced_turns += 1,
        }
        self.input_tokens += t.input;
        self.output_tokens += t.output;
        self.cache_read_tokens += t.cache_read;
        self.cache_write_tokens += t.cache_write;
    }
}

#[derive(Serialize, JsonSchema)]
pub struct Summary {
    pub from: i64,
    pub to: i64,
    pub by: By,
    /// One line per key, the costliest first (by day: oldest first).
    pub lines: Vec<Line>,
    pub total: Line,
}

#[derive(Debug, Clone)]
pub struct Turn {
    pub at: i64,
    pub thread: String,
    pub project: Option<String>,
    pub agent: Option<String>,
    /// None: unpriced.
    pub cost_usd: Option<f64>,
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
}

/// The day of `at` (ms) on this machine's calendar.
fn day(at: i64) -> String {
    jiff::Timestamp::from_millisecond(at)
        .map(|t| {
            t.to_zoned_datetime(jiff::tz::TimeZone::system())
                .date()
                .to_string()
        })
        .unwrap_or_default()
}

/// Add `turns` up by `by`.
pub fn summarise(turns: &[Turn], by: By) -> (Vec<Line>, Line) {
    let mut groups: BTreeMap<Option<String>, Line> = BTreeMap::new();
    let mut total = Line::default();
    for t in turns {
        let key = match by {
            By::Day => Some(day(t.at)),
            By::Thread => Some(t.thread.clone()),
            By::Project => t.project.clone(),
            By::Agent => t.agent.clone(),
        };
        let line = groups.entry(key.clone()).or_insert_with(|| Line {
            key,
            ..Line::default()
        });
        line.add(t);
        total.add(t);
    }
    let mut lines: Vec<Line> = groups.into_values().collect();
    if by != By::Day {
        lines.sort_by(|a, b| b.cost_usd.total_cmp(&a.cost_usd));
    }
    (lines, total)
}

const DAY_MS: i64 = 24 * 3600 * 1000;

async fn summary(c: Ctx, input: SummaryInput) -> Result<Summary, ToolError> {
    let to = input.to.unwrap_or_else(crate::now_ms);
    let from = input.from.unwrap_or(to - 30 * DAY_MS);
    if from > to {
        return Err(ToolError::invalid("`from` is after `to`"));
    }
    let by = input.by.unwrap_or_default();
    let turns = c
        .store()
        .read(move |conn| {
            let mut stmt = conn.prepare(
                "SELECT u.at, u.thread, t.project, t.agent, CASE WHEN u.priced THEN u.cost_usd END, u.input, u.output, u.cache_read, u.cache_write
                 FROM usage_turns u LEFT JOIN usage_threads t ON t.thread = u.thread
                 WHERE u.at >= ?1 AND u.at < ?2 ORDER BY u.at",
            )?;
            let rows = stmt.query_map(params![from, to], |r| {
                Ok(Turn {
                    at: r.get(0)?,
                    thread: r.get(1)?,
                    project: r.get(2)?,
                    agent: r.get(3)?,
                    cost_usd: r.get(4)?,
                    input: r.get(5)?,
                    output: r.get(6)?,
                    cache_read: r.get(7)?,
                    cache_write: r.get(8)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await?;
    let (lines, total) = summarise(&turns, by);
    Ok(Summary {
        from,
        to,
        by,
        lines,
        total,
    })
}

impl Module for UsageModule {
    fn name(&self) -> &str {
        "usage"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(ingest::MIGRATIONS).await?;
            ctx.tool_with(
                ToolDef::new(
                    "usage.summary",
                    "What Vyre's sessions cost between `from` and `to` (the last 30 days by default), added up by day, thread, project or agent: turns, dollars and tokens as Claude Code reported them.",
                ),
                &ctx,
                |c, input: SummaryInput, _| summary(c, input),
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "usage.limits",
                    "Where the Claude subscription's windows stand (the five-hour and the weekly): status, how much is used and when each resets, as Claude Code last reported them; whether a thread went on with the API key at the limit, and when an API key's own rate limit last refused a turn.",
                ),
                &ctx,
                |c, _: LimitsInput, _| async move {
                    let now = crate::now_ms();
                    Ok(c.store().read(move |conn| limits::read(conn, now)).await?)
                },
            )?;
            ingest::follow(&ctx);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(at: i64, thread: &str, project: Option<&str>, cost: f64) -> Turn {
        Turn {
            at,
            thread: thread.into(),
            project: project.map(String::from),
            agent: None,
            cost_usd: Some(cost),
            input: 10,
            output: 5,
            cache_read: 100,
            cache_write: 1,
        }
    }

    #[test]
    fn turns_add_up_by_each_key() {
        let t0 = 1_796_342_400_000; // 2026-12-03 UTC midnight
        let turns = vec![
            turn(t0 + 1000, "a", Some("garden"), 0.25),
            turn(t0 + 2000, "b", None, 1.0),
            turn(t0 + DAY_MS + 5000, "a", Some("garden"), 0.5),
        ];
        let (lines, total) = summarise(&turns, By::Thread);
        assert_eq!(total.turns, 3);
        assert!((total.cost_usd - 1.75).abs() < 1e-9);
        assert_eq!((total.input_tokens, total.cache_read_tokens), (30, 300));
        assert_eq!(lines[0].key.as_deref(), Some("b"), "costliest first");
        assert_eq!(lines[1].turns, 2);
        let (lines, _) = summarise(&turns, By::Project);
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().any(|l| l.key.is_none() && l.turns == 1));
        let (lines, _) = summarise(&turns, By::Day);
        assert!(lines.len() == 2 || lines.len() == 3, "{lines:?}");
        assert!(
            lines.windows(2).all(|w| w[0].key < w[1].key),
            "days in order"
        );
        assert_eq!(summarise(&[], By::Agent).0, vec![]);
    }

    #[test]
    fn an_unpriced_turn_is_counted_apart_never_as_free() {
        let mut unpriced = turn(2000, "codex", None, 0.0);
        unpriced.cost_usd = None;
        let turns = vec![turn(1000, "codex", None, 0.5), unpriced];
        let (lines, total) = summarise(&turns, By::Thread);
        assert_eq!((total.turns, total.unpriced_turns), (2, 1));
        assert!((total.cost_usd - 0.5).abs() < 1e-9);
        assert_eq!(total.output_tokens, 10, "its tokens still count");
        assert_eq!(lines[0].unpriced_turns, 1);
    }
}
