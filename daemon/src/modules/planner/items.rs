//! The planner's items in the store: reminders, alarms, timers, todos and notes, each with
//! when it falls due (if it does), when it was done, and when it last fell due (so a due time
//! handed over twice, after a crash, is told once).

use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kernel::store::{Migration, StoreError};

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE planner_items (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        project TEXT,
        due_at INTEGER,
        done_at INTEGER,
        fell_due_at INTEGER,
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL
    );
    CREATE INDEX planner_items_open ON planner_items(done_at, due_at);",
    },
    Migration {
        version: 2,
        // "When I next open Vyre": falls due when the person next opens the app, not at a time.
        sql: "ALTER TABLE planner_items ADD COLUMN on_open INTEGER NOT NULL DEFAULT 0;",
    },
    Migration {
        version: 3,
        // The UID of an item that came from a calendar file (`planner.import`): the same file
        // imported again adds nothing twice.
        sql: "ALTER TABLE planner_items ADD COLUMN uid TEXT;
        CREATE UNIQUE INDEX planner_items_uid ON planner_items(uid) WHERE uid IS NOT NULL;",
    },
];

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Something to be told of at a time.
    Reminder,
    /// A reminder that rings: the app sounds it.
    Alarm,
    /// A countdown (`in 10m`), told when it ends.
    Timer,
    /// Something to do, with a due date or none.
    Todo,
    /// Something to keep.
    Note,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Reminder => "reminder",
            Kind::Alarm => "alarm",
            Kind::Timer => "timer",
            Kind::Todo => "todo",
            Kind::Note => "note",
        }
    }

    fn parse(s: &str) -> Kind {
        match s {
            "alarm" => Kind::Alarm,
            "timer" => Kind::Timer,
            "todo" => Kind::Todo,
            "note" => Kind::Note,
            _ => Kind::Reminder,
        }
    }

    /// It falls due at a time, and must have one.
    pub fn needs_time(self) -> bool {
        matches!(self, Kind::Reminder | Kind::Alarm | Kind::Timer)
    }
}

/// An item as the tools show it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Item {
    pub id: i64,
    pub kind: Kind,
    pub text: String,
    /// The project it belongs to; none for the person's own.
    pub project: Option<String>,
    /// When it falls due (ms since the epoch).
    pub due_at: Option<i64>,
    /// When it was done.
    pub done_at: Option<i64>,
    /// When it last fell due (it was told).
    pub fell_due_at: Option<i64>,
    /// It falls due when the person next opens Vyre (`planner.opened`), not at a time.
    pub on_open: bool,
    pub created_at: i64,
    /// `person`, or the thread of the session that set it.
    pub created_by: String,
    /// Its UID in the calendar file it came from (`planner.import`).
    pub uid: Option<String>,
}

const COLUMNS: &str =
    "id, kind, text, project, due_at, done_at, fell_due_at, created_at, created_by, on_open, uid";

fn item(r: &rusqlite::Row<'_>) -> rusqlite::Result<Item> {
    Ok(Item {
        id: r.get(0)?,
        kind: Kind::parse(&r.get::<_, String>(1)?),
        text: r.get(2)?,
        project: r.get(3)?,
        due_at: r.get(4)?,
        done_at: r.get(5)?,
        fell_due_at: r.get(6)?,
        created_at: r.get(7)?,
        created_by: r.get(8)?,
        on_open: r.get(9)?,
        uid: r.get(10)?,
    })
}

pub struct New {
    pub kind: Kind,
    pub text: String,
    pub project: Option<String>,
    pub due_at: Option<i64>,
    pub on_open: bool,
    pub created_by: String,
    pub uid: Option<String>,
}

pub fn add(c: &Connection, new: &New, now: i64) -> Result<Item, StoreError> {
    c.execute(
        "INSERT INTO planner_items (kind, text, project, due_at, created_at, created_by, on_open, uid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            new.kind.as_str(),
            new.text,
            new.project,
            new.due_at,
            now,
            new.created_by,
            new.on_open,
            new.uid
        ],
    )?;
    get(c, c.last_insert_rowid())?.ok_or_else(|| StoreError::Task("an item just added".into()))
}

pub fn get(c: &Connection, id: i64) -> Result<Option<Item>, StoreError> {
    Ok(c.query_row(
        &format!("SELECT {COLUMNS} FROM planner_items WHERE id = ?1"),
        [id],
        item,
    )
    .optional()?)
}

/// What to list.
pub struct Filter {
    pub kind: Option<Kind>,
    pub project: Option<String>,
    /// Done items too.
    pub done: bool,
    pub limit: usize,
}

/// Open items first by when they fall due (those without a time after, in the order they were
/// added), then done ones, the last done first.
pub fn list(c: &Connection, f: &Filter) -> Result<Vec<Item>, StoreError> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM planner_items
         WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR project = ?2)
           AND (?3 OR done_at IS NULL)
         ORDER BY done_at IS NOT NULL, due_at IS NULL, due_at, done_at DESC, id
         LIMIT ?4"
    ))?;
    let rows = stmt.query_map(
        params![f.kind.map(Kind::as_str), f.project, f.done, f.limit as i64],
        item,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Mark it done (or not); false when there is no such item.
pub fn set_done(c: &Connection, id: i64, done_at: Option<i64>) -> Result<bool, StoreError> {
    Ok(c.execute(
        "UPDATE planner_items SET done_at = ?2 WHERE id = ?1",
        params![id, done_at],
    )? > 0)
}

/// Move when it falls due; it will be told again.
pub fn set_due(c: &Connection, id: i64, due_at: i64) -> Result<bool, StoreError> {
    Ok(c.execute(
        "UPDATE planner_items SET due_at = ?2, fell_due_at = NULL, on_open = 0 WHERE id = ?1",
        params![id, due_at],
    )? > 0)
}

/// Record that it fell due at `due_at`; false when that was already recorded (told once).
pub fn fell_due(c: &Connection, id: i64, due_at: i64) -> Result<bool, StoreError> {
    Ok(c.execute(
        "UPDATE planner_items SET fell_due_at = ?2
         WHERE id = ?1 AND due_at = ?2 AND done_at IS NULL
           AND (fell_due_at IS NULL OR fell_due_at < ?2)",
        params![id, due_at],
    )? > 0)
}

/// The open items waiting for the person to open Vyre, now fallen due (recorded as told).
pub fn opened(c: &Connection, now: i64) -> Result<Vec<Item>, StoreError> {
    let waiting: Vec<Item> = {
        let mut stmt = c.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM planner_items
             WHERE on_open = 1 AND done_at IS NULL AND fell_due_at IS NULL ORDER BY id"
        ))?;
        stmt.query_map([], item)?.collect::<Result<_, _>>()?
    };
    c.execute(
        "UPDATE planner_items SET fell_due_at = ?1
         WHERE on_open = 1 AND done_at IS NULL AND fell_due_at IS NULL",
        [now],
    )?;
    Ok(waiting
        .into_iter()
        .map(|i| Item {
            fell_due_at: Some(now),
            ..i
        })
        .collect())
}

/// Whether an item with calendar UID `uid` is here.
pub fn has_uid(c: &Connection, uid: &str) -> Result<bool, StoreError> {
    Ok(
        c.query_row("SELECT 1 FROM planner_items WHERE uid = ?1", [uid], |_| {
            Ok(())
        })
        .optional()?
        .is_some(),
    )
}

pub fn remove(c: &Connection, id: i64) -> Result<bool, StoreError> {
    Ok(c.execute("DELETE FROM planner_items WHERE id = ?1", [id])? > 0)
}
