//! The Switchboard's side of the timeline (`sessions/timeline/`): making a thread's timeline
//! ready to read (its old events folded, its transcript's history read in when Vyre did not see
//! it), a page of it, and a tool's whole output.

use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::kernel::events::NewEvent;
use crate::kernel::transcripts::entry;
use crate::modules::sessions::timeline::{Page, import, store, tools};

impl Switchboard {
    /// Where the thread's transcript is: under the sessions' HOME, else where recall found it.
    pub(crate) async fn transcript_path(&self, thread: &str) -> Option<PathBuf> {
        if let Some(path) = self.router.transcript_path(thread) {
            return Some(path);
        }
        let sessions = self.ctx.call("recall.sessions", json!({})).await.ok()?;
        sessions
            .as_array()?
            .iter()
            .find(|s| s["thread"] == thread)?["path"]
            .as_str()
            .map(PathBuf::from)
    }

    /// A page of the thread's timeline, newest first (see `threads.timeline`).
    pub async fn timeline(&self, thread: &str, before: Option<f64>, limit: usize) -> Result<Page> {
        let known = self.timeline_ready(thread).await?;
        let t = thread.to_string();
        let page = self
            .read(move |c| Ok(store::page(c, &t, before, limit)?))
            .await?;
        if page.items.is_empty() && before.is_none() && !known {
            return Err(Error::UnknownThread(thread.into()));
        }
        Ok(page)
    }

    /// Make the thread's timeline whole: fold its events from before the timeline existed,
    /// and read in its transcript's history when Vyre did not see it. Whether the thread is
    /// known at all (a record, or a transcript).
    pub(super) async fn timeline_ready(&self, thread: &str) -> Result<bool> {
        let t = thread.to_string();
        let (marker, has_run) = self
            .read(move |c| {
                let has_run = rows::runs::exists(c, &t)?;
                Ok((store::marker(c, &t)?, has_run))
            })
            .await?;
        if marker.is_none() {
            let t = thread.to_string();
            self.change(move |tx| Ok(store::start_marker(tx.conn(), &t)?))
                .await?;
        }
        if marker.is_none_or(|m| m.backfill_below > 0) {
            loop {
                let t = thread.to_string();
                let more = self
                    .change(move |tx| Ok(store::backfill(tx.conn(), &t)?))
                    .await?;
                if !more {
                    break;
                }
            }
        }
        // A live session writes its transcript as its events say; what it holds is already here.
        let found = if self.live(thread).is_some() {
            true
        } else {
            self.import_transcript(thread, has_run).await?
        };
        Ok(has_run || found)
    }

    /// Read in what the thread's transcript holds that its timeline does not: everything for a
    /// session only recall knows, what a terminal wrote for one Vyre runs (before it was
    /// adopted, or between Vyre's runs), and the tool details its older events lack. Only when
    /// the transcript changed since it was last accounted for; `thread.imported` tells the
    /// surfaces to read the timeline again. Whether the thread has a transcript.
    pub(super) async fn import_transcript(&self, thread: &str, has_run: bool) -> Result<bool> {
        let Some(path) = self.transcript_path(thread).await else {
            return Ok(false);
        };
        let t = thread.to_string();
        let accounted = self
            .read(move |c| Ok(store::marker(c, &t)?.and_then(|m| m.transcript)))
            .await?;
        let p = path.clone();
        let size =
            tokio::task::spawn_blocking(move || crate::kernel::transcripts::open(&p)?.metadata())
                .await?
                .map(|m| m.len() as i64)
                .ok();
        let Some(size) = size else {
            return Ok(false);
        };
        if accounted == Some(size) {
            return Ok(true);
        }
        let items = tokio::task::spawn_blocking(move || {
            let cap = crate::modules::sessions::timeline::item::OUTPUT_CAP;
            // A Codex thread's history is its rollout (issue 28), which has no branches.
            if crate::kernel::transcripts::rollout::session_of(&path).is_some() {
                return crate::kernel::transcripts::rollout_entries::read_path(&path, cap)
                    .map(|entries| import::items(&entries));
            }
            entry::read_path(&path, cap)
                .map(|entries| import::items(&entry::current_branch(entries)))
        })
        .await?
        .unwrap_or_default();
        // Its first words are its title when nothing gave it one (a terminal's session).
        let first = items.iter().find_map(|i| match &i.item {
            crate::modules::sessions::timeline::Item::User(u) if u.via != "internal" => {
                Some(u.text.clone())
            }
            _ => None,
        });
        let t = thread.to_string();
        let changed = self
            .change(move |tx| {
                let have = store::have(tx.conn(), &t)?;
                let placed = import::merge(items, &have, !has_run);
                let n = store::write_placed(tx.conn(), &t, &placed)?;
                store::set_transcript(tx.conn(), &t, size)?;
                if n > 0 {
                    tx.emit(NewEvent::new("thread.imported", json!({ "items": n })).thread(t))?;
                }
                Ok(n)
            })
            .await?;
        if changed > 0 {
            tracing::info!(thread, changed, "read history in from the transcript");
            if let Some(text) = first {
                crate::modules::sessions::about::first_message(&self.ctx, thread, &text).await?;
            }
        }
        Ok(true)
    }

    /// After Vyre's session of a thread ends: its transcript, as it left it, is accounted for
    /// (what grows it from here on is someone else's, read in by the next resume or look).
    pub(super) async fn account_transcript(&self, thread: &str) {
        let Some(path) = self.router.transcript_path(thread) else {
            return;
        };
        let Ok(Ok(meta)) = tokio::task::spawn_blocking(move || {
            crate::kernel::transcripts::open(&path)?.metadata()
        })
        .await
        else {
            return;
        };
        let (t, size) = (thread.to_string(), meta.len() as i64);
        let _ = self
            .change(move |tx| Ok(rows::account_transcript(tx.conn(), &t, size)?))
            .await;
    }

    /// A fork's timeline begins as its parent's up to the message it was forked at.
    pub(super) async fn copy_timeline(&self, from: &str, to: &str, at: Option<String>) {
        if let Err(e) = self.timeline_ready(from).await {
            tracing::warn!(thread = from, error = %e, "the timeline to fork is not whole");
        }
        let (f, t) = (from.to_string(), to.to_string());
        if let Err(e) = self
            .change(move |tx| Ok(store::copy(tx.conn(), &f, &t, at.as_deref())?))
            .await
        {
            tracing::warn!(thread = to, error = %e, "the fork's timeline was not copied");
        }
    }

    /// A tool call's whole output: from its item when that holds all of it, else from the
    /// transcript (masked as every string shown is).
    pub async fn tool_output(&self, thread: &str, call: &str) -> Result<tools::Output> {
        self.timeline_ready(thread).await?;
        let (t, c) = (thread.to_string(), call.to_string());
        let item = self
            .read(move |conn| Ok(store::tool(conn, &t, &c)?))
            .await?;
        let Some(crate::modules::sessions::timeline::Item::Tool(tool)) = item else {
            return Err(Error::UnknownCall {
                thread: thread.into(),
                call: call.into(),
            });
        };
        let kept = tool.output.clone().unwrap_or_default();
        let bytes = tool.output_bytes.unwrap_or(kept.len() as u64);
        if tool.output_truncated != Some(true) {
            return Ok(tools::Output {
                call: call.into(),
                output: kept,
                bytes,
                truncated: false,
            });
        }
        let whole = match self.transcript_path(thread).await {
            Some(path) => {
                let c = call.to_string();
                tokio::task::spawn_blocking(move || {
                    entry::tool_output(&path, &c, tools::FULL_OUTPUT_CAP)
                })
                .await?
            }
            None => None,
        };
        Ok(match whole {
            Some((output, bytes)) => tools::Output {
                call: call.into(),
                output: clean(&output),
                truncated: bytes > output.len() as u64,
                bytes,
            },
            // The transcript is gone: what the item kept is all there is.
            None => tools::Output {
                call: call.into(),
                output: kept,
                bytes,
                truncated: true,
            },
        })
    }
}
