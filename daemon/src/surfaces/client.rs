//! A client of vyred's HTTP API, over the unix socket (the CLI) or loopback TCP (tests, tools).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("vyred is not running for {0} (start it with `vyre up`)")]
    NotRunning(String),
    #[error("cannot talk to vyred: {0}")]
    Transport(String),
    #[error("{message} ({code})")]
    Api {
        status: u16,
        code: String,
        message: String,
    },
}

impl ClientError {
    /// The API's error code, when vyred answered with an error.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Api { code, .. } => Some(code),
            _ => None,
        }
    }
    fn transport(e: impl std::fmt::Display) -> Self {
        ClientError::Transport(e.to_string())
    }
}

#[derive(Debug, Clone)]
enum Endpoint {
    Socket(PathBuf),
    Http {
        addr: SocketAddr,
        token: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct Client {
    endpoint: Endpoint,
}

/// One Server-Sent Event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseMessage {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

impl Client {
    pub fn socket(path: impl Into<PathBuf>) -> Self {
        Client {
            endpoint: Endpoint::Socket(path.into()),
        }
    }

    pub fn http(addr: SocketAddr, token: Option<String>) -> Self {
        Client {
            endpoint: Endpoint::Http { addr, token },
        }
    }

    /// Send one request; the answer's status and body.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Result<Response<Incoming>, ClientError> {
        let mut req = Request::builder().method(method).uri(path);
        let has_host = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host"));
        match &self.endpoint {
            Endpoint::Socket(_) if !has_host => req = req.header("host", "localhost"),
            Endpoint::Socket(_) => {}
            Endpoint::Http { addr, token } => {
                if !has_host {
                    req = req.header("host", addr.to_string());
                }
                if let Some(token) = token {
                    req = req.header("authorization", format!("Bearer {token}"));
                }
            }
        }
        if body.is_some()
            && !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            req = req.header("content-type", "application/json");
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(ClientError::transport)?;
        match &self.endpoint {
            Endpoint::Socket(path) => {
                let stream =
                    tokio::net::UnixStream::connect(path)
                        .await
                        .map_err(|e| match e.kind() {
                            std::io::ErrorKind::NotFound
                            | std::io::ErrorKind::ConnectionRefused => {
                                ClientError::NotRunning(home_of(path))
                            }
                            _ => ClientError::transport(e),
                        })?;
                roundtrip(stream, req).await
            }
            Endpoint::Http { addr, .. } => {
                let stream =
                    tokio::net::TcpStream::connect(addr)
                        .await
                        .map_err(|e| match e.kind() {
                            std::io::ErrorKind::ConnectionRefused => {
                                ClientError::NotRunning(addr.to_string())
                            }
                            _ => ClientError::transport(e),
                        })?;
                roundtrip(stream, req).await
            }
        }
    }

    /// A request whose answer is one JSON document: `(status, body)`.
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Result<(u16, Value), ClientError> {
        let res = self.send(method, path, body, headers).await?;
        let status = res.status().as_u16();
        let bytes = res
            .into_body()
            .collect()
            .await
            .map_err(ClientError::transport)?
            .to_bytes();
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        Ok((status, value))
    }

    /// Call a tool; its `data`, or the API's error.
    pub async fn call(&self, tool: &str, input: &Value) -> Result<Value, ClientError> {
        let body = serde_json::to_vec(input).map_err(ClientError::transport)?;
        let (status, value) = self
            .json(Method::POST, &format!("/v1/tools/{tool}"), Some(body), &[])
            .await?;
        unwrap_data(status, value)
    }

    /// `GET` a JSON route and unwrap its `data`.
    pub async fn get(&self, path: &str) -> Result<Value, ClientError> {
        let (status, value) = self.json(Method::GET, path, None, &[]).await?;
        unwrap_data(status, value)
    }

    /// Open an event stream; read it with [`EventStream::next`].
    pub async fn events(
        &self,
        query: &str,
        last_event_id: Option<&str>,
    ) -> Result<EventStream, ClientError> {
        let path = if query.is_empty() {
            "/v1/events".to_string()
        } else {
            format!("/v1/events?{query}")
        };
        self.event_stream(&path, last_event_id).await
    }

    /// Open the event stream at `path` (with its query).
    pub async fn event_stream(
        &self,
        path: &str,
        last_event_id: Option<&str>,
    ) -> Result<EventStream, ClientError> {
        let mut headers = vec![("accept", "text/event-stream")];
        if let Some(id) = last_event_id {
            headers.push(("last-event-id", id));
        }
        let res = self.send(Method::GET, path, None, &headers).await?;
        let status = res.status().as_u16();
        if status != 200 {
            let bytes = res
                .into_body()
                .collect()
                .await
                .map_err(ClientError::transport)?
                .to_bytes();
            let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Err(unwrap_data(status, value).unwrap_err());
        }
        Ok(EventStream {
            body: res.into_body(),
            buf: Vec::new(),
            pos: 0,
            scanned: 0,
        })
    }
}

fn unwrap_data(status: u16, value: Value) -> Result<Value, ClientError> {
    if (200..300).contains(&status)
        && let Some(data) = value.get("data")
    {
        return Ok(data.clone());
    }
    let code = value
        .pointer("/error/code")
        .and_then(Value::as_str)
        .unwrap_or("http_error");
    let message = value
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(String::from)
        .unwrap_or_else(|| format!("vyred answered {status}"));
    Err(ClientError::Api {
        status,
        code: code.to_string(),
        message,
    })
}

fn home_of(socket: &Path) -> String {
    socket
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| socket.display().to_string())
}

async fn roundtrip<S>(
    stream: S,
    req: Request<Full<Bytes>>,
) -> Result<Response<Incoming>, ClientError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(ClientError::transport)?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
        .send_request(req)
        .await
        .map_err(ClientError::transport)
}

/// The largest event a stream holds while it waits for the event's end (vyred's own events are
/// far smaller: a tool call's input at most a few hundred KiB).
const MAX_MESSAGE: usize = 8 << 20;

/// A Server-Sent Events body, parsed message by message.
pub struct EventStream {
    body: Incoming,
    buf: Vec<u8>,
    /// Where the unread part of `buf` starts.
    pos: usize,
    /// Where to resume looking for the end of a message.
    scanned: usize,
}

impl EventStream {
    /// The body's next bytes as they came, for a reader that scans the text itself (the events
    /// benchmark's subscribers, which must cost as little as a reader can); messages may be
    /// split across chunks. Not to be mixed with [`EventStream::next`] on one stream.
    pub async fn next_bytes(&mut self) -> Option<Result<Bytes, ClientError>> {
        loop {
            match self.body.frame().await? {
                Ok(frame) => {
                    if let Ok(data) = frame.into_data() {
                        return Some(Ok(data));
                    }
                }
                Err(e) => return Some(Err(ClientError::transport(e))),
            }
        }
    }

    /// The next message; `None` when the stream ends.
    pub async fn next(&mut self) -> Option<Result<SseMessage, ClientError>> {
        loop {
            if let Some((end, next)) = find_blank_line(&self.buf, self.scanned.max(self.pos)) {
                let msg = match std::str::from_utf8(&self.buf[self.pos..end]) {
                    Ok(text) => parse_block(text),
                    Err(_) => parse_block(&String::from_utf8_lossy(&self.buf[self.pos..end])),
                };
                self.pos = next;
                self.scanned = next;
                if let Some(msg) = msg {
                    return Some(Ok(msg));
                }
                continue;
            }
            // Keep at most the unfinished message; look again only at what arrives.
            self.scanned = self.buf.len().saturating_sub(3).max(self.pos);
            if self.pos > 0 {
                self.buf.drain(..self.pos);
                self.scanned -= self.pos;
                self.pos = 0;
            }
            if self.buf.len() > MAX_MESSAGE {
                // A peer that never ends a message must not make this side hold it all.
                return Some(Err(ClientError::Transport(format!(
                    "an event is larger than {} MiB",
                    MAX_MESSAGE >> 20
                ))));
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => return Some(Err(ClientError::transport(e))),
                None => return None,
            }
        }
    }
}

/// The first blank line at or after `from`: (end of the message, start of what follows).
fn find_blank_line(buf: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while let Some(at) = memchr::memchr(b'\n', &buf[i.min(buf.len())..]) {
        let nl = i + at;
        match buf.get(nl + 1) {
            Some(b'\n') => return Some((nl, nl + 2)),
            Some(b'\r') if buf.get(nl + 2) == Some(&b'\n') => return Some((nl, nl + 3)),
            Some(_) => i = nl + 1,
            None => return None,
        }
    }
    None
}

fn parse_block(block: &str) -> Option<SseMessage> {
    let mut msg = SseMessage {
        id: None,
        event: None,
        data: String::new(),
    };
    let mut has_data = false;
    for line in block.lines() {
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" => msg.id = Some(value.to_string()),
            "event" => msg.event = Some(value.to_string()),
            "data" => {
                if has_data {
                    msg.data.push('\n');
                }
                msg.data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    has_data.then_some(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sse_blocks() {
        let msg = parse_block("id: 7\nevent: device.added\ndata: {\"a\":1}").unwrap();
        assert_eq!(msg.id.as_deref(), Some("7"));
        assert_eq!(msg.event.as_deref(), Some("device.added"));
        assert_eq!(msg.data, "{\"a\":1}");
        assert!(parse_block(": keep-alive").is_none());
        assert_eq!(find_blank_line(b"a\n\nb", 0), Some((1, 3)));
        assert_eq!(find_blank_line(b"a\r\n\r\nb", 0), Some((2, 5)));
        assert_eq!(find_blank_line(b"a\n\nb\n\n", 3), Some((4, 6)));
        assert_eq!(find_blank_line(b"a\nb", 0), None);
    }
}
