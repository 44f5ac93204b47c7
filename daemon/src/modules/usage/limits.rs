//! The subscription's windows (issue 25): what Claude Code said of them in its
//! `rate_limit_event` (carried by `thread.limit`): each window's status, how much of it is used
//! and when it resets, the newest word kept per window; when a thread went on with the API key
//! (`thread.fallback`), and when an API key's own limit refused a turn. `usage.limits` reads
//! them back for the app's meter and Lumen.

use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::kernel::events::Event;
use crate::kernel::store::StoreError;

/// One of the subscription's windows as last reported.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Window {
    /// The CLI's name for it: `five_hour`, `seven_day`, `seven_day_opus`, ...
    pub kind: String,
    /// `allowed`, `allowed_warning` or `rejected` as last reported; `reset` once the window's
    /// reset time has passed (what is used of the new window is not known until the next turn).
    pub status: String,
    /// How much of the window is used, 0 to 1, when the CLI said (never after a reset).
    pub utilization: Option<f64>,
    /// When the window resets (ms since the epoch), when the CLI said.
    pub resets_at: Option<i64>,
    /// When this was last reported (ms).
    pub at: i64,
    /// The thread whose turn reported it.
    pub thread: Option<String>,
}

/// A thread that went on with the API key at the subscription's limit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Fallback {
    pub thread: String,
    /// Until when the API key is used (ms).
    pub until: i64,
    pub at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Limits {
    /// The windows the CLI has reported, the five-hour window first; empty for an API key,
    /// which has none (Claude Code says them only for a subscription's sign-in).
    pub windows: Vec<Window>,
    /// The newest fallback to the API key still in force, if any.
    pub fallback: Option<Fallback>,
    /// When an API key's rate limit last refused a turn (ms), if it did in the last hour.
    pub api_limited_at: Option<i64>,
}

pub const MIGRATION_SQL: &str = "CREATE TABLE usage_windows (
        kind TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        utilization REAL,
        resets_at INTEGER,
        at INTEGER NOT NULL,
        thread TEXT
    );
    CREATE TABLE usage_fallbacks (
        thread TEXT NOT NULL,
        until INTEGER NOT NULL,
        at INTEGER NOT NULL
    );
    CREATE TABLE usage_api_limited (at INTEGER NOT NULL, thread TEXT);";

/// The windows one `rate_limit_info` reports: each of `unifiedWindows` when given (Claude
/// Code 2.1.3xx), else the one its `rateLimitType` names.
pub fn windows_of(info: &Value) -> Vec<(String, String, Option<f64>, Option<i64>)> {
    let seconds = |v: &Value| v.as_i64().map(|s| s.saturating_mul(1000));
    let ratio = |v: &Value| {
        v.as_f64()
            .filter(|u| u.is_finite())
            .map(|u| u.clamp(0.0, 1.0))
    };
    let status = |v: &Value| {
        v.as_str()
            .filter(|s| matches!(*s, "allowed" | "allowed_warning" | "rejected"))
            .unwrap_or("allowed")
            .to_string()
    };
    let name_ok = |k: &str| {
        !k.is_empty() && k.len() <= 40 && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    if let Some(all) = info["unifiedWindows"].as_object() {
        return all
            .iter()
            .filter(|(k, _)| name_ok(k))
            .take(8)
            .map(|(k, w)| {
                (
                    k.clone(),
                    status(&w["status"]),
                    ratio(&w["utilization"]),
                    seconds(&w["resetsAt"]),
                )
            })
            .collect();
    }
    match info["rateLimitType"].as_str().filter(|k| name_ok(k)) {
        Some(kind) => vec![(
            kind.to_string(),
            status(&info["status"]),
            ratio(&info["utilization"]),
            seconds(&info["resetsAt"]),
        )],
        None => vec![],
    }
}

/// Keep what `e` (a `thread.limit` or `thread.fallback`) says. Only newer words replace a
/// window's (an event read back after a live one changes nothing).
pub fn keep(conn: &Connection, e: &Event) -> Result<(), StoreError> {
    let p = e.payload_value();
    match e.kind.as_str() {
        "thread.limit" if p["info"]["type"] == "api_error" => {
            conn.execute(
                "DELETE FROM usage_api_limited WHERE at <= ?1",
                params![e.at],
            )?;
            conn.execute(
                "INSERT INTO usage_api_limited (at, thread) SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM usage_api_limited)",
                params![e.at, e.thread],
            )?;
        }
        "thread.limit" => {
            for (kind, status, utilization, resets_at) in windows_of(&p["info"]["rate_limit_info"])
            {
                conn.execute(
                    "INSERT INTO usage_windows (kind, status, utilization, resets_at, at, thread)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(kind) DO UPDATE SET status = excluded.status,
                       utilization = excluded.utilization, resets_at = excluded.resets_at,
                       at = excluded.at, thread = excluded.thread
                     WHERE excluded.at >= usage_windows.at",
                    params![kind, status, utilization, resets_at, e.at, e.thread],
                )?;
            }
        }
        "thread.fallback" => {
            if let (Some(thread), Some(until)) = (&e.thread, p["until"].as_i64()) {
                conn.execute(
                    "INSERT INTO usage_fallbacks (thread, until, at) SELECT ?1, ?2, ?3
                     WHERE NOT EXISTS (SELECT 1 FROM usage_fallbacks WHERE thread = ?1 AND at = ?3)",
                    params![thread, until, e.at],
                )?;
                conn.execute(
                    "DELETE FROM usage_fallbacks WHERE until < ?1",
                    params![e.at],
                )?;
            }
        }
        _ => {}
    }
    Ok(())
}

const HOUR_MS: i64 = 3600 * 1000;

/// What is known of the windows at `now`.
pub fn read(conn: &Connection, now: i64) -> Result<Limits, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT kind, status, utilization, resets_at, at, thread FROM usage_windows
         ORDER BY CASE kind WHEN 'five_hour' THEN 0 WHEN 'seven_day' THEN 1 ELSE 2 END, kind",
    )?;
    let windows = stmt
        .query_map([], |r| {
            Ok(Window {
                kind: r.get(0)?,
                status: r.get(1)?,
                utilization: r.get(2)?,
                resets_at: r.get(3)?,
                at: r.get(4)?,
                thread: r.get(5)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .map(|mut w| {
            if w.resets_at.is_some_and(|r| r <= now) {
                w.status = "reset".into();
                w.utilization = None;
            }
            w
        })
        .collect();
    let fallback = conn
        .query_row(
            "SELECT thread, until, at FROM usage_fallbacks WHERE until > ?1 ORDER BY at DESC LIMIT 1",
            [now],
            |r| {
                Ok(Fallback {
                    thread: r.get(0)?,
                    until: r.get(1)?,
                    at: r.get(2)?,
                })
            },
        )
        .optional()?;
    let api_limited_at = conn
        .query_row(
            "SELECT at FROM usage_api_limited WHERE at > ?1",
            [now - HOUR_MS],
            |r| r.get(0),
        )
        .optional()?;
    Ok(Limits {
        windows,
        fallback,
        api_limited_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conn() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(MIGRATION_SQL).unwrap();
        c
    }

    fn event(id: i64, kind: &str, at: i64, payload: Value) -> Event {
        let raw = serde_json::value::to_raw_value(&payload).unwrap();
        Event::new(
            id,
            at,
            kind.into(),
            "threads".into(),
            None,
            Some("t1".into()),
            raw,
        )
    }

    /// As Claude Code 2.1.328 said it on a subscription's turn (measured on the real CLI).
    fn measured(five: f64, at: i64) -> Value {
        json!({ "type": "rate_limit_event", "rate_limit_info": {
            "status": "allowed_warning", "resetsAt": (at / 1000) + 7200, "rateLimitType": "five_hour",
            "utilization": five, "isUsingOverage": false, "surpassedThreshold": 0.8,
            "unifiedWindows": {
                "five_hour": { "utilization": five, "resetsAt": (at / 1000) + 7200, "status": "allowed_warning", "surpassedThreshold": 0.8 },
                "seven_day": { "utilization": 0.41, "resetsAt": (at / 1000) + 4 * 86400, "status": "allowed" }
            } } })
    }

    #[test]
    fn each_window_is_kept_newest_first_and_reset_once_its_time_passed() {
        let c = conn();
        let t0 = 1_796_342_400_000;
        keep(
            &c,
            &event(
                1,
                "thread.limit",
                t0 + 5000,
                json!({ "info": measured(0.9, t0) }),
            ),
        )
        .unwrap();
        // An older word read back after the live one changes nothing.
        keep(
            &c,
            &event(2, "thread.limit", t0, json!({ "info": measured(0.5, t0) })),
        )
        .unwrap();
        let l = read(&c, t0 + 6000).unwrap();
        assert_eq!(l.windows.len(), 2);
        assert_eq!(l.windows[0].kind, "five_hour");
        assert_eq!(l.windows[0].status, "allowed_warning");
        assert_eq!(l.windows[0].utilization, Some(0.9));
        assert_eq!(l.windows[0].resets_at, Some((t0 / 1000 + 7200) * 1000));
        assert_eq!(l.windows[1].kind, "seven_day");
        assert_eq!(l.windows[0].thread.as_deref(), Some("t1"));
        let later = read(&c, t0 + 3 * HOUR_MS).unwrap();
        assert_eq!(later.windows[0].status, "reset");
        assert_eq!(later.windows[0].utilization, None);
        assert_eq!(later.windows[1].status, "allowed");
    }

    #[test]
    fn an_older_cli_naming_one_window_and_hostile_words_are_kept_sane() {
        let c = conn();
        let t0 = 1_796_342_400_000;
        let info = json!({ "rate_limit_info": { "status": "rejected", "resetsAt": t0 / 1000 + 60, "rateLimitType": "seven_day_opus", "utilization": 7.5 } });
        keep(&c, &event(1, "thread.limit", t0, json!({ "info": info }))).unwrap();
        let bad = json!({ "rate_limit_info": { "unifiedWindows": { "<script>": { "status": "x" }, "five_hour": { "status": "nonsense", "utilization": "lots" } } } });
        keep(
            &c,
            &event(2, "thread.limit", t0 + 1, json!({ "info": bad })),
        )
        .unwrap();
        let l = read(&c, t0 + 2).unwrap();
        let kinds: Vec<&str> = l.windows.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(kinds, ["five_hour", "seven_day_opus"]);
        assert_eq!(l.windows[0].status, "allowed");
        assert_eq!(l.windows[0].utilization, None);
        assert_eq!(l.windows[1].status, "rejected");
        assert_eq!(l.windows[1].utilization, Some(1.0), "clamped");
    }

    #[test]
    fn a_fallback_is_shown_until_it_ends_and_an_api_keys_limit_for_an_hour() {
        let c = conn();
        let t0 = 1_796_342_400_000;
        keep(
            &c,
            &event(
                1,
                "thread.fallback",
                t0,
                json!({ "to": "api-key", "until": t0 + HOUR_MS }),
            ),
        )
        .unwrap();
        keep(
            &c,
            &event(
                1,
                "thread.fallback",
                t0,
                json!({ "to": "api-key", "until": t0 + HOUR_MS }),
            ),
        )
        .unwrap();
        let api = json!({ "info": { "type": "api_error", "status": 429, "error": "rate_limit", "retrying": true } });
        keep(&c, &event(2, "thread.limit", t0 + 10, api.clone())).unwrap();
        keep(&c, &event(3, "thread.limit", t0 + 20, api)).unwrap();
        let l = read(&c, t0 + 100).unwrap();
        assert!(l.windows.is_empty(), "an API key has no windows");
        assert_eq!(l.fallback.as_ref().map(|f| f.until), Some(t0 + HOUR_MS));
        assert_eq!(l.api_limited_at, Some(t0 + 20));
        let n: i64 = c
            .query_row("SELECT count(*) FROM usage_fallbacks", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "kept once");
        let after = read(&c, t0 + 2 * HOUR_MS).unwrap();
        assert_eq!((after.fallback, after.api_limited_at), (None, None));
    }
}
