//! Which of an agent's own sessions a Vyre thread is, for agents that name their sessions
//! themselves (an ACP agent, Codex): `<dir>/<thread>`, a small JSON file in `VYRE_HOME`, which
//! no session can reach, so that a resume goes on with the same one.

use std::path::{Path, PathBuf};

use crate::kernel::contracts::provider::ProviderError;

/// The agent's session for one thread.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Kept {
    pub session: String,
    /// The agent answered a prompt in it (before that, it may have kept nothing to resume).
    pub answered: bool,
}

impl Kept {
    /// Write it whole (a temporary file renamed over the old one).
    pub fn write(&self, file: &Path) -> std::io::Result<()> {
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_vec(self).expect("serializes"))?;
        std::fs::rename(&tmp, file)
    }

    /// Thread `thread`'s, in `dir`, if one was kept.
    pub fn of(dir: &Path, thread: &str) -> Option<Kept> {
        let text = std::fs::read(file(dir, thread)?).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Keep it as thread `thread`'s in `dir`: the file it is in.
    pub fn keep(&self, dir: &Path, thread: &str) -> Result<PathBuf, ProviderError> {
        let file = file(dir, thread)
            .ok_or_else(|| ProviderError::Start(format!("{thread:?} is not a thread id")))?;
        std::fs::create_dir_all(dir)
            .and_then(|_| self.write(&file))
            .map_err(|e| {
                ProviderError::Start(format!("cannot keep the agent's session id: {e}"))
            })?;
        Ok(file)
    }
}

/// The file of thread `thread` in `dir`; none for a name that is not a thread id (no path can
/// be made of one).
fn file(dir: &Path, thread: &str) -> Option<PathBuf> {
    let safe = !thread.is_empty()
        && thread.len() <= 128
        && thread
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    safe.then(|| dir.join(thread))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_keeps_its_agent_session_and_a_path_is_not_a_thread() {
        let dir = std::env::temp_dir().join(format!("vyre-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let kept = Kept {
            session: "s-1".into(),
            answered: false,
        };
        let at = kept.keep(&dir, "t-1").unwrap();
        assert_eq!(at, dir.join("t-1"));
        assert_eq!(Kept::of(&dir, "t-1").unwrap().session, "s-1");
        assert!(Kept::of(&dir, "t-2").is_none());
        assert!(kept.keep(&dir, "../t-1").is_err());
        assert!(Kept::of(&dir, "../t-1").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
