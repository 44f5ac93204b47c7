//! Reading and writing rows of the `events` table.

use rusqlite::{Connection, Row, params};
use serde_json::value::RawValue;

use super::{Event, EventError, NewEvent, valid_type};
use crate::kernel::store::StoreError;

/// Largest payload accepted: events are small facts; detail lives in rows and transcripts.
pub const MAX_PAYLOAD: usize = 64 * 1024;

/// Check an event before it is written: its type, its payload's shape and size, and that it
/// carries nothing that looks like a credential.
pub fn check(event: &NewEvent) -> Result<String, EventError> {
    if !valid_type(&event.kind) {
        return Err(EventError::BadType(event.kind.clone()));
    }
    if !event.payload.is_object() {
        return Err(EventError::PayloadNotObject);
    }
    crate::kernel::redact::check(&event.payload).map_err(EventError::Secret)?;
    for field in [&event.thread, &event.project].into_iter().flatten() {
        if let Some(kind) = crate::kernel::redact::scan_str(field) {
            return Err(EventError::Secret(crate::kernel::redact::Finding {
                path: "thread/project".into(),
                kind,
            }));
        }
    }
    let text = event.payload.to_string();
    if text.len() > MAX_PAYLOAD {
        return Err(EventError::PayloadTooLarge {
            size: text.len(),
            max: MAX_PAYLOAD,
        });
    }
    Ok(text)
}

/// Insert one event inside the caller's transaction.
pub(crate) fn insert(
    conn: &Connection,
    source: &str,
    event: NewEvent,
) -> Result<Event, StoreError> {
    let text = check(&event).map_err(|e| StoreError::Refused(e.to_string()))?;
    let at = crate::now_ms();
    let mut stmt = conn.prepare_cached(
        "INSERT INTO events (at, type, source, project, thread, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    stmt.execute(params![
        at,
        event.kind,
        source,
        event.project,
        event.thread,
        text
    ])?;
    let id = conn.last_insert_rowid();
    let payload = RawValue::from_string(text).expect("serde_json output is valid JSON");
    Ok(Event::new(
        id,
        at,
        event.kind,
        source.to_string(),
        event.project,
        event.thread,
        payload,
    ))
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<Event> {
    let text: String = row.get(6)?;
    let payload = RawValue::from_string(text)
        .unwrap_or_else(|_| RawValue::from_string("{}".into()).expect("valid"));
    Ok(Event::new(
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        payload,
    ))
}

const COLUMNS: &str = "id, at, type, source, project, thread, payload";

/// Up to `limit` events with an id above `after`, oldest first.
pub fn since(conn: &Connection, after: i64, limit: usize) -> Result<Vec<Event>, StoreError> {
    between(conn, after, i64::MAX, limit)
}

/// Up to `limit` events with an id above `after` and below `before`, oldest first: what a
/// listener that fell behind the bus missed, up to the oldest batch the bus still holds.
pub fn between(
    conn: &Connection,
    after: i64,
    before: i64,
    limit: usize,
) -> Result<Vec<Event>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM events WHERE id > ?1 AND id < ?2 ORDER BY id LIMIT ?3"
    ))?;
    let rows = stmt.query_map(params![after, before, limit as i64], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Up to `limit` events with an id above `after` that module `source` emitted with a type
/// starting `prefix`, oldest first: a module catching up on one kind of event skips the rest of
/// the log in SQLite, not one page at a time.
pub fn since_from(
    conn: &Connection,
    after: i64,
    source: &str,
    prefix: &str,
    limit: usize,
) -> Result<Vec<Event>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM events WHERE id > ?1 AND source = ?2 AND substr(type, 1, ?3) = ?4
         ORDER BY id LIMIT ?5"
    ))?;
    let rows = stmt.query_map(
        params![
            after,
            source,
            prefix.chars().count() as i64,
            prefix,
            limit as i64
        ],
        from_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The newest `limit` events of one thread that module `source` emitted with type `kind`,
/// oldest first (by the thread index: a thread's events, not the whole log).
pub fn of_thread(
    conn: &Connection,
    thread: &str,
    source: &str,
    kind: &str,
    limit: usize,
) -> Result<Vec<Event>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM events WHERE thread = ?1 AND source = ?2 AND type = ?3
         ORDER BY id DESC LIMIT ?4"
    ))?;
    let rows = stmt.query_map(params![thread, source, kind, limit as i64], from_row)?;
    let mut events: Vec<Event> = rows.collect::<Result<_, _>>()?;
    events.reverse();
    Ok(events)
}

/// The newest `limit` events, oldest first.
pub fn recent(conn: &Connection, limit: usize) -> Result<Vec<Event>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM events ORDER BY id DESC LIMIT ?1"
    ))?;
    let rows = stmt.query_map(params![limit as i64], from_row)?;
    let mut events: Vec<Event> = rows.collect::<Result<_, _>>()?;
    events.reverse();
    Ok(events)
}

/// The id of the newest event, 0 when the log is empty.
pub fn latest_id(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("SELECT COALESCE(MAX(id), 0) FROM events", [], |r| r.get(0))?)
}

/// How many events the log holds.
pub fn count(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))?)
}
