//! Following one thread's folder across its turns: a snapshot when a turn begins and when it
//! ends, in order, on a task of the thread's own, so the session's first tool call waits at
//! most for the first snapshot (the actor awaits [`Follower::start`]'s answer before it lets a
//! tool run) and a turn's end never waits at all. At the end the files that differ are written
//! with the turn (`threads_changes`) and said in `thread.changed` (paths and counts, never
//! content), each marked by whether an Edit, Write or NotebookEdit call of the turn named it.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::shadow::{Shadow, unfollowable};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;

/// What a turn says when a tool ran before its first snapshot was taken.
const LATE: &str = "the folder's snapshot was still being taken when the turn's first tool ran: a change that tool made may be missing here";

/// Paths a `thread.changed` event names at most (the tool has them all).
const EVENT_PATHS: usize = 100;

/// A changed file as stored and listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct File {
    pub path: String,
    /// `added`, `modified`, `deleted` or `type`.
    pub status: String,
    /// An Edit, Write or NotebookEdit call of the turn named it; false for a change a command
    /// made without saying so.
    pub announced: bool,
    /// Over the size Vyre keeps: its change is said, its content is not kept or shown.
    #[serde(default)]
    pub too_big: bool,
}

enum Job {
    /// Read the folder into its store ahead of the first turn (a launch), so the first turn's
    /// snapshot finds only what changed.
    Warm { folder: PathBuf },
    Start {
        turn: String,
        folder: PathBuf,
        done: oneshot::Sender<()>,
    },
    End {
        turn: String,
        announced: BTreeSet<PathBuf>,
        /// A tool ran before the turn's first snapshot was taken.
        late: bool,
    },
}

/// A thread's follower: cheap to hold, its work on its own task.
pub struct Follower {
    tx: mpsc::UnboundedSender<Job>,
}

/// The turn being followed: its snapshot before, or why it is not followed.
struct Open {
    turn: String,
    folder: PathBuf,
    before: Result<(Shadow, String), String>,
}

/// Read `folder` into its store now, for a thread not made yet (a warm spare, ADR 0032): the
/// first turn of the thread that takes the spare then finds only what changed since, instead of
/// reading the folder while the person waits.
pub fn read_ahead(ctx: &Ctx, folder: &Path) {
    if unfollowable(folder).is_some() {
        return;
    }
    let root = ctx.home().root().join("changes");
    let folder = folder.to_path_buf();
    ctx.spawn(async move {
        if let Err(e) = snapshot(&root, &folder, &mut HashMap::new()).await {
            tracing::debug!(folder = %folder.display(), error = %e, "a spare's folder was not read ahead");
        }
    });
}

impl Follower {
    pub fn spawn(ctx: &Ctx, thread: &str) -> Follower {
        let (tx, rx) = mpsc::unbounded_channel();
        let root = ctx.home().root().join("changes");
        ctx.spawn(run(ctx.clone(), thread.to_string(), root, rx));
        Follower { tx }
    }

    /// The thread was launched in `folder`: read it into its store now.
    pub fn warm(&self, folder: &Path) {
        let _ = self.tx.send(Job::Warm {
            folder: folder.to_path_buf(),
        });
    }

    /// Turn `turn` begins in `folder`: its snapshot is taken; the answer comes when it is.
    pub fn start(&self, turn: &str, folder: &Path) -> oneshot::Receiver<()> {
        let (done, rx) = oneshot::channel();
        let _ = self.tx.send(Job::Start {
            turn: turn.to_string(),
            folder: folder.to_path_buf(),
            done,
        });
        rx
    }

    /// Turn `turn` ended; `announced` are the files its tool calls said they would change;
    /// `late` when a tool ran before the turn's first snapshot was taken.
    pub fn end(&self, turn: &str, announced: BTreeSet<PathBuf>, late: bool) {
        let _ = self.tx.send(Job::End {
            turn: turn.to_string(),
            announced,
            late,
        });
    }
}

async fn run(ctx: Ctx, thread: String, root: PathBuf, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut shadows: HashMap<PathBuf, Shadow> = HashMap::new();
    let mut open: Option<Open> = None;
    // Why the last turn was not followed: said once, not after every turn.
    let mut said: Option<String> = None;
    while let Some(job) = rx.recv().await {
        match job {
            Job::Warm { folder } => {
                if unfollowable(&folder).is_none()
                    && let Err(e) = snapshot(&root, &folder, &mut shadows).await
                {
                    tracing::debug!(%thread, error = %e, "the folder was not read ahead");
                }
            }
            Job::Start { turn, folder, done } => {
                let before = match unfollowable(&folder) {
                    Some(why) => Err(why),
                    None => snapshot(&root, &folder, &mut shadows).await,
                };
                open = Some(Open {
                    turn,
                    folder,
                    before,
                });
                let _ = done.send(());
            }
            Job::End {
                turn,
                announced,
                late,
            } => {
                let Some(o) = open.take().filter(|o| o.turn == turn) else {
                    continue;
                };
                let (files, note, trees) = match &o.before {
                    Err(why) => (vec![], Some(why.clone()), None),
                    Ok((shadow, before)) => match shadow.snapshot().await {
                        Err(e) => (vec![], Some(too_big(&e)), Some((before.clone(), None))),
                        Ok(after) => match shadow.changed(before, &after.tree).await {
                            Ok(changed) => {
                                let mut files: Vec<File> = changed
                                    .into_iter()
                                    .map(|c| File {
                                        announced: announced.contains(&o.folder.join(&c.path)),
                                        path: c.path,
                                        status: c.status.to_string(),
                                        too_big: false,
                                    })
                                    .collect();
                                let note =
                                    left_out(&mut files, &after.left_out, &announced, &o.folder);
                                (files, note, Some((before.clone(), Some(after.tree))))
                            }
                            Err(e) => (vec![], Some(e), Some((before.clone(), Some(after.tree)))),
                        },
                    },
                };
                let note = match (note, late) {
                    (None, true) => Some(LATE.to_string()),
                    (note, _) => note,
                };
                if files.is_empty() && note.is_some() && note == said {
                    continue;
                }
                said = note.clone();
                if let Err(e) = record(&ctx, &thread, &o, files, note, trees).await {
                    tracing::warn!(%thread, %turn, error = %e, "a turn's changes were not recorded");
                }
            }
        }
    }
}

/// Files the snapshot left out as too big: listed among the turn's files (one kept before shows
/// as modified, not deleted) and said in the note; their content is not kept.
fn left_out(
    files: &mut Vec<File>,
    big: &[(String, u64)],
    announced: &BTreeSet<PathBuf>,
    folder: &Path,
) -> Option<String> {
    if big.is_empty() {
        return None;
    }
    for (path, _) in big {
        match files.iter_mut().find(|f| &f.path == path) {
            Some(f) => {
                f.status = "modified".into();
                f.too_big = true;
            }
            None => files.push(File {
                path: path.clone(),
                status: "added".into(),
                announced: announced.contains(&folder.join(path)),
                too_big: true,
            }),
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let named: Vec<String> = big
        .iter()
        .map(|(p, n)| format!("{p} ({} MiB)", n / (1024 * 1024)))
        .collect();
    Some(format!(
        "over {} MiB, so not kept and not shown: {}",
        super::shadow::FILE_MAX / (1024 * 1024),
        named.join(", ")
    ))
}

fn too_big(e: &str) -> String {
    if e.contains("longer than") {
        format!(
            "the folder is too big to follow within {} s",
            super::shadow::SNAPSHOT_WAIT.as_secs()
        )
    } else {
        format!("the folder could not be read: {e}")
    }
}

async fn snapshot(
    root: &Path,
    folder: &Path,
    shadows: &mut HashMap<PathBuf, Shadow>,
) -> Result<(Shadow, String), String> {
    let shadow = match shadows.get(folder) {
        Some(s) => s.clone(),
        None => {
            let s = Shadow::open(root, folder).await?;
            shadows.insert(folder.to_path_buf(), s.clone());
            s
        }
    };
    let tree = shadow.snapshot().await.map_err(|e| too_big(&e))?.tree;
    Ok((shadow, tree))
}

type Trees = Option<(String, Option<String>)>;

async fn record(
    ctx: &Ctx,
    thread: &str,
    o: &Open,
    files: Vec<File>,
    note: Option<String>,
    trees: Trees,
) -> Result<(), crate::kernel::store::StoreError> {
    if files.is_empty() && note.is_none() {
        return Ok(());
    }
    let (before, after) = match trees {
        Some((b, a)) => (Some(b), a),
        None => (None, None),
    };
    let count = |s: &str| files.iter().filter(|f| f.status == s).count();
    let unannounced = files.iter().filter(|f| !f.announced).count();
    let mut payload = json!({
        "turn": o.turn,
        "files": files.len(),
        "added": count("added"),
        "modified": count("modified") + count("type"),
        "deleted": count("deleted"),
        "unannounced": unannounced,
        "paths": files.iter().take(EVENT_PATHS).map(|f| json!({ "path": f.path, "status": f.status, "announced": f.announced })).collect::<Vec<_>>(),
    });
    if let Some(n) = &note {
        payload["note"] = json!(n);
    }
    let (t, turn, folder) = (
        thread.to_string(),
        o.turn.clone(),
        o.folder.to_string_lossy().into_owned(),
    );
    let stored = serde_json::to_string(&files).unwrap_or_else(|_| "[]".into());
    ctx.store()
        .write(move |tx| {
            tx.conn().execute(
                "INSERT OR REPLACE INTO threads_changes (thread, turn, folder, before, after, files, note, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![t, turn, folder, before, after, stored, note, crate::now_ms()],
            )?;
            crate::modules::sessions::timeline::record(
                tx,
                NewEvent::new("thread.changed", payload).thread(&t),
            )?;
            Ok(())
        })
        .await
}
