//! The subscriptions vyred pushes to: one row per browser, owned by the device that made it.

use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::Serialize;

use super::deliver::Target;
use crate::kernel::store::Migration;

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE push_subscriptions (
        id TEXT PRIMARY KEY,
        device TEXT NOT NULL,
        endpoint TEXT NOT NULL UNIQUE,
        p256dh TEXT NOT NULL,
        auth TEXT NOT NULL,
        service TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_sent_at INTEGER,
        last_error TEXT
    );
    CREATE INDEX push_subscriptions_device ON push_subscriptions(device);",
}];

/// Subscriptions one device may hold (a browser or two, an installed app, a phone).
pub const PER_DEVICE: i64 = 8;

/// A subscription as `push.list` shows it: never its endpoint or keys.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Listed {
    pub subscription: String,
    pub device: String,
    /// The device's name, when it is still there.
    pub device_name: Option<String>,
    /// The push service's origin, e.g. https://fcm.googleapis.com.
    pub service: String,
    pub created_at: i64,
    pub last_sent_at: Option<i64>,
    /// Why the last message did not go, if it did not.
    pub last_error: Option<String>,
    /// The calling device's own.
    pub mine: bool,
}

pub struct New<'a> {
    pub id: &'a str,
    pub device: &'a str,
    pub endpoint: &'a str,
    pub p256dh: &'a str,
    pub auth: &'a str,
    pub service: &'a str,
    pub at: i64,
}

/// Keep a subscription; the same endpoint again replaces the one before (its id stays). Returns
/// the id kept, and the device that held the endpoint before if another did.
pub fn put(conn: &Connection, new: &New) -> rusqlite::Result<(String, Option<String>)> {
    let before: Option<(String, String)> = conn
        .query_row(
            "SELECT id, device FROM push_subscriptions WHERE endpoint = ?1",
            [new.endpoint],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match before {
        Some((id, device)) => {
            conn.execute(
                "UPDATE push_subscriptions SET device = ?2, p256dh = ?3, auth = ?4, last_error = NULL WHERE id = ?1",
                params![id, new.device, new.p256dh, new.auth],
            )?;
            let moved = (device != new.device).then_some(device);
            Ok((id, moved))
        }
        None => {
            conn.execute(
                "INSERT INTO push_subscriptions (id, device, endpoint, p256dh, auth, service, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![new.id, new.device, new.endpoint, new.p256dh, new.auth, new.service, new.at],
            )?;
            Ok((new.id.to_string(), None))
        }
    }
}

pub fn count_of(conn: &Connection, device: &str) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT COUNT(*) FROM push_subscriptions WHERE device = ?1",
        [device],
        |r| r.get(0),
    )
}

pub fn holds(conn: &Connection, endpoint: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT COUNT(*) FROM push_subscriptions WHERE endpoint = ?1",
        [endpoint],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Remove `device`'s subscription at `endpoint`; its id when there was one.
pub fn remove(conn: &Connection, device: &str, endpoint: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "DELETE FROM push_subscriptions WHERE device = ?1 AND endpoint = ?2 RETURNING id",
        [device, endpoint],
        |r| r.get(0),
    )
    .optional()
}

pub fn remove_id(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.execute("DELETE FROM push_subscriptions WHERE id = ?1", [id])
        .map(|n| n > 0)
}

/// Every subscription of `device`, removed; their ids.
pub fn remove_device(conn: &Connection, device: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("DELETE FROM push_subscriptions WHERE device = ?1 RETURNING id")?;
    let ids = stmt.query_map([device], |r| r.get(0))?;
    ids.collect()
}

/// Where to send: every subscription, or one device's.
pub fn targets(conn: &Connection, device: Option<&str>) -> rusqlite::Result<Vec<(Target, String)>> {
    let mut stmt = conn.prepare(
        "SELECT id, endpoint, p256dh, auth, device FROM push_subscriptions WHERE ?1 IS NULL OR device = ?1 ORDER BY created_at",
    )?;
    let rows = stmt.query_map([device], |r| {
        Ok((
            Target {
                id: r.get(0)?,
                endpoint: r.get(1)?,
                p256dh: r.get(2)?,
                auth: r.get(3)?,
            },
            r.get(4)?,
        ))
    })?;
    rows.collect()
}

pub fn devices(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT DISTINCT device FROM push_subscriptions")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

pub fn sent(conn: &Connection, id: &str, at: i64, error: Option<&str>) -> rusqlite::Result<()> {
    match error {
        None => conn.execute(
            "UPDATE push_subscriptions SET last_sent_at = ?2, last_error = NULL WHERE id = ?1",
            params![id, at],
        )?,
        Some(e) => conn.execute(
            "UPDATE push_subscriptions SET last_error = ?2 WHERE id = ?1",
            params![id, e],
        )?,
    };
    Ok(())
}

/// Every subscription, oldest first, as rows for `push.list` (names and `mine` filled later).
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<Listed>> {
    let mut stmt = conn.prepare(
        "SELECT id, device, service, created_at, last_sent_at, last_error FROM push_subscriptions ORDER BY created_at, id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Listed {
            subscription: r.get(0)?,
            device: r.get(1)?,
            device_name: None,
            service: r.get(2)?,
            created_at: r.get(3)?,
            last_sent_at: r.get(4)?,
            last_error: r.get(5)?,
            mine: false,
        })
    })?;
    rows.collect()
}
