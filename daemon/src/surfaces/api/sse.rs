//! `GET /v1/events`: the event log as Server-Sent Events.
//!
//! Each event's SSE `id` is its row id, so a client that reconnects with `Last-Event-ID` (or
//! `?since=`) gets exactly what it missed. The stream replays from the log, then follows live;
//! a slow client never holds up emitters (it falls back to the log). It ends when vyred stops or
//! when the device it belongs to is revoked.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use serde::Deserialize;

use super::auth::Authed;
use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::events::{Filter, Follower};
use crate::kernel::tools::Caller;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    since: Option<String>,
    types: Option<String>,
    thread: Option<String>,
    /// `false` ends the stream once the log is replayed.
    follow: Option<String>,
    /// `1`: a paired Vyre takes this machine's calls to it down this stream too, as
    /// `link.call` messages without an id (`crate::kernel::link_calls`).
    calls: Option<String>,
}

/// Comments keep idle connections open through proxies; once a minute keeps idle cheap.
const KEEP_ALIVE: Duration = Duration::from_secs(60);

pub async fn events(
    State(kernel): State<Kernel>,
    Authed(caller): Authed,
    headers: HeaderMap,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
    let parse_id = |what: &str, v: &str| {
        v.trim()
            .parse::<i64>()
            .ok()
            .filter(|id| *id >= 0)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_query",
                    format!("{what} must be an event id (a whole number of 0 or more), not {v:?}"),
                )
            })
    };
    let last_event_id = headers
        .get("last-event-id")
        .map(|v| parse_id("Last-Event-ID", v.to_str().unwrap_or("?")))
        .transpose()?;
    let since = match (last_event_id, query.since.as_deref()) {
        (Some(id), _) => id,
        (None, Some(s)) => parse_id("since", s)?,
        (None, None) => kernel.bus().latest_id(),
    };
    let types: Vec<String> = query
        .types
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from)
        .collect();
    for t in &types {
        let bare = t.strip_suffix(".*").unwrap_or(t);
        if !crate::kernel::events::valid_type(t) && !crate::kernel::module::valid_module_name(bare)
        {
            return Err(ApiError::bad_request(
                "invalid_query",
                format!("types: {t:?} is not an event type or a prefix such as thread.*"),
            ));
        }
    }
    let types = if super::auth::onboarding_only(&caller) {
        // A browser in the onboarding follows its progress and nothing else.
        let allowed = |t: &String| {
            super::auth::ONBOARDING_EVENTS.contains(&t.as_str()) || t.starts_with("onboarding.")
        };
        if types.iter().any(|t| !allowed(t)) {
            return Err(super::auth::onboarding_refusal());
        }
        if types.is_empty() {
            super::auth::ONBOARDING_EVENTS
                .iter()
                .map(|t| t.to_string())
                .collect()
        } else {
            types
        }
    } else {
        types
    };
    // At most `limits.streams` open per caller; the place is given back when the stream ends.
    let place = kernel.streams().open(&caller).ok_or_else(|| {
        ApiError::new(
            axum::http::StatusCode::TOO_MANY_REQUESTS,
            "too_many_streams",
            format!(
                "this caller already has {} event streams open, the limit (limits.streams); close one first",
                kernel.streams().max()
            ),
        )
    })?;
    let follow = !matches!(query.follow.as_deref(), Some("false" | "0" | "no"));
    let line = match (query.calls.as_deref(), &caller) {
        (None | Some("0" | "false"), _) => None,
        (Some("1" | "true"), Caller::Linked { id, .. }) if follow => {
            Some(kernel.link_calls().attach(id))
        }
        (Some("1" | "true"), Caller::Linked { .. }) => {
            return Err(ApiError::bad_request(
                "invalid_query",
                "calls=1 needs a stream that follows (not follow=false)",
            ));
        }
        (Some("1" | "true"), _) => {
            return Err(ApiError::forbidden(
                "not_paired_vyre",
                "only a paired Vyre takes calls down its event stream",
            ));
        }
        (Some(other), _) => {
            return Err(ApiError::bad_request(
                "invalid_query",
                format!("calls must be 1 or 0, not {other:?}"),
            ));
        }
    };
    // A session follows only the threads it owns, replay and live alike; its filters narrow
    // that, never widen it.
    let fence = match &caller {
        Caller::Session { .. } => Some(crate::kernel::events::Fenced(
            kernel
                .registry()
                .scope(&caller, crate::kernel::tools::Reach::Own)
                .await?
                .owner_test(),
        )),
        _ => None,
    };
    let filter = Filter {
        types,
        thread: query.thread,
        fence,
    };
    let device = match &caller {
        Caller::Device { id, .. } | Caller::Linked { id, .. } => Some(id.clone()),
        _ => None,
    };

    let mut follower = Follower::new(kernel.store().clone(), kernel.bus(), since, filter);
    if !follow {
        follower = follower.until_now(kernel.bus());
    }
    let state = StreamState {
        follower,
        line,
        watch: Watch::new(&kernel, device),
        _place: place,
    };
    // Every event's SSE text is made once and shared; what is ready at once goes out in one
    // write, so a hundred streams cost a hundred writes per batch, not per event.
    let stream = futures_util::stream::unfold(state, |mut s| async move {
        let chunk = s.next_chunk().await?;
        Some((Ok::<_, Infallible>(chunk), s))
    });
    Ok((
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

/// Events sent in one write at most.
const BATCH: usize = 256;

struct StreamState {
    follower: Follower,
    /// The calls this machine makes to the paired Vyre reading the stream, when it asked.
    line: Option<crate::kernel::link_calls::Line>,
    watch: Watch,
    /// This stream's place among its caller's (`limits.streams`), given back when it ends.
    _place: crate::kernel::events::streams::Place,
}

impl StreamState {
    /// The next bytes to send: a batch of events, or a keep-alive comment after a quiet minute.
    /// `None` ends the stream.
    async fn next_chunk(&mut self) -> Option<Bytes> {
        let (follower, line) = (&mut self.follower, &mut self.line);
        self.watch
            .next(async {
                let batch = async {
                    match line {
                        // Both are cancel-safe: what one of them had ready is not lost.
                        Some(line) => tokio::select! {
                            call = line.next() => Err(call),
                            batch = follower.next_batch(BATCH) => Ok(batch),
                        },
                        None => Ok(follower.next_batch(BATCH).await),
                    }
                };
                let batch = match batch.await {
                    Ok(batch) => batch,
                    Err(call) => return call.map(|c| call_message(&c)),
                };
                match batch {
                    Some(Ok(items)) if items.len() == 1 => Some(items[0].sse().clone()),
                    Some(Ok(items)) => {
                        let mut out =
                            BytesMut::with_capacity(items.iter().map(|i| i.sse().len()).sum());
                        for item in &items {
                            out.extend_from_slice(item.sse());
                        }
                        Some(out.freeze())
                    }
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "event stream ends: cannot read the log");
                        None
                    }
                    None => None,
                }
            })
            .await
    }
}

/// A call as an SSE message: no id, so it moves no cursor and is never replayed.
fn call_message(call: &crate::kernel::link_calls::LinkCall) -> Bytes {
    let data = serde_json::to_string(call).unwrap_or_else(|_| "{}".into());
    Bytes::from(format!("event: link.call\ndata: {data}\n\n"))
}

/// What ends any event stream this surface serves, and keeps a quiet one open: vyred stopping,
/// the device it belongs to revoked, a keep-alive comment after a quiet minute.
///
/// Made once per stream and kept: its waits stay registered between chunks, and its one timer
/// moves only when it fires, so a busy stream pays nothing per chunk for them.
pub(super) struct Watch {
    /// Ready when the stream must end.
    ended: Pin<Box<dyn Future<Output = ()> + Send>>,
    keep_alive: Pin<Box<tokio::time::Sleep>>,
    /// How long a stream stays quiet before a keep-alive.
    quiet: Duration,
    /// When the stream last sent anything.
    sent: tokio::time::Instant,
}

impl Watch {
    pub(super) fn new(kernel: &Kernel, device: Option<String>) -> Watch {
        Watch::quiet_for(kernel, device, KEEP_ALIVE)
    }

    fn quiet_for(kernel: &Kernel, device: Option<String>, quiet: Duration) -> Watch {
        let stop = kernel.shutdown_token().clone().cancelled_owned();
        let ended: Pin<Box<dyn Future<Output = ()> + Send>> = match device {
            None => Box::pin(stop),
            Some(device) => {
                // Listening before looking, so a revocation between the two is not missed.
                let revoked = kernel.devices().revocations();
                let devices = kernel.devices().clone();
                Box::pin(async move {
                    tokio::select! {
                        _ = stop => {}
                        _ = revocation(revoked, devices, device) => {}
                    }
                })
            }
        };
        let sent = tokio::time::Instant::now();
        Watch {
            ended,
            keep_alive: Box::pin(tokio::time::sleep_until(sent + quiet)),
            quiet,
            sent,
        }
    }

    /// What `next` gives, or a keep-alive while it is quiet; `None` when the stream ends.
    pub(super) async fn next(
        &mut self,
        next: impl std::future::Future<Output = Option<Bytes>>,
    ) -> Option<Bytes> {
        tokio::pin!(next);
        loop {
            tokio::select! {
                biased;
                _ = self.ended.as_mut() => return None,
                chunk = &mut next => {
                    self.sent = tokio::time::Instant::now();
                    return chunk;
                }
                _ = self.keep_alive.as_mut() => {
                    let now = tokio::time::Instant::now();
                    let due = self.sent + self.quiet;
                    if now < due {
                        self.keep_alive.as_mut().reset(due);
                        continue;
                    }
                    self.sent = now;
                    self.keep_alive.as_mut().reset(now + self.quiet);
                    return Some(Bytes::from_static(b": keep-alive\n\n"));
                }
            }
        }
    }
}

/// Ends when `device` is revoked, or is found no longer active (before the wait began, or
/// while this listener fell behind the revocations).
async fn revocation(
    mut revoked: tokio::sync::broadcast::Receiver<String>,
    devices: crate::kernel::device_tokens::Devices,
    device: String,
) {
    use tokio::sync::broadcast::error::RecvError;
    if !devices.is_active(&device) {
        return;
    }
    loop {
        match revoked.recv().await {
            Ok(id) if id == device => return,
            Err(RecvError::Closed) => return,
            Err(RecvError::Lagged(_)) if !devices.is_active(&device) => return,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::config::{Config, LoadedConfig, Role};
    use crate::kernel::paths::VyreHome;
    use tokio::time::Instant;

    async fn kernel(name: &str) -> (Kernel, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("vyre-sse-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let config = LoadedConfig {
            config: Config::default(),
            file: None,
            warnings: vec![],
        };
        let kernel = Kernel::open(VyreHome::at(&dir), config, Role::Box)
            .await
            .unwrap();
        (kernel, dir)
    }

    fn chunk() -> std::future::Ready<Option<Bytes>> {
        std::future::ready(Some(Bytes::from_static(b"id: 1\ndata: {}\n\n")))
    }

    #[tokio::test]
    async fn a_quiet_stream_gets_a_keep_alive_once_it_has_been_quiet_long_enough() {
        let (kernel, dir) = kernel("keepalive").await;
        let quiet = Duration::from_millis(300);
        let mut watch = Watch::quiet_for(&kernel, None, quiet);
        let start = Instant::now();
        assert_eq!(
            watch.next(chunk()).await.as_deref(),
            Some(&b"id: 1\ndata: {}\n\n"[..])
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        // Something sent at 200 ms moves the keep-alive to 500 ms, past the first timer's 300.
        assert!(watch.next(chunk()).await.is_some());
        let sent = start.elapsed();
        let pending = || std::future::pending::<Option<Bytes>>();
        assert_eq!(
            watch.next(pending()).await.as_deref(),
            Some(&b": keep-alive\n\n"[..])
        );
        let at = start.elapsed();
        assert!(at >= sent + quiet && at < Duration::from_secs(5), "{at:?}");
        // And the next one as long after that.
        assert!(watch.next(pending()).await.is_some());
        let again = start.elapsed();
        assert!(
            again >= at + quiet && again < Duration::from_secs(10),
            "{again:?}"
        );
        drop(kernel);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_revoked_device_or_a_stopping_vyred_ends_the_stream() {
        let (kernel, dir) = kernel("ends").await;
        let (phone, _) = kernel.devices().add("phone", "cli").await.unwrap();
        let (laptop, _) = kernel.devices().add("laptop", "cli").await.unwrap();

        // A device's stream ends when that device is revoked, and not when another is.
        let mut watch = Watch::new(&kernel, Some(phone.id.clone()));
        let waiting =
            tokio::spawn(async move { watch.next(std::future::pending::<Option<Bytes>>()).await });
        kernel.devices().revoke(&laptop.id).await.unwrap();
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        kernel.devices().revoke(&phone.id).await.unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the revoked device's stream ends")
            .unwrap();
        assert!(ended.is_none());

        // A device revoked before its stream was opened gets nothing, even with events ready.
        let mut watch = Watch::new(&kernel, Some(phone.id.clone()));
        assert!(watch.next(chunk()).await.is_none());

        // vyred stopping ends every stream.
        let mut watch = Watch::new(&kernel, None);
        assert!(watch.next(chunk()).await.is_some());
        kernel.shutdown_token().cancel();
        assert!(watch.next(chunk()).await.is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}
