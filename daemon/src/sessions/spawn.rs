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
}

/// Start `spec` in a new session (so also a new process group) with piped stdio.
pub fn spawn(spec: SpawnSpec) -> Result<Spawned, SpawnError> {
    let mut cmd = match &spec.subreaper {
        Some(tini) => {
            let mut c = Command::new(tini);
            c.args(["-s", "--"]).arg(&spec.program);
            c
        }
        None => Command::new(&spec.program),
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
    let fd3_raw = fd3.as_ref().map(AsRawFd::as_raw_fd);
    let run_as = spec.run_as;
    // SAFETY: between fork and exec only async-signal-safe calls are made (setgroups, setgid,
    // setuid, umask, setsid, dup2, fcntl), on file descriptors this function owns.
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
            if let Some(fd) = fd3_raw {
                // dup2 leaves the new fd without close-on-exec; when it is already 3, clear the flag.
                let ok = if fd == 3 {
                    libc::fcntl(3, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, 3)
                };
                if ok < 0 {
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
    Ok(Spawned {
        stdin: child.stdin.take().expect("piped stdin"),
        stdout: child.stdout.take().expect("piped stdout"),
        stderr: child.stderr.take().expect("piped stderr"),
        child,
        pid,
        // setsid made the child the leader of both.
        pgid: pid,
        sid: pid,
    })
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
    async fn killing_the_group_takes_the_grandchildren() {
        let spec = SpawnSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "sleep 600 & echo $!; wait".into()],
            cwd: std::env::temp_dir(),
            env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
            fd3: None,
            subreaper: None,
            run_as: None,
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
