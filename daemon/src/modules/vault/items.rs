//! The vault's rows: sealed items and their grants. Names, kinds, grants and times are plain
//! (they are shown by `vault.list`); values are only ever in `sealed`.
//!
//! The table keeps room for what comes later without a change of shape: `meta` holds
//! non-secret facts (a login's web address for autofill, where an import came from), grants name
//! any grantee (`module:x`, `agent:x`, later `pass:x` for sharing), and every item has a stable id
//! that its seal is bound to.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::kernel::store::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE vault_items (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        key_id TEXT NOT NULL,
        sealed BLOB NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_used_at INTEGER,
        last_used_by TEXT
    );
    CREATE TABLE vault_grants (
        item TEXT NOT NULL REFERENCES vault_items(id) ON DELETE CASCADE,
        grantee TEXT NOT NULL,
        granted_at INTEGER NOT NULL,
        granted_by TEXT NOT NULL,
        PRIMARY KEY (item, grantee)
    );",
    },
    Migration {
        version: 2,
        // Passkeys that prove a person's presence (presence.rs): the public half only.
        sql: "CREATE TABLE vault_passkeys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        rp_id TEXT NOT NULL,
        alg INTEGER NOT NULL,
        public_key BLOB NOT NULL,
        sign_count INTEGER NOT NULL DEFAULT 0,
        added_by TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER
    );",
    },
    Migration {
        version: 3,
        // Passes this Vyre gave (passes.rs, ADR 0036); `item` is kept when the item goes, so
        // an offboarding still lists what was shared.
        sql: "CREATE TABLE vault_passes (
        id TEXT PRIMARY KEY,
        item TEXT NOT NULL,
        item_name TEXT NOT NULL,
        to_person TEXT NOT NULL,
        kind TEXT NOT NULL,
        token_hash BLOB,
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        revoked_at INTEGER
    );
    CREATE INDEX vault_passes_to ON vault_passes(to_person);
    CREATE TABLE vault_pass_uses (
        pass TEXT NOT NULL REFERENCES vault_passes(id) ON DELETE CASCADE,
        at INTEGER NOT NULL,
        destination TEXT NOT NULL
    );
    CREATE INDEX vault_pass_uses_pass ON vault_pass_uses(pass, at);",
    },
    Migration {
        version: 4,
        // A relayed pass is bound to the key of the Vyre that accepted it (ADR 0036): its
        // public half, and when. A pass with none was never taken.
        sql: "ALTER TABLE vault_passes ADD COLUMN taker_key BLOB;
    ALTER TABLE vault_passes ADD COLUMN taken_at INTEGER;",
    },
    Migration {
        version: 5,
        // The one-use nonces of the signed requests relayed passes carried lately, until they
        // leave the window a request's time must fall in (ADR 0036): kept in the store, so a
        // request captured before a restart is refused after it too.
        sql: "CREATE TABLE vault_pass_nonces (
        pass TEXT NOT NULL,
        nonce TEXT NOT NULL,
        until_ms INTEGER NOT NULL,
        PRIMARY KEY (pass, nonce)
    ) WITHOUT ROWID;
    CREATE INDEX vault_pass_nonces_until ON vault_pass_nonces(until_ms);",
    },
];

/// The `key_id` of an item that the key store keeps itself (its row holds no seal): Claude's
/// credentials on a machine whose key store is the OS keychain.
pub const KEPT_BY_KEY_STORE: &str = "keystore";

/// A sealed row as read for opening.
pub struct SealedRow {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub key_id: String,
    pub sealed: Vec<u8>,
}

/// An item as `vault.list` shows it: never a value.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ItemInfo {
    pub name: String,
    pub kind: String,
    pub grants: Vec<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_used_at: Option<i64>,
    pub last_used_by: Option<String>,
    /// The value is an entry of the OS keychain's own, not sealed in the vault's table.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_keychain: bool,
    /// A login's sites (not secret: kept beside the seal, in `meta`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
    /// A card's last four digits and expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last4: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<String>,
    /// An env set's variables' names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vars: Vec<String>,
    /// Where an item that came as a pass came from (the giver's Vyre), and whether it is
    /// relayed (the value stays there) or a sealed copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// What the seal of an item is bound to: changing any of these makes it fail to open.
pub fn aad(id: &str, name: &str, kind: &str, key_id: &str) -> Vec<u8> {
    format!("vyre-vault-item-v1\0{id}\0{name}\0{kind}\0{key_id}").into_bytes()
}

pub fn sealed_by_name(conn: &Connection, name: &str) -> rusqlite::Result<Option<SealedRow>> {
    conn.query_row(
        "SELECT id, name, kind, key_id, sealed FROM vault_items WHERE name = ?1",
        [name],
        sealed_row,
    )
    .optional()
}

/// Every item the vault seals itself (not those its key store keeps).
pub fn all_sealed(conn: &Connection) -> rusqlite::Result<Vec<SealedRow>> {
    let mut stmt = conn.prepare(
        "SELECT id, name, kind, key_id, sealed FROM vault_items WHERE key_id != ?1 ORDER BY name",
    )?;
    let rows = stmt.query_map([KEPT_BY_KEY_STORE], sealed_row)?;
    rows.collect()
}

fn sealed_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SealedRow> {
    Ok(SealedRow {
        id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        key_id: r.get(3)?,
        sealed: r.get(4)?,
    })
}

pub fn list(conn: &Connection) -> rusqlite::Result<Vec<ItemInfo>> {
    let mut stmt = conn.prepare(
        "SELECT i.name, i.kind, i.created_at, i.updated_at, i.last_used_at, i.last_used_by,
                i.key_id = ?1,
                COALESCE((SELECT group_concat(grantee, char(10)) FROM
                    (SELECT grantee FROM vault_grants g WHERE g.item = i.id ORDER BY grantee)), ''),
                i.meta
         FROM vault_items i ORDER BY i.name",
    )?;
    let rows = stmt.query_map([KEPT_BY_KEY_STORE], |r| {
        let grants: String = r.get(7)?;
        let meta: String = r.get(8)?;
        let meta = serde_json::from_str::<serde_json::Value>(&meta).unwrap_or_default();
        let strings = |key: &str| -> Vec<String> {
            meta[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|u| u.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let kind: String = r.get(1)?;
        let card = |key: &str| {
            (kind == "card")
                .then(|| meta[key].as_str().map(String::from))
                .flatten()
        };
        Ok(ItemInfo {
            urls: strings("urls"),
            vars: if kind == "env" {
                strings("vars")
            } else {
                Vec::new()
            },
            last4: card("last4"),
            expiry: card("expiry"),
            from: meta["from"].as_str().map(String::from),
            name: r.get(0)?,
            kind,
            created_at: r.get(2)?,
            updated_at: r.get(3)?,
            last_used_at: r.get(4)?,
            last_used_by: r.get(5)?,
            in_keychain: r.get(6)?,
            grants: grants
                .lines()
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect(),
        })
    })?;
    rows.collect()
}

pub fn count(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COUNT(*) FROM vault_items", [], |r| r.get(0))
}

/// How many items are sealed with each key id.
pub fn key_ids(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut stmt = conn
        .prepare("SELECT key_id, COUNT(*) FROM vault_items WHERE key_id != ?1 GROUP BY key_id")?;
    let rows = stmt.query_map([KEPT_BY_KEY_STORE], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

pub fn is_granted(conn: &Connection, item_id: &str, grantee: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM vault_grants WHERE item = ?1 AND grantee = ?2)",
        params![item_id, grantee],
        |r| r.get(0),
    )
}

pub fn grantees(conn: &Connection, name: &str) -> rusqlite::Result<Option<Vec<String>>> {
    let Some(row) = sealed_by_name(conn, name)? else {
        return Ok(None);
    };
    let mut stmt =
        conn.prepare("SELECT grantee FROM vault_grants WHERE item = ?1 ORDER BY grantee")?;
    let rows = stmt.query_map([row.id], |r| r.get(0))?;
    rows.collect::<Result<Vec<String>, _>>().map(Some)
}
