//! The one reader of Claude Code's transcripts (spec principle 1: reading transcript files is the
//! one exception to "public surfaces only", and it lives here). Best effort by design: a file
//! that cannot be read is "no history", never an error for the caller.
//!
//! - [`line`]: one line, read tolerantly (current and older shapes; broken lines counted).
//! - [`rollout`]: one line of a Codex rollout (its threads' files, ADR 0038), read as the same
//!   [`line::Line`]s, so recall keeps Codex's sessions beside Claude Code's.
//! - [`tail`]: a file read incrementally, from a kept offset to its last complete line.
//! - [`entry`]: a file read whole for a thread's timeline: prompts, text, tool calls with their
//!   inputs and results, interrupts, on the branch the session is on.
//! - [`rollout_entries`]: a Codex rollout read whole as the same entries, for the timeline of
//!   a Codex session Vyre adopted from its terminal.
//! - [`find`] and [`has_entry`]: what a resume and a rewind check before starting a process.
//! - [`cost_so_far`]: what a session had cost when its process last ended well (Claude Code's
//!   own `cost-state` entry), which a resumed or forked process counts on from.
//! - [`open`]: how every transcript is opened. The folders under a root are written by sessions
//!   (the sessions' HOME is theirs), so a root is resolved once ([`roots`]) and each file is then
//!   reached from `/` without following any link ([`crate::kernel::nofollow::Dir::walk`]): a link planted
//!   as a project folder or a transcript (to `VYRE_HOME/vyre.db`, to `/etc`) is never read.

pub mod entry;
pub mod line;
pub mod rollout;
pub mod rollout_entries;
pub mod tail;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::kernel::nofollow::{Dir, FsError, resolve};

/// The folders read for history: `transcripts` in config.json (a leading `~/` is the user's
/// HOME), else `~/.claude/projects`, `~/.claude/projects-archive` and Codex's
/// `~/.codex/sessions`, plus the projects folder and Codex's sessions folder of the HOME Vyre's
/// sessions run with, when that is another.
///
/// Each is resolved once, here: the links in a root the person named (a `~/.claude` kept in a
/// dotfiles folder) are followed now, and nothing is followed afterwards. Of the sessions' root,
/// only their HOME is resolved: its `.claude` and `projects` are the sessions' to write, so a
/// link there is refused like any other.
pub fn roots(
    configured: Option<&[String]>,
    home: &Path,
    sessions_home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = match configured {
        Some(list) => list
            .iter()
            .map(|r| match r.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => PathBuf::from(r),
            })
            .map(|r| resolve(&r))
            .collect(),
        None => vec![
            resolve(&projects_dir(home)),
            resolve(&home.join(".claude").join("projects-archive")),
        ],
    };
    if configured.is_none() {
        roots.push(resolve(&codex_sessions_dir(home)));
    }
    if let Some(s) = sessions_home {
        let s = resolve(s);
        for theirs in [projects_dir(&s), codex_sessions_dir(&s)] {
            if !roots.contains(&theirs) {
                roots.push(theirs);
            }
        }
    }
    roots
}

/// Where Codex keeps its threads' rollouts under a HOME: `~/.codex/sessions`.
pub fn codex_sessions_dir(home: &Path) -> PathBuf {
    home.join(".codex").join("sessions")
}

/// Whether `root` is a folder of Codex's rollouts (`YYYY/MM/DD/rollout-*.jsonl` below it)
/// rather than of Claude Code's transcripts (`<folder>/<session>.jsonl`).
pub fn is_codex_root(root: &Path) -> bool {
    root.ends_with(".codex/sessions")
}

/// Open a transcript for reading: from `/`, following no link on the way (its root was resolved
/// by [`roots`]), and only a regular file (never a FIFO, which would block the reader).
pub fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a transcript's path",
        ));
    };
    Dir::walk(folder)
        .and_then(|d| d.file(name))
        .map_err(|e| match e {
            FsError::Io { source, .. } => source,
            refused => std::io::Error::other(refused.to_string()),
        })
}

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
    let entries = std::fs::read_dir(projects_dir(&resolve(home))).ok()?;
    entries
        .filter_map(Result::ok)
        // A link among the folders is skipped here, and refused by `open` if one is swapped in.
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path().join(&file))
        .find(|p| open(p).is_ok())
}

/// Whether the transcript holds an entry with this `uuid` (a message a rewind can go back to).
/// Lines that are not JSON, or not entries, are skipped; an unreadable file holds nothing.
pub fn has_entry(path: &Path, uuid: &str) -> bool {
    let Ok(file) = open(path) else {
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

/// What the session had cost when the transcript's last `cost-state` entry was written, in US
/// dollars: Claude Code (2.1.328) appends one when its process ends well (a SIGTERM, the end of
/// a `-p` run; never on a SIGKILL) and, resumed or forked from this transcript, starts its
/// `total_cost_usd` from the last one. `None` when there is none (a session whose every
/// process was killed, an older CLI) or the file cannot be read.
pub fn cost_so_far(path: &Path) -> Option<f64> {
    let file = open(path).ok()?;
    let needle = b"\"cost-state\"";
    BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter(|line| memchr::memmem::find(line, needle).is_some())
        .filter_map(|line| serde_json::from_slice::<CostState>(&line).ok())
        .filter(|c| c.kind == "cost-state")
        .filter_map(|c| c.total_cost_usd.filter(|t| t.is_finite() && *t >= 0.0))
        .last()
}

#[derive(serde::Deserialize)]
struct CostState {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "totalCostUSD")]
    total_cost_usd: Option<f64>,
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
    fn the_cost_so_far_is_the_last_cost_state_written_whole() {
        let h = home("cost");
        let path = projects_dir(&h).join("-work-a").join("s1.jsonl");
        let state = |t: &str| {
            format!("{{\"type\":\"cost-state\",\"sessionId\":\"s1\",\"totalCostUSD\":{t}}}\n")
        };
        let text = [
            "{\"type\":\"user\",\"uuid\":\"u-1\"}\n".to_string(),
            state("0.5"),
            // A message quoting the entry's name is not one.
            "{\"type\":\"user\",\"text\":\"\\\"cost-state\\\" totalCostUSD 9\"}\n".to_string(),
            state("1.25"),
            state("-3"),
            "{\"type\":\"cost-state\",\"totalCostUSD\":7".to_string(),
        ]
        .concat();
        std::fs::write(&path, text).unwrap();
        assert_eq!(cost_so_far(&path), Some(1.25));
        std::fs::write(&path, "{\"type\":\"user\",\"uuid\":\"u-1\"}\n").unwrap();
        assert_eq!(cost_so_far(&path), None, "a session never ended well");
        assert_eq!(cost_so_far(&h.join("missing.jsonl")), None);
        std::fs::remove_dir_all(h).unwrap();
    }

    #[test]
    fn roots_come_from_config_or_the_defaults() {
        let home = Path::new("/h");
        assert_eq!(
            roots(None, home, None),
            vec![
                PathBuf::from("/h/.claude/projects"),
                PathBuf::from("/h/.claude/projects-archive"),
                PathBuf::from("/h/.codex/sessions"),
            ]
        );
        assert!(is_codex_root(Path::new("/h/.codex/sessions")));
        assert!(!is_codex_root(Path::new("/h/.claude/projects")));
        let configured = vec!["~/old".to_string(), "/abs".to_string()];
        assert_eq!(
            roots(Some(&configured), home, Some(Path::new("/s"))),
            vec![
                PathBuf::from("/h/old"),
                PathBuf::from("/abs"),
                PathBuf::from("/s/.claude/projects"),
                PathBuf::from("/s/.codex/sessions"),
            ]
        );
    }

    #[test]
    fn the_real_clis_transcript_reads_as_two_prompts_and_two_replies() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/transcripts/cli-2.1.328.jsonl");
        let chunk = tail::read_from(&fixture, 0).unwrap();
        assert_eq!((chunk.read, chunk.broken), (30, 0));
        let said: Vec<(line::Role, String)> = chunk
            .lines
            .iter()
            .filter_map(|l| match l {
                line::Line::Said(s) => Some((s.role, s.text.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            said,
            vec![
                (line::Role::User, "hello there zebra".to_string()),
                (line::Role::Assistant, "reply to [hello there zebra]".to_string()),
                (line::Role::User, "RUNBASH ls -la".to_string()),
                (
                    line::Role::Assistant,
                    "tool said: total 8\ndrwxr-xr-x 2 root root 4096 Nov 30 12:51 .\ndrwxr-xr-x 5 root root 4096 Nov 30 12:51 ..".to_string()
                ),
            ]
        );
    }

    #[test]
    fn no_projects_folder_is_no_history() {
        let h = std::env::temp_dir().join(format!("vyre-tr-none-{}", std::process::id()));
        assert_eq!(find(&h, "s1"), None);
    }
}
