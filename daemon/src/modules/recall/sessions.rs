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

/// A session is listed once something was said in it or it was named: a transcript that holds
/// only lines without words (a readied spare's held-back turn, ADR 0032) is no session yet.
const SAID: &str = "(s.turns > 0 OR s.title IS NOT NULL OR s.summary IS NOT NULL)";

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
        (false, _) => format!("{SELECT} WHERE {SAID} ORDER BY COALESCE(s.last_at, 0) DESC"),
        // Asked for none of an empty list: nothing.
        (true, true) => return Ok(Vec::new()),
        (true, false) => format!(
            "{SELECT} WHERE {SAID} AND ({}) ORDER BY COALESCE(s.last_at, 0) DESC",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_where_nothing_was_said_is_no_session_yet() {
        let mut c = rusqlite::Connection::open_in_memory().unwrap();
        crate::kernel::store::migrate(&mut c, "recall", crate::modules::recall::rows::MIGRATIONS)
            .unwrap();
        for (session, cwd, turns, title) in [
            ("spoke", Some("/w"), 2, None),
            ("named", None, 0, Some("a name")),
            ("readied", None, 0, None),
            ("readied-here", Some("/w"), 0, None),
        ] {
            c.execute(
                "INSERT INTO recall_sessions (session, path, cwd, turns, title) VALUES (?1, ?1, ?2, ?3, ?4)",
                rusqlite::params![session, cwd, turns, title],
            )
            .unwrap();
        }
        let names = |input: &SessionsInput| -> Vec<String> {
            let mut v: Vec<String> = list(&c, input)
                .unwrap()
                .into_iter()
                .map(|s| s.thread)
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&SessionsInput::default()), ["named", "spoke"]);
        let here = SessionsInput {
            folders: Some(vec!["/w".into()]),
            threads: Some(vec!["readied".into(), "named".into()]),
        };
        assert_eq!(names(&here), ["named", "spoke"]);
    }
}
