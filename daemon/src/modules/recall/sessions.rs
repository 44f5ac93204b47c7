//! `recall.sessions`: every session found in the transcripts, or only those that belong to a
//! project (ran in its folders, or picked into it). A session's every tool call that needs its
//! projects' threads asks the second kind (through `projects.threads`), so it must cost what
//! the project holds, not what the whole history holds: the folders are looked up as ranges of
//! an index on `cwd` ([`folders::ranges`]), then checked by whole names.

use std::collections::HashSet;

use rusqlite::types::Value as Sql;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{SessionInfo, provider_of};
use crate::kernel::folders::{self, within};
use crate::kernel::store::StoreError;

/// Which sessions to list: every one, or (given `folders` or `threads`) those in either.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsInput {
    /// Only the sessions that ran in one of these folders or inside one (a project's folders),
    /// and those of `threads`.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub folders: Option<Vec<String>>,
    /// Only these sessions, and those of `folders`.
    #[serde(default)]
    #[schemars(length(max = 10000))]
    pub threads: Option<Vec<String>>,
}

impl SessionsInput {
    fn filters(&self) -> bool {
        self.folders.is_some() || self.threads.is_some()
    }
}

const SELECT: &str = "SELECT s.session, s.path, s.cwd, COALESCE(s.title, s.summary), s.first_text, s.first_at, s.last_at, s.turns, s.entrypoint, f.written_at
    FROM recall_sessions s LEFT JOIN recall_files f ON f.path = s.path";

/// The sessions `input` asks for, newest activity first.
pub fn list(
    conn: &rusqlite::Connection,
    input: &SessionsInput,
) -> Result<Vec<SessionInfo>, StoreError> {
    let under: Vec<&str> = input.folders.iter().flatten().map(String::as_str).collect();
    let mut params: Vec<Sql> = Vec::new();
    let mut wheres = folders::ranges("s.cwd", &under, &mut params);
    if let Some(threads) = &input.threads {
        wheres.push(format!(
            "s.session IN (SELECT value FROM json_each(?{}))",
            params.len() + 1
        ));
        params.push(Sql::Text(
            serde_json::to_string(threads).unwrap_or_default(),
        ));
    }
    let sql = match (input.filters(), wheres.is_empty()) {
        (false, _) => format!("{SELECT} ORDER BY COALESCE(s.last_at, 0) DESC"),
        // Asked for none of an empty list: nothing.
        (true, true) => return Ok(Vec::new()),
        (true, false) => format!(
            "{SELECT} WHERE {} ORDER BY COALESCE(s.last_at, 0) DESC",
            wheres.join(" OR ")
        ),
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
        Ok(SessionInfo {
            thread: r.get(0)?,
            path: r.get(1)?,
            cwd: r.get(2)?,
            title: r.get(3)?,
            first_text: r.get(4)?,
            first_at: r.get(5)?,
            last_at: r.get(6)?,
            turns: r.get(7)?,
            provider: provider_of(r.get::<_, Option<String>>(8)?.as_deref()).into(),
            entrypoint: r.get(8)?,
            written_at: r.get(9)?,
        })
    })?;
    let mut found = rows.collect::<Result<Vec<_>, _>>()?;
    if input.filters() {
        let picked: HashSet<&str> = input.threads.iter().flatten().map(String::as_str).collect();
        found.retain(|s| {
            picked.contains(s.thread.as_str())
                || s.cwd.as_deref().is_some_and(|c| within(c, &under))
        });
    }
    Ok(found)
}
