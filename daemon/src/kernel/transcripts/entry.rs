//! A transcript read whole, for a thread's timeline: the person's prompts, Claude's text,
//! thinking and tool calls with their inputs, the tools' results, interrupts and API errors, on
//! the branch the session is on now (a rewind leaves the dropped branch in the file).
//!
//! Where [`super::line`] keeps only the words (for search), this keeps what a reader of the
//! conversation sees. Tool outputs are kept up to a cap, with their size; [`tool_output`] reads
//! one whole when asked.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// One line that says something, or that the branch passes through.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub uuid: Option<String>,
    pub parent: Option<String>,
    pub at: Option<i64>,
    /// Written by a person's own Claude Code (a terminal, `claude -p`, another host), not by
    /// Vyre's sessions (whose entrypoint is `sdk-ts`, see `sessions/claude.rs`).
    pub terminal: bool,
    pub what: What,
}

#[derive(Debug, Clone, PartialEq)]
pub enum What {
    /// A person's words.
    Prompt { text: String, images: u32 },
    /// `[Request interrupted by user]`.
    Interrupted,
    /// Content blocks of one API message (one line holds one block in Claude Code 2.x).
    Blocks { message: String, blocks: Vec<Block> },
    /// Tool results.
    Results(Vec<ToolResult>),
    /// The API failed and the CLI gave up (a synthetic assistant message).
    ApiError(String),
    /// The conversation was compacted here.
    Compacted,
    /// Nothing to show (an attachment, a command's bookkeeping); the branch passes through it.
    Nothing,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// `index`: the block's place in its API message.
    Text {
        index: u64,
        text: String,
    },
    Thinking {
        index: u64,
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub call: String,
    /// The output's start (at most the cap given to [`read`]).
    pub output: String,
    /// The whole output's size in bytes.
    pub bytes: u64,
    pub failed: bool,
    pub interrupted: bool,
    /// Someone was asked before it ran (the line's `permissionDecision` came from a person).
    pub asked: bool,
    /// A person refused it when asked (the CLI's own words for that stand in for its output).
    pub refused: bool,
}

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default, rename = "parentUuid")]
    parent: Option<String>,
    #[serde(default, rename = "logicalParentUuid")]
    logical_parent: Option<String>,
    #[serde(default, rename = "isSidechain")]
    sidechain: bool,
    #[serde(default, rename = "isMeta")]
    meta: bool,
    #[serde(default, rename = "isSynthetic")]
    synthetic: bool,
    #[serde(default, rename = "isCompactSummary")]
    compact_summary: bool,
    #[serde(default, rename = "isApiErrorMessage")]
    api_error: bool,
    #[serde(default, rename = "apiBlockIndex")]
    block_index: Option<u64>,
    #[serde(default)]
    timestamp: Option<&'a str>,
    #[serde(default)]
    entrypoint: Option<&'a str>,
    #[serde(default)]
    subtype: Option<&'a str>,
    #[serde(default, borrow)]
    message: Option<Message<'a>>,
    #[serde(default, borrow, rename = "toolUseResult")]
    tool_use_result: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "permissionDecision")]
    permission: Option<&'a RawValue>,
    /// Why a call did not run (2.1.x: `user-rejected` when the person said no).
    #[serde(default, rename = "toolDenialKind")]
    denial: Option<String>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default)]
    id: Option<String>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// Line types that carry no words (`line::PASSED_PREFIXES`) or nothing else the timeline
/// shows either; passed over unparsed (request blobs are most of a file).
const ALSO_PASSED: &[&[u8]] = &[br#"{"type":"custom-title""#, br#"{"type":"summary""#];

const INTERRUPTED: &str = "[Request interrupted by user";
/// How Claude Code's tool result starts when the person said no to the call (2.1.x: "... proceed
/// with this tool use", or "... take this action right now").
const REFUSED: &str = "The user doesn't want to ";

/// Read a transcript, keeping tool outputs up to `cap` bytes each. Lines that are not JSON are
/// skipped, as a torn last line is.
pub fn read(reader: impl BufRead, cap: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    // Older transcripts give no block index: count a message's blocks as they come.
    let mut blocks_seen: HashMap<String, u64> = HashMap::new();
    for line in reader.split(b'\n') {
        let Ok(line) = line else { break };
        let line = line.trim_ascii();
        if line.is_empty()
            || super::line::PASSED_PREFIXES
                .iter()
                .chain(ALSO_PASSED)
                .any(|p| line.starts_with(p))
        {
            continue;
        }
        let Ok(raw) = serde_json::from_slice::<Raw>(line) else {
            continue;
        };
        if let Some(entry) = entry(raw, cap, &mut blocks_seen) {
            out.push(entry);
        }
    }
    out
}

/// Read the transcript at `path` (opened without following links, see [`super::open`]); an
/// unreadable one has no entries.
pub fn read_path(path: &Path, cap: usize) -> std::io::Result<Vec<Entry>> {
    let file = super::open(path)?;
    Ok(read(
        std::io::BufReader::with_capacity(64 * 1024, file),
        cap,
    ))
}

fn entry(raw: Raw, cap: usize, blocks_seen: &mut HashMap<String, u64>) -> Option<Entry> {
    let kind = raw.kind?;
    if raw.sidechain {
        return None;
    }
    let mut e = Entry {
        uuid: raw.uuid.clone(),
        // A compaction starts a new chain that still leads back to what came before.
        parent: raw.parent.clone().or(raw.logical_parent.clone()),
        at: raw.timestamp.and_then(super::line::parse_time),
        terminal: raw.entrypoint != Some("sdk-ts"),
        what: What::Nothing,
    };
    e.what = match kind {
        "user" => user(&raw, cap),
        "assistant" => assistant(&raw, blocks_seen),
        "system" if raw.subtype == Some("compact_boundary") => What::Compacted,
        _ => What::Nothing,
    };
    // Lines without a uuid carry nothing the branch could pass through.
    (e.uuid.is_some()).then_some(e)
}

fn content(raw: &Raw) -> Value {
    raw.message
        .as_ref()
        .and_then(|m| m.content)
        .and_then(|c| serde_json::from_str(c.get()).ok())
        .unwrap_or(Value::Null)
}

fn user(raw: &Raw, cap: usize) -> What {
    if raw.compact_summary {
        return What::Compacted;
    }
    if raw.meta || raw.synthetic {
        return What::Nothing;
    }
    let content = content(raw);
    let blocks: Vec<Value> = match content {
        Value::String(s) => vec![serde_json::json!({ "type": "text", "text": s })],
        Value::Array(b) => b,
        _ => return What::Nothing,
    };
    let results: Vec<ToolResult> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| result(b, raw, cap))
        .collect();
    if !results.is_empty() {
        return What::Results(results);
    }
    let text = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let images = blocks.iter().filter(|b| b["type"] == "image").count() as u32;
    let t = text.trim_start();
    if t.starts_with(INTERRUPTED) {
        return What::Interrupted;
    }
    if t.starts_with("<command-")
        || t.starts_with("<local-command-")
        || t.starts_with("<system-reminder>")
        || (t.is_empty() && images == 0)
    {
        return What::Nothing;
    }
    What::Prompt { text, images }
}

/// The words of a tool result's content: a string, or its text blocks (an image as `[image]`).
pub fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p["type"].as_str() {
                Some("text") => p["text"].as_str().unwrap_or_default().to_string(),
                Some("image") => "[image]".to_string(),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn result(b: &Value, raw: &Raw, cap: usize) -> ToolResult {
    let text = result_text(&b["content"]);
    let failed = b["is_error"] == true;
    let denial = raw.denial.as_deref();
    // Said no to: the line says why (2.1.x), or, in older lines, only the CLI's words do.
    let refused = denial.is_some() || (failed && text.starts_with(REFUSED));
    let by_person = denial.map_or(refused, |d| d == "user-rejected");
    let asked = by_person
        || raw
            .permission
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|p| p["source"].as_str().map(|s| s.starts_with("user")))
            .unwrap_or(false);
    let interrupted = !refused
        && (raw
            .tool_use_result
            .and_then(|s| serde_json::from_str::<Value>(s.get()).ok())
            .is_some_and(|s| s["interrupted"] == true)
            || text.starts_with(INTERRUPTED));
    let mut end = text.len().min(cap);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    ToolResult {
        call: b["tool_use_id"].as_str().unwrap_or_default().to_string(),
        bytes: text.len() as u64,
        output: text[..end].to_string(),
        failed,
        refused,
        interrupted,
        asked,
    }
}

fn assistant(raw: &Raw, blocks_seen: &mut HashMap<String, u64>) -> What {
    let content = content(raw);
    if raw.api_error {
        return What::ApiError(result_text(&content));
    }
    let Some(message) = raw.message.as_ref().and_then(|m| m.id.clone()) else {
        return What::Nothing;
    };
    let Value::Array(parts) = content else {
        return What::Nothing;
    };
    let mut blocks = vec![];
    for part in parts {
        let index = match raw.block_index {
            // One block per line: the line says where it sits.
            Some(i) => i,
            None => {
                let n = blocks_seen.entry(message.clone()).or_insert(0);
                *n += 1;
                *n - 1
            }
        };
        match part["type"].as_str() {
            Some("text") => blocks.push(Block::Text {
                index,
                text: part["text"].as_str().unwrap_or_default().to_string(),
            }),
            Some("thinking") => blocks.push(Block::Thinking {
                index,
                text: part["thinking"].as_str().unwrap_or_default().to_string(),
            }),
            Some("tool_use") => blocks.push(Block::ToolUse {
                id: part["id"].as_str().unwrap_or_default().to_string(),
                name: part["name"].as_str().unwrap_or_default().to_string(),
                input: part["input"].clone(),
            }),
            _ => {}
        }
    }
    What::Blocks { message, blocks }
}

/// The entries on the branch the session is on: the chain of parents from the newest prompt or
/// reply, with the other lines of the same API messages and the results of its tool calls
/// (older Claude Code wrote those as siblings rather than a chain). What a rewind dropped is
/// left out.
pub fn current_branch(entries: Vec<Entry>) -> Vec<Entry> {
    let Some(leaf) = entries
        .iter()
        .rev()
        .find(|e| !matches!(e.what, What::Nothing))
        .and_then(|e| e.uuid.clone())
    else {
        return vec![];
    };
    let parents: HashMap<&str, Option<&str>> = entries
        .iter()
        .filter_map(|e| Some((e.uuid.as_deref()?, e.parent.as_deref())))
        .collect();
    let mut on: HashSet<String> = HashSet::new();
    let mut at = Some(leaf.as_str());
    while let Some(u) = at {
        if !on.insert(u.to_string()) {
            break; // a loop: stop
        }
        at = parents.get(u).copied().flatten();
    }
    let mut messages: HashSet<&str> = HashSet::new();
    let mut calls: HashSet<&str> = HashSet::new();
    for e in entries
        .iter()
        .filter(|e| e.uuid.as_ref().is_some_and(|u| on.contains(u)))
    {
        if let What::Blocks { message, .. } = &e.what {
            messages.insert(message);
        }
    }
    for e in &entries {
        if let What::Blocks { message, blocks } = &e.what
            && messages.contains(message.as_str())
        {
            for b in blocks {
                if let Block::ToolUse { id, .. } = b {
                    calls.insert(id);
                }
            }
        }
    }
    let keep: Vec<bool> = entries
        .iter()
        .map(|e| {
            e.uuid.as_ref().is_some_and(|u| on.contains(u))
                || matches!(&e.what, What::Blocks { message, .. } if messages.contains(message.as_str()))
                || matches!(&e.what, What::Results(r) if r.iter().any(|r| calls.contains(r.call.as_str())))
        })
        .collect();
    entries
        .into_iter()
        .zip(keep)
        .filter_map(|(e, k)| k.then_some(e))
        .collect()
}

/// The whole output of tool call `call` in the transcript at `path`, up to `cap` bytes, with its
/// size; `None` when the transcript does not hold it.
pub fn tool_output(path: &Path, call: &str, cap: usize) -> Option<(String, u64)> {
    let file = super::open(path).ok()?;
    let needle = format!("\"tool_use_id\":\"{call}\"");
    std::io::BufReader::with_capacity(64 * 1024, file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter(|line| memchr::memmem::find(line, needle.as_bytes()).is_some())
        .filter_map(|line| serde_json::from_slice::<Value>(&line).ok())
        .flat_map(|v| match &v["message"]["content"] {
            Value::Array(blocks) => blocks.clone(),
            _ => vec![],
        })
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == call)
        .map(|b| {
            let text = result_text(&b["content"]);
            let bytes = text.len() as u64;
            let mut end = text.len().min(cap);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (text[..end].to_string(), bytes)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        // Opened as a session's file is: from `/`, through no link and no `..`.
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/transcripts")
            .join(name)
            .canonicalize()
            .unwrap()
    }

    fn shown(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .filter_map(|e| match &e.what {
                What::Prompt { text, .. } => Some(format!("prompt {text}")),
                What::Interrupted => Some("interrupted".into()),
                What::Blocks { message, blocks } => Some(
                    blocks
                        .iter()
                        .map(|b| match b {
                            Block::Text { index, text } => format!("{message}:{index} {text}"),
                            Block::Thinking { index, .. } => format!("{message}:{index} thinking"),
                            Block::ToolUse { id, name, input } => format!("{name} {id} {input}"),
                        })
                        .collect::<Vec<_>>()
                        .join(" | "),
                ),
                What::Results(r) => Some(
                    r.iter()
                        .map(|r| format!("result {} {} {}", r.call, r.bytes, r.failed))
                        .collect::<Vec<_>>()
                        .join(" | "),
                ),
                What::ApiError(t) => Some(format!("api error {t}")),
                What::Compacted => Some("compacted".into()),
                What::Nothing => None,
            })
            .collect()
    }

    #[test]
    fn the_real_clis_transcript_reads_with_its_tool_call_and_result() {
        let file = std::fs::File::open(fixture("cli-2.1.328.jsonl")).unwrap();
        let entries = current_branch(read(std::io::BufReader::new(file), 1024));
        assert_eq!(
            shown(&entries),
            [
                "prompt hello there zebra",
                "msg_fake_1:0 reply to [hello there zebra]",
                "prompt RUNBASH ls -la",
                r#"Bash toolu_fake_4 {"command":"ls -la","description":"run it"}"#,
                "result toolu_fake_4 94 false",
                "msg_fake_3:0 tool said: total 8\ndrwxr-xr-x 2 root root 4096 Nov 30 12:51 .\ndrwxr-xr-x 5 root root 4096 Nov 30 12:51 ..",
            ]
        );
        assert!(entries.iter().all(|e| !e.terminal), "written by a host");
        let (out, bytes) =
            tool_output(&fixture("cli-2.1.328.jsonl"), "toolu_fake_4", 1 << 20).unwrap();
        assert_eq!((out.len() as u64, bytes), (94, 94));
        assert!(tool_output(&fixture("cli-2.1.328.jsonl"), "toolu_nope", 10).is_none());
    }

    #[test]
    fn older_transcripts_keep_sibling_blocks_and_skip_what_is_broken() {
        let file = std::fs::File::open(fixture("older-and-broken.jsonl")).unwrap();
        let entries = current_branch(read(std::io::BufReader::new(file), 1024));
        let said = shown(&entries);
        assert_eq!(said[0], "prompt how does a walrus swim so well?");
        assert!(
            said.contains(&"msg_old_2:0 Blubber keeps it warm.".to_string()),
            "{said:?}"
        );
        assert!(
            said.contains(&"msg_old_2:1 It can slow its heart, too.".to_string()),
            "{said:?}"
        );
        assert!(entries.iter().all(|e| e.terminal), "typed in a terminal");
    }

    #[test]
    fn a_rewound_branch_is_left_out_and_interrupts_and_errors_are_said() {
        let lines = [
            r#"{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"one"},"entrypoint":"cli"}"#,
            r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","content":[{"type":"text","text":"r1"}]}}"#,
            r#"{"type":"user","uuid":"u2","parentUuid":"a1","message":{"role":"user","content":"dropped"}}"#,
            r#"{"type":"assistant","uuid":"a2","parentUuid":"u2","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"x"}}]}}"#,
            r#"{"type":"user","uuid":"r2","parentUuid":"a2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"gone","is_error":true}]}}"#,
            r#"{"type":"user","uuid":"u3","parentUuid":"a1","message":{"role":"user","content":[{"type":"text","text":"kept"},{"type":"image","source":{}}]}}"#,
            r#"{"type":"user","uuid":"i3","parentUuid":"u3","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#,
            r#"{"type":"user","uuid":"m3","parentUuid":"i3","isMeta":true,"message":{"role":"user","content":"meta"}}"#,
            r#"{"type":"assistant","uuid":"e3","parentUuid":"m3","isApiErrorMessage":true,"message":{"id":"x","content":[{"type":"text","text":"API Error: 500 boom"}]}}"#,
            "torn {",
        ];
        let entries = current_branch(read(lines.join("\n").as_bytes(), 1024));
        assert_eq!(
            shown(&entries),
            [
                "prompt one",
                "m1:0 r1",
                "prompt kept",
                "interrupted",
                "api error API Error: 500 boom"
            ]
        );
        assert!(matches!(entries[2].what, What::Prompt { images: 1, .. }));
    }
}
