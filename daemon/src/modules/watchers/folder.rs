//! Watchers' folders under `VYRE_HOME/watchers/`: each `<name>/` holds `watcher.json` and its
//! script. Vyre writes a folder whole: the new one is made and checked beside the old, then takes
//! its place, so a watcher is never half written and a refused one leaves the old as it was.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::spec::{self, Declared, Watcher};

/// The longest script Vyre writes.
pub const MAX_SCRIPT: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}")]
    Invalid(String),
    #[error("a watcher named {0:?} exists; say replace: true to write it anew")]
    Exists(String),
    #[error("the watcher's folder cannot be written: {0}")]
    Io(#[from] std::io::Error),
}

/// Where watchers live.
pub fn root(home: &Path) -> PathBuf {
    home.join("watchers")
}

/// Every watcher's folder, by name, read as it is now: a folder whose `watcher.json` is broken
/// is listed with why.
pub fn all(root: &Path) -> Vec<(String, Result<Watcher, String>)> {
    let Ok(entries) = fs::read_dir(root) else {
        return vec![];
    };
    let mut found: Vec<(String, Result<Watcher, String>)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| spec::valid_name(n))
        .map(|n| {
            let w = spec::read(&root.join(&n));
            (n, w)
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// One watcher's folder read as it is now; `None` when there is no such folder.
pub fn one(root: &Path, name: &str) -> Option<Result<Watcher, String>> {
    if !spec::valid_name(name) {
        return None;
    }
    let folder = root.join(name);
    folder.is_dir().then(|| spec::read(&folder))
}

/// Write watcher `declared.name` with `script` in `file`; refused (and nothing changed) when its
/// declaration or its file name is not one Vyre takes, or it exists and `replace` is false.
/// Whether it replaced one.
pub fn write(
    root: &Path,
    declared: &Declared,
    file: &str,
    script: &str,
    replace: bool,
) -> Result<(Watcher, bool), WriteError> {
    let name = declared.name.clone();
    if !spec::valid_name(&name) {
        return Err(WriteError::Invalid(format!(
            "the name {name:?} is not one Vyre takes: 1 to 32 of a-z, 0-9 and -, starting with a letter"
        )));
    }
    if file == spec::FILE
        || file.is_empty()
        || file.starts_with('.')
        || file.len() > 64
        || !file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err(WriteError::Invalid(format!(
            "file {file:?} must be a plain file name such as watch.js (letters, digits, . - _)"
        )));
    }
    if script.len() > MAX_SCRIPT {
        return Err(WriteError::Invalid(format!(
            "the script is {} KiB; a watcher's script may be {} KiB at most",
            script.len() / 1024,
            MAX_SCRIPT / 1024
        )));
    }
    let target = root.join(&name);
    let existed = target.exists();
    if existed && !replace {
        return Err(WriteError::Exists(name));
    }
    let staging = root.join(".staging");
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&staging)?;
    // Made under its own name so that the check sees the folder it will be.
    let fresh = staging.join(format!("{}-{}", std::process::id(), crate::now_ms()));
    let new = fresh.join(&name);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&new)?;
    let made = (|| {
        let json = serde_json::to_string_pretty(declared).map_err(std::io::Error::other)?;
        put(&new.join(spec::FILE), json.as_bytes())?;
        put(&new.join(file), script.as_bytes())?;
        spec::check(declared.clone(), &new).map_err(WriteError::Invalid)
    })();
    if let Err(e) = made {
        let _ = fs::remove_dir_all(&fresh);
        return Err(e);
    }
    if existed {
        let old = fresh.join(".old");
        fs::rename(&target, &old)?;
    }
    if let Err(e) = fs::rename(&new, &target) {
        // Put the old one back rather than leave none.
        let _ = fs::rename(fresh.join(".old"), &target);
        let _ = fs::remove_dir_all(&fresh);
        return Err(e.into());
    }
    let _ = fs::remove_dir_all(&fresh);
    let watcher = spec::read(&target).map_err(WriteError::Invalid)?;
    Ok((watcher, existed))
}

/// Every plain file in `folder` (its subfolders too, four deep; not its links), by its path
/// inside it, `watcher.json` first: what a run of it can read.
pub fn files(folder: &Path) -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<(String, PathBuf)>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let (Ok(kind), Some(name)) =
                (e.file_type(), e.file_name().to_str().map(str::to_string))
            else {
                continue;
            };
            let inside = format!("{prefix}{name}");
            if kind.is_file() {
                out.push((inside, e.path()));
            } else if kind.is_dir() && depth < 4 {
                walk(&e.path(), &format!("{inside}/"), depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(folder, "", 0, &mut out);
    out.sort_by(|a, b| (a.0 != spec::FILE, &a.0).cmp(&(b.0 != spec::FILE, &b.0)));
    out
}

/// A hash of what `files` hold (their paths and bytes): it changes when any of them does.
pub fn digest(files: &[(String, PathBuf)]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for (name, path) in files {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(fs::read(path).unwrap_or_default());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Take watcher `name`'s folder away; whether there was one.
pub fn remove(root: &Path, name: &str) -> std::io::Result<bool> {
    if !spec::valid_name(name) {
        return Ok(false);
    }
    match fs::remove_dir_all(root.join(name)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

fn put(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "vyre-watchers-folder-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn declared(name: &str, schedule: &str) -> Declared {
        serde_json::from_value(serde_json::json!({
            "name": name, "project": "Site", "schedule": schedule
        }))
        .unwrap()
    }

    #[test]
    fn a_folder_is_written_whole_replaced_only_when_asked_and_a_bad_one_changes_nothing() {
        let r = root("write");
        let (w, replaced) = write(
            &r,
            &declared("news", "@hourly"),
            "watch.js",
            "// one",
            false,
        )
        .unwrap();
        assert!(!replaced);
        assert_eq!(w.name, "news");
        assert_eq!(
            fs::read_to_string(r.join("news/watch.js")).unwrap(),
            "// one"
        );
        assert!(matches!(
            write(
                &r,
                &declared("news", "@hourly"),
                "watch.js",
                "// two",
                false
            ),
            Err(WriteError::Exists(_))
        ));
        // A refused declaration leaves the old one as it was, and no staging behind.
        let bad = write(
            &r,
            &declared("news", "every second"),
            "watch.js",
            "// two",
            true,
        );
        assert!(matches!(bad, Err(WriteError::Invalid(_))), "{bad:?}");
        assert_eq!(
            fs::read_to_string(r.join("news/watch.js")).unwrap(),
            "// one"
        );
        assert_eq!(fs::read_dir(r.join(".staging")).unwrap().count(), 0);
        let (_, replaced) = write(
            &r,
            &declared("news", "*/5 * * * *"),
            "watch.js",
            "// two",
            true,
        )
        .unwrap();
        assert!(replaced);
        assert_eq!(
            fs::read_to_string(r.join("news/watch.js")).unwrap(),
            "// two"
        );
        for file in ["../x.js", "watcher.json", ".hidden", "a/b.js", ""] {
            assert!(
                matches!(
                    write(&r, &declared("other", "@daily"), file, "x", false),
                    Err(WriteError::Invalid(_))
                ),
                "{file:?}"
            );
        }
        assert!(!r.join("other").exists());
        // What a run can read, subfolders too, the declaration first; links left out.
        fs::create_dir_all(r.join("news/lib")).unwrap();
        fs::write(r.join("news/lib/x.js"), "// x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", r.join("news/link")).unwrap();
        let listed: Vec<String> = files(&r.join("news")).into_iter().map(|(n, _)| n).collect();
        assert_eq!(listed, ["watcher.json", "lib/x.js", "watch.js"]);
        let before = digest(&files(&r.join("news")));
        fs::write(r.join("news/lib/x.js"), "// y").unwrap();
        assert_ne!(
            digest(&files(&r.join("news"))),
            before,
            "any file's change shows"
        );
        assert_eq!(all(&r).len(), 1);
        assert!(remove(&r, "news").unwrap());
        assert!(!remove(&r, "news").unwrap());
        assert!(!remove(&r, "..").unwrap());
    }
}
