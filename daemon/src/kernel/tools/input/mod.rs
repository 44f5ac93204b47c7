//! The input layer's check: a call's input against the JSON Schema its tool publishes.
//!
//! A tool's input schema is made once, from its Rust input type (schemars, with the lengths,
//! patterns, ranges and enums written as attributes on the type). [`InputCheck`] reads that same
//! schema and checks every call's input against it before serde reads it and the handler runs,
//! so the schema a client sees (HTTP, MCP, OpenAPI) is the check the call gets: a constraint is
//! written once and is both. A tool's schema is read at registration ([`InputCheck::validate`]:
//! every keyword known, every pattern's syntax sound) and compiled at its first call
//! ([`LazyCheck`]): of vyred's ~200 tools an idle one calls a few, and the compiled checks of all
//! of them held ~0.6 MB (their patterns' programs and the schemas' trees, measured).
//!
//! It reads the keywords schemars writes (JSON Schema 2020-12: types, `enum`, `const`, ranges,
//! lengths, `pattern`, items, properties, `required`, `additionalProperties`, `anyOf`, `oneOf`,
//! `allOf`, `not`, local `$ref`s), and refuses at registration a schema with an assertion keyword
//! it does not know, so no published rule goes unchecked. Patterns are read by the `regex` crate;
//! those Vyre publishes (`tools::shape`) keep to the syntax it shares with ECMA-262 and Python.
//!
//! A refusal names the field and the rule (`name: at most 64 characters`), never the value: an
//! input may hold a secret.

mod parts;

use parts::*;

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

/// Keywords that describe and never constrain.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentEncoding",
    "contentMediaType",
];

/// Keywords this check enforces.
const ASSERTIONS: &[&str] = &[
    "$ref",
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
];

/// The input schema a tool publishes for `I`: schemars' schema of it, with the bounds of each
/// whole number's Rust type written out (`"format": "uint32"` gains `"maximum": 4294967295`), so
/// the range serde enforces is one a client can read.
pub fn schema_of<I: schemars::JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(I)).expect("schema serializes");
    bound_integers(&mut schema);
    schema
}

fn bound_integers(schema: &mut Value) {
    match schema {
        Value::Object(s) => {
            let integer = s.get("type").is_some_and(|t| match t {
                Value::Array(list) => list.iter().any(|t| t == "integer"),
                t => t == "integer",
            });
            let bounds: Option<(Value, Value)> = match s.get("format").and_then(Value::as_str) {
                Some("int8") => Some((i8::MIN.into(), i8::MAX.into())),
                Some("int16") => Some((i16::MIN.into(), i16::MAX.into())),
                Some("int32") => Some((i32::MIN.into(), i32::MAX.into())),
                Some("int64" | "int") => Some((i64::MIN.into(), i64::MAX.into())),
                Some("uint8") => Some((0.into(), u8::MAX.into())),
                Some("uint16") => Some((0.into(), u16::MAX.into())),
                Some("uint32") => Some((0.into(), u32::MAX.into())),
                Some("uint64" | "uint") => Some((0.into(), u64::MAX.into())),
                _ => None,
            };
            if let (true, Some((min, max))) = (integer, bounds) {
                let tighter = |have: Option<&Value>, bound: Value, keep_greater: bool| match have {
                    Some(have @ Value::Number(h)) => {
                        let Value::Number(b) = &bound else {
                            return have.clone();
                        };
                        match compare(h, &Value::Number(b.clone())) {
                            Some(o) if o.is_gt() == keep_greater && !o.is_eq() => have.clone(),
                            _ => bound,
                        }
                    }
                    _ => bound,
                };
                let min = tighter(s.get("minimum"), min, true);
                let max = tighter(s.get("maximum"), max, false);
                s.insert("minimum".into(), min);
                s.insert("maximum".into(), max);
            }
            for v in s.values_mut() {
                bound_integers(v);
            }
        }
        Value::Array(list) => list.iter_mut().for_each(bound_integers),
        _ => {}
    }
}

/// A tool's input schema, ready to check inputs against.
#[derive(Debug)]
pub struct InputCheck {
    root: Value,
    patterns: HashMap<String, Regex>,
}

/// Why a schema cannot be checked (a defect of the tool's input type, found at registration).
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("{at}: keyword {keyword:?} is not one the input layer checks")]
    Unknown { at: String, keyword: String },
    #[error("{at}: pattern {pattern:?} does not compile: {why}")]
    Pattern {
        at: String,
        pattern: String,
        why: String,
    },
    #[error("{at}: {why}")]
    Malformed { at: String, why: String },
}

impl InputCheck {
    /// Compile `schema` (a tool's published input schema).
    pub fn new(schema: &Value) -> Result<InputCheck, SchemaError> {
        let mut patterns = HashMap::new();
        compile(schema, "#", &mut Patterns::Compile(&mut patterns))?;
        let check = InputCheck {
            root: assertions_only(schema),
            patterns,
        };
        refs_resolve(&check.root, schema, "#")?;
        Ok(check)
    }

    /// Whether [`InputCheck::new`] would take `schema`, found without keeping anything: each
    /// keyword known, each pattern parsed (not compiled), each `$ref` resolved.
    pub fn validate(schema: &Value) -> Result<(), SchemaError> {
        compile(schema, "#", &mut Patterns::Parse)?;
        refs_resolve(schema, schema, "#")
    }

    /// Whether `input` fits the schema; the refusal names the field and the rule.
    ///
    /// A whole number written as a float (`3.0`) is an integer to JSON Schema, and becomes one
    /// here where the schema asks for an integer, so serde reads it as the schema allows.
    pub fn check(&self, input: &mut Value) -> Result<(), String> {
        self.integers(&self.root, input, 0);
        self.fits(&self.root, input, &Path::Root)
    }

    /// Writes `3.0` as `3` wherever `schema` takes an integer (and not any number).
    fn integers(&self, schema: &Value, v: &mut Value, depth: usize) {
        // A schema that refers to itself is walked as deep as the input is, and no deeper.
        let Value::Object(s) = schema else { return };
        if depth > 64 {
            return;
        }
        if let Some(target) = s.get("$ref").and_then(|r| self.resolve(r)) {
            self.integers(target, v, depth + 1);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in s.get(key).and_then(Value::as_array).into_iter().flatten() {
                self.integers(branch, v, depth + 1);
            }
        }
        match v {
            Value::Number(n) if n.is_f64() => {
                let takes = |t: &str| match s.get("type") {
                    Some(Value::Array(list)) => list.iter().any(|x| x == t),
                    Some(one) => one == t,
                    None => false,
                };
                let x = n.as_f64().unwrap_or(f64::NAN);
                if takes("integer") && !takes("number") && x.fract() == 0.0 {
                    if x >= -(2f64.powi(63)) && x < 2f64.powi(63) {
                        *v = Value::from(x as i64);
                    } else if x >= 0.0 && x < 2f64.powi(64) {
                        *v = Value::from(x as u64);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = s.get("items") {
                    for x in items {
                        self.integers(item, x, depth + 1);
                    }
                }
            }
            Value::Object(object) => {
                let properties = s.get("properties").and_then(Value::as_object);
                for (key, x) in object.iter_mut() {
                    match properties.and_then(|p| p.get(key)) {
                        Some(p) => self.integers(p, x, depth + 1),
                        None => {
                            if let Some(extra) = s.get("additionalProperties") {
                                self.integers(extra, x, depth + 1);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn resolve(&self, r: &Value) -> Option<&Value> {
        resolve(&self.root, r)
    }

    fn fits(&self, schema: &Value, v: &Value, at: &Path<'_>) -> Result<(), String> {
        let s = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Object(s) => s,
            _ => return Err(at.says("is not allowed here")),
        };
        if let Some(target) = s.get("$ref").and_then(|r| self.resolve(r)) {
            self.fits(target, v, at)?;
        }
        if let Some(types) = s.get("type")
            && !type_fits(types, v)
        {
            return Err(at.says(&format!("must be {}", type_words(types))));
        }
        if let Some(list) = s.get("enum").and_then(Value::as_array)
            && !list.contains(v)
        {
            return Err(at.says(&format!("must be one of {}", listing(list))));
        }
        if let Some(c) = s.get("const")
            && c != v
        {
            return Err(at.says(&format!("must be {}", word(c))));
        }
        // Its own fields first, then what spans them (a kind and what it needs): the refusal of
        // a wrong field names that field.
        match v {
            Value::Number(n) => numeric(s, n, at)?,
            Value::String(text) => self.string(s, text, at)?,
            Value::Array(items) => self.array(s, items, at)?,
            Value::Object(object) => self.object(s, object, at)?,
            Value::Null | Value::Bool(_) => {}
        }
        self.combinators(s, v, at)
    }

    fn combinators(&self, s: &Map<String, Value>, v: &Value, at: &Path<'_>) -> Result<(), String> {
        if let Some(list) = s.get("allOf").and_then(Value::as_array) {
            for branch in list {
                self.fits(branch, v, at)?;
            }
        }
        for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            let Some(list) = s.get(key).and_then(Value::as_array) else {
                continue;
            };
            let results: Vec<_> = list.iter().map(|b| self.fits(b, v, at)).collect();
            let passed = results.iter().filter(|r| r.is_ok()).count();
            if passed == 0 {
                return Err(self.no_branch(list, &results, v, at));
            }
            if exactly_one && passed > 1 {
                return Err(at.says("fits more than one of its allowed shapes"));
            }
        }
        if let Some(not) = s.get("not")
            && self.fits(not, v, at).is_ok()
        {
            let what = match (not.get("enum").and_then(Value::as_array), not.get("const")) {
                (Some(list), _) => format!(
                    "must not be {}",
                    list.iter().map(word).collect::<Vec<_>>().join(" or ")
                ),
                (None, Some(c)) => format!("must not be {}", word(c)),
                _ => "is not allowed".to_string(),
            };
            return Err(at.says(&what));
        }
        Ok(())
    }

    /// The refusal of a value no branch of an `anyOf`/`oneOf` took: the list of words when the
    /// branches are words, else the reason of the one branch of the value's type, or of the one
    /// branch whose fixed fields (a `kind` or a `mode` it is for) the value has.
    fn no_branch(
        &self,
        branches: &[Value],
        results: &[Result<(), String>],
        v: &Value,
        at: &Path<'_>,
    ) -> String {
        let words: Option<Vec<&Value>> = branches
            .iter()
            .map(|b| self.deref(b).get("const"))
            .collect();
        if let Some(words) = words {
            let words: Vec<Value> = words.into_iter().cloned().collect();
            return at.says(&format!("must be one of {}", listing(&words)));
        }
        let its_own = |b: &Value| {
            let b = self.deref(b);
            let typed = b.get("type").is_none_or(|types| type_fits(types, v));
            let fixed = b
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .all(|(key, p)| {
                    let have = v.get(key).unwrap_or(&Value::Null);
                    match (p.get("const"), p.get("enum").and_then(Value::as_array)) {
                        (Some(c), _) => have == c,
                        (None, Some(list)) => list.contains(have),
                        (None, None) => true,
                    }
                });
            typed && fixed
        };
        let of_its_type: Vec<&String> = branches
            .iter()
            .zip(results)
            .filter(|(b, _)| its_own(b))
            .filter_map(|(_, r)| r.as_ref().err())
            .collect();
        match of_its_type.as_slice() {
            [one] => (*one).clone(),
            _ => at.says("does not fit any of its allowed shapes"),
        }
    }

    fn deref<'a>(&'a self, schema: &'a Value) -> &'a Value {
        schema
            .get("$ref")
            .and_then(|r| self.resolve(r))
            .unwrap_or(schema)
    }

    fn string(&self, s: &Map<String, Value>, text: &str, at: &Path<'_>) -> Result<(), String> {
        let len = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            return Err(at.says(&if min == 1 {
                "must not be empty".to_string()
            } else {
                format!("at least {min} characters")
            }));
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            return Err(at.says(&format!("at most {max} characters")));
        }
        if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
            let re = &self.patterns[pattern];
            if !re.is_match(text) {
                return Err(
                    at.says(&match crate::kernel::tools::shape::describe(pattern) {
                        Some(rule) => rule.to_string(),
                        None => match alternatives(pattern) {
                            Some(words) => format!("must be one of {}", words.join(", ")),
                            None => format!("must match the pattern {pattern}"),
                        },
                    }),
                );
            }
        }
        Ok(())
    }

    fn array(&self, s: &Map<String, Value>, items: &[Value], at: &Path<'_>) -> Result<(), String> {
        let len = items.len() as u64;
        if let Some(min) = s.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            return Err(at.says(&format!("at least {min} {}", plural(min, "item"))));
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            return Err(at.says(&format!("at most {max} {}", plural(max, "item"))));
        }
        if s.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (i, x) in items.iter().enumerate() {
                if items[..i].contains(x) {
                    return Err(at.says("must not list the same item twice"));
                }
            }
        }
        if let Some(item) = s.get("items") {
            for (i, x) in items.iter().enumerate() {
                self.fits(item, x, &Path::Index(at, i))?;
            }
        }
        Ok(())
    }

    fn object(
        &self,
        s: &Map<String, Value>,
        object: &Map<String, Value>,
        at: &Path<'_>,
    ) -> Result<(), String> {
        let empty = Map::new();
        let properties = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for key in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = key.as_str().unwrap_or_default();
            if !object.contains_key(key) {
                return Err(Path::Field(at, key).says("is required"));
            }
        }
        let len = object.len() as u64;
        if let Some(min) = s.get("minProperties").and_then(Value::as_u64)
            && len < min
        {
            return Err(at.says(&format!("at least {min} {}", plural(min, "entry"))));
        }
        if let Some(max) = s.get("maxProperties").and_then(Value::as_u64)
            && len > max
        {
            return Err(at.says(&format!("at most {max} {}", plural(max, "entry"))));
        }
        for (key, x) in object {
            let here = Path::Field(at, key);
            match (properties.get(key), s.get("additionalProperties")) {
                (Some(p), _) => self.fits(p, x, &here)?,
                (None, Some(Value::Bool(false))) => {
                    let mut known: Vec<&str> = properties.keys().map(String::as_str).collect();
                    known.sort_unstable();
                    return Err(here.says(&if known.is_empty() {
                        "is not a field of this input (it has none)".to_string()
                    } else {
                        format!("is not a field of this input ({})", known.join(", "))
                    }));
                }
                (None, Some(extra)) => self.fits(extra, x, &here)?,
                (None, None) => {}
            }
        }
        Ok(())
    }
}

/// `r` (`#/$defs/Name`) in `root`.
fn resolve<'a>(root: &'a Value, r: &Value) -> Option<&'a Value> {
    let pointer = r.as_str()?.strip_prefix('#')?;
    root.pointer(pointer)
}

/// Every `$ref` under `schema` names a place in `root`.
fn refs_resolve(root: &Value, schema: &Value, at: &str) -> Result<(), SchemaError> {
    match schema {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref") {
                resolve(root, r).ok_or_else(|| SchemaError::Malformed {
                    at: at.to_string(),
                    why: format!("$ref {r} names nothing in this schema"),
                })?;
            }
            for (k, v) in map {
                refs_resolve(root, v, &format!("{at}/{k}"))?;
            }
        }
        Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                refs_resolve(root, v, &format!("{at}/{i}"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A tool's [`InputCheck`], compiled from its schema at its first call (the schema was
/// validated when the tool registered).
pub struct LazyCheck {
    schema: fn() -> Value,
    compiled: OnceLock<Result<InputCheck, String>>,
}

impl LazyCheck {
    /// The check of the schema `schema` makes (a tool's [`schema_of`]).
    pub fn new(schema: fn() -> Value) -> LazyCheck {
        LazyCheck {
            schema,
            compiled: OnceLock::new(),
        }
    }

    /// [`InputCheck::check`], compiling the check first if this is its first call.
    pub fn check(&self, input: &mut Value) -> Result<(), String> {
        let compiled = self
            .compiled
            .get_or_init(|| InputCheck::new(&(self.schema)()).map_err(|e| e.to_string()));
        match compiled {
            Ok(check) => check.check(input),
            Err(why) => Err(format!("this tool's input schema cannot be checked: {why}")),
        }
    }

    /// Whether a call has compiled it yet.
    #[cfg(test)]
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }
}

#[cfg(test)]
mod tests;
