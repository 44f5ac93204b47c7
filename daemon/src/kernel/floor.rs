//! The floor (spec section 11, ADR 0030 section 8): what a session may never do, decided before
//! any person is asked and never configurable. A call the floor denies is refused with its
//! reason; nobody is asked.
//!
//! Checked here: destructive commands, and any write (by a file tool or a Bash write form) to the
//! files that hold Claude Code's permissions, since a session that could write them could allow
//! itself anything.

use serde_json::Value;

/// Files whose writing would let a session grant itself permissions.
const PROTECTED_NAMES: &[&str] = &[".claude.json", ".mcp.json", "managed-settings.json"];
/// Protected when inside a `.claude` folder.
const PROTECTED_IN_CLAUDE_DIR: &[&str] = &["settings.json", "settings.local.json"];

/// Why the floor refuses this call, if it does.
pub fn check(tool: &str, input: &Value) -> Option<String> {
    match tool {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            let path = input["file_path"]
                .as_str()
                .or_else(|| input["notebook_path"].as_str())?;
            protected(path).then(|| {
                format!(
                    "writing {path} could change this session's permissions; the floor refuses it"
                )
            })
        }
        "Bash" => {
            let command = input["command"].as_str()?;
            if let Some(why) = destructive(command) {
                return Some(format!("{why}; the floor refuses it"));
            }
            bash_write_targets(command)
                .into_iter()
                .find(|t| protected(t))
                .map(|t| {
                    format!(
                        "writing {t} could change this session's permissions; the floor refuses it"
                    )
                })
        }
        _ => None,
    }
}

fn protected(path: &str) -> bool {
    let path = path.trim_matches(|c| c == '"' || c == '\'');
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or("");
    let parent = parts.next().unwrap_or("");
    PROTECTED_NAMES.contains(&name)
        || (parent == ".claude" && PROTECTED_IN_CLAUDE_DIR.contains(&name))
}

/// Commands that destroy a whole system or disk.
fn destructive(command: &str) -> Option<&'static str> {
    let c: String = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let words: Vec<&str> = c
        .split([';', '&', '|'])
        .flat_map(|s| s.split_whitespace())
        .collect();
    let rm_recursive_root = c.split([';', '&', '|']).any(|part| {
        let w: Vec<&str> = part.split_whitespace().collect();
        let Some(i) = w.iter().position(|x| *x == "rm") else {
            return false;
        };
        let flags: String = w[i + 1..]
            .iter()
            .filter(|x| x.starts_with('-'))
            .map(|x| x.trim_start_matches('-'))
            .collect();
        let recursive = flags.contains('r') || flags.contains('R') || w.contains(&"--recursive");
        recursive
            && w[i + 1..].iter().any(|t| {
                matches!(
                    *t,
                    "/" | "/*"
                        | "~"
                        | "~/"
                        | "$HOME"
                        | "/home"
                        | "/usr"
                        | "/etc"
                        | "--no-preserve-root"
                )
            })
    });
    if rm_recursive_root {
        return Some("deleting the whole system or home folder");
    }
    if words.iter().any(|w| w.starts_with("mkfs")) {
        return Some("formatting a file system");
    }
    if c.contains("of=/dev/sd")
        || c.contains("of=/dev/nvme")
        || c.contains("of=/dev/disk")
        || c.contains("> /dev/sd")
    {
        return Some("overwriting a disk");
    }
    if c.contains(":(){") || c.contains(":() {") {
        return Some("a fork bomb");
    }
    if c.contains("chmod -R 777 /") && (c.ends_with("777 /") || c.contains("777 / ")) {
        return Some("opening every file of the system to everyone");
    }
    None
}

/// Files a Bash command writes by its common write forms: redirections, `tee`, `cp`/`mv`
/// destinations, `sed -i`, `touch`.
fn bash_write_targets(command: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for part in command.split([';', '&', '|', '\n']) {
        let words: Vec<&str> = part.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if let Some(rest) = w.strip_prefix(">>").or_else(|| w.strip_prefix('>')) {
                if !rest.is_empty() {
                    targets.push(rest.to_string());
                } else if let Some(next) = words.get(i + 1) {
                    targets.push(next.to_string());
                }
            }
        }
        match words.first().copied() {
            Some("tee") | Some("touch") => targets.extend(
                words[1..]
                    .iter()
                    .filter(|w| !w.starts_with('-'))
                    .map(|w| w.to_string()),
            ),
            Some("cp") | Some("mv") | Some("ln") | Some("install") => {
                if let Some(last) = words.iter().skip(1).rfind(|w| !w.starts_with('-')) {
                    targets.push(last.to_string());
                }
            }
            Some("sed") if words.iter().any(|w| w.starts_with("-i")) => {
                if let Some(last) = words.last() {
                    targets.push(last.to_string());
                }
            }
            _ => {}
        }
        // `... | tee file` starts a part with tee too, handled above.
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_floor_table() {
        let bash = |c: &str| check("Bash", &json!({ "command": c }));
        let write = |p: &str| check("Write", &json!({ "file_path": p, "content": "{}" }));
        for denied in [
            "rm -rf /",
            "sudo rm -rf --no-preserve-root /",
            "cd /tmp && rm -fr ~",
            "rm -r -f /*",
            "mkfs.ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/sda bs=1M",
            ":(){ :|:& };:",
            "echo '{}' > .claude/settings.local.json",
            "echo x >> /home/u/project/.claude/settings.json",
            "cat rules | tee .claude/settings.json",
            "cp my.json ~/.claude.json",
            "sed -i s/deny/allow/ .claude/settings.local.json",
            "echo {} >.mcp.json",
        ] {
            assert!(bash(denied).is_some(), "{denied}");
        }
        for allowed in [
            "rm -rf build/",
            "rm -rf ./target",
            "ls -la /",
            "cat .claude/settings.json",
            "echo hi > notes.txt",
            "grep -r settings.json .",
            "cp a.txt b.txt",
        ] {
            assert!(bash(allowed).is_none(), "{allowed}: {:?}", bash(allowed));
        }
        assert!(write("/w/.claude/settings.local.json").is_some());
        assert!(write("/w/.claude.json").is_some());
        assert!(write("/etc/claude-code/managed-settings.json").is_some());
        assert!(write("/w/settings.json").is_none(), "only inside .claude");
        assert!(write("/w/notes.txt").is_none());
        assert!(check("Read", &json!({ "file_path": "/w/.claude/settings.json" })).is_none());
    }
}
