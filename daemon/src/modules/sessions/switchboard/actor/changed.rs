//! What a turn changes in the thread's folder (issue 25): the folder's snapshot is taken as the
//! turn begins and as it ends, by the thread's follower (`sessions/changes/follow.rs`). The
//! first tool call of a turn waits for the first snapshot (usually long done: the model answers
//! first), so nothing the turn does lands in its "before". Edit, Write and NotebookEdit calls
//! say which files they change; anything else that changed was changed without saying so.

use std::time::Duration;

use serde_json::Value;

use super::*;

/// The longest a tool call waits for its turn's first snapshot (the folder is read ahead at
/// launch, so this is a large folder's first turn); after it the tool runs and the turn says
/// its changes may be incomplete.
const FIRST_SNAPSHOT_WAIT: Duration = Duration::from_secs(2);

impl Actor {
    pub(super) fn changes_begin(&mut self) {
        self.changes.announced.clear();
        self.changes.late = false;
        if let (Some(f), Some(folder), Some(turn)) =
            (&self.changes.follower, &self.changes.folder, &self.last)
        {
            self.changes.started = Some(f.start(turn, folder));
        }
    }

    pub(super) fn changes_end(&mut self) {
        self.changes.started = None;
        let announced = std::mem::take(&mut self.changes.announced);
        if let (Some(f), Some(turn)) = (&self.changes.follower, &self.last) {
            f.end(turn, announced, self.changes.late);
        }
    }

    /// Before a tool runs: the turn's first snapshot is there, and the files it names are noted.
    pub(super) async fn changes_before_tool(&mut self, tool: &str, input: &Value) {
        if let Some(started) = self.changes.started.take()
            && tokio::time::timeout(FIRST_SNAPSHOT_WAIT, started)
                .await
                .is_err()
        {
            tracing::warn!(thread = %self.thread, "a turn's first snapshot took too long; its tool runs");
            self.changes.late = true;
        }
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
