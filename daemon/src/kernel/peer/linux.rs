//! Linux: the peer pinned by a pidfd, its namespaces read from nsfs, its ancestry from /proc.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::OnceLock;

use super::{PeerFacts, ProcessInfo};

/// `SO_PEERPIDFD` (Linux 6.5): a pidfd for the process that connected. The generic value, which
/// every architecture Vyre builds for uses.
const SO_PEERPIDFD: libc::c_int = 77;
/// `NS_GET_PARENT`, `_IO(0xb7, 0x2)`: the parent of a pid or user namespace.
const NS_GET_PARENT: libc::c_ulong = 0xb702;
/// How deep namespaces may nest (the kernel's own limit is 32).
const MAX_NESTING: usize = 33;

pub(super) fn facts(stream: &tokio::net::UnixStream) -> PeerFacts {
    let cred = match stream.peer_cred() {
        Ok(cred) => cred,
        Err(e) => return PeerFacts::nobody(format!("the socket gave no credentials: {e}")),
    };
    let uid = cred.uid();
    let pid = match cred.pid() {
        Some(pid) if pid > 0 => pid,
        // 0: the peer is outside vyred's pid namespace.
        _ => return PeerFacts::nobody("the process that connected is not visible to vyred"),
    };
    let Some(pin) = Pin::new(stream.as_raw_fd(), pid) else {
        return PeerFacts::nobody(format!("the process that connected (pid {pid}) has exited"));
    };
    let mut facts = PeerFacts {
        uid: Some(uid),
        pid: Some(pid),
        ..PeerFacts::default()
    };
    // Another user's namespaces are not vyred's to read (nor needed: its uid decides).
    if uid == nix::unistd::geteuid().as_raw() {
        let own = own_namespaces();
        match pid_namespaces(pid, own.pid) {
            Ok(chain) => facts.pid_namespaces = chain,
            Err(e) => return PeerFacts::nobody(format!("pid {pid}'s namespaces: {e}")),
        }
        match namespace_inode(pid, "user") {
            Ok(user) => facts.foreign_user_namespace = user != own.user,
            Err(e) => return PeerFacts::nobody(format!("pid {pid}'s user namespace: {e}")),
        }
    }
    (facts.groups, facts.under_claude) = super::ancestry(pid);
    // What was read belongs to the process that connected only if it still runs now.
    if !pin.alive() {
        return PeerFacts::nobody(format!(
            "the process that connected (pid {pid}) exited while vyred read it"
        ));
    }
    facts
}

/// The connecting process, held so that its pid cannot name another process meanwhile.
enum Pin {
    /// A pidfd: readable once the process has exited.
    Fd(OwnedFd),
    /// Kernels without pidfds (before 5.3): the process's start time, compared again later.
    StartedAt { pid: i32, at: u64 },
}

impl Pin {
    fn new(socket: libc::c_int, pid: i32) -> Option<Pin> {
        let pin = match peer_pidfd(socket).or_else(|| pidfd_open(pid)) {
            Some(fd) => Pin::Fd(fd),
            None if pidfds_unsupported() => Pin::StartedAt {
                pid,
                at: start_time(pid)?,
            },
            None => return None,
        };
        pin.alive().then_some(pin)
    }

    fn alive(&self) -> bool {
        match self {
            Pin::Fd(fd) => {
                let mut p = libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, no timeout.
                let n = unsafe { libc::poll(&mut p, 1, 0) };
                n == 0
            }
            Pin::StartedAt { pid, at } => start_time(*pid) == Some(*at),
        }
    }
}

fn peer_pidfd(socket: libc::c_int) -> Option<OwnedFd> {
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the option writes one c_int into `fd`; `len` says so.
    let rc = unsafe {
        libc::getsockopt(
            socket,
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    // SAFETY: on success the kernel handed us a new descriptor we now own.
    (rc == 0 && fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: a plain syscall; on success it returns a new descriptor we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

fn pidfds_unsupported() -> bool {
    static UNSUPPORTED: OnceLock<bool> = OnceLock::new();
    *UNSUPPORTED.get_or_init(|| {
        // SAFETY: a plain syscall on our own pid.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, std::process::id(), 0) };
        if fd >= 0 {
            // SAFETY: we own it and close it once.
            unsafe { libc::close(fd as libc::c_int) };
            false
        } else {
            std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS)
        }
    })
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

struct Namespaces {
    pid: u64,
    user: u64,
}

fn own_namespaces() -> &'static Namespaces {
    static OWN: OnceLock<Namespaces> = OnceLock::new();
    OWN.get_or_init(|| Namespaces {
        pid: namespace_inode(std::process::id() as i32, "pid").unwrap_or(0),
        user: namespace_inode(std::process::id() as i32, "user").unwrap_or(0),
    })
}

fn namespace_inode(pid: i32, kind: &str) -> std::io::Result<u64> {
    Ok(std::fs::metadata(format!("/proc/{pid}/ns/{kind}"))?.ino())
}

/// The pid namespaces from `pid`'s own up to vyred's (`own`), innermost first, without `own`.
fn pid_namespaces(pid: i32, own: u64) -> std::io::Result<Vec<u64>> {
    let mut ns = std::fs::File::open(format!("/proc/{pid}/ns/pid"))?;
    let mut chain = Vec::new();
    for _ in 0..MAX_NESTING {
        let inode = ns.metadata()?.ino();
        if inode == own {
            return Ok(chain);
        }
        chain.push(inode);
        // SAFETY: an ioctl without argument on a namespace fd we own; it returns a new fd.
        let parent = unsafe { libc::ioctl(ns.as_raw_fd(), NS_GET_PARENT as _) };
        if parent < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel handed us a new descriptor we now own.
        ns = unsafe { std::fs::File::from_raw_fd(parent) };
    }
    Err(std::io::Error::other(
        "namespaces nest deeper than the kernel allows",
    ))
}

/// Every process this one can see.
pub(super) fn pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

pub(super) fn process_info(pid: i32) -> Option<ProcessInfo> {
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
        .find(|a| super::is_claude(a));
    Some(ProcessInfo {
        command: claude_arg.unwrap_or_else(|| name.to_string()),
        ppid,
        pgid,
        sid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_pid_namespace_is_no_chain() {
        let own = own_namespaces();
        assert_ne!(own.pid, 0);
        assert_eq!(
            pid_namespaces(std::process::id() as i32, own.pid).unwrap(),
            Vec::<u64>::new()
        );
        assert!(start_time(std::process::id() as i32).is_some());
    }

    #[test]
    fn a_pidfd_says_when_its_process_has_exited() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let pin = Pin::Fd(pidfd_open(pid).unwrap());
        assert!(pin.alive());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!pin.alive(), "an exited process is not alive");
    }
}
