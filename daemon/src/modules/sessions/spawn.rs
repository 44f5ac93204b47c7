//! The one place session processes are started (ADR 0030 section 8): each child leads a new
//! session and process group, so stopping it stops everything it started; its pid, pgid and sid
//! are known the moment it exists, before it can run a tool; its environment is built from
//! nothing; a credential reaches it on file descriptor 3, never in its environment. Its stdin,
//! stdout and stderr are sockets, not pipes: a pipe can be opened again through
//! `/proc/<pid>/fd/<n>` by any process of the same user (another session on the box, all of
//! which run as one user), which could then write a message into a session's stdin or forge the
//! session's messages to vyred; a socket cannot be opened that way (ENXIO).

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::net::UnixStream;
use tokio::process::{Child, Command};

use super::sandbox::{self, SandboxInfo};
use crate::kernel::contracts::secret::Secret;

/// What to start.
pub struct SpawnSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The whole environment; nothing is inherited.
    pub env: Vec<(String, OsString)>,
    /// A secret to hand over on fd 3 (read to its end by the child).
    pub fd3: Option<Secret>,
    /// Run under this `tini`, as a subreaper (`tini -s --`), so that processes the child detaches
    /// (a double fork) are re-parented to it and stay inside the session's tree.
    pub subreaper: Option<PathBuf>,
    /// Run as this user and group instead of vyred's own (`sessions.uid`, `sessions.gid`).
    pub run_as: Option<RunAs>,
    /// Run inside this sandbox (ADR 0014); then no subreaper is needed, the sandbox's first
    /// process reaps what its descendants leave behind.
    pub sandbox: Option<SandboxLaunch>,
}

/// bubblewrap and its arguments up to `--` ([`super::sandbox::Sandbox::args`]).
#[derive(Debug, Clone)]
pub struct SandboxLaunch {
    pub bwrap: PathBuf,
    pub args: Vec<OsString>,
}

/// The user a session runs as (ADR 0013): its only group is `gid`, and what it writes is
/// readable by that group (umask 027), of which vyred's user is a member, so vyred reads the
/// transcripts and nobody else does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
}

/// `tini` on PATH, when installed (the box image has it).
pub fn find_tini() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("tini"))
            .find(|p| p.is_file())
    })
}

/// A started process and its identity.
pub struct Spawned {
    pub child: Child,
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// vyred's ends of the child's stdin, stdout and stderr (each only written or only read).
    pub stdin: UnixStream,
    pub stdout: UnixStream,
    pub stderr: UnixStream,
    /// The sandbox it runs in, as bwrap reported it.
    pub sandbox: Option<SandboxInfo>,
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot start {program}: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    #[error("cannot prepare the credential pipe: {0}")]
    Pipe(String),
    #[error("cannot make the session's standard streams: {0}")]
    Stdio(String),
    #[error("the session's sandbox did not start: {0}")]
    Sandbox(String),
}

/// Start `spec` in a new session (so also a new process group) with piped stdio.
pub fn spawn(spec: SpawnSpec) -> Result<Spawned, SpawnError> {
    let mut cmd = match (&spec.sandbox, &spec.subreaper) {
        (Some(sandbox), _) => {
            let mut c = Command::new(&sandbox.bwrap);
            c.args(&sandbox.args).arg(&spec.program);
            c
        }
        (None, Some(tini)) => {
            let mut c = Command::new(tini);
            c.args(["-s", "--"]).arg(&spec.program);
            c
        }
        (None, None) => Command::new(&spec.program),
    };
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(true);
    let (stdin, child_stdin) = socket_stdio()?;
    let (stdout, child_stdout) = socket_stdio()?;
    let (stderr, child_stderr) = socket_stdio()?;
    cmd.stdin(child_stdin)
        .stdout(child_stdout)
        .stderr(child_stderr);
    // The read end of a pipe holding the secret, to become the child's fd 3.
    let fd3: Option<OwnedFd> = match &spec.fd3 {
        Some(secret) => Some(secret_pipe(secret)?),
        None => None,
    };
    // The pipe on which bwrap reports the sandbox: its write end becomes the child's fd 4.
    let info = match &spec.sandbox {
        Some(_) => Some(
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .map_err(|e| SpawnError::Sandbox(format!("cannot make its report pipe: {e}")))?,
        ),
        None => None,
    };
    let fd3_raw = fd3.as_ref().map(AsRawFd::as_raw_fd);
    let info_raw = info.as_ref().map(|(_, w)| w.as_raw_fd());
    let run_as = spec.run_as;
    // SAFETY: between fork and exec only async-signal-safe calls are made (setgroups, setgid,
    // setuid, umask, setsid, fcntl, dup2), on file descriptors this function owns.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(RunAs { uid, gid }) = run_as {
                // The process has no capability left after its exec.
                crate::kernel::become_user::become_user(uid, gid)?;
            }
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Copies above 10 first (closed at exec), so that placing one cannot overwrite the
            // other; dup2 leaves the placed descriptor open across exec.
            for (fd, at) in [(fd3_raw, 3), (info_raw, sandbox::INFO_FD)] {
                let Some(fd) = fd else { continue };
                let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
                if high < 0 || libc::dup2(high, at) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|source| SpawnError::Start {
        program: spec.program.display().to_string(),
        source,
    })?;
    // The child's ends are its own now: held here too, its exit would never end our reads.
    drop(cmd);
    drop(fd3);
    let pid = child.id().map(|p| p as i32).unwrap_or(0);
    let sandbox = match info {
        Some((read, write)) => {
            drop(write);
            match read_report(read) {
                Ok(info) => Some(info),
                Err(why) => {
                    let _ = child.start_kill();
                    return Err(SpawnError::Sandbox(why));
                }
            }
        }
        None => None,
    };
    Ok(Spawned {
        stdin,
        stdout,
        stderr,
        child,
        pid,
        // setsid made the child the leader of both.
        pgid: pid,
        sid: pid,
        sandbox,
    })
}

/// A standard stream for a child: vyred's end, and the child's (see the module's doc for why a
/// socket pair and not a pipe). Both are close-on-exec here; the child's is placed on its 0, 1
/// or 2 by the spawn, which keeps it open across the exec.
fn socket_stdio() -> Result<(UnixStream, Stdio), SpawnError> {
    let made = std::os::unix::net::UnixStream::pair().and_then(|(ours, theirs)| {
        ours.set_nonblocking(true)?;
        Ok((
            UnixStream::from_std(ours)?,
            Stdio::from(OwnedFd::from(theirs)),
        ))
    });
    made.map_err(|e| SpawnError::Stdio(e.to_string()))
}

/// How long bwrap gets to set up a sandbox and report it.
const REPORT_TIMEOUT_MS: i32 = 10_000;

/// Read bwrap's `--info-fd` report: a JSON object written once the sandbox exists (the pipe
/// stays open for as long as the sandbox runs, so it is read until it parses, not to its end).
fn read_report(read: OwnedFd) -> Result<SandboxInfo, String> {
    use std::io::Read;
    let mut file = std::fs::File::from(read);
    let mut report = Vec::new();
    let mut buf = [0u8; 512];
    let deadline = std::time::Instant::now() + Duration::from_millis(REPORT_TIMEOUT_MS as u64);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut p = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut p, 1, left.as_millis() as i32) };
        if ready <= 0 {
            return Err("bwrap did not report the sandbox in time".into());
        }
        let n = file.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(
                "bwrap exited without making the sandbox (is it allowed to make user namespaces here?)".into(),
            );
        }
        report.extend_from_slice(&buf[..n]);
        if let Some(info) = SandboxInfo::parse(&report) {
            return Ok(info);
        }
        if report.len() > 64 * 1024 {
            return Err("bwrap's report is not what it should be".into());
        }
    }
}

/// End a sandbox: its first process is the init of its pid namespace, so killing it ends every
/// process inside, wherever they went. The namespace is checked first, so a pid reused since
/// is left alone.
pub fn kill_sandbox(info: &SandboxInfo) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let ns = std::fs::metadata(format!("/proc/{}/ns/pid", info.init)).map(|m| m.ino());
        if ns.ok() == Some(info.pid_namespace) {
            let _ = nix::sys::signal::kill(Pid::from_raw(info.init), Signal::SIGKILL);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = info;
}

/// A pipe whose read end holds `secret` and is closed for writing, so the child reads it to EOF.
fn secret_pipe(secret: &Secret) -> Result<OwnedFd, SpawnError> {
    use std::io::Write;
    // Close-on-exec, so no other child spawned meanwhile inherits either end.
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| SpawnError::Pipe(e.to_string()))?;
    let mut writer = std::fs::File::from(write);
    writer
        .write_all(secret.expose().as_bytes())
        .map_err(|e| SpawnError::Pipe(e.to_string()))?;
    drop(writer);
    Ok(read)
}

/// The last lines a child wrote to stderr, kept to explain its exit. Cheap to clone.
#[derive(Clone, Default)]
pub struct StderrTail(std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>);

impl StderrTail {
    /// Lines kept.
    pub const LINES: usize = 20;

    /// Read `stderr` to its end in a task of its own, keeping its last lines; each is logged at
    /// debug level as `what`'s.
    pub fn follow(stderr: UnixStream, pid: i32, what: &'static str) -> StderrTail {
        use tokio::io::AsyncBufReadExt;
        let tail = StderrTail::default();
        let keep = tail.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(pid, "{what} stderr: {line}");
                let mut t = keep.0.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == Self::LINES {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        tail
    }

    /// The lines kept, one after another.
    pub fn text(&self) -> String {
        let t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Stop a whole session: SIGTERM, then SIGKILL after `grace`, to its process group and to every
/// process of its session (`pgid` is also the session id, since the child called setsid). The
/// session matters under tini, which puts the program it runs in a process group of its own, so
/// the group alone would be tini and miss Claude Code.
pub async fn kill_group(child: &mut Child, pgid: i32, grace: Duration) {
    let signal_all = |sig: Signal| {
        if pgid > 1 {
            let _ = killpg(Pid::from_raw(pgid), sig);
            signal_session(pgid, sig);
        }
    };
    signal_all(Signal::SIGTERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        signal_all(Signal::SIGKILL);
        let _ = child.kill().await;
    }
    // Members that outlived the leader.
    signal_all(Signal::SIGKILL);
}

/// A session's leader that, dropped while it may still run (never waited to its end: a start
/// abandoned half way, a task cancelled as vyred stops), ends its whole process group and session
/// at once, not only itself as `kill_on_drop` would: nothing it started outlives vyred to write
/// into the person's folders after the daemon is gone.
pub struct GroupChild {
    child: Child,
    pgid: i32,
}

impl GroupChild {
    pub fn new(child: Child, pgid: i32) -> Self {
        GroupChild { child, pgid }
    }
}

impl std::ops::Deref for GroupChild {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl std::ops::DerefMut for GroupChild {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        // `id()` is `None` once the leader was reaped: its pid, so its group id, may then belong
        // to someone else. Before that (running, or a zombie) the group is still this session's.
        if self.child.id().is_some() && self.pgid > 1 {
            let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
            signal_session(self.pgid, Signal::SIGKILL);
        }
    }
}

/// Signal every process whose session id is `sid` (Linux: from `/proc/<pid>/stat`); how many.
pub fn signal_session(sid: i32, sig: Signal) -> usize {
    session_members(sid)
        .into_iter()
        .filter(|pid| nix::sys::signal::kill(Pid::from_raw(*pid), sig).is_ok())
        .count()
}

/// The processes whose session id is `sid` (Linux, from `/proc/<pid>/stat`; none elsewhere).
pub fn session_members(sid: i32) -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return vec![];
        };
        dir.flatten()
            .filter_map(|entry| {
                let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
                let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
                // After the command's closing parenthesis: state, ppid, pgrp, session, ...
                let session = stat
                    .rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .nth(3)?
                    .parse::<i32>()
                    .ok()?;
                (session == sid).then_some(pid)
            })
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = sid;
        vec![]
    }
}

/// End every process whose environment carries `name=value` (a session's `VYRE_THREAD`): what
/// a session started and then detached from its group and session (`setsid`, a double fork)
/// still inherited the variable. Returns how many were signalled. Linux only; elsewhere the
/// process group is the bound.
pub fn kill_tagged(name: &str, value: &str) -> usize {
    kill_tagged_any(name, |v| v == value.as_bytes())
}

/// End every process whose environment carries `name` with a value `ours` says is ours (one
/// walk of `/proc` for any number of values). Returns how many were signalled.
pub fn kill_tagged_any(name: &str, ours: impl Fn(&[u8]) -> bool) -> usize {
    #[cfg(target_os = "linux")]
    {
        let prefix = format!("{name}=");
        let me = std::process::id();
        let mut killed = 0;
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return 0;
        };
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let tagged = environ
                .split(|b| *b == 0)
                .any(|kv| kv.strip_prefix(prefix.as_bytes()).is_some_and(&ours));
            if tagged {
                let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                killed += 1;
            }
        }
        killed
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (name, ours);
        0
    }
}

#[cfg(test)]
#[path = "spawn_tests.rs"]
mod tests;
