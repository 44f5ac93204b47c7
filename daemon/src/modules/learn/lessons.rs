//! Lessons and signals as stored. A lesson keeps its rule, its check (JSON), its level, where it
//! came from (the signal, with its thread and turn) and how often it applied and was broken; a
//! lesson broken again moves up a level (remind → ask → block).

use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rules::Check;
use crate::kernel::store::{Migration, StoreError};

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE learn_lessons (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL DEFAULT 'all',
        target TEXT,
        rule TEXT NOT NULL,
        norm TEXT NOT NULL,
        check_json TEXT,
        level TEXT NOT NULL DEFAULT 'remind',
        source TEXT NOT NULL,
        applied INTEGER NOT NULL DEFAULT 0,
        broken INTEGER NOT NULL DEFAULT 0,
        retired INTEGER NOT NULL DEFAULT 0,
        pending INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX learn_lessons_norm ON learn_lessons(norm) WHERE retired = 0;
    CREATE TABLE learn_signals (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        thread TEXT,
        turn TEXT,
        text TEXT NOT NULL,
        lesson INTEGER,
        at INTEGER NOT NULL
    );",
}];

/// How firmly a lesson is held.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Claude is reminded (a tool call goes on with the lesson said; an answer is sent back once).
    Remind,
    /// The person is asked (a tool call), or the answer sent back twice.
    Ask,
    /// Refused (a tool call), or the answer sent back until it keeps the lesson (three times).
    Block,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Remind => "remind",
            Level::Ask => "ask",
            Level::Block => "block",
        }
    }
    fn parse(s: &str) -> Level {
        match s {
            "ask" => Level::Ask,
            "block" => Level::Block,
            _ => Level::Remind,
        }
    }
    /// The next level up, if any.
    pub fn up(self) -> Option<Level> {
        match self {
            Level::Remind => Some(Level::Ask),
            Level::Ask => Some(Level::Block),
            Level::Block => None,
        }
    }
    /// How often a turn's end is refused for a broken lesson of this level.
    pub fn refusals(self) -> u32 {
        match self {
            Level::Remind => 1,
            Level::Ask => 2,
            Level::Block => 3,
        }
    }
}

/// Where a lesson applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    All,
    Project,
    Agent,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::All => "all",
            Scope::Project => "project",
            Scope::Agent => "agent",
        }
    }
}

/// A lesson, as `learn.lessons` lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Lesson {
    pub lesson: i64,
    pub scope: Scope,
    /// The project or agent it is narrowed to.
    pub target: Option<String>,
    /// When it applies, in words.
    pub when: String,
    pub rule: String,
    /// Its check, when Vyre runs one in code.
    pub check: Option<Check>,
    pub level: Level,
    /// Where it came from: `{kind: correction|remember|person|denied, thread?, turn?, text}`.
    pub source: Value,
    pub applied: i64,
    pub broken: i64,
    pub retired: bool,
    /// Learned from words no person is known to have typed (a terminal's hook, which a session
    /// could also run): kept, shown, and applied only once the person confirms it.
    pub pending: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A rule's words, for telling one lesson from the same said again.
pub fn norm(rule: &str) -> String {
    rule.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

const COLUMNS: &str = "id, scope, target, rule, check_json, level, source, applied, broken, retired, created_at, updated_at, pending";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Lesson> {
    let scope: String = r.get(1)?;
    let check: Option<String> = r.get(4)?;
    let level: String = r.get(5)?;
    let source: String = r.get(6)?;
    let check: Option<Check> = check.and_then(|c| serde_json::from_str(&c).ok());
    Ok(Lesson {
        lesson: r.get(0)?,
        scope: match scope.as_str() {
            "project" => Scope::Project,
            "agent" => Scope::Agent,
            _ => Scope::All,
        },
        target: r.get(2)?,
        when: check
            .as_ref()
            .map_or_else(|| "every prompt".into(), Check::when),
        rule: r.get(3)?,
        check,
        level: Level::parse(&level),
        source: serde_json::from_str(&source).unwrap_or(Value::Null),
        applied: r.get(7)?,
        broken: r.get(8)?,
        retired: r.get(9)?,
        pending: r.get(12)?,
        created_at: r.get(10)?,
        updated_at: r.get(11)?,
    })
}

/// A new lesson; `None` when an active one already says the same (its id is returned then).
pub struct New<'a> {
    pub scope: Scope,
    pub target: Option<&'a str>,
    pub rule: &'a str,
    pub check: Option<&'a Check>,
    pub level: Level,
    pub source: &'a Value,
    pub pending: bool,
}

/// Insert a lesson, or find the active one that says the same: `(id, new)`.
pub fn add(conn: &Connection, n: &New<'_>) -> Result<(i64, bool), StoreError> {
    let key = norm(n.rule);
    if let Some(id) = conn
        .query_row(
            "SELECT id FROM learn_lessons WHERE norm = ?1 AND retired = 0",
            [&key],
            |r| r.get(0),
        )
        .optional()?
    {
        return Ok((id, false));
    }
    let scope = n.scope.as_str();
    let now = crate::now_ms();
    conn.execute(
        "INSERT INTO learn_lessons (scope, target, rule, norm, check_json, level, source, pending, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?9, ?8, ?8)",
        params![
            scope,
            n.target,
            n.rule,
            key,
            n.check.map(|c| serde_json::to_string(c).unwrap_or_default()),
            n.level.as_str(),
            n.source.to_string(),
            now,
            n.pending
        ],
    )?;
    Ok((conn.last_insert_rowid(), true))
}

pub fn get(conn: &Connection, id: i64) -> Result<Option<Lesson>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM learn_lessons WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?)
}

/// Lessons, oldest first; retired ones only with `all`.
pub fn list(conn: &Connection, all: bool) -> Result<Vec<Lesson>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM learn_lessons WHERE ?1 OR retired = 0 ORDER BY id"
    ))?;
    let rows = stmt.query_map([all], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A person's change to a lesson.
pub fn edit(
    conn: &Connection,
    id: i64,
    rule: Option<&str>,
    level: Option<Level>,
    scope: Option<(Scope, Option<&str>)>,
    check: Option<Option<&Check>>,
    confirm: bool,
) -> Result<bool, StoreError> {
    let now = crate::now_ms();
    let mut changed = 0;
    if let Some(rule) = rule {
        changed += conn.execute(
            "UPDATE learn_lessons SET rule = ?2, norm = ?3, updated_at = ?4 WHERE id = ?1",
            params![id, rule, norm(rule), now],
        )?;
    }
    if let Some(level) = level {
        changed += conn.execute(
            "UPDATE learn_lessons SET level = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, level.as_str(), now],
        )?;
    }
    if let Some((scope, target)) = scope {
        let s = scope.as_str();
        changed += conn.execute(
            "UPDATE learn_lessons SET scope = ?2, target = ?3, updated_at = ?4 WHERE id = ?1",
            params![id, s, target, now],
        )?;
    }
    if confirm {
        changed += conn.execute(
            "UPDATE learn_lessons SET pending = 0, updated_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
    }
    if let Some(check) = check {
        changed += conn.execute(
            "UPDATE learn_lessons SET check_json = ?2, updated_at = ?3 WHERE id = ?1",
            params![
                id,
                check.map(|c| serde_json::to_string(c).unwrap_or_default()),
                now
            ],
        )?;
    }
    Ok(changed > 0)
}

pub fn retire(conn: &Connection, id: i64) -> Result<bool, StoreError> {
    Ok(conn.execute(
        "UPDATE learn_lessons SET retired = 1, updated_at = ?2 WHERE id = ?1 AND retired = 0",
        params![id, crate::now_ms()],
    )? == 1)
}

/// Count an application (and a break); a break after the first moves the lesson up a level.
/// Returns the level it had and the one it has now.
pub fn count(conn: &Connection, id: i64, broken: bool) -> Result<(Level, Level), StoreError> {
    let (level, breaks): (String, i64) = conn.query_row(
        "SELECT level, broken FROM learn_lessons WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let was = Level::parse(&level);
    let now = if broken && breaks >= 1 {
        was.up().unwrap_or(was)
    } else {
        was
    };
    conn.execute(
        "UPDATE learn_lessons SET applied = applied + 1, broken = broken + ?2, level = ?3, updated_at = ?4 WHERE id = ?1",
        params![id, broken as i64, now.as_str(), crate::now_ms()],
    )?;
    Ok((was, now))
}

/// A signal: a correction, a denied call, an edited approval.
pub fn signal(
    conn: &Connection,
    kind: &str,
    thread: Option<&str>,
    turn: Option<&str>,
    text: &str,
    lesson: Option<i64>,
) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO learn_signals (kind, thread, turn, text, lesson, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![kind, thread, turn, text, lesson, crate::now_ms()],
    )?;
    Ok(conn.last_insert_rowid())
}

/// A signal as `learn.signals` lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Signal {
    pub id: i64,
    /// `correction`, `remember`, `denied`, `edited`, `refused` or `reverted`.
    pub kind: String,
    pub thread: Option<String>,
    pub turn: Option<String>,
    /// What was said or done (credentials masked).
    pub text: String,
    /// The lesson it taught, if any.
    pub lesson: Option<i64>,
    pub at: i64,
}

/// The newest `limit` signals, newest first.
pub fn signals(conn: &Connection, limit: usize) -> Result<Vec<Signal>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, kind, thread, turn, text, lesson, at FROM learn_signals ORDER BY id DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], |r| {
        Ok(Signal {
            id: r.get(0)?,
            kind: r.get(1)?,
            thread: r.get(2)?,
            turn: r.get(3)?,
            text: r.get(4)?,
            lesson: r.get(5)?,
            at: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
