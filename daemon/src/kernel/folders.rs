//! Folders as a person types them: read against the sessions' HOME (`~` and `~/...`) and
//! checked before anything starts, so a folder that does not exist is a clear error in place.
//! Threads and projects both take folders this way.

use std::path::{Path, PathBuf};

use crate::kernel::config::Config;
use crate::kernel::tools::{ErrorKind, ToolError};

/// The HOME sessions run with (their `~/.claude`, and what a typed `~` means):
/// `sessions.home`, else `user_home` (vyred's), else with `sessions.uid` that user's home.
pub fn sessions_home(config: &Config, user_home: PathBuf) -> Result<PathBuf, String> {
    let settings = &config.sessions;
    if let Some(home) = &settings.home {
        return Ok(PathBuf::from(home));
    }
    match settings.uid {
        None => Ok(user_home),
        // Sessions of another user live in that user's home.
        Some(uid) => nix::unistd::User::from_uid(uid.into())
            .ok()
            .flatten()
            .map(|u| u.dir)
            .ok_or_else(|| {
                format!("sessions.uid {uid} has no home in the user database: set sessions.home")
            }),
    }
}

/// Why a typed folder cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FolderError {
    #[error("give the folder as an absolute path or from your home folder (~/...), not {0:?}")]
    Relative(String),
    #[error("only your own home folder is understood as ~, not {0:?}")]
    OtherUser(String),
    #[error("there is no folder {0}")]
    Missing(String),
    #[error("{0} is a file, not a folder")]
    NotAFolder(String),
}

impl From<FolderError> for ToolError {
    fn from(e: FolderError) -> Self {
        let code = match &e {
            FolderError::Relative(_) | FolderError::OtherUser(_) => "invalid_input",
            FolderError::Missing(_) => "no_such_folder",
            FolderError::NotAFolder(_) => "not_a_folder",
        };
        ToolError::new(ErrorKind::InvalidInput, code, e.to_string())
    }
}

/// `typed` as a path: `~` is `home`, `~/x` is under it, an absolute path stays itself.
pub fn expand(typed: &Path, home: &Path) -> Result<PathBuf, FolderError> {
    let text = typed.to_string_lossy();
    let text = text.trim();
    if text == "~" {
        return Ok(home.to_path_buf());
    }
    if let Some(rest) = text.strip_prefix("~/") {
        return Ok(home.join(rest.trim_start_matches('/')));
    }
    if text.starts_with('~') {
        return Err(FolderError::OtherUser(text.to_string()));
    }
    let path = PathBuf::from(text);
    if !path.is_absolute() {
        return Err(FolderError::Relative(text.to_string()));
    }
    Ok(path)
}

/// `typed`, expanded, when it is an existing folder (links followed, as a launch would).
pub fn check(typed: &Path, home: &Path) -> Result<PathBuf, FolderError> {
    let path = expand(typed, home)?;
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => Ok(path),
        Ok(_) => Err(FolderError::NotAFolder(shown(&path, home))),
        Err(_) => Err(FolderError::Missing(shown(&path, home))),
    }
}

/// A path as a person reads it: under `home` it starts with `~`.
pub fn shown(path: &Path, home: &Path) -> String {
    if home.as_os_str().is_empty() || home == Path::new("/") {
        return path.display().to_string();
    }
    match path.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".into(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

/// Which rows of a table hold a folder that is one of `folders` or inside one (a project's
/// sessions), as SQL conditions on text column `column`: one range of an index on it per folder,
/// their bounds pushed on `params` (numbered after what is there). A range holds every text
/// that starts with the folder's, siblings such as `<folder>-old` too, which [`within`] then
/// drops: the ranges find the rows without a walk of the table, `within` decides.
pub fn ranges(
    column: &str,
    folders: &[&str],
    params: &mut Vec<rusqlite::types::Value>,
) -> Vec<String> {
    folders
        .iter()
        .map(|folder| {
            let folder = folder.trim_end_matches('/');
            params.push(rusqlite::types::Value::Text(folder.to_string()));
            params.push(rusqlite::types::Value::Text(format!("{folder}\u{10FFFF}")));
            format!(
                "({column} >= ?{} AND {column} < ?{})",
                params.len() - 1,
                params.len()
            )
        })
        .collect()
}

/// Whether folder `cwd` is one of `folders` or inside one, by whole names (`/a/b` is inside
/// `/a`, `/a-old` is not).
pub fn within(cwd: &str, folders: &[&str]) -> bool {
    folders.iter().any(|f| Path::new(cwd).starts_with(f))
}

#[cfg(test)]
mod tests {

    #[test]
    fn within_is_by_whole_names_and_ranges_find_only_what_starts_so() {
        assert!(within("/a/b", &["/a"]));
        assert!(within("/a", &["/a/"]));
        assert!(!within("/a-old", &["/a"]));
        assert!(within("/x", &["/"]));
        assert!(!within("/a", &[]));
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (cwd TEXT); CREATE INDEX t_cwd ON t(cwd);")
            .unwrap();
        for cwd in ["/a", "/a/b", "/a-old", "/b", "/a\u{e9}t\u{e9}", "/"] {
            c.execute("INSERT INTO t VALUES (?1)", [cwd]).unwrap();
        }
        let mut params = vec![rusqlite::types::Value::Integer(0)];
        let wheres = ranges("cwd", &["/a/"], &mut params);
        assert_eq!(
            wheres,
            ["(cwd >= ?2 AND cwd < ?3)"],
            "numbered after what is there"
        );
        let sql = format!(
            "SELECT cwd FROM t WHERE ?1 = 0 AND {} ORDER BY cwd",
            wheres[0]
        );
        let plan: String = c
            .query_row(
                &format!("EXPLAIN QUERY PLAN {sql}"),
                rusqlite::params_from_iter(&params),
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("t_cwd"), "a range of the index: {plan}");
        let mut stmt = c.prepare(&sql).unwrap();
        let got: Vec<String> = stmt
            .query_map(rusqlite::params_from_iter(&params), |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, ["/a", "/a-old", "/a/b", "/a\u{e9}t\u{e9}"]);
        let exact: Vec<&String> = got.iter().filter(|c| within(c, &["/a/"])).collect();
        assert_eq!(exact, ["/a", "/a/b"]);
    }
    use super::*;

    const HOME: &str = "/home/ada";

    #[test]
    fn a_typed_folder_is_read_against_the_sessions_home() {
        let home = Path::new(HOME);
        let e = |s: &str| expand(Path::new(s), home);
        assert_eq!(e("~"), Ok(PathBuf::from("/home/ada")));
        assert_eq!(e("~/src/app"), Ok(PathBuf::from("/home/ada/src/app")));
        assert_eq!(e("  ~/src/app  "), Ok(PathBuf::from("/home/ada/src/app")));
        assert_eq!(e("/srv/work"), Ok(PathBuf::from("/srv/work")));
        assert_eq!(
            e("~bob/x"),
            Err(FolderError::OtherUser("~bob/x".into())),
            "another user's home is not guessed"
        );
        assert_eq!(e("src/app"), Err(FolderError::Relative("src/app".into())));
        assert_eq!(e(""), Err(FolderError::Relative("".into())));
    }

    #[test]
    fn a_folder_that_is_not_there_says_so_as_typed() {
        let home = &std::env::temp_dir().join(format!("vyre-folders-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(home);
        std::fs::create_dir_all(home).unwrap();
        std::fs::create_dir(home.join("here")).unwrap();
        std::fs::write(home.join("file.txt"), "x").unwrap();
        assert_eq!(check(Path::new("~/here"), home), Ok(home.join("here")));
        let missing = check(Path::new("~/nope"), home).unwrap_err();
        assert_eq!(missing, FolderError::Missing("~/nope".into()));
        assert_eq!(missing.to_string(), "there is no folder ~/nope");
        let e: ToolError = missing.into();
        assert_eq!(
            (e.kind, &*e.code),
            (ErrorKind::InvalidInput, "no_such_folder")
        );
        let file = check(Path::new("~/file.txt"), home).unwrap_err();
        assert_eq!(file, FolderError::NotAFolder("~/file.txt".into()));
        let e: ToolError = FolderError::Relative("x".into()).into();
        assert_eq!(&*e.code, "invalid_input");
        std::fs::remove_dir_all(home).unwrap();
    }

    #[test]
    fn paths_under_the_home_are_shown_from_it() {
        let home = Path::new(HOME);
        assert_eq!(shown(Path::new("/home/ada"), home), "~");
        assert_eq!(shown(Path::new("/home/ada/src/app"), home), "~/src/app");
        assert_eq!(shown(Path::new("/home/adam/x"), home), "/home/adam/x");
        assert_eq!(shown(Path::new("/srv/x"), home), "/srv/x");
        assert_eq!(shown(Path::new("/srv/x"), Path::new("/")), "/srv/x");
    }
}
