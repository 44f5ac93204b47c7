//! `threads_inbox`: messages that wait, for the running turn's end (`queued`) or for a
//! terminal writing the session to let go (`held`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::modules::sessions::switchboard::types::{Held, InboxStatus, QueuedInfo, clean};

/// A waiting message: its row, uuid and words.
#[derive(Debug, Clone)]
pub struct Waiting {
    pub queued: i64,
    pub uuid: String,
    pub text: String,
    /// A person sent it.
    pub person: bool,
}

impl Waiting {
    /// What its turn's `thread.turn` says beyond its words.
    pub fn marks(&self) -> serde_json::Value {
        if self.person {
            serde_json::json!({ "by_person": true })
        } else {
            serde_json::json!({})
        }
    }
}

/// A new waiting message; its row id.
pub fn insert(
    c: &Connection,
    thread: &str,
    uuid: &str,
    text: &str,
    status: InboxStatus,
    person: bool,
) -> rusqlite::Result<i64> {
    c.execute(
        "INSERT INTO threads_inbox (thread, uuid, text, status, created_at, by_person) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![thread, uuid, text, status, crate::now_ms(), person],
    )?;
    Ok(c.last_insert_rowid())
}

/// Whether a message is held for the thread already.
pub fn any_held(c: &Connection, thread: &str) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT EXISTS(SELECT 1 FROM threads_inbox WHERE thread = ?1 AND status = 'held')",
        [thread],
        |r| r.get(0),
    )
}

/// The thread's queued message `id`, or its oldest, still queued.
pub fn queued(c: &Connection, thread: &str, id: Option<i64>) -> rusqlite::Result<Option<Waiting>> {
    c.query_row(
        "SELECT id, uuid, text, by_person FROM threads_inbox WHERE thread = ?1 AND status = 'queued' AND (?2 IS NULL OR id = ?2) ORDER BY id LIMIT 1",
        params![thread, id],
        |r| {
            Ok(Waiting {
                queued: r.get(0)?,
                uuid: r.get(1)?,
                text: r.get(2)?,
                person: r.get(3)?,
            })
        },
    )
    .optional()
}

/// Take a message from the queue to hand it over; false when it left the queue meanwhile.
pub fn take(c: &Connection, id: i64) -> rusqlite::Result<bool> {
    let n = c.execute(
        "UPDATE threads_inbox SET status = ?2 WHERE id = ?1 AND status = ?3",
        params![id, InboxStatus::Taken, InboxStatus::Queued],
    )?;
    Ok(n > 0)
}

/// Take a queued message back: its `(thread, uuid)` when it was still queued.
pub fn unqueue(c: &Connection, id: i64) -> rusqlite::Result<Option<(String, String)>> {
    let row = c
        .query_row(
            "SELECT thread, uuid FROM threads_inbox WHERE id = ?1 AND status = 'queued'",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if row.is_some() {
        c.execute(
            "UPDATE threads_inbox SET status = ?2 WHERE id = ?1",
            params![id, InboxStatus::Unqueued],
        )?;
    }
    Ok(row)
}

/// Change a queued message's words: its `(thread, uuid)` when it was still queued.
pub fn edit(c: &Connection, id: i64, text: &str) -> rusqlite::Result<Option<(String, String)>> {
    let n = c.execute(
        "UPDATE threads_inbox SET text = ?1 WHERE id = ?2 AND status = 'queued'",
        params![text, id],
    )?;
    if n == 0 {
        return Ok(None);
    }
    thread_and_uuid(c, id)
}

fn thread_and_uuid(c: &Connection, id: i64) -> rusqlite::Result<Option<(String, String)>> {
    c.query_row(
        "SELECT thread, uuid FROM threads_inbox WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
}

/// The thread of message `id`, queued or not.
pub fn thread_of(c: &Connection, id: i64) -> rusqlite::Result<Option<String>> {
    Ok(thread_and_uuid(c, id)?.map(|(thread, _)| thread))
}

/// The thread's waiting messages (queued and held), oldest first, their words masked.
pub fn waiting(c: &Connection, thread: &str) -> rusqlite::Result<Vec<QueuedInfo>> {
    let mut stmt = c.prepare(
        "SELECT id, uuid, text, status, created_at FROM threads_inbox
         WHERE thread = ?1 AND status IN ('queued', 'held') ORDER BY id",
    )?;
    let rows = stmt.query_map([thread], |r| {
        Ok(QueuedInfo {
            queued: r.get(0)?,
            uuid: r.get(1)?,
            text: clean(&r.get::<_, String>(2)?),
            status: r.get(3)?,
            created_at: r.get(4)?,
        })
    })?;
    rows.collect()
}

/// Take the messages held for the thread, oldest first, marking them `status`.
pub fn take_held(c: &Connection, thread: &str, status: InboxStatus) -> rusqlite::Result<Vec<Held>> {
    let rows = {
        let mut stmt = c.prepare(
            "SELECT id, uuid, text FROM threads_inbox WHERE thread = ?1 AND status = 'held' ORDER BY id",
        )?;
        stmt.query_map([thread], |r| {
            Ok(Held {
                queued: r.get(0)?,
                uuid: r.get(1)?,
                text: r.get(2)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?
    };
    c.execute(
        "UPDATE threads_inbox SET status = ?2 WHERE thread = ?1 AND status = 'held'",
        params![thread, status],
    )?;
    Ok(rows)
}

/// Forget a message just queued (its send turned out to be made already).
pub fn remove(c: &Connection, id: i64) -> rusqlite::Result<()> {
    c.execute("DELETE FROM threads_inbox WHERE id = ?1", [id])?;
    Ok(())
}
