//! A tool's input schema as a session's program is given it: what constrains the input, without
//! what only the schema's generator needs. Claude Code reads every one of Vyre's ~100 tools at a
//! session's start (measured on 2.1.328: its CPU to a first turn grows ~28 ms with the schemas
//! and descriptions, against their names alone), and a tool the model loads is sent to it whole.
//!
//! Taken out: `$schema` and `title` (the generator's names for its types), a `default` of
//! `null` (says nothing), and schemars' numeric `format`s (`uint32`, `int64`, ...: no JSON
//! Schema format; `minimum` and `maximum` say the range). Every keyword that says what an input
//! may be stays, and a property is never mistaken for a keyword: only schemas are walked.

use serde_json::Value;

/// Numeric formats schemars writes that JSON Schema does not define.
const GENERATOR_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    "float", "double",
];

/// `schema`, lean (see the module's words).
pub fn lean(mut schema: Value) -> Value {
    trim(&mut schema);
    schema
}

fn trim(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("$schema");
    map.remove("title");
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| GENERATOR_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    // Maps of names to schemas.
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(named)) = map.get_mut(key) {
            named.values_mut().for_each(trim);
        }
    }
    // A schema, or a list of them.
    for key in [
        "items",
        "prefixItems",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "additionalProperties",
        "contains",
    ] {
        match map.get_mut(key) {
            Some(Value::Array(list)) => list.iter_mut().for_each(trim),
            Some(one @ Value::Object(_)) => trim(one),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_the_generator_wrote_goes_and_what_constrains_stays() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "SendInput",
            "type": "object",
            "additionalProperties": false,
            "required": ["text"],
            "properties": {
                "text": { "type": "string", "minLength": 1, "maxLength": 100, "description": "Words." },
                "limit": { "type": ["integer", "null"], "format": "uint32", "minimum": 1, "maximum": 1000, "default": null },
                "count": { "type": "integer", "format": "int64", "default": 5 },
                "at": { "type": "string", "format": "date-time" },
                "mode": { "$ref": "#/$defs/Mode" },
                "tags": { "type": "array", "items": { "type": "integer", "format": "uint8", "title": "Tag" } },
                "either": { "anyOf": [{ "type": "string", "title": "A" }, { "type": "null" }] }
            },
            "$defs": { "Mode": { "title": "Mode", "enum": ["a", "b"], "description": "How." } }
        });
        assert_eq!(
            lean(schema),
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["text"],
                "properties": {
                    "text": { "type": "string", "minLength": 1, "maxLength": 100, "description": "Words." },
                    "limit": { "type": ["integer", "null"], "minimum": 1, "maximum": 1000 },
                    "count": { "type": "integer", "default": 5 },
                    "at": { "type": "string", "format": "date-time" },
                    "mode": { "$ref": "#/$defs/Mode" },
                    "tags": { "type": "array", "items": { "type": "integer" } },
                    "either": { "anyOf": [{ "type": "string" }, { "type": "null" }] }
                },
                "$defs": { "Mode": { "enum": ["a", "b"], "description": "How." } }
            })
        );
    }

    #[test]
    fn a_property_named_like_a_keyword_is_kept() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "title": "Title" },
                "format": { "type": "string" },
                "default": { "type": "null" },
                "$schema": { "type": "string" }
            }
        });
        assert_eq!(
            lean(schema),
            json!({
                "type": "object",
                "properties": {
                    "title": { "type": "string" },
                    "format": { "type": "string" },
                    "default": { "type": "null" },
                    "$schema": { "type": "string" }
                }
            })
        );
    }
}
