//! Calls from this Vyre to a paired Vyre it cannot dial: the Mac, behind a home router and
//! asleep half the day, has no address the box could reach. The Mac already keeps one event
//! stream open to the box (`pairing`'s follower); it opens it with `calls=1`, and a call the
//! box makes to it rides down that same stream as a `link.call` message (no event id: it is
//! not part of the log and is never replayed). The Mac runs the tool if its own `link.allow`
//! lets the box call it, and posts the answer back (`POST /v1/link/calls/{id}`). ADR 0022.
//!
//! A call waits for its answer at most [`ANSWER_WAIT`]; one to a Vyre whose stream is not open
//! fails at once (`peer_offline`), and one in flight when that stream ends fails then
//! (`link_dropped`). Only the device the call went to can answer it, once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::kernel::tools::{ErrorKind, ToolError};

/// How long a call waits for the other Vyre's answer.
pub const ANSWER_WAIT: Duration = Duration::from_secs(30);
/// Calls in flight to one device at most; more are refused as busy.
pub const IN_FLIGHT: usize = 32;

/// One call, as it goes down the stream.
#[derive(Debug, Clone, Serialize)]
pub struct LinkCall {
    pub id: String,
    pub tool: String,
    pub input: Value,
}

type Answer = Result<Value, ToolError>;

struct Pending {
    device: String,
    /// The line it went down.
    line: u64,
    answer: oneshot::Sender<Answer>,
}

#[derive(Default)]
struct Table {
    /// The open line of each device: which stream holds it, and where calls go.
    lines: HashMap<String, (u64, mpsc::Sender<LinkCall>)>,
    pending: HashMap<String, Pending>,
    next_line: u64,
}

/// The lines paired Vyres hold open here, and the calls waiting on them. Cheap to clone.
#[derive(Clone, Default)]
pub struct LinkCalls {
    // std Mutex: held for a map lookup or insert, never across an await.
    table: Arc<Mutex<Table>>,
}

/// A device's open line, as its event stream holds it: calls come out of it, and it is given
/// back (its calls in flight failing) when the stream ends. A newer stream of the same device
/// takes the line over.
pub struct Line {
    calls: mpsc::Receiver<LinkCall>,
    device: String,
    number: u64,
    table: Arc<Mutex<Table>>,
}

impl Line {
    pub async fn next(&mut self) -> Option<LinkCall> {
        self.calls.recv().await
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if table
            .lines
            .get(&self.device)
            .is_some_and(|(n, _)| *n == self.number)
        {
            table.lines.remove(&self.device);
        }
        // The calls that went down it fail now rather than at their timeout.
        let number = self.number;
        table.pending.retain(|_, p| p.line != number);
    }
}

impl LinkCalls {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Open `device`'s line (its event stream asked for calls).
    pub fn attach(&self, device: &str) -> Line {
        let (tx, rx) = mpsc::channel(IN_FLIGHT);
        let mut table = self.table();
        table.next_line += 1;
        let number = table.next_line;
        table.lines.insert(device.to_string(), (number, tx));
        Line {
            calls: rx,
            device: device.to_string(),
            number,
            table: self.table.clone(),
        }
    }

    /// Whether `device` holds a line open now.
    pub fn is_open(&self, device: &str) -> bool {
        self.table().lines.contains_key(device)
    }

    /// Call `tool` on the paired Vyre of `device`, and wait for its answer.
    pub async fn call(&self, device: &str, tool: &str, input: Value) -> Answer {
        let id = crate::kernel::ids::random_hex(12);
        let (tx, rx) = oneshot::channel();
        let line = {
            let mut table = self.table();
            let Some((number, line)) = table.lines.get(device).cloned() else {
                return Err(offline(device));
            };
            if table
                .pending
                .values()
                .filter(|p| p.device == device)
                .count()
                >= IN_FLIGHT
            {
                return Err(ToolError::new(
                    ErrorKind::Busy,
                    "link_busy",
                    format!("{IN_FLIGHT} calls to that Vyre are waiting already; try again"),
                ));
            }
            table.pending.insert(
                id.clone(),
                Pending {
                    device: device.to_string(),
                    line: number,
                    answer: tx,
                },
            );
            line
        };
        let call = LinkCall {
            id: id.clone(),
            tool: tool.to_string(),
            input,
        };
        if line.try_send(call).is_err() {
            self.table().pending.remove(&id);
            return Err(offline(device));
        }
        match tokio::time::timeout(ANSWER_WAIT, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(ToolError::new(
                ErrorKind::Conflict,
                "link_dropped",
                "the link to that Vyre dropped before it answered",
            )),
            Err(_) => {
                self.table().pending.remove(&id);
                Err(ToolError::new(
                    ErrorKind::Conflict,
                    "peer_unreachable",
                    format!(
                        "that Vyre did not answer within {} s",
                        ANSWER_WAIT.as_secs()
                    ),
                ))
            }
        }
    }

    /// `device`'s answer to call `id`: false when there is no such call waiting for that device
    /// (answered already, timed out, or another device's).
    pub fn answer(&self, device: &str, id: &str, answer: Answer) -> bool {
        let mut table = self.table();
        if table.pending.get(id).is_none_or(|p| p.device != device) {
            return false;
        }
        let pending = table.pending.remove(id).expect("looked up above");
        drop(table);
        // The caller may have given up a moment ago; the answer was still this device's to give.
        let _ = pending.answer.send(answer);
        true
    }
}

fn offline(device: &str) -> ToolError {
    ToolError::new(
        ErrorKind::Conflict,
        "peer_offline",
        format!(
            "the paired Vyre {device} is not connected now (it connects while it runs and reaches this machine)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_call_goes_down_the_line_and_only_its_device_answers_it_once() {
        let calls = LinkCalls::default();
        assert_eq!(
            &*calls
                .call("d1", "files.search", json!({}))
                .await
                .unwrap_err()
                .code,
            "peer_offline"
        );
        let mut line = calls.attach("d1");
        let c2 = calls.clone();
        let waiting =
            tokio::spawn(async move { c2.call("d1", "files.search", json!({"q": 1})).await });
        let call = line.next().await.unwrap();
        assert_eq!(call.tool, "files.search");
        assert!(
            !calls.answer("d2", &call.id, Ok(json!("forged"))),
            "another device"
        );
        assert!(calls.answer("d1", &call.id, Ok(json!("mine"))));
        assert!(!calls.answer("d1", &call.id, Ok(json!("again"))), "once");
        assert_eq!(waiting.await.unwrap().unwrap(), json!("mine"));
    }

    #[tokio::test]
    async fn a_line_given_back_fails_its_calls_in_flight_and_a_newer_line_takes_over() {
        let calls = LinkCalls::default();
        let old = calls.attach("d1");
        let mut new = calls.attach("d1");
        drop(old); // the older stream ends: the newer one still holds the line
        assert!(calls.is_open("d1"));
        let c2 = calls.clone();
        let waiting = tokio::spawn(async move { c2.call("d1", "x.y", json!({})).await });
        let _call = new.next().await.unwrap();
        drop(new);
        assert_eq!(&*waiting.await.unwrap().unwrap_err().code, "link_dropped");
        assert!(!calls.is_open("d1"));
    }
}
