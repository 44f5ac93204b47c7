//! What Vyre says to Codex, made from Vyre's own terms: a mode as Codex's approval and
//! sandbox policies, a message as Codex's input, its client id, an answer as a decision, and
//! the default effort of a model.

use serde_json::{Value, json};

/// Vyre's modes Codex can take, and what each is there: its approval policy and sandbox.
/// Vyre contains the whole process (ADR 0014), so Codex is told its sandbox is outside it,
/// except in plan mode, where it may only read.
pub const MODES: [&str; 4] = ["default", "acceptEdits", "plan", "bypassPermissions"];

/// The approval policy and sandbox policy of `mode`.
pub fn policies(mode: &str) -> (Value, Value) {
    let external = json!({ "type": "externalSandbox", "networkAccess": "enabled" });
    match mode {
        "acceptEdits" => (json!("on-request"), external),
        "plan" => (json!("untrusted"), json!({ "type": "readOnly" })),
        "bypassPermissions" => (json!("never"), external),
        _ => (json!("untrusted"), external),
    }
}

/// Claude content blocks (what Vyre sends every provider) as Codex's user input.
pub fn input(content: &Value) -> Vec<Value> {
    let blocks = match content {
        Value::String(s) => return vec![json!({ "type": "text", "text": s })],
        Value::Array(blocks) => blocks,
        _ => return vec![],
    };
    blocks
        .iter()
        .filter_map(|b| match b["type"].as_str() {
            Some("text") => Some(json!({ "type": "text", "text": b["text"] })),
            Some("image") if b["source"]["type"] == "base64" => Some(json!({
                "type": "image",
                "url": format!(
                    "data:{};base64,{}",
                    b["source"]["media_type"].as_str().unwrap_or("image/png"),
                    b["source"]["data"].as_str().unwrap_or("")
                ),
            })),
            _ => None,
        })
        .collect()
}

/// The client id Vyre gives a message: `vyre:<Vyre's thread>:<the message's uuid>`. Codex
/// keeps it in its rollout, which is how recall files a Codex thread Vyre ran under Vyre's own
/// thread (`kernel::transcripts::rollout`).
pub fn client_id(vyre_thread: &str, uuid: &str) -> String {
    format!("vyre:{vyre_thread}:{uuid}")
}

/// The default effort of `model` (else of Codex's default model) in `model/list`'s answer.
pub fn default_effort(models: &Value, model: Option<&str>) -> Option<String> {
    let data = models["data"].as_array()?;
    let found = match model {
        Some(name) => data.iter().find(|m| m["model"] == name || m["id"] == name),
        None => data.iter().find(|m| m["isDefault"] == true),
    }?;
    found["defaultReasoningEffort"].as_str().map(String::from)
}

/// The decision that answers as `response` does (the Agent SDK's permission result,
/// `{behavior, updatedPermissions?}`): for the session when the person chose "always".
pub fn decision(response: &Value) -> &'static str {
    let always = response["updatedPermissions"]
        .as_array()
        .is_some_and(|p| !p.is_empty());
    match response["behavior"].as_str() {
        Some("allow") if always => "acceptForSession",
        Some("allow") => "accept",
        _ => "decline",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_the_decision_that_means_the_same() {
        assert_eq!(decision(&json!({ "behavior": "allow" })), "accept");
        assert_eq!(
            decision(
                &json!({ "behavior": "allow", "updatedPermissions": [{ "type": "addRules" }] })
            ),
            "acceptForSession"
        );
        assert_eq!(
            decision(&json!({ "behavior": "deny", "message": "no" })),
            "decline"
        );
        assert_eq!(decision(&json!({})), "decline");
    }

    #[test]
    fn back_to_the_default_effort_is_the_models_own() {
        let models = json!({ "data": [
            { "model": "gpt-a", "isDefault": false, "defaultReasoningEffort": "medium" },
            { "model": "gpt-b", "isDefault": true, "defaultReasoningEffort": "low" },
        ] });
        assert_eq!(
            default_effort(&models, Some("gpt-a")).as_deref(),
            Some("medium")
        );
        assert_eq!(default_effort(&models, None).as_deref(), Some("low"));
        assert_eq!(default_effort(&models, Some("gpt-z")), None);
    }

    #[test]
    fn claude_content_becomes_codex_input() {
        let content = json!([
            { "type": "text", "text": "look" },
            { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBOR" } },
            { "type": "document" },
        ]);
        assert_eq!(
            input(&content),
            [
                json!({ "type": "text", "text": "look" }),
                json!({ "type": "image", "url": "data:image/png;base64,iVBOR" }),
            ]
        );
    }

    #[test]
    fn plan_mode_only_reads_and_the_rest_is_contained_by_vyre() {
        assert_eq!(policies("plan").1["type"], "readOnly");
        assert_eq!(policies("default").0, "untrusted");
        assert_eq!(policies("default").1["type"], "externalSandbox");
        assert_eq!(policies("bypassPermissions").0, "never");
    }
}
