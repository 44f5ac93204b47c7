//! The embedding worker: one thread at the lowest priority that gives every turn recall has
//! read its meaning vector, a few turns per transaction, so a crash or a stop loses at most one
//! batch and the next start goes on where it stopped. It waits while the person's work runs (a
//! turn streaming, a hook waiting), sleeps when all is embedded, and lets the model go after a
//! quiet minute. Asleep, it wakes only for a reason: new turns, a model that arrived or loaded,
//! the moment what is held may be let go, or a pass over grown replies; never to look.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rusqlite::params;

use super::vectors::{self, Packed};
use super::{Dense, TEXT_CHARS};
use crate::kernel::store::StoreError;

/// What wakes the worker.
pub enum Wake {
    /// Recall read new turns.
    Turns,
    Stop,
}

/// Turns embedded per transaction.
const BATCH: usize = 16;
/// How long the worker waits after the store failed, before it tries again.
const NO_MODEL_WAIT: Duration = Duration::from_secs(30);
/// At most this often, a pass from the first turn: replies that grew after they were embedded
/// have lost their vector and sit behind the cursor.
const FULL_PASS_EVERY: Duration = Duration::from_secs(60);

pub fn run(dense: Dense, rt: tokio::runtime::Handle, wake: Receiver<Wake>) {
    lowest_priority();
    let mut cursor = 0i64;
    let mut last_full = Instant::now();
    // New turns were read since the last pass from the first turn (a reply among them may have
    // grown behind the cursor).
    let mut grown = false;
    let mut checked: Option<String> = None;
    loop {
        if let Ok(Wake::Stop) = wake.try_recv() {
            return;
        }
        if dense.is_busy() {
            if let Ok(Wake::Stop) = wake.recv_timeout(Duration::from_millis(300)) {
                return;
            }
            continue;
        }
        // The model's files say which it is without loading it: vectors of another model mean
        // nothing to this one, so they go and all is embedded anew.
        // Without a model, asleep until one arrives (a fetch's end, or a search that loads one
        // put there by hand wakes it).
        let Some(fp) = dense.fingerprint() else {
            match wake.recv() {
                Ok(Wake::Stop) | Err(_) => return,
                Ok(Wake::Turns) => continue,
            }
        };
        if checked.as_deref() != Some(fp.as_str()) {
            let f = fp.clone();
            match rt.block_on(dense.ctx().store().write(move |tx| adopt(tx.conn(), &f))) {
                Ok(cleared) => {
                    if cleared {
                        dense.clear();
                        cursor = 0;
                    }
                    checked = Some(fp);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot check the stored vectors' model");
                    std::thread::sleep(NO_MODEL_WAIT);
                    continue;
                }
            }
        }
        let after = cursor;
        let todo = match rt.block_on(dense.ctx().store().read(move |c| missing(c, after, BATCH))) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the turns to embed");
                std::thread::sleep(NO_MODEL_WAIT);
                continue;
            }
        };
        if todo.is_empty() {
            if grown && last_full.elapsed() >= FULL_PASS_EVERY {
                cursor = 0;
                last_full = Instant::now();
                grown = false;
                continue;
            }
            // Asleep until woken, or until what is held may be let go, or a pass is due.
            let pass = grown.then(|| FULL_PASS_EVERY.saturating_sub(last_full.elapsed()));
            let got = match [dense.until_idle(), pass].into_iter().flatten().min() {
                Some(t) => wake.recv_timeout(t),
                None => wake.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match got {
                Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(Wake::Turns) => grown = true,
                Err(RecvTimeoutError::Timeout) => {
                    dense.unload_if_idle();
                }
            }
            continue;
        }
        // Loaded only when there is something to embed.
        let Some(model) = dense.model() else {
            match wake.recv_timeout(NO_MODEL_WAIT) {
                Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                _ => continue,
            }
        };
        let mut done: Vec<(i64, String, Packed)> = Vec::with_capacity(todo.len());
        for (id, session, text) in todo {
            cursor = cursor.max(id);
            done.push((id, session, vectors::pack(&model.embed(&text))));
            if dense.is_busy() {
                break;
            }
        }
        let rows: Vec<(i64, Vec<u8>)> = done
            .iter()
            .map(|(id, _, p)| (*id, vectors::to_bytes(p)))
            .collect();
        match rt.block_on(dense.ctx().store().write(move |tx| keep(tx.conn(), &rows))) {
            Ok(()) => dense.put(&done),
            // A full disk, a locked store: the turns stay without vectors and are tried again.
            Err(e) => {
                tracing::warn!(error = %e, "vectors not stored; trying again later");
                cursor = 0;
                std::thread::sleep(NO_MODEL_WAIT);
            }
        }
    }
}

/// Up to `limit` turns after `after` that have no vector, their first [`TEXT_CHARS`]
/// characters only.
pub fn missing(
    c: &rusqlite::Connection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, String, String)>, StoreError> {
    let mut stmt = c.prepare_cached(
        "SELECT t.id, t.session, substr(t.text, 1, ?3) FROM recall_turns t
         WHERE t.id > ?1 AND NOT EXISTS (SELECT 1 FROM recall_vectors v WHERE v.id = t.id)
         ORDER BY t.id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit as i64, TEXT_CHARS as i64], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Store vectors (a turn's replaces its older one).
pub fn keep(c: &rusqlite::Connection, rows: &[(i64, Vec<u8>)]) -> Result<(), StoreError> {
    let mut stmt =
        c.prepare_cached("INSERT OR REPLACE INTO recall_vectors (id, v) VALUES (?1, ?2)")?;
    for (id, v) in rows {
        // The turn may have gone since it was read (its session re-read from the start).
        let exists: bool = c.query_row(
            "SELECT EXISTS (SELECT 1 FROM recall_turns WHERE id = ?1)",
            [id],
            |r| r.get(0),
        )?;
        if exists {
            stmt.execute(params![id, v])?;
        }
    }
    Ok(())
}

/// Record `model` as the stored vectors' model; true when vectors of another were cleared.
pub fn adopt(c: &rusqlite::Connection, model: &str) -> Result<bool, StoreError> {
    let stored = super::stored_model(c)?;
    if stored.as_deref() == Some(model) {
        return Ok(false);
    }
    let cleared = c.execute("DELETE FROM recall_vectors", [])? > 0;
    c.execute(
        "INSERT INTO recall_dense (key, value) VALUES ('model', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [model],
    )?;
    Ok(cleared)
}

/// Embedding yields to everything else on the machine, the indexer included.
fn lowest_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; setpriority on this thread's id only changes its
    // own niceness.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19);
    }
}
