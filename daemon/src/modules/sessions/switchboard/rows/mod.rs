//! Every SQL statement of the Switchboard, typed: `threads_runs` ([`runs`]), `threads_asks`
//! ([`asks`]), `threads_inbox` ([`inbox`]) and `threads_sent` (here). Each function is one or
//! two statements on a connection; a change is the functions it needs, and the events that
//! tell of it, in one `store.write` (one transaction), composed by the Switchboard. No SQL is
//! written anywhere else in `switchboard/`.

pub mod asks;
pub mod inbox;
pub mod runs;

use rusqlite::{Connection, OptionalExtension, params};

use super::types::{Sent, Via};

/// What a send with this uuid did, if it was made.
pub fn sent(c: &Connection, uuid: &str) -> rusqlite::Result<Option<Sent>> {
    c.query_row(
        "SELECT uuid, via, queued FROM threads_sent WHERE uuid = ?1",
        [uuid],
        |r| {
            Ok(Sent {
                uuid: r.get(0)?,
                via: r.get(1)?,
                queued: r.get(2)?,
            })
        },
    )
    .optional()
}

/// Record what a send did, once: false when its uuid was recorded already (the same send,
/// retried at the same moment), and nothing is written.
pub fn claim_sent(
    c: &Connection,
    thread: &str,
    uuid: &str,
    via: Via,
    queued: Option<i64>,
) -> rusqlite::Result<bool> {
    let n = c.execute(
        "INSERT INTO threads_sent (uuid, thread, via, queued, at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (uuid) DO NOTHING",
        params![uuid, thread, via, queued, crate::now_ms()],
    )?;
    Ok(n > 0)
}

/// Forget what a send did, so that what it becomes now is recorded anew.
pub fn forget_sent(c: &Connection, uuid: &str) -> rusqlite::Result<()> {
    c.execute("DELETE FROM threads_sent WHERE uuid = ?1", [uuid])?;
    Ok(())
}

/// After Vyre's session of a thread ends, its transcript's size as it left it (when the
/// timeline keeps one).
pub fn account_transcript(c: &Connection, thread: &str, size: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_timeline SET transcript = ?2 WHERE thread = ?1 AND transcript IS NOT NULL",
        params![thread, size],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests;
