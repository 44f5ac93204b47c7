//! `vyre hook <Event>`: what the harness plugin's hooks run. It hands the hook's input (stdin)
//! to vyred and prints what vyred answers.
//!
//! When vyred's answer cannot be had, it depends on where the session runs. A session Vyre
//! runs has a socket of its own (`VYRE_SOCKET`): vyred started it and is there to check its
//! calls, so `PreToolUse` (the floor) fails closed: a refusal, nobody listening or no answer in
//! time denies the call, saying Vyre could not check it. A terminal session has no such socket:
//! with vyred down, every hook prints nothing and exits 0 at once, so Claude Code behaves
//! exactly as without Vyre. The other hooks (a brief, memory, a hand-over) only add to a
//! session, so they stay out of the way in both cases.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::kernel::contracts::harness::unchecked;
use crate::surfaces::client::Client;

/// The longest a hook waits for vyred before it stays out of the way.
const PATIENCE: Duration = Duration::from_secs(3);
/// The longest a session's floor hook waits before it denies. Well inside the plugin's own
/// timeout for the hook (`harness/hooks/hooks.json`, 10 s), past which Claude Code would give
/// up on the hook and run the tool.
const FLOOR_PATIENCE: Duration = Duration::from_secs(5);

/// Where the hook reaches vyred.
pub enum Reach {
    /// The session's own socket (`VYRE_SOCKET`): vyred runs this session.
    Session(PathBuf),
    /// vyred's socket, from a terminal session that may run without Vyre.
    Terminal(PathBuf),
}

pub async fn hook(reach: Reach, event: &str) -> i32 {
    let (socket, fails_closed) = match reach {
        Reach::Session(socket) => (socket, event == "PreToolUse"),
        Reach::Terminal(socket) => {
            if !socket.exists() {
                return 0;
            }
            (socket, false)
        }
    };
    let mut raw = String::new();
    let _ = std::io::stdin().read_to_string(&mut raw);
    let input: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let client = Client::socket(&socket);
    // The Claude Code process this hook runs under (through a shell), for SessionStart's binding.
    let pid = crate::kernel::peer::claude_ancestor(std::os::unix::process::parent_id() as i32);
    let body = json!({ "event": event, "input": input, "pid": pid });
    let patience = if fails_closed {
        FLOOR_PATIENCE
    } else {
        PATIENCE
    };
    let answered = tokio::time::timeout(patience, client.call("harness.hook", &body)).await;
    let output = match answered {
        Ok(Ok(answer)) => Some(answer["output"].clone()).filter(|o| !o.is_null()),
        Ok(Err(e)) if fails_closed => Some(unchecked(&e.to_string())),
        Err(_) if fails_closed => Some(unchecked(&format!(
            "vyred did not answer within {} s",
            patience.as_secs()
        ))),
        _ => None,
    };
    if let Some(output) = output {
        println!("{output}");
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::contracts::harness::UNCHECKED;

    #[test]
    fn an_unchecked_call_is_a_deny_that_says_why() {
        let out = unchecked("vyred did not answer within 5 s");
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(reason.starts_with(UNCHECKED), "{reason}");
        assert!(reason.ends_with("within 5 s"), "{reason}");
    }
}
