//! The folders `files` may read (spec section 3, `files/`): the config's `roots` and every
//! project's folders, nothing else. A path is confined here before anything opens it: it must
//! be absolute (or start with `~`), hold no `.` or `..`, and lie under a root; it is then
//! reached from the root one folder at a time through `kernel::nofollow`, following no link,
//! so a link planted inside a root (by a session, or anyone who can write there) never leads out.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::kernel::folders;
use crate::kernel::nofollow::{Dir, FsError};
use crate::kernel::tools::{ErrorKind, ToolError};

/// Why a path is not read.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("{0} is not a path files can read: give it absolute (or from ~), without . or ..")]
    BadPath(String),
    #[error(
        "{0} is outside the folders files may read: the config's `roots` and the projects' folders"
    )]
    Outside(String),
    #[error("no folder to read: add `roots` to config.json or make a project")]
    NoRoots,
    #[error("{0} does not exist")]
    Missing(String),
    #[error("{0} is reached through a symbolic link, which files never follows")]
    Link(String),
    #[error("{0} is neither a file nor a folder (a FIFO, a socket or a device)")]
    NotRegular(String),
    #[error("{0}: {1}")]
    Io(String, String),
}

impl FilesError {
    /// A file system refusal or failure at `shown` (the path as the person reads it).
    pub fn of(e: FsError, shown: &str) -> FilesError {
        let shown = shown.to_string();
        match e {
            FsError::Link { .. } => FilesError::Link(shown),
            FsError::NotRegular { .. } => FilesError::NotRegular(shown),
            e if e.kind() == std::io::ErrorKind::NotFound => FilesError::Missing(shown),
            e => FilesError::Io(shown, e.to_string()),
        }
    }
}

impl From<FilesError> for ToolError {
    fn from(e: FilesError) -> Self {
        let (kind, code) = match &e {
            FilesError::BadPath(_) => (ErrorKind::InvalidInput, "bad_path"),
            FilesError::Outside(_) => (ErrorKind::Refused, "outside_roots"),
            FilesError::NoRoots => (ErrorKind::Conflict, "no_roots"),
            FilesError::Missing(_) => (ErrorKind::NotFound, "no_such_file"),
            FilesError::Link(_) => (ErrorKind::Refused, "link_refused"),
            FilesError::NotRegular(_) => (ErrorKind::Refused, "not_regular"),
            FilesError::Io(..) => (ErrorKind::Internal, "io_error"),
        };
        ToolError::new(kind, code, e.to_string())
    }
}

/// One folder files may read: as configured (with `~` expanded) and as it really is, so a path
/// given either way is found under it.
#[derive(Debug, Clone)]
pub struct Root {
    pub path: PathBuf,
    real: PathBuf,
}

/// Every root, and the home `~` means.
#[derive(Debug, Clone)]
pub struct Roots {
    pub roots: Vec<Root>,
    pub home: PathBuf,
}

/// A confined path: its root's folder handle, the folders under it, and the last name.
pub struct Target {
    /// The path as asked, expanded.
    pub path: PathBuf,
    /// The folder holding the last name, reached without following a link.
    pub parent: Dir,
    /// The last name (`None`: the path is the root itself).
    pub name: Option<OsString>,
}

impl Roots {
    /// Roots from folders as configured or recorded (`~` allowed); missing ones are left out.
    pub fn new(folders: impl IntoIterator<Item = String>, home: PathBuf) -> Roots {
        let mut roots: Vec<Root> = Vec::new();
        for typed in folders {
            let Ok(path) = folders::expand(Path::new(&typed), &home) else {
                continue;
            };
            let Ok(real) = std::fs::canonicalize(&path) else {
                continue;
            };
            if real.is_dir() && !roots.iter().any(|r| r.real == real) {
                roots.push(Root { path, real });
            }
        }
        Roots { roots, home }
    }

    /// A path as a person reads it (`~/...` under the home).
    pub fn shown(&self, path: &Path) -> String {
        folders::shown(path, &self.home)
    }

    /// Confine `typed` to the roots and reach its folder; nothing outside is opened.
    pub fn confine(&self, typed: &str) -> Result<Target, FilesError> {
        if self.roots.is_empty() {
            return Err(FilesError::NoRoots);
        }
        let bad = || FilesError::BadPath(typed.to_string());
        let path = folders::expand(Path::new(typed), &self.home).map_err(|_| bad())?;
        // `components()` folds a `.` away; the path as typed must not hold one either.
        let dotted = path
            .to_string_lossy()
            .split('/')
            .any(|part| part == "." || part == "..");
        if dotted
            || path
                .components()
                .any(|c| !matches!(c, Component::RootDir | Component::Normal(_)))
        {
            return Err(bad());
        }
        // The deepest root the path is under, as configured or as it really is.
        let (root, rest) = self
            .roots
            .iter()
            .flat_map(|r| [(r, &r.path), (r, &r.real)])
            .filter_map(|(r, base)| path.strip_prefix(base).ok().map(|rest| (r, rest)))
            .min_by_key(|(_, rest)| rest.components().count())
            .ok_or_else(|| FilesError::Outside(self.shown(&path)))?;
        let shown = self.shown(&path);
        let fs = |e: FsError| FilesError::of(e, &shown);
        let mut dir = Dir::open_following(&root.real).map_err(fs)?;
        let names: Vec<OsString> = rest.iter().map(|n| n.to_os_string()).collect();
        let Some((last, folders)) = names.split_last() else {
            return Ok(Target {
                path,
                parent: dir,
                name: None,
            });
        };
        for name in folders {
            dir = dir.child(name).map_err(fs)?;
        }
        Ok(Target {
            path,
            parent: dir,
            name: Some(last.clone()),
        })
    }
}

impl Target {
    /// The target as a folder handle (the root itself, or a folder in it), never a link.
    pub fn folder(&self) -> Result<Dir, FsError> {
        match &self.name {
            None => Dir::open_following(self.parent.path()),
            Some(name) => self.parent.child(name),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A fresh folder for one test, under the system's temp folder.
    pub(in crate::modules::files) fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vyre-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_absolute_paths_without_dots_under_a_root_are_confined() {
        let tmp = scratch("confine");
        let work = tmp.join("work");
        std::fs::create_dir_all(work.join("src")).unwrap();
        std::fs::write(work.join("src/a.rs"), "fn main() {}\n").unwrap();
        let roots = Roots::new(
            ["~/work".to_string(), "/no/such/folder".to_string()],
            tmp.clone(),
        );
        assert_eq!(roots.roots.len(), 1, "a missing root is left out");
        let t = roots.confine("~/work/src/a.rs").unwrap();
        assert_eq!(t.name.as_deref(), Some(std::ffi::OsStr::new("a.rs")));
        assert!(
            roots
                .confine(&work.join("src/a.rs").display().to_string())
                .is_ok()
        );
        assert!(roots.confine("~/work").unwrap().name.is_none());
        for bad in [
            "src/a.rs",
            "~/work/../work/src/a.rs",
            "~/work/./src",
            "~other/x",
        ] {
            assert!(
                matches!(roots.confine(bad), Err(FilesError::BadPath(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            roots.confine("/etc/passwd"),
            Err(FilesError::Outside(_))
        ));
        assert!(matches!(
            roots.confine("~/workshop/x"),
            Err(FilesError::Outside(_))
        ));
        assert!(matches!(
            Roots::new([], tmp.clone()).confine("/x"),
            Err(FilesError::NoRoots)
        ));
    }

    #[test]
    fn a_link_inside_a_root_does_not_lead_out() {
        let tmp = scratch("link");
        let work = tmp.join("work");
        let secret = tmp.join("secret");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("key"), "sk-ant-not-for-you").unwrap();
        std::os::unix::fs::symlink(&secret, work.join("out")).unwrap();
        let roots = Roots::new(["~/work".to_string()], tmp.clone());
        assert!(matches!(
            roots.confine("~/work/out/key"),
            Err(FilesError::Link(_))
        ));
        // The link itself is confined, but opening it as a folder is refused.
        let t = roots.confine("~/work/out").unwrap();
        assert!(matches!(t.folder(), Err(FsError::Link { .. })));
    }
}
