//! Held items as stored: one row per call the Gate held, with what it showed and what the person
//! decided. A row moves `held` → `deciding` → `approved` | `rejected`, or `held` → `withdrawn`
//! (its turn ended, vyred restarted); the move out of `held` is one conditional UPDATE, so two
//! answers to one item cannot both win.

use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::classify::Kind;
use crate::kernel::store::{Migration, StoreError};

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE gate_items (
        id TEXT PRIMARY KEY,
        thread TEXT NOT NULL,
        call TEXT NOT NULL,
        tool TEXT NOT NULL,
        input TEXT NOT NULL,
        kind TEXT NOT NULL,
        rule TEXT NOT NULL,
        what TEXT NOT NULL,
        destination TEXT NOT NULL,
        content TEXT NOT NULL,
        truncated INTEGER NOT NULL DEFAULT 0,
        field TEXT,
        state TEXT NOT NULL DEFAULT 'held',
        edited TEXT,
        why TEXT,
        by TEXT,
        at INTEGER NOT NULL,
        decided_at INTEGER
    );
    CREATE INDEX gate_items_open ON gate_items(state, at);
    CREATE INDEX gate_items_thread ON gate_items(thread, at);",
}];

/// A held item, as `gate.held` lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Item {
    pub item: String,
    pub thread: String,
    /// The tool call held (its `tool_use_id`).
    pub call: String,
    pub tool: String,
    pub input: Value,
    pub kind: Kind,
    /// The table's row that held it.
    pub rule: String,
    /// What it does, in words: "git push".
    pub what: String,
    /// Where it goes: the remote and branch, the URL, the recipients.
    pub destination: String,
    /// What goes: the command and, for a push, its commits; a tool's input.
    pub content: String,
    /// The content was cut at 64 KiB.
    pub truncated: bool,
    /// The input field an edit replaces, when the person may edit it.
    pub field: Option<String>,
    /// `held`, `approved`, `rejected` or `withdrawn`.
    pub state: String,
    /// The words the person approved instead, when they edited.
    pub edited: Option<String>,
    /// Why it was rejected or withdrawn.
    pub why: Option<String>,
    /// Who decided (`socket:501`, `device:<id>`).
    pub by: Option<String>,
    pub at: i64,
    pub decided_at: Option<i64>,
}

const COLUMNS: &str = "id, thread, call, tool, input, kind, rule, what, destination, content, truncated, field, state, edited, why, by, at, decided_at";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Item> {
    let input: String = r.get(4)?;
    let kind: String = r.get(5)?;
    let state: String = r.get(12)?;
    Ok(Item {
        item: r.get(0)?,
        thread: r.get(1)?,
        call: r.get(2)?,
        tool: r.get(3)?,
        input: serde_json::from_str(&input).unwrap_or(Value::Null),
        kind: serde_json::from_value(Value::String(kind)).unwrap_or(Kind::Send),
        rule: r.get(6)?,
        what: r.get(7)?,
        destination: r.get(8)?,
        content: r.get(9)?,
        truncated: r.get(10)?,
        field: r.get(11)?,
        // `deciding` is a moment inside one approval: shown as still held.
        state: if state == "deciding" {
            "held".into()
        } else {
            state
        },
        edited: r.get(13)?,
        why: r.get(14)?,
        by: r.get(15)?,
        at: r.get(16)?,
        decided_at: r.get(17)?,
    })
}

pub fn insert(conn: &Connection, item: &Item) -> Result<(), StoreError> {
    let kind = serde_json::to_value(item.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    conn.execute(
        &format!("INSERT INTO gate_items ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'held', NULL, NULL, NULL, ?13, NULL)"),
        params![
            item.item, item.thread, item.call, item.tool, item.input.to_string(), kind, item.rule,
            item.what, item.destination, item.content, item.truncated, item.field, item.at
        ],
    )?;
    Ok(())
}

pub fn get(conn: &Connection, id: &str) -> Result<Option<Item>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM gate_items WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?)
}

/// Items still held (of one thread, when given), oldest first; or, with `all`, the newest
/// `limit` of every state.
pub fn list(
    conn: &Connection,
    thread: Option<&str>,
    all: bool,
    limit: usize,
) -> Result<Vec<Item>, StoreError> {
    let open = if all {
        "1"
    } else {
        "state IN ('held', 'deciding')"
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM gate_items WHERE {open} AND (?1 IS NULL OR thread = ?1) ORDER BY at DESC, rowid DESC LIMIT ?2"
    ))?;
    let mut items: Vec<Item> = stmt
        .query_map(params![thread, limit as i64], from_row)?
        .collect::<Result<_, _>>()?;
    items.reverse();
    Ok(items)
}

/// Take a held item for deciding: true when this caller has it (it was `held`).
pub fn take(conn: &Connection, id: &str) -> Result<bool, StoreError> {
    Ok(conn.execute(
        "UPDATE gate_items SET state = 'deciding' WHERE id = ?1 AND state = 'held'",
        [id],
    )? == 1)
}

/// The decision, on an item taken with [`take`].
pub fn decide(
    conn: &Connection,
    id: &str,
    state: &str,
    edited: Option<&str>,
    why: Option<&str>,
    by: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE gate_items SET state = ?2, edited = ?3, why = ?4, by = ?5, decided_at = ?6 WHERE id = ?1",
        params![id, state, edited, why, by, crate::now_ms()],
    )?;
    Ok(())
}

/// Withdraw an item still held (or being decided): true when it was.
pub fn withdraw(conn: &Connection, id: &str, why: &str) -> Result<bool, StoreError> {
    Ok(conn.execute(
        "UPDATE gate_items SET state = 'withdrawn', why = ?2, decided_at = ?3 WHERE id = ?1 AND state IN ('held', 'deciding')",
        params![id, why, crate::now_ms()],
    )? == 1)
}

/// Every item left held (vyred stopped with them): their sessions are gone.
pub fn open_ids(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT id, thread FROM gate_items WHERE state IN ('held', 'deciding')")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
