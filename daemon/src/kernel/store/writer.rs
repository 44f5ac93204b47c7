//! The writer thread: the only connection that writes, with group commit (see the module docs
//! of [`crate::kernel::store`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::StoreError;
use super::checkpoint::Checkpointer;
use crate::kernel::events::{Bus, Event, NewEvent};
use crate::kernel::module::Manifest;

/// Jobs taken into one transaction at most; bounds the latency of the first job of a burst.
const MAX_BATCH: usize = 512;

/// One job's view of the open transaction.
pub struct WriteTx<'a> {
    conn: &'a Connection,
    source: &'a str,
    events: Vec<Event>,
    /// When set, only event types this manifest declares may be emitted.
    allow: Option<Arc<Manifest>>,
}

impl WriteTx<'_> {
    /// The connection, inside the job's savepoint.
    pub fn conn(&self) -> &Connection {
        self.conn
    }

    /// Append an event, emitted by this job's source. It is broadcast after the commit, and not
    /// at all if the job or the commit fails. A payload that looks like it holds a credential is
    /// refused.
    pub fn emit(&mut self, event: NewEvent) -> Result<i64, StoreError> {
        if let Some(manifest) = &self.allow
            && !manifest.may_emit(&event.kind)
        {
            return Err(StoreError::Refused(format!(
                "module {} does not declare event type {:?} under watches.emits",
                manifest.name, event.kind
            )));
        }
        let event = crate::kernel::events::log::insert(self.conn, self.source, event)?;
        let id = event.id;
        self.events.push(event);
        Ok(id)
    }

    /// Limit the events this job may emit to those `manifest` declares.
    pub(crate) fn restrict_to(&mut self, manifest: Arc<Manifest>) {
        self.allow = Some(manifest);
    }

    /// The name events from this transaction carry as their source.
    pub fn source(&self) -> &str {
        self.source
    }
}

/// A queued write: run it inside the transaction, then answer once the commit's fate is known.
trait Job: Send {
    fn source(&self) -> &str;
    /// Run the job; true when it succeeded and its changes should be kept.
    fn run(&mut self, tx: &mut WriteTx<'_>) -> bool;
    /// Answer the caller: `Ok` when the transaction committed.
    fn finish(self: Box<Self>, commit: Result<(), &rusqlite::Error>);
}

struct TypedJob<T, F> {
    source: Box<str>,
    work: Option<F>,
    outcome: Option<Result<T, StoreError>>,
    answer: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F> Job for TypedJob<T, F>
where
    T: Send + 'static,
    F: FnOnce(&mut WriteTx<'_>) -> Result<T, StoreError> + Send + 'static,
{
    fn source(&self) -> &str {
        &self.source
    }

    fn run(&mut self, tx: &mut WriteTx<'_>) -> bool {
        let work = self.work.take().expect("a job runs once");
        let outcome = work(tx);
        let ok = outcome.is_ok();
        self.outcome = Some(outcome);
        ok
    }

    fn finish(self: Box<Self>, commit: Result<(), &rusqlite::Error>) {
        let result = match (self.outcome, commit) {
            (Some(Err(e)), _) => Err(e),
            (_, Err(e)) => Err(copy_error(e)),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (None, Ok(())) => Err(StoreError::Task("the write job panicked".into())),
        };
        let _ = self.answer.send(result);
    }
}

pub(super) struct WriterHandle {
    // std Mutex: only taken to clone or drop the sender, never across an await.
    jobs: Mutex<Option<mpsc::Sender<Box<dyn Job>>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl WriterHandle {
    /// Start the writer on `conn`, the database at `path`'s write connection.
    pub(super) fn start(path: &Path, mut conn: Connection, bus: Bus) -> Result<Self, StoreError> {
        let checkpoints = Checkpointer::start(path, &mut conn)?;
        let (tx, rx) = mpsc::channel::<Box<dyn Job>>();
        let thread = std::thread::Builder::new()
            .name("vyre-store-writer".into())
            .spawn(move || run(conn, rx, bus, checkpoints))
            .map_err(|e| StoreError::Task(format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            jobs: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    pub(super) async fn run<T, F>(&self, source: &str, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job = Box::new(TypedJob {
            source: source.into(),
            work: Some(work),
            outcome: None,
            answer,
        });
        let sender = self.jobs.lock().expect("writer sender").clone();
        sender
            .ok_or(StoreError::Closed)?
            .send(job)
            .map_err(|_| StoreError::Closed)?;
        answered
            .await
            .unwrap_or_else(|_| Err(StoreError::Task("the writer stopped".into())))
    }

    /// Let every queued job finish, then stop the thread.
    pub(super) async fn close(&self) {
        self.jobs.lock().expect("writer sender").take();
        let thread = self.thread.lock().expect("writer thread").take();
        if let Some(thread) = thread {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

/// rusqlite errors are not Clone; the one that failed a commit is reported to every job in it.
fn copy_error(e: &rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(*code, message.clone()))
        }
        other => StoreError::Task(other.to_string()),
    }
}

fn run(
    mut conn: Connection,
    rx: mpsc::Receiver<Box<dyn Job>>,
    bus: Bus,
    checkpoints: Checkpointer,
) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        run_batch(&conn, batch, &bus);
    }
    // Every sender is gone: fold the WAL back so the database file is whole on its own.
    checkpoints.stop(&mut conn);
    if let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)") {
        tracing::warn!(error = %e, "final checkpoint failed");
    }
}

/// One statement of the writer's own, parsed once and kept: each job's savepoint and release
/// were parsed again for every write, a measurable part of an event's cost.
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn run_batch(conn: &Connection, batch: Vec<Box<dyn Job>>, bus: &Bus) {
    if let Err(e) = run_cached(conn, "BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "cannot begin a write transaction");
        for job in batch {
            job.finish(Err(&e));
        }
        return;
    }
    let mut done = Vec::with_capacity(batch.len());
    let mut events = Vec::new();
    for mut job in batch {
        if let Err(e) = run_cached(conn, "SAVEPOINT job") {
            job.finish(Err(&e));
            continue;
        }
        let source: Box<str> = job.source().into();
        let mut tx = WriteTx {
            conn,
            source: &source,
            events: Vec::new(),
            allow: None,
        };
        // A panicking job must not take the writer (and so the whole store) down with it.
        let kept = catch_unwind(AssertUnwindSafe(|| job.run(&mut tx))).unwrap_or_else(|_| {
            tracing::error!(source = %source, "a write job panicked; its changes were rolled back");
            false
        });
        let release = if kept {
            run_cached(conn, "RELEASE job")
        } else {
            conn.execute_batch("ROLLBACK TO job; RELEASE job")
        };
        if let Err(e) = release {
            tracing::error!(error = %e, "cannot close a job's savepoint");
        }
        if kept {
            events.append(&mut tx.events);
        }
        done.push(job);
    }
    match run_cached(conn, "COMMIT") {
        Ok(()) => {
            bus.publish(events);
            for job in done {
                job.finish(Ok(()));
            }
        }
        Err(e) => {
            tracing::error!(error = %e, "commit failed; the batch was rolled back");
            let _ = conn.execute_batch("ROLLBACK");
            for job in done {
                job.finish(Err(&e));
            }
        }
    }
}
