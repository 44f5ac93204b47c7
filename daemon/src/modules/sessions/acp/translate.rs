//! What an ACP agent's `session/update`s mean as the provider contract's [`Happening`]s, with
//! what that needs remembered: the text block being streamed, the tool calls started and not
//! ended, the commands it offers. ACP has no message ids; a turn's text gets one per stretch
//! between tool calls, as the Claude driver's text has one per model message.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::kernel::contracts::provider::{Happening, SlashCommand};

#[derive(Default)]
pub struct Translator {
    /// Counts stretches of text, across turns.
    message: u64,
    block: u64,
    /// The text block being streamed and whether it is reasoning.
    open: Option<(u64, bool)>,
    /// Tool calls started and not ended: their name and input.
    calls: HashMap<String, (String, Value)>,
    pub commands: Vec<SlashCommand>,
}

/// A tool's name as Vyre's checks know them: the agent's own when it says it (Claude Code's
/// agent does, in `_meta`), else the ACP kind's nearest (`execute` is a shell command).
fn tool_name(call: &Value) -> String {
    if let Some(name) = call["_meta"]["claudeCode"]["toolName"].as_str() {
        return name.to_string();
    }
    match call["kind"].as_str() {
        Some("execute") => "Bash".into(),
        Some("edit") => "Edit".into(),
        Some("read") => "Read".into(),
        Some("delete") => "Delete".into(),
        Some("move") => "Move".into(),
        Some("search") => "Grep".into(),
        Some("fetch") => "WebFetch".into(),
        _ => call["title"].as_str().unwrap_or("tool").to_string(),
    }
}

/// What a tool gave back, as text: its content's text, else its raw output.
fn output_text(update: &Value) -> String {
    let mut parts = Vec::new();
    for item in update["content"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("content") => match item["content"]["type"].as_str() {
                Some("text") => {
                    parts.push(item["content"]["text"].as_str().unwrap_or("").to_string())
                }
                Some("image") => parts.push("[image]".into()),
                _ => {}
            },
            Some("diff") => parts.push(format!(
                "edited {}",
                item["path"].as_str().unwrap_or("a file")
            )),
            Some("terminal") => parts.push("[terminal]".into()),
            _ => {}
        }
    }
    if !parts.is_empty() {
        return parts.join("\n");
    }
    match &update["rawOutput"] {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i["text"]
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| i.to_string())
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

impl Translator {
    fn message_id(&self) -> String {
        format!("acp-{}", self.message)
    }

    /// Close the text block being streamed, if one is.
    fn close_text(&mut self) -> Option<Happening> {
        let (block, reasoning) = self.open.take()?;
        Some(Happening::Text {
            message: self.message_id(),
            block,
            delta: None,
            done: true,
            reasoning,
        })
    }

    fn text(&mut self, content: &Value, reasoning: bool) -> Vec<Happening> {
        let Some(text) = content["text"].as_str().filter(|t| !t.is_empty()) else {
            return vec![];
        };
        let mut out = Vec::new();
        let block = match self.open {
            Some((block, r)) if r == reasoning => block,
            _ => {
                out.extend(self.close_text());
                self.block += 1;
                self.open = Some((self.block, reasoning));
                self.block
            }
        };
        out.push(Happening::Text {
            message: self.message_id(),
            block,
            delta: Some(text.to_string()),
            done: false,
            reasoning,
        });
        out
    }

    /// A new turn's text starts a new stretch.
    pub fn begin_turn(&mut self) {
        self.message += 1;
    }

    /// The name and input Vyre knows tool call `id` by, when the agent reported it.
    pub fn tool(&self, id: &str) -> Option<(String, Value)> {
        self.calls.get(id).cloned()
    }

    /// One `session/update`'s `update`.
    pub fn update(&mut self, update: &Value) -> Vec<Happening> {
        match update["sessionUpdate"].as_str() {
            Some("agent_message_chunk") => self.text(&update["content"], false),
            Some("agent_thought_chunk") => self.text(&update["content"], true),
            Some("tool_call") => {
                let Some(id) = update["toolCallId"].as_str() else {
                    return vec![Happening::Garbage(
                        "a tool_call without a toolCallId".into(),
                    )];
                };
                let mut out: Vec<Happening> = self.close_text().into_iter().collect();
                let name = tool_name(update);
                let input = update.get("rawInput").cloned().unwrap_or_else(|| json!({}));
                self.block += 1;
                self.calls
                    .insert(id.to_string(), (name.clone(), input.clone()));
                out.push(Happening::ToolStarted {
                    call: id.to_string(),
                    name,
                    summary: update["title"].as_str().unwrap_or("").to_string(),
                    block: self.block,
                    input,
                    parent: None,
                });
                // What the model says after a tool is a new stretch of text.
                self.message += 1;
                out.extend(self.tool_ended(update));
                out
            }
            Some("tool_call_update") => {
                if let (Some(id), Some(input)) =
                    (update["toolCallId"].as_str(), update.get("rawInput"))
                    && let Some(call) = self.calls.get_mut(id)
                {
                    call.1 = input.clone();
                }
                self.tool_ended(update)
            }
            Some("current_mode_update") => match update["currentModeId"].as_str() {
                Some(mode) => vec![Happening::Mode {
                    mode: mode.to_string(),
                }],
                None => vec![],
            },
            Some("available_commands_update") => {
                self.commands = update["availableCommands"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| {
                        Some(SlashCommand {
                            name: c["name"].as_str()?.trim_start_matches('/').to_string(),
                            description: c["description"].as_str().unwrap_or("").to_string(),
                            argument_hint: c["input"]["hint"].as_str().unwrap_or("").to_string(),
                        })
                    })
                    .collect();
                vec![]
            }
            // The person's own words echoed (a load's replay), a plan, usage: nothing to say.
            _ => vec![],
        }
    }

    /// A tool call's end, once, when the update reports one.
    fn tool_ended(&mut self, update: &Value) -> Vec<Happening> {
        let Some(id) = update["toolCallId"].as_str() else {
            return vec![];
        };
        let failed = match update["status"].as_str() {
            Some("completed") => false,
            Some("failed") => true,
            _ => return vec![],
        };
        // A second report of an end finds the call gone and says nothing.
        if self.calls.remove(id).is_none() {
            return vec![];
        }
        vec![Happening::ToolEnded {
            call: id.to_string(),
            failed,
            output: output_text(update),
            interrupted: false,
        }]
    }

    /// The turn ended with the prompt's answer (`stopReason`) or an error: what is open is
    /// closed (a tool call cut short by a cancel ends interrupted), then the turn finishes.
    pub fn finish(&mut self, answer: Result<&Value, String>) -> Vec<Happening> {
        let mut out: Vec<Happening> = self.close_text().into_iter().collect();
        let reason = answer
            .as_ref()
            .ok()
            .and_then(|a| a["stopReason"].as_str())
            .unwrap_or("");
        let canceled = reason == "cancelled";
        for (call, _) in std::mem::take(&mut self.calls) {
            out.push(Happening::ToolEnded {
                call,
                failed: true,
                output: String::new(),
                interrupted: true,
            });
        }
        let (ok, error) = match (&answer, reason) {
            (Err(e), _) => (false, Some(e.clone())),
            (Ok(_), "end_turn") => (true, None),
            (Ok(_), "cancelled") => (false, None),
            (Ok(_), other) => (false, Some(format!("the agent stopped: {other}"))),
        };
        let tokens = answer
            .ok()
            .and_then(|a| a.get("usage").cloned())
            .unwrap_or_else(|| json!({}));
        out.push(Happening::Finished {
            ok,
            canceled,
            error,
            // ACP says nothing of what a turn cost.
            total_cost_usd: None,
            tokens,
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(kind: &str, text: &str) -> Value {
        json!({ "sessionUpdate": kind, "content": { "type": "text", "text": text } })
    }

    #[test]
    fn text_streams_in_blocks_and_a_tool_call_closes_the_stretch() {
        let mut t = Translator::default();
        t.begin_turn();
        let mut all = Vec::new();
        all.extend(t.update(&chunk("agent_thought_chunk", "thinking")));
        all.extend(t.update(&chunk("agent_message_chunk", "Hel")));
        all.extend(t.update(&chunk("agent_message_chunk", "lo")));
        all.extend(t.update(&json!({
            "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "`touch x`", "kind": "execute",
            "status": "pending", "rawInput": { "command": "touch x" },
            "_meta": { "claudeCode": { "toolName": "Bash" } },
        })));
        assert_eq!(t.tool("c1").unwrap().0, "Bash");
        all.extend(t.update(&json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
            "content": [{ "type": "content", "content": { "type": "text", "text": "done" } }],
        })));
        // Claude Code's agent reports the end twice; the second says nothing.
        all.extend(t.update(&json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed" })));
        all.extend(t.update(&chunk("agent_message_chunk", "after")));
        all.extend(t.finish(Ok(&json!({ "stopReason": "end_turn" }))));
        let said: Vec<String> = all
            .iter()
            .map(|h| match h {
                Happening::Text {
                    message,
                    block,
                    delta,
                    done,
                    reasoning,
                } => {
                    format!("text {message} {block} {delta:?} {done} {reasoning}")
                }
                Happening::ToolStarted {
                    call, name, input, ..
                } => format!("start {call} {name} {input}"),
                Happening::ToolEnded {
                    call,
                    failed,
                    output,
                    ..
                } => format!("end {call} {failed} {output}"),
                Happening::Finished { ok, canceled, .. } => format!("finished {ok} {canceled}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            said,
            [
                "text acp-1 1 Some(\"thinking\") false true",
                "text acp-1 1 None true true",
                "text acp-1 2 Some(\"Hel\") false false",
                "text acp-1 2 Some(\"lo\") false false",
                "text acp-1 2 None true false",
                "start c1 Bash {\"command\":\"touch x\"}",
                "end c1 false done",
                "text acp-2 4 Some(\"after\") false false",
                "text acp-2 4 None true false",
                "finished true false",
            ]
        );
    }

    #[test]
    fn a_cancelled_turn_ends_its_open_calls_interrupted_and_other_stops_say_why() {
        let mut t = Translator::default();
        t.update(&json!({ "sessionUpdate": "tool_call", "toolCallId": "c9", "title": "ls", "kind": "execute" }));
        let out = t.finish(Ok(&json!({ "stopReason": "cancelled" })));
        assert!(
            matches!(&out[0], Happening::ToolEnded { call, interrupted: true, .. } if call == "c9")
        );
        assert!(matches!(
            &out[1],
            Happening::Finished {
                ok: false,
                canceled: true,
                error: None,
                ..
            }
        ));
        let out = t.finish(Ok(&json!({ "stopReason": "max_tokens" })));
        assert!(
            matches!(&out[0], Happening::Finished { ok: false, error: Some(e), .. } if e.contains("max_tokens"))
        );
        let out = t.finish(Err("the agent's process closed its pipes".into()));
        assert!(matches!(
            &out[0],
            Happening::Finished {
                ok: false,
                canceled: false,
                error: Some(_),
                ..
            }
        ));
        // A kind with no name of its own is named by its ACP kind.
        t.update(&json!({ "sessionUpdate": "tool_call", "toolCallId": "c2", "title": "Write a.txt", "kind": "edit" }));
        assert_eq!(t.tool("c2").unwrap().0, "Edit");
        t.update(
            &json!({ "sessionUpdate": "available_commands_update", "availableCommands": [
            { "name": "compact", "description": "Compact", "input": { "hint": "<instructions>" } },
        ] }),
        );
        assert_eq!(t.commands[0].argument_hint, "<instructions>");
        assert!(matches!(
            t.update(&json!({ "sessionUpdate": "current_mode_update", "currentModeId": "plan" }))[0],
            Happening::Mode { ref mode } if mode == "plan"
        ));
    }
}
