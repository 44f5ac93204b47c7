//! `<home>/.vyre/project.json` (spec section 7.2): the project's own declaration, in its folder,
//! so it travels with the folder. Vyre rewrites only the keys it owns (`threads`) and keeps the
//! rest (`org`, `people`, `watchers`, anything newer) as written.
//!
//! The folder is the project's, so sessions write it: the file is read and written only through
//! [`crate::kernel::nofollow`] (a linked `.vyre` or `project.json` is refused, the write goes to a random
//! temp name renamed over the file), and a declaration larger than [`MAX_BYTES`] is refused.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::kernel::nofollow::{Dir, FsError};

/// The largest declaration read: a hostile repository's huge file is refused, not loaded.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Where a project home keeps its declaration.
pub fn path_in(home: &Path) -> PathBuf {
    home.join(".vyre").join("project.json")
}

/// Someone the project's file names (`people`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Person {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ProjectFile {
    pub home: PathBuf,
    doc: Map<String, Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A link, a FIFO, a huge file: refused, never followed or read.
    #[error("{0}")]
    Refused(crate::kernel::nofollow::FsError),
    #[error("{path} is not a project declaration: {why}")]
    Invalid { path: PathBuf, why: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ProjectFile {
    pub fn new(home: &Path, name: &str, workspaces: &[String]) -> ProjectFile {
        let mut doc = Map::new();
        doc.insert("name".into(), Value::String(name.into()));
        doc.insert(
            "workspaces".into(),
            Value::Array(workspaces.iter().cloned().map(Value::String).collect()),
        );
        doc.insert("threads".into(), Value::Array(vec![]));
        ProjectFile {
            home: home.to_path_buf(),
            doc,
        }
    }

    pub fn read(home: &Path) -> Result<ProjectFile, FileError> {
        let path = path_in(home);
        let text = read_bytes(home).and_then(|bytes| {
            String::from_utf8(bytes).map_err(|_| FileError::Invalid {
                path: path.clone(),
                why: "it is not UTF-8 text".into(),
            })
        })?;
        let invalid = |why: String| FileError::Invalid {
            path: path.clone(),
            why,
        };
        let doc = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(invalid("not a JSON object".into())),
            Err(e) => return Err(invalid(e.to_string())),
        };
        let named = doc
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty());
        if !named {
            return Err(invalid("it has no \"name\"".into()));
        }
        Ok(ProjectFile {
            home: home.to_path_buf(),
            doc,
        })
    }

    pub fn name(&self) -> &str {
        self.doc["name"].as_str().unwrap_or_default()
    }

    pub fn org(&self) -> Option<&str> {
        self.doc.get("org").and_then(Value::as_str)
    }

    /// The model its sessions use unless a launch names one (ADR 0030 section 9).
    pub fn model(&self) -> Option<&str> {
        self.doc
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty())
    }

    /// The people the project declares (`people: [{name, email?}]`): the ones with a name of 2
    /// to 80 characters on one line, at most 100; anything else in the list is left alone.
    pub fn people(&self) -> Vec<Person> {
        self.doc
            .get("people")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let name = p.get("name")?.as_str()?.trim();
                let ok = (2..=80).contains(&name.chars().count()) && !name.contains(['\n', '\r']);
                ok.then(|| Person {
                    name: name.to_string(),
                    email: p
                        .get("email")
                        .and_then(Value::as_str)
                        .filter(|e| e.len() <= 200 && e.contains('@'))
                        .map(String::from),
                })
            })
            .take(100)
            .collect()
    }

    fn strings(&self, key: &str) -> Vec<String> {
        self.doc
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    }

    /// The folders the project owns: its home and its workspaces (relative ones from the home).
    pub fn folders(&self) -> Vec<PathBuf> {
        let mut folders = vec![self.home.clone()];
        for w in self.strings("workspaces") {
            let p = Path::new(&w);
            let abs = if p.is_absolute() {
                p.to_path_buf()
            } else {
                normalize(&self.home.join(p))
            };
            if !folders.contains(&abs) {
                folders.push(abs);
            }
        }
        folders
    }

    pub fn workspaces(&self) -> Vec<String> {
        self.strings("workspaces")
    }

    /// Threads a person picked into the project.
    pub fn picks(&self) -> Vec<String> {
        self.strings("threads")
    }

    pub fn set_model(&mut self, model: &str) {
        self.doc.insert("model".into(), Value::String(model.into()));
    }

    pub fn set_picks(&mut self, picks: Vec<String>) {
        self.doc.insert(
            "threads".into(),
            Value::Array(picks.into_iter().map(Value::String).collect()),
        );
    }

    /// Write it whole, atomically: a new file under a random name in `.vyre`, renamed over
    /// `project.json`; never through a link (see the module's doc).
    pub fn write(&self) -> Result<(), FileError> {
        let text = serde_json::to_string_pretty(&Value::Object(self.doc.clone()))
            .expect("a map serializes")
            + "\n";
        let home = Dir::open_following(&self.home).map_err(refused)?;
        home.make_child(".vyre", 0o755)
            .and_then(|dir| dir.write_atomic("project.json", text.as_bytes(), 0o644))
            .map_err(refused)
    }
}

/// The declaration's bytes, read without following a link at `.vyre` or `project.json`.
fn read_bytes(home: &Path) -> Result<Vec<u8>, FileError> {
    Dir::open_following(home)
        .and_then(|home| home.child(".vyre"))
        .and_then(|dir| dir.read("project.json", MAX_BYTES))
        .map_err(|e| match e {
            FsError::Io { path, source } => FileError::Read { path, source },
            e => FileError::Refused(e),
        })
}

fn refused(e: FsError) -> FileError {
    match e {
        FsError::Io { path, source } => FileError::Write { path, source },
        e => FileError::Refused(e),
    }
}

/// Whether `cwd` is one of `folders` or inside one.
pub fn within(cwd: &Path, folders: &[PathBuf]) -> bool {
    folders.iter().any(|f| cwd.starts_with(f))
}

/// `a/b/../c` → `a/c`, without touching the disk (a workspace may not exist on this machine).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_it_does_not_own_and_resolves_workspaces() {
        let dir = std::env::temp_dir().join(format!("vyre-pf-{}", std::process::id()));
        let home = dir.join("juniper");
        std::fs::create_dir_all(path_in(&home).parent().unwrap()).unwrap();
        std::fs::write(
            path_in(&home),
            r#"{"name":"Juniper Studio","org":"Rivera","workspaces":["../juniper-site"],"threads":["t1"],"people":[{"name":"Dana"}]}"#,
        )
        .unwrap();
        let mut f = ProjectFile::read(&home).unwrap();
        assert_eq!(f.name(), "Juniper Studio");
        assert_eq!(f.folders(), vec![home.clone(), dir.join("juniper-site")]);
        assert!(within(&dir.join("juniper-site/src"), &f.folders()));
        assert!(!within(&dir.join("juniper-sitemap"), &f.folders()));
        f.set_picks(vec!["t1".into(), "t2".into()]);
        f.write().unwrap();
        let again = ProjectFile::read(&home).unwrap();
        assert_eq!(again.picks(), vec!["t1", "t2"]);
        assert_eq!(again.org(), Some("Rivera"));
        assert!(
            std::fs::read_to_string(path_in(&home))
                .unwrap()
                .contains("Dana")
        );
        std::fs::write(path_in(&home), "[1]").unwrap();
        assert!(matches!(
            ProjectFile::read(&home),
            Err(FileError::Invalid { .. })
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
