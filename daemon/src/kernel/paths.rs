//! Where vyred keeps its runtime data: `VYRE_HOME` (default `~/.vyre`) and the files inside it.
//!
//! Nothing here reads or writes configuration; it only names places and creates the home with the
//! right permissions.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The folder vyred owns, and the well-known paths inside it (spec section 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VyreHome {
    root: PathBuf,
}

impl VyreHome {
    /// The home named by `VYRE_HOME`, or `~/.vyre`.
    pub fn from_env() -> io::Result<Self> {
        if let Some(home) = std::env::var_os("VYRE_HOME").filter(|v| !v.is_empty()) {
            return Ok(Self::at(PathBuf::from(home)));
        }
        let user_home = std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .ok_or_else(|| io::Error::other("neither VYRE_HOME nor HOME is set"))?;
        Ok(Self::at(PathBuf::from(user_home).join(".vyre")))
    }

    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        // Keep paths absolute so a daemon that changes directory still finds its files.
        let root = if root.is_absolute() {
            root
        } else {
            std::env::current_dir()
                .map(|d| d.join(&root))
                .unwrap_or(root)
        };
        Self { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.json")
    }
    pub fn database(&self) -> PathBuf {
        self.root.join("vyre.db")
    }
    pub fn socket(&self) -> PathBuf {
        self.root.join("vyred.sock")
    }
    pub fn addr_file(&self) -> PathBuf {
        self.root.join("vyred.addr")
    }
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("vyred.lock")
    }
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// Create the home (mode 0700) and its logs folder. An existing home with looser permissions
    /// is tightened, since it holds the store and the socket.
    pub fn ensure(&self) -> io::Result<()> {
        private_dir(&self.root)?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(self.logs())?;
        Ok(())
    }
}

/// Make `dir` (and what is missing above it) a folder only vyred's user may enter: mode 0700,
/// tightened when it exists looser (the home, the network's key, the certificates).
pub fn private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    if fs::metadata(dir)?.permissions().mode() & 0o777 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Where an install keeps what ships beside the binary (`ui`, `harness`), nearest first, for
/// the binary at `exe`: `share/vyre/<name>` beside its folder (npm's platform package, the box
/// image, the .deb: `/usr/bin/vyre-app` finds `/usr/share/vyre/<name>`), and `Resources/<name>`
/// beside it (the Mac's `Vyre.app/Contents/MacOS/vyre-app` finds `Contents/Resources/<name>`,
/// where code signing expects data). Whether the folder exists is the caller's to check.
pub fn installed(exe: &Path, name: &str) -> Vec<PathBuf> {
    let Some(bin_dir) = exe.parent() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if let Some(prefix) = bin_dir.parent() {
        found.push(prefix.join("share/vyre").join(name));
        found.push(prefix.join("Resources").join(name));
    }
    found
}

/// [`installed`] for this process's own binary.
pub fn installed_here(name: &str) -> Vec<PathBuf> {
    std::env::current_exe()
        .map(|exe| installed(&exe, name))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ensure_creates_a_private_home() {
        let dir = std::env::temp_dir().join(format!("vyre-paths-{}", std::process::id()));
        let home = VyreHome::at(dir.join("nested/home"));
        home.ensure().unwrap();
        let mode = fs::metadata(home.root()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(home.logs().is_dir());
        fs::set_permissions(home.root(), fs::Permissions::from_mode(0o755)).unwrap();
        home.ensure().unwrap();
        let mode = fs::metadata(home.root()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "a loose home is tightened");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn installed_layouts_are_found_beside_the_binary() {
        assert_eq!(
            installed(Path::new("/usr/bin/vyre-app"), "ui"),
            [
                PathBuf::from("/usr/share/vyre/ui"),
                PathBuf::from("/usr/Resources/ui")
            ]
        );
        let mac = installed(
            Path::new("/Applications/Vyre.app/Contents/MacOS/vyre-app"),
            "harness",
        );
        assert!(mac.contains(&PathBuf::from(
            "/Applications/Vyre.app/Contents/Resources/harness"
        )));
        assert!(installed(Path::new("vyre"), "ui").is_empty());
    }
}
