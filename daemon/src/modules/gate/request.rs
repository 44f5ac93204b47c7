//! `gate.request`: an HTTP request sent by vyred for a session, with credentials from the vault
//! added at the boundary ([`super::boundary`]). From a session it sends only what a person
//! approved: the call is held like any other that sends as the person (the driver's PreToolUse
//! check, then `gate.hold`), and its approval is kept here, in memory, for that thread and that
//! exact input, once. A person calling it sends at once. The answer comes back with each value
//! masked into its reference; its headers without `set-cookie`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use zeroize::Zeroizing;

use super::boundary::{self, Field, Masker, Ref, Shape};
use super::classify::{Held, Kind};
use super::shown::Shown;
use crate::kernel::contracts::secret::VaultValue;
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::tools::{CallCx, Caller, ToolError};

/// The Vyre tool, and what a session's Claude Code calls it (`mcp__<server>__gate_request`).
pub const TOOL: &str = "gate.request";

pub fn is_request(tool: &str) -> bool {
    tool == TOOL || (tool.starts_with("mcp__") && tool.ends_with("__gate_request"))
}

/// How long an approval waits for its call.
const APPROVAL_LIFE: Duration = Duration::from_secs(120);
/// How long the request may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most of an answer read, and handed back as text.
const READ_MAX: usize = 1024 * 1024;
const TEXT_MAX: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestInput {
    /// GET, HEAD, POST, PUT, PATCH or DELETE.
    #[schemars(pattern(r"^(GET|HEAD|POST|PUT|PATCH|DELETE)$"))]
    pub method: String,
    /// The whole URL with its scheme, host and port written out; `{{vault:NAME}}` may stand in
    /// its path or query.
    #[schemars(length(min = 1, max = 8192))]
    pub url: String,
    /// Header names and values; `{{vault:NAME}}` (or `{{vault:NAME/basic}}` for a login) where a
    /// credential goes, e.g. `"Authorization": "Bearer {{vault:github-token}}"`.
    #[serde(default)]
    #[schemars(extend("maxProperties" = 50))]
    pub headers: BTreeMap<String, String>,
    /// The body as text (JSON, a form ...), with `{{vault:NAME}}` where a value goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1_000_000))]
    pub body: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Sent {
    pub status: u16,
    /// The answer's headers (without `set-cookie`), values masked.
    pub headers: BTreeMap<String, String>,
    /// The answer as text, each vault value shown as its reference; none when it is not text.
    pub body: Option<String>,
    /// Bytes read.
    pub bytes: usize,
    /// The answer was longer than what is shown.
    pub truncated: bool,
    /// The vault items filled in.
    pub vault: Vec<String>,
}

struct Approved {
    item: String,
    thread: String,
    input: RequestInput,
    until: Instant,
}

#[derive(Default)]
struct State {
    /// Held items: their thread and the input as the session wrote it.
    pending: HashMap<String, (String, RequestInput)>,
    approved: Vec<Approved>,
}

/// The approvals a session's `gate.request` calls wait for. Cloneable; clones share them.
#[derive(Clone, Default)]
pub struct Boundary {
    state: Arc<Mutex<State>>,
    /// `gate.local`: what on this machine or a private network the person lets it reach.
    local: Arc<Vec<String>>,
}

impl Boundary {
    pub fn new(local: Vec<String>) -> Boundary {
        Boundary {
            state: Arc::default(),
            local: Arc::new(local),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Item `item` holds a request of `thread`.
    pub fn held(&self, item: &str, thread: &str, input: RequestInput) {
        self.state()
            .pending
            .insert(item.to_string(), (thread.to_string(), input));
    }

    /// The person let item `item` go, with `edited` as its body: the call may now run, once.
    pub fn approve(&self, item: &str, edited: Option<&str>) {
        let mut s = self.state();
        let now = Instant::now();
        s.approved.retain(|a| a.until > now);
        if let Some((thread, mut input)) = s.pending.remove(item) {
            if let Some(body) = edited {
                input.body = Some(body.to_string());
            }
            s.approved.push(Approved {
                item: item.to_string(),
                thread,
                input,
                until: now + APPROVAL_LIFE,
            });
        }
    }

    /// Item `item` was refused, withdrawn, or its approval reached no session.
    pub fn forget(&self, item: &str) {
        let mut s = self.state();
        s.pending.remove(item);
        s.approved.retain(|a| a.item != item);
    }

    /// The approval this call of `thread` runs on, taken.
    fn take(&self, thread: &str, input: &RequestInput) -> Option<String> {
        let mut s = self.state();
        let now = Instant::now();
        s.approved.retain(|a| a.until > now);
        let at = s
            .approved
            .iter()
            .position(|a| a.thread == thread && &a.input == input)?;
        Some(s.approved.remove(at).item)
    }
}

/// A session's call to `gate.request`, read for the Gate's check: what it does, or why it may not
/// be asked at all.
pub fn read(input: &Value) -> Result<(RequestInput, Shape), String> {
    let input: RequestInput =
        serde_json::from_value(input.clone()).map_err(|e| format!("gate.request's input: {e}"))?;
    let shape = boundary::shape(
        &input.method,
        &input.url,
        &input.headers,
        input.body.as_deref(),
    )?;
    Ok((input, shape))
}

pub(super) fn items(shape: &Shape) -> Vec<String> {
    let names: BTreeSet<&str> = shape.refs.iter().map(|r| r.item.as_str()).collect();
    names.into_iter().map(String::from).collect()
}

/// What the table says of it: it sends, as the person.
pub fn held(shape: &Shape) -> Held {
    let host = match shape.port {
        443 | 80 => shape.host.clone(),
        p => format!("{}:{p}", shape.host),
    };
    let names = items(shape);
    let what = match names.len() {
        0 => format!("an HTTP {} to {host}", shape.method),
        1 => format!(
            "an HTTP {} to {host} with the vault item {}",
            shape.method, names[0]
        ),
        _ => format!(
            "an HTTP {} to {host} with the vault items {}",
            shape.method,
            names.join(", ")
        ),
    };
    Held {
        kind: Kind::Send,
        rule: "gate-request".into(),
        what,
        words: vec![],
    }
}

/// Whether the Gate could send it: an address written out is not on this machine or a private
/// network unless listed, and every item it names is there for the Gate to add: granted to the
/// Gate, or to `agent` when the request is an agent's session's. Why not, in words the session
/// can pass on to the person (a name is looked up only when it goes).
pub async fn usable(
    ctx: &Ctx,
    b: &Boundary,
    shape: &Shape,
    agent: Option<&str>,
) -> Result<(), String> {
    if let Ok(ip) = shape.host.parse::<std::net::IpAddr>()
        && boundary::private(ip)
        && !boundary::listed(&b.local, &shape.host, shape.port)
    {
        return Err(private_address(shape, ip));
    }
    for name in items(shape) {
        use crate::kernel::contracts::vault::VaultError;
        let mut found = ctx.vault().may_fetch(&name).await.map(|_| ());
        if let (Err(VaultError::NotGranted { .. }), Some(agent)) = (&found, agent) {
            found = ctx
                .vault()
                .may_fetch_for_agent(agent, &name)
                .await
                .map(|_| ());
        }
        found.map_err(|e| match e {
            VaultError::NotGranted { .. } => match agent {
                Some(agent) => format!(
                    "the vault item {name:?} is not granted to the Gate or to agent {agent}; the person grants it with `vyre vault grant {name:?} agent:{agent}`"
                ),
                None => format!(
                    "the vault item {name:?} is not granted to the Gate; the person grants it with `vyre vault grant {name:?} gate`"
                ),
            },
            VaultError::NotFound => format!("the vault has no item {name:?} (`vyre vault list` names them)"),
            other => format!("the vault item {name:?}: {other}"),
        })?;
    }
    Ok(())
}

/// What the person sees: the request line, its headers and body with the references as
/// written (never a value), and which items the Gate adds.
pub fn show(input: &RequestInput, shape: &Shape) -> Shown {
    let names = items(shape);
    let mut destination = format!("{} {}", shape.method, shape.place);
    if !names.is_empty() {
        destination.push_str(&format!(
            " (the Gate adds from the vault: {})",
            names.join(", ")
        ));
    }
    let mut content = format!("{} {}\n", shape.method, input.url);
    for (k, v) in &input.headers {
        content.push_str(&format!("{k}: {v}\n"));
    }
    if let Some(body) = &input.body {
        content.push('\n');
        content.push_str(body);
    }
    Shown {
        destination,
        content,
        truncated: false,
        field: (!matches!(shape.method.as_str(), "GET" | "HEAD")).then(|| "body".into()),
    }
}

/// Where `shape` goes: its addresses, each checked against this machine and the private
/// networks unless the person listed it; plain http with a credential only to what is listed.
async fn addresses(shape: &Shape, local: &[String]) -> Result<Vec<SocketAddr>, ToolError> {
    let listed = boundary::listed(local, &shape.host, shape.port);
    if !shape.https && !shape.refs.is_empty() && !listed {
        return Err(ToolError::refused(
            "plain_http",
            format!(
                "{}:{} is plain http: a vault value would cross the network in the clear. Use https, or the person lists it in gate.local",
                shape.host, shape.port
            ),
        ));
    }
    let found: Vec<SocketAddr> = tokio::net::lookup_host((shape.host.as_str(), shape.port))
        .await
        .map_err(|e| ToolError::unavailable("no_address", format!("{}: {e}", shape.host)))?
        .collect();
    if found.is_empty() {
        return Err(ToolError::unavailable(
            "no_address",
            format!("{} has no address", shape.host),
        ));
    }
    if !listed && let Some(a) = found.iter().find(|a| boundary::private(a.ip())) {
        return Err(ToolError::refused(
            "private_address",
            private_address(shape, a.ip()),
        ));
    }
    Ok(found)
}

fn private_address(shape: &Shape, ip: std::net::IpAddr) -> String {
    let at = if shape.host == ip.to_string() {
        String::new()
    } else {
        format!(" ({ip})")
    };
    format!(
        "{}{at} is on this machine or a private network; the Gate goes there only when the person lists \"{}:{}\" in gate.local",
        shape.host, shape.host, shape.port
    )
}

/// The value a reference stands for.
fn field(name: &str, value: &VaultValue, f: &Field) -> Result<Zeroizing<String>, String> {
    // On an env set every `/NAME` is a variable, even one called `password` or `totp`.
    if let (VaultValue::Env(_), Some(var)) = (value, f.as_str())
        && !matches!(f, Field::Var(_))
    {
        return field(name, value, &Field::Var(var.to_string()));
    }
    let login = || match value {
        VaultValue::Login {
            username, password, ..
        } => Ok((username, password)),
        _ => Err(format!(
            "the vault item {name:?} is a {}, not a login",
            value.kind().as_str()
        )),
    };
    Ok(match f {
        Field::Value => Zeroizing::new(value.primary().expose().to_string()),
        Field::Username => Zeroizing::new(login()?.0.expose().to_string()),
        Field::Password => Zeroizing::new(login()?.1.expose().to_string()),
        Field::Totp => match value.totp_now() {
            Some(Ok(code)) => Zeroizing::new(code.expose().to_string()),
            Some(Err(e)) => return Err(format!("the vault item {name:?}'s TOTP: {e}")),
            None => return Err(format!("the vault item {name:?} has no TOTP seed")),
        },
        Field::Basic => {
            let (u, p) = login()?;
            let pair = Zeroizing::new(format!("{}:{}", u.expose(), p.expose()));
            Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(pair.as_bytes()))
        }
        Field::Var(var) => match value {
            VaultValue::Env(vars) => match vars.iter().find(|(k, _)| k == var) {
                Some((_, v)) => Zeroizing::new(v.expose().to_string()),
                None => {
                    return Err(format!(
                        "the env set {name:?} has no variable {var:?} (`vyre vault list` names its variables)"
                    ));
                }
            },
            _ => {
                return Err(format!(
                    "the vault item {name:?} is a {}, not an env set: /{var} names an env set's variable",
                    value.kind().as_str()
                ));
            }
        },
    })
}

type Values = BTreeMap<Ref, Zeroizing<String>>;

/// Each item the references name, fetched from the vault as the Gate's (granted to `gate`) or,
/// for an agent's session, as that agent's (granted to `agent:<name>`).
pub(super) async fn open(
    ctx: &Ctx,
    refs: &BTreeSet<Ref>,
    agent: Option<&str>,
) -> Result<BTreeMap<String, VaultValue>, ToolError> {
    use crate::kernel::contracts::vault::VaultError;
    let mut opened = BTreeMap::new();
    for r in refs {
        if !opened.contains_key(&r.item) {
            let mut v = ctx.vault().fetch(&r.item).await;
            if let (Err(VaultError::NotGranted { .. }), Some(agent)) = (&v, agent) {
                v = ctx.vault().fetch_for_agent(agent, &r.item).await;
            }
            opened.insert(r.item.clone(), v.map_err(ToolError::from)?);
        }
    }
    Ok(opened)
}

/// Each reference's value from the items opened, and the masker that hides them again.
fn values(
    opened: &BTreeMap<String, VaultValue>,
    refs: &BTreeSet<Ref>,
) -> Result<(Values, Masker), ToolError> {
    let mut values = Values::new();
    let mut masker = Masker::default();
    for r in refs {
        let value = opened
            .get(&r.item)
            .ok_or_else(|| ToolError::invalid(format!("{} has no value", r.placeholder())))?;
        let v = field(&r.item, value, &r.field).map_err(ToolError::invalid)?;
        if v.len() < boundary::MIN_VALUE && r.field != Field::Totp {
            return Err(ToolError::invalid(format!(
                "{} is shorter than {} characters: too short to be kept out of the answer",
                r.placeholder(),
                boundary::MIN_VALUE
            )));
        }
        masker.add(&v, &r.placeholder());
        if r.field == Field::Basic
            && let VaultValue::Login { password, .. } = value
        {
            masker.add(password.expose(), &r.placeholder());
        }
        values.insert(r.clone(), v);
    }
    Ok((values, masker))
}

/// Who asks, and the approval a session's call runs on.
fn approval(
    b: &Boundary,
    input: &RequestInput,
    cx: &CallCx,
) -> Result<(String, Option<String>, Option<String>), ToolError> {
    match &cx.caller {
        Caller::Session {
            thread: Some(t), ..
        } => {
            let item = b.take(t, input).ok_or_else(|| {
                ToolError::refused(
                    "not_approved",
                    "the Gate sends a session's request only once the person approved it: call gate.request as a tool of the session, and the person is asked",
                )
            })?;
            Ok((format!("thread:{t}"), Some(item), Some(t.clone())))
        }
        Caller::Session { thread: None, .. } => Err(ToolError::refused(
            "not_approved",
            "gate.request runs for a session Vyre runs, once the person approves it in the Gate; a terminal's session cannot use it yet",
        )),
        c if c.is_person() => Ok((c.label(), None, None)),
        _ => Err(ToolError::refused(
            "not_approved",
            "gate.request is for a session (approved by the person) or a person",
        )),
    }
}

pub async fn request(
    c: Ctx,
    b: Boundary,
    input: RequestInput,
    cx: CallCx,
) -> Result<Sent, ToolError> {
    let (by, item, thread) = approval(&b, &input, &cx)?;
    let shape = boundary::shape(
        &input.method,
        &input.url,
        &input.headers,
        input.body.as_deref(),
    )
    .map_err(ToolError::invalid)?;
    let agent = super::agent_of(&c, thread.as_deref()).await;
    let opened = open(&c, &shape.refs, agent.as_deref()).await?;
    let who = Who { by, item, thread };
    if let Some(pass) = super::relay::pass_in(&opened)? {
        return super::relay::forward(&c, pass, &input, &shape, who).await;
    }
    send(&c, &b, &input, &shape, &opened, who).await
}

/// Who a request is sent for: a label, the Gate's item that approved it, its thread.
pub(super) struct Who {
    pub by: String,
    pub item: Option<String>,
    pub thread: Option<String>,
}

/// Send `input` with the values of the items `opened`, masked in what comes back.
pub(super) async fn send(
    c: &Ctx,
    b: &Boundary,
    input: &RequestInput,
    shape: &Shape,
    opened: &BTreeMap<String, VaultValue>,
    who: Who,
) -> Result<Sent, ToolError> {
    let Who { by, item, thread } = who;
    let addrs = addresses(shape, &b.local).await?;
    let (values, masker) = values(opened, &shape.refs)?;
    let mask = |e: String| masker.mask(&e);
    let url = boundary::fill(&input.url, &values, boundary::percent).map_err(ToolError::invalid)?;
    let mut req = hyper::Request::builder()
        .method(shape.method.as_str())
        .uri(url.as_str())
        .header("user-agent", concat!("vyre/", env!("CARGO_PKG_VERSION")));
    for (k, v) in &input.headers {
        let v = boundary::fill(v, &values, boundary::as_is).map_err(ToolError::invalid)?;
        let mut value = hyper::header::HeaderValue::from_str(&v).map_err(|_| {
            ToolError::invalid(format!("header {k}'s value is not one a header may carry"))
        })?;
        value.set_sensitive(true);
        req = req.header(k.as_str(), value);
    }
    let body = match &input.body {
        Some(b) => {
            let filled = boundary::fill(b, &values, boundary::as_is).map_err(ToolError::invalid)?;
            Bytes::from(filled.as_bytes().to_vec())
        }
        None => Bytes::new(),
    };
    let req = req
        .body(Full::new(body))
        .map_err(|e| ToolError::invalid(mask(format!("the request: {e}"))))?;
    let names = items(shape);
    let sent = crate::kernel::outbound::send_pinned(addrs, req, TIMEOUT, READ_MAX).await;
    let event = |status: Option<u16>, error: Option<String>| {
        let mut e = NewEvent::new(
            "gate.sent",
            crate::kernel::redact::mask_value(&json!({
                "item": item, "by": by, "method": shape.method, "destination": shape.place,
                "status": status, "error": error, "vault": names,
            })),
        );
        if let Some(t) = &thread {
            e = e.thread(t);
        }
        e
    };
    let reply = match sent {
        Ok(r) => r,
        Err(e) => {
            let why = mask(e);
            let _ = c.events().emit(event(None, Some(why.clone()))).await;
            return Err(ToolError::unavailable(
                "unreachable",
                format!("{} {}: {why}", shape.method, shape.place),
            ));
        }
    };
    if let Err(e) = c.events().emit(event(Some(reply.status), None)).await {
        tracing::warn!("the gate could not say gate.sent: {e}");
    }
    let mut headers = BTreeMap::new();
    for (k, v) in &reply.headers {
        if k == hyper::header::SET_COOKIE {
            continue;
        }
        let v = mask(String::from_utf8_lossy(v.as_bytes()).into_owned());
        headers
            .entry(k.as_str().to_string())
            .and_modify(|old: &mut String| {
                old.push_str(", ");
                old.push_str(&v)
            })
            .or_insert(v);
    }
    let (body, truncated) = text(&reply.body, reply.cut, &masker);
    Ok(Sent {
        status: reply.status,
        headers,
        body,
        bytes: reply.body.len(),
        truncated,
        vault: names,
    })
}

/// An answer's body as text, masked whole and then cut at [`TEXT_MAX`] (so no value is cut in
/// two and left half-shown); none when it is not UTF-8 (a body cut at [`READ_MAX`] may end in
/// the middle of a character).
fn text(body: &[u8], was_cut: bool, masker: &Masker) -> (Option<String>, bool) {
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) if was_cut && e.error_len().is_none() => {
            std::str::from_utf8(&body[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return (None, was_cut),
    };
    let mut masked = masker.mask(text);
    let cut = masked.len() > TEXT_MAX;
    if cut {
        let mut at = TEXT_MAX;
        while !masked.is_char_boundary(at) {
            at -= 1;
        }
        masked.truncate(at);
    }
    (Some(masked), was_cut || cut)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
