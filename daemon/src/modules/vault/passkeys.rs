//! The passkeys that prove a person's presence (presence.rs): their public keys, relying party
//! and signature counter, in `vault_passkeys`. Nothing here is secret.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// A passkey as `vault.passkey.list` shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PasskeyInfo {
    /// The credential id, base64url.
    pub id: String,
    pub name: String,
    /// The site it is for (the app's host name).
    pub rp_id: String,
    pub added_by: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

/// A passkey as an assertion is checked against it.
pub struct PasskeyRow {
    pub name: String,
    pub rp_id: String,
    pub alg: i64,
    pub public_key: Vec<u8>,
    pub sign_count: u32,
}

pub struct NewPasskey<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub rp_id: &'a str,
    pub alg: i64,
    pub public_key: &'a [u8],
    pub sign_count: u32,
    pub added_by: &'a str,
}

/// Add one; false when its id is kept already.
pub fn add(conn: &Connection, p: &NewPasskey<'_>) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "INSERT OR IGNORE INTO vault_passkeys
             (id, name, rp_id, alg, public_key, sign_count, added_by, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            p.id,
            p.name,
            p.rp_id,
            p.alg,
            p.public_key,
            p.sign_count,
            p.added_by,
            crate::now_ms()
        ],
    )?;
    Ok(n == 1)
}

pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<PasskeyRow>> {
    conn.query_row(
        "SELECT name, rp_id, alg, public_key, sign_count FROM vault_passkeys WHERE id = ?1",
        [id],
        |r| {
            Ok(PasskeyRow {
                name: r.get(0)?,
                rp_id: r.get(1)?,
                alg: r.get(2)?,
                public_key: r.get(3)?,
                sign_count: r.get(4)?,
            })
        },
    )
    .optional()
}

/// After a good assertion: its counter and when.
pub fn used(conn: &Connection, id: &str, sign_count: u32) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE vault_passkeys SET sign_count = ?1, last_used_at = ?2 WHERE id = ?3",
        params![sign_count, crate::now_ms(), id],
    )?;
    Ok(())
}

pub fn list(conn: &Connection) -> rusqlite::Result<Vec<PasskeyInfo>> {
    let mut stmt = conn.prepare(
        "SELECT id, name, rp_id, added_by, created_at, last_used_at
         FROM vault_passkeys ORDER BY created_at, id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(PasskeyInfo {
            id: r.get(0)?,
            name: r.get(1)?,
            rp_id: r.get(2)?,
            added_by: r.get(3)?,
            created_at: r.get(4)?,
            last_used_at: r.get(5)?,
        })
    })?;
    rows.collect()
}

/// Remove one; its name when it was there.
pub fn remove(conn: &Connection, id: &str) -> rusqlite::Result<Option<String>> {
    let name: Option<String> = conn
        .query_row("SELECT name FROM vault_passkeys WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .optional()?;
    if name.is_some() {
        conn.execute("DELETE FROM vault_passkeys WHERE id = ?1", [id])?;
    }
    Ok(name)
}
