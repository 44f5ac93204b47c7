//! What a vyred that died (a crash, kill -9) left behind: its live sessions' processes went
//! with it. At the threads module's start they are told stopped, their open asks withdrawn and
//! their running turns ended, in one transaction; they resume on the next send.

use serde_json::json;

use super::*;

impl Switchboard {
    /// Close what the last vyred left open.
    pub(crate) fn after_restart(tx: &mut WriteTx<'_>) -> Result<(), StoreError> {
        let left = rows::runs::stop_left_live(tx.conn())?;
        let asks = rows::asks::cancel_all_open(tx.conn())?;
        // Recorded through the timeline, which closes what they leave open.
        for (ask, thread) in asks {
            let payload =
                json!({ "ask": ask, "decision": Outcome::Cancelled, "reason": "restart" });
            tell(tx, &thread, "ask.answered", payload)?;
        }
        for (thread, status, turns) in &left {
            // A turn is running exactly when its row says so: the turn's start and its end
            // each commit with the row's status.
            if matches!(status, ThreadStatus::Running | ThreadStatus::Waiting) {
                let payload = json!({ "ok": false, "canceled": true, "reason": "restart", "turn": format!("{thread}:{turns}") });
                tell(tx, thread, "thread.finished", payload)?;
            }
            tell(tx, thread, "thread.stopped", json!({ "reason": "restart" }))?;
        }
        Ok(())
    }
}
