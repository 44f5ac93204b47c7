//! Module tools as commands: `vyre <module> <tool> [--flag value ...]`.
//!
//! The flags come from the tool's input schema, fetched from the running vyred, so a module
//! gets its commands without writing any CLI code. Required string fields may also be given
//! positionally, in the schema's order (`vyre devices add phone`). `--json '{...}'` gives the
//! whole input at once.

use serde_json::{Map, Value};

use super::fail;
use crate::surfaces::client::Client;

pub async fn list(client: &Client, as_json: bool) -> i32 {
    let tools = match client.get("/v1/tools").await {
        Ok(Value::Array(t)) => t,
        Ok(_) => return fail("unexpected answer from /v1/tools"),
        Err(e) => return fail(&e.to_string()),
    };
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&tools).unwrap_or_default()
        );
        return 0;
    }
    for t in &tools {
        let name = t["name"].as_str().unwrap_or("?");
        let command = if t["cli"] == true {
            format!("vyre {}", name.replacen('.', " ", 1))
        } else {
            "(API only)".to_string()
        };
        let person = if t["person_only"] == true {
            " [person only]"
        } else {
            ""
        };
        println!(
            "{name:<24} {command:<28} {}{person}",
            t["description"].as_str().unwrap_or("")
        );
    }
    0
}

pub async fn run(client: &Client, args: &[String]) -> i32 {
    let module = &args[0];
    let unknown = || {
        usage(&format!(
            "unknown command {module:?}; `vyre --help` lists the built-in commands and `vyre tools` every module tool"
        ))
    };
    // A word that cannot be a module's name names none (and needs no escaping in the query);
    // asking vyred for only that module's tools keeps a command's work to one module's schemas.
    if !crate::kernel::module::valid_module_name(module) {
        return unknown();
    }
    let tools = match client.get(&format!("/v1/tools?module={module}")).await {
        Ok(Value::Array(t)) => t,
        Ok(_) => return fail("unexpected answer from /v1/tools"),
        Err(e) => return fail(&e.to_string()),
    };
    let of_module: Vec<&Value> = tools
        .iter()
        .filter(|t| t["module"] == module.as_str() && t["cli"] == true)
        .collect();
    if of_module.is_empty() {
        return unknown();
    }
    let Some(tool) = args.get(1).filter(|a| !a.starts_with('-')) else {
        println!("vyre {module} <tool>:");
        for t in &of_module {
            let name = t["name"].as_str().unwrap_or("?");
            println!(
                "  {:<16} {}",
                name.split_once('.')
                    .map(|x| x.1)
                    .unwrap_or(name)
                    .replace('_', "-"),
                t["description"].as_str().unwrap_or("")
            );
        }
        return if args.len() > 1 { 0 } else { 2 };
    };
    // Words are written with hyphens, as options are: `vyre names use-domain`.
    let full = format!("{module}.{}", tool.replace('-', "_"));
    let Some(spec) = of_module.iter().find(|t| t["name"] == full.as_str()) else {
        return usage(&format!(
            "{module} has no command {tool:?}; `vyre {module}` lists them"
        ));
    };
    let rest = &args[2..];
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        print!("{}", help(spec));
        return 0;
    }
    let input = match input_from_args(&spec["input_schema"], rest) {
        Ok(input) => input,
        Err(e) => return usage(&format!("{e}\n{}", help(spec))),
    };
    match client.call(&full, &input).await {
        Ok(data) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&data).unwrap_or_default()
            );
            0
        }
        Err(e) => fail(&e.to_string()),
    }
}

fn usage(message: &str) -> i32 {
    eprintln!("vyre: {message}");
    2
}

/// Properties of an object schema in their declared order, with whether each is required.
fn properties(schema: &Value) -> Vec<(String, Value, bool)> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone(), required.contains(&k.as_str())))
        .collect()
}

/// The JSON types a property accepts (`"type": "x"`, `"type": ["x", "null"]`, or the members of
/// an `anyOf`/`oneOf`, where a `$ref` is an object given as JSON on the command line).
fn types_of(prop: &Value) -> Vec<String> {
    match &prop["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => {
            let members = prop["anyOf"].as_array().or(prop["oneOf"].as_array());
            let mut types: Vec<String> = members
                .into_iter()
                .flatten()
                .flat_map(|m| {
                    if m.get("$ref").is_some() {
                        vec!["object".to_string()]
                    } else {
                        types_of(m)
                    }
                })
                .collect();
            types.dedup();
            if types.is_empty() {
                vec!["string".into(), "object".into()]
            } else {
                types
            }
        }
    }
}

fn help(spec: &Value) -> String {
    let name = spec["name"].as_str().unwrap_or("?");
    let mut out = format!(
        "vyre {} — {}\n",
        name.replacen('.', " ", 1),
        spec["description"].as_str().unwrap_or("")
    );
    let props = properties(&spec["input_schema"]);
    if props.is_empty() {
        out.push_str("  (no options)\n");
    }
    for (k, v, required) in props {
        let ty = types_of(&v)
            .into_iter()
            .filter(|t| t != "null")
            .collect::<Vec<_>>()
            .join("|");
        let desc = v["description"].as_str().unwrap_or("");
        let req = if required { " (required)" } else { "" };
        out.push_str(&format!(
            "  --{:<16} {ty:<8} {desc}{req}\n",
            k.replace('_', "-")
        ));
    }
    out.push_str("  --json '{...}'    the whole input as JSON\n");
    out
}

/// Build a tool's input from command-line words, guided by its input schema.
pub fn input_from_args(schema: &Value, args: &[String]) -> Result<Value, String> {
    let props = properties(schema);
    let mut input = Map::new();
    let mut positional: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(flag) = arg.strip_prefix("--") else {
            positional.push(arg);
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        if name == "json" {
            let text = match inline {
                Some(v) => v,
                None => args
                    .get(i)
                    .cloned()
                    .inspect(|_| i += 1)
                    .ok_or("--json needs a value")?,
            };
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => input.extend(m),
                Ok(_) => return Err("--json must be a JSON object".into()),
                Err(e) => return Err(format!("--json is not valid JSON: {e}")),
            }
            continue;
        }
        let key = name.replace('-', "_");
        let Some((_, prop, _)) = props.iter().find(|(k, _, _)| *k == key) else {
            return Err(format!("unknown option --{name}"));
        };
        let types = types_of(prop);
        if types.iter().any(|t| t == "boolean") && inline.is_none() {
            let explicit = args
                .get(i)
                .filter(|v| *v == "true" || *v == "false")
                .cloned();
            if explicit.is_some() {
                i += 1;
            }
            input.insert(key, Value::Bool(explicit.as_deref() != Some("false")));
            continue;
        }
        let raw = match inline {
            Some(v) => v,
            None => args
                .get(i)
                .cloned()
                .inspect(|_| i += 1)
                .ok_or(format!("--{name} needs a value"))?,
        };
        if types.iter().any(|t| t == "array") {
            let item_types = types_of(&prop["items"]);
            let value = convert(&raw, &item_types).map_err(|e| format!("--{name}: {e}"))?;
            match input.entry(key).or_insert_with(|| Value::Array(vec![])) {
                Value::Array(items) => items.push(value),
                _ => return Err(format!("--{name} given twice in different forms")),
            }
        } else {
            let value = convert(&raw, &types).map_err(|e| format!("--{name}: {e}"))?;
            input.insert(key, value);
        }
    }
    // Positional words fill the required fields not yet given, in the order the schema lists
    // them as required (the order of the input type's fields; `properties` is sorted by name).
    let free: Vec<&(String, Value, bool)> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|name| props.iter().find(|(k, _, _)| k == name))
        .filter(|(k, _, _)| !input.contains_key(k))
        .collect();
    // Words beyond the last field join it when it takes text (`vyre agents ask juno how are
    // you`), as a person would type them.
    let mut words: Vec<String> = positional.iter().map(|w| w.to_string()).collect();
    if words.len() > free.len()
        && let Some((_, prop, _)) = free.last()
        && types_of(prop).iter().any(|t| t == "string")
    {
        let tail = words.split_off(free.len().saturating_sub(1)).join(" ");
        words.push(tail);
    }
    let mut free = free.into_iter();
    for word in &words {
        let Some((key, prop, _)) = free.next() else {
            return Err(format!("unexpected argument {word:?}"));
        };
        input.insert(
            key.clone(),
            convert(word, &types_of(prop)).map_err(|e| format!("{key}: {e}"))?,
        );
    }
    Ok(Value::Object(input))
}

fn convert(raw: &str, types: &[String]) -> Result<Value, String> {
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("integer") || has("number") {
        if let Ok(v) = serde_json::from_str::<Value>(raw)
            && v.is_number()
        {
            return Ok(v);
        }
        if !has("string") {
            return Err(format!("{raw:?} is not a number"));
        }
    }
    if has("boolean") && !has("string") {
        return match raw {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("{raw:?} is not true or false")),
        };
    }
    // A field that takes an object as well as text (or any JSON: a tool's input) takes what
    // reads as a JSON object or array as one (`--input '{"command":"git push"}'`).
    if has("object")
        && raw.trim_start().starts_with(['{', '['])
        && let Ok(v) = serde_json::from_str::<Value>(raw)
    {
        return Ok(v);
    }
    if has("string") {
        return Ok(Value::String(raw.to_string()));
    }
    match serde_json::from_str(raw) {
        Ok(v) => Ok(v),
        // A word that is not JSON (`--projects '*'`) goes as a string; the tool's schema judges.
        Err(_) if has("object") => Ok(Value::String(raw.to_string())),
        Err(e) => Err(format!("{raw:?} is not valid JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn any_json_is_given_as_json_and_a_word_as_text() {
        let schema = serde_json::json!({ "type": "object", "properties": {
            "tool": { "type": "string" }, "input": true
        }, "required": ["tool", "input"] });
        let got =
            input_from_args(&schema, &words("--tool Bash --input {\"command\":\"ls\"}")).unwrap();
        assert_eq!(got["input"], serde_json::json!({ "command": "ls" }));
        let got = input_from_args(&schema, &words("--tool Bash --input plain")).unwrap();
        assert_eq!(got["input"], "plain");
        let got = input_from_args(&schema, &words("--tool {\"a\":1} --input x")).unwrap();
        assert_eq!(got["tool"], "{\"a\":1}", "a text field stays text");
    }

    #[test]
    fn an_optional_object_is_given_as_json() {
        let prop = json!({ "anyOf": [{ "$ref": "#/$defs/AgentAuth" }, { "type": "null" }] });
        let types = types_of(&prop);
        assert_eq!(types, vec!["object", "null"]);
        assert_eq!(
            convert(r#"{"mode":"api-key"}"#, &types).unwrap(),
            json!({ "mode": "api-key" })
        );
        assert_eq!(convert("*", &types).unwrap(), json!("*"));
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn flags_follow_the_schema() {
        let schema = json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": { "type": "string" },
                "limit": { "type": ["integer", "null"] },
                "types": { "type": "array", "items": { "type": "string" } },
                "dry_run": { "type": "boolean" }
            }
        });
        let input = input_from_args(
            &schema,
            &words("phone --limit 5 --types a.b --types c.d --dry-run"),
        )
        .unwrap();
        assert_eq!(
            input,
            json!({"name": "phone", "limit": 5, "types": ["a.b", "c.d"], "dry_run": true})
        );
        let input = input_from_args(&schema, &words("--json {\"name\":\"x\"} --limit=2")).unwrap();
        assert_eq!(input, json!({"name": "x", "limit": 2}));
        assert!(
            input_from_args(&schema, &words("--limit many"))
                .unwrap_err()
                .contains("not a number")
        );
        assert!(
            input_from_args(&schema, &words("--colour red"))
                .unwrap_err()
                .contains("unknown option")
        );
        assert_eq!(
            input_from_args(&schema, &words("my phone")).unwrap(),
            json!({ "name": "my phone" }),
            "the last text field takes the rest of the words"
        );
        let counted = json!({
            "type": "object",
            "required": ["n"],
            "properties": { "n": { "type": "integer" } }
        });
        assert!(
            input_from_args(&counted, &words("1 2"))
                .unwrap_err()
                .contains("unexpected argument")
        );
        // Two required fields take positional words in their declared order, not by name.
        let two = json!({
            "type": "object",
            "required": ["thread", "text"],
            "properties": { "text": { "type": "string" }, "thread": { "type": "string" } }
        });
        let input = input_from_args(&two, &words("t-1 hello")).unwrap();
        assert_eq!(input, json!({ "thread": "t-1", "text": "hello" }));
    }
}
