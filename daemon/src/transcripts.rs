//! The one reader of Claude Code's transcripts (spec principle 1: reading transcript files is the
//! one exception to "public surfaces only", and it lives here). Best effort by design: a file
//! that cannot be read is "no history", never an error for the caller.
//!
//! Today it answers the two questions a resume and a rewind need before they start a process:
//! does this session still have a transcript, and is that message in it. The catalogue, the
//! incremental reader and recall (issue 6) grow from here.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Where Claude Code keeps transcripts under a HOME: one folder per working directory.
pub fn projects_dir(home: &Path) -> PathBuf {
    home.join(".claude").join("projects")
}

/// The transcript of session `id` under `home`, wherever its working directory's folder is.
///
/// Claude Code names the folder after the cwd in a way that has changed between releases (and
/// shortens long paths), so this looks in every folder for `<id>.jsonl` instead of rebuilding
/// the name.
pub fn find(home: &Path, id: &str) -> Option<PathBuf> {
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return None;
    }
    let file = format!("{id}.jsonl");
    let entries = std::fs::read_dir(projects_dir(home)).ok()?;
    entries
        .filter_map(Result::ok)
        .map(|e| e.path().join(&file))
        .find(|p| p.is_file())
}

/// Whether the transcript holds an entry with this `uuid` (a message a rewind can go back to).
/// Lines that are not JSON, or not entries, are skipped; an unreadable file holds nothing.
pub fn has_entry(path: &Path, uuid: &str) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let needle = format!("\"{uuid}\"");
    BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        // Cheap filter first: most lines are large and do not mention the uuid at all.
        .filter(|line| memchr::memmem::find(line, needle.as_bytes()).is_some())
        .filter_map(|line| serde_json::from_slice::<Entry>(&line).ok())
        .any(|e| e.uuid.as_deref() == Some(uuid))
}

#[derive(serde::Deserialize)]
struct Entry {
    uuid: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vyre-tr-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(projects_dir(&dir).join("-work-a")).unwrap();
        dir
    }

    #[test]
    fn finds_a_session_in_any_folder_and_its_entries() {
        let h = home("find");
        let path = projects_dir(&h).join("-work-a").join("s1.jsonl");
        std::fs::write(
            &path,
            concat!(
                "{\"type\":\"user\",\"uuid\":\"u-1\",\"parentUuid\":null}\n",
                "not json at all\n",
                "{\"type\":\"assistant\",\"uuid\":\"a-1\",\"parentUuid\":\"u-1\"}\n",
                "{\"type\":\"summary\",\"leafUuid\":\"u-9\"}\n",
                "{\"type\":\"user\",\"uuid\":\"u-2\""
            ),
        )
        .unwrap();
        assert_eq!(find(&h, "s1"), Some(path.clone()));
        assert_eq!(find(&h, "s2"), None);
        assert_eq!(find(&h, "../s1"), None, "an id is never a path");
        assert!(has_entry(&path, "u-1"));
        assert!(has_entry(&path, "a-1"));
        assert!(!has_entry(&path, "u-9"), "a mention is not an entry");
        assert!(!has_entry(&path, "u-2"), "a torn last line is skipped");
        assert!(!has_entry(&h.join("missing.jsonl"), "u-1"));
        std::fs::remove_dir_all(h).unwrap();
    }

    #[test]
    fn no_projects_folder_is_no_history() {
        let h = std::env::temp_dir().join(format!("vyre-tr-none-{}", std::process::id()));
        assert_eq!(find(&h, "s1"), None);
    }
}
