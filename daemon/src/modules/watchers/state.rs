//! What vyred keeps of each watcher: whether it is paused or was disabled (and why), its cursor,
//! how its last runs went, the items it filed (each once: by its own id at the source, or by
//! its title and url), and its log (the last [`LOG_KEPT`] lines).

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::protocol::Item;
use crate::kernel::store::{Migration, StoreError};

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE watchers_state (
        name TEXT PRIMARY KEY,
        paused INTEGER NOT NULL DEFAULT 1,
        failures INTEGER NOT NULL DEFAULT 0,
        disabled TEXT,
        since TEXT NOT NULL DEFAULT 'null',
        last_run_at INTEGER,
        last_ok_at INTEGER,
        last_error TEXT,
        created_by TEXT NOT NULL DEFAULT 'person',
        hook_hash TEXT,
        waiting INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE watchers_items (
        id INTEGER PRIMARY KEY,
        watcher TEXT NOT NULL,
        project TEXT NOT NULL,
        key TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT,
        url TEXT,
        at INTEGER,
        filed_at INTEGER NOT NULL,
        UNIQUE (watcher, key)
    );
    CREATE TABLE watchers_log (
        id INTEGER PRIMARY KEY,
        watcher TEXT NOT NULL,
        at INTEGER NOT NULL,
        line TEXT NOT NULL
    );
    CREATE INDEX watchers_log_of ON watchers_log(watcher, id);
    CREATE INDEX watchers_items_of ON watchers_items(project, id);",
}];

/// Log lines kept per watcher.
pub const LOG_KEPT: i64 = 1000;

/// A watcher's state as the tools show it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct State {
    pub name: String,
    /// A new watcher is paused until the person resumes it.
    pub paused: bool,
    /// Failed runs in a row.
    pub failures: i64,
    /// Why it was disabled (too many failures in a row); resuming clears it.
    pub disabled: Option<String>,
    pub since: Value,
    pub last_run_at: Option<i64>,
    pub last_ok_at: Option<i64>,
    pub last_error: Option<String>,
    /// `person`, or the thread whose session wrote it.
    pub created_by: String,
    /// Items it filed so far.
    pub filed: i64,
    /// Written (or rewritten by a session) and not yet turned on by the person.
    pub waiting: bool,
}

fn state(r: &rusqlite::Row<'_>) -> rusqlite::Result<State> {
    Ok(State {
        name: r.get(0)?,
        paused: r.get(1)?,
        failures: r.get(2)?,
        disabled: r.get(3)?,
        since: serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or(Value::Null),
        last_run_at: r.get(5)?,
        last_ok_at: r.get(6)?,
        last_error: r.get(7)?,
        created_by: r.get(8)?,
        filed: r.get(9)?,
        waiting: r.get(10)?,
    })
}

const COLUMNS: &str =
    "name, paused, failures, disabled, since, last_run_at, last_ok_at, last_error,
    created_by, (SELECT count(*) FROM watchers_items i WHERE i.watcher = s.name), waiting";

/// The state of `name`, made (paused, written by the person) if it has none.
pub fn ensure(c: &Connection, name: &str, now: i64) -> Result<State, StoreError> {
    c.execute(
        "INSERT INTO watchers_state (name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO NOTHING",
        params![name, now],
    )?;
    get(c, name)?.ok_or_else(|| StoreError::Task("a watcher's state just made".into()))
}

pub fn get(c: &Connection, name: &str) -> Result<Option<State>, StoreError> {
    Ok(c.query_row(
        &format!("SELECT {COLUMNS} FROM watchers_state s WHERE name = ?1"),
        [name],
        state,
    )
    .optional()?)
}

pub fn all(c: &Connection) -> Result<Vec<State>, StoreError> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM watchers_state s ORDER BY name"
    ))?;
    let rows = stmt.query_map([], state)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Pause or resume; resuming clears a disabled watcher's reason and its failures.
pub fn set_paused(c: &Connection, name: &str, paused: bool) -> Result<bool, StoreError> {
    let sql = if paused {
        "UPDATE watchers_state SET paused = 1 WHERE name = ?1"
    } else {
        "UPDATE watchers_state SET paused = 0, waiting = 0, disabled = NULL, failures = 0 WHERE name = ?1"
    };
    Ok(c.execute(sql, [name])? > 0)
}

/// A run that went well: its items filed (each once), its cursor moved; the items new to the
/// project, in the order it said them.
pub fn succeeded(
    c: &Connection,
    name: &str,
    project: &str,
    items: &[Item],
    since: Option<&Value>,
    now: i64,
) -> Result<Vec<(i64, Item)>, StoreError> {
    let mut filed = Vec::new();
    let mut put = c.prepare_cached(
        "INSERT INTO watchers_items (watcher, project, key, title, body, url, at, filed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(watcher, key) DO NOTHING",
    )?;
    for item in items {
        if put.execute(params![
            name,
            project,
            key(item),
            item.title,
            item.body,
            item.url,
            item.at,
            now
        ])? > 0
        {
            filed.push((c.last_insert_rowid(), item.clone()));
        }
    }
    c.execute(
        "UPDATE watchers_state SET failures = 0, last_run_at = ?2, last_ok_at = ?2,
            last_error = NULL, since = COALESCE(?3, since)
         WHERE name = ?1",
        params![name, now, since.map(Value::to_string)],
    )?;
    Ok(filed)
}

/// A run that failed: the cursor stays; past `disable_after` failures in a row the watcher is
/// disabled with the reason. The failures in a row now.
pub fn failed(
    c: &Connection,
    name: &str,
    why: &str,
    disable_after: i64,
    now: i64,
) -> Result<i64, StoreError> {
    c.execute(
        "UPDATE watchers_state SET failures = failures + 1, last_run_at = ?2, last_error = ?3,
            disabled = CASE WHEN failures + 1 >= ?4 THEN ?3 ELSE disabled END
         WHERE name = ?1",
        params![name, now, why, disable_after],
    )?;
    Ok(c.query_row(
        "SELECT failures FROM watchers_state WHERE name = ?1",
        [name],
        |r| r.get(0),
    )?)
}

/// An item's key: its own id, or a hash of its title and url.
fn key(item: &Item) -> String {
    match &item.id {
        Some(id) => format!("id:{id}"),
        None => {
            let mut h = Sha256::new();
            h.update(item.title.as_bytes());
            h.update([0]);
            h.update(item.url.as_deref().unwrap_or_default().as_bytes());
            let d = h.finalize();
            format!(
                "h:{}",
                d.iter()
                    .take(12)
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            )
        }
    }
}

/// Add lines to `name`'s log, keeping its last [`LOG_KEPT`].
pub fn log(c: &Connection, name: &str, lines: &[String], now: i64) -> Result<(), StoreError> {
    let mut put =
        c.prepare_cached("INSERT INTO watchers_log (watcher, at, line) VALUES (?1, ?2, ?3)")?;
    for line in lines {
        put.execute(params![name, now, line])?;
    }
    c.execute(
        "DELETE FROM watchers_log WHERE watcher = ?1 AND id <= (
            SELECT id FROM watchers_log WHERE watcher = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        params![name, LOG_KEPT],
    )?;
    Ok(())
}

/// The last `limit` lines of `name`'s log, oldest first.
pub fn lines(c: &Connection, name: &str, limit: i64) -> Result<Vec<(i64, String)>, StoreError> {
    let mut stmt = c.prepare(
        "SELECT at, line FROM (SELECT id, at, line FROM watchers_log WHERE watcher = ?1
            ORDER BY id DESC LIMIT ?2) ORDER BY id",
    )?;
    let rows = stmt.query_map(params![name, limit], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `name` was (re)written by `by`: a session's version waits, paused, for the person; the
/// person's keeps whether it ran.
pub fn written(c: &Connection, name: &str, by: &str, now: i64) -> Result<State, StoreError> {
    c.execute(
        "INSERT INTO watchers_state (name, created_by, created_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(name) DO UPDATE SET created_by = ?2,
            paused = CASE WHEN ?2 = 'person' THEN paused ELSE 1 END,
            waiting = CASE WHEN ?2 = 'person' THEN waiting ELSE 1 END",
        params![name, by, now],
    )?;
    get(c, name)?.ok_or_else(|| StoreError::Task("a watcher's state just written".into()))
}

/// Keep the hash of `name`'s webhook secret (the secret itself is shown once, never kept).
pub fn set_hook(c: &Connection, name: &str, hash: Option<&str>) -> Result<(), StoreError> {
    c.execute(
        "UPDATE watchers_state SET hook_hash = ?2 WHERE name = ?1",
        params![name, hash],
    )?;
    Ok(())
}

/// The hash of `name`'s webhook secret.
pub fn hook_hash(c: &Connection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(c.query_row(
        "SELECT hook_hash FROM watchers_state WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .optional()?
    .flatten())
}

/// An item as it was filed.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Filed {
    pub id: i64,
    pub watcher: String,
    pub project: String,
    pub title: String,
    pub body: Option<String>,
    pub url: Option<String>,
    /// When it happened at the source (ms), when it said.
    pub at: Option<i64>,
    pub filed_at: i64,
}

/// The newest `limit` items filed, by `watcher` and in `projects` when given.
pub fn items(
    c: &Connection,
    watcher: Option<&str>,
    projects: Option<&[String]>,
    limit: i64,
) -> Result<Vec<Filed>, StoreError> {
    let fence = projects.map(|p| serde_json::to_string(p).unwrap_or_else(|_| "[]".into()));
    let mut stmt = c.prepare(
        "SELECT id, watcher, project, title, body, url, at, filed_at FROM watchers_items
         WHERE (?1 IS NULL OR watcher = ?1)
           AND (?2 IS NULL OR project IN (SELECT value FROM json_each(?2)))
         ORDER BY id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![watcher, fence, limit], |r| {
        Ok(Filed {
            id: r.get(0)?,
            watcher: r.get(1)?,
            project: r.get(2)?,
            title: r.get(3)?,
            body: r.get(4)?,
            url: r.get(5)?,
            at: r.get(6)?,
            filed_at: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Forget `name` (its items stay, filed in their project).
pub fn remove(c: &Connection, name: &str) -> Result<bool, StoreError> {
    c.execute("DELETE FROM watchers_log WHERE watcher = ?1", [name])?;
    Ok(c.execute("DELETE FROM watchers_state WHERE name = ?1", [name])? > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let mut c = Connection::open_in_memory().unwrap();
        crate::kernel::store::migrate(&mut c, "watchers", MIGRATIONS).unwrap();
        c
    }

    fn item(title: &str, id: Option<&str>) -> Item {
        Item {
            title: title.into(),
            body: None,
            url: Some("https://example.com".into()),
            id: id.map(String::from),
            at: None,
        }
    }

    #[test]
    fn runs_file_each_item_once_move_the_cursor_and_failures_disable_with_the_reason() {
        let c = db();
        let s = ensure(&c, "gh", 1).unwrap();
        assert!(s.paused, "a new watcher waits for the person");
        assert_eq!(s.since, Value::Null);
        let filed = succeeded(
            &c,
            "gh",
            "Site",
            &[item("one", Some("1")), item("two", None)],
            Some(&serde_json::json!({"page": 2})),
            10,
        )
        .unwrap();
        assert_eq!(filed.len(), 2);
        // The same items again (a source that repeats itself): nothing new.
        let again = succeeded(
            &c,
            "gh",
            "Site",
            &[item("one again", Some("1")), item("two", None)],
            None,
            11,
        )
        .unwrap();
        assert!(again.is_empty());
        let s = get(&c, "gh").unwrap().unwrap();
        assert_eq!(
            s.since,
            serde_json::json!({"page": 2}),
            "a run that does not move it keeps it"
        );
        assert_eq!(failed(&c, "gh", "it did not finish", 3, 12).unwrap(), 1);
        assert_eq!(failed(&c, "gh", "it did not finish", 3, 13).unwrap(), 2);
        assert_eq!(get(&c, "gh").unwrap().unwrap().disabled, None);
        assert_eq!(failed(&c, "gh", "line 1 is not JSON", 3, 14).unwrap(), 3);
        let s = get(&c, "gh").unwrap().unwrap();
        assert_eq!(s.disabled.as_deref(), Some("line 1 is not JSON"));
        assert_eq!(
            s.since,
            serde_json::json!({"page": 2}),
            "nothing lost from the cursor"
        );
        assert!(set_paused(&c, "gh", false).unwrap());
        let s = get(&c, "gh").unwrap().unwrap();
        assert!(!s.paused && s.disabled.is_none() && s.failures == 0);
        assert!(!set_paused(&c, "nobody", true).unwrap());
    }

    #[test]
    fn a_log_keeps_its_last_lines() {
        let c = db();
        let many: Vec<String> = (0..(LOG_KEPT + 5)).map(|i| format!("line {i}")).collect();
        log(&c, "gh", &many, 1).unwrap();
        log(&c, "other", &["theirs".into()], 1).unwrap();
        let kept = lines(&c, "gh", 5000).unwrap();
        assert_eq!(kept.len() as i64, LOG_KEPT);
        assert_eq!(kept[0].1, "line 5");
        assert_eq!(
            lines(&c, "gh", 2)
                .unwrap()
                .iter()
                .map(|l| l.1.as_str())
                .collect::<Vec<_>>(),
            ["line 1003", "line 1004"]
        );
        assert_eq!(lines(&c, "other", 10).unwrap().len(), 1);
        ensure(&c, "gh", 1).unwrap();
        assert!(remove(&c, "gh").unwrap());
        assert!(lines(&c, "gh", 10).unwrap().is_empty());
    }
}
