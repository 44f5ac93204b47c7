//! The system's `ssh` client, to one server: what `vyre box add` runs there. The person's own
//! keys, agent, `~/.ssh/config` and known hosts apply (ADR 0012). Host keys are checked
//! strictly (a key is trusted only as [`super::host_key`] says), the target always comes after
//! `--` (so it is never read as an option), and a remote command is one string the server's
//! shell parses, so its words are quoted with [`super::sh`].

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A server to reach over SSH, and how.
#[derive(Debug, Clone)]
pub struct Ssh {
    /// `user@host` or `host` (or a `Host` of `~/.ssh/config`).
    pub target: String,
    pub port: Option<u16>,
    /// The key to sign in with (`-i`).
    pub identity: Option<String>,
    /// The only known-hosts file to trust keys from, instead of the person's own.
    pub known_hosts: Option<PathBuf>,
}

/// Why a target or an image name is refused before ssh runs.
pub fn check_word(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("the {what} is empty"));
    }
    if value.starts_with('-') {
        return Err(format!(
            "the {what} {value:?} starts with '-', which ssh or the container engine would read as an option"
        ));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the {what} {value:?} holds a space or a control character"
        ));
    }
    Ok(())
}

impl Ssh {
    /// `ssh` with every option (and `extra` ones) but no target.
    fn options(&self, extra: &[&str]) -> Command {
        let mut cmd = Command::new("ssh");
        // BatchMode: a refused key is an error, not a password prompt. StrictHostKeyChecking:
        // an unknown or changed host key is refused; a new one is trusted only through
        // host_key, which shows it to the person first.
        cmd.args([
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "StrictHostKeyChecking=yes",
        ]);
        if let Some(file) = &self.known_hosts {
            cmd.arg("-o")
                .arg(format!("UserKnownHostsFile={}", ssh_path(file)));
        }
        if let Some(port) = self.port {
            cmd.args(["-p", &port.to_string()]);
        }
        if let Some(key) = &self.identity {
            cmd.args(["-i", key, "-o", "IdentitiesOnly=yes"]);
        }
        cmd.args(extra);
        cmd
    }

    /// `ssh [options] [extra] -- <target>`; a remote command goes after it.
    pub fn command(&self, extra: &[&str]) -> Command {
        let mut cmd = self.options(extra);
        cmd.arg("--").arg(&self.target);
        cmd
    }

    /// What ssh's configuration makes of the target (`ssh -G`): `key value` pairs, keys in
    /// lower case.
    pub fn resolved(&self) -> Result<Vec<(String, String)>, String> {
        let out = self
            .options(&["-G"])
            .arg("--")
            .arg(&self.target)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run ssh ({e}); install the OpenSSH client"))?;
        if !out.status.success() {
            return Err(format!(
                "ssh cannot read its configuration for {}: {}",
                self.target,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect())
    }

    /// Run a shell script on the host; its stdout, or why it failed.
    pub fn remote(&self, script: &str) -> Result<String, String> {
        let out = self
            .command(&[])
            .arg(script)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run ssh ({e}); install the OpenSSH client"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(explain(
                &self.target,
                out.status.code(),
                &String::from_utf8_lossy(&out.stderr),
            ))
        }
    }
}

/// A path as one value of an ssh option: ssh expands `%` tokens and splits on spaces.
fn ssh_path(path: &std::path::Path) -> String {
    let text = path.display().to_string().replace('%', "%%");
    if text.contains(char::is_whitespace) {
        format!("\"{text}\"")
    } else {
        text
    }
}

/// Whether ssh refused because the host's key is not known (as opposed to changed).
pub fn unknown_host_key(stderr: &str) -> bool {
    stderr.contains("Host key verification failed")
        && stderr.contains("host key is known for")
        && !stderr.contains("HOST IDENTIFICATION HAS CHANGED")
}

/// ssh's failure in words: unreachable, the key refused, the host key unknown or changed, or
/// the step's own error.
pub fn explain(target: &str, code: Option<i32>, stderr: &str) -> String {
    let last = stderr
        .lines()
        .rfind(|l| !l.trim().is_empty() && !l.starts_with("Warning: Permanently added"))
        .unwrap_or("")
        .trim();
    if code == Some(255) {
        if stderr.contains("Permission denied") {
            return format!(
                "{target} refused the key ({last}); add your public key to the server's ~/.ssh/authorized_keys, or pass the right one with -i"
            );
        }
        if unknown_host_key(stderr) {
            return format!(
                "{target}'s host key is not known here ({last}); check its fingerprint and trust it, or pass --known-hosts with a file that holds it"
            );
        }
        if stderr.contains("Host key verification failed") {
            return format!(
                "{target}'s host key is not the one known for it ({last}); check you have the right server"
            );
        }
        return format!("cannot reach {target} ({last})");
    }
    format!("on {target}: {last}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &Command) -> Vec<String> {
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn ssh(target: &str) -> Ssh {
        Ssh {
            target: target.into(),
            port: Some(2222),
            identity: Some("/k/id".into()),
            known_hosts: Some("/k/known hosts%".into()),
        }
    }

    #[test]
    fn the_target_comes_after_the_options_and_a_double_dash() {
        let a = args(&ssh("-oProxyCommand=touch x").command(&["-N"]));
        let dash = a.iter().position(|x| x == "--").expect("--");
        assert_eq!(a[dash + 1], "-oProxyCommand=touch x");
        assert_eq!(a.len(), dash + 2);
        assert!(a[..dash].contains(&"StrictHostKeyChecking=yes".to_string()));
        assert!(a[..dash].contains(&"-N".to_string()));
        assert!(a[..dash].contains(&"UserKnownHostsFile=\"/k/known hosts%%\"".to_string()));
        assert!(!a.iter().any(|x| x.contains("accept-new")));
    }

    #[test]
    fn targets_and_images_that_look_like_options_are_refused() {
        assert!(check_word("target", "sam@box").is_ok());
        assert!(check_word("image", "localhost/vyre-box:dev").is_ok());
        for bad in ["-oProxyCommand=x", "", "a b", "a\nb"] {
            assert!(check_word("target", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ssh_failures_say_which_it_was() {
        let refused = explain(
            "sam@box",
            Some(255),
            "root@127.0.0.1: Permission denied (publickey).\n",
        );
        assert!(refused.contains("refused the key"), "{refused}");
        let down = explain(
            "sam@box",
            Some(255),
            "ssh: connect to host box port 22: Connection refused\n",
        );
        assert!(down.starts_with("cannot reach sam@box"), "{down}");
        let unknown = "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.\n";
        assert!(unknown_host_key(unknown));
        assert!(explain("sam@box", Some(255), unknown).contains("not known here"));
        let changed = "@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nHost key for [127.0.0.1]:2222 has changed and you have requested strict checking.\nHost key verification failed.\n";
        assert!(!unknown_host_key(changed));
        assert!(explain("sam@box", Some(255), changed).contains("not the one known"));
        let step = explain("sam@box", Some(1), "Error: no such image\n");
        assert_eq!(step, "on sam@box: Error: no such image");
    }
}
