//! `vyre harness install` and `vyre harness uninstall`: the harness plugin for plain `claude`,
//! through Claude Code's own plugin commands (a local marketplace named `vyre`, the plugin
//! `vyre@vyre` at user scope), so nothing else in the person's Claude Code settings changes.
//! Both can be run again safely. Other words after `vyre harness` are the harness module's
//! tools (`vyre harness binding ...`).

use std::path::PathBuf;
use std::process::Command;

use clap::Subcommand;
use serde_json::json;

use super::fail;
use crate::kernel::contracts::harness::{MARKETPLACE, PLUGIN_ID, plugin_dir};
use crate::surfaces::client::Client;

/// The harness module's tools this command runs (its manifest's `shows.cli`), which clap does
/// not list itself: they are passed on to vyred as they come.
pub const TOOLS_HELP: &str = "Tools (vyred runs them; `vyre harness <tool> --help` for each):
  binding      which Claude Code process has a session, and whether it still runs
  remembered   what memory gave a thread so far";

#[derive(Debug, Subcommand)]
pub enum HarnessCommand {
    /// Install the harness plugin for plain `claude` (user scope).
    Install,
    /// Remove it again.
    Uninstall,
    /// A harness module tool, e.g. `binding --session <id>`.
    #[command(external_subcommand)]
    Tool(Vec<String>),
}

/// The Claude Code CLI to run: the one sessions use when vyred says, else `claude` on PATH.
async fn claude_program(client: &Client) -> PathBuf {
    client
        .call("sessions.claude", &json!({}))
        .await
        .ok()
        .and_then(|c| c["path"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("claude"))
}

/// Run `claude plugin ...`; its output, and whether it succeeded.
fn plugin(claude: &PathBuf, args: &[&str]) -> Result<(bool, String), String> {
    let out = Command::new(claude)
        .arg("plugin")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            format!(
                "cannot run {} ({e}); install Claude Code or put it on PATH",
                claude.display()
            )
        })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((out.status.success(), text.trim().to_string()))
}

fn vyre_on_path() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("vyre").is_file()))
}

pub async fn run(client: &Client, command: HarnessCommand) -> i32 {
    match command {
        HarnessCommand::Tool(mut args) => {
            args.insert(0, "harness".into());
            super::tool_cmd::run(client, &args).await
        }
        HarnessCommand::Install => install(client).await,
        HarnessCommand::Uninstall => uninstall(client).await,
    }
}

async fn install(client: &Client) -> i32 {
    let Some(dir) = plugin_dir() else {
        return fail(
            "the harness plugin was not found: set VYRE_HARNESS_DIR to the harness folder of a Vyre checkout or install",
        );
    };
    let claude = claude_program(client).await;
    let dir_text = dir.display().to_string();
    for step in [
        vec!["marketplace", "add", dir_text.as_str()],
        vec!["install", PLUGIN_ID, "--scope", "user"],
    ] {
        match plugin(&claude, &step) {
            Ok((true, _)) => {}
            Ok((false, text)) => {
                return fail(&format!(
                    "`claude plugin {}` failed: {text}",
                    step.join(" ")
                ));
            }
            Err(e) => return fail(&e),
        }
    }
    println!("The Vyre harness is installed for claude (plugin {PLUGIN_ID}, from {dir_text}).");
    println!("New claude sessions load it; `vyre harness uninstall` removes it.");
    if !vyre_on_path() {
        println!(
            "Note: its hooks and MCP server run `vyre`, which is not on PATH; add {} to PATH.",
            std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(|p| p.display().to_string()))
                .unwrap_or_else(|| "the folder of this vyre".into())
        );
    }
    0
}

async fn uninstall(client: &Client) -> i32 {
    match remove(client).await {
        Ok(Removed::Yes) => println!("The Vyre harness is uninstalled from claude."),
        Ok(Removed::WasNot) => println!("The Vyre harness was not installed."),
        Ok(Removed::NoClaude(e)) => return fail(&e),
        Err(e) => return fail(&e),
    }
    0
}

/// What removing the plugin found.
pub enum Removed {
    Yes,
    WasNot,
    /// Claude Code cannot be run here (so no plugin of it is installed through it).
    NoClaude(String),
}

/// Remove the plugin and its marketplace from Claude Code's user settings.
pub async fn remove(client: &Client) -> Result<Removed, String> {
    let claude = claude_program(client).await;
    let mut removed = false;
    for step in [
        vec!["uninstall", PLUGIN_ID, "--scope", "user"],
        vec!["marketplace", "remove", MARKETPLACE],
    ] {
        match plugin(&claude, &step) {
            Ok((true, _)) => removed = true,
            // Not there: nothing to remove, which is what was asked.
            Ok((false, text)) if text.contains("not found") => {}
            Ok((false, text)) => {
                return Err(format!("`claude plugin {}` failed: {text}", step.join(" ")));
            }
            Err(e) => return Ok(Removed::NoClaude(e)),
        }
    }
    Ok(if removed {
        Removed::Yes
    } else {
        Removed::WasNot
    })
}

#[cfg(test)]
mod tests {
    use super::TOOLS_HELP;

    /// The help names exactly the tools the harness module shows on the command line.
    #[test]
    fn the_help_lists_the_tools_the_manifest_shows() {
        let manifest: serde_json::Value =
            serde_json::from_str(include_str!("../../modules/harness/module.json")).unwrap();
        let mut shown: Vec<&str> = manifest["shows"]["cli"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().strip_prefix("harness.").unwrap())
            .collect();
        let mut listed: Vec<&str> = TOOLS_HELP
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        shown.sort();
        listed.sort();
        assert_eq!(listed, shown);
    }
}
