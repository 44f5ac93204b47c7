//! Dense recall (spec 7.3): every turn's meaning as a vector, made on this machine by the
//! embedding model at low priority ([`worker`]), kept in the store beside the full-text rows and
//! searched whole in memory ([`vectors`]). The model and the vectors are loaded when first
//! needed and let go after a quiet minute, so an idle vyred stays small. Without the model (not
//! there yet, or damaged) recall searches by words alone and says why.

pub mod fetch;
mod scan;
pub mod tools;
pub mod vectors;
pub mod worker;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rusqlite::OptionalExtension;
use serde::Serialize;

use super::embed::Embedder;
use crate::kernel::module::Ctx;
use crate::kernel::store::StoreError;
use vectors::Vectors;

/// The model Vyre uses unless the config names another folder: all-MiniLM-L6-v2, as
/// sentence-transformers ships it, in `VYRE_HOME/models/all-minilm-l6-v2`.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
pub const MODEL_FOLDER: &str = "all-minilm-l6-v2";

/// Characters of a turn handed to the model: more than its token window holds, so a 43 MB turn
/// costs what its first page costs.
pub const TEXT_CHARS: usize = 2000;

/// Where the model stands, for `recall.models` and `recall.status`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ModelState {
    /// Dense recall is turned off in the config (`recall.embed: false`).
    Off,
    /// No model in its folder: recall searches by words.
    Missing,
    /// The folder holds something that is not a usable model.
    Broken { error: String },
    /// Usable; loaded in memory or not.
    Ready { loaded: bool },
    /// Being fetched (`recall.fetch`); `recall.model_progress` says how far.
    Fetching,
}

/// The handle every part of recall shares.
#[derive(Clone)]
pub struct Dense {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Ctx,
    dir: PathBuf,
    enabled: bool,
    idle: Duration,
    model: Mutex<Option<Arc<Embedder>>>,
    /// The last load's error, kept so a damaged model is not read again on every search.
    broken: Mutex<Option<String>>,
    vectors: RwLock<Option<Vectors>>,
    /// When the model or the vectors were last used (ms).
    used_at: AtomicI64,
    /// Until when the machine is busy with a person's work (ms): a turn streaming, a hook
    /// waiting. The worker pauses until then.
    busy_until: AtomicI64,
    wake: Mutex<Option<std::sync::mpsc::Sender<worker::Wake>>>,
    fetching: AtomicBool,
    /// The fingerprint of the last model that loaded: its folder needs no new proof until its
    /// files change.
    verified: Mutex<Option<String>>,
}

impl Dense {
    pub fn new(ctx: Ctx, dir: PathBuf, enabled: bool, idle: Duration) -> Dense {
        Dense {
            inner: Arc::new(Inner {
                ctx,
                dir,
                enabled,
                idle,
                model: Mutex::new(None),
                broken: Mutex::new(None),
                vectors: RwLock::new(None),
                used_at: AtomicI64::new(0),
                busy_until: AtomicI64::new(0),
                wake: Mutex::new(None),
                fetching: AtomicBool::new(false),
                verified: Mutex::new(None),
            }),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    pub fn enabled(&self) -> bool {
        self.inner.enabled
    }

    pub(crate) fn ctx(&self) -> &Ctx {
        &self.inner.ctx
    }

    /// Where the model stands, without loading it.
    pub fn state(&self) -> ModelState {
        if !self.inner.enabled {
            return ModelState::Off;
        }
        if self.inner.fetching.load(Ordering::Relaxed) {
            return ModelState::Fetching;
        }
        if lock(&self.inner.model).is_some() {
            return ModelState::Ready { loaded: true };
        }
        if let Some(error) = lock(&self.inner.broken).clone() {
            return ModelState::Broken { error };
        }
        if !self.inner.dir.join("model.safetensors").exists() {
            return ModelState::Missing;
        }
        ModelState::Ready { loaded: false }
    }

    /// The model, loaded if it is not; `None` when it is off, missing or broken (a broken one is
    /// not read again until its files change: `forget_broken`).
    pub fn model(&self) -> Option<Arc<Embedder>> {
        if !self.inner.enabled {
            return None;
        }
        self.touch();
        let mut slot = lock(&self.inner.model);
        if let Some(m) = slot.as_ref() {
            return Some(m.clone());
        }
        if lock(&self.inner.broken).is_some() || !self.inner.dir.join("model.safetensors").exists()
        {
            return None;
        }
        match Embedder::load(&self.inner.dir) {
            Ok(m) => {
                *lock(&self.inner.verified) = Some(m.fingerprint().to_string());
                let m = Arc::new(m);
                *slot = Some(m.clone());
                // The worker sleeps until woken: it has turns to embed now, and a model to let
                // go when idle.
                self.wake();
                Some(m)
            }
            Err(error) => {
                tracing::warn!(%error, "the embedding model cannot be used; recall searches by words");
                *lock(&self.inner.broken) = Some(error);
                None
            }
        }
    }

    /// Which model the folder holds (a fingerprint of its files, read without loading it);
    /// `None` when it is off, missing, broken or unreadable.
    pub fn fingerprint(&self) -> Option<String> {
        if !self.inner.enabled
            || lock(&self.inner.broken).is_some()
            || self.inner.fetching.load(Ordering::Relaxed)
        {
            return None;
        }
        super::embed::fingerprint(&self.inner.dir).ok()
    }

    /// Whether the folder holds the model that last loaded, unchanged since (so it needs no new
    /// load to be known usable).
    pub fn proven(&self) -> bool {
        let fp = self.fingerprint();
        fp.is_some() && *lock(&self.inner.verified) == fp
    }

    /// Mark a fetch as under way; false when one already is.
    pub fn start_fetch(&self) -> bool {
        !self.inner.fetching.swap(true, Ordering::SeqCst)
    }

    /// A fetch ended: the folder is read afresh at the next use, and the worker goes on.
    pub fn end_fetch(&self) {
        self.inner.fetching.store(false, Ordering::SeqCst);
        self.forget_broken();
        self.wake();
    }

    /// Read a broken model's folder again at its next use (its files were replaced).
    pub fn forget_broken(&self) {
        lock(&self.inner.broken).take();
    }

    fn touch(&self) {
        self.inner.used_at.store(crate::now_ms(), Ordering::Relaxed);
    }

    /// A person's work is under way: the worker waits `for_ms` before its next turn.
    pub fn busy(&self, for_ms: i64) {
        self.inner
            .busy_until
            .fetch_max(crate::now_ms() + for_ms, Ordering::Relaxed);
    }

    pub fn is_busy(&self) -> bool {
        self.inner.busy_until.load(Ordering::Relaxed) > crate::now_ms()
    }

    /// Tell the worker there are new turns to embed.
    pub fn wake(&self) {
        if let Some(tx) = lock(&self.inner.wake).as_ref() {
            let _ = tx.send(worker::Wake::Turns);
        }
    }

    pub(crate) fn set_waker(&self, tx: std::sync::mpsc::Sender<worker::Wake>) {
        *lock(&self.inner.wake) = Some(tx);
    }

    /// How long until the model and the vectors may be let go; `None` when nothing is held.
    pub fn until_idle(&self) -> Option<Duration> {
        let held = lock(&self.inner.model).is_some() || read(&self.inner.vectors).is_some();
        if !held {
            return None;
        }
        let quiet = crate::now_ms() - self.inner.used_at.load(Ordering::Relaxed);
        let left = self.inner.idle.as_millis() as i64 - quiet;
        Some(Duration::from_millis(left.max(0) as u64))
    }

    /// Let go of the model and the vectors when nothing used them for the idle time; true when
    /// something was let go.
    pub fn unload_if_idle(&self) -> bool {
        let quiet = crate::now_ms() - self.inner.used_at.load(Ordering::Relaxed);
        if quiet < self.inner.idle.as_millis() as i64 {
            return false;
        }
        let model = lock(&self.inner.model).take();
        let vectors = write(&self.inner.vectors).take();
        let freed = model.is_some() || vectors.is_some();
        drop((model, vectors));
        if freed {
            give_back_memory();
            tracing::debug!("the embedding model and the vectors are let go until the next search");
        }
        freed
    }

    /// Add embedded turns to the vectors in memory, when they are loaded (else they are read
    /// from the store with the rest at the next search).
    pub fn put(&self, embedded: &[(i64, String, vectors::Packed)]) {
        if let Some(v) = write(&self.inner.vectors).as_mut() {
            for (id, session, p) in embedded {
                v.put(*id, session, p);
            }
        }
    }

    /// Drop the vectors in memory (the store's were cleared for another model).
    pub fn clear(&self) {
        write(&self.inner.vectors).take();
    }

    /// The meaning of a search's question, on every core (a person is waiting); `None` when
    /// there is no model to read it with. Blocking: the caller runs it off the runtime, beside
    /// the search's words half.
    pub fn question(&self, query: &str) -> Option<Vec<f32>> {
        Some(self.model()?.embed_now(query))
    }

    /// The `k` turns nearest in meaning to `question` (from [`Dense::question`]), within
    /// `sessions` when given; the vectors are read from the store if they are not in memory.
    pub fn nearest(
        &self,
        conn: &rusqlite::Connection,
        question: &[f32],
        sessions: Option<&[String]>,
        k: usize,
    ) -> Result<Vec<(i64, f32)>, StoreError> {
        self.touch();
        if read(&self.inner.vectors).is_none() {
            let loaded = load(conn, question.len())?;
            let mut slot = write(&self.inner.vectors);
            if slot.is_none() {
                *slot = Some(loaded);
                // The worker lets them go when idle: it must know they are held.
                self.wake();
            }
        }
        Ok(read(&self.inner.vectors)
            .as_ref()
            .map(|v| v.nearest(question, sessions, k))
            .unwrap_or_default())
    }

    /// Vectors held in memory now (bytes), for `recall.status`.
    pub fn held(&self) -> usize {
        read(&self.inner.vectors)
            .as_ref()
            .map(Vectors::bytes)
            .unwrap_or(0)
    }
}

/// Every stored vector of `dim` numbers, with its turn's session.
fn load(conn: &rusqlite::Connection, dim: usize) -> Result<Vectors, StoreError> {
    let mut v = Vectors::new(dim);
    let mut stmt = conn.prepare_cached(
        "SELECT v.id, t.session, v.v FROM recall_vectors v JOIN recall_turns t ON t.id = v.id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let bytes: Vec<u8> = r.get(2)?;
        if let Some(p) = vectors::from_bytes(&bytes, dim) {
            v.put(r.get(0)?, &r.get::<_, String>(1)?, &p);
        }
    }
    Ok(v)
}

/// The model the stored vectors were made with, if any.
pub fn stored_model(conn: &rusqlite::Connection) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT value FROM recall_dense WHERE key = 'model'",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// Turns that have a meaning vector.
pub fn embedded(conn: &rusqlite::Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("SELECT COUNT(*) FROM recall_vectors", [], |r| r.get(0))?)
}

/// Hand freed memory back to the system: the allocator keeps large freed blocks for reuse
/// otherwise, and an idle vyred would look as big as a busy one.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of glibc's heap to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}
fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}
