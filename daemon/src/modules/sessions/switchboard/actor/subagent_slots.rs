//! Subagent slots in a live session (ADR 0030 section 12): the driver's PreToolUse hook on the
//! Agent and Task tools waits here until the ledger has room; the slot goes back when the
//! subagent's task ends (or its call, when it never became a task) or the session stops.

use serde_json::json;

use super::*;
use crate::modules::sessions::slots::Kind;

/// What lets a waiting tool call go on.
fn go_on() -> Value {
    json!({ "continue": true })
}

impl Actor {
    pub(super) async fn on_slot_wanted(
        &mut self,
        session: &dyn Session,
        request: String,
        call: String,
    ) {
        let Some(slots) = self.board.router.slots() else {
            let _ = session.answer(&request, go_on());
            return;
        };
        let taken = slots
            .take(
                Kind::Subagent,
                Some(self.thread.clone()),
                self.project.clone(),
            )
            .await;
        match taken.granted {
            None => {
                self.slots.held.insert(call, taken.slot);
                let _ = session.answer(&request, go_on());
            }
            Some(granted) => {
                self.slots.waits.insert(request.clone(), (taken.slot, call));
                let me = self.me.clone();
                tokio::spawn(async move {
                    if granted.await.is_ok()
                        && let Some(tx) = me.upgrade()
                    {
                        let _ = tx.send(Command::SlotGranted { request });
                    }
                });
            }
        }
    }

    /// The ledger made room for a waiting subagent: let its call go on.
    pub(super) fn on_slot_granted(&mut self, session: &dyn Session, request: &str) {
        if let Some((slot, call)) = self.slots.waits.remove(request) {
            self.slots.held.insert(call, slot);
            let _ = session.answer(request, go_on());
        }
    }

    /// The CLI gave up a waiting call (an interrupt): leave the line.
    pub(super) async fn on_slot_withdrawn(&mut self, request: &str) {
        let Some((slot, _)) = self.slots.waits.remove(request) else {
            return;
        };
        if let Some(slots) = self.board.router.slots() {
            slots.release(&slot, "withdrawn").await;
        }
    }

    /// Call `call` is over for good (its task ended, or it never became one): its slot goes back.
    pub(super) async fn on_call_over(&mut self, call: &str) {
        self.slots.tasked.remove(call);
        if let Some(slot) = self.slots.held.remove(call)
            && let Some(slots) = self.board.router.slots()
        {
            slots.release(&slot, "done").await;
        }
    }
}
