//! What vyred pushes, and how a push service is told to handle it. The browser's service worker
//! (ui/src/sw.ts) reads the same shape:
//! - `ask`: `{v, kind, tag, ask, thread, title, body, actions, url}`; `actions` are the
//!   buttons the notification offers (`allow`, `deny`); clicking it opens `url`.
//! - `withdraw`: `{v, kind, tag, ask}`: the ask was answered or closed; the notification goes.
//! - `test`: `{v, kind, tag, title, body, url}`.
//! - `notice`: `{v, kind, tag, title, body, url}`, from another module (`push.notify`: the
//!   Gate's items, the planner's reminders); its withdrawal is a `withdraw` with its tag.
//!
//! An ask and its withdrawal share a Topic (RFC 8030 §5.4), so a push service that still holds
//! the ask replaces it rather than delivering both, and a notification tag, so the device shows
//! one notification per ask.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The largest body sent. A push message carries at most 4096 bytes; encryption adds 103
/// (RFC 8291 §4) and this leaves room for a JSON escape or two more.
pub const MAX_BODY: usize = 3800;
/// How long a push service keeps an ask it could not deliver yet (seconds).
const ASK_TTL: u32 = 12 * 3600;
/// Characters of a command or a question in a notification; the app shows the rest.
const SHOWN: usize = 300;

/// One message for every subscription, with its push-service headers.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub kind: &'static str,
    pub body: Vec<u8>,
    /// Collapses messages for the same thing at the push service.
    pub topic: Option<String>,
    /// `high` wakes a phone at once; `normal` may wait.
    pub urgency: &'static str,
    /// Seconds a push service keeps it for a device that is off.
    pub ttl: u32,
}

/// The Topic for an ask: at most 32 characters of the URL-safe base64 alphabet.
pub fn topic(ask: &str) -> String {
    let digest = Sha256::digest(format!("ask:{ask}").as_bytes());
    B64.encode(digest)[..32].to_string()
}

/// The notification for `ask.raised` (its payload) in `thread`, titled by the thread's title.
pub fn ask(thread: &str, title: Option<&str>, raised: &Value) -> Option<Message> {
    let ask = raised["ask"].as_str()?;
    let kind = raised["kind"].as_str().unwrap_or("tool");
    let from = title
        .filter(|t| !t.trim().is_empty())
        .unwrap_or("A session");
    let destructive = raised["destructive"].as_str();
    let (heading, mut body, actions) = match kind {
        "question" => {
            let question = raised["input"]["questions"][0]["question"]
                .as_str()
                .unwrap_or("Claude has a question for you");
            (
                "A question for you".to_string(),
                shorten(question),
                json!([]),
            )
        }
        "plan" => (
            "A plan to approve".to_string(),
            "Claude wrote a plan and waits for you to read it.".to_string(),
            json!([]),
        ),
        _ => {
            let tool = raised["tool"].as_str().unwrap_or("a tool");
            // What is judged: the command itself, or the file, before the model's own words
            // about it (`summary` is often the call's description).
            let input = &raised["input"];
            let summary = input["command"]
                .as_str()
                .or_else(|| input["file_path"].as_str())
                .or_else(|| input["url"].as_str())
                .or_else(|| raised["summary"].as_str())
                .unwrap_or_default();
            // A call that deserves a second look is answered in the app, where all of it shows;
            // the notification can still refuse it.
            let actions = if destructive.is_some() {
                json!(["deny"])
            } else {
                json!(["allow", "deny"])
            };
            (format!("Allow {tool}?"), shorten(summary), actions)
        }
    };
    if let Some(why) = destructive {
        body = format!("{body}\nCareful: {}", shorten(why));
    }
    body = format!("{}\n{}", body.trim(), shorten(from))
        .trim()
        .to_string();
    let payload = json!({
        "v": 1,
        "kind": "ask",
        "tag": format!("ask:{ask}"),
        "ask": ask,
        "thread": thread,
        "title": heading,
        "body": body,
        "actions": actions,
        "url": format!("/app/t/{}", encode_path(thread)),
    });
    Some(Message {
        kind: "ask",
        body: fit(payload),
        topic: Some(topic(ask)),
        urgency: "high",
        ttl: ASK_TTL,
    })
}

/// The message that takes an ask's notification away (it was answered, or closed).
pub fn withdraw(ask: &str) -> Message {
    let payload = json!({ "v": 1, "kind": "withdraw", "tag": format!("ask:{ask}"), "ask": ask });
    Message {
        kind: "withdraw",
        body: fit(payload),
        topic: Some(topic(ask)),
        urgency: "high",
        ttl: ASK_TTL,
    }
}

/// A notification that says notifications work on this device.
pub fn test() -> Message {
    let payload = json!({
        "v": 1,
        "kind": "test",
        "tag": "test",
        "title": "Vyre",
        "body": "Notifications work on this device.",
        "url": "/app/settings",
    });
    Message {
        kind: "test",
        body: fit(payload),
        topic: None,
        urgency: "normal",
        ttl: 600,
    }
}

/// A module's notice: its tag is the module's own (`notice:<module>:<tag>`), so no module can
/// replace or close another's notification, or an ask's.
pub fn notice(
    module: &str,
    tag: &str,
    title: &str,
    body: &str,
    url: &str,
    urgent: bool,
) -> Message {
    let tag = format!("notice:{module}:{tag}");
    let payload = json!({
        "v": 1,
        "kind": "notice",
        "tag": tag,
        "title": shorten(title),
        "body": body.trim(),
        "url": url,
    });
    Message {
        kind: "notice",
        body: fit(payload),
        topic: Some(tag_topic(&tag)),
        urgency: if urgent { "high" } else { "normal" },
        ttl: ASK_TTL,
    }
}

/// The message that takes a module's notice away.
pub fn withdraw_notice(module: &str, tag: &str) -> Message {
    let tag = format!("notice:{module}:{tag}");
    let payload = json!({ "v": 1, "kind": "withdraw", "tag": tag });
    Message {
        kind: "withdraw",
        body: fit(payload),
        topic: Some(tag_topic(&tag)),
        urgency: "normal",
        ttl: ASK_TTL,
    }
}

/// A Topic for any tag: 32 characters of the URL-safe base64 alphabet.
fn tag_topic(tag: &str) -> String {
    B64.encode(Sha256::digest(tag.as_bytes()))[..32].to_string()
}

/// At most [`SHOWN`] characters, on one line's worth of whitespace.
fn shorten(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= SHOWN {
        return text;
    }
    let mut cut: String = text.chars().take(SHOWN - 1).collect();
    cut.push('…');
    cut
}

/// The payload as bytes within [`MAX_BODY`]: a body that does not fit is cut until it does.
fn fit(mut payload: Value) -> Vec<u8> {
    loop {
        let bytes = payload.to_string().into_bytes();
        if bytes.len() <= MAX_BODY {
            return bytes;
        }
        let body = payload["body"].as_str().unwrap_or_default();
        let body = body.strip_suffix('…').unwrap_or(body).to_string();
        let keep = body.chars().count() / 2;
        if keep == 0 {
            // Nothing left to cut: only an absurd id could get here.
            payload["title"] = json!("Vyre");
            payload["body"] = json!("");
            payload["thread"] = json!(null);
            payload["url"] = json!("/app/needs");
            return payload.to_string().into_bytes();
        }
        payload["body"] = json!(format!("{}…", body.chars().take(keep).collect::<String>()));
    }
}

fn encode_path(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(m: &Message) -> Value {
        serde_json::from_slice(&m.body).unwrap()
    }

    #[test]
    fn a_tool_ask_offers_allow_and_deny_and_opens_its_thread() {
        let raised = json!({ "ask": "a1", "kind": "tool", "tool": "Bash", "summary": "make a file", "input": { "command": "touch x.txt", "description": "make a file" }, "destructive": null });
        let m = ask("t1", Some("Tidy the repo"), &raised).unwrap();
        let p = payload(&m);
        assert_eq!(p["kind"], "ask");
        assert_eq!(p["tag"], "ask:a1");
        assert_eq!(p["title"], "Allow Bash?");
        assert_eq!(p["body"], "touch x.txt\nTidy the repo");
        assert_eq!(p["actions"], json!(["allow", "deny"]));
        assert_eq!(p["url"], "/app/t/t1");
        assert_eq!((m.urgency, m.ttl), ("high", ASK_TTL));
        assert_eq!(m.topic.as_deref(), Some(topic("a1").as_str()));
    }

    #[test]
    fn a_file_edit_shows_its_file_and_other_tools_their_summary() {
        let edit = json!({ "ask": "e", "kind": "tool", "tool": "Write", "summary": "write it", "input": { "file_path": "/w/a.txt", "content": "x" } });
        assert_eq!(
            payload(&ask("t", None, &edit).unwrap())["body"],
            "/w/a.txt\nA session"
        );
        let other = json!({ "ask": "o", "kind": "tool", "tool": "mcp__x__y", "summary": "does y", "input": { "n": 1 } });
        assert_eq!(
            payload(&ask("t", None, &other).unwrap())["body"],
            "does y\nA session"
        );
    }

    #[test]
    fn a_destructive_ask_cannot_be_allowed_from_the_notification() {
        let raised = json!({ "ask": "a2", "kind": "tool", "tool": "Bash", "summary": "rm -rf build", "destructive": "deletes files and folders, with everything in them" });
        let p = payload(&ask("t", None, &raised).unwrap());
        assert_eq!(p["actions"], json!(["deny"]));
        assert_eq!(
            p["body"],
            "rm -rf build\nCareful: deletes files and folders, with everything in them\nA session"
        );
    }

    #[test]
    fn questions_and_plans_open_the_app() {
        let q = json!({ "ask": "a3", "kind": "question", "input": { "questions": [{ "question": "Which colour?" }] } });
        let p = payload(&ask("t", Some("Paint"), &q).unwrap());
        assert_eq!(
            (p["title"].as_str(), p["body"].as_str()),
            (Some("A question for you"), Some("Which colour?\nPaint"))
        );
        assert_eq!(p["actions"], json!([]));
        let plan = payload(&ask("t", None, &json!({ "ask": "a4", "kind": "plan" })).unwrap());
        assert_eq!(plan["title"], "A plan to approve");
        assert!(
            ask("t", None, &json!({ "kind": "tool" })).is_none(),
            "no ask id, no message"
        );
    }

    #[test]
    fn an_ask_and_its_withdrawal_collapse_under_one_topic_and_tag() {
        let raised = json!({ "ask": "a5", "kind": "tool", "tool": "Bash", "summary": "ls" });
        let (a, w) = (ask("t", None, &raised).unwrap(), withdraw("a5"));
        assert_eq!(a.topic, w.topic);
        assert_eq!(payload(&a)["tag"], payload(&w)["tag"]);
        let t = topic("a5");
        assert_eq!(t.len(), 32);
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_ne!(topic("a5"), topic("a6"));
    }

    #[test]
    fn a_huge_command_is_cut_to_fit_one_push_message() {
        let raised = json!({ "ask": "a7", "kind": "tool", "tool": "Bash", "summary": "x".repeat(100_000), "destructive": "y".repeat(100_000) });
        let m = ask("t", Some(&"z".repeat(100_000)), &raised).unwrap();
        assert!(m.body.len() <= MAX_BODY, "{}", m.body.len());
        assert!(payload(&m)["body"].as_str().unwrap().contains('…'));
        // Even an absurd thread id still fits.
        let m = ask(&"q\"".repeat(5000), None, &raised).unwrap();
        assert!(m.body.len() <= 4096 - 103, "{}", m.body.len());
    }

    #[test]
    fn a_thread_id_is_escaped_in_the_url() {
        let p = payload(&ask("a/b?c", None, &json!({ "ask": "a8", "kind": "plan" })).unwrap());
        assert_eq!(p["url"], "/app/t/a%2Fb%3Fc");
    }
}
