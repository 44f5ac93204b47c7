//! Which session a hook of a session vyred did not start may speak for: the one bound to its
//! own Claude Code process, or one it may bind (issue 17).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::kernel::module::Ctx;

/// Whether session `claimed` is bound to Claude Code process `claude` (its SessionStart said so)
/// and that process still runs.
pub async fn bound_to(ctx: &Ctx, claimed: &str, claude: u32) -> bool {
    ctx.call("harness.binding", json!({ "session": claimed }))
        .await
        .is_ok_and(|b| b["pid"] == claude && b["alive"] == true)
}

/// Whether a session vyred did not start, under Claude Code process `claude` working in
/// `folder`, may be session `claimed`. Its process must not name another session on its command
/// line; a thread Vyre knows it must name there (`vyre resume` starts `claude --resume <id>`),
/// and Vyre must not run it now; a session recall found must have run in this very folder
/// (Claude Code resumes a session only in its own folder); and no other Claude Code that still
/// runs may have it. A fresh session (no record, no transcript yet) passes.
pub async fn may_bind(ctx: &Ctx, claimed: &str, claude: u32, folder: Option<&Path>) -> bool {
    let named = session_on_command_line(claude);
    if named.as_deref().is_some_and(|n| n != claimed) {
        return false;
    }
    if let Ok(thread) = ctx.call("threads.get", json!({ "thread": claimed })).await
        && (thread["live"] == true || named.as_deref() != Some(claimed))
    {
        return false;
    }
    let found = ctx
        .call("recall.sessions", json!({}))
        .await
        .ok()
        .and_then(|all| {
            all.as_array()?
                .iter()
                .find(|s| s["thread"] == claimed)
                .map(|s| {
                    s["cwd"]
                        .as_str()
                        .map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| PathBuf::from(c)))
                })
        });
    if let Some(ran_in) = found
        && (ran_in.is_none() || ran_in.as_deref() != folder)
    {
        return false;
    }
    match ctx
        .call("harness.binding", json!({ "session": claimed }))
        .await
    {
        Ok(b) => !(b["alive"] == true && b["pid"] != claude),
        Err(_) => false,
    }
}

/// The session a Claude Code process was started for (`--resume`, `-r`, `--session-id`), if
/// its command line says.
fn session_on_command_line(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    args.iter().enumerate().find_map(|(i, a)| {
        for flag in ["--resume", "--session-id"] {
            if let Some(v) = a.strip_prefix(&format!("{flag}=")) {
                return Some(v.to_string());
            }
        }
        matches!(a.as_str(), "--resume" | "-r" | "--session-id")
            .then(|| args.get(i + 1).cloned())
            .flatten()
    })
}
