//! `gate`: nothing goes out as the person until they have seen the final words and where they
//! go (spec 7.7; the floor's first two rules). A session's call that would send as the person,
//! spend their money or delete beyond its folder ([`classify`]) is held: the session waits (its
//! Claude Code is kept waiting on the permission question, never denied for it), an item shows
//! the final content and the destination ([`shown`]), and only a person lets it go, as it is or
//! edited, or refuses it with a reason Claude reads.
//!
//! - `gate.check {tool, input, cwd?}`: would the table hold this call? Quick and pure; the
//!   sessions' PreToolUse hook (the driver's own, and the harness plugin's for a terminal) asks
//!   it before every Bash and MCP call, and turns a hold into Claude Code's permission question.
//! - `gate.hold {thread, call, tool, input, cwd?}` (modules only): the sessions module, given
//!   that question, has the Gate hold it: the item, `gate.held`, a notice on the phone.
//! - `gate.held {thread?, all?, limit?}`: what waits (or, with `all`, what was decided).
//! - `gate.approve {item, edited?}` and `gate.reject {item, why?}` (a person only): the session
//!   is answered (`threads.release`), then `gate.approved` / `gate.rejected`.
//! - `gate.withdraw {item, why}` (modules only): its turn ended; `gate.withdrawn`.
//! - `gate.request {method, url, headers?, body?}`: an HTTP request vyred sends with vault values
//!   added at the boundary where the session wrote `{{vault:NAME}}` ([`boundary`], [`request`],
//!   ADR 0028); from a session, only the call a person approved; `gate.sent`.

pub mod boundary;
pub mod classify;
mod decide;
pub mod items;
pub mod mcp;
pub mod relay;
pub mod request;
pub mod shown;

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{CallCx, Caller, ToolError};

use classify::{Call, Extra, Kind, Rules};
use items::Item;
use request::{Boundary, RequestInput};

pub struct GateModule;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckInput {
    /// The tool about to run: `Bash`, `mcp__<server>__<tool>` ...
    #[schemars(length(min = 1, max = 200))]
    tool: String,
    /// Its input, as Claude Code gives it.
    input: Value,
    /// The session's folder.
    #[serde(default)]
    #[schemars(length(max = 4096))]
    cwd: Option<String>,
    /// The session's thread, when Vyre runs it: an agent's session may use the items granted to
    /// that agent.
    #[serde(default)]
    #[schemars(length(max = 64))]
    thread: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Checked {
    /// The Gate would hold it.
    held: bool,
    kind: Option<Kind>,
    /// What it does, in words ("git push").
    what: Option<String>,
    /// What the permission question says (Claude Code shows it at a terminal).
    reason: Option<String>,
    /// The Gate refuses the call outright, and why (for Claude): a command that names a vault
    /// item, a request through the Gate it could never send.
    denied: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoldInput {
    #[schemars(length(min = 1, max = 200))]
    thread: String,
    /// The tool call (`tool_use_id`).
    #[schemars(length(min = 1, max = 200))]
    call: String,
    #[schemars(length(min = 1, max = 200))]
    tool: String,
    input: Value,
    #[serde(default)]
    #[schemars(length(max = 4096))]
    cwd: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Holding {
    /// The item, when the Gate holds the call; none when it lets it be asked as usual.
    item: Option<Item>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeldInput {
    /// Only this thread's.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    thread: Option<String>,
    /// Decided and withdrawn items too, newest last.
    #[serde(default)]
    all: bool,
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveInput {
    #[schemars(length(min = 1, max = 64))]
    item: String,
    /// The words to send instead (the item's `field`: the command, the message's text).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200_000))]
    edited: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectInput {
    #[schemars(length(min = 1, max = 64))]
    item: String,
    /// Why, for Claude.
    #[serde(default)]
    #[schemars(length(max = 2000))]
    why: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WithdrawInput {
    #[schemars(length(min = 1, max = 64))]
    item: String,
    #[schemars(length(min = 1, max = 500))]
    why: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Decided {
    item: String,
    /// `approved`, `rejected` or `withdrawn`.
    state: String,
    edited: bool,
}

/// The person's rows (`gate.hold`, `gate.pass` in config) and the addresses on this machine or
/// a private network `gate.request` may reach (`gate.local`, `host` or `host:port`).
fn rules(ctx: &Ctx) -> Result<(Rules, Vec<String>), String> {
    let Some(gate) = ctx.config().gate.clone() else {
        return Ok((Rules::default(), vec![]));
    };
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Section {
        #[serde(default)]
        hold: Vec<Extra>,
        #[serde(default)]
        pass: Vec<Extra>,
        #[serde(default)]
        local: Vec<String>,
    }
    let s: Section = serde_json::from_value(gate).map_err(|e| format!("config gate: {e}"))?;
    for e in s.hold.iter().chain(&s.pass) {
        if e.command.as_deref().is_none_or(|c| c.trim().is_empty()) && e.tool.is_none() {
            return Err("config gate: each row names a `command` or a `tool`".into());
        }
    }
    if let Some(bad) = s
        .local
        .iter()
        .find(|l| l.trim().is_empty() || l.contains('/'))
    {
        return Err(format!(
            "config gate.local: {bad:?} is not a host or host:port"
        ));
    }
    Ok((
        Rules {
            hold: s.hold,
            pass: s.pass,
        },
        s.local,
    ))
}

/// Whether the Gate would hold `input`'s call, refuse it, or let it be.
async fn check(c: &Ctx, rules: &Rules, b: &Boundary, input: CheckInput) -> Checked {
    let denied = |why: String| Checked {
        held: false,
        kind: None,
        what: None,
        reason: None,
        denied: Some(why),
    };
    let held = if request::is_request(&input.tool) {
        let shape = match request::read(&input.input) {
            Ok((_, shape)) => shape,
            Err(why) => return denied(format!("The Gate cannot send this request: {why}")),
        };
        let agent = agent_of(c, input.thread.as_deref()).await;
        if let Err(why) = request::usable(c, b, &shape, agent.as_deref()).await {
            return denied(format!("The Gate cannot send this request: {why}"));
        }
        Some(request::held(&shape))
    } else if input.tool == "Bash"
        && input.input["command"]
            .as_str()
            .is_some_and(boundary::mentions)
    {
        return denied(
            "A command never holds a vault value. Send the request with Vyre's gate_request tool, writing {{vault:NAME}} where the credential goes: the Gate adds it as the request goes, once the person approves it.".into(),
        );
    } else {
        let call = Call {
            tool: &input.tool,
            input: &input.input,
            folder: input.cwd.as_deref().map(Path::new),
        };
        classify::classify(&call, rules)
    };
    Checked {
        held: held.is_some(),
        kind: held.as_ref().map(|h| h.kind),
        reason: held.as_ref().map(|h| reason(&h.what, h.kind)),
        what: held.map(|h| h.what),
        denied: None,
    }
}

/// The agent whose session `thread` is, if it is one: its items granted to `agent:<name>` are
/// the Gate's to add to that session's requests, and no other session's.
pub(crate) async fn agent_of(ctx: &Ctx, thread: Option<&str>) -> Option<String> {
    let thread = thread?;
    let info = ctx
        .call("threads.get", serde_json::json!({ "thread": thread }))
        .await
        .ok()?;
    info["agent"].as_str().map(str::to_string)
}

fn modules_only(cx: &CallCx, tool: &str) -> Result<(), ToolError> {
    match cx.caller {
        Caller::Module { .. } => Ok(()),
        _ => Err(ToolError::refused(
            "for_modules",
            format!("{tool} is called by Vyre's own modules"),
        )),
    }
}

/// The question Claude Code shows for a held call (a terminal's person reads it there).
fn reason(what: &str, kind: Kind) -> String {
    let does = match kind {
        Kind::Send => "sends as you",
        Kind::Spend => "spends your money",
        Kind::Delete => "deletes beyond the session's folder",
    };
    format!("Vyre's Gate holds this until you have seen it: {what} {does}.")
}

/// A push notice's tag for an item.
pub(crate) fn tag(item: &str) -> String {
    format!("gate:{item}")
}

/// What the Gate stores and says keeps no secret (the session's own call keeps its input; an
/// edit is merged into it there).
fn masked(v: &Value) -> Value {
    crate::kernel::redact::mask_value(v)
}

pub(crate) fn mask(s: &str) -> String {
    crate::kernel::redact::mask(s).into_owned()
}

pub(crate) async fn emit(ctx: &Ctx, kind: &str, thread: &str, payload: Value) {
    let event = NewEvent::new(kind, masked(&payload)).thread(thread);
    if let Err(e) = ctx.events().emit(event).await {
        tracing::warn!(%thread, "the gate could not say {kind}: {e}");
    }
}

async fn hold(c: Ctx, rules: Rules, b: Boundary, input: HoldInput) -> Result<Holding, ToolError> {
    let folder = input.cwd.as_deref().map(Path::new);
    let mut request: Option<RequestInput> = None;
    let (held, shown) = if request::is_request(&input.tool) {
        // Not one the Gate could send: asked as usual, and refused when it runs unapproved.
        let Ok((req, shape)) = request::read(&input.input) else {
            return Ok(Holding { item: None });
        };
        let shown = request::show(&req, &shape);
        request = Some(req);
        (request::held(&shape), shown)
    } else {
        let call = Call {
            tool: &input.tool,
            input: &input.input,
            folder,
        };
        let Some(held) = classify::classify(&call, &rules) else {
            return Ok(Holding { item: None });
        };
        let shown = shown::show(&held, &input.tool, &input.input, folder).await;
        (held, shown)
    };
    let shown = shown::cut(shown);
    let item = Item {
        item: crate::kernel::ids::random_hex(9),
        thread: input.thread,
        call: input.call,
        tool: input.tool,
        input: masked(&input.input),
        kind: held.kind,
        rule: held.rule,
        what: held.what,
        destination: mask(&shown.destination),
        content: mask(&shown.content),
        truncated: shown.truncated,
        field: shown.field,
        state: "held".into(),
        edited: None,
        why: None,
        by: None,
        at: crate::now_ms(),
        decided_at: None,
    };
    let row = item.clone();
    c.store()
        .write(move |tx| items::insert(tx.conn(), &row))
        .await?;
    if let Some(req) = request {
        b.held(&item.item, &item.thread, req);
    }
    emit(
        &c,
        "gate.held",
        &item.thread,
        json!({ "item": item.item, "call": item.call, "tool": item.tool, "kind": item.kind, "what": item.what, "destination": item.destination }),
    )
    .await;
    c.notify_devices(json!({
        "tag": tag(&item.item),
        "title": format!("Held: {}", item.what),
        "body": format!("To {}. Nothing goes until you approve it.", item.destination),
        "url": format!("/app/t/{}", item.thread),
        "urgent": true,
    }));
    Ok(Holding { item: Some(item) })
}

impl Module for GateModule {
    fn name(&self) -> &str {
        "gate"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(items::MIGRATIONS).await?;
            let (rules, local) = rules(&ctx)?;
            let boundary = Boundary::new(local);
            // Items left held when vyred stopped: their sessions are gone with it.
            let open = ctx.store().read(items::open_ids).await?;
            for (id, thread) in open {
                let why = "vyred restarted; the session that asked is gone";
                let key = id.clone();
                if ctx
                    .store()
                    .write(move |tx| items::withdraw(tx.conn(), &key, why))
                    .await?
                {
                    emit(
                        &ctx,
                        "gate.withdrawn",
                        &thread,
                        json!({ "item": id, "why": why }),
                    )
                    .await;
                }
            }
            let r = rules.clone();
            ctx.tool_with(
                ToolDef::new(
                    "gate.check",
                    "Whether Vyre's Gate would hold a tool call (it sends as the person, spends their money or deletes beyond the session's folder), and why.",
                ),
                &(ctx.clone(), boundary.clone()),
                move |(c, b), input: CheckInput, _| {
                    let r = r.clone();
                    async move { Ok::<_, ToolError>(check(&c, &r, &b, input).await) }
                },
            )?;
            let b = boundary.clone();
            ctx.tool_with(
                ToolDef::new(
                    "gate.hold",
                    "Hold a session's tool call for the person when the Gate's table says so (Vyre's modules only).",
                )
                .finishes(),
                &ctx,
                move |c, input: HoldInput, cx| {
                    let (r, b) = (rules.clone(), b.clone());
                    async move {
                        modules_only(&cx, "gate.hold")?;
                        hold(c, r, b, input).await
                    }
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "gate.held",
                    "What the Gate holds for the person: each item's final content and where it goes; with `all`, what was decided too.",
                ),
                &ctx,
                |c, input: HeldInput, _| async move {
                    let limit = input.limit.unwrap_or(100).clamp(1, 500) as usize;
                    let (thread, all) = (input.thread, input.all);
                    Ok::<_, ToolError>(
                        c.store()
                            .read(move |conn| items::list(conn, thread.as_deref(), all, limit))
                            .await?,
                    )
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "gate.approve",
                    "Let a held item go, as it is or with `edited` words in place of its text (a person only).",
                )
                .person_only()
                .finishes(),
                &(ctx.clone(), boundary.clone()),
                |(c, b), input, cx| decide::approve(c, b, input, cx),
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "gate.reject",
                    "Refuse a held item; Claude is told, with `why` (a person only).",
                )
                .person_only()
                .finishes(),
                &(ctx.clone(), boundary.clone()),
                |(c, b), input, cx| decide::reject(c, b, input, cx),
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "gate.withdraw",
                    "A held item's session no longer waits for it (Vyre's modules only).",
                )
                .finishes(),
                &(ctx.clone(), boundary.clone()),
                |(c, b), input: WithdrawInput, cx| async move {
                    modules_only(&cx, "gate.withdraw")?;
                    let key = input.item.clone();
                    let item = c.store().read(move |conn| items::get(conn, &key)).await?;
                    if let Some(item) = item {
                        decide::gone(&c, &b, &item, &input.why).await;
                    }
                    Ok::<_, ToolError>(json!({ "item": input.item }))
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    request::TOOL,
                    "Send an HTTP request through Vyre's Gate, with credentials from the person's vault added as it goes: write {{vault:NAME}} where a value belongs (a header such as \"Authorization\": \"Bearer {{vault:NAME}}\", the URL's query, the body), or {{vault:NAME/basic}}, /username, /password, /totp of a login. You never see a value: the answer shows each as its reference. The person sees the request and approves it before it goes. No redirect is followed.",
                )
                .sessions_fenced(),
                &(ctx.clone(), boundary.clone()),
                |(c, b), input: RequestInput, cx| request::request(c, b, input, cx),
            )?;
            ctx.tool_with(
                ToolDef::new(
                    relay::TOOL,
                    "Send a request for another person's Vyre holding a relayed pass of this vault (called by POST /v1/pass with the pass's token): the pass's item filled in at this Gate, the answer masked.",
                ),
                &(ctx.clone(), boundary),
                |(c, b), input: relay::RelayInput, cx| relay::relay(c, b, input, cx),
            )?;
            Ok(())
        })
    }
}
