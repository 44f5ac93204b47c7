//! The indexer: one worker thread at low priority that reads transcripts into recall's rows. A
//! full scan at start (with `history.indexed` progress), then only what the watcher says changed,
//! each file from its kept offset. It never runs on the async runtime, so it never holds up a
//! tool call or a hook.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;

use super::rows::{self, Batch};
use super::watch::Watch;
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::transcripts::{is_codex_root, line, rollout, tail};

/// What the worker is asked to do.
pub enum Job {
    /// Read every transcript under the roots (at start).
    Scan,
    /// Read what was appended to one file.
    File(PathBuf),
    /// Watch a folder that just appeared, then read every transcript in it.
    Folder(PathBuf),
    /// Try to watch roots that did not exist yet.
    Arm,
    Stop,
}

/// How far indexing is, for `recall.status` and the onboarding's progress bar.
#[derive(Debug, Default)]
pub struct Progress {
    pub scanning: AtomicBool,
    pub done: AtomicU64,
    pub total: AtomicU64,
    pub files_read: AtomicU64,
    pub unreadable: AtomicU64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProgressView {
    pub scanning: bool,
    pub done: u64,
    pub total: u64,
    pub files_read: u64,
    pub unreadable: u64,
}

impl Progress {
    pub fn view(&self) -> ProgressView {
        ProgressView {
            scanning: self.scanning.load(Ordering::Relaxed),
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
            files_read: self.files_read.load(Ordering::Relaxed),
            unreadable: self.unreadable.load(Ordering::Relaxed),
        }
    }
}

/// A scan writes this many files, or lines, per transaction.
const SCAN_FILES_PER_WRITE: usize = 50;
const SCAN_LINES_PER_WRITE: usize = 5000;

/// A transcript just read is read again at most this soon after (see [`Held`]).
const REREAD_AFTER: Duration = Duration::from_millis(200);

/// How often a scan reports progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

pub struct Worker {
    pub ctx: Ctx,
    pub roots: Vec<PathBuf>,
    pub progress: Arc<Progress>,
    pub rt: tokio::runtime::Handle,
    /// The file watch, to add watches to when roots or folders appear (none when the OS would
    /// not give one: transcripts are then read at start only).
    pub watch: Option<Arc<Mutex<Watch>>>,
    /// Told when turns were written, to embed them.
    pub dense: super::dense::Dense,
}

impl Worker {
    /// The worker's loop; returns when told to stop or when every sender is gone.
    pub fn run(mut self, jobs: mpsc::Receiver<Job>) {
        lower_priority();
        let mut held = Held::default();
        loop {
            let job = match held.next_due(Instant::now()) {
                None => match jobs.recv() {
                    Ok(job) => Some(job),
                    Err(_) => return,
                },
                Some(wait) => match jobs.recv_timeout(wait) {
                    Ok(job) => Some(job),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                },
            };
            let mut writes = vec![];
            match job {
                // Writes held back are due.
                None => {}
                Some(Job::File(path)) => {
                    // Coalesce a burst of writes to files: each is read once.
                    writes.push(path);
                    while let Ok(next) = jobs.try_recv() {
                        match next {
                            Job::File(p) => writes.push(p),
                            Job::Folder(f) => self.folder(&f),
                            Job::Scan => self.scan(),
                            Job::Arm => self.arm(),
                            Job::Stop => return,
                        }
                    }
                }
                Some(Job::Folder(f)) => self.folder(&f),
                Some(Job::Scan) => self.scan(),
                Some(Job::Arm) => self.arm(),
                Some(Job::Stop) => return,
            }
            let now = Instant::now();
            let mut read: Vec<PathBuf> = held.due(now);
            for path in writes {
                if held.wrote(&path, now) && !read.contains(&path) {
                    read.push(path);
                }
            }
            if !read.is_empty() {
                read.iter().for_each(|p| held.read(p, now));
                let found = read.iter().filter(|p| self.file(p)).count();
                self.found(found);
            }
        }
    }

    /// A folder that just appeared: watched, and every transcript in it read.
    fn folder(&mut self, f: &Path) {
        self.watch_folder(f);
        let found = jsonl_under(f, 2).iter().filter(|p| self.file(p)).count();
        self.found(found);
    }

    /// Watch the roots that exist now (and the way to those that do not).
    fn arm(&self) {
        if let Some(w) = &self.watch {
            w.lock().expect("watch").arm();
        }
    }

    /// Watch a folder that appeared, before it is read.
    fn watch_folder(&self, folder: &Path) {
        if let Some(w) = &self.watch {
            w.lock().expect("watch").folder(folder);
        }
    }

    fn scan(&mut self) {
        let files = transcript_files(&self.roots);
        let p = &self.progress;
        p.scanning.store(true, Ordering::Relaxed);
        p.total.store(files.len() as u64, Ordering::Relaxed);
        p.done.store(0, Ordering::Relaxed);
        let mut said = Instant::now();
        self.announce();
        // Many files per transaction: a scan is throughput, not latency.
        let mut pending: Vec<Batch> = vec![];
        let mut lines = 0;
        for (i, path) in files.iter().enumerate() {
            if let Some(b) = self.read(path) {
                lines += b.lines.len();
                pending.push(b);
            }
            if pending.len() >= SCAN_FILES_PER_WRITE || lines >= SCAN_LINES_PER_WRITE {
                self.write(std::mem::take(&mut pending), false);
                lines = 0;
            }
            self.progress.done.store(i as u64 + 1, Ordering::Relaxed);
            if said.elapsed() >= PROGRESS_EVERY {
                said = Instant::now();
                self.announce();
            }
        }
        self.write(pending, false);
        self.progress.scanning.store(false, Ordering::Relaxed);
        self.announce();
    }

    fn announce(&self) {
        let v = self.progress.view();
        // Nothing to read, nothing to say (`recall.status` still answers).
        if v.total == 0 {
            return;
        }
        let event = NewEvent::new(
            "history.indexed",
            json!({ "done": v.done, "total": v.total, "scanning": v.scanning }),
        );
        if let Err(e) = self.rt.block_on(self.ctx.events().emit(event)) {
            tracing::debug!(error = %e, "progress not recorded");
        }
    }

    /// Read what is new in one transcript and write it at once (a change the watcher saw).
    /// True when recall had never read this file: a transcript found after the scan.
    fn file(&self, path: &Path) -> bool {
        match self.read_kept(path) {
            Some((b, first)) => {
                self.write(vec![b], true);
                first
            }
            None => false,
        }
    }

    /// Transcripts the watcher found after the scan count in the progress as the scan's own do,
    /// so `history.indexed` ends at done = total whenever the files appeared.
    fn found(&self, n: usize) {
        if n == 0 {
            return;
        }
        self.progress.total.fetch_add(n as u64, Ordering::Relaxed);
        self.progress.done.fetch_add(n as u64, Ordering::Relaxed);
        self.announce();
    }

    /// Write batches in one transaction. `say`: a change the watcher saw, told as `recall.read`
    /// when it added turns (a scan says `history.indexed` instead), so what learns from the
    /// turns (the memory's curator) reads them then, and never polls.
    fn write(&self, batches: Vec<Batch>, say: bool) {
        if batches.is_empty() {
            return;
        }
        let n = batches.len();
        if let Err(e) = self.rt.block_on(self.ctx.store().write(move |tx| {
            let added = rows::apply_all(tx, &batches)?;
            if say && added > 0 {
                tx.emit(NewEvent::new("recall.read", json!({ "turns": added })))?;
            }
            Ok(added)
        })) {
            tracing::warn!(files = n, error = %e, "transcripts not indexed");
            return;
        }
        self.dense.wake();
    }

    /// Read what is new in one transcript. Trouble with one file is counted and logged, never
    /// raised: history is best effort.
    fn read(&self, path: &Path) -> Option<Batch> {
        self.read_kept(path).map(|(b, _)| b)
    }

    /// [`Self::read`], and whether recall had kept nothing of this file before.
    fn read_kept(&self, path: &Path) -> Option<(Batch, bool)> {
        let found = session_of(path, &self.roots)?;
        let codex = rollout::session_of(path).is_some();
        let parse: fn(&[u8]) -> Result<line::Line, line::Broken> = match codex {
            true => rollout::parse,
            false => line::parse,
        };
        let key = path.display().to_string();
        let store = self.ctx.store();
        let k = key.clone();
        let kept = self
            .rt
            .block_on(store.read(move |c| rows::kept(c, &k)))
            .ok()
            .flatten();
        let first = kept.is_none();
        let kept = kept.unwrap_or_default();
        // Never through a link: a transcript or folder a session planted as one is unreadable.
        let chunk = match crate::kernel::transcripts::open(path)
            .and_then(|f| tail::read_as(f, kept.offset, parse))
        {
            Ok(c) => c,
            Err(e) => {
                self.progress.unreadable.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(path = %path.display(), error = %e, "transcript not readable; skipped");
                return None;
            }
        };
        if chunk.offset == kept.offset && !chunk.restarted {
            return None;
        }
        self.progress.files_read.fetch_add(1, Ordering::Relaxed);
        let filed = kept.session.clone().unwrap_or(found);
        // A Codex thread Vyre ran names Vyre's thread in its messages: filed under that one.
        let owner = codex
            .then(|| {
                chunk.lines.iter().find_map(|l| match l {
                    line::Line::Said(s) => s.session.clone(),
                    _ => None,
                })
            })
            .flatten()
            .filter(|o| *o != filed);
        let (session, renamed_from) = match owner {
            Some(owner) => (owner, Some(filed)),
            None => (filed, None),
        };
        let batch = Batch {
            path: key,
            session,
            lines: chunk.lines,
            offset: chunk.offset,
            read: chunk.read,
            broken: chunk.broken,
            restarted: chunk.restarted,
            written_at: chunk.modified_ms,
            renamed_from,
        };
        Some((batch, first))
    }
}

/// The session a transcript belongs to, if `path` is one: `<root>/<folder>/<session>.jsonl`
/// (a subagent's side file deeper down is not a session), or a Codex rollout
/// `<root>/YYYY/MM/DD/rollout-<time>-<thread>.jsonl` under a Codex root.
pub fn session_of(path: &Path, roots: &[PathBuf]) -> Option<String> {
    if path.extension()? != "jsonl" {
        return None;
    }
    if let Some(thread) = rollout::session_of(path) {
        let root = path.ancestors().nth(4)?;
        return roots
            .iter()
            .any(|r| r == root && is_codex_root(r))
            .then_some(thread);
    }
    let folder = path.parent()?;
    if !roots
        .iter()
        .any(|r| folder.parent() == Some(r.as_path()) && !is_codex_root(r))
    {
        return None;
    }
    Some(path.file_stem()?.to_str()?.to_string())
}

/// Every transcript under the roots, newest first (the onboarding shows recent history soonest).
pub fn transcript_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = vec![];
    for root in roots {
        // Claude Code's sessions are one folder down; Codex's rollouts three (YYYY/MM/DD).
        let depth = if is_codex_root(root) { 3 } else { 1 };
        for path in jsonl_under(root, depth) {
            let mtime = std::fs::symlink_metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            files.push((mtime, path));
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    files.into_iter().map(|(_, p)| p).collect()
}

/// The `.jsonl` files `depth` folders below `folder` (0: in it), and those in the folders on
/// the way when a folder that appeared is read (a Codex day's folder made with its first file).
/// Links are skipped here (their type is the link's own), and refused when read.
fn jsonl_under(folder: &Path, depth: usize) -> Vec<PathBuf> {
    let mut found = vec![];
    for e in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = e.path();
        if depth > 0 && is_dir(&e) {
            found.extend(jsonl_under(&path, depth - 1));
        } else if is_file(&e) && path.extension().is_some_and(|x| x == "jsonl") {
            found.push(path);
        }
    }
    found
}

/// A folder, not a link to one.
fn is_dir(e: &std::fs::DirEntry) -> bool {
    e.file_type().is_ok_and(|t| t.is_dir())
}

/// A regular file, not a link to one.
fn is_file(e: &std::fs::DirEntry) -> bool {
    e.file_type().is_ok_and(|t| t.is_file())
}

/// Which transcripts were just read, and which written since are held back. A session writes
/// its transcript a line at a time (Codex a line per event, ten or more in a turn's first 50
/// ms), and each write read at once was a store transaction and a `recall.read` event, run on
/// two cores beside the session building its request. So the first write to a file is read at
/// once (a prompt is searchable within milliseconds: the recall bench's target), and more writes
/// to it within [`REREAD_AFTER`] wait until then, read together. Other files are not held.
#[derive(Default)]
struct Held {
    read_at: HashMap<PathBuf, Instant>,
    /// Written since their last read, which is in `read_at`: due [`REREAD_AFTER`] after it.
    held: HashSet<PathBuf>,
}

impl Held {
    /// A write to `path` at `now`: whether to read it now; if not, it is held until due.
    fn wrote(&mut self, path: &Path, now: Instant) -> bool {
        if self.held.contains(path) {
            return false;
        }
        let recent = self
            .read_at
            .get(path)
            .is_some_and(|at| now.saturating_duration_since(*at) < REREAD_AFTER);
        if recent {
            self.held.insert(path.to_path_buf());
        }
        !recent
    }

    /// `path` was read at `now`.
    fn read(&mut self, path: &Path, now: Instant) {
        self.held.remove(path);
        self.read_at.insert(path.to_path_buf(), now);
    }

    /// When a held file is due.
    fn due_at(&self, path: &Path) -> Option<Instant> {
        self.read_at.get(path).map(|at| *at + REREAD_AFTER)
    }

    /// The held files due by `now`, taken (and what was read too long ago to matter, forgotten).
    fn due(&mut self, now: Instant) -> Vec<PathBuf> {
        let ready: Vec<PathBuf> = self
            .held
            .iter()
            .filter(|p| self.due_at(p).is_none_or(|at| at <= now))
            .cloned()
            .collect();
        for p in &ready {
            self.held.remove(p);
        }
        self.read_at
            .retain(|_, at| now.saturating_duration_since(*at) < REREAD_AFTER);
        ready
    }

    /// How long until the next held file is due; `None` when none is held.
    fn next_due(&self, now: Instant) -> Option<Duration> {
        self.held
            .iter()
            .map(|p| self.due_at(p).unwrap_or(now))
            .min()
            .map(|at| at.saturating_duration_since(now))
    }
}

/// Indexing yields to everything else on the machine.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; setpriority on this thread's id only changes its
    // own niceness.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_write_is_read_at_once_and_more_wait_their_turn() {
        let (t0, a, b) = (Instant::now(), Path::new("a"), Path::new("b"));
        let ms = |n| t0 + Duration::from_millis(n);
        let mut held = Held::default();
        assert!(held.wrote(a, t0), "a file not read lately is read at once");
        held.read(a, t0);
        // More writes to it in the next REREAD_AFTER wait, together, until then.
        assert!(!held.wrote(a, ms(5)));
        assert!(!held.wrote(a, ms(9)));
        assert_eq!(
            held.next_due(ms(10)),
            Some(REREAD_AFTER - Duration::from_millis(10))
        );
        // Another file is not held.
        assert!(held.wrote(b, ms(10)));
        held.read(b, ms(10));
        assert!(held.due(ms(100)).is_empty());
        assert_eq!(held.due(t0 + REREAD_AFTER), [PathBuf::from("a")]);
        held.read(a, t0 + REREAD_AFTER);
        assert_eq!(held.next_due(ms(300)), None, "nothing held");
        // Long after its last read, a write is read at once again.
        assert!(held.wrote(a, t0 + REREAD_AFTER * 3));
    }

    #[test]
    fn a_file_written_without_pause_is_read_every_reread_after() {
        let t0 = Instant::now();
        let mut held = Held::default();
        let mut reads = 0;
        for n in 0..100 {
            let now = t0 + Duration::from_millis(n * 10);
            let mut read = held.due(now);
            if held.wrote(Path::new("busy"), now) {
                read.push("busy".into());
            }
            if !read.is_empty() {
                reads += 1;
                held.read(Path::new("busy"), now);
            }
        }
        // A second of writes every 10 ms: read at its first and then every 200 ms.
        assert_eq!(reads, 5);
    }

    #[test]
    fn only_files_one_folder_below_a_root_are_sessions() {
        let roots = vec![PathBuf::from("/h/.claude/projects")];
        assert_eq!(
            session_of(Path::new("/h/.claude/projects/-w/abc.jsonl"), &roots),
            Some("abc".into())
        );
        assert_eq!(
            session_of(
                Path::new("/h/.claude/projects/-w/abc/subagents/agent-1.jsonl"),
                &roots
            ),
            None
        );
        assert_eq!(
            session_of(Path::new("/h/.claude/projects/-w/abc.txt"), &roots),
            None
        );
        assert_eq!(
            session_of(Path::new("/elsewhere/-w/abc.jsonl"), &roots),
            None
        );
        // Codex's rollouts, three folders below its root, and only there.
        let id = "01a2457f-2e49-7ec2-8313-a4f65484832a";
        let roots = vec![PathBuf::from("/h/.codex/sessions")];
        let rollout =
            format!("/h/.codex/sessions/2026/12/05/rollout-2026-12-05T09-18-12-{id}.jsonl");
        assert_eq!(session_of(Path::new(&rollout), &roots).as_deref(), Some(id));
        let shallow = format!("/h/.codex/sessions/2026/rollout-2026-12-05T09-18-12-{id}.jsonl");
        assert_eq!(session_of(Path::new(&shallow), &roots), None);
        let claude = vec![PathBuf::from("/h/.claude/projects")];
        let planted =
            format!("/h/.claude/projects/2026/12/05/rollout-2026-12-05T09-18-12-{id}.jsonl");
        assert_eq!(session_of(Path::new(&planted), &claude), None);
    }
}
