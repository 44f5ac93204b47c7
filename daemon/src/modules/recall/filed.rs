//! What watchers filed into projects (spec 7.6; issue 23), found by its words: `recall.filed`.
//!
//! Recall never reads the watchers' own rows: each filed item is told as an event of the
//! watcher's `watch.<name>.*` type (from the `watchers` module, with its item's id, title, body
//! and link), and recall keeps its own copy of each with an FTS5 index. At start it replays what
//! was told since its mark (the last event it had read), then follows live; an item told twice
//! (the replay and the live follower overlap) is kept once, by its event's id.

use std::sync::Arc;

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::kernel::events::{Event, Filter};
use crate::kernel::module::Ctx;
use crate::kernel::store::StoreError;

/// Recall's copy of the filed items and its mark in the event log (migration 5).
pub const SQL: &str = "CREATE TABLE recall_filed (
        event INTEGER PRIMARY KEY,
        watcher TEXT NOT NULL,
        item INTEGER NOT NULL,
        project TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT,
        url TEXT,
        at INTEGER NOT NULL
    );
    CREATE INDEX recall_filed_project ON recall_filed(project, event);
    CREATE VIRTUAL TABLE recall_filed_fts USING fts5(
        title, body, content = 'recall_filed', content_rowid = 'event',
        tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER recall_filed_ai AFTER INSERT ON recall_filed BEGIN
        INSERT INTO recall_filed_fts(rowid, title, body) VALUES (new.event, new.title, new.body);
    END;
    CREATE TABLE recall_marks (key TEXT PRIMARY KEY, value INTEGER NOT NULL);";

/// The module whose events these are: another module cannot file items under a watcher's name.
const FROM: &str = "watchers";
const MARK: &str = "filed";

/// One filed item found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Filed {
    /// The watcher that filed it.
    pub watcher: String,
    /// Its id in the watcher's items (`watchers.items`).
    pub item: i64,
    pub project: String,
    pub title: String,
    /// The words around the match, the matched terms in `[` `]`.
    pub snippet: String,
    pub url: Option<String>,
    /// When it was filed (ms since the epoch).
    pub at: i64,
}

#[derive(Deserialize)]
struct Told {
    watcher: String,
    item: i64,
    project: String,
    title: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    url: Option<String>,
}

/// Keep what the watchers file: what was told since the mark (while vyred was down), then each
/// as it comes.
pub fn follow(ctx: &Ctx) {
    let live = Filter {
        types: vec!["watch.*".into()],
        ..Default::default()
    };
    let c = ctx.clone();
    ctx.events()
        .keep_up(live, FROM, "watch.", mark, move |events, read| {
            let c = c.clone();
            async move { keep(&c, events, read).await }
        });
}

/// Keep `events`' items, and move the mark to `read` when given (and further than it was).
async fn keep(ctx: &Ctx, events: Vec<Arc<Event>>, read: Option<i64>) {
    let kept = ctx
        .store()
        .write(move |tx| {
            for e in &events {
                if e.source != FROM {
                    continue;
                }
                let Ok(t) = serde_json::from_value::<Told>(e.payload_value()) else {
                    continue;
                };
                tx.conn().execute(
                    "INSERT OR IGNORE INTO recall_filed (event, watcher, item, project, title, body, url, at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![e.id, t.watcher, t.item, t.project, t.title, t.body, t.url, e.at],
                )?;
            }
            if let Some(read) = read {
                tx.conn().execute(
                    "INSERT INTO recall_marks (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
                    params![MARK, read],
                )?;
            }
            Ok(())
        })
        .await;
    if let Err(e) = kept {
        tracing::warn!(error = %e, "filed items could not be kept for search");
    }
}

/// The last event read for filed items.
pub fn mark(c: &rusqlite::Connection) -> Result<i64, StoreError> {
    Ok(c.query_row(
        "SELECT COALESCE((SELECT value FROM recall_marks WHERE key = ?1), 0)",
        [MARK],
        |r| r.get(0),
    )?)
}

/// Items whose title or body match `query` (an FTS5 query), best first; only `projects`' when
/// given.
pub fn search(
    c: &rusqlite::Connection,
    query: &str,
    projects: Option<&[String]>,
    limit: usize,
) -> Result<Vec<Filed>, StoreError> {
    let only = projects.map(|p| serde_json::to_string(p).unwrap_or_default());
    let mut stmt = c.prepare_cached(
        "SELECT f.watcher, f.item, f.project, f.title,
                snippet(recall_filed_fts, -1, '[', ']', '…', 16), f.url, f.at
         FROM recall_filed_fts JOIN recall_filed f ON f.event = recall_filed_fts.rowid
         WHERE recall_filed_fts MATCH ?1
           AND (?2 IS NULL OR f.project IN (SELECT value FROM json_each(?2)))
         ORDER BY bm25(recall_filed_fts, 2.0, 1.0), f.event DESC
         LIMIT ?3",
    )?;
    let found = stmt
        .query_map(params![query, only, limit as i64], |r| {
            Ok(Filed {
                watcher: r.get(0)?,
                item: r.get(1)?,
                project: r.get(2)?,
                title: r.get(3)?,
                snippet: r.get(4)?,
                url: r.get(5)?,
                at: r.get(6)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(found)
}

/// A told item's payload as recall reads it, for the tests of the shape the watchers send.
#[cfg(test)]
fn told(v: serde_json::Value) -> Option<Told> {
    serde_json::from_value(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> rusqlite::Connection {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(SQL).unwrap();
        c
    }

    fn file(c: &rusqlite::Connection, event: i64, project: &str, title: &str, body: &str) {
        c.execute(
            "INSERT OR IGNORE INTO recall_filed (event, watcher, item, project, title, body, url, at)
             VALUES (?1, 'news', ?1, ?2, ?3, ?4, NULL, 0)",
            params![event, project, title, body],
        )
        .unwrap();
    }

    #[test]
    fn items_are_found_by_their_words_within_the_projects_given_and_kept_once() {
        let c = db();
        file(
            &c,
            1,
            "Site",
            "Release 4.2 is out",
            "the changelog names the parser",
        );
        file(&c, 2, "Other", "Parser rewrite merged", "");
        file(&c, 2, "Site", "a replay of event 2", "");
        let q = crate::modules::recall::search::fts_query("parser").unwrap();
        let all = search(&c, &q, None, 10).unwrap();
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(
            all[0].title, "Parser rewrite merged",
            "a title match ranks first"
        );
        assert!(all[1].snippet.contains("[parser]"), "{:?}", all[1]);
        let site = search(&c, &q, Some(&["Site".to_string()]), 10).unwrap();
        assert_eq!(site.len(), 1);
        assert_eq!(site[0].project, "Site");
        assert!(search(&c, &q, Some(&[]), 10).unwrap().is_empty());
    }

    #[test]
    fn a_told_item_is_read_from_the_watchers_payload() {
        let t = told(serde_json::json!({
            "watcher": "news", "project": "Site", "item": 3, "title": "T", "url": null, "body": "b"
        }))
        .unwrap();
        assert_eq!(
            (t.watcher.as_str(), t.item, t.body.as_deref()),
            ("news", 3, Some("b"))
        );
        assert!(told(serde_json::json!({ "watcher": "news" })).is_none());
    }
}
