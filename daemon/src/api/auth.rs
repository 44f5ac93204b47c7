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
    /// A session's own socket: every request on it is that session.
    Session {
        thread: String,
        uid: Option<u32>,
        pid: Option<i32>,
    },
}

impl Peer {
    /// The peer of a connection to vyred's socket, from the kernel's credentials.
    pub fn of_socket(stream: &tokio::net::UnixStream) -> Peer {
        match stream.peer_cred() {
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

impl Connected<IncomingStream<'_, UnixListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, UnixListener>) -> Self {
        Peer::of_socket(stream.io())
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
        Peer::Session { thread, uid, pid } => {
            if *uid != Some(kernel_uid()) {
                return Err(ApiError::forbidden(
                    "foreign_user",
                    "only vyred's own user may use a session's socket",
                ));
            }
            Ok(Caller::Session {
                thread: Some(thread.clone()),
                pid: *pid,
            })
        }
        Peer::Tcp(_) => {
            check_browser_headers(headers)?;
            let token = match headers.get(header::AUTHORIZATION) {
                Some(value) => value
                    .to_str()
                    .ok()
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .map(str::trim)
                    .unwrap_or("")
                    .to_string(),
                None => match cookie(headers, DEVICE_COOKIE) {
                    Some(token) => token,
                    None => {
                        return Err(ApiError::unauthorized(
                            "unauthenticated",
                            "this call needs a device: a browser signs in with the link `vyre open` prints; a program sends Authorization: Bearer <token> from `vyre devices add <name>`",
                        ));
                    }
                },
            };
            match kernel.devices().verify(&token) {
                Some(device) => Ok(Caller::Device {
                    id: device.id,
                    name: device.name,
                    kind: device.kind,
                }),
                None => Err(ApiError::unauthorized(
                    "invalid_credential",
                    "the device credential is not valid or was revoked",
                )),
            }
        }
    }
}

/// The cookie that carries a browser's device credential (HttpOnly, SameSite=Strict).
pub const DEVICE_COOKIE: &str = "vyre_device";

/// A cookie's value from the request's `Cookie` headers.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// What a browser that has not finished the onboarding may call: the onboarding's own tools
/// and what its screens show. Before an owner exists, nothing else is served over HTTP.
pub const ONBOARDING_TOOLS: &[&str] = &[
    "vault.status",
    "recall.status",
    "sessions.claude",
    "projects.catalog",
    "projects.list",
    "projects.create",
    "projects.add-threads",
    "pairing.code",
    "pairing.add",
    "pairing.list",
];

/// The events such a browser may follow.
pub const ONBOARDING_EVENTS: &[&str] = &["history.indexed", "onboarding.*", "pairing.*"];

/// True when the caller is a browser still in the onboarding.
pub fn onboarding_only(caller: &Caller) -> bool {
    matches!(caller, Caller::Device { kind, .. } if kind == crate::devices::ONBOARDING)
}

/// Whether an onboarding browser may call this tool.
pub fn onboarding_may_call(tool: &str) -> bool {
    tool.starts_with("onboarding.") || ONBOARDING_TOOLS.contains(&tool)
}

pub fn onboarding_refusal() -> ApiError {
    ApiError::forbidden(
        "onboarding_only",
        "this browser can reach only the onboarding until it is finished",
    )
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
