//! Checkpoints off the writer's path.
//!
//! In WAL mode SQLite copies the log back into the database file (a checkpoint) from inside
//! whichever commit finds the log past 1,000 pages, and that copy syncs the file: on the machines
//! measured here it held the writer for several milliseconds every few hundred milliseconds of
//! steady writing, and every event committed behind it waited that long (the events benchmark's
//! p99, issue 26). So the writer's connection does not checkpoint: its WAL hook only wakes a
//! thread of its own, with its own connection, which runs a passive checkpoint (one that never
//! waits for, and is never waited for by, the writer or a reader). The log starts again from its
//! beginning at the first commit after a checkpoint that copied all of it.
//!
//! Should that thread fall behind or stop, the writer checkpoints itself once the log reaches
//! [`CAP_PAGES`], so the log stays bounded whatever happens.

use std::path::Path;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::StoreError;

/// Pages in the log that wake the checkpoint thread: SQLite's own default for checkpointing.
pub(super) const EVERY_PAGES: i32 = 1000;
/// Pages in the log at which the writer checkpoints itself (about 64 MiB with 4 KiB pages).
pub(super) const CAP_PAGES: i32 = 16 * EVERY_PAGES;

/// The checkpoint thread. Its only waker lives in the writer connection's hook, so it ends when
/// that hook goes ([`Checkpointer::stop`]) or the connection closes.
pub(super) struct Checkpointer {
    thread: JoinHandle<()>,
}

impl Checkpointer {
    /// Start the thread (its own connection to the database at `path` opened when first
    /// needed), and hand the
    /// writer's connection `writer` a WAL hook that wakes it (replacing SQLite's own checkpoints).
    pub(super) fn start(path: &Path, writer: &mut Connection) -> Result<Self, StoreError> {
        let path = path.to_path_buf();
        // One wake waiting is enough: the checkpoint that answers it copies everything.
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("vyre-store-checkpoint".into())
            .spawn(move || {
                // Its connection is opened at the first wake: an idle vyred may never need it,
                // and a connection holds the schema and a page cache.
                let mut conn = None;
                while woken.recv().is_ok() {
                    if conn.is_none() {
                        conn = open(&path);
                    }
                    if let Some(conn) = &conn
                        && let Err(e) = passive(conn)
                    {
                        tracing::warn!(error = %e, "a checkpoint failed; the next commit tries again");
                    }
                }
            })
            .map_err(|e| StoreError::Task(format!("cannot start the checkpoint thread: {e}")))?;
        writer.wal_hook(Some(hook(EVERY_PAGES, CAP_PAGES, wake)))?;
        Ok(Checkpointer { thread })
    }

    /// Take the hook off the writer's connection and wait for the thread to finish the
    /// checkpoint it may be running (the writer's last act is a checkpoint of its own).
    pub(super) fn stop(self, writer: &mut Connection) {
        if let Err(e) =
            writer.wal_hook(None::<fn(&mut rusqlite::hooks::Wal, i32) -> rusqlite::Result<()>>)
        {
            tracing::warn!(error = %e, "cannot take the checkpoint hook off");
            return;
        }
        let _ = self.thread.join();
    }
}

/// The writer's WAL hook: wake the thread once the log holds `every` pages, checkpoint here once
/// it holds `cap`.
fn hook(
    every: i32,
    cap: i32,
    wake: SyncSender<()>,
) -> impl FnMut(&mut rusqlite::hooks::Wal, i32) -> rusqlite::Result<()> + Send + 'static {
    move |wal, pages| {
        if pages >= cap {
            // The thread is behind or gone: copy here rather than let the log grow.
            if let Err(e) = wal.checkpoint() {
                tracing::warn!(error = %e, pages, "the writer's own checkpoint failed");
            }
        } else if pages >= every {
            // Full: a wake is already waiting. Disconnected: the thread is gone, and the cap
            // keeps the log bounded.
            let _: Result<(), TrySendError<()>> = wake.try_send(());
        }
        Ok(())
    }
}

/// The checkpoint thread's connection, or `None` (said in the log) when it cannot be opened:
/// then the writer's own checkpoint at the cap keeps the log bounded.
fn open(path: &Path) -> Option<Connection> {
    super::open_connection(path, false)
        .map_err(|e| tracing::warn!(error = %e, "the checkpoint thread cannot open the store"))
        .ok()
}

/// Copy what the log holds into the database without waiting for anyone.
fn passive(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_thread_to_wake_the_writer_checkpoints_itself_at_the_cap() {
        let dir = std::env::temp_dir().join(format!("vyre-checkpoint-cap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vyre.db");
        let mut conn = crate::kernel::store::open_connection(&path, false).unwrap();
        // A thread that is gone: its receiver dropped.
        let (wake, _) = mpsc::sync_channel(1);
        conn.wal_hook(Some(hook(i32::MAX, 100, wake))).unwrap();
        conn.execute_batch("CREATE TABLE filler (b BLOB)").unwrap();
        let wal = dir.join("vyre.db-wal");
        let mut largest = 0;
        // 100 commits of 10 pages: 1,000 pages in all.
        for _ in 0..100 {
            conn.execute("INSERT INTO filler VALUES (randomblob(40000))", [])
                .unwrap();
            largest = largest.max(std::fs::metadata(&wal).unwrap().len());
        }
        assert!(
            largest < 150 * 4096,
            "the log went back to its start after 100 pages, not grown to {largest} bytes"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
