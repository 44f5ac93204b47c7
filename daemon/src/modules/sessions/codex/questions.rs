//! Codex's questions to the person (`item/tool/requestUserInput`, its `request_user_input` tool,
//! offered in its default mode by `features.default_mode_request_user_input`) as Vyre's
//! question ask: the kind Claude Code's AskUserQuestion raises, shown and answered the same way
//! on every surface (choices, or the person's own words). An MCP server's form is asked the same
//! way (`forms.rs`).
//!
//! A question Codex marks secret is not put to the person here: the answer would be kept in the
//! thread's timeline and events like any other. It gets no answer, and the ask says so.

use serde_json::{Map, Value, json};

use super::forms;
use crate::kernel::contracts::provider::Question;
use crate::modules::sessions::mcp_forms::{self, Field};

/// Each question's words and Codex's id for it.
pub type Ids = Vec<(String, String)>;

/// How the person's answer goes back to Codex.
#[derive(Debug, PartialEq)]
pub enum Answering {
    /// `item/tool/requestUserInput`: each question's answer by Codex's id for it.
    Questions(Ids),
    /// `mcpServer/elicitation/request`: the form's content, or a decline.
    Form(Vec<Field>),
    /// The same request when Codex asks whether an MCP server's tool may run: a yes or no.
    Tool,
}

impl Answering {
    /// Codex's answer to the request, from Vyre's answer to the ask; a form's answer that
    /// does not fit its field is refused, in words that say what would.
    pub fn answer(&self, response: &Value) -> Result<Value, String> {
        Ok(match self {
            Answering::Questions(ids) => answers(ids, response),
            Answering::Form(fields) => return mcp_forms::content(fields, response),
            Answering::Tool => match response["behavior"] == "allow" {
                true => json!({ "action": "accept", "content": {} }),
                false => json!({ "action": "decline" }),
            },
        })
    }

    /// Codex's answer when the ask is withdrawn (the turn interrupted): nothing answered.
    pub fn withdrawn(&self) -> Value {
        match self {
            Answering::Questions(_) => json!({ "answers": {} }),
            Answering::Form(_) | Answering::Tool => json!({ "action": "cancel" }),
        }
    }
}

/// What Codex asked, as Vyre's ask shows it.
#[derive(Debug, PartialEq)]
pub struct Asked {
    /// AskUserQuestion's input: `{questions: [{question, header, options, multiSelect}]}`.
    pub input: Value,
    /// How the answer goes back.
    pub answering: Answering,
    /// What the ask says besides the questions (secret questions left unasked, who asks).
    pub note: Option<String>,
    /// The ask's tool: what asks.
    pub tool: String,
    /// The ask's kind: `question`, or `tool` for a tool that may run or not.
    pub kind: &'static str,
}

impl Asked {
    /// Nothing is left to put to the person (every question was secret, or none was given).
    pub fn is_empty(&self) -> bool {
        match &self.answering {
            Answering::Questions(ids) => ids.is_empty(),
            Answering::Form(fields) => fields.is_empty(),
            Answering::Tool => false,
        }
    }

    /// The ask, under the provider's request id `request`, for Codex's item `item`; and how
    /// its answer goes back.
    pub fn question(self, request: String, item: Option<&str>) -> (Question, Answering) {
        let question = Question {
            request,
            kind: self.kind.into(),
            tool: self.tool,
            tool_use_id: item.map(String::from),
            input: self.input,
            description: self.note,
            suggestions: json!([]),
        };
        (question, self.answering)
    }
}

/// What Codex puts to the person by `method` (its questions, an MCP server's form or tool), as
/// one ask; `None` for a request that is not one of those.
pub fn of(method: &str, params: &Value) -> Option<Asked> {
    match method {
        "item/tool/requestUserInput" => Some(asked(params)),
        "mcpServer/elicitation/request" => Some(forms::asked(params)),
        _ => None,
    }
}

/// The request's questions as one ask.
pub fn asked(params: &Value) -> Asked {
    let mut questions = vec![];
    let mut ids = vec![];
    let mut secret = vec![];
    for q in params["questions"].as_array().into_iter().flatten() {
        let (Some(id), Some(text)) = (q["id"].as_str(), q["question"].as_str()) else {
            continue;
        };
        let header = q["header"].as_str().unwrap_or_default();
        if q["isSecret"] == true {
            secret.push(if header.is_empty() { text } else { header });
            continue;
        }
        let options: Vec<Value> = q["options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| {
                let label = o["label"].as_str()?;
                Some(json!({ "label": label, "description": o["description"].as_str().unwrap_or_default() }))
            })
            .collect();
        questions.push(
            json!({ "question": text, "header": header, "options": options, "multiSelect": false }),
        );
        ids.push((text.to_string(), id.to_string()));
    }
    let note = (!secret.is_empty()).then(|| {
        format!(
            "Codex also asked for something secret ({}), which Vyre does not take in a chat: it gets no answer. Put it in the vault instead.",
            secret.join(", ")
        )
    });
    Asked {
        input: json!({ "questions": questions }),
        answering: Answering::Questions(ids),
        note,
        tool: "request_user_input".into(),
        kind: "question",
    }
}

/// Codex's answer to the request, from Vyre's answer to the ask (`{behavior, updatedInput:
/// {answers: {<question's words>: <answer>}}}`): each question's answer as the person gave it,
/// none for a question left blank, and none at all when the person declined.
pub fn answers(ids: &[(String, String)], response: &Value) -> Value {
    let mut out = Map::new();
    if response["behavior"] == "allow" {
        let given = &response["updatedInput"]["answers"];
        for (text, id) in ids {
            if let Some(answer) = given[text.as_str()]
                .as_str()
                .filter(|a| !a.trim().is_empty())
            {
                out.insert(id.clone(), json!({ "answers": [answer] }));
            }
        }
    }
    json!({ "answers": out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Value {
        json!({ "threadId": "t", "turnId": "u", "itemId": "i", "questions": [
            { "id": "db", "header": "Database", "question": "Which database?", "isOther": true, "isSecret": false,
              "options": [{ "label": "SQLite (Recommended)", "description": "Embedded" }, { "label": "Postgres", "description": "A server" }] },
            { "id": "pw", "header": "Password", "question": "The admin password?", "isOther": true, "isSecret": true, "options": null },
            { "id": "name", "header": "", "question": "What name?", "isOther": true, "isSecret": false, "options": null }
        ] })
    }

    #[test]
    fn codex_questions_are_asked_as_vyre_asks_questions_and_secrets_are_not() {
        let a = asked(&request());
        assert_eq!(
            a.input,
            json!({ "questions": [
                { "question": "Which database?", "header": "Database", "multiSelect": false,
                  "options": [{ "label": "SQLite (Recommended)", "description": "Embedded" }, { "label": "Postgres", "description": "A server" }] },
                { "question": "What name?", "header": "", "multiSelect": false, "options": [] }
            ] })
        );
        assert_eq!(
            a.answering,
            Answering::Questions(vec![
                ("Which database?".to_string(), "db".to_string()),
                ("What name?".to_string(), "name".to_string())
            ])
        );
        let note = a.note.unwrap();
        assert!(
            note.contains("Password") && note.contains("no answer"),
            "{note}"
        );
        assert!(!a.input.to_string().contains("admin password"));

        let only_secret = json!({ "questions": [request()["questions"][1].clone()] });
        assert!(asked(&only_secret).is_empty());
        assert!(asked(&json!({})).is_empty());
    }

    #[test]
    fn the_persons_answers_go_back_by_codexs_ids_and_a_denial_answers_nothing() {
        let Answering::Questions(ids) = asked(&request()).answering else {
            panic!("questions")
        };
        let allowed = json!({ "behavior": "allow", "updatedInput": { "questions": [], "answers": {
            "Which database?": "Postgres", "What name?": "  ", "The admin password?": "hunter2" } } });
        assert_eq!(
            answers(&ids, &allowed),
            json!({ "answers": { "db": { "answers": ["Postgres"] } } })
        );
        let denied = json!({ "behavior": "deny", "message": "not now" });
        assert_eq!(answers(&ids, &denied), json!({ "answers": {} }));
    }
}
