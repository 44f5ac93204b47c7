//! An MCP server's form (`mcpServer/elicitation/request`: MCP's `elicitation/create`, which
//! Codex passes on for the servers the person configured) as Vyre's question ask: one question
//! per field, answered on every surface as Codex's own questions are (`questions.rs`).
//!
//! - a choice (`enum`, or `oneOf` of `{const, title}`) offers its titles and answers its value;
//!   several (`type: array` of such items) are picked together;
//! - a yes-or-no (`boolean`) offers Yes and No;
//! - text and numbers are the person's own words (a number that does not read as one, or an
//!   integer with a fraction, is left out);
//! - a field that is not required can be left empty, as its own choice;
//! - a form with no fields, and a link to open (`mode: url`), is one question to go on or not.
//!
//! Allowed, the server gets `{action: accept, content}`; denied, `decline`; withdrawn (the turn
//! interrupted), `cancel`. MCP forbids a server to ask for secrets in a form; an answer here is
//! kept in the thread's timeline like any other.
//!
//! Codex also asks through this request whether an MCP server's tool may run
//! (`_meta.codex_approval_kind: mcp_tool_call`): that is a tool ask, `mcp__<server>__<tool>`
//! with the call's arguments, as Claude Code's is for an MCP tool. Codex's other kinds (an app
//! to install, ...) are not put to the person: cancelled.

use serde_json::{Map, Value, json};

use super::questions::{Answering, Asked};

/// The choice that leaves a field that is not required empty.
const LEAVE_EMPTY: &str = "Leave empty";
/// The two choices of a form with nothing to fill in.
const GO_ON: &str = "Go on";
const DECLINE: &str = "Decline";

/// One field of the form, as asked.
#[derive(Debug, PartialEq)]
pub struct Field {
    /// The field's name in the content.
    name: String,
    /// The question's words (the answers are keyed by them).
    question: String,
    kind: Kind,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Text,
    Number {
        integer: bool,
    },
    Boolean,
    /// Each choice's label and the value it answers.
    Choice {
        many: bool,
        choices: Vec<(String, Value)>,
    },
    /// Nothing to fill in: go on or not.
    Confirm,
}

/// The form as one ask.
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
    let schema = &params["requestedSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut fields = vec![];
    let mut questions = vec![];
    let url = params["mode"] == "url";
    // A link has no fields to fill in, whatever schema comes with it.
    let properties = schema["properties"].as_object().filter(|_| !url);
    for (name, property) in properties.into_iter().flatten() {
        let kind = kind_of(property);
        let title = property["title"].as_str().unwrap_or(name);
        let mut question = match property["description"].as_str() {
            Some(d) if !d.trim().is_empty() => format!("{title}: {d}"),
            _ => title.to_string(),
        };
        if questions
            .iter()
            .any(|q: &Value| q["question"] == question.as_str())
        {
            question = format!("{question} ({name})");
        }
        let mut options: Vec<Value> = match &kind {
            Kind::Boolean => vec![option("Yes"), option("No")],
            Kind::Choice { choices, .. } => choices.iter().map(|(l, _)| option(l)).collect(),
            _ => vec![],
        };
        if !required.contains(&name.as_str()) {
            options.push(option(LEAVE_EMPTY));
        }
        let many = matches!(kind, Kind::Choice { many: true, .. });
        questions.push(json!({ "question": question, "header": title, "options": options, "multiSelect": many }));
        fields.push(Field {
            name: name.clone(),
            question,
            kind,
        });
    }
    if fields.is_empty() {
        let question = match params["url"].as_str().filter(|_| url) {
            Some(link) => format!("{message}\nOpen {link}, then go on."),
            None => message.to_string(),
        };
        questions.push(json!({ "question": question, "header": server,
                               "options": [option(GO_ON), option(DECLINE)], "multiSelect": false }));
        fields.push(Field {
            name: String::new(),
            question,
            kind: Kind::Confirm,
        });
    }
    Asked {
        input: json!({ "questions": questions }),
        answering: Answering::Form(fields),
        note: Some(format!("{server} (an MCP server) asks: {message}")),
        tool: format!("{server} (MCP form)"),
        kind: "question",
    }
}

fn option(label: &str) -> Value {
    json!({ "label": label, "description": "" })
}

fn kind_of(property: &Value) -> Kind {
    let choices = |p: &Value| -> Option<Vec<(String, Value)>> {
        if let Some(one_of) = p["oneOf"].as_array().or(p["anyOf"].as_array()) {
            let titled: Vec<(String, Value)> = one_of
                .iter()
                .filter_map(|o| {
                    let value = o.get("const")?.clone();
                    let label = o["title"].as_str().map(String::from);
                    Some((label.unwrap_or_else(|| plain(&value)), value))
                })
                .collect();
            return (!titled.is_empty()).then_some(titled);
        }
        let values = p["enum"].as_array()?;
        let names = p["enumNames"].as_array();
        Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let label = names.and_then(|n| n.get(i)).and_then(Value::as_str);
                    (
                        label.map(String::from).unwrap_or_else(|| plain(v)),
                        v.clone(),
                    )
                })
                .collect(),
        )
    };
    match property["type"].as_str() {
        Some("boolean") => Kind::Boolean,
        Some("number") => Kind::Number { integer: false },
        Some("integer") => Kind::Number { integer: true },
        Some("array") => match choices(&property["items"]) {
            Some(choices) => Kind::Choice {
                many: true,
                choices,
            },
            None => Kind::Text,
        },
        _ => match choices(property) {
            Some(choices) => Kind::Choice {
                many: false,
                choices,
            },
            None => Kind::Text,
        },
    }
}

/// A value as a label: a string as it is, anything else as JSON.
fn plain(v: &Value) -> String {
    v.as_str()
        .map(String::from)
        .unwrap_or_else(|| v.to_string())
}

/// The server's answer, from Vyre's answer to the ask (`{behavior, updatedInput: {answers:
/// {<question's words>: <answer>}}}`).
pub fn content(fields: &[Field], response: &Value) -> Value {
    if response["behavior"] != "allow" {
        return json!({ "action": "decline" });
    }
    let given = &response["updatedInput"]["answers"];
    let mut content = Map::new();
    for field in fields {
        let Some(answer) = given[field.question.as_str()]
            .as_str()
            .map(str::trim)
            .filter(|a| !a.is_empty() && *a != LEAVE_EMPTY)
        else {
            continue;
        };
        let value = match &field.kind {
            Kind::Confirm if answer == GO_ON => continue,
            Kind::Confirm => return json!({ "action": "decline" }),
            Kind::Text => Some(json!(answer)),
            Kind::Boolean => match answer {
                "Yes" => Some(json!(true)),
                "No" => Some(json!(false)),
                _ => None,
            },
            Kind::Number { integer: true } => answer.parse::<i64>().ok().map(|n| json!(n)),
            Kind::Number { integer: false } => answer
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(|n| json!(n)),
            Kind::Choice { many, choices } => {
                let pick = |label: &str| {
                    choices
                        .iter()
                        .find(|(l, v)| l == label || v.as_str() == Some(label))
                        .map(|(_, v)| v.clone())
                };
                if *many {
                    let picked: Vec<Value> = answer.split(", ").filter_map(pick).collect();
                    (!picked.is_empty()).then_some(Value::Array(picked))
                } else {
                    pick(answer)
                }
            }
        };
        if let Some(value) = value {
            content.insert(field.name.clone(), value);
        }
    }
    json!({ "action": "accept", "content": content })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Value {
        json!({ "threadId": "t", "turnId": "u", "serverName": "tables", "mode": "form",
            "message": "Book a table",
            "requestedSchema": { "type": "object", "required": ["day", "seats"], "properties": {
                "day": { "type": "string", "title": "Day", "enum": ["mon", "tue"], "enumNames": ["Monday", "Tuesday"] },
                "seats": { "type": "integer", "title": "Seats", "description": "How many" },
                "window": { "type": "boolean", "title": "Window" },
                "extras": { "type": "array", "title": "Extras", "items": { "anyOf": [
                    { "const": "cake", "title": "Cake" }, { "const": "wine", "title": "Wine" } ] } },
                "note": { "type": "string" }
            } } })
    }

    fn allowed(answers: Value) -> Value {
        json!({ "behavior": "allow", "updatedInput": { "questions": [], "answers": answers } })
    }

    #[test]
    fn each_field_is_a_question_with_its_choices_and_optional_ones_can_be_left_empty() {
        let a = asked(&form());
        let q = a.input["questions"].as_array().unwrap();
        let by = |header: &str| q.iter().find(|q| q["header"] == header).unwrap().clone();
        let labels = |q: &Value| -> Vec<String> {
            q["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["label"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(labels(&by("Day")), ["Monday", "Tuesday"]);
        assert_eq!(by("Seats")["question"], "Seats: How many");
        assert!(
            labels(&by("Seats")).is_empty(),
            "required: no way to leave it"
        );
        assert_eq!(labels(&by("Window")), ["Yes", "No", LEAVE_EMPTY]);
        assert_eq!(labels(&by("Extras")), ["Cake", "Wine", LEAVE_EMPTY]);
        assert_eq!(by("Extras")["multiSelect"], true);
        assert_eq!(labels(&by("note")), [LEAVE_EMPTY]);
        assert!(a.tool.contains("tables"));
        assert!(a.note.unwrap().contains("Book a table"));
    }

    #[test]
    fn the_answers_go_back_as_the_forms_values_and_what_does_not_read_is_left_out() {
        let Answering::Form(fields) = asked(&form()).answering else {
            panic!("a form")
        };
        let answered = content(
            &fields,
            &allowed(
                json!({ "Day": "Tuesday", "Seats: How many": "4", "Window": "No",
                             "Extras": "Cake, Wine", "note": "Leave empty" }),
            ),
        );
        assert_eq!(
            answered,
            json!({ "action": "accept", "content": {
                "day": "tue", "seats": 4, "window": false, "extras": ["cake", "wine"] } })
        );
        let odd = content(
            &fields,
            &allowed(json!({ "Day": "Sunday", "Seats: How many": "2.5", "note": " by the door " })),
        );
        assert_eq!(
            odd,
            json!({ "action": "accept", "content": { "note": "by the door" } })
        );
        let denied = json!({ "behavior": "deny", "message": "no" });
        assert_eq!(content(&fields, &denied), json!({ "action": "decline" }));
        assert_eq!(
            Answering::Form(fields).withdrawn(),
            json!({ "action": "cancel" })
        );
    }

    #[test]
    fn a_form_without_fields_or_a_link_is_one_question_to_go_on_or_not() {
        let link = json!({ "serverName": "login", "mode": "url", "elicitationId": "e",
                           "message": "Sign in", "url": "https://example.test/auth" });
        let a = asked(&link);
        let q = &a.input["questions"][0];
        assert!(
            q["question"]
                .as_str()
                .unwrap()
                .contains("https://example.test/auth")
        );
        let Answering::Form(fields) = a.answering else {
            panic!("a form")
        };
        let question = q["question"].as_str().unwrap();
        assert_eq!(
            content(&fields, &allowed(json!({ question: GO_ON }))),
            json!({ "action": "accept", "content": {} })
        );
        assert_eq!(
            content(&fields, &allowed(json!({ question: DECLINE }))),
            json!({ "action": "decline" })
        );
        let empty = json!({ "serverName": "s", "mode": "form", "message": "Go ahead?",
                            "requestedSchema": { "type": "object", "properties": {} } });
        assert_eq!(asked(&empty).input["questions"][0]["question"], "Go ahead?");
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
            json!({ "action": "accept", "content": {} })
        );
        assert_eq!(
            a.answering.answer(&json!({ "behavior": "deny" })),
            json!({ "action": "decline" })
        );
        let mut other = approval.clone();
        other["_meta"]["codex_approval_kind"] = json!("tool_suggestion");
        let other = asked(&other);
        assert!(other.is_empty());
        assert_eq!(other.answering.withdrawn(), json!({ "action": "cancel" }));
    }
}
