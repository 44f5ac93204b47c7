//! The check's small parts: where in the input a rule applies, and how a rule reads in words.

use super::*;
use std::sync::{Mutex, OnceLock};

/// Where in the input a rule applies: `name`, `threads[2]`, `limits.depth`.
pub(super) enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    pub(super) fn says(&self, rule: &str) -> String {
        match self {
            Path::Root => format!("the input {rule}"),
            _ => format!("{}: {rule}", self.render()),
        }
    }

    pub(super) fn render(&self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Field(Path::Root, key) => shown(key),
            Path::Field(parent, key) => format!("{}.{}", parent.render(), shown(key)),
            Path::Index(parent, i) => format!("{}[{i}]", parent.render()),
        }
    }
}

/// A field name as the caller wrote it, cut short (an unknown field's name is the caller's).
pub(super) fn shown(key: &str) -> String {
    let cut: String = key.chars().take(64).collect();
    if cut
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        && !cut.is_empty()
    {
        cut
    } else {
        format!("{cut:?}")
    }
}

pub(super) fn type_fits(types: &Value, v: &Value) -> bool {
    let one = |t: &Value| match t.as_str() {
        Some("null") => v.is_null(),
        Some("boolean") => v.is_boolean(),
        Some("string") => v.is_string(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        Some("number") => v.is_number(),
        Some("integer") => v.is_i64() || v.is_u64(),
        _ => false,
    };
    match types {
        Value::Array(list) => list.iter().any(one),
        t => one(t),
    }
}

pub(super) fn type_words(types: &Value) -> String {
    let one = |t: &Value| {
        match t.as_str() {
            Some("null") => "null",
            Some("boolean") => "true or false",
            Some("string") => "a string",
            Some("array") => "an array",
            Some("object") => "an object",
            Some("number") => "a number",
            Some("integer") => "an integer",
            _ => "of another type",
        }
        .to_string()
    };
    match types {
        Value::Array(list) => list.iter().map(one).collect::<Vec<_>>().join(" or "),
        t => one(t),
    }
}

pub(super) fn numeric(
    s: &Map<String, Value>,
    n: &serde_json::Number,
    at: &Path<'_>,
) -> Result<(), String> {
    // Compared exactly where both are integers (an i64 or u64 bound is not an f64's).
    let below = |bound: &Value| compare(n, bound).is_some_and(|o| o.is_lt());
    let above = |bound: &Value| compare(n, bound).is_some_and(|o| o.is_gt());
    let equal = |bound: &Value| compare(n, bound).is_some_and(|o| o.is_eq());
    if let Some(min) = s.get("minimum")
        && below(min)
    {
        return Err(at.says(&format!("at least {min}")));
    }
    if let Some(max) = s.get("maximum")
        && above(max)
    {
        return Err(at.says(&format!("at most {max}")));
    }
    if let Some(min) = s.get("exclusiveMinimum")
        && (below(min) || equal(min))
    {
        return Err(at.says(&format!("more than {min}")));
    }
    if let Some(max) = s.get("exclusiveMaximum")
        && (above(max) || equal(max))
    {
        return Err(at.says(&format!("less than {max}")));
    }
    Ok(())
}

pub(super) fn compare(n: &serde_json::Number, bound: &Value) -> Option<std::cmp::Ordering> {
    let Value::Number(b) = bound else {
        return None;
    };
    if let (Some(x), Some(y)) = (n.as_i64(), b.as_i64()) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (n.as_u64(), b.as_u64()) {
        return Some(x.cmp(&y));
    }
    // One is negative and the other above i64 (then the negative is less), or a float.
    match (n.as_i64(), b.as_u64(), n.as_u64(), b.as_i64()) {
        (Some(_), Some(_), _, _) => Some(std::cmp::Ordering::Less),
        (_, _, Some(_), Some(_)) => Some(std::cmp::Ordering::Greater),
        _ => n.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

pub(super) fn word(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn listing(list: &[Value]) -> String {
    list.iter().map(word).collect::<Vec<_>>().join(", ")
}

pub(super) fn plural(n: u64, one: &str) -> String {
    match (n, one) {
        (1, _) => one.to_string(),
        (_, "entry") => "entries".to_string(),
        _ => format!("{one}s"),
    }
}

/// The compiled form of `pattern`, made once per process: many tools publish the same patterns
/// (an id, a path, a name), and a clone of a [`Regex`] shares its compiled program, so each
/// distinct pattern costs its memory once rather than once per tool that takes it.
fn shared_pattern(pattern: &str) -> Result<Regex, String> {
    static COMPILED: OnceLock<Mutex<HashMap<String, Regex>>> = OnceLock::new();
    let mut compiled = COMPILED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(re) = compiled.get(pattern) {
        return Ok(re.clone());
    }
    let re = Regex::new(pattern).map_err(|e| e.to_string())?;
    compiled.insert(pattern.to_string(), re.clone());
    Ok(re)
}

/// What the check needs of `schema`: its structure and assertions, without the words that only
/// describe (descriptions, titles, examples), which are most of a published schema's size and
/// which the check never reads. Every `$ref` still resolves: only annotations go, never a
/// subschema's place.
pub(super) fn assertions_only(schema: &Value) -> Value {
    let Value::Object(s) = schema else {
        return schema.clone();
    };
    let mut kept = Map::new();
    for (key, value) in s {
        let value = match key.as_str() {
            "$defs" | "definitions" | "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, sub)| (name.clone(), assertions_only(sub)))
                    .collect(),
            ),
            "items" | "additionalProperties" | "not" => assertions_only(value),
            "anyOf" | "oneOf" | "allOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(assertions_only)
                    .collect(),
            ),
            k if ANNOTATIONS.contains(&k) => continue,
            _ => value.clone(),
        };
        kept.insert(key.clone(), value);
    }
    Value::Object(kept)
}

/// What [`compile`] does with a pattern.
pub(super) enum Patterns<'a> {
    /// Compiles it into the map (once per pattern).
    Compile(&'a mut HashMap<String, Regex>),
    /// Parses it only: its syntax is sound, nothing is kept.
    Parse,
}

/// Walks the schema once: every keyword known, every pattern compiled or parsed.
pub(super) fn compile(
    schema: &Value,
    at: &str,
    patterns: &mut Patterns<'_>,
) -> Result<(), SchemaError> {
    let s = match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(s) => s,
        other => {
            return Err(SchemaError::Malformed {
                at: at.to_string(),
                why: format!("a schema is an object or a boolean, not {other}"),
            });
        }
    };
    for (key, value) in s {
        let here = format!("{at}/{key}");
        if ANNOTATIONS.contains(&key.as_str()) && key != "$defs" && key != "definitions" {
            continue;
        }
        match key.as_str() {
            "$defs" | "definitions" | "properties" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    compile(sub, &format!("{here}/{name}"), patterns)?;
                }
            }
            "items" | "additionalProperties" | "not" => compile(value, &here, patterns)?,
            "anyOf" | "oneOf" | "allOf" => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    compile(sub, &format!("{here}/{i}"), patterns)?;
                }
            }
            "pattern" => {
                let pattern = value.as_str().ok_or_else(|| SchemaError::Malformed {
                    at: here.clone(),
                    why: "a pattern is a string".into(),
                })?;
                let refused = |why: String| SchemaError::Pattern {
                    at: here.clone(),
                    pattern: pattern.to_string(),
                    why,
                };
                match patterns {
                    Patterns::Compile(compiled) => {
                        if !compiled.contains_key(pattern) {
                            let re = shared_pattern(pattern).map_err(refused)?;
                            compiled.insert(pattern.to_string(), re);
                        }
                    }
                    Patterns::Parse => {
                        regex_syntax::Parser::new()
                            .parse(pattern)
                            .map_err(|e| refused(e.to_string()))?;
                    }
                }
            }
            k if ASSERTIONS.contains(&k) => {}
            _ => {
                return Err(SchemaError::Unknown {
                    at: at.to_string(),
                    keyword: key.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The words of a pattern that is a plain choice, `^(a|b|c)$`, so its refusal reads as one.
pub(super) fn alternatives(pattern: &str) -> Option<Vec<&str>> {
    let inner = pattern.strip_prefix("^(")?.strip_suffix(")$")?;
    let words: Vec<&str> = inner.split('|').collect();
    words
        .iter()
        .all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .then_some(words)
}
