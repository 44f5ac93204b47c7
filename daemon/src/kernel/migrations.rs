//! The kernel's own tables: the event log and devices. Module tables are each module's own.

use crate::kernel::store::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            at INTEGER NOT NULL,
            type TEXT NOT NULL,
            source TEXT NOT NULL,
            project TEXT,
            thread TEXT,
            payload TEXT NOT NULL
        );
        CREATE INDEX events_thread ON events(thread, id) WHERE thread IS NOT NULL;",
    },
    Migration {
        version: 2,
        sql: "CREATE TABLE devices (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'token',
            token_hash BLOB NOT NULL UNIQUE,
            created_at INTEGER NOT NULL,
            last_seen_at INTEGER,
            revoked_at INTEGER
        );",
    },
    Migration {
        version: 3,
        // The person this vyred belongs to (one), and the one-time links that give a browser
        // its device (only their hashes).
        sql: "CREATE TABLE owner (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            name TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE links (
            token_hash BLOB PRIMARY KEY,
            kind TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        );",
    },
    Migration {
        version: 4,
        // A browser's key (ADR 0009): the SHA-256 of the second secret only Vyre's own pages
        // hold. Browsers signed in before it have none and sign in again.
        sql: "ALTER TABLE devices ADD COLUMN key_hash BLOB;",
    },
    Migration {
        version: 5,
        // A paired Vyre's Ed25519 public key: its presence assertions are checked with it
        // (`presence`). Pairings made before it have none, and are not a person here until
        // paired again.
        sql: "ALTER TABLE devices ADD COLUMN public_key BLOB;",
    },
    Migration {
        version: 6,
        // Every module's due times (`deadlines`): one row a deadline, the next one found by
        // the index.
        sql: "CREATE TABLE deadlines (
            owner TEXT NOT NULL,
            key TEXT NOT NULL,
            due_at INTEGER NOT NULL,
            PRIMARY KEY (owner, key)
        );
        CREATE INDEX deadlines_due ON deadlines(due_at);",
    },
];
