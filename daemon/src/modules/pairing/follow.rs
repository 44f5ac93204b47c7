//! Box events on the Mac: for each pairing, one task follows the other Vyre's event stream
//! (one long request, no polling) and republishes what this machine's surfaces need (threads
//! and their asks) as `pairing.box_event`, marked with the pairing it came from.
//!
//! Nothing is lost or doubled: the other side's event id is the cursor, written in the same
//! transaction as the republished event, and every connection resumes from it with
//! `Last-Event-ID`. A dropped link or a restart of either side picks up exactly where the
//! last committed event left off. While the other side cannot be reached the task waits, one
//! second and doubling to thirty, and `pairing.link` says so (up, down, revoked) in one place.
//! The other side says something at least once a minute (a keep-alive); a stream silent for
//! `link.silence_s` is taken for dead (a Mac that slept, a network that changed under a
//! connection that never closed) and opened again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::params;
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{parse_address, record};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::store::StoreError;
use crate::surfaces::client::{Client, ClientError, SseMessage};

/// The other side's events this side republishes: what lists threads and their asks.
/// The same stream carries the box's calls to this machine (`calls=1`, [`super::serve`]).
pub const FOLLOWED: &str = "types=thread.started,thread.state,thread.finished,thread.stopped,thread.titled,ask.raised,ask.answered&calls=1";
/// The longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Where a pairing's link stands, as `pairing.list` and `pairing.link` say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// Following the other side's events now.
    Up,
    /// The other side cannot be reached; trying again.
    Down,
    /// The other side revoked this machine's device; not trying again.
    Revoked,
}

/// One pairing's follower: how to stop it, and where its link stands once it has tried.
type Running = (CancellationToken, Option<LinkState>);

/// The followers, one per pairing, and where each stands.
#[derive(Clone, Default)]
pub struct Followers {
    // std Mutex: held for a map lookup or insert, never across an await.
    running: Arc<Mutex<HashMap<String, Running>>>,
}

impl Followers {
    /// Start following pairing `id` (once; a second start is a no-op).
    pub fn start(&self, ctx: &Ctx, id: &str) {
        let stop = ctx.shutdown().child_token();
        {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            if running.contains_key(id) {
                return;
            }
            running.insert(id.to_string(), (stop.clone(), None));
        }
        let (ctx2, id, me) = (ctx.clone(), id.to_string(), self.clone());
        ctx.spawn(async move { me.follow(ctx2, id, stop).await });
    }

    /// Stop following pairing `id`.
    pub fn stop(&self, id: &str) {
        if let Some((stop, _)) = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
        {
            stop.cancel();
        }
    }

    /// Where pairing `id`'s link stands, once its follower has tried.
    pub fn state(&self, id: &str) -> Option<LinkState> {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .and_then(|(_, s)| *s)
    }

    /// Record a change of state, and say it once (`pairing.link`).
    async fn set(&self, ctx: &Ctx, id: &str, state: LinkState, why: Option<String>) {
        let changed = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            match running.get_mut(id) {
                Some((_, s)) if *s != Some(state) => {
                    *s = Some(state);
                    true
                }
                _ => false,
            }
        };
        if !changed {
            return;
        }
        let payload = json!({ "box": id, "state": state, "why": why });
        if let Err(e) = ctx
            .store()
            .write(move |tx| tx.emit(NewEvent::new("pairing.link", payload)).map(drop))
            .await
        {
            tracing::warn!(pairing = %id, "cannot record the link's state: {e}");
        }
    }

    async fn follow(self, ctx: Ctx, id: String, stop: CancellationToken) {
        let mut backoff = Duration::from_secs(1);
        loop {
            let outcome = tokio::select! {
                _ = stop.cancelled() => return,
                o = self.follow_once(&ctx, &id) => o,
            };
            match outcome {
                Ok(()) => {
                    backoff = Duration::from_secs(1);
                    self.set(&ctx, &id, LinkState::Down, Some("the stream ended".into()))
                        .await;
                }
                Err(Stop::Revoked) => {
                    self.set(&ctx, &id, LinkState::Revoked, None).await;
                    return;
                }
                Err(Stop::Gone) => return,
                Err(Stop::Retry(why)) => {
                    tracing::debug!(pairing = %id, "the link is down: {why}");
                    self.set(&ctx, &id, LinkState::Down, Some(why)).await;
                }
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// One connection: from the cursor to the end of the stream.
    async fn follow_once(&self, ctx: &Ctx, id: &str) -> Result<(), Stop> {
        let Some((paired, item)) = record(ctx, id).await.map_err(|e| Stop::Retry(e.message))?
        else {
            return Err(Stop::Gone);
        };
        let cursor = cursor(ctx, id)
            .await
            .map_err(|e| Stop::Retry(e.to_string()))?;
        let addr = parse_address(&paired.address).map_err(|e| Stop::Retry(e.message))?;
        let token = ctx
            .vault()
            .fetch(&item)
            .await
            .map_err(|e| Stop::Retry(format!("the credential cannot be read: {e}")))?;
        let client = Client::http(addr, Some(token.primary().expose().to_string()));
        let last = cursor.map(|c| c.to_string());
        let mut stream = client
            .events(FOLLOWED, last.as_deref())
            .await
            .map_err(|e| match &e {
                ClientError::Api { status: 401, .. } => Stop::Revoked,
                _ => Stop::Retry(e.to_string()),
            })?;
        let server = super::serve::Server::new(
            ctx,
            client,
            id,
            paired.box_name.as_deref().unwrap_or("the box"),
        );
        self.set(ctx, id, LinkState::Up, None).await;
        let silence = ctx.config().link.silence();
        loop {
            let Ok(next) = tokio::time::timeout(silence, stream.next()).await else {
                return Err(Stop::Retry(format!(
                    "no word from the box in {} s (link.silence_s)",
                    silence.as_secs_f64()
                )));
            };
            let Some(message) = next else { break };
            let message = message.map_err(|e| Stop::Retry(e.to_string()))?;
            if message.event.as_deref() == Some("link.call") {
                server.take(&message.data);
                continue;
            }
            republish(ctx, id, message)
                .await
                .map_err(|e| Stop::Retry(e.to_string()))?;
        }
        Ok(())
    }
}

enum Stop {
    /// The other side revoked this machine.
    Revoked,
    /// The pairing was removed.
    Gone,
    /// Try again later.
    Retry(String),
}

/// The last event of pairing `id` republished here (or the other side's latest when it paired);
/// `None` for a pairing made before there were cursors, which starts from the other side's now.
async fn cursor(ctx: &Ctx, id: &str) -> Result<Option<i64>, StoreError> {
    let id = id.to_string();
    ctx.store()
        .read(move |c| {
            Ok(c.query_row(
                "SELECT cursor FROM pairing_boxes WHERE id = ?1",
                [id],
                |r| r.get::<_, Option<i64>>(0),
            )?)
        })
        .await
}

/// One event of the other side, republished here with the cursor moved past it, in one
/// transaction. An event this side's store refuses (it looks like it holds a credential) is
/// republished as withheld, so the cursor moves on and nothing is hidden without a trace.
async fn republish(ctx: &Ctx, id: &str, message: SseMessage) -> Result<(), StoreError> {
    let Some(remote_id) = message.id.as_deref().and_then(|i| i.parse::<i64>().ok()) else {
        return Ok(()); // a comment or a keep-alive
    };
    let event: Value = serde_json::from_str(&message.data).unwrap_or(Value::Null);
    let kind = event["type"].as_str().unwrap_or("").to_string();
    let full = json!({
        "box": id,
        "id": remote_id,
        "type": kind,
        "at": event["at"],
        "thread": event["thread"],
        "project": event["project"],
        "payload": event["payload"],
    });
    let withheld = json!({ "box": id, "id": remote_id, "type": kind, "withheld": true });
    let id = id.to_string();
    ctx.store()
        .write(move |tx| {
            let moved = tx.conn().execute(
                "UPDATE pairing_boxes SET cursor = ?1 WHERE id = ?2 AND (cursor IS NULL OR cursor < ?1)",
                params![remote_id, id],
            )?;
            if moved == 0 {
                return Ok(()); // seen already, or the pairing is gone
            }
            match tx.emit(NewEvent::new("pairing.box_event", full)) {
                Ok(_) => {}
                Err(StoreError::Refused(_)) => {
                    tx.emit(NewEvent::new("pairing.box_event", withheld))?;
                }
                Err(e) => return Err(e),
            }
            Ok(())
        })
        .await
}
