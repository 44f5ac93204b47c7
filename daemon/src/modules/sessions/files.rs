//! `threads.files`: the paths in a session's folder a person means by `@words`, best first.
//! A bounded walk (no hidden folders, no `node_modules`, `target` or `.git`; at most
//! `MAX_ENTRIES` entries looked at), matched by the query's words in order, case-insensitively.

use std::path::Path;

/// Entries looked at, at most: a picker must answer at once even in a huge tree.
const MAX_ENTRIES: usize = 20_000;
const SKIP: &[&str] = &[
    "node_modules",
    "target",
    "dist",
    "build",
    "__pycache__",
    "vendor",
];

/// Paths relative to `root`, best first: the last word in the file's own name beats a match
/// in its folders, then shorter paths, then by name.
pub fn find(root: &Path, query: &str, limit: usize) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| c.is_whitespace() || c == '/')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut found: Vec<(u8, usize, String)> = vec![];
    let mut seen = 0usize;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                break;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if !SKIP.contains(&name.as_str()) {
                    stack.push(path);
                }
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            if let Some(rank) = rank(&rel, &name, &words) {
                found.push((rank, rel.len(), rel));
            }
        }
    }
    found.sort();
    found.into_iter().take(limit).map(|(_, _, p)| p).collect()
}

/// `None` when the words are not all in the path in order; lower is better.
fn rank(path: &str, name: &str, words: &[String]) -> Option<u8> {
    let lower = path.to_lowercase();
    let mut from = 0;
    for w in words {
        let at = lower[from..].find(w.as_str())?;
        from += at + w.len();
    }
    match words.last() {
        Some(last) if name.to_lowercase().contains(last.as_str()) => Some(0),
        Some(_) => Some(1),
        None => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_in_order_find_files_best_first_and_skip_what_nobody_means() {
        let root = std::env::temp_dir().join(format!("vyre-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for p in [
            "src/main.rs",
            "src/server/main_loop.rs",
            "docs/main.md",
            "node_modules/x/main.js",
            ".git/main",
            "README.md",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        assert_eq!(find(&root, "main", 10)[0], "src/main.rs");
        let all = find(&root, "main", 10);
        assert!(all.contains(&"docs/main.md".to_string()));
        assert!(
            !all.iter()
                .any(|p| p.contains("node_modules") || p.contains(".git"))
        );
        assert_eq!(
            find(&root, "src main", 10),
            vec!["src/main.rs", "src/server/main_loop.rs"]
        );
        assert_eq!(
            find(&root, "SERVER loop", 10),
            vec!["src/server/main_loop.rs"]
        );
        assert!(find(&root, "nothing", 10).is_empty());
        assert_eq!(find(&root, "", 2).len(), 2);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
