//! How a watcher's run is kept from what is not its own, as sessions are on the same machine
//! (ADR 0013, ADR 0025): in bubblewrap where user namespaces work ([`crate::kernel::jail::Net`]),
//! or, on the box, where a container forbids them, as the sessions' own user. That user cannot
//! enter `VYRE_HOME` (vyred's, mode 0700) nor reach its sockets, so the run gets a copy of its
//! folder (and of Vyre's runner) where it can read it, removed when the run ends.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contain {
    /// bubblewrap: the system read-only, the network, its own folder read-only.
    Sandbox { bwrap: PathBuf },
    /// The sessions' user and group (`sessions.uid`, `sessions.gid`).
    User { uid: u32, gid: u32 },
}

/// The most a folder copied for a run may hold.
const MAX_COPY: u64 = 16 * 1024 * 1024;
const MAX_DEPTH: usize = 4;

/// A watcher's folder copied where another user can read it; gone when dropped.
pub struct Copy {
    pub dir: PathBuf,
    /// Vyre's runner, copied beside it.
    pub runner: PathBuf,
}

impl Copy {
    /// Copy `folder`'s plain files (not its links) and `runner` into a fresh folder that every
    /// user may read and none but vyred's may change.
    pub fn of(folder: &Path, runner: &Path) -> std::io::Result<Copy> {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "vyre-watch-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        let copy = Copy {
            runner: dir.join(".vyre-runner.mjs"),
            dir,
        };
        readable_dir(&copy.dir)?;
        let mut budget = MAX_COPY;
        copy_tree(folder, &copy.dir, 0, &mut budget)?;
        copy_file(runner, &copy.runner, &mut budget)?;
        Ok(copy)
    }

    /// Where `inside` (a path in the original folder) is in the copy.
    pub fn place(&self, folder: &Path, inside: &Path) -> PathBuf {
        match inside.strip_prefix(folder) {
            Ok(rest) => self.dir.join(rest),
            Err(_) => inside.to_path_buf(),
        }
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn readable_dir(dir: &Path) -> std::io::Result<()> {
    fs::DirBuilder::new().mode(0o755).create(dir)?;
    // The umask may have taken bits away.
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755))
}

fn copy_file(from: &Path, to: &Path, budget: &mut u64) -> std::io::Result<()> {
    let len = fs::symlink_metadata(from)?.len();
    if len > *budget {
        return Err(std::io::Error::other(format!(
            "the watcher's folder holds more than {} MiB",
            MAX_COPY / 1024 / 1024
        )));
    }
    *budget -= len;
    fs::copy(from, to)?;
    fs::set_permissions(to, fs::Permissions::from_mode(0o644))
}

fn copy_tree(from: &Path, to: &Path, depth: usize, budget: &mut u64) -> std::io::Result<()> {
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_file() {
            copy_file(&entry.path(), &target, budget)?;
        } else if kind.is_dir() && depth < MAX_DEPTH {
            readable_dir(&target)?;
            copy_tree(&entry.path(), &target, depth + 1, budget)?;
        }
        // Links are left out: a link is a way to somewhere that is not the folder.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_holds_the_folders_plain_files_readable_by_all_and_goes_when_dropped() {
        let base = std::env::temp_dir().join(format!("vyre-contain-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let folder = base.join("w");
        fs::create_dir_all(folder.join("lib")).unwrap();
        fs::write(folder.join("watch.js"), "// w").unwrap();
        fs::write(folder.join("lib/x.js"), "// x").unwrap();
        fs::write(base.join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), folder.join("link")).unwrap();
        fs::write(base.join("runner.mjs"), "// r").unwrap();
        let copy = Copy::of(&folder, &base.join("runner.mjs")).unwrap();
        let dir = copy.dir.clone();
        assert_eq!(fs::read_to_string(dir.join("lib/x.js")).unwrap(), "// x");
        assert_eq!(fs::read_to_string(&copy.runner).unwrap(), "// r");
        assert!(!dir.join("link").exists(), "no link is followed");
        let mode = fs::metadata(dir.join("watch.js"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
        assert_eq!(
            copy.place(&folder, &folder.join("watch.js")),
            dir.join("watch.js")
        );
        drop(copy);
        assert!(!dir.exists());
        let _ = fs::remove_dir_all(&base);
    }
}
