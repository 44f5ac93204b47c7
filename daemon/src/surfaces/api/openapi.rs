//! `GET /v1/openapi.json`: the HTTP API as an OpenAPI 3.1 document, made from the tool registry
//! (every tool the caller may call, its input and output schemas as the registry has them), so
//! the document cannot drift from the code. OpenAPI 3.1 speaks JSON Schema 2020-12, which is what
//! the registry's schemas are; each schema's `$defs` move to `components/schemas` under the tool's
//! name, with their `$ref`s rewritten.

use serde_json::{Map, Value, json};

use crate::kernel::tools::ToolSpec;

/// Move `schema`'s `$defs` into `components` as `<prefix>.<Name>` and point its refs there.
fn hoist(mut schema: Value, prefix: &str, components: &mut Map<String, Value>) -> Value {
    if let Some(Value::Object(defs)) = schema.as_object_mut().and_then(|o| o.remove("$defs")) {
        for (name, def) in defs {
            let def = rewrite(def, prefix);
            components.insert(format!("{prefix}.{name}"), def);
        }
    }
    rewrite(schema, prefix)
}

fn rewrite(v: Value, prefix: &str) -> Value {
    match v {
        Value::Object(map) => split_ref_siblings(
            map.into_iter()
                .map(|(k, v)| match (k.as_str(), &v) {
                    ("$ref", Value::String(r)) if r.starts_with("#/$defs/") => {
                        let name = &r["#/$defs/".len()..];
                        (k, json!(format!("#/components/schemas/{prefix}.{name}")))
                    }
                    // The document's own dialect is 2020-12; a nested `$schema` is noise.
                    ("$schema", _) => (k, Value::Null),
                    _ => (k, rewrite(v, prefix)),
                })
                .filter(|(_, v)| !v.is_null())
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| rewrite(v, prefix)).collect())
        }
        other => other,
    }
}

/// A `$ref` with constraints beside it (schemars writes an internally tagged enum's variant as
/// the variant's `$ref` plus its `kind` property) as `allOf: [{$ref}, {the rest}]`: the same
/// schema in 2020-12, and the form generators read, where many drop a `$ref`'s siblings (the
/// web app's types lost every timeline item's `kind`). Words about it stay outside.
fn split_ref_siblings(mut map: Map<String, Value>) -> Value {
    const WORDS: &[&str] = &["description", "title", "default", "examples", "deprecated"];
    let constrained = map.contains_key("$ref")
        && map
            .keys()
            .any(|k| k != "$ref" && !WORDS.contains(&k.as_str()));
    if !constrained {
        return Value::Object(map);
    }
    let reference = map.remove("$ref").expect("a $ref");
    let (words, rest): (Map<String, Value>, Map<String, Value>) = map
        .into_iter()
        .partition(|(k, _)| WORDS.contains(&k.as_str()));
    let mut out = words;
    out.insert(
        "allOf".into(),
        json!([{ "$ref": reference }, Value::Object(rest)]),
    );
    Value::Object(out)
}

/// The document for these tools.
pub fn document<S: std::ops::Deref<Target = ToolSpec>>(specs: &[S]) -> Value {
    let mut components = Map::new();
    let error = json!({
        "type": "object",
        "required": ["error"],
        "properties": { "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": { "code": { "type": "string" }, "message": { "type": "string" } }
        } }
    });
    components.insert("Error".into(), error);
    let mut paths = Map::new();
    paths.insert(
        "/v1/health".into(),
        json!({ "get": {
            "operationId": "health",
            "summary": "Version, role and uptime; no credential needed.",
            "security": [],
            "responses": { "200": { "description": "vyred answers" } }
        } }),
    );
    for spec in specs.iter().map(|s| &**s) {
        let input = hoist(spec.input_tree(), &spec.name, &mut components);
        let output = hoist(spec.output_tree(), &spec.name, &mut components);
        paths.insert(
            format!("/v1/tools/{}", spec.name),
            json!({ "post": {
                "operationId": spec.name,
                "summary": spec.description,
                "tags": [spec.module],
                "requestBody": {
                    "required": true,
                    "content": { "application/json": { "schema": input } }
                },
                "responses": {
                    "200": {
                        "description": "the tool's output",
                        "content": { "application/json": { "schema": {
                            "type": "object",
                            "required": ["data"],
                            "properties": { "data": output }
                        } } }
                    },
                    "default": {
                        "description": "an error, with a code and a message for a person",
                        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
                    }
                }
            } }),
        );
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Vyre",
            "version": crate::kernel::VERSION,
            "description": "vyred's HTTP API: every tool of the registry as POST /v1/tools/<module>.<tool>. The event stream (GET /v1/events) and the browsers' routes are described in docs/api.md."
        },
        "servers": [{ "url": "/" }],
        "security": [{ "device": [] }],
        "components": {
            "securitySchemes": { "device": { "type": "http", "scheme": "bearer" } },
            "schemas": components
        },
        "paths": paths
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defs_move_to_components_and_refs_follow() {
        let spec = ToolSpec {
            name: "x.y".into(),
            module: "x".into(),
            description: "d".into(),
            person_only: false,
            for_sessions: Default::default(),
            for_models: true,
            cli: false,
            onboarding: false,
            input_schema: crate::kernel::tools::schema_text(&json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": { "img": { "$ref": "#/$defs/Image" } },
                "$defs": { "Image": { "type": "object", "properties": { "kind": { "$ref": "#/$defs/Kind" } } }, "Kind": { "type": "string" } }
            })),
            output_schema: crate::kernel::tools::schema_text(&json!({ "type": "object" })),
        };
        let doc = document(&[Box::new(spec)]);
        let input = &doc["paths"]["/v1/tools/x.y"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert_eq!(
            input["properties"]["img"]["$ref"],
            "#/components/schemas/x.y.Image"
        );
        assert!(input.get("$schema").is_none() && input.get("$defs").is_none());
        let image = &doc["components"]["schemas"]["x.y.Image"];
        assert_eq!(
            image["properties"]["kind"]["$ref"],
            "#/components/schemas/x.y.Kind"
        );
        assert_eq!(doc["openapi"], "3.1.0");
    }

    #[test]
    fn a_ref_with_constraints_beside_it_becomes_all_of() {
        let tagged = json!({
            "description": "one of them",
            "$ref": "#/$defs/User",
            "type": "object",
            "properties": { "kind": { "const": "user" } },
            "required": ["kind"]
        });
        let out = rewrite(tagged, "t");
        assert_eq!(out["description"], "one of them");
        assert!(out.get("$ref").is_none());
        assert_eq!(out["allOf"][0]["$ref"], "#/components/schemas/t.User");
        assert_eq!(out["allOf"][1]["properties"]["kind"]["const"], "user");
        assert_eq!(out["allOf"][1]["required"], json!(["kind"]));
        // A plain `$ref` (with only words beside it) stays as it is.
        let plain = rewrite(json!({ "$ref": "#/$defs/User", "description": "d" }), "t");
        assert_eq!(plain["$ref"], "#/components/schemas/t.User");
        assert!(plain.get("allOf").is_none());
    }
}
