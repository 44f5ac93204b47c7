//! `vyre service install|uninstall`: vyred as a systemd service, for a server without Docker.
//! A user unit (`~/.config/systemd/user/vyred.service`) by default, or with `--system` (as
//! root) a system unit run as the user who asked; either reads `VYRE_HOME/env` as its
//! EnvironmentFile and restarts vyred when it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Subcommand;

use super::fail;
use crate::kernel::paths::VyreHome;

#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write the unit, then enable and start it.
    Install {
        /// A system unit (needs root), run as the user who called sudo.
        #[arg(long)]
        system: bool,
        /// Only print the unit; change nothing.
        #[arg(long)]
        print: bool,
    },
    /// Stop, disable and remove the unit.
    Uninstall {
        #[arg(long)]
        system: bool,
    },
}

/// The unit's text.
pub fn unit(exe: &Path, home: &VyreHome, user: Option<&str>, system: bool) -> String {
    let root = home.root().display();
    let mut out = String::from(
        "[Unit]\nDescription=Vyre (vyred): Claude Code on a machine you own\nAfter=network-online.target\nWants=network-online.target\n\n[Service]\nType=simple\n",
    );
    if let Some(user) = user {
        out.push_str(&format!("User={user}\n"));
    }
    out.push_str(&format!(
        "Environment=VYRE_HOME={root}\nEnvironmentFile=-{root}/env\nExecStart={} daemon --role box\nRestart=on-failure\nRestartSec=2\nKillMode=mixed\nTimeoutStopSec=40\n\n[Install]\nWantedBy={}\n",
        exe.display(),
        if system { "multi-user.target" } else { "default.target" }
    ));
    out
}

fn unit_path(system: bool) -> Result<PathBuf, String> {
    if system {
        return Ok(PathBuf::from("/etc/systemd/system/vyred.service"));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or("neither XDG_CONFIG_HOME nor HOME is set")?;
    Ok(config.join("systemd/user/vyred.service"))
}

fn systemctl(system: bool, args: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new("systemctl");
    if !system {
        cmd.arg("--user");
    }
    let status = cmd.args(args).status().map_err(|e| {
        format!("cannot run systemctl ({e}); this machine may not use systemd — run `vyre daemon --role box` under your own supervisor")
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`systemctl {}` failed ({status})", args.join(" ")))
    }
}

/// The command that restarts an installed vyred unit (the system one first), if there is one.
pub fn restart_command() -> Option<&'static str> {
    if unit_path(true).is_ok_and(|p| p.exists()) {
        return Some("sudo systemctl restart vyred.service");
    }
    if unit_path(false).is_ok_and(|p| p.exists()) {
        return Some("systemctl --user restart vyred.service");
    }
    None
}

/// The installed units (user, then system), for `vyre uninstall`.
pub fn installed() -> Vec<(bool, PathBuf)> {
    [false, true]
        .into_iter()
        .filter_map(|system| {
            unit_path(system)
                .ok()
                .filter(|p| p.exists())
                .map(|p| (system, p))
        })
        .collect()
}

pub fn run(home: &VyreHome, command: ServiceCommand) -> i32 {
    match command {
        ServiceCommand::Install { system, print } => {
            let exe = match std::env::current_exe() {
                Ok(e) => e,
                Err(e) => return fail(&format!("cannot find the vyre binary: {e}")),
            };
            let user = if system {
                std::env::var("SUDO_USER").ok()
            } else {
                None
            };
            let text = unit(&exe, home, user.as_deref(), system);
            if print {
                print!("{text}");
                return 0;
            }
            if system && !nix::unistd::geteuid().is_root() {
                return fail("`--system` writes /etc/systemd/system: run it with sudo");
            }
            let path = match unit_path(system) {
                Ok(p) => p,
                Err(e) => return fail(&e),
            };
            if let Some(dir) = path.parent()
                && let Err(e) = std::fs::create_dir_all(dir)
            {
                return fail(&format!("cannot create {}: {e}", dir.display()));
            }
            if let Err(e) = std::fs::write(&path, text) {
                return fail(&format!("cannot write {}: {e}", path.display()));
            }
            println!("wrote {}", path.display());
            for step in [
                &["daemon-reload"][..],
                &["enable", "--now", "vyred.service"][..],
            ] {
                if let Err(e) = systemctl(system, step) {
                    return fail(&e);
                }
            }
            println!("vyred runs as a service and restarts when it fails.");
            if !system {
                println!(
                    "To keep it running after you log out: loginctl enable-linger {}",
                    std::env::var("USER").unwrap_or_else(|_| "$USER".into())
                );
            }
            0
        }
        ServiceCommand::Uninstall { system } => {
            let path = match unit_path(system) {
                Ok(p) => p,
                Err(e) => return fail(&e),
            };
            if !path.exists() {
                println!("No vyred service is installed ({}).", path.display());
                return 0;
            }
            let _ = systemctl(system, &["disable", "--now", "vyred.service"]);
            if let Err(e) = std::fs::remove_file(&path) {
                return fail(&format!("cannot remove {}: {e}", path.display()));
            }
            let _ = systemctl(system, &["daemon-reload"]);
            println!("removed {}", path.display());
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_reads_the_homes_env_and_restarts_on_failure() {
        let home = VyreHome::at("/srv/vyre");
        let text = unit(Path::new("/usr/bin/vyre"), &home, Some("sam"), true);
        assert!(text.contains("User=sam\n"));
        assert!(text.contains("Environment=VYRE_HOME=/srv/vyre\n"));
        assert!(text.contains("EnvironmentFile=-/srv/vyre/env\n"));
        assert!(text.contains("ExecStart=/usr/bin/vyre daemon --role box\n"));
        assert!(text.contains("Restart=on-failure\n"));
        assert!(text.contains("WantedBy=multi-user.target\n"));
        let user = unit(Path::new("/usr/bin/vyre"), &home, None, false);
        assert!(!user.contains("User="));
        assert!(user.contains("WantedBy=default.target\n"));
    }
}
