//! An MCP server's form (MCP's `elicitation/create`) as Vyre's question ask, for every provider
//! that passes one on: Claude Code's `elicitation` control request, Codex's
//! `mcpServer/elicitation/request`. One question per field, answered on every surface as the
//! programs' own questions are:
//!
//! - a choice (`enum`, or `oneOf` of `{const, title}`) offers its titles and answers its value;
//!   several (`type: array` of such items) are picked together;
//! - a yes-or-no (`boolean`) offers Yes and No;
//! - text and numbers are the person's own words;
//! - a field that is not required can be left empty, as its own choice;
//! - a form with no fields, and a link to open (`mode: url`), is one question to go on or not.
//!
//! Allowed, the server gets `{action: accept, content}`; denied, `decline`; withdrawn (the turn
//! interrupted), `cancel`. An answer that does not fit its field (a number in words, a choice
//! not offered, a required field left empty) is refused with what would fit, and the ask stays
//! open: the server never gets a form the person did not mean. MCP forbids a server to ask for
//! secrets in a form; an answer here is kept in the thread's timeline like any other.

use serde_json::{Map, Value, json};

/// The choice that leaves a field that is not required empty.
const LEAVE_EMPTY: &str = "Leave empty";
/// The two choices of a form with nothing to fill in.
const GO_ON: &str = "Go on";
const DECLINE: &str = "Decline";

/// What the server asks, whichever program passes it on.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The server's name, as the person configured it.
    pub server: &'a str,
    pub message: &'a str,
    /// `mode: url`: a link to open (`url`) rather than fields to fill in.
    pub link: bool,
    pub url: Option<&'a str>,
    /// The form's JSON schema (`{type: object, properties, required}`).
    pub schema: &'a Value,
    /// The fields in the server's order, when the program says it (Claude Code's
    /// `property_order`); otherwise by name.
    pub order: Option<&'a Value>,
}

/// The form as one question ask: the ask's input (AskUserQuestion's `{questions}`), how its
/// answers become the form's content, and who asks.
#[derive(Debug, PartialEq)]
pub struct Form {
    pub input: Value,
    pub fields: Vec<Field>,
    /// What the ask says besides the questions: which server asks, and its message.
    pub note: String,
    /// The ask's tool: the server's form.
    pub tool: String,
}

/// One field of the form, as asked.
#[derive(Debug, PartialEq)]
pub struct Field {
    /// The field's name in the content.
    name: String,
    /// The question's words (the answers are keyed by them).
    question: String,
    required: bool,
    kind: Kind,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Text,
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
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
pub fn form(r: &Request) -> Form {
    let required: Vec<&str> = r.schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut fields = vec![];
    let mut questions = vec![];
    // A link has no fields to fill in, whatever schema comes with it.
    let properties = r.schema["properties"].as_object().filter(|_| !r.link);
    for (name, property) in in_order(properties, r.order) {
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
        let required = required.contains(&name);
        if !required {
            options.push(option(LEAVE_EMPTY));
        }
        let many = matches!(kind, Kind::Choice { many: true, .. });
        questions.push(json!({ "question": question, "header": title, "options": options, "multiSelect": many }));
        fields.push(Field {
            name: name.to_string(),
            question,
            required,
            kind,
        });
    }
    // A server that says nothing still gets a question with words in it.
    let message = match r.message.trim() {
        "" => format!("{} asks whether to go on.", r.server),
        said => said.to_string(),
    };
    if fields.is_empty() {
        let question = match r.url.filter(|_| r.link) {
            Some(link) => format!("{message}\nOpen {link}, then go on."),
            None => message.clone(),
        };
        questions.push(json!({ "question": question, "header": r.server,
                               "options": [option(GO_ON), option(DECLINE)], "multiSelect": false }));
        fields.push(Field {
            name: String::new(),
            question,
            required: false,
            kind: Kind::Confirm,
        });
    }
    Form {
        input: json!({ "questions": questions }),
        fields,
        note: format!("{} (an MCP server) asks: {message}", r.server),
        tool: format!("{} (MCP form)", r.server),
    }
}

/// The form's fields, in the server's order where it is given (any it leaves out after, by
/// name).
fn in_order<'a>(
    properties: Option<&'a Map<String, Value>>,
    order: Option<&'a Value>,
) -> Vec<(&'a str, &'a Value)> {
    let Some(properties) = properties else {
        return vec![];
    };
    let mut out: Vec<(&str, &Value)> = order
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|name| properties.get_key_value(name))
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    for (name, property) in properties {
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name, property));
        }
    }
    out
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
    let number = |integer| Kind::Number {
        integer,
        min: property["minimum"].as_f64(),
        max: property["maximum"].as_f64(),
    };
    match property["type"].as_str() {
        Some("boolean") => Kind::Boolean,
        Some("number") => number(false),
        Some("integer") => number(true),
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
/// {<question's words>: <answer>}}}`); an answer that does not fit its field is refused, in
/// words that say what would.
pub fn content(fields: &[Field], response: &Value) -> Result<Value, String> {
    if response["behavior"] != "allow" {
        return Ok(json!({ "action": "decline" }));
    }
    let given = &response["updatedInput"]["answers"];
    let mut content = Map::new();
    for field in fields {
        let answer = given[field.question.as_str()]
            .as_str()
            .map(str::trim)
            .filter(|a| !a.is_empty() && *a != LEAVE_EMPTY);
        let Some(answer) = answer else {
            if field.required {
                return Err(format!("\"{}\" needs an answer.", field.question));
            }
            continue;
        };
        if let Kind::Confirm = field.kind {
            match answer {
                GO_ON => continue,
                DECLINE => return Ok(json!({ "action": "decline" })),
                _ => return Err(format!("Answer \"{GO_ON}\" or \"{DECLINE}\".")),
            }
        }
        let value = field
            .value(answer)
            .map_err(|fits| format!("\"{}\" takes {fits}, not \"{answer}\".", field.question))?;
        content.insert(field.name.clone(), value);
    }
    Ok(json!({ "action": "accept", "content": content }))
}

impl Field {
    /// The field's value from the person's answer, or what an answer to it should be.
    fn value(&self, answer: &str) -> Result<Value, String> {
        match &self.kind {
            Kind::Text | Kind::Confirm => Ok(json!(answer)),
            Kind::Boolean => match answer.to_lowercase().as_str() {
                "yes" | "true" => Ok(json!(true)),
                "no" | "false" => Ok(json!(false)),
                _ => Err("Yes or No".into()),
            },
            Kind::Number { integer, min, max } => {
                let bounds = match (min, max) {
                    (Some(lo), Some(hi)) => format!(" from {lo} to {hi}"),
                    (Some(lo), None) => format!(" of at least {lo}"),
                    (None, Some(hi)) => format!(" of at most {hi}"),
                    (None, None) => String::new(),
                };
                let wanted = match integer {
                    true => format!("a whole number{bounds}"),
                    false => format!("a number{bounds}"),
                };
                let fits = |n: f64| min.is_none_or(|lo| n >= lo) && max.is_none_or(|hi| n <= hi);
                let n = match integer {
                    true => answer
                        .parse::<i64>()
                        .ok()
                        .filter(|n| fits(*n as f64))
                        .map(|n| json!(n)),
                    false => answer
                        .parse::<f64>()
                        .ok()
                        .filter(|n| n.is_finite() && fits(*n))
                        .map(|n| json!(n)),
                };
                n.ok_or(wanted)
            }
            Kind::Choice { many, choices } => {
                let pick = |label: &str| {
                    choices
                        .iter()
                        .find(|(l, v)| l == label || v.as_str() == Some(label))
                        .map(|(_, v)| v.clone())
                };
                let offered = || {
                    let labels: Vec<&str> = choices.iter().map(|(l, _)| l.as_str()).collect();
                    let of = if *many { "some of" } else { "one of" };
                    format!("{of} {}", labels.join(", "))
                };
                if *many {
                    answer
                        .split(", ")
                        .map(pick)
                        .collect::<Option<Vec<Value>>>()
                        .map(Value::Array)
                        .ok_or_else(offered)
                } else {
                    pick(answer).ok_or_else(offered)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({ "type": "object", "required": ["day", "seats"], "properties": {
            "day": { "type": "string", "title": "Day", "enum": ["mon", "tue"], "enumNames": ["Monday", "Tuesday"] },
            "seats": { "type": "integer", "title": "Seats", "description": "How many", "minimum": 1, "maximum": 12 },
            "window": { "type": "boolean", "title": "Window" },
            "extras": { "type": "array", "title": "Extras", "items": { "anyOf": [
                { "const": "cake", "title": "Cake" }, { "const": "wine", "title": "Wine" } ] } },
            "note": { "type": "string" }
        } })
    }

    fn asked(schema: &Value, order: Option<&Value>) -> Form {
        form(&Request {
            server: "tables",
            message: "Book a table",
            link: false,
            url: None,
            schema,
            order,
        })
    }

    fn allowed(answers: Value) -> Value {
        json!({ "behavior": "allow", "updatedInput": { "questions": [], "answers": answers } })
    }

    #[test]
    fn each_field_is_a_question_with_its_choices_and_optional_ones_can_be_left_empty() {
        let a = asked(&schema(), None);
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
        assert!(a.note.contains("Book a table"));
    }

    #[test]
    fn the_fields_come_in_the_servers_order_where_the_program_gives_it() {
        let headers = |f: &Form| -> Vec<String> {
            f.input["questions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| q["header"].as_str().unwrap().to_string())
                .collect()
        };
        let order = json!(["seats", "day", "gone"]);
        assert_eq!(
            headers(&asked(&schema(), Some(&order))),
            ["Seats", "Day", "Extras", "note", "Window"],
            "the given order first, the rest by name, a name with no field left out"
        );
        assert_eq!(
            headers(&asked(&schema(), None)),
            ["Day", "Extras", "note", "Seats", "Window"]
        );
    }

    #[test]
    fn the_answers_go_back_as_the_forms_values() {
        let fields = asked(&schema(), None).fields;
        let answered = content(
            &fields,
            &allowed(
                json!({ "Day": "Tuesday", "Seats: How many": "4", "Window": "no",
                             "Extras": "Cake, Wine", "note": " by the door " }),
            ),
        );
        assert_eq!(
            answered,
            Ok(json!({ "action": "accept", "content": {
                "day": "tue", "seats": 4, "window": false, "extras": ["cake", "wine"], "note": "by the door" } }))
        );
        let least = content(
            &fields,
            &allowed(json!({ "Day": "mon", "Seats: How many": "12", "Window": "Leave empty" })),
        );
        assert_eq!(
            least,
            Ok(json!({ "action": "accept", "content": { "day": "mon", "seats": 12 } }))
        );
        let denied = json!({ "behavior": "deny", "message": "no" });
        assert_eq!(
            content(&fields, &denied),
            Ok(json!({ "action": "decline" }))
        );
    }

    #[test]
    fn an_answer_that_does_not_fit_its_field_is_refused_with_what_would() {
        let fields = asked(&schema(), None).fields;
        let refused = |answers: Value| content(&fields, &allowed(answers)).unwrap_err();
        let ok = json!({ "Day": "Monday", "Seats: How many": "2" });
        let with = |k: &str, v: &str| {
            let mut a = ok.clone();
            a[k] = json!(v);
            a
        };
        assert!(content(&fields, &allowed(ok.clone())).is_ok());
        let why = refused(with("Seats: How many", "two"));
        assert!(
            why.contains("a whole number from 1 to 12") && why.contains("\"two\""),
            "{why}"
        );
        assert!(refused(with("Seats: How many", "2.5")).contains("whole number"));
        assert!(refused(with("Seats: How many", "13")).contains("from 1 to 12"));
        let why = refused(with("Day", "Sunday"));
        assert!(why.contains("one of Monday, Tuesday"), "{why}");
        assert!(refused(with("Window", "maybe")).contains("Yes or No"));
        assert!(refused(with("Extras", "Cake, Beer")).contains("some of Cake, Wine"));
        let why = refused(json!({ "Day": "Monday" }));
        assert!(
            why.contains("Seats: How many") && why.contains("needs an answer"),
            "{why}"
        );
        assert!(refused(with("Day", LEAVE_EMPTY)).contains("needs an answer"));
    }

    #[test]
    fn a_form_without_fields_or_a_link_is_one_question_to_go_on_or_not() {
        let schema = json!({ "type": "object", "properties": { "ignored": { "type": "string" } } });
        let link = form(&Request {
            server: "login",
            message: "Sign in",
            link: true,
            url: Some("https://example.test/auth"),
            schema: &schema,
            order: None,
        });
        let q = &link.input["questions"][0];
        let question = q["question"].as_str().unwrap();
        assert!(question.contains("https://example.test/auth"), "{question}");
        assert_eq!(link.fields.len(), 1, "a link's schema is not asked");
        assert_eq!(
            content(&link.fields, &allowed(json!({ question: GO_ON }))),
            Ok(json!({ "action": "accept", "content": {} }))
        );
        assert_eq!(
            content(&link.fields, &allowed(json!({ question: DECLINE }))),
            Ok(json!({ "action": "decline" }))
        );
        assert!(content(&link.fields, &allowed(json!({ question: "hmm" }))).is_err());
        let empty = json!({ "type": "object", "properties": {} });
        let go = asked(&empty, None);
        assert_eq!(go.input["questions"][0]["question"], "Book a table");
        let silent = form(&Request {
            server: "tables",
            message: " ",
            link: false,
            url: None,
            schema: &empty,
            order: None,
        });
        assert_eq!(
            silent.input["questions"][0]["question"],
            "tables asks whether to go on."
        );
    }
}
