//! The timeline's items: one per thing that happened in a thread, in the shape every surface
//! draws (docs/api.md, "The timeline"). Keys are stable: a person's message is keyed by its
//! uuid, Claude's words by the API message and its block, a tool call by its id, an ask by its
//! id, a notice by the event or transcript line that made it; so a reload, another browser and
//! the live stream all land on the same item.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bytes of a tool's output an item carries; the rest is fetched with `threads.output`.
pub const OUTPUT_CAP: usize = 8 * 1024;
/// Bytes of one string of a tool's input an item carries.
pub const INPUT_STRING_CAP: usize = 8 * 1024;
/// An item, as JSON, fits an event (64 KiB) with room for the envelope.
pub const ITEM_CAP: usize = 56 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Item {
    User(User),
    Assistant(Text),
    Reasoning(Text),
    Tool(Tool),
    Ask(Ask),
    Notice(Notice),
}

/// A message to Claude: the person's, steered into a turn, waited in the queue, Vyre's own
/// (`internal`, hidden by default) or typed in a terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct User {
    pub key: String,
    pub at: i64,
    pub uuid: String,
    pub text: String,
    /// `person`, `steer`, `queued`, `internal` or `terminal`.
    pub via: String,
    /// How many images went with the words.
    #[serde(default)]
    pub images: u32,
}

/// Claude's words (`assistant`) or thinking (`reasoning`): one content block of one API message,
/// as markdown source. `done` is false while it streams (`thread.text` deltas append to it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Text {
    pub key: String,
    pub at: i64,
    pub message: String,
    pub text: String,
    pub done: bool,
    /// The text is longer than an event holds: this item (in a `thread.item`) carries its start
    /// only; `threads.timeline` has all of it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
}

/// A tool call, with what it was given and what it gave back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub key: String,
    pub at: i64,
    pub call: String,
    /// The Task/Agent call this one runs inside (a subagent's work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call: Option<String>,
    pub name: String,
    /// The tool's input (each string at most 8 KiB; credentials masked).
    pub input: Value,
    #[serde(default, skip_serializing_if = "is_false")]
    pub input_truncated: bool,
    /// What a row says in one line: Bash's command, a file, a pattern, a URL.
    pub summary: String,
    /// `running`, `completed`, `failed`, `denied` or `interrupted`.
    pub status: String,
    /// The start of what it gave back (at most 8 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The whole output's size, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_truncated: Option<bool>,
    /// A command's exit status (Bash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// It ran without asking anyone (allowed by a rule or the mode).
    pub auto: bool,
}

/// A permission question or AskUserQuestion, open or answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ask {
    pub key: String,
    pub at: i64,
    pub ask: String,
    /// `tool`, `question` (AskUserQuestion) or `plan` (ExitPlanMode).
    pub ask_kind: String,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    pub summary: String,
    pub input: Value,
    /// AskUserQuestion's questions with their options (empty for a permission).
    pub questions: Value,
    /// `open`, `answered` or `cancelled`.
    pub status: String,
    /// `allow`, `deny`, `always` or `cancelled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The chosen options, by question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Value>,
    /// What the person told Claude with a deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What "always" would write (when the ask says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Value>,
    /// Why the call deserves a second look (it deletes or discards something), when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<String>,
}

/// A line for the reader: an interrupt, a retry, an error in words, a rewind, a fallback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Notice {
    pub key: String,
    pub at: i64,
    /// `info`, `warn` or `error`.
    pub level: String,
    /// What kind of notice: `interrupted`, `restarted`, `retrying`, `retried`, `api_error`,
    /// `rate_limited`, `auth`, `overloaded`, `exited`, `budget`, `turn_failed`, `start_failed`,
    /// `denied`, `rewound`, `stopped`, `compacted`, `notice`.
    pub code: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    /// The turn can be tried again (the surface offers Retry: the last message again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Retry {
    pub attempt: u64,
    pub max: u64,
    pub delay_ms: u64,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Item {
    pub fn key(&self) -> &str {
        match self {
            Item::User(u) => &u.key,
            Item::Assistant(t) | Item::Reasoning(t) => &t.key,
            Item::Tool(t) => &t.key,
            Item::Ask(a) => &a.key,
            Item::Notice(n) => &n.key,
        }
    }

    pub fn at(&self) -> i64 {
        match self {
            Item::User(u) => u.at,
            Item::Assistant(t) | Item::Reasoning(t) => t.at,
            Item::Tool(t) => t.at,
            Item::Ask(a) => a.at,
            Item::Notice(n) => n.at,
        }
    }

    /// Words still streaming into it: a turn's end closes it.
    pub fn is_open_text(&self) -> bool {
        matches!(self, Item::Assistant(t) | Item::Reasoning(t) if !t.done)
    }

    /// The item as JSON for the store and for events: every string masked (`redact::mask`), so
    /// no credential a tool printed reaches a screen, and cut to fit an event.
    pub fn to_clean_json(&self) -> Value {
        let value = serde_json::to_value(self).expect("an item always serializes");
        crate::modules::sessions::switchboard::clean_value(&value)
    }

    /// This item cut to fit an event (`ITEM_CAP`): a long text keeps its start and says so.
    pub fn fitted(&self) -> Item {
        let size = serde_json::to_string(self).map(|s| s.len()).unwrap_or(0);
        if size <= ITEM_CAP {
            return self.clone();
        }
        let mut item = self.clone();
        match &mut item {
            Item::Assistant(t) | Item::Reasoning(t) => {
                let over = size - ITEM_CAP;
                let keep = t.text.len().saturating_sub(over + 64);
                t.text = cut(&t.text, keep).0;
                t.truncated = true;
            }
            Item::Tool(t) => {
                t.output = t.output.take().map(|o| cut(&o, OUTPUT_CAP / 2).0);
                t.input = cap_strings(&t.input, 1024).0;
                t.input_truncated = true;
            }
            Item::User(u) => u.text = cut(&u.text, ITEM_CAP / 2).0,
            Item::Ask(a) => a.input = cap_strings(&a.input, 1024).0,
            Item::Notice(n) => n.text = cut(&n.text, 4096).0,
        }
        item
    }
}

/// `s` cut to at most `max` bytes on a character boundary; whether it was cut.
pub fn cut(s: &str, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s.to_string(), false);
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    (s[..end].to_string(), true)
}

/// Every string in `v` cut to `max` bytes; whether any was.
pub fn cap_strings(v: &Value, max: usize) -> (Value, bool) {
    match v {
        Value::String(s) => {
            let (s, cut) = cut(s, max);
            (Value::String(s), cut)
        }
        Value::Array(items) => {
            let mut any = false;
            let out = items
                .iter()
                .map(|i| {
                    let (v, c) = cap_strings(i, max);
                    any |= c;
                    v
                })
                .collect();
            (Value::Array(out), any)
        }
        Value::Object(map) => {
            let mut any = false;
            let out = map
                .iter()
                .map(|(k, v)| {
                    let (v, c) = cap_strings(v, max);
                    any |= c;
                    (k.clone(), v)
                })
                .collect();
            (Value::Object(out), any)
        }
        other => (other.clone(), false),
    }
}

/// The key of one content block of an API message (text or thinking).
pub fn text_key(message: &str, block: u64) -> String {
    format!("m:{message}:{block}")
}

/// The key of a tool call.
pub fn tool_key(call: &str) -> String {
    format!("tool:{call}")
}

/// The key of an ask.
pub fn ask_key(ask: &str) -> String {
    format!("ask:{ask}")
}

/// What a tool row says in one line: the command itself for Bash (not its description), the
/// file, the pattern, the URL; else the provider's own summary.
pub fn summary_of(name: &str, input: &Value, fallback: &str) -> String {
    let field = |k: &str| input[k].as_str().filter(|s| !s.trim().is_empty());
    let found = match name {
        "Bash" => field("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path"))
        }
        "Glob" | "Grep" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description").or_else(|| field("prompt")),
        _ => None,
    };
    let text = found.unwrap_or(fallback);
    let line = text.lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(200).collect();
    if line.chars().count() > 200 || text.lines().nth(1).is_some() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_serialize_in_the_shape_surfaces_read() {
        let tool = Item::Tool(Tool {
            key: tool_key("toolu_1"),
            at: 5,
            call: "toolu_1".into(),
            parent_call: None,
            name: "Bash".into(),
            input: json!({"command": "ls"}),
            input_truncated: false,
            summary: "ls".into(),
            status: "completed".into(),
            output: Some("a\nb".into()),
            output_bytes: Some(3),
            output_truncated: Some(false),
            exit: Some(0),
            duration_ms: Some(12),
            auto: true,
        });
        let v = serde_json::to_value(&tool).unwrap();
        assert_eq!(v["kind"], "tool");
        assert_eq!(v["key"], "tool:toolu_1");
        assert!(v.get("parent_call").is_none(), "absent, not null");
        assert!(v.get("input_truncated").is_none());
        let back: Item = serde_json::from_value(v).unwrap();
        assert_eq!(back, tool);
        let user: Item = serde_json::from_value(
            json!({"kind": "user", "key": "u", "at": 1, "uuid": "u", "text": "hi", "via": "person"}),
        )
        .unwrap();
        assert!(matches!(user, Item::User(User { images: 0, .. })));
    }

    #[test]
    fn bash_rows_show_the_command_and_long_things_are_cut() {
        let input =
            json!({"command": "cargo test -p vyre\necho done", "description": "run the tests"});
        assert_eq!(
            summary_of("Bash", &input, "run the tests"),
            "cargo test -p vyre…"
        );
        assert_eq!(summary_of("Mystery", &json!({}), "said"), "said");
        assert_eq!(cut("héllo", 2), ("h".to_string(), true));
        let (v, any) = cap_strings(&json!({"a": ["x".repeat(10)], "n": 1}), 4);
        assert_eq!(v, json!({"a": ["xxxx"], "n": 1}));
        assert!(any);
    }

    #[test]
    fn an_item_too_big_for_an_event_is_fitted() {
        let long = Item::Assistant(Text {
            key: "m:x:0".into(),
            at: 0,
            message: "x".into(),
            text: "é".repeat(40_000),
            done: true,
            truncated: false,
        });
        let fitted = long.fitted();
        assert!(serde_json::to_string(&fitted).unwrap().len() <= ITEM_CAP);
        assert!(matches!(
            fitted,
            Item::Assistant(Text {
                truncated: true,
                ..
            })
        ));
    }
}
