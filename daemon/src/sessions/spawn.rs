//! The one place session processes are started (ADR 0030 section 8): each child leads a new
//! session and process group, so stopping it stops everything it started; its pid, pgid and sid
//! are known the moment it exists, before it can run a tool; its environment is built from
//! nothing; a credential reaches it on file descriptor 3, never in its environment.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::sandbox::{self, SandboxInfo};
use crate::vault::Secret;

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
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
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
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
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
                // Groups first, then the group, then the user: each needs the privilege that
                // the next one gives up. The process has no capability left after its exec.
                let groups = [gid as libc::gid_t];
                if libc::setgroups(1, groups.as_ptr()) < 0
                    || libc::setgid(gid as libc::gid_t) < 0
                    || libc::setuid(uid as libc::uid_t) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                libc::umask(0o027);
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
        stdin: child.stdin.take().expect("piped stdin"),
        stdout: child.stdout.take().expect("piped stdout"),
        stderr: child.stderr.take().expect("piped stderr"),
        child,
        pid,
        // setsid made the child the leader of both.
        pgid: pid,
        sid: pid,
        sandbox,
    })
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

/// Signal every process whose session id is `sid` (Linux: from `/proc/<pid>/stat`); how many.
pub fn signal_session(sid: i32, sig: Signal) -> usize {
    #[cfg(target_os = "linux")]
    {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return 0;
        };
        let mut signalled = 0;
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // After the command's closing parenthesis: state, ppid, pgrp, session, ...
            let session = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(3))
                .and_then(|s| s.parse::<i32>().ok());
            if session == Some(sid) && nix::sys::signal::kill(Pid::from_raw(pid), sig).is_ok() {
                signalled += 1;
            }
        }
        signalled
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (sid, sig);
        0
    }
}

/// End every process whose environment carries `name=value` (a session's `VYRE_THREAD`): what
/// a session started and then detached from its group and session (`setsid`, a double fork)
/// still inherited the variable. Returns how many were signalled. Linux only; elsewhere the
/// process group is the bound.
pub fn kill_tagged(name: &str, value: &str) -> usize {
    #[cfg(target_os = "linux")]
    {
        let needle = format!("{name}={value}");
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
            if environ.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
                let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                killed += 1;
            }
        }
        killed
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (name, value);
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_session_can_run_as_another_user_with_only_its_group_and_a_closed_umask() {
        if nix::unistd::geteuid().as_raw() != 0 {
            eprintln!("skipped: switching users needs root (CI runs as root)");
            return;
        }
        // nobody/nogroup: a user that is surely not this test's.
        let spec = SpawnSpec {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                "echo $(id -u) $(id -g) $(id -G) $(umask); cat <&3".into(),
            ],
            cwd: "/".into(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            fd3: Some(Secret::new("still-on-fd3".into())),
            subreaper: None,
            run_as: Some(RunAs {
                uid: 65534,
                gid: 65534,
            }),
            sandbox: None,
        };
        let mut s = spawn(spec).unwrap();
        let mut out = String::new();
        s.stdout.read_to_string(&mut out).await.unwrap();
        assert!(s.child.wait().await.unwrap().success());
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            vec!["65534 65534 65534 0027", "still-on-fd3"],
            "uid, gid, the one group, the umask; the credential still arrives"
        );
        // vyred (root here) still stops the session's group.
        let spec = SpawnSpec {
            program: "/bin/sleep".into(),
            args: vec!["30".into()],
            cwd: "/".into(),
            env: vec![],
            fd3: None,
            subreaper: None,
            run_as: Some(RunAs {
                uid: 65534,
                gid: 65534,
            }),
            sandbox: None,
        };
        let mut s = spawn(spec).unwrap();
        kill_group(&mut s.child, s.pgid, Duration::from_secs(1)).await;
        assert!(
            killpg(Pid::from_raw(s.pgid), None).is_err(),
            "the group is gone"
        );
    }

    #[tokio::test]
    async fn a_child_leads_its_own_group_gets_only_its_env_and_reads_fd3() {
        let spec = SpawnSpec {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                "echo \"$(ps -o pgid= -p $$) $(ps -o sid= -p $$)\"; env | sort; cat <&3".into(),
            ],
            cwd: std::env::temp_dir(),
            env: vec![
                ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
                ("ONLY".into(), "this".into()),
            ],
            fd3: Some(Secret::new("the-secret-on-fd3".into())),
            subreaper: None,
            run_as: None,
            sandbox: None,
        };
        let mut s = spawn(spec).unwrap();
        let mut out = String::new();
        s.stdout.read_to_string(&mut out).await.unwrap();
        assert!(s.child.wait().await.unwrap().success());
        let mut lines = out.lines();
        let ids: Vec<i32> = lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(ids, vec![s.pid, s.pid], "pgid and sid are the child's pid");
        let rest: Vec<&str> = lines.collect();
        assert!(rest.contains(&"ONLY=this"));
        assert!(
            !rest
                .iter()
                .any(|l| l.starts_with("HOME=") || l.starts_with("CARGO")),
            "nothing inherited: {rest:?}"
        );
        assert!(
            !rest
                .iter()
                .any(|l| l.contains("the-secret-on-fd3") && l.contains('=')),
            "the secret is not in the env"
        );
        assert_eq!(
            rest.last().copied(),
            Some("the-secret-on-fd3"),
            "read from fd 3"
        );
    }

    #[tokio::test]
    async fn under_tini_a_detached_grandchild_stays_in_the_tree() {
        let Some(tini) = find_tini() else {
            eprintln!("skipped: tini is not installed");
            return;
        };
        let spec = SpawnSpec {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                "sh -c 'setsid sleep 600 & echo $!'; sleep 600".into(),
            ],
            cwd: std::env::temp_dir(),
            env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
            fd3: None,
            subreaper: Some(tini),
            run_as: None,
            sandbox: None,
        };
        let mut s = spawn(spec).unwrap();
        let mut buf = [0u8; 32];
        let n = s.stdout.read(&mut buf).await.unwrap();
        let orphan: i32 = String::from_utf8_lossy(&buf[..n]).trim().parse().unwrap();
        let parent_of = |pid: i32| -> i32 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let close = stat.rfind(')').unwrap_or(0);
            stat[close + 1..]
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse().ok())
                .unwrap_or(0)
        };
        let reparented = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            parent_of(orphan) == s.pid
        });
        assert!(
            reparented,
            "the double-forked sleep's parent is the session's tini, not init"
        );
        kill_group(&mut s.child, s.pgid, Duration::from_secs(1)).await;
        let _ = nix::sys::signal::kill(Pid::from_raw(orphan), Signal::SIGKILL);
    }

    #[tokio::test]
    async fn under_tini_stopping_reaches_the_program_in_its_own_group() {
        let Some(tini) = find_tini() else {
            eprintln!("skipped: tini is not installed");
            return;
        };
        // tini runs the program in a process group of its own; this one ignores SIGTERM.
        let spec = SpawnSpec {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                "trap '' TERM; echo $$ $(ps -o pgid= -p $$); exec sleep 600".into(),
            ],
            cwd: std::env::temp_dir(),
            env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
            fd3: None,
            subreaper: Some(tini),
            run_as: None,
            sandbox: None,
        };
        let mut s = spawn(spec).unwrap();
        let mut buf = [0u8; 64];
        let n = s.stdout.read(&mut buf).await.unwrap();
        let ids: Vec<i32> = String::from_utf8_lossy(&buf[..n])
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let (program, its_group) = (ids[0], ids[1]);
        assert_ne!(
            its_group, s.pgid,
            "tini gave the program a group of its own"
        );
        kill_group(&mut s.child, s.pgid, Duration::from_millis(300)).await;
        let alive = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|st| {
                    !st.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(false)
        };
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !alive(program)
        });
        assert!(gone, "the program in tini's other group was stopped too");
    }

    #[tokio::test]
    async fn in_a_sandbox_the_child_gets_its_secret_its_namespace_is_known_and_ending_it_ends_all()
    {
        let Some(bwrap) = sandbox::find_bwrap() else {
            eprintln!("skipped: bubblewrap is not installed");
            return;
        };
        let hidden = std::env::temp_dir().join(format!("vyre-spawn-hidden-{}", std::process::id()));
        std::fs::create_dir_all(&hidden).unwrap();
        std::fs::write(hidden.join("key"), "not-for-sessions").unwrap();
        let s = sandbox::Sandbox {
            bwrap: bwrap.clone(),
            hide: vec![hidden.clone()],
        };
        let spec = SpawnSpec {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                format!(
                    "cat {}/key 2>/dev/null; echo pid=$$; cat <&3; echo; setsid sh -c 'sleep 7333 &'; sleep 600",
                    hidden.display()
                ),
            ],
            cwd: std::env::temp_dir(),
            env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
            fd3: Some(Secret::new("through-the-sandbox".into())),
            subreaper: None,
            run_as: None,
            sandbox: Some(SandboxLaunch {
                bwrap,
                args: s.args(&[]),
            }),
        };
        let mut spawned = spawn(spec).unwrap();
        let info = spawned.sandbox.expect("bwrap reported the sandbox");
        use std::os::unix::fs::MetadataExt;
        let ns = std::fs::metadata(format!("/proc/{}/ns/pid", info.init))
            .unwrap()
            .ino();
        assert_eq!(ns, info.pid_namespace);
        let mut out = String::new();
        let mut buf = [0u8; 256];
        while !out.contains("through-the-sandbox") {
            let n = spawned.stdout.read(&mut buf).await.unwrap();
            assert!(n > 0, "{out}");
            out.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert!(
            !out.contains("not-for-sessions"),
            "the hidden folder is empty: {out}"
        );
        assert!(
            out.contains("pid=2"),
            "the program is not the namespace's init: {out}"
        );
        let sleeping = || {
            std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| c.starts_with(b"sleep\x007333"))
            })
        };
        let started = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            sleeping()
        });
        assert!(started, "the detached sleep runs");
        kill_sandbox(&info);
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !sleeping()
        });
        assert!(
            gone,
            "ending the sandbox ended the process that left its group"
        );
        kill_group(&mut spawned.child, spawned.pgid, Duration::from_secs(1)).await;
        let _ = std::fs::remove_dir_all(&hidden);
    }

    #[tokio::test]
    async fn killing_the_group_takes_the_grandchildren() {
        let spec = SpawnSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "sleep 600 & echo $!; wait".into()],
            cwd: std::env::temp_dir(),
            env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
            fd3: None,
            subreaper: None,
            run_as: None,
            sandbox: None,
        };
        let mut s = spawn(spec).unwrap();
        let mut buf = [0u8; 32];
        let n = s.stdout.read(&mut buf).await.unwrap();
        let grandchild: i32 = String::from_utf8_lossy(&buf[..n]).trim().parse().unwrap();
        kill_group(&mut s.child, s.pgid, Duration::from_secs(2)).await;
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            // A zombie until reaped by init counts as gone: it runs nothing.
            std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true)
        });
        assert!(gone, "the sleep started by the child is gone");
    }
}
