//! The graph's rows. A fact is one statement (`subject relation object`) as one thread said it:
//! the turn it came from is its provenance, and when that turn was said is when it became true
//! (`valid_from`); when the curator wrote it is `recorded_at`. The same statement in another
//! thread is another row, so what a project sees is only what its own threads said, and what
//! replaces a term's meaning is worked out among the rows a caller may see, never across them.
//! A person's pin or mute is kept per statement.

use rusqlite::{OptionalExtension, params};
use schemars::JsonSchema;
use serde::Serialize;

use super::extract::Finding;
use crate::kernel::store::{Migration, StoreError};

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE memory_facts (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        object TEXT NOT NULL DEFAULT '',
        thread TEXT NOT NULL,
        turn TEXT NOT NULL,
        snippet TEXT NOT NULL DEFAULT '',
        valid_from INTEGER,
        recorded_at INTEGER NOT NULL,
        seen INTEGER NOT NULL DEFAULT 1,
        last_at INTEGER,
        UNIQUE (kind, subject, relation, object, thread)
    );
    CREATE INDEX memory_facts_subject ON memory_facts(subject);
    CREATE INDEX memory_facts_thread ON memory_facts(thread);
    CREATE TABLE memory_marks (
        kind TEXT NOT NULL,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        object TEXT NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        muted INTEGER NOT NULL DEFAULT 0,
        at INTEGER NOT NULL,
        PRIMARY KEY (kind, subject, relation, object)
    );
    CREATE TABLE memory_cursor (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        after INTEGER NOT NULL
    );",
    },
    Migration {
        version: 2,
        // The people each project named when its threads were last read for them: a name added
        // since has the project's threads read again for it (`curator::Curator::new_people`).
        sql: "CREATE TABLE memory_people (project TEXT PRIMARY KEY, names TEXT NOT NULL);",
    },
];

/// The people `project`'s threads were read for, when it was seen before.
pub fn people_read(
    c: &rusqlite::Connection,
    project: &str,
) -> Result<Option<Vec<String>>, StoreError> {
    let names: Option<String> = c
        .query_row(
            "SELECT names FROM memory_people WHERE project = ?1",
            [project],
            |r| r.get(0),
        )
        .optional()?;
    Ok(names.map(|n| serde_json::from_str(&n).unwrap_or_default()))
}

/// `project`'s threads are now read for `names`.
pub fn set_people_read(
    c: &rusqlite::Connection,
    project: &str,
    names: &[String],
) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO memory_people (project, names) VALUES (?1, ?2)
         ON CONFLICT (project) DO UPDATE SET names = excluded.names",
        params![project, serde_json::to_string(names).unwrap_or_default()],
    )?;
    Ok(())
}

/// A statement as a caller sees it: its rows in the threads it may see, folded into one.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Fact {
    /// The first row of it the caller may see: what `memory.why`, `pin` and `mute` take.
    pub fact: i64,
    pub kind: String,
    pub subject: String,
    pub relation: String,
    /// What a term is; empty for a mention.
    pub object: String,
    /// When it was first said (ms).
    pub valid_from: Option<i64>,
    /// When another meaning of the same term was said after it (ms): it held until then.
    pub valid_to: Option<i64>,
    /// The fact that replaced it.
    pub superseded_by: Option<i64>,
    /// When it was last said.
    pub last_at: Option<i64>,
    /// How many times, in how many threads.
    pub seen: i64,
    pub threads: i64,
    pub pinned: bool,
    /// The words around it the first time.
    pub snippet: String,
}

/// Where the curator stopped in recall's turns.
pub fn cursor(c: &rusqlite::Connection) -> Result<i64, StoreError> {
    Ok(
        c.query_row("SELECT after FROM memory_cursor WHERE id = 1", [], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or(0),
    )
}

pub fn set_cursor(c: &rusqlite::Connection, after: i64) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO memory_cursor (id, after) VALUES (1, ?1) ON CONFLICT(id) DO UPDATE SET after = ?1",
        params![after],
    )?;
    Ok(())
}

/// What writing a finding did.
pub enum Wrote {
    /// A new fact, with the earlier meaning of the same term in the same thread it replaces.
    New { id: i64, replaces: Option<i64> },
    /// Said again: counted.
    Again,
}

/// Keep `f`, said in `thread`'s turn `turn` at `at`.
pub fn write(
    c: &rusqlite::Connection,
    f: &Finding,
    thread: &str,
    turn: &str,
    at: Option<i64>,
    now: i64,
) -> Result<Wrote, StoreError> {
    let again = c.execute(
        "UPDATE memory_facts SET seen = seen + 1, last_at = MAX(COALESCE(last_at, 0), COALESCE(?6, 0))
         WHERE kind = ?1 AND subject = ?2 AND relation = ?3 AND object = ?4 AND thread = ?5",
        params![f.kind, f.subject, f.relation, f.object, thread, at],
    )?;
    if again > 0 {
        return Ok(Wrote::Again);
    }
    let replaces = if f.kind == "term" {
        c.query_row(
            "SELECT id FROM memory_facts WHERE kind = 'term' AND subject = ?1 AND thread = ?2
             AND object <> ?3 ORDER BY COALESCE(valid_from, 0) DESC, id DESC LIMIT 1",
            params![f.subject, thread, f.object],
            |r| r.get(0),
        )
        .optional()?
    } else {
        None
    };
    c.execute(
        "INSERT INTO memory_facts (kind, subject, relation, object, thread, turn, snippet, valid_from, recorded_at, last_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?8)",
        params![f.kind, f.subject, f.relation, f.object, thread, turn, f.snippet, at, now],
    )?;
    Ok(Wrote::New {
        id: c.last_insert_rowid(),
        replaces,
    })
}

/// What a caller asks of the graph.
pub struct Query {
    /// Only rows of these threads (a project's, or what a session may see); `None`: all.
    pub threads: Option<Vec<String>>,
    /// Only statements whose subject or object holds this (any case).
    pub about: Option<String>,
    pub kind: Option<String>,
    pub limit: usize,
    /// Muted statements too.
    pub muted: bool,
}

/// The statements `q` asks for: pinned first, then the most recently said. The database
/// folds, orders and limits them; only the terms among the answer have their later meanings
/// looked up.
pub fn facts(c: &rusqlite::Connection, q: &Query) -> Result<Vec<Fact>, StoreError> {
    let threads = q
        .threads
        .as_ref()
        .map(|t| serde_json::to_string(t).expect("a list of strings"));
    let about = q
        .about
        .as_ref()
        .map(|a| format!("%{}%", a.replace(['%', '_'], "")));
    let mut stmt = c.prepare_cached(
        "SELECT g.first, g.kind, g.subject, g.relation, g.object, g.valid_from, g.last_at, g.seen,
                g.threads, g.pinned, s.snippet
         FROM (
           SELECT MIN(f.id) AS first, f.kind, f.subject, f.relation, f.object,
                  MIN(f.valid_from) AS valid_from, MAX(f.last_at) AS last_at, SUM(f.seen) AS seen,
                  COUNT(DISTINCT f.thread) AS threads,
                  COALESCE(MAX(m.pinned), 0) AS pinned, COALESCE(MAX(m.muted), 0) AS muted
           FROM memory_facts f
           LEFT JOIN memory_marks m ON m.kind = f.kind AND m.subject = f.subject
             AND m.relation = f.relation AND m.object = f.object
           WHERE (?1 IS NULL OR f.thread IN (SELECT value FROM json_each(?1)))
             AND (?2 IS NULL OR f.subject LIKE ?2 OR f.object LIKE ?2)
             AND (?3 IS NULL OR f.kind = ?3)
           GROUP BY f.kind, f.subject, f.relation, f.object
         ) g JOIN memory_facts s ON s.id = g.first
         WHERE ?4 OR g.muted = 0
         ORDER BY g.pinned DESC, g.last_at DESC, g.first
         LIMIT ?5",
    )?;
    let rows = stmt.query_map(
        params![threads, about, q.kind, q.muted, q.limit as i64],
        |r| {
            Ok(Fact {
                fact: r.get(0)?,
                kind: r.get(1)?,
                subject: r.get(2)?,
                relation: r.get(3)?,
                object: r.get(4)?,
                valid_from: r.get(5)?,
                valid_to: None,
                superseded_by: None,
                last_at: r.get(6)?,
                seen: r.get(7)?,
                threads: r.get(8)?,
                pinned: r.get::<_, i64>(9)? != 0,
                snippet: r.get(10)?,
            })
        },
    )?;
    let mut all = rows.collect::<Result<Vec<_>, _>>()?;
    supersede(c, &mut all, threads.as_deref())?;
    Ok(all)
}

/// For each term in `all`, the meaning said after it among the rows of `threads` (a muted
/// one too: muting hides a meaning, it does not undo that it was said): it held until then.
fn supersede(
    c: &rusqlite::Connection,
    all: &mut [Fact],
    threads: Option<&str>,
) -> Result<(), StoreError> {
    let subjects: std::collections::BTreeSet<&str> = all
        .iter()
        .filter(|f| f.kind == "term")
        .map(|f| f.subject.as_str())
        .collect();
    if subjects.is_empty() {
        return Ok(());
    }
    let subjects = serde_json::to_string(&subjects).expect("a list of strings");
    let mut stmt = c.prepare_cached(
        "SELECT MIN(f.id), f.subject, f.object, MIN(f.valid_from) FROM memory_facts f
         WHERE f.kind = 'term' AND f.subject IN (SELECT value FROM json_each(?1))
           AND (?2 IS NULL OR f.thread IN (SELECT value FROM json_each(?2)))
         GROUP BY f.subject, f.relation, f.object",
    )?;
    let mut meanings = stmt
        .query_map(params![subjects, threads], |r| {
            Ok((
                r.get::<_, String>(1)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, i64>(0)?,
                r.get::<_, String>(2)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    meanings.sort();
    for f in all.iter_mut().filter(|f| f.kind == "term") {
        let Some(at) = meanings.iter().position(|m| m.2 == f.fact) else {
            continue;
        };
        if let Some(next) = meanings[at + 1..]
            .iter()
            .take_while(|m| m.0 == f.subject)
            .find(|m| m.3 != f.object)
        {
            f.valid_to = next.1;
            f.superseded_by = Some(next.2);
        }
    }
    Ok(())
}

/// Where a fact was said: its row, if the caller may see its thread.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Source {
    pub fact: i64,
    pub thread: String,
    /// The turn: a prompt's uuid, or a reply's message id.
    pub turn: String,
    pub at: Option<i64>,
    pub snippet: String,
    /// Where the app opens that conversation.
    pub url: String,
}

/// The statement of fact `id` and every row of it in `threads` (all when `None`).
pub fn sources(
    c: &rusqlite::Connection,
    id: i64,
    threads: Option<&[String]>,
) -> Result<Option<(Finding, Vec<Source>)>, StoreError> {
    let Some((kind, subject, relation, object, thread)) = c
        .query_row(
            "SELECT kind, subject, relation, object, thread FROM memory_facts WHERE id = ?1",
            params![id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            },
        )
        .optional()?
    else {
        return Ok(None);
    };
    if threads.is_some_and(|t| !t.contains(&thread)) {
        return Ok(None);
    }
    let threads = threads.map(|t| serde_json::to_string(t).expect("a list of strings"));
    let mut stmt = c.prepare_cached(
        "SELECT id, thread, turn, valid_from, snippet FROM memory_facts
         WHERE kind = ?1 AND subject = ?2 AND relation = ?3 AND object = ?4
           AND (?5 IS NULL OR thread IN (SELECT value FROM json_each(?5)))
         ORDER BY COALESCE(valid_from, 0), id",
    )?;
    let rows = stmt.query_map(params![kind, subject, relation, object, threads], |r| {
        let thread: String = r.get(1)?;
        Ok(Source {
            fact: r.get(0)?,
            url: format!("/app/t/{thread}"),
            thread,
            turn: r.get(2)?,
            at: r.get(3)?,
            snippet: r.get(4)?,
        })
    })?;
    let sources = rows.collect::<Result<Vec<_>, _>>()?;
    let statement = Finding {
        kind: kind_of(&kind),
        subject,
        relation: relation_of(&relation),
        object,
        snippet: String::new(),
    };
    Ok(Some((statement, sources)))
}

/// Pin or mute the statement of fact `id`; false when there is no such fact.
pub fn mark(
    c: &rusqlite::Connection,
    id: i64,
    pinned: Option<bool>,
    muted: Option<bool>,
    now: i64,
) -> Result<bool, StoreError> {
    let changed = c.execute(
        "INSERT INTO memory_marks (kind, subject, relation, object, pinned, muted, at)
         SELECT kind, subject, relation, object, COALESCE(?2, 0), COALESCE(?3, 0), ?4 FROM memory_facts WHERE id = ?1
         ON CONFLICT(kind, subject, relation, object) DO UPDATE SET
           pinned = COALESCE(?2, pinned), muted = COALESCE(?3, muted), at = ?4",
        params![id, pinned, muted, now],
    )?;
    Ok(changed > 0)
}

fn kind_of(kind: &str) -> &'static str {
    match kind {
        "url" => "url",
        "domain" => "domain",
        "email" => "email",
        "repo" => "repo",
        "address" => "address",
        "path" => "path",
        _ => "term",
    }
}

fn relation_of(relation: &str) -> &'static str {
    match relation {
        "is" => "is",
        "means" => "means",
        "names" => "names",
        _ => "mentioned",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: &'static str, subject: &str, object: &str) -> Finding {
        Finding {
            kind,
            subject: subject.into(),
            relation: if kind == "term" { "is" } else { "mentioned" },
            object: object.into(),
            snippet: String::new(),
        }
    }

    #[test]
    fn the_database_orders_and_limits_and_a_later_meaning_outside_the_page_still_ends_one() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(MIGRATIONS[0].sql).unwrap();
        let w = |f: Finding, thread: &str, at: i64| {
            write(&c, &f, thread, &format!("turn-{at}"), Some(at), at).unwrap();
        };
        w(finding("term", "Juno", "our assistant"), "t1", 10);
        for i in 0..50 {
            w(
                finding("url", &format!("https://a.example/{i}"), ""),
                "t1",
                100 + i,
            );
        }
        w(finding("term", "Juno", "the old name of Lumen"), "t2", 20);
        let first = facts(
            &c,
            &Query {
                threads: None,
                about: Some("Juno".into()),
                kind: None,
                limit: 50,
                muted: false,
            },
        )
        .unwrap();
        let old = first
            .iter()
            .find(|f| f.object == "our assistant")
            .unwrap()
            .fact;
        mark(&c, old, Some(true), None, 1).unwrap();
        // One row asked for: the pinned old meaning, its successor not on the page.
        let page = facts(
            &c,
            &Query {
                threads: None,
                about: None,
                kind: None,
                limit: 1,
                muted: false,
            },
        )
        .unwrap();
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].object, "our assistant");
        assert_eq!(page[0].valid_to, Some(20));
        assert!(page[0].superseded_by.is_some());
        // Newest first after the pinned.
        let page = facts(
            &c,
            &Query {
                threads: None,
                about: None,
                kind: Some("url".into()),
                limit: 3,
                muted: false,
            },
        )
        .unwrap();
        let subjects: Vec<&str> = page.iter().map(|f| f.subject.as_str()).collect();
        assert_eq!(
            subjects,
            [
                "https://a.example/49",
                "https://a.example/48",
                "https://a.example/47"
            ]
        );
        // Another thread's meaning does not end one for a caller who cannot see that thread.
        let only_t1 = facts(
            &c,
            &Query {
                threads: Some(vec!["t1".into()]),
                about: Some("Juno".into()),
                kind: None,
                limit: 5,
                muted: false,
            },
        )
        .unwrap();
        assert_eq!(only_t1.len(), 1);
        assert_eq!(only_t1[0].superseded_by, None);
    }
}
