//! A Codex rollout read whole as transcript entries, for a thread's timeline (issue 28): what a
//! session of Codex's own terminal said and ran before Vyre adopted it, shown in Vyre's chat as
//! a Claude Code terminal's history is ([`super::entry`]).
//!
//! Read from the `event_msg` lines of type `item_completed` (see [`super::rollout`]): a
//! `UserMessage` is the person's prompt, an `AgentMessage` Codex's text, a `CommandExecution`
//! a Bash call and its result, a `FileChange` an Edit, an MCP or dynamic tool call the tool's
//! call. A message Vyre sent names its own uuid in its client id (`vyre:<thread>:<uuid>`), so
//! it meets the item Vyre's events made of it; what a turn Vyre started said is Vyre's own
//! (`terminal: false`), the rest a terminal's. Rollouts have no branches: each entry follows the
//! one before. Best effort: an unknown item says nothing.

use std::collections::HashSet;
use std::io::BufRead;
use std::path::Path;

use serde_json::{Value, json};

use super::entry::{Block, Entry, ToolResult, What};

/// Read the rollout at `path` (opened without following links, see [`super::open`]); an
/// unreadable line says nothing.
pub fn read_path(path: &Path, cap: usize) -> std::io::Result<Vec<Entry>> {
    let file = super::open(path)?;
    Ok(read(
        std::io::BufReader::with_capacity(64 * 1024, file),
        cap,
    ))
}

/// Read a rollout's lines; tool outputs are kept up to `cap` bytes, with their whole size.
pub fn read(reader: impl BufRead, cap: usize) -> Vec<Entry> {
    let mut out: Vec<Entry> = vec![];
    // The turns a message of Vyre's began: what they said is Vyre's own.
    let mut vyres: HashSet<String> = HashSet::new();
    for raw in completed(reader) {
        let payload = &raw["payload"];
        let at = raw["timestamp"].as_str().and_then(super::line::parse_time);
        let turn = payload["turn_id"].as_str().unwrap_or_default();
        let item = &payload["item"];
        let Some(id) = item["id"].as_str().filter(|i| !i.is_empty()) else {
            continue;
        };
        if item["type"] == "UserMessage"
            && let Some(uuid) = vyre_uuid(item)
        {
            vyres.insert(turn.to_string());
            push(&mut out, uuid, at, false, prompt(item));
            continue;
        }
        let terminal = !vyres.contains(turn);
        match item["type"].as_str().unwrap_or_default() {
            "UserMessage" => push(&mut out, id.into(), at, terminal, prompt(item)),
            "AgentMessage" => {
                let text = text_of(item);
                if !text.trim().is_empty() {
                    let blocks = vec![Block::Text { index: 0, text }];
                    let what = What::Blocks {
                        message: id.into(),
                        blocks,
                    };
                    push(&mut out, id.into(), at, terminal, what);
                }
            }
            kind => {
                let Some((name, input, result)) = tool(kind, item, cap) else {
                    continue;
                };
                let call = Block::ToolUse {
                    id: id.into(),
                    name,
                    input,
                };
                let what = What::Blocks {
                    message: id.into(),
                    blocks: vec![call],
                };
                push(&mut out, id.into(), at, terminal, what);
                let result = ToolResult {
                    call: id.into(),
                    ..result
                };
                push(
                    &mut out,
                    format!("{id}:result"),
                    at,
                    terminal,
                    What::Results(vec![result]),
                );
            }
        }
    }
    out
}

/// The turn message `uuid` began in the rollout at `path`: a message Vyre sent, by the uuid in
/// its client id, or one of a terminal's, by its item id (the timeline's uuid for it).
pub fn turn_of(path: &Path, uuid: &str) -> Option<String> {
    let file = super::open(path).ok()?;
    let reader = std::io::BufReader::with_capacity(64 * 1024, file);
    for raw in completed(reader) {
        let (payload, item) = (&raw["payload"], &raw["payload"]["item"]);
        if item["type"] != "UserMessage" {
            continue;
        }
        let said = vyre_uuid(item).or_else(|| item["id"].as_str().map(String::from));
        if said.as_deref() == Some(uuid) {
            return payload["turn_id"].as_str().map(String::from);
        }
    }
    None
}

/// A rollout's `item_completed` events, whole lines (`{timestamp, type, payload}`); the rest
/// is passed over, most lines without being parsed.
fn completed(reader: impl BufRead) -> impl Iterator<Item = Value> {
    reader
        .split(b'\n')
        .map_while(Result::ok)
        .filter(|line| memchr::memmem::find(line, b"\"item_completed\"").is_some())
        .filter_map(|line| serde_json::from_slice::<Value>(&line).ok())
        .filter(|raw| raw["type"] == "event_msg" && raw["payload"]["type"] == "item_completed")
}

fn push(out: &mut Vec<Entry>, uuid: String, at: Option<i64>, terminal: bool, what: What) {
    let parent = out.last().and_then(|e| e.uuid.clone());
    out.push(Entry {
        uuid: Some(uuid),
        parent,
        at,
        terminal,
        what,
    });
}

/// The uuid of a message Vyre sent (its client id `vyre:<thread>:<uuid>`).
fn vyre_uuid(item: &Value) -> Option<String> {
    let (_, uuid) = item["client_id"]
        .as_str()?
        .strip_prefix("vyre:")?
        .split_once(':')?;
    (!uuid.is_empty()).then(|| uuid.to_string())
}

fn text_of(item: &Value) -> String {
    let parts = item["content"].as_array().into_iter().flatten();
    parts
        .filter(|p| matches!(p["type"].as_str(), Some("text" | "Text")))
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn prompt(item: &Value) -> What {
    let images = item["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            p["type"]
                .as_str()
                .is_some_and(|t| t.to_ascii_lowercase().contains("image"))
        })
        .count() as u32;
    What::Prompt {
        text: text_of(item),
        images,
    }
}

/// A tool item as Claude Code's tool: its name, input, and its result (without the call's id).
fn tool(kind: &str, item: &Value, cap: usize) -> Option<(String, Value, ToolResult)> {
    let status = item["status"].as_str().unwrap_or("completed");
    let (name, input, output, failed) = match kind {
        "CommandExecution" => {
            // What the model asked for, not Codex's `/bin/bash -lc` around it.
            let parsed = item["parsed_cmd"].as_array().filter(|p| p.len() == 1);
            let command = match parsed.and_then(|p| p[0]["cmd"].as_str()) {
                Some(cmd) => cmd.to_string(),
                None => match item["command"].as_array() {
                    Some(words) => {
                        let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                        match words.as_slice() {
                            [_, "-lc" | "-c", script] => script.to_string(),
                            all => all.join(" "),
                        }
                    }
                    None => item["command"].as_str().unwrap_or_default().to_string(),
                },
            };
            let exit = item["exit_code"].as_i64();
            let said = item["aggregated_output"].as_str().unwrap_or_default();
            // As Claude Code says a failed command's status, which the timeline reads.
            let output = match exit {
                Some(code) if code != 0 => format!("Exit code {code}\n{said}"),
                _ => said.to_string(),
            };
            let failed = exit.is_some_and(|c| c != 0);
            (
                "Bash".to_string(),
                json!({ "command": command }),
                output,
                failed,
            )
        }
        "FileChange" => {
            let paths: Vec<String> = match &item["changes"] {
                Value::Object(by_path) => by_path.keys().cloned().collect(),
                Value::Array(changes) => changes
                    .iter()
                    .filter_map(|c| c["path"].as_str().map(String::from))
                    .collect(),
                _ => vec![],
            };
            let first = paths.first().cloned().unwrap_or_default();
            let output = paths
                .iter()
                .map(|p| format!("edited {p}"))
                .collect::<Vec<_>>()
                .join("\n");
            let input = json!({ "file_path": first, "changes": item["changes"] });
            ("Edit".to_string(), input, output, false)
        }
        "McpToolCall" | "DynamicToolCall" => {
            let server = match kind {
                "DynamicToolCall" => "vyre",
                _ => item["server"].as_str().unwrap_or("mcp"),
            };
            let name = format!("mcp__{server}__{}", item["tool"].as_str().unwrap_or("tool"));
            let output = match &item["result"] {
                Value::Null => item["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                result => result.to_string(),
            };
            let failed = !item["error"].is_null() || item["success"] == false;
            (name, item["arguments"].clone(), output, failed)
        }
        _ => return None,
    };
    let bytes = output.len() as u64;
    let mut kept = output;
    if kept.len() > cap {
        let mut end = cap;
        while !kept.is_char_boundary(end) {
            end -= 1;
        }
        kept.truncate(end);
    }
    Some((
        name,
        input,
        ToolResult {
            call: String::new(),
            output: kept,
            bytes,
            failed: failed || matches!(status, "failed"),
            interrupted: status == "interrupted",
            asked: false,
            refused: status == "declined",
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TERMINAL: &str = r#"{"timestamp":"2026-12-05T09:26:22.584Z","type":"session_meta","payload":{"id":"t1","cwd":"/w"}}
{"timestamp":"2026-12-05T09:26:22.639Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t1","turn_id":"turn-1","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"run it"},{"type":"image","url":"data:"}]}}}
{"timestamp":"2026-12-05T09:26:23.000Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t1","turn_id":"turn-1","item":{"type":"CommandExecution","id":"call_1","command":["/bin/bash","-lc","echo hello"],"parsed_cmd":[{"type":"unknown","cmd":"echo hello"}],"status":"completed","aggregated_output":"hello\n","exit_code":0}}}
{"timestamp":"2026-12-05T09:26:23.100Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t1","turn_id":"turn-1","item":{"type":"CommandExecution","id":"call_2","command":["/bin/bash","-lc","false"],"status":"completed","aggregated_output":"","exit_code":1}}}
{"timestamp":"2026-12-05T09:26:24.000Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t1","turn_id":"turn-1","item":{"type":"AgentMessage","id":"msg_1","content":[{"type":"Text","text":"it said hello"}]}}}
not json
{"timestamp":"2026-12-05T09:27:00.000Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t1","turn_id":"turn-2","item":{"type":"UserMessage","id":"u2","client_id":"vyre:t1:m-2","content":[{"type":"text","text":"from vyre"}]}}}
{"timestamp":"2026-12-05T09:27:01.000Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t1","turn_id":"turn-2","item":{"type":"AgentMessage","id":"msg_2","content":[{"type":"Text","text":"to vyre"}]}}}
{"timestamp":"2026-12-05T09:27:02.000Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t1","turn_id":"turn-2","item":{"type":"Reasoning","id":"r1"}}}
"#;

    #[test]
    fn a_terminals_rollout_reads_as_its_prompts_commands_and_answers() {
        let entries = read(TERMINAL.as_bytes(), 1024);
        let uuids: Vec<&str> = entries.iter().filter_map(|e| e.uuid.as_deref()).collect();
        assert_eq!(
            uuids,
            [
                "u1",
                "call_1",
                "call_1:result",
                "call_2",
                "call_2:result",
                "msg_1",
                "m-2",
                "msg_2"
            ]
        );
        assert_eq!(
            entries[0].what,
            What::Prompt {
                text: "run it".into(),
                images: 1
            }
        );
        assert!(entries[0].terminal && entries[0].parent.is_none());
        assert_eq!(
            entries[1].parent.as_deref(),
            Some("u1"),
            "one after another"
        );
        match &entries[1].what {
            What::Blocks { blocks, .. } => assert_eq!(
                blocks[0],
                Block::ToolUse {
                    id: "call_1".into(),
                    name: "Bash".into(),
                    input: json!({ "command": "echo hello" })
                }
            ),
            other => panic!("{other:?}"),
        }
        match (&entries[2].what, &entries[4].what) {
            (What::Results(ok), What::Results(failed)) => {
                assert_eq!(
                    (ok[0].call.as_str(), ok[0].output.as_str(), ok[0].failed),
                    ("call_1", "hello\n", false)
                );
                // Without its parsed words, the command is what `bash -lc` was given; a failure
                // says its exit code as Claude Code's Bash does.
                assert_eq!(
                    (failed[0].output.as_str(), failed[0].failed),
                    ("Exit code 1\n", true)
                );
            }
            other => panic!("{other:?}"),
        }
        // A turn Vyre began is Vyre's own, its message under Vyre's uuid.
        assert!(!entries[6].terminal && !entries[7].terminal);
        assert!(entries[5].terminal);
    }

    #[test]
    fn a_long_output_is_cut_on_a_character_with_its_whole_size() {
        let line = r#"{"type":"event_msg","payload":{"type":"item_completed","turn_id":"x","item":{"type":"CommandExecution","id":"c","command":"seq","status":"completed","aggregated_output":"ééééé","exit_code":0}}}"#;
        let entries = read(line.as_bytes(), 3);
        match &entries[1].what {
            What::Results(r) => assert_eq!((r[0].output.as_str(), r[0].bytes), ("é", 10)),
            other => panic!("{other:?}"),
        }
    }
}
