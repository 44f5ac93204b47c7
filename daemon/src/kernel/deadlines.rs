//! One timer for every due time of every module (issue 23, ADR 0024): a reminder, an alarm, a
//! watcher's next run, a retry. Each deadline is a row in the store (`deadlines`: its module, a
//! key of the module's choosing, when it is due), so it survives a restart; vyred keeps one
//! sleeping task, woken for the next deadline only (or when one is set), and nothing polls.
//!
//! A deadline that passed while vyred was down is handed over once at the start, with how late
//! it is: a module that repeats (a schedule) sets its next deadline from now, so a week away
//! never fires a week of missed ticks. A deadline is dropped only after its module handled it,
//! so a crash in between hands it over again: handlers make a second call for the same deadline
//! harmless (the planner records what fired).
//!
//! The sleep is capped at [`LONGEST_SLEEP`]: a timer counts time the machine is awake, and a
//! laptop that slept through a deadline would otherwise hear of it late.

pub mod cron;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rusqlite::{OptionalExtension, params};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::kernel::store::{Store, StoreError};

/// The longest the timer sleeps without looking at the clock again (a machine may sleep).
pub const LONGEST_SLEEP: Duration = Duration::from_secs(600);

/// How long a handler may take before the timer goes on without it (the deadline stays).
const HANDLER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a module that kept a deadline hears of none.
pub const PAUSE: Duration = Duration::from_secs(60);

/// A deadline handed to its module.
#[derive(Debug, Clone)]
pub struct Due {
    pub key: String,
    /// When it was due (ms since the epoch).
    pub due_at: i64,
    /// How long after that it was handed over (0 when on time, within a second).
    pub late_ms: i64,
}

/// What a module does with its due deadlines: true when handled (the deadline is dropped),
/// false to keep it. A module that keeps one (it is disabled, or its store write failed) or
/// takes too long hears of none for [`PAUSE`], then is handed them again.
pub type Handler = Arc<dyn Fn(Due) -> BoxFuture<'static, bool> + Send + Sync>;

/// The deadlines of every module. Cheap to clone.
#[derive(Clone)]
pub struct Deadlines {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    changed: Notify,
    handlers: Mutex<HashMap<String, Handler>>,
    /// Modules that kept a deadline, and until when they hear of none (ms since the epoch).
    paused: Mutex<HashMap<String, i64>>,
    /// How long a module that kept a deadline hears of none ([`PAUSE`]; shorter in tests).
    pause: Duration,
}

impl Deadlines {
    pub fn new(store: Store) -> Deadlines {
        Deadlines {
            inner: Arc::new(Inner {
                store,
                changed: Notify::new(),
                handlers: Mutex::new(HashMap::new()),
                paused: Mutex::new(HashMap::new()),
                pause: PAUSE,
            }),
        }
    }

    /// `owner`'s deadline `key` at `due_at` (ms since the epoch), replacing its earlier one.
    pub async fn set(&self, owner: &str, key: &str, due_at: i64) -> Result<(), StoreError> {
        let (owner, key) = (owner.to_string(), key.to_string());
        self.inner
            .store
            .write(move |tx| {
                tx.conn().execute(
                    "INSERT INTO deadlines (owner, key, due_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(owner, key) DO UPDATE SET due_at = excluded.due_at",
                    params![owner, key, due_at],
                )?;
                Ok(())
            })
            .await?;
        self.inner.changed.notify_one();
        Ok(())
    }

    /// Drop `owner`'s deadline `key`; true when there was one.
    pub async fn clear(&self, owner: &str, key: &str) -> Result<bool, StoreError> {
        let (owner, key) = (owner.to_string(), key.to_string());
        let gone = self
            .inner
            .store
            .write(move |tx| {
                Ok(tx.conn().execute(
                    "DELETE FROM deadlines WHERE owner = ?1 AND key = ?2",
                    params![owner, key],
                )? > 0)
            })
            .await?;
        self.inner.changed.notify_one();
        Ok(gone)
    }

    /// When `owner`'s deadline `key` is due, if it is set.
    pub async fn due_at(&self, owner: &str, key: &str) -> Result<Option<i64>, StoreError> {
        let (owner, key) = (owner.to_string(), key.to_string());
        self.inner
            .store
            .read(move |c| {
                Ok(c.query_row(
                    "SELECT due_at FROM deadlines WHERE owner = ?1 AND key = ?2",
                    params![owner, key],
                    |r| r.get(0),
                )
                .optional()?)
            })
            .await
    }

    /// Hand `owner`'s due deadlines to `handler` from now on (one handler a module; a
    /// module's deadlines wait in the store until it has one).
    pub fn on_due(&self, owner: &str, handler: Handler) {
        lock(&self.inner.handlers).insert(owner.to_string(), handler);
        lock(&self.inner.paused).remove(owner);
        self.inner.changed.notify_one();
    }

    /// The modules handed their deadlines now (those with a handler, not paused), and when
    /// the first pause ends.
    fn owners(&self, now: i64) -> (Vec<String>, Option<i64>) {
        let mut paused = lock(&self.inner.paused);
        paused.retain(|_, until| *until > now);
        let owners = lock(&self.inner.handlers)
            .keys()
            .filter(|o| !paused.contains_key(*o))
            .cloned()
            .collect();
        (owners, paused.values().copied().min())
    }

    fn handler(&self, owner: &str) -> Option<Handler> {
        lock(&self.inner.handlers).get(owner).cloned()
    }

    /// The timer, until `stop`: sleeps until the next deadline of a module that handles them,
    /// or until one is set.
    pub async fn run(self, stop: CancellationToken) {
        loop {
            let (owners, pause_ends) = self.owners(crate::now_ms());
            let owners = serde_json::to_string(&owners).unwrap_or_default();
            let next = self
                .inner
                .store
                .read(move |c| {
                    Ok(c.query_row(
                        "SELECT MIN(due_at) FROM deadlines
                         WHERE owner IN (SELECT value FROM json_each(?1))",
                        [owners],
                        |r| r.get::<_, Option<i64>>(0),
                    )?)
                })
                .await;
            let next = match next {
                Ok(next) => next,
                Err(e) => {
                    // The store is failing (a full disk): try again in a while, not in a loop.
                    tracing::warn!(error = %e, "the deadlines cannot be read; trying again in a minute");
                    Some(crate::now_ms() + 60_000)
                }
            };
            let now = crate::now_ms();
            if let Some(at) = next
                && at <= now
            {
                self.hand_over(now).await;
                continue;
            }
            // Until the next deadline, or a paused module's pause ends.
            let wake = match (next, pause_ends) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let sleep = wake.map_or(LONGEST_SLEEP, |at| {
                Duration::from_millis((at - now).max(0) as u64).min(LONGEST_SLEEP)
            });
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = self.inner.changed.notified() => {}
                _ = tokio::time::sleep(sleep) => {}
            }
        }
    }

    /// Hand every deadline due by `now` to its module, earliest first; drop those handled.
    async fn hand_over(&self, now: i64) {
        let owners = serde_json::to_string(&self.owners(now).0).unwrap_or_default();
        let due = self
            .inner
            .store
            .read(move |c| {
                let mut stmt = c.prepare(
                    "SELECT owner, key, due_at FROM deadlines
                     WHERE due_at <= ?1 AND owner IN (SELECT value FROM json_each(?2))
                     ORDER BY due_at LIMIT 500",
                )?;
                let rows = stmt.query_map(params![now, owners], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
            .unwrap_or_default();
        for (owner, key, due_at) in due {
            if lock(&self.inner.paused).contains_key(&owner) {
                continue;
            }
            let Some(handler) = self.handler(&owner) else {
                continue;
            };
            let late_ms = crate::now_ms() - due_at;
            let due = Due {
                key: key.clone(),
                due_at,
                late_ms: if late_ms < 1000 { 0 } else { late_ms },
            };
            let handled = tokio::time::timeout(HANDLER_TIMEOUT, handler(due))
                .await
                .unwrap_or_else(|_| {
                    tracing::warn!(module = %owner, %key, "a deadline's handler took too long");
                    false
                });
            if !handled {
                // Paused, so the timer does not hand the same past deadline over in a loop.
                tracing::warn!(module = %owner, %key, "a module kept its deadline; it hears of none for a minute");
                lock(&self.inner.paused)
                    .insert(owner, crate::now_ms() + self.inner.pause.as_millis() as i64);
                continue;
            }
            // Dropped unless the handler set it again (a schedule's next run).
            let drop = self
                .inner
                .store
                .write(move |tx| {
                    tx.conn().execute(
                        "DELETE FROM deadlines WHERE owner = ?1 AND key = ?2 AND due_at = ?3",
                        params![owner, key, due_at],
                    )?;
                    Ok(())
                })
                .await;
            if let Err(e) = drop {
                tracing::warn!(error = %e, "a handled deadline could not be dropped");
            }
        }
    }
}

/// The map behind `m`: only plain inserts, removes and clones happen under these locks, so a
/// poisoned one is still whole.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::events::Bus;

    fn deadlines(name: &str, pause: Duration) -> Deadlines {
        let dir =
            std::env::temp_dir().join(format!("vyre-deadlines-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::open(&dir.join("vyre.db"), Bus::new()).unwrap();
        let mut d = Deadlines::new(store);
        Arc::get_mut(&mut d.inner).unwrap().pause = pause;
        d
    }

    type Heard = Arc<Mutex<Vec<(String, i64)>>>;

    /// A handler that records what it heard, and keeps (declines) the first `decline` it hears.
    fn recorder(decline: usize) -> (Handler, Heard) {
        let heard: Heard = Arc::default();
        let h = heard.clone();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let handler: Handler = Arc::new(move |due: Due| {
            let (h, calls) = (h.clone(), calls.clone());
            Box::pin(async move {
                h.lock().unwrap().push((due.key, due.late_ms));
                calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= decline
            })
        });
        (handler, heard)
    }

    #[tokio::test]
    async fn each_deadline_is_handed_over_once_late_ones_say_so_and_others_wait() {
        let d = deadlines("once", PAUSE);
        let now = crate::now_ms();
        d.set("a", "past", now - 5_000).await.unwrap();
        d.set("a", "soon", now + 150).await.unwrap();
        d.set("a", "moved", now + 100).await.unwrap();
        d.set("a", "moved", now + 300).await.unwrap();
        d.set("a", "cleared", now + 100).await.unwrap();
        assert!(d.clear("a", "cleared").await.unwrap());
        d.set("b", "no handler yet", now - 1_000).await.unwrap();
        let stop = CancellationToken::new();
        tokio::spawn(d.clone().run(stop.clone()));
        let (handler, heard) = recorder(0);
        d.on_due("a", handler);
        tokio::time::sleep(Duration::from_millis(800)).await;
        let heard = heard.lock().unwrap().clone();
        let keys: Vec<&str> = heard.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["past", "soon", "moved"], "once each, in order");
        assert!(heard[0].1 >= 5_000, "the past one says how late: {heard:?}");
        assert_eq!(heard[1].1, 0, "on time");
        assert_eq!(
            d.due_at("a", "soon").await.unwrap(),
            None,
            "dropped once handled"
        );
        assert_eq!(
            d.due_at("b", "no handler yet").await.unwrap(),
            Some(now - 1_000),
            "a module without a handler keeps its deadlines"
        );
        stop.cancel();
    }

    #[tokio::test]
    async fn a_module_that_keeps_a_deadline_is_paused_then_handed_it_again() {
        let d = deadlines("pause", Duration::from_millis(300));
        let stop = CancellationToken::new();
        tokio::spawn(d.clone().run(stop.clone()));
        let (handler, heard) = recorder(1);
        d.on_due("a", handler);
        d.set("a", "x", crate::now_ms() - 10).await.unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(
            heard.lock().unwrap().len(),
            1,
            "kept, and not handed over in a loop"
        );
        assert!(d.due_at("a", "x").await.unwrap().is_some());
        tokio::time::sleep(Duration::from_millis(450)).await;
        assert_eq!(
            heard.lock().unwrap().len(),
            2,
            "handed again after the pause"
        );
        assert_eq!(d.due_at("a", "x").await.unwrap(), None);
        stop.cancel();
    }
}
