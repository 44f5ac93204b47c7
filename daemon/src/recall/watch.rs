//! Following transcripts as they change, through the OS's file events (`notify`: inotify on
//! Linux, FSEvents on the Mac), never by polling. A root that does not exist yet (a fresh
//! machine's `~/.claude/projects`) is waited for by watching its nearest existing parent.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

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
            let Ok(event) = res else { return };
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            tracing::debug!(kind = ?event.kind, paths = ?event.paths, "transcripts: file event");
            let created = matches!(event.kind, EventKind::Create(_));
            for path in event.paths {
                if path.extension().is_some_and(|x| x == "jsonl") {
                    let _ = jobs.send(Job::File(path));
                } else if created && wanted.iter().any(|r| r.starts_with(&path)) {
                    // A root, or a folder on the way to one, appeared.
                    let _ = jobs.send(Job::Arm);
                    let _ = jobs.send(Job::Scan);
                    again(&jobs, Job::Scan);
                } else if created
                    && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
                    && wanted.iter().any(|r| path.starts_with(r))
                {
                    // A new folder under a root: what was written into it before its watch was
                    // in place is read from it now, and once more a moment later (the watch on
                    // a new folder is added as its event is handled, so a file written in
                    // between has no event of its own).
                    let _ = jobs.send(Job::Folder(path.clone()));
                    again(&jobs, Job::Folder(path));
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
    /// parent (that folder only).
    pub fn arm(&mut self) {
        for root in self.roots.clone() {
            let target = if root.is_dir() {
                (root.clone(), true)
            } else {
                match nearest_existing(&root) {
                    Some(parent) => (parent, false),
                    None => continue,
                }
            };
            if self.watched.contains(&target) {
                continue;
            }
            let mode = if target.1 {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            match self.watcher.watch(&target.0, mode) {
                Ok(()) => {
                    tracing::debug!(path = %target.0.display(), recursive = target.1, "transcripts: watching");
                    self.watched.insert(target);
                }
                Err(e) => {
                    tracing::warn!(path = %target.0.display(), error = %e, "cannot follow transcripts here")
                }
            }
        }
    }
}

/// Send `job` once more after a moment, for what a new folder's first moments may hide. Only
/// when a folder appears: never a polling loop.
fn again(jobs: &mpsc::Sender<Job>, job: Job) {
    let jobs = jobs.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let _ = jobs.send(job);
    });
}

fn nearest_existing(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|p| p.is_dir())
        .map(Path::to_path_buf)
}
