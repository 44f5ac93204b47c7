//! A folder's snapshots in a git object store of Vyre's own (floor rule 5, issue 25): one
//! "shadow" git directory per followed folder under `VYRE_HOME/changes/`, with the folder as its
//! work tree and its own index. A snapshot is `git add -A` into that index and `git write-tree`:
//! the index's stat cache means only files that changed are read again, and nothing of the
//! person's repository (its index, stash, refs, objects, config) is touched or read, so a
//! hostile repository's config cannot run anything either. The folder's `.gitignore` files are
//! honoured (a build's output is not followed); git never adds a `.git`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// How long one snapshot may take before the folder is said to be too big to follow.
pub const SNAPSHOT_WAIT: Duration = Duration::from_secs(20);
/// The most a diff reads back.
pub const DIFF_MAX: usize = 4 * 1024 * 1024;
/// A file over this is not kept in the store (its change is said, not shown).
pub const FILE_MAX: u64 = 64 * 1024 * 1024;

/// A snapshot: its tree, and the files left out of it as too big (path, bytes).
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub tree: String,
    pub left_out: Vec<(String, u64)>,
}

/// One followed folder.
#[derive(Debug, Clone)]
pub struct Shadow {
    /// The shadow git directory.
    pub(super) git_dir: PathBuf,
    /// The folder followed.
    folder: PathBuf,
}

/// A file's change between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// `added`, `modified`, `deleted` or `type` (a file became a link, ...).
    pub status: &'static str,
    pub path: String,
}

/// Why a folder is not followed.
pub fn unfollowable(folder: &Path) -> Option<String> {
    if folder.parent().is_none() {
        return Some("the root folder is not followed".into());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if home.as_deref() == Some(folder) {
        return Some("a home folder is not followed whole: start the session in a project".into());
    }
    None
}

/// One writer at a time on a store's index: a turn's end, a revert and a rewind can snapshot
/// the same folder at once, and git refuses the second (`index.lock: File exists`). One lock
/// per store for this process, dropped with its last user.
fn index_lock(git_dir: &Path) -> Arc<tokio::sync::Mutex<()>> {
    type Locks = std::sync::Mutex<HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>>;
    static LOCKS: OnceLock<Locks> = OnceLock::new();
    // std Mutex: a map lookup, never across an await.
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .expect("index locks");
    locks.retain(|_, l| l.strong_count() > 0);
    if let Some(lock) = locks.get(git_dir).and_then(Weak::upgrade) {
        return lock;
    }
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    locks.insert(git_dir.to_path_buf(), Arc::downgrade(&lock));
    lock
}

impl Shadow {
    /// The shadow of `folder` under `root` (made on first use).
    pub async fn open(root: &Path, folder: &Path) -> Result<Shadow, String> {
        let key = Sha256::digest(folder.as_os_str().as_encoded_bytes());
        let name: String = key[..10].iter().map(|b| format!("{b:02x}")).collect();
        let git_dir = root.join(name);
        let shadow = Shadow {
            git_dir,
            folder: folder.to_path_buf(),
        };
        if !shadow.git_dir.join("HEAD").exists() {
            std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
            crate::kernel::paths::private_dir(root).map_err(|e| e.to_string())?;
            shadow
                .git(&["init", "-q"], 1024)
                .await
                .map_err(|e| format!("cannot make the folder's snapshot store: {e}"))?;
            // Its own settings: plain bytes in, no line-ending or mode guesses, never a gc
            // that would drop the trees the turns name. Written beside what `git init` wrote
            // (a section may repeat), not by a `git config` run per setting.
            let settings = "[core]\n\tautocrlf = false\n\tsafecrlf = false\n\tfilemode = true\n\tsymlinks = true\n[gc]\n\tauto = 0\n\tpruneExpire = never\n[advice]\n\taddEmbeddedRepo = false\n";
            let config = shadow.git_dir.join("config");
            std::fs::OpenOptions::new()
                .append(true)
                .open(&config)
                .and_then(|mut f| std::io::Write::write_all(&mut f, settings.as_bytes()))
                .map_err(|e| format!("{}: {e}", config.display()))?;
            std::fs::write(
                shadow.git_dir.join("folder"),
                folder.as_os_str().as_encoded_bytes(),
            )
            .map_err(|e| e.to_string())?;
        }
        Ok(shadow)
    }

    /// git on this store, behind the sessions (`kernel::git::run_behind`): snapshots and their
    /// bookkeeping, which no one waits on as they run.
    pub(super) async fn git(&self, args: &[&str], max: usize) -> Result<Vec<u8>, String> {
        self.git_at(true, args, max).await
    }

    /// git on this store for the person waiting on it (a diff shown, a file put back).
    async fn git_now(&self, args: &[&str], max: usize) -> Result<Vec<u8>, String> {
        self.git_at(false, args, max).await
    }

    async fn git_at(&self, behind: bool, args: &[&str], max: usize) -> Result<Vec<u8>, String> {
        let mut all: Vec<&std::ffi::OsStr> = vec![
            "--git-dir".as_ref(),
            self.git_dir.as_os_str(),
            "--work-tree".as_ref(),
            self.folder.as_os_str(),
        ];
        all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
        let ran = if behind {
            crate::kernel::git::run_behind(None, &all, &[], SNAPSHOT_WAIT, max).await?
        } else {
            crate::kernel::git::run(None, &all, &[], SNAPSHOT_WAIT, max).await?
        };
        Ok(ran.stdout)
    }

    /// Files that changed or appeared since the last snapshot and are over [`FILE_MAX`]: left out
    /// of this and every later snapshot (listed in the store's own `info/exclude`; one kept
    /// before is dropped from its index), so a session cannot fill Vyre's store by writing a
    /// huge file. Their paths and sizes.
    async fn leave_out_big(&self) -> Result<Vec<(String, u64)>, String> {
        let listed = self
            .git(
                &["ls-files", "-z", "-o", "-m", "--exclude-standard"],
                64 * 1024 * 1024,
            )
            .await?;
        let mut big = vec![];
        for raw in listed.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(raw).into_owned();
            if let Ok(meta) = std::fs::symlink_metadata(self.folder.join(&path))
                && meta.is_file()
                && meta.len() > FILE_MAX
                && !big.iter().any(|(p, _)| p == &path)
            {
                big.push((path, meta.len()));
            }
        }
        if big.is_empty() {
            return Ok(big);
        }
        let exclude = self.git_dir.join("info").join("exclude");
        std::fs::create_dir_all(self.git_dir.join("info")).map_err(|e| e.to_string())?;
        let mut lines = std::fs::read_to_string(&exclude).unwrap_or_default();
        for (path, _) in &big {
            // Anchored and literal: each of git's pattern characters escaped.
            let mut line = String::from("/");
            for c in path.chars() {
                if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#' | ' ') {
                    line.push('\\');
                }
                line.push(c);
            }
            lines.push_str(&line);
            lines.push('\n');
            let spec = format!(":(literal){path}");
            // Kept before (it was small then): dropped from the store's index, not the folder.
            let _ = self
                .git(
                    &["rm", "-q", "--cached", "--ignore-unmatch", "--", &spec],
                    1024,
                )
                .await;
        }
        std::fs::write(&exclude, lines).map_err(|e| e.to_string())?;
        Ok(big)
    }

    /// The folder as it is now: a tree id, and the files left out as too big.
    pub async fn snapshot(&self) -> Result<Snapshot, String> {
        let lock = index_lock(&self.git_dir);
        let _one_at_a_time = lock.lock().await;
        let left_out = self.leave_out_big().await?;
        self.git(&["add", "-A", "--ignore-errors", "."], 64 * 1024)
            .await
            .or_else(|e| {
                // A file that vanished or cannot be read while it is added is left out; the
                // rest is written.
                if e.contains("unable to index") || e.contains("Permission denied") {
                    Ok(vec![])
                } else {
                    Err(e)
                }
            })?;
        let out = self.git(&["write-tree"], 1024).await?;
        let tree = String::from_utf8_lossy(&out).trim().to_string();
        if tree.len() < 40 || !tree.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("git write-tree said {tree:?}"));
        }
        Ok(Snapshot { tree, left_out })
    }

    /// What changed from tree `a` to tree `b`.
    pub async fn changed(&self, a: &str, b: &str) -> Result<Vec<Changed>, String> {
        if a == b {
            return Ok(vec![]);
        }
        let out = self
            .git(
                &[
                    "diff-tree",
                    "-r",
                    "-z",
                    "--no-renames",
                    "--name-status",
                    a,
                    b,
                ],
                DIFF_MAX,
            )
            .await?;
        let mut parts = out.split(|b| *b == 0).filter(|p| !p.is_empty());
        let mut files = vec![];
        while let (Some(status), Some(path)) = (parts.next(), parts.next()) {
            let status = match status.first() {
                Some(b'A') => "added",
                Some(b'D') => "deleted",
                Some(b'T') => "type",
                _ => "modified",
            };
            files.push(Changed {
                status,
                path: String::from_utf8_lossy(path).into_owned(),
            });
        }
        Ok(files)
    }

    /// The unified diff of `path` from tree `a` to tree `b` (git says "Binary files ... differ"
    /// for a binary file), at most `max` bytes, and whether it was cut.
    pub async fn diff(
        &self,
        a: &str,
        b: &str,
        path: &str,
        max: usize,
    ) -> Result<(String, bool), String> {
        let spec = format!(":(literal){path}");
        let out = self
            .git_now(
                &[
                    "diff-tree",
                    "-p",
                    "--no-renames",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "-U3",
                    a,
                    b,
                    "--",
                    &spec,
                ],
                max + 1,
            )
            .await?;
        let cut = out.len() > max;
        let mut text = String::from_utf8_lossy(&out[..out.len().min(max)]).into_owned();
        if cut {
            while !text.ends_with('\n') && !text.is_empty() {
                text.pop();
            }
        }
        Ok((text, cut))
    }
}

impl Shadow {
    /// Put `path` back as it is in tree `tree` (git refuses to write beyond a link).
    pub async fn restore(&self, tree: &str, path: &str) -> Result<(), String> {
        let lock = index_lock(&self.git_dir);
        let _one_at_a_time = lock.lock().await;
        let spec = format!(":(literal){path}");
        self.git_now(&["checkout", tree, "--", &spec], 64 * 1024)
            .await
            .map(|_| ())
    }

    /// Remove the file `path` (a path inside the folder, checked by the caller), reaching it
    /// one folder at a time and following no link: a link planted on the way is refused, a
    /// link at the end is removed itself.
    pub fn remove(&self, path: &str) -> Result<(), String> {
        use crate::kernel::nofollow::Dir;
        let mut dir = Dir::open(&self.folder).map_err(|e| e.to_string())?;
        let mut parts: Vec<&str> = path.split('/').collect();
        let name = parts.pop().ok_or("an empty path")?;
        for p in parts {
            dir = dir.child(p).map_err(|e| e.to_string())?;
        }
        dir.remove_file(name).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vyre-shadow-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("f")).unwrap();
        dir
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn snapshots_of_one_folder_at_once_take_turns_on_its_index() {
        let dir = scratch("at-once");
        let f = dir.join("f");
        for i in 0..200 {
            std::fs::write(f.join(format!("{i}.txt")), format!("{i}\n")).unwrap();
        }
        // A turn's end and a rewind's check, each with its own handle on the same store.
        let a = Shadow::open(&dir.join("store"), &f).await.unwrap();
        let b = Shadow::open(&dir.join("store"), &f).await.unwrap();
        for round in 0..20 {
            std::fs::write(f.join("moving.txt"), format!("{round}\n")).unwrap();
            let (x, y) = tokio::join!(a.snapshot(), b.snapshot());
            assert_eq!(x.unwrap().tree, y.unwrap().tree, "round {round}");
        }
    }

    #[tokio::test]
    async fn a_new_store_has_its_own_settings_as_git_reads_them() {
        let dir = scratch("settings");
        let shadow = Shadow::open(&dir.join("store"), &dir.join("f"))
            .await
            .unwrap();
        for (key, want) in [
            ("core.autocrlf", "false"),
            ("core.safecrlf", "false"),
            ("core.filemode", "true"),
            ("core.symlinks", "true"),
            ("gc.auto", "0"),
            ("gc.pruneExpire", "never"),
            ("advice.addEmbeddedRepo", "false"),
        ] {
            let got = shadow.git(&["config", "--get", key], 1024).await.unwrap();
            assert_eq!(String::from_utf8_lossy(&got).trim(), want, "{key}");
        }
        // Opened again, nothing is added twice.
        let config = std::fs::read_to_string(shadow.git_dir.join("config")).unwrap();
        Shadow::open(&dir.join("store"), &dir.join("f"))
            .await
            .unwrap();
        let again = std::fs::read_to_string(shadow.git_dir.join("config")).unwrap();
        assert_eq!(config, again);
    }

    #[tokio::test]
    async fn snapshots_show_what_changed_between_them_and_nothing_else() {
        let dir = scratch("changes");
        let f = dir.join("f");
        std::fs::write(f.join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(f.join("gone.txt"), "bye\n").unwrap();
        std::fs::write(f.join(".gitignore"), "build/\n").unwrap();
        std::fs::create_dir_all(f.join("build")).unwrap();
        std::fs::create_dir_all(f.join("sub/.git")).unwrap();
        std::fs::write(f.join("sub/.git/config"), "[core]\n").unwrap();
        let shadow = Shadow::open(&dir.join("store"), &f).await.unwrap();
        let before = shadow.snapshot().await.unwrap().tree;
        assert_eq!(
            shadow.snapshot().await.unwrap().tree,
            before,
            "same folder, same tree"
        );

        std::fs::write(f.join("a.txt"), "one\nTWO\n").unwrap();
        std::fs::remove_file(f.join("gone.txt")).unwrap();
        std::fs::write(f.join("bin.dat"), [0u8, 159, 146, 150, 0, 1]).unwrap();
        std::fs::write(f.join("build/out.o"), "ignored").unwrap();
        std::os::unix::fs::symlink("a.txt", f.join("link")).unwrap();
        let after = shadow.snapshot().await.unwrap().tree;
        let changed = shadow.changed(&before, &after).await.unwrap();
        let got: Vec<(&str, &str)> = changed
            .iter()
            .map(|c| (c.path.as_str(), c.status))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a.txt", "modified"),
                ("bin.dat", "added"),
                ("gone.txt", "deleted"),
                ("link", "added"),
            ]
        );
        let (diff, cut) = shadow.diff(&before, &after, "a.txt", 10_000).await.unwrap();
        assert!(
            diff.contains("-two") && diff.contains("+TWO") && !cut,
            "{diff}"
        );
        let (binary, _) = shadow
            .diff(&before, &after, "bin.dat", 10_000)
            .await
            .unwrap();
        assert!(binary.contains("Binary files"), "{binary}");
        let (short, cut) = shadow.diff(&before, &after, "a.txt", 40).await.unwrap();
        assert!(cut && short.len() <= 40, "{short}");
        // A path that reads as a pathspec's magic is taken as it is.
        let (none, _) = shadow
            .diff(&before, &after, ":(glob)*", 10_000)
            .await
            .unwrap();
        assert!(none.is_empty(), "{none}");
        assert!(!f.join(".git").exists(), "nothing is written in the folder");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_huge_file_is_left_out_of_the_store_and_said() {
        let dir = scratch("huge");
        let f = dir.join("f");
        std::fs::write(f.join("grows.bin"), "small at first").unwrap();
        let store = dir.join("store");
        let shadow = Shadow::open(&store, &f).await.unwrap();
        let before = shadow.snapshot().await.unwrap();
        assert!(before.left_out.is_empty());
        // Sparse: a huge size without the disk it would take to write it.
        for name in ["grows.bin", "new [1].bin"] {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .open(f.join(name))
                .unwrap();
            file.set_len(FILE_MAX + 1).unwrap();
        }
        let after = shadow.snapshot().await.unwrap();
        let mut left: Vec<&str> = after.left_out.iter().map(|(p, _)| p.as_str()).collect();
        left.sort();
        assert_eq!(left, vec!["grows.bin", "new [1].bin"]);
        let store_size: u64 = walk_size(&store);
        assert!(
            store_size < 1024 * 1024,
            "the store holds {store_size} bytes"
        );
        // Left out for good: the next snapshot neither keeps nor lists them again.
        let again = shadow.snapshot().await.unwrap();
        assert!(again.left_out.is_empty(), "{:?}", again.left_out);
        assert_eq!(again.tree, after.tree);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn walk_size(dir: &Path) -> u64 {
        let mut total = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let m = e.metadata().unwrap();
            total += if m.is_dir() {
                walk_size(&e.path())
            } else {
                m.len()
            };
        }
        total
    }

    #[test]
    fn the_root_and_the_home_folder_are_not_followed() {
        assert!(unfollowable(Path::new("/")).is_some());
        if let Some(home) = std::env::var_os("HOME") {
            assert!(unfollowable(Path::new(&home)).is_some());
        }
        assert!(unfollowable(Path::new("/srv/project")).is_none());
    }
}
