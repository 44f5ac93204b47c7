//! git, run by vyred on folders it does not trust (a session's, a cloned repository's): under
//! settings no repository's config, attributes or hooks can turn into running a program (no
//! hooks, no fsmonitor, no external diff or text conversion, no pager, no system or global
//! config, no credential prompt), in its own process group, killed as a group at its deadline,
//! its output capped.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

/// Settings every run gets, ahead of the repository's own (`-c` wins over config files).
const SAFE: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.pager=cat",
    "safe.directory=*",
    "log.showSignature=false",
    "gpg.program=false",
    "core.quotePath=false",
    "credential.helper=",
];

/// What a run came back with.
pub struct Ran {
    pub stdout: Vec<u8>,
    /// The output went past the cap and was cut there.
    pub cut: bool,
}

/// Run `git args` (in `dir`, when given) with `env` added, within `wait`, reading at most `max`
/// bytes of its output. An error says why in words (its stderr's first line, a timeout).
pub async fn run<S: AsRef<OsStr>>(
    dir: Option<&Path>,
    args: &[S],
    env: &[(&str, &OsStr)],
    wait: Duration,
    max: usize,
) -> Result<Ran, String> {
    run_as(None, dir, args, env, wait, max).await
}

/// [`run`] for work no one is waiting on as it runs (a folder's snapshot while the session's
/// turn starts): git runs at niceness [`BEHIND`], so on a busy machine the session and vyred
/// get the processor first.
pub async fn run_behind<S: AsRef<OsStr>>(
    dir: Option<&Path>,
    args: &[S],
    env: &[(&str, &OsStr)],
    wait: Duration,
    max: usize,
) -> Result<Ran, String> {
    spawn_and_read(None, BEHIND, dir, args, env, wait, max).await
}

/// How much nicer than vyred [`run_behind`]'s git runs (at most 19, the nicest).
pub const BEHIND: i32 = 10;

/// [`run`] as user `uid` in group `gid` when given (the sessions' own user on the box, ADR
/// 0013: what git writes in their folders stays theirs), with only that group and a 027 umask.
pub async fn run_as<S: AsRef<OsStr>>(
    user: Option<(u32, u32)>,
    dir: Option<&Path>,
    args: &[S],
    env: &[(&str, &OsStr)],
    wait: Duration,
    max: usize,
) -> Result<Ran, String> {
    spawn_and_read(user, 0, dir, args, env, wait, max).await
}

async fn spawn_and_read<S: AsRef<OsStr>>(
    user: Option<(u32, u32)>,
    nice: i32,
    dir: Option<&Path>,
    args: &[S],
    env: &[(&str, &OsStr)],
    wait: Duration,
    max: usize,
) -> Result<Ran, String> {
    use tokio::io::AsyncReadExt;
    let mut cmd = tokio::process::Command::new("git");
    if let Some((uid, gid)) = user {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || crate::kernel::become_user::become_user(uid, gid));
        }
    }
    cmd.arg("--no-pager");
    for s in SAFE {
        cmd.args(["-c", s]);
    }
    if let Some(dir) = dir {
        cmd.arg("-C").arg(dir);
    }
    cmd.args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_EXTERNAL_DIFF")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    if user.is_some() {
        // vyred's own HOME is not theirs to read (git would warn of every file it cannot).
        cmd.env("HOME", "/nonexistent")
            .env("XDG_CONFIG_HOME", "/nonexistent");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok());
    if nice != 0
        && let Some(pid) = pid
    {
        // Set from here once it runs, not between fork and exec: a `pre_exec` would make std
        // fork vyred whole (copying its page tables) instead of `posix_spawn`.
        nicer(pid, nice);
    }
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let work = async {
        let mut out = Vec::new();
        let mut cut = false;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = stdout.read(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            let room = max.saturating_sub(out.len());
            if n > room {
                out.extend_from_slice(&buf[..room]);
                cut = true;
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        let mut err = Vec::new();
        if !cut {
            let _ = (&mut stderr).take(4096).read_to_end(&mut err).await;
        }
        Ok::<_, String>((out, cut, err))
    };
    let killed = || {
        if let Some(pid) = pid {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    };
    let (out, cut, err) = match tokio::time::timeout(wait, work).await {
        Ok(r) => r?,
        Err(_) => {
            killed();
            return Err(format!("git took longer than {} s", wait.as_secs()));
        }
    };
    if cut {
        // What was read is enough; the rest is not waited for.
        killed();
        let _ = child.wait().await;
        return Ok(Ran { stdout: out, cut });
    }
    let status = match tokio::time::timeout(wait, child.wait()).await {
        Ok(s) => s.map_err(|e| e.to_string())?,
        Err(_) => {
            killed();
            return Err(format!("git took longer than {} s", wait.as_secs()));
        }
    };
    if !status.success() {
        let why = String::from_utf8_lossy(&err);
        let why = why
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no reason given");
        return Err(format!("git {}: {why}", status));
    }
    Ok(Ran { stdout: out, cut })
}

/// Make process `pid` `by` nicer than vyred (at most 19). A failure leaves it at vyred's
/// niceness, which is only slower for the others.
fn nicer(pid: i32, by: i32) {
    // SAFETY: errno is this thread's; getpriority reads this process's niceness (-1 is a
    // niceness too, told from an error by errno) and setpriority changes only `pid`'s.
    unsafe {
        *libc::__errno_location() = 0;
        let own = libc::getpriority(libc::PRIO_PROCESS, 0);
        if own == -1 && *libc::__errno_location() != 0 {
            return;
        }
        libc::setpriority(libc::PRIO_PROCESS, pid as libc::id_t, (own + by).min(19));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// git's own niceness, read by the shell its alias runs (from `/proc`, a moment after git
    /// started: set from vyred once git runs, it may come after git forks that shell).
    async fn niceness(behind: bool) -> i32 {
        let args = [
            "-c",
            "alias.niceness=!sleep 0.2; cut -d ' ' -f 19 /proc/$PPID/stat",
            "niceness",
        ];
        let wait = Duration::from_secs(10);
        let ran = if behind {
            run_behind(None, &args, &[], wait, 64).await
        } else {
            run(None, &args, &[], wait, 64).await
        };
        String::from_utf8_lossy(&ran.unwrap().stdout)
            .trim()
            .parse()
            .unwrap()
    }

    #[tokio::test]
    async fn work_behind_runs_nicer_than_vyred_and_the_rest_does_not() {
        // SAFETY: getpriority of this process only reads.
        let own = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        assert_eq!(niceness(false).await, own);
        assert_eq!(niceness(true).await, (own + BEHIND).min(19));
    }
}
