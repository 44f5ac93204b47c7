//! `recall.thread`: a whole conversation, history from the transcript and the live turns not in
//! it yet, matched by the prompt's uuid and the reply's message id so nothing shows twice.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::kernel::store::StoreError;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Turn {
    /// A prompt's uuid, or a reply's message id.
    pub key: String,
    pub uuid: Option<String>,
    pub role: String,
    pub text: String,
    pub at: Option<i64>,
    /// Seen live, not (yet) read from the transcript.
    pub live: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Conversation {
    pub thread: String,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub turns: Vec<Turn>,
}

pub fn history(c: &rusqlite::Connection, thread: &str) -> Result<Conversation, StoreError> {
    let (title, cwd) = c
        .query_row(
            "SELECT COALESCE(title, summary), cwd FROM recall_sessions WHERE session = ?1",
            [thread],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap_or((None, None));
    let mut stmt = c.prepare_cached(
        "SELECT key, uuid, role, text, at FROM recall_turns WHERE session = ?1 ORDER BY id",
    )?;
    let turns = stmt
        .query_map([thread], |r| {
            Ok(Turn {
                key: r.get(0)?,
                uuid: r.get(1)?,
                role: r.get(2)?,
                text: r.get(3)?,
                at: r.get(4)?,
                live: false,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Conversation {
        thread: thread.to_string(),
        title,
        cwd,
        turns,
    })
}

/// Add the live turns of `events` (the thread's `thread.turn` and `thread.text` events, oldest
/// first) that the history does not hold.
pub fn merge_live(conversation: &mut Conversation, events: &[Value]) {
    let known: HashSet<String> = conversation.turns.iter().map(|t| t.key.clone()).collect();
    // Replies are streamed as deltas: one text per message id, in order of first appearance.
    let mut replies: BTreeMap<usize, (String, String, Option<i64>)> = BTreeMap::new();
    let mut order: Vec<(usize, Turn)> = vec![];
    let mut slot_of: std::collections::HashMap<String, usize> = Default::default();
    for (i, e) in events.iter().enumerate() {
        let p = &e["payload"];
        match e["type"].as_str() {
            Some("thread.turn") => {
                let Some(uuid) = p["uuid"].as_str() else {
                    continue;
                };
                if known.contains(uuid) {
                    continue;
                }
                order.push((
                    i,
                    Turn {
                        key: uuid.to_string(),
                        uuid: Some(uuid.to_string()),
                        role: "user".into(),
                        text: p["text"].as_str().unwrap_or_default().to_string(),
                        at: e["at"].as_i64(),
                        live: true,
                    },
                ));
            }
            Some("thread.text") if p["kind"].is_null() => {
                let (Some(message), Some(delta)) = (p["message"].as_str(), p["delta"].as_str())
                else {
                    continue;
                };
                if known.contains(message) {
                    continue;
                }
                let slot = *slot_of.entry(message.to_string()).or_insert(i);
                replies
                    .entry(slot)
                    .or_insert_with(|| (message.to_string(), String::new(), e["at"].as_i64()))
                    .1
                    .push_str(delta);
            }
            _ => {}
        }
    }
    for (slot, (message, text, at)) in replies {
        order.push((
            slot,
            Turn {
                key: message,
                uuid: None,
                role: "assistant".into(),
                text,
                at,
                live: true,
            },
        ));
    }
    order.sort_by_key(|(i, _)| *i);
    conversation.turns.extend(order.into_iter().map(|(_, t)| t));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn live_turns_fill_in_what_the_transcript_lacks_and_nothing_shows_twice() {
        let mut c = Conversation {
            thread: "t".into(),
            title: None,
            cwd: None,
            turns: vec![
                Turn {
                    key: "u1".into(),
                    uuid: Some("u1".into()),
                    role: "user".into(),
                    text: "one".into(),
                    at: None,
                    live: false,
                },
                Turn {
                    key: "msg_1".into(),
                    uuid: Some("a1".into()),
                    role: "assistant".into(),
                    text: "reply one".into(),
                    at: None,
                    live: false,
                },
            ],
        };
        let events = vec![
            json!({ "type": "thread.turn", "payload": { "uuid": "u1", "text": "one" } }),
            json!({ "type": "thread.text", "payload": { "message": "msg_1", "delta": "reply " } }),
            json!({ "type": "thread.turn", "payload": { "uuid": "u2", "text": "two" }, "at": 5 }),
            json!({ "type": "thread.text", "payload": { "message": "msg_2", "delta": "reply " } }),
            json!({ "type": "thread.text", "payload": { "message": "msg_2", "kind": "reasoning", "delta": "hmm" } }),
            json!({ "type": "thread.text", "payload": { "message": "msg_2", "delta": "two" } }),
            json!({ "type": "thread.text", "payload": { "message": "msg_2", "done": true } }),
        ];
        merge_live(&mut c, &events);
        let keys: Vec<(&str, &str, bool)> = c
            .turns
            .iter()
            .map(|t| (t.key.as_str(), t.text.as_str(), t.live))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("u1", "one", false),
                ("msg_1", "reply one", false),
                ("u2", "two", true),
                ("msg_2", "reply two", true)
            ]
        );
    }
}
