//! Where the harness plugin (`harness/` in the repository) is: `VYRE_HARNESS_DIR`, else
//! an install's folder beside the binary (`share/vyre/harness` for npm, the box image and the .deb;
//! `Contents/Resources/harness` in the Mac's app, see `paths::installed`), else this
//! checkout's `harness/`. It is also a one-plugin marketplace (`.claude-plugin/marketplace.json`,
//! named `vyre`), which is how `vyre harness install` adds it to plain `claude`.

use std::path::{Path, PathBuf};

/// The plugin's id in Claude Code: plugin `vyre` from marketplace `vyre`.
pub const PLUGIN_ID: &str = "vyre@vyre";
pub const MARKETPLACE: &str = "vyre";

/// What Claude Code calls the plugin's MCP server (`.mcp.json`'s `vyre`, in plugin `vyre`): its
/// tools are `mcp__plugin_vyre_vyre__<tool>`. vyred serves sessions it runs a server of this
/// same name in-process, which takes the plugin's place (measured on 2.1.328: the plugin's
/// `vyre mcp` is then not started).
pub const MCP_SERVER: &str = "plugin:vyre:vyre";

/// An MCP name for a Vyre tool: MCP names may not hold dots (the Messages API allows
/// `[a-zA-Z0-9_-]`), so `threads.list` is offered as `threads_list`.
pub fn mcp_name(tool: &str) -> String {
    tool.replace('.', "_")
}

/// The start of a PreToolUse deny's reason when vyred's answer could not be had.
pub const UNCHECKED: &str = "Vyre could not check this call";

/// PreToolUse's deny, and why, when the harness's answer could not be had for a session Vyre
/// runs: vyred is there to check its calls, so the floor fails closed (`vyre hook`, and vyred
/// answering the hook itself).
pub fn unchecked(why: &str) -> serde_json::Value {
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": format!("{UNCHECKED}, so it is denied: {why}"),
        }
    })
}

pub fn plugin_dir() -> Option<PathBuf> {
    std::env::var_os("VYRE_HARNESS_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain(crate::kernel::paths::installed_here("harness"))
        .chain([Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness")])
        .find(|dir| dir.join(".claude-plugin/plugin.json").is_file())
        .map(|dir| dir.canonicalize().unwrap_or(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plugin's command for `event`, as Claude Code runs it (through a shell).
    fn command(event: &str) -> String {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness");
        let hooks: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("hooks/hooks.json")).unwrap())
                .unwrap();
        hooks["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn run(command: &str, by_host: bool) -> std::process::Output {
        let mut sh = std::process::Command::new("/bin/sh");
        // No `vyre` on this PATH: running it fails loudly.
        sh.arg("-c")
            .arg(command)
            .env_clear()
            .env("PATH", "/nonexistent");
        if by_host {
            sh.env(crate::kernel::contracts::provider::HOOKS_BY_HOST_ENV, "1");
        }
        sh.output().unwrap()
    }

    #[test]
    fn the_plugins_hooks_step_aside_only_where_vyred_answers_them_itself() {
        // SessionStart too: vyred answers it at the first prompt of the session's process.
        for event in ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"] {
            let command = command(event);
            let aside = run(&command, true);
            assert!(aside.status.success(), "{event}: {aside:?}");
            assert!(
                aside.stdout.is_empty() && aside.stderr.is_empty(),
                "{event}: {aside:?}"
            );
            // Elsewhere (Claude Code in a terminal) it runs `vyre hook <event>`.
            let runs = run(&command, false);
            assert_eq!(runs.status.code(), Some(127), "{event}: {runs:?}");
            assert!(
                String::from_utf8_lossy(&runs.stderr).contains("vyre"),
                "{event}: {runs:?}"
            );
            assert!(
                command.ends_with(&format!("vyre hook {event}")),
                "{command}"
            );
        }
    }
}
