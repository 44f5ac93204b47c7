//! `recall.search`: full-text search over every turn with FTS5, best first.

use rusqlite::params_from_iter;
use serde::Serialize;

use crate::store::StoreError;

/// One match.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Hit {
    /// The session (a Vyre thread's id is its session id).
    pub thread: String,
    /// The turn: a person's prompt by its uuid, Claude's reply by its message id.
    pub turn: String,
    pub uuid: String,
    pub role: String,
    /// The words around the match, the matched terms in `[` `]`.
    pub snippet: String,
    pub at: Option<i64>,
    /// FTS5's bm25: lower is better.
    pub rank: f64,
    pub title: Option<String>,
    pub cwd: Option<String>,
}

/// A person's words as an FTS5 query: every word must appear (in any order); the syntax of
/// FTS5 (quotes, `NEAR`, `*`, column filters) is not theirs to trip over, so each word is quoted.
pub fn fts_query(q: &str) -> Option<String> {
    let words: Vec<String> = q
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Search, optionally only within `sessions`.
pub fn search(
    c: &rusqlite::Connection,
    query: &str,
    sessions: Option<&[String]>,
    limit: usize,
) -> Result<Vec<Hit>, StoreError> {
    let mut sql = String::from(
        "SELECT t.session, t.key, t.uuid, t.role, snippet(recall_fts, 0, '[', ']', '…', 12), t.at,
                bm25(recall_fts), s.title, s.cwd
         FROM recall_fts
         JOIN recall_turns t ON t.id = recall_fts.rowid
         LEFT JOIN recall_sessions s ON s.session = t.session
         WHERE recall_fts MATCH ?1",
    );
    let mut args: Vec<String> = vec![query.to_string()];
    if let Some(list) = sessions {
        if list.is_empty() {
            return Ok(vec![]);
        }
        sql.push_str(" AND t.session IN (");
        for (i, s) in list.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("?{}", i + 2));
            args.push(s.clone());
        }
        sql.push(')');
    }
    sql.push_str(&format!(" ORDER BY bm25(recall_fts) LIMIT {limit}"));
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args.iter()), |r| {
        Ok(Hit {
            thread: r.get(0)?,
            turn: r.get(1)?,
            uuid: r.get(2)?,
            role: r.get(3)?,
            snippet: r.get(4)?,
            at: r.get(5)?,
            rank: r.get(6)?,
            title: r.get(7)?,
            cwd: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persons_words_become_a_safe_query() {
        assert_eq!(
            fts_query("zebra crossing").as_deref(),
            Some("\"zebra\" \"crossing\"")
        );
        assert_eq!(
            fts_query("NEAR(\"x\" y) OR col:z*").as_deref(),
            Some("\"NEAR\" \"x\" \"y\" \"OR\" \"col\" \"z\"")
        );
        assert_eq!(fts_query("don't").as_deref(), Some("\"don't\""));
        assert_eq!(fts_query("  ** \"\" "), None);
    }
}
