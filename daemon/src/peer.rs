//! Who is on the other end of the socket beyond its uid: whether it runs inside a Claude Code
//! session. Such a process is a session, never a person, whatever it claims (ADR 0030 section 8:
//! the peer check).
//!
//! A peer is inside a session when it or any ancestor is Claude Code, or when it or any ancestor
//! belongs to the process group or session of a process that the sessions layer registered in
//! [`SessionProcesses`] (which catches a model's Bash that detached with `setsid` or a double
//! fork, once sessions run under a subreaper).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// Process groups and sessions that belong to live Claude Code sessions, by thread.
#[derive(Clone, Default)]
pub struct SessionProcesses {
    // std RwLock: read on each socket request, written when a session starts or ends.
    groups: Arc<RwLock<HashMap<i32, String>>>,
}

impl SessionProcesses {
    /// Record a session's process group and session id (both, when they differ).
    pub fn register(&self, thread: &str, pgid: i32, sid: i32) {
        let mut groups = self.groups.write().expect("session processes");
        groups.insert(pgid, thread.to_string());
        groups.insert(sid, thread.to_string());
    }

    /// Forget a thread's groups once its last process is gone.
    pub fn unregister(&self, thread: &str) {
        self.groups
            .write()
            .expect("session processes")
            .retain(|_, t| t != thread);
    }

    /// `Some(thread)` when `pid` runs inside a session: `Some(Some(id))` for a registered one,
    /// `Some(None)` for a Claude Code process vyred does not know.
    pub fn session_of(&self, pid: i32) -> Option<Option<String>> {
        let groups = self.groups.read().expect("session processes").clone();
        let mut pid = pid;
        let mut unknown_claude = false;
        for _ in 0..64 {
            if pid <= 1 {
                break;
            }
            let Some(p) = process_info(pid) else { break };
            for id in [p.pgid, p.sid] {
                if let Some(thread) = groups.get(&id) {
                    return Some(Some(thread.clone()));
                }
            }
            unknown_claude |= is_claude(&p.command);
            pid = p.ppid;
        }
        unknown_claude.then_some(None)
    }
}

/// Whether `pid` is a running Claude Code.
pub fn is_claude_process(pid: i32) -> bool {
    pid > 0 && process_info(pid).is_some_and(|p| is_claude(&p.command))
}

/// The nearest Claude Code among `pid` and its ancestors (a hook runs under a shell under it).
pub fn claude_ancestor(pid: i32) -> Option<i32> {
    let mut pid = pid;
    for _ in 0..64 {
        if pid <= 1 {
            return None;
        }
        let p = process_info(pid)?;
        if is_claude(&p.command) {
            return Some(pid);
        }
        pid = p.ppid;
    }
    None
}

/// Whether a program name or argv word is Claude Code.
pub fn is_claude(command: &str) -> bool {
    let base = Path::new(command.trim())
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    base == "claude"
        || command.contains("@anthropic-ai/claude-code")
        || command.contains("claude-code/cli.js")
}

#[derive(Debug)]
struct ProcessInfo {
    /// Its name, or the argv word that names Claude Code.
    command: String,
    ppid: i32,
    pgid: i32,
    sid: i32,
}

#[cfg(target_os = "linux")]
fn process_info(pid: i32) -> Option<ProcessInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name sits in parentheses and may itself hold spaces and parentheses.
    let close = stat.rfind(')')?;
    let name = &stat[stat.find('(')? + 1..close];
    let mut fields = stat[close + 1..].split_whitespace().skip(1);
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    let sid = fields.next()?.parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let claude_arg = cmdline
        .split(|b| *b == 0)
        .take(2)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .find(|a| is_claude(a));
    Some(ProcessInfo {
        command: claude_arg.unwrap_or_else(|| name.to_string()),
        ppid,
        pgid,
        sid,
    })
}

#[cfg(not(target_os = "linux"))]
fn process_info(pid: i32) -> Option<ProcessInfo> {
    let out = std::process::Command::new("ps")
        .args(["-o", "ppid=,pgid=,sess=,comm=", "-p", &pid.to_string()])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut words = text.split_whitespace();
    let ppid = words.next()?.parse().ok()?;
    let pgid = words.next()?.parse().ok()?;
    let sid = words.next()?.parse().unwrap_or(0);
    let command = words.collect::<Vec<_>>().join(" ");
    Some(ProcessInfo {
        command,
        ppid,
        pgid,
        sid,
    })
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
    fn a_registered_group_makes_its_processes_a_session() {
        let me = std::process::id() as i32;
        let info = process_info(me).expect("our own process is readable");
        let sessions = SessionProcesses::default();
        // Unless the tests run inside Claude Code, this process is nobody's session.
        if std::env::var_os("CLAUDECODE").is_none() {
            assert_eq!(sessions.session_of(me), None);
        }
        sessions.register("thread-1", info.pgid, info.pgid);
        assert_eq!(sessions.session_of(me), Some(Some("thread-1".to_string())));
        sessions.unregister("thread-1");
        assert_ne!(sessions.session_of(me), Some(Some("thread-1".to_string())));
    }
}
