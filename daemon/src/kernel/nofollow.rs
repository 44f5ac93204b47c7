//! Files vyred reads and writes in folders someone else can write (a project's home, the
//! sessions' HOME and its transcripts, on the Mac even `VYRE_HOME`), never through a link.
//!
//! A session can plant a symbolic link (or a FIFO, or a huge file) at any name it can predict.
//! Everything here works from a directory handle ([`Dir`]) opened without following the last
//! link, and every name under it is opened with `openat` and `O_NOFOLLOW`:
//!
//! - [`Dir::write_atomic`] writes a new file under a random name created with
//!   `O_CREAT | O_EXCL | O_NOFOLLOW` (a name planted in advance is never opened), syncs it, and
//!   `renameat`s it over the target in the same folder (a link at the target is refused; were it
//!   swapped in after the check, the rename replaces the link itself, never what it points at).
//! - [`Dir::read`] and [`Dir::file`] open regular files only (a link, a FIFO or a device is
//!   refused; `O_NONBLOCK` keeps a FIFO from blocking the open), and `read` has a size cap.
//! - [`Dir::walk`] reaches a folder from `/` one component at a time, following none: a path
//!   resolved once (see [`resolve`]) that later grows a link is refused, not followed.
//!
//! What it does not do: it does not stop a process that can write the folder from changing
//! the file after vyred wrote it; and [`Dir::open`] follows links in the *ancestors* of the
//! path it is given (those are the caller's choice, e.g. a person's `~/code` being a link).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// One name in a folder ([`Dir::entries`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: std::ffi::OsString,
    pub kind: EntryKind,
}

/// What a folder's entry is, not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Folder,
    Link,
    /// A FIFO, a socket or a device.
    Other,
}

/// Why a file or folder was refused or could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error(
        "{path} is a symbolic link; vyred does not follow links in folders a session can write"
    )]
    Link { path: PathBuf },
    #[error("{path} is not a regular file")]
    NotRegular { path: PathBuf },
    #[error("{path} is not a folder")]
    NotFolder { path: PathBuf },
    #[error("{path} is larger than {max} bytes")]
    TooLarge { path: PathBuf, max: u64 },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl FsError {
    /// The underlying error's kind (`NotFound` for a missing file), `Other` for a refusal.
    pub fn kind(&self) -> std::io::ErrorKind {
        match self {
            FsError::Io { source, .. } => source.kind(),
            _ => std::io::ErrorKind::Other,
        }
    }

    fn of(path: PathBuf, errno: Errno) -> FsError {
        FsError::Io {
            path,
            source: std::io::Error::from(errno),
        }
    }
}

/// An open folder: every name below it is reached relative to it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

impl Dir {
    /// Open `path` as a folder; its last component must not be a link (its ancestors may be).
    pub fn open(path: &Path) -> Result<Dir, FsError> {
        let fd = match nix::fcntl::open(path, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            // Linux says ENOTDIR for a link opened with O_DIRECTORY | O_NOFOLLOW.
            Err(Errno::ENOTDIR)
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
            {
                return Err(FsError::Link {
                    path: path.to_path_buf(),
                });
            }
            Err(e) => return Err(refusal(path.to_path_buf(), e, Kind::Folder)),
        };
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Open `path` as a folder, following links all the way (a folder a person named).
    pub fn open_following(path: &Path) -> Result<Dir, FsError> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(path, flags, Mode::empty())
            .map_err(|e| refusal(path.to_path_buf(), e, Kind::Folder))?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Reach the absolute `path` from `/`, one folder at a time, following no link at all. The
    /// folders are only passed through (on Linux with `O_PATH`, which needs no permission to
    /// read them, as a path lookup would not): the result is for opening files in, not for
    /// writing.
    pub fn walk(path: &Path) -> Result<Dir, FsError> {
        let mut dir = Dir::open_following(Path::new("/"))?;
        for c in path.components() {
            match c {
                Component::RootDir => {}
                Component::Normal(name) => dir = dir.pass(name)?,
                _ => {
                    return Err(FsError::Io {
                        path: path.to_path_buf(),
                        source: std::io::Error::new(
                            std::io::ErrorKind::InvalidInput,
                            "not an absolute path without . or ..",
                        ),
                    });
                }
            }
        }
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the file (or link: never what it points at) `name` in this folder.
    pub fn remove_file(&self, name: impl AsRef<OsStr>) -> Result<(), FsError> {
        unlinkat(&self.fd, name.as_ref(), UnlinkatFlags::NoRemoveDir).map_err(|e| FsError::Io {
            path: self.path.join(name.as_ref()),
            source: std::io::Error::from(e),
        })
    }

    /// The folder `name` in this one, never through a link.
    pub fn child(&self, name: impl AsRef<OsStr>) -> Result<Dir, FsError> {
        let path = self.path.join(name.as_ref());
        match openat(&self.fd, name.as_ref(), DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Ok(Dir { fd, path }),
            Err(e) => Err(self.folder_refusal(name.as_ref(), path, e)),
        }
    }

    /// The folder `name` in this one to pass through or open files in, never through a link.
    fn pass(&self, name: &OsStr) -> Result<Dir, FsError> {
        #[cfg(target_os = "linux")]
        let flags = OFlag::O_PATH
            .union(OFlag::O_DIRECTORY)
            .union(OFlag::O_NOFOLLOW)
            .union(OFlag::O_CLOEXEC);
        #[cfg(not(target_os = "linux"))]
        let flags = DIR_FLAGS;
        let path = self.path.join(name);
        match openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(Dir { fd, path }),
            Err(e) => Err(self.folder_refusal(name, path, e)),
        }
    }

    /// An error opening the folder `name` as a refusal: Linux says ENOTDIR for a link opened
    /// with `O_DIRECTORY | O_NOFOLLOW`, so a link is told apart by a look at it.
    fn folder_refusal(&self, name: &OsStr, path: PathBuf, e: Errno) -> FsError {
        let link = || {
            self.stat(name)
                .ok()
                .flatten()
                .is_some_and(|s| is(&s, SFlag::S_IFLNK))
        };
        match e {
            Errno::ENOTDIR if link() => FsError::Link { path },
            e => refusal(path, e, Kind::Folder),
        }
    }

    /// The folder `name` in this one, made (with `mode`) when missing; never through a link.
    pub fn make_child(&self, name: impl AsRef<OsStr>, mode: u32) -> Result<Dir, FsError> {
        let name = name.as_ref();
        match mkdirat(&self.fd, name, Mode::from_bits_truncate(mode as _)) {
            Ok(()) | Err(Errno::EEXIST) => self.child(name),
            Err(e) => Err(FsError::of(self.path.join(name), e)),
        }
    }

    /// The regular file `name`, opened to read; a link, a FIFO or a device is refused.
    pub fn file(&self, name: impl AsRef<OsStr>) -> Result<File, FsError> {
        let path = self.path.join(name.as_ref());
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name.as_ref(), flags, Mode::empty())
            .map_err(|e| refusal(path.clone(), e, Kind::File))?;
        let stat = fstat(&fd).map_err(|e| FsError::of(path.clone(), e))?;
        if !is(&stat, SFlag::S_IFREG) {
            return Err(FsError::NotRegular { path });
        }
        Ok(File::from(fd))
    }

    /// The whole of the regular file `name`, at most `max` bytes.
    pub fn read(&self, name: impl AsRef<OsStr>, max: u64) -> Result<Vec<u8>, FsError> {
        let path = self.path.join(name.as_ref());
        let file = self.file(name)?;
        let mut out = Vec::new();
        file.take(max + 1)
            .read_to_end(&mut out)
            .map_err(|source| FsError::Io {
                path: path.clone(),
                source,
            })?;
        if out.len() as u64 > max {
            return Err(FsError::TooLarge { path, max });
        }
        Ok(out)
    }

    /// What this folder holds, each entry as it is (a link is a link, never what it points
    /// at), `.` and `..` left out; read through this handle, so a folder swapped for a link
    /// after it was opened is not what gets listed.
    pub fn entries(&self) -> Result<Vec<Entry>, FsError> {
        let fd = openat(&self.fd, ".", DIR_FLAGS, Mode::empty())
            .map_err(|e| FsError::of(self.path.clone(), e))?;
        let mut dir = nix::dir::Dir::from_fd(fd).map_err(|e| FsError::of(self.path.clone(), e))?;
        let mut out = Vec::new();
        for entry in dir.iter() {
            let entry = entry.map_err(|e| FsError::of(self.path.clone(), e))?;
            let bytes = entry.file_name().to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let name = OsStr::from_bytes(bytes).to_os_string();
            use nix::dir::Type;
            let kind = match entry.file_type() {
                Some(Type::File) => EntryKind::File,
                Some(Type::Directory) => EntryKind::Folder,
                Some(Type::Symlink) => EntryKind::Link,
                Some(_) => EntryKind::Other,
                // The file system did not say: look, without following.
                None => match self.stat(&name).ok().flatten() {
                    Some(s) if is(&s, SFlag::S_IFREG) => EntryKind::File,
                    Some(s) if is(&s, SFlag::S_IFDIR) => EntryKind::Folder,
                    Some(s) if is(&s, SFlag::S_IFLNK) => EntryKind::Link,
                    _ => EntryKind::Other,
                },
            };
            out.push(Entry { name, kind });
        }
        Ok(out)
    }

    /// What `name` is, without following it (`None` when it does not exist).
    pub fn stat(&self, name: impl AsRef<OsStr>) -> Result<Option<FileStat>, FsError> {
        match fstatat(
            &self.fd,
            name.as_ref(),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        ) {
            Ok(s) => Ok(Some(s)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(FsError::of(self.path.join(name.as_ref()), e)),
        }
    }

    /// Replace `name` with `bytes` (file mode `mode`) atomically: a new file under a random name,
    /// synced, renamed over `name`, and the folder synced. A link at `name` is refused.
    pub fn write_atomic(
        &self,
        name: impl AsRef<OsStr>,
        bytes: &[u8],
        mode: u32,
    ) -> Result<(), FsError> {
        let name = name.as_ref();
        let path = self.path.join(name);
        if let Some(s) = self.stat(name)?
            && is(&s, SFlag::S_IFLNK)
        {
            return Err(FsError::Link { path });
        }
        let tmp = format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            crate::kernel::ids::random_hex(8)
        );
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(
            &self.fd,
            tmp.as_str(),
            flags,
            Mode::from_bits_truncate(mode as _),
        )
        .map_err(|e| FsError::of(self.path.join(&tmp), e))?;
        let written = (|| {
            // The umask may have narrowed the mode; the file is ours, so say it exactly.
            nix::sys::stat::fchmod(&fd, Mode::from_bits_truncate(mode as _))?;
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            file.sync_all()?;
            nix::fcntl::renameat(&self.fd, tmp.as_str(), &self.fd, name)?;
            Ok::<_, std::io::Error>(())
        })();
        if let Err(source) = written {
            let _ = unlinkat(&self.fd, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
            return Err(FsError::Io { path, source });
        }
        // The rename is durable once the folder is.
        let _ = nix::unistd::fsync(self.fd.as_fd());
        Ok(())
    }
}

/// Replace the file at `path` atomically (see [`Dir::write_atomic`]); its folder's last
/// component must not be a link.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), FsError> {
    let (dir, name) = split(path)?;
    Dir::open(dir)?.write_atomic(name, bytes, mode)
}

/// The regular file at `path`, at most `max` bytes, its last component not followed.
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, FsError> {
    let (dir, name) = split(path)?;
    Dir::open(dir)?.read(name, max)
}

/// `path` with the links the caller chose resolved: the longest part of it that exists,
/// canonicalized, and the rest as given (a folder that appears later is then reached by
/// [`Dir::walk`], which follows nothing).
pub fn resolve(path: &Path) -> PathBuf {
    let mut rest: Vec<&OsStr> = vec![];
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn split(path: &Path) -> Result<(&Path, &OsStr), FsError> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => Ok((
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            },
            name,
        )),
        _ => Err(FsError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file's path"),
        }),
    }
}

fn is(stat: &FileStat, kind: SFlag) -> bool {
    SFlag::from_bits_truncate(stat.st_mode as _) & SFlag::S_IFMT == kind
}

enum Kind {
    File,
    Folder,
}

/// An `open` error as a refusal: `ELOOP` under `O_NOFOLLOW` is a link (`EMLINK` on the BSDs),
/// `ENOTDIR` a file where a folder was wanted.
fn refusal(path: PathBuf, e: Errno, kind: Kind) -> FsError {
    match (e, kind) {
        (Errno::ELOOP | Errno::EMLINK, _) => FsError::Link { path },
        (Errno::ENOTDIR, Kind::Folder) => FsError::NotFolder { path },
        (e, _) => FsError::of(path, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vyre-nf-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn writes_atomically_with_its_mode_and_leaves_no_temp() {
        let d = scratch("write");
        write_atomic(&d.join("a.json"), b"{}\n", 0o600).unwrap();
        write_atomic(&d.join("a.json"), b"{\"x\":1}\n", 0o600).unwrap();
        assert_eq!(std::fs::read(d.join("a.json")).unwrap(), b"{\"x\":1}\n");
        let mode = std::fs::metadata(d.join("a.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn never_writes_or_reads_through_a_link() {
        let d = scratch("links");
        let outside = d.join("outside.txt");
        std::fs::write(&outside, "keep me").unwrap();
        std::fs::create_dir(d.join("home")).unwrap();
        // The target itself is a link: refused, the outside file untouched.
        symlink(&outside, d.join("home/target.json")).unwrap();
        let err = write_atomic(&d.join("home/target.json"), b"evil", 0o644).unwrap_err();
        assert!(matches!(err, FsError::Link { .. }), "{err}");
        let err = read(&d.join("home/target.json"), 100).unwrap_err();
        assert!(matches!(err, FsError::Link { .. }), "{err}");
        // The folder is a link: refused.
        symlink(d.join("home"), d.join("linked")).unwrap();
        let err = write_atomic(&d.join("linked/new.json"), b"evil", 0o644).unwrap_err();
        assert!(matches!(err, FsError::Link { .. }), "{err}");
        assert!(!d.join("home/new.json").exists());
        // Walking refuses a link anywhere on the way.
        let err = Dir::walk(&d.join("linked")).unwrap_err();
        assert!(matches!(err, FsError::Link { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_fifo_or_a_huge_file_is_refused_without_blocking() {
        let d = scratch("fifo");
        nix::unistd::mkfifo(&d.join("pipe.json"), Mode::from_bits_truncate(0o600)).unwrap();
        let err = read(&d.join("pipe.json"), 100).unwrap_err();
        assert!(matches!(err, FsError::NotRegular { .. }), "{err}");
        std::fs::write(d.join("big.json"), vec![b'x'; 101]).unwrap();
        let err = read(&d.join("big.json"), 100).unwrap_err();
        assert!(matches!(err, FsError::TooLarge { .. }), "{err}");
        assert_eq!(read(&d.join("big.json"), 101).unwrap().len(), 101);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn resolve_keeps_what_does_not_exist_yet() {
        let d = scratch("resolve");
        std::fs::create_dir(d.join("real")).unwrap();
        symlink(d.join("real"), d.join("chosen")).unwrap();
        let real = std::fs::canonicalize(d.join("real")).unwrap();
        assert_eq!(
            resolve(&d.join("chosen/.claude/projects")),
            real.join(".claude/projects")
        );
        assert_eq!(Dir::walk(&resolve(&d.join("chosen"))).unwrap().path(), real);
        std::fs::remove_dir_all(d).unwrap();
    }
}
