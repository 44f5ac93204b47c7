//! `recall.turns`: the turns recall has read, in the order it read them, for the modules that
//! learn from them (the memory's curator). A cursor, not a search: each caller keeps where it
//! stopped and asks for what came after.

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kernel::store::StoreError;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnsInput {
    /// Only turns read after this one (a `cursor` from an earlier answer); default: from the
    /// first.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub after: Option<i64>,
    /// At most this many (1 to 1000, default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadTurn {
    /// Its place in recall's reading: pass the last one as `after` for the next.
    pub cursor: i64,
    pub thread: String,
    /// A prompt's uuid, or a reply's message id.
    pub key: String,
    pub role: String,
    /// Its text, at most [`TEXT_CAP`] bytes of it.
    pub text: String,
    pub at: Option<i64>,
}

/// The most of one turn's text handed on: a 43 MB line has been seen in the wild.
pub const TEXT_CAP: usize = 64 * 1024;

pub fn after(
    conn: &rusqlite::Connection,
    after: i64,
    limit: u32,
) -> Result<Vec<ReadTurn>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, session, key, role, substr(text, 1, ?3), at FROM recall_turns
         WHERE id > ?1 ORDER BY id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit, TEXT_CAP as i64], |r| {
        Ok(ReadTurn {
            cursor: r.get(0)?,
            thread: r.get(1)?,
            key: r.get(2)?,
            role: r.get(3)?,
            text: r.get(4)?,
            at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}
