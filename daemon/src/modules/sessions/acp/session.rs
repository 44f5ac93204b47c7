//! One live ACP session: prompts as turns, the agent's updates and permission requests as the
//! provider contract's happenings, the Switchboard's answers as the option the agent offered
//! that means the same, an interrupt as `session/cancel` with every open question answered
//! `cancelled` (as the protocol asks of a client).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::translate::Translator;
use crate::kernel::contracts::provider::{
    BoxFuture, Exit, Happening, Priority, ProcessIds, ProviderError, Question, Session,
    SlashCommand,
};
use crate::modules::sessions::agent_process::AgentProcess;
use crate::modules::sessions::rpc::{Incoming, Rpc, RpcError};

/// A permission request of the agent's, open: its JSON-RPC id and its options (id, kind).
struct Open {
    id: Value,
    options: Vec<(String, String)>,
}

/// What `&self` methods change and `next` reads.
#[derive(Default)]
struct Shared {
    questions: HashMap<String, Open>,
    running: bool,
    commands: Vec<SlashCommand>,
}

/// What reaches `next` besides the agent's own messages.
enum Side {
    Began(String),
    Said(Happening),
    /// A prompt's answer: the turn is over.
    Answered(Result<Value, String>),
}

pub struct AcpSession {
    process: AgentProcess,
    ids: ProcessIds,
    session: String,
    rpc: Rpc,
    shared: Arc<Mutex<Shared>>,
    side_tx: mpsc::UnboundedSender<Side>,
    side_rx: mpsc::UnboundedReceiver<Side>,
    queue: VecDeque<Happening>,
    translator: Translator,
    /// The modes the agent offers, by id.
    modes: Vec<String>,
    /// Where the thread's session is kept, until the agent first answers in it.
    unanswered: Option<(std::path::PathBuf, super::Kept)>,
}

fn lock(m: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn refused(e: RpcError) -> ProviderError {
    match e {
        RpcError::Closed => ProviderError::Gone,
        RpcError::Refused { message, .. } => ProviderError::Refused(message),
    }
}

/// Claude content blocks (what Vyre sends every provider) as ACP content blocks.
fn prompt(content: &Value) -> Vec<Value> {
    let blocks = match content {
        Value::String(s) => return vec![json!({ "type": "text", "text": s })],
        Value::Array(blocks) => blocks,
        _ => return vec![],
    };
    blocks
        .iter()
        .filter_map(|b| match b["type"].as_str() {
            Some("text") => Some(json!({ "type": "text", "text": b["text"] })),
            Some("image") if b["source"]["type"] == "base64" => Some(json!({
                "type": "image", "mimeType": b["source"]["media_type"], "data": b["source"]["data"],
            })),
            _ => None,
        })
        .collect()
}

/// The option of `options` that answers as `response` does (the Agent SDK's permission result,
/// `{behavior, updatedPermissions?}`): an "always" when the person chose one and the agent
/// offers it, else once; `None` to answer `cancelled` (a deny with nothing to reject with).
fn choose(options: &[(String, String)], response: &Value) -> Option<String> {
    let find = |kinds: &[&str]| {
        kinds
            .iter()
            .find_map(|k| options.iter().find(|(_, kind)| kind == k))
            .map(|(id, _)| id.clone())
    };
    let always = response["updatedPermissions"]
        .as_array()
        .is_some_and(|p| !p.is_empty());
    match response["behavior"].as_str() {
        Some("allow") if always => find(&["allow_always", "allow_once"]),
        Some("allow") => find(&["allow_once", "allow_always"]),
        _ => find(&["reject_once", "reject_always"]),
    }
}

impl AcpSession {
    pub fn new(
        process: AgentProcess,
        session: String,
        modes: Vec<String>,
        translator: Translator,
        unanswered: Option<(std::path::PathBuf, super::Kept)>,
    ) -> AcpSession {
        let (side_tx, side_rx) = mpsc::unbounded_channel();
        let ids = ProcessIds {
            pid: process.pid,
            pgid: process.pgid,
            sid: process.sid,
            pid_namespace: process.sandbox.map(|s| s.pid_namespace),
        };
        let shared = Shared {
            commands: translator.commands.clone(),
            ..Default::default()
        };
        AcpSession {
            rpc: process.rpc.clone(),
            process,
            ids,
            session,
            shared: Arc::new(Mutex::new(shared)),
            side_tx,
            side_rx,
            queue: VecDeque::new(),
            translator,
            modes,
            unanswered,
        }
    }

    fn on_incoming(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Notification { method, params } if method == "session/update" => {
                if params["sessionId"].as_str() == Some(self.session.as_str()) {
                    let said = self.translator.update(&params["update"]);
                    if params["update"]["sessionUpdate"] == "available_commands_update" {
                        lock(&self.shared).commands = self.translator.commands.clone();
                    }
                    self.queue.extend(said);
                }
            }
            Incoming::Notification { .. } => {}
            Incoming::Request { id, method, params } if method == "session/request_permission" => {
                self.asked(id, &params);
            }
            Incoming::Request { id, method, .. } => {
                // Files and terminals stay the agent's own: Vyre offers neither capability.
                let _ = self.rpc.respond_error(
                    &id,
                    -32601,
                    &format!("Vyre does not offer {method} (it was not in its capabilities)"),
                );
            }
            Incoming::Garbage(line) => self.queue.push_back(Happening::Garbage(line)),
        }
    }

    fn asked(&mut self, id: Value, params: &Value) {
        let call = &params["toolCall"];
        let call_id = call["toolCallId"].as_str().map(String::from);
        let (tool, input) = call_id
            .as_deref()
            .and_then(|c| self.translator.tool(c))
            .unwrap_or_else(|| {
                (
                    call["title"].as_str().unwrap_or("tool").to_string(),
                    call.get("rawInput").cloned().unwrap_or_else(|| json!({})),
                )
            });
        let input = call.get("rawInput").cloned().unwrap_or(input);
        let options = params["options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| {
                Some((
                    o["optionId"].as_str()?.to_string(),
                    o["kind"].as_str()?.to_string(),
                ))
            })
            .collect();
        let request = format!("acp-{id}");
        lock(&self.shared)
            .questions
            .insert(request.clone(), Open { id, options });
        let kind = match tool.as_str() {
            "ExitPlanMode" => "plan",
            "AskUserQuestion" => "question",
            _ => "tool",
        };
        self.queue.push_back(Happening::Asked(Question {
            request,
            kind: kind.into(),
            tool,
            tool_use_id: call_id,
            input,
            description: call["title"].as_str().map(String::from),
            suggestions: json!([]),
        }));
    }

    fn on_side(&mut self, side: Side) {
        match side {
            Side::Began(uuid) => {
                self.translator.begin_turn();
                self.queue
                    .push_back(Happening::TurnBegan { uuid: Some(uuid) });
            }
            Side::Said(h) => self.queue.push_back(h),
            Side::Answered(answer) => {
                lock(&self.shared).running = false;
                if answer.is_ok()
                    && let Some((file, mut kept)) = self.unanswered.take()
                {
                    kept.answered = true;
                    if let Err(e) = kept.write(&file) {
                        tracing::warn!(error = %e, "the agent's session is not marked answered");
                    }
                }
                let said = self
                    .translator
                    .finish(answer.as_ref().map_err(Clone::clone));
                self.queue.extend(said);
            }
        }
    }
}

impl Session for AcpSession {
    fn ids(&self) -> ProcessIds {
        self.ids
    }

    fn commands(&self) -> Vec<SlashCommand> {
        lock(&self.shared).commands.clone()
    }

    fn next(&mut self) -> BoxFuture<'_, Option<Happening>> {
        Box::pin(async move {
            loop {
                if let Some(h) = self.queue.pop_front() {
                    return Some(h);
                }
                // The agent's messages first: a prompt's answer is read after every update
                // the agent wrote before it, and must not overtake them.
                tokio::select! {
                    biased;
                    incoming = self.process.incoming.recv() => match incoming {
                        Some(m) => self.on_incoming(m),
                        None => return None,
                    },
                    Some(side) = self.side_rx.recv() => self.on_side(side),
                }
            }
        })
    }

    fn send(
        &self,
        content: Value,
        uuid: &str,
        priority: Option<Priority>,
    ) -> Result<(), ProviderError> {
        let mut shared = lock(&self.shared);
        if shared.running {
            return Err(ProviderError::Refused(match priority {
                Some(_) => {
                    "an ACP agent takes no words into a running turn; queue them for after it"
                        .into()
                }
                None => "a turn is running".into(),
            }));
        }
        let answer = self
            .rpc
            .call(
                "session/prompt",
                json!({ "sessionId": self.session, "prompt": prompt(&content) }),
            )
            .map_err(refused)?;
        shared.running = true;
        let _ = self.side_tx.send(Side::Began(uuid.to_string()));
        let side = self.side_tx.clone();
        tokio::spawn(async move {
            let answer = match answer.await {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(RpcError::Closed.to_string()),
            };
            let _ = side.send(Side::Answered(answer));
        });
        Ok(())
    }

    fn answer(&self, request: &str, response: Value) -> Result<(), ProviderError> {
        let open = lock(&self.shared)
            .questions
            .remove(request)
            .ok_or_else(|| ProviderError::Refused(format!("no open question {request}")))?;
        let outcome = match choose(&open.options, &response) {
            Some(option) => json!({ "outcome": "selected", "optionId": option }),
            None => json!({ "outcome": "cancelled" }),
        };
        self.rpc
            .respond(&open.id, json!({ "outcome": outcome }))
            .map_err(refused)
    }

    fn interrupt(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async move {
            self.rpc
                .notify("session/cancel", json!({ "sessionId": self.session }))
                .map_err(refused)?;
            let open: Vec<(String, Open)> = lock(&self.shared).questions.drain().collect();
            for (request, q) in open {
                let _ = self
                    .rpc
                    .respond(&q.id, json!({ "outcome": { "outcome": "cancelled" } }));
                let _ = self
                    .side_tx
                    .send(Side::Said(Happening::Withdrawn { request }));
            }
            Ok(())
        })
    }

    fn set_mode(&self, mode: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        let mode = mode.to_string();
        Box::pin(async move {
            if !self.modes.contains(&mode) {
                return Err(ProviderError::Refused(format!(
                    "this agent has no mode {mode:?}; it has: {}",
                    self.modes.join(", ")
                )));
            }
            self.rpc
                .request(
                    "session/set_mode",
                    json!({ "sessionId": self.session, "modeId": mode }),
                )
                .await
                .map_err(refused)?;
            let _ = self.side_tx.send(Side::Said(Happening::Mode { mode }));
            Ok(())
        })
    }

    fn set_model(&self, model: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        let model = model.map(String::from);
        Box::pin(async move {
            let Some(model) = model else { return Ok(()) };
            set_model(&self.rpc, &self.session, &model).await
        })
    }

    fn stop(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Exit> {
        // Every writer gone, the agent's stdin closes: the sign to finish and exit.
        let AcpSession { process, rpc, .. } = *self;
        drop(rpc);
        Box::pin(process.stopped(grace))
    }

    fn exit(self: Box<Self>) -> BoxFuture<'static, Exit> {
        Box::pin(self.process.ended())
    }
}

/// Choose the session's model (`session/set_model`, which not every agent has).
pub async fn set_model(rpc: &Rpc, session: &str, model: &str) -> Result<(), ProviderError> {
    match rpc
        .request(
            "session/set_model",
            json!({ "sessionId": session, "modelId": model }),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(RpcError::Refused { code: -32601, .. }) => Err(ProviderError::Refused(
            "this agent does not let its model be chosen".into(),
        )),
        Err(e) => Err(refused(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_picks_the_option_that_means_the_same() {
        let options: Vec<(String, String)> = [
            ("allow_always", "allow_always"),
            ("allow", "allow_once"),
            ("reject", "reject_once"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let pick = |r: Value| choose(&options, &r);
        assert_eq!(
            pick(json!({ "behavior": "allow" })).as_deref(),
            Some("allow")
        );
        assert_eq!(
            pick(json!({ "behavior": "allow", "updatedPermissions": [{ "type": "addRules" }] }))
                .as_deref(),
            Some("allow_always")
        );
        assert_eq!(
            pick(json!({ "behavior": "deny", "message": "no" })).as_deref(),
            Some("reject")
        );
        // Nothing to reject with: the question is answered cancelled.
        assert_eq!(choose(&options[..2], &json!({ "behavior": "deny" })), None);
    }

    #[test]
    fn claude_content_becomes_acp_content() {
        let content = json!([
            { "type": "text", "text": "look" },
            { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBOR" } },
            { "type": "document" },
        ]);
        assert_eq!(
            prompt(&content),
            [
                json!({ "type": "text", "text": "look" }),
                json!({ "type": "image", "mimeType": "image/png", "data": "iVBOR" }),
            ]
        );
        assert_eq!(
            prompt(&json!("hi")),
            [json!({ "type": "text", "text": "hi" })]
        );
    }
}
