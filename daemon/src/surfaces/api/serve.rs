//! Serving the router on a listener (the socket, loopback HTTP, each session's socket), with the
//! bounds every listener has (issue 17, bounded work per request):
//!
//! - **A header timeout** (`limits.header_timeout_s`, default 10 s): a connection that has not
//!   sent a whole request head in that time is closed. hyper starts the same clock again when a
//!   kept-alive connection goes idle, so it is also the idle timeout between requests. A request
//!   being answered (a tool call, an event stream) is not cut by it.
//! - **A cap on open connections** (`limits.connections` per listener, default 256): one more is
//!   answered at once with `503 too_many_connections` in the API's error shape and closed, and
//!   never reaches the router; the others are served as usual. Refusing is bounded too: at most
//!   [`REFUSING`] refusals are written at a time, each within [`REFUSAL_TIME`], and past that a
//!   connection is simply closed.
//! - **A graceful stop**: when `stop` fires the listener stops accepting, idle connections close,
//!   and a request in flight gets its answer (tool calls end with `stopping` then, see
//!   [`crate::kernel::tools`]); `serve` returns once every connection is closed.
//!
//! `axum::serve` offers none of the first two, so the accept loop is this one; each connection
//! is hyper's HTTP/1 server with the router as its service and the peer ([`Peer`]) as the
//! request's `ConnectInfo`, as `axum::serve` would give it.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::serve::Listener;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::Peer;
use crate::kernel::config::LimitsConfig;

/// Refusals being written at once, at most: past them, a connection over the cap is just closed.
pub const REFUSING: usize = 16;
/// How long a refusal may take to write and to read what the client sent before it closes.
pub const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// The bounds of one listener.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub connections: usize,
}

impl Limits {
    pub fn of(config: &LimitsConfig) -> Limits {
        Limits {
            header_timeout: config.header_timeout(),
            connections: config.connections(),
        }
    }
}

/// A listener vyred serves, and who is at the other end of a connection it accepted.
pub trait Serves: Listener {
    fn peer(io: &Self::Io, addr: &Self::Addr) -> Peer;
}

impl Serves for UnixListener {
    fn peer(io: &Self::Io, _: &Self::Addr) -> Peer {
        Peer::of_socket(io)
    }
}

impl Serves for TcpListener {
    fn peer(_: &Self::Io, addr: &Self::Addr) -> Peer {
        Peer::Tcp(*addr)
    }
}

/// Serve `app` on `listener` until `stop`, within `limits`; returns once every connection closed.
pub async fn serve<L: Serves>(
    mut listener: L,
    app: Router,
    limits: Limits,
    stop: CancellationToken,
) {
    let open = Arc::new(Semaphore::new(limits.connections));
    let refusing = Arc::new(Semaphore::new(REFUSING));
    let connections = TaskTracker::new();
    loop {
        let (io, addr) = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        match open.clone().try_acquire_owned() {
            Ok(permit) => {
                let peer = L::peer(&io, &addr);
                let conn = connection(io, peer, app.clone(), limits, stop.clone(), permit);
                connections.spawn(conn);
            }
            Err(_) => {
                tracing::debug!(
                    limit = limits.connections,
                    "a connection over the limit was refused"
                );
                if let Ok(permit) = refusing.clone().try_acquire_owned() {
                    connections.spawn(refuse(io, limits.connections, permit));
                }
            }
        }
    }
    connections.close();
    connections.wait().await;
}

/// One connection, served until it closes (or, once `stop` fires, until its request in flight
/// is answered). Its permit is given back when it ends.
async fn connection<I>(
    io: I,
    peer: Peer,
    app: Router,
    limits: Limits,
    stop: CancellationToken,
    _open: OwnedSemaphorePermit,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // A device that leaves the network loses its connections at once, mid-answer or not.
    let cut = peer.cut().cloned().unwrap_or_default();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer.clone()));
        app.clone().oneshot(req)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let ended = tokio::select! {
        ended = conn.as_mut() => ended,
        () = cut.cancelled() => {
            tracing::debug!("a connection was cut: its device left the network");
            return;
        }
        () = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = ended {
        tracing::debug!("a connection ended: {e}");
    }
}

/// Answer a connection over the cap with `503 too_many_connections` and close it, reading what
/// the client sent meanwhile so the close does not reset the answer before it is read.
async fn refuse<I>(mut io: I, limit: usize, _refusing: OwnedSemaphorePermit)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let body = serde_json::json!({ "error": {
        "code": "too_many_connections",
        "message": format!("vyred has {limit} connections open on this listener, its limit (limits.connections); try again when one closes"),
    }})
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        io.write_all(answer.as_bytes()).await?;
        io.shutdown().await?;
        let mut sink = [0u8; 4096];
        while io.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}
