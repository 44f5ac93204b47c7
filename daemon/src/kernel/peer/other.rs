//! Other unixes (macOS): the peer's uid and pid from the socket, its ancestry from `ps`. There is
//! no pidfd: the process is checked to run before and after it is read, so one that exited (the
//! connect-fork-exit trick) is refused. Sessions on macOS are contained by Claude Code's own
//! sandbox (ADR 0014), which keeps their commands off vyred's socket.

use super::{PeerFacts, ProcessInfo};

pub(super) fn facts(stream: &tokio::net::UnixStream) -> PeerFacts {
    let cred = match stream.peer_cred() {
        Ok(cred) => cred,
        Err(e) => return PeerFacts::nobody(format!("the socket gave no credentials: {e}")),
    };
    let Some(pid) = cred.pid().filter(|p| *p > 0) else {
        return PeerFacts::nobody("the socket did not say which process connected");
    };
    let alive = || nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
    if !alive() {
        return PeerFacts::nobody(format!("the process that connected (pid {pid}) has exited"));
    }
    let (groups, under_claude) = super::ancestry(pid);
    if !alive() || groups.is_empty() {
        return PeerFacts::nobody(format!(
            "the process that connected (pid {pid}) exited while vyred read it"
        ));
    }
    PeerFacts {
        uid: Some(cred.uid()),
        pid: Some(pid),
        groups,
        under_claude,
        ..PeerFacts::default()
    }
}

/// Every process: not listed here, where a session's Claude Code is the process vyred started.
pub(super) fn pids() -> Vec<i32> {
    Vec::new()
}

pub(super) fn process_info(pid: i32) -> Option<ProcessInfo> {
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
