//! Subagent slots in a live session (ADR 0030 section 12): the driver's PreToolUse hook on the
//! Agent and Task tools waits here until the ledger has room; the slot goes back when the
//! subagent's task ends (or its call, when it never became a task) or the session stops.

use serde_json::json;

use super::actor::Actor;
use super::*;
use crate::sessions::slots::Kind;

/// What lets a waiting tool call go on.
fn go_on() -> Value {
    json!({ "continue": true })
}

impl Switchboard {
    pub(super) async fn on_slot_wanted(
        &self,
        a: &mut Actor,
        session: &dyn Session,
        request: String,
        call: String,
    ) {
        let Some(slots) = self.router.slots() else {
            let _ = session.answer(&request, go_on());
            return;
        };
        let taken = slots
            .take(Kind::Subagent, Some(a.thread.clone()), a.project.clone())
            .await;
        match taken.granted {
            None => {
                a.slots_held.insert(call, taken.slot);
                let _ = session.answer(&request, go_on());
            }
            Some(granted) => {
                a.slot_waits.insert(request.clone(), (taken.slot, call));
                let me = a.me.clone();
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
    pub(super) fn on_slot_granted(&self, a: &mut Actor, session: &dyn Session, request: &str) {
        if let Some((slot, call)) = a.slot_waits.remove(request) {
            a.slots_held.insert(call, slot);
            let _ = session.answer(request, go_on());
        }
    }

    /// The CLI gave up a waiting call (an interrupt): leave the line.
    pub(super) async fn on_slot_withdrawn(&self, a: &mut Actor, request: &str) -> bool {
        let Some((slot, _)) = a.slot_waits.remove(request) else {
            return false;
        };
        if let Some(slots) = self.router.slots() {
            slots.release(&slot, "withdrawn").await;
        }
        true
    }

    /// Call `call` is over for good (its task ended, or it never became one): its slot goes back.
    pub(super) async fn on_call_over(&self, a: &mut Actor, call: &str) {
        a.tasked.remove(call);
        if let Some(slot) = a.slots_held.remove(call)
            && let Some(slots) = self.router.slots()
        {
            slots.release(&slot, "done").await;
        }
    }

    /// The session ended: every slot of the thread goes back.
    pub(super) async fn release_slots(&self, thread: &str, reason: &str) {
        if let Some(slots) = self.router.slots() {
            slots.release_thread(thread, reason).await;
        }
    }
}
