//! The Claude Code CLI's stream-json messages as the provider contract's [`Happening`]s: the
//! translation the Claude provider's sessions run, kept apart from the process so the fuzz
//! targets drive the same code.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::claude::{GATE_HOOK, SLOT_HOOK, STOP_HOOK};
use crate::kernel::contracts::provider::{Happening, Question};

/// The CLI's stream-json messages turned into [`Happening`]s, apart from the process so that the
/// fuzz targets (`fuzz/`) drive the same code a session runs. It remembers the API message being
/// streamed and the kind of each of its open content blocks.
#[derive(Debug, Default)]
pub struct Translator {
    /// The kind of each open content block of the current message (`text`, `thinking`, `tool_use`).
    blocks: HashMap<u64, String>,
    /// The API message id being streamed.
    message: String,
    /// A rate limit was already said in this turn.
    limit_said: bool,
    /// What the session had cost before this process: Claude Code's `total_cost_usd` counts on
    /// from it after a resume or a fork (restored from the transcript's `cost-state`), and a
    /// session's reported total is this process's own.
    cost_before: f64,
}

impl Translator {
    /// A translator for a process whose CLI counts its cost on from `cost_before` (a resumed or
    /// forked session's, as its transcript said).
    pub fn costing_from(cost_before: f64) -> Translator {
        Translator {
            cost_before,
            ..Translator::default()
        }
    }

    /// A control request of the CLI as a happening: a permission question or a subagent waiting
    /// for a slot. `None` for any other request, which the session refuses.
    pub fn request(id: &str, request: &Value) -> Option<Happening> {
        match request["subtype"].as_str() {
            Some("can_use_tool") => Some(Happening::Asked(question(id.to_string(), request))),
            Some("hook_callback") if request["callback_id"] == SLOT_HOOK => {
                Some(Happening::SlotWanted {
                    request: id.to_string(),
                    call: request["input"]["tool_use_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                })
            }
            Some("hook_callback") if request["callback_id"] == GATE_HOOK => {
                let input = &request["input"];
                Some(Happening::Checking {
                    request: id.to_string(),
                    call: input["tool_use_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    tool: input["tool_name"].as_str().unwrap_or_default().to_string(),
                    input: input["tool_input"].clone(),
                    cwd: input["cwd"].as_str().map(String::from),
                })
            }
            Some("hook_callback") if request["callback_id"] == STOP_HOOK => {
                let input = &request["input"];
                Some(Happening::Ending {
                    request: id.to_string(),
                    text: input["last_assistant_message"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    again: input["stop_hook_active"] == true,
                })
            }
            _ => None,
        }
    }

    /// What one message (any line that is not a control request or answer) says.
    pub fn message(&mut self, m: &Value) -> Vec<Happening> {
        match m["type"].as_str() {
            Some("stream_event") => self.stream(&m["event"]),
            Some("assistant") => m["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .filter(|(_, b)| b["type"] == "tool_use")
                .map(|(i, b)| Happening::ToolStarted {
                    call: b["id"].as_str().unwrap_or_default().to_string(),
                    name: b["name"].as_str().unwrap_or_default().to_string(),
                    summary: summary(b["name"].as_str().unwrap_or_default(), &b["input"]),
                    block: i as u64,
                    input: b["input"].clone(),
                    parent: m["parent_tool_use_id"].as_str().map(String::from),
                })
                .collect(),
            Some("user") => m["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| Happening::ToolEnded {
                    call: b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                    failed: b["is_error"] == true,
                    output: crate::kernel::transcripts::entry::result_text(&b["content"]),
                    interrupted: m["tool_use_result"]["interrupted"] == true,
                })
                .collect(),
            Some("command_lifecycle") if m["state"] == "started" => m["command_uuid"]
                .as_str()
                .map(|u| {
                    vec![Happening::Steered {
                        uuid: u.to_string(),
                    }]
                })
                .unwrap_or_default(),
            Some("rate_limit_event") => {
                self.limit_said = true;
                vec![Happening::Limit(m.clone())]
            }
            // The API failed and the CLI tries again (500, 529 overloaded, 429, a lost
            // connection); a 429 is also the turn's rate limit, said once.
            Some("system") if m["subtype"] == "api_retry" => {
                let status = m["error_status"].as_u64();
                let mut out = vec![Happening::Retry {
                    attempt: m["attempt"].as_u64().unwrap_or(0),
                    max_retries: m["max_retries"].as_u64().unwrap_or(0),
                    delay_ms: m["retry_delay_ms"].as_u64().unwrap_or(0),
                    status,
                    error: m["error"].as_str().unwrap_or_default().to_string(),
                }];
                if status == Some(429) {
                    out.extend(self.api_limit(m, true));
                }
                out
            }
            // A subagent (or a long Bash) became a task, and the task ended: what slots follow.
            // The mode the CLI is in: `system/status` after every change (Vyre's own, an
            // "always" carrying `setMode`, EnterPlanMode, an approved ExitPlanMode) and
            // `system/init` at each turn's start.
            Some("system")
                if (m["subtype"] == "status" || m["subtype"] == "init")
                    && m["permissionMode"].is_string() =>
            {
                vec![Happening::Mode {
                    mode: m["permissionMode"].as_str().unwrap_or_default().to_string(),
                }]
            }
            Some("system") if m["subtype"] == "task_started" => m["tool_use_id"]
                .as_str()
                .map(|c| vec![Happening::TaskStarted { call: c.into() }])
                .unwrap_or_default(),
            Some("system") if m["subtype"] == "task_notification" => m["tool_use_id"]
                .as_str()
                .map(|c| vec![Happening::TaskEnded { call: c.into() }])
                .unwrap_or_default(),
            Some("result") => {
                // A turn the API refused at a rate limit the CLI did not report on its own (an
                // API key's 429: only subscriptions get `rate_limit_event`).
                let mut out = if m["is_error"] == true && m["api_error_status"] == 429 {
                    self.api_limit(m, false)
                } else {
                    vec![]
                };
                self.limit_said = false;
                out.extend(self.finished(m));
                out
            }
            _ => vec![],
        }
    }

    /// `thread.limit` for an API 429, unless this turn already said one.
    fn api_limit(&mut self, m: &Value, retrying: bool) -> Vec<Happening> {
        if std::mem::replace(&mut self.limit_said, true) {
            return vec![];
        }
        vec![Happening::Limit(json!({
            "type": "api_error",
            "status": 429,
            "error": m["error"].as_str().or(m["api_error_type"].as_str()).unwrap_or("rate_limit"),
            "retrying": retrying,
        }))]
    }

    fn finished(&self, m: &Value) -> Vec<Happening> {
        match m["type"].as_str() {
            Some("result") => {
                let is_error = m["is_error"] == true;
                let terminal = m["terminal_reason"].as_str().unwrap_or("");
                let canceled = is_error && terminal.starts_with("aborted");
                let error = is_error.then(|| {
                    m["errors"]
                        .as_array()
                        .and_then(|e| e.first())
                        .and_then(Value::as_str)
                        .or_else(|| m["result"].as_str())
                        .unwrap_or(terminal)
                        .to_string()
                });
                vec![Happening::Finished {
                    ok: !is_error,
                    canceled,
                    error: if canceled { None } else { error },
                    total_cost_usd: m["total_cost_usd"]
                        .as_f64()
                        .map(|t| (t - self.cost_before).max(0.0)),
                    tokens: m["usage"].clone(),
                }]
            }
            _ => vec![],
        }
    }

    fn stream(&mut self, e: &Value) -> Vec<Happening> {
        let index = e["index"].as_u64().unwrap_or(0);
        match e["type"].as_str() {
            Some("message_start") => {
                self.message = e["message"]["id"].as_str().unwrap_or_default().to_string();
                self.blocks.clear();
                vec![Happening::TurnBegan {
                    uuid: e["user_message_uuid"].as_str().map(String::from),
                }]
            }
            Some("content_block_start") => {
                let kind = e["content_block"]["type"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                self.blocks.insert(index, kind);
                vec![]
            }
            Some("content_block_delta") => {
                let (text, reasoning) = match e["delta"]["type"].as_str() {
                    Some("text_delta") => (e["delta"]["text"].as_str(), false),
                    Some("thinking_delta") => (e["delta"]["thinking"].as_str(), true),
                    _ => (None, false),
                };
                text.map(|t| {
                    vec![Happening::Text {
                        message: self.message.clone(),
                        block: index,
                        delta: Some(t.to_string()),
                        done: false,
                        reasoning,
                    }]
                })
                .unwrap_or_default()
            }
            Some("content_block_stop") => match self.blocks.remove(&index).as_deref() {
                Some(kind @ ("text" | "thinking")) => vec![Happening::Text {
                    message: self.message.clone(),
                    block: index,
                    delta: None,
                    done: true,
                    reasoning: kind == "thinking",
                }],
                _ => vec![],
            },
            _ => vec![],
        }
    }
}

/// A short, event-sized description of a tool call (never its whole input).
fn summary(tool: &str, input: &Value) -> String {
    let field = |k: &str| input[k].as_str().map(String::from);
    let text = match tool {
        "Bash" => field("description").or_else(|| field("command")),
        "Read" | "Write" | "Edit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path"))
        }
        "Glob" | "Grep" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description"),
        _ => None,
    }
    .unwrap_or_default();
    let mut short: String = text.chars().take(120).collect();
    if text.chars().count() > 120 {
        short.push('…');
    }
    short
}

fn question(id: String, r: &Value) -> Question {
    let tool = r["tool_name"].as_str().unwrap_or_default().to_string();
    let kind = match tool.as_str() {
        "AskUserQuestion" => "question",
        "ExitPlanMode" => "plan",
        _ => "tool",
    };
    Question {
        request: id,
        kind: kind.into(),
        tool_use_id: r["tool_use_id"].as_str().map(String::from),
        input: r["input"].clone(),
        description: r["description"].as_str().map(String::from),
        suggestions: r["permission_suggestions"].clone(),
        tool,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_the_cli_reports_is_said_and_a_status_without_one_is_not() {
        let mut t = Translator::default();
        let mode_of = |said: Vec<Happening>| match &said[..] {
            [Happening::Mode { mode }] => Some(mode.clone()),
            _ => None,
        };
        let status = json!({ "type": "system", "subtype": "status", "status": null, "permissionMode": "plan" });
        assert_eq!(mode_of(t.message(&status)).as_deref(), Some("plan"));
        let init = json!({ "type": "system", "subtype": "init", "permissionMode": "acceptEdits", "tools": [] });
        assert_eq!(mode_of(t.message(&init)).as_deref(), Some("acceptEdits"));
        let requesting = json!({ "type": "system", "subtype": "status", "status": "requesting" });
        assert!(t.message(&requesting).is_empty());
        // Only a status or an init says the mode: another line keeps its own meaning.
        let task = json!({ "type": "system", "subtype": "task_started", "tool_use_id": "t1", "permissionMode": "plan" });
        assert!(matches!(
            &t.message(&task)[..],
            [Happening::TaskStarted { .. }]
        ));
    }

    #[test]
    fn a_resumed_process_reports_its_own_cost_not_what_came_before() {
        let mut t = Translator::costing_from(1.0);
        let total_of = |said: Vec<Happening>| match &said[..] {
            [Happening::Finished { total_cost_usd, .. }] => *total_cost_usd,
            _ => panic!("not a result"),
        };
        let result = |total: Value| json!({ "type": "result", "is_error": false, "result": "ok", "total_cost_usd": total, "usage": {} });
        assert_eq!(total_of(t.message(&result(json!(1.5)))), Some(0.5));
        // A CLI that counted from less than the transcript said never reports less than nothing.
        assert_eq!(total_of(t.message(&result(json!(0.25)))), Some(0.0));
        assert_eq!(total_of(t.message(&result(Value::Null))), None);
    }

    #[test]
    fn api_retries_are_said_and_a_429_is_one_limit_per_turn() {
        let mut t = Translator::default();
        let retry = |status: u64| json!({ "type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10, "retry_delay_ms": 600, "error_status": status, "error": "x" });
        let said = t.message(&retry(529));
        assert!(matches!(
            said[..],
            [Happening::Retry {
                status: Some(529),
                attempt: 1,
                ..
            }]
        ));
        let said = t.message(&retry(429));
        assert!(matches!(
            said[..],
            [Happening::Retry { .. }, Happening::Limit(_)]
        ));
        assert_eq!(t.message(&retry(429)).len(), 1, "the limit once a turn");
        let result = json!({ "type": "result", "is_error": true, "api_error_status": 429, "result": "API Error: 429", "total_cost_usd": 0 });
        let said = t.message(&result);
        assert!(matches!(said[..], [Happening::Finished { ok: false, .. }]));
        // The next turn refused at once (no retry) says its limit with its result.
        let said = t.message(&result);
        assert!(matches!(
            said[..],
            [Happening::Limit(_), Happening::Finished { .. }]
        ));
        // A subscription's own limit event is the turn's limit; the 429 result adds none.
        let event =
            json!({ "type": "rate_limit_event", "rate_limit_info": { "status": "rejected" } });
        assert_eq!(t.message(&event).len(), 1);
        assert!(matches!(
            t.message(&result)[..],
            [Happening::Finished { .. }]
        ));
    }

    #[test]
    fn summaries_are_short_and_pick_the_telling_field() {
        assert_eq!(
            summary(
                "Bash",
                &json!({"command": "ls", "description": "list files"})
            ),
            "list files"
        );
        assert_eq!(
            summary(
                "Write",
                &json!({"file_path": "/w/notes.txt", "content": "long"})
            ),
            "/w/notes.txt"
        );
        assert_eq!(summary("Mystery", &json!({"x": 1})), "");
        assert_eq!(
            summary("Bash", &json!({"command": "x".repeat(300)}))
                .chars()
                .count(),
            121
        );
    }
}
