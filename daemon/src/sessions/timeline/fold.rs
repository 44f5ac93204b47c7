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
                | "adopted" | "exited 0",
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
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A timeline in memory: what the store keeps, for tests.
    #[derive(Default)]
    pub(crate) struct Mem {
        pub order: Vec<String>,
        pub items: BTreeMap<String, Item>,
        pub announced: Vec<Item>,
    }

    impl Items for Mem {
        fn get(&self, key: &str) -> Option<Item> {
            self.items.get(key).cloned()
        }
        fn open_texts(&self) -> Vec<Item> {
            self.order
                .iter()
                .filter_map(|k| self.items.get(k))
                .filter(|i| i.is_open_text())
                .cloned()
                .collect()
        }
    }

    impl Mem {
        fn apply(&mut self, id: i64, kind: &str, payload: Value) {
            let ev = Ev {
                id,
                at: id * 10,
                kind,
                payload: &payload,
            };
            for change in fold(&ev, self) {
                match change {
                    Change::Put(item) => {
                        let item = *item;
                        let key = item.key().to_string();
                        if !self.items.contains_key(&key) {
                            self.order.push(key.clone());
                        }
                        self.announced.push(item.clone());
                        self.items.insert(key, item);
                    }
                    Change::Append { key, delta } => {
                        if let Some(Item::Assistant(t) | Item::Reasoning(t)) =
                            self.items.get_mut(&key)
                        {
                            t.text.push_str(&delta);
                        }
                    }
                    Change::CutAfter { key } => {
                        if let Some(at) = self.order.iter().position(|k| *k == key) {
                            for k in self.order.split_off(at + 1) {
                                self.items.remove(&k);
                            }
                        }
                    }
                }
            }
        }

        fn kinds(&self) -> Vec<String> {
            self.order
                .iter()
                .map(|k| {
                    let i = &self.items[k];
                    let kind = serde_json::to_value(i).unwrap()["kind"]
                        .as_str()
                        .unwrap()
                        .to_string();
                    format!("{kind}:{k}")
                })
                .collect()
        }

        fn tool(&self, call: &str) -> Tool {
            match &self.items[&tool_key(call)] {
                Item::Tool(t) => t.clone(),
                other => panic!("not a tool: {other:?}"),
            }
        }

        fn notice(&self, key: &str) -> Notice {
            match &self.items[key] {
                Item::Notice(n) => n.clone(),
                other => panic!("not a notice: {other:?}"),
            }
        }
    }

    fn turn(uuid: &str, text: &str) -> Value {
        json!({ "turn": "t:1", "uuid": uuid, "text": text })
    }

    #[test]
    fn a_turn_with_text_a_tool_and_its_output_is_in_order() {
        let mut m = Mem::default();
        m.apply(1, "thread.turn", turn("u1", "RUNBASH ls"));
        m.apply(
            2,
            "thread.text",
            json!({ "message": "msg_1", "block": 0, "delta": "Let me ", "turn": "t:1" }),
        );
        m.apply(
            3,
            "thread.text",
            json!({ "message": "msg_1", "block": 0, "delta": "look.", "turn": "t:1" }),
        );
        m.apply(
            4,
            "thread.text",
            json!({ "message": "msg_1", "block": 0, "done": true }),
        );
        m.apply(5, "thread.tool", json!({ "call": "toolu_1", "id": "toolu_1", "name": "Bash", "phase": "started", "status": "running", "summary": "list files", "input": { "command": "ls -la", "description": "list files" } }));
        m.apply(7, "thread.tool", json!({ "call": "toolu_1", "name": "Bash", "phase": "done", "status": "completed", "output": "a\nb", "output_bytes": 3, "exit": 0 }));
        m.apply(
            8,
            "thread.text",
            json!({ "message": "msg_2", "block": 0, "delta": "Two files." }),
        );
        assert_eq!(
            m.kinds(),
            [
                "user:u1",
                "assistant:m:msg_1:0",
                "tool:tool:toolu_1",
                "assistant:m:msg_2:0"
            ]
        );
        let t = m.tool("toolu_1");
        assert_eq!(t.summary, "ls -la", "the command, not its description");
        assert_eq!(t.status, "completed");
        assert_eq!(t.output.as_deref(), Some("a\nb"));
        assert_eq!((t.exit, t.duration_ms, t.auto), (Some(0), Some(20), true));
        match &m.items["m:msg_1:0"] {
            Item::Assistant(t) => assert_eq!((t.text.as_str(), t.done), ("Let me look.", true)),
            other => panic!("{other:?}"),
        }
        // Deltas are not announced (thread.text is); the item's start and end are.
        let texts = m
            .announced
            .iter()
            .filter(|i| i.key() == "m:msg_1:0")
            .count();
        assert_eq!(texts, 2);
    }

    #[test]
    fn a_long_output_is_capped_with_its_size() {
        let mut m = Mem::default();
        m.apply(1, "thread.tool", json!({ "call": "c", "name": "Bash", "phase": "started", "input": { "command": "yes | head -c 20000" } }));
        let long = "y\n".repeat(10_000);
        m.apply(2, "thread.tool", json!({ "call": "c", "phase": "done", "status": "failed", "output": long, "output_bytes": 20000, "exit": 1 }));
        let t = m.tool("c");
        assert_eq!(t.output.as_ref().unwrap().len(), OUTPUT_CAP);
        assert_eq!(
            (t.output_bytes, t.output_truncated),
            (Some(20000), Some(true))
        );
        assert_eq!((t.status.as_str(), t.exit), ("failed", Some(1)));
    }

    #[test]
    fn asks_keep_their_answers_and_a_denied_call_says_so() {
        let mut m = Mem::default();
        m.apply(1, "thread.tool", json!({ "call": "c1", "name": "Bash", "phase": "started", "input": { "command": "touch a" } }));
        m.apply(2, "ask.raised", json!({ "ask": "k1", "kind": "tool", "tool": "Bash", "summary": "make a", "call": "c1", "input": { "command": "touch a" } }));
        m.apply(
            3,
            "ask.answered",
            json!({ "ask": "k1", "decision": "allow" }),
        );
        m.apply(
            4,
            "thread.tool",
            json!({ "call": "c1", "phase": "done", "status": "completed", "output": "" }),
        );
        m.apply(5, "thread.tool", json!({ "call": "c2", "name": "Bash", "phase": "started", "input": { "command": "rm b" } }));
        m.apply(6, "ask.raised", json!({ "ask": "k2", "kind": "tool", "tool": "Bash", "call": "c2", "input": { "command": "rm b" }, "destructive": "deletes files" }));
        m.apply(
            7,
            "ask.answered",
            json!({ "ask": "k2", "decision": "deny", "message": "not that one" }),
        );
        m.apply(8, "thread.tool", json!({ "call": "c2", "phase": "done", "status": "failed", "output": "The person declined this." }));
        m.apply(9, "ask.raised", json!({ "ask": "k3", "kind": "question", "tool": "AskUserQuestion", "input": { "questions": [{ "question": "Which?", "options": [{ "label": "A" }, { "label": "B" }] }] } }));
        m.apply(
            10,
            "ask.answered",
            json!({ "ask": "k3", "decision": "allow", "answers": { "Which?": "B" } }),
        );
        assert_eq!(
            m.kinds(),
            [
                "tool:tool:c1",
                "ask:ask:k1",
                "tool:tool:c2",
                "ask:ask:k2",
                "ask:ask:k3"
            ]
        );
        let (c1, c2) = (m.tool("c1"), m.tool("c2"));
        assert_eq!((c1.status.as_str(), c1.auto), ("completed", false));
        assert_eq!((c2.status.as_str(), c2.auto), ("denied", false));
        match (&m.items["ask:k2"], &m.items["ask:k3"]) {
            (Item::Ask(denied), Item::Ask(question)) => {
                assert_eq!(denied.decision.as_deref(), Some("deny"));
                assert_eq!(denied.message.as_deref(), Some("not that one"));
                assert_eq!(denied.destructive.as_deref(), Some("deletes files"));
                assert_eq!(question.status, "answered");
                assert_eq!(question.answers, Some(json!({ "Which?": "B" })));
                assert_eq!(question.questions[0]["options"][1]["label"], "B");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn steers_queued_and_internal_messages_say_how_they_came() {
        let mut m = Mem::default();
        m.apply(
            1,
            "thread.turn",
            json!({ "uuid": "g", "text": "Greet them", "internal": true }),
        );
        m.apply(2, "thread.turn", turn("u1", "SLOWLY count"));
        m.apply(
            3,
            "thread.sent",
            json!({ "uuid": "s1", "text": "and faster", "via": "steer" }),
        );
        m.apply(4, "thread.steered", json!({ "uuid": "s1" }));
        m.apply(5, "thread.finished", json!({ "ok": true, "turn": "t:2" }));
        m.apply(
            6,
            "thread.sent",
            json!({ "uuid": "q1", "text": "after", "via": "turn", "queued": 3 }),
        );
        m.apply(7, "thread.turn", json!({ "uuid": "q1", "text": "after" }));
        // A steer the turn never took in runs as its own turn under its uuid: still one item.
        m.apply(
            8,
            "thread.turn",
            json!({ "uuid": "s1", "text": "and faster", "steered": true }),
        );
        let via: Vec<(String, String)> = m
            .order
            .iter()
            .filter_map(|k| match &m.items[k] {
                Item::User(u) => Some((u.key.clone(), u.via.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            via,
            [
                ("g".into(), "internal".into()),
                ("u1".into(), "person".into()),
                ("s1".into(), "steer".into()),
                ("q1".into(), "queued".into())
            ]
        );
    }

    #[test]
    fn interrupts_errors_and_retries_speak() {
        let mut m = Mem::default();
        m.apply(1, "thread.turn", turn("u1", "SLOWLY"));
        m.apply(
            2,
            "thread.text",
            json!({ "message": "msg_1", "block": 0, "delta": "1 2" }),
        );
        m.apply(
            3,
            "thread.finished",
            json!({ "ok": false, "canceled": true, "reason": "interrupt", "turn": "t:1" }),
        );
        assert_eq!(m.notice("n:3").text, "Interrupted.");
        assert!(m.open_texts().is_empty(), "the cut-short text is closed");

        m.apply(
            4,
            "thread.turn",
            json!({ "turn": "t:2", "uuid": "u2", "text": "FAIL500 always" }),
        );
        m.apply(5, "thread.retry", json!({ "attempt": 1, "max_retries": 3, "delay_ms": 600, "status": 500, "error": "fake", "turn": "t:2" }));
        m.apply(6, "thread.retry", json!({ "attempt": 2, "max_retries": 3, "delay_ms": 1200, "status": 500, "error": "fake", "turn": "t:2" }));
        let r = m.notice("retry:t:2");
        assert_eq!(
            (r.at, r.retry.unwrap().attempt),
            (50, 2),
            "one line, updated in place"
        );
        m.apply(7, "thread.finished", json!({ "ok": false, "error": "API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"fake\"}}", "turn": "t:2" }));
        let e = m.notice("n:7");
        assert_eq!(
            (e.level.as_str(), e.code.as_str(), e.retryable),
            ("error", "api_error", Some(true))
        );
        assert!(e.text.contains("gave up after retrying"), "{}", e.text);
        assert_eq!(m.notice("retry:t:2").text, "Claude's API failed 2 times.");

        m.apply(
            8,
            "thread.state",
            json!({ "state": "failed", "error": "no claude here" }),
        );
        assert_eq!(m.notice("n:8").code, "start_failed");
        m.apply(
            9,
            "thread.state",
            json!({ "state": "failed", "error": "mid-turn", "turn": "t:3" }),
        );
        assert!(
            !m.items.contains_key("n:9"),
            "a turn's failure speaks once, in its finish"
        );
        m.apply(
            10,
            "thread.denied",
            json!({ "tool": "Bash", "call": "nope", "reason": "destructive", "by": "floor" }),
        );
        assert_eq!(m.notice("n:10").text, "Bash was refused: destructive");
        m.apply(
            11,
            "thread.notice",
            json!({ "level": "warning", "text": "On the API key now." }),
        );
        assert_eq!(m.notice("n:11").level, "warn");
        m.apply(12, "thread.stopped", json!({ "reason": "exited 1" }));
        m.apply(13, "thread.stopped", json!({ "reason": "idle" }));
        assert_eq!(m.notice("n:12").code, "stopped");
        assert!(!m.items.contains_key("n:13"));
    }

    #[test]
    fn a_restart_ends_what_was_open() {
        // What a vyred that died mid-turn finds, and what its next start records.
        let mut m = Mem::default();
        m.apply(1, "thread.turn", turn("u1", "hi"));
        m.apply(
            2,
            "thread.text",
            json!({ "message": "msg_1", "block": 0, "delta": "par" }),
        );
        m.apply(3, "thread.tool", json!({ "call": "c", "name": "Read", "phase": "started", "input": { "file_path": "/w/a" } }));
        m.apply(
            4,
            "ask.raised",
            json!({ "ask": "k", "kind": "tool", "tool": "Read", "call": "c", "input": {} }),
        );
        // The next vyred:
        m.apply(
            10,
            "ask.answered",
            json!({ "ask": "k", "decision": "cancelled", "reason": "restart" }),
        );
        m.apply(
            11,
            "thread.finished",
            json!({ "ok": false, "canceled": true, "reason": "restart", "turn": "t:1" }),
        );
        m.apply(12, "thread.stopped", json!({ "reason": "restart" }));
        assert_eq!(m.notice("n:11").code, "restarted");
        assert!(m.open_texts().is_empty());
        match &m.items["ask:k"] {
            Item::Ask(a) => assert_eq!(a.status, "cancelled"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn out_of_order_and_repeated_events_do_no_harm() {
        let mut m = Mem::default();
        // A tool's end with no start (its start was before what was folded): still a row.
        m.apply(
            1,
            "thread.tool",
            json!({ "call": "c", "name": "Bash", "phase": "done", "status": "canceled" }),
        );
        assert_eq!(m.tool("c").status, "interrupted");
        // An answer to an ask never seen, a done for words never streamed: nothing.
        m.apply(
            2,
            "ask.answered",
            json!({ "ask": "ghost", "decision": "allow" }),
        );
        m.apply(
            3,
            "thread.text",
            json!({ "message": "msg_9", "block": 0, "done": true }),
        );
        assert_eq!(m.order.len(), 1);
        // The same turn twice (a send retried) is one item, where it first was.
        m.apply(4, "thread.turn", turn("u1", "hi"));
        m.apply(5, "thread.turn", turn("u1", "hi"));
        // A start repeated keeps the input it had; a late delta still lands.
        m.apply(6, "thread.tool", json!({ "call": "d", "name": "Bash", "phase": "started", "input": { "command": "ls" } }));
        m.apply(7, "thread.tool", json!({ "call": "d", "name": "Bash", "phase": "started", "input": { "command": "other" } }));
        assert_eq!(m.tool("d").input["command"], "ls");
        m.apply(
            8,
            "thread.text",
            json!({ "message": "msg_1", "block": 1, "delta": "a", "kind": "reasoning" }),
        );
        m.apply(
            9,
            "thread.text",
            json!({ "message": "msg_1", "block": 1, "done": true, "kind": "reasoning" }),
        );
        m.apply(
            10,
            "thread.text",
            json!({ "message": "msg_1", "block": 1, "delta": "b", "kind": "reasoning" }),
        );
        match &m.items["m:msg_1:1"] {
            Item::Reasoning(t) => assert_eq!(t.text, "ab"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            m.kinds(),
            [
                "tool:tool:c",
                "user:u1",
                "tool:tool:d",
                "reasoning:m:msg_1:1"
            ]
        );
    }

    #[test]
    fn a_rewind_drops_what_came_after() {
        let mut m = Mem::default();
        m.apply(1, "thread.turn", turn("u1", "one"));
        m.apply(
            2,
            "thread.text",
            json!({ "message": "msg_1", "block": 0, "delta": "r1" }),
        );
        m.apply(3, "thread.turn", turn("u2", "two"));
        m.apply(
            4,
            "thread.text",
            json!({ "message": "msg_2", "block": 0, "delta": "r2" }),
        );
        m.apply(5, "thread.rewound", json!({ "uuid": "u1", "at": "u1" }));
        assert_eq!(m.kinds(), ["user:u1", "notice:n:5"]);
    }

    #[test]
    fn subagent_calls_name_their_parent() {
        let mut m = Mem::default();
        m.apply(1, "thread.tool", json!({ "call": "task", "name": "Agent", "phase": "started", "input": { "description": "look around", "prompt": "..." } }));
        m.apply(2, "thread.tool", json!({ "call": "inner", "name": "Glob", "phase": "started", "parent": "task", "input": { "pattern": "**/*.rs" } }));
        assert_eq!(m.tool("inner").parent_call.as_deref(), Some("task"));
        assert_eq!(m.tool("inner").summary, "**/*.rs");
        assert_eq!(m.tool("task").summary, "look around");
    }
}
