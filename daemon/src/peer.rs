//! Who is on the other end of the socket: the peer's credentials, and whether it runs inside a
//! Claude Code session (then it is a session, never a person, whatever it claims).

use std::path::Path;

/// True when the process `pid` or one of its ancestors is Claude Code.
pub fn inside_claude(pid: i32) -> bool {
    let mut pid = pid;
    for _ in 0..64 {
        if pid <= 1 {
            return false;
        }
        let Some((name, ppid)) = process_info(pid) else {
            return false;
        };
        if is_claude(&name) {
            return true;
        }
        pid = ppid;
    }
    false
}

fn is_claude(command: &str) -> bool {
    let base = Path::new(command.trim())
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    base == "claude"
        || command.contains("@anthropic-ai/claude-code")
        || command.contains("claude-code/cli.js")
}

/// The process's command (its name and, where readable, its argv) and its parent.
#[cfg(target_os = "linux")]
fn process_info(pid: i32) -> Option<(String, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name sits in parentheses and may itself hold spaces and parentheses.
    let close = stat.rfind(')')?;
    let name = &stat[stat.find('(')? + 1..close];
    let ppid = stat[close + 1..].split_whitespace().nth(1)?.parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .take(2)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let command = if argv.iter().any(|a| is_claude(a)) {
        argv.into_iter().find(|a| is_claude(a)).unwrap_or_default()
    } else {
        name.to_string()
    };
    Some((command, ppid))
}

#[cfg(not(target_os = "linux"))]
fn process_info(pid: i32) -> Option<(String, i32)> {
    let out = std::process::Command::new("ps")
        .args(["-o", "ppid=,comm=", "-p", &pid.to_string()])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let text = text.trim();
    let (ppid, comm) = text.split_once(char::is_whitespace)?;
    Some((comm.trim().to_string(), ppid.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_mean_claude() {
        assert!(is_claude("claude"));
        assert!(is_claude("/usr/local/bin/claude"));
        assert!(is_claude(
            "/x/node_modules/@anthropic-ai/claude-code/cli.js"
        ));
        assert!(!is_claude("bash"));
        assert!(!is_claude("claude-helper"));
    }

    #[test]
    fn this_test_is_not_inside_claude() {
        // The test runner's ancestry is cargo and a shell, unless someone runs the tests from
        // inside Claude Code; skip the assertion there.
        if std::env::var_os("CLAUDECODE").is_none() {
            assert!(!inside_claude(std::process::id() as i32));
        }
        assert!(process_info(std::process::id() as i32).is_some());
    }
}
