//! What a surface shows about a thread beside its state (issue 18): its title and where it came
//! from. A thread is titled by its first message a person (or the session that started it)
//! sent, never by one of Vyre's own prompts (`via: "internal"`); a fork starts with its
//! parent's title and names its parent; a person, or the session itself, may rename it
//! (`threads.rename`), and an empty name gives the automatic title back. Kept in
//! `threads_about`; every change is told by `thread.titled`.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::kernel::events::{Filter, NewEvent};
use crate::kernel::module::Ctx;
use crate::kernel::tools::ToolError;

/// A title from a message is its first line, at most this many characters.
const FROM_MESSAGE: usize = 80;
/// A name given by `threads.rename`, at most this many characters.
pub(crate) const NAMED_MAX: usize = 120;

/// A thread's title and lineage, as `threads.list` and `threads.get` show them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct About {
    /// The name given to it, else its first message's words (or its parent's title, for a
    /// fork); null before its first message.
    pub title: Option<String>,
    /// Whether `title` is a name a person or its session gave it.
    pub renamed: bool,
    /// The thread it was forked from.
    pub forked_from: Option<String>,
    /// The message it was forked at (none: the whole history).
    pub forked_at: Option<String>,
}

/// The title a message gives: its first line with words, spaces folded, cut to
/// [`FROM_MESSAGE`] characters.
pub fn title_from(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(cut(&fold(line), FROM_MESSAGE))
}

/// A name given by `threads.rename`: one line, spaces folded; `None` for an empty one (the
/// automatic title comes back).
pub fn name_from(text: &str) -> Result<Option<String>, ToolError> {
    let name = fold(text);
    if name.is_empty() {
        return Ok(None);
    }
    if name.chars().count() > NAMED_MAX {
        return Err(ToolError::invalid(format!(
            "a thread's name is at most {NAMED_MAX} characters"
        )));
    }
    Ok(Some(name))
}

/// Whitespace and control characters folded into single spaces.
fn fold(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out = out.trim_end().to_string();
    out.push('…');
    out
}

/// Whether a `thread.turn` or `thread.sent` carries Vyre's own words rather than a person's
/// (the timeline marks them `via: "internal"`), or nothing to title by.
pub fn is_internal(payload: &Value) -> bool {
    payload["via"] == "internal" || payload["internal"] == true
}

/// The rows of every thread (`None`) or of one.
pub fn load(
    c: &rusqlite::Connection,
    thread: Option<&str>,
) -> rusqlite::Result<HashMap<String, About>> {
    let mut stmt = c.prepare_cached(
        "SELECT thread, title, named, forked_from, forked_at FROM threads_about
         WHERE (?1 IS NULL OR thread = ?1)",
    )?;
    let rows = stmt.query_map([thread], about)?;
    rows.collect()
}

fn about(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, About)> {
    let named: Option<String> = r.get(2)?;
    Ok((
        r.get::<_, String>(0)?,
        About {
            renamed: named.is_some(),
            title: named.or(r.get(1)?),
            forked_from: r.get(3)?,
            forked_at: r.get(4)?,
        },
    ))
}

/// One thread's row (the default when it has none).
pub async fn of(ctx: &Ctx, thread: &str) -> Result<About, ToolError> {
    let t = thread.to_string();
    let mut all = ctx.store().read(move |c| Ok(load(c, Some(&t))?)).await?;
    Ok(all.remove(thread).unwrap_or_default())
}

/// Every thread's row.
pub async fn all(ctx: &Ctx) -> Result<HashMap<String, About>, ToolError> {
    Ok(ctx.store().read(|c| Ok(load(c, None)?)).await?)
}

/// The rows of these threads (a project's, for a short `threads.list`).
pub async fn some(ctx: &Ctx, threads: Vec<String>) -> Result<HashMap<String, About>, ToolError> {
    Ok(ctx
        .store()
        .read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT thread, title, named, forked_from, forked_at FROM threads_about
                 WHERE thread IN (SELECT value FROM json_each(?1))",
            )?;
            let ids = serde_json::to_string(&threads).unwrap_or_default();
            let rows = stmt.query_map([ids], about)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
        .await?)
}

fn titled(thread: &str, about: &About, source: &str) -> NewEvent {
    let mut payload = json!({ "title": about.title, "renamed": about.renamed, "source": source });
    if let Some(from) = &about.forked_from {
        payload["forked_from"] = json!(from);
        payload["forked_at"] = json!(about.forked_at);
    }
    NewEvent::new("thread.titled", payload).thread(thread)
}

/// Title `thread` by a message's words, when it has no title yet; whether it did.
pub async fn first_message(ctx: &Ctx, thread: &str, text: &str) -> Result<bool, ToolError> {
    let Some(title) = title_from(&crate::kernel::redact::mask(text)) else {
        return Ok(false);
    };
    let t = thread.to_string();
    Ok(ctx
        .store()
        .write(move |tx| {
            let changed = tx.conn().execute(
                "INSERT INTO threads_about (thread, title, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(thread) DO UPDATE SET title = excluded.title, updated_at = excluded.updated_at
                 WHERE threads_about.title IS NULL",
                params![t, title, crate::now_ms()],
            )?;
            if changed == 0 {
                return Ok(false);
            }
            let about = load(tx.conn(), Some(&t))?.remove(&t).unwrap_or_default();
            // A name given before the first message stays what is shown; nothing to tell.
            if !about.renamed {
                tx.emit(titled(&t, &about, "message"))?;
            }
            Ok(true)
        })
        .await?)
}

/// Name `thread` (`None`: give it back its automatic title); what it shows now.
pub async fn rename(
    ctx: &Ctx,
    thread: &str,
    name: Option<String>,
    by: &str,
) -> Result<About, ToolError> {
    let name = name.map(|n| crate::kernel::redact::mask(&n).into_owned());
    let (t, by) = (thread.to_string(), by.to_string());
    Ok(ctx
        .store()
        .write(move |tx| {
            tx.conn().execute(
                "INSERT INTO threads_about (thread, named, named_by, updated_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(thread) DO UPDATE SET named = excluded.named, named_by = excluded.named_by, updated_at = excluded.updated_at",
                params![t, name, name.as_ref().map(|_| by.clone()), crate::now_ms()],
            )?;
            let about = load(tx.conn(), Some(&t))?.remove(&t).unwrap_or_default();
            tx.emit(titled(&t, &about, "rename"))?;
            Ok(about)
        })
        .await?)
}

/// `thread` was forked from `from` (at message `at`): it starts with its parent's title.
pub async fn forked(
    ctx: &Ctx,
    thread: &str,
    from: &str,
    at: Option<String>,
) -> Result<About, ToolError> {
    let (t, f) = (thread.to_string(), from.to_string());
    Ok(ctx
        .store()
        .write(move |tx| {
            let parent: Option<String> = tx
                .conn()
                .query_row(
                    "SELECT COALESCE(named, title) FROM threads_about WHERE thread = ?1",
                    [&f],
                    |r| r.get(0),
                )
                .optional()?
                .flatten();
            tx.conn().execute(
                "INSERT INTO threads_about (thread, title, forked_from, forked_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(thread) DO UPDATE SET title = COALESCE(threads_about.title, excluded.title),
                   forked_from = excluded.forked_from, forked_at = excluded.forked_at, updated_at = excluded.updated_at",
                params![t, parent, f, at, crate::now_ms()],
            )?;
            let about = load(tx.conn(), Some(&t))?.remove(&t).unwrap_or_default();
            tx.emit(titled(&t, &about, "fork"))?;
            Ok(about)
        })
        .await?)
}

/// Title each thread by the first message a person or its starter sends it: follows
/// `thread.turn` (a new turn) and `thread.sent` (words steered in, or sent at once), passing
/// over Vyre's own prompts. Runs until vyred stops.
pub fn follow(ctx: &Ctx) {
    let filter = Filter {
        types: vec!["thread.turn".into(), "thread.sent".into()],
        ..Filter::default()
    };
    let c = ctx.clone();
    ctx.events().on(filter, move |event| {
        let c = c.clone();
        async move {
            let Some(thread) = event.thread.clone() else {
                return;
            };
            let payload = event.payload_value();
            if is_internal(&payload) {
                return;
            }
            let Some(text) = payload["text"].as_str() else {
                return;
            };
            if let Err(e) = first_message(&c, &thread, text).await {
                tracing::warn!(thread, error = %e, "the thread's title was not recorded");
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_line_with_words() {
        assert_eq!(
            title_from("  \n  fix the   tests\nplease"),
            Some("fix the tests".into())
        );
        assert_eq!(title_from("   \n\t"), None);
        let long = "word ".repeat(40);
        let t = title_from(&long).unwrap();
        assert!(t.chars().count() <= FROM_MESSAGE, "{t}");
        assert!(t.ends_with("word…"), "{t}");
        assert_eq!(
            title_from(&"ab ".repeat(40)).unwrap().chars().last(),
            Some('…')
        );
        assert_eq!(
            title_from("é".repeat(100).as_str())
                .unwrap()
                .chars()
                .count(),
            FROM_MESSAGE
        );
    }

    #[test]
    fn a_name_is_one_line_and_empty_gives_the_title_back() {
        assert_eq!(
            name_from(" the\nwalrus\tplan ").unwrap(),
            Some("the walrus plan".into())
        );
        assert_eq!(name_from("  \n ").unwrap(), None);
        assert_eq!(name_from("a\u{7}b").unwrap(), Some("a b".into()));
        let e = name_from(&"x".repeat(NAMED_MAX + 1)).unwrap_err();
        assert_eq!(&*e.code, "invalid_input");
        assert!(name_from(&"x".repeat(NAMED_MAX)).is_ok());
    }

    #[test]
    fn vyres_own_prompts_are_told_apart() {
        assert!(is_internal(&json!({ "text": "greet", "via": "internal" })));
        assert!(is_internal(&json!({ "text": "greet", "internal": true })));
        assert!(!is_internal(&json!({ "text": "hi", "via": "steer" })));
        assert!(!is_internal(&json!({ "text": "hi" })));
    }

    #[test]
    fn rows_read_back_with_the_name_over_the_title() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        for m in super::super::rows::MIGRATIONS {
            c.execute_batch(m.sql).unwrap();
        }
        c.execute_batch(
            "INSERT INTO threads_about (thread, title, updated_at) VALUES ('a', 'first words', 1);
             INSERT INTO threads_about (thread, title, named, named_by, updated_at) VALUES ('b', 'first', 'My name', 'device:x', 1);
             INSERT INTO threads_about (thread, title, forked_from, forked_at, updated_at) VALUES ('c', 'first words', 'a', 'u1', 1);",
        )
        .unwrap();
        let all = load(&c, None).unwrap();
        assert_eq!(
            all["a"],
            About {
                title: Some("first words".into()),
                ..About::default()
            }
        );
        assert_eq!(all["b"].title.as_deref(), Some("My name"));
        assert!(all["b"].renamed);
        assert_eq!(all["c"].forked_from.as_deref(), Some("a"));
        assert_eq!(all["c"].forked_at.as_deref(), Some("u1"));
        assert_eq!(load(&c, Some("b")).unwrap().len(), 1);
    }
}
