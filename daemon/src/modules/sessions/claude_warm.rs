//! A warm spare's first turn taken ahead, without the model (issue 26 goal 1, ADR 0032 amended).
//!
//! Claude Code's first turn costs ~60 ms of its own JavaScript more than its second, even after
//! the context's summary (measured on 2.1.328 against the fake API: 129 ms to the first delta,
//! 40 the turn after). A spare writes one prompt of its own and vyred's UserPromptSubmit
//! callback (the harness's, or [`READY_HOOK`] when the harness is off) holds it back
//! (`decision: "block"`): the CLI runs a turn's way up to the model's
//! request and sends nothing (no request reaches the API, the prompt is not kept in the
//! conversation). The person's first turn then comes ~50 ms sooner (77 ms).
//!
//! What it leaves: one `system` line in the session's transcript ("UserPromptSubmit operation
//! blocked by hook", with [`PROMPT`] and [`REASON`]) that no request carries; a spare let go
//! before any message has its transcript removed (`forget`). It is not done when anything else
//! would see the prompt: a UserPromptSubmit hook of the person's, a repository's or a plugin's
//! (`get_hooks_listing`; such hooks run beside the callback even when it blocks, measured), or
//! hooks limited by policy (the callback might not run, and the prompt would go to the model).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::claude::{ClaudeProcess, HARNESS_HOOK, READY_HOOK};
use super::claude_mcp;
use super::wire::Incoming;
use crate::kernel::contracts::provider::HostTools;

/// The prompt the spare writes, as it reads in the transcript.
pub const PROMPT: &str =
    "(Vyre readied this session before its first message; this line never reached the model.)";
/// Why the callback held it back, as the transcript says.
pub const REASON: &str = "Vyre readies a session ahead of its first message";
/// How long the held-back turn may take before the spare is let go.
const PATIENCE: Duration = Duration::from_secs(10);

/// Why the spare's first turn is not taken ahead, from the CLI's `get_hooks_listing` answer
/// (`{hooks: [{event, source, ...}], policy: {...}}`); `None`: it may be.
pub fn refused(listing: &Value) -> Option<String> {
    let Some(hooks) = listing["hooks"].as_array() else {
        return Some("the CLI did not list its hooks".into());
    };
    let policy = &listing["policy"];
    for flag in [
        "disabledByPolicy",
        "managedOnly",
        "pluginOnly",
        "allDisabled",
    ] {
        if policy[flag] != json!(false) {
            return Some(format!("hooks are limited here ({flag})"));
        }
    }
    hooks
        .iter()
        .find(|h| h["event"] == "UserPromptSubmit")
        .map(|h| {
            format!(
                "a UserPromptSubmit hook ({}) would see the prompt",
                h["sourceLabel"].as_str().unwrap_or("configured")
            )
        })
}

/// Write [`PROMPT`] and hold it back with the UserPromptSubmit callback `vyre-harness-...`,
/// reading everything the CLI says until the turn's `result`. An error means the spare must not
/// be handed out: the turn went on towards the model (it is interrupted), the CLI said
/// something that was not JSON, exited, or took longer than [`PATIENCE`].
pub async fn hold_back(
    process: &mut ClaudeProcess,
    host: Option<&HostTools>,
) -> Result<(), String> {
    let callback = format!("{HARNESS_HOOK}UserPromptSubmit");
    let content = json!([{ "type": "text", "text": PROMPT }]);
    process
        .send_user(content, &crate::kernel::ids::uuid_v4(), None)
        .map_err(|e| e.to_string())?;
    let mut held = false;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let next = tokio::time::timeout_at(deadline, process.incoming.recv())
            .await
            .map_err(|_| format!("no answer within {} s", PATIENCE.as_secs()))?
            .ok_or("the CLI exited")?;
        match next {
            Incoming::Request { id, request } if request["subtype"] == "hook_callback" => {
                let id_ours = [callback.as_str(), READY_HOOK]
                    .iter()
                    .any(|c| request["callback_id"] == *c);
                let ours = id_ours && request["input"]["prompt"] == PROMPT;
                let answer = if ours {
                    held = true;
                    json!({ "decision": "block", "reason": REASON })
                } else {
                    json!({})
                };
                process
                    .peer
                    .respond(&id, answer)
                    .map_err(|e| e.to_string())?;
            }
            Incoming::Request { id, request } => {
                // Vyre's own MCP server may be spoken to (its handshake is stateless); nothing
                // else has anything to ask before a turn reaches the model.
                let answer = match host.filter(|h| claude_mcp::is_ours(&request, h)) {
                    Some(h) => {
                        json!({ "mcp_response": claude_mcp::reply(h, &request["message"], None).await })
                    }
                    None => {
                        let _ = process.peer.respond_error(
                            &id,
                            "not_now",
                            "the session is being readied",
                        );
                        continue;
                    }
                };
                process
                    .peer
                    .respond(&id, answer)
                    .map_err(|e| e.to_string())?;
            }
            Incoming::Message(m) if m["type"] == "result" => {
                return match held {
                    true => Ok(()),
                    false => Err("the readying turn ended without being held back".into()),
                };
            }
            Incoming::Message(m) if went_on(&m) => {
                let _ = tokio::time::timeout(
                    Duration::from_secs(2),
                    process.peer.request(json!({ "subtype": "interrupt" })),
                )
                .await;
                return Err("the readying prompt was not held back".into());
            }
            Incoming::Message(_) | Incoming::Cancel { .. } => {}
            Incoming::Garbage(line) => {
                return Err(format!("the CLI wrote a line that is not JSON: {line:.80}"));
            }
        }
    }
}

/// Whether a message says the turn went on towards the model.
fn went_on(m: &Value) -> bool {
    matches!(m["type"].as_str(), Some("stream_event" | "assistant"))
        || (m["type"] == "system" && m["subtype"] == "status" && m["status"] == "requesting")
}

/// Remove the transcript of session `id` under `home` (one that held only its readying turn),
/// through no link.
pub fn forget(home: &Path, id: &str) {
    let Some(path) = crate::kernel::transcripts::find(home, id) else {
        return;
    };
    let removed = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => crate::kernel::nofollow::Dir::walk(dir)
            .and_then(|d| d.remove_file(name))
            .map_err(|e| e.to_string()),
        _ => Err("no folder".into()),
    };
    if let Err(e) = removed {
        tracing::debug!(path = %path.display(), "a readied spare's transcript stays: {e}");
    }
}

/// Where a session's transcript is looked for when it is let go unused.
#[derive(Clone)]
pub struct Readied {
    pub home: PathBuf,
    pub id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(hooks: Value) -> Value {
        json!({ "events": [], "hooks": hooks, "policy": {
            "disabledByPolicy": false, "managedOnly": false, "pluginOnly": false, "allDisabled": false,
            "policyHookCount": 0 } })
    }

    #[test]
    fn a_prompt_hook_anywhere_or_hooks_limited_by_policy_keep_the_turn_from_being_taken_ahead() {
        assert_eq!(refused(&listing(json!([]))), None);
        let stop_only = json!([{ "event": "Stop", "sourceLabel": "User settings" }]);
        assert_eq!(refused(&listing(stop_only)), None);
        let prompt = json!([{ "event": "UserPromptSubmit", "source": "pluginHook",
            "sourceLabel": "Plugin hooks (~/.claude/plugins/*/hooks/hooks.json)" }]);
        let why = refused(&listing(prompt)).unwrap();
        assert!(why.contains("UserPromptSubmit hook (Plugin hooks"), "{why}");
        for flag in [
            "disabledByPolicy",
            "managedOnly",
            "pluginOnly",
            "allDisabled",
        ] {
            let mut l = listing(json!([]));
            l["policy"][flag] = json!(true);
            assert!(refused(&l).unwrap().contains(flag));
        }
        // An answer without its parts (another CLI version, or none): not taken ahead.
        assert_eq!(
            refused(&Value::Null).as_deref(),
            Some("the CLI did not list its hooks")
        );
        assert!(refused(&json!({ "policy": listing(json!([]))["policy"] })).is_some());
        assert!(
            refused(&json!({ "hooks": [] }))
                .unwrap()
                .contains("limited")
        );
    }

    /// A session that swapped a folder of its transcripts for a link to somewhere of vyred's
    /// gets nothing removed there: only a file named by its id, in a real folder of the
    /// sessions' home.
    #[test]
    fn a_let_go_spares_transcript_is_removed_through_no_link() {
        let root = std::env::temp_dir().join(format!("vyre-warm-forget-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (home, outside) = (root.join("home"), root.join("vyres"));
        let projects = home.join(".claude/projects");
        std::fs::create_dir_all(projects.join("-work")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let id = "0b5c2a0e-5d0b-4b43-9d3e-2f1f7f4e9a11";
        std::fs::write(outside.join(format!("{id}.jsonl")), "vyred's own\n").unwrap();
        std::os::unix::fs::symlink(&outside, projects.join("-evil")).unwrap();
        forget(&home, id);
        assert!(
            outside.join(format!("{id}.jsonl")).exists(),
            "never through the link"
        );
        std::fs::write(projects.join(format!("-work/{id}.jsonl")), "{}\n").unwrap();
        forget(&home, id);
        assert!(!projects.join(format!("-work/{id}.jsonl")).exists());
        assert!(outside.join(format!("{id}.jsonl")).exists());
        // Another session's transcript, or a name that is not an id, is left alone.
        std::fs::write(projects.join("-work/other.jsonl"), "{}\n").unwrap();
        forget(&home, "../-work/other");
        forget(&home, "");
        assert!(projects.join("-work/other.jsonl").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn only_a_turn_on_its_way_to_the_model_counts_as_going_on() {
        assert!(went_on(&json!({ "type": "stream_event", "event": {} })));
        assert!(went_on(&json!({ "type": "assistant" })));
        assert!(went_on(
            &json!({ "type": "system", "subtype": "status", "status": "requesting" })
        ));
        assert!(!went_on(&json!({ "type": "system", "subtype": "init" })));
        assert!(!went_on(
            &json!({ "type": "system", "subtype": "informational", "prompt_submit_outcome": { "kind": "blocked_by_hook" } })
        ));
    }
}
