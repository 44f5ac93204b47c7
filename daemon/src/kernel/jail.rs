//! Running a converter on bytes nobody vouches for (a PDF from a session's folder, say): a
//! program fed the bytes on its stdin, its answer read from its stdout, and nothing else.
//!
//! On Linux it runs inside bubblewrap: new user, pid, network, IPC and UTS namespaces (no
//! network at all), no capabilities, the system's `/usr` (and the loader's folders) read-only,
//! `/etc/fonts` and the loader cache read-only, a fresh `/proc`, `/dev` and an empty `/tmp`; no
//! home, no `VYRE_HOME`, no runtime folder, no environment but `PATH` and `LANG`. It runs in its
//! own process group, under an address-space and CPU-time limit, and is killed as a group when
//! its deadline passes; its output is capped. Without bubblewrap nothing runs: a parser of
//! hostile files is never started outside the jail (`JailError::Unavailable`).

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall time, after which the whole group is killed.
    pub deadline: Duration,
    /// The most bytes of output kept; more is an error.
    pub max_output: usize,
    /// Address space (RLIMIT_AS) of the jail's processes.
    pub max_memory: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: Duration::from_secs(10),
            max_output: 8 * 1024 * 1024,
            max_memory: 1024 * 1024 * 1024,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JailError {
    #[error("no sandbox to run it in ({0})")]
    Unavailable(String),
    #[error("{0} did not finish within {1} s")]
    TimedOut(String, u64),
    #[error("{0} wrote more than {1} bytes")]
    TooMuch(String, usize),
    #[error("{0} failed: {1}")]
    Failed(String, String),
}

/// bubblewrap, found once on `PATH` (or the usual places).
pub fn bwrap() -> Option<PathBuf> {
    find("bwrap")
}

/// A program on `PATH`, else in `/usr/bin` or `/bin`.
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/bin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Run `program args` in the jail on `input`; its stdout.
pub fn run(
    bwrap: &Path,
    program: &Path,
    args: &[&str],
    input: &[u8],
    limits: Limits,
) -> Result<Vec<u8>, JailError> {
    let label = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "the converter".into());
    let mut cmd = Command::new(bwrap);
    cmd.args(jail_args(program))
        .arg("--")
        .arg(program)
        .args(args);
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let memory = limits.max_memory;
    let cpu = limits.deadline.as_secs().max(1);
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            use nix::sys::resource::{Resource, setrlimit};
            setrlimit(Resource::RLIMIT_AS, memory, memory).map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_CPU, cpu, cpu).map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| JailError::Unavailable(format!("{}: {e}", bwrap.display())))?;
    let pgid = child.id() as i32;
    let kill_group = || kill(pgid);
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        // A converter may stop reading early (a broken file); that is its answer, not ours.
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("piped");
    let max = limits.max_output;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let read = (&mut stdout).take(max as u64 + 1).read_to_end(&mut out);
        if out.len() > max {
            // It would block on a full pipe until its deadline: end it now.
            kill(pgid);
        }
        (read.map(|_| out), stdout)
    });
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut stderr).take(4096).read_to_end(&mut text);
        String::from_utf8_lossy(&text).trim().to_string()
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < limits.deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => break None,
        }
    };
    let Some(status) = status else {
        kill_group();
        let _ = child.wait();
        return Err(JailError::TimedOut(label, limits.deadline.as_secs()));
    };
    // The group may hold a straggler that keeps the pipes open.
    kill_group();
    let _ = writer.join();
    let (out, _pipe) = reader.join().expect("the reader does not panic");
    let said = errors.join().unwrap_or_default();
    let out = out.map_err(|e| JailError::Failed(label.clone(), e.to_string()))?;
    if out.len() > max {
        return Err(JailError::TooMuch(label, max));
    }
    if !status.success() {
        let why = if said.is_empty() {
            status.to_string()
        } else {
            said
        };
        return Err(JailError::Failed(label, why));
    }
    Ok(out)
}

/// A sandbox for a program that may reach the network (a watcher): the same namespaces and
/// read-only system as the jail, but the network shared, the files it needs bound in, and a
/// working folder.
#[derive(Debug, Clone, Default)]
pub struct Net {
    /// Files and folders bound read-only, each at its own path.
    pub read_only: Vec<PathBuf>,
    /// The folder it runs in, bound read-only at its own path.
    pub workdir: Option<PathBuf>,
    /// Variables set (nothing else is).
    pub env: Vec<(String, String)>,
}

/// bubblewrap's command for `program args` in a [`Net`] sandbox: its own process group, the
/// network shared, resolv.conf and the system's certificates bound so names resolve and TLS
/// verifies, `/tmp` its own, no home, no `VYRE_HOME`, no sockets but the network's.
pub fn net_command(bwrap: &Path, program: &Path, args: &[String], net: &Net) -> Command {
    let mut cmd = Command::new(bwrap);
    let mut jail = jail_args(program);
    jail.insert(1, "--share-net".into());
    for etc in [
        "/etc/resolv.conf",
        "/etc/hosts",
        "/etc/nsswitch.conf",
        "/etc/ssl",
        "/etc/ca-certificates",
        "/etc/pki",
    ] {
        jail.extend(["--ro-bind-try".into(), etc.into(), etc.into()]);
    }
    for p in net.read_only.iter().chain(net.workdir.iter()) {
        let p = p.to_string_lossy().into_owned();
        jail.extend(["--ro-bind".into(), p.clone(), p]);
    }
    if let Some(dir) = &net.workdir {
        jail.extend(["--chdir".into(), dir.to_string_lossy().into_owned()]);
    }
    cmd.args(jail).arg("--").arg(program).args(args);
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("HOME", "/tmp");
    for (k, v) in &net.env {
        cmd.env(k, v);
    }
    cmd.process_group(0);
    cmd
}

pub fn kill(pgid: i32) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// bubblewrap's arguments: the namespaces, and a filesystem of the system's programs and
/// libraries only, read-only, with `program` itself bound where it is.
fn jail_args(program: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/usr",
        "/usr",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--ro-bind-try",
        "/etc/fonts",
        "/etc/fonts",
        "--ro-bind-try",
        "/etc/ld.so.cache",
        "/etc/ld.so.cache",
    ]
    .map(String::from)
    .to_vec();
    // Merged /usr (Debian 12) has these as links into /usr; older systems as folders.
    for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64"] {
        match std::fs::read_link(top) {
            Ok(target) => args.extend([
                "--symlink".into(),
                target.to_string_lossy().into_owned(),
                top.into(),
            ]),
            Err(_) if Path::new(top).is_dir() => {
                args.extend(["--ro-bind".into(), top.into(), top.into()])
            }
            Err(_) => {}
        }
    }
    if !program.starts_with("/usr") {
        let p = program.to_string_lossy().into_owned();
        args.extend(["--ro-bind".into(), p.clone(), p]);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vyre-jail-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn script(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("converter");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A hostile file that took over the converter: what it can reach is nothing of the
    /// person's, of vyred's, or of the network.
    #[test]
    fn a_converter_taken_over_reads_no_secret_writes_nothing_and_has_no_network() {
        let Some(bwrap) = bwrap() else {
            eprintln!("skipped: no bwrap");
            return;
        };
        let dir = scratch("hostile");
        let secret = dir.join("vault.key");
        std::fs::write(&secret, "the-secret-value").unwrap();
        let home = std::env::var("HOME").unwrap_or_default();
        let program = script(
            &dir,
            &format!(
                r#"cat > /dev/null
cat '{secret}' 2>/dev/null && echo LEAKED
ls '{home}' 2>/dev/null && echo SAW-HOME
echo overwritten > '{secret}' 2>/dev/null
echo x > /usr/planted 2>/dev/null && echo PLANTED
ls /sys/class/net 2>/dev/null | tr '\n' ' '
env | grep -E '^(HOME|USER|VYRE|ANTHROPIC|XDG|DBUS)' && echo ENV-LEAK
echo done"#,
                secret = secret.display(),
                home = home,
            ),
        );
        let out = run(
            &bwrap,
            &program,
            &[],
            b"%PDF-1.7 hostile",
            Limits::default(),
        )
        .unwrap();
        let out = String::from_utf8_lossy(&out);
        assert!(out.contains("done"), "{out}");
        for bad in [
            "LEAKED",
            "the-secret-value",
            "SAW-HOME",
            "PLANTED",
            "ENV-LEAK",
        ] {
            assert!(!out.contains(bad), "{bad}: {out}");
        }
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            "the-secret-value"
        );
        assert!(!out.contains("eth") && !out.contains("ens"), "{out}");
        assert!(!Path::new("/usr/planted").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_converter_that_hangs_is_killed_with_its_children_at_the_deadline() {
        let Some(bwrap) = bwrap() else {
            return;
        };
        let dir = scratch("hang");
        let program = script(&dir, "sleep 30 & sleep 30");
        let limits = Limits {
            deadline: Duration::from_millis(500),
            ..Limits::default()
        };
        let started = Instant::now();
        let err = run(&bwrap, &program, &[], b"", limits).unwrap_err();
        assert!(matches!(err, JailError::TimedOut(..)), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn output_past_the_cap_and_a_failure_are_errors_that_say_so() {
        let Some(bwrap) = bwrap() else {
            return;
        };
        let dir = scratch("noisy");
        let noisy = script(&dir, "head -c 100000 /dev/zero");
        let limits = Limits {
            max_output: 1000,
            ..Limits::default()
        };
        let err = run(&bwrap, &noisy, &[], b"", limits).unwrap_err();
        assert!(matches!(err, JailError::TooMuch(_, 1000)), "{err}");
        let failing = script(&dir, "echo 'Syntax Error: not a PDF' >&2; exit 3");
        let err = run(&bwrap, &failing, &[], b"", Limits::default()).unwrap_err();
        assert_eq!(
            err,
            JailError::Failed("converter".into(), "Syntax Error: not a PDF".into())
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
