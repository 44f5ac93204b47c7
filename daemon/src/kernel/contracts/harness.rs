//! Where the harness plugin (`harness/` in the repository) is: `VYRE_HARNESS_DIR`, else
//! an install's folder beside the binary (`share/vyre/harness` for npm, the box image and the .deb;
//! `Contents/Resources/harness` in the Mac's app, see `paths::installed`), else this
//! checkout's `harness/`. It is also a one-plugin marketplace (`.claude-plugin/marketplace.json`,
//! named `vyre`), which is how `vyre harness install` adds it to plain `claude`.
//!
//! Sessions Vyre runs load only its `hosted/` part ([`hosted_plugin_dir`]): the same commands and
//! skills (the whole plugin lists them from there), without the command hooks and the MCP file.
//! vyred answers those hooks and serves those tools itself, and a command hook still costs a
//! shell in Claude Code's wait at every prompt, tool call and turn's end, even when it only
//! steps aside (ADR 0033).

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

/// The part of the plugin sessions Vyre runs load: [`plugin_dir`]'s `hosted/`.
pub fn hosted_plugin_dir() -> Option<PathBuf> {
    plugin_dir()
        .map(|dir| dir.join("hosted"))
        .filter(|dir| dir.join(".claude-plugin/plugin.json").is_file())
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

    fn json(path: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// What Claude Code loads from a plugin folder by default, or as its manifest lists.
    fn listed(dir: &Path, part: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(part))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn sessions_load_the_plugins_commands_and_skills_without_its_hooks_or_mcp_server() {
        let whole = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness");
        let hosted = whole.join("hosted");
        assert_eq!(
            json(&hosted.join(".claude-plugin/plugin.json"))["name"],
            "vyre",
            "the same plugin name: /vyre:status in a terminal and in a session"
        );
        // Nothing that makes Claude Code start a process of its own.
        for absent in ["hooks", ".mcp.json", "hooks/hooks.json"] {
            assert!(!hosted.join(absent).exists(), "hosted/{absent}");
        }
        let manifest = json(&hosted.join(".claude-plugin/plugin.json"));
        for key in ["hooks", "mcpServers", "lspServers"] {
            assert!(manifest.get(key).is_none(), "hosted manifest has {key}");
        }
        // The whole plugin offers every command and skill of the hosted part, from there.
        let whole_manifest = json(&whole.join(".claude-plugin/plugin.json"));
        let commands: Vec<String> = whole_manifest["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        let expected: Vec<String> = listed(&hosted, "commands")
            .iter()
            .map(|f| format!("./hosted/commands/{f}"))
            .collect();
        assert_eq!(commands, expected);
        assert_eq!(whole_manifest["skills"], "./hosted/skills");
        assert!(!listed(&hosted, "skills").is_empty());
        // And its own hooks and MCP server, for Claude Code in a terminal.
        assert!(whole.join("hooks/hooks.json").is_file());
        assert!(whole.join(".mcp.json").is_file());
        assert!(!whole.join("commands").exists() && !whole.join("skills").exists());
    }
}
