//! One transcript line, read for what Vyre keeps of it: the words a person and Claude said, the
//! session's title, and where and when. Everything else (attachments, request blobs, bookkeeping)
//! is recognised cheaply and passed over; a line that is not JSON is counted as broken.
//!
//! Shapes read: Claude Code 2.x (`user` and `assistant` lines, one assistant line per content
//! block sharing the API message id, `custom-title` for `/rename`) and older ones (a `user`
//! message whose content is a plain string, `summary` lines with a `leafUuid`).

use serde::Deserialize;
use serde_json::value::RawValue;

/// What a line says.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// Words someone said: a person's prompt (`role: user`) or Claude's text (`role:
    /// assistant`). An assistant message spans several lines with one `message_id`.
    Said(Said),
    /// The session's name (`/rename`, or `initialize.title`).
    Title(String),
    /// An older transcript's summary of the conversation.
    Summary(String),
    /// Where the session ran and which program wrote it, said once for the whole file (a Codex
    /// rollout's first line; Claude Code says it on every line of words instead).
    Place {
        cwd: Option<String>,
        entrypoint: Option<String>,
    },
    /// A line of a known kind that carries nothing Vyre keeps (attachments, tool results,
    /// bookkeeping, a subagent's side chain).
    Passed,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub role: Role,
    /// The line's uuid (for a person's prompt, the uuid the host gave it).
    pub uuid: String,
    /// The API message id of an assistant line (`msg_...`).
    pub message_id: Option<String>,
    pub text: String,
    /// Milliseconds since the epoch, when the line has a timestamp.
    pub at: Option<i64>,
    pub cwd: Option<String>,
    pub session: Option<String>,
    /// `cli` for a terminal, `sdk-ts` and the like for a host such as Vyre.
    pub entrypoint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// Why a line was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    NotJson,
}

/// Line types that never carry words; a line that starts with one is passed over unparsed
/// (request blobs make up most of a transcript's bytes).
pub(super) const PASSED_PREFIXES: &[&[u8]] = &[
    br#"{"type":"api-request"#,
    br#"{"type":"queue-operation""#,
    br#"{"type":"atis-latch""#,
    br#"{"type":"last-prompt""#,
    br#"{"type":"tools-used""#,
    br#"{"type":"cost-state""#,
    br#"{"type":"file-history-"#,
    br#"{"type":"mode""#,
    br#"{"type":"agent-name""#,
];

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default, rename = "isSidechain")]
    sidechain: bool,
    #[serde(default, rename = "isMeta")]
    meta: bool,
    #[serde(default, rename = "isCompactSummary")]
    compact_summary: bool,
    #[serde(default)]
    timestamp: Option<&'a str>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default, rename = "sessionId")]
    session: Option<String>,
    #[serde(default)]
    entrypoint: Option<String>,
    #[serde(default)]
    message: Option<Message<'a>>,
    #[serde(default, rename = "customTitle")]
    custom_title: Option<String>,
    #[serde(default)]
    summary: Option<String>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default)]
    id: Option<String>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

/// Read one line (without its newline).
pub fn parse(bytes: &[u8]) -> Result<Line, Broken> {
    let bytes = bytes.trim_ascii();
    if bytes.is_empty() {
        return Ok(Line::Passed);
    }
    if PASSED_PREFIXES.iter().any(|p| bytes.starts_with(p)) {
        return Ok(Line::Passed);
    }
    // Attachments put `"attachment":{` before their type; they are context, never words.
    let head = &bytes[..bytes.len().min(160)];
    if memchr::memmem::find(head, br#","attachment":{"#).is_some() {
        return Ok(Line::Passed);
    }
    let raw: Raw = serde_json::from_slice(bytes).map_err(|_| Broken::NotJson)?;
    match raw.kind {
        Some("custom-title") => Ok(raw.custom_title.map_or(Line::Passed, Line::Title)),
        Some("summary") => Ok(raw.summary.map_or(Line::Passed, Line::Summary)),
        Some(kind @ ("user" | "assistant")) => {
            if raw.sidechain || raw.meta || raw.compact_summary {
                return Ok(Line::Passed);
            }
            let role = if kind == "user" {
                Role::User
            } else {
                Role::Assistant
            };
            let Some(message) = raw.message else {
                return Ok(Line::Passed);
            };
            let text = message
                .content
                .and_then(|c| serde_json::from_str::<Content>(c.get()).ok())
                .map(|c| words(c, role))
                .unwrap_or_default();
            let (Some(uuid), false) = (raw.uuid, text.trim().is_empty()) else {
                return Ok(Line::Passed);
            };
            Ok(Line::Said(Said {
                role,
                uuid,
                message_id: message.id.filter(|_| role == Role::Assistant),
                text,
                at: raw.timestamp.and_then(parse_time),
                cwd: raw.cwd,
                session: raw.session,
                entrypoint: raw.entrypoint,
            }))
        }
        _ => Ok(Line::Passed),
    }
}

/// The words of a message: its text blocks. A person's line that is only tool results, or a
/// command the CLI ran for them (`<command-name>`, `<local-command-stdout>`), says nothing.
fn words(content: Content, role: Role) -> String {
    let text = match content {
        Content::Text(t) => t,
        Content::Blocks(blocks) => blocks
            .into_iter()
            .filter(|b| b.kind == "text")
            .filter_map(|b| b.text)
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let t = text.trim_start();
    if role == Role::User
        && (t.starts_with("<command-")
            || t.starts_with("<local-command-")
            || t.starts_with("<system-reminder>"))
    {
        return String::new();
    }
    text
}

/// `2026-11-30T12:51:34.220Z` → milliseconds since the epoch (UTC only, as the CLI writes).
pub fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !s.ends_with('Z') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let ms = match s.get(19..20) {
        Some(".") => {
            let frac = s.get(20..s.len() - 1)?;
            let digits: String = frac.chars().take(3).collect();
            format!("{digits:0<3}").parse::<i64>().ok()?
        }
        _ => 0,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(line: &str) -> Said {
        match parse(line.as_bytes()).unwrap() {
            Line::Said(s) => s,
            other => panic!("not said: {other:?}"),
        }
    }

    #[test]
    fn reads_the_current_shapes() {
        let u = said(
            r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":[{"text":"hello there","type":"text"}]},"uuid":"u-1","timestamp":"2026-11-30T12:51:34.220Z","cwd":"/w","sessionId":"s-1","entrypoint":"sdk-ts"}"#,
        );
        assert_eq!(
            (u.role, u.text.as_str(), u.uuid.as_str()),
            (Role::User, "hello there", "u-1")
        );
        assert_eq!(u.at, Some(1_796_043_094_220));
        assert_eq!(u.entrypoint.as_deref(), Some("sdk-ts"));
        let a = said(
            r#"{"parentUuid":"u-1","isSidechain":false,"message":{"content":[{"text":"hi back","type":"text"}],"id":"msg_1","role":"assistant"},"type":"assistant","uuid":"a-1","timestamp":"2026-11-30T12:51:35Z"}"#,
        );
        assert_eq!(
            (a.role, a.message_id.as_deref()),
            (Role::Assistant, Some("msg_1"))
        );
        assert_eq!(
            parse(br#"{"type":"custom-title","customTitle":"My work","sessionId":"s"}"#),
            Ok(Line::Title("My work".into()))
        );
    }

    #[test]
    fn reads_older_shapes() {
        let u = said(
            r#"{"type":"user","message":{"role":"user","content":"a plain string prompt"},"uuid":"u-2","timestamp":"2025-03-01T09:00:00.5Z"}"#,
        );
        assert_eq!(u.text, "a plain string prompt");
        assert_eq!(u.at.map(|t| t % 1000), Some(500));
        assert_eq!(
            parse(br#"{"type":"summary","summary":"Fixing the build","leafUuid":"u-2"}"#),
            Ok(Line::Summary("Fixing the build".into()))
        );
    }

    #[test]
    fn passes_over_what_says_nothing_and_counts_what_is_broken() {
        for passed in [
            r#"{"type":"api-request-blob","sessionId":"s","hash":"h","blob":"..."}"#,
            r#"{"parentUuid":"x","isSidechain":false,"attachment":{"type":"date"},"type":"attachment","uuid":"q"}"#,
            r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"<command-name>/model</command-name>"},"uuid":"m"}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]},"uuid":"r"}"#,
            r#"{"type":"user","isSidechain":true,"message":{"role":"user","content":"subagent prompt"},"uuid":"sc"}"#,
            r#"{"type":"assistant","message":{"id":"msg_2","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]},"uuid":"a-2"}"#,
            r#"{"type":"something-new","x":1}"#,
            r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>done</local-command-stdout>"},"uuid":"c"}"#,
            "",
        ] {
            assert_eq!(parse(passed.as_bytes()), Ok(Line::Passed), "{passed}");
        }
        for broken in ["not json", r#"{"type":"user","message":"#, "\u{0}\u{1}"] {
            assert_eq!(parse(broken.as_bytes()), Err(Broken::NotJson), "{broken}");
        }
    }

    #[test]
    fn times_are_utc_milliseconds() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_time("2000-03-01T00:00:00.001Z"),
            Some(951_868_800_001)
        );
        assert_eq!(parse_time("2026-11-30 12:00:00"), None);
        assert_eq!(parse_time("2026-13-30T12:00:00Z"), None);
    }
}
