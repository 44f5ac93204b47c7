//! The HTTPS client modules talk to the outside with (the name directory, DNS providers, the
//! browsers' push services): the system's roots, plain HTTP only where a test points it, a
//! deadline and a cap on what is read back. JSON in and out ([`Http::json`]), or bytes with
//! headers ([`Http::send`]), or a large file streamed ([`Http::download`]).

use std::net::IpAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read.
const MAX_ANSWER: usize = 1024 * 1024;

#[derive(Clone)]
pub struct Http {
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

/// What a request came back with: its status and its JSON (or `null`).
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Http {
    pub fn new() -> Result<Http, String> {
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .try_with_platform_verifier()
            .map_err(|e| format!("cannot load the system's certificate roots: {e}"))?
            .https_or_http()
            .enable_http1()
            .build();
        Ok(Http {
            client: Client::builder(TokioExecutor::new()).build(connector),
        })
    }

    /// `method url` with `body` as JSON and `token` as a bearer credential.
    pub async fn json(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Answer, String> {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(url)
            .header("accept", "application/json")
            .header("user-agent", concat!("vyre/", env!("CARGO_PKG_VERSION")));
        if let Some(token) = token {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        let bytes = match body {
            Some(b) => {
                req = req.header("content-type", "application/json");
                Bytes::from(b.to_string())
            }
            None => Bytes::new(),
        };
        let req = req
            .body(Full::new(bytes))
            .map_err(|e| format!("{url}: {e}"))?;
        let res = tokio::time::timeout(TIMEOUT, self.client.request(req))
            .await
            .map_err(|_| format!("{url} did not answer within {} s", TIMEOUT.as_secs()))?
            .map_err(|e| format!("{url}: {e}"))?;
        let (status, body) = read(url, res).await?;
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).unwrap_or(Value::Null)
        };
        Ok(Answer { status, body })
    }
}

impl Http {
    /// `POST url` with `headers` and `body` as they are: the answer's status and its first
    /// bytes (for a refusal's reason).
    pub async fn send(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<(u16, Bytes), String> {
        let mut req = hyper::Request::builder()
            .method("POST")
            .uri(url)
            .header("user-agent", concat!("vyre/", env!("CARGO_PKG_VERSION")));
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("{url}: {e}"))?;
        let res = tokio::time::timeout(TIMEOUT, self.client.request(req))
            .await
            .map_err(|_| format!("{url} did not answer within {} s", TIMEOUT.as_secs()))?
            .map_err(|e| format!("{url}: {e}"))?;
        read(url, res).await
    }
}

impl Http {
    /// `GET url`, its body handed to `sink` piece by piece as it arrives, with the length the
    /// server announced: at most `max` bytes, and at most 30 s between two pieces. A status other
    /// than 200 is an error. Returns the bytes read.
    pub async fn download(
        &self,
        url: &str,
        max: u64,
        mut sink: impl FnMut(&[u8], Option<u64>) -> Result<(), String>,
    ) -> Result<u64, String> {
        let req = hyper::Request::builder()
            .method("GET")
            .uri(url)
            .header("user-agent", concat!("vyre/", env!("CARGO_PKG_VERSION")))
            .body(Full::new(Bytes::new()))
            .map_err(|e| format!("{url}: {e}"))?;
        let res = tokio::time::timeout(TIMEOUT, self.client.request(req))
            .await
            .map_err(|_| format!("{url} did not answer within {} s", TIMEOUT.as_secs()))?
            .map_err(|e| format!("{url}: {e}"))?;
        if res.status() != hyper::StatusCode::OK {
            return Err(format!("{url}: HTTP {}", res.status().as_u16()));
        }
        let total = res
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if total.is_some_and(|t| t > max) {
            return Err(format!(
                "{url} is {} bytes, more than {max}",
                total.unwrap_or(0)
            ));
        }
        let mut body = res.into_body();
        let mut read = 0u64;
        loop {
            let frame = tokio::time::timeout(TIMEOUT, body.frame())
                .await
                .map_err(|_| format!("{url} stalled for {} s", TIMEOUT.as_secs()))?;
            let Some(frame) = frame else { break };
            let frame = frame.map_err(|e| format!("{url}: {e}"))?;
            if let Ok(data) = frame.into_data() {
                read += data.len() as u64;
                if read > max {
                    return Err(format!("{url} sent more than {max} bytes"));
                }
                sink(&data, total)?;
            }
        }
        Ok(read)
    }
}

/// An answer's status and body, at most [`MAX_ANSWER`] of it.
async fn read(
    url: &str,
    res: hyper::Response<hyper::body::Incoming>,
) -> Result<(u16, Bytes), String> {
    let status = res.status().as_u16();
    let body = http_body_util::Limited::new(res.into_body(), MAX_ANSWER)
        .collect()
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .to_bytes();
    Ok((status, body))
}

impl Answer {
    /// The answer's error in the API's shape, or its status.
    pub fn error(&self) -> String {
        match self.body["error"]["message"].as_str() {
            Some(m) => format!(
                "{} ({})",
                m,
                self.body["error"]["code"].as_str().unwrap_or("")
            ),
            None => format!("HTTP {}", self.status),
        }
    }

    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// A resolver that answers every name with addresses resolved (and checked) beforehand, so the
/// connection goes where the caller looked and a second lookup cannot send it elsewhere (DNS
/// rebinding).
#[derive(Clone)]
struct Pinned(std::sync::Arc<[std::net::SocketAddr]>);

impl tower::Service<hyper_util::client::legacy::connect::dns::Name> for Pinned {
    type Response = std::vec::IntoIter<std::net::SocketAddr>;
    type Error = std::io::Error;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: hyper_util::client::legacy::connect::dns::Name) -> Self::Future {
        // An owned iterator: the answer outlives this borrow of the addresses.
        let addrs: Vec<std::net::SocketAddr> = self.0.iter().copied().collect();
        std::future::ready(Ok(addrs.into_iter()))
    }
}

/// What [`send_pinned`] came back with.
pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
    /// The body was longer than the cap and was cut there.
    pub cut: bool,
}

/// Send `req` to `addrs` only (its URI's host names the TLS server and the `Host` header, never
/// a lookup), within `timeout`, reading at most `max` bytes of the answer. No redirect is
/// followed: a 3xx comes back as it is.
pub async fn send_pinned(
    addrs: Vec<std::net::SocketAddr>,
    req: hyper::Request<Full<Bytes>>,
    timeout: Duration,
    max: usize,
) -> Result<Reply, String> {
    let mut http = HttpConnector::new_with_resolver(Pinned(addrs.into()));
    http.enforce_http(false);
    http.set_connect_timeout(Some(timeout));
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .try_with_platform_verifier()
        .map_err(|e| format!("cannot load the system's certificate roots: {e}"))?
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
    let work = async {
        let res = client.request(req).await.map_err(|e| {
            let mut why = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                why = format!("{why}: {s}");
                source = s.source();
            }
            why
        })?;
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let mut body = res.into_body();
        let mut got = Vec::new();
        let mut cut = false;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| e.to_string())?;
            if let Ok(data) = frame.into_data() {
                let room = max - got.len();
                if data.len() > room {
                    got.extend_from_slice(&data[..room]);
                    cut = true;
                    break;
                }
                got.extend_from_slice(&data);
            }
        }
        Ok::<_, String>(Reply {
            status,
            headers,
            body: Bytes::from(got),
            cut,
        })
    };
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| format!("no answer within {} s", timeout.as_secs()))?
}

/// An address on this machine or a private network (the Gate reaches one only when the person
/// listed it in `gate.local`; a pass's token goes to one over plain http): this machine,
/// private and shared networks (the private network's 100.64/10 among them), link-local (a
/// cloud's metadata service), multicast and the unspecified address.
pub fn private_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return private_ip(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}
