//! `GET /v1/events`: the event log as Server-Sent Events.
//!
//! Each event's SSE `id` is its row id, so a client that reconnects with `Last-Event-ID` (or
//! `?since=`) gets exactly what it missed. The stream replays from the log, then follows live;
//! a slow client never holds up emitters (it falls back to the log). It ends when vyred stops or
//! when the device it belongs to is revoked.

use std::convert::Infallible;
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
pub(super) struct Watch {
    stop: tokio_util::sync::CancellationToken,
    revoked: tokio::sync::broadcast::Receiver<String>,
    device: Option<String>,
    kernel: Kernel,
}

impl Watch {
    pub(super) fn new(kernel: &Kernel, device: Option<String>) -> Watch {
        Watch {
            stop: kernel.shutdown_token().clone(),
            revoked: kernel.devices().revocations(),
            device,
            kernel: kernel.clone(),
        }
    }

    /// What `next` gives, or a keep-alive while it is quiet; `None` when the stream ends.
    pub(super) async fn next(
        &mut self,
        next: impl std::future::Future<Output = Option<Bytes>>,
    ) -> Option<Bytes> {
        if let Some(device) = &self.device
            && !self.kernel.devices().is_active(device)
        {
            return None;
        }
        tokio::pin!(next);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return None,
                revoked = self.revoked.recv(), if self.device.is_some() => {
                    match revoked {
                        Ok(id) if Some(&id) == self.device.as_ref() => return None,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                        _ => continue,
                    }
                }
                _ = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b": keep-alive\n\n")),
                chunk = &mut next => return chunk,
            }
        }
    }
}
