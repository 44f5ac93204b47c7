//! Adopting sessions Vyre did not start, with one writer per transcript (ADR 0030 section 10).
//!
//! A message to a session found only in the transcripts makes its record (its own folder, the
//! CLI's default model) and resumes it there. If a terminal is writing it now (its transcript
//! grew in the last 30 s, or a `claude --resume <id>` runs), the message is held and handed over
//! once the terminal lets go; a fork is offered meanwhile.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::*;

/// A transcript that grew this recently is being written by someone.
const QUIET: Duration = Duration::from_secs(30);
/// How often a held message looks again whether the terminal let go.
const RECHECK: Duration = Duration::from_secs(5);

impl Switchboard {
    /// The record of a session found in the transcripts; `None` when there is no such session.
    pub(super) async fn adopt(&self, thread: &str) -> Result<Option<StartRequest>> {
        let sessions = self.ctx.call("recall.sessions", json!({})).await?;
        let Some(found) = sessions
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["thread"] == thread)
        else {
            return Ok(None);
        };
        let cwd = found["cwd"].as_str().map(PathBuf::from).ok_or_else(|| {
            Error::NoFolder(format!(
                "session {thread} does not say which folder it ran in, so it cannot resume there"
            ))
        })?;
        if !cwd.is_dir() {
            return Err(Error::NoFolder(format!(
                "session {thread} ran in {}, which is not on this machine any more",
                cwd.display()
            )));
        }
        // A Codex thread found in its rollouts goes on in Codex; any other is Claude Code's.
        let provider = match found["provider"].as_str() {
            Some("codex") => "codex",
            _ => "claude",
        };
        let req = StartRequest {
            cwd,
            model: None,
            effort: None,
            purpose: "chat".into(),
            project: None,
            provider: provider.into(),
            agent: None,
            mode: PermissionMode::Default,
        };
        self.insert_run(thread, &req, None, true).await?;
        let (t, turns) = (thread.to_string(), found["turns"].as_i64().unwrap_or(0));
        let adopted = json!({ "cwd": req.cwd.display().to_string(), "source": "terminal" });
        self.change(move |tx| {
            rows::runs::adopted(tx.conn(), &t, turns)?;
            tell(tx, &t, "thread.adopted", adopted)
        })
        .await?;
        Ok(Some(req))
    }

    /// Whether someone other than Vyre writes this session now: a `claude` with it on its
    /// command line, or its transcript grew recently and not by Vyre's own hand. Vyre's own
    /// session of it, still going away just after it stopped (its processes carry
    /// `VYRE_THREAD`), is not someone else.
    pub(super) async fn live_elsewhere(&self, thread: &str) -> bool {
        if self.live(thread).is_some() {
            return false;
        }
        // Bound by its SessionStart hook to a Claude Code that still runs.
        if let Ok(b) = self
            .ctx
            .call("harness.binding", json!({ "session": thread }))
            .await
            && b["alive"] == true
            && !b["pid"]
                .as_i64()
                .is_some_and(|pid| vyres_own(&format!("/proc/{pid}"), thread))
        {
            return true;
        }
        let id = thread.to_string();
        if tokio::task::spawn_blocking(move || claude_process_with(&id))
            .await
            .unwrap_or(false)
        {
            return true;
        }
        let Some(written) = self.router.transcript_written(thread) else {
            return false;
        };
        let t = thread.to_string();
        let ours: i64 = self
            .read(move |c| Ok(rows::runs::ours_updated_at(c, &t)?))
            .await
            .unwrap_or(0);
        let written_ms = ms(written);
        // Vyre's own last write lands just before it marks the session stopped.
        written_ms > ours + 1000 && crate::now_ms() - written_ms < QUIET.as_millis() as i64
    }

    /// Hold a message for a session a terminal is writing, and hand it over once it lets go.
    pub(super) async fn hold(
        self: &Arc<Self>,
        thread: &str,
        text: &str,
        uuid: String,
    ) -> Result<Sent> {
        let (t, u, x) = (thread.to_string(), uuid.clone(), text.to_string());
        let held = self
            .change(move |tx| {
                let waiting = rows::inbox::any_held(tx.conn(), &t)?;
                let row = rows::inbox::insert(tx.conn(), &t, &u, &x, InboxStatus::Held, false)?;
                if !rows::claim_sent(tx.conn(), &t, &u, Via::Queued, Some(row))? {
                    rows::inbox::remove(tx.conn(), row)?;
                    return Ok(None);
                }
                let payload = json!({ "queued": row, "uuid": u, "text": clean(&x), "status": InboxStatus::Held, "reason": "live in a terminal", "fork": "threads.fork continues it as a new thread now" });
                tell(tx, &t, "thread.queued", payload)?;
                Ok(Some((row, !waiting)))
            })
            .await?;
        let Some((row, first)) = held else {
            // The same send, made meanwhile.
            let u = uuid.clone();
            return self
                .read(move |c| Ok(rows::sent(c, &u)?))
                .await?
                .ok_or(Error::NotLive("the session just ended"));
        };
        if first {
            let (me, t) = (self.clone(), thread.to_string());
            self.ctx.spawn(me.hand_over(t));
        }
        Ok(Sent {
            uuid,
            via: Via::Queued,
            queued: Some(row),
        })
    }

    /// The messages held for `thread`, taken (the terminal's Stop hook hands them over at the
    /// end of its turn, so the terminal's own session carries on with them). A retry of their
    /// sends still answers "queued".
    pub async fn take_held(&self, thread: &str) -> Result<Vec<Held>> {
        let t = thread.to_string();
        Ok(self
            .change(move |tx| {
                let held = rows::inbox::take_held(tx.conn(), &t, InboxStatus::Delivered)?;
                for h in &held {
                    let payload = json!({ "queued": h.queued, "uuid": h.uuid, "reason": "delivered", "by": "terminal" });
                    tell(tx, &t, "thread.unqueued", payload)?;
                }
                Ok(held)
            })
            .await?)
    }

    /// Wait for the terminal to let go, then send what was held, in order. Boxed: sending is
    /// what holds, so the two futures would otherwise contain each other.
    fn hand_over(
        self: Arc<Self>,
        thread: String,
    ) -> crate::kernel::contracts::provider::BoxFuture<'static, ()> {
        Box::pin(async move { self.hand_over_now(thread).await })
    }

    async fn hand_over_now(self: Arc<Self>, thread: String) {
        let stop = self.ctx.shutdown();
        while self.live_elsewhere(&thread).await {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(RECHECK) => {}
            }
        }
        // Taken by Vyre itself: their sends' "queued" answers go, so what they become now is
        // recorded anew.
        let t = thread.clone();
        let held = self
            .change(move |tx| {
                let held = rows::inbox::take_held(tx.conn(), &t, InboxStatus::Taken)?;
                for h in &held {
                    rows::forget_sent(tx.conn(), &h.uuid)?;
                    let payload = json!({ "queued": h.queued, "uuid": h.uuid, "reason": "taken" });
                    tell(tx, &t, "thread.unqueued", payload)?;
                }
                Ok(held)
            })
            .await
            .unwrap_or_default();
        for h in held {
            let message = Message {
                uuid: Some(h.uuid),
                mode: SendMode::Queue,
                ..Message::words(h.text)
            };
            if let Err(e) = self.send(&thread, message).await {
                tracing::warn!(thread, error = %e, "a held message could not be handed over");
            }
        }
    }
}

fn ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A running Claude Code with this session on its command line (`--resume <id>`, `-r <id>`,
/// `--session-id <id>`), other than Vyre's own (which the caller has ruled out).
fn claude_process_with(id: &str) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|e| {
        if vyres_own(&e.path().to_string_lossy(), id) {
            return false;
        }
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            return false;
        };
        let args: Vec<&[u8]> = raw.split(|b| *b == 0).collect();
        // `claude` itself, or a launcher running it (`node .../claude`, a shell wrapper).
        let is_claude = args
            .iter()
            .any(|a| crate::kernel::peer::is_claude(&String::from_utf8_lossy(a)));
        let flagged = args.windows(2).any(|w| {
            matches!(w[0], b"--resume" | b"-r" | b"--session-id") && w[1] == id.as_bytes()
        });
        let inline = args.iter().any(|a| {
            a.strip_prefix(b"--resume=".as_slice()) == Some(id.as_bytes())
                || a.strip_prefix(b"--session-id=".as_slice()) == Some(id.as_bytes())
        });
        is_claude && (flagged || inline)
    })
}

/// Whether the process at `/proc/<pid>` (given as that path) is of Vyre's own session of
/// `thread`: its environment carries `VYRE_THREAD=<thread>`, which Vyre sets on every session it
/// starts and which a terminal's `claude` does not have.
fn vyres_own(proc_dir: &str, thread: &str) -> bool {
    let needle = format!("VYRE_THREAD={thread}");
    std::fs::read(format!("{proc_dir}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_of_vyres_own_session_is_known_by_its_thread_tag() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("VYRE_THREAD", "t-ours")
            .spawn()
            .unwrap();
        let dir = format!("/proc/{}", child.id());
        // Until it has exec'd, the child's environment is still its parent's.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !std::fs::read(format!("{dir}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep")) {
            assert!(std::time::Instant::now() < deadline, "sleep started");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(vyres_own(&dir, "t-ours"));
        assert!(!vyres_own(&dir, "t-other"), "another thread's");
        assert!(!vyres_own(&dir, "t-our"), "the whole value, not a prefix");
        let me = format!("/proc/{}", std::process::id());
        assert!(!vyres_own(&me, "t-ours"), "untagged");
        let _ = child.kill();
        let _ = child.wait();
        assert!(!vyres_own(&dir, "t-ours"), "gone");
    }
}
