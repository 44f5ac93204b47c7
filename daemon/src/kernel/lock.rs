//! One vyred per `VYRE_HOME`: an exclusive lock on `vyred.lock`, holding the owner's pid.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Held for as long as this vyred runs; the OS releases it if the process dies.
#[derive(Debug)]
pub struct HomeLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another vyred already runs for {home} (pid {pid}); stop it with `vyre down` or use another VYRE_HOME"
    )]
    Held { home: String, pid: String },
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl HomeLock {
    pub fn acquire(path: &Path, home: &Path) -> Result<HomeLock, LockError> {
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            // A link planted at the lock's name is refused, never truncated through.
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(io)?;
        let waited_since = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    let mut pid = String::new();
                    let _ = file.seek(SeekFrom::Start(0));
                    let _ = file.read_to_string(&mut pid);
                    let pid = pid.trim().to_string();
                    // The vyred that wrote it is gone (killed), yet the lock is held: a child it
                    // was starting holds it until its exec. That passes; a live holder does not.
                    if holder_gone(&pid) && waited_since.elapsed() < GONE_HOLDER_WAIT {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        continue;
                    }
                    return Err(LockError::Held {
                        home: home.display().to_string(),
                        pid: if pid.is_empty() {
                            "unknown".into()
                        } else {
                            pid
                        },
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(HomeLock { _file: file })
    }
}

/// How long a start waits for a lock whose writer is gone before it says the home is taken.
const GONE_HOLDER_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Whether `pid` (as written in the lock) names no running process.
fn holder_gone(pid: &str) -> bool {
    let Ok(pid) = pid.parse::<i32>() else {
        return false;
    };
    pid > 0
        && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH)
}

/// The pid written in a lock file, if one is there.
pub fn holder(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pid that ran and is gone.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_lock_held_past_its_writers_death_is_waited_for_and_a_live_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("vyre-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vyred.lock");
        // Held by an open file of its own (as a child between fork and exec holds it), with the
        // pid of a vyred that is gone written in it; let go a moment later.
        let held = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        held.try_lock().unwrap();
        std::fs::write(&path, format!("{}\n", dead_pid())).unwrap();
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(held);
        });
        let lock = HomeLock::acquire(&path, &dir).expect("waited for the lock to be let go");
        letting_go.join().unwrap();
        assert_eq!(holder(&path), Some(std::process::id()));
        // A live holder (this process, through `lock`) is refused at once.
        let started = std::time::Instant::now();
        let err = HomeLock::acquire(&path, &dir).unwrap_err();
        assert!(
            matches!(err, LockError::Held { ref pid, .. } if *pid == std::process::id().to_string()),
            "{err}"
        );
        assert!(started.elapsed() < GONE_HOLDER_WAIT);
        drop(lock);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
