//! `vyre uninstall [--purge --yes]`: undo what Vyre set up outside its package, before the
//! package itself is removed (npm runs no uninstall script, so `npm uninstall -g vyre` alone
//! leaves a running vyred and its service unit behind). It removes the harness plugin from
//! Claude Code, the vyred service units `vyre service install` wrote, stops vyred, and says how
//! to remove the program. `VYRE_HOME` (the store, the vault, the logs) stays unless `--purge`
//! is given with `--yes`.

use std::path::Path;

use super::fail;
use super::harness_cmd::Removed;
use crate::kernel::paths::VyreHome;
use crate::surfaces::client::Client;

pub async fn run(home: &VyreHome, client: &Client, purge: bool, yes: bool) -> i32 {
    if purge && !yes {
        return fail(&format!(
            "--purge deletes {} (the store, the vault and the logs) for good; add --yes to confirm",
            home.root().display()
        ));
    }
    if purge && let Err(e) = purgeable(home.root()) {
        return fail(&e);
    }
    let mut failed = false;

    // The plugin first: which `claude` sessions use, vyred says while it runs.
    match super::harness_cmd::remove(client).await {
        Ok(Removed::Yes) => println!("removed the Vyre harness plugin from claude"),
        Ok(Removed::WasNot) => println!("the Vyre harness plugin was not installed in claude"),
        Ok(Removed::NoClaude(_)) => {
            println!("Claude Code is not installed here: no harness plugin to remove")
        }
        Err(e) => {
            eprintln!("vyre: {e}");
            failed = true;
        }
    }

    for (system, path) in super::service_cmd::installed() {
        if system && !nix::unistd::geteuid().is_root() {
            eprintln!(
                "vyre: a system service is installed ({}): remove it with `sudo vyre service uninstall --system`",
                path.display()
            );
            failed = true;
            continue;
        }
        let command = super::service_cmd::ServiceCommand::Uninstall { system };
        if super::service_cmd::run(home, command) != 0 {
            failed = true;
        }
    }

    match super::daemon_cmds::stop(home, client).await {
        Ok(true) => println!("vyred stopped"),
        Ok(false) => println!("vyred was not running"),
        Err(e) => {
            eprintln!("vyre: {e}");
            failed = true;
        }
    }

    if failed {
        return fail(
            "not everything was removed (see above); run `vyre uninstall` again after fixing it",
        );
    }
    if purge {
        if let Err(e) = std::fs::remove_dir_all(home.root()) {
            return fail(&format!("cannot delete {}: {e}", home.root().display()));
        }
        println!("deleted {}", home.root().display());
    } else if home.root().exists() {
        println!(
            "kept {} (the store, the vault and the logs); `vyre uninstall --purge --yes` deletes it",
            home.root().display()
        );
    }
    println!();
    println!("Now remove the program: {}", remove_program());
    0
}

/// A folder `--purge` may delete: a Vyre home, never a person's home folder or `/`.
fn purgeable(root: &Path) -> Result<(), String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    if root.parent().is_none() || home.as_deref() == Some(root) {
        return Err(format!(
            "VYRE_HOME is {}: --purge does not delete that",
            root.display()
        ));
    }
    if root.exists() && !root.join("vyre.db").exists() && !root.join("config.json").exists() {
        return Err(format!(
            "{} holds no Vyre store or config: --purge does not delete it",
            root.display()
        ));
    }
    Ok(())
}

/// How this binary was installed, so how it is removed.
fn remove_program() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let text = exe.display().to_string();
    if let Some((_, platform)) = text.split_once("/node_modules/@vyre/cli-") {
        let platform = platform.split('/').next().unwrap_or("");
        format!("npm uninstall -g vyre @vyre/cli-{platform}")
    } else if text.contains("/.cargo/bin/") {
        "cargo uninstall vyre".into()
    } else {
        format!("delete {text}")
    }
}
