//! Following transcripts as they change, through the OS's file events (`notify`: inotify on
//! Linux, FSEvents on the Mac), never by polling. A root that does not exist yet (a fresh
//! machine's `~/.claude/projects`) is waited for by watching its nearest existing parent.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use notify::event::{ModifyKind, RenameMode};
use notify::{EventKind, RecursiveMode, Watcher};

use super::index::Job;

pub struct Watch {
    watcher: notify::RecommendedWatcher,
    roots: Vec<PathBuf>,
    /// Paths watched, and whether recursively (a root) or not (a parent waiting for a root).
    watched: HashSet<(PathBuf, bool)>,
}

impl Watch {
    pub fn start(roots: Vec<PathBuf>, jobs: mpsc::Sender<Job>) -> notify::Result<Watch> {
        let wanted = roots.clone();
        // Links are not followed: what a session links into its projects folder is not watched
        // (and not read: `transcripts::open`).
        let config = notify::Config::default().with_follow_symlinks(false);
        let handler = move |res: notify::Result<notify::Event>| {
            let event = match res {
                Ok(event) => event,
                Err(e) => {
                    // A watch that could not be added (the machine's inotify limit): what it
                    // would have seen is read by a scan, and the person is told why recall lags.
                    tracing::warn!(error = %e, "transcripts: a watch failed; reading everything again");
                    let _ = jobs.send(Job::Scan);
                    return;
                }
            };
            if event.need_rescan() {
                // The OS dropped events (its queue overflowed): only a scan knows what changed.
                let _ = jobs.send(Job::Scan);
                return;
            }
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            tracing::debug!(kind = ?event.kind, paths = ?event.paths, "transcripts: file event");
            // A folder made here, or moved in from elsewhere (whose files have no events).
            let appeared = matches!(
                event.kind,
                EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(RenameMode::To))
            );
            for path in event.paths {
                if path.extension().is_some_and(|x| x == "jsonl") {
                    let _ = jobs.send(Job::File(path));
                } else if appeared && wanted.iter().any(|r| r.starts_with(&path)) {
                    // A root, or a folder on the way to one, appeared: watch what exists now,
                    // then read it all (the worker does both, in that order).
                    let _ = jobs.send(Job::Arm);
                    let _ = jobs.send(Job::Scan);
                } else if appeared
                    && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
                    && wanted.iter().any(|r| path.starts_with(r))
                {
                    // A new folder under a root. The backend adds its watch only after this
                    // handler returns, so a file written in between has no event of its own:
                    // the worker watches the folder itself first ([`Watch::folder`]) and then
                    // reads what is in it. Nothing depends on how fast either thread runs.
                    let _ = jobs.send(Job::Folder(path));
                }
            }
        };
        let watcher = notify::RecommendedWatcher::new(handler, config)?;
        let mut w = Watch {
            watcher,
            roots,
            watched: HashSet::new(),
        };
        w.arm();
        Ok(w)
    }

    /// Watch every root that exists (recursively) and, for the others, their nearest existing
    /// parent (that folder only). After each watch the way to the root is looked at again: a
    /// folder made before the watch was in place is found then, one made after has an event.
    pub fn arm(&mut self) {
        for root in self.roots.clone() {
            loop {
                let target = if root.is_dir() {
                    (root.clone(), true)
                } else {
                    match nearest_existing(&root) {
                        Some(parent) => (parent, false),
                        None => break,
                    }
                };
                if self.watched.contains(&target) {
                    break;
                }
                let mode = if target.1 {
                    RecursiveMode::Recursive
                } else {
                    RecursiveMode::NonRecursive
                };
                match self.watcher.watch(&target.0, mode) {
                    Ok(()) => {
                        tracing::debug!(path = %target.0.display(), recursive = target.1, "transcripts: watching");
                        let done = target.1;
                        self.watched.insert(target);
                        if done {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(path = %target.0.display(), error = %e, "cannot follow transcripts here");
                        break;
                    }
                }
            }
        }
    }

    /// Watch a folder that appeared under a root, and return once the watch is in place: every
    /// change after this call has an event, so reading the folder after it misses nothing.
    pub fn folder(&mut self, folder: &Path) {
        if let Err(e) = self.watcher.watch(folder, RecursiveMode::Recursive) {
            // Gone again, or the machine's watch limit: a later scan still reads it.
            tracing::debug!(path = %folder.display(), error = %e, "transcripts: folder not watched");
        }
    }
}

fn nearest_existing(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|p| p.is_dir())
        .map(Path::to_path_buf)
}
