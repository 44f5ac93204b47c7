//! A JSON-lines peer over a child's stdio: the stream-json messages and the control protocol
//! that runs both ways over the same two pipes (`../shared/briefs/claude-protocol.md` §1, §6).
//!
//! One task reads lines and routes them: a `control_response` goes to the request that awaits it,
//! a `control_request` or `control_cancel_request` from the CLI and every other message go out on
//! one channel, in order. Writes go through one task too, so lines never interleave. It runs over
//! any `AsyncRead`/`AsyncWrite`, so tests drive it over in-memory pipes.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Mutex, mpsc, oneshot};

use super::jsonl::{Line, Lines, write_lines};

/// What the peer hands its owner, in the order the child wrote it.
#[derive(Debug)]
pub enum Incoming {
    /// A control request from the CLI (`can_use_tool`, `hook_callback`, `mcp_message` ...).
    Request { id: String, request: Value },
    /// The CLI withdrew one of its requests.
    Cancel { id: String },
    /// Any other message (`system`, `stream_event`, `assistant`, `user`, `result` ...).
    Message(Value),
    /// A line that is not JSON (logged and skipped; the session goes on).
    Garbage(String),
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    #[error("the session's process closed its pipes")]
    Closed,
    #[error("the CLI refused {subtype}: {message} ({code})")]
    Refused {
        subtype: String,
        code: String,
        message: String,
    },
}

/// The requests awaiting an answer, by id; `None` once the child's stdout has closed, so that a
/// request made after that fails at once instead of waiting for an answer nobody will read.
type Pending = Arc<Mutex<Option<HashMap<String, oneshot::Sender<Result<Value, WireError>>>>>>;

/// The writing half, cloneable: send messages, make control requests, answer the CLI's.
#[derive(Clone)]
pub struct Peer {
    lines: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
}

impl Peer {
    /// Start the read and write loops. Returns the peer and the stream of what the child says;
    /// the stream ends when the child's stdout closes.
    pub fn start<R, W>(reader: R, writer: W) -> (Peer, mpsc::UnboundedReceiver<Incoming>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (lines_tx, lines_rx) = mpsc::unbounded_channel::<String>();
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        tokio::spawn(write_lines(writer, lines_rx));
        tokio::spawn(read_loop(reader, in_tx, pending.clone()));
        let peer = Peer {
            lines: lines_tx,
            pending,
            next_id: Arc::new(AtomicU64::new(1)),
        };
        (peer, in_rx)
    }

    /// Write one message as a line.
    pub fn send(&self, message: &Value) -> Result<(), WireError> {
        let line = serde_json::to_string(message).expect("a Value serializes");
        self.lines.send(line).map_err(|_| WireError::Closed)
    }

    /// Make a control request and wait for its answer's `response` (or `{}` when it has none).
    pub async fn request(&self, request: Value) -> Result<Value, WireError> {
        let id = format!("vyre-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        match self.pending.lock().await.as_mut() {
            Some(waiting) => waiting.insert(id.clone(), tx),
            None => return Err(WireError::Closed),
        };
        let sent =
            self.send(&json!({ "type": "control_request", "request_id": id, "request": request }));
        if let Err(e) = sent {
            if let Some(waiting) = self.pending.lock().await.as_mut() {
                waiting.remove(&id);
            }
            return Err(e);
        }
        rx.await.unwrap_or(Err(WireError::Closed))
    }

    /// Answer a control request of the CLI.
    pub fn respond(&self, id: &str, response: Value) -> Result<(), WireError> {
        self.send(&json!({
            "type": "control_response",
            "response": { "subtype": "success", "request_id": id, "response": response },
        }))
    }

    /// Answer a control request of the CLI with an error.
    pub fn respond_error(&self, id: &str, code: &str, message: &str) -> Result<(), WireError> {
        self.send(&json!({
            "type": "control_response",
            "response": { "subtype": "error", "request_id": id, "error": message, "error_code": code },
        }))
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    out: mpsc::UnboundedSender<Incoming>,
    pending: Pending,
) {
    let mut lines = Lines::new(reader);
    while let Some(line) = lines.next().await {
        let value = match line {
            Line::Json(value) => value,
            Line::Garbage(text) => {
                if out.send(Incoming::Garbage(text)).is_err() {
                    break;
                }
                continue;
            }
        };
        let incoming = match value.get("type").and_then(Value::as_str) {
            Some("control_response") => {
                route_response(&value, &pending).await;
                continue;
            }
            Some("control_request") => Incoming::Request {
                id: value["request_id"].as_str().unwrap_or_default().to_string(),
                request: value.get("request").cloned().unwrap_or(Value::Null),
            },
            Some("control_cancel_request") => Incoming::Cancel {
                id: value["request_id"].as_str().unwrap_or_default().to_string(),
            },
            Some("keep_alive") => continue,
            _ => Incoming::Message(value),
        };
        if out.send(incoming).is_err() {
            break;
        }
    }
    // The child is gone: nobody will answer what is pending, nor what is asked from now on.
    for (_, waiter) in pending.lock().await.take().into_iter().flatten() {
        let _ = waiter.send(Err(WireError::Closed));
    }
}

async fn route_response(value: &Value, pending: &Pending) {
    let response = &value["response"];
    let Some(id) = response["request_id"].as_str() else {
        return;
    };
    let Some(waiter) = pending.lock().await.as_mut().and_then(|w| w.remove(id)) else {
        return;
    };
    let result = if response["subtype"] == "error" {
        Err(WireError::Refused {
            subtype: id.to_string(),
            code: response["error_code"]
                .as_str()
                .unwrap_or("error")
                .to_string(),
            message: response["error"].as_str().unwrap_or("").to_string(),
        })
    } else {
        Ok(response
            .get("response")
            .cloned()
            .unwrap_or_else(|| json!({})))
    };
    let _ = waiter.send(result);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// A fake CLI on the far side of two in-memory pipes.
    async fn pair() -> (
        Peer,
        mpsc::UnboundedReceiver<Incoming>,
        tokio::io::DuplexStream,
        BufReader<tokio::io::DuplexStream>,
    ) {
        let (host_out, cli_in) = tokio::io::duplex(1 << 16);
        let (cli_out, host_in) = tokio::io::duplex(1 << 16);
        let (peer, incoming) = Peer::start(host_in, host_out);
        (peer, incoming, cli_out, BufReader::new(cli_in))
    }

    #[tokio::test]
    async fn requests_get_their_own_answers_and_messages_keep_their_order() {
        let (peer, mut incoming, mut cli_out, mut cli_in) = pair().await;
        let p = peer.clone();
        let asked = tokio::spawn(async move { p.request(json!({ "subtype": "interrupt" })).await });
        let mut line = String::new();
        cli_in.read_line(&mut line).await.unwrap();
        let req: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(req["request"]["subtype"], "interrupt");
        let id = req["request_id"].as_str().unwrap();
        let script = format!(
            "{}\nnot json at all\n{}\n{}\n{}\n",
            json!({"type":"system","subtype":"init"}),
            json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":{"still_queued":[]}}}),
            json!({"type":"control_request","request_id":"c1","request":{"subtype":"can_use_tool","tool_name":"Bash"}}),
            json!({"type":"result","is_error":false}),
        );
        cli_out.write_all(script.as_bytes()).await.unwrap();
        assert_eq!(asked.await.unwrap().unwrap(), json!({ "still_queued": [] }));
        assert!(
            matches!(incoming.recv().await.unwrap(), Incoming::Message(m) if m["subtype"] == "init")
        );
        assert!(
            matches!(incoming.recv().await.unwrap(), Incoming::Garbage(g) if g == "not json at all")
        );
        match incoming.recv().await.unwrap() {
            Incoming::Request { id, request } => {
                assert_eq!(
                    (id.as_str(), request["tool_name"].as_str()),
                    ("c1", Some("Bash"))
                );
                peer.respond("c1", json!({ "behavior": "allow" })).unwrap();
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(incoming.recv().await.unwrap(), Incoming::Message(m) if m["type"] == "result")
        );
        line.clear();
        cli_in.read_line(&mut line).await.unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["response"]["request_id"], "c1");
        assert_eq!(answer["response"]["response"]["behavior"], "allow");
    }

    #[tokio::test]
    async fn an_error_answer_and_a_closed_child_fail_pending_requests() {
        let (peer, mut incoming, mut cli_out, mut cli_in) = pair().await;
        let p = peer.clone();
        let first = tokio::spawn(async move {
            p.request(json!({ "subtype": "set_permission_mode", "mode": "x" }))
                .await
        });
        let p = peer.clone();
        let mut line = String::new();
        cli_in.read_line(&mut line).await.unwrap();
        let id = serde_json::from_str::<Value>(&line).unwrap()["request_id"]
            .as_str()
            .unwrap()
            .to_string();
        let answer = json!({"type":"control_response","response":{"subtype":"error","request_id":id,"error":"must be one of","error_code":"invalid_mode"}});
        cli_out
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .unwrap();
        let err = first.await.unwrap().unwrap_err();
        assert!(
            matches!(err, WireError::Refused { ref code, .. } if code == "invalid_mode"),
            "{err:?}"
        );
        let second =
            tokio::spawn(async move { p.request(json!({ "subtype": "interrupt" })).await });
        line.clear();
        cli_in.read_line(&mut line).await.unwrap();
        drop(cli_out);
        assert_eq!(second.await.unwrap().unwrap_err(), WireError::Closed);
        assert!(
            incoming.recv().await.is_none(),
            "the stream ends with the child's stdout"
        );
    }

    /// Found by the `stream_json` fuzz target: a request made after the child's stdout closed
    /// (an interrupt that races the CLI's exit) waited forever, since nobody was left to answer
    /// or fail it, and the session's actor with it.
    #[tokio::test]
    async fn a_request_after_the_child_closed_its_stdout_fails_at_once() {
        let (peer, mut incoming, cli_out, _cli_in) = pair().await;
        drop(cli_out);
        assert!(incoming.recv().await.is_none(), "the read loop is over");
        // The child's stdin is still open (`_cli_in`), so the request is written without error.
        let asked = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            peer.request(json!({ "subtype": "interrupt" })),
        )
        .await;
        assert_eq!(asked, Ok(Err(WireError::Closed)));
    }
}
