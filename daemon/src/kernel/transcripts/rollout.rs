//! Codex's rollout files, read for what recall keeps of them (issue 28, ADR 0038): Codex writes
//! each thread to `<codex home>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, one
//! JSON object per line, `{timestamp, type, payload}`. Read here:
//!
//! - `session_meta` (the first line): the thread's folder and which program wrote it
//!   (`originator`: Codex's own terminal, or a host such as Vyre), as [`Line::Place`];
//! - `event_msg` of type `item_completed` with a `UserMessage` or `AgentMessage` item: the
//!   words a person and Codex said, each once, with the item's id. A message Vyre sent names
//!   Vyre's thread in its client id (`vyre:<thread>:<uuid>`, `sessions::codex`): its
//!   [`Said::session`] is that thread, so recall files the rollout under it.
//!
//! Everything else (the model's full input as `response_item`s, which repeat the words among
//! Codex's own context; tool calls; token counts; settings) is passed over. Best effort, as for
//! Claude Code's transcripts: a line that is not JSON is broken, one of an unknown shape says
//! nothing.

use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::line::{Broken, Line, Role, Said, parse_time};

/// The thread id of a rollout file (`rollout-2026-12-05T09-18-12-<uuid>.jsonl`), if `path`
/// is named as one.
pub fn session_of(path: &Path) -> Option<String> {
    if path.extension()? != "jsonl" {
        return None;
    }
    let stem = path.file_stem()?.to_str()?;
    let rest = stem.strip_prefix("rollout-")?;
    // The id is the last 36 characters: a UUID, hex digits and four dashes.
    let id = rest.get(rest.len().checked_sub(36)?..)?;
    let shaped = id.len() == 36
        && id.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        });
    shaped.then(|| id.to_ascii_lowercase())
}

/// Codex's rollout of thread `id` under HOME `home` (`~/.codex/sessions/YYYY/MM/DD/`), if it
/// has one there. Links are not followed into (a planted one is not a rollout).
pub fn find(home: &Path, id: &str) -> Option<std::path::PathBuf> {
    fn entries(dir: &Path) -> impl Iterator<Item = std::fs::DirEntry> {
        std::fs::read_dir(dir).into_iter().flatten().flatten()
    }
    let dirs = |dir: &Path| {
        entries(dir)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect::<Vec<_>>()
    };
    let root = super::codex_sessions_dir(home);
    dirs(&root)
        .iter()
        .flat_map(|y| dirs(y))
        .flat_map(|m| dirs(&m))
        .flat_map(|d| entries(&d).collect::<Vec<_>>())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .find(|f| session_of(f).as_deref() == Some(id))
}

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(default)]
    timestamp: Option<&'a str>,
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    originator: Option<String>,
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    item: Option<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
    /// The host's id for a message (Vyre's: `vyre:<thread>:<uuid>`).
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    content: Vec<Part>,
}

#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

/// The entrypoint recall keeps for a Codex thread: `codex:<originator>` (`codex:vyre` for one
/// Vyre ran, `codex:codex_cli_rs` for Codex's own terminal).
pub fn entrypoint(originator: Option<&str>) -> String {
    format!("codex:{}", originator.unwrap_or("unknown"))
}

/// Read one line (without its newline).
pub fn parse(bytes: &[u8]) -> Result<Line, Broken> {
    let bytes = bytes.trim_ascii();
    if bytes.is_empty() {
        return Ok(Line::Passed);
    }
    let raw: Raw = serde_json::from_slice(bytes).map_err(|_| Broken::NotJson)?;
    let Some(payload) = raw.payload else {
        return Ok(Line::Passed);
    };
    match raw.kind {
        Some("session_meta") => {
            let Ok(meta) = serde_json::from_str::<Meta>(payload.get()) else {
                return Ok(Line::Passed);
            };
            Ok(Line::Place {
                cwd: meta.cwd,
                entrypoint: Some(entrypoint(meta.originator.as_deref())),
            })
        }
        Some("event_msg") => {
            // Most events are not an item's end; look before parsing the whole payload.
            if memchr::memmem::find(payload.get().as_bytes(), b"\"item_completed\"").is_none() {
                return Ok(Line::Passed);
            }
            let Ok(event) = serde_json::from_str::<Event>(payload.get()) else {
                return Ok(Line::Passed);
            };
            let (Some("item_completed"), Some(item)) = (event.kind.as_deref(), event.item) else {
                return Ok(Line::Passed);
            };
            let role = match item.kind.as_deref() {
                Some("UserMessage") => Role::User,
                Some("AgentMessage") => Role::Assistant,
                _ => return Ok(Line::Passed),
            };
            let text = item
                .content
                .into_iter()
                .filter(|p| matches!(p.kind.as_deref(), Some("text" | "Text")))
                .filter_map(|p| p.text)
                .collect::<Vec<_>>()
                .join("\n");
            let (Some(id), false) = (item.id, text.trim().is_empty()) else {
                return Ok(Line::Passed);
            };
            let owner = item
                .client_id
                .as_deref()
                .and_then(|c| c.strip_prefix("vyre:"))
                .and_then(|c| c.split_once(':'))
                .map(|(thread, _)| thread.to_string())
                .filter(|t| !t.is_empty());
            Ok(Line::Said(Said {
                role,
                message_id: (role == Role::Assistant).then(|| id.clone()),
                uuid: id,
                text,
                at: raw.timestamp.and_then(parse_time),
                cwd: None,
                session: owner,
                entrypoint: None,
            }))
        }
        _ => Ok(Line::Passed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_finds_its_rollout_in_a_home() {
        let home = std::env::temp_dir().join(format!("vyre-rollout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let id = "01a2457f-2e49-7ec2-8313-a4f65484832a";
        let day = home.join(".codex/sessions/2026/12/05");
        std::fs::create_dir_all(&day).unwrap();
        let file = day.join(format!("rollout-2026-12-05T09-18-12-{id}.jsonl"));
        std::fs::write(&file, "").unwrap();
        assert_eq!(find(&home, id), Some(file));
        assert_eq!(find(&home, "01a2457f-2e49-7ec2-8313-a4f65484832b"), None);
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_rollout_is_named_by_its_thread() {
        let id = "01a2457f-2e49-7ec2-8313-a4f65484832a";
        let name = format!("/h/.codex/sessions/2026/12/05/rollout-2026-12-05T09-18-12-{id}.jsonl");
        assert_eq!(session_of(Path::new(&name)).as_deref(), Some(id));
        assert_eq!(session_of(Path::new(&format!("/h/{id}.jsonl"))), None);
        assert_eq!(
            session_of(Path::new("/h/rollout-2026-12-05T09-18-12-not-an-id.jsonl")),
            None
        );
        assert_eq!(
            session_of(Path::new(&format!("/h/rollout-x-{id}.txt"))),
            None
        );
    }

    /// What the real Codex 0.171.0 wrote for one turn through Vyre (against the fake Responses
    /// API), trimmed to the lines of each kind.
    #[test]
    fn the_real_clis_rollout_reads_as_a_place_a_prompt_and_a_reply() {
        let text = include_str!("../../../../tests/fixtures/codex/rollout.jsonl");
        let lines: Vec<Line> = text
            .lines()
            .map(|l| parse(l.as_bytes()).unwrap())
            .filter(|l| *l != Line::Passed)
            .collect();
        assert_eq!(
            lines[0],
            Line::Place {
                cwd: Some("/w/project".into()),
                entrypoint: Some("codex:vyre".into())
            }
        );
        let said: Vec<(Role, &str)> = lines[1..]
            .iter()
            .map(|l| match l {
                Line::Said(s) => (s.role, s.text.as_str()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            said,
            [
                (Role::User, "hello there"),
                (Role::Assistant, "reply to [hello there]")
            ]
        );
        match &lines[2] {
            Line::Said(s) => {
                assert!(
                    s.message_id
                        .as_deref()
                        .is_some_and(|m| m.starts_with("msg_fake_"))
                );
                assert!(s.at.is_some());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parse(b"not json"), Err(Broken::NotJson));
        // A message Vyre sent names Vyre's thread.
        let sent = r#"{"timestamp":"2026-12-05T09:26:22.639Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"u1","client_id":"vyre:t-42:m-1","content":[{"type":"text","text":"hi"}]}}}"#;
        match parse(sent.as_bytes()).unwrap() {
            Line::Said(s) => assert_eq!(s.session.as_deref(), Some("t-42")),
            other => panic!("{other:?}"),
        }
    }
}
