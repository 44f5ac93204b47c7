//! What a turn changes in the thread's folder (issue 25): the folder's snapshot is taken as the
//! turn begins and as it ends, by the thread's follower (`sessions/changes/follow.rs`). The
//! first snapshot waits until the session first answers in the turn, or [`FIRST_SNAPSHOT_AFTER`]
//! has passed, whichever comes first: meanwhile the session builds its request to the model
//! without git beside it on the processor, and nothing the turn does can come before the
//! model's first answer. The first tool call or question of a turn waits for that snapshot
//! (usually long done), so nothing the turn does lands in its "before". Edit, Write and
//! NotebookEdit calls say which files they change; anything else that changed was changed
//! without saying so.

use std::time::Duration;

use serde_json::Value;

use super::*;
use crate::kernel::contracts::provider::Happening;

/// The longest a tool call waits for its turn's first snapshot (the folder is read ahead at
/// launch, so this is a large folder's first turn); after it the tool runs and the turn says
/// its changes may be incomplete.
const FIRST_SNAPSHOT_WAIT: Duration = Duration::from_secs(2);

/// How long after a turn begins its first snapshot starts if the session has not answered yet:
/// longer than Claude Code or Codex take to send a turn's request here (35-120 ms), shorter
/// than a model takes to answer it.
pub(super) const FIRST_SNAPSHOT_AFTER: Duration = Duration::from_millis(150);

/// What the session says once the model has answered in the turn (or the turn is over): the
/// turn's first snapshot should be under way by then.
pub(super) fn answers(h: &Happening) -> bool {
    match h {
        Happening::Text { .. }
        | Happening::ToolStarted { .. }
        | Happening::ToolEnded { .. }
        | Happening::Asked(_)
        | Happening::Checking { .. }
        | Happening::Ending { .. }
        | Happening::SlotWanted { .. }
        | Happening::TaskStarted { .. }
        | Happening::TaskEnded { .. }
        | Happening::Finished { .. } => true,
        Happening::TurnBegan { .. }
        | Happening::Withdrawn { .. }
        | Happening::Steered { .. }
        | Happening::Limit(_)
        | Happening::Mode { .. }
        | Happening::Retry { .. }
        | Happening::Garbage(_) => false,
    }
}

impl Actor {
    /// A turn began: its first snapshot is owed, due [`FIRST_SNAPSHOT_AFTER`] from now.
    pub(super) fn changes_begin(&mut self) {
        self.changes.announced.clear();
        self.changes.late = false;
        self.changes.started = None;
        self.changes.due = (self.changes.follower.is_some() && self.changes.folder.is_some())
            .then(|| tokio::time::Instant::now() + self.changes.after);
    }

    /// Start the turn's first snapshot if it is owed.
    pub(super) fn changes_start(&mut self) {
        if self.changes.due.take().is_none() {
            return;
        }
        if let (Some(f), Some(folder), Some(turn)) =
            (&self.changes.follower, &self.changes.folder, &self.last)
        {
            self.changes.started = Some(f.start(turn, folder));
        }
    }

    pub(super) fn changes_end(&mut self) {
        // A turn that ended before its first snapshot was due: nothing it did came before.
        self.changes_start();
        self.changes.started = None;
        let announced = std::mem::take(&mut self.changes.announced);
        if let (Some(f), Some(turn)) = (&self.changes.follower, &self.last) {
            f.end(turn, announced, self.changes.late);
        }
    }

    /// The turn's first snapshot is taken (started now if it was not), or
    /// [`FIRST_SNAPSHOT_WAIT`] has passed.
    pub(super) async fn changes_first_snapshot(&mut self) {
        self.changes_start();
        if let Some(started) = self.changes.started.take()
            && tokio::time::timeout(FIRST_SNAPSHOT_WAIT, started)
                .await
                .is_err()
        {
            tracing::warn!(thread = %self.thread, "a turn's first snapshot took too long; its tool runs");
            self.changes.late = true;
        }
    }

    /// Before a tool runs: the turn's first snapshot is there, and the files it names are noted.
    pub(super) async fn changes_before_tool(&mut self, tool: &str, input: &Value) {
        self.changes_first_snapshot().await;
        let key = match tool {
            "Edit" | "Write" | "MultiEdit" => "file_path",
            "NotebookEdit" => "notebook_path",
            _ => return,
        };
        if let Some(path) = input[key].as_str() {
            let path = std::path::PathBuf::from(path);
            let path = match (&self.changes.folder, path.is_absolute()) {
                (Some(folder), false) => folder.join(path),
                _ => path,
            };
            self.changes.announced.insert(path);
        }
    }
}
