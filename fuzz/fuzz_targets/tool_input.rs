//! A tool call's input through the daemon's one validation path (`tools/mod.rs`): the handler
//! that [`vyre::kernel::tools::typed`] makes for a tool's real input type refuses what does not fit that
//! type before the tool runs. The input is a tool name on the first line, then JSON.
//!
//! Checked beyond "no panic", with a JSON Schema reader of its own (not the daemon's):
//! - input the handler accepts conforms to the input schema the tool publishes (HTTP, MCP, the
//!   OpenAPI document): validation is never looser than the contract;
//! - input that conforms to it is accepted: validation is never stricter than the contract (the
//!   published schema says everything the input layer enforces);
//! - refused input is refused as `invalid_input`, never as a fault;
//! - an unknown name is `unknown_tool` from the registry, and a valid name has the shape it
//!   promises.
//!
//! The tools' own bodies are not run (they start sessions, write the store, change the vault):
//! each handler here answers `true` once the input is in.
#![no_main]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use vyre::kernel::tools::{CallCx, Caller, ErrorKind, Handler, Registry, ToolError};

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
});

/// A tool's published input schema and its validating handler.
type Tool = (Value, Arc<dyn Handler>);

fn tool<I: DeserializeOwned + JsonSchema + 'static>() -> Tool {
    let (input, _, handler) =
        vyre::kernel::tools::typed(|_: I, _| async { Ok::<bool, ToolError>(true) });
    (input, handler)
}

/// The real input types, by the name of the tool that takes them.
static TOOLS: LazyLock<BTreeMap<&'static str, Tool>> = LazyLock::new(|| {
    use vyre::modules::sessions::{agents, finding, models, register as threads};
    use vyre::modules::{harness, onboarding, pairing, projects, recall, vault};
    BTreeMap::from([
        ("vault.put", tool::<vault::tools::PutInput>()),
        ("vault.list", tool::<vyre::kernel::tools::NoInput>()),
        ("vault.generate", tool::<vault::generate::GenerateInput>()),
        ("vault.import", tool::<vault::import::ImportInput>()),
        ("vault.reveal", tool::<vault::reveal::RevealInput>()),
        (
            "vault.pass.create",
            tool::<vault::pass_tools::CreateInput>(),
        ),
        ("vault.pass.revoke", tool::<vault::pass_tools::IdInput>()),
        (
            "vault.pass.accept",
            tool::<vault::pass_tools::AcceptInput>(),
        ),
        ("vault.pass.bind", tool::<vault::pass_tools::BindInput>()),
        ("vault.offboard", tool::<vault::pass_tools::OffboardInput>()),
        (
            "gate.relay",
            tool::<vyre::modules::gate::relay::RelayInput>(),
        ),
        (
            "vault.presence.challenge",
            tool::<vault::reveal::ChallengeInput>(),
        ),
        ("vault.passkey.add", tool::<vault::reveal::AddInput>()),
        ("vault.passkey.remove", tool::<vault::reveal::RemoveInput>()),
        ("vault.delete", tool::<vault::tools::NameInput>()),
        ("vault.grant", tool::<vault::tools::GrantInput>()),
        ("vault.unlock", tool::<vault::tools::PassphraseInput>()),
        (
            "vault.passphrase",
            tool::<vault::tools::SetPassphraseInput>(),
        ),
        ("sessions.claude", tool::<vyre::kernel::tools::NoInput>()),
        ("sessions.providers", tool::<vyre::kernel::tools::NoInput>()),
        ("sessions.slots.take", tool::<threads::TakeInput>()),
        ("sessions.slots.release", tool::<threads::SlotInput>()),
        ("sessions.models.set", tool::<models::SetInput>()),
        ("threads.start", tool::<threads::StartInput>()),
        ("threads.send", tool::<threads::SendInput>()),
        ("threads.fork", tool::<threads::ForkInput>()),
        ("threads.rewind", tool::<threads::RewindInput>()),
        ("threads.unqueue", tool::<threads::QueuedInput>()),
        ("threads.edit", tool::<threads::EditInput>()),
        ("threads.answer", tool::<threads::AnswerInput>()),
        ("threads.get", tool::<threads::ThreadInput>()),
        ("threads.files", tool::<threads::FilesInput>()),
        ("threads.folders", tool::<finding::FoldersInput>()),
        ("threads.rename", tool::<finding::RenameInput>()),
        ("threads.list", tool::<vyre::kernel::tools::NoInput>()),
        ("threads.mode", tool::<threads::ModeInput>()),
        ("threads.model", tool::<threads::ModelInput>()),
        ("agents.create", tool::<agents::CreateInput>()),
        ("agents.update", tool::<agents::UpdateInput>()),
        ("agents.ask", tool::<agents::AskInput>()),
        ("agents.threads", tool::<agents::AgentInput>()),
        ("projects.create", tool::<projects::CreateInput>()),
        ("projects.add-threads", tool::<projects::ThreadsInput>()),
        ("projects.catalog", tool::<projects::CatalogInput>()),
        ("projects.get", tool::<projects::ProjectInput>()),
        ("projects.at", tool::<projects::AtInput>()),
        ("recall.search", tool::<recall::SearchInput>()),
        ("recall.thread", tool::<recall::ThreadInput>()),
        ("pairing.add", tool::<pairing::AddInput>()),
        ("pairing.remove", tool::<pairing::RemoveInput>()),
        ("harness.binding", tool::<harness::BindingInput>()),
        ("harness.hook", tool::<harness::HookInput>()),
        ("onboarding.you", tool::<onboarding::YouInput>()),
        ("onboarding.rename", tool::<onboarding::RenameInput>()),
        ("onboarding.claude", tool::<onboarding::ClaudeInput>()),
        ("onboarding.skip", tool::<onboarding::SkipInput>()),
        ("onboarding.finish", tool::<onboarding::FinishInput>()),
    ])
});

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        // A whole number written as a float is an integer to JSON Schema.
        Value::Number(n) if n.as_f64().is_some_and(|x| x.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `v` conforms to `schema`, for the keywords schemars writes (a small JSON Schema
/// reader; a keyword it does not know constrains nothing).
fn conforms(root: &Value, schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let fail = |why: String| Err(format!("{at}: {why}"));
    let s = match schema {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return fail("nothing is allowed here".into()),
        Value::Object(s) => s,
        _ => return fail(format!("not a schema: {schema}")),
    };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").ok_or(format!("{at}: ref {r}"))?;
        conforms(root, &root["$defs"][name], v, at)?;
    }
    if let Some(types) = s.get("type") {
        let t = type_of(v);
        let ok = |want: &Value| want == t || (want == "number" && t == "integer");
        let fits = match types {
            Value::Array(list) => list.iter().any(ok),
            one => ok(one),
        };
        if !fits {
            return fail(format!("a {t} where the schema says {types}"));
        }
    }
    for (key, any) in [("anyOf", true), ("oneOf", true), ("allOf", false)] {
        if let Some(list) = s.get(key).and_then(Value::as_array) {
            let results: Vec<_> = list.iter().map(|x| conforms(root, x, v, at)).collect();
            let passed = results.iter().filter(|r| r.is_ok()).count();
            let good = if any {
                passed > 0
            } else {
                passed == list.len()
            };
            if !good {
                return fail(format!("{key}: {results:?}"));
            }
        }
    }
    if let Some(list) = s.get("enum").and_then(Value::as_array)
        && !list.contains(v)
    {
        return fail(format!("{v} is not one of {list:?}"));
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        return fail(format!("{v} is not {c}"));
    }
    if let Some(not) = s.get("not")
        && conforms(root, not, v, at).is_ok()
    {
        return fail(format!("{v} is what `not` refuses"));
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = s.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return fail(format!("{n} < minimum {min}"));
        }
        if let Some(max) = s.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return fail(format!("{n} > maximum {max}"));
        }
        if let Some(min) = s.get("exclusiveMinimum").and_then(Value::as_f64)
            && n <= min
        {
            return fail(format!("{n} <= exclusiveMinimum {min}"));
        }
    }
    if let Some(text) = v.as_str() {
        let len = text.chars().count() as u64;
        if s.get("minLength")
            .and_then(Value::as_u64)
            .is_some_and(|m| len < m)
            || s.get("maxLength")
                .and_then(Value::as_u64)
                .is_some_and(|m| len > m)
        {
            return fail(format!("a string of {len} characters"));
        }
        if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
            static PATTERNS: LazyLock<Mutex<HashMap<String, regex::Regex>>> =
                LazyLock::new(Mutex::default);
            let mut compiled = PATTERNS.lock().expect("patterns");
            if !compiled.contains_key(pattern) {
                let re = regex::Regex::new(pattern).map_err(|e| format!("{at}: {e}"))?;
                compiled.insert(pattern.to_string(), re);
            }
            if !compiled[pattern].is_match(text) {
                return fail(format!("does not match {pattern}"));
            }
        }
    }
    if let Some(items) = v.as_array() {
        if let Some(item) = s.get("items") {
            for (i, x) in items.iter().enumerate() {
                conforms(root, item, x, &format!("{at}[{i}]"))?;
            }
        }
        let len = items.len() as u64;
        if s.get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| len < m)
            || s.get("maxItems")
                .and_then(Value::as_u64)
                .is_some_and(|m| len > m)
        {
            return fail(format!("an array of {len}"));
        }
    }
    if let Some(object) = v.as_object() {
        let empty = serde_json::Map::new();
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
                return fail(format!("{key:?} is required"));
            }
        }
        for (key, x) in object {
            let at = format!("{at}.{key}");
            match (properties.get(key), s.get("additionalProperties")) {
                (Some(p), _) => conforms(root, p, x, &at)?,
                (None, Some(extra)) => conforms(root, extra, x, &at)?,
                (None, None) => {}
            }
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (name, input) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(input) = serde_json::from_str::<Value>(input) else {
        return;
    };
    let caller = Caller::Socket { uid: 0, pid: None };
    if vyre::kernel::tools::valid_name(name) {
        let (module, _) = name.split_once('.').expect("module.tool");
        assert!(name.len() <= 96 && vyre::kernel::module::valid_module_name(module));
    }
    let Some((schema, handler)) = TOOLS.get(name) else {
        // Nothing by this name: the registry says so, whatever the name holds.
        let registry = Registry::new();
        let err = RUNTIME
            .block_on(registry.call(name, input, caller))
            .expect_err("an empty registry");
        assert_eq!(
            (err.kind, err.code.as_ref()),
            (ErrorKind::NotFound, "unknown_tool")
        );
        return;
    };
    let result = RUNTIME.block_on(handler.call(input.clone(), CallCx::new(caller)));
    let fits = conforms(schema, schema, &input, "input");
    match (result, fits) {
        (Ok(answer), Ok(())) => assert_eq!(answer, json!(true)),
        (Ok(_), Err(why)) => {
            panic!("{name} accepted {input}, which breaks its schema: {why}\n{schema}")
        }
        (Err(e), Ok(())) => {
            panic!("{name} refused {input}, which fits its schema: {e:?}\n{schema}")
        }
        (Err(e), Err(_)) => assert_eq!(
            (e.kind, e.code.as_ref()),
            (ErrorKind::InvalidInput, "invalid_input"),
            "{e:?}"
        ),
    }
});
