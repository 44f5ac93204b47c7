//! What each turn cost, kept from the sessions' `thread.usage` events (one row per turn: its
//! cost and tokens), with the thread's project and agent asked once of `threads.get`; their
//! `thread.limit` and `thread.fallback` go to [`super::limits`]. What was said while vyred was down (or before this module existed) is read back from the log after a
//! mark; the mark moves with the live events only once that catching up is done, and a turn is
//! kept once whichever way it arrives.

use std::collections::BTreeSet;
use std::sync::Arc;

use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

use crate::kernel::events::{Event, Filter};
use crate::kernel::module::Ctx;
use crate::kernel::store::Migration;

/// The module whose events are read.
const FROM: &str = "threads";

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE usage_turns (
        thread TEXT NOT NULL,
        turn TEXT NOT NULL,
        at INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        input INTEGER NOT NULL,
        output INTEGER NOT NULL,
        cache_read INTEGER NOT NULL,
        cache_write INTEGER NOT NULL,
        PRIMARY KEY (thread, turn)
    );
    CREATE INDEX usage_turns_at ON usage_turns(at);
    CREATE TABLE usage_threads (
        thread TEXT PRIMARY KEY,
        project TEXT,
        agent TEXT
    );
    CREATE TABLE usage_mark (id INTEGER NOT NULL);
    INSERT INTO usage_mark (id) VALUES (0);",
    },
    Migration {
        version: 2,
        sql: super::limits::MIGRATION_SQL,
    },
    // A turn its provider gave no price for (an ACP agent, a Codex model with no price): its
    // tokens count, its cost is not known, and the summary says how many such turns there were.
    Migration {
        version: 3,
        sql: "ALTER TABLE usage_turns ADD COLUMN priced INTEGER NOT NULL DEFAULT 1;",
    },
];

/// A token count from the CLI's `usage`.
fn tokens(t: &Value, key: &str) -> i64 {
    t[key].as_i64().unwrap_or(0).max(0)
}

pub fn follow(ctx: &Ctx) {
    let live = Filter {
        types: vec![
            "thread.usage".into(),
            "thread.limit".into(),
            "thread.fallback".into(),
        ],
        ..Default::default()
    };
    let c = ctx.clone();
    ctx.events().keep_up(
        live,
        FROM,
        "thread.",
        |conn| Ok(conn.query_row("SELECT id FROM usage_mark", [], |r| r.get::<_, i64>(0))?),
        move |events, read| {
            let c = c.clone();
            async move { keep(&c, events, read).await }
        },
    );
}

/// Keep `events`' turns (asking `threads.get` for threads not seen before), and move the mark
/// to `read` when given.
async fn keep(ctx: &Ctx, events: Vec<Arc<Event>>, read: Option<i64>) {
    let (events, limits): (Vec<Arc<Event>>, Vec<Arc<Event>>) = events
        .into_iter()
        .filter(|e| e.source == FROM && e.thread.is_some())
        .filter(|e| {
            matches!(
                e.kind.as_str(),
                "thread.usage" | "thread.limit" | "thread.fallback"
            )
        })
        .partition(|e| e.kind == "thread.usage");
    let threads: BTreeSet<String> = events.iter().filter_map(|e| e.thread.clone()).collect();
    let mut meta = vec![];
    for t in threads {
        let key = t.clone();
        let known = ctx
            .store()
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT 1 FROM usage_threads WHERE thread = ?1",
                    [key],
                    |_| Ok(()),
                )
                .optional()?
                .is_some())
            })
            .await
            .unwrap_or(false);
        if known {
            continue;
        }
        let got = ctx
            .call("threads.get", json!({ "thread": t }))
            .await
            .unwrap_or(Value::Null);
        meta.push((
            t,
            got["project"].as_str().map(String::from),
            got["agent"].as_str().map(String::from),
        ));
    }
    let kept = ctx
        .store()
        .write(move |tx| {
            for (t, project, agent) in &meta {
                tx.conn().execute(
                    "INSERT OR IGNORE INTO usage_threads (thread, project, agent) VALUES (?1, ?2, ?3)",
                    params![t, project, agent],
                )?;
            }
            for e in &events {
                let p = e.payload_value();
                let (Some(thread), Some(turn)) = (&e.thread, p["turn"].as_str()) else {
                    continue;
                };
                let t = &p["tokens"];
                // Unpriced: `priced: false` (and no cost) as the sessions say it now.
                let cost = p["cost_usd"].as_f64().filter(|_| p["priced"] != false);
                tx.conn().execute(
                    "INSERT OR IGNORE INTO usage_turns (thread, turn, at, cost_usd, input, output, cache_read, cache_write, priced)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        thread,
                        turn,
                        e.at,
                        cost.unwrap_or(0.0).max(0.0),
                        tokens(t, "input_tokens"),
                        tokens(t, "output_tokens"),
                        tokens(t, "cache_read_input_tokens"),
                        tokens(t, "cache_creation_input_tokens"),
                        cost.is_some(),
                    ],
                )?;
            }
            for e in &limits {
                super::limits::keep(tx.conn(), e)?;
            }
            if let Some(read) = read {
                tx.conn()
                    .execute("UPDATE usage_mark SET id = max(id, ?1)", [read])?;
            }
            Ok(())
        })
        .await;
    if let Err(e) = kept {
        tracing::warn!(error = %e, "usage was not kept");
    }
}
