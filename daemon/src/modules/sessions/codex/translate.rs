//! What Codex's app-server notifications mean as the provider contract's [`Happening`]s, with
//! what that needs remembered: the text items being streamed, the tool items started and not
//! ended, the last usage reported. Codex names every item; its text keeps the item's id as
//! its message id.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::kernel::contracts::provider::Happening;

#[derive(Default)]
pub struct Translator {
    block: u64,
    /// Text items being streamed: their block and whether they are reasoning.
    open: HashMap<String, (u64, bool)>,
    /// Tool items started and not ended: their name and input.
    calls: HashMap<String, (String, Value)>,
    /// The turn's usage, as Codex last reported it.
    usage: Value,
    /// What the model the turn runs on costs (`sessions.prices`), when the person said.
    pub price: Option<crate::kernel::config::Price>,
    /// What this process's turns cost so far.
    total: f64,
}

/// The words of a shell command Codex runs as `/bin/bash -lc '<words>'`: what the model asked
/// for, which is what Vyre's checks read.
pub fn command_of(item: &Value) -> String {
    if let Some(words) = item["commandActions"]
        .as_array()
        .filter(|a| a.len() == 1)
        .and_then(|a| a[0]["command"].as_str())
    {
        return words.to_string();
    }
    item["command"].as_str().unwrap_or("").to_string()
}

/// A tool item's name as Vyre's checks know them, and its input.
pub fn tool_of(item: &Value) -> Option<(String, Value)> {
    match item["type"].as_str()? {
        "commandExecution" => Some((
            "Bash".into(),
            json!({ "command": command_of(item), "cwd": item["cwd"] }),
        )),
        "fileChange" => {
            let changes = item["changes"].clone();
            let path = changes
                .as_array()
                .and_then(|c| c.first())
                .and_then(|c| c["path"].as_str())
                .unwrap_or("")
                .to_string();
            Some((
                "Edit".into(),
                json!({ "file_path": path, "changes": changes }),
            ))
        }
        "mcpToolCall" => Some((
            format!(
                "mcp__{}__{}",
                item["server"].as_str().unwrap_or("mcp"),
                item["tool"].as_str().unwrap_or("tool")
            ),
            item["arguments"].clone(),
        )),
        // Vyre's own tools (the only dynamic ones Vyre gives), named as Claude Code names an
        // MCP server's, so every surface reads them alike.
        "dynamicToolCall" => Some((
            super::tools::shown_name(item["tool"].as_str().unwrap_or("tool")),
            super::tools::tool_input(&item["arguments"]),
        )),
        "webSearch" => Some(("WebSearch".into(), json!({ "query": item["query"] }))),
        "imageView" => Some(("Read".into(), json!({ "file_path": item["path"] }))),
        _ => None,
    }
}

/// A one-line summary of a tool item.
fn summary_of(name: &str, input: &Value) -> String {
    let text = match name {
        "Bash" => input["command"].as_str(),
        "Edit" | "Read" => input["file_path"].as_str(),
        "WebSearch" => input["query"].as_str(),
        _ => None,
    };
    text.unwrap_or("").chars().take(200).collect()
}

/// The texts of a tool result's content parts (`[{type, text}]`), one a line.
fn texts(parts: &Value) -> String {
    let parts = parts.as_array().into_iter().flatten();
    let texts: Vec<&str> = parts.filter_map(|c| c["text"].as_str()).collect();
    texts.join("\n")
}

/// What a tool item gave back, as text, and whether it failed.
fn ended(item: &Value) -> (bool, String) {
    let status = item["status"].as_str().unwrap_or("completed");
    let failed = status != "completed"
        || item["exitCode"].as_i64().is_some_and(|c| c != 0)
        || item["success"] == false;
    let output = match item["type"].as_str() {
        Some("commandExecution") => match item["aggregatedOutput"].as_str() {
            Some(out) => out.to_string(),
            None if status == "declined" => "declined".into(),
            None => String::new(),
        },
        Some("fileChange") => item["changes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["path"].as_str())
            .map(|p| format!("edited {p}"))
            .collect::<Vec<_>>()
            .join("\n"),
        Some("mcpToolCall") => match &item["error"] {
            Value::Null => texts(&item["result"]["content"]),
            e => e["message"].as_str().unwrap_or("failed").to_string(),
        },
        Some("dynamicToolCall") => texts(&item["contentItems"]),
        _ => String::new(),
    };
    (failed, output)
}

/// Codex's token counts in the shape the Switchboard keeps (Claude's usage).
fn tokens(usage: &Value) -> Value {
    let cached = usage["cachedInputTokens"].as_u64().unwrap_or(0);
    let input = usage["inputTokens"].as_u64().unwrap_or(0);
    json!({
        "input_tokens": input.saturating_sub(cached),
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": usage["cacheWriteInputTokens"].as_u64().unwrap_or(0),
        "output_tokens": usage["outputTokens"].as_u64().unwrap_or(0),
        "reasoning_output_tokens": usage["reasoningOutputTokens"].as_u64().unwrap_or(0),
    })
}

impl Translator {
    fn text(&mut self, item: &str, delta: &str, reasoning: bool) -> Vec<Happening> {
        if delta.is_empty() {
            return vec![];
        }
        let block = match self.open.get(item) {
            Some((block, _)) => *block,
            None => {
                self.block += 1;
                self.open.insert(item.to_string(), (self.block, reasoning));
                self.block
            }
        };
        vec![Happening::Text {
            message: item.to_string(),
            block,
            delta: Some(delta.to_string()),
            done: false,
            reasoning,
        }]
    }

    /// The name and input Vyre knows tool item `id` by, when Codex reported it started.
    pub fn tool(&self, id: &str) -> Option<(String, Value)> {
        self.calls.get(id).cloned()
    }

    /// One notification of the thread's.
    pub fn notification(&mut self, method: &str, params: &Value) -> Vec<Happening> {
        match method {
            "item/agentMessage/delta" => self.text(
                params["itemId"].as_str().unwrap_or("message"),
                params["delta"].as_str().unwrap_or(""),
                false,
            ),
            "item/reasoning/summaryTextDelta" | "item/reasoning/textDelta" => self.text(
                params["itemId"].as_str().unwrap_or("reasoning"),
                params["delta"].as_str().unwrap_or(""),
                true,
            ),
            "item/started" => self.started(&params["item"]),
            "item/completed" => self.completed(&params["item"]),
            "thread/tokenUsage/updated" => {
                self.usage = params["tokenUsage"]["last"].clone();
                vec![]
            }
            "error" if params["willRetry"] == true => {
                let message = params["error"]["message"].as_str().unwrap_or("");
                // "Reconnecting... 2/5"
                let (attempt, max) = message
                    .rsplit(' ')
                    .next()
                    .and_then(|n| n.split_once('/'))
                    .and_then(|(a, m)| Some((a.parse().ok()?, m.parse().ok()?)))
                    .unwrap_or((1, 0));
                vec![Happening::Retry {
                    attempt,
                    max_retries: max,
                    delay_ms: 0,
                    status: params["error"]["codexErrorInfo"]
                        .as_object()
                        .and_then(|o| o.values().next())
                        .and_then(|v| v["httpStatusCode"].as_u64()),
                    error: params["error"]["additionalDetails"]
                        .as_str()
                        .unwrap_or(message)
                        .to_string(),
                }]
            }
            _ => vec![],
        }
    }

    fn started(&mut self, item: &Value) -> Vec<Happening> {
        let Some(id) = item["id"].as_str() else {
            return vec![];
        };
        let Some((name, input)) = tool_of(item) else {
            return vec![];
        };
        self.block += 1;
        self.calls
            .insert(id.to_string(), (name.clone(), input.clone()));
        vec![Happening::ToolStarted {
            call: id.to_string(),
            summary: summary_of(&name, &input),
            name,
            block: self.block,
            input,
            parent: None,
        }]
    }

    fn completed(&mut self, item: &Value) -> Vec<Happening> {
        let Some(id) = item["id"].as_str() else {
            return vec![];
        };
        if let Some((block, reasoning)) = self.open.remove(id) {
            return vec![Happening::Text {
                message: id.to_string(),
                block,
                delta: None,
                done: true,
                reasoning,
            }];
        }
        if matches!(item["type"].as_str(), Some("agentMessage")) {
            // A message that came whole, without deltas.
            let text = item["text"].as_str().unwrap_or("");
            let mut out = self.text(id, text, false);
            out.extend(self.completed(item));
            return out;
        }
        // An end reported twice finds the call gone and says nothing.
        if self.calls.remove(id).is_none() {
            return vec![];
        }
        let (failed, output) = ended(item);
        vec![Happening::ToolEnded {
            call: id.to_string(),
            failed,
            output,
            interrupted: false,
        }]
    }

    /// The turn ended (`turn/completed`'s turn, or the reason it never started): what is open
    /// is closed (a tool item cut short ends interrupted), then the turn finishes.
    pub fn finish(&mut self, turn: Result<&Value, String>) -> Vec<Happening> {
        let mut out = Vec::new();
        let mut open: Vec<(String, (u64, bool))> = self.open.drain().collect();
        open.sort_by_key(|(_, (block, _))| *block);
        for (message, (block, reasoning)) in open {
            out.push(Happening::Text {
                message,
                block,
                delta: None,
                done: true,
                reasoning,
            });
        }
        for (call, _) in std::mem::take(&mut self.calls) {
            out.push(Happening::ToolEnded {
                call,
                failed: true,
                output: String::new(),
                interrupted: true,
            });
        }
        let status = turn
            .as_ref()
            .ok()
            .and_then(|t| t["status"].as_str())
            .unwrap_or("");
        let (ok, canceled, error) = match (&turn, status) {
            (Err(e), _) => (false, false, Some(e.clone())),
            (Ok(_), "completed") => (true, false, None),
            (Ok(_), "interrupted") => (false, true, None),
            (Ok(t), other) => (
                false,
                false,
                Some(
                    t["error"]["message"]
                        .as_str()
                        .map(String::from)
                        .unwrap_or_else(|| format!("the turn ended {other}")),
                ),
            ),
        };
        // Codex reports tokens, not what they cost: the person's price for the model does.
        let tokens = tokens(&std::mem::take(&mut self.usage));
        let count = |k: &str| tokens[k].as_u64().unwrap_or(0);
        let cost_usd = self.price.map(|p| {
            p.cost(
                count("input_tokens"),
                count("cache_read_input_tokens"),
                count("output_tokens"),
            )
        });
        self.total += cost_usd.unwrap_or(0.0);
        out.push(Happening::Finished {
            ok,
            canceled,
            error,
            total_cost_usd: cost_usd.map(|_| self.total),
            tokens,
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(t: &mut Translator, method: &str, params: Value) -> Vec<Happening> {
        t.notification(method, &params)
    }

    #[test]
    fn a_turn_of_text_and_a_command_reads_as_happenings() {
        let mut t = Translator::default();
        let said = note(
            &mut t,
            "item/agentMessage/delta",
            json!({ "itemId": "msg_1", "delta": "hello " }),
        );
        assert!(
            matches!(&said[..], [Happening::Text { message, block: 1, delta: Some(d), reasoning: false, .. }] if message == "msg_1" && d == "hello ")
        );
        let said = note(
            &mut t,
            "item/completed",
            json!({ "item": { "type": "agentMessage", "id": "msg_1", "text": "hello " } }),
        );
        assert!(matches!(
            &said[..],
            [Happening::Text {
                done: true,
                block: 1,
                ..
            }]
        ));
        let item = json!({ "type": "commandExecution", "id": "call_1", "command": "/bin/bash -lc 'touch a'",
                           "commandActions": [{ "type": "unknown", "command": "touch a" }], "cwd": "/w", "status": "inProgress" });
        let said = note(&mut t, "item/started", json!({ "item": item }));
        match &said[..] {
            [Happening::ToolStarted { name, input, .. }] => {
                assert_eq!(name, "Bash");
                assert_eq!(input["command"], "touch a");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(t.tool("call_1").unwrap().0, "Bash");
        let mut done = item.clone();
        done["status"] = json!("declined");
        let said = note(&mut t, "item/completed", json!({ "item": done }));
        assert!(
            matches!(&said[..], [Happening::ToolEnded { failed: true, output, .. }] if output == "declined")
        );
        note(
            &mut t,
            "thread/tokenUsage/updated",
            json!({ "tokenUsage": { "last": { "inputTokens": 100, "cachedInputTokens": 20, "outputTokens": 12 } } }),
        );
        let said = t.finish(Ok(&json!({ "status": "completed" })));
        match &said[..] {
            [
                Happening::Finished {
                    ok: true, tokens, ..
                },
            ] => {
                assert_eq!(tokens["input_tokens"], 80);
                assert_eq!(tokens["cache_read_input_tokens"], 20);
                assert_eq!(tokens["output_tokens"], 12);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_interrupted_turn_closes_what_is_open() {
        let mut t = Translator::default();
        note(
            &mut t,
            "item/reasoning/summaryTextDelta",
            json!({ "itemId": "r1", "delta": "thinking" }),
        );
        note(
            &mut t,
            "item/started",
            json!({ "item": { "type": "commandExecution", "id": "c1", "command": "sleep 9" } }),
        );
        let said = t.finish(Ok(&json!({ "status": "interrupted" })));
        assert!(matches!(
            &said[..],
            [
                Happening::Text {
                    done: true,
                    reasoning: true,
                    ..
                },
                Happening::ToolEnded {
                    interrupted: true,
                    ..
                },
                Happening::Finished {
                    ok: false,
                    canceled: true,
                    error: None,
                    ..
                }
            ]
        ));
        let said = t.finish(Ok(
            &json!({ "status": "failed", "error": { "message": "quota" } }),
        ));
        assert!(
            matches!(&said[..], [Happening::Finished { ok: false, error: Some(e), .. }] if e == "quota")
        );
    }

    #[test]
    fn a_call_of_vyres_tool_reads_as_an_mcp_tool_of_vyre() {
        let mut t = Translator::default();
        let item = json!({ "type": "dynamicToolCall", "id": "call_9", "tool": "threads_list",
                           "arguments": "{\"limit\":2}", "status": "inProgress" });
        let said = note(&mut t, "item/started", json!({ "item": item }));
        match &said[..] {
            [Happening::ToolStarted { name, input, .. }] => {
                assert_eq!(name, "mcp__vyre__threads_list");
                assert_eq!(input["limit"], 2);
            }
            other => panic!("{other:?}"),
        }
        let mut done = item.clone();
        done["status"] = json!("completed");
        done["success"] = json!(false);
        done["contentItems"] = json!([{ "type": "inputText", "text": "person_only" }]);
        let said = note(&mut t, "item/completed", json!({ "item": done }));
        assert!(
            matches!(&said[..], [Happening::ToolEnded { failed: true, output, .. }] if output == "person_only")
        );
    }

    #[test]
    fn a_retry_says_its_attempt() {
        let mut t = Translator::default();
        let said = note(
            &mut t,
            "error",
            json!({ "willRetry": true, "error": { "message": "Reconnecting... 2/5",
                    "codexErrorInfo": { "responseStreamDisconnected": { "httpStatusCode": 502 } } } }),
        );
        assert!(matches!(
            &said[..],
            [Happening::Retry {
                attempt: 2,
                max_retries: 5,
                status: Some(502),
                ..
            }]
        ));
    }
}
