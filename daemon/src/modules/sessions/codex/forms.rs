//! Codex's `mcpServer/elicitation/request`: an MCP server's form, which Codex passes on for the
//! servers the person configured (asked as `mcp_forms` asks every provider's), or Codex's own
//! question whether an MCP server's tool may run (`_meta.codex_approval_kind: mcp_tool_call`):
//! a tool ask, `mcp__<server>__<tool>` with the call's arguments, as Claude Code's is for an
//! MCP tool. Codex's other kinds (an app to install, ...) are not put to the person: cancelled.

use serde_json::{Value, json};

use super::questions::{Answering, Asked};
use crate::modules::sessions::mcp_forms::{self, Request};

/// The request as one ask.
pub fn asked(params: &Value) -> Asked {
    let server = params["serverName"].as_str().unwrap_or("an MCP server");
    let message = params["message"].as_str().unwrap_or_default();
    let meta = &params["_meta"];
    match meta["codex_approval_kind"].as_str() {
        None => {}
        Some("mcp_tool_call") => {
            let tool = meta["tool_name"].as_str().or(meta["tool_title"].as_str());
            return Asked {
                input: meta["tool_params"].clone(),
                answering: Answering::Tool,
                note: Some(message.to_string()),
                tool: format!("mcp__{server}__{}", tool.unwrap_or("tool")),
                kind: "tool",
            };
        }
        Some(_) => {
            return Asked {
                input: json!({}),
                answering: Answering::Form(vec![]),
                note: None,
                tool: String::new(),
                kind: "question",
            };
        }
    }
    let form = mcp_forms::form(&Request {
        server,
        message,
        link: params["mode"] == "url",
        url: params["url"].as_str(),
        schema: &params["requestedSchema"],
        order: None,
    });
    Asked {
        input: form.input,
        answering: Answering::Form(form.fields),
        note: Some(form.note),
        tool: form.tool,
        kind: "question",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_asked_field_by_field_and_answered_as_the_forms_content() {
        let request = json!({ "threadId": "t", "turnId": "u", "serverName": "tables", "mode": "form",
            "message": "Book a table",
            "requestedSchema": { "type": "object", "required": ["seats"], "properties": {
                "seats": { "type": "integer", "title": "Seats" } } } });
        let a = asked(&request);
        assert_eq!((a.kind, a.tool.as_str()), ("question", "tables (MCP form)"));
        assert_eq!(a.input["questions"][0]["question"], "Seats");
        let allow = json!({ "behavior": "allow", "updatedInput": { "answers": { "Seats": "3" } } });
        assert_eq!(
            a.answering.answer(&allow),
            Ok(json!({ "action": "accept", "content": { "seats": 3 } }))
        );
        let wrong =
            json!({ "behavior": "allow", "updatedInput": { "answers": { "Seats": "three" } } });
        assert!(a.answering.answer(&wrong).is_err());
        assert_eq!(a.answering.withdrawn(), json!({ "action": "cancel" }));
    }

    #[test]
    fn codexs_question_whether_an_mcp_tool_may_run_is_a_tool_ask() {
        let approval = json!({ "serverName": "tables", "mode": "form",
            "message": "Allow the tables MCP server to run tool \"book\"?",
            "requestedSchema": { "type": "object", "properties": {} },
            "_meta": { "codex_approval_kind": "mcp_tool_call", "tool_name": "book",
                       "tool_params": { "day": "mon" }, "persist": ["session", "always"] } });
        let a = asked(&approval);
        assert_eq!((a.kind, a.tool.as_str()), ("tool", "mcp__tables__book"));
        assert_eq!(a.input, json!({ "day": "mon" }));
        assert!(!a.is_empty());
        let allow = json!({ "behavior": "allow" });
        assert_eq!(
            a.answering.answer(&allow),
            Ok(json!({ "action": "accept", "content": {} }))
        );
        assert_eq!(
            a.answering.answer(&json!({ "behavior": "deny" })),
            Ok(json!({ "action": "decline" }))
        );
        let mut other = approval.clone();
        other["_meta"]["codex_approval_kind"] = json!("tool_suggestion");
        let other = asked(&other);
        assert!(other.is_empty());
        assert_eq!(other.answering.withdrawn(), json!({ "action": "cancel" }));
    }
}
