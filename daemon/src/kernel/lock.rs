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
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(LockError::Held {
                    home: home.display().to_string(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.to_string()
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(HomeLock { _file: file })
    }
}

/// The pid written in a lock file, if one is there.
pub fn holder(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
