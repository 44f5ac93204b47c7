//! `recall.search`: full-text search over every turn with FTS5, best first.

use rusqlite::params_from_iter;
use rusqlite::types::Value;
use serde::Serialize;

use crate::kernel::store::StoreError;

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

/// The most distinct words a query is made of; the rest are ignored. FTS5's cost grows faster
/// than the number of terms (a 40,000-word query took seconds, a 900 KB one minutes), so a
/// pasted page costs what its first words cost. The harness's memory hook sends a prompt's
/// first words only.
pub const MAX_WORDS: usize = 64;

/// A person's words as an FTS5 query: every word must appear (in any order); the syntax of
/// FTS5 (quotes, `NEAR`, `*`, column filters) is not theirs to trip over, so each word is quoted.
/// At most [`MAX_WORDS`] distinct words, the first ones.
pub fn fts_query(q: &str) -> Option<String> {
    let words = quoted_words(q, 0);
    (!words.is_empty()).then(|| words.join(" "))
}

/// The same words, any one of which may match (for context drawn from a whole prompt). Short
/// words are left out: they match everything and rank nothing.
pub fn fts_query_any(q: &str) -> Option<String> {
    // Quoted, so six letters are eight characters.
    let words = quoted_words(q, 8);
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// The first [`MAX_WORDS`] distinct words of `q` of at least `min` characters (quotes
/// included), each quoted. One pass over `q`, stopping once enough are found.
fn quoted_words(q: &str, min: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    q.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .filter(|w| w.chars().count() >= min)
        .filter(|w| seen.insert(w.clone()))
        .take(MAX_WORDS)
        .collect()
}

/// How many matches a query is ranked over at most. A query matching more turns than this is
/// made of words found nearly everywhere, whose bm25 weight is close to nothing; it is ranked
/// among its newest `BROAD` matches, which keeps its cost that of a selective query (ADR 0007).
pub const BROAD: usize = 2000;

/// Search, optionally only within `sessions`. The best `limit` matches are ranked first (bm25 over
/// the index alone); only those are joined to their turns and given a snippet, which keeps a
/// word found in tens of thousands of turns from costing a join and a snippet each.
pub fn search(
    c: &rusqlite::Connection,
    query: &str,
    sessions: Option<&[String]>,
    limit: usize,
) -> Result<Vec<Hit>, StoreError> {
    let mut args: Vec<Value> = vec![Value::Text(query.to_string())];
    let mut filter = String::from("recall_fts MATCH ?1");
    if let Some(list) = sessions {
        if list.is_empty() {
            return Ok(vec![]);
        }
        filter.push_str(" AND rowid IN (SELECT id FROM recall_turns WHERE session IN (");
        for (i, s) in list.iter().enumerate() {
            if i > 0 {
                filter.push(',');
            }
            filter.push_str(&format!("?{}", i + 2));
            args.push(Value::Text(s.clone()));
        }
        filter.push_str("))");
    }
    // Walking the matches newest first costs no ranking: the `BROAD`-th newest, when there is
    // one, is where a broad query's candidates end.
    let cut: Option<i64> = {
        let sql = format!(
            "SELECT rowid FROM recall_fts WHERE {filter} ORDER BY rowid DESC LIMIT 1 OFFSET {}",
            BROAD - 1
        );
        let mut stmt = c.prepare_cached(&sql)?;
        let mut rows = stmt.query(params_from_iter(args.iter()))?;
        rows.next()?.map(|r| r.get(0)).transpose()?
    };
    let bound = match cut {
        Some(cut) => {
            args.push(Value::Integer(cut));
            format!(" AND rowid >= ?{}", args.len())
        }
        None => String::new(),
    };
    let sql = format!(
        "SELECT rowid, bm25(recall_fts) FROM recall_fts WHERE {filter}{bound} ORDER BY bm25(recall_fts) LIMIT {limit}"
    );
    let top: Vec<(i64, f64)> = {
        let mut stmt = c.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(args.iter()), |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        rows.collect::<Result<_, _>>()?
    };
    let mut detail = c.prepare_cached(
        "SELECT t.session, t.key, t.uuid, t.role, t.at, s.title, s.cwd,
                (SELECT snippet(recall_fts, 0, '[', ']', '…', 12) FROM recall_fts WHERE recall_fts MATCH ?1 AND rowid = ?2)
         FROM recall_turns t LEFT JOIN recall_sessions s ON s.session = t.session
         WHERE t.id = ?2",
    )?;
    let mut hits = Vec::with_capacity(top.len());
    for (rowid, rank) in top {
        let hit = detail.query_row(rusqlite::params![query, rowid], |r| {
            Ok(Hit {
                thread: r.get(0)?,
                turn: r.get(1)?,
                uuid: r.get(2)?,
                role: r.get(3)?,
                at: r.get(4)?,
                title: r.get(5)?,
                cwd: r.get(6)?,
                snippet: r.get::<_, Option<String>>(7)?.unwrap_or_default(),
                rank,
            })
        });
        match hit {
            Ok(h) => hits.push(h),
            // Gone between the two reads (a session re-read from the start): skip it.
            Err(rusqlite::Error::QueryReturnedNoRows) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_query_keeps_its_first_distinct_words() {
        let huge: String = (0..150_000).map(|i| format!("word{i} ")).collect();
        assert!(huge.len() > 900_000);
        let q = fts_query(&huge).unwrap();
        assert_eq!(q.split(' ').count(), MAX_WORDS);
        assert!(q.starts_with("\"word0\" \"word1\""));
        let any = fts_query_any(&huge).unwrap();
        assert_eq!(any.split(" OR ").count(), MAX_WORDS);
        assert!(
            any.starts_with("\"word10\" OR"),
            "only words of 6 letters or more"
        );
    }

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
        assert_eq!(
            fts_query_any("what about the walrus budget?").as_deref(),
            Some("\"walrus\" OR \"budget\"")
        );
        assert_eq!(fts_query_any("a b c"), None);
        // Repeats count once.
        assert_eq!(
            fts_query("zebra zebra Zebra").as_deref(),
            Some("\"zebra\" \"Zebra\"")
        );
    }

    fn store_with(turns: &[&str]) -> rusqlite::Connection {
        let mut c = rusqlite::Connection::open_in_memory().unwrap();
        crate::kernel::store::migrate(&mut c, "recall", crate::modules::recall::rows::MIGRATIONS)
            .unwrap();
        let tx = c.transaction().unwrap();
        for (i, text) in turns.iter().enumerate() {
            tx.execute(
                "INSERT INTO recall_turns (session, key, uuid, role, text, at) VALUES ('s', ?1, ?1, 'user', ?2, ?3)",
                rusqlite::params![format!("k{i}"), text, i as i64],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO recall_fts(rowid, text) VALUES (last_insert_rowid(), ?1)",
                [text],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        c
    }

    #[test]
    fn a_selective_query_is_ranked_over_every_match() {
        // The best match is the oldest turn; a query with few matches still finds it first.
        let mut turns = vec!["walrus walrus walrus"];
        turns.extend(std::iter::repeat_n(
            "a long turn about many things and a walrus somewhere",
            50,
        ));
        let c = store_with(&turns);
        let hits = search(&c, "\"walrus\"", None, 3).unwrap();
        assert_eq!(hits.len(), 3);
        assert_eq!(hits[0].turn, "k0");
    }

    #[test]
    fn a_broad_query_is_ranked_among_its_newest_matches() {
        // More than BROAD turns hold the word: the oldest, best by bm25, is beyond the newest
        // BROAD and is not ranked; every hit is among the newest BROAD and the limit is filled.
        let mut turns = vec!["common common common"];
        turns.extend(std::iter::repeat_n(
            "a long turn about many things where the word common shows once",
            BROAD + 10,
        ));
        let c = store_with(&turns);
        let hits = search(&c, "\"common\"", None, 200).unwrap();
        assert_eq!(hits.len(), 200);
        let oldest_ranked = turns.len() - BROAD;
        for h in &hits {
            let n: usize = h.turn[1..].parse().unwrap();
            assert!(
                n >= oldest_ranked,
                "{} is older than the newest {BROAD}",
                h.turn
            );
        }
        // The fence still applies to a broad query.
        assert!(
            search(&c, "\"common\"", Some(&["other".into()]), 5)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            search(&c, "\"common\"", Some(&["s".into()]), 5)
                .unwrap()
                .len(),
            5
        );
    }
}
