//! Permission questions: raised (recorded before anyone can answer), answered by a person (the
//! Switchboard checked the answer against the row), withdrawn.

use serde_json::json;

use super::*;
use crate::kernel::contracts::provider::{ProviderError, Question};
use crate::modules::sessions::switchboard::handle::Answer;
use crate::modules::sessions::switchboard::types::{
    Decision, Outcome, PermissionMode, clean_value,
};

impl Actor {
    pub(super) async fn on_asked(&mut self, session: &dyn Session, q: Question) {
        let ask = crate::kernel::ids::random_hex(9);
        let summary = clean(&q.description.clone().unwrap_or_else(|| q.tool.clone()));
        let mut raised = json!({ "ask": ask, "kind": q.kind, "tool": q.tool, "summary": summary, "call": q.tool_use_id, "turn": self.last, "input": clean_value(&q.input) });
        // What a person needs before answering (issue 18): what "always" writes, and a warning.
        crate::modules::sessions::always::annotate(&mut raised, &q.tool, &q.input, &q.suggestions);
        // "waiting" is a turn's state: a question that comes in after its turn ended (the CLI's
        // request racing a result) stays answerable without claiming a turn that is not there,
        // which a restart would then end a second time.
        let running = matches!(self.turn, TurnState::Running(_));
        let waiting = running.then(|| json!({ "state": ThreadStatus::Waiting, "turn": self.last }));
        let (id, t, turn, q2) = (
            ask.clone(),
            self.thread.clone(),
            self.last.clone(),
            q.clone(),
        );
        let stored = self
            .board
            .change(move |tx| {
                rows::asks::insert(tx.conn(), &id, &t, turn.as_deref(), &q2, &summary)?;
                tell(tx, &t, "ask.raised", raised)?;
                if let Some(waiting) = waiting {
                    tell(tx, &t, "thread.state", waiting)?;
                    rows::runs::set_status(tx.conn(), &t, ThreadStatus::Waiting)?;
                }
                Ok(())
            })
            .await;
        if let Err(e) = stored {
            // Unrecorded, no one could answer it: the turn would wait for ever.
            tracing::error!(error = %e, "cannot record an ask; denying it");
            let why = "Vyre could not record this question (its store refused the write), so no one can answer it; try again.";
            let _ = session.answer(&q.request, json!({ "behavior": "deny", "message": why }));
            return;
        }
        self.asks.insert(q.request, ask);
        if running {
            self.show(self.status());
        }
    }

    pub(super) async fn on_answer(&mut self, session: &dyn Session, answer: Answer) -> Result<()> {
        let Answer {
            ask,
            request,
            response,
            decision,
            by,
            via,
        } = answer;
        if !self.asks.contains_key(&request) {
            return Err(Error::AskClosed("this question is no longer open"));
        }
        let answers = response
            .get("updatedInput")
            .and_then(|u| u.get("answers"))
            .map(clean_value);
        // What a deny told Claude, when the person said why.
        let message = (decision == Decision::Deny)
            .then(|| response["message"].as_str().map(clean))
            .flatten();
        // An "always" that switches the session's mode (Claude Code suggests Accept edits for a
        // file): the CLI switches with it and says so (`Happening::Mode`), which the thread's
        // mode then follows; this only remembers who asked for it.
        let switched: Option<PermissionMode> = response["updatedPermissions"]
            .as_array()
            .and_then(|ps| {
                ps.iter()
                    .rev()
                    .find(|p| p["type"] == "setMode")
                    .and_then(|p| p["mode"].as_str())
            })
            .and_then(|m| m.parse().ok());
        if let Some(mode) = switched {
            self.mode_by = Some((mode, "always"));
        }
        let answered = session.answer(&request, response);
        // An answer that does not fit what was asked leaves the question open for another.
        if !matches!(answered, Err(ProviderError::BadAnswer(_))) {
            self.asks.remove(&request);
        }
        answered.map_err(|error| Error::Provider {
            op: Op::Answer,
            error,
        })?;
        // What was chosen, for every surface (AskUserQuestion's answers; none for a permission).
        let outcome = decision.outcome();
        // `by` is the audit: who answered (`socket:501`, `device:<id>`, `link:<device>/<caller>`).
        let mut payload = json!({ "ask": ask, "decision": outcome, "turn": self.last, "by": by });
        if let Some(answers) = answers {
            payload["answers"] = answers;
        }
        if let Some(message) = message {
            payload["message"] = json!(message);
        }
        if let Some(via) = via {
            payload["via"] = json!(via);
        }
        let back = (!self.waits_on_person() && matches!(self.turn, TurnState::Running(_)))
            .then(|| json!({ "state": ThreadStatus::Running, "turn": self.last }));
        let running = back.is_some();
        let t = self.thread.clone();
        self.record(move |tx| {
            rows::asks::answered(tx.conn(), &ask, outcome, &by)?;
            tell(tx, &t, "ask.answered", payload)?;
            if let Some(back) = back {
                tell(tx, &t, "thread.state", back)?;
                rows::runs::set_status(tx.conn(), &t, ThreadStatus::Running)?;
            }
            Ok(())
        })
        .await;
        if running {
            self.show(self.status());
        }
        Ok(())
    }

    /// Withdraw an ask (`why`: the turn ended, an interrupt, a stop); told only if it was open.
    pub(super) async fn close_ask(&self, ask: &str, why: &str) {
        self.withdraw(vec![ask.to_string()], why).await;
    }

    /// Withdraw every open ask, in one change, and every call the Gate holds.
    pub(super) async fn cancel_asks(&mut self, why: &str) {
        self.cancel_gated(why).await;
        let open: Vec<String> = self.asks.drain().map(|(_, ask)| ask).collect();
        if !open.is_empty() {
            self.withdraw(open, why).await;
        }
    }

    async fn withdraw(&self, asks: Vec<String>, why: &str) {
        let (t, turn, why) = (self.thread.clone(), self.last.clone(), why.to_string());
        self.record(move |tx| {
            for ask in asks {
                if rows::asks::cancel(tx.conn(), &ask)? {
                    let payload = json!({ "ask": ask, "decision": Outcome::Cancelled, "reason": why, "turn": turn });
                    tell(tx, &t, "ask.answered", payload)?;
                }
            }
            Ok(())
        })
        .await;
    }
}
