//! Tests of `fold.rs`.
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
                    if let Some(Item::Assistant(t) | Item::Reasoning(t)) = self.items.get_mut(&key)
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
    m.apply(
        5,
        "thread.tool",
        json!({ "call": "c2", "name": "Bash", "phase": "started", "input": { "command": "rm b" } }),
    );
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
    m.apply(
        6,
        "thread.tool",
        json!({ "call": "d", "name": "Bash", "phase": "started", "input": { "command": "ls" } }),
    );
    m.apply(
        7,
        "thread.tool",
        json!({ "call": "d", "name": "Bash", "phase": "started", "input": { "command": "other" } }),
    );
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
