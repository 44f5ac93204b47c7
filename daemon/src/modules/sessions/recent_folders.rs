//! The folders a person starts sessions in: `threads.folders` suggests the recent folders of
//! the sessions and projects the caller may see (the handler fences them; this module only
//! folds and ranks). Reading a typed folder is [`crate::kernel::folders`].

use std::collections::HashMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use crate::kernel::folders::shown;

/// Whether `path` is Vyre's own rather than the person's: an agent's folder under
/// `<VYRE_HOME>/agents/` (the assistant's `.../vyre/agents/juno`). Never suggested.
pub fn vyres_own(path: &Path, vyre_home: &Path) -> bool {
    path.starts_with(vyre_home.join("agents"))
}

/// A session the caller may see, as far as a suggestion needs it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub cwd: String,
    pub project: Option<String>,
    pub at: Option<i64>,
}

/// A project the caller may see: its home folder and when it was last active.
#[derive(Debug, Clone)]
pub struct ProjectHome {
    pub name: String,
    pub home: String,
    pub at: Option<i64>,
}

/// One suggested folder.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Folder {
    /// The folder, absolute: what `threads.start` takes.
    pub path: String,
    /// The same, as a person reads it (`~/src/app`).
    pub shown: String,
    /// The project it belongs to: the project whose home it is, else its sessions' project.
    pub project: Option<String>,
    /// The last activity of a session in it, or of its project (ms).
    pub last_used: Option<i64>,
    /// How many sessions ran in it.
    pub sessions: usize,
}

/// The folders of `sessions` and the homes of `projects`, each once, most recently used first,
/// those whose path (as shown or whole) or project holds every word of `query`, at most `limit`
/// of those `exists` accepts (asked only until the limit is reached).
pub fn suggest(
    sessions: impl IntoIterator<Item = Seen>,
    projects: &[ProjectHome],
    query: &str,
    home: &Path,
    limit: usize,
    exists: impl Fn(&Path) -> bool,
) -> Vec<Folder> {
    let mut by_path: HashMap<String, Folder> = HashMap::new();
    for s in sessions {
        let path = s.cwd.trim_end_matches('/').to_string();
        if path.is_empty() {
            continue;
        }
        let f = by_path.entry(path.clone()).or_insert_with(|| Folder {
            shown: shown(Path::new(&path), home),
            path,
            project: None,
            last_used: None,
            sessions: 0,
        });
        f.sessions += 1;
        f.last_used = f.last_used.max(s.at);
        if f.project.is_none() {
            f.project = s.project;
        }
    }
    for p in projects {
        let path = p.home.trim_end_matches('/').to_string();
        if path.is_empty() {
            continue;
        }
        let f = by_path.entry(path.clone()).or_insert_with(|| Folder {
            shown: shown(Path::new(&path), home),
            path,
            project: None,
            last_used: None,
            sessions: 0,
        });
        // A project's home is that project's, whatever its sessions were counted in.
        f.project = Some(p.name.clone());
        f.last_used = f.last_used.max(p.at);
    }
    let words: Vec<String> = words(query, home);
    let mut all: Vec<Folder> = by_path
        .into_values()
        .filter(|f| {
            let hay = format!(
                "{}\n{}\n{}",
                f.shown.to_lowercase(),
                f.path.to_lowercase(),
                f.project.as_deref().unwrap_or("").to_lowercase()
            );
            words.iter().all(|w| hay.contains(w.as_str()))
        })
        .collect();
    all.sort_by(|a, b| {
        b.last_used
            .cmp(&a.last_used)
            .then(b.sessions.cmp(&a.sessions))
            .then(a.path.cmp(&b.path))
    });
    all.into_iter()
        .filter(|f| exists(Path::new(&f.path)))
        .take(limit)
        .collect()
}

/// A query's words, lowercased; a word that starts from `~` is matched as shown.
fn words(query: &str, home: &Path) -> Vec<String> {
    query
        .split_whitespace()
        .map(|w| {
            let w = w.trim_end_matches('/');
            if w.starts_with('/') && !home.as_os_str().is_empty() {
                // An absolute path under the home matches what is shown for it.
                shown(Path::new(w), home)
            } else {
                w.to_string()
            }
        })
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "/home/ada";

    #[test]
    fn an_agents_own_folder_is_vyres_not_the_persons() {
        let vyre = Path::new("/home/ada/.vyre");
        assert!(vyres_own(Path::new("/home/ada/.vyre/agents/juno"), vyre));
        assert!(vyres_own(
            Path::new("/home/ada/.vyre/agents/juno/notes"),
            vyre
        ));
        assert!(!vyres_own(Path::new("/home/ada/.vyre/agents-old"), vyre));
        assert!(!vyres_own(Path::new("/home/ada/src/agents/juno"), vyre));
    }

    fn seen(cwd: &str, project: Option<&str>, at: i64) -> Seen {
        Seen {
            cwd: cwd.into(),
            project: project.map(String::from),
            at: Some(at),
        }
    }

    #[test]
    fn folders_are_suggested_once_newest_first_with_their_project() {
        let home = Path::new(HOME);
        let sessions = vec![
            seen("/home/ada/src/app", Some("app"), 10),
            seen("/home/ada/src/app/", Some("app"), 30),
            seen("/home/ada/notes", None, 20),
            seen("/srv/gone", None, 40),
        ];
        let projects = vec![
            ProjectHome {
                name: "site".into(),
                home: "/home/ada/site".into(),
                at: None,
            },
            ProjectHome {
                name: "app".into(),
                home: "/home/ada/src/app".into(),
                at: Some(25),
            },
        ];
        let all = suggest(sessions.clone(), &projects, "", home, 10, |p| {
            p != Path::new("/srv/gone")
        });
        let paths: Vec<&str> = all.iter().map(|f| f.shown.as_str()).collect();
        assert_eq!(paths, ["~/src/app", "~/notes", "~/site"]);
        assert_eq!(
            all[0],
            Folder {
                path: "/home/ada/src/app".into(),
                shown: "~/src/app".into(),
                project: Some("app".into()),
                last_used: Some(30),
                sessions: 2,
            }
        );
        assert_eq!(all[2].project.as_deref(), Some("site"));
        assert_eq!(all[2].sessions, 0);

        // Words match the path as shown, the whole path, or the project.
        let find = |q: &str| -> Vec<String> {
            suggest(sessions.clone(), &projects, q, home, 10, |_| true)
                .into_iter()
                .map(|f| f.shown)
                .collect()
        };
        assert_eq!(find("SRC"), ["~/src/app"]);
        assert_eq!(find("~/no"), ["~/notes"]);
        assert_eq!(find("/home/ada/notes"), ["~/notes"]);
        assert_eq!(find("site"), ["~/site"]);
        assert_eq!(find("srv"), ["/srv/gone"]);
        assert!(find("app nothing").is_empty(), "every word must match");
        assert_eq!(
            suggest(sessions, &projects, "", home, 1, |_| true).len(),
            1,
            "the limit holds"
        );
    }

    #[test]
    fn only_folders_up_to_the_limit_are_looked_at() {
        let home = Path::new(HOME);
        let many: Vec<Seen> = (0..100)
            .map(|i| seen(&format!("/home/ada/p{i}"), None, i))
            .collect();
        let asked = std::cell::Cell::new(0);
        let got = suggest(many, &[], "", home, 5, |_| {
            asked.set(asked.get() + 1);
            true
        });
        assert_eq!(got.len(), 5);
        assert_eq!(asked.get(), 5);
        assert_eq!(got[0].shown, "~/p99");
    }
}
