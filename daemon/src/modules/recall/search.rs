//! `recall.search`: full-text search over every turn with FTS5, best first, and the fusion of
//! its ranking with dense recall's (reciprocal rank fusion: a turn near the top of either list
//! ranks high, one near the top of both ranks highest).

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
    /// FTS5's bm25 when the words found it: lower is better.
    pub rank: Option<f64>,
    /// The cosine similarity of its meaning to the query's, when the meaning found it (or was
    /// asked): 1 is the same meaning, 0 unrelated.
    pub similarity: Option<f32>,
    /// Which halves of recall found it: `words` (full text), `meaning` (dense), or both.
    pub found: Vec<Half>,
    pub title: Option<String>,
    pub cwd: Option<String>,
}

/// A half of recall.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Half {
    Words,
    Meaning,
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
    let top = ranked(c, query, sessions, limit)?;
    let found: Vec<Found> = top
        .into_iter()
        .map(|(id, rank)| Found {
            id,
            rank: Some(rank),
            similarity: None,
        })
        .collect();
    details(c, Some(query), &found)
}

/// A turn one half or both found, before it is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub id: i64,
    pub rank: Option<f64>,
    pub similarity: Option<f32>,
}

/// How far down a list a hit still counts in the fusion: the constant of reciprocal rank
/// fusion, as its authors measured it (Cormack et al., 2009).
const FUSION_K: f64 = 60.0;

/// The least cosine similarity at which the meaning counts a turn as found: below it the model
/// says "unrelated" (all-MiniLM-L6-v2 puts unrelated sentences between about -0.1 and 0.15),
/// and a search would otherwise always fill its list with whatever is least far.
pub const MIN_SIMILARITY: f32 = 0.15;

/// The words' ranking (best first) and the meaning's (closest first) as one: each turn scores
/// 1/(K + its place) in each list that holds it, summed; the best `limit` come out. Meaning hits
/// under [`MIN_SIMILARITY`] are left out.
pub fn fuse(words: &[(i64, f64)], meaning: &[(i64, f32)], limit: usize) -> Vec<Found> {
    let mut by_id: std::collections::HashMap<i64, (f64, Found)> = std::collections::HashMap::new();
    // A turn's entry, with what its place in a list adds to its score.
    fn at(
        by_id: &mut std::collections::HashMap<i64, (f64, Found)>,
        id: i64,
        place: usize,
    ) -> &mut Found {
        let e = by_id.entry(id).or_insert((
            0.0,
            Found {
                id,
                rank: None,
                similarity: None,
            },
        ));
        e.0 += 1.0 / (FUSION_K + place as f64 + 1.0);
        &mut e.1
    }
    for (place, &(id, rank)) in words.iter().enumerate() {
        at(&mut by_id, id, place).rank = Some(rank);
    }
    let near = meaning.iter().filter(|m| m.1 >= MIN_SIMILARITY);
    for (place, &(id, sim)) in near.enumerate() {
        at(&mut by_id, id, place).similarity = Some(sim);
    }
    let mut all: Vec<(f64, Found)> = by_id.into_values().collect();
    // Ties (one list each, same place) go to the newer turn.
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.id.cmp(&a.1.id)));
    all.into_iter().take(limit).map(|(_, f)| f).collect()
}

/// The `limit` best matches of an FTS5 `query` by bm25 (lower is better), as turn ids.
pub fn ranked(
    c: &rusqlite::Connection,
    query: &str,
    sessions: Option<&[String]>,
    limit: usize,
) -> Result<Vec<(i64, f64)>, StoreError> {
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
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args.iter()), |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Characters of a turn shown for a hit the words did not find (no matched terms to centre on).
const OPENING_CHARS: i64 = 160;

/// The turns `found` names, in that order, each with a snippet: around the matched words of
/// `query` when it matches the turn, else its opening words.
pub fn details(
    c: &rusqlite::Connection,
    query: Option<&str>,
    found: &[Found],
) -> Result<Vec<Hit>, StoreError> {
    let mut detail = c.prepare_cached(
        "SELECT t.session, t.key, t.uuid, t.role, t.at, s.title, s.cwd,
                CASE WHEN ?1 IS NULL THEN NULL ELSE
                (SELECT snippet(recall_fts, 0, '[', ']', '…', 12) FROM recall_fts WHERE recall_fts MATCH ?1 AND rowid = ?2) END,
                substr(t.text, 1, ?3), length(t.text) > ?3
         FROM recall_turns t LEFT JOIN recall_sessions s ON s.session = t.session
         WHERE t.id = ?2",
    )?;
    let mut hits = Vec::with_capacity(found.len());
    for f in found {
        let hit = detail.query_row(rusqlite::params![query, f.id, OPENING_CHARS], |r| {
            let snippet = match r.get::<_, Option<String>>(7)? {
                Some(s) if !s.is_empty() => s,
                _ => {
                    let opening: String = r.get(8)?;
                    let opening = opening.split_whitespace().collect::<Vec<_>>().join(" ");
                    if r.get::<_, bool>(9)? {
                        format!("{opening}…")
                    } else {
                        opening
                    }
                }
            };
            let mut halves = Vec::new();
            if f.rank.is_some() {
                halves.push(Half::Words);
            }
            if f.similarity.is_some() {
                halves.push(Half::Meaning);
            }
            Ok(Hit {
                thread: r.get(0)?,
                turn: r.get(1)?,
                uuid: r.get(2)?,
                role: r.get(3)?,
                at: r.get(4)?,
                title: r.get(5)?,
                cwd: r.get(6)?,
                snippet,
                rank: f.rank,
                similarity: f.similarity,
                found: halves,
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
    fn fusion_ranks_a_turn_both_halves_found_first_and_says_who_found_what() {
        let words = [(10, -9.0), (11, -8.0), (12, -7.0)];
        let meaning = [(20, 0.8), (12, 0.7), (21, 0.6)];
        let fused = fuse(&words, &meaning, 10);
        let ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
        assert_eq!(ids[0], 12, "found by both: {ids:?}");
        assert_eq!(fused.len(), 5, "each turn once");
        let both = &fused[0];
        assert_eq!((both.rank, both.similarity), (Some(-7.0), Some(0.7)));
        // The firsts of each list tie; the newer turn goes first.
        assert_eq!(&ids[1..3], &[20, 10]);
        assert_eq!(fused[1].rank, None);
        assert_eq!(fused[2].similarity, None);
        assert_eq!(fuse(&words, &meaning, 2).len(), 2);
        let weak = fuse(&[], &[(30, 0.5), (31, MIN_SIMILARITY - 0.01)], 10);
        assert_eq!(
            weak.iter().map(|f| f.id).collect::<Vec<_>>(),
            vec![30],
            "the unrelated are left out"
        );
        assert_eq!(
            fuse(&words, &[], 10)
                .iter()
                .map(|f| f.id)
                .collect::<Vec<_>>(),
            vec![10, 11, 12],
            "words alone keep their order"
        );
    }

    #[test]
    fn a_turn_the_words_did_not_find_shows_its_opening_words() {
        let long = format!("the  opening   words {}", "x ".repeat(200));
        let c = store_with(&["a turn about walruses", &long]);
        let found = [
            Found {
                id: 2,
                rank: None,
                similarity: Some(0.5),
            },
            Found {
                id: 1,
                rank: None,
                similarity: Some(0.4),
            },
            Found {
                id: 99,
                rank: None,
                similarity: Some(0.3),
            },
        ];
        let hits = details(&c, Some("\"walruses\""), &found).unwrap();
        assert_eq!(hits.len(), 2, "a turn gone since is skipped");
        assert!(
            hits[0].snippet.starts_with("the opening words x x"),
            "{}",
            hits[0].snippet
        );
        assert!(hits[0].snippet.ends_with('…') && hits[0].snippet.chars().count() < 170);
        assert_eq!(hits[0].found, vec![Half::Meaning]);
        assert_eq!(
            hits[1].snippet, "a turn about [walruses]",
            "the words match it: their snippet"
        );
        let none = details(&c, None, &found[1..2]).unwrap();
        assert_eq!(none[0].snippet, "a turn about walruses");
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
