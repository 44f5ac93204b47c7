//! One live Codex thread: messages as turns (`turn/start`), words into a running turn as
//! `turn/steer`, Codex's approval requests as Vyre's asks and the Switchboard's answers as the
//! decision that means the same, an interrupt as `turn/interrupt` with every open approval
//! answered `cancel`, a call of Vyre's own tools (`tools`) asked of the person first as an
//! MCP call of Claude Code's is. The mode, model and effort chosen apply from the next turn,
//! as Codex's own per-turn overrides.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::open::Open;
use super::params::{MODES, client_id, default_effort, input, policies};
use super::questions::{self, Asked};
use super::tools;
use super::translate::{Translator, tool_of};
use crate::kernel::config::Price;
use crate::kernel::contracts::provider::{
    BoxFuture, Exit, Happening, HostCall, HostTools, Launch, Priority, ProcessIds, ProviderError,
    Question, Session, SlashCommand,
};
use crate::modules::sessions::agent_process::AgentProcess;
use crate::modules::sessions::kept::Kept;
use crate::modules::sessions::rpc::{Incoming, Rpc, RpcError};

/// How long an interrupt waits for a just-started turn's id, in 10 ms steps.
const TURN_ID_WAIT_STEPS: u32 = 500;

/// What `&self` methods change and `next` reads.
#[derive(Default)]
struct Shared {
    questions: HashMap<String, Open>,
    running: bool,
    /// The running turn's id, once Codex said it.
    turn: Option<String>,
    mode: String,
    model: Option<String>,
    effort: Option<String>,
    /// Words steered into a turn that ended before they reached it, while it was still said
    /// to run: they start the next turn once it has ended.
    unsteered: VecDeque<(Value, String)>,
}

/// What reaches `next` besides Codex's own messages.
enum Side {
    Began(String),
    Said(Happening),
    /// `turn/start` was refused: the turn never ran.
    Refused(String),
    /// Words for the running turn found it ended: they start the next.
    Unsteered {
        content: Value,
        uuid: String,
    },
}

pub struct CodexSession {
    process: AgentProcess,
    ids: ProcessIds,
    /// Codex's thread.
    thread: String,
    /// Vyre's thread, named in each message's client id (see [`client_id`]).
    vyre_thread: String,
    rpc: Rpc,
    shared: Arc<Mutex<Shared>>,
    side_tx: mpsc::UnboundedSender<Side>,
    side_rx: mpsc::UnboundedReceiver<Side>,
    queue: VecDeque<Happening>,
    translator: Translator,
    /// Where the thread's Codex thread is kept, until a turn of it completes.
    unanswered: Option<(std::path::PathBuf, Kept)>,
    /// Vyre's tools, which Codex calls back (`item/tool/call`).
    host: Option<HostTools>,
    /// The model the thread runs on when none was chosen (Codex's answer to opening it), and
    /// what each model's tokens cost.
    opened_model: Option<String>,
    prices: Arc<BTreeMap<String, Price>>,
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

impl CodexSession {
    /// Codex thread `thread` of `launch`'s Vyre thread, live in `process`.
    pub fn new(
        process: AgentProcess,
        thread: String,
        launch: &Launch,
        unanswered: Option<(std::path::PathBuf, Kept)>,
    ) -> CodexSession {
        let mode = if MODES.contains(&launch.mode.as_str()) {
            launch.mode.clone()
        } else {
            "default".into()
        };
        let (side_tx, side_rx) = mpsc::unbounded_channel();
        let ids = ProcessIds {
            pid: process.pid,
            pgid: process.pgid,
            sid: process.sid,
            pid_namespace: process.sandbox.map(|s| s.pid_namespace),
        };
        let shared = Shared {
            mode,
            model: launch.model.clone(),
            effort: launch.effort.clone(),
            ..Default::default()
        };
        CodexSession {
            rpc: process.rpc.clone(),
            process,
            ids,
            thread,
            vyre_thread: launch.id.clone(),
            shared: Arc::new(Mutex::new(shared)),
            side_tx,
            side_rx,
            queue: VecDeque::new(),
            translator: Translator::default(),
            unanswered,
            host: launch.host_tools.clone(),
            opened_model: None,
            prices: Arc::default(),
        }
    }

    /// Price its turns: `model` is the one Codex opened the thread on, `prices` the person's.
    pub fn priced(&mut self, model: Option<String>, prices: Arc<BTreeMap<String, Price>>) {
        self.opened_model = model;
        self.prices = prices;
    }

    /// The price of the model the turn ran on: the one chosen, else the one Codex opened with.
    fn price_now(&self) -> Option<Price> {
        let chosen = lock(&self.shared).model.clone();
        let model = chosen.or_else(|| self.opened_model.clone())?;
        self.prices.get(&model).copied()
    }

    /// Start a turn with `content` (the caller holds `shared` and saw no turn running).
    fn start_turn(&self, shared: &mut Shared, content: &Value, uuid: &str) -> Result<(), RpcError> {
        let (approval, sandbox) = policies(&shared.mode);
        let mut params = json!({
            "threadId": self.thread,
            "input": input(content),
            "clientUserMessageId": client_id(&self.vyre_thread, uuid),
            "approvalPolicy": approval,
            "sandboxPolicy": sandbox,
        });
        if let Some(model) = &shared.model {
            params["model"] = json!(model);
        }
        if let Some(effort) = &shared.effort {
            params["effort"] = json!(effort);
        }
        let answer = self.rpc.call("turn/start", params)?;
        shared.running = true;
        shared.turn = None;
        let _ = self.side_tx.send(Side::Began(uuid.to_string()));
        let side = self.side_tx.clone();
        let shared_turn = self.shared.clone();
        tokio::spawn(async move {
            match answer.await {
                Ok(Ok(v)) => {
                    if let Some(id) = v["turn"]["id"].as_str() {
                        lock(&shared_turn)
                            .turn
                            .get_or_insert_with(|| id.to_string());
                    }
                }
                Ok(Err(e)) => {
                    let _ = side.send(Side::Refused(e.to_string()));
                }
                // The process ended: its exit ends the turn.
                Err(_) => {}
            }
        });
        Ok(())
    }

    fn on_incoming(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Notification { method, params } => {
                if params["threadId"]
                    .as_str()
                    .is_some_and(|t| t != self.thread)
                {
                    return;
                }
                match method.as_str() {
                    "turn/started" => {
                        if let Some(id) = params["turn"]["id"].as_str() {
                            lock(&self.shared).turn = Some(id.to_string());
                        }
                    }
                    "turn/completed" => {
                        {
                            let mut shared = lock(&self.shared);
                            shared.running = false;
                            shared.turn = None;
                        }
                        let turn = &params["turn"];
                        if turn["status"] == "completed"
                            && let Some((file, mut kept)) = self.unanswered.take()
                        {
                            kept.answered = true;
                            if let Err(e) = kept.write(&file) {
                                tracing::warn!(error = %e, "the Codex thread is not marked answered");
                            }
                        }
                        self.translator.price = self.price_now();
                        let said = self.translator.finish(Ok(turn));
                        self.queue.extend(said);
                        let next = lock(&self.shared).unsteered.pop_front();
                        if let Some((content, uuid)) = next {
                            self.start_unsteered(content, uuid);
                        }
                    }
                    _ => {
                        let said = self.translator.notification(&method, &params);
                        self.queue.extend(said);
                    }
                }
            }
            Incoming::Request { id, method, params } => match method.as_str() {
                "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
                    self.asked(id, &method, &params)
                }
                "item/tool/call" => self.called(id, &params),
                _ => match questions::of(&method, &params) {
                    Some(asked) => self.questions(id, asked, &params),
                    // What Vyre does not put to the person (a request for more permissions than
                    // its sandbox gives): refused, so the turn goes on without.
                    None => {
                        let why = format!("Vyre does not answer {method}");
                        let _ = self.rpc.respond_error(&id, -32601, &why);
                    }
                },
            },
            Incoming::Garbage(line) => self.queue.push_back(Happening::Garbage(line)),
        }
    }

    fn asked(&mut self, id: Value, method: &str, params: &Value) {
        let item = params["itemId"].as_str().unwrap_or("").to_string();
        let (tool, input) = self.translator.tool(&item).unwrap_or_else(|| {
            let kind = if method.contains("fileChange") {
                "fileChange"
            } else {
                "commandExecution"
            };
            let mut shaped = params.clone();
            shaped["type"] = json!(kind);
            tool_of(&shaped).unwrap_or_else(|| ("tool".into(), json!({})))
        });
        let request = format!("codex-{id}");
        lock(&self.shared)
            .questions
            .insert(request.clone(), Open::Approval { id });
        self.queue.push_back(Happening::Asked(Question {
            request,
            kind: "tool".into(),
            tool,
            tool_use_id: Some(item),
            input,
            description: params["reason"].as_str().map(String::from),
            suggestions: json!([]),
        }));
    }

    /// Codex's questions to the person, or an MCP server's form, as one question ask (none
    /// left to ask: answered as withdrawn).
    fn questions(&mut self, id: Value, asked: Asked, params: &Value) {
        if asked.is_empty() {
            let _ = self.rpc.respond(&id, asked.answering.withdrawn());
            return;
        }
        let request = format!("codex-{id}");
        let (question, answering) = asked.question(request.clone(), params["itemId"].as_str());
        let open = Open::Input { id, answering };
        lock(&self.shared).questions.insert(request, open);
        self.queue.push_back(Happening::Asked(question));
    }

    /// A call of one of Vyre's tools: asked of the person first, as Claude Code asks before
    /// an MCP tool, unless the mode lets everything run.
    fn called(&mut self, id: Value, params: &Value) {
        let Some(tools) = self.host.clone() else {
            let _ = self
                .rpc
                .respond_error(&id, -32601, "this session has no Vyre tools");
            return;
        };
        let call = HostCall {
            name: params["tool"].as_str().unwrap_or_default().to_string(),
            input: tools::tool_input(&params["arguments"]),
            pid: Some(self.ids.pid),
        };
        let asks = lock(&self.shared).mode != "bypassPermissions";
        if !asks {
            tools::run(&tools, call, &self.rpc, id);
            return;
        }
        let request = format!("codex-{id}");
        let question = Question {
            request: request.clone(),
            kind: "tool".into(),
            tool: tools::shown_name(&call.name),
            tool_use_id: params["callId"].as_str().map(String::from),
            input: call.input.clone(),
            description: None,
            suggestions: json!([]),
        };
        lock(&self.shared)
            .questions
            .insert(request, Open::Tool { id, call, tools });
        self.queue.push_back(Happening::Asked(question));
    }

    fn on_side(&mut self, side: Side) {
        match side {
            Side::Began(uuid) => self
                .queue
                .push_back(Happening::TurnBegan { uuid: Some(uuid) }),
            Side::Said(h) => self.queue.push_back(h),
            Side::Refused(why) => {
                {
                    let mut shared = lock(&self.shared);
                    shared.running = false;
                    shared.turn = None;
                }
                let said = self.translator.finish(Err(why));
                self.queue.extend(said);
            }
            Side::Unsteered { content, uuid } => self.start_unsteered(content, uuid),
        }
    }

    /// Words a steer did not get into a turn: the next turn now, or once the running one
    /// (whose end Codex has not reported yet) ends.
    fn start_unsteered(&self, content: Value, uuid: String) {
        let arc = self.shared.clone();
        let mut shared = lock(&arc);
        if shared.running {
            shared.unsteered.push_back((content, uuid));
            return;
        }
        if let Err(e) = self.start_turn(&mut shared, &content, &uuid) {
            tracing::warn!(error = %e, "words for an ended Codex turn were not sent");
        }
    }
}

impl Session for CodexSession {
    fn ids(&self) -> ProcessIds {
        self.ids
    }

    fn commands(&self) -> Vec<SlashCommand> {
        vec![]
    }

    fn next(&mut self) -> BoxFuture<'_, Option<Happening>> {
        Box::pin(async move {
            loop {
                if let Some(h) = self.queue.pop_front() {
                    return Some(h);
                }
                // Vyre's own first: a turn's beginning before what Codex says in it, and a
                // question withdrawn by an interrupt before the turn's end Codex reports.
                tokio::select! {
                    biased;
                    Some(side) = self.side_rx.recv() => self.on_side(side),
                    incoming = self.process.incoming.recv() => match incoming {
                        Some(m) => self.on_incoming(m),
                        None => return None,
                    },
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
        if !shared.running {
            return self
                .start_turn(&mut shared, &content, uuid)
                .map_err(refused);
        }
        let (Some(_), Some(turn)) = (priority, shared.turn.clone()) else {
            return Err(ProviderError::Refused("a turn is running".into()));
        };
        let answer = self
            .rpc
            .call(
                "turn/steer",
                json!({ "threadId": self.thread, "input": input(&content), "expectedTurnId": turn,
                        "clientUserMessageId": client_id(&self.vyre_thread, uuid) }),
            )
            .map_err(refused)?;
        let side = self.side_tx.clone();
        let uuid = uuid.to_string();
        tokio::spawn(async move {
            let said = match answer.await {
                Ok(Ok(_)) => Side::Said(Happening::Steered { uuid }),
                // The turn ended before the words reached it: they start the next.
                _ => Side::Unsteered { content, uuid },
            };
            let _ = side.send(said);
        });
        Ok(())
    }

    fn answer(&self, request: &str, response: Value) -> Result<(), ProviderError> {
        let mut shared = lock(&self.shared);
        let open = shared
            .questions
            .remove(request)
            .ok_or_else(|| ProviderError::Refused(format!("no open question {request}")))?;
        // An answer that does not fit its form leaves the question open for another.
        let input = match open.input(&response) {
            Ok(input) => input,
            Err(e) => {
                shared.questions.insert(request.to_string(), open);
                return Err(e);
            }
        };
        drop(shared);
        open.reply(&self.rpc, &response, input).map_err(refused)
    }

    fn interrupt(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async move {
            // A turn just started may not have its id yet (Codex names it in `turn/start`'s
            // answer): wait for it rather than let the turn run on.
            for _ in 0..TURN_ID_WAIT_STEPS {
                let named = {
                    let shared = lock(&self.shared);
                    !shared.running || shared.turn.is_some()
                };
                if named {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let (turn, open) = {
                let mut shared = lock(&self.shared);
                let open: Vec<(String, Open)> = shared.questions.drain().collect();
                (shared.turn.clone(), open)
            };
            // An approval answered `cancel` makes Codex abort the turn itself, so the interrupt
            // that follows may find no turn to end: that is the turn ended, as asked.
            let cancelled = open.iter().any(|(_, q)| matches!(q, Open::Approval { .. }));
            for (request, q) in open {
                let _ = q.withdraw(&self.rpc);
                let _ = self
                    .side_tx
                    .send(Side::Said(Happening::Withdrawn { request }));
            }
            let Some(turn) = turn else { return Ok(()) };
            // Codex names a turn (in `turn/start`'s answer) a moment before it takes an
            // interrupt for it, and says "no active turn" in between: ask again while the turn
            // is still ours to end (for half a second: the gap is a few milliseconds, and a turn
            // that truly ended keeps the refusal).
            let mut tries = 50;
            loop {
                let asked = self
                    .rpc
                    .request(
                        "turn/interrupt",
                        json!({ "threadId": self.thread, "turnId": turn }),
                    )
                    .await;
                match asked {
                    Err(e) if cancelled && e.to_string().contains("no active turn") => {
                        return Ok(());
                    }
                    Err(e)
                        if tries > 0
                            && e.to_string().contains("no active turn")
                            && lock(&self.shared).turn.as_deref() == Some(turn.as_str()) =>
                    {
                        tries -= 1;
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    asked => return asked.map(|_| ()).map_err(refused),
                }
            }
        })
    }

    fn set_mode(&self, mode: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        let mode = mode.to_string();
        Box::pin(async move {
            if !MODES.contains(&mode.as_str()) {
                return Err(ProviderError::Refused(format!(
                    "Codex has no mode {mode:?}; it has: {}",
                    MODES.join(", ")
                )));
            }
            lock(&self.shared).mode = mode.clone();
            let _ = self.side_tx.send(Side::Said(Happening::Mode { mode }));
            Ok(())
        })
    }

    fn set_model(&self, model: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        let model = model.map(String::from);
        Box::pin(async move {
            if let Some(model) = model {
                lock(&self.shared).model = Some(model);
            }
            Ok(())
        })
    }

    /// From the next turn, as Codex's own per-turn override, which stays until another: so
    /// back to the default is the model's own default effort, asked of Codex (`model/list`).
    fn set_effort(&self, effort: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        let effort = effort.map(String::from);
        Box::pin(async move {
            let effort = match effort {
                Some(effort) => effort,
                None => {
                    let model = lock(&self.shared).model.clone();
                    let models = self
                        .rpc
                        .request("model/list", json!({}))
                        .await
                        .map_err(refused)?;
                    default_effort(&models, model.as_deref()).ok_or_else(|| {
                        ProviderError::Refused(
                            "Codex named no default effort for this model".into(),
                        )
                    })?
                }
            };
            lock(&self.shared).effort = Some(effort);
            Ok(())
        })
    }

    fn stop(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Exit> {
        // Every writer gone, Codex's stdin closes: the sign to finish and exit.
        let CodexSession { process, rpc, .. } = *self;
        drop(rpc);
        Box::pin(process.stopped(grace))
    }

    fn exit(self: Box<Self>) -> BoxFuture<'static, Exit> {
        Box::pin(self.process.ended())
    }
}
