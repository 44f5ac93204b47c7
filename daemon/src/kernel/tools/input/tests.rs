use super::*;
use crate::kernel::tools::{CallCx, Caller, ErrorKind, ToolError, typed};
use schemars::JsonSchema;
use serde_json::json;

#[derive(serde::Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Colour {
    Red,
    Green,
}

#[derive(serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct In {
    #[schemars(length(min = 1, max = 8), pattern(crate::kernel::tools::shape::NAME))]
    name: String,
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    #[serde(default)]
    colour: Option<Colour>,
    #[serde(default)]
    #[schemars(length(min = 1), inner(length(max = 3)))]
    tags: Option<Vec<String>>,
    #[serde(default)]
    count: u8,
}

fn check() -> InputCheck {
    InputCheck::new(&schema_of::<In>()).unwrap()
}

fn refusal(input: Value) -> String {
    check().check(&mut input.clone()).unwrap_err()
}

#[test]
fn what_fits_the_schema_passes() {
    for ok in [
        json!({ "name": "juno" }),
        json!({ "name": "juno-2", "limit": 200, "colour": "red", "tags": ["a", "abc"] }),
        json!({ "name": "a", "limit": null, "colour": null, "tags": null, "count": 255 }),
    ] {
        assert_eq!(check().check(&mut ok.clone()), Ok(()), "{ok}");
    }
}

#[test]
fn a_refusal_names_the_field_and_the_rule_and_never_the_value() {
    let cases = [
        (
            json!({ "name": "waytoolong" }),
            "name: at most 8 characters",
        ),
        (json!({ "name": "" }), "name: must not be empty"),
        (
            json!({ "name": "Juno" }),
            "name: must be lowercase letters, digits and dashes, not starting with a dash",
        ),
        (json!({ "name": "j", "limit": 0 }), "limit: at least 1"),
        (json!({ "name": "j", "limit": 201 }), "limit: at most 200"),
        (
            json!({ "name": "j", "limit": "9" }),
            "limit: must be an integer or null",
        ),
        (
            json!({ "name": "j", "colour": "blue" }),
            "colour: must be one of red, green",
        ),
        (json!({ "name": "j", "tags": [] }), "tags: at least 1 item"),
        (
            json!({ "name": "j", "tags": ["ok", "long"] }),
            "tags[1]: at most 3 characters",
        ),
        (json!({ "name": "j", "count": 256 }), "count: at most 255"),
        (json!({ "name": "j", "count": -1 }), "count: at least 0"),
        (json!({}), "name: is required"),
        (
            json!({ "name": "j", "secret-ish": 1 }),
            "secret-ish: is not a field of this input (colour, count, limit, name, tags)",
        ),
        (json!(["j"]), "the input must be an object"),
        (json!(null), "the input must be an object"),
    ];
    for (input, want) in cases {
        assert_eq!(refusal(input.clone()), want, "{input}");
    }
    // The value itself is never in the message (it may be a secret).
    assert!(!refusal(json!({ "name": "hunter2hunter2" })).contains("hunter2"));
}

#[test]
fn a_whole_number_written_as_a_float_is_an_integer() {
    let mut input = json!({ "name": "j", "limit": 3.0, "count": 0.0 });
    assert_eq!(check().check(&mut input), Ok(()));
    assert_eq!(input, json!({ "name": "j", "limit": 3, "count": 0 }));
    assert_eq!(
        refusal(json!({ "name": "j", "limit": 2.5 })),
        "limit: must be an integer or null"
    );
}

#[test]
fn integer_bounds_of_the_rust_type_are_published() {
    let schema = schema_of::<In>();
    assert_eq!(schema["properties"]["count"]["maximum"], 255);
    assert_eq!(schema["properties"]["count"]["minimum"], 0);
    // A range written on the field is kept where it is tighter.
    assert_eq!(schema["properties"]["limit"]["maximum"], 200);
    assert_eq!(schema["properties"]["limit"]["minimum"], 1);
}

#[test]
fn a_rule_the_layer_cannot_check_is_refused_at_registration() {
    let unknown = json!({ "type": "string", "contentSchema": {} });
    assert!(matches!(
        InputCheck::new(&unknown),
        Err(SchemaError::Unknown { .. })
    ));
    let bad = json!({ "type": "string", "pattern": "(" });
    assert!(matches!(
        InputCheck::new(&bad),
        Err(SchemaError::Pattern { .. })
    ));
    let dangling = json!({ "$ref": "#/$defs/Nothing" });
    assert!(InputCheck::new(&dangling).is_err());
    // Registration reads a schema without compiling it, and refuses the same.
    assert!(matches!(
        InputCheck::validate(&unknown),
        Err(SchemaError::Unknown { .. })
    ));
    assert!(matches!(
        InputCheck::validate(&bad),
        Err(SchemaError::Pattern { .. })
    ));
    let nested =
        json!({ "type": "object", "properties": { "a": { "items": { "pattern": "[" } } } });
    assert!(matches!(
        InputCheck::validate(&nested),
        Err(SchemaError::Pattern { .. })
    ));
    assert!(InputCheck::validate(&dangling).is_err());
    assert!(InputCheck::validate(&schema_of::<In>()).is_ok());
}

#[test]
fn a_tools_check_is_compiled_at_its_first_call_and_checks_the_same() {
    let lazy = LazyCheck::new(schema_of::<In>);
    assert!(!lazy.is_compiled());
    let bad = json!({ "name": "" });
    assert_eq!(
        lazy.check(&mut bad.clone()).unwrap_err(),
        check().check(&mut bad.clone()).unwrap_err()
    );
    assert!(lazy.is_compiled());
    let mut good = json!({ "name": "juno", "limit": 3.0 });
    lazy.check(&mut good).unwrap();
    assert_eq!(good["limit"], json!(3));
    // A schema that cannot be compiled (validated away at registration) refuses every call.
    let broken = LazyCheck::new(|| json!({ "type": "string", "pattern": "(" }));
    assert!(
        broken
            .check(&mut json!("x"))
            .unwrap_err()
            .contains("cannot be checked")
    );
}

#[test]
fn one_of_words_and_not() {
    let schema = json!({
        "type": "object",
        "properties": {
            "kind": { "oneOf": [{ "const": "a" }, { "const": "b" }] },
            "item": { "type": "string", "not": { "enum": [".", ".."] } }
        }
    });
    let check = InputCheck::new(&schema).unwrap();
    assert_eq!(
        check.check(&mut json!({ "kind": "c" })).unwrap_err(),
        "kind: must be one of a, b"
    );
    assert_eq!(
        check.check(&mut json!({ "item": ".." })).unwrap_err(),
        "item: must not be . or .."
    );
    assert_eq!(
        check.check(&mut json!({ "kind": "b", "item": "..." })),
        Ok(())
    );
}

/// Found by the `tool_input` fuzz target: `["t1"]` passed as `{"thread": "t1"}`, input that
/// breaks the published schema (an object).
#[tokio::test]
async fn input_is_an_object_as_the_schema_says() {
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct In {
        thread: String,
    }
    let (schema, _, handler) = typed(|i: In, _| async move { Ok::<_, ToolError>(i.thread) });
    assert_eq!(schema["type"], "object");
    let cx = CallCx::new(Caller::Module { name: "t".into() });
    let ok = handler.call(serde_json::json!({ "thread": "t1" }), cx.clone());
    assert_eq!(ok.await.unwrap(), "t1");
    for bad in [serde_json::json!(["t1"]), serde_json::json!(null)] {
        let err = handler.call(bad.clone(), cx.clone()).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidInput, "{bad}");
    }
}

#[test]
fn a_pattern_that_is_a_choice_is_refused_as_one() {
    assert_eq!(
        alternatives("^(chat|agent|job)$"),
        Some(vec!["chat", "agent", "job"])
    );
    assert_eq!(alternatives("^[a-z]+$"), None);
    assert_eq!(alternatives("^(a|b.c)$"), None, "not a plain word");
}

#[test]
fn the_check_keeps_the_rules_and_drops_only_the_words_that_describe() {
    // A field may be named like an annotation; its rules stay.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "In", "description": "a long description of the tool's input",
        "type": "object",
        "properties": {
            "description": { "description": "words", "type": "string", "maxLength": 3 },
            "default": { "$ref": "#/$defs/Small" },
            "pick": { "anyOf": [{ "$ref": "#/$defs/Small", "title": "one" }, { "type": "null" }] }
        },
        "$defs": { "Small": { "description": "a small number", "type": "integer", "maximum": 2, "examples": [1] } },
        "required": ["description"]
    });
    let check = InputCheck::new(&schema).unwrap();
    assert_eq!(
        check.root,
        json!({
            "type": "object",
            "properties": {
                "description": { "type": "string", "maxLength": 3 },
                "default": { "$ref": "#/$defs/Small" },
                "pick": { "anyOf": [{ "$ref": "#/$defs/Small" }, { "type": "null" }] }
            },
            "$defs": { "Small": { "type": "integer", "maximum": 2 } },
            "required": ["description"]
        })
    );
    let refuse = |v: Value| check.check(&mut v.clone()).unwrap_err();
    assert!(refuse(json!({ "description": "four" })).contains("description: at most 3"));
    assert!(refuse(json!({ "description": "ok", "default": 3 })).contains("default"));
    assert!(refuse(json!({ "description": "ok", "pick": 3 })).contains("pick"));
    assert!(refuse(json!({})).contains("description"));
    assert_eq!(
        check.check(&mut json!({ "description": "ok", "default": 2.0, "pick": null })),
        Ok(())
    );
}
