//! `files.search`: files and folders under the roots whose path holds every word of the query,
//! best first. The walk goes through `kernel::nofollow` handles and never follows a link (a
//! link is not listed, and a linked folder is not entered), skips the folders nobody searches
//! (`.git`, `node_modules`, `target`, ...), and stops after a bounded number of entries, saying
//! so, so a huge tree costs a bounded walk.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::roots::Roots;
use crate::kernel::nofollow::{Dir, EntryKind};

/// Folders a search never enters: version control, dependencies and build output.
const SKIPPED: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".cache",
    ".next",
    "dist",
    "build",
    ".tox",
];

/// The most entries one search looks at.
pub const MAX_SEEN: usize = 200_000;

/// A file or folder found.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Found {
    /// Its path, from `~` when under the home.
    pub path: String,
    /// `file` or `folder`.
    pub kind: String,
    /// The root it is under, as `files.roots` shows it.
    pub root: String,
}

/// What a search found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Results {
    pub found: Vec<Found>,
    /// How many entries the walk looked at.
    pub seen: usize,
    /// The walk stopped at its bound before seeing every entry.
    pub incomplete: bool,
}

/// How well `relative` (lowercase) answers the query's words: `None` when a word is missing;
/// lower is better (the name holding a word beats a folder on the way holding it).
fn rank(relative: &str, words: &[String]) -> Option<(u8, usize)> {
    let name = relative.rsplit('/').next().unwrap_or(relative);
    let mut in_name = 0u8;
    for w in words {
        if !relative.contains(w.as_str()) {
            return None;
        }
        if name.contains(w.as_str()) {
            in_name += 1;
        }
    }
    Some((u8::MAX - in_name, relative.len()))
}

/// Search `roots` for `query` (words, case folded), at most `limit` results.
pub fn search(roots: &Roots, query: &str, limit: usize) -> Results {
    let words: Vec<String> = query.split_whitespace().map(|w| w.to_lowercase()).collect();
    let mut hits: Vec<((u8, usize), Found)> = Vec::new();
    let mut seen = 0usize;
    let mut incomplete = false;
    'roots: for root in &roots.roots {
        let Ok(top) = Dir::open_following(&root.path) else {
            continue;
        };
        let root_shown = roots.shown(&root.path);
        // Depth first, with an explicit stack: (folder, its path relative to the root).
        let mut stack: Vec<(Dir, PathBuf)> = vec![(top, PathBuf::new())];
        while let Some((dir, rel)) = stack.pop() {
            let Ok(entries) = dir.entries() else { continue };
            for entry in entries {
                seen += 1;
                if seen > MAX_SEEN {
                    incomplete = true;
                    break 'roots;
                }
                let folder = match entry.kind {
                    EntryKind::File => false,
                    EntryKind::Folder => true,
                    // Links are never followed or shown; FIFOs and devices are not files.
                    EntryKind::Link | EntryKind::Other => continue,
                };
                let name = entry.name.to_string_lossy().into_owned();
                let here = rel.join(&entry.name);
                let relative = here.to_string_lossy().to_lowercase();
                if let Some(score) = rank(&relative, &words) {
                    hits.push((
                        score,
                        Found {
                            path: roots.shown(&root.path.join(&here)),
                            kind: if folder { "folder" } else { "file" }.into(),
                            root: root_shown.clone(),
                        },
                    ));
                }
                if folder
                    && !SKIPPED.contains(&name.as_str())
                    && let Ok(child) = dir.child(&entry.name)
                {
                    stack.push((child, here));
                }
            }
        }
    }
    hits.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.path.cmp(&b.1.path)));
    hits.truncate(limit);
    Results {
        found: hits.into_iter().map(|(_, f)| f).collect(),
        seen,
        incomplete,
    }
}

#[cfg(test)]
mod tests {
    use super::super::roots::tests::scratch;
    use super::*;

    #[test]
    fn every_word_is_found_names_first_and_links_never_followed() {
        let tmp = scratch("search");
        let work = tmp.join("work");
        let outside = tmp.join("outside");
        for d in ["src/parser", "docs", "node_modules/parser-lib", ".git"] {
            std::fs::create_dir_all(work.join(d)).unwrap();
        }
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(work.join("src/parser/lexer.rs"), "").unwrap();
        std::fs::write(work.join("src/parser.rs"), "").unwrap();
        std::fs::write(work.join("docs/Parser-Notes.md"), "").unwrap();
        std::fs::write(work.join("node_modules/parser-lib/index.js"), "").unwrap();
        std::fs::write(outside.join("parser-secret.txt"), "").unwrap();
        std::os::unix::fs::symlink(&outside, work.join("linked")).unwrap();
        std::os::unix::fs::symlink(
            outside.join("parser-secret.txt"),
            work.join("parser-link.txt"),
        )
        .unwrap();
        let roots = Roots::new(["~/work".to_string()], tmp.clone());

        let r = search(&roots, "parser", 50);
        let paths: Vec<&str> = r.found.iter().map(|f| f.path.as_str()).collect();
        assert!(!r.incomplete);
        assert!(paths.contains(&"~/work/src/parser.rs"), "{paths:?}");
        assert!(
            paths.contains(&"~/work/docs/Parser-Notes.md"),
            "case folded: {paths:?}"
        );
        assert!(
            !paths.iter().any(|p| p.contains("parser-lib")),
            "a skipped folder is not entered: {paths:?}"
        );
        assert!(
            !paths
                .iter()
                .any(|p| p.contains("secret") || p.contains("link")),
            "links are neither followed nor listed: {paths:?}"
        );
        assert!(!paths.iter().any(|p| p.contains("index.js")), "{paths:?}");
        // A name holding the word ranks above a file found only through its folder.
        let lexer = paths.iter().position(|p| p.ends_with("lexer.rs"));
        let parser_rs = paths.iter().position(|p| p.ends_with("parser.rs")).unwrap();
        assert!(lexer.is_none_or(|l| parser_rs < l), "{paths:?}");

        let both = search(&roots, "parser lexer", 50);
        assert_eq!(
            both.found
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>(),
            ["~/work/src/parser/lexer.rs"]
        );
        assert_eq!(search(&roots, "parser", 1).found.len(), 1);
    }
}
