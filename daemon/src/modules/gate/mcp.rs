//! MCP tools in the Gate's table: by the words of their names (`post_message`, `sendEmail`,
//! `create-payment`), or by an input that addresses someone (a recipient or channel and a body).

use serde_json::Value;

use super::classify::{Held, Kind};

/// Words in an MCP tool's name that say it sends, spends or deletes.
const MCP_WORDS: &[(&str, Kind)] = &[
    ("send", Kind::Send),
    ("post", Kind::Send),
    ("publish", Kind::Send),
    ("reply", Kind::Send),
    ("comment", Kind::Send),
    ("message", Kind::Send),
    ("email", Kind::Send),
    ("mail", Kind::Send),
    ("tweet", Kind::Send),
    ("share", Kind::Send),
    ("invite", Kind::Send),
    ("submit", Kind::Send),
    ("merge", Kind::Send),
    ("push", Kind::Send),
    ("pay", Kind::Spend),
    ("payment", Kind::Spend),
    ("purchase", Kind::Spend),
    ("buy", Kind::Spend),
    ("charge", Kind::Spend),
    ("transfer", Kind::Spend),
    ("checkout", Kind::Spend),
    ("order", Kind::Spend),
    ("refund", Kind::Spend),
    ("delete", Kind::Delete),
    ("remove", Kind::Delete),
    ("destroy", Kind::Delete),
    ("trash", Kind::Delete),
    ("purge", Kind::Delete),
    ("drop", Kind::Delete),
];

/// An MCP tool (`mcp__<server>__<tool>`) whose name says it sends, spends or deletes, or whose
/// input is a message to someone (a recipient or channel and a body).
pub fn mcp(tool: &str, input: &Value) -> Option<Held> {
    let rest = tool.strip_prefix("mcp__")?;
    let (server, name) = rest.split_once("__").unwrap_or(("", rest));
    // Vyre's own tools go through vyred's fence and the person-only rules.
    if server == "vyre" {
        return None;
    }
    let words = name_words(name);
    let by_name = words
        .iter()
        .find_map(|w| MCP_WORDS.iter().find(|(m, _)| m == w).map(|(_, k)| *k));
    let addressed = [
        "to",
        "recipient",
        "recipients",
        "channel",
        "chat_id",
        "email",
        "phone",
    ]
    .iter()
    .any(|k| !input[k].is_null())
        && ["body", "text", "message", "content", "subject", "html"]
            .iter()
            .any(|k| !input[k].is_null());
    let kind = by_name.or(addressed.then_some(Kind::Send))?;
    Some(Held {
        kind,
        rule: "mcp".into(),
        what: format!("the MCP tool {server}.{name}"),
        words: vec![],
    })
}

/// `sendMessage`, `send_message`, `send-message` → `send`, `message`.
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '.' {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}
