//! `GET /v1/boxes/{box}/threads/{thread}/events`: one thread of a paired box, live, word by
//! word, for this machine's app (the Mac showing a box thread in its chat view, Lumen talking
//! to the box's assistant). The stream is the box's own (its `thread.*` and `ask.*` events for
//! that thread, with the box's ids, so `Last-Event-ID` resumes it there), read through the
//! pairing (`contracts::remote`, the one place a call leaves for another Vyre) and passed on as
//! it comes. Nothing of it is stored here: the box keeps its thread.
//!
//! Only this machine's person may follow it (the socket, or a signed-in device of theirs); a
//! session here, a paired Vyre or an onboarding browser may not.

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt;
use serde::Deserialize;

use super::auth::Authed;
use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::contracts::remote::{Remote, RemoteEvent, RemoteEvents};
use crate::kernel::tools::Caller;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxEventsQuery {
    /// Resume after this event id of the box's (as `Last-Event-ID`).
    since: Option<String>,
}

pub async fn thread_events(
    State(kernel): State<Kernel>,
    Authed(caller): Authed,
    Path((peer, thread)): Path<(String, String)>,
    headers: HeaderMap,
    query: Result<Query<BoxEventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
    let person = match &caller {
        Caller::Socket { .. } => true,
        Caller::Device { .. } => !super::auth::onboarding_only(&caller),
        _ => false,
    };
    if !person {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "person_only",
            "a box's threads are followed by this machine's person, from the app or the terminal",
        ));
    }
    let since = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or(query.since);
    let remote = kernel.get::<dyn Remote>().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "no_link",
            "this Vyre links to no box (the pairing module is not running)",
        )
    })?;
    // One of the caller's streams (`limits.streams`), given back when this one ends.
    let place = kernel.streams().open(&caller).ok_or_else(|| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_streams",
            format!(
                "this caller already has {} event streams open, the limit (limits.streams); close one first",
                kernel.streams().max()
            ),
        )
    })?;
    let events = remote
        .thread_events(&peer, &thread, since.as_deref())
        .await?;
    let device = match &caller {
        Caller::Device { id, .. } => Some(id.clone()),
        _ => None,
    };
    let state = Relay {
        events,
        watch: super::sse::Watch::new(&kernel, device),
        _place: place,
    };
    let stream = futures_util::stream::unfold(state, |mut r| async move {
        let chunk = r.next_chunk().await?;
        Some((Ok::<_, Infallible>(chunk), r))
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

struct Relay {
    events: RemoteEvents,
    watch: super::sse::Watch,
    _place: crate::kernel::events::streams::Place,
}

impl Relay {
    /// The next bytes: the box's next event, or a keep-alive. `None` ends the stream: the box's
    /// stream ended or failed (the app opens it again from its last id), vyred stops, or the
    /// device following it was revoked.
    async fn next_chunk(&mut self) -> Option<Bytes> {
        let events = &mut self.events;
        self.watch
            .next(async {
                match events.next().await {
                    Some(Ok(event)) => Some(sse(&event)),
                    Some(Err(why)) => {
                        tracing::debug!(%why, "a box's thread stream ended");
                        None
                    }
                    None => None,
                }
            })
            .await
    }
}

/// The event as SSE again: a field with a line break in it is not passed on as one.
fn sse(event: &RemoteEvent) -> Bytes {
    let one_line = |s: &str| !s.contains(['\n', '\r']);
    let mut out = String::with_capacity(event.data.len() + 64);
    if let Some(id) = event.id.as_deref().filter(|i| one_line(i)) {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    if let Some(kind) = event.event.as_deref().filter(|k| one_line(k)) {
        out.push_str("event: ");
        out.push_str(kind);
        out.push('\n');
    }
    for line in event.data.lines() {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_event_goes_on_as_the_same_sse_and_a_line_break_cannot_add_a_field() {
        let e = RemoteEvent {
            id: Some("42".into()),
            event: Some("thread.text".into()),
            data: r#"{"type":"thread.text"}"#.into(),
        };
        assert_eq!(
            sse(&e),
            Bytes::from("id: 42\nevent: thread.text\ndata: {\"type\":\"thread.text\"}\n\n")
        );
        let sneaky = RemoteEvent {
            id: Some("1\nevent: x".into()),
            event: Some("a\r\nid: 9".into()),
            data: "one\nid: 7".into(),
        };
        let text = String::from_utf8(sse(&sneaky).to_vec()).unwrap();
        assert_eq!(text, "data: one\ndata: id: 7\n\n");
    }
}
