//! The fold: one event of a thread, and the items it already has, give the changes to its
//! timeline. Pure (no store, no clock), so every case is a unit test; `store.rs` runs it inside
//! the transaction that appends the event, so the timeline and the log never disagree.

use serde_json::{Value, json};

use super::item::{
    Ask, Item, Notice, OUTPUT_CAP, Retry, Text, Tool, User, ask_key, cap_strings, cut, summary_of,
    text_key, tool_key,
};
use super::words;

/// One event, as the fold reads it.
#[derive(Debug, Clone, Copy)]
pub struct Ev<'a> {
    pub id: i64,
    pub at: i64,
    pub kind: &'a str,
    pub payload: &'a Value,
}

/// What the thread's timeline holds so far.
pub trait Items {
    fn get(&self, key: &str) -> Option<Item>;
    /// Claude's words still streaming (not `done`).
    fn open_texts(&self) -> Vec<Item>;
}

/// A change to the timeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Insert the item (it takes the event's place in the order) or replace it where it is.
    /// Announced as a `thread.item` event.
    Put(Box<Item>),
    /// Streamed words appended to a text item; the `thread.text` event is its announcement.
    Append { key: String, delta: String },
    /// Every item after this one goes (a rewind). Surfaces do the same on `thread.rewound`.
    CutAfter { key: String },
}

fn put(item: Item) -> Change {
    Change::Put(Box::new(item))
}

fn str_of<'a>(p: &'a Value, k: &str) -> Option<&'a str> {
    p[k].as_str().filter(|s| !s.is_empty())
}

fn notice(ev: &Ev, level: &str, code: &str, text: String) -> Item {
    Item::Notice(Notice {
        key: format!("n:{}", ev.id),
        at: ev.at,
        level: level.into(),
        code: code.into(),
        text,
        retry: None,
        retryable: None,
    })
}

/// The changes `ev` makes to a thread's timeline.
pub fn fold(ev: &Ev, items: &dyn Items) -> Vec<Change> {
    let p = ev.payload;
    match ev.kind {
        "thread.turn" | "thread.sent" => user(ev, items).into_iter().map(put).collect(),
        "thread.text" => text(ev, items),
        "thread.tool" => tool(ev, items).into_iter().map(put).collect(),
        "thread.denied" => denied(ev, items),
        "ask.raised" => ask_raised(ev, items),
        "ask.answered" => ask_answered(ev, items),
        "thread.finished" => finished(ev, items),
        "thread.retry" => retry(ev, items),
        "thread.state" if p["state"] == "failed" && p["turn"].is_null() => {
            let error = str_of(p, "error").unwrap_or("it did not say why");
            vec![put(notice(
                ev,
                "error",
                "start_failed",
                format!("The session could not start: {error}"),
            ))]
        }
        "thread.worktree" => vec![put(notice(
            ev,
            "info",
            "worktree",
            format!(
                "Working in a worktree on branch {}, at {}.",
                str_of(p, "branch").unwrap_or("?"),
                str_of(p, "path").unwrap_or("?")
            ),
        ))],
        "thread.worktree_merged" => vec![put(notice(
            ev,
            "info",
            "worktree_merged",
            format!(
                "Merged {} into {} ({}).",
                str_of(p, "branch").unwrap_or("?"),
                str_of(p, "into").unwrap_or("?"),
                str_of(p, "how").unwrap_or("?")
            ),
        ))],
        "thread.worktree_removed" => vec![put(notice(
            ev,
            "info",
            "worktree_removed",
            format!(
                "The worktree was removed{}. Its folder is gone, so this session cannot go on: start a new one.",
                if p["branch_deleted"] == true {
                    ", with its branch"
                } else {
                    "; its branch stays"
                }
            ),
        ))],
        "thread.notice" => {
            let level = match p["level"].as_str() {
                Some("error") => "error",
                Some("warn" | "warning") => "warn",
                _ => "info",
            };
            let text = str_of(p, "text").unwrap_or_default().to_string();
            vec![put(notice(ev, level, "notice", text))]
        }
        "thread.stopped" => match str_of(p, "reason") {
            Some(
                "idle" | "stopped" | "restart" | "rewind" | "fallback" | "agent updated"
                | "adopted" | "exited 0" | "worktree removed",
            )
            | None => vec![],
            Some(reason) => vec![put(notice(
                ev,
                "info",
                "stopped",
                format!("The session stopped ({reason}). Sending again resumes it."),
            ))],
        },
        "thread.rewound" => match str_of(p, "uuid") {
            Some(uuid) => vec![
                Change::CutAfter { key: uuid.into() },
                put(notice(
                    ev,
                    "info",
                    "rewound",
                    "Rewound to here: what came after was dropped.".into(),
                )),
            ],
            None => vec![],
        },
        _ => vec![],
    }
}

/// A person's (or Vyre's) message: where it first shows, it stays.
fn user(ev: &Ev, items: &dyn Items) -> Option<Item> {
    let p = ev.payload;
    let uuid = str_of(p, "uuid")?;
    if items.get(uuid).is_some() {
        return None;
    }
    let via = if p["internal"] == true {
        "internal"
    } else if !p["queued"].is_null() {
        "queued"
    } else if p["via"] == "steer" {
        "steer"
    } else {
        "person"
    };
    Some(Item::User(User {
        key: uuid.into(),
        at: ev.at,
        uuid: uuid.into(),
        text: p["text"].as_str().unwrap_or_default().into(),
        via: via.into(),
        images: p["images"].as_u64().unwrap_or(0) as u32,
    }))
}

fn text(ev: &Ev, items: &dyn Items) -> Vec<Change> {
    let p = ev.payload;
    let Some(message) = str_of(p, "message") else {
        return vec![];
    };
    let key = text_key(message, p["block"].as_u64().unwrap_or(0));
    let delta = p["delta"].as_str();
    let done = p["done"] == true;
    match (items.get(&key), delta) {
        (None, None) => vec![],
        (None, Some(d)) => {
            let t = Text {
                key,
                at: ev.at,
                message: message.into(),
                text: d.into(),
                done,
                truncated: false,
            };
            let item = if p["kind"] == "reasoning" {
                Item::Reasoning(t)
            } else {
                Item::Assistant(t)
            };
            vec![put(item)]
        }
        (Some(mut item), delta) => {
            let mut out = vec![];
            if let Some(d) = delta.filter(|d| !d.is_empty()) {
                out.push(Change::Append {
                    key: key.clone(),
                    delta: d.into(),
                });
                if let Item::Assistant(t) | Item::Reasoning(t) = &mut item {
                    t.text.push_str(d);
                }
            }
            if done && let Item::Assistant(t) | Item::Reasoning(t) = &mut item {
                t.done = true;
                out.push(put(item));
            }
            out
        }
    }
}

fn tool(ev: &Ev, items: &dyn Items) -> Option<Item> {
    let p = ev.payload;
    let call = str_of(p, "call").or_else(|| str_of(p, "id"))?;
    let key = tool_key(call);
    let existing = items.get(&key).and_then(|i| match i {
        Item::Tool(t) => Some(t),
        _ => None,
    });
    let name = str_of(p, "name").unwrap_or("tool");
    let mut t = existing.unwrap_or_else(|| Tool {
        key: key.clone(),
        at: ev.at,
        call: call.into(),
        parent_call: None,
        name: name.into(),
        input: json!({}),
        input_truncated: false,
        summary: String::new(),
        status: "running".into(),
        output: None,
        output_bytes: None,
        output_truncated: None,
        exit: None,
        duration_ms: None,
        auto: true,
    });
    if t.name == "tool" && name != "tool" {
        t.name = name.into();
    }
    if let Some(parent) = str_of(p, "parent") {
        t.parent_call = Some(parent.into());
    }
    if p["input"].is_object() && t.input.as_object().is_none_or(|o| o.is_empty()) {
        let (input, cut) = cap_strings(&p["input"], super::item::INPUT_STRING_CAP);
        t.input = input;
        t.input_truncated |= cut || p["input_truncated"] == true;
    }
    let fallback = str_of(p, "summary").unwrap_or(&t.summary).to_string();
    t.summary = summary_of(&t.name, &t.input, &fallback);
    if p["phase"] == "done" {
        t.status = match (p["status"].as_str(), t.status.as_str()) {
            (_, "denied") => "denied",
            (_, _) if p["interrupted"] == true => "interrupted",
            (Some("canceled" | "interrupted"), _) => "interrupted",
            (Some("failed"), _) => "failed",
            _ => "completed",
        }
        .into();
        if let Some(output) = p["output"].as_str() {
            let (kept, was_cut) = cut(output, OUTPUT_CAP);
            let bytes = p["output_bytes"].as_u64().unwrap_or(output.len() as u64);
            t.output_truncated = Some(was_cut || p["output_truncated"] == true);
            t.output = Some(kept);
            t.output_bytes = Some(bytes);
        }
        if let Some(exit) = p["exit"].as_i64() {
            t.exit = Some(exit);
        }
        if t.duration_ms.is_none() && ev.at >= t.at {
            t.duration_ms = Some((ev.at - t.at) as u64);
        }
    }
    Some(Item::Tool(t))
}

fn tool_of(items: &dyn Items, call: &str) -> Option<Tool> {
    match items.get(&tool_key(call)) {
        Some(Item::Tool(t)) => Some(t),
        _ => None,
    }
}

fn denied(ev: &Ev, items: &dyn Items) -> Vec<Change> {
    let p = ev.payload;
    let reason = str_of(p, "reason").unwrap_or("refused");
    match str_of(p, "call").and_then(|c| tool_of(items, c)) {
        Some(mut t) => {
            t.status = "denied".into();
            t.auto = false;
            if t.output.is_none() {
                t.output = Some(reason.into());
                t.output_bytes = Some(reason.len() as u64);
                t.output_truncated = Some(false);
            }
            vec![put(Item::Tool(t))]
        }
        None => {
            let tool = str_of(p, "tool").unwrap_or("A tool");
            vec![put(notice(
                ev,
                "warn",
                "denied",
                format!("{tool} was refused: {reason}"),
            ))]
        }
    }
}

fn ask_raised(ev: &Ev, items: &dyn Items) -> Vec<Change> {
    let p = ev.payload;
    let Some(ask) = str_of(p, "ask") else {
        return vec![];
    };
    let input = p["input"].clone();
    let questions = match &input["questions"] {
        Value::Array(q) => Value::Array(q.clone()),
        _ => json!([]),
    };
    let call = str_of(p, "call").map(String::from);
    let mut out = vec![];
    if let Some(mut t) = call.as_deref().and_then(|c| tool_of(items, c))
        && t.auto
    {
        t.auto = false;
        out.push(put(Item::Tool(t)));
    }
    let existing = items.get(&ask_key(ask));
    let (status, decision) = match &existing {
        Some(Item::Ask(a)) => (a.status.clone(), a.decision.clone()),
        _ => ("open".into(), None),
    };
    out.push(put(Item::Ask(Ask {
        key: ask_key(ask),
        at: existing.map(|e| e.at()).unwrap_or(ev.at),
        ask: ask.into(),
        ask_kind: str_of(p, "kind").unwrap_or("tool").into(),
        tool: str_of(p, "tool").unwrap_or_default().into(),
        call,
        summary: str_of(p, "summary").unwrap_or_default().into(),
        input: cap_strings(&input, super::item::INPUT_STRING_CAP).0,
        questions,
        status,
        decision,
        answers: None,
        message: None,
        rule: (!p["rule"].is_null()).then(|| p["rule"].clone()),
        destructive: str_of(p, "destructive").map(String::from),
    })));
    out
}

fn ask_answered(ev: &Ev, items: &dyn Items) -> Vec<Change> {
    let p = ev.payload;
    let Some(Item::Ask(mut a)) = str_of(p, "ask").and_then(|k| items.get(&ask_key(k))) else {
        return vec![];
    };
    let decision = str_of(p, "decision").unwrap_or("answered");
    a.status = if decision == "cancelled" {
        "cancelled"
    } else {
        "answered"
    }
    .into();
    a.decision = Some(decision.into());
    if !p["answers"].is_null() {
        a.answers = Some(p["answers"].clone());
    }
    if let Some(m) = str_of(p, "message") {
        a.message = Some(m.into());
    }
    let mut out = vec![];
    if decision == "deny"
        && let Some(mut t) = a.call.as_deref().and_then(|c| tool_of(items, c))
    {
        t.status = "denied".into();
        out.push(put(Item::Tool(t)));
    }
    out.insert(0, put(Item::Ask(a)));
    out
}

fn retry_key(ev: &Ev) -> String {
    match str_of(ev.payload, "turn") {
        Some(turn) => format!("retry:{turn}"),
        None => format!("retry:{}", ev.id),
    }
}

fn retry(ev: &Ev, items: &dyn Items) -> Vec<Change> {
    let p = ev.payload;
    let key = retry_key(ev);
    let (attempt, max, delay_ms) = (
        p["attempt"].as_u64().unwrap_or(0),
        p["max_retries"].as_u64().unwrap_or(0),
        p["delay_ms"].as_u64().unwrap_or(0),
    );
    let text = words::retrying(
        p["status"].as_u64(),
        p["error"].as_str().unwrap_or_default(),
        attempt,
        max,
        delay_ms,
    );
    vec![put(Item::Notice(Notice {
        at: items.get(&key).map(|i| i.at()).unwrap_or(ev.at),
        key,
        level: "warn".into(),
        code: "retrying".into(),
        text,
        retry: Some(Retry {
            attempt,
            max,
            delay_ms,
        }),
        retryable: None,
    }))]
}

fn finished(ev: &Ev, items: &dyn Items) -> Vec<Change> {
    let p = ev.payload;
    let mut out: Vec<Change> = items
        .open_texts()
        .into_iter()
        .filter_map(|mut i| {
            if let Item::Assistant(t) | Item::Reasoning(t) = &mut i {
                t.done = true;
                return Some(put(i));
            }
            None
        })
        .collect();
    // The turn's retries, now that it is over.
    if let Some(Item::Notice(mut n)) = items.get(&retry_key(ev))
        && n.code == "retrying"
    {
        let attempts = n.retry.as_ref().map(|r| r.attempt).unwrap_or(1);
        if p["ok"] == true {
            n.code = "retried".into();
            n.level = "info".into();
            n.text = words::retried(attempts);
        } else {
            n.code = "retried".into();
            n.text = format!("Claude's API failed {attempts} times.");
        }
        out.push(put(Item::Notice(n)));
    }
    if p["canceled"] == true {
        let (code, text) = match p["reason"].as_str() {
            Some("restart") => (
                "restarted",
                "Vyre restarted during this turn, so it ended here. Send again to go on.",
            ),
            Some("stopped") => ("interrupted", "Stopped: the session was closed."),
            Some("rewind" | "fallback" | "agent updated") => return out,
            _ => ("interrupted", "Interrupted."),
        };
        out.push(put(notice(ev, "info", code, text.into())));
    } else if let Some(error) = str_of(p, "error") {
        let said = words::failed_turn(error);
        let mut n = notice(ev, "error", said.code, said.text);
        if let Item::Notice(n) = &mut n {
            n.retryable = Some(said.retryable);
        }
        out.push(put(n));
    }
    out
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
