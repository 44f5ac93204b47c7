//! Trusting a server's SSH host key for `vyre box add`, as ssh itself asks a person: when ssh
//! does not know the key, it is read (`ssh-keyscan`), its fingerprints are shown, and the
//! person is asked; only a yes adds it to their known-hosts file, and every connection after
//! checks it strictly, so the server reached is the one whose key was shown. With nobody at a
//! terminal, an unknown key is refused: `--known-hosts <file>` says which keys to trust.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::ssh::{Ssh, explain, unknown_host_key};

/// Asks the person a yes-or-no question; none when nobody can be asked.
pub type Ask<'a> = Option<&'a mut dyn FnMut(&str) -> bool>;

/// Make sure ssh knows the host's key and can sign in: at once when it does, after the
/// person's yes when it does not.
pub fn ensure_trusted(ssh: &Ssh, ask: Ask<'_>) -> Result<(), String> {
    let out = ssh
        .command(&[])
        .arg("true")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run ssh ({e}); install the OpenSSH client"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !unknown_host_key(&stderr) {
        return Err(explain(&ssh.target, out.status.code(), &stderr));
    }
    if let Some(file) = &ssh.known_hosts {
        return Err(format!(
            "{}'s host key is not in {}; add the server's key to it (e.g. from `ssh-keyscan` run where you trust the network, checked against the server's own fingerprint)",
            ssh.target,
            file.display()
        ));
    }
    let Some(ask) = ask else {
        return Err(format!(
            "{}'s host key is not known here and nobody is at a terminal to check it; run `vyre box add` in a terminal to see its fingerprint and trust it, or pass --known-hosts <file> with the server's key",
            ssh.target
        ));
    };
    let config = ssh.resolved()?;
    let get = |key: &str| {
        config
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let host = get("hostname").unwrap_or_else(|| ssh.target.clone());
    let port: u16 = get("port").and_then(|p| p.parse().ok()).unwrap_or(22);
    let name = known_name(&get("hostkeyalias").unwrap_or_else(|| host.clone()), port);
    let lines: Vec<String> = scan(&host, port)?
        .into_iter()
        .map(|(kind, key)| format!("{name} {kind} {key}"))
        .collect();
    let prints = fingerprints(&lines)?;
    let question = format!(
        "The host key of {} ({name}) is not known here. Its fingerprints:\n{}\nCheck them against the server's own (`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` there).\nTrust this host and go on? [y/N] ",
        ssh.target,
        prints
            .iter()
            .map(|p| format!("  {p}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    if !ask(&question) {
        return Err(format!(
            "{}'s host key was not trusted; nothing was done",
            ssh.target
        ));
    }
    let file = known_hosts_file(get("userknownhostsfile").as_deref())?;
    append(&file, &lines)?;
    println!("  trusted: added to {}", file.display());
    // Strictly again: the server must show the key the person saw.
    ssh.remote("true").map(|_| ())
}

/// How known_hosts names a host: `host`, or `[host]:port` off port 22.
pub fn known_name(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    }
}

/// The host's keys as `ssh-keyscan` reads them: `(type, base64)` pairs.
fn scan(host: &str, port: u16) -> Result<Vec<(String, String)>, String> {
    let out = Command::new("ssh-keyscan")
        .args(["-T", "10", "-p", &port.to_string(), "--", host])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run ssh-keyscan ({e}); install the OpenSSH client"))?;
    let keys = parse_scan(&String::from_utf8_lossy(&out.stdout));
    if keys.is_empty() {
        return Err(format!(
            "cannot read the host key of {host} port {port} with ssh-keyscan ({}); connect once with ssh yourself to check and trust it, or pass --known-hosts <file>",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(keys)
}

/// `host type key` lines (comments skipped) to `(type, key)`.
pub fn parse_scan(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let (_host, kind, key) = (words.next()?, words.next()?, words.next()?);
            Some((kind.to_string(), key.to_string()))
        })
        .collect()
}

/// `ssh-keygen -l` of known_hosts lines: `256 SHA256:... name (ED25519)` each.
fn fingerprints(lines: &[String]) -> Result<Vec<String>, String> {
    let path = std::env::temp_dir().join(format!(
        "vyre-host-keys-{}-{}",
        std::process::id(),
        crate::now_ms()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut f| f.write_all(format!("{}\n", lines.join("\n")).as_bytes()));
    let out = written.and_then(|()| {
        Command::new("ssh-keygen")
            .arg("-l")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .output()
    });
    let _ = std::fs::remove_file(&path);
    let out = out.map_err(|e| format!("cannot show the host key's fingerprint: {e}"))?;
    let prints: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    if prints.is_empty() {
        return Err(format!(
            "cannot show the host key's fingerprint: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(prints)
}

/// The person's known-hosts file: the first of ssh's `UserKnownHostsFile`, `~` expanded.
fn known_hosts_file(configured: Option<&str>) -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or("HOME is not set, so there is no known-hosts file to add the key to")?;
    let first = configured
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or("~/.ssh/known_hosts");
    Ok(match first.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(first),
    })
}

/// Add lines to a known-hosts file, making it (0600, in a 0700 folder) when missing.
fn append(file: &Path, lines: &[String]) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let fail = |e: std::io::Error| format!("cannot add the host key to {}: {e}", file.display());
    if let Some(dir) = file.parent()
        && !dir.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(fail)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(file)
        .map_err(fail)?;
    f.write_all(format!("{}\n", lines.join("\n")).as_bytes())
        .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_scans_read_as_known_hosts_has_them() {
        assert_eq!(known_name("box.example", 22), "box.example");
        assert_eq!(known_name("127.0.0.1", 2222), "[127.0.0.1]:2222");
        let scanned = "# 127.0.0.1:2222 SSH-2.0-OpenSSH_9.2\n[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyNotReal\n\n";
        assert_eq!(
            parse_scan(scanned),
            [(
                "ssh-ed25519".to_string(),
                "AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyNotReal".to_string()
            )]
        );
    }

    #[test]
    fn the_known_hosts_file_is_ssh_s_first() {
        let home = PathBuf::from(std::env::var_os("HOME").unwrap());
        assert_eq!(
            known_hosts_file(Some("~/.ssh/known_hosts ~/.ssh/known_hosts2")).unwrap(),
            home.join(".ssh/known_hosts")
        );
        assert_eq!(
            known_hosts_file(Some("/etc/vyre/hosts")).unwrap(),
            PathBuf::from("/etc/vyre/hosts")
        );
    }
}
