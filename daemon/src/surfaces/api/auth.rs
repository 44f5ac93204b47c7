//! Who a request comes from: the listener it arrived on, the socket peer's credentials, or the
//! device credential it carries. Also the checks that keep browsers on other sites out.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};

use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::device_tokens::{CredentialError, DeviceRef};
use crate::kernel::peer::{Judge, PeerFacts, Verdict};
use crate::kernel::tools::Caller;

/// The connection a request arrived on.
#[derive(Debug, Clone)]
pub enum Peer {
    /// The unix socket: who connected, read and pinned when vyred accepted it.
    Socket { facts: Arc<PeerFacts> },
    /// Loopback HTTP.
    Tcp(SocketAddr),
    /// A session's own socket: every request on it is that session, and only that session (or
    /// a person of vyred's own user) may use it.
    Session {
        thread: String,
        facts: Arc<PeerFacts>,
    },
    /// The private network: a connection that came through a device's WireGuard tunnel, from
    /// the address only that tunnel carries (`modules/network`). The device is this, and only
    /// this; no header or cookie can change it.
    Network {
        device: String,
        addr: SocketAddr,
        /// The names this vyred answers to on the network (its address, its name).
        hosts: Arc<[String]>,
        /// Cancelled when the device leaves the network: the connection ends at once.
        cut: tokio_util::sync::CancellationToken,
    },
}

impl Peer {
    /// The peer of a connection to vyred's socket: read and pinned now, judged per request.
    pub fn of_socket(stream: &tokio::net::UnixStream) -> Peer {
        Peer::Socket {
            facts: Arc::new(PeerFacts::of(stream)),
        }
    }

    /// What ends this connection early: its device leaving the network.
    pub fn cut(&self) -> Option<&tokio_util::sync::CancellationToken> {
        match self {
            Peer::Network { cut, .. } => Some(cut),
            _ => None,
        }
    }

    /// Whether a browser may be on the other end (loopback HTTP, or a device on the network).
    pub fn is_http(&self) -> bool {
        matches!(self, Peer::Tcp(_) | Peer::Network { .. })
    }
}

/// How a socket peer is judged against this vyred's live sessions.
fn judge(kernel: &Kernel, facts: &PeerFacts) -> Verdict {
    crate::kernel::peer::judge(
        facts,
        Judge {
            sessions: kernel.session_processes(),
            own_uid: kernel_uid(),
            sessions_uid: kernel.config().config.sessions.uid,
        },
    )
}

/// Resolve the verified caller of a request.
pub fn resolve(kernel: &Kernel, peer: &Peer, headers: &HeaderMap) -> Result<Caller, ApiError> {
    match peer {
        Peer::Socket { facts } => match judge(kernel, facts) {
            Verdict::Person { uid } => Ok(Caller::Socket {
                uid,
                pid: facts.pid,
            }),
            Verdict::Session { thread } => Ok(Caller::Session {
                thread,
                pid: facts.pid,
            }),
            Verdict::Refused { code, message } => Err(ApiError::forbidden(code, message)),
        },
        // A session's socket serves that session: its own processes, or a person of vyred's
        // user (who gets no more than the session). Another session, or nobody, is refused.
        Peer::Session { thread, facts } => match judge(kernel, facts) {
            Verdict::Person { .. } => Ok(Caller::Session {
                thread: Some(thread.clone()),
                pid: facts.pid,
            }),
            Verdict::Session { thread: Some(t) } if t == *thread => Ok(Caller::Session {
                thread: Some(t),
                pid: facts.pid,
            }),
            Verdict::Session { .. } => Err(ApiError::forbidden(
                "not_your_socket",
                "this socket belongs to another session",
            )),
            Verdict::Refused { code, message } => Err(ApiError::forbidden(code, message)),
        },
        Peer::Network { device, .. } => {
            check_browser_headers(peer, headers)?;
            check_fetch_site(headers)?;
            let Some(device) = kernel.devices().active(device) else {
                return Err(ApiError::unauthorized(
                    "invalid_credential",
                    "this device was removed from the network",
                ));
            };
            kernel.devices().touch(&device.id);
            Ok(Caller::Device {
                id: device.id,
                name: device.name,
                kind: device.kind,
            })
        }
        Peer::Tcp(_) => {
            check_browser_headers(peer, headers)?;
            let device = tcp_device(kernel, headers)?;
            // An onboarding device is good only while there is no owner: finishing revokes the
            // others, and this holds even for one a race let through.
            if device.kind == crate::kernel::device_tokens::ONBOARDING && kernel.owner().exists() {
                return Err(ApiError::unauthorized(
                    "onboarding_over",
                    "this browser's onboarding is over: sign in with the link `vyre open` prints",
                ));
            }
            if device.kind == crate::kernel::device_tokens::PAIRED {
                // A person only for a call its presence assertion vouches for (`call_tool`).
                return Ok(Caller::Linked {
                    id: device.id,
                    name: device.name,
                    present: None,
                });
            }
            Ok(Caller::Device {
                id: device.id,
                name: device.name,
                kind: device.kind,
            })
        }
    }
}

/// The device behind an HTTP request: a program's bearer token, or a browser's cookie together
/// with the key only Vyre's own pages hold (`X-Vyre-Key`). The cookie alone proves nothing: a
/// browser sends it to every port of the host (ADR 0009).
fn tcp_device(kernel: &Kernel, headers: &HeaderMap) -> Result<DeviceRef, ApiError> {
    let refused = |e: CredentialError| {
        let code = match e {
            CredentialError::Invalid => "invalid_credential",
            CredentialError::BrowserToken => "browser_credential",
            CredentialError::NetworkToken => "network_credential",
        };
        ApiError::unauthorized(code, e.to_string())
    };
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .unwrap_or("");
        return kernel.devices().verify_bearer(token).map_err(refused);
    }
    let Some(token) = cookie(headers, DEVICE_COOKIE) else {
        return Err(ApiError::unauthorized(
            "unauthenticated",
            "this call needs a device: a browser signs in with the link `vyre open` prints; a program sends Authorization: Bearer <token> from `vyre devices add <name>`",
        ));
    };
    let Some(key) = browser_key(headers) else {
        return Err(ApiError::unauthorized(
            "key_missing",
            "this browser must sign in again: its sign-in was made before Vyre tied sign-ins to its own page, or the page's storage was cleared; open the link `vyre open` prints",
        ));
    };
    kernel
        .devices()
        .verify_browser(&token, key)
        .map_err(refused)
}

/// The header Vyre's own pages send a browser's key in.
pub const KEY_HEADER: &str = "x-vyre-key";

fn browser_key(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
}

/// Whether the request carries a device credential of any kind (so a refusal is worth saying).
pub fn presents_credential(headers: &HeaderMap) -> bool {
    headers.contains_key(header::AUTHORIZATION) || cookie(headers, DEVICE_COOKIE).is_some()
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

/// The events such a browser may follow.
pub const ONBOARDING_EVENTS: &[&str] = &["history.indexed", "onboarding.*"];

/// True when the caller is a browser still in the onboarding.
pub fn onboarding_only(caller: &Caller) -> bool {
    matches!(caller, Caller::Device { kind, .. } if kind == crate::kernel::device_tokens::ONBOARDING)
}

/// An onboarding browser asking for events outside the onboarding's.
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

/// Refuse requests a browser on another site could make: a Host that is not this vyred's
/// (DNS rebinding) and an Origin that is not this very address. On loopback vyred's hosts are `127.0.0.1`, `localhost` and
/// `[::1]`; on the network, its network address and its name. Over the network this is what
/// stands between a page on another site, open in the phone's browser, and the person's
/// rights: the tunnel vouches for the phone, not for every page it shows.
pub fn check_browser_headers(peer: &Peer, headers: &HeaderMap) -> Result<(), ApiError> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let hostname = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let (ours, schemes): (bool, &[&str]) = match peer {
        Peer::Network { hosts, .. } => (
            hosts.iter().any(|h| h.eq_ignore_ascii_case(hostname)),
            &["http://", "https://"],
        ),
        _ => (
            matches!(hostname, "127.0.0.1" | "localhost" | "[::1]"),
            &["http://"],
        ),
    };
    if !ours {
        return Err(ApiError::forbidden(
            "bad_host",
            match peer {
                Peer::Network { .. } => {
                    "vyred answers on the network only requests addressed to its own address or name"
                }
                _ => "vyred answers only requests addressed to 127.0.0.1 or localhost",
            },
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let same = origin.to_str().ok().is_some_and(|o| {
            schemes.iter().any(|scheme| {
                o.strip_prefix(scheme)
                    .is_some_and(|o| o.eq_ignore_ascii_case(host))
            })
        });
        if !same {
            return Err(ApiError::forbidden(
                "cross_origin",
                "cross-origin requests are refused",
            ));
        }
    }
    Ok(())
}

/// A request that a browser says came from another site: refused where the connection alone
/// makes the caller someone (the network's tunnel), since the page that sent it is not the
/// person's. A download link (`/v1/files/<token>`) carries its own credential and does not ask.
fn check_fetch_site(headers: &HeaderMap) -> Result<(), ApiError> {
    if let Some(site) = headers.get("sec-fetch-site")
        && !matches!(site.to_str().unwrap_or(""), "same-origin" | "none")
    {
        return Err(ApiError::forbidden(
            "cross_origin",
            "requests from another site are refused",
        ));
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
