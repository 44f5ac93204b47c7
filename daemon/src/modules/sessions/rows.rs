//! The Switchboard's rows (ADR 0030): `threads_runs` (a session and the options a resume
//! reuses), `threads_asks` (permission questions), `threads_inbox` (queued messages), each
//! thread's timeline (`threads_items`, `threads_timeline`: sessions/timeline/store.rs) and
//! `threads_about` (titles and forks).

use crate::kernel::store::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE threads_runs (
        id TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        driver TEXT NOT NULL,
        purpose TEXT NOT NULL,
        model TEXT,
        cwd TEXT NOT NULL,
        project TEXT,
        agent TEXT,
        auth TEXT NOT NULL,
        mode TEXT NOT NULL,
        status TEXT NOT NULL,
        turns INTEGER NOT NULL DEFAULT 0,
        total_cost_usd REAL NOT NULL DEFAULT 0,
        pid INTEGER, pgid INTEGER, sid INTEGER,
        stopped_reason TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE threads_asks (
        id TEXT PRIMARY KEY,
        thread TEXT NOT NULL REFERENCES threads_runs(id),
        turn TEXT,
        request TEXT NOT NULL,
        kind TEXT NOT NULL,
        tool TEXT NOT NULL,
        summary TEXT NOT NULL,
        input TEXT NOT NULL,
        suggestions TEXT NOT NULL,
        status TEXT NOT NULL,
        decision TEXT,
        answered_by TEXT,
        created_at INTEGER NOT NULL,
        answered_at INTEGER
    );
    CREATE INDEX threads_asks_open ON threads_asks(thread, status);
    CREATE TABLE threads_inbox (
        id INTEGER PRIMARY KEY,
        thread TEXT NOT NULL,
        uuid TEXT NOT NULL,
        text TEXT NOT NULL,
        surface TEXT,
        status TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );",
    },
    Migration {
        version: 2,
        // Every send's uuid, so the same send retried is one turn (ADR 0029 R2).
        sql: "CREATE TABLE threads_sent (
        uuid TEXT PRIMARY KEY,
        thread TEXT NOT NULL,
        via TEXT NOT NULL,
        queued INTEGER,
        at INTEGER NOT NULL
    );",
    },
    Migration {
        version: 3,
        // Until when a thread runs on the fallback API key (its subscription's limit resets).
        sql: "ALTER TABLE threads_runs ADD COLUMN fallback_until INTEGER;",
    },
    Migration {
        version: 4,
        // Whether the thread's transcript is known to have been written (a turn ended with the
        // CLI's result, or a resume found it). A thread whose CLI died before writing any has
        // nothing to resume and starts afresh under its id. Older threads are taken as written.
        sql: "ALTER TABLE threads_runs ADD COLUMN history INTEGER NOT NULL DEFAULT 1;",
    },
    Migration {
        version: 5,
        // The thread whose session started or forked this one (issue 17: a session acts on its
        // own thread and those it started). Null for a person's, a module's or an older one.
        sql: "ALTER TABLE threads_runs ADD COLUMN started_by TEXT;",
    },
    Migration {
        version: 6,
        // Each thread's one timeline (issue 18): its items in order, folded from its events as
        // they are written (sessions/timeline/).
        sql: crate::modules::sessions::timeline::store::MIGRATION,
    },
    Migration {
        version: 7,
        // What a surface shows about a thread (issue 18): its title (its first message's words,
        // or its parent's when forked), the name a person or its session gave it, and the
        // thread and message it was forked from (`sessions/about.rs`).
        sql: "CREATE TABLE threads_about (
        thread TEXT PRIMARY KEY,
        title TEXT,
        named TEXT,
        named_by TEXT,
        forked_from TEXT,
        forked_at TEXT,
        updated_at INTEGER NOT NULL
    );",
    },
    Migration {
        version: 8,
        // A queued message a person sent: its turn is marked `by_person` when it runs, so what
        // Vyre learns from a person's words (ADR 0027) learns from a queued one too.
        sql: "ALTER TABLE threads_inbox ADD COLUMN by_person INTEGER NOT NULL DEFAULT 0;",
    },
    Migration {
        version: 9,
        // What each turn changed in its folder (issue 25, `sessions/changes/`): the folder's
        // snapshots before and after (trees in Vyre's own object store for the folder), the
        // files that differ and whether a tool call said it would change them, or why the turn
        // was not followed.
        sql: "CREATE TABLE threads_changes (
        thread TEXT NOT NULL,
        turn TEXT NOT NULL,
        folder TEXT NOT NULL,
        before TEXT,
        after TEXT,
        files TEXT NOT NULL DEFAULT '[]',
        note TEXT,
        at INTEGER NOT NULL,
        PRIMARY KEY (thread, turn)
    );",
    },
    Migration {
        version: 10,
        // A thread started in a worktree of its own (issue 25, `sessions/worktree/`).
        sql: "CREATE TABLE threads_worktrees (
        thread TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        path TEXT NOT NULL,
        branch TEXT NOT NULL,
        base TEXT NOT NULL,
        filters_off TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL,
        merged_at INTEGER,
        merged_to TEXT,
        removed_at INTEGER
    );",
    },
    Migration {
        version: 11,
        // How hard the thread's model thinks (issue 28), kept for its next launch.
        sql: "ALTER TABLE threads_runs ADD COLUMN effort TEXT;",
    },
    Migration {
        version: 12,
        // A project's threads (`threads.list {project, folders}`), which a session's fence asks
        // at each call that needs its projects' threads: index ranges, not a walk of them all.
        sql: "CREATE INDEX threads_runs_cwd ON threads_runs(cwd);
        CREATE INDEX threads_runs_project ON threads_runs(project);",
    },
];
