//! The SQLite store: one database in `VYRE_HOME/vyre.db`, opened with WAL and a 10 s busy
//! timeout on every connection.
//!
//! Writes go through one writer thread that owns the only write connection. It takes every job
//! waiting for it, runs each in its own savepoint inside one transaction, commits once, and only
//! then broadcasts the events those jobs emitted and answers them (group commit). So an event is
//! always committed before anyone hears of it, events are broadcast in id order, and a burst of
//! writers costs one commit instead of one each. Reads use a small pool of read connections on
//! tokio's blocking threads; a read whose caller goes away is interrupted ([`Store::read`]).

mod checkpoint;
mod migrate;
mod writer;

pub use migrate::{Migration, MigrationError, migrate};
pub use writer::WriteTx;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::kernel::events::Bus;

/// Errors of the store. Callers see these mapped to tool errors in one place.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Migration(#[from] MigrationError),
    #[error("the store is closed")]
    Closed,
    #[error("{0}")]
    Refused(String),
    #[error("the store task failed: {0}")]
    Task(String),
}

impl StoreError {
    /// True when the disk (or the file system's quota) is full.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::DiskFull)
    }
}

const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Read connections kept open when idle; more are opened under load and closed after.
const IDLE_READERS: usize = 4;
/// How many SQLite instructions a cancellable read runs between two looks at its flag: a
/// relaxed load every thousand instructions costs nothing measurable, and a cancelled read
/// stops within microseconds.
const CANCEL_CHECK_OPS: i32 = 1000;

/// Open one connection with the settings every connection must have.
pub fn open_connection(path: &Path, read_only: bool) -> rusqlite::Result<Connection> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI
    };
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if !read_only {
        // WAL is a property of the database file; setting it once from the writer is enough,
        // but it is cheap and idempotent.
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// A cloneable handle on the store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: writer::WriterHandle,
    // std Mutex: held only to push or pop a connection, never across an await.
    readers: Mutex<Vec<Connection>>,
}

impl Store {
    /// Open (creating if needed) the database, run the kernel's migrations, and start the writer.
    pub fn open(path: &Path, bus: Bus) -> Result<Store, StoreError> {
        let mut conn = open_connection(path, false)?;
        // The store is private to vyred's user; SQLite gives -wal and -shm the same mode.
        if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
            tracing::warn!(error = %e, "cannot make the store private (mode 0600)");
        }
        migrate(&mut conn, "kernel", crate::kernel::migrations::MIGRATIONS)?;
        let writer = writer::WriterHandle::start(path, conn, bus)?;
        Ok(Store {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                writer,
                readers: Mutex::new(Vec::new()),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Run `f` in a transaction on the writer thread. Events emitted through the [`WriteTx`] are
    /// broadcast after the commit. An error from `f` rolls back only `f`'s own changes.
    pub async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.inner.writer.run("kernel", f).await
    }

    /// [`Store::write`] with events carrying `source` (a module's name).
    pub async fn write_as<T, F>(&self, source: &str, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.inner.writer.run(source, f).await
    }

    /// Run `f` with a read connection on a blocking thread.
    ///
    /// Dropping the returned future (its caller went away, its tool call was cancelled, vyred is
    /// stopping) interrupts `f`: SQLite's progress handler looks at a flag every
    /// [`CANCEL_CHECK_OPS`] instructions and ends the running statement, so no query outlives its
    /// caller by more than that (a blocking thread cannot be cancelled from outside otherwise,
    /// and a runtime waits for its blocking threads when it stops).
    pub async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.clone();
        let cancelled = Arc::new(AtomicBool::new(false));
        let _cancel = CancelOnDrop(cancelled.clone());
        tokio::task::spawn_blocking(move || store.read_with(f, Some(cancelled)))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// [`Store::read`] for code already on a blocking thread.
    pub fn read_blocking<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read_with(f, None)
    }

    fn read_with<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
        cancelled: Option<Arc<AtomicBool>>,
    ) -> Result<T, StoreError> {
        let pooled = self.inner.readers.lock().expect("reader pool").pop();
        let mut conn = match pooled {
            Some(conn) => conn,
            None => open_connection(&self.inner.path, true)?,
        };
        let watched = cancelled.is_some();
        if let Some(flag) = cancelled {
            conn.progress_handler(CANCEL_CHECK_OPS, Some(move || flag.load(Ordering::Relaxed)))?;
        }
        let out = f(&conn);
        if watched {
            // A pooled connection never carries an earlier caller's flag.
            conn.progress_handler(0, None::<fn() -> bool>)?;
        }
        let mut pool = self.inner.readers.lock().expect("reader pool");
        if pool.len() < IDLE_READERS {
            pool.push(conn);
        }
        out
    }

    /// Stop taking writes, finish every queued one, and close the write connection.
    pub async fn close(&self) {
        self.inner.writer.close().await;
        self.inner.readers.lock().expect("reader pool").clear();
    }
}

/// Sets its flag when dropped: the read it watches was given up.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests;
