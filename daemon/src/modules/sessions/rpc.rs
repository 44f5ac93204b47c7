//! JSON-RPC 2.0 over a child's stdio, one message per line: the transport of the Agent Client
//! Protocol and of Codex's app-server (which leaves out the `"jsonrpc"` member and reads it
//! when given). One task reads and routes (an answer to the request that awaits it; the agent's
//! own requests and notifications out on one channel, in order); one task writes, so lines
//! never interleave. Any `AsyncRead`/`AsyncWrite` will do, so tests drive it over in-memory
//! pipes.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};

use tokio::sync::{mpsc, oneshot};

use crate::modules::sessions::jsonl::{Line, Lines, write_lines};

/// What the agent says, in the order it wrote it.
#[derive(Debug)]
pub enum Incoming {
    /// A request of the agent's (`session/request_permission`, `fs/read_text_file` ...): answer
    /// it with [`Rpc::respond`] or [`Rpc::respond_error`] and its `id`.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification (`session/update`).
    Notification { method: String, params: Value },
    /// A line that is not a JSON-RPC message (logged and skipped; the session goes on).
    Garbage(String),
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RpcError {
    #[error("the agent's process closed its pipes")]
    Closed,
    #[error("{message} ({code})")]
    Refused { code: i64, message: String },
}

/// Requests awaiting an answer, by id; `None` once the agent's stdout closed, so a request made
/// after that fails at once.
type Pending = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>>>;

/// The writing half, cloneable.
#[derive(Clone)]
pub struct Rpc {
    lines: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
}

impl Rpc {
    /// Start the read and write loops: the peer, and what the agent says (ending with its
    /// stdout).
    pub fn start<R, W>(reader: R, writer: W) -> (Rpc, mpsc::UnboundedReceiver<Incoming>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (lines_tx, lines_rx) = mpsc::unbounded_channel::<String>();
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        tokio::spawn(write_lines(writer, lines_rx));
        tokio::spawn(read_loop(reader, in_tx, pending.clone()));
        let rpc = Rpc {
            lines: lines_tx,
            pending,
            next_id: Arc::new(AtomicU64::new(0)),
        };
        (rpc, in_rx)
    }

    fn send(&self, message: &Value) -> Result<(), RpcError> {
        let line = serde_json::to_string(message).expect("a Value serializes");
        self.lines.send(line).map_err(|_| RpcError::Closed)
    }

    /// Send a request and hand back the receiver of its answer, so that a caller may write it
    /// now and wait elsewhere (a prompt's answer ends its turn).
    pub fn call(
        &self,
        method: &str,
        params: Value,
    ) -> Result<oneshot::Receiver<Result<Value, RpcError>>, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        match lock(&self.pending).as_mut() {
            Some(waiting) => waiting.insert(id, tx),
            None => return Err(RpcError::Closed),
        };
        let sent =
            self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        if let Err(e) = sent {
            if let Some(waiting) = lock(&self.pending).as_mut() {
                waiting.remove(&id);
            }
            return Err(e);
        }
        Ok(rx)
    }

    /// Send a request and wait for its result.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let rx = self.call(method, params)?;
        rx.await.unwrap_or(Err(RpcError::Closed))
    }

    pub fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// Answer a request of the agent's.
    pub fn respond(&self, id: &Value, result: Value) -> Result<(), RpcError> {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }))
    }

    pub fn respond_error(&self, id: &Value, code: i64, message: &str) -> Result<(), RpcError> {
        self.send(&json!({
            "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message },
        }))
    }
}

/// Never held across an await; a panic while held leaves the map as it was.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    out: mpsc::UnboundedSender<Incoming>,
    pending: Pending,
) {
    let mut lines = Lines::new(reader);
    while let Some(line) = lines.next().await {
        let mut value = match line {
            Line::Json(value) => value,
            Line::Garbage(text) => {
                if out.send(Incoming::Garbage(text)).is_err() {
                    break;
                }
                continue;
            }
        };
        let method = value
            .get("method")
            .and_then(Value::as_str)
            .map(String::from);
        let incoming = match (method, value.get("id").cloned()) {
            (Some(method), Some(id)) => Incoming::Request {
                id,
                method,
                params: value["params"].take(),
            },
            (Some(method), None) => Incoming::Notification {
                method,
                params: value["params"].take(),
            },
            (None, Some(id)) => {
                route_answer(id, value, &pending);
                continue;
            }
            (None, None) => Incoming::Garbage(value.to_string().chars().take(200).collect()),
        };
        if out.send(incoming).is_err() {
            break;
        }
    }
    let left = lock(&pending).take();
    for (_, waiter) in left.into_iter().flatten() {
        let _ = waiter.send(Err(RpcError::Closed));
    }
}

fn route_answer(id: Value, mut value: Value, pending: &Pending) {
    let Some(id) = id.as_u64() else { return };
    let waiter = lock(pending).as_mut().and_then(|w| w.remove(&id));
    let Some(waiter) = waiter else {
        return;
    };
    let answer = match value.get("error") {
        Some(e) => Err(RpcError::Refused {
            code: e["code"].as_i64().unwrap_or(0),
            message: e["message"].as_str().unwrap_or("refused").to_string(),
        }),
        None => Ok(value["result"].take()),
    };
    let _ = waiter.send(answer);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn answers_reach_their_requests_and_the_agents_messages_keep_their_order() {
        let (host_out, agent_in) = tokio::io::duplex(1 << 16);
        let (mut agent_out, host_in) = tokio::io::duplex(1 << 16);
        let (rpc, mut incoming) = Rpc::start(host_in, host_out);
        let mut agent_in = BufReader::new(agent_in);
        let r = rpc.clone();
        let asked =
            tokio::spawn(async move { r.request("session/new", json!({ "cwd": "/w" })).await });
        let mut line = String::new();
        agent_in.read_line(&mut line).await.unwrap();
        let req: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (req["jsonrpc"].as_str(), req["method"].as_str()),
            (Some("2.0"), Some("session/new"))
        );
        let script = format!(
            "{}\nnot json\n{}\n{}\n",
            json!({"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan"}}}),
            json!({"jsonrpc":"2.0","id":req["id"],"result":{"sessionId":"s1"}}),
            json!({"jsonrpc":"2.0","id":"p7","method":"session/request_permission","params":{}}),
        );
        agent_out.write_all(script.as_bytes()).await.unwrap();
        assert_eq!(asked.await.unwrap().unwrap(), json!({ "sessionId": "s1" }));
        assert!(
            matches!(incoming.recv().await.unwrap(), Incoming::Notification { method, .. } if method == "session/update")
        );
        assert!(matches!(incoming.recv().await.unwrap(), Incoming::Garbage(g) if g == "not json"));
        match incoming.recv().await.unwrap() {
            Incoming::Request { id, method, .. } => {
                assert_eq!(
                    (id.clone(), method.as_str()),
                    (json!("p7"), "session/request_permission")
                );
                rpc.respond(&id, json!({ "outcome": { "outcome": "cancelled" } }))
                    .unwrap();
            }
            other => panic!("{other:?}"),
        }
        line.clear();
        agent_in.read_line(&mut line).await.unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (
                answer["id"].as_str(),
                answer["result"]["outcome"]["outcome"].as_str()
            ),
            (Some("p7"), Some("cancelled"))
        );
    }

    #[tokio::test]
    async fn an_error_and_a_closed_agent_fail_what_waits() {
        let (host_out, agent_in) = tokio::io::duplex(1 << 16);
        let (mut agent_out, host_in) = tokio::io::duplex(1 << 16);
        let (rpc, mut incoming) = Rpc::start(host_in, host_out);
        let mut agent_in = BufReader::new(agent_in);
        let r = rpc.clone();
        let first = tokio::spawn(async move { r.request("session/set_mode", json!({})).await });
        let mut line = String::new();
        agent_in.read_line(&mut line).await.unwrap();
        let id = serde_json::from_str::<Value>(&line).unwrap()["id"].clone();
        let answer =
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"no such mode"}});
        agent_out
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .unwrap();
        assert_eq!(
            first.await.unwrap().unwrap_err(),
            RpcError::Refused {
                code: -32602,
                message: "no such mode".into()
            }
        );
        let second = rpc.call("session/prompt", json!({})).unwrap();
        drop(agent_out);
        assert_eq!(second.await.unwrap().unwrap_err(), RpcError::Closed);
        assert!(incoming.recv().await.is_none());
        assert_eq!(
            rpc.request("session/cancel", json!({})).await.unwrap_err(),
            RpcError::Closed
        );
    }
}
