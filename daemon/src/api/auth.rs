//! Who a request comes from: the listener it arrived on, the socket peer's credentials, or the
//! device credential it carries. Also the checks that keep browsers on other sites out.

use std::net::SocketAddr;

use axum::extract::FromRequestParts;
use axum::extract::connect_info::Connected;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::serve::IncomingStream;
use tokio::net::{TcpListener, UnixListener};

use super::error::ApiError;
use crate::kernel::Kernel;
use crate::tools::Caller;

/// The connection a request arrived on.
#[derive(Debug, Clone)]
pub enum Peer {
    /// The unix socket; credentials from the kernel (SO_PEERCRED / getpeereid).
    Socket { uid: Option<u32>, pid: Option<i32> },
    /// Loopback HTTP.
    Tcp(SocketAddr),
}

impl Connected<IncomingStream<'_, UnixListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, UnixListener>) -> Self {
        match stream.io().peer_cred() {
            Ok(cred) => Peer::Socket {
                uid: Some(cred.uid()),
                pid: cred.pid(),
            },
            Err(_) => Peer::Socket {
                uid: None,
                pid: None,
            },
        }
    }
}

impl Connected<IncomingStream<'_, TcpListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Self {
        Peer::Tcp(*stream.remote_addr())
    }
}

/// Resolve the verified caller of a request.
pub fn resolve(kernel: &Kernel, peer: &Peer, headers: &HeaderMap) -> Result<Caller, ApiError> {
    match peer {
        Peer::Socket { uid, pid } => {
            let own = kernel_uid();
            if *uid != Some(own) {
                return Err(ApiError::forbidden(
                    "foreign_user",
                    "only vyred's own user may use its socket",
                ));
            }
            if let Some(pid) = pid
                && let Some(thread) = kernel.session_processes().session_of(*pid)
            {
                return Ok(Caller::Session {
                    thread,
                    pid: Some(*pid),
                });
            }
            Ok(Caller::Socket {
                uid: own,
                pid: *pid,
            })
        }
        Peer::Tcp(_) => {
            check_browser_headers(headers)?;
            let Some(value) = headers.get(header::AUTHORIZATION) else {
                return Err(ApiError::unauthorized(
                    "unauthenticated",
                    "this call needs a device credential (Authorization: Bearer <token>); `vyre devices add <name>` issues one",
                ));
            };
            let token = value
                .to_str()
                .ok()
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim)
                .unwrap_or("");
            match kernel.devices().verify(token) {
                Some(device) => Ok(Caller::Device {
                    id: device.id,
                    name: device.name,
                }),
                None => Err(ApiError::unauthorized(
                    "invalid_credential",
                    "the device credential is not valid or was revoked",
                )),
            }
        }
    }
}

/// vyred's own (effective) uid: the only one allowed on the socket.
fn kernel_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Refuse requests a browser on another site could make: a Host that is not loopback (DNS
/// rebinding) and an Origin that is not this very address.
pub fn check_browser_headers(headers: &HeaderMap) -> Result<(), ApiError> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let hostname = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    if !matches!(hostname, "127.0.0.1" | "localhost" | "[::1]") {
        return Err(ApiError::forbidden(
            "bad_host",
            "vyred answers only requests addressed to 127.0.0.1 or localhost",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let same = origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|o| o == host);
        if !same {
            return Err(ApiError::forbidden(
                "cross_origin",
                "cross-origin requests are refused",
            ));
        }
    }
    Ok(())
}

/// The verified caller, as an extractor.
pub struct Authed(pub Caller);

impl FromRequestParts<Kernel> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        kernel: &Kernel,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<Peer>>()
            .map(|c| c.0.clone())
            .ok_or_else(|| {
                ApiError::forbidden("unknown_peer", "the connection could not be identified")
            })?;
        resolve(kernel, &peer, &parts.headers).map(Authed)
    }
}
