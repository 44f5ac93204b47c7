//! `threads_asks`: permission questions, open and past.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::kernel::contracts::provider::Question;
use crate::modules::sessions::switchboard::types::{AskInfo, AskStatus, Outcome, clean_value};

/// An ask as the answer to it needs it.
pub struct AskRow {
    pub thread: String,
    pub request: String,
    pub status: AskStatus,
    pub decision: Option<Outcome>,
    pub input: Value,
    pub suggestions: Value,
    pub kind: String,
}

/// A new open ask.
pub fn insert(
    c: &Connection,
    ask: &str,
    thread: &str,
    turn: Option<&str>,
    q: &Question,
    summary: &str,
) -> rusqlite::Result<()> {
    c.execute(
        "INSERT INTO threads_asks (id, thread, turn, request, kind, tool, summary, input, suggestions, status, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            ask,
            thread,
            turn,
            q.request,
            q.kind,
            q.tool,
            summary,
            q.input.to_string(),
            q.suggestions.to_string(),
            AskStatus::Open,
            crate::now_ms()
        ],
    )?;
    Ok(())
}

pub fn get(c: &Connection, ask: &str) -> rusqlite::Result<Option<AskRow>> {
    c.query_row(
        "SELECT thread, request, status, decision, input, suggestions, kind FROM threads_asks WHERE id = ?1",
        [ask],
        |r| {
            let json = |s: String| serde_json::from_str(&s).unwrap_or(Value::Null);
            Ok(AskRow {
                thread: r.get(0)?,
                request: r.get(1)?,
                status: r.get(2)?,
                decision: r.get(3)?,
                input: json(r.get(4)?),
                suggestions: json(r.get(5)?),
                kind: r.get(6)?,
            })
        },
    )
    .optional()
}

pub fn answered(c: &Connection, ask: &str, outcome: Outcome, by: &str) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_asks SET status = ?1, decision = ?2, answered_by = ?3, answered_at = ?4 WHERE id = ?5",
        params![AskStatus::Answered, outcome, by, crate::now_ms(), ask],
    )?;
    Ok(())
}

/// Withdraw an open ask; whether it was open.
pub fn cancel(c: &Connection, ask: &str) -> rusqlite::Result<bool> {
    let n = c.execute(
        "UPDATE threads_asks SET status = ?1, decision = ?2, answered_at = ?3 WHERE id = ?4 AND status = ?5",
        params![AskStatus::Cancelled, Outcome::Cancelled, crate::now_ms(), ask, AskStatus::Open],
    )?;
    Ok(n > 0)
}

/// Withdraw every open ask (a vyred that died left them): `(ask, thread)`.
pub fn cancel_all_open(c: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let asks: Vec<(String, String)> = {
        let mut stmt = c.prepare("SELECT id, thread FROM threads_asks WHERE status = 'open'")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    c.execute(
        "UPDATE threads_asks SET status = 'cancelled', decision = 'cancelled' WHERE status = 'open'",
        [],
    )?;
    Ok(asks)
}

/// The thread's asks (only the open ones, when asked), oldest first, their input masked.
pub fn list(c: &Connection, thread: &str, open_only: bool) -> rusqlite::Result<Vec<AskInfo>> {
    let mut stmt = c.prepare(
        "SELECT id, thread, turn, kind, tool, summary, status, decision, input FROM threads_asks
         WHERE thread = ?1 AND (?2 = 0 OR status = 'open') ORDER BY created_at",
    )?;
    let rows = stmt.query_map(params![thread, open_only as i64], |r| {
        Ok(AskInfo {
            ask: r.get(0)?,
            thread: r.get(1)?,
            turn: r.get(2)?,
            kind: r.get(3)?,
            tool: r.get(4)?,
            summary: r.get(5)?,
            status: r.get(6)?,
            decision: r.get(7)?,
            input: r
                .get::<_, Option<String>>(8)?
                .and_then(|t| serde_json::from_str(&t).ok())
                .map(|v| clean_value(&v))
                .unwrap_or(Value::Null),
        })
    })?;
    rows.collect()
}
