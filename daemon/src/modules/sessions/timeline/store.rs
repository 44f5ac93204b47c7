//! The timeline's rows, written in the same transaction as the events they fold:
//! `threads_items` (each item as JSON, its place `seq` in the thread, and whether its words still
//! stream) and `threads_timeline` (per thread: the events from before the timeline existed, not
//! folded yet, and how much of its transcript was accounted for).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::fold::{Change, Ev, Items, fold};
use super::import::{Have, Placed};
use super::item::Item;
use crate::kernel::events::NewEvent;
use crate::kernel::store::{StoreError, WriteTx};

/// The tables, as the `threads` module's migration 6.
pub const MIGRATION: &str = "CREATE TABLE threads_items (
        thread TEXT NOT NULL,
        key TEXT NOT NULL,
        seq REAL NOT NULL,
        open INTEGER NOT NULL DEFAULT 0,
        body TEXT NOT NULL,
        PRIMARY KEY (thread, key)
    );
    CREATE INDEX threads_items_order ON threads_items(thread, seq);
    CREATE INDEX threads_items_open ON threads_items(thread) WHERE open = 1;
    CREATE TABLE threads_timeline (
        thread TEXT PRIMARY KEY,
        backfill_below INTEGER NOT NULL DEFAULT 0,
        backfilled INTEGER NOT NULL DEFAULT 0,
        transcript INTEGER
    );";

/// Events folded per write while catching up on a thread's old events.
const BACKFILL_CHUNK: i64 = 2000;

/// Append `event` and, when it is a thread's, fold it into that thread's timeline in the same
/// transaction: the items it changes are written, and announced as `thread.item` events.
pub fn record(tx: &mut WriteTx<'_>, event: NewEvent) -> Result<i64, StoreError> {
    let thread = event
        .thread
        .clone()
        .filter(|_| event.kind.starts_with("thread.") || event.kind.starts_with("ask."));
    let (kind, payload) = match thread {
        Some(_) => (event.kind.clone(), event.payload.clone()),
        None => (String::new(), Value::Null),
    };
    let id = tx.emit(event)?;
    if let Some(thread) = thread {
        let ev = Ev {
            id,
            at: crate::now_ms(),
            kind: &kind,
            payload: &payload,
        };
        fold_in(tx, &thread, &ev);
    }
    Ok(id)
}

/// Fold one event in. A failure here is logged and rolled back alone: the event stays recorded.
fn fold_in(tx: &mut WriteTx<'_>, thread: &str, ev: &Ev) {
    let conn = tx.conn();
    let folded = (|| -> rusqlite::Result<Vec<Item>> {
        conn.execute_batch("SAVEPOINT timeline_fold")?;
        conn.execute(
            "INSERT OR IGNORE INTO threads_timeline (thread, backfill_below, transcript) VALUES (?1, ?2, NULL)",
            params![thread, ev.id],
        )?;
        let said = apply(conn, thread, ev)?;
        conn.execute_batch("RELEASE timeline_fold")?;
        Ok(said)
    })();
    match folded {
        Ok(said) => {
            for item in said {
                announce(tx, thread, &item);
            }
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK TO timeline_fold; RELEASE timeline_fold");
            tracing::warn!(thread, kind = ev.kind, error = %e, "the timeline did not take an event");
        }
    }
}

/// `thread.item`: the whole changed item, masked and cut to fit an event.
fn announce(tx: &mut WriteTx<'_>, thread: &str, item: &Item) {
    let event = NewEvent::new(
        "thread.item",
        json!({ "item": item.fitted().to_clean_json() }),
    )
    .thread(thread);
    if let Err(e) = tx.emit(event) {
        tracing::warn!(thread, key = item.key(), error = %e, "a timeline item was not announced");
    }
}

/// Run the fold for `ev` against the rows and write what it changes; the items to announce.
fn apply(conn: &Connection, thread: &str, ev: &Ev) -> rusqlite::Result<Vec<Item>> {
    let changes = fold(ev, &Table { conn, thread });
    let mut said = vec![];
    for (i, change) in changes.into_iter().enumerate() {
        match change {
            Change::Put(item) => {
                let item = *item;
                put(conn, thread, &item, ev.id as f64 + i as f64 / 64.0)?;
                said.push(item);
            }
            Change::Append { key, delta } => {
                conn.prepare_cached(
                    "UPDATE threads_items SET body = json_set(body, '$.text', json_extract(body, '$.text') || ?3)
                     WHERE thread = ?1 AND key = ?2",
                )?
                .execute(params![thread, key, crate::kernel::redact::mask(&delta)])?;
            }
            Change::CutAfter { key } => {
                conn.execute(
                    "DELETE FROM threads_items WHERE thread = ?1
                     AND seq > (SELECT seq FROM threads_items WHERE thread = ?1 AND key = ?2)",
                    params![thread, key],
                )?;
            }
        }
    }
    Ok(said)
}

/// Write an item: a new one at `seq`, one the thread has where it is.
pub fn put(conn: &Connection, thread: &str, item: &Item, seq: f64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO threads_items (thread, key, seq, open, body) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(thread, key) DO UPDATE SET open = excluded.open, body = excluded.body",
    )?
    .execute(params![
        thread,
        item.key(),
        seq,
        item.is_open_text() as i64,
        item.to_clean_json().to_string()
    ])?;
    Ok(())
}

/// The rows as the fold sees them.
struct Table<'a> {
    conn: &'a Connection,
    thread: &'a str,
}

fn parse(body: String) -> Option<Item> {
    serde_json::from_str(&body).ok()
}

impl Items for Table<'_> {
    fn get(&self, key: &str) -> Option<Item> {
        self.conn
            .prepare_cached("SELECT body FROM threads_items WHERE thread = ?1 AND key = ?2")
            .and_then(|mut s| {
                s.query_row(params![self.thread, key], |r| r.get::<_, String>(0))
                    .optional()
            })
            .ok()
            .flatten()
            .and_then(parse)
    }

    fn open_texts(&self) -> Vec<Item> {
        let found = self
            .conn
            .prepare_cached(
                "SELECT body FROM threads_items WHERE thread = ?1 AND open = 1 ORDER BY seq",
            )
            .and_then(|mut s| {
                s.query_map([self.thread], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            });
        found
            .unwrap_or_default()
            .into_iter()
            .filter_map(parse)
            .collect()
    }
}

/// A thread's timeline bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// Events of the thread below this id predate its timeline and are not folded yet (0: none).
    pub backfill_below: i64,
    /// Of those, folded up to this id.
    pub backfilled: i64,
    /// The transcript's size (bytes) when it was last accounted for; `None`: never read.
    pub transcript: Option<i64>,
}

pub fn marker(c: &Connection, thread: &str) -> rusqlite::Result<Option<Marker>> {
    c.query_row(
        "SELECT backfill_below, backfilled, transcript FROM threads_timeline WHERE thread = ?1",
        [thread],
        |r| {
            Ok(Marker {
                backfill_below: r.get(0)?,
                backfilled: r.get(1)?,
                transcript: r.get(2)?,
            })
        },
    )
    .optional()
}

/// The bookkeeping of a thread seen for the first time by the timeline: what Vyre recorded of it
/// before (its events) is folded, its transcript read.
pub fn start_marker(c: &Connection, thread: &str) -> rusqlite::Result<()> {
    c.execute(
        "INSERT OR IGNORE INTO threads_timeline (thread, backfill_below, transcript)
         VALUES (?1, (SELECT COALESCE(MAX(id), 0) + 1 FROM events WHERE thread = ?1), NULL)",
        [thread],
    )?;
    Ok(())
}

/// A thread Vyre starts (or forks): every event of it is folded as it happens, and its
/// transcript holds nothing the events do not (`import`: false) or is read in once (true).
pub fn new_marker(c: &Connection, thread: &str, import: bool) -> rusqlite::Result<()> {
    c.execute(
        "INSERT OR REPLACE INTO threads_timeline (thread, backfill_below, backfilled, transcript) VALUES (?1, 0, 0, ?2)",
        params![thread, if import { None } else { Some(0) }],
    )?;
    Ok(())
}

pub fn set_transcript(c: &Connection, thread: &str, size: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_timeline SET transcript = ?2 WHERE thread = ?1",
        params![thread, size],
    )?;
    Ok(())
}

/// Fold the next chunk of a thread's old events (without announcing: no surface has read this
/// timeline yet). Whether any are left.
pub fn backfill(conn: &Connection, thread: &str) -> rusqlite::Result<bool> {
    let Some(m) = marker(conn, thread)? else {
        return Ok(false);
    };
    if m.backfill_below == 0 {
        return Ok(false);
    }
    let events: Vec<(i64, i64, String, String)> = {
        let mut stmt = conn.prepare_cached(
            "SELECT id, at, type, payload FROM events WHERE thread = ?1 AND id > ?2 AND id < ?3 ORDER BY id LIMIT ?4",
        )?;
        stmt.query_map(
            params![thread, m.backfilled, m.backfill_below, BACKFILL_CHUNK],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?
        .collect::<rusqlite::Result<_>>()?
    };
    let done = (events.len() as i64) < BACKFILL_CHUNK;
    let mut last = m.backfilled;
    for (id, at, kind, payload) in events {
        let payload: Value = serde_json::from_str(&payload).unwrap_or(Value::Null);
        apply(
            conn,
            thread,
            &Ev {
                id,
                at,
                kind: &kind,
                payload: &payload,
            },
        )?;
        last = id;
    }
    if done {
        conn.execute(
            "UPDATE threads_timeline SET backfill_below = 0, backfilled = 0 WHERE thread = ?1",
            [thread],
        )?;
    } else {
        conn.execute(
            "UPDATE threads_timeline SET backfilled = ?2 WHERE thread = ?1",
            params![thread, last],
        )?;
    }
    Ok(!done)
}

/// Every item the thread has, by key, with its place.
pub fn have(c: &Connection, thread: &str) -> rusqlite::Result<Have> {
    let mut stmt =
        c.prepare_cached("SELECT key, seq, body FROM threads_items WHERE thread = ?1")?;
    let rows = stmt.query_map([thread], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, f64>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut out = Have::new();
    for row in rows {
        let (key, seq, body) = row?;
        if let Some(item) = parse(body) {
            out.insert(key, (seq, item));
        }
    }
    Ok(out)
}

/// Write what an import placed; how many items changed.
pub fn write_placed(c: &Connection, thread: &str, placed: &[Placed]) -> rusqlite::Result<usize> {
    for p in placed {
        put(c, thread, &p.item, p.seq)?;
    }
    Ok(placed.len())
}

/// A fork's timeline starts as its parent's, up to the message it was forked at (that message
/// included), every item in the same place; words still streaming in the parent are whole in the
/// fork.
pub fn copy(c: &Connection, from: &str, to: &str, upto: Option<&str>) -> rusqlite::Result<usize> {
    c.execute(
        "INSERT OR IGNORE INTO threads_items (thread, key, seq, open, body)
         SELECT ?2, key, seq, 0, CASE WHEN open = 1 THEN json_set(body, '$.done', json('true')) ELSE body END
         FROM threads_items WHERE thread = ?1
         AND (?3 IS NULL OR seq <= (SELECT seq FROM threads_items WHERE thread = ?1 AND key = ?3))",
        params![from, to, upto],
    )
}

/// One page of a thread's timeline, newest last.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Page {
    pub items: Vec<Item>,
    /// The cursor for the page before this one (pass it as `before`), or null at the start.
    pub before: Option<f64>,
    /// The id of the newest event this page is complete up to: apply `thread.item` and
    /// `thread.text` events after it.
    pub last_event: i64,
}

/// The newest `limit` items before `before` (all, without it), read in one snapshot with the
/// newest event id, so that page + the events after it is exactly the timeline.
pub fn page(
    c: &Connection,
    thread: &str,
    before: Option<f64>,
    limit: usize,
) -> rusqlite::Result<Page> {
    let snapshot = c.unchecked_transaction()?;
    let mut rows: Vec<(f64, String)> = {
        let mut stmt = c.prepare_cached(
            "SELECT seq, body FROM threads_items WHERE thread = ?1 AND (?2 IS NULL OR seq < ?2)
             ORDER BY seq DESC LIMIT ?3",
        )?;
        stmt.query_map(params![thread, before, limit as i64 + 1], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let last_event: i64 =
        c.query_row("SELECT COALESCE(MAX(id), 0) FROM events", [], |r| r.get(0))?;
    snapshot.commit()?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    rows.reverse();
    Ok(Page {
        before: if more {
            rows.first().map(|r| r.0)
        } else {
            None
        },
        items: rows.into_iter().filter_map(|(_, b)| parse(b)).collect(),
        last_event,
    })
}

/// The item of tool call `call` in the thread, if it has one.
pub fn tool(c: &Connection, thread: &str, call: &str) -> rusqlite::Result<Option<Item>> {
    Ok(Table { conn: c, thread }.get(&super::item::tool_key(call)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::events::Bus;
    use crate::kernel::store::Store;

    async fn store(name: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("vyre-timeline-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vyre.db");
        let store = Store::open(&path, Bus::new()).unwrap();
        let mut conn = crate::kernel::store::open_connection(&path, false).unwrap();
        crate::kernel::store::migrate(
            &mut conn,
            "threads",
            crate::modules::sessions::rows::MIGRATIONS,
        )
        .unwrap();
        store
    }

    async fn say(store: &Store, kind: &str, payload: Value) -> i64 {
        let event = NewEvent::new(kind, payload).thread("t1");
        store.write(move |tx| record(tx, event)).await.unwrap()
    }

    async fn events(store: &Store, kind: &str) -> Vec<Value> {
        let kind = kind.to_string();
        store
            .read(move |c| {
                let mut stmt =
                    c.prepare("SELECT payload FROM events WHERE type = ?1 ORDER BY id")?;
                let rows = stmt.query_map([kind], |r| r.get::<_, String>(0))?;
                Ok(rows
                    .map(|r| serde_json::from_str(&r.unwrap()).unwrap())
                    .collect())
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn events_fold_into_rows_and_changed_items_are_announced() {
        let s = store("fold").await;
        say(&s, "thread.turn", json!({ "uuid": "u1", "text": "hi" })).await;
        say(
            &s,
            "thread.text",
            json!({ "message": "m", "block": 0, "delta": "he" }),
        )
        .await;
        say(
            &s,
            "thread.text",
            json!({ "message": "m", "block": 0, "delta": "llo" }),
        )
        .await;
        // A credential a tool printed never reaches the rows or the events.
        say(&s, "thread.tool", json!({ "call": "c", "name": "Bash", "phase": "started", "input": { "command": "cat .env" } })).await;
        say(
            &s,
            "thread.tool",
            json!({ "call": "c", "phase": "done", "status": "completed", "output": "" }),
        )
        .await;
        let page = s.read(|c| Ok(page(c, "t1", None, 100)?)).await.unwrap();
        let keys: Vec<&str> = page.items.iter().map(|i| i.key()).collect();
        assert_eq!(keys, ["u1", "m:m:0", "tool:c"]);
        match &page.items[1] {
            Item::Assistant(t) => assert_eq!((t.text.as_str(), t.done), ("hello", false)),
            other => panic!("{other:?}"),
        }
        let said = events(&s, "thread.item").await;
        let said: Vec<&str> = said
            .iter()
            .map(|e| e["item"]["key"].as_str().unwrap())
            .collect();
        assert_eq!(
            said,
            ["u1", "m:m:0", "tool:c", "tool:c"],
            "deltas are not announced"
        );
        assert_eq!(
            page.last_event,
            s.read(crate::kernel::events::log::latest_id).await.unwrap()
        );
        assert!(page.before.is_none());
    }

    #[tokio::test]
    async fn tool_output_with_a_credential_is_masked_everywhere() {
        let s = store("mask").await;
        let secret = format!("sk-ant-api03-{}", "Ab1".repeat(30));
        say(&s, "thread.tool", json!({ "call": "c", "name": "Bash", "phase": "started", "input": { "command": "cat .env" } })).await;
        // The Switchboard masks what it records; the fold masks what it writes again.
        let event = NewEvent::new("thread.tool", json!({ "call": "c", "phase": "done", "status": "completed", "output": crate::kernel::redact::mask(&format!("KEY={secret}")) })).thread("t1");
        s.write(move |tx| record(tx, event)).await.unwrap();
        let rows: String = s
            .read(|c| {
                Ok(
                    c.query_row("SELECT group_concat(body) FROM threads_items", [], |r| {
                        r.get(0)
                    })?,
                )
            })
            .await
            .unwrap();
        let logged: String = s
            .read(
                |c| Ok(c.query_row("SELECT group_concat(payload) FROM events", [], |r| r.get(0))?),
            )
            .await
            .unwrap();
        assert!(!rows.contains(&secret) && !logged.contains(&secret));
        assert!(
            rows.contains("KEY=sk-ant-"),
            "the rest stays readable: {rows}"
        );
    }

    #[tokio::test]
    async fn pages_go_back_from_the_newest() {
        let s = store("pages").await;
        for n in 0..7 {
            say(
                &s,
                "thread.turn",
                json!({ "uuid": format!("u{n}"), "text": format!("{n}") }),
            )
            .await;
        }
        let first = s.read(|c| Ok(page(c, "t1", None, 3)?)).await.unwrap();
        let keys = |p: &Page| {
            p.items
                .iter()
                .map(|i| i.key().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(&first), ["u4", "u5", "u6"]);
        let before = first.before;
        let second = s
            .read(move |c| Ok(page(c, "t1", before, 3)?))
            .await
            .unwrap();
        assert_eq!(keys(&second), ["u1", "u2", "u3"]);
        let before = second.before;
        let last = s
            .read(move |c| Ok(page(c, "t1", before, 3)?))
            .await
            .unwrap();
        assert_eq!((keys(&last), last.before), (vec!["u0".to_string()], None));
    }

    #[tokio::test]
    async fn events_from_before_the_timeline_are_folded_once_asked() {
        let s = store("backfill").await;
        // Events an older vyred recorded, with no timeline.
        for (kind, payload) in [
            ("thread.turn", json!({ "uuid": "u1", "text": "old" })),
            (
                "thread.text",
                json!({ "message": "m1", "block": 0, "delta": "old reply" }),
            ),
            (
                "thread.finished",
                json!({ "ok": false, "canceled": true, "reason": "interrupt" }),
            ),
        ] {
            let event = NewEvent::new(kind, payload).thread("t1");
            s.write(move |tx| tx.emit(event)).await.unwrap();
        }
        s.write(|tx| Ok(start_marker(tx.conn(), "t1")?))
            .await
            .unwrap();
        // A new event arrives before anyone reads the timeline: it is folded at once.
        say(&s, "thread.turn", json!({ "uuid": "u2", "text": "new" })).await;
        while s.write(|tx| Ok(backfill(tx.conn(), "t1")?)).await.unwrap() {}
        let page = s.read(|c| Ok(page(c, "t1", None, 100)?)).await.unwrap();
        let keys: Vec<&str> = page.items.iter().map(|i| i.key()).collect();
        assert_eq!(keys[..2], ["u1", "m:m1:0"]);
        assert_eq!(keys[3], "u2", "the old ones first, in their places");
        let m = s.read(|c| Ok(marker(c, "t1")?)).await.unwrap().unwrap();
        assert_eq!(m.backfill_below, 0);
    }

    #[tokio::test]
    async fn a_fork_starts_with_its_parents_timeline_up_to_its_message() {
        let s = store("fork").await;
        say(&s, "thread.turn", json!({ "uuid": "u1", "text": "one" })).await;
        say(
            &s,
            "thread.text",
            json!({ "message": "m1", "block": 0, "delta": "r1" }),
        )
        .await;
        say(&s, "thread.turn", json!({ "uuid": "u2", "text": "two" })).await;
        say(
            &s,
            "thread.text",
            json!({ "message": "m2", "block": 0, "delta": "r2" }),
        )
        .await;
        let n = s
            .write(|tx| Ok(copy(tx.conn(), "t1", "t2", Some("u2"))?))
            .await
            .unwrap();
        assert_eq!(n, 3);
        let page = s.read(|c| Ok(page(c, "t2", None, 100)?)).await.unwrap();
        assert!(page.items.iter().all(|i| !i.is_open_text()));
        assert_eq!(page.items.last().unwrap().key(), "u2");
    }
}
