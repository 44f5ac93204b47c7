//! Recall's rows: the files read and how far, the sessions found in them, and every turn with
//! an FTS5 index over its words, and its meaning vector (spec section 7.3).

use rusqlite::{OptionalExtension, params};

use crate::kernel::store::{Migration, StoreError, WriteTx};
use crate::kernel::transcripts::line::{Line, Role, Said};

pub const MIGRATIONS: &[Migration] = &[
    Migration {
    version: 1,
    sql: "CREATE TABLE recall_files (
        path TEXT PRIMARY KEY,
        session TEXT NOT NULL,
        offset INTEGER NOT NULL,
        lines INTEGER NOT NULL DEFAULT 0,
        broken INTEGER NOT NULL DEFAULT 0,
        indexed_at INTEGER NOT NULL
    );
    CREATE TABLE recall_sessions (
        session TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        cwd TEXT,
        title TEXT,
        summary TEXT,
        first_text TEXT,
        first_at INTEGER,
        last_at INTEGER,
        turns INTEGER NOT NULL DEFAULT 0,
        entrypoint TEXT
    );
    CREATE INDEX recall_sessions_last ON recall_sessions(last_at);
    CREATE TABLE recall_turns (
        id INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        key TEXT NOT NULL,
        uuid TEXT NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        at INTEGER,
        UNIQUE (session, key)
    );
    CREATE VIRTUAL TABLE recall_fts USING fts5(
        text, content = 'recall_turns', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER recall_turns_ai AFTER INSERT ON recall_turns BEGIN
        INSERT INTO recall_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER recall_turns_au AFTER UPDATE OF text ON recall_turns BEGIN
        INSERT INTO recall_fts(recall_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO recall_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER recall_turns_ad AFTER DELETE ON recall_turns BEGIN
        INSERT INTO recall_fts(recall_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;",
    },
    Migration {
        version: 2,
        // New rows are added to the FTS index by the code that inserts them: a trigger made
        // FTS5 flush a tiny segment per row, which the benchmark measured at about half the
        // whole index time.
        sql: "DROP TRIGGER recall_turns_ai;",
    },
    Migration {
        version: 3,
        // When each file last changed, as its last read saw it: the catalogue's "live" without
        // a look at every file on every call.
        sql: "ALTER TABLE recall_files ADD COLUMN written_at INTEGER;",
    },
    Migration {
        version: 4,
        // Dense recall: each turn's meaning vector (packed, `dense::vectors`), and the model
        // they were made with. A turn that goes or changes loses its vector; the embedder
        // gives it a new one.
        sql: "CREATE TABLE recall_vectors (id INTEGER PRIMARY KEY, v BLOB NOT NULL);
        CREATE TABLE recall_dense (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TRIGGER recall_turns_vd AFTER DELETE ON recall_turns BEGIN
            DELETE FROM recall_vectors WHERE id = old.id;
        END;
        CREATE TRIGGER recall_turns_vu AFTER UPDATE OF text ON recall_turns BEGIN
            DELETE FROM recall_vectors WHERE id = old.id;
        END;",
    },
    Migration {
        version: 5,
        // What the watchers filed, for `recall.filed`, and how far recall has read their events.
        sql: super::filed::SQL,
    },
    Migration {
        version: 6,
        // A project's sessions by their folder (`recall.sessions {folders}`), which a session's
        // fence asks at each call that needs its projects' threads: a range of this index, not
        // a walk of every session.
        sql: "CREATE INDEX recall_sessions_cwd ON recall_sessions(cwd);",
    },
];

/// Where a file's reading stands, and the session its rows are filed under.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    pub offset: u64,
    pub session: Option<String>,
}

pub fn kept(c: &rusqlite::Connection, path: &str) -> Result<Option<Kept>, StoreError> {
    Ok(c.query_row(
        "SELECT offset, session FROM recall_files WHERE path = ?1",
        [path],
        |r| {
            Ok(Kept {
                offset: r.get::<_, i64>(0)? as u64,
                session: r.get(1)?,
            })
        },
    )
    .optional()?)
}

/// What one read of a transcript adds, written in one transaction.
pub struct Batch {
    pub path: String,
    pub session: String,
    pub lines: Vec<Line>,
    pub offset: u64,
    pub read: u64,
    pub broken: u64,
    /// The file was rewritten: what was kept of it goes first.
    pub restarted: bool,
    /// When the file last changed (ms).
    pub written_at: Option<i64>,
    /// The session this file's rows were filed under until now, when they move to `session`
    /// (a Codex thread found to be one Vyre ran: filed under Vyre's thread from then on).
    pub renamed_from: Option<String>,
}

/// Apply batches (one per file) in one transaction.
pub fn apply_all(tx: &mut WriteTx<'_>, batches: &[Batch]) -> Result<usize, StoreError> {
    let mut added = 0;
    for b in batches {
        added += apply(tx, b)?;
    }
    Ok(added)
}

/// Apply a batch: new turns (an assistant message that spans lines grows in place), the
/// session's title, first words, folder and last activity, and the file's new offset.
pub fn apply(tx: &mut WriteTx<'_>, b: &Batch) -> Result<usize, StoreError> {
    let c = tx.conn();
    if let Some(old) = b.renamed_from.as_deref().filter(|o| *o != b.session) {
        // What an earlier read filed under the old name goes under the new one (a row the
        // new name has already wins).
        c.execute(
            "UPDATE OR IGNORE recall_turns SET session = ?2 WHERE session = ?1",
            params![old, b.session],
        )?;
        c.execute("DELETE FROM recall_turns WHERE session = ?1", [old])?;
        c.execute(
            "UPDATE OR IGNORE recall_sessions SET session = ?2 WHERE session = ?1",
            params![old, b.session],
        )?;
        c.execute("DELETE FROM recall_sessions WHERE session = ?1", [old])?;
    }
    if b.restarted {
        c.execute("DELETE FROM recall_turns WHERE session = ?1", [&b.session])?;
        c.execute(
            "DELETE FROM recall_sessions WHERE session = ?1",
            [&b.session],
        )?;
    }
    c.execute(
        "INSERT INTO recall_sessions (session, path) VALUES (?1, ?2)
         ON CONFLICT(session) DO UPDATE SET path = excluded.path",
        params![b.session, b.path],
    )?;
    let mut added = 0;
    for line in joined(&b.lines) {
        match &line {
            Line::Said(s) => added += said(c, &b.session, s)?,
            Line::Title(t) => {
                c.execute(
                    "UPDATE recall_sessions SET title = ?2 WHERE session = ?1",
                    params![b.session, t],
                )?;
            }
            Line::Summary(t) => {
                c.execute(
                    "UPDATE recall_sessions SET summary = ?2 WHERE session = ?1",
                    params![b.session, t],
                )?;
            }
            Line::Place { cwd, entrypoint } => {
                c.execute(
                    "UPDATE recall_sessions SET cwd = COALESCE(cwd, ?2), entrypoint = COALESCE(entrypoint, ?3) WHERE session = ?1",
                    params![b.session, cwd, entrypoint],
                )?;
            }
            Line::Passed => {}
        }
    }
    c.execute(
        "INSERT INTO recall_files (path, session, offset, lines, broken, indexed_at, written_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8)
         ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, written_at = excluded.written_at, session = excluded.session,
           lines = CASE WHEN ?7 THEN excluded.lines ELSE lines + excluded.lines END,
           broken = CASE WHEN ?7 THEN excluded.broken ELSE broken + excluded.broken END,
           indexed_at = excluded.indexed_at",
        params![b.path, b.session, b.offset as i64, b.read as i64, b.broken as i64, crate::now_ms(), b.restarted, b.written_at],
    )?;
    Ok(added)
}

/// The lines of one read with an assistant message's consecutive blocks joined into one, so a
/// reply written over several lines is indexed once instead of grown row by row.
fn joined(lines: &[Line]) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for line in lines {
        if let (Line::Said(next), Some(Line::Said(prev))) = (line, out.last_mut())
            && next.role == Role::Assistant
            && prev.role == Role::Assistant
            && next.message_id.is_some()
            && next.message_id == prev.message_id
        {
            prev.text.push('\n');
            prev.text.push_str(&next.text);
            continue;
        }
        out.push(line.clone());
    }
    out
}

fn said(c: &rusqlite::Connection, session: &str, s: &Said) -> Result<usize, StoreError> {
    let key = s.message_id.as_deref().unwrap_or(&s.uuid);
    let role = s.role.as_str();
    // A new turn: its row, then its words into the index.
    let inserted = c
        .prepare_cached(
            "INSERT INTO recall_turns (session, key, uuid, role, text, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(session, key) DO NOTHING",
        )?
        .execute(params![session, key, s.uuid, role, s.text, s.at])?;
    let changed = if inserted > 0 {
        c.prepare_cached("INSERT INTO recall_fts(rowid, text) VALUES (last_insert_rowid(), ?1)")?
            .execute([&s.text])?;
        1
    } else if s.role == Role::Assistant {
        // The rest of a reply whose first lines came in an earlier read: it grows in place
        // (the update trigger re-indexes it). A person's prompt seen again changes nothing.
        c.prepare_cached(
            "UPDATE recall_turns SET text = text || char(10) || ?3 WHERE session = ?1 AND key = ?2",
        )?
        .execute(params![session, key, s.text])?
    } else {
        0
    };
    let first = (s.role == Role::User).then_some(s.text.as_str());
    c.prepare_cached(
        "UPDATE recall_sessions SET
            cwd = COALESCE(cwd, ?2),
            entrypoint = COALESCE(entrypoint, ?3),
            first_text = COALESCE(first_text, ?4),
            first_at = COALESCE(first_at, ?5),
            last_at = MAX(COALESCE(last_at, 0), COALESCE(?5, 0)),
            turns = turns + ?6
         WHERE session = ?1",
    )?
    .execute(params![
        session,
        s.cwd,
        s.entrypoint,
        first,
        s.at,
        (s.role == Role::User && changed > 0) as i64
    ])?;
    Ok(changed)
}
